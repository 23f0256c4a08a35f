/* A Transformer model file in CTranslate2's model format (model/ct2_export.h). */
#include "model/ct2_export.h"

#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/file.h"
#include "nn/ops.h"

/* CTranslate2's model.bin: its binary version, the specification and its revision. */
enum { CT2_BINARY_VERSION = 6, CT2_SPEC_REVISION = 7 };
#define CT2_SPEC "TransformerSpec"

/* CTranslate2's data types (its DataType enum). */
enum { CT2_F32 = 0, CT2_I8 = 1, CT2_I16 = 2 };

enum { CT2_NAME_MAX = 96 };

/* One variable of model.bin, or an alias of one. */
typedef struct Ct2Var {
    char name[CT2_NAME_MAX];
    int ndim;
    uint32_t shape[2];
    int dtype;
    const void *data;    /* f32 weights, or small for a scalar */
    size_t nbytes;
    char alias_of[CT2_NAME_MAX]; /* non-empty: an alias of that variable */
    int16_t small;       /* a scalar's value (int8 or int16) */
} Ct2Var;

typedef struct Ct2Vars {
    Ct2Var *v;
    int n, cap;
} Ct2Vars;

static Ct2Var *var_new(Ct2Vars *vs, const char *name)
{
    if (vs->n == vs->cap) {
        vs->cap = vs->cap ? 2 * vs->cap : 64;
        vs->v = realloc(vs->v, (size_t)vs->cap * sizeof *vs->v);
        if (!vs->v)
            die("out of memory");
    }
    Ct2Var *v = &vs->v[vs->n++];
    memset(v, 0, sizeof *v);
    CHECK(strlen(name) < CT2_NAME_MAX);
    strcpy(v->name, name);
    return v;
}

static void var_f32(Ct2Vars *vs, const char *name, const float *data, int rows, int cols)
{
    Ct2Var *v = var_new(vs, name);
    v->ndim = cols ? 2 : 1;
    v->shape[0] = (uint32_t)rows;
    v->shape[1] = (uint32_t)cols;
    v->dtype = CT2_F32;
    v->data = data;
    v->nbytes = (size_t)rows * (size_t)(cols ? cols : 1) * sizeof(float);
}

static void var_scalar(Ct2Vars *vs, const char *name, int dtype, int value)
{
    Ct2Var *v = var_new(vs, name);
    v->ndim = 0;
    v->dtype = dtype;
    v->small = (int16_t)value;
    v->nbytes = dtype == CT2_I16 ? 2 : 1;
}

static void var_alias(Ct2Vars *vs, const char *name, const char *of)
{
    Ct2Var *v = var_new(vs, name);
    CHECK(strlen(of) < CT2_NAME_MAX);
    strcpy(v->alias_of, of);
}

static int var_cmp(const void *a, const void *b)
{
    return strcmp(((const Ct2Var *)a)->name, ((const Ct2Var *)b)->name);
}

/* ------------------------------------------------------------------ the mapping */

/* The weights of the s2s tensor name, or NULL when the model has no such tensor (a
   tied or shared one). */
static const float *tensor(const Model *m, const char *name)
{
    int i = param_find(&m->layout, name);
    return i < 0 ? NULL : m->params + m->layout.info[i].offset;
}

static const float *tensorf(const Model *m, const char *fmt, const char *stack, int l, const char *rest)
{
    char name[PARAM_NAME_MAX];
    snprintf(name, sizeof name, fmt, stack, l, rest);
    const float *w = tensor(m, name);
    CHECK(w != NULL);
    return w;
}

/* One layer norm: s2s's norm<k> of layer l of the stack, at scope. */
static void put_norm(Ct2Vars *vs, const Model *m, const char *scope, const char *stack, int l, int k)
{
    char name[CT2_NAME_MAX], rest[32];
    int d = m->cfg.model_dim;
    snprintf(rest, sizeof rest, "norm%d.weight", k);
    snprintf(name, sizeof name, "%s/layer_norm/gamma", scope);
    var_f32(vs, name, tensorf(m, "%s.layers.%d.%s", stack, l, rest), d, 0);
    snprintf(rest, sizeof rest, "norm%d.bias", k);
    snprintf(name, sizeof name, "%s/layer_norm/beta", scope);
    var_f32(vs, name, tensorf(m, "%s.layers.%d.%s", stack, l, rest), d, 0);
}

/* A linear layer: rows [row0, row0 + rows) of s2s's weight (rows x cols) and bias. */
static void put_linear(Ct2Vars *vs, const char *scope, const float *w, const float *b, int row0, int rows,
                       int cols)
{
    char name[CT2_NAME_MAX];
    snprintf(name, sizeof name, "%s/weight", scope);
    var_f32(vs, name, w + (size_t)row0 * (size_t)cols, rows, cols);
    snprintf(name, sizeof name, "%s/bias", scope);
    var_f32(vs, name, b + row0, rows, 0);
}

static void put_layer(Ct2Vars *vs, const Model *m, const char *stack, int l)
{
    const ModelConfig *c = &m->cfg;
    int d = c->model_dim, F = c->ff;
    bool dec = strcmp(stack, "decoder") == 0;
    char scope[64], lin[80];
    const char *f = "%s.layers.%d.%s";

    snprintf(scope, sizeof scope, "%s/layer_%d/self_attention", stack, l);
    put_norm(vs, m, scope, stack, l, 1);
    snprintf(lin, sizeof lin, "%s/linear_0", scope);
    put_linear(vs, lin, tensorf(m, f, stack, l, "self_attn.in_proj_weight"),
               tensorf(m, f, stack, l, "self_attn.in_proj_bias"), 0, 3 * d, d);
    snprintf(lin, sizeof lin, "%s/linear_1", scope);
    put_linear(vs, lin, tensorf(m, f, stack, l, "self_attn.out_proj.weight"),
               tensorf(m, f, stack, l, "self_attn.out_proj.bias"), 0, d, d);

    if (dec) {
        snprintf(scope, sizeof scope, "%s/layer_%d/attention", stack, l);
        put_norm(vs, m, scope, stack, l, 2);
        const float *w = tensorf(m, f, stack, l, "multihead_attn.in_proj_weight");
        const float *b = tensorf(m, f, stack, l, "multihead_attn.in_proj_bias");
        snprintf(lin, sizeof lin, "%s/linear_0", scope);
        put_linear(vs, lin, w, b, 0, d, d); /* queries */
        snprintf(lin, sizeof lin, "%s/linear_1", scope);
        put_linear(vs, lin, w, b, d, 2 * d, d); /* keys and values */
        snprintf(lin, sizeof lin, "%s/linear_2", scope);
        put_linear(vs, lin, tensorf(m, f, stack, l, "multihead_attn.out_proj.weight"),
                   tensorf(m, f, stack, l, "multihead_attn.out_proj.bias"), 0, d, d);
    }

    snprintf(scope, sizeof scope, "%s/layer_%d/ffn", stack, l);
    put_norm(vs, m, scope, stack, l, dec ? 3 : 2);
    snprintf(lin, sizeof lin, "%s/linear_0", scope);
    put_linear(vs, lin, tensorf(m, f, stack, l, "linear1.weight"), tensorf(m, f, stack, l, "linear1.bias"), 0, F, d);
    snprintf(lin, sizeof lin, "%s/linear_1", scope);
    put_linear(vs, lin, tensorf(m, f, stack, l, "linear2.weight"), tensorf(m, f, stack, l, "linear2.bias"), 0, d, F);
}

/* The scalars CTranslate2's TransformerSpec writes for each stack. */
static void put_stack_scalars(Ct2Vars *vs, const ModelConfig *c, const char *stack)
{
    char name[CT2_NAME_MAX];
#define SCALAR(key, type, value)                                 \
    do {                                                         \
        snprintf(name, sizeof name, "%s/%s", stack, key);        \
        var_scalar(vs, name, type, value);                       \
    } while (0)
    SCALAR("num_heads", CT2_I16, c->heads);
    SCALAR("pre_norm", CT2_I8, c->norm == NORM_PRE);
    SCALAR("activation", CT2_I8, 0); /* ReLU */
    SCALAR("scale_embeddings", CT2_I8, 1);
    if (strcmp(stack, "encoder") == 0) {
        SCALAR("embeddings_merge", CT2_I8, 0);
        SCALAR("multi_query_attention", CT2_I8, 0);
    } else {
        SCALAR("alignment_layer", CT2_I16, -1);
        SCALAR("alignment_heads", CT2_I16, 1);
        SCALAR("alibi", CT2_I8, 0);
        SCALAR("alibi_use_positive_positions", CT2_I8, 0);
        SCALAR("scale_alibi", CT2_I8, 0);
        SCALAR("start_from_zero_embedding", CT2_I8, 0);
    }
#undef SCALAR
}

/* Every variable of the model; pe is the sinusoidal table when the model has no
   learned positions. */
static void collect(Ct2Vars *vs, const Model *m, const float *pe, int pe_rows)
{
    const ModelConfig *c = &m->cfg;
    int d = c->model_dim;
    const float *src_emb = tensor(m, "src_emb.weight");
    const float *tgt_emb = tensor(m, "tgt_emb.weight");
    CHECK(src_emb != NULL);

    put_stack_scalars(vs, c, "encoder");
    put_stack_scalars(vs, c, "decoder");

    /* the names sort "decoder/..." before "encoder/...": a shared tensor lives under its
       decoder name and the encoder's is the alias, as CTranslate2's converters do */
    var_f32(vs, "decoder/embeddings/weight", tgt_emb ? tgt_emb : src_emb, c->tgt_vocab, d);
    if (tgt_emb)
        var_f32(vs, "encoder/embeddings_0/weight", src_emb, c->src_vocab, d);
    else
        var_alias(vs, "encoder/embeddings_0/weight", "decoder/embeddings/weight");
    if (c->positions == POS_LEARNED) {
        var_f32(vs, "decoder/position_encodings/encodings", tensor(m, "tgt_pos.weight"), c->max_positions, d);
        var_f32(vs, "encoder/position_encodings/encodings", tensor(m, "src_pos.weight"), c->max_positions, d);
    } else {
        var_f32(vs, "decoder/position_encodings/encodings", pe, pe_rows, d);
        var_alias(vs, "encoder/position_encodings/encodings", "decoder/position_encodings/encodings");
    }

    for (int l = 0; l < c->layers; l++)
        put_layer(vs, m, "encoder", l);
    for (int l = 0; l < c->layers; l++)
        put_layer(vs, m, "decoder", l);
    if (c->norm == NORM_PRE) {
        var_f32(vs, "encoder/layer_norm/gamma", tensor(m, "encoder.norm.weight"), d, 0);
        var_f32(vs, "encoder/layer_norm/beta", tensor(m, "encoder.norm.bias"), d, 0);
        var_f32(vs, "decoder/layer_norm/gamma", tensor(m, "decoder.norm.weight"), d, 0);
        var_f32(vs, "decoder/layer_norm/beta", tensor(m, "decoder.norm.bias"), d, 0);
    }
    const float *proj = tensor(m, "out.proj.weight");
    if (proj)
        var_f32(vs, "decoder/projection/weight", proj, c->tgt_vocab, d);
    else
        var_alias(vs, "decoder/projection/weight", "decoder/embeddings/weight");
    var_f32(vs, "decoder/projection/bias", tensor(m, "out.proj.bias"), c->tgt_vocab, 0);
    qsort(vs->v, (size_t)vs->n, sizeof *vs->v, var_cmp);
}

/* ------------------------------------------------------------------ the files */

static void put_u8(Buf *b, unsigned v)
{
    uint8_t x = (uint8_t)v;
    buf_append(b, &x, 1);
}

static void put_u16(Buf *b, unsigned v)
{
    uint8_t x[2] = {(uint8_t)v, (uint8_t)(v >> 8)};
    buf_append(b, x, 2);
}

static void put_u32(Buf *b, uint32_t v)
{
    uint8_t x[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    buf_append(b, x, 4);
}

/* A string: its length with the NUL, its bytes, the NUL. */
static void put_str(Buf *b, const char *s)
{
    size_t n = strlen(s);
    put_u16(b, (unsigned)(n + 1));
    buf_append(b, s, n);
    put_u8(b, 0);
}

/* model.bin; the weights are stored little-endian, as x86 and arm64 hold them. */
static void model_bin(const Ct2Vars *vs, Buf *out)
{
    int nvar = 0, nalias = 0;
    for (int i = 0; i < vs->n; i++)
        if (vs->v[i].alias_of[0])
            nalias++;
        else
            nvar++;
    put_u32(out, CT2_BINARY_VERSION);
    put_str(out, CT2_SPEC);
    put_u32(out, CT2_SPEC_REVISION);
    put_u32(out, (uint32_t)nvar);
    for (int i = 0; i < vs->n; i++) {
        const Ct2Var *v = &vs->v[i];
        if (v->alias_of[0])
            continue;
        put_str(out, v->name);
        put_u8(out, (unsigned)v->ndim);
        for (int k = 0; k < v->ndim; k++)
            put_u32(out, v->shape[k]);
        put_u8(out, (unsigned)v->dtype);
        CHECK(v->nbytes <= UINT32_MAX);
        put_u32(out, (uint32_t)v->nbytes);
        if (v->ndim == 0) {
            if (v->dtype == CT2_I16)
                put_u16(out, (unsigned)(uint16_t)v->small);
            else
                put_u8(out, (unsigned)(uint8_t)v->small);
        } else {
            buf_append(out, v->data, v->nbytes);
        }
    }
    put_u32(out, (uint32_t)nalias);
    for (int i = 0; i < vs->n; i++)
        if (vs->v[i].alias_of[0]) {
            put_str(out, vs->v[i].name);
            put_str(out, vs->v[i].alias_of);
        }
}

static void vocab_json(const Vocab *v, Buf *out)
{
    buf_puts(out, "[\n");
    size_t n = vocab_size(v);
    for (size_t i = 0; i < n; i++) {
        const char *t = vocab_token(v, (int32_t)i);
        buf_puts(out, "  ");
        buf_json_str(out, t, strlen(t));
        buf_puts(out, i + 1 < n ? ",\n" : "\n");
    }
    buf_puts(out, "]\n");
}

static void config_json(Buf *out)
{
    buf_puts(out, "{\n"
                  "  \"add_source_bos\": false,\n"
                  "  \"add_source_eos\": false,\n"
                  "  \"bos_token\": \"<bos>\",\n"
                  "  \"decoder_start_token\": \"<bos>\",\n"
                  "  \"eos_token\": \"<eos>\",\n"
                  "  \"layer_norm_epsilon\": 1e-05,\n"
                  "  \"multi_query_attention\": false,\n"
                  "  \"unk_token\": \"<unk>\"\n"
                  "}\n");
}

/* How text goes in and out of the exported model. */
static void tokenization_txt(const ModelFile *mf, const char *name, Buf *out)
{
    const TextConfig *t = &mf->text;
    const char *src = t->dir.src.code, *tgt = t->dir.tgt.code, *base = strrchr(name, '/');
    base = base ? base + 1 : name;
    const char *lc = t->keep_case ? "" : " --lowercase";
    buf_printf(out,
               "%s, an s2s Transformer from %s to %s, in CTranslate2's model format\n"
               "(s2s export --ctranslate2). model.bin, config.json and the vocabularies are\n"
               "CTranslate2's; the model reads and writes s2s's tokens, so text goes in and out\n"
               "through s2s's tokenizer.\n\n",
               base, lang_label(&t->dir.src), lang_label(&t->dir.tgt));
    buf_printf(out,
               "Source (%s): NFKC normalisation, plain apostrophes and spaces, s2s's rules for\n"
               "%s, case %s%s. One sentence a line:\n"
               "  s2s tokenize --lang %s%s%s < input.txt > input.tok\n\n",
               src, src, t->keep_case ? "kept" : "folded",
               mf->bpe[0] ? ", then the BPE merges of source.bpe (\"@@\" ends every\n"
                            "unit of a word but its last)"
                          : "",
               src, lc, mf->bpe[0] ? " --bpe source.bpe" : "");
    buf_printf(out,
               "The source gets neither <bos> nor <eos>; the decoder starts from <bos> and stops\n"
               "at <eos> (config.json). For instance, with CTranslate2's command-line client:\n"
               "  ct2-translator --model DIR --src input.tok --beam_size 5 > output.tok\n\n");
    buf_printf(out,
               "Target (%s): %s\n"
               "  s2s tokenize --lang %s --detok < output.tok > output.txt\n\n",
               tgt, mf->bpe[1] ? "join the subword units (target.bpe holds their merges), then the words:"
                               : "join the words:",
               tgt);
    buf_printf(out,
               "s2s translate also splits a line into sentences and translates them apart, and\n"
               "requires every number of a source in its translation (s2s translate --help);\n"
               "s2s translate --no-split --no-copy-numbers decodes as CTranslate2 does with\n"
               "--min_decoding_length 0 (CTranslate2 refuses <eos> as the first token unless\n"
               "told) and the same length limit (s2s: twice the source's tokens and 10).\n");
}

/* ------------------------------------------------------------------ the directory */

static const char *const written[] = {
    "model.bin", "config.json", "shared_vocabulary.json", "source_vocabulary.json",
    "target_vocabulary.json", "source.bpe", "target.bpe", "TOKENIZATION.txt",
};

/* Removes what export wrote in tmp, then tmp. */
static void tmp_remove(const char *tmp)
{
    for (size_t i = 0; i < sizeof written / sizeof *written; i++) {
        char *p = path_join(tmp, written[i]);
        unlink(p);
        free(p);
    }
    rmdir(tmp);
}

static int dir_is_empty(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    struct dirent *de;
    int empty = 1;
    while ((de = readdir(d)) != NULL)
        if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0) {
            empty = 0;
            break;
        }
    closedir(d);
    return empty;
}

static int put_file(const char *tmp, const char *file, const Buf *b, Err *e)
{
    char *p = path_join(tmp, file);
    int rc = atomic_write(p, b->data ? b->data : "", b->len, e);
    free(p);
    return rc;
}

int ct2_export(const ModelFile *mf, const char *name, const char *dir, Err *e)
{
    const Model *m = &mf->model;
    if (m->cfg.arch != ARCH_TRANSFORMER)
        return err_set(e, "%s: a %s: CTranslate2 has no such model kind; only a Transformer can be exported",
                       name, m->ops->title);
    struct stat st;
    if (stat(dir, &st) == 0) {
        if (!S_ISDIR(st.st_mode) || dir_is_empty(dir) != 1)
            return err_set(e, "%s: exists and is not an empty directory; nothing written; choose another DIR",
                           dir);
    } else if (errno != ENOENT) {
        return err_set(e, "%s: %s", dir, strerror(errno));
    }

    int d = m->cfg.model_dim, pe_rows = m->cfg.positions == POS_LEARNED ? 0 : CT2_SINUSOID_ROWS;
    float *pe = pe_rows ? XNEW(float, (size_t)pe_rows * (size_t)d) : NULL;
    for (int p = 0; p < pe_rows; p++)
        nn_sinusoid(pe + (size_t)p * (size_t)d, p, d);
    Ct2Vars vs = {0};
    collect(&vs, m, pe, pe_rows);

    Buf tmp = {0};
    buf_printf(&tmp, "%s.tmp.%ld", dir, (long)getpid());
    int rc = 0;
    if (mkdir(tmp.data, 0777) != 0) {
        rc = err_set(e, "%s: %s", tmp.data, strerror(errno));
        goto out;
    }
    Buf b = {0};
    model_bin(&vs, &b);
    rc = put_file(tmp.data, "model.bin", &b, e);
    buf_clear(&b);
    config_json(&b);
    if (rc == 0)
        rc = put_file(tmp.data, "config.json", &b, e);
    if (rc == 0 && vocab_equal(mf->src, mf->tgt)) {
        buf_clear(&b);
        vocab_json(mf->src, &b);
        rc = put_file(tmp.data, "shared_vocabulary.json", &b, e);
    } else if (rc == 0) {
        buf_clear(&b);
        vocab_json(mf->src, &b);
        rc = put_file(tmp.data, "source_vocabulary.json", &b, e);
        buf_clear(&b);
        vocab_json(mf->tgt, &b);
        if (rc == 0)
            rc = put_file(tmp.data, "target_vocabulary.json", &b, e);
    }
    static const char *const bpe_files[2] = {"source.bpe", "target.bpe"};
    for (int s = 0; s < 2 && rc == 0; s++)
        if (mf->bpe[s]) {
            buf_clear(&b);
            bpe_format(mf->bpe[s], &b);
            rc = put_file(tmp.data, bpe_files[s], &b, e);
        }
    buf_clear(&b);
    tokenization_txt(mf, name, &b);
    if (rc == 0)
        rc = put_file(tmp.data, "TOKENIZATION.txt", &b, e);
    buf_free(&b);
    if (rc == 0 && rename(tmp.data, dir) != 0)
        rc = err_set(e, "%s: %s; nothing written", dir, strerror(errno));
    if (rc != 0)
        tmp_remove(tmp.data);
out:
    buf_free(&tmp);
    free(vs.v);
    free(pe);
    return rc;
}
