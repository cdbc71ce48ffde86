/* split_choose.h — the one split choice of the Mondrian family: the Median,
 * InfoGain and Regression criteria ([LeFevre07] §1.2; the scalable paper's split
 * criteria, LeFevre & DeWitt), their order of dimensions, medians, threshold
 * sweeps, scores, tolerances and ties, over a source of statistics
 * (mdr_source_ops). The in-memory Mondrian (mondrian.c) feeds it from its
 * rows sorted or grouped in place; Rothko-T (rothko_fgroup.c) from the
 * frequency groups of a node ([LeFevre07] §2). Both thus choose the same split for
 * the same rows by construction.
 *
 * Median: the dimensions by decreasing normalized range (table_widest_first),
 * the first allowable split:
 *   numeric      lhs = {code <= median}; if that is not allowable, lhs =
 *                {code < median}; when a sensitive model rejects both, every
 *                threshold is swept and the allowable one nearest the median
 *                taken (its left side closest to half; the first such);
 *   categorical  the lowest common ancestor of the values specialized into
 *                its children.
 * InfoGain / Regression: every allowable split of every attribute scored,
 * the best taken (largest information gain, least squared error); a score
 * replaces the best only when larger by the tolerance, so ties go to the
 * lowest attribute, then the lowest threshold. Under InfoGain a best gain
 * below min_gain sends the partition and its subtree to Median ([LeFevre07]
 * footnote 13).
 *
 * Every function here is static inline and this header is included by the
 * two sources of statistics (mondrian.c, rothko_fgroup.c): each gets its own
 * copy of the one choice, compiled with its source's functions (a constant
 * mdr_source_ops) called directly and inlined rather than through pointers,
 * which the in-memory Mondrian's many small partitions would pay for. */
#ifndef AK_MDR_SPLIT_CHOOSE_H
#define AK_MDR_SPLIT_CHOOSE_H

#include "algo/mondrian/mondrian_internal.h"

#include <string.h>

/* Forced inline: GCC left the choice out of line at -O2, and then called the
 * source's statistics through the pointers (about 1 % more instructions for
 * the in-memory Mondrian on 200,000 generated rows). */
#define MDR_CHOOSE_INLINE static inline __attribute__((always_inline))

/* What a partition's children are scored against. */
typedef struct parent_stats {
    double weighted_entropy; /* InfoGain: n H(C) in bits = n log n - sum P_c log P_c */
    double xlogx;            /* InfoGain: sum P_c log P_c */
    long double t1, t2, sse; /* Regression: sums of the target, its squares; squared error */
    double tolerance;        /* a score must beat the best by this much to replace it */
} parent_stats;

MDR_CHOOSE_INLINE void parent_stats_fill(const mdr_chooser *c, parent_stats *ps)
{
    const uint64_t n = c->n;
    memset(ps, 0, sizeof *ps);
    mdr_acc acc = {.split = c->split, .cls = c->cls_whole};
    if (c->split == MDR_SPLIT_INFOGAIN) {
        ak_hist_clear(c->cls_whole);
        c->ops->whole_add(c->src, &acc);
        ps->xlogx = ak_hist_xlogx(c->cls_whole);
        ps->weighted_entropy = ak_xlog2x((double)n) - ps->xlogx;
        ps->tolerance = 1e-12;
    } else {
        c->ops->whole_add(c->src, &acc);
        ps->t1 = acc.t1;
        ps->t2 = acc.t2;
        ps->sse = ps->t2 - ps->t1 * ps->t1 / (long double)n;
        ps->tolerance = 1e-12 * (ps->sse > 1 ? (double)ps->sse : 1.0);
    }
}

MDR_CHOOSE_INLINE int beats(const mdr_choice *best, const parent_stats *ps, double score)
{
    return !best->found || score > best->score + ps->tolerance;
}

/* Every threshold of numeric QI q, when a sensitive model rejected both
 * sides of the median: 1 with the cut (lhs = code < cut) of the allowable
 * split whose left side is closest to half, 0 if none is, < 0 on error. */
MDR_CHOOSE_INLINE int sweep_thresholds(const mdr_chooser *c, uint32_t q, const uint32_t *lo, const uint32_t *hi, uint32_t *cut,
                            ak_error *err)
{
    const mdr_source_ops *ops = c->ops;
    const uint64_t n = c->n;
    AK_CHECK(ops->groups_start(c->src, q, lo, hi, err));
    mdr_acc acc = {.split = MDR_SPLIT_MEDIAN};
    uint64_t left = 0, best = 0, best_distance = UINT64_MAX, rows, next_rows;
    uint32_t code, next;
    for (int more = ops->group_next(c->src, &code, &rows); more; code = next, rows = next_rows) {
        ops->group_add(c->src, &acc);
        left += rows;
        if (!(more = ops->group_next(c->src, &next, &next_rows))) break;
        const uint64_t distance = 2 * left > n ? 2 * left - n : n - 2 * left;
        if (distance < best_distance && ops->allowable(c->src, n, left, MDR_SIDE_LEFT)) {
            best = left;
            best_distance = distance;
            *cut = next;
        }
    }
    return best ? 1 : 0;
}

/* The Median split of numeric QI q: 1 with *cut, 0 when none is allowable. */
MDR_CHOOSE_INLINE int median_numeric(const mdr_chooser *c, uint32_t q, const uint32_t *lo, const uint32_t *hi, uint32_t *cut,
                          ak_error *err)
{
    const mdr_source_ops *ops = c->ops;
    uint32_t median;
    uint64_t below, equal;
    AK_CHECK(ops->median(c->src, q, lo, hi, &median, &below, &equal, err));
    if (ops->allowable(c->src, c->n, below + equal, MDR_SIDE_LEFT)) {
        *cut = median + 1; /* lhs: code <= median */
        return 1;
    }
    ops->less_side(c->src, q, lo, median);
    if (ops->allowable(c->src, c->n, below, MDR_SIDE_LESS)) {
        *cut = median; /* lhs: code < median */
        return 1;
    }
    if (!c->need_sensitive) return 0; /* under k-anonymity alone no other threshold can be allowable */
    return sweep_thresholds(c, q, lo, hi, cut, err);
}

/* The Median criterion: the first allowable split in order of decreasing
 * normalized range. 1 with *out, 0 when none is allowable, 2 when it needs a
 * QI the source did not count, < 0 on error. */
MDR_CHOOSE_INLINE int choose_median(const mdr_chooser *c, const uint32_t *lo, const uint32_t *hi, int median_only,
                         mdr_choice *out, ak_error *err)
{
    const mdr_source_ops *ops = c->ops;
    const uint32_t d = c->t->nqi;
    uint32_t order[d ? d : 1];
    const uint32_t ncand = table_widest_first(c->t, lo, hi, order);
    if (ncand && ops->start) AK_CHECK(ops->start(c->src, 1, err));
    for (uint32_t i = 0; i < ncand; i++) {
        const uint32_t q = order[i];
        if (ops->prepare) {
            const int ready = ops->prepare(c->src, q, err);
            if (ready <= 0) return ready < 0 ? ready : 2; /* 2: count the QI and choose again */
        }
        if (c->t->qi[q].kind == ATTR_NUMERIC) {
            uint32_t cut = 0;
            const int found = median_numeric(c, q, lo, hi, &cut, err);
            if (found < 0) return found;
            if (!found) continue;
            *out = (mdr_choice){.found = 1, .q = q, .cut = cut, .median_only = median_only};
            return 1;
        }
        const hier *h = c->t->qi[q].h;
        const uint32_t node = hier_lca(h, lo[q], hi[q]);
        const hier_node *u = hier_node_at(h, node);
        const int grouped = ops->children(c->src, q, u, err);
        if (grouped < 0) return grouped;
        if (!grouped || !ops->children_hold(c->src, q, u)) continue;
        *out = (mdr_choice){.found = 1, .q = q, .node = node, .median_only = median_only};
        return 1;
    }
    return 0;
}

/* Scores every threshold of numeric QI q — its groups of equal codes in
 * ascending order, each cut point between two of them evaluated with running
 * class counts (InfoGain) or target sums (Regression) — and records the best
 * allowable one in *best. */
MDR_CHOOSE_INLINE int score_numeric(const mdr_chooser *c, uint32_t q, const uint32_t *lo, const uint32_t *hi,
                         const parent_stats *ps, mdr_choice *best, ak_error *err)
{
    const mdr_source_ops *ops = c->ops;
    const uint64_t n = c->n, k = c->k;
    const int infogain = c->split == MDR_SPLIT_INFOGAIN;
    AK_CHECK(ops->groups_start(c->src, q, lo, hi, err));
    ak_hist_clear(c->cls_left);
    mdr_acc acc = {.split = c->split, .cls = c->cls_group};
    double left_xlogx = 0, right_xlogx = ps->xlogx; /* sum L_c log L_c, sum R_c log R_c */
    uint64_t i = 0, rows, next_rows;
    uint32_t code, next;
    for (int more = ops->group_next(c->src, &code, &rows); more; code = next, rows = next_rows) {
        ops->group_add(c->src, &acc);
        i += rows;
        if (infogain) { /* move this code's rows from right to left, class by class */
            ak_hist *g = c->cls_group, *l = c->cls_left;
            ak_hist_sort_touched(g);
            for (size_t x = 0; x < g->ntouched; x++) {
                const uint32_t cl = g->touched[x];
                const double moved = g->count[cl], had = l->count[cl];
                const double all = c->cls_whole->count[cl];
                left_xlogx += ak_xlog2x(had + moved) - ak_xlog2x(had);
                right_xlogx += ak_xlog2x(all - had - moved) - ak_xlog2x(all - had);
                hist_add_n(l, cl, g->count[cl]);
            }
            ak_hist_clear(g);
        }
        if (!(more = ops->group_next(c->src, &next, &next_rows))) break; /* (i == n) */
        const uint64_t nl = i, nr = n - i;
        if ((nl < k || nr < k) && !c->score_small_sides) continue;
        double score;
        if (infogain) {
            const double children = ak_xlog2x((double)nl) - left_xlogx + ak_xlog2x((double)nr) - right_xlogx;
            score = (ps->weighted_entropy - children) / (double)n;
        } else {
            const long double r1 = ps->t1 - acc.t1, r2 = ps->t2 - acc.t2;
            const long double sse = (acc.t2 - acc.t1 * acc.t1 / (long double)nl) + (r2 - r1 * r1 / (long double)nr);
            score = (double)(ps->sse - sse);
        }
        if (beats(best, ps, score) && ops->allowable(c->src, n, nl, MDR_SIDE_LEFT))
            *best = (mdr_choice){.found = 1, .q = q, .cut = next, .score = score};
    }
    ak_hist_clear(c->cls_left);
    return ANONKIT_OK;
}

/* Scores the split of categorical QI q into the children of its lowest
 * common ancestor and records it in *best when it is allowable and better. */
MDR_CHOOSE_INLINE int score_categorical(const mdr_chooser *c, uint32_t q, const uint32_t *lo, const uint32_t *hi,
                             const parent_stats *ps, mdr_choice *best, ak_error *err)
{
    const mdr_source_ops *ops = c->ops;
    const hier *h = c->t->qi[q].h;
    const uint32_t node = hier_lca(h, lo[q], hi[q]);
    const hier_node *u = hier_node_at(h, node);
    const int grouped = ops->children(c->src, q, u, err);
    if (grouped <= 0) return grouped;
    const int infogain = c->split == MDR_SPLIT_INFOGAIN;
    double children = 0;
    long double sse = 0;
    for (uint32_t ch = 0; ch < u->nchildren; ch++) {
        const uint64_t rows = ops->child_rows(c->src, ch);
        if (!rows) continue;
        mdr_acc acc = {.split = c->split, .cls = c->cls_group};
        if (infogain) {
            ak_hist_clear(c->cls_group);
            ops->child_add(c->src, q, u, ch, &acc);
            children += ak_xlog2x((double)rows) - ak_hist_xlogx(c->cls_group);
            ak_hist_clear(c->cls_group);
        } else {
            ops->child_add(c->src, q, u, ch, &acc);
            sse += acc.t2 - acc.t1 * acc.t1 / (long double)rows;
        }
    }
    const double score = infogain ? (ps->weighted_entropy - children) / (double)c->n : (double)(ps->sse - sse);
    if (!beats(best, ps, score)) return ANONKIT_OK;
    if (!ops->children_hold(c->src, q, u)) return ANONKIT_OK;
    *best = (mdr_choice){.found = 1, .q = q, .node = node, .score = score};
    return ANONKIT_OK;
}

/* InfoGain / Regression: the best allowable split of every attribute;
 * under InfoGain below min_gain, Median for the partition and its subtree.
 * A categorical choice has its children counted (grouped) again on return. */
MDR_CHOOSE_INLINE int choose_best(const mdr_chooser *c, const uint32_t *lo, const uint32_t *hi, mdr_choice *out, ak_error *err)
{
    if (c->ops->start) AK_CHECK(c->ops->start(c->src, 0, err));
    parent_stats ps;
    parent_stats_fill(c, &ps);
    mdr_choice best = {0};
    for (uint32_t q = 0; q < c->t->nqi; q++) {
        if (lo[q] == hi[q]) continue;
        if (c->t->qi[q].kind == ATTR_NUMERIC) AK_CHECK(score_numeric(c, q, lo, hi, &ps, &best, err));
        else AK_CHECK(score_categorical(c, q, lo, hi, &ps, &best, err));
    }
    if (!best.found) return 0;
    if (c->split == MDR_SPLIT_INFOGAIN && best.score < c->min_gain) return choose_median(c, lo, hi, 1, out, err);
    *out = best;
    if (c->t->qi[best.q].kind == ATTR_CATEGORICAL) {
        const int grouped = c->ops->children(c->src, best.q, hier_node_at(c->t->qi[best.q].h, best.node), err);
        if (grouped <= 0)
            return grouped < 0 ? grouped : ak_err_set(err, ANONKIT_E_INTERNAL, NULL, 0, 0, "a chosen split vanished");
    }
    return 1;
}

/* Missing values first (docs/hierarchies.md, "Missing values"): the first
 * numeric QI holding missing values (code 0) whose box holds both missing
 * and present values (lo == 0, hi > 0) is split missing | present (lhs =
 * code < 1) when that is allowable. The in-memory Mondrian applies the same
 * rule from its rows (mondrian.c, split_missing); Rothko-T asks here from a
 * node's frequency groups. 1 with *out, 0 when no such split is allowable,
 * 2 when it needs a QI the source did not count, < 0 on error. */
MDR_CHOOSE_INLINE int mdr_choose_missing(const mdr_chooser *c, const uint32_t *lo, const uint32_t *hi, int median_only,
                                         mdr_choice *out, ak_error *err)
{
    const mdr_source_ops *ops = c->ops;
    memset(out, 0, sizeof *out);
    for (uint32_t q = 0; q < c->t->nqi; q++) {
        const table_qi *a = &c->t->qi[q];
        if (a->kind != ATTR_NUMERIC || !a->has_missing || lo[q] != 0 || hi[q] == 0) continue;
        if (ops->prepare) {
            const int ready = ops->prepare(c->src, q, err);
            if (ready <= 0) return ready < 0 ? ready : 2;
        }
        AK_CHECK(ops->groups_start(c->src, q, lo, hi, err));
        uint32_t code;
        uint64_t rows = 0;
        const uint64_t missing = ops->group_next(c->src, &code, &rows) && code == 0 ? rows : 0;
        ops->less_side(c->src, q, lo, 1);
        if (!ops->allowable(c->src, c->n, missing, MDR_SIDE_LESS)) continue;
        *out = (mdr_choice){.found = 1, .q = q, .cut = 1, .median_only = median_only};
        return 1;
    }
    return 0;
}

MDR_CHOOSE_INLINE int mdr_choose(const mdr_chooser *c, const uint32_t *lo, const uint32_t *hi, int median_only, mdr_choice *out,
               ak_error *err)
{
    memset(out, 0, sizeof *out);
    if (c->split == MDR_SPLIT_MEDIAN || median_only) return choose_median(c, lo, hi, median_only, out, err);
    return choose_best(c, lo, hi, out, err);
}

#endif
