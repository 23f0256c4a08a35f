/* The model interface (model.h): what every kind shares. Each function checks what is
   common to all kinds and calls the kind's operation. */
#include "model/model.h"

#include <stdlib.h>
#include <string.h>

#include "model/work.h"
#include "nn/linalg.h"

void model_free(Model *m)
{
    if (m->ops) /* not a zeroed Model */
        model_set_precision(m, PREC_F32);
    free(m->impl);
    param_layout_free(&m->layout);
    if (!m->params_borrowed)
        free(m->params);
    free(m->grads);
    memset(m, 0, sizeof *m);
}

void model_init_random(Model *m, Rng *rng)
{
    CHECK(m->ops->init_random);
    m->ops->init_random(m, rng);
}

int model_max_positions(const Model *m) { return m->ops->max_positions(m); }

int model_attention_layers(const Model *m) { return m->ops->attention_layers(m); }

void model_quantize(Model *m, const real *W, int rows, int cols, Precision p)
{
#ifdef S2S_REAL_DOUBLE
    BUG("model_set_precision: float builds only (%p %d %d %d)", (const void *)W, rows, cols, (int)p);
#else
    nn_qset_add(&m->quant, W, rows, cols, p);
#endif
}

void model_set_precision(Model *m, Precision p)
{
#ifndef S2S_REAL_DOUBLE
    nn_qset_free(&m->quant);
#endif
    m->ops->quantize(m, p);
}

/* ------------------------------------------------------------------ work */

static WorkShape shape(int max_b, int max_s, int max_t, WorkKind kind)
{
    return (WorkShape){.max_b = max_b, .max_s = max_s, .max_t = max_t, .kind = kind};
}

Work *work_new(const Model *m, int max_b, int max_s, int max_t, WorkKind kind)
{
    WorkShape s = shape(max_b, max_s, max_t, kind);
    return m->ops->work_new(m, &s);
}

size_t work_bytes(const Model *m, int max_b, int max_s, int max_t, WorkKind kind)
{
    WorkShape s = shape(max_b, max_s, max_t, kind);
    return m->ops->work_bytes(m, &s);
}

void work_free(Work *w)
{
    if (!w)
        return;
    real *mem = w->mem;
    w->ops->work_free(w);
    free(mem);
}

size_t work_carved_bytes(Work *w, WorkCarveFn *layout)
{
    Carver count = {0};
    layout(w, &count);
    return count.used * sizeof(real);
}

void work_carve_all(Work *w, WorkCarveFn *layout)
{
    Carver count = {0};
    layout(w, &count);
    w->mem = xcalloc(count.used, sizeof(real));
    Carver cv = {.base = w->mem};
    layout(w, &cv);
}

void work_base_init(Work *w, const Model *m, const WorkShape *s)
{
    w->ops = m->ops;
    w->quant = &m->quant;
    w->cfg = m->cfg;
    w->max_b = s->max_b;
    w->max_s = s->max_s;
    w->max_t = s->max_t;
    w->kind = s->kind;
    w->training = s->kind == WORK_TRAIN;
    w->show_layer = w->show_head = -1;
}

double work_nll(const Work *w) { return w->nll; }

const real *work_logits(const Work *w)
{
    CHECK(w->kind == WORK_SCORE && w->T * w->B <= w->out_rows);
    return w->logits;
}

const real *work_step_logits(const Work *w) { return w->logits; }

const real *work_step_attention(const Work *w) { return w->ops->step_attention(w); }

void work_show_attention(Work *w, int layer, int head)
{
    w->show_layer = layer;
    w->show_head = head;
    if (w->ops->show_attention)
        w->ops->show_attention(w);
}

/* ------------------------------------------------------------------ training */

static double forward(Model *m, Work *w, const Batch *b, Rng *rng, bool grad)
{
    CHECK(m->ops->forward && w->kind != WORK_DECODE && (!grad || w->training));
    CHECK(b->B <= w->max_b && b->S <= w->max_s && b->T <= w->max_t);
    w->B = b->B;
    w->S = b->S;
    w->T = b->T;
    return m->ops->forward(m, w, b, rng, grad);
}

double model_forward(Model *m, Work *w, const Batch *b, Rng *rng) { return forward(m, w, b, rng, false); }

double model_forward_backward(Model *m, Work *w, const Batch *b, Rng *rng)
{
    double loss = forward(m, w, b, rng, true);
    CHECK(w->training && b->B == w->B && b->S == w->S && b->T == w->T);
    m->ops->backward(m, w, b);
    return loss;
}

/* ------------------------------------------------------------------ translation */

void model_encode(Model *m, Work *w, const Batch *b)
{
    CHECK(b->B <= w->max_b && b->S <= w->max_s);
    w->B = b->B;
    w->S = b->S;
    w->T = 0;
    m->ops->encode(m, w, b);
}

void model_decode_step(Model *m, Work *w, const Batch *b, const int *prev, int t)
{
    CHECK(t < w->max_t);
    m->ops->decode_step(m, w, b, prev, t);
    w->T = t + 1;
}

void work_step_linear(const Work *w, real *y, const real *x, const real *W, const real *b, const LinearShape *s)
{
    if (w->kind == WORK_DECODE) {
#ifndef S2S_REAL_DOUBLE
        const QMatrix *q = nn_qset_find(w->quant, W, s->Out, s->In);
        if (q) {
            nn_qmat_forward(y, x, q, b, s->N);
            return;
        }
#endif
        if (s->N > 1 && s->N <= NN_FEW_ROWS) {
            nn_linear_forward_few(y, x, W, b, s);
            return;
        }
    }
    nn_linear_forward(y, x, W, b, s);
}

/* ------------------------------------------------------------------ row moves */

/* Row r of the (S,n) array dst becomes row from[r] of the (S,B) array src (which dst
   may be), rows of `row` bytes. The copy of src goes to the Work's scratch when it fits,
   else to a temporary allocation. */
static void gather(Work *w, void *dst, const void *src, int S, int B, int n, size_t row, const int *from)
{
    size_t old = (size_t)S * B * row;
    char *tmp = old <= w->rows_tmp_len * sizeof(real) ? (char *)w->rows_tmp : xmalloc(old);
    memcpy(tmp, src, old);
    for (int s = 0; s < S; s++)
        for (int r = 0; r < n; r++)
            memcpy((char *)dst + ((size_t)s * n + r) * row, tmp + ((size_t)s * B + from[r]) * row, row);
    if (tmp != (char *)w->rows_tmp)
        free(tmp);
}

void work_gather_rows(Work *w, real *dst, const real *src, int S, int B, int n, size_t width, const int *from)
{
    gather(w, dst, src, S, B, n, width * sizeof(real), from);
}

static void check_rows(const int *from, int n, int B)
{
    for (int r = 0; r < n; r++)
        CHECK(from[r] >= 0 && from[r] < B);
}

void model_expand_rows(Model *m, Work *w, Batch *b, const int *from, int n)
{
    CHECK(w->kind == WORK_DECODE && b->B == w->B && n >= 1 && n <= w->max_b);
    check_rows(from, n, b->B);
    m->ops->expand_rows(m, w, b, from, n);
    gather(w, b->src, b->src, b->S, b->B, n, sizeof *b->src, from);
    gather(w, b->src_len, b->src_len, 1, b->B, n, sizeof *b->src_len, from);
    b->B = w->B = n;
}

void model_select_rows(Model *m, Work *w, const Batch *b, const int *from, int t)
{
    CHECK(w->kind == WORK_DECODE && b->B == w->B && t >= 0 && t == w->T);
    check_rows(from, b->B, b->B);
    m->ops->select_rows(m, w, b, from, t);
}
