#include "base/crc32.h"

#include <limits.h>
#include <pthread.h>
#include <zlib.h>

/* zlib's crc32 is the same checksum, computed several bytes at a time (about twice as
   fast as a slicing-by-8 table here); its length argument is an unsigned int, so long
   buffers go in pieces. */
static uint32_t crc_serial(uint32_t crc, const unsigned char *p, size_t n)
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
