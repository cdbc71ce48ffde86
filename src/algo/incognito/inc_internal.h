/* inc_internal.h — what the files of src/algo/incognito share: the encoded
 * lattice domain (per QI and level, the present generalized values as dense
 * numbers), frequency sets over packed keys, and the candidate graphs.
 *
 * Keys. A frequency-set key packs one field per QI (its generalized value at
 * the node's level, a dense number below card[level]) above the sensitive
 * code (when the model needs one); QIs outside a node's attribute set hold 0.
 * Since generalized values only get fewer, each QI's field has the width of
 * its level-0 card, at every level.
 *
 * Nodes. A node is an attribute set (bit q = QI q) and a level vector packed
 * with QI 0 in the highest bits, so that ordering packed vectors orders level
 * vectors lexicographically. */
#ifndef AK_INC_INTERNAL_H
#define AK_INC_INTERNAL_H

#include "algo/incognito/incognito.h"

typedef struct inc_qi {
    uint32_t height;        /* top level */
    uint32_t shift, bits;   /* key field */
    uint32_t lshift, lbits; /* level field of a packed node */
    uint32_t *card;         /* card[L]: present values at level L */
    uint32_t **gen;         /* gen[L][v0]: level-L value of level-0 value v0 */
    uint32_t **rep;         /* rep[L][v]: one level-0 value under level-L value v */
    uint32_t **node;        /* node[L][v]: its hierarchy node */
    uint32_t **box_lo;      /* box_lo/hi[L][v]: the table codes it covers (partition box) */
    uint32_t **box_hi;
    double **ncp;           /* ncp[L][v]: NCP of the value (table_ncp of its box) */
    uint32_t **up;          /* up[a * (height + 1) + b][v] (a < b): the level-b value over level-a value v, i.e.
                               gen[b][rep[a][v]] in one lookup (rollup) */
    uint64_t **upk;         /* upk[a * (height + 1) + b][v]: up[...][v] already shifted into the key field */
} inc_qi;

typedef struct inc_node {
    uint64_t mask; /* attribute set */
    uint64_t lv;   /* packed levels */
} inc_node;

/* A frequency set: distinct keys with their row counts. */
typedef struct inc_fset {
    size_t n;
    uint64_t *key;
    uint32_t *count;
    uint32_t refs;     /* queued nodes that will roll up from it */
    uint32_t one_block; /* key and count live in f's own allocation (inc_fset_free frees f alone) */
    size_t room;        /* one_block: the keys (and counts) it has room for */
} inc_fset;

/* Freed one-block frequency sets kept for the next rollups (fset.c), so that
 * the search does not hand large blocks back to the system and fault them in
 * again: at most INC_POOL sets and INC_POOL_BYTES bytes. */
enum { INC_POOL = 128 };
#define INC_POOL_BYTES ((size_t)32 << 20)

/* A slot of the group-by table: key, value and the stamp of the group-by that
 * filled it, together in 16 bytes so that a probe touches one cache line. */
typedef struct inc_slot {
    uint64_t key;
    uint32_t val;
    uint32_t stamp;
} inc_slot;

typedef struct inc_ctx {
    const table *t;
    const model *m;
    uint32_t nqi;
    inc_qi *qi;
    size_t nrows;
    uint32_t **code0;       /* code0[q][row]: level-0 value */
    const uint32_t *sens;   /* sensitive codes per row, NULL when the model needs none */
    uint32_t sbits;         /* width of the sensitive field (low bits of a key) */
    uint64_t limit;         /* rows that may be suppressed */
    double defer;           /* GCP of the optimal search: a suppressed row costs defer * (its full generalization); 1
                               normally, less in local recoding, where suppressed rows are published later */
    size_t share_min;       /* inc_options.cube_share_min */
    /* Group-by scratch: open addressing with generation stamps, so that starting
     * a new group-by costs nothing; slots used in order of first insertion. */
    inc_slot *slot;
    uint32_t *hused;
    size_t hcap, hmask, nused;
    uint32_t hgen;
    int hshift;
    inc_fset *pool[INC_POOL];
    size_t npool, pool_bytes;
    /* The lattice's edge masks of the optimal search (optimal_state.c), kept for its next call on the same
     * QIs (the iterations of local recoding): per node, bit q set when QI q is at level 0 / at its top. */
    uint64_t *lat_bottom, *lat_top;
    size_t lat_n;
    /* Scratch of its keys (optimal.c fill_order_gcp), lat_n entries each when not NULL. */
    double *lat_pb, *lat_pm;
    uint32_t *lat_ht;
    /* Groups of the last evaluated frequency set (inc_fset_eval). */
    size_t ngroups, gcap;
    uint64_t *gkey;         /* tuple key (sensitive field cleared) */
    uint64_t *gtotal;       /* rows */
    unsigned char *gholds;  /* satisfies the model */
    uint32_t *gstart, *gfill, *gcounts, *gscratch, *gid;
    uint32_t *gcodes;   /* t, δ, β: the sensitive code of each gcounts entry */
    model_work *work;   /* t, δ, β: the predicates' scratch (NULL without those models) */
    size_t gcounts_cap;
    inc_counters counters;
    const risk_model *risk; /* inc_options.risk: the table-level risk predicate, NULL: none */
    struct ak_progress *progress; /* cancel flag checked before every frequency set is computed (NULL: none) */
} inc_ctx;

/* Domain (domain.c). */
int inc_ctx_init(inc_ctx *c, const table *t, const model *m, double suppression, ak_error *err);
void inc_ctx_free(inc_ctx *c);
/* The value of QI q in a packed class key (the key fields of inc_qi). */
static inline uint32_t inc_key_value(const inc_ctx *c, uint64_t key, uint32_t q)
{
    const inc_qi *a = &c->qi[q];
    return a->bits ? (uint32_t)((key >> a->shift) & ((((uint64_t)1) << a->bits) - 1)) : 0;
}

static inline uint32_t inc_level(const inc_ctx *c, uint64_t lv, uint32_t q)
{
    return (uint32_t)(lv >> c->qi[q].lshift) & ((1u << c->qi[q].lbits) - 1u);
}
static inline uint64_t inc_level_field(const inc_ctx *c, uint32_t q)
{
    return c->qi[q].lbits ? ((((uint64_t)1 << c->qi[q].lbits) - 1) << c->qi[q].lshift) : 0;
}
static inline uint64_t inc_with_level(const inc_ctx *c, uint64_t lv, uint32_t q, uint32_t level)
{
    return (lv & ~inc_level_field(c, q)) | ((uint64_t)level << c->qi[q].lshift);
}
uint32_t inc_node_height(const inc_ctx *c, inc_node n);
uint64_t inc_full_mask(const inc_ctx *c);

/* Frequency sets (fset.c). */
int inc_fset_scan(inc_ctx *c, inc_node n, inc_fset **out /* OUT */, ak_error *err);
int inc_fset_rollup(inc_ctx *c, const inc_fset *src, inc_node from, inc_node to, inc_fset **out /* OUT */,
                    ak_error *err);
/* Projects src onto the attributes keep_mask; *out is NULL when a sample shows
 * that the projection would keep most of src's keys (then roll up from src). */
int inc_fset_project(inc_ctx *c, const inc_fset *src, uint64_t keep_mask, inc_fset **out /* OUT */, ak_error *err);
void inc_fset_free(inc_fset *f);
/* Frees f, or keeps its block in c's pool for a later rollup. */
void inc_fset_release(inc_ctx *c, inc_fset *f);
/* Tests a frequency set: *anonymous tells whether the rows of classes that fail
 * the model are at most the limit. With `groups` the classes are left in
 * c->gkey / gtotal / gholds (all of them; otherwise the test may stop early). */
int inc_fset_eval(inc_ctx *c, const inc_fset *f, int groups, int *anonymous /* OUT */, uint64_t *failing /* OUT */,
                  ak_error *err);

/* The --max-risk hook (risk_hook.c): whether the classes of sizes[0..n)
 * satisfy c->risk (always when it is NULL). */
int inc_risk_holds_u32(const inc_ctx *c, const uint32_t *sizes, size_t n);
int inc_risk_holds_u64(const inc_ctx *c, const uint64_t *sizes, size_t n);
/* The optimum of a search over the whole lattice (optimal.c). */
typedef struct inc_opt_result {
    int found;
    double loss;        /* GCP: the weighted NCP sum over rows (not normalized); height; DM */
    uint32_t height;
    uint64_t lv;        /* packed levels */
    uint64_t suppressed;
    uint64_t lattice, pruned_tagged, pruned_bound;
} inc_opt_result;

/* The node of least loss over the current rows of c (c->nrows, c->code0,
 * c->sens, c->limit), by the bound-ordered search or, with `exhaustive`, by
 * testing every node. ANONKIT_E_INELIGIBLE when no node is anonymous. */
int inc_optimal_ctx(inc_ctx *c, inc_choose by, const double *weights, int exhaustive, inc_opt_result *out /* OUT */,
                    ak_error *err);

/* For tests: per lattice node (index = sum over QIs of level times the product
 * of the later QIs' heights + 1), the lower bound on its GCP loss (not
 * normalized) that the fast search orders by under c->limit (the loss without
 * suppression plus the pair sub-lattices' bound), and the rows the pairs prove
 * to fail (0 when the pair bound is not used: no suppression, or a model not
 * monotone under it). */
int inc_optimal_bounds(inc_ctx *c, const double *weights, double *lower /* OUT */, uint64_t *most_failing /* OUT */,
                       ak_error *err);

/* Searches (search.c): the anonymous nodes over all QIs, as packed level vectors. */
int inc_run_variant(inc_ctx *c, inc_variant v, uint64_t **out_lv /* OUT */, size_t *out_n /* OUT */, ak_error *err);

#endif
