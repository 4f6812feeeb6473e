/* matmul.c — sac_matmul: converts the activations to the weight type's vec_dot_type, then
 * shares the weight rows out over the pool's threads and runs the type's kernel on them. The
 * type table (types.c) says which conversion and which kernels; nothing here depends on the
 * type otherwise. */
#include "matmul.h"

#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "activation.h"
#include "types.h"

size_t sac_matmul_work_size(const sac_matrix *w, int64_t n_batch) {
    const sac_type_traits *tr = sac_type_traits_get(w->type);
    if (!tr || n_batch <= 0) return 0;
    const sac_type_traits *act = sac_type_vec_dot_traits(tr);
    size_t bytes;
    if (!act->activations_size) return 0;
    return act->activations_size(w->n_in, n_batch, &bytes) ? bytes : SIZE_MAX;
}

/* Activation rows are converted in slices of the batch, one per thread. */
typedef struct convert_task {
    const sac_type_traits *act;
    const float *x;
    int64_t n_in, n_batch;
    void *work;
} convert_task;

static void convert_rows(void *arg, int64_t b0, int64_t b1) {
    const convert_task *c = arg;
    c->act->quantize_activations(c->x, c->n_in, c->n_batch, b0, b1, c->work);
}

/* The rows are cut into one contiguous range per thread (up to MAX_RANGES); each range hands
 * out units of rows from its own counter, on a cache line of its own. */
#define MAX_RANGES 16
typedef struct row_range {
    _Alignas(64) _Atomic int64_t next; /* the first row of the range's next unit nobody has taken */
    int64_t end;
} row_range;

typedef struct matmul_call {
    sac_rows_fn kernel; /* the type's matvec or matmat */
    sac_kernel_task task;
    const sac_epilogue *epilogue; /* or NULL */
    int64_t unit; /* rows per unit of work: whole SAC_ROW_TILE groups */
    int n_ranges;
    row_range ranges[MAX_RANGES];
} matmul_call;

/* The rows a kernel step takes together: units and ranges are whole groups of them. */
static int64_t row_tile(const sac_kernel_task *t) { return t->n_batch == 1 ? SAC_ROW_TILE : SAC_PANEL_ROWS; }

/* Threads take units of rows rather than a fixed slice each, so a thread that gets less of its
 * core (a VM's stolen time, a busy or a small core) just takes fewer units while the others
 * take more, and one that has not started by the time the rows run out is not waited for
 * (sac_pool_run_shared). Which thread computes a row never changes its bits. Each thread first
 * takes the units of its own range, in order, then helps with the others': the weights it reads
 * are one long sequential stream, which the hardware prefetcher follows, and only the ends of
 * the ranges are shared out. (From one shared counter the threads' units interleaved, and each
 * unit a thread took started a new stream: bench_decode, Node, 2 threads, AMD EPYC, F32 29-32 →
 * 33-38 GB/s, Q8_0 +10-20%.) A unit is ~64 KB of weights for matvec; for matmat ~16 KB, one L1
 * block of rows that stays in cache while every group of activation rows passes over it, in
 * whole panels of SAC_PANEL_ROWS rows (the quantized wasm matmats decode that many at once). */
static int64_t rows_per_unit(const sac_kernel_task *t) {
    size_t bytes = t->n_batch == 1 ? 64u * 1024u : 16u * 1024u;
    const int64_t tile = row_tile(t);
    int64_t rows = (int64_t)(bytes / (t->row_bytes ? t->row_bytes : 1));
    rows = rows / tile * tile;
    return rows < tile ? tile : rows;
}

/* Range r of n over the rows: boundaries on whole groups (SAC_ROW_TILE rows for matvec, a panel
 * for matmat), the last one at n_out. */
static void cut_ranges(matmul_call *c, int n) {
    const int64_t tile = row_tile(&c->task);
    const int64_t groups = (c->task.n_out + tile - 1) / tile;
    c->n_ranges = n;
    for (int r = 0; r < n; r++) {
        int64_t g0, g1;
        sac_split(groups, r, n, &g0, &g1);
        atomic_init(&c->ranges[r].next, g0 * tile);
        c->ranges[r].end = g1 * tile < c->task.n_out ? g1 * tile : c->task.n_out;
    }
}

/* Each activation in a function of its own, not inlined into finish_rows: a wasm engine
 * optimizes a function once it has run a while (in Node, while a prompt's first evaluation
 * waits), and a model runs one activation, so only that one is optimized. */
static __attribute__((noinline)) void gelu_rows(float *y, const float *mul, int64_t n) {
    sac_activation_rows(SAC_ACT_GELU, y, mul, n);
}
static __attribute__((noinline)) void silu_rows(float *y, const float *mul, int64_t n) {
    sac_activation_rows(SAC_ACT_SILU, y, mul, n);
}

/* The epilogue on outputs [o0, o1) of every activation row. */
static void finish_rows(const matmul_call *c, int64_t o0, int64_t o1) {
    const sac_epilogue *e = c->epilogue;
    const int64_t n_out = c->task.n_out, n = o1 - o0;
    for (int64_t b = 0; b < c->task.n_batch; b++) {
        float *y = c->task.y + b * n_out + o0;
        if (e->bias)
            for (int64_t i = 0; i < n; i++) y[i] += e->bias[o0 + i];
        if (e->activation != SAC_ACT_NONE)
            (e->activation == SAC_ACT_SILU ? silu_rows : gelu_rows)(y, e->mul ? e->mul + b * n_out + o0 : NULL, n);
        if (e->residual) {
            float *r = e->residual + b * n_out + o0;
            for (int64_t i = 0; i < n; i++) r[i] += y[i];
        }
    }
}

static void matmul_rows(void *arg, int ith, int nth) {
    (void)nth;
    matmul_call *c = arg;
    for (int k = 0; k < c->n_ranges; k++) {
        row_range *r = &c->ranges[(ith + k) % c->n_ranges];
        for (;;) {
            int64_t o0 = atomic_fetch_add_explicit(&r->next, c->unit, memory_order_relaxed);
            if (o0 >= r->end) break;
            int64_t o1 = o0 + c->unit < r->end ? o0 + c->unit : r->end;
            c->kernel(&c->task, o0, o1);
            if (c->epilogue) finish_rows(c, o0, o1);
        }
    }
}

/* The 2-byte float matvecs' read-ahead (float_matvec in kernels.c) made an Intel Xeon's decode
 * 40% faster and an AMD EPYC's (Zen 5) 10-15% slower, and wasm cannot ask which CPU it runs
 * on (the native SIMD128 build, simd.h, runs the same code and chooses the same way). So each
 * thread that calls sac_matmul times its first such matvecs both ways and keeps the faster one.
 * Either way gives the same bits: the read-ahead only loads. The way of timed call n is the
 * parity of n's one bits (the Thue-Morse sequence), which splits every matrix of a model's
 * repeating layers evenly between the two ways, as alternating would not (a layer has four
 * matvecs). */
#ifdef SAC_SIMD128
#define AHEAD_WARMUP 64  /* matvecs not timed first: the engine compiles the kernels meanwhile */
#define AHEAD_TRIALS 128 /* timed matvecs, both ways together */
#else
#define AHEAD_WARMUP 0
#define AHEAD_TRIALS 0 /* the plain C kernels do not read ahead */
#endif

typedef struct ahead_tuner {
    int calls;  /* so far, warm-up included */
    int choice; /* the way outside the trials (sac_kernel_task.read_ahead): on until they decide */
    double seconds[2], bytes[2];
} ahead_tuner;

static _Thread_local ahead_tuner tuner = {0, 1, {0.0, 0.0}, {0.0, 0.0}};

static double seconds_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void run_read_ahead_tuned(sac_pool *pool, matmul_call *c) {
    ahead_tuner *at = &tuner;
    const int trial = at->calls - AHEAD_WARMUP;
    if (trial < 0 || trial >= AHEAD_TRIALS) {
        if (trial < 0) at->calls++;
        c->task.read_ahead = at->choice;
        sac_pool_run_shared(pool, matmul_rows, c);
        return;
    }
    int way = 0;
    for (unsigned n = (unsigned)trial; n; n &= n - 1) way ^= 1;
    c->task.read_ahead = way;
    double t0 = seconds_now();
    sac_pool_run_shared(pool, matmul_rows, c);
    at->seconds[way] += seconds_now() - t0;
    at->bytes[way] += (double)c->task.row_bytes * (double)c->task.n_out;
    /* without the read-ahead only when that is clearly faster (3%), as it was on the AMD */
    if (++at->calls == AHEAD_WARMUP + AHEAD_TRIALS)
        at->choice = !(at->bytes[0] * at->seconds[1] > 1.03 * at->bytes[1] * at->seconds[0]);
}

void sac_matmul(sac_pool *pool, const sac_matrix *w, const float *x, int64_t n_batch, float *y,
                void *work) {
    sac_matmul_then(pool, w, x, n_batch, y, work, NULL);
}

void sac_matmul_then(sac_pool *pool, const sac_matrix *w, const float *x, int64_t n_batch, float *y,
                     void *work, const sac_epilogue *epilogue) {
    const sac_type_traits *tr = sac_type_traits_get(w->type);
    if (!tr || n_batch <= 0 || w->n_out <= 0) return;
    if (w->n_in <= 0) { /* empty sums */
        memset(y, 0, sizeof(float) * (size_t)(n_batch * w->n_out));
        if (epilogue) {
            matmul_call c = {.task = {.n_out = w->n_out, .n_batch = n_batch, .y = y}, .epilogue = epilogue};
            finish_rows(&c, 0, w->n_out);
        }
        return;
    }
    size_t row_bytes;
    if (!sac_type_row_bytes(w->type, w->n_in, &row_bytes)) return; /* the loader checked the shapes */
    matmul_call c = {.kernel = n_batch == 1 ? tr->matvec : tr->matmat,
                     .task = {.w = w->data, .row_bytes = row_bytes, .n_in = w->n_in, .n_out = w->n_out,
                              .n_batch = n_batch, .x = x, .y = y, .finite = w->finite},
                     .epilogue = epilogue};
    const sac_type_traits *act = sac_type_vec_dot_traits(tr);
    if (act->quantize_activations) {
        c.task.act = work;
        convert_task q = {.act = act, .x = x, .n_in = w->n_in, .n_batch = n_batch, .work = work};
        /* a single row is quick to convert; more rows are worth a dispatch */
        sac_pool_run_slices(pool, n_batch, 4, convert_rows, &q);
    }
    c.unit = rows_per_unit(&c.task);
    const int threads = sac_pool_size(pool);
    cut_ranges(&c, threads < MAX_RANGES ? threads : MAX_RANGES);
    if (n_batch == 1 && tr->matvec_reads_ahead)
        run_read_ahead_tuned(pool, &c);
    else
        sac_pool_run_shared(pool, matmul_rows, &c);
}
