/* risk_model.h — re-identification risk as a privacy model (--max-risk,
 * docs/risk.md §6): predicates on the class sizes of a whole table, for
 * the lattice search of Incognito, which needs them monotone.
 *
 *   average=R     average prosecutor risk, classes / rows, at most R;
 *   uniqueness=R  population uniques at most R of the population N
 *                 (N = --population-size, or rows / --sampling-fraction, or
 *                 the rows), bounded from above by the sample uniques
 *                 (a population unique drawn into the sample is a sample
 *                 unique): sample uniques <= R N;
 *   highest=R     highest prosecutor risk, 1 / smallest class, at most R:
 *                 exactly k-anonymity with k = ceil(1/R) (risk_model_k), so
 *                 every algorithm supports it through k.
 *
 * Monotonicity: generalizing a node, or projecting it onto fewer QIs,
 * merges classes and never splits one. Merging lowers the number of classes
 * (rows fixed: average falls) and the number of classes of size 1 (a merged
 * class has at least 2 rows), and raises the smallest class: so a node that
 * satisfies a predicate has every generalization satisfy it (tests/
 * test_risk_model.c checks this over every node of random lattices). With
 * suppression this no longer holds (suppressing rows changes the rows the
 * shares are taken of), so average and uniqueness refuse --suppression. */
#ifndef AK_MODEL_RISK_MODEL_H
#define AK_MODEL_RISK_MODEL_H

#include <stdint.h>

typedef struct risk_model {
    double average;         /* 0: none */
    double highest;         /* 0: none */
    double uniqueness;      /* 0: none */
    double population_size; /* N for uniqueness; 0: the rows */
} risk_model;

/* The summary of a table's (or a lattice node's) classes that the predicates read. */
typedef struct risk_summary {
    uint64_t rows, classes, uniques, smallest;
} risk_summary;

static inline void risk_summary_add(risk_summary *s, uint64_t size)
{
    s->rows += size;
    s->classes++;
    if (size == 1) s->uniques++;
    if (s->classes == 1 || size < s->smallest) s->smallest = size;
}

/* Whether the model constrains anything a k cannot say (average or uniqueness). */
static inline int risk_model_has_table_predicate(const risk_model *r)
{
    return r && (r->average > 0 || r->uniqueness > 0);
}

/* The k of highest=R: the least k with 1/k <= R. */
uint64_t risk_model_k(double highest);

/* Whether a table whose classes are summarized by s satisfies average,
 * highest and uniqueness (those set). */
int risk_model_holds(const risk_model *r, const risk_summary *s);

#endif
