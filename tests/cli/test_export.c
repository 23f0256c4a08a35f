/* End-to-end tests of `s2s export --ctranslate2`: every tensor where CTranslate2's
   TransformerSpec reads it, the vocabularies and settings, the refusals; and, where a
   CTranslate2 build is at hand ($CT2_ROOT, default bench/ct2), the same greedy tokens
   from CTranslate2 as from s2s translate in f32. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/json.h"
#include "helpers.h"
#include "model/file.h"
#include "model_fixture.h"
#include "nn/ops.h"

/* ------------------------------------------------------------------ reading model.bin */

typedef struct BinVar {
    char *name;
    int ndim;
    uint32_t shape[4];
    int dtype;
    uint32_t nbytes;
    const uint8_t *data;
    char *alias_of; /* an alias: the variable it names */
} BinVar;

typedef struct Bin {
    uint8_t *bytes;
    size_t len, pos;
    uint32_t version, revision;
    char *spec;
    BinVar *v;
    int n, nvar;
} Bin;

static const uint8_t *take(Bin *b, size_t n)
{
    cr_assert(b->pos + n <= b->len, "model.bin ends early at byte %zu", b->pos);
    const uint8_t *p = b->bytes + b->pos;
    b->pos += n;
    return p;
}

static uint32_t take_u32(Bin *b)
{
    const uint8_t *p = take(b, 4);
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static char *take_str(Bin *b)
{
    const uint8_t *p = take(b, 2);
    size_t n = (size_t)p[0] | (size_t)p[1] << 8;
    cr_assert(n >= 1);
    const uint8_t *s = take(b, n);
    cr_assert_eq(s[n - 1], 0, "a string without its NUL");
    return strf("%s", (const char *)s);
}

static void bin_read(Bin *b, const char *path)
{
    memset(b, 0, sizeof *b);
    b->bytes = (uint8_t *)slurp(path, &b->len);
    b->version = take_u32(b);
    b->spec = take_str(b);
    b->revision = take_u32(b);
    b->nvar = (int)take_u32(b);
    b->v = calloc((size_t)b->nvar + 64, sizeof *b->v);
    for (int i = 0; i < b->nvar; i++) {
        BinVar *v = &b->v[b->n++];
        v->name = take_str(b);
        v->ndim = *take(b, 1);
        cr_assert(v->ndim <= 4);
        for (int k = 0; k < v->ndim; k++)
            v->shape[k] = take_u32(b);
        v->dtype = *take(b, 1);
        v->nbytes = take_u32(b);
        v->data = take(b, v->nbytes);
    }
    int nalias = (int)take_u32(b);
    cr_assert(nalias <= 64);
    for (int i = 0; i < nalias; i++) {
        BinVar *v = &b->v[b->n++];
        v->name = take_str(b);
        v->alias_of = take_str(b);
    }
    cr_expect_eq(b->pos, b->len, "model.bin has %zu bytes after its aliases", b->len - b->pos);
}

static void bin_free(Bin *b)
{
    for (int i = 0; i < b->n; i++) {
        free(b->v[i].name);
        free(b->v[i].alias_of);
    }
    free(b->v);
    free(b->spec);
    free(b->bytes);
}

static const BinVar *bin_get(const Bin *b, const char *name)
{
    for (int i = 0; i < b->n; i++)
        if (strcmp(b->v[i].name, name) == 0)
            return &b->v[i];
    return NULL;
}

/* The variable name, an f32 tensor of rows x cols (cols 0: a vector), equal to the
   floats at want. */
static void expect_f32(const Bin *b, const char *name, const float *want, int rows, int cols)
{
    const BinVar *v = bin_get(b, name);
    cr_assert(v != NULL, "model.bin lacks %s", name);
    cr_assert(v->alias_of == NULL, "%s is an alias of %s", name, v->alias_of);
    cr_expect_eq(v->dtype, 0, "%s: dtype %d", name, v->dtype);
    cr_expect_eq(v->ndim, cols ? 2 : 1, "%s: rank %d", name, v->ndim);
    cr_expect_eq(v->shape[0], (uint32_t)rows, "%s: %u rows, expected %d", name, v->shape[0], rows);
    if (cols)
        cr_expect_eq(v->shape[1], (uint32_t)cols, "%s: %u columns, expected %d", name, v->shape[1], cols);
    size_t n = (size_t)rows * (size_t)(cols ? cols : 1);
    cr_assert_eq(v->nbytes, n * 4, "%s: %u bytes", name, v->nbytes);
    cr_expect(memcmp(v->data, want, n * 4) == 0, "%s: not the model's values", name);
}

static void expect_scalar(const Bin *b, const char *name, int dtype, int value)
{
    const BinVar *v = bin_get(b, name);
    cr_assert(v != NULL, "model.bin lacks %s", name);
    cr_expect_eq(v->ndim, 0, "%s: rank %d", name, v->ndim);
    cr_expect_eq(v->dtype, dtype, "%s: dtype %d, expected %d", name, v->dtype, dtype);
    int got = dtype == 2 ? (int16_t)(v->data[0] | v->data[1] << 8) : (int8_t)v->data[0];
    cr_expect_eq(got, value, "%s = %d, expected %d", name, got, value);
}

static void expect_alias(const Bin *b, const char *name, const char *of)
{
    const BinVar *v = bin_get(b, name);
    cr_assert(v != NULL, "model.bin lacks %s", name);
    cr_expect(v->alias_of && strcmp(v->alias_of, of) == 0, "%s: an alias of %s, expected of %s", name,
              v->alias_of ? v->alias_of : "(none)", of);
}

static const float *param(const Model *m, const char *name)
{
    int i = param_find(&m->layout, name);
    cr_assert(i >= 0, "the model has no tensor %s", name);
    return m->params + m->layout.info[i].offset;
}

/* Every layer's tensors: norms, the fused and split attention projections, the
   feed-forward layers. */
static void expect_layers(const Bin *b, const Model *m)
{
    const ModelConfig *c = &m->cfg;
    int d = c->model_dim, F = c->ff;
    for (int dec = 0; dec < 2; dec++) {
        const char *st = dec ? "decoder" : "encoder";
        for (int l = 0; l < c->layers; l++) {
            char n1[128], n2[128];
#define P(fmt) (snprintf(n2, sizeof n2, "%s.layers.%d." fmt, st, l), param(m, n2))
#define N(fmt) (snprintf(n1, sizeof n1, "%s/layer_%d/" fmt, st, l), n1)
            expect_f32(b, N("self_attention/layer_norm/gamma"), P("norm1.weight"), d, 0);
            expect_f32(b, N("self_attention/layer_norm/beta"), P("norm1.bias"), d, 0);
            expect_f32(b, N("self_attention/linear_0/weight"), P("self_attn.in_proj_weight"), 3 * d, d);
            expect_f32(b, N("self_attention/linear_0/bias"), P("self_attn.in_proj_bias"), 3 * d, 0);
            expect_f32(b, N("self_attention/linear_1/weight"), P("self_attn.out_proj.weight"), d, d);
            expect_f32(b, N("self_attention/linear_1/bias"), P("self_attn.out_proj.bias"), d, 0);
            if (dec) {
                expect_f32(b, N("attention/layer_norm/gamma"), P("norm2.weight"), d, 0);
                expect_f32(b, N("attention/layer_norm/beta"), P("norm2.bias"), d, 0);
                expect_f32(b, N("attention/linear_0/weight"), P("multihead_attn.in_proj_weight"), d, d);
                expect_f32(b, N("attention/linear_0/bias"), P("multihead_attn.in_proj_bias"), d, 0);
                expect_f32(b, N("attention/linear_1/weight"), P("multihead_attn.in_proj_weight") + d * d, 2 * d,
                           d);
                expect_f32(b, N("attention/linear_1/bias"), P("multihead_attn.in_proj_bias") + d, 2 * d, 0);
                expect_f32(b, N("attention/linear_2/weight"), P("multihead_attn.out_proj.weight"), d, d);
                expect_f32(b, N("attention/linear_2/bias"), P("multihead_attn.out_proj.bias"), d, 0);
            }
            expect_f32(b, N("ffn/layer_norm/gamma"), dec ? P("norm3.weight") : P("norm2.weight"), d, 0);
            expect_f32(b, N("ffn/layer_norm/beta"), dec ? P("norm3.bias") : P("norm2.bias"), d, 0);
            expect_f32(b, N("ffn/linear_0/weight"), P("linear1.weight"), F, d);
            expect_f32(b, N("ffn/linear_0/bias"), P("linear1.bias"), F, 0);
            expect_f32(b, N("ffn/linear_1/weight"), P("linear2.weight"), d, F);
            expect_f32(b, N("ffn/linear_1/bias"), P("linear2.bias"), d, 0);
#undef P
#undef N
        }
    }
}

static void expect_stack_scalars(const Bin *b, const ModelConfig *c)
{
    for (int dec = 0; dec < 2; dec++) {
        char n[96];
        const char *st = dec ? "decoder" : "encoder";
#define S(key, dtype, value) (snprintf(n, sizeof n, "%s/%s", st, key), expect_scalar(b, n, dtype, value))
        S("num_heads", 2, c->heads);
        S("pre_norm", 1, c->norm == NORM_PRE);
        S("activation", 1, 0);
        S("scale_embeddings", 1, 1);
#undef S
    }
    expect_scalar(b, "decoder/alignment_layer", 2, -1);
    expect_scalar(b, "decoder/alignment_heads", 2, 1);
    expect_scalar(b, "encoder/embeddings_merge", 1, 0);
}

/* The names are in byte order, each once. */
static void expect_sorted(const Bin *b)
{
    for (int i = 1; i < b->nvar; i++)
        cr_expect(strcmp(b->v[i - 1].name, b->v[i].name) < 0, "%s before %s", b->v[i - 1].name, b->v[i].name);
}

/* A JSON file that is a list of the vocabulary's tokens in id order. */
static void expect_vocab_json(const char *path, const Vocab *v)
{
    size_t len;
    char *text = slurp(path, &len);
    Json doc;
    Err e = {0};
    cr_assert_eq(json_parse(&doc, text, len, &e), 0, "%s: %s", path, e.msg);
    cr_assert_eq(json_len(doc.root), vocab_size(v), "%s: %zu tokens, expected %zu", path, json_len(doc.root),
                 vocab_size(v));
    for (size_t i = 0; i < vocab_size(v); i++) {
        const char *s;
        size_t n;
        cr_assert_eq(json_as_str(json_at(doc.root, i), &s, &n, &e), 0);
        cr_expect_str_eq(s, vocab_token(v, (int32_t)i), "%s: token %zu", path, i);
    }
    json_free(&doc);
    free(text);
}

static char *train_tiny(const char *dir, const char *name, const char *const *extra)
{
    char *model = strf("%s/%s", dir, name);
    const char *argv[32] = {"train", "data/sample.tsv", "-o", model, "--arch", "transformer", "--model-dim", "16",
                            "--ff", "24", "--layers", "2", "--heads", "2", "--steps", "3", "--valid-every", "0",
                            "--threads", "1", "--quiet"};
    int k = 21;
    for (; extra && *extra; extra++)
        argv[k++] = *extra;
    argv[k] = NULL;
    RunResult r = run_s2s(NULL, argv);
    cr_assert_eq(r.status, 0, "train failed: %s", r.err);
    run_free(&r);
    return model;
}

static const char CONFIG_JSON[] = "{\n"
                                  "  \"add_source_bos\": false,\n"
                                  "  \"add_source_eos\": false,\n"
                                  "  \"bos_token\": \"<bos>\",\n"
                                  "  \"decoder_start_token\": \"<bos>\",\n"
                                  "  \"eos_token\": \"<eos>\",\n"
                                  "  \"layer_norm_epsilon\": 1e-05,\n"
                                  "  \"multi_query_attention\": false,\n"
                                  "  \"unk_token\": \"<unk>\"\n"
                                  "}\n";

/* A post-norm model with sinusoidal positions and one table for source, target and
   output, as --share-embeddings --tie-embeddings make it. */
Test(export, shared_tied_post_norm_transformer_every_tensor_where_ctranslate2_reads_it)
{
    char *dir = tmpdir_new();
    char *model = train_tiny(dir, "m.s2s",
                             (const char *const[]){"--norm", "post", "--share-embeddings", "--tie-embeddings", NULL});
    char *out = strf("%s/ct2", dir);
    RunResult r = RUN_S2S(NULL, "export", "--ctranslate2", model, out);
    char *want = strf("%s: %s in CTranslate2's format (TransformerSpec, float32)\n", out, model);
    expect_run(&r, 0, want, "");
    free(want);

    ModelFile mf;
    fixture_load_file(model, &mf);
    const Model *m = &mf.model;
    const ModelConfig *c = &m->cfg;
    int d = c->model_dim;
    char *bin_path = strf("%s/model.bin", out);
    Bin b;
    bin_read(&b, bin_path);
    cr_expect_eq(b.version, 6);
    cr_expect_str_eq(b.spec, "TransformerSpec");
    cr_expect_eq(b.revision, 7);
    expect_sorted(&b);
    expect_stack_scalars(&b, c);
    expect_layers(&b, m);
    expect_f32(&b, "decoder/embeddings/weight", param(m, "src_emb.weight"), c->tgt_vocab, d);
    expect_alias(&b, "encoder/embeddings_0/weight", "decoder/embeddings/weight");
    expect_alias(&b, "decoder/projection/weight", "decoder/embeddings/weight");
    expect_f32(&b, "decoder/projection/bias", param(m, "out.proj.bias"), c->tgt_vocab, 0);
    float *pe = calloc((size_t)1024 * (size_t)d, sizeof *pe);
    for (int p = 0; p < 1024; p++)
        nn_sinusoid(pe + (size_t)p * (size_t)d, p, d);
    cr_expect_float_eq(pe[(size_t)1 * (size_t)d + 1], (float)cos(1.0), 1e-6, "row 1, column 1: cos(1)");
    expect_f32(&b, "decoder/position_encodings/encodings", pe, 1024, d);
    expect_alias(&b, "encoder/position_encodings/encodings", "decoder/position_encodings/encodings");
    free(pe);
    cr_expect(bin_get(&b, "encoder/layer_norm/gamma") == NULL, "post-norm: no final norm");
    /* every variable accounted for: 6 scalars of the encoder and 10 of the decoder, the
       table, the positions, the output bias, then 12 tensors an encoder layer, 20 a
       decoder layer */
    cr_expect_eq(b.nvar, 16 + 3 + c->layers * (12 + 20), "%d variables", b.nvar);
    cr_expect_eq(b.n - b.nvar, 3, "%d aliases", b.n - b.nvar);
    bin_free(&b);

    char *f = strf("%s/config.json", out);
    size_t len;
    char *text = slurp(f, &len);
    cr_expect_str_eq(text, CONFIG_JSON);
    free(text);
    free(f);
    f = strf("%s/shared_vocabulary.json", out);
    expect_vocab_json(f, mf.src);
    free(f);
    cr_expect(!file_exists(strf("%s/source_vocabulary.json", out)));
    cr_expect_eq(dir_count(out), 6, "model.bin, config.json, shared_vocabulary.json, source.bpe, target.bpe, "
                                    "TOKENIZATION.txt and nothing else: %d files",
                 dir_count(out));
    f = strf("%s/TOKENIZATION.txt", out);
    text = slurp(f, &len);
    cr_expect(strstr(text, "  s2s tokenize --lang en --bpe source.bpe < input.txt > input.tok\n") != NULL, "%s",
              text);
    cr_expect(strstr(text, "  s2s tokenize --lang fr --detok < output.tok > output.txt\n") != NULL, "%s", text);
    free(text);
    free(f);
    model_file_free(&mf);
    free(bin_path);
    free(out);
    free(model);
    rm_rf(dir);
    free(dir);
}

/* Pre-norm, learned positions, two vocabularies and BPE codes: the final norms, the
   learned tables, both vocabularies and both codes files. */
Test(export, pre_norm_learned_positions_subwords_two_vocabularies)
{
    char *dir = tmpdir_new();
    char *data = strf("%s/data", dir), *model = strf("%s/m.s2s", dir), *out = strf("%s/ct2", dir);
    RunResult r = RUN_S2S(NULL, "prepare", "data/sample.tsv", "-o", data, "--bpe", "60");
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    r = RUN_S2S(NULL, "train", data, "-o", model, "--arch", "transformer", "--model-dim", "16", "--ff",
                          "24", "--layers", "1", "--heads", "4", "--norm", "pre", "--positions", "learned",
                          "--max-positions", "40", "--steps", "2", "--valid-every", "0", "--threads", "1",
                          "--quiet");
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    r = RUN_S2S(NULL, "export", "--ctranslate2", model, out);
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);

    ModelFile mf;
    fixture_load_file(model, &mf);
    const Model *m = &mf.model;
    int d = m->cfg.model_dim;
    Bin b;
    char *bin_path = strf("%s/model.bin", out);
    bin_read(&b, bin_path);
    expect_sorted(&b);
    expect_stack_scalars(&b, &m->cfg);
    expect_layers(&b, m);
    expect_f32(&b, "encoder/embeddings_0/weight", param(m, "src_emb.weight"), m->cfg.src_vocab, d);
    expect_f32(&b, "decoder/embeddings/weight", param(m, "tgt_emb.weight"), m->cfg.tgt_vocab, d);
    expect_f32(&b, "decoder/projection/weight", param(m, "out.proj.weight"), m->cfg.tgt_vocab, d);
    expect_f32(&b, "encoder/position_encodings/encodings", param(m, "src_pos.weight"), 40, d);
    expect_f32(&b, "decoder/position_encodings/encodings", param(m, "tgt_pos.weight"), 40, d);
    expect_f32(&b, "encoder/layer_norm/gamma", param(m, "encoder.norm.weight"), d, 0);
    expect_f32(&b, "encoder/layer_norm/beta", param(m, "encoder.norm.bias"), d, 0);
    expect_f32(&b, "decoder/layer_norm/gamma", param(m, "decoder.norm.weight"), d, 0);
    expect_f32(&b, "decoder/layer_norm/beta", param(m, "decoder.norm.bias"), d, 0);
    cr_expect_eq(b.n, b.nvar, "no aliases: %d", b.n - b.nvar);
    bin_free(&b);

    char *f = strf("%s/source_vocabulary.json", out);
    expect_vocab_json(f, mf.src);
    free(f);
    f = strf("%s/target_vocabulary.json", out);
    expect_vocab_json(f, mf.tgt);
    free(f);
    for (int s = 0; s < 2; s++) {
        Buf want = {0};
        bpe_format(mf.bpe[s], &want);
        f = strf("%s/%s", out, s ? "target.bpe" : "source.bpe");
        size_t len;
        char *text = slurp(f, &len);
        cr_expect(len == want.len && memcmp(text, want.data, len) == 0, "%s: not the model's codes", f);
        free(text);
        free(f);
        buf_free(&want);
    }
    f = strf("%s/TOKENIZATION.txt", out);
    size_t len;
    char *text = slurp(f, &len);
    cr_expect(strstr(text, "--bpe source.bpe < input.txt > input.tok\n") != NULL, "%s", text);
    free(text);
    free(f);
    model_file_free(&mf);
    free(bin_path);
    free(out);
    free(model);
    free(data);
    rm_rf(dir);
    free(dir);
}

/* A recurrent model, an ensemble, a DIR that holds files, a missing format: one line,
   a non-zero status, and nothing written. */
Test(export, refusals_leave_nothing_behind)
{
    char *dir = tmpdir_new();
    char *rnn = strf("%s/rnn.s2s", dir);
    RunResult r = RUN_S2S(NULL, "train", "data/sample.tsv", "-o", rnn, "--arch", "rnn", "--emb", "8", "--hidden",
                          "8", "--steps", "1", "--valid-every", "0", "--threads", "1", "--quiet");
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    char *tf = train_tiny(dir, "tf.s2s", NULL);
    char *out = strf("%s/out", dir);

    r = RUN_S2S(NULL, "export", "--ctranslate2", rnn, out);
    char *want = strf("s2s: %s: a recurrent model: CTranslate2 has no such model kind; only a Transformer can be "
                      "exported\n",
                      rnn);
    expect_run(&r, 1, "", want);
    free(want);
    cr_expect(!file_exists(out));

    r = RUN_S2S(NULL, "export", "--ctranslate2", tf, tf, out);
    expect_run(&r, 2, "",
               "s2s: export: 2 MODEL files: an ensemble cannot be exported, CTranslate2 has no such model kind; "
               "export one MODEL at a time\n");
    cr_expect(!file_exists(out));

    r = RUN_S2S(NULL, "export", tf, out);
    expect_run(&r, 2, "", "s2s: export: missing the format, --ctranslate2 (see 's2s export --help')\n");
    r = RUN_S2S(NULL, "export", "--ctranslate2", tf);
    expect_run(&r, 2, "", "s2s: export: expected MODEL DIR (see 's2s export --help')\n");
    cr_expect(!file_exists(out));

    /* a directory with a file in it stays as it was; so does a file named DIR */
    mkdir(out, 0777);
    char *keep = strf("%s/keep.txt", out);
    write_file(keep, "mine\n");
    char *before = dir_snapshot(dir);
    r = RUN_S2S(NULL, "export", "--ctranslate2", tf, out);
    want = strf("s2s: %s: exists and is not an empty directory; nothing written; choose another DIR\n", out);
    expect_run(&r, 1, "", want);
    free(want);
    r = RUN_S2S(NULL, "export", "--ctranslate2", tf, keep);
    want = strf("s2s: %s: exists and is not an empty directory; nothing written; choose another DIR\n", keep);
    expect_run(&r, 1, "", want);
    free(want);
    char *after = dir_snapshot(dir);
    cr_expect_str_eq(after, before);
    free(after);
    free(before);

    /* an empty directory is filled */
    unlink(keep);
    r = RUN_S2S(NULL, "export", "--ctranslate2", tf, out);
    cr_expect_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    cr_expect_eq(dir_count(out), 6);
    char *listing = dir_snapshot(dir);
    cr_expect(strstr(listing, ".tmp.") == NULL, "a temporary directory left:\n%s", listing);
    free(listing);
    free(keep);
    free(out);
    free(tf);
    free(rnn);
    rm_rf(dir);
    free(dir);
}

/* CTranslate2 itself, where a build of it is at hand ($CT2_ROOT, default bench/ct2: its
   bin/ct2-translator and lib/): it loads the export and its greedy search in float32
   gives the same translations as s2s translate --precision f32 --beam 1 on every
   source of data/sample.tsv (at most 40 tokens each: s2s's own limit, twice the source
   and 10, is not CTranslate2's; and with CTranslate2's --min_decoding_length 0, since
   by default it refuses <eos> as the first token, which s2s allows). Skipped, saying so, where there is no build. */
Test(export, ctranslate2_decodes_the_export_as_s2s_does)
{
    const char *root = getenv("CT2_ROOT") ? getenv("CT2_ROOT") : "bench/ct2";
    char *bin = strf("%s/bin/ct2-translator", root);
    if (access(bin, X_OK) != 0) {
        free(bin);
        cr_skip_test("no CTranslate2 build at %s (bin/ct2-translator; bench/README.md): not tested", root);
    }
    char *dir = tmpdir_new();
    char *model = strf("%s/m.s2s", dir), *out = strf("%s/ct2", dir);
    RunResult r = RUN_S2S(NULL, "train", "data/sample.tsv", "-o", model, "--arch", "transformer", "--model-dim",
                          "32", "--ff", "64", "--layers", "2", "--heads", "4", "--steps", "150", "--valid-every",
                          "0", "--threads", "1", "--quiet");
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    r = RUN_S2S(NULL, "export", "--ctranslate2", model, out);
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);

    /* the sources, one a line */
    size_t len;
    char *tsv = slurp("data/sample.tsv", &len);
    Buf src = {0};
    int lines = 0;
    for (char *p = tsv; *p;) {
        char *tab = strchr(p, '\t'), *nl = strchr(p, '\n');
        cr_assert(tab && nl && tab < nl);
        buf_append(&src, p, (size_t)(tab - p));
        buf_putc(&src, '\n');
        lines++;
        p = nl + 1;
    }
    char *src_path = strf("%s/src.txt", dir), *tok_path = strf("%s/src.tok", dir);
    write_file(src_path, src.data);
    char *bpe = strf("%s/source.bpe", out);
    r = RUN_S2S(src.data, "tokenize", "--lang", "en", "--bpe", bpe);
    cr_assert_eq(r.status, 0, "%s", r.err);
    write_file(tok_path, r.out);
    run_free(&r);

    r = RUN_S2S(NULL, "translate", model, "-i", src_path, "--precision", "f32", "--beam", "1", "--no-split",
                "--no-copy-numbers", "--threads", "1", "--max-len", "40");
    cr_assert_eq(r.status, 0, "%s", r.err);
    char *s2s_out = strf("%s", r.out);
    run_free(&r);
    char *libs = strf("LD_LIBRARY_PATH=%s/lib", root);
    r = RUN_PROG(NULL, "/usr/bin/env", libs, bin, "--model", out, "--src", tok_path, "--beam_size", "1",
                 "--compute_type", "float32", "--intra_threads", "1", "--batch_size", "16", "--max_decoding_length", "40",
                 "--min_decoding_length", "0");
    cr_assert_eq(r.status, 0, "ct2-translator: %s", r.err);
    RunResult d = RUN_S2S(r.out, "tokenize", "--lang", "fr", "--detok");
    run_free(&r);
    cr_assert_eq(d.status, 0, "%s", d.err);
    cr_expect_eq(count_newlines(d.out), lines);
    /* line by line: the first difference named */
    int same = 0, k = 0;
    const char *a = s2s_out, *b = d.out;
    while (*a && *b) {
        const char *ea = strchr(a, '\n'), *eb = strchr(b, '\n');
        cr_assert(ea && eb);
        if ((size_t)(ea - a) == (size_t)(eb - b) && memcmp(a, b, (size_t)(ea - a)) == 0)
            same++;
        else
            cr_expect_fail("line %d: s2s '%.*s', CTranslate2 '%.*s'", k + 1, (int)(ea - a), a, (int)(eb - b), b);
        a = ea + 1;
        b = eb + 1;
        k++;
    }
    cr_expect_eq(same, lines, "%d of %d lines the same", same, lines);
    run_free(&d);
    free(libs);
    free(s2s_out);
    free(bpe);
    free(tok_path);
    free(src_path);
    buf_free(&src);
    free(tsv);
    free(out);
    free(model);
    rm_rf(dir);
    free(dir);
    free(bin);
}
