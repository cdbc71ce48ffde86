/* test_model.c — the privacy-model predicates (src/model/model.c, docs/ARCHITECTURE.md §5).
 *
 * Every expected verdict below is worked out by hand from the definitions:
 *   k-anonymity                count >= k;
 *   distinct l-diversity       at least l distinct sensitive values;
 *   entropy l-diversity        -sum p log p >= log(l);
 *   recursive (c,l)-diversity  x1 < c (x_l + ... + x_m), x_i the i-th largest
 *                              count ([LeFevre07] §1.1), fewer than l values fails;
 *   probabilistic l-diversity  every value has frequency <= 1/l ([Ghinita07] Def. 3).
 * Every verdict is asked of model_holds and model_explain, which must agree
 * (and explain why when they say no). Random histograms are checked against
 * reference predicates written here in exact integer arithmetic, and merged to
 * test docs/ARCHITECTURE.md §5's claim that every model is monotone. Variant names are
 * parsed and printed, and bad parameters rejected by model_validate. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"
#include "model/sampletest.h"
#include "testutil.h"

#define ALL_VARIANTS (MODEL_L_DISTINCT | MODEL_L_ENTROPY | MODEL_L_RECURSIVE | MODEL_L_PROBABILISTIC)
#define MAX_VALUES 16

static model make(uint64_t k, double l, unsigned variants, double c)
{
    model m;
    model_init(&m);
    m.k = k;
    m.l = l;
    m.l_variants = variants;
    m.c = c;
    return m;
}

static uint64_t sum_of(const uint32_t *counts, size_t n)
{
    uint64_t s = 0;
    for (size_t i = 0; i < n; i++) s += counts[i];
    return s;
}

/* The verdict of model_holds for a class of `count` rows with the given
 * non-zero counts, after checking that model_explain agrees, explains a
 * failure, says nothing on success, and that neither touches the counts. */
static int verdict_n(const model *m, uint64_t count, const uint32_t *counts, size_t n)
{
    uint32_t copy[MAX_VALUES], scratch[MAX_VALUES];
    assert_true(n <= MAX_VALUES);
    if (n) memcpy(copy, counts, n * sizeof *counts);
    int held = model_holds(m, count, copy, n, scratch);
    char why[512];
    memset(why, 'x', sizeof why);
    int explained = model_explain(m, count, copy, n, scratch, why, sizeof why);
    if (n) assert_memory_equal(copy, counts, n * sizeof *counts);
    assert_true(held == 0 || held == 1);
    if (explained != held) fail_msg("model_holds says %d, model_explain says %d (%s)", held, explained, why);
    assert_non_null(memchr(why, '\0', sizeof why));
    if (held) assert_string_equal(why, "");
    else if (why[0] == '\0') fail_msg("model_explain gave no reason for a failure");
    /* no buffer at all, and a tiny one: same verdict, no overflow (ASan) */
    assert_int_equal(model_explain(m, count, copy, n, scratch, NULL, 0), held);
    char tiny[4];
    assert_int_equal(model_explain(m, count, copy, n, scratch, tiny, sizeof tiny), held);
    assert_true(strlen(tiny) < sizeof tiny);
    return held;
}

/* Class whose row count is the sum of its counts. */
#define HOLDS(m, ...) verdict_n(&(m), sum_of((const uint32_t[]){__VA_ARGS__}, \
                                             sizeof((const uint32_t[]){__VA_ARGS__}) / sizeof(uint32_t)), \
                                (const uint32_t[]){__VA_ARGS__}, \
                                sizeof((const uint32_t[]){__VA_ARGS__}) / sizeof(uint32_t))

/* The reason model_explain gives. */
static const char *reason(const model *m, uint64_t count, const uint32_t *counts, size_t n)
{
    static char why[512];
    uint32_t scratch[MAX_VALUES];
    assert_int_equal(model_explain(m, count, counts, n, scratch, why, sizeof why), 0);
    return why;
}

static void assert_contains(const char *haystack, const char *needle)
{
    if (!strstr(haystack, needle)) fail_msg("\"%s\" does not contain \"%s\"", haystack, needle);
}

/* ---- k-anonymity ---------------------------------------------------------- */

static void test_k_anonymity(void **state)
{
    (void)state;
    model m = make(3, 0, MODEL_L_DISTINCT, 1);
    uint32_t one[] = {1}, scratch[1];
    assert_int_equal(verdict_n(&m, 2, one, 0), 0); /* 2 < 3 */
    assert_int_equal(verdict_n(&m, 3, one, 0), 1); /* 3 >= 3: the boundary passes */
    assert_int_equal(verdict_n(&m, 4, one, 0), 1);
    /* without l the sensitive counts do not matter: a single value is fine */
    assert_int_equal(HOLDS(m, 3), 1);
    assert_int_equal(HOLDS(m, 2), 0);
    assert_int_equal(HOLDS(m, 1, 1), 0);
    /* k = 1 is no constraint (for any non-empty class) */
    model none;
    model_init(&none);
    assert_int_equal(none.k, 1);
    assert_true(none.l == 0);
    assert_int_equal(model_needs_sensitive(&none), 0);
    assert_int_equal(HOLDS(none, 1), 1);
    assert_int_equal(verdict_n(&none, 1, one, 0), 1);
    /* large k */
    model big = make(UINT64_MAX, 0, MODEL_L_DISTINCT, 1);
    assert_int_equal(verdict_n(&big, UINT64_MAX - 1, one, 0), 0);
    assert_int_equal(verdict_n(&big, UINT64_MAX, one, 0), 1);
    model k1000 = make(1000, 0, 0, 1);
    assert_int_equal(model_holds(&k1000, 999, one, 1, scratch), 0);
    assert_int_equal(model_holds(&k1000, 1000, one, 1, scratch), 1);
    assert_contains(reason(&k1000, 999, one, 1), "999");
    assert_contains(reason(&k1000, 999, one, 1), "1000");
}

/* ---- distinct l-diversity --------------------------------------------------- */

static void test_distinct(void **state)
{
    (void)state;
    model m = make(1, 3, MODEL_L_DISTINCT, 1);
    assert_int_equal(model_needs_sensitive(&m), 1);
    assert_int_equal(HOLDS(m, 5, 1), 0);         /* 2 values < 3 */
    assert_int_equal(HOLDS(m, 1, 1, 1), 1);      /* exactly 3 */
    assert_int_equal(HOLDS(m, 10, 1, 1, 1), 1);  /* 4, however skewed */
    assert_int_equal(HOLDS(m, 100), 0);
    /* l = 2.5 needs 3 values: 2 >= 2.5 is false */
    model half = make(1, 2.5, MODEL_L_DISTINCT, 1);
    assert_int_equal(HOLDS(half, 1, 1), 0);
    assert_int_equal(HOLDS(half, 1, 1, 1), 1);
    /* l = 1: one value is enough */
    model one = make(1, 1, MODEL_L_DISTINCT, 1);
    assert_int_equal(HOLDS(one, 7), 1);
    uint32_t c[] = {5, 1};
    assert_contains(reason(&m, 6, c, 2), "2 distinct");
}

/* ---- entropy l-diversity ---------------------------------------------------- */

static void test_entropy(void **state)
{
    (void)state;
    model m2 = make(1, 2, MODEL_L_ENTROPY, 1);
    /* exactly l equally frequent values: entropy = log(l), the boundary passes */
    assert_int_equal(HOLDS(m2, 1, 1), 1);
    assert_int_equal(HOLDS(m2, 3, 3), 1);
    assert_int_equal(HOLDS(m2, 1000000, 1000000), 1);
    /* {2,1}: -(2/3 ln 2/3 + 1/3 ln 1/3) = 0.6365 < ln 2 = 0.6931 */
    assert_int_equal(HOLDS(m2, 2, 1), 0);
    assert_int_equal(HOLDS(m2, 1, 2), 0);
    /* {1000,999}: entropy is ln 2 - about 1.25e-7, still below */
    assert_int_equal(HOLDS(m2, 1000, 999), 0);
    /* a single value has entropy 0 */
    assert_int_equal(HOLDS(m2, 5), 0);
    /* {2,1,1}: 0.5 ln 2 + 2 * 0.25 ln 4 = 1.5 ln 2 = 1.0397 >= ln 2 */
    assert_int_equal(HOLDS(m2, 2, 1, 1), 1);
    model m3 = make(1, 3, MODEL_L_ENTROPY, 1);
    assert_int_equal(HOLDS(m3, 5, 5, 5), 1);      /* ln 3 exactly */
    assert_int_equal(HOLDS(m3, 2, 1, 1), 0);      /* 1.0397 < ln 3 = 1.0986 */
    assert_int_equal(HOLDS(m3, 1, 1, 1, 1), 1);   /* ln 4 */
    model m28 = make(1, 2.8, MODEL_L_ENTROPY, 1); /* ln 2.8 = 1.0296 < 1.0397 */
    assert_int_equal(HOLDS(m28, 2, 1, 1), 1);
    model m29 = make(1, 2.9, MODEL_L_ENTROPY, 1); /* ln 2.9 = 1.0647 > 1.0397 */
    assert_int_equal(HOLDS(m29, 2, 1, 1), 0);
    /* l = 7 and l = 10 with equal counts: boundaries pass */
    model m7 = make(1, 7, MODEL_L_ENTROPY, 1);
    assert_int_equal(HOLDS(m7, 3, 3, 3, 3, 3, 3, 3), 1);
    assert_int_equal(HOLDS(m7, 1, 1, 1, 1, 1, 1), 0); /* 6 values: ln 6 < ln 7 */
    model m10 = make(1, 10, MODEL_L_ENTROPY, 1);
    assert_int_equal(HOLDS(m10, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7), 1);
    assert_int_equal(HOLDS(m10, 8, 7, 7, 7, 7, 7, 7, 7, 7, 7), 0);
    /* l = 1: log 1 = 0, anything passes; l = 1.5: ln 1.5 = 0.405 < 0.6365 */
    model m1 = make(1, 1, MODEL_L_ENTROPY, 1);
    assert_int_equal(HOLDS(m1, 9), 1);
    model m15 = make(1, 1.5, MODEL_L_ENTROPY, 1);
    assert_int_equal(HOLDS(m15, 2, 1), 1);
    assert_int_equal(HOLDS(m15, 9), 0);
    uint32_t c[] = {2, 1};
    assert_contains(reason(&m2, 3, c, 2), "entropy");
}

/* ---- recursive (c,l)-diversity ----------------------------------------------- */

static void test_recursive(void **state)
{
    (void)state;
    /* {5,3,2}, l = 2: x1 = 5, x2 + x3 = 5 */
    model c1 = make(1, 2, MODEL_L_RECURSIVE, 1);
    assert_int_equal(HOLDS(c1, 5, 3, 2), 0); /* 5 < 5 is false: strict */
    assert_int_equal(HOLDS(c1, 2, 5, 3), 0); /* unsorted input, same class */
    model c2 = make(1, 2, MODEL_L_RECURSIVE, 2);
    assert_int_equal(HOLDS(c2, 5, 3, 2), 1); /* 5 < 10 */
    assert_int_equal(HOLDS(c2, 3, 2, 5), 1);
    assert_int_equal(HOLDS(c2, 2, 5, 3), 1);
    /* l = 3: the tail is x3 = 2 */
    model l3c2 = make(1, 3, MODEL_L_RECURSIVE, 2);
    assert_int_equal(HOLDS(l3c2, 5, 3, 2), 0); /* 5 < 4 no */
    model l3c3 = make(1, 3, MODEL_L_RECURSIVE, 3);
    assert_int_equal(HOLDS(l3c3, 2, 3, 5), 1); /* 5 < 6 */
    model l3c25 = make(1, 3, MODEL_L_RECURSIVE, 2.5);
    assert_int_equal(HOLDS(l3c25, 3, 5, 2), 0); /* 5 < 5 no */
    /* fewer than l distinct values fails whatever c */
    model l3big = make(1, 3, MODEL_L_RECURSIVE, 1000);
    assert_int_equal(HOLDS(l3big, 5, 5), 0);
    assert_int_equal(HOLDS(l3big, 1, 1, 1), 1); /* 1 < 1000 * 1 */
    /* ties: {4,4,1} l = 2 c = 1: 4 < 4 + 1 */
    assert_int_equal(HOLDS(c1, 4, 4, 1), 1);
    assert_int_equal(HOLDS(c1, 1, 4, 4), 1);
    assert_int_equal(HOLDS(c1, 4, 4), 0); /* 4 < 4 no */
    model c101 = make(1, 2, MODEL_L_RECURSIVE, 1.01);
    assert_int_equal(HOLDS(c101, 4, 4), 1); /* 4 < 4.04 */
    /* a long tail: {10,1,1,1,1,1,1,1,1,1,1} l = 2 c = 1: 10 < 10 no; one more 1 passes */
    assert_int_equal(HOLDS(c1, 1, 1, 1, 1, 10, 1, 1, 1, 1, 1, 1), 0);
    assert_int_equal(HOLDS(c1, 1, 1, 1, 1, 10, 1, 1, 1, 1, 1, 1, 1), 1);
    /* l = 1: the tail is every count: x1 < c * n */
    model l1 = make(1, 1, MODEL_L_RECURSIVE, 1);
    assert_int_equal(HOLDS(l1, 4), 0); /* 4 < 4 no */
    assert_int_equal(HOLDS(l1, 4, 1), 1);
    model l1c15 = make(1, 1, MODEL_L_RECURSIVE, 1.5);
    assert_int_equal(HOLDS(l1c15, 4), 1); /* 4 < 6 */
    /* the largest count is found wherever it is */
    model l4 = make(1, 4, MODEL_L_RECURSIVE, 1);
    assert_int_equal(HOLDS(l4, 1, 2, 9, 3, 4, 5), 0); /* sorted 9,5,4,3,2,1: 9 < 3+2+1 no */
    model l4c2 = make(1, 4, MODEL_L_RECURSIVE, 2);
    assert_int_equal(HOLDS(l4c2, 1, 2, 9, 3, 4, 5), 1); /* 9 < 12 */
    uint32_t few[] = {5, 5}, many[] = {5, 3, 2};
    assert_contains(reason(&l3big, 10, few, 2), "2 distinct");
    assert_contains(reason(&c1, 10, many, 3), "5 times");
}

/* ---- probabilistic l-diversity ------------------------------------------------ */

static void test_probabilistic(void **state)
{
    (void)state;
    model p2 = make(1, 2, MODEL_L_PROBABILISTIC, 1);
    assert_int_equal(HOLDS(p2, 2, 2), 1);    /* 2/4 = 1/2: boundary passes */
    assert_int_equal(HOLDS(p2, 3, 1), 0);    /* 3/4 > 1/2 */
    assert_int_equal(HOLDS(p2, 1, 3), 0);
    assert_int_equal(HOLDS(p2, 1, 1, 1), 1); /* 1/3 */
    assert_int_equal(HOLDS(p2, 5), 0);       /* 1 > 1/2 */
    assert_int_equal(HOLDS(p2, 3, 2, 1), 1); /* 3/6 */
    model p3 = make(1, 3, MODEL_L_PROBABILISTIC, 1);
    assert_int_equal(HOLDS(p3, 2, 2, 2), 1); /* 2/6 = 1/3 */
    assert_int_equal(HOLDS(p3, 1, 2, 3), 0); /* 3/6 > 1/3 */
    assert_int_equal(HOLDS(p3, 2, 2, 2, 1), 1);
    assert_int_equal(HOLDS(p3, 3, 2, 2), 0); /* 3/7 > 1/3 */
    model p25 = make(1, 2.5, MODEL_L_PROBABILISTIC, 1);
    assert_int_equal(HOLDS(p25, 2, 2, 1), 1); /* 2/5 = 1/2.5 */
    assert_int_equal(HOLDS(p25, 2, 1, 1), 0); /* 2/4 > 0.4 */
    model p1 = make(1, 1, MODEL_L_PROBABILISTIC, 1);
    assert_int_equal(HOLDS(p1, 8), 1); /* frequency 1 <= 1 */
    /* the class count is what frequencies are taken of */
    uint32_t c[] = {2, 2};
    assert_int_equal(verdict_n(&p2, 4, c, 2), 1);
    assert_int_equal(verdict_n(&p2, 3, c, 2), 0); /* 2/3 > 1/2 */
    uint32_t bad[] = {3, 1};
    assert_contains(reason(&p2, 4, bad, 2), "3/4");
}

/* ---- combinations ------------------------------------------------------------- */

static void test_combinations(void **state)
{
    (void)state;
    /* k = 3 and distinct l = 2 */
    model kl = make(3, 2, MODEL_L_DISTINCT, 1);
    assert_int_equal(HOLDS(kl, 1, 1), 0); /* 2 rows */
    assert_int_equal(HOLDS(kl, 2, 1), 1);
    assert_int_equal(HOLDS(kl, 3), 0);    /* one value */
    uint32_t small[] = {1, 1}, single[] = {3};
    assert_contains(reason(&kl, 2, small, 2), "k-anonymity");
    assert_contains(reason(&kl, 3, single, 1), "distinct");
    /* distinct and entropy: both must hold */
    model de = make(1, 2, MODEL_L_DISTINCT | MODEL_L_ENTROPY, 1);
    assert_int_equal(HOLDS(de, 2, 1), 0); /* distinct yes, entropy no */
    assert_int_equal(HOLDS(de, 1, 1), 1);
    uint32_t skew[] = {2, 1};
    assert_contains(reason(&de, 3, skew, 2), "entropy");
    /* all four with l = 2 */
    model all1 = make(1, 2, ALL_VARIANTS, 1);
    assert_int_equal(HOLDS(all1, 2, 2), 0); /* recursive: 2 < 1 * 2 no */
    uint32_t even[] = {2, 2};
    assert_contains(reason(&all1, 4, even, 2), "2 times");
    model all2 = make(1, 2, ALL_VARIANTS, 2);
    assert_int_equal(HOLDS(all2, 2, 2), 1); /* 2 < 4, entropy ln 2, 2/4 */
    assert_int_equal(HOLDS(all2, 3, 1), 0); /* entropy 0.562 < ln 2, recursive 3 < 2 no, 3/4 > 1/2 */
    assert_int_equal(HOLDS(all2, 3, 2, 2), 1); /* 3 values, entropy 1.08 >= ln 2, 3 < 8, 3/7 <= 1/2 */
    /* recursive and probabilistic */
    model rp1 = make(1, 2, MODEL_L_RECURSIVE | MODEL_L_PROBABILISTIC, 1);
    assert_int_equal(HOLDS(rp1, 3, 2, 1), 0); /* 3 < 3 no */
    model rp2 = make(1, 2, MODEL_L_RECURSIVE | MODEL_L_PROBABILISTIC, 2);
    assert_int_equal(HOLDS(rp2, 3, 2, 1), 1); /* 3 < 6 and 3/6 <= 1/2 */
    assert_int_equal(HOLDS(rp2, 4, 1, 1), 0); /* 4 < 4 no (and 4/6 > 1/2) */
    assert_int_equal(HOLDS(rp2, 4, 3, 1), 1); /* 4 < 8, 4/8 */
    assert_int_equal(HOLDS(rp2, 5, 4, 1), 1); /* 5 < 10 and 5/10 <= 1/2: both boundaries met */
    assert_int_equal(HOLDS(rp2, 5, 3, 1), 0); /* 5 < 8 yes, but 5/9 > 1/2 */
    uint32_t prob_only[] = {5, 3, 1};
    assert_contains(reason(&rp2, 9, prob_only, 3), "5/9");
}

/* l = 0 means no l constraint, whatever the variant bits say. */
static void test_no_l(void **state)
{
    (void)state;
    model m = make(5, 0, ALL_VARIANTS, 0);
    assert_int_equal(model_needs_sensitive(&m), 0);
    assert_int_equal(HOLDS(m, 5), 1);
    assert_int_equal(HOLDS(m, 4), 0);
    uint32_t none[1] = {0};
    assert_int_equal(verdict_n(&m, 5, none, 0), 1);
    assert_int_equal(verdict_n(&m, 4, none, 0), 0);
}

/* ---- variant names ------------------------------------------------------------ */

static void test_parse_variants(void **state)
{
    (void)state;
    unsigned bits = 0;
    assert_int_equal(model_parse_variants("distinct", &bits), 0);
    assert_int_equal(bits, MODEL_L_DISTINCT);
    assert_int_equal(model_parse_variants("entropy", &bits), 0);
    assert_int_equal(bits, MODEL_L_ENTROPY);
    assert_int_equal(model_parse_variants("recursive", &bits), 0);
    assert_int_equal(bits, MODEL_L_RECURSIVE);
    assert_int_equal(model_parse_variants("probabilistic", &bits), 0);
    assert_int_equal(bits, MODEL_L_PROBABILISTIC);
    assert_int_equal(model_parse_variants("distinct,", &bits), -1); /* an empty name, wherever it stands */
    assert_int_equal(model_parse_variants("distinct,entropy", &bits), 0);
    assert_int_equal(bits, MODEL_L_DISTINCT | MODEL_L_ENTROPY);
    assert_int_equal(model_parse_variants("entropy,distinct", &bits), 0);
    assert_int_equal(bits, MODEL_L_DISTINCT | MODEL_L_ENTROPY);
    assert_int_equal(model_parse_variants("probabilistic,recursive,entropy,distinct", &bits), 0);
    assert_int_equal(bits, ALL_VARIANTS);
    assert_int_equal(model_parse_variants("entropy,entropy", &bits), 0);
    assert_int_equal(bits, MODEL_L_ENTROPY);

    /* rejected, and *bits left alone */
    const char *bad[] = {"", "foo", "distinct,foo", "foo,distinct", "distinc", "distinctx", "entropy2",
                         ",", ",distinct", "distinct,,entropy", "distinct entropy", "distinct;entropy"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        bits = 12345;
        if (model_parse_variants(bad[i], &bits) != -1) fail_msg("'%s' was accepted", bad[i]);
        assert_int_equal(bits, 12345);
    }

    /* every combination prints and parses back */
    for (unsigned b = 1; b <= ALL_VARIANTS; b++) {
        char names[128];
        model_variant_names(b, names, sizeof names);
        unsigned back = 0;
        if (model_parse_variants(names, &back) != 0) fail_msg("'%s' (bits %u) does not parse", names, b);
        assert_int_equal(back, b);
    }
    char names[128];
    model_variant_names(MODEL_L_DISTINCT | MODEL_L_RECURSIVE, names, sizeof names);
    assert_string_equal(names, "distinct,recursive");
    model_variant_names(0, names, sizeof names);
    assert_string_equal(names, "");
    /* a short buffer stays terminated and within bounds */
    char tiny[10];
    model_variant_names(ALL_VARIANTS, tiny, sizeof tiny);
    assert_true(strlen(tiny) < sizeof tiny);
}

/* ---- parameter validation ------------------------------------------------------- */

static void expect_invalid(const model *m, const char *needle)
{
    ak_error err;
    ak_err_clear(&err);
    assert_int_equal(model_validate(m, &err), ANONKIT_E_USAGE);
    assert_int_equal(err.code, ANONKIT_E_USAGE);
    assert_contains(err.message, needle);
}

static void expect_valid(const model *m)
{
    ak_error err;
    ak_err_clear(&err);
    if (model_validate(m, &err) != ANONKIT_OK) fail_msg("rejected: %s", err.message);
}

static void test_validate(void **state)
{
    (void)state;
    model m;
    model_init(&m);
    expect_valid(&m);
    m = make(0, 0, MODEL_L_DISTINCT, 1);
    expect_invalid(&m, "--k");
    m = make(0, 2, MODEL_L_DISTINCT, 1);
    expect_invalid(&m, "--k");
    m = make(1, 0.5, MODEL_L_DISTINCT, 1);
    expect_invalid(&m, "--l");
    m = make(1, 0.999, MODEL_L_ENTROPY, 1);
    expect_invalid(&m, "--l");
    m = make(1, -1, MODEL_L_DISTINCT, 1);
    expect_invalid(&m, "--l");
    m = make(1, NAN, MODEL_L_DISTINCT, 1);
    expect_invalid(&m, "--l");
    m = make(1, 1, MODEL_L_DISTINCT, 1);
    expect_valid(&m);
    m = make(1, 2.5, MODEL_L_ENTROPY, 1);
    expect_valid(&m);
    m = make(1, 2, MODEL_L_RECURSIVE, 0);
    expect_invalid(&m, "--c");
    m = make(1, 2, MODEL_L_RECURSIVE | MODEL_L_DISTINCT, -1);
    expect_invalid(&m, "--c");
    m = make(1, 2, MODEL_L_RECURSIVE, NAN);
    expect_invalid(&m, "--c");
    m = make(1, 2, MODEL_L_RECURSIVE, 0.5);
    expect_valid(&m);
    /* c only matters for the recursive variant, and only when l is set */
    m = make(1, 2, MODEL_L_DISTINCT | MODEL_L_ENTROPY | MODEL_L_PROBABILISTIC, 0);
    expect_valid(&m);
    m = make(1, 0, MODEL_L_RECURSIVE, 0);
    expect_valid(&m);
    m = make(7, 3, ALL_VARIANTS, 2);
    expect_valid(&m);
}

/* ---- random histograms: reference predicates and monotonicity ------------------- */

/* A model with l = l2 / 2 and c = c2 / 2, so that the reference predicates can
 * decide in exact integer arithmetic. */
typedef struct ref_model {
    model m;
    uint64_t l2, c2;
} ref_model;

static ref_model random_model(tu_rng *rng, unsigned variants)
{
    ref_model r;
    r.l2 = variants ? 2 + tu_below(rng, 7) : 0; /* l in 1, 1.5, ..., 4 */
    r.c2 = 1 + tu_below(rng, 6);                /* c in 0.5, 1, ..., 3 */
    r.m = make(1 + tu_below(rng, 5), (double)r.l2 / 2, variants, (double)r.c2 / 2);
    return r;
}

static int cmp_desc(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x < y) - (x > y);
}

/* Entropy in long double: ln n - (1/n) sum x ln x. */
static long double entropy_of(const uint32_t *c, size_t n, uint64_t count)
{
    long double s = 0;
    for (size_t i = 0; i < n; i++) s += (long double)c[i] * logl((long double)c[i]);
    return logl((long double)count) - s / (long double)count;
}

/* The reference verdict; -1 when entropy is too close to log(l) to decide here
 * (the exact boundary cases are tested by hand above). */
static int ref_holds(const ref_model *r, uint64_t count, const uint32_t *counts, size_t n)
{
    if (count < r->m.k) return 0;
    if (!r->l2) return 1;
    unsigned v = r->m.l_variants;
    if ((v & MODEL_L_DISTINCT) && 2 * (uint64_t)n < r->l2) return 0;
    if (v & MODEL_L_RECURSIVE) {
        uint64_t l = (r->l2 + 1) / 2; /* ceil(l) */
        if (n < l) return 0;
        uint32_t sorted[MAX_VALUES];
        memcpy(sorted, counts, n * sizeof *counts);
        qsort(sorted, n, sizeof *sorted, cmp_desc);
        uint64_t tail = 0;
        for (size_t i = l - 1; i < n; i++) tail += sorted[i];
        if (!(2 * (uint64_t)sorted[0] < r->c2 * tail)) return 0;
    }
    if (v & MODEL_L_PROBABILISTIC) {
        uint64_t top = 0;
        for (size_t i = 0; i < n; i++)
            if (counts[i] > top) top = counts[i];
        if (top * r->l2 > 2 * count) return 0;
    }
    if (v & MODEL_L_ENTROPY) {
        long double d = entropy_of(counts, n, count) - logl((long double)r->l2 / 2);
        if (fabsl(d) < 1e-9L) return -1;
        if (d < 0) return 0;
    }
    return 1;
}

/* A random histogram over `domain` values (zero counts allowed). */
static void random_histogram(tu_rng *rng, size_t domain, uint32_t *h)
{
    int shape = (int)tu_below(rng, 3);
    for (size_t i = 0; i < domain; i++) {
        if (shape == 0) h[i] = (uint32_t)tu_below(rng, 4);
        else if (shape == 1) h[i] = tu_below(rng, 3) ? (uint32_t)(1 + tu_below(rng, 2)) : 0;
        else h[i] = (uint32_t)tu_below(rng, i == 0 ? 12 : 3);
    }
}

/* The non-zero counts of h, in value order; returns how many. */
static size_t nonzero(const uint32_t *h, size_t domain, uint32_t *out, uint64_t *count)
{
    size_t n = 0;
    *count = 0;
    for (size_t i = 0; i < domain; i++)
        if (h[i]) {
            out[n++] = h[i];
            *count += h[i];
        }
    return n;
}

static void test_against_reference(void **state)
{
    (void)state;
    tu_rng rng = {20240611};
    int seen[2] = {0, 0}, undecided = 0;
    for (int iter = 0; iter < 20000; iter++) {
        unsigned variants = (unsigned)tu_below(&rng, ALL_VARIANTS + 1);
        ref_model r = random_model(&rng, variants);
        size_t domain = 1 + tu_below(&rng, 6);
        uint32_t h[MAX_VALUES], c[MAX_VALUES];
        random_histogram(&rng, domain, h);
        uint64_t count;
        size_t n = nonzero(h, domain, c, &count);
        if (!count) continue;
        /* the counts in a random order */
        for (size_t i = n; i > 1; i--) {
            size_t j = tu_below(&rng, i);
            uint32_t t = c[i - 1];
            c[i - 1] = c[j];
            c[j] = t;
        }
        int want = ref_holds(&r, count, c, n);
        if (want < 0) {
            undecided++;
            continue;
        }
        int got = verdict_n(&r.m, count, c, n);
        if (got != want) {
            char names[128];
            model_variant_names(variants, names, sizeof names);
            fail_msg("iteration %d: k=%llu l=%g (%s) c=%g, %zu values, count %llu: got %d, want %d", iter,
                     (unsigned long long)r.m.k, r.m.l, names, r.m.c, n, (unsigned long long)count, got, want);
        }
        seen[want]++;
    }
    assert_true(seen[0] > 2000 && seen[1] > 2000);
    assert_true(undecided < 1000);
}

/* docs/ARCHITECTURE.md §5: merging two classes that satisfy a model gives a class that
 * satisfies it, for every variant alone and for combinations. */
static void test_monotone(void **state)
{
    (void)state;
    tu_rng rng = {77};
    /* 0: k only; 1..15: the variant combinations (the four single variants included) */
    for (unsigned variants = 0; variants <= ALL_VARIANTS; variants++) {
        int pairs = 0, tries = 0, both_below_k = 0;
        while (pairs < 400) {
            if (++tries > 2000000) fail_msg("variants %u: too few satisfying pairs (%d)", variants, pairs);
            ref_model r = random_model(&rng, variants);
            size_t domain = 1 + tu_below(&rng, 7);
            uint32_t a[MAX_VALUES], b[MAX_VALUES], merged[MAX_VALUES], ca[MAX_VALUES], cb[MAX_VALUES],
                cm[MAX_VALUES];
            random_histogram(&rng, domain, a);
            random_histogram(&rng, domain, b);
            uint64_t na, nb, nm;
            size_t da = nonzero(a, domain, ca, &na), db = nonzero(b, domain, cb, &nb);
            if (!na || !nb) continue;
            if (!verdict_n(&r.m, na, ca, da) || !verdict_n(&r.m, nb, cb, db)) continue;
            for (size_t i = 0; i < domain; i++) merged[i] = a[i] + b[i];
            size_t dm = nonzero(merged, domain, cm, &nm);
            assert_int_equal(nm, na + nb);
            if (!verdict_n(&r.m, nm, cm, dm)) {
                char names[128], why[512];
                uint32_t scratch[MAX_VALUES];
                model_variant_names(variants, names, sizeof names);
                model_explain(&r.m, nm, cm, dm, scratch, why, sizeof why);
                fail_msg("not monotone: k=%llu l=%g (%s) c=%g: %llu + %llu rows satisfy, merged fails: %s",
                         (unsigned long long)r.m.k, r.m.l, names, r.m.c, (unsigned long long)na,
                         (unsigned long long)nb, why);
            }
            both_below_k += na < 2 * r.m.k && nb < 2 * r.m.k;
            pairs++;
        }
        assert_true(both_below_k > 0); /* some pairs are near the k boundary */
    }
}

/* Variance diversity ([LeFevre07] §1.1): the sums against a direct two-pass
 * computation, exact at the boundary for integers, in any order, and
 * monotone (merging two diverse classes keeps the bound). */
static void test_variance(void **state)
{
    (void)state;
    model m;
    model_init(&m);
    m.variance = 1;
    model_moments mo = {0};
    model_moments_add(&mo, 0);
    model_moments_add(&mo, 2);
    assert_true(model_variance_holds(&m, &mo, 1)); /* {0, 2}: variance exactly 1 */
    m.variance = 1.0000001;
    assert_false(model_variance_holds(&m, &mo, 1));
    m.variance = 0;
    assert_true(model_variance_holds(&m, &mo, 1)); /* no bound */

    uint64_t x = 99;
    int held = 0;
    for (int iter = 0; iter < 2000; iter++) {
        double values[40];
        const int n = 1 + (int)((x = x * 6364136223846793005ULL + 1442695040888963407ULL) >> 59) % 40;
        const int integers = iter % 2 == 0;
        model_moments a = {0}, b = {0};
        double sum = 0;
        for (int i = 0; i < n; i++) {
            x = x * 6364136223846793005ULL + 1442695040888963407ULL;
            values[i] = integers ? (double)((int64_t)(x >> 40) % 2001 - 1000) : (double)(x >> 11) / 9007199254740992.0 * 500 - 250;
            sum += values[i];
            model_moments_add(&a, values[i]);
        }
        for (int i = n - 1; i >= 0; i--) model_moments_add(&b, values[i]); /* the other order */
        const double mean = sum / n;
        double sq = 0;
        for (int i = 0; i < n; i++) sq += (values[i] - mean) * (values[i] - mean);
        const double direct = sq / n;
        const long double va = model_moments_variance(&a, integers), vb = model_moments_variance(&b, integers);
        assert_true(fabs((double)va - direct) <= 1e-9 * (direct > 1 ? direct : 1));
        if (integers) {
            assert_true(va == vb);
            /* at the bound: exactly the variance holds, anything above it does not */
            m.variance = (double)va;
            if ((long double)m.variance == va) {
                assert_true(model_variance_holds(&m, &a, 1));
                assert_true(model_variance_holds(&m, &b, 1));
            }
            m.variance = (double)va * (1 + 1e-9) + 1e-9;
            assert_false(model_variance_holds(&m, &a, 1));
        }
        /* monotone: merged with another class that meets the bound, it still
         * holds (the other class: the values shifted and spread further) */
        m.variance = direct * 0.999;
        if (m.variance > 0 && model_variance_holds(&m, &a, integers)) {
            const int shift = (int)(x >> 58) - 32;
            model_moments other = {0}, both = a;
            for (int i = 0; i < n; i++) {
                const double v = values[n - 1 - i] * 2 + shift;
                model_moments_add(&other, v);
                model_moments_add(&both, v);
            }
            assert_true(model_variance_holds(&m, &other, integers));
            assert_true(model_variance_holds(&m, &both, integers));
            held++;
        }
    }
    assert_true(held > 500);
    /* removing a part gives the sums of the rest */
    model_moments whole = {0}, part = {0}, rest = {0};
    for (int i = 0; i < 10; i++) {
        model_moments_add(&whole, i * 3);
        if (i < 4) model_moments_add(&part, i * 3);
        else model_moments_add(&rest, i * 3);
    }
    const model_moments diff = model_moments_minus(&whole, &part);
    assert_true(model_moments_variance(&diff, 1) == model_moments_variance(&rest, 1));
}

/* The hypothesis tests of Rothko-S ([LeFevre07] §3.1), against quantiles from
 * statistical tables and decisions worked by hand from the formulas. */
static void test_sample_tests(void **state)
{
    (void)state;
    /* footnote 6 and 8: upper-tail quantiles (standard tables) */
    assert_true(fabs(sample_test_z(0.025) - 1.959964) < 1e-6);
    assert_true(fabs(sample_test_z(0.05) - 1.644854) < 1e-6);
    assert_true(fabs(sample_test_chisq(0.05, 10) - 18.307) < 1e-3);
    assert_true(fabs(sample_test_chisq(0.025, 19) - 32.852) < 1e-3);
    model m;
    model_init(&m);
    sample_test st;
    ak_error err;
    uint32_t scratch[8];
    const model_moments none = {0};
    /* §3.1.1, N = 10000, n = 1000, k = 100, two children at alpha 0.05:
     * p0 = 0.01, Var = 0.01 * 0.99 / 1000 * 9000 / 9999 = 8.9109e-6, so a
     * child passes when p^ >= 0.01 + 1.959964 * 0.0029851 = 0.0158507,
     * that is from 16 sample rows. */
    m.k = 100;
    assert_int_equal(sample_test_init(&st, &m, SAMPLE_TEST_HYPOTHESIS, 0.05, 10000, 1000, &err), ANONKIT_OK);
    assert_true(sample_test_child(&st, 16, NULL, 0, scratch, &none, 1, 2));
    assert_false(sample_test_child(&st, 15, NULL, 0, scratch, &none, 1, 2));
    /* Bonferroni: with 8 children z(0.05/8) = 2.497705 raises the bar to
     * 0.01 + 2.497705 * 0.0029851 = 0.017456: 18 rows pass, 17 do not */
    assert_true(sample_test_child(&st, 18, NULL, 0, scratch, &none, 1, 8));
    assert_false(sample_test_child(&st, 17, NULL, 0, scratch, &none, 1, 8));
    /* the naive rule: at least k n / N = 10 sample rows */
    assert_int_equal(sample_test_init(&st, &m, SAMPLE_TEST_NAIVE, 0.05, 10000, 1000, &err), ANONKIT_OK);
    assert_true(sample_test_child(&st, 10, NULL, 0, scratch, &none, 1, 2));
    assert_false(sample_test_child(&st, 9, NULL, 0, scratch, &none, 1, 2));
    /* the whole partition: the model itself */
    assert_int_equal(sample_test_init(&st, &m, SAMPLE_TEST_HYPOTHESIS, 0.05, 1000, 1000, &err), ANONKIT_OK);
    assert_true(sample_test_child(&st, 100, NULL, 0, scratch, &none, 1, 2));
    assert_false(sample_test_child(&st, 99, NULL, 0, scratch, &none, 1, 2));

    /* §3.1.2, recursive (1,2)-diversity, N = 10000, n = 1000, a child of 100
     * sample rows, two children: Var = (p2 (1 - p2) + p1 (1 - p1)) / 99 * 0.9.
     *   {40, 30, 30}: p1 = 0.4, p2 = 0.6, c p2 - p1 = 0.2 > 1.959964 *
     *                 sqrt(0.48 / 99 * 0.9) = 0.12947: passes;
     *   {45, 30, 25}: 0.1 < 1.959964 * sqrt(0.495 / 99 * 0.9) = 0.13148: fails,
     *                 although the sample itself is (1,2)-diverse. */
    model_init(&m);
    m.l = 2;
    m.c = 1;
    m.l_variants = MODEL_L_RECURSIVE;
    assert_int_equal(sample_test_init(&st, &m, SAMPLE_TEST_HYPOTHESIS, 0.05, 10000, 1000, &err), ANONKIT_OK);
    const uint32_t even[] = {30, 40, 30}, skewed[] = {25, 45, 30};
    assert_true(sample_test_child(&st, 100, even, 3, scratch, &none, 1, 2));
    assert_false(sample_test_child(&st, 100, skewed, 3, scratch, &none, 1, 2));
    assert_int_equal(sample_test_init(&st, &m, SAMPLE_TEST_NAIVE, 0.05, 10000, 1000, &err), ANONKIT_OK);
    assert_true(sample_test_child(&st, 100, skewed, 3, scratch, &none, 1, 2));

    /* §3.1.3, variance diversity: ten 0s and ten 10s, sum of squared
     * deviations 500; two children: reject H0 when 500 / v >= chi2(0.025, 19
     * df) = 32.852, so v = 10 passes (50) and v = 20 fails (25) although the
     * sample's own variance, 25, is above 20. */
    model_moments mo = {0};
    for (int i = 0; i < 20; i++) model_moments_add(&mo, i % 2 ? 10 : 0);
    model_init(&m);
    m.variance = 10;
    assert_int_equal(sample_test_init(&st, &m, SAMPLE_TEST_HYPOTHESIS, 0.05, 10000, 1000, &err), ANONKIT_OK);
    assert_true(sample_test_child(&st, 20, NULL, 0, scratch, &mo, 1, 2));
    m.variance = 20;
    assert_false(sample_test_child(&st, 20, NULL, 0, scratch, &mo, 1, 2));
    assert_int_equal(sample_test_init(&st, &m, SAMPLE_TEST_NAIVE, 0.05, 10000, 1000, &err), ANONKIT_OK);
    assert_true(sample_test_child(&st, 20, NULL, 0, scratch, &mo, 1, 2));
    assert_int_equal(sample_test_init(&st, &m, SAMPLE_TEST_HYPOTHESIS, 0.05, 20, 20, &err), ANONKIT_OK);
    assert_true(sample_test_child(&st, 20, NULL, 0, scratch, &mo, 1, 2)); /* the whole partition: 25 >= 20 */

    assert_int_equal(sample_test_init(&st, &m, SAMPLE_TEST_HYPOTHESIS, 1.5, 10, 5, &err), ANONKIT_E_USAGE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_k_anonymity),
        cmocka_unit_test(test_distinct),
        cmocka_unit_test(test_entropy),
        cmocka_unit_test(test_recursive),
        cmocka_unit_test(test_probabilistic),
        cmocka_unit_test(test_combinations),
        cmocka_unit_test(test_no_l),
        cmocka_unit_test(test_parse_variants),
        cmocka_unit_test(test_validate),
        cmocka_unit_test(test_against_reference),
        cmocka_unit_test(test_monotone),
        cmocka_unit_test(test_variance),
        cmocka_unit_test(test_sample_tests),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
