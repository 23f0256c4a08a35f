#include "cmd_lineedit.h"

#include <histedit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"

struct LineEdit {
    EditLine *el;
    History *hist;
    char *prompt;
    char *line;
};

static const char *prompt_of(EditLine *el)
{
    LineEdit *le = NULL;
    el_get(el, EL_CLIENTDATA, &le);
    return le->prompt;
}

LineEdit *lineedit_new(const char *prompt, Err *e)
{
    LineEdit *le = xcalloc(1, sizeof *le);
    le->prompt = xstrdup(prompt);
    le->el = el_init("s2s", stdin, stdout, stderr);
    if (!le->el) {
        free(le->prompt);
        free(le);
        err_set(e, "cannot start line editing on the terminal");
        return NULL;
    }
    le->hist = history_init();
    HistEvent ev;
    history(le->hist, &ev, H_SETSIZE, 1000);
    history(le->hist, &ev, H_SETUNIQUE, 1);
    el_set(le->el, EL_CLIENTDATA, le);
    el_set(le->el, EL_EDITOR, "emacs");
    el_set(le->el, EL_SIGNAL, 1);
    el_set(le->el, EL_PROMPT, prompt_of);
    el_set(le->el, EL_HIST, history, le->hist);
    el_source(le->el, NULL);
    return le;
}

const char *lineedit_get(LineEdit *le)
{
    int count = 0;
    const char *got = el_gets(le->el, &count);
    if (!got || count <= 0)
        return NULL;
    free(le->line);
    le->line = xstrdup(got);
    size_t len = strlen(le->line);
    while (len && (le->line[len - 1] == '\n' || le->line[len - 1] == '\r'))
        le->line[--len] = '\0';
    return le->line;
}

void lineedit_add_history(LineEdit *le, const char *line)
{
    HistEvent ev;
    history(le->hist, &ev, H_ENTER, line);
}

void lineedit_free(LineEdit *le)
{
    if (!le)
        return;
    history_end(le->hist);
    el_end(le->el);
    free(le->prompt);
    free(le->line);
    free(le);
}
