/* model.h — privacy models as predicates on class statistics (docs/ARCHITECTURE.md §5).
 *
 * A class is described by its row count and the counts of its sensitive values
 * (only the non-zero ones, in any order). Every model here is monotone: the
 * union of two classes that satisfy it satisfies it too, which is what lets
 * Mondrian stop splitting and lattice searches prune. The algorithms and the
 * independent verifier (anonkit check) share exactly these predicates. */
#ifndef AK_MODEL_H
#define AK_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "model/closeness.h"

/* l-diversity variants, combinable as a bit set. */
enum {
    MODEL_L_DISTINCT = 1u << 0,      /* at least l distinct sensitive values */
    MODEL_L_ENTROPY = 1u << 1,       /* entropy of the histogram >= log(l) */
    MODEL_L_RECURSIVE = 1u << 2,     /* x1 < c (x_l + ... + x_m) ([LeFevre07] §1.1) */
    MODEL_L_PROBABILISTIC = 1u << 3  /* every value at most 1/l of the class ([Ghinita07] Def. 3) */
};

typedef struct model {
    uint64_t k;         /* k-anonymity; 1 means no constraint */
    double l;           /* l of l-diversity; 0 means none */
    unsigned l_variants;/* MODEL_L_* bits; used when l > 0 */
    double c;           /* c of recursive (c,l)-diversity */
    double variance;    /* variance diversity ([LeFevre07] §1.1): every class's population variance
                           of the numeric sensitive value >= variance; 0 means none */
    model_dist dist;    /* t-closeness, δ-disclosure, β-likeness (closeness.h); none by default */
    const model_ref *ref; /* the table-wide reference distribution those need; set once the table is read */
} model;

/* Sums of a class's numeric sensitive values, enough for its population
 * variance. When every value of the table is an integer of magnitude below
 * 2^31 the integer sums are exact and the variance test is exact and
 * independent of the order of the rows, so the algorithms and the verifier
 * agree even on a class whose variance equals the bound; otherwise the
 * long double sums are used. */
typedef struct model_moments {
    uint64_t n;
    __int128 isum, isumsq;
    long double sum, sumsq;
} model_moments;

/* Whether x is an integer of magnitude below 2^31 (the exact case). */
static inline int model_value_is_small_integer(double x)
{
    return x > -2147483648.0 && x < 2147483648.0 && (double)(int64_t)x == x;
}

static inline void model_moments_add(model_moments *mo, double x)
{
    mo->n++;
    mo->sum += x;
    mo->sumsq += (long double)x * x;
    if (model_value_is_small_integer(x)) {
        const int64_t v = (int64_t)x;
        mo->isum += v;
        mo->isumsq += (__int128)v * v;
    }
}

/* whole - part, for the other side of a split. */
static inline model_moments model_moments_minus(const model_moments *whole, const model_moments *part)
{
    model_moments r = {whole->n - part->n, whole->isum - part->isum, whole->isumsq - part->isumsq,
                       whole->sum - part->sum, whole->sumsq - part->sumsq};
    return r;
}

/* Population variance; `exact`: every value added was a small integer. */
long double model_moments_variance(const model_moments *mo, int exact);

/* Whether a class with these sums satisfies variance diversity (always, when
 * the model has none). */
int model_variance_holds(const model *m, const model_moments *mo, int exact);

/* Rows that may be suppressed under a suppression limit `fraction` (a share
 * of the table in [0, 1]): floor(fraction * rows). The algorithms and the
 * verifier share it so that both count the same allowance. */
static inline uint64_t model_suppression_limit(double fraction, uint64_t rows)
{
    if (!(fraction > 0)) return 0;
    if (fraction >= 1) return rows;
    return (uint64_t)(fraction * (double)rows + 1e-9 * (double)rows * fraction);
}

/* A model that every class satisfies (k = 1, no l). */
void model_init(model *m);

/* Whether the model needs the sensitive attribute. */
static inline int model_needs_sensitive(const model *m)
{
    return m->l > 0 || m->variance > 0 || model_dist_any(&m->dist);
}

/* Whether the model has a distribution model (t, δ, β): its predicate needs the
 * codes of the class's sensitive values (model_dist_holds), not only their counts. */
static inline int model_has_dist(const model *m) { return model_dist_any(&m->dist); }

/* Parses "distinct,entropy,..." into MODEL_L_* bits; -1 on an unknown name. */
int model_parse_variants(const char *text, unsigned *bits /* OUT */);
/* Writes the variant names of bits, comma separated. */
void model_variant_names(unsigned bits, char *buf, size_t size);

/* Checks parameters for sanity (k >= 1, l >= 1 when set, c > 0 for recursive). */
int model_validate(const model *m, ak_error *err);

/* Whether a class of `count` rows whose non-zero sensitive counts are
 * counts[0..ncounts) satisfies the model. `scratch` must hold ncounts values
 * (used to sort for the recursive variant); it may alias nothing else. */
int model_holds(const model *m, uint64_t count, const uint32_t *counts, size_t ncounts,
                uint32_t *scratch);

/* Like model_holds but explains the first violated requirement in buf. */
int model_explain(const model *m, uint64_t count, const uint32_t *counts, size_t ncounts,
                  uint32_t *scratch, char *buf, size_t size);

#endif
