/* metrics.h — information-loss metrics (docs/ARCHITECTURE.md §7; [LeFevre06], [Ghinita07] §2.1):
 *   DM     discernibility: sum over classes of |E|^2, plus |T| per suppressed row;
 *   C_AVG  normalized average class size: (published rows / classes) / k;
 *   NCP    normalized certainty penalty of a class per QI: numeric range over
 *          the table's range; categorical 0 for a single leaf, else leaves under
 *          the covering node over all leaves ([Ghinita07] eq. 1);
 *   GCP    sum over classes of |G| * weighted NCP, over (sum of weights * |T|)
 *          ([Ghinita07] eq. 2; with equal weights the sum of weights is d).
 * Suppressed rows count as fully generalized (NCP 1 in every QI).
 * The same accumulator serves metrics computed from a partitioning and from a
 * published file. */
#ifndef AK_METRICS_H
#define AK_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "core/partition.h"
#include "core/table.h"

typedef struct metrics {
    uint32_t nqi;
    uint64_t rows;        /* all rows of the original table */
    uint64_t published;   /* rows in classes */
    uint64_t suppressed;
    uint64_t classes;
    uint64_t min_class, max_class;
    double mean_class;
    double dm, cavg, gcp;
    double *ncp;          /* per QI: record-weighted mean NCP, in [0, 1] */
    double *weights;      /* per QI */
    double weighted_sum;  /* running sum of |G| * sum_i w_i NCP_i */
} metrics;

/* weights may be NULL for equal weights. */
int metrics_init(metrics *m, uint32_t nqi, const double *weights, ak_error *err);
void metrics_free(metrics *m);
/* Adds one class of `count` rows with per-QI NCP values ncp[0..nqi). */
void metrics_add_class(metrics *m, uint64_t count, const double *ncp);
void metrics_add_suppressed(metrics *m, uint64_t count);
/* Computes the totals; k is the k of the model (for C_AVG). */
void metrics_finish(metrics *m, uint64_t k);

/* (The NCP of codes [lo, hi] is table_ncp in core/table.h.) */

/* Distortion of publishing codes [lo, hi] of QI q in place of one record's
 * value ([Wang06] §6, the distortion metric of its reference [17]): a categorical
 * value costs one unit per level it was raised, i.e. the level of the lowest
 * hierarchy node covering [lo, hi] (the node whose label is published; 0 for a
 * leaf); a continuous value generalized to the interval [a, b] costs
 * (b - a) / (f2 - f1), with [f1, f2] the attribute's full range in t. Summed
 * over records and divided by their number this is [Wang06]'s distortion per
 * record, kept apart for categorical and continuous attributes. */
double metrics_distortion(const table *t, uint32_t q, uint32_t lo, uint32_t hi);

/* Adds the classes (and suppressed rows) of a partitioning, e.g. one of
 * several partitions of an out-of-core run. */
void metrics_add_partition(metrics *m, const table *t, const partition *p);

/* All metrics of a partitioning. */
int metrics_from_partition(const table *t, const partition *p, uint64_t k, const double *weights,
                           metrics *out, ak_error *err);

/* Workload quality ([LeFevre07] §5.5) of a grouping of n rows into classes
 * (group_of[row] < ngroups): the conditional entropy H(C | class) in bits of
 * the class labels label[row], and the root mean squared error of predicting
 * target[row] by its class's mean. */
int metrics_conditional_entropy(const uint32_t *group_of, size_t n, const uint32_t *label, double *out /* OUT */,
                                ak_error *err);
int metrics_rmse(const uint32_t *group_of, size_t n, size_t ngroups, const double *target, double *out /* OUT */,
                 ak_error *err);

/* The same for a partitioning; suppressed rows count as one class. */
int metrics_partition_entropy(const table *t, const partition *p, double *out /* OUT */, ak_error *err);
int metrics_partition_rmse(const table *t, const partition *p, double *out /* OUT */, ak_error *err);

/* NCP of a published value of QI q: "*" is 1; a categorical label is looked
 * up in the hierarchy; a numeric value is "v" or "lo-hi" within the table's
 * range. Returns 0 or -1 when the text is not a value of that attribute. */
int metrics_ncp_of_published(const table *t, uint32_t q, const char *text, size_t len, double *ncp /* OUT */);

/* Whether a published text of QI q is its missing value (a numeric QI with
 * missing values: the empty text, the spelling published, a --missing token). */
int metrics_is_missing_text(const table *t, uint32_t q, const char *text, size_t len);

/* For ak_interval_split: whether both bounds of a "lo-hi" cut are numbers. */
int metrics_bounds_are_numbers(const char *lo, size_t lo_len, const char *hi, size_t hi_len);

/* The values [lo, hi] a published text of numeric QI q stands for: "*" the
 * table's range, "v" the value itself, an interval in any form of
 * common/interval.h (an open-ended side: the table's extreme value). Returns 0, or -1 when the text is none of
 * these; the values need not lie in the table's range. */
int metrics_numeric_of_published(const table *t, uint32_t q, const char *text, size_t len, double *lo /* OUT */,
                                 double *hi /* OUT */);

#endif
