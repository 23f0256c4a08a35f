/* The subword step of s2s prepare: BPE codes learned on the training split or read
   from files, the pairs rewritten as units, the codes files written (prepare_bpe.h). */
#include "data/prepare_bpe.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/file.h"
#include "text/split.h"
#include "text/vocab.h"

const char *const prepare_bpe_files[2] = {"bpe.src", "bpe.tgt"};

/* Learns the merges on the training pairs (one list for both sides with --joint). */
static void learn(PrepareBpe *pb, const PrepareOpts *o, const Buf *arena, const TokPair *tp,
                  const size_t *kept, const uint8_t *split, size_t n_kept)
{
    double t0 = clock_now();
    VocabCounter *vc[2] = {vocab_counter_new(), o->joint ? NULL : vocab_counter_new()};
    for (size_t j = 0; j < n_kept; j++) {
        if (split[j] != SPLIT_TRAIN)
            continue;
        const TokPair *t = &tp[kept[j]];
        vocab_counter_add_line(vc[0], arena->data + t->soff, t->slen);
        vocab_counter_add_line(vc[o->joint ? 0 : 1], arena->data + t->toff, t->tlen);
    }
    for (int s = 0; s < (o->joint ? 1 : 2); s++) {
        BpeLearnStats st;
        pb->bpe[s] = bpe_learn(vc[s], o->bpe, (uint64_t)o->bpe_min_freq, &st);
        if (s == 0 || st.merges < pb->st.merges)
            pb->st = st;
    }
    if (o->joint) {
        pb->bpe[1] = pb->bpe[0];
        pb->shared = true;
    }
    vocab_counter_free(vc[0]);
    vocab_counter_free(vc[1]);
    pb->seconds = clock_now() - t0;
}

/* Every kept pair as units, into a new arena that replaces *arena. */
static void segment(const PrepareBpe *pb, Buf *arena, TokPair *tp, const size_t *kept, size_t n_kept)
{
    Buf units = {0};
    buf_reserve(&units, arena->len + arena->len / 2);
    for (size_t j = 0; j < n_kept; j++) {
        TokPair *t = &tp[kept[j]];
        for (int s = 0; s < 2; s++) {
            size_t off = s ? t->toff : t->soff, len = s ? t->tlen : t->slen, at = units.len;
            if (pb->bpe[s])
                bpe_segment_line(pb->bpe[s], arena->data + off, len, &units);
            else
                buf_append(&units, arena->data + off, len);
            CHECK(units.len - at < UINT32_MAX);
            if (s) {
                t->toff = at;
                t->tlen = (uint32_t)(units.len - at);
            } else {
                t->soff = at;
                t->slen = (uint32_t)(units.len - at);
            }
            buf_putc(&units, '\0');
        }
    }
    buf_free(arena);
    *arena = units;
}

/* A copy of each side's codes of the model (the text of its codes, parsed again). */
static void copy_codes(PrepareBpe *pb, const PrepareLike *like)
{
    Buf b = {0};
    Err e;
    for (int s = 0; s < 2; s++) {
        if (!like->bpe[s])
            continue;
        buf_clear(&b);
        bpe_format(like->bpe[s], &b);
        if (bpe_parse(&pb->bpe[s], like->name, b.data, b.len, &e) != 0)
            BUG("the codes of %s do not parse again: %s", like->name, e.msg);
    }
    buf_free(&b);
}

int prepare_bpe(PrepareBpe *pb, const PrepareOpts *o, Buf *arena, TokPair *tp, const size_t *kept,
                const uint8_t *split, size_t n_kept, Err *e)
{
    memset(pb, 0, sizeof *pb);
    if (o->like) {
        copy_codes(pb, o->like);
    } else if (o->bpe) {
        learn(pb, o, arena, tp, kept, split, n_kept);
    } else {
        for (int s = 0; s < 2; s++)
            if (o->bpe_codes[s] && bpe_load(&pb->bpe[s], o->bpe_codes[s], e) != 0) {
                prepare_bpe_free(pb);
                return -1;
            }
    }
    if (pb->bpe[0] || pb->bpe[1])
        segment(pb, arena, tp, kept, n_kept);
    return 0;
}

void prepare_bpe_put_options(JsonWriter *w, const PrepareOpts *o)
{
    if (o->like)
        return; /* the model's codes: "model" says whose */
    if (!o->bpe && !o->bpe_codes[0] && !o->bpe_codes[1] && !o->joint)
        return;
    json_put_int(w, "bpe", o->bpe);
    json_put_int(w, "bpe_min_freq", o->bpe_min_freq);
    json_put_bool(w, "joint", o->joint);
    json_open_array_line(w, "bpe_codes");
    for (int s = 0; s < 2; s++)
        json_put_str_or_null(w, NULL, o->bpe_codes[s]);
    json_close(w);
}

void prepare_bpe_put_merges(JsonWriter *w, const PrepareBpe *pb)
{
    if (!pb->bpe[0] && !pb->bpe[1])
        return;
    json_open_object_line(w, "bpe");
    for (int s = 0; s < 2; s++) {
        const char *key = s ? "target" : "source";
        if (pb->bpe[s])
            json_put_uint(w, key, bpe_merges(pb->bpe[s]));
        else
            json_put_null(w, key);
    }
    json_close(w);
}

int prepare_bpe_write(const PrepareBpe *pb, const char *dir, Err *e)
{
    for (int s = 0; s < 2; s++) {
        char *path = path_join(dir, prepare_bpe_files[s]);
        int rc = 0;
        if (pb->bpe[s])
            rc = bpe_save(pb->bpe[s], path, e);
        else if (unlink(path) != 0 && errno != ENOENT)
            rc = err_set(e, "%s: cannot remove: %s", path, strerror(errno));
        free(path);
        if (rc != 0)
            return -1;
    }
    return 0;
}

void prepare_bpe_summary(const PrepareBpe *pb, const PrepareOpts *o, Buf *summary)
{
    if (!o->bpe)
        return;
    buf_printf(summary, "prepare: BPE: %ld merges learned %s in %.2f s", pb->st.merges,
               o->joint ? "on both sides together" : "per side", pb->seconds);
    if (pb->st.stop == BPE_STOP_MIN_FREQ)
        buf_printf(summary, " (stopped: no pair seen %ld times or more)", o->bpe_min_freq);
    else if (pb->st.stop == BPE_STOP_NO_PAIRS)
        buf_puts(summary, " (stopped: every word is one symbol)");
    buf_putc(summary, '\n');
}

void prepare_bpe_free(PrepareBpe *pb)
{
    bpe_free(pb->bpe[0]);
    if (!pb->shared)
        bpe_free(pb->bpe[1]);
    memset(pb, 0, sizeof *pb);
}
