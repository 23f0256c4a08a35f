/* The model's parameters: named views into one flat array (weights, gradients and
   optimiser moments all share this layout). Names and shapes are those of
   docs/model.md, i.e. the PyTorch module's state_dict. Each kind walks its tensors in
   that order (its ModelOps layout and bind); this file records or binds them. */
#ifndef S2S_MODEL_PARAMS_H
#define S2S_MODEL_PARAMS_H

#include <stddef.h>

#include "model/config.h"
#include "nn/real.h"

#define PARAM_NAME_MAX 48

typedef struct ParamInfo {
    char name[PARAM_NAME_MAX];
    int ndim;
    int shape[2];
    size_t offset; /* in reals from the start of the flat array */
    size_t size;   /* in reals */
} ParamInfo;

typedef struct ParamLayout {
    ParamInfo *info;
    int n;
    size_t total; /* reals in the flat array */
} ParamLayout;

/* One pass over a kind's tensors in layout order: it records ParamInfo entries (info
   != NULL), binds pointers into base (base != NULL), or only counts. */
typedef struct ParamWalk {
    ParamInfo *info;
    int n;
    size_t total;
    real *base;
} ParamWalk;

/* The next tensor: rows × cols (cols 0: a vector of rows). Returns its place in base
   (NULL when not binding). */
real *param_add(ParamWalk *w, const char *name, int rows, int cols);
/* The same with the name formatted as printf does. */
real *param_addf(ParamWalk *w, int rows, int cols, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* A kind's walk over its tensors: param_add for each, in layout order, storing what it
   returns in the kind's struct of views. */
typedef void ParamWalkFn(ParamWalk *w, void *views, const ModelConfig *c);
/* Builds l from a walk (views: views_size bytes): a counting pass, then a recording
   one. */
void param_layout_build(ParamLayout *l, ParamWalkFn *walk, size_t views_size, const ModelConfig *c);
/* Points the views (views_size bytes) into base, an array of the layout's total. */
void param_bind(void *views, real *base, ParamWalkFn *walk, const ModelConfig *c);
void param_layout_free(ParamLayout *l);
/* Index of a tensor by name, -1 when absent. */
int param_find(const ParamLayout *l, const char *name);

#endif
