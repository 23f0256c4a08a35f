/* End-to-end tests of `s2s serve` with real clients: its web page in headless Chromium
   driven through chromedriver (tests/serve/browser.py), and the npm LibreTranslate
   client `translate` (tests/serve/client.mjs). Each translation they read must be what
   `s2s translate` gives. Without Chromium, or without node and the npm package, the
   test concerned is skipped, saying what to install. */
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

#define CHROMIUM "/usr/bin/chromium"
#define CHROMEDRIVER "/usr/bin/chromedriver"

/* The first executable file named name in a directory of $PATH, or NULL (free it). */
static char *in_path(const char *name)
{
    const char *path = getenv("PATH");
    char *dirs = strdup(path && *path ? path : "/usr/local/bin:/usr/bin:/bin");
    char *found = NULL, *save = NULL;
    for (char *d = strtok_r(dirs, ":", &save); d && !found; d = strtok_r(NULL, ":", &save)) {
        char *p = strf("%s/%s", d, name);
        if (access(p, X_OK) == 0)
            found = p;
        else
            free(p);
    }
    free(dirs);
    return found;
}

/* A string member of the object; fails the test when it is missing or not a string. */
static const char *member_str(const JsonVal *o, const char *key)
{
    const JsonVal *v = json_get(o, key);
    cr_assert(v && v->type == JSON_STRING, "%s is not a string", key);
    return v->u.str.s;
}

static int64_t member_int(const JsonVal *o, const char *key)
{
    const JsonVal *v = json_get(o, key);
    cr_assert(v && v->type == JSON_NUMBER && v->is_int, "%s is not an integer", key);
    return v->u.num.i;
}

static bool member_bool(const JsonVal *o, const char *key)
{
    const JsonVal *v = json_get(o, key);
    cr_assert(v && v->type == JSON_BOOL, "%s is not true or false", key);
    return v->b;
}

Test(serve_page, the_web_page_in_chromium_shows_what_translate_gives)
{
    if (access(CHROMIUM, X_OK) != 0 || access(CHROMEDRIVER, X_OK) != 0)
        cr_skip_test(CHROMIUM " or " CHROMEDRIVER " is not installed (apt-get install chromium chromium-driver): "
                     "the web page is not tested");
    ServeModel f = serve_model_new();
    const char *sents[] = {"the cat sleeps .", "a big black dog eats"};
    char **want = translate_output(f.enfr, sents, 2, NULL);
    char *logf = strf("%s/serve.log", f.dir);
    ServeProc p = SERVE_START(f.enfr, "--log", logf);
    char *url = strf("http://127.0.0.1:%d/", p.port);
    /* sents[0] with the button, sents[1] as one types (browser.py) */
    RunResult r = RUN_PROG(NULL, python_bin(), "tests/serve/browser.py", url, sents[0], sents[1]);
    cr_expect_eq(serve_proc_stop(&p, SIGTERM, NULL), 0);
    cr_assert_eq(r.status, 0, "browser.py exited %d: %s%s", r.status, r.out, r.err);

    Json doc;
    Err e;
    cr_assert_eq(json_parse(&doc, r.out, r.out_len, &e), 0, "browser.py's line is not JSON (%s): %s", e.msg, r.out);
    const JsonVal *o = doc.root;
    cr_assert_eq(o->type, JSON_OBJECT, "%s", r.out);
    /* the button: the translation, three alternatives of the n-best list, the heatmap
       decoded as an image */
    cr_expect_str_eq(member_str(o, "translation"), want[0]);
    cr_expect_eq(member_int(o, "alternatives"), 3, "%s", r.out);
    cr_expect(member_bool(o, "heatmap"), "no data:image/svg+xml img in #heatmap: %s", r.out);
    cr_expect_gt(member_int(o, "heatmap_width"), 0, "the heatmap did not decode: %s", r.out);
    /* translated as one types, without the button */
    cr_expect_str_eq(member_str(o, "live_translation"), want[1]);
    cr_expect_eq(member_int(o, "live_alternatives"), 3, "%s", r.out);
    json_free(&doc);

    /* The log: the page and /languages twice (browser.py loads the page for each
       check), each translation a /translate and a /s2s/translate of one text, all
       answered 200; at least one translation per check (typing may translate a part
       of the text first); nothing else but the browser's /favicon.ico. */
    char *log = slurp(logf, NULL);
    int nt = count_in_file(logf, "Z POST /translate 200 1 texts ");
    int fav = count_in_file(logf, "Z GET /favicon.ico 404 0 texts ");
    cr_expect_eq(count_in_file(logf, "Z GET / 200 0 texts "), 2, "%s", log);
    cr_expect_eq(count_in_file(logf, "Z GET /languages 200 0 texts "), 2, "%s", log);
    cr_expect_geq(nt, 2, "%s", log);
    cr_expect_eq(count_in_file(logf, "Z POST /translate "), nt, "%s", log);
    cr_expect_eq(count_in_file(logf, "Z POST /s2s/translate 200 1 texts "), nt, "%s", log);
    cr_expect_eq(count_in_file(logf, "Z POST /s2s/translate "), nt, "%s", log);
    cr_expect_eq(count_in_file(logf, "\n"), 4 + 2 * nt + fav, "%s", log);
    free(log);

    run_free(&r);
    free(url);
    free(logf);
    lines_free(want);
    serve_model_free(&f);
}

/* Runs `node tests/serve/client.mjs URL KEY SENTENCES...`. */
static RunResult run_client(const char *node, int port, const char *key, const char *const *sents, int n)
{
    char *url = strf("http://127.0.0.1:%d/", port);
    const char **argv = calloc((size_t)n + 5, sizeof *argv);
    int k = 0;
    argv[k++] = node;
    argv[k++] = "tests/serve/client.mjs";
    argv[k++] = url;
    argv[k++] = key;
    for (int i = 0; i < n; i++)
        argv[k++] = sents[i];
    argv[k] = NULL;
    RunResult r = run_prog(NULL, argv);
    free(argv);
    free(url);
    return r;
}

Test(serve_page, the_npm_libretranslate_client_gets_what_translate_gives)
{
    char *node = in_path("node");
    if (!node)
        cr_skip_test("node is not installed (apt-get install nodejs npm, then npm ci --prefix tests/serve): "
                     "the LibreTranslate client is not tested");
    if (!file_exists("tests/serve/node_modules/translate/package.json")) {
        free(node);
        cr_skip_test("tests/serve/node_modules/translate is missing (npm ci --prefix tests/serve): "
                     "the LibreTranslate client is not tested");
    }
    ServeModel f = serve_model_new();
    const char *sents[] = {"the cat sleeps .", "a big black dog eats", "hello !",
                           "big big dog sleeps . the cat eats ."};
    enum { N = sizeof sents / sizeof *sents };
    char **want = translate_output(f.enfr, sents, N, NULL);
    char *expected = strdup("");
    for (int i = 0; i < N; i++) {
        char *t = strf("%s%s\n", expected, want[i]);
        free(expected);
        expected = t;
    }

    /* a server without keys: no key sent */
    ServeProc p = SERVE_START(f.enfr);
    RunResult r = run_client(node, p.port, "", sents, N);
    cr_expect_eq(r.status, 0, "client.mjs exited %d: %s", r.status, r.err);
    cr_expect_str_eq(r.out, expected);
    cr_expect_str_eq(r.err, "");
    run_free(&r);
    cr_expect_eq(serve_proc_stop(&p, SIGTERM, NULL), 0);

    /* a server with --api-keys: the right key, a wrong one, none */
    char *keys = strf("%s/keys", f.dir);
    write_file(keys, "other-key\n  page-secret  \n");
    p = SERVE_START(f.enfr, "--api-keys", keys);
    r = run_client(node, p.port, "page-secret", sents, N);
    cr_expect_eq(r.status, 0, "client.mjs exited %d: %s", r.status, r.err);
    cr_expect_str_eq(r.out, expected);
    cr_expect_str_eq(r.err, "");
    run_free(&r);
    const char *bad_keys[] = {"wrong-key", ""};
    for (int i = 0; i < 2; i++) {
        r = run_client(node, p.port, bad_keys[i], sents, 1);
        cr_expect_eq(r.status, 1, "key \"%s\": client.mjs exited %d: %s%s", bad_keys[i], r.status, r.out, r.err);
        cr_expect_str_eq(r.out, "");
        cr_expect_str_eq(r.err, "client.mjs: Invalid API key\n");
        run_free(&r);
    }
    cr_expect_eq(serve_proc_stop(&p, SIGTERM, NULL), 0);

    free(keys);
    free(expected);
    lines_free(want);
    free(node);
    serve_model_free(&f);
}
