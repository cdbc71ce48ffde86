/* test_rothko_missing.c — missing numbers out of core (docs/hierarchies.md,
 * "Missing values"): random tables whose numeric QIs hold empty cells and a
 * --missing token, at rates from a few cells to a third of the column, under
 * k-anonymity and l-diversity. Rothko-T, on budgets small enough to
 * repartition, publishes what the in-memory Mondrian does (as multisets of
 * rows); Rothko-S publishes a table the verifier accepts; in both no class
 * mixes missing and present values of a numeric QI, and every row is
 * published or counted as suppressed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "anonkit/anonkit.h"
#include "testutil.h"

static void must_set(anonkit_job *job, anonkit_option o, const char *v)
{
    if (anonkit_job_set(job, o, v) != ANONKIT_OK) fail_msg("set %s=%s: %s", anonkit_option_name(o), v, anonkit_errmsg(job));
}

/* in.csv: id, numeric QIs a0.., sensitive s; a QI's cell is missing (empty
 * or NA) with probability miss[q] / 1000. */
static void generate(tu_rng *rng, const char *dir, int nqi, const int *miss, size_t n)
{
    FILE *f = fopen(tu_path(dir, "in.csv"), "w");
    assert_non_null(f);
    fprintf(f, "id");
    for (int q = 0; q < nqi; q++) fprintf(f, ",a%d", q);
    fprintf(f, ",s\n");
    const int sdomain = 2 + (int)tu_below(rng, 5);
    for (size_t i = 0; i < n; i++) {
        fprintf(f, "%zu", i);
        for (int q = 0; q < nqi; q++) {
            if ((int)tu_below(rng, 1000) < miss[q]) fprintf(f, tu_below(rng, 2) ? ",NA" : ",");
            else if (q == 1 && tu_below(rng, 6) == 0) fprintf(f, ",%d.25", (int)tu_below(rng, 300) - 40);
            else fprintf(f, ",%d", (int)tu_below(rng, 300) - 40);
        }
        fprintf(f, ",s%d\n", (int)tu_below(rng, (uint64_t)sdomain));
    }
    fclose(f);
}

/* The records of a file (one a line here), the header first, the rest sorted. */
static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static char **records(const char *path, size_t *n, char **text)
{
    *text = tu_read_file(path, NULL);
    assert_non_null(*text);
    size_t cap = 1024, count = 0;
    char **rec = malloc(cap * sizeof *rec);
    assert_non_null(rec);
    for (char *p = *text, *start = *text; *p; p++)
        if (*p == '\n') {
            *p = '\0';
            if (count == cap) {
                char **grown = realloc(rec, (cap *= 2) * sizeof *rec);
                assert_non_null(grown);
                rec = grown;
            }
            rec[count++] = start;
            start = p + 1;
        }
    *n = count;
    return rec;
}

/* Field `col` of CSV line `line` (no quotes here) into buf. */
static void field(const char *line, int col, char *buf, size_t size)
{
    for (int c = 0; c < col; c++) line = strchr(line, ',') + 1;
    const char *end = strchr(line, ',');
    const size_t len = end ? (size_t)(end - line) : strlen(line);
    snprintf(buf, size, "%.*s", (int)len, line);
}

/* Every published row (in input order, --keep-order) of `out` is missing in
 * a numeric QI exactly where the input is, unless suppressed ("*"). */
static void assert_missing_apart(const char *in, const char *out, int nqi, int iter)
{
    char *ti, *to;
    size_t ni, no;
    char **a = records(in, &ni, &ti), **b = records(out, &no, &to);
    if (ni != no) fail_msg("iteration %d: %zu rows in, %zu out", iter, ni, no);
    for (size_t i = 1; i < ni; i++)
        for (int q = 0; q < nqi; q++) {
            char x[64], y[64];
            field(a[i], q + 1, x, sizeof x);
            field(b[i], q, y, sizeof y);
            if (!strcmp(y, "*")) continue;
            const int xm = !*x || !strcmp(x, "NA"), ym = !*y || !strcmp(y, "NA");
            if (xm != ym) fail_msg("iteration %d, row %zu, a%d: '%s' published as '%s'", iter, i, q, x, y);
        }
    free(a);
    free(b);
    free(ti);
    free(to);
}

/* A class that mixed missing and present values of a numeric QI would be
 * published with "*" there: a row has "*" in every QI (suppressed) or in none. */
static void assert_no_mixed_class(const char *out, int nqi, int iter)
{
    char *text;
    size_t n;
    char **rec = records(out, &n, &text);
    for (size_t i = 1; i < n; i++) {
        int stars = 0;
        for (int q = 0; q < nqi; q++) {
            char y[64];
            field(rec[i], q, y, sizeof y);
            stars += !strcmp(y, "*");
        }
        if (stars && stars != nqi) fail_msg("iteration %d: %s: a class mixes missing and present: %s", iter, out, rec[i]);
    }
    free(rec);
    free(text);
}

/* Fails unless both files hold the same records as multisets. */
static void assert_same_records(const char *x, const char *y, int iter)
{
    char *tx, *ty;
    size_t nx, ny;
    char **a = records(x, &nx, &tx), **b = records(y, &ny, &ty);
    if (nx != ny) fail_msg("iteration %d: %zu and %zu records", iter, nx, ny);
    qsort(a + 1, nx - 1, sizeof *a, cmp_str);
    qsort(b + 1, ny - 1, sizeof *b, cmp_str);
    for (size_t i = 0; i < nx; i++)
        if (strcmp(a[i], b[i])) fail_msg("iteration %d: rows differ:\n  %s\n  %s", iter, a[i], b[i]);
    free(a);
    free(b);
    free(tx);
    free(ty);
}

static anonkit_job *job_for(const char *dir, int nqi, const char *out, const char *k, int with_l)
{
    anonkit_job *job = anonkit_job_create();
    char qi[64] = "";
    for (int q = 0; q < nqi; q++) {
        char name[16];
        snprintf(name, sizeof name, "%sa%d", q ? "," : "", q);
        strcat(qi, name);
    }
    must_set(job, ANONKIT_OPT_QI, qi);
    must_set(job, ANONKIT_OPT_SENSITIVE, "s");
    must_set(job, ANONKIT_OPT_IDENTIFIER, "id");
    must_set(job, ANONKIT_OPT_MISSING, "NA");
    must_set(job, ANONKIT_OPT_INPUT, tu_path(dir, "in.csv"));
    must_set(job, ANONKIT_OPT_OUTPUT, out);
    must_set(job, ANONKIT_OPT_SEED, "5");
    must_set(job, ANONKIT_OPT_THREADS, "1");
    must_set(job, ANONKIT_OPT_K, k);
    if (with_l) must_set(job, ANONKIT_OPT_L, "2");
    return job;
}

/* Mondrian, Rothko-T (equal as multisets) and Rothko-S (verified) on random tables with missing numbers. */
static void test_missing_numbers_out_of_core(void **state)
{
    (void)state;
    tu_rng rng = {4242};
    static const int rates[] = {0, 1, 3, 30, 150, 330};
    int runs = 0, suppressed_runs = 0;
    for (int iter = 0; iter < 18; iter++) {
        const char *tmp = tu_mkdtemp();
        char dir[4096];
        snprintf(dir, sizeof dir, "%s", tmp);
        const int nqi = 2 + (int)tu_below(&rng, 2);
        int miss[3];
        for (int q = 0; q < nqi; q++) miss[q] = rates[tu_below(&rng, 6)];
        miss[0] = rates[1 + iter % 5]; /* at least one QI with missing values */
        const size_t n = 2500 + tu_below(&rng, 4000);
        generate(&rng, dir, nqi, miss, n);
        char k[16];
        snprintf(k, sizeof k, "%d", 2 + (int)tu_below(&rng, 12));
        const int with_l = iter % 2;
        static const char *const algorithms[] = {"mondrian", "rothko-t", "rothko-s"};
        char outs[3][4200], spill[4200];
        snprintf(spill, sizeof spill, "%s/spill", dir);
        mkdir(spill, 0700);
        int rcs[3];
        uint64_t suppressed[3] = {0, 0, 0};
        for (int a = 0; a < 3; a++) {
            snprintf(outs[a], sizeof outs[a], "%s/%s.csv", dir, algorithms[a]);
            anonkit_job *job = job_for(dir, nqi, outs[a], k, with_l);
            must_set(job, ANONKIT_OPT_ALGORITHM, algorithms[a]);
            if (a) {
                must_set(job, ANONKIT_OPT_MEMORY, a == 1 ? "256K" : "1M");
                must_set(job, ANONKIT_OPT_BLOCK_SIZE, "2K");
                must_set(job, ANONKIT_OPT_TMPDIR, spill);
            } else {
                must_set(job, ANONKIT_OPT_KEEP_ORDER, "true");
            }
            anonkit_result *res = NULL;
            rcs[a] = anonkit_anonymize(job, &res);
            if (rcs[a] == ANONKIT_OK) { /* every row published or counted as suppressed */
                char what[64];
                snprintf(what, sizeof what, "iteration %d, %s", iter, algorithms[a]);
                must_set(job, ANONKIT_OPT_SUPPRESSION, "0.5"); /* the verifier's limit for rows the separation suppressed */
                assert_int_equal(tu_verify_suppressed(job, outs[a], what, NULL, &suppressed[a]), n);
                assert_no_mixed_class(outs[a], nqi, iter);
            } else if (rcs[a] != ANONKIT_E_INELIGIBLE) {
                fail_msg("iteration %d, %s: %s", iter, algorithms[a], anonkit_errmsg(job));
            }
            anonkit_result_free(res);
            anonkit_job_free(job);
        }
        if (rcs[0] != rcs[1] || rcs[0] != rcs[2]) fail_msg("iteration %d: results %d %d %d", iter, rcs[0], rcs[1], rcs[2]);
        if (rcs[0] == ANONKIT_OK) {
            assert_missing_apart(tu_path(dir, "in.csv"), outs[0], nqi, iter);
            assert_same_records(outs[0], outs[1], iter);
            assert_true(suppressed[0] == suppressed[1]);
            runs++;
            suppressed_runs += suppressed[0] > 0;
        }
        tu_rmtree(dir);
    }
    print_message("%d runs, %d with rows suppressed by the separation\n", runs, suppressed_runs);
    assert_true(runs >= 14);
    assert_true(suppressed_runs >= 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_missing_numbers_out_of_core),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
