/* test_metrics.c — information-loss metrics (src/metrics/metrics.c, docs/ARCHITECTURE.md
 * §7; [LeFevre06] quality metrics, [Ghinita07] §2.1 eq. 1-2).
 *
 * A small table with a partition built by hand, every figure worked out on
 * paper: DM = sum |E|^2 + |T| per suppressed row, C_AVG = (published rows /
 * classes) / k, numeric NCP = range / table range, categorical NCP = 0 for one
 * leaf else leaves under the covering node / all leaves, GCP = sum |G| sum_i
 * w_i NCP_i / (sum w * |T|), suppressed rows at NCP 1. The NCP of published
 * texts, with every kind of text that must be rejected. And a property test:
 * on random tables the report of anonkit_anonymize (metrics from the
 * partitioning) and anonkit_metrics (metrics from the published text) must
 * agree, two independent paths to the same numbers. */
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

#include "anonkit/anonkit.h"
#include "core/partition.h"
#include "core/table.h"
#include "metrics/metrics.h"
#include "testutil.h"


#define EPS 1e-12

static void assert_near(double got, double want, const char *what)
{
    if (!(fabs(got - want) <= EPS * (fabs(want) > 1 ? fabs(want) : 1)))
        fail_msg("%s: got %.17g, want %.17g", what, got, want);
}

/* ---- the hand example ----------------------------------------------------------
 *
 * edu hierarchy (file order HS, BSc, MSc, PhD, Prim): root * with children
 * School (first seen) and Uni; School: HS, Prim; Uni: BSc, MSc, PhD. Leaf codes
 * in depth-first order: HS 0, Prim 1, BSc 2, MSc 3, PhD 4 (5 leaves), so
 * NCP(School) = 2/5, NCP(Uni) = 3/5, NCP(*) = 1, NCP(leaf) = 0.
 * age: distinct 20 25 30 35 40 45 50 60 70 -> codes 0..8, range 50.
 * zip: distinct 100 150 200 250 300 400 -> codes 0..5, range 300. */
static const char HAND_HIER[] = "HS;School;*\nBSc;Uni;*\nMSc;Uni;*\nPhD;Uni;*\nPrim;School;*\n";
static const char HAND_CSV[] =
    "id,age,zip,edu,s\n"
    "0,20,100,HS,a\n"
    "1,25,100,Prim,b\n"
    "2,30,150,HS,a\n"
    "3,35,200,BSc,c\n"
    "4,40,200,MSc,a\n"
    "5,45,250,PhD,b\n"
    "6,50,300,BSc,c\n"
    "7,70,300,MSc,a\n"
    "8,60,400,PhD,b\n"
    "9,20,400,HS,c\n"
    "10,35,150,Prim,a\n";
#define HAND_ROWS 11
static const uint32_t hand_codes[HAND_ROWS][3] = {
    {0, 0, 0}, {1, 0, 1}, {2, 1, 0}, {3, 2, 2}, {4, 2, 3}, {5, 3, 4},
    {6, 4, 2}, {8, 4, 3}, {7, 5, 4}, {0, 5, 0}, {3, 1, 1},
};

static char hand_csv_path[4200], hand_hier_path[4200];

static table *load_hand(void)
{
    snprintf(hand_csv_path, sizeof hand_csv_path, "%s/hand.csv", tu_group_dir);
    snprintf(hand_hier_path, sizeof hand_hier_path, "%s/edu.csv", tu_group_dir);
    tu_write_file(hand_csv_path, HAND_CSV);
    tu_write_file(hand_hier_path, HAND_HIER);
    const char *names[] = {"age", "zip", "edu"};
    const char *hiers[] = {NULL, NULL, hand_hier_path};
    table_spec spec = {0};
    spec.path = hand_csv_path;
    spec.delimiter = ',';
    spec.nqi = 3;
    spec.qi_names = names;
    spec.hierarchy_paths = hiers;
    spec.sensitive_name = "s";
    table *t = NULL;
    ak_error err;
    ak_err_clear(&err);
    if (table_load(&t, &spec, &err) != ANONKIT_OK) fail_msg("table_load: %s", err.message);
    /* the codes derived by hand above */
    assert_int_equal(t->nrows, HAND_ROWS);
    assert_int_equal(t->qi[0].kind, ATTR_NUMERIC);
    assert_int_equal(t->qi[2].kind, ATTR_CATEGORICAL);
    for (size_t r = 0; r < HAND_ROWS; r++)
        for (uint32_t q = 0; q < 3; q++) assert_int_equal(t->qi[q].codes[r], hand_codes[r][q]);
    return t;
}

/* Adds a class of the given rows with its box taken as given by hand, after
 * checking that the box is the rows' extent. */
static void add_class(partition *p, const table *t, const size_t *rows, size_t n, const uint32_t *lo,
                      const uint32_t *hi)
{
    for (uint32_t q = 0; q < 3; q++) {
        uint32_t a = UINT32_MAX, b = 0;
        for (size_t i = 0; i < n; i++) {
            uint32_t v = t->qi[q].codes[rows[i]];
            if (v < a) a = v;
            if (v > b) b = v;
        }
        assert_int_equal(a, lo[q]);
        assert_int_equal(b, hi[q]);
    }
    uint32_t id;
    ak_error err;
    assert_int_equal(partition_add_class(p, lo, hi, n, &id, &err), ANONKIT_OK);
    assert_int_equal(id, p->nclasses - 1);
    for (size_t i = 0; i < n; i++) p->class_of[rows[i]] = id;
}

/* Classes A {0,1,2}, B {3,4,5}, C {6,7}, D {8}; rows 9 and 10 suppressed, or a
 * fifth class E {9,10} when with_e. */
static void hand_partition(partition *p, const table *t, int with_e)
{
    ak_error err;
    assert_int_equal(partition_init(p, t->nrows, t->nqi, &err), ANONKIT_OK);
    static const size_t ra[] = {0, 1, 2}, rb[] = {3, 4, 5}, rc[] = {6, 7}, rd[] = {8}, re[] = {9, 10};
    add_class(p, t, ra, 3, (const uint32_t[]){0, 0, 0}, (const uint32_t[]){2, 1, 1});
    add_class(p, t, rb, 3, (const uint32_t[]){3, 2, 2}, (const uint32_t[]){5, 3, 4});
    add_class(p, t, rc, 2, (const uint32_t[]){6, 4, 2}, (const uint32_t[]){8, 4, 3});
    add_class(p, t, rd, 1, (const uint32_t[]){7, 5, 4}, (const uint32_t[]){7, 5, 4});
    if (with_e) {
        add_class(p, t, re, 2, (const uint32_t[]){0, 1, 0}, (const uint32_t[]){3, 5, 1});
    } else {
        p->class_of[9] = p->class_of[10] = PARTITION_SUPPRESSED;
        p->suppressed = 2;
    }
}

static void test_ncp_of_codes(void **state)
{
    (void)state;
    table *t = load_hand();
    assert_near(table_ncp(t, 0, 0, 8), 1.0, "age 20-70");
    assert_near(table_ncp(t, 0, 1, 5), 20.0 / 50, "age 25-45");
    assert_near(table_ncp(t, 0, 7, 8), 10.0 / 50, "age 60-70");
    assert_near(table_ncp(t, 0, 4, 4), 0, "age 40");
    assert_near(table_ncp(t, 1, 0, 5), 1.0, "zip 100-400");
    assert_near(table_ncp(t, 1, 1, 4), 150.0 / 300, "zip 150-300");
    assert_near(table_ncp(t, 2, 0, 4), 1.0, "edu *");
    assert_near(table_ncp(t, 2, 0, 1), 0.4, "edu School");
    assert_near(table_ncp(t, 2, 2, 3), 0.6, "edu BSc..MSc = Uni");
    assert_near(table_ncp(t, 2, 3, 4), 0.6, "edu MSc..PhD = Uni");
    assert_near(table_ncp(t, 2, 1, 2), 1.0, "edu Prim..BSc = *");
    assert_near(table_ncp(t, 2, 3, 3), 0, "edu MSc");
    table_free(t);
}

static void test_hand_with_suppression(void **state)
{
    (void)state;
    table *t = load_hand();
    partition p;
    hand_partition(&p, t, 0);
    metrics m;
    ak_error err;
    /* Class NCPs (age, zip, edu):
     *   A (3 rows): 10/50 = 0.2, 50/300 = 1/6, School 0.4
     *   B (3 rows): 10/50 = 0.2, 50/300 = 1/6, Uni 0.6
     *   C (2 rows): 20/50 = 0.4, 0,             Uni 0.6 (BSc, MSc)
     *   D (1 row):  0,           0,             0 (PhD)
     *   2 suppressed rows: 1, 1, 1 */
    assert_int_equal(metrics_from_partition(t, &p, 2, NULL, &m, &err), ANONKIT_OK);
    assert_int_equal(m.nqi, 3);
    assert_int_equal(m.rows, 11);
    assert_int_equal(m.published, 9);
    assert_int_equal(m.suppressed, 2);
    assert_int_equal(m.classes, 4);
    assert_int_equal(m.min_class, 1);
    assert_int_equal(m.max_class, 3);
    assert_near(m.mean_class, 9.0 / 4, "mean class");
    assert_near(m.dm, 9 + 9 + 4 + 1 + 2 * 11, "DM");            /* 45 */
    assert_near(m.cavg, (9.0 / 4) / 2, "C_AVG");                 /* 1.125 */
    assert_near(m.ncp[0], (3 * 0.2 + 3 * 0.2 + 2 * 0.4 + 0 + 2) / 11, "NCP age"); /* 4/11 */
    assert_near(m.ncp[1], (3.0 / 6 + 3.0 / 6 + 0 + 0 + 2) / 11, "NCP zip");       /* 3/11 */
    assert_near(m.ncp[2], (3 * 0.4 + 3 * 0.6 + 2 * 0.6 + 0 + 2) / 11, "NCP edu"); /* 6.2/11 */
    assert_near(m.gcp, (4 + 3 + 6.2) / (3 * 11), "GCP");                          /* 0.4 */
    assert_near(m.gcp, 0.4, "GCP");
    metrics_free(&m);

    /* C_AVG with other k */
    assert_int_equal(metrics_from_partition(t, &p, 3, NULL, &m, &err), ANONKIT_OK);
    assert_near(m.cavg, 0.75, "C_AVG k=3");
    metrics_free(&m);

    /* custom weights: age 2, zip 0, edu 1 */
    const double w1[] = {2, 0, 1};
    assert_int_equal(metrics_from_partition(t, &p, 2, w1, &m, &err), ANONKIT_OK);
    assert_near(m.gcp, (2 * 4 + 0 * 3 + 1 * 6.2) / (3 * 11), "GCP w=2,0,1");
    assert_near(m.ncp[0], 4.0 / 11, "NCP age is unweighted");
    assert_near(m.dm, 45, "DM does not depend on weights");
    metrics_free(&m);
    const double w2[] = {1, 2, 3};
    assert_int_equal(metrics_from_partition(t, &p, 2, w2, &m, &err), ANONKIT_OK);
    assert_near(m.gcp, (1 * 4 + 2 * 3 + 3 * 6.2) / (6 * 11), "GCP w=1,2,3");
    metrics_free(&m);
    /* equal weights other than 1 give the unweighted GCP */
    const double w3[] = {5, 5, 5};
    assert_int_equal(metrics_from_partition(t, &p, 2, w3, &m, &err), ANONKIT_OK);
    assert_near(m.gcp, 0.4, "GCP w=5,5,5");
    metrics_free(&m);

    partition_free(&p);
    table_free(t);
}

static void test_hand_without_suppression(void **state)
{
    (void)state;
    table *t = load_hand();
    partition p;
    hand_partition(&p, t, 1);
    metrics m;
    ak_error err;
    /* E (rows 9, 10: age 20, 35; zip 400, 150; HS, Prim): 15/50 = 0.3, 250/300, School 0.4 */
    assert_int_equal(metrics_from_partition(t, &p, 2, NULL, &m, &err), ANONKIT_OK);
    assert_int_equal(m.rows, 11);
    assert_int_equal(m.published, 11);
    assert_int_equal(m.suppressed, 0);
    assert_int_equal(m.classes, 5);
    assert_int_equal(m.min_class, 1);
    assert_int_equal(m.max_class, 3);
    assert_near(m.dm, 9 + 9 + 4 + 1 + 4, "DM");
    assert_near(m.cavg, (11.0 / 5) / 2, "C_AVG");
    double age = (0.6 + 0.6 + 0.8 + 0 + 2 * 0.3) / 11;
    double zip = (0.5 + 0.5 + 0 + 0 + 2 * 250.0 / 300) / 11;
    double edu = (1.2 + 1.8 + 1.2 + 0 + 2 * 0.4) / 11;
    assert_near(m.ncp[0], age, "NCP age");
    assert_near(m.ncp[1], zip, "NCP zip");
    assert_near(m.ncp[2], edu, "NCP edu");
    assert_near(m.gcp, (age + zip + edu) / 3, "GCP");
    metrics_free(&m);
    partition_free(&p);
    table_free(t);
}

/* Every row suppressed: no class at all. */
static void test_all_suppressed(void **state)
{
    (void)state;
    table *t = load_hand();
    partition p;
    ak_error err;
    assert_int_equal(partition_init(&p, t->nrows, t->nqi, &err), ANONKIT_OK);
    for (size_t r = 0; r < t->nrows; r++) p.class_of[r] = PARTITION_SUPPRESSED;
    p.suppressed = t->nrows;
    metrics m;
    assert_int_equal(metrics_from_partition(t, &p, 4, NULL, &m, &err), ANONKIT_OK);
    assert_int_equal(m.classes, 0);
    assert_int_equal(m.published, 0);
    assert_int_equal(m.suppressed, 11);
    assert_int_equal(m.min_class, 0);
    assert_int_equal(m.max_class, 0);
    assert_near(m.dm, 11 * 11, "DM");
    assert_near(m.cavg, 0, "C_AVG");
    assert_near(m.gcp, 1, "GCP");
    for (uint32_t q = 0; q < 3; q++) assert_near(m.ncp[q], 1, "NCP");
    metrics_free(&m);
    partition_free(&p);
    table_free(t);
}

/* The accumulator on its own: classes and suppressed rows in any order. */
static void test_accumulator(void **state)
{
    (void)state;
    metrics m;
    ak_error err;
    const double w[] = {1, 3};
    assert_int_equal(metrics_init(&m, 2, w, &err), ANONKIT_OK);
    metrics_add_suppressed(&m, 1);
    metrics_add_class(&m, 4, (const double[]){0.5, 0});
    metrics_add_class(&m, 2, (const double[]){0, 0.25});
    metrics_add_suppressed(&m, 1);
    metrics_finish(&m, 2);
    /* rows 8: DM 16 + 4 + 2 * 8 = 36; C_AVG (6/2)/2 = 1.5 */
    assert_int_equal(m.rows, 8);
    assert_near(m.dm, 36, "DM");
    assert_near(m.cavg, 1.5, "C_AVG");
    assert_near(m.ncp[0], (4 * 0.5 + 2) / 8.0, "NCP 0");
    assert_near(m.ncp[1], (2 * 0.25 + 2) / 8.0, "NCP 1");
    /* GCP: (4 * (0.5) + 2 * (3 * 0.25) + 2 * (1 + 3)) / (4 * 8) = (2 + 1.5 + 8) / 32 */
    assert_near(m.gcp, 11.5 / 32, "GCP");
    metrics_free(&m);
    metrics_free(&m); /* twice is harmless */
    metrics_free(NULL);
}

/* ---- NCP of published texts ------------------------------------------------------ */

static void expect_ncp(const table *t, uint32_t q, const char *text, double want)
{
    double got = -42;
    if (metrics_ncp_of_published(t, q, text, strlen(text), &got) != 0)
        fail_msg("'%s' (QI %u) rejected", text, q);
    assert_near(got, want, text);
}

static void expect_rejected(const table *t, uint32_t q, const char *text)
{
    double got = -42;
    if (metrics_ncp_of_published(t, q, text, strlen(text), &got) != -1)
        fail_msg("'%s' (QI %u) accepted with NCP %g", text, q, got);
}

static void test_ncp_of_published(void **state)
{
    (void)state;
    table *t = load_hand();
    /* numeric age, range 20..70 */
    expect_ncp(t, 0, "*", 1);
    expect_ncp(t, 0, "20-70", 1);
    expect_ncp(t, 0, "25-45", 0.4);
    expect_ncp(t, 0, "20-30", 0.2);
    expect_ncp(t, 0, "25.0-45", 0.4); /* another spelling of the same numbers */
    expect_ncp(t, 0, "30", 0);
    expect_ncp(t, 0, "20", 0);
    expect_ncp(t, 0, "70", 0);
    expect_ncp(t, 0, "45-45", 0);
    const char *bad_age[] = {"19", "71", "15-30", "30-75", "19-71", "30-20", "abc", "", "20-", "-", "-20",
                             "20-30-40", "nan", "inf", "20--30", " 20", "20 ", "**", "School"};
    for (size_t i = 0; i < sizeof bad_age / sizeof bad_age[0]; i++) expect_rejected(t, 0, bad_age[i]);
    /* numeric zip, range 100..400 */
    expect_ncp(t, 1, "150-300", 0.5);
    expect_ncp(t, 1, "100-400", 1);
    expect_rejected(t, 1, "99");
    /* categorical edu, 5 leaves */
    expect_ncp(t, 2, "*", 1);
    expect_ncp(t, 2, "School", 0.4);
    expect_ncp(t, 2, "Uni", 0.6);
    expect_ncp(t, 2, "HS", 0);
    expect_ncp(t, 2, "PhD", 0);
    const char *bad_edu[] = {"Bogus", "school", "", "20-30", "Uni ", "HS,Prim"};
    for (size_t i = 0; i < sizeof bad_edu / sizeof bad_edu[0]; i++) expect_rejected(t, 2, bad_edu[i]);
    /* the text is taken by length, not up to a NUL */
    double got;
    assert_int_equal(metrics_ncp_of_published(t, 2, "Unicorn", 3, &got), 0);
    assert_near(got, 0.6, "'Uni' out of 'Unicorn'");
    assert_int_equal(metrics_ncp_of_published(t, 0, "25-45-99", 5, &got), 0);
    assert_near(got, 0.4, "'25-45' out of '25-45-99'");
    table_free(t);
}

static void test_ncp_of_published_signs(void **state)
{
    (void)state;
    const char *csv = tu_path(tu_group_dir, "signs.csv"), *h = tu_path(tu_group_dir, "chain.csv");
    /* n: -5 -3 0 5 (range 10); d: 1.5 2.25 3 (range 1.5); one: always 7;
     * c: X has the single leaf x, Y covers y and z */
    tu_write_file(csv, "n,d,one,c\n-3,2.25,7,y\n5,1.5,7,x\n-5,3,7,z\n0,3,7,x\n");
    tu_write_file(h, "x;X;*\ny;Y;*\nz;Y;*\n");
    const char *names[] = {"n", "d", "one", "c"};
    const char *hiers[] = {NULL, NULL, NULL, h};
    table_spec spec = {0};
    spec.path = csv;
    spec.delimiter = ',';
    spec.nqi = 4;
    spec.qi_names = names;
    spec.hierarchy_paths = hiers;
    table *t;
    ak_error err;
    assert_int_equal(table_load(&t, &spec, &err), ANONKIT_OK);
    expect_ncp(t, 0, "-5--3", 0.2);
    expect_ncp(t, 0, "-5-5", 1);
    expect_ncp(t, 0, "-3-0", 0.3);
    expect_ncp(t, 0, "0-5", 0.5);
    expect_ncp(t, 0, "-5", 0);
    expect_ncp(t, 0, "5", 0);
    expect_ncp(t, 0, "-5.0--3.0", 0.2);
    expect_ncp(t, 0, "*", 1);
    const char *bad_n[] = {"-6", "6", "-6--3", "-3--5", "0-6", "-5--6", "--5", "-5-", "5-"};
    for (size_t i = 0; i < sizeof bad_n / sizeof bad_n[0]; i++) expect_rejected(t, 0, bad_n[i]);
    expect_ncp(t, 1, "1.5-2.25", 0.5);
    expect_ncp(t, 1, "2.25-3", 0.5);
    expect_ncp(t, 1, "1.5-3", 1);
    expect_ncp(t, 1, "2.25", 0);
    expect_rejected(t, 1, "1.4-3");
    expect_rejected(t, 1, "1.5-3.01");
    /* a single value: no range to generalize over */
    expect_ncp(t, 2, "7", 0);
    expect_ncp(t, 2, "7-7", 0);
    expect_ncp(t, 2, "*", 1);
    expect_rejected(t, 2, "8");
    expect_rejected(t, 2, "6-7");
    assert_near(table_ncp(t, 2, 0, 0), 0, "single value, codes");
    /* a node over a single leaf has NCP 0, like the leaf */
    expect_ncp(t, 3, "X", 0);
    expect_ncp(t, 3, "x", 0);
    expect_ncp(t, 3, "Y", 2.0 / 3);
    expect_ncp(t, 3, "*", 1);
    assert_near(table_ncp(t, 3, 1, 2), 2.0 / 3, "codes y..z");
    assert_near(table_ncp(t, 3, 0, 1), 1, "codes x..y");
    table_free(t);
}

/* ---- anonkit_metrics on hand-written published files --------------------------- */

static json_t *parse_json(const char *text, const char *what)
{
    json_error_t jerr;
    json_t *j = json_loads(text, 0, &jerr);
    if (!j) fail_msg("%s is not JSON (%s, line %d): %s", what, jerr.text, jerr.line, text);
    return j;
}

static double num(const json_t *obj, const char *key)
{
    const json_t *v = json_object_get(obj, key);
    if (!json_is_number(v)) fail_msg("no number '%s'", key);
    return json_number_value(v);
}

static anonkit_job *hand_job(const char *weights)
{
    anonkit_job *job = anonkit_job_create();
    char h[4300];
    snprintf(h, sizeof h, "edu=%s", hand_hier_path);
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_QI, "age,zip,edu"), ANONKIT_OK);
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_HIERARCHY, h), ANONKIT_OK);
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_K, "2"), ANONKIT_OK);
    if (weights) assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_WEIGHTS, weights), ANONKIT_OK);
    return job;
}

/* The hand example's classes A-D published, rows 9 and 10 left out (suppressed
 * and dropped): anonkit_metrics must find the figures worked out above. */
static void test_metrics_of_published_by_hand(void **state)
{
    (void)state;
    table *t = load_hand(); /* writes the files */
    table_free(t);
    const char *pub = tu_path(tu_group_dir, "hand_pub.csv");
    tu_write_file(pub, "age,zip,edu,s\n"
                       "35-45,200-250,Uni,b\n"
                       "20-30,100-150,School,a\n"
                       "50-70,300,Uni,c\n"
                       "20-30,100-150,School,b\n"
                       "35-45,200-250,Uni,c\n"
                       "60,400,PhD,b\n"
                       "20-30,100-150,School,a\n"
                       "50-70,300,Uni,a\n"
                       "35-45,200-250,Uni,a\n");
    anonkit_job *job = hand_job(NULL);
    /* two of the original's rows are missing: counted as suppressed rows
     * only under a suppression limit (without one they are an error) */
    assert_int_equal(anonkit_metrics(job, hand_csv_path, pub, NULL), ANONKIT_E_INPUT);
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_SUPPRESSION, "0.5"), ANONKIT_OK);
    anonkit_result *measured = NULL;
    if (anonkit_metrics(job, hand_csv_path, pub, &measured) != ANONKIT_OK) fail_msg("%s", anonkit_errmsg(job));
    json_t *j = parse_json(anonkit_result_json(measured), "metrics");
    /* the result's counts are the JSON's */
    assert_int_equal(anonkit_result_rows_read(measured), 11);
    assert_int_equal(anonkit_result_rows_published(measured), 9);
    assert_int_equal(anonkit_result_rows_suppressed(measured), 2);
    assert_int_equal(anonkit_result_classes(measured), 4);
    assert_null(anonkit_result_summary(measured));
    assert_near(num(j, "rows"), 11, "rows");
    assert_near(num(j, "rows_published"), 9, "rows_published");
    assert_near(num(j, "rows_suppressed"), 2, "rows_suppressed");
    assert_near(num(j, "classes"), 4, "classes");
    assert_near(num(j, "min_class_size"), 1, "min");
    assert_near(num(j, "max_class_size"), 3, "max");
    assert_near(num(j, "dm"), 45, "DM");
    assert_near(num(j, "cavg"), 1.125, "C_AVG");
    assert_near(num(j, "gcp"), 0.4, "GCP");
    const json_t *ncp = json_object_get(j, "ncp");
    assert_int_equal(json_object_size(ncp), 3);
    /* the JSON is printed with 10 significant digits */
    assert_true(fabs(num(ncp, "age") - 4.0 / 11) < 1e-9);
    assert_true(fabs(num(ncp, "zip") - 3.0 / 11) < 1e-9);
    assert_true(fabs(num(ncp, "edu") - 6.2 / 11) < 1e-9);
    json_decref(j);
    anonkit_result_free(measured);
    anonkit_job_free(job);

    /* weights age=2,zip=0,edu=1 */
    job = hand_job("age=2,zip=0,edu=1");
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_SUPPRESSION, "0.5"), ANONKIT_OK);
    assert_int_equal(anonkit_metrics(job, hand_csv_path, pub, &measured), ANONKIT_OK);
    j = parse_json(anonkit_result_json(measured), "metrics");
    assert_true(fabs(num(j, "gcp") - 14.2 / 33) < 1e-9);
    json_decref(j);
    anonkit_result_free(measured);
    anonkit_job_free(job);

    /* texts that are no published value of their attribute are rejected
     * (one row of the original's eleven: the rest count as suppressed) */
    job = hand_job(NULL);
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_SUPPRESSION, "1"), ANONKIT_OK);
    const char *bad[] = {"age,zip,edu\n19-30,100,HS\n", "age,zip,edu\n20,100,Bogus\n", "age,zip,edu\n20,1000,HS\n",
                         "age,zip,edu\nx,100,HS\n"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        tu_write_file(pub, bad[i]);
        measured = (anonkit_result *)&measured; /* set to NULL on failure */
        assert_int_equal(anonkit_metrics(job, hand_csv_path, pub, &measured), ANONKIT_E_INPUT);
        assert_null(measured);
        assert_non_null(strstr(anonkit_errmsg(job), "not a published value"));
    }
    anonkit_job_free(job);
}

/* ---- cross-check: report (from the partitioning) vs anonkit_metrics (from the text) */

#define MAX_QI 4
#define MAX_ROWS 300

/* A random hierarchy with leaves "lQ_I" and inner labels unique per QI and
 * level; returns the leaf count. Rows in shuffled order. */
static int write_hierarchy(tu_rng *rng, const char *path, int qi)
{
    int height = 1 + (int)tu_below(rng, 3);
    int nleaves = 1 + (int)tu_below(rng, 12);
    int fan[4] = {1, 1 + (int)tu_below(rng, 3), 1 + (int)tu_below(rng, 3), 1 + (int)tu_below(rng, 3)};
    int perm[16];
    for (int i = 0; i < nleaves; i++) perm[i] = i;
    for (int i = nleaves - 1; i > 0; i--) {
        int j = (int)tu_below(rng, (uint64_t)i + 1), x = perm[i];
        perm[i] = perm[j];
        perm[j] = x;
    }
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    for (int r = 0; r < nleaves; r++) {
        int group = perm[r];
        fprintf(f, "l%d_%d", qi, perm[r]);
        for (int level = 1; level < height; level++) {
            group /= fan[level] + 1;
            fprintf(f, ";G%d.%d.%d", qi, level, group);
        }
        fprintf(f, ";*\n");
    }
    fclose(f);
    return nleaves;
}

typedef struct gen {
    int nrows, nqi, nsensitive;
    int categorical[MAX_QI], domain[MAX_QI], style[MAX_QI];
    char hier[MAX_QI][4300];
    char csv[4300], out[4300], report[4300];
} gen;

/* The text of numeric value v of QI q in one of three styles: integers around
 * zero, negative decimals, and the same decimals in two spellings. */
static void numeric_text(tu_rng *rng, const gen *g, int q, int v, char *buf, size_t size)
{
    switch (g->style[q]) {
    case 0: snprintf(buf, size, "%d", v * 3 - 20); break;
    case 1: snprintf(buf, size, "%g", v * 0.25 - 4.5); break;
    default:
        if (tu_below(rng, 2)) snprintf(buf, size, "%.2f", v * 1.5 - 7);
        else snprintf(buf, size, "%g", v * 1.5 - 7);
        break;
    }
}

static void generate(tu_rng *rng, const char *d, gen *g)
{
    memset(g, 0, sizeof *g);
    g->nrows = 1 + (int)tu_below(rng, tu_below(rng, 3) ? 150 : MAX_ROWS);
    g->nqi = 1 + (int)tu_below(rng, MAX_QI);
    g->nsensitive = 1 + (int)tu_below(rng, 6);
    for (int q = 0; q < g->nqi; q++) {
        g->categorical[q] = tu_below(rng, 2) == 0;
        if (g->categorical[q]) {
            char name[32];
            snprintf(name, sizeof name, "h%d.csv", q);
            snprintf(g->hier[q], sizeof g->hier[q], "%s", tu_path(d, name));
            g->domain[q] = write_hierarchy(rng, g->hier[q], q);
        } else {
            g->domain[q] = 1 + (int)tu_below(rng, tu_below(rng, 2) ? 5 : 40);
            g->style[q] = (int)tu_below(rng, 3);
        }
    }
    snprintf(g->csv, sizeof g->csv, "%s", tu_path(d, "in.csv"));
    snprintf(g->out, sizeof g->out, "%s", tu_path(d, "out.csv"));
    snprintf(g->report, sizeof g->report, "%s", tu_path(d, "report.json"));
    FILE *f = fopen(g->csv, "w");
    assert_non_null(f);
    fprintf(f, "id");
    for (int q = 0; q < g->nqi; q++) fprintf(f, ",a%d", q);
    fprintf(f, ",s\n");
    for (int r = 0; r < g->nrows; r++) {
        fprintf(f, "%d", r);
        for (int q = 0; q < g->nqi; q++) {
            int v = (int)tu_below(rng, (uint64_t)g->domain[q]);
            if (tu_below(rng, 3) == 0) v = (int)tu_below(rng, (uint64_t)(g->domain[q] + 1) / 2); /* duplicates */
            if (g->categorical[q]) {
                fprintf(f, ",l%d_%d", q, v);
            } else {
                char text[64];
                numeric_text(rng, g, q, v, text, sizeof text);
                fprintf(f, ",%s", text);
            }
        }
        fprintf(f, ",s%d\n", tu_below(rng, 2) ? 0 : (int)tu_below(rng, (uint64_t)g->nsensitive));
    }
    fclose(f);
}

/* A job for g with random k, sometimes distinct l-diversity, sometimes weights. */
static anonkit_job *random_job(tu_rng *rng, const gen *g, int *weighted /* OUT */)
{
    anonkit_job *job = anonkit_job_create();
    char qi[128] = "", text[4400];
    size_t used = 0;
    for (int q = 0; q < g->nqi; q++) {
        used += (size_t)snprintf(qi + used, sizeof qi - used, "%sa%d", q ? "," : "", q);
        if (g->categorical[q]) {
            snprintf(text, sizeof text, "a%d=%s", q, g->hier[q]);
            assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_HIERARCHY, text), ANONKIT_OK);
        }
    }
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_QI, qi), ANONKIT_OK);
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_IDENTIFIER, "id"), ANONKIT_OK);
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_SENSITIVE, "s"), ANONKIT_OK);
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_INPUT, g->csv), ANONKIT_OK);
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_OUTPUT, g->out), ANONKIT_OK);
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_REPORT, g->report), ANONKIT_OK);
    uint64_t k = 1 + tu_below(rng, tu_below(rng, 4) ? 8 : (uint64_t)g->nrows);
    if (k > (uint64_t)g->nrows) k = (uint64_t)g->nrows;
    snprintf(text, sizeof text, "%llu", (unsigned long long)k);
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_K, text), ANONKIT_OK);
    if (tu_below(rng, 3) == 0) {
        assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_L, "2"), ANONKIT_OK);
        assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_L_VARIANT, "distinct"), ANONKIT_OK);
    }
    if (tu_below(rng, 2) == 0) {
        char w[256];
        size_t wu = 0;
        for (int q = 0; q < g->nqi; q++)
            if (tu_below(rng, 3))
                wu += (size_t)snprintf(w + wu, sizeof w - wu, "%sa%d=%g", wu ? "," : "", q,
                                       (double)tu_below(rng, 9) / 2);
        if (wu) assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_WEIGHTS, w), ANONKIT_OK);
        *weighted = wu > 0;
    }
    snprintf(text, sizeof text, "%d", 1 + (int)tu_below(rng, 3));
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_THREADS, text), ANONKIT_OK);
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_SEED, "12345"), ANONKIT_OK);
    if (tu_below(rng, 2)) assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_KEEP_ORDER, "1"), ANONKIT_OK);
    return job;
}

static void agree(double report, double published, int iter, const char *what)
{
    double scale = fabs(report) > 1 ? fabs(report) : 1;
    if (!(fabs(report - published) <= 1e-9 * scale))
        fail_msg("iteration %d: %s from the partitioning %.17g, from the published file %.17g", iter, what, report,
                 published);
}

static void test_report_agrees_with_published(void **state)
{
    (void)state;
    tu_rng rng = {424242};
    int runs = 0, with_l = 0, ineligible = 0, weighted = 0, categorical = 0;
    double classes = 0;
    for (int iter = 0; runs < 50; iter++) {
        if (iter > 200) fail_msg("too many ineligible tables (%d)", ineligible);
        char d[4096];
        snprintf(d, sizeof d, "%s", tu_mkdtemp());
        gen g;
        generate(&rng, d, &g);
        int with_weights = 0;
        anonkit_job *job = random_job(&rng, &g, &with_weights);
        anonkit_result *res = NULL;
        int rc = anonkit_anonymize(job, &res);
        if (rc == ANONKIT_E_INELIGIBLE) { /* l = 2 on a table with one sensitive value */
            ineligible++;
            anonkit_job_free(job);
            tu_rmtree(d);
            continue;
        }
        if (rc != ANONKIT_OK) fail_msg("iteration %d: %s", iter, anonkit_errmsg(job));
        /* the report file holds the result's JSON */
        char *file = tu_read_file(g.report, NULL);
        assert_non_null(file);
        const char *json = anonkit_result_json(res);
        assert_int_equal(strlen(file), strlen(json) + 1);
        assert_memory_equal(file, json, strlen(json));
        json_t *report = parse_json(file, "report");
        free(file);
        anonkit_result *measured = NULL;
        rc = anonkit_metrics(job, g.csv, g.out, &measured);
        if (rc != ANONKIT_OK) fail_msg("iteration %d: anonkit_metrics: %s", iter, anonkit_errmsg(job));
        json_t *mj = parse_json(anonkit_result_json(measured), "metrics");

        const json_t *rm = json_object_get(report, "metrics");
        assert_non_null(rm);
        agree(num(rm, "dm"), num(mj, "dm"), iter, "DM");
        agree(num(rm, "cavg"), num(mj, "cavg"), iter, "C_AVG");
        agree(num(rm, "gcp"), num(mj, "gcp"), iter, "GCP");
        const json_t *rn = json_object_get(rm, "ncp"), *pn = json_object_get(mj, "ncp");
        assert_int_equal(json_object_size(rn), (size_t)g.nqi);
        assert_int_equal(json_object_size(pn), (size_t)g.nqi);
        for (int q = 0; q < g.nqi; q++) {
            char name[16], what[64];
            snprintf(name, sizeof name, "a%d", q);
            snprintf(what, sizeof what, "NCP of %s", name);
            double a = num(rn, name), b = num(pn, name);
            agree(a, b, iter, what);
            assert_true(a >= 0 && a <= 1 + 1e-12);
        }
        /* the counts agree too: Mondrian's classes are told apart by their published texts */
        const char *counts[] = {"rows_published", "rows_suppressed", "classes", "min_class_size", "max_class_size"};
        for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) agree(num(report, counts[i]), num(mj, counts[i]), iter, counts[i]);
        assert_int_equal((uint64_t)num(report, "rows_read"), (uint64_t)g.nrows);
        assert_int_equal((uint64_t)num(mj, "rows"), (uint64_t)g.nrows);
        assert_int_equal(anonkit_result_classes(res), (uint64_t)num(mj, "classes"));
        /* sanity from the definitions: every class has at least k rows, so
         * DM = sum |E|^2 >= k * rows and C_AVG >= 1; GCP is a weighted mean of NCPs */
        const json_t *params = json_object_get(report, "parameters");
        double k = num(params, "k"), dm = num(rm, "dm"), cavg = num(rm, "cavg"), gcp = num(rm, "gcp");
        assert_true(dm >= k * g.nrows - 1e-9);
        assert_true(dm <= (double)g.nrows * g.nrows + 1e-9);
        assert_true(cavg >= 1 - 1e-12);
        assert_true(gcp >= 0 && gcp <= 1 + 1e-12);
        with_l += json_object_get(params, "l") != NULL;
        weighted += with_weights;
        classes += num(mj, "classes");
        for (int q = 0; q < g.nqi; q++) categorical += g.categorical[q];

        json_decref(report);
        json_decref(mj);
        anonkit_result_free(measured);
        anonkit_result_free(res);
        anonkit_job_free(job);
        tu_rmtree(d);
        runs++;
    }
    print_message("%d runs (%d with l, %d weighted, %d ineligible skipped), %.0f classes, %d categorical QIs\n", runs,
                  with_l, weighted, ineligible, classes, categorical);
    assert_true(with_l >= 5);
    assert_true(weighted >= 5);
}

/* H(C | G) by its definition: the distinct (group, label) counts found by
 * scanning, summed group by group and label by label in ascending order (the
 * order metrics_conditional_entropy promises, so the bits agree). */
static double entropy_by_definition(const uint32_t *group_of, size_t n, const uint32_t *label)
{
    uint32_t gmax = 0, lmax = 0;
    for (size_t i = 0; i < n; i++) {
        if (group_of[i] > gmax) gmax = group_of[i];
        if (label[i] > lmax) lmax = label[i];
    }
    unsigned char *present = calloc((size_t)gmax + 1, 1);
    assert_non_null(present);
    for (size_t i = 0; i < n; i++) present[group_of[i]] = 1;
    double sum = 0;
    for (uint32_t g = 0; g <= gmax; g++) {
        if (!present[g]) continue;
        uint64_t size = 0;
        for (uint32_t c = 0; c <= lmax; c++) {
            uint64_t m = 0;
            for (size_t i = 0; i < n; i++) m += group_of[i] == g && label[i] == c;
            if (m) sum -= (double)m * log2((double)m);
            size += m;
        }
        sum += (double)size * log2((double)size);
    }
    free(present);
    return sum / (double)n;
}

/* metrics_conditional_entropy counts few groups in a dense table and many
 * (sparse ids) by sorting: both give the definition's value bit for bit. */
static void test_conditional_entropy_paths(void **state)
{
    (void)state;
    tu_rng rng = {5};
    ak_error err;
    for (int iter = 0; iter < 300; iter++) {
        const size_t n = 1 + tu_below(&rng, 300);
        const uint32_t ngroups = 1 + (uint32_t)tu_below(&rng, iter % 3 == 0 ? 5000 : 20);
        const uint32_t nlabels = 1 + (uint32_t)tu_below(&rng, 40);
        uint32_t *g = malloc(n * sizeof *g), *c = malloc(n * sizeof *c);
        assert_true(g && c);
        for (size_t i = 0; i < n; i++) {
            g[i] = (uint32_t)tu_below(&rng, ngroups);
            c[i] = (uint32_t)tu_below(&rng, nlabels);
        }
        double h;
        assert_int_equal(metrics_conditional_entropy(g, n, c, &h, &err), ANONKIT_OK);
        const double want = entropy_by_definition(g, n, c);
        if (memcmp(&h, &want, sizeof h) != 0) fail_msg("iteration %d: %.17g, by definition %.17g", iter, h, want);
        free(g);
        free(c);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ncp_of_codes),
        cmocka_unit_test(test_hand_with_suppression),
        cmocka_unit_test(test_hand_without_suppression),
        cmocka_unit_test(test_all_suppressed),
        cmocka_unit_test(test_accumulator),
        cmocka_unit_test(test_ncp_of_published),
        cmocka_unit_test(test_ncp_of_published_signs),
        cmocka_unit_test(test_metrics_of_published_by_hand),
        cmocka_unit_test(test_report_agrees_with_published),
        cmocka_unit_test(test_conditional_entropy_paths),
    };
    return cmocka_run_group_tests(tests, tu_group_setup, tu_group_teardown);
}
