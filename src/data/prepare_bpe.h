/*
 * The subword step of `s2s prepare` (prepare_run): learns BPE merges on the training
 * split (--bpe N, --bpe-min-freq K, --joint) or reads codes files (--bpe-codes),
 * rewrites the tokenized pairs as subword units, and writes the codes to DIR/bpe.src
 * and DIR/bpe.tgt (the same content twice with --joint or one --bpe-codes file).
 */
#ifndef S2S_DATA_PREPARE_BPE_H
#define S2S_DATA_PREPARE_BPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/err.h"
#include "base/json.h"
#include "data/prepare.h"
#include "text/bpe.h"

/* One pair after tokenization: its tokens live in an arena, each side followed by a
   NUL byte. */
typedef struct TokPair {
    size_t soff, toff;
    uint32_t slen, tlen; /* bytes */
    uint32_t sn, tn;     /* tokens */
} TokPair;

/* The codes files of a prepared directory (source, target). */
extern const char *const prepare_bpe_files[2];

typedef struct PrepareBpe {
    Bpe *bpe[2];        /* source, target; NULL: words */
    bool shared;        /* bpe[1] is bpe[0] (learned jointly) */
    BpeLearnStats st;   /* of the learning, when learned */
    double seconds;     /* learning time */
} PrepareBpe;

/* Nothing to do unless o asks for BPE. Otherwise learns the merges on the training
   pairs (split[j] == SPLIT_TRAIN for kept[j]) or loads the codes files, and replaces
   each kept pair's tokens in *arena by its units (tp[kept[j]]'s offsets and byte
   lengths change; the token counts sn, tn stay those of the words). Returns 0, or -1
   with e set ("FILE:LINE: ..." for a codes file). */
int prepare_bpe(PrepareBpe *pb, const PrepareOpts *o, Buf *arena, TokPair *tp, const size_t *kept,
                const uint8_t *split, size_t n_kept, Err *e);
/* The report's options when o asks for subwords or --joint, as members of the open
   "options" object: "bpe": N, "bpe_min_freq": K, "joint": B, "bpe_codes": [SRC, TGT]
   (null for a side without a codes file; the array on one line). Nothing otherwise. */
void prepare_bpe_put_options(JsonWriter *w, const PrepareOpts *o);
/* The report's member "bpe": {"source": N, "target": N} (on one line) when a side has
   codes: N the number of merges of a side, null for a side of words. */
void prepare_bpe_put_merges(JsonWriter *w, const PrepareBpe *pb);
/* Writes DIR/bpe.src and DIR/bpe.tgt, or removes them when the sides are words. */
int prepare_bpe_write(const PrepareBpe *pb, const char *dir, Err *e);
/* The summary line, when merges were learned. */
void prepare_bpe_summary(const PrepareBpe *pb, const PrepareOpts *o, Buf *summary);
void prepare_bpe_free(PrepareBpe *pb);

#endif
