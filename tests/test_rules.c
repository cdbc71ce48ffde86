/* test_rules.c — the recoding rules ([LeFevre07] §1.2, §2.2; docs/rules-format.md).
 *
 * Random tables with numeric and categorical QIs (random hierarchies) are
 * partitioned by Mondrian, their rules written and loaded again; then every
 * original row must land in the rule of its own class with its published
 * text, and random points of the domain must land in exactly one rule's
 * region — checked by brute force against the partition's regions. End to
 * end, recoding the original input with the rules must give the published
 * file byte for byte. New data between and beyond the original values, and
 * malformed rules and input, are checked against hand-derived results. */
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

#include "algo/mondrian/mondrian.h"
#include "anonkit/anonkit.h"
#include "core/hierarchy.h"
#include "core/partition.h"
#include "core/recode.h"
#include "publish/rules.h"
#include "core/table.h"
#include "model/model.h"
#include "testutil.h"

#define MAX_QI 4
#define MAX_ROWS 300
#define MAX_COLS (MAX_QI + 5)

/* A random table: QIs a0.. (numeric or categorical with a random tree) among
 * the columns id (identifier), s (sensitive), cls (class label), tgt (numeric
 * target) and note (quoted text), in a random column order. */
typedef struct gen_table {
    size_t nrows;
    int nqi;
    int categorical[MAX_QI];
    int nleaves[MAX_QI];   /* categorical: leaves; numeric: distinct values possible */
    int spelling[MAX_QI];  /* numeric: 0 integers, 1 decimals, 2 one value in two spellings */
    char hier_path[MAX_QI][4096];
    int spec_order[MAX_QI]; /* the QIs as listed to the table (a permutation) */
    char delim;
    char csv_path[4096];
} gen_table;

/* Writes a random hierarchy with leaves "vI" under random inner nodes, rows
 * in a shuffled order; returns the leaf count. */
static int write_random_hierarchy(tu_rng *rng, const char *path, int qi)
{
    int height = 1 + (int)tu_below(rng, 3);
    int nleaves = 2 + (int)tu_below(rng, 12);
    int fan[4] = {1, 1 + (int)tu_below(rng, 3), 1 + (int)tu_below(rng, 3), 1 + (int)tu_below(rng, 3)};
    int perm[16];
    for (int i = 0; i < nleaves; i++) perm[i] = i;
    for (int i = nleaves - 1; i > 0; i--) {
        int j = (int)tu_below(rng, (uint64_t)i + 1), t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    /* sometimes no common top label, so that a root "*" is added */
    const int star = tu_below(rng, 4) != 0;
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    for (int r = 0; r < nleaves; r++) {
        int leaf = perm[r], group = leaf;
        fprintf(f, "v%d", leaf);
        for (int level = 1; level < height; level++) {
            group /= fan[level] + 1;
            fprintf(f, ";q%dL%dg%d", qi, level, group);
        }
        fputs(star ? ";*\n" : "\n", f);
    }
    fclose(f);
    return nleaves;
}

/* The text of numeric value index v of QI q (spelling 2: two spellings). */
static void numeric_text(tu_rng *rng, const gen_table *g, int q, int v, char *buf, size_t size)
{
    int x = v * 5 - 40;
    if (g->spelling[q] == 1) snprintf(buf, size, "%.2f", x / 4.0);
    else if (g->spelling[q] == 2 && tu_below(rng, 2)) snprintf(buf, size, "%d.0", x);
    else snprintf(buf, size, "%d", x);
}

static void generate(tu_rng *rng, const char *dir, gen_table *g)
{
    memset(g, 0, sizeof *g);
    static const char delims[] = {',', ';', '|'};
    g->delim = delims[tu_below(rng, 3)];
    g->nrows = 1 + tu_below(rng, tu_below(rng, 4) ? 120 : MAX_ROWS);
    g->nqi = 1 + (int)tu_below(rng, MAX_QI);
    for (int q = 0; q < g->nqi; q++) {
        g->categorical[q] = tu_below(rng, 2) == 0;
        g->spec_order[q] = q;
        if (g->categorical[q]) {
            char name[64];
            snprintf(name, sizeof name, "h%d.csv", q);
            snprintf(g->hier_path[q], sizeof g->hier_path[q], "%s", tu_path(dir, name));
            g->nleaves[q] = write_random_hierarchy(rng, g->hier_path[q], q);
        } else {
            g->nleaves[q] = 1 + (int)tu_below(rng, tu_below(rng, 2) ? 6 : 60);
            g->spelling[q] = (int)tu_below(rng, 3);
        }
    }
    for (int q = g->nqi - 1; q > 0; q--) {
        int j = (int)tu_below(rng, (uint64_t)q + 1), t = g->spec_order[q];
        g->spec_order[q] = g->spec_order[j];
        g->spec_order[j] = t;
    }
    /* Columns: -1 id, -2 s, -3 cls, -4 tgt, -5 note, q >= 0 the QIs; shuffled. */
    int cols[MAX_COLS], ncols = 0;
    for (int c = -5; c < g->nqi; c++) cols[ncols++] = c;
    for (int i = ncols - 1; i > 0; i--) {
        int j = (int)tu_below(rng, (uint64_t)i + 1), t = cols[i];
        cols[i] = cols[j];
        cols[j] = t;
    }
    static const char *const names[] = {"note", "tgt", "cls", "s", "id"};
    snprintf(g->csv_path, sizeof g->csv_path, "%s", tu_path(dir, "in.csv"));
    FILE *f = fopen(g->csv_path, "w");
    assert_non_null(f);
    for (int i = 0; i < ncols; i++) {
        if (i) fputc(g->delim, f);
        if (cols[i] >= 0) fprintf(f, "a%d", cols[i]);
        else fputs(names[cols[i] + 5], f);
    }
    fputc('\n', f);
    for (size_t r = 0; r < g->nrows; r++) {
        for (int i = 0; i < ncols; i++) {
            if (i) fputc(g->delim, f);
            int c = cols[i];
            if (c >= 0) {
                int v = (int)tu_below(rng, (uint64_t)g->nleaves[c]);
                if (tu_below(rng, 3) == 0) v = (int)tu_below(rng, (uint64_t)(g->nleaves[c] + 1) / 2);
                char text[64];
                if (g->categorical[c]) snprintf(text, sizeof text, "v%d", v);
                else numeric_text(rng, g, c, v, text, sizeof text);
                fputs(text, f);
            } else if (c == -1) {
                fprintf(f, "%zu", r);
            } else if (c == -2) {
                fprintf(f, "d%d", (int)tu_below(rng, 5));
            } else if (c == -3) {
                fputs(tu_below(rng, 3) ? "yes" : "no", f);
            } else if (c == -4) {
                fprintf(f, "%.1f", (double)tu_below(rng, 1000) / 10);
            } else {
                fprintf(f, "\"x%c %zu \"\"q\"\"\"", g->delim, r);
            }
        }
        fputc('\n', f);
    }
    fclose(f);
}

/* The table spec of a generated table (names point into storage). */
typedef struct spec_storage {
    char names[MAX_QI][16];
    const char *qi_names[MAX_QI];
    const char *hier_paths[MAX_QI];
    const char *identifiers[1];
} spec_storage;

static table_spec spec_for(const gen_table *g, mdr_split split, spec_storage *st)
{
    table_spec spec;
    memset(&spec, 0, sizeof spec);
    for (int i = 0; i < g->nqi; i++) {
        int q = g->spec_order[i];
        snprintf(st->names[i], sizeof st->names[i], "a%d", q);
        st->qi_names[i] = st->names[i];
        st->hier_paths[i] = g->categorical[q] ? g->hier_path[q] : NULL;
    }
    st->identifiers[0] = "id";
    spec.path = g->csv_path;
    spec.display_name = g->csv_path;
    spec.delimiter = g->delim;
    spec.nqi = (size_t)g->nqi;
    spec.qi_names = st->qi_names;
    spec.hierarchy_paths = st->hier_paths;
    spec.sensitive_name = "s";
    spec.class_name = split == MDR_SPLIT_INFOGAIN ? "cls" : NULL;
    spec.target_name = split == MDR_SPLIT_REGRESSION ? "tgt" : NULL;
    spec.nidentifiers = 1;
    spec.identifier_names = st->identifiers;
    spec.threads = 1;
    return spec;
}

/* A partitioned table and its rules file. */
typedef struct run {
    table *t;
    partition p;
    double *means;
    recode_style style;
} run;

static void run_mondrian(const gen_table *g, uint64_t k, mdr_split split, recode_style style, run *out)
{
    spec_storage st;
    table_spec spec = spec_for(g, split, &st);
    ak_error err;
    memset(out, 0, sizeof *out);
    if (table_load(&out->t, &spec, &err) != ANONKIT_OK) fail_msg("table_load: %s", err.message);
    model m;
    model_init(&m);
    m.k = k;
    assert_int_equal(partition_init(&out->p, out->t->nrows, out->t->nqi, &err), ANONKIT_OK);
    const mdr_options mo = {.threads = 1, .split = split, .min_gain = 0.01};
    if (mdr_run_with(out->t, &m, &mo, &out->p, &err) != ANONKIT_OK) fail_msg("mdr_run_with: %s", err.message);
    out->style = style;
    if (style == RECODE_MEAN) assert_int_equal(recode_class_means(out->t, &out->p, &out->means, &err), ANONKIT_OK);
}

static void run_free(run *rn)
{
    table_free(rn->t);
    partition_free(&rn->p);
    free(rn->means);
}

static void write_rules_file(const run *rn, const char *path)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    ak_error err;
    if (rules_write(rn->t, &rn->p, rn->style, rn->means, f, path, &err) != ANONKIT_OK)
        fail_msg("rules_write: %s", err.message);
    assert_int_equal(fclose(f), 0);
}

/* The table QI of rules QI rq (the rules number QIs in column order). */
static uint32_t table_qi_of(const table *t, const rules *r, uint32_t rq)
{
    for (uint32_t q = 0; q < t->nqi; q++)
        if (t->qi[q].column == rules_qi_column(r, rq)) return q;
    fail_msg("rules QI %u has no table QI", rq);
    return 0;
}

/* Whether key x of table QI q lies in the region of class c, from the
 * partition's own code ranges (independent of the rules). */
static int in_region(const table *t, const partition *p, size_t c, uint32_t q, double x)
{
    const table_qi *a = &t->qi[q];
    const uint32_t rlo = partition_rlo(p, c)[q], rhi = partition_rhi(p, c)[q];
    if (a->kind == ATTR_CATEGORICAL) return x >= rlo && x <= rhi;
    return (rlo == 0 || x > a->values[rlo - 1]) && (rhi + 1 == a->ncodes || x <= a->values[rhi]);
}

/* Whether key x lies outside what class c's published text stands for. */
static int outside_class(const table *t, const partition *p, size_t c, uint32_t q, double x)
{
    const table_qi *a = &t->qi[q];
    const uint32_t lo = partition_lo(p, c)[q], hi = partition_hi(p, c)[q];
    if (a->kind == ATTR_NUMERIC) return x < a->values[lo] || x > a->values[hi];
    /* the lowest node covering the box, found by walking up from a leaf */
    uint32_t n = hier_leaf_node(a->h, lo);
    while (hier_node_at(a->h, n)->lo > lo || hier_node_at(a->h, n)->hi < hi) n = hier_node_at(a->h, n)->parent;
    return x < hier_node_at(a->h, n)->lo || x > hier_node_at(a->h, n)->hi;
}

/* A random key of table QI q: a value, a point between two values, or one
 * beyond the ends (numeric); a leaf (categorical). */
static double random_key(tu_rng *rng, const table *t, uint32_t q)
{
    const table_qi *a = &t->qi[q];
    const uint32_t c = (uint32_t)tu_below(rng, a->ncodes);
    if (a->kind == ATTR_CATEGORICAL) return c;
    switch (tu_below(rng, 4)) {
    case 0: return a->values[0] - 1 - (double)tu_below(rng, 100);
    case 1: return a->values[a->ncodes - 1] + 0.5 + (double)tu_below(rng, 100);
    case 2: return c + 1 < a->ncodes ? (a->values[c] + a->values[c + 1]) / 2 : a->values[c];
    default: return a->values[c];
    }
}

/* Rules written and loaded: original rows land in their own class with its
 * published text; random points land in exactly one region. */
static void check_rules(tu_rng *rng, const run *rn, const char *path, int iter)
{
    const table *t = rn->t;
    const partition *p = &rn->p;
    rules *r = NULL;
    ak_error err;
    if (rules_load(&r, path, &err) != ANONKIT_OK) fail_msg("iteration %d: rules_load: %s:%ld: %s", iter, err.file, err.line, err.message);
    assert_int_equal(rules_count(r), p->nclasses);
    assert_int_equal(rules_qi_count(r), t->nqi);
    assert_int_equal(rules_delimiter(r), t->delimiter);
    assert_int_equal(rules_column_count(r), t->ncolumns);
    for (uint32_t c = 0; c < t->ncolumns; c++) {
        assert_string_equal(rules_column_name(r, c), t->column_names[c]);
        rules_role role = rules_column_role(r, c);
        assert_int_equal(role == RULES_IDENTIFIER, t->roles[c] == ROLE_IDENTIFIER);
        assert_int_equal(role == RULES_QI_NUMERIC || role == RULES_QI_CATEGORICAL, t->roles[c] == ROLE_QI);
    }
    for (size_t c = 0; c < p->nclasses; c++) assert_int_equal(rules_class_rows(r, c), p->count[c]);
    const uint32_t d = t->nqi;
    uint32_t tq[MAX_QI];
    for (uint32_t rq = 0; rq < d; rq++) tq[rq] = table_qi_of(t, r, rq);
    double keys[MAX_QI];
    char expect[4096];

    for (size_t row = 0; row < t->nrows; row++) {
        const uint32_t cls = p->class_of[row];
        for (uint32_t rq = 0; rq < d; rq++) {
            const table_qi *a = &t->qi[tq[rq]];
            const uint32_t code = a->codes[row];
            if (a->kind == ATTR_NUMERIC) {
                keys[rq] = a->values[code];
            } else {
                /* through the embedded hierarchy: the same leaf code */
                const char *label = hier_node_at(a->h, hier_leaf_node(a->h, code))->label;
                assert_int_equal(rules_key(r, rq, label, strlen(label), &keys[rq]), 0);
                assert_true(keys[rq] == code);
            }
        }
        const size_t rule = rules_find(r, keys);
        if (rule != cls) fail_msg("iteration %d: row %zu of class %u located in rule %zu", iter, row, cls, rule);
        for (uint32_t rq = 0; rq < d; rq++) {
            assert_false(rules_outside(r, rule, rq, keys[rq]));
            recode_class_value(t, p, rn->means, rn->style, cls, tq[rq], expect, sizeof expect);
            assert_string_equal(rules_text(r, rule, rq, NULL), expect);
        }
    }

    for (int i = 0; i < 300; i++) {
        for (uint32_t rq = 0; rq < d; rq++) keys[rq] = random_key(rng, t, tq[rq]);
        size_t hits = 0, hit = 0;
        for (size_t c = 0; c < p->nclasses; c++) {
            int in = 1;
            for (uint32_t rq = 0; rq < d && in; rq++) in = in_region(t, p, c, tq[rq], keys[rq]);
            if (in) {
                hits++;
                hit = c;
            }
        }
        if (hits != 1) fail_msg("iteration %d: a point of the domain lies in %zu regions", iter, hits);
        assert_int_equal(rules_find(r, keys), hit);
        for (uint32_t rq = 0; rq < d; rq++)
            assert_int_equal(rules_outside(r, hit, rq, keys[rq]), outside_class(t, p, hit, tq[rq], keys[rq]));
    }
    rules_free(r);
}

static const recode_style styles[] = {RECODE_GENERALIZE, RECODE_RANGE, RECODE_MEAN};

static void test_random_rules(void **state)
{
    (void)state;
    tu_rng rng = {20261204};
    for (int iter = 0; iter < 250; iter++) {
        char dir[4096];
        snprintf(dir, sizeof dir, "%s", tu_mkdtemp());
        gen_table g;
        generate(&rng, dir, &g);
        const uint64_t k = 1 + tu_below(&rng, g.nrows < 12 ? g.nrows : 12);
        const mdr_split split = (mdr_split)tu_below(&rng, 3);
        run rn;
        run_mondrian(&g, k, split, styles[tu_below(&rng, 3)], &rn);
        const char *path = tu_path(dir, "rules.csv");
        write_rules_file(&rn, path);
        check_rules(&rng, &rn, path, iter);
        run_free(&rn);
        tu_rmtree(dir);
    }
}

/* Anonymize (keep order) through the public API, then recode the original
 * input with the rules: the same bytes. */
static void test_round_trip(void **state)
{
    (void)state;
    tu_rng rng = {777};
    static const char *const split_names[] = {"median", "infogain", "regression"};
    static const char *const style_names[] = {"generalize", "range", "mean"};
    for (int iter = 0; iter < 80; iter++) {
        char dir[4096];
        snprintf(dir, sizeof dir, "%s", tu_mkdtemp());
        gen_table g;
        generate(&rng, dir, &g);
        const uint64_t k = 1 + tu_below(&rng, g.nrows < 12 ? g.nrows : 12);
        const int split = (int)tu_below(&rng, 3), style = (int)tu_below(&rng, 3);
        char published[4200], api_rules[4200], rules_path[4200], recoded[4200], text[64];
        snprintf(published, sizeof published, "%s/published.csv", dir);
        snprintf(api_rules, sizeof api_rules, "%s/api-rules.csv", dir);
        snprintf(rules_path, sizeof rules_path, "%s/rules.csv", dir);
        snprintf(recoded, sizeof recoded, "%s/recoded.csv", dir);

        anonkit_job *job = anonkit_job_create();
        for (int i = 0; i < g.nqi; i++) {
            int q = g.spec_order[i];
            snprintf(text, sizeof text, "a%d", q);
            assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_QI, text), ANONKIT_OK);
            if (g.categorical[q]) {
                char h[4200];
                snprintf(h, sizeof h, "a%d=%s", q, g.hier_path[q]);
                assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_HIERARCHY, h), ANONKIT_OK);
            }
        }
        char delim[2] = {g.delim, '\0'};
        snprintf(text, sizeof text, "%llu", (unsigned long long)k);
        assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_K, text), ANONKIT_OK);
        assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_DELIMITER, delim), ANONKIT_OK);
        assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_SENSITIVE, "s"), ANONKIT_OK);
        assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_IDENTIFIER, "id"), ANONKIT_OK);
        assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_SPLIT, split_names[split]), ANONKIT_OK);
        if (split == MDR_SPLIT_INFOGAIN) assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_CLASS, "cls"), ANONKIT_OK);
        if (split == MDR_SPLIT_REGRESSION) assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_TARGET, "tgt"), ANONKIT_OK);
        assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_PUBLISH, style_names[style]), ANONKIT_OK);
        /* rules come in depth-first order for any thread count */
        assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_THREADS, tu_below(&rng, 2) ? "1" : "4"), ANONKIT_OK);
        assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_KEEP_ORDER, "true"), ANONKIT_OK);
        assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_INPUT, g.csv_path), ANONKIT_OK);
        assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_OUTPUT, published), ANONKIT_OK);
        assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_RULES, api_rules), ANONKIT_OK);
        anonkit_result *res = NULL;
        if (anonkit_anonymize(job, &res) != ANONKIT_OK) fail_msg("iteration %d: %s", iter, anonkit_errmsg(job));

        /* The same partition here, and its rules. */
        run rn;
        run_mondrian(&g, k, (mdr_split)split, styles[style], &rn);
        assert_int_equal(rn.p.nclasses, anonkit_result_classes(res));
        write_rules_file(&rn, rules_path);
        /* anonymize --rules wrote the same rules */
        char *mine = tu_read_file(rules_path, NULL), *theirs = tu_read_file(api_rules, NULL);
        if (!theirs) fail_msg("iteration %d: anonymize wrote no rules at %s", iter, api_rules);
        assert_string_equal(theirs, mine);
        free(mine);
        free(theirs);

        anonkit_result *recoded_result = NULL;
        assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_RULES, api_rules), ANONKIT_OK);
        assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_OUTPUT, recoded), ANONKIT_OK);
        if (anonkit_recode(job, &recoded_result) != ANONKIT_OK)
            fail_msg("iteration %d: recode: %s", iter, anonkit_errmsg(job));
        assert_int_equal(anonkit_result_rows_read(recoded_result), g.nrows);
        assert_int_equal(anonkit_result_rows_published(recoded_result), g.nrows);
        assert_int_equal(anonkit_result_rows_outside(recoded_result), 0);
        anonkit_result_free(recoded_result);
        size_t n1, n2;
        char *a = tu_read_file(published, &n1), *b = tu_read_file(recoded, &n2);
        assert_non_null(a);
        assert_non_null(b);
        if (n1 != n2 || memcmp(a, b, n1) != 0) fail_msg("iteration %d: recoded:\n%s\npublished:\n%s", iter, b, a);
        free(a);
        free(b);
        run_free(&rn);
        anonkit_result_free(res);
        anonkit_job_free(job);
        tu_rmtree(dir);
    }
}

/* ----------------------------------------------------- hand-made rules */

/* Ages split at 30; above it, sex splits Male | Female. Written by hand
 * after docs/rules-format.md. */
static const char hand_rules[] =
    "anonkit-rules,1\n"
    "delimiter,\",\"\n"
    "publish,generalize\n"
    "column,name,identifier\n"
    "column,age,qi-numeric\n"
    "column,sex,qi-categorical\n"
    "column,disease,copied\n"
    "hierarchy,sex,Male,*\n"
    "hierarchy,sex,Female,*\n"
    "rule,2,,30,25,28,25-28,Male,Female,Male,Female,*\n"
    "rule,3,30,,31,40,31-40,Male,Male,Male,Male,Male\n"
    "rule,2,30,,33,35,33-35,Female,Female,Female,Female,Female\n"
    "end,3,7\n";

/* Recodes `input` with the rules text; returns the status, output in *out. */
static int recode_text(const char *rules_text_, const char *input, char **out, uint64_t *rows, uint64_t *outside,
                       anonkit_job **job_out)
{
    const char *dir = tu_group_dir;
    char rules_path[4200], in[4200], res[4200];
    snprintf(rules_path, sizeof rules_path, "%s/rules.csv", dir);
    snprintf(in, sizeof in, "%s/in.csv", dir);
    snprintf(res, sizeof res, "%s/out.csv", dir);
    unlink(res);
    tu_write_file(rules_path, rules_text_);
    tu_write_file(in, input);
    anonkit_job *job = anonkit_job_create();
    anonkit_job_set(job, ANONKIT_OPT_RULES, rules_path);
    anonkit_job_set(job, ANONKIT_OPT_INPUT, in);
    anonkit_job_set(job, ANONKIT_OPT_OUTPUT, res);
    anonkit_result *result = NULL;
    int rc = anonkit_recode(job, &result);
    if ((rc == ANONKIT_OK) != (result != NULL)) fail_msg("anonkit_recode: a result only on success");
    *rows = anonkit_result_rows_read(result);
    *outside = anonkit_result_rows_outside(result);
    anonkit_result_free(result);
    *out = tu_read_file(res, NULL);
    *job_out = job;
    return rc;
}

static void test_new_data(void **state)
{
    (void)state;
    char *out;
    uint64_t rows, outside;
    anonkit_job *job;
    /* 29 and 30 lie above the class's 28, -7 below its 25, 30.5 below 31,
     * 100 above 35; only 34 inside. The name column goes, the others keep the rules' order. */
    int rc = recode_text(hand_rules,
                         "disease,sex,age,name\n"
                         "Flu,Female,29,Ann\n"
                         "Cold,Male,30,Bob\n"
                         "X,Male,30.5,Cid\n"
                         "Y,Female,100,Dee\n"
                         "\"Z, z\",Female,34,Eve\n"
                         "W,Male,-7,Fay\n",
                         &out, &rows, &outside, &job);
    if (rc != ANONKIT_OK) fail_msg("%s", anonkit_errmsg(job));
    assert_string_equal(out, "age,sex,disease\n"
                             "25-28,*,Flu\n"
                             "25-28,*,Cold\n"
                             "31-40,Male,X\n"
                             "33-35,Female,Y\n"
                             "33-35,Female,\"Z, z\"\n"
                             "25-28,*,W\n");
    assert_int_equal(rows, 6);
    assert_int_equal(outside, 5);
    free(out);
    anonkit_job_free(job);

    /* The identifier may be missing from the input. */
    rc = recode_text(hand_rules, "age,sex,disease\n40,Male,Flu\n", &out, &rows, &outside, &job);
    assert_int_equal(rc, ANONKIT_OK);
    assert_string_equal(out, "age,sex,disease\n31-40,Male,Flu\n");
    assert_int_equal(outside, 0);
    free(out);
    anonkit_job_free(job);

    /* A categorical value in its rule's region but not under the published
     * node: region a..b, the class had only a, so "a" was published. */
    static const char cat_rules[] = "anonkit-rules,1\n"
                                    "delimiter,;\n"
                                    "column,x,qi-categorical\n"
                                    "hierarchy,x,a,X,*\n"
                                    "hierarchy,x,b,X,*\n"
                                    "hierarchy,x,c,Y,*\n"
                                    "rule,4,a,b,a,a,a\n"
                                    "rule,5,c,c,c,c,c\n"
                                    "end,2,9\n";
    rc = recode_text(cat_rules, "x\na\nb\nc\n", &out, &rows, &outside, &job);
    if (rc != ANONKIT_OK) fail_msg("%s", anonkit_errmsg(job));
    assert_string_equal(out, "x\na\na\nc\n");
    assert_int_equal(rows, 3);
    assert_int_equal(outside, 1);
    free(out);
    anonkit_job_free(job);
}

/* Expects a failure whose message starts with the file (rules or input, in
 * the group folder) and line, and contains `text`; nothing written. */
static void expect_error(const char *rules, const char *input, const char *file, long line, const char *text)
{
    char *out;
    uint64_t rows, outside;
    anonkit_job *job;
    int rc = recode_text(rules, input, &out, &rows, &outside, &job);
    if (rc == ANONKIT_OK) fail_msg("no error for '%s'", text);
    assert_int_equal(rc, ANONKIT_E_INPUT);
    assert_null(out);
    char prefix[4300];
    if (line) snprintf(prefix, sizeof prefix, "%s/%s:%ld: ", tu_group_dir, file, line);
    else snprintf(prefix, sizeof prefix, "%s/%s", tu_group_dir, file);
    const char *msg = anonkit_errmsg(job);
    if (strncmp(msg, prefix, strlen(prefix)) != 0 || !strstr(msg, text))
        fail_msg("message '%s' should start with '%s' and contain '%s'", msg, prefix, text);
    anonkit_job_free(job);
}

/* hand_rules with line `line` (1-based) replaced by `with` (NULL: dropped). */
static char *edit_rules(int line, const char *with)
{
    static char buf[4096];
    buf[0] = '\0';
    const char *s = hand_rules;
    for (int n = 1; *s; n++) {
        const char *e = strchr(s, '\n') + 1;
        if (n != line) strncat(buf, s, (size_t)(e - s));
        else if (with) strcat(buf, with);
        s = e;
    }
    return buf;
}

static void test_bad_rules(void **state)
{
    (void)state;
    const char *in = "age,sex,disease\n40,Male,Flu\n";
    expect_error("name,age\nAnn,30\n", in, "rules.csv", 1, "not a rules file");
    expect_error(edit_rules(1, "anonkit-rules,2\n"), in, "rules.csv", 1, "version '2' is not supported");
    expect_error(edit_rules(2, NULL), in, "rules.csv", 7, "no 'delimiter' record");
    expect_error(edit_rules(4, "column,name,secret\n"), in, "rules.csv", 4, "unknown column role 'secret'");
    expect_error(edit_rules(6, "column,age,copied\n"), in, "rules.csv", 6, "column 'age' is named twice");
    expect_error(edit_rules(8, "hierarchy,age,Male,*\n"), in, "rules.csv", 8, "'age' is not a categorical");
    expect_error(edit_rules(9, "hierarchy,sex,Female,F,*\n"), in, "rules.csv", 9, "expected 2 fields like line 8");
    expect_error(edit_rules(9, "hierarchy,sex,Male,*\n"), in, "rules.csv", 9, "duplicate leaf");
    expect_error(edit_rules(10, "rule,2,,30,25,28,25-28,Male,Female\n"), in, "rules.csv", 10, "needs 12 fields (2, and 5 for each of the 2 quasi-identifiers), not 9");
    expect_error(edit_rules(10, "rule,two,,30,25,28,25-28,Male,Female,Male,Female,*\n"), in, "rules.csv", 10,
                 "'two' is not a row count");
    expect_error(edit_rules(10, "rule,2,,3O,25,28,25-28,Male,Female,Male,Female,*\n"), in, "rules.csv", 10,
                 "'3O' is not a number");
    expect_error(edit_rules(10, "rule,2,,30,25,28,25-28,Male,Other,Male,Female,*\n"), in, "rules.csv", 10,
                 "'Other' is not a leaf");
    expect_error(edit_rules(10, "rule,2,,30,25,31,25-31,Male,Female,Male,Female,*\n"), in, "rules.csv", 10,
                 "do not lie in order inside its region");
    expect_error(edit_rules(10, "rule,2,30,30,30,30,30,Male,Female,Male,Female,*\n"), in, "rules.csv", 10,
                 "is empty");
    /* a gap: ages up to 29 only, then above 30 */
    expect_error(edit_rules(10, "rule,2,,29,25,28,25-28,Male,Female,Male,Female,*\n"), in, "rules.csv", 11,
                 "does not fit the other rules");
    /* an overlap: the second rule reaches below 30 */
    expect_error(edit_rules(11, "rule,3,20,,31,40,31-40,Male,Male,Male,Male,Male\n"), in, "rules.csv", 10,
                 "cannot be cut apart");
    /* the Female part missing: the domain is not covered */
    expect_error("anonkit-rules,1\ndelimiter,\",\"\ncolumn,age,qi-numeric\ncolumn,sex,qi-categorical\n"
                 "hierarchy,sex,Male,*\nhierarchy,sex,Female,*\n"
                 "rule,2,,30,25,28,25-28,Male,Female,Male,Female,*\n"
                 "rule,3,30,,31,40,31-40,Male,Male,Male,Male,Male\nend,2,5\n",
                 in, "rules.csv", 8, "region of column 'sex' does not fit the other rules");
    expect_error(edit_rules(13, "end,3,8\n"), in, "rules.csv", 13, "counts '8' rows");
    expect_error(edit_rules(13, NULL), in, "rules.csv", 12, "cut short");
    expect_error(edit_rules(13, "end,3,7\nrule,1,,,1,1,1,Male,Female,Male,Male,Male\n"), in, "rules.csv", 14,
                 "after the 'end' record");
    expect_error(edit_rules(12, "bogus,1\n"), in, "rules.csv", 12, "unknown record kind 'bogus'");
    expect_error(edit_rules(3, "column,x,qi-numeric\n"), in, "rules.csv", 10, "needs 17 fields");
}

static void test_bad_input(void **state)
{
    (void)state;
    expect_error(hand_rules, "age,sex,disease\n40,Male,Flu\n41,Other,Flu\n", "in.csv", 3,
                 "value 'Other' of column 'sex' is not a leaf");
    expect_error(hand_rules, "age,sex,disease\n40,Male,Flu\nforty,Male,Flu\n", "in.csv", 3,
                 "'age' is numeric but holds 'forty'");
    expect_error(hand_rules, "age,disease\n40,Flu\n", "in.csv", 1, "column 'sex' of the rules");
    expect_error(hand_rules, "age,sex,disease,zip\n40,Male,Flu,1\n", "in.csv", 1, "column 'zip' is not in the rules");
    expect_error(hand_rules, "age,sex,disease,age\n40,Male,Flu,1\n", "in.csv", 1, "names column 'age' twice");
    expect_error(hand_rules, "age,sex,disease\n40,Male\n", "in.csv", 2, "expected 3 fields");
    expect_error(hand_rules, "", "in.csv", 1, "empty");
}

/* The tree is rebuilt with cuts near the middle of each run: 1024 rules of
 * one numeric QI (every cut allowed) give a tree of height about 10, where
 * taking the first allowed cut would give a chain of 1023. */
static void test_balanced(void **state)
{
    (void)state;
    char in[4200], path[4200];
    snprintf(in, sizeof in, "%s/wide.csv", tu_group_dir);
    snprintf(path, sizeof path, "%s/wide-rules.csv", tu_group_dir);
    FILE *f = fopen(in, "w");
    assert_non_null(f);
    fputs("x,y\n", f);
    for (int i = 0; i < 1024; i++) fprintf(f, "%d,%d\n", (i * 389) % 1024, i % 3);
    fclose(f);
    const char *names[] = {"x"};
    const char *paths[] = {NULL};
    table_spec spec = {.path = in, .display_name = in, .delimiter = ',', .nqi = 1, .qi_names = names,
                       .hierarchy_paths = paths, .threads = 1};
    table *t;
    ak_error err;
    assert_int_equal(table_load(&t, &spec, &err), ANONKIT_OK);
    model m;
    model_init(&m);
    partition p;
    assert_int_equal(partition_init(&p, t->nrows, t->nqi, &err), ANONKIT_OK);
    assert_int_equal(mdr_run(t, &m, 1, &p, &err), ANONKIT_OK);
    assert_int_equal(p.nclasses, 1024);
    run rn = {.t = t, .p = p, .means = NULL, .style = RECODE_GENERALIZE};
    write_rules_file(&rn, path);
    rules *r;
    assert_int_equal(rules_load(&r, path, &err), ANONKIT_OK);
    assert_int_equal(rules_count(r), 1024);
    if (rules_height(r) > 12) fail_msg("height %zu for 1024 rules", rules_height(r));
    rules_free(r);
    partition_free(&p);
    table_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_new_data),
        cmocka_unit_test(test_bad_rules),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_random_rules),
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_balanced),
    };
    return cmocka_run_group_tests(tests, tu_group_setup, tu_group_teardown);
}
