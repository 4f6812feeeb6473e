/* threadpool.h — a persistent pool of worker threads, made once per context.
 *
 * sac_pool_run() runs fn(arg, ith, nth) on every thread — the caller is thread 0 — and
 * returns when all are done. Workers spin briefly, then sleep, between runs. */
#ifndef SAC_THREADPOOL_H
#define SAC_THREADPOOL_H

#include "error.h"

typedef struct sac_pool sac_pool;
typedef void (*sac_task_fn)(void *arg, int ith, int nth);

/* n_threads counts the caller; n_threads <= 1 makes a pool with no workers. If the platform
 * cannot start all workers (e.g. a single-threaded wasm build), the pool keeps the ones it
 * got: sac_pool_size() tells how many threads it really has. */
sac_status sac_pool_new(int n_threads, sac_pool **out, sac_error *err);
void sac_pool_free(sac_pool *pool);
int sac_pool_size(const sac_pool *pool);
/* pool may be NULL: runs fn(arg, 0, 1). Not reentrant. */
void sac_pool_run(sac_pool *pool, sac_task_fn fn, void *arg);

/* For a task whose threads take its work from shared counters, so that any one of them
 * running alone would do all of it: the caller runs fn, and each worker runs it only if it
 * starts before the caller's call returns; returns when those are done. A worker whose core
 * is busy elsewhere (another process, a VM's stolen time) then delays no run it missed, where
 * sac_pool_run waits for every worker: beside one busy process on two cores, two threads
 * decoded slower than one. nth is the pool's size either way; the ith of those that run are
 * distinct. */
void sac_pool_run_shared(sac_pool *pool, sac_task_fn fn, void *arg);

/* fn(arg, k, nth) once for each piece k of nth (the pool's size), the threads taking pieces
 * in turn (a shared run): for a task written for sac_pool_run whose threads split the work by
 * ith alone (sac_split) and write disjoint outputs. k names a piece, not a thread: a thread may
 * run several pieces and fn must not index per-thread scratch by it. */
void sac_pool_run_pieces(sac_pool *pool, sac_task_fn fn, void *arg);

/* The [start, end) slice of n items that thread ith of nth takes. */
void sac_split(int64_t n, int ith, int nth, int64_t *start, int64_t *end);

/* fn(arg, i0, i1) on each non-empty slice of n items split sac_split's way in as many as
 * the pool has threads, the threads taking slices in turn (a shared run); with fewer than
 * `min_items` items, once on all of them in the caller (a dispatch costs more than such work). */
typedef void (*sac_slice_fn)(void *arg, int64_t i0, int64_t i1);
void sac_pool_run_slices(sac_pool *pool, int64_t n, int64_t min_items, sac_slice_fn fn, void *arg);

#endif
