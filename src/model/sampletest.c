/* sampletest.c — the hypothesis tests of Rothko-S ([LeFevre07] §3.1); see sampletest.h. */
#include "model/sampletest.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int sample_test_parse(const char *text, sample_test_kind *out)
{
    if (!strcmp(text, "hypothesis")) *out = SAMPLE_TEST_HYPOTHESIS;
    else if (!strcmp(text, "naive")) *out = SAMPLE_TEST_NAIVE;
    else return -1;
    return 0;
}

const char *sample_test_name(sample_test_kind kind) { return kind == SAMPLE_TEST_NAIVE ? "naive" : "hypothesis"; }

int sample_test_init(sample_test *st, const model *m, sample_test_kind kind, double alpha, uint64_t population,
                     uint64_t sample, ak_error *err)
{
    memset(st, 0, sizeof *st);
    if (!(alpha > 0 && alpha < 1))
        return ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0, "--alpha must lie strictly between 0 and 1, not %g", alpha);
    if (sample == 0 || sample > population)
        return ak_err_set(err, ANONKIT_E_INTERNAL, NULL, 0, 0, "a sample of %llu rows of a partition of %llu",
                          (unsigned long long)sample, (unsigned long long)population);
    *st = (sample_test){.m = m, .kind = kind, .alpha = alpha, .population = population, .sample = sample};
    if (kind == SAMPLE_TEST_HYPOTHESIS && sample < population) return gsl_api_open(&st->gsl, err);
    return ANONKIT_OK;
}

void sample_test_free(sample_test *st)
{
    gsl_api_close(&st->gsl);
}

/* The arguments are kept inside the functions' domains, so GSL's error
 * handler (which aborts by default, and is process-wide) is never reached. */
static double z_of(const gsl_api *gsl, double p)
{
    if (!(p > 0)) return INFINITY;
    if (!(p < 1)) return -INFINITY;
    return gsl->gsl_cdf_ugaussian_Qinv(p);
}

static double chisq_of(const gsl_api *gsl, double p, double df)
{
    if (!(df > 0)) return 0;
    if (!(p > 0)) return INFINITY;
    if (!(p < 1)) return 0;
    return gsl->gsl_cdf_chisq_Qinv(p, df);
}

double sample_test_z(double p)
{
    gsl_api gsl;
    ak_error err;
    if (gsl_api_open(&gsl, &err) != ANONKIT_OK) return NAN;
    const double z = z_of(&gsl, p);
    gsl_api_close(&gsl);
    return z;
}

double sample_test_chisq(double p, double df)
{
    gsl_api gsl;
    ak_error err;
    if (gsl_api_open(&gsl, &err) != ANONKIT_OK) return NAN;
    const double x = chisq_of(&gsl, p, df);
    gsl_api_close(&gsl);
    return x;
}

static int cmp_desc(const void *a, const void *b)
{
    const uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x < y) - (x > y);
}

/* §3.1.1: reject p = p0 = k/N in favour of p >= p0 when
 * p^ - p0 >= z_{alpha/m} sqrt(p0 (1 - p0) / n * (N - n) / (N - 1)). */
static int k_test(const sample_test *st, uint64_t count, double z)
{
    const double N = (double)st->population, n = (double)st->sample;
    const double p0 = (double)st->m->k / N, phat = (double)count / n;
    const double var = p0 * (1 - p0) / n * ((N - n) / (N - 1));
    return phat - p0 >= z * sqrt(var);
}

/* §3.1.2: reject p1 = c p2 in favour of p1 < c p2 when
 * c p2^ - p1^ > z_{alpha/m} sqrt((c^2 p2^(1-p2^) + p1^(1-p1^)) / (n_i - 1) * (N - n) / N). */
static int recursive_test(const sample_test *st, uint64_t count, const uint32_t *counts, size_t ncounts,
                          uint32_t *scratch, double z)
{
    const double c = st->m->c;
    if ((double)ncounts < ceil(st->m->l) || count < 2) return 0;
    const size_t l = (size_t)ceil(st->m->l);
    memcpy(scratch, counts, ncounts * sizeof *counts);
    qsort(scratch, ncounts, sizeof *scratch, cmp_desc);
    double tail = 0;
    for (size_t i = l - 1; i < ncounts; i++) tail += scratch[i];
    const double ni = (double)count, p1 = scratch[0] / ni, p2 = tail / ni;
    const double N = (double)st->population, n = (double)st->sample;
    const double var = (c * c * p2 * (1 - p2) + p1 * (1 - p1)) / (ni - 1) * ((N - n) / N);
    return c * p2 - p1 > z * sqrt(var);
}

/* §3.1.3: reject Var(R_i, S) = v in favour of >= v when
 * (n_i - 1) s^2 / v >= chi^2_{alpha/m}(n_i - 1 df), s^2 the sample variance. */
static int variance_test(const sample_test *st, const model_moments *mo, int exact, unsigned children)
{
    if (mo->n < 2) return 0;
    const double ni = (double)mo->n;
    const double squares = (double)model_moments_variance(mo, exact) * ni; /* sum of (s - mean)^2 */
    return squares / st->m->variance >= chisq_of(&st->gsl, st->alpha / children, ni - 1);
}

int sample_test_child(const sample_test *st, uint64_t count, const uint32_t *counts, size_t ncounts,
                      uint32_t *scratch, const model_moments *mo, int exact, unsigned children)
{
    const model *m = st->m;
    if (count == 0) return 0;
    if (st->sample == st->population) /* the sample is the partition: the model itself */
        return model_holds(m, count, counts, ncounts, scratch) && model_variance_holds(m, mo, exact);
    if (children < 1) children = 1;
    /* the sensitive requirements checked on the sample's proportions (k left to the test below) */
    model proportions = *m;
    proportions.k = 1;
    if (st->kind == SAMPLE_TEST_NAIVE) {
        if ((long double)count * st->population < (long double)m->k * st->sample) return 0; /* count < k n / N */
        if (m->variance > 0 && !model_variance_holds(m, mo, exact)) return 0;
        return m->l > 0 ? model_holds(&proportions, count, counts, ncounts, scratch) : 1;
    }
    const double z = z_of(&st->gsl, st->alpha / children);
    if (!k_test(st, count, z)) return 0;
    if (m->variance > 0 && !variance_test(st, mo, exact, children)) return 0;
    if (m->l > 0) {
        if ((m->l_variants & MODEL_L_RECURSIVE) && !recursive_test(st, count, counts, ncounts, scratch, z)) return 0;
        proportions.l_variants &= ~(unsigned)MODEL_L_RECURSIVE;
        if (proportions.l_variants && !model_holds(&proportions, count, counts, ncounts, scratch)) return 0;
    }
    return 1;
}
