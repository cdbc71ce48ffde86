/* tds.c — TDS4SA (004 Algorithm 1 with the data structures of §5.3–5.4 and
 * the star join of §7).
 *
 * Tree1 is a list of groups, one per generalized value x1 of X1 = X ∩ att(T1);
 * each group is a slice of one permutation of T1's rows, refined in place when
 * a specialization splits it (Link[w] is the set of groups whose value on the
 * winner's attribute is w). Inside a group the rows differ only on the join
 * attributes of T1 outside X1 ("raw" join values); a group and one raw join
 * value form a partition P1. Tree2 is, per earlier release, its partitions P2
 * (distinct join values and X values, with sizes and Y values) grouped by
 * join values; a probe cache maps the join values of a P1 to the matching P2
 * of every release (consistency and inconsistency predicates, §3.3).
 *
 * Values x on X from different groups are different, so the X-tree is kept
 * per group: every group stores the largest risk over its x values (-a_Y(x)
 * or l_y(x)) and, for every attribute, the largest risk after specializing
 * its value on that attribute. Those numbers are computed once, when the
 * group is made, from its rows — the only time raw records are touched — and
 * a candidate's privacy after specialization is the larger of the new
 * values' risks (over its Link) and the risks of the groups off its Link.
 * InfoGain of a candidate is computed once, when it enters the cut.
 *
 * a_Y(x) is counted by the special cases of §5.4 when they apply — Case 4 (Y
 * holds a key of every table: a_Y(x) = a(x)), Case 1 (X holds every join
 * attribute: one matching pair per x, a_Y = product of the distinct Y counts),
 * Cases 2/3 (Y lies in one table where it is a key: sizes of the distinct
 * partitions reaching x) — and otherwise by hashing (x, y) pairs. */
#include "algo/sequential/tds.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/compare.h"
#include "common/hash.h"
#include "common/stats.h"
#include "common/strbuf.h"
#include "metrics/metrics.h"

#define NONE UINT32_MAX

/* ------------------------------------------------------------ structures -- */

/* A value of a cut (004 §3.2) and, when it can be specialized, a candidate. */
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
    u64map xmap, ymap;     /* x values and (x, y) pairs of one evaluation, emptied per evaluation */
    uint64_t *ax, *ay;
    uint32_t *xstamp, *xof;
    size_t cap_ax, cap_ay, cap_xstamp, cap_xof;
    uint32_t *finals;
    size_t nfinals, cap_finals;
    uint32_t *jbuf;
    uint32_t *combo;
    ak_error *err;
} tds;

/* -------------------------------------------------------------- helpers -- */

static const hier *attr_hier(const tds *s, uint32_t q) { return s->t->qi[q].h; }

/* Child index of code within candidate c (categorical: through its table,
 * so a record is refined in O(1); interval: which side of the cut). */
static inline uint32_t child_index(const tds *s, const cand *c, uint32_t code)
{
    if (c->node == NONE) return code >= c->cut;
    return c->lut == NONE ? 0 : s->lut[c->lut + (code - c->lo)];
}

/* The node of child i of categorical candidate c. */
static uint32_t child_node(const tds *s, const cand *c, uint32_t i)
{
    const hier *h = attr_hier(s, c->attr);
    return hier_children(h)[hier_node_at(h, c->node)->first_child + i];
}

static double entropy_of(const uint64_t *hist, uint32_t k, uint64_t n)
{
    if (!n) return 0;
    double e = 0;
    for (uint32_t i = 0; i < k; i++) e -= ak_xlog2x((double)hist[i] / (double)n);
    return e;
}

/* Appends candidate c; a categorical value with children gets its code ->
 * child table. */
static int add_cand(tds *s, const cand *c, uint32_t *id)
{
    if (AK_RESERVE(s->cands, s->cap_cands, s->ncands + 1) != 0) return ak_err_nomem(s->err);
    cand *v = &s->cands[s->ncands];
    *v = *c;
    v->lut = NONE;
    if (v->node != NONE) {
        const hier *h = attr_hier(s, v->attr);
        const hier_node *nd = hier_node_at(h, v->node);
        if (nd->nchildren) {
            const size_t width = (size_t)v->hi - v->lo + 1;
            if (s->nlut + width >= NONE)
                return ak_err_set(s->err, ANONKIT_E_INPUT, NULL, 0, 0, "hierarchies too large to specialize");
            if (AK_RESERVE(s->lut, s->cap_lut, s->nlut + width) != 0) return ak_err_nomem(s->err);
            const uint32_t *ch = hier_children(h) + nd->first_child;
            for (uint32_t i = 0; i < nd->nchildren; i++) {
                const hier_node *cn = hier_node_at(h, ch[i]);
                for (uint32_t code = cn->lo; code <= cn->hi; code++) s->lut[s->nlut + (code - v->lo)] = i;
            }
            v->lut = (uint32_t)s->nlut;
            s->nlut += width;
        }
    }
    *id = (uint32_t)s->ncands++;
    return 0;
}

/* Width of the interval [lo, hi] of continuous attribute q over its full
 * range: the distortion of one record in it (004 §6). */
static double value_width(const tds *s, uint32_t q, uint32_t lo, uint32_t hi)
{
    return metrics_distortion(s->t, q, lo, hi);
}

/* Fills count, gain, cut and nchildren of candidate c from its rows, the
 * rows of groups `gids` (or all rows when gids is NULL). */
static int measure_cand(tds *s, cand *c, const uint32_t *gids, size_t ng)
{
    const uint32_t k = s->nclasses ? s->nclasses : 1;
    const int categorical = c->node != NONE;
    uint32_t nslots;
    if (categorical) {
        nslots = hier_node_at(attr_hier(s, c->attr), c->node)->nchildren;
        if (!nslots) { /* a leaf: no candidate */
            c->nchildren = 0;
            nslots = 1;
        }
    } else {
        nslots = c->hi - c->lo + 1;
    }
    size_t cells = (size_t)nslots * k;
    if (AK_RESERVE(s->dense, s->cap_dense, cells) != 0) return ak_err_nomem(s->err);
    uint64_t *h = s->dense;
    memset(h, 0, cells * sizeof *h);
    uint64_t n = 0;
    const uint32_t rw = s->rw, fc = s->d + 2;
    for (size_t gi = 0; gi < (gids ? ng : 1); gi++) {
        size_t b = gids ? s->gbegin[gids[gi]] : 0, e = gids ? s->gend[gids[gi]] : s->n;
        for (const uint32_t *x = s->rec + b * rw, *end = s->rec + e * rw; x < end; x += rw) {
            const uint32_t code = x[c->attr];
            const uint32_t slot = categorical ? child_index(s, c, code) : code - c->lo;
            h[(size_t)slot * k + x[fc]]++;
            n++;
        }
    }
    c->count = n;
    if (categorical && !hier_node_at(attr_hier(s, c->attr), c->node)->nchildren) return 0;
    /* class histogram of the whole */
    uint64_t whole[4096];
    uint64_t *wh = k <= 4096 ? whole : calloc(k, sizeof *wh);
    if (!wh) return ak_err_nomem(s->err);
    memset(wh, 0, k * sizeof *wh);
    for (size_t i = 0; i < cells; i++) wh[i % k] += h[i];
    const double ent = entropy_of(wh, k, n);
    int rc = 0;
    if (categorical) {
        c->nchildren = nslots;
        if (s->in->distortion) {
            c->gain = (double)n;
        } else {
            double rest = 0;
            for (uint32_t ch = 0; ch < nslots; ch++) {
                uint64_t m = 0;
                for (uint32_t y = 0; y < k; y++) m += h[(size_t)ch * k + y];
                rest += (double)m / (double)(n ? n : 1) * entropy_of(h + (size_t)ch * k, k, m);
            }
            c->gain = ent - rest;
        }
    } else if (c->lo == c->hi || n == 0) {
        c->nchildren = 0;
    } else {
        /* scan thresholds cut in (lo, hi]: left = codes < cut */
        uint64_t *left = calloc(k, sizeof *left);
        if (!left) rc = ak_err_nomem(s->err);
        uint64_t nl = 0;
        double best = -1;
        uint32_t best_cut = c->lo + 1;
        for (uint32_t cut = c->lo + 1; rc == 0 && cut <= c->hi; cut++) {
            const uint64_t *row = h + (size_t)(cut - 1 - c->lo) * k;
            for (uint32_t y = 0; y < k; y++) {
                left[y] += row[y];
                nl += row[y];
            }
            double score;
            if (s->nclasses) {
                const double el = entropy_of(left, k, nl);
                const uint64_t nr = n - nl;
                double er = 0; /* right histogram = whole - left */
                for (uint32_t y = 0; y < k; y++) er -= nr ? ak_xlog2x((double)(wh[y] - left[y]) / (double)nr) : 0;
                score = ent - ((double)nl * el + (double)nr * er) / (double)n;
            } else {
                /* no class: the median threshold */
                score = -fabs((double)nl - (double)(n - nl));
            }
            if (score > best + 1e-12) {
                best = score;
                best_cut = cut;
            }
        }
        free(left);
        c->cut = best_cut;
        c->nchildren = 2;
        if (s->in->distortion || !s->nclasses) {
            /* distortion removed: records times the narrowing of their interval */
            uint64_t nl2 = 0;
            for (uint32_t code = c->lo; code < best_cut; code++)
                for (uint32_t y = 0; y < k; y++) nl2 += h[(size_t)(code - c->lo) * k + y];
            const double w = value_width(s, c->attr, c->lo, c->hi);
            c->gain = (double)nl2 * (w - value_width(s, c->attr, c->lo, best_cut - 1)) +
                      (double)(n - nl2) * (w - value_width(s, c->attr, best_cut, c->hi));
            if (!s->in->distortion) c->gain = best > 0 ? best : 0;
        } else {
            c->gain = best > 0 ? best : 0;
        }
    }
    if (wh != whole) free(wh);
    return rc;
}

/* ---------------------------------------------------------------- Tree2 -- */

/* Builds an earlier release's partitions P_i grouped by join tuple. */
static int build_rtree(tds *s, const tds_release *rel, rtree *rt, int y_sensitive_only)
{
    ak_error *err = s->err;
    rt->rel = rel;
    const size_t n = rel->nrows;
    const uint32_t nj = rel->nj, nx = rel->nx;
    strmap jmap, pmap, xmap;
    memset(&jmap, 0, sizeof jmap);
    memset(&pmap, 0, sizeof pmap);
    memset(&xmap, 0, sizeof xmap);
    uint32_t *key = malloc((size_t)(nj + nx + 1) * sizeof *key);
    uint32_t *pid = malloc((n ? n : 1) * sizeof *pid);
    uint32_t *pjt = NULL, *pxid = NULL;
    uint64_t *pn = NULL, *pairs = NULL;
    size_t cap_p = 0, cap_pjt = 0, cap_pxid = 0;
    int rc = 0;
    if (!key || !pid || strmap_init(&jmap, 64) || strmap_init(&pmap, 1024) || strmap_init(&xmap, 1024)) {
        rc = ak_err_nomem(err);
        goto done;
    }
    /* a partition is a distinct (join nodes, X codes); its join tuple and X
     * value are numbered when it first appears, which numbers both in order
     * of first appearance over the rows */
    for (size_t r = 0; r < n && rc == 0; r++) {
        uint32_t p;
        int ins;
        memcpy(key, rel->jnode + r * nj, nj * sizeof *key);
        memcpy(key + nj, rel->xcode + r * nx, nx * sizeof *key);
        if (strmap_intern(&pmap, (const char *)key, (nj + nx) * sizeof *key, &p, &ins) ||
            AK_RESERVE(pn, cap_p, (size_t)p + 1) || AK_RESERVE(pjt, cap_pjt, (size_t)p + 1) ||
            AK_RESERVE(pxid, cap_pxid, (size_t)p + 1)) {
            rc = ak_err_nomem(err);
            break;
        }
        if (ins) {
            pn[p] = 0;
            if (strmap_intern(&jmap, (const char *)key, nj * sizeof *key, &pjt[p], NULL) ||
                strmap_intern(&xmap, (const char *)(key + nj), nx * sizeof *key, &pxid[p], NULL)) {
                rc = ak_err_nomem(err);
                break;
            }
        }
        pn[p]++;
        pid[r] = p;
    }
    if (rc) goto done;
    const uint32_t np = pmap.count, njt = jmap.count;
    rt->nparts = np;
    rt->njt = njt;
    rt->parts = calloc(np ? np : 1, sizeof *rt->parts);
    rt->jt_first = calloc((size_t)njt + 1, sizeof *rt->jt_first);
    rt->jt_nodes = malloc(((size_t)njt * nj + 1) * sizeof *rt->jt_nodes);
    uint32_t *order = malloc((np ? np : 1) * sizeof *order); /* old part id -> sorted position */
    if (!rt->parts || !rt->jt_first || !rt->jt_nodes || !order) {
        free(order);
        rc = ak_err_nomem(err);
        goto done;
    }
    for (uint32_t t = 0; t < njt; t++) memcpy(rt->jt_nodes + (size_t)t * nj, strmap_key(&jmap, t), nj * sizeof *key);
    for (uint32_t p = 0; p < np; p++) rt->jt_first[pjt[p] + 1]++;
    for (uint32_t t = 0; t < njt; t++) rt->jt_first[t + 1] += rt->jt_first[t];
    {
        uint32_t *fill = calloc((size_t)njt + 1, sizeof *fill);
        if (!fill) {
            free(order);
            rc = ak_err_nomem(err);
            goto done;
        }
        for (uint32_t p = 0; p < np; p++) {
            order[p] = rt->jt_first[pjt[p]] + fill[pjt[p]]++;
            rt->parts[order[p]].n = pn[p];
            rt->parts[order[p]].xid = pxid[p];
        }
        free(fill);
    }
    /* Y tuples per partition: (position, y) pairs sorted, then run-length counted */
    if (rel->y) {
        rt->y_key = rel->ny == n;
        pairs = malloc((n ? n : 1) * sizeof *pairs);
        if (!pairs) {
            free(order);
            rc = ak_err_nomem(err);
            goto done;
        }
        size_t m = 0;
        for (size_t r = 0; r < n; r++) {
            if (y_sensitive_only && !rel->y_sensitive[rel->y[r]]) continue;
            pairs[m++] = (uint64_t)order[pid[r]] << 32 | rel->y[r];
        }
        qsort(pairs, m, sizeof *pairs, ak_cmp_u64);
        rt->yv = malloc((m ? m : 1) * sizeof *rt->yv);
        rt->yc = malloc((m ? m : 1) * sizeof *rt->yc);
        if (!rt->yv || !rt->yc) {
            free(order);
            rc = ak_err_nomem(err);
            goto done;
        }
        size_t ny = 0;
        for (size_t i = 0; i < m;) {
            size_t j = i;
            while (j < m && pairs[j] == pairs[i]) j++;
            uint32_t p = (uint32_t)(pairs[i] >> 32);
            if (!rt->parts[p].ylen) rt->parts[p].yoff = (uint32_t)ny;
            rt->parts[p].ylen++;
            rt->yv[ny] = (uint32_t)pairs[i];
            rt->yc[ny] = j - i;
            ny++;
            i = j;
        }
    }
    free(order);
done:
    free(key);
    free(pid);
    free(pjt);
    free(pxid);
    free(pn);
    free(pairs);
    strmap_free(&jmap);
    strmap_free(&pmap);
    strmap_free(&xmap);
    return rc;
}

static void free_rtree(rtree *rt)
{
    free(rt->parts);
    free(rt->jt_first);
    free(rt->jt_nodes);
    free(rt->yv);
    free(rt->yc);
}

/* Whether node a of hierarchy ha lies inside [lo, hi]. */
static int node_within(const hier *h, uint32_t node, uint32_t lo, uint32_t hi)
{
    const hier_node *nd = hier_node_at(h, node);
    return nd->lo >= lo && nd->hi <= hi;
}

/* The match predicate of 004 §3.3 between T1 join nodes j1 and a join tuple
 * of release rt. */
static int matches(const tds *s, const uint32_t *j1, const rtree *rt, const uint32_t *ji)
{
    const tds_release *rel = rt->rel;
    for (uint32_t c = 0; c < rel->ncommon; c++) {
        const uint32_t a = rel->common_j1[c], b = rel->common_ji[c];
        const hier_node *x = hier_node_at(attr_hier(s, s->in->j1_qi[a]), j1[a]);
        const hier_node *y = hier_node_at(rel->jh[b], ji[b]);
        if (x->hi < y->lo || y->hi < x->lo) return 0; /* not on one generalization path */
    }
    for (uint32_t p = 0; p < rel->npairs; p++) {
        const tds_pair *pr = &rel->pairs[p];
        if (node_within(attr_hier(s, s->in->j1_qi[pr->j1]), j1[pr->j1], pr->a_lo, pr->a_hi) &&
            node_within(rel->jh[pr->ji], ji[pr->ji], pr->b_lo, pr->b_hi))
            return 0; /* semantically inconsistent */
    }
    return 1;
}

/* With unique pairs (every x on X in the join is made by one P1 and one
 * matching partition of each earlier release) a(x) and a(x, y) are products,
 * so the risk of a piece over all its matches needs only, per release, the
 * least |P_i| and the least number of distinct Y values of a matching P_i
 * (004 §5.4 Cases 1 and 4: a_Y(x) = a_Y1(x1) * a_Y2(x2), a(x) = |P1| * |P2|),
 * and for linkability with Y in release i the largest l_y over its matching
 * P_i (Lemma 4.2's proof: l_y(x1 x2) = the share of y in P_i, the other
 * factors cancel). Stores these for probe id. */
static int probe_summary(tds *s, uint32_t id)
{
    const size_t need = (size_t)id + 1;
    if (AK_RESERVE(s->probe_dead, s->cap_probe_dead, need) || AK_RESERVE(s->probe_minn, s->cap_probe_minn, need) ||
        AK_RESERVE(s->probe_minf, s->cap_probe_minf, need) || AK_RESERVE(s->probe_link, s->cap_probe_link, need))
        return ak_err_nomem(s->err);
    const uint32_t *off = s->probe_off + (size_t)id * (s->nrel + 1);
    uint64_t minn = 1, minf = 1;
    double link = 0;
    int dead = 0;
    for (size_t r = 0; r < s->nrel; r++) {
        const rtree *rt = &s->trees[r];
        if (off[r] == off[r + 1]) {
            dead = 1;
            break;
        }
        uint64_t mn = UINT64_MAX, mf = UINT64_MAX;
        for (uint32_t i = off[r]; i < off[r + 1]; i++) {
            const rpart *P = &rt->parts[s->probe_items[i]];
            const uint64_t f = rt->rel->y ? (rt->y_key ? P->n : P->ylen) : 1;
            if (P->n < mn) mn = P->n;
            if (f < mf) mf = f;
            if (s->mode == MODE_LINK && s->y_table == (int)r + 1)
                for (uint32_t k = 0; k < P->ylen; k++) {
                    const double l = xy_risk_linkability(rt->yc[P->yoff + k], P->n);
                    if (l > link) link = l;
                }
        }
        minn *= mn;
        minf *= mf;
    }
    s->probe_dead[id] = (unsigned char)dead;
    s->probe_minn[id] = minn;
    s->probe_minf[id] = minf;
    s->probe_link[id] = link;
    return 0;
}

/* The probe id of T1 join nodes j1 (matching partitions of every release
 * computed on first sight). */
static int probe_of(tds *s, const uint32_t *j1, uint32_t *id)
{
    int ins;
    const uint32_t nj1 = s->in->nj1;
    if (strmap_intern(&s->probes, (const char *)j1, (nj1 ? nj1 : 1) * sizeof *j1, id, &ins) != 0)
        return ak_err_nomem(s->err);
    if (!ins) return 0;
    const size_t base = (size_t)*id * (s->nrel + 1);
    if (AK_RESERVE(s->probe_off, s->cap_probe_off, base + s->nrel + 1) != 0) return ak_err_nomem(s->err);
    for (size_t r = 0; r < s->nrel; r++) {
        const rtree *rt = &s->trees[r];
        s->probe_off[base + r] = (uint32_t)s->nprobe_items;
        for (uint32_t jt = 0; jt < rt->njt; jt++) {
            if (!matches(s, j1, rt, rt->jt_nodes + (size_t)jt * rt->rel->nj)) continue;
            const uint32_t a = rt->jt_first[jt], b = rt->jt_first[jt + 1];
            if (AK_RESERVE(s->probe_items, s->cap_probe_items, s->nprobe_items + (b - a)) != 0)
                return ak_err_nomem(s->err);
            for (uint32_t p = a; p < b; p++) s->probe_items[s->nprobe_items++] = p;
        }
    }
    s->probe_off[base + s->nrel] = (uint32_t)s->nprobe_items;
    return s->unique_pairs ? probe_summary(s, *id) : 0;
}

/* ------------------------------------------------------------- X-tree -- */

/* Numbers the raw join values of rows [b, e) of the permutation locally
 * (jr_local, and jr_global back); returns how many there are (1 without raw
 * join attributes). */
static uint32_t local_raw(tds *s, size_t b, size_t e)
{
    if (!s->nraw) return 1;
    if (++s->jr_epoch == 0) {
        memset(s->jr_stamp, 0, s->njraw * sizeof *s->jr_stamp);
        s->jr_epoch = 1;
    }
    uint32_t nl = 0;
    for (size_t i = b; i < e; i++) {
        const uint32_t jr = s->rec[i * s->rw + s->d + 1];
        if (s->jr_stamp[jr] != s->jr_epoch) {
            s->jr_stamp[jr] = s->jr_epoch;
            s->jr_global[nl] = jr;
            s->jr_local[jr] = nl++;
        }
    }
    return nl;
}

/* Sets pc->probe from the join nodes of piece pc of group values gv, whose
 * value on attribute j (NONE: none) is specialized to child pc->s, and raw
 * join tuple raw. */
static int piece_probe(tds *s, const uint32_t *gv, uint32_t j, piece *pc, uint32_t raw)
{
    const uint32_t d = s->d;
    for (uint32_t a = 0; a < s->in->nj1; a++) {
        const uint32_t q = s->in->j1_qi[a];
        if (q < d) {
            const cand *c = &s->cands[gv[q]];
            s->jbuf[a] = q == j ? child_node(s, c, pc->s) : c->node;
        } else {
            s->jbuf[a] = s->jraw_nodes[(size_t)raw * s->nraw + (q - d)];
        }
    }
    return probe_of(s, s->jbuf, &pc->probe);
}

/* Splits the rows of group g by the children of its value on attribute j
 * (NONE: not split) and by raw join value into pieces, with their probes and,
 * when the risk needs them, their Y tuples. One scan per view: the reference
 * way, and the way for groups too small for count_views' counters. */
static int group_pieces(tds *s, size_t g, uint32_t j)
{
    const uint32_t d = s->d;
    const uint32_t *gv = s->gval + g * d;
    const cand *cj = j == NONE ? NULL : &s->cands[gv[j]];
    const uint32_t nsub = cj ? cj->nchildren : 1;
    const size_t b = s->gbegin[g], e = s->gend[g];
    const uint32_t nl = local_raw(s, b, e), rw = s->rw;
    const size_t slots = (size_t)nsub * nl;
    if (AK_RESERVE(s->piece_of, s->cap_piece_of, slots) != 0) return ak_err_nomem(s->err);
    memset(s->piece_of, 0, slots * sizeof *s->piece_of);
    s->npieces = 0;
    for (size_t i = b; i < e; i++) {
        const uint32_t *x = s->rec + i * rw, raw = x[d + 1];
        const uint32_t sub = cj ? child_index(s, cj, x[j]) : 0;
        const size_t slot = (size_t)sub * nl + (s->nraw ? s->jr_local[raw] : 0);
        if (!s->piece_of[slot]) {
            if (AK_RESERVE(s->pieces, s->cap_pieces, s->npieces + 1) != 0) return ak_err_nomem(s->err);
            s->pieces[s->npieces] = (piece){sub, raw, 0, 0, 0, 0};
            s->piece_of[slot] = (uint32_t)++s->npieces;
        }
        s->pieces[s->piece_of[slot] - 1].n++;
    }
    /* probes: join nodes of each piece (probe holds its raw join tuple until then) */
    for (size_t p = 0; p < s->npieces; p++) AK_CHECK(piece_probe(s, gv, j, &s->pieces[p], s->pieces[p].probe));
    if (!s->need_y1_lists) return 0;
    /* Y tuples of T1 per piece (only the sensitive ones for linkability) */
    const int sensitive_only = s->mode == MODE_LINK;
    s->npy = 0;
    if ((uint64_t)s->in->ny1 * s->npieces <= (1u << 20)) {
        const size_t cells = (size_t)s->in->ny1 * s->npieces;
        if (AK_RESERVE(s->dense, s->cap_dense, cells) != 0) return ak_err_nomem(s->err);
        memset(s->dense, 0, cells * sizeof *s->dense);
        for (size_t i = b; i < e; i++) {
            const uint32_t *x = s->rec + i * rw, y = x[d];
            if (sensitive_only && !s->in->y1_sensitive[y]) continue;
            const uint32_t sub = cj ? child_index(s, cj, x[j]) : 0;
            const size_t slot = (size_t)sub * nl + (s->nraw ? s->jr_local[x[d + 1]] : 0);
            s->dense[(size_t)(s->piece_of[slot] - 1) * s->in->ny1 + y]++;
        }
        for (size_t p = 0; p < s->npieces; p++) {
            s->pieces[p].yoff = (uint32_t)s->npy;
            for (uint32_t y = 0; y < s->in->ny1; y++) {
                const uint64_t c = s->dense[p * s->in->ny1 + y];
                if (!c) continue;
                if (AK_RESERVE(s->pyv, s->cap_pyv, s->npy + 1) || AK_RESERVE(s->pyc, s->cap_pyc, s->npy + 1))
                    return ak_err_nomem(s->err);
                s->pyv[s->npy] = y;
                s->pyc[s->npy++] = c;
                s->pieces[p].ylen++;
            }
        }
        return 0;
    }
    if (AK_RESERVE(s->pairs, s->cap_pairs, e - b) != 0) return ak_err_nomem(s->err);
    size_t m = 0;
    for (size_t i = b; i < e; i++) {
        const uint32_t *x = s->rec + i * rw, y = x[d];
        if (sensitive_only && !s->in->y1_sensitive[y]) continue;
        const uint32_t sub = cj ? child_index(s, cj, x[j]) : 0;
        const size_t slot = (size_t)sub * nl + (s->nraw ? s->jr_local[x[d + 1]] : 0);
        s->pairs[m++] = (uint64_t)(s->piece_of[slot] - 1) << 32 | y;
    }
    qsort(s->pairs, m, sizeof *s->pairs, ak_cmp_u64);
    if (AK_RESERVE(s->pyv, s->cap_pyv, m) || AK_RESERVE(s->pyc, s->cap_pyc, m)) return ak_err_nomem(s->err);
    for (size_t i = 0; i < m;) {
        size_t k = i;
        while (k < m && s->pairs[k] == s->pairs[i]) k++;
        piece *pc = &s->pieces[s->pairs[i] >> 32];
        if (!pc->ylen) pc->yoff = (uint32_t)s->npy;
        pc->ylen++;
        s->pyv[s->npy] = (uint32_t)s->pairs[i];
        s->pyc[s->npy++] = k - i;
        i = k;
    }
    return 0;
}

#define ID_LIMIT (1u << 29)

/* Interns one link of a key chain (level, previous id, value). */
static int chain(tds *s, u64map *m, uint32_t level, uint32_t prev, uint32_t value, uint32_t *id, int *ins)
{
    if (prev >= ID_LIMIT || value >= ID_LIMIT)
        return ak_err_set(s->err, ANONKIT_E_INPUT, NULL, 0, 0, "too many distinct values on X to count");
    if (u64map_intern(m, (uint64_t)level << 58 | (uint64_t)prev << 29 | value, id, ins) != 0) return ak_err_nomem(s->err);
    return 0;
}

static int grow_x(tds *s, size_t need)
{
    size_t old = s->cap_ax;
    if (AK_RESERVE(s->ax, s->cap_ax, need) || AK_RESERVE(s->ay, s->cap_ay, need) || AK_RESERVE(s->xstamp, s->cap_xstamp, need) ||
        AK_RESERVE(s->xof, s->cap_xof, need))
        return ak_err_nomem(s->err);
    (void)old;
    return 0;
}

/* The largest risk over the x values the current pieces form in the join. */
static int evaluate(tds *s, double *risk)
{
    u64map_reset(&s->xmap);
    u64map_reset(&s->ymap);
    s->nfinals = 0;
    const size_t nrel = s->nrel;
    uint32_t *combo = s->combo;
    for (size_t pi = 0; pi < s->npieces; pi++) {
        const piece *pc = &s->pieces[pi];
        const uint32_t *off = s->probe_off + (size_t)pc->probe * (nrel + 1);
        int dangling = 0;
        for (size_t r = 0; r < nrel; r++) {
            combo[r] = off[r];
            if (off[r] == off[r + 1]) dangling = 1;
        }
        if (dangling) continue;
        for (;;) {
            /* x = (sub value, x_2, ..., x_p) */
            uint32_t x = pc->s;
            int ins = 0;
            uint64_t mult = pc->n;
            for (size_t r = 0; r < nrel; r++) {
                const rpart *P = &s->trees[r].parts[s->probe_items[combo[r]]];
                AK_CHECK(chain(s, &s->xmap, (uint32_t)r, x, P->xid, &x, &ins));
                mult *= P->n;
            }
            if (ins) {
                AK_CHECK(grow_x(s, s->xmap.count));
                s->ax[x] = 0;
                if (s->mode != MODE_LINK) s->ay[x] = 0; /* linkability: ay is per (x, y), set below */
                s->xstamp[x] = 0;
                if (AK_RESERVE(s->finals, s->cap_finals, s->nfinals + 1) != 0) return ak_err_nomem(s->err);
                s->finals[s->nfinals++] = x;
            }
            s->ax[x] += mult;
            switch (s->mode) {
            case MODE_CASE4: break;
            case MODE_CASE1: {
                uint64_t dy = s->in->y1 ? (s->y1_key ? pc->n : pc->ylen) : 1;
                for (size_t r = 0; r < nrel; r++) {
                    const rtree *rt = &s->trees[r];
                    const rpart *P = &rt->parts[s->probe_items[combo[r]]];
                    if (rt->rel->y) dy *= rt->y_key ? P->n : P->ylen;
                }
                s->ay[x] += dy; /* one matching tuple per x */
                break;
            }
            case MODE_KEY:
                if (s->y_table == 0) {
                    if (s->xstamp[x] != pi + 1) {
                        s->xstamp[x] = (uint32_t)(pi + 1);
                        s->ay[x] += pc->n;
                    }
                } else {
                    const uint32_t p = s->probe_items[combo[s->y_table - 1]];
                    uint32_t id;
                    AK_CHECK(chain(s, &s->ymap, 0, x, p, &id, &ins));
                    if (ins) s->ay[x] += s->trees[s->y_table - 1].parts[p].n;
                }
                break;
            case MODE_GENERAL: {
                /* every Y tuple of the cross product, deduplicated per x */
                uint32_t lists = 0, lo[65], len[65], at[65];
                const uint32_t *vals[65];
                if (s->in->y1) {
                    lo[lists] = pc->yoff;
                    len[lists] = pc->ylen;
                    vals[lists++] = s->pyv;
                }
                for (size_t r = 0; r < nrel && lists < 65; r++) {
                    const rtree *rt = &s->trees[r];
                    if (!rt->rel->y) continue;
                    const rpart *P = &rt->parts[s->probe_items[combo[r]]];
                    lo[lists] = P->yoff;
                    len[lists] = P->ylen;
                    vals[lists++] = rt->yv;
                }
                int empty = 0;
                for (uint32_t l = 0; l < lists; l++) {
                    at[l] = 0;
                    if (!len[l]) empty = 1;
                }
                while (!empty) {
                    uint32_t id = x;
                    for (uint32_t l = 0; l < lists; l++)
                        AK_CHECK(chain(s, &s->ymap, l, id, vals[l][lo[l] + at[l]], &id, &ins));
                    if (ins) s->ay[x]++;
                    uint32_t l = 0;
                    while (l < lists && ++at[l] == len[l]) at[l++] = 0;
                    if (l == lists) break;
                }
                break;
            }
            case MODE_LINK: {
                const uint32_t *yv;
                const uint64_t *yc;
                uint32_t ylo, ylen;
                uint64_t m = 1;
                if (s->y_table == 0) {
                    for (size_t r = 0; r < nrel; r++) m *= s->trees[r].parts[s->probe_items[combo[r]]].n;
                    yv = s->pyv, yc = s->pyc, ylo = pc->yoff, ylen = pc->ylen;
                } else {
                    m = pc->n;
                    for (size_t r = 0; r < nrel; r++)
                        if ((int)r != s->y_table - 1) m *= s->trees[r].parts[s->probe_items[combo[r]]].n;
                    const rtree *rt = &s->trees[s->y_table - 1];
                    const rpart *P = &rt->parts[s->probe_items[combo[s->y_table - 1]]];
                    yv = rt->yv, yc = rt->yc, ylo = P->yoff, ylen = P->ylen;
                }
                for (uint32_t i = 0; i < ylen; i++) {
                    uint32_t id;
                    AK_CHECK(chain(s, &s->ymap, 0, x, yv[ylo + i], &id, &ins));
                    if (ins) {
                        AK_CHECK(grow_x(s, s->ymap.count));
                        s->ay[id] = 0;
                        s->xof[id] = x;
                    }
                    s->ay[id] += m * yc[ylo + i];
                }
                break;
            }
            }
            size_t r = 0;
            while (r < nrel && ++combo[r] == off[r + 1]) {
                combo[r] = off[r];
                r++;
            }
            if (r == nrel) break;
        }
    }
    double worst = -INFINITY;
    if (s->mode == MODE_LINK) {
        for (uint32_t id = 0; id < s->ymap.count; id++) {
            double l = xy_risk_linkability(s->ay[id], s->ax[s->xof[id]]);
            if (l > worst) worst = l;
        }
        /* an x with no sensitive value has linkability 0 */
        if (s->ymap.count < s->nfinals && worst < 0) worst = 0;
        if (s->nfinals && worst < 0) worst = 0;
    } else {
        for (size_t i = 0; i < s->nfinals; i++) {
            const uint32_t x = s->finals[i];
            double r = xy_risk_anonymity(s->mode == MODE_CASE4 ? s->ax[x] : s->ay[x]);
            if (r > worst) worst = r;
        }
    }
    *risk = worst;
    return 0;
}

/* One scan of group g counts its rows per (child value, raw join value) for
 * every view at once: the group as it is (view 0) and the group with its value
 * on attribute j specialized (view 1 + j); with, when the risk needs them, the
 * rows per Y tuple of T1 (only the sensitive ones for linkability). These are
 * the count statistics of 004 §5.3 Step 1, collected in the scan that refines
 * the partition. Returns 1 without counting when the counters would be large
 * against the group (each view then takes a scan of its own, group_pieces). */
static int count_views(tds *s, size_t g, uint32_t *nl_out)
{
    const uint32_t d = s->d;
    const uint32_t *gv = s->gval + g * d;
    const size_t b = s->gbegin[g], e = s->gend[g];
    const uint32_t ny = s->need_y1_lists ? s->in->ny1 : 0;
    const uint32_t nl = local_raw(s, b, e);
    size_t slots = 0;
    for (uint32_t v = 0; v <= d; v++) {
        s->voff[v] = slots;
        slots += (size_t)(v ? s->cands[gv[v - 1]].nchildren : 1) * nl;
    }
    s->voff[d + 1] = slots;
    const size_t cells = slots * ny, budget = 16 * (e - b + 256) * ((size_t)d + 1);
    if (slots + cells > budget) return 1;
    if (AK_RESERVE(s->slotn, s->cap_slotn, slots) || AK_RESERVE(s->sloty, s->cap_sloty, cells + 1))
        return ak_err_nomem(s->err);
    memset(s->slotn, 0, slots * sizeof *s->slotn);
    memset(s->sloty, 0, cells * sizeof *s->sloty);
    const int sensitive_only = s->mode == MODE_LINK;
    const uint32_t rw = s->rw;
    for (const uint32_t *x = s->rec + b * rw, *end = s->rec + e * rw; x < end; x += rw) {
        const uint32_t raw = s->nraw ? s->jr_local[x[d + 1]] : 0;
        const uint32_t y = x[d];
        const int count_y = ny && (!sensitive_only || s->in->y1_sensitive[y]);
        s->slotn[raw]++;
        if (count_y) s->sloty[(size_t)raw * ny + y]++;
        for (uint32_t j = 0; j < d; j++) {
            const cand *c = &s->cands[gv[j]];
            if (!c->nchildren) continue;
            const size_t slot = s->voff[j + 1] + (size_t)child_index(s, c, x[j]) * nl + raw;
            s->slotn[slot]++;
            if (count_y) s->sloty[slot * ny + y]++;
        }
    }
    *nl_out = nl;
    return 0;
}

/* The pieces of view v of group g from count_views' counters, with their
 * probes and Y tuples: as lists in pyv / pyc for evaluate, or (lists 0) only
 * their number and largest count for evaluate_unique. */
static int view_pieces(tds *s, size_t g, uint32_t v, uint32_t nl, int lists)
{
    const uint32_t *gv = s->gval + g * s->d;
    const uint32_t ny = s->need_y1_lists ? s->in->ny1 : 0;
    const uint32_t j = v ? v - 1 : NONE;
    s->npieces = 0;
    s->npy = 0;
    for (size_t slot = s->voff[v]; slot < s->voff[v + 1]; slot++) {
        const uint64_t n = s->slotn[slot];
        if (!n) continue;
        if (AK_RESERVE(s->pieces, s->cap_pieces, s->npieces + 1) != 0) return ak_err_nomem(s->err);
        piece *pc = &s->pieces[s->npieces++];
        const size_t local = slot - s->voff[v];
        *pc = (piece){(uint32_t)(local / nl), 0, n, (uint32_t)s->npy, 0, 0};
        AK_CHECK(piece_probe(s, gv, j, pc, s->nraw ? s->jr_global[local % nl] : 0));
        const uint64_t *yh = s->sloty + slot * ny;
        for (uint32_t y = 0; y < ny; y++) {
            if (!yh[y]) continue;
            pc->ylen++;
            if (yh[y] > pc->ymax) pc->ymax = yh[y];
            if (!lists) continue;
            if (AK_RESERVE(s->pyv, s->cap_pyv, s->npy + 1) || AK_RESERVE(s->pyc, s->cap_pyc, s->npy + 1))
                return ak_err_nomem(s->err);
            s->pyv[s->npy] = y;
            s->pyc[s->npy++] = yh[y];
        }
    }
    return 0;
}

/* The largest risk over the x values the current pieces form in the join when
 * pairs are unique (probe_summary): per piece, the product of its own factor
 * and the least factors of its matches (anonymity), or its largest share of
 * a sensitive Y tuple (linkability, Y in T1) or its matches' largest l_y (Y in
 * an earlier release). The same numbers as evaluate, without the X-tree. */
static double evaluate_unique(const tds *s)
{
    double worst = -INFINITY;
    for (size_t pi = 0; pi < s->npieces; pi++) {
        const piece *pc = &s->pieces[pi];
        if (s->probe_dead[pc->probe]) continue; /* matches nothing: no x */
        double r;
        switch (s->mode) {
        case MODE_CASE4:
            r = xy_risk_anonymity(pc->n * s->probe_minn[pc->probe]);
            break;
        case MODE_CASE1: {
            const uint64_t own = s->in->y1 ? (s->y1_key ? pc->n : pc->ylen) : 1;
            r = xy_risk_anonymity(own * s->probe_minf[pc->probe]);
            break;
        }
        default: /* MODE_LINK; an x without a sensitive value has linkability 0 */
            r = s->y_table == 0 ? xy_risk_linkability(pc->ymax, pc->n) : s->probe_link[pc->probe];
            break;
        }
        if (r > worst) worst = r;
    }
    return worst;
}

/* Risk of group g as it is and after specializing each of its values. */
static int measure_group(tds *s, size_t g)
{
    uint32_t nl = 1;
    const int each = s->in->reference ? 1 : count_views(s, g, &nl);
    if (each < 0) return each;
    for (uint32_t v = 0; v <= s->d; v++) {
        double *st = v ? &s->gstat[g * s->d + v - 1] : &s->gown[g];
        if (v && !s->cands[s->gval[g * s->d + v - 1]].nchildren) {
            *st = NAN;
            continue;
        }
        if (each) {
            AK_CHECK(group_pieces(s, g, v ? v - 1 : NONE));
            AK_CHECK(evaluate(s, st));
        } else if (s->unique_pairs) {
            AK_CHECK(view_pieces(s, g, v, nl, 0));
            *st = evaluate_unique(s);
        } else {
            AK_CHECK(view_pieces(s, g, v, nl, 1));
            AK_CHECK(evaluate(s, st));
        }
    }
    return 0;
}

/* --------------------------------------------------------- Algorithm 1 -- */

static int add_group(tds *s, size_t b, size_t e, const uint32_t *val, size_t *id)
{
    const size_t g = s->ngroups, d = s->d;
    if (AK_RESERVE(s->gbegin, s->cap_gbegin, g + 1) || AK_RESERVE(s->gend, s->cap_gend, g + 1) ||
        AK_RESERVE(s->gown, s->cap_gown, g + 1) || AK_RESERVE(s->gval, s->cap_gval, (g + 1) * d + 1) ||
        AK_RESERVE(s->gstat, s->cap_gstat, (g + 1) * d + 1))
        return ak_err_nomem(s->err);
    s->gbegin[g] = b;
    s->gend[g] = e;
    memmove(s->gval + g * d, val, d * sizeof *val);
    s->ngroups++;
    *id = g;
    return 0;
}

/* Performs the winner w (Algorithm 1 line 4): refines every group on Link[w]
 * by w's children, puts the children into the cut and measures the new
 * groups and candidates. */
static int specialize(tds *s, uint32_t w)
{
    const uint32_t d = s->d;
    cand wc = s->cands[w];
    const uint32_t a = wc.attr, nch = wc.nchildren;
    s->cands[w].alive = 0;
    uint32_t first = (uint32_t)s->ncands;
    for (uint32_t c = 0; c < nch; c++) {
        cand ch = {.attr = a, .node = NONE, .alive = 1};
        if (wc.node != NONE) {
            ch.node = child_node(s, &wc, c);
            const hier_node *nd = hier_node_at(attr_hier(s, a), ch.node);
            ch.lo = nd->lo;
            ch.hi = nd->hi;
        } else {
            ch.lo = c ? wc.cut : wc.lo;
            ch.hi = c ? wc.hi : wc.cut - 1;
        }
        uint32_t id;
        AK_CHECK(add_cand(s, &ch, &id));
    }
    uint32_t *newg = NULL, *cnt = NULL, *valbuf = NULL;
    size_t nnew = 0, cap_new = 0;
    int rc = 0;
    cnt = calloc((size_t)nch + 1, sizeof *cnt);
    valbuf = malloc(d * sizeof *valbuf);
    if (!cnt || !valbuf) {
        rc = ak_err_nomem(s->err);
        goto done;
    }
    const size_t old_groups = s->ngroups;
    const uint32_t rw = s->rw;
    for (size_t g = 0; g < old_groups && rc == 0; g++) {
        if (s->gval[g * d + a] != w) continue;
        const size_t b = s->gbegin[g], e = s->gend[g];
        memset(cnt, 0, ((size_t)nch + 1) * sizeof *cnt);
        for (size_t i = b; i < e; i++) cnt[child_index(s, &wc, s->rec[i * rw + a]) + 1]++;
        for (uint32_t c = 0; c < nch; c++) cnt[c + 1] += cnt[c];
        /* counting sort of the slice (rows and records) by child */
        for (size_t i = b; i < e; i++) {
            const uint32_t *x = s->rec + i * rw;
            const uint32_t to = cnt[child_index(s, &wc, x[a])]++;
            uint32_t *y = s->rec_tmp + (size_t)to * rw;
            s->tmp[to] = s->rows[i];
            for (uint32_t k = 0; k < rw; k++) y[k] = x[k];
        }
        memcpy(s->rows + b, s->tmp, (e - b) * sizeof *s->tmp);
        memcpy(s->rec + b * rw, s->rec_tmp, (e - b) * rw * sizeof *s->rec);
        memcpy(valbuf, s->gval + g * d, d * sizeof *valbuf);
        size_t start = b;
        int reused = 0;
        for (uint32_t c = 0; c < nch && rc == 0; c++) {
            const size_t end = b + cnt[c];
            if (end == start) continue;
            valbuf[a] = first + c;
            size_t id = g;
            if (!reused) {
                s->gend[g] = end;
                s->gbegin[g] = start;
                s->gval[g * d + a] = first + c;
                reused = 1;
            } else if ((rc = add_group(s, start, end, valbuf, &id)) < 0) {
                break;
            }
            if (AK_RESERVE(newg, cap_new, nnew + 1) != 0) {
                rc = ak_err_nomem(s->err);
                break;
            }
            newg[nnew++] = (uint32_t)id;
            start = end;
        }
    }
    /* InfoGain and split of each child from the rows of its new groups */
    uint32_t *mine = malloc((nnew ? nnew : 1) * sizeof *mine);
    if (!mine && rc == 0) rc = ak_err_nomem(s->err);
    for (uint32_t c = 0; c < nch && rc == 0; c++) {
        size_t m = 0;
        for (size_t i = 0; i < nnew; i++)
            if (s->gval[(size_t)newg[i] * d + a] == first + c) mine[m++] = newg[i];
        rc = measure_cand(s, &s->cands[first + c], mine, m);
    }
    free(mine);
    for (size_t i = 0; i < nnew && rc == 0; i++) rc = measure_group(s, newg[i]);
done:
    free(newg);
    free(cnt);
    free(valbuf);
    return rc;
}

/* The current risk: the largest over all groups. */
static double current_risk(const tds *s)
{
    double r = -INFINITY;
    for (size_t g = 0; g < s->ngroups; g++)
        if (s->gown[g] > r) r = s->gown[g];
    return r;
}

/* Picks the valid candidate of highest Score (Algorithm 1 line 3); NONE when
 * there is none. Ties: lowest attribute, then lowest code. */
static uint32_t pick_winner(tds *s, double curr)
{
    const uint32_t d = s->d;
    for (size_t c = 0; c < s->ncands; c++) s->cands[c].newrisk = s->cands[c].restrisk = -INFINITY;
    /* per attribute: the two largest group risks by value, for the rest of the table */
    double *best1 = malloc(2 * (size_t)d * sizeof *best1);
    uint32_t *arg1 = malloc((size_t)d * sizeof *arg1);
    double *byval = malloc((s->ncands ? s->ncands : 1) * sizeof *byval);
    if (!best1 || !arg1 || !byval) {
        free(best1);
        free(arg1);
        free(byval);
        ak_err_nomem(s->err);
        return NONE - 1;
    }
    double *best2 = best1 + d;
    for (size_t c = 0; c < s->ncands; c++) byval[c] = -INFINITY;
    for (size_t g = 0; g < s->ngroups; g++) {
        for (uint32_t j = 0; j < d; j++) {
            const uint32_t c = s->gval[g * d + j];
            const double st = s->gstat[g * d + j];
            if (!isnan(st) && st > s->cands[c].newrisk) s->cands[c].newrisk = st;
            if (s->gown[g] > byval[c]) byval[c] = s->gown[g];
        }
    }
    for (uint32_t j = 0; j < d; j++) {
        best1[j] = best2[j] = -INFINITY;
        arg1[j] = NONE;
    }
    for (size_t c = 0; c < s->ncands; c++) {
        if (!s->cands[c].alive) continue;
        const uint32_t j = s->cands[c].attr;
        if (byval[c] > best1[j]) {
            best2[j] = best1[j];
            best1[j] = byval[c];
            arg1[j] = (uint32_t)c;
        } else if (byval[c] > best2[j]) {
            best2[j] = byval[c];
        }
    }
    uint32_t win = NONE;
    double win_score = -INFINITY;
    const double bound = xy_bound(&s->in->model);
    for (size_t c = 0; c < s->ncands; c++) {
        cand *v = &s->cands[c];
        if (!v->alive || !v->nchildren) continue;
        v->restrisk = arg1[v->attr] == c ? best2[v->attr] : best1[v->attr];
        const double after = v->newrisk > v->restrisk ? v->newrisk : v->restrisk;
        if (!(after <= bound)) continue;
        double loss = isfinite(after) && isfinite(curr) ? after - curr : 0;
        if (loss < 0) loss = 0;
        const double score = v->gain / (loss + 1);
        const double eps = 1e-12 * (fabs(score) > fabs(win_score) || !isfinite(win_score) ? fabs(score) : fabs(win_score));
        const int better = win == NONE || score > win_score + eps ||
                           (score >= win_score - eps && (v->attr < s->cands[win].attr ||
                                                          (v->attr == s->cands[win].attr && v->lo < s->cands[win].lo)));
        if (better) {
            win = (uint32_t)c;
            win_score = score;
        }
    }
    free(best1);
    free(arg1);
    free(byval);
    return win;
}

static void tds_free(tds *s)
{
    for (size_t r = 0; r < s->nrel && s->trees; r++) free_rtree(&s->trees[r]);
    free(s->trees);
    free(s->jraw);
    free(s->jraw_nodes);
    free(s->jr_stamp);
    free(s->jr_local);
    free(s->jr_global);
    free(s->cands);
    free(s->lut);
    free(s->rows);
    free(s->tmp);
    free(s->rec);
    free(s->rec_tmp);
    free(s->gbegin);
    free(s->gend);
    free(s->gval);
    free(s->gstat);
    free(s->gown);
    strmap_free(&s->probes);
    free(s->probe_off);
    free(s->probe_items);
    free(s->probe_dead);
    free(s->probe_minn);
    free(s->probe_minf);
    free(s->probe_link);
    free(s->voff);
    free(s->slotn);
    free(s->sloty);
    free(s->pieces);
    free(s->piece_of);
    free(s->pairs);
    free(s->pyv);
    free(s->pyc);
    free(s->dense);
    u64map_free(&s->xmap);
    u64map_free(&s->ymap);
    free(s->ax);
    free(s->ay);
    free(s->xstamp);
    free(s->xof);
    free(s->finals);
    free(s->jbuf);
    free(s->combo);
}

void tds_result_free(tds_result *r)
{
    if (!r) return;
    free(r->cut);
    r->cut = NULL;
    r->ncut = 0;
}

/* Chooses how a_Y(x) is counted (004 §5.4) or marks linkability. */
static void choose_mode(tds *s)
{
    const tds_input *in = s->in;
    s->y1_key = in->y1 && in->ny1 == s->n;
    if (in->model.kind == XY_LINKABILITY) {
        s->mode = MODE_LINK;
        s->y_table = 0;
        for (size_t r = 0; r < s->nrel; r++)
            if (in->releases[r].y) s->y_table = (int)r + 1;
        s->need_y1_lists = in->y1 != NULL;
        return;
    }
    int all_keys = in->y1 && s->y1_key, tables_with_y = in->y1 ? 1 : 0, key_table = in->y1 ? 0 : -1;
    int key_ok = in->y1 ? s->y1_key : 1, join_in_x = s->nraw == 0;
    for (size_t r = 0; r < s->nrel; r++) {
        const rtree *rt = &s->trees[r];
        if (!rt->rel->join_in_x) join_in_x = 0;
        if (!rt->rel->y) {
            all_keys = 0;
            continue;
        }
        tables_with_y++;
        key_table = (int)r + 1;
        if (!rt->y_key) all_keys = 0, key_ok = 0;
    }
    if (all_keys && tables_with_y == (int)s->nrel + 1) {
        s->mode = MODE_CASE4;
    } else if (join_in_x) {
        s->mode = MODE_CASE1;
        s->need_y1_lists = in->y1 && !s->y1_key;
    } else if (tables_with_y == 1 && key_ok) {
        s->mode = MODE_KEY;
        s->y_table = key_table;
    } else {
        s->mode = MODE_GENERAL;
        s->need_y1_lists = in->y1 != NULL;
    }
}

/* Whether every x of the join comes from one pair of partitions and the
 * products a(x), a(x, y) stay exact in a double (so probe_summary's shortcut
 * gives evaluate's numbers bit for bit): X holds every join attribute of
 * every table (004 §5.4 Case 1), so an x fixes its P1 and each P_i. */
static int unique_pairs(const tds *s)
{
    if (s->in->reference || s->nraw || !(s->mode == MODE_CASE4 || s->mode == MODE_CASE1 || s->mode == MODE_LINK))
        return 0;
    const uint64_t limit = (uint64_t)1 << 53;
    uint64_t prod = s->n;
    for (size_t r = 0; r < s->nrel; r++) {
        const tds_release *rel = s->trees[r].rel;
        if (!rel->join_in_x) return 0;
        if (rel->nrows && prod > limit / rel->nrows) return 0;
        prod *= rel->nrows;
    }
    return 1;
}

static const char *mode_name(int mode)
{
    switch (mode) {
    case MODE_CASE4: return "case 4: Y is a key of the join, a_Y(x) = a(x)";
    case MODE_CASE1: return "case 1: X contains every join attribute";
    case MODE_KEY: return "cases 2/3: Y lies in one release, where it is a key";
    case MODE_GENERAL: return "general: distinct (x, y) pairs hashed";
    }
    return "linkability";
}

static int cmp_cut(const void *a, const void *b)
{
    const tds_cut_value *x = a, *y = b;
    if (x->attr != y->attr) return x->attr < y->attr ? -1 : 1;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Builds the published partition: one class per group and raw join value. */
static int emit(tds *s, partition *out, tds_result *res)
{
    const table *t = s->t;
    const uint32_t nqi = t->nqi, d = s->d;
    uint32_t *lo = malloc(2 * (size_t)(nqi ? nqi : 1) * sizeof *lo);
    if (!lo) return ak_err_nomem(s->err);
    uint32_t *hi = lo + nqi;
    int rc = 0;
    double cat = 0, cont = 0;
    for (size_t g = 0; g < s->ngroups && rc == 0; g++) {
        const size_t b = s->gbegin[g], e = s->gend[g];
        for (uint32_t q = 0; q < d; q++) {
            const cand *c = &s->cands[s->gval[g * d + q]];
            lo[q] = c->lo;
            hi[q] = c->hi;
            /* 004 §6's distortion, counted as `anonkit metrics` counts it on a published file:
             * a categorical value costs the level of the node whose label is published */
            if (c->node != NONE) cat += (double)(e - b) * metrics_distortion(t, q, c->lo, c->hi);
            else cont += (double)(e - b) * metrics_distortion(t, q, c->lo, c->hi);
        }
        /* one class per piece: the group's rows with one raw join value */
        if ((rc = group_pieces(s, g, NONE)) < 0) break;
        if (AK_RESERVE(s->finals, s->cap_finals, s->npieces) != 0) {
            rc = ak_err_nomem(s->err);
            break;
        }
        for (size_t p = 0; p < s->npieces; p++) s->finals[p] = NONE;
        for (size_t i = b; i < e && rc == 0; i++) {
            const uint32_t r = s->rows[i];
            const uint32_t p = s->piece_of[s->nraw ? s->jr_local[s->jraw[r]] : 0] - 1;
            if (s->finals[p] == NONE) {
                for (uint32_t q = d; q < nqi; q++) lo[q] = hi[q] = t->qi[q].codes[r];
                rc = partition_add_class(out, lo, hi, s->pieces[p].n, &s->finals[p], s->err);
            }
            out->class_of[r] = s->finals[p];
        }
    }
    free(lo);
    if (rc < 0) return rc;
    res->distortion_cat = s->n ? cat / (double)s->n : 0;
    res->distortion_cont = s->n ? cont / (double)s->n : 0;
    size_t alive = 0;
    for (size_t c = 0; c < s->ncands; c++) alive += s->cands[c].alive;
    res->cut = malloc((alive ? alive : 1) * sizeof *res->cut);
    if (!res->cut) return ak_err_nomem(s->err);
    for (size_t c = 0; c < s->ncands; c++) {
        const cand *v = &s->cands[c];
        if (v->alive) res->cut[res->ncut++] = (tds_cut_value){v->attr, v->lo, v->hi, v->node};
    }
    qsort(res->cut, res->ncut, sizeof *res->cut, cmp_cut);
    return 0;
}

int tds_run(const tds_input *in, partition *out, tds_result *res, ak_error *err)
{
    memset(res, 0, sizeof *res);
    tds st;
    memset(&st, 0, sizeof st);
    tds *s = &st;
    s->in = in;
    s->t = in->t;
    s->err = err;
    s->n = in->t->nrows;
    s->d = in->nx1;
    s->nraw = in->t->nqi - in->nx1;
    s->nrel = in->nreleases;
    s->nclasses = in->t->class_column >= 0 ? in->t->class_dict.count : 0;
    int rc = 0;
    const size_t n = s->n;
    s->trees = calloc(s->nrel ? s->nrel : 1, sizeof *s->trees);
    s->rows = malloc((n ? n : 1) * sizeof *s->rows);
    s->tmp = malloc((n ? n : 1) * sizeof *s->tmp);
    s->jbuf = malloc((in->nj1 + 1) * sizeof *s->jbuf);
    s->combo = malloc((s->nrel + 1) * sizeof *s->combo);
    s->voff = malloc(((size_t)s->d + 2) * sizeof *s->voff);
    if (!s->trees || !s->rows || !s->tmp || !s->jbuf || !s->combo || !s->voff || strmap_init(&s->probes, 256) != 0 ||
        u64map_init(&s->xmap, 64) != 0 || u64map_init(&s->ymap, 64) != 0) {
        rc = ak_err_nomem(err);
        goto done;
    }
    for (size_t i = 0; i < n; i++) s->rows[i] = (uint32_t)i;
    /* Tree2: static partitions of every earlier release */
    for (size_t r = 0; r < s->nrel && rc == 0; r++)
        rc = build_rtree(s, &in->releases[r], &s->trees[r], in->model.kind == XY_LINKABILITY);
    if (rc < 0) goto done;
    choose_mode(s);
    s->unique_pairs = unique_pairs(s);
    res->special_case = mode_name(s->mode);
    /* raw join tuples of T1 */
    if (s->nraw) {
        strmap jm;
        memset(&jm, 0, sizeof jm);
        if (strmap_init(&jm, 64) != 0 || !(s->jraw = malloc(n * sizeof *s->jraw))) {
            if (jm.slots) strmap_free(&jm);
            rc = ak_err_nomem(err);
            goto done;
        }
        uint32_t *key = s->tmp;
        for (size_t i = 0; i < n && rc == 0; i++) {
            for (uint32_t q = 0; q < s->nraw; q++)
                key[q] = hier_leaf_node(attr_hier(s, s->d + q), in->t->qi[s->d + q].codes[i]);
            if (strmap_intern(&jm, (const char *)key, s->nraw * sizeof *key, &s->jraw[i], NULL) != 0)
                rc = ak_err_nomem(err);
        }
        s->njraw = jm.count;
        s->jraw_nodes = malloc(((size_t)s->njraw * s->nraw + 1) * sizeof *s->jraw_nodes);
        s->jr_stamp = calloc(s->njraw + 1, sizeof *s->jr_stamp);
        s->jr_local = malloc((s->njraw + 1) * sizeof *s->jr_local);
        s->jr_global = malloc((s->njraw + 1) * sizeof *s->jr_global);
        if (rc == 0 && (!s->jraw_nodes || !s->jr_stamp || !s->jr_local || !s->jr_global)) rc = ak_err_nomem(err);
        for (uint32_t j = 0; rc == 0 && j < s->njraw; j++)
            memcpy(s->jraw_nodes + (size_t)j * s->nraw, strmap_key(&jm, j), s->nraw * sizeof *key);
        strmap_free(&jm);
        if (rc < 0) goto done;
    }
    /* the records in row order */
    s->rw = s->d + 3;
    s->rec = malloc((n ? n : 1) * s->rw * sizeof *s->rec);
    s->rec_tmp = malloc((n ? n : 1) * s->rw * sizeof *s->rec_tmp);
    if (!s->rec || !s->rec_tmp) {
        rc = ak_err_nomem(err);
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        uint32_t *x = s->rec + i * s->rw;
        for (uint32_t q = 0; q < s->d; q++) x[q] = in->t->qi[q].codes[i];
        x[s->d] = in->y1 ? in->y1[i] : 0;
        x[s->d + 1] = s->nraw ? s->jraw[i] : 0;
        x[s->d + 2] = s->nclasses ? in->t->class_codes[i] : 0;
    }
    /* Line 1: every attribute at ANY, every continuous attribute one interval */
    uint32_t *val = malloc((s->d + 1) * sizeof *val);
    if (!val) {
        rc = ak_err_nomem(err);
        goto done;
    }
    for (uint32_t q = 0; q < s->d && rc == 0; q++) {
        const table_qi *a = &in->t->qi[q];
        cand c = {.attr = q, .node = NONE, .lo = 0, .hi = a->ncodes ? a->ncodes - 1 : 0, .alive = 1};
        if (a->h) {
            c.node = hier_root(a->h);
            c.lo = hier_node_at(a->h, c.node)->lo;
            c.hi = hier_node_at(a->h, c.node)->hi;
        }
        if ((rc = add_cand(s, &c, &val[q])) == 0) rc = measure_cand(s, &s->cands[val[q]], NULL, 0);
    }
    size_t g0;
    if (rc == 0) rc = add_group(s, 0, n, val, &g0);
    free(val);
    if (rc == 0) rc = measure_group(s, g0);
    if (rc < 0) goto done;
    double curr = current_risk(s);
    if (!xy_holds(&in->model, curr)) {
        if (in->model.kind == XY_ANONYMITY)
            rc = ak_err_set(err, ANONKIT_E_INELIGIBLE, NULL, 0, 0,
                            "the most general current release already violates (X,Y)-anonymity: A_Y(X) = %.0f < k = %llu, "
                            "so no generalization of it can satisfy it (004 Corollary 4.2)",
                            -curr, (unsigned long long)in->model.k);
        else
            rc = ak_err_set(err, ANONKIT_E_INELIGIBLE, NULL, 0, 0,
                            "the most general current release already violates (X,Y)-linkability: L_Y(X) = %.6g > %g, "
                            "so no generalization of it can satisfy it (004 Corollary 4.2)",
                            curr, in->model.p);
        goto done;
    }
    /* Lines 2-6 */
    for (;;) {
        const uint32_t w = pick_winner(s, curr);
        if (w == NONE - 1) {
            rc = ANONKIT_E_NOMEM;
            goto done;
        }
        if (w == NONE) break;
        if ((rc = specialize(s, w)) < 0) goto done;
        res->specializations++;
        curr = current_risk(s);
        if (!xy_holds(&in->model, curr)) {
            rc = ak_err_set(err, ANONKIT_E_INTERNAL, NULL, 0, 0, "a valid specialization violated the model");
            goto done;
        }
    }
    res->risk = curr;
    res->empty_join = !isfinite(curr);
    rc = emit(s, out, res);
done:
    tds_free(s);
    if (rc < 0) tds_result_free(res);
    return rc;
}
