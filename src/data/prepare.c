/* s2s prepare as a library call: corpus → train/valid/test splits, vocabularies and a
   report, written to a directory (see src/text/split.h for the file names). */
#include "data/prepare.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/file.h"
#include "data/outside.h"
#include "data/prepare_bpe.h"
#include "data/prepared.h"
#include "text/split.h"
#include "text/tokenize.h"
#include "text/vocab.h"

PrepareOpts prepare_opts_default(void)
{
    return (PrepareOpts){.direction = DIRECTION_EN_FR, .valid = -1, .test = -1, .seed = 1, .min_freq = 0,
                         .max_len = 50, .keep_case = true, .bpe_min_freq = 2};
}

/* The directory that holds path: "." for "x", "/" for "/x", "a" for "a/b/". */
static char *parent_dir(const char *path)
{
    size_t n = strlen(path);
    while (n > 1 && path[n - 1] == '/')
        n--;
    while (n > 0 && path[n - 1] != '/')
        n--;
    if (n == 0)
        return xstrdup(".");
    while (n > 1 && path[n - 1] == '/')
        n--;
    return xstrndup(path, n);
}

/* The names prepare writes in DIR, k < OUTPUT_NAMES: the files of prepared_files, the
   splits' ids, the codes files. */
enum { OUTPUT_NAMES = PREPARED_NFILES + SPLIT_COUNT + 2 };

static const char *output_name(size_t k)
{
    if (k < PREPARED_NFILES)
        return prepared_files[k];
    k -= PREPARED_NFILES;
    return k < SPLIT_COUNT ? prepared_ids_files[k] : prepare_bpe_files[k - SPLIT_COUNT];
}

/* An absent DIR is created with its missing parents: the nearest existing one must be
   a directory. */
static int check_creatable(const char *dir, Err *e)
{
    struct stat st;
    char *parent = parent_dir(dir);
    int rc = 0;
    while (stat(parent, &st) != 0 && errno == ENOENT && strcmp(parent, ".") != 0 &&
           strcmp(parent, "/") != 0) {
        char *up = parent_dir(parent);
        free(parent);
        parent = up;
    }
    if (stat(parent, &st) != 0)
        rc = err_set(e, "%s: cannot create directory: %s", dir, strerror(errno));
    else if (!S_ISDIR(st.st_mode))
        rc = err_set(e, "%s: cannot create directory: %s", dir, strerror(ENOTDIR));
    free(parent);
    return rc;
}

/* An existing DIR may hold nothing but our outputs; the error names the least (bytewise)
   other entry. */
static int check_only_outputs(const char *dir, Err *e)
{
    DIR *d = opendir(dir);
    if (!d)
        return err_set(e, "%s: cannot open directory: %s", dir, strerror(errno));
    char *other = NULL;
    struct dirent *de;
    while ((de = readdir(d))) {
        const char *n = de->d_name;
        if (strcmp(n, ".") == 0 || strcmp(n, "..") == 0)
            continue;
        bool ours = false;
        for (size_t k = 0; k < OUTPUT_NAMES; k++)
            ours = ours || strcmp(n, output_name(k)) == 0;
        if (!ours && (!other || strcmp(n, other) < 0)) {
            free(other);
            other = xstrdup(n);
        }
    }
    closedir(d);
    if (other) {
        err_set(e, "%s: directory holds files other than prepare's outputs (such as '%s'); "
                   "use an empty or new directory", dir, other);
        free(other);
        return -1;
    }
    return 0;
}

/* DIR may be absent (its parent must exist), or a directory holding only our outputs,
   none of which is the corpus itself (the same file under any name). */
static int check_outdir(const char *dir, const char *const *inputs, size_t n_inputs, Err *e)
{
    for (size_t k = 0; k < OUTPUT_NAMES; k++) {
        char *out = path_join(dir, output_name(k));
        int rc = file_check_not_input(out, "-o", inputs, n_inputs, e);
        free(out);
        if (rc != 0)
            return -1;
    }
    struct stat st;
    if (stat(dir, &st) != 0) {
        if (errno != ENOENT && errno != ENOTDIR)
            return err_set(e, "%s: %s", dir, strerror(errno));
        return check_creatable(dir, e);
    }
    if (!S_ISDIR(st.st_mode))
        return err_set(e, "%s: exists and is not a directory", dir);
    return check_only_outputs(dir, e);
}

/* The .ids files of an earlier run go first, so that none is left that does not
   belong to the splits written now. */
static int remove_ids(const char *dir, Err *e)
{
    for (int s = 0; s < SPLIT_COUNT; s++) {
        char *path = path_join(dir, prepared_ids_files[s]);
        int rc = unlink(path) == 0 || errno == ENOENT ? 0 : err_set(e, "%s: cannot remove: %s", path,
                                                                    strerror(errno));
        free(path);
        if (rc != 0)
            return -1;
    }
    return 0;
}

/* A progress line on stderr, only on a terminal and only after the first second: the
   stage and, for a stage of several pieces, the share done. */
typedef struct Progress {
    bool tty;
    bool shown;
    double t0;
    const char *what; /* the last line shown */
    int pct;
} Progress;

static void progress(Progress *pr, const char *what, size_t done, size_t total)
{
    if (!pr || !pr->tty || clock_now() - pr->t0 < 1.0)
        return;
    int pct = total ? (int)(100.0 * (double)done / (double)total) : 100;
    if (pr->shown && pr->what == what && pr->pct == pct)
        return;
    if (total <= 1) /* a stage of one piece (learning BPE, counting): no share to show */
        fprintf(stderr, "\r\033[Kprepare: %s ...", what);
    else
        fprintf(stderr, "\r\033[Kprepare: %s %d%%", what, pct);
    fflush(stderr);
    pr->shown = true;
    pr->what = what;
    pr->pct = pct;
}

static void progress_done(Progress *pr)
{
    if (pr && pr->shown)
        fputs("\r\033[K", stderr);
    pr->shown = false;
}

typedef struct SplitStats {
    size_t pairs;
    uint64_t tokens[2]; /* source, target */
    uint64_t unk[2];
} SplitStats;

/* What a pair is after filtering. */
enum { PAIR_KEPT, PAIR_BAD, PAIR_LONG, PAIR_LEAK /* its source is in valid or test */ };

/* The state that flows from one stage of prepare_run to the next. */
typedef struct Prep {
    PrepareOpts o;    /* min_freq resolved */
    Progress pr;
    /* read */
    Corpus c;
    Outside xs[2];    /* valid and test from outside, when given */
    Buf arena;        /* every pair's tokens (after subwords: units) */
    TokPair *tp;      /* (c.n) */
    uint8_t *state;   /* (c.n) PAIR_* */
    size_t n_read;    /* pairs with tokens on both sides */
    /* filter */
    size_t n_long, n_leak, n_kept;
    /* split */
    size_t n_valid, n_test, n_groups;
    size_t *kept;     /* (n_kept) pair indices */
    uint8_t *split;   /* (n_kept) SplitId of kept[j] */
    /* subwords, vocabularies */
    PrepareBpe pb;
    Vocab *voc[2];
    /* ids: statistics and the split files' text */
    SplitStats st[SPLIT_COUNT];
    size_t *hist[2], hist_used[2]; /* pairs by tokens of a side, 0 .. hist_used - 1 */
    Buf out[SPLIT_COUNT];
    /* report */
    Buf report;
} Prep;

static void prep_free(Prep *p)
{
    progress_done(&p->pr);
    buf_free(&p->report);
    for (int s = 0; s < SPLIT_COUNT; s++)
        buf_free(&p->out[s]);
    free(p->hist[0]);
    free(p->hist[1]);
    for (int s = 0; s < 2; s++)
        if (p->voc[s])
            vocab_free(p->voc[s]);
    prepare_bpe_free(&p->pb);
    free(p->split);
    free(p->kept);
    free(p->state);
    free(p->tp);
    buf_free(&p->arena);
    outside_free(&p->xs[0]);
    outside_free(&p->xs[1]);
    corpus_free(&p->c);
}

/* Tokenizes one side of pair i into the arena: its token count, or -1 with e set. */
static long tokenize_side(Prep *p, size_t i, int side, size_t *off, uint32_t *len, Err *e)
{
    const Pair *pair = &p->c.pairs[i];
    TokOpts to = {.lang = side ? p->o.direction.tgt : p->o.direction.src, .keep_case = p->o.keep_case};
    Err inner;
    *off = p->arena.len;
    long n = tok_line(side ? pair->tgt : pair->src, side ? pair->tgt_len : pair->src_len, &to,
                      &p->arena, &inner);
    if (n < 0)
        return err_set(e, "%s:%zu: %s", corpus_file(&p->c, side), pair->line, inner.msg);
    *len = (uint32_t)(p->arena.len - *off);
    buf_putc(&p->arena, '\0');
    return n;
}

/* Tokenizes pair i: 0, or -1 with e set. A side without tokens fails unless skip_bad,
   which counts the line and marks the pair PAIR_BAD. */
static int tokenize_pair(Prep *p, size_t i, Err *e)
{
    TokPair *t = &p->tp[i];
    long sn = tokenize_side(p, i, 0, &t->soff, &t->slen, e);
    long tn = sn < 0 ? -1 : tokenize_side(p, i, 1, &t->toff, &t->tlen, e);
    if (tn < 0)
        return -1;
    t->sn = (uint32_t)sn;
    t->tn = (uint32_t)tn;
    if (sn > 0 && tn > 0) {
        p->n_read++;
        return 0;
    }
    int side = sn == 0 ? 0 : 1;
    const Lang *lang = side ? &p->o.direction.tgt : &p->o.direction.src;
    Err inner;
    err_set(&inner, "%s:%zu: %s side has no tokens", corpus_file(&p->c, side), p->c.pairs[i].line,
            lang_label(lang));
    if (!p->o.skip_bad) {
        *e = inner;
        return -1;
    }
    corpus_note_bad(&p->c, p->c.pairs[i].line, &inner);
    p->state[i] = PAIR_BAD;
    return 0;
}

/* Stage read: checks DIR, reads the corpus and the outside sets, tokenizes every pair. */
static int prep_read(Prep *p, Err *e)
{
    const PrepareOpts *o = &p->o;
    const char *inputs[] = {o->corpus, o->src_file, o->tgt_file, o->valid_files[0],
                            o->valid_files[1], o->test_files[0], o->test_files[1]};
    if (check_outdir(o->dir, inputs, 7, e) != 0 || prepare_read_input(o, &p->c, e) != 0 ||
        prepare_load_outside(o, p->xs, e) != 0)
        return -1;
    buf_reserve(&p->arena, p->c.len + p->c.len / 4);
    p->tp = XNEW(TokPair, p->c.n);
    p->state = XCNEW(uint8_t, p->c.n);
    for (size_t i = 0; i < p->c.n; i++) {
        if ((i & 4095) == 0)
            progress(&p->pr, "tokenizing", i, p->c.n);
        if (tokenize_pair(p, i, e) != 0)
            return -1;
    }
    progress_done(&p->pr);
    if (p->n_read == 0)
        return err_set(e, "%s: no sentence pairs (all %zu non-blank lines are bad)", p->c.name,
                       p->c.bad);
    return 0;
}

/* Stage filter: drops the pairs whose source is in the outside sets, then those with
   more than max_len tokens on a side. */
static int prep_filter(Prep *p, Err *e)
{
    const PrepareOpts *o = &p->o;
    for (size_t i = 0; i < p->c.n; i++) {
        const TokPair *t = &p->tp[i];
        const char *src = p->arena.data + t->soff;
        if (p->state[i] != PAIR_KEPT)
            continue;
        if ((o->valid_files[0] && outside_find(&p->xs[0], src, t->slen)) ||
            (o->test_files[0] && outside_find(&p->xs[1], src, t->slen))) {
            p->state[i] = PAIR_LEAK;
            p->n_leak++;
        } else if (o->max_len && (t->sn > o->max_len || t->tn > o->max_len)) {
            p->state[i] = PAIR_LONG;
            p->n_long++;
        }
    }
    p->n_kept = p->n_read - p->n_long - p->n_leak;
    if (p->n_kept == 0 && p->n_leak)
        return err_set(e, "%s: no pairs left for training: %zu have their source in the valid or "
                          "test files, the others more than %ld tokens on a side", p->c.name,
                       p->n_leak, o->max_len);
    if (p->n_kept == 0)
        return err_set(e, "%s: no pairs left: all %zu have more than %ld tokens on a side (see "
                          "--max-len)", p->c.name, p->n_read, o->max_len);
    return 0;
}

/* Stage split: the kept pairs into train, valid and test, grouped by tokenized source. */
static int prep_split(Prep *p, Err *e)
{
    const PrepareOpts *o = &p->o;
    size_t n_kept = p->n_kept;
    p->n_valid = o->valid_files[0] ? 0 : o->valid >= 0 ? (size_t)o->valid : split_default_size(n_kept);
    p->n_test = o->test_files[0] ? 0 : o->test >= 0 ? (size_t)o->test : split_default_size(n_kept);
    if (p->n_valid + p->n_test >= n_kept)
        return err_set(e, "%s: --valid %zu and --test %zu leave no pairs for training (%zu pairs "
                          "after filtering)", p->c.name, p->n_valid, p->n_test, n_kept);
    progress(&p->pr, "splitting", 0, 1);
    p->kept = XNEW(size_t, n_kept);
    SplitKey *keys = XNEW(SplitKey, n_kept);
    size_t k = 0;
    for (size_t i = 0; i < p->c.n; i++)
        if (p->state[i] == PAIR_KEPT) {
            p->kept[k] = i;
            keys[k] = (SplitKey){p->arena.data + p->tp[i].soff, p->tp[i].slen};
            k++;
        }
    p->split = XNEW(uint8_t, n_kept);
    size_t counts[SPLIT_COUNT];
    p->n_groups = split_assign(keys, n_kept, p->n_valid, p->n_test, (uint64_t)o->seed, p->split,
                               counts);
    free(keys);
    return 0;
}

/* Stage subwords (--bpe, --bpe-codes): units replace the tokens from here on. */
static int prep_subwords(Prep *p, Err *e)
{
    if (p->o.bpe)
        progress(&p->pr, "learning BPE", 0, 1);
    return prepare_bpe(&p->pb, &p->o, &p->arena, p->tp, p->kept, p->split, p->n_kept, e);
}

/* Stage vocabularies: from train (--joint: one from both sides). */
static void prep_vocabularies(Prep *p)
{
    bool joint = p->o.joint;
    if (p->o.like) { /* copies of the model's */
        Buf b = {0};
        Err e;
        for (int s = 0; s < 2; s++) {
            buf_clear(&b);
            vocab_lines(p->o.like->vocab[s], &b);
            if (vocab_from_lines(&p->voc[s], p->o.like->name, b.data, b.len, &e) != 0)
                BUG("the vocabulary of %s does not parse again: %s", p->o.like->name, e.msg);
        }
        buf_free(&b);
        return;
    }
    progress(&p->pr, "counting", 0, 1);
    VocabCounter *vc[2] = {vocab_counter_new(), joint ? NULL : vocab_counter_new()};
    for (size_t j = 0; j < p->n_kept; j++) {
        if (p->split[j] != SPLIT_TRAIN)
            continue;
        const TokPair *t = &p->tp[p->kept[j]];
        vocab_counter_add_line(vc[0], p->arena.data + t->soff, t->slen);
        vocab_counter_add_line(vc[joint ? 0 : 1], p->arena.data + t->toff, t->tlen);
    }
    for (int s = 0; s < 2; s++)
        p->voc[s] = vocab_build(vc[joint ? 0 : s], (uint64_t)p->o.min_freq, (size_t)p->o.max_vocab);
    vocab_counter_free(vc[0]);
    vocab_counter_free(vc[1]);
}

/* Counts pair j of the kept ones in its split's statistics and length histograms, and
   appends its original text to the split's file. */
static void add_kept_pair(Prep *p, size_t j)
{
    const Pair *pair = &p->c.pairs[p->kept[j]];
    const TokPair *t = &p->tp[p->kept[j]];
    SplitStats *s = &p->st[p->split[j]];
    s->pairs++;
    size_t unk;
    s->tokens[0] += vocab_encode(p->voc[0], p->arena.data + t->soff, t->slen, NULL, 0, &unk);
    s->unk[0] += unk;
    s->tokens[1] += vocab_encode(p->voc[1], p->arena.data + t->toff, t->tlen, NULL, 0, &unk);
    s->unk[1] += unk;
    p->hist[0][t->sn]++;
    p->hist[1][t->tn]++;
    if (t->sn + 1 > p->hist_used[0])
        p->hist_used[0] = t->sn + 1;
    if (t->tn + 1 > p->hist_used[1])
        p->hist_used[1] = t->tn + 1;
    Buf *b = &p->out[p->split[j]];
    buf_append(b, pair->src, pair->src_len);
    buf_putc(b, '\t');
    buf_append(b, pair->tgt, pair->tgt_len);
    buf_putc(b, '\n');
}

/* Stage ids: each split's token and <unk> counts under the vocabularies, the length
   histograms, and the text of the split files (outside valid and test included). */
static void prep_ids(Prep *p)
{
    size_t hist_n = p->o.max_len ? (size_t)p->o.max_len + 1 : 1;
    for (size_t j = 0; j < p->n_kept; j++) {
        const TokPair *t = &p->tp[p->kept[j]];
        size_t m = t->sn > t->tn ? t->sn : t->tn;
        if (m + 1 > hist_n)
            hist_n = m + 1;
    }
    p->hist[0] = XCNEW(size_t, hist_n);
    p->hist[1] = XCNEW(size_t, hist_n);
    for (size_t j = 0; j < p->n_kept; j++)
        add_kept_pair(p, j);
    for (int x = 0; x < 2; x++) /* valid and test from outside */
        if (p->xs[x].c.name) {
            SplitStats *sx = &p->st[x ? SPLIT_TEST : SPLIT_VALID];
            outside_write(&p->xs[x], p->voc[0], p->voc[1], &p->out[x ? SPLIT_TEST : SPLIT_VALID],
                          &sx->pairs, sx->tokens, sx->unk);
        }
}

/* prepare.json's member "options". */
static void report_options(JsonWriter *w, const Prep *p)
{
    const PrepareOpts *o = &p->o;
    json_open_object(w, "options");
    json_put_str(w, "direction", o->direction.name);
    json_put_str(w, "source_lang", o->direction.src.code);
    json_put_str(w, "target_lang", o->direction.tgt.code);
    json_put_bool(w, "keep_case", o->keep_case);
    json_put_int(w, "seed", o->seed);
    json_put_uint(w, "valid", p->n_valid);
    json_put_uint(w, "test", p->n_test);
    json_put_int(w, "min_freq", o->min_freq);
    if (o->max_vocab)
        json_put_int(w, "max_vocab", o->max_vocab);
    else
        json_put_null(w, "max_vocab");
    if (o->max_len)
        json_put_int(w, "max_len", o->max_len);
    else
        json_put_null(w, "max_len");
    json_put_bool(w, "skip_bad", o->skip_bad);
    if (o->like)
        json_put_str(w, "model", o->like->name);
    prepare_bpe_put_options(w, o);
    prepare_put_outside(w, o);
    json_close(w);
}

/* A one-line array of counts. */
static void put_counts(JsonWriter *w, const char *key, const size_t *h, size_t n)
{
    json_open_array_line(w, key);
    for (size_t i = 0; i < n; i++)
        json_put_uint(w, NULL, h[i]);
    json_close(w);
}

static double rate(uint64_t a, uint64_t b) { return b ? (double)a / (double)b : 0.0; }

/* prepare.json's member "splits": each split's counts on a line of its own. */
static void report_splits(JsonWriter *w, const Prep *p)
{
    json_open_object(w, "splits");
    for (int s = 0; s < SPLIT_COUNT; s++) {
        const SplitStats *st = &p->st[s];
        json_open_object_line(w, split_name((SplitId)s));
        json_put_uint(w, "pairs", st->pairs);
        json_put_uint(w, "source_tokens", st->tokens[0]);
        json_put_uint(w, "target_tokens", st->tokens[1]);
        json_put_double(w, "source_oov_rate", "%.6f", rate(st->unk[0], st->tokens[0]));
        json_put_double(w, "target_oov_rate", "%.6f", rate(st->unk[1], st->tokens[1]));
        json_close(w);
    }
    json_close(w);
}

/* The counts of the lines read and of the pairs kept, members of prepare.json. */
static void report_counts(JsonWriter *w, const Prep *p)
{
    const Corpus *c = &p->c;
    json_put_uint(w, "lines_read", c->lines);
    json_put_uint(w, "blank_lines", c->blank);
    json_put_uint(w, "bad_lines_skipped", c->bad);
    json_open_array_line(w, "bad_line_numbers");
    for (size_t i = 0; i < c->n_first_bad; i++)
        json_put_uint(w, NULL, c->first_bad[i].line);
    json_close(w);
    json_put_uint(w, "pairs_read", p->n_read);
    json_put_uint(w, "filtered_by_length", p->n_long);
    if (p->o.valid_files[0] || p->o.test_files[0])
        json_put_uint(w, "dropped_in_valid_or_test", p->n_leak);
    json_put_uint(w, "pairs_kept", p->n_kept);
    json_put_uint(w, "source_groups", p->n_groups);
}

/* Stage report: prepare.json, an object with an indent of 2 and a final newline. */
static void prep_report(Prep *p)
{
    JsonWriter w;
    json_writer_init(&w, &p->report, 2);
    json_open_object(&w, NULL);
    prepare_put_inputs(&w, &p->o);
    report_options(&w, p);
    report_counts(&w, p);
    report_splits(&w, p);
    prepare_bpe_put_merges(&w, &p->pb);
    json_open_object_line(&w, "vocab");
    json_put_uint(&w, "source", vocab_size(p->voc[0]));
    json_put_uint(&w, "target", vocab_size(p->voc[1]));
    json_close(&w);
    json_open_object(&w, "length_histogram");
    put_counts(&w, "source", p->hist[0], p->hist_used[0]);
    put_counts(&w, "target", p->hist[1], p->hist_used[1]);
    json_close(&w);
    json_close(&w);
    buf_putc(&p->report, '\n');
}

/* Everything is known to be good: creates DIR (and missing parents) and writes the
   codes, the split files, the vocabularies, the report, then the token ids as
   training computes them from the files just written. */
static int prep_write(Prep *p, Err *e)
{
    const char *dir = p->o.dir;
    if (dir_ensure_all(dir, e) != 0 || remove_ids(dir, e) != 0 || prepare_bpe_write(&p->pb, dir, e) != 0)
        return -1;
    for (int s = 0; s < PREPARED_NFILES; s++) {
        progress(&p->pr, "writing", (size_t)s, PREPARED_NFILES);
        char *path = path_join(dir, prepared_files[s]);
        const Buf *b = s < SPLIT_COUNT ? &p->out[s] : &p->report;
        int rc = s >= SPLIT_COUNT && s < SPLIT_COUNT + 2 ? vocab_save(p->voc[s - SPLIT_COUNT], path, e)
                 : atomic_write(path, b->data ? b->data : "", b->len, e);
        free(path);
        if (rc != 0)
            return -1;
    }
    progress(&p->pr, "writing ids", 0, 1);
    if (prepared_write_ids(dir, e) != 0)
        return -1;
    progress_done(&p->pr);
    return 0;
}

/* The summary, for the command to print (on stderr, so that stdout stays empty). */
static void prep_summary(const Prep *p, Buf *summary)
{
    const Corpus *c = &p->c;
    const PrepareOpts *o = &p->o;
    for (size_t i = 0; i < c->n_first_bad; i++)
        buf_printf(summary, "prepare: skipped %s\n", c->first_bad[i].err.msg);
    if (c->bad) {
        buf_printf(summary, "prepare: skipped %zu bad line%s (first:", c->bad, c->bad == 1 ? "" : "s");
        for (size_t i = 0; i < c->n_first_bad; i++)
            buf_printf(summary, " %zu", c->first_bad[i].line);
        buf_printf(summary, "%s)\n", c->bad > c->n_first_bad ? " ..." : "");
    }
    if (o->max_len)
        buf_printf(summary, "prepare: %zu pairs read, %zu longer than %ld tokens dropped, %zu kept\n",
                   p->n_read, p->n_long, o->max_len, p->n_kept);
    else
        buf_printf(summary, "prepare: %zu pairs read and kept (no length limit)\n", p->n_read);
    if (o->valid_files[0] || o->test_files[0])
        buf_printf(summary, "prepare: %zu training pair%s dropped: source in the valid or test "
                            "files\n", p->n_leak, p->n_leak == 1 ? "" : "s");
    prepare_bpe_summary(&p->pb, o, summary);
    buf_printf(summary, "prepare: train %zu, valid %zu, test %zu pairs; vocab %s %zu, %s %zu%s%s\n",
               p->st[SPLIT_TRAIN].pairs, p->st[SPLIT_VALID].pairs, p->st[SPLIT_TEST].pairs,
               o->direction.src.code, vocab_size(p->voc[0]), o->direction.tgt.code,
               vocab_size(p->voc[1]), o->like ? ", those of " : "", o->like ? o->like->name : "");
    if (o->like) {
        const SplitStats *t = &p->st[SPLIT_TRAIN];
        buf_printf(summary, "prepare: tokens of train that %s's vocabularies cannot represent (<unk>): "
                            "%s %.2f%%, %s %.2f%%\n", o->like->name, o->direction.src.code,
                   100 * rate(t->unk[0], t->tokens[0]), o->direction.tgt.code,
                   100 * rate(t->unk[1], t->tokens[1]));
    }
    if (o->corpus && !o->said_direction)
        buf_printf(summary, "prepare: read as %s to %s, the default --direction %s; give --direction "
                            "en-XX or XX-en for another language\n",
                   lang_label(&o->direction.src), lang_label(&o->direction.tgt), o->direction.name);
    buf_printf(summary, "prepare: wrote %s in %.2f s\n", o->dir, clock_now() - p->pr.t0);
}

int prepare_run(const PrepareOpts *o, Buf *summary, Err *e)
{
    Prep p = {.o = *o, .pr = {.tty = o->progress && isatty(2) == 1, .t0 = clock_now()}};
    if (p.o.min_freq == 0)
        p.o.min_freq = p.o.bpe || p.o.bpe_codes[0] || p.o.bpe_codes[1] ? 1 : 2;
    int rc = -1;
    if (prep_read(&p, e) == 0 && prep_filter(&p, e) == 0 && prep_split(&p, e) == 0 &&
        prep_subwords(&p, e) == 0) {
        prep_vocabularies(&p);
        prep_ids(&p);
        prep_report(&p);
        if (prep_write(&p, e) == 0) {
            if (summary)
                prep_summary(&p, summary);
            rc = 0;
        }
    }
    prep_free(&p);
    return rc;
}
