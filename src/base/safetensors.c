#include "base/safetensors.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/crc32.h"
#include "base/file.h"
#include "base/json.h"
#include "base/utf8.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "tensor data is used in place as little-endian: big-endian hosts are not supported"
#endif

static const struct {
    const char *name;
    size_t size;
} dtypes[ST_NDTYPES] = {
    [ST_BOOL] = {"BOOL", 1},     [ST_U8] = {"U8", 1},     [ST_I8] = {"I8", 1},
    [ST_F8_E5M2] = {"F8_E5M2", 1}, [ST_F8_E4M3] = {"F8_E4M3", 1},
    [ST_I16] = {"I16", 2},       [ST_U16] = {"U16", 2},   [ST_F16] = {"F16", 2},
    [ST_BF16] = {"BF16", 2},     [ST_I32] = {"I32", 4},   [ST_U32] = {"U32", 4},
    [ST_F32] = {"F32", 4},       [ST_I64] = {"I64", 8},   [ST_U64] = {"U64", 8},
    [ST_F64] = {"F64", 8},
};

const char *st_dtype_name(StDtype d)
{
    return (unsigned)d < ST_NDTYPES ? dtypes[d].name : NULL;
}

size_t st_dtype_size(StDtype d)
{
    return (unsigned)d < ST_NDTYPES ? dtypes[d].size : 0;
}

int st_dtype_parse(const char *name, StDtype *out)
{
    for (int d = 0; d < ST_NDTYPES; d++)
        if (strcmp(dtypes[d].name, name) == 0) {
            *out = (StDtype)d;
            return 0;
        }
    return -1;
}

/* Product of the dims times elem, or -1 when it does not fit in int64. */
static int64_t checked_bytes(int ndim, const int64_t *shape, size_t elem)
{
    uint64_t total = elem;
    for (int k = 0; k < ndim; k++) {
        if (shape[k] < 0 || __builtin_mul_overflow(total, (uint64_t)shape[k], &total))
            return -1;
    }
    return total > (uint64_t)INT64_MAX ? -1 : (int64_t)total;
}

int64_t st_numel(const StTensor *t)
{
    return checked_bytes(t->ndim, t->shape, 1);
}

size_t st_nbytes(const StTensor *t)
{
    return (size_t)checked_bytes(t->ndim, t->shape, st_dtype_size(t->dtype));
}

static void put_shape(JsonWriter *w, const char *key, int ndim, const int64_t *shape)
{
    json_open_array(w, key);
    for (int k = 0; k < ndim; k++)
        json_put_int(w, NULL, shape[k]);
    json_close(w);
}

/* A shape for messages: [2, 3]. */
static void shape_text(Buf *b, int ndim, const int64_t *shape)
{
    JsonWriter w;
    json_writer_init(&w, b, JSON_LINE);
    put_shape(&w, NULL, ndim, shape);
}

/* A name made fit for a message (escaped, shortened). */
typedef struct Shown {
    char s[96];
} Shown;

static Shown show(const char *s, size_t len)
{
    Shown r;
    json_show(r.s, sizeof r.s, s, len);
    return r;
}

static Shown show_c(const char *s)
{
    return show(s, strlen(s));
}

/* ---- writer ---------------------------------------------------------------- */

typedef struct NameIdx {
    const char *name;
    size_t idx;
} NameIdx;

static int cmp_name_idx(const void *a, const void *b)
{
    const NameIdx *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : (x->idx > y->idx) - (x->idx < y->idx);
}

static int check_tensors(const char *path, const StTensor *ts, size_t n, Err *e)
{
    for (size_t i = 0; i < n; i++) {
        const StTensor *t = &ts[i];
        if (!t->name || !*t->name)
            return err_set(e, "%s: tensor %zu has no name", path, i);
        Shown sn = show_c(t->name);
        const char *nm = sn.s;
        if (strcmp(t->name, "__metadata__") == 0)
            return err_set(e, "%s: the tensor name '__metadata__' is reserved", path);
        if (!utf8_valid(t->name, strlen(t->name)))
            return err_set(e, "%s: tensor name '%s' is not valid UTF-8", path, nm);
        if ((unsigned)t->dtype >= ST_NDTYPES)
            return err_set(e, "%s: tensor '%s': bad dtype %d", path, nm, (int)t->dtype);
        if (t->ndim < 0 || t->ndim > ST_MAX_DIMS)
            return err_set(e, "%s: tensor '%s': bad number of dimensions %d (at most %d)", path,
                           nm, t->ndim, ST_MAX_DIMS);
        for (int k = 0; k < t->ndim; k++)
            if (t->shape[k] < 0)
                return err_set(e, "%s: tensor '%s': negative dimension %" PRId64, path, nm,
                               t->shape[k]);
        int64_t nb = checked_bytes(t->ndim, t->shape, dtypes[t->dtype].size);
        if (nb < 0 || (uint64_t)nb > SIZE_MAX)
            return err_set(e, "%s: tensor '%s': shape too large", path, nm);
        if (nb > 0 && !t->data)
            return err_set(e, "%s: tensor '%s' has no data", path, nm);
    }
    NameIdx *byname = XNEW(NameIdx, n);
    for (size_t i = 0; i < n; i++)
        byname[i] = (NameIdx){ts[i].name, i};
    qsort(byname, n, sizeof *byname, cmp_name_idx);
    for (size_t i = 1; i < n; i++)
        if (strcmp(byname[i - 1].name, byname[i].name) == 0) {
            int rc = err_set(e, "%s: duplicate tensor name '%s'", path, show_c(byname[i].name).s);
            free(byname);
            return rc;
        }
    free(byname);
    return 0;
}

static int check_meta(const char *path, const char *const *keys, const char *const *vals,
                      size_t n, Err *e)
{
    for (size_t i = 0; i < n; i++) {
        if (!keys[i] || !vals[i])
            return err_set(e, "%s: metadata entry %zu has no key or no value", path, i);
        Shown k = show_c(keys[i]);
        if (strcmp(keys[i], ST_KEY_CRC32) == 0)
            return err_set(e, "%s: metadata key '%s' is reserved: the writer computes it", path,
                           k.s);
        if (!utf8_valid(keys[i], strlen(keys[i])))
            return err_set(e, "%s: metadata key '%s' is not valid UTF-8", path, k.s);
        if (!utf8_valid(vals[i], strlen(vals[i])))
            return err_set(e, "%s: metadata '%s' has a value that is not valid UTF-8", path, k.s);
        for (size_t j = 0; j < i; j++)
            if (strcmp(keys[j], keys[i]) == 0)
                return err_set(e, "%s: duplicate metadata key '%s'", path, k.s);
    }
    return 0;
}

static int write_all(AtomicFile *af, const void *p, size_t n, Err *e)
{
    if (n == 0)
        return 0;
    errno = 0;
    if (fwrite(p, 1, n, af->fp) == n)
        return 0;
    int saved = errno ? errno : EIO;
    int rc = err_set(e, "%s: write failed: %s", af->path, strerror(saved));
    atomic_abort(af);
    return rc;
}

int st_write(const char *path, const StTensor *tensors, size_t n, const char *const *meta_keys,
             const char *const *meta_vals, size_t n_meta, Err *e)
{
    if (check_tensors(path, tensors, n, e) != 0 ||
        check_meta(path, meta_keys, meta_vals, n_meta, e) != 0)
        return -1;

    /* Layout: decreasing element size, stable. */
    size_t *order = XNEW(size_t, n);
    size_t m = 0;
    for (size_t size = 8; size >= 1; size /= 2)
        for (size_t i = 0; i < n; i++)
            if (dtypes[tensors[i].dtype].size == size)
                order[m++] = i;
    CHECK(m == n);

    uint32_t crc = 0;
    for (size_t k = 0; k < n; k++) {
        const StTensor *t = &tensors[order[k]];
        crc = crc32_update(crc, t->data, st_nbytes(t));
    }

    Buf h = {0};
    JsonWriter w;
    json_writer_init(&w, &h, JSON_COMPACT);
    json_open_object(&w, NULL);
    json_open_object(&w, "__metadata__");
    for (size_t i = 0; i < n_meta; i++)
        json_put_str(&w, meta_keys[i], meta_vals[i]);
    char crc_hex[9];
    snprintf(crc_hex, sizeof crc_hex, "%08" PRIx32, crc);
    json_put_str(&w, ST_KEY_CRC32, crc_hex);
    json_close(&w);
    uint64_t off = 0;
    for (size_t k = 0; k < n; k++) {
        const StTensor *t = &tensors[order[k]];
        uint64_t nb = st_nbytes(t);
        json_open_object(&w, t->name);
        json_put_str(&w, "dtype", dtypes[t->dtype].name);
        put_shape(&w, "shape", t->ndim, t->shape);
        json_open_array(&w, "data_offsets");
        json_put_uint(&w, NULL, off);
        json_put_uint(&w, NULL, off + nb);
        json_close(&w);
        json_close(&w);
        off += nb;
    }
    json_close(&w);
    while ((8 + h.len) % 8)
        buf_putc(&h, ' ');
    if (h.len > ST_MAX_HEADER) {
        int rc = err_set(e, "%s: header of %zu bytes is longer than the format allows", path,
                         h.len);
        buf_free(&h);
        free(order);
        return rc;
    }

    unsigned char len8[8];
    for (int k = 0; k < 8; k++)
        len8[k] = (unsigned char)((uint64_t)h.len >> (8 * k));
    AtomicFile af;
    int rc = atomic_open(&af, path, e);
    if (rc == 0)
        rc = write_all(&af, len8, 8, e);
    if (rc == 0)
        rc = write_all(&af, h.data, h.len, e);
    for (size_t k = 0; k < n && rc == 0; k++) {
        const StTensor *t = &tensors[order[k]];
        rc = write_all(&af, t->data, st_nbytes(t), e);
    }
    if (rc == 0)
        rc = atomic_commit(&af, e);
    buf_free(&h);
    free(order);
    return rc;
}

/* ---- reader ---------------------------------------------------------------- */

struct StFile {
    char *path;
    unsigned char *buf;
    size_t len;
    Json doc;
    StTensor *t;
    size_t n;
    size_t *by_name;  /* indices of t sorted by name */
    const char **mkeys, **mvals;
    size_t nmeta;
    void **owned;     /* copies of misaligned tensors */
    size_t nowned;
    bool mapped;      /* buf is a read-only mapping of the file (st_map) */
};

void st_close(StFile *f)
{
    if (!f)
        return;
    for (size_t i = 0; i < f->nowned; i++)
        free(f->owned[i]);
    free(f->owned);
    free(f->mkeys);
    free(f->mvals);
    free(f->by_name);
    free(f->t);
    json_free(&f->doc);
    if (f->mapped)
        file_unmap(f->buf, f->len);
    else
        free(f->buf);
    free(f->path);
    free(f);
}

static int type_fail(Err *e, const char *path, const char *what, const JsonVal *v,
                     const char *want)
{
    JsonType t = v->type;
    const char *art = t == JSON_NULL ? "" : t == JSON_ARRAY || t == JSON_OBJECT ? "an " : "a ";
    return err_set(e, "%s: %s is not %s (found %s%s)", path, what, want, art, json_type_name(t));
}

static int load_meta(StFile *f, const JsonVal *md, Err *e)
{
    if (md->type != JSON_OBJECT)
        return type_fail(e, f->path, "__metadata__", md, "an object");
    size_t n = json_len(md);
    f->mkeys = XNEW(const char *, n);
    f->mvals = XNEW(const char *, n);
    for (size_t i = 0; i < n; i++) {
        const JsonKey *k = json_key_at(md, i);
        const JsonVal *v = json_at(md, i);
        Shown ks = show(k->s, k->len);
        if (memchr(k->s, '\0', k->len))
            return err_set(e, "%s: metadata key '%s' contains a NUL character", f->path, ks.s);
        if (v->type != JSON_STRING) {
            char what[160];
            snprintf(what, sizeof what, "metadata '%s'", ks.s);
            return type_fail(e, f->path, what, v, "a string");
        }
        if (memchr(v->u.str.s, '\0', v->u.str.len))
            return err_set(e, "%s: metadata '%s' contains a NUL character", f->path, ks.s);
        f->mkeys[i] = k->s;
        f->mvals[i] = v->u.str.s;
    }
    f->nmeta = n;
    return 0;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static int parse_crc(const StFile *f, const char *s, uint32_t *out, Err *e)
{
    uint32_t v = 0;
    size_t n = strlen(s);
    for (size_t i = 0; i < n && n == 8; i++) {
        int d = hexval(s[i]);
        if (d < 0) {
            n = 0;
            break;
        }
        v = v * 16 + (uint32_t)d;
    }
    if (n != 8)
        return err_set(e, "%s: metadata %s '%s' is not 8 hex digits", f->path, ST_KEY_CRC32,
                       show_c(s).s);
    *out = v;
    return 0;
}

/* A non-negative integer or -1. */
static int64_t nonneg_int(const JsonVal *v)
{
    return v && v->type == JSON_NUMBER && v->is_int && v->u.num.i >= 0 ? v->u.num.i : -1;
}

typedef struct Span {
    int64_t begin, end;
    size_t idx;
} Span;

static int cmp_span(const void *a, const void *b)
{
    const Span *x = a, *y = b;
    if (x->begin != y->begin)
        return x->begin < y->begin ? -1 : 1;
    if (x->end != y->end)
        return x->end < y->end ? -1 : 1;
    return (x->idx > y->idx) - (x->idx < y->idx);
}

static int load_tensor(StFile *f, const JsonKey *key, const JsonVal *v, uint64_t data_len,
                       StTensor *t, Span *span, Err *e)
{
    const char *path = f->path;
    Shown sn = show(key->s, key->len);
    const char *nm = sn.s;
    if (memchr(key->s, '\0', key->len))
        return err_set(e, "%s: tensor name '%s' contains a NUL character", path, nm);
    char what[200];
    snprintf(what, sizeof what, "tensor '%s'", nm);
    if (v->type != JSON_OBJECT)
        return type_fail(e, path, what, v, "an object");
    for (size_t i = 0; i < json_len(v); i++) {
        const JsonKey *k = json_key_at(v, i);
        if (strcmp(k->s, "dtype") && strcmp(k->s, "shape") && strcmp(k->s, "data_offsets"))
            return err_set(e, "%s: tensor '%s': unknown field '%s'", path, nm,
                           show(k->s, k->len).s);
    }
    const JsonVal *dt = json_get(v, "dtype"), *sh = json_get(v, "shape"),
                  *of = json_get(v, "data_offsets");
    if (!dt || !sh || !of)
        return err_set(e, "%s: tensor '%s': missing %s", path, nm,
                       !dt ? "dtype" : !sh ? "shape" : "data_offsets");
    snprintf(what, sizeof what, "tensor '%s': dtype", nm);
    if (dt->type != JSON_STRING)
        return type_fail(e, path, what, dt, "a string");
    if (memchr(dt->u.str.s, '\0', dt->u.str.len) || st_dtype_parse(dt->u.str.s, &t->dtype) != 0)
        return err_set(e, "%s: tensor '%s': unknown dtype '%s'", path, nm,
                       show(dt->u.str.s, dt->u.str.len).s);
    snprintf(what, sizeof what, "tensor '%s': shape", nm);
    if (sh->type != JSON_ARRAY)
        return type_fail(e, path, what, sh, "an array");
    if (json_len(sh) > ST_MAX_DIMS)
        return err_set(e, "%s: tensor '%s': shape has %zu dimensions (at most %d)", path, nm,
                       json_len(sh), ST_MAX_DIMS);
    t->ndim = (int)json_len(sh);
    for (int k = 0; k < t->ndim; k++) {
        t->shape[k] = nonneg_int(json_at(sh, (size_t)k));
        if (t->shape[k] < 0)
            return err_set(e, "%s: tensor '%s': shape[%d] is not a non-negative integer", path,
                           nm, k);
    }
    if (of->type != JSON_ARRAY || json_len(of) != 2)
        return err_set(e, "%s: tensor '%s': data_offsets is not an array of 2 integers", path,
                       nm);
    int64_t b = nonneg_int(json_at(of, 0)), en = nonneg_int(json_at(of, 1));
    if (b < 0 || en < 0)
        return err_set(e, "%s: tensor '%s': data_offsets[%d] is not a non-negative integer",
                       path, nm, b < 0 ? 0 : 1);
    if (b > en)
        return err_set(e, "%s: tensor '%s': data_offsets [%" PRId64 ", %" PRId64
                          "] end before they begin", path, nm, b, en);
    int64_t need = checked_bytes(t->ndim, t->shape, dtypes[t->dtype].size);
    Buf s = {0};
    shape_text(&s, t->ndim, t->shape);
    int rc = 0;
    if (need < 0)
        rc = err_set(e, "%s: tensor '%s': shape %s is too large", path, nm, s.data);
    else if (need != en - b)
        rc = err_set(e, "%s: tensor '%s': shape %s of %s needs %" PRId64
                        " bytes but data_offsets [%" PRId64 ", %" PRId64 "] hold %" PRId64,
                     path, nm, s.data, dtypes[t->dtype].name, need, b, en, en - b);
    else if ((uint64_t)en > data_len)
        rc = err_set(e, "%s: tensor '%s': data_offsets [%" PRId64 ", %" PRId64
                        "] go beyond the data section (%" PRIu64 " bytes; truncated file?)",
                     path, nm, b, en, data_len);
    buf_free(&s);
    if (rc)
        return rc;
    t->name = key->s;
    span->begin = b;
    span->end = en;
    return 0;
}

/* The tensors must cover [0, data_len) exactly: no overlap, no gap. */
static int check_coverage(StFile *f, Span *spans, uint64_t data_len, Err *e)
{
    qsort(spans, f->n, sizeof *spans, cmp_span);
    int64_t cursor = 0; /* end of the covered prefix == end of spans[k - 1] */
    for (size_t k = 0; k < f->n; k++) {
        const Span *s = &spans[k];
        if (s->begin < cursor) {
            const Span *p = &spans[k - 1];
            return err_set(e, "%s: tensors '%s' and '%s' overlap: data_offsets [%" PRId64
                              ", %" PRId64 "] and [%" PRId64 ", %" PRId64 "]",
                           f->path, show_c(f->t[p->idx].name).s, show_c(f->t[s->idx].name).s,
                           p->begin, p->end, s->begin, s->end);
        }
        if (s->begin > cursor)
            return err_set(e, "%s: data section bytes [%" PRId64 ", %" PRId64
                              ") belong to no tensor", f->path, cursor, s->begin);
        cursor = s->end;
    }
    if ((uint64_t)cursor < data_len)
        return err_set(e, "%s: data section bytes [%" PRId64 ", %" PRIu64
                          ") belong to no tensor", f->path, cursor, data_len);
    return 0;
}

static int cmp_by_name(const void *a, const void *b, void *ctx)
{
    const StTensor *t = ctx;
    return strcmp(t[*(const size_t *)a].name, t[*(const size_t *)b].name);
}

/* The little-endian u64 at p: the header length that starts a safetensors file. */
static uint64_t le64(const unsigned char *p)
{
    uint64_t x = 0;
    for (int k = 7; k >= 0; k--)
        x = x << 8 | p[k];
    return x;
}

/* Validates f->buf[0..len) and builds the tensor table. */
static int parse_all(StFile *f, const char *expect_format, Err *e)
{
    const char *path = f->path;
    if (f->len < 8)
        return err_set(e, "%s: truncated: no header length", path);
    uint64_t hlen = le64(f->buf);
    if (hlen > ST_MAX_HEADER)
        return err_set(e, "%s: not a model file: header length %" PRIu64 " is absurd (more than %llu bytes)", path,
                       hlen, ST_MAX_HEADER);
    if (hlen > f->len - 8)
        return err_set(e, "%s: truncated: the header length says %" PRIu64
                          " bytes but only %zu follow", path, hlen, f->len - 8);
    Err je;
    if (json_parse(&f->doc, (const char *)f->buf + 8, (size_t)hlen, &je) != 0)
        return err_set(e, "%s: header: %s", path, je.msg);
    const JsonVal *root = f->doc.root;
    if (root->type != JSON_OBJECT)
        return type_fail(e, path, "the header", root, "a JSON object");

    const JsonVal *md = json_get(root, "__metadata__");
    if (md && load_meta(f, md, e) != 0)
        return -1;
    if (expect_format) {
        const char *fmt = st_meta(f, ST_KEY_FORMAT);
        if (!fmt)
            return err_set(e, "%s: not an s2s model (no %s in the metadata, expected '%s')", path,
                           ST_KEY_FORMAT, expect_format);
        /* a training state (train/outputs.h) where a model is wanted: say how to get one */
        bool state = strcmp(fmt, "s2s-state-1") == 0 && strcmp(expect_format, ST_FORMAT_MODEL) == 0;
        if (strcmp(fmt, expect_format) != 0)
            return err_set(e, "%s: not an s2s model (format '%s', expected '%s')%s", path, show_c(fmt).s,
                           expect_format, state ? "; of a training state 's2s average STATE -o OUT' makes one" : "");
    }
    const char *crc_text = st_meta(f, ST_KEY_CRC32);
    uint32_t want_crc = 0;
    if (crc_text && parse_crc(f, crc_text, &want_crc, e) != 0)
        return -1;

    const unsigned char *data = f->buf + 8 + hlen;
    uint64_t data_len = f->len - 8 - hlen;
    size_t nmembers = json_len(root);
    f->t = xcalloc(nmembers ? nmembers : 1, sizeof *f->t);
    Span *spans = XNEW(Span, nmembers);
    for (size_t i = 0; i < nmembers; i++) {
        const JsonKey *k = json_key_at(root, i);
        if (strcmp(k->s, "__metadata__") == 0 && k->len == strlen("__metadata__"))
            continue;
        if (load_tensor(f, k, json_at(root, i), data_len, &f->t[f->n], &spans[f->n], e) != 0) {
            free(spans);
            return -1;
        }
        spans[f->n].idx = f->n;
        f->n++;
    }
    int rc = check_coverage(f, spans, data_len, e);
    if (rc == 0) {
        for (size_t k = 0; k < f->n; k++)
            f->t[spans[k].idx].data = data + spans[k].begin;
    }
    free(spans);
    if (rc != 0)
        return -1;

    if (crc_text && crc32_update(0, data, (size_t)data_len) != want_crc)
        return err_set(e, "%s: checksum mismatch: the file is corrupted", path);

    for (size_t i = 0; i < f->n; i++) {
        StTensor *t = &f->t[i];
        size_t al = dtypes[t->dtype].size;
        if ((uintptr_t)t->data % al) {
            size_t nb = st_nbytes(t);
            void *copy = xmalloc(nb);
            memcpy(copy, t->data, nb);
            f->owned = xrealloc_array(f->owned, f->nowned + 1, sizeof *f->owned);
            f->owned[f->nowned++] = copy;
            t->data = copy;
        }
    }
    f->by_name = XNEW(size_t, f->n);
    for (size_t i = 0; i < f->n; i++)
        f->by_name[i] = i;
    qsort_r(f->by_name, f->n, sizeof *f->by_name, cmp_by_name, f->t);
    return 0;
}

static int finish(StFile *f, StFile **out, const char *expect_format, Err *e)
{
    if (parse_all(f, expect_format, e) != 0) {
        st_close(f);
        *out = NULL;
        return -1;
    }
    *out = f;
    return 0;
}

int st_parse(StFile **out, const char *name, const void *bytes, size_t len,
             const char *expect_format, Err *e)
{
    StFile *f = xcalloc(1, sizeof *f);
    f->path = xstrdup(name);
    f->buf = xmalloc(len);
    if (len)
        memcpy(f->buf, bytes, len);
    f->len = len;
    return finish(f, out, expect_format, e);
}

int st_read_meta(const char *path, const char *const *keys, size_t n, char **vals, Err *e)
{
    for (size_t k = 0; k < n; k++)
        vals[k] = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return err_set(e, "%s: cannot open: %s", path, strerror(errno));
    int rc = -1;
    unsigned char len8[8];
    struct stat st;
    uint64_t hlen = 0;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || pread(fd, len8, 8, 0) != 8) {
        err_set(e, "%s: not a safetensors file", path);
        goto out;
    }
    hlen = le64(len8);
    if (hlen == 0 || hlen > ST_MAX_HEADER || hlen > (uint64_t)st.st_size - 8) {
        err_set(e, "%s: not a safetensors file (header length %" PRIu64 ")", path, hlen);
        goto out;
    }
    char *h = xmalloc((size_t)hlen);
    Json doc = {0};
    Err je;
    if (pread(fd, h, (size_t)hlen, 8) != (ssize_t)hlen) {
        err_set(e, "%s: cannot read: %s", path, strerror(errno ? errno : EIO));
    } else if (json_parse(&doc, h, (size_t)hlen, &je) != 0) {
        err_set(e, "%s: header: %s", path, je.msg);
    } else {
        const JsonVal *md = json_get(doc.root, "__metadata__");
        for (size_t k = 0; k < n; k++) {
            const JsonVal *v = json_get(md, keys[k]);
            if (v && v->type == JSON_STRING)
                vals[k] = xstrndup(v->u.str.s, v->u.str.len);
        }
        rc = 0;
    }
    json_free(&doc);
    free(h);
out:
    close(fd);
    return rc;
}

bool st_has_format(const char *path, const char *format)
{
    const char *key = ST_KEY_FORMAT;
    char *v;
    bool yes = st_read_meta(path, &key, 1, &v, NULL) == 0 && v && strcmp(v, format) == 0;
    free(v);
    return yes;
}

/* Opens path for reading if it is a regular file: the fd, or -1 with e set. A FIFO or
   a device is refused without waiting for a writer (O_NONBLOCK) or reading endless
   data. *hlen: the header length its first 8 bytes give (0 when it is shorter). */
static int open_regular(const char *path, struct stat *st, uint64_t *hlen, Err *e)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return err_set(e, "%s: cannot open: %s", path, strerror(errno));
    if (fstat(fd, st) != 0) {
        int saved = errno;
        close(fd);
        return err_set(e, "%s: cannot open: %s", path, strerror(saved));
    }
    if (!S_ISREG(st->st_mode)) {
        close(fd);
        return err_set(e, "%s: not a regular file (%s); a model or state is read from a file",
                       path, S_ISDIR(st->st_mode) ? "a directory" : S_ISFIFO(st->st_mode) ? "a pipe"
                                                                 : "a device or socket");
    }
    unsigned char len8[8];
    *hlen = st->st_size >= 8 && pread(fd, len8, 8, 0) == 8 ? le64(len8) : 0;
    return fd;
}

int st_load(StFile **out, const char *path, const char *expect_format, Err *e)
{
    *out = NULL;
    struct stat st;
    uint64_t hlen;
    int fd = open_regular(path, &st, &hlen, e);
    if (fd < 0)
        return -1;
    size_t cap = 1 << 16, n = 0;
    if (st.st_size > 0)
        cap = (size_t)st.st_size + 1; /* one more byte: EOF without a realloc */
    /* A header length that no s2s file has (a foreign or damaged file): its first 8
       bytes tell, so the rest (perhaps gigabytes) is not read. */
    size_t upto = SIZE_MAX; /* bytes to read at most */
    if (hlen > ST_MAX_HEADER)
        cap = upto = 8;
    unsigned char *buf = xmalloc(cap);
    while (n < upto) {
        if (n == cap) {
            cap *= 2;
            buf = xrealloc(buf, cap);
        }
        ssize_t r = read(fd, buf + n, cap - n);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            int saved = errno;
            close(fd);
            free(buf);
            return err_set(e, "%s: cannot read: %s", path, strerror(saved));
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    close(fd);
    StFile *f = xcalloc(1, sizeof *f);
    f->path = xstrdup(path);
    f->buf = buf;
    f->len = n;
    return finish(f, out, expect_format, e);
}

int st_map(StFile **out, const char *path, const char *expect_format, Err *e)
{
    *out = NULL;
    struct stat st;
    uint64_t hlen;
    int fd = open_regular(path, &st, &hlen, e);
    if (fd < 0)
        return -1;
    if (st.st_size <= 0 || hlen > ST_MAX_HEADER) {
        close(fd);
        return st_load(out, path, expect_format, e); /* empty, or foreign: nothing to map */
    }
    size_t len = (size_t)st.st_size;
    void *map = mmap(NULL, len, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED)
        return st_load(out, path, expect_format, e);
    file_map_watch(map, len, path, "nothing written");
    StFile *f = xcalloc(1, sizeof *f);
    f->path = xstrdup(path);
    f->buf = map;
    f->len = len;
    f->mapped = true;
    return finish(f, out, expect_format, e);
}

bool st_is_mapped(const StFile *f) { return f->mapped; }

size_t st_count(const StFile *f) { return f->n; }

const StTensor *st_at(const StFile *f, size_t i) { return i < f->n ? &f->t[i] : NULL; }

const StTensor *st_tensor(const StFile *f, const char *name)
{
    size_t lo = 0, hi = f->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const StTensor *t = &f->t[f->by_name[mid]];
        int c = strcmp(name, t->name);
        if (c == 0)
            return t;
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return NULL;
}

const StTensor *st_expect(const StFile *f, const char *name, StDtype dtype, int ndim,
                          const int64_t *shape, Err *e)
{
    const StTensor *t = st_tensor(f, name);
    if (!t) {
        err_set(e, "%s: missing tensor '%s'", f->path, show_c(name).s);
        return NULL;
    }
    bool same = t->dtype == dtype && t->ndim == ndim;
    for (int k = 0; same && k < ndim; k++)
        same = t->shape[k] == shape[k];
    if (same)
        return t;
    Buf have = {0}, want = {0};
    shape_text(&have, t->ndim, t->shape);
    shape_text(&want, ndim, shape);
    err_set(e, "%s: tensor '%s' is %s %s, expected %s %s", f->path, show_c(name).s,
            dtypes[t->dtype].name, have.data, st_dtype_name(dtype) ? st_dtype_name(dtype) : "?",
            want.data);
    buf_free(&have);
    buf_free(&want);
    return NULL;
}

size_t st_meta_count(const StFile *f) { return f->nmeta; }

const char *st_meta_key(const StFile *f, size_t i) { return i < f->nmeta ? f->mkeys[i] : NULL; }

const char *st_meta_val(const StFile *f, size_t i) { return i < f->nmeta ? f->mvals[i] : NULL; }

const char *st_meta(const StFile *f, const char *key)
{
    for (size_t i = 0; i < f->nmeta; i++)
        if (strcmp(f->mkeys[i], key) == 0)
            return f->mvals[i];
    return NULL;
}
