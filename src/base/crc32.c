#include "base/crc32.h"

#include <limits.h>
#include <pthread.h>
#include <zlib.h>

/* zlib's crc32 is the same checksum, computed several bytes at a time (about twice as
   fast as a slicing-by-8 table here); its length argument is an unsigned int, so long
   buffers go in pieces. */
static uint32_t crc_zlib(uint32_t crc, const unsigned char *p, size_t n)
{
    uLong c = crc;
    while (n > 0) {
        uInt k = n > (size_t)UINT_MAX / 2 ? UINT_MAX / 2 : (uInt)n;
        c = crc32(c, p, k);
        p += k;
        n -= k;
    }
    return (uint32_t)c;
}

#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
#define CRC_CLMUL_TARGET __attribute__((target("pclmul,sse2")))

/* Carry-less multiplication folds the data (Gopal et al., "Fast CRC Computation for
   Generic Polynomials Using PCLMULQDQ Instruction", Intel, 2009): four 128-bit lanes,
   each replaced by (its low 64 bits times x^(512+32) mod P) xor (its high 64 bits times
   x^(512-32) mod P) xor the next 64 bytes' lane, which keeps the remainder mod P; the
   lanes are folded into one the same way with the 128-bit distances, and the last 16
   bytes of the fold have the prefix's CRC: zlib finishes from them, with the bytes left.
   The constants are those powers for the reflected polynomial, bit-reflected and
   shifted as PCLMULQDQ on reflected data needs them. */
static inline CRC_CLMUL_TARGET __m128i crc_fold(__m128i x, __m128i k, __m128i next)
{
    __m128i lo = _mm_clmulepi64_si128(x, k, 0x00), hi = _mm_clmulepi64_si128(x, k, 0x11);
    return _mm_xor_si128(_mm_xor_si128(lo, hi), next);
}

static CRC_CLMUL_TARGET uint32_t crc_clmul(uint32_t crc, const unsigned char *p, size_t n)
{
    if (n < 64)
        return crc_zlib(crc, p, n);
    const __m128i k512 = _mm_set_epi64x(0x1c6e41596LL, 0x154442bd4LL);
    const __m128i k128 = _mm_set_epi64x(0x0ccaa009eLL, 0x1751997d0LL);
    __m128i x0 = _mm_loadu_si128((const __m128i *)p), x1 = _mm_loadu_si128((const __m128i *)(p + 16));
    __m128i x2 = _mm_loadu_si128((const __m128i *)(p + 32)), x3 = _mm_loadu_si128((const __m128i *)(p + 48));
    x0 = _mm_xor_si128(x0, _mm_cvtsi32_si128((int)~crc)); /* zlib's state is the complement */
    p += 64;
    n -= 64;
    for (; n >= 64; p += 64, n -= 64) {
        x0 = crc_fold(x0, k512, _mm_loadu_si128((const __m128i *)p));
        x1 = crc_fold(x1, k512, _mm_loadu_si128((const __m128i *)(p + 16)));
        x2 = crc_fold(x2, k512, _mm_loadu_si128((const __m128i *)(p + 32)));
        x3 = crc_fold(x3, k512, _mm_loadu_si128((const __m128i *)(p + 48)));
    }
    x0 = crc_fold(x0, k128, x1);
    x0 = crc_fold(x0, k128, x2);
    x0 = crc_fold(x0, k128, x3);
    for (; n >= 16; p += 16, n -= 16)
        x0 = crc_fold(x0, k128, _mm_loadu_si128((const __m128i *)p));
    unsigned char last[16];
    _mm_storeu_si128((__m128i *)last, x0);
    return crc_zlib(crc_zlib(0xFFFFFFFFu, last, 16), p, n);
}
#endif

/* The folding where the CPU multiplies carry-less (3 to 4 times zlib's speed here: a
   model file's checksum is most of a cold start), else zlib. */
static uint32_t crc_serial(uint32_t crc, const unsigned char *p, size_t n)
{
#if defined(__GNUC__) && defined(__x86_64__)
    static int clmul = -1;
    if (clmul < 0) {
        __builtin_cpu_init();
        clmul = __builtin_cpu_supports("pclmul") ? 1 : 0;
    }
    if (clmul)
        return crc_clmul(crc, p, n);
#endif
    return crc_zlib(crc, p, n);
}

typedef struct Half {
    const unsigned char *p;
    size_t n;
    uint32_t crc;
} Half;

static void *crc_half(void *arg)
{
    Half *h = arg;
    h->crc = crc_serial(0, h->p, h->n);
    return NULL;
}

/* Above this many bytes (a model file's data), the second half is summed on a thread
   of its own and the two checksums combined (crc32_combine): the same result. */
#define CRC_SPLIT (4u << 20)

uint32_t crc32_update(uint32_t crc, const void *data, size_t n)
{
    const unsigned char *p = data;
    if (n < CRC_SPLIT)
        return crc_serial(crc, p, n);
    size_t first = n / 2;
    Half h = {p + first, n - first, 0};
    pthread_t th;
    if (pthread_create(&th, NULL, crc_half, &h) != 0)
        return crc_serial(crc, p, n);
    uint32_t a = crc_serial(crc, p, first);
    pthread_join(th, NULL);
    return (uint32_t)crc32_combine64(a, h.crc, (z_off64_t)h.n);
}
