/* Command-line options of the subcommands: option tables (below) and the argument
   walker they are parsed with. Usage errors exit 2, --help exits 0. */
#ifndef S2S_BASE_OPT_H
#define S2S_BASE_OPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "base/buf.h"
#include "base/err.h"
#include "base/json.h"

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

/* Option tables: one array of rows per command drives parsing, --help, and the
   reading and writing of saved options (JSON). A table ends with a row of kind
   OPT_END ({0}). */
typedef enum OptKind {
    OPT_END = 0,
    OPT_SECTION, /* a heading of the help (help: its text); parses nothing */
    OPT_DOC,     /* a help entry that parses nothing (an option listed twice) */
    OPT_HELP,    /* prints the help to stdout and exits 0 */
    OPT_TRUE,    /* bool field set to true; takes no value */
    OPT_FALSE,   /* bool field set to false; takes no value */
    OPT_INT,     /* int in [min, max] */
    OPT_LONG,    /* long in [min, max] */
    OPT_U64,     /* uint64_t in [min, max] */
    OPT_FLOAT,   /* float in [fmin, fmax] */
    OPT_DOUBLE,  /* double in [fmin, fmax] */
    OPT_STR,     /* const char *, not empty */
    OPT_STR2,    /* const char *[2]: two values (--flag A B) */
    OPT_ENUM,    /* int (an enum): the index of the value in names[min..max] */
    OPT_PARSE,   /* parse(value, field) returns 0, or -1 when the value is not valid */
} OptKind;

/* Bits of OptRow.flags; bits from OPT_USER up are the command's own. */
#define OPT_KEY_OPTIONAL 1u /* the key may be absent from saved JSON (added later) */
#define OPT_INT_FLAG 2u     /* OPT_TRUE, OPT_FALSE: the field is an int set to 1 or 0 */
#define OPT_USER 256u

typedef struct OptRow {
    const char *name;  /* "--lr" */
    const char *alias; /* "-h", or NULL */
    OptKind kind;
    size_t off;        /* of the field in the command's options struct */
    const char *arg;   /* the value's name in the help ("N", "gru|lstm"), or NULL */
    /* The help after the name column; "\n" starts an indented continuation line,
       "{}" is the default of this row, "{--name}" that of another row. NULL: the
       option is not listed. */
    const char *help;
    long min, max;
    double fmin, fmax;
    const char *const *names; /* OPT_ENUM */
    const char *choices; /* OPT_ENUM and OPT_PARSE: "must be CHOICES"; NULL for an enum:
                            names[min..max] as "a, b or c" */
    int (*parse)(const char *value, void *field); /* OPT_PARSE */
    const char *key;   /* key of the option in saved JSON, or NULL when not saved */
    unsigned flags;
} OptRow;

/* The row of -h, --help that every table ends with (before its {0}). */
#define OPT_HELP_ROW {.name = "--help", .alias = "-h", .kind = OPT_HELP, .help = "this help"}

typedef struct OptTable {
    const char *cmd;    /* subcommand name, for messages */
    const OptRow *rows;
    const char *head;   /* the help before the rows */
    const char *foot;   /* the help after the rows */
    size_t size;        /* of the options struct (its defaults feed "{}" in the help) */
    const char *what;   /* the names of the positional arguments in messages, in order,
                           the last for all that follow ("DATA", "HYP REF"); an empty
                           one is refused unless its name is "*" */
    int col;            /* the column of the help texts (0: 27) */
} OptTable;

/* The number of rows before OPT_END. */
int opt_count(const OptRow *rows);
/* The index of the row that parses the option name (or alias); a name not in the
   table is a bug. */
int opt_find(const OptRow *rows, const char *name);
/* Parses argv[1..] into base, which holds the defaults; seen[i] (opt_count entries)
   becomes the index in argv where row i was first given, 0 when it was not. The
   positionals go to pos[], at most maxpos ("unexpected argument" beyond). Returns their
   number. Errors are usage errors (exit 2), as the functions above. */
int opt_parse(const OptTable *t, void *base, int argc, char **argv, int *seen, const char **pos,
              int maxpos);
/* Whether the option name was given (seen as opt_parse filled it). */
bool opt_seen(const OptTable *t, const int *seen, const char *name);
/* The help: head, the rows, foot; defaults holds the default options. */
void opt_help(FILE *out, const OptTable *t, const void *defaults);
/* The hidden option that every table parses first: `s2s CMD --dump-options` prints the
   table with opt_dump and exits 0 (the man pages and the shell completion are generated
   from it: scripts/gen-man.sh, scripts/gen-completion.sh). */
#define OPT_DUMP "--dump-options"
/* The table as lines of tab-separated fields, for programs: "s2s-options\t1", then
   "command\tNAME", "args\tWHAT", "head\tTEXT", per listed row "section\tTEXT" or
   "option\tNAME\tALIAS\tARG\tTYPE\tCHOICES\tHELP" (TYPE flag, value or value2;
   CHOICES the values of an enum, space-separated; HELP with the defaults filled in as
   --help shows them), and "foot\tTEXT". An option the help does not list (a row
   without help) is a line "hidden\tNAME\tALIAS\tARG\tTYPE\tCHOICES". Backslash,
   newline and tab in a field are written \\, \n and \t. */
void opt_dump(FILE *out, const OptTable *t, const void *defaults);
/* "gru or lstm", "a, b or c" from names[lo..hi] into b. */
void opt_join(Buf *b, const char *const *names, long lo, long hi);
/* The size of a row's field. */
size_t opt_field_size(const OptRow *r);

/* Saved options: the rows with a key whose flags & mask == want, written as members
   "key": value of the object open in w, and read back from the JSON object obj. A key
   absent from obj is an error unless the row has OPT_KEY_OPTIONAL (the field is then
   kept); where starts the messages ("m.state: s2s.state"). */
void opt_json_write(JsonWriter *w, const OptRow *rows, const void *base, unsigned mask, unsigned want);
int opt_json_read(const JsonVal *obj, const OptRow *rows, void *base, unsigned mask, unsigned want,
                  const char *where, Err *e);

#endif
