/* tds.h — TDS4SA, top-down specialization for sequential anonymization
 * ([Wang06] Algorithm 1, §5, §7): generalizes the current release T1 over cuts of
 * its taxonomies (continuous attributes: intervals split at the best
 * information-gain threshold) so that the join of T1 with earlier, already
 * published releases T2..Tp satisfies (X,Y)-anonymity or (X,Y)-linkability.
 *
 * The input is encoded by releases.c (releases.h):
 *   T1        an encoded table whose QIs 0..nx1-1 are X ∩ att(T1) (generalized;
 *             categorical with a hierarchy, or continuous) and whose QIs
 *             nx1..nqi-1 are join attributes of T1 outside X (kept as they are);
 *   releases  one tds_release per earlier release: its join attributes as
 *             hierarchy nodes (it may have been generalized), its X attributes
 *             as codes, its Y attributes as one tuple code per row.
 * The join is never materialized: Tree1 is the list of T1 groups (one per
 * generalized x1 value) over a permutation of the rows, Tree2 the static
 * partitions of each earlier release grouped by join values (§5.3). */
#ifndef AK_TDS_H
#define AK_TDS_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "core/partition.h"
#include "core/table.h"
#include "model/xyprivacy.h"

/* A pair of values that cannot belong to one person ([Wang06] §3.3, inconsistency
 * predicate): a T1 join attribute inside node range [a_lo, a_hi] and a join
 * attribute of the earlier release inside [b_lo, b_hi] never match. */
typedef struct tds_pair {
    uint32_t j1, ji;          /* join attribute index in T1 and in the release */
    uint32_t a_lo, a_hi, b_lo, b_hi;
} tds_pair;

/* One earlier release, encoded. */
typedef struct tds_release {
    size_t nrows;
    uint32_t nj;              /* its join attributes with T1 */
    const hier **jh;          /* per join attribute: its hierarchy */
    uint32_t *jnode;          /* nrows * nj hierarchy nodes */
    uint32_t nx;              /* its attributes in X */
    uint32_t *xcode;          /* nrows * nx: node (join attributes) or text id */
    uint32_t *y;              /* per row: code of its Y tuple; NULL when Y has none of its attributes */
    uint32_t ny;              /* distinct Y tuples */
    unsigned char *y_sensitive; /* per Y tuple (linkability): counts toward L_Y(X) */
    uint32_t ncommon;         /* common attributes with T1 (consistency predicate) */
    uint32_t *common_j1, *common_ji; /* their join indices in T1 and here */
    uint32_t npairs;
    tds_pair *pairs;
    int join_in_x;            /* every join attribute of this release is in X */
} tds_release;

typedef struct tds_input {
    const table *t;           /* T1 */
    uint32_t nx1;             /* QIs 0..nx1-1 are generalized */
    uint32_t nj1;             /* join attributes of T1 (with any release) */
    uint32_t *j1_qi;          /* per join attribute: its QI index in t */
    const uint32_t *y1;       /* per row of T1: Y tuple code; NULL when Y has no attribute of T1 */
    uint32_t ny1;
    const unsigned char *y1_sensitive; /* per T1 Y tuple (linkability) */
    size_t nreleases;
    const tds_release *releases;
    xy_model model;
    int distortion;           /* Score's InfoGain: 1 distortion (eq. 3), 0 class entropy (eq. 2) */
    int reference;            /* 1: measure every view of a group by its own scan and the X-tree, without
                                 the shortcuts (one scan for all views, per-probe summaries); the tests
                                 compare both ways */
} tds_input;

/* One value of a final cut. */
typedef struct tds_cut_value {
    uint32_t attr;            /* X1 attribute (QI index) */
    uint32_t lo, hi;          /* code range; categorical: the node's leaf range */
    uint32_t node;            /* categorical: hierarchy node; UINT32_MAX for intervals */
} tds_cut_value;

typedef struct tds_result {
    double risk;              /* achieved: -A_Y(X) for anonymity, L_Y(X) for linkability */
    int empty_join;           /* no x occurs in the join */
    uint64_t specializations; /* winners performed */
    size_t ncut;
    tds_cut_value *cut;       /* the final cut of every X1 attribute, by attribute then code */
    double distortion_cat, distortion_cont; /* per record ([Wang06] §6) */
    const char *special_case; /* which way a_Y(x) is counted ([Wang06] §5.4), for the report */
} tds_result;

void tds_result_free(tds_result *r);

/* Runs TDS4SA. When the most general T1 already violates the model
 * (Corollary 4.2) returns ANONKIT_E_INELIGIBLE. Otherwise fills out (one class
 * per T1 partition: generalized X1 values and raw join values) and res. */
int tds_run(const tds_input *in, partition *out, tds_result *res /* OUT */, ak_error *err);

#endif
