/* scripts/eval.sh and scripts/plot-training.sh on a tiny model trained on
   data/sample.tsv (a couple of seconds). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/json.h"
#include "helpers.h"

#define SMALL_MODEL "--emb", "16", "--hidden", "16", "--dec-hidden", "16", "--attn-size", "16", \
                    "--deep-out", "16", "--threads", "1", "--quiet"

typedef struct Trained {
    char *dir, *data, *model, *log;
} Trained;

static Trained train_tiny(void)
{
    Trained t = {.dir = sample_prepared_dir()};
    t.data = strf("%s/data", t.dir);
    t.model = strf("%s/m.s2s", t.dir);
    t.log = strf("%s/m.s2s.log.jsonl", t.dir);
    RunResult r = RUN_S2S(NULL, "train", t.data, "-o", t.model, "--steps", "12", "--valid-every", "4",
                          SMALL_MODEL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    return t;
}

static void trained_free(Trained *t)
{
    rm_rf(t->dir);
    free(t->dir);
    free(t->data);
    free(t->model);
    free(t->log);
}

/* The "bleu", "chrf" and "lines" of `s2s eval MODEL TSV --json EXTRA`. */
static void eval_json(const char *model, const char *tsv, const char *extra, double *bleu,
                      double *chrf, int64_t *lines)
{
    RunResult r = extra ? RUN_S2S(NULL, "eval", model, tsv, "--json", extra, "1")
                        : RUN_S2S(NULL, "eval", model, tsv, "--json");
    cr_assert_eq(r.status, 0, "%s", r.err);
    Json doc;
    Err e;
    cr_assert_eq(json_parse(&doc, r.out, r.out_len, &e), 0, "%s", e.msg);
    cr_assert_eq(json_as_num(json_get(doc.root, "bleu"), bleu, &e), 0);
    cr_assert_eq(json_as_num(json_get(doc.root, "chrf"), chrf, &e), 0);
    cr_assert_eq(json_as_int(json_get(doc.root, "lines"), lines, &e), 0);
    json_free(&doc);
    run_free(&r);
}

/* The training steps of the model file (its history, as s2s info shows it). */
static long info_steps(const char *model)
{
    RunResult r = RUN_S2S(NULL, "info", model);
    cr_assert_eq(r.status, 0, "%s", r.err);
    const char *p = strstr(r.out, "\n  steps: ");
    cr_assert_not_null(p, "%s", r.out);
    long n = strtol(p + 10, NULL, 10);
    run_free(&r);
    return n;
}

/* Field k (0-based) of tab-separated line, freshly allocated. */
static char *field(const char *line, int k)
{
    for (int i = 0; i < k; i++) {
        line = strchr(line, '\t');
        cr_assert_not_null(line);
        line++;
    }
    return strndup(line, strcspn(line, "\t\n"));
}

static int count_char(const char *s, char c)
{
    int n = 0;
    for (; *s; s++)
        n += *s == c;
    return n;
}

Test(scripts, eval_appends_one_line_per_run)
{
    Trained t = train_tiny();
    char *res = strf("%s/results.tsv", t.dir), *tsv = strf("%s/test.tsv", t.data);
    RunResult r = RUN_PROG(NULL, "scripts/eval.sh", "-r", res, t.model);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert_str_eq(r.err, "");
    double bleu, chrf;
    int64_t lines;
    eval_json(t.model, tsv, NULL, &bleu, &chrf, &lines);
    char *want = strf("BLEU %.2f, chrF2 %.2f, perplexity ", bleu, chrf);
    cr_assert(strncmp(r.out, want, strlen(want)) == 0, "%s\nwanted %s", r.out, want);
    free(want);
    run_free(&r);

    r = RUN_PROG(NULL, "scripts/eval.sh", "-r", res, t.model, tsv, "--", "--beam", "1");
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    double bleu1, chrf1;
    int64_t lines1;
    eval_json(t.model, tsv, "--beam", &bleu1, &chrf1, &lines1);

    char *text = slurp(res, NULL);
    cr_assert_not_null(text);
    cr_assert_eq(count_char(text, '\n'), 3, "%s", text);
    const char *header = "date\tmodel\ttest\tconfig\tdecoding\tbleu\tchrf\tperplexity\tdecode_s\tlines\n";
    cr_assert(strncmp(text, header, strlen(header)) == 0, "%s", text);
    const char *l1 = text + strlen(header), *l2 = strchr(l1, '\n') + 1;
    char *first = strndup(l1, (size_t)(l2 - l1));
    cr_assert_eq(count_char(first, '\t'), 9);
    free(first);
    const struct {
        const char *line;
        int k;
        char *want;
    } checks[] = {
        {l1, 1, strf("%s", t.model)},
        {l1, 2, strf("%s", tsv)},
        {l1, 3, strf("gru 1x16 bidir emb 16 dec 16 bahdanau 16 out 16, %ld steps", info_steps(t.model))},
        {l1, 4, strf("beam 5, length penalty 1, int8")},
        {l1, 5, strf("%.2f", bleu)},
        {l1, 6, strf("%.2f", chrf)},
        {l1, 9, strf("%lld", (long long)lines)},
        {l2, 4, strf("beam 1, length penalty 1, int8 (--beam 1)")},
        {l2, 5, strf("%.2f", bleu1)},
        {l2, 6, strf("%.2f", chrf1)},
    };
    for (size_t k = 0; k < sizeof checks / sizeof *checks; k++) {
        char *got = field(checks[k].line, checks[k].k);
        cr_assert_str_eq(got, checks[k].want, "check %zu: %s vs %s", k, got, checks[k].want);
        free(got);
        free(checks[k].want);
    }
    char *date = field(l1, 0);
    cr_assert(strlen(date) == 20 && date[4] == '-' && date[10] == 'T' && date[19] == 'Z', "%s", date);
    free(date);
    free(text);
    free(res);
    free(tsv);
    trained_free(&t);
}

/* A Transformer's configuration in the results line: its own keys. */
Test(scripts, eval_names_a_transformer_configuration)
{
    char *dir = sample_prepared_dir();
    char *data = strf("%s/data", dir), *model = strf("%s/t.s2s", dir), *res = strf("%s/results.tsv", dir);
    RunResult r = RUN_S2S(NULL, "train", data, "-o", model, "--steps", "2", "--model-dim", "16", "--ff", "16",
                          "--layers", "1", "--heads", "2", "--threads", "1", "--quiet");
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    r = RUN_PROG(NULL, "scripts/eval.sh", "-r", res, model);
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    char *text = slurp(res, NULL);
    cr_assert_not_null(text);
    char *config = field(strchr(text, '\n') + 1, 3);
    cr_expect_str_eq(config, "transformer 1+1 d 16 ff 16 heads 2 pre-norm sinusoidal, 2 steps");
    free(config);
    free(text);
    free(res);
    free(model);
    free(data);
    rm_rf(dir);
    free(dir);
}

Test(scripts, eval_errors)
{
    char *dir = tmpdir_new(), *res = strf("%s/results.tsv", dir), *missing = strf("%s/none.s2s", dir);
    RunResult r = RUN_PROG(NULL, "scripts/eval.sh");
    cr_assert_eq(r.status, 2);
    cr_assert_str_eq(r.err, "eval.sh: expected MODEL [TSV], got 0 arguments (see scripts/eval.sh --help)\n");
    run_free(&r);
    r = RUN_PROG(NULL, "scripts/eval.sh", "-x", "m.s2s");
    cr_assert_eq(r.status, 2);
    cr_assert_str_eq(r.err, "eval.sh: unknown option '-x' (see scripts/eval.sh --help)\n");
    run_free(&r);
    r = RUN_PROG(NULL, "scripts/eval.sh", "-r", res, missing);
    cr_assert_eq(r.status, 1);
    char *want = strf("eval.sh: %s: no such model file\n", missing);
    cr_assert_str_eq(r.err, want);
    free(want);
    run_free(&r);
    r = RUN_PROG(NULL, "scripts/eval.sh", "--help");
    cr_assert_eq(r.status, 0);
    cr_assert(strncmp(r.out, "usage: scripts/eval.sh [-r RESULTS] MODEL [TSV]", 47) == 0, "%s", r.out);
    run_free(&r);
    cr_assert(!file_exists(res));
    rm_rf(dir);
    free(dir);
    free(res);
    free(missing);
}

static int have_gnuplot(void) { return system("command -v gnuplot >/dev/null 2>&1") == 0; }

Test(scripts, plot_training_draws_a_png)
{
    if (!have_gnuplot())
        cr_skip_test("gnuplot is not installed (Debian: gnuplot-nox): plot-training.sh not checked");
    Trained t = train_tiny();
    char *png = strf("%s/curves.png", t.dir);
    RunResult r = RUN_PROG(NULL, "scripts/plot-training.sh", t.log, png);
    cr_assert_eq(r.status, 0, "%s", r.err);
    char *log = slurp(t.log, NULL);
    int nvalid = 0;
    for (const char *p = log; (p = strstr(p, "\"event\": \"valid\"")); p++)
        nvalid++;
    cr_assert(nvalid >= 3);
    char *want = strf("plot-training.sh: %s: 12 steps, %d validations\n", png, nvalid);
    cr_assert_str_eq(r.out, want);
    cr_assert_str_eq(r.err, "");
    free(want);
    run_free(&r);
    size_t len;
    unsigned char *img = (unsigned char *)slurp(png, &len);
    cr_assert(img && len > 10000, "%zu bytes", len);
    cr_assert(memcmp(img, "\x89PNG\r\n\x1a\n", 8) == 0);
    /* IHDR: width and height, big-endian, at bytes 16 and 20 */
    unsigned w = (unsigned)img[16] << 24 | (unsigned)img[17] << 16 | (unsigned)img[18] << 8 | img[19];
    unsigned h = (unsigned)img[20] << 24 | (unsigned)img[21] << 16 | (unsigned)img[22] << 8 | img[23];
    cr_assert(w == 1000 && h == 1100, "%ux%u", w, h);
    free(img);
    cr_assert_eq(dir_count(t.dir), 6, "data, m.s2s, .last, .state, .log.jsonl, curves.png and no temporary: %d", dir_count(t.dir));

    /* errors: no such log, a file that is not a training log, arguments */
    char *missing = strf("%s/none.jsonl", t.dir), *other = strf("%s/data/test.tsv", t.dir);
    r = RUN_PROG(NULL, "scripts/plot-training.sh", missing, png);
    cr_assert_eq(r.status, 1);
    want = strf("plot-training.sh: %s: no such file\n", missing);
    cr_assert_str_eq(r.err, want);
    free(want);
    run_free(&r);
    r = RUN_PROG(NULL, "scripts/plot-training.sh", other, png);
    cr_assert_eq(r.status, 1);
    want = strf("plot-training.sh: %s: no training steps (is it the MODEL.log.jsonl of s2s train?)\n", other);
    cr_assert_str_eq(r.err, want);
    free(want);
    run_free(&r);
    r = RUN_PROG(NULL, "scripts/plot-training.sh", t.log);
    cr_assert_eq(r.status, 2);
    cr_assert_str_eq(r.err, "plot-training.sh: expected MODEL.log.jsonl OUT.png, got 1 arguments "
                            "(see scripts/plot-training.sh --help)\n");
    run_free(&r);
    free(missing);
    free(other);
    free(log);
    free(png);
    trained_free(&t);
}

/* --minutes: the valid BLEU of several logs against minutes, one panel. */
Test(scripts, plot_training_minutes_draws_several_logs)
{
    if (!have_gnuplot())
        cr_skip_test("gnuplot is not installed (Debian: gnuplot-nox): plot-training.sh not checked");
    Trained t = train_tiny();
    char *png = strf("%s/minutes.png", t.dir), *copy = strf("%s/other.log.jsonl", t.dir);
    char *log = slurp(t.log, NULL);
    write_file(copy, log);
    RunResult r = RUN_PROG(NULL, "scripts/plot-training.sh", "--minutes", png, t.log, copy);
    cr_assert_eq(r.status, 0, "%s", r.err);
    char *want = strf("plot-training.sh: %s: 2 logs\n", png);
    cr_assert_str_eq(r.out, want);
    free(want);
    run_free(&r);
    size_t len;
    unsigned char *img = (unsigned char *)slurp(png, &len);
    cr_assert(img && len > 5000 && memcmp(img, "\x89PNG\r\n\x1a\n", 8) == 0, "%zu bytes", len);
    unsigned w = (unsigned)img[16] << 24 | (unsigned)img[17] << 16 | (unsigned)img[18] << 8 | img[19];
    unsigned h = (unsigned)img[20] << 24 | (unsigned)img[21] << 16 | (unsigned)img[22] << 8 | img[23];
    cr_assert(w == 1000 && h == 600, "%ux%u", w, h);
    free(img);
    /* a log without validations, and too few arguments */
    write_file(copy, "{\"event\": \"start\", \"step\": 0}\n");
    r = RUN_PROG(NULL, "scripts/plot-training.sh", "--minutes", png, t.log, copy);
    cr_assert_eq(r.status, 1);
    want = strf("plot-training.sh: %s: no validation with a BLEU (is it the MODEL.log.jsonl of s2s train?)\n", copy);
    cr_assert_str_eq(r.err, want);
    free(want);
    run_free(&r);
    r = RUN_PROG(NULL, "scripts/plot-training.sh", "--minutes", png);
    cr_assert_eq(r.status, 2);
    cr_assert_str_eq(r.err, "plot-training.sh: --minutes expected OUT.png and at least one log, got 1 arguments "
                            "(see scripts/plot-training.sh --help)\n");
    run_free(&r);
    free(log);
    free(copy);
    free(png);
    trained_free(&t);
}

/* scripts/check-layers.sh on a tree of its own: a command or a server file that
   reaches a module below the header, directly or through a commands header, is named;
   the trainer's commands may; the tree as it stands passes. */
Test(scripts, check_layers_keeps_the_commands_on_the_header)
{
    RunResult r = RUN_PROG(NULL, "scripts/check-layers.sh");
    cr_expect_eq(r.status, 0, "%s%s", r.out, r.err);
    cr_expect(strstr(r.out, "check-layers: the layers hold; through include/s2s.h alone: src/serve/ and every command but"),
              "%s", r.out);
    run_free(&r);

    char *dir = tmpdir_new();
    const char *dirs[] = {"scripts", "src", "src/base", "src/decode", "src/serve", "include"};
    for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++) {
        char *d = strf("%s/%s", dir, dirs[i]);
        cr_assert_eq(mkdir(d, 0755), 0, "%s", d);
        free(d);
    }
    char *script = strf("%s/scripts/check-layers.sh", dir), *text = slurp("scripts/check-layers.sh", NULL);
    write_file(script, text);
    cr_assert_eq(chmod(script, 0755), 0);
    const char *files[][2] = {
        {"include/s2s.h", "/* the header */\n"},
        {"src/base/buf.h", "/* base */\n"},
        {"src/decode/beam.h", "#include \"base/buf.h\"\n"},
        {"src/serve/server.c", "#include \"base/buf.h\"\n#include \"s2s.h\"\n"},
        {"src/cmd_translate.c", "#include \"cmd_search.h\"\n#include \"serve/server.h\"\n"},
        {"src/cmd_search.h", "#include \"s2s.h\"\n#include \"decode/beam.h\"\n"},
        {"src/cmd_score.c", "#include \"decode/beam.h\"\n"},
        {"src/cmd_train.c", "#include \"decode/beam.h\"\n"},
        {"src/serve/server.h", "#include \"s2s.h\"\n"},
    };
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        char *p = strf("%s/%s", dir, files[i][0]);
        write_file(p, files[i][1]);
        free(p);
    }
    r = RUN_PROG(NULL, script);
    cr_expect_eq(r.status, 1);
    const char *note = " (the library's users include base/ and include/s2s.h only)\n";
    char *want = strf("src/cmd_score.c: includes src/decode/beam.h%s"
                      "src/cmd_search.h: includes src/decode/beam.h%s",
                      note, note);
    cr_expect_str_eq(r.out, want);
    free(want);
    run_free(&r);
    /* the commands header mended: what reached decode/ through it passes too */
    char *p = strf("%s/src/cmd_search.h", dir), *q = strf("%s/src/cmd_score.c", dir);
    write_file(p, "#include \"s2s.h\"\n");
    write_file(q, "#include \"cmd_search.h\"\n");
    r = RUN_PROG(NULL, script);
    cr_expect_eq(r.status, 0, "%s", r.out);
    run_free(&r);
    free(p);
    free(q);
    free(text);
    free(script);
    rm_rf(dir);
    free(dir);
}
