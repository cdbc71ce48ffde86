/* rng.c — a fresh seed for runs without --seed (see rng.h). */
#include "common/rng.h"

#include <sys/random.h>
#include <sys/types.h>
#include <time.h>

uint64_t ak_fresh_seed(void)
{
    uint64_t seed = 0;
    if (getrandom(&seed, sizeof seed, 0) != (ssize_t)sizeof seed) seed = (uint64_t)time(NULL) ^ (uint64_t)clock();
    return seed;
}
