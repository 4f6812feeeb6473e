/* float_bits.h — an f32's bit pattern and back, for tests that build or check floats bit by bit. */
#ifndef SAC_TEST_FLOAT_BITS_H
#define SAC_TEST_FLOAT_BITS_H

#include <stdint.h>
#include <string.h>

static inline uint32_t bits_of(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static inline float float_of(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

#endif
