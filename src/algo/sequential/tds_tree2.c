/* tds_tree2.c — Tree2 of TDS4SA ([Wang06] §5.3): the partitions P_i of every
 * earlier release, distinct join values and X values with their sizes and Y
 * tuples, grouped by join values; and the probe cache, which maps the join
 * values of a T1 partition to the matching partitions of every release by
 * the consistency and inconsistency predicates (§3.3), with per-probe
 * summaries when every x of the join comes from one pair of partitions. */
#include "algo/sequential/tds_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/compare.h"
#include "common/hash.h"
#include "common/strbuf.h"

/* Builds an earlier release's partitions P_i grouped by join tuple. */
int tds_build_rtree(tds *s, const tds_release *rel, rtree *rt, int y_sensitive_only)
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

void tds_free_rtree(rtree *rt)
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

/* The match predicate of [Wang06] §3.3 between T1 join nodes j1 and a join tuple
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
 * ([Wang06] §5.4 Cases 1 and 4: a_Y(x) = a_Y1(x1) * a_Y2(x2), a(x) = |P1| * |P2|),
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
int tds_probe_of(tds *s, const uint32_t *j1, uint32_t *id)
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
