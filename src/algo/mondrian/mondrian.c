/* mondrian.c — greedy top-down Mondrian partitioning ([LeFevre07] §1.2, [LeFevre06] "The
 * Greedy Partitioning Algorithm") with the Median, InfoGain and Regression
 * split criteria.
 *
 * Rows are copied into one row-major work array (QI codes, the sensitive
 * code when l-diversity needs it, row id) and every partition is a contiguous
 * slice of it, split in place like quicksort (small ones out of place); an
 * explicit stack replaces recursion.
 *
 * Median: the dimensions are tried in order of decreasing normalized range
 * (numeric: range of values over the table's range; categorical: leaves under
 * the lowest common ancestor over all leaves; ties to the lowest attribute
 * index), and the first allowable split is taken:
 *   numeric      lhs = {code <= median}; if that is not allowable, the other
 *                side of the median value, lhs = {code < median}; when an
 *                l-diversity or variance model rejects both, every threshold
 *                is swept and the allowable one nearest the median taken, so
 *                that the result is minimal for every monotone model, not
 *                only k-anonymity;
 *   categorical  the lowest common ancestor of the partition's values is
 *                specialized into its children (empty children hold no rows).
 * InfoGain / Regression: every allowable split of every attribute is scored
 * (numeric thresholds by scanning the cut points in code order; categorical
 * by the children of the lowest common ancestor) and the best taken: largest information gain on the class label, or least
 * sum of squared errors of the target. Ties go to the lowest attribute, then
 * the lowest threshold. Under InfoGain a partition whose best gain is below
 * min_gain continues, with its whole subtree, under Median ([LeFevre07] footnote 13).
 *
 * A partition with no allowable split becomes an equivalence class. Each
 * frame also carries its region, the part of the domain its node of the
 * partition tree covers, which becomes the class's recoding rule.
 *
 * The split is chosen by split.c, shared with Rothko-T, which reads the
 * partition's rows through row_source below (the median by radix selection,
 * groups of equal codes by sorting the partition on the attribute, children
 * by grouping its rows in place). This file: pushing partitions, the model's
 * judgment of a split's sides, applying a chosen split, processing a
 * partition and the run; the row primitives are in mondrian_rows.c, the
 * threads in mondrian_threads.c. */
#include "algo/mondrian/mondrian_internal.h"
#include "algo/mondrian/split_choose.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cpu.h"
#include "common/hugemem.h"
#include "common/stats.h"

void mdr_tree_free(mdr_tree *tr)
{
    free(tr->nodes);
    free(tr->regions);
    tr->nodes = NULL;
    tr->regions = NULL;
    tr->count = tr->cap = 0;
}

/* Growth phase: records the node of a partition about to be pushed, a child
 * of s->grow_parent (none for the root). */
static int tree_add(mdr *s, size_t begin, size_t end, const uint32_t *rlo, const uint32_t *rhi, int median_only,
                    uint32_t *id, ak_error *err)
{
    mdr_tree *tr = s->grow->tree;
    if (tr->count == tr->cap) {
        const size_t cap = tr->cap ? 2 * tr->cap : 64;
        mdr_tree_node *nodes = realloc(tr->nodes, cap * sizeof *nodes);
        if (!nodes) return ak_err_nomem(err);
        tr->nodes = nodes;
        uint32_t *regions = realloc(tr->regions, cap * 2 * (s->d ? s->d : 1) * sizeof *regions);
        if (!regions) return ak_err_nomem(err);
        tr->regions = regions;
        tr->cap = cap;
    }
    tr->d = s->d;
    const uint32_t parent = tr->count ? s->grow_parent : UINT32_MAX;
    tr->nodes[tr->count] = (mdr_tree_node){.parent = parent,
                                           .depth = parent == UINT32_MAX ? 0 : tr->nodes[parent].depth + 1,
                                           .split_q = UINT32_MAX,
                                           .median_only = median_only,
                                           .rows = end - begin};
    memcpy(tr->regions + 2 * (size_t)s->d * tr->count, rlo, s->d * sizeof *rlo);
    memcpy(tr->regions + 2 * (size_t)s->d * tr->count + s->d, rhi, s->d * sizeof *rhi);
    *id = (uint32_t)tr->count++;
    return ANONKIT_OK;
}

/* Pushes partition [begin, end) with its box (computed when box_in is NULL)
 * and its region [rlo, rhi]. */
int mdr_push(mdr *s, size_t begin, size_t end, const uint32_t *box_in, const uint32_t *rlo, const uint32_t *rhi,
             int median_only, ak_error *err)
{
    if (s->depth == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 256;
        mdr_frame *stack = realloc(s->stack, cap * sizeof *stack);
        if (!stack) return ak_err_nomem(err);
        s->stack = stack;
        uint32_t *boxes = realloc(s->boxes, cap * s->fw * sizeof *boxes);
        if (!boxes) return ak_err_nomem(err);
        s->boxes = boxes;
        s->cap = cap;
    }
    mdr_frame *f = &s->stack[s->depth];
    f->begin = begin;
    f->end = end;
    f->median_only = median_only;
    f->node = 0;
    if (s->grow) AK_CHECK(tree_add(s, begin, end, rlo, rhi, median_only, &f->node, err));
    uint32_t *box = s->boxes + s->depth * s->fw;
    if (box_in) memcpy(box, box_in, 2 * s->bw * sizeof *box);
    else mdr_compute_box(s, begin, end, box);
    memcpy(box + 2 * s->bw, rlo, s->d * sizeof *rlo);
    memcpy(box + 2 * s->bw + s->d, rhi, s->d * sizeof *rhi);
    s->depth++;
    /* The values at the box's ends, which ordering the dimensions reads (and
     * which mostly miss the cache), asked for now: the last partition pushed
     * is the next one split. */
    for (uint32_t q = 0; q < s->d; q++) {
        const table_qi *a = &s->t->qi[q];
        if (a->kind == ATTR_NUMERIC && box[q] != box[s->bw + q]) {
            __builtin_prefetch(a->values + box[q]);
            __builtin_prefetch(a->values + box[s->bw + q]);
        }
    }
    return ANONKIT_OK;
}

/* Adds a row to the sensitive statistics of one side of a split. */
static inline void side_add(mdr *s, ak_hist *h, model_moments *mo, const uint32_t *r)
{
    if (s->need_hist) ak_hist_add(h, r[s->d]);
    if (s->need_mom) model_moments_add(mo, s->t->sensitive_values[r[s->idw]]);
}

static void side_clear(ak_hist *h, model_moments *mo)
{
    ak_hist_clear(h);
    memset(mo, 0, sizeof *mo);
}

/* t-closeness, δ-disclosure, β-likeness (model/closeness.h) of a side with
 * histogram h, or (minus) of s->whole less h; 1 when the model has none. On
 * a sample (growth phase of Rothko-S) the sample's own distribution is
 * judged against the population's reference, and pruning repairs mistakes
 * on the population ([LeFevre07] §3.2), as for entropy l-diversity. */
static int side_dist_holds(mdr *s, uint64_t count, const ak_hist *h, int minus)
{
    if (!s->work) return 1;
    const size_t n = minus ? ak_hist_pairs_minus(&s->whole, h, s->codes, s->counts) : ak_hist_pairs(h, s->codes, s->counts);
    return model_dist_holds(&s->m->dist, s->m->ref, s->work, count, s->codes, s->counts, n);
}

/* Whether `count` rows with sensitive statistics (h, mo) satisfy the model;
 * the histogram counts are written to s->counts. */
static int side_holds(mdr *s, uint64_t count, const ak_hist *h, const model_moments *mo)
{
    if (s->grow) {
        const size_t ncounts = s->need_hist ? ak_hist_counts(h, s->counts) : 0;
        return sample_test_child(s->grow->test, count, s->counts, ncounts, s->counts_scratch, mo, s->exact,
                                 s->grow_children) &&
               side_dist_holds(s, count, h, 0);
    }
    if (count < s->m->k) return 0;
    if (s->need_mom && !model_variance_holds(s->m, mo, s->exact)) return 0;
    if (!s->need_hist) return 1;
    return model_holds(s->m, count, s->counts, ak_hist_counts(h, s->counts), s->counts_scratch) &&
           side_dist_holds(s, count, h, 0);
}

/* Growth phase: the test of the right side of a binary split, whose
 * histogram is the partition's (s->whole) less the left side's. */
static int right_side_holds(mdr *s, uint64_t count, const ak_hist *left, const model_moments *mo)
{
    const size_t ncounts = s->need_hist ? ak_hist_counts_minus(&s->whole, left, s->counts) : 0;
    return sample_test_child(s->grow->test, count, s->counts, ncounts, s->counts_scratch, mo, s->exact, 2) &&
           side_dist_holds(s, count, left, 1);
}

/* Whether splitting the partition (statistics s->whole, s->whole_mom; n rows)
 * into a left side of `left_count` rows with statistics (left, left_mom) and
 * the rest is allowable. */
static int split_allowable(mdr *s, size_t n, size_t left_count, const ak_hist *left, const model_moments *left_mom)
{
    const uint64_t k = s->m->k;
    if (s->grow) { /* both sides through the tests of [LeFevre07] §3.1 */
        if (left_count == 0 || left_count == n) return 0;
        s->grow_children = 2;
        if (!side_holds(s, left_count, left, left_mom)) return 0;
        const model_moments right_mom = model_moments_minus(&s->whole_mom, left_mom);
        return right_side_holds(s, n - left_count, left, &right_mom);
    }
    if (left_count < k || n - left_count < k || left_count == 0 || left_count == n) return 0;
    if (!s->need_sensitive) return 1;
    if (left->weight && (!model_dist_may_hold(&s->m->dist, s->m->ref, left_count, left->wsum) ||
                         !model_dist_may_hold(&s->m->dist, s->m->ref, n - left_count, s->whole.wsum - left->wsum)))
        return 0; /* the O(1) lower bound of t-closeness already fails (same answer, sooner) */
    if (s->need_mom) {
        const model_moments right = model_moments_minus(&s->whole_mom, left_mom);
        if (!model_variance_holds(s->m, left_mom, s->exact) || !model_variance_holds(s->m, &right, s->exact))
            return 0;
    }
    if (!s->need_hist) return 1;
    if (!model_holds(s->m, left_count, s->counts, ak_hist_counts(left, s->counts), s->counts_scratch)) return 0;
    if (!model_holds(s->m, n - left_count, s->counts, ak_hist_counts_minus(&s->whole, left, s->counts),
                     s->counts_scratch))
        return 0;
    return side_dist_holds(s, left_count, left, 0) && side_dist_holds(s, n - left_count, left, 1);
}

/* Adds the rank weights of the rows [begin, end) (positions through `order`
 * when not NULL) to h->wsum, for t-closeness's lower bound (ordered distance;
 * model_dist_may_hold). A loop of its own after the adders' loops, so that runs
 * without the model pay one test per call, not one per row. */
static void side_add_weights(const mdr *s, ak_hist *h, size_t begin, size_t end, const uint32_t *order)
{
    uint64_t sum = 0;
    for (size_t i = begin; i < end; i++) sum += h->weight[row_at(s, order ? order[i] : i)[s->d]];
    h->wsum += sum;
}

static void fill_whole(mdr *s, size_t begin, size_t end)
{
    side_clear(&s->whole, &s->whole_mom);
    for (size_t i = begin; i < end; i++) side_add(s, &s->whole, &s->whole_mom, row_at(s, i));
    if (s->whole.weight) side_add_weights(s, &s->whole, begin, end, NULL);
}

/* Whether the rows [begin, end) (one child of a split) satisfy the model's
 * sensitive requirements. */
static int rows_hold(mdr *s, size_t begin, size_t end)
{
    side_clear(&s->left, &s->left_mom);
    for (size_t i = begin; i < end; i++) side_add(s, &s->left, &s->left_mom, row_at(s, i));
    return side_holds(s, end - begin, &s->left, &s->left_mom);
}

/* Splits [begin, end) at lhs = {code(q) < cut} and pushes both halves, each
 * with its part of the region [rlo, rhi]. */
static int apply_numeric(mdr *s, size_t begin, size_t end, uint32_t q, uint32_t cut, const uint32_t *rlo,
                         const uint32_t *rhi, int median_only, ak_error *err)
{
    uint32_t left_box[2 * s->bw], right_box[2 * s->bw];
    const size_t mid = mdr_partition_rows(s, begin, end, q, cut, left_box, right_box);
    uint32_t part[s->d];
    s->grow_q = q;
    memcpy(part, rlo, sizeof part);
    part[q] = cut;
    AK_CHECK(mdr_push(s, mid, end, right_box, part, rhi, median_only, err));
    memcpy(part, rhi, sizeof part);
    part[q] = cut - 1;
    return mdr_push(s, begin, mid, left_box, rlo, part, median_only, err);
}

/* Index of the child (children sorted by code) that covers code. */
static uint32_t child_of(const hier *h, const hier_node *u, uint32_t code)
{
    const uint32_t *children = hier_children(h) + u->first_child;
    uint32_t lo = 0, hi = u->nchildren - 1;
    while (lo < hi) {
        uint32_t mid = (lo + hi + 1) / 2;
        if (hier_node_at(h, children[mid])->lo <= code) lo = mid;
        else hi = mid - 1;
    }
    return lo;
}

/* Groups the rows of [begin, end) by the child of node u their code of QI q
 * lies under (a stable counting sort), with the row count of each child in
 * s->child_rows. Returns 1, or 0 without moving anything when a non-empty
 * child has fewer than k rows (no such split is allowable). */
static int group_by_child(mdr *s, size_t begin, size_t end, uint32_t q, const hier_node *u, ak_error *err)
{
    const hier *h = s->t->qi[q].h;
    const uint32_t nc = u->nchildren;
    uint32_t *rows_in = s->child_rows;
    memset(rows_in, 0, nc * sizeof *rows_in);
    for (size_t i = begin; i < end; i++) rows_in[child_of(h, u, row_at(s, i)[q])]++;
    s->grow_children = 0;
    for (uint32_t c = 0; c < nc; c++) {
        if (rows_in[c] && rows_in[c] < s->m->k && !s->grow) return 0; /* (a sample's children go to the tests) */
        s->grow_children += rows_in[c] != 0;
    }
    const size_t n = end - begin;
    if (!s->moved && !(s->moved = malloc(s->capacity * s->w * sizeof *s->moved))) return ak_err_nomem(err);
    uint32_t *start = malloc((nc + 1) * sizeof *start);
    if (!start) return ak_err_nomem(err);
    start[0] = 0;
    for (uint32_t c = 0; c < nc; c++) start[c + 1] = start[c] + rows_in[c];
    for (size_t i = begin; i < end; i++) {
        const uint32_t *r = row_at(s, i);
        uint32_t c = child_of(h, u, r[q]);
        memcpy(s->moved + (size_t)start[c]++ * s->w, r, s->w * sizeof *r);
    }
    memcpy(row_at(s, begin), s->moved, n * s->w * sizeof *s->moved);
    free(start);
    return 1;
}

/* Pushes the non-empty children of node u (rows grouped by group_by_child,
 * the partition ending at row `end`).
 * Their regions in QI q are those of mdr_child_regions within the parent's
 * region [rlo, rhi]. */
static int push_children(mdr *s, size_t end, uint32_t q, const hier_node *u, const uint32_t *rlo,
                         const uint32_t *rhi, int median_only, ak_error *err)
{
    const uint32_t nc = u->nchildren;
    uint8_t nonempty[nc];
    uint32_t child_lo[nc], child_hi[nc];
    for (uint32_t c = 0; c < nc; c++) nonempty[c] = s->child_rows[c] != 0;
    mdr_child_regions(s->t->qi[q].h, u, nonempty, rlo[q], rhi[q], child_lo, child_hi);
    s->grow_q = q;
    uint32_t part_lo[s->d], part_hi[s->d];
    memcpy(part_lo, rlo, sizeof part_lo);
    memcpy(part_hi, rhi, sizeof part_hi);
    /* Push in reverse so that the first child is processed first. */
    size_t stop = end;
    for (uint32_t c = nc; c-- > 0;) {
        if (!s->child_rows[c]) continue;
        part_lo[q] = child_lo[c];
        part_hi[q] = child_hi[c];
        AK_CHECK(mdr_push(s, stop - s->child_rows[c], stop, NULL, part_lo, part_hi, median_only, err));
        stop -= s->child_rows[c];
    }
    return ANONKIT_OK;
}

/* Whether every non-empty child of node u (rows grouped by group_by_child
 * from row `begin`) satisfies the model; group_by_child has checked k, except
 * in the growth phase, where every child goes through the tests. */
static int children_hold(mdr *s, size_t begin, const hier_node *u)
{
    if (!s->need_sensitive && !s->grow) return 1;
    size_t at = begin;
    for (uint32_t c = 0; c < u->nchildren; c++) {
        if (s->child_rows[c] && !rows_hold(s, at, at + s->child_rows[c])) return 0;
        at += s->child_rows[c];
    }
    return 1;
}

/* ---- the split choice over rows (split.c reads them through these) ---- */

/* The row source's functions are inlined into the split choice
 * (split_choose.h) that calls them through row_source_ops: out of line they
 * cost the in-memory InfoGain on Adult 1.8 % more instructions. */
#define MDR_SOURCE_INLINE static inline __attribute__((always_inline))

/* The rows [begin, end) as a source of statistics for mdr_choose; the groups
 * of equal codes of one QI are runs of s->order (mdr_order_by_code). */
typedef struct row_source {
    mdr *s;
    size_t begin, end;
    uint32_t q;
    size_t next;             /* the first row (position in s->order) of the next group */
    size_t group, group_end; /* the group last returned */
} row_source;

/* Median or InfoGain / Regression: the sensitive statistics of the whole
 * partition, which every allowable split reads. */
MDR_SOURCE_INLINE int rows_start(void *src, int median, ak_error *err)
{
    (void)median;
    (void)err;
    row_source *rs = src;
    if (rs->s->need_sensitive) fill_whole(rs->s, rs->begin, rs->end);
    return ANONKIT_OK;
}

/* The median by radix selection (mdr_median_of), then one pass for the
 * sensitive statistics of both sides of it. */
MDR_SOURCE_INLINE int rows_median(void *src, uint32_t q, const uint32_t *lo, const uint32_t *hi, uint32_t *median,
                       uint64_t *below, uint64_t *equal, ak_error *err)
{
    (void)err;
    row_source *rs = src;
    mdr *s = rs->s;
    size_t less, eq;
    const uint32_t m = mdr_median_of(s, rs->begin, rs->end, q, lo[q], hi[q], &less, &eq);
    if (s->need_sensitive) {
        side_clear(&s->left, &s->left_mom);
        side_clear(&s->less, &s->less_mom);
        for (size_t i = rs->begin; i < rs->end; i++) {
            const uint32_t *r = row_at(s, i);
            if (r[q] < m) {
                side_add(s, &s->less, &s->less_mom, r);
                side_add(s, &s->left, &s->left_mom, r);
            } else if (r[q] == m) {
                side_add(s, &s->left, &s->left_mom, r);
            }
        }
        if (s->left.weight) /* the rank sums of both sides (model_dist_may_hold) */
            for (size_t i = rs->begin; i < rs->end; i++) {
                const uint32_t *r = row_at(s, i);
                const uint32_t w = s->left.weight[r[s->d]];
                if (r[q] < m) s->less.wsum += w;
                if (r[q] <= m) s->left.wsum += w;
            }
    }
    *median = m;
    *below = less;
    *equal = eq;
    return ANONKIT_OK;
}

MDR_SOURCE_INLINE void rows_less_side(void *src, uint32_t q, const uint32_t *lo, uint32_t median)
{
    (void)src, (void)q, (void)lo, (void)median; /* rows_median filled it */
}

MDR_SOURCE_INLINE int rows_allowable(void *src, uint64_t n, uint64_t left, int side)
{
    mdr *s = ((row_source *)src)->s;
    return side == MDR_SIDE_LESS ? split_allowable(s, n, left, &s->less, &s->less_mom)
                                 : split_allowable(s, n, left, &s->left, &s->left_mom);
}

MDR_SOURCE_INLINE int rows_groups_start(void *src, uint32_t q, const uint32_t *lo, const uint32_t *hi, ak_error *err)
{
    row_source *rs = src;
    AK_CHECK(mdr_order_by_code(rs->s, rs->begin, rs->end, q, lo[q], hi[q], err));
    side_clear(&rs->s->left, &rs->s->left_mom);
    rs->q = q;
    rs->next = 0;
    return ANONKIT_OK;
}

MDR_SOURCE_INLINE int rows_group_next(void *src, uint32_t *code, uint64_t *rows)
{
    row_source *rs = src;
    const mdr *s = rs->s;
    const size_t n = rs->end - rs->begin;
    if (rs->next >= n) return 0;
    const uint32_t c = row_at(s, s->order[rs->next])[rs->q];
    size_t j = rs->next + 1;
    while (j < n && row_at(s, s->order[j])[rs->q] == c) j++;
    rs->group = rs->next;
    rs->group_end = rs->next = j;
    *code = c;
    *rows = j - rs->group;
    return 1;
}

/* A row's class or target into acc. */
static inline void acc_add_row(const mdr *s, mdr_acc *acc, const uint32_t *r)
{
    if (acc->split == MDR_SPLIT_INFOGAIN) {
        ak_hist_add(acc->cls, s->t->class_codes[r[s->idw]]);
    } else if (acc->split == MDR_SPLIT_REGRESSION) {
        const long double y = s->t->target_values[r[s->idw]];
        acc->t1 += y;
        acc->t2 += y * y;
    }
}

MDR_SOURCE_INLINE void rows_group_add(void *src, mdr_acc *acc)
{
    row_source *rs = src;
    mdr *s = rs->s;
    for (size_t i = rs->group; i < rs->group_end; i++) {
        const uint32_t *r = row_at(s, s->order[i]);
        side_add(s, &s->left, &s->left_mom, r);
        acc_add_row(s, acc, r);
    }
    if (s->left.weight) side_add_weights(s, &s->left, rs->group, rs->group_end, s->order);
}

MDR_SOURCE_INLINE int rows_children(void *src, uint32_t q, const hier_node *u, ak_error *err)
{
    row_source *rs = src;
    return group_by_child(rs->s, rs->begin, rs->end, q, u, err);
}

MDR_SOURCE_INLINE uint64_t rows_child_rows(void *src, uint32_t child) { return ((row_source *)src)->s->child_rows[child]; }

/* The classes or targets of the rows of one child (grouped by rows_children). */
MDR_SOURCE_INLINE void rows_child_add(void *src, uint32_t q, const hier_node *u, uint32_t child, mdr_acc *acc)
{
    (void)q, (void)u;
    row_source *rs = src;
    const mdr *s = rs->s;
    size_t at = rs->begin;
    for (uint32_t c = 0; c < child; c++) at += s->child_rows[c];
    for (size_t i = at; i < at + s->child_rows[child]; i++) acc_add_row(s, acc, row_at(s, i));
}

MDR_SOURCE_INLINE int rows_children_hold(void *src, uint32_t q, const hier_node *u)
{
    (void)q;
    row_source *rs = src;
    return children_hold(rs->s, rs->begin, u);
}

MDR_SOURCE_INLINE void rows_whole_add(void *src, mdr_acc *acc)
{
    row_source *rs = src;
    for (size_t i = rs->begin; i < rs->end; i++) acc_add_row(rs->s, acc, row_at(rs->s, i));
}

static const mdr_source_ops row_source_ops = {
    .start = rows_start,
    .median = rows_median,
    .less_side = rows_less_side,
    .allowable = rows_allowable,
    .groups_start = rows_groups_start,
    .group_next = rows_group_next,
    .group_add = rows_group_add,
    .children = rows_children,
    .child_rows = rows_child_rows,
    .child_add = rows_child_add,
    .children_hold = rows_children_hold,
    .whole_add = rows_whole_add,
};

/* Missing values (docs/hierarchies.md): a partition whose box holds both the
 * missing code 0 and present values of a numeric QI is split missing |
 * present before anything else, when that split is allowable. Returns 1
 * when split, 0 when there is no such split to make. */
static int split_missing(mdr *s, size_t begin, size_t end, const uint32_t *lo, const uint32_t *hi,
                         const uint32_t *rlo, const uint32_t *rhi, int median_only, ak_error *err)
{
    for (uint32_t q = 0; q < s->d; q++) {
        const table_qi *a = &s->t->qi[q];
        if (a->kind != ATTR_NUMERIC || !a->has_missing || lo[q] != 0 || hi[q] == 0) continue;
        fill_whole(s, begin, end);
        side_clear(&s->left, &s->left_mom);
        size_t left = 0;
        for (size_t i = begin; i < end; i++) {
            const uint32_t *r = row_at(s, i);
            if (r[q] == 0) {
                side_add(s, &s->left, &s->left_mom, r);
                left++;
            }
        }
        if (!split_allowable(s, end - begin, left, &s->left, &s->left_mom)) continue;
        AK_CHECK(apply_numeric(s, begin, end, q, 1, rlo, rhi, median_only, err));
        return 1;
    }
    return 0;
}

/* Chooses the split of partition [begin, end) with box [lo, hi] (split.c)
 * and applies it: pushes the children with their parts of the region
 * [rlo, rhi]. Returns 1 when split, 0 when no split is allowable. */
static int split_partition(mdr *s, size_t begin, size_t end, const uint32_t *lo, const uint32_t *hi,
                           const uint32_t *rlo, const uint32_t *rhi, int median_only, ak_error *err)
{
    row_source rs = {.s = s, .begin = begin, .end = end};
    const mdr_chooser c = {.t = s->t,
                           .n = end - begin,
                           .k = s->m->k,
                           .split = s->split,
                           .min_gain = s->min_gain,
                           .need_sensitive = s->need_sensitive,
                           .score_small_sides = s->grow != NULL,
                           .cls_whole = &s->cls_whole,
                           .cls_left = &s->cls_left,
                           .cls_group = &s->cls_group,
                           .ops = &row_source_ops,
                           .src = &rs};
    const int missing = split_missing(s, begin, end, lo, hi, rlo, rhi, median_only, err);
    if (missing != 0) return missing;
    mdr_choice choice;
    const int found = mdr_choose(&c, lo, hi, median_only, &choice, err);
    if (found <= 0) return found;
    if (s->t->qi[choice.q].kind == ATTR_NUMERIC) {
        AK_CHECK(apply_numeric(s, begin, end, choice.q, choice.cut, rlo, rhi, choice.median_only, err));
        return 1;
    }
    /* (the rows are grouped by the chosen QI's children: the choice's last grouping) */
    const hier_node *u = hier_node_at(s->t->qi[choice.q].h, choice.node);
    AK_CHECK(push_children(s, end, choice.q, u, rlo, rhi, choice.median_only, err));
    return 1;
}

/* Growth phase: whether the limits let node f be split at all. */
static int grow_may_split(const mdr *s, const mdr_frame *f)
{
    const mdr_grow *g = s->grow;
    const mdr_tree_node *x = &g->tree->nodes[f->node];
    if (g->stop_rows && x->rows <= g->stop_rows) return 0;
    if (g->max_depth && x->depth >= g->max_depth) return 0;
    return 1;
}

/* Makes room in class_begin for ids below `classes`. */
int mdr_reserve_class_rows(mdr *s, size_t classes, ak_error *err)
{
    if (classes <= s->class_begin_cap) return ANONKIT_OK;
    size_t *grown = ak_huge_realloc(s->class_begin, classes * sizeof *grown);
    if (!grown) return ak_err_nomem(err);
    s->class_begin = grown;
    s->class_begin_cap = classes;
    return ANONKIT_OK;
}

/* Records that the class with id (in s->out) starts at work row begin. */
int mdr_note_class_rows(mdr *s, uint32_t id, size_t begin, ak_error *err)
{
    if (id >= s->class_begin_cap) {
        size_t cap = s->class_begin_cap ? 2 * s->class_begin_cap : 1024;
        while (cap <= id) cap *= 2;
        size_t *grown = ak_huge_realloc(s->class_begin, cap * sizeof *grown);
        if (!grown) return ak_err_nomem(err);
        s->class_begin = grown;
        s->class_begin_cap = cap;
    }
    s->class_begin[id] = begin;
    return ANONKIT_OK;
}

/* Rows of classes a worker makes before it adds them to the run's progress. */
#define MDR_PROGRESS_ROWS 16384

/* Adds the rows of the classes made so far to the progress (the first
 * worker may call the callback, helpers only add); fails once cancelled. */
static int count_progress(mdr *s, ak_error *err)
{
    const uint64_t rows = s->progress_rows;
    s->progress_rows = 0;
    return s->lent ? ak_progress_worker_add(s->progress, rows, 0, err) : ak_progress_add(s->progress, rows, 0, err);
}

/* Splits partition f (its box and region in `frame`), or makes it a class.
 * In the growth phase a split that would leave more than max_leaves leaves
 * is taken back: its children are the last frames pushed. */
static int process_frame(mdr *s, const mdr_frame *f, const uint32_t *frame, ak_error *err)
{
    const uint32_t *lo = frame, *hi = frame + s->bw, *rlo = frame + 2 * s->bw, *rhi = rlo + s->d;
    int split = 0;
    if (s->progress) AK_CHECK(ak_progress_check(s->progress, err)); /* cancelled: give up before the next split */
    if (!s->grow || grow_may_split(s, f)) {
        const size_t depth_before = s->depth, nodes_before = s->grow ? s->grow->tree->count : 0;
        s->grow_parent = f->node;
        split = split_partition(s, f->begin, f->end, lo, hi, rlo, rhi, f->median_only, err);
        if (split < 0) return split;
        if (split && s->grow) {
            const size_t leaves = s->grow_leaves + (s->depth - s->grow_head);
            if (s->grow->max_leaves && leaves > s->grow->max_leaves) {
                s->depth = depth_before;
                s->grow->tree->count = nodes_before;
                split = 0;
            } else {
                s->grow->tree->nodes[f->node].split_q = s->grow_q;
            }
        }
    }
    if (split) return ANONKIT_OK;
    s->grow_leaves++;
    uint32_t id;
    AK_CHECK(partition_add_class_in(s->out, lo, hi, rlo, rhi, f->end - f->begin, &id, err));
    /* Its rows, work rows [begin, end), are not moved again: their class ids
     * are written at the end (mdr_run_with), when every class's id is final. */
    AK_CHECK(mdr_note_class_rows(s, id, f->begin, err));
    if (s->progress && (s->progress_rows += f->end - f->begin) >= MDR_PROGRESS_ROWS) AK_CHECK(count_progress(s, err));
    return ANONKIT_OK;
}

/* Splits the partition on top of the stack, or makes it a class. */
int mdr_process_top(mdr *s, ak_error *err)
{
    s->depth--;
    const mdr_frame f = s->stack[s->depth];
    uint32_t frame[s->fw];
    memcpy(frame, s->boxes + s->depth * s->fw, sizeof frame);
    return process_frame(s, &f, frame, err);
}

/* The growth phase: frames are taken first in, first out, so the tree grows
 * breadth-first and a leaf limit cuts it evenly. */
static int run_grow(mdr *s, ak_error *err)
{
    uint32_t frame[s->fw];
    while (s->grow_head < s->depth) {
        const mdr_frame f = s->stack[s->grow_head];
        memcpy(frame, s->boxes + s->grow_head * s->fw, sizeof frame);
        s->grow_head++;
        AK_CHECK(process_frame(s, &f, frame, err));
    }
    return ANONKIT_OK;
}


int mdr_parse_split(const char *text, mdr_split *out)
{
    if (!strcmp(text, "median")) *out = MDR_SPLIT_MEDIAN;
    else if (!strcmp(text, "infogain")) *out = MDR_SPLIT_INFOGAIN;
    else if (!strcmp(text, "regression")) *out = MDR_SPLIT_REGRESSION;
    else return -1;
    return 0;
}

const char *mdr_split_name(mdr_split split)
{
    switch (split) {
    case MDR_SPLIT_INFOGAIN: return "infogain";
    case MDR_SPLIT_REGRESSION: return "regression";
    case MDR_SPLIT_MEDIAN: break;
    }
    return "median";
}

int mdr_run(const table *t, const model *m, unsigned threads, partition *out, ak_error *err)
{
    const mdr_options options = {.threads = threads, .split = MDR_SPLIT_MEDIAN};
    return mdr_run_with(t, m, &options, out, err);
}

int mdr_check_inputs(const table *t, const model *m, const mdr_options *options, ak_error *err)
{
    if (m->l > 0 && t->sensitive_column < 0)
        return ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0, "l-diversity needs a sensitive column (--sensitive)");
    if (m->variance > 0 && !t->sensitive_numeric)
        return ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0,
                          "variance diversity needs a numeric sensitive column (--sensitive)");
    if (model_has_dist(m) && (t->sensitive_column < 0 || !m->ref))
        return ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0,
                          "t-closeness, delta-disclosure and beta-likeness need a sensitive column (--sensitive)");
    if (options->split == MDR_SPLIT_INFOGAIN && t->class_column < 0)
        return ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0, "--split infogain needs a class label column (--class)");
    if (options->split == MDR_SPLIT_REGRESSION && t->target_column < 0)
        return ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0, "--split regression needs a numeric target column (--target)");
    return ANONKIT_OK;
}


int mdr_run_with(const table *t, const model *m, const mdr_options *options, partition *out, ak_error *err)
{
    AK_CHECK(mdr_check_inputs(t, m, options, err));
    mdr s;
    memset(&s, 0, sizeof s);
    s.t = t;
    s.m = m;
    s.out = out;
    s.class_of = out->class_of;
    s.threads = options->threads ? options->threads : 1;
    s.grow = options->grow;
    if (s.grow) s.threads = 1;
    s.progress = options->progress;
    s.split = options->split;
    s.min_gain = options->min_gain;
    s.d = t->nqi;
    s.need_hist = m->l > 0 || model_has_dist(m);
    s.idw = s.need_hist ? s.d + 1 : s.d; /* the sensitive code only where histograms need it (need_hist) */
    s.w = s.idw + 1;
    s.bw = (s.d + 7) / 8 * 8;
    s.fw = 2 * s.bw + 2 * s.d;
#if MDR_HAVE_AVX2
    s.simd = !options->no_simd && s.bw / 8 <= MDR_MAX_CHUNKS && ak_cpu_has(AK_CPU_AVX2);
#endif
    s.n = t->nrows;
    s.need_mom = m->variance > 0;
    s.need_sensitive = s.need_hist || s.need_mom;
    s.sensitive_domain = s.need_hist ? t->sensitive_dict.count : 1;
    s.class_domain = s.split == MDR_SPLIT_INFOGAIN ? t->class_dict.count : 1;
    s.exact = 1;
    for (size_t i = 0; s.need_mom && s.exact && i < t->nrows; i++)
        s.exact = model_value_is_small_integer(t->sensitive_values[i]);
    for (uint32_t q = 0; q < s.d; q++) {
        const table_qi *a = &t->qi[q];
        if (a->kind == ATTR_CATEGORICAL)
            for (uint32_t node = 0; node < hier_node_count(a->h); node++)
                if (hier_node_at(a->h, node)->nchildren > s.max_children)
                    s.max_children = hier_node_at(a->h, node)->nchildren;
    }
    int rc = mdr_worker_alloc(&s, s.n, err);
    s.rows = ak_huge_malloc(((s.n ? s.n : 1) * s.w + s.bw) * sizeof *s.rows); /* + padding read by the kernels */
    uint32_t *root_lo = calloc(s.d ? s.d : 1, sizeof *root_lo), *root_hi = calloc(s.d ? s.d : 1, sizeof *root_hi);
    uint32_t *root_box = NULL;
    if (rc == ANONKIT_OK && (!s.rows || !root_lo || !root_hi)) rc = ak_err_nomem(err);
    if (rc < 0) goto done;
    for (uint32_t q = 0; q < s.d; q++) {
        const table_qi *a = &t->qi[q];
        root_hi[q] = a->ncodes ? a->ncodes - 1 : 0; /* the root's region is the whole domain */
    }
    if (options->root_rlo && options->root_rhi) {
        memcpy(root_lo, options->root_rlo, s.d * sizeof *root_lo);
        memcpy(root_hi, options->root_rhi, s.d * sizeof *root_hi);
    }
    memset(s.rows + s.n * s.w, 0, s.bw * sizeof *s.rows);
    if (!(root_box = malloc(2 * s.bw * sizeof *root_box))) {
        rc = ak_err_nomem(err);
        goto done;
    }
    mdr_fill_all_rows(&s, root_box);
    /* The whole table must satisfy the model, or no partitioning can. */
    fill_whole(&s, 0, s.n);
    char why[256];
    why[0] = '\0';
    int eligible = model_explain(m, s.n, s.counts, ak_hist_counts(&s.whole, s.counts), s.counts_scratch, why, sizeof why);
    if (eligible && s.work) {
        const size_t npairs = ak_hist_pairs(&s.whole, s.codes, s.counts);
        eligible = model_dist_explain(&m->dist, m->ref, s.work, s.n, s.codes, s.counts, npairs, why, sizeof why);
    }
    if (eligible && s.need_mom && !model_variance_holds(m, &s.whole_mom, s.exact)) {
        eligible = 0;
        snprintf(why, sizeof why, "variance of the sensitive values %.6Lg < %g",
                 model_moments_variance(&s.whole_mom, s.exact), m->variance);
    }
    if (!eligible && !s.grow) { /* (a sample need not: the tests judge its population) */
        rc = ak_err_set(err, ANONKIT_E_INELIGIBLE, NULL, 0, 0,
                        "the whole table does not satisfy the privacy model (%s), so no anonymization can", why);
        goto done;
    }
    if (s.n == 0) goto done;
    const size_t first_class = out->nclasses;
    /* at most n / k classes, each of at least k rows: room for them at once */
    if ((rc = partition_reserve(out, first_class + s.n / (m->k > 1 ? m->k : 1) + 1, err)) < 0) goto done;
    if ((rc = mdr_reserve_class_rows(&s, first_class + s.n / (m->k > 1 ? m->k : 1) + 1, err)) < 0) goto done;
    if ((rc = mdr_push(&s, 0, s.n, root_box, root_lo, root_hi, options->root_median_only, err)) < 0) goto done;
    rc = s.grow ? run_grow(&s, err) : mdr_run_worker(&s, err);
    if (rc == ANONKIT_OK) mdr_write_all_classes(&s, first_class);
done:
    mdr_worker_free(&s);
    free(s.rows);
    free(root_lo);
    free(root_hi);
    free(root_box);
    return rc;
}
