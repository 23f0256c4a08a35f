/* Building a model: the one place that picks a kind's implementation (ModelOps) from a
   configuration's architecture. An ensemble is built from loaded models instead
   (model/ensemble.h). */
#include "model/model.h"

#include <string.h>

#include "model/rnn.h"
#include "model/transformer.h"

const ModelOps *model_kind_ops(Arch arch)
{
    static const ModelOps *const kinds[ARCH_KINDS] = {[ARCH_RNN] = &rnn_ops, [ARCH_TRANSFORMER] = &tf_ops};
    CHECK(arch >= 0 && arch < ARCH_KINDS);
    return kinds[arch];
}

const ModelOps *model_ops_for(const ModelConfig *c) { return model_kind_ops(c->arch); }

int model_config_check(const ModelConfig *c, Err *e) { return model_ops_for(c)->check(c, e); }

void param_layout_init(ParamLayout *l, const ModelConfig *c)
{
    const ModelOps *o = model_ops_for(c);
    param_layout_build(l, o->walk, o->views_size, c);
}

/* m->impl: the views of the weights, then those of the gradients (NULL without). */
static void bind(Model *m)
{
    const ModelOps *o = m->ops;
    m->impl = xcalloc(2, o->views_size);
    param_bind(m->impl, m->params, o->walk, &m->cfg);
    if (m->grads)
        param_bind((char *)m->impl + o->views_size, m->grads, o->walk, &m->cfg);
}

static void model_start(Model *m, const ModelConfig *cfg)
{
    memset(m, 0, sizeof *m);
    m->cfg = *cfg;
    m->ops = model_ops_for(cfg);
    param_layout_init(&m->layout, cfg);
}

void model_init(Model *m, const ModelConfig *cfg, bool with_grads)
{
    model_start(m, cfg);
    m->params = xcalloc(m->layout.total, sizeof(real));
    if (with_grads)
        m->grads = xcalloc(m->layout.total, sizeof(real));
    bind(m);
}

void model_init_view(Model *m, const ModelConfig *cfg, const real *params)
{
    model_start(m, cfg);
    m->params = (real *)params; /* never written: decoding only reads the weights */
    m->params_borrowed = true;
    bind(m);
}
