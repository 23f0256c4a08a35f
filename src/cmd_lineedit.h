/* A prompt with line editing and history in memory, on libedit (kept apart from the
   rest: libedit's histedit.h declares names, such as tok_line, that the project uses). */
#ifndef S2S_CMD_LINEEDIT_H
#define S2S_CMD_LINEEDIT_H

#include "base/err.h"

typedef struct LineEdit LineEdit;

/* A prompt on stdin/stdout (emacs key bindings, ~/.editrc when present). While a line
   is read, libedit restores the terminal before a signal reaches its handler. NULL
   with e set when libedit cannot start. */
LineEdit *lineedit_new(const char *prompt, Err *e);
/* The next line without its newline (valid until the next call), or NULL at end of
   input (Ctrl-D on an empty line) or on a read error. */
const char *lineedit_get(LineEdit *le);
void lineedit_add_history(LineEdit *le, const char *line);
void lineedit_free(LineEdit *le);

#endif
