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

/* Header: magic[8], version u32, crc u32 (of every byte after it: the rest of the
   header and the body), pairs u64, ids u64, vocab.src, vocab.tgt, bpe.src, bpe.tgt
   fingerprints u32 each, 16 zero bytes. Then the offsets and the ids. */
enum { AT_VERSION = 8, AT_CRC = 12, AT_PAIRS = 16, AT_IDS = 24, AT_PRINT = 32 };

#define AGAIN "; run 's2s prepare' again to rewrite it"
#define BLOCK ((size_t)16 << 20) /* bytes checked (and released) at a time */

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

static int emit_body(const PairSet *s, Sink sink, void *ctx)
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

static int crc_sink(void *ctx, const unsigned char *p, size_t n)
{
    uint32_t *crc = ctx;
    *crc = crc32_update(*crc, p, n);
    return 0;
}

static int file_sink(void *ctx, const unsigned char *p, size_t n)
{
    return fwrite(p, 1, n, (FILE *)ctx) == n ? 0 : -1;
}

int ids_write(const char *path, const PairSet *set, const IdsPrint *print, Err *e)
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
    uint32_t crc = crc32_update(0, h + AT_PAIRS, IDS_HEADER - AT_PAIRS);
    emit_body(set, crc_sink, &crc);
    put_u32(h + AT_CRC, crc);

    AtomicFile af;
    if (atomic_open(&af, path, e) != 0)
        return -1;
    if (fwrite(h, 1, sizeof h, af.fp) != sizeof h || emit_body(set, file_sink, af.fp) != 0) {
        err_set(e, "%s: cannot write: %s", path, strerror(errno));
        atomic_abort(&af);
        return -1;
    }
    return atomic_commit(&af, e);
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
    uint64_t n = get_u64(d + AT_PAIRS), nids = get_u64(d + AT_IDS);
    /* 64 + 8 (2n + 1) + 4 nids, without overflow: both counts far below 2^60 */
    if (n > ((uint64_t)1 << 40) || nids > ((uint64_t)1 << 50))
        return err_set(e, "%s: the header's counts (%llu pairs, %llu ids) are impossible" AGAIN,
                       name, (unsigned long long)n, (unsigned long long)nids);
    uint64_t want = IDS_HEADER + 8 * (2 * n + 1) + 4 * nids;
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
    v->crc = get_u32(d + AT_CRC);
    for (int s = 0; s < 2; s++) {
        v->print.vocab[s] = get_u32(d + AT_PRINT + 4 * s);
        v->print.bpe[s] = get_u32(d + AT_PRINT + 8 + 4 * s);
    }
    v->off = d + IDS_HEADER;
    v->ids = (const int32_t *)(const void *)(d + IDS_HEADER + 8 * (2 * n + 1));
    return 0;
}

/* Hands back the whole pages of [*mark, upto) of a mapping (see ids_check). */
static void release_to(const IdsView *v, size_t *mark, size_t upto)
{
    static long page;
    if (!page)
        page = sysconf(_SC_PAGESIZE);
    size_t start = *mark / (size_t)page * (size_t)page, end = upto / (size_t)page * (size_t)page;
    if (end > start) {
        madvise((void *)(uintptr_t)(v->data + start), end - start, MADV_DONTNEED);
        *mark = end;
    }
}

int ids_check(const IdsView *v, const IdsPrint *want, const size_t nvocab[2], int *src_len,
              int *tgt_len, bool release, Err *e)
{
    const char *name = v->name;
    /* The checksum first: a damaged file is reported as such. */
    uint32_t crc = 0;
    size_t mark = 0;
    for (size_t at = AT_PAIRS; at < v->len;) {
        size_t k = v->len - at < BLOCK ? v->len - at : BLOCK;
        crc = crc32_update(crc, v->data + at, k);
        at += k;
        if (release)
            release_to(v, &mark, at);
    }
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
    /* Offsets and ids, both read in order; the pages behind are released. */
    uint64_t prev = get_u64(v->off);
    if (prev != 0)
        return err_set(e, "%s: the first offset is %llu, not 0" AGAIN, name, (unsigned long long)prev);
    size_t omark = 0, imark = (size_t)((const unsigned char *)v->ids - v->data);
    for (size_t i = 0; i < v->n; i++) {
        for (int side = 0; side < 2; side++) {
            uint64_t next = get_u64(v->off + 8 * (2 * i + 1 + (size_t)side));
            if (next <= prev || next - prev > IDS_MAX_LEN || next > v->nids)
                return err_set(e, "%s: pair %zu: the %s offsets %llu..%llu are out of order or "
                                  "out of range" AGAIN, name, i + 1, side ? "target" : "source",
                               (unsigned long long)prev, (unsigned long long)next);
            for (uint64_t j = prev; j < next; j++) {
                int32_t id = v->ids[j];
                if (id < 0 || (size_t)id >= nvocab[side])
                    return err_set(e, "%s: pair %zu: %s id %ld outside the vocabulary (%zu entries)"
                                   AGAIN, name, i + 1, side ? "target" : "source", (long)id,
                                   nvocab[side]);
            }
            int len = (int)(next - prev);
            if (side == 0 && src_len)
                src_len[i] = len;
            if (side == 1 && tgt_len)
                tgt_len[i] = len;
            prev = next;
        }
        if (release && (i & 0xffff) == 0xffff) {
            release_to(v, &omark, (size_t)(v->off - v->data) + 8 * (2 * i + 3));
            release_to(v, &imark, (size_t)((const unsigned char *)(v->ids + prev) - v->data));
        }
    }
    if (prev != v->nids)
        return err_set(e, "%s: the offsets end at %llu, the header says %zu ids" AGAIN, name,
                       (unsigned long long)prev, v->nids);
    if (release) {
        release_to(v, &omark, (size_t)((const unsigned char *)v->ids - v->data));
        release_to(v, &imark, v->len);
    }
    return 0;
}

int ids_map(IdsMap *m, const char *path, const IdsPrint *want, const size_t nvocab[2],
            int **src_len, int **tgt_len, Err *e)
{
    memset(m, 0, sizeof *m);
    *src_len = *tgt_len = NULL;
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
    m->base = base;
    m->len = len;
    static const unsigned char none[1];
    if (ids_view(&m->view, len ? base : none, len, path, e) != 0)
        goto fail;
    *src_len = XNEW(int, m->view.n ? m->view.n : 1);
    *tgt_len = XNEW(int, m->view.n ? m->view.n : 1);
    if (ids_check(&m->view, want, nvocab, *src_len, *tgt_len, true, e) != 0)
        goto fail;
    return 0;
fail:
    free(*src_len);
    free(*tgt_len);
    *src_len = *tgt_len = NULL;
    ids_unmap(m);
    return -1;
}

void ids_unmap(IdsMap *m)
{
    if (m->base)
        munmap(m->base, m->len);
    memset(m, 0, sizeof *m);
}
