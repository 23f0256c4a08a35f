/* scripts/devsets.sh: dev sets from a prepared directory (data/sample.tsv prepared
   with s2s prepare, and a hand-written one). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"

/* The lines of a file (its final newline dropped), freshly allocated; *n their count. */
static char **lines_of(const char *path, size_t *n)
{
    char *text = slurp(path, NULL);
    cr_assert_not_null(text, "%s", path);
    size_t cap = 16;
    char **v = malloc(cap * sizeof *v);
    *n = 0;
    for (char *p = text; *p;) {
        char *nl = strchr(p, '\n');
        cr_assert_not_null(nl, "%s: no final newline", path);
        if (*n == cap)
            v = realloc(v, (cap *= 2) * sizeof *v);
        v[(*n)++] = strndup(p, (size_t)(nl - p));
        p = nl + 1;
    }
    free(text);
    return v;
}

static void lines_free(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

/* Column k (0 or 1) of a source<TAB>target line, freshly allocated. */
static char *column(const char *line, int k)
{
    const char *tab = strchr(line, '\t');
    cr_assert_not_null(tab, "%s", line);
    return k ? strndup(tab + 1, strcspn(tab + 1, "\t")) : strndup(line, (size_t)(tab - line));
}

/* Every line of OUTDIR/joinedN.tsv is lines N·i .. N·i+N-1 of all, each column joined
   with a space, and holds exactly one tab. */
static void check_joined(const char *outdir, int n, char **all, size_t nall)
{
    char *path = strf("%s/joined%d.tsv", outdir, n);
    size_t nj;
    char **j = lines_of(path, &nj);
    cr_assert_eq(nj, nall / (size_t)n, "%s: %zu lines", path, nj);
    for (size_t i = 0; i < nj; i++) {
        cr_assert_eq(strchr(j[i], '\t'), strrchr(j[i], '\t'), "%s", j[i]);
        for (int k = 0; k < 2; k++) {
            char *want = column(all[n * i], k);
            for (int m = 1; m < n; m++) {
                char *part = column(all[n * i + (size_t)m], k), *w = strf("%s %s", want, part);
                free(part);
                free(want);
                want = w;
            }
            char *got = column(j[i], k);
            cr_assert_str_eq(got, want, "%s line %zu", path, i + 1);
            free(got);
            free(want);
        }
    }
    lines_free(j, nj);
    free(path);
}

Test(scripts, devsets_of_the_prepared_sample)
{
    char *dir = sample_prepared_dir(), *data = strf("%s/data", dir), *out = strf("%s/dev", dir);
    RunResult r = RUN_PROG(NULL, "scripts/devsets.sh", data, out);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert_str_eq(r.err, "");
    /* 40 valid and 40 test pairs; no test source of 12 words or more; four test sources
       with a digit or a capitalized word after the first; five pairs with Tom or Mary
       on both sides; none with a number */
    cr_assert_str_eq(r.out, "joined2.tsv\t40\njoined3.tsv\t26\nlong.tsv\t0\nnames.tsv\t4\nunseen.tsv\t5\n"
                            "numbers.tsv\t0\n");
    run_free(&r);
    char *valid = strf("%s/valid.tsv", data), *test = strf("%s/test.tsv", data);
    size_t nv, nt;
    char **v = lines_of(valid, &nv), **t = lines_of(test, &nt);
    cr_assert(nv == 40 && nt == 40, "%zu %zu", nv, nt);
    char **all = malloc((nv + nt) * sizeof *all);
    memcpy(all, v, nv * sizeof *all);
    memcpy(all + nv, t, nt * sizeof *all);
    check_joined(out, 2, all, nv + nt);
    check_joined(out, 3, all, nv + nt);
    free(all);
    lines_free(v, nv);
    lines_free(t, nt);
    /* the same input gives the same files */
    char *before = dir_snapshot(out);
    r = RUN_PROG(NULL, "scripts/devsets.sh", data, out);
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    char *after = dir_snapshot(out);
    cr_assert_str_eq(after, before);
    free(before);
    free(after);
    free(valid);
    free(test);
    rm_rf(dir);
    free(dir);
    free(data);
    free(out);
}

Test(scripts, devsets_long_and_names_exactly)
{
    char *dir = tmpdir_new(), *out = strf("%s/dev", dir), *p = strf("%s/valid.tsv", dir);
    write_file(p, "a b\tA B\n");
    free(p);
    p = strf("%s/test.tsv", dir);
    write_file(p, "one two three four five six seven eight nine ten eleven twelve\tdouze\n"
                  "one two three four five six seven eight nine ten eleven\tonze\n"
                  "Tom is here\tTom est ici\n"
                  "I saw Tom\tJ'ai vu Tom\n"
                  "I have 3 cats\tJ'ai 3 chats\n"
                  "x\ty\n");
    free(p);
    RunResult r = RUN_PROG(NULL, "scripts/devsets.sh", dir, out);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert_str_eq(r.out, "joined2.tsv\t3\njoined3.tsv\t2\nlong.tsv\t1\nnames.tsv\t2\nunseen.tsv\t2\n"
                            "numbers.tsv\t1\n");
    run_free(&r);
    const char *files[] = {"joined2", "joined3", "long", "names", "unseen", "numbers"};
    const char *want[] = {
        "a b one two three four five six seven eight nine ten eleven twelve\tA B douze\n"
        "one two three four five six seven eight nine ten eleven Tom is here\tonze Tom est ici\n"
        "I saw Tom I have 3 cats\tJ'ai vu Tom J'ai 3 chats\n",
        "a b one two three four five six seven eight nine ten eleven twelve one two three "
        "four five six seven eight nine ten eleven\tA B douze onze\n"
        "Tom is here I saw Tom I have 3 cats\tTom est ici J'ai vu Tom J'ai 3 chats\n",
        "one two three four five six seven eight nine ten eleven twelve\tdouze\n",
        "I saw Tom\tJ'ai vu Tom\nI have 3 cats\tJ'ai 3 chats\n",
        "Kazimierz is here\tKazimierz est ici\nI saw Radoslav\tJ'ai vu Radoslav\n",
        "I have 3 cats\tJ'ai 3 chats\n",
    };
    for (int k = 0; k < 6; k++) {
        char *path = strf("%s/%s.tsv", out, files[k]), *got = slurp(path, NULL);
        cr_assert_not_null(got, "%s", path);
        cr_assert_str_eq(got, want[k], "%s", path);
        free(got);
        free(path);
    }
    r = RUN_PROG(NULL, "scripts/devsets.sh", dir);
    cr_assert_eq(r.status, 2);
    cr_assert_str_eq(r.err, "devsets.sh: expected PREPARED_DIR OUTDIR, got 1 arguments "
                            "(see scripts/devsets.sh --help)\n");
    run_free(&r);
    rm_rf(dir);
    free(dir);
    free(out);
}

/* unseen.tsv: Tom and Mary swapped as whole words of both sides only (not inside
   Tomorrow or Tom's neighbour letters), men's and women's names taken in turn by output
   line; numbers.tsv: words of digits, not decimals or times. */
Test(scripts, devsets_unseen_names_and_numbers_exactly)
{
    char *dir = tmpdir_new(), *out = strf("%s/dev", dir), *p = strf("%s/valid.tsv", dir);
    write_file(p, "Tom met Mary.\tTom a rencontré Mary.\n"
                  "Tomorrow, Tom's here.\tDemain, Tom est là.\n"
                  "Mary is late.\tMarie est en retard.\n");
    free(p);
    p = strf("%s/test.tsv", dir);
    write_file(p, "Tom and Tom.\tTom et Tom.\n"
                  "It costs 3.5 euros.\t3,5 euros.\n"
                  "Come at 2:30.\tViens à 14 h 30.\n"
                  "I was born in 1990.\tJe suis né en 1990.\n"
                  "Wait 10 minutes, 5 more.\tAttends dix minutes, cinq de plus.\n");
    free(p);
    RunResult r = RUN_PROG(NULL, "scripts/devsets.sh", dir, out);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert_str_eq(r.out, "joined2.tsv\t4\njoined3.tsv\t2\nlong.tsv\t0\nnames.tsv\t5\nunseen.tsv\t3\n"
                            "numbers.tsv\t2\n");
    run_free(&r);
    char *path = strf("%s/unseen.tsv", out), *got = slurp(path, NULL);
    cr_assert_str_eq(got, "Kazimierz met Siobhan.\tKazimierz a rencontré Siobhan.\n"
                          "Tomorrow, Radoslav's here.\tDemain, Radoslav est là.\n"
                          "Zbigniew and Zbigniew.\tZbigniew et Zbigniew.\n");
    free(got);
    free(path);
    path = strf("%s/numbers.tsv", out);
    got = slurp(path, NULL);
    cr_assert_str_eq(got, "I was born in 1990.\tJe suis né en 1990.\n"
                          "Wait 10 minutes, 5 more.\tAttends dix minutes, cinq de plus.\n");
    free(got);
    free(path);
    rm_rf(dir);
    free(dir);
    free(out);
}

/* scripts/topic-split.sh: the health pairs by whole English words in any case (a
   possessive counts, a longer word does not), the rest in order, columns kept. */
Test(scripts, topic_split_by_whole_english_words)
{
    char *dir = tmpdir_new(), *corpus = strf("%s/c.tsv", dir), *out = strf("%s/out", dir);
    write_file(corpus, "I'm sick.\tJe suis malade.\tattr1\n"
                       "The Doctor's here.\tLe médecin est là.\tattr2\n"
                       "Illinois is big.\tL'Illinois est grand.\tattr3\n"
                       "I have a cat.\tJ'ai un chat.\tattr4\n"
                       "She felt ILL.\tElle se sentait mal.\tattr5\n"
                       "Le malade.\tsick in French only\tattr6\n");
    RunResult r = RUN_PROG(NULL, "scripts/topic-split.sh", corpus, out);
    cr_assert_eq(r.status, 0, "%s", r.err);
    char *want = strf("%s/topic.tsv: 3 lines\n%s/rest.tsv: 3 lines\n", out, out);
    cr_expect_str_eq(r.out, want);
    run_free(&r);
    char *tp = strf("%s/topic.tsv", out), *rp = strf("%s/rest.tsv", out);
    char *t = slurp(tp, NULL), *rest = slurp(rp, NULL);
    cr_expect_str_eq(t, "I'm sick.\tJe suis malade.\tattr1\nThe Doctor's here.\tLe médecin est là.\tattr2\n"
                        "She felt ILL.\tElle se sentait mal.\tattr5\n");
    cr_expect_str_eq(rest, "Illinois is big.\tL'Illinois est grand.\tattr3\nI have a cat.\tJ'ai un chat.\tattr4\n"
                           "Le malade.\tsick in French only\tattr6\n");
    r = RUN_PROG(NULL, "scripts/topic-split.sh", corpus);
    cr_expect_eq(r.status, 2);
    run_free(&r);
    free(t);
    free(rest);
    free(tp);
    free(rp);
    free(want);
    free(out);
    free(corpus);
    rm_rf(dir);
    free(dir);
}
