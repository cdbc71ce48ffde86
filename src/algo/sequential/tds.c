/* tds.c — TDS4SA ([Wang06] Algorithm 1 with the data structures of §5.3–5.4 and
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
 * partitions reaching x) — and otherwise by hashing (x, y) pairs.
 *
 * This file holds the candidates (values of the cut, their InfoGain) and
 * Algorithm 1 itself; Tree2 and the probe cache are in tds_tree2.c, the
 * X-tree's measuring of groups in tds_xtree.c, what they share in
 * tds_internal.h. */
#include "algo/sequential/tds_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/compare.h"
#include "common/hash.h"
#include "common/stats.h"
#include "common/strbuf.h"
#include "metrics/metrics.h"

/* ----------------------------------------------------------- candidates -- */

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
 * range: the distortion of one record in it ([Wang06] §6). */
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
    for (size_t i = 0; i < nnew && rc == 0; i++) rc = tds_measure_group(s, newg[i]);
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
    for (size_t r = 0; r < s->nrel && s->trees; r++) tds_free_rtree(&s->trees[r]);
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
    u64scratch_free(&s->xmap);
    u64scratch_free(&s->ymap);
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

/* Chooses how a_Y(x) is counted ([Wang06] §5.4) or marks linkability. */
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
 * every table ([Wang06] §5.4 Case 1), so an x fixes its P1 and each P_i. */
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
            /* [Wang06] §6's distortion, counted as `anonkit metrics` counts it on a published file:
             * a categorical value costs the level of the node whose label is published */
            if (c->node != NONE) cat += (double)(e - b) * metrics_distortion(t, q, c->lo, c->hi);
            else cont += (double)(e - b) * metrics_distortion(t, q, c->lo, c->hi);
        }
        /* one class per piece: the group's rows with one raw join value */
        if ((rc = tds_group_pieces(s, g, NONE)) < 0) break;
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
    if (!s->trees || !s->rows || !s->tmp || !s->jbuf || !s->combo || !s->voff || strmap_init(&s->probes, 256) != 0) {
        rc = ak_err_nomem(err);
        goto done;
    }
    for (size_t i = 0; i < n; i++) s->rows[i] = (uint32_t)i;
    /* Tree2: static partitions of every earlier release */
    for (size_t r = 0; r < s->nrel && rc == 0; r++)
        rc = tds_build_rtree(s, &in->releases[r], &s->trees[r], in->model.kind == XY_LINKABILITY);
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
    if (rc == 0) rc = tds_measure_group(s, g0);
    if (rc < 0) goto done;
    double curr = current_risk(s);
    if (!xy_holds(&in->model, curr)) {
        if (in->model.kind == XY_ANONYMITY)
            rc = ak_err_set(err, ANONKIT_E_INELIGIBLE, NULL, 0, 0,
                            "the most general current release already violates (X,Y)-anonymity: A_Y(X) = %.0f < k = %llu, "
                            "so no generalization of it can satisfy it ([Wang06] Corollary 4.2)",
                            -curr, (unsigned long long)in->model.k);
        else
            rc = ak_err_set(err, ANONKIT_E_INELIGIBLE, NULL, 0, 0,
                            "the most general current release already violates (X,Y)-linkability: L_Y(X) = %.6g > %g, "
                            "so no generalization of it can satisfy it ([Wang06] Corollary 4.2)",
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
