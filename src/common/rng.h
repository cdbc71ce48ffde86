/* rng.h — the seeded pseudo-random generator used wherever anonkit makes a
 * random choice (the output shuffle, sampling): xoshiro256** seeded through
 * splitmix64, so that a --seed reproduces a run exactly. Each run owns its
 * generator; there is no global state. */
#ifndef AK_RNG_H
#define AK_RNG_H

#include <stdint.h>

typedef struct ak_rng {
    uint64_t s[4];
} ak_rng;

static inline uint64_t ak_splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static inline void ak_rng_seed(ak_rng *r, uint64_t seed)
{
    for (int i = 0; i < 4; i++) r->s[i] = ak_splitmix64(&seed);
}

static inline uint64_t ak_rng_next(ak_rng *r)
{
    uint64_t *s = r->s;
    uint64_t x = s[1] * 5;
    uint64_t result = ((x << 7) | (x >> 57)) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = (s[3] << 45) | (s[3] >> 19);
    return result;
}

/* A seed from the system's entropy source (or the clock when it fails), for
 * runs without --seed; the run reports it so it can be repeated. */
uint64_t ak_fresh_seed(void);

/* Uniform integer in [0, n), n > 0, without modulo bias (Lemire's method). */
static inline uint64_t ak_rng_below(ak_rng *r, uint64_t n)
{
    for (;;) {
        uint64_t x = ak_rng_next(r);
        __uint128_t m = (__uint128_t)x * n;
        uint64_t low = (uint64_t)m;
        if (low >= n || low >= (-n) % n) return (uint64_t)(m >> 64);
    }
}

#endif
