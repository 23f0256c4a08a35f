/*
 * The library as a program outside the source tree gets it: `make install` into a
 * staging directory (DESTDIR), then the compiler flags from the installed s2s.pc
 * (pkg-config with PKG_CONFIG_SYSROOT_DIR pointing there). Against that copy:
 *   - README's "Use s2s from C" example, compiled as it stands, prints what
 *     `s2s translate` prints, linked with libs2s.so.0 and with libs2s.a;
 *   - tests/library/check.c translates with two models loaded in one process, at 1 and 2
 *     threads, on two threads at once, n-best lists, scores the results and reports the
 *     errors of a missing model and a bad text: each part equal to the command's output
 *     on the same inputs;
 *   - the Python module, with Debian's python3: tests/python/test_s2s.py (the same
 *     comparisons, its errors, README's "Use s2s from Python" example as it stands).
 * Under `make asan` the programs are built with the same sanitizers as the library
 * (S2S_SAN), so that AddressSanitizer checks them, leaks included.
 */
#include <criterion/criterion.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"

#define RNN "tests/recorded/rnn.s2s"
#define TF "tests/recorded/tf.s2s"

static const char *env_or(const char *name, const char *dflt)
{
    const char *v = getenv(name);
    return v && *v ? v : dflt;
}

/* The binary under test, as a path relative to the repository ("./s2s" -> "s2s"). */
static const char *bin_path(void)
{
    const char *b = env_or("S2S", "./s2s");
    return strncmp(b, "./", 2) == 0 ? b + 2 : b;
}

/* A staging tree with `make install DESTDIR=root PREFIX=/usr/local` of this build. */
typedef struct Inst {
    char *root, *libdir, *pc_env[2], *pythondir;
} Inst;

static Inst install(void)
{
    Inst in = {tmpdir_new(), NULL, {NULL, NULL}, NULL};
    char *destdir = strf("DESTDIR=%s", in.root), *build = strf("BUILD=%s", env_or("S2S_BUILD", "build/release")),
         *bin = strf("BIN=%s", bin_path()), *san = strf("SAN=%s", env_or("S2S_SAN", "")),
         *opt = strf("OPT=%s", env_or("S2S_OPT", "-O2 -g"));
    /* a make of its own, not a job of the make that runs the tests */
    RunResult r = RUN_PROG(NULL, "/usr/bin/env", "-u", "MAKEFLAGS", "-u", "MFLAGS", "-u", "MAKELEVEL", "make", "-s",
                           "--no-print-directory", "install", destdir, "PREFIX=/usr/local", build, bin, san, opt);
    expect_success(&r, "make install");
    run_free(&r);
    in.libdir = strf("%s/usr/local/lib", in.root);
    in.pc_env[0] = strf("PKG_CONFIG_SYSROOT_DIR=%s", in.root);
    in.pc_env[1] = strf("PKG_CONFIG_PATH=%s/pkgconfig", in.libdir);
    char *pat = strf("%s/python3*/dist-packages", in.libdir);
    glob_t g;
    cr_assert_eq(glob(pat, 0, NULL, &g), 0, "no %s", pat);
    in.pythondir = strdup(g.gl_pathv[0]);
    globfree(&g);
    free(pat);
    free(destdir);
    free(build);
    free(bin);
    free(san);
    free(opt);
    return in;
}

static void inst_free(Inst *in)
{
    rm_rf(in->root);
    free(in->root);
    free(in->libdir);
    free(in->pc_env[0]);
    free(in->pc_env[1]);
    free(in->pythondir);
}

static const char *const sentences[] = {"I have a cat.", "Where is the station? It is late.", "", "Tom likes books."};
enum { NSENT = 4 };

/* The command's stderr for a missing model, without "s2s: " and the newline. */
static char *missing_model_message(void)
{
    RunResult r = RUN_S2S(NULL, "translate", "/nonexistent/model.s2s", "x");
    cr_assert_eq(r.status, 1);
    cr_assert(strncmp(r.err, "s2s: ", 5) == 0);
    char *m = strndup(r.err + 5, strlen(r.err) - 6);
    run_free(&r);
    return m;
}

Test(library, c_programs_against_the_installed_copy)
{
    Inst in = install();
    char *dir = tmpdir_new(), *src = strf("%s/translate.c", dir), *exe = strf("%s/translate", dir),
         *exe_static = strf("%s/translate-static", dir), *ld = strf("LD_LIBRARY_PATH=%s", in.libdir);

    /* README's example, as it stands */
    char *example = readme_block("## Use s2s from C", "c");
    write_file(src, example);
    PcTree pt = {in.libdir, in.pc_env, 2};
    pc_compile(&pt, env_or("S2S_SAN", ""), src, exe, false);
    pc_compile(&pt, env_or("S2S_SAN", ""), src, exe_static, true);
    RunResult want = RUN_S2S(NULL, "translate", TF, sentences[0], sentences[1], sentences[2], sentences[3]);
    expect_success(&want, "s2s translate");
    RunResult r = RUN_PROG(NULL, "/usr/bin/env", ld, exe, TF, sentences[0], sentences[1], sentences[2], sentences[3]);
    expect_success(&r, "the example");
    cr_expect_str_eq(r.out, want.out);
    run_free(&r);
    r = RUN_PROG(NULL, exe_static, TF, sentences[0], sentences[1], sentences[2], sentences[3]);
    expect_success(&r, "the example, static");
    cr_expect_str_eq(r.out, want.out);
    run_free(&r);
    run_free(&want);
    /* a missing model: a message, status 1, no crash */
    char *msg = missing_model_message(), *line = strf("translate: %s\n", msg);
    r = RUN_PROG(NULL, "/usr/bin/env", ld, exe, "/nonexistent/model.s2s", "x");
    cr_expect_eq(r.status, 1);
    cr_expect_str_eq(r.err, line);
    cr_expect_str_eq(r.out, "");
    run_free(&r);

    /* tests/library/check.c: two models, threads, n-best, scores, errors */
    char *check = strf("%s/check", dir), *lines = strf("%s/lines.txt", dir), *a = strf("%s/a.txt", dir),
         *b = strf("%s/b.txt", dir);
    PcTree pt2 = {in.libdir, in.pc_env, 2};
    pc_compile(&pt2, env_or("S2S_SAN", ""), "tests/library/check.c", check, false);
    char *text = slurp("data/sample.tsv", NULL), *p = text, *q = text;
    for (int i = 0; i < 30; i++) { /* the first 30 English sources */
        char *tab = strchr(p, '\t'), *nl = strchr(p, '\n');
        memmove(q, p, (size_t)(tab - p));
        q += tab - p;
        *q++ = '\n';
        p = nl + 1;
    }
    strcpy(q, "Two sentences here. And a second one!\n\n");
    write_file(lines, text);
    for (int threads = 1; threads <= 2; threads++) {
        char th[16];
        snprintf(th, sizeof th, "%d", threads);
        RunResult ta = RUN_S2S(NULL, "translate", RNN, "-i", lines, "--threads", th);
        RunResult tb = RUN_S2S(NULL, "translate", TF, "-i", lines, "--threads", th);
        RunResult tn = RUN_S2S(NULL, "translate", RNN, "-i", lines, "--threads", th, "--nbest", "3");
        expect_success(&ta, "translate a");
        expect_success(&tb, "translate b");
        expect_success(&tn, "translate a --nbest 3");
        write_file(a, ta.out);
        write_file(b, tb.out);
        RunResult sc = RUN_S2S(NULL, "score", a, b, "-w", "6");
        expect_success(&sc, "score");
        char *expected = strf("== a\n%s== b\n%s== a-nbest\n%s== score\n%s== error\n%s\n"
                              "text:2: invalid UTF-8 at byte 5\n",
                              ta.out, tb.out, tn.out, sc.out, msg);
        char *input = slurp(lines, NULL);
        r = RUN_PROG(input, "/usr/bin/env", ld, check, th, RNN, TF);
        expect_success(&r, "check");
        cr_expect_str_eq(r.out, expected, "at %d threads", threads);
        cr_expect_str_eq(r.err, "");
        run_free(&r);
        free(input);
        free(expected);
        run_free(&ta);
        run_free(&tb);
        run_free(&tn);
        run_free(&sc);
    }
    free(text);
    free(check);
    free(lines);
    free(a);
    free(b);
    free(msg);
    free(line);
    free(example);
    free(src);
    free(exe);
    free(exe_static);
    free(ld);
    rm_rf(dir);
    free(dir);
    inst_free(&in);
}

Test(library, python_module_against_the_installed_copy)
{
    if (!file_exists("/usr/bin/python3"))
        cr_skip_test("/usr/bin/python3 is not installed (apt-get install python3): not tested");
    Inst in = install();
    char *pypath = strf("PYTHONPATH=%s", in.pythondir), *lib = strf("S2S_LIBRARY=%s/libs2s.so.0", in.libdir),
         *s2s = strf("S2S=%s", bin_path());
    const char *argv[16] = {"/usr/bin/env", pypath, lib, s2s, "PYTHONDONTWRITEBYTECODE=1"};
    int n = 5;
    char *preload = NULL;
    if (*env_or("S2S_SAN", "")) {
        /* the library is built with AddressSanitizer: its runtime first, and no leak
           check of the interpreter's own allocations */
        RunResult r = RUN_PROG(NULL, "/usr/bin/env", "cc", "-print-file-name=libasan.so");
        expect_success(&r, "cc -print-file-name");
        r.out[strcspn(r.out, "\n")] = '\0';
        preload = strf("LD_PRELOAD=%s", r.out);
        run_free(&r);
        argv[n++] = preload;
        argv[n++] = "ASAN_OPTIONS=detect_leaks=0";
    }
    argv[n++] = "/usr/bin/python3";
    argv[n++] = "tests/python/test_s2s.py";
    argv[n] = NULL;
    RunResult r = run_prog(NULL, argv);
    cr_expect_eq(r.status, 0, "tests/python/test_s2s.py: status %d\n%s%s", r.status, r.out, r.err);
    run_free(&r);
    free(preload);
    free(pypath);
    free(lib);
    free(s2s);
    inst_free(&in);
}
