/* risk.c — the sample-based re-identification risk of a table and the
 * individual risk of the Benedetti–Franconi model (risk.h, docs/risk.md).
 *
 * Prosecutor risk of a record: 1 / f_k, f_k the size of its class in the
 * sample; journalist risk: 1 / F_k, F_k the size of its class in a
 * population table; marketer risk: the expected share of records an attacker
 * who links every record re-identifies, sum_k f_k / F_k over the rows
 * ([Dankar12] §3; without a population it is classes / rows). Individual
 * risk: [Benedetti98], [Franconi04] in sdcMicro's approximation; global
 * risk: its sum over the records. */
#include "metrics/risk.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Sizes below this have their Benedetti–Franconi risk kept once computed. */
#define RISK_SIZE_CACHE 256

const uint64_t risk_bucket_lo[RISK_NBUCKETS] = {1, 2, 3, 5, 10, 20, 50, 100, 200, 500, 1000};

static unsigned bucket_of(uint64_t size)
{
    unsigned b = 0;
    while (b + 1 < RISK_NBUCKETS && size >= risk_bucket_lo[b + 1]) b++;
    return b;
}

double risk_individual(uint64_t f, double F)
{
    const double p = (double)f / F;
    if (!(p < 1)) return 1.0 / (double)f;
    const double odds = p / (1 - p);
    if (f == 1) return odds * log(1 / p);
    if (f == 2) return odds - odds * odds * log(1 / p);
    return p / ((double)f - (1 - p));
}

/* The attacker figures when class k carries risk 1 / denominator[k]. The
 * divisions are the costly part on millions of classes: f / d is 1 exactly
 * when f = d (the prosecutor's case), and whether 1 / d is above the
 * threshold is computed again only when d changes (most classes have one of
 * a few sizes); the figures are the same to the bit. */
static void attacker(const risk_input *in, const uint64_t *denominator, uint64_t rows, risk_attacker *a)
{
    uint64_t min_d = UINT64_MAX, max_d = 0, at_risk = 0, at_min = 0, last_d = 0;
    int above = 0;
    double sum = 0;
    for (size_t k = 0; k < in->nclasses; k++) {
        const uint64_t d = denominator[k], f = in->size[k];
        if (d < min_d) min_d = d;
        if (d > max_d) max_d = d;
        sum += f == d ? 1.0 : (double)f / (double)d;
        if (d != last_d) {
            above = 1.0 / (double)d > in->threshold;
            last_d = d;
        }
        if (above) at_risk += f;
    }
    for (size_t k = 0; k < in->nclasses; k++)
        if (denominator[k] == min_d) at_min += in->size[k];
    if (!rows) {
        memset(a, 0, sizeof *a);
        return;
    }
    a->highest = 1.0 / (double)min_d;
    a->lowest = 1.0 / (double)max_d;
    a->average = sum / (double)rows;
    a->records_at_risk = (double)at_risk / (double)rows;
    a->highest_risk_records = (double)at_min / (double)rows;
}

static int cmp_u64(const void *a, const void *b)
{
    const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* The histogram of class sizes (the largest is `largest`): distinct sizes
 * ascending with their class counts; counted in an array by size when the
 * largest size is below the number of classes and some, else sorted. */
static size_t size_histogram(const risk_input *in, uint64_t largest, uint64_t **sizes, uint64_t **counts)
{
    uint64_t *s = malloc((in->nclasses ? in->nclasses : 1) * sizeof *s);
    uint64_t *c = malloc((in->nclasses ? in->nclasses : 1) * sizeof *c);
    const size_t max_small = in->nclasses + 4096;
    uint64_t *by_size = s && c && largest <= max_small ? calloc((size_t)largest + 1, sizeof *by_size) : NULL;
    if (!s || !c || (largest <= max_small && !by_size)) {
        free(s);
        free(c);
        *sizes = *counts = NULL;
        return (size_t)-1;
    }
    if (by_size) {
        for (size_t i = 0; i < in->nclasses; i++) by_size[in->size[i]]++;
        size_t nh = 0;
        for (uint64_t f = 0; f <= largest; f++)
            if (by_size[f]) {
                s[nh] = f;
                c[nh++] = by_size[f];
            }
        free(by_size);
        *sizes = s;
        *counts = c;
        return nh;
    }
    memcpy(s, in->size, in->nclasses * sizeof *s);
    qsort(s, in->nclasses, sizeof *s, cmp_u64);
    size_t nh = 0;
    for (size_t i = 0; i < in->nclasses; i++) {
        if (nh && s[nh - 1] == s[i]) {
            c[nh - 1]++;
        } else {
            s[nh] = s[i];
            c[nh++] = 1;
        }
    }
    *sizes = s;
    *counts = c;
    return nh;
}

/* Dankar et al.'s rule ([Dankar12] §5): sampling fraction at most 0.1: Pitman
 * (Zayatz when Pitman fails); above: the smaller of Zayatz and SNB (Zayatz
 * when SNB fails). */
static void dankar(risk_measures *m)
{
    if (m->sampling_fraction <= 0.1) {
        m->dankar = m->pitman.ok ? m->pitman : m->zayatz;
        m->dankar_model = m->pitman.ok ? "pitman" : "zayatz";
    } else if (m->snb.ok && m->snb.uniques <= m->zayatz.uniques) {
        m->dankar = m->snb;
        m->dankar_model = "snb";
    } else {
        m->dankar = m->zayatz;
        m->dankar_model = "zayatz";
    }
    m->dankar.note = m->dankar.ok ? NULL : "no model of the rule converged";
}

/* The prosecutor's figures (attacker with each class's own size as its
 * denominator) made in the pass that counts the rows and the size buckets:
 * every class's risk times its size is then 1 exactly, their sum the number
 * of classes; the figures are attacker's to the bit. */
static void prosecutor(const risk_input *in, risk_measures *m)
{
    uint64_t rows = 0, min_f = UINT64_MAX, max_f = 0, at_risk = 0, at_min = 0, last_f = 0;
    int above = 0;
    for (size_t k = 0; k < in->nclasses; k++) {
        const uint64_t f = in->size[k];
        rows += f;
        if (f == 1) m->sample_uniques++;
        const unsigned b = bucket_of(f);
        m->bucket_classes[b]++;
        m->bucket_records[b] += f;
        if (f < min_f) {
            min_f = f;
            at_min = 0;
        }
        if (f == min_f) at_min += f;
        if (f > max_f) max_f = f;
        if (f != last_f) {
            above = 1.0 / (double)f > in->threshold;
            last_f = f;
        }
        if (above) at_risk += f;
    }
    m->rows = rows;
    m->classes = in->nclasses;
    m->largest = max_f;
    risk_attacker *a = &m->prosecutor;
    if (!rows) {
        memset(a, 0, sizeof *a);
        return;
    }
    a->highest = 1.0 / (double)min_f;
    a->lowest = 1.0 / (double)max_f;
    a->average = (double)in->nclasses / (double)rows;
    a->records_at_risk = (double)at_risk / (double)rows;
    a->highest_risk_records = (double)at_min / (double)rows;
}

int risk_measure(const risk_input *in, risk_measures *m, ak_error *err)
{
    memset(m, 0, sizeof *m);
    prosecutor(in, m);
    const uint64_t rows = m->rows;
    m->journalist = m->prosecutor;
    m->marketer = rows ? (double)in->nclasses / (double)rows : 0;
    if (in->population) {
        m->journalist_from_population = 1;
        attacker(in, in->population, rows, &m->journalist);
        double sum = 0;
        for (size_t k = 0; k < in->nclasses; k++) sum += (double)in->size[k] / (double)in->population[k];
        m->marketer = rows ? sum / (double)rows : 0;
    }
    if (!(in->population_size > 0) && !in->weight) return ANONKIT_OK;
    const double N = in->population_size > 0 ? in->population_size : (double)rows;
    m->has_population = in->population_size > 0;
    m->population_size = N;
    m->sampling_fraction = rows ? (double)rows / N : 1;
    /* Benedetti–Franconi: F_k from the weights, else f_k / sampling fraction. */
    double sum = 0, max = 0;
    uint64_t at_risk = 0;
    /* without weights a class's risk depends on its size alone: computed
     * once per size (up to RISK_SIZE_CACHE; NaN: not yet), the same value */
    double cache[RISK_SIZE_CACHE];
    for (size_t i = 0; i < RISK_SIZE_CACHE; i++) cache[i] = NAN;
    for (size_t k = 0; k < in->nclasses; k++) {
        const uint64_t f = in->size[k];
        const int cached = !in->weight && f < RISK_SIZE_CACHE;
        if (cached && cache[f] == cache[f]) {
            const double r = cache[f];
            sum += r * (double)f;
            if (r > max) max = r;
            if (r > in->threshold) at_risk += f;
            continue;
        }
        const double F = in->weight ? in->weight[k] : (double)in->size[k] / m->sampling_fraction;
        const double r = risk_individual(in->size[k], F);
        if (cached) cache[f] = r;
        sum += r * (double)in->size[k];
        if (r > max) max = r;
        if (r > in->threshold) at_risk += in->size[k];
    }
    m->individual_max = max;
    m->individual_mean = rows ? sum / (double)rows : 0;
    m->individual_records_at_risk = rows ? (double)at_risk / (double)rows : 0;
    m->global_risk = sum;
    m->global_risk_rate = m->individual_mean;
    if (!m->has_population) return ANONKIT_OK;
    if (m->sample_uniques == 0) {
        const risk_estimate zero = {1, 0, 0, NULL, {0, 0, 0}};
        m->zayatz = m->pitman = m->snb = m->dankar = zero;
        m->dankar_model = "none";
        return ANONKIT_OK;
    }
    uint64_t *sizes, *counts;
    const size_t nh = size_histogram(in, m->largest, &sizes, &counts);
    if (nh == (size_t)-1) return ak_err_nomem(err);
    m->zayatz = risk_zayatz(sizes, counts, nh, (double)rows, N);
    m->pitman = risk_pitman(sizes, counts, nh, (double)rows, N);
    m->snb = risk_snb(sizes, counts, nh, (double)rows, N);
    dankar(m);
    free(sizes);
    free(counts);
    return ANONKIT_OK;
}
