/* tds_xtree.c — the X-tree of TDS4SA ([Wang06] §5.3–5.4), kept per group: the
 * pieces a group (or a view of it, one of its values specialized) forms with
 * the raw join values, and the largest risk over the x values they form in
 * the join (-a_Y(x) or l_y(x)), counted by the special cases of §5.4 when
 * they apply and otherwise by hashing (x, y) pairs. Each group is measured
 * once, when it is made: as it is and after specializing each of its values. */
#include "algo/sequential/tds_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/compare.h"
#include "common/hash.h"
#include "common/stats.h"
#include "common/strbuf.h"

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
    return tds_probe_of(s, s->jbuf, &pc->probe);
}

/* Splits the rows of group g by the children of its value on attribute j
 * (NONE: not split) and by raw join value into pieces, with their probes and,
 * when the risk needs them, their Y tuples. One scan per view: the reference
 * way, and the way for groups too small for count_views' counters. */
int tds_group_pieces(tds *s, size_t g, uint32_t j)
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
static int chain(tds *s, u64scratch *m, uint32_t level, uint32_t prev, uint32_t value, uint32_t *id, int *ins)
{
    if (prev >= ID_LIMIT || value >= ID_LIMIT)
        return ak_err_set(s->err, ANONKIT_E_INPUT, NULL, 0, 0, "too many distinct values on X to count");
    if (u64scratch_intern(m, (uint64_t)level << 58 | (uint64_t)prev << 29 | value, id, ins) != 0) return ak_err_nomem(s->err);
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
    u64scratch_reset(&s->xmap);
    u64scratch_reset(&s->ymap);
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
 * the count statistics of [Wang06] §5.3 Step 1, collected in the scan that refines
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
int tds_measure_group(tds *s, size_t g)
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
            AK_CHECK(tds_group_pieces(s, g, v ? v - 1 : NONE));
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
