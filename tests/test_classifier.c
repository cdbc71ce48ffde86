/* test_classifier.c — the C4.5-style decision tree and the classification
 * error of [Wang06] §6 (src/metrics/classifier.c).
 *
 * Hand examples whose answer is worked out in the comments from the data in
 * the test: the root a gain-ratio choice makes (and how C4.5's average-gain
 * rule changes it), a numeric threshold, the test error including a category
 * never seen in training, a constant class (the majority error), perfectly
 * separable data (no error, also for XOR, which needs a zero-gain first
 * split). Then properties on random tiny tables against a direct
 * implementation in this file: the root attribute is the one C4.5's rule picks
 * from counts enumerated here, a numeric root's threshold is the best cut
 * found by trying every one, and an unpruned tree with min_leaf 1 fits
 * consistent categorical training data exactly. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/classifier.h"
#include "testutil.h"

#define MAXA 4
#define MAXN 64

/* A small table built in a test: up to MAXA attributes, MAXN rows. */
typedef struct tiny {
    size_t n;
    uint32_t na, nl;
    unsigned char numeric[MAXA];
    uint32_t ncat[MAXA];
    uint32_t cat[MAXA][MAXN];
    double num[MAXA][MAXN];
    uint32_t label[MAXN];
    const uint32_t *catp[MAXA];
    const double *nump[MAXA];
    ctree_data d;
} tiny;

static void tiny_finish(tiny *t)
{
    for (uint32_t a = 0; a < t->na; a++) {
        t->catp[a] = t->numeric[a] ? NULL : t->cat[a];
        t->nump[a] = t->numeric[a] ? t->num[a] : NULL;
    }
    t->d = (ctree_data){t->n, t->na, t->numeric, t->catp, t->ncat, t->nump, t->label, t->nl};
}

static ctree *grow_all(const tiny *t, ctree_params p)
{
    uint32_t rows[MAXN];
    for (size_t i = 0; i < t->n; i++) rows[i] = (uint32_t)i;
    ctree *tree = NULL;
    ak_error err;
    ak_err_clear(&err);
    assert_int_equal(ctree_grow(&t->d, rows, t->n, &p, &tree, &err), 0);
    assert_non_null(tree);
    return tree;
}

/* ---- the root by gain ratio ------------------------------------------------
 *
 * 16 rows, rows 0-7 class 0 and rows 8-15 class 1 (info 1 bit).
 *   A (attr 0): rows 0-6 and 8 are 0, rows 7 and 9-15 are 1: each value holds
 *     7 of one class and 1 of the other: gain 1 - H(7/8, 1/8) = 0.4564, split
 *     info 1, ratio 0.4564.
 *   B (attr 1): row / 2, 8 values of 2 rows of one class each: gain 1, split
 *     info 3, ratio 0.3333 (the largest gain, not the largest ratio).
 *   C (attr 2): row % 2: 4 and 4 of each class under both values: gain 0.
 *   D (attr 3): (row / 2) % 2: the same: gain 0.
 * With A, B, C the average gain is (0.4564 + 1 + 0) / 3 = 0.4855 > A's gain,
 * so only B qualifies and the root is B. With D too the average is
 * 1.4564 / 4 = 0.3641 <= A's gain; A's ratio beats B's, and the root is A. */
static void make_ratio_table(tiny *t, uint32_t nattrs)
{
    memset(t, 0, sizeof *t);
    t->n = 16;
    t->na = nattrs;
    t->nl = 2;
    const uint32_t ncat[MAXA] = {2, 8, 2, 2};
    for (uint32_t r = 0; r < 16; r++) {
        t->label[r] = r >= 8;
        t->cat[0][r] = (r <= 6 || r == 8) ? 0 : 1;
        t->cat[1][r] = r / 2;
        t->cat[2][r] = r % 2;
        t->cat[3][r] = (r / 2) % 2;
    }
    memcpy(t->ncat, ncat, sizeof ncat);
    tiny_finish(t);
}

static void test_root_by_gain_ratio(void **state)
{
    (void)state;
    tiny t;
    make_ratio_table(&t, 3);
    ctree *tree = grow_all(&t, CTREE_DEFAULTS);
    assert_int_equal(ctree_root_attr(tree), 1); /* B: A's gain is below the average */
    ctree_free(tree);
    make_ratio_table(&t, 4);
    tree = grow_all(&t, CTREE_DEFAULTS);
    assert_int_equal(ctree_root_attr(tree), 0); /* A: the best ratio among gains >= the average */
    ctree_free(tree);
}

/* ---- a numeric threshold -----------------------------------------------------
 *
 * x = 1..20 (rows in the order 20, 19, ..., 1), class 0 when x <= 8, else 1.
 * The only perfect cut lies between 8 and 9; C4.5 publishes the training value
 * below it, 8: 8 goes left, 8.5 right. A test set of x = 0, 3, 8, 8.5, 9, 100
 * with their classes by the same rule is classified without error. */
static void test_numeric_threshold(void **state)
{
    (void)state;
    tiny t;
    memset(&t, 0, sizeof t);
    t.n = 26;
    t.na = 1;
    t.nl = 2;
    t.numeric[0] = 1;
    const double tests[6] = {0, 3, 8, 8.5, 9, 100};
    unsigned char is_test[26] = {0};
    for (uint32_t i = 0; i < 20; i++) t.num[0][i] = 20 - i;
    for (uint32_t i = 0; i < 6; i++) {
        t.num[0][20 + i] = tests[i];
        is_test[20 + i] = 1;
    }
    for (uint32_t i = 0; i < 26; i++) t.label[i] = t.num[0][i] > 8;
    tiny_finish(&t);
    t.d.nrows = 20;
    ctree *tree = grow_all(&t, CTREE_DEFAULTS);
    assert_int_equal(ctree_root_attr(tree), 0);
    assert_true(ctree_root_threshold(tree) == 8.0);
    assert_int_equal(ctree_leaves(tree), 2);
    ctree_free(tree);
    t.d.nrows = 26;
    class_error ce;
    ak_error err;
    const ctree_params p = CTREE_DEFAULTS;
    assert_int_equal(metrics_class_error(&t.d, is_test, &p, &ce, &err), 0);
    assert_int_equal(ce.train_rows, 20);
    assert_int_equal(ce.test_rows, 6);
    assert_int_equal(ce.errors, 0);
    assert_true(ce.error == 0.0);
    /* the training majority: 12 of 20 are class 1, so the test rows of class 0 (0, 3, 8) miss */
    assert_int_equal(ce.majority_errors, 3);
}

/* ---- the test error by hand -----------------------------------------------------
 *
 * One categorical attribute with categories p (0), q (1), r (2). Training:
 * p: 5 of class 0, 1 of class 1; q: 1 of class 0, 5 of class 1. The root
 * (6 and 6: majority class 0, the lower code) splits on the attribute; the
 * leaves say p -> 0, q -> 1. Pruning keeps the split: as a leaf the root
 * would be estimated at 6 + AddErrs(12, 6) = 7.65 errors, the two leaves at
 * 2 * (1 + AddErrs(6, 1)) = 4.65. Testing: p/0 right, p/1 wrong, q/1 right,
 * q/0 wrong, r/1 wrong (r never reached the root in training: the root's
 * class 0). Error 3/5. */
static void test_error_by_hand(void **state)
{
    (void)state;
    tiny t;
    memset(&t, 0, sizeof t);
    t.na = 1;
    t.nl = 2;
    t.ncat[0] = 3;
    const uint32_t train[12][2] = {{0, 0}, {0, 0}, {0, 0}, {0, 0}, {0, 0}, {0, 1},
                                   {1, 0}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, {1, 1}};
    const uint32_t test[5][2] = {{0, 0}, {0, 1}, {1, 1}, {1, 0}, {2, 1}};
    unsigned char is_test[17] = {0};
    for (uint32_t i = 0; i < 12; i++) {
        t.cat[0][t.n] = train[i][0];
        t.label[t.n++] = train[i][1];
    }
    for (uint32_t i = 0; i < 5; i++) {
        t.cat[0][t.n] = test[i][0];
        is_test[t.n] = 1;
        t.label[t.n++] = test[i][1];
    }
    tiny_finish(&t);
    class_error ce;
    ak_error err;
    const ctree_params p = CTREE_DEFAULTS;
    assert_int_equal(metrics_class_error(&t.d, is_test, &p, &ce, &err), 0);
    assert_int_equal(ce.errors, 3);
    assert_true(fabs(ce.error - 0.6) < 1e-15);
    assert_int_equal(ce.leaves, 2);
    /* the root's class 0 misses the 3 test rows of class 1 */
    assert_int_equal(ce.majority_errors, 3);
}

/* ---- pessimistic pruning by hand ---------------------------------------------------
 *
 * One attribute; value 0: 3 of class 0 and 2 of class 1; value 1: 2 and 3.
 * The split lowers training errors from 5 to 4, so it is grown. C4.5's
 * AddErrs at cf = 0.25 uses z = 0.84 + (0.25 - 0.20) / (0.40 - 0.20) *
 * (0.25 - 0.84) = 0.6925 and coeff = z^2 = 0.47956:
 *   a leaf (5 rows, 2 errors): p = (2.5 + coeff/2 + sqrt(coeff (2.5 (1 - 2.5/5)
 *     + coeff/4))) / (5 + coeff) = 0.64792, estimate 5 p = 3.2396; both 6.4792;
 *   the root as a leaf (10 rows, 5 errors): p = (5.5 + coeff/2 + sqrt(coeff
 *     (5.5 (1 - 5.5/10) + coeff/4))) / (10 + coeff) = 0.65417, estimate 6.5417.
 * 6.5417 <= 6.4792 + 0.1: pruned to one leaf. Without pruning, two leaves. */
static void test_pruning_by_hand(void **state)
{
    (void)state;
    tiny t;
    memset(&t, 0, sizeof t);
    t.n = 10;
    t.na = 1;
    t.nl = 2;
    t.ncat[0] = 2;
    const uint32_t label[10] = {0, 0, 0, 1, 1, 0, 0, 1, 1, 1};
    for (uint32_t i = 0; i < 10; i++) {
        t.cat[0][i] = i >= 5;
        t.label[i] = label[i];
    }
    tiny_finish(&t);
    ctree *tree = grow_all(&t, (ctree_params){2, 0});
    assert_int_equal(ctree_leaves(tree), 2);
    ctree_free(tree);
    tree = grow_all(&t, CTREE_DEFAULTS);
    assert_int_equal(ctree_leaves(tree), 1);
    assert_int_equal(ctree_root_attr(tree), UINT32_MAX);
    ctree_free(tree);
}

/* ---- a constant class ----------------------------------------------------------
 *
 * Every training row is class 0, so the tree is one leaf saying 0 and the
 * error is the share of test rows of another class: 3 of 10. */
static void test_constant_class(void **state)
{
    (void)state;
    tiny t;
    memset(&t, 0, sizeof t);
    t.n = 30;
    t.na = 2;
    t.nl = 2;
    t.ncat[0] = 4;
    t.numeric[1] = 1;
    unsigned char is_test[30] = {0};
    for (uint32_t i = 0; i < 30; i++) {
        t.cat[0][i] = i % 4;
        t.num[1][i] = (double)(i * 7 % 11);
        is_test[i] = i >= 20;
        t.label[i] = i >= 27; /* test rows 27, 28, 29 are class 1 */
    }
    tiny_finish(&t);
    class_error ce;
    ak_error err;
    const ctree_params p = CTREE_DEFAULTS;
    assert_int_equal(metrics_class_error(&t.d, is_test, &p, &ce, &err), 0);
    assert_int_equal(ce.leaves, 1);
    assert_int_equal(ce.errors, 3);
    assert_int_equal(ce.majority_errors, 3);
    assert_true(fabs(ce.error - 0.3) < 1e-15);
}

/* ---- separable data -------------------------------------------------------------
 *
 * (a) class = a function of a categorical attribute (5 categories onto 3
 * classes) with a noise attribute beside it; (b) class = a XOR b over every
 * combination of a, b and a third bit c, each twice: every single attribute
 * has gain 0, C4.5 still splits (all gains equal the average, 0) and the
 * second level separates. Both classify fresh rows of the same rule without
 * error. */
static void test_separable(void **state)
{
    (void)state;
    tu_rng rng = {17};
    tiny t;
    memset(&t, 0, sizeof t);
    t.n = MAXN;
    t.na = 2;
    t.nl = 3;
    t.ncat[0] = 5;
    t.ncat[1] = 6;
    unsigned char is_test[MAXN] = {0};
    const uint32_t map[5] = {2, 0, 1, 0, 2};
    for (uint32_t i = 0; i < MAXN; i++) {
        t.cat[0][i] = i < 40 ? i % 5 : (uint32_t)tu_below(&rng, 5);
        t.cat[1][i] = (uint32_t)tu_below(&rng, 6);
        t.label[i] = map[t.cat[0][i]];
        is_test[i] = i >= 40;
    }
    tiny_finish(&t);
    class_error ce;
    ak_error err;
    const ctree_params p = CTREE_DEFAULTS;
    assert_int_equal(metrics_class_error(&t.d, is_test, &p, &ce, &err), 0);
    assert_int_equal(ce.test_rows, MAXN - 40);
    assert_int_equal(ce.errors, 0);

    memset(&t, 0, sizeof t);
    t.na = 3;
    t.nl = 2;
    t.ncat[0] = t.ncat[1] = t.ncat[2] = 2;
    memset(is_test, 0, sizeof is_test);
    for (uint32_t rep = 0; rep < 3; rep++)
        for (uint32_t v = 0; v < 8; v++) {
            t.cat[0][t.n] = v & 1;
            t.cat[1][t.n] = v >> 1 & 1;
            t.cat[2][t.n] = v >> 2 & 1;
            t.label[t.n] = (v & 1) ^ (v >> 1 & 1);
            is_test[t.n++] = rep == 2; /* the third copy is the test set */
        }
    tiny_finish(&t);
    assert_int_equal(metrics_class_error(&t.d, is_test, &p, &ce, &err), 0);
    assert_int_equal(ce.test_rows, 8);
    assert_int_equal(ce.errors, 0);
}

/* ---- properties against a direct implementation -------------------------------- */

/* Entropy (bits) of a histogram of k counts. */
static double entropy(const double *count, uint32_t k)
{
    double n = 0, h = 0;
    for (uint32_t y = 0; y < k; y++) n += count[y];
    for (uint32_t y = 0; y < k; y++)
        if (count[y] > 0) h -= count[y] / n * log2(count[y] / n);
    return h;
}

/* C4.5's choice at the root of table t computed from enumerated counts: the
 * attribute, or -1 for none; -2 when two candidates are too close to call. */
static int direct_root(const tiny *t, uint32_t min_leaf, double *threshold)
{
    double all[8] = {0};
    for (size_t i = 0; i < t->n; i++) all[t->label[i]]++;
    const double base = entropy(all, t->nl);
    double gain[MAXA], info[MAXA], thr[MAXA];
    int possible[MAXA];
    for (uint32_t a = 0; a < t->na; a++) {
        possible[a] = 0;
        if (!t->numeric[a]) {
            double rest = 0, split = 0;
            int reasonable = 0;
            for (uint32_t v = 0; v < t->ncat[a]; v++) {
                double c[8] = {0}, m = 0;
                for (size_t i = 0; i < t->n; i++)
                    if (t->cat[a][i] == v) c[t->label[i]]++, m++;
                if (m == 0) continue;
                reasonable += m >= min_leaf;
                rest += m / (double)t->n * entropy(c, t->nl);
                split -= m / (double)t->n * log2(m / (double)t->n);
            }
            possible[a] = reasonable >= 2;
            gain[a] = base - rest;
            info[a] = split;
            continue;
        }
        /* every cut between two distinct values with min_split rows each side */
        double min_split = 0.1 * (double)t->n / t->nl;
        if (min_split <= min_leaf) min_split = min_leaf;
        if (min_split > 25) min_split = 25;
        double vals[MAXN];
        size_t nv = 0;
        for (size_t i = 0; i < t->n; i++) {
            size_t j = 0;
            while (j < nv && vals[j] != t->num[a][i]) j++;
            if (j == nv) vals[nv++] = t->num[a][i];
        }
        int tries = 0;
        double g[MAXN], gi[MAXN];
        for (size_t j = 0; j < nv; j++) {
            double l[8] = {0}, r[8] = {0}, nl = 0, nr = 0;
            for (size_t i = 0; i < t->n; i++) {
                if (t->num[a][i] <= vals[j]) l[t->label[i]]++, nl++;
                else r[t->label[i]]++, nr++;
            }
            g[j] = -1; /* not a cut */
            if (nl < min_split || nr < min_split) continue;
            g[j] = base - nl / (double)t->n * entropy(l, t->nl) - nr / (double)t->n * entropy(r, t->nl);
            gi[j] = -(nl / (double)t->n) * log2(nl / (double)t->n) - nr / (double)t->n * log2(nr / (double)t->n);
            tries++;
        }
        double best = -1, best_thr = 0, best_info = 0;
        for (size_t j = 0; j < nv; j++)
            if (g[j] > best) {
                best = g[j];
                best_thr = vals[j];
                best_info = gi[j];
            }
        for (size_t j = 0; j < nv; j++) /* another cut as good: too close to call */
            if (g[j] >= 0 && vals[j] != best_thr && fabs(g[j] - best) < 1e-9) return -2;
        if (!tries) continue;
        const double charged = best - log2((double)tries) / (double)t->n;
        if (fabs(charged) < 1e-9) return -2;
        if (charged <= 0) continue;
        possible[a] = 1;
        gain[a] = charged;
        info[a] = best_info;
        thr[a] = best_thr;
    }
    double average = 0;
    int count = 0;
    for (uint32_t a = 0; a < t->na; a++)
        if (possible[a]) average += gain[a], count++;
    if (!count) return -1;
    average /= count;
    int best = -1;
    double best_ratio = -1e-3;
    for (uint32_t a = 0; a < t->na; a++) {
        if (!possible[a]) continue;
        if (fabs(gain[a] - (average - 1e-3)) < 1e-9 || fabs(info[a] - 1e-3) < 1e-9) return -2;
        if (gain[a] < average - 1e-3 || info[a] <= 1e-3) continue;
        const double ratio = gain[a] / info[a];
        if (best >= 0 && fabs(ratio - best_ratio) < 1e-9) return -2;
        if (ratio > best_ratio) {
            best_ratio = ratio;
            best = (int)a;
        }
    }
    if (best >= 0 && t->numeric[best]) *threshold = thr[best];
    return best;
}

static void random_tiny(tu_rng *rng, tiny *t, int with_numeric)
{
    memset(t, 0, sizeof *t);
    t->n = 6 + tu_below(rng, 40);
    t->na = 1 + (uint32_t)tu_below(rng, MAXA);
    t->nl = 2 + (uint32_t)tu_below(rng, 2);
    for (uint32_t a = 0; a < t->na; a++) {
        t->numeric[a] = with_numeric && tu_below(rng, 2);
        t->ncat[a] = t->numeric[a] ? 0 : 2 + (uint32_t)tu_below(rng, 4);
    }
    for (size_t i = 0; i < t->n; i++) {
        for (uint32_t a = 0; a < t->na; a++) {
            if (t->numeric[a]) t->num[a][i] = (double)tu_below(rng, 12) / 2;
            else t->cat[a][i] = (uint32_t)tu_below(rng, t->ncat[a]);
        }
        /* the class leans on attribute 0 so that splits are common */
        const uint32_t a0 = t->numeric[0] ? (uint32_t)(t->num[0][i] > 2.5) : t->cat[0][i];
        t->label[i] = tu_below(rng, 4) ? a0 % t->nl : (uint32_t)tu_below(rng, t->nl);
    }
    tiny_finish(t);
}

static void test_root_matches_direct(void **state)
{
    (void)state;
    tu_rng rng = {2024};
    int compared = 0, split = 0;
    for (int iter = 0; iter < 3000; iter++) {
        tiny t;
        random_tiny(&rng, &t, iter % 2);
        double all[8] = {0};
        for (size_t i = 0; i < t.n; i++) all[t.label[i]]++;
        double mx = 0;
        for (uint32_t y = 0; y < t.nl; y++) mx = all[y] > mx ? all[y] : mx;
        if (mx == (double)t.n || t.n < 4) continue; /* a leaf for sure */
        double want_thr = 0;
        const int want = direct_root(&t, 2, &want_thr);
        if (want == -2) continue;
        /* without pruning or collapsing the root is exactly the chosen split; cf 0 still
         * collapses a subtree that does not reduce training errors, so only compare
         * splitting roots and roots the direct rule leaves whole */
        ctree *tree = grow_all(&t, (ctree_params){2, 0});
        const uint32_t got = ctree_root_attr(tree);
        if (want < 0) {
            if (got != UINT32_MAX) fail_msg("iteration %d: the direct rule makes a leaf, the tree splits on %u", iter, got);
        } else if (got != UINT32_MAX) {
            if ((int)got != want) fail_msg("iteration %d: root attribute %u, direct rule %d", iter, got, want);
            if (t.numeric[got] && ctree_root_threshold(tree) != want_thr)
                fail_msg("iteration %d: threshold %g, direct %g", iter, ctree_root_threshold(tree), want_thr);
            split++;
        }
        compared++;
        ctree_free(tree);
    }
    /* the comparison must not be vacuous */
    assert_true(compared > 1000);
    assert_true(split > 500);
}

/* Unpruned, min_leaf 1, on consistent categorical data (equal attributes ->
 * equal class): the tree classifies every training row correctly. (Not so
 * with numeric attributes: C4.5's least split size and its charge for the
 * thresholds tried may refuse a cut that sets a few rows apart.) */
static void test_fits_consistent_training_data(void **state)
{
    (void)state;
    tu_rng rng = {99};
    for (int iter = 0; iter < 500; iter++) {
        tiny t;
        random_tiny(&rng, &t, 0);
        /* make the class a function of the attribute vector: the first row with a vector decides */
        for (size_t i = 0; i < t.n; i++)
            for (size_t j = 0; j < i; j++) {
                int same = 1;
                for (uint32_t a = 0; a < t.na && same; a++)
                    same = t.numeric[a] ? t.num[a][i] == t.num[a][j] : t.cat[a][i] == t.cat[a][j];
                if (same) {
                    t.label[i] = t.label[j];
                    break;
                }
            }
        ctree *tree = grow_all(&t, (ctree_params){1, 0});
        for (size_t i = 0; i < t.n; i++)
            if (ctree_classify(tree, &t.d, i) != t.label[i])
                fail_msg("iteration %d: training row %zu misclassified", iter, i);
        ctree_free(tree);
    }
}

/* Pruning never makes the tree larger, and the defaults prune noise: a
 * random class on random attributes leaves few leaves. */
static void test_pruning_shrinks(void **state)
{
    (void)state;
    tu_rng rng = {5};
    for (int iter = 0; iter < 300; iter++) {
        tiny t;
        random_tiny(&rng, &t, iter % 2);
        ctree *full = grow_all(&t, (ctree_params){2, 0});
        ctree *pruned = grow_all(&t, CTREE_DEFAULTS);
        assert_true(ctree_leaves(pruned) <= ctree_leaves(full));
        assert_true(ctree_leaves(pruned) >= 1);
        ctree_free(full);
        ctree_free(pruned);
    }
}

static void test_needs_both_parts(void **state)
{
    (void)state;
    tiny t;
    make_ratio_table(&t, 2);
    unsigned char none[16] = {0}, all[16];
    memset(all, 1, sizeof all);
    class_error ce;
    ak_error err;
    const ctree_params p = CTREE_DEFAULTS;
    assert_int_equal(metrics_class_error(&t.d, none, &p, &ce, &err), ANONKIT_E_USAGE);
    assert_int_equal(metrics_class_error(&t.d, all, &p, &ce, &err), ANONKIT_E_USAGE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_root_by_gain_ratio),
        cmocka_unit_test(test_numeric_threshold),
        cmocka_unit_test(test_error_by_hand),
        cmocka_unit_test(test_pruning_by_hand),
        cmocka_unit_test(test_constant_class),
        cmocka_unit_test(test_separable),
        cmocka_unit_test(test_root_matches_direct),
        cmocka_unit_test(test_fits_consistent_training_data),
        cmocka_unit_test(test_pruning_shrinks),
        cmocka_unit_test(test_needs_both_parts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
