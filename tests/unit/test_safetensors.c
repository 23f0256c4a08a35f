/* base/safetensors: round trips, the exact layout, and every kind of damaged file. */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "base/buf.h"
#include "base/crc32.h"
#include "base/file.h"
#include "base/rng.h"
#include "base/safetensors.h"
#include "helpers.h"

static char *tmp;

static void setup(void) { tmp = tmpdir_new(); }

static void teardown(void)
{
    rm_rf(tmp);
    free(tmp);
}

TestSuite(safetensors, .init = setup, .fini = teardown);

/* A file of: length, header padded with `pad` spaces, data_len bytes 0, 1, 2, ... */
static void make_file(const char *path, const char *header, size_t pad, size_t data_len)
{
    size_t h = strlen(header);
    uint64_t n = h + pad;
    unsigned char *b = malloc(8 + n + data_len + 1);
    for (int k = 0; k < 8; k++)
        b[k] = (unsigned char)(n >> (8 * k));
    memcpy(b + 8, header, h);
    memset(b + 8 + h, ' ', pad);
    for (size_t i = 0; i < data_len; i++)
        b[8 + n + i] = (unsigned char)i;
    write_bytes(path, b, 8 + n + data_len);
    free(b);
}

/* Loads path expecting failure with exactly "PATH: suffix". */
static void expect_load_err(const char *path, const char *expect_format, const char *suffix)
{
    StFile *f = (StFile *)1;
    Err e = {{0}};
    int rc = st_load(&f, path, expect_format, &e);
    cr_assert_eq(rc, -1, "loading %s should fail with: %s", path, suffix);
    cr_assert_null(f);
    char *want = strf("%s: %s", path, suffix);
    cr_assert_str_eq(e.msg, want);
    free(want);
}

static StFile *load_ok(const char *path, const char *expect_format)
{
    StFile *f = NULL;
    Err e = {{0}};
    int rc = st_load(&f, path, expect_format, &e);
    cr_assert_eq(rc, 0, "loading %s: %s", path, e.msg);
    cr_assert_not_null(f);
    return f;
}

/* ---- the standard test model: F32 only, so the data is in the given order ---- */

static float W[12], B4[4], D4[4], S1[1];
enum { MODEL_N = 5, MODEL_DATA = 84 };

static void model(StTensor *t)
{
    for (int i = 0; i < 12; i++)
        W[i] = (float)i * 0.5f - 3.0f;
    for (int i = 0; i < 4; i++) {
        B4[i] = 1.0f / (float)(i + 3);
        D4[i] = -(float)i * 1e-20f;
    }
    S1[0] = 42.0f;
    t[0] = (StTensor){"enc.w", ST_F32, 2, {3, 4}, W};    /* [0, 48] */
    t[1] = (StTensor){"enc.b", ST_F32, 1, {4}, B4};      /* [48, 64] */
    t[2] = (StTensor){"dec.w", ST_F32, 2, {2, 2}, D4};   /* [64, 80] */
    t[3] = (StTensor){"scalar", ST_F32, 0, {0}, S1};     /* [80, 84] */
    t[4] = (StTensor){"empty", ST_F32, 2, {0, 3}, NULL}; /* [84, 84] */
}

static const char *const MKEYS[] = {ST_KEY_FORMAT, "note"};
static const char *const MVALS[] = {ST_FORMAT_MODEL, "h\xc3\xa9llo \"w\xc3\xb6rld\"\n"};

static char *write_model(const char *name)
{
    StTensor t[MODEL_N];
    model(t);
    char *path = path_join(tmp, name);
    Err e = {{0}};
    cr_assert_eq(st_write(path, t, MODEL_N, MKEYS, MVALS, 2, &e), 0, "%s", e.msg);
    return path;
}

/* Header length stored in the file at path. */
static uint64_t header_len(const char *path)
{
    size_t n = 0;
    char *b = slurp(path, &n);
    cr_assert(n >= 8);
    uint64_t h = 0;
    for (int k = 7; k >= 0; k--)
        h = h << 8 | (unsigned char)b[k];
    free(b);
    return h;
}

/* Replaces the first `from` in the header by `to`, re-pads, keeps the data section. */
static void rewrite_header(const char *path, const char *from, const char *to)
{
    size_t n = 0;
    char *b = slurp(path, &n);
    uint64_t h = header_len(path);
    Buf hdr = {0};
    buf_append(&hdr, b + 8, h);
    while (hdr.len && hdr.data[hdr.len - 1] == ' ')
        hdr.data[--hdr.len] = '\0';
    char *at = strstr(hdr.data, from);
    cr_assert_not_null(at, "'%s' not in header %s", from, hdr.data);
    Buf out = {0};
    buf_append(&out, hdr.data, (size_t)(at - hdr.data));
    buf_puts(&out, to);
    buf_puts(&out, at + strlen(from));
    while ((8 + out.len) % 8)
        buf_putc(&out, ' ');
    Buf file = {0};
    unsigned char len8[8];
    for (int k = 0; k < 8; k++)
        len8[k] = (unsigned char)((uint64_t)out.len >> (8 * k));
    buf_append(&file, len8, 8);
    buf_append(&file, out.data, out.len);
    buf_append(&file, b + 8 + h, n - 8 - h);
    write_bytes(path, file.data, file.len);
    buf_free(&hdr);
    buf_free(&out);
    buf_free(&file);
    free(b);
}

/* ---- round trips and layout ---------------------------------------------------- */

Test(safetensors, round_trip)
{
    StTensor t[MODEL_N];
    model(t);
    char *path = write_model("m.st");
    StFile *f = load_ok(path, ST_FORMAT_MODEL);
    cr_assert_eq(st_count(f), MODEL_N);
    for (size_t i = 0; i < MODEL_N; i++) {
        const StTensor *g = st_at(f, i);
        cr_assert_str_eq(g->name, t[i].name);
        cr_assert_eq(g->dtype, ST_F32);
        cr_assert_eq(g->ndim, t[i].ndim);
        for (int k = 0; k < g->ndim; k++)
            cr_assert_eq(g->shape[k], t[i].shape[k]);
        cr_assert_eq(st_nbytes(g), st_nbytes(&t[i]));
        if (st_nbytes(g))
            cr_assert_eq(memcmp(g->data, t[i].data, st_nbytes(g)), 0, "%s", g->name);
        cr_assert_eq((uintptr_t)g->data % 4, 0);
        cr_assert_eq(st_tensor(f, t[i].name), g);
    }
    cr_assert_null(st_at(f, MODEL_N));
    cr_assert_null(st_tensor(f, "nope"));
    cr_assert_null(st_tensor(f, "enc"));
    cr_assert_null(st_tensor(f, "__metadata__"));
    const float *w = st_tensor(f, "enc.w")->data;
    cr_assert_eq(w[11], 2.5f);
    cr_assert_eq(*(const float *)st_tensor(f, "scalar")->data, 42.0f);
    cr_assert_eq(st_numel(st_tensor(f, "scalar")), 1);
    cr_assert_eq(st_numel(st_tensor(f, "empty")), 0);

    cr_assert_eq(st_meta_count(f), 3);
    cr_assert_str_eq(st_meta_key(f, 0), ST_KEY_FORMAT);
    cr_assert_str_eq(st_meta_key(f, 1), "note");
    cr_assert_str_eq(st_meta_key(f, 2), ST_KEY_CRC32);
    cr_assert_null(st_meta_key(f, 3));
    cr_assert_str_eq(st_meta(f, ST_KEY_FORMAT), ST_FORMAT_MODEL);
    cr_assert_str_eq(st_meta(f, "note"), MVALS[1]);
    cr_assert_str_eq(st_meta_val(f, 1), MVALS[1]);
    char crc[16];
    uint32_t c = crc32_update(0, W, sizeof W);
    c = crc32_update(c, B4, sizeof B4);
    c = crc32_update(c, D4, sizeof D4);
    c = crc32_update(c, S1, sizeof S1);
    snprintf(crc, sizeof crc, "%08" PRIx32, c);
    cr_assert_str_eq(st_meta(f, ST_KEY_CRC32), crc);
    cr_assert_null(st_meta(f, "missing"));
    st_close(f);

    /* No format asked for: any format loads. */
    f = load_ok(path, NULL);
    st_close(f);
    /* Writing again over the file replaces it. */
    char *again = write_model("m.st");
    f = load_ok(again, ST_FORMAT_MODEL);
    st_close(f);
    cr_assert_eq(dir_count(tmp), 1);
    free(again);
    free(path);
}

Test(safetensors, exact_bytes_and_mixed_dtype_layout)
{
    uint8_t m[3] = {1, 2, 255};
    float a[2] = {1.0f, -2.0f}, fb[1] = {0.5f};
    int64_t s[1] = {INT64_MIN + 5};
    int32_t i[1] = {-7};
    StTensor t[] = {
        {"m", ST_U8, 1, {3}, m},
        {"a", ST_F32, 2, {1, 2}, a},
        {"s", ST_I64, 1, {1}, s},
        {"b", ST_F32, 0, {0}, fb},
        {"i", ST_I32, 1, {1}, i},
    };
    char *path = path_join(tmp, "mix.st");
    Err e;
    const char *k[] = {ST_KEY_FORMAT};
    const char *v[] = {"x"};
    cr_assert_eq(st_write(path, t, 5, k, v, 1, &e), 0, "%s", e.msg);
    uint32_t c = crc32_update(0, s, 8);
    c = crc32_update(c, a, 8);
    c = crc32_update(c, fb, 4);
    c = crc32_update(c, i, 4);
    c = crc32_update(c, m, 3);
    char *hdr = strf("{\"__metadata__\":{\"s2s.format\":\"x\",\"s2s.crc32\":\"%08" PRIx32 "\"},"
                     "\"s\":{\"dtype\":\"I64\",\"shape\":[1],\"data_offsets\":[0,8]},"
                     "\"a\":{\"dtype\":\"F32\",\"shape\":[1,2],\"data_offsets\":[8,16]},"
                     "\"b\":{\"dtype\":\"F32\",\"shape\":[],\"data_offsets\":[16,20]},"
                     "\"i\":{\"dtype\":\"I32\",\"shape\":[1],\"data_offsets\":[20,24]},"
                     "\"m\":{\"dtype\":\"U8\",\"shape\":[3],\"data_offsets\":[24,27]}}",
                     c);
    size_t n = 0;
    char *file = slurp(path, &n);
    uint64_t h = header_len(path);
    size_t pad = (8 - (8 + strlen(hdr)) % 8) % 8;
    cr_assert_eq(h, strlen(hdr) + pad);
    cr_assert_eq(n, 8 + h + 27);
    cr_assert_eq(memcmp(file + 8, hdr, strlen(hdr)), 0, "header: %.*s", (int)h, file + 8);
    for (size_t p = 0; p < pad; p++)
        cr_assert_eq(file[8 + strlen(hdr) + p], ' ');
    const char *d = file + 8 + h;
    cr_assert_eq(memcmp(d, s, 8), 0);
    cr_assert_eq(memcmp(d + 8, a, 8), 0);
    cr_assert_eq(memcmp(d + 16, fb, 4), 0);
    cr_assert_eq(memcmp(d + 20, i, 4), 0);
    cr_assert_eq(memcmp(d + 24, m, 3), 0);

    StFile *f = load_ok(path, "x");
    cr_assert_str_eq(st_at(f, 0)->name, "s");
    cr_assert_eq(*(const int64_t *)st_tensor(f, "s")->data, INT64_MIN + 5);
    cr_assert_eq(*(const int32_t *)st_tensor(f, "i")->data, -7);
    cr_assert_eq(((const uint8_t *)st_tensor(f, "m")->data)[2], 255);
    cr_assert_eq(st_tensor(f, "m")->dtype, ST_U8);
    for (size_t j = 0; j < st_count(f); j++)
        cr_assert_eq((uintptr_t)st_at(f, j)->data % st_dtype_size(st_at(f, j)->dtype), 0);
    st_close(f);
    free(file);
    free(hdr);
    free(path);
}

Test(safetensors, header_padding_aligns_the_data)
{
    float x[3] = {1, 2, 3};
    StTensor t = {"x", ST_F32, 1, {3}, x};
    char note[32];
    int seen[8] = {0};
    for (int len = 0; len < 16; len++) {
        memset(note, 'n', (size_t)len);
        note[len] = '\0';
        const char *k[] = {"note"};
        const char *v[] = {note};
        char *path = path_join(tmp, "pad.st");
        Err e;
        cr_assert_eq(st_write(path, &t, 1, k, v, 1, &e), 0, "%s", e.msg);
        size_t n = 0;
        char *b = slurp(path, &n);
        uint64_t h = header_len(path);
        cr_assert_eq((8 + h) % 8, 0);
        cr_assert_eq(n, 8 + h + 12);
        size_t end = h;
        while (end > 0 && b[8 + end - 1] == ' ')
            end--;
        cr_assert_eq(b[8 + end - 1], '}');
        cr_assert(h - end < 8);
        seen[h - end] = 1;
        StFile *f = load_ok(path, NULL);
        cr_assert_str_eq(st_meta(f, "note"), note);
        cr_assert_eq(memcmp(st_tensor(f, "x")->data, x, 12), 0);
        st_close(f);
        free(b);
        free(path);
    }
    for (int p = 0; p < 8; p++)
        cr_assert(seen[p], "padding %d never seen", p);
}

Test(safetensors, empty_file_of_tensors)
{
    char *path = path_join(tmp, "none.st");
    Err e;
    cr_assert_eq(st_write(path, NULL, 0, NULL, NULL, 0, &e), 0, "%s", e.msg);
    StFile *f = load_ok(path, NULL);
    cr_assert_eq(st_count(f), 0);
    cr_assert_eq(st_meta_count(f), 1);
    cr_assert_str_eq(st_meta(f, ST_KEY_CRC32), "00000000");
    cr_assert_null(st_tensor(f, "x"));
    st_close(f);
    expect_load_err(path, ST_FORMAT_MODEL,
                    "not an s2s model (no s2s.format in the metadata, expected 's2s-model-1')");
    free(path);
}

Test(safetensors, foreign_misaligned_tensors_are_copied_aligned)
{
    /* A file of another writer: no metadata, U8 first so the F32 and F64 data sit at
       odd offsets, and header lengths that put the data section anywhere. */
    const char *hdr = "{\"u\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]},"
                      "\"f\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[1,9]},"
                      "\"d\":{\"dtype\":\"F64\",\"shape\":[1],\"data_offsets\":[9,17]}}";
    unsigned char data[17];
    float fv[2] = {1.5f, -2.25f};
    double dv = 3.125;
    data[0] = 0x7f;
    memcpy(data + 1, fv, 8);
    memcpy(data + 9, &dv, 8);
    for (size_t pad = 0; pad < 8; pad++) {
        size_t h = strlen(hdr) + pad;
        unsigned char *b = malloc(8 + h + sizeof data);
        for (int k = 0; k < 8; k++)
            b[k] = (unsigned char)((uint64_t)h >> (8 * k));
        memcpy(b + 8, hdr, strlen(hdr));
        memset(b + 8 + strlen(hdr), ' ', pad);
        memcpy(b + 8 + h, data, sizeof data);
        char *path = path_join(tmp, "foreign.st");
        write_bytes(path, b, 8 + h + sizeof data);
        StFile *f = load_ok(path, NULL);
        const StTensor *tf = st_tensor(f, "f"), *td = st_tensor(f, "d");
        cr_assert_eq((uintptr_t)tf->data % 4, 0, "pad %zu", pad);
        cr_assert_eq((uintptr_t)td->data % 8, 0, "pad %zu", pad);
        cr_assert_eq(((const float *)tf->data)[0], 1.5f);
        cr_assert_eq(((const float *)tf->data)[1], -2.25f);
        cr_assert_eq(*(const double *)td->data, 3.125);
        cr_assert_eq(*(const uint8_t *)st_tensor(f, "u")->data, 0x7f);
        cr_assert_eq(st_meta_count(f), 0);
        st_close(f);
        /* The same bytes from memory. */
        Err e;
        cr_assert_eq(st_parse(&f, "mem", b, 8 + h + sizeof data, NULL, &e), 0, "%s", e.msg);
        cr_assert_eq(*(const double *)st_tensor(f, "d")->data, 3.125);
        st_close(f);
        free(path);
        free(b);
    }
}

/* ---- damaged files -------------------------------------------------------------- */

Test(safetensors, truncated_at_every_length)
{
    char *path = write_model("m.st");
    size_t n = 0;
    char *full = slurp(path, &n);
    uint64_t h = header_len(path);
    cr_assert_eq(n, 8 + h + MODEL_DATA);
    static const struct { const char *name; int begin, end; } spans[] = {
        {"enc.w", 0, 48}, {"enc.b", 48, 64}, {"dec.w", 64, 80}, {"scalar", 80, 84},
    };
    char *cut = path_join(tmp, "cut.st");
    for (size_t len = 0; len < n; len++) {
        write_bytes(cut, full, len);
        char *msg;
        if (len < 8) {
            msg = strf("truncated: no header length");
        } else if (len < 8 + h) {
            msg = strf("truncated: the header length says %" PRIu64 " bytes but only %zu follow",
                       h, len - 8);
        } else {
            size_t d = len - 8 - h;
            size_t k = 0;
            while ((size_t)spans[k].end <= d)
                k++;
            msg = strf("tensor '%s': data_offsets [%d, %d] go beyond the data section (%zu "
                       "bytes; truncated file?)", spans[k].name, spans[k].begin, spans[k].end, d);
        }
        expect_load_err(cut, ST_FORMAT_MODEL, msg);
        free(msg);
    }
    write_bytes(cut, full, n);
    st_close(load_ok(cut, ST_FORMAT_MODEL));
    free(cut);
    free(full);
    free(path);
}

Test(safetensors, header_length_beyond_the_file_or_absurd)
{
    char *path = write_model("m.st");
    size_t n = 0;
    unsigned char *b = (unsigned char *)slurp(path, &n);
    uint64_t lens[] = {n - 7, n, 100000000, 100000001, UINT64_MAX};
    for (size_t i = 0; i < sizeof lens / sizeof *lens; i++) {
        for (int k = 0; k < 8; k++)
            b[k] = (unsigned char)(lens[i] >> (8 * k));
        write_bytes(path, b, n);
        char *msg = lens[i] > 100000000
            ? strf("not a model file: header length %" PRIu64 " is absurd (more than 100000000 bytes)", lens[i])
            : strf("truncated: the header length says %" PRIu64 " bytes but only %zu follow",
                   lens[i], n - 8);
        expect_load_err(path, NULL, msg);
        free(msg);
    }
    free(b);
    free(path);
}

Test(safetensors, header_not_json)
{
    char *path = write_model("m.st");
    uint64_t h = header_len(path);
    size_t n = 0;
    char *b = slurp(path, &n);
    /* Same length, so the data section does not move. */
    char *colon = strstr(b + 8, "\"dtype\":");
    cr_assert_not_null(colon);
    colon[7] = ' ';
    write_bytes(path, b, n);
    char *msg = strf("header: JSON: expected ':' at byte %zu", (size_t)(colon + 8 - (b + 8)));
    expect_load_err(path, ST_FORMAT_MODEL, msg);
    free(msg);
    colon[7] = ':';
    /* A header whose JSON stops early: its closing braces overwritten by spaces. */
    size_t end = h;
    while (b[8 + end - 1] == ' ')
        end--;
    cr_assert_eq(memcmp(b + 8 + end - 3, "]}}", 3), 0);
    memset(b + 8 + end - 2, ' ', 2);
    write_bytes(path, b, n);
    msg = strf("header: JSON: expected ',' or '}' at byte %" PRIu64 " (end of input)", h);
    expect_load_err(path, ST_FORMAT_MODEL, msg);
    free(msg);
    free(b);
    free(path);
}

/* Corruptions of the header of a real file; the data section stays as written. */
Test(safetensors, lying_headers_of_a_real_file)
{
    static const struct {
        const char *from, *to, *msg;
    } cases[] = {
        {"\"dtype\":\"F32\"", "\"dtype\":\"F33\"", "tensor 'enc.w': unknown dtype 'F33'"},
        {"\"dtype\":\"F32\"", "\"dtype\":32", "tensor 'enc.w': dtype is not a string (found a number)"},
        {"\"shape\":[3,4]", "\"shape\":[4,4]",
         "tensor 'enc.w': shape [4, 4] of F32 needs 64 bytes but data_offsets [0, 48] hold 48"},
        {"\"shape\":[4]", "\"shape\":[5]",
         "tensor 'enc.b': shape [5] of F32 needs 20 bytes but data_offsets [48, 64] hold 16"},
        {"[48,64]", "[48,68]",
         "tensor 'enc.b': shape [4] of F32 needs 16 bytes but data_offsets [48, 68] hold 20"},
        {"\"shape\":[3,4],\"data_offsets\":[0,48]", "\"shape\":[2,4],\"data_offsets\":[0,32]",
         "data section bytes [32, 48) belong to no tensor"},
        {"\"shape\":[3,4],\"data_offsets\":[0,48]", "\"shape\":[3,4],\"data_offsets\":[4,52]",
         "data section bytes [0, 4) belong to no tensor"},
        {"[64,80]", "[56,72]", "tensors 'enc.b' and 'dec.w' overlap: data_offsets [48, 64] and [56, 72]"},
        {"[48,64]", "[40,56]", "tensors 'enc.w' and 'enc.b' overlap: data_offsets [0, 48] and [40, 56]"},
        {"[80,84]", "[84,88]", "tensor 'scalar': data_offsets [84, 88] go beyond the data section "
                               "(84 bytes; truncated file?)"},
        {"[64,80]", "[64,80,96]", "tensor 'dec.w': data_offsets is not an array of 2 integers"},
        {"[64,80]", "[80,64]", "tensor 'dec.w': data_offsets [80, 64] end before they begin"},
        {"[64,80]", "[64,-80]", "tensor 'dec.w': data_offsets[1] is not a non-negative integer"},
        {"[64,80]", "[\"64\",80]", "tensor 'dec.w': data_offsets[0] is not a non-negative integer"},
        {"\"shape\":[2,2]", "\"shape\":[2,-2]", "tensor 'dec.w': shape[1] is not a non-negative integer"},
        {"\"shape\":[2,2]", "\"shape\":[2,2.5]", "tensor 'dec.w': shape[1] is not a non-negative integer"},
        {"\"shape\":[2,2]", "\"shape\":2", "tensor 'dec.w': shape is not an array (found a number)"},
        {"\"shape\":[2,2]", "\"shape\":[1,1,1,1,1,1,1,1,2,2]",
         "tensor 'dec.w': shape has 10 dimensions (at most 8)"},
        {"\"shape\":[2,2]", "\"shape\":[4294967296,4294967296,4294967296]",
         "tensor 'dec.w': shape [4294967296, 4294967296, 4294967296] is too large"},
        {"\"shape\":[2,2],", "", "tensor 'dec.w': missing shape"},
        {"\"dtype\":\"F32\",", "", "tensor 'enc.w': missing dtype"},
        {",\"data_offsets\":[64,80]", "", "tensor 'dec.w': missing data_offsets"},
        {"\"dtype\":\"F32\"", "\"dtype\":\"F32\",\"extra\":1", "tensor 'enc.w': unknown field 'extra'"},
        {"\"enc.b\":{", "\"enc.b\":[{", "header: JSON: expected ',' or ']' at byte 224"},
        {"\"scalar\":{\"dtype\":\"F32\",\"shape\":[],\"data_offsets\":[80,84]}", "\"scalar\":null",
         "tensor 'scalar' is not an object (found null)"},
        {"\"dec.w\"", "\"enc.w\"", "header: JSON: duplicate key 'enc.w' at byte 216"},
        {"\"dec.w\"", "\"dec\\u0000w\"", "tensor name 'dec\\x00w' contains a NUL character"},
        {"\"note\":", "\"note\":1,\"x\":", "metadata 'note' is not a string (found a number)"},
        {"\"note\":\"", "\"note\":\"\\u0000", "metadata 'note' contains a NUL character"},
        {"{\"__metadata__\":{", "{\"__metadata__\":[],\"m\":{",
         "__metadata__ is not an object (found an array)"},
        {"\"s2s.crc32\":\"", "\"s2s.crc32\":\"zz\",\"y\":\"",
         "metadata s2s.crc32 'zz' is not 8 hex digits"},
        {"\"s2s.format\":\"s2s-model-1\"", "\"s2s.format\":\"s2s-model-2\"",
         "not an s2s model (format 's2s-model-2', expected 's2s-model-1')"},
        {"\"s2s.format\":\"s2s-model-1\",", "",
         "not an s2s model (no s2s.format in the metadata, expected 's2s-model-1')"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *path = write_model("m.st");
        rewrite_header(path, cases[i].from, cases[i].to);
        StFile *f = NULL;
        Err e = {{0}};
        cr_assert_eq(st_load(&f, path, ST_FORMAT_MODEL, &e), -1, "case %zu loads", i);
        char *want = strf("%s: %s", path, cases[i].msg);
        cr_assert_str_eq(e.msg, want, "case %zu: got '%s', want '%s'", i, e.msg, want);
        free(want);
        free(path);
    }
}

/* Small files made by hand: header text and data length. */
Test(safetensors, handmade_headers)
{
    static const struct {
        const char *header;
        size_t data_len;
        const char *msg; /* NULL: loads */
    } cases[] = {
        {"[]", 0, "the header is not a JSON object (found an array)"},
        {"\"x\"", 0, "the header is not a JSON object (found a string)"},
        {"", 0, "header: JSON: expected a value at byte 2 (end of input)"}, /* 2 spaces */
        {"{}", 0, NULL},
        {"{}", 4, "data section bytes [0, 4) belong to no tensor"},
        {"{\"__metadata__\":{}}", 0, NULL},
        {"{\"__metadata__\":{\"a\":\"b\"},\"w\":{\"dtype\":\"BF16\",\"shape\":[2],"
         "\"data_offsets\":[0,4]}}", 4, NULL},
        {"{\"w\":{\"data_offsets\":[0,8],\"shape\":[2],\"dtype\":\"I32\"}}", 8, NULL},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
         "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[12,20]}}", 20,
         "data section bytes [8, 12) belong to no tensor"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}", 12,
         "data section bytes [0, 4) belong to no tensor"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 12,
         "data section bytes [8, 12) belong to no tensor"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
         "\"b\":{\"dtype\":\"U8\",\"shape\":[8],\"data_offsets\":[0,8]}}", 8,
         "tensors 'a' and 'b' overlap: data_offsets [0, 8] and [0, 8]"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
         "\"e\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[4,4]}}", 8,
         "tensors 'a' and 'e' overlap: data_offsets [0, 8] and [4, 4]"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
         "\"e\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[8,8]},"
         "\"z\":{\"dtype\":\"I64\",\"shape\":[0,5],\"data_offsets\":[0,0]}}", 8, NULL},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8.0]}}", 8, NULL},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8.5]}}", 8,
         "tensor 'a': data_offsets[1] is not a non-negative integer"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,18446744073709551616]}}", 8,
         "tensor 'a': data_offsets[1] is not a non-negative integer"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[9223372036854775800,"
         "9223372036854775807]}}", 8,
         "tensor 'a': shape [2] of F32 needs 8 bytes but data_offsets [9223372036854775800, "
         "9223372036854775807] hold 7"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[9223372036854775799,"
         "9223372036854775807]}}", 8,
         "tensor 'a': data_offsets [9223372036854775799, 9223372036854775807] go beyond the "
         "data section (8 bytes; truncated file?)"},
        {"{\"a\":{\"dtype\":\"F4\",\"shape\":[2],\"data_offsets\":[0,1]}}", 1,
         "tensor 'a': unknown dtype 'F4'"},
        {"{\"a\":{\"dtype\":\"f32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 8,
         "tensor 'a': unknown dtype 'f32'"},
        {"{\"a\":{\"dtype\":\"F32\\u0000\",\"shape\":[2],\"data_offsets\":[0,8]}}", 8,
         "tensor 'a': unknown dtype 'F32\\x00'"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":null,\"data_offsets\":[0,8]}}", 8,
         "tensor 'a': shape is not an array (found null)"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":{}}}", 8,
         "tensor 'a': data_offsets is not an array of 2 integers"},
        {"{\"a\":[]}", 0, "tensor 'a' is not an object (found an array)"},
        {"{\"__metadata__\":{\"k\\u0000\":\"v\"}}", 0,
         "metadata key 'k\\x00' contains a NUL character"},
        {"{\"__metadata__\":{\"k\":[\"v\"]}}", 0, "metadata 'k' is not a string (found an array)"},
        {"{\"__metadata__\":\"x\"}", 0, "__metadata__ is not an object (found a string)"},
        {"{\"__metadata__\":{\"s2s.crc32\":\"0000000g\"}}", 0,
         "metadata s2s.crc32 '0000000g' is not 8 hex digits"},
        {"{\"__metadata__\":{\"s2s.crc32\":\"000000000\"}}", 0,
         "metadata s2s.crc32 '000000000' is not 8 hex digits"},
        {"{\"__metadata__\":{\"s2s.crc32\":\"00000000\"}}", 0, NULL},
        {"{\"__metadata__\":{\"s2s.crc32\":\"00000001\"}}", 0,
         "checksum mismatch: the file is corrupted"},
        {"{\"__metadata__\":{\"s2s.crc32\":\"0854897F\"},"
         "\"a\":{\"dtype\":\"U8\",\"shape\":[3],\"data_offsets\":[0,3]}}", 3, NULL},
        {"{\"__metadata__\":{\"s2s.crc32\":\"0854897e\"},"
         "\"a\":{\"dtype\":\"U8\",\"shape\":[3],\"data_offsets\":[0,3]}}", 3,
         "checksum mismatch: the file is corrupted"},
        {"  {\"a\":{\"dtype\":\"U8\",\"shape\":[3],\"data_offsets\":[0,3]}}\n\t ", 3, NULL},
        {"{\"\\u00e9\\u2603\":{\"dtype\":\"U8\",\"shape\":[3],\"data_offsets\":[0,3]}}", 3, NULL},
        {"{\"\xc3\xa9\xff\":{\"dtype\":\"U8\",\"shape\":[3],\"data_offsets\":[0,3]}}", 3,
         "header: JSON: invalid UTF-8 in string at byte 4"},
    };
    char *path = path_join(tmp, "h.st");
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        make_file(path, cases[i].header, i % 3, cases[i].data_len);
        if (cases[i].msg) {
            expect_load_err(path, NULL, cases[i].msg);
        } else {
            StFile *f = NULL;
            Err e = {{0}};
            cr_assert_eq(st_load(&f, path, NULL, &e), 0, "case %zu: %s", i, e.msg);
            st_close(f);
        }
    }
    /* The unicode name and a BF16 tensor come back as written. */
    make_file(path, cases[35].header, 0, 3);
    StFile *f = load_ok(path, NULL);
    cr_assert_not_null(st_tensor(f, "\xc3\xa9\xe2\x98\x83"));
    st_close(f);
    make_file(path, cases[6].header, 0, 4);
    f = load_ok(path, NULL);
    cr_assert_eq(st_tensor(f, "w")->dtype, ST_BF16);
    cr_assert_str_eq(st_meta(f, "a"), "b");
    st_close(f);
    free(path);
}

Test(safetensors, any_bit_flip_in_the_data_is_a_checksum_mismatch)
{
    char *path = write_model("m.st");
    size_t n = 0;
    char *b = slurp(path, &n);
    uint64_t h = header_len(path);
    for (size_t i = 8 + h; i < n; i++) {
        b[i] ^= (char)(1 << (i % 8));
        write_bytes(path, b, n);
        expect_load_err(path, ST_FORMAT_MODEL, "checksum mismatch: the file is corrupted");
        b[i] ^= (char)(1 << (i % 8));
    }
    /* Two flips in one byte, and bytes swapped between tensors. */
    b[8 + h + 3] ^= 0x81;
    write_bytes(path, b, n);
    expect_load_err(path, NULL, "checksum mismatch: the file is corrupted");
    b[8 + h + 3] ^= 0x81;
    char t = b[8 + h];
    b[8 + h] = b[8 + h + 50];
    b[8 + h + 50] = t;
    write_bytes(path, b, n);
    expect_load_err(path, NULL, "checksum mismatch: the file is corrupted");
    free(b);
    free(path);
}

Test(safetensors, trailing_bytes_are_a_gap)
{
    char *path = write_model("m.st");
    size_t n = 0;
    char *b = slurp(path, &n);
    b = realloc(b, n + 4);
    memcpy(b + n, "junk", 4);
    write_bytes(path, b, n + 4);
    expect_load_err(path, ST_FORMAT_MODEL, "data section bytes [84, 88) belong to no tensor");
    free(b);
    free(path);
}

Test(safetensors, cannot_open)
{
    char *path = path_join(tmp, "absent.st");
    expect_load_err(path, NULL, "cannot open: No such file or directory");
    expect_load_err(tmp, NULL, "not a regular file (a directory); a model or state is read from a file");
    free(path);
}

Test(safetensors, expect_checks_dtype_and_shape)
{
    char *path = write_model("m.st");
    StFile *f = load_ok(path, ST_FORMAT_MODEL);
    Err e = {{0}};
    const int64_t s34[] = {3, 4}, s43[] = {4, 3};
    cr_assert_eq(st_expect(f, "enc.w", ST_F32, 2, s34, &e), st_tensor(f, "enc.w"));
    cr_assert_eq(st_expect(f, "scalar", ST_F32, 0, NULL, &e), st_tensor(f, "scalar"));
    cr_assert_null(st_expect(f, "enc.w", ST_F32, 2, s43, &e));
    char *want = strf("%s: tensor 'enc.w' is F32 [3, 4], expected F32 [4, 3]", path);
    cr_assert_str_eq(e.msg, want);
    free(want);
    cr_assert_null(st_expect(f, "enc.w", ST_F64, 2, s34, &e));
    want = strf("%s: tensor 'enc.w' is F32 [3, 4], expected F64 [3, 4]", path);
    cr_assert_str_eq(e.msg, want);
    free(want);
    cr_assert_null(st_expect(f, "scalar", ST_F32, 1, s34, &e));
    want = strf("%s: tensor 'scalar' is F32 [], expected F32 [3]", path);
    cr_assert_str_eq(e.msg, want);
    free(want);
    cr_assert_null(st_expect(f, "dec.x", ST_F32, 2, s34, &e));
    want = strf("%s: missing tensor 'dec.x'", path);
    cr_assert_str_eq(e.msg, want);
    free(want);
    st_close(f);
    free(path);
}

Test(safetensors, dtype_table)
{
    static const struct { const char *name; size_t size; } all[] = {
        {"BOOL", 1}, {"U8", 1}, {"I8", 1}, {"F8_E5M2", 1}, {"F8_E4M3", 1}, {"I16", 2},
        {"U16", 2}, {"F16", 2}, {"BF16", 2}, {"I32", 4}, {"U32", 4}, {"F32", 4},
        {"I64", 8}, {"U64", 8}, {"F64", 8},
    };
    cr_assert_eq(sizeof all / sizeof *all, ST_NDTYPES);
    for (int d = 0; d < ST_NDTYPES; d++) {
        cr_assert_str_eq(st_dtype_name((StDtype)d), all[d].name);
        cr_assert_eq(st_dtype_size((StDtype)d), all[d].size);
        StDtype back;
        cr_assert_eq(st_dtype_parse(all[d].name, &back), 0);
        cr_assert_eq(back, (StDtype)d);
    }
    StDtype x;
    cr_assert_eq(st_dtype_parse("F128", &x), -1);
    cr_assert_eq(st_dtype_parse("", &x), -1);
    cr_assert_null(st_dtype_name(ST_NDTYPES));
    cr_assert_eq(st_dtype_size((StDtype)-1), 0);
    StTensor t = {"t", ST_I16, 3, {2, 3, 5}, NULL};
    cr_assert_eq(st_numel(&t), 30);
    cr_assert_eq(st_nbytes(&t), 60);
}

/* ---- failed writes leave the old file alone ------------------------------------ */

static void expect_unchanged(const char *path, const char *old, size_t old_len)
{
    size_t n = 0;
    char *now = slurp(path, &n);
    cr_assert_not_null(now, "%s vanished", path);
    cr_assert_eq(n, old_len);
    cr_assert_eq(memcmp(now, old, n), 0, "%s changed", path);
    free(now);
}

Test(safetensors, write_into_a_vanished_directory_fails)
{
    char *dir = path_join(tmp, "gone");
    cr_assert_eq(mkdir(dir, 0777), 0);
    char *path = path_join(dir, "m.st");
    rm_rf(dir);
    StTensor t[MODEL_N];
    model(t);
    Err e = {{0}};
    cr_assert_eq(st_write(path, t, MODEL_N, MKEYS, MVALS, 2, &e), -1);
    char *want = strf("%s: cannot write: No such file or directory", path);
    cr_assert_str_eq(e.msg, want);
    cr_assert_eq(dir_count(tmp), 0);
    free(want);
    free(path);
    free(dir);
}

Test(safetensors, write_that_cannot_replace_leaves_no_temporary)
{
    char *path = path_join(tmp, "m.st");
    cr_assert_eq(mkdir(path, 0777), 0);
    StTensor t[MODEL_N];
    model(t);
    Err e = {{0}};
    cr_assert_eq(st_write(path, t, MODEL_N, MKEYS, MVALS, 2, &e), -1);
    char *want = strf("%s: cannot replace: Is a directory", path);
    cr_assert_str_eq(e.msg, want);
    cr_assert_eq(dir_count(tmp), 1, "only the directory, no temporary file");
    free(want);
    free(path);
}

Test(safetensors, write_failing_midway_keeps_the_old_file)
{
    char *path = write_model("m.st");
    size_t old_len = 0;
    char *old = slurp(path, &old_len);
    /* A file size limit makes the writes fail part way (EFBIG instead of SIGXFSZ). */
    size_t big = 1 << 18;
    float *x = calloc(big, sizeof *x);
    StTensor t = {"x", ST_F32, 1, {(int64_t)big}, x};
    struct rlimit saved, lim;
    cr_assert_eq(getrlimit(RLIMIT_FSIZE, &saved), 0);
    lim = saved;
    lim.rlim_cur = 100000;
    signal(SIGXFSZ, SIG_IGN);
    cr_assert_eq(setrlimit(RLIMIT_FSIZE, &lim), 0);
    Err e = {{0}};
    int rc = st_write(path, &t, 1, NULL, NULL, 0, &e);
    cr_assert_eq(setrlimit(RLIMIT_FSIZE, &saved), 0);
    cr_assert_eq(rc, -1);
    char *want = strf("%s: write failed: File too large", path);
    cr_assert_str_eq(e.msg, want);
    expect_unchanged(path, old, old_len);
    cr_assert_eq(dir_count(tmp), 1, "no temporary file left");
    st_close(load_ok(path, ST_FORMAT_MODEL));
    free(want);
    free(x);
    free(old);
    free(path);
}

Test(safetensors, bad_arguments_write_nothing)
{
    char *path = write_model("m.st");
    size_t old_len = 0;
    char *old = slurp(path, &old_len);
    float x[2] = {1, 2};
    static const struct { StTensor t[2]; size_t n; const char *msg; } cases[] = {
        {{{"a", ST_F32, 1, {2}, NULL}, {0}}, 1, "tensor 'a' has no data"},
        {{{"a", ST_F32, 1, {-2}, NULL}, {0}}, 1, "tensor 'a': negative dimension -2"},
        {{{"a", ST_NDTYPES, 1, {2}, NULL}, {0}}, 1, "tensor 'a': bad dtype 15"},
        {{{"a", ST_F32, 9, {2}, NULL}, {0}}, 1, "tensor 'a': bad number of dimensions 9 (at most 8)"},
        {{{"a", ST_F32, -1, {2}, NULL}, {0}}, 1, "tensor 'a': bad number of dimensions -1 (at most 8)"},
        {{{"", ST_F32, 0, {0}, NULL}, {0}}, 1, "tensor 0 has no name"},
        {{{"a", ST_F32, 1, {0}, NULL}, {NULL, ST_F32, 0, {0}, NULL}}, 2, "tensor 1 has no name"},
        {{{"__metadata__", ST_F32, 1, {0}, NULL}, {0}}, 1, "the tensor name '__metadata__' is reserved"},
        {{{"a\xff", ST_F32, 1, {0}, NULL}, {0}}, 1, "tensor name 'a\xff' is not valid UTF-8"},
        {{{"a", ST_F32, 1, {0}, NULL}, {"a", ST_U8, 1, {0}, NULL}}, 2, "duplicate tensor name 'a'"},
        {{{"a", ST_F32, 3, {1 << 30, 1 << 30, 1 << 30}, NULL}, {0}}, 1, "tensor 'a': shape too large"},
    };
    Err e = {{0}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        StTensor t[2];
        memcpy(t, cases[i].t, sizeof t);
        if (i == 0)
            t[0].data = NULL;
        cr_assert_eq(st_write(path, t, cases[i].n, NULL, NULL, 0, &e), -1, "case %zu", i);
        char *want = strf("%s: %s", path, cases[i].msg);
        cr_assert_str_eq(e.msg, want, "case %zu", i);
        free(want);
    }
    StTensor ok = {"a", ST_F32, 1, {2}, x};
    static const struct { const char *k[2], *v[2]; size_t n; const char *msg; } meta[] = {
        {{ST_KEY_CRC32}, {"00000000"}, 1, "metadata key 's2s.crc32' is reserved: the writer computes it"},
        {{"k", "k"}, {"1", "2"}, 2, "duplicate metadata key 'k'"},
        {{"k", NULL}, {"1", "2"}, 2, "metadata entry 1 has no key or no value"},
        {{"k"}, {NULL}, 1, "metadata entry 0 has no key or no value"},
        {{"k\xc0\xaf"}, {"v"}, 1, "metadata key 'k\xc0\xaf' is not valid UTF-8"},
        {{"k"}, {"\xed\xa0\x80"}, 1, "metadata 'k' has a value that is not valid UTF-8"},
    };
    for (size_t i = 0; i < sizeof meta / sizeof *meta; i++) {
        cr_assert_eq(st_write(path, &ok, 1, meta[i].k, meta[i].v, meta[i].n, &e), -1, "meta %zu", i);
        char *want = strf("%s: %s", path, meta[i].msg);
        cr_assert_str_eq(e.msg, want, "meta %zu", i);
        free(want);
    }
    expect_unchanged(path, old, old_len);
    cr_assert_eq(dir_count(tmp), 1);
    free(old);
    free(path);
}

/* ---- robustness: random damage never crashes and always names the file ---------- */

Test(safetensors, random_damage_is_an_error_or_a_valid_file)
{
    char *path = write_model("m.st");
    size_t n = 0;
    unsigned char *good = (unsigned char *)slurp(path, &n);
    uint64_t h = header_len(path);
    unsigned char *b = malloc(n + 16);
    static const char alphabet[] = "{}[]\",:0123456789-.e \\u00FfAZ_";
    Rng r;
    rng_seed(&r, 99);
    int loaded = 0;
    for (int it = 0; it < 3000; it++) {
        memcpy(b, good, n);
        size_t len = n;
        int edits = 1 + (int)rng_below(&r, 3);
        for (int k = 0; k < edits; k++) {
            /* Mostly in the header, where parsing happens. */
            size_t at = rng_below(&r, 10) < 8 ? rng_below(&r, 8 + h) : rng_below(&r, len);
            switch (rng_below(&r, 4)) {
            case 0: b[at] ^= (unsigned char)(1 << rng_below(&r, 8)); break;
            case 1: b[at] = (unsigned char)alphabet[rng_below(&r, sizeof alphabet - 1)]; break;
            case 2: b[at] = (unsigned char)rng_u64(&r); break;
            default: len = at; break;
            }
        }
        StFile *f = NULL;
        Err e = {{0}};
        if (st_parse(&f, "fuzz.st", b, len, ST_FORMAT_MODEL, &e) == 0) {
            /* Whatever loaded is self-consistent. */
            for (size_t i = 0; i < st_count(f); i++) {
                const StTensor *t = st_at(f, i);
                cr_assert_eq((uintptr_t)t->data % st_dtype_size(t->dtype), 0);
                cr_assert_eq(st_tensor(f, t->name), t);
            }
            loaded++;
            st_close(f);
        } else {
            cr_assert(strncmp(e.msg, "fuzz.st: ", 9) == 0, "message: %s", e.msg);
            cr_assert_null(strchr(e.msg, '\n'), "one line: %s", e.msg);
        }
    }
    cr_assert(loaded < 3000);
    free(b);
    free(good);
    free(path);
}
