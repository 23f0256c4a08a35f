/* The manual pages and the bash completion generated from the option tables
   (scripts/gen-man.sh, scripts/gen-completion.sh), and what `make install` and
   `make uninstall` do (scripts/install.sh) in a staging directory: every page renders
   without a warning and names every option of its command's --help, the completion
   offers the commands, each command's options and the values and files they take,
   and uninstall leaves no file behind. */
#include <criterion/criterion.h>
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "helpers.h"

static void need(const char *path, const char *package)
{
    if (!file_exists(path))
        cr_skip_test("%s is not installed (apt-get install %s): not tested", path, package);
}

/* The commands, as `s2s --dump-options` lists them; returns their number. */
static int command_list(char names[][32], int max)
{
    RunResult r = RUN_S2S(NULL, "--dump-options");
    expect_success(&r, "s2s --dump-options");
    cr_assert(strncmp(r.out, "s2s-commands\t1\n", 15) == 0, "%s", r.out);
    int n = 0;
    for (const char *p = r.out; (p = strstr(p, "\ncommand\t")); p++) {
        cr_assert_lt(n, max);
        sscanf(p + 9, "%31[^\t]", names[n++]);
    }
    run_free(&r);
    return n;
}

static bool name_char(char c) { return islower((unsigned char)c) || isdigit((unsigned char)c) || c == '-'; }

/* Whether text holds opt ("--x" or "-x") as a whole word. */
static bool names(const char *text, const char *opt)
{
    size_t n = strlen(opt);
    for (const char *p = text; (p = strstr(p, opt)); p++) {
        bool start = p == text || !(isalnum((unsigned char)p[-1]) || p[-1] == '-');
        if (start && !name_char(p[n]))
            return true;
    }
    return false;
}

/* The options of a help text: the "-x" and "--name" words of the first column of each
   option line ("  -o, --output FILE   ...", "  --beta1 B --beta2 B   ..."), space-
   separated. */
static char *help_options(const char *help)
{
    size_t cap = strlen(help) + 2, len = 0;
    char *all = calloc(cap, 1);
    for (const char *line = help; *line;) {
        const char *end = strchr(line, '\n');
        if (!end)
            end = line + strlen(line);
        if (strncmp(line, "  -", 3) == 0) {
            const char *col_end = strstr(line + 2, "  ");
            if (!col_end || col_end > end)
                col_end = end;
            for (const char *q = line + 2; q < col_end; q++) {
                if (*q != '-' || (q[-1] != ' '))
                    continue;
                size_t n = 1;
                while (q + n < col_end && name_char(q[n]))
                    n++;
                len += (size_t)snprintf(all + len, cap - len, "%.*s ", (int)n, q);
                q += n - 1;
            }
        }
        line = *end ? end + 1 : end;
    }
    return all;
}

/* The completions of a command line (its words; the last is the word completed), as
   bash gives them from the completion script: sorted, each followed by a space. */
static char *complete(const char *script, const char *cwd, const char *const *words)
{
    const char *prog = "source \"$1\" && cd \"$2\" && shift 2 && COMP_WORDS=(\"$@\") && "
                       "COMP_CWORD=$((${#COMP_WORDS[@]} - 1)) && COMP_LINE=\"$*\" && COMP_POINT=${#COMP_LINE} && "
                       "_s2s && for w in \"${COMPREPLY[@]}\"; do printf '%s\\n' \"$w\"; done | LC_ALL=C sort | "
                       "tr '\\n' ' '";
    const char *argv[16] = {"/bin/bash", "-c", prog, "bash", script, cwd};
    int n = 6;
    for (int i = 0; words[i]; i++) {
        cr_assert_lt(n, 15);
        argv[n++] = words[i];
    }
    argv[n] = NULL;
    RunResult r = run_prog(NULL, argv);
    expect_success(&r, "the completion");
    cr_expect_str_eq(r.err, "");
    char *out = strdup(r.out);
    run_free(&r);
    return out;
}
#define COMPLETE(script, cwd, ...) complete((script), (cwd), (const char *const[]){__VA_ARGS__, NULL})

Test(install, pages_completion_install_and_uninstall)
{
    need("/usr/bin/man", "man-db");
    need("/usr/bin/groff", "groff-base");
    char *dir = tmpdir_new(), *man = strf("%s/man", dir), *comp = strf("%s/s2s.bash", dir),
         *root = strf("%s/root", dir), *work = strf("%s/work", dir);
    RunResult r = RUN_PROG(NULL, "scripts/gen-man.sh", s2s_bin(), man);
    expect_success(&r, "scripts/gen-man.sh");
    run_free(&r);
    r = RUN_PROG(NULL, "scripts/gen-completion.sh", s2s_bin(), comp);
    expect_success(&r, "scripts/gen-completion.sh");
    run_free(&r);
    r = RUN_PROG(NULL, "scripts/install.sh", "install", "--prefix", "/usr", "--destdir", root, "--bin", s2s_bin(),
                 "--man", man, "--completion", comp);
    expect_success(&r, "scripts/install.sh install");
    run_free(&r);

    /* the files, under DESTDIR/PREFIX */
    char cmds[32][32];
    int ncmd = command_list(cmds, 32);
    cr_assert_geq(ncmd, 9);
    const char *const fixed[] = {"bin/s2s", "share/man/man1/s2s.1", "share/bash-completion/completions/s2s",
                                 "share/doc/s2s/README.md", "share/doc/s2s/LICENSE", "share/doc/s2s/docs/cli/train.md",
                                 "share/doc/s2s/docs/development.md", NULL};
    for (int i = 0; fixed[i]; i++) {
        char *p = strf("%s/usr/%s", root, fixed[i]);
        cr_expect(file_exists(p), "%s was not installed", p);
        free(p);
    }
    char *bin = strf("%s/usr/bin/s2s", root);
    r = RUN_PROG(NULL, bin, "--version");
    RunResult want = RUN_S2S(NULL, "--version");
    expect_success(&r, "the installed s2s --version");
    cr_expect_str_eq(r.out, want.out);
    cr_expect(strncmp(r.out, "s2s ", 4) == 0, "%s", r.out);
    run_free(&r);
    run_free(&want);

    /* each page: lexgrog reads its NAME, groff renders it without a warning, man -l
       shows it, with every option of the command's --help */
    char *file = strf("%s/model.s2s", work), *sub = strf("%s/mo.d", work);
    cr_assert_eq(mkdir(work, 0755), 0);
    write_file(file, "");
    cr_assert_eq(mkdir(sub, 0755), 0);
    free(file);
    free(sub);
    for (int c = -1; c < ncmd; c++) {
        char *page = c < 0 ? strf("%s/usr/share/man/man1/s2s.1", root)
                           : strf("%s/usr/share/man/man1/s2s-%s.1", root, cmds[c]);
        cr_assert(file_exists(page), "%s was not installed", page);
        r = RUN_PROG(NULL, "/usr/bin/groff", "-man", "-ww", "-z", "-Tutf8", page);
        expect_success(&r, page);
        cr_expect_str_eq(r.err, "", "groff warns on %s: %s", page, r.err);
        run_free(&r);
        r = RUN_PROG(NULL, "/usr/bin/lexgrog", page);
        expect_success(&r, "lexgrog");
        char *name = c < 0 ? strdup("\"s2s - ") : strf("\"s2s-%s - ", cmds[c]);
        cr_expect(strstr(r.out, name), "lexgrog %s: %s", page, r.out);
        free(name);
        run_free(&r);
        r = RUN_PROG(NULL, "/usr/bin/env", "LC_ALL=C", "MANWIDTH=80", "MANPAGER=cat", "man", "-l", page);
        expect_success(&r, "man -l");
        cr_expect(strstr(r.out, "NAME") && strstr(r.out, "SYNOPSIS") && strstr(r.out, "SEE ALSO"), "%s", r.out);
        cr_expect(!strstr(r.out, "@DOCDIR@"), "%s", r.out);
        if (c < 0) {
            for (int k = 0; k < ncmd; k++) {
                char *ref = strf("s2s-%s(1)", cmds[k]);
                cr_expect(strstr(r.out, ref), "s2s.1 does not name %s", ref);
                free(ref);
            }
        } else {
            RunResult h = RUN_S2S(NULL, cmds[c], "--help");
            expect_success(&h, "--help");
            char *opts = help_options(h.out), *offered = COMPLETE(comp, work, "s2s", cmds[c], "-");
            cr_expect(strlen(opts) > 0, "no options in s2s %s --help", cmds[c]);
            char *src = slurp(page, NULL);
            for (char *o = strtok(opts, " "); o; o = strtok(NULL, " ")) {
                /* in bold, as an entry of OPTIONS writes it: \fB\-\-name\fR */
                char tag[160] = "\\fB";
                for (const char *q = o; *q; q++)
                    strcat(tag, *q == '-' ? "\\-" : (char[]){*q, 0});
                strcat(tag, "\\fR");
                cr_expect(strstr(src, tag), "s2s-%s.1 has no entry %s for %s of its --help", cmds[c], tag, o);
                cr_expect(names(r.out, o), "s2s-%s.1 does not show %s", cmds[c], o);
                cr_expect(names(offered, o), "s2s %s -<TAB> does not offer %s: %s", cmds[c], o, offered);
            }
            char *docpage = strf("/usr/share/doc/s2s/docs/cli/%s.md", cmds[c]);
            cr_expect(strstr(r.out, docpage), "s2s-%s.1 does not name %s", cmds[c], docpage);
            free(docpage);
            free(src);
            free(opts);
            free(offered);
            run_free(&h);
        }
        run_free(&r);
        free(page);
    }

    /* the completion: commands, options, an option's values, files and directories */
    char *got = COMPLETE(comp, work, "s2s", "tr");
    cr_expect_str_eq(got, "train translate ");
    free(got);
    got = COMPLETE(comp, work, "s2s", "");
    cr_expect(strstr(got, "prepare ") && strstr(got, "tokenize "), "%s", got);
    free(got);
    got = COMPLETE(comp, work, "s2s", "train", "--");
    cr_expect(names(got, "--arch") && names(got, "--resume") && names(got, "--time") && !names(got, "-h"), "%s", got);
    free(got);
    got = COMPLETE(comp, work, "s2s", "train", "--arch", "");
    cr_expect_str_eq(got, "rnn transformer ");
    free(got);
    got = COMPLETE(comp, work, "s2s", "train", "--arch", "=", "t");
    cr_expect_str_eq(got, "transformer ");
    free(got);
    got = COMPLETE(comp, work, "s2s", "train", "--lr", "");
    cr_expect_str_eq(got, "");
    free(got);
    got = COMPLETE(comp, work, "s2s", "info", "");
    cr_expect_str_eq(got, "mo.d model.s2s ");
    free(got);
    got = COMPLETE(comp, work, "s2s", "translate", "-o", "m");
    cr_expect_str_eq(got, "mo.d model.s2s ");
    free(got);
    got = COMPLETE(comp, work, "s2s", "prepare", "corpus.tsv", "-o", "");
    cr_expect_str_eq(got, "mo.d ");
    free(got);
    got = COMPLETE(comp, work, "s2s", "prepare", "--valid-files", "model.s2s", "mo");
    cr_expect_str_eq(got, "mo.d model.s2s ");
    free(got);

    /* uninstall: no file left */
    r = RUN_PROG(NULL, "scripts/install.sh", "uninstall", "--prefix", "/usr", "--destdir", root);
    expect_success(&r, "scripts/install.sh uninstall");
    run_free(&r);
    char *left = dir_snapshot(root);
    for (const char *line = left; *line;) {
        const char *end = strchr(line, '\n');
        if (!end)
            end = line + strlen(line);
        cr_expect(end > line && end[-1] == '/', "uninstall left %.*s", (int)(end - line), line);
        line = *end ? end + 1 : end;
    }
    cr_expect(!strstr(left, "share/doc/s2s"), "%s", left);
    free(left);

    rm_rf(dir);
    free(bin);
    free(dir);
    free(man);
    free(comp);
    free(root);
    free(work);
}

Test(install, install_refuses_what_it_cannot_do)
{
    RunResult r = RUN_PROG(NULL, "scripts/install.sh", "install", "--prefix", "usr");
    cr_expect_eq(r.status, 2);
    cr_expect_str_eq(r.err, "install.sh: --prefix must be an absolute path, got 'usr' (see scripts/install.sh --help)\n");
    run_free(&r);
    r = RUN_PROG(NULL, "scripts/install.sh", "install", "--prefix", "/usr");
    cr_expect_eq(r.status, 2);
    cr_expect_str_eq(r.err, "install.sh: install needs --bin, --man and --completion (see scripts/install.sh --help)\n");
    run_free(&r);
    char *dir = tmpdir_new();
    r = RUN_PROG(NULL, "scripts/install.sh", "uninstall", "--destdir", dir);
    cr_expect_eq(r.status, 0);
    char *err = strf("install.sh: nothing to uninstall: no %s/usr/local/share/doc/s2s/MANIFEST\n", dir);
    cr_expect_str_eq(r.err, err);
    cr_expect_eq(dir_count(dir), 0);
    free(err);
    run_free(&r);
    rm_rf(dir);
    free(dir);
}
