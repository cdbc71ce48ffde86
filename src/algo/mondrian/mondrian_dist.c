/* mondrian_dist.c — the upper levels of the Mondrian partition tree over a
 * table held in shards ([LeFevre07] §2, Rothko-T's frequency groups, summed
 * across shards; docs/distributed.md). Each level: every shard counts the AV
 * sets (with the AVS sets for l-diversity and the AVC sets for InfoGain) of
 * every open node over its own rows, dense over the codes the node can hold;
 * one reduction sums them; every shard then chooses each node's split with the
 * family's one scorer (split_choose.h) from the same sums, so every shard
 * grows the same tree, and routes its own rows to the children. A node of at
 * most finish_rows rows, or without an allowable split, becomes a leaf that the
 * caller finishes with the in-memory Mondrian from the node's region. */
#include "algo/mondrian/mondrian_dist.h"
#include "algo/mondrian/split_choose.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The largest level buffer, in 64-bit counts (2 GiB). */
#define DIST_MAX_WORDS ((size_t)1 << 28)

typedef struct dnode {
    uint32_t *rlo, *rhi; /* region */
    uint32_t *clo, *chi; /* the codes its rows can hold: the region within the parent's box */
    uint32_t *cnt;       /* per QI: its sets are counted */
    int median_only;
    int decided;         /* its split (or none) is chosen this level */
    size_t off;          /* its counts in the level buffer */
    uint64_t n;
} dnode;

typedef struct dist {
    const table *t;
    const model *m;
    uint32_t d;
    int need_hist, infogain;
    uint32_t sdomain, cdomain;
    ak_hist whole, left, child, cls_whole, cls_left, cls_group;
    uint32_t *counts, *counts_scratch;
    uint32_t *codes;  /* t, δ, β: the codes beside counts (model_dist_holds) */
    model_work *work; /* t, δ, β: the predicates' scratch; NULL when the model has none */
    const uint64_t *buf; /* the summed level buffer */
} dist;

/* Where QI q's AV, AVS and AVC counts of node x start in the buffer. */
typedef struct dsets {
    const uint64_t *av[64], *avs[64], *avc[64];
} dsets;

static size_t node_words(const dist *s, const dnode *x, uint64_t *av_at, uint64_t *avs_at, uint64_t *avc_at)
{
    size_t at = 0;
    for (uint32_t q = 0; q < s->d; q++) {
        if (!x->cnt[q]) continue;
        const size_t range = (size_t)x->chi[q] - x->clo[q] + 1;
        if (av_at) av_at[q] = at;
        at += range;
        if (s->need_hist) {
            if (avs_at) avs_at[q] = at;
            at += range * s->sdomain;
        }
        if (s->infogain) {
            if (avc_at) avc_at[q] = at;
            at += range * s->cdomain;
        }
    }
    return at;
}

/* ---- the split choice from summed dense sets (the fg_source of rothko_fgroup.c, dense only) */

typedef struct dsource {
    dist *s;
    const dnode *x;
    const uint64_t *av[64], *avs[64], *avc[64];
    const uint32_t *lo, *hi; /* box */
    uint64_t *rows_in;
    uint32_t q, code, hi_q;
    int started;
} dsource;

static uint32_t dav_next(const dsource *ds, uint32_t q, uint32_t c, uint64_t *count)
{
    const dnode *x = ds->x;
    if (c < x->clo[q]) c = x->clo[q];
    for (uint64_t v = c; v <= x->chi[q]; v++)
        if (ds->av[q][v - x->clo[q]]) {
            *count = ds->av[q][v - x->clo[q]];
            return (uint32_t)v;
        }
    *count = 0;
    return UINT32_MAX;
}

static uint64_t dav_sum(const dsource *ds, uint32_t q, uint32_t lo, uint32_t hi)
{
    const dnode *x = ds->x;
    uint64_t sum = 0;
    const uint64_t a = lo > x->clo[q] ? lo : x->clo[q], b = hi < x->chi[q] ? hi : x->chi[q];
    for (uint64_t c = a; c <= b; c++) sum += ds->av[q][c - x->clo[q]];
    return sum;
}

/* Adds the sub-value counts of codes [lo, hi] of a pair set (nsub per code) to h. */
static void dadd_pairs(const dsource *ds, uint32_t q, const uint64_t *set, uint32_t nsub, uint32_t lo, uint32_t hi,
                       ak_hist *h)
{
    const dnode *x = ds->x;
    const uint64_t a = lo > x->clo[q] ? lo : x->clo[q], b = hi < x->chi[q] ? hi : x->chi[q];
    for (uint64_t c = a; c <= b; c++) {
        const uint64_t *row = set + (size_t)(c - x->clo[q]) * nsub;
        for (uint32_t sub = 0; sub < nsub; sub++) hist_add_n(h, sub, row[sub]);
    }
}

static int dside_holds(dist *s, uint64_t count, const ak_hist *h)
{
    if (count < s->m->k) return 0;
    if (!s->need_hist) return 1;
    return model_holds(s->m, count, s->counts, ak_hist_counts(h, s->counts), s->counts_scratch) &&
           model_dist_hist_holds(&s->m->dist, s->m->ref, s->work, count, &s->whole, h, 0, s->codes, s->counts);
}

static int d_median(void *src, uint32_t q, const uint32_t *lo, const uint32_t *hi, uint32_t *median, uint64_t *below,
                    uint64_t *equal, ak_error *err)
{
    (void)hi, (void)err;
    dsource *ds = src;
    const uint64_t nth = (ds->x->n - 1) / 2;
    uint64_t b = 0, e;
    uint32_t v = dav_next(ds, q, lo[q], &e);
    while (b + e <= nth) {
        b += e;
        v = dav_next(ds, q, v + 1, &e);
    }
    ak_hist_clear(&ds->s->left);
    if (ds->s->need_hist) dadd_pairs(ds, q, ds->avs[q], ds->s->sdomain, lo[q], v, &ds->s->left);
    *median = v;
    *below = b;
    *equal = e;
    return ANONKIT_OK;
}

static void d_less_side(void *src, uint32_t q, const uint32_t *lo, uint32_t median)
{
    dsource *ds = src;
    ak_hist_clear(&ds->s->left);
    if (ds->s->need_hist && median > lo[q]) dadd_pairs(ds, q, ds->avs[q], ds->s->sdomain, lo[q], median - 1, &ds->s->left);
}

static int d_allowable(void *src, uint64_t n, uint64_t left, int side)
{
    (void)side;
    dist *s = ((dsource *)src)->s;
    const uint64_t k = s->m->k;
    if (left < k || n - left < k || left == 0 || left == n) return 0;
    if (!s->need_hist) return 1;
    if (s->left.weight && (!model_dist_may_hold(&s->m->dist, s->m->ref, left, s->left.wsum) ||
                           !model_dist_may_hold(&s->m->dist, s->m->ref, n - left, s->whole.wsum - s->left.wsum)))
        return 0; /* both sides' O(1) lower bounds before any exact distance (same answer, sooner) */
    if (!model_holds(s->m, left, s->counts, ak_hist_counts(&s->left, s->counts), s->counts_scratch)) return 0;
    if (!model_holds(s->m, n - left, s->counts, ak_hist_counts_minus(&s->whole, &s->left, s->counts),
                     s->counts_scratch))
        return 0;
    return model_dist_hist_holds(&s->m->dist, s->m->ref, s->work, left, &s->whole, &s->left, 0, s->codes, s->counts) &&
           model_dist_hist_holds(&s->m->dist, s->m->ref, s->work, n - left, &s->whole, &s->left, 1, s->codes, s->counts);
}

static int d_groups_start(void *src, uint32_t q, const uint32_t *lo, const uint32_t *hi, ak_error *err)
{
    (void)err;
    dsource *ds = src;
    ak_hist_clear(&ds->s->left);
    ds->q = q;
    ds->code = lo[q];
    ds->hi_q = hi[q];
    ds->started = 0;
    return ANONKIT_OK;
}

static int d_group_next(void *src, uint32_t *code, uint64_t *rows)
{
    dsource *ds = src;
    const uint32_t c = dav_next(ds, ds->q, ds->started ? ds->code + 1 : ds->code, rows);
    if (c == UINT32_MAX || c > ds->hi_q) return 0;
    ds->started = 1;
    ds->code = *code = c;
    return 1;
}

static void d_group_add(void *src, mdr_acc *acc)
{
    dsource *ds = src;
    if (ds->s->need_hist) dadd_pairs(ds, ds->q, ds->avs[ds->q], ds->s->sdomain, ds->code, ds->code, &ds->s->left);
    if (acc->split == MDR_SPLIT_INFOGAIN) dadd_pairs(ds, ds->q, ds->avc[ds->q], ds->s->cdomain, ds->code, ds->code, acc->cls);
}

static int d_children(void *src, uint32_t q, const hier_node *u, ak_error *err)
{
    (void)err;
    dsource *ds = src;
    const hier *h = ds->s->t->qi[q].h;
    const uint32_t *children = hier_children(h) + u->first_child;
    int ok = 1;
    for (uint32_t c = 0; c < u->nchildren; c++) {
        const hier_node *ch = hier_node_at(h, children[c]);
        const uint32_t lo = ch->lo > ds->x->rlo[q] ? ch->lo : ds->x->rlo[q];
        const uint32_t hi = ch->hi < ds->x->rhi[q] ? ch->hi : ds->x->rhi[q];
        ds->rows_in[c] = lo <= hi ? dav_sum(ds, q, lo, hi) : 0;
        if (ds->rows_in[c] && ds->rows_in[c] < ds->s->m->k) ok = 0;
    }
    return ok;
}

static uint64_t d_child_rows(void *src, uint32_t child) { return ((dsource *)src)->rows_in[child]; }

static void d_child_add(void *src, uint32_t q, const hier_node *u, uint32_t child, mdr_acc *acc)
{
    dsource *ds = src;
    const hier *h = ds->s->t->qi[q].h;
    const hier_node *ch = hier_node_at(h, hier_children(h)[u->first_child + child]);
    if (acc->split == MDR_SPLIT_INFOGAIN) dadd_pairs(ds, q, ds->avc[q], ds->s->cdomain, ch->lo, ch->hi, acc->cls);
}

static int d_children_hold(void *src, uint32_t q, const hier_node *u)
{
    dsource *ds = src;
    dist *s = ds->s;
    if (!s->need_hist) return 1;
    const hier *h = s->t->qi[q].h;
    const uint32_t *children = hier_children(h) + u->first_child;
    for (uint32_t c = 0; c < u->nchildren; c++) {
        if (!ds->rows_in[c]) continue;
        const hier_node *ch = hier_node_at(h, children[c]);
        ak_hist_clear(&s->child);
        dadd_pairs(ds, q, ds->avs[q], s->sdomain, ch->lo, ch->hi, &s->child);
        if (!dside_holds(s, ds->rows_in[c], &s->child)) return 0;
    }
    return 1;
}

static void d_whole_add(void *src, mdr_acc *acc)
{
    dsource *ds = src;
    if (acc->split == MDR_SPLIT_INFOGAIN) dadd_pairs(ds, 0, ds->avc[0], ds->s->cdomain, ds->lo[0], ds->hi[0], acc->cls);
}

/* 0 when the node's count skipped QI q: it is counted in full and chosen again. */
static int d_prepare(void *src, uint32_t q, ak_error *err)
{
    (void)err;
    return ((dsource *)src)->x->cnt[q] != 0;
}

static const mdr_source_ops dist_source_ops = {
    .prepare = d_prepare,
    .median = d_median,
    .less_side = d_less_side,
    .allowable = d_allowable,
    .groups_start = d_groups_start,
    .group_next = d_group_next,
    .group_add = d_group_add,
    .children = d_children,
    .child_rows = d_child_rows,
    .child_add = d_child_add,
    .children_hold = d_children_hold,
    .whole_add = d_whole_add,
};

/* ---- the tree */

typedef struct dlist {
    dnode *v;
    size_t n, cap;
} dlist;

static int dlist_add(dlist *l, uint32_t d, const uint32_t *rlo, const uint32_t *rhi, const uint32_t *blo,
                     const uint32_t *bhi, int median_only, ak_error *err)
{
    if (l->n == l->cap) {
        const size_t cap = l->cap ? 2 * l->cap : 16;
        dnode *p = realloc(l->v, cap * sizeof *p);
        if (!p) return ak_err_nomem(err);
        l->v = p;
        l->cap = cap;
    }
    dnode *x = &l->v[l->n];
    memset(x, 0, sizeof *x);
    if (!(x->rlo = calloc(5 * (size_t)(d ? d : 1), sizeof *x->rlo))) return ak_err_nomem(err);
    l->n++;
    x->rhi = x->rlo + d;
    x->clo = x->rhi + d;
    x->chi = x->clo + d;
    x->cnt = x->chi + d;
    x->median_only = median_only;
    for (uint32_t q = 0; q < d; q++) {
        x->rlo[q] = rlo[q];
        x->rhi[q] = rhi[q];
        x->clo[q] = blo && blo[q] > rlo[q] ? blo[q] : rlo[q];
        x->chi[q] = bhi && bhi[q] < rhi[q] ? bhi[q] : rhi[q];
        if (x->clo[q] > x->chi[q]) x->clo[q] = x->chi[q];
    }
    return ANONKIT_OK;
}

static void dlist_free(dlist *l)
{
    for (size_t i = 0; i < l->n; i++) free(l->v[i].rlo);
    free(l->v);
    memset(l, 0, sizeof *l);
}

static int add_leaf(mdr_dist_result *out, uint32_t d, const dnode *x, ak_error *err)
{
    mdr_dist_leaf *p = realloc(out->leaves, (out->nleaves + 1) * sizeof *p);
    if (!p) return ak_err_nomem(err);
    out->leaves = p;
    mdr_dist_leaf *f = &p[out->nleaves];
    if (!(f->rlo = malloc(2 * (size_t)(d ? d : 1) * sizeof *f->rlo))) return ak_err_nomem(err);
    out->nleaves++;
    f->rhi = f->rlo + d;
    memcpy(f->rlo, x->rlo, d * sizeof *f->rlo);
    memcpy(f->rhi, x->rhi, d * sizeof *f->rhi);
    f->rows = x->n;
    f->median_only = x->median_only;
    return ANONKIT_OK;
}

void mdr_dist_result_free(mdr_dist_result *r)
{
    if (!r) return;
    for (size_t i = 0; i < r->nleaves; i++) free(r->leaves[i].rlo);
    free(r->leaves);
    free(r->leaf_of);
    memset(r, 0, sizeof *r);
}

/* What became of an open node of a level: a leaf (leaf index), or split
 * (q, cut or the children's code ranges, the index of its first child in the
 * next level). */
typedef struct droute {
    int leaf;
    uint32_t index;
    uint32_t q, cut;
    uint32_t nchildren;
    uint32_t *clo, *chi; /* categorical: per non-empty child, its leaves */
} droute;

static int dist_alloc(dist *s, ak_error *err)
{
    s->counts = malloc((s->sdomain + 1) * sizeof *s->counts);
    s->counts_scratch = malloc((s->sdomain + 1) * sizeof *s->counts_scratch);
    if (model_has_dist(s->m) &&
        (!(s->codes = malloc((s->sdomain + 1) * sizeof *s->codes)) || !(s->work = model_work_new(s->m->ref))))
        return ak_err_nomem(err);
    if (!s->counts || !s->counts_scratch || ak_hist_init(&s->whole, s->sdomain) || ak_hist_init(&s->left, s->sdomain) ||
        ak_hist_init(&s->child, s->sdomain) || ak_hist_init(&s->cls_whole, s->cdomain) ||
        ak_hist_init(&s->cls_left, s->cdomain) || ak_hist_init(&s->cls_group, s->cdomain))
        return ak_err_nomem(err);
    return ANONKIT_OK;
}

static void dist_free(dist *s)
{
    free(s->counts);
    free(s->counts_scratch);
    free(s->codes);
    model_work_free(s->work);
    ak_hist_free(&s->whole);
    ak_hist_free(&s->left);
    ak_hist_free(&s->child);
    ak_hist_free(&s->cls_whole);
    ak_hist_free(&s->cls_left);
    ak_hist_free(&s->cls_group);
}

/* Counts this shard's rows of every open node into buf (zeroed). */
static void count_level(const dist *s, const dlist *open, const uint32_t *node_of, uint64_t *buf, uint64_t *av_at,
                        uint64_t *avs_at, uint64_t *avc_at)
{
    const table *t = s->t;
    const uint32_t d = s->d;
    for (size_t r = 0; r < t->nrows; r++) {
        const uint32_t i = node_of[r];
        if (i == UINT32_MAX || open->v[i].decided) continue;
        const dnode *x = &open->v[i];
        uint64_t *base = buf + x->off;
        const uint64_t *av = av_at + (size_t)i * d, *avs = avs_at + (size_t)i * d, *avc = avc_at + (size_t)i * d;
        for (uint32_t q = 0; q < d; q++) {
            if (!x->cnt[q]) continue;
            const size_t c = t->qi[q].codes[r] - x->clo[q];
            base[av[q] + c]++;
            if (s->need_hist) base[avs[q] + c * s->sdomain + t->sensitive_codes[r]]++;
            if (s->infogain) base[avc[q] + c * s->cdomain + t->class_codes[r]]++;
        }
    }
}

/* Which QIs a node's first count covers (x->cnt), as Rothko-T's count_mask
 * (rothko_fgroup.c): InfoGain scores every QI, so all; Median takes the first
 * allowable split in order of decreasing normalized range, nearly always the
 * first, so the two widest QIs of the node's box and every narrow one. */
static void count_mask(const dist *s, dnode *x)
{
    const uint32_t d = s->d;
    const int all = s->infogain && !x->median_only;
    uint32_t order[d ? d : 1];
    for (uint32_t q = 0; q < d; q++) x->cnt[q] = all || (uint64_t)x->chi[q] - x->clo[q] < 256;
    const uint32_t ncand = table_widest_first(s->t, x->clo, x->chi, order);
    for (uint32_t i = 0; i < ncand && i < 2; i++) x->cnt[order[i]] = 1;
    x->decided = 0;
}

/* The children of node x split by ch (box [lo, hi]) appended to next, and
 * how its rows are routed to them (rt). */
static int make_children(const dist *s, dlist *next, const dnode *x, droute *rt, const mdr_choice *ch,
                         const uint32_t *lo, const uint32_t *hi, const uint64_t *rows_in, ak_error *err)
{
    const table *t = s->t;
    const uint32_t d = s->d, q = ch->q;
    rt->q = q;
    rt->index = (uint32_t)next->n;
    uint32_t plo[d], phi[d];
    memcpy(plo, x->rlo, sizeof plo);
    memcpy(phi, x->rhi, sizeof phi);
    const uint32_t rlo_q = plo[q], rhi_q = phi[q];
    if (t->qi[q].kind == ATTR_NUMERIC) {
        rt->cut = ch->cut;
        rt->nchildren = 2;
        phi[q] = ch->cut - 1;
        AK_CHECK(dlist_add(next, d, plo, phi, lo, hi, ch->median_only, err));
        plo[q] = ch->cut;
        phi[q] = rhi_q;
        return dlist_add(next, d, plo, phi, lo, hi, ch->median_only, err);
    }
    const hier *h = t->qi[q].h;
    const hier_node *u = hier_node_at(h, ch->node);
    const uint32_t nc = u->nchildren;
    uint8_t nonempty[nc];
    uint32_t child_lo[nc], child_hi[nc];
    for (uint32_t c = 0; c < nc; c++) nonempty[c] = rows_in[c] != 0;
    mdr_child_regions(h, u, nonempty, rlo_q, rhi_q, child_lo, child_hi); /* (those of the in-memory Mondrian) */
    if (!(rt->clo = malloc(2 * (size_t)nc * sizeof *rt->clo))) return ak_err_nomem(err);
    rt->chi = rt->clo + nc;
    for (uint32_t c = 0; c < nc; c++) {
        if (!rows_in[c]) continue;
        rt->clo[rt->nchildren] = child_lo[c];
        rt->chi[rt->nchildren] = child_hi[c];
        rt->nchildren++;
        plo[q] = child_lo[c];
        phi[q] = child_hi[c];
        AK_CHECK(dlist_add(next, d, plo, phi, lo, hi, ch->median_only, err));
    }
    return ANONKIT_OK;
}

int mdr_dist_partition(const table *t, const model *m, const mdr_options *o, uint64_t finish_rows,
                       mdr_dist_reduce_fn reduce, void *reduce_ctx, mdr_dist_result *out, ak_error *err)
{
    memset(out, 0, sizeof *out);
    const uint32_t d = t->nqi;
    if (d > 64) return ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0, "anonkit-mpi takes at most 64 QIs");
    if (m->variance > 0 || o->split == MDR_SPLIT_REGRESSION)
        return ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0,
                          "anonkit-mpi supports the Median and InfoGain splits under k-anonymity, l-diversity, "
                          "t-closeness, delta-disclosure and beta-likeness");
    if (model_has_dist(m) && (t->sensitive_column < 0 || !m->ref))
        return ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0,
                          "t-closeness, delta-disclosure and beta-likeness need a sensitive column (--sensitive)");
    /* the AVS sets (per code and sensitive value) serve l-diversity and the
     * distribution models alike: a side's summed histogram is all either reads */
    dist s = {.t = t, .m = m, .d = d, .need_hist = m->l > 0 || model_has_dist(m),
              .infogain = o->split == MDR_SPLIT_INFOGAIN};
    s.sdomain = s.need_hist ? (uint32_t)t->sensitive_dict.count : 1;
    s.cdomain = s.infogain ? (uint32_t)t->class_dict.count : 1;
    if (!s.sdomain) s.sdomain = 1;
    if (!s.cdomain) s.cdomain = 1;
    dlist open = {0}, next = {0};
    uint32_t *node_of = NULL;
    uint64_t *buf = NULL, *av_at = NULL, *avs_at = NULL, *avc_at = NULL, *rows_in = NULL;
    droute *route = NULL;
    size_t max_children = 2;
    for (uint32_t q = 0; q < d; q++)
        if (t->qi[q].kind == ATTR_CATEGORICAL)
            for (uint32_t u = 0; u < hier_node_count(t->qi[q].h); u++)
                if (hier_node_at(t->qi[q].h, u)->nchildren > max_children)
                    max_children = hier_node_at(t->qi[q].h, u)->nchildren;
    int rc = dist_alloc(&s, err);
    if (rc == ANONKIT_OK && s.work) /* t-closeness's lower bound on the node and its left side (model_dist_may_hold) */
        s.whole.weight = s.left.weight = model_dist_weights(&m->dist, m->ref);
    if (rc == ANONKIT_OK && !(out->leaf_of = malloc((t->nrows ? t->nrows : 1) * sizeof *out->leaf_of))) rc = ak_err_nomem(err);
    if (rc == ANONKIT_OK && !(node_of = calloc(t->nrows ? t->nrows : 1, sizeof *node_of))) rc = ak_err_nomem(err);
    if (rc == ANONKIT_OK && !(rows_in = malloc(max_children * sizeof *rows_in))) rc = ak_err_nomem(err);
    if (rc == ANONKIT_OK) { /* the root: the whole domain */
        uint32_t rlo[d ? d : 1], rhi[d ? d : 1];
        for (uint32_t q = 0; q < d; q++) {
            rlo[q] = 0;
            rhi[q] = t->qi[q].ncodes ? t->qi[q].ncodes - 1 : 0;
        }
        rc = dlist_add(&open, d, rlo, rhi, NULL, NULL, 0, err);
    }
    for (int level = 0; rc == ANONKIT_OK && open.n; level++) {
        free(av_at), free(avs_at), free(avc_at), free(route);
        av_at = malloc(open.n * (d ? d : 1) * sizeof *av_at);
        avs_at = malloc(open.n * (d ? d : 1) * sizeof *avs_at);
        avc_at = malloc(open.n * (d ? d : 1) * sizeof *avc_at);
        route = calloc(open.n, sizeof *route);
        if (!av_at || !avs_at || !avc_at || !route) {
            rc = ak_err_nomem(err);
            break;
        }
        /* phase A: every open node's exact box, one MIN reduction (greatest
         * codes as UINT64_MAX minus them) */
        const size_t bw = open.n * 2 * (size_t)d;
        free(buf);
        if (!(buf = malloc((bw ? bw : 1) * sizeof *buf))) {
            rc = ak_err_nomem(err);
            break;
        }
        for (size_t i = 0; i < bw; i++) buf[i] = UINT64_MAX;
        for (size_t r = 0; r < t->nrows; r++) {
            const uint32_t i = node_of[r];
            if (i == UINT32_MAX) continue;
            uint64_t *b = buf + (size_t)i * 2 * d;
            for (uint32_t q = 0; q < d; q++) {
                const uint64_t code = t->qi[q].codes[r];
                if (code < b[q]) b[q] = code;
                if (UINT64_MAX - code < b[d + q]) b[d + q] = UINT64_MAX - code;
            }
        }
        if ((rc = reduce(reduce_ctx, buf, bw, MDR_DIST_MIN, err)) < 0) break;
        out->words_reduced += bw;
        for (size_t i = 0; i < open.n; i++) {
            dnode *x = &open.v[i];
            const uint64_t *b = buf + i * 2 * d;
            for (uint32_t q = 0; q < d; q++) {
                x->clo[q] = b[q] <= UINT32_MAX ? (uint32_t)b[q] : x->rlo[q];
                x->chi[q] = UINT64_MAX - b[d + q] >= x->clo[q] ? (uint32_t)(UINT64_MAX - b[d + q]) : x->clo[q];
            }
            count_mask(&s, x);
        }
        /* phase B: the frequency groups of the QIs each node's choice reads, one
         * SUM reduction; a node whose Median reached a QI not counted is
         * counted again in full (a second round) */
        size_t undecided = open.n;
        for (int round = 0; rc == ANONKIT_OK && undecided; round++) {
            size_t words = 0;
            for (size_t i = 0; i < open.n; i++) {
                if (open.v[i].decided) continue;
                open.v[i].off = words;
                words += node_words(&s, &open.v[i], av_at + i * d, avs_at + i * d, avc_at + i * d);
                if (words > DIST_MAX_WORDS) break;
            }
            if (words > DIST_MAX_WORDS) {
                rc = ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0,
                                "the frequency groups of one level of the partition tree pass 2 GiB: the QIs' domains "
                                "are too wide for anonkit-mpi");
                break;
            }
            free(buf);
            if (!(buf = calloc(words ? words : 1, sizeof *buf))) {
                rc = ak_err_nomem(err);
                break;
            }
            count_level(&s, &open, node_of, buf, av_at, avs_at, avc_at);
            if ((rc = reduce(reduce_ctx, buf, words, MDR_DIST_SUM, err)) < 0) break;
            out->levels += round == 0;
            out->words_reduced += words;
            s.buf = buf;
            for (size_t i = 0; i < open.n && rc == ANONKIT_OK; i++) {
                dnode *x = &open.v[i];
                if (x->decided) continue;
                dsource ds = {.s = &s, .x = x, .rows_in = rows_in};
                const uint64_t *base = buf + x->off;
                uint32_t first = UINT32_MAX;
                for (uint32_t q = 0; q < d; q++) {
                    ds.av[q] = x->cnt[q] ? base + av_at[i * d + q] : NULL;
                    ds.avs[q] = x->cnt[q] && s.need_hist ? base + avs_at[i * d + q] : NULL;
                    ds.avc[q] = x->cnt[q] && s.infogain ? base + avc_at[i * d + q] : NULL;
                    if (x->cnt[q] && first == UINT32_MAX) first = q;
                }
                uint32_t lo[d ? d : 1], hi[d ? d : 1];
                memcpy(lo, x->clo, d * sizeof *lo);
                memcpy(hi, x->chi, d * sizeof *hi);
                x->n = first == UINT32_MAX ? 0 : dav_sum(&ds, first, x->clo[first], x->chi[first]);
                ds.lo = lo;
                ds.hi = hi;
                ak_hist_clear(&s.whole);
                if (s.need_hist && first != UINT32_MAX)
                    dadd_pairs(&ds, first, ds.avs[first], s.sdomain, x->clo[first], x->chi[first], &s.whole);
                if (level == 0 && round == 0 && s.need_hist && x->n > UINT32_MAX) {
                    /* the model layer's histograms count in 32 bits (model_holds, model_dist_holds) */
                    rc = ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0,
                                    "l-diversity, t-closeness, delta-disclosure and beta-likeness on anonkit-mpi take "
                                    "at most 4294967295 rows");
                    break;
                }
                if (level == 0 && round == 0) { /* the whole table must satisfy the model, or no partitioning can */
                    char why[256];
                    why[0] = '\0';
                    int eligible =
                        model_explain(m, x->n, s.counts, ak_hist_counts(&s.whole, s.counts), s.counts_scratch, why,
                                      sizeof why);
                    if (eligible && s.work) {
                        const size_t npairs = ak_hist_pairs(&s.whole, s.codes, s.counts);
                        eligible = model_dist_explain(&m->dist, m->ref, s.work, x->n, s.codes, s.counts, npairs, why,
                                                      sizeof why);
                    }
                    if (!eligible) {
                        rc = ak_err_set(err, ANONKIT_E_INELIGIBLE, NULL, 0, 0,
                                        "the whole table does not satisfy the privacy model (%s), so no anonymization "
                                        "can",
                                        why);
                        break;
                    }
                }
                mdr_choice ch = {0};
                int found = 0;
                if (x->n > finish_rows && d) {
                    const mdr_chooser c = {.t = t,
                                           .n = x->n,
                                           .k = m->k,
                                           .split = s.infogain ? MDR_SPLIT_INFOGAIN : MDR_SPLIT_MEDIAN,
                                           .min_gain = o->min_gain,
                                           .need_sensitive = s.need_hist,
                                           .cls_whole = &s.cls_whole,
                                           .cls_left = &s.cls_left,
                                           .cls_group = &s.cls_group,
                                           .ops = &dist_source_ops,
                                           .src = &ds};
                    if ((found = mdr_choose(&c, lo, hi, x->median_only, &ch, err)) < 0) {
                        rc = found;
                        break;
                    }
                }
                if (found == 2) { /* Median needs a QI this round skipped: the node is counted in full */
                    for (uint32_t q = 0; q < d; q++) x->cnt[q] = 1;
                    out->recounted++;
                    continue;
                }
                x->decided = 1;
                undecided--;
                droute *rt = &route[i];
                if (found != 1) {
                    rt->leaf = 1;
                    rt->index = (uint32_t)out->nleaves;
                    rc = add_leaf(out, d, x, err);
                    continue;
                }
                out->nodes_split++;
                rc = make_children(&s, &next, x, rt, &ch, lo, hi, rows_in, err);
            }
        }
        if (rc < 0) break;
        /* every row to its node's child, or to its leaf */
        for (size_t r = 0; r < t->nrows; r++) {
            const uint32_t i = node_of[r];
            if (i == UINT32_MAX) continue;
            const droute *rt = &route[i];
            if (rt->leaf) {
                out->leaf_of[r] = rt->index;
                node_of[r] = UINT32_MAX;
                continue;
            }
            const uint32_t code = t->qi[rt->q].codes[r];
            uint32_t c = 0;
            if (t->qi[rt->q].kind == ATTR_NUMERIC) c = code >= rt->cut;
            else
                while (c + 1 < rt->nchildren && !(code >= rt->clo[c] && code <= rt->chi[c])) c++;
            node_of[r] = rt->index + c;
        }
        for (size_t i = 0; i < open.n; i++) free(route[i].clo);
        dlist tmp = open;
        open = next;
        next = tmp;
        for (size_t i = 0; i < next.n; i++) free(next.v[i].rlo);
        next.n = 0;
    }
    if (route)
        for (size_t i = 0; i < open.n && rc < 0; i++) free(route[i].clo);
    dlist_free(&open);
    dlist_free(&next);
    free(node_of);
    free(buf);
    free(av_at);
    free(avs_at);
    free(avc_at);
    free(route);
    free(rows_in);
    dist_free(&s);
    if (rc < 0) mdr_dist_result_free(out);
    return rc;
}
