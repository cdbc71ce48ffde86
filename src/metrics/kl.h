/* kl.h — query accuracy of a published table ([Ghinita07] §6.3): the KL-divergence
 * between the datacube of the original table and the one estimated from the
 * published table, for the queries
 *     SELECT Q1..Qi, COUNT(*) FROM data WHERE SA = val GROUP BY Q1..Qi
 * at level i of the datacube lattice (every set of i QIs). A cell is a value
 * of the sensitive attribute and one code of each grouped QI (a distinct
 * numeric value or a hierarchy leaf). P counts the original rows per cell;
 * Q spreads each published row uniformly over the codes its published box
 * covers. Both are normalized to probabilities; the divergence
 * sum_C P_C ln(P_C / Q_C) is computed for every group-by and averaged. */
#ifndef AK_KL_H
#define AK_KL_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "core/table.h"

/* The published rows: per row its box [lo, hi] per QI (row-major, nqi codes
 * each) and its sensitive code (a code of the original table). */
typedef struct kl_published {
    size_t nrows;
    const uint32_t *lo, *hi;
    const uint32_t *sa;
} kl_published;

/* Largest cube a group-by may need (cells); larger ones are refused. */
#define KL_MAX_CELLS ((size_t)1 << 27)

/* KL-divergence at `level` (1..t->nqi) of t (which has sensitive codes)
 * against pub: the mean over the C(nqi, level) group-bys into *mean. The
 * result is +inf when a published estimate is 0 where the original is not. */
int metrics_kl_divergence(const table *t, const kl_published *pub, unsigned level, double *mean /* OUT */,
                          size_t *groupbys /* OUT */, ak_error *err);

/* The code range [lo, hi] of QI q that a published text covers: "*" every
 * code, a hierarchy label its leaves, a numeric "v" or "lo-hi" the codes of
 * the values inside. Returns 0, or -1 when the text is not such a value. */
int metrics_range_of_published(const table *t, uint32_t q, const char *text, size_t len, uint32_t *lo /* OUT */,
                               uint32_t *hi /* OUT */);

#endif
