/*
 * bench/bench: the C side of `make bench` (bench/run.sh drives it; see bench/README.md).
 *
 *   bench sgemm [--threads N] [--reps R]
 *       OpenBLAS sgemm GFLOP/s at square sizes and at the model's own shapes.
 *   bench data DIR -o OUTDIR [--batches N] [--sentences N] [--seed S] [--batch B]
 *              [--longest K]
 *       From an `s2s prepare` directory: OUTDIR/batches.safetensors (the first N
 *       batches of the seeded training plan, as `s2s train` cuts them),
 *       OUTDIR/longest.safetensors (the K batches of that epoch with the most padded
 *       tokens, source and target, in plan order; the batches that set the peak memory)
 *       and OUTDIR/dec.safetensors + OUTDIR/dec.txt (the first N distinct valid
 *       sources, as ids and as text). Both sides of the benchmark read these files.
 *   bench synth -o OUTDIR --src-vocab N --tgt-vocab N --len L [--batch B] [--batches N]
 *               [--sentences N] [--seed S]
 *       Synthetic files of the same formats: N batches of B rows whose sources and
 *       targets (<eos> included) all have L tokens, random word ids; with --sentences,
 *       OUTDIR/dec.safetensors of N random sources of L tokens.
 *   bench train BATCHES [--init MODEL | --cell C --attention A --input-feed] [--threads N]
 *       [--warmup W] [--runs R] [--seed S] [--loop K] [--precision f32|bf16] [--products pool|own]
 *       Training steps (forward, backward, clipping, Adam) over the batches: target
 *       tokens/s per run, model FLOPs per token, CPU times, peak RSS; with bf16 the
 *       products' inputs rounded to bf16 (s2s train --precision bf16); --products own
 *       runs the products on BLAS's and oneDNN's own threads instead of s2s's pool (as
 *       s2s train does with more than one thread).
 *   bench greedy MODEL DEC [--batch B] [--max-len M] [--threads N] [--runs R] [--first N]
 *                          [--precision f32|bf16|int8] [--int8-kernel portable|sse2|avx2|vnni]
 *       Greedy decoding of the (first N) sentences of DEC, model load timed apart;
 *       --int8-kernel times the int8 kernel of another CPU (this one must have it).
 *   bench spawn [--runs R] -- COMMAND [ARGS...]
 *       Runs COMMAND R times (stdout to /dev/null): wall time, CPU times, peak RSS.
 *
 * Every result is one JSON object on stdout.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <errno.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <cblas.h>

#include "base/buf.h"
#include "base/clock.h"
#include "base/err.h"
#include "base/file.h"
#include "base/opt.h"
#include "base/rng.h"
#include "base/safetensors.h"
#include "flops.h"
#include "decode/greedy.h"
#include "model/file.h"
#include "model/model.h"
#include "nn/bf16.h"
#include "nn/linalg.h"
#include "data/batch.h"
#include "data/prepared.h"
#include "train/optim.h"
#include "train/step.h"

/* ------------------------------------------------------------------ helpers */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(const double *v, int n)
{
    double *s = xmalloc((size_t)n * sizeof *s);
    memcpy(s, v, (size_t)n * sizeof *s);
    qsort(s, (size_t)n, sizeof *s, cmp_double);
    double m = n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
    free(s);
    return m;
}

static double tv_s(struct timeval tv) { return (double)tv.tv_sec + (double)tv.tv_usec * 1e-6; }

static long maxrss_kb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

static void cpu_times(double *user, double *sys)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    *user = tv_s(ru.ru_utime);
    *sys = tv_s(ru.ru_stime);
}

static void json_list(Buf *b, const char *key, const double *v, int n, const char *fmt)
{
    buf_printf(b, ", \"%s\": [", key);
    for (int i = 0; i < n; i++) {
        if (i)
            buf_puts(b, ", ");
        buf_printf(b, fmt, v[i]);
    }
    buf_puts(b, "]");
}

static void emit(Buf *b)
{
    buf_puts(b, "}\n");
    fwrite(b->data, 1, b->len, stdout);
    fflush(stdout);
    buf_free(b);
}

/* 64-bit FNV-1a over the output ids of every sentence (length, then ids), in input
   order: torch_bench.py computes the same hash, so equal hashes mean equal outputs. */
static uint64_t hyps_hash(const Hyps *h)
{
    uint64_t x = 1469598103934665603ULL;
    for (int i = 0; i < h->n; i++) {
        int64_t v = h->len[i];
        for (int k = -1; k < h->len[i]; k++) {
            if (k >= 0)
                v = h->ids[i][k];
            for (int j = 0; j < 8; j++) {
                x ^= (uint64_t)((v >> (8 * j)) & 0xff);
                x *= 1099511628211ULL;
            }
        }
    }
    return x;
}

/* With BENCH_PERF_CTL naming the control FIFO of `perf record --control fifo:PATH -D -1`
   (bench/profile.sh), perf samples only the timed part of a job: "enable" before it,
   "disable" after. */
static void perf_ctl(const char *cmd)
{
    const char *path = getenv("BENCH_PERF_CTL");
    if (!path || !*path)
        return;
    FILE *f = fopen(path, "w");
    if (!f)
        die("BENCH_PERF_CTL %s: %s", path, strerror(errno));
    fprintf(f, "%s\n", cmd);
    fclose(f);
}

/* ------------------------------------------------------------------ sgemm */

static double sgemm_gflops(int M, int N, int K, int reps)
{
    float *A = xmalloc((size_t)M * K * sizeof(float)), *B = xmalloc((size_t)K * N * sizeof(float)),
          *C = xmalloc((size_t)M * N * sizeof(float));
    Rng r;
    rng_seed(&r, 7);
    for (size_t i = 0; i < (size_t)M * K; i++)
        A[i] = (float)rng_uniform(&r) - 0.5f;
    for (size_t i = 0; i < (size_t)K * N; i++)
        B[i] = (float)rng_uniform(&r) - 0.5f;
    double flop = 2.0 * M * N * K;
    /* repeat small products inside one timing so that each timing lasts ~20 ms or more */
    int inner = (int)ceil(2e9 / flop * 0.01);
    if (inner < 1)
        inner = 1;
    double *g = xmalloc((size_t)reps * sizeof *g);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1, A, K, B, N, 0, C, N);
    for (int k = 0; k < reps; k++) {
        double t0 = clock_now();
        for (int i = 0; i < inner; i++)
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1, A, K, B, N, 0, C, N);
        g[k] = flop * inner / (clock_now() - t0) / 1e9;
    }
    double m = median(g, reps);
    free(g);
    free(A);
    free(B);
    free(C);
    return m;
}

static int cmd_sgemm(int argc, char **argv)
{
    long threads = 2, reps = 7;
    Opts o;
    opts_init(&o, "sgemm", argc, argv);
    while (opts_next(&o)) {
        if (opts_is(&o, "--threads"))
            threads = opts_long(&o, 1, 1024);
        else if (opts_is(&o, "--reps"))
            reps = opts_long(&o, 1, 1000);
        else
            opts_unknown(&o);
    }
    nn_set_threads((int)threads);
    /* squares, then shapes of the reference model's training step (B = 64, T·B = 640,
       Vt = 16699): the decoder's per-step gate products, the output projection forward
       and its two backward products */
    static const int shapes[][3] = {
        {256, 256, 256},  {512, 512, 512},  {1024, 1024, 1024}, {2048, 2048, 2048},
        {64, 768, 256},   {64, 768, 768},   {640, 16699, 256},  {640, 256, 16699},
        {16699, 256, 640},
    };
    Buf b = {0};
    buf_printf(&b, "{\"job\": \"sgemm\", \"threads\": %ld, \"reps\": %ld, \"results\": [", threads, reps);
    double peak = 0;
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        int M = shapes[i][0], N = shapes[i][1], K = shapes[i][2];
        double g = sgemm_gflops(M, N, K, (int)reps);
        if (M == N && N == K && g > peak)
            peak = g;
        buf_printf(&b, "%s{\"m\": %d, \"n\": %d, \"k\": %d, \"gflops\": %.2f}", i ? ", " : "", M, N, K, g);
    }
    buf_printf(&b, "], \"peak_gflops\": %.2f", peak);
    emit(&b);
    return 0;
}

/* ------------------------------------------------------------------ data */

static char *st_name(const char *fmt, int k)
{
    char tmp[64];
    snprintf(tmp, sizeof tmp, fmt, k);
    return xstrdup(tmp);
}

static int64_t *to_i64(const int *v, size_t n)
{
    int64_t *o = xmalloc((n ? n : 1) * sizeof *o);
    for (size_t i = 0; i < n; i++)
        o[i] = v[i];
    return o;
}

/* The four tensors of batch k (b%d.src, .src_len, .tgt_in, .tgt_out) as I64, into ts[0..4). */
static void batch_tensors(StTensor *ts, int k, const Batch *b)
{
    const int *arr[4] = {b->src, b->src_len, b->tgt_in, b->tgt_out};
    static const char *const names[4] = {"b%d.src", "b%d.src_len", "b%d.tgt_in", "b%d.tgt_out"};
    int rows[4] = {b->S, 0, b->T, b->T};
    for (int j = 0; j < 4; j++) {
        StTensor *t = &ts[j];
        t->name = st_name(names[j], k);
        t->dtype = ST_I64;
        t->ndim = j == 1 ? 1 : 2;
        if (j == 1)
            t->shape[0] = b->B;
        else {
            t->shape[0] = rows[j];
            t->shape[1] = b->B;
        }
        t->data = to_i64(arr[j], (size_t)(j == 1 ? 1 : rows[j]) * b->B);
    }
}

/* Writes OUTDIR/NAME from the 4·nbatch tensors of batch_tensors, and frees them. */
static void batches_save(const char *out, const char *name, StTensor *ts, long nbatch, int vs, int vt, long seed,
                         long long ntok)
{
    char nb[32], vsz[32], vtz[32], sd[32], nt[32];
    snprintf(nb, sizeof nb, "%ld", nbatch);
    snprintf(vsz, sizeof vsz, "%d", vs);
    snprintf(vtz, sizeof vtz, "%d", vt);
    snprintf(sd, sizeof sd, "%ld", seed);
    snprintf(nt, sizeof nt, "%lld", ntok);
    const char *keys[] = {ST_KEY_FORMAT, "bench.batches", "bench.src_vocab", "bench.tgt_vocab", "bench.seed",
                          "bench.tokens"};
    const char *vals[] = {"s2s-bench-batches-1", nb, vsz, vtz, sd, nt};
    Err e;
    char *path = path_join(out, name);
    if (st_write(path, ts, (size_t)nbatch * 4, keys, vals, 6, &e) != 0)
        die_err(&e);
    free(path);
    for (long i = 0; i < nbatch * 4; i++) {
        free((char *)ts[i].name);
        free((void *)ts[i].data);
    }
}

/* Writes OUTDIR/dec.safetensors: n sentences, their ids one after another (total in
   all) and their lengths. */
static void sentences_save(const char *out, int64_t *ids, int64_t *lens, int n, size_t total)
{
    StTensor dt[2] = {
        {.name = "ids", .dtype = ST_I64, .ndim = 1, .shape = {(int64_t)total}, .data = ids},
        {.name = "len", .dtype = ST_I64, .ndim = 1, .shape = {n}, .data = lens},
    };
    const char *dkeys[] = {ST_KEY_FORMAT};
    const char *dvals[] = {"s2s-bench-sentences-1"};
    Err e;
    char *path = path_join(out, "dec.safetensors");
    if (st_write(path, dt, 2, dkeys, dvals, 1, &e) != 0)
        die_err(&e);
    free(path);
}

static int cmp_long_desc(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x < y) - (x > y);
}

/* The padded size of a batch of rows of d: rows × (longest source + longest target). */
static long batch_cells(const PairSet *d, const int *rows, int n)
{
    int s = 0, t = 0;
    for (int i = 0; i < n; i++) {
        if (pair_src_len(d, rows[i]) > s)
            s = pair_src_len(d, rows[i]);
        if (pair_tgt_len(d, rows[i]) + 1 > t)
            t = pair_tgt_len(d, rows[i]) + 1;
    }
    return (long)n * (s + t);
}

/* The k batches of a whole epoch of the plan with the most padded cells, in plan order
   (earlier batches first among equals), as batch_tensors; returns how many. */
static long longest_batches(const PairSet *d, const BatchOpts *bo, long seed, long k, BatchBuf *bb, StTensor *ts,
                            long long *ntok)
{
    BatchPlan plan = {0};
    Rng rng;
    Err e;
    rng_seed(&rng, (uint64_t)seed);
    if (batch_plan_start(&plan, d, bo, &rng, &e) != 0)
        die_err(&e);
    /* pass 1: the sizes of all batches; the k-th largest size and how many of it to take */
    long n = 0, cap = 1024, *cells = xmalloc((size_t)cap * sizeof *cells);
    const int *rows;
    int nrows, got;
    while ((got = batch_plan_next(&plan, &rows, &nrows, &e)) > 0) {
        if (n == cap)
            cells = xrealloc(cells, (size_t)(cap *= 2) * sizeof *cells);
        cells[n++] = batch_cells(d, rows, nrows);
    }
    if (got < 0)
        die_err(&e);
    batch_plan_free(&plan);
    if (k > n)
        k = n;
    long *sorted = xmalloc((size_t)(n ? n : 1) * sizeof *sorted);
    memcpy(sorted, cells, (size_t)n * sizeof *sorted);
    qsort(sorted, (size_t)n, sizeof *sorted, cmp_long_desc);
    long bar = k ? sorted[k - 1] : 0, above = 0;
    for (long i = 0; i < k; i++)
        above += sorted[i] > bar;
    long at_bar = k - above; /* batches of exactly the bar's size to take, the earliest */
    free(sorted);
    /* pass 2: the same plan again (same seed), keeping the chosen batches */
    rng_seed(&rng, (uint64_t)seed);
    if (batch_plan_start(&plan, d, bo, &rng, &e) != 0)
        die_err(&e);
    long kept = 0;
    for (long i = 0; i < n && kept < k; i++) {
        if (batch_plan_next(&plan, &rows, &nrows, &e) <= 0)
            die("longest batches: the plan changed between two passes");
        if (cells[i] < bar || (cells[i] == bar && at_bar-- <= 0))
            continue;
        Batch b;
        batch_fill(&b, bb, d, rows, nrows);
        *ntok += b.ntok;
        batch_tensors(&ts[kept * 4], (int)kept, &b);
        kept++;
    }
    batch_plan_free(&plan);
    free(cells);
    return kept;
}

static int cmd_data(int argc, char **argv)
{
    const char *dir = NULL, *out = NULL;
    long nbatch = 24, nsent = 640, seed = 1, bsize = 64, nlong = 0;
    Opts o;
    opts_init(&o, "data", argc, argv);
    while (opts_next(&o)) {
        if (opts_positional(&o))
            dir = opts_arg(&o, "DIR");
        else if (opts_is(&o, "-o"))
            out = opts_str(&o);
        else if (opts_is(&o, "--batches"))
            nbatch = opts_long(&o, 1, 100000);
        else if (opts_is(&o, "--sentences"))
            nsent = opts_long(&o, 1, 1000000);
        else if (opts_is(&o, "--seed"))
            seed = opts_long(&o, 0, 1L << 62);
        else if (opts_is(&o, "--batch"))
            bsize = opts_long(&o, 1, 100000);
        else if (opts_is(&o, "--longest"))
            nlong = opts_long(&o, 0, 100000);
        else
            opts_unknown(&o);
    }
    if (!dir || !out)
        die_usage("data: usage: bench data DIR -o OUTDIR");
    Err e;
    Prepared d;
    if (prepared_load(&d, dir, &e) != 0 || dir_ensure(out, &e) != 0)
        die_err(&e);

    /* the training plan of `s2s train --seed S --batch B`: its data generator is
       seeded with the seed itself */
    BatchOpts bo = {.batch = (int)bsize};
    BatchPlan plan = {0};
    Rng rng;
    rng_seed(&rng, (uint64_t)seed);
    if (batch_plan_start(&plan, &d.train.set, &bo, &rng, &e) != 0)
        die_err(&e);
    int mb, ms, mt;
    batch_limits(&d.train.set, &bo, &mb, &ms, &mt);
    BatchBuf bb;
    batch_buf_init(&bb, mb, ms, mt);
    StTensor *ts = xcalloc((size_t)nbatch * 4, sizeof *ts);
    long long ntok = 0;
    for (int k = 0; k < nbatch; k++) {
        Batch b;
        const int *rows;
        int nrows, got = batch_plan_next(&plan, &rows, &nrows, &e);
        if (got < 0)
            die_err(&e);
        if (got == 0) { /* the epoch has fewer batches */
            nbatch = k;
            break;
        }
        batch_fill(&b, &bb, &d.train.set, rows, nrows);
        ntok += b.ntok;
        batch_tensors(&ts[k * 4], k, &b);
    }
    int vs = (int)vocab_size(d.src_vocab), vt = (int)vocab_size(d.tgt_vocab);
    batches_save(out, "batches.safetensors", ts, nbatch, vs, vt, seed, ntok);
    free(ts);
    long long ltok = 0;
    long nl = 0;
    if (nlong > 0) {
        ts = xcalloc((size_t)nlong * 4, sizeof *ts);
        nl = longest_batches(&d.train.set, &bo, seed, nlong, &bb, ts, &ltok);
        batches_save(out, "longest.safetensors", ts, nl, vs, vt, seed, ltok);
        free(ts);
    }

    /* decoding sentences: the first distinct sources of the valid split */
    const Split *v = &d.valid;
    int n = (int)v->groups.n < nsent ? (int)v->groups.n : (int)nsent;
    size_t total = 0;
    for (int g = 0; g < n; g++)
        total += (size_t)v->gsrc_len[g];
    int64_t *ids = xmalloc((total ? total : 1) * sizeof *ids), *lens = xmalloc((size_t)n * sizeof *lens);
    Buf text = {0}, idtext = {0};
    size_t at = 0;
    for (int g = 0; g < n; g++) {
        lens[g] = v->gsrc_len[g];
        for (int i = 0; i < v->gsrc_len[g]; i++) {
            ids[at++] = v->gsrc[g][i];
            buf_printf(&idtext, "%s%d", i ? " " : "", v->gsrc[g][i]);
        }
        buf_putc(&idtext, '\n');
        const Pair *p = &v->text.pairs[v->groups.member[v->groups.start[g]]];
        buf_append(&text, p->src, p->src_len);
        buf_putc(&text, '\n');
    }
    sentences_save(out, ids, lens, n, total);
    char *path = path_join(out, "dec.txt");
    if (atomic_write(path, text.data, text.len, &e) != 0)
        die_err(&e);
    free(path);
    path = path_join(out, "dec.ids");
    if (atomic_write(path, idtext.data, idtext.len, &e) != 0)
        die_err(&e);
    free(path);
    buf_free(&idtext);
    Buf j = {0};
    buf_printf(&j, "{\"job\": \"data\", \"batches\": %ld, \"tokens\": %lld, \"longest_batches\": %ld, "
                   "\"longest_tokens\": %lld, \"sentences\": %d, \"src_tokens\": %zu, \"src_vocab\": %d, "
                   "\"tgt_vocab\": %d",
               nbatch, ntok, nl, ltok, n, total, vs, vt);
    emit(&j);
    buf_free(&text);
    free(ids);
    free(lens);
    batch_buf_free(&bb);
    batch_plan_free(&plan);
    prepared_free(&d);
    return 0;
}

/* Synthetic batches and sentences of one length: every source has len tokens and every
   target len tokens (<eos> included: len - 1 words), ids drawn uniformly from the
   vocabularies' words (the specials left out), so that a batch holds batch·len target
   tokens with no padding. */
static int cmd_synth(int argc, char **argv)
{
    const char *out = NULL;
    long vs = 0, vt = 0, len = 0, nbatch = 1, nsent = 0, seed = 1, bsize = 64;
    Opts o;
    opts_init(&o, "synth", argc, argv);
    while (opts_next(&o)) {
        if (opts_is(&o, "-o"))
            out = opts_str(&o);
        else if (opts_is(&o, "--src-vocab"))
            vs = opts_long(&o, VOCAB_EOS + 2, 1L << 24);
        else if (opts_is(&o, "--tgt-vocab"))
            vt = opts_long(&o, VOCAB_EOS + 2, 1L << 24);
        else if (opts_is(&o, "--len"))
            len = opts_long(&o, 1, 100000);
        else if (opts_is(&o, "--batches"))
            nbatch = opts_long(&o, 1, 100000);
        else if (opts_is(&o, "--sentences"))
            nsent = opts_long(&o, 0, 1000000);
        else if (opts_is(&o, "--seed"))
            seed = opts_long(&o, 0, 1L << 62);
        else if (opts_is(&o, "--batch"))
            bsize = opts_long(&o, 1, 100000);
        else
            opts_unknown(&o);
    }
    if (!out || !vs || !vt || !len)
        die_usage("synth: usage: bench synth -o OUTDIR --src-vocab N --tgt-vocab N --len L");
    Err e;
    if (dir_ensure(out, &e) != 0)
        die_err(&e);
    Rng r;
    rng_seed(&r, (uint64_t)seed);
#define WORD(v) (VOCAB_EOS + 1 + (int)rng_below(&r, (uint64_t)(v) - VOCAB_EOS - 1))
    int B = (int)bsize, L = (int)len;
    size_t cells = (size_t)L * (size_t)B;
    int *src = xmalloc(cells * sizeof *src), *src_len = xmalloc((size_t)B * sizeof *src_len),
        *tgt_in = xmalloc(cells * sizeof *tgt_in), *tgt_out = xmalloc(cells * sizeof *tgt_out);
    StTensor *ts = xcalloc((size_t)nbatch * 4, sizeof *ts);
    for (int k = 0; k < nbatch; k++) {
        for (size_t i = 0; i < cells; i++)
            src[i] = WORD(vs);
        for (int b = 0; b < B; b++) {
            src_len[b] = L;
            tgt_in[b] = VOCAB_BOS;
            for (int t = 0; t < L - 1; t++) {
                int y = WORD(vt);
                tgt_out[(size_t)t * B + b] = y;
                tgt_in[(size_t)(t + 1) * B + b] = y;
            }
            tgt_out[(size_t)(L - 1) * B + b] = VOCAB_EOS;
        }
        Batch bt = {.B = B, .S = L, .T = L, .src = src, .src_len = src_len, .tgt_in = tgt_in, .tgt_out = tgt_out};
        batch_tensors(&ts[k * 4], k, &bt);
    }
    long long ntok = (long long)nbatch * (long long)cells;
    batches_save(out, "batches.safetensors", ts, nbatch, (int)vs, (int)vt, seed, ntok);
    free(ts);
    free(src);
    free(src_len);
    free(tgt_in);
    free(tgt_out);
    if (nsent > 0) {
        size_t total = (size_t)nsent * (size_t)L;
        int64_t *ids = xmalloc(total * sizeof *ids), *lens = xmalloc((size_t)nsent * sizeof *lens);
        for (size_t i = 0; i < total; i++)
            ids[i] = WORD(vs);
        for (long i = 0; i < nsent; i++)
            lens[i] = L;
        sentences_save(out, ids, lens, (int)nsent, total);
        free(ids);
        free(lens);
    }
#undef WORD
    Buf j = {0};
    buf_printf(&j, "{\"job\": \"synth\", \"len\": %d, \"batch\": %d, \"batches\": %ld, \"tokens\": %lld, "
                   "\"sentences\": %ld, \"src_vocab\": %ld, \"tgt_vocab\": %ld",
               L, B, nbatch, ntok, nsent, vs, vt);
    emit(&j);
    return 0;
}

/* ------------------------------------------------------------------ batches in memory */

typedef struct Batches {
    int n;
    Batch *b;
    int vs, vt;
    int max_b, max_s, max_t;
} Batches;

static int *from_i64(const StTensor *t)
{
    size_t n = (size_t)st_numel(t);
    int *v = xmalloc((n ? n : 1) * sizeof *v);
    const int64_t *s = t->data;
    for (size_t i = 0; i < n; i++)
        v[i] = (int)s[i];
    return v;
}

static const StTensor *need(const StFile *f, const char *path, const char *fmt, int k, StDtype dt, int ndim)
{
    char name[64];
    snprintf(name, sizeof name, fmt, k);
    const StTensor *t = st_tensor(f, name);
    if (!t || t->dtype != dt || t->ndim != ndim)
        die("%s: tensor '%s' missing or not %s with %d dimensions", path, name, st_dtype_name(dt), ndim);
    return t;
}

static long meta_long(const StFile *f, const char *path, const char *key)
{
    const char *v = st_meta(f, key);
    char *end;
    long x = v ? strtol(v, &end, 10) : 0;
    if (!v || *end || x <= 0)
        die("%s: metadata '%s' missing or not a positive count", path, key);
    return x;
}

static void batches_load(Batches *bs, const char *path)
{
    Err e;
    StFile *f;
    if (st_load(&f, path, "s2s-bench-batches-1", &e) != 0)
        die_err(&e);
    bs->n = (int)meta_long(f, path, "bench.batches");
    bs->vs = (int)meta_long(f, path, "bench.src_vocab");
    bs->vt = (int)meta_long(f, path, "bench.tgt_vocab");
    bs->b = xcalloc((size_t)bs->n, sizeof *bs->b);
    bs->max_b = bs->max_s = bs->max_t = 0;
    for (int k = 0; k < bs->n; k++) {
        Batch *b = &bs->b[k];
        const StTensor *src = need(f, path, "b%d.src", k, ST_I64, 2), *len = need(f, path, "b%d.src_len", k, ST_I64, 1),
                       *ti = need(f, path, "b%d.tgt_in", k, ST_I64, 2), *to = need(f, path, "b%d.tgt_out", k, ST_I64, 2);
        b->S = (int)src->shape[0];
        b->B = (int)src->shape[1];
        b->T = (int)ti->shape[0];
        if (len->shape[0] != b->B || ti->shape[1] != b->B || to->shape[0] != b->T || to->shape[1] != b->B)
            die("%s: batch %d: inconsistent shapes", path, k);
        b->src = from_i64(src);
        b->src_len = from_i64(len);
        b->tgt_in = from_i64(ti);
        b->tgt_out = from_i64(to);
        b->ntok = 0;
        for (int i = 0; i < b->T * b->B; i++)
            b->ntok += b->tgt_out[i] != 0;
        for (int r = 0; r < b->B; r++)
            if (b->src_len[r] < 1 || b->src_len[r] > b->S || (r && b->src_len[r] > b->src_len[r - 1]))
                die("%s: batch %d: source lengths must be in 1..S and descending", path, k);
        bs->max_b = b->B > bs->max_b ? b->B : bs->max_b;
        bs->max_s = b->S > bs->max_s ? b->S : bs->max_s;
        bs->max_t = b->T > bs->max_t ? b->T : bs->max_t;
    }
    st_close(f);
}

static void batches_free(Batches *bs)
{
    for (int k = 0; k < bs->n; k++) {
        free(bs->b[k].src);
        free(bs->b[k].src_len);
        free(bs->b[k].tgt_in);
        free(bs->b[k].tgt_out);
    }
    free(bs->b);
}

/* ------------------------------------------------------------------ train */

static int cmd_train(int argc, char **argv)
{
    const char *path = NULL, *init = NULL;
    long threads = 2, warmup = 2, runs = 3, seed = 1, loop = 1;
    bool bf16 = false, on_pool = true;
    ModelConfig cfg = model_config_default();
    Opts o;
    opts_init(&o, "train", argc, argv);
    while (opts_next(&o)) {
        if (opts_positional(&o))
            path = opts_arg(&o, "BATCHES");
        else if (opts_is(&o, "--init"))
            init = opts_str(&o);
        else if (opts_is(&o, "--threads"))
            threads = opts_long(&o, 0, 1024);
        else if (opts_is(&o, "--warmup"))
            warmup = opts_long(&o, 0, 100000);
        else if (opts_is(&o, "--runs"))
            runs = opts_long(&o, 1, 1000);
        else if (opts_is(&o, "--loop"))
            loop = opts_long(&o, 1, 1000);
        else if (opts_is(&o, "--seed"))
            seed = opts_long(&o, 0, 1L << 62);
        else if (opts_is(&o, "--precision")) {
            const char *p = opts_str(&o);
            if (strcmp(p, "f32") && strcmp(p, "bf16"))
                die_usage("train: option --precision: expected f32 or bf16, got '%s'", p);
            bf16 = strcmp(p, "bf16") == 0;
        } else if (opts_is(&o, "--products")) {
            const char *p = opts_str(&o);
            if (strcmp(p, "pool") && strcmp(p, "own"))
                die_usage("train: option --products: expected pool or own, got '%s'", p);
            on_pool = strcmp(p, "pool") == 0;
        } else if (opts_is(&o, "--cell")) {
            const char *c = opts_str(&o);
            if (strcmp(c, "gru") && strcmp(c, "lstm"))
                die_usage("train: option --cell: expected gru or lstm, got '%s'", c);
            cfg.cell = strcmp(c, "gru") ? CELL_LSTM : CELL_GRU;
        } else if (opts_is(&o, "--attention")) {
            const char *a = opts_str(&o);
            int k = attn_from_name(a);
            if (k < 0)
                die_usage("train: option --attention: unknown mechanism '%s'", a);
            cfg.attention = (AttnKind)k;
        } else if (opts_is(&o, "--input-feed")) {
            opts_bool(&o);
            cfg.input_feed = true;
        } else {
            opts_unknown(&o);
        }
    }
    if (!path)
        die_usage("train: usage: bench train BATCHES [--init MODEL | model options]");
    /* --threads 0 leaves the thread count to OpenBLAS (OPENBLAS_NUM_THREADS) */
    int nthreads = threads > 0 ? nn_set_threads((int)threads) : openblas_get_num_threads();
    Err pe;
    if (nn_set_precision(bf16 ? PREC_BF16 : PREC_F32, &pe) != 0)
        die_err(&pe);
    on_pool = on_pool && threads > 1; /* as s2s train (src/train/trainer.c) */
    if (on_pool)
        nn_products_on_pool(true);
    Batches bs;
    batches_load(&bs, path);
    if (warmup > bs.n)
        warmup = bs.n;
    Err e;
    ModelFile mf = {0};
    Model *m;
    Model own;
    if (init) {
        if (model_file_load(&mf, init, true, &e) != 0)
            die_err(&e);
        m = &mf.model;
        if (m->cfg.src_vocab != bs.vs || m->cfg.tgt_vocab != bs.vt)
            die("%s: vocabulary sizes %d/%d differ from the batches' %d/%d", init, m->cfg.src_vocab,
                m->cfg.tgt_vocab, bs.vs, bs.vt);
    } else {
        cfg.src_vocab = bs.vs;
        cfg.tgt_vocab = bs.vt;
        if (model_config_check(&cfg, &e) != 0)
            die_err(&e);
        model_init(&own, &cfg, true);
        Rng r;
        rng_seed(&r, (uint64_t)seed ^ 0xd1b54a32d192ed03ULL);
        model_init_random(&own, &r);
        m = &own;
    }
    size_t np = m->layout.total;
    Work *w = work_new(m, bs.max_b, bs.max_s, bs.max_t, true);
    Adam adam;
    optim_adam_init(&adam, np, OPTIM_BETA1, OPTIM_BETA2, OPTIM_EPS, 0);
    Rng drop;
    rng_seed(&drop, (uint64_t)seed ^ 0x9e3779b97f4a7c15ULL);

    /* Sanity: the label-smoothed loss per token of batch 0 with dropout off, before any
       update (the PyTorch side prints the same number for the same weights). */
    double loss0 = model_forward(m, w, &bs.b[0], NULL) / (double)bs.b[0].ntok;

    double last_loss = 0;
    bool dropout = m->cfg.dropout > 0;
    /* the step of s2s train (src/train/step.c): clip 1.0, Adam 1e-3 */
    StepOpts so = {.drop = dropout ? &drop : NULL, .clip = 1.0, .lr = 1e-3};
#define STEP(bp) (last_loss = train_step(m, w, &adam, (bp), &so).loss / (double)(bp)->ntok)
    for (int k = 0; k < warmup; k++)
        STEP(&bs.b[k]);

    long long tokens = 0;
    double flops = 0;
    for (int k = 0; k < bs.n; k++) {
        tokens += bs.b[k].ntok;
        flops += flops_train_batch(&m->cfg, &bs.b[k]);
    }
    tokens *= loop;
    flops *= loop;
    double *tok_s = xmalloc((size_t)runs * sizeof *tok_s), *secs = xmalloc((size_t)runs * sizeof *secs);
    double u0, s0, u1, s1, wall = 0;
    perf_ctl("enable");
    cpu_times(&u0, &s0);
    for (int r = 0; r < runs; r++) {
        double t0 = clock_now();
        for (int l = 0; l < loop; l++)
            for (int k = 0; k < bs.n; k++)
                STEP(&bs.b[k]);
        secs[r] = clock_now() - t0;
        wall += secs[r];
        tok_s[r] = (double)tokens / secs[r];
    }
#undef STEP
    cpu_times(&u1, &s1);
    perf_ctl("disable");
    double med = median(tok_s, (int)runs);
    Buf b = {0};
    Buf cj = {0};
    model_config_json(&m->cfg, &(TextConfig){0}, &cj);
    buf_printf(&b, "{\"job\": \"train\", \"impl\": \"s2s\", \"threads\": %d, \"precision\": \"%s\", "
                   "\"products\": \"%s\", \"batches\": %d, \"warmup\": %ld, \"loop\": %ld, \"tokens_per_run\": %lld, \"params\": %zu, "
                   "\"config\": %s",
               nthreads, bf16 ? "bf16" : "f32", on_pool ? "pool" : "own", bs.n, warmup, loop, tokens, np, cj.data);
    json_list(&b, "tok_s_runs", tok_s, (int)runs, "%.1f");
    json_list(&b, "seconds_runs", secs, (int)runs, "%.4f");
    buf_printf(&b, ", \"tok_s\": %.1f, \"flops_per_tok\": %.0f, \"gflops\": %.2f, \"loss0\": %.6f, "
                   "\"last_loss\": %.6f, \"wall_s\": %.3f, \"user_s\": %.3f, \"sys_s\": %.3f, "
                   "\"maxrss_kb\": %ld",
               med, flops / (double)tokens, flops / (double)tokens * med / 1e9, loss0, last_loss, wall, u1 - u0,
               s1 - s0, maxrss_kb());
    emit(&b);
    buf_free(&cj);
    free(tok_s);
    free(secs);
    optim_adam_free(&adam);
    work_free(w);
    if (init)
        model_file_free(&mf);
    else
        model_free(&own);
    batches_free(&bs);
    return 0;
}

/* ------------------------------------------------------------------ greedy */

static int cmd_greedy(int argc, char **argv)
{
    const char *model = NULL, *dec = NULL;
    long threads = 2, batch = 1, max_len = 10, runs = 3, first = 0;
    Precision prec = PREC_F32;
    Opts o;
    opts_init(&o, "greedy", argc, argv);
    while (opts_next(&o)) {
        if (opts_positional(&o)) {
            if (!model)
                model = opts_arg(&o, "MODEL");
            else
                dec = opts_arg(&o, "DEC");
        } else if (opts_is(&o, "--threads"))
            threads = opts_long(&o, 1, 1024);
        else if (opts_is(&o, "--batch"))
            batch = opts_long(&o, 1, 100000);
        else if (opts_is(&o, "--max-len"))
            max_len = opts_long(&o, 0, 10000);
        else if (opts_is(&o, "--runs"))
            runs = opts_long(&o, 1, 1000);
        else if (opts_is(&o, "--first"))
            first = opts_long(&o, 1, 1L << 30);
        else if (opts_is(&o, "--precision")) {
            int k = precision_from_name(opts_str(&o));
            if (k < 0)
                die_usage("greedy: --precision must be f32, bf16 or int8");
            prec = (Precision)k;
        } else if (opts_is(&o, "--int8-kernel")) {
            const char *v = opts_str(&o);
            int k = 0;
            while (k < Q8_KERNELS && strcmp(v, q8_kernel_names[k]) != 0)
                k++;
            if (k == Q8_KERNELS || !nn_q8_kernel_set(k))
                die_usage("greedy: --int8-kernel: '%s' is not a kernel this CPU runs", v);
        } else
            opts_unknown(&o);
    }
    if (!model || !dec)
        die_usage("greedy: usage: bench greedy MODEL DEC");
    nn_set_threads((int)threads);
    Err e;
    StFile *f;
    if (st_load(&f, dec, "s2s-bench-sentences-1", &e) != 0)
        die_err(&e);
    const StTensor *ti = st_tensor(f, "ids"), *tl = st_tensor(f, "len");
    if (!ti || !tl || ti->dtype != ST_I64 || tl->dtype != ST_I64 || ti->ndim != 1 || tl->ndim != 1)
        die("%s: expected I64 tensors 'ids' and 'len'", dec);
    int n = (int)tl->shape[0];
    int *ids = from_i64(ti), *len = from_i64(tl);
    int **src = xmalloc((size_t)n * sizeof *src);
    size_t at = 0;
    for (int i = 0; i < n; i++) {
        src[i] = ids + at;
        at += (size_t)len[i];
    }
    if (at != (size_t)st_numel(ti))
        die("%s: lengths do not add up to the ids", dec);
    st_close(f);
    if (first && first < n)
        n = (int)first;
    PairSet set = {.n = n, .src = src, .src_len = len};

    double t0 = clock_now();
    ModelFile mf;
    if (model_file_load(&mf, model, false, &e) != 0)
        die_err(&e);
    model_set_precision(&mf.model, prec);
    double load_s = clock_now() - t0;
    double *sps = xmalloc((size_t)runs * sizeof *sps);
    long out_tokens = 0;
    uint64_t hash = 0;
    /* one untimed pass first: page faults of the Work and first-touch costs */
    Hyps h;
    if (greedy_decode(&mf.model, &set, (int)batch, (int)max_len, &h, &e) != 0)
        die_err(&e);
    hyps_free(&h);
    perf_ctl("enable");
    double u0, s0, u1, s1;
    cpu_times(&u0, &s0);
    for (int r = 0; r < runs; r++) {
        double t = clock_now();
        if (greedy_decode(&mf.model, &set, (int)batch, (int)max_len, &h, &e) != 0)
            die_err(&e);
        sps[r] = n / (clock_now() - t);
        if (r == 0) {
            for (int i = 0; i < h.n; i++)
                out_tokens += h.len[i];
            hash = hyps_hash(&h);
        }
        hyps_free(&h);
    }
    cpu_times(&u1, &s1);
    perf_ctl("disable");
    Buf b = {0};
    buf_printf(&b, "{\"job\": \"greedy\", \"impl\": \"s2s\", \"threads\": %ld, \"batch\": %ld, \"max_len\": %ld, "
                   "\"sentences\": %d, \"load_s\": %.4f",
               threads, batch, max_len, n, load_s);
    json_list(&b, "sent_s_runs", sps, (int)runs, "%.2f");
    buf_printf(&b, ", \"sent_s\": %.2f, \"out_tokens\": %ld, \"out_hash\": \"%016llx\", \"user_s\": %.3f, "
                   "\"sys_s\": %.3f, \"maxrss_kb\": %ld",
               median(sps, (int)runs), out_tokens, (unsigned long long)hash, u1 - u0, s1 - s0, maxrss_kb());
    emit(&b);
    free(sps);
    model_file_free(&mf);
    free(src);
    free(ids);
    free(len);
    return 0;
}

/* ------------------------------------------------------------------ spawn */

static int cmd_spawn(int argc, char **argv)
{
    long runs = 5;
    int i = 1;
    for (; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0) {
            i++;
            break;
        }
        if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
            char *end;
            runs = strtol(argv[++i], &end, 10);
            if (*end || runs < 1 || runs > 10000)
                die_usage("spawn: option --runs: expected 1..10000, got '%s'", argv[i]);
        } else {
            die_usage("spawn: usage: bench spawn [--runs R] -- COMMAND [ARGS...]");
        }
    }
    if (i >= argc)
        die_usage("spawn: missing COMMAND");
    double *wall = xmalloc((size_t)runs * sizeof *wall), *user = xmalloc((size_t)runs * sizeof *user),
           *sys = xmalloc((size_t)runs * sizeof *sys);
    long rss = 0;
    for (int r = 0; r < runs; r++) {
        double t0 = clock_now();
        pid_t pid = fork();
        if (pid < 0)
            die("spawn: fork: %s", strerror(errno));
        if (pid == 0) {
            int fd = open("/dev/null", O_WRONLY);
            if (fd >= 0)
                dup2(fd, 1);
            execvp(argv[i], argv + i);
            fprintf(stderr, "bench: spawn: %s: %s\n", argv[i], strerror(errno));
            _exit(127);
        }
        int status;
        struct rusage ru;
        if (wait4(pid, &status, 0, &ru) < 0)
            die("spawn: wait4: %s", strerror(errno));
        wall[r] = clock_now() - t0;
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
            die("spawn: %s failed (status %d)", argv[i], status);
        user[r] = tv_s(ru.ru_utime);
        sys[r] = tv_s(ru.ru_stime);
        if (ru.ru_maxrss > rss)
            rss = ru.ru_maxrss;
    }
    Buf b = {0};
    buf_printf(&b, "{\"job\": \"spawn\", \"runs\": %ld", runs);
    json_list(&b, "wall_runs", wall, (int)runs, "%.4f");
    buf_printf(&b, ", \"wall_s\": %.4f, \"user_s\": %.4f, \"sys_s\": %.4f, \"maxrss_kb\": %ld",
               median(wall, (int)runs), median(user, (int)runs), median(sys, (int)runs), rss);
    emit(&b);
    free(wall);
    free(user);
    free(sys);
    return 0;
}

/* ------------------------------------------------------------------ main */

int main(int argc, char **argv)
{
    static const char usage[] =
        "usage: bench sgemm|data|synth|train|greedy|spawn ... (see the top of bench/bench.c)\n";
    if (argc < 2 || strcmp(argv[1], "--help") == 0) {
        fputs(usage, argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    const char *c = argv[1];
    if (strcmp(c, "sgemm") == 0)
        return cmd_sgemm(argc - 1, argv + 1);
    if (strcmp(c, "data") == 0)
        return cmd_data(argc - 1, argv + 1);
    if (strcmp(c, "synth") == 0)
        return cmd_synth(argc - 1, argv + 1);
    if (strcmp(c, "train") == 0)
        return cmd_train(argc - 1, argv + 1);
    if (strcmp(c, "greedy") == 0)
        return cmd_greedy(argc - 1, argv + 1);
    if (strcmp(c, "spawn") == 0)
        return cmd_spawn(argc - 1, argv + 1);
    die_usage("unknown benchmark '%s' (sgemm, data, synth, train, greedy, spawn)", c);
}
