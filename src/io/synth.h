/* synth.h — the synthetic data generator of [LeFevre07] Figure 7 (after Agrawal et al.),
 * used by `anonkit generate` and the benchmarks: nine quasi-identifier attributes
 * and the four target functions C2, C7, R7, R10, streamed as CSV or as a tuple
 * file (io/tuple.h). Memory does not depend on the number of rows.
 *
 * Exactness: hvalue is computed in integers from the 53 random bits of h and
 * rounded to the nearest integer (halves up); r7 and r10 are computed in exact
 * integer hundredths (0.67 x = 67 x / 100, 0.2 x = 20 x / 100, and with the integer
 * hvalue 0.2 equity = 2 hvalue (hyears - 20) / 100), so the CSV text is exact
 * and the same on every machine, and c7 is decided on the exact value. */
#ifndef AK_SYNTH_H
#define AK_SYNTH_H

#include <stdint.h>
#include <stdio.h>

#include "common/error.h"
#include "common/rng.h"

/* The columns, in output order. */
enum {
    SYNTH_SALARY, SYNTH_COMMISSION, SYNTH_AGE, SYNTH_ELEVEL, SYNTH_CAR, SYNTH_ZIPCODE, SYNTH_HVALUE,
    SYNTH_HYEARS, SYNTH_LOAN, SYNTH_C2, SYNTH_C7, SYNTH_R7, SYNTH_R10, SYNTH_NCOLUMNS
};
extern const char *const synth_column_names[SYNTH_NCOLUMNS];

/* One generated record. */
typedef struct synth_row {
    int32_t salary, commission, age, elevel, car, zipcode, hvalue, hyears, loan;
    uint8_t c2, c7;          /* 0 = A, 1 = B */
    int64_t r7_cents, r10_cents; /* r7 and r10 in hundredths */
} synth_row;

/* How salary is drawn: uniform on [20000, 150000] as in [LeFevre07] Figure 7, or
 * normal (mean 85000, variance 1.1e8, within that range) as in [LeFevre07] §5.6. */
typedef enum synth_salary { SYNTH_SALARY_UNIFORM, SYNTH_SALARY_NORMAL } synth_salary;

/* Draws the next record. The draws, in order: salary (uniform: one bounded
 * draw; normal: one ak_rng_next); commission only when salary < 75000; age,
 * elevel, car, zipcode; h (the top 53 bits of one ak_rng_next: h = 0.5 +
 * bits / 2^53, in [0.5, 1.5)); hyears; loan. gsl: GSL's functions
 * (io/gsl_load.h) for normal salaries, else unused (may be NULL). */
struct gsl_api;
void synth_next(ak_rng *rng, synth_salary salary, const struct gsl_api *gsl, synth_row *row /* OUT */);

/* The pieces of synth_next, for tests: hvalue from zipcode and the 53 random
 * bits of h (bits < 2^53), and c2, c7, r7, r10 from the nine attributes. */
int32_t synth_hvalue(int32_t zipcode, uint64_t bits);
void synth_targets(synth_row *row /* IN/OUT */);

typedef enum synth_format { SYNTH_CSV, SYNTH_BINARY } synth_format;

typedef struct synth_stats {
    uint64_t rows;
    uint64_t bytes;  /* bytes written */
    uint64_t blocks; /* blocks written */
} synth_stats;

/* Writes a header and rows records drawn from seed to stream (name is used in
 * messages). CSV: a header line, then comma-separated records, r7/r10 with two
 * decimals. Binary: a tuple file (docs/tuple-format.md) with i32 for the nine
 * attributes, codes A=0/B=1 for c2 and c7, f64 for r7 and r10 (the value nearest
 * the CSV text). block_size: bytes per write (0: the default of each format).
 * Normal salaries load GSL (io/gsl_load.h): an error naming its package when
 * it cannot be loaded. */
int synth_write(FILE *stream, const char *name, uint64_t rows, uint64_t seed, synth_format format,
                synth_salary salary, size_t block_size, synth_stats *stats /* OUT, may be NULL */, ak_error *err);

#endif
