#include "data/ids.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/crc32.h"
#include "base/file.h"

/* Header: magic[8], version u32, crc u32 (of the rest of the header and the table of
   block checksums), pairs u64, ids u64, vocab.src, vocab.tgt, bpe.src, bpe.tgt
   fingerprints u32 each, the longest source, the longest and the shortest target u32
   each, the block size u32. Then the body (the offsets and the ids) and the table. */
enum {
    AT_VERSION = 8, AT_CRC = 12, AT_PAIRS = 16, AT_IDS = 24, AT_PRINT = 32, AT_EXTENT = 48,
    AT_BLOCK = 60
};

#define AGAIN "; run 's2s prepare' again to rewrite it"

static void put_u32(unsigned char *p, uint32_t x)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(x >> (8 * i));
}

static void put_u64(unsigned char *p, uint64_t x)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(x >> (8 * i));
}

static uint32_t get_u32(const unsigned char *p)
{
    uint32_t x = 0;
    for (int i = 3; i >= 0; i--)
        x = x << 8 | p[i];
    return x;
}

static uint64_t get_u64(const unsigned char *p)
{
    uint64_t x = 0;
    for (int i = 7; i >= 0; i--)
        x = x << 8 | p[i];
    return x;
}

/* The body (offsets, then ids) in pieces of at most sizeof buf bytes, to out. */
typedef int (*Sink)(void *ctx, const unsigned char *p, size_t n);

static int emit_body(const IdsPairs *s, Sink sink, void *ctx)
{
    unsigned char buf[1 << 16];
    size_t k = 0;
    uint64_t at = 0;
#define FLUSH_IF(room)                                                    \
    do {                                                                  \
        if (k + (room) > sizeof buf) {                                    \
            if (sink(ctx, buf, k) != 0)                                   \
                return -1;                                                \
            k = 0;                                                        \
        }                                                                 \
    } while (0)
    FLUSH_IF(8);
    put_u64(buf + k, 0);
    k += 8;
    for (int i = 0; i < s->n; i++)
        for (int side = 0; side < 2; side++) {
            at += (uint64_t)(side ? s->tgt_len[i] : s->src_len[i]);
            FLUSH_IF(8);
            put_u64(buf + k, at);
            k += 8;
        }
    for (int i = 0; i < s->n; i++)
        for (int side = 0; side < 2; side++) {
            const int *p = side ? s->tgt[i] : s->src[i];
            int len = side ? s->tgt_len[i] : s->src_len[i];
            for (int j = 0; j < len; j++) {
                FLUSH_IF(4);
                put_u32(buf + k, (uint32_t)p[j]);
                k += 4;
            }
        }
#undef FLUSH_IF
    return k ? sink(ctx, buf, k) : 0;
}

/* The CRC-32 of each IDS_BLOCK bytes of what passes through. */
typedef struct BlockSums {
    uint32_t *crc;
    size_t k, fill;
    uint32_t cur;
} BlockSums;

static int block_sink(void *ctx, const unsigned char *p, size_t n)
{
    BlockSums *b = ctx;
    while (n) {
        size_t m = IDS_BLOCK - b->fill < n ? IDS_BLOCK - b->fill : n;
        b->cur = crc32_update(b->cur, p, m);
        b->fill += m;
        p += m;
        n -= m;
        if (b->fill == IDS_BLOCK) {
            b->crc[b->k++] = b->cur;
            b->cur = 0;
            b->fill = 0;
        }
    }
    return 0;
}

static int file_sink(void *ctx, const unsigned char *p, size_t n)
{
    return fwrite(p, 1, n, (FILE *)ctx) == n ? 0 : -1;
}

static uint64_t body_bytes(uint64_t n, uint64_t nids) { return 8 * (2 * n + 1) + 4 * nids; }

/* The longest source and target and the shortest target of set (0 when empty). */
static void extent(const IdsPairs *set, int ext[3])
{
    ext[0] = ext[1] = ext[2] = 0;
    for (int i = 0; i < set->n; i++) {
        ext[0] = set->src_len[i] > ext[0] ? set->src_len[i] : ext[0];
        ext[1] = set->tgt_len[i] > ext[1] ? set->tgt_len[i] : ext[1];
        ext[2] = i == 0 || set->tgt_len[i] < ext[2] ? set->tgt_len[i] : ext[2];
    }
}

int ids_write(const char *path, const IdsPairs *set, const IdsPrint *print, Err *e)
{
    unsigned char h[IDS_HEADER] = {0};
    memcpy(h, IDS_MAGIC, 8);
    put_u32(h + AT_VERSION, IDS_VERSION);
    uint64_t nids = 0;
    for (int i = 0; i < set->n; i++)
        nids += (uint64_t)set->src_len[i] + (uint64_t)set->tgt_len[i];
    put_u64(h + AT_PAIRS, (uint64_t)set->n);
    put_u64(h + AT_IDS, nids);
    put_u32(h + AT_PRINT, print->vocab[0]);
    put_u32(h + AT_PRINT + 4, print->vocab[1]);
    put_u32(h + AT_PRINT + 8, print->bpe[0]);
    put_u32(h + AT_PRINT + 12, print->bpe[1]);
    int ext[3];
    extent(set, ext);
    for (int k = 0; k < 3; k++)
        put_u32(h + AT_EXTENT + 4 * k, (uint32_t)ext[k]);
    put_u32(h + AT_BLOCK, IDS_BLOCK);

    size_t nblocks = (size_t)((body_bytes((uint64_t)set->n, nids) + IDS_BLOCK - 1) / IDS_BLOCK);
    BlockSums sums = {.crc = xmalloc_array(nblocks, sizeof(uint32_t))};
    emit_body(set, block_sink, &sums);
    if (sums.fill)
        sums.crc[sums.k++] = sums.cur;
    CHECK(sums.k == nblocks);
    unsigned char *table = xmalloc_array(nblocks ? nblocks : 1, 4);
    for (size_t k = 0; k < nblocks; k++)
        put_u32(table + 4 * k, sums.crc[k]);
    free(sums.crc);
    uint32_t crc = crc32_update(0, h + AT_PAIRS, IDS_HEADER - AT_PAIRS);
    put_u32(h + AT_CRC, crc32_update(crc, table, 4 * nblocks));

    AtomicFile af;
    int rc = atomic_open(&af, path, e);
    if (rc == 0 && (fwrite(h, 1, sizeof h, af.fp) != sizeof h || emit_body(set, file_sink, af.fp) != 0 ||
                    fwrite(table, 1, 4 * nblocks, af.fp) != 4 * nblocks)) {
        err_set(e, "%s: cannot write: %s", path, strerror(errno));
        atomic_abort(&af);
        rc = -1;
    } else if (rc == 0) {
        rc = atomic_commit(&af, e);
    }
    free(table);
    return rc;
}

int ids_view(IdsView *v, const void *data, size_t len, const char *name, Err *e)
{
    memset(v, 0, sizeof *v);
    const unsigned char *d = data;
    size_t m = len < 8 ? len : 8;
    if (memcmp(d, IDS_MAGIC, m) != 0)
        return err_set(e, "%s: not an s2s ids file (no \"s2s-ids\" magic)" AGAIN, name);
    if (len < AT_CRC)
        return err_set(e, "%s: truncated (%zu bytes, the header alone has %u)" AGAIN, name, len,
                       IDS_HEADER);
    uint32_t ver = get_u32(d + AT_VERSION);
    if (ver != IDS_VERSION)
        return err_set(e, "%s: format version %u; this s2s reads version %u" AGAIN, name, ver,
                       IDS_VERSION);
    if (len < IDS_HEADER)
        return err_set(e, "%s: truncated (%zu bytes, the header alone has %u)" AGAIN, name, len,
                       IDS_HEADER);
    uint32_t block = get_u32(d + AT_BLOCK);
    if (block != IDS_BLOCK)
        return err_set(e, "%s: checksum blocks of %u bytes; this s2s reads blocks of %u" AGAIN, name,
                       block, IDS_BLOCK);
    uint64_t n = get_u64(d + AT_PAIRS), nids = get_u64(d + AT_IDS);
    /* the sizes below without overflow: both counts far below 2^60 */
    if (n > ((uint64_t)1 << 40) || nids > ((uint64_t)1 << 50))
        return err_set(e, "%s: the header's counts (%llu pairs, %llu ids) are impossible" AGAIN,
                       name, (unsigned long long)n, (unsigned long long)nids);
    uint64_t body = body_bytes(n, nids), nblocks = (body + IDS_BLOCK - 1) / IDS_BLOCK;
    uint64_t want = IDS_HEADER + body + 4 * nblocks;
    if ((uint64_t)len < want)
        return err_set(e, "%s: truncated (%zu bytes, the header says %llu)" AGAIN, name, len,
                       (unsigned long long)want);
    if ((uint64_t)len > want)
        return err_set(e, "%s: %zu bytes, the header says %llu" AGAIN, name, len,
                       (unsigned long long)want);
    if (n > (uint64_t)INT32_MAX)
        return err_set(e, "%s: %llu pairs, more than training takes (%d)", name,
                       (unsigned long long)n, INT32_MAX);
    v->data = d;
    v->name = name;
    v->len = len;
    v->n = (size_t)n;
    v->nids = (size_t)nids;
    v->nblocks = (size_t)nblocks;
    v->crc = get_u32(d + AT_CRC);
    for (int s = 0; s < 2; s++) {
        v->print.vocab[s] = get_u32(d + AT_PRINT + 4 * s);
        v->print.bpe[s] = get_u32(d + AT_PRINT + 8 + 4 * s);
    }
    uint32_t ext[3];
    for (int k = 0; k < 3; k++)
        ext[k] = get_u32(d + AT_EXTENT + 4 * k);
    /* checked by ids_open, after the checksum */
    v->max_src = ext[0] > IDS_MAX_LEN ? -1 : (int)ext[0];
    v->max_tgt = ext[1] > IDS_MAX_LEN ? -1 : (int)ext[1];
    v->min_tgt = ext[2] > IDS_MAX_LEN ? -1 : (int)ext[2];
    v->off = d + IDS_HEADER;
    v->ids = (const int32_t *)(const void *)(d + IDS_HEADER + 8 * (2 * n + 1));
    v->table = d + IDS_HEADER + body;
    return 0;
}

int ids_open(IdsView *v, const IdsPrint *want, const size_t nvocab[2], Err *e)
{
    const char *name = v->name;
    /* The checksum first: a damaged file is reported as such. */
    uint32_t crc = crc32_update(0, v->data + AT_PAIRS, IDS_HEADER - AT_PAIRS);
    crc = crc32_update(crc, v->table, 4 * v->nblocks);
    if (crc != v->crc)
        return err_set(e, "%s: checksum mismatch (the file is damaged)" AGAIN, name);
    static const char *const vf[2] = {"vocab.src", "vocab.tgt"}, *const bf[2] = {"bpe.src", "bpe.tgt"};
    /* the codes first: other codes make other vocabularies */
    for (int s = 0; s < 2; s++)
        if (v->print.bpe[s] != want->bpe[s])
            return err_set(e, "%s: encoded %s %s" AGAIN, name,
                           !v->print.bpe[s] ? "without subword codes, but the directory has"
                           : want->bpe[s]   ? "with other subword codes than"
                                            : "with subword codes, but the directory has no",
                           bf[s]);
    for (int s = 0; s < 2; s++)
        if (v->print.vocab[s] != want->vocab[s])
            return err_set(e, "%s: encoded with another vocabulary than %s" AGAIN, name, vf[s]);
    bool none = v->n == 0;
    if (none ? v->max_src || v->max_tgt || v->min_tgt
             : v->max_src < 1 || v->max_tgt < 1 || v->min_tgt < 1 || v->min_tgt > v->max_tgt ||
                   (uint64_t)v->max_src + (uint64_t)v->max_tgt > v->nids)
        return err_set(e, "%s: the header's longest source and target (%d, %d) and shortest target "
                          "(%d) are impossible" AGAIN, name, v->max_src, v->max_tgt, v->min_tgt);
    v->nvocab[0] = nvocab[0];
    v->nvocab[1] = nvocab[1];
    v->checked = xcalloc(v->nblocks / 8 + 1, 1);
    return 0;
}

void ids_release(IdsView *v)
{
    if (v->mapped)
        madvise((void *)(uintptr_t)v->data, v->len, MADV_DONTNEED);
}

void ids_close(IdsView *v)
{
    free(v->checked);
    v->checked = NULL;
}

/* Checks the blocks holding body bytes [lo, hi), each once. */
static int check_blocks(IdsView *v, size_t lo, size_t hi, Err *e)
{
    const unsigned char *body = v->data + IDS_HEADER;
    size_t len = (size_t)(v->table - body);
    for (size_t k = lo / IDS_BLOCK; k * IDS_BLOCK < hi; k++) {
        if (v->checked[k / 8] & (1u << (k % 8)))
            continue;
        size_t at = k * IDS_BLOCK, m = len - at < IDS_BLOCK ? len - at : IDS_BLOCK;
        if (crc32_update(0, body + at, m) != get_u32(v->table + 4 * k))
            return err_set(e, "%s: bytes %zu..%zu: checksum mismatch (the file is damaged)" AGAIN,
                           v->name, IDS_HEADER + at, IDS_HEADER + at + m);
        v->checked[k / 8] |= (unsigned char)(1u << (k % 8));
    }
    return 0;
}

int ids_pair_check(IdsView *v, size_t i, Err *e)
{
    CHECK(v->checked && i < v->n);
    if (check_blocks(v, 16 * i, 16 * i + 24, e) != 0)
        return -1;
    static const char *const side_name[2] = {"source", "target"};
    const int most[2] = {v->max_src, v->max_tgt};
    uint64_t at[3];
    for (int k = 0; k < 3; k++)
        at[k] = ids_off(v, 2 * i + (size_t)k);
    for (int s = 0; s < 2; s++)
        if (at[s + 1] <= at[s] || at[s + 1] - at[s] > (uint64_t)most[s] || at[s + 1] > v->nids ||
            (s == 1 && at[2] - at[1] < (uint64_t)v->min_tgt))
            return err_set(e, "%s: pair %zu: the %s offsets %llu..%llu are out of order or out of "
                              "range" AGAIN, v->name, i + 1, side_name[s], (unsigned long long)at[s],
                           (unsigned long long)at[s + 1]);
    size_t ids_at = 8 * (2 * v->n + 1);
    if (check_blocks(v, ids_at + 4 * (size_t)at[0], ids_at + 4 * (size_t)at[2], e) != 0)
        return -1;
    for (int s = 0; s < 2; s++)
        for (uint64_t j = at[s]; j < at[s + 1]; j++) {
            int32_t id = v->ids[j];
            if (id < 0 || (size_t)id >= v->nvocab[s])
                return err_set(e, "%s: pair %zu: %s id %ld outside the vocabulary (%zu entries)" AGAIN,
                               v->name, i + 1, side_name[s], (long)id, v->nvocab[s]);
        }
    return 0;
}

int ids_map(IdsMap *m, const char *path, const IdsPrint *want, const size_t nvocab[2], Err *e)
{
    memset(m, 0, sizeof *m);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT)
            return 1;
        return err_set(e, "%s: cannot open: %s", path, strerror(errno));
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        int rc = err_set(e, "%s: not a regular file" AGAIN, path);
        close(fd);
        return rc;
    }
    size_t len = (size_t)st.st_size;
    void *base = len ? mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0) : NULL;
    int mapped_errno = errno;
    close(fd);
    if (len && base == MAP_FAILED)
        return err_set(e, "%s: cannot map: %s", path, strerror(mapped_errno));
    if (len) { /* pairs are read in a shuffled order: no read-ahead around each one */
        madvise(base, len, MADV_RANDOM);
        file_map_watch(base, len, path, "files written before are whole: prepare the data again, then --resume");
    }
    m->base = base;
    m->len = len;
    m->path = xstrdup(path);
    static const unsigned char none[1];
    if (ids_view(&m->view, len ? base : none, len, m->path, e) != 0 ||
        ids_open(&m->view, want, nvocab, e) != 0) {
        ids_unmap(m);
        return -1;
    }
    m->view.mapped = len > 0;
    return 0;
}

void ids_unmap(IdsMap *m)
{
    ids_close(&m->view);
    if (m->base)
        file_unmap(m->base, m->len);
    free(m->path);
    memset(m, 0, sizeof *m);
}
