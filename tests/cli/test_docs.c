/* The reference pages docs/cli/COMMAND.md and `s2s COMMAND --help` name the same
   options: every option of the help is on the command's page (under its long name or
   its short alias), and every --option a page names is an option of some s2s command
   (or one of mpirun's, which train's page shows). */
#include <criterion/criterion.h>
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"

static const char *const commands[] = {"prepare", "train", "translate", "eval", "score", "average", "export", "info",
                                       "tokenize", "serve"};
enum { NCMD = sizeof commands / sizeof *commands };

/* Options named on the pages that are not s2s's. */
static const char *const foreign[] = {"--help", "--allow-run-as-root", "--bind-to", "--mca", NULL};

static bool name_char(char c) { return islower((unsigned char)c) || isdigit((unsigned char)c) || c == '-'; }

/* Whether text holds opt ("--x" or "-x") as a whole word. */
static bool names(const char *text, const char *opt)
{
    size_t n = strlen(opt);
    for (const char *p = text; (p = strstr(p, opt)); p++) {
        bool start = p == text || !(isalnum((unsigned char)p[-1]) || p[-1] == '-' || p[-1] == '_');
        if (start && !name_char(p[n]))
            return true;
    }
    return false;
}

/* Calls f(long option, short alias or NULL, arg) for each option of a help text: the
   "--name" words of an option line's first column ("  -o, --output FILE   ..."). */
static void help_options(const char *help, void (*f)(const char *, const char *, void *), void *arg)
{
    for (const char *line = help; *line;) {
        const char *end = strchr(line, '\n');
        if (!end)
            end = line + strlen(line);
        const char *p = line;
        while (p < end && *p == ' ')
            p++;
        if (p > line && p < end && *p == '-') {
            const char *col_end = strstr(p, "  ");
            if (!col_end || col_end > end)
                col_end = end;
            char alias[16] = "";
            const char *comma = memchr(p, ',', (size_t)(col_end - p));
            if (p[1] != '-' && comma && (size_t)(comma - p) < sizeof alias)
                memcpy(alias, p, (size_t)(comma - p));
            for (const char *q = p; q + 2 < col_end; q++) {
                if (q[0] != '-' || q[1] != '-' || !islower((unsigned char)q[2]) || (q > p && q[-1] != ' '))
                    continue;
                size_t n = 2;
                while (q + n < col_end && name_char(q[n]))
                    n++;
                char opt[64];
                snprintf(opt, sizeof opt, "%.*s", (int)n, q);
                if (strcmp(opt, "--help") != 0)
                    f(opt, alias[0] ? alias : NULL, arg);
                q += n - 1;
            }
        }
        line = *end ? end + 1 : end;
    }
}

typedef struct Page {
    const char *cmd, *text;
    int missing;
} Page;

static void on_page(const char *opt, const char *alias, void *arg)
{
    Page *pg = arg;
    bool ok = names(pg->text, opt) || (alias && names(pg->text, alias));
    cr_expect(ok, "docs/cli/%s.md does not name %s%s%s of 's2s %s --help'", pg->cmd, opt, alias ? " or " : "",
              alias ? alias : "", pg->cmd);
    pg->missing += !ok;
}

typedef struct Known {
    char *all; /* every option of every command, space-separated, between spaces */
} Known;

static void on_known(const char *opt, const char *alias, void *arg)
{
    (void)alias;
    Known *k = arg;
    size_t n = strlen(k->all);
    k->all = realloc(k->all, n + strlen(opt) + 2);
    sprintf(k->all + n, "%s ", opt);
}

static char *help_of(const char *cmd)
{
    RunResult r = RUN_S2S(NULL, cmd, "--help");
    cr_assert_eq(r.status, 0, "s2s %s --help: %s", cmd, r.err);
    char *out = strdup(r.out);
    run_free(&r);
    return out;
}

Test(docs, every_option_of_the_help_is_on_its_page)
{
    int total = 0;
    for (int c = 0; c < NCMD; c++) {
        char *path = strf("docs/cli/%s.md", commands[c]), *page = slurp(path, NULL), *help = help_of(commands[c]);
        cr_assert_not_null(page, "no %s", path);
        Page pg = {commands[c], page, 0};
        help_options(help, on_page, &pg);
        total += pg.missing;
        free(help);
        free(page);
        free(path);
    }
    cr_expect_eq(total, 0);
}

Test(docs, every_option_a_page_names_exists)
{
    Known k = {strdup(" ")};
    for (int c = 0; c < NCMD; c++) {
        char *help = help_of(commands[c]);
        help_options(help, on_known, &k);
        free(help);
    }
    cr_assert(names(k.all, "--share-embeddings") && names(k.all, "--by-length") && names(k.all, "--metrics"),
              "the help texts were not read: %s", k.all);
    for (int c = 0; c < NCMD; c++) {
        char *path = strf("docs/cli/%s.md", commands[c]), *page = slurp(path, NULL);
        cr_assert_not_null(page, "no %s", path);
        for (const char *p = page; (p = strstr(p, "--")); p++) {
            if ((p > page && (isalnum((unsigned char)p[-1]) || p[-1] == '-')) || !islower((unsigned char)p[2]))
                continue;
            size_t n = 2;
            while (name_char(p[n]))
                n++;
            char opt[64];
            snprintf(opt, sizeof opt, "%.*s", (int)n, p);
            bool ok = names(k.all, opt);
            for (int f = 0; !ok && foreign[f]; f++)
                ok = strcmp(opt, foreign[f]) == 0;
            cr_expect(ok, "%s names %s, which no s2s command has", path, opt);
        }
        free(page);
        free(path);
    }
    free(k.all);
}
