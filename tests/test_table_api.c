/* test_table_api.c — the table API (include/anonkit/anonkit.h, "Tables in
 * memory"): a table built from arrays (and the same one row by row) is
 * anonymized with a hierarchy given as a table, and every published column
 * equals the one the file path publishes from the same data written as CSV
 * (same seed); copied doubles come back bit for bit; check and metrics take
 * tables; a failing run names "the input table", never a private path, and
 * returns no table; text offsets that start past 0 (an Arrow slice) work. */
#define _GNU_SOURCE /* open_memstream */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "anonkit/anonkit.h"
#include "common/error.h"
#include "common/interval.h"
#include "io/memtable.h"
#include "testutil.h"

#include "table_data.h"

/* The table path and the file path publish the same columns, for one algorithm. */
static void same_as_file(const char *algorithm, int by_rows)
{
    const char *dir = tu_mkdtemp();
    char in[4200], out[4200], hier[4200];
    snprintf(in, sizeof in, "%s/in.csv", dir);
    snprintf(out, sizeof out, "%s/out.csv", dir);
    snprintf(hier, sizeof hier, "%s/sex.csv", dir);
    data *d = calloc(1, sizeof *d);
    assert_non_null(d);
    make_data(d, 11);
    write_csv(d, in);
    tu_write_file(hier, "female;*\nmale;*\n");

    anonkit_job *fj = job_for(algorithm), *tj = job_for(algorithm);
    assert_int_equal(anonkit_job_set(fj, ANONKIT_OPT_INPUT, in), ANONKIT_OK);
    assert_int_equal(anonkit_job_set(fj, ANONKIT_OPT_OUTPUT, out), ANONKIT_OK);
    char spec[4300];
    snprintf(spec, sizeof spec, "sex=%s", hier);
    assert_int_equal(anonkit_job_set(fj, ANONKIT_OPT_HIERARCHY, spec), ANONKIT_OK);
    if (!strcmp(algorithm, "rothko-t")) {
        assert_int_equal(anonkit_job_set(fj, ANONKIT_OPT_MEMORY, "8M"), ANONKIT_OK);
        assert_int_equal(anonkit_job_set(tj, ANONKIT_OPT_MEMORY, "8M"), ANONKIT_OK);
    }
    anonkit_result *fr = NULL;
    run_ok(fj, anonkit_anonymize(fj, &fr));
    assert_null(anonkit_result_table(fr));

    anonkit_table *t = by_rows ? table_by_rows(d) : table_of(d);
    anonkit_table *h = sex_hierarchy();
    assert_int_equal(anonkit_job_set_input_table(tj, t), ANONKIT_OK);
    assert_int_equal(anonkit_job_set_hierarchy_table(tj, "sex", h), ANONKIT_OK);
    anonkit_table_free(h); /* a hierarchy table is read during the call */
    assert_int_equal(anonkit_job_set_output_table(tj), ANONKIT_OK);
    anonkit_result *tr = NULL;
    run_ok(tj, anonkit_anonymize(tj, &tr));
    anonkit_table_free(t); /* the input table: borrowed until the run returned */
    const anonkit_table *pub = anonkit_result_table(tr);
    assert_non_null(pub);
    assert_int_equal(anonkit_result_rows_published(tr), anonkit_result_rows_published(fr));
    anonkit_table *file_pub = read_published(out);
    assert_same_table(pub, file_pub);

    /* check and metrics on tables */
    anonkit_result *cr = NULL;
    run_ok(tj, anonkit_check_table(tj, pub, &cr));
    assert_int_equal(anonkit_result_rows_read(cr), ROWS);
    anonkit_result_free(cr);
    anonkit_table *orig = table_of(d);
    anonkit_result *mr = NULL;
    run_ok(tj, anonkit_metrics_table(tj, orig, pub, &mr));
    assert_non_null(strstr(anonkit_result_json(mr), "\"gcp\""));
    anonkit_result_free(mr);
    anonkit_table_free(orig);

    anonkit_table_free(file_pub);
    anonkit_result_free(fr);
    anonkit_result_free(tr);
    anonkit_job_free(fj);
    anonkit_job_free(tj);
    free(d);
    tu_rmtree(dir);
}

static void test_mondrian(void **state) { (void)state; same_as_file("mondrian", 0); }
static void test_rows(void **state) { (void)state; same_as_file("mondrian", 1); }
static void test_incognito(void **state) { (void)state; same_as_file("incognito", 0); }
static void test_hilbert(void **state) { (void)state; same_as_file("hilbert", 0); }
static void test_rothko_t(void **state) { (void)state; same_as_file("rothko-t", 0); }

/* No private copy, no CSV text: with the job's temporary folder missing (so
 * that any spool would fail), an input table is anonymized into a table and
 * into files; the files equal, byte for byte, what the file path writes from
 * the same data as CSV (shuffled, and with the order kept, which streams the
 * copied columns from the table). A run that does need the copy (a
 * hierarchy built from the data) fails there, which shows the folder would
 * be noticed. */
static void test_no_spool(void **state)
{
    (void)state;
    const char *dir = tu_mkdtemp();
    char in[4200], nowhere[4200];
    snprintf(in, sizeof in, "%s/in.csv", dir);
    snprintf(nowhere, sizeof nowhere, "%s/missing-folder", dir);
    data *d = calloc(1, sizeof *d);
    assert_non_null(d);
    make_data(d, 23);
    /* the copied columns income and job side by side, both plain (no quotes): one unit of the writer */
    anonkit_table *t = anonkit_table_create();
    assert_int_equal(anonkit_table_add_int64(t, "age", d->age, NULL, ROWS), ANONKIT_OK);
    assert_int_equal(anonkit_table_add_text(t, "zip", d->zip_off, d->zip, NULL, ROWS), ANONKIT_OK);
    assert_int_equal(anonkit_table_add_text(t, "sex", d->sex_off, d->sex, NULL, ROWS), ANONKIT_OK);
    assert_int_equal(anonkit_table_add_double(t, "income", d->income, d->income_missing, ROWS), ANONKIT_OK);
    assert_int_equal(anonkit_table_add_text(t, "job", d->job_off, d->job, d->job_missing, ROWS), ANONKIT_OK);
    FILE *csv = fopen(in, "w");
    ak_error cerr = {0};
    assert_non_null(csv);
    assert_int_equal(memtable_write_csv(t, csv, ',', 1, in, &cerr), ANONKIT_OK);
    assert_int_equal(fclose(csv), 0);
    char hier[4300];
    snprintf(hier, sizeof hier, "sex=%s/sex.csv", dir);
    tu_write_file(hier + 4, "female;*\nmale;*\n");
    for (int keep = 0; keep < 2; keep++) {
        char fout[4300], tout[4300];
        snprintf(fout, sizeof fout, "%s/file-%d.csv", dir, keep);
        snprintf(tout, sizeof tout, "%s/table-%d.csv", dir, keep);
        anonkit_job *fj = job_for("mondrian"), *tj = job_for("mondrian");
        assert_int_equal(anonkit_job_set(fj, ANONKIT_OPT_INPUT, in), ANONKIT_OK);
        assert_int_equal(anonkit_job_set(fj, ANONKIT_OPT_OUTPUT, fout), ANONKIT_OK);
        assert_int_equal(anonkit_job_set_input_table(tj, t), ANONKIT_OK);
        assert_int_equal(anonkit_job_set(tj, ANONKIT_OPT_OUTPUT, tout), ANONKIT_OK);
        assert_int_equal(anonkit_job_set(tj, ANONKIT_OPT_TMPDIR, nowhere), ANONKIT_OK);
        assert_int_equal(anonkit_job_set(fj, ANONKIT_OPT_HIERARCHY, hier), ANONKIT_OK);
        assert_int_equal(anonkit_job_set(tj, ANONKIT_OPT_HIERARCHY, hier), ANONKIT_OK);
        if (keep) {
            assert_int_equal(anonkit_job_set(fj, ANONKIT_OPT_KEEP_ORDER, "1"), ANONKIT_OK);
            assert_int_equal(anonkit_job_set(tj, ANONKIT_OPT_KEEP_ORDER, "1"), ANONKIT_OK);
        }
        run_ok(fj, anonkit_anonymize(fj, NULL));
        run_ok(tj, anonkit_anonymize(tj, NULL));
        size_t fl, tl;
        char *ftext = tu_read_file(fout, &fl), *ttext = tu_read_file(tout, &tl);
        assert_int_equal(fl, tl);
        assert_memory_equal(ftext, ttext, fl);
        free(ftext);
        free(ttext);
        /* into a table, and the file path's output read back is that table */
        assert_int_equal(anonkit_job_set_output_table(tj), ANONKIT_OK);
        anonkit_result *r = NULL;
        run_ok(tj, anonkit_anonymize(tj, &r));
        anonkit_table *back = read_published(fout);
        assert_same_table(anonkit_result_table(r), back);
        /* the verifier reads the published table as it is (no copy either), and can fail */
        anonkit_result *cr = NULL;
        run_ok(tj, anonkit_check_table(tj, anonkit_result_table(r), &cr));
        assert_int_equal(anonkit_result_rows_read(cr), ROWS);
        anonkit_result_free(cr);
        assert_int_equal(anonkit_job_set(tj, ANONKIT_OPT_K, "200"), ANONKIT_OK);
        assert_int_equal(anonkit_check_table(tj, anonkit_result_table(r), &cr), ANONKIT_E_VIOLATION);
        assert_null(cr);
        assert_non_null(strstr(anonkit_errmsg(tj), "the published table"));
        anonkit_table_free(back);
        anonkit_result_free(r);
        anonkit_job_free(fj);
        anonkit_job_free(tj);
    }
    anonkit_job *job = job_for("mondrian");
    assert_int_equal(anonkit_job_set_input_table(job, t), ANONKIT_OK);
    assert_int_equal(anonkit_job_set_output_table(job), ANONKIT_OK);
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_TMPDIR, nowhere), ANONKIT_OK);
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_HIERARCHY, "sex=auto"), ANONKIT_OK);
    assert_true(anonkit_anonymize(job, NULL) < 0);
    assert_non_null(strstr(anonkit_errmsg(job), "missing-folder"));
    anonkit_job_free(job);
    anonkit_table_free(t);
    free(d);
    tu_rmtree(dir);
}

/* A table large enough to be loaded in two pieces of rows on two threads
 * (65,536 rows and more) publishes what its CSV file publishes. */
static void test_two_pieces(void **state)
{
    (void)state;
    enum { N = 70001 };
    int64_t *age = malloc(N * sizeof *age), *off = malloc((N + 1) * sizeof *off);
    double *income = malloc(N * sizeof *income);
    char *city = malloc(N * 8);
    assert_true(age && off && income && city);
    tu_rng rng = {31};
    off[0] = 0;
    for (size_t r = 0; r < N; r++) {
        age[r] = (int64_t)tu_below(&rng, 90);
        income[r] = (double)tu_below(&rng, 100000); /* integral: the load can be cut in two (no decimals) */
        char buf[8];
        snprintf(buf, sizeof buf, "c%u", (unsigned)tu_below(&rng, 50));
        put_text(off, city, r, buf);
    }
    anonkit_table *t = anonkit_table_create();
    assert_int_equal(anonkit_table_add_int64_ref(t, "age", age, NULL, N), ANONKIT_OK);
    assert_int_equal(anonkit_table_add_double_ref(t, "income", income, NULL, N), ANONKIT_OK);
    assert_int_equal(anonkit_table_add_text(t, "city", off, city, NULL, N), ANONKIT_OK);
    const char *dir = tu_mkdtemp();
    char in[4200], out[4200];
    snprintf(in, sizeof in, "%s/in.csv", dir);
    snprintf(out, sizeof out, "%s/out.csv", dir);
    FILE *f = fopen(in, "w");
    ak_error err = {0};
    assert_non_null(f);
    assert_int_equal(memtable_write_csv(t, f, ',', 1, in, &err), ANONKIT_OK);
    assert_int_equal(fclose(f), 0);
    anonkit_job *fj = anonkit_job_create(), *tj = anonkit_job_create();
    anonkit_job *jobs[2] = {fj, tj};
    for (int i = 0; i < 2; i++) {
        assert_int_equal(anonkit_job_set(jobs[i], ANONKIT_OPT_QI, "age,income"), ANONKIT_OK);
        assert_int_equal(anonkit_job_set(jobs[i], ANONKIT_OPT_K, "7"), ANONKIT_OK);
        assert_int_equal(anonkit_job_set(jobs[i], ANONKIT_OPT_SEED, "3"), ANONKIT_OK);
        assert_int_equal(anonkit_job_set(jobs[i], ANONKIT_OPT_THREADS, "2"), ANONKIT_OK);
    }
    assert_int_equal(anonkit_job_set(fj, ANONKIT_OPT_INPUT, in), ANONKIT_OK);
    assert_int_equal(anonkit_job_set(fj, ANONKIT_OPT_OUTPUT, out), ANONKIT_OK);
    assert_int_equal(anonkit_job_set_input_table(tj, t), ANONKIT_OK);
    assert_int_equal(anonkit_job_set_output_table(tj), ANONKIT_OK);
    anonkit_result *r = NULL;
    run_ok(fj, anonkit_anonymize(fj, NULL));
    run_ok(tj, anonkit_anonymize(tj, &r));
    anonkit_table *back = read_published(out);
    assert_same_table(anonkit_result_table(r), back);
    /* a generalized column in dictionary form: its codes give its texts */
    const int32_t *codes;
    uint32_t count;
    const int64_t *doff, *roff;
    const char *dbytes, *rbytes;
    const anonkit_table *pub = anonkit_result_table(r);
    assert_int_equal(anonkit_table_column_codes(pub, 0, &codes, &count, &doff, &dbytes), ANONKIT_OK);
    assert_true(count > 1 && count < N);
    assert_int_equal(anonkit_table_column_text(pub, 0, &roff, &rbytes), ANONKIT_OK);
    uint8_t *seen = calloc(count, 1);
    assert_non_null(seen);
    for (size_t i = 0; i < N; i++) {
        assert_true(codes[i] >= 0 && (uint32_t)codes[i] < count);
        seen[codes[i]] = 1;
        assert_int_equal(roff[i + 1] - roff[i], doff[codes[i] + 1] - doff[codes[i]]);
        assert_memory_equal(rbytes + roff[i], dbytes + doff[codes[i]], (size_t)(roff[i + 1] - roff[i]));
    }
    for (uint32_t v = 0; v < count; v++) assert_true(seen[v]); /* only the values used ("*" of no suppressed row: none) */
    free(seen);
    assert_int_equal(anonkit_table_column_codes(pub, 2, &codes, &count, &doff, &dbytes), ANONKIT_E_USAGE); /* copied */
    anonkit_table_free(back);
    anonkit_result_free(r);
    anonkit_job_free(fj);
    anonkit_job_free(tj);
    anonkit_table_free(t); /* (after the run: the job borrowed it, and it age and income) */
    free(age);
    free(income);
    free(off);
    free(city);
    tu_rmtree(dir);
}

/* A text column given in dictionary form (codes into distinct values, -1
 * and an empty value missing, value offsets past 0) reads back as the same
 * column given row by row, and a run publishes the same table from either. */
static void test_text_codes(void **state)
{
    (void)state;
    enum { N = 40 };
    static const char vals[] = "xxred,bluegreen";
    const int64_t voff[] = {2, 6, 6, 10, 15}; /* "red,", "", "blue", "green" */
    int32_t codes[N];
    int64_t off[N + 1], age[N];
    char bytes[N * 8];
    uint8_t miss[N];
    tu_rng rng = {5};
    off[0] = 0;
    for (int r = 0; r < N; r++) {
        codes[r] = (int32_t)tu_below(&rng, 5) - 1;
        age[r] = 20 + (int64_t)tu_below(&rng, 3);
        miss[r] = codes[r] < 0 || codes[r] == 1;
        const char *v = miss[r] ? "" : vals + voff[codes[r]];
        const size_t len = miss[r] ? 0 : (size_t)(voff[codes[r] + 1] - voff[codes[r]]);
        memcpy(bytes + off[r], v, len);
        off[r + 1] = off[r] + (int64_t)len;
    }
    anonkit_table *a = anonkit_table_create(), *b = anonkit_table_create();
    assert_int_equal(anonkit_table_add_int64(a, "age", age, NULL, N), ANONKIT_OK);
    assert_int_equal(anonkit_table_add_int64(b, "age", age, NULL, N), ANONKIT_OK);
    assert_int_equal(anonkit_table_add_text_codes(a, "colour", codes, N, voff, vals, 4), ANONKIT_OK);
    assert_int_equal(anonkit_table_add_text(b, "colour", off, bytes, miss, N), ANONKIT_OK);
    /* numbers as text, one value ("x") used by no row: the copy published is int64 either way */
    static const char nvals[] = "712x";
    const int64_t noff[] = {0, 1, 3, 4};
    int32_t ncodes[N];
    int64_t nrow_off[N + 1];
    char nbytes[N * 2];
    nrow_off[0] = 0;
    for (int r = 0; r < N; r++) {
        ncodes[r] = (int32_t)tu_below(&rng, 2);
        const size_t len = (size_t)(noff[ncodes[r] + 1] - noff[ncodes[r]]);
        memcpy(nbytes + nrow_off[r], nvals + noff[ncodes[r]], len);
        nrow_off[r + 1] = nrow_off[r] + (int64_t)len;
    }
    assert_int_equal(anonkit_table_add_text_codes(a, "num", ncodes, N, noff, nvals, 3), ANONKIT_OK);
    assert_int_equal(anonkit_table_add_text(b, "num", nrow_off, nbytes, NULL, N), ANONKIT_OK);
    assert_same_table(a, b);
    const int32_t bad[1] = {4};
    assert_int_equal(anonkit_table_add_text_codes(a, "more", bad, 1, voff, vals, 4), ANONKIT_E_USAGE);
    anonkit_result *r[2];
    anonkit_table *t[2] = {a, b};
    for (int i = 0; i < 2; i++) {
        anonkit_job *job = anonkit_job_create();
        assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_QI, "age"), ANONKIT_OK);
        assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_K, "3"), ANONKIT_OK);
        assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_SEED, "9"), ANONKIT_OK);
        assert_int_equal(anonkit_job_set_input_table(job, t[i]), ANONKIT_OK);
        assert_int_equal(anonkit_job_set_output_table(job), ANONKIT_OK);
        run_ok(job, anonkit_anonymize(job, &r[i]));
        anonkit_job_free(job);
    }
    assert_same_table(anonkit_result_table(r[0]), anonkit_result_table(r[1]));
    /* the codes given copied through in dictionary form, the text given row by row */
    const int32_t *pc;
    uint32_t pcount;
    const int64_t *po;
    const char *pb;
    assert_int_equal(anonkit_table_column_codes(anonkit_result_table(r[0]), 1, &pc, &pcount, &po, &pb), ANONKIT_OK);
    assert_int_equal(anonkit_table_column_codes(anonkit_result_table(r[1]), 1, &pc, &pcount, &po, &pb), ANONKIT_E_USAGE);
    assert_int_equal(anonkit_table_column_kind(anonkit_result_table(r[0]), 2), ANONKIT_COLUMN_INT64);
    anonkit_result_free(r[0]);
    anonkit_result_free(r[1]);
    anonkit_table_free(a);
    anonkit_table_free(b);
}

/* recode reads an input table and builds its output table without CSV text
 * (and without a private copy: the temporary folder is missing), and the
 * table is the file path's output read back. */
static void test_recode_table(void **state)
{
    (void)state;
    const char *dir = tu_mkdtemp();
    char in[4200], pub[4200], rules[4200], out[4200], nowhere[4200], hier[4300];
    snprintf(in, sizeof in, "%s/in.csv", dir);
    snprintf(pub, sizeof pub, "%s/pub.csv", dir);
    snprintf(rules, sizeof rules, "%s/rules.csv", dir);
    snprintf(out, sizeof out, "%s/out.csv", dir);
    snprintf(nowhere, sizeof nowhere, "%s/missing-folder", dir);
    snprintf(hier, sizeof hier, "sex=%s/sex.csv", dir);
    tu_write_file(hier + 4, "female;*\nmale;*\n");
    data *d = calloc(1, sizeof *d);
    assert_non_null(d);
    make_data(d, 41);
    write_csv(d, in);
    anonkit_job *aj = job_for("mondrian");
    assert_int_equal(anonkit_job_set(aj, ANONKIT_OPT_INPUT, in), ANONKIT_OK);
    assert_int_equal(anonkit_job_set(aj, ANONKIT_OPT_OUTPUT, pub), ANONKIT_OK);
    assert_int_equal(anonkit_job_set(aj, ANONKIT_OPT_RULES, rules), ANONKIT_OK);
    assert_int_equal(anonkit_job_set(aj, ANONKIT_OPT_HIERARCHY, hier), ANONKIT_OK);
    run_ok(aj, anonkit_anonymize(aj, NULL));
    anonkit_job_free(aj);

    anonkit_job *fj = anonkit_job_create(), *tj = anonkit_job_create();
    assert_int_equal(anonkit_job_set(fj, ANONKIT_OPT_RULES, rules), ANONKIT_OK);
    assert_int_equal(anonkit_job_set(tj, ANONKIT_OPT_RULES, rules), ANONKIT_OK);
    assert_int_equal(anonkit_job_set(fj, ANONKIT_OPT_INPUT, in), ANONKIT_OK);
    assert_int_equal(anonkit_job_set(fj, ANONKIT_OPT_OUTPUT, out), ANONKIT_OK);
    anonkit_table *t = table_of(d);
    assert_int_equal(anonkit_job_set_input_table(tj, t), ANONKIT_OK);
    assert_int_equal(anonkit_job_set_output_table(tj), ANONKIT_OK);
    assert_int_equal(anonkit_job_set(tj, ANONKIT_OPT_TMPDIR, nowhere), ANONKIT_OK);
    anonkit_result *r = NULL;
    run_ok(fj, anonkit_recode(fj, NULL));
    run_ok(tj, anonkit_recode(tj, &r));
    anonkit_table *back = read_published(out);
    assert_non_null(anonkit_result_table(r));
    assert_same_table(anonkit_result_table(r), back);
    assert_int_equal(anonkit_table_rows(back), ROWS);
    anonkit_table_free(back);
    anonkit_result_free(r);
    anonkit_job_free(fj);
    anonkit_job_free(tj);
    anonkit_table_free(t);
    free(d);
    tu_rmtree(dir);
}

/* With k 1 and no QI generalized, every column comes back as it went in:
 * int64, doubles bit for bit, text, missing values. */
static void test_round_trip(void **state)
{
    (void)state;
    data *d = calloc(1, sizeof *d);
    assert_non_null(d);
    make_data(d, 3);
    static const double odd[] = {0.1, 1.0 / 3, 1e-300, -2.5e17, 123456789.123456789, 5e-324};
    for (size_t i = 0; i < sizeof odd / sizeof *odd; i++) d->income[i] = odd[i], d->income_missing[i] = 0;
    anonkit_table *t = table_of(d);
    anonkit_job *job = anonkit_job_create();
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_QI, "age"), ANONKIT_OK);
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_K, "1"), ANONKIT_OK);
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_KEEP_ORDER, "1"), ANONKIT_OK);
    assert_int_equal(anonkit_job_set_input_table(job, t), ANONKIT_OK);
    assert_int_equal(anonkit_job_set_output_table(job), ANONKIT_OK);
    anonkit_result *r = NULL;
    assert_int_equal(anonkit_anonymize(job, &r), ANONKIT_OK);
    anonkit_table *pub = anonkit_result_take_table(r);
    assert_null(anonkit_result_table(r));
    /* job: "" is missing; its mask and the table's agree */
    assert_same_table(pub, t);
    anonkit_table_free(pub);
    anonkit_table_free(t);
    anonkit_result_free(r);
    anonkit_job_free(job);
    free(d);
}

/* Errors: the message names the input table; no table is returned. */
static void test_errors(void **state)
{
    (void)state;
    data *d = calloc(1, sizeof *d);
    assert_non_null(d);
    make_data(d, 5);
    anonkit_table *t = table_of(d);
    anonkit_job *job = anonkit_job_create();
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_QI, "age,nope"), ANONKIT_OK);
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_K, "2"), ANONKIT_OK);
    assert_int_equal(anonkit_job_set_input_table(job, t), ANONKIT_OK);
    assert_int_equal(anonkit_job_set_output_table(job), ANONKIT_OK);
    anonkit_result *r = (anonkit_result *)1;
    assert_true(anonkit_anonymize(job, &r) < 0);
    assert_null(r);
    assert_non_null(strstr(anonkit_errmsg(job), "nope"));
    assert_null(strstr(anonkit_errmsg(job), "/proc/"));
    anonkit_job_free(job);

    /* k larger than the table */
    job = anonkit_job_create();
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_QI, "age"), ANONKIT_OK);
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_K, "1000"), ANONKIT_OK);
    assert_int_equal(anonkit_job_set_input_table(job, t), ANONKIT_OK);
    assert_int_equal(anonkit_job_set_output_table(job), ANONKIT_OK);
    assert_true(anonkit_anonymize(job, &r) < 0);
    assert_null(r);
    anonkit_job_free(job);

    /* the table's own errors */
    const double v[2] = {1, 2};
    assert_int_equal(anonkit_table_add_double(t, "age", v, NULL, 2), ANONKIT_E_USAGE);
    assert_non_null(strstr(anonkit_table_errmsg(t), "age"));
    assert_int_equal(anonkit_table_add_double(t, "other", v, NULL, 2), ANONKIT_E_USAGE); /* rows differ */
    const char *f[1] = {"x"};
    assert_int_equal(anonkit_table_append_row(t, f, NULL, 1), ANONKIT_E_USAGE);
    anonkit_table_free(t);

    /* "table:" is no output of the command line's file API without the call */
    job = anonkit_job_create();
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_QI, "a"), ANONKIT_OK);
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_INPUT, "table:"), ANONKIT_OK);
    assert_true(anonkit_anonymize(job, NULL) < 0);
    anonkit_job_free(job);
    free(d);
}

/* Offsets of an Arrow slice start past 0; NaN is missing. */
static void test_slice(void **state)
{
    (void)state;
    anonkit_table *t = anonkit_table_create();
    const int64_t off[] = {3, 5, 8};
    const double v[] = {1.5, NAN};
    assert_int_equal(anonkit_table_add_text(t, "s", off, "xxxabcde", NULL, 2), ANONKIT_OK);
    assert_int_equal(anonkit_table_add_double(t, "v", v, NULL, 2), ANONKIT_OK);
    const int64_t *o;
    const char *b;
    assert_int_equal(anonkit_table_column_text(t, 0, &o, &b), ANONKIT_OK);
    assert_int_equal(o[0], 0);
    assert_memory_equal(b, "abcde", 5);
    assert_non_null(anonkit_table_column_missing(t, 1));
    assert_int_equal(anonkit_table_column_missing(t, 1)[1], 1);
    assert_null(anonkit_table_column_missing(t, 0));
    assert_null(anonkit_table_column_double(t, 0));
    assert_int_equal(anonkit_table_column_text(t, 1, &o, &b), ANONKIT_E_USAGE);
    anonkit_table_free(t);

    /* row by row: empty texts (no bytes at all), a missing field, a bad number */
    t = anonkit_table_create();
    assert_int_equal(anonkit_table_add_text(t, "e", NULL, NULL, NULL, 0), ANONKIT_OK);
    assert_int_equal(anonkit_table_add_int64(t, "n", NULL, NULL, 0), ANONKIT_OK);
    const char *r1[2] = {"", "7"}, *r2[2] = {NULL, NULL}, *r3[2] = {"x", "seven"};
    assert_int_equal(anonkit_table_append_row(t, r1, NULL, 2), ANONKIT_OK);
    assert_int_equal(anonkit_table_append_row(t, r2, NULL, 2), ANONKIT_OK);
    assert_int_equal(anonkit_table_append_row(t, r3, NULL, 2), ANONKIT_E_INPUT);
    assert_non_null(strstr(anonkit_table_errmsg(t), "seven"));
    assert_int_equal(anonkit_table_rows(t), 2);
    assert_int_equal(anonkit_table_column_int64(t, 1)[0], 7);
    assert_int_equal(anonkit_table_column_missing(t, 1)[1], 1);
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    assert_non_null(f);
    ak_error err = {0};
    assert_int_equal(memtable_write_csv(t, f, ',', 1, "mem", &err), ANONKIT_OK);
    fclose(f);
    assert_string_equal(text, "e,n\n,7\n,\n");
    free(text);
    anonkit_table_free(t);
}

/* The spool's double text is ak_format_double's, byte for byte, for doubles
 * of every shape: decimals of 1 to 17 digits, negative ones, tiny and huge
 * ones, random bit patterns, and the edges of the fast path (1e-4, 1e15). */
static void test_format_double(void **state)
{
    (void)state;
    tu_rng rng = {11};
    static const double edge[] = {1e-4, 0.99999999999999e-4, 1.00000000000001e-4, 1e15, 999999999999999.0,
                                  999999999999999.9, 99999999999999.99, 0.1, 0.5, -0.0, 1e-5, 123.456, 5e-324,
                                  1.7976931348623157e308, 0.3, 2.675, 1e14 + 0.5, 0.000123};
    char a[48], b[48];
    for (size_t i = 0; i < sizeof edge / sizeof *edge + 400000; i++) {
        double v;
        if (i < sizeof edge / sizeof *edge) {
            v = edge[i];
        } else if (i % 4 == 0) { /* random bits: any finite double */
            uint64_t bits = tu_next(&rng);
            memcpy(&v, &bits, sizeof v);
            if (!isfinite(v)) continue;
        } else { /* a decimal of up to 17 digits with up to 14 places */
            const uint64_t digits = 1 + tu_below(&rng, 17);
            uint64_t m = tu_next(&rng) % 100000000000000000ull, p = 1;
            for (uint64_t d = 0; d < digits; d++) p *= 10;
            m %= p;
            v = (double)m / pow(10, (double)tu_below(&rng, 15));
            if (i % 3 == 0) v = -v;
        }
        const int na = memtable__format_double(a, v), nb = ak_format_double(b, v);
        a[na] = b[nb] = '\0';
        if (strcmp(a, b)) fprintf(stderr, "%.17g: %s against %s\n", v, a, b);
        assert_string_equal(a, b);
    }
    /* integers: every length, both signs, the extremes */
    static const int64_t ends[] = {0, 9, 10, 99, 100, -1, -10, -100, INT64_MAX, INT64_MIN, INT64_MIN + 1};
    for (size_t i = 0; i < sizeof ends / sizeof *ends + 200000; i++) {
        int64_t v = i < sizeof ends / sizeof *ends ? ends[i] : 0;
        if (i >= sizeof ends / sizeof *ends) { /* below 2^63, so that it can be negated */
            const int64_t u = (int64_t)(tu_next(&rng) >> (1 + tu_below(&rng, 63)));
            v = i % 2 ? -u : u;
        }
        const int na = memtable__format_int64(a, v), nb = snprintf(b, sizeof b, "%lld", (long long)v);
        a[na] = '\0';
        assert_int_equal(na, nb);
        assert_string_equal(a, b);
    }
}

/* Texts holding the delimiter, quotes, CR and LF, leading and trailing
 * spaces, empty texts next to missing ones, and numbers that must stay text
 * ("007", "-0", "1.50", a 20-digit integer) survive the table's CSV form and
 * its reading back (the input spool and the output sink) exactly; integers
 * of up to 19 digits are read as int64; a table with no rows comes back with
 * its columns. */
static void test_csv_form(void **state)
{
    (void)state;
    static const char *const texts[] = {"a,b", "say \"hi\"", "two\nlines", "cr\r\nlf", " pad ", "", "007", "-0",
                                        "1.50", "12345678901234567890", ";", "\"", ",", "x"};
    enum { N = sizeof texts / sizeof *texts };
    int64_t off[N + 1] = {0}, ints[N];
    char bytes[256];
    uint8_t miss[N] = {0};
    for (size_t r = 0; r < N; r++) {
        put_text(off, bytes, r, texts[r]);
        ints[r] = r % 3 == 0 ? INT64_MIN + 1 + (int64_t)r : r % 3 == 1 ? -(int64_t)r * 123456789012345678 : (int64_t)r;
    }
    miss[N - 1] = 1;
    for (int delimiter = 0; delimiter < 2; delimiter++) {
        const char delim = delimiter ? ';' : ',';
        anonkit_table *t = anonkit_table_create();
        assert_int_equal(anonkit_table_add_text(t, "t", off, bytes, miss, N), ANONKIT_OK);
        assert_int_equal(anonkit_table_add_int64(t, "i", ints, NULL, N), ANONKIT_OK);
        char *text = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&text, &size);
        assert_non_null(f);
        ak_error err = {0};
        assert_int_equal(memtable_write_csv(t, f, delim, 1, "mem", &err), ANONKIT_OK);
        assert_int_equal(fclose(f), 0);
        FILE *in = fmemopen(text, size, "r");
        assert_non_null(in);
        anonkit_table *back = NULL;
        assert_int_equal(memtable_from_csv(&back, in, delim, "mem", &err), ANONKIT_OK);
        fclose(in);
        assert_int_equal(anonkit_table_column_kind(back, 0), ANONKIT_COLUMN_TEXT);
        assert_int_equal(anonkit_table_column_kind(back, 1), ANONKIT_COLUMN_INT64);
        const int64_t *o;
        const char *b;
        assert_int_equal(anonkit_table_column_text(back, 0, &o, &b), ANONKIT_OK);
        const uint8_t *m = anonkit_table_column_missing(back, 0);
        for (size_t r = 0; r < N; r++) {
            const int gone = m && m[r]; /* an empty text reads back as missing: the CSV form cannot tell them apart */
            assert_int_equal(gone, miss[r] || !*texts[r]);
            if (!gone) {
                assert_int_equal(o[r + 1] - o[r], (int64_t)strlen(texts[r]));
                assert_memory_equal(b + o[r], texts[r], strlen(texts[r]));
            }
            assert_true(anonkit_table_column_int64(back, 1)[r] == ints[r]);
        }
        anonkit_table_free(back);
        free(text);
        anonkit_table_free(t);
    }
    /* no rows */
    anonkit_table *t = anonkit_table_create();
    assert_int_equal(anonkit_table_add_double(t, "d", NULL, NULL, 0), ANONKIT_OK);
    assert_int_equal(anonkit_table_add_text(t, "s", NULL, NULL, NULL, 0), ANONKIT_OK);
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    ak_error err = {0};
    assert_int_equal(memtable_write_csv(t, f, ',', 1, "mem", &err), ANONKIT_OK);
    assert_int_equal(fclose(f), 0);
    assert_string_equal(text, "d,s\n");
    FILE *in = fmemopen(text, size, "r");
    anonkit_table *back = NULL;
    assert_int_equal(memtable_from_csv(&back, in, ',', "mem", &err), ANONKIT_OK);
    fclose(in);
    assert_int_equal(anonkit_table_columns(back), 2);
    assert_int_equal(anonkit_table_rows(back), 0);
    assert_string_equal(anonkit_table_column_name(back, 1), "s");
    anonkit_table_free(back);
    anonkit_table_free(t);
    free(text);
}

/* Numeric QIs of a table are read as numbers, not as their text (the
 * loader's direct cells, core/table.c); published bytes stay those of the
 * file path on the table's CSV form, for int64 and double columns holding
 * what leaves the integer fast path: zero and -0, negatives, integers past
 * nine digits and past 2^53, decimals (after integers: the column changes
 * mode midway), missing cells (NaN, masks, before the first present
 * value), in one piece and in two on two threads. A value with more digits
 * than can be ordered fails with the file path's message. */
static void numeric_qis(size_t n, const char *threads)
{
    int64_t *a = malloc(n * sizeof *a), *d = malloc(n * sizeof *d);
    double *b = malloc(n * sizeof *b), *c = malloc(n * sizeof *c);
    uint8_t *cmiss = calloc(n, 1), *dmiss = calloc(n, 1);
    int64_t *off = malloc((n + 1) * sizeof *off);
    char *txt = malloc(n * 4);
    assert_true(a && b && c && d && cmiss && dmiss && off && txt);
    tu_rng rng = {97 + n};
    off[0] = 0;
    for (size_t r = 0; r < n; r++) {
        const unsigned pick = (unsigned)tu_below(&rng, 10);
        a[r] = (int64_t)tu_below(&rng, 1000);
        if (r > n / 3 && pick == 0) a[r] = -(int64_t)tu_below(&rng, 500);
        if (r > n / 3 && pick == 1) a[r] = 999999990 + (int64_t)tu_below(&rng, 20); /* nine and ten digits */
        if (r > n / 2 && pick == 2) a[r] = ((int64_t)1 << 60) + (int64_t)tu_below(&rng, 1000); /* past 2^53 */
        b[r] = (double)tu_below(&rng, 100000);
        if (r > n / 2) b[r] = pick == 3 ? -0.0 : pick == 4 ? NAN : pick == 5 ? -(double)tu_below(&rng, 99) / 4
                            : (double)tu_below(&rng, 100000) / 100;
        c[r] = (double)tu_below(&rng, 60);
        cmiss[r] = r < 5 || pick == 6;
        d[r] = (int64_t)tu_below(&rng, 1000000000);
        dmiss[r] = pick == 7;
        char buf[4];
        snprintf(buf, sizeof buf, "t%u", (unsigned)tu_below(&rng, 9));
        put_text(off, txt, r, buf);
    }
    anonkit_table *t = anonkit_table_create();
    assert_int_equal(anonkit_table_add_int64_ref(t, "a", a, NULL, n), ANONKIT_OK);
    assert_int_equal(anonkit_table_add_double_ref(t, "b", b, NULL, n), ANONKIT_OK);
    assert_int_equal(anonkit_table_add_double(t, "c", c, cmiss, n), ANONKIT_OK);
    assert_int_equal(anonkit_table_add_int64(t, "d", d, dmiss, n), ANONKIT_OK);
    assert_int_equal(anonkit_table_add_text(t, "t", off, txt, NULL, n), ANONKIT_OK);
    const char *dir = tu_mkdtemp();
    char in[4200], fout[4200], tout[4200];
    snprintf(in, sizeof in, "%s/in.csv", dir);
    snprintf(fout, sizeof fout, "%s/file.csv", dir);
    snprintf(tout, sizeof tout, "%s/table.csv", dir);
    for (int bad = 0; bad < 2; bad++) {
        if (bad) b[n - 2] = 1.0 / 3; /* 16 significant digits */
        FILE *f = fopen(in, "w");
        ak_error err = {0};
        assert_non_null(f);
        assert_int_equal(memtable_write_csv(t, f, ',', 1, in, &err), ANONKIT_OK);
        assert_int_equal(fclose(f), 0);
        anonkit_job *fj = anonkit_job_create(), *tj = anonkit_job_create(), *oj = anonkit_job_create();
        anonkit_job *jobs[3] = {fj, tj, oj};
        for (int i = 0; i < 3; i++) {
            assert_int_equal(anonkit_job_set(jobs[i], ANONKIT_OPT_QI, "a,b,c,d"), ANONKIT_OK);
            assert_int_equal(anonkit_job_set(jobs[i], ANONKIT_OPT_K, "5"), ANONKIT_OK);
            assert_int_equal(anonkit_job_set(jobs[i], ANONKIT_OPT_SEED, "5"), ANONKIT_OK);
            assert_int_equal(anonkit_job_set(jobs[i], ANONKIT_OPT_THREADS, threads), ANONKIT_OK);
        }
        assert_int_equal(anonkit_job_set(fj, ANONKIT_OPT_INPUT, in), ANONKIT_OK);
        assert_int_equal(anonkit_job_set(fj, ANONKIT_OPT_OUTPUT, fout), ANONKIT_OK);
        assert_int_equal(anonkit_job_set_input_table(tj, t), ANONKIT_OK);
        assert_int_equal(anonkit_job_set(tj, ANONKIT_OPT_OUTPUT, tout), ANONKIT_OK);
        assert_int_equal(anonkit_job_set_input_table(oj, t), ANONKIT_OK);
        assert_int_equal(anonkit_job_set_output_table(oj), ANONKIT_OK);
        anonkit_result *r = NULL;
        if (bad) {
            const int frc = anonkit_anonymize(fj, NULL);
            assert_true(frc < 0);
            assert_int_equal(anonkit_anonymize(tj, NULL), frc);
            assert_int_equal(anonkit_anonymize(oj, &r), frc);
            const char *what = strstr(anonkit_errmsg(fj), "value 0.3333");
            assert_non_null(what);
            assert_non_null(strstr(anonkit_errmsg(tj), what));
            assert_non_null(strstr(anonkit_errmsg(oj), what));
        } else {
            run_ok(fj, anonkit_anonymize(fj, NULL));
            run_ok(tj, anonkit_anonymize(tj, NULL));
            run_ok(oj, anonkit_anonymize(oj, &r));
            size_t fl, tl;
            char *ftext = tu_read_file(fout, &fl), *ttext = tu_read_file(tout, &tl);
            assert_int_equal(fl, tl);
            assert_memory_equal(ftext, ttext, fl);
            free(ftext);
            free(ttext);
            anonkit_table *back = read_published(fout);
            assert_same_table(anonkit_result_table(r), back);
            anonkit_table_free(back);
        }
        anonkit_result_free(r);
        for (int i = 0; i < 3; i++) anonkit_job_free(jobs[i]);
    }
    anonkit_table_free(t);
    tu_rmtree(dir);
    free(a), free(b), free(c), free(d), free(cmiss), free(dmiss), free(off), free(txt);
}

static void test_numeric_qis(void **state)
{
    (void)state;
    numeric_qis(300, "1");
    numeric_qis(70001, "2"); /* two pieces */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mondrian), cmocka_unit_test(test_rows),     cmocka_unit_test(test_incognito),
        cmocka_unit_test(test_hilbert),  cmocka_unit_test(test_rothko_t), cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_errors),   cmocka_unit_test(test_slice),    cmocka_unit_test(test_format_double),
        cmocka_unit_test(test_csv_form), cmocka_unit_test(test_no_spool),
        cmocka_unit_test(test_two_pieces), cmocka_unit_test(test_text_codes),
        cmocka_unit_test(test_recode_table), cmocka_unit_test(test_numeric_qis),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
