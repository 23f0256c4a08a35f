/* The Transformer end to end: a model trained by `s2s train --arch transformer` on the
   shipped sample translates the 400 sample sources to the same token ids in s2s
   (greedy, cached decoding steps, batches of 16) and in the PyTorch reference
   (scripts/s2sref/transformer.py: nn.Transformer modules, every step recomputing the
   whole prefix); cached steps equal the teacher-forced forward pass; the options of the
   other architecture are refused. The reference part is skipped when the interpreter
   named by $PYTHON (default /usr/bin/python3) has no torch. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/buf.h"
#include "decode/greedy.h"
#include "helpers.h"
#include "model/file.h"
#include "model_fixture.h"
#include "text/tokenize.h"

/* Trains a small Transformer on data/sample.tsv into dir/m.s2s (a few seconds); shared:
   one embedding table for source, target and output. */
static char *train_small(const char *dir, bool shared)
{
    char *model = strf("%s/m.s2s", dir);
    const char *argv[] = {"train", "data/sample.tsv", "-o", model, "--arch", "transformer",
                          "--model-dim", "32", "--ff", "64", "--layers", "2", "--heads", "4",
                          "--steps", "150", "--valid-every", "0", "--threads", "1", "--quiet",
                          shared ? "--share-embeddings" : "--no-share-embeddings",
                          shared ? "--tie-embeddings" : "--no-tie-embeddings", NULL};
    RunResult r = run_s2s(NULL, argv);
    cr_assert_eq(r.status, 0, "train failed: %s", r.err);
    run_free(&r);
    return model;
}

/* One python process: greedy ids of each line of ids_path (source ids separated by
   spaces) with the reference, batches of 16 sentences sorted by length, one line each. */
static const char DRIVER[] =
    "import sys\n"
    "try:\n"
    "    import torch\n"
    "except ImportError:\n"
    "    sys.exit(77)\n"
    "sys.path.insert(0, 'scripts')\n"
    "from s2sref.io import load_model\n"
    "model, _, _, _ = load_model(sys.argv[1])\n"
    "model.eval()\n"
    "torch.set_num_threads(1)\n"
    "srcs = [[int(x) for x in line.split()] for line in open(sys.argv[2])]\n"
    "out = [None] * len(srcs)\n"
    "order = sorted(range(len(srcs)), key=lambda i: len(srcs[i]))\n"
    "for k in range(0, len(order), 16):\n"
    "    idx = order[k:k + 16]\n"
    "    S = max(len(srcs[i]) for i in idx)\n"
    "    src = torch.zeros(S, len(idx), dtype=torch.long)\n"
    "    for b, i in enumerate(idx):\n"
    "        src[:len(srcs[i]), b] = torch.tensor(srcs[i])\n"
    "    lens = torch.tensor([len(srcs[i]) for i in idx])\n"
    "    for i, ids in zip(idx, model.greedy(src, lens)):\n"
    "        out[i] = ids\n"
    "with open(sys.argv[3], 'w') as f:\n"
    "    for ids in out:\n"
    "        f.write(' '.join(map(str, ids)) + '\\n')\n";

static void same_tokens_as_the_reference(bool shared)
{
    char *probe = strf("'%s' -c 'import torch' >/dev/null 2>&1", python_bin());
    int have_torch = system(probe) == 0;
    free(probe);
    if (!have_torch)
        cr_skip_test("%s cannot import torch", python_bin());
    char *dir = tmpdir_new();
    char *model = train_small(dir, shared);
    ModelFile mf;
    Err e;
    cr_assert_eq(model_file_load(&mf, model, false, &e), 0, "%s", e.msg);
    cr_assert_eq(mf.model.cfg.arch, ARCH_TRANSFORMER);
    cr_assert_eq(mf.model.cfg.share_embeddings, shared);
    cr_assert_eq(mf.model.cfg.tie_embeddings, shared);
    cr_assert_eq(mf.model.cfg.src_vocab, mf.model.cfg.tgt_vocab, "a corpus is prepared with one vocabulary");
    const ParamLayout *lay = &mf.model.layout;
    int has_tgt_emb = 0;
    for (int i = 0; i < lay->n; i++)
        has_tgt_emb += strcmp(lay->info[i].name, "tgt_emb.weight") == 0;
    cr_assert_eq(has_tgt_emb, !shared, "tgt_emb.weight stored %d times", has_tgt_emb);

    /* the sample's sources as the model's ids */
    char *text = slurp("data/sample.tsv", NULL);
    cr_assert(text != NULL);
    enum { MAXN = 400 };
    int *ids[MAXN], lens[MAXN], n = 0;
    TokOpts so = text_src_opts(&mf.text);
    Buf tok = {0}, lines = {0};
    for (char *line = strtok(text, "\n"); line && n < MAXN; line = strtok(NULL, "\n")) {
        char *tab = strchr(line, '\t');
        cr_assert(tab != NULL);
        buf_clear(&tok);
        cr_assert(tok_line(line, (size_t)(tab - line), &so, &tok, &e) >= 0, "%s", e.msg);
        ids[n] = calloc(tok.len + 2, sizeof(int));
        size_t k = vocab_encode(mf.src, tok.data ? tok.data : "", tok.len, (int32_t *)ids[n], tok.len + 2, NULL);
        lens[n] = (int)k;
        cr_assert(k >= 1);
        for (size_t j = 0; j < k; j++)
            buf_printf(&lines, "%s%d", j ? " " : "", ids[n][j]);
        buf_putc(&lines, '\n');
        n++;
    }
    cr_assert_eq(n, MAXN);
    char *ids_path = strf("%s/src.ids", dir), *ref_path = strf("%s/ref.ids", dir);
    write_file(ids_path, lines.data);

    PairSet d = {.n = n, .src = ids, .src_len = lens};
    Hyps h;
    cr_assert_eq(greedy_decode(&mf.model, &d, 16, 0, &h, &e), 0, "%s", e.msg);

    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        execl(python_bin(), python_bin(), "-c", DRIVER, model, ids_path, ref_path, (char *)NULL);
        _exit(127);
    }
    int st;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the reference failed (status %d)", st);
    char *ref = slurp(ref_path, NULL);
    cr_assert(ref != NULL);
    int same = 0, tokens = 0;
    char *save = NULL, *rl = strtok_r(ref, "\n", &save);
    for (int i = 0; i < n; i++) {
        /* an empty output is an empty line, which strtok skips: compare lengths first */
        Buf mine = {0};
        for (int k = 0; k < h.len[i]; k++)
            buf_printf(&mine, "%s%d", k ? " " : "", h.ids[i][k]);
        const char *want = h.len[i] ? (mine.data ? mine.data : "") : "";
        bool eq;
        if (h.len[i] == 0) {
            eq = true; /* checked by the count of lines below */
        } else {
            eq = rl && strcmp(rl, want) == 0;
            rl = strtok_r(NULL, "\n", &save);
        }
        same += eq;
        tokens += h.len[i];
        cr_expect(eq, "sentence %d: s2s '%s', reference '%s'", i + 1, want, rl ? rl : "(none)");
        buf_free(&mine);
    }
    cr_assert_eq(same, n, "%d of %d sentences differ", n - same, n);
    cr_assert(tokens > n, "the model should produce output (%d tokens for %d sentences)", tokens, n);

    hyps_free(&h);
    for (int i = 0; i < n; i++)
        free(ids[i]);
    buf_free(&tok);
    buf_free(&lines);
    free(ref);
    free(text);
    free(ids_path);
    free(ref_path);
    model_file_free(&mf);
    free(model);
    rm_rf(dir);
    free(dir);
}

Test(transformer, s2s_and_the_pytorch_reference_translate_to_the_same_tokens)
{
    same_tokens_as_the_reference(false);
}

/* --share-embeddings --tie-embeddings: one table, in s2s and in the reference. */
Test(transformer, with_one_embedding_table_the_same_tokens_as_the_reference)
{
    same_tokens_as_the_reference(true);
}

/* Each decoding step's logits equal the teacher-forced forward pass at that position
   (to float rounding: the products have other sizes), padding on both sides. */
Test(transformer, cached_steps_equal_the_whole_prefix_recomputed)
{
    enum { VS = 13, VT = 15, B = 3, S = 5, T = 6 };
    const NormKind norms[2] = {NORM_POST, NORM_PRE};
    for (int k = 0; k < 2; k++) {
        ModelConfig c = fixture_transformer(norms[k], k ? POS_LEARNED : POS_SINUSOIDAL, VS, VT);
        Model m;
        fixture_model_from(&m, &c, 40 + k);
        int src[S * B] = {4, 6, 8, 7, 5, 4, 9, 12, 0, 5, 0, 0, 11, 0, 0};
        int len[B] = {5, 3, 2};
        int tin[T * B], tout[T * B];
        for (int t = 0; t < T; t++)
            for (int b = 0; b < B; b++) {
                tin[t * B + b] = t ? 4 + (t * 7 + b * 3) % (VT - 4) : 2;
                tout[t * B + b] = 4 + (t * 5 + b) % (VT - 4);
            }
        Batch bt = {.B = B, .S = S, .T = T, .src = src, .src_len = len, .tgt_in = tin, .tgt_out = tout,
                    .ntok = T * B};
        Work *wf = work_new(&m, B, S, T, WORK_SCORE);
        model_forward(&m, wf, &bt, NULL);
        const real *full = work_logits(wf);
        Work *wd = work_new(&m, B, S, T, false);
        Batch bd = bt;
        model_encode(&m, wd, &bd);
        double worst = 0;
        for (int t = 0; t < T; t++) {
            model_decode_step(&m, wd, &bd, tin + t * B, t);
            const real *step = work_step_logits(wd);
            for (int q = 0; q < B * VT; q++) {
                double diff = fabs((double)step[q] - full[(size_t)t * B * VT + q]);
                worst = diff > worst ? diff : worst;
            }
        }
        cr_expect(worst <= 1e-5, "norm %d: cached steps differ from the forward pass by %g", k, worst);
        work_free(wf);
        work_free(wd);
        model_free(&m);
    }
}

Test(transformer, options_of_the_other_architecture_are_refused)
{
    static const struct {
        const char *const args[4];
        const char *msg;
    } cases[] = {
        {{"--arch", "transformer", "--cell", "lstm"}, "s2s: train: option --cell does not apply to --arch transformer\n"},
        {{"--arch", "transformer", "--input-feed", NULL}, "s2s: train: option --input-feed does not apply to --arch transformer\n"},
        {{"--arch", "transformer", "--local", "m"}, "s2s: train: option --local does not apply to --arch transformer\n"},
        {{"--arch", "transformer", "--bridge", "zero"}, "s2s: train: option --bridge does not apply to --arch transformer\n"},
        {{"--cell", "gru", "--model-dim", "64"}, "s2s: train: option --model-dim does not apply to --arch rnn\n"},
        {{"--arch", "rnn", "--ff", "64"}, "s2s: train: option --ff does not apply to --arch rnn\n"},
        {{"--arch", "transformer", "--heads", "3"}, "s2s: train: --heads 3 does not divide --model-dim 256\n"},
        {{"--arch", "transformer", "--max-positions", "9"}, "s2s: train: --max-positions needs --positions learned\n"},
        {{"--arch", "cnn", NULL, NULL}, "s2s: train: option --arch must be rnn or transformer, got 'cnn'\n"},
        {{"--cell", "gru", "--share-embeddings", NULL}, "s2s: train: option --share-embeddings does not apply to --arch rnn\n"},
    };
    char *dir = tmpdir_new();
    char *model = strf("%s/m.s2s", dir);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *argv[10] = {"train", "data/sample.tsv", "-o", model};
        int n = 4;
        for (int k = 0; k < 4 && cases[i].args[k]; k++)
            argv[n++] = cases[i].args[k];
        argv[n] = NULL;
        RunResult r = run_s2s(NULL, argv);
        cr_expect_eq(r.status, 2, "case %zu: exit %d", i, r.status);
        cr_expect_str_eq(r.err, cases[i].msg, "case %zu", i);
        run_free(&r);
    }
    cr_expect_eq(dir_count(dir), 0, "nothing is written");
    free(model);
    rm_rf(dir);
    free(dir);
}

/* --share-embeddings needs one vocabulary: data prepared with two is refused before a
   step, and no model is written. */
Test(transformer, one_embedding_table_needs_one_vocabulary)
{
    char *dir = tmpdir_new();
    char *data = strf("%s/words", dir), *model = strf("%s/m.s2s", dir);
    RunResult r = RUN_S2S(NULL, "prepare", "data/sample.tsv", "-o", data);
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    r = RUN_S2S(NULL, "train", data, "-o", model, "--share-embeddings", "--steps", "2", "--threads", "1", "--quiet");
    cr_expect_eq(r.status, 1);
    char *want = strf("s2s: %s: --share-embeddings needs one vocabulary for both sides (s2s prepare --joint)\n", data);
    cr_expect_str_eq(r.err, want);
    cr_expect(access(model, F_OK) != 0, "a model was written");
    run_free(&r);
    free(want);
    free(data);
    free(model);
    rm_rf(dir);
    free(dir);
}

/* --attention-layer picks the decoder layer whose attention is shown; --attention-heads
   draws each head of it beside the heads' mean; both need a Transformer model. */
Test(transformer, attention_of_a_chosen_layer_and_of_every_head)
{
    char *dir = tmpdir_new();
    char *model = strf("%s/m.s2s", dir), *svg = strf("%s/svg", dir), *rnn = strf("%s/rnn.s2s", dir);
    ModelConfig c = fixture_transformer(NORM_POST, POS_SINUSOIDAL, fixture_src_size(), fixture_tgt_size());
    Model m;
    fixture_model_from(&m, &c, 77);
    fixture_save(model, &m, NULL);
    model_free(&m);
    fixture_text_model(&m, 78);
    fixture_save(rnn, &m, NULL);
    model_free(&m);

    RunResult r1 = RUN_S2S(NULL, "translate", model, "the cat sleeps", "--show-attention", "--attention-layer", "1");
    RunResult r2 = RUN_S2S(NULL, "translate", model, "the cat sleeps", "--show-attention", "--attention-layer", "2");
    RunResult rl = RUN_S2S(NULL, "translate", model, "the cat sleeps", "--show-attention");
    cr_assert(r1.status == 0 && r2.status == 0 && rl.status == 0, "%s%s%s", r1.err, r2.err, rl.err);
    cr_expect_str_eq(r1.out, r2.out, "the translation does not depend on the picture");
    cr_expect_str_neq(r1.err, r2.err, "layers 1 and 2 attend differently");
    cr_expect_str_eq(r2.err, rl.err, "the last layer is the default");
    run_free(&r1);
    run_free(&r2);
    run_free(&rl);

    RunResult r = RUN_S2S(NULL, "translate", model, "the cat sleeps", "--attention-svg", svg, "--attention-heads");
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    char *mean = strf("%s/0001.svg", svg), *h[3];
    cr_expect(file_exists(mean));
    for (int k = 0; k < 3; k++) {
        h[k] = strf("%s/0001.h%d.svg", svg, k + 1);
        cr_expect(file_exists(h[k]), "%s", h[k]);
    }
    cr_expect_eq(dir_count(svg), 4, "the mean and 3 heads");
    char *a = slurp(h[0], NULL), *b = slurp(h[1], NULL);
    cr_assert(a && b);
    cr_expect_str_neq(a, b, "heads 1 and 2 attend differently");
    free(a);
    free(b);

    /* eval scores references with a whole-target forward pass (WORK_SCORE) */
    char *tsv = strf("%s/t.tsv", dir);
    write_file(tsv, "the cat sleeps\tle chat dort\nthe dog eats\tle chien mange\n");
    RunResult ev = RUN_S2S(NULL, "eval", model, tsv, "--beam", "1");
    cr_expect_eq(ev.status, 0, "%s", ev.err);
    cr_expect(strstr(ev.out, "perplexity = ") != NULL, "%s", ev.out);
    run_free(&ev);
    free(tsv);

    RunResult e1 = RUN_S2S(NULL, "translate", rnn, "the cat", "--show-attention", "--attention-layer", "1");
    cr_expect_eq(e1.status, 2);
    char *want = strf("s2s: translate: --attention-layer needs a Transformer model (%s is rnn)\n", rnn);
    cr_expect_str_eq(e1.err, want);
    free(want);
    RunResult e2 = RUN_S2S(NULL, "translate", model, "the cat", "--show-attention", "--attention-layer", "3");
    cr_expect_eq(e2.status, 2);
    want = strf("s2s: translate: --attention-layer 3: %s has 2 decoder layers\n", model);
    cr_expect_str_eq(e2.err, want);
    free(want);
    RunResult e3 = RUN_S2S(NULL, "translate", model, "the cat", "--attention-heads");
    cr_expect_eq(e3.status, 2);
    cr_expect_str_eq(e3.err, "s2s: translate: --attention-heads needs --attention-svg DIR\n");
    run_free(&e1);
    run_free(&e2);
    run_free(&e3);
    for (int k = 0; k < 3; k++)
        free(h[k]);
    free(mean);
    free(model);
    free(svg);
    free(rnn);
    rm_rf(dir);
    free(dir);
}

/* --attention-heads on stdin: every batch read draws the heads' mean and each head
   afresh, so that line 2, in a batch of its own, gets the pictures it gets when both
   lines are translated in one pass (-i FILE). */
Test(transformer, every_batch_of_a_stream_draws_the_mean_and_each_head)
{
    char *dir = tmpdir_new();
    char *model = strf("%s/m.s2s", dir), *in = strf("%s/in.txt", dir);
    ModelConfig c = fixture_transformer(NORM_POST, POS_SINUSOIDAL, fixture_src_size(), fixture_tgt_size());
    Model m;
    fixture_model_from(&m, &c, 77);
    fixture_save(model, &m, NULL);
    model_free(&m);
    const char *text = "the cat sleeps\nthe dog eats\n";
    write_file(in, text);
    char *svg[2] = {strf("%s/stream", dir), strf("%s/file", dir)};
    RunResult r[2] = {
        RUN_S2S(text, "translate", model, "--batch", "1", "--attention-svg", svg[0], "--attention-heads"),
        RUN_S2S(NULL, "translate", model, "-i", in, "--batch", "1", "--attention-svg", svg[1], "--attention-heads"),
    };
    for (int k = 0; k < 2; k++)
        cr_assert_eq(r[k].status, 0, "%s", r[k].err);
    cr_expect_str_eq(r[0].out, r[1].out);
    const char *names[] = {"0002.svg", "0002.h1.svg", "0002.h2.svg", "0002.h3.svg"};
    for (int i = 0; i < 4; i++) {
        char *a = strf("%s/%s", svg[0], names[i]), *b = strf("%s/%s", svg[1], names[i]);
        char *x = slurp(a, NULL), *y = slurp(b, NULL);
        cr_assert(x && y, "%s, %s", a, b);
        cr_expect_str_eq(x, y, "%s", names[i]);
        free(x);
        free(y);
        free(a);
        free(b);
    }
    for (int k = 0; k < 2; k++) {
        run_free(&r[k]);
        free(svg[k]);
    }
    free(in);
    free(model);
    rm_rf(dir);
    free(dir);
}

/* --resume of a Transformer run: the run's architecture decides which flags apply, a
   flag that differs from the run is refused, and 20 + 20 steps give the weights of 40
   straight (dropout on, the generators' states saved). */
Test(transformer, resume_continues_exactly_and_refuses_a_changed_size)
{
    char *dir = tmpdir_new();
    char *a = strf("%s/a.s2s", dir), *b = strf("%s/b.s2s", dir);
/* a schedule that does not depend on the budget: the default cosine stretches to the
   larger --steps a resumed run is given */
#define TINY "--arch", "transformer", "--model-dim", "16", "--ff", "24", "--layers", "1", "--heads", "2", \
             "--valid-every", "10", "--threads", "1", "--quiet", "--lr-schedule", "warmup-decay"
    RunResult r = RUN_S2S(NULL, "train", "data/sample.tsv", "-o", a, "--steps", "40", TINY);
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
    r = RUN_S2S(NULL, "train", "data/sample.tsv", "-o", b, "--steps", "20", TINY);
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);
#undef TINY
    r = RUN_S2S(NULL, "train", "--resume", "-o", b, "--steps", "40", "--ff", "32");
    cr_expect_eq(r.status, 2);
    char *want = strf("s2s: train: --ff differs from the run in %s.state; on --resume only --time, --steps, "
                      "--epochs, --patience, --threads, --precision, --log-every and --quiet may change\n", b);
    cr_expect_str_eq(r.err, want);
    free(want);
    run_free(&r);
    r = RUN_S2S(NULL, "train", "--resume", "-o", b, "--steps", "40", "--ff", "24", "--threads", "1", "--quiet");
    cr_assert_eq(r.status, 0, "%s", r.err);
    run_free(&r);

    char *la = strf("%s.last", a), *lb = strf("%s.last", b);
    ModelFile ma, mb;
    Err e;
    cr_assert_eq(model_file_load(&ma, la, false, &e), 0, "%s", e.msg);
    cr_assert_eq(model_file_load(&mb, lb, false, &e), 0, "%s", e.msg);
    cr_assert_eq(mb.model.cfg.arch, ARCH_TRANSFORMER);
    cr_assert_eq(ma.model.layout.total, mb.model.layout.total);
    cr_expect(memcmp(ma.model.params, mb.model.params, ma.model.layout.total * sizeof(real)) == 0,
              "20 + 20 resumed steps differ from 40 straight");
    model_file_free(&ma);
    model_file_free(&mb);
    free(la);
    free(lb);
    free(a);
    free(b);
    rm_rf(dir);
    free(dir);
}

/* The default architecture is the Transformer (docs/transformer.md: the better of the
   two after 60 minutes), warmed up over 800 steps or a tenth of the budget and then decayed as a cosine to the
   end of the budget (docs/quality.md); an option of the recurrent model alone selects
   that model, with its plateau schedule. */
Test(transformer, is_the_default_and_a_recurrent_option_selects_the_rnn)
{
    char *dir = tmpdir_new();
    char *t = strf("%s/t.s2s", dir), *r = strf("%s/r.s2s", dir);
    RunResult run = RUN_S2S(NULL, "train", "data/sample.tsv", "-o", t, "--steps", "2", "--valid-every", "0",
                            "--model-dim", "16", "--ff", "16", "--layers", "1", "--heads", "2", "--threads", "1",
                            "--quiet");
    cr_assert_eq(run.status, 0, "%s", run.err);
    run_free(&run);
    run = RUN_S2S(NULL, "train", "data/sample.tsv", "-o", r, "--steps", "2", "--valid-every", "0", "--emb", "16",
                  "--hidden", "16", "--dec-hidden", "16", "--attn-size", "16", "--deep-out", "16", "--threads", "1",
                  "--quiet");
    cr_assert_eq(run.status, 0, "%s", run.err);
    run_free(&run);
    char *tl = strf("%s.log.jsonl", t), *rl = strf("%s.log.jsonl", r);
    cr_expect_eq(count_in_file(tl, "{\"event\": \"start\", \"step\": 0, \"config\": {\"arch\": \"transformer\","), 1);
    cr_expect_eq(count_in_file(tl, "\"schedule\": \"warmup-cosine\""), 1);
    /* step 1 of 800 warmup steps at --lr 1e-3: 1e-3 / 800; step 2, halfway through the 2
       steps of the budget, past the tenth of it where the warmup ends at the latest:
       1e-3 times the cosine there, 0.5 */
    cr_expect_eq(count_in_file(tl, "\"step\": 1, \"epoch\": 1, \"loss\""), 1);
    cr_expect_eq(count_in_file(tl, "\"lr\": 1.25e-06,"), 1);
    cr_expect_eq(count_in_file(tl, "{\"event\": \"step\", \"step\": 2, \"epoch\": 1, \"loss\""), 1);
    cr_expect_eq(count_in_file(tl, "\"lr\": 0.0005,"), 1);
    /* the valid line at the end shows the rate in force there: the cosine's 0 */
    cr_expect_eq(count_in_file(tl, "\"best\": true, \"lr\": 0, "), 1);
    cr_expect_eq(count_in_file(rl, "{\"event\": \"start\", \"step\": 0, \"config\": {\"cell\": \"gru\","), 1);
    cr_expect_eq(count_in_file(rl, "\"schedule\": \"plateau\""), 1);
    free(tl);
    free(rl);
    free(t);
    free(r);
    rm_rf(dir);
    free(dir);
}
