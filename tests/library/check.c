/*
 * A program built against an installed libs2s (make install, then pkg-config --cflags
 * --libs s2s), outside src/, that tests/cli/test_library.c runs:
 *
 *   check THREADS MODEL_A MODEL_B < LINES
 *
 * translates LINES with MODEL_A and with MODEL_B, both loaded in this process (at
 * THREADS threads), and writes, each part after a line "== NAME":
 *   a        MODEL_A's translations, as `s2s translate MODEL_A` writes them
 *   b        MODEL_B's
 *   a-nbest  MODEL_A's 3 best, as `s2s translate MODEL_A --nbest 3`
 *   score    BLEU and chrF of a against b, as `s2s score A B -w 6`
 *   error    the message of loading a missing file, and of translating bad UTF-8
 * It checks on its way that A's translations are the same after B's, and on two
 * threads at once, and exits 1 (a line on stderr) when not; everything it allocates is
 * freed (the test runs it under AddressSanitizer's leak check in `make asan`).
 */
#define _POSIX_C_SOURCE 200809L /* strdup */

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <s2s.h>

static int fail(const char *what, const s2s_error *err)
{
    fprintf(stderr, "check: %s: %s\n", what, err ? err->message : "differs");
    return 1;
}

/* The lines of stdin, each without its '\n'. */
static char **read_lines(int *n)
{
    char **lines = NULL, buf[4096];
    *n = 0;
    while (fgets(buf, sizeof buf, stdin)) {
        buf[strcspn(buf, "\n")] = '\0';
        lines = realloc(lines, (size_t)(*n + 1) * sizeof *lines);
        lines[(*n)++] = strdup(buf);
    }
    return lines;
}

/* The best translations as one string, a line each. */
static char *joined(const s2s_result *r)
{
    size_t len = 0;
    for (int i = 0; i < s2s_result_count(r); i++)
        len += strlen(s2s_result_text(r, i, 0)) + 1;
    char *s = malloc(len + 1), *p = s;
    for (int i = 0; i < s2s_result_count(r); i++)
        p += sprintf(p, "%s\n", s2s_result_text(r, i, 0));
    *p = '\0';
    return s;
}

typedef struct Job {
    const s2s_translator *tr;
    const char *const *lines;
    int n;
    char *out;
} Job;

static void *job_run(void *arg)
{
    Job *j = arg;
    s2s_result *r = s2s_translate(j->tr, j->lines, j->n, NULL, NULL);
    j->out = r ? joined(r) : NULL;
    s2s_result_free(r);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: check THREADS MODEL_A MODEL_B < LINES\n");
        return 2;
    }
    int n, status = 0;
    char **lines = read_lines(&n);
    const char *const *texts = (const char *const *)lines;
    s2s_translator_options o = s2s_translator_options_default();
    o.threads = atoi(argv[1]);
    s2s_error err;
    s2s_translator *a = s2s_translator_load((const char *const *)&argv[2], 1, &o, &err);
    if (!a)
        return fail(argv[2], &err);
    s2s_translator *b = s2s_translator_load((const char *const *)&argv[3], 1, &o, &err);
    if (!b)
        return fail(argv[3], &err);

    s2s_result *ra = s2s_translate(a, texts, n, NULL, &err);
    s2s_result *rb = ra ? s2s_translate(b, texts, n, NULL, &err) : NULL;
    if (!ra || !rb)
        return fail("translate", &err);
    char *sa = joined(ra), *sb = joined(rb);
    printf("== a\n%s== b\n%s", sa, sb);

    /* A again, after B, and on two threads at once */
    Job jobs[2] = {{a, texts, n, NULL}, {a, texts, n, NULL}};
    pthread_t t[2];
    for (int k = 0; k < 2; k++)
        pthread_create(&t[k], NULL, job_run, &jobs[k]);
    for (int k = 0; k < 2; k++) {
        pthread_join(t[k], NULL);
        if (!jobs[k].out || strcmp(jobs[k].out, sa) != 0)
            status = fail("A's translations on two threads", NULL);
        free(jobs[k].out);
    }

    s2s_translator_options nb = o;
    nb.nbest = 3;
    s2s_result *rn = s2s_translate(a, texts, n, &nb, &err);
    if (!rn)
        return fail("n-best", &err);
    printf("== a-nbest\n");
    for (int i = 0; i < s2s_result_count(rn); i++)
        for (int k = 0; k < s2s_result_hypotheses(rn, i); k++)
            printf("%d ||| %s ||| %.6f\n", i, s2s_result_text(rn, i, k), s2s_result_score(rn, i, k));

    /* A's translations scored against B's */
    const char **hyps = malloc((size_t)n * sizeof *hyps), **refs = malloc((size_t)n * sizeof *refs);
    for (int i = 0; i < n; i++) {
        hyps[i] = s2s_result_text(ra, i, 0);
        refs[i] = s2s_result_text(rb, i, 0);
    }
    s2s_scores sc;
    if (s2s_score(hyps, (size_t)n, refs, 1, NULL, &sc, &err) != 0)
        return fail("score", &err);
    char bl[300], ch[300];
    snprintf(bl, sizeof bl, "BLEU|%s", sc.bleu_signature);
    snprintf(ch, sizeof ch, "chrF2|%s", sc.chrf_signature);
    int pad = (int)(strlen(bl) > strlen(ch) ? strlen(bl) : strlen(ch));
    printf("== score\n%*s = %.6f %.1f/%.1f/%.1f/%.1f (BP = %.3f ratio = %.3f hyp_len = %lld ref_len = %lld)\n"
           "%*s = %.6f\n",
           pad, bl, sc.bleu, sc.precisions[0], sc.precisions[1], sc.precisions[2], sc.precisions[3],
           sc.brevity_penalty, sc.ratio, sc.hyp_len, sc.ref_len, pad, ch, sc.chrf);

    /* errors are values: the process goes on */
    printf("== error\n");
    const char *missing = "/nonexistent/model.s2s";
    if (s2s_translator_load(&missing, 1, NULL, &err) || err.code != S2S_ERR_MODEL)
        status = fail("a missing model loaded", NULL);
    printf("%s\n", err.message);
    const char *bad[] = {"fine", "bad \xff"};
    if (s2s_translate(a, bad, 2, NULL, &err) || err.code != S2S_ERR_INPUT)
        status = fail("bad UTF-8 translated", NULL);
    printf("%s\n", err.message);

    free(hyps);
    free(refs);
    free(sa);
    free(sb);
    s2s_result_free(ra);
    s2s_result_free(rb);
    s2s_result_free(rn);
    s2s_translator_free(a);
    s2s_translator_free(b);
    for (int i = 0; i < n; i++)
        free(lines[i]);
    free(lines);
    return status;
}
