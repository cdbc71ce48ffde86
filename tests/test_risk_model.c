/* test_risk_model.c — --max-risk as a privacy model (src/model/risk_model.c,
 * docs/risk.md §6). On random tables over random hierarchies, the brute force
 * summarizes the classes of every lattice node (rows grouped by their
 * hierarchy ancestors, hier_ancestor) and checks the monotonicity each
 * predicate relies on: a node that satisfies average=R, uniqueness=R or
 * highest=R has every direct generalization satisfy it. Then every Incognito
 * variant, given the predicate, must return exactly the nodes the brute
 * force finds anonymous. highest=R is checked to be k-anonymity with
 * k = ceil(1/R). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algo/incognito/incognito.h"
#include "anonkit/anonkit.h"
#include "core/hierarchy.h"
#include "core/table.h"
#include "model/model.h"
#include "model/risk_model.h"
#include "lattice_table.h"
#include "testutil.h"

#define MAX_NODES 4096


/* The summary of the classes at node `levels`, from the rows' ancestors. */
static risk_summary brute_summary(const gen_table *g, const table *t, const uint32_t *levels)
{
    static uint32_t anc[MAX_ROWS][MAX_QI];
    for (size_t r = 0; r < g->nrows; r++)
        for (int q = 0; q < g->nqi; q++) anc[r][q] = hier_ancestor(t->qi[q].h, lattice_leaf_of(g, t, r, q), levels[q]);
    risk_summary s = {0, 0, 0, 0};
    static unsigned char seen[MAX_ROWS];
    memset(seen, 0, sizeof seen);
    for (size_t r = 0; r < g->nrows; r++) {
        if (seen[r]) continue;
        uint64_t size = 0;
        for (size_t o = r; o < g->nrows; o++)
            if (!seen[o] && !memcmp(anc[r], anc[o], (size_t)g->nqi * sizeof(uint32_t))) {
                seen[o] = 1;
                size++;
            }
        /* by hand, not risk_summary_add */
        s.rows += size;
        s.classes++;
        s.uniques += size == 1;
        if (s.classes == 1 || size < s.smallest) s.smallest = size;
    }
    return s;
}

/* The predicates from their definitions (docs/risk.md §6). */
static int brute_holds(const risk_model *r, const risk_summary *s)
{
    const double N = r->population_size > 0 ? r->population_size : (double)s->rows;
    if (r->average > 0 && (double)s->classes / (double)s->rows > r->average) return 0;
    if (r->highest > 0 && 1.0 / (double)s->smallest > r->highest) return 0;
    if (r->uniqueness > 0 && (double)s->uniques / N > r->uniqueness) return 0;
    return 1;
}

static void test_monotone_and_incognito_agrees(void **state)
{
    (void)state;
    static uint32_t nodes[MAX_NODES * MAX_QI];
    static risk_summary sum[MAX_NODES];
    tu_rng rng = {4242};
    const char *dir = tu_mkdtemp();
    int checked_pairs = 0, cases = 0;
    for (int round = 0; round < 60; round++) {
        gen_table g;
        lattice_generate(&rng, dir, &g);
        table *t;
        lattice_load(&g, &t);
        const uint32_t nqi = t->nqi;
        const size_t n = lattice_all_nodes(t, nodes, MAX_NODES);
        for (size_t i = 0; i < n; i++) sum[i] = brute_summary(&g, t, nodes + i * nqi);
        for (int which = 0; which < 3; which++) {
            risk_model rm = {0, 0, 0, 0};
            const double R = (double)(1 + tu_below(&rng, 20)) / 40.0;
            if (which == 0) rm.average = R;
            else if (which == 1) rm.highest = R;
            else {
                rm.uniqueness = R / 4;
                rm.population_size = tu_below(&rng, 2) ? (double)g.nrows * (1 + (double)tu_below(&rng, 5)) : 0;
            }
            /* monotonicity: satisfied at a node => satisfied at each direct generalization */
            for (size_t i = 0; i < n; i++) {
                const int holds = brute_holds(&rm, &sum[i]);
                assert_int_equal(risk_model_holds(&rm, &sum[i]), holds);
                if (!holds) continue;
                for (size_t j = 0; j < n; j++) {
                    uint32_t diff = 0, up = 0;
                    for (uint32_t q = 0; q < nqi; q++) {
                        diff += nodes[j * nqi + q] != nodes[i * nqi + q];
                        up += nodes[j * nqi + q] == nodes[i * nqi + q] + 1;
                    }
                    if (diff == 1 && up == 1) {
                        if (!brute_holds(&rm, &sum[j])) fail_msg("not monotone: predicate %d, node %zu -> %zu", which, i, j);
                        checked_pairs++;
                    }
                }
            }
            if (which == 1) {
                /* highest=R is k-anonymity with k = ceil(1/R) */
                const uint64_t k = (uint64_t)ceil(1.0 / R - 1e-12);
                assert_int_equal(risk_model_k(R), k);
                for (size_t i = 0; i < n; i++) assert_int_equal(brute_holds(&rm, &sum[i]), sum[i].smallest >= k);
                continue;
            }
            /* Incognito with the predicate, every variant, against the brute force */
            model m;
            model_init(&m);
            size_t na = 0;
            static uint32_t anon[MAX_NODES * MAX_QI];
            for (size_t i = 0; i < n; i++)
                if (brute_holds(&rm, &sum[i])) memcpy(anon + na++ * nqi, nodes + i * nqi, nqi * sizeof *nodes);
            const int eligible = brute_holds(&rm, &sum[n - 1]);
            /* the optimal and exhaustive searches publish an anonymous node of the brute force's set,
             * and the same one */
            for (int exhaustive = 0; exhaustive < 2; exhaustive++) {
                inc_options o = {.variant = INC_OPTIMAL, .suppression = 0, .choose = INC_CHOOSE_GCP, .risk = &rm};
                static inc_optimum opt[2];
                ak_error err;
                const int rc = inc_optimal(t, &m, &o, exhaustive, &opt[exhaustive], &err);
                if (!eligible) {
                    assert_int_equal(rc, ANONKIT_E_INELIGIBLE);
                    continue;
                }
                if (rc != ANONKIT_OK) fail_msg("optimal search: %s", err.message);
                int found = 0;
                for (size_t i = 0; i < na && !found; i++) {
                    found = 1;
                    for (uint32_t q = 0; q < nqi; q++) found = found && anon[i * nqi + q] == opt[exhaustive].levels[q];
                }
                if (!found) fail_msg("predicate %d: the optimal search (exhaustive %d) published a node the brute force "
                                     "does not find anonymous", which, exhaustive);
                if (exhaustive) assert_memory_equal(opt[0].levels, opt[1].levels, nqi * sizeof *opt[0].levels);
                cases++;
            }
            for (int v = 0; v < INC_VARIANT__COUNT; v++) {
                if (v == INC_BINARY_SEARCH) continue; /* returns the least height only */
                if (v == INC_OPTIMAL || v == INC_EXHAUSTIVE) continue; /* the node of least loss only (above) */
                inc_options o = {.variant = (inc_variant)v, .suppression = 0, .choose = INC_CHOOSE_GCP, .risk = &rm};
                inc_result r;
                ak_error err;
                const int rc = inc_search(t, &m, &o, &r, &err);
                if (!eligible) {
                    assert_int_equal(rc, ANONKIT_E_INELIGIBLE);
                    continue;
                }
                if (rc != ANONKIT_OK) fail_msg("%s: %s", inc_variant_name(o.variant), err.message);
                if (r.nanonymous != na)
                    fail_msg("%s, predicate %d: %zu anonymous nodes, brute force %zu", inc_variant_name(o.variant), which,
                             r.nanonymous, na);
                assert_memory_equal(r.anonymous, anon, na * nqi * sizeof *anon);
                inc_result_free(&r);
                cases++;
            }
        }
        table_free(t);
    }
    assert_true(checked_pairs > 1000);
    assert_true(cases > 50);
    tu_rmtree(dir);
}

static void test_k_of_highest(void **state)
{
    (void)state;
    assert_int_equal(risk_model_k(0.2), 5);
    assert_int_equal(risk_model_k(0.1), 10);
    assert_int_equal(risk_model_k(0.3), 4);
    assert_int_equal(risk_model_k(1), 1);
    assert_int_equal(risk_model_k(1.0 / 3), 3);
    for (int k = 1; k < 1000; k++) assert_int_equal(risk_model_k(1.0 / k), (uint64_t)k);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_k_of_highest),
        cmocka_unit_test(test_monotone_and_incognito_agrees),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
