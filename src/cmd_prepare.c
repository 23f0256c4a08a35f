/* s2s prepare: corpus → train/valid/test splits, vocabularies and a report. */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/err.h"
#include "base/file.h"
#include "base/opt.h"
#include "commands.h"
#include "text/corpus.h"
#include "text/split.h"
#include "text/tokenize.h"
#include "text/vocab.h"

static void usage(FILE *out)
{
    fprintf(out,
"usage: s2s prepare CORPUS -o DIR [options]\n"
"\n"
"Reads a Tatoeba/manythings file (English<TAB>French[<TAB>attribution] a line),\n"
"tokenizes it, drops over-long pairs, splits it into train/valid/test and builds\n"
"the source and target vocabularies from the training split. Writes to DIR:\n"
"  train.tsv valid.tsv test.tsv  source<TAB>target a line, the original text\n"
"  vocab.src vocab.tgt           token<TAB>count a line; <pad> <unk> <bos> <eos> first\n"
"  prepare.json                  options, counts, OOV rates, length histograms\n"
"DIR is created (one level) when missing. It may exist if it is empty or holds\n"
"only these files, which are replaced; anything else there is an error. Nothing is\n"
"written unless the whole corpus is valid. The summary goes to stderr.\n"
"\n"
"options:\n"
"  -o, --output DIR        output directory (required)\n"
"  --direction en-fr|fr-en source and target columns (default en-fr)\n"
"  --valid N               validation pairs (default: 10%% of the pairs after the\n"
"                          length filter, rounded down, at most %d)\n"
"  --test N                test pairs (same default as --valid)\n"
"  --seed S                shuffling seed (default 1); same seed, same files\n"
"  --min-freq K            keep tokens seen at least K times in train (default 2)\n"
"  --max-vocab V           at most V vocabulary entries, the 4 specials included\n"
"                          (default: no limit)\n"
"  --max-len L             drop pairs with more than L tokens on either side\n"
"                          (default 50; 0: no limit)\n"
"  --lowercase             lowercase (case folding) when tokenizing; by default\n"
"                          case is kept, so that models write cased text and\n"
"                          BLEU is case-sensitive as sacreBLEU's default\n"
"  --keep-case             keep case (the default)\n"
"  --skip-bad              skip and count malformed lines instead of failing\n"
"  -h, --help              this help\n"
"\n"
"Pairs that share a source sentence (after tokenization) always go to the same\n"
"split, so no source sentence of valid or test occurs in train. Valid and test get\n"
"whole groups of pairs and never more than N pairs each.\n",
            SPLIT_DEFAULT_MAX);
}

typedef struct PrepOpts {
    const char *corpus;
    const char *dir;
    Direction direction;
    long valid, test; /* -1: default rule */
    long seed;
    long min_freq;
    long max_vocab; /* 0: no limit */
    long max_len;   /* 0: no limit */
    bool keep_case;
    bool skip_bad;
} PrepOpts;

static void parse_args(PrepOpts *p, int argc, char **argv)
{
    *p = (PrepOpts){.direction = DIR_EN_FR, .valid = -1, .test = -1, .seed = 1, .min_freq = 2,
                    .max_len = 50, .keep_case = true};
    Opts o;
    opts_init(&o, "prepare", argc, argv);
    while (opts_next(&o)) {
        if (opts_positional(&o)) {
            if (p->corpus)
                opts_unknown(&o);
            p->corpus = opts_arg(&o, "CORPUS");
        } else if (opts_is(&o, "--help") || opts_is(&o, "-h")) {
            usage(stdout);
            exit(0);
        } else if (opts_is(&o, "-o") || opts_is(&o, "--output")) {
            p->dir = opts_str(&o);
        } else if (opts_is(&o, "--direction")) {
            const char *v = opts_str(&o);
            int d = direction_parse(v);
            if (d < 0)
                die_usage("prepare: option --direction must be en-fr or fr-en, got '%s'", v);
            p->direction = (Direction)d;
        } else if (opts_is(&o, "--valid")) {
            p->valid = opts_long(&o, 0, 100000000);
        } else if (opts_is(&o, "--test")) {
            p->test = opts_long(&o, 0, 100000000);
        } else if (opts_is(&o, "--seed")) {
            p->seed = opts_long(&o, 0, LONG_MAX);
        } else if (opts_is(&o, "--min-freq")) {
            p->min_freq = opts_long(&o, 1, 1000000000);
        } else if (opts_is(&o, "--max-vocab")) {
            p->max_vocab = opts_long(&o, VOCAB_NSPECIAL + 1, 100000000);
        } else if (opts_is(&o, "--max-len")) {
            p->max_len = opts_long(&o, 0, 100000);
        } else if (opts_is(&o, "--lowercase")) {
            opts_bool(&o);
            p->keep_case = false;
        } else if (opts_is(&o, "--keep-case")) {
            opts_bool(&o);
            p->keep_case = true;
        } else if (opts_is(&o, "--skip-bad")) {
            opts_bool(&o);
            p->skip_bad = true;
        } else {
            opts_unknown(&o);
        }
    }
    if (!p->corpus)
        die_usage("prepare: missing CORPUS argument (see 's2s prepare --help')");
    if (!p->dir)
        die_usage("prepare: missing option -o DIR (see 's2s prepare --help')");
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
static int check_outdir(const char *dir, const char *corpus, Err *e)
{
    for (size_t i = 0; i < PREPARED_NFILES; i++) {
        char *out = path_join(dir, prepared_files[i]);
        bool same = file_same(out, corpus);
        if (same)
            err_set(e, "%s: -o would overwrite the input %s (the same file); nothing written", out, corpus);
        free(out);
        if (same)
            return -1;
    }
    struct stat st;
    if (stat(dir, &st) != 0) {
        if (errno != ENOENT)
            return err_set(e, "%s: %s", dir, strerror(errno));
        char *parent = parent_dir(dir);
        int rc = 0;
        if (stat(parent, &st) != 0 || !S_ISDIR(st.st_mode))
            rc = err_set(e, "%s: cannot create directory: %s", dir,
                         strerror(errno ? errno : ENOTDIR));
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

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
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
    if (!pr->tty || now_s() - pr->t0 < 1.0)
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
    if (pr->shown)
        fputs("\r\033[K", stderr);
    pr->shown = false;
}

/* Clears the progress line, then prints the error and exits 1. */
static S2S_NORETURN void fail(Progress *pr, const Err *e)
{
    progress_done(pr);
    die_err(e);
}

/* One pair after tokenization: its tokens live in an arena. */
typedef struct TokPair {
    size_t soff, toff;
    uint32_t slen, tlen; /* bytes */
    uint32_t sn, tn;     /* tokens */
} TokPair;

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

int cmd_prepare(int argc, char **argv)
{
    PrepOpts po;
    parse_args(&po, argc, argv);
    Progress pr = {.tty = isatty(2) == 1, .t0 = now_s()};
    Err e;

    if (check_outdir(po.dir, po.corpus, &e) != 0)
        die_err(&e);

    Corpus c;
    CorpusOpts co = {.dir = po.direction, .skip_bad = po.skip_bad};
    if (corpus_read(&c, po.corpus, &co, &e) != 0)
        die_err(&e);

    const char *side_name[2] = {po.direction == DIR_EN_FR ? "English" : "French",
                                po.direction == DIR_EN_FR ? "French" : "English"};
    TokOpts sopt = {.lang = direction_src_lang(po.direction), .keep_case = po.keep_case};
    TokOpts topt = {.lang = direction_tgt_lang(po.direction), .keep_case = po.keep_case};

    /* Tokenize every pair once. */
    Buf arena = {0};
    buf_reserve(&arena, c.len + c.len / 4);
    TokPair *tp = xmalloc(c.n * sizeof *tp);
    uint8_t *state = xcalloc(c.n, 1); /* 0 kept, 1 no tokens (bad), 2 too long */
    size_t n_read = 0, n_long = 0;
    for (size_t i = 0; i < c.n; i++) {
        if ((i & 4095) == 0)
            progress(&pr, "tokenizing", i, c.n);
        const Pair *p = &c.pairs[i];
        TokPair *t = &tp[i];
        t->soff = arena.len;
        long sn = tok_line(p->src, p->src_len, &sopt, &arena, &e);
        if (sn < 0) {
            progress_done(&pr);
            die("%s:%zu: %s", c.name, p->line, e.msg);
        }
        t->slen = (uint32_t)(arena.len - t->soff);
        buf_putc(&arena, '\0');
        t->toff = arena.len;
        long tn = tok_line(p->tgt, p->tgt_len, &topt, &arena, &e);
        if (tn < 0) {
            progress_done(&pr);
            die("%s:%zu: %s", c.name, p->line, e.msg);
        }
        t->tlen = (uint32_t)(arena.len - t->toff);
        buf_putc(&arena, '\0');
        t->sn = (uint32_t)sn;
        t->tn = (uint32_t)tn;
        if (sn == 0 || tn == 0) {
            Err m;
            err_set(&m, "%s:%zu: %s side has no tokens", c.name, p->line,
                    side_name[sn == 0 ? 0 : 1]);
            if (!po.skip_bad)
                fail(&pr, &m);
            corpus_note_bad(&c, p->line, &m);
            state[i] = 1;
            continue;
        }
        n_read++;
        if (po.max_len && (sn > po.max_len || tn > po.max_len)) {
            state[i] = 2;
            n_long++;
        }
    }
    progress_done(&pr);
    if (n_read == 0)
        die("%s: no sentence pairs (all %zu non-blank lines are bad)", c.name, c.bad);
    size_t n_kept = n_read - n_long;
    if (n_kept == 0)
        die("%s: no pairs left: all %zu have more than %ld tokens on a side (see --max-len)",
            c.name, n_read, po.max_len);

    size_t n_valid = po.valid >= 0 ? (size_t)po.valid : split_default_size(n_kept);
    size_t n_test = po.test >= 0 ? (size_t)po.test : split_default_size(n_kept);
    if (n_valid + n_test >= n_kept)
        die("%s: --valid %zu and --test %zu leave no pairs for training (%zu pairs after "
            "filtering)", c.name, n_valid, n_test, n_kept);

    /* Split the kept pairs, grouped by tokenized source. */
    progress(&pr, "splitting", 0, 1);
    size_t *kept = xmalloc(n_kept * sizeof *kept);
    SplitKey *keys = xmalloc(n_kept * sizeof *keys);
    size_t k = 0;
    for (size_t i = 0; i < c.n; i++)
        if (state[i] == 0) {
            kept[k] = i;
            keys[k] = (SplitKey){arena.data + tp[i].soff, tp[i].slen};
            k++;
        }
    uint8_t *split = xmalloc(n_kept);
    size_t counts[SPLIT_COUNT];
    size_t n_groups = split_assign(keys, n_kept, n_valid, n_test, (uint64_t)po.seed, split, counts);
    free(keys);

    /* Vocabularies from train. */
    progress(&pr, "counting", 0, 1);
    VocabCounter *vc[2] = {vocab_counter_new(), vocab_counter_new()};
    for (size_t j = 0; j < n_kept; j++) {
        if (split[j] != SPLIT_TRAIN)
            continue;
        const TokPair *t = &tp[kept[j]];
        vocab_counter_add_line(vc[0], arena.data + t->soff, t->slen);
        vocab_counter_add_line(vc[1], arena.data + t->toff, t->tlen);
    }
    Vocab *voc[2];
    for (int s = 0; s < 2; s++) {
        voc[s] = vocab_build(vc[s], (uint64_t)po.min_freq, (size_t)po.max_vocab);
        vocab_counter_free(vc[s]);
    }

    /* Statistics and the split files. */
    SplitStats st[SPLIT_COUNT] = {{0}};
    size_t hist_n = po.max_len ? (size_t)po.max_len + 1 : 1;
    for (size_t j = 0; j < n_kept; j++) {
        const TokPair *t = &tp[kept[j]];
        size_t m = t->sn > t->tn ? t->sn : t->tn;
        if (m + 1 > hist_n)
            hist_n = m + 1;
    }
    size_t *hist[2] = {xcalloc(hist_n, sizeof(size_t)), xcalloc(hist_n, sizeof(size_t))};
    size_t hist_used[2] = {0, 0};
    Buf out[SPLIT_COUNT] = {{0}};
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

    /* The report. */
    Buf j = {0};
    buf_puts(&j, "{\n  \"corpus\": ");
    buf_json_str(&j, po.corpus, strlen(po.corpus));
    buf_printf(&j, ",\n  \"options\": {\n    \"direction\": \"%s\",\n", direction_name(po.direction));
    buf_printf(&j, "    \"source_lang\": \"%s\",\n    \"target_lang\": \"%s\",\n",
               lang_name(sopt.lang), lang_name(topt.lang));
    buf_printf(&j, "    \"keep_case\": %s,\n    \"seed\": %ld,\n", po.keep_case ? "true" : "false",
               po.seed);
    buf_printf(&j, "    \"valid\": %zu,\n    \"test\": %zu,\n    \"min_freq\": %ld,\n", n_valid,
               n_test, po.min_freq);
    if (po.max_vocab)
        buf_printf(&j, "    \"max_vocab\": %ld,\n", po.max_vocab);
    else
        buf_puts(&j, "    \"max_vocab\": null,\n");
    if (po.max_len)
        buf_printf(&j, "    \"max_len\": %ld,\n", po.max_len);
    else
        buf_puts(&j, "    \"max_len\": null,\n");
    buf_printf(&j, "    \"skip_bad\": %s\n  },\n", po.skip_bad ? "true" : "false");
    buf_printf(&j, "  \"lines_read\": %zu,\n  \"blank_lines\": %zu,\n", c.lines, c.blank);
    buf_printf(&j, "  \"bad_lines_skipped\": %zu,\n  \"bad_line_numbers\": [", c.bad);
    for (size_t i = 0; i < c.n_first_bad; i++)
        buf_printf(&j, "%s%zu", i ? ", " : "", c.first_bad[i].line);
    buf_printf(&j, "],\n  \"pairs_read\": %zu,\n  \"filtered_by_length\": %zu,\n", n_read, n_long);
    buf_printf(&j, "  \"pairs_kept\": %zu,\n  \"source_groups\": %zu,\n  \"splits\": {\n", n_kept,
               n_groups);
    for (int s = 0; s < SPLIT_COUNT; s++) {
        buf_printf(&j, "    \"%s\": {\"pairs\": %zu, \"source_tokens\": %" PRIu64
                       ", \"target_tokens\": %" PRIu64 ", \"source_oov_rate\": %.6f"
                       ", \"target_oov_rate\": %.6f}%s\n",
                   split_name((SplitId)s), st[s].pairs, st[s].tokens[0], st[s].tokens[1],
                   rate(st[s].unk[0], st[s].tokens[0]), rate(st[s].unk[1], st[s].tokens[1]),
                   s + 1 < SPLIT_COUNT ? "," : "");
    }
    buf_printf(&j, "  },\n  \"vocab\": {\"source\": %zu, \"target\": %zu},\n",
               vocab_size(voc[0]), vocab_size(voc[1]));
    buf_puts(&j, "  \"length_histogram\": {\n    \"source\": ");
    json_hist(&j, hist[0], hist_used[0]);
    buf_puts(&j, ",\n    \"target\": ");
    json_hist(&j, hist[1], hist_used[1]);
    buf_puts(&j, "\n  }\n}\n");

    /* Everything is known to be good: create DIR and write. */
    if (dir_ensure(po.dir, &e) != 0)
        fail(&pr, &e);
    for (int s = 0; s < SPLIT_COUNT; s++) {
        progress(&pr, "writing", (size_t)s, PREPARED_NFILES);
        char *path = path_join(po.dir, prepared_files[s]);
        if (atomic_write(path, out[s].data ? out[s].data : "", out[s].len, &e) != 0)
            fail(&pr, &e);
        free(path);
        buf_free(&out[s]);
    }
    for (int s = 0; s < 2; s++) {
        progress(&pr, "writing", (size_t)(3 + s), PREPARED_NFILES);
        char *path = path_join(po.dir, prepared_files[3 + s]);
        if (vocab_save(voc[s], path, &e) != 0)
            fail(&pr, &e);
        free(path);
    }
    char *jpath = path_join(po.dir, "prepare.json");
    if (atomic_write(jpath, j.data, j.len, &e) != 0)
        fail(&pr, &e);
    free(jpath);
    progress_done(&pr);

    /* Summary on stderr; stdout stays empty so prepare can be scripted. */
    for (size_t i = 0; i < c.n_first_bad; i++)
        fprintf(stderr, "prepare: skipped %s\n", c.first_bad[i].err.msg);
    if (c.bad) {
        fprintf(stderr, "prepare: skipped %zu bad line%s (first:", c.bad, c.bad == 1 ? "" : "s");
        for (size_t i = 0; i < c.n_first_bad; i++)
            fprintf(stderr, " %zu", c.first_bad[i].line);
        fprintf(stderr, "%s)\n", c.bad > c.n_first_bad ? " ..." : "");
    }
    if (po.max_len)
        fprintf(stderr, "prepare: %zu pairs read, %zu longer than %ld tokens dropped, %zu kept\n",
                n_read, n_long, po.max_len, n_kept);
    else
        fprintf(stderr, "prepare: %zu pairs read and kept (no length limit)\n", n_read);
    fprintf(stderr, "prepare: train %zu, valid %zu, test %zu pairs; vocab %s %zu, %s %zu\n",
            st[SPLIT_TRAIN].pairs, st[SPLIT_VALID].pairs, st[SPLIT_TEST].pairs,
            lang_name(sopt.lang), vocab_size(voc[0]), lang_name(topt.lang), vocab_size(voc[1]));
    fprintf(stderr, "prepare: wrote %s in %.2f s\n", po.dir, now_s() - pr.t0);

    buf_free(&j);
    free(hist[0]);
    free(hist[1]);
    vocab_free(voc[0]);
    vocab_free(voc[1]);
    free(split);
    free(kept);
    free(state);
    free(tp);
    buf_free(&arena);
    corpus_free(&c);
    return 0;
}
