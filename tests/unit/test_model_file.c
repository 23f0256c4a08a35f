/* The model file: save/load round trip, config JSON, and refusals of bad files. */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/file.h"
#include "base/safetensors.h"
#include "helpers.h"
#include "model/file.h"

static Vocab *small_vocab(const char *words)
{
    Buf b = {0};
    buf_printf(&b, "<pad>\n<unk>\n<bos>\n<eos>\n%s", words);
    Vocab *v;
    cr_assert_eq(vocab_from_lines(&v, "test", b.data, b.len, NULL), 0);
    buf_free(&b);
    return v;
}

static ModelConfig small_config(Cell cell, int src_v, int tgt_v)
{
    ModelConfig c = model_config_default();
    c.cell = cell;
    c.layers = 2;
    c.emb = 6;
    c.hidden = 5;
    c.dec_hidden = 7;
    c.attn = 4;
    c.deep_out = 3;
    c.src_vocab = src_v;
    c.tgt_vocab = tgt_v;
    return c;
}

/* Saves a random model; returns the temp dir and the path. */
static char *save_random(Model *m, Vocab **vs, Vocab **vt, char **dir, Cell cell)
{
    *vs = small_vocab("a\nb\nc");
    *vt = small_vocab("x\ny\nz\nw");
    ModelConfig c = small_config(cell, 7, 8);
    model_init(m, &c, false);
    Rng r;
    rng_seed(&r, 5);
    model_init_random(m, &r);
    *dir = tmpdir_new();
    char *path = strf("%s/m.s2s", *dir);
    TextConfig t = {.dir = DIRECTION_FR_EN, .keep_case = true};
    Err e;
    cr_assert_eq(model_file_save(path, m, *vs, *vt, &t, "{\"steps\": 3}", &e), 0, "%s", e.msg);
    return path;
}

Test(model_file, round_trip_keeps_everything)
{
    for (int cell = 0; cell < 2; cell++) {
        Model m;
        Vocab *vs, *vt;
        char *dir;
        char *path = save_random(&m, &vs, &vt, &dir, (Cell)cell);
        ModelFile mf;
        Err e;
        cr_assert_eq(model_file_load(&mf, path, false, &e), 0, "%s", e.msg);
        cr_expect_eq(mf.model.cfg.cell, (Cell)cell);
        cr_expect_eq(mf.model.cfg.layers, 2);
        cr_expect_eq(mf.model.cfg.dec_hidden, 7);
        cr_expect_eq(mf.model.cfg.src_vocab, 7);
        cr_expect_eq(mf.model.cfg.tgt_vocab, 8);
        cr_expect_str_eq(mf.text.dir.name, "fr-en");
        cr_expect(mf.text.keep_case);
        cr_expect_str_eq(vocab_token(mf.tgt, 7), "w");
        cr_expect_str_eq(mf.history, "{\"steps\": 3}");
        cr_assert_eq(mf.model.layout.total, m.layout.total);
        cr_expect_eq(memcmp(mf.model.params, m.params, m.layout.total * sizeof(real)), 0,
                     "weights differ after a round trip");
        cr_expect_null(mf.model.grads);
        model_file_free(&mf);
        model_free(&m);
        vocab_free(vs);
        vocab_free(vt);
        rm_rf(dir);
        free(dir);
        free(path);
    }
}

Test(model_file, config_json_has_the_documented_keys_in_order)
{
    ModelConfig c = small_config(CELL_LSTM, 7, 8);
    TextConfig t = {.dir = DIRECTION_EN_FR, .keep_case = false};
    Buf b = {0};
    model_config_json(&c, &t, &b);
    cr_expect_str_eq(b.data,
                     "{\"cell\": \"lstm\", \"layers\": 2, \"bidir\": true, \"emb\": 6, \"hidden\": 5, "
                     "\"dec_hidden\": 7, \"attn\": 4, \"attention\": \"bahdanau\", \"heads\": 1, "
                     "\"local\": \"none\", \"window\": 0, \"input_feed\": false, \"bridge\": \"linear\", "
                     "\"deep_out\": 3, \"dropout\": 0.1, \"label_smoothing\": 0.1, \"tie_embeddings\": false, "
                     "\"direction\": \"en-fr\", \"src_lang\": \"en\", \"tgt_lang\": \"fr\", "
                     "\"keep_case\": false}");
    ModelConfig back = model_config_default();
    TextConfig tb;
    cr_assert_eq(model_config_parse(&back, &tb, b.data, b.len, "cfg", NULL), 0);
    back.src_vocab = 7;
    back.tgt_vocab = 8;
    cr_expect_eq(memcmp(&back, &c, sizeof c), 0);
    buf_free(&b);
}

Test(model_file, a_config_without_the_variant_keys_reads_as_bahdanau_with_a_linear_bridge)
{
    const char *json = "{\"cell\": \"gru\", \"layers\": 1, \"bidir\": true, \"emb\": 6, \"hidden\": 5, "
                       "\"dec_hidden\": 7, \"attn\": 4, \"attention\": \"bahdanau\", \"deep_out\": 3, "
                       "\"dropout\": 0.1, \"label_smoothing\": 0.1, \"tie_embeddings\": false, "
                       "\"direction\": \"en-fr\", \"src_lang\": \"en\", \"tgt_lang\": \"fr\", \"keep_case\": false}";
    ModelConfig c = model_config_default();
    c.attention = ATT_MULTIHEAD;
    c.heads = 2;
    c.local = LOCAL_P;
    c.window = 3;
    c.input_feed = true;
    c.bridge = BRIDGE_ZERO;
    TextConfig t;
    cr_assert_eq(model_config_parse(&c, &t, json, strlen(json), "cfg", NULL), 0);
    cr_expect_eq(c.attention, ATT_BAHDANAU);
    cr_expect_eq(c.heads, 1);
    cr_expect_eq(c.local, LOCAL_NONE);
    cr_expect_eq(c.window, 0);
    cr_expect(!c.input_feed);
    cr_expect_eq(c.bridge, BRIDGE_LINEAR);
}

Test(model_file, variant_configs_round_trip)
{
    ModelConfig c = small_config(CELL_GRU, 7, 8);
    c.attention = ATT_MULTIHEAD;
    c.heads = 2;
    c.local = LOCAL_P;
    c.window = 3;
    c.input_feed = true;
    c.bridge = BRIDGE_ATTN_POOL;
    TextConfig t = {.dir = DIRECTION_FR_EN, .keep_case = true};
    Buf b = {0};
    model_config_json(&c, &t, &b);
    cr_expect(strstr(b.data, "\"attention\": \"multihead\", \"heads\": 2, \"local\": \"p\", \"window\": 3, "
                             "\"input_feed\": true, \"bridge\": \"attn-pool\"") != NULL, "%s", b.data);
    ModelConfig back = model_config_default();
    TextConfig tb;
    cr_assert_eq(model_config_parse(&back, &tb, b.data, b.len, "cfg", NULL), 0);
    back.src_vocab = 7;
    back.tgt_vocab = 8;
    cr_expect_eq(memcmp(&back, &c, sizeof c), 0);
    buf_free(&b);
}

Test(model_file, config_errors_name_the_key)
{
    static const struct { const char *json, *msg; } cases[] = {
        {"[]", "cfg: expected a JSON object"},
        {"{\"cell\": \"gru\"}", "cfg: missing key 'layers'"},
        {"{\"color\": 1}", "cfg: unknown key 'color'"},
        {"{\"cell\": \"rnn\", \"layers\": 1, \"bidir\": true, \"emb\": 6, \"hidden\": 5, \"dec_hidden\": 7, "
         "\"attn\": 4, \"attention\": \"bahdanau\", \"deep_out\": 3, \"dropout\": 0.1, "
         "\"label_smoothing\": 0.1, \"tie_embeddings\": false, \"direction\": \"en-fr\", "
         "\"src_lang\": \"en\", \"tgt_lang\": \"fr\", \"keep_case\": false}",
         "cfg: 'cell' must be \"gru\" or \"lstm\""},
        {"{\"cell\": \"gru\", \"layers\": 9, \"bidir\": true, \"emb\": 6, \"hidden\": 5, \"dec_hidden\": 7, "
         "\"attn\": 4, \"attention\": \"bahdanau\", \"deep_out\": 3, \"dropout\": 0.1, "
         "\"label_smoothing\": 0.1, \"tie_embeddings\": false, \"direction\": \"en-fr\", "
         "\"src_lang\": \"en\", \"tgt_lang\": \"fr\", \"keep_case\": false}",
         "cfg: 'layers' must be an integer in 1..4"},
        {"{\"cell\": \"gru\", \"layers\": 1, \"bidir\": true, \"emb\": 6, \"hidden\": 5, \"dec_hidden\": 7, "
         "\"attn\": 4, \"attention\": \"bahdanau\", \"deep_out\": 3, \"dropout\": 0.1, "
         "\"label_smoothing\": 0.1, \"tie_embeddings\": false, \"direction\": \"en-fr\", "
         "\"src_lang\": \"fr\", \"tgt_lang\": \"en\", \"keep_case\": false}",
         "cfg: 'src_lang' and 'tgt_lang' (fr, en) disagree with 'direction' en-fr"},
        {"{\"cell\": \"gru\", \"layers\": 1, \"bidir\": true, \"emb\": 6, \"hidden\": 5, \"dec_hidden\": 7, "
         "\"attn\": 4, \"attention\": \"bahdanau\", \"deep_out\": 3, \"dropout\": 1.5, "
         "\"label_smoothing\": 0.1, \"tie_embeddings\": false, \"direction\": \"en-fr\", "
         "\"src_lang\": \"en\", \"tgt_lang\": \"fr\", \"keep_case\": false}",
         "cfg: 'dropout' must be a number in [0, 1)"},
#define VARIANT(extra)                                                                                    \
    "{\"cell\": \"gru\", \"layers\": 1, \"bidir\": true, \"emb\": 6, \"hidden\": 5, \"dec_hidden\": 7, " \
    "\"attn\": 4, " extra ", \"deep_out\": 3, \"dropout\": 0.1, \"label_smoothing\": 0.1, "              \
    "\"tie_embeddings\": false, \"direction\": \"en-fr\", \"src_lang\": \"en\", \"tgt_lang\": \"fr\", "    \
    "\"keep_case\": false}"
        {VARIANT("\"attention\": \"luong\""),
         "cfg: 'attention' must be \"bahdanau\" or \"luong-dot\" or \"luong-general\" or \"luong-concat\" or "
         "\"scaled-dot\" or \"multihead\""},
        {VARIANT("\"attention\": \"luong-dot\", \"local\": \"q\""), "cfg: 'local' must be \"none\" or \"m\" or \"p\""},
        {VARIANT("\"attention\": \"luong-dot\", \"bridge\": 1"),
         "cfg: 'bridge' must be \"linear\" or \"zero\" or \"attn-pool\""},
        {VARIANT("\"attention\": \"bahdanau\", \"heads\": 2"),
         "cfg: 'heads' must be 1 unless 'attention' is \"multihead\""},
        {VARIANT("\"attention\": \"multihead\", \"heads\": 3"), "cfg: 'heads' must divide 'attn'"},
        {VARIANT("\"attention\": \"bahdanau\", \"input_feed\": true"),
         "cfg: 'local' and 'input_feed' need a Luong-path 'attention'"},
        {VARIANT("\"attention\": \"luong-dot\", \"local\": \"m\""),
         "cfg: 'window' must be 0 without 'local' and at least 1 with it"},
        {VARIANT("\"attention\": \"luong-dot\", \"window\": 3"),
         "cfg: 'window' must be 0 without 'local' and at least 1 with it"},
        {VARIANT("\"attention\": \"luong-dot\", \"input_feed\": 1"), "cfg: 'input_feed' must be true or false"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ModelConfig c = model_config_default();
        TextConfig t;
        Err e;
        cr_expect_eq(model_config_parse(&c, &t, cases[i].json, strlen(cases[i].json), "cfg", &e), -1);
        cr_expect_str_eq(e.msg, cases[i].msg);
    }
}

/* Any ISO 639 pair, in the codes' shortest form. */
#define LANGS(dir, src, tgt)                                                                         \
    "{\"cell\": \"gru\", \"layers\": 1, \"bidir\": true, \"emb\": 6, \"hidden\": 5, \"dec_hidden\": 7, " \
    "\"attn\": 4, \"attention\": \"bahdanau\", \"heads\": 1, \"local\": \"none\", \"window\": 0, "       \
    "\"input_feed\": false, \"bridge\": \"linear\", \"deep_out\": 3, \"dropout\": 0.1, "                \
    "\"label_smoothing\": 0.1, \"tie_embeddings\": false, \"direction\": \"" dir "\", "                 \
    "\"src_lang\": \"" src "\", \"tgt_lang\": \"" tgt "\", \"keep_case\": false}"

Test(model_file, config_languages)
{
    static const struct { const char *json, *msg; } cases[] = {
        {LANGS("de-en", "de", "en"), NULL},
        {LANGS("cmn-de", "cmn", "de"), NULL},
        {LANGS("en-xx", "en", "fr"),
         "cfg: 'direction' must be two ISO 639 language codes joined by '-' (\"en-fr\")"},
        {LANGS("en-deu", "en", "de"),
         "cfg: 'direction' must be two ISO 639 language codes joined by '-' (\"en-fr\")"},
        {LANGS("en-de", "en", "deu"), "cfg: 'tgt_lang' must be an ISO 639 language code"},
        {LANGS("en-de", "xx", "de"), "cfg: 'src_lang' must be an ISO 639 language code"},
        {LANGS("en-de", "en", "fr"), "cfg: 'src_lang' and 'tgt_lang' (en, fr) disagree with 'direction' en-de"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ModelConfig c = model_config_default();
        TextConfig t;
        Err e = {{0}};
        int rc = model_config_parse(&c, &t, cases[i].json, strlen(cases[i].json), "cfg", &e);
        if (!cases[i].msg) {
            cr_expect_eq(rc, 0, "%s", e.msg);
            Buf b = {0};
            model_config_json(&c, &t, &b);
            cr_expect_str_eq(b.data, cases[i].json);
            buf_free(&b);
        } else {
            cr_expect_eq(rc, -1);
            cr_expect_str_eq(e.msg, cases[i].msg);
        }
    }
}

Test(model_file, truncated_and_foreign_files_are_refused)
{
    Model m;
    Vocab *vs, *vt;
    char *dir;
    char *path = save_random(&m, &vs, &vt, &dir, CELL_GRU);
    size_t len;
    char *bytes = slurp(path, &len);
    cr_assert_not_null(bytes);
    char *cut = strf("%s/cut.s2s", dir);
    FILE *fp = fopen(cut, "wb");
    fwrite(bytes, 1, len - 10, fp);
    fclose(fp);
    ModelFile mf;
    Err e;
    cr_expect_eq(model_file_load(&mf, cut, false, &e), -1);
    cr_expect(strncmp(e.msg, cut, strlen(cut)) == 0 && strstr(e.msg, "truncated"), "%s", e.msg);

    /* A valid safetensors file that is not an s2s model. */
    char *foreign = strf("%s/foreign.st", dir);
    float x[2] = {1, 2};
    StTensor t = {.name = "w", .dtype = ST_F32, .ndim = 1, .shape = {2}, .data = x};
    cr_assert_eq(st_write(foreign, &t, 1, NULL, NULL, 0, NULL), 0);
    cr_expect_eq(model_file_load(&mf, foreign, false, &e), -1);
    char *want = strf("%s: not an s2s model (no s2s.format in the metadata, expected 's2s-model-1')", foreign);
    cr_expect_str_eq(e.msg, want);

    free(want);
    free(foreign);
    free(cut);
    free(bytes);
    model_free(&m);
    vocab_free(vs);
    vocab_free(vt);
    rm_rf(dir);
    free(dir);
    free(path);
}


/* SIGKILL in the middle of saves: a child saves two different models over the same
   path in a loop; whenever it is killed, the file loads and holds one of the two. */
Test(model_file, killed_during_saves_the_file_is_one_of_the_versions)
{
    Model a, b;
    Vocab *vs, *vt;
    char *dir;
    char *path = save_random(&a, &vs, &vt, &dir, CELL_LSTM);
    model_init(&b, &a.cfg, false);
    for (size_t i = 0; i < b.layout.total; i++)
        b.params[i] = a.params[i] + 1;
    TextConfig t = {.dir = DIRECTION_FR_EN, .keep_case = true};
    srand(99);
    int saw_a = 0, saw_b = 0;
    for (int round = 0; round < 30; round++) {
        pid_t pid = fork();
        cr_assert(pid >= 0);
        if (pid == 0) {
            for (long k = 0;; k++)
                if (model_file_save(path, k % 2 ? &b : &a, vs, vt, &t, NULL, NULL) != 0)
                    _exit(1);
        }
        usleep((useconds_t)(rand() % 20000));
        kill(pid, SIGKILL);
        int st;
        waitpid(pid, &st, 0);
        cr_assert(WIFSIGNALED(st), "the saving child ended on its own");
        ModelFile mf;
        Err e;
        cr_assert_eq(model_file_load(&mf, path, false, &e), 0, "round %d: %s", round, e.msg);
        size_t n = a.layout.total * sizeof(real);
        bool is_a = memcmp(mf.model.params, a.params, n) == 0, is_b = memcmp(mf.model.params, b.params, n) == 0;
        cr_expect(is_a || is_b, "round %d: the file holds neither version", round);
        saw_a += is_a;
        saw_b += is_b;
        model_file_free(&mf);
    }
    cr_log_info("killed during saves: version a %d times, version b %d times", saw_a, saw_b);
    model_free(&b);
    model_free(&a);
    vocab_free(vs);
    vocab_free(vt);
    rm_rf(dir);
    free(dir);
    free(path);
}

/* Writes path's tensors and metadata to out with s2s.config replaced by c's JSON. */
static void rewrite_config(const char *path, const char *out, const ModelConfig *c,
                           const TextConfig *t)
{
    StFile *f;
    cr_assert_eq(st_load(&f, path, NULL, NULL), 0);
    size_t n = st_count(f), nm = st_meta_count(f);
    StTensor *ts = calloc(n, sizeof *ts);
    for (size_t i = 0; i < n; i++)
        ts[i] = *st_at(f, i);
    const char **keys = calloc(nm, sizeof *keys), **vals = calloc(nm, sizeof *vals);
    size_t k = 0;
    Buf cfg = {0};
    model_config_json(c, t, &cfg);
    for (size_t i = 0; i < nm; i++) {
        if (strcmp(st_meta_key(f, i), ST_KEY_CRC32) == 0)
            continue;
        keys[k] = st_meta_key(f, i);
        vals[k] = strcmp(keys[k], "s2s.config") == 0 ? cfg.data : st_meta_val(f, i);
        k++;
    }
    cr_assert_eq(st_write(out, ts, n, keys, vals, k, NULL), 0);
    buf_free(&cfg);
    free(keys);
    free(vals);
    free(ts);
    st_close(f);
}

Test(model_file, a_tensor_of_the_wrong_shape_is_named)
{
    Model m;
    Vocab *vs, *vt;
    char *dir;
    char *path = save_random(&m, &vs, &vt, &dir, CELL_GRU);
    /* The same file with a config that says hidden 6: every encoder shape is wrong. */
    ModelConfig c = m.cfg;
    c.hidden = 6;
    TextConfig t = {.dir = DIRECTION_FR_EN, .keep_case = true};
    char *bad = strf("%s/bad.s2s", dir);
    rewrite_config(path, bad, &c, &t);
    ModelFile mf;
    Err e;
    cr_expect_eq(model_file_load(&mf, bad, false, &e), -1);
    char *want = strf("%s: tensor 'encoder.weight_ih_l0' is F32 [15, 6], expected F32 [18, 6]", bad);
    cr_expect_str_eq(e.msg, want);
    free(want);
    free(bad);
    model_free(&m);
    vocab_free(vs);
    vocab_free(vt);
    rm_rf(dir);
    free(dir);
    free(path);
}

/* The data segment of this process in bytes (VmData). */
static rlim_t vm_data_bytes(void)
{
    FILE *fp = fopen("/proc/self/status", "r");
    cr_assert_not_null(fp);
    char line[256];
    unsigned long long kb = 0;
    while (fgets(line, sizeof line, fp))
        if (sscanf(line, "VmData: %llu kB", &kb) == 1)
            break;
    fclose(fp);
    cr_assert_gt(kb, 0);
    return (rlim_t)kb * 1024;
}

/* Found with the model-file fuzz target (libFuzzer's malloc limit): a file of a few KB whose s2s.config claims the
   largest sizes made model_file_load allocate what the config claims (up to 40 GB)
   before checking a single tensor, and die "out of memory" where that much cannot be
   had. The tensors are now checked first. Loading runs with RLIMIT_DATA at 256 MiB
   above what the process already uses (the whole file is 3 KB). */
Test(model_file, fuzz_found_config_sizes_are_not_allocated_before_the_tensors_check)
{
    Model m;
    Vocab *vs, *vt;
    char *dir;
    char *path = save_random(&m, &vs, &vt, &dir, CELL_GRU);
    static const struct {
        Cell cell;
        int layers, emb, hidden, dec_hidden, attn, deep_out;
        const char *msg; /* after "PATH: " */
    } cases[] = {
        {CELL_LSTM, 4, 8192, 8192, 8192, 8192, 8192,
         "tensor 'src_emb.weight' is F32 [7, 6], expected F32 [7, 8192]"},
        {CELL_GRU, 4, 6, 8192, 8192, 8192, 3,
         "tensor 'encoder.weight_ih_l0' is F32 [15, 6], expected F32 [24576, 6]"},
        {CELL_GRU, 2, 6, 5, 8192, 8192, 8192,
         "tensor 'bridge.0.weight' is F32 [7, 10], expected F32 [8192, 10]"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ModelConfig c = m.cfg;
        c.cell = cases[i].cell;
        c.layers = cases[i].layers;
        c.emb = cases[i].emb;
        c.hidden = cases[i].hidden;
        c.dec_hidden = cases[i].dec_hidden;
        c.attn = cases[i].attn;
        c.deep_out = cases[i].deep_out;
        TextConfig t = {.dir = DIRECTION_FR_EN, .keep_case = true};
        char *bad = strf("%s/big%zu.s2s", dir, i);
        rewrite_config(path, bad, &c, &t);
        char *want = strf("%s: %s", bad, cases[i].msg);
        for (int grads = 0; grads < 2; grads++) {
            struct rlimit old, lim;
            cr_assert_eq(getrlimit(RLIMIT_DATA, &old), 0);
            lim = old;
            lim.rlim_cur = vm_data_bytes() + ((rlim_t)256 << 20);
            if (old.rlim_cur != RLIM_INFINITY && old.rlim_cur < lim.rlim_cur)
                lim.rlim_cur = old.rlim_cur;
            cr_assert_eq(setrlimit(RLIMIT_DATA, &lim), 0);
            ModelFile mf;
            Err e;
            int rc = model_file_load(&mf, bad, grads, &e);
            cr_assert_eq(setrlimit(RLIMIT_DATA, &old), 0);
            cr_expect_eq(rc, -1, "case %zu: loaded", i);
            cr_expect_str_eq(e.msg, want, "case %zu", i);
        }
        free(want);
        free(bad);
    }
    model_free(&m);
    vocab_free(vs);
    vocab_free(vt);
    rm_rf(dir);
    free(dir);
    free(path);
}

/* Loaded without gradients, an s2s file's weights are used where they lie in the
   mapped file; with gradients (or tensors in another order) they are copied. The
   weights are the same either way. */
Test(model_file, weights_in_place_in_the_mapped_file_or_copied)
{
    Model m;
    Vocab *vs, *vt;
    char *dir;
    char *path = save_random(&m, &vs, &vt, &dir, CELL_GRU);
    ModelFile a, b;
    Err e;
    cr_assert_eq(model_file_load(&a, path, false, &e), 0, "%s", e.msg);
    cr_assert_eq(model_file_load(&b, path, true, &e), 0, "%s", e.msg);
    cr_expect_not_null(a.file, "an s2s file loaded for decoding should be mapped");
    cr_expect(a.model.params_borrowed);
    cr_expect_null(b.file);
    cr_expect(!b.model.params_borrowed);
    cr_expect_not_null(b.model.grads);
    cr_expect_eq(memcmp(a.model.params, m.params, m.layout.total * sizeof(real)), 0);
    cr_expect_eq(memcmp(b.model.params, m.params, m.layout.total * sizeof(real)), 0);
    model_file_free(&b);

    /* the same tensors and metadata, written in reverse order: copied, same weights */
    StFile *f;
    cr_assert_eq(st_load(&f, path, NULL, &e), 0, "%s", e.msg);
    size_t n = st_count(f), nm = st_meta_count(f);
    StTensor *ts = calloc(n, sizeof *ts);
    for (size_t i = 0; i < n; i++)
        ts[i] = *st_at(f, n - 1 - i);
    const char **keys = calloc(nm, sizeof *keys), **vals = calloc(nm, sizeof *vals);
    size_t k = 0;
    for (size_t i = 0; i < nm; i++)
        if (strcmp(st_meta_key(f, i), ST_KEY_CRC32) != 0) {
            keys[k] = st_meta_key(f, i);
            vals[k++] = st_meta_val(f, i);
        }
    char *rev = strf("%s/reversed.s2s", dir);
    cr_assert_eq(st_write(rev, ts, n, keys, vals, k, &e), 0, "%s", e.msg);
    ModelFile c;
    cr_assert_eq(model_file_load(&c, rev, false, &e), 0, "%s", e.msg);
    cr_expect_null(c.file, "tensors out of layout order must be copied");
    cr_expect_eq(memcmp(c.model.params, m.params, m.layout.total * sizeof(real)), 0);
    model_file_free(&c);
    st_close(f);
    free(ts);
    free(keys);
    free(vals);
    free(rev);
    model_file_free(&a);
    model_free(&m);
    vocab_free(vs);
    vocab_free(vt);
    rm_rf(dir);
    free(dir);
    free(path);
}

/* A mapped model file truncated by someone else while in use: touching a lost page
   ends the process with one line naming the file and status 1, not a crash. */
Test(model_file, a_mapped_file_truncated_in_use_ends_with_one_line)
{
    Model m;
    Vocab *vs, *vt;
    char *dir;
    char *path = save_random(&m, &vs, &vt, &dir, CELL_LSTM);
    int fds[2];
    cr_assert_eq(pipe(fds), 0);
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        dup2(fds[1], 2);
        close(fds[0]);
        ModelFile mf;
        Err e;
        file_map_watch_enable(); /* as the program does (src/main.c) */
        if (model_file_load(&mf, path, false, &e) != 0 || !mf.file)
            _exit(7);
        if (truncate(path, 0) != 0)
            _exit(8);
        volatile real sum = 0;
        for (size_t i = 0; i < mf.model.layout.total; i += 256)
            sum += mf.model.params[i];
        _exit(9); /* not reached: the first page is gone */
    }
    close(fds[1]);
    char buf[512] = {0};
    ssize_t got = 0, r;
    while ((r = read(fds[0], buf + got, sizeof buf - 1 - (size_t)got)) > 0)
        got += r;
    close(fds[0]);
    int status;
    waitpid(pid, &status, 0);
    cr_assert(WIFEXITED(status), "killed by signal %d", WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    cr_expect_eq(WEXITSTATUS(status), 1);
    char *want = strf("s2s: %s: the file was truncated while in use; nothing written\n", path);
    cr_expect_str_eq(buf, want);
    free(want);
    model_free(&m);
    vocab_free(vs);
    vocab_free(vt);
    rm_rf(dir);
    free(dir);
    free(path);
}
