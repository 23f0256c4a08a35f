/* A split's token ids as one binary file (SPLIT.ids of a prepared directory; the
   layout is in docs/model.md): written by `s2s prepare`, mapped read-only by training
   so that the ids are not recomputed from the text and do not live on the heap. */
#ifndef S2S_DATA_IDS_H
#define S2S_DATA_IDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "data/batch.h"

#define IDS_MAGIC "s2s-ids\n" /* 8 bytes, no NUL */
#define IDS_VERSION 1u
#define IDS_HEADER 64u
#define IDS_MAX_LEN 100000 /* tokens of one side, as prepared_load allows */

/* What the ids were encoded with: the CRC-32 of vocab_format of each side's
   vocabulary and of bpe_format of each side's codes (0: no codes on that side). */
typedef struct IdsPrint {
    uint32_t vocab[2];
    uint32_t bpe[2];
} IdsPrint;

/* A checked view of a file's bytes: pair i's source is ids[off[2i] .. off[2i+1]), its
   target ids[off[2i+1] .. off[2i+2]), the offsets stored as little-endian uint64. */
typedef struct IdsView {
    const unsigned char *data;
    const char *name; /* for messages; not owned */
    size_t len;
    size_t n, nids;
    IdsPrint print;
    uint32_t crc;
    const unsigned char *off; /* (2n + 1) × 8 bytes */
    const int32_t *ids;       /* (nids) */
} IdsView;

/* Writes set (every pair with both sides) to path atomically. */
int ids_write(const char *path, const PairSet *set, const IdsPrint *print, Err *e);

/* Reads the header of len bytes at data (name, kept, for messages): magic, version, and a
   size that matches the counts. Fills v; the body is not read. */
int ids_view(IdsView *v, const void *data, size_t len, const char *name, Err *e);

/* Checks the body of a view: the checksum, the fingerprint against want, offsets that
   start at 0, grow, give every side 1 to IDS_MAX_LEN ids and end at nids, and every id
   below its side's vocabulary size (nvocab[0] source, nvocab[1] target). Fills
   src_len and tgt_len (n each) when not NULL. With release, the pages it has read are
   handed back as it goes (madvise), so that checking a mapped file does not keep it
   resident. Messages name the file and the fault and say to run `s2s prepare` again. */
int ids_check(const IdsView *v, const IdsPrint *want, const size_t nvocab[2], int *src_len,
              int *tgt_len, bool release, Err *e);

/* A file mapped read-only. */
typedef struct IdsMap {
    void *base;
    size_t len;
    IdsView view;
} IdsMap;

/* Maps path and checks it as ids_view and ids_check do (lengths into src_len and
   tgt_len, n entries each, allocated here; the caller frees them). Returns 0, 1 when
   the file does not exist (a directory prepared before .ids files: nothing set), or
   -1. */
int ids_map(IdsMap *m, const char *path, const IdsPrint *want, const size_t nvocab[2],
            int **src_len, int **tgt_len, Err *e);
void ids_unmap(IdsMap *m);

#endif
