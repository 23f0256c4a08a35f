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

/* DIR may be absent (its parent must exist), or a directory holding only our outputs,
   none of which is the corpus itself (the same file under any name). */
static int check_outdir(const char *dir, const char *const *inputs, size_t n_inputs, Err *e)
{
    for (size_t i = 0; i < PREPARED_NFILES; i++) {
        char *out = path_join(dir, prepared_files[i]);
        int rc = file_check_not_input(out, "-o", inputs, n_inputs, e);
        free(out);
        if (rc != 0)
            return -1;
    }
    for (size_t i = 0; i < SPLIT_COUNT; i++) {
        char *out = path_join(dir, prepared_ids_files[i]);
        int rc = file_check_not_input(out, "-o", inputs, n_inputs, e);
        free(out);
        if (rc != 0)
            return -1;
    }
    for (size_t i = 0; i < 2; i++) {
        char *out = path_join(dir, prepare_bpe_files[i]);
        int rc = file_check_not_input(out, "-o", inputs, n_inputs, e);
        free(out);
        if (rc != 0)
            return -1;
    }
    struct stat st;
    if (stat(dir, &st) != 0) {
        if (errno != ENOENT && errno != ENOTDIR)
            return err_set(e, "%s: %s", dir, strerror(errno));
        /* created with its missing parents: the nearest existing one must be a directory */
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
    if (!S_ISDIR(st.st_mode))
        return err_set(e, "%s: exists and is not a directory", dir);
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
        for (size_t i = 0; i < PREPARED_NFILES; i++)
            ours = ours || strcmp(n, prepared_files[i]) == 0;
        for (size_t i = 0; i < SPLIT_COUNT; i++)
            ours = ours || strcmp(n, prepared_ids_files[i]) == 0;
        ours = ours || strcmp(n, prepare_bpe_files[0]) == 0 || strcmp(n, prepare_bpe_files[1]) == 0;
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

/* A progress line on stderr, only on a terminal and only after the first second. */
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

static void json_hist(Buf *j, const size_t *h, size_t n)
{
    buf_putc(j, '[');
    for (size_t i = 0; i < n; i++)
        buf_printf(j, "%s%zu", i ? ", " : "", h[i]);
    buf_putc(j, ']');
}

static double rate(uint64_t a, uint64_t b) { return b ? (double)a / (double)b : 0.0; }

int prepare_run(const PrepareOpts *o, Buf *summary, Err *e)
{
    PrepareOpts po = *o;
    if (po.min_freq == 0)
        po.min_freq = po.bpe || po.bpe_codes[0] || po.bpe_codes[1] ? 1 : 2;
    Progress pr = {.tty = o->progress && isatty(2) == 1, .t0 = clock_now()};
    const char *inputs[] = {po.corpus, po.src_file, po.tgt_file, po.valid_files[0],
                            po.valid_files[1], po.test_files[0], po.test_files[1]};
    if (check_outdir(po.dir, inputs, 7, e) != 0)
        return -1;

    Corpus c;
    if (prepare_read_input(&po, &c, e) != 0)
        return -1;
    Outside xs[2]; /* valid and test from outside, when given */
    if (prepare_load_outside(&po, xs, e) != 0) {
        corpus_free(&c);
        return -1;
    }
    int rc = -1;
    Err inner;

    const char *side_name[2] = {lang_label(&po.direction.src), lang_label(&po.direction.tgt)};
    TokOpts sopt = {.lang = po.direction.src, .keep_case = po.keep_case};
    TokOpts topt = {.lang = po.direction.tgt, .keep_case = po.keep_case};

    /* Tokenize every pair once. */
    Buf arena = {0}, report = {0}, out[SPLIT_COUNT] = {{0}};
    buf_reserve(&arena, c.len + c.len / 4);
    TokPair *tp = XNEW(TokPair, c.n);
    uint8_t *state = XCNEW(uint8_t, c.n); /* 0 kept, 1 no tokens (bad), 2 too long,
                                             3 source in valid or test */
    size_t *kept = NULL, *hist[2] = {NULL, NULL};
    uint8_t *split = NULL;
    Vocab *voc[2] = {NULL, NULL};
    PrepareBpe pb = {0};
    size_t n_read = 0, n_long = 0, n_leak = 0;
    for (size_t i = 0; i < c.n; i++) {
        if ((i & 4095) == 0)
            progress(&pr, "tokenizing", i, c.n);
        const Pair *p = &c.pairs[i];
        TokPair *t = &tp[i];
        t->soff = arena.len;
        long sn = tok_line(p->src, p->src_len, &sopt, &arena, &inner);
        if (sn < 0) {
            err_set(e, "%s:%zu: %s", corpus_file(&c, 0), p->line, inner.msg);
            goto out;
        }
        t->slen = (uint32_t)(arena.len - t->soff);
        buf_putc(&arena, '\0');
        t->toff = arena.len;
        long tn = tok_line(p->tgt, p->tgt_len, &topt, &arena, &inner);
        if (tn < 0) {
            err_set(e, "%s:%zu: %s", corpus_file(&c, 1), p->line, inner.msg);
            goto out;
        }
        t->tlen = (uint32_t)(arena.len - t->toff);
        buf_putc(&arena, '\0');
        t->sn = (uint32_t)sn;
        t->tn = (uint32_t)tn;
        if (sn == 0 || tn == 0) {
            err_set(&inner, "%s:%zu: %s side has no tokens", corpus_file(&c, sn == 0 ? 0 : 1),
                    p->line, side_name[sn == 0 ? 0 : 1]);
            if (!po.skip_bad) {
                *e = inner;
                goto out;
            }
            corpus_note_bad(&c, p->line, &inner);
            state[i] = 1;
            continue;
        }
        n_read++;
        if ((po.valid_files[0] && outside_find(&xs[0], arena.data + t->soff, t->slen)) ||
            (po.test_files[0] && outside_find(&xs[1], arena.data + t->soff, t->slen))) {
            state[i] = 3; /* its source is in valid or test */
            n_leak++;
        } else if (po.max_len && (sn > po.max_len || tn > po.max_len)) {
            state[i] = 2;
            n_long++;
        }
    }
    progress_done(&pr);
    if (n_read == 0) {
        err_set(e, "%s: no sentence pairs (all %zu non-blank lines are bad)", c.name, c.bad);
        goto out;
    }
    size_t n_kept = n_read - n_long - n_leak;
    if (n_kept == 0 && n_leak) {
        err_set(e, "%s: no pairs left for training: %zu have their source in the valid or test "
                   "files, the others more than %ld tokens on a side", c.name, n_leak, po.max_len);
        goto out;
    }
    if (n_kept == 0) {
        err_set(e, "%s: no pairs left: all %zu have more than %ld tokens on a side (see --max-len)",
                c.name, n_read, po.max_len);
        goto out;
    }

    size_t n_valid = po.valid_files[0] ? 0 : po.valid >= 0 ? (size_t)po.valid : split_default_size(n_kept);
    size_t n_test = po.test_files[0] ? 0 : po.test >= 0 ? (size_t)po.test : split_default_size(n_kept);
    if (n_valid + n_test >= n_kept) {
        err_set(e, "%s: --valid %zu and --test %zu leave no pairs for training (%zu pairs after "
                   "filtering)", c.name, n_valid, n_test, n_kept);
        goto out;
    }

    /* Split the kept pairs, grouped by tokenized source. */
    progress(&pr, "splitting", 0, 1);
    kept = XNEW(size_t, n_kept);
    SplitKey *keys = XNEW(SplitKey, n_kept);
    size_t k = 0;
    for (size_t i = 0; i < c.n; i++)
        if (state[i] == 0) {
            kept[k] = i;
            keys[k] = (SplitKey){arena.data + tp[i].soff, tp[i].slen};
            k++;
        }
    split = XNEW(uint8_t, n_kept);
    size_t counts[SPLIT_COUNT];
    size_t n_groups = split_assign(keys, n_kept, n_valid, n_test, (uint64_t)po.seed, split, counts);
    free(keys);

    /* Subword units (--bpe, --bpe-codes) replace the tokens from here on. */
    if (po.bpe)
        progress(&pr, "learning BPE", 0, 1);
    if (prepare_bpe(&pb, &po, &arena, tp, kept, split, n_kept, e) != 0)
        goto out;

    /* Vocabularies from train (--joint: one from both sides). */
    progress(&pr, "counting", 0, 1);
    VocabCounter *vc[2] = {vocab_counter_new(), po.joint ? NULL : vocab_counter_new()};
    for (size_t j = 0; j < n_kept; j++) {
        if (split[j] != SPLIT_TRAIN)
            continue;
        const TokPair *t = &tp[kept[j]];
        vocab_counter_add_line(vc[0], arena.data + t->soff, t->slen);
        vocab_counter_add_line(vc[po.joint ? 0 : 1], arena.data + t->toff, t->tlen);
    }
    for (int s = 0; s < 2; s++)
        voc[s] = vocab_build(vc[po.joint ? 0 : s], (uint64_t)po.min_freq, (size_t)po.max_vocab);
    vocab_counter_free(vc[0]);
    vocab_counter_free(vc[1]);

    /* Statistics and the split files. */
    SplitStats st[SPLIT_COUNT] = {{0}};
    size_t hist_n = po.max_len ? (size_t)po.max_len + 1 : 1;
    for (size_t j = 0; j < n_kept; j++) {
        const TokPair *t = &tp[kept[j]];
        size_t m = t->sn > t->tn ? t->sn : t->tn;
        if (m + 1 > hist_n)
            hist_n = m + 1;
    }
    hist[0] = XCNEW(size_t, hist_n);
    hist[1] = XCNEW(size_t, hist_n);
    size_t hist_used[2] = {0, 0};
    for (size_t j = 0; j < n_kept; j++) {
        const Pair *p = &c.pairs[kept[j]];
        const TokPair *t = &tp[kept[j]];
        SplitStats *s = &st[split[j]];
        s->pairs++;
        size_t unk;
        s->tokens[0] += vocab_encode(voc[0], arena.data + t->soff, t->slen, NULL, 0, &unk);
        s->unk[0] += unk;
        s->tokens[1] += vocab_encode(voc[1], arena.data + t->toff, t->tlen, NULL, 0, &unk);
        s->unk[1] += unk;
        hist[0][t->sn]++;
        hist[1][t->tn]++;
        if (t->sn + 1 > hist_used[0])
            hist_used[0] = t->sn + 1;
        if (t->tn + 1 > hist_used[1])
            hist_used[1] = t->tn + 1;
        Buf *b = &out[split[j]];
        buf_append(b, p->src, p->src_len);
        buf_putc(b, '\t');
        buf_append(b, p->tgt, p->tgt_len);
        buf_putc(b, '\n');
    }

    for (int x = 0; x < 2; x++) /* valid and test from outside */
        if (xs[x].c.name) {
            SplitStats *sx = &st[x ? SPLIT_TEST : SPLIT_VALID];
            outside_write(&xs[x], voc[0], voc[1], &out[x ? SPLIT_TEST : SPLIT_VALID], &sx->pairs,
                          sx->tokens, sx->unk);
        }

    /* The report. */
    buf_puts(&report, "{\n  \"corpus\": ");
    prepare_json_inputs(&report, &po);
    buf_printf(&report, ",\n  \"options\": {\n    \"direction\": \"%s\",\n", po.direction.name);
    buf_printf(&report, "    \"source_lang\": \"%s\",\n    \"target_lang\": \"%s\",\n",
               sopt.lang.code, topt.lang.code);
    buf_printf(&report, "    \"keep_case\": %s,\n    \"seed\": %ld,\n", po.keep_case ? "true" : "false",
               po.seed);
    buf_printf(&report, "    \"valid\": %zu,\n    \"test\": %zu,\n    \"min_freq\": %ld,\n", n_valid,
               n_test, po.min_freq);
    if (po.max_vocab)
        buf_printf(&report, "    \"max_vocab\": %ld,\n", po.max_vocab);
    else
        buf_puts(&report, "    \"max_vocab\": null,\n");
    if (po.max_len)
        buf_printf(&report, "    \"max_len\": %ld,\n", po.max_len);
    else
        buf_puts(&report, "    \"max_len\": null,\n");
    buf_printf(&report, "    \"skip_bad\": %s", po.skip_bad ? "true" : "false");
    prepare_bpe_json_options(&po, &report);
    if (po.valid_files[0] || po.test_files[0]) {
        buf_puts(&report, ",\n");
        prepare_json_outside(&report, &po);
    } else {
        buf_puts(&report, "\n  },\n");
    }
    buf_printf(&report, "  \"lines_read\": %zu,\n  \"blank_lines\": %zu,\n", c.lines, c.blank);
    buf_printf(&report, "  \"bad_lines_skipped\": %zu,\n  \"bad_line_numbers\": [", c.bad);
    for (size_t i = 0; i < c.n_first_bad; i++)
        buf_printf(&report, "%s%zu", i ? ", " : "", c.first_bad[i].line);
    buf_printf(&report, "],\n  \"pairs_read\": %zu,\n  \"filtered_by_length\": %zu,\n", n_read, n_long);
    if (po.valid_files[0] || po.test_files[0])
        buf_printf(&report, "  \"dropped_in_valid_or_test\": %zu,\n", n_leak);
    buf_printf(&report, "  \"pairs_kept\": %zu,\n  \"source_groups\": %zu,\n  \"splits\": {\n", n_kept,
               n_groups);
    for (int s = 0; s < SPLIT_COUNT; s++) {
        buf_printf(&report, "    \"%s\": {\"pairs\": %zu, \"source_tokens\": %" PRIu64
                       ", \"target_tokens\": %" PRIu64 ", \"source_oov_rate\": %.6f"
                       ", \"target_oov_rate\": %.6f}%s\n",
                   split_name((SplitId)s), st[s].pairs, st[s].tokens[0], st[s].tokens[1],
                   rate(st[s].unk[0], st[s].tokens[0]), rate(st[s].unk[1], st[s].tokens[1]),
                   s + 1 < SPLIT_COUNT ? "," : "");
    }
    buf_puts(&report, "  },\n");
    prepare_bpe_json(&pb, &report);
    buf_printf(&report, "  \"vocab\": {\"source\": %zu, \"target\": %zu},\n",
               vocab_size(voc[0]), vocab_size(voc[1]));
    buf_puts(&report, "  \"length_histogram\": {\n    \"source\": ");
    json_hist(&report, hist[0], hist_used[0]);
    buf_puts(&report, ",\n    \"target\": ");
    json_hist(&report, hist[1], hist_used[1]);
    buf_puts(&report, "\n  }\n}\n");

    /* Everything is known to be good: create DIR (and missing parents) and write. */
    if (dir_ensure_all(po.dir, e) != 0 || remove_ids(po.dir, e) != 0 ||
        prepare_bpe_write(&pb, po.dir, e) != 0)
        goto out;
    for (int s = 0; s < PREPARED_NFILES; s++) {
        progress(&pr, "writing", (size_t)s, PREPARED_NFILES);
        char *path = path_join(po.dir, prepared_files[s]);
        int wrc = s < SPLIT_COUNT ? atomic_write(path, out[s].data ? out[s].data : "", out[s].len, e)
                  : s < SPLIT_COUNT + 2 ? vocab_save(voc[s - SPLIT_COUNT], path, e)
                                        : atomic_write(path, report.data, report.len, e);
        free(path);
        if (wrc != 0)
            goto out;
    }
    /* The token ids, as training computes them from the files just written. */
    progress(&pr, "writing ids", 0, 1);
    if (prepared_write_ids(po.dir, e) != 0)
        goto out;
    progress_done(&pr);

    /* The summary, for the command to print (on stderr, so that stdout stays empty). */
    if (summary) {
        for (size_t i = 0; i < c.n_first_bad; i++)
            buf_printf(summary, "prepare: skipped %s\n", c.first_bad[i].err.msg);
        if (c.bad) {
            buf_printf(summary, "prepare: skipped %zu bad line%s (first:", c.bad, c.bad == 1 ? "" : "s");
            for (size_t i = 0; i < c.n_first_bad; i++)
                buf_printf(summary, " %zu", c.first_bad[i].line);
            buf_printf(summary, "%s)\n", c.bad > c.n_first_bad ? " ..." : "");
        }
        if (po.max_len)
            buf_printf(summary, "prepare: %zu pairs read, %zu longer than %ld tokens dropped, %zu kept\n",
                    n_read, n_long, po.max_len, n_kept);
        else
            buf_printf(summary, "prepare: %zu pairs read and kept (no length limit)\n", n_read);
        if (po.valid_files[0] || po.test_files[0])
            buf_printf(summary, "prepare: %zu training pair%s dropped: source in the valid or test "
                                "files\n", n_leak, n_leak == 1 ? "" : "s");
        prepare_bpe_summary(&pb, &po, summary);
        buf_printf(summary, "prepare: train %zu, valid %zu, test %zu pairs; vocab %s %zu, %s %zu\n",
                st[SPLIT_TRAIN].pairs, st[SPLIT_VALID].pairs, st[SPLIT_TEST].pairs,
                sopt.lang.code, vocab_size(voc[0]), topt.lang.code, vocab_size(voc[1]));
        buf_printf(summary, "prepare: wrote %s in %.2f s\n", po.dir, clock_now() - pr.t0);
    }
    rc = 0;
out:
    progress_done(&pr);
    buf_free(&report);
    for (int s = 0; s < SPLIT_COUNT; s++)
        buf_free(&out[s]);
    free(hist[0]);
    free(hist[1]);
    for (int s = 0; s < 2; s++)
        if (voc[s])
            vocab_free(voc[s]);
    prepare_bpe_free(&pb);
    free(split);
    free(kept);
    free(state);
    free(tp);
    buf_free(&arena);
    outside_free(&xs[0]);
    outside_free(&xs[1]);
    corpus_free(&c);
    return rc;
}
