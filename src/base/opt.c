#include "base/opt.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
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

/* The current option's value (opts_str), its flag's name first copied to name. */
static const char *value_named(Opts *o, char name[static 128])
{
    strcpy(name, flag_name(o));
    return opts_str(o);
}

long opts_long(Opts *o, long lo, long hi)
{
    char name[128];
    const char *v = value_named(o, name);
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
    char name[128];
    const char *v = value_named(o, name);
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

int opt_count(const OptRow *rows)
{
    int n = 0;
    while (rows[n].kind != OPT_END)
        n++;
    return n;
}

static bool parses(const OptRow *r)
{
    return r->kind != OPT_SECTION && r->kind != OPT_DOC;
}

int opt_find(const OptRow *rows, const char *name)
{
    for (int i = 0; rows[i].kind != OPT_END; i++)
        if (parses(&rows[i]) && (strcmp(rows[i].name, name) == 0 || (rows[i].alias && strcmp(rows[i].alias, name) == 0)))
            return i;
    BUG("option %s is not in the table", name);
}

bool opt_seen(const OptTable *t, const int *seen, const char *name)
{
    return seen[opt_find(t->rows, name)] != 0;
}

void opt_join(Buf *b, const char *const *names, long lo, long hi)
{
    for (long i = lo; i <= hi; i++)
        buf_printf(b, "%s%s", i == lo ? "" : i == hi ? " or " : ", ", names[i]);
}

size_t opt_field_size(const OptRow *r)
{
    switch (r->kind) {
    case OPT_TRUE:
    case OPT_FALSE:
        return r->flags & OPT_INT_FLAG ? sizeof(int) : sizeof(bool);
    case OPT_INT:
    case OPT_ENUM:
        return sizeof(int);
    case OPT_LONG:
        return sizeof(long);
    case OPT_U64:
        return sizeof(uint64_t);
    case OPT_FLOAT:
        return sizeof(float);
    case OPT_DOUBLE:
        return sizeof(double);
    case OPT_STR:
        return sizeof(const char *);
    case OPT_STR2:
        return 2 * sizeof(const char *);
    default:
        return 0;
    }
}

/* "must be CHOICES, got 'V'" for an enum or parsed value. */
static void bad_choice(const Opts *o, const OptRow *r, const char *v)
{
    Buf b = {0};
    if (r->choices)
        buf_puts(&b, r->choices);
    else
        opt_join(&b, r->names, r->min, r->max);
    die_usage("%s: option %s must be %s, got '%s'", o->cmd, r->name, b.data, v);
}

static void parse_enum(Opts *o, const OptRow *r, int *field)
{
    const char *v = opts_str(o);
    for (long i = r->min; i <= r->max; i++)
        if (strcmp(r->names[i], v) == 0) {
            *field = (int)i;
            return;
        }
    bad_choice(o, r, v);
}

/* The value of row r at the current argument, into its field of base. */
static void parse_value(Opts *o, const OptRow *r, void *base)
{
    void *f = (char *)base + r->off;
    switch (r->kind) {
    case OPT_TRUE:
    case OPT_FALSE:
        opts_bool(o);
        if (r->flags & OPT_INT_FLAG)
            *(int *)f = r->kind == OPT_TRUE;
        else
            *(bool *)f = r->kind == OPT_TRUE;
        break;
    case OPT_INT:
        *(int *)f = (int)opts_long(o, r->min, r->max);
        break;
    case OPT_LONG:
        *(long *)f = opts_long(o, r->min, r->max);
        break;
    case OPT_U64:
        *(uint64_t *)f = (uint64_t)opts_long(o, r->min, r->max);
        break;
    case OPT_FLOAT:
        *(float *)f = (float)opts_double(o, r->fmin, r->fmax);
        break;
    case OPT_DOUBLE:
        *(double *)f = opts_double(o, r->fmin, r->fmax);
        break;
    case OPT_STR:
        *(const char **)f = opts_str(o);
        break;
    case OPT_STR2:
        opts_str2(o, (const char **)f, (const char **)f + 1);
        break;
    case OPT_ENUM:
        parse_enum(o, r, f);
        break;
    case OPT_PARSE: {
        const char *v = opts_str(o);
        if (r->parse(v, f) != 0)
            bad_choice(o, r, v);
        break;
    }
    default:
        BUG("option %s: kind %d parses no value", r->name, (int)r->kind);
    }
}

/* The name of positional argument k: word k of what, or its last word. */
static void positional_name(char *name, size_t size, const char *what, int k)
{
    size_t n = strcspn(what, " ");
    while (k-- > 0 && what[n] == ' ') {
        what += n + 1;
        n = strcspn(what, " ");
    }
    snprintf(name, size, "%.*s", (int)n, what);
}

int opt_parse(const OptTable *t, void *base, int argc, char **argv, int *seen, const char **pos,
              int maxpos)
{
    void *defaults = xmalloc(t->size);
    memcpy(defaults, base, t->size);
    memset(seen, 0, (size_t)opt_count(t->rows) * sizeof *seen);
    Opts o;
    opts_init(&o, t->cmd, argc, argv);
    int npos = 0;
    while (opts_next(&o)) {
        if (opts_positional(&o)) {
            if (npos == maxpos)
                opts_unknown(&o);
            char name[32];
            positional_name(name, sizeof name, t->what, npos);
            pos[npos++] = strcmp(name, "*") == 0 ? o.cur : opts_arg(&o, name);
            continue;
        }
        if (strcmp(o.cur, OPT_DUMP) == 0) {
            opt_dump(stdout, t, defaults);
            exit(0);
        }
        int k = 0;
        for (; t->rows[k].kind != OPT_END; k++) {
            const OptRow *r = &t->rows[k];
            if (parses(r) && (opts_is(&o, r->name) || (r->alias && opts_is(&o, r->alias))))
                break;
        }
        const OptRow *r = &t->rows[k];
        if (r->kind == OPT_END)
            opts_unknown(&o);
        if (!seen[k])
            seen[k] = o.i;
        if (r->kind == OPT_HELP) {
            opt_help(stdout, t, defaults);
            exit(0);
        }
        parse_value(&o, r, base);
    }
    free(defaults);
    return npos;
}

/* The default of row r, as the help shows it. */
static void default_text(Buf *b, const OptRow *r, const void *defaults)
{
    const void *f = (const char *)defaults + r->off;
    switch (r->kind) {
    case OPT_INT:
        buf_printf(b, "%d", *(const int *)f);
        break;
    case OPT_LONG:
        buf_printf(b, "%ld", *(const long *)f);
        break;
    case OPT_U64:
        buf_printf(b, "%llu", (unsigned long long)*(const uint64_t *)f);
        break;
    case OPT_FLOAT:
        buf_printf(b, "%g", (double)*(const float *)f);
        break;
    case OPT_DOUBLE:
        buf_printf(b, "%g", *(const double *)f);
        break;
    case OPT_ENUM:
        buf_puts(b, r->names[*(const int *)f]);
        break;
    default:
        BUG("option %s: no default to show", r->name);
    }
}

/* The help of row r: its text with the defaults in place of "{}" and "{--name}", each
   continuation line indented to the text column. */
static void help_text(Buf *b, const OptTable *t, const OptRow *r, const void *defaults, int col)
{
    for (const char *s = r->help; *s; s++) {
        if (*s == '\n') {
            buf_printf(b, "\n%*s", col > 0 ? col : 0, "");
        } else if (*s == '{') {
            const char *end = strchr(s, '}');
            CHECK(end);
            char name[64];
            size_t n = (size_t)(end - s - 1);
            CHECK(n < sizeof name);
            memcpy(name, s + 1, n);
            name[n] = '\0';
            default_text(b, n ? &t->rows[opt_find(t->rows, name)] : r, defaults);
            s = end;
        } else {
            buf_printf(b, "%c", *s);
        }
    }
}

void opt_help(FILE *out, const OptTable *t, const void *defaults)
{
    const int col = t->col ? t->col : 27;
    Buf b = {0};
    buf_puts(&b, t->head);
    for (const OptRow *r = t->rows; r->kind != OPT_END; r++) {
        if (!r->help)
            continue;
        if (r->kind == OPT_SECTION) {
            buf_printf(&b, "%s\n", r->help);
            continue;
        }
        size_t start = b.len;
        buf_printf(&b, "  %s%s%s%s%s", r->alias ? r->alias : "", r->alias ? ", " : "", r->name,
                   r->arg ? " " : "", r->arg ? r->arg : "");
        int used = (int)(b.len - start);
        buf_printf(&b, "%*s", used < col ? col - used : 3, "");
        help_text(&b, t, r, defaults, col);
        buf_puts(&b, "\n");
    }
    buf_puts(&b, t->foot);
    fputs(b.data, out);
    buf_free(&b);
}

void opt_json_write(JsonWriter *w, const OptRow *rows, const void *base, unsigned mask, unsigned want)
{
    for (const OptRow *r = rows; r->kind != OPT_END; r++) {
        if (!r->key || (r->flags & mask) != want)
            continue;
        const void *f = (const char *)base + r->off;
        switch (r->kind) {
        case OPT_TRUE:
        case OPT_FALSE:
            json_put_bool(w, r->key, r->flags & OPT_INT_FLAG ? *(const int *)f != 0 : *(const bool *)f);
            break;
        case OPT_STR:
            json_put_str(w, r->key, *(const char *const *)f);
            break;
        case OPT_ENUM:
            json_put_str(w, r->key, r->names[*(const int *)f]);
            break;
        case OPT_INT:
            json_put_int(w, r->key, *(const int *)f);
            break;
        case OPT_LONG:
            json_put_int(w, r->key, *(const long *)f);
            break;
        case OPT_U64:
            json_put_uint(w, r->key, *(const uint64_t *)f);
            break;
        case OPT_FLOAT:
            json_put_f64(w, r->key, *(const float *)f);
            break;
        case OPT_DOUBLE:
            json_put_f64(w, r->key, *(const double *)f);
            break;
        default:
            BUG("option %s: no JSON value to save", r->name);
        }
    }
}

/* Reads the value v of row r into its field f. */
static int json_value(const JsonVal *v, const OptRow *r, void *f, const char *where, Err *e)
{
    switch (r->kind) {
    case OPT_TRUE:
    case OPT_FALSE:
        if (v->type != JSON_BOOL)
            return err_set(e, "%s: '%s' missing or not true or false", where, r->key);
        if (r->flags & OPT_INT_FLAG)
            *(int *)f = v->b;
        else
            *(bool *)f = v->b;
        return 0;
    case OPT_ENUM:
        for (long i = r->min; v->type == JSON_STRING && i <= r->max; i++)
            if (strcmp(r->names[i], v->u.str.s) == 0) {
                *(int *)f = (int)i;
                return 0;
            }
        return err_set(e, "%s: '%s' missing or not valid", where, r->key);
    case OPT_FLOAT:
    case OPT_DOUBLE:
        if (v->type != JSON_NUMBER)
            return err_set(e, "%s: '%s' missing or not a number", where, r->key);
        if (r->kind == OPT_FLOAT)
            *(float *)f = (float)v->u.num.d;
        else
            *(double *)f = v->u.num.d;
        return 0;
    case OPT_INT:
    case OPT_LONG:
    case OPT_U64:
        if (v->type != JSON_NUMBER || !v->is_int || v->u.num.i < 0)
            return err_set(e, "%s: '%s' missing or not a count", where, r->key);
        if (r->kind == OPT_INT)
            *(int *)f = (int)v->u.num.i;
        else if (r->kind == OPT_LONG)
            *(long *)f = (long)v->u.num.i;
        else
            *(uint64_t *)f = (uint64_t)v->u.num.i;
        return 0;
    default:
        return err_set(e, "%s: '%s' cannot be read", where, r->key);
    }
}

int opt_json_read(const JsonVal *obj, const OptRow *rows, void *base, unsigned mask, unsigned want,
                  const char *where, Err *e)
{
    for (const OptRow *r = rows; r->kind != OPT_END; r++) {
        if (!r->key || (r->flags & mask) != want)
            continue;
        const JsonVal *v = json_get(obj, r->key);
        if (!v && (r->flags & OPT_KEY_OPTIONAL))
            continue;
        static const JsonVal null_val = {.type = JSON_NULL};
        if (json_value(v ? v : &null_val, r, (char *)base + r->off, where, e) != 0)
            return -1;
    }
    return 0;
}

/* s as one field of a dump line: backslash, newline and tab escaped as \\, \n, \t. */
static void dump_field(FILE *out, const char *s)
{
    for (; s && *s; s++) {
        if (*s == '\\')
            fputs("\\\\", out);
        else if (*s == '\n')
            fputs("\\n", out);
        else if (*s == '\t')
            fputs("\\t", out);
        else
            fputc(*s, out);
    }
}

/* Whether the option of row r is followed by a value (an OPT_DOC row: when it names one). */
static bool takes_value(const OptRow *r)
{
    switch (r->kind) {
    case OPT_DOC:
        return r->arg != NULL;
    case OPT_SECTION:
    case OPT_HELP:
    case OPT_TRUE:
    case OPT_FALSE:
    case OPT_END:
        return false;
    default:
        return true;
    }
}

void opt_dump(FILE *out, const OptTable *t, const void *defaults)
{
    fprintf(out, "s2s-options\t1\ncommand\t%s\nargs\t", t->cmd);
    dump_field(out, t->what);
    fputs("\nhead\t", out);
    dump_field(out, t->head);
    fputc('\n', out);
    Buf b = {0};
    for (const OptRow *r = t->rows; r->kind != OPT_END; r++) {
        if (!r->help && !parses(r))
            continue;
        if (r->kind == OPT_SECTION) {
            fputs("section\t", out);
            dump_field(out, r->help);
            fputc('\n', out);
            continue;
        }
        fprintf(out, "%s\t%s\t%s\t", r->help ? "option" : "hidden", r->name, r->alias ? r->alias : "");
        dump_field(out, r->arg);
        fprintf(out, "\t%s\t", !takes_value(r) ? "flag" : r->kind == OPT_STR2 ? "value2" : "value");
        if (r->kind == OPT_ENUM)
            for (long i = r->min; i <= r->max; i++)
                fprintf(out, "%s%s", i > r->min ? " " : "", r->names[i]);
        if (r->help) {
            buf_clear(&b);
            help_text(&b, t, r, defaults, 0);
            fputc('\t', out);
            dump_field(out, b.data);
        }
        fputc('\n', out);
    }
    buf_free(&b);
    fputs("foot\t", out);
    dump_field(out, t->foot);
    fputc('\n', out);
}
