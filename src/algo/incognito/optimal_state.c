/* optimal_state.c — the set-up of the optimal full-domain search
 * (optimal.c): the lattice's size and strides, per QI and level the weighted
 * NCP totals, the widest value's cost, the least cost of the rows an
 * iteration must publish and the costs dearest first (the bounds of
 * optimal.c), and the level-0 frequency set. */
#include "algo/incognito/optimal_internal.h"

#include <stdlib.h>
#include <string.h>

void opt_state_free(opt_state *s)
{
    for (uint32_t q = 0; q < 64; q++) {
        free(s->sum[q]);
        free(s->maxcost[q]);
        free(s->mincost[q]);
        if (s->wncp[q])
            for (uint32_t l = 0; l <= s->c->qi[q].height; l++) free(s->wncp[q][l]);
        free(s->wncp[q]);
    }
    free(s->emin);
    for (uint32_t q = 0; q < 64; q++) {
        if (!s->top[q]) continue;
        for (uint32_t l = 0; l <= s->c->qi[q].height; l++) {
            free(s->top[q][l].cnt);
            free(s->top[q][l].sum);
            free(s->top[q][l].val);
        }
        free(s->top[q]);
    }
    for (size_t p = 0; s->pairs && p < s->npairs; p++) {
        free(s->pairs[p].fail);
        free(s->pairs[p].cost);
    }
    free(s->pairs);
    free(s->path);
    for (size_t i = 0; i < s->ncache; i++) inc_fset_release(s->c, s->cache[i].fs);
    free(s->tag);
    free(s->stack); /* at_bottom and at_top belong to the context (lattice_edges) */
}

typedef struct ncp_count {
    double ncp;
    uint32_t count;
} ncp_count;

/* Sorts p[0..n) by ascending NCP, stably (insertion: few values, most already
 * in order; the order a stable qsort gives, so the sums over it are the same). */
static void ncp_sort(ncp_count *p, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        const ncp_count x = p[i];
        size_t j = i;
        for (; j > 0 && p[j - 1].ncp > x.ncp; j--) p[j] = p[j - 1];
        p[j] = x;
    }
}

/* The lattice's edge masks in c (per node, bit q: QI q at level 0, at its
 * top), computed once for the n nodes of c's lattice and kept for the next
 * search on the same QIs (the iterations of local recoding). */
static int lattice_edges(inc_ctx *c, size_t n, ak_error *err)
{
    if (c->lat_bottom && c->lat_n == n) return ANONKIT_OK;
    free(c->lat_bottom);
    free(c->lat_top);
    free(c->lat_pb);
    free(c->lat_pm);
    free(c->lat_ht);
    c->lat_pb = c->lat_pm = NULL;
    c->lat_ht = NULL;
    c->lat_n = 0;
    c->lat_bottom = malloc(n * sizeof *c->lat_bottom);
    c->lat_top = malloc(n * sizeof *c->lat_top);
    if (!c->lat_bottom || !c->lat_top) {
        free(c->lat_bottom);
        free(c->lat_top);
        c->lat_bottom = c->lat_top = NULL;
        return ak_err_nomem(err);
    }
    /* Walking the lattice in index order like an odometer (the last QI turns fastest). */
    uint32_t level[64] = {0};
    uint64_t bottom = inc_full_mask(c), top = 0;
    for (uint32_t q = 0; q < c->nqi; q++)
        if (c->qi[q].height == 0) top |= (uint64_t)1 << q;
    for (size_t i = 0; i < n; i++) {
        c->lat_bottom[i] = bottom;
        c->lat_top[i] = top;
        for (uint32_t q = c->nqi; q-- > 0;) {
            const uint64_t bit = (uint64_t)1 << q;
            if (level[q] < c->qi[q].height) {
                level[q]++;
                bottom &= ~bit;
                if (level[q] == c->qi[q].height) top |= bit;
                break;
            }
            level[q] = 0;
            bottom |= bit;
            top = c->qi[q].height == 0 ? top | bit : top & ~bit;
        }
    }
    c->lat_n = n;
    return ANONKIT_OK;
}

int opt_state_init(opt_state *s, inc_ctx *c, inc_choose by, const double *weights, int want_pairs, ak_error *err)
{
    memset(s, 0, sizeof *s);
    s->c = c;
    s->by = by == INC_CHOOSE_K_MINIMAL ? INC_CHOOSE_GCP : by;
    s->n = 1;
    for (uint32_t q = c->nqi; q-- > 0;) {
        s->stride[q] = s->n;
        if (s->n > ((size_t)1 << 22) / (c->qi[q].height + 1))
            return ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0,
                              "the generalization lattice has more than 2^22 nodes: too large for the optimal search "
                              "(use --choose k-minimal with an Incognito variant)");
        s->n *= c->qi[q].height + 1;
    }
    s->top_ok = want_pairs;
    for (uint32_t q = 0; q < c->nqi; q++) {
        s->w[q] = weights ? weights[q] : 1.0;
        s->wsum += s->w[q];
        if (!(s->w[q] >= 0)) s->top_ok = 0;
    }
    s->tag = calloc(s->n, 1);
    s->stack = malloc(s->n * sizeof *s->stack);
    s->emin = calloc(s->n, sizeof *s->emin);
    s->path = malloc(s->n * sizeof *s->path);
    if (!s->tag || !s->stack || !s->emin || !s->path) return ak_err_nomem(err);
    AK_CHECK(lattice_edges(c, s->n, err));
    s->at_bottom = c->lat_bottom;
    s->at_top = c->lat_top;
    {
        uint32_t bits = 0;
        for (uint32_t q = 0; q < c->nqi && bits <= 64; q++) {
            s->woff[q] = bits;
            bits += c->qi[q].lbits + 1;
            if (bits <= 64) s->wguard |= (uint64_t)1 << (bits - 1);
        }
        if (bits > 64) s->wguard = 0;
    }
    uint32_t *hist = NULL;
    ncp_count *pairs = NULL;
    for (uint32_t q = 0; q < c->nqi; q++) {
        const inc_qi *a = &c->qi[q];
        s->sum[q] = calloc(a->height + 1, sizeof *s->sum[q]);
        s->maxcost[q] = calloc(a->height + 1, sizeof *s->maxcost[q]);
        s->mincost[q] = calloc(a->height + 1, sizeof *s->mincost[q]);
        s->top[q] = calloc(a->height + 1, sizeof *s->top[q]);
        uint32_t *h = realloc(hist, (a->card[0] ? a->card[0] : 1) * sizeof *h);
        if (h) hist = h;
        ncp_count *pp = realloc(pairs, (a->card[0] ? a->card[0] : 1) * sizeof *pp);
        if (pp) pairs = pp;
        if (!s->sum[q] || !s->maxcost[q] || !s->mincost[q] || !s->top[q] || !h || !pp) {
            free(hist);
            free(pairs);
            return ak_err_nomem(err);
        }
        memset(hist, 0, a->card[0] * sizeof *hist);
        for (size_t r = 0; r < c->nrows; r++) hist[c->code0[q][r]]++;
        for (uint32_t l = 0; l <= a->height; l++) {
            double sum = 0;
            double widest = 0;
            size_t np = 0;
            for (uint32_t v = 0; v < a->card[0]; v++) {
                if (!hist[v]) continue;
                const double ncp = a->ncp[l][a->gen[l][v]];
                sum += (double)hist[v] * ncp;
                if (ncp > widest) widest = ncp;
                pairs[np++] = (ncp_count){ncp, hist[v]};
            }
            s->sum[q][l] = s->w[q] * sum;
            s->maxcost[q][l] = s->w[q] * widest;
            /* The rows by cost: only local recoding's bound (defer < 1) and pair_bound need them. */
            if (c->defer >= 1 && !want_pairs) continue;
            /* The must-publish rows where this QI costs least (local recoding's bound). */
            ncp_sort(pairs, np);
            double cheap = 0;
            uint64_t left = c->nrows - (c->limit < c->nrows ? c->limit : c->nrows);
            for (size_t i = 0; i < np && left; i++) {
                const uint64_t take = pairs[i].count < left ? pairs[i].count : left;
                cheap += (double)take * pairs[i].ncp;
                left -= take;
            }
            s->mincost[q][l] = s->w[q] * cheap;
            if (!want_pairs) continue;
            /* The dearest rows first, with running totals (pair_bound). */
            top_sums *ts = &s->top[q][l];
            ts->cnt = malloc((np + 1) * sizeof *ts->cnt);
            ts->sum = malloc((np + 1) * sizeof *ts->sum);
            ts->val = malloc((np + 1) * sizeof *ts->val);
            if (!ts->cnt || !ts->sum || !ts->val) {
                free(hist);
                free(pairs);
                return ak_err_nomem(err);
            }
            ts->n = np;
            ts->cnt[0] = 0;
            ts->sum[0] = 0;
            for (size_t i = 0; i < np; i++) {
                const ncp_count *pc = &pairs[np - 1 - i];
                if (!(pc->ncp >= 0 && pc->ncp <= 1)) s->top_ok = 0;
                ts->val[i] = s->w[q] * pc->ncp;
                ts->cnt[i + 1] = ts->cnt[i] + pc->count;
                ts->sum[i + 1] = ts->sum[i] + (double)pc->count * ts->val[i];
            }
        }
        if (!(s->wncp[q] = calloc(a->height + 1, sizeof *s->wncp[q]))) {
            free(hist);
            free(pairs);
            return ak_err_nomem(err);
        }
        for (uint32_t l = 0; l <= a->height; l++) {
            if (!(s->wncp[q][l] = malloc((a->card[l] ? a->card[l] : 1) * sizeof *s->wncp[q][l]))) {
                free(hist);
                free(pairs);
                return ak_err_nomem(err);
            }
            for (uint32_t v = 0; v < a->card[l]; v++) s->wncp[q][l][v] = s->w[q] * a->ncp[l][v];
        }
    }
    free(hist);
    free(pairs);
    inc_fset *bottom;
    AK_CHECK(inc_fset_scan(c, (inc_node){inc_full_mask(c), 0}, &bottom, err));
    s->cache[0].lv = 0;
    s->cache[0].wide = 0;
    s->cache[0].fs = bottom;
    s->cache[0].n = bottom->n;
    s->ncache = 1;
    return ANONKIT_OK;
}
