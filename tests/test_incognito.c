/* test_incognito.c — property tests of full-domain generalization ([LeFevre05]).
 *
 * Random tables over random hierarchies (categorical ones and numeric ones
 * with interval hierarchies), random k, l-diversity and suppression limits:
 * every variant must return the same anonymous nodes and the same k-minimal
 * nodes as a brute force that groups the rows of every lattice node by their
 * hierarchy ancestors (hier_ancestor, no frequency sets, no packing); the
 * binary search must return the k-minimal nodes of least height. Published
 * tables are proven by the verifier with the suppression limit, their row
 * counts and texts checked against the brute force. The Patients example of
 * [LeFevre05] is worked out by hand below. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algo/incognito/inc_internal.h"
#include "algo/incognito/incognito.h"
#include "anonkit/anonkit.h"
#include "core/hierarchy.h"
#include "core/table.h"
#include "io/csv.h"
#include "model/model.h"
#include "lattice_table.h"
#include "testutil.h"


typedef struct brute_ctx {
    uint32_t anc[MAX_ROWS][MAX_QI]; /* ancestor node of every row at the node's levels */
    int nqi;
} brute_ctx;

static const brute_ctx *sort_ctx; /* qsort has no context argument; tests only */

static int row_cmp(const void *a, const void *b)
{
    const size_t x = *(const size_t *)a, y = *(const size_t *)b;
    int c = memcmp(sort_ctx->anc[x], sort_ctx->anc[y], (size_t)sort_ctx->nqi * sizeof(uint32_t));
    return c ? c : (x < y ? -1 : x > y);
}

/* Rows of failing classes at node `levels`; fail_row[r] tells which. */
static uint64_t brute_failing(const gen_table *g, const table *t, const model *m, const uint32_t *levels,
                              unsigned char *fail_row)
{
    static brute_ctx bc;
    bc.nqi = g->nqi;
    size_t order[MAX_ROWS];
    for (size_t r = 0; r < g->nrows; r++) {
        order[r] = r;
        for (int q = 0; q < g->nqi; q++) bc.anc[r][q] = hier_ancestor(t->qi[q].h, lattice_leaf_of(g, t, r, q), levels[q]);
    }
    sort_ctx = &bc;
    qsort(order, g->nrows, sizeof *order, row_cmp);
    uint64_t failing = 0;
    for (size_t a = 0; a < g->nrows;) {
        size_t b = a;
        while (b < g->nrows && !memcmp(bc.anc[order[a]], bc.anc[order[b]], (size_t)g->nqi * sizeof(uint32_t))) b++;
        uint32_t counts[64] = {0}, list[64], scratch[64];
        size_t distinct = 0;
        for (size_t i = a; i < b; i++) counts[g->sensitive[order[i]]]++;
        for (int s = 0; s < 64; s++)
            if (counts[s]) list[distinct++] = counts[s];
        const int holds = model_holds(m, b - a, list, distinct, scratch);
        for (size_t i = a; i < b; i++)
            if (fail_row) fail_row[order[i]] = (unsigned char)!holds;
        if (!holds) failing += b - a;
        a = b;
    }
    return failing;
}

#define MAX_NODES 4096

static void check_case(const gen_table *g, const table *t, const model *m, double suppression)
{
    static uint32_t nodes[MAX_NODES * MAX_QI], anon[MAX_NODES * MAX_QI], minimal[MAX_NODES * MAX_QI];
    static unsigned char is_anon[MAX_NODES];
    const uint32_t nqi = t->nqi;
    const size_t n = lattice_all_nodes(t, nodes, MAX_NODES);
    const uint64_t limit = model_suppression_limit(suppression, g->nrows);
    for (size_t i = 0; i < n; i++) is_anon[i] = brute_failing(g, t, m, nodes + i * nqi, NULL) <= limit;
    size_t na, nm;
    lattice_anonymous_and_minimal(nodes, n, nqi, is_anon, anon, &na, minimal, &nm);
    const int eligible = is_anon[n - 1]; /* the top node */
    for (int v = 0; v <= INC_OPTIMAL; v++) {
        /* The last round is Cube once more, sharing projections that keep most keys (the optimal
         * and exhaustive variants find one node only: tested by check_optimum). */
        inc_options o = {.variant = v == INC_OPTIMAL ? INC_CUBE : (inc_variant)v, .suppression = suppression,
                         .choose = INC_CHOOSE_K_MINIMAL, .cube_share_min = v == INC_OPTIMAL ? 1 : 0};
        inc_result r;
        ak_error err;
        int rc = inc_search(t, m, &o, &r, &err);
        if (!eligible) {
            if (rc != ANONKIT_E_INELIGIBLE) fail_msg("%s: expected ineligible, got %d", inc_variant_name(o.variant), rc);
            continue;
        }
        if (rc != ANONKIT_OK) fail_msg("%s: %s", inc_variant_name(o.variant), err.message);
        if (inc_measure_choose(t, m, &o, &r, &err) != ANONKIT_OK) fail_msg("choose: %s", err.message);
        if (o.variant == INC_BINARY_SEARCH) {
            /* The k-minimal nodes of least height. */
            size_t least = 0;
            uint32_t h0 = 0;
            for (uint32_t q = 0; q < nqi; q++) h0 += anon[q];
            for (size_t i = 0; i < nm; i++) {
                uint32_t h = 0;
                for (uint32_t q = 0; q < nqi; q++) h += minimal[i * nqi + q];
                least += h == h0;
            }
            assert_int_equal(r.complete, 0);
            assert_int_equal(r.nanonymous, least);
            assert_int_equal(r.nminimal, least);
            assert_memory_equal(r.minimal, minimal, least * nqi * sizeof *minimal);
        } else {
            assert_int_equal(r.complete, 1);
            if (r.nanonymous != na) fail_msg("%s: %zu anonymous nodes, brute force %zu", inc_variant_name(o.variant), r.nanonymous, na);
            assert_memory_equal(r.anonymous, anon, na * nqi * sizeof *anon);
            assert_int_equal(r.nminimal, nm);
            assert_memory_equal(r.minimal, minimal, nm * nqi * sizeof *minimal);
        }
        /* Each k-minimal node's suppressed rows as the brute force counts them; the choice has least GCP. */
        for (size_t i = 0; i < r.nminimal; i++) {
            assert_int_equal(r.info[i].suppressed, brute_failing(g, t, m, r.minimal + i * nqi, NULL));
            assert_true(r.info[i].suppressed <= limit);
            assert_true(r.info[r.chosen].gcp <= r.info[i].gcp);
        }
        assert_int_equal(r.suppression_limit, limit);
        inc_result_free(&r);
    }
}

/* ---- the node of least loss (issue 28) against a brute force ---- */

static void random_model(tu_rng *rng, const gen_table *g, model *m, double *suppression);

/* Per QI, level and row: the NCP of the row's ancestor at that level, as the
 * box of table codes it covers (categorical: the hierarchy node's leaves;
 * numeric: the row codes present under it), computed row by row. */
static double row_ncp[MAX_QI][LATTICE_MAX_LEVELS][MAX_ROWS];

static void brute_ncp(const gen_table *g, const table *t) { lattice_row_ncp(g, t, row_ncp); }

/* The loss of node `levels` by `by`, suppressed rows fully generalized:
 * GCP (NCP 1 in every QI), DM (|T| each) or the height. */
static double brute_loss(const gen_table *g, const table *t, const model *m, const uint32_t *levels, inc_choose by,
                         uint64_t *failing)
{
    unsigned char fail_row[MAX_ROWS];
    *failing = brute_failing(g, t, m, levels, fail_row);
    double loss = 0;
    if (by == INC_CHOOSE_HEIGHT) {
        for (int q = 0; q < g->nqi; q++) loss += levels[q];
    } else if (by == INC_CHOOSE_DM) {
        /* Class sizes by comparing ancestors pairwise. */
        for (size_t r = 0; r < g->nrows; r++) {
            if (fail_row[r]) {
                loss += (double)g->nrows;
                continue;
            }
            size_t size = 0;
            for (size_t x = 0; x < g->nrows; x++) {
                int same = 1;
                for (int q = 0; q < g->nqi && same; q++)
                    same = hier_ancestor(t->qi[q].h, lattice_leaf_of(g, t, r, q), levels[q]) ==
                           hier_ancestor(t->qi[q].h, lattice_leaf_of(g, t, x, q), levels[q]);
                size += (size_t)same;
            }
            loss += (double)size; /* sum over a class's rows of its size = its size squared */
        }
    } else {
        for (size_t r = 0; r < g->nrows; r++)
            for (int q = 0; q < g->nqi; q++) loss += fail_row[r] ? 1.0 : row_ncp[q][levels[q]][r];
        loss /= (double)g->nqi * (double)g->nrows;
    }
    return loss;
}

/* The fast and the exhaustive search return the same node; it is anonymous
 * under the limit by brute force, its loss is the least of every anonymous
 * node's (up to rounding), and among nodes of that loss it is the lowest, then
 * the lexicographically first. */
static void check_optimum(const gen_table *g, const table *t, const model *m, double suppression, inc_choose by)
{
    static uint32_t nodes[MAX_NODES * MAX_QI];
    const uint32_t nqi = t->nqi;
    const size_t n = lattice_all_nodes(t, nodes, MAX_NODES);
    const uint64_t limit = model_suppression_limit(suppression, g->nrows);
    double best = 0;
    size_t best_i = SIZE_MAX;
    for (size_t i = 0; i < n; i++) { /* height, then lexicographic order: the first of least loss wins ties */
        uint64_t failing;
        const double loss = brute_loss(g, t, m, nodes + i * nqi, by, &failing);
        if (failing > limit) continue;
        if (best_i == SIZE_MAX || loss < best - 1e-9 * (1 + best)) {
            best = loss;
            best_i = i;
        }
    }
    inc_options o = {.variant = INC_OPTIMAL, .suppression = suppression, .choose = by};
    inc_optimum fast, slow;
    ak_error err;
    const int rc = inc_optimal(t, m, &o, 0, &fast, &err);
    assert_int_equal(inc_optimal(t, m, &o, 1, &slow, &err), rc);
    if (best_i == SIZE_MAX) {
        assert_int_equal(rc, ANONKIT_E_INELIGIBLE);
        return;
    }
    if (rc != ANONKIT_OK) fail_msg("optimal: %s", err.message);
    assert_memory_equal(fast.levels, slow.levels, nqi * sizeof *fast.levels);
    assert_true(fast.loss == slow.loss);
    uint64_t failing;
    const double loss = brute_loss(g, t, m, fast.levels, by, &failing);
    assert_true(failing <= limit);
    assert_int_equal(fast.info.suppressed, failing);
    if (fabs(loss - best) > 1e-9 * (1 + best))
        fail_msg("choose %s, suppression %g: loss %.17g, brute force %.17g", inc_choose_name(by), suppression, loss, best);
    /* Within rounding of the brute force's choice, the same node. */
    if (memcmp(fast.levels, nodes + best_i * nqi, nqi * sizeof *fast.levels) != 0) {
        uint64_t f2;
        const double other = brute_loss(g, t, m, nodes + best_i * nqi, by, &f2);
        if (fabs(other - loss) > 1e-12 * (1 + loss)) fail_msg("a different node of a different loss");
    }
    /* Every node checked, pruned or left unreached: the counts add up. */
    assert_true(fast.counters.nodes_checked + fast.pruned_tagged + fast.pruned_bound <= fast.lattice);
    assert_int_equal(slow.counters.nodes_checked, slow.lattice);
    assert_int_equal(fast.lattice, n);
}

static void test_optimum_agrees_with_brute_force(void **state)
{
    (void)state;
    tu_rng rng = {20261126};
    static const double limits[] = {0, 0.02, 1};
    static const inc_choose by[] = {INC_CHOOSE_GCP, INC_CHOOSE_DM, INC_CHOOSE_HEIGHT};
    for (int round = 0; round < 80; round++) {
        const char *dir;
        gen_table g;
        table *t = lattice_round(&rng, &dir, &g);
        brute_ncp(&g, t);
        model m;
        double ignored;
        random_model(&rng, &g, &m, &ignored);
        for (int s = 0; s < 3; s++) {
            if (limits[s] > 0 && !inc_model_monotone_with_suppression(&m)) continue;
            check_optimum(&g, t, &m, limits[s], by[(round + s) % 3]);
        }
        lattice_round_end(t, dir);
    }
}

/* The pair sub-lattice bound of the fast search (optimal.c pair_bound), node
 * by node against the brute force: the rows it proves to fail do fail, and
 * the lower bound never exceeds the loss. With two QIs the pair is the node
 * itself and the bound is exact (the adversarial case: every key equals the
 * loss, so ties at the stopping bound decide); the searches must still agree
 * there, with the brute force. */
static void test_pair_bound_sound_and_tight(void **state)
{
    (void)state;
    tu_rng rng = {20261127};
    static uint32_t nodes[MAX_NODES * MAX_QI];
    static double lower[MAX_NODES];
    static uint64_t most[MAX_NODES];
    static const double limits[] = {0.02, 0.1, 1};
    size_t bounded = 0, tight = 0;
    for (int round = 0; round < 60; round++) {
        const char *dir;
        gen_table g;
        table *t = lattice_round(&rng, &dir, &g);
        brute_ncp(&g, t);
        model m;
        double ignored;
        random_model(&rng, &g, &m, &ignored);
        if (!inc_model_monotone_with_suppression(&m)) m.l_variants = MODEL_L_DISTINCT;
        const uint32_t nqi = t->nqi;
        const size_t n = lattice_all_nodes(t, nodes, MAX_NODES);
        for (int s = 0; s < 3; s++) {
            inc_ctx c;
            ak_error err;
            assert_int_equal(inc_ctx_init(&c, t, &m, limits[s], &err), ANONKIT_OK);
            assert_int_equal(inc_optimal_bounds(&c, NULL, lower, most, &err), ANONKIT_OK);
            const double scale = (double)nqi * (double)g.nrows; /* the brute force's GCP is normalized */
            for (size_t i = 0; i < n; i++) {
                const uint32_t *lv = nodes + i * nqi;
                size_t at = 0;
                for (uint32_t q = 0; q < nqi; q++) at = at * (inc_qi_height(t, q) + 1) + lv[q];
                uint64_t failing;
                const double loss = brute_loss(&g, t, &m, lv, INC_CHOOSE_GCP, &failing);
                if (most[at] > failing) fail_msg("pair bound: %llu rows fail, only %llu do", (unsigned long long)most[at], (unsigned long long)failing);
                if (lower[at] / scale > loss + 1e-9) fail_msg("pair bound %.17g above the loss %.17g", lower[at] / scale, loss);
                bounded += most[at] > 0;
                if (nqi == 2 && c.limit > 0) { /* the pair is the node: exact (used under suppression only) */
                    assert_int_equal(most[at], failing);
                    if (fabs(lower[at] / scale - loss) > 1e-9) fail_msg("two QIs: bound %.17g, loss %.17g", lower[at] / scale, loss);
                    tight += failing > 0;
                }
            }
            inc_ctx_free(&c);
            if (nqi == 2) check_optimum(&g, t, &m, limits[s], INC_CHOOSE_GCP);
        }
        lattice_round_end(t, dir);
    }
    assert_true(bounded > 100); /* the bound was exercised, */
    assert_true(tight > 10);    /* also where it is exact */
}

static const char *const variant_names[] = {"distinct", "entropy", "recursive", "probabilistic"};

/* A random model and suppression limit; the l-variants that are not monotone
 * under suppression get none. k is at most the table's rows. */
static void random_model(tu_rng *rng, const gen_table *g, model *m, double *suppression)
{
    model_init(m);
    m->k = 1 + tu_below(rng, tu_below(rng, 4) == 0 ? g->nrows + 2 : 6);
    *suppression = tu_below(rng, 2) ? 0 : (double)tu_below(rng, 8) / 20.0;
    if (tu_below(rng, 3) == 0) {
        m->l = (double)(1 + tu_below(rng, 3));
        m->l_variants = 1u << tu_below(rng, 4);
        m->c = 1 + (double)tu_below(rng, 3);
        if (m->l_variants != MODEL_L_DISTINCT) *suppression = 0;
    }
    if (m->k > g->nrows) m->k = g->nrows;
}

static void test_variants_agree_with_brute_force(void **state)
{
    (void)state;
    tu_rng rng = {20260521};
    for (int round = 0; round < 150; round++) {
        const char *dir;
        gen_table g;
        table *t = lattice_round(&rng, &dir, &g);
        model m;
        double suppression;
        random_model(&rng, &g, &m, &suppression);
        check_case(&g, t, &m, suppression);
        lattice_round_end(t, dir);
    }
}

/* ---- through the public API: published tables proven by the verifier ---- */


static anonkit_job *job_for(const gen_table *g, const model *m, double suppression, const char *out)
{
    anonkit_job *job = lattice_job(g, "incognito", out);
    char text[4200];
    snprintf(text, sizeof text, "%llu", (unsigned long long)m->k);
    lattice_set(job, ANONKIT_OPT_K, text);
    if (m->l > 0) {
        snprintf(text, sizeof text, "%g", m->l);
        lattice_set(job, ANONKIT_OPT_L, text);
        for (int v = 0; v < 4; v++)
            if (m->l_variants == 1u << v) lattice_set(job, ANONKIT_OPT_L_VARIANT, variant_names[v]);
        snprintf(text, sizeof text, "%g", m->c);
        lattice_set(job, ANONKIT_OPT_C, text);
    }
    snprintf(text, sizeof text, "%.17g", suppression);
    lattice_set(job, ANONKIT_OPT_SUPPRESSION, text);
    return job;
}

static void test_published_tables_verified(void **state)
{
    (void)state;
    tu_rng rng = {777};
    static const char *const chooses[] = {"gcp", "height", "dm"};
    for (int round = 0; round < 60; round++) {
        const char *dir;
        gen_table g;
        table *t = lattice_round(&rng, &dir, &g);
        model m;
        double suppression;
        random_model(&rng, &g, &m, &suppression);
        char out[4096], report[4096];
        snprintf(out, sizeof out, "%s", tu_path(dir, "out.csv"));
        snprintf(report, sizeof report, "%s", tu_path(dir, "report.json"));
        anonkit_job *job = job_for(&g, &m, suppression, out);
        lattice_set(job, ANONKIT_OPT_REPORT, report);
        lattice_set(job, ANONKIT_OPT_CHOOSE, chooses[round % 3]);
        lattice_set(job, ANONKIT_OPT_INCOGNITO_VARIANT, inc_variant_name((inc_variant)(round % INC_VARIANT__COUNT)));
        uint32_t top[MAX_QI] = {0};
        for (int q = 0; q < g.nqi; q++) top[q] = inc_qi_height(t, (uint32_t)q);
        const int eligible = brute_failing(&g, t, &m, top, NULL) <= model_suppression_limit(suppression, g.nrows);
        char what[32];
        snprintf(what, sizeof what, "round %d", round);
        anonkit_result *res = tu_anonymize(job, out, eligible, what); /* ineligible: nothing left behind */
        if (!eligible) {
            anonkit_job_free(job);
            lattice_round_end(t, dir);
            continue;
        }
        /* The chosen node from the report, and its rows by brute force. */
        json_error_t jerr;
        json_t *root = json_load_file(report, 0, &jerr);
        assert_non_null(root);
        json_t *levels = json_object_get(json_object_get(json_object_get(root, "incognito"), "chosen"), "levels");
        assert_int_equal(json_array_size(levels), (size_t)g.nqi);
        uint32_t lv[MAX_QI] = {0};
        for (int q = 0; q < g.nqi; q++) lv[q] = (uint32_t)json_integer_value(json_array_get(levels, (size_t)q));
        json_decref(root);
        unsigned char fail_row[MAX_ROWS];
        const uint64_t failing = brute_failing(&g, t, &m, lv, fail_row);
        assert_int_equal(anonkit_result_rows_suppressed(res), failing);
        assert_int_equal(anonkit_result_rows_published(res), g.nrows - failing);
        /* The verifier proves the model and counts the same suppressed rows. */
        uint64_t suppressed;
        assert_int_equal(tu_verify_suppressed(job, out, what, NULL, &suppressed), g.nrows);
        if (suppression > 0) assert_int_equal(suppressed, failing);
        /* Every row is its hierarchy label at the chosen level, or '*' everywhere when suppressed. */
        csv_reader *rd;
        ak_error err;
        assert_int_equal(csv_reader_open(&rd, out, ',', &err), ANONKIT_OK);
        csv_record rec;
        assert_int_equal(csv_read(rd, &rec, &err), 1);
        for (size_t r = 0; r < g.nrows; r++) {
            assert_int_equal(csv_read(rd, &rec, &err), 1);
            for (int q = 0; q < g.nqi; q++) {
                const char *want = fail_row[r] ? "*" : hier_node_at(t->qi[q].h, hier_ancestor(t->qi[q].h, lattice_leaf_of(&g, t, r, q), lv[q]))->label;
                if (rec.fields[q].len != strlen(want) || memcmp(rec.fields[q].data, want, strlen(want)))
                    fail_msg("row %zu QI %d: published '%.*s', expected '%s'", r, q, (int)rec.fields[q].len,
                             rec.fields[q].data, want);
            }
        }
        assert_int_equal(csv_read(rd, &rec, &err), 0);
        csv_reader_free(rd);
        anonkit_result_free(res);
        anonkit_job_free(job);
        lattice_round_end(t, dir);
    }
}

/* ---- local recoding (issue 28): every row at its own levels, proven by the verifier ---- */

/* Random tables under k-anonymity or distinct l-diversity: --algorithm local
 * publishes every row (k-anonymity always can, n >= k) or fails as
 * ineligible; the verifier proves the output; every published label is a
 * hierarchy node above the row's own value (the classes' labels cover their
 * rows); the iterations of the report account for every row. */
static void test_local_recoding_verified(void **state)
{
    (void)state;
    tu_rng rng = {4242};
    for (int round = 0; round < 40; round++) {
        const char *dir = tu_mkdtemp();
        gen_table g;
        lattice_generate(&rng, dir, &g);
        model m;
        double suppression;
        random_model(&rng, &g, &m, &suppression);
        if (m.l > 0) m.l_variants = MODEL_L_DISTINCT;
        char out[4096], report[4096], what[32];
        snprintf(out, sizeof out, "%s", tu_path(dir, "out.csv"));
        snprintf(report, sizeof report, "%s", tu_path(dir, "report.json"));
        snprintf(what, sizeof what, "local round %d", round);
        anonkit_job *job = job_for(&g, &m, suppression, out);
        lattice_set(job, ANONKIT_OPT_ALGORITHM, "local");
        lattice_set(job, ANONKIT_OPT_REPORT, report);
        anonkit_result *res = NULL;
        const int rc = anonkit_anonymize(job, &res);
        if (rc == ANONKIT_E_INELIGIBLE) {
            if (m.l == 0) fail_msg("%s: k-anonymity must always be reachable: %s", what, anonkit_errmsg(job));
            anonkit_job_free(job);
            tu_rmtree(dir);
            continue;
        }
        if (rc != ANONKIT_OK) fail_msg("%s: %s", what, anonkit_errmsg(job));
        if (m.l == 0) assert_int_equal(anonkit_result_rows_suppressed(res), 0);
        uint64_t suppressed;
        assert_int_equal(tu_verify_suppressed(job, out, what, NULL, &suppressed), g.nrows);
        /* The iterations: each starts with the rows the previous one passed on. */
        json_error_t jerr;
        json_t *root = json_load_file(report, 0, &jerr);
        assert_non_null(root);
        json_t *local = json_object_get(root, "local"), *iters = json_object_get(local, "iterations");
        uint64_t left = g.nrows;
        for (size_t i = 0; i < json_array_size(iters); i++) {
            json_t *it = json_array_get(iters, i);
            assert_int_equal(json_integer_value(json_object_get(it, "rows")), left);
            left -= (uint64_t)json_integer_value(json_object_get(it, "published"));
        }
        assert_int_equal(left, json_integer_value(json_object_get(local, "rows_suppressed")));
        assert_int_equal(left, anonkit_result_rows_suppressed(res));
        json_decref(root);
        /* Every label covers the row's value: a node of the QI's hierarchy above the row's leaf. */
        lattice_assert_labels_cover(&g, out, left, what);
        anonkit_result_free(res);
        anonkit_job_free(job);
        tu_rmtree(dir);
    }
}

/* The GCP sum of a local-recoding partition: each published row the NCP of its
 * class's box per QI, each suppressed row 1 per QI. */
static double partition_loss(const table *t, const partition *p)
{
    double loss = 0;
    for (size_t r = 0; r < p->nrows; r++) {
        const uint32_t c = p->class_of[r];
        for (uint32_t q = 0; q < p->nqi; q++)
            loss += c == PARTITION_SUPPRESSED ? 1.0 : table_ncp(t, q, partition_lo(p, c)[q], partition_hi(p, c)[q]);
    }
    return loss;
}

/* The refinement of local recoding's classes (local.c, refine_class) never
 * raises the loss, suppresses no other rows, and keeps every class at k rows
 * at least, on random tables under k-anonymity or distinct l-diversity. */
static void test_local_refinement(void **state)
{
    (void)state;
    tu_rng rng = {777};
    int lowered = 0;
    for (int round = 0; round < 60; round++) {
        const char *dir;
        gen_table g;
        table *t = lattice_round(&rng, &dir, &g);
        model m;
        double suppression;
        random_model(&rng, &g, &m, &suppression);
        if (m.l > 0) m.l_variants = MODEL_L_DISTINCT;
        double loss[2];
        uint64_t supp[2];
        int ok = 1;
        for (int refine = 0; refine < 2; refine++) {
            partition p;
            ak_error err;
            assert_int_equal(partition_init(&p, t->nrows, t->nqi, &err), ANONKIT_OK);
            const inc_local_options o = {.iteration_suppression = 0.95, .defer = 0, .refine = refine};
            inc_local_result res;
            const int rc = inc_local(t, &m, &o, &p, &res, &err);
            if (rc == ANONKIT_E_INELIGIBLE) {
                ok = 0;
            } else {
                assert_int_equal(rc, ANONKIT_OK);
                loss[refine] = partition_loss(t, &p);
                supp[refine] = res.suppressed;
                for (size_t c = 0; c < p.nclasses; c++) assert_true(p.count[c] >= (m.k > 1 ? m.k : 1));
                inc_local_result_free(&res);
            }
            partition_free(&p);
        }
        if (ok) {
            assert_int_equal(supp[0], supp[1]);
            if (loss[1] > loss[0] + 1e-9) fail_msg("round %d: refined loss %.6f above %.6f", round, loss[1], loss[0]);
            lowered += loss[1] < loss[0] - 1e-9;
        }
        lattice_round_end(t, dir);
    }
    assert_true(lowered > 0); /* the refinement does find narrower classes */
}

/* ---- the Patients example of [LeFevre05] ---- */

/* [LeFevre05]'s tables with their typos fixed from the data itself: the zip codes are
 * those of Table B1 (53715 twice, 53703 twice, 53706 twice) and the birth
 * dates the three of B0 (1/21/76, 2/28/76, 4/13/86). Hierarchies of Figure 2:
 * Zipcode 5371x -> 5371* -> 537**, Birthdate -> *, Sex -> *. */
static const char patients_csv[] =
    "Birthdate,Sex,Zipcode,Disease\n"
    "1/21/76,Male,53715,Flu\n"
    "4/13/86,Female,53715,Hepatitis\n"
    "2/28/76,Male,53703,Brochitis\n"
    "1/21/76,Male,53703,Broken Arm\n"
    "4/13/86,Female,53706,AIDS\n"
    "2/28/76,Male,53706,Hang Nail\n";

static anonkit_job *patients_job(const char *dir, const char *k, const char *suppression)
{
    tu_write_file(tu_path(dir, "patients.csv"), patients_csv);
    tu_write_file(tu_path(dir, "zip.csv"), "53715;5371*;537**\n53710;5371*;537**\n53706;5370*;537**\n53703;5370*;537**\n");
    tu_write_file(tu_path(dir, "birth.csv"), "1/21/76;*\n2/28/76;*\n4/13/86;*\n");
    tu_write_file(tu_path(dir, "sex.csv"), "Male;*\nFemale;*\n");
    anonkit_job *job = anonkit_job_create();
    char text[4200];
    lattice_set(job, ANONKIT_OPT_INPUT, tu_path(dir, "patients.csv"));
    lattice_set(job, ANONKIT_OPT_OUTPUT, tu_path(dir, "out.csv"));
    lattice_set(job, ANONKIT_OPT_REPORT, tu_path(dir, "report.json"));
    lattice_set(job, ANONKIT_OPT_QI, "Birthdate,Sex,Zipcode");
    snprintf(text, sizeof text, "Zipcode=%s", tu_path(dir, "zip.csv"));
    lattice_set(job, ANONKIT_OPT_HIERARCHY, text);
    snprintf(text, sizeof text, "Birthdate=%s", tu_path(dir, "birth.csv"));
    lattice_set(job, ANONKIT_OPT_HIERARCHY, text);
    snprintf(text, sizeof text, "Sex=%s", tu_path(dir, "sex.csv"));
    lattice_set(job, ANONKIT_OPT_HIERARCHY, text);
    lattice_set(job, ANONKIT_OPT_ALGORITHM, "incognito");
    lattice_set(job, ANONKIT_OPT_K, k);
    lattice_set(job, ANONKIT_OPT_SUPPRESSION, suppression);
    lattice_set(job, ANONKIT_OPT_KEEP_ORDER, "true");
    return job;
}

/* The level vectors of report member `name` ("anonymous" or "k_minimal") of
 * dir/report.json as "BSZ" digit strings, comma-joined, must read `want`. */
static void assert_report_nodes(const char *dir, const char *name, const char *want)
{
    json_error_t jerr;
    json_t *root = json_load_file(tu_path(dir, "report.json"), 0, &jerr);
    assert_non_null(root);
    json_t *list = json_object_get(json_object_get(root, "incognito"), name);
    char text[256] = "";
    for (size_t i = 0; i < json_array_size(list); i++) {
        json_t *item = json_array_get(list, i);
        json_t *lv = json_is_array(item) ? item : json_object_get(item, "levels");
        char node[16];
        snprintf(node, sizeof node, "%s%lld%lld%lld", i ? "," : "", json_integer_value(json_array_get(lv, 0)),
                 json_integer_value(json_array_get(lv, 1)), json_integer_value(json_array_get(lv, 2)));
        strncat(text, node, sizeof text - strlen(text) - 1);
    }
    json_decref(root);
    assert_string_equal(text, want);
}

/* The job's run, which must succeed (the test fails with the library's message). */
static anonkit_result *patients_run(anonkit_job *job)
{
    anonkit_result *res = NULL;
    if (anonkit_anonymize(job, &res) != ANONKIT_OK) fail_msg("%s", anonkit_errmsg(job));
    return res;
}

/* The published dir/out.csv must read `want`. */
static void assert_patients_out(const char *dir, const char *want)
{
    char *out = tu_read_file(tu_path(dir, "out.csv"), NULL);
    assert_non_null(out);
    assert_string_equal(out, want);
    free(out);
}

static void test_patients_k2(void **state)
{
    (void)state;
    /* By hand, k = 2 (rows as (B, S, Z)):
     *   <B0,S0,Z0> all six rows distinct - no.  <B0,S0,Z1> (1/21/76,Male,5371*) alone - no.
     *   <B0,S0,Z2> pairs by birth date (1/21 M, 4/13 F, 2/28 M) - yes.
     *   <B0,S1,Z0>, <B0,S1,Z1> (1/21/76, 53715 | 5371*) alone - no; <B0,S1,Z2> generalizes B0S0Z2 - yes.
     *   <B1,S0,Z0> (Male,53715) alone - no; <B1,S0,Z1> (Male,5371*) alone - no;
     *   <B1,S0,Z2> Male 4, Female 2 - yes.  <B1,S1,Z0> zips in pairs - yes; Z1, Z2 above it - yes.
     * Anonymous: 002, 012, 102, 110, 111, 112; k-minimal: 002 and 110 (102 and 012 lie above 002).
     * GCP of 002: Z at 537** covers all 4 leaves (NCP 1), B and S leaves (0): 1/3; of 110: 2/3.
     * So the least-GCP choice is <B0,S0,Z2>. */
    const char *dir = tu_mkdtemp();
    anonkit_job *job = patients_job(dir, "2", "0");
    anonkit_result *res = patients_run(job);
    assert_report_nodes(dir, "anonymous", "002,110,012,102,111,112"); /* by height, then levels */
    assert_report_nodes(dir, "k_minimal", "002,110");
    assert_patients_out(dir, "Birthdate,Sex,Zipcode,Disease\n"
                             "1/21/76,Male,537**,Flu\n"
                             "4/13/86,Female,537**,Hepatitis\n"
                             "2/28/76,Male,537**,Brochitis\n"
                             "1/21/76,Male,537**,Broken Arm\n"
                             "4/13/86,Female,537**,AIDS\n"
                             "2/28/76,Male,537**,Hang Nail\n");
    anonkit_result_free(res);
    /* --choose height ties at 2: the first in order, 002; every variant gives the same. */
    for (int v = 0; v < INC_OPTIMAL; v++) {
        if (v == INC_BINARY_SEARCH) continue;
        lattice_set(job, ANONKIT_OPT_INCOGNITO_VARIANT, inc_variant_name((inc_variant)v));
        res = patients_run(job);
        assert_report_nodes(dir, "k_minimal", "002,110");
        anonkit_result_free(res);
    }
    /* The optimal and exhaustive searches list no nodes but publish the same one (GCP 1/3, above). */
    for (int v = INC_OPTIMAL; v <= INC_EXHAUSTIVE; v++) {
        lattice_set(job, ANONKIT_OPT_INCOGNITO_VARIANT, inc_variant_name((inc_variant)v));
        res = patients_run(job);
        assert_report_nodes(dir, "k_minimal", "");
        char *again = tu_read_file(tu_path(dir, "out.csv"), NULL);
        assert_non_null(strstr(again, "1/21/76,Male,537**,Flu\n"));
        free(again);
        anonkit_result_free(res);
    }
    anonkit_job_free(job);
    tu_rmtree(dir);
}

static void test_patients_k3_suppression(void **state)
{
    (void)state;
    /* By hand, k = 3: only the top <B1,S1,Z2> keeps every class at 3 or more.
     * With --suppression 0.34 (floor(0.34 * 6) = 2 rows):
     *   <B1,S0,Z2> Male 4 | Female 2 -> the 2 Female rows suppressed - yes;
     *   <B1,S1,Z1> 5370* 4 | 5371* 2 -> 2 rows suppressed - yes;
     *   <B1,S0,Z1> classes 1,1,3,1 -> 3 rows - no; <B1,S1,Z0> pairs -> 6 - no; B0 at any Z: pairs - no.
     * Anonymous: 102, 111, 112; k-minimal: 102, 111.
     * GCP of 102: 4 rows with NCP B 1, S 0, Z 1 and 2 suppressed rows (NCP 1 each): (4*2 + 2*3) / 18 = 7/9;
     * of 111: 4 rows with B 1, S 1, Z 5370* = 2 of 4 leaves: (4*2.5 + 2*3) / 18 = 8/9. Chosen: <B1,S0,Z2>. */
    const char *dir = tu_mkdtemp();
    anonkit_job *job = patients_job(dir, "3", "0");
    anonkit_result *res = patients_run(job);
    assert_report_nodes(dir, "anonymous", "112");
    anonkit_result_free(res);
    lattice_set(job, ANONKIT_OPT_SUPPRESSION, "0.34");
    res = patients_run(job);
    assert_int_equal(anonkit_result_rows_suppressed(res), 2);
    assert_int_equal(anonkit_result_rows_published(res), 4);
    assert_report_nodes(dir, "anonymous", "102,111,112");
    assert_report_nodes(dir, "k_minimal", "102,111");
    assert_patients_out(dir, "Birthdate,Sex,Zipcode,Disease\n"
                             "*,Male,537**,Flu\n"
                             "*,*,*,Hepatitis\n"
                             "*,Male,537**,Brochitis\n"
                             "*,Male,537**,Broken Arm\n"
                             "*,*,*,AIDS\n"
                             "*,Male,537**,Hang Nail\n");
    anonkit_result_free(res);
    /* The verifier: with the limit the two '*' rows are suppressed; without it they are a class of 2 < 3. */
    anonkit_result *checked = NULL;
    assert_int_equal(anonkit_check(job, tu_path(dir, "out.csv"), &checked), ANONKIT_OK);
    assert_int_equal(anonkit_result_classes(checked), 1);
    assert_int_equal(anonkit_result_rows_read(checked), 6);
    assert_int_equal(anonkit_result_rows_published(checked), 4);
    assert_int_equal(anonkit_result_rows_suppressed(checked), 2);
    assert_int_equal(anonkit_result_rows_outside(checked), 0); /* recode's field */
    assert_null(anonkit_result_summary(checked));
    assert_null(anonkit_result_json(checked));
    anonkit_result_free(checked);
    lattice_set(job, ANONKIT_OPT_SUPPRESSION, "0.2"); /* 1 row */
    checked = (anonkit_result *)&checked; /* set to NULL on failure */
    assert_int_equal(anonkit_check(job, tu_path(dir, "out.csv"), &checked), ANONKIT_E_VIOLATION);
    assert_null(checked);
    lattice_set(job, ANONKIT_OPT_SUPPRESSION, "0");
    assert_int_equal(anonkit_check(job, tu_path(dir, "out.csv"), &checked), ANONKIT_E_VIOLATION);
    anonkit_job_free(job);
    tu_rmtree(dir);
}

/* Entropy l-diversity is not monotone once failing classes may be suppressed:
 * refused with a clear message, and nothing is written. */
static void test_suppression_needs_monotone_model(void **state)
{
    (void)state;
    const char *dir = tu_mkdtemp();
    anonkit_job *job = patients_job(dir, "2", "0.2");
    lattice_set(job, ANONKIT_OPT_SENSITIVE, "Disease");
    lattice_set(job, ANONKIT_OPT_L, "2");
    lattice_set(job, ANONKIT_OPT_L_VARIANT, "entropy");
    anonkit_result *res = NULL;
    assert_int_equal(anonkit_anonymize(job, &res), ANONKIT_E_USAGE);
    assert_non_null(strstr(anonkit_errmsg(job), "--suppression"));
    assert_null(tu_read_file(tu_path(dir, "out.csv"), NULL));
    anonkit_job_free(job);
    tu_rmtree(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_variants_agree_with_brute_force),
        cmocka_unit_test(test_optimum_agrees_with_brute_force),
        cmocka_unit_test(test_pair_bound_sound_and_tight),
        cmocka_unit_test(test_local_recoding_verified),
        cmocka_unit_test(test_local_refinement),
        cmocka_unit_test(test_published_tables_verified),
        cmocka_unit_test(test_patients_k2),
        cmocka_unit_test(test_patients_k3_suppression),
        cmocka_unit_test(test_suppression_needs_monotone_model),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
