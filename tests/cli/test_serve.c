/* End-to-end tests of `s2s serve`: LibreTranslate's API, the native endpoint, batching
   across requests (each output what `s2s translate` gives), bad requests, limits, keys,
   CORS, the log and the stop on SIGTERM. */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/json.h"
#include "helpers.h"
#include "model_fixture.h"
#include "serve_util.h"

typedef struct Fix {
    char *dir;
    char *enfr, *enfr2, *fren; /* random models: en-fr (two seeds) and fr-en */
} Fix;

static Fix fix_new(void)
{
    Fix f = {tmpdir_new(), NULL, NULL, NULL};
    f.enfr = strf("%s/en-fr.s2s", f.dir);
    f.enfr2 = strf("%s/en-fr.2.s2s", f.dir);
    f.fren = strf("%s/fr-en.s2s", f.dir);
    Model m;
    fixture_text_model(&m, 9); /* seed 9: varied, non-empty outputs */
    fixture_save(f.enfr, &m, NULL);
    model_free(&m);
    fixture_text_model(&m, 11);
    fixture_save(f.enfr2, &m, NULL);
    model_free(&m);
    fixture_text_model(&m, 10);
    fixture_save_dir(f.fren, &m, NULL, DIRECTION_FR_EN);
    model_free(&m);
    return f;
}

static void fix_free(Fix *f)
{
    rm_rf(f->dir);
    free(f->dir);
    free(f->enfr);
    free(f->enfr2);
    free(f->fren);
}

#define NEED_CURL()                                                                                   \
    do {                                                                                              \
        if (!have_curl())                                                                             \
            cr_skip_test("/usr/bin/curl is not installed (apt-get install curl): not tested");        \
    } while (0)

/* The body as JSON; fails the test when it is not. */
static Json parse_body(const HttpRes *h)
{
    Json doc;
    Err e;
    cr_assert_eq(json_parse(&doc, h->body, strlen(h->body), &e), 0, "not JSON (%s): %s", e.msg, h->body);
    return doc;
}

static const char *str_of(const JsonVal *v)
{
    cr_assert(v && v->type == JSON_STRING, "not a string");
    return v->u.str.s;
}

static void expect_answer(HttpRes h, int status, const char *body)
{
    cr_expect_eq(h.status, status, "status %d, body %s", h.status, h.body);
    cr_expect(!strcmp(h.body, body), "%s, not %s", h.body, body);
    http_res_free(&h);
}

static const char *const sents[] = {"the cat sleeps .", "a big black dog eats", "hello !",
                                    "the dog eats the cat", "a cat", "big big dog sleeps . the cat eats ."};
enum { NSENT = sizeof sents / sizeof *sents };

Test(serve, libretranslate_api_gives_what_translate_gives)
{
    NEED_CURL();
    Fix f = fix_new();
    char **want = translate_output(f.enfr, sents, NSENT, NULL);
    ServeProc p = SERVE_START(f.enfr);

    /* a string, as JSON and as a form */
    for (int i = 0; i < NSENT; i++) {
        char *body = strf("{\"q\": \"%s\", \"source\": \"en\", \"target\": \"fr\", \"format\": \"text\"}", sents[i]);
        char *want_body = strf("{\"translatedText\": \"%s\"}\n", want[i]);
        expect_answer(HTTP_JSON(p.port, "/translate", body), 200, want_body);
        free(body);
        body = strf("q=%s&source=en&target=fr", sents[i]);
        expect_answer(http_req(p.port, "POST", "/translate", "application/x-www-form-urlencoded", body, NULL), 200,
                      want_body);
        free(body);
        free(want_body);
    }
    /* an array, in order; source auto */
    HttpRes h = HTTP_JSON(p.port, "/translate",
                          "{\"q\": [\"the cat sleeps .\", \"hello !\", \"\"], \"source\": \"auto\", \"target\": \"fr\"}");
    char *want_body = strf("{\"detectedLanguage\": [{\"confidence\": 100, \"language\": \"en\"}, {\"confidence\": 100, "
                           "\"language\": \"en\"}, {\"confidence\": 100, \"language\": \"en\"}], \"translatedText\": "
                           "[\"%s\", \"%s\", \"\"]}\n",
                           want[0], want[2]);
    expect_answer(h, 200, want_body);
    free(want_body);
    /* a three-letter code is the language */
    want_body = strf("{\"translatedText\": \"%s\"}\n", want[4]);
    expect_answer(HTTP_JSON(p.port, "/translate", "{\"q\": \"a cat\", \"source\": \"eng\", \"target\": \"fra\"}"), 200,
                  want_body);
    free(want_body);
    /* alternatives: translate --nbest's 2nd and 3rd (the text whole) */
    const char *one[] = {sents[1]};
    RunResult nb = RUN_S2S(NULL, "translate", f.enfr, "--nbest", "3", sents[1]);
    cr_assert_eq(nb.status, 0);
    char alt[3][256];
    char *q = nb.out;
    for (int k = 0; k < 3; k++) {
        char *a = strstr(q, "||| ") + 4, *b = strstr(a, " |||");
        snprintf(alt[k], sizeof alt[k], "%.*s", (int)(b - a), a);
        q = strchr(b, '\n') + 1;
    }
    run_free(&nb);
    (void)one;
    want_body = strf("{\"translatedText\": \"%s\", \"alternatives\": [\"%s\", \"%s\"]}\n", alt[0], alt[1], alt[2]);
    expect_answer(http_req(p.port, "POST", "/translate", "application/x-www-form-urlencoded",
                           "q=a+big+black+dog+eats&source=en&target=fr&alternatives=2", NULL),
                  200, want_body);
    free(want_body);

    expect_answer(HTTP_GET(p.port, "/languages"), 200, "[{\"code\": \"en\", \"name\": \"English\", \"targets\": [\"fr\"]}]\n");
    expect_answer(HTTP_GET(p.port, "/frontend/settings"), 200,
                  "{\"charLimit\": 5000, \"apiKeys\": false, \"keyRequired\": false, \"suggestions\": false, "
                  "\"filesTranslation\": false, \"supportedFilesFormat\": [], \"language\": {\"source\": "
                  "{\"code\": \"en\", \"name\": \"English\"}, \"target\": {\"code\": \"fr\", \"name\": \"French\"}}}\n");
    h = HTTP_GET(p.port, "/health");
    cr_expect_eq(h.status, 200);
    cr_expect(strstr(h.body, "\"status\": \"ok\", \"pairs\": [\"en-fr\"], \"precision\": \"int8\""), "%s", h.body);
    http_res_free(&h);
    h = HTTP_GET(p.port, "/");
    cr_expect_eq(h.status, 200);
    cr_expect(strstr(h.body, "<title>s2s</title>"), "the page: %.200s", h.body);
    cr_expect(!strstr(h.body, "http://") && !strstr(h.body, "https://"), "the page loads nothing from elsewhere");
    http_res_free(&h);
    cr_expect_eq(serve_proc_stop(&p, SIGTERM, NULL), 0);
    lines_free(want);
    fix_free(&f);
}

Test(serve, pairs_ensembles_and_languages)
{
    NEED_CURL();
    Fix f = fix_new();
    /* two en-fr files are an ensemble: the answers are translate's with both */
    const char *const both[] = {f.enfr2, NULL};
    char **want = translate_output(f.enfr, sents, 2, both);
    ServeProc p = SERVE_START(f.enfr, f.fren, f.enfr2);
    expect_answer(HTTP_GET(p.port, "/languages"), 200,
                  "[{\"code\": \"en\", \"name\": \"English\", \"targets\": [\"fr\"]}, "
                  "{\"code\": \"fr\", \"name\": \"French\", \"targets\": [\"en\"]}]\n");
    char *want_body = strf("{\"translatedText\": [\"%s\", \"%s\"]}\n", want[0], want[1]);
    expect_answer(HTTP_JSON(p.port, "/translate", "{\"q\": [\"the cat sleeps .\", \"a big black dog eats\"], "
                                                  "\"source\": \"en\", \"target\": \"fr\"}"),
                  200, want_body);
    free(want_body);
    lines_free(want);
    /* fr-en: the other model */
    const char *fr[] = {"le chat dort"};
    want = translate_output(f.fren, fr, 1, NULL);
    want_body = strf("{\"translatedText\": \"%s\"}\n", want[0]);
    expect_answer(HTTP_JSON(p.port, "/translate", "{\"q\": \"le chat dort\", \"source\": \"fr\", \"target\": \"en\"}"),
                  200, want_body);
    free(want_body);
    lines_free(want);
    expect_answer(HTTP_JSON(p.port, "/translate", "{\"q\": \"x\", \"source\": \"fr\", \"target\": \"fr\"}"), 400,
                  "{\"error\": \"Invalid request: no model translates fr into fr\"}\n");
    char *log;
    cr_expect_eq(serve_proc_stop(&p, SIGINT, &log), 0);
    cr_expect(strstr(log, "s2s serve: en-fr from ") && strstr(log, "en-fr.s2s ") && strstr(log, "en-fr.2.s2s (int8, beam 5)"),
              "%s", log);
    cr_expect(strstr(log, "s2s serve: fr-en from "), "%s", log);
    cr_expect(strstr(log, "s2s serve: SIGINT: answering the requests in flight, then stopping\ns2s serve: stopped\n"), "%s",
              log);
    free(log);
    fix_free(&f);
}

Test(serve, native_endpoint_scores_nbest_and_attention)
{
    NEED_CURL();
    Fix f = fix_new();
    RunResult nb = RUN_S2S(NULL, "translate", f.enfr, "--nbest", "2", "--beam", "3", "--length-penalty", "0.5", sents[3]);
    cr_assert_eq(nb.status, 0);
    ServeProc p = SERVE_START(f.enfr);
    HttpRes h = HTTP_JSON(p.port, "/s2s/translate",
                          "{\"q\": \"the dog eats the cat\", \"source\": \"en\", \"target\": \"fr\", \"beam\": 3, "
                          "\"nbest\": 2, \"length_penalty\": 0.5, \"attention\": true}");
    cr_assert_eq(h.status, 200, "%s", h.body);
    Json doc = parse_body(&h);
    const JsonVal *t = &json_get(doc.root, "translations")->u.c.items[0];
    const JsonVal *nbest = json_get(t, "nbest");
    cr_assert_eq(nbest->u.c.n, 2);
    /* translate --nbest's lines, scores printed with %.6f */
    char *line = nb.out;
    for (int k = 0; k < 2; k++) {
        const JsonVal *hyp = &nbest->u.c.items[k];
        char *expect = strf("0 ||| %s ||| %.6f\n", str_of(json_get(hyp, "text")), json_get(hyp, "score")->u.num.d);
        cr_expect(!strncmp(line, expect, strlen(expect)), "hypothesis %d: %s, translate: %s", k, expect, nb.out);
        line = strchr(line, '\n') + 1;
        free(expect);
    }
    cr_expect_str_eq(str_of(json_get(t, "text")), str_of(json_get(&nbest->u.c.items[0], "text")));
    const JsonVal *att = json_get(t, "attention");
    cr_assert(att, "%s", h.body);
    const JsonVal *src = json_get(att, "source"), *tgt = json_get(att, "target"), *w = json_get(att, "weights");
    cr_expect_eq(src->u.c.n, 5);
    cr_expect_str_eq(str_of(&src->u.c.items[1]), "dog");
    cr_expect_eq(w->u.c.n, tgt->u.c.n);
    for (size_t r = 0; r < w->u.c.n; r++) {
        double sum = 0;
        cr_assert_eq(w->u.c.items[r].u.c.n, 5);
        for (size_t c = 0; c < 5; c++)
            sum += w->u.c.items[r].u.c.items[c].u.num.d;
        cr_expect(sum > 0.999 && sum < 1.001, "row %zu sums to %g", r, sum);
    }
    cr_expect(!strncmp(str_of(json_get(att, "svg")), "<?xml", 5));
    cr_expect_str_eq(str_of(json_get(doc.root, "precision")), "int8");
    cr_expect_eq(json_get(doc.root, "beam")->u.num.i, 3);
    json_free(&doc);
    http_res_free(&h);
    run_free(&nb);
    /* what only the server sets */
    expect_answer(HTTP_JSON(p.port, "/s2s/translate", "{\"q\": \"a\", \"source\": \"en\", \"target\": \"fr\", \"precision\": \"f32\"}"),
                  400, "{\"error\": \"Invalid request: precision is the server's (int8, its --precision)\"}\n");
    expect_answer(HTTP_JSON(p.port, "/s2s/translate", "{\"q\": \"a\", \"source\": \"en\", \"target\": \"fr\", \"beam\": 11}"),
                  400, "{\"error\": \"Invalid request: beam must be at most 10 (the server's --max-beam)\"}\n");
    expect_answer(HTTP_JSON(p.port, "/s2s/translate", "{\"q\": \"a\", \"source\": \"en\", \"target\": \"fr\", \"bream\": 1}"),
                  400, "{\"error\": \"Invalid request: unknown parameter 'bream'\"}\n");
    expect_answer(HTTP_JSON(p.port, "/s2s/translate", "{\"q\": \"a\", \"source\": \"en\", \"target\": \"fr\", \"nbest\": 6}"),
                  400, "{\"error\": \"Invalid request: nbest must not exceed the beam (6 > 5)\"}\n");
    cr_expect_eq(serve_proc_stop(&p, SIGTERM, NULL), 0);
    fix_free(&f);
}

/* Clients that send their headers, wait, then their bodies all together: the server
   sees them all arriving and decodes them in one batch or a few. */
Test(serve, concurrent_requests_are_batched_and_each_gets_what_translate_gives)
{
    NEED_CURL();
    Fix f = fix_new();
    enum { NC = 40 };
    /* client c asks for 1 to 3 texts made of the fixture's words */
    static const char *const words[] = {"the", "cat", "dog", "a", "sleeps", "eats", "hello", "big", "black"};
    char *texts[NC][3];
    int nt[NC], total = 0;
    const char *all[3 * NC];
    for (int c = 0; c < NC; c++) {
        nt[c] = 1 + c % 3;
        for (int k = 0; k < nt[c]; k++) {
            Buf b = {0};
            int len = 1 + (c * 7 + k * 3) % 9;
            for (int i = 0; i < len; i++)
                buf_printf(&b, "%s%s", i ? " " : "", words[(c * 5 + k * 11 + i * 13) % 9]);
            if ((c + k) % 4 == 0)
                buf_puts(&b, " . the cat sleeps .");
            texts[c][k] = buf_take(&b);
            all[total++] = texts[c][k];
        }
    }
    char **want = translate_output(f.enfr, all, total, NULL);
    /* the clients are all on 127.0.0.1: as many connections from it as they need */
    ServeProc p = SERVE_START(f.enfr, "--batch-wait", "1000", "--max-conns-per-ip", "64");
    int fd[NC];
    char *body[NC];
    for (int c = 0; c < NC; c++) {
        Buf b = {0};
        buf_puts(&b, "{\"q\": [");
        for (int k = 0; k < nt[c]; k++)
            buf_printf(&b, "%s\"%s\"", k ? ", " : "", texts[c][k]);
        buf_puts(&b, "], \"source\": \"en\", \"target\": \"fr\"}");
        body[c] = buf_take(&b);
        fd[c] = http_open(p.port);
        cr_assert(fd[c] >= 0);
        char *head = strf("POST /translate HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: "
                          "application/json\r\nContent-Length: %zu\r\n\r\n",
                          strlen(body[c]));
        http_send(fd[c], head);
        free(head);
    }
    usleep(300000);
    for (int c = 0; c < NC; c++)
        http_send(fd[c], body[c]);
    int at = 0;
    for (int c = 0; c < NC; c++) {
        HttpRes h = http_read(fd[c]);
        cr_assert_eq(h.status, 200, "client %d: %s", c, h.body);
        Buf w = {0};
        buf_puts(&w, "{\"translatedText\": [");
        for (int k = 0; k < nt[c]; k++)
            buf_printf(&w, "%s\"%s\"", k ? ", " : "", want[at + k]);
        buf_puts(&w, "]}\n");
        cr_expect_str_eq(h.body, w.data, "client %d", c);
        at += nt[c];
        buf_free(&w);
        http_res_free(&h);
        free(body[c]);
    }
    /* the 80 texts went in batches of at most 64 (--max-batch): 2 to 4 of them */
    HttpRes h = HTTP_GET(p.port, "/health");
    Json doc = parse_body(&h);
    long batches = json_get(doc.root, "batches")->u.num.i, ntexts = json_get(doc.root, "texts")->u.num.i;
    cr_expect_eq(ntexts, total);
    cr_expect(batches >= 2 && batches <= 4, "%ld batches for %d requests", batches, NC);
    json_free(&doc);
    http_res_free(&h);

    /* and many clients at once through curl, as they come: the same answers */
    int pid[NC];
    char *outs[NC];
    for (int c = 0; c < NC; c++) {
        outs[c] = strf("%s/out.%d", f.dir, c);
        char *bodyfile = strf("%s/body.%d", f.dir, c);
        char *b = strf("{\"q\": \"%s\", \"source\": \"en\", \"target\": \"fr\"}", texts[c][0]);
        write_file(bodyfile, b);
        free(b);
        pid[c] = fork();
        if (pid[c] == 0) {
            char *url = strf("http://127.0.0.1:%d/translate", p.port);
            char *data = strf("@%s", bodyfile);
            execl("/usr/bin/curl", "curl", "-s", "--noproxy", "*", "-o", outs[c], "-H",
                  "Content-Type: application/json", "--data-binary", data, url, (char *)NULL);
            _exit(127);
        }
        free(bodyfile);
    }
    at = 0;
    for (int c = 0; c < NC; c++) {
        cr_expect_eq(wait_exit(pid[c]), 0);
        char *got = slurp(outs[c], NULL);
        char *w = strf("{\"translatedText\": \"%s\"}\n", want[at]);
        cr_expect_str_eq(got ? got : "", w, "curl client %d", c);
        at += nt[c];
        free(got);
        free(w);
        free(outs[c]);
    }
    cr_expect_eq(serve_proc_stop(&p, SIGTERM, NULL), 0);
    for (int c = 0; c < NC; c++)
        for (int k = 0; k < nt[c]; k++)
            free(texts[c][k]);
    lines_free(want);
    fix_free(&f);
}

Test(serve, bad_requests_get_one_json_error_and_others_are_still_answered)
{
    NEED_CURL();
    Fix f = fix_new();
    char *keys = strf("%s/keys", f.dir);
    write_file(keys, "\n  secret-1  \nsecret-2\n");
    ServeProc p = SERVE_START(f.enfr, "--api-keys", keys, "--max-chars", "40", "--max-texts", "3", "--max-body", "2048");
    const char *k = "\"api_key\": \"secret-1\"";
    struct {
        const char *body, *type;
        int status;
        const char *error;
    } cases[] = {
        {"{\"q\": \"a\", \"source\": \"en\", \"target\": \"fr\"", "application/json", 400,
         "Invalid JSON: JSON: expected ',' or '}' at byte 41 (end of input)"},
        {"[1, 2]", "application/json", 400, "Invalid JSON format"},
        {"", "application/json", 400, "Invalid JSON: JSON: expected a value at byte 0 (end of input)"},
        {"{\"source\": \"en\", \"target\": \"fr\", \"api_key\": \"secret-1\"}", NULL, 400, "Invalid request: missing q parameter"},
        {"{\"q\": [], \"source\": \"en\", \"target\": \"fr\", \"api_key\": \"secret-1\"}", NULL, 400,
         "Invalid request: missing q parameter"},
        {"{\"q\": \"a\", \"target\": \"fr\", \"api_key\": \"secret-1\"}", NULL, 400, "Invalid request: missing source parameter"},
        {"{\"q\": \"a\", \"source\": \"en\", \"api_key\": \"secret-1\"}", NULL, 400, "Invalid request: missing target parameter"},
        {"{\"q\": 5, \"source\": \"en\", \"target\": \"fr\", \"api_key\": \"secret-1\"}", NULL, 400,
         "Invalid request: q parameter is not a string or an array of strings"},
        {"{\"q\": [\"a\", 5], \"source\": \"en\", \"target\": \"fr\", \"api_key\": \"secret-1\"}", NULL, 400,
         "Invalid request: q[1] is not a string"},
        {"{\"q\": \"a\\u0000b\", \"source\": \"en\", \"target\": \"fr\", \"api_key\": \"secret-1\"}", NULL, 400,
         "Invalid request: q: NUL character at byte 2"},
        {"{\"q\": \"a\\ud800\", \"source\": \"en\", \"target\": \"fr\"}", NULL, 400,
         "Invalid JSON: JSON: unpaired surrogate \\\\uD800 in string at byte 8"},
        {"q=%ff%fe&source=en&target=fr&api_key=secret-2", "application/x-www-form-urlencoded", 400,
         "Invalid request: q: invalid UTF-8 at byte 1"},
        {"q=a&q=b&source=en&target=fr", "application/x-www-form-urlencoded", 400, "Invalid request: q parameter given twice"},
        {"{\"q\": \"a\", \"source\": \"en\", \"target\": \"zz\", \"api_key\": \"secret-1\"}", NULL, 400, "zz is not supported"},
        {"{\"q\": \"a\", \"source\": \"de\", \"target\": \"fr\", \"api_key\": \"secret-1\"}", NULL, 400, "de is not supported"},
        {"{\"q\": \"a\", \"source\": \"en\", \"target\": \"fr\", \"format\": \"html\", \"api_key\": \"secret-1\"}", NULL, 400,
         "html format is not supported"},
        {"{\"q\": \"a\", \"source\": \"en\", \"target\": \"fr\", \"alternatives\": \"abc\", \"api_key\": \"secret-1\"}", NULL,
         400, "Invalid request: alternatives parameter is not a number"},
        {"{\"q\": \"a\", \"source\": \"en\", \"target\": \"fr\", \"alternatives\": 5, \"api_key\": \"secret-1\"}", NULL, 400,
         "Invalid request: alternatives must be at most 4 (the beam size minus 1)"},
        {"{\"q\": \"the cat sleeps . the cat sleeps . the cat sleeps !\", \"source\": \"en\", \"target\": \"fr\", "
         "\"api_key\": \"secret-1\"}",
         NULL, 400, "Invalid request: request (50) exceeds text limit (40)"},
        {"{\"q\": [\"a\", \"b\", \"c\", \"d\"], \"source\": \"en\", \"target\": \"fr\", \"api_key\": \"secret-1\"}", NULL, 400,
         "Invalid request: 4 texts exceed the limit of 3"},
        {"{\"q\": \"a\", \"source\": \"en\", \"target\": \"fr\"}", NULL, 403, "Invalid API key"},
        {"{\"q\": \"a\", \"source\": \"en\", \"target\": \"fr\", \"api_key\": \"secret\"}", NULL, 403, "Invalid API key"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        HttpRes h = http_req(p.port, "POST", "/translate", cases[i].type ? cases[i].type : "application/json",
                             cases[i].body, NULL);
        char *want = strf("{\"error\": \"%s\"}\n", cases[i].error);
        cr_expect_eq(h.status, cases[i].status, "case %zu: status %d %s", i, h.status, h.body);
        cr_expect(!strcmp(h.body, want), "case %zu: %s, not %s", i, h.body, want);
        free(want);
        http_res_free(&h);
    }
    (void)k;
    /* a body over --max-body: at once from its Content-Length, and when chunked */
    Buf big = {0};
    for (int i = 0; i < 3000; i++)
        buf_putc(&big, 'a');
    expect_answer(HTTP_JSON(p.port, "/translate", big.data), 413,
                  "{\"error\": \"Request body over 2048 bytes (the server's --max-body)\"}\n");
    const char *chunked[] = {"-H", "Transfer-Encoding: chunked", NULL};
    expect_answer(http_req(p.port, "POST", "/translate", "application/json", big.data, chunked), 413,
                  "{\"error\": \"Request body over 2048 bytes (the server's --max-body)\"}\n");
    buf_free(&big);
    expect_answer(HTTP_GET(p.port, "/nope"), 404, "{\"error\": \"Not found: /nope\"}\n");
    expect_answer(HTTP_GET(p.port, "/translate"), 405, "{\"error\": \"Method not allowed: GET /translate\"}\n");
    expect_answer(http_req(p.port, "DELETE", "/languages", NULL, NULL, NULL), 405,
                  "{\"error\": \"Method not allowed: DELETE /languages\"}\n");
    /* the languages and the health need no key; a good request is answered */
    expect_answer(HTTP_GET(p.port, "/languages"), 200, "[{\"code\": \"en\", \"name\": \"English\", \"targets\": [\"fr\"]}]\n");
    const char *one[] = {"the cat sleeps ."};
    char **want = translate_output(f.enfr, one, 1, NULL);
    char *wb = strf("{\"translatedText\": \"%s\"}\n", want[0]);
    expect_answer(HTTP_JSON(p.port, "/translate", "{\"q\": \"the cat sleeps .\", \"source\": \"en\", \"target\": \"fr\", "
                                                  "\"api_key\": \"secret-2\"}"),
                  200, wb);
    free(wb);
    lines_free(want);
    cr_expect_eq(serve_proc_stop(&p, SIGTERM, NULL), 0);
    /* a key file without keys */
    write_file(keys, "\n \n");
    RunResult r = RUN_S2S(NULL, "serve", f.enfr, "--api-keys", keys);
    cr_expect_eq(r.status, 1);
    char *msg = strf("s2s: %s: no API key in the file (one a line)\n", keys);
    cr_expect_str_eq(r.err, msg);
    free(msg);
    run_free(&r);
    free(keys);
    fix_free(&f);
}

Test(serve, slow_and_idle_clients_do_not_stall_the_others)
{
    NEED_CURL();
    Fix f = fix_new();
    ServeProc p = SERVE_START(f.enfr, "--request-timeout", "1", "--timeout", "2", "--max-conns", "20",
                              "--max-conns-per-ip", "100", "--head-timeout", "2");
    /* a body a byte at a time, slower than --request-timeout: closed after it */
    int slow = http_open(p.port);
    http_send(slow, "POST /translate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n");
    for (int i = 0; i < 6; i++) {
        http_send(slow, "{");
        usleep(300000);
    }
    HttpRes h = http_read(slow);
    cr_expect_eq(h.status, 0, "the slow client got an answer: %d %s", h.status, h.body);
    http_res_free(&h);
    /* fifty idle connections: each beyond --max-conns closes the oldest, so the first
       thirty are closed at once and the last twenty stay */
    int idle[50];
    for (int i = 0; i < 50; i++) {
        idle[i] = http_open(p.port);
        cr_assert(idle[i] >= 0);
    }
    usleep(300000);
    for (int i = 0; i < 50; i++)
        cr_expect(http_closed(idle[i]) == (i < 30), "connection %d %s", i, i < 30 ? "open" : "closed");
    /* after --head-timeout the idle ones are gone and a client is answered */
    sleep(3);
    for (int i = 30; i < 50; i++)
        cr_expect(http_closed(idle[i]), "connection %d still open after --head-timeout", i);
    h = HTTP_GET(p.port, "/health");
    cr_expect_eq(h.status, 200, "%s", h.body);
    http_res_free(&h);
    for (int i = 0; i < 50; i++)
        if (idle[i] >= 0)
            close(idle[i]);
    char *log;
    cr_expect_eq(serve_proc_stop(&p, SIGTERM, &log), 0);
    cr_expect(strstr(log, "POST /translate 408 0 texts "), "%s", log);
    cr_expect(strstr(log, "(the body did not arrive within 1 s: connection closed)"), "%s", log);
    free(log);
    fix_free(&f);
}

Test(serve, sigterm_answers_the_request_in_flight_then_exits_0)
{
    NEED_CURL();
    Fix f = fix_new();
    char *logf = strf("%s/serve.log", f.dir);
    ServeProc p = SERVE_START(f.enfr, "--log", logf, "--cors", "https://example.org");
    const char *body = "{\"q\": \"the cat sleeps .\", \"source\": \"en\", \"target\": \"fr\"}";
    int fd = http_open(p.port);
    char *head = strf("POST /translate HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\n"
                      "Content-Length: %zu\r\n\r\n{\"q\"",
                      strlen(body));
    http_send(fd, head);
    free(head);
    usleep(200000);
    kill(p.pid, SIGTERM);
    usleep(300000);
    /* no new connection is accepted */
    cr_expect_eq(http_open(p.port), -1);
    http_send(fd, body + 4);
    HttpRes h = http_read(fd);
    const char *one[] = {"the cat sleeps ."};
    char **want = translate_output(f.enfr, one, 1, NULL);
    char *wb = strf("{\"translatedText\": \"%s\"}\n", want[0]);
    cr_expect_eq(h.status, 200);
    cr_expect_str_eq(h.body, wb);
    free(wb);
    lines_free(want);
    http_res_free(&h);
    cr_expect_eq(serve_proc_stop(&p, SIGTERM, NULL), 0);
    char *log = slurp(logf, NULL);
    cr_expect(strstr(log, "Z POST /translate 200 1 texts "), "%s", log);
    free(log);
    free(logf);
    fix_free(&f);
}

Test(serve, cors_headers_and_preflight)
{
    NEED_CURL();
    Fix f = fix_new();
    ServeProc p = SERVE_START(f.enfr, "--cors", "https://example.org");
    const char *incl[] = {"-i", NULL};
    HttpRes h = http_req(p.port, "OPTIONS", "/translate", NULL, NULL, incl);
    cr_expect_eq(h.status, 204, "%s", h.body);
    cr_expect(strstr(h.body, "Access-Control-Allow-Origin: https://example.org\r\n"), "%s", h.body);
    cr_expect(strstr(h.body, "Access-Control-Allow-Methods: GET, POST, OPTIONS\r\n"), "%s", h.body);
    http_res_free(&h);
    h = http_req(p.port, "GET", "/languages", NULL, NULL, incl);
    cr_expect(strstr(h.body, "Access-Control-Allow-Origin: https://example.org\r\n"), "%s", h.body);
    http_res_free(&h);
    /* a second server on the same port is refused, not given a share of the connections */
    char *port = strf("%d", p.port);
    RunResult r = RUN_S2S(NULL, "serve", f.enfr, "--port", port);
    cr_expect_eq(r.status, 1);
    char *msg = strf("s2s: cannot listen on 127.0.0.1:%d (the port is in use, or the address is not this machine's)\n", p.port);
    cr_expect(strstr(r.err, msg), "%s", r.err);
    free(msg);
    free(port);
    run_free(&r);
    cr_expect_eq(serve_proc_stop(&p, SIGTERM, NULL), 0);
    fix_free(&f);
}

Test(serve, bad_command_lines)
{
    Fix f = fix_new();
    RunResult r = RUN_S2S(NULL, "serve");
    cr_expect_eq(r.status, 2);
    cr_expect(strstr(r.err, "s2s: serve: missing MODEL argument"), "%s", r.err);
    run_free(&r);
    r = RUN_S2S(NULL, "serve", f.enfr, "--beam", "12");
    cr_expect_eq(r.status, 2);
    cr_expect(strstr(r.err, "s2s: serve: --beam 12 is over --max-beam 10"), "%s", r.err);
    run_free(&r);
    r = RUN_S2S(NULL, "serve", f.enfr, "--host", "no.such.host.invalid", "--port", "0");
    cr_expect_eq(r.status, 1);
    cr_expect(strstr(r.err, "s2s: cannot listen on no.such.host.invalid:0: "), "%s", r.err);
    run_free(&r);
    char *missing = strf("%s/missing.s2s", f.dir);
    r = RUN_S2S(NULL, "serve", missing);
    cr_expect_eq(r.status, 1);
    cr_expect(strstr(r.err, missing), "%s", r.err);
    run_free(&r);
    free(missing);
    fix_free(&f);
}

Test(serve, native_constraints_and_a_glossary)
{
    NEED_CURL();
    Fix f = fix_new();
    char *gl = strf("%s/glossary.tsv", f.dir);
    write_file(gl, "black dog\tchien\n");
    ServeProc p = SERVE_START(f.enfr, "--glossary", gl);
    /* the native endpoint: what translate --constraints gives the same line */
    const char *line = "{\"text\": \"the cat sleeps\", \"constraints\": [\"mange le\"], \"avoid\": [\"dort\"], "
                       "\"prefix\": \"bonjour\"}";
    RunResult t = RUN_S2S(NULL, "translate", f.enfr, "--constraints", "--glossary", gl, line, "a big black dog");
    cr_assert_eq(t.status, 0, "%s", t.err);
    char *nl = strchr(t.out, '\n');
    *nl = '\0';
    char *want = strf("{\"source\": \"en\", \"target\": \"fr\", \"model\": \"%s\", \"beam\": 5, \"length_penalty\": 1, "
                      "\"precision\": \"int8\", \"split\": true, \"translations\": [{\"text\": \"%s\", \"score\": ",
                      f.enfr, t.out);
    HttpRes h = HTTP_JSON(p.port, "/s2s/translate",
                          "{\"q\": \"the cat sleeps\", \"source\": \"en\", \"target\": \"fr\", \"constraints\": [\"mange le\"], "
                          "\"avoid\": [\"dort\"], \"prefix\": \"bonjour\"}");
    cr_expect_eq(h.status, 200, "%s", h.body);
    cr_expect(!strncmp(h.body, want, strlen(want)), "%s, not %s", h.body, want);
    http_res_free(&h);
    free(want);
    /* LibreTranslate's API: the glossary applies */
    want = strf("{\"translatedText\": \"%.*s\"}\n", (int)strcspn(nl + 1, "\n"), nl + 1);
    expect_answer(HTTP_JSON(p.port, "/translate", "{\"q\": \"a big black dog\", \"source\": \"en\", \"target\": \"fr\"}"), 200,
                  want);
    cr_expect(strstr(want, "chien"), "%s", want);
    free(want);
    run_free(&t);
    /* a fault of a request's constraints answers it alone */
    expect_answer(HTTP_JSON(p.port, "/s2s/translate",
                            "{\"q\": \"the cat\", \"source\": \"en\", \"target\": \"fr\", \"constraints\": [\"zèbre\"]}"),
                  400, "{\"error\": \"text:1: constraint 1: 'zèbre' is not in the model's target vocabulary\"}\n");
    expect_answer(HTTP_JSON(p.port, "/s2s/translate",
                            "{\"q\": \"the cat\", \"source\": \"en\", \"target\": \"fr\", \"constraints\": \"chien\"}"),
                  400, "{\"error\": \"Invalid request: constraints parameter is not an array of strings\"}\n");
    cr_expect_eq(serve_proc_stop(&p, SIGTERM, NULL), 0);
    free(gl);
    fix_free(&f);
}

Test(serve, form_bodies_urlencoded_and_multipart)
{
    NEED_CURL();
    Fix f = fix_new();
    const char *one[] = {"the cat sleeps ."};
    char **want = translate_output(f.enfr, one, 1, NULL);
    char *want_body = strf("{\"translatedText\": \"%s\"}\n", want[0]);
    ServeProc p = SERVE_START(f.enfr);
    /* %-encoded, and multipart (curl -F: a boundary of curl's) */
    expect_answer(http_req(p.port, "POST", "/translate", "application/x-www-form-urlencoded",
                           "q=the%20cat+sleeps%20%2E&source=en&target=fr", NULL),
                  200, want_body);
    const char *const multi[] = {"-F", "q=the cat sleeps .", "-F", "source=en", "-F", "target=fr", NULL};
    expect_answer(http_req(p.port, "POST", "/translate", NULL, NULL, multi), 200, want_body);
    /* a boundary given, fields in parts of their own */
    const char *body = "--XyZ\r\nContent-Disposition: form-data; name=\"q\"\r\n\r\nthe cat sleeps .\r\n"
                       "--XyZ\r\nContent-Disposition: form-data; name=\"source\"\r\n\r\nen\r\n"
                       "--XyZ\r\nContent-Disposition: form-data; name=\"target\"\r\n\r\nfr\r\n--XyZ--\r\n";
    expect_answer(http_req(p.port, "POST", "/translate", "multipart/form-data; boundary=XyZ", body, NULL), 200,
                  want_body);
    /* a field twice, a fault of a field, no boundary */
    const char *const twice[] = {"-F", "q=a", "-F", "q=b", "-F", "source=en", "-F", "target=fr", NULL};
    expect_answer(http_req(p.port, "POST", "/translate", NULL, NULL, twice), 400,
                  "{\"error\": \"Invalid request: q parameter given twice\"}\n");
    const char *const bad_alt[] = {"-F", "q=a", "-F", "source=en", "-F", "target=fr", "-F", "alternatives=x", NULL};
    expect_answer(http_req(p.port, "POST", "/translate", NULL, NULL, bad_alt), 400,
                  "{\"error\": \"Invalid request: alternatives parameter is not a number\"}\n");
    expect_answer(http_req(p.port, "POST", "/translate", "multipart/form-data", body, NULL), 400,
                  "{\"error\": \"Invalid request: a form body without a boundary\"}\n");
    cr_expect_eq(serve_proc_stop(&p, SIGTERM, NULL), 0);
    free(want_body);
    lines_free(want);
    fix_free(&f);
}
