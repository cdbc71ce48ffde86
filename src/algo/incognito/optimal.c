/* optimal.c — the full-domain node of least information loss under a
 * suppression limit, over every anonymous node of the lattice (issue 28;
 * [Kohlmayer12]'s goal, by a different traversal).
 *
 * Owns: the loss of a node with suppressed rows counted as fully generalized
 * (GCP: every QI at NCP 1; DM: |T| per suppressed row; height), its lower
 * bound, and two searches that return the same node:
 *
 *  - the exhaustive one: every lattice node is tested and measured;
 *  - the fast one: nodes are visited in ascending order of a lower bound on
 *    their loss, and the search stops at the first node whose bound exceeds
 *    the best loss found. For GCP the bound is the loss without suppression,
 *    which is a sum over QIs of per-(QI, level) totals, so it costs nothing
 *    per node; since suppressed rows cost the most a row can (NCP 1), the
 *    loss of a node is that bound plus a non-negative excess of its failing
 *    classes. Nodes are tagged as in [Kohlmayer12] ("predictive
 *    tagging"): when a node is not anonymous, neither is any specialization
 *    (generalization property of [LeFevre05], which holds with suppression for
 *    k-anonymity and distinct l-diversity); when it is, every generalization
 *    is, and without suppression such a node's loss is its bound, known
 *    without a test. Frequency sets are rolled up ([LeFevre05] "Rollup
 *    Property") from the smallest cached set of a specialization, the first
 *    of which is the set of distinct level-0 combinations.
 *
 * Ties go to the lower node, then to the lexicographically first level
 * vector, in both searches. Whether a node is anonymous is decided by
 * inc_fset_eval (the one place that applies the privacy model and the
 * suppression limit). */
#include "algo/incognito/optimal_internal.h"

#include <stdlib.h>
#include <string.h>

static uint64_t lv_of_index(const opt_state *s, size_t i)
{
    uint64_t lv = 0;
    for (uint32_t q = 0; q < s->c->nqi; q++) {
        lv = inc_with_level(s->c, lv, q, (uint32_t)(i / s->stride[q]));
        i %= s->stride[q];
    }
    return lv;
}

/* The GCP bound of a node from its rows' NCP b (the sum of s->sum over its
 * levels) and `published`, the sum of s->mincost over them. */
static inline double gcp_bound(const inc_ctx *c, double b, double published)
{
    if (c->defer >= 1) return b;
    /* A row costs its NCP, or defer * W when suppressed: at least defer * its NCP; and at least
     * nrows - limit rows are published, costing in each QI no less than the rows cheapest there. */
    return c->defer * b > published ? c->defer * b : published;
}

/* The loss of the node at levels level[] (height: their sum) when no row is
 * suppressed: a lower bound on its loss and, being monotone in every level, on
 * that of all its generalizations. */
static double bound_levels(const opt_state *s, const uint32_t *level, uint32_t height)
{
    const inc_ctx *c = s->c;
    switch (s->by) {
    case INC_CHOOSE_HEIGHT: return (double)height;
    case INC_CHOOSE_DM: /* every published class has at least k rows, a suppressed row costs |T| */
    {
        const uint64_t k = c->m->k > 1 ? c->m->k : 1;
        return (double)c->nrows * (double)(k < c->nrows ? k : c->nrows);
    }
    default: {
        double b = 0;
        for (uint32_t q = 0; q < c->nqi; q++) b += s->sum[q][level[q]];
        if (c->defer >= 1) return b;
        double published = 0;
        for (uint32_t q = 0; q < c->nqi; q++) published += s->mincost[q][level[q]];
        return gcp_bound(c, b, published);
    }
    }
}

/* bound_levels of packed levels lv. */
static double bound(const opt_state *s, uint64_t lv)
{
    const inc_ctx *c = s->c;
    uint32_t level[64], height = 0;
    for (uint32_t q = 0; q < c->nqi; q++) height += level[q] = inc_level(c, lv, q);
    return bound_levels(s, level, height);
}

/* The loss of node lv from its classes (left in c->g* by inc_fset_eval with
 * groups): its bound plus, per failing class, what suppressing costs beyond
 * publishing it (GCP), or DM / height outright. */
static double loss_of_groups(const opt_state *s, uint64_t lv, double lb)
{
    const inc_ctx *c = s->c;
    if (s->by == INC_CHOOSE_HEIGHT) return lb;
    if (s->by == INC_CHOOSE_DM) {
        double dm = 0;
        uint64_t failing = 0;
        for (size_t g = 0; g < c->ngroups; g++) {
            if (c->gholds[g]) dm += (double)c->gtotal[g] * (double)c->gtotal[g];
            else failing += c->gtotal[g];
        }
        return dm + (double)failing * (double)c->nrows;
    }
    /* Per QI: the weighted NCP of its values at lv's level and its key field. */
    const double *nc[64];
    uint32_t sh[64];
    uint64_t mk[64];
    for (uint32_t q = 0; q < c->nqi; q++) {
        const inc_qi *a = &c->qi[q];
        nc[q] = s->wncp[q][inc_level(c, lv, q)];
        sh[q] = a->bits ? a->shift : 0;
        mk[q] = a->bits ? ((((uint64_t)1) << a->bits) - 1) : 0;
    }
    const double full_cost = c->defer * s->wsum;
    const uint32_t nqi = c->nqi;
    if (c->defer == 0) { /* a suppressed row costs nothing: the loss is the published rows' NCP */
        double published = 0;
        for (size_t g = 0; g < c->ngroups; g++) {
            if (!c->gholds[g]) continue;
            const uint64_t key = c->gkey[g];
            double cost = 0;
            for (uint32_t q = 0; q < nqi; q++) cost += nc[q][(key >> sh[q]) & mk[q]];
            published += (double)c->gtotal[g] * cost;
        }
        return published;
    }
    double extra = 0;
    for (size_t g = 0; g < c->ngroups; g++) {
        if (c->gholds[g]) continue;
        const uint64_t key = c->gkey[g];
        double cost = 0;
        for (uint32_t q = 0; q < nqi; q++) cost += nc[q][(key >> sh[q]) & mk[q]];
        const double excess = full_cost - cost;
        if (excess > 0 || c->defer < 1) extra += (double)c->gtotal[g] * excess;
    }
    if (c->defer < 1) { /* the bound was scaled: the loss is the rows' NCP plus the excess */
        double full = 0;
        for (uint32_t q = 0; q < c->nqi; q++) full += s->sum[q][inc_level(c, lv, q)];
        return full + extra;
    }
    return lb + extra;
}

/* Whether packed levels a are componentwise at most b. */
static int below(const inc_ctx *c, uint64_t a, uint64_t b)
{
    for (uint32_t q = 0; q < c->nqi; q++)
        if (inc_level(c, a, q) > inc_level(c, b, q)) return 0;
    return 1;
}

/* Packed levels lv with a zero guard bit above each QI's level (s->woff), so
 * that one subtraction compares every level at once (node_fset). */
static uint64_t wide_of(const opt_state *s, uint64_t lv)
{
    uint64_t w = 0;
    if (!s->wguard) return 0;
    for (uint32_t q = 0; q < s->c->nqi; q++) w |= (uint64_t)inc_level(s->c, lv, q) << s->woff[q];
    return w;
}

/* Whether the node of spread levels a is below the one of b (wide_of): no
 * field of (b | guards) - a borrows from its guard bit exactly when every
 * level of a is at most b's (each field of a is below its guard, so no borrow
 * crosses into the next field). */
static inline int wide_below(uint64_t guard, uint64_t a, uint64_t b)
{
    return (((b | guard) - a) & guard) == guard;
}

/* The cache entry to roll node lv (spread levels `wide`) up from: the smallest
 * cached set of a specialization (entry 0, the level-0 set, is one). */
static size_t fset_source(const opt_state *s, uint64_t lv, uint64_t wide)
{
    const inc_ctx *c = s->c;
    size_t from = 0, least = s->cache[0].n;
    const uint64_t guard = s->wguard;
    if (guard) {
        for (size_t i = 1; i < s->ncache; i++)
            if (s->cache[i].n < least && wide_below(guard, s->cache[i].wide, wide)) {
                from = i;
                least = s->cache[i].n;
            }
    } else {
        for (size_t i = 1; i < s->ncache; i++)
            if (s->cache[i].n < least && below(c, s->cache[i].lv, lv)) {
                from = i;
                least = s->cache[i].n;
            }
    }
    return from;
}

/* Rolls node lv up from cache entry `from` and caches it (the oldest entry but
 * the first is evicted); its slot in *slot_out. */
static int fset_roll_cache(opt_state *s, size_t from, uint64_t lv, uint64_t wide, size_t *slot_out, ak_error *err)
{
    inc_ctx *c = s->c;
    const uint64_t full = inc_full_mask(c);
    inc_fset *fs;
    AK_CHECK(inc_fset_rollup(c, s->cache[from].fs, (inc_node){full, s->cache[from].lv}, (inc_node){full, lv}, &fs, err));
    size_t slot;
    if (s->ncache < CACHE) {
        slot = s->ncache++;
    } else {
        slot = 1 + s->next_evict;
        s->next_evict = (s->next_evict + 1) % (CACHE - 1);
        inc_fset_release(c, s->cache[slot].fs);
    }
    s->cache[slot].lv = lv;
    s->cache[slot].wide = wide;
    s->cache[slot].n = fs->n;
    s->cache[slot].fs = fs;
    *slot_out = slot;
    return ANONKIT_OK;
}

/* The frequency set of node lv, rolled up from the smallest cached set of a
 * specialization ([LeFevre05] rollup; [Kohlmayer12] rolls up along its paths)
 * and cached. A node that only the level-0 set lies below is rolled up through
 * a hub: the meet (least levels) of it and the previous such node, cached as
 * well, so that the next nodes above the hub start from a smaller set. Every
 * rollup keeps its keys in the order of their first level-0 entry, from any
 * source, so a node's set is the same entry for entry however it was reached
 * (and so are the sums over it). */
static int node_fset(opt_state *s, uint64_t lv, const inc_fset **out, ak_error *err)
{
    const inc_ctx *c = s->c;
    const uint64_t wide = wide_of(s, lv);
    size_t from = fset_source(s, lv, wide), slot;
    if (from == 0) { /* from the level-0 set: through the meet of this node and the last one rolled from it */
        if (s->have_last0) {
            uint64_t h = 0;
            for (uint32_t q = 0; q < c->nqi; q++) {
                const uint32_t a = inc_level(c, lv, q), b = inc_level(c, s->last0, q);
                h = inc_with_level(c, h, q, a < b ? a : b);
            }
            if (h != 0 && h != lv) AK_CHECK(fset_roll_cache(s, 0, h, wide_of(s, h), &from, err));
        }
        s->last0 = lv;
        s->have_last0 = 1;
    }
    AK_CHECK(fset_roll_cache(s, from, lv, wide, &slot, err));
    *out = s->cache[slot].fs;
    return ANONKIT_OK;
}

/* Tags node i and everything below it (dir -1) or above it (dir +1). */
static void tag_cone(opt_state *s, size_t i, int dir, unsigned char tag)
{
    const inc_ctx *c = s->c;
    size_t top = 0;
    if ((s->tag[i] & 3) == tag) return;
    s->tag[i] = (unsigned char)((s->tag[i] & TAG_TESTED) | tag);
    s->stack[top++] = i;
    const uint64_t full = inc_full_mask(c);
    const uint64_t *edge = dir < 0 ? s->at_bottom : s->at_top;
    while (top) {
        const size_t x = s->stack[--top];
        for (uint64_t open = full & ~edge[x]; open; open &= open - 1) { /* the QIs it can step along */
            const uint32_t q = (uint32_t)__builtin_ctzll(open);
            const size_t y = dir < 0 ? x - s->stride[q] : x + s->stride[q];
            if ((s->tag[y] & 3) == tag) continue;
            s->tag[y] = (unsigned char)((s->tag[y] & TAG_TESTED) | tag);
            s->stack[top++] = y;
        }
    }
}

/* A heap entry, 16 bytes so that the heap of a whole lattice stays in cache:
 * the order's key lb (bound(lv), plus pair_bound(lv) once refined) and `tie`,
 * the node's height above its index (whose order is that of the packed level
 * vectors: both put QI 0 first) above the refined flag. */
typedef struct ordered {
    double lb;
    uint64_t tie; /* height << 32 | index << 1 | refined */
} ordered;

static inline size_t ordered_index(const ordered *o) { return (size_t)(o->tie >> 1 & 0x7FFFFFFFu); }
static inline uint32_t ordered_height(const ordered *o) { return (uint32_t)(o->tie >> 32); }

/* Whether x comes before y: by bound, then height, then level vector (a total order). */
static inline int ordered_before(const ordered *x, const ordered *y)
{
    if (x->lb != y->lb) return x->lb < y->lb;
    return x->tie < y->tie;
}

/* Restores the min-heap order of h[0..n) below position i. */
static void sift_down(ordered *h, size_t n, size_t i)
{
    const ordered x = h[i];
    for (;;) {
        size_t child = 2 * i + 1;
        if (child >= n) break;
        if (child + 1 < n && ordered_before(&h[child + 1], &h[child])) child++;
        if (!ordered_before(&h[child], &x)) break;
        h[i] = h[child];
        i = child;
    }
    h[i] = x;
}

/* After the top of h[0..n) was replaced by the last entry: restores the
 * min-heap order (Floyd's variant: the hole goes down to a leaf along the
 * lesser children, one comparison per level, then the entry climbs back the
 * few levels it belongs above; the last entry, one of the largest, mostly
 * stays near the leaves). The heap pops the same entries in the same order
 * as with sift_down: its order is total. */
static void sift_down_top(ordered *h, size_t n)
{
    if (n == 0) return;
    const ordered x = h[0];
    size_t i = 0;
    for (;;) {
        size_t child = 2 * i + 1;
        if (child >= n) break;
        child += child + 1 < n && ordered_before(&h[child + 1], &h[child]);
        h[i] = h[child];
        i = child;
    }
    while (i > 0 && ordered_before(&x, &h[(i - 1) / 2])) {
        h[i] = h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h[i] = x;
}

/* Restores the min-heap order of h[0..i] above position i. */
static void sift_up(ordered *h, size_t i)
{
    const ordered x = h[i];
    while (i > 0 && ordered_before(&x, &h[(i - 1) / 2])) {
        h[i] = h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h[i] = x;
}

/* The GCP keys of fill_order for every node at once, by expanding one QI at
 * a time in index order (QI 0 the slowest digit): after QI q, entry j holds
 * the sums over QIs 0..q of the node with prefix index j, added in the same
 * order as bound_levels (so the same values), and likewise the heights and
 * the packed levels. Each pass writes from the back, reading entry j before
 * it overwrites it. Its scratch is kept in the context beside the lattice's
 * edge masks (lat_n entries, lattice_edges). */
static int fill_order_gcp(const opt_state *s, ordered *order, uint64_t *lvs, ak_error *err)
{
    inc_ctx *c = s->c;
    if (!c->lat_pb) c->lat_pb = malloc(s->n * sizeof *c->lat_pb); /* kept for the next search (lattice_edges) */
    if (!c->lat_pm) c->lat_pm = malloc(s->n * sizeof *c->lat_pm);
    if (!c->lat_ht) c->lat_ht = malloc(s->n * sizeof *c->lat_ht);
    if (!c->lat_pb || !c->lat_pm || !c->lat_ht) return ak_err_nomem(err);
    double *pb = c->lat_pb, *pm = c->lat_pm;
    uint32_t *ht = c->lat_ht;
    size_t m = 1;
    pb[0] = pm[0] = 0;
    ht[0] = 0;
    lvs[0] = 0;
    for (uint32_t q = 0; q < c->nqi; q++) {
        const uint32_t h = c->qi[q].height, lshift = c->qi[q].lshift;
        const double *sum = s->sum[q], *mincost = s->mincost[q];
        for (size_t j = m; j-- > 0;) {
            const double b = pb[j], mc = pm[j];
            const uint32_t height = ht[j];
            const uint64_t lv = lvs[j];
            for (uint32_t l = h + 1; l-- > 0;) {
                const size_t at = j * (h + 1) + l;
                pb[at] = b + sum[l];
                pm[at] = mc + mincost[l];
                ht[at] = height + l;
                lvs[at] = lv | (uint64_t)l << lshift;
            }
        }
        m *= h + 1;
    }
    for (size_t i = 0; i < s->n; i++)
        order[i] = (ordered){gcp_bound(c, pb[i], pm[i]), (uint64_t)ht[i] << 32 | (uint64_t)i << 1};
    return ANONKIT_OK;
}

/* Every lattice node with its bound (0 for the exhaustive search), height and
 * packed levels, walking the lattice in index order like an odometer. */
static void fill_order(const opt_state *s, int exhaustive, ordered *order, uint64_t *lvs)
{
    const inc_ctx *c = s->c;
    uint32_t level[64] = {0}, height = 0;
    uint64_t lv = 0;
    /* GCP: the sums of bound_levels kept per prefix of the QIs (pb[q]: over QIs 0..q-1, added in the same
     * order, so the same values), so that a step of the odometer recomputes only the QIs it changed. */
    const int prefix = !exhaustive && s->by == INC_CHOOSE_GCP;
    double pb[65], pm[65];
    uint32_t from = 0; /* the first QI whose level changed since the prefixes were right */
    pb[0] = pm[0] = 0;
    for (size_t i = 0; i < s->n; i++) {
        double key = 0;
        if (prefix) {
            for (uint32_t q = from; q < c->nqi; q++) {
                pb[q + 1] = pb[q] + s->sum[q][level[q]];
                pm[q + 1] = pm[q] + s->mincost[q][level[q]];
            }
            key = gcp_bound(c, pb[c->nqi], pm[c->nqi]);
        } else if (!exhaustive) {
            key = bound_levels(s, level, height);
        }
        order[i] = (ordered){key, (uint64_t)height << 32 | (uint64_t)i << 1};
        lvs[i] = lv;
        from = 0;
        for (uint32_t q = c->nqi; q-- > 0;) { /* the next index: the last QI turns fastest */
            if (level[q] < c->qi[q].height) {
                level[q]++;
                height++;
                lv = inc_with_level(c, lv, q, level[q]);
                from = q;
                break;
            }
            height -= level[q];
            level[q] = 0;
            lv = inc_with_level(c, lv, q, 0);
        }
    }
}

/* Whether (loss, height, lv) ranks before the best so far. */
static int improves(const inc_opt_result *best, double loss, uint32_t height, uint64_t lv)
{
    if (!best->found) return 1;
    if (loss != best->loss) return loss < best->loss;
    if (height != best->height) return height < best->height;
    return lv < best->lv;
}

static void set_best(inc_opt_result *best, double loss, uint32_t height, uint64_t lv, uint64_t suppressed)
{
    best->found = 1;
    best->loss = loss;
    best->height = height;
    best->lv = lv;
    best->suppressed = suppressed;
}

/* The test of frequency set fs under k-anonymity alone (no sensitive value,
 * no risk predicate) when a suppressed row costs nothing (GCP, defer = 0: the
 * iterations of local recoding): what inc_fset_eval decides (a class holds
 * with k rows; anonymous when the rows of the others are within the limit),
 * stopping once more rows fail than the limit, and for an anonymous node the
 * loss of loss_of_groups (the published classes' NCP, summed in the same
 * order, so the same value), read from fs itself instead of the group
 * arrays. */
static void test_k_free(const opt_state *s, const inc_fset *fs, uint64_t lv, int *anonymous, double *loss,
                        uint64_t *failing)
{
    const inc_ctx *c = s->c;
    const uint64_t k = c->m->k, limit = c->limit;
    uint64_t fail = 0;
    const uint32_t *count = fs->count;
    /* In blocks without a branch, the limit checked between blocks: fail only grows, so it ends beyond the
     * limit exactly when it gets there. Full blocks have a constant trip count and a 32-bit sum (256 counts
     * below k <= 2^24 fit), so that the compiler vectorizes them. */
    size_t i = 0;
    if (k <= ((uint64_t)1 << 24)) {
        const uint32_t k32 = (uint32_t)k;
        for (; i + 256 <= fs->n && fail <= limit; i += 256) {
            const uint32_t *b = count + i;
            uint32_t part = 0;
            for (size_t j = 0; j < 256; j++) part += b[j] < k32 ? b[j] : 0;
            fail += part;
        }
        /* The rest of the last block, 16 at a time (also a constant trip count). */
        if (fail <= limit) {
            uint32_t part = 0;
            for (; i + 16 <= fs->n; i += 16) {
                const uint32_t *b = count + i;
                for (size_t j = 0; j < 16; j++) part += b[j] < k32 ? b[j] : 0;
            }
            fail += part;
        }
    }
    for (; i < fs->n && fail <= limit; i += 256) {
        const size_t end = fs->n - i < 256 ? fs->n : i + 256;
        uint64_t part = 0;
        for (size_t j = i; j < end; j++) part += count[j] < k ? count[j] : 0;
        fail += part;
    }
    *anonymous = fail <= limit;
    *failing = fail;
    *loss = 0;
    if (!*anonymous) return;
    const double *nc[64];
    uint32_t sh[64];
    uint64_t mk[64];
    const uint32_t nqi = c->nqi;
    for (uint32_t q = 0; q < nqi; q++) {
        const inc_qi *a = &c->qi[q];
        nc[q] = s->wncp[q][inc_level(c, lv, q)];
        sh[q] = a->bits ? a->shift : 0;
        mk[q] = a->bits ? ((((uint64_t)1) << a->bits) - 1) : 0;
    }
    double published = 0;
    for (size_t i = 0; i < fs->n; i++) {
        if (!(fs->count[i] >= k)) continue;
        const uint64_t key = fs->key[i];
        double cost = 0;
        for (uint32_t q = 0; q < nqi; q++) cost += nc[q][(key >> sh[q]) & mk[q]];
        published += (double)fs->count[i] * cost;
    }
    *loss = published;
}

/* Tests node lv and, when anonymous, measures its loss. */
static int test_node(opt_state *s, uint64_t lv, double lb, int *anonymous, double *loss, uint64_t *failing,
                     ak_error *err)
{
    const inc_fset *fs;
    AK_CHECK(node_fset(s, lv, &fs, err));
    if (!s->c->sens && !s->c->risk && s->by == INC_CHOOSE_GCP && s->c->defer == 0) {
        test_k_free(s, fs, lv, anonymous, loss, failing);
        s->c->counters.nodes_checked++;
        return ANONKIT_OK;
    }
    AK_CHECK(inc_fset_eval(s->c, fs, 1, anonymous, failing, err));
    s->c->counters.nodes_checked++;
    *loss = *anonymous ? loss_of_groups(s, lv, lb) : 0;
    return ANONKIT_OK;
}

static size_t index_of(const opt_state *s, uint64_t lv)
{
    size_t i = 0;
    for (uint32_t q = 0; q < s->c->nqi; q++) i += inc_level(s->c, lv, q) * s->stride[q];
    return i;
}

/* Raises emin to e over node i and everything below it (dir -1) or above it
 * (dir +1), the walk of tag_cone.
 *
 * Below (dir -1): for the models monotone under suppression, the rows of a
 * class failing at node z fail at every specialization x of z too (their
 * class there is a subset), and each costs at x at most what it costs at z;
 * so the excess of suppressing over publishing at x is at least z's:
 * loss(x) >= bound(x) + excess(z).
 *
 * Above (dir +1), when a suppressed row costs nothing (defer = 0, local
 * recoding): the loss of an anonymous node is the NCP of the rows it
 * publishes, and at a generalization y of i every row published at i is
 * published too (its class at y is a superset, monotone under suppression)
 * at no lower NCP, so loss(y) >= loss(i). emin then holds that lower bound
 * on the loss itself (not an excess). */
static void emin_cone(opt_state *s, size_t i, int dir, double e)
{
    const inc_ctx *c = s->c;
    size_t top = 0;
    if (s->emin[i] >= e) return;
    s->emin[i] = e;
    s->stack[top++] = i;
    const uint64_t full = inc_full_mask(c);
    const uint64_t *edge = dir < 0 ? s->at_bottom : s->at_top;
    while (top) {
        const size_t x = s->stack[--top];
        for (uint64_t open = full & ~edge[x]; open; open &= open - 1) { /* the QIs it can step along */
            const uint32_t q = (uint32_t)__builtin_ctzll(open);
            const size_t y = dir < 0 ? x - s->stride[q] : x + s->stride[q];
            if (s->emin[y] >= e) continue; /* its whole cone already has at least e */
            s->emin[y] = e;
            s->stack[top++] = y;
        }
    }
}

/* The most the dearest m rows cost in QI q at level l (m at most the rows). */
static double top_sum(const top_sums *ts, uint64_t m)
{
    if (m >= ts->cnt[ts->n]) return ts->sum[ts->n];
    size_t lo = 0, hi = ts->n; /* the entry lo with cnt[lo] <= m < cnt[lo + 1] */
    while (hi - lo > 1) {
        const size_t mid = lo + (hi - lo) / 2;
        if (ts->cnt[mid] <= m) lo = mid;
        else hi = mid;
    }
    return ts->sum[lo] + (double)(m - ts->cnt[lo]) * ts->val[lo];
}

/* The two-QI sub-lattices: each pair's frequency sets, projected from the
 * level-0 set and rolled up level by level, tested by inc_fset_eval. */
static int pairs_init(opt_state *s, ak_error *err)
{
    inc_ctx *c = s->c;
    const inc_fset *bottom = s->cache[0].fs;
    s->npairs = (size_t)c->nqi * (c->nqi - 1) / 2;
    if (!s->npairs) return ANONKIT_OK;
    if (!(s->pairs = calloc(s->npairs, sizeof *s->pairs))) return ak_err_nomem(err);
    size_t p = 0;
    for (uint32_t a = 0; a < c->nqi; a++)
        for (uint32_t b = a + 1; b < c->nqi; b++, p++) {
            pair_sub *ps = &s->pairs[p];
            const uint32_t ha = c->qi[a].height, hb = c->qi[b].height;
            const uint64_t mask = ((uint64_t)1 << a) | ((uint64_t)1 << b);
            ps->a = a;
            ps->b = b;
            ps->fail = calloc((size_t)(ha + 1) * (hb + 1), sizeof *ps->fail);
            ps->cost = calloc((size_t)(ha + 1) * (hb + 1), sizeof *ps->cost);
            if (!ps->fail || !ps->cost) return ak_err_nomem(err);
            inc_fset *base;
            AK_CHECK(inc_fset_rollup(c, bottom, (inc_node){inc_full_mask(c), 0}, (inc_node){mask, 0}, &base, err));
            int rc = ANONKIT_OK;
            for (uint32_t la = 0; la <= ha && rc == ANONKIT_OK; la++)
                for (uint32_t lb = 0; lb <= hb && rc == ANONKIT_OK; lb++) {
                    const uint64_t lv = inc_with_level(c, inc_with_level(c, 0, a, la), b, lb);
                    inc_fset *f = base;
                    if (lv && (rc = inc_fset_rollup(c, base, (inc_node){mask, 0}, (inc_node){mask, lv}, &f, err)) < 0)
                        break;
                    int anonymous;
                    uint64_t failing;
                    rc = inc_fset_eval(c, f, 1, &anonymous, &failing, err);
                    double cost = 0;
                    for (size_t g = 0; rc == ANONKIT_OK && g < c->ngroups; g++)
                        if (!c->gholds[g])
                            cost += (double)c->gtotal[g] * (s->wncp[a][la][inc_key_value(c, c->gkey[g], a)] +
                                                            s->wncp[b][lb][inc_key_value(c, c->gkey[g], b)]);
                    ps->fail[la * (hb + 1) + lb] = failing;
                    ps->cost[la * (hb + 1) + lb] = cost;
                    if (f != base) inc_fset_release(c, f);
                }
            inc_fset_release(c, base);
            AK_CHECK(rc);
        }
    return ANONKIT_OK;
}

/* A lower bound on the suppression excess of node lv (loss minus bound) from
 * the pair sub-lattices, for the models monotone under suppression: a row in a
 * failing class of the table grouped by QIs a and b at lv's levels is in a
 * failing class at lv too (its class at lv is a subset), so at least
 * fail(a, b) rows are suppressed at lv. Each costs W there instead of its
 * published NCP, which is known in a and b and, in every other QI, at most
 * what the dearest fail(a, b) rows cost at lv's level. *most_failing: the most
 * rows such a pair proves to fail at lv. */
static double pair_bound(const opt_state *s, uint64_t lv, uint64_t *most_failing)
{
    const inc_ctx *c = s->c;
    uint32_t level[64];
    for (uint32_t q = 0; q < c->nqi; q++) level[q] = inc_level(c, lv, q);
    double best = 0;
    uint64_t most = 0;
    for (size_t p = 0; p < s->npairs; p++) {
        const pair_sub *ps = &s->pairs[p];
        const size_t at = (size_t)level[ps->a] * (c->qi[ps->b].height + 1) + level[ps->b];
        const uint64_t f = ps->fail[at];
        if (!f) continue;
        if (f > most) most = f;
        double published = ps->cost[at];
        for (uint32_t q = 0; q < c->nqi; q++)
            if (q != ps->a && q != ps->b) published += top_sum(&s->top[q][level[q]], f);
        const double e = (double)f * s->wsum - published;
        if (e > best) best = e;
    }
    *most_failing = most;
    return best;
}

/* Tests node i (packed lv), records the outcome (tags, failing-row bound)
 * and offers it as the optimum. */
static int test_and_tag(opt_state *s, size_t i, uint64_t lv, inc_opt_result *best, ak_error *err)
{
    int anonymous;
    double loss;
    uint64_t failing;
    const double lb = bound(s, lv);
    AK_CHECK(test_node(s, lv, lb, &anonymous, &loss, &failing, err));
    s->tag[i] |= TAG_TESTED;
    tag_cone(s, i, anonymous ? +1 : -1, anonymous ? TAG_PASS : TAG_FAIL);
    if (s->by == INC_CHOOSE_GCP && s->c->limit > 0 && s->c->defer >= 1 && anonymous && loss > lb)
        emin_cone(s, i, -1, loss - lb);
    if (s->up_bound && anonymous) emin_cone(s, i, +1, loss);
    const uint32_t height = inc_node_height(s->c, (inc_node){inc_full_mask(s->c), lv});
    if (anonymous && improves(best, loss, height, lv)) set_best(best, loss, height, lv, failing);
    return ANONKIT_OK;
}

/* Settles whether untagged node i is anonymous the way [Kohlmayer12]
 * does with its paths: a path from it towards the top, raising at each step the QI whose
 * next level adds the least to the bound, ends at the first node known to
 * be anonymous (or at the top); a binary search on the path finds its lowest
 * anonymous node, and every test tags the cone above (anonymous) or below
 * (not) the node tested. Nodes high on a path have small frequency sets, and
 * a failure there settles many nodes at once. */
static int settle_by_path(opt_state *s, size_t i, uint64_t lv, inc_opt_result *best, ak_error *err)
{
    const inc_ctx *c = s->c;
    size_t len = 0, end;
    uint64_t cur = lv;
    s->path[len++] = i;
    for (;;) {
        uint32_t pick = UINT32_MAX;
        double step = 0;
        for (uint32_t q = 0; q < c->nqi; q++) {
            const uint32_t l = inc_level(c, cur, q);
            if (l == c->qi[q].height) continue;
            const double d = s->by == INC_CHOOSE_GCP ? s->sum[q][l + 1] - s->sum[q][l] : 0;
            if (pick == UINT32_MAX || d < step) {
                pick = q;
                step = d;
            }
        }
        if (pick == UINT32_MAX) break; /* the top */
        cur = inc_with_level(c, cur, pick, inc_level(c, cur, pick) + 1);
        const size_t j = index_of(s, cur);
        if ((s->tag[j] & 3) == TAG_PASS) break;
        s->path[len++] = j;
    }
    /* Nodes path[0..len) are untagged: find the lowest anonymous one, if any. */
    end = len;
    size_t lo = 0, hi = end;
    while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2;
        const size_t j = s->path[mid];
        AK_CHECK(test_and_tag(s, j, lv_of_index(s, j), best, err));
        if ((s->tag[j] & 3) == TAG_PASS) hi = mid;
        else lo = mid + 1;
    }
    return ANONKIT_OK;
}

int inc_optimal_ctx(inc_ctx *c, inc_choose by, const double *weights, int exhaustive, inc_opt_result *out,
                    ak_error *err)
{
    memset(out, 0, sizeof *out);
    opt_state s;
    /* The pair sub-lattices bound the loss under suppression (pair_bound). */
    const int want_pairs = !exhaustive && (by == INC_CHOOSE_GCP || by == INC_CHOOSE_K_MINIMAL) && c->limit > 0 &&
                           c->defer >= 1 && inc_model_monotone_with_suppression(c->m);
    int rc = opt_state_init(&s, c, by, weights, want_pairs, err);
    if (rc == ANONKIT_OK && s.top_ok) rc = pairs_init(&s, err);
    /* A suppressed row costing nothing makes the loss monotone upwards (emin_cone upwards). */
    s.up_bound = rc == ANONKIT_OK && !exhaustive && s.by == INC_CHOOSE_GCP && c->defer == 0 && c->limit > 0 &&
                 inc_model_monotone_with_suppression(c->m);
    for (uint32_t q = 0; q < c->nqi && s.up_bound; q++)
        if (!(s.w[q] >= 0)) s.up_bound = 0;
    ordered *order = rc == ANONKIT_OK ? malloc(s.n * sizeof *order) : NULL;
    uint64_t *lvs = rc == ANONKIT_OK ? malloc(s.n * sizeof *lvs) : NULL; /* packed levels per node index */
    if (rc == ANONKIT_OK && (!order || !lvs)) rc = ak_err_nomem(err);
    if (rc == ANONKIT_OK && !exhaustive && s.by == INC_CHOOSE_GCP) rc = fill_order_gcp(&s, order, lvs, err);
    else if (rc == ANONKIT_OK) fill_order(&s, exhaustive, order, lvs);
    /* A heap, not a sort: the search usually stops long before the last node. */
    for (size_t i = s.n / 2; rc == ANONKIT_OK && i-- > 0;) sift_down(order, s.n, i);
    out->lattice = rc == ANONKIT_OK ? s.n : 0;
    uint64_t pruned_tagged = 0, pruned_bound = 0;
    size_t left = rc == ANONKIT_OK ? s.n : 0;
    while (rc == ANONKIT_OK && left > 0) {
        const ordered top = order[0];
        order[0] = order[--left];
        sift_down_top(order, left);
        const struct {
            double lb;
            uint32_t height, refined;
            uint64_t lv;
            size_t index;
        } node = {top.lb, ordered_height(&top), (uint32_t)(top.tie & 1), lvs[ordered_index(&top)], ordered_index(&top)},
          *o = &node;
        if (exhaustive) {
            rc = test_and_tag(&s, o->index, o->lv, out, err);
            continue;
        }
        /* A refined key may exceed the node's loss by the rounding of pair_bound: stop only beyond it. */
        const double tol = s.pairs ? 1e-9 * (out->loss + (double)c->nrows * s.wsum) + 1e-9 : 0;
        /* Without suppression an anonymous node's loss is its key (GCP, height): once the best ranks
         * no later than this node, no later node can improve on it. */
        const int exact_keys = c->limit == 0 && s.by != INC_CHOOSE_DM && c->defer >= 1;
        if (out->found && (o->lb > out->loss + tol || (exact_keys && !improves(out, o->lb, o->height, o->lv)))) {
            pruned_bound += !(s.tag[o->index] & TAG_TESTED);
            for (size_t rest = 0; rest < left; rest++) pruned_bound += !(s.tag[ordered_index(&order[rest])] & TAG_TESTED);
            break;
        }
        if (s.tag[o->index] & TAG_TESTED) continue; /* offered when tested */
        if (s.pairs && !o->refined) { /* its key becomes bound + pair_bound: back into the heap */
            uint64_t most;
            const double e = pair_bound(&s, o->lv, &most);
            if (most > c->limit) { /* more rows fail at a pair of its QIs than may be suppressed: not anonymous */
                pruned_tagged++;
                continue;
            }
            if (e > 0) {
                ordered r = top;
                r.lb += e;
                r.tie |= 1;
                order[left] = r;
                sift_up(order, left++);
                continue;
            }
        }
        if (!s.tag[o->index] && (rc = settle_by_path(&s, o->index, o->lv, out, err)) < 0) break;
        if (s.tag[o->index] & TAG_TESTED) continue;
        if ((s.tag[o->index] & 3) == TAG_FAIL) {
            pruned_tagged++;
            continue;
        }
        /* Anonymous by tagging, not tested. */
        const double lb = o->refined ? bound(&s, o->lv) : o->lb;
        if (c->limit == 0 && s.by != INC_CHOOSE_DM && c->defer >= 1) {
            pruned_tagged++; /* without suppression its loss is its bound */
            if (improves(out, lb, o->height, o->lv)) set_best(out, lb, o->height, o->lv, 0);
            continue;
        }
        if (s.by == INC_CHOOSE_GCP && out->found &&
            (s.up_bound ? s.emin[o->index] : lb + s.emin[o->index]) > out->loss * (1 + 1e-9) + 1e-9) {
            pruned_bound++; /* its excess is at least that of a tested generalization */
            continue;
        }
        rc = test_and_tag(&s, o->index, o->lv, out, err);
    }
    out->pruned_tagged = pruned_tagged;
    out->pruned_bound = pruned_bound;
    free(order);
    free(lvs);
    opt_state_free(&s);
    if (rc == ANONKIT_OK && !out->found)
        rc = ak_err_set(err, ANONKIT_E_INELIGIBLE, NULL, 0, 0,
                        "no full-domain generalization satisfies the privacy model, not even every quasi-identifier "
                        "at the top of its hierarchy (with at most %llu of %zu rows suppressed)",
                        (unsigned long long)c->limit, c->nrows);
    return rc;
}

int inc_optimal_bounds(inc_ctx *c, const double *weights, double *lower, uint64_t *most_failing, ak_error *err)
{
    opt_state s;
    const int want_pairs = c->limit > 0 && c->defer >= 1 && inc_model_monotone_with_suppression(c->m);
    int rc = opt_state_init(&s, c, INC_CHOOSE_GCP, weights, want_pairs, err);
    if (rc == ANONKIT_OK && s.top_ok) rc = pairs_init(&s, err);
    for (size_t i = 0; rc == ANONKIT_OK && i < s.n; i++) {
        const uint64_t lv = lv_of_index(&s, i);
        lower[i] = bound(&s, lv);
        most_failing[i] = 0;
        if (s.pairs) lower[i] += pair_bound(&s, lv, &most_failing[i]);
    }
    opt_state_free(&s);
    return rc;
}
