/* test_risk_groups.c — the classes `anonkit risk` forms (src/metrics/
 * risk_groups.c) against a grouping written here: every row's QI texts
 * joined into a string, the rows sorted by it and the runs counted. Cases:
 * many classes (nearly every row its own), one class, few classes (the
 * front table), more classes than the front table holds, a file large
 * enough to be read in two pieces on two threads (with weights, a
 * population table, a published file's all-"*" rows), the message of a
 * population that lacks a class, and keys built by copy (columns out of
 * order, quoted fields that hold the delimiter, empty fields; a population
 * table whose columns lie in another order). With the
 * classes in any order and no weights the bucket entries take the narrow
 * form (no rows), and the front table's classes are kept apart from them:
 * cases where the table is dropped while its classes recur, on one and on
 * two threads, and files with empty values hashed where they lie. The block
 * scan of a small file against the CSV reader's path on files with quoted
 * fields, CRLF, ragged rows, empty lines, bad weights, long lines and no
 * final line end. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "metrics/risk_groups.h"
#include "testutil.h"

#define NQI 9

/* One row of the reference grouping. */
typedef struct ref_row {
    char key[NQI * 24];
    size_t row;
    double weight;
} ref_row;

typedef struct ref_class {
    uint64_t size, population;
    double weight;
    size_t first;
} ref_class;

static int cmp_ref(const void *a, const void *b)
{
    const ref_row *x = a, *y = b;
    const int c = strcmp(x->key, y->key);
    if (c) return c;
    return (x->row > y->row) - (x->row < y->row);
}

static int cmp_first(const void *a, const void *b)
{
    const ref_class *x = a, *y = b;
    return (x->first > y->first) - (x->first < y->first);
}

static int cmp_u64(const void *a, const void *b)
{
    const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* The shape of a random table: rows, and per QI how many values it takes. */
typedef struct shape {
    size_t rows;
    unsigned range[NQI];
    unsigned star_every; /* every star_every-th row all "*" (0: none) */
    size_t pad;          /* bytes of an extra column, to make the file large */
    unsigned empty_every; /* about one value in empty_every empty (0: none) */
} shape;

/* Writes a table with columns q0..q8, w (a weight) and pad; keeps each
 * row's key and weight in rows[] (sorted afterwards by the caller). */
static void write_table(tu_rng *rng, const char *path, const shape *s, ref_row *rows)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fprintf(f, "q0,q1,q2,q3,q4,q5,q6,q7,q8,w,pad\n");
    char pad[256];
    memset(pad, 'x', sizeof pad);
    for (size_t r = 0; r < s->rows; r++) {
        const int star = s->star_every && r % s->star_every == 3;
        char *k = rows[r].key;
        k[0] = 0;
        for (int q = 0; q < NQI; q++) {
            char v[24];
            if (star)
                snprintf(v, sizeof v, "*");
            else if (s->empty_every && tu_below(rng, s->empty_every) == 0)
                v[0] = 0;
            else if (q == 8)
                snprintf(v, sizeof v, "a-long-value-%u", (unsigned)tu_below(rng, s->range[q])); /* over 8 bytes */
            else
                snprintf(v, sizeof v, "%u", (unsigned)tu_below(rng, s->range[q]));
            fprintf(f, "%s,", v);
            strcat(k, v);
            strcat(k, "|");
        }
        const double w = (double)(1 + tu_below(rng, 1000)) / 7.0;
        fprintf(f, "%.17g,%.*s\n", w, (int)s->pad, pad);
        rows[r].row = r;
        /* the weight as the file holds it, read back */
        char wt[64];
        snprintf(wt, sizeof wt, "%.17g", w);
        rows[r].weight = strtod(wt, NULL);
    }
    assert_int_equal(fclose(f), 0);
}

/* The reference classes of rows (sorted in place), in the order of their
 * first rows; pop_rows (may be NULL) counted into their population sizes. */
static size_t reference(ref_row *rows, size_t n, ref_row *pop_rows, size_t npop, ref_class *out)
{
    qsort(rows, n, sizeof *rows, cmp_ref);
    if (pop_rows) qsort(pop_rows, npop, sizeof *pop_rows, cmp_ref);
    size_t nc = 0, pi = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        ref_class c = {0, 0, 0, rows[i].row};
        for (; j < n && !strcmp(rows[j].key, rows[i].key); j++) {
            c.size++;
            c.weight += rows[j].weight;
        }
        while (pop_rows && pi < npop && strcmp(pop_rows[pi].key, rows[i].key) < 0) pi++;
        while (pop_rows && pi < npop && !strcmp(pop_rows[pi].key, rows[i].key)) {
            c.population++;
            pi++;
        }
        out[nc++] = c;
        i = j;
    }
    qsort(out, nc, sizeof *out, cmp_first);
    return nc;
}

static const char *const qi_names[NQI] = {"q0", "q1", "q2", "q3", "q4", "q5", "q6", "q7", "q8"};

/* Reads path with the given options and compares with the reference (a
 * small file without a population table grouped directly by the block scan
 * and by the CSV reader, and through the buckets). */
static void check_via(const char *path, ref_row *rows, size_t n, const char *population, ref_row *pop_rows,
                      size_t npop, int weighted, unsigned threads, int any_order, double suppression, int buckets_only,
                      int generic_reader);

static void check(const char *path, ref_row *rows, size_t n, const char *population, ref_row *pop_rows,
                  size_t npop, int weighted, unsigned threads, int any_order, double suppression)
{
    check_via(path, rows, n, population, pop_rows, npop, weighted, threads, any_order, suppression, 0, 0);
    if (!population) {
        check_via(path, rows, n, population, pop_rows, npop, weighted, threads, any_order, suppression, 1, 0);
        check_via(path, rows, n, population, pop_rows, npop, weighted, threads, any_order, suppression, 0, 1);
    }
}

static void check_via(const char *path, ref_row *rows, size_t n, const char *population, ref_row *pop_rows,
                      size_t npop, int weighted, unsigned threads, int any_order, double suppression, int buckets_only,
                      int generic_reader)
{
    ref_class *want = malloc((n ? n : 1) * sizeof *want);
    assert_non_null(want);
    size_t nc = reference(rows, n, pop_rows, npop, want);
    risk_group_params p = {path, "t.csv", ',', qi_names, NQI, weighted ? "w" : NULL, suppression > 0, suppression, 0,
                           population, "pop.csv", threads, any_order, buckets_only, NULL, generic_reader};
    risk_groups g;
    ak_error err;
    ak_err_clear(&err);
    const int rc = risk_groups_read(&g, &p, &err);
    if (rc != ANONKIT_OK) fail_msg("risk_groups_read: %s", err.message);
    assert_int_equal(g.rows, n);
    /* the all-"*" class: left out when within the allowance */
    uint64_t suppressed = 0;
    if (suppression > 0) {
        char star[NQI * 2 + 1] = "";
        for (int q = 0; q < NQI; q++) strcat(star, "*|");
        for (size_t i = 0; i < n; i++)
            if (!strcmp(rows[i].key, star)) suppressed++;
        if ((double)suppressed > suppression * (double)n) suppressed = 0;
    }
    assert_int_equal(g.suppressed, suppressed);
    size_t k = 0;
    if (any_order) {
        uint64_t *a = malloc((nc ? nc : 1) * sizeof *a), *b = malloc((nc ? nc : 1) * sizeof *b);
        assert_true(a && b);
        for (size_t i = 0; i < nc; i++) a[i] = want[i].size;
        /* the classes with the suppressed rows' class put back */
        assert_int_equal(g.nclasses + (suppressed ? 1 : 0), nc);
        memcpy(b, g.class_size, g.nclasses * sizeof *b);
        if (suppressed) b[g.nclasses] = suppressed;
        qsort(a, nc, sizeof *a, cmp_u64);
        qsort(b, nc, sizeof *b, cmp_u64);
        for (size_t i = 0; i < nc; i++) assert_int_equal(a[i], b[i]);
        free(a);
        free(b);
    } else {
        for (size_t i = 0; i < nc; i++) {
            if (suppressed && want[i].size == suppressed) {
                char star[NQI * 2 + 1] = "";
                for (int q = 0; q < NQI; q++) strcat(star, "*|");
                const ref_row *r = NULL;
                for (size_t j = 0; j < n && !r; j++)
                    if (rows[j].row == want[i].first) r = &rows[j];
                if (r && !strcmp(r->key, star)) continue;
            }
            assert_true(k < g.nclasses);
            assert_int_equal(g.class_size[k], want[i].size);
            if (weighted) assert_true(g.class_weight[k] == want[i].weight); /* same sums, same order */
            if (population) assert_int_equal(g.class_population[k], want[i].population);
            k++;
        }
        assert_int_equal(k, g.nclasses);
    }
    risk_groups_free(&g);
    free(want);
}

typedef struct tcase {
    shape s;
    int weighted, any_order, with_population;
    unsigned threads;
    double suppression;
} tcase;

static void run_case(const tcase *c, uint64_t seed)
{
    tu_rng rng = {seed};
    const char *dir = tu_mkdtemp();
    char path[4096], pop[4096];
    snprintf(path, sizeof path, "%s", tu_path(dir, "t.csv"));
    snprintf(pop, sizeof pop, "%s", tu_path(dir, "pop.csv"));
    ref_row *rows = malloc(c->s.rows * sizeof *rows);
    assert_non_null(rows);
    write_table(&rng, path, &c->s, rows);
    ref_row *pop_rows = NULL;
    size_t npop = 0;
    if (c->with_population) {
        /* the sample itself and as many rows again, drawn alike */
        shape ps = c->s;
        ps.pad = 0;
        pop_rows = malloc(2 * c->s.rows * sizeof *pop_rows);
        assert_non_null(pop_rows);
        write_table(&rng, pop, &ps, pop_rows + c->s.rows);
        memcpy(pop_rows, rows, c->s.rows * sizeof *rows);
        npop = 2 * c->s.rows;
        FILE *f = fopen(pop, "ab"), *in = fopen(path, "rb");
        assert_true(f && in);
        char line[1024];
        assert_non_null(fgets(line, sizeof line, in)); /* header */
        while (fgets(line, sizeof line, in)) fputs(line, f);
        fclose(in);
        assert_int_equal(fclose(f), 0);
    }
    check(path, rows, c->s.rows, c->with_population ? pop : NULL, pop_rows, npop, c->weighted, c->threads,
          c->any_order, c->suppression);
    free(rows);
    free(pop_rows);
    tu_rmtree(dir);
}

/* Nearly every row its own class; every field count, in order and in any order. */
static void test_many_classes(void **state)
{
    (void)state;
    const tcase a = {{20000, {100000, 100000, 1000, 1000, 100, 100, 10, 10, 1000}, 0, 0, 0}, 0, 0, 0, 1, 0};
    run_case(&a, 1);
    tcase b = a;
    b.any_order = 1;
    run_case(&b, 2);
    b.weighted = 1;
    run_case(&b, 3);
}

/* Every row in one class. */
static void test_one_class(void **state)
{
    (void)state;
    const tcase a = {{5000, {1, 1, 1, 1, 1, 1, 1, 1, 1}, 0, 0, 0}, 1, 0, 1, 1, 0};
    run_case(&a, 4);
}

/* Few classes (all in the front table), and more than it holds. */
static void test_front_table(void **state)
{
    (void)state;
    const tcase few = {{30000, {3, 2, 2, 1, 1, 1, 1, 1, 5}, 0, 0, 0}, 1, 0, 1, 1, 0};
    run_case(&few, 5);
    const tcase more = {{120000, {40, 20, 30, 1, 1, 1, 1, 1, 2}, 0, 0, 0}, 1, 0, 0, 1, 0};
    run_case(&more, 6);
}

/* A published file: all-"*" rows within the allowance and beyond it. */
static void test_published(void **state)
{
    (void)state;
    tcase a = {{20000, {5, 5, 4, 1, 1, 1, 1, 1, 3}, 50, 0, 0}, 1, 0, 0, 1, 0.05};
    run_case(&a, 7);
    a.suppression = 0.001;
    run_case(&a, 8);
    a.any_order = 1;
    a.suppression = 0.05;
    a.weighted = 0;
    run_case(&a, 9);
}

/* Files large enough to be read in two pieces on two threads. */
static void test_two_pieces(void **state)
{
    (void)state;
    const tcase unique = {{60000, {100000, 100000, 1000, 1000, 100, 100, 10, 10, 1000}, 0, 120, 0}, 0, 1, 0, 2, 0};
    run_case(&unique, 10);
    const tcase weighted = {{60000, {30, 20, 3, 1, 1, 1, 1, 1, 2}, 0, 120, 0}, 1, 0, 1, 2, 0};
    run_case(&weighted, 11);
    const tcase spread = {{60000, {300, 200, 3, 1, 1, 1, 1, 1, 2}, 0, 120, 0}, 1, 0, 0, 2, 0};
    run_case(&spread, 12);
    const tcase published = {{60000, {5, 5, 4, 1, 1, 1, 1, 1, 3}, 40, 120, 0}, 1, 0, 0, 2, 0.05};
    run_case(&published, 13);
}

/* Small files (2 to 8 MiB) grouped straight into classes in two pieces on
 * two threads (risk_groups_direct.c; by the CSV reader from 2 MiB, by the
 * block scan from 4 MiB, so the files of 3.3 MB are read in one piece by
 * the scan and those of 5.4 MB in two both ways): the classes in the order
 * of their first rows, as the reference makes them, with many classes,
 * few, empty values and published all-"*" rows; with weights the file is
 * read in one piece (the sums' order), checked alike. */
static void test_small_two_pieces(void **state)
{
    (void)state;
    const tcase many = {{30000, {100000, 100000, 1000, 1000, 100, 100, 10, 10, 1000}, 0, 100, 0}, 0, 0, 0, 2, 0};
    run_case(&many, 30);
    const tcase few = {{30000, {30, 20, 3, 1, 1, 1, 1, 1, 2}, 0, 100, 0}, 0, 0, 0, 2, 0};
    run_case(&few, 31);
    const tcase empty = {{30000, {300, 200, 3, 1, 1, 1, 1, 1, 2}, 0, 100, 3}, 0, 0, 0, 2, 0};
    run_case(&empty, 32);
    const tcase published = {{30000, {5, 5, 4, 1, 1, 1, 1, 1, 3}, 40, 100, 0}, 0, 0, 0, 2, 0.05};
    run_case(&published, 33);
    const tcase weighted = {{30000, {300, 200, 3, 1, 1, 1, 1, 1, 2}, 0, 100, 0}, 1, 0, 0, 2, 0};
    run_case(&weighted, 34);
    const tcase many_big = {{30000, {100000, 100000, 1000, 1000, 100, 100, 10, 10, 1000}, 0, 150, 0}, 0, 0, 0, 2, 0};
    run_case(&many_big, 35);
    const tcase empty_big = {{30000, {300, 200, 3, 1, 1, 1, 1, 1, 2}, 0, 150, 3}, 0, 1, 0, 2, 0};
    run_case(&empty_big, 36);
}

/* Classes in any order without weights (the narrow bucket entries): the
 * front table filled and dropped while its classes recur afterwards, in
 * one piece and in two; many classes with empty values, whose keys are
 * hashed where they lie in the reader's buffer (no quoted field in the
 * file), read in one and in two pieces, in order and in any order. */
static void test_narrow_entries(void **state)
{
    (void)state;
    tcase more = {{140000, {40, 20, 30, 1, 1, 1, 1, 1, 2}, 0, 0, 0}, 0, 1, 0, 1, 0};
    run_case(&more, 14);
    more.s.pad = 24; /* over 8 MiB: two pieces, each past the front table's window */
    more.threads = 2;
    run_case(&more, 15);
    tcase empties = {{20000, {50, 40, 30, 20, 10, 5, 3, 2, 4}, 0, 0, 3}, 0, 1, 0, 1, 0};
    run_case(&empties, 16);
    empties.any_order = 0;
    run_case(&empties, 17);
    tcase big = {{100000, {50, 40, 30, 20, 10, 5, 3, 2, 4}, 0, 60, 3}, 0, 1, 0, 2, 0};
    run_case(&big, 18);
    big.any_order = 0;
    big.weighted = 1;
    run_case(&big, 19);
}

/* A population that lacks a class: the message names the line of the
 * first row (in file order) of the first class it lacks. */
static void test_population_lacks_a_class(void **state)
{
    (void)state;
    const char *dir = tu_mkdtemp();
    char path[4096], pop[4096];
    snprintf(path, sizeof path, "%s", tu_path(dir, "t.csv"));
    snprintf(pop, sizeof pop, "%s", tu_path(dir, "pop.csv"));
    tu_write_file(path, "a,b,c\n1,x,\"two\nlines\"\n2,y,p\n3,z,p\n2,y,p\n4,w,p\n");
    tu_write_file(pop, "a,b\n1,x\n2,y\n2,y\n3,z\n9,9\n9,9\n");
    const char *qi[] = {"a", "b"};
    risk_group_params p = {path, "t.csv", ',', qi, 2, NULL, 0, 0, 0, pop, "pop.csv", 2, 0, 0, NULL, 0};
    risk_groups g;
    ak_error err;
    ak_err_clear(&err);
    assert_int_equal(risk_groups_read(&g, &p, &err), ANONKIT_E_INPUT);
    assert_int_equal(err.line, 7);
    assert_non_null(strstr(err.message, "1 rows in the sample but only 0"));
    tu_write_file(pop, "a,b\n1,x\n2,y\n2,y\n3,z\n4,w\n");
    ak_err_clear(&err);
    assert_int_equal(risk_groups_read(&g, &p, &err), ANONKIT_OK);
    assert_int_equal(g.nclasses, 4);
    const uint64_t size[] = {1, 2, 1, 1}, popsize[] = {1, 2, 1, 1};
    for (int i = 0; i < 4; i++) {
        assert_int_equal(g.class_size[i], size[i]);
        assert_int_equal(g.class_population[i], popsize[i]);
    }
    risk_groups_free(&g);
    tu_rmtree(dir);
}

/* Keys built by copy: QI columns out of file order, quoted fields that hold
 * the delimiter (the length-prefixed form), empty fields; equal texts must
 * be one class however the file quotes them. */
static void test_keys_by_copy(void **state)
{
    (void)state;
    const char *dir = tu_mkdtemp();
    char path[4096];
    snprintf(path, sizeof path, "%s", tu_path(dir, "t.csv"));
    tu_write_file(path, "a,b,c\n"
                        "1,x,p\n"          /* class (1,x,p) */
                        "\"1,x\",p,\n"  /* (1\,x, p, ""): the first quote holds the delimiter */
                        "\"1\",x,p\n"    /* (1,x,p) again, quoted */
                        "1,\"x,p\",\n"  /* (1, x\,p, "") */
                        "1,x,\n"           /* (1, x, "") */
                        ",,\n"             /* ("", "", "") */
                        "\"\",,\n"       /* the same, quoted */
                        "\"1,x\",p,\n"  /* (1\,x, p, "") again */
                        "1,x,p\n");
    /* in file order (consecutive) and reversed (copied) */
    const char *in_order[] = {"a", "b", "c"}, *reversed[] = {"c", "b", "a"};
    const char *const *sets[] = {in_order, reversed};
    const uint64_t want[] = {3, 2, 1, 1, 2};
    for (int set = 0; set < 2; set++)
        for (unsigned threads = 1; threads <= 2; threads++) {
            risk_group_params p = {path, "t.csv", ',', sets[set], 3, NULL, 0, 0, 0, NULL, NULL, threads, 0, 0, NULL, 0};
            risk_groups g;
            ak_error err;
            ak_err_clear(&err);
            assert_int_equal(risk_groups_read(&g, &p, &err), ANONKIT_OK);
            assert_int_equal(g.rows, 9);
            assert_int_equal(g.nclasses, 5);
            for (int k = 0; k < 5; k++) assert_int_equal(g.class_size[k], want[k]);
            risk_groups_free(&g);
        }
    /* two columns out of order, not consecutive: (c, a) */
    const char *c_a[] = {"c", "a"};
    const uint64_t want_ca[] = {3, 2, 2, 2}; /* (p,1) ("",1\,x) ("",1) ("","") */
    for (unsigned threads = 1; threads <= 2; threads++) {
        risk_group_params p = {path, "t.csv", ',', c_a, 2, NULL, 0, 0, 0, NULL, NULL, threads, 0, 0, NULL, 0};
        risk_groups g;
        ak_error err;
        ak_err_clear(&err);
        assert_int_equal(risk_groups_read(&g, &p, &err), ANONKIT_OK);
        assert_int_equal(g.nclasses, 4);
        for (int k = 0; k < 4; k++) assert_int_equal(g.class_size[k], want_ca[k]);
        risk_groups_free(&g);
    }
    /* a population table with its columns in another order (c, a, b) and
     * its rows in another order, each row twice: every class's population
     * is twice its size, with the QIs in file order and reversed */
    char pop[4096];
    snprintf(pop, sizeof pop, "%s", tu_path(dir, "pop.csv"));
    tu_write_file(pop, "c,a,b\n"
                       "p,1,x\n,\"1,x\",p\n,1,\"x,p\"\n,1,x\n,,\n,,\n,\"1,x\",p\np,1,x\np,\"1\",x\n"
                       "p,1,x\n,\"1,x\",p\n,1,\"x,p\"\n,1,x\n,,\n,,\n,\"1,x\",p\np,1,x\np,\"1\",x\n");
    for (int set = 0; set < 2; set++) {
        risk_group_params p = {path, "t.csv", ',', sets[set], 3, NULL, 0, 0, 0, pop, "pop.csv", 1, 0, 0, NULL, 0};
        risk_groups g;
        ak_error err;
        ak_err_clear(&err);
        assert_int_equal(risk_groups_read(&g, &p, &err), ANONKIT_OK);
        assert_int_equal(g.nclasses, 5);
        for (int k = 0; k < 5; k++) {
            assert_int_equal(g.class_size[k], want[k]);
            assert_int_equal(g.class_population[k], 2 * want[k]);
        }
        risk_groups_free(&g);
    }
    tu_rmtree(dir);
}

/* The three ways of reading a small file (the block scan, the CSV reader
 * straight into classes, the buckets) on path with QIs qi[0 .. nqi): the
 * same status; on success the same rows and classes (in the same order
 * with the scan and the reader, as sorted sizes through the buckets when
 * any_order) and the same weight sums to the bit, on failure the same
 * message, line and column (the scan hands the first line it does not
 * take to the reader). */
static void compare_paths(const char *path, const char *const *qi, size_t nqi, const char *weight, unsigned threads,
                          int any_order)
{
    risk_groups g[3];
    ak_error err[3];
    int rc[3];
    for (int v = 0; v < 3; v++) {
        risk_group_params p = {path, "t.csv", ',', qi, nqi, weight, 0, 0, 0, NULL, NULL, threads, any_order, v == 2,
                               NULL, v == 1};
        ak_err_clear(&err[v]);
        rc[v] = risk_groups_read(&g[v], &p, &err[v]);
    }
    for (int v = 1; v < 3; v++) {
        if (rc[v] != rc[0]) fail_msg("path %d: status %d, the scan %d (%s / %s)", v, rc[v], rc[0], err[v].message, err[0].message);
        if (rc[0] != ANONKIT_OK) {
            assert_string_equal(err[v].message, err[0].message);
            assert_string_equal(err[v].file, err[0].file);
            assert_int_equal(err[v].line, err[0].line);
            assert_int_equal(err[v].column, err[0].column);
            continue;
        }
        assert_int_equal(g[v].rows, g[0].rows);
        assert_int_equal(g[v].nclasses, g[0].nclasses);
        const size_t n = g[0].nclasses;
        if (v == 2 && any_order) {
            uint64_t *a = malloc((n ? n : 1) * sizeof *a), *b = malloc((n ? n : 1) * sizeof *b);
            assert_true(a && b);
            memcpy(a, g[0].class_size, n * sizeof *a);
            memcpy(b, g[v].class_size, n * sizeof *b);
            qsort(a, n, sizeof *a, cmp_u64);
            qsort(b, n, sizeof *b, cmp_u64);
            for (size_t k = 0; k < n; k++) assert_int_equal(a[k], b[k]);
            free(a);
            free(b);
            continue;
        }
        for (size_t k = 0; k < n; k++) {
            assert_int_equal(g[v].class_size[k], g[0].class_size[k]);
            if (weight) assert_true(g[v].class_weight[k] == g[0].class_weight[k]);
        }
    }
    for (int v = 0; v < 3; v++)
        if (rc[v] == ANONKIT_OK) risk_groups_free(&g[v]);
}

/* What a generated file holds besides plain rows. */
enum {
    TRICK_CRLF = 1,         /* CRLF line ends (some lines; all with TRICK_ALL_CRLF) */
    TRICK_ALL_CRLF = 2,
    TRICK_NO_FINAL_LF = 4,  /* the last line without a line end */
    TRICK_QUOTES = 8,       /* quoted fields from some row on: the delimiter, an LF, "" or a plain text inside */
    TRICK_RAGGED = 16,      /* one row with a field too many or too few */
    TRICK_EMPTY_LINE = 32,  /* an empty line among the rows */
    TRICK_TRAILING = 64,    /* empty lines at the end */
    TRICK_BAD_WEIGHT = 128, /* one weight that is not a positive number */
    TRICK_LONG = 256,       /* one line longer than the scan's 64 KiB block */
};

/* Writes a file of columns a,b,c,w,d with `rows` rows of few distinct
 * values (so that classes recur), with the tricks asked for from about row
 * `from` on. */
static void write_tricky(tu_rng *rng, const char *path, size_t rows, unsigned tricks, size_t from)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    static const char *const plain[] = {"x0", "x1", "x2", "", "y 3", "x1"};
    static const char *const quoted[] = {"\"x1\"", "\"x,1\"", "\"x\n1\"", "\"x\"\"1\"", "\"\"", "\"1,x0\""};
    fprintf(f, "a,b,c,w,d\n");
    for (size_t r = 0; r < rows; r++) {
        const int late = r >= from;
        if (late && (tricks & TRICK_EMPTY_LINE) && r == from) fprintf(f, "\n");
        const int ncols = late && (tricks & TRICK_RAGGED) && r == from + 1 ? (tu_below(rng, 2) ? 6 : 4) : 5;
        for (int c = 0; c < ncols; c++) {
            if (c) fputc(',', f);
            if (c == 3) {
                if (late && (tricks & TRICK_BAD_WEIGHT) && r == from + 2) fprintf(f, tu_below(rng, 2) ? "-1" : "w");
                else fprintf(f, "%u.5", (unsigned)tu_below(rng, 4));
                continue;
            }
            if (late && (tricks & TRICK_LONG) && r == from + 3 && c == 4) {
                for (int i = 0; i < 70000; i++) fputc('z', f);
                continue;
            }
            if (late && (tricks & TRICK_QUOTES) && tu_below(rng, 4) == 0)
                fputs(quoted[tu_below(rng, sizeof quoted / sizeof *quoted)], f);
            else
                fputs(plain[tu_below(rng, sizeof plain / sizeof *plain)], f);
        }
        const int last = r + 1 == rows;
        if (last && (tricks & TRICK_NO_FINAL_LF)) break;
        if ((tricks & TRICK_ALL_CRLF) || ((tricks & TRICK_CRLF) && tu_below(rng, 3) == 0)) fputc('\r', f);
        fputc('\n', f);
    }
    if (tricks & TRICK_TRAILING) fprintf(f, "\n\n");
    assert_int_equal(fclose(f), 0);
}

/* The block scan against the CSV reader's path on random files with every
 * trick alone and in random combinations, of a few rows, of more than one
 * 64 KiB block and of more than 4 MiB (two pieces on two threads), with
 * the QIs consecutive (ending at the last column or not), apart, reversed,
 * and with and without weights. */
static void test_block_scan(void **state)
{
    (void)state;
    const char *dir = tu_mkdtemp();
    char path[4096];
    snprintf(path, sizeof path, "%s", tu_path(dir, "t.csv"));
    const char *abc[] = {"a", "b", "c"}, *d[] = {"d"}, *ad[] = {"a", "d"}, *db[] = {"d", "b"}, *bcwd[] = {"b", "c", "w", "d"};
    const char *const *sets[] = {abc, d, ad, db, bcwd};
    const size_t nsets[] = {3, 1, 2, 2, 4};
    tu_rng rng = {77};
    for (int round = 0; round < 60; round++) {
        const size_t rows = round < 30 ? 1 + tu_below(&rng, 300) : round < 55 ? 3000 + tu_below(&rng, 20000) : 300000;
        unsigned tricks = round < 9 ? 1u << round : (unsigned)tu_below(&rng, 512);
        if (round >= 55) tricks &= TRICK_QUOTES | TRICK_RAGGED | TRICK_CRLF | TRICK_NO_FINAL_LF; /* (few: big files) */
        const size_t from = tu_below(&rng, rows);
        write_tricky(&rng, path, rows, tricks, from);
        for (int set = 0; set < 5; set++)
            for (int weighted = 0; weighted < 2; weighted++) {
                if (round >= 55 && (weighted || set % 2)) continue;
                compare_paths(path, sets[set], nsets[set], weighted ? "w" : NULL, 1 + (unsigned)((round + set) % 2),
                              set % 2);
            }
    }
    /* hand-made: a key "x,1" + "2" against "x" + "1,2", a final line
     * without LF whose last field ends in a CR (data, as the reader has it),
     * a CRLF line whose last QI is the last column */
    tu_write_file(path, "a,b\n\"x,1\",2\nx,\"1,2\"\nx,1\r\nx,1\n\"x,1\",2\nq,r\r");
    const char *ab[] = {"a", "b"}, *b[] = {"b"};
    compare_paths(path, ab, 2, NULL, 1, 0);
    risk_group_params p = {path, "t.csv", ',', ab, 2, NULL, 0, 0, 0, NULL, NULL, 1, 0, 0, NULL, 0};
    risk_groups g;
    ak_error err;
    ak_err_clear(&err);
    assert_int_equal(risk_groups_read(&g, &p, &err), ANONKIT_OK);
    const uint64_t want[] = {2, 1, 2, 1}; /* ("x,1","2") ("x","1,2") ("x","1") ("q","r\r") */
    assert_int_equal(g.nclasses, 4);
    for (int k = 0; k < 4; k++) assert_int_equal(g.class_size[k], want[k]);
    risk_groups_free(&g);
    tu_write_file(path, "a,b\nx,1\r\nx,1\ny,1\r\nx,1");
    p.qi = b;
    p.nqi = 1;
    compare_paths(path, b, 1, NULL, 1, 0);
    ak_err_clear(&err);
    assert_int_equal(risk_groups_read(&g, &p, &err), ANONKIT_OK);
    assert_int_equal(g.nclasses, 1);
    assert_int_equal(g.class_size[0], 4);
    risk_groups_free(&g);
    /* a file that starts with an empty line, or a CR alone: read as the reader reads it */
    tu_write_file(path, "\na,b\nx,1\n");
    compare_paths(path, ab, 2, NULL, 1, 0);
    tu_write_file(path, "\r\na,b\nx,1\n");
    compare_paths(path, ab, 2, NULL, 1, 0);
    /* a ragged row: the reader's message and line */
    tu_write_file(path, "a,b\nx,1\nx,1,2\n");
    p.qi = ab;
    p.nqi = 2;
    ak_err_clear(&err);
    assert_int_equal(risk_groups_read(&g, &p, &err), ANONKIT_E_INPUT);
    assert_int_equal(err.line, 3);
    assert_string_equal(err.file, "t.csv");
    assert_non_null(strstr(err.message, "expected 2 fields as in the header, found 3"));
    tu_rmtree(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_many_classes),  cmocka_unit_test(test_one_class),
        cmocka_unit_test(test_front_table),   cmocka_unit_test(test_published),
        cmocka_unit_test(test_two_pieces),    cmocka_unit_test(test_population_lacks_a_class),
        cmocka_unit_test(test_keys_by_copy),  cmocka_unit_test(test_narrow_entries),
        cmocka_unit_test(test_small_two_pieces), cmocka_unit_test(test_block_scan),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
