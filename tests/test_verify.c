/* test_verify.c — the independent verifier's own API (src/verify/verify.h),
 * on small published files written by hand.
 *
 * Every expected verdict is worked out here from the definitions, never
 * copied from the program's output:
 *   k-anonymity                every class has >= k rows;
 *   distinct l-diversity       at least l distinct sensitive values;
 *   entropy l-diversity        -sum p ln p >= ln l;
 *   recursive (c,l)-diversity  x1 < c (x_l + ... + x_m), x_i the i-th largest count;
 *   variance diversity         population variance of the class >= the bound;
 *   suppression                with a share s of n rows, up to floor(s n) rows
 *                              whose QIs are all "*" are suppressed, not a class;
 *                              more of them must satisfy the model as a class.
 * A class is the set of rows with equal published QI texts; the first
 * violating class is the one whose first row comes first in the file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "model/model.h"
#include "testutil.h"
#include "verify/verify.h"

static const char *const QI[] = {"zip", "age"};

/* Parameters for the file `text` (written to the group folder as `name`)
 * with QIs zip and age, sensitive column disease and model k. */
static verify_params params(const char *name, const char *text, uint64_t k)
{
    const char *path = tu_path(tu_group_dir, name);
    tu_write_file(path, text);
    verify_params p = {path, ',', QI, 2, "disease", {0}, 0, NULL, NULL, 0, NULL, 0, NULL};
    model_init(&p.model);
    p.model.k = k;
    return p;
}

/* Runs the verifier expecting success with these counts. */
static void expect_ok(const verify_params *p, uint64_t classes, uint64_t rows, uint64_t suppressed)
{
    ak_error err;
    ak_err_clear(&err);
    verify_counts c = {99, 99, 99};
    const int rc = verify_published(p, &c, &err);
    if (rc != ANONKIT_OK) fail_msg("%s", err.message);
    assert_int_equal(c.classes, classes);
    assert_int_equal(c.rows, rows);
    assert_int_equal(c.suppressed, suppressed);
}

/* Runs the verifier expecting failure `code` at `line` with exactly `message`
 * (or, when message is NULL, any message). */
static void expect_fail(const verify_params *p, int code, long line, const char *message)
{
    ak_error err;
    ak_err_clear(&err);
    verify_counts c = {99, 99, 99};
    assert_int_equal(verify_published(p, &c, &err), code);
    assert_int_equal(err.code, code);
    assert_int_equal(err.line, line);
    if (message) assert_string_equal(err.message, message);
    if (line) assert_string_equal(err.file, strcmp(p->published, "-") ? p->published : "stdin");
    assert_int_equal(c.classes, 99); /* untouched on failure */
}

/* Classes: (z1, 20-30) rows on lines 2, 4, 6; (z2, 30-40) on lines 3, 5. */
static const char *const TWO_CLASSES = "zip,age,disease\n"
                                       "z1,20-30,flu\n"
                                       "z2,30-40,flu\n"
                                       "z1,20-30,cold\n"
                                       "z2,30-40,hiv\n"
                                       "z1,20-30,flu\n";

static void test_k(void **state)
{
    (void)state;
    verify_params p = params("k.csv", TWO_CLASSES, 1);
    expect_ok(&p, 2, 5, 0);
    p.model.k = 2; /* the smaller class has exactly 2 rows */
    expect_ok(&p, 2, 5, 0);
    p.model.k = 3; /* only (z2, 30-40), first seen on line 3, is too small */
    expect_fail(&p, ANONKIT_E_VIOLATION, 3,
                "class (zip=z2, age=30-40) of 2 rows violates the privacy model: 2 rows, k-anonymity needs 3");
    p.model.k = 4; /* both violate: the one whose first row comes first is named */
    expect_fail(&p, ANONKIT_E_VIOLATION, 2,
                "class (zip=z1, age=20-30) of 3 rows violates the privacy model: 3 rows, k-anonymity needs 4");
}

/* Texts are compared whole: ("ab","c") and ("a","bc") are two classes, a
 * quoted field with the delimiter inside is one text, and another delimiter
 * reads the same classes. */
static void test_classes_are_texts(void **state)
{
    (void)state;
    verify_params p = params("texts.csv", "zip,age,disease\nab,c,x\na,bc,x\n\"a,b\",c,x\n\"a,b\",c,y\n", 1);
    expect_ok(&p, 3, 4, 0);
    p.model.k = 2;
    expect_fail(&p, ANONKIT_E_VIOLATION, 2,
                "class (zip=ab, age=c) of 1 rows violates the privacy model: 1 rows, k-anonymity needs 2");
    p = params("semicolon.csv", "zip;age;disease\nz1;1,5;x\nz1;1,5;y\n", 2);
    p.delimiter = ';';
    expect_ok(&p, 1, 2, 0);
}

static void test_distinct_l(void **state)
{
    (void)state;
    /* (z1, 20-30) holds flu, cold, flu: 2 distinct; (z2, 30-40) flu, hiv: 2 distinct */
    verify_params p = params("distinct.csv", TWO_CLASSES, 2);
    p.model.l = 2;
    p.model.l_variants = MODEL_L_DISTINCT;
    expect_ok(&p, 2, 5, 0);
    p.model.l = 2.5; /* a fractional l needs 3 distinct values */
    expect_fail(&p, ANONKIT_E_VIOLATION, 2,
                "class (zip=z1, age=20-30) of 3 rows violates the privacy model: "
                "2 distinct sensitive values, distinct l-diversity needs 2.5");
    p.model.l = 3;
    expect_fail(&p, ANONKIT_E_VIOLATION, 2, NULL);
    /* the sensitive column is read only when the model needs it */
    p.model.l = 0;
    p.sensitive = "nosuch";
    expect_ok(&p, 2, 5, 0);
    p.model.l = 2;
    expect_fail(&p, ANONKIT_E_USAGE, 1, "no column named 'nosuch' (given as the sensitive attribute)");
}

static void test_entropy_l(void **state)
{
    (void)state;
    /* (z1) counts {1, 1, 1, 1}: H = ln 4 exactly at the bound of l = 4.
     * (z2) counts {2, 1}: H = ln 3 - (2/3) ln 2 = 0.636514, e^H = 1.88988. */
    const char *text = "zip,age,disease\n"
                       "z1,1,a\nz1,1,b\nz2,2,a\nz1,1,c\nz2,2,b\nz1,1,d\nz2,2,a\n";
    verify_params p = params("entropy.csv", text, 1);
    p.model.l_variants = MODEL_L_ENTROPY;
    p.model.l = 1.88;
    expect_ok(&p, 2, 7, 0);
    p.model.l = 1.9;
    expect_fail(&p, ANONKIT_E_VIOLATION, 4,
                "class (zip=z2, age=2) of 3 rows violates the privacy model: sensitive entropy 0.636514 < "
                "log(l) = 0.641854");
    /* only the four-value class: passes at l = 4, fails just above */
    p = params("entropy4.csv", "zip,age,disease\nz1,1,a\nz1,1,b\nz1,1,c\nz1,1,d\n", 1);
    p.model.l_variants = MODEL_L_ENTROPY;
    p.model.l = 4;
    expect_ok(&p, 1, 4, 0);
    p.model.l = 4.01;
    expect_fail(&p, ANONKIT_E_VIOLATION, 2, NULL);
}

static void test_recursive_l(void **state)
{
    (void)state;
    /* one class with counts {3, 2, 1} (x1 = 3, x2 = 2, x3 = 1) */
    const char *text = "zip,age,disease\nz,1,a\nz,1,b\nz,1,a\nz,1,c\nz,1,b\nz,1,a\n";
    verify_params p = params("recursive.csv", text, 1);
    p.model.l_variants = MODEL_L_RECURSIVE;
    p.model.l = 2;
    p.model.c = 1; /* 3 < 1 * (2 + 1) is false */
    expect_fail(&p, ANONKIT_E_VIOLATION, 2,
                "class (zip=z, age=1) of 6 rows violates the privacy model: most frequent sensitive value occurs "
                "3 times, not below c*(x_l+...+x_m) = 3");
    p.model.c = 1.01; /* 3 < 3.03 */
    expect_ok(&p, 1, 6, 0);
    p.model.l = 3;
    p.model.c = 3; /* 3 < 3 * 1 is false */
    expect_fail(&p, ANONKIT_E_VIOLATION, 2, NULL);
    p.model.c = 3.5; /* 3 < 3.5 */
    expect_ok(&p, 1, 6, 0);
    p.model.l = 4; /* fewer than l distinct values */
    p.model.c = 100;
    expect_fail(&p, ANONKIT_E_VIOLATION, 2,
                "class (zip=z, age=1) of 6 rows violates the privacy model: 3 distinct sensitive values, "
                "recursive (c,l)-diversity needs 4");
}

/* Two classes of 4 rows and 2 rows whose QIs are all "*", 10 rows in all. */
static const char *const WITH_STARS = "zip,age,disease\n"
                                      "z1,1,a\nz1,1,b\n*,*,a\nz2,2,a\nz1,1,a\nz2,2,b\n"
                                      "z2,2,a\n*,*,b\nz1,1,b\nz2,2,b\n";

static void test_suppression(void **state)
{
    (void)state;
    verify_params p = params("stars.csv", WITH_STARS, 4);
    p.suppression = 0.2; /* floor(0.2 * 10) = 2: both "*" rows are suppressed */
    expect_ok(&p, 2, 10, 2);
    p.suppression = 0.25; /* floor(2.5) = 2 */
    expect_ok(&p, 2, 10, 2);
    p.suppression = 0.1; /* floor(1) = 1 < 2: the "*" rows must be a class of 4 */
    expect_fail(&p, ANONKIT_E_VIOLATION, 4,
                "2 rows have every quasi-identifier '*', more than the 1 that --suppression 0.1 allows of 10 rows, "
                "and as a class they violate the privacy model: 2 rows, k-anonymity needs 4");
    p.model.k = 2; /* ... which they are under k = 2 */
    expect_ok(&p, 3, 10, 0);
    p.suppression = 0; /* without a share the "*" rows are an ordinary class */
    p.model.k = 4;
    expect_fail(&p, ANONKIT_E_VIOLATION, 4,
                "class (zip=*, age=*) of 2 rows violates the privacy model: 2 rows, k-anonymity needs 4");
    /* suppressed rows are not tested for l-diversity either: the "*" rows hold a and b */
    p.suppression = 0.2;
    p.model.k = 1;
    p.model.l = 2;
    expect_ok(&p, 2, 10, 2);
    p.model.l = 3;
    expect_fail(&p, ANONKIT_E_VIOLATION, 2, NULL);
}

static void test_variance(void **state)
{
    (void)state;
    /* (z1) values 1, 3: mean 2, variance 1; (z2) values 10, 10, 16: mean 12, variance (4+4+16)/3 = 8 */
    const char *text = "zip,age,disease\nz1,1,1\nz2,2,10\nz1,1,3\nz2,2,10\nz2,2,16\n";
    verify_params p = params("variance.csv", text, 1);
    p.model.variance = 1;
    expect_ok(&p, 2, 5, 0);
    p.model.variance = 1.5;
    expect_fail(&p, ANONKIT_E_VIOLATION, 2,
                "class (zip=z1, age=1) of 2 rows violates the privacy model: "
                "variance of the sensitive values 1 < 1.5");
    /* not integers: 0.5 and 2.5 also have variance 1 */
    p = params("variance2.csv", "zip,age,disease\nz1,1,0.5\nz1,1,2.5\n", 1);
    p.model.variance = 1;
    expect_ok(&p, 1, 2, 0);
    p.model.variance = 1.01;
    expect_fail(&p, ANONKIT_E_VIOLATION, 2, NULL);
    p = params("variance3.csv", "zip,age,disease\nz1,1,1\nz1,1,flu\n", 1);
    p.model.variance = 1;
    expect_fail(&p, ANONKIT_E_INPUT, 3, "the sensitive column must be numeric but holds 'flu'");
}

static void test_usage_and_input_errors(void **state)
{
    (void)state;
    verify_params p = params("usage.csv", TWO_CLASSES, 1);
    p.nqi = 0;
    expect_fail(&p, ANONKIT_E_USAGE, 0, "no quasi-identifiers given (--qi)");
    p.nqi = 2;
    p.sensitive = NULL;
    p.model.l = 2;
    expect_fail(&p, ANONKIT_E_USAGE, 0, "--l needs a sensitive column (--sensitive)");
    p.model.l = 0;
    p.model.k = 0;
    expect_fail(&p, ANONKIT_E_USAGE, 0, "--k must be at least 1");
    static const char *const missing[] = {"zip", "town"};
    p.model.k = 1;
    p.qi = missing;
    expect_fail(&p, ANONKIT_E_USAGE, 1, "no column named 'town' (given as a quasi-identifier)");

    p = params("short.csv", "zip,age,disease\nz1,1,a\nz1,1\n", 1);
    expect_fail(&p, ANONKIT_E_INPUT, 3, "expected 3 fields as in the header, found 2");
    p = params("empty.csv", "", 1);
    expect_fail(&p, ANONKIT_E_INPUT, 1, "the file is empty: a header row is needed");
    p = params("header_only.csv", "zip,age,disease\n", 5);
    expect_ok(&p, 0, 0, 0);
}

/* "-" reads standard input, and messages name it "stdin". */
static void test_stdin(void **state)
{
    (void)state;
    verify_params p = params("stdin.csv", TWO_CLASSES, 3);
    assert_non_null(freopen(p.published, "r", stdin));
    p.published = "-";
    expect_fail(&p, ANONKIT_E_VIOLATION, 3, NULL);
    p = params("stdin2.csv", TWO_CLASSES, 2);
    assert_non_null(freopen(p.published, "r", stdin));
    p.published = "-";
    expect_ok(&p, 2, 5, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_k),
        cmocka_unit_test(test_classes_are_texts),
        cmocka_unit_test(test_distinct_l),
        cmocka_unit_test(test_entropy_l),
        cmocka_unit_test(test_recursive_l),
        cmocka_unit_test(test_suppression),
        cmocka_unit_test(test_variance),
        cmocka_unit_test(test_usage_and_input_errors),
        cmocka_unit_test(test_stdin),
    };
    return cmocka_run_group_tests(tests, tu_group_setup, tu_group_teardown);
}
