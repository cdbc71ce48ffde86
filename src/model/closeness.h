/* closeness.h — attribute-disclosure models as predicates on a class's
 * sensitive histogram WITH value identities (docs/ARCHITECTURE.md §5):
 *
 *   t-closeness [Li07]: the Earth Mover's Distance between the class's
 *     sensitive distribution P and the whole table's Q is at most t, under one
 *     of three ground distances — equal (Li07 §4.2 "Equal Distance"), ordered
 *     (§4.2 "Ordered Distance", the closed form over cumulative sums) and
 *     hierarchical (§4.2 "Hierarchical Distance", the closed form over the
 *     nodes of the sensitive column's hierarchy);
 *   δ-disclosure privacy [Brickell08] Def. 4: |ln(p(E,s)/p(T,s))| <= δ for
 *     every value s of the table (a value missing from the class fails);
 *   β-likeness [Cao12] Def. 2 (basic) and Def. 3 (enhanced): for every value
 *     s with p(E,s) > p(T,s), (p(E,s) - p(T,s)) / p(T,s) <= β, respectively
 *     <= min(β, -ln p(T,s)).
 *
 * The reference distribution Q is the whole table's (every row, suppressed
 * rows included); a model_ref holds it with what the ground distance needs.
 * Values are identified by codes 0..nvalues-1 of the caller's dictionary
 * (the table's sensitive codes in the algorithms, the published texts in the
 * verifier); a code of a class must have a non-zero count in the reference.
 *
 * Arithmetic: the inputs are counts, so every distance is formed exactly in
 * 128-bit integers scaled by n*N (class rows times table rows; N < 2^40) and
 * only the final comparison with the bound uses long double, with a relative
 * tolerance of 1e-12 of the bound (MODEL_DIST_TOLERANCE): a class whose exact
 * distance equals the bound passes, and t = 0 demands distance exactly 0.
 * δ and β are compared as e^-δ <= cN/(Qn) <= e^δ and cN - Qn <= β Qn in long
 * double with the same tolerance.
 *
 * Every model here satisfies the union property the algorithms rely on: the
 * distribution of the union of two classes is a convex combination of
 * theirs, and EMD (a convex function of P for fixed Q, [Li07] §4.3), the
 * ratio bounds of δ and the one-sided bounds of β are all preserved by convex
 * combinations. tests/test_closeness.c tests that claim on random classes. */
#ifndef AK_CLOSENESS_H
#define AK_CLOSENESS_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "common/hash.h"
#include "common/stats.h"

#define MODEL_DIST_TOLERANCE 1e-12

enum { MODEL_T_AUTO = 0, MODEL_T_EQUAL = 1, MODEL_T_ORDERED = 2, MODEL_T_HIERARCHICAL = 3 };
enum { MODEL_BETA_BASIC = 0, MODEL_BETA_ENHANCED = 1 };

/* Parses equal|ordered|hierarchical (MODEL_T_*) and basic|enhanced; -1 when unknown. */
int model_parse_t_distance(const char *text, unsigned *out /* OUT */);
int model_parse_beta_variant(const char *text, unsigned *out /* OUT */);
const char *model_t_distance_name(unsigned d);
const char *model_beta_variant_name(unsigned v);

/* The sensitive column's hierarchy, read from an ARX-style CSV file (';'
 * separated; a row per leaf: the leaf, then its ancestors up to the top) with
 * the CSV reader. Nodes are identified by their path to the top, so equal
 * labels under different parents are different nodes. When the last column
 * holds more than one value a root above them is added. */
typedef struct model_shier model_shier;
int model_shier_read(model_shier **out /* OUT */, const char *path, ak_error *err);
void model_shier_free(model_shier *h);

/* The table-wide reference distribution and the ground distance's data. */
typedef struct model_ref model_ref;

/* Builds the reference of values 0..dict->count-1 (texts in dict) with
 * table counts counts[]. distance: MODEL_T_* (AUTO is resolved by the caller);
 * ordered needs every text with a non-zero count to be a number (the order is
 * numeric); hierarchical needs h, and every such text a leaf of it. column
 * names the sensitive column in messages. */
int model_ref_build(model_ref **out /* OUT */, const strmap *dict, const uint64_t *counts, unsigned distance,
                    const model_shier *h, const char *column, ak_error *err);
void model_ref_free(model_ref *ref);
uint64_t model_ref_rows(const model_ref *ref);
unsigned model_ref_distance(const model_ref *ref);

/* Per-thread scratch of the predicates (the ref is shared read-only). */
typedef struct model_work model_work;
model_work *model_work_new(const model_ref *ref); /* NULL when out of memory */
void model_work_free(model_work *w);

/* The EMD of a class of `count` rows whose non-zero sensitive counts are
 * counts[i] of codes[i] (i < n, codes distinct), under ref's ground distance:
 * the exact scaled numerator into *num and the scale into *den (EMD = num/den). */
void model_emd_scaled(const model_ref *ref, model_work *w, uint64_t count, const uint32_t *codes,
                      const uint32_t *counts, size_t n, __int128 *num /* OUT */, __int128 *den /* OUT */);
double model_emd(const model_ref *ref, model_work *w, uint64_t count, const uint32_t *codes, const uint32_t *counts,
                 size_t n);

/* The distribution models of a model (t, δ, β) with their parameters. */
typedef struct model_dist {
    double t;              /* t-closeness: t in [0, 1]; < 0 none */
    unsigned t_distance;   /* MODEL_T_*; AUTO until resolved against the table */
    double delta;          /* δ-disclosure: > 0; 0 none */
    double beta;           /* β-likeness: > 0; 0 none */
    unsigned beta_variant; /* MODEL_BETA_* */
    const char *hierarchy; /* the sensitive column's hierarchy file (--hierarchy S=FILE), or NULL */
} model_dist;

/* Builds the reference for d from a sensitive dictionary and its table
 * counts: resolves MODEL_T_AUTO (hierarchical when d->hierarchy is given,
 * ordered when every value present is a number, equal otherwise) and reads
 * the hierarchy when the distance needs it. */
int model_ref_for(const model_dist *d, const strmap *dict, const uint64_t *counts, const char *column,
                  model_ref **out /* OUT */, ak_error *err);

static inline int model_dist_any(const model_dist *d) { return d->t >= 0 || d->delta > 0 || d->beta > 0; }

/* Whether the class satisfies every distribution model of d (ref must be
 * built when any is set). explain: the first violated one into buf. */
int model_dist_holds(const model_dist *d, const model_ref *ref, model_work *w, uint64_t count, const uint32_t *codes,
                     const uint32_t *counts, size_t n);
int model_dist_explain(const model_dist *d, const model_ref *ref, model_work *w, uint64_t count,
                       const uint32_t *codes, const uint32_t *counts, size_t n, char *buf, size_t size);

/* A cheap necessary condition for t-closeness under the ordered distance:
 * S = sum_i |N CP_i - n CQ_i| >= |sum_i (N CP_i - n CQ_i)| = |N (n m - R) -
 * n sum_i CQ_i|, R the sum of the ranks of the class's rows — the difference
 * of mean ranks, a lower bound of the EMD. model_dist_weights gives the rank
 * per code (NULL when d has no t under the ordered distance), so that the
 * algorithms keep R as rows are added; model_dist_may_hold is 0 only when
 * the bound already exceeds t (then model_dist_holds is 0 too). */
const uint32_t *model_dist_weights(const model_dist *d, const model_ref *ref);
int model_dist_may_hold(const model_dist *d, const model_ref *ref, uint64_t count, uint64_t rank_sum);

/* The distribution models of d for `count` rows whose sensitive histogram
 * is h or, with minus, whole less h (a side of a cut, Mondrian's family): the
 * O(1) lower bound of model_dist_may_hold first when h keeps rank sums (the
 * same answer, sooner), then model_dist_holds on h's pairs, written to codes
 * and counts (scratch of h's domain). 1 when w is NULL (no such model). */
int model_dist_hist_holds(const model_dist *d, const model_ref *ref, model_work *w, uint64_t count,
                          const ak_hist *whole, const ak_hist *h, int minus, uint32_t *codes, uint32_t *counts);

/* The least parameters a set of classes achieves: call add for every class. */
typedef struct model_achieved {
    double t;             /* max EMD (under ref's distance) */
    double delta;         /* max |ln(p(E,s)/p(T,s))|; INFINITY when a class lacks a value */
    double beta;          /* basic: max (p(E,s)-p(T,s))/p(T,s) over p(E,s) > p(T,s) */
    int beta_enhanced_ok; /* some β satisfies enhanced β-likeness (no increase above -ln p(T,s)) */
    uint64_t classes;
} model_achieved;
void model_achieved_init(model_achieved *a);
void model_achieved_add(model_achieved *a, const model_ref *ref, model_work *w, uint64_t count,
                        const uint32_t *codes, const uint32_t *counts, size_t n);

/* "least t 0.1234 (ordered distance), least delta 0.5, least beta 0.25 (enhanced: ...)" into buf. */
void model_achieved_format(const model_achieved *a, unsigned distance, char *buf, size_t size);

#endif
