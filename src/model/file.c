#include "model/file.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "base/safetensors.h"

_Static_assert(sizeof(real) == sizeof(float), "model files hold float32 weights");

#define KEY_CONFIG "s2s.config"
#define KEY_VOCAB_SRC "s2s.vocab.src"
#define KEY_VOCAB_TGT "s2s.vocab.tgt"
#define KEY_HISTORY "s2s.history"
#define KEY_BPE_SRC "s2s.bpe.src"
#define KEY_BPE_TGT "s2s.bpe.tgt"

/* ------------------------------------------------------------------ config JSON */

void model_config_json(const ModelConfig *c, const TextConfig *t, Buf *out)
{
    JsonWriter w;
    json_writer_init(&w, out, JSON_LINE);
    json_open_object(&w, NULL);
    model_ops_for(c)->config_put(c, &w);
    json_put_str(&w, "direction", t->dir.name);
    json_put_str(&w, "src_lang", t->dir.src.code);
    json_put_str(&w, "tgt_lang", t->dir.tgt.code);
    json_put_bool(&w, "keep_case", t->keep_case);
    json_close(&w);
}

/* The keys that follow each kind's (ModelOps config_keys): the tokenizer's. */
static const char *const text_keys[] = {"direction", "src_lang", "tgt_lang", "keep_case", NULL};

static bool in_list(const char *const *list, const char *key)
{
    for (; *list; list++)
        if (strcmp(*list, key) == 0)
            return true;
    return false;
}

/* Every key of root is in the kind's keys or text_keys, and every key of them but the
   kind's optional ones is in root. */
static int check_keys(const JsonVal *root, const ModelOps *o, const char *where, Err *e)
{
    for (size_t i = 0; i < json_len(root); i++) {
        const JsonKey *k = json_key_at(root, i);
        if (!in_list(o->config_keys, k->s) && !in_list(text_keys, k->s)) {
            char shown[64];
            return err_set(e, "%s: unknown key '%s'", where, json_show(shown, sizeof shown, k->s, k->len));
        }
    }
    for (const char *const *key = o->config_keys; *key; key++)
        if (!json_get(root, *key) && !in_list(o->config_optional, *key))
            return err_set(e, "%s: missing key '%s'", where, *key);
    for (const char *const *key = text_keys; *key; key++)
        if (!json_get(root, *key))
            return err_set(e, "%s: missing key '%s'", where, *key);
    return 0;
}

/* A language code in canonical form (text/lang.h); -1 with e set when the value is not. */
static int cfg_lang(const JsonVal *root, const char *key, Lang *out, const char *where, Err *e)
{
    const JsonVal *v = json_get(root, key);
    if (v->type != JSON_STRING || lang_parse(v->u.str.s, out) != 0 ||
        strcmp(out->code, v->u.str.s) != 0)
        return err_set(e, "%s: '%s' must be an ISO 639 language code", where, key);
    return 0;
}

/* The tokenizer keys, shared by every architecture. */
static int parse_text(const JsonVal *root, TextConfig *out, const char *where, Err *e)
{
    TextConfig nt = {0};
    if (cfg_bool(root, "keep_case", &nt.keep_case, where, e))
        return -1;
    const JsonVal *d = json_get(root, "direction");
    if (d->type != JSON_STRING || direction_parse(d->u.str.s, &nt.dir) != 0 ||
        strcmp(nt.dir.name, d->u.str.s) != 0)
        return err_set(e, "%s: 'direction' must be two ISO 639 language codes joined by '-' "
                          "(\"en-fr\")", where);
    Lang sl, tl;
    if (cfg_lang(root, "src_lang", &sl, where, e) || cfg_lang(root, "tgt_lang", &tl, where, e))
        return -1;
    if (!lang_eq(sl, nt.dir.src) || !lang_eq(tl, nt.dir.tgt)) {
        return err_set(e, "%s: 'src_lang' and 'tgt_lang' (%s, %s) disagree with 'direction' %s",
                       where, sl.code, tl.code, nt.dir.name);
    }
    *out = nt;
    return 0;
}

int model_config_parse(ModelConfig *c, TextConfig *t, const char *json, size_t len,
                       const char *where, Err *e)
{
    Json doc;
    Err je;
    if (json_parse(&doc, json, len, &je) != 0)
        return err_set(e, "%s: %s", where, je.msg);
    int rc = -1;
    const JsonVal *root = doc.root;
    ModelConfig n = *c;
    TextConfig nt;
    if (root->type != JSON_OBJECT) {
        err_set(e, "%s: expected a JSON object", where);
        goto out;
    }
    int arch = ARCH_RNN; /* files written before "arch" hold recurrent models */
    if (json_get(root, "arch") && (arch = cfg_str(root, "arch", arch_names, ARCH_KINDS, where, e)) < 0)
        goto out;
    const ModelOps *o = model_kind_ops((Arch)arch);
    if (check_keys(root, o, where, e) || o->config_get(root, &n, where, e) || parse_text(root, &nt, where, e))
        goto out;
    *c = n;
    *t = nt;
    rc = 0;
out:
    json_free(&doc);
    return rc;
}

/* ------------------------------------------------------------------ save / load */

int model_file_save(const char *path, const Model *m, const Vocab *src, const Vocab *tgt,
                    const TextConfig *t, const char *history, Err *e)
{
    CHECK(vocab_size(src) == (size_t)m->cfg.src_vocab && vocab_size(tgt) == (size_t)m->cfg.tgt_vocab);
    const ParamLayout *l = &m->layout;
    StTensor *ts = xcalloc((size_t)l->n, sizeof *ts);
    for (int i = 0; i < l->n; i++) {
        const ParamInfo *p = &l->info[i];
        ts[i] = (StTensor){.name = p->name, .dtype = ST_F32, .ndim = p->ndim,
                           .data = m->params + p->offset};
        for (int d = 0; d < p->ndim; d++)
            ts[i].shape[d] = p->shape[d];
    }
    Buf cfg = {0}, vs = {0}, vt = {0}, bs = {0}, bt = {0};
    model_config_json(&m->cfg, t, &cfg);
    vocab_lines(src, &vs);
    vocab_lines(tgt, &vt);
    const char *keys[7] = {ST_KEY_FORMAT, KEY_CONFIG, KEY_VOCAB_SRC, KEY_VOCAB_TGT, KEY_HISTORY};
    const char *vals[7] = {ST_FORMAT_MODEL, cfg.data, vs.data, vt.data, history ? history : "{}"};
    size_t nkeys = 5;
    if (t->src_bpe) {
        bpe_format(t->src_bpe, &bs);
        keys[nkeys] = KEY_BPE_SRC;
        vals[nkeys++] = bs.data;
    }
    if (t->tgt_bpe) {
        bpe_format(t->tgt_bpe, &bt);
        keys[nkeys] = KEY_BPE_TGT;
        vals[nkeys++] = bt.data;
    }
    int rc = st_write(path, ts, (size_t)l->n, keys, vals, nkeys, e);
    buf_free(&cfg);
    buf_free(&vs);
    buf_free(&vt);
    buf_free(&bs);
    buf_free(&bt);
    free(ts);
    return rc;
}

static int need_meta(const StFile *f, const char *path, const char *key, const char **out, Err *e)
{
    *out = st_meta(f, key);
    if (!*out)
        return err_set(e, "%s: not a complete s2s model: metadata lacks %s", path, key);
    return 0;
}

/* Validates the opened safetensors file f (named path in messages) and fills mf;
   closes f. */
static int load_from(ModelFile *mf, StFile *f, const char *path, bool with_grads, Err *e)
{
    const char *cfg_s, *vs_s, *vt_s;
    const char *hist = st_meta(f, KEY_HISTORY);
    Buf where = {0};
    Vocab *vs = NULL, *vt = NULL;
    Bpe *bpe[2] = {NULL, NULL};
    const StTensor **tensors = NULL; /* the file's tensor for each parameter, in layout order */
    int rc = -1;
    if (need_meta(f, path, KEY_CONFIG, &cfg_s, e) || need_meta(f, path, KEY_VOCAB_SRC, &vs_s, e) ||
        need_meta(f, path, KEY_VOCAB_TGT, &vt_s, e))
        goto out;
    ModelConfig c = model_config_default();
    buf_printf(&where, "%s: %s", path, KEY_CONFIG);
    if (model_config_parse(&c, &mf->text, cfg_s, strlen(cfg_s), where.data, e) != 0)
        goto out;
    buf_clear(&where);
    buf_printf(&where, "%s: %s", path, KEY_VOCAB_SRC);
    if (vocab_from_lines(&vs, where.data, vs_s, strlen(vs_s), e) != 0)
        goto out;
    buf_clear(&where);
    buf_printf(&where, "%s: %s", path, KEY_VOCAB_TGT);
    if (vocab_from_lines(&vt, where.data, vt_s, strlen(vt_s), e) != 0)
        goto out;
    static const char *const bpe_keys[2] = {KEY_BPE_SRC, KEY_BPE_TGT};
    for (int s = 0; s < 2; s++) {
        const char *codes = st_meta(f, bpe_keys[s]);
        buf_clear(&where);
        buf_printf(&where, "%s: %s", path, bpe_keys[s]);
        if (codes && bpe_parse(&bpe[s], where.data, codes, strlen(codes), e) != 0)
            goto out;
    }
    c.src_vocab = (int)vocab_size(vs);
    c.tgt_vocab = (int)vocab_size(vt);
    Err ce;
    if (model_config_check(&c, &ce) != 0) {
        err_set(e, "%s: %s", path, ce.msg);
        goto out;
    }
    if (hist) {
        Json doc;
        Err je;
        if (json_parse(&doc, hist, strlen(hist), &je) != 0) {
            err_set(e, "%s: %s: %s", path, KEY_HISTORY, je.msg);
            goto out;
        }
        json_free(&doc);
    }
    /* Every tensor is checked against the configuration before the model is
       allocated: a small file must not make us allocate what its config claims. */
    ParamLayout l;
    param_layout_init(&l, &c);
    tensors = xcalloc((size_t)l.n, sizeof *tensors);
    for (int i = 0; i < l.n; i++) {
        const ParamInfo *p = &l.info[i];
        int64_t shape[2] = {p->shape[0], p->shape[1]};
        tensors[i] = st_expect(f, p->name, ST_F32, p->ndim, shape, e);
        if (!tensors[i]) {
            param_layout_free(&l);
            goto out;
        }
    }
    if (st_count(f) != (size_t)l.n) {
        for (size_t i = 0; i < st_count(f); i++)
            if (param_find(&l, st_at(f, i)->name) < 0) {
                char shown[64];
                const char *nm = st_at(f, i)->name;
                err_set(e, "%s: unexpected tensor '%s' for this configuration", path,
                        json_show(shown, sizeof shown, nm, strlen(nm)));
                break;
            }
        param_layout_free(&l);
        goto out;
    }
    /* in place: a mapped file whose tensors lie one after another in layout order */
    const real *base = (const real *)tensors[0]->data - l.info[0].offset;
    bool in_place = st_is_mapped(f) && !with_grads;
    for (int i = 0; in_place && i < l.n; i++)
        in_place = (const real *)tensors[i]->data == base + l.info[i].offset;
    param_layout_free(&l);
    if (in_place) {
        model_init_view(&mf->model, &c, base);
        mf->file = f;
        f = NULL;
    } else {
        model_init(&mf->model, &c, with_grads);
        for (int i = 0; i < mf->model.layout.n; i++) {
            const ParamInfo *p = &mf->model.layout.info[i];
            memcpy(mf->model.params + p->offset, tensors[i]->data, p->size * sizeof(real));
        }
    }
    mf->src = vs;
    mf->tgt = vt;
    vs = vt = NULL;
    mf->bpe[0] = bpe[0];
    mf->bpe[1] = bpe[1];
    mf->text.src_bpe = bpe[0];
    mf->text.tgt_bpe = bpe[1];
    bpe[0] = bpe[1] = NULL;
    mf->history = xstrdup(hist ? hist : "{}");
    rc = 0;
out:
    if (rc != 0)
        memset(mf, 0, sizeof *mf);
    free(tensors);
    vocab_free(vs);
    vocab_free(vt);
    bpe_free(bpe[0]);
    bpe_free(bpe[1]);
    buf_free(&where);
    st_close(f);
    return rc;
}

int model_file_load(ModelFile *mf, const char *path, bool with_grads, Err *e)
{
    memset(mf, 0, sizeof *mf);
    StFile *f;
    if ((with_grads ? st_load : st_map)(&f, path, ST_FORMAT_MODEL, e) != 0)
        return -1;
    return load_from(mf, f, path, with_grads, e);
}

int model_file_parse(ModelFile *mf, const char *name, const void *bytes, size_t len,
                     bool with_grads, Err *e)
{
    memset(mf, 0, sizeof *mf);
    StFile *f;
    if (st_parse(&f, name, bytes, len, ST_FORMAT_MODEL, e) != 0)
        return -1;
    return load_from(mf, f, name, with_grads, e);
}

void model_file_free(ModelFile *mf)
{
    if (mf->model.params)
        model_free(&mf->model);
    st_close(mf->file);
    vocab_free(mf->src);
    vocab_free(mf->tgt);
    bpe_free(mf->bpe[0]);
    bpe_free(mf->bpe[1]);
    free(mf->history);
    memset(mf, 0, sizeof *mf);
}
