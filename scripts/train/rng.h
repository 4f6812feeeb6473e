/* rng.h — the trainer's one source of randomness: xorshift64* seeded through splitmix64.
 *
 * Everything random in training (initial weights, which windows form a batch) draws from a
 * train_rng whose whole state is one u64, so a checkpoint can store it and a resumed run
 * continues the exact same sequence. */
#ifndef TRAIN_RNG_H
#define TRAIN_RNG_H

#include <math.h>
#include <stdint.h>

typedef struct train_rng {
    uint64_t state; /* never 0 */
} train_rng;

/* splitmix64 spreads any seed (0, 1, 2, ...) over the whole state space. */
static inline train_rng train_rng_seed(uint64_t seed) {
    uint64_t z = seed + 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    train_rng r = {z ? z : 0x2545F4914F6CDD1Dull};
    return r;
}

static inline uint64_t train_rng_u64(train_rng *r) {
    r->state ^= r->state >> 12;
    r->state ^= r->state << 25;
    r->state ^= r->state >> 27;
    return r->state * 0x2545F4914F6CDD1Dull;
}

/* Uniform in [0, 1), 53 bits. */
static inline double train_rng_uniform(train_rng *r) { return (double)(train_rng_u64(r) >> 11) * 0x1.0p-53; }

/* Uniform integer in [0, n), n > 0 (the modulo bias is below 2^-40 for any n we use). */
static inline int64_t train_rng_below(train_rng *r, int64_t n) { return (int64_t)(train_rng_u64(r) % (uint64_t)n); }

/* Standard normal (Box–Muller; one of the pair is dropped to keep the state a single u64). */
static inline double train_rng_normal(train_rng *r) {
    double u1 = train_rng_uniform(r), u2 = train_rng_uniform(r);
    if (u1 < 1e-300) u1 = 1e-300;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

#endif
