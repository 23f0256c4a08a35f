/* Parallel plain files (corpus_read_parallel): line i of one translates line i of the
   other. The rules are in corpus.h. */
#include "text/corpus.h"

#include <stdlib.h>
#include <string.h>

#include "base/gzip.h"
#include "base/utf8.h"

/* The lines of one file, split in place: starts and lengths without line ends. */
typedef struct Lines {
    char **s;
    size_t *n;
    size_t count;
} Lines;

static void split_lines(char *data, size_t len, Lines *l)
{
    char *p = data, *end = data + len;
    if (len >= 3 && memcmp(p, "\xEF\xBB\xBF", 3) == 0)
        p += 3;
    size_t cap = 1;
    for (const char *q = p; q < end; q++)
        cap += *q == '\n';
    l->s = XNEW(char *, cap);
    l->n = XNEW(size_t, cap);
    l->count = 0;
    while (p < end) {
        char *nl = memchr(p, '\n', (size_t)(end - p));
        char *line_end = nl ? nl : end;
        size_t n = (size_t)(line_end - p);
        if (n && p[n - 1] == '\r')
            n--;
        l->s[l->count] = p;
        l->n[l->count++] = n;
        p = nl ? nl + 1 : end;
    }
}

static void lines_free(Lines *l)
{
    free(l->s);
    free(l->n);
}

static bool blank(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] != ' ')
            return false;
    return true;
}

/* The faults of one side of line i: those of corpus_check_line, then a tab. */
static int check_side(const char *name, size_t lineno, const char *s, size_t n, Err *e)
{
    if (corpus_check_line(name, lineno, s, n, e) != 0)
        return -1;
    const char *tab = memchr(s, '\t', n);
    if (tab)
        return err_set(e, "%s:%zu: tab inside the line at byte %zu", name, lineno,
                       (size_t)(tab - s) + 1);
    return 0;
}

int corpus_read_parallel(Corpus *c, const char *src_path, const char *tgt_path,
                         const CorpusOpts *o, Err *e)
{
    memset(c, 0, sizeof *c);
    char *data[2] = {NULL, NULL};
    size_t len[2];
    if (file_read_text(src_path, &data[0], &len[0], e) != 0)
        return -1;
    if (file_read_text(tgt_path, &data[1], &len[1], e) != 0) {
        free(data[0]);
        return -1;
    }
    c->name = xstrdup(strcmp(src_path, "-") == 0 ? "<stdin>" : src_path);
    c->tgt_name = xstrdup(strcmp(tgt_path, "-") == 0 ? "<stdin>" : tgt_path);
    c->data = data[0];
    c->tgt_data = data[1];
    c->len = len[0] + len[1];
    const char *name[2] = {c->name, c->tgt_name};

    Lines l[2];
    split_lines(data[0], len[0], &l[0]);
    split_lines(data[1], len[1], &l[1]);
    int rc = -1;
    if (l[0].count != l[1].count) {
        err_set(e, "%s has %zu lines but %s has %zu; line i of one must translate line i of "
                   "the other", name[0], l[0].count, name[1], l[1].count);
        goto out;
    }
    c->pairs = XNEW(Pair, l[0].count ? l[0].count : 1);
    for (size_t i = 0; i < l[0].count; i++) {
        size_t lineno = i + 1;
        char *s[2] = {l[0].s[i], l[1].s[i]};
        size_t n[2] = {l[0].n[i], l[1].n[i]};
        bool b[2] = {blank(s[0], n[0]), blank(s[1], n[1])};
        if (b[0] && b[1]) {
            c->blank++;
            continue;
        }
        Err le;
        int bad = -1;
        for (int k = 0; k < 2 && bad < 0; k++)
            if (check_side(name[k], lineno, s[k], n[k], &le) != 0)
                bad = k;
        for (int k = 0; k < 2 && bad < 0; k++)
            if (utf8_blank(s[k], n[k])) {
                err_set(&le, "%s:%zu: empty line (line %zu of %s is not)", name[k], lineno,
                        lineno, name[1 - k]);
                bad = k;
            }
        if (bad >= 0) {
            if (!o->skip_bad) {
                *e = le;
                goto out;
            }
            corpus_note_bad(c, lineno, &le);
            continue;
        }
        s[0][n[0]] = '\0';
        s[1][n[1]] = '\0';
        c->pairs[c->n++] = (Pair){.src = s[0], .tgt = s[1], .src_len = n[0], .tgt_len = n[1],
                                  .line = lineno};
    }
    c->lines = l[0].count;
    if (c->n == 0 && !(o->allow_empty && !c->bad)) {
        if (c->bad)
            err_set(e, "%s: no sentence pairs (all %zu non-blank lines are bad)", name[0], c->bad);
        else
            err_set(e, "%s: no sentence pairs", name[0]);
        goto out;
    }
    rc = 0;
out:
    lines_free(&l[0]);
    lines_free(&l[1]);
    if (rc != 0)
        corpus_free(c);
    return rc;
}
