/* matmul.c — sac_matmul: converts the activations to the weight type's vec_dot_type, then
 * shares the weight rows out over the pool's threads and runs the type's kernel on them. The
 * type table (types.c) says which conversion and which kernels; nothing here depends on the
 * type otherwise. */
#include "matmul.h"

#include <stdatomic.h>
#include <string.h>

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

static void convert_rows(void *arg, int ith, int nth) {
    const convert_task *c = arg;
    int64_t b0, b1;
    sac_split(c->n_batch, ith, nth, &b0, &b1);
    c->act->quantize_activations(c->x, c->n_in, c->n_batch, b0, b1, c->work);
}

typedef struct matmul_call {
    sac_rows_fn kernel;       /* the type's matvec or matmat */
    sac_kernel_task task;
    int64_t unit;             /* rows per unit of work: whole SAC_ROW_TILE groups */
    _Atomic int64_t next_row; /* the first row of the next unit nobody has taken */
} matmul_call;

/* Threads take units of rows from a shared counter rather than a fixed slice each, so a
 * thread that gets less of its core (a VM's stolen time, a busy or a small core) just takes
 * fewer units while the others take more. Which thread computes a row never changes its bits.
 * A unit is ~64 KB of weights for matvec; for matmat ~16 KB, one L1 block of rows that stays
 * in cache while every group of activation rows passes over it. */
static int64_t rows_per_unit(const sac_kernel_task *t) {
    size_t bytes = t->n_batch == 1 ? 64u * 1024u : 16u * 1024u;
    int64_t rows = (int64_t)(bytes / (t->row_bytes ? t->row_bytes : 1));
    rows = rows / SAC_ROW_TILE * SAC_ROW_TILE;
    return rows < SAC_ROW_TILE ? SAC_ROW_TILE : rows;
}

static void matmul_rows(void *arg, int ith, int nth) {
    (void)ith;
    (void)nth;
    matmul_call *c = arg;
    const int64_t n_out = c->task.n_out;
    for (;;) {
        int64_t o0 = atomic_fetch_add_explicit(&c->next_row, c->unit, memory_order_relaxed);
        if (o0 >= n_out) return;
        int64_t o1 = o0 + c->unit < n_out ? o0 + c->unit : n_out;
        c->kernel(&c->task, o0, o1);
    }
}

void sac_matmul(sac_pool *pool, const sac_matrix *w, const float *x, int64_t n_batch, float *y,
                void *work) {
    const sac_type_traits *tr = sac_type_traits_get(w->type);
    if (!tr || n_batch <= 0 || w->n_out <= 0) return;
    if (w->n_in <= 0) { /* empty sums */
        memset(y, 0, sizeof(float) * (size_t)(n_batch * w->n_out));
        return;
    }
    size_t row_bytes;
    if (!sac_type_row_bytes(w->type, w->n_in, &row_bytes)) return; /* the loader checked the shapes */
    matmul_call c = {.kernel = n_batch == 1 ? tr->matvec : tr->matmat,
                     .task = {.w = w->data, .row_bytes = row_bytes, .n_in = w->n_in, .n_out = w->n_out,
                              .n_batch = n_batch, .x = x, .y = y}};
    const sac_type_traits *act = sac_type_vec_dot_traits(tr);
    if (act->quantize_activations) {
        c.task.act = work;
        convert_task q = {.act = act, .x = x, .n_in = w->n_in, .n_batch = n_batch, .work = work};
        /* a single row is quick to convert; more rows are worth a dispatch */
        if (n_batch >= 4) sac_pool_run(pool, convert_rows, &q);
        else convert_rows(&q, 0, 1);
    }
    c.unit = rows_per_unit(&c.task);
    atomic_init(&c.next_row, 0);
    sac_pool_run(pool, matmul_rows, &c);
}
