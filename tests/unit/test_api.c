/*
 * The library's public interface (include/s2s.h) in-process: translations equal
 * `s2s translate`'s on the same inputs (best and n-best, at 1 and 2 threads, ensembles,
 * constraints, glossaries), scores equal `s2s score`'s, tokens `s2s tokenize`'s, the
 * model's description `s2s info`'s; errors are values with the command's message; two
 * models in one process, and one model on several threads at once, give each call the
 * result it gets alone. tests/cli/test_library.c checks an installed copy from outside
 * (make install, pkg-config), and the Python module.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/scores.h"
#include "helpers.h"
#include "model_fixture.h"
#include "s2s.h"

#define RNN "tests/recorded/rnn.s2s"
#define TF "tests/recorded/tf.s2s"

/* Source lines: the first N English sentences of data/sample.tsv, then lines of two
   sentences, an empty and a blank one. */
enum { NSAMPLE = 24, NTEXTS = NSAMPLE + 4 };

typedef struct Texts {
    char *data;
    const char *t[NTEXTS];
} Texts;

static Texts texts_new(void)
{
    Texts x = {slurp("data/sample.tsv", NULL), {0}};
    cr_assert(x.data);
    char *p = x.data;
    for (int i = 0; i < NSAMPLE; i++) {
        char *tab = strchr(p, '\t'), *nl = strchr(p, '\n');
        cr_assert(tab && nl && tab < nl);
        *tab = '\0';
        x.t[i] = p;
        p = nl + 1;
    }
    x.t[NSAMPLE] = "I have a cat. Where is the station?";
    x.t[NSAMPLE + 1] = "Tom is here! He is late.";
    x.t[NSAMPLE + 2] = "";
    x.t[NSAMPLE + 3] = " \t ";
    return x;
}

/* `s2s translate ARGS... TEXTS...` (the options before the sentences). */
static char *cli_translate(const char *const *args, const Texts *x)
{
    const char *argv[64];
    int n = 0;
    argv[n++] = "translate";
    for (int i = 0; args[i]; i++)
        argv[n++] = args[i];
    for (int i = 0; i < NTEXTS; i++)
        argv[n++] = x->t[i];
    argv[n] = NULL;
    RunResult r = run_s2s(NULL, argv);
    cr_assert_eq(r.status, 0, "s2s translate: status %d: %s", r.status, r.err);
    char *out = strdup(r.out);
    run_free(&r);
    return out;
}
#define CLI_TRANSLATE(x, ...) cli_translate((const char *const[]){__VA_ARGS__, NULL}, (x))

/* A result as `s2s translate` writes it: its best lines, or with nbest its n-best
   lines "I ||| TEXT ||| SCORE". */
static char *result_text(const s2s_result *r, bool nbest)
{
    size_t cap = 1 << 16, len = 0;
    char *s = malloc(cap);
    s[0] = '\0';
    for (int i = 0; i < s2s_result_count(r); i++)
        for (int k = 0; k < (nbest ? s2s_result_hypotheses(r, i) : 1); k++) {
            const char *t = s2s_result_text(r, i, k);
            cr_assert(t);
            size_t need = strlen(t) + 64;
            if (len + need >= cap)
                s = realloc(s, cap = 2 * (cap + need));
            if (nbest)
                len += (size_t)sprintf(s + len, "%d ||| %s ||| %.6f\n", i, t, s2s_result_score(r, i, k));
            else
                len += (size_t)sprintf(s + len, "%s\n", t);
        }
    return s;
}

static s2s_translator *load(const char *path, const s2s_translator_options *o)
{
    s2s_error err;
    s2s_translator *tr = s2s_translator_load((const char *const[]){path}, 1, o, &err);
    cr_assert(tr, "%s: %s", path, err.message);
    cr_assert_eq(err.code, S2S_OK);
    cr_assert_str_eq(err.message, "");
    return tr;
}

static char *translate_text(const s2s_translator *tr, const Texts *x, const s2s_translator_options *o,
                            bool nbest)
{
    s2s_error err;
    s2s_result *r = s2s_translate(tr, x->t, NTEXTS, o, &err);
    cr_assert(r, "%s", err.message);
    cr_assert_eq(s2s_result_count(r), NTEXTS);
    char *s = result_text(r, nbest);
    s2s_result_free(r);
    return s;
}

Test(api, translations_equal_the_commands_at_1_and_2_threads)
{
    Texts x = texts_new();
    const char *models[] = {RNN, TF};
    for (int m = 0; m < 2; m++)
        for (int threads = 1; threads <= 2; threads++) {
            char th[16];
            snprintf(th, sizeof th, "%d", threads);
            s2s_translator_options o = s2s_translator_options_default();
            o.threads = threads;
            s2s_translator *tr = load(models[m], &o);

            char *want = CLI_TRANSLATE(&x, models[m], "--threads", th);
            char *got = translate_text(tr, &x, NULL, false);
            cr_expect_str_eq(got, want, "%s at %d threads", models[m], threads);
            free(want);
            free(got);

            /* n-best lists, and options given at the call */
            want = CLI_TRANSLATE(&x, models[m], "--threads", th, "--nbest", "3", "--beam", "4",
                                 "--length-penalty", "0.5");
            s2s_translator_options c = o;
            c.nbest = 3;
            c.beam = 4;
            c.length_penalty = 0.5;
            got = translate_text(tr, &x, &c, true);
            cr_expect_str_eq(got, want, "%s n-best at %d threads", models[m], threads);
            free(want);
            free(got);

            /* greedy, f32 weights, no splitting */
            s2s_translator_free(tr);
            o.precision = S2S_PRECISION_F32;
            o.beam = 1;
            o.split = 0;
            tr = load(models[m], &o);
            want = CLI_TRANSLATE(&x, models[m], "--threads", th, "--precision", "f32", "--beam", "1",
                                 "--no-split");
            got = translate_text(tr, &x, NULL, false);
            cr_expect_str_eq(got, want, "%s greedy f32 at %d threads", models[m], threads);
            free(want);
            free(got);
            s2s_translator_free(tr);
        }
    free(x.data);
}

Test(api, an_ensemble_equals_the_commands)
{
    Texts x = texts_new();
    s2s_error err;
    s2s_translator *tr = s2s_translator_load((const char *const[]){TF, TF}, 2, NULL, &err);
    cr_assert(tr, "%s", err.message);
    cr_expect_eq(s2s_translator_info(tr)->models, 2);
    char *want = CLI_TRANSLATE(&x, TF, TF);
    char *got = translate_text(tr, &x, NULL, false);
    cr_expect_str_eq(got, want);
    free(want);
    free(got);
    s2s_translator_free(tr);

    /* models that cannot form an ensemble (other vocabularies): the command's message */
    char *dir = tmpdir_new(), *other = strf("%s/other.s2s", dir);
    Model m;
    fixture_text_model(&m, 1);
    fixture_save(other, &m, NULL);
    model_free(&m);
    cr_expect_null(s2s_translator_load((const char *const[]){TF, other}, 2, NULL, &err));
    cr_expect_eq(err.code, S2S_ERR_MODEL);
    RunResult r = RUN_S2S(NULL, "translate", TF, other, "Hello.");
    cr_expect_neq(r.status, 0);
    char *line = strf("s2s: %s\n", err.message);
    cr_expect_str_eq(r.err, line, "library: %s", err.message);
    free(line);
    run_free(&r);
    rm_rf(dir);
    free(dir);
    free(other);
    free(x.data);
}

Test(api, constraints_and_glossary_equal_the_commands)
{
    char *dir = tmpdir_new();
    const char *lines[] = {"{\"text\": \"I have a cat.\", \"constraints\": [\"chien\"]}", "I have a car.",
                           "{\"text\": \"Where is the book?\", \"prefix\": \"Où\"}"};
    char *in = strf("%s/in.txt", dir);
    write_file(in, "{\"text\": \"I have a cat.\", \"constraints\": [\"chien\"]}\nI have a car.\n"
                   "{\"text\": \"Where is the book?\", \"prefix\": \"Où\"}\n");
    RunResult r = RUN_S2S(NULL, "translate", RNN, "--constraints", "--glossary", "data/glossary-en-fr.tsv", "-i", in);
    cr_assert_eq(r.status, 0, "%s", r.err);
    s2s_translator_options o = s2s_translator_options_default();
    o.constraints = 1;
    o.glossary = "data/glossary-en-fr.tsv";
    s2s_translator *tr = load(RNN, &o);
    s2s_error err;
    s2s_result *res = s2s_translate(tr, lines, 3, NULL, &err);
    cr_assert(res, "%s", err.message);
    char *got = result_text(res, false);
    cr_expect_str_eq(got, r.out);
    free(got);
    s2s_result_free(res);
    run_free(&r);

    /* a glossary matched whatever the case: the command's output, with and without
       options at the call */
    write_file(in, "I have a CAT.\nwhere is the BOOK?\n");
    r = RUN_S2S(NULL, "translate", RNN, "--glossary", "data/glossary-en-fr.tsv", "--glossary-ignore-case", "-i", in);
    cr_assert_eq(r.status, 0, "%s", r.err);
    s2s_translator_options oi = s2s_translator_options_default();
    oi.glossary = "data/glossary-en-fr.tsv";
    oi.glossary_ignore_case = 1;
    s2s_translator *tri = load(RNN, &oi);
    const char *upper[] = {"I have a CAT.", "where is the BOOK?"};
    for (int k = 0; k < 2; k++) {
        res = s2s_translate(tri, upper, 2, k ? &oi : NULL, &err);
        cr_assert(res, "%s", err.message);
        got = result_text(res, false);
        cr_expect_str_eq(got, r.out);
        free(got);
        s2s_result_free(res);
    }
    s2s_translator_free(tri);
    run_free(&r);

    /* a bad JSON line: the command's message, with "text" for the input's name */
    const char *bad[] = {"fine", "{\"text\": 3}"};
    cr_expect_null(s2s_translate(tr, bad, 2, NULL, &err));
    cr_expect_eq(err.code, S2S_ERR_INPUT);
    write_file(in, "fine\n{\"text\": 3}\n");
    r = RUN_S2S(NULL, "translate", RNN, "--constraints", "-i", in);
    char *want = strf("s2s: %s:2: %s\n", in, strchr(strchr(err.message, ':') + 1, ':') + 2);
    cr_expect_str_eq(r.err, want);
    cr_expect(strncmp(err.message, "text:2: ", 8) == 0, "%s", err.message);
    free(want);
    run_free(&r);
    s2s_translator_free(tr);
    rm_rf(dir);
    free(dir);
    free(in);
}

Test(api, errors_are_values_with_the_commands_message)
{
    s2s_error err = {.code = 99};
    const char *missing = "/nonexistent/model.s2s";
    cr_assert_null(s2s_translator_load(&missing, 1, NULL, &err));
    cr_expect_eq(err.code, S2S_ERR_MODEL);
    RunResult r = RUN_S2S(NULL, "translate", missing, "Hello.");
    char *line = strf("s2s: %s\n", err.message);
    cr_expect_str_eq(r.err, line);
    free(line);
    run_free(&r);

    /* not a model file */
    const char *readme = "README.md";
    cr_expect_null(s2s_translator_load(&readme, 1, NULL, &err));
    cr_expect_eq(err.code, S2S_ERR_MODEL);
    cr_expect(strncmp(err.message, "README.md: ", 11) == 0, "%s", err.message);

    /* bad options */
    s2s_translator_options o = s2s_translator_options_default();
    o.beam = 0;
    cr_expect_null(s2s_translator_load((const char *const[]){RNN}, 1, &o, &err));
    cr_expect_eq(err.code, S2S_ERR_ARGUMENT);
    cr_expect_str_eq(err.message, "beam must be in 1..100, not 0");
    o = s2s_translator_options_default();
    o.nbest = 6;
    cr_expect_null(s2s_translator_load((const char *const[]){RNN}, 1, &o, &err));
    cr_expect_str_eq(err.message, "nbest must be in 1..beam (5), not 6");
    cr_expect_null(s2s_translator_load(NULL, 0, NULL, &err));
    cr_expect_str_eq(err.message, "no model file given");
    o = s2s_translator_options_default();
    o.attention_layer = 1;
    cr_expect_null(s2s_translator_load((const char *const[]){RNN}, 1, &o, &err));
    cr_expect_str_eq(err.message, "attention_layer 1 needs a Transformer model (" RNN " is rnn)");
    o.glossary = "/nonexistent/glossary.tsv";
    o.attention_layer = 0;
    cr_expect_null(s2s_translator_load((const char *const[]){RNN}, 1, &o, &err));
    cr_expect_eq(err.code, S2S_ERR_MODEL);

    /* a bad text fails the call, named as the command names a line */
    s2s_translator *tr = load(RNN, NULL);
    const char *texts[] = {"Hello.", "bad \xff byte"};
    cr_expect_null(s2s_translate(tr, texts, 2, NULL, &err));
    cr_expect_eq(err.code, S2S_ERR_INPUT);
    cr_expect_str_eq(err.message, "text:2: invalid UTF-8 at byte 5");
    /* the translator still works after a failed call */
    s2s_result *res = s2s_translate(tr, texts, 1, NULL, &err);
    cr_expect(res && err.code == S2S_OK && err.message[0] == '\0');
    s2s_result_free(res);
    /* NULL err is allowed; so is freeing NULL */
    cr_expect_null(s2s_translate(tr, texts, 2, NULL, NULL));
    s2s_result_free(NULL);
    s2s_translator_free(NULL);
    s2s_translator_free(tr);
}

Test(api, two_models_in_one_process_do_not_disturb_each_other)
{
    Texts x = texts_new();
    s2s_translator *a = load(RNN, NULL);
    char *a_alone = translate_text(a, &x, NULL, false);
    s2s_translator_free(a);
    s2s_translator *b = load(TF, NULL);
    char *b_alone = translate_text(b, &x, NULL, false);
    s2s_translator_free(b);

    /* both loaded, b with another precision; calls interleaved */
    a = load(RNN, NULL);
    s2s_translator_options o = s2s_translator_options_default();
    o.precision = S2S_PRECISION_F32;
    s2s_translator *b32 = load(TF, &o);
    b = load(TF, NULL);
    for (int round = 0; round < 2; round++) {
        char *s = translate_text(a, &x, NULL, false);
        cr_expect_str_eq(s, a_alone);
        free(s);
        free(translate_text(b32, &x, NULL, false));
        s = translate_text(b, &x, NULL, false);
        cr_expect_str_eq(s, b_alone);
        free(s);
    }
    cr_expect_str_eq(s2s_translator_info(a)->arch, "rnn");
    cr_expect_str_eq(s2s_translator_info(b)->arch, "transformer");
    /* the attention a call may ask: tf.s2s has 1 layer of 2 heads ("layers: 1",
       "heads: 2" of s2s info), a recurrent model none */
    cr_expect_eq(s2s_translator_info(a)->attention_layers, 0);
    cr_expect_eq(s2s_translator_info(a)->attention_heads, 0);
    cr_expect_eq(s2s_translator_info(b)->attention_layers, 1);
    cr_expect_eq(s2s_translator_info(b)->attention_heads, 2);
    /* its tensors, in the file's order, as PyTorch names them (tests/recorded/tf.s2s:
       34 tensors, the first the source embedding, the last the output bias) */
    s2s_tensor t;
    cr_expect_eq(s2s_translator_info(b)->tensors, 34);
    cr_assert_eq(s2s_translator_tensor(b, 0, &t), 0);
    cr_expect_str_eq(t.name, "src_emb.weight");
    cr_expect(t.ndim == 2 && t.shape[0] == 227 && t.shape[1] == 16 && t.size == 3632);
    cr_assert_eq(s2s_translator_tensor(b, 33, &t), 0);
    cr_expect_str_eq(t.name, "out.proj.bias");
    cr_expect(t.ndim == 1 && t.shape[0] == 237 && t.shape[1] == 0 && t.size == 237);
    cr_expect_eq(s2s_translator_tensor(b, 34, &t), -1);
    cr_expect_eq(s2s_translator_tensor(b, -1, &t), -1);
    long long sum = 0;
    for (int i = 0; s2s_translator_tensor(b, i, &t) == 0; i++)
        sum += t.size;
    cr_expect_eq(sum, s2s_translator_info(b)->parameters);
    s2s_translator_free(b32);
    s2s_translator_free(a);
    s2s_translator_free(b);
    free(a_alone);
    free(b_alone);
    free(x.data);
}

typedef struct Job {
    const s2s_translator *tr;
    const Texts *x;
    const char *want;
    int rounds;
    int bad; /* calls whose result differed */
} Job;

static void *job_run(void *arg)
{
    Job *j = arg;
    for (int k = 0; k < j->rounds; k++) {
        s2s_error err;
        s2s_result *r = s2s_translate(j->tr, j->x->t, NTEXTS, NULL, &err);
        if (!r) {
            j->bad++;
            continue;
        }
        char *s = result_text(r, false);
        j->bad += strcmp(s, j->want) != 0;
        free(s);
        s2s_result_free(r);
    }
    return NULL;
}

/* One translator used by four threads at once, and a second by two more: every call's
   result is the one it gets alone. */
Test(api, one_model_on_several_threads_at_once)
{
    Texts x = texts_new();
    s2s_translator_options o = s2s_translator_options_default();
    o.threads = 2;
    s2s_translator *a = load(RNN, &o), *b = load(TF, &o);
    char *wa = translate_text(a, &x, NULL, false), *wb = translate_text(b, &x, NULL, false);
    enum { N = 6 };
    Job jobs[N];
    pthread_t t[N];
    for (int i = 0; i < N; i++) {
        jobs[i] = (Job){i < 4 ? a : b, &x, i < 4 ? wa : wb, 3, 0};
        cr_assert_eq(pthread_create(&t[i], NULL, job_run, &jobs[i]), 0);
    }
    for (int i = 0; i < N; i++) {
        pthread_join(t[i], NULL);
        cr_expect_eq(jobs[i].bad, 0, "thread %d: %d of %d calls differ", i, jobs[i].bad, jobs[i].rounds);
    }
    s2s_translator_free(a);
    s2s_translator_free(b);
    free(wa);
    free(wb);
    free(x.data);
}

Test(api, attention_on_request)
{
    s2s_translator_options o = s2s_translator_options_default();
    s2s_translator *tr = load(TF, &o);
    const char *texts[] = {"I have a cat.", ""};
    s2s_error err;
    s2s_result *r = s2s_translate(tr, texts, 2, NULL, &err);
    s2s_attention a;
    cr_expect_eq(s2s_result_attention(r, 0, &a), -1); /* not asked for */
    s2s_result_free(r);
    o.attention = 1;
    r = s2s_translate(tr, texts, 2, &o, &err);
    cr_assert(r, "%s", err.message);
    cr_assert_eq(s2s_result_attention(r, 0, &a), 0);
    char *toks = s2s_tokenize(tr, S2S_SOURCE, texts[0], &err);
    char joined[256] = "";
    for (int j = 0; j < a.source_len; j++)
        snprintf(joined + strlen(joined), sizeof joined - strlen(joined), "%s%s", j ? " " : "", a.source[j]);
    cr_expect_str_eq(joined, toks);
    s2s_string_free(toks);
    cr_expect_gt(a.output_len, 0);
    for (int t = 0; t < a.output_len; t++) {
        double sum = 0;
        for (int j = 0; j < a.source_len; j++)
            sum += a.weights[t * a.source_len + j];
        cr_expect(fabs(sum - 1) < 1e-4, "row %d sums to %g", t, sum);
    }
    /* the heatmap is the command's --show-attention, after its "line 1: " */
    char *pic = s2s_attention_text(&a);
    cr_assert(pic);
    RunResult cli = RUN_S2S(NULL, "translate", TF, "--show-attention", texts[0]);
    cr_assert_eq(cli.status, 0, "%s", cli.err);
    char *want = strf("line 1: %s", pic);
    cr_expect_str_eq(cli.err, want);
    free(want);
    run_free(&cli);
    s2s_string_free(pic);
    /* one head's weights: the same translation, other weights, rows summing to 1; a
       head the model lacks is an error */
    for (int h = 1; h <= 2; h++) {
        s2s_batch b = {.texts = texts, .n = 1, .attention_head = h};
        s2s_result *rh = s2s_translate_batch(tr, &b, &o, &err);
        cr_assert(rh, "%s", err.message);
        cr_expect_str_eq(s2s_result_text(rh, 0, 0), s2s_result_text(r, 0, 0));
        s2s_attention ah;
        cr_assert_eq(s2s_result_attention(rh, 0, &ah), 0);
        cr_assert_eq(ah.output_len, a.output_len);
        for (int t = 0; t < ah.output_len; t++) {
            double sum = 0;
            for (int j = 0; j < ah.source_len; j++)
                sum += ah.weights[t * ah.source_len + j];
            cr_expect(fabs(sum - 1) < 1e-4, "head %d row %d sums to %g", h, t, sum);
        }
        s2s_result_free(rh);
    }
    s2s_batch b3 = {.texts = texts, .n = 1, .attention_head = 3};
    cr_expect_null(s2s_translate_batch(tr, &b3, &o, &err));
    cr_expect_str_eq(err.message, "attention_head 3: the model has 2 heads");
    cr_expect_eq(s2s_result_attention(r, 1, &a), 0);
    cr_expect_eq(a.source_len, 0);
    cr_expect_null(s2s_attention_text(&a));
    cr_expect_eq(s2s_result_attention(r, 2, &a), -1);
    cr_expect_null(s2s_result_text(r, 2, 0));
    cr_expect(isnan(s2s_result_score(r, 0, 5)));
    s2s_result_free(r);
    s2s_translator_free(tr);
}

Test(api, tokens_and_model_info_equal_the_commands)
{
    s2s_translator *tr = load(RNN, NULL);
    const s2s_model_info *in = s2s_translator_info(tr);
    RunResult r = RUN_S2S(NULL, "info", RNN);
    cr_assert_eq(r.status, 0);
    char *want = strf("direction: %s (%s to %s)\nkeep_case: %s\nvocabulary: source %lld, target %lld\n"
                      "parameters: %lld",
                      in->direction, in->source_lang, in->target_lang, in->keep_case ? "true" : "false",
                      in->source_vocab, in->target_vocab, in->parameters);
    cr_expect(strstr(r.out, want), "%s\nnot in\n%s", want, r.out);
    cr_expect(strstr(r.out, "bpe:") == NULL && in->source_merges == 0 && in->target_merges == 0);
    cr_expect(strstr(in->config_json, "\"cell\": \"gru\"") && !strchr(in->config_json, '\n'), "%s",
              in->config_json);
    cr_expect_eq(in->history_json[0], '{');
    free(want);
    run_free(&r);

    s2s_error err;
    const char *text = "Don't stop: it's 3.5 \xE2\x80\x94 \"quoted\" text!";
    char *toks = s2s_tokenize(tr, S2S_SOURCE, text, &err);
    cr_assert(toks, "%s", err.message);
    char *stdin_text = strf("%s\n", text);
    r = RUN_S2S(stdin_text, "tokenize", "--lang", in->source_lang, in->keep_case ? "--keep-case" : "--lowercase");
    char *line = strf("%s\n", toks);
    cr_expect_str_eq(line, r.out);
    free(line);
    run_free(&r);
    char *back = s2s_detokenize(tr, S2S_TARGET, "l' homme , c' est « lui » !", &err);
    cr_assert(back, "%s", err.message);
    r = RUN_S2S("l' homme , c' est « lui » !\n", "tokenize", "--detok", "--lang", in->target_lang);
    line = strf("%s\n", back);
    cr_expect_str_eq(line, r.out);
    free(line);
    run_free(&r);
    s2s_string_free(back);
    s2s_string_free(toks);
    free(stdin_text);

    cr_expect_null(s2s_tokenize(tr, S2S_SOURCE, "a\xC3", &err));
    cr_expect_eq(err.code, S2S_ERR_INPUT);
    cr_expect_str_eq(err.message, "invalid UTF-8 at byte 2");
    cr_expect_null(s2s_tokenize(tr, (s2s_side)7, "a", &err));
    cr_expect_eq(err.code, S2S_ERR_ARGUMENT);
    s2s_translator_free(tr);
}

/* The text lines `s2s score -w 6` prints, from the library's scores. */
static char *score_lines(const s2s_scores *s)
{
    char *b = strf("BLEU|%s", s->bleu_signature), *c = strf("chrF2|%s", s->chrf_signature);
    int pad = (int)(strlen(b) > strlen(c) ? strlen(b) : strlen(c));
    char *out = strf("%*s = %.6f %.1f/%.1f/%.1f/%.1f (BP = %.3f ratio = %.3f hyp_len = %lld ref_len = %lld)\n"
                     "%*s = %.6f\n",
                     pad, b, s->bleu, s->precisions[0], s->precisions[1], s->precisions[2], s->precisions[3],
                     s->brevity_penalty, s->ratio, s->hyp_len, s->ref_len, pad, c, s->chrf);
    free(b);
    free(c);
    return out;
}

Test(api, scores_equal_the_commands)
{
    char *dir = tmpdir_new();
    const char *hyps[] = {"The cat sat on the mat.", "A dog barks loudly!", "", "Ça va très bien, merci."};
    const char *refs[] = {"The cat is on the mat.", "The dog barks.", "Nothing here.", "Ça va bien, merci.",
                          "There is a cat on the mat.", "A dog is barking loudly!", "", "Très bien, merci !"};
    char *h = strf("%s/h", dir), *r1 = strf("%s/r1", dir), *r2 = strf("%s/r2", dir);
    write_file(h, "The cat sat on the mat.\nA dog barks loudly!\n\nÇa va très bien, merci.\n");
    write_file(r1, "The cat is on the mat.\nThe dog barks.\nNothing here.\nÇa va bien, merci.\n");
    write_file(r2, "There is a cat on the mat.\nA dog is barking loudly!\n\nTrès bien, merci !\n");
    s2s_scores s;
    s2s_error err;
    for (int v = 0; v < 3; v++) {
        s2s_score_options o = s2s_score_options_default();
        size_t nrefs = v == 0 ? 1 : 2;
        RunResult r;
        if (v == 2) {
            o.tokenize = "intl";
            o.lowercase = 1;
            o.chrf_lowercase = 1;
            r = RUN_S2S(NULL, "score", h, r1, r2, "-w", "6", "-tok", "intl", "-lc", "--chrf-lowercase");
        } else if (v == 1) {
            r = RUN_S2S(NULL, "score", h, r1, r2, "-w", "6");
        } else {
            r = RUN_S2S(NULL, "score", h, r1, "-w", "6");
        }
        cr_assert_eq(r.status, 0, "%s", r.err);
        cr_assert_eq(s2s_score(hyps, 4, refs, nrefs, &o, &s, &err), 0, "%s", err.message);
        char *got = score_lines(&s);
        cr_expect_str_eq(got, r.out, "variant %d", v);
        free(got);
        run_free(&r);
    }
    cr_expect_eq(s2s_score(hyps, 0, refs, 1, NULL, &s, &err), -1);
    cr_expect_eq(err.code, S2S_ERR_ARGUMENT);
    const char *bad[] = {"ok", "bad \xC3("};
    cr_expect_eq(s2s_score(hyps, 2, bad, 1, NULL, &s, &err), -1);
    cr_expect_eq(err.code, S2S_ERR_INPUT);
    cr_expect_str_eq(err.message, "reference 1:2: invalid UTF-8 at byte 5");
    s2s_score_options o = s2s_score_options_default();
    o.tokenize = "spaces";
    cr_expect_eq(s2s_score(hyps, 2, refs, 1, &o, &s, &err), -1);
    cr_expect_str_eq(err.message, "tokenize must be 13a, none or intl, not 'spaces'");
    cr_expect_str_eq(s2s_version(), S2S_VERSION_STRING);
    cr_expect_str_eq(S2S_SACREBLEU_VERSION, SACREBLEU_VERSION);
    rm_rf(dir);
    free(dir);
    free(h);
    free(r1);
    free(r2);
}

/* The constraints given apart (s2s_translate_constrained) give what the same
   constraints give in a text's JSON form, with and without a glossary on top. */
Test(api, constraints_given_apart_equal_their_json_form)
{
    const char *json[] = {"{\"text\": \"I have a cat.\", \"constraints\": [\"chien\"]}", "I have a car.",
                          "{\"text\": \"Where is the book?\", \"prefix\": \"Où\", \"avoid\": [\"est\"]}"};
    const char *plain[] = {"I have a cat.", "I have a car.", "Where is the book?"};
    const char *req[] = {"chien"}, *avoid[] = {"est"};
    const s2s_constraints cons[] = {{.require = req, .nrequire = 1}, {0},
                                    {.avoid = avoid, .navoid = 1, .prefix = "Où"}};
    for (int g = 0; g < 2; g++) {
        s2s_translator_options o = s2s_translator_options_default();
        o.glossary = g ? "data/glossary-en-fr.tsv" : NULL;
        s2s_translator *tr = load(RNN, &o);
        s2s_translator_options oj = s2s_translator_options_default();
        oj.constraints = 1;
        s2s_error err;
        s2s_result *want = s2s_translate(tr, json, 3, &oj, &err);
        cr_assert(want, "%s", err.message);
        s2s_result *got = s2s_translate_constrained(tr, plain, cons, 3, NULL, &err);
        cr_assert(got, "%s", err.message);
        char *a = result_text(want, false), *b = result_text(got, false);
        cr_expect_str_eq(b, a, "glossary %d", g);
        free(a);
        free(b);
        /* no constraints at all: s2s_translate's result */
        s2s_result_free(got);
        s2s_result_free(want);
        want = s2s_translate(tr, plain, 3, NULL, &err);
        got = s2s_translate_constrained(tr, plain, NULL, 3, NULL, &err);
        a = result_text(want, false), b = result_text(got, false);
        cr_expect_str_eq(b, a);
        free(a);
        free(b);
        s2s_result_free(got);
        s2s_result_free(want);
        s2s_translator_free(tr);
    }

    /* errors: the JSON form's message for a word the model cannot write; a plain text
       is required; a NULL phrase */
    s2s_translator *tr = load(RNN, NULL);
    s2s_error err, jerr;
    const char *bad[] = {"xyzzyq"};
    const s2s_constraints badc[] = {{0}, {.require = bad, .nrequire = 1}};
    const char *json_bad[] = {"fine", "{\"text\": \"I have a cat.\", \"constraints\": [\"xyzzyq\"]}"};
    const char *two[] = {"fine", "I have a cat."};
    s2s_translator_options oj = s2s_translator_options_default();
    oj.constraints = 1;
    cr_expect_null(s2s_translate(tr, json_bad, 2, &oj, &jerr));
    cr_expect_null(s2s_translate_constrained(tr, two, badc, 2, NULL, &err));
    cr_expect_eq(err.code, S2S_ERR_INPUT);
    cr_expect_str_eq(err.message, jerr.message);
    cr_expect(strncmp(err.message, "text:2: constraint 1: 'xyzzyq'", 30) == 0, "%s", err.message);
    cr_expect_null(s2s_translate_constrained(tr, two, badc, 2, &oj, &err));
    cr_expect_eq(err.code, S2S_ERR_ARGUMENT);
    cr_expect_str_eq(err.message, "constraints given apart need plain texts: the constraints option must be 0");
    const char *nul[] = {NULL};
    const s2s_constraints nulc[] = {{0}, {.require = nul, .nrequire = 1}};
    cr_expect_null(s2s_translate_constrained(tr, two, nulc, 2, NULL, &err));
    cr_expect_eq(err.code, S2S_ERR_ARGUMENT);
    cr_expect_str_eq(err.message, "text:2: constraint 1 is NULL");
    s2s_translator_free(tr);
}

/* s2s_attention_svg draws what `s2s translate --attention-svg` draws: the same
   document for the same attention and title. */
Test(api, attention_svg_equals_the_commands)
{
    char *dir = tmpdir_new();
    char *svgdir = strf("%s/svg", dir);
    RunResult r = RUN_S2S(NULL, "translate", TF, "--attention-svg", svgdir, "I have a cat.");
    cr_assert_eq(r.status, 0, "%s", r.err);
    char *path = strf("%s/0001.svg", svgdir);
    char *want = slurp(path, NULL);
    cr_assert(want);

    s2s_translator_options o = s2s_translator_options_default();
    o.attention = 1;
    s2s_translator *tr = load(TF, &o);
    const char *texts[] = {"I have a cat.", ""};
    s2s_error err;
    s2s_result *res = s2s_translate(tr, texts, 2, NULL, &err);
    cr_assert(res, "%s", err.message);
    s2s_attention a;
    cr_assert_eq(s2s_result_attention(res, 0, &a), 0);
    char *title = strf("line 1: I have a cat. \xE2\x86\x92 %s", s2s_result_text(res, 0, 0));
    char *got = s2s_attention_svg(&a, title);
    cr_assert(got);
    cr_expect_str_eq(got, want);
    s2s_string_free(got);
    cr_expect_eq(s2s_result_attention(res, 1, &a), 0);
    cr_expect_null(s2s_attention_svg(&a, "empty")); /* no tokens: no picture */
    cr_expect_null(s2s_attention_svg(NULL, NULL));
    s2s_result_free(res);
    s2s_translator_free(tr);
    run_free(&r);
    free(title);
    free(want);
    free(path);
    free(svgdir);
    rm_rf(dir);
    free(dir);
}

Test(api, language_codes_and_names)
{
    char code[4] = "x";
    cr_expect_eq(s2s_language_code("de", code), 0);
    cr_expect_str_eq(code, "de");
    cr_expect_eq(s2s_language_code("deu", code), 0);
    cr_expect_str_eq(code, "de");
    cr_expect_eq(s2s_language_code("ger", code), 0);
    cr_expect_str_eq(code, "de");
    cr_expect_eq(s2s_language_code("kab", code), 0);
    cr_expect_str_eq(code, "kab");
    cr_expect_eq(s2s_language_code("zz", code), -1);
    cr_expect_str_eq(code, "");
    cr_expect_eq(s2s_language_code("DE", code), -1);
    cr_expect_eq(s2s_language_code(NULL, code), -1);
    cr_expect_str_eq(s2s_language_name("de"), "German");
    cr_expect_str_eq(s2s_language_name("fra"), "French");
    cr_expect_null(s2s_language_name("kab"));
    cr_expect_null(s2s_language_name("zz"));
    cr_expect_null(s2s_language_name(NULL));
}

/* s2s_translate_batch names the texts as its batch says, takes their lengths (a NUL
   byte within is an error naming it), and gives what s2s_translate gives. */
Test(api, a_batch_names_its_texts_in_errors)
{
    s2s_translator *tr = load(RNN, NULL);
    const char *texts[] = {"I have a cat.", "bad \xff here", "Where is the book?"};
    s2s_error err;
    s2s_batch b = {.texts = texts, .n = 3, .name = "in.txt", .first_line = 41};
    cr_expect_null(s2s_translate_batch(tr, &b, NULL, &err));
    cr_expect_eq(err.code, S2S_ERR_INPUT);
    cr_expect_str_eq(err.message, "in.txt:42: invalid UTF-8 at byte 5");
    const char *nul[] = {"I have\0 a cat."};
    const size_t len[] = {14};
    s2s_batch bn = {.texts = nul, .lengths = len, .n = 1, .name = "<stdin>"};
    cr_expect_null(s2s_translate_batch(tr, &bn, NULL, &err));
    cr_expect_str_eq(err.message, "<stdin>:1: NUL byte at byte 7");
    const char *good[] = {"I have a cat.", "Where is the book?"};
    s2s_batch bg = {.texts = good, .n = 2, .name = "x", .first_line = 7};
    s2s_result *a = s2s_translate_batch(tr, &bg, NULL, &err), *c = s2s_translate(tr, good, 2, NULL, &err);
    cr_assert(a && c);
    char *ta = result_text(a, false), *tc = result_text(c, false);
    cr_expect_str_eq(ta, tc);
    free(ta);
    free(tc);
    s2s_result_free(a);
    s2s_result_free(c);
    s2s_batch bh = {.texts = good, .n = 1, .attention_head = 1};
    cr_expect_null(s2s_translate_batch(tr, &bh, NULL, &err));
    cr_expect_str_eq(err.message, "attention_head 1 needs a Transformer model (this one is rnn)");
    cr_expect_null(s2s_translate_batch(tr, NULL, NULL, &err));
    cr_expect_str_eq(err.message, "no batch");
    s2s_translator_free(tr);
}

/* A tokenizer without a model: `s2s tokenize`'s tokens (tests/cli/test_tokenize.c
   checks the command's exact output), its errors as values. */
Test(api, a_tokenizer_without_a_model)
{
    s2s_error err;
    s2s_tokenizer *fr = s2s_tokenizer_new("fra", 0, NULL, &err), *lc = s2s_tokenizer_new("fr", 1, NULL, &err);
    cr_assert(fr && lc, "%s", err.message);
    const char *text = "J'ai un CHAT.";
    char *a = s2s_tokenizer_tokenize(fr, text, strlen(text), &err), *b = s2s_tokenizer_tokenize(lc, text, strlen(text), &err);
    cr_expect_str_eq(a, "J' ai un CHAT .");
    cr_expect_str_eq(b, "j' ai un chat .");
    char *c = s2s_tokenizer_detokenize(fr, b, strlen(b), &err);
    cr_expect_str_eq(c, "j'ai un chat.");
    char *d = s2s_join_units("cha@@ tons", 10, &err);
    cr_expect_str_eq(d, "chatons");
    char *e = s2s_tokenizer_tokenize(fr, " \t", 2, &err);
    cr_expect_str_eq(e, "");
    s2s_string_free(a);
    s2s_string_free(b);
    s2s_string_free(c);
    s2s_string_free(d);
    s2s_string_free(e);
    cr_expect_null(s2s_tokenizer_tokenize(fr, "bad \xff", 5, &err));
    cr_expect_eq(err.code, S2S_ERR_INPUT);
    cr_expect_str_eq(err.message, "invalid UTF-8 at byte 5");
    cr_expect_null(s2s_join_units("a\0b", 3, &err));
    cr_expect_str_eq(err.message, "NUL byte at byte 2");
    cr_expect_null(s2s_tokenizer_new("zz", 0, NULL, &err));
    cr_expect_eq(err.code, S2S_ERR_ARGUMENT);
    cr_expect_str_eq(err.message, "'zz' is not an ISO 639 language code");
    cr_expect_null(s2s_tokenizer_new(NULL, 0, "/nonexistent/codes", &err));
    cr_expect_eq(err.code, S2S_ERR_MODEL);
    cr_expect_str_eq(err.message, "/nonexistent/codes: cannot open: No such file or directory");
    s2s_tokenizer_free(fr);
    s2s_tokenizer_free(lc);
    s2s_tokenizer_free(NULL);
}

/* s2s_evaluate: `s2s eval`'s report and translations (tests/cli/test_eval.c checks the
   command's figures by hand), its figures, its errors. */
Test(api, an_evaluation_of_a_test_set)
{
    char *dir = tmpdir_new();
    char *tsv = strf("%s/t.tsv", dir);
    write_file(tsv, "I have a cat.\tJ'ai un chat.\nI have a cat.\tJ'ai une chatte.\nWhere is the book?\tOù est le livre ?\n");
    s2s_translator *tr = load(RNN, NULL);
    s2s_error err;
    s2s_evaluation *ev = s2s_evaluate(tr, tsv, 1, NULL, &err);
    cr_assert(ev, "%s", err.message);
    s2s_evaluation_figures f = s2s_evaluation_get(ev);
    cr_expect_eq(f.lines, 3);
    cr_expect_eq(f.sources, 2);
    cr_expect(f.bleu > 0 && f.bleu <= 100 && f.chrf > 0 && f.perplexity > 1);
    const char *json = s2s_evaluation_report(ev, 1), *text = s2s_evaluation_report(ev, 0);
    const char *jb = strstr(json, "\"bleu\": "), *jc = strstr(json, "\"chrf\": ");
    cr_assert(jb && jc, "%s", json);
    cr_expect_eq(strtod(jb + 8, NULL), f.bleu);
    cr_expect_eq(strtod(jc + 8, NULL), f.chrf);
    cr_expect(strstr(json, "\"lines\": 3, \"sources\": 2"), "%s", json);
    cr_expect(strstr(text, "by source length") && strstr(text, "\n1-8                3 "), "%s", text);
    /* a translation a line: the two lines of one source the same */
    const char *hyps = s2s_evaluation_translations(ev);
    const char *nl1 = strchr(hyps, '\n'), *nl2 = nl1 ? strchr(nl1 + 1, '\n') : NULL;
    cr_assert(nl1 && nl2 && strchr(nl2 + 1, '\n') && !strchr(strchr(nl2 + 1, '\n') + 1, '\n'), "%s", hyps);
    cr_expect_eq(nl1 - hyps, nl2 - nl1 - 1);
    cr_expect(strncmp(hyps, nl1 + 1, (size_t)(nl1 - hyps)) == 0);
    s2s_evaluation_free(ev);
    /* errors */
    char *missing = strf("%s/none.tsv", dir);
    cr_expect_null(s2s_evaluate(tr, missing, 0, NULL, &err));
    cr_expect_eq(err.code, S2S_ERR_INPUT);
    char *msg = strf("%s: cannot open: No such file or directory", missing);
    cr_expect_str_eq(err.message, msg);
    s2s_translator_options o = s2s_translator_options_default();
    o.nbest = 2;
    cr_expect_null(s2s_evaluate(tr, tsv, 0, &o, &err));
    cr_expect_eq(err.code, S2S_ERR_ARGUMENT);
    cr_expect_str_eq(err.message, "an evaluation takes nbest 1 and no attention");
    s2s_evaluation_free(NULL);
    s2s_translator_free(tr);
    free(msg);
    free(missing);
    free(tsv);
    rm_rf(dir);
    free(dir);
}

/* s2s_export_ctranslate2: the directory `s2s export --ctranslate2` writes (the same
   bytes), and its refusals as values. */
Test(api, an_export_to_ctranslate2)
{
    char *dir = tmpdir_new();
    char *a = strf("%s/a", dir), *b = strf("%s/b", dir);
    RunResult r = RUN_S2S(NULL, "export", "--ctranslate2", TF, a);
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    s2s_translator *tf = load(TF, NULL), *rnn = load(RNN, NULL);
    s2s_error err;
    cr_assert_eq(s2s_export_ctranslate2(tf, b, &err), 0, "%s", err.message);
    const char *files[] = {"model.bin", "config.json", "source_vocabulary.json", "target_vocabulary.json"};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        char *pa = strf("%s/%s", a, files[i]), *pb = strf("%s/%s", b, files[i]);
        size_t na, nb;
        char *da = slurp(pa, &na), *db = slurp(pb, &nb);
        cr_assert(da && db, "%s", files[i]);
        cr_expect(na == nb && memcmp(da, db, na) == 0, "%s differs", files[i]);
        free(da);
        free(db);
        free(pa);
        free(pb);
    }
    cr_expect_eq(s2s_export_ctranslate2(tf, b, &err), -1);
    cr_expect_eq(err.code, S2S_ERR_OUTPUT);
    char *want = strf("%s: exists and is not an empty directory; nothing written; choose another DIR", b);
    cr_expect_str_eq(err.message, want);
    free(want);
    char *c = strf("%s/c", dir);
    cr_expect_eq(s2s_export_ctranslate2(rnn, c, &err), -1);
    cr_expect_eq(err.code, S2S_ERR_ARGUMENT);
    cr_expect_str_eq(err.message, RNN ": a recurrent model: CTranslate2 has no such model kind; only a Transformer "
                                      "can be exported");
    cr_expect(!file_exists(c));
    s2s_translator_free(tf);
    s2s_translator_free(rnn);
    free(a);
    free(b);
    free(c);
    rm_rf(dir);
    free(dir);
}

/* s2s_score_metrics computes the metrics asked alone: each the same as s2s_score's,
   the other 0 with no signature. */
Test(api, the_metrics_asked_alone)
{
    const char *hyps[] = {"The cat sat on the mat.", "A dog barked."};
    const char *refs[] = {"The cat sat down on the mat.", "The dog barked."};
    s2s_scores both, b, c;
    s2s_error err;
    cr_assert_eq(s2s_score(hyps, 2, refs, 1, NULL, &both, &err), 0, "%s", err.message);
    cr_assert_eq(s2s_score_metrics(hyps, 2, refs, 1, NULL, S2S_METRIC_BLEU, &b, &err), 0, "%s", err.message);
    cr_assert_eq(s2s_score_metrics(hyps, 2, refs, 1, NULL, S2S_METRIC_CHRF, &c, &err), 0, "%s", err.message);
    cr_expect_eq(b.bleu, both.bleu);
    cr_expect_str_eq(b.bleu_signature, both.bleu_signature);
    cr_expect_eq(b.chrf, 0);
    cr_expect_str_eq(b.chrf_signature, "");
    cr_expect_eq(c.chrf, both.chrf);
    cr_expect_str_eq(c.chrf_signature, both.chrf_signature);
    cr_expect_eq(c.bleu, 0);
    cr_expect_str_eq(c.bleu_signature, "");
    cr_expect_eq(s2s_score_metrics(hyps, 2, refs, 1, NULL, 0, &b, &err), -1);
    cr_expect_eq(err.code, S2S_ERR_ARGUMENT);
    cr_expect_str_eq(err.message, "metrics must be S2S_METRIC_BLEU, S2S_METRIC_CHRF or both");
    /* one line alone: BLEU with effective order, as --sentence */
    cr_assert_eq(s2s_score_sentence(hyps[0], refs, 1, NULL, S2S_METRIC_BLEU | S2S_METRIC_CHRF, &b, &err), 0);
    cr_expect(strstr(b.bleu_signature, "|eff:yes|"), "%s", b.bleu_signature);
    cr_expect(b.bleu > 0 && b.chrf > 0);
}
