/*
 * Parity of the C model (src/model/rnn.c, attend.c) with the PyTorch reference
 * (scripts/torch_ref.py), docs/model.md.
 *
 * Each case makes torch_ref.py write a model with random weights (init --scale 2,
 * dropout 0.3 in the file, label smoothing 0.1, vocabularies 30/40, E 16, H 12, D 20,
 * A 10, P 14 or 16 when tied), a padded batch (make-batch: 6 sentences, sources of
 * 1..9 tokens, targets of 1..8, in no particular order) and the reference's loss,
 * logits and gradients in float64
 * (parity --double: dropout off, gradients of the loss divided by the number of target
 * tokens), all in one python process. The test then loads the model file with
 * model_file_load, sorts the batch by source length as Batch requires, runs
 * model_forward_backward without dropout (the gradient of loss / ntok) in float, and
 * model_forward on a scoring Work for the logits, and
 * compares with the per-tensor rule of docs/model.md,
 *     |C - ref| <= 1e-5 * max|ref| + 1e-8   for every element,
 * applied to the loss (a tensor of one element: 1e-5 relative), to every logit
 * (padded target positions included) and to the gradient of every tensor of the C
 * layout; a gradient missing from the reference, or one the C layout lacks, fails, and
 * so does a reference gradient with max|ref| < 1e-6 (too small for the rule to see).
 * Messages name the case, the tensor, the index, the C and the reference value.
 *
 * The cases cover, besides Bahdanau attention with GRU and LSTM, 1 and 2 layers, tied
 * embeddings and a unidirectional encoder, every attention variant and bridge of
 * docs/model.md ("Attention variants and bridges"): luong-dot with K != D (the key
 * projection exists) and with K == D (no attention tensors at all), luong-general,
 * luong-concat, scaled-dot, multihead (2 heads), local-m and local-p windows of half-width
 * 2 (sources of up to 9 tokens, so the windows cut), input feeding (with luong-general,
 * and with multihead and local-p), and the zero and attn-pool bridges with GRU and LSTM.
 * The seeds of the local-p cases keep every p - Dw and p + Dw (padded target steps
 * included) at least 1e-2 from an integer, so that float32 and float64 rounding cannot
 * move a window bound.
 *
 * Without torch (the interpreter in $PYTHON, default /usr/bin/python3, cannot import
 * it) every case is reported as skipped, never as passed. Run
 *     build/release/s2s-tests --verbose --filter parity/\*
 * to see each case's largest differences.
 */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/err.h"
#include "base/file.h"
#include "base/safetensors.h"
#include "helpers.h"
#include "model/file.h"
#include "model/model.h"

#define PARITY_RTOL 1e-5
#define PARITY_ATOL 1e-8

/* Vocabulary sizes and batch shape (make-batch's B, S, T). */
#define VS 30
#define VT 40
/* The target vocabulary of the case: VT, or VS for one vocabulary (share_embeddings). */
static int vt_size = VT;
#define NB 6
#define NS 9
#define NT 8
/* torch_ref.py init --scale: weights twice PyTorch's default initialisation, so that
   no gradient is near zero (at the default, those of attention.query.weight and
   attention.key.bias can be ~1e-7, only ten times the absolute tolerance). */
#define INIT_SCALE "2"

/* Sizes shared by the cases: E, H, D, A (and P, below) all differ. */
#define SIZES "\"emb\": 16, \"hidden\": 12, \"dec_hidden\": 20, \"attn\": 10, "
/* A unidirectional encoder with H == D, so that K == D. */
#define SIZES_K_EQ_D "\"emb\": 16, \"hidden\": 20, \"dec_hidden\": 20, \"attn\": 10, "
#define OPTS "\"dropout\": 0.3, \"label_smoothing\": 0.1"

/* One python process per case: init, make-batch, parity --double through torch_ref's
   own command line (main(argv)), exit 77 when torch cannot be imported.
   argv: DIR CONFIG SEED SCALE VS VT B S T. */
static const char DRIVER[] =
    "import sys\n"
    "try:\n"
    "    import torch  # noqa: F401\n"
    "except ImportError:\n"
    "    sys.exit(77)\n"
    "sys.path.insert(0, 'scripts')\n"
    "import torch_ref\n"
    "d, cfg, seed, scale, vs, vt, nb, ns, nt = sys.argv[1:]\n"
    "m, b, o = (d + '/' + n for n in ('model.safetensors', 'batch.safetensors', 'ref.safetensors'))\n"
    "for argv in (['init', '--config', cfg, '--src-vocab', vs, '--tgt-vocab', vt, '--seed', seed,\n"
    "              '--scale', scale, '-o', m],\n"
    "             ['make-batch', '--src-vocab', vs, '--tgt-vocab', vt, '--batch', nb, '--src-len', ns,\n"
    "              '--tgt-len', nt, '--seed', seed, '-o', b],\n"
    "             ['parity', '--double', m, b, o]):\n"
    "    rc = torch_ref.main(argv)\n"
    "    if rc:\n"
    "        sys.exit(rc)\n";

/* Runs the driver; returns its exit status (127: could not be started), its stdout and
   stderr in *log. */
static int run_driver(const char *dir, const char *config, int seed, const char *scale, char **log)
{
    char *log_path = path_join(dir, "python.log");
    char *seed_s = strf("%d", seed), *vs = strf("%d", VS), *vt = strf("%d", vt_size), *nb = strf("%d", NB),
         *ns = strf("%d", NS), *nt = strf("%d", NT);
    const char *py = python_bin();
    fflush(NULL);
    pid_t pid = fork();
    cr_assert(pid >= 0, "fork failed");
    if (pid == 0) {
        int fo = open(log_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int fi = open("/dev/null", O_RDONLY);
        if (fo < 0 || fi < 0)
            _exit(126);
        dup2(fi, 0);
        dup2(fo, 1);
        dup2(fo, 2);
        execl(py, py, "-c", DRIVER, dir, config, seed_s, scale, vs, vt, nb, ns, nt, (char *)NULL);
        _exit(127);
    }
    int st = 0;
    cr_assert(waitpid(pid, &st, 0) == pid, "waitpid failed");
    *log = slurp(log_path, NULL);
    if (!*log)
        *log = strdup("");
    free(log_path);
    free(seed_s);
    free(vs);
    free(vt);
    free(nb);
    free(ns);
    free(nt);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* "[i, j, k]" of flat index k in a row-major tensor of the given shape. */
static void format_index(char *out, size_t cap, size_t flat, const int64_t *shape, int ndim)
{
    size_t idx[ST_MAX_DIMS];
    for (int d = ndim - 1; d >= 0; d--) {
        idx[d] = flat % (size_t)shape[d];
        flat /= (size_t)shape[d];
    }
    size_t n = (size_t)snprintf(out, cap, "[");
    for (int d = 0; d < ndim && n < cap; d++)
        n += (size_t)snprintf(out + n, cap - n, "%s%zu", d ? ", " : "", idx[d]);
    if (n < cap)
        snprintf(out + n, cap - n, "]");
}

/* How close one tensor came to its tolerance. */
typedef struct Diff {
    double diff;  /* max|C - ref| */
    double scale; /* max|ref| */
    double used;  /* diff / tolerance */
} Diff;

/* Checks got (C, float, in ref's layout) against ref (float64) with the per-tensor rule. */
static Diff compare(const char *tag, const char *what, const real *got, const StTensor *ref)
{
    const double *r = ref->data;
    size_t n = (size_t)st_numel(ref);
    double scale = 0, worst = -1;
    size_t wi = 0;
    for (size_t i = 0; i < n; i++) {
        if (fabs(r[i]) > scale)
            scale = fabs(r[i]);
        double d = fabs((double)got[i] - r[i]);
        if (!(d <= worst)) { /* NaN counts as the worst */
            worst = d;
            wi = i;
        }
    }
    double tol = PARITY_RTOL * scale + PARITY_ATOL;
    char idx[96];
    format_index(idx, sizeof idx, wi, ref->shape, ref->ndim);
    cr_expect(worst <= tol, "%s: %s%s: C %.9g, reference %.9g (|diff| %.3g > %.3g = 1e-5*max|ref| + 1e-8)",
              tag, what, idx, (double)got[wi], r[wi], worst, tol);
    return (Diff){worst, scale, worst / tol};
}

static const StTensor *expect_tensor(const StFile *f, const char *tag, const char *name, StDtype dt,
                                     int ndim, const int64_t *shape)
{
    Err e;
    const StTensor *t = st_expect(f, name, dt, ndim, shape, &e);
    cr_assert(t != NULL, "%s: %s", tag, e.msg);
    return t;
}

static void run_case_scaled(const char *tag, const char *config, int seed, const char *scale)
{
    char *dir = tmpdir_new();
    char *log = NULL;
    int rc = run_driver(dir, config, seed, scale, &log);
    if (rc == 77 || rc == 127) {
        rm_rf(dir);
        free(dir);
        free(log);
        cr_skip_test("parity test not run: %s %s", python_bin(),
                     rc == 77 ? "cannot import torch" : "cannot be started");
    }
    cr_assert_eq(rc, 0, "%s: torch_ref.py failed (exit %d):\n%s", tag, rc, log);
    free(log);

    char *mpath = path_join(dir, "model.safetensors"), *bpath = path_join(dir, "batch.safetensors"),
         *rpath = path_join(dir, "ref.safetensors");
    Err e;
    ModelFile mf;
    cr_assert(model_file_load(&mf, mpath, true, &e) == 0, "%s: %s", tag, e.msg);
    Model *m = &mf.model;
    const ModelConfig *c = &m->cfg;
    cr_assert(c->src_vocab == VS && c->tgt_vocab == vt_size && c->dropout > 0,
              "%s: model has vocabularies %d/%d, dropout %g", tag, c->src_vocab, c->tgt_vocab,
              (double)c->dropout);

    /* The batch: int64, time-major, columns in make-batch's order. */
    StFile *bf, *rf;
    cr_assert(st_load(&bf, bpath, NULL, &e) == 0, "%s: %s", tag, e.msg);
    const StTensor *src = st_tensor(bf, "src"), *tin = st_tensor(bf, "tgt_in");
    cr_assert(src && src->ndim == 2 && tin && tin->ndim == 2, "%s: batch lacks src (S,B) or tgt_in (T,B)", tag);
    int S = (int)src->shape[0], B = (int)src->shape[1], T = (int)tin->shape[0];
    cr_assert(S == NS && B == NB && T == NT, "%s: batch is S=%d B=%d T=%d", tag, S, B, T);
    int64_t sh_sb[2] = {S, B}, sh_b[1] = {B}, sh_tb[2] = {T, B};
    const int64_t *bsrc = expect_tensor(bf, tag, "src", ST_I64, 2, sh_sb)->data;
    const int64_t *blen = expect_tensor(bf, tag, "src_len", ST_I64, 1, sh_b)->data;
    const int64_t *btin = expect_tensor(bf, tag, "tgt_in", ST_I64, 2, sh_tb)->data;
    const int64_t *btout = expect_tensor(bf, tag, "tgt_out", ST_I64, 2, sh_tb)->data;

    /* Batch wants columns sorted by source length, descending: row r of the C batch is
       column perm[r] of the file (stable, so equal lengths keep their order). */
    int perm[NB];
    for (int r = 0; r < B; r++) {
        int j = r;
        while (j > 0 && blen[perm[j - 1]] < blen[r]) {
            perm[j] = perm[j - 1];
            j--;
        }
        perm[j] = r;
    }
    int isrc[NS * NB], ilen[NB], itin[NT * NB], itout[NT * NB];
    long ntok = 0;
    bool sorted_in_file = true, padded = false;
    for (int r = 0; r < B; r++) {
        int o = perm[r];
        sorted_in_file &= o == r;
        cr_assert(blen[o] >= 1 && blen[o] <= S, "%s: src_len[%d] = %lld", tag, o, (long long)blen[o]);
        ilen[r] = (int)blen[o];
        for (int s = 0; s < S; s++) {
            cr_assert(bsrc[s * B + o] >= 0 && bsrc[s * B + o] < VS, "%s: src id out of range", tag);
            isrc[s * B + r] = (int)bsrc[s * B + o];
        }
        for (int t = 0; t < T; t++) {
            cr_assert(btin[t * B + o] >= 0 && btin[t * B + o] < vt_size && btout[t * B + o] >= 0 &&
                      btout[t * B + o] < vt_size, "%s: target id out of range", tag);
            itin[t * B + r] = (int)btin[t * B + o];
            itout[t * B + r] = (int)btout[t * B + o];
            ntok += itout[t * B + r] != 0;
            padded |= itout[t * B + r] == 0;
        }
    }
    /* The batch exercises what it should: padding on both sides, a reordering. */
    cr_assert(ilen[0] == S && ilen[B - 1] == 1 && padded && !sorted_in_file,
              "%s: batch lacks padding or is already sorted", tag);
    Batch b = {.B = B, .S = S, .T = T, .src = isrc, .src_len = ilen, .tgt_in = itin, .tgt_out = itout,
               .ntok = ntok};

    /* C: forward without dropout, backward of the loss / ntok; the logits from a
       scoring Work, whose loss is the same number. */
    Work *w = work_new(m, B, S, T, WORK_TRAIN);
    double loss = model_forward_backward(m, w, &b, NULL) / (double)ntok;
    Work *ws = work_new(m, B, S, T, WORK_SCORE);
    double score_loss = model_forward(m, ws, &b, NULL) / (double)ntok;
    cr_expect(score_loss == loss, "%s: scoring loss %.17g, training loss %.17g", tag, score_loss, loss);

    /* The reference: float64 loss (1), logits (T,B,Vt) in the file's column order and
       grad.NAME for every parameter. */
    cr_assert(st_load(&rf, rpath, NULL, &e) == 0, "%s: %s", tag, e.msg);
    const char *dt = st_meta(rf, "s2s.parity.dtype"), *tok = st_meta(rf, "s2s.parity.tokens");
    cr_assert(dt && strcmp(dt, "float64") == 0, "%s: reference dtype %s", tag, dt ? dt : "(none)");
    cr_assert(tok && strtol(tok, NULL, 10) == ntok, "%s: reference counts %s target tokens, C %ld", tag,
              tok ? tok : "(none)", ntok);

    int64_t sh1[1] = {1}, sh_tbv[3] = {T, B, c->tgt_vocab};
    const StTensor *rloss = expect_tensor(rf, tag, "loss", ST_F64, 1, sh1);
    double rl = *(const double *)rloss->data;
    double loss_rel = fabs(loss - rl) / fabs(rl);
    cr_expect(fabs(loss - rl) <= PARITY_RTOL * fabs(rl) + PARITY_ATOL,
              "%s: loss: C %.12g, reference %.12g (relative error %.3g > 1e-5)", tag, loss, rl, loss_rel);

    const StTensor *rlog = expect_tensor(rf, tag, "logits", ST_F64, 3, sh_tbv);
    size_t V = (size_t)c->tgt_vocab;
    const real *cl = work_logits(ws);
    real *logits = calloc((size_t)NT * NB * V, sizeof(real));
    for (int t = 0; t < T; t++)
        for (int r = 0; r < B; r++)
            memcpy(logits + ((size_t)t * B + perm[r]) * V, cl + ((size_t)t * B + r) * V, V * sizeof(real));
    Diff dl = compare(tag, "logits", logits, rlog);

    Diff worst = {0, 0, -1};
    char worst_name[PARAM_NAME_MAX + 8] = "";
    double smallest = INFINITY;
    const ParamLayout *l = &m->layout;
    int found = 0;
    for (int i = 0; i < l->n; i++) {
        const ParamInfo *p = &l->info[i];
        char name[PARAM_NAME_MAX + 8];
        snprintf(name, sizeof name, "grad.%s", p->name);
        int64_t shape[2] = {p->shape[0], p->shape[1]};
        const StTensor *g = st_expect(rf, name, ST_F64, p->ndim, shape, &e);
        cr_expect(g != NULL, "%s: reference: %s", tag, e.msg);
        if (!g)
            continue;
        found++;
        Diff d = compare(tag, name, m->grads + p->offset, g);
        /* A gradient near zero would pass on the absolute tolerance alone. */
        cr_expect(d.scale >= 100 * PARITY_ATOL, "%s: %s: max|ref| %.3g is too small to test against", tag,
                  name, d.scale);
        if (d.scale < smallest)
            smallest = d.scale;
        if (d.used > worst.used) {
            worst = d;
            snprintf(worst_name, sizeof worst_name, "%s", name);
        }
    }
    /* Every reference tensor is the loss, the logits or a gradient the C layout has. */
    for (size_t i = 0; i < st_count(rf); i++) {
        const char *name = st_at(rf, i)->name;
        bool known = strcmp(name, "loss") == 0 || strcmp(name, "logits") == 0 ||
                     (strncmp(name, "grad.", 5) == 0 && param_find(l, name + 5) >= 0);
        cr_expect(known, "%s: reference tensor '%s' has no counterpart in the C model", tag, name);
    }
    cr_expect_eq(found, l->n, "%s: %d of %d gradients compared", tag, found, l->n);
    cr_log_info("parity %s: loss %.9g, relative error %.2e | logits max|diff| %.2e, max|ref| %.2e, "
                "%.0f%% of tolerance | %d gradients, closest to tolerance %s: max|diff| %.2e, "
                "max|ref| %.2e, %.0f%% of tolerance; smallest gradient max|ref| %.2e",
                tag, loss, loss_rel, dl.diff, dl.scale, 100 * dl.used, found, worst_name, worst.diff,
                worst.scale, 100 * worst.used, smallest);
    free(logits);
    work_free(w);
    work_free(ws);
    st_close(rf);
    st_close(bf);
    model_file_free(&mf);
    free(mpath);
    free(bpath);
    free(rpath);
    rm_rf(dir);
    free(dir);
}

static void run_case(const char *tag, const char *config, int seed)
{
    run_case_scaled(tag, config, seed, INIT_SCALE);
}

TestSuite(parity);

Test(parity, gru_1_layer)
{
    run_case("gru L1 bidir", "{\"cell\": \"gru\", \"layers\": 1, \"bidir\": true, " SIZES "\"deep_out\": 14, " OPTS "}", 11);
}

Test(parity, gru_2_layers)
{
    run_case("gru L2 bidir", "{\"cell\": \"gru\", \"layers\": 2, \"bidir\": true, " SIZES "\"deep_out\": 14, " OPTS "}", 12);
}

Test(parity, lstm_1_layer)
{
    run_case("lstm L1 bidir", "{\"cell\": \"lstm\", \"layers\": 1, \"bidir\": true, " SIZES "\"deep_out\": 14, " OPTS "}", 13);
}

Test(parity, lstm_2_layers)
{
    run_case("lstm L2 bidir", "{\"cell\": \"lstm\", \"layers\": 2, \"bidir\": true, " SIZES "\"deep_out\": 14, " OPTS "}", 14);
}

Test(parity, gru_2_layers_tied_embeddings)
{
    run_case("gru L2 bidir tied", "{\"cell\": \"gru\", \"layers\": 2, \"bidir\": true, " SIZES "\"deep_out\": 16, "
             "\"tie_embeddings\": true, " OPTS "}", 15);
}

Test(parity, lstm_2_layers_unidirectional)
{
    run_case("lstm L2 unidir", "{\"cell\": \"lstm\", \"layers\": 2, \"bidir\": false, " SIZES "\"deep_out\": 14, " OPTS "}", 16);
}

/* Attention variants and bridges (docs/model.md). The variant keys follow "attention" as
   in s2s.config. */
#define GRU1 "\"cell\": \"gru\", \"layers\": 1, \"bidir\": true, " SIZES
#define GRU2 "\"cell\": \"gru\", \"layers\": 2, \"bidir\": true, " SIZES
#define LSTM1 "\"cell\": \"lstm\", \"layers\": 1, \"bidir\": true, " SIZES
#define LSTM2 "\"cell\": \"lstm\", \"layers\": 2, \"bidir\": true, " SIZES
#define P14 "\"deep_out\": 14, " OPTS "}"

Test(parity, luong_dot_bidirectional)
{
    /* K = 24 != D = 20: keys = attention.key(h). */
    run_case("gru L1 bidir luong-dot", "{" GRU1 "\"attention\": \"luong-dot\", " P14, 17);
}

Test(parity, luong_dot_unidirectional_k_equals_d)
{
    /* K = H = 20 = D: keys = h, no attention tensor. */
    run_case("lstm L2 unidir luong-dot K=D", "{\"cell\": \"lstm\", \"layers\": 2, \"bidir\": false, " SIZES_K_EQ_D
             "\"attention\": \"luong-dot\", " P14, 18);
}

Test(parity, luong_general)
{
    run_case("lstm L1 bidir luong-general", "{" LSTM1 "\"attention\": \"luong-general\", " P14, 19);
}

Test(parity, luong_concat)
{
    run_case("gru L2 bidir luong-concat", "{" GRU2 "\"attention\": \"luong-concat\", " P14, 20);
}

Test(parity, scaled_dot)
{
    run_case("lstm L1 bidir scaled-dot", "{" LSTM1 "\"attention\": \"scaled-dot\", " P14, 21);
}

Test(parity, multihead_2_heads)
{
    run_case("gru L1 bidir multihead/2", "{" GRU1 "\"attention\": \"multihead\", \"heads\": 2, " P14, 22);
}

Test(parity, local_m_window_2)
{
    run_case("gru L1 bidir luong-general local-m/2", "{" GRU1 "\"attention\": \"luong-general\", "
             "\"local\": \"m\", \"window\": 2, " P14, 23);
}

Test(parity, local_p_window_2)
{
    run_case("lstm L1 bidir luong-concat local-p/2", "{" LSTM1 "\"attention\": \"luong-concat\", "
             "\"local\": \"p\", \"window\": 2, " P14, 24);
}

Test(parity, input_feed_luong_general)
{
    run_case("gru L2 bidir luong-general input-feed", "{" GRU2 "\"attention\": \"luong-general\", "
             "\"input_feed\": true, " P14, 25);
}

Test(parity, input_feed_multihead_local_p)
{
    run_case("lstm L1 bidir multihead/2 local-p/2 input-feed", "{" LSTM1 "\"attention\": \"multihead\", "
             "\"heads\": 2, \"local\": \"p\", \"window\": 2, \"input_feed\": true, " P14, 31);
}

Test(parity, bridge_zero_gru)
{
    run_case("gru L1 bidir bahdanau zero bridge", "{" GRU1 "\"attention\": \"bahdanau\", \"bridge\": \"zero\", "
             P14, 27);
}

Test(parity, bridge_zero_lstm)
{
    run_case("lstm L2 unidir luong-general zero bridge", "{\"cell\": \"lstm\", \"layers\": 2, \"bidir\": false, "
             SIZES "\"attention\": \"luong-general\", \"bridge\": \"zero\", " P14, 28);
}

Test(parity, bridge_attn_pool_gru)
{
    run_case("gru L1 bidir luong-concat attn-pool bridge", "{" GRU1 "\"attention\": \"luong-concat\", "
             "\"bridge\": \"attn-pool\", " P14, 29);
}

Test(parity, bridge_attn_pool_lstm)
{
    run_case("lstm L2 bidir bahdanau attn-pool bridge", "{" LSTM2 "\"attention\": \"bahdanau\", "
             "\"bridge\": \"attn-pool\", " P14, 38);
}

/* The Transformer (docs/model.md "The Transformer"), built by the reference from
   nn.TransformerEncoderLayer / nn.TransformerDecoderLayer: d 16, 2 heads, ff 24; post-
   and pre-norm, 1 and 2 layers, tied and untied output, sinusoidal and learned
   positions (12 rows: sources of 9, targets of 8). These start from nn.Transformer's own
   initialisation (--scale 1): every gradient is already sizeable there (the smallest
   tensor's max|ref| is above 1e-3), while at twice it the softmaxes turn so sharp that
   PyTorch's own float32 gradients miss float64 by up to 2.7 times this rule. */
#define TF_SIZES "\"arch\": \"transformer\", \"model_dim\": 16, \"heads\": 2, \"ff\": 24, "
#define TF_LEARNED "\"positions\": \"learned\", \"max_positions\": 12, "

Test(parity, transformer_post_norm_1_layer)
{
    run_case_scaled("transformer post L1", "{" TF_SIZES "\"layers\": 1, \"norm\": \"post\", " OPTS "}", 41, "1");
}

Test(parity, transformer_pre_norm_1_layer)
{
    run_case_scaled("transformer pre L1", "{" TF_SIZES "\"layers\": 1, \"norm\": \"pre\", " OPTS "}", 42, "1");
}

Test(parity, transformer_post_norm_2_layers_tied_learned_positions)
{
    run_case_scaled("transformer post L2 tied learned",
             "{" TF_SIZES TF_LEARNED "\"layers\": 2, \"norm\": \"post\", \"tie_embeddings\": true, " OPTS "}", 43, "1");
}

Test(parity, transformer_pre_norm_2_layers_tied)
{
    run_case_scaled("transformer pre L2 tied", "{" TF_SIZES "\"layers\": 2, \"norm\": \"pre\", \"tie_embeddings\": true, " OPTS "}", 44, "1");
}

/* One embedding table for both sides and the output (three-way tying): the source's and
   the target's gradients meet in src_emb.weight. */
Test(parity, transformer_post_norm_2_layers_shared_and_tied)
{
    vt_size = VS;
    run_case_scaled("transformer post L2 shared tied",
                    "{" TF_SIZES "\"layers\": 2, \"norm\": \"post\", \"tie_embeddings\": true, "
                    "\"share_embeddings\": true, " OPTS "}", 46, "1");
}

Test(parity, transformer_pre_norm_2_layers_learned_positions)
{
    run_case_scaled("transformer pre L2 learned", "{" TF_SIZES TF_LEARNED "\"layers\": 2, \"norm\": \"pre\", " OPTS "}", 45, "1");
}
