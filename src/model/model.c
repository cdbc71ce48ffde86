/* model.c — k-anonymity and the l-diversity variants as predicates on a
 * class's count and sensitive histogram (docs/ARCHITECTURE.md §5; [LeFevre07] §1.1 for recursive
 * (c,l)-diversity, [Ghinita07] Definition 3 for probabilistic l-diversity). */
#include "model/model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Relative slack for the entropy comparison: a class with exactly l equally
 * frequent values has entropy log(l) up to rounding and must pass. */
#define ENTROPY_EPSILON 1e-12

static const struct {
    const char *name;
    unsigned bit;
} variant_names[] = {
    {"distinct", MODEL_L_DISTINCT},
    {"entropy", MODEL_L_ENTROPY},
    {"recursive", MODEL_L_RECURSIVE},
    {"probabilistic", MODEL_L_PROBABILISTIC},
};

void model_init(model *m)
{
    m->k = 1;
    m->l = 0;
    m->l_variants = MODEL_L_DISTINCT;
    m->c = 1;
    m->variance = 0;
    m->dist = (model_dist){-1, MODEL_T_AUTO, 0, 0, MODEL_BETA_BASIC, NULL};
    m->ref = NULL;
}

int model_parse_variants(const char *text, unsigned *bits)
{
    unsigned out = 0;
    const char *p = text;
    for (;;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        unsigned found = 0;
        for (size_t i = 0; i < sizeof variant_names / sizeof variant_names[0]; i++)
            if (strlen(variant_names[i].name) == len && memcmp(variant_names[i].name, p, len) == 0)
                found = variant_names[i].bit;
        if (!found) return -1; /* also an empty name, as in "distinct," */
        out |= found;
        if (!end) break;
        p = end + 1;
    }
    *bits = out;
    return 0;
}

void model_variant_names(unsigned bits, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < sizeof variant_names / sizeof variant_names[0]; i++) {
        if (!(bits & variant_names[i].bit)) continue;
        int n = snprintf(buf + used, size - used, "%s%s", used ? "," : "", variant_names[i].name);
        if (n < 0 || (size_t)n >= size - used) break;
        used += (size_t)n;
    }
}

int model_validate(const model *m, ak_error *err)
{
    if (m->k < 1) return ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0, "--k must be at least 1");
    if (m->l != 0 && !(m->l >= 1))
        return ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0, "--l must be at least 1");
    if (m->l > 0 && (m->l_variants & MODEL_L_RECURSIVE) && !(m->c > 0))
        return ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0, "--c must be positive");
    if (!(m->variance >= 0) || isinf(m->variance))
        return ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0, "--variance must be a finite number >= 0");
    if (m->dist.t >= 0 && !(m->dist.t <= 1))
        return ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0, "--t must be a number in [0, 1]");
    if (m->dist.delta < 0 || isnan(m->dist.delta) || isinf(m->dist.delta))
        return ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0, "--delta-disclosure must be a positive number");
    if (m->dist.beta < 0 || isnan(m->dist.beta) || isinf(m->dist.beta))
        return ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0, "--beta must be a positive number");
    return ANONKIT_OK;
}

long double model_moments_variance(const model_moments *mo, int exact)
{
    if (mo->n == 0) return 0;
    const long double n = (long double)mo->n;
    if (exact) {
        /* n^2 Var = n sum x^2 - (sum x)^2, exactly in 128 bits (|x| < 2^31, n < 2^32
         * keep both products below 2^127). */
        const __int128 scaled = (__int128)mo->n * mo->isumsq - mo->isum * mo->isum;
        return (long double)scaled / (n * n);
    }
    long double v = (mo->sumsq - mo->sum * mo->sum / n) / n;
    return v > 0 ? v : 0;
}

int model_variance_holds(const model *m, const model_moments *mo, int exact)
{
    if (m->variance <= 0) return 1;
    if (exact && mo->n < (1ull << 32)) {
        /* Compared without division: n sum x^2 - (sum x)^2 >= v n^2. */
        const __int128 scaled = (__int128)mo->n * mo->isumsq - mo->isum * mo->isum;
        const long double n = (long double)mo->n;
        return (long double)scaled >= (long double)m->variance * n * n;
    }
    return model_moments_variance(mo, 0) >= (long double)m->variance;
}

static int cmp_desc_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x < y) - (x > y);
}

/* Tests one l-diversity variant; writes the reason for a failure when buf is set. */
static int l_variant_holds(const model *m, unsigned variant, uint64_t count, const uint32_t *counts,
                           size_t ncounts, uint32_t *scratch, char *buf, size_t size)
{
    switch (variant) {
    case MODEL_L_DISTINCT:
        if ((double)ncounts >= m->l) return 1;
        if (buf) snprintf(buf, size, "%zu distinct sensitive values, distinct l-diversity needs %g", ncounts, m->l);
        return 0;
    case MODEL_L_ENTROPY: {
        /* Summed in ascending order of counts, so the result does not depend on
         * the order the values were met in (in-memory and out-of-core runs
         * must decide alike). */
        memcpy(scratch, counts, ncounts * sizeof *counts);
        qsort(scratch, ncounts, sizeof *scratch, cmp_desc_u32);
        double entropy = 0;
        for (size_t i = ncounts; i-- > 0;) {
            double p = (double)scratch[i] / (double)count;
            if (p > 0) entropy -= p * log(p);
        }
        double need = log(m->l);
        if (entropy >= need - ENTROPY_EPSILON * (need > 1 ? need : 1)) return 1;
        if (buf) snprintf(buf, size, "sensitive entropy %.6g < log(l) = %.6g", entropy, need);
        return 0;
    }
    case MODEL_L_RECURSIVE: {
        /* x1 < c * (x_l + ... + x_m), x_i the i-th largest count. */
        if ((double)ncounts < ceil(m->l)) { /* compared as doubles: l may be huge */
            if (buf) snprintf(buf, size, "%zu distinct sensitive values, recursive (c,l)-diversity needs %g", ncounts, ceil(m->l));
            return 0;
        }
        size_t l = (size_t)ceil(m->l);
        memcpy(scratch, counts, ncounts * sizeof *counts);
        qsort(scratch, ncounts, sizeof *scratch, cmp_desc_u32);
        double tail = 0;
        for (size_t i = l - 1; i < ncounts; i++) tail += scratch[i];
        if ((double)scratch[0] < m->c * tail) return 1;
        if (buf) snprintf(buf, size, "most frequent sensitive value occurs %u times, not below c*(x_l+...+x_m) = %g", scratch[0], m->c * tail);
        return 0;
    }
    case MODEL_L_PROBABILISTIC: {
        uint32_t top = 0;
        for (size_t i = 0; i < ncounts; i++)
            if (counts[i] > top) top = counts[i];
        /* top / count <= 1 / l, compared without division. */
        if ((double)top * m->l <= (double)count) return 1;
        if (buf) snprintf(buf, size, "a sensitive value has frequency %u/%llu > 1/%g", top, (unsigned long long)count, m->l);
        return 0;
    }
    }
    return 1;
}

static int holds(const model *m, uint64_t count, const uint32_t *counts, size_t ncounts,
                 uint32_t *scratch, char *buf, size_t size)
{
    if (count < m->k) {
        if (buf) snprintf(buf, size, "%llu rows, k-anonymity needs %llu", (unsigned long long)count, (unsigned long long)m->k);
        return 0;
    }
    if (m->l > 0) {
        for (unsigned bit = 1; bit <= MODEL_L_PROBABILISTIC; bit <<= 1)
            if ((m->l_variants & bit) && !l_variant_holds(m, bit, count, counts, ncounts, scratch, buf, size))
                return 0;
    }
    return 1;
}

int model_holds(const model *m, uint64_t count, const uint32_t *counts, size_t ncounts, uint32_t *scratch)
{
    return holds(m, count, counts, ncounts, scratch, NULL, 0);
}

int model_explain(const model *m, uint64_t count, const uint32_t *counts, size_t ncounts,
                  uint32_t *scratch, char *buf, size_t size)
{
    if (size) buf[0] = '\0';
    return holds(m, count, counts, ncounts, scratch, buf, size);
}
