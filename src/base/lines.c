#include "base/lines.h"

#include <string.h>

#include "base/utf8.h"

void lines_init(Lines *r, const char *name, const char *data, size_t len)
{
    r->name = name;
    r->p = data;
    r->end = data + len;
    r->lineno = 0;
}

int lines_next(Lines *r, const char **s, size_t *n, Err *e)
{
    if (r->p >= r->end)
        return 0;
    const char *p = r->p;
    const char *nl = memchr(p, '\n', (size_t)(r->end - p));
    size_t len = (size_t)((nl ? nl : r->end) - p);
    r->p = nl ? nl + 1 : r->end;
    if (len && p[len - 1] == '\r')
        len--;
    r->lineno++;
    const char *nul = memchr(p, '\0', len);
    size_t bad = utf8_check(p, nul ? (size_t)(nul - p) : len);
    if (nul && bad == (size_t)(nul - p))
        return err_set(e, "%s:%zu: NUL byte at byte %zu", r->name, r->lineno, bad + 1);
    if (bad < len)
        return err_set(e, "%s:%zu: invalid UTF-8 at byte %zu", r->name, r->lineno, bad + 1);
    *s = p;
    *n = len;
    return 1;
}
