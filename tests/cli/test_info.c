/* End-to-end tests of `s2s info`. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "helpers.h"
#include "model_fixture.h"

static long long file_size(const char *path)
{
    struct stat st;
    cr_assert_eq(stat(path, &st), 0);
    return (long long)st.st_size;
}

#define CONFIG_EN_FR                                                              \
    "config:\n  cell: gru\n  layers: 1\n  bidir: true\n  emb: 16\n  hidden: 10\n"    \
    "  dec_hidden: 12\n  attn: 9\n  attention: bahdanau\n  heads: 1\n  local: none\n  window: 0\n  input_feed: false\n  bridge: linear\n  deep_out: 16\n"          \
    "  dropout: 0.1\n  label_smoothing: 0.1\n  tie_embeddings: false\n"             \
    "  direction: en-fr\n  src_lang: en\n  tgt_lang: fr\n  keep_case: false\n"

Test(cli_info, configuration_sizes_and_history)
{
    char *dir = tmpdir_new(), *path = strf("%s/m.s2s", dir);
    Model m;
    fixture_text_model(&m, 1);
    size_t total = 0;
    for (int i = 0; i < m.layout.n; i++)
        total += m.layout.info[i].size;
    cr_assert_eq(total, m.layout.total);
    cr_assert_eq(m.layout.total, 5558); /* the sizes of docs/model.md for these dimensions */
    fixture_save(path, &m, "{\"steps\": 120, \"best\": {\"valid_bleu\": 12.5, \"epoch\": 2}, "
                           "\"curve\": [1.5, 0.25, {\"a\": null}], \"note\": \"a\\tb\", "
                           "\"done\": true, \"empty\": {}}");
    RunResult r = RUN_S2S(NULL, "info", path);
    char *want = strf("file: %s\nsize: %lld bytes\ndirection: en-fr (en to fr)\nkeep_case: false\n"
                      "vocabulary: source 13, target 16\nparameters: %zu (24 tensors)\n"
                      CONFIG_EN_FR
                      "history:\n  steps: 120\n  best:\n    valid_bleu: 12.5\n    epoch: 2\n"
                      "  curve: [1.5, 0.25, {\"a\": null}]\n  note: \"a\\tb\"\n  done: true\n"
                      "  empty: {}\n",
                      path, file_size(path), m.layout.total);
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    cr_assert_str_eq(r.err, "");
    cr_assert_str_eq(r.out, want);
    run_free(&r);
    free(want);

    /* --tensors: one line per tensor after the rest. */
    r = RUN_S2S(NULL, "info", "--tensors", path);
    cr_assert_eq(r.status, 0);
    const char *t = strstr(r.out, "tensors:\n");
    cr_assert_not_null(t, "%s", r.out);
    t += strlen("tensors:\n");
    int lines = 0;
    size_t sum = 0;
    for (const char *p = t; *p; p = strchr(p, '\n') + 1) {
        const char *nl = strchr(p, '\n');
        cr_assert_not_null(nl);
        const char *last = nl;
        while (last > p && last[-1] != ' ')
            last--;
        sum += strtoul(last, NULL, 10);
        lines++;
    }
    cr_assert_eq(lines, m.layout.n);
    cr_assert_eq(sum, m.layout.total);
    cr_assert(strstr(t, "  src_emb.weight                   [13, 16]       208\n"), "%s", t);
    cr_assert(strstr(t, "  out.proj.bias                    [16]           16\n"), "%s", t);
    run_free(&r);

    model_free(&m);
    rm_rf(dir);
    free(path);
    free(dir);
}

Test(cli_info, fr_en_keep_case_without_history)
{
    char *dir = tmpdir_new(), *path = strf("%s/m.s2s", dir);
    Model m;
    fixture_model(&m, CELL_LSTM, 2, false, fixture_src_size(), fixture_tgt_size(), 2);
    Vocab *s, *t;
    fixture_vocabs(&s, &t);
    TextConfig tc = {.dir = DIRECTION_FR_EN, .keep_case = true};
    Err e;
    cr_assert_eq(model_file_save(path, &m, s, t, &tc, NULL, &e), 0, "%s", e.msg);
    RunResult r = RUN_S2S(NULL, "info", path);
    char *want = strf("file: %s\nsize: %lld bytes\ndirection: fr-en (fr to en)\nkeep_case: true\n"
                      "vocabulary: source 13, target 16\nparameters: %zu (%d tensors)\n"
                      "config:\n  cell: lstm\n  layers: 2\n  bidir: false\n  emb: 16\n  hidden: 10\n"
                      "  dec_hidden: 12\n  attn: 9\n  attention: bahdanau\n  heads: 1\n  local: none\n  window: 0\n  input_feed: false\n  bridge: linear\n  deep_out: 16\n"
                      "  dropout: 0.1\n  label_smoothing: 0.1\n  tie_embeddings: false\n"
                      "  direction: fr-en\n  src_lang: fr\n  tgt_lang: en\n  keep_case: true\n"
                      "history: {}\n",
                      path, file_size(path), m.layout.total, m.layout.n);
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    cr_assert_str_eq(r.out, want);
    run_free(&r);
    free(want);
    vocab_free(s);
    vocab_free(t);
    model_free(&m);
    rm_rf(dir);
    free(path);
    free(dir);
}

Test(cli_info, missing_foreign_and_corrupt_files)
{
    char *dir = tmpdir_new(), *path = strf("%s/m.s2s", dir);
    Model m;
    fixture_text_model(&m, 1);
    fixture_save(path, &m, NULL);
    model_free(&m);

    char *missing = strf("%s/none.s2s", dir);
    char *want = strf("s2s: %s: cannot open: No such file or directory\n", missing);
    RunResult r = RUN_S2S(NULL, "info", missing);
    expect_fail(&r, 1, want);
    free(want);

    char *text = strf("%s/notes.txt", dir);
    write_file(text, "hello world\n");
    want = strf("s2s: %s: not a model file: header length 8031924123371070824 is absurd (more than 100000000 bytes)\n",
                text);
    r = RUN_S2S(NULL, "info", text);
    expect_fail(&r, 1, want);
    free(want);
    write_file(text, "hi\n");
    want = strf("s2s: %s: truncated: no header length\n", text);
    r = RUN_S2S(NULL, "info", text);
    expect_fail(&r, 1, want);
    free(want);

    /* One flipped byte in the weights: the checksum catches it. */
    size_t len;
    char *data = slurp(path, &len);
    char *bad = strf("%s/bad.s2s", dir);
    data[len - 10] ^= 0x55;
    FILE *fp = fopen(bad, "wb");
    fwrite(data, 1, len, fp);
    fclose(fp);
    data[len - 10] ^= 0x55;
    want = strf("s2s: %s: checksum mismatch: the file is corrupted\n", bad);
    r = RUN_S2S(NULL, "info", bad);
    expect_fail(&r, 1, want);
    free(want);

    /* Cut in half. */
    fp = fopen(bad, "wb");
    fwrite(data, 1, len / 2, fp);
    fclose(fp);
    r = RUN_S2S(NULL, "info", bad);
    cr_assert_eq(r.status, 1);
    char *prefix = strf("s2s: %s: ", bad);
    cr_assert(strncmp(r.err, prefix, strlen(prefix)) == 0, "%s", r.err);
    cr_assert(strstr(r.err, "truncated file?)\n") && strchr(r.err, '\n')[1] == '\0', "%s", r.err);
    cr_assert_str_eq(r.out, "");
    run_free(&r);

    r = RUN_S2S(NULL, "info");
    expect_fail(&r, 2, "s2s: info: missing MODEL argument (see 's2s info --help')\n");
    r = RUN_S2S(NULL, "info", path, "--bogus");
    expect_fail(&r, 2, "s2s: info: unknown option '--bogus' (see 's2s info --help')\n");
    r = RUN_S2S(NULL, "info", path, "other");
    expect_fail(&r, 2, "s2s: info: unexpected argument 'other' (see 's2s info --help')\n");
    r = RUN_S2S(NULL, "info", path, "--tensors=yes");
    expect_fail(&r, 2, "s2s: info: option --tensors takes no value\n");

    free(prefix);
    free(bad);
    free(data);
    free(text);
    free(missing);
    rm_rf(dir);
    free(path);
    free(dir);
}

/* What is not a regular file is refused at once, without waiting for a writer or
   reading endless data: a FIFO (no writer), a device, a directory. translate and
   average load models the same way. */
Test(cli_info, a_pipe_a_device_or_a_directory_is_refused_at_once)
{
    char *dir = tmpdir_new(), *fifo = strf("%s/fifo.s2s", dir);
    cr_assert_eq(mkfifo(fifo, 0600), 0);
    RunResult r = RUN_S2S(NULL, "info", fifo);
    cr_expect_eq(r.status, 1);
    char *want = strf("s2s: %s: not a regular file (a pipe); a model or state is read from a file\n", fifo);
    cr_expect_str_eq(r.err, want);
    run_free(&r);
    r = RUN_S2S(NULL, "info", "/dev/zero");
    cr_expect_eq(r.status, 1);
    cr_expect_str_eq(r.err, "s2s: /dev/zero: not a regular file (a device or socket); a model or state is read "
                            "from a file\n");
    run_free(&r);
    r = RUN_S2S(NULL, "translate", "/dev/zero", "Hello.");
    cr_expect_eq(r.status, 1);
    cr_expect(strstr(r.err, "/dev/zero: not a regular file (a device or socket)"), "%s", r.err);
    run_free(&r);
    r = RUN_S2S(NULL, "info", dir);
    cr_expect_eq(r.status, 1);
    free(want);
    want = strf("s2s: %s: not a regular file (a directory); a model or state is read from a file\n", dir);
    cr_expect_str_eq(r.err, want);
    run_free(&r);
    free(want);
    free(fifo);
    rm_rf(dir);
    free(dir);
}
