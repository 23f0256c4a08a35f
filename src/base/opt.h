/* Command-line option helpers shared by the subcommands. Usage errors exit 2. */
#ifndef S2S_BASE_OPT_H
#define S2S_BASE_OPT_H

#include <stdbool.h>

/* Walks argv of one subcommand. `--flag value` and `--flag=value` are both accepted. */
typedef struct Opts {
    const char *cmd;   /* subcommand name, for messages */
    int argc;
    char **argv;
    int i;             /* index of the current argument */
    const char *cur;   /* current argument */
    const char *inline_val; /* the part after '=' in --flag=value, else NULL */
    bool only_positional; /* after "--" */
} Opts;

void opts_init(Opts *o, const char *cmd, int argc, char **argv);
/* Advances; false at the end. */
bool opts_next(Opts *o);
/* True when the current argument is a positional (not starting with '-', or "-", or after "--"). */
bool opts_positional(const Opts *o);
/* True when the current argument is the flag `name` (with or without =value). */
bool opts_is(Opts *o, const char *name);
/* The value of the current flag; dies "option --x needs a value" when missing and
   "option --x has an empty value" when it is "". */
const char *opts_str(Opts *o);
/* The two values of a flag that takes two (`--flag A B`, `--flag=A B`); dies "option
   --x needs two values" when the second is missing, as opts_str for an empty one. */
void opts_str2(Opts *o, const char **a, const char **b);
/* The current positional argument, which names a file; dies "empty WHAT argument"
   when it is "". */
const char *opts_arg(const Opts *o, const char *what);
/* A number in [lo, hi]; dies "expects an integer/a number, got 'V'" when the value is
   not one (inf and nan are not), and "must be between LO and HI, got V" (V as typed)
   when it is outside, also when it overflows. */
long opts_long(Opts *o, long lo, long hi);
double opts_double(Opts *o, double lo, double hi);
/* For a flag that takes no value: dies when given --flag=value. */
void opts_bool(Opts *o);
/* Dies with "unknown option '--x'". */
void opts_unknown(const Opts *o) __attribute__((noreturn));

#endif
