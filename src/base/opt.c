#include "base/opt.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"

void opts_init(Opts *o, const char *cmd, int argc, char **argv)
{
    memset(o, 0, sizeof *o);
    o->cmd = cmd;
    o->argc = argc;
    o->argv = argv;
    o->i = 0;
}

bool opts_next(Opts *o)
{
    o->i++;
    if (o->i >= o->argc)
        return false;
    o->cur = o->argv[o->i];
    o->inline_val = NULL;
    if (!o->only_positional && strcmp(o->cur, "--") == 0) {
        o->only_positional = true;
        return opts_next(o);
    }
    return true;
}

bool opts_positional(const Opts *o)
{
    return o->only_positional || o->cur[0] != '-' || o->cur[1] == '\0';
}

bool opts_is(Opts *o, const char *name)
{
    if (opts_positional(o))
        return false;
    size_t n = strlen(name);
    if (strncmp(o->cur, name, n) != 0)
        return false;
    if (o->cur[n] == '\0') {
        o->inline_val = NULL;
        return true;
    }
    if (o->cur[n] == '=') {
        o->inline_val = o->cur + n + 1;
        return true;
    }
    return false;
}

static const char *flag_name(const Opts *o)
{
    static char name[128];
    const char *eq = strchr(o->cur, '=');
    size_t n = eq ? (size_t)(eq - o->cur) : strlen(o->cur);
    if (n >= sizeof name)
        n = sizeof name - 1;
    memcpy(name, o->cur, n);
    name[n] = '\0';
    return name;
}

const char *opts_str(Opts *o)
{
    const char *v;
    if (o->inline_val) {
        v = o->inline_val;
    } else {
        if (o->i + 1 >= o->argc)
            die_usage("%s: option %s needs a value", o->cmd, flag_name(o));
        v = o->argv[++o->i];
    }
    if (!*v)
        die_usage("%s: option %s has an empty value", o->cmd, flag_name(o));
    return v;
}

void opts_str2(Opts *o, const char **a, const char **b)
{
    *a = opts_str(o);
    o->inline_val = NULL;
    if (o->i + 1 >= o->argc)
        die_usage("%s: option %s needs two values", o->cmd, flag_name(o));
    *b = opts_str(o);
}

const char *opts_arg(const Opts *o, const char *what)
{
    if (!*o->cur)
        die_usage("%s: empty %s argument (see 's2s %s --help')", o->cmd, what, o->cmd);
    return o->cur;
}

long opts_long(Opts *o, long lo, long hi)
{
    const char *flag = flag_name(o);
    char name[128];
    strcpy(name, flag);
    const char *v = opts_str(o);
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (end == v || *end != '\0' || (errno && errno != ERANGE))
        die_usage("%s: option %s expects an integer, got '%s'", o->cmd, name, v);
    if (errno == ERANGE || x < lo || x > hi)
        die_usage("%s: option %s must be between %ld and %ld, got %s", o->cmd, name, lo, hi, v);
    return x;
}

double opts_double(Opts *o, double lo, double hi)
{
    const char *flag = flag_name(o);
    char name[128];
    strcpy(name, flag);
    const char *v = opts_str(o);
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    /* ERANGE: an overflow is out of range below; an underflow reads as the tiny
       value strtod returns. "inf" and "nan" are not numbers here. */
    bool overflow = errno == ERANGE && isinf(x);
    if (end == v || *end != '\0' || (errno && errno != ERANGE) || (!overflow && !isfinite(x)))
        die_usage("%s: option %s expects a number, got '%s'", o->cmd, name, v);
    if (overflow || x < lo || x > hi)
        die_usage("%s: option %s must be between %g and %g, got %s", o->cmd, name, lo, hi, v);
    return x;
}

void opts_bool(Opts *o)
{
    if (o->inline_val)
        die_usage("%s: option %s takes no value", o->cmd, flag_name(o));
}

void opts_unknown(const Opts *o)
{
    if (opts_positional(o))
        die_usage("%s: unexpected argument '%s' (see 's2s %s --help')", o->cmd, o->cur, o->cmd);
    die_usage("%s: unknown option '%s' (see 's2s %s --help')", o->cmd, flag_name(o), o->cmd);
}
