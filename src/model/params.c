#include "model/params.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"

real *param_add(ParamWalk *w, const char *name, int rows, int cols)
{
    size_t size = (size_t)rows * (size_t)(cols ? cols : 1);
    if (w->info) {
        ParamInfo *p = &w->info[w->n];
        CHECK(strlen(name) < PARAM_NAME_MAX);
        strcpy(p->name, name);
        p->ndim = cols ? 2 : 1;
        p->shape[0] = rows;
        p->shape[1] = cols;
        p->offset = w->total;
        p->size = size;
    }
    real *ptr = w->base ? w->base + w->total : NULL;
    w->n++;
    w->total += size;
    return ptr;
}

real *param_addf(ParamWalk *w, int rows, int cols, const char *fmt, ...)
{
    char name[PARAM_NAME_MAX + 16];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(name, sizeof name, fmt, ap);
    va_end(ap);
    return param_add(w, name, rows, cols);
}

void param_layout_build(ParamLayout *l, ParamWalkFn *walk, size_t views_size, const ModelConfig *c)
{
    void *views = xcalloc(1, views_size);
    ParamWalk count = {0};
    walk(&count, views, c);
    ParamWalk rec = {.info = xcalloc((size_t)count.n, sizeof(ParamInfo))};
    walk(&rec, views, c);
    free(views);
    l->info = rec.info;
    l->n = rec.n;
    l->total = rec.total;
}

void param_bind(void *views, real *base, ParamWalkFn *walk, const ModelConfig *c)
{
    ParamWalk bind = {.base = base};
    walk(&bind, views, c);
}

void param_layout_free(ParamLayout *l)
{
    free(l->info);
    l->info = NULL;
    l->n = 0;
}

int param_find(const ParamLayout *l, const char *name)
{
    for (int i = 0; i < l->n; i++)
        if (strcmp(l->info[i].name, name) == 0)
            return i;
    return -1;
}
