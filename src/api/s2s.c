/* The library's public interface (include/s2s.h) over the decoding, scoring and text
   modules: the same functions `s2s translate`, `s2s score`, `s2s tokenize` and
   `s2s info` call, with errors returned instead of printed. */
#include "s2s.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/err.h"
#include "decode/align.h"
#include "decode/constraints.h"
#include "decode/evaluate.h"
#include "decode/translate.h"
#include "eval/bleu.h"
#include "eval/chrf.h"
#include "eval/scores.h"
#include "model/ct2_export.h"
#include "model/ensemble.h"
#include "model/file.h"
#include "model/match.h"
#include "nn/linalg.h"
#include "nn/quant.h"
#include "text/bpe.h"
#include "text/corpus.h"
#include "text/lang.h"
#include "text/tokenize.h"

_Static_assert(S2S_MAX_LAYERS == TF_MAX_LAYERS, "s2s.h states the Transformer's most layers");

struct s2s_translator {
    int n;             /* model files */
    ModelFile *files;  /* (n) */
    Model *members;    /* (n) each file's model, kept for freeing */
    ModelFile use;     /* what decoding takes: files[0] with the ensemble's model if n > 1 */
    Glossary *glossary;
    s2s_translator_options opts; /* glossary: NULL (the file was read at load) */
    s2s_model_info info;
    char *config_json;
    char **paths;      /* (n) the files as given, for reports */
};

struct s2s_result {
    TranslateResult r;
    bool attention;
};

const char *s2s_version(void) { return S2S_VERSION_STRING; }

/* Sets *err (when not NULL) to code and e's message; returns -1. */
static int fail(s2s_error *err, int code, const Err *e)
{
    if (err) {
        err->code = code;
        snprintf(err->message, sizeof err->message, "%s", e->msg);
    }
    return -1;
}

static int fail_msg(s2s_error *err, int code, const char *msg)
{
    Err e;
    snprintf(e.msg, sizeof e.msg, "%s", msg);
    return fail(err, code, &e);
}

static void ok(s2s_error *err)
{
    if (err) {
        err->code = S2S_OK;
        err->message[0] = '\0';
    }
}

s2s_translator_options s2s_translator_options_default(void)
{
    return (s2s_translator_options){
        .beam = 5,
        .nbest = 1,
        .length_penalty = 1.0,
        .max_len = 0,
        .batch = 64,
        .split = 1,
        .copy_numbers = 1,
        .replace_unk = 0,
        .constraints = 0,
        .attention = 0,
        .attention_layer = 0,
        .precision = S2S_PRECISION_INT8,
        .threads = 0,
        .glossary = NULL,
        .glossary_ignore_case = 0,
    };
}

/* The decoding options' bounds, as `s2s translate` checks them (commands.h). */
static int check_options(const s2s_translator_options *o, s2s_error *err)
{
    char m[200] = "";
    if (o->beam < 1 || o->beam > 100)
        snprintf(m, sizeof m, "beam must be in 1..100, not %d", o->beam);
    else if (o->nbest < 1 || o->nbest > o->beam)
        snprintf(m, sizeof m, "nbest must be in 1..beam (%d), not %d", o->beam, o->nbest);
    else if (!(o->length_penalty >= 0 && o->length_penalty <= 10))
        snprintf(m, sizeof m, "length_penalty must be in 0..10, not %g", o->length_penalty);
    else if (o->max_len < 0 || o->max_len > 10000)
        snprintf(m, sizeof m, "max_len must be in 0..10000, not %d", o->max_len);
    else if (o->batch < 1 || o->batch > 100000)
        snprintf(m, sizeof m, "batch must be in 1..100000, not %d", o->batch);
    else if (o->threads < 0 || o->threads > 1024)
        snprintf(m, sizeof m, "threads must be in 0..1024, not %d", o->threads);
    else if ((unsigned)o->precision > S2S_PRECISION_F32)
        snprintf(m, sizeof m, "precision must be S2S_PRECISION_INT8, _BF16 or _F32, not %d", (int)o->precision);
    else if (o->attention_layer < 0)
        snprintf(m, sizeof m, "attention_layer must be >= 0, not %d", o->attention_layer);
    else if (o->glossary_ignore_case && !o->glossary)
        snprintf(m, sizeof m, "glossary_ignore_case needs a glossary");
    if (m[0])
        return fail_msg(err, S2S_ERR_ARGUMENT, m);
    return 0;
}

static Precision precision_of(s2s_precision p)
{
    return p == S2S_PRECISION_F32 ? PREC_F32 : p == S2S_PRECISION_BF16 ? PREC_BF16 : PREC_INT8;
}

static void fill_info(s2s_translator *tr)
{
    const ModelFile *mf = &tr->files[0];
    const Model *m = &mf->model;
    Buf cj = {0};
    model_config_json(&m->cfg, &mf->text, &cj);
    tr->config_json = buf_take(&cj);
    tr->info = (s2s_model_info){
        .arch = arch_names[m->cfg.arch],
        .direction = mf->text.dir.name,
        .source_lang = mf->text.dir.src.code,
        .target_lang = mf->text.dir.tgt.code,
        .keep_case = mf->text.keep_case,
        .source_vocab = (long long)vocab_size(mf->src),
        .target_vocab = (long long)vocab_size(mf->tgt),
        .source_merges = mf->bpe[0] ? (long long)bpe_merges(mf->bpe[0]) : 0,
        .target_merges = mf->bpe[1] ? (long long)bpe_merges(mf->bpe[1]) : 0,
        .parameters = (long long)m->layout.total,
        .models = tr->n,
        .config_json = tr->config_json,
        .history_json = mf->history,
        .attention_layers = model_attention_layers(&tr->use.model),
    };
    tr->info.attention_heads = tr->info.attention_layers ? m->cfg.heads : 0;
    tr->info.tensors = m->layout.n;
}

s2s_translator *s2s_translator_load(const char *const *paths, int npaths,
                                    const s2s_translator_options *opts, s2s_error *err)
{
    s2s_translator_options o = opts ? *opts : s2s_translator_options_default();
    if (!paths || npaths < 1) {
        fail_msg(err, S2S_ERR_ARGUMENT, "no model file given");
        return NULL;
    }
    for (int i = 0; i < npaths; i++)
        if (!paths[i]) {
            fail_msg(err, S2S_ERR_ARGUMENT, "model path is NULL");
            return NULL;
        }
    if (check_options(&o, err) != 0)
        return NULL;
    Err e;
    s2s_translator *tr = XCNEW(s2s_translator, 1);
    tr->files = XCNEW(ModelFile, npaths);
    tr->members = XCNEW(Model, npaths);
    for (int i = 0; i < npaths; i++) {
        /* model_file_load leaves nothing to free on failure */
        int rc = model_file_load(&tr->files[i], paths[i], false, &e);
        if (rc == 0) {
            tr->members[i] = tr->files[i].model;
            tr->n = i + 1;
        }
        if (rc == 0 && i)
            rc = model_match_for_ensemble(&tr->files[0], paths[0], &tr->files[i], paths[i], &e);
        if (rc != 0) {
            s2s_translator_free(tr);
            fail(err, S2S_ERR_MODEL, &e);
            return NULL;
        }
        model_set_precision(&tr->files[i].model, precision_of(o.precision));
        tr->members[i] = tr->files[i].model;
    }
    tr->paths = XNEW(char *, npaths);
    for (int i = 0; i < npaths; i++)
        tr->paths[i] = xstrdup(paths[i]);
    tr->use = tr->files[0];
    if (npaths > 1)
        model_ensemble_init(&tr->use.model, tr->members, npaths);

    int layers = model_attention_layers(&tr->use.model);
    if (o.attention_layer && !layers) {
        snprintf(e.msg, sizeof e.msg, "attention_layer %d needs a Transformer model (%s is %s)",
                 o.attention_layer, paths[0], arch_names[tr->files[0].model.cfg.arch]);
        s2s_translator_free(tr);
        fail(err, S2S_ERR_ARGUMENT, &e);
        return NULL;
    }
    if (o.attention_layer > layers) {
        snprintf(e.msg, sizeof e.msg, "attention_layer %d: %s has %d decoder layers", o.attention_layer,
                 paths[0], layers);
        s2s_translator_free(tr);
        fail(err, S2S_ERR_ARGUMENT, &e);
        return NULL;
    }
    if (o.glossary) {
        TokOpts so = text_src_opts(&tr->use.text);
        if (glossary_load(o.glossary, &so, o.glossary_ignore_case, &tr->glossary, &e) != 0) {
            s2s_translator_free(tr);
            fail(err, S2S_ERR_MODEL, &e);
            return NULL;
        }
    }
    /* the glossary is read: the options a call starts from hold neither its path nor
       its case setting, which check_options would otherwise find without a path */
    o.glossary = NULL;
    o.glossary_ignore_case = 0;
    tr->opts = o;
    fill_info(tr);
    /* process-wide (s2s.h "Threads"); the int8 kernel chosen now, not by racing calls */
    nn_set_threads(o.threads);
    nn_q8_kernel();
    ok(err);
    return tr;
}

void s2s_translator_free(s2s_translator *tr)
{
    if (!tr)
        return;
    if (tr->use.model.ops && tr->n > 1)
        model_ensemble_free(&tr->use.model);
    for (int i = 0; i < tr->n; i++) {
        tr->files[i].model = tr->members[i];
        model_file_free(&tr->files[i]);
    }
    glossary_free(tr->glossary);
    for (int i = 0; tr->paths && i < tr->n; i++)
        free(tr->paths[i]);
    free(tr->paths);
    free(tr->files);
    free(tr->members);
    free(tr->config_json);
    free(tr);
}

const s2s_model_info *s2s_translator_info(const s2s_translator *tr) { return tr ? &tr->info : NULL; }

int s2s_translator_tensor(const s2s_translator *tr, int i, s2s_tensor *out)
{
    const ParamLayout *l = tr ? &tr->files[0].model.layout : NULL;
    if (!l || !out || i < 0 || i >= l->n)
        return -1;
    const ParamInfo *p = &l->info[i];
    *out = (s2s_tensor){.name = p->name, .ndim = p->ndim, .shape = {p->shape[0], p->ndim > 1 ? p->shape[1] : 0},
                        .size = (long long)p->size};
    return 0;
}

/* The per-call options: the translator's, or o's decoding fields. */
static s2s_translator_options call_options(const s2s_translator *tr, const s2s_translator_options *o)
{
    s2s_translator_options c = tr->opts;
    if (!o)
        return c;
    c.beam = o->beam;
    c.nbest = o->nbest;
    c.length_penalty = o->length_penalty;
    c.max_len = o->max_len;
    c.batch = o->batch;
    c.split = o->split;
    c.copy_numbers = o->copy_numbers;
    c.replace_unk = o->replace_unk;
    c.constraints = o->constraints;
    c.attention = o->attention;
    return c;
}

/* The decoder's options of o. */
static TranslateOpts translate_opts(const s2s_translator_options *o)
{
    return (TranslateOpts){.batch = o->batch, .max_len = o->max_len, .beam = o->beam, .nbest = o->nbest,
                           .alpha = o->length_penalty, .replace_unk = o->replace_unk != 0,
                           .attention = o->attention != 0, .split = o->split != 0,
                           .copy_numbers = o->copy_numbers != 0, .attention_layer = o->attention_layer};
}

/* TranslateCons of one text: copies of c's strings (c NULL or empty: none). */
static void cons_copy(const s2s_constraints *c, TranslateCons *out)
{
    *out = (TranslateCons){0};
    int nr = c && c->require ? c->nrequire : 0, na = c && c->avoid ? c->navoid : 0;
    out->phrases = XNEW(char *, nr > 0 ? nr : 1);
    out->avoid = XNEW(char *, na > 0 ? na : 1);
    for (int k = 0; k < nr; k++)
        out->phrases[out->n++] = xstrdup(c->require[k]);
    for (int k = 0; k < na; k++)
        out->avoid[out->navoid++] = xstrdup(c->avoid[k]);
    out->prefix = c && c->prefix ? xstrdup(c->prefix) : NULL;
}

/* One text as decoding takes it: with json (the constraints option) read as a JSON
   object into its text and constraints, else copied with the constraints given (NULL:
   none); the glossary's terms added. 0, or -1 with ce set (the JSON's fault). */
static int text_cons(const s2s_translator *tr, bool json, const s2s_constraints *given, const char *text,
                     size_t len, char **own, size_t *own_len, TranslateCons *c, Err *ce)
{
    if (!json) {
        *own = xstrndup(text, len);
        *own_len = len;
        if (given)
            cons_copy(given, c);
    } else if (cons_parse_line(text, len, own, own_len, c, ce) != 0) {
        return -1;
    }
    if (tr->glossary)
        glossary_apply(tr->glossary, *own, *own_len, c);
    return 0;
}

/* A text's given constraints, checked: 0, or -1 with m set. */
static int check_cons(const s2s_constraints *c, const char *name, long line, char *m, size_t size)
{
    if (c->nrequire < 0 || c->navoid < 0 || (c->nrequire > 0 && !c->require) || (c->navoid > 0 && !c->avoid)) {
        snprintf(m, size, "%.60s:%ld: constraints: a count below 0, or strings missing", name, line);
        return -1;
    }
    for (int k = 0; k < c->nrequire; k++)
        if (!c->require[k]) {
            snprintf(m, size, "%.60s:%ld: constraint %d is NULL", name, line, k + 1);
            return -1;
        }
    for (int k = 0; k < c->navoid; k++)
        if (!c->avoid[k]) {
            snprintf(m, size, "%.60s:%ld: avoided phrase %d is NULL", name, line, k + 1);
            return -1;
        }
    return 0;
}

/* The translations of b's texts. */
static s2s_result *translate(const s2s_translator *tr, const s2s_batch *b, const s2s_translator_options *opts,
                             s2s_error *err)
{
    const char *const *texts = b->texts;
    const s2s_constraints *given = b->constraints;
    const int n = b->n;
    if (!tr || n < 0 || (n > 0 && !texts)) {
        fail_msg(err, S2S_ERR_ARGUMENT, !tr ? "no translator" : "no texts");
        return NULL;
    }
    if (b->first_line < 0 || b->attention_head < 0) {
        fail_msg(err, S2S_ERR_ARGUMENT, b->first_line < 0 ? "first_line must be >= 0" : "attention_head must be >= 0");
        return NULL;
    }
    const char *name = b->name ? b->name : "text";
    const long first = b->first_line > 0 ? b->first_line : 1;
    char m[160];
    if (b->attention_head > 0) {
        const Model *md = &tr->files[0].model;
        if (!model_attention_layers(&tr->use.model)) {
            snprintf(m, sizeof m, "attention_head %d needs a Transformer model (this one is %s)", b->attention_head,
                     arch_names[md->cfg.arch]);
            fail_msg(err, S2S_ERR_ARGUMENT, m);
            return NULL;
        }
        if (b->attention_head > md->cfg.heads) {
            snprintf(m, sizeof m, "attention_head %d: the model has %d heads", b->attention_head, md->cfg.heads);
            fail_msg(err, S2S_ERR_ARGUMENT, m);
            return NULL;
        }
    }
    for (int i = 0; i < n; i++) {
        if (!texts[i]) {
            snprintf(m, sizeof m, "%.60s:%ld: NULL", name, first + i);
            fail_msg(err, S2S_ERR_ARGUMENT, m);
            return NULL;
        }
        if (given && check_cons(&given[i], name, first + i, m, sizeof m) != 0) {
            fail_msg(err, S2S_ERR_ARGUMENT, m);
            return NULL;
        }
    }
    s2s_translator_options o = call_options(tr, opts);
    if (check_options(&o, err) != 0)
        return NULL;
    if (given && o.constraints) {
        fail_msg(err, S2S_ERR_ARGUMENT, "constraints given apart need plain texts: the constraints option must be 0");
        return NULL;
    }
    TranslateOpts to = translate_opts(&o);
    to.attention_head = b->attention_head;

    /* The JSON texts of the constraints option, the constraints given apart, and the
       glossary's terms, as `s2s translate` reads them (cmd_translate.c). */
    Err e;
    const size_t cnt = n ? (size_t)n : 1;
    const char *const *lines = texts;
    const size_t *lens = b->lengths;
    size_t *own_lens = NULL;
    long *line_no = NULL;
    char **own = NULL;
    TranslateCons *cons = NULL;
    int rc = 0, code = S2S_ERR_INPUT;
    if (o.constraints || given || tr->glossary) {
        cons = XCNEW(TranslateCons, cnt);
        own = XCNEW(char *, cnt);
        own_lens = XNEW(size_t, cnt);
        for (int i = 0; i < n && rc == 0; i++) {
            size_t len = b->lengths ? b->lengths[i] : strlen(texts[i]);
            Err ce;
            if (text_cons(tr, o.constraints, given ? &given[i] : NULL, texts[i], len, &own[i], &own_lens[i],
                          &cons[i], &ce) != 0)
                rc = err_set(&e, "%s:%ld: %s", name, first + i, ce.msg);
        }
        lines = (const char *const *)own;
        lens = own_lens;
    }
    if (first != 1) {
        line_no = XNEW(long, cnt);
        for (int i = 0; i < n; i++)
            line_no[i] = first + i;
    }
    s2s_result *res = NULL;
    if (rc == 0) {
        const TranslateInput in = {lines, lens, n, name, line_no, cons};
        res = XCNEW(s2s_result, 1);
        res->attention = to.attention;
        /* translate_run reads the model and the vocabularies only (s2s.h "Threads") */
        if (translate_run((ModelFile *)&tr->use, &in, &to, &res->r, NULL, &e) != 0) {
            free(res);
            res = NULL;
            rc = -1;
        }
    }
    if (cons)
        for (int i = 0; i < n; i++)
            translate_cons_free(&cons[i]);
    if (own)
        for (int i = 0; i < n; i++)
            free(own[i]);
    free(cons);
    free(own);
    free(own_lens);
    free(line_no);
    if (rc != 0) {
        fail(err, code, &e);
        return NULL;
    }
    ok(err);
    return res;
}

s2s_result *s2s_translate(const s2s_translator *tr, const char *const *texts, int n,
                          const s2s_translator_options *opts, s2s_error *err)
{
    return translate(tr, &(s2s_batch){.texts = texts, .n = n}, opts, err);
}

s2s_result *s2s_translate_constrained(const s2s_translator *tr, const char *const *texts,
                                      const s2s_constraints *cons, int n,
                                      const s2s_translator_options *opts, s2s_error *err)
{
    return translate(tr, &(s2s_batch){.texts = texts, .constraints = cons, .n = n}, opts, err);
}

s2s_result *s2s_translate_batch(const s2s_translator *tr, const s2s_batch *b,
                                const s2s_translator_options *opts, s2s_error *err)
{
    if (!b) {
        fail_msg(err, S2S_ERR_ARGUMENT, "no batch");
        return NULL;
    }
    return translate(tr, b, opts, err);
}

void s2s_result_free(s2s_result *r)
{
    if (!r)
        return;
    translate_result_free(&r->r);
    free(r);
}

int s2s_result_count(const s2s_result *r) { return r ? r->r.n : 0; }

int s2s_result_hypotheses(const s2s_result *r, int i)
{
    return r && i >= 0 && i < r->r.n ? r->r.count[i] : 0;
}

const char *s2s_result_text(const s2s_result *r, int i, int k)
{
    return k >= 0 && k < s2s_result_hypotheses(r, i) ? r->r.hyps[i][k].text : NULL;
}

double s2s_result_score(const s2s_result *r, int i, int k)
{
    return k >= 0 && k < s2s_result_hypotheses(r, i) ? r->r.hyps[i][k].score : NAN;
}

int s2s_result_attention(const s2s_result *r, int i, s2s_attention *a)
{
    if (!r || !r->attention || !r->r.align || i < 0 || i >= r->r.n)
        return -1;
    const TranslateAlign *t = &r->r.align[i];
    *a = (s2s_attention){.source_len = t->nsrc, .output_len = t->ntgt,
                         .source = (const char *const *)t->src, .output = (const char *const *)t->tgt,
                         .weights = t->w};
    return 0;
}

struct s2s_evaluation {
    Evaluation ev;
    char *text, *json, *hyps;
    s2s_evaluation_figures figures;
};

static const char *const precision_label[] = {[S2S_PRECISION_INT8] = "int8", [S2S_PRECISION_BF16] = "bf16",
                                              [S2S_PRECISION_F32] = "f32"};

s2s_evaluation *s2s_evaluate(const s2s_translator *tr, const char *tsv, int by_length,
                             const s2s_translator_options *opts, s2s_error *err)
{
    if (!tr || !tsv) {
        fail_msg(err, S2S_ERR_ARGUMENT, !tr ? "no translator" : "no file");
        return NULL;
    }
    s2s_translator_options o = call_options(tr, opts);
    if (check_options(&o, err) != 0)
        return NULL;
    if (o.nbest != 1 || o.attention) {
        fail_msg(err, S2S_ERR_ARGUMENT, "an evaluation takes nbest 1 and no attention");
        return NULL;
    }
    const TranslateOpts to = translate_opts(&o);
    Err e;
    Corpus c;
    CorpusOpts co = corpus_opts_pairs(tr->use.text.dir); /* source<TAB>target */
    if (corpus_read(&c, tsv, &co, &e) != 0) {
        fail(err, S2S_ERR_INPUT, &e);
        return NULL;
    }
    /* the constraints option and the glossary: each line's text and constraints */
    char **texts = NULL;
    size_t *tlens = NULL;
    TranslateCons *cons = NULL;
    int rc = 0;
    if (o.constraints || tr->glossary) {
        size_t n = c.n ? c.n : 1;
        texts = XCNEW(char *, n);
        tlens = XNEW(size_t, n);
        cons = XCNEW(TranslateCons, n);
        for (size_t i = 0; i < c.n && rc == 0; i++) {
            const Pair *p = &c.pairs[i];
            Err ce;
            if (text_cons(tr, o.constraints, NULL, p->src, p->src_len, &texts[i], &tlens[i], &cons[i], &ce) != 0)
                rc = err_set(&e, "%s:%zu: %s", tsv, p->line, ce.msg);
        }
    }
    s2s_evaluation *r = NULL;
    if (rc == 0) {
        r = XCNEW(s2s_evaluation, 1);
        const EvalNames names = {tsv, (const char *const *)tr->paths, tr->n};
        /* evaluate_run reads the model and the vocabularies only (s2s.h "Threads") */
        rc = evaluate_run(&r->ev, (ModelFile *)&tr->use, &names, &c, &to, (const char *const *)texts, tlens, cons,
                          &e);
        if (rc == 0) {
            r->ev.precision = precision_label[tr->opts.precision];
            if (by_length)
                rc = evaluate_by_length(&r->ev, &c, &e);
            Buf b = {0};
            evaluate_text(&r->ev, &b);
            r->text = buf_take(&b);
            evaluate_json(&r->ev, &b);
            r->json = buf_take(&b);
            evaluate_hyps(&r->ev, &b);
            r->hyps = b.data ? buf_take(&b) : xstrdup("");
            r->figures = (s2s_evaluation_figures){.bleu = r->ev.scores.bleu.score, .chrf = r->ev.scores.chrf,
                                                  .perplexity = r->ev.have_ppl ? r->ev.ppl : 0,
                                                  .lines = (long long)r->ev.lines,
                                                  .sources = (long long)r->ev.sources};
        } else {
            free(r);
            r = NULL;
        }
        if (rc != 0 && r) {
            s2s_evaluation_free(r);
            r = NULL;
        }
    }
    /* the texts and constraints are the Evaluation's until here */
    if (r) {
        r->ev.text = NULL;
        r->ev.text_len = NULL;
        r->ev.cons = NULL;
    }
    for (size_t i = 0; cons && i < c.n; i++) {
        translate_cons_free(&cons[i]);
        free(texts[i]);
    }
    free(cons);
    free(texts);
    free(tlens);
    corpus_free(&c);
    if (!r) {
        fail(err, S2S_ERR_INPUT, &e);
        return NULL;
    }
    ok(err);
    return r;
}

void s2s_evaluation_free(s2s_evaluation *ev)
{
    if (!ev)
        return;
    evaluate_free(&ev->ev);
    free(ev->text);
    free(ev->json);
    free(ev->hyps);
    free(ev);
}

const char *s2s_evaluation_report(const s2s_evaluation *ev, int json)
{
    return !ev ? NULL : json ? ev->json : ev->text;
}

const char *s2s_evaluation_translations(const s2s_evaluation *ev) { return ev ? ev->hyps : NULL; }

s2s_evaluation_figures s2s_evaluation_get(const s2s_evaluation *ev)
{
    return ev ? ev->figures : (s2s_evaluation_figures){0};
}

char *s2s_attention_svg(const s2s_attention *a, const char *title)
{
    if (!a || a->source_len <= 0 || a->output_len <= 0 || !a->source || !a->output || !a->weights)
        return NULL;
    const TranslateAlign t = {.nsrc = a->source_len, .ntgt = a->output_len, .src = (char **)a->source,
                              .tgt = (char **)a->output, .w = (float *)a->weights};
    Buf svg = {0};
    align_svg(&t, title ? title : "", &svg);
    return buf_take(&svg);
}

char *s2s_attention_text(const s2s_attention *a)
{
    if (!a || a->source_len <= 0 || a->output_len <= 0 || !a->source || !a->output || !a->weights)
        return NULL;
    const TranslateAlign t = {.nsrc = a->source_len, .ntgt = a->output_len, .src = (char **)a->source,
                              .tgt = (char **)a->output, .w = (float *)a->weights};
    Buf out = {0};
    align_text(&t, &out);
    return buf_take(&out);
}

/* The checks shared by tokenize and detokenize; the side's tokenizer options. */
static int side_args(const s2s_translator *tr, s2s_side side, const char *text, TokOpts *to,
                     s2s_error *err)
{
    if (!tr || !text)
        return fail_msg(err, S2S_ERR_ARGUMENT, !tr ? "no translator" : "no text");
    if (side != S2S_SOURCE && side != S2S_TARGET)
        return fail_msg(err, S2S_ERR_ARGUMENT, "side must be S2S_SOURCE or S2S_TARGET");
    *to = side == S2S_SOURCE ? text_src_opts(&tr->use.text) : text_tgt_opts(&tr->use.text);
    return 0;
}

char *s2s_tokenize(const s2s_translator *tr, s2s_side side, const char *text, s2s_error *err)
{
    TokOpts to;
    if (side_args(tr, side, text, &to, err) != 0)
        return NULL;
    const Bpe *bpe = side == S2S_SOURCE ? tr->use.text.src_bpe : tr->use.text.tgt_bpe;
    Buf out = {0};
    Err e;
    if (bpe_tok_line(bpe, text, strlen(text), &to, &out, &e) < 0) {
        buf_free(&out);
        fail(err, S2S_ERR_INPUT, &e);
        return NULL;
    }
    ok(err);
    return out.data ? buf_take(&out) : xstrdup("");
}

char *s2s_detokenize(const s2s_translator *tr, s2s_side side, const char *tokens, s2s_error *err)
{
    TokOpts to;
    if (side_args(tr, side, tokens, &to, err) != 0)
        return NULL;
    Err e;
    size_t len = strlen(tokens);
    if (tok_check_utf8(tokens, len, &e) != 0) {
        fail(err, S2S_ERR_INPUT, &e);
        return NULL;
    }
    Buf units = {0}, out = {0};
    bpe_join(tokens, len, &units);
    if (units.len)
        detok_line(units.data, units.len, to.lang, &out);
    buf_free(&units);
    ok(err);
    return out.data ? buf_take(&out) : xstrdup("");
}

void s2s_string_free(char *s) { free(s); }

int s2s_export_ctranslate2(const s2s_translator *tr, const char *dir, s2s_error *err)
{
    if (!tr || !dir)
        return fail_msg(err, S2S_ERR_ARGUMENT, !tr ? "no translator" : "no directory");
    if (tr->n > 1)
        return fail_msg(err, S2S_ERR_ARGUMENT, "an ensemble cannot be exported: CTranslate2 has no such model");
    Err e;
    if (ct2_export(&tr->files[0], tr->paths[0], dir, &e) != 0)
        return fail(err, model_attention_layers(&tr->files[0].model) ? S2S_ERR_OUTPUT : S2S_ERR_ARGUMENT, &e);
    ok(err);
    return 0;
}

int s2s_language_code(const char *s, char code[4])
{
    Lang l;
    if (!s || lang_parse(s, &l) != 0) {
        if (code)
            code[0] = '\0';
        return -1;
    }
    if (code)
        memcpy(code, l.code, sizeof l.code);
    return 0;
}

const char *s2s_language_name(const char *s)
{
    Lang l;
    if (!s || lang_parse(s, &l) != 0)
        return NULL;
    const char *name = lang_label(&l);
    /* lang_label gives the code itself (l's storage) when the tables have no name */
    return name == l.code ? NULL : name;
}

s2s_score_options s2s_score_options_default(void)
{
    return (s2s_score_options){.tokenize = "13a", .lowercase = 0, .chrf_lowercase = 0};
}

/* Checks one segment's text as `s2s score` checks a file's line. */
static int check_segment(const char *s, Err *e)
{
    if (!s)
        return err_set(e, "NULL");
    return tok_check_utf8(s, strlen(s), e);
}

/* s2s_score, and with sentence s2s_score_sentence (n 1: BLEU with effective order). */
static int score(const char *const *hyps, size_t n, const char *const *refs, size_t nrefs,
                 const s2s_score_options *opts, int metrics, bool sentence, s2s_scores *out, s2s_error *err)
{
    s2s_score_options so = opts ? *opts : s2s_score_options_default();
    if (metrics < 1 || metrics > (S2S_METRIC_BLEU | S2S_METRIC_CHRF))
        return fail_msg(err, S2S_ERR_ARGUMENT, "metrics must be S2S_METRIC_BLEU, S2S_METRIC_CHRF or both");
    const bool bleu = metrics & S2S_METRIC_BLEU, chrf = metrics & S2S_METRIC_CHRF;
    if (!out)
        return fail_msg(err, S2S_ERR_ARGUMENT, "no s2s_scores to fill");
    if (n == 0 || !hyps)
        return fail_msg(err, S2S_ERR_ARGUMENT, "no hypotheses to score");
    if (nrefs == 0 || !refs)
        return fail_msg(err, S2S_ERR_ARGUMENT, "no references");
    int tok = bleu_tokenizer_parse(so.tokenize ? so.tokenize : "13a");
    if (tok < 0) {
        char m[160];
        snprintf(m, sizeof m, "tokenize must be 13a, none or intl, not '%.100s'", so.tokenize);
        return fail_msg(err, S2S_ERR_ARGUMENT, m);
    }
    Err e, se;
    for (size_t i = 0; i < n; i++) {
        if (check_segment(hyps[i], &se) != 0) {
            err_set(&e, "hypothesis %zu: %s", i + 1, se.msg);
            return fail(err, S2S_ERR_INPUT, &e);
        }
        for (size_t r = 0; r < nrefs; r++)
            if (check_segment(refs[r * n + i], &se) != 0) {
                err_set(&e, "reference %zu:%zu: %s", r + 1, i + 1, se.msg);
                return fail(err, S2S_ERR_INPUT, &e);
            }
    }

    /* the corpus statistics as cmd_score.c gathers them */
    BleuOpts bo = {.tok = (BleuTokenizer)tok, .lowercase = so.lowercase != 0, .keep_empty = true};
    BleuStats bs;
    ChrfStats cs;
    bleu_init_opts(&bs, &bo);
    chrf_init(&cs);
    cs.lowercase = so.chrf_lowercase != 0;
    cs.keep_empty = true;
    const char **r = XNEW(const char *, nrefs);
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        for (size_t k = 0; k < nrefs; k++)
            r[k] = refs[k * n + i];
        if ((bleu && bleu_add(&bs, hyps[i], r, nrefs, &se) != 0) || (chrf && chrf_add(&cs, hyps[i], r, nrefs, &se) != 0))
            rc = err_set(&e, "hypothesis %zu: %s", i + 1, se.msg);
    }
    free(r);
    if (rc == 0) {
        memset(out, 0, sizeof *out);
        Buf sig = {0};
        if (bleu) {
            BleuResult br;
            if (sentence)
                bleu_compute(bs.counts, bs.totals, bs.sys_len, bs.ref_len, true, &br);
            else
                bleu_score(&bs, &br);
            out->bleu = br.score;
            for (int k = 0; k < 4; k++)
                out->precisions[k] = br.precisions[k];
            out->brevity_penalty = br.bp;
            out->ratio = br.ratio;
            out->hyp_len = br.sys_len;
            out->ref_len = br.ref_len;
            bleu_signature_opts(&bs, sentence, &sig);
            buf_puts(&sig, "|version:" SACREBLEU_VERSION);
            snprintf(out->bleu_signature, sizeof out->bleu_signature, "%s", sig.data);
        }
        if (chrf) {
            out->chrf = chrf_score(&cs);
            buf_clear(&sig);
            chrf_signature(&cs, &sig);
            buf_puts(&sig, "|version:" SACREBLEU_VERSION);
            snprintf(out->chrf_signature, sizeof out->chrf_signature, "%s", sig.data);
        }
        buf_free(&sig);
    }
    bleu_free(&bs);
    chrf_free(&cs);
    if (rc != 0)
        return fail(err, S2S_ERR_INPUT, &e);
    ok(err);
    return 0;
}

int s2s_score(const char *const *hyps, size_t n, const char *const *refs, size_t nrefs,
              const s2s_score_options *opts, s2s_scores *out, s2s_error *err)
{
    return score(hyps, n, refs, nrefs, opts, S2S_METRIC_BLEU | S2S_METRIC_CHRF, false, out, err);
}

int s2s_score_metrics(const char *const *hyps, size_t n, const char *const *refs, size_t nrefs,
                      const s2s_score_options *opts, int metrics, s2s_scores *out, s2s_error *err)
{
    return score(hyps, n, refs, nrefs, opts, metrics, false, out, err);
}

int s2s_score_sentence(const char *hyp, const char *const *refs, size_t nrefs, const s2s_score_options *opts,
                       int metrics, s2s_scores *out, s2s_error *err)
{
    return score(hyp ? &hyp : NULL, hyp ? 1 : 0, refs, nrefs, opts, metrics, true, out, err);
}

struct s2s_tokenizer {
    TokOpts to;
    Bpe *bpe;
};

s2s_tokenizer *s2s_tokenizer_new(const char *lang, int lowercase, const char *bpe_codes, s2s_error *err)
{
    Lang l = LANG_EN;
    if (lang && lang_parse(lang, &l) != 0) {
        char m[160];
        snprintf(m, sizeof m, "'%.100s' is not an ISO 639 language code", lang);
        fail_msg(err, S2S_ERR_ARGUMENT, m);
        return NULL;
    }
    s2s_tokenizer *t = XCNEW(s2s_tokenizer, 1);
    t->to = (TokOpts){l, !lowercase};
    Err e;
    if (bpe_codes && bpe_load(&t->bpe, bpe_codes, &e) != 0) {
        free(t);
        fail(err, S2S_ERR_MODEL, &e);
        return NULL;
    }
    ok(err);
    return t;
}

void s2s_tokenizer_free(s2s_tokenizer *t)
{
    if (!t)
        return;
    bpe_free(t->bpe);
    free(t);
}

/* text, checked as tokenize and the joins check their input: 0, or -1 with err set. */
static int check_text(const void *owner, const char *text, size_t len, s2s_error *err)
{
    if (!owner || !text)
        return fail_msg(err, S2S_ERR_ARGUMENT, !owner ? "no tokenizer" : "no text");
    Err e;
    if (tok_check_utf8(text, len, &e) != 0)
        return fail(err, S2S_ERR_INPUT, &e);
    const char *nul = memchr(text, '\0', len);
    if (nul) {
        err_set(&e, "NUL byte at byte %zu", (size_t)(nul - text) + 1);
        return fail(err, S2S_ERR_INPUT, &e);
    }
    return 0;
}

static char *take(Buf *b, s2s_error *err)
{
    ok(err);
    return b->data ? buf_take(b) : xstrdup("");
}

char *s2s_tokenizer_tokenize(const s2s_tokenizer *t, const char *text, size_t len, s2s_error *err)
{
    if (!t || !text) {
        fail_msg(err, S2S_ERR_ARGUMENT, !t ? "no tokenizer" : "no text");
        return NULL;
    }
    Buf out = {0};
    Err e;
    if (bpe_tok_line(t->bpe, text, len, &t->to, &out, &e) < 0) {
        buf_free(&out);
        fail(err, S2S_ERR_INPUT, &e);
        return NULL;
    }
    return take(&out, err);
}

char *s2s_tokenizer_detokenize(const s2s_tokenizer *t, const char *tokens, size_t len, s2s_error *err)
{
    if (check_text(t, tokens, len, err) != 0)
        return NULL;
    Buf units = {0}, out = {0};
    bpe_join(tokens, len, &units);
    if (units.len)
        detok_line(units.data, units.len, t->to.lang, &out);
    buf_free(&units);
    return take(&out, err);
}

char *s2s_join_units(const char *tokens, size_t len, s2s_error *err)
{
    if (check_text("", tokens, len, err) != 0)
        return NULL;
    Buf out = {0};
    bpe_join(tokens, len, &out);
    return take(&out, err);
}
