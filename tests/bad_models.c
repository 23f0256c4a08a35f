#include "bad_models.h"

#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "helpers.h"
#include "model_fixture.h"

void bad_models_write(const char *path, const char *bytes, size_t len)
{
    FILE *fp = fopen(path, "wb");
    cr_assert_not_null(fp, "%s", path);
    cr_assert_eq(fwrite(bytes, 1, len, fp), len);
    cr_assert_eq(fclose(fp), 0);
}

typedef struct Maker {
    BadModels *b;
    size_t cap;
    const char *file; /* the good file */
    size_t len;
    uint64_t h;       /* its header length */
    const char *hdr;  /* its header JSON without the padding, NUL-terminated */
} Maker;

static void add(Maker *mk, const char *what, char *bytes, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static void add(Maker *mk, const char *what, char *bytes, size_t len, const char *fmt, ...)
{
    BadModels *b = mk->b;
    if (b->n == mk->cap) {
        mk->cap = mk->cap ? 2 * mk->cap : 64;
        b->v = realloc(b->v, mk->cap * sizeof *b->v);
    }
    va_list ap;
    va_start(ap, fmt);
    char *msg = NULL;
    cr_assert_geq(vasprintf(&msg, fmt, ap), 0);
    va_end(ap);
    b->v[b->n++] = (BadModel){what, bytes, len, msg};
}

static char *copy(const char *p, size_t n)
{
    char *c = malloc(n ? n : 1);
    memcpy(c, p, n);
    return c;
}

/* The good file with its first `len` bytes only. */
static void add_cut(Maker *mk, const char *what, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void add_cut(Maker *mk, const char *what, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *msg = NULL;
    cr_assert_geq(vasprintf(&msg, fmt, ap), 0);
    va_end(ap);
    add(mk, what, copy(mk->file, len), len, "%s", msg);
    free(msg);
}

/* The good file with the first `from` of its header JSON replaced by `to`, the header
   padded again to a multiple of 8 and its length updated; the data is unchanged. */
static void add_hdr(Maker *mk, const char *what, const char *from, const char *to,
                    const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static void add_hdr(Maker *mk, const char *what, const char *from, const char *to,
                    const char *fmt, ...)
{
    const char *at = strstr(mk->hdr, from);
    cr_assert_not_null(at, "%s: '%s' is not in the header", what, from);
    Buf h = {0};
    buf_append(&h, mk->hdr, (size_t)(at - mk->hdr));
    buf_puts(&h, to);
    buf_puts(&h, at + strlen(from));
    while ((8 + h.len) % 8)
        buf_putc(&h, ' ');
    Buf f = {0};
    for (int k = 0; k < 8; k++)
        buf_putc(&f, (char)(unsigned char)((uint64_t)h.len >> (8 * k)));
    buf_append(&f, h.data, h.len);
    buf_append(&f, mk->file + 8 + mk->h, mk->len - 8 - mk->h);
    va_list ap;
    va_start(ap, fmt);
    char *msg = NULL;
    cr_assert_geq(vasprintf(&msg, fmt, ap), 0);
    va_end(ap);
    size_t n = f.len;
    add(mk, what, buf_take(&f), n, "%s", msg);
    free(msg);
    buf_free(&h);
}

/* A tensor's entry as the writer puts it in the header. */
static char *entry(const char *name, const char *dtype, int ndim, const int *shape, size_t a,
                   size_t b)
{
    if (ndim == 1)
        return strf("\"%s\":{\"dtype\":\"%s\",\"shape\":[%d],\"data_offsets\":[%zu,%zu]}", name,
                    dtype, shape[0], a, b);
    return strf("\"%s\":{\"dtype\":\"%s\",\"shape\":[%d,%d],\"data_offsets\":[%zu,%zu]}", name,
                dtype, shape[0], shape[1], a, b);
}

BadModels bad_models_make(const char *dir)
{
    BadModels b = {.good = strf("%s/good.s2s", dir)};
    Model m;
    fixture_text_model(&m, 9);
    fixture_save(b.good, &m, NULL);
    const ParamLayout *l = &m.layout;

    Maker mk = {.b = &b};
    size_t len;
    char *file = slurp(b.good, &len);
    cr_assert_not_null(file);
    mk.file = file;
    mk.len = len;
    for (int k = 7; k >= 0; k--)
        mk.h = mk.h << 8 | (unsigned char)file[k];
    const uint64_t H = mk.h;
    cr_assert(H > 0 && 8 + H < len);
    const size_t D = len - 8 - (size_t)H;
    char *hdr = copy(file + 8, (size_t)H + 1);
    hdr[H] = '\0';
    for (size_t k = (size_t)H; k > 0 && hdr[k - 1] == ' '; k--)
        hdr[k - 1] = '\0';
    mk.hdr = hdr;

    /* Byte offsets of every tensor in the data section: F32 only, in layout order. */
    int n = l->n;
    size_t *beg = calloc((size_t)n, sizeof *beg), *end = calloc((size_t)n, sizeof *end);
    for (int k = 0; k < n; k++) {
        beg[k] = k ? end[k - 1] : 0;
        end[k] = beg[k] + 4 * l->info[k].size;
    }
    cr_assert_eq(end[n - 1], D, "the data section is not the tensors in layout order");
    const ParamInfo *first = &l->info[0], *last = &l->info[n - 1];
    cr_assert_str_eq(first->name, "src_emb.weight");
    cr_assert_str_eq(last->name, "out.proj.bias");
    cr_assert(first->ndim == 2 && first->shape[0] == 13 && first->shape[1] == 16);

    /* ---- truncated at every section boundary */
    add_cut(&mk, "empty file", 0, "truncated: no header length");
    add_cut(&mk, "cut inside the header length", 5, "truncated: no header length");
    add_cut(&mk, "cut after the header length", 8,
            "truncated: the header length says %" PRIu64 " bytes but only 0 follow", H);
    add_cut(&mk, "cut inside the header JSON", 8 + (size_t)H / 2,
            "truncated: the header length says %" PRIu64 " bytes but only %zu follow", H,
            (size_t)H / 2);
    add_cut(&mk, "cut one byte before the data", 8 + (size_t)H - 1,
            "truncated: the header length says %" PRIu64 " bytes but only %zu follow", H,
            (size_t)H - 1);
    add_cut(&mk, "cut at the start of the data", 8 + (size_t)H,
            "tensor 'src_emb.weight': data_offsets [0, %zu] go beyond the data section "
            "(0 bytes; truncated file?)", end[0]);
    int mid = 0;
    while (end[mid] <= D / 2)
        mid++;
    add_cut(&mk, "cut in the middle of the data", 8 + (size_t)H + D / 2,
            "tensor '%s': data_offsets [%zu, %zu] go beyond the data section (%zu bytes; "
            "truncated file?)", l->info[mid].name, beg[mid], end[mid], D / 2);
    add_cut(&mk, "one byte short", len - 1,
            "tensor 'out.proj.bias': data_offsets [%zu, %zu] go beyond the data section "
            "(%zu bytes; truncated file?)", beg[n - 1], end[n - 1], D - 1);

    /* ---- the header length */
    char *zip = copy(file, len);
    memcpy(zip, "PK\x03\x04\x14\x00\x00\x00", 8); /* a zip archive's first bytes */
    add(&mk, "zip magic instead of a header length", zip, len,
        "not a model file: header length 85966670672 is absurd (more than 100000000 bytes)");
    char *longer = copy(file, len);
    for (int k = 0; k < 8; k++)
        longer[k] = (char)(unsigned char)((uint64_t)len >> (8 * k));
    add(&mk, "header length larger than the file", longer, len,
        "truncated: the header length says %zu bytes but only %zu follow", len, len - 8);
    /* A header length that leaves out the closing brace of the JSON. */
    char *shorter = copy(file, len);
    size_t cut = strlen(hdr) - 1;
    for (int k = 0; k < 8; k++)
        shorter[k] = (char)(unsigned char)((uint64_t)cut >> (8 * k));
    add(&mk, "header length short of the JSON's end", shorter, len,
        "header: JSON: expected ',' or '}' at byte %zu (end of input)", cut);
    char *trailing = malloc(len + 8);
    memcpy(trailing, file, len);
    memset(trailing + len, 0, 8);
    add(&mk, "8 bytes after the last tensor", trailing, len + 8,
        "data section bytes [%zu, %zu) belong to no tensor", D, D + 8);

    /* ---- headers that lie about offsets, shapes and dtypes */
    const ParamInfo *second = &l->info[1];
    char *e0 = entry(first->name, "F32", 2, first->shape, beg[0], end[0]);
    char *e1 = entry(second->name, "F32", second->ndim, second->shape, beg[1], end[1]);
    char *en = entry(last->name, "F32", 1, last->shape, beg[n - 1], end[n - 1]);
    char *to = entry(second->name, "F32", second->ndim, second->shape, beg[1] - 4, end[1] - 4);
    add_hdr(&mk, "overlapping offsets", e1, to,
            "tensors '%s' and '%s' overlap: data_offsets [%zu, %zu] and [%zu, %zu]", first->name,
            second->name, beg[0], end[0], beg[1] - 4, end[1] - 4);
    free(to);
    const int rows12[2] = {12, 16};
    to = entry(first->name, "F32", 2, rows12, 0, end[0] - 64);
    add_hdr(&mk, "a gap between tensors", e0, to, "data section bytes [%zu, %zu) belong to no tensor",
            end[0] - 64, end[0]);
    free(to);
    to = entry(last->name, "F32", 1, last->shape, beg[n - 1] + 4, end[n - 1] + 4);
    add_hdr(&mk, "offsets beyond the end", en, to,
            "tensor 'out.proj.bias': data_offsets [%zu, %zu] go beyond the data section "
            "(%zu bytes; truncated file?)", beg[n - 1] + 4, end[n - 1] + 4, D);
    free(to);
    const int rows14[2] = {14, 16};
    to = entry(first->name, "F32", 2, rows14, 0, end[0]);
    add_hdr(&mk, "shape that disagrees with data_offsets", e0, to,
            "tensor 'src_emb.weight': shape [14, 16] of F32 needs 896 bytes but data_offsets "
            "[0, %zu] hold %zu", end[0], end[0]);
    free(to);
    const int swapped[2] = {16, 13};
    to = entry(first->name, "F32", 2, swapped, 0, end[0]);
    add_hdr(&mk, "shape that disagrees with the configuration", e0, to,
            "tensor 'src_emb.weight' is F32 [16, 13], expected F32 [13, 16]");
    free(to);
    to = entry(first->name, "I32", 2, first->shape, 0, end[0]);
    add_hdr(&mk, "dtype I32 instead of F32", e0, to,
            "tensor 'src_emb.weight' is I32 [13, 16], expected F32 [13, 16]");
    free(to);
    add_hdr(&mk, "a tensor missing (renamed)", "\"out.proj.bias\":", "\"out.proj.bias2\":",
            "missing tensor 'out.proj.bias'");
    free(e0);
    free(e1);
    free(en);

    /* ---- the data */
    char *flip = copy(file, len);
    flip[8 + H + D / 2] ^= 0x10;
    add(&mk, "one bit flipped in the data", flip, len, "checksum mismatch: the file is corrupted");
    flip = copy(file, len);
    flip[len - 1] ^= 0x01;
    add(&mk, "last bit flipped", flip, len, "checksum mismatch: the file is corrupted");

    /* ---- s2s.config */
    add_hdr(&mk, "config without a key", "\\\"attention\\\": \\\"bahdanau\\\", ", "",
            "s2s.config: missing key 'attention'");
    add_hdr(&mk, "config with an unknown key", "\\\"keep_case\\\": false}",
            "\\\"keep_case\\\": false, \\\"beam\\\": 5}", "s2s.config: unknown key 'beam'");
    add_hdr(&mk, "config with a value out of range", "\\\"layers\\\": 1,", "\\\"layers\\\": 9,",
            "s2s.config: 'layers' must be an integer in 1..4");
    add_hdr(&mk, "config that is not JSON", "\"s2s.config\":\"{", "\"s2s.config\":\"[",
            "s2s.config: JSON: expected ',' or ']' at byte 7");
    add_hdr(&mk, "config that disagrees with the tensors", "\\\"hidden\\\": 10,",
            "\\\"hidden\\\": 11,",
            "tensor 'encoder.weight_ih_l0' is F32 [30, 16], expected F32 [33, 16]");
    add_hdr(&mk, "no s2s.config", "\"s2s.config\":", "\"s2s.konfig\":",
            "not a complete s2s model: metadata lacks s2s.config");

    /* ---- vocabularies */
    add_hdr(&mk, "source vocabulary with a duplicate token", "\\nthe\\ncat\\n", "\\nthe\\nthe\\n",
            "s2s.vocab.src:6: duplicate token 'the' (first on line 5)");
    add_hdr(&mk, "target vocabulary without <unk>", "\"<pad>\\n<unk>\\n<bos>\\n<eos>\\nle\\n",
            "\"<pad>\\n<bos>\\n<eos>\\nle\\n",
            "s2s.vocab.tgt:2: expected special token '<unk>' on line 2, found '<bos>'");
    add_hdr(&mk, "source vocabulary with a token holding a tab", "\\ncat\\n", "\\nc\\tat\\n",
            "s2s.vocab.src:6: token 'c\\x09at' contains whitespace");
    add_hdr(&mk, "source vocabulary with a token holding a CR", "\\ncat\\n", "\\ncat\\r\\n",
            "s2s.vocab.src:6: token 'cat\\x0d' contains whitespace");
    add_hdr(&mk, "source vocabulary with an empty token", "\\ncat\\n", "\\n\\n",
            "s2s.vocab.src:6: empty token");
    add_hdr(&mk, "source vocabulary one token short", "\\nbig\\nblack\"", "\\nbig\"",
            "tensor 'src_emb.weight' is F32 [13, 16], expected F32 [12, 16]");
    add_hdr(&mk, "source vocabulary of the specials only",
            "<eos>\\nthe\\ncat\\ndog\\na\\nsleeps\\neats\\nhello\\nbig\\nblack\"", "<eos>\"",
            "vocabularies must hold the 4 specials and at least one token (source 4, target 16)");
    add_hdr(&mk, "no s2s.vocab.tgt", "\"s2s.vocab.tgt\":", "\"s2s.vocab.tgz\":",
            "not a complete s2s model: metadata lacks s2s.vocab.tgt");

    /* ---- history and the kind of file */
    add_hdr(&mk, "history that is not JSON", "\"s2s.history\":\"{}\"", "\"s2s.history\":\"{\"",
            "s2s.history: JSON: expected a string key or '}' at byte 1 (end of input)");
    add_hdr(&mk, "a foreign safetensors file", "\"s2s.format\":\"s2s-model-1\",", "",
            "not an s2s model (no s2s.format in the metadata, expected 's2s-model-1')");
    add_hdr(&mk, "a training state file", "\"s2s.format\":\"s2s-model-1\"",
            "\"s2s.format\":\"s2s-state-1\"",
            "not an s2s model (format 's2s-state-1', expected 's2s-model-1'); of a training state "
            "'s2s average STATE -o OUT' makes one");

    free(beg);
    free(end);
    free(hdr);
    free(file);
    model_free(&m);
    return b;
}

void bad_models_free(BadModels *b)
{
    for (size_t i = 0; i < b->n; i++) {
        free(b->v[i].bytes);
        free(b->v[i].msg);
    }
    free(b->v);
    free(b->good);
    memset(b, 0, sizeof *b);
}
