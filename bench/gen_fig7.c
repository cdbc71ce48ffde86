/* gen_fig7.c — writes N rows of the nine quasi-identifier attributes of the
 * synthetic generator in 000 Figure 7 (salary, commission, age, elevel, car,
 * zipcode, hvalue, hyears, loan) as CSV, for the benchmarks. Streams: memory
 * does not grow with N.
 * usage: gen_fig7 ROWS SEED > FILE */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/rng.h"

/* Uniform integer in [lo, hi]. */
static long uniform(ak_rng *rng, long lo, long hi)
{
    return lo + (long)ak_rng_below(rng, (uint64_t)(hi - lo + 1));
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: gen_fig7 ROWS SEED > FILE\n");
        return 1;
    }
    unsigned long long rows = strtoull(argv[1], NULL, 10), seed = strtoull(argv[2], NULL, 10);
    ak_rng rng;
    ak_rng_seed(&rng, seed);
    printf("salary,commission,age,elevel,car,zipcode,hvalue,hyears,loan\n");
    for (unsigned long long i = 0; i < rows; i++) {
        long salary = uniform(&rng, 20000, 150000);
        long commission = salary >= 75000 ? 0 : uniform(&rng, 10000, 75000);
        long age = uniform(&rng, 20, 80), elevel = uniform(&rng, 0, 4), car = uniform(&rng, 1, 20);
        long zipcode = uniform(&rng, 1, 9);
        double h = 0.5 + (double)(ak_rng_next(&rng) >> 11) * 0x1.0p-53; /* uniform in [0.5, 1.5) */
        long hvalue = (long)((double)zipcode * h * 100000);
        long hyears = uniform(&rng, 1, 30), loan = uniform(&rng, 0, 500000);
        printf("%ld,%ld,%ld,%ld,%ld,%ld,%ld,%ld,%ld\n", salary, commission, age, elevel, car, zipcode, hvalue, hyears,
               loan);
    }
    return ferror(stdout) ? 1 : 0;
}
