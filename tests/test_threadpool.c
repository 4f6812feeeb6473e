/* test_threadpool.c — the pool runs every slice exactly once per run, run after run, whether
 * its workers were spinning or asleep; a shared run does every item once and returns only
 * when each thread that came in is done, whichever came in; sac_split covers [0, n) with
 * balanced slices. */
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "threadpool.h"

static void sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Each thread marks the items of its slice, and its own thread index. */
typedef struct mark_task {
    int64_t n;
    _Atomic int *item_hits;
    _Atomic int thread_hits[64];
    _Atomic int bad_nth;
    int expected_nth;
    long delay_ms; /* makes thread ith wait ith * delay_ms, so the caller must wait for it */
} mark_task;

static void mark_fn(void *arg, int ith, int nth) {
    mark_task *t = arg;
    if (nth != t->expected_nth || ith < 0 || ith >= nth) {
        atomic_fetch_add(&t->bad_nth, 1);
        return;
    }
    if (t->delay_ms) sleep_ms(t->delay_ms * ith);
    atomic_fetch_add(&t->thread_hits[ith], 1);
    int64_t start, end;
    sac_split(t->n, ith, nth, &start, &end);
    for (int64_t i = start; i < end; i++) atomic_fetch_add(&t->item_hits[i], 1);
}

/* Runs `runs` times over n items and checks each item and thread index was hit once per run. */
static void check_runs(sac_pool *pool, int64_t n, int runs, long pause_ms, long delay_ms) {
    mark_task *t = calloc(1, sizeof *t);
    t->item_hits = calloc((size_t)n, sizeof *t->item_hits);
    CHECK(t && t->item_hits);
    if (!t || !t->item_hits) return;
    t->n = n;
    t->expected_nth = sac_pool_size(pool);
    t->delay_ms = delay_ms;
    for (int r = 0; r < runs; r++) {
        sac_pool_run(pool, mark_fn, t);
        if (pause_ms) sleep_ms(pause_ms);
    }
    CHECK_MSG(atomic_load(&t->bad_nth) == 0, "%d calls with a wrong ith/nth", atomic_load(&t->bad_nth));
    int bad_items = 0;
    for (int64_t i = 0; i < n; i++) bad_items += atomic_load(&t->item_hits[i]) != runs;
    CHECK_MSG(bad_items == 0, "%d of %lld items not hit exactly %d times", bad_items, (long long)n, runs);
    for (int i = 0; i < t->expected_nth; i++)
        CHECK_MSG(atomic_load(&t->thread_hits[i]) == runs, "thread %d ran %d of %d times", i,
                  atomic_load(&t->thread_hits[i]), runs);
    free(t->item_hits);
    free(t);
}

static void test_split_properties(void) {
    const int64_t ns[] = {0, 1, 2, 3, 7, 31, 32, 33, 100, 768, 1000003, (int64_t)1 << 40};
    for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++) {
        for (int nth = 1; nth <= 17; nth++) {
            int64_t n = ns[k], expect_start = 0, min_len = INT64_MAX, max_len = 0;
            for (int ith = 0; ith < nth; ith++) {
                int64_t s, e;
                sac_split(n, ith, nth, &s, &e);
                CHECK_MSG(s == expect_start, "n=%lld nth=%d ith=%d start %lld, expected %lld",
                          (long long)n, nth, ith, (long long)s, (long long)expect_start);
                CHECK(e >= s);
                expect_start = e;
                if (e - s < min_len) min_len = e - s;
                if (e - s > max_len) max_len = e - s;
            }
            CHECK_MSG(expect_start == n, "n=%lld nth=%d: slices end at %lld", (long long)n, nth,
                      (long long)expect_start);
            CHECK_MSG(max_len - min_len <= 1, "n=%lld nth=%d: slice lengths %lld..%lld",
                      (long long)n, nth, (long long)min_len, (long long)max_len);
        }
    }
}

static void test_null_pool_runs_inline(void) {
    CHECK(sac_pool_size(NULL) == 1);
    check_runs(NULL, 1000, 3, 0, 0);
}

static void test_pool_of_one(void) {
    sac_pool *pool = NULL;
    sac_error err = {0};
    CHECK(sac_pool_new(1, &pool, &err) == SAC_OK);
    CHECK(pool && sac_pool_size(pool) == 1);
    check_runs(pool, 1000, 100, 0, 0);
    sac_pool_free(pool);

    pool = NULL; /* n_threads <= 1 also means just the caller */
    CHECK(sac_pool_new(0, &pool, &err) == SAC_OK);
    CHECK(pool && sac_pool_size(pool) == 1);
    check_runs(pool, 10, 3, 0, 0);
    sac_pool_free(pool);
}

static void test_bad_arguments(void) {
    sac_error err = {0};
    CHECK(sac_pool_new(2, NULL, &err) == SAC_ERR_ARG);
    sac_pool *pool = (sac_pool *)&err;
    CHECK(sac_pool_new(100000, &pool, &err) == SAC_ERR_ARG);
    CHECK(pool == NULL);
    CHECK(strstr(err.msg, "100000") != NULL);
    sac_pool_free(NULL);
}

/* Many back-to-back runs (workers spinning), and runs separated by pauses (workers asleep). */
static void test_many_runs(void) {
    for (int n_threads = 2; n_threads <= 4; n_threads++) {
        sac_pool *pool = NULL;
        sac_error err = {0};
        CHECK(sac_pool_new(n_threads, &pool, &err) == SAC_OK);
        if (!pool) return;
        int size = sac_pool_size(pool);
        CHECK(size >= 1 && size <= n_threads);
#if !defined(__EMSCRIPTEN__) || defined(__EMSCRIPTEN_PTHREADS__)
        CHECK_MSG(size == n_threads, "asked for %d threads, got %d", n_threads, size);
#endif
        check_runs(pool, 1, 1000, 0, 0); /* fewer items than threads: empty slices */
        /* more threads than this machine's 2 cores make each run slow: fewer runs then */
        check_runs(pool, 4099, n_threads == 2 ? 20000 : 2000, 0, 0);
        check_runs(pool, 100, 5, 30, 0);  /* workers fall asleep between runs */
        check_runs(pool, 100, 3, 0, 20);  /* the caller must wait for slow workers */
        sac_pool_free(pool);
    }
}

/* A shared run's items, taken from a counter; each call notes its thread and whether it was
 * still running when sac_pool_run_shared returned. */
typedef struct shared_task {
    int64_t n;
    _Atomic int64_t next;
    _Atomic int *item_hits;
    _Atomic int running, calls, bad_ith;
    _Atomic int ith_seen[64];
    long worker_delay_ms; /* a worker that came in sleeps this long before taking items, */
    int caller_waits;     /* and the caller first waits (up to 2 s) until one has come in */
} shared_task;

static void take_items(void *arg, int ith, int nth) {
    shared_task *t = arg;
    atomic_fetch_add(&t->running, 1);
    atomic_fetch_add(&t->calls, 1);
    if (ith < 0 || ith >= nth || ith >= 64 || atomic_fetch_add(&t->ith_seen[ith], 1) != 0)
        atomic_fetch_add(&t->bad_ith, 1);
    if (ith > 0 && t->worker_delay_ms) sleep_ms(t->worker_delay_ms);
    for (int waited = 0; ith == 0 && t->caller_waits && atomic_load(&t->calls) < 2 && waited < 2000; waited++) sleep_ms(1);
    for (int64_t i; (i = atomic_fetch_add(&t->next, 7)) < t->n;)
        for (int64_t j = i; j < i + 7 && j < t->n; j++) atomic_fetch_add(&t->item_hits[j], 1);
    atomic_fetch_sub(&t->running, 1);
}

/* Shared runs, each followed by `pause_ms` and, every `static_every` runs, by a run in which
 * every thread must take part (check_runs' task): a worker that missed a shared run still
 * comes in to the next one. */
static void check_shared_runs(sac_pool *pool, int64_t n, int runs, long pause_ms, long delay_ms, int static_every) {
    shared_task *t = calloc(1, sizeof *t);
    _Atomic int *hits = calloc((size_t)n, sizeof *hits);
    CHECK(t && hits);
    if (!t || !hits) {
        free(t);
        free(hits);
        return;
    }
    int late = 0, bad_items = 0, total_calls = 0;
    for (int r = 0; r < runs; r++) {
        memset(t, 0, sizeof *t);
        memset(hits, 0, (size_t)n * sizeof *hits);
        t->n = n;
        t->item_hits = hits;
        t->worker_delay_ms = delay_ms;
        t->caller_waits = delay_ms && sac_pool_size(pool) > 1;
        sac_pool_run_shared(pool, take_items, t);
        late += atomic_load(&t->running) != 0;
        for (int64_t i = 0; i < n; i++) bad_items += atomic_load(&hits[i]) != 1;
        CHECK_MSG(atomic_load(&t->bad_ith) == 0, "run %d: a thread index ran twice or out of range", r);
        CHECK(atomic_load(&t->ith_seen[0]) == 1); /* the caller always runs */
        total_calls += atomic_load(&t->calls);
        if (pause_ms) sleep_ms(pause_ms);
        if (static_every && r % static_every == static_every - 1) check_runs(pool, 17, 1, 0, 0);
    }
    CHECK_MSG(late == 0, "%d runs returned while a thread that came in still ran", late);
    CHECK_MSG(bad_items == 0, "%d items not taken exactly once", bad_items);
    CHECK(total_calls >= runs && total_calls <= runs * sac_pool_size(pool));
    if (delay_ms && sac_pool_size(pool) > 1) /* every run had company, which the caller waited for */
        CHECK_MSG(total_calls >= 2 * runs, "%d calls in %d runs", total_calls, runs);
    free(hits);
    free(t);
}

static void test_shared_runs(void) {
    check_shared_runs(NULL, 100, 3, 0, 0, 0);
    for (int n_threads = 1; n_threads <= 3; n_threads++) {
        sac_pool *pool = NULL;
        CHECK(sac_pool_new(n_threads, &pool, NULL) == SAC_OK);
        if (!pool) return;
        check_shared_runs(pool, 1, 2000, 0, 0, 0);        /* workers mostly find nothing left */
        check_shared_runs(pool, 1, 2000, 0, 0, 1);        /* each shared run closed quickly, then a static one */
        check_shared_runs(pool, 5000, 2000, 0, 0, 3);     /* back to back, with static runs between */
        check_shared_runs(pool, 5000, 20, 20, 0, 2);      /* workers asleep: most runs end without them */
        check_shared_runs(pool, 100, 5, 0, 30, 0);        /* the caller waits for the slow workers that came in */
        sac_pool_free(pool);
    }
}

/* sac_pool_run_pieces: each piece k of nth (the pool's size) once per run, whichever thread. */
typedef struct piece_marks {
    _Atomic int hits[8];
    _Atomic int bad_nth;
    int want_nth;
} piece_marks;

static void mark_piece(void *arg, int k, int nth) {
    piece_marks *m = arg;
    if (nth != m->want_nth || k < 0 || k >= nth || k >= 8) {
        atomic_fetch_add(&m->bad_nth, 1);
        return;
    }
    atomic_fetch_add(&m->hits[k], 1);
}

static void test_run_pieces(void) {
    for (int n_threads = 1; n_threads <= 3; n_threads++) {
        sac_pool *pool = NULL;
        CHECK(sac_pool_new(n_threads, &pool, NULL) == SAC_OK);
        if (!pool) return;
        int bad = 0;
        for (int r = 0; r < 2000; r++) {
            piece_marks m = {.want_nth = sac_pool_size(pool)};
            sac_pool_run_pieces(pool, mark_piece, &m);
            bad += atomic_load(&m.bad_nth) != 0;
            for (int k = 0; k < 8; k++) bad += atomic_load(&m.hits[k]) != (k < m.want_nth);
            if (r % 5 == 4) check_runs(pool, 17, 1, 0, 0); /* static runs between */
        }
        CHECK_MSG(bad == 0, "%d threads: %d pieces not run exactly once (or with the wrong nth)", n_threads, bad);
        sac_pool_free(pool);
    }
    piece_marks m = {.want_nth = 1};
    sac_pool_run_pieces(NULL, mark_piece, &m);
    CHECK(atomic_load(&m.hits[0]) == 1 && atomic_load(&m.hits[1]) == 0 && atomic_load(&m.bad_nth) == 0);
}

/* Pools are independent: two can exist at once and are freed in any order. */
static void test_two_pools(void) {
    sac_pool *a = NULL, *b = NULL;
    CHECK(sac_pool_new(2, &a, NULL) == SAC_OK);
    CHECK(sac_pool_new(2, &b, NULL) == SAC_OK);
    if (!a || !b) return;
    check_runs(a, 333, 50, 0, 0);
    check_runs(b, 333, 50, 0, 0);
    sac_pool_free(a);
    check_runs(b, 333, 50, 0, 0);
    sac_pool_free(b);
}

/* sac_pool_run_slices: every item once, no empty slice; below min_items one call in the caller. */
typedef struct slice_marks {
    _Atomic int hits[200];
    _Atomic int calls, empty;
} slice_marks;

static void mark_slice(void *arg, int64_t i0, int64_t i1) {
    slice_marks *m = arg;
    atomic_fetch_add(&m->calls, 1);
    if (i0 >= i1) atomic_fetch_add(&m->empty, 1);
    for (int64_t i = i0; i < i1; i++) atomic_fetch_add(&m->hits[i], 1);
}

static void test_run_slices(void) {
    sac_pool *pool = NULL;
    CHECK(sac_pool_new(3, &pool, NULL) == SAC_OK);
    if (!pool) return;
    const int64_t ns[] = {0, 1, 3, 4, 5, 200};
    for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++) {
        slice_marks *m = calloc(1, sizeof *m);
        CHECK(m != NULL);
        if (!m) break;
        sac_pool_run_slices(pool, ns[k], 4, mark_slice, m);
        int bad = 0;
        for (int64_t i = 0; i < 200; i++) bad += atomic_load(&m->hits[i]) != (i < ns[k]);
        CHECK_MSG(bad == 0, "n=%lld: %d items not hit exactly once", (long long)ns[k], bad);
        CHECK(atomic_load(&m->empty) == 0);
        const int calls = atomic_load(&m->calls);
        if (ns[k] < 4) CHECK_MSG(calls == (ns[k] > 0), "n=%lld: %d calls", (long long)ns[k], calls);
        else CHECK_MSG(calls >= 1 && calls <= sac_pool_size(pool), "n=%lld: %d calls", (long long)ns[k], calls);
        free(m);
    }
    sac_pool_free(pool);
}

int main(void) {
    RUN(test_split_properties);
    RUN(test_null_pool_runs_inline);
    RUN(test_pool_of_one);
    RUN(test_bad_arguments);
    RUN(test_many_runs);
    RUN(test_shared_runs);
    RUN(test_two_pools);
    RUN(test_run_slices);
    RUN(test_run_pieces);
    return check_summary("test_threadpool");
}
