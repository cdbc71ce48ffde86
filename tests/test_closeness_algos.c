/* test_closeness_algos.c — t-closeness, δ-disclosure and β-likeness in the
 * algorithms (docs/ARCHITECTURE.md §5, §6):
 *
 *  - random tables with random models (k with t under each ground distance,
 *    δ, β basic or enhanced) anonymized by Mondrian, Rothko-T and Rothko-S
 *    and proven by the independent verifier (anonkit_check, from the
 *    published file alone); a table too small for k must fail cleanly;
 *  - Mondrian's partitioning minimal by brute force: no class has a numeric
 *    cut or a categorical specialization whose parts all satisfy the model;
 *  - Incognito: the anonymous and the minimal nodes of every variant equal a
 *    brute force that groups the rows at every node of the lattice, and its
 *    output is proven by the verifier; with suppression the models are refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "algo/incognito/incognito.h"
#include "algo/mondrian/mondrian.h"
#include "anonkit/anonkit.h"
#include "core/hierarchy.h"
#include "core/partition.h"
#include "core/table.h"
#include "model/closeness.h"
#include "model/model.h"
#include "lattice_table.h" /* (lattice_all_nodes; its MAX_QI is testutil's) */
#include "mondrian_check.h"
#include "testutil.h"

_Static_assert(MAX_QI == TU_MAX_QI, "the random tables' QIs fit the lattice helpers");

/* The sensitive column: categorical d0..d7 (a hierarchy groups them by
 * threes), or numeric (the ordered distance). */
typedef struct sens_ctx {
    int numeric;
    int value[TU_MAX_ROWS];
} sens_ctx;

static void sens_tail(tu_rng *rng, FILE *f, const tu_table *g, size_t row, void *ctx)
{
    (void)g;
    sens_ctx *c = ctx;
    int v = (int)tu_below(rng, 8);
    if (tu_below(rng, 3) == 0) v = 0; /* a dominant value */
    c->value[row] = v;
    if (c->numeric) fprintf(f, ",%d\n", 1000 * v - 2500 + (v % 3));
    else fprintf(f, ",d%d\n", v);
}

static void write_sens_hierarchy(const char *path)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    for (int v = 7; v >= 0; v--) fprintf(f, "d%d;G%d;*\n", v, v / 3);
    fclose(f);
}

/* A fresh random case: a folder (into dir) with the path of its output
 * (out.csv) and the sensitive hierarchy (s.csv, written; path into shier),
 * and a random table of shape `base` in it, its sensitive column numeric one
 * time in three (sc, which the table's tail writes from). */
static void random_case(tu_rng *rng, const tu_table_shape *base, char dir[4096], char out[4200], char shier[4200],
                        sens_ctx *sc, tu_table *g)
{
    snprintf(dir, 4096, "%s", tu_mkdtemp());
    snprintf(out, 4200, "%s/out.csv", dir);
    snprintf(shier, 4200, "%s/s.csv", dir);
    write_sens_hierarchy(shier);
    memset(sc, 0, sizeof *sc);
    sc->numeric = tu_below(rng, 3) == 0;
    tu_table_shape shape = *base;
    shape.ctx = sc;
    tu_random_table(rng, dir, &shape, g);
}

/* A random distribution model (and k) into the job and into m. */
static void random_model(tu_rng *rng, const tu_table *g, int numeric, const char *shier, model *m, anonkit_job *job)
{
    model_init(m);
    char text[64];
    m->k = tu_below(rng, 8) == 0 ? g->nrows + 1 + tu_below(rng, 3) : 1 + tu_below(rng, tu_below(rng, 5) == 0 ? g->nrows + 3 : 6);
    snprintf(text, sizeof text, "%llu", (unsigned long long)m->k);
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_K, text), ANONKIT_OK);
    const int which = (int)tu_below(rng, 4); /* 0..2: one model; 3: all three */
    if (which == 0 || which == 3) {
        m->dist.t = (double)tu_below(rng, 13) / 20.0;
        m->dist.t_distance = numeric ? MODEL_T_ORDERED : tu_below(rng, 2) ? MODEL_T_HIERARCHICAL : MODEL_T_EQUAL;
        snprintf(text, sizeof text, "%g", m->dist.t);
        assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_T, text), ANONKIT_OK);
        assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_T_DISTANCE, model_t_distance_name(m->dist.t_distance)),
                         ANONKIT_OK);
        if (m->dist.t_distance == MODEL_T_HIERARCHICAL) {
            char h[4200];
            snprintf(h, sizeof h, "s=%s", shier);
            assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_HIERARCHY, h), ANONKIT_OK);
            m->dist.hierarchy = shier;
        }
    }
    if (which == 1 || which == 3) {
        m->dist.delta = 0.25 + (double)tu_below(rng, 16) / 4.0;
        snprintf(text, sizeof text, "%g", m->dist.delta);
        assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_DELTA_DISCLOSURE, text), ANONKIT_OK);
    }
    if (which == 2 || which == 3) {
        m->dist.beta = 0.25 + (double)tu_below(rng, 16) / 4.0;
        m->dist.beta_variant = (unsigned)tu_below(rng, 2);
        snprintf(text, sizeof text, "%g", m->dist.beta);
        assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_BETA, text), ANONKIT_OK);
        assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_BETA_VARIANT, model_beta_variant_name(m->dist.beta_variant)),
                         ANONKIT_OK);
    }
}

static table *load(const tu_table *g, int all_categorical)
{
    const char *names[MAX_QI] = {"a0", "a1", "a2", "a3"};
    const char *paths[MAX_QI];
    for (int q = 0; q < g->nqi; q++) paths[q] = g->categorical[q] || all_categorical ? g->hier_path[q] : NULL;
    const char *ids[] = {"id"};
    table_spec spec = {.path = g->csv_path, .display_name = g->csv_path, .delimiter = ',', .nqi = (size_t)g->nqi,
                       .qi_names = names, .hierarchy_paths = paths, .sensitive_name = "s", .nidentifiers = 1,
                       .identifier_names = ids, .threads = 1};
    table *t = NULL;
    ak_error err;
    if (table_load(&t, &spec, &err) != ANONKIT_OK) fail_msg("table_load: %s", err.message);
    return t;
}

/* The table's reference for m, set into m->ref. */
static model_ref *attach_ref(model *m, const table *t)
{
    uint64_t counts[64] = {0};
    for (size_t i = 0; i < t->nrows; i++) counts[t->sensitive_codes[i]]++;
    model_ref *ref = NULL;
    ak_error err;
    if (model_ref_for(&m->dist, &t->sensitive_dict, counts, "s", &ref, &err) != ANONKIT_OK)
        fail_msg("reference: %s", err.message);
    m->ref = ref;
    return ref;
}

/* Whether the rows satisfy k and the distribution models (histogram built here). */
static int rows_hold(const model *m, model_work *w, const table *t, const size_t *rows, size_t n)
{
    if (n < m->k) return 0;
    uint32_t per[64] = {0}, codes[64], counts[64];
    size_t d = 0;
    for (size_t i = 0; i < n; i++) per[t->sensitive_codes[rows[i]]]++;
    for (uint32_t s = 0; s < 64; s++)
        if (per[s]) {
            codes[d] = s;
            counts[d++] = per[s];
        }
    return model_dist_holds(&m->dist, m->ref, w, n, codes, counts, d);
}

/* rows_hold for mc_assert_minimal: the model and its work space. */
typedef struct hold_ctx {
    const model *m;
    model_work *w;
} hold_ctx;

static int ctx_rows_hold(void *ctx, const table *t, const size_t *rows, size_t n)
{
    const hold_ctx *h = ctx;
    return rows_hold(h->m, h->w, t, rows, n);
}

/* Brute force: no allowable split remains in any class of p. */
static void assert_minimal(const model *m, const table *t, const partition *p)
{
    hold_ctx h = {m, model_work_new(m->ref)};
    assert_non_null(h.w);
    mc_assert_minimal(t, p, ctx_rows_hold, &h);
    model_work_free(h.w);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Sorts the lines of text in place (a published file as a multiset of rows). */
static void sort_lines(char *text)
{
    size_t n = 0, len = strlen(text);
    for (size_t i = 0; i < len; i++) n += text[i] == '\n';
    char **lines = malloc((n + 1) * sizeof *lines), *copy = malloc(len + 1);
    assert_true(lines && copy);
    memcpy(copy, text, len + 1);
    size_t k = 0;
    for (char *p = strtok(copy, "\n"); p; p = strtok(NULL, "\n")) lines[k++] = p;
    qsort(lines, k, sizeof *lines, cmp_str);
    char *w = text;
    for (size_t i = 0; i < k; i++) w += sprintf(w, "%s\n", lines[i]);
    *w = '\0';
    free(lines);
    free(copy);
}

static const tu_table_shape mondrian_shape = {
    .min_rows = 1, .rows_span = 120, .rows_span_rare = 300, .max_qi = 3, .categorical_one_in = 2,
    .numeric_small = 6, .numeric_large = 40, .scale = 5, .offset = -40, .skew = 1,
    .tail_header = ",s", .tail = sens_tail,
};

static void test_mondrian_family(void **state)
{
    (void)state;
    tu_rng rng = {2026};
    int eligible_runs = 0, ineligible_runs = 0, nontrivial = 0;
    static const char *const algos[] = {"mondrian", "rothko-t", "rothko-s"};
    char *mondrian_text = NULL;
    for (int iter = 0; iter < 90; iter++) {
        char dir_copy[4096], out[4200], shier[4200];
        sens_ctx sc;
        tu_table g;
        random_case(&rng, &mondrian_shape, dir_copy, out, shier, &sc, &g);
        model m;
        const tu_rng replay_seed = rng; /* the model is drawn again from here for each algorithm's job */
        anonkit_job *probe = anonkit_job_create();
        random_model(&rng, &g, sc.numeric, shier, &m, probe);
        anonkit_job_free(probe);
        const tu_rng after = rng;
        const int eligible = m.k <= g.nrows;
        for (size_t a = 0; a < sizeof algos / sizeof *algos; a++) {
            anonkit_job *job = anonkit_job_create();
            tu_job_table(job, &g);
            tu_rng replay = replay_seed;
            model again;
            random_model(&replay, &g, sc.numeric, shier, &again, job); /* the same model into this job */
            assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_OUTPUT, out), ANONKIT_OK);
            assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_ALGORITHM, algos[a]), ANONKIT_OK);
            assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_SEED, "5"), ANONKIT_OK);
            if (a) {
                assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_MEMORY, "256K"), ANONKIT_OK);
                assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_BLOCK_SIZE, "2K"), ANONKIT_OK);
            }
            char what[96];
            snprintf(what, sizeof what, "iteration %d, %s", iter, algos[a]);
            uint64_t classes = 0, rows = 0;
            anonkit_result *res = tu_anonymize_verified(job, out, eligible, what, &classes, &rows);
            if (eligible) assert_int_equal(rows, g.nrows);
            if (eligible && a < 2) { /* Rothko-T publishes Mondrian's rows (as multisets) */
                char *text = tu_read_file(out, NULL);
                assert_non_null(text);
                sort_lines(text);
                if (a == 0) mondrian_text = text;
                else {
                    if (strcmp(mondrian_text, text) != 0) fail_msg("%s: rothko-t differs from mondrian", what);
                    free(text);
                    free(mondrian_text);
                    mondrian_text = NULL;
                }
            }
            anonkit_result_free(res);
            anonkit_job_free(job);
            unlink(out);
        }
        rng = after;
        if (eligible) {
            table *t = load(&g, 0);
            model_ref *ref = attach_ref(&m, t);
            partition p;
            ak_error err;
            assert_int_equal(partition_init(&p, t->nrows, t->nqi, &err), ANONKIT_OK);
            if (mdr_run(t, &m, 1, &p, &err) != ANONKIT_OK) fail_msg("iteration %d: %s", iter, err.message);
            assert_minimal(&m, t, &p);
            nontrivial += p.nclasses > 1;
            partition_free(&p);
            model_ref_free(ref);
            table_free(t);
            eligible_runs++;
        } else {
            ineligible_runs++;
        }
        tu_rmtree(dir_copy);
    }
    assert_true(eligible_runs > 50);
    printf("mondrian family: %d eligible tables (%d with several classes), %d ineligible\n", eligible_runs, nontrivial, ineligible_runs);
    assert_true(ineligible_runs > 3);
    assert_true(nontrivial > 20);
}

/* ---- Incognito against a brute force over the lattice ---- */

#define MAX_NODES 2048

/* Whether every class at node `levels` satisfies m (rows grouped by their ancestors). */
static int node_anonymous(const tu_table *g, const table *t, const model *m, model_work *w, const uint32_t *levels)
{
    static uint32_t anc[TU_MAX_ROWS][MAX_QI];
    static unsigned char done[TU_MAX_ROWS];
    static size_t rows[TU_MAX_ROWS];
    for (size_t r = 0; r < g->nrows; r++) {
        done[r] = 0;
        for (int q = 0; q < g->nqi; q++) {
            char text[32];
            snprintf(text, sizeof text, "v%d", g->value[r][q]);
            uint32_t leaf;
            assert_int_equal(hier_find_leaf(t->qi[q].h, text, strlen(text), &leaf), 0);
            anc[r][q] = hier_ancestor(t->qi[q].h, leaf, levels[q]);
        }
    }
    for (size_t r = 0; r < g->nrows; r++) {
        if (done[r]) continue;
        size_t n = 0;
        for (size_t s = r; s < g->nrows; s++)
            if (!done[s] && !memcmp(anc[r], anc[s], (size_t)g->nqi * sizeof anc[r][0])) {
                done[s] = 1;
                rows[n++] = s;
            }
        if (!rows_hold(m, w, t, rows, n)) return 0;
    }
    return 1;
}

static void incognito_case(const tu_table *g, const table *t, const model *m)
{
    static uint32_t nodes[MAX_NODES * MAX_QI], anon[MAX_NODES * MAX_QI], minimal[MAX_NODES * MAX_QI];
    static unsigned char is_anon[MAX_NODES];
    const uint32_t nqi = t->nqi;
    const size_t n = lattice_all_nodes(t, nodes, MAX_NODES); /* by height, then lexicographically: the search's order */
    model_work *w = model_work_new(m->ref);
    for (size_t i = 0; i < n; i++) is_anon[i] = (unsigned char)node_anonymous(g, t, m, w, nodes + i * nqi);
    size_t na, nm;
    lattice_anonymous_and_minimal(nodes, n, nqi, is_anon, anon, &na, minimal, &nm);
    /* the generalization property: every generalization of an anonymous node is anonymous */
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n && is_anon[i]; j++) {
            int above = 1;
            for (uint32_t q = 0; q < nqi; q++) above &= nodes[j * nqi + q] >= nodes[i * nqi + q];
            if (above && !is_anon[j]) fail_msg("generalization property broken between nodes %zu and %zu", i, j);
        }
    const int eligible = is_anon[n - 1];
    static const inc_variant variants[] = {INC_BASIC, INC_SUPER_ROOTS, INC_CUBE};
    for (size_t v = 0; v < sizeof variants / sizeof *variants; v++) {
        inc_options o = {.variant = variants[v], .suppression = 0, .choose = INC_CHOOSE_GCP};
        inc_result r;
        ak_error err;
        const int rc = inc_search(t, m, &o, &r, &err);
        if (!eligible) {
            assert_int_equal(rc, ANONKIT_E_INELIGIBLE);
            continue;
        }
        if (rc != ANONKIT_OK) fail_msg("%s: %s", inc_variant_name(o.variant), err.message);
        if (r.nanonymous != na)
            fail_msg("%s: %zu anonymous nodes, brute force %zu", inc_variant_name(o.variant), r.nanonymous, na);
        assert_memory_equal(r.anonymous, anon, na * nqi * sizeof *anon);
        assert_int_equal(r.nminimal, nm);
        assert_memory_equal(r.minimal, minimal, nm * nqi * sizeof *minimal);
        inc_result_free(&r);
    }
    model_work_free(w);
}

static const tu_table_shape incognito_shape = {
    .min_rows = 1, .rows_span = 80, .rows_span_rare = 200, .max_qi = 3, .categorical_one_in = 1, .skew = 1,
    .tail_header = ",s", .tail = sens_tail,
};

static void test_incognito(void **state)
{
    (void)state;
    tu_rng rng = {77};
    int eligible_runs = 0, several = 0;
    for (int iter = 0; iter < 70; iter++) {
        char dir_copy[4096], out[4200], shier[4200];
        sens_ctx sc;
        tu_table g;
        random_case(&rng, &incognito_shape, dir_copy, out, shier, &sc, &g);
        anonkit_job *job = anonkit_job_create();
        tu_job_table(job, &g);
        model m;
        random_model(&rng, &g, sc.numeric, shier, &m, job);
        assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_OUTPUT, out), ANONKIT_OK);
        assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_ALGORITHM, "incognito"), ANONKIT_OK);
        table *t = load(&g, 1);
        model_ref *ref = attach_ref(&m, t);
        incognito_case(&g, t, &m);
        /* eligible exactly when the top node (one class) is: k <= rows */
        const int eligible = m.k <= g.nrows;
        char what[64];
        snprintf(what, sizeof what, "incognito iteration %d", iter);
        anonkit_result *res = tu_anonymize_verified(job, out, eligible, what, NULL, NULL);
        if (eligible) {
            eligible_runs++;
            several += anonkit_result_classes(res) > 1;
        }
        anonkit_result_free(res);
        /* suppression with these models: refused, nothing written */
        unlink(out);
        assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_SUPPRESSION, "0.1"), ANONKIT_OK);
        assert_int_equal(anonkit_anonymize(job, NULL), ANONKIT_E_USAGE);
        assert_non_null(strstr(anonkit_errmsg(job), "generalization property"));
        assert_int_not_equal(access(out, F_OK), 0);
        anonkit_job_free(job);
        model_ref_free(ref);
        table_free(t);
        tu_rmtree(dir_copy);
    }
    assert_true(eligible_runs > 40);
    assert_true(several > 10);
}

/* The 1-D algorithms refuse the models; nothing is written. */
static void test_onedim_refuses(void **state)
{
    (void)state;
    const char *dir = tu_mkdtemp();
    char in[4200], out[4200];
    snprintf(in, sizeof in, "%s/in.csv", dir);
    snprintf(out, sizeof out, "%s/out.csv", dir);
    tu_write_file(in, "x,s\n1,a\n2,b\n3,a\n4,b\n");
    static const char *const algos[] = {"hilbert", "idistance", "hilbert-fast", "idistance-fast"};
    for (size_t a = 0; a < 4; a++) {
        anonkit_job *job = anonkit_job_create();
        anonkit_job_set(job, ANONKIT_OPT_INPUT, in);
        anonkit_job_set(job, ANONKIT_OPT_OUTPUT, out);
        anonkit_job_set(job, ANONKIT_OPT_QI, "x");
        anonkit_job_set(job, ANONKIT_OPT_SENSITIVE, "s");
        anonkit_job_set(job, ANONKIT_OPT_K, "2");
        anonkit_job_set(job, ANONKIT_OPT_BETA, "1");
        anonkit_job_set(job, ANONKIT_OPT_ALGORITHM, algos[a]);
        assert_int_equal(anonkit_anonymize(job, NULL), ANONKIT_E_USAGE);
        assert_non_null(strstr(anonkit_errmsg(job), "beta-likeness"));
        assert_int_not_equal(access(out, F_OK), 0);
        anonkit_job_free(job);
    }
    tu_rmtree(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mondrian_family),
        cmocka_unit_test(test_incognito),
        cmocka_unit_test(test_onedim_refuses),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
