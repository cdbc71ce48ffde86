/* test_closeness.c — the distribution models of model/closeness.h:
 *
 *  - the three EMD forms of [Li07] §4.2 on the paper's salary example
 *    (ordered distance: 0.375 and 0.167 exactly) and on its disease hierarchy
 *    (values worked out by hand from the definition, written in the test);
 *  - the three closed forms against a general EMD: the transportation linear
 *    program min sum f_ij d_ij (rows: the class's mass, columns: the
 *    table's), solved here exactly by successive shortest paths on small
 *    random histograms with integer ground costs;
 *  - δ-disclosure and β-likeness (basic, enhanced) against their direct
 *    formulas, and the least t, δ, β (model_achieved) against direct maxima;
 *  - the union property every algorithm relies on: two classes that satisfy a
 *    model (at the least parameter both achieve) make a union that does;
 *  - bad inputs: a value missing from the hierarchy, a non-numeric value
 *    under the ordered distance. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "model/closeness.h"
#include "model/model.h"
#include "testutil.h"

#define MAXV 8

/* A dictionary of the given texts. */
static void make_dict(strmap *d, const char *const *texts, size_t n)
{
    assert_int_equal(strmap_init(d, 16), 0);
    for (size_t i = 0; i < n; i++) {
        uint32_t id;
        assert_int_equal(strmap_intern(d, texts[i], strlen(texts[i]), &id, NULL), 0);
        assert_int_equal(id, i);
    }
}

static model_ref *build(const strmap *d, const uint64_t *counts, unsigned distance, const model_shier *h)
{
    model_ref *ref = NULL;
    ak_error err;
    if (model_ref_build(&ref, d, counts, distance, h, "s", &err) != ANONKIT_OK) fail_msg("%s", err.message);
    return ref;
}

/* EMD of a class given as counts per value (zeros skipped) as an exact fraction num/den. */
static void emd_of(const model_ref *ref, const uint32_t *cls, size_t nv, __int128 *num, __int128 *den)
{
    uint32_t codes[MAXV * 4], counts[MAXV * 4];
    size_t n = 0;
    uint64_t rows = 0;
    for (size_t v = 0; v < nv; v++)
        if (cls[v]) {
            codes[n] = (uint32_t)v;
            counts[n++] = cls[v];
            rows += cls[v];
        }
    model_work *w = model_work_new(ref);
    assert_non_null(w);
    model_emd_scaled(ref, w, rows, codes, counts, n, num, den);
    model_work_free(w);
}

/* EMD == a / b exactly. */
static void assert_emd(const model_ref *ref, const uint32_t *cls, size_t nv, long a, long b)
{
    __int128 num, den;
    emd_of(ref, cls, nv, &num, &den);
    if (num * b != den * a)
        fail_msg("EMD %.9g, expected %ld/%ld", (double)((long double)num / (long double)den), a, b);
}

/* [Li07] §4.2's salary example: Q = {3k, ..., 11k}, P1 = {3k, 4k, 5k},
 * P2 = {6k, 8k, 11k}; ordered distance: D[P1,Q] = 0.375, D[P2,Q] = 0.167
 * (= 1/6). Equal distance, worked out: P1 and P2 both 2/3. */
static void test_salary_example(void **state)
{
    (void)state;
    const char *const texts[] = {"3000", "4000", "5000", "6000", "7000", "8000", "9000", "10000", "11000"};
    strmap d;
    make_dict(&d, texts, 9);
    const uint64_t q[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    const uint32_t p1[9] = {1, 1, 1, 0, 0, 0, 0, 0, 0}, p2[9] = {0, 0, 0, 1, 0, 1, 0, 0, 1};
    model_ref *ordered = build(&d, q, MODEL_T_ORDERED, NULL), *equal = build(&d, q, MODEL_T_EQUAL, NULL);
    assert_emd(ordered, p1, 9, 3, 8);
    assert_emd(ordered, p2, 9, 1, 6);
    assert_emd(equal, p1, 9, 2, 3);
    assert_emd(equal, p2, 9, 2, 3);
    /* the predicate at and around the bound */
    model_dist md = {0.375, MODEL_T_ORDERED, 0, 0, 0, NULL};
    model_work *w = model_work_new(ordered);
    const uint32_t codes[3] = {0, 1, 2}, counts[3] = {1, 1, 1};
    assert_true(model_dist_holds(&md, ordered, w, 3, codes, counts, 3));
    md.t = 0.3749999;
    assert_false(model_dist_holds(&md, ordered, w, 3, codes, counts, 3));
    /* the values' order is numeric, not the dictionary's: shuffled texts give the same */
    const char *const shuffled[] = {"9000", "3000", "11000", "5000", "4000", "10000", "7000", "6000", "8000"};
    strmap d2;
    make_dict(&d2, shuffled, 9);
    model_ref *o2 = build(&d2, q, MODEL_T_ORDERED, NULL);
    const uint32_t p1s[9] = {0, 1, 0, 1, 1, 0, 0, 0, 0};
    assert_emd(o2, p1s, 9, 3, 8);
    model_work_free(w);
    model_ref_free(ordered);
    model_ref_free(equal);
    model_ref_free(o2);
    strmap_free(&d);
    strmap_free(&d2);
}

/* [Li07] Figure 1's disease hierarchy (H = 3) and its nine-row table:
 * gastric ulcer, gastritis, stomach cancer, gastritis, flu, bronchitis,
 * bronchitis, pneumonia, stomach cancer. By the definition (cost of each
 * inner node = height/H * min(pos_extra, neg_extra)): the class {gastric ulcer,
 * gastritis, stomach cancer} moves 4/9 across the root: EMD 4/9; {gastric ulcer,
 * stomach cancer, pneumonia}: 2/27 + 2/27 + 3/27 = 7/27; {gastritis, flu,
 * bronchitis}: 8/27; {gastritis, bronchitis, stomach cancer}: 5/27. */
static void test_disease_example(void **state)
{
    (void)state;
    const char *dir = tu_mkdtemp();
    char path[4200];
    snprintf(path, sizeof path, "%s/disease.csv", dir);
    tu_write_file(path,
                  "flu;respiratory infection;respiratory system diseases;respiratory and digestive system diseases\n"
                  "pneumonia;respiratory infection;respiratory system diseases;respiratory and digestive system diseases\n"
                  "bronchitis;respiratory infection;respiratory system diseases;respiratory and digestive system diseases\n"
                  "pulmonary edema;vascular lung diseases;respiratory system diseases;respiratory and digestive system diseases\n"
                  "pulmonary embolism;vascular lung diseases;respiratory system diseases;respiratory and digestive system diseases\n"
                  "gastric ulcer;stomach diseases;digestive system diseases;respiratory and digestive system diseases\n"
                  "gastritis;stomach diseases;digestive system diseases;respiratory and digestive system diseases\n"
                  "stomach cancer;stomach diseases;digestive system diseases;respiratory and digestive system diseases\n"
                  "colitis;colon diseases;digestive system diseases;respiratory and digestive system diseases\n"
                  "colon cancer;colon diseases;digestive system diseases;respiratory and digestive system diseases\n");
    model_shier *h = NULL;
    ak_error err;
    assert_int_equal(model_shier_read(&h, path, &err), ANONKIT_OK);
    const char *const texts[] = {"gastric ulcer", "gastritis", "stomach cancer", "flu", "bronchitis", "pneumonia"};
    strmap d;
    make_dict(&d, texts, 6);
    const uint64_t q[6] = {1, 2, 2, 1, 2, 1};
    model_ref *ref = build(&d, q, MODEL_T_HIERARCHICAL, h);
    const uint32_t c1[6] = {1, 1, 1, 0, 0, 0}, c2[6] = {1, 0, 1, 0, 0, 1}, c3[6] = {0, 1, 0, 1, 1, 0},
                   c4[6] = {0, 1, 1, 0, 1, 0};
    assert_emd(ref, c1, 6, 4, 9);
    assert_emd(ref, c2, 6, 7, 27);
    assert_emd(ref, c3, 6, 8, 27);
    assert_emd(ref, c4, 6, 5, 27);
    /* the whole table is at distance 0 */
    const uint32_t all[6] = {1, 2, 2, 1, 2, 1};
    assert_emd(ref, all, 6, 0, 1);
    model_ref_free(ref);
    /* a value that is not a leaf of the hierarchy is an error naming it */
    const char *const bad[] = {"flu", "measles"};
    strmap d2;
    make_dict(&d2, bad, 2);
    const uint64_t q2[2] = {1, 1};
    assert_int_equal(model_ref_build(&ref, &d2, q2, MODEL_T_HIERARCHICAL, h, "disease", &err), ANONKIT_E_USAGE);
    assert_non_null(strstr(err.message, "measles"));
    /* ... but not when its count is 0 (a value of the dictionary the table lacks) */
    const uint64_t q3[2] = {1, 0};
    assert_int_equal(model_ref_build(&ref, &d2, q3, MODEL_T_HIERARCHICAL, h, "disease", &err), ANONKIT_OK);
    model_ref_free(ref);
    /* ordered distance on a non-numeric value: an error */
    assert_int_equal(model_ref_build(&ref, &d2, q2, MODEL_T_ORDERED, NULL, "disease", &err), ANONKIT_E_USAGE);
    assert_non_null(strstr(err.message, "numeric"));
    /* hierarchical without a hierarchy */
    assert_int_equal(model_ref_build(&ref, &d2, q2, MODEL_T_HIERARCHICAL, NULL, "disease", &err), ANONKIT_E_USAGE);
    model_shier_free(h);
    strmap_free(&d);
    strmap_free(&d2);
    tu_rmtree(dir);
}

/* ---- a general EMD: the transportation LP ----
 * min sum_ij f_ij d_ij subject to sum_j f_ij = a_i, sum_i f_ij = b_j, f >= 0,
 * with integer supplies a (class counts times N), demands b (table counts
 * times n) and costs d, solved as a min-cost flow by successive shortest
 * paths (Bellman-Ford on the residual graph): optimal, and integral. */
#define LPN (2 * MAXV + 2)

static long long transport(const long long *a, const long long *b, const long long d[MAXV][MAXV], int m)
{
    static long long cap[LPN][LPN], cost[LPN][LPN], flow[LPN][LPN];
    const int S = 2 * m, T = 2 * m + 1, nn = 2 * m + 2;
    memset(cap, 0, sizeof cap);
    memset(cost, 0, sizeof cost);
    memset(flow, 0, sizeof flow);
    for (int i = 0; i < m; i++) {
        cap[S][i] = a[i];
        cap[m + i][T] = b[i];
        for (int j = 0; j < m; j++) {
            cap[i][m + j] = LLONG_MAX / 4;
            cost[i][m + j] = d[i][j];
            cost[m + j][i] = -d[i][j];
        }
    }
    long long total = 0;
    for (;;) {
        long long dist[LPN];
        int prev[LPN];
        for (int v = 0; v < nn; v++) {
            dist[v] = LLONG_MAX;
            prev[v] = -1;
        }
        dist[S] = 0;
        for (int it = 0; it < nn; it++)
            for (int u = 0; u < nn; u++) {
                if (dist[u] == LLONG_MAX) continue;
                for (int v = 0; v < nn; v++)
                    if (cap[u][v] - flow[u][v] > 0 && dist[u] + cost[u][v] < dist[v]) {
                        dist[v] = dist[u] + cost[u][v];
                        prev[v] = u;
                    }
            }
        if (dist[T] == LLONG_MAX) break;
        long long push = LLONG_MAX;
        for (int v = T; v != S; v = prev[v]) {
            const long long r = cap[prev[v]][v] - flow[prev[v]][v];
            if (r < push) push = r;
        }
        for (int v = T; v != S; v = prev[v]) {
            flow[prev[v]][v] += push;
            flow[v][prev[v]] -= push;
        }
        total += push * dist[T];
    }
    return total;
}

/* A hierarchy of L levels over leaves x0..x{m-1}: at level l (1 <= l < L) leaf i
 * is under "g<l>_<i >> l>", then "*". The LCA of i and j is at the least l with
 * i >> l == j >> l, or L. */
static void write_levels(const char *path, int m, int L)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    for (int i = m - 1; i >= 0; i--) {
        fprintf(f, "x%d", i);
        for (int l = 1; l < L; l++) fprintf(f, ";g%d_%d", l, i >> l);
        fprintf(f, ";*\n");
    }
    fclose(f);
}

static int lca_level(int i, int j, int L)
{
    for (int l = 0; l < L; l++)
        if ((i >> l) == (j >> l)) return l;
    return L;
}

static void test_emd_against_lp(void **state)
{
    (void)state;
    tu_rng rng = {23};
    const char *dir = tu_mkdtemp();
    char hpath[4200];
    snprintf(hpath, sizeof hpath, "%s/h.csv", dir);
    int checked[4] = {0}, rejected_by_bound = 0;
    for (int iter = 0; iter < 600; iter++) {
        const int m = 1 + (int)tu_below(&rng, MAXV);
        uint64_t q[MAXV];
        uint32_t c[MAXV];
        uint64_t N = 0, n = 0;
        for (int v = 0; v < m; v++) {
            q[v] = tu_below(&rng, 3) == 0 ? 0 : 1 + tu_below(&rng, 6);
            c[v] = (uint32_t)tu_below(&rng, q[v] + 1);
            N += q[v];
            n += c[v];
        }
        if (!n) continue;
        const unsigned distance = 1 + (unsigned)tu_below(&rng, 3);
        char texts[MAXV][16];
        const char *tp[MAXV];
        int rank_of[MAXV], L = 1 + (int)tu_below(&rng, 3);
        /* ordered: distinct random numbers; the rank among the values present */
        int num[MAXV];
        for (int v = 0; v < m; v++) {
            int x;
            int dup;
            do {
                x = (int)tu_below(&rng, 100) - 50;
                dup = 0;
                for (int u = 0; u < v; u++) dup |= num[u] == x;
            } while (dup);
            num[v] = x;
            if (distance == MODEL_T_ORDERED) snprintf(texts[v], sizeof texts[v], "%d", x);
            else snprintf(texts[v], sizeof texts[v], "x%d", v);
            tp[v] = texts[v];
        }
        int present = 0;
        for (int v = 0; v < m; v++) {
            rank_of[v] = 0;
            for (int u = 0; u < m; u++) rank_of[v] += q[u] && num[u] < num[v];
            present += q[v] > 0;
        }
        strmap d;
        make_dict(&d, tp, (size_t)m);
        model_shier *h = NULL;
        if (distance == MODEL_T_HIERARCHICAL) {
            write_levels(hpath, m, L);
            ak_error err;
            assert_int_equal(model_shier_read(&h, hpath, &err), ANONKIT_OK);
        }
        model_ref *ref = build(&d, q, distance, h);
        long long a[MAXV], b[MAXV], cost[MAXV][MAXV];
        for (int i = 0; i < m; i++) {
            a[i] = (long long)c[i] * (long long)N;
            b[i] = (long long)q[i] * (long long)n;
            for (int j = 0; j < m; j++)
                cost[i][j] = distance == MODEL_T_EQUAL ? i != j
                             : distance == MODEL_T_ORDERED ? labs((long)rank_of[i] - rank_of[j])
                                                           : lca_level(i, j, L);
        }
        const long long lp = transport(a, b, cost, m);
        __int128 numr, den;
        emd_of(ref, c, (size_t)m, &numr, &den);
        /* the closed forms' scale: equal 2nN (EMD = LP/(nN)), ordered (m'-1) nN and
         * hierarchical H nN (costs |i-j| and level(LCA) before dividing) */
        const __int128 expect = distance == MODEL_T_EQUAL ? 2 * (__int128)lp : (__int128)lp;
        if (distance == MODEL_T_ORDERED && present <= 1) assert_true(numr == 0);
        else if (numr != expect)
            fail_msg("iteration %d, distance %u: closed form %lld, LP %lld", iter, distance, (long long)numr,
                     (long long)expect);
        checked[distance]++;
        /* the ordered distance's O(1) lower bound never rejects a class that holds */
        const uint32_t *rank = model_dist_weights(&(model_dist){0.5, MODEL_T_ORDERED, 0, 0, 0, NULL}, ref);
        if (distance == MODEL_T_ORDERED && rank) {
            uint64_t rsum = 0;
            uint32_t codes[MAXV], counts[MAXV];
            size_t nc = 0;
            for (int v = 0; v < m; v++)
                if (c[v]) {
                    rsum += (uint64_t)rank[v] * c[v];
                    codes[nc] = (uint32_t)v;
                    counts[nc++] = c[v];
                }
            model_work *w = model_work_new(ref);
            for (int k = 0; k <= 20; k++) {
                const model_dist md = {k / 20.0, MODEL_T_ORDERED, 0, 0, 0, NULL};
                if (model_dist_holds(&md, ref, w, n, codes, counts, nc))
                    assert_true(model_dist_may_hold(&md, ref, n, rsum));
                else rejected_by_bound += !model_dist_may_hold(&md, ref, n, rsum);
            }
            model_work_free(w);
        }
        model_ref_free(ref);
        model_shier_free(h);
        strmap_free(&d);
    }
    assert_true(checked[1] > 100 && checked[2] > 100 && checked[3] > 100);
    assert_true(rejected_by_bound > 100); /* the bound does reject */
    tu_rmtree(dir);
}

/* ---- δ and β against their direct formulas ---- */

/* Direct δ-disclosure: every value of the table in the class, |ln(pE/pT)| <= δ.
 * Returns -1 when the case is within 1e-9 of the bound (not judged). */
static int direct_delta(const uint64_t *q, const uint32_t *c, int m, double delta, double *worst)
{
    double N = 0, n = 0, w = 0;
    for (int v = 0; v < m; v++) {
        N += (double)q[v];
        n += c[v];
    }
    for (int v = 0; v < m; v++) {
        if (!q[v]) continue;
        if (!c[v]) w = INFINITY;
        else {
            const double x = fabs(log((c[v] / n) / (q[v] / N)));
            if (x > w) w = x;
        }
    }
    *worst = w;
    if (fabs(w - delta) < 1e-9) return -1;
    return w <= delta;
}

/* Direct β-likeness: (pE - pT)/pT <= β (enhanced: <= min(β, -ln pT)) for pE > pT. */
static int direct_beta(const uint64_t *q, const uint32_t *c, int m, double beta, int enhanced, double *worst)
{
    double N = 0, n = 0, w = 0;
    int holds = 1, near = 0;
    for (int v = 0; v < m; v++) {
        N += (double)q[v];
        n += c[v];
    }
    for (int v = 0; v < m; v++) {
        const double pe = c[v] / n, pt = q[v] / N;
        if (!(pe > pt)) continue;
        const double inc = (pe - pt) / pt;
        if (inc > w) w = inc;
        double bound = beta;
        if (enhanced && -log(pt) < bound) bound = -log(pt);
        if (fabs(inc - bound) < 1e-9) near = 1;
        if (inc > bound) holds = 0;
    }
    *worst = w;
    return near ? -1 : holds;
}

static void test_delta_beta_direct(void **state)
{
    (void)state;
    tu_rng rng = {7};
    int judged = 0, passes = 0, fails = 0;
    for (int iter = 0; iter < 3000; iter++) {
        const int m = 1 + (int)tu_below(&rng, MAXV);
        uint64_t q[MAXV];
        uint32_t c[MAXV], codes[MAXV], counts[MAXV];
        size_t nc = 0;
        uint64_t n = 0;
        const char *tp[MAXV];
        char texts[MAXV][16];
        for (int v = 0; v < m; v++) {
            q[v] = 1 + tu_below(&rng, 8);
            c[v] = (uint32_t)tu_below(&rng, q[v] + 1);
            if (tu_below(&rng, 3) == 0) c[v] = (uint32_t)q[v]; /* proportional classes pass */
            n += c[v];
            snprintf(texts[v], sizeof texts[v], "v%d", v);
            tp[v] = texts[v];
            if (c[v]) {
                codes[nc] = (uint32_t)v;
                counts[nc++] = c[v];
            }
        }
        if (!n) continue;
        strmap d;
        make_dict(&d, tp, (size_t)m);
        model_ref *ref = build(&d, q, MODEL_T_EQUAL, NULL);
        model_work *w = model_work_new(ref);
        const double delta = 0.05 + (double)tu_below(&rng, 300) / 100.0;
        const double beta = 0.05 + (double)tu_below(&rng, 300) / 100.0;
        const int enhanced = (int)tu_below(&rng, 2);
        double wd, wb;
        const int dd = direct_delta(q, c, m, delta, &wd), db = direct_beta(q, c, m, beta, enhanced, &wb);
        const model_dist md = {-1, 0, delta, 0, 0, NULL}, mb = {-1, 0, 0, beta, (unsigned)enhanced, NULL};
        if (dd >= 0) {
            assert_int_equal(model_dist_holds(&md, ref, w, n, codes, counts, nc), dd);
            judged++;
            if (dd) passes++;
            else fails++;
        }
        if (db >= 0) {
            assert_int_equal(model_dist_holds(&mb, ref, w, n, codes, counts, nc), db);
            judged++;
            if (db) passes++;
            else fails++;
        }
        /* the least δ and basic β of this one class */
        model_achieved ach;
        model_achieved_init(&ach);
        model_achieved_add(&ach, ref, w, n, codes, counts, nc);
        if (isinf(wd)) assert_true(isinf(ach.delta));
        else assert_true(fabs(ach.delta - wd) <= 1e-12 * (1 + wd));
        assert_true(fabs(ach.beta - wb) <= 1e-12 * (1 + wb));
        model_work_free(w);
        model_ref_free(ref);
        strmap_free(&d);
    }
    assert_true(judged > 4000 && passes > 500 && fails > 500);
}

/* Two classes that satisfy a model make a union that does ([Li07] §4.3 for
 * EMD; the ratio and increase bounds of δ and β are kept by weighted means):
 * each model is asked at the larger of the least parameters A and B achieve. */
static void test_union_property(void **state)
{
    (void)state;
    tu_rng rng = {99};
    const char *dir = tu_mkdtemp();
    char hpath[4200];
    snprintf(hpath, sizeof hpath, "%s/h.csv", dir);
    int unions = 0;
    for (int iter = 0; iter < 1500; iter++) {
        const int m = 2 + (int)tu_below(&rng, MAXV - 1);
        uint64_t q[MAXV];
        uint32_t ca[MAXV], cb[MAXV], cu[MAXV];
        char texts[MAXV][16];
        const char *tp[MAXV];
        const unsigned distance = 1 + (unsigned)tu_below(&rng, 3);
        for (int v = 0; v < m; v++) {
            ca[v] = (uint32_t)tu_below(&rng, 4);
            cb[v] = (uint32_t)tu_below(&rng, 4);
            cu[v] = ca[v] + cb[v];
            q[v] = cu[v] + tu_below(&rng, 4);
            if (!q[v]) q[v] = 1;
            if (distance == MODEL_T_ORDERED) snprintf(texts[v], sizeof texts[v], "%d", 3 * v - 5);
            else snprintf(texts[v], sizeof texts[v], "x%d", v);
            tp[v] = texts[v];
        }
        uint32_t codes[3][MAXV], counts[3][MAXV];
        size_t nn[3] = {0, 0, 0};
        uint64_t rows[3] = {0, 0, 0};
        const uint32_t *cls[3] = {ca, cb, cu};
        for (int k = 0; k < 3; k++)
            for (int v = 0; v < m; v++)
                if (cls[k][v]) {
                    codes[k][nn[k]] = (uint32_t)v;
                    counts[k][nn[k]++] = cls[k][v];
                    rows[k] += cls[k][v];
                }
        if (!rows[0] || !rows[1]) continue;
        strmap d;
        make_dict(&d, tp, (size_t)m);
        model_shier *h = NULL;
        if (distance == MODEL_T_HIERARCHICAL) {
            write_levels(hpath, m, 1 + (int)tu_below(&rng, 3));
            ak_error err;
            assert_int_equal(model_shier_read(&h, hpath, &err), ANONKIT_OK);
        }
        model_ref *ref = build(&d, q, distance, h);
        model_work *w = model_work_new(ref);
        model_achieved a, b;
        model_achieved_init(&a);
        model_achieved_init(&b);
        model_achieved_add(&a, ref, w, rows[0], codes[0], counts[0], nn[0]);
        model_achieved_add(&b, ref, w, rows[1], codes[1], counts[1], nn[1]);
        const double t = a.t > b.t ? a.t : b.t, beta = a.beta > b.beta ? a.beta : b.beta;
        const double delta = a.delta > b.delta ? a.delta : b.delta;
        const model_dist mt = {t, distance, 0, 0, 0, NULL}, mbeta = {-1, 0, 0, beta > 0 ? beta : 1, 0, NULL};
        for (int k = 0; k < 3; k++) {
            assert_true(model_dist_holds(&mt, ref, w, rows[k], codes[k], counts[k], nn[k]));
            assert_true(model_dist_holds(&mbeta, ref, w, rows[k], codes[k], counts[k], nn[k]));
        }
        if (!isinf(delta)) {
            const model_dist md = {-1, 0, delta > 0 ? delta : 1, 0, 0, NULL};
            for (int k = 0; k < 3; k++) assert_true(model_dist_holds(&md, ref, w, rows[k], codes[k], counts[k], nn[k]));
        }
        unions++;
        model_work_free(w);
        model_ref_free(ref);
        model_shier_free(h);
        strmap_free(&d);
    }
    assert_true(unions > 1000);
    tu_rmtree(dir);
}

/* Parameters: t in [0, 1], δ > 0, β > 0 (model_validate), and the names. */
static void test_parameters(void **state)
{
    (void)state;
    model m;
    model_init(&m);
    ak_error err;
    assert_false(model_has_dist(&m));
    assert_int_equal(model_validate(&m, &err), ANONKIT_OK);
    m.dist.t = 0;
    assert_true(model_has_dist(&m));
    assert_true(model_needs_sensitive(&m));
    assert_int_equal(model_validate(&m, &err), ANONKIT_OK);
    m.dist.t = 1.5;
    assert_int_equal(model_validate(&m, &err), ANONKIT_E_USAGE);
    m.dist.t = -1;
    m.dist.delta = -2;
    assert_int_equal(model_validate(&m, &err), ANONKIT_E_USAGE);
    m.dist.delta = 0;
    m.dist.beta = NAN;
    assert_int_equal(model_validate(&m, &err), ANONKIT_E_USAGE);
    unsigned x;
    assert_int_equal(model_parse_t_distance("hierarchical", &x), 0);
    assert_int_equal(x, MODEL_T_HIERARCHICAL);
    assert_int_equal(model_parse_t_distance("manhattan", &x), -1);
    assert_int_equal(model_parse_beta_variant("enhanced", &x), 0);
    assert_int_equal(x, MODEL_BETA_ENHANCED);
    assert_int_equal(model_parse_beta_variant("", &x), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_salary_example),    cmocka_unit_test(test_disease_example),
        cmocka_unit_test(test_emd_against_lp),    cmocka_unit_test(test_delta_beta_direct),
        cmocka_unit_test(test_union_property),    cmocka_unit_test(test_parameters),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
