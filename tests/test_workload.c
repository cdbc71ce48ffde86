/* test_workload.c — property tests of workload-aware Mondrian ([LeFevre07] §1.1-1.2,
 * §5.5): the InfoGain and Regression split criteria, variance diversity and
 * the range / mean summary statistics ([LeFevre06]).
 *
 * Random tables with a numeric sensitive column, a class label and a numeric
 * target are anonymized through the public API and proven by the verifier
 * (anonkit_check, variance diversity included). Independently of anonkit the
 * test computes, by brute force, every allowable split of the whole table and
 * its score (information gain, reduction of the squared error), and checks
 * that Mondrian's first split is one of the best; that no class can be split
 * any further; and that every class's variance, computed directly, meets the
 * bound. Known answers: a class label (or target) that is a threshold
 * function of one attribute is split exactly at that threshold. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algo/mondrian/mondrian.h"
#include "anonkit/anonkit.h"
#include "core/hierarchy.h"
#include "core/partition.h"
#include "core/table.h"
#include "io/csv.h"
#include "metrics/metrics.h"
#include "model/model.h"
#include "testutil.h"

#define MAX_QI 3
#define MAX_ROWS 300

typedef struct wl_table {
    size_t n;
    int nqi;
    int categorical[MAX_QI];
    int nleaves[MAX_QI];
    char hier_path[MAX_QI][4096];
    int value[MAX_ROWS][MAX_QI]; /* numeric value, or leaf index */
    int sens[MAX_ROWS];          /* numeric sensitive value (an integer: exact variance) */
    int label[MAX_ROWS];         /* class label 0..2 */
    double target[MAX_ROWS];
    int sens_range;              /* sensitive values are -5 .. sens_range - 6 */
    char csv[4096];
} wl_table;

/* The rest of a row after the QIs: a numeric sensitive value (an integer
 * of a range drawn with the first row), a class label and a regression
 * target that depend on the first QI, with noise. */
static void write_tail(tu_rng *rng, FILE *f, const tu_table *t, size_t r, void *ctx)
{
    wl_table *g = ctx;
    if (r == 0) g->sens_range = 1 + (int)tu_below(rng, 20);
    g->sens[r] = (int)tu_below(rng, (uint64_t)g->sens_range) - 5;
    const int base = t->value[r][0];
    g->label[r] = tu_below(rng, 4) == 0 ? (int)tu_below(rng, 3) : base % 3 == 0 ? 0 : (base < 4 ? 1 : 2);
    g->target[r] = base * 2.5 + (double)tu_below(rng, 7) * 0.25;
    fprintf(f, ",%d,c%d,%.2f\n", g->sens[r], g->label[r], g->target[r]);
}

/* A random table (tu_random_table): 2 to 121 rows (one table in four up to
 * 299), 1 to 3 QIs, a third of them categorical, numeric values -20, -17,
 * ... over 1..8 or 1..50 of them; then s, cls and y (write_tail). */
static void generate(tu_rng *rng, const char *dir, wl_table *g)
{
    memset(g, 0, sizeof *g);
    const tu_table_shape shape = {
        .min_rows = 2, .rows_span = 120, .rows_span_rare = MAX_ROWS - 2, .max_qi = MAX_QI,
        .categorical_one_in = 3, .numeric_small = 8, .numeric_large = 50, .scale = 3, .offset = -20,
        .tail_header = ",s,cls,y", .tail = write_tail, .ctx = g,
    };
    static tu_table t;
    tu_random_table(rng, dir, &shape, &t);
    g->n = t.nrows;
    g->nqi = t.nqi;
    memcpy(g->categorical, t.categorical, sizeof g->categorical);
    memcpy(g->nleaves, t.nleaves, sizeof g->nleaves);
    memcpy(g->hier_path, t.hier_path, sizeof g->hier_path);
    for (size_t r = 0; r < g->n; r++) memcpy(g->value[r], t.value[r], sizeof g->value[r]);
    snprintf(g->csv, sizeof g->csv, "%s", t.csv_path);
}

/* The model of one case; l-diversity counts distinct sensitive values. */
typedef struct wl_case {
    uint64_t k;
    int l;             /* distinct l-diversity, 0 = none */
    double variance;   /* 0 = none */
    mdr_split split;
} wl_case;

/* Whether the rows satisfy the case's model, computed from the generator's
 * values (exact integer arithmetic for the variance). */
static int rows_ok(const wl_table *g, const wl_case *c, const size_t *rows, size_t n)
{
    if (n < c->k || n == 0) return 0;
    if (c->l > 0) {
        int seen[64] = {0}, distinct = 0;
        for (size_t i = 0; i < n; i++)
            if (!seen[g->sens[rows[i]] + 5]++) distinct++;
        if (distinct < c->l) return 0;
    }
    if (c->variance > 0) {
        int64_t sum = 0, sumsq = 0;
        for (size_t i = 0; i < n; i++) {
            sum += g->sens[rows[i]];
            sumsq += (int64_t)g->sens[rows[i]] * g->sens[rows[i]];
        }
        /* Var = (n sumsq - sum^2) / n^2 */
        if ((double)((int64_t)n * sumsq - sum * sum) < c->variance * (double)n * (double)n) return 0;
    }
    return 1;
}

/* Information gain (bits) or reduction of the squared error of splitting
 * `rows` into parts part_of[i] in [0, nparts). */
static double split_score(const wl_table *g, const wl_case *c, const size_t *rows, size_t n, const int *part_of,
                          int nparts)
{
    double parent = 0, children = 0;
    if (c->split == MDR_SPLIT_INFOGAIN) {
        for (int p = -1; p < nparts; p++) { /* p = -1: the parent */
            double count[3] = {0, 0, 0}, size = 0;
            for (size_t i = 0; i < n; i++)
                if (p < 0 || part_of[i] == p) {
                    count[g->label[rows[i]]]++;
                    size++;
                }
            double h = 0;
            for (int x = 0; x < 3; x++)
                if (count[x] > 0) h -= count[x] / size * log2(count[x] / size);
            if (p < 0) parent = h;
            else children += size / (double)n * h;
        }
        return parent - children;
    }
    for (int p = -1; p < nparts; p++) {
        double sum = 0, size = 0;
        for (size_t i = 0; i < n; i++)
            if (p < 0 || part_of[i] == p) {
                sum += g->target[rows[i]];
                size++;
            }
        if (size == 0) continue;
        double mean = sum / size, sse = 0;
        for (size_t i = 0; i < n; i++)
            if (p < 0 || part_of[i] == p) sse += (g->target[rows[i]] - mean) * (g->target[rows[i]] - mean);
        if (p < 0) parent = sse;
        else children += sse;
    }
    return parent - children;
}

/* Splits `rows` by QI q: numeric at lhs = code < cut, categorical by the
 * children of node u (cut unused). Returns the number of non-empty parts, and
 * whether every part satisfies the model in *ok. */
static int split_parts(const wl_table *g, const wl_case *c, const table *t, uint32_t q, uint32_t cut,
                       const hier_node *u, const size_t *rows, size_t n, int *part_of, int *ok)
{
    const table_qi *a = &t->qi[q];
    int used[64] = {0}, nparts = 0;
    for (size_t i = 0; i < n; i++) {
        const uint32_t code = a->codes[rows[i]];
        int part = 0;
        if (a->kind == ATTR_NUMERIC) {
            part = code < cut ? 0 : 1;
        } else {
            for (uint32_t ch = 0; ch < u->nchildren; ch++) {
                const hier_node *child = hier_node_at(a->h, hier_children(a->h)[u->first_child + ch]);
                if (code >= child->lo && code <= child->hi) part = (int)ch;
            }
        }
        part_of[i] = part;
        if (!used[part]++) nparts++;
    }
    *ok = nparts >= 2;
    size_t *members = malloc(n * sizeof *members);
    for (int p = 0; p < 64 && *ok; p++) {
        if (!used[p]) continue;
        size_t m = 0;
        for (size_t i = 0; i < n; i++)
            if (part_of[i] == p) members[m++] = rows[i];
        if (!rows_ok(g, c, members, m)) *ok = 0;
    }
    free(members);
    return nparts;
}

/* Every class's extent in QI q, from the partition. */
static void box_of_rows(const table *t, uint32_t q, const size_t *rows, size_t n, uint32_t *lo, uint32_t *hi)
{
    *lo = UINT32_MAX;
    *hi = 0;
    for (size_t i = 0; i < n; i++) {
        const uint32_t v = t->qi[q].codes[rows[i]];
        if (v < *lo) *lo = v;
        if (v > *hi) *hi = v;
    }
}

/* Brute force over every allowable split of `rows`: the best score, and
 * whether any split is allowable. With `consistent_with`, only the splits
 * that keep every class of that partition whole (Mondrian's own first split
 * is one of them). */
static int best_split_score(const wl_table *g, const wl_case *c, const table *t, const size_t *rows, size_t n,
                            const partition *consistent_with, double *best)
{
    int found = 0;
    int *part_of = malloc(n * sizeof *part_of);
    for (uint32_t q = 0; q < t->nqi; q++) {
        uint32_t lo, hi;
        box_of_rows(t, q, rows, n, &lo, &hi);
        if (lo == hi) continue;
        const table_qi *a = &t->qi[q];
        const hier_node *u = a->kind == ATTR_CATEGORICAL ? hier_node_at(a->h, hier_lca(a->h, lo, hi)) : NULL;
        const uint32_t first = a->kind == ATTR_NUMERIC ? lo + 1 : 0, last = a->kind == ATTR_NUMERIC ? hi : 0;
        for (uint32_t cut = first; cut <= last; cut++) {
            int ok;
            const int nparts = split_parts(g, c, t, q, cut, u, rows, n, part_of, &ok);
            if (!ok) continue;
            if (consistent_with) { /* every class on one side */
                int whole = 1;
                for (size_t cls = 0; cls < consistent_with->nclasses && whole; cls++) {
                    int side = -1;
                    for (size_t i = 0; i < n && whole; i++) {
                        if (consistent_with->class_of[rows[i]] != cls) continue;
                        if (side < 0) side = part_of[i];
                        else if (side != part_of[i]) whole = 0;
                    }
                }
                if (!whole) continue;
            }
            const double score = split_score(g, c, rows, n, part_of, u ? (int)u->nchildren : nparts);
            if (!found || score > *best) *best = score;
            found = 1;
        }
    }
    free(part_of);
    return found;
}

static table *load(const wl_table *g, int with_label, int with_target)
{
    table_spec spec = {0};
    const char *names[MAX_QI], *paths[MAX_QI];
    char name_buf[MAX_QI][16];
    for (int q = 0; q < g->nqi; q++) {
        snprintf(name_buf[q], sizeof name_buf[q], "a%d", q);
        names[q] = name_buf[q];
        paths[q] = g->categorical[q] ? g->hier_path[q] : NULL;
    }
    spec.path = g->csv;
    spec.delimiter = ',';
    spec.nqi = (size_t)g->nqi;
    spec.qi_names = names;
    spec.hierarchy_paths = paths;
    spec.sensitive_name = "s";
    spec.sensitive_numeric = 1;
    spec.class_name = with_label ? "cls" : NULL;
    spec.target_name = with_target ? "y" : NULL;
    table *t;
    ak_error err;
    if (table_load(&t, &spec, &err) != ANONKIT_OK) fail_msg("%s", err.message);
    return t;
}

static anonkit_job *job_for(const wl_table *g, const wl_case *c, const char *out)
{
    anonkit_job *job = anonkit_job_create();
    char text[64];
    tu_job_generated(job, g->nqi, g->categorical, (const char (*)[4096])g->hier_path, g->csv);
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_OUTPUT, out), ANONKIT_OK);
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_KEEP_ORDER, "1"), ANONKIT_OK);
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_SPLIT, mdr_split_name(c->split)), ANONKIT_OK);
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_CLASS, "cls"), ANONKIT_OK);
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_TARGET, "y"), ANONKIT_OK);
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_MIN_GAIN, "0"), ANONKIT_OK);
    snprintf(text, sizeof text, "%llu", (unsigned long long)c->k);
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_K, text), ANONKIT_OK);
    if (c->l) {
        snprintf(text, sizeof text, "%d", c->l);
        assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_L, text), ANONKIT_OK);
    }
    if (c->variance > 0) {
        snprintf(text, sizeof text, "%.17g", c->variance);
        assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_VARIANCE, text), ANONKIT_OK);
    }
    return job;
}

static void test_random_tables(void **state)
{
    (void)state;
    tu_rng rng = {77};
    int runs = 0, ineligible = 0, root_checked = 0;
    for (int iter = 0; iter < 240; iter++) {
        const char *dir = tu_mkdtemp();
        char d[4096], out[4200];
        snprintf(d, sizeof d, "%s", dir);
        snprintf(out, sizeof out, "%s/out.csv", d);
        wl_table g;
        generate(&rng, d, &g);
        wl_case c = {0};
        c.k = 1 + tu_below(&rng, 8);
        c.split = (mdr_split)tu_below(&rng, 3);
        if (tu_below(&rng, 3) == 0) c.l = 1 + (int)tu_below(&rng, 3);
        if (tu_below(&rng, 2) == 0) c.variance = (double)tu_below(&rng, 12) * 0.5;

        size_t *all = malloc(g.n * sizeof *all);
        for (size_t i = 0; i < g.n; i++) all[i] = i;
        const int eligible = rows_ok(&g, &c, all, g.n);
        anonkit_job *job = job_for(&g, &c, out);
        char what[64];
        snprintf(what, sizeof what, "iteration %d", iter);
        uint64_t rows = 0;
        anonkit_result *res = tu_anonymize_verified(job, out, eligible, what, NULL, &rows);
        if (!eligible) {
            ineligible++;
        } else {
            assert_int_equal(rows, g.n);

            table *t = load(&g, c.split == MDR_SPLIT_INFOGAIN, c.split == MDR_SPLIT_REGRESSION);
            partition p;
            ak_error err;
            assert_int_equal(partition_init(&p, t->nrows, t->nqi, &err), ANONKIT_OK);
            model m;
            model_init(&m);
            m.k = c.k;
            m.l = c.l;
            m.variance = c.variance;
            const mdr_options options = {.threads = 1, .split = c.split, .min_gain = 0};
            assert_int_equal(mdr_run_with(t, &m, &options, &p, &err), ANONKIT_OK);
            assert_int_equal(p.nclasses, anonkit_result_classes(res));
            /* every class satisfies the model and admits no allowable split */
            size_t *members = malloc(g.n * sizeof *members);
            for (size_t cls = 0; cls < p.nclasses; cls++) {
                size_t n = 0;
                for (size_t r = 0; r < g.n; r++)
                    if (p.class_of[r] == cls) members[n++] = r;
                if (!rows_ok(&g, &c, members, n)) fail_msg("iteration %d: class %zu violates the model", iter, cls);
                double ignored;
                if (best_split_score(&g, &c, t, members, n, NULL, &ignored))
                    fail_msg("iteration %d: class %zu can still be split", iter, cls);
            }
            free(members);
            /* the first split is a best allowable one */
            if (c.split != MDR_SPLIT_MEDIAN && p.nclasses > 1) {
                double best = 0, chosen = 0;
                assert_true(best_split_score(&g, &c, t, all, g.n, NULL, &best));
                assert_true(best_split_score(&g, &c, t, all, g.n, &p, &chosen));
                const double tolerance = 1e-9 * (fabs(best) > 1 ? fabs(best) : 1);
                if (chosen < best - tolerance)
                    fail_msg("iteration %d: first split scores %.17g, the best allowable %.17g", iter, chosen, best);
                root_checked++;
            }
            partition_free(&p);
            table_free(t);
            runs++;
        }
        free(all);
        anonkit_result_free(res);
        anonkit_job_free(job);
        tu_rmtree(d);
    }
    assert_true(runs > 120);
    assert_true(ineligible > 10);
    assert_true(root_checked > 60);
}

/* A threshold function of one attribute is split exactly there: the class
 * label (InfoGain) or the target (Regression) is a step at x = 37 / 38,
 * among noise attributes; with small k no class may straddle the step. */
static void test_known_threshold(void **state)
{
    (void)state;
    const char *d = tu_group_dir;
    tu_rng rng = {5};
    char *text = malloc(1 << 16);
    size_t at = (size_t)sprintf(text, "noise,x,other,cls,y\n");
    for (int r = 0; r < 600; r++) {
        const int x = (int)tu_below(&rng, 100);
        at += (size_t)sprintf(text + at, "%d,%d,%d,%s,%d\n", (int)tu_below(&rng, 1000), x, (int)tu_below(&rng, 50),
                              x <= 37 ? "yes" : "no", x <= 37 ? 10 : 250);
    }
    const char *in = tu_path(d, "step.csv");
    tu_write_file(in, text);
    free(text);
    for (int split = MDR_SPLIT_INFOGAIN; split <= MDR_SPLIT_REGRESSION; split++) {
        table_spec spec = {0};
        const char *names[] = {"noise", "x", "other"};
        spec.path = in;
        spec.delimiter = ',';
        spec.nqi = 3;
        spec.qi_names = names;
        spec.class_name = "cls";
        spec.target_name = "y";
        table *t;
        ak_error err;
        assert_int_equal(table_load(&t, &spec, &err), ANONKIT_OK);
        partition p;
        assert_int_equal(partition_init(&p, t->nrows, t->nqi, &err), ANONKIT_OK);
        model m;
        model_init(&m);
        m.k = 4;
        const mdr_options options = {.threads = 1, .split = (mdr_split)split, .min_gain = 0.01};
        assert_int_equal(mdr_run_with(t, &m, &options, &p, &err), ANONKIT_OK);
        assert_true(p.nclasses > 20);
        for (size_t c = 0; c < p.nclasses; c++) {
            const double lo = t->qi[1].values[partition_lo(&p, c)[1]], hi = t->qi[1].values[partition_hi(&p, c)[1]];
            if (lo <= 37 && hi >= 38) fail_msg("split %d: class %zu spans x = %g..%g across the step", split, c, lo, hi);
            /* and its region lies on one side of the step too */
            const uint32_t rlo = partition_rlo(&p, c)[1], rhi = partition_rhi(&p, c)[1];
            const double region_hi = t->qi[1].values[rhi], region_lo_above = rlo ? t->qi[1].values[rlo - 1] : -1e300;
            assert_true(region_hi <= 37 || region_lo_above >= 37);
        }
        double entropy, rmse;
        assert_int_equal(metrics_partition_entropy(t, &p, &entropy, &err), ANONKIT_OK);
        assert_int_equal(metrics_partition_rmse(t, &p, &rmse, &err), ANONKIT_OK);
        assert_true(entropy < 1e-12);
        assert_true(rmse < 1e-9);
        partition_free(&p);
        table_free(t);
    }
}

/* Variance diversity on non-integer values: the verifier, run on the
 * published file, agrees; each class's variance computed directly (two
 * passes) meets the bound. */
static void test_variance_decimal(void **state)
{
    (void)state;
    const char *d = tu_group_dir;
    tu_rng rng = {9};
    char *text = malloc(1 << 20);
    size_t at = (size_t)sprintf(text, "age,zip,income\n");
    double income[2000];
    int age[2000];
    for (int r = 0; r < 2000; r++) {
        age[r] = 18 + (int)tu_below(&rng, 60);
        income[r] = 1000.0 + (double)tu_below(&rng, 1000000) / 97.0;
        at += (size_t)sprintf(text + at, "%d,%d,%.17g\n", age[r], (int)tu_below(&rng, 99), income[r]);
    }
    const char *in = tu_path(d, "income.csv"), *out = tu_path(d, "income-out.csv");
    tu_write_file(in, text);
    free(text);
    anonkit_job *job = anonkit_job_create();
    anonkit_job_set(job, ANONKIT_OPT_INPUT, in);
    anonkit_job_set(job, ANONKIT_OPT_OUTPUT, out);
    anonkit_job_set(job, ANONKIT_OPT_QI, "age,zip");
    anonkit_job_set(job, ANONKIT_OPT_SENSITIVE, "income");
    anonkit_job_set(job, ANONKIT_OPT_VARIANCE, "4000000");
    anonkit_job_set(job, ANONKIT_OPT_K, "3");
    anonkit_job_set(job, ANONKIT_OPT_KEEP_ORDER, "1");
    anonkit_result *res = tu_anonymize_verified(job, out, 1, "variance", NULL, NULL);
    assert_true(anonkit_result_classes(res) > 20);
    /* Group the published rows (in input order) by their QI texts and compute
     * each group's population variance directly. */
    csv_reader *r;
    ak_error err;
    assert_int_equal(csv_reader_open(&r, out, ',', &err), ANONKIT_OK);
    csv_record rec;
    assert_int_equal(csv_read(r, &rec, &err), 1);
    char (*key)[64] = malloc(2000 * sizeof *key);
    for (int row = 0; row < 2000; row++) {
        assert_int_equal(csv_read(r, &rec, &err), 1);
        snprintf(key[row], sizeof key[row], "%.*s|%.*s", (int)rec.fields[0].len, rec.fields[0].data,
                 (int)rec.fields[1].len, rec.fields[1].data);
    }
    csv_reader_free(r);
    int *done = calloc(2000, sizeof *done), groups = 0;
    for (int a = 0; a < 2000; a++) {
        if (done[a]) continue;
        double sum = 0, n = 0;
        for (int b = a; b < 2000; b++)
            if (!strcmp(key[a], key[b])) sum += income[b], n++;
        const double mean = sum / n;
        double sq = 0;
        for (int b = a; b < 2000; b++)
            if (!strcmp(key[a], key[b])) {
                sq += (income[b] - mean) * (income[b] - mean);
                done[b] = 1;
            }
        if (sq / n < 4000000 * (1 - 1e-12)) fail_msg("class %s has variance %g", key[a], sq / n);
        groups++;
    }
    assert_int_equal((uint64_t)groups, anonkit_result_classes(res));
    /* a bound the published classes do not meet is refuted */
    anonkit_job_set(job, ANONKIT_OPT_VARIANCE, "1e9");
    anonkit_result *checked = NULL;
    assert_int_equal(anonkit_check(job, out, &checked), ANONKIT_E_VIOLATION);
    assert_null(checked);
    free(done);
    free(key);
    anonkit_result_free(res);
    anonkit_job_free(job);
}

/* --publish range / mean: the same partition (same seed, input order kept)
 * published three ways; range is "min-max" and mean the class mean of the
 * original values, recomputed here. */
static void test_summary_statistics(void **state)
{
    (void)state;
    const char *d = tu_group_dir;
    tu_rng rng = {13};
    char *text = malloc(1 << 16);
    size_t at = (size_t)sprintf(text, "age,w\n");
    int age[500];
    for (int r = 0; r < 500; r++) {
        age[r] = 20 + (int)tu_below(&rng, 50);
        at += (size_t)sprintf(text + at, "%d,%d\n", age[r], (int)tu_below(&rng, 7));
    }
    const char *in = tu_path(d, "stats.csv");
    tu_write_file(in, text);
    free(text);
    const char *styles[] = {"generalize", "range", "mean"};
    char *published[3][500], *klass[500];
    for (int s = 0; s < 3; s++) {
        const char *out = tu_path(d, styles[s]);
        anonkit_job *job = anonkit_job_create();
        anonkit_job_set(job, ANONKIT_OPT_INPUT, in);
        anonkit_job_set(job, ANONKIT_OPT_OUTPUT, out);
        anonkit_job_set(job, ANONKIT_OPT_QI, "age,w");
        anonkit_job_set(job, ANONKIT_OPT_K, "7");
        anonkit_job_set(job, ANONKIT_OPT_KEEP_ORDER, "1");
        assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_PUBLISH, styles[s]), ANONKIT_OK);
        anonkit_result *res = tu_anonymize_verified(job, out, 1, styles[s], NULL, NULL);
        csv_reader *r;
        ak_error err;
        assert_int_equal(csv_reader_open(&r, out, ',', &err), ANONKIT_OK);
        csv_record rec;
        assert_int_equal(csv_read(r, &rec, &err), 1);
        for (int row = 0; row < 500; row++) {
            assert_int_equal(csv_read(r, &rec, &err), 1);
            published[s][row] = calloc(rec.fields[0].len + 1, 1);
            memcpy(published[s][row], rec.fields[0].data, rec.fields[0].len);
            if (s == 0) { /* the class: both generalized QI texts */
                klass[row] = calloc(rec.fields[0].len + rec.fields[1].len + 2, 1);
                sprintf(klass[row], "%.*s|%.*s", (int)rec.fields[0].len, rec.fields[0].data, (int)rec.fields[1].len,
                        rec.fields[1].data);
            }
        }
        csv_reader_free(r);
        anonkit_result_free(res);
        anonkit_job_free(job);
    }
    for (int row = 0; row < 500; row++) {
        /* the class of a row: the rows with the same generalized (age, w) texts */
        int lo = 1000, hi = -1000;
        double sum = 0, n = 0;
        for (int other = 0; other < 500; other++)
            if (!strcmp(klass[row], klass[other])) {
                if (age[other] < lo) lo = age[other];
                if (age[other] > hi) hi = age[other];
                sum += age[other];
                n++;
            }
        char expect[64];
        snprintf(expect, sizeof expect, "%d-%d", lo, hi);
        assert_string_equal(published[1][row], expect);
        if (lo == hi) snprintf(expect, sizeof expect, "%d", lo);
        assert_string_equal(published[0][row], expect);
        const double mean = strtod(published[2][row], NULL);
        if (fabs(mean - sum / n) > 1e-9 * (sum / n)) fail_msg("row %d: mean %s, expected %.12g", row, published[2][row], sum / n);
    }
    for (int row = 0; row < 500; row++) {
        for (int s = 0; s < 3; s++) free(published[s][row]);
        free(klass[row]);
    }
}

/* InfoGain / Regression / variance runs give the same partition for any
 * thread count and with or without the vector kernels. */
static void test_threads_same_result(void **state)
{
    (void)state;
    const char *d = tu_group_dir;
    tu_rng rng = {21};
    const size_t n = 70000;
    char *text = malloc(n * 48 + 64);
    size_t at = (size_t)sprintf(text, "a,b,c,s,cls,y\n");
    for (size_t r = 0; r < n; r++) {
        const int a = (int)tu_below(&rng, 5000), b = (int)tu_below(&rng, 90);
        at += (size_t)sprintf(text + at, "%d,%d,%d,%d,%c,%d\n", a, b, (int)tu_below(&rng, 30000),
                              (int)tu_below(&rng, 40), (a + b) % 3 ? 'A' : 'B', a / 7 + (int)tu_below(&rng, 9));
    }
    const char *in = tu_path(d, "big.csv");
    tu_write_file(in, text);
    free(text);
    table_spec spec = {0};
    const char *names[] = {"a", "b", "c"};
    spec.path = in;
    spec.delimiter = ',';
    spec.nqi = 3;
    spec.qi_names = names;
    spec.sensitive_name = "s";
    spec.sensitive_numeric = 1;
    spec.class_name = "cls";
    spec.target_name = "y";
    table *t;
    ak_error err;
    assert_int_equal(table_load(&t, &spec, &err), ANONKIT_OK);
    for (int split = MDR_SPLIT_INFOGAIN; split <= MDR_SPLIT_REGRESSION; split++) {
        model m;
        model_init(&m);
        m.k = 20;
        m.variance = split == MDR_SPLIT_REGRESSION ? 30 : 0;
        partition one, many;
        const mdr_options single = {.threads = 1, .no_simd = 1, .split = (mdr_split)split, .min_gain = 0.01};
        const mdr_options parallel = {.threads = 2, .split = (mdr_split)split, .min_gain = 0.01};
        assert_int_equal(partition_init(&one, t->nrows, t->nqi, &err), ANONKIT_OK);
        assert_int_equal(partition_init(&many, t->nrows, t->nqi, &err), ANONKIT_OK);
        assert_int_equal(mdr_run_with(t, &m, &single, &one, &err), ANONKIT_OK);
        assert_int_equal(mdr_run_with(t, &m, &parallel, &many, &err), ANONKIT_OK);
        assert_true(one.nclasses > 500);
        assert_int_equal(one.nclasses, many.nclasses);
        assert_memory_equal(one.class_of, many.class_of, t->nrows * sizeof *one.class_of);
        assert_memory_equal(one.lo, many.lo, one.nclasses * t->nqi * sizeof *one.lo);
        assert_memory_equal(one.rlo, many.rlo, one.nclasses * t->nqi * sizeof *one.rlo);
        assert_memory_equal(one.rhi, many.rhi, one.nclasses * t->nqi * sizeof *one.rhi);
        partition_free(&one);
        partition_free(&many);
    }
    table_free(t);
}

/* Missing inputs of the criteria and models are usage errors. */
static void test_usage_errors(void **state)
{
    (void)state;
    const char *d = tu_group_dir;
    const char *in = tu_path(d, "u.csv"), *out = tu_path(d, "u-out.csv");
    tu_write_file(in, "age,s,cls\n30,1,a\n31,x,b\n");
    struct {
        anonkit_option option;
        const char *value;
        const char *message;
    } cases[] = {
        {ANONKIT_OPT_SPLIT, "infogain", "--class"},
        {ANONKIT_OPT_SPLIT, "regression", "--target"},
        {ANONKIT_OPT_VARIANCE, "2", "--sensitive"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        anonkit_job *job = anonkit_job_create();
        anonkit_job_set(job, ANONKIT_OPT_INPUT, in);
        anonkit_job_set(job, ANONKIT_OPT_OUTPUT, out);
        anonkit_job_set(job, ANONKIT_OPT_QI, "age");
        anonkit_job_set(job, ANONKIT_OPT_K, "2");
        assert_int_equal(anonkit_job_set(job, cases[i].option, cases[i].value), ANONKIT_OK);
        anonkit_result *res = NULL;
        assert_int_equal(anonkit_anonymize(job, &res), ANONKIT_E_USAGE);
        assert_non_null(strstr(anonkit_errmsg(job), cases[i].message));
        anonkit_job_free(job);
    }
    /* a non-numeric sensitive value under variance diversity is an input error with its line */
    anonkit_job *job = anonkit_job_create();
    anonkit_job_set(job, ANONKIT_OPT_INPUT, in);
    anonkit_job_set(job, ANONKIT_OPT_OUTPUT, out);
    anonkit_job_set(job, ANONKIT_OPT_QI, "age");
    anonkit_job_set(job, ANONKIT_OPT_SENSITIVE, "s");
    anonkit_job_set(job, ANONKIT_OPT_VARIANCE, "0.1");
    anonkit_result *res = NULL;
    assert_int_equal(anonkit_anonymize(job, &res), ANONKIT_E_INPUT);
    assert_non_null(strstr(anonkit_errmsg(job), ":3:"));
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_SPLIT, "gini"), ANONKIT_E_USAGE);
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_PUBLISH, "median"), ANONKIT_E_USAGE);
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_VARIANCE, "-1"), ANONKIT_E_USAGE);
    anonkit_job_free(job);
}

/* The workload metrics of the report (from the partitioning) equal those
 * anonkit metrics computes from the published file alone. */
static void test_metrics_agree(void **state)
{
    (void)state;
    const char *d = tu_group_dir;
    tu_rng rng = {31};
    char *text = malloc(1 << 18);
    size_t at = (size_t)sprintf(text, "a,b,label,t\n");
    for (int r = 0; r < 3000; r++) {
        const int a = (int)tu_below(&rng, 300), b = (int)tu_below(&rng, 40);
        at += (size_t)sprintf(text + at, "%d,%d,%s,%d.%d\n", a, b, (a * b) % 5 ? "yes" : "no", a + b,
                              (int)tu_below(&rng, 10));
    }
    const char *in = tu_path(d, "m.csv"), *out = tu_path(d, "m-out.csv");
    tu_write_file(in, text);
    free(text);
    for (int split = 0; split < 3; split++) {
        anonkit_job *job = anonkit_job_create();
        anonkit_job_set(job, ANONKIT_OPT_INPUT, in);
        anonkit_job_set(job, ANONKIT_OPT_OUTPUT, out);
        anonkit_job_set(job, ANONKIT_OPT_QI, "a,b");
        anonkit_job_set(job, ANONKIT_OPT_K, "15");
        anonkit_job_set(job, ANONKIT_OPT_CLASS, "label");
        anonkit_job_set(job, ANONKIT_OPT_TARGET, "t");
        anonkit_job_set(job, ANONKIT_OPT_SPLIT, mdr_split_name((mdr_split)split));
        anonkit_result *res = NULL;
        if (anonkit_anonymize(job, &res) != ANONKIT_OK) fail_msg("%s", anonkit_errmsg(job));
        anonkit_result *measured = NULL;
        if (anonkit_metrics(job, in, out, &measured) != ANONKIT_OK) fail_msg("%s", anonkit_errmsg(job));
        const char *json = anonkit_result_json(measured);
        const char *keys[] = {"\"conditional_entropy\": ", "\"rmse\": "};
        for (int k = 0; k < 2; k++) {
            const char *from_report = strstr(anonkit_result_json(res), keys[k]), *from_file = strstr(json, keys[k]);
            assert_non_null(from_report);
            assert_non_null(from_file);
            const double x = strtod(from_report + strlen(keys[k]), NULL), y = strtod(from_file + strlen(keys[k]), NULL);
            if (fabs(x - y) > 1e-9 * (fabs(x) > 1 ? fabs(x) : 1)) fail_msg("split %d: %s %.17g vs %.17g", split, keys[k], x, y);
            assert_true(x > 0);
        }
        anonkit_result_free(measured);
        anonkit_result_free(res);
        anonkit_job_free(job);
    }
}

/* A hierarchy label of any length is published whole (no cut at a buffer
 * size). */
static void test_long_label(void **state)
{
    (void)state;
    const char *d = tu_group_dir;
    char *label = malloc(9001);
    for (int i = 0; i < 9000; i++) label[i] = (char)('a' + i % 26);
    label[9000] = '\0';
    char *h = malloc(40000);
    sprintf(h, "x;%s;*\ny;%s;*\nz;other;*\n", label, label);
    const char *hp = tu_path(d, "long.csv"), *in = tu_path(d, "long-in.csv"), *out = tu_path(d, "long-out.csv");
    tu_write_file(hp, h);
    tu_write_file(in, "c\nx\ny\nx\ny\n");
    anonkit_job *job = anonkit_job_create();
    anonkit_job_set(job, ANONKIT_OPT_INPUT, in);
    anonkit_job_set(job, ANONKIT_OPT_OUTPUT, out);
    anonkit_job_set(job, ANONKIT_OPT_QI, "c");
    sprintf(h, "c=%s", hp);
    anonkit_job_set(job, ANONKIT_OPT_HIERARCHY, h);
    anonkit_job_set(job, ANONKIT_OPT_K, "3");
    anonkit_result *res = NULL;
    if (anonkit_anonymize(job, &res) != ANONKIT_OK) fail_msg("%s", anonkit_errmsg(job));
    char *text = tu_read_file(out, NULL);
    sprintf(h, "c\n%s\n%s\n%s\n%s\n", label, label, label, label);
    assert_string_equal(text, h);
    free(text);
    free(h);
    free(label);
    anonkit_result_free(res);
    anonkit_job_free(job);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_tables),
        cmocka_unit_test(test_known_threshold),
        cmocka_unit_test(test_variance_decimal),
        cmocka_unit_test(test_summary_statistics),
        cmocka_unit_test(test_threads_same_result),
        cmocka_unit_test(test_usage_errors),
        cmocka_unit_test(test_metrics_agree),
        cmocka_unit_test(test_long_label),
    };
    return cmocka_run_group_tests(tests, tu_group_setup, tu_group_teardown);
}
