/* mondrian_check.c — brute-force minimality of a Mondrian partition (mondrian_check.h). */
#include "mondrian_check.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "core/hierarchy.h"

/* No cut of numeric QI q of class c (its n rows, codes lo..hi) leaves two
 * sides that both hold. */
static void assert_no_cut(const table *t, size_t c, uint32_t q, const size_t *rows, size_t n, uint32_t lo,
                          uint32_t hi, size_t *left, size_t *right, mc_rows_hold holds, void *ctx)
{
    const table_qi *a = &t->qi[q];
    for (uint32_t cut = lo + 1; cut <= hi; cut++) {
        size_t nl = 0, nr = 0;
        for (size_t i = 0; i < n; i++) {
            if (a->codes[rows[i]] < cut) left[nl++] = rows[i];
            else right[nr++] = rows[i];
        }
        if (nl && nr && holds(ctx, t, left, nl) && holds(ctx, t, right, nr))
            fail_msg("class %zu: numeric QI %u can still be split below code %u", c, q, cut);
    }
}

/* Categorical QI q of class c cannot be specialized to the children of the
 * lowest common ancestor of its codes lo..hi with every non-empty child's
 * rows holding. */
static void assert_no_specialization(const table *t, size_t c, uint32_t q, const size_t *rows, size_t n,
                                     uint32_t lo, uint32_t hi, size_t *left, mc_rows_hold holds, void *ctx)
{
    const table_qi *a = &t->qi[q];
    const hier_node *u = hier_node_at(a->h, hier_lca(a->h, lo, hi));
    int all_hold = 1, nonempty = 0;
    for (uint32_t ch = 0; ch < u->nchildren; ch++) {
        const hier_node *child = hier_node_at(a->h, hier_children(a->h)[u->first_child + ch]);
        size_t nl = 0;
        for (size_t i = 0; i < n; i++) {
            const uint32_t v = a->codes[rows[i]];
            if (v >= child->lo && v <= child->hi) left[nl++] = rows[i];
        }
        if (!nl) continue;
        nonempty++;
        if (!holds(ctx, t, left, nl)) all_hold = 0;
    }
    if (nonempty >= 2 && all_hold) fail_msg("class %zu: categorical QI %u can still be specialized", c, q);
}

void mc_assert_minimal(const table *t, const partition *p, mc_rows_hold holds, void *ctx)
{
    size_t *rows = malloc(t->nrows * sizeof *rows), *left = malloc(t->nrows * sizeof *left),
           *right = malloc(t->nrows * sizeof *right);
    assert_true(rows && left && right);
    for (size_t c = 0; c < p->nclasses; c++) {
        size_t n = 0;
        for (size_t r = 0; r < t->nrows; r++)
            if (p->class_of[r] == c) rows[n++] = r;
        assert_int_equal(n, p->count[c]);
        if (!holds(ctx, t, rows, n)) fail_msg("class %zu violates the model", c);
        for (uint32_t q = 0; q < t->nqi; q++) {
            uint32_t lo = UINT32_MAX, hi = 0;
            for (size_t i = 0; i < n; i++) {
                const uint32_t v = t->qi[q].codes[rows[i]];
                if (v < lo) lo = v;
                if (v > hi) hi = v;
            }
            assert_int_equal(lo, partition_lo(p, c)[q]); /* box = actual extent */
            assert_int_equal(hi, partition_hi(p, c)[q]);
            if (lo == hi) continue;
            if (t->qi[q].kind == ATTR_NUMERIC) assert_no_cut(t, c, q, rows, n, lo, hi, left, right, holds, ctx);
            else assert_no_specialization(t, c, q, rows, n, lo, hi, left, holds, ctx);
        }
    }
    free(rows);
    free(left);
    free(right);
}
