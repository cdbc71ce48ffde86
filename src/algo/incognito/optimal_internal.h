/* optimal_internal.h — the state of the optimal full-domain search
 * (optimal.c), shared with its set-up (optimal_state.c). Internal to
 * src/algo/incognito. */
#ifndef AK_ALGO_INCOGNITO_OPTIMAL_INTERNAL_H
#define AK_ALGO_INCOGNITO_OPTIMAL_INTERNAL_H

#include "algo/incognito/inc_internal.h"

enum { TAG_NONE = 0, TAG_FAIL = 1, TAG_PASS = 2, TAG_TESTED = 4 };
enum { CACHE = 256 };

/* The rows of one QI at one level, their weighted NCPs sorted in descending
 * order: cnt[i] rows and sum[i] cost before entry i, val[i] its cost per row. */
typedef struct top_sums {
    size_t n;
    uint64_t *cnt;
    double *sum, *val;
} top_sums;

/* The sub-lattice of two QIs a < b (Incognito's subset property, [LeFevre05]):
 * per level pair (la, lb), at index la * (height_b + 1) + lb, the rows in classes
 * that fail the model when the table is grouped by a and b alone, and their
 * weighted NCP in a and b. */
typedef struct pair_sub {
    uint32_t a, b;
    uint64_t *fail;
    double *cost;
} pair_sub;

typedef struct opt_state {
    inc_ctx *c;
    inc_choose by;
    double w[64], wsum;
    size_t n;                 /* lattice nodes */
    size_t stride[64];        /* index = sum of level * stride */
    double *sum[64];          /* sum[q][l]: weighted NCP of QI q at level l over the rows (GCP) */
    double *maxcost[64];      /* maxcost[q][l]: weighted NCP of the widest value of QI q at level l */
    double **wncp[64];        /* wncp[q][l][v]: w[q] * ncp[l][v], the weighted NCP of a value (GCP) */
    double *mincost[64];      /* mincost[q][l]: weighted NCP of QI q at level l summed over the nrows - limit rows
                                 where it is least (rows an iteration of local recoding must publish at least) */
    const uint64_t *at_bottom; /* per node, bit q: QI q at level 0 (the cone walks' edges, without divisions; c->lat_bottom) */
    const uint64_t *at_top;    /* per node, bit q: QI q at its top level (c->lat_top) */
    unsigned char *tag;       /* TAG_FAIL or TAG_PASS, | TAG_TESTED once tested */
    double *emin;             /* per node: the largest suppression excess of a tested generalization (GCP) */
    top_sums *top[64];        /* top[q][l]: QI q's costs at level l, dearest first (pair_bound) */
    int up_bound;             /* emin holds a lower bound on the loss from a tested specialization (emin_cone upwards) */
    int top_ok;               /* weights >= 0 and NCPs in [0, 1]: a row costs at most W */
    pair_sub *pairs;          /* the two-QI sub-lattices (pair_bound); NULL: not used */
    size_t npairs;
    size_t *path;
    size_t *stack;
    struct {
        uint64_t lv, wide; /* wide: the levels spread out (wide_of) */
        size_t n;          /* fs->n, beside the levels for fset_source's scan */
        inc_fset *fs;
    } cache[CACHE];
    uint32_t woff[64];        /* wide_of: QI q's level at bit woff[q], in lbits + 1 bits (the top one a guard) */
    uint64_t wguard;          /* the guard bits; 0: the spread levels do not fit in 64 bits (below() instead) */
    size_t ncache, next_evict;
    uint64_t last0;
    int have_last0;
} opt_state;

/* Lattice size, strides, per-level NCP totals (and with want_pairs the
 * two-QI sub-lattices' inputs) and the level-0 frequency set, the first
 * cached set. */
int opt_state_init(opt_state *s, inc_ctx *c, inc_choose by, const double *weights, int want_pairs, ak_error *err);
/* Frees what opt_state_init and the search allocated in s. */
void opt_state_free(opt_state *s);

#endif
