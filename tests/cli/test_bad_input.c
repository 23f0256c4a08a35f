/* Bad input to every user-facing parser, end to end, one table per parser: the exact
   one-line message, the exit status, an empty stdout, and nothing written. Inputs
   already covered elsewhere are not repeated here: the corpus reader's line faults
   for prepare (cli_prepare.bad_corpus_lines, bad_options), the vocabulary parser
   (vocab.load_errors_name_file_and_line), the safetensors reader
   (safetensors.*), translate's empty lines and invalid UTF-8 (cli_translate). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bad_models.h"
#include "base/buf.h"
#include "helpers.h"
#include "model_fixture.h"

/* Checks one run and frees it; `what` names the table row in failure messages. */
static void expect_case(RunResult *r, int status, const char *out, const char *err,
                        const char *what)
{
    cr_expect_eq(r->status, status, "%s: status %d, stderr: %s", what, r->status, r->err);
    cr_expect_str_eq(r->err, err, "%s: stderr\n  %s\nwanted\n  %s", what, r->err, err);
    cr_expect_str_eq(r->out, out, "%s: stdout: %s", what, r->out);
    run_free(r);
}

/* ======================================================= corpus files */

typedef struct CorpusRow {
    const char *what;
    const char *data;
    size_t len;
    const char *msg; /* %s: the corpus path */
} CorpusRow;
#define CROW(what, lit, msg) {what, lit, sizeof(lit) - 1, msg}

static const CorpusRow corpus_rows[] = {
    CROW("empty file", "", "%s: no sentence pairs"),
    CROW("only blank lines", "\n   \n\r\n\n", "%s: no sentence pairs"),
    CROW("zip archive", "PK\x03\x04\x14\x00\x00\x00\x08\x00\x1c\x7b", "%s:1: NUL byte at byte 6"),
    CROW("truncated gzip file", "\x1f\x8b\x08\x00\x00\x00\x00\x00", "%s: corrupt gzip data (unexpected end of file)"),
    CROW("UTF-16 text", "\xff\xfeG\0o\0.\0\t\0V\0a\0", "%s:1: invalid UTF-8 at byte 1"),
    CROW("one column", "Go.\tVa !\nHello.\n", "%s:2: only one column (expected English<TAB>French)"),
    CROW("Latin-1 text", "Go.\tVa !\nSummer.\t\xc9t\xe9.\n", "%s:2: invalid UTF-8 at byte 9"),
    CROW("NUL byte in a line", "Go.\tVa !\nHi.\tSa\0lut\n", "%s:2: NUL byte at byte 7"),
};

/* prepare CORPUS -o DIR and train CORPUS -o MODEL fail alike, and write nothing (no
   DIR, no MODEL.d, no MODEL files). */
static void expect_corpus_refused(const char *what, const char *data, size_t len, const char *msg)
{
    char *dir = tmpdir_new();
    char *corpus = strf("%s/corpus.txt", dir), *out = strf("%s/out", dir),
         *model = strf("%s/m.s2s", dir);
    write_bytes(corpus, data, len);
    char *m = strf(msg, corpus);
    char *want = strf("s2s: %s\n", m);
    RunResult r = RUN_S2S(NULL, "prepare", corpus, "-o", out);
    expect_case(&r, 1, "", want, what);
    cr_expect_eq(dir_count(dir), 1, "%s: prepare wrote something", what);
    r = RUN_S2S(NULL, "train", corpus, "-o", model, "--quiet");
    expect_case(&r, 1, "", want, what);
    cr_expect_eq(dir_count(dir), 1, "%s: train wrote something", what);
    free(want);
    free(m);
    rm_rf(dir);
    free(model);
    free(out);
    free(corpus);
    free(dir);
}

Test(bad_input, corpus_files)
{
    for (size_t i = 0; i < sizeof corpus_rows / sizeof *corpus_rows; i++)
        expect_corpus_refused(corpus_rows[i].what, corpus_rows[i].data, corpus_rows[i].len,
                              corpus_rows[i].msg);
}

/* Lines may be up to 16 MiB long (FILE_MAX_LINE). A 10 MB line of 5 million tokens
   is a pair like any other, dropped by --max-len (50 tokens by default); a line of one
   long word is one token and is kept (1 MB lines below, to stay fast); a longer line
   stops the read with one line naming it. */
Test(bad_input, corpus_huge_lines)
{
    Buf big = {0};
    for (int i = 0; i < 5000000; i++)
        buf_puts(&big, "a ");
    buf_puts(&big, "\tb\n");
    cr_assert_eq(big.len, 10000003);
    expect_corpus_refused("10 MB line", big.data, big.len,
                          "%s: no pairs left: all 1 have more than 50 tokens on a side "
                          "(see --max-len)");

    char *dir = tmpdir_new();
    char *corpus = strf("%s/corpus.txt", dir), *out = strf("%s/out", dir);
    Buf over = {0};
    buf_puts(&over, "the cat\tle chat\n");
    for (int i = 0; i < (1 << 24) + 1; i++)
        buf_putc(&over, 'w');
    buf_puts(&over, "\tmot\n");
    write_bytes(corpus, over.data, over.len);
    buf_free(&over);
    RunResult ro = RUN_S2S(NULL, "prepare", corpus, "-o", out);
    cr_expect_eq(ro.status, 1);
    char *want = strf("s2s: %s:2: a line longer than 16777216 bytes (not a text file?)\n", corpus);
    cr_expect_str_eq(ro.err, want);
    cr_expect(!file_exists(out), "%s written", out);
    free(want);
    run_free(&ro);
    Buf c = {0};
    for (int i = 0; i < 6; i++)
        buf_puts(&c, "the cat\tle chat\n");
    buf_append(&c, big.data + big.len - 1000003, 1000003); /* 500000 tokens */
    buf_puts(&c, "the dog\tle chien\n");
    for (int i = 0; i < 1000000; i++)
        buf_putc(&c, 'w');
    buf_puts(&c, "\tmot\n");
    write_bytes(corpus, c.data, c.len);
    RunResult r = RUN_S2S(NULL, "prepare", corpus, "-o", out, "--valid", "0", "--test", "0");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.err, "prepare: 9 pairs read, 1 longer than 50 tokens dropped, 8 kept\n"),
              "%s", r.err);
    run_free(&r);
    char *train = strf("%s/train.tsv", out);
    size_t len;
    char *text = slurp(train, &len);
    cr_assert_not_null(text);
    cr_expect_eq(len, 6 * 16 + 17 + 1000000 + 5, "train.tsv holds %zu bytes", len);
    free(text);
    free(train);
    buf_free(&c);
    buf_free(&big);
    rm_rf(dir);
    free(out);
    free(corpus);
    free(dir);
}

/* ======================================================= a prepare directory for train */

#define SPECIALS "<pad>\t0\n<unk>\t0\n<bos>\t0\n<eos>\t0\n"

static const struct {
    const char *name, *text;
} prepared_files[] = {
    {"prepare.json", "{\"options\": {\"direction\": \"en-fr\", \"keep_case\": true}}\n"},
    {"vocab.src", SPECIALS "cat\t2\n"},
    {"vocab.tgt", SPECIALS "chat\t2\n"},
    {"train.tsv", "cat\tchat\ncat\tchat\n"},
    {"valid.tsv", ""},
};

static void write_prepared(const char *dir)
{
    for (size_t i = 0; i < sizeof prepared_files / sizeof *prepared_files; i++) {
        char *p = strf("%s/%s", dir, prepared_files[i].name);
        write_file(p, prepared_files[i].text);
        free(p);
    }
}

typedef struct PrepRow {
    const char *file; /* the file of the prepare directory replaced */
    const char *data; /* NULL: the file is removed */
    size_t len;
    const char *msg;  /* %s: the directory */
} PrepRow;
#define PROW(file, lit, msg) {file, lit, sizeof(lit) - 1, msg}

static const PrepRow prep_rows[] = {
    PROW("vocab.src", "", "%s/vocab.src: missing special token '<pad>' (expected on line 1)"),
    PROW("vocab.src", SPECIALS "cat\n", "%s/vocab.src:5: malformed line (expected TOKEN<TAB>COUNT)"),
    PROW("vocab.src", SPECIALS "cat\t2\tx\n",
         "%s/vocab.src:5: malformed line (expected TOKEN<TAB>COUNT)"),
    PROW("vocab.src", SPECIALS "cat\ttwo\n",
         "%s/vocab.src:5: count 'two' is not a non-negative integer"),
    PROW("vocab.src", SPECIALS "cat\t-2\n", "%s/vocab.src:5: count '-2' is not a non-negative integer"),
    PROW("vocab.src", SPECIALS "cat\t2\ndog\t1\ncat\t1\n",
         "%s/vocab.src:7: duplicate token 'cat' (first on line 5)"),
    PROW("vocab.src", "cat\t2\n",
         "%s/vocab.src:1: expected special token '<pad>' on line 1, found 'cat'"),
    PROW("vocab.src", "<pad>\t0\n<unk>\t0\n",
         "%s/vocab.src: missing special token '<bos>' (expected on line 3)"),
    PROW("vocab.src", SPECIALS "ch\xe2t\t2\n", "%s/vocab.src:5: invalid UTF-8 at byte 3"),
    PROW("vocab.src", SPECIALS "c\0t\t2\n", "%s/vocab.src:5: NUL byte at byte 2"),
    PROW("vocab.src", SPECIALS,
         "%s: vocabularies must hold the 4 specials and at least one token (source 4, target 5)"),
    PROW("vocab.tgt", SPECIALS "chat\t2\nchat\t2\n",
         "%s/vocab.tgt:6: duplicate token 'chat' (first on line 5)"),
    {"vocab.src", NULL, 0, "%s/vocab.src: cannot open: No such file or directory"},
    PROW("prepare.json", "{}",
         "%s/prepare.json: not written by 's2s prepare' (options.direction and options.keep_case "
         "expected)"),
    PROW("prepare.json", "{\"options\": ", "%s/prepare.json: JSON: expected a value at byte 12 (end of input)"),
    PROW("train.tsv", "cat\tchat\ncat\n", "%s/train.tsv:2: only one column (expected English<TAB>French)"),
};

#define TINY "--emb", "4", "--hidden", "4", "--dec-hidden", "4", "--attn-size", "4", \
             "--deep-out", "4", "--threads", "1", "--quiet"

Test(bad_input, prepare_directory_files)
{
    /* The directory as written trains (one step). */
    char *dir = tmpdir_new();
    char *data = strf("%s/data", dir), *models = strf("%s/models", dir);
    char *model = strf("%s/m.s2s", models);
    char *cmd = strf("mkdir '%s' '%s'", data, models);
    cr_assert_eq(system(cmd), 0);
    write_prepared(data);
    RunResult r = RUN_S2S(NULL, "train", data, "-o", model, "--steps", "1", TINY);
    expect_case(&r, 0, "", "", "the good directory");
    cr_assert_eq(dir_count(models), 4); /* m.s2s .last .state .log.jsonl */
    rm_rf(models);
    free(cmd);
    cmd = strf("mkdir '%s'", models);
    cr_assert_eq(system(cmd), 0);

    for (size_t i = 0; i < sizeof prep_rows / sizeof *prep_rows; i++) {
        const PrepRow *row = &prep_rows[i];
        write_prepared(data);
        char *path = strf("%s/%s", data, row->file);
        if (row->data)
            write_bytes(path, row->data, row->len);
        else
            cr_assert_eq(remove(path), 0);
        char *m = strf(row->msg, data), *want = strf("s2s: %s\n", m);
        char *what = strf("row %zu (%s)", i, row->file);
        r = RUN_S2S(NULL, "train", data, "-o", model, "--steps", "1", TINY);
        expect_case(&r, 1, "", want, what);
        cr_expect_eq(dir_count(models), 0, "%s: train wrote something", what);
        free(what);
        free(want);
        free(m);
        free(path);
    }
    rm_rf(dir);
    free(cmd);
    free(model);
    free(models);
    free(data);
    free(dir);
}

/* ======================================================= model files */

/* Each damaged model through translate (-o), info or eval (--out): the loader's
   message with "s2s: ", exit 1, nothing on stdout, no output file. One test per
   command, so that they run in parallel. */
static void model_files_through(const char *cmd)
{
    char *dir = tmpdir_new();
    BadModels b = bad_models_make(dir);
    char *bad = strf("%s/bad.s2s", dir), *tsv = strf("%s/test.tsv", dir),
         *out = strf("%s/out.txt", dir);
    write_file(tsv, "the cat\tle chat\n");
    const char *args[7] = {cmd, NULL};
    if (strcmp(cmd, "translate") == 0) {
        args[2] = "the cat";
        args[3] = "-o";
        args[4] = out;
    } else if (strcmp(cmd, "eval") == 0) {
        args[2] = tsv;
        args[3] = "--out";
        args[4] = out;
    }

    /* The file they come from works. */
    args[1] = b.good;
    RunResult r = run_s2s(NULL, args);
    cr_expect_eq(r.status, 0, "the good file: %s", r.err);
    run_free(&r);
    remove(out);

    args[1] = bad;
    for (size_t i = 0; i < b.n; i++) {
        const BadModel *v = &b.v[i];
        bad_models_write(bad, v->bytes, v->len);
        char *want = strf("s2s: %s: %s\n", bad, v->msg);
        r = run_s2s(NULL, args);
        expect_case(&r, 1, "", want, v->what);
        cr_expect_eq(dir_count(dir), 3, "%s: an output was written", v->what);
        free(want);
    }

    /* No file, and a directory. */
    cr_assert_eq(remove(bad), 0);
    r = run_s2s(NULL, args);
    char *want = strf("s2s: %s: cannot open: No such file or directory\n", bad);
    expect_case(&r, 1, "", want, "no file");
    free(want);
    args[1] = dir;
    r = run_s2s(NULL, args);
    want = strf("s2s: %s: not a regular file (a directory); a model or state is read from a file\n", dir);
    expect_case(&r, 1, "", want, "a directory");
    free(want);
    cr_expect_eq(dir_count(dir), 2);

    bad_models_free(&b);
    rm_rf(dir);
    free(out);
    free(tsv);
    free(bad);
    free(dir);
}

Test(bad_input, model_files_translate) { model_files_through("translate"); }
Test(bad_input, model_files_info) { model_files_through("info"); }
Test(bad_input, model_files_eval) { model_files_through("eval"); }

/* MODEL.state as written by train is refused by the commands that read models. */
Test(bad_input, training_state_is_not_a_model)
{
    char *dir = tmpdir_new();
    char *data = strf("%s/data", dir), *model = strf("%s/m.s2s", dir);
    char *cmd = strf("mkdir '%s'", data);
    cr_assert_eq(system(cmd), 0);
    write_prepared(data);
    RunResult r = RUN_S2S(NULL, "train", data, "-o", model, "--steps", "1", TINY);
    expect_case(&r, 0, "", "", "train");
    char *state = strf("%s.state", model), *tsv = strf("%s/train.tsv", data),
         *out = strf("%s/out.txt", dir);
    char *want = strf("s2s: %s: not an s2s model (format 's2s-state-1', expected 's2s-model-1'); "
                      "of a training state 's2s average STATE -o OUT' makes one\n", state);
    r = RUN_S2S(NULL, "translate", state, "cat", "-o", out);
    expect_case(&r, 1, "", want, "translate");
    r = RUN_S2S(NULL, "info", state);
    expect_case(&r, 1, "", want, "info");
    r = RUN_S2S(NULL, "eval", state, tsv, "--out", out);
    expect_case(&r, 1, "", want, "eval");
    cr_expect(!file_exists(out));
    free(want);
    free(out);
    free(tsv);
    free(state);
    rm_rf(dir);
    free(cmd);
    free(model);
    free(data);
    free(dir);
}

/* ======================================================= command lines */

/* Arguments starting with "@/" are paths in a fresh directory, which must stay empty. */
typedef struct ArgRow {
    const char *args[12];
    const char *msg; /* stderr without "s2s: " and the newline */
} ArgRow;

static const ArgRow arg_rows[] = {
    /* prepare (more in cli_prepare.bad_options and missing_arguments_and_missing_file) */
    {{"prepare", "", "-o", "@/out"}, "prepare: empty CORPUS argument (see 's2s prepare --help')"},
    {{"prepare", "@/c.txt", "-o", ""}, "prepare: option -o has an empty value"},
    {{"prepare", "@/c.txt", "--output="}, "prepare: option --output has an empty value"},
    {{"prepare", "@/c.txt", "-o", "@/out", "--seed", "99999999999999999999"},
     "prepare: option --seed must be between 0 and 9223372036854775807, got 99999999999999999999"},
    {{"prepare", "@/c.txt", "-o", "@/out", "--test", "1.5"},
     "prepare: option --test expects an integer, got '1.5'"},
    {{"prepare", "@/c.txt", "-o", "@/out", "--direction"}, "prepare: option --direction needs a value"},
    {{"prepare", "@/c.txt", "-o", "@/out", "--skip-bad=no"}, "prepare: option --skip-bad takes no value"},
    {{"prepare", "@/c.txt", "-o", "@/out", "--min-freq", "-3"},
     "prepare: option --min-freq must be between 1 and 1000000000, got -3"},
    /* train (more in train.usage_errors_exit_2) */
    {{"train", "", "-o", "@/m"}, "train: empty DATA argument (see 's2s train --help')"},
    {{"train", "@/d", "-o", ""}, "train: option -o has an empty value"},
    {{"train", "@/d", "more", "-o", "@/m"}, "train: unexpected argument 'more' (see 's2s train --help')"},
    {{"train", "@/d", "-o", "@/m", "--lr"}, "train: option --lr needs a value"},
    {{"train", "@/d", "-o", "@/m", "--lr", "fast"}, "train: option --lr expects a number, got 'fast'"},
    {{"train", "@/d", "-o", "@/m", "--lr", "nan"}, "train: option --lr expects a number, got 'nan'"},
    {{"train", "@/d", "-o", "@/m", "--lr", "1e999"},
     "train: option --lr must be between 0 and 10, got 1e999"},
    {{"train", "@/d", "-o", "@/m", "--dropout", "1"},
     "train: option --dropout must be between 0 and 0.99, got 1"},
    {{"train", "@/d", "-o", "@/m", "--cell", "gru", "--layers", "5"},
     "train: option --layers must be between 1 and 4, got 5"},
    {{"train", "@/d", "-o", "@/m", "--layers", "13"}, "train: option --layers must be between 1 and 12, got 13"},
    {{"train", "@/d", "-o", "@/m", "--epochs", "1e3"}, "train: option --epochs expects an integer, got '1e3'"},
    {{"train", "@/d", "-o", "@/m", "--steps", "99999999999999999999"},
     "train: option --steps must be between 0 and 9223372036854775807, got 99999999999999999999"},
    {{"train", "@/d", "-o", "@/m", "--threads", "0"},
     "train: option --threads must be between 1 and 1024, got 0"},
    {{"train", "@/d", "-o", "@/m", "--quiet=yes"}, "train: option --quiet takes no value"},
    {{"train", "@/d", "-o", "@/m", "--batch", "0"}, "train: --batch 0 needs --batch-tokens N"},
    {{"train", "@/d", "-o", "@/m", "--lr-schedule", "cosine"},
     "train: option --lr-schedule must be constant, warmup-decay, warmup-cosine or plateau, got 'cosine'"},
    {{"train", "@/d", "-o", "@/m", "--tie-embeddings", "--deep-out", "128"},
     "train: --tie-embeddings needs --deep-out equal to --emb (128 != 256)"},
    /* translate (more in cli_translate.usage_errors) */
    {{"translate", ""}, "translate: empty MODEL argument (see 's2s translate --help')"},
    {{"translate", "@/m.s2s", "-i"}, "translate: option -i needs a value"},
    {{"translate", "@/m.s2s", "-o", "", "hello"}, "translate: option -o has an empty value"},
    {{"translate", "@/m.s2s", "--max-len", "10001"},
     "translate: option --max-len must be between 1 and 10000, got 10001"},
    {{"translate", "@/m.s2s", "--batch", "1e2"}, "translate: option --batch expects an integer, got '1e2'"},
    {{"translate", "@/m.s2s", "--threads", "-1"},
     "translate: option --threads must be between 1 and 1024, got -1"},
    {{"translate", "@/m.s2s", "--beams", "4"}, "translate: unknown option '--beams' (see 's2s translate --help')"},
    {{"translate", "@/m.s2s", "--beam", "0"}, "translate: option --beam must be between 1 and 100, got 0"},
    {{"translate", "@/m.s2s", "--nbest", "3", "--beam", "2"},
     "translate: option --nbest must not exceed --beam (3 > 2)"},
    {{"translate", "@/m.s2s", "--nbest", "6"}, "translate: option --nbest must not exceed --beam (6 > 5)"},
    {{"translate", "@/m.s2s", "--length-penalty", "-0.5"},
     "translate: option --length-penalty must be between 0 and 10, got -0.5"},
    {{"translate", "@/m.s2s", "--length-penalty", "nan"},
     "translate: option --length-penalty expects a number, got 'nan'"},
    {{"translate", "@/m.s2s", "--replace-unk=yes"}, "translate: option --replace-unk takes no value"},
    {{"translate", "@/m.s2s", "--show-attention=1"}, "translate: option --show-attention takes no value"},
    {{"translate", "@/m.s2s", "--attention-svg"}, "translate: option --attention-svg needs a value"},
    /* eval (more in cli_eval.errors) */
    {{"eval"}, "eval: missing MODEL argument (see 's2s eval --help')"},
    {{"eval", "", "@/t.tsv"}, "eval: empty MODEL argument (see 's2s eval --help')"},
    {{"eval", "@/m.s2s", ""}, "eval: empty TSV argument (see 's2s eval --help')"},
    {{"eval", "@/m.s2s", "@/t.tsv", "--out"}, "eval: option --out needs a value"},
    {{"eval", "@/m.s2s", "@/t.tsv", "--out="}, "eval: option --out has an empty value"},
    {{"eval", "@/m.s2s", "@/t.tsv", "--batch", "0"}, "eval: option --batch must be between 1 and 100000, got 0"},
    {{"eval", "@/m.s2s", "@/t.tsv", "--max-len", "ten"}, "eval: option --max-len expects an integer, got 'ten'"},
    {{"eval", "@/m.s2s", "@/t.tsv", "--threads", "2000"},
     "eval: option --threads must be between 1 and 1024, got 2000"},
    /* info (more in cli_info.missing_foreign_and_corrupt_files) */
    {{"info", ""}, "info: empty MODEL argument (see 's2s info --help')"},
    {{"info", "@/m.s2s", "--tensors="}, "info: option --tensors takes no value"},
    {{"info", "-t", "@/m.s2s"}, "info: unknown option '-t' (see 's2s info --help')"},
    /* tokenize (more in cli_tokenize.usage_errors) */
    {{"tokenize", "--lang", ""}, "tokenize: option --lang has an empty value"},
    {{"tokenize", "--detok=yes"}, "tokenize: option --detok takes no value"},
    {{"tokenize", "-"}, "tokenize: unexpected argument '-' (see 's2s tokenize --help')"},
};

Test(bad_input, command_lines)
{
    char *dir = tmpdir_new();
    for (size_t i = 0; i < sizeof arg_rows / sizeof *arg_rows; i++) {
        const ArgRow *row = &arg_rows[i];
        const char *args[13] = {0};
        char *owned[12] = {0};
        Buf what = {0};
        for (int k = 0; row->args[k]; k++) {
            const char *a = row->args[k];
            if (strncmp(a, "@/", 2) == 0)
                a = owned[k] = strf("%s/%s", dir, a + 2);
            args[k] = a;
            buf_printf(&what, "%s'%s'", k ? " " : "", row->args[k]);
        }
        char *want = strf("s2s: %s\n", row->msg);
        RunResult r = run_s2s("x\n", args);
        expect_case(&r, 2, "", want, what.data);
        cr_expect_eq(dir_count(dir), 0, "%s: something was written", what.data);
        free(want);
        buf_free(&what);
        for (int k = 0; k < 12; k++)
            free(owned[k]);
    }
    rm_rf(dir);
    free(dir);
}

/* ======================================================= translate input */

/* The chain model: every line with a token translates to CHAIN_OUT. */
static char *chain_model(const char *dir)
{
    char *path = strf("%s/chain.s2s", dir);
    Model m;
    fixture_text_model(&m, 9);
    fixture_chain_text(&m);
    fixture_save(path, &m, NULL);
    model_free(&m);
    return path;
}

typedef struct InputRow {
    const char *what;
    const char *data;
    size_t len;
    int status;
    const char *out; /* stdout */
    const char *msg; /* stderr after "s2s: ", %s: the input file; NULL: none */
} InputRow;
#define IROW(what, lit, status, out, msg) {what, lit, sizeof(lit) - 1, status, out, msg}

static const InputRow input_rows[] = {
    IROW("only unknown words", "zebra qwerty xylophone\n", 0, CHAIN_OUT "\n", NULL),
    IROW("only control characters and zero-width spaces", "the cat\n\x01\x02\xe2\x80\x8b\x7f\n", 0,
         CHAIN_OUT "\n\n", NULL),
    IROW("NUL byte inside a line", "the cat\nab\0cd\n", 1, "", "%s:2: NUL byte at byte 3"),
    IROW("NUL byte at the start", "\0the cat\n", 1, "", "%s:1: NUL byte at byte 1"),
    IROW("invalid UTF-8 before a NUL byte", "a\xff\0b\n", 1, "", "%s:1: invalid UTF-8 at byte 2"),
    IROW("UTF-16 text", "\xff\xfeh\0i\0\n\0", 1, "", "%s:1: invalid UTF-8 at byte 1"),
};

/* Rows through -i FILE -o OUT (OUT appears only on success). */
Test(bad_input, translate_input_files)
{
    char *dir = tmpdir_new();
    char *model = chain_model(dir);
    char *in = strf("%s/in.txt", dir), *out = strf("%s/out.txt", dir);
    for (size_t i = 0; i < sizeof input_rows / sizeof *input_rows; i++) {
        const InputRow *row = &input_rows[i];
        write_bytes(in, row->data, row->len);
        char *m = row->msg ? strf(row->msg, in) : NULL;
        char *want = m ? strf("s2s: %s\n", m) : strf("%s", "");
        RunResult r = RUN_S2S(NULL, "translate", model, "-i", in);
        expect_case(&r, row->status, row->out, want, row->what);
        r = RUN_S2S(NULL, "translate", model, "-i", in, "-o", out);
        expect_case(&r, row->status, "", want, row->what);
        if (row->status == 0) {
            char *got = slurp(out, NULL);
            cr_expect_str_eq(got, row->out, "%s: -o file", row->what);
            free(got);
            cr_assert_eq(remove(out), 0);
        }
        cr_expect_eq(dir_count(dir), 2, "%s: an output was written", row->what);
        free(want);
        free(m);
    }
    free(out);
    free(in);
    free(model);
    rm_rf(dir);
    free(dir);
}

/*
 * A long line. Decoding keeps every step of a sentence in memory (the attention weights,
 * T·S floats for S source and T output tokens, and the states), so a line longer than one
 * sentence's decoding budget allows (DECODE_WORK_BUDGET) is refused, naming it, before
 * anything is decoded; this model takes 8096 tokens (3568 with beam 5) with the default
 * output limit 2·S + 10. An
 * explicit --max-len bounds T and lets the same line through. A very long single word
 * is one unknown token.
 */
Test(bad_input, translate_long_lines)
{
    char *dir = tmpdir_new();
    char *model = chain_model(dir);
    Buf in = {0};
    buf_puts(&in, "the cat\n");
    for (int i = 0; i < 100000; i++)
        buf_puts(&in, "the ");
    buf_putc(&in, '\n');
    RunResult r = RUN_S2S(in.data, "translate", model);
    expect_case(&r, 1, "", "s2s: <stdin>:2: too long to translate: 100000 tokens (at most 3568 "
                          "for this model, beam size and output length limit)\n", "100000 tokens");
    r = RUN_S2S(in.data, "translate", model, "--beam", "1");
    expect_case(&r, 1, "", "s2s: <stdin>:2: too long to translate: 100000 tokens (at most 8096 "
                          "for this model, beam size and output length limit)\n", "100000 tokens, beam 1");
    r = RUN_S2S(in.data, "translate", model, "--max-len", "3");
    expect_case(&r, 0, "j'ai vu\nj'ai vu\n", "", "100000 tokens, --max-len 3");

    /* eval names the TSV line, and writes no --out file. */
    char *tsv = strf("%s/test.tsv", dir), *hyp = strf("%s/hyp.txt", dir);
    buf_clear(&in);
    buf_puts(&in, "the cat\tle chat\n");
    for (int i = 0; i < 5000; i++)
        buf_puts(&in, "the ");
    buf_puts(&in, "\tle\n");
    write_file(tsv, in.data);
    r = RUN_S2S(NULL, "eval", model, tsv, "--out", hyp);
    char *want = strf("s2s: %s:2: too long to translate: 5000 tokens (at most 3568 for this model, "
                      "beam size and output length limit)\n", tsv);
    expect_case(&r, 1, "", want, "eval, 5000 tokens");
    cr_expect(!file_exists(hyp));
    free(want);

    buf_clear(&in);
    for (int i = 0; i < 1000000; i++)
        buf_putc(&in, 'w');
    buf_putc(&in, '\n');
    r = RUN_S2S(in.data, "translate", model);
    expect_case(&r, 0, CHAIN_OUT "\n", "", "a 1 MB word");

    buf_free(&in);
    free(hyp);
    free(tsv);
    free(model);
    rm_rf(dir);
    free(dir);
}
