/* base/crc32: known check values and chunking. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "base/crc32.h"
#include "base/rng.h"

/* The bit-at-a-time definition, to compare the table-driven code with. */
static uint32_t crc_bitwise(const unsigned char *p, size_t n)
{
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++)
            c = (c & 1) ? (c >> 1) ^ 0xEDB88320u : c >> 1;
    }
    return ~c;
}

/* The same continuing from crc, as crc32_update continues. */
static uint32_t crc_bitwise_from(uint32_t crc, const unsigned char *p, size_t n)
{
    uint32_t c = ~crc;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++)
            c = (c & 1) ? (c >> 1) ^ 0xEDB88320u : c >> 1;
    }
    return ~c;
}

/* Every length from 0 to 1,100 bytes (the folding's 64- and 16-byte steps and every
   remainder), at four alignments, from several starting checksums: the definition's
   value. */
Test(crc32, folding_equals_the_definition_for_every_length_and_alignment)
{
    enum { N = 1100 };
    unsigned char *buf = malloc(N + 4);
    Rng r;
    rng_seed(&r, 7);
    for (size_t i = 0; i < N + 4; i++)
        buf[i] = (unsigned char)rng_below(&r, 256);
    const uint32_t starts[] = {0, 0xFFFFFFFFu, 0x12345678u};
    for (size_t n = 0; n <= N; n++)
        for (int off = 0; off < 4; off++)
            for (int s = 0; s < 3; s++) {
                uint32_t want = crc_bitwise_from(starts[s], buf + off, n), got = crc32_update(starts[s], buf + off, n);
                cr_assert_eq(got, want, "n %zu offset %d start %08x: %08x, expected %08x", n, off, starts[s], got, want);
            }
    free(buf);
}

Test(crc32, check_values)
{
    cr_assert_eq(crc32_update(0, "", 0), 0u);
    cr_assert_eq(crc32_update(0, "123456789", 9), 0xCBF43926u);
    cr_assert_eq(crc32_update(0, "a", 1), 0xE8B7BE43u);
    const char *fox = "The quick brown fox jumps over the lazy dog";
    cr_assert_eq(crc32_update(0, fox, strlen(fox)), 0x414FA339u);
    unsigned char zeros[32] = {0};
    cr_assert_eq(crc32_update(0, zeros, 32), 0x190A55ADu);
}

Test(crc32, pieces_and_offsets_match_the_definition)
{
    Rng r;
    rng_seed(&r, 3);
    unsigned char buf[1031];
    for (size_t i = 0; i < sizeof buf; i++)
        buf[i] = (unsigned char)rng_u64(&r);
    for (int it = 0; it < 300; it++) {
        size_t off = rng_below(&r, 16), n = rng_below(&r, sizeof buf - off);
        uint32_t want = crc_bitwise(buf + off, n);
        cr_assert_eq(crc32_update(0, buf + off, n), want, "off %zu n %zu", off, n);
        size_t cut = n ? rng_below(&r, n + 1) : 0;
        uint32_t c = crc32_update(0, buf + off, cut);
        c = crc32_update(c, buf + off + cut, n - cut);
        cr_assert_eq(c, want, "off %zu n %zu cut %zu", off, n, cut);
    }
}

/* A buffer past the size where the second half is summed on another thread: the
   combined checksum is the definition's, whole and continued from a prefix. */
Test(crc32, long_buffers_split_across_threads)
{
    Rng r;
    rng_seed(&r, 5);
    size_t n = (9u << 20) + 3;
    unsigned char *buf = malloc(n);
    cr_assert_not_null(buf);
    for (size_t i = 0; i < n; i++)
        buf[i] = (unsigned char)rng_u64(&r);
    uint32_t want = crc_bitwise(buf, n);
    cr_expect_eq(crc32_update(0, buf, n), want);
    cr_expect_eq(crc32_update(crc32_update(0, buf, 1001), buf + 1001, n - 1001), want);
    free(buf);
}
