/* test_mondrian.c — property tests of in-memory Mondrian ([LeFevre07] §1.2, [LeFevre06]).
 *
 * Random tables with random hierarchies and random k / l settings are
 * anonymized through the public API and proven by the independent verifier
 * (anonkit_check); the partitioning is checked by brute force to be minimal
 * (no allowable split remains in any class), strict (class boxes pairwise
 * disjoint) and truthful (every published value covers the original value);
 * ineligible tables must fail cleanly and write nothing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "algo/mondrian/mondrian.h"
#include "anonkit/anonkit.h"
#include "core/hierarchy.h"
#include "core/partition.h"
#include "core/table.h"
#include "io/csv.h"
#include "model/model.h"
#include "mondrian_check.h"
#include "testutil.h"

#define MAX_QI TU_MAX_QI

/* The random tables (tu_random_table): 1 to 120 rows (one table in four up
 * to 400), 1 to 4 QIs, half of them categorical, numeric values -40, -35, ...
 * over 1..6 or 1..60 of them, duplicate-heavy values, 1 to 8 sensitive
 * values with d0 dominant, and a quoted note column. */
typedef tu_table gen_table;

static const tu_table_shape table_shape = {
    .min_rows = 1, .rows_span = 120, .rows_span_rare = 400, .max_qi = 4, .categorical_one_in = 2,
    .numeric_small = 6, .numeric_large = 60, .scale = 5, .offset = -40, .skew = 1,
    .max_sensitive = 8, .dominant_one_in = 2, .note = 1,
};

static void generate(tu_rng *rng, const char *dir, gen_table *g) { tu_random_table(rng, dir, &table_shape, g); }

static const char *const variant_names[] = {"distinct", "entropy", "recursive", "probabilistic"};

/* A random model: k, and sometimes an l-diversity variant. */
static void random_model(tu_rng *rng, const gen_table *g, model *m, anonkit_job *job)
{
    model_init(m);
    m->k = 1 + tu_below(rng, tu_below(rng, 3) == 0 ? g->nrows + 3 : 12);
    char text[64];
    snprintf(text, sizeof text, "%llu", (unsigned long long)m->k);
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_K, text), ANONKIT_OK);
    if (tu_below(rng, 2) == 0) {
        m->l = (double)(1 + tu_below(rng, 4));
        unsigned v = (unsigned)tu_below(rng, 4);
        m->l_variants = 1u << v;
        m->c = 1 + (double)tu_below(rng, 3);
        snprintf(text, sizeof text, "%g", m->l);
        assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_L, text), ANONKIT_OK);
        assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_L_VARIANT, variant_names[v]), ANONKIT_OK);
        snprintf(text, sizeof text, "%g", m->c);
        assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_C, text), ANONKIT_OK);
    }
}

/* Whether the rows in `rows` satisfy the model ctx points to (counts
 * computed here, independently); the mc_rows_hold of mc_assert_minimal. */
static int rows_hold(void *ctx, const table *t, const size_t *rows, size_t n)
{
    uint32_t counts[64] = {0}, list[64], scratch[64];
    size_t distinct = 0;
    for (size_t i = 0; i < n; i++) counts[t->sensitive_codes[rows[i]]]++;
    for (int s = 0; s < 64; s++)
        if (counts[s]) list[distinct++] = counts[s];
    return model_holds(ctx, n, list, distinct, scratch);
}

/* Strict partitioning: any two class boxes are disjoint in some QI. */
static void assert_strict(const partition *p)
{
    for (size_t a = 0; a < p->nclasses; a++)
        for (size_t b = a + 1; b < p->nclasses; b++) {
            int disjoint = 0;
            for (uint32_t q = 0; q < p->nqi && !disjoint; q++)
                disjoint = partition_hi(p, a)[q] < partition_lo(p, b)[q] || partition_hi(p, b)[q] < partition_lo(p, a)[q];
            if (!disjoint) fail_msg("classes %zu and %zu overlap", a, b);
        }
}

/* Every published row (input order kept) covers its original values. */
static void assert_truthful(const gen_table *g, const char *out_path)
{
    csv_reader *r;
    ak_error err;
    assert_int_equal(csv_reader_open(&r, out_path, ',', &err), ANONKIT_OK);
    hier *h[MAX_QI] = {0};
    for (int q = 0; q < g->nqi; q++)
        if (g->categorical[q]) assert_int_equal(hier_load(&h[q], g->hier_path[q], &err), ANONKIT_OK);
    csv_record rec;
    assert_int_equal(csv_read(r, &rec, &err), 1);
    assert_int_equal(rec.count, (uint32_t)g->nqi + 2); /* id dropped */
    size_t row = 0;
    while (csv_read(r, &rec, &err) == 1) {
        assert_true(row < g->nrows);
        for (int q = 0; q < g->nqi; q++) {
            char text[256];
            snprintf(text, sizeof text, "%.*s", (int)rec.fields[q].len, rec.fields[q].data);
            if (g->categorical[q]) {
                char leaf_label[32];
                snprintf(leaf_label, sizeof leaf_label, "v%d", g->value[row][q]);
                uint32_t leaf, node = hier_find_label(h[q], text, strlen(text));
                assert_int_equal(hier_find_leaf(h[q], leaf_label, strlen(leaf_label), &leaf), 0);
                if (node == UINT32_MAX) fail_msg("row %zu: '%s' is no label", row, text);
                /* the label's node covers the original leaf (labels are unique per level here) */
                int covered = 0;
                for (uint32_t level = 0; level <= hier_height(h[q]); level++) {
                    uint32_t anc = hier_ancestor(h[q], leaf, level);
                    if (strcmp(hier_node_at(h[q], anc)->label, text) == 0) covered = 1;
                }
                if (!covered) fail_msg("row %zu: '%s' does not cover %s", row, text, leaf_label);
            } else {
                int v = g->value[row][q] * 5 - 40, lo, hi;
                char *dash = strchr(text + 1, '-');
                if (dash && dash[-1] != '-') {
                    *dash = '\0';
                    lo = atoi(text);
                    hi = atoi(dash + 1);
                } else {
                    lo = hi = atoi(text);
                }
                if (v < lo || v > hi) fail_msg("row %zu: value %d outside published %d..%d", row, v, lo, hi);
            }
        }
        char note[64];
        snprintf(note, sizeof note, "x, %zu", row);
        assert_int_equal(rec.fields[g->nqi + 1].len, strlen(note));
        assert_memory_equal(rec.fields[g->nqi + 1].data, note, strlen(note));
        row++;
    }
    assert_int_equal(row, g->nrows);
    for (int q = 0; q < g->nqi; q++) hier_free(h[q]);
    csv_reader_free(r);
}

/* Whether the whole generated table satisfies m (computed independently). */
static int table_eligible(const gen_table *g, const model *m)
{
    uint32_t counts[64] = {0}, list[64], scratch[64];
    size_t distinct = 0;
    for (size_t r = 0; r < g->nrows; r++) counts[g->sensitive[r]]++;
    for (int s = 0; s < 64; s++)
        if (counts[s]) list[distinct++] = counts[s];
    if (m->l == 0) return g->nrows >= m->k;
    return model_holds(m, g->nrows, list, distinct, scratch);
}

static void test_random_tables(void **state)
{
    (void)state;
    tu_rng rng = {20261121};
    int eligible_runs = 0, ineligible_runs = 0;
    for (int iter = 0; iter < 300; iter++) {
        const char *dir = tu_mkdtemp();
        char dir_copy[4096];
        snprintf(dir_copy, sizeof dir_copy, "%s", dir);
        gen_table g;
        generate(&rng, dir_copy, &g);
        anonkit_job *job = anonkit_job_create();
        tu_job_table(job, &g);
        model m;
        random_model(&rng, &g, &m, job);
        char out[4200];
        snprintf(out, sizeof out, "%s/out.csv", dir_copy);
        assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_OUTPUT, out), ANONKIT_OK);
        assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_KEEP_ORDER, "true"), ANONKIT_OK);
        char what[64];
        snprintf(what, sizeof what, "iteration %d", iter);
        const int eligible = table_eligible(&g, &m);
        uint64_t classes = 0, rows = 0;
        anonkit_result *res = tu_anonymize_verified(job, out, eligible, what, &classes, &rows);
        if (!eligible) {
            ineligible_runs++;
        } else {
            assert_int_equal(anonkit_result_rows_read(res), g.nrows);
            assert_int_equal(rows, g.nrows);
            assert_true(classes <= anonkit_result_classes(res));
            assert_truthful(&g, out);

            /* The same run through the internal API, for the partition itself. */
            table_spec spec = {0};
            const char *names[MAX_QI], *paths[MAX_QI];
            char name_buf[MAX_QI][16];
            for (int q = 0; q < g.nqi; q++) {
                snprintf(name_buf[q], sizeof name_buf[q], "a%d", q);
                names[q] = name_buf[q];
                paths[q] = g.categorical[q] ? g.hier_path[q] : NULL;
            }
            spec.path = g.csv_path;
            spec.delimiter = ',';
            spec.nqi = (size_t)g.nqi;
            spec.qi_names = names;
            spec.hierarchy_paths = paths;
            spec.sensitive_name = "s";
            table *t;
            ak_error err;
            assert_int_equal(table_load(&t, &spec, &err), ANONKIT_OK);
            partition p;
            assert_int_equal(partition_init(&p, t->nrows, t->nqi, &err), ANONKIT_OK);
            assert_int_equal(mdr_run(t, &m, 1, &p, &err), ANONKIT_OK);
            assert_int_equal(p.nclasses, anonkit_result_classes(res));
            mc_assert_minimal(t, &p, rows_hold, &m);
            assert_strict(&p);
            partition_free(&p);
            table_free(t);
            eligible_runs++;
        }
        anonkit_result_free(res);
        anonkit_job_free(job);
        tu_rmtree(dir_copy);
    }
    /* the generator must exercise both outcomes */
    assert_true(eligible_runs > 100);
    assert_true(ineligible_runs > 10);
}

/* A fresh folder of a case and the paths of its input and output in it. */
typedef struct small_case {
    char dir[4096], in[4200], out[4200];
} small_case;

static void small_paths(small_case *c)
{
    snprintf(c->dir, sizeof c->dir, "%s", tu_mkdtemp());
    snprintf(c->in, sizeof c->in, "%s/in.csv", c->dir);
    snprintf(c->out, sizeof c->out, "%s/out.csv", c->dir);
}

/* A fresh case (small_paths) and a job over its in/out with QIs qi, keeping input order. */
static anonkit_job *small_job(small_case *c, const char *qi)
{
    small_paths(c);
    anonkit_job *job = anonkit_job_create();
    assert_non_null(job);
    anonkit_job_set(job, ANONKIT_OPT_INPUT, c->in);
    anonkit_job_set(job, ANONKIT_OPT_OUTPUT, c->out);
    anonkit_job_set(job, ANONKIT_OPT_QI, qi);
    anonkit_job_set(job, ANONKIT_OPT_KEEP_ORDER, "1");
    return job;
}

/* Writes `input` to the case's in, anonymizes it with job and checks the published text. */
static void assert_published(anonkit_job *job, const small_case *c, const char *input, const char *expected)
{
    tu_write_file(c->in, input);
    anonkit_result *res = NULL;
    if (anonkit_anonymize(job, &res) != ANONKIT_OK) fail_msg("%s", anonkit_errmsg(job));
    char *text = tu_read_file(c->out, NULL);
    assert_string_equal(text, expected);
    free(text);
    anonkit_result_free(res);
}

/* Frees the job and removes the case's folder. */
static void small_done(anonkit_job *job, const small_case *c)
{
    anonkit_job_free(job);
    tu_rmtree(c->dir);
}

/* Median split, worked by hand: ages 1..8 (distinct), k = 2 gives four classes
 * of two: the lower median of 8 values is the 4th, so the root splits 1-4 | 5-8. */
static void test_median_by_hand(void **state)
{
    (void)state;
    small_case c;
    anonkit_job *job = small_job(&c, "age");
    anonkit_job_set(job, ANONKIT_OPT_K, "2");
    assert_published(job, &c, "age\n8\n1\n7\n2\n6\n3\n5\n4\n", "age\n7-8\n1-2\n7-8\n1-2\n5-6\n3-4\n5-6\n3-4\n");
    /* k = 3: 1-4 | 5-8 and then no allowable split (4 < 2k) */
    anonkit_job_set(job, ANONKIT_OPT_K, "3");
    assert_published(job, &c, "age\n8\n1\n7\n2\n6\n3\n5\n4\n", "age\n5-8\n1-4\n5-8\n1-4\n5-8\n1-4\n5-8\n1-4\n");
    small_done(job, &c);
}

/* Duplicates at the median: the other side of the median value is tried.
 * Values 1,2,2,2,2,3 with k = 2: lower median 2, lhs {<=2} = 5 rows leaves 1
 * on the right, so lhs {<2} = 1 row is tried, also not allowable: one class.
 * Values 1,1,2,2,2,3,3 k=2: median 2, lhs {<=2} = 5, rhs 2: allowable. */
static void test_median_duplicates(void **state)
{
    (void)state;
    small_case c;
    anonkit_job *job = small_job(&c, "x");
    anonkit_job_set(job, ANONKIT_OPT_K, "2");
    assert_published(job, &c, "x\n1\n2\n2\n2\n2\n3\n", "x\n1-3\n1-3\n1-3\n1-3\n1-3\n1-3\n");
    /* lhs {1,1,2,2,2} then splits again: median of 1,1,2,2,2 is 2, lhs {<=2} is all,
     * so lhs {<2} = {1,1} (2 rows) vs {2,2,2}: allowable. */
    assert_published(job, &c, "x\n1\n1\n2\n2\n2\n3\n3\n", "x\n1\n1\n2\n2\n2\n3\n3\n");
    small_done(job, &c);
}

/* With l-diversity the median split may be unallowable while another
 * threshold is: sensitive values a,a,a,b,b,b along x = 1..6 with distinct
 * l = 2: the median cut (x <= 3) gives {a,a,a} | {b,b,b}, not allowable;
 * x <= 3 other side (x <= 2) neither; the sweep finds no allowable threshold
 * at all (every left side up to x <= 3 has only a's, every right side from
 * x >= 4 only b's; x <= 4 leaves {b,b} on the right). So one class.
 * With a,b,a,a,b,b: median cut x<=3 gives {a,b,a} | {a,b,b}: allowable. */
static void test_l_diversity_split(void **state)
{
    (void)state;
    small_case c;
    anonkit_job *job = small_job(&c, "x");
    anonkit_job_set(job, ANONKIT_OPT_SENSITIVE, "s");
    anonkit_job_set(job, ANONKIT_OPT_L, "2");
    assert_published(job, &c, "x,s\n1,a\n2,a\n3,a\n4,b\n5,b\n6,b\n", "x,s\n1-6,a\n1-6,a\n1-6,a\n1-6,b\n1-6,b\n1-6,b\n");
    /* {1,2,3}: a,b,a -> further: median 2: {1,2} a,b | {3} no; {<2}={1} no; sweep: no. */
    assert_published(job, &c, "x,s\n1,a\n2,b\n3,a\n4,a\n5,b\n6,b\n", "x,s\n1-3,a\n1-3,b\n1-3,a\n4-6,a\n4-6,b\n4-6,b\n");
    /* a,a,b,b,a,b,a,b with x = 1..8 and l = 2: the median cut x <= 4 gives
     * {a,a,b,b} | {a,b,a,b}, allowable. Left {a,a,b,b}: median x <= 2 gives
     * {a,a} no, x <= 1 no; the sweep: x <= 3 leaves {b} alone: one class.
     * Right {5..8}: a,b,a,b: median x <= 6: {a,b} | {a,b}: allowable. The sweep
     * itself is exercised by the random property test, which checks
     * minimality for every model by brute force. */
    assert_published(job, &c, "x,s\n1,a\n2,a\n3,b\n4,b\n5,a\n6,b\n7,a\n8,b\n",
                     "x,s\n1-4,a\n1-4,a\n1-4,b\n1-4,b\n5-6,a\n5-6,b\n7-8,a\n7-8,b\n");
    small_done(job, &c);
}

/* Ineligible inputs fail with ANONKIT_E_INELIGIBLE and write nothing. */
static void test_ineligible(void **state)
{
    (void)state;
    small_case c;
    small_paths(&c);
    tu_write_file(c.in, "x,s\n1,a\n2,a\n3,a\n4,b\n");
    anonkit_job *job = anonkit_job_create();
    anonkit_job_set(job, ANONKIT_OPT_INPUT, c.in);
    anonkit_job_set(job, ANONKIT_OPT_OUTPUT, c.out);
    anonkit_job_set(job, ANONKIT_OPT_QI, "x");
    anonkit_job_set(job, ANONKIT_OPT_SENSITIVE, "s");
    anonkit_result *res = NULL;
    anonkit_job_set(job, ANONKIT_OPT_K, "5");
    assert_int_equal(anonkit_anonymize(job, &res), ANONKIT_E_INELIGIBLE);
    assert_non_null(strstr(anonkit_errmsg(job), "4 rows"));
    anonkit_job_set(job, ANONKIT_OPT_K, "1");
    anonkit_job_set(job, ANONKIT_OPT_L, "3");
    assert_int_equal(anonkit_anonymize(job, &res), ANONKIT_E_INELIGIBLE);
    /* probabilistic l = 2: 'a' is 3/4 > 1/2 of the table */
    anonkit_job_set(job, ANONKIT_OPT_L, "2");
    anonkit_job_set(job, ANONKIT_OPT_L_VARIANT, "probabilistic");
    assert_int_equal(anonkit_anonymize(job, &res), ANONKIT_E_INELIGIBLE);
    assert_null(res);
    assert_int_not_equal(access(c.out, F_OK), 0);
    small_done(job, &c);
}

/* Mondrian's partition of t under m with these options into *p, which it
 * initializes (the caller frees it). The run must succeed. */
static void run_partition(const table *t, const model *m, const mdr_options *options, partition *p)
{
    ak_error err;
    assert_int_equal(partition_init(p, t->nrows, t->nqi, &err), ANONKIT_OK);
    assert_int_equal(mdr_run_with(t, m, options, p, &err), ANONKIT_OK);
}

/* Partitions a and b of t's rows are the same: classes, each row's class and
 * each class's box. */
static void assert_same_partition(const partition *a, const partition *b, const table *t)
{
    assert_int_equal(a->nclasses, b->nclasses);
    assert_memory_equal(a->class_of, b->class_of, t->nrows * sizeof *b->class_of);
    assert_memory_equal(a->lo, b->lo, b->nclasses * t->nqi * sizeof *b->lo);
    assert_memory_equal(a->hi, b->hi, b->nclasses * t->nqi * sizeof *b->hi);
}

/* Any thread count, with or without the vector kernels, gives exactly the
 * single-threaded partitioning. */
static void test_threads_same_result(void **state)
{
    (void)state;
    small_case c;
    small_paths(&c);
    char hpath[4200];
    snprintf(hpath, sizeof hpath, "%s/h.csv", c.dir);
    tu_write_file(hpath, "a;A;*\nb;A;*\nc;B;*\nd;B;*\ne;C;*\n");
    FILE *f = fopen(c.in, "w");
    assert_non_null(f);
    fprintf(f, "x,y,c,s\n");
    tu_rng rng = {99};
    for (int r = 0; r < 150000; r++)
        fprintf(f, "%d,%d,%c,s%d\n", (int)tu_below(&rng, 5000), (int)tu_below(&rng, 300), (char)('a' + tu_below(&rng, 5)),
                (int)tu_below(&rng, 6));
    fclose(f);
    const char *names[] = {"x", "y", "c"};
    const char *paths[] = {NULL, NULL, hpath};
    table_spec spec = {0};
    spec.path = c.in;
    spec.delimiter = ',';
    spec.nqi = 3;
    spec.qi_names = names;
    spec.hierarchy_paths = paths;
    spec.sensitive_name = "s";
    table *t;
    ak_error err;
    assert_int_equal(table_load(&t, &spec, &err), ANONKIT_OK);
    for (int with_l = 0; with_l < 2; with_l++) {
        model m;
        model_init(&m);
        m.k = 7;
        if (with_l) m.l = 3;
        partition one;
        assert_int_equal(partition_init(&one, t->nrows, t->nqi, &err), ANONKIT_OK);
        assert_int_equal(mdr_run(t, &m, 1, &one, &err), ANONKIT_OK);
        assert_true(one.nclasses > 1000);
        for (unsigned threads = 1; threads <= 4; threads++) {
            /* threads = 1 with the plain C box loops, against the vector kernels */
            mdr_options options = {.threads = threads, .no_simd = threads == 1};
            partition many;
            run_partition(t, &m, &options, &many);
            assert_same_partition(&many, &one, t);
            assert_memory_equal(many.rlo, one.rlo, one.nclasses * t->nqi * sizeof *one.rlo);
            assert_memory_equal(many.rhi, one.rhi, one.nclasses * t->nqi * sizeof *one.rhi);
            assert_memory_equal(many.count, one.count, one.nclasses * sizeof *one.count);
            partition_free(&many);
        }
        partition_free(&one);
    }
    table_free(t);
    tu_rmtree(c.dir);
}

/* The vector kernels (boxes, the in-place and the out-of-place split) give
 * the plain C loops' partition for every number of QIs, in particular when a
 * work row (QIs, sensitive code, row id) is wider than the box lanes. */
static void test_every_width(void **state)
{
    (void)state;
    small_case c;
    small_paths(&c);
    tu_rng rng = {123};
    for (int d = 1; d <= 18; d++) {
        FILE *f = fopen(c.in, "w");
        assert_non_null(f);
        for (int q = 0; q < d; q++) fprintf(f, "%sq%d", q ? "," : "", q);
        fputc('\n', f);
        for (int r = 0; r < 20000; r++)
            for (int q = 0; q < d; q++)
                fprintf(f, "%d%c", (int)tu_below(&rng, q % 3 == 0 ? 100000 : q % 3 == 1 ? 40 : 3000),
                        q + 1 < d ? ',' : '\n');
        fclose(f);
        const char *names[18];
        char name_buf[18][8];
        for (int q = 0; q < d; q++) {
            snprintf(name_buf[q], sizeof name_buf[q], "q%d", q);
            names[q] = name_buf[q];
        }
        table_spec spec = {0};
        spec.path = c.in;
        spec.delimiter = ',';
        spec.nqi = (size_t)d;
        spec.qi_names = names;
        table *t;
        ak_error err;
        assert_int_equal(table_load(&t, &spec, &err), ANONKIT_OK);
        model m;
        model_init(&m);
        m.k = 3;
        partition plain, vec;
        const mdr_options po = {.threads = 1, .no_simd = 1}, vo = {.threads = 2};
        run_partition(t, &m, &po, &plain);
        run_partition(t, &m, &vo, &vec);
        assert_same_partition(&vec, &plain, t);
        partition_free(&plain);
        partition_free(&vec);
        table_free(t);
    }
    tu_rmtree(c.dir);
}

/* The published file is byte-identical for any thread count (parallel
 * reading, partitioning, class formatting and row composition), shuffled or not. */
static void test_output_same_for_threads(void **state)
{
    (void)state;
    const char *dir = tu_mkdtemp();
    char d[4096], in[4200], out1[4200], out2[4200];
    snprintf(d, sizeof d, "%s", dir);
    snprintf(in, sizeof in, "%s/in.csv", d);
    snprintf(out1, sizeof out1, "%s/out1.csv", d);
    snprintf(out2, sizeof out2, "%s/out2.csv", d);
    FILE *f = fopen(in, "w");
    assert_non_null(f);
    fprintf(f, "id,x,y,note,s\n");
    tu_rng rng = {3};
    for (int r = 0; r < 700000; r++) /* about 12 MB: large enough for every parallel path */
        fprintf(f, "%d,%d,%d,n%d,s%d\n", r, (int)tu_below(&rng, 100000), (int)tu_below(&rng, 1000),
                (int)tu_below(&rng, 50), (int)tu_below(&rng, 4));
    fclose(f);
    for (int keep = 0; keep < 2; keep++) {
        const char *outs[2] = {out1, out2};
        for (int i = 0; i < 2; i++) {
            anonkit_job *job = anonkit_job_create();
            anonkit_job_set(job, ANONKIT_OPT_INPUT, in);
            anonkit_job_set(job, ANONKIT_OPT_OUTPUT, outs[i]);
            anonkit_job_set(job, ANONKIT_OPT_QI, "x,y");
            anonkit_job_set(job, ANONKIT_OPT_IDENTIFIER, "id");
            anonkit_job_set(job, ANONKIT_OPT_SENSITIVE, "s");
            anonkit_job_set(job, ANONKIT_OPT_K, "3");
            anonkit_job_set(job, ANONKIT_OPT_SEED, "11");
            anonkit_job_set(job, ANONKIT_OPT_THREADS, i ? "2" : "1");
            if (keep) anonkit_job_set(job, ANONKIT_OPT_KEEP_ORDER, "1");
            anonkit_result *res = NULL;
            if (anonkit_anonymize(job, &res) != ANONKIT_OK) fail_msg("%s", anonkit_errmsg(job));
            assert_true(anonkit_result_classes(res) > 4096);
            anonkit_result_free(res);
            anonkit_job_free(job);
        }
        size_t n1, n2;
        char *a = tu_read_file(out1, &n1), *b = tu_read_file(out2, &n2);
        assert_int_equal(n1, n2);
        assert_memory_equal(a, b, n1);
        free(a);
        free(b);
    }
    tu_rmtree(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_median_by_hand),
        cmocka_unit_test(test_median_duplicates),
        cmocka_unit_test(test_l_diversity_split),
        cmocka_unit_test(test_ineligible),
        cmocka_unit_test(test_random_tables),
        cmocka_unit_test(test_threads_same_result),
        cmocka_unit_test(test_every_width),
        cmocka_unit_test(test_output_same_for_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
