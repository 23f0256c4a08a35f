/* The input forms of constraints: JSON lines and glossaries (decode/constraints.h). */
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/file.h"
#include "base/json.h"
#include "base/utf8.h"
#include "decode/constraints.h"
#include "base/lines.h"

/* A member that must be an array of non-NUL strings, into *out (*n of them). */
static int str_array(const JsonVal *v, const char *name, char ***out, int *n, Err *e)
{
    if (v->type != JSON_ARRAY)
        return err_set(e, "\"%s\" must be an array of strings", name);
    if (v->u.c.n > 100000)
        return err_set(e, "\"%s\" has more than 100000 items", name);
    *out = XNEW(char *, v->u.c.n ? v->u.c.n : 1);
    for (size_t k = 0; k < v->u.c.n; k++) {
        const char *s;
        size_t len;
        Err je;
        if (json_as_str(&v->u.c.items[k], &s, &len, &je) != 0) {
            *n = (int)k;
            return err_set(e, "\"%s\" item %zu: %s", name, k + 1, je.msg);
        }
        (*out)[k] = xstrndup(s, len);
    }
    *n = (int)v->u.c.n;
    return 0;
}

int cons_parse_line(const char *line, size_t len, char **text, size_t *tlen, TranslateCons *c, Err *e)
{
    memset(c, 0, sizeof *c);
    *text = NULL;
    if (len == 0 || line[0] != '{') {
        *text = xstrndup(line, len);
        *tlen = len;
        return 0;
    }
    Json doc;
    Err je;
    if (json_parse(&doc, line, len, &je) != 0)
        return err_set(e, "invalid JSON: %s", je.msg);
    int rc = 0;
    const JsonVal *root = doc.root;
    if (root->type != JSON_OBJECT)
        rc = err_set(e, "a line starting with '{' must be a JSON object");
    for (size_t k = 0; rc == 0 && k < root->u.c.n; k++) {
        const char *key = root->u.c.keys[k].s;
        const JsonVal *v = &root->u.c.items[k];
        const char *s;
        size_t n;
        if (!strcmp(key, "text") || !strcmp(key, "prefix")) {
            if (json_as_str(v, &s, &n, &je) != 0) {
                rc = err_set(e, "\"%s\": %s", key, je.msg);
            } else if (key[0] == 't') {
                *text = xstrndup(s, n);
                *tlen = n;
            } else {
                c->prefix = xstrndup(s, n);
            }
        } else if (!strcmp(key, "constraints")) {
            rc = str_array(v, key, &c->phrases, &c->n, e);
        } else if (!strcmp(key, "avoid")) {
            rc = str_array(v, key, &c->avoid, &c->navoid, e);
        } else {
            rc = ascii_printable(key, 33) ? err_set(e, "unknown member \"%s\" (text, constraints, avoid, prefix)", key)
                                     : err_set(e, "an unknown member (text, constraints, avoid, prefix)");
        }
    }
    if (rc == 0 && !*text)
        rc = err_set(e, "no \"text\" member");
    json_free(&doc);
    if (rc != 0) {
        free(*text);
        *text = NULL;
        translate_cons_free(c);
    }
    return rc;
}

/* ---- glossaries ---- */

typedef struct Term {
    char **src; /* tokens */
    int nsrc;
    char *tgt;
} Term;

struct Glossary {
    TokOpts opts;
    Term *terms;
    size_t n;
};

/* The tokens of s[0..len) with o, as strings (-1 with e set). */
static int tokens_of(const char *s, size_t len, const TokOpts *o, char ***out, Err *e)
{
    Buf b = {0};
    long nt = tok_line(s, len, o, &b, e);
    if (nt < 0) {
        buf_free(&b);
        return -1;
    }
    *out = XNEW(char *, nt ? nt : 1);
    size_t i = 0, start, n;
    for (long k = 0; k < nt && (n = lines_word(b.data, b.len, &i, &start)) > 0; k++)
        (*out)[k] = xstrndup(b.data + start, n);
    buf_free(&b);
    return (int)nt;
}

static void free_tokens(char **t, int n)
{
    for (int k = 0; k < n; k++)
        free(t[k]);
    free(t);
}

int glossary_parse(const char *name, const char *data, size_t len, const TokOpts *src, bool ignore_case,
                   Glossary **g, Err *e)
{
    Glossary *gl = XCNEW(Glossary, 1);
    gl->opts = *src;
    if (ignore_case)
        gl->opts.keep_case = false;
    size_t cap = 0;
    Lines rd;
    lines_init(&rd, name, data, len);
    const char *p;
    size_t n;
    int rc, got;
    while ((got = lines_next(&rd, &p, &n, e)) > 0) {
        const size_t ln = rd.lineno;
        if (utf8_blank(p, n) || p[0] == '#')
            continue;
        const char *tab = memchr(p, '\t', n);
        const char *t = tab ? tab + 1 : NULL;
        const size_t tn = tab ? (size_t)(p + n - t) : 0;
        if (!tab)
            rc = err_set(e, "%s:%zu: no tab between the source term and the target term", name, ln);
        else if (gl->n == GLOSSARY_MAX_TERMS)
            rc = err_set(e, "%s:%zu: more than %d terms", name, ln, GLOSSARY_MAX_TERMS);
        else if (memchr(t, '\t', tn))
            rc = err_set(e, "%s:%zu: more than one tab", name, ln);
        else if (utf8_blank(t, tn))
            rc = err_set(e, "%s:%zu: empty target term", name, ln);
        else
            rc = 0;
        Term term = {0};
        Err te;
        if (rc == 0 && (term.nsrc = tokens_of(p, (size_t)(tab - p), &gl->opts, &term.src, &te)) < 0)
            rc = err_set(e, "%s:%zu: %s", name, ln, te.msg);
        else if (rc == 0 && term.nsrc == 0)
            rc = err_set(e, "%s:%zu: empty source term", name, ln);
        if (rc != 0) {
            if (term.nsrc > 0)
                free_tokens(term.src, term.nsrc);
            else if (term.nsrc == 0)
                free(term.src);
            got = -1;
            break;
        }
        term.tgt = xstrndup(t, tn);
        if (gl->n == cap) {
            cap = cap ? 2 * cap : 64;
            XRENEW(gl->terms, cap);
        }
        gl->terms[gl->n++] = term;
    }
    if (got < 0) {
        glossary_free(gl);
        return -1;
    }
    *g = gl;
    return 0;
}

int glossary_load(const char *path, const TokOpts *src, bool ignore_case, Glossary **g, Err *e)
{
    char *data;
    size_t len;
    if (file_read_lines(path, &data, &len, e) != 0)
        return -1;
    int rc = glossary_parse(path, data, len, src, ignore_case, g, e);
    free(data);
    return rc;
}

size_t glossary_terms(const Glossary *g)
{
    return g->n;
}

void glossary_apply(const Glossary *g, const char *line, size_t len, TranslateCons *c)
{
    char **tok;
    Err e;
    int nt = tokens_of(line, len, &g->opts, &tok, &e);
    if (nt < 0)
        return;
    for (size_t k = 0; k < g->n; k++) {
        const Term *t = &g->terms[k];
        bool found = false;
        for (int i = 0; i + t->nsrc <= nt && !found; i++) {
            found = true;
            for (int j = 0; j < t->nsrc && found; j++)
                found = !strcmp(tok[i + j], t->src[j]);
        }
        if (!found)
            continue;
        bool dup = false;
        for (int j = 0; j < c->n && !dup; j++)
            dup = !strcmp(c->phrases[j], t->tgt);
        if (dup)
            continue;
        XRENEW(c->phrases, c->n + 1);
        c->phrases[c->n++] = xstrdup(t->tgt);
    }
    free_tokens(tok, nt);
}

void glossary_free(Glossary *g)
{
    if (!g)
        return;
    for (size_t k = 0; k < g->n; k++) {
        free_tokens(g->terms[k].src, g->terms[k].nsrc);
        free(g->terms[k].tgt);
    }
    free(g->terms);
    free(g);
}
