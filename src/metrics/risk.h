/* risk.h — re-identification risk of a table from its equivalence classes
 * (docs/risk.md): the sample-based measures (class sizes, prosecutor,
 * journalist and marketer risk [Dankar12]), the population-based estimates of
 * population uniques (Zayatz [Zayatz91], Pitman [Pitman96]/[Hoshino01], SNB
 * [Chen98], the decision rule of [Dankar12]), the individual risk of the
 * Benedetti–Franconi model [Benedetti98]/[Franconi04] with the global risk,
 * and SUDA2's minimal sample uniques [Elliot02]/[Manning08] (suda2.c).
 *
 * The input is the class sizes (f_k) of the sample and, when known, per class
 * the population class size (F_k, from a population table) and the sum of the
 * sampling weights. Every function is a pure computation on these arrays.
 * Ownership: risk_groups_free releases what risk_groups_read fills. */
#ifndef AK_METRICS_RISK_H
#define AK_METRICS_RISK_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

/* The bounds of the class-size buckets: 1, 2, 3-4, 5-9, 10-19, 20-49, 50-99,
 * 100-199, 200-499, 500-999, 1000 and more. */
#define RISK_NBUCKETS 11
extern const uint64_t risk_bucket_lo[RISK_NBUCKETS];

/* The classes of a table. */
typedef struct risk_input {
    size_t nclasses;
    const uint64_t *size;        /* f_k, every one >= 1 */
    const uint64_t *population;  /* F_k from a population table (>= f_k), or NULL */
    const double *weight;        /* sum of the sampling weights of class k, or NULL */
    double population_size;      /* N (--population-size, or n / --sampling-fraction); 0: not given */
    double threshold;            /* records at risk: risk strictly above it */
} risk_input;

/* One attacker model's figures over the records ([Dankar12] §3, named as ARX names them). */
typedef struct risk_attacker {
    double highest, lowest, average;   /* risk of the records: max, min, mean */
    double records_at_risk;            /* share of records whose risk is above the threshold */
    double highest_risk_records;       /* share of records that carry the highest risk */
} risk_attacker;

/* An estimate of population uniques; `ok` 0 when the model did not converge
 * (or cannot apply), with `note` saying why. */
typedef struct risk_estimate {
    int ok;
    double uniques;     /* estimated population uniques */
    double share;       /* uniques / N */
    const char *note;   /* NULL when ok */
    double param[3];    /* the fitted parameters: Pitman (theta, alpha); SNB (alpha, beta, K) */
} risk_estimate;

typedef struct risk_measures {
    uint64_t rows, classes, sample_uniques;
    uint64_t largest;                  /* the largest class size */
    uint64_t bucket_classes[RISK_NBUCKETS], bucket_records[RISK_NBUCKETS];
    risk_attacker prosecutor, journalist;
    int journalist_from_population;    /* 0: journalist = prosecutor (no population table) */
    double marketer;                   /* expected share of records re-identified (success rate) */
    /* population-based (has_population: N known) */
    int has_population;
    double population_size, sampling_fraction;
    risk_estimate zayatz, pitman, snb, dankar;
    const char *dankar_model;          /* "zayatz" | "pitman" | "snb" | "none" (no sample uniques) */
    /* Benedetti–Franconi individual risk (sdcMicro's indivRisk, approx method) */
    double individual_max, individual_mean;
    double individual_records_at_risk; /* share of records whose individual risk is above the threshold */
    double global_risk;                /* expected re-identifications: the sum of the individual risks */
    double global_risk_rate;           /* global_risk / rows */
} risk_measures;

/* Computes every measure of in into *out. N (in->population_size) must be at
 * least the rows when given (the caller refuses a smaller one). Returns
 * ANONKIT_OK, or ANONKIT_E_NOMEM (with err) when out of memory. */
int risk_measure(const risk_input *in, risk_measures *out /* OUT */, ak_error *err);

/* The individual risk r of a class of f sample records standing for F
 * population records (p = f / F), sdcMicro's approximation of
 * [Benedetti98]/[Franconi04]: f = 1: p/(1-p) log(1/p); f = 2: p/(1-p) -
 * (p/(1-p))^2 log(1/p); f >= 3: p / (f - (1-p)); p >= 1: 1/f. */
double risk_individual(uint64_t f, double F);

/* Population uniques by the model of [Zayatz91] (hypergeometric draw of one
 * record, sample classes standing in for population classes), from the
 * histogram hist[i] = number of classes of size size[i] (nh entries), n
 * rows, N population. */
risk_estimate risk_zayatz(const uint64_t *size, const uint64_t *count, size_t nh, double n, double N);
/* Population uniques by Pitman's sampling formula ([Pitman96], [Hoshino01]):
 * maximum-likelihood (theta, alpha) by Newton's method, then
 * Gamma(theta+1)/Gamma(theta+alpha) N^alpha. */
risk_estimate risk_pitman(const uint64_t *size, const uint64_t *count, size_t nh, double n, double N);
/* Population uniques by the slide negative binomial model ([Chen98]): K
 * population classes by the Shlosser estimator, (alpha, beta) fitted to the
 * sample's classes of size 1 and 2, then K beta^alpha. */
risk_estimate risk_snb(const uint64_t *size, const uint64_t *count, size_t nh, double n, double N);

/* SUDA2 ([Elliot02], [Manning08]): the minimal sample uniques of up to
 * max_size attributes among the nqi QI columns codes[row * nqi + q] of nrows
 * rows. Fills per record its SUDA score (each MSU of size k adds
 * prod_{i=k}^{M-1} (nqi - i), M = max_size) and DIS-SUDA score (the SUDA score
 * as a share of all records' scores, times dis_fraction), and per size the
 * number of MSUs found (msus[0..max_size), index k-1). */
typedef struct risk_suda {
    unsigned max_size;
    uint64_t nrows;          /* records scored */
    uint64_t *msus;          /* msus[k-1]: MSUs of k attributes */
    double *score, *dis;     /* per record */
    uint64_t records_with_msu;
    double max_score, mean_score, max_dis;
} risk_suda;
int risk_suda2(const uint32_t *codes, uint64_t nrows, unsigned nqi, unsigned max_size, double dis_fraction,
               risk_suda *out /* OUT */, ak_error *err);
void risk_suda_free(risk_suda *s);

#endif
