#include "text/corpus.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/gzip.h"
#include "base/utf8.h"

Direction direction_make(Lang src, Lang tgt)
{
    Direction d = {.src = src, .tgt = tgt};
    snprintf(d.name, sizeof d.name, "%s-%s", src.code, tgt.code);
    return d;
}

int direction_parse(const char *s, Direction *out)
{
    const char *dash = strchr(s, '-');
    char a[4];
    Lang src, tgt;
    if (!dash || dash - s > 3)
        return -1;
    memcpy(a, s, (size_t)(dash - s));
    a[dash - s] = '\0';
    if (lang_parse(a, &src) != 0 || lang_parse(dash + 1, &tgt) != 0)
        return -1;
    *out = direction_make(src, tgt);
    return 0;
}

TokOpts text_src_opts(const TextConfig *t)
{
    return (TokOpts){.lang = t->dir.src, .keep_case = t->keep_case};
}

TokOpts text_tgt_opts(const TextConfig *t)
{
    return (TokOpts){.lang = t->dir.tgt, .keep_case = t->keep_case};
}

CorpusOpts corpus_opts_tatoeba(Direction d)
{
    bool second = lang_eq(d.tgt, LANG_EN) && !lang_eq(d.src, LANG_EN);
    return (CorpusOpts){.cols = {second ? d.tgt : d.src, second ? d.src : d.tgt},
                        .src_second = second};
}

CorpusOpts corpus_opts_pairs(Direction d) { return (CorpusOpts){.cols = {d.src, d.tgt}}; }

void corpus_note_bad(Corpus *c, size_t line, const Err *msg)
{
    c->bad++;
    size_t k = c->n_first_bad;
    if (k == CORPUS_BAD_KEEP) {
        if (line >= c->first_bad[k - 1].line)
            return;
        k--; /* the highest one drops out */
    } else {
        c->n_first_bad++;
    }
    while (k > 0 && c->first_bad[k - 1].line > line) {
        c->first_bad[k] = c->first_bad[k - 1];
        k--;
    }
    c->first_bad[k].line = line;
    c->first_bad[k].err = *msg;
}

void corpus_free(Corpus *c)
{
    free(c->name);
    free(c->tgt_name);
    free(c->data);
    free(c->tgt_data);
    free(c->pairs);
    memset(c, 0, sizeof *c);
}

int corpus_check_line(const char *name, size_t lineno, const char *s, size_t n, Err *e)
{
    /* The first fault in the line is reported: a NUL, a CR (only a line end's is
       accepted, and it was taken off) or invalid UTF-8. */
    const char *nul = memchr(s, '\0', n), *cr = memchr(s, '\r', n);
    size_t stop = n;
    if (nul)
        stop = (size_t)(nul - s);
    if (cr && (size_t)(cr - s) < stop)
        stop = (size_t)(cr - s);
    size_t bad = utf8_check(s, stop);
    if (bad == stop && stop < n && s[stop] == '\0')
        return err_set(e, "%s:%zu: NUL byte at byte %zu", name, lineno, bad + 1);
    if (bad == stop && stop < n)
        return err_set(e, "%s:%zu: carriage return inside the line at byte %zu", name,
                       lineno, bad + 1);
    if (bad < n)
        return err_set(e, "%s:%zu: invalid UTF-8 at byte %zu", name, lineno, bad + 1);
    return 0;
}

const char *corpus_file(const Corpus *c, int side)
{
    return side == 1 && c->tgt_name ? c->tgt_name : c->name;
}

/* Checks one line (without its line end) and fills p; returns -1 with e set on a fault. */
static int parse_line(const Corpus *c, size_t lineno, char *s, size_t n, const CorpusOpts *o,
                      Pair *p, Err *e)
{
    if (corpus_check_line(c->name, lineno, s, n, e) != 0)
        return -1;
    char *tab = memchr(s, '\t', n);
    if (!tab)
        return err_set(e, "%s:%zu: only one column (expected %s<TAB>%s)", c->name, lineno,
                       lang_label(&o->cols[0]), lang_label(&o->cols[1]));
    char *a = s, *b = tab + 1;
    size_t a_len = (size_t)(tab - s);
    char *tab2 = memchr(b, '\t', n - a_len - 1);
    size_t b_len = tab2 ? (size_t)(tab2 - b) : n - a_len - 1;
    if (utf8_blank(a, a_len))
        return err_set(e, "%s:%zu: empty %s side", c->name, lineno, lang_label(&o->cols[0]));
    if (utf8_blank(b, b_len))
        return err_set(e, "%s:%zu: empty %s side", c->name, lineno, lang_label(&o->cols[1]));
    a[a_len] = '\0';
    b[b_len] = '\0';
    if (o->src_second) {
        p->src = b, p->src_len = b_len;
        p->tgt = a, p->tgt_len = a_len;
    } else {
        p->src = a, p->src_len = a_len;
        p->tgt = b, p->tgt_len = b_len;
    }
    p->line = lineno;
    return 0;
}

static bool only_spaces(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] != ' ')
            return false;
    return true;
}

int corpus_parse(Corpus *c, const char *name, char *data, size_t len, const CorpusOpts *o,
                 Err *e)
{
    memset(c, 0, sizeof *c);
    c->name = xstrdup(name);
    c->data = data;
    c->len = len;

    char *p = data, *end = data + len;
    if (len >= 3 && memcmp(p, "\xEF\xBB\xBF", 3) == 0)
        p += 3;

    /* One pass to size the pair array: at most one pair a line. */
    size_t max_lines = 0;
    for (const char *q = p; q < end; max_lines++) {
        const char *nl = memchr(q, '\n', (size_t)(end - q));
        if (!nl)
            break;
        q = nl + 1;
    }
    if (p < end && end[-1] != '\n')
        max_lines++;
    c->pairs = XNEW(Pair, max_lines);

    size_t lineno = 0;
    while (p < end) {
        char *nl = memchr(p, '\n', (size_t)(end - p));
        char *line_end = nl ? nl : end;
        char *next = nl ? nl + 1 : end;
        lineno++;
        size_t n = (size_t)(line_end - p);
        if (n && p[n - 1] == '\r')
            n--;
        if (only_spaces(p, n)) {
            c->blank++;
            p = next;
            continue;
        }
        Err le;
        if (parse_line(c, lineno, p, n, o, &c->pairs[c->n], &le) != 0) {
            if (!o->skip_bad) {
                err_set(e, "%s", le.msg);
                corpus_free(c);
                return -1;
            }
            corpus_note_bad(c, lineno, &le);
        } else {
            c->n++;
        }
        p = next;
    }
    c->lines = lineno;
    if (c->n == 0 && !(o->allow_empty && !c->bad)) {
        if (c->bad)
            err_set(e, "%s: no sentence pairs (all %zu non-blank lines are bad)", c->name,
                    c->bad);
        else
            err_set(e, "%s: no sentence pairs", c->name);
        corpus_free(c);
        return -1;
    }
    return 0;
}

int corpus_read(Corpus *c, const char *path, const CorpusOpts *o, Err *e)
{
    memset(c, 0, sizeof *c);
    char *data;
    size_t len;
    if (file_read_text(path, &data, &len, e) != 0)
        return -1;
    return corpus_parse(c, strcmp(path, "-") == 0 ? "<stdin>" : path, data, len, o, e);
}

static int by_source_then_index(const void *a, const void *b, void *arg)
{
    const Pair *p = arg;
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    int c = strcmp(p[x].src, p[y].src);
    return c ? c : (x > y) - (x < y);
}

void corpus_group_sources(const Corpus *c, SourceGroups *g)
{
    size_t n = c->n, cap = n ? n : 1;
    size_t *idx = xmalloc_array(cap, sizeof *idx);
    for (size_t i = 0; i < n; i++)
        idx[i] = i;
    qsort_r(idx, n, sizeof *idx, by_source_then_index, c->pairs);
    /* first[i]: the first pair with the text of pair i (runs of equal text are in
       file order, so the run's head is the first) */
    size_t *first = xmalloc_array(cap, sizeof *first);
    for (size_t k = 0; k < n; k++)
        first[idx[k]] = k > 0 && strcmp(c->pairs[idx[k]].src, c->pairs[idx[k - 1]].src) == 0
                            ? first[idx[k - 1]]
                            : idx[k];
    g->group_of = xmalloc_array(cap, sizeof *g->group_of);
    size_t *count = xcalloc(cap, sizeof *count);
    g->n = 0;
    for (size_t i = 0; i < n; i++) {
        g->group_of[i] = first[i] == i ? g->n++ : g->group_of[first[i]];
        count[g->group_of[i]]++;
    }
    g->start = xmalloc_array(g->n + 1, sizeof *g->start);
    g->start[0] = 0;
    for (size_t k = 0; k < g->n; k++)
        g->start[k + 1] = g->start[k] + count[k];
    memset(count, 0, cap * sizeof *count);
    g->member = xmalloc_array(cap, sizeof *g->member);
    for (size_t i = 0; i < n; i++) {
        size_t k = g->group_of[i];
        g->member[g->start[k] + count[k]++] = i;
    }
    free(count);
    free(first);
    free(idx);
}

void source_groups_free(SourceGroups *g)
{
    free(g->start);
    free(g->member);
    free(g->group_of);
    memset(g, 0, sizeof *g);
}
