/* rothko_fgroup.c — Rothko's frequency groups ([LeFevre07] §2: AV, AVS and AVC
 * sets of the open nodes), the split each node takes, chosen from them by
 * split.c (fg_source: the code that chooses the in-memory Mondrian's from
 * rows), and the tree grown over one disk-resident partition. */
#include "algo/mondrian/rothko_internal.h"
#include "algo/mondrian/split_choose.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ frequency groups */


/* Whether the pair set of a QI over `range` codes and nsub sub-values is
 * dense for a node of n rows, with fg_budget bytes for frequency groups
 * (dense counts are known in advance and take at most a quarter of it). */
static int pairs_dense(uint64_t range, uint32_t nsub, uint64_t n, size_t fg_budget)
{
    return range * nsub <= 10 * n && range * nsub * 4 <= fg_budget / 4;
}

static int pairset_init(pairset *s, uint32_t base, uint32_t range, uint32_t nsub, uint64_t n, size_t fg_budget,
                        ak_error *err)
{
    memset(s, 0, sizeof *s);
    s->base = base;
    s->range = range;
    s->nsub = nsub ? nsub : 1;
    if (pairs_dense(range, s->nsub, n, fg_budget)) {
        if (!(s->dense = calloc((size_t)range * s->nsub, sizeof *s->dense))) return ak_err_nomem(err);
        return ANONKIT_OK;
    }
    if (u64map_init(&s->ids, 256) != 0) return ak_err_nomem(err);
    return ANONKIT_OK;
}


static void pairset_free(pairset *s)
{
    if (s->ids.keys) u64map_free(&s->ids);
    free(s->dense);
    free(s->count);
    free(s->sorted);
    memset(s, 0, sizeof *s);
}

/* Bytes the set takes: dense exactly, hashed about 40 a pair. */
static size_t pairset_bytes(const pairset *s)
{
    if (s->dense) return (size_t)s->range * s->nsub * sizeof *s->dense;
    return (s->sorted ? s->npairs : s->ids.count) * (size_t)40;
}

/* After the scan, once: a hashed set's keys sorted with their counts (LSD
 * radix sort, a byte a pass, passes over constant bytes skipped). The hash
 * table is freed first: the sort's buffers take its place. */
int rk_pairset_sort(pairset *s, ak_error *err)
{
    if (s->dense || s->sorted) return ANONKIT_OK;
    const size_t n = s->ids.count;
    uint64_t *key = s->ids.id_keys, *cnt = s->count; /* per id */
    s->ids.id_keys = NULL;
    u64map_free(&s->ids);
    s->count = NULL;
    uint64_t *key2 = malloc((n ? n : 1) * sizeof *key2), *cnt2 = malloc((n ? n : 1) * sizeof *cnt2);
    if (!key2 || !cnt2) {
        free(key), free(key2), free(cnt), free(cnt2);
        return ak_err_nomem(err);
    }
    for (unsigned shift = 0; shift < 64; shift += 8) {
        size_t bucket[256] = {0};
        for (size_t i = 0; i < n; i++) bucket[key[i] >> shift & 255]++;
        if (!n || bucket[key[0] >> shift & 255] == n) continue;
        size_t at = 0;
        for (unsigned b = 0; b < 256; b++) {
            const size_t c = bucket[b];
            bucket[b] = at;
            at += c;
        }
        for (size_t i = 0; i < n; i++) {
            const size_t to = bucket[key[i] >> shift & 255]++;
            key2[to] = key[i];
            cnt2[to] = cnt[i];
        }
        uint64_t *t = key;
        key = key2, key2 = t;
        t = cnt, cnt = cnt2, cnt2 = t;
    }
    free(key2);
    free(cnt2);
    s->sorted = key;
    s->count = cnt;
    s->cap = s->npairs = n;
    return ANONKIT_OK;
}


/* Bytes an AV set over `range` codes takes for a node of n rows, and whether
 * it is counted sparsely: when the dense counts would take more than twice
 * the gathered codes and their sort buffer. */
static size_t av_set_bytes(uint64_t range, uint64_t n, int *sparse /* OUT, may be NULL */)
{
    const int sp = range > 4 * n;
    if (sparse) *sparse = sp;
    return (size_t)(sp ? 8 * n : 4 * range);
}

static int av_init(avset *s, uint32_t base, uint32_t hi, uint64_t n, ak_error *err)
{
    memset(s, 0, sizeof *s);
    s->base = base;
    s->range = hi - base + 1;
    av_set_bytes(s->range, n, &s->sparse);
    if (!s->sparse) {
        if (!(s->count = calloc(s->range, sizeof *s->count))) return ak_err_nomem(err);
        return ANONKIT_OK;
    }
    s->cap = (size_t)n;
    s->codes = malloc((s->cap ? s->cap : 1) * sizeof *s->codes);
    s->count = malloc((s->cap ? s->cap : 1) * sizeof *s->count);
    if (!s->codes || !s->count) return ak_err_nomem(err);
    return ANONKIT_OK;
}

static void av_free(avset *s)
{
    free(s->count);
    free(s->codes);
    memset(s, 0, sizeof *s);
}


/* After the scan: a sparse set's codes sorted (LSD radix sort on the offset
 * from base, one byte a pass, passes over constant bytes skipped) and
 * run-length counted into codes[0..ncodes) and count[0..ncodes). */
void rk_av_finish(avset *s)
{
    if (!s->sparse) return;
    uint32_t *src = s->codes, *dst = s->count;
    const size_t n = s->ncodes;
    for (unsigned shift = 0; shift < 32 && (s->range - 1) >> shift; shift += 8) {
        size_t bucket[256] = {0};
        for (size_t i = 0; i < n; i++) bucket[(src[i] - s->base) >> shift & 255]++;
        if (n && bucket[(src[0] - s->base) >> shift & 255] == n) continue; /* one digit: already in order */
        size_t at = 0;
        for (unsigned b = 0; b < 256; b++) {
            const size_t c = bucket[b];
            bucket[b] = at;
            at += c;
        }
        for (size_t i = 0; i < n; i++) dst[bucket[(src[i] - s->base) >> shift & 255]++] = src[i];
        uint32_t *t = src;
        src = dst;
        dst = t;
    }
    /* src holds the sorted codes; run-length count them into codes and count */
    size_t m = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        while (j < n && src[j] == src[i]) j++;
        s->codes[m] = src[i];
        s->count[m] = (uint32_t)(j - i); /* writes at m <= i: never ahead of what is still read */
        m++;
        i = j;
    }
    s->ncodes = m;
}


/* Rows with codes in [lo, hi]. */
static uint64_t av_sum(const avset *s, uint32_t lo, uint32_t hi)
{
    uint64_t sum = 0, cnt;
    if (!s->sparse) {
        const uint64_t top = (uint64_t)s->base + s->range - 1;
        const uint64_t a = lo > s->base ? lo : s->base, b = hi < top ? hi : top;
        for (uint64_t c = a; c <= b; c++) sum += s->count[c - s->base];
        return sum;
    }
    for (uint32_t c = av_next(s, lo, &cnt); c <= hi && c != UINT32_MAX;) {
        sum += cnt;
        c = c < hi ? av_next(s, c + 1, &cnt) : UINT32_MAX;
    }
    return sum;
}




void rk_fgroup_free(rk *r, fgroup *g)
{
    if (!g) return;
    for (uint32_t q = 0; q < r->d; q++) {
        if (g->av) av_free(&g->av[q]);
        if (g->avs) pairset_free(&g->avs[q]);
        if (g->avc) pairset_free(&g->avc[q]);
    }
    free(g->lo);
    free(g->av);
    free(g->avs);
    free(g->avc);
    free(g);
}


/* Which QIs a node's scan counts (mask[q]). InfoGain scores every QI, so all.
 * Median tries QIs by decreasing normalized range and takes the first
 * allowable split, which for a partition larger than memory is nearly always
 * the first; so its first scan counts the RK_PREDICTED QIs first in that
 * order over the codes the node can hold (its box is within), and the QIs too
 * narrow to matter. Every node still gets its exact box (least and greatest
 * codes), so the order choose_median uses is the in-memory one (a numeric
 * QI whose region holds missing and present values is counted too: its split
 * missing | present is tried first); should it
 * reach a QI that was not counted, the node is counted again in full in the
 * next scan (count_all). The split is the in-memory one either way; most
 * scans just skip the wide QIs' counts, which cost a cache miss a row each. */
static void count_mask(const rk *r, const rk_node *x, uint8_t *mask)
{
    const uint32_t d = r->d;
    const int all = x->count_all || (r->infogain && !x->median_only);
    uint32_t order[d ? d : 1];
    for (uint32_t q = 0; q < d; q++)
        mask[q] = all || (uint64_t)x->chi[q] - x->clo[q] < RK_NARROW_RANGE ||
                  (r->t->qi[q].has_missing && x->clo[q] == 0 && x->chi[q] > 0); /* missing | present is tried first */
    const uint32_t ncand = table_widest_first(r->t, x->clo, x->chi, order);
    for (uint32_t i = 0; i < ncand && i < RK_PREDICTED; i++) mask[order[i]] = 1;
}

int rk_fgroup_new(rk *r, const rk_node *node, fgroup **out, ak_error *err)
{
    fgroup *g = calloc(1, sizeof *g);
    if (!g) return ak_err_nomem(err);
    *out = g;
    if (!(g->lo = malloc(r->d * (2 * sizeof *g->lo + sizeof *g->counted)))) return ak_err_nomem(err);
    g->hi = g->lo + r->d;
    g->counted = (uint8_t *)(g->hi + r->d);
    count_mask(r, node, g->counted);
    if (!(g->av = calloc(r->d, sizeof *g->av))) return ak_err_nomem(err);
    for (uint32_t q = 0; q < r->d; q++) {
        g->lo[q] = UINT32_MAX;
        g->hi[q] = 0;
        if (!g->counted[q]) continue;
        AK_CHECK(av_init(&g->av[q], node->clo[q], node->chi[q], node->n, err));
        r->stats->sparse_sets += g->av[q].sparse;
    }
    const uint64_t n = node->n;
    const size_t budget = r->fg_budget;
    if (r->need_hist) {
        if (!(g->avs = calloc(r->d, sizeof *g->avs))) return ak_err_nomem(err);
        for (uint32_t q = 0; q < r->d; q++)
            if (g->counted[q])
                AK_CHECK(pairset_init(&g->avs[q], node->clo[q], g->av[q].range, r->sdomain, n, budget, err));
    }
    if (r->infogain) {
        if (!(g->avc = calloc(r->d, sizeof *g->avc))) return ak_err_nomem(err);
        for (uint32_t q = 0; q < r->d; q++)
            if (g->counted[q])
                AK_CHECK(pairset_init(&g->avc[q], node->clo[q], g->av[q].range, r->cdomain, n, budget, err));
    }
    return ANONKIT_OK;
}

/* Bytes of the AV sets and dense pair sets a node's scan counts; *nhashed
 * (may be NULL) receives how many hashed pair sets it adds, whose size is
 * known only after a scan. */
size_t rk_av_bytes(const rk *r, const rk_node *x, uint32_t *nhashed)
{
    uint8_t mask[r->d];
    count_mask(r, x, mask);
    size_t bytes = 0;
    uint32_t hashed = 0;
    for (uint32_t q = 0; q < r->d; q++) {
        if (!mask[q]) continue;
        const uint64_t range = (uint64_t)x->chi[q] - x->clo[q] + 1;
        bytes += av_set_bytes(range, x->n, NULL);
        for (int kind = 0; kind < 2; kind++) { /* AVS, AVC */
            const uint32_t domain = kind ? r->cdomain : r->sdomain, nsub = domain ? domain : 1;
            if (!(kind ? r->infogain : r->need_hist)) continue;
            if (pairs_dense(range, nsub, x->n, r->fg_budget)) bytes += (size_t)(range * nsub * 4);
            else hashed++;
        }
    }
    if (nhashed) *nhashed = hashed;
    return bytes;
}

/* The most memory one hashed pair set of a group took (about 40 bytes a
 * pair), folded into *per_set. */
void rk_fgroup_pair_bytes(const rk *r, const fgroup *g, size_t *per_set)
{
    for (uint32_t q = 0; q < r->d; q++) {
        if (g->avs && !g->avs[q].dense && pairset_bytes(&g->avs[q]) > *per_set) *per_set = pairset_bytes(&g->avs[q]);
        if (g->avc && !g->avc[q].dense && pairset_bytes(&g->avc[q]) > *per_set) *per_set = pairset_bytes(&g->avc[q]);
    }
}

/* ------------------------------------------------------------ choosing a split (split.c, from the frequency groups) */


/* Adds the sub-value counts of the pairs of codes [lo, hi] to h, in
 * ascending (code, sub-value) order (after rk_pairset_sort). */
void rk_add_pairs(const pairset *s, uint32_t lo, uint32_t hi, ak_hist *h)
{
    if (s->dense) {
        const uint64_t top = (uint64_t)s->base + s->range - 1;
        const uint64_t a = lo > s->base ? lo : s->base, b = hi < top ? hi : top;
        for (uint64_t c = a; c <= b; c++) {
            const uint32_t *row = s->dense + (size_t)(c - s->base) * s->nsub;
            for (uint32_t sub = 0; sub < s->nsub; sub++) hist_add_n(h, sub, row[sub]);
        }
        return;
    }
    const size_t n = s->npairs;
    size_t a = 0, b = n;
    const uint64_t key = (uint64_t)lo << 32;
    while (a < b) { /* first key >= lo << 32 */
        size_t mid = (a + b) / 2;
        if (s->sorted[mid] < key) a = mid + 1;
        else b = mid;
    }
    for (; a < n && (uint32_t)(s->sorted[a] >> 32) <= hi; a++) hist_add_n(h, (uint32_t)s->sorted[a], s->count[a]);
}

/* Whether `count` rows with sensitive values h satisfy the model (one child). */
static int side_holds(rk *r, uint64_t count, const ak_hist *h)
{
    if (count < r->m->k) return 0;
    if (!r->need_hist) return 1;
    return model_holds(r->m, count, r->counts, ak_hist_counts(h, r->counts), r->counts_scratch) &&
           rk_dist_holds(r, count, h, 0);
}

/* Whether a split of the node's n rows into left_count rows with sensitive
 * values `left` and the rest is allowable (k, then l-diversity); r->whole is
 * the node's histogram. */
static int allowable(rk *r, uint64_t n, uint64_t left_count, const ak_hist *left)
{
    const uint64_t k = r->m->k;
    if (left_count < k || n - left_count < k || left_count == 0 || left_count == n) return 0;
    if (!r->need_hist) return 1;
    if (left->weight && (!model_dist_may_hold(&r->m->dist, r->m->ref, left_count, left->wsum) ||
                         !model_dist_may_hold(&r->m->dist, r->m->ref, n - left_count, r->whole.wsum - left->wsum)))
        return 0; /* both sides' O(1) lower bounds before any exact distance (same answer, sooner) */
    if (!model_holds(r->m, left_count, r->counts, ak_hist_counts(left, r->counts), r->counts_scratch)) return 0;
    if (!model_holds(r->m, n - left_count, r->counts, ak_hist_counts_minus(&r->whole, left, r->counts),
                     r->counts_scratch))
        return 0;
    return rk_dist_holds(r, left_count, left, 0) && rk_dist_holds(r, n - left_count, left, 1);
}

/* Child rows per child of hierarchy node u (rows_in[c]); 0 when a non-empty child has fewer than k. */
static int child_rows(rk *r, const fgroup *g, const rk_node *node, uint32_t q, const hier_node *u, uint64_t *rows_in)
{
    const hier *h = r->t->qi[q].h;
    const uint32_t *children = hier_children(h) + u->first_child;
    int ok = 1;
    for (uint32_t c = 0; c < u->nchildren; c++) {
        const hier_node *ch = hier_node_at(h, children[c]);
        uint32_t lo = ch->lo > node->rlo[q] ? ch->lo : node->rlo[q];
        uint32_t hi = ch->hi < node->rhi[q] ? ch->hi : node->rhi[q];
        rows_in[c] = lo <= hi ? av_sum(&g->av[q], lo, hi) : 0;
        if (rows_in[c] && rows_in[c] < r->m->k) ok = 0;
    }
    return ok;
}

/* Whether every non-empty child's sensitive values satisfy the model. */
static int children_hold(rk *r, const fgroup *g, uint32_t q, const hier_node *u, const uint64_t *rows_in)
{
    if (!r->need_hist) return 1;
    const hier *h = r->t->qi[q].h;
    const uint32_t *children = hier_children(h) + u->first_child;
    for (uint32_t c = 0; c < u->nchildren; c++) {
        if (!rows_in[c]) continue;
        const hier_node *ch = hier_node_at(h, children[c]);
        ak_hist_clear(&r->child);
        rk_add_pairs(&g->avs[q], ch->lo, ch->hi, &r->child);
        if (!side_holds(r, rows_in[c], &r->child)) return 0;
    }
    return 1;
}

/* A node's frequency groups as a source of statistics for mdr_choose: the
 * groups of equal codes of a numeric QI are the codes of its AV set, their
 * sensitive values and classes the AVS and AVC pairs of each code. */
typedef struct fg_source {
    rk *r;
    const fgroup *g;
    const rk_node *node;
    const uint32_t *lo, *hi; /* the node's box */
    uint64_t *rows_in;       /* per child of the last categorical node tried */
    const avset *av;         /* numeric groups: the QI's AV set */
    uint32_t q, code, hi_q;  /* the QI, the last group's code, the greatest code */
    int started;             /* a group was returned */
} fg_source;

/* InfoGain scores every QI: every pair set sorted at once. */
static int fg_start(void *src, int median, ak_error *err)
{
    fg_source *fs = src;
    if (median) return ANONKIT_OK;
    for (uint32_t q = 0; q < fs->r->d; q++) {
        AK_CHECK(rk_pairset_sort(&fs->g->avc[q], err));
        if (fs->r->need_hist) AK_CHECK(rk_pairset_sort(&fs->g->avs[q], err));
    }
    return ANONKIT_OK;
}

/* 0 when the node's scan skipped QI q (count_mask): the node is counted in
 * full and the split chosen again. */
static int fg_prepare(void *src, uint32_t q, ak_error *err)
{
    fg_source *fs = src;
    if (!fs->g->counted[q]) return 0;
    if (fs->r->need_hist) AK_CHECK(rk_pairset_sort(&fs->g->avs[q], err));
    return 1;
}

/* The median from the AV set's running counts. */
static int fg_median(void *src, uint32_t q, const uint32_t *lo, const uint32_t *hi, uint32_t *median,
                     uint64_t *below, uint64_t *equal, ak_error *err)
{
    (void)hi, (void)err;
    fg_source *fs = src;
    rk *r = fs->r;
    const avset *av = &fs->g->av[q];
    const uint64_t nth = (fs->g->n - 1) / 2;
    uint64_t b = 0, e;
    uint32_t v = av_next(av, lo[q], &e); /* the code holding the median row */
    while (b + e <= nth) {
        b += e;
        v = av_next(av, v + 1, &e);
    }
    ak_hist_clear(&r->left);
    if (r->need_hist) rk_add_pairs(&fs->g->avs[q], lo[q], v, &r->left);
    *median = v;
    *below = b;
    *equal = e;
    return ANONKIT_OK;
}

/* (the LESS side takes the place of the LEFT one in r->left) */
static void fg_less_side(void *src, uint32_t q, const uint32_t *lo, uint32_t median)
{
    fg_source *fs = src;
    rk *r = fs->r;
    ak_hist_clear(&r->left);
    if (r->need_hist && median > lo[q]) rk_add_pairs(&fs->g->avs[q], lo[q], median - 1, &r->left);
}

static int fg_allowable(void *src, uint64_t n, uint64_t left, int side)
{
    (void)side;
    rk *r = ((fg_source *)src)->r;
    return allowable(r, n, left, &r->left);
}

static int fg_groups_start(void *src, uint32_t q, const uint32_t *lo, const uint32_t *hi, ak_error *err)
{
    (void)err;
    fg_source *fs = src;
    ak_hist_clear(&fs->r->left);
    fs->av = &fs->g->av[q];
    fs->q = q;
    fs->code = lo[q];
    fs->hi_q = hi[q];
    fs->started = 0;
    return ANONKIT_OK;
}

static int fg_group_next(void *src, uint32_t *code, uint64_t *rows)
{
    fg_source *fs = src;
    const uint32_t c = av_next(fs->av, fs->started ? fs->code + 1 : fs->code, rows);
    if (c == UINT32_MAX || c > fs->hi_q) return 0;
    fs->started = 1;
    fs->code = *code = c;
    return 1;
}

static void fg_group_add(void *src, mdr_acc *acc)
{
    fg_source *fs = src;
    if (fs->r->need_hist) rk_add_pairs(&fs->g->avs[fs->q], fs->code, fs->code, &fs->r->left);
    if (acc->split == MDR_SPLIT_INFOGAIN) rk_add_pairs(&fs->g->avc[fs->q], fs->code, fs->code, acc->cls);
}

static int fg_children(void *src, uint32_t q, const hier_node *u, ak_error *err)
{
    (void)err;
    fg_source *fs = src;
    return child_rows(fs->r, fs->g, fs->node, q, u, fs->rows_in);
}

static uint64_t fg_child_rows(void *src, uint32_t child) { return ((fg_source *)src)->rows_in[child]; }

static void fg_child_add(void *src, uint32_t q, const hier_node *u, uint32_t child, mdr_acc *acc)
{
    fg_source *fs = src;
    const hier *h = fs->r->t->qi[q].h;
    const hier_node *ch = hier_node_at(h, hier_children(h)[u->first_child + child]);
    if (acc->split == MDR_SPLIT_INFOGAIN) rk_add_pairs(&fs->g->avc[q], ch->lo, ch->hi, acc->cls);
}

static int fg_children_hold(void *src, uint32_t q, const hier_node *u)
{
    fg_source *fs = src;
    return children_hold(fs->r, fs->g, q, u, fs->rows_in);
}

/* The node's classes, from the AVC pairs of QI 0. */
static void fg_whole_add(void *src, mdr_acc *acc)
{
    fg_source *fs = src;
    if (acc->split == MDR_SPLIT_INFOGAIN) rk_add_pairs(&fs->g->avc[0], fs->lo[0], fs->hi[0], acc->cls);
}

static const mdr_source_ops fg_source_ops = {
    .start = fg_start,
    .prepare = fg_prepare,
    .median = fg_median,
    .less_side = fg_less_side,
    .allowable = fg_allowable,
    .groups_start = fg_groups_start,
    .group_next = fg_group_next,
    .group_add = fg_group_add,
    .children = fg_children,
    .child_rows = fg_child_rows,
    .child_add = fg_child_add,
    .children_hold = fg_children_hold,
    .whole_add = fg_whole_add,
};

/* The split of an open node from its frequency groups, chosen by split.c as
 * the in-memory Mondrian chooses it from the node's rows (missing | present
 * first, then Median, or InfoGain unless InfoGain gave up above the node). 1 with *out (a categorical
 * split's child rows in rows_in), 0 when none is allowable, 2 when it needs
 * the counts of a QI the node's scan skipped (count_mask), < 0 on error. */
int rk_choose(rk *r, const rk_node *node, const uint32_t *lo, const uint32_t *hi, mdr_choice *out, uint64_t *rows_in,
              ak_error *err)
{
    fg_source fs = {.r = r, .g = node->fg, .node = node, .lo = lo, .hi = hi, .rows_in = rows_in};
    const mdr_chooser c = {.t = r->t,
                           .n = node->fg->n,
                           .k = r->m->k,
                           .split = r->infogain ? MDR_SPLIT_INFOGAIN : MDR_SPLIT_MEDIAN,
                           .min_gain = r->o->min_gain,
                           .need_sensitive = r->need_hist,
                           .cls_whole = &r->cls_whole,
                           .cls_left = &r->cls_left,
                           .cls_group = &r->cls_group,
                           .ops = &fg_source_ops,
                           .src = &fs};
    const int missing = mdr_choose_missing(&c, lo, hi, node->median_only, out, err);
    if (missing != 0) return missing;
    return mdr_choose(&c, lo, hi, node->median_only, out, err);
}

/* ------------------------------------------------------------ the tree over one partition */

void rk_tree_free(rk *r, rk_tree *tr)
{
    for (size_t i = 0; i < tr->count; i++) {
        rk_node *x = &tr->nodes[i];
        free(x->rlo);
        rk_fgroup_free(r, x->fg);
        rk_part_release(r, &x->part);
        spill_writer_free(&x->wt);
        spill_writer_free(&x->wp);
        rk_layout_free(&x->lay);
        free(x->shist);
    }
    free(tr->nodes);
    memset(tr, 0, sizeof *tr);
}

/* Appends an open node of region [rlo, rhi] and n rows; known_lo/known_hi
 * (NULL: none) bound its rows' codes, narrowing what its AV sets count. */
int rk_tree_add(rk *r, rk_tree *tr, const uint32_t *rlo, const uint32_t *rhi, const uint32_t *known_lo,
                const uint32_t *known_hi, uint64_t n, int median_only, ak_error *err)
{
    if (tr->count == tr->cap) {
        size_t cap = tr->cap ? 2 * tr->cap : 16;
        rk_node *p = realloc(tr->nodes, cap * sizeof *p);
        if (!p) return ak_err_nomem(err);
        tr->nodes = p;
        tr->cap = cap;
    }
    rk_node *x = &tr->nodes[tr->count];
    memset(x, 0, sizeof *x);
    x->part.tuples.fd = x->part.payload.fd = -1;
    x->kind = RK_OPEN;
    x->n = n;
    x->median_only = median_only;
    if (!(x->rlo = malloc(6 * (size_t)r->d * sizeof *x->rlo))) return ak_err_nomem(err);
    x->rhi = x->rlo + r->d;
    x->blo = x->rhi + r->d;
    x->bhi = x->blo + r->d;
    x->clo = x->bhi + r->d;
    x->chi = x->clo + r->d;
    memcpy(x->rlo, rlo, r->d * sizeof *rlo);
    memcpy(x->rhi, rhi, r->d * sizeof *rhi);
    for (uint32_t q = 0; q < r->d; q++) {
        x->clo[q] = known_lo && known_lo[q] > rlo[q] ? known_lo[q] : rlo[q];
        x->chi[q] = known_hi && known_hi[q] < rhi[q] ? known_hi[q] : rhi[q];
        if (x->clo[q] > x->chi[q]) x->clo[q] = x->chi[q]; /* (an empty node counts nothing) */
    }
    tr->count++;
    return ANONKIT_OK;
}

/* Turns node i into an inner node with the children of split s. */
int rk_make_children(rk *r, rk_tree *tr, size_t i, const mdr_choice *s, const uint32_t *lo, const uint32_t *hi,
                     const uint64_t *rows_in, ak_error *err)
{
    const uint32_t d = r->d, q = s->q;
    uint32_t plo[d], phi[d];
    memcpy(plo, tr->nodes[i].rlo, sizeof plo);
    memcpy(phi, tr->nodes[i].rhi, sizeof phi);
    const uint32_t rlo = plo[q], rhi = phi[q];
    const size_t first = tr->count;
    if (r->t->qi[q].kind == ATTR_NUMERIC) {
        const rk_node *x = &tr->nodes[i];
        const uint64_t left = av_sum(&x->fg->av[q], lo[q], s->cut - 1);
        const uint64_t n = x->n;
        phi[q] = s->cut - 1;
        AK_CHECK(rk_tree_add(r, tr, plo, phi, lo, hi, left, s->median_only, err));
        plo[q] = s->cut;
        phi[q] = rhi;
        AK_CHECK(rk_tree_add(r, tr, plo, phi, lo, hi, n - left, s->median_only, err));
    } else {
        const hier *h = r->t->qi[q].h;
        const hier_node *u = hier_node_at(h, s->node);
        const uint32_t nc = u->nchildren;
        uint8_t nonempty[nc];
        uint32_t child_lo[nc], child_hi[nc];
        for (uint32_t c = 0; c < nc; c++) nonempty[c] = rows_in[c] != 0;
        mdr_child_regions(h, u, nonempty, rlo, rhi, child_lo, child_hi); /* (those of the in-memory Mondrian) */
        for (uint32_t c = 0; c < nc; c++) {
            if (!rows_in[c]) continue;
            plo[q] = child_lo[c];
            phi[q] = child_hi[c];
            AK_CHECK(rk_tree_add(r, tr, plo, phi, lo, hi, rows_in[c], s->median_only, err));
        }
    }
    rk_node *x = &tr->nodes[i];
    x->kind = RK_INNER;
    x->q = q;
    x->first_child = first;
    x->nchildren = tr->count - first;
    return ANONKIT_OK;
}

/* The box of a node: the least and greatest codes its scan saw (it has rows). */
void rk_fg_box(const rk *r, const rk_node *x, uint32_t *lo, uint32_t *hi)
{
    memcpy(lo, x->fg->lo, r->d * sizeof *lo);
    memcpy(hi, x->fg->hi, r->d * sizeof *hi);
}
