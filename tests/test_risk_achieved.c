/* test_risk_achieved.c — `anonkit check --achieved` (src/verify/achieved.c)
 * against the verifier: on random published tables, the file passes
 * anonkit_check at every achieved parameter and fails one step beyond it
 * (k + 1, l + 1, l or c or the variance a hair stronger); and the achieved
 * values equal a direct computation here from the rows. */
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
#include "testutil.h"

#define MAX_ROWS 120

static void set(anonkit_job *job, anonkit_option o, const char *v)
{
    if (anonkit_job_set(job, o, v) != ANONKIT_OK) fail_msg("set %s=%s: %s", anonkit_option_name(o), v, anonkit_errmsg(job));
}

/* anonkit_check of path with the given settings (NULL-terminated option/value pairs). */
static int check(const char *path, const char *sensitive, const char *suppression, ...)
{
    anonkit_job *job = anonkit_job_create();
    set(job, ANONKIT_OPT_QI, "a0,a1");
    if (sensitive) set(job, ANONKIT_OPT_SENSITIVE, sensitive);
    if (suppression) set(job, ANONKIT_OPT_SUPPRESSION, suppression);
    va_list ap;
    va_start(ap, suppression);
    for (;;) {
        const int o = va_arg(ap, int);
        if (o < 0) break;
        set(job, (anonkit_option)o, va_arg(ap, const char *));
    }
    va_end(ap);
    const int rc = anonkit_check(job, path, NULL);
    if (rc != ANONKIT_OK && rc != ANONKIT_E_VIOLATION) fail_msg("check: %s", anonkit_errmsg(job));
    anonkit_job_free(job);
    return rc;
}

static json_t *achieved(const char *path, const char *sensitive, const char *suppression)
{
    anonkit_job *job = anonkit_job_create();
    set(job, ANONKIT_OPT_QI, "a0,a1");
    if (sensitive) set(job, ANONKIT_OPT_SENSITIVE, sensitive);
    if (suppression) set(job, ANONKIT_OPT_SUPPRESSION, suppression);
    set(job, ANONKIT_OPT_ACHIEVED, "true");
    anonkit_result *r = NULL;
    if (anonkit_check(job, path, &r) != ANONKIT_OK) fail_msg("check --achieved: %s", anonkit_errmsg(job));
    json_error_t e;
    json_t *root = json_loads(anonkit_result_json(r), 0, &e);
    assert_non_null(root);
    json_t *a = json_incref(json_object_get(root, "achieved"));
    json_decref(root);
    anonkit_result_free(r);
    anonkit_job_free(job);
    return a;
}

static const char *num(double v)
{
    static char buf[8][64];
    static int i;
    i = (i + 1) % 8;
    snprintf(buf[i], sizeof buf[i], "%.17g", v);
    return buf[i];
}

static void test_pass_at_achieved_fail_beyond(void **state)
{
    (void)state;
    tu_rng rng = {99};
    const char *dir = tu_mkdtemp();
    const char *path = tu_path(dir, "pub.csv");
    int rounds_with_suppression = 0;
    for (int round = 0; round < 80; round++) {
        const size_t nrows = 2 + tu_below(&rng, MAX_ROWS - 1);
        const int d0 = 1 + (int)tu_below(&rng, 3), d1 = 1 + (int)tu_below(&rng, 3), ns = 1 + (int)tu_below(&rng, 5);
        const int stars = tu_below(&rng, 3) == 0 ? (int)tu_below(&rng, 4) : 0;
        int a0[MAX_ROWS], a1[MAX_ROWS], s[MAX_ROWS];
        double v[MAX_ROWS];
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fprintf(f, "a0,a1,s,v\n");
        for (size_t r = 0; r < nrows; r++) {
            const int star = (int)r < stars;
            a0[r] = star ? -1 : (int)tu_below(&rng, (uint64_t)d0);
            a1[r] = star ? -1 : (int)tu_below(&rng, (uint64_t)d1);
            s[r] = tu_below(&rng, 3) ? 0 : (int)tu_below(&rng, (uint64_t)ns);
            v[r] = tu_below(&rng, 2) ? (double)tu_below(&rng, 10) : (double)tu_below(&rng, 1000) / 7.0;
            if (star) fprintf(f, "*,*,d%d,%.17g\n", s[r], v[r]);
            else fprintf(f, "x%d,y%d,d%d,%.17g\n", a0[r], a1[r], s[r], v[r]);
        }
        fclose(f);
        const char *supp = stars && (size_t)stars * 10 <= nrows ? "0.1" : NULL;
        rounds_with_suppression += supp != NULL;
        json_t *a = achieved(path, "s", supp);
        /* k: the smallest class, computed here (the all-"*" rows left out when suppressed) */
        uint64_t kmin = UINT64_MAX;
        for (size_t r = 0; r < nrows; r++) {
            if (supp && a0[r] < 0) continue;
            uint64_t c = 0;
            for (size_t o = 0; o < nrows; o++) c += a0[o] == a0[r] && a1[o] == a1[r];
            if (c < kmin) kmin = c;
        }
        const uint64_t k = (uint64_t)json_integer_value(json_object_get(a, "k"));
        if (kmin != UINT64_MAX) assert_int_equal(k, kmin);
        if (kmin == UINT64_MAX) { /* every row suppressed: nothing to test */
            json_decref(a);
            continue;
        }
        char kt[32];
        snprintf(kt, sizeof kt, "%llu", (unsigned long long)k);
        assert_int_equal(check(path, NULL, supp, ANONKIT_OPT_K, kt, -1), ANONKIT_OK);
        snprintf(kt, sizeof kt, "%llu", (unsigned long long)k + 1);
        assert_int_equal(check(path, NULL, supp, ANONKIT_OPT_K, kt, -1), ANONKIT_E_VIOLATION);

        const double ld = (double)json_integer_value(json_object_get(a, "l_distinct"));
        assert_int_equal(check(path, "s", supp, ANONKIT_OPT_L, num(ld), ANONKIT_OPT_L_VARIANT, "distinct", -1), ANONKIT_OK);
        assert_int_equal(check(path, "s", supp, ANONKIT_OPT_L, num(ld + 1), ANONKIT_OPT_L_VARIANT, "distinct", -1),
                         ANONKIT_E_VIOLATION);
        const double le = json_real_value(json_object_get(a, "l_entropy"));
        assert_int_equal(check(path, "s", supp, ANONKIT_OPT_L, num(le), ANONKIT_OPT_L_VARIANT, "entropy", -1), ANONKIT_OK);
        assert_int_equal(check(path, "s", supp, ANONKIT_OPT_L, num(le * (1 + 1e-9)), ANONKIT_OPT_L_VARIANT, "entropy", -1),
                         ANONKIT_E_VIOLATION);
        const double lp = json_real_value(json_object_get(a, "l_probabilistic"));
        assert_int_equal(check(path, "s", supp, ANONKIT_OPT_L, num(lp), ANONKIT_OPT_L_VARIANT, "probabilistic", -1),
                         ANONKIT_OK);
        assert_int_equal(check(path, "s", supp, ANONKIT_OPT_L, num(lp * (1 + 1e-9)), ANONKIT_OPT_L_VARIANT,
                               "probabilistic", -1),
                         ANONKIT_E_VIOLATION);
        json_t *rec = json_object_get(a, "recursive");
        assert_int_equal(json_array_size(rec), (size_t)ld);
        for (size_t i = 0; i < json_array_size(rec); i++) {
            json_t *e = json_array_get(rec, i);
            const double l = (double)json_integer_value(json_object_get(e, "l"));
            const double c = json_real_value(json_object_get(e, "c_above"));
            assert_int_equal(check(path, "s", supp, ANONKIT_OPT_L, num(l), ANONKIT_OPT_L_VARIANT, "recursive",
                                   ANONKIT_OPT_C, num(c * (1 + 1e-9)), -1),
                             ANONKIT_OK);
            assert_int_equal(check(path, "s", supp, ANONKIT_OPT_L, num(l), ANONKIT_OPT_L_VARIANT, "recursive",
                                   ANONKIT_OPT_C, num(c), -1),
                             ANONKIT_E_VIOLATION);
        }
        assert_true(json_is_null(json_object_get(a, "variance"))); /* s is not numeric */
        json_decref(a);

        /* variance of the numeric column v */
        a = achieved(path, "v", supp);
        const double var = json_real_value(json_object_get(a, "variance"));
        if (var > 0)
            assert_int_equal(check(path, "v", supp, ANONKIT_OPT_VARIANCE, num(var), -1), ANONKIT_OK);
        assert_int_equal(check(path, "v", supp, ANONKIT_OPT_VARIANCE, num(var * (1 + 1e-9) + 1e-12), -1),
                         ANONKIT_E_VIOLATION);
        json_decref(a);
    }
    assert_true(rounds_with_suppression > 3);
    tu_rmtree(dir);
}

/* anonkit_risk's JSON, built only when anonkit_result_json asks for it, is
 * byte for byte the document the run writes with ANONKIT_OPT_JSON (built
 * then at once), with and without the population models, weights and
 * SUDA2; asked twice, the same text. */
static void test_risk_json_on_demand(void **state)
{
    (void)state;
    tu_rng rng = {2026};
    const char *dir = tu_mkdtemp();
    const char *path = tu_path(dir, "t.csv");
    char jpath[4096];
    snprintf(jpath, sizeof jpath, "%s", tu_path(dir, "risk.json"));
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "a0,a1,w\n");
    for (int r = 0; r < 300; r++)
        fprintf(f, "x%d,y%d,%u\n", (int)tu_below(&rng, 9), (int)tu_below(&rng, 7), 1 + (unsigned)tu_below(&rng, 9));
    assert_int_equal(fclose(f), 0);
    for (int variant = 0; variant < 4; variant++) {
        char *text[2] = {NULL, NULL};
        for (int to_file = 0; to_file < 2; to_file++) {
            anonkit_job *job = anonkit_job_create();
            set(job, ANONKIT_OPT_INPUT, path);
            set(job, ANONKIT_OPT_QI, "a0,a1");
            if (variant == 1) set(job, ANONKIT_OPT_SAMPLING_FRACTION, "0.1");
            if (variant == 2) set(job, ANONKIT_OPT_WEIGHT, "w");
            if (variant == 3) set(job, ANONKIT_OPT_SUDA, "2");
            if (to_file) set(job, ANONKIT_OPT_JSON, jpath);
            anonkit_result *r = NULL;
            if (anonkit_risk(job, &r) != ANONKIT_OK) fail_msg("risk: %s", anonkit_errmsg(job));
            const char *j = anonkit_result_json(r);
            assert_non_null(j);
            assert_ptr_equal(anonkit_result_json(r), j);
            text[to_file] = strdup(j);
            assert_non_null(text[to_file]);
            if (to_file) { /* the file holds the text and a line end */
                size_t len = 0;
                char *written = tu_read_file(jpath, &len);
                assert_non_null(written);
                assert_int_equal(len, strlen(j) + 1);
                assert_memory_equal(written, j, strlen(j));
                free(written);
            }
            anonkit_result_free(r);
            anonkit_job_free(job);
        }
        assert_string_equal(text[0], text[1]);
        free(text[0]);
        free(text[1]);
    }
    tu_rmtree(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pass_at_achieved_fail_beyond),
        cmocka_unit_test(test_risk_json_on_demand),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
