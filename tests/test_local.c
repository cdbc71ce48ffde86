/* test_local.c — local recoding (issue 28, part 3): src/algo/incognito/local.c
 * and local_split.c.
 *
 * Random tables over random hierarchies (lattice_table.c) under every
 * per-class model: k-anonymity, the four l-diversity variants, t-closeness,
 * δ-disclosure, β-likeness. Through the public API every output is proven by
 * the verifier, every published label must be a hierarchy node above the
 * row's own value, and no row may be suppressed when the whole table
 * satisfies the model (the top of every hierarchy is then one class that
 * holds). The split search is also run directly under k and every
 * l-diversity variant and its partition checked independently: each class is
 * the group of rows with one label tuple, its labels cover its rows, and it
 * satisfies the model by model_holds over histograms counted here; its loss
 * never exceeds that of the whole table at the top (where it starts). The
 * iterations under k alone are run with and without the refinement and the
 * lifting pass (local_lift.c), both partitions checked the same way: the
 * refined one never loses more, and no row is suppressed. The search of one
 * iteration (a row left to a later iteration costs nothing) is checked node by
 * node against a brute force, together with the exhaustive search. */
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
#include "core/partition.h"
#include "core/table.h"
#include "io/csv.h"
#include "lattice_table.h"
#include "model/model.h"
#include "testutil.h"

static const char *const variant_names[] = {"distinct", "entropy", "recursive", "probabilistic"};


/* A random model: k, sometimes an l-diversity variant, sometimes t, δ or β
 * (kind: 0 k only, 1 l-diversity, 2 t, 3 δ, 4 β). */
typedef struct rand_model {
    int kind;
    uint64_t k;
    double l, c;
    int variant;
    double x; /* t, δ or β */
    double suppression;
} rand_model;

static rand_model random_model(tu_rng *rng, size_t nrows)
{
    rand_model m = {.kind = (int)tu_below(rng, 5)};
    m.k = 1 + tu_below(rng, tu_below(rng, 4) == 0 ? nrows : 6);
    if (m.k > nrows) m.k = nrows;
    m.l = (double)(1 + tu_below(rng, 3));
    m.c = 1 + (double)tu_below(rng, 3);
    m.variant = (int)tu_below(rng, 4);
    if (m.kind == 2) m.x = 0.1 * (double)(1 + tu_below(rng, 6));
    if (m.kind == 3) m.x = 0.5 + 0.5 * (double)tu_below(rng, 6);
    if (m.kind == 4) m.x = 0.5 + 0.5 * (double)tu_below(rng, 6);
    m.suppression = tu_below(rng, 2) ? 0 : (double)tu_below(rng, 8) / 20.0;
    return m;
}

static anonkit_job *job_for(const gen_table *g, const rand_model *m, const char *out, const char *report)
{
    anonkit_job *job = lattice_job(g, "local", out);
    lattice_set(job, ANONKIT_OPT_REPORT, report);
    char text[4200];
    snprintf(text, sizeof text, "%llu", (unsigned long long)m->k);
    lattice_set(job, ANONKIT_OPT_K, text);
    if (m->kind == 1) {
        snprintf(text, sizeof text, "%g", m->l);
        lattice_set(job, ANONKIT_OPT_L, text);
        lattice_set(job, ANONKIT_OPT_L_VARIANT, variant_names[m->variant]);
        snprintf(text, sizeof text, "%g", m->c);
        lattice_set(job, ANONKIT_OPT_C, text);
    }
    snprintf(text, sizeof text, "%g", m->x);
    if (m->kind == 2) lattice_set(job, ANONKIT_OPT_T, text);
    if (m->kind == 3) lattice_set(job, ANONKIT_OPT_DELTA_DISCLOSURE, text);
    if (m->kind == 4) lattice_set(job, ANONKIT_OPT_BETA, text);
    snprintf(text, sizeof text, "%.17g", m->suppression);
    lattice_set(job, ANONKIT_OPT_SUPPRESSION, text);
    return job;
}

/* Whether the whole table, as one class, satisfies the model: its output
 * written at the top of every hierarchy, proven by the verifier (an
 * independent judge of t, δ and β). */
static int whole_table_holds(const gen_table *g, const rand_model *m, const char *dir)
{
    char path[4200];
    snprintf(path, sizeof path, "%s", tu_path(dir, "top.csv"));
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "id,");
    for (int q = 0; q < g->nqi; q++) fprintf(f, "a%d,", q);
    fprintf(f, "s\n");
    for (size_t r = 0; r < g->nrows; r++) {
        fprintf(f, "%zu,", r);
        for (int q = 0; q < g->nqi; q++) fprintf(f, "T,");
        fprintf(f, "%d\n", g->sensitive[r]);
    }
    fclose(f);
    anonkit_job *job = job_for(g, m, path, tu_path(dir, "unused.json"));
    lattice_set(job, ANONKIT_OPT_SUPPRESSION, "0");
    const int rc = anonkit_check(job, path, NULL);
    anonkit_job_free(job);
    return rc == ANONKIT_OK;
}

/* k-anonymity alone, k at most the table's nrows. */
static model k_model(uint64_t k, size_t nrows)
{
    model m;
    model_init(&m);
    m.k = k > nrows ? nrows : k;
    return m;
}

/* Runs local recoding (inc_local) on t under m and o into *p, which it
 * initializes; the caller frees *p and *res. The run must succeed. */
static void run_local(const table *t, const model *m, const inc_local_options *o, partition *p, inc_local_result *res)
{
    ak_error err;
    assert_int_equal(partition_init(p, t->nrows, t->nqi, &err), ANONKIT_OK);
    assert_int_equal(inc_local(t, m, o, p, res, &err), ANONKIT_OK);
}

/* Whether a class of n rows with these counts of each sensitive value
 * (d0..d63) satisfies m, by model_holds. */
static int counts_hold(const model *m, uint64_t n, const uint32_t counts[64])
{
    uint32_t list[64], scratch[64];
    size_t distinct = 0;
    for (int s = 0; s < 64; s++)
        if (counts[s]) list[distinct++] = counts[s];
    return model_holds(m, n, list, distinct, scratch);
}

/* Every model through the API: verified output, covering labels, the method
 * in the report (iterate under k and distinct l, split otherwise), and no row
 * suppressed whenever the whole table satisfies the model (split) or the
 * model is k alone. */
static void test_local_every_model_verified(void **state)
{
    (void)state;
    tu_rng rng = {2811};
    int published[5] = {0};
    for (int round = 0; round < 120; round++) {
        const char *dir = tu_mkdtemp();
        gen_table g;
        lattice_generate(&rng, dir, &g);
        const rand_model m = random_model(&rng, g.nrows);
        char out[4200], report[4200], what[64];
        snprintf(out, sizeof out, "%s", tu_path(dir, "out.csv"));
        snprintf(report, sizeof report, "%s", tu_path(dir, "report.json"));
        snprintf(what, sizeof what, "local round %d (model kind %d)", round, m.kind);
        const int split = m.kind >= 2 || (m.kind == 1 && m.variant != 0);
        const int holds = whole_table_holds(&g, &m, dir);
        anonkit_job *job = job_for(&g, &m, out, report);
        anonkit_result *res = NULL;
        const int rc = anonkit_anonymize(job, &res);
        if (rc == ANONKIT_E_INELIGIBLE) {
            if (m.kind == 0) fail_msg("%s: k-anonymity must always be reachable: %s", what, anonkit_errmsg(job));
            if (split && holds) fail_msg("%s: the whole table satisfies the model, yet: %s", what, anonkit_errmsg(job));
            anonkit_job_free(job);
            tu_rmtree(dir);
            continue;
        }
        if (rc != ANONKIT_OK) fail_msg("%s: %s", what, anonkit_errmsg(job));
        const uint64_t supp = anonkit_result_rows_suppressed(res);
        if (m.kind == 0 || (split && holds)) assert_int_equal(supp, 0);
        uint64_t vsupp;
        assert_int_equal(tu_verify_suppressed(job, out, what, NULL, &vsupp), g.nrows);
        lattice_assert_labels_cover(&g, out, supp, what);
        json_error_t jerr;
        json_t *root = json_load_file(report, 0, &jerr);
        assert_non_null(root);
        json_t *local = json_object_get(root, "local");
        assert_string_equal(json_string_value(json_object_get(local, "method")), split ? "split" : "iterate");
        assert_int_equal(json_integer_value(json_object_get(local, "rows_suppressed")), supp);
        json_decref(root);
        published[m.kind]++;
        anonkit_result_free(res);
        anonkit_job_free(job);
        tu_rmtree(dir);
    }
    for (int kind = 0; kind < 5; kind++) assert_true(published[kind] > 0); /* every kind of model was published */
}

/* Checks partition p of g (table t) independently: each class's labels are
 * its hierarchy nodes and cover its rows, it satisfies the model (model_holds
 * over histograms counted here), classes are distinct label tuples. Returns
 * its loss: the NCP summed over rows and QIs; *suppressed: rows suppressed. */
static double checked_loss(const gen_table *g, const table *t, const model *m, const partition *p, int round,
                           uint64_t *suppressed)
{
    double loss = 0;
    for (size_t c = 0; c < p->nclasses; c++) {
        uint32_t counts[64] = {0};
        uint64_t n = 0;
        for (size_t r = 0; r < g->nrows; r++) {
            if (p->class_of[r] != c) continue;
            n++;
            counts[g->sensitive[r]]++;
            for (int q = 0; q < g->nqi; q++) {
                const uint32_t node = p->node[c * t->nqi + (size_t)q];
                const hier *h = t->qi[q].h;
                if (hier_ancestor(h, lattice_leaf_of(g, t, r, q), hier_node_at(h, node)->level) != node)
                    fail_msg("round %d: class %zu's label of QI %d does not cover row %zu", round, c, q, r);
            }
        }
        assert_int_equal(n, p->count[c]);
        for (int q = 0; q < g->nqi; q++)
            loss += (double)n * table_ncp(t, (uint32_t)q, partition_lo(p, c)[q], partition_hi(p, c)[q]);
        if (n && !counts_hold(m, n, counts))
            fail_msg("round %d: class %zu of %llu rows fails the model", round, c, (unsigned long long)n);
        for (size_t d = c + 1; d < p->nclasses; d++)
            if (p->count[d] && n && !memcmp(p->node + c * t->nqi, p->node + d * t->nqi, t->nqi * sizeof *p->node))
                fail_msg("round %d: classes %zu and %zu have the same labels", round, c, d);
    }
    *suppressed = 0;
    for (size_t r = 0; r < g->nrows; r++) *suppressed += p->class_of[r] == PARTITION_SUPPRESSED;
    return loss;
}

/* The iterations under k-anonymity alone, run directly without the
 * refinement, with the refinement and lifting alone, and with the eviction
 * pass too (local_evict.c: lowering, dissolving and merging classes, with
 * lifting again from k = 20): every partition checked here, no row
 * suppressed, and each loses no more than the one before (the iterations are
 * the same; lifting and eviction only take moves that lower the loss). Both
 * passes must move rows on some tables, eviction also at k >= 20 (merges).
 * The last run again on two and three threads, with every round's
 * measurement cut into parts however small: the same partition (classes,
 * their nodes and rows) and the same moves. */
static void test_iterate_refined_never_worse(void **state)
{
    (void)state;
    tu_rng rng = {4242};
    int lifted = 0, evicted = 0, evicted_large = 0, lowered = 0;
    for (int round = 0; round < 120; round++) {
        const char *dir;
        gen_table g;
        table *t = lattice_round(&rng, &dir, &g);
        uint64_t k = 1 + tu_below(&rng, tu_below(&rng, 3) == 0 ? g.nrows : 6);
        if (round % 4 == 3) k = 20 + tu_below(&rng, 10); /* the merges and cycles of larger k */
        const model m = k_model(k, g.nrows);
        const double tail = round % 2 ? 0.8 : 0.9; /* the published schedule's tail, and the one before it */
        const double final = round % 3 == 1 ? 0.2 : 0; /* with and without a last iteration that publishes all */
        double loss[3];
        partition last = {0};
        inc_local_result last_res = {0};
        for (int mode = 0; mode < 3; mode++) {
            const inc_local_options o = {.method = INC_LOCAL_ITERATE, .iteration_suppression = 0.95, .tail_share = 0.25,
                                         .tail_suppression = tail, .final_share = final, .refine = mode > 0, .evict = mode > 1};
            partition p;
            inc_local_result res;
            run_local(t, &m, &o, &p, &res);
            if (mode == 2) {
                last = p;
                last_res = res;
                break;
            }
            uint64_t supp;
            loss[mode] = checked_loss(&g, t, &m, &p, round, &supp);
            assert_int_equal(supp, 0);
            assert_int_equal(res.suppressed, 0);
            if (mode == 1) lifted += res.lift_moves > 0;
            assert_int_equal(res.evict_moves, 0);
            if (mode == 0) assert_int_equal(res.lift_moves, 0);
            inc_local_result_free(&res);
            partition_free(&p);
        }
        {
            uint64_t supp;
            loss[2] = checked_loss(&g, t, &m, &last, round, &supp);
            assert_int_equal(supp, 0);
            assert_int_equal(last_res.suppressed, 0);
            evicted += last_res.evict_moves > 0;
            evicted_large += last_res.evict_moves > 0 && m.k >= 20;
        }
        for (unsigned threads = 2; threads <= 3; threads++) {
            const inc_local_options o = {.method = INC_LOCAL_ITERATE, .iteration_suppression = 0.95, .tail_share = 0.25,
                                         .tail_suppression = tail, .final_share = final, .refine = 1, .evict = 1, .threads = threads,
                                         .part_min = 1};
            partition p;
            inc_local_result res;
            run_local(t, &m, &o, &p, &res);
            assert_int_equal(res.lift_moves, last_res.lift_moves);
            assert_int_equal(res.evict_moves, last_res.evict_moves);
            assert_int_equal(res.lift_rounds, last_res.lift_rounds);
            assert_int_equal(res.evict_rounds, last_res.evict_rounds);
            assert_int_equal(p.nclasses, last.nclasses);
            assert_memory_equal(p.class_of, last.class_of, t->nrows * sizeof *p.class_of);
            assert_memory_equal(p.count, last.count, p.nclasses * sizeof *p.count);
            assert_memory_equal(p.node, last.node, p.nclasses * t->nqi * sizeof *p.node);
            inc_local_result_free(&res);
            partition_free(&p);
        }
        inc_local_result_free(&last_res);
        partition_free(&last);
        for (int mode = 1; mode < 3; mode++)
            if (loss[mode] > loss[mode - 1] + 1e-9 * (1 + loss[mode - 1]))
                fail_msg("round %d (k = %llu): loss %.9f of mode %d above %.9f", round, (unsigned long long)m.k,
                         loss[mode], mode, loss[mode - 1]);
        lowered += loss[2] < loss[1] - 1e-9 * (1 + loss[1]);
        lattice_round_end(t, dir);
    }
    assert_true(lifted > 10);       /* the lifting pass does move rows */
    assert_true(evicted > 10);      /* so does the eviction pass */
    assert_true(evicted_large > 2); /* also with merges */
    assert_true(lowered > 10);      /* and it lowers the loss */
    print_message("lifted on %d tables, evicted on %d (%d at k >= 20), loss lowered on %d\n", lifted, evicted,
                  evicted_large, lowered);
}

/* The split search run directly (method SPLIT, also under k and distinct l,
 * where the default iterates), under k or an l-diversity variant; its
 * partition checked here. */
static void test_split_partition_checked(void **state)
{
    (void)state;
    tu_rng rng = {90210};
    int split_rounds = 0;
    for (int round = 0; round < 150; round++) {
        const char *dir;
        gen_table g;
        table *t = lattice_round(&rng, &dir, &g);
        const rand_model rm = random_model(&rng, g.nrows);
        model m = k_model(rm.k, g.nrows);
        if (rm.kind == 1) {
            m.l = rm.l;
            m.l_variants = 1u << rm.variant;
            m.c = rm.c;
        }
        const inc_local_options o = {.method = INC_LOCAL_SPLIT};
        partition p;
        inc_local_result res;
        run_local(t, &m, &o, &p, &res);
        assert_int_equal(res.method, INC_LOCAL_SPLIT);
        split_rounds += res.splits > 0;
        /* Each class: its rows' labels are its nodes (so they cover the rows), it satisfies the model,
         * and no other class has these nodes. */
        uint64_t supp;
        const double loss = checked_loss(&g, t, &m, &p, round, &supp);
        const double top = (double)(g.nrows - supp) * g.nqi; /* every published row at NCP 1 in every QI */
        /* Every row published, or none (the whole table fails the model). */
        assert_int_equal(supp, res.suppressed);
        uint32_t counts[64] = {0};
        for (size_t r = 0; r < g.nrows; r++) counts[g.sensitive[r]]++;
        assert_int_equal(supp, counts_hold(&m, g.nrows, counts) ? 0 : g.nrows);
        if (loss > top + 1e-9) fail_msg("round %d: loss %.6f above the top's %.6f", round, loss, top);
        inc_local_result_free(&res);
        partition_free(&p);
        lattice_round_end(t, dir);
    }
    assert_true(split_rounds > 50); /* the search does split */
}

/* One iteration's loss at node `level` by brute force: the rows of classes
 * that satisfy the model (k or distinct l, classes found by comparing every
 * pair of rows' ancestors) cost their NCP, the others nothing; *failing: those
 * others. */
static double brute_iteration_loss(const gen_table *g, const table *t, const model *m, const uint32_t *level,
                                   const double (*ncp)[LATTICE_MAX_LEVELS][MAX_ROWS], uint64_t *failing)
{
    double loss = 0;
    *failing = 0;
    for (size_t r = 0; r < g->nrows; r++) {
        uint32_t counts[64] = {0};
        uint64_t n = 0;
        for (size_t x = 0; x < g->nrows; x++) {
            int same = 1;
            for (int q = 0; q < g->nqi && same; q++)
                same = hier_ancestor(t->qi[q].h, lattice_leaf_of(g, t, r, q), level[q]) ==
                       hier_ancestor(t->qi[q].h, lattice_leaf_of(g, t, x, q), level[q]);
            if (same) {
                n++;
                counts[g->sensitive[x]]++;
            }
        }
        if (!counts_hold(m, n, counts)) {
            (*failing)++;
            continue;
        }
        for (int q = 0; q < g->nqi; q++) loss += ncp[q][level[q]][r];
    }
    return loss;
}

/* Every node of the lattice by brute force, in index order (an odometer over
 * the levels, QI 0 varying slowest): its iteration loss into loss[] and its
 * failing rows into failing[] (brute_iteration_loss), at most 4096 nodes.
 * Returns the number of nodes. */
static size_t brute_every_node(const gen_table *g, const table *t, const model *m,
                               const double (*ncp)[LATTICE_MAX_LEVELS][MAX_ROWS], double *loss, uint64_t *failing)
{
    size_t nnodes = 0;
    uint32_t level[MAX_QI] = {0};
    for (;;) {
        assert_true(nnodes < 4096);
        loss[nnodes] = brute_iteration_loss(g, t, m, level, ncp, &failing[nnodes]);
        nnodes++;
        int q = g->nqi;
        while (q-- > 0) {
            if (++level[q] <= inc_qi_height(t, (uint32_t)q)) break;
            level[q] = 0;
        }
        if (q < 0) break;
    }
    return nnodes;
}

/* The least loss of the nodes with at most `limit` failing rows into *best;
 * 0 when there is no such node. */
static int least_loss(size_t nnodes, const double *loss, const uint64_t *failing, uint64_t limit, double *best)
{
    int found = 0;
    for (size_t i = 0; i < nnodes; i++)
        if (failing[i] <= limit && (!found || loss[i] < *best)) {
            *best = loss[i];
            found = 1;
        }
    return found;
}

/* The search of one iteration of local recoding (optimal.c with defer = 0:
 * a row left to a later iteration costs nothing, at most `limit` rows left),
 * under k alone or distinct l: the fast search and the exhaustive one choose
 * the same node, which leaves at most `limit` rows, and its loss is the least
 * of every such node's by brute force, over every node of the lattice. */
static void test_iteration_search_brute_force(void **state)
{
    (void)state;
    tu_rng rng = {1126};
    static double ncp[MAX_QI][LATTICE_MAX_LEVELS][MAX_ROWS];
    int compared = 0;
    for (int round = 0; round < 60; round++) {
        const char *dir;
        gen_table g;
        table *t = lattice_round(&rng, &dir, &g);
        model m = k_model(1 + tu_below(&rng, 6), g.nrows);
        if (round % 3 == 2) {
            m.l = 2;
            m.l_variants = MODEL_L_DISTINCT;
        }
        lattice_row_ncp(&g, t, ncp);
        /* Every node's loss and failing rows by brute force (index order). */
        static double node_loss[4096];
        static uint64_t node_failing[4096];
        const size_t nnodes = brute_every_node(&g, t, &m, ncp, node_loss, node_failing);
        static const double leave[] = {0.5, 0.9, 0.95};
        for (int s = 0; s < 3; s++) {
            inc_ctx c;
            ak_error err;
            assert_int_equal(inc_ctx_init(&c, t, &m, 0, &err), ANONKIT_OK);
            c.limit = model_suppression_limit(leave[s], g.nrows);
            c.defer = 0;
            inc_opt_result fast, slow;
            const int rc = inc_optimal_ctx(&c, INC_CHOOSE_GCP, NULL, 0, &fast, &err);
            assert_int_equal(inc_optimal_ctx(&c, INC_CHOOSE_GCP, NULL, 1, &slow, &err), rc);
            double best = 0;
            if (!least_loss(nnodes, node_loss, node_failing, c.limit, &best)) {
                assert_int_equal(rc, ANONKIT_E_INELIGIBLE);
            } else {
                assert_int_equal(rc, ANONKIT_OK);
                assert_true(fast.lv == slow.lv);
                size_t at = 0; /* the chosen node's index: QI 0 varies slowest */
                for (int q = 0; q < g.nqi; q++)
                    at = at * (inc_qi_height(t, (uint32_t)q) + 1) + inc_level(&c, fast.lv, (uint32_t)q);
                assert_true(node_failing[at] <= c.limit);
                assert_int_equal(fast.suppressed, node_failing[at]);
                if (fabs(node_loss[at] - best) > 1e-9 * (1 + best) || fabs(fast.loss - best) > 1e-9 * (1 + best))
                    fail_msg("round %d, limit %llu: loss %.17g (reported %.17g), brute force %.17g", round,
                             (unsigned long long)c.limit, node_loss[at], fast.loss, best);
                compared++;
            }
            inc_ctx_free(&c);
        }
        lattice_round_end(t, dir);
    }
    assert_true(compared > 100);
}

/* The last iteration (inc_local_options.final_share) under k alone: an
 * iteration that starts with at most that share of the rows publishes them
 * all, so it is the last one and every one before it started with more; with
 * the share 1 the single iteration's node is the one of least loss over every
 * node without a failing row, by brute force over the lattice. The partitions
 * are checked here, none suppresses a row, and lifting and eviction after the
 * last iteration lose no more than the iterations alone. */
static void test_iterate_final_share(void **state)
{
    (void)state;
    tu_rng rng = {2815};
    static double ncp[MAX_QI][LATTICE_MAX_LEVELS][MAX_ROWS];
    int stopped = 0;
    for (int round = 0; round < 60; round++) {
        const char *dir;
        gen_table g;
        table *t = lattice_round(&rng, &dir, &g);
        const model m = k_model(1 + tu_below(&rng, 6), g.nrows);
        lattice_row_ncp(&g, t, ncp);
        /* The least loss of a node without a failing row (index order: QI 0 varies slowest). */
        static double node_loss[4096];
        static uint64_t node_failing[4096];
        const size_t nnodes = brute_every_node(&g, t, &m, ncp, node_loss, node_failing);
        double best = 0;
        assert_true(least_loss(nnodes, node_loss, node_failing, 0, &best)); /* the top node: one class of n >= k rows */
        static const double shares[] = {1.0, 0.3};
        for (int s = 0; s < 2; s++) {
            double loss[2];
            for (int refine = 0; refine < 2; refine++) {
                const inc_local_options o = {.method = INC_LOCAL_ITERATE, .iteration_suppression = 0.95,
                                             .tail_share = 0.25, .tail_suppression = 0.8, .final_share = shares[s],
                                             .refine = refine, .evict = refine};
                partition p;
                inc_local_result res;
                run_local(t, &m, &o, &p, &res);
                uint64_t supp;
                loss[refine] = checked_loss(&g, t, &m, &p, round, &supp);
                assert_int_equal(supp, 0);
                assert_int_equal(res.suppressed, 0);
                assert_true(res.niter >= 1);
                for (size_t i = 0; i + 1 < res.niter; i++)
                    if (!((double)res.iter[i].rows > shares[s] * (double)g.nrows))
                        fail_msg("round %d: iteration %zu of %zu started with %llu of %zu rows, yet another followed",
                                 round, i, res.niter, (unsigned long long)res.iter[i].rows, g.nrows);
                const inc_local_iteration *last = &res.iter[res.niter - 1];
                assert_int_equal(last->published, last->rows);
                if (s == 0) {
                    assert_int_equal(res.niter, 1);
                    size_t at = 0;
                    for (int q = 0; q < g.nqi; q++) at = at * (inc_qi_height(t, (uint32_t)q) + 1) + last->levels[q];
                    assert_int_equal(node_failing[at], 0);
                    if (fabs(node_loss[at] - best) > 1e-9 * (1 + best))
                        fail_msg("round %d: the last iteration's node loses %.17g, the best node %.17g", round,
                                 node_loss[at], best);
                } else if (refine == 0) {
                    stopped += res.niter > 1 && (double)last->rows <= shares[s] * (double)g.nrows;
                }
                inc_local_result_free(&res);
                partition_free(&p);
            }
            if (loss[1] > loss[0] + 1e-9 * (1 + loss[0]))
                fail_msg("round %d: loss %.9f after the passes above %.9f of the iterations", round, loss[1], loss[0]);
        }
        lattice_round_end(t, dir);
    }
    assert_true(stopped > 5); /* the share stopped the iterations after some had run */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_local_every_model_verified),
        cmocka_unit_test(test_split_partition_checked),
        cmocka_unit_test(test_iterate_refined_never_worse),
        cmocka_unit_test(test_iteration_search_brute_force),
        cmocka_unit_test(test_iterate_final_share),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
