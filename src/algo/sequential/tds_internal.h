/* tds_internal.h — what the files of TDS4SA share (src/algo/sequential/):
 * the cut's values and candidates, Tree2 (the partitions of the earlier
 * releases, grouped by join values, and the probe cache; tds_tree2.c), the
 * pieces of one evaluation of the X-tree (tds_xtree.c) and the state of one
 * run, which tds.c (candidates and [Wang06] Algorithm 1) owns. */
#ifndef AK_TDS_INTERNAL_H
#define AK_TDS_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "algo/sequential/tds.h"
#include "common/hash.h"
#include "core/hierarchy.h"

#define NONE UINT32_MAX

/* A value of a cut ([Wang06] §3.2) and, when it can be specialized, a candidate. */
typedef struct cand {
    uint32_t attr;
    uint32_t node;       /* categorical: hierarchy node; NONE for an interval */
    uint32_t lo, hi;     /* code range */
    uint32_t cut;        /* interval: children [lo, cut-1] and [cut, hi] */
    uint32_t lut;        /* categorical with children: offset of its code -> child table in tds.lut */
    uint32_t nchildren;  /* 0: cannot be specialized */
    int alive;           /* in the current cut */
    uint64_t count;      /* |T1[v]| */
    double gain;         /* InfoGain(v) */
    double newrisk, restrisk;
} cand;

/* An earlier release's partition P_i (Tree2 leaf). */
typedef struct rpart {
    uint64_t n;
    uint32_t xid;        /* its value on X ∩ att(T_i) */
    uint32_t yoff, ylen; /* its (distinct, or sensitive for linkability) Y tuples in yv/yc */
} rpart;

typedef struct rtree {
    const tds_release *rel;
    size_t nparts;
    rpart *parts;        /* sorted by join tuple */
    uint32_t njt;        /* distinct join tuples */
    uint32_t *jt_nodes;  /* njt * nj */
    uint32_t *jt_first;  /* njt + 1: parts of tuple t are [jt_first[t], jt_first[t+1]) */
    uint32_t *yv;
    uint64_t *yc;
    int y_key;           /* its Y is a key of the release */
} rtree;

/* A T1 partition within one evaluation: sub-value s of the group, its probe
 * (matching partitions of every release), size and Y tuples. */
typedef struct piece {
    uint32_t s, probe;
    uint64_t n;
    uint32_t yoff, ylen;
    uint64_t ymax;       /* view_pieces without lists: the largest count of one of its Y tuples */
} piece;

enum { MODE_CASE4, MODE_CASE1, MODE_KEY, MODE_GENERAL, MODE_LINK };

typedef struct tds {
    const tds_input *in;
    const table *t;
    size_t n;
    uint32_t d;              /* X1 attributes */
    uint32_t nraw;           /* raw join attributes (QIs d..) */
    uint32_t nclasses;       /* class labels (0: none) */
    size_t nrel;
    rtree *trees;
    int mode;                /* how risk is counted */
    int y_table;             /* MODE_KEY / MODE_LINK: 0 for T1, i + 1 for release i */
    int y1_key;
    int need_y1_lists;
    int unique_pairs;        /* every x of the join comes from one pair (P1, P2, ..., Pp): see probe_summary */
    /* raw join values */
    uint32_t *jraw;          /* per row: id of its raw join tuple */
    uint32_t njraw;
    uint32_t *jraw_nodes;    /* njraw * nraw nodes */
    uint32_t *jr_stamp, *jr_local, *jr_global, jr_epoch;
    /* candidates */
    cand *cands;
    size_t ncands, cap_cands;
    uint32_t *lut;           /* per categorical candidate: child index of each code in [lo, hi] */
    size_t nlut, cap_lut;
    /* groups */
    uint32_t *rows, *tmp;
    /* the records in the order of rows: per position rw words, the codes of
     * the X1 attributes, then the Y1 tuple, the raw join tuple and the class
     * (0 when there is none), so scans of a group read memory in order */
    uint32_t *rec, *rec_tmp;
    uint32_t rw;
    size_t ngroups, cap_groups, cap_gval, cap_gstat, cap_gbegin, cap_gend, cap_gown;
    size_t *gbegin, *gend;
    uint32_t *gval;          /* ngroups * d candidate ids */
    double *gstat;           /* ngroups * d risk after specializing attribute j; NAN when it cannot be */
    double *gown;            /* risk of the group as it is */
    /* probe cache */
    strmap probes;
    uint32_t *probe_off;     /* per probe * nrel: offset into probe_items; +1 end sentinel per probe */
    size_t cap_probe_off;
    uint32_t *probe_items;   /* indices of matching rparts */
    size_t nprobe_items, cap_probe_items;
    /* per probe, with unique_pairs (probe_summary) */
    unsigned char *probe_dead;
    uint64_t *probe_minn, *probe_minf;
    double *probe_link;
    size_t cap_probe_dead, cap_probe_minn, cap_probe_minf, cap_probe_link;
    /* counters of count_views: per view its first slot; per slot rows, and rows per Y tuple */
    size_t *voff;
    uint64_t *slotn, *sloty;
    size_t cap_slotn, cap_sloty;
    /* scratch of one evaluation */
    piece *pieces;
    size_t npieces, cap_pieces;
    uint32_t *piece_of;      /* per dense (sub, local raw) slot: piece index + 1 */
    size_t cap_piece_of;
    uint64_t *pairs;
    size_t cap_pairs;
    uint32_t *pyv;
    uint64_t *pyc;
    size_t cap_pyv, cap_pyc, npy;
    uint64_t *dense;
    size_t cap_dense;
    u64scratch xmap, ymap; /* x values and (x, y) pairs of one evaluation, emptied per evaluation */
    uint64_t *ax, *ay;
    uint32_t *xstamp, *xof;
    size_t cap_ax, cap_ay, cap_xstamp, cap_xof;
    uint32_t *finals;
    size_t nfinals, cap_finals;
    uint32_t *jbuf;
    uint32_t *combo;
    ak_error *err;
} tds;

static inline const hier *attr_hier(const tds *s, uint32_t q) { return s->t->qi[q].h; }

/* Child index of code within candidate c (categorical: through its table,
 * so a record is refined in O(1); interval: which side of the cut). */
static inline uint32_t child_index(const tds *s, const cand *c, uint32_t code)
{
    if (c->node == NONE) return code >= c->cut;
    return c->lut == NONE ? 0 : s->lut[c->lut + (code - c->lo)];
}

/* The node of child i of categorical candidate c. */
static inline uint32_t child_node(const tds *s, const cand *c, uint32_t i)
{
    const hier *h = attr_hier(s, c->attr);
    return hier_children(h)[hier_node_at(h, c->node)->first_child + i];
}

/* ---------------------------------------------------- tds_tree2.c (§5.3) -- */

/* Builds an earlier release's partitions P_i grouped by join tuple (with
 * y_sensitive_only, only its sensitive Y tuples count, for linkability). */
int tds_build_rtree(tds *s, const tds_release *rel, rtree *rt, int y_sensitive_only);
void tds_free_rtree(rtree *rt);
/* The probe id of T1 join nodes j1 (matching partitions of every release
 * computed on first sight). */
int tds_probe_of(tds *s, const uint32_t *j1, uint32_t *id);

/* ---------------------------------------------- tds_xtree.c (§5.3-5.4) -- */

/* Splits the rows of group g by the children of its value on attribute j
 * (NONE: not split) and by raw join value into pieces. */
int tds_group_pieces(tds *s, size_t g, uint32_t j);
/* Risk of group g as it is and after specializing each of its values. */
int tds_measure_group(tds *s, size_t g);

#endif
