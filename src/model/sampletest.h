/* sampletest.h — the hypothesis tests of Rothko-S ([LeFevre07] §3.1).
 *
 * Rothko-S grows its partition tree on a simple random sample r of n rows
 * drawn without replacement from a partition R of N rows. A candidate split
 * of R into m children is made when, for every child, the sample lets us
 * reject "this child violates the privacy model" at level alpha/m (Bonferroni
 * over the m children). Splits made in error are undone later, when the
 * population statistics are known (pruning), so the tests decide only how
 * often that happens, never whether the output is private.
 *
 *   k-anonymity (§3.1.1)        z-test on the child's share of rows,
 *                               p0 = k/N, with the finite-population
 *                               correction (N-n)/(N-1);
 *   recursive (c,l) (§3.1.2)    z-test on c*p2 - p1 (p1: share of the most
 *                               frequent sensitive value, p2: of the l-th and
 *                               rarer ones), corrected by (N-n)/N;
 *   variance diversity (§3.1.3) chi-square test on the sample variance;
 *   distinct l-diversity        l distinct values in the sample imply l in
 *                               the population: checked on the sample;
 *   entropy, probabilistic l    no test is given in [LeFevre07] (footnote 7): the
 *                               sample proportions are checked directly.
 * The naive rule of §3.1 checks the sample itself: at least k*n/N rows, and
 * the sensitive requirements on the sample's proportions.
 * When n == N the sample is the partition and every test is the model's exact
 * predicate. Quantiles come from GSL's inverse distribution functions. */
#ifndef AK_SAMPLETEST_H
#define AK_SAMPLETEST_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "io/gsl_load.h"
#include "model/model.h"

typedef enum sample_test_kind {
    SAMPLE_TEST_HYPOTHESIS = 0, /* the tests of [LeFevre07] §3.1 */
    SAMPLE_TEST_NAIVE           /* the sample-proportion rule [LeFevre07] §5.6 compares against */
} sample_test_kind;

typedef struct sample_test {
    const model *m;
    sample_test_kind kind;
    double alpha;
    uint64_t population; /* N */
    uint64_t sample;     /* n <= N */
    gsl_api gsl;         /* GSL's quantiles (io/gsl_load.h), loaded by sample_test_init for the hypothesis tests */
} sample_test;

/* Parses "hypothesis" or "naive"; -1 on anything else. */
int sample_test_parse(const char *text, sample_test_kind *out /* OUT */);
const char *sample_test_name(sample_test_kind kind);

/* Sets up the tests of a sample of n rows of a partition of N rows; the
 * hypothesis tests load GSL (an error naming its package when it cannot be
 * loaded). *st is zeroed first, so sample_test_free may follow a failure. */
int sample_test_init(sample_test *st, const model *m, sample_test_kind kind, double alpha, uint64_t population,
                     uint64_t sample, ak_error *err);
/* Lets go of what sample_test_init loaded. */
void sample_test_free(sample_test *st);

/* z such that P(Z > z) = p for a standard normal Z (footnote 6: z_alpha).
 * These two load GSL for the call (NaN when it cannot be loaded): for a
 * value now and then; sample_test_child uses the tests' own. */
double sample_test_z(double p);
/* x such that P(X > x) = p for X chi-square with df degrees of freedom (footnote 8). */
double sample_test_chisq(double p, double df);

/* Whether one child of a split into `children` children may be made: it holds
 * `count` sample rows, the non-zero counts of its sensitive values in
 * counts[0..ncounts) (when the model has l-diversity; scratch holds ncounts
 * values) and the sums of its numeric sensitive values in *mo (variance
 * diversity; `exact` as for model_variance_holds). */
int sample_test_child(const sample_test *st, uint64_t count, const uint32_t *counts, size_t ncounts,
                      uint32_t *scratch, const model_moments *mo, int exact, unsigned children);

#endif
