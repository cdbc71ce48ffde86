/* mondrian_check.h — the brute-force minimality check of a Mondrian
 * partition ([LeFevre06]) shared by test_mondrian.c (k and l-diversity) and
 * test_closeness_algos.c (t-closeness, δ-disclosure, β-likeness). */
#ifndef AK_TESTS_MONDRIAN_CHECK_H
#define AK_TESTS_MONDRIAN_CHECK_H

#include <stddef.h>

#include "core/partition.h"
#include "core/table.h"

/* Whether the n rows in `rows` of t satisfy the model under test, judged by
 * the test's own count (ctx: the test's model and state). */
typedef int (*mc_rows_hold)(void *ctx, const table *t, const size_t *rows, size_t n);

/* Fails the test unless p is a minimal partition of t by brute force: every
 * class holds p->count[c] rows, its box is its rows' extent, it satisfies
 * the model, and no allowable split remains — no cut of a numeric QI's codes
 * and no specialization of a categorical QI to the children of its values'
 * lowest common ancestor leaves every non-empty side satisfying the model. */
void mc_assert_minimal(const table *t, const partition *p, mc_rows_hold holds, void *ctx);

#endif
