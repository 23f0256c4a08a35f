#include "cmd_repl.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/file.h"
#include "cmd_lineedit.h"

#define REPL_MAX_BEAM 100

static const char help[] =
    "type a sentence to translate it; commands:\n"
    "  :beam K        beam size (1 = greedy)\n"
    "  :nbest N       show the N best translations (1..beam)\n"
    "  :attn on|off   show the attention heatmap\n"
    "  :help          this list\n"
    "  :quit          leave (also Ctrl-D or Ctrl-C)\n";

static void on_sigint(int sig)
{
    (void)sig;
    /* The terminal is in its normal mode here: libedit restores it before passing
       the signal on, and outside the prompt it was never changed. */
    ssize_t w = write(STDOUT_FILENO, "\n", 1);
    (void)w;
    _exit(0);
}

/* A whole positive number in [lo, hi] from s, else -1. */
static long parse_num(const char *s, long lo, long hi)
{
    char *end;
    errno = 0;
    long x = strtol(s, &end, 10);
    if (end == s || *end || errno || x < lo || x > hi)
        return -1;
    return x;
}

typedef struct Repl {
    const s2s_translator *tr;
    s2s_translator_options o;
    bool attn;
    const char *svg_dir;
    long lines;
} Repl;

/* Runs command line (after ':'); returns false to leave. */
static bool command(Repl *r, char *line)
{
    char *name = strtok(line + 1, " \t"), *arg = strtok(NULL, " \t"), *extra = strtok(NULL, " \t");
    if (!name)
        name = "";
    bool want_arg = strcmp(name, "beam") == 0 || strcmp(name, "nbest") == 0 || strcmp(name, "attn") == 0;
    bool known = want_arg || strcmp(name, "help") == 0 || strcmp(name, "quit") == 0 ||
                 strcmp(name, "q") == 0;
    if (!known) {
        printf("unknown command ':%s' (:help lists the commands)\n", name);
    } else if (want_arg && (!arg || extra)) {
        printf(":%s takes one value (:help lists the commands)\n", name);
    } else if (!want_arg && arg) {
        printf(":%s takes no value\n", name);
    } else if (strcmp(name, "quit") == 0 || strcmp(name, "q") == 0) {
        return false;
    } else if (strcmp(name, "help") == 0) {
        fputs(help, stdout);
    } else if (strcmp(name, "beam") == 0) {
        long k = parse_num(arg, 1, REPL_MAX_BEAM);
        if (k < 0) {
            printf(":beam must be between 1 and %d, got %s\n", REPL_MAX_BEAM, arg);
        } else {
            r->o.beam = (int)k;
            if (r->o.nbest > k) {
                r->o.nbest = (int)k;
                printf("beam %ld, n-best %ld\n", k, k);
            } else {
                printf("beam %ld\n", k);
            }
        }
    } else if (strcmp(name, "nbest") == 0) {
        long k = parse_num(arg, 1, r->o.beam);
        if (k < 0)
            printf(":nbest must be between 1 and the beam size %d, got %s\n", r->o.beam, arg);
        else
            printf("n-best %ld\n", (long)(r->o.nbest = (int)k));
    } else if (strcmp(arg, "on") == 0 || strcmp(arg, "off") == 0) {
        r->attn = strcmp(arg, "on") == 0;
        printf("attention %s\n", arg);
    } else {
        printf(":attn takes on or off, got %s\n", arg);
    }
    return true;
}

static void translate_one(Repl *r, const char *line)
{
    s2s_translator_options o = r->o;
    o.batch = 1;
    o.attention = r->attn || r->svg_dir;
    s2s_error err;
    r->lines++;
    const char *lines[1] = {line};
    const s2s_batch b = {.texts = lines, .n = 1, .name = "<stdin>", .first_line = r->lines};
    s2s_result *res = s2s_translate_batch(r->tr, &b, &o, &err);
    if (!res) {
        printf("s2s: %s\n", err.message);
        return;
    }
    Buf out = {0};
    if (o.nbest > 1)
        for (int k = 0; k < s2s_result_hypotheses(res, 0); k++)
            buf_printf(&out, "%d. %s  (%.4f)\n", k + 1, s2s_result_text(res, 0, k), s2s_result_score(res, 0, k));
    else
        buf_printf(&out, "%s\n", s2s_result_text(res, 0, 0));
    s2s_attention a;
    const bool has = o.attention && s2s_result_attention(res, 0, &a) == 0 && a.source_len > 0;
    if (r->attn && has) {
        char *pic = s2s_attention_text(&a);
        buf_puts(&out, pic);
        s2s_string_free(pic);
    }
    if (r->svg_dir && has) {
        Buf title = {0};
        buf_printf(&title, "line %ld: %s \xE2\x86\x92 %s", r->lines, line, s2s_result_text(res, 0, 0));
        char *pic = s2s_attention_svg(&a, title.data);
        char fname[32];
        snprintf(fname, sizeof fname, "%04ld.svg", r->lines);
        char *path = path_join(r->svg_dir, fname);
        Err e;
        if (atomic_write(path, pic, strlen(pic), &e) != 0)
            buf_printf(&out, "s2s: %s\n", e.msg);
        free(path);
        s2s_string_free(pic);
        buf_free(&title);
    }
    fwrite(out.data, 1, out.len, stdout);
    buf_free(&out);
    s2s_result_free(res);
}

int repl_run(const s2s_translator *tr, const char *model_path, const s2s_translator_options *o, bool attn,
             const char *svg_dir, Err *e)
{
    Repl r = {.tr = tr, .o = *o, .attn = attn, .svg_dir = svg_dir};
    if (r.o.beam < 1)
        r.o.beam = 1;
    if (r.o.nbest < 1)
        r.o.nbest = 1;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);

    LineEdit *le = lineedit_new("> ", e);
    if (!le)
        return -1;
    printf("s2s translate %s (%s), beam %d; :help lists the commands, Ctrl-D quits\n",
           model_path, s2s_translator_info(tr)->direction, r.o.beam);
    fflush(stdout);
    for (;;) {
        const char *got = lineedit_get(le);
        if (!got) {
            fputc('\n', stdout);
            break;
        }
        char *line = xstrdup(got);
        size_t lead = strspn(line, " \t");
        bool more = true;
        if (line[lead]) {
            lineedit_add_history(le, line);
            if (line[lead] == ':')
                more = command(&r, line + lead);
            else
                translate_one(&r, line);
        }
        free(line);
        fflush(stdout);
        if (!more)
            break;
    }
    fflush(stdout);
    lineedit_free(le);
    return 0;
}
