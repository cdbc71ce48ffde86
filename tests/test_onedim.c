/* test_onedim.c — property tests of the 1-D anonymization of [Ghinita07]
 * (the mappings to one dimension: test_onedim_curve.c).
 *
 * - The k-anonymity DP against exhaustive search over all partitions of the
 *   sequence into consecutive groups of at least k rows (equal optimum, for
 *   the NCP cost and for the 1-D extent cost), with groups of k..2k-1 rows;
 *   and against the recurrence of Figure 3 computed directly (every group's
 *   cost from scratch) on longer sequences, for both costs, and on a table of
 *   40 QIs; cut into blocks down to one prefix on several threads, the DP
 *   gives every prefix's candidate costs and the groups to the bit.
 * - The l-diversity heuristic on random sensitive sequences: succeeds exactly
 *   on eligible ones, every group is l-diverse (counted here), and for a whole
 *   l it never needs the closing group. Its exchange step keeps every group's
 *   sensitive values and never raises the cost.
 * - Every algorithm on random tables through the public API, proven by the
 *   independent verifier; ineligible tables fail cleanly and write nothing.
 *   One thread or three, and the candidates weighed by the portable scalar
 *   code or with AVX, give the same partition.
 * - iDistance's k-means on a table of mostly one repeated tuple: distinct
 *   centres, each the nearest of some row (k-means++ start centres). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "algo/onedim/mapping.h"
#include "algo/onedim/onedim.h"
#include "core/hierarchy.h"
#include "anonkit/anonkit.h"
#include "core/partition.h"
#include "core/table.h"
#include "metrics/kl.h"
#include "metrics/metrics.h"
#include "model/model.h"
#include "testutil.h"

/* ------------------------------------------------------------ random tables -- */

#define MAX_QI 3
#define MAX_ROWS 300

/* The random tables (tu_random_table): 1 to max_rows rows, 1 to 3 QIs, half
 * of them categorical, numeric values -20, -17, ... over 1..6 or 1..60 of
 * them, 1 to 9 sensitive values with d0 dominant. */
typedef tu_table gen_table;

static void generate(tu_rng *rng, const char *dir, gen_table *g, size_t max_rows)
{
    const tu_table_shape shape = {
        .min_rows = 1, .rows_span = max_rows, .max_qi = MAX_QI, .categorical_one_in = 2,
        .numeric_small = 6, .numeric_large = 60, .scale = 3, .offset = -20,
        .max_sensitive = 9, .dominant_one_in = 3,
    };
    tu_random_table(rng, dir, &shape, g);
}

/* Loads the CSV at path with QIs names[0 .. nqi) (hierarchy paths[q], NULL
 * for numeric) and the given sensitive column (NULL: none). */
static table *load_csv(const char *path, size_t nqi, const char **names, const char **paths, const char *sensitive)
{
    table_spec spec = {0};
    spec.path = spec.display_name = path;
    spec.delimiter = ',';
    spec.nqi = nqi;
    spec.qi_names = names;
    spec.hierarchy_paths = paths;
    spec.sensitive_name = sensitive;
    table *t;
    ak_error err;
    if (table_load(&t, &spec, &err) != ANONKIT_OK) fail_msg("table_load: %s", err.message);
    return t;
}

static table *load(const gen_table *g)
{
    const char *names[MAX_QI], *paths[MAX_QI];
    static char name_buf[MAX_QI][16];
    for (int q = 0; q < g->nqi; q++) {
        snprintf(name_buf[q], sizeof name_buf[q], "a%d", q);
        names[q] = name_buf[q];
        paths[q] = g->categorical[q] ? g->hier_path[q] : NULL;
    }
    return load_csv(g->csv_path, (size_t)g->nqi, names, paths, "s");
}

/* |G| * weighted NCP of rows order[from .. to), from a fresh box. */
static double group_cost(const table *t, const uint32_t *order, size_t from, size_t to, const double *w)
{
    double sum = 0;
    for (uint32_t q = 0; q < t->nqi; q++) {
        uint32_t lo = UINT32_MAX, hi = 0;
        for (size_t i = from; i < to; i++) {
            const uint32_t c = t->qi[q].codes[order[i]];
            if (c < lo) lo = c;
            if (c > hi) hi = c;
        }
        sum += (w ? w[q] : 1.0) * table_ncp(t, q, lo, hi);
    }
    return (double)(to - from) * sum;
}

static double extent_cost(const double *gap, size_t from, size_t to)
{
    double e = 0;
    for (size_t i = from + 1; i < to; i++) e += gap[i];
    return (double)(to - from) * e;
}

/* The least cost over every partition of order[0..n) into consecutive groups
 * of at least k rows (no upper limit), by exhaustive enumeration of cut sets. */
static double brute_force(const table *t, const uint32_t *order, size_t n, uint64_t k, const double *w,
                          const double *gap)
{
    double best = INFINITY;
    for (uint64_t cuts = 0; cuts < (1ull << (n - 1)); cuts++) {
        double c = 0;
        size_t from = 0;
        int ok = 1;
        for (size_t i = 1; i <= n && ok; i++) {
            if (i < n && !((cuts >> (i - 1)) & 1)) continue;
            if (i - from < k) ok = 0;
            else c += gap ? extent_cost(gap, from, i) : group_cost(t, order, from, i, w);
            from = i;
        }
        if (ok && c < best) best = c;
    }
    return best;
}

static void test_dp_against_brute_force(void **state)
{
    (void)state;
    tu_rng rng = {4242};
    int runs = 0;
    for (int iter = 0; iter < 250; iter++) {
        char dir[4096];
        snprintf(dir, sizeof dir, "%s", tu_mkdtemp());
        gen_table g;
        generate(&rng, dir, &g, 13);
        table *t = load(&g);
        const size_t n = t->nrows;
        const uint64_t k = 1 + tu_below(&rng, n < 5 ? n : 5);
        uint32_t order[16];
        for (size_t i = 0; i < n; i++) order[i] = (uint32_t)i;
        for (size_t i = n; i > 1; i--) {
            size_t j = tu_below(&rng, i);
            uint32_t x = order[i - 1];
            order[i - 1] = order[j];
            order[j] = x;
        }
        double w[MAX_QI], gap[16];
        const int weighted = tu_below(&rng, 2) == 0;
        for (int q = 0; q < g.nqi; q++) w[q] = (double)(1 + tu_below(&rng, 4));
        gap[0] = 0;
        for (size_t i = 1; i < n; i++) gap[i] = tu_below(&rng, 3) ? (double)tu_below(&rng, 50) : 0;
        for (int variant = 0; variant < 3; variant++) { /* the Fast cost; the exact one by runs, by block boxes */
            const int fast = variant == 0;
            uint32_t sizes[16];
            size_t ngroups;
            double cost;
            ak_error err;
            const double *wp = weighted ? w : NULL, *gp = fast ? gap : NULL;
            const hil_tuning tune = {.runs_only = variant != 2};
            const int rc = hil_kanon_dp(t, order, n, k, wp, gp, 1, &tune, sizes, &ngroups, &cost, &err);
            assert_int_equal(rc, ANONKIT_OK);
            const double want = brute_force(t, order, n, k, wp, gp);
            if (fabs(cost - want) > 1e-9 * (1 + want))
                fail_msg("iteration %d (n=%zu k=%llu variant %d): DP %.12g, exhaustive %.12g", iter, n,
                         (unsigned long long)k, variant, cost, want);
            size_t from = 0;
            double recomputed = 0;
            for (size_t gi = 0; gi < ngroups; gi++) {
                assert_true(sizes[gi] >= k && sizes[gi] <= 2 * k - 1);
                recomputed += gp ? extent_cost(gp, from, from + sizes[gi]) : group_cost(t, order, from, from + sizes[gi], wp);
                from += sizes[gi];
            }
            assert_int_equal(from, n);
            assert_true(fabs(recomputed - cost) <= 1e-9 * (1 + cost));
            runs++;
        }
        table_free(t);
        tu_rmtree(dir);
    }
    assert_true(runs == 750);
}

/* The DP of [Ghinita07] Figure 3 written directly: every candidate group's cost from
 * a fresh box, or its extent summed afresh (O(n k^2 d)), for inputs too long
 * for exhaustive search. */
static double direct_dp(const table *t, const uint32_t *order, size_t n, uint64_t k, const double *w,
                        const double *gap)
{
    double *opt = malloc((n + 1) * sizeof *opt);
    assert_non_null(opt);
    opt[0] = 0;
    for (size_t i = 1; i <= n; i++) {
        opt[i] = INFINITY;
        for (size_t l = k; l <= 2 * k - 1 && l <= i; l++) {
            if (opt[i - l] == INFINITY) continue;
            const double c = opt[i - l] + (gap ? extent_cost(gap, i - l, i) : group_cost(t, order, i - l, i, w));
            if (c < opt[i]) opt[i] = c;
        }
    }
    const double best = opt[n];
    free(opt);
    return best;
}

/* Checks hil_kanon_dp on order[0..n) against direct_dp: the same optimum, and
 * groups of k..2k-1 rows whose recomputed cost is that optimum. With
 * `threads` threads, the exact DP in blocks of `block` prefixes (0: the
 * default size) must give the same groups and the same optimum, to the bit,
 * as one thread in one block. With runs_only, both cost by runs, never by
 * block boxes. */
static void check_dp_direct_with(const table *t, const uint32_t *order, size_t n, uint64_t k, const double *w,
                                 const double *gap, const char *what, unsigned threads, size_t block, int runs_only)
{
    uint32_t *sizes = malloc((n / k + 1) * sizeof *sizes), *sizes1 = malloc((n / k + 1) * sizeof *sizes1);
    assert_non_null(sizes);
    assert_non_null(sizes1);
    size_t ngroups, ngroups1;
    double cost, cost1;
    ak_error err;
    double *trace1 = calloc(n + 1, sizeof *trace1), *trace = calloc(n + 1, sizeof *trace);
    assert_non_null(trace1);
    assert_non_null(trace);
    const hil_tuning tune1 = {.runs_only = runs_only, .cost_trace = trace1},
                     tune = {.runs_only = runs_only, .block_rows = block, .cost_trace = trace};
    assert_int_equal(hil_kanon_dp(t, order, n, k, w, gap, 1, &tune1, sizes1, &ngroups1, &cost1, &err), ANONKIT_OK);
    const int rc = hil_kanon_dp(t, order, n, k, w, gap, threads, &tune, sizes, &ngroups, &cost, &err);
    assert_int_equal(rc, ANONKIT_OK);
    for (size_t i = k; !gap && i <= n; i++) /* every candidate's box, not only the chosen ones */
        if (trace[i] != trace1[i])
            fail_msg("%s (n=%zu k=%llu): the candidates of prefix %zu cost %.17g with %u threads in blocks of %zu, "
                     "%.17g with one", what, n, (unsigned long long)k, i, trace[i], threads, block, trace1[i]);
    free(trace);
    free(trace1);
    if (cost != cost1 || ngroups != ngroups1 || memcmp(sizes, sizes1, ngroups * sizeof *sizes))
        fail_msg("%s (n=%zu k=%llu): %u threads in blocks of %zu give %.17g in %zu groups, one thread %.17g in %zu",
                 what, n, (unsigned long long)k, threads, block, cost, ngroups, cost1, ngroups1);
    free(sizes1);
    const double want = direct_dp(t, order, n, k, w, gap);
    if (fabs(cost - want) > 1e-9 * (1 + want))
        fail_msg("%s (n=%zu k=%llu): DP %.15g, direct %.15g", what, n, (unsigned long long)k, cost, want);
    size_t from = 0;
    double recomputed = 0;
    for (size_t gi = 0; gi < ngroups; gi++) {
        assert_true(sizes[gi] >= k && sizes[gi] <= 2 * k - 1);
        recomputed += gap ? extent_cost(gap, from, from + sizes[gi]) : group_cost(t, order, from, from + sizes[gi], w);
        from += sizes[gi];
    }
    assert_int_equal(from, n);
    if (fabs(recomputed - cost) > 1e-9 * (1 + cost))
        fail_msg("%s: groups cost %.15g, DP says %.15g", what, recomputed, cost);
    free(sizes);
}

static void check_dp_direct(const table *t, const uint32_t *order, size_t n, uint64_t k, const double *w,
                            const double *gap, const char *what)
{
    check_dp_direct_with(t, order, n, k, w, gap, what, 1, 0, 0);
}

/* The exact DP's two ways of costing candidates on order[0..n): by block
 * boxes with AVX2 and with the scalar code must give the same groups and
 * cost to the bit; by runs the same optimum (their sums of NCPs round
 * differently, so ties may go other ways). Both against direct_dp. */
static void check_dp_boxes(const table *t, const uint32_t *order, size_t n, uint64_t k, const double *w,
                           const char *what)
{
    uint32_t *sizes[3];
    size_t ngroups[3];
    double cost[3];
    for (int v = 0; v < 3; v++) { /* block boxes with AVX2 (where the processor has it), scalar; runs */
        sizes[v] = malloc((n / k + 1) * sizeof *sizes[v]);
        assert_non_null(sizes[v]);
        const hil_tuning tune = {.scalar = v == 1, .runs_only = v == 2};
        ak_error err;
        const int rc = hil_kanon_dp(t, order, n, k, w, NULL, 1, &tune, sizes[v], &ngroups[v], &cost[v], &err);
        assert_int_equal(rc, ANONKIT_OK);
    }
    if (cost[0] != cost[1] || ngroups[0] != ngroups[1] || memcmp(sizes[0], sizes[1], ngroups[0] * sizeof *sizes[0]))
        fail_msg("%s (n=%zu k=%llu): block boxes give %.17g in %zu groups with AVX2, %.17g in %zu without", what, n,
                 (unsigned long long)k, cost[0], ngroups[0], cost[1], ngroups[1]);
    const double want = direct_dp(t, order, n, k, w, NULL);
    for (int v = 0; v < 3; v++) {
        if (fabs(cost[v] - want) > 1e-9 * (1 + want))
            fail_msg("%s (n=%zu k=%llu): way %d gives %.15g, direct %.15g", what, n, (unsigned long long)k, v, cost[v],
                     want);
        free(sizes[v]);
    }
}

/* The DP against the direct DP on longer sequences: random tables in random
 * or sorted order, and a table of 40 QIs (more than one word of marks), by
 * block boxes (with and without AVX2) and by runs (which grow a group's box
 * only at the rows that move one of its sides; one thread and several). */
static void test_dp_against_direct(void **state)
{
    (void)state;
    tu_rng rng = {8086};
    for (int iter = 0; iter < 60; iter++) {
        char dir[4096];
        snprintf(dir, sizeof dir, "%s", tu_mkdtemp());
        gen_table g;
        generate(&rng, dir, &g, MAX_ROWS);
        table *t = load(&g);
        const size_t n = t->nrows;
        const uint64_t k = 1 + tu_below(&rng, n < 25 ? n : 25);
        uint32_t order[MAX_ROWS];
        for (size_t i = 0; i < n; i++) order[i] = (uint32_t)i;
        if (tu_below(&rng, 3)) /* shuffled; else input order (sorted-like runs from the generator are rare) */
            for (size_t i = n; i > 1; i--) {
                size_t j = tu_below(&rng, i);
                uint32_t x = order[i - 1];
                order[i - 1] = order[j];
                order[j] = x;
            }
        double w[MAX_QI], gap[MAX_ROWS];
        for (int q = 0; q < g.nqi; q++) w[q] = (double)(1 + tu_below(&rng, 4));
        const double *wr = tu_below(&rng, 2) ? w : NULL;
        check_dp_direct(t, order, n, k, wr, NULL, "random table");
        check_dp_boxes(t, order, n, k, wr, "random table");
        /* by runs: blocks of a few prefixes (down to 1), each window led in afresh */
        check_dp_direct_with(t, order, n, k, wr, NULL, "random table, 3 threads", 3, 1 + tu_below(&rng, 40), 1);
        /* by block boxes: batches of a few prefixes costed on a thread of their own */
        check_dp_direct_with(t, order, n, k, wr, NULL, "random table, block boxes, 2 threads", 2, 1 + tu_below(&rng, 40),
                             0);
        /* the Fast cost: gaps of very different sizes (a huge one between runs of tiny ones) */
        gap[0] = 0;
        for (size_t i = 1; i < n; i++)
            gap[i] = tu_below(&rng, 40) == 0 ? 1e12 : tu_below(&rng, 3) ? (double)tu_below(&rng, 1000) * 1e-6 : 0;
        check_dp_direct(t, order, n, k, NULL, gap, "random gaps");
        /* batches of a few prefixes on two threads, each led in afresh */
        check_dp_direct_with(t, order, n, k, NULL, gap, "random gaps, 2 threads", 2, 1 + tu_below(&rng, 40), 0);
        table_free(t);
        tu_rmtree(dir);
    }
    /* 40 numeric QIs with few distinct values: many ties in the sliding queues */
    enum { WIDE = 40, WROWS = 150 };
    const char *dir = tu_mkdtemp();
    char path[4200];
    snprintf(path, sizeof path, "%s/wide.csv", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    for (int q = 0; q < WIDE; q++) fprintf(f, "%sa%d", q ? "," : "", q);
    fprintf(f, "\n");
    for (int r = 0; r < WROWS; r++)
        for (int q = 0; q < WIDE; q++) fprintf(f, "%d%s", (int)tu_below(&rng, q % 3 ? 4 : 50), q + 1 < WIDE ? "," : "\n");
    fclose(f);
    const char *names[WIDE], *paths[WIDE] = {0};
    static char name_buf[WIDE][8];
    for (int q = 0; q < WIDE; q++) {
        snprintf(name_buf[q], sizeof name_buf[q], "a%d", q);
        names[q] = name_buf[q];
    }
    table *t = load_csv(path, WIDE, names, paths, NULL);
    uint32_t order[WROWS];
    for (size_t i = 0; i < WROWS; i++) order[i] = (uint32_t)i;
    for (uint64_t k = 1; k <= 12; k += 1 + k / 3) {
        check_dp_direct(t, order, WROWS, k, NULL, NULL, "40 QIs");
        check_dp_boxes(t, order, WROWS, k, NULL, "40 QIs");
        check_dp_direct_with(t, order, WROWS, k, NULL, NULL, "40 QIs, 2 threads", 2, 7 + k, 1);
        check_dp_direct_with(t, order, WROWS, k, NULL, NULL, "40 QIs, block boxes, 2 threads", 2, 3 + k, 0);
    }
    table_free(t);
    tu_rmtree(dir);
}

/* --------------------------------------------------------------- l-diversity -- */

static void test_ldiv_heuristic(void **state)
{
    (void)state;
    tu_rng rng = {99};
    int eligible = 0, ineligible = 0;
    enum { N = 400 };
    uint32_t sa[N], group_of[N], counts[N][16];
    long double pos[N];
    size_t size[N];
    for (int iter = 0; iter < 600; iter++) {
        const size_t n = 1 + tu_below(&rng, N);
        const uint32_t m = 1 + (uint32_t)tu_below(&rng, 12);
        const int whole = tu_below(&rng, 4) != 0;
        const double l = whole ? (double)(1 + tu_below(&rng, 5)) : 1 + (double)tu_below(&rng, 400) / 100.0;
        const uint32_t skew = (uint32_t)tu_below(&rng, m);
        uint32_t hist[16] = {0}, top = 0;
        long double at = 0;
        for (size_t i = 0; i < n; i++) {
            sa[i] = (uint32_t)tu_below(&rng, m);
            if (tu_below(&rng, 4) == 0) sa[i] = skew;
            if (++hist[sa[i]] > top) top = hist[sa[i]];
            at += tu_below(&rng, 3) ? (long double)tu_below(&rng, 100) : 0;
            pos[i] = at;
        }
        hil_stats st;
        memset(&st, 0, sizeof st);
        size_t ngroups;
        ak_error err;
        int rc = hil_ldiv(sa, pos, n, m, l, NULL, group_of, &ngroups, &st, &err);
        if ((double)top * l > (double)n) {
            assert_int_equal(rc, ANONKIT_E_INELIGIBLE);
            ineligible++;
            continue;
        }
        if (rc != ANONKIT_OK) fail_msg("iteration %d: eligible sequence failed: %s", iter, err.message);
        eligible++;
        assert_true(ngroups >= 1 && ngroups <= n);
        memset(size, 0, ngroups * sizeof *size);
        memset(counts, 0, ngroups * sizeof counts[0]);
        for (size_t i = 0; i < n; i++) {
            assert_true(group_of[i] < ngroups);
            size[group_of[i]]++;
            counts[group_of[i]][sa[i]]++;
        }
        for (size_t gi = 0; gi < ngroups; gi++) {
            assert_true(size[gi] > 0);
            for (uint32_t v = 0; v < m; v++)
                if ((double)counts[gi][v] * l > (double)size[gi])
                    fail_msg("iteration %d: group %zu has value %u %u times of %zu (l = %g)", iter, gi, v,
                             counts[gi][v], size[gi], l);
        }
        if (whole) assert_int_equal(st.closing_groups, 0); /* [Ghinita07] §4.2: always a group for a whole l */
    }
    assert_true(eligible > 150);
    assert_true(ineligible > 50);
}

/* Sum over groups of |G| times the weighted NCP of the group's box. */
static double groups_cost(const table *t, const uint32_t *order, const uint32_t *group_of, size_t n, size_t ngroups)
{
    double total = 0;
    uint32_t *mem = malloc(n * sizeof *mem);
    assert_non_null(mem);
    for (size_t g = 0; g < ngroups; g++) {
        size_t c = 0;
        for (size_t i = 0; i < n; i++)
            if (group_of[i] == g) mem[c++] = order[i];
        total += group_cost(t, mem, 0, c, NULL);
    }
    free(mem);
    return total;
}

/* The exchange step on the heuristic's groups of random tables: every group
 * keeps its size and its sensitive values (so its l-diversity), at most two
 * rows move per exchange, and the total cost does not grow (it falls on some
 * tables). */
static void test_ldiv_exchange(void **state)
{
    (void)state;
    tu_rng rng = {9090};
    int lowered = 0, runs = 0;
    for (int iter = 0; iter < 200; iter++) {
        char dir[4096];
        snprintf(dir, sizeof dir, "%s", tu_mkdtemp());
        gen_table g;
        generate(&rng, dir, &g, MAX_ROWS);
        table *t = load(&g);
        const size_t n = t->nrows;
        const uint32_t m = t->sensitive_dict.count;
        uint32_t order[MAX_ROWS], sa[MAX_ROWS], before[MAX_ROWS], after[MAX_ROWS];
        long double pos[MAX_ROWS];
        for (size_t i = 0; i < n; i++) order[i] = (uint32_t)i;
        for (size_t i = n; i > 1; i--) {
            size_t j = tu_below(&rng, i);
            uint32_t x = order[i - 1];
            order[i - 1] = order[j];
            order[j] = x;
        }
        for (size_t i = 0; i < n; i++) {
            sa[i] = t->sensitive_codes[order[i]];
            pos[i] = (long double)i;
        }
        const double l = (double)(2 + tu_below(&rng, 2));
        const hil_rows rows = {t, order, NULL};
        size_t ngroups;
        hil_stats st;
        memset(&st, 0, sizeof st);
        ak_error err;
        if (hil_ldiv(sa, pos, n, m, l, &rows, before, &ngroups, &st, &err) != ANONKIT_OK) { /* ineligible */
            table_free(t);
            tu_rmtree(dir);
            continue;
        }
        memcpy(after, before, n * sizeof *after);
        assert_int_equal(hil_ldiv_exchange(sa, m, n, &rows, after, ngroups, &st, &err), ANONKIT_OK);
        for (uint32_t gi = 0; gi < ngroups; gi++) {
            uint32_t hb[16] = {0}, ha[16] = {0};
            for (size_t i = 0; i < n; i++) {
                if (before[i] == gi) hb[sa[i]]++;
                if (after[i] == gi) ha[sa[i]]++;
            }
            assert_memory_equal(hb, ha, sizeof hb); /* the same sensitive values, so the same size */
        }
        size_t moved = 0;
        for (size_t i = 0; i < n; i++) {
            assert_true(after[i] < ngroups);
            moved += after[i] != before[i];
        }
        assert_true(moved <= 2 * st.exchanges);
        assert_true(moved > 0 || st.exchanges == 0);
        const double cb = groups_cost(t, order, before, n, ngroups), ca = groups_cost(t, order, after, n, ngroups);
        if (ca > cb + 1e-9 * (1 + cb)) fail_msg("iteration %d: the exchanges raised the cost from %.12g to %.12g", iter, cb, ca);
        if (ca < cb - 1e-9 * (1 + cb)) lowered++;
        runs++;
        table_free(t);
        tu_rmtree(dir);
    }
    if (runs < 40 || lowered < 10) fail_msg("%d runs, %d lowered the cost", runs, lowered);
}

/* ---------------------------------------------------- whole runs + verifier -- */

static const char *const algorithms[] = {"hilbert", "hilbert-fast", "idistance", "idistance-fast"};

static void test_random_tables_verified(void **state)
{
    (void)state;
    tu_rng rng = {20070923};
    int eligible_runs = 0, ineligible_runs = 0;
    for (int iter = 0; iter < 120; iter++) {
        char dir[4096];
        snprintf(dir, sizeof dir, "%s", tu_mkdtemp());
        gen_table g;
        generate(&rng, dir, &g, MAX_ROWS);
        anonkit_job *job = anonkit_job_create();
        tu_job_table(job, &g);
        const char *algo = algorithms[iter % 4];
        assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_ALGORITHM, algo), ANONKIT_OK);
        model m;
        model_init(&m);
        m.k = 1 + tu_below(&rng, tu_below(&rng, 4) == 0 ? g.nrows + 2 : 12);
        char text[64];
        snprintf(text, sizeof text, "%llu", (unsigned long long)m.k);
        assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_K, text), ANONKIT_OK);
        if (tu_below(&rng, 2) == 0) {
            m.l = (double)(1 + tu_below(&rng, 4));
            m.l_variants = MODEL_L_PROBABILISTIC;
            snprintf(text, sizeof text, "%g", m.l);
            assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_L, text), ANONKIT_OK);
        }
        if (tu_below(&rng, 3) == 0) assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_MEMORY, "4K"), ANONKIT_OK);
        if (tu_below(&rng, 3) == 0) {
            snprintf(text, sizeof text, "%llu", (unsigned long long)(1 + tu_below(&rng, 20)));
            assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_CENTERS, text), ANONKIT_OK);
        }
        const char *out = tu_path(dir, "out.csv");
        assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_OUTPUT, out), ANONKIT_OK);
        uint32_t hist[16] = {0}, top = 0, distinct = 0;
        for (size_t r = 0; r < g.nrows; r++) {
            if (!hist[g.sensitive[r]]++) distinct++;
            if (hist[g.sensitive[r]] > top) top = hist[g.sensitive[r]];
        }
        const int eligible = m.k <= g.nrows && (m.l == 0 || ((double)top * m.l <= (double)g.nrows && m.l <= distinct));
        char what[64];
        snprintf(what, sizeof what, "iteration %d (%s)", iter, algo);
        anonkit_result *res = tu_anonymize(job, out, eligible, what);
        if (!eligible) {
            ineligible_runs++;
        } else {
            assert_int_equal(anonkit_result_rows_published(res), g.nrows);
            /* the verifier checks the variant the 1-D algorithms guarantee */
            if (m.l > 0) assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_L_VARIANT, "probabilistic"), ANONKIT_OK);
            assert_int_equal(tu_verify(job, out, what, NULL), g.nrows);
            /* the partition itself: class sizes, and k..2k-1 for k-anonymity alone */
            table *t = load(&g);
            partition p;
            ak_error err;
            assert_int_equal(partition_init(&p, t->nrows, t->nqi, &err), ANONKIT_OK);
            hil_options o = {0};
            assert_int_equal(hil_parse_algorithm(algo, &o), 0);
            o.seed = 1;
            assert_int_equal(hil_run(t, &m, &o, &p, NULL, &err), ANONKIT_OK);
            uint64_t total = 0;
            for (size_t c = 0; c < p.nclasses; c++) {
                assert_true(p.count[c] >= m.k);
                if (m.l == 0) assert_true(p.count[c] <= 2 * m.k - 1);
                total += p.count[c];
            }
            assert_int_equal(total, g.nrows);
            for (size_t r = 0; r < g.nrows; r++) { /* every box covers its rows */
                const uint32_t c = p.class_of[r];
                assert_true(c < p.nclasses);
                for (uint32_t q = 0; q < t->nqi; q++) {
                    assert_true(t->qi[q].codes[r] >= partition_lo(&p, c)[q]);
                    assert_true(t->qi[q].codes[r] <= partition_hi(&p, c)[q]);
                }
            }
            partition_free(&p);
            table_free(t);
            eligible_runs++;
        }
        anonkit_result_free(res);
        anonkit_job_free(job);
        tu_rmtree(dir);
    }
    assert_true(eligible_runs > 50);
    assert_true(ineligible_runs > 5);
}

/* The same partition in memory and through the external sort. */
static void test_memory_budget_same_result(void **state)
{
    (void)state;
    tu_rng rng = {31};
    for (int iter = 0; iter < 8; iter++) {
        char dir[4096];
        snprintf(dir, sizeof dir, "%s", tu_mkdtemp());
        gen_table g;
        generate(&rng, dir, &g, MAX_ROWS);
        table *t = load(&g);
        model m;
        model_init(&m);
        m.k = 1 + tu_below(&rng, 4);
        if (m.k > t->nrows) m.k = t->nrows;
        partition a, b;
        ak_error err;
        hil_options o = {0};
        assert_int_equal(hil_parse_algorithm(algorithms[iter % 4], &o), 0);
        o.seed = 9;
        assert_int_equal(partition_init(&a, t->nrows, t->nqi, &err), ANONKIT_OK);
        assert_int_equal(partition_init(&b, t->nrows, t->nqi, &err), ANONKIT_OK);
        assert_int_equal(hil_run(t, &m, &o, &a, NULL, &err), ANONKIT_OK);
        o.memory = 2048;
        hil_stats st;
        assert_int_equal(hil_run(t, &m, &o, &b, &st, &err), ANONKIT_OK);
        if (t->nrows > 200) assert_true(st.sort_runs > 1);
        assert_int_equal(a.nclasses, b.nclasses);
        assert_memory_equal(a.class_of, b.class_of, t->nrows * sizeof *a.class_of);
        partition_free(&a);
        partition_free(&b);
        table_free(t);
        tu_rmtree(dir);
    }
}

/* A table of `rows` rows and 4 QIs (two numeric with many values, one
 * categorical with a random hierarchy, one numeric with few values) and a
 * sensitive column of 6 values, for runs large enough to take several
 * threads. */
static table *load_large(tu_rng *rng, const char *dir, size_t rows)
{
    char csv[4200], hier[4200];
    snprintf(csv, sizeof csv, "%s/large.csv", dir);
    snprintf(hier, sizeof hier, "%s/h.csv", dir);
    const int nleaves = tu_write_random_hierarchy(rng, hier, 2);
    FILE *f = fopen(csv, "w");
    assert_non_null(f);
    fprintf(f, "a,b,c,e,s\n");
    for (size_t r = 0; r < rows; r++)
        fprintf(f, "%d,%d,v%d,%d,s%d\n", (int)tu_below(rng, 100000), (int)tu_below(rng, 5000),
                (int)tu_below(rng, (uint64_t)nleaves), (int)tu_below(rng, 7), (int)tu_below(rng, 6));
    fclose(f);
    const char *names[] = {"a", "b", "c", "e"}, *paths[] = {NULL, NULL, hier, NULL};
    return load_csv(csv, 4, names, paths, "s");
}

/* iDistance's k-means start centres on a table where most rows repeat one
 * QI tuple (as on real tables such as mach2019): k-means++ seeding never
 * takes a tuple twice while others remain, so every centre ends up distinct
 * and the nearest centre of some row (start points drawn uniformly from the
 * sample put most centres on the frequent tuple, and all but one of those
 * stay empty). */
static void test_idistance_centres_on_repeated_tuples(void **state)
{
    (void)state;
    char dir[4096], csv[4200];
    snprintf(dir, sizeof dir, "%s", tu_mkdtemp());
    snprintf(csv, sizeof csv, "%s/rep.csv", dir);
    FILE *f = fopen(csv, "w");
    assert_non_null(f);
    fprintf(f, "a,b,s\n");
    for (int r = 0; r < 20000; r++) /* 90 % one tuple, the rest 400 tuples 5 times each */
        if (r % 10) fprintf(f, "0,0,s%d\n", r % 3);
        else fprintf(f, "%d,%d,s%d\n", 1 + r / 10 % 20, 1 + r / 200 % 20, r % 3);
    fclose(f);
    const char *names[] = {"a", "b"}, *paths[] = {NULL, NULL};
    table *t = load_csv(csv, 2, names, paths, "s");
    ak_error err;
    for (uint64_t seed = 1; seed <= 4; seed++) {
        hil_options o = {0};
        o.mapping = HIL_MAP_IDISTANCE;
        o.centers = 32;
        o.seed = seed;
        hil_mapper mp;
        assert_int_equal(hil_mapper_init(&mp, t, &o, &err), ANONKIT_OK);
        assert_int_equal(mp.ncenters, 32);
        for (size_t i = 0; i < mp.ncenters; i++)
            for (size_t j = 0; j < i; j++)
                assert_memory_not_equal(mp.centers + i * 2, mp.centers + j * 2, 2 * sizeof *mp.centers);
        char used[32] = {0};
        size_t nused = 0;
        for (size_t r = 0; r < t->nrows; r++) {
            uint64_t key[2];
            hil_mapper_key(&mp, t, r, key);
            assert_true(key[0] < 32);
            nused += !used[key[0]];
            used[key[0]] = 1;
        }
        assert_int_equal(nused, 32);
        hil_mapper_free(&mp);
    }
    table_free(t);
    tu_rmtree(dir);
}

/* The same partition with one thread and with several (the keys, the
 * k-means assignments), for every algorithm, under k and under l; and the
 * same with the DP's candidates weighed by the portable scalar code as with
 * AVX (when the processor has it) and the nearest centres found by the tree,
 * which gives k-means no bound to skip a search by, as by the scan. */
static void test_threads_and_simd_same_result(void **state)
{
    (void)state;
    tu_rng rng = {77};
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", tu_mkdtemp());
    table *t = load_large(&rng, dir, 40000); /* the k-means sample (10 %) is large enough for 3 threads */
    for (int a = 0; a < 4; a++)
        for (int ldiv = 0; ldiv < 2; ldiv++) {
            model m;
            model_init(&m);
            m.k = ldiv ? 0 : 7 + 13 * (uint64_t)a;
            if (ldiv) {
                m.l = 3;
                m.l_variants = MODEL_L_PROBABILISTIC;
            }
            hil_options o = {0};
            assert_int_equal(hil_parse_algorithm(algorithms[a], &o), 0);
            o.seed = 5;
            o.centers = 64;
            partition one, many, scalar;
            ak_error err;
            assert_int_equal(partition_init(&one, t->nrows, t->nqi, &err), ANONKIT_OK);
            assert_int_equal(partition_init(&many, t->nrows, t->nqi, &err), ANONKIT_OK);
            assert_int_equal(partition_init(&scalar, t->nrows, t->nqi, &err), ANONKIT_OK);
            o.threads = 1;
            assert_int_equal(hil_run(t, &m, &o, &one, NULL, &err), ANONKIT_OK);
            o.threads = 3;
            assert_int_equal(hil_run(t, &m, &o, &many, NULL, &err), ANONKIT_OK);
            const hil_tuning scalar_dp = {.scalar = 1, .tree_search = 1};
            o.tuning = &scalar_dp;
            o.threads = 1;
            assert_int_equal(hil_run(t, &m, &o, &scalar, NULL, &err), ANONKIT_OK);
            o.tuning = NULL;
            assert_int_equal(one.nclasses, many.nclasses);
            assert_memory_equal(one.class_of, many.class_of, t->nrows * sizeof *one.class_of);
            assert_int_equal(one.nclasses, scalar.nclasses);
            assert_memory_equal(one.class_of, scalar.class_of, t->nrows * sizeof *one.class_of);
            partition_free(&one);
            partition_free(&many);
            partition_free(&scalar);
        }
    table_free(t);
    tu_rmtree(dir);
}

/* Options: names, sizes, and the models the 1-D algorithms refuse. */
static void test_options(void **state)
{
    (void)state;
    anonkit_job *job = anonkit_job_create();
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_ALGORITHM, "hilbert-fast"), ANONKIT_OK);
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_ALGORITHM, "hilbertfast"), ANONKIT_E_USAGE);
    assert_non_null(strstr(anonkit_errmsg(job), "idistance-fast"));
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_MEMORY, "512M"), ANONKIT_OK);
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_MEMORY, "1.5G"), ANONKIT_OK);
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_MEMORY, "12X"), ANONKIT_E_USAGE);
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_MEMORY, "-1"), ANONKIT_E_USAGE);
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_BITS, "0"), ANONKIT_E_USAGE);
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_BITS, "32"), ANONKIT_E_USAGE);
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_BITS, "31"), ANONKIT_OK);
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_CENTERS, "0"), ANONKIT_E_USAGE);
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_KL_LEVEL, "0"), ANONKIT_E_USAGE);
    assert_string_equal(anonkit_option_name(ANONKIT_OPT_MEMORY), "memory");
    anonkit_job_free(job);

    const char *dir = tu_mkdtemp();
    char in[4200], out[4200];
    snprintf(in, sizeof in, "%s/in.csv", dir);
    snprintf(out, sizeof out, "%s/out.csv", dir);
    tu_write_file(in, "x,s\n1,a\n2,b\n3,a\n4,b\n5,c\n6,c\n");
    job = anonkit_job_create();
    anonkit_job_set(job, ANONKIT_OPT_INPUT, in);
    anonkit_job_set(job, ANONKIT_OPT_OUTPUT, out);
    anonkit_job_set(job, ANONKIT_OPT_QI, "x");
    anonkit_job_set(job, ANONKIT_OPT_SENSITIVE, "s");
    anonkit_job_set(job, ANONKIT_OPT_ALGORITHM, "hilbert");
    anonkit_job_set(job, ANONKIT_OPT_L, "2");
    anonkit_job_set(job, ANONKIT_OPT_L_VARIANT, "entropy");
    anonkit_result *res = NULL;
    assert_int_equal(anonkit_anonymize(job, &res), ANONKIT_E_USAGE);
    assert_non_null(strstr(anonkit_errmsg(job), "probabilistic"));
    assert_int_not_equal(access(out, F_OK), 0);
    anonkit_job_set(job, ANONKIT_OPT_L_VARIANT, "probabilistic");
    assert_int_equal(anonkit_anonymize(job, &res), ANONKIT_OK);
    anonkit_result_free(res);
    tu_write_file(in, "x,s\n1,1\n2,5\n3,1\n4,5\n5,9\n6,9\n");
    anonkit_job_set(job, ANONKIT_OPT_VARIANCE, "1");
    assert_int_equal(anonkit_anonymize(job, &res), ANONKIT_E_USAGE);
    assert_non_null(strstr(anonkit_errmsg(job), "variance"));
    anonkit_job_free(job);
    tu_rmtree(dir);
}

/* ------------------------------------------------------------ KL-divergence -- */

/* The divergence of one group-by by direct enumeration of every cell. */
static double brute_kl_groupby(const table *t, const kl_published *pub, const uint32_t *dims, unsigned level)
{
    uint32_t cell[MAX_QI] = {0};
    double kl = 0;
    for (uint32_t v = 0; v < t->sensitive_dict.count; v++) {
        memset(cell, 0, sizeof cell);
        for (;;) {
            double p = 0, q = 0;
            for (size_t r = 0; r < t->nrows; r++) {
                int in = t->sensitive_codes[r] == v;
                for (unsigned j = 0; j < level && in; j++) in = t->qi[dims[j]].codes[r] == cell[j];
                p += in;
            }
            for (size_t r = 0; r < pub->nrows; r++) {
                if (pub->sa[r] != v) continue;
                double share = 1;
                for (unsigned j = 0; j < level; j++) {
                    const uint32_t lo = pub->lo[r * t->nqi + dims[j]], hi = pub->hi[r * t->nqi + dims[j]];
                    share *= cell[j] >= lo && cell[j] <= hi ? 1.0 / (hi - lo + 1) : 0;
                }
                q += share;
            }
            if (p > 0) kl += p / (double)t->nrows * log((p / (double)t->nrows) / (q / (double)pub->nrows));
            unsigned j = 0;
            while (j < level && ++cell[j] == t->qi[dims[j]].ncodes) cell[j++] = 0;
            if (j == level) break;
        }
    }
    return kl;
}

static void test_kl_divergence(void **state)
{
    (void)state;
    tu_rng rng = {613};
    for (int iter = 0; iter < 60; iter++) {
        char dir[4096];
        snprintf(dir, sizeof dir, "%s", tu_mkdtemp());
        gen_table g;
        generate(&rng, dir, &g, 40);
        table *t = load(&g);
        const size_t n = t->nrows, d = t->nqi;
        uint32_t lo[40 * MAX_QI], hi[40 * MAX_QI], sa[40];
        /* the original itself: divergence 0 at every level */
        for (size_t r = 0; r < n; r++) {
            for (size_t q = 0; q < d; q++) lo[r * d + q] = hi[r * d + q] = t->qi[q].codes[r];
            sa[r] = t->sensitive_codes[r];
        }
        kl_published pub = {n, lo, hi, sa};
        double mean;
        size_t groupbys;
        ak_error err;
        for (unsigned level = 1; level <= d; level++) {
            assert_int_equal(metrics_kl_divergence(t, &pub, level, &mean, &groupbys, &err), ANONKIT_OK);
            assert_true(fabs(mean) < 1e-12);
        }
        /* random truthful boxes: the mean over group-bys equals direct enumeration */
        for (size_t r = 0; r < n; r++)
            for (size_t q = 0; q < d; q++) {
                const uint32_t c = t->qi[q].codes[r], nc = t->qi[q].ncodes;
                lo[r * d + q] = c - (uint32_t)tu_below(&rng, c + 1);
                hi[r * d + q] = c + (uint32_t)tu_below(&rng, nc - c);
            }
        const unsigned level = 1 + (unsigned)tu_below(&rng, d);
        assert_int_equal(metrics_kl_divergence(t, &pub, level, &mean, &groupbys, &err), ANONKIT_OK);
        double want = 0;
        size_t count = 0;
        for (uint32_t mask = 0; mask < (1u << d); mask++) {
            if ((unsigned)__builtin_popcount(mask) != level) continue;
            uint32_t dims[MAX_QI];
            unsigned nd = 0;
            for (uint32_t q = 0; q < d; q++)
                if (mask >> q & 1) dims[nd++] = q;
            want += brute_kl_groupby(t, &pub, dims, level);
            count++;
        }
        assert_int_equal(groupbys, count);
        want /= (double)count;
        if (fabs(mean - want) > 1e-9 * (1 + fabs(want))) fail_msg("iteration %d: KL %.15g, direct %.15g", iter, mean, want);
        assert_true(mean >= -1e-12);
        table_free(t);
        tu_rmtree(dir);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dp_against_brute_force),
        cmocka_unit_test(test_dp_against_direct),
        cmocka_unit_test(test_ldiv_heuristic),
        cmocka_unit_test(test_ldiv_exchange),
        cmocka_unit_test(test_random_tables_verified),
        cmocka_unit_test(test_memory_budget_same_result),
        cmocka_unit_test(test_idistance_centres_on_repeated_tuples),
        cmocka_unit_test(test_threads_and_simd_same_result),
        cmocka_unit_test(test_options),
        cmocka_unit_test(test_kl_divergence),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
