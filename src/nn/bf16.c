#include "nn/bf16.h"

#include <dlfcn.h>
#include <oneapi/dnnl/dnnl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn/parallel.h"

/* oneDNN is opened on first use (dlopen), so that the commands that never train in bf16
   neither map its 40 MB nor pay for loading it and the C++ and OpenMP runtimes it
   brings; the functions s2s calls, by name. */
#define DNNL_FUNCS(X)                                                                                          \
    X(dnnl_get_effective_cpu_isa) X(dnnl_engine_create) X(dnnl_stream_create) X(dnnl_memory_desc_init_by_tag) \
    X(dnnl_matmul_desc_init) X(dnnl_primitive_attr_create) X(dnnl_post_ops_create) X(dnnl_post_ops_append_sum)  \
    X(dnnl_primitive_attr_set_post_ops) X(dnnl_post_ops_destroy) X(dnnl_primitive_desc_create)                 \
    X(dnnl_primitive_attr_destroy) X(dnnl_primitive_create) X(dnnl_primitive_desc_destroy) X(dnnl_memory_create) \
    X(dnnl_primitive_execute) X(dnnl_stream_wait) X(dnnl_memory_destroy)
#define DNNL_FIELD(f) __typeof__(f) *f;
static struct {
    DNNL_FUNCS(DNNL_FIELD)
    void (*omp_set_num_threads)(int); /* OpenMP's, which oneDNN's Debian build runs on */
} D;
static int opened; /* 0: not tried, 1: open, -1: absent */
static char why[256];  /* with -1: dlerror's words */
static int want_threads = 1;

/* Opens oneDNN; false when the library or one of its functions is missing. */
static bool dnnl_open(void)
{
    if (opened)
        return opened > 0;
    opened = -1;
    /* OpenMP's threads sleep as soon as a product ends instead of spinning on the cores
       that s2s's own threads need next (libgomp reads this when it loads, with oneDNN):
       the Transformer's bf16 step 3,124-3,381 -> 3,636-3,764 tokens/s on 2 cores. The
       user's own setting wins. */
    if (!getenv("OMP_WAIT_POLICY") && !getenv("GOMP_SPINCOUNT"))
        setenv("OMP_WAIT_POLICY", "passive", 0);
    void *h = dlopen("libdnnl.so.2", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(why, sizeof why, "%s", dlerror());
        return false;
    }
#define DNNL_LOAD(f)                                                                                           \
    if (!(*(void **)&D.f = dlsym(h, #f))) {                                                                    \
        snprintf(why, sizeof why, "libdnnl.so.2 lacks " #f);                                                   \
        return false;                                                                                          \
    }
    DNNL_FUNCS(DNNL_LOAD)
#undef DNNL_LOAD
    *(void **)&D.omp_set_num_threads = dlsym(h, "omp_set_num_threads");
    if (D.omp_set_num_threads)
        D.omp_set_num_threads(want_threads);
    opened = 1;
    return true;
}

static Precision precision = PREC_F32;
static dnnl_engine_t engine;
static dnnl_stream_t stream;
/* One primitive for every M, N and K (given at each call), by [trans_a][trans_b][C +=]:
   A and B dense as stored (row-major, or column-major where transposed), C dense
   row-major; the sum post-op accumulates. (Strides given at run time too would get
   oneDNN's reference implementation, a hundred times slower.) */
static dnnl_primitive_t prim[2][2][2];
static bool made;
static uint16_t *buf[2];
static size_t cap[2];

#define DNNL_OK(call) CHECK((call) == dnnl_success)

bool nn_bf16_native(void)
{
    if (!dnnl_open())
        return false;
    dnnl_cpu_isa_t isa = D.dnnl_get_effective_cpu_isa();
    return ((unsigned)isa & (unsigned)dnnl_cpu_isa_avx512_core_bf16) == (unsigned)dnnl_cpu_isa_avx512_core_bf16;
}

/* The primitive of prim[ta][tb][acc]; NULL where oneDNN has none. */
static dnnl_primitive_t make_prim(bool ta, bool tb, bool acc)
{
    const dnnl_dim_t R = DNNL_RUNTIME_DIM_VAL;
    dnnl_dims_t dims = {R, R};
    dnnl_memory_desc_t a, b, c;
    DNNL_OK(D.dnnl_memory_desc_init_by_tag(&a, 2, dims, dnnl_bf16, ta ? dnnl_ba : dnnl_ab));
    DNNL_OK(D.dnnl_memory_desc_init_by_tag(&b, 2, dims, dnnl_bf16, tb ? dnnl_ba : dnnl_ab));
    DNNL_OK(D.dnnl_memory_desc_init_by_tag(&c, 2, dims, dnnl_f32, dnnl_ab));
    dnnl_matmul_desc_t md;
    DNNL_OK(D.dnnl_matmul_desc_init(&md, &a, &b, NULL, &c));
    dnnl_primitive_attr_t attr;
    DNNL_OK(D.dnnl_primitive_attr_create(&attr));
    if (acc) {
        dnnl_post_ops_t po;
        DNNL_OK(D.dnnl_post_ops_create(&po));
        DNNL_OK(D.dnnl_post_ops_append_sum(po, 1.0f));
        DNNL_OK(D.dnnl_primitive_attr_set_post_ops(attr, po));
        D.dnnl_post_ops_destroy(po);
    }
    dnnl_primitive_desc_t pd;
    dnnl_status_t st = D.dnnl_primitive_desc_create(&pd, &md, attr, engine, NULL);
    D.dnnl_primitive_attr_destroy(attr);
    if (st != dnnl_success)
        return NULL;
    dnnl_primitive_t p = NULL;
    st = D.dnnl_primitive_create(&p, pd);
    D.dnnl_primitive_desc_destroy(pd);
    return st == dnnl_success ? p : NULL;
}

int nn_set_precision(Precision p, Err *e)
{
    CHECK(p == PREC_F32 || p == PREC_BF16);
    if (p == PREC_BF16 && !made) {
        if (!dnnl_open())
            return err_set(e, "bf16 products need oneDNN (Debian's libdnnl2): %s", why);
        if (!nn_bf16_native())
            return err_set(e, "bf16 products need a CPU with bf16 instructions (AVX512-BF16 or AMX); this one has "
                              "none");
        if (!engine) {
            DNNL_OK(D.dnnl_engine_create(&engine, dnnl_cpu, 0));
            DNNL_OK(D.dnnl_stream_create(&stream, engine, dnnl_stream_default_flags));
        }
        for (int k = 0; k < 8; k++)
            if (!(prim[k >> 2][(k >> 1) & 1][k & 1] = make_prim(k >> 2, (k >> 1) & 1, k & 1)))
                return err_set(e, "oneDNN has no bf16 matrix product for this CPU: use --precision f32");
        made = true;
    }
    precision = p;
    return 0;
}

Precision nn_precision(void)
{
    return precision;
}

void nn_bf16_threads(int n)
{
    want_threads = n > 0 ? n : 1;
    if (opened > 0 && D.omp_set_num_threads)
        D.omp_set_num_threads(want_threads);
}

/* Rows [lo, hi) of a rows × cols matrix at src (leading dimension ld) rounded into dst
   (leading dimension cols). */
typedef struct Round {
    const float *src;
    size_t ld, cols;
    uint16_t *dst;
} Round;

NN_SIMD static void round_rows(void *ctx, size_t lo, size_t hi)
{
    const Round *r = ctx;
    for (size_t i = lo; i < hi; i++) {
        const float *restrict s = r->src + i * r->ld;
        uint16_t *restrict d = r->dst + i * r->cols;
        for (size_t j = 0; j < r->cols; j++)
            d[j] = nn_bf16_from_float(s[j]);
    }
}

/* nn_bf16_fixed_begin: the floats that stay fixed, their bf16 forms at the same offsets
   of `mirror`, and which matrices (offset, length) of them are rounded in this
   generation (an open-addressing table; an entry of an older generation is free). */
static const float *fixed;
static size_t nfixed, mirror_cap;
static uint16_t *mirror;
enum { MARKS = 4096 };
static struct {
    size_t off, n;
    unsigned gen;
} marks[MARKS];
static unsigned gen;

void nn_bf16_fixed_begin(const float *p, size_t n)
{
    if (n > mirror_cap) {
        free(mirror);
        mirror_cap = n;
        mirror = xmalloc_array(n, sizeof *mirror);
    }
    fixed = p;
    nfixed = n;
    gen++;
    if (gen == 0) { /* after 2^32 passes: every entry free again */
        memset(marks, 0, sizeof marks);
        gen = 1;
    }
}

void nn_bf16_fixed_end(void)
{
    fixed = NULL;
}

static void round_into(uint16_t *dst, const float *src, int rows, int cols, int ld)
{
    Round r = {.src = src, .ld = (size_t)ld, .cols = (size_t)cols, .dst = dst};
    /* 32 K elements or more a thread */
    nn_parallel_for((size_t)rows, 32768 / (size_t)cols + 1, round_rows, &r);
}

/* The bf16 form of a dense matrix of n floats at src among the fixed ones, rounded
   now or earlier in this pass; NULL when the table is full. */
static const uint16_t *fixed_rounded(const float *src, int rows, int cols)
{
    size_t off = (size_t)(src - fixed), n = (size_t)rows * (size_t)cols;
    size_t h = (size_t)(((uint64_t)off * 0x9e3779b97f4a7c15ULL) >> 52);
    for (int probe = 0; probe < MARKS; probe++, h = (h + 1) % MARKS) {
        if (marks[h].gen == gen && marks[h].off == off && marks[h].n == n)
            return mirror + off;
        if (marks[h].gen != gen) {
            round_into(mirror + off, src, rows, cols, cols);
            marks[h].off = off;
            marks[h].n = n;
            marks[h].gen = gen;
            return mirror + off;
        }
    }
    return NULL;
}

/* The rows × cols matrix at src (leading dimension ld) in bf16, in buffer k (or kept,
   when it is among the fixed floats). */
static const uint16_t *rounded(int k, const float *src, int rows, int cols, int ld)
{
    size_t n = (size_t)rows * (size_t)cols;
    if (fixed && ld == cols && src >= fixed && n <= nfixed && (size_t)(src - fixed) <= nfixed - n) {
        const uint16_t *kept = fixed_rounded(src, rows, cols);
        if (kept)
            return kept;
    }
    if (n > cap[k]) {
        free(buf[k]);
        cap[k] = n + n / 4;
        buf[k] = xmalloc_array(cap[k], sizeof *buf[k]);
    }
    round_into(buf[k], src, rows, cols, ld);
    return buf[k];
}

static dnnl_memory_t memory(dnnl_dim_t rows, dnnl_dim_t cols, bool trans, dnnl_data_type_t t, const void *data)
{
    dnnl_dims_t dims = {rows, cols};
    dnnl_memory_desc_t md;
    DNNL_OK(D.dnnl_memory_desc_init_by_tag(&md, 2, dims, t, trans ? dnnl_ba : dnnl_ab));
    dnnl_memory_t m;
    DNNL_OK(D.dnnl_memory_create(&m, &md, engine, (void *)data));
    return m;
}

/* nn_bf16_same_a's A, and the last product's A as stored: where, rows, columns, leading
   dimension */
static const float *same_a;
static struct {
    const float *at;
    int rows, cols, ld;
} last_a;

void nn_bf16_same_a(const float *A)
{
    same_a = A;
}

/* ---- products split over the pool's threads (nn_bf16_split): each thread rounds its
   rows of op(A) into its own buffer and runs the primitive on them with one OpenMP
   thread and its own stream; op(B) is rounded once, before, and shared. */
static bool split;
enum { SPLIT_BLOCK = 16 };

void nn_bf16_split(bool on)
{
    split = on;
}

typedef struct BfPart {
    int M, N, K;
    bool trans_a, trans_b, acc;
    const float *A;
    int lda;
    const uint16_t *b;
    float *C;
} BfPart;

static void bf_part(void *ctx, size_t lo, size_t hi)
{
    static __thread dnnl_stream_t own;
    static __thread uint16_t *abuf;
    static __thread size_t acap;
    const BfPart *g = ctx;
    int a = (int)lo * SPLIT_BLOCK, z = (int)hi * SPLIT_BLOCK < g->M ? (int)hi * SPLIT_BLOCK : g->M, m = z - a;
    if (!own) {
        if (D.omp_set_num_threads)
            D.omp_set_num_threads(1);
        DNNL_OK(D.dnnl_stream_create(&own, engine, dnnl_stream_default_flags));
    }
    size_t n = (size_t)m * (size_t)g->K;
    if (n > acap) {
        free(abuf);
        acap = n + n / 4;
        abuf = xmalloc_array(acap, sizeof *abuf);
    }
    if (g->trans_a) /* columns [a, z) of the K x M matrix as stored */
        round_rows(&(Round){.src = g->A + a, .ld = (size_t)g->lda, .cols = (size_t)m, .dst = abuf}, 0,
                   (size_t)g->K);
    else
        round_rows(&(Round){.src = g->A + (size_t)a * g->lda, .ld = (size_t)g->lda, .cols = (size_t)g->K,
                            .dst = abuf},
                   0, (size_t)m);
    dnnl_memory_t ma = memory(m, g->K, g->trans_a, dnnl_bf16, abuf), mb = memory(g->K, g->N, g->trans_b, dnnl_bf16, g->b),
                  mc = memory(m, g->N, false, dnnl_f32, g->C + (size_t)a * g->N);
    dnnl_exec_arg_t args[3] = {{DNNL_ARG_SRC, ma}, {DNNL_ARG_WEIGHTS, mb}, {DNNL_ARG_DST, mc}};
    DNNL_OK(D.dnnl_primitive_execute(prim[g->trans_a][g->trans_b][g->acc], own, 3, args));
    DNNL_OK(D.dnnl_stream_wait(own));
    D.dnnl_memory_destroy(ma);
    D.dnnl_memory_destroy(mb);
    D.dnnl_memory_destroy(mc);
}

void nn_gemm_bf16(int M, int N, int K, bool trans_a, bool trans_b, const float *A, int lda, const float *B,
                  int ldb, float beta, float *C, int ldc)
{
    CHECK(made && M >= 1 && N >= 1 && K >= 1 && ldc == N);
    if (beta != 0 && beta != 1)
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++)
                C[(size_t)i * N + j] *= beta;
    if (split && M >= 2 * SPLIT_BLOCK && nn_parallel_threads() > 1) {
        same_a = NULL;
        last_a.at = NULL;
        BfPart g = {.M = M, .N = N, .K = K, .trans_a = trans_a, .trans_b = trans_b, .acc = beta != 0, .A = A,
                    .lda = lda, .C = C};
        g.b = trans_b ? rounded(1, B, N, K, ldb) : rounded(1, B, K, N, ldb);
        size_t blocks = ((size_t)M + SPLIT_BLOCK - 1) / SPLIT_BLOCK;
        size_t grain = 32768 / ((size_t)SPLIT_BLOCK * (size_t)N * (size_t)K) + 1;
        nn_parallel_for(blocks, grain, bf_part, &g);
        return;
    }
    /* each factor as stored (op(A) is A or its transpose), rows packed */
    int ar = trans_a ? K : M, ac = trans_a ? M : K;
    bool same = same_a == A && last_a.at == A && last_a.rows == ar && last_a.cols == ac && last_a.ld == lda;
    same_a = NULL;
    const uint16_t *a = same ? buf[0] : rounded(0, A, ar, ac, lda);
    last_a.at = a == buf[0] ? A : NULL; /* kept forms live elsewhere */
    last_a.rows = ar;
    last_a.cols = ac;
    last_a.ld = lda;
    const uint16_t *b = trans_b ? rounded(1, B, N, K, ldb) : rounded(1, B, K, N, ldb);
    dnnl_memory_t ma = memory(M, K, trans_a, dnnl_bf16, a), mb = memory(K, N, trans_b, dnnl_bf16, b),
                  mc = memory(M, N, false, dnnl_f32, C);
    dnnl_exec_arg_t args[3] = {{DNNL_ARG_SRC, ma}, {DNNL_ARG_WEIGHTS, mb}, {DNNL_ARG_DST, mc}};
    DNNL_OK(D.dnnl_primitive_execute(prim[trans_a][trans_b][beta != 0], stream, 3, args));
    DNNL_OK(D.dnnl_stream_wait(stream));
    D.dnnl_memory_destroy(ma);
    D.dnnl_memory_destroy(mb);
    D.dnnl_memory_destroy(mc);
}
