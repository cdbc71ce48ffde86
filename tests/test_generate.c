/* test_generate.c — tests of the synthetic data generator (src/io/synth.c, through
 * anonkit_generate) and of the binary tuple files it writes (src/io/tuple.c; the
 * tuple module's own tests are in test_tuple.c).
 *
 * Every expectation comes from [LeFevre07] Figure 7 or docs/tuple-format.md, written out
 * here: the column list, the ranges, the commission rule, and the target functions
 * C2, C7, R7, R10, recomputed in floating point from the other columns of each
 * row (the generator computes them in integer hundredths). Nothing is compared
 * with a stored copy of the program's output. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "anonkit/anonkit.h"
#include "io/gsl_load.h"
#include "io/synth.h"
#include "io/tuple.h"
#include "testutil.h"

static const char expected_header[] = "salary,commission,age,elevel,car,zipcode,hvalue,hyears,loan,c2,c7,r7,r10";

/* One parsed CSV record of the generator. */
typedef struct rec {
    long v[9]; /* salary, commission, age, elevel, car, zipcode, hvalue, hyears, loan */
    char c2, c7;
    double r7, r10;
    char r7_text[32], r10_text[32];
} rec;
enum { SALARY, COMMISSION, AGE, ELEVEL, CAR, ZIPCODE, HVALUE, HYEARS, LOAN };

/* A non-negative integer field ending at ',' (digits only). */
static const char *parse_int(const char *p, long *out)
{
    if (*p < '0' || *p > '9') fail_msg("expected digits at '%.20s'", p);
    long v = 0;
    while (*p >= '0' && *p <= '9') v = v * 10 + (*p++ - '0');
    *out = v;
    return p;
}

/* A decimal with exactly two digits after the point: [-]D+.DD */
static const char *parse_money(const char *p, double *out, char *text, char end)
{
    const char *start = p;
    if (*p == '-') p++;
    if (*p < '0' || *p > '9') fail_msg("bad number at '%.20s'", start);
    while (*p >= '0' && *p <= '9') p++;
    if (p[0] != '.' || p[1] < '0' || p[1] > '9' || p[2] < '0' || p[2] > '9' || p[3] != end)
        fail_msg("not a two-decimal number: '%.20s'", start);
    p += 3;
    size_t n = (size_t)(p - start);
    assert_true(n < 32);
    memcpy(text, start, n);
    text[n] = '\0';
    *out = strtod(text, NULL);
    return p;
}

/* Parses one line at *pp (advancing past its '\n'). */
static void parse_line(const char **pp, rec *r)
{
    const char *p = *pp;
    for (int i = 0; i < 9; i++) {
        p = parse_int(p, &r->v[i]);
        if (*p++ != ',') fail_msg("expected ',' after field %d", i + 1);
    }
    r->c2 = *p++;
    if (*p++ != ',') fail_msg("expected ',' after c2");
    r->c7 = *p++;
    if (*p++ != ',') fail_msg("expected ',' after c7");
    p = parse_money(p, &r->r7, r->r7_text, ',') + 1;
    p = parse_money(p, &r->r10, r->r10_text, '\n') + 1;
    *pp = p;
}

/* Skips the header line, checking it. */
static const char *skip_header(const char *text)
{
    size_t n = strlen(expected_header);
    if (strncmp(text, expected_header, n) != 0 || text[n] != '\n')
        fail_msg("header is '%.100s'", text);
    return text + n + 1;
}

static void generate(const char *path, uint64_t rows, uint64_t seed, const char *format)
{
    char err[1024];
    uint64_t used = 0;
    int rc = anonkit_generate(path, rows, &seed, format, NULL, &used, err, sizeof err);
    if (rc != ANONKIT_OK) fail_msg("anonkit_generate: %s", err);
    assert_true(used == seed);
}

/* Pearson chi-square statistic of counts against equal expectation. */
static double chi_square(const uint64_t *count, int bins, uint64_t total)
{
    double e = (double)total / bins, x = 0;
    for (int i = 0; i < bins; i++) x += ((double)count[i] - e) * ((double)count[i] - e) / e;
    return x;
}

/* A loose bound for a chi-square with df degrees of freedom: mean + 6 standard deviations. */
static void expect_uniform(const char *what, const uint64_t *count, int bins, uint64_t total)
{
    double x = chi_square(count, bins, total), df = bins - 1, bound = df + 6 * sqrt(2 * df) + 10;
    if (x > bound) fail_msg("%s: chi-square %.1f over %d bins exceeds %.1f", what, x, bins, bound);
}

static void expect_all_occur(const char *what, const uint64_t *count, int lo, int hi)
{
    for (int v = lo; v <= hi; v++)
        if (!count[v - lo]) fail_msg("%s: the value %d never occurs", what, v);
}

/* ------------------------------------------------------------------------- */

static void test_csv_million_rows(void **state)
{
    (void)state;
    const uint64_t N = 1000000;
    const char *path = tu_path(tu_group_dir, "million.csv");
    generate(path, N, 20240601, "csv");
    size_t len;
    char *text = tu_read_file(path, &len);
    assert_non_null(text);
    assert_true(len > 0 && text[len - 1] == '\n');

    uint64_t age[61] = {0}, elevel[5] = {0}, car[20] = {0}, zip[9] = {0}, hyears[30] = {0};
    uint64_t salary_bins[26] = {0}, commission_bins[26] = {0}, loan_bins[25] = {0}, h_bins[20] = {0};
    /* last digits: wide bins do not see values skipped on a lattice */
    uint64_t salary_digit[10] = {0}, commission_digit[10] = {0}, loan_digit[10] = {0}, hvalue_digit[10] = {0};
    uint64_t rows = 0, with_commission = 0, c2_a = 0, c7_a = 0;
    long salary_min = 1L << 30, salary_max = 0, loan_min = 1L << 30, loan_max = 0;
    const char *p = skip_header(text), *end = text + len;
    rec r;
    while (p < end) {
        parse_line(&p, &r);
        rows++;
        const long s = r.v[SALARY], c = r.v[COMMISSION], a = r.v[AGE], e = r.v[ELEVEL];
        const long z = r.v[ZIPCODE], hv = r.v[HVALUE], hy = r.v[HYEARS], loan = r.v[LOAN];
        /* ranges of Figure 7 */
        if (s < 20000 || s > 150000) fail_msg("row %llu: salary %ld", (unsigned long long)rows, s);
        if (a < 20 || a > 80 || e > 4 || r.v[CAR] < 1 || r.v[CAR] > 20 || z < 1 || z > 9 || hy < 1 || hy > 30 ||
            loan > 500000)
            fail_msg("row %llu: a value out of range", (unsigned long long)rows);
        /* commission: 0 from 75000 on, else uniform in [10000, 75000] */
        if (s >= 75000 && c != 0) fail_msg("row %llu: salary %ld has commission %ld", (unsigned long long)rows, s, c);
        if (s < 75000 && (c < 10000 || c > 75000))
            fail_msg("row %llu: salary %ld has commission %ld", (unsigned long long)rows, s, c);
        /* hvalue = zipcode * h * 100000, h in [0.5, 1.5], rounded to an integer */
        if (2 * hv < z * 100000 || 2 * hv > 3 * z * 100000)
            fail_msg("row %llu: hvalue %ld for zipcode %ld", (unsigned long long)rows, hv, z);
        const double h = (double)hv / (double)(z * 100000);
        /* C2 */
        const int c2 = (a < 40 && s >= 50000 && s <= 100000) || (a >= 40 && a < 60 && s >= 75000 && s <= 125000) ||
                       (a >= 60 && s >= 25000 && s <= 75000);
        if (r.c2 != (c2 ? 'A' : 'B')) fail_msg("row %llu: c2 is %c", (unsigned long long)rows, r.c2);
        /* R7 and C7: the exact value is a multiple of 0.01, so a floating-point
         * result within 0.005 of zero means zero, which is not > 0. */
        const double disposable = 0.67 * (double)(s + c) - 0.2 * (double)loan - 20000.0;
        if (fabs(r.r7 - disposable) > 1e-6)
            fail_msg("row %llu: r7 is %s, expected %.6f", (unsigned long long)rows, r.r7_text, disposable);
        if (r.c7 != (disposable > 0.005 ? 'A' : 'B')) fail_msg("row %llu: c7 is %c", (unsigned long long)rows, r.c7);
        /* R10 */
        const double equity = hy < 20 ? 0.0 : 0.1 * (double)hv * (double)(hy - 20);
        const double r10 = 0.67 * (double)(s + c) - 5000.0 * (double)e + 0.2 * equity - 10000.0;
        if (fabs(r.r10 - r10) > 1e-6)
            fail_msg("row %llu: r10 is %s, expected %.6f", (unsigned long long)rows, r.r10_text, r10);

        age[a - 20]++, elevel[e]++, car[r.v[CAR] - 1]++, zip[z - 1]++, hyears[hy - 1]++;
        salary_bins[(s - 20000) * 26 / 130001]++;
        loan_bins[loan * 25 / 500001]++;
        if (s < 75000) commission_bins[(c - 10000) * 26 / 65001]++, commission_digit[c % 10]++, with_commission++;
        salary_digit[s % 10]++, loan_digit[loan % 10]++, hvalue_digit[hv % 10]++;
        int hb = (int)((h - 0.5) * 20);
        h_bins[hb > 19 ? 19 : hb]++;
        c2_a += r.c2 == 'A';
        c7_a += r.c7 == 'A';
        if (s < salary_min) salary_min = s;
        if (s > salary_max) salary_max = s;
        if (loan < loan_min) loan_min = loan;
        if (loan > loan_max) loan_max = loan;
    }
    free(text);
    assert_true(rows == N);
    expect_all_occur("age", age, 20, 80);
    expect_all_occur("elevel", elevel, 0, 4);
    expect_all_occur("car", car, 1, 20);
    expect_all_occur("zipcode", zip, 1, 9);
    expect_all_occur("hyears", hyears, 1, 30);
    expect_uniform("age", age, 61, N);
    expect_uniform("elevel", elevel, 5, N);
    expect_uniform("car", car, 20, N);
    expect_uniform("zipcode", zip, 9, N);
    expect_uniform("hyears", hyears, 30, N);
    expect_uniform("salary", salary_bins, 26, N);
    expect_uniform("loan", loan_bins, 25, N);
    expect_uniform("commission", commission_bins, 26, with_commission);
    expect_uniform("h", h_bins, 20, N);
    expect_uniform("salary % 10", salary_digit, 10, N);
    expect_uniform("commission % 10", commission_digit, 10, with_commission);
    expect_uniform("loan % 10", loan_digit, 10, N);
    expect_uniform("hvalue % 10", hvalue_digit, 10, N);
    /* the ends of the wide ranges are reached (each value has ~8 and ~2 expected hits) */
    assert_true(salary_min < 20100 && salary_max > 149900);
    assert_true(loan_min < 500 && loan_max > 499500);
    /* P(salary < 75000) = 55000/130001 */
    assert_true(fabs((double)with_commission / N - 55000.0 / 130001.0) < 0.005);
    /* both labels occur often */
    assert_true(c2_a > N / 10 && c2_a < N * 9 / 10);
    assert_true(c7_a > N / 10 && c7_a < N * 9 / 10);
}

/* The target functions of Figure 7 in floating point, compared with the
 * generator's on one row (r7 and r10 within 1e-6 of the exact hundredths). */
static void expect_targets(const synth_row *in)
{
    synth_row r = *in;
    synth_targets(&r);
    const double s = r.salary, c = r.commission, a = r.age, loan = r.loan, hv = r.hvalue, hy = r.hyears;
    const int c2 = (a < 40 && s >= 50000 && s <= 100000) || (a >= 40 && a < 60 && s >= 75000 && s <= 125000) ||
                   (a >= 60 && s >= 25000 && s <= 75000);
    const double disposable = 0.67 * (s + c) - 0.2 * loan - 20000.0;
    const double equity = hy < 20 ? 0.0 : 0.1 * hv * (hy - 20);
    const double r10 = 0.67 * (s + c) - 5000.0 * r.elevel + 0.2 * equity - 10000.0;
    if (r.c2 != (c2 ? 0 : 1)) fail_msg("age %d salary %d: c2 %d", r.age, r.salary, r.c2);
    if (fabs((double)r.r7_cents / 100 - disposable) > 1e-6)
        fail_msg("salary %d commission %d loan %d: r7 %lld/100, expected %.6f", r.salary, r.commission, r.loan,
                 (long long)r.r7_cents, disposable);
    /* the exact value is a multiple of 0.01: within 0.005 of zero is zero, not > 0 */
    if (r.c7 != (disposable > 0.005 ? 0 : 1))
        fail_msg("salary %d commission %d loan %d: c7 %d (disposable %.6f)", r.salary, r.commission, r.loan, r.c7,
                 disposable);
    if (fabs((double)r.r10_cents / 100 - r10) > 1e-6)
        fail_msg("hvalue %d hyears %d elevel %d: r10 %lld/100, expected %.6f", r.hvalue, r.hyears, r.elevel,
                 (long long)r.r10_cents, r10);
}

static void test_targets_at_boundaries(void **state)
{
    (void)state;
    synth_row r;
    memset(&r, 0, sizeof r);
    r.elevel = 2, r.car = 1, r.zipcode = 1, r.hvalue = 100000, r.hyears = 5, r.loan = 100000;
    /* C2: every age and salary edge */
    static const int ages[] = {20, 39, 40, 41, 59, 60, 61, 80};
    static const int salaries[] = {20000, 24999, 25000, 25001, 49999, 50000, 50001, 74999, 75000, 75001,
                                   99999, 100000, 100001, 124999, 125000, 125001, 150000};
    for (size_t i = 0; i < sizeof ages / sizeof ages[0]; i++)
        for (size_t j = 0; j < sizeof salaries / sizeof salaries[0]; j++) {
            r.age = ages[i], r.salary = salaries[j], r.commission = salaries[j] < 75000 ? 10000 : 0;
            expect_targets(&r);
        }
    /* C7: disposable exactly 0 (0.67 * 40000 - 0.2 * 34000 - 20000), +0.01, -0.01 */
    static const int dispose[][3] = {{20000, 20000, 34000}, {20003, 20000, 34010}, {20017, 20000, 34057}};
    static const int sign[] = {0, 1, -1};
    for (int i = 0; i < 3; i++) {
        r.age = 30, r.salary = dispose[i][0], r.commission = dispose[i][1], r.loan = dispose[i][2];
        expect_targets(&r);
        synth_row t = r;
        synth_targets(&t);
        assert_int_equal(t.r7_cents, sign[i]);
        assert_int_equal(t.c7, sign[i] > 0 ? 0 : 1);
    }
    /* R10: the equity threshold and every education level */
    for (int hy = 1; hy <= 30; hy++)
        for (int e = 0; e <= 4; e++) {
            r.hyears = hy, r.elevel = e, r.hvalue = 1349999;
            expect_targets(&r);
        }
    /* random rows across the whole ranges (not only the generator's) */
    tu_rng g = {7};
    for (int i = 0; i < 200000; i++) {
        r.salary = 20000 + (int)tu_below(&g, 130001);
        r.commission = (int)tu_below(&g, 75001);
        r.age = 20 + (int)tu_below(&g, 61);
        r.elevel = (int)tu_below(&g, 5);
        r.zipcode = 1 + (int)tu_below(&g, 9);
        r.hvalue = r.zipcode * 50000 + (int)tu_below(&g, (uint64_t)r.zipcode * 100000 + 1);
        r.hyears = 1 + (int)tu_below(&g, 30);
        r.loan = (int)tu_below(&g, 500001);
        expect_targets(&r);
    }
}

/* hvalue = zipcode * h * 100000 rounded to the nearest integer, h = 0.5 + bits / 2^53. */
static void test_hvalue_rounding(void **state)
{
    (void)state;
    tu_rng g = {11};
    const uint64_t top = (UINT64_C(1) << 53) - 1;
    for (int i = 0; i < 300000; i++) {
        const int32_t zip = 1 + (int32_t)(i % 9);
        uint64_t bits = i < 9 ? 0 : i < 18 ? top : i < 27 ? UINT64_C(1) << 52 : tu_next(&g) >> 11;
        const long double exact = (long double)zip * (0.5L + (long double)bits / 9007199254740992.0L) * 100000.0L;
        const int32_t hv = synth_hvalue(zip, bits);
        if (fabsl((long double)hv - exact) > 0.5L + 1e-6L)
            fail_msg("zipcode %d bits %llu: hvalue %d, exact %.6Lf", zip, (unsigned long long)bits, hv, exact);
        const long double frac = exact - floorl(exact);
        if (fabsl(frac - 0.5L) > 1e-6L && hv != (int32_t)floorl(exact + 0.5L))
            fail_msg("zipcode %d bits %llu: hvalue %d is not %.6Lf rounded", zip, (unsigned long long)bits, hv, exact);
    }
    assert_int_equal(synth_hvalue(1, 0), 50000);
    assert_int_equal(synth_hvalue(9, 0), 450000);
    assert_int_equal(synth_hvalue(9, top), 1350000);
}

/* Many draws reach both ends of every range, and nothing beyond them. */
static void test_range_ends(void **state)
{
    (void)state;
    ak_rng rng;
    ak_rng_seed(&rng, 123);
    int32_t lo[9], hi[9];
    for (int i = 0; i < 9; i++) lo[i] = INT32_MAX, hi[i] = INT32_MIN;
    double h_lo = 2, h_hi = 0;
    int32_t c_lo = INT32_MAX, c_hi = INT32_MIN;
    synth_row r;
    for (int i = 0; i < 4000000; i++) {
        synth_next(&rng, SYNTH_SALARY_UNIFORM, NULL, &r);
        const int32_t v[9] = {r.salary, r.commission, r.age, r.elevel, r.car, r.zipcode, r.hvalue, r.hyears, r.loan};
        for (int j = 0; j < 9; j++) {
            if (v[j] < lo[j]) lo[j] = v[j];
            if (v[j] > hi[j]) hi[j] = v[j];
        }
        if (r.salary < 75000) {
            if (r.commission < c_lo) c_lo = r.commission;
            if (r.commission > c_hi) c_hi = r.commission;
        }
        const double h = (double)r.hvalue / (r.zipcode * 100000.0);
        if (h < h_lo) h_lo = h;
        if (h > h_hi) h_hi = h;
    }
    /* expected hits of each end: salary ~31, commission ~26, loan ~8 */
    static const int32_t want_lo[9] = {20000, 0, 20, 0, 1, 1, 50000, 1, 0};
    static const int32_t want_hi[9] = {150000, 75000, 80, 4, 20, 9, 0, 30, 500000};
    for (int j = 0; j < 9; j++) {
        if (lo[j] != want_lo[j]) fail_msg("column %d: smallest value %d, expected %d", j, lo[j], want_lo[j]);
        if (j != HVALUE && hi[j] != want_hi[j]) fail_msg("column %d: largest value %d, expected %d", j, hi[j], want_hi[j]);
    }
    assert_int_equal(c_lo, 10000);
    assert_int_equal(c_hi, 75000);
    assert_true(hi[HVALUE] <= 1350000 && hi[HVALUE] > 1349000);
    assert_true(h_lo >= 0.5 && h_lo < 0.5001);
    assert_true(h_hi <= 1.5 && h_hi > 1.4999);
}

/* Normal salary ([LeFevre07] §5.6): over 1,000,000 draws the mean is 85,000 and the
 * variance 1.1e8 (within 1 %), the share within one standard deviation of
 * the mean is the normal 68.27 %, every value lies in [20000, 150000], and
 * the other columns follow the same rules (commission only below 75,000).
 * An unknown distribution is refused. */
static void test_normal_salary(void **state)
{
    (void)state;
    ak_rng rng;
    ak_rng_seed(&rng, 5);
    const int n = 1000000;
    double sum = 0, sumsq = 0;
    int within = 0;
    synth_row r;
    gsl_api gsl; /* (synth_write loads GSL itself) */
    ak_error gerr;
    assert_int_equal(gsl_api_open(&gsl, &gerr), ANONKIT_OK);
    for (int i = 0; i < n; i++) {
        synth_next(&rng, SYNTH_SALARY_NORMAL, &gsl, &r);
        assert_true(r.salary >= 20000 && r.salary <= 150000);
        assert_true(r.salary >= 75000 ? r.commission == 0 : r.commission >= 10000 && r.commission <= 75000);
        assert_true(r.age >= 20 && r.age <= 80 && r.loan >= 0 && r.loan <= 500000);
        sum += r.salary;
        sumsq += (double)r.salary * r.salary;
        within += fabs(r.salary - 85000.0) <= sqrt(1.1e8);
    }
    gsl_api_close(&gsl);
    const double mean = sum / n, var = sumsq / n - mean * mean;
    print_message("normal salary: mean %.1f, variance %.4g, within one sd %.4f\n", mean, var, (double)within / n);
    assert_true(fabs(mean - 85000) < 100);
    assert_true(fabs(var / 1.1e8 - 1) < 0.01);
    assert_true(fabs((double)within / n - 0.6827) < 0.003);
    char err[1024];
    const uint64_t seed = 1;
    const char *dir = tu_mkdtemp();
    assert_int_equal(anonkit_generate(tu_path(dir, "x.csv"), 10, &seed, "csv", "lognormal", NULL, err, sizeof err),
                     ANONKIT_E_USAGE);
    assert_non_null(strstr(err, "--salary must be uniform or normal"));
    assert_int_equal(access(tu_path(dir, "x.csv"), F_OK), -1);
    tu_rmtree(dir);
}

static int same_file(const char *a, const char *b)
{
    size_t la, lb;
    char *ta = tu_read_file(a, &la), *tb = tu_read_file(b, &lb);
    assert_non_null(ta);
    assert_non_null(tb);
    int same = la == lb && memcmp(ta, tb, la) == 0;
    free(ta);
    free(tb);
    return same;
}

static void test_seed_reproducible(void **state)
{
    (void)state;
    const char *a = tu_path(tu_group_dir, "s1a.csv"), *b = tu_path(tu_group_dir, "s1b.csv");
    const char *c = tu_path(tu_group_dir, "s2.csv"), *d = tu_path(tu_group_dir, "s1long.csv");
    generate(a, 100000, 1, "csv");
    generate(b, 100000, 1, NULL);
    generate(c, 100000, 2, "csv");
    generate(d, 100001, 1, "csv");
    assert_true(same_file(a, b));
    assert_false(same_file(a, c));
    /* streaming: the first rows of a seed do not depend on how many follow */
    size_t la, ld;
    char *ta = tu_read_file(a, &la), *td = tu_read_file(d, &ld);
    assert_true(ld > la && memcmp(ta, td, la) == 0);
    free(ta);
    free(td);
    const char *e = tu_path(tu_group_dir, "s1a.bin"), *f = tu_path(tu_group_dir, "s1b.bin");
    const char *g = tu_path(tu_group_dir, "s2.bin");
    generate(e, 50000, 1, "binary");
    generate(f, 50000, 1, "binary");
    generate(g, 50000, 2, "binary");
    assert_true(same_file(e, f));
    assert_false(same_file(e, g));
}

static void test_random_seed(void **state)
{
    (void)state;
    const char *a = tu_path(tu_group_dir, "r1.csv"), *b = tu_path(tu_group_dir, "r2.csv");
    const char *c = tu_path(tu_group_dir, "r1again.csv");
    char err[256];
    uint64_t s1 = 0, s2 = 0;
    assert_int_equal(anonkit_generate(a, 1000, NULL, "csv", NULL, &s1, err, sizeof err), ANONKIT_OK);
    assert_int_equal(anonkit_generate(b, 1000, NULL, "csv", NULL, &s2, err, sizeof err), ANONKIT_OK);
    assert_true(s1 != s2);
    assert_false(same_file(a, b));
    generate(c, 1000, s1, "csv"); /* the reported seed reproduces the run */
    assert_true(same_file(a, c));
}

static void test_zero_rows_and_errors(void **state)
{
    (void)state;
    const char *path = tu_path(tu_group_dir, "zero.csv");
    generate(path, 0, 5, "csv");
    char *text = tu_read_file(path, NULL);
    char expected[256];
    snprintf(expected, sizeof expected, "%s\n", expected_header);
    assert_string_equal(text, expected);
    free(text);

    char err[256];
    uint64_t seed = 1;
    const char *bad = tu_path(tu_group_dir, "bad.csv");
    assert_int_equal(anonkit_generate(bad, 10, &seed, "xml", NULL, NULL, err, sizeof err), ANONKIT_E_USAGE);
    assert_non_null(strstr(err, "'xml'"));
    assert_int_equal(access(bad, F_OK), -1);
    const char *nodir = tu_path(tu_group_dir, "no/such/dir/out.csv");
    assert_int_equal(anonkit_generate(nodir, 10, &seed, "csv", NULL, NULL, err, sizeof err), ANONKIT_E_IO);
    assert_non_null(strstr(err, "no/such/dir/out.csv"));
}

/* ------------------------------------------------------------ binary ----- */

static tuple_reader *open_reader(const char *path, size_t block)
{
    tuple_reader *r = NULL;
    ak_error err;
    ak_err_clear(&err);
    if (tuple_reader_open(&r, path, block, &err) != ANONKIT_OK) fail_msg("tuple_reader_open: %s", err.message);
    return r;
}

static void test_binary_matches_csv(void **state)
{
    (void)state;
    const uint64_t N = 200000;
    const char *csv = tu_path(tu_group_dir, "rt.csv"), *bin = tu_path(tu_group_dir, "rt.bin");
    generate(csv, N, 777, "csv");
    generate(bin, N, 777, "binary");

    const size_t block = 4099; /* rows of 60 bytes straddle its blocks */
    tuple_reader *r = open_reader(bin, block);
    const tuple_schema *s = tuple_reader_schema(r);
    static const char *const names[13] = {"salary", "commission", "age", "elevel", "car", "zipcode", "hvalue",
                                          "hyears", "loan", "c2", "c7", "r7", "r10"};
    assert_int_equal(s->ncolumns, 13);
    assert_int_equal(s->row_width, 9 * 4 + 2 * 4 + 2 * 8);
    uint32_t offset = 0;
    for (int i = 0; i < 13; i++) {
        const tuple_column *c = &s->columns[i];
        assert_string_equal(c->name, names[i]);
        assert_int_equal(c->offset, offset);
        tuple_type want = i < 9 ? TUPLE_I32 : i < 11 ? TUPLE_CODE : TUPLE_F64;
        assert_int_equal(c->type, want);
        offset += want == TUPLE_F64 ? 8 : 4;
        if (want == TUPLE_CODE) {
            assert_int_equal(c->nlabels, 2);
            assert_string_equal(c->labels[0], "A");
            assert_string_equal(c->labels[1], "B");
        } else {
            assert_int_equal(c->nlabels, 0);
        }
    }
    assert_true(tuple_reader_rows(r) == N);

    char *text = tu_read_file(csv, NULL);
    const char *p = skip_header(text);
    ak_error err;
    ak_err_clear(&err);
    uint64_t seen = 0, calls = 0;
    const uint8_t *rows;
    size_t n;
    int rc;
    rec want;
    while ((rc = tuple_read_rows(r, &rows, &n, &err)) == 1) {
        calls++;
        for (size_t i = 0; i < n; i++, seen++) {
            const uint8_t *row = rows + i * s->row_width;
            parse_line(&p, &want);
            for (int c = 0; c < 9; c++)
                if (tuple_get_i32(row, s->columns[c].offset) != want.v[c])
                    fail_msg("row %llu column %s: %d in binary, %ld in CSV", (unsigned long long)seen + 1, names[c],
                             tuple_get_i32(row, s->columns[c].offset), want.v[c]);
            assert_int_equal(tuple_get_code(row, s->columns[9].offset), want.c2 - 'A');
            assert_int_equal(tuple_get_code(row, s->columns[10].offset), want.c7 - 'A');
            /* bit-for-bit the double of the CSV text */
            if (tuple_get_f64(row, s->columns[11].offset) != want.r7 ||
                tuple_get_f64(row, s->columns[12].offset) != want.r10)
                fail_msg("row %llu: r7/r10 %.17g/%.17g in binary, %s/%s in CSV", (unsigned long long)seen + 1,
                         tuple_get_f64(row, s->columns[11].offset), tuple_get_f64(row, s->columns[12].offset),
                         want.r7_text, want.r10_text);
        }
    }
    assert_int_equal(rc, 0);
    assert_true(seen == N);
    assert_true(*p == '\0');
    free(text);
    /* one read for the header, then the rows in blocks */
    struct stat st;
    assert_int_equal(stat(bin, &st), 0);
    const uint64_t header = 216, data = (uint64_t)st.st_size - header - 16;
    assert_true(data == N * 60);
    assert_true(tuple_reader_blocks(r) == 1 + (data + block - 1) / block);
    assert_true(calls >= (data + block - 1) / block - 1);

    /* rewind and read again one row at a time */
    assert_int_equal(tuple_reader_rewind(r, &err), ANONKIT_OK);
    const uint8_t *row;
    uint64_t again = 0;
    int64_t salary_sum = 0;
    while ((rc = tuple_read(r, &row, &err)) == 1) {
        again++;
        salary_sum += tuple_get_i32(row, 0);
    }
    assert_int_equal(rc, 0);
    assert_true(again == N);
    assert_true(salary_sum > (int64_t)N * 20000 && salary_sum < (int64_t)N * 150000);
    tuple_reader_free(r);
}

/* synth_write with a small odd block size writes the same bytes in more blocks. */
static void test_binary_block_size(void **state)
{
    (void)state;
    const char *ref = tu_path(tu_group_dir, "bs_ref.bin"), *small = tu_path(tu_group_dir, "bs_small.bin");
    generate(ref, 3000, 99, "binary");
    FILE *f = fopen(small, "wb");
    assert_non_null(f);
    synth_stats st;
    ak_error err;
    ak_err_clear(&err);
    assert_int_equal(synth_write(f, small, 3000, 99, SYNTH_BINARY, SYNTH_SALARY_UNIFORM, 1000, &st, &err), ANONKIT_OK);
    assert_int_equal(fclose(f), 0);
    assert_true(same_file(ref, small));
    const uint64_t bytes = 216 + 3000 * 60 + 16;
    assert_true(st.rows == 3000 && st.bytes == bytes);
    assert_true(st.blocks == (bytes + 999) / 1000);

    /* and CSV in small blocks is the same text as the default */
    const char *cref = tu_path(tu_group_dir, "bs_ref.csv"), *csmall = tu_path(tu_group_dir, "bs_small.csv");
    generate(cref, 3000, 99, "csv");
    f = fopen(csmall, "wb");
    assert_non_null(f);
    assert_int_equal(synth_write(f, csmall, 3000, 99, SYNTH_CSV, SYNTH_SALARY_UNIFORM, 300, &st, &err), ANONKIT_OK);
    assert_int_equal(fclose(f), 0);
    assert_true(same_file(cref, csmall));
    assert_true(st.blocks > 3000 * 50 / 300);
}

/* A schema with every type, written and read back with odd block sizes. */
/* ------------------------------------------------------ reader errors ---- */

static void write_bytes(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

/* Opens path and expects failure with status code and every given phrase in the message. */
static void expect_open_error(const char *path, int code, const char *phrase1, const char *phrase2)
{
    tuple_reader *r = NULL;
    ak_error err;
    ak_err_clear(&err);
    int rc = tuple_reader_open(&r, path, 0, &err);
    if (rc != code) fail_msg("%s: status %d, expected %d (%s)", path, rc, code, err.message);
    assert_null(r);
    assert_string_equal(err.file, path);
    if (phrase1 && !strstr(err.message, phrase1)) fail_msg("message '%s' lacks '%s'", err.message, phrase1);
    if (phrase2 && !strstr(err.message, phrase2)) fail_msg("message '%s' lacks '%s'", err.message, phrase2);
}

static void test_reader_errors(void **state)
{
    (void)state;
    const char *good = tu_path(tu_group_dir, "err_good.bin");
    generate(good, 100, 3, "binary");
    size_t len;
    char *data = tu_read_file(good, &len);
    assert_true(len == 216 + 100 * 60 + 16);
    const char *p = tu_path(tu_group_dir, "err.bin");

    /* bad magic */
    char *copy = malloc(len);
    memcpy(copy, data, len);
    memcpy(copy, "AKTUPLE2", 8);
    write_bytes(p, copy, len);
    expect_open_error(p, ANONKIT_E_INPUT, "bad magic", NULL);
    write_bytes(p, "salary,commission\n1,2\n", 22);
    expect_open_error(p, ANONKIT_E_INPUT, "bad magic", NULL);

    /* unknown version */
    memcpy(copy, data, len);
    copy[8] = 2;
    write_bytes(p, copy, len);
    expect_open_error(p, ANONKIT_E_INPUT, "version 2", NULL);

    /* unknown column type (the first column's type field is at 24) */
    memcpy(copy, data, len);
    copy[24] = 9;
    write_bytes(p, copy, len);
    expect_open_error(p, ANONKIT_E_INPUT, "unknown type 9", "salary");

    /* row width that does not match the columns */
    memcpy(copy, data, len);
    copy[20] = 61;
    write_bytes(p, copy, len);
    expect_open_error(p, ANONKIT_E_INPUT, "row width 61", NULL);
    free(copy);

    /* truncated: empty, inside the fixed header, inside the columns */
    write_bytes(p, "", 0);
    expect_open_error(p, ANONKIT_E_INPUT, "truncated", NULL);
    write_bytes(p, data, 5);
    expect_open_error(p, ANONKIT_E_INPUT, "truncated", NULL);
    write_bytes(p, data, 20);
    expect_open_error(p, ANONKIT_E_INPUT, "truncated", NULL);
    write_bytes(p, data, 100);
    expect_open_error(p, ANONKIT_E_INPUT, "truncated", NULL);
    /* cut at a row boundary: no end marker */
    write_bytes(p, data, 216 + 50 * 60);
    expect_open_error(p, ANONKIT_E_INPUT, "truncated", "no end marker after 50 rows");
    /* cut inside a row */
    write_bytes(p, data, 216 + 50 * 60 + 17);
    expect_open_error(p, ANONKIT_E_INPUT, "truncated", "short (17 of 60 bytes)");
    /* only the header */
    write_bytes(p, data, 216);
    expect_open_error(p, ANONKIT_E_INPUT, "no end marker after 0 rows", NULL);
    /* a short row in the middle, the end marker intact */
    char *cut = malloc(len);
    memcpy(cut, data, 216 + 60 * 10);
    memcpy(cut + 216 + 60 * 10, data + 216 + 60 * 10 + 7, len - (216 + 60 * 10 + 7));
    write_bytes(p, cut, len - 7);
    expect_open_error(p, ANONKIT_E_INPUT, "short row", NULL);
    /* a whole row missing, the end marker intact */
    memcpy(cut, data, 216);
    memcpy(cut + 216, data + 216 + 60, len - 216 - 60);
    write_bytes(p, cut, len - 60);
    expect_open_error(p, ANONKIT_E_INPUT, "truncated", "says 100 rows, the file holds 99");
    free(cut);
    free(data);

    /* not there; not a regular file */
    expect_open_error(tu_path(tu_group_dir, "nosuch.bin"), ANONKIT_E_IO, "cannot open", NULL);
    expect_open_error(tu_group_dir, ANONKIT_E_INPUT, "regular file", NULL);
}

/* A file cut while it is being read: the reader stops with an error, not a short read. */
static void test_reader_file_shrinks(void **state)
{
    (void)state;
    const char *p = tu_path(tu_group_dir, "shrink.bin");
    generate(p, 10000, 4, "binary");
    tuple_reader *r = open_reader(p, 4096);
    ak_error err;
    ak_err_clear(&err);
    const uint8_t *rows;
    size_t n;
    assert_int_equal(tuple_read_rows(r, &rows, &n, &err), 1);
    assert_int_equal(truncate(p, 216 + 60 * 5000), 0);
    int rc;
    uint64_t seen = n;
    while ((rc = tuple_read_rows(r, &rows, &n, &err)) == 1) seen += n;
    assert_int_equal(rc, ANONKIT_E_INPUT);
    assert_true(seen <= 5000);
    assert_non_null(strstr(err.message, "truncated"));
    tuple_reader_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_csv_million_rows),
        cmocka_unit_test(test_targets_at_boundaries),
        cmocka_unit_test(test_hvalue_rounding),
        cmocka_unit_test(test_range_ends),
        cmocka_unit_test(test_normal_salary),
        cmocka_unit_test(test_seed_reproducible),
        cmocka_unit_test(test_random_seed),
        cmocka_unit_test(test_zero_rows_and_errors),
        cmocka_unit_test(test_binary_matches_csv),
        cmocka_unit_test(test_binary_block_size),
        cmocka_unit_test(test_reader_errors),
        cmocka_unit_test(test_reader_file_shrinks),
    };
    return cmocka_run_group_tests(tests, tu_group_setup, tu_group_teardown);
}
