/* threadpool.c — a persistent pool: workers wait on a generation counter between runs.
 *
 * One run: the caller publishes (fn, arg), sets `pending` to the number of workers, opens the
 * door with the run's number and bumps `generation`; each worker sees the new generation,
 * counts itself in at the door, runs its part and decrements `pending`; the caller runs part 0
 * itself and then waits for `pending` to reach zero. A shared run (sac_pool_run_shared) differs
 * in one step: when the caller's part is done it closes the door and no longer waits for the
 * workers that had not come in by then (it takes them off `pending`); they skip the run.
 * A decoded token costs ~100 runs, so both sides first spin on the counter (a run usually
 * follows the last one within microseconds) and only then sleep:
 *   - natively on a mutex + condition variable;
 *   - under Emscripten pthreads on emscripten_futex_wait/wake, the only waits that are
 *     allowed on the browser's main thread (there they busy-wait and keep serving calls
 *     proxied from workers, such as printf, so the caller never deadlocks on a worker);
 *     either way sleepers announce themselves, and a run only pays for a wake-up (a lock, or
 *     a call out to Atomics.notify) when someone is asleep;
 *   - in a single-threaded wasm build there are no workers at all. */
#include "threadpool.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#if defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__)
#define POOL_NO_THREADS 1
#else
#include <pthread.h>
#include <sched.h>
#if defined(__EMSCRIPTEN__)
#include <emscripten/threading.h>
#include <limits.h>
#include <math.h>
#define POOL_FUTEX 1
#endif
#endif

#define POOL_MAX_THREADS 256

/* Spin this many polls of a counter before sleeping: long enough to bridge the gap between
 * two kernels of one token, short enough not to burn a core while the user reads. A poll
 * with a pause instruction costs ~30-150 cycles on x86; a wasm poll (no pause) ~1 ns, so
 * wasm spins ~50 µs. Longer is not better: wasm threads cannot yield, so when another
 * process holds one of two cores, a waiting thread spins away the time the working one
 * needs. With 1 000 000 polls GPT-2-small decoded ~9% faster on an idle 2-core machine, but
 * 16-22 instead of ~50 tokens/s beside one busy loop. */
#if defined(__EMSCRIPTEN__)
#define SPIN_POLLS 50000
#else
#define SPIN_POLLS 4000
#endif

typedef struct pool_worker {
    struct sac_pool *pool;
    int ith;
#ifndef POOL_NO_THREADS
    pthread_t thread;
#endif
} pool_worker;

struct sac_pool {
    int n_threads; /* including the caller */
    int n_workers; /* started threads: n_threads - 1 */
    pool_worker *workers;

    /* the current run, written by the caller before it bumps `generation` */
    sac_task_fn fn;
    void *arg;
    int stop;

    _Atomic uint32_t generation; /* bumped once per run (and once to stop) */
    _Atomic uint32_t pending;    /* workers that have not finished the current run */
    _Atomic uint64_t door;       /* the run's number << 32 | DOOR_OPEN | the workers that came in */

#if !defined(POOL_NO_THREADS)
    /* sleepers announce themselves so the other side only wakes anyone when needed */
    _Atomic int workers_asleep;
    _Atomic int caller_asleep;
#endif
#if !defined(POOL_NO_THREADS) && !defined(POOL_FUTEX)
    pthread_mutex_t mutex;
    pthread_cond_t work_cond;
    pthread_cond_t done_cond;
#endif
};

#ifndef POOL_NO_THREADS

static inline void cpu_relax(void) {
#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
    __builtin_ia32_pause();
#elif defined(__aarch64__) && defined(__GNUC__)
    __asm__ __volatile__("yield");
#endif
}

static inline void yield_core(void) {
#if !defined(__EMSCRIPTEN__)
    sched_yield();
#endif
}

/* ------------------------------------------------------------------------------------------
 * Waiting and waking
 * ---------------------------------------------------------------------------------------- */

/* Blocks while *counter == value (the sleep after the spin). */
static void sleep_while_equal(sac_pool *pool, _Atomic uint32_t *counter, uint32_t value,
                              int is_caller) {
    _Atomic int *asleep = is_caller ? &pool->caller_asleep : &pool->workers_asleep;
#if defined(POOL_FUTEX)
    atomic_fetch_add(asleep, 1); /* seq_cst: pairs with the waker's change-then-check */
    while (atomic_load(counter) == value) emscripten_futex_wait((volatile void *)counter, value, INFINITY);
    atomic_fetch_sub(asleep, 1);
#else
    pthread_cond_t *cond = is_caller ? &pool->done_cond : &pool->work_cond;
    pthread_mutex_lock(&pool->mutex);
    atomic_fetch_add(asleep, 1); /* seq_cst: pairs with the waker's change-then-check */
    while (atomic_load(counter) == value) pthread_cond_wait(cond, &pool->mutex);
    atomic_fetch_sub(asleep, 1);
    pthread_mutex_unlock(&pool->mutex);
#endif
}

/* Waits until *counter != value; returns the new value. */
static uint32_t wait_while_equal(sac_pool *pool, _Atomic uint32_t *counter, uint32_t value,
                                 int is_caller) {
    for (int i = 0; i < SPIN_POLLS; i++) {
        uint32_t now = atomic_load_explicit(counter, memory_order_acquire);
        if (now != value) return now;
        cpu_relax();
        /* with more threads than cores, the thread we wait for may need our core */
        if (i >= 256 && (i & 63) == 63) yield_core();
    }
    sleep_while_equal(pool, counter, value, is_caller);
    return atomic_load_explicit(counter, memory_order_acquire);
}

/* Wakes whoever sleeps on *counter; called after changing it. */
static void wake(sac_pool *pool, _Atomic uint32_t *counter, int wake_caller) {
    /* The sleeper increments its flag and then re-checks the counter; we changed the counter
     * and then read the flag (both seq_cst), so either it saw the change or we see it asleep
     * and wake it (futex_wait re-checks the value itself; the condition variable is signalled
     * under the mutex the sleeper holds while checking) — no lost wake-up. */
#if defined(POOL_FUTEX)
    if (atomic_load(wake_caller ? &pool->caller_asleep : &pool->workers_asleep) == 0) return;
    emscripten_futex_wake((volatile void *)counter, wake_caller ? 1 : INT_MAX);
#else
    (void)counter;
    if (wake_caller) {
        if (atomic_load(&pool->caller_asleep) == 0) return;
        pthread_mutex_lock(&pool->mutex);
        pthread_cond_signal(&pool->done_cond);
        pthread_mutex_unlock(&pool->mutex);
    } else {
        if (atomic_load(&pool->workers_asleep) == 0) return;
        pthread_mutex_lock(&pool->mutex);
        pthread_cond_broadcast(&pool->work_cond);
        pthread_mutex_unlock(&pool->mutex);
    }
#endif
}

/* ------------------------------------------------------------------------------------------
 * The door
 * ---------------------------------------------------------------------------------------- */

#define DOOR_OPEN ((uint64_t)1 << 31)
#define DOOR_COUNT (DOOR_OPEN - 1)

static uint32_t door_run(uint64_t door) { return (uint32_t)(door >> 32); }

/* Counts the worker in to the run the door showed, if it is still open for that run (when the
 * door has moved on to the next run, the worker first marks this one handled, as the caller
 * does). A successful exchange acquires the caller's fields of that run (the caller opened the
 * door after writing them), and the caller cannot change them before this worker decrements
 * `pending`. */
static int come_in(sac_pool *pool, uint64_t door) {
    const uint32_t run = door_run(door);
    while ((door & DOOR_OPEN) && door_run(door) == run)
        if (atomic_compare_exchange_weak(&pool->door, &door, door + 1)) return 1;
    return 0;
}

/* ------------------------------------------------------------------------------------------
 * Workers
 * ---------------------------------------------------------------------------------------- */

static void *worker_main(void *p) {
    pool_worker *self = p;
    sac_pool *pool = self->pool;
    uint32_t seen = 0;   /* the generation last read */
    uint32_t handled = 0; /* the number of the last run this worker came in to or found closed */
    for (;;) {
        seen = wait_while_equal(pool, &pool->generation, seen, 0);
        /* The caller opens the door before it bumps the generation, so the door shows this
         * run or a later one, and that one may be the run already handled: the door had
         * moved on before the generation did. */
        const uint64_t door = atomic_load(&pool->door);
        if (door_run(door) == handled) continue;
        handled = door_run(door);
        if (!come_in(pool, door)) continue; /* closed: a shared run the caller finished without us */
        if (pool->stop) break;
        pool->fn(pool->arg, self->ith, pool->n_threads);
        if (atomic_fetch_sub(&pool->pending, 1) == 1) /* seq_cst: see wake() */
            wake(pool, &pool->pending, 1);
    }
    return NULL;
}

/* Publishes the fields written since the last run, opens the door and releases the workers. */
static void start_generation(sac_pool *pool) {
    atomic_store_explicit(&pool->pending, (uint32_t)pool->n_workers, memory_order_relaxed);
    const uint32_t run = atomic_load_explicit(&pool->generation, memory_order_relaxed) + 1;
    atomic_store(&pool->door, (uint64_t)run << 32 | DOOR_OPEN);
    atomic_fetch_add(&pool->generation, 1); /* seq_cst: see wake() */
    wake(pool, &pool->generation, 0);
}

/* Shared runs: closes the door and takes the workers that never came in off `pending`. */
static uint32_t close_door(sac_pool *pool) {
    const uint64_t door = atomic_fetch_and(&pool->door, ~DOOR_OPEN);
    const uint32_t absent = (uint32_t)pool->n_workers - (uint32_t)(door & DOOR_COUNT);
    return atomic_fetch_sub(&pool->pending, absent) - absent;
}

#endif /* !POOL_NO_THREADS */

/* ------------------------------------------------------------------------------------------
 * Public API
 * ---------------------------------------------------------------------------------------- */

sac_status sac_pool_new(int n_threads, sac_pool **out, sac_error *err) {
    if (!out) return sac_fail(err, SAC_ERR_ARG, "sac_pool_new: out is NULL");
    *out = NULL;
    if (n_threads > POOL_MAX_THREADS)
        return sac_fail(err, SAC_ERR_ARG, "sac_pool_new: %d threads (at most %d)", n_threads,
                        POOL_MAX_THREADS);
    if (n_threads < 1) n_threads = 1;

    sac_pool *pool = calloc(1, sizeof *pool);
    if (!pool) return sac_fail(err, SAC_ERR_NOMEM, "sac_pool_new: out of memory");
    pool->n_threads = 1;
    atomic_init(&pool->generation, 0);
    atomic_init(&pool->pending, 0);
    atomic_init(&pool->door, 0);

#ifndef POOL_NO_THREADS
    if (n_threads > 1) {
        pool->workers = calloc((size_t)(n_threads - 1), sizeof *pool->workers);
        if (!pool->workers) {
            free(pool);
            return sac_fail(err, SAC_ERR_NOMEM, "sac_pool_new: out of memory");
        }
    }
    atomic_init(&pool->workers_asleep, 0);
    atomic_init(&pool->caller_asleep, 0);
#if !defined(POOL_FUTEX)
    if (pthread_mutex_init(&pool->mutex, NULL) != 0) {
        free(pool->workers);
        free(pool);
        return sac_fail(err, SAC_ERR_NOMEM, "sac_pool_new: cannot create a mutex");
    }
    if (pthread_cond_init(&pool->work_cond, NULL) != 0) {
        pthread_mutex_destroy(&pool->mutex);
        free(pool->workers);
        free(pool);
        return sac_fail(err, SAC_ERR_NOMEM, "sac_pool_new: cannot create a condition variable");
    }
    if (pthread_cond_init(&pool->done_cond, NULL) != 0) {
        pthread_cond_destroy(&pool->work_cond);
        pthread_mutex_destroy(&pool->mutex);
        free(pool->workers);
        free(pool);
        return sac_fail(err, SAC_ERR_NOMEM, "sac_pool_new: cannot create a condition variable");
    }
#endif
    /* A worker reads n_threads only after it sees a new generation, so it may be set after
     * the threads start; a failed pthread_create (EAGAIN when a wasm build's worker pool is
     * exhausted) just leaves a smaller pool. */
    for (int i = 0; i < n_threads - 1; i++) {
        pool_worker *w = &pool->workers[i];
        w->pool = pool;
        w->ith = i + 1;
        if (pthread_create(&w->thread, NULL, worker_main, w) != 0) break;
        pool->n_workers++;
    }
    pool->n_threads = pool->n_workers + 1;
#endif
    *out = pool;
    return SAC_OK;
}

void sac_pool_free(sac_pool *pool) {
    if (!pool) return;
#ifndef POOL_NO_THREADS
    if (pool->n_workers > 0) {
        pool->stop = 1;
        start_generation(pool);
        for (int i = 0; i < pool->n_workers; i++) pthread_join(pool->workers[i].thread, NULL);
    }
#if !defined(POOL_FUTEX)
    pthread_cond_destroy(&pool->done_cond);
    pthread_cond_destroy(&pool->work_cond);
    pthread_mutex_destroy(&pool->mutex);
#endif
#endif
    free(pool->workers);
    free(pool);
}

int sac_pool_size(const sac_pool *pool) { return pool ? pool->n_threads : 1; }

static void run(sac_pool *pool, sac_task_fn fn, void *arg, int shared) {
    if (!pool || pool->n_workers == 0) {
        fn(arg, 0, 1);
        return;
    }
#ifndef POOL_NO_THREADS
    pool->fn = fn;
    pool->arg = arg;
    start_generation(pool);
    fn(arg, 0, pool->n_threads);
    uint32_t left = shared ? close_door(pool) : atomic_load_explicit(&pool->pending, memory_order_acquire);
    while (left != 0) left = wait_while_equal(pool, &pool->pending, left, 1);
#else
    (void)shared;
#endif
}

void sac_pool_run(sac_pool *pool, sac_task_fn fn, void *arg) { run(pool, fn, arg, 0); }

void sac_pool_run_shared(sac_pool *pool, sac_task_fn fn, void *arg) { run(pool, fn, arg, 1); }

void sac_split(int64_t n, int ith, int nth, int64_t *start, int64_t *end) {
    if (n < 0) n = 0;
    if (nth < 1) nth = 1;
    /* floor(n * i / nth): slices differ in length by at most one; the division is split so
     * that n * i cannot overflow for any n below 2^62 */
    *start = (n / nth) * ith + (n % nth) * ith / nth;
    *end = (n / nth) * (ith + 1) + (n % nth) * (ith + 1) / nth;
}

typedef struct pieces_job {
    sac_task_fn fn;
    void *arg;
    _Atomic int next; /* pieces taken so far */
} pieces_job;

static void run_pieces(void *arg, int ith, int nth) {
    (void)ith;
    pieces_job *job = arg;
    for (int k; (k = atomic_fetch_add_explicit(&job->next, 1, memory_order_relaxed)) < nth;) job->fn(job->arg, k, nth);
}

void sac_pool_run_pieces(sac_pool *pool, sac_task_fn fn, void *arg) {
    pieces_job job = {fn, arg, 0};
    sac_pool_run_shared(pool, run_pieces, &job);
}

typedef struct slices_job {
    sac_slice_fn fn;
    void *arg;
    int64_t n;
} slices_job;

static void run_slice(void *arg, int k, int nth) {
    const slices_job *job = arg;
    int64_t i0, i1;
    sac_split(job->n, k, nth, &i0, &i1);
    if (i0 < i1) job->fn(job->arg, i0, i1);
}

void sac_pool_run_slices(sac_pool *pool, int64_t n, int64_t min_items, sac_slice_fn fn, void *arg) {
    if (n < min_items) {
        if (n > 0) fn(arg, 0, n);
        return;
    }
    slices_job job = {fn, arg, n};
    sac_pool_run_pieces(pool, run_slice, &job);
}
