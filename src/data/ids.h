/* A split's token ids as one binary file (SPLIT.ids of a prepared directory; the
   layout is in docs/model.md): written by `s2s prepare`, mapped read-only by training
   so that the ids are not recomputed from the text and do not live on the heap. Opening
   one reads its header and its table of block checksums only; each pair is checked
   (the checksums of the blocks it lies in, its offsets, its ids) when it is first
   read, so that start-up does not grow with the file. */
#ifndef S2S_DATA_IDS_H
#define S2S_DATA_IDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

#define IDS_MAGIC "s2s-ids\n" /* 8 bytes, no NUL */
#define IDS_VERSION 2u
#define IDS_HEADER 64u
#define IDS_BLOCK 4096u      /* bytes of the body under one checksum of the table */
#define IDS_MAX_LEN 100000   /* tokens of one side, as prepared_load allows */

/* What the ids were encoded with: the CRC-32 of vocab_format of each side's
   vocabulary and of bpe_format of each side's codes (0: no codes on that side). */
typedef struct IdsPrint {
    uint32_t vocab[2];
    uint32_t bpe[2];
} IdsPrint;

/* A view of a file's bytes: pair i's source is ids[off[2i] .. off[2i+1]), its target
   ids[off[2i+1] .. off[2i+2]) (the offsets little-endian uint64, read in place on a
   little-endian host). The body (offsets and ids) is cut into blocks of IDS_BLOCK bytes
   whose CRC-32s follow it, one uint32 each. */
typedef struct IdsView {
    const unsigned char *data;
    const char *name; /* for messages; not owned */
    size_t len;
    size_t n, nids, nblocks;
    IdsPrint print;
    uint32_t crc;
    int max_src, max_tgt, min_tgt; /* as the header records them */
    const unsigned char *off;      /* (2n + 1) × 8 bytes */
    const int32_t *ids;            /* (nids) */
    const unsigned char *table;    /* (nblocks) × 4 bytes */
    bool mapped; /* data is a file mapping of its own (ids_map) */
    /* set by ids_open: */
    size_t nvocab[2];
    unsigned char *checked; /* one bit a block: its checksum was found right */
} IdsView;

/* Pairs in memory to write: pair i is src[i][0..src_len[i]) -> tgt[i][0..tgt_len[i])
   (the arrays of a Split, data/prepared.h). */
typedef struct IdsPairs {
    int n;
    int *const *src;
    const int *src_len;
    int *const *tgt;
    const int *tgt_len;
} IdsPairs;

/* Writes set (every pair with both sides) to path atomically. */
int ids_write(const char *path, const IdsPairs *set, const IdsPrint *print, Err *e);

/* Reads the header of len bytes at data (name, kept, for messages): magic, version, and a
   size that matches the counts. Fills v; nothing after the header is read. */
int ids_view(IdsView *v, const void *data, size_t len, const char *name, Err *e);

/* Checks what start-up needs: the header's checksum (over the header and the table of
   block checksums), the fingerprint against want, and extents the header records that
   are possible; then pairs can be checked against nvocab (nvocab[0] source, nvocab[1]
   target). Messages name the file and the fault and say to run `s2s prepare` again. */
int ids_open(IdsView *v, const IdsPrint *want, const size_t nvocab[2], Err *e);

/* Checks pair i before it is read: the checksums of the blocks holding its offsets and
   its ids (each block once), offsets that grow, give each side 1 to its recorded
   longest ids and stay within the ids, and every id below its side's vocabulary size.
   The message names the file, the pair (or the block) and the fault. */
int ids_pair_check(IdsView *v, size_t i, Err *e);

/* Offset k (0 .. 2n) of the view. */
static inline uint64_t ids_off(const IdsView *v, size_t k)
{
    const unsigned char *p = v->off + 8 * k;
    uint64_t x = 0;
    for (int b = 7; b >= 0; b--)
        x = x << 8 | p[b];
    return x;
}

/* Hands back the pages of a mapped view read so far (madvise): they stay in the page
   cache, and a later read maps them again. Nothing for a view of other memory. */
void ids_release(IdsView *v);

/* Frees what ids_open allocated. */
void ids_close(IdsView *v);

/* A file mapped read-only. */
typedef struct IdsMap {
    void *base;
    size_t len;
    char *path; /* the view's name */
    IdsView view;
} IdsMap;

/* Maps path and opens it as ids_view and ids_open do. Returns 0, 1 when the file does
   not exist (a directory prepared before .ids files: nothing set), or -1. */
int ids_map(IdsMap *m, const char *path, const IdsPrint *want, const size_t nvocab[2], Err *e);
void ids_unmap(IdsMap *m);

#endif
