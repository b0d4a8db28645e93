/*
 * gen.h - seeded random .dag programs for the property and robustness
 * tests. The generator keeps the meaning of what it writes (each node's
 * expression as a tree) so a test can check the IR against it.
 */
#ifndef DAGC_TEST_GEN_H
#define DAGC_TEST_GEN_H

#include <stdint.h>
#include <stdlib.h>

typedef struct rng { uint64_t s; } rng;

static inline uint64_t rng_next(rng *r)
{
    /* splitmix64: tiny, good enough, same sequence everywhere. */
    uint64_t z = (r->s += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

static inline uint32_t rng_below(rng *r, uint32_t n)
{
    return n ? (uint32_t)(rng_next(r) % n) : 0;
}

static inline double test_scale(void)
{
    const char *s = getenv("DAGC_TEST_SCALE");
    double v = s ? atof(s) : 1.0;
    return v > 0 ? v : 1.0;
}

static inline int scaled(int n)
{
    int v = (int)(n * test_scale());
    return v < 1 ? 1 : v;
}

#endif
