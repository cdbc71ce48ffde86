/* test_table_verbs.c — the verbs beside anonymize on tables in memory
 * (include/anonkit/anonkit.h, "Tables in memory"; docs/python.md): hierarchy
 * tables, metrics and risk read tables without a private copy (the job's
 * temporary folder is missing) and give what the file path gives on the same
 * data; a sensitive column's hierarchy given as a table. */
#define _GNU_SOURCE /* open_memstream */

#include <math.h>

#include "table_data.h"

/* The hierarchy of age as a table of numbers: age (int64), its decade
 * (double), "*". */
static anonkit_table *age_hierarchy(void)
{
    int64_t age[60];
    double decade[60];
    int64_t off[61];
    char stars[60];
    for (int i = 0; i < 60; i++) {
        age[i] = 18 + i;
        decade[i] = (double)((18 + i) / 10 * 10) + 0.5; /* "10.5": a label no age has */
        off[i] = i;
        stars[i] = '*';
    }
    off[60] = 60;
    anonkit_table *h = anonkit_table_create();
    assert_non_null(h);
    assert_int_equal(anonkit_table_add_int64(h, "0", age, NULL, 60), ANONKIT_OK);
    assert_int_equal(anonkit_table_add_double(h, "1", decade, NULL, 60), ANONKIT_OK);
    assert_int_equal(anonkit_table_add_text(h, "2", off, stars, NULL, 60), ANONKIT_OK);
    return h;
}

/* Writes table h as the hierarchy file the file path reads (';', no header). */
static void write_hierarchy(const anonkit_table *h, const char *path)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    ak_error err = {0};
    assert_int_equal(memtable_write_csv(h, f, ';', 0, path, &err), ANONKIT_OK);
    assert_int_equal(fclose(f), 0);
}

/* A job like job_for's with the quasi-identifiers age and sex. */
static anonkit_job *job_age_sex(const char *algorithm)
{
    anonkit_job *job = anonkit_job_create();
    assert_non_null(job);
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_QI, "age,sex"), ANONKIT_OK);
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_K, "5"), ANONKIT_OK);
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_SEED, "7"), ANONKIT_OK);
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_THREADS, "2"), ANONKIT_OK);
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_ALGORITHM, algorithm), ANONKIT_OK);
    return job;
}

/* Hierarchy tables are loaded from memory, without a private copy (the
 * job's temporary folder is missing): an input table anonymized with the
 * hierarchies of age (numbers) and sex given as tables publishes what the
 * file path publishes with their CSV forms as files, and the verifier and
 * the metrics agree; a bad hierarchy table is refused with its row, as the
 * file is with its line. */
static void test_hierarchy_tables(void **state)
{
    (void)state;
    const char *dir = tu_mkdtemp();
    char in[4200], out[4200], nowhere[4200], hage[4200], hsex[4200], spec[4300];
    snprintf(in, sizeof in, "%s/in.csv", dir);
    snprintf(out, sizeof out, "%s/out.csv", dir);
    snprintf(nowhere, sizeof nowhere, "%s/missing-folder", dir);
    snprintf(hage, sizeof hage, "%s/age.csv", dir);
    snprintf(hsex, sizeof hsex, "%s/sex.csv", dir);
    data *d = calloc(1, sizeof *d);
    assert_non_null(d);
    make_data(d, 31);
    write_csv(d, in);
    anonkit_table *ha = age_hierarchy(), *hs = sex_hierarchy();
    write_hierarchy(ha, hage);
    write_hierarchy(hs, hsex);
    for (int a = 0; a < 2; a++) {
        const char *algorithm = a ? "incognito" : "mondrian";
        anonkit_job *fj = job_age_sex(algorithm), *tj = job_age_sex(algorithm);
        assert_int_equal(anonkit_job_set(fj, ANONKIT_OPT_INPUT, in), ANONKIT_OK);
        assert_int_equal(anonkit_job_set(fj, ANONKIT_OPT_OUTPUT, out), ANONKIT_OK);
        snprintf(spec, sizeof spec, "age=%s", hage);
        assert_int_equal(anonkit_job_set(fj, ANONKIT_OPT_HIERARCHY, spec), ANONKIT_OK);
        snprintf(spec, sizeof spec, "sex=%s", hsex);
        assert_int_equal(anonkit_job_set(fj, ANONKIT_OPT_HIERARCHY, spec), ANONKIT_OK);
        anonkit_result *fr = NULL;
        run_ok(fj, anonkit_anonymize(fj, &fr));

        anonkit_table *t = table_of(d);
        assert_int_equal(anonkit_job_set(tj, ANONKIT_OPT_TMPDIR, nowhere), ANONKIT_OK);
        assert_int_equal(anonkit_job_set_input_table(tj, t), ANONKIT_OK);
        anonkit_table *copy_a = age_hierarchy(), *copy_s = sex_hierarchy();
        assert_int_equal(anonkit_job_set_hierarchy_table(tj, "age", copy_a), ANONKIT_OK);
        assert_int_equal(anonkit_job_set_hierarchy_table(tj, "sex", copy_s), ANONKIT_OK);
        anonkit_table_free(copy_a); /* the job keeps its own copy */
        anonkit_table_free(copy_s);
        assert_int_equal(anonkit_job_set_output_table(tj), ANONKIT_OK);
        anonkit_result *tr = NULL;
        run_ok(tj, anonkit_anonymize(tj, &tr));
        anonkit_table *back = read_published(out);
        assert_same_table(anonkit_result_table(tr), back);
        assert_int_equal(anonkit_result_rows_published(tr), anonkit_result_rows_published(fr));
        anonkit_result *cr = NULL;
        run_ok(tj, anonkit_check_table(tj, anonkit_result_table(tr), &cr));
        assert_int_equal(anonkit_result_rows_read(cr), ROWS);
        anonkit_result_free(cr);
        anonkit_table_free(back);
        anonkit_result_free(fr);
        anonkit_result_free(tr);
        anonkit_job_free(fj);
        anonkit_job_free(tj);
        anonkit_table_free(t);
    }
    /* a label left empty on the second row: refused there, as in the file */
    const int64_t off0[] = {0, 6, 10}, off1[] = {0, 1, 1};
    const uint8_t miss[] = {0, 1};
    anonkit_table *bad = anonkit_table_create();
    assert_int_equal(anonkit_table_add_text(bad, "0", off0, "femalemale", NULL, 2), ANONKIT_OK);
    assert_int_equal(anonkit_table_add_text(bad, "1", off1, "*", miss, 2), ANONKIT_OK);
    write_hierarchy(bad, hsex);
    anonkit_job *fj = job_for("mondrian"), *tj = job_for("mondrian");
    assert_int_equal(anonkit_job_set(fj, ANONKIT_OPT_INPUT, in), ANONKIT_OK);
    snprintf(spec, sizeof spec, "sex=%s", hsex);
    assert_int_equal(anonkit_job_set(fj, ANONKIT_OPT_HIERARCHY, spec), ANONKIT_OK);
    assert_int_equal(anonkit_job_set(fj, ANONKIT_OPT_OUTPUT, out), ANONKIT_OK);
    assert_int_equal(anonkit_anonymize(fj, NULL), ANONKIT_E_INPUT);
    anonkit_table *t = table_of(d);
    assert_int_equal(anonkit_job_set(tj, ANONKIT_OPT_TMPDIR, nowhere), ANONKIT_OK);
    assert_int_equal(anonkit_job_set_input_table(tj, t), ANONKIT_OK);
    assert_int_equal(anonkit_job_set_hierarchy_table(tj, "sex", bad), ANONKIT_OK);
    assert_int_equal(anonkit_job_set_output_table(tj), ANONKIT_OK);
    assert_int_equal(anonkit_anonymize(tj, NULL), ANONKIT_E_INPUT);
    const char *fm = anonkit_errmsg(fj), *tm = anonkit_errmsg(tj);
    assert_non_null(strstr(tm, "table:hierarchy:sex"));
    assert_null(strstr(tm, "missing-folder"));
    /* the same message after the name */
    assert_string_equal(strstr(fm, hsex) + strlen(hsex), strstr(tm, "table:hierarchy:sex") + strlen("table:hierarchy:sex"));
    anonkit_job_free(fj);
    anonkit_job_free(tj);
    anonkit_table_free(t);
    anonkit_table_free(bad);
    anonkit_table_free(ha);
    anonkit_table_free(hs);
    free(d);
    tu_rmtree(dir);
}

/* The metrics of tables are measured in memory, without a private copy
 * (the job's temporary folder is missing): the JSON equals the file path's
 * on the same data as files, KL-divergence and conditional entropy too; a
 * published table without a quasi-identifier is refused by its name. */
static void test_metrics_tables(void **state)
{
    (void)state;
    const char *dir = tu_mkdtemp();
    char in[4200], out[4200], nowhere[4200], hier[4300];
    snprintf(in, sizeof in, "%s/in.csv", dir);
    snprintf(out, sizeof out, "%s/out.csv", dir);
    snprintf(nowhere, sizeof nowhere, "%s/missing-folder", dir);
    snprintf(hier, sizeof hier, "sex=%s/sex.csv", dir);
    tu_write_file(hier + 4, "female;*\nmale;*\n");
    data *d = calloc(1, sizeof *d);
    assert_non_null(d);
    make_data(d, 41);
    write_csv(d, in);
    anonkit_job *fj = job_for("mondrian");
    assert_int_equal(anonkit_job_set(fj, ANONKIT_OPT_INPUT, in), ANONKIT_OK);
    assert_int_equal(anonkit_job_set(fj, ANONKIT_OPT_OUTPUT, out), ANONKIT_OK);
    assert_int_equal(anonkit_job_set(fj, ANONKIT_OPT_HIERARCHY, hier), ANONKIT_OK);
    assert_int_equal(anonkit_job_set(fj, ANONKIT_OPT_SENSITIVE, "job"), ANONKIT_OK);
    run_ok(fj, anonkit_anonymize(fj, NULL));
    assert_int_equal(anonkit_job_set(fj, ANONKIT_OPT_CLASS, "note"), ANONKIT_OK);
    assert_int_equal(anonkit_job_set(fj, ANONKIT_OPT_KL_LEVEL, "1"), ANONKIT_OK);
    anonkit_result *fr = NULL;
    run_ok(fj, anonkit_metrics(fj, in, out, &fr));

    anonkit_job *tj = job_for("mondrian");
    assert_int_equal(anonkit_job_set(tj, ANONKIT_OPT_TMPDIR, nowhere), ANONKIT_OK);
    anonkit_table *hs = sex_hierarchy();
    assert_int_equal(anonkit_job_set_hierarchy_table(tj, "sex", hs), ANONKIT_OK);
    assert_int_equal(anonkit_job_set(tj, ANONKIT_OPT_SENSITIVE, "job"), ANONKIT_OK);
    assert_int_equal(anonkit_job_set(tj, ANONKIT_OPT_CLASS, "note"), ANONKIT_OK);
    assert_int_equal(anonkit_job_set(tj, ANONKIT_OPT_KL_LEVEL, "1"), ANONKIT_OK);
    anonkit_table *orig = table_of(d), *pub = read_published(out);
    anonkit_result *tr = NULL;
    run_ok(tj, anonkit_metrics_table(tj, orig, pub, &tr));
    assert_non_null(strstr(anonkit_result_json(tr), "\"kl_divergence\""));
    assert_non_null(strstr(anonkit_result_json(tr), "\"conditional_entropy\""));
    assert_string_equal(anonkit_result_json(tr), anonkit_result_json(fr));
    anonkit_result_free(tr);
    /* the published table without zip: refused, by its name */
    anonkit_table *nozip = anonkit_table_create();
    assert_int_equal(anonkit_table_add_int64(nozip, "age", d->age, NULL, ROWS), ANONKIT_OK);
    assert_int_equal(anonkit_table_add_text(nozip, "sex", d->sex_off, d->sex, NULL, ROWS), ANONKIT_OK);
    assert_int_equal(anonkit_metrics_table(tj, orig, nozip, &tr), ANONKIT_E_USAGE);
    assert_null(tr);
    assert_non_null(strstr(anonkit_errmsg(tj), "the published table"));
    assert_null(strstr(anonkit_errmsg(tj), "missing-folder"));
    anonkit_table_free(nozip);
    anonkit_table_free(orig);
    anonkit_table_free(pub);
    anonkit_table_free(hs);
    anonkit_result_free(fr);
    anonkit_job_free(fj);
    anonkit_job_free(tj);
    free(d);
    tu_rmtree(dir);
}

/* Replaces the first `from` in text by `to` (a copy, freed by the caller). */
static char *replaced(const char *text, const char *from, const char *to)
{
    const char *at = strstr(text, from);
    assert_non_null(at);
    char *out = malloc(strlen(text) + strlen(to) + 1);
    assert_non_null(out);
    memcpy(out, text, (size_t)(at - text));
    strcpy(out + (at - text), to);
    strcat(out, at + strlen(from));
    return out;
}

/* The risk of an input table is measured in memory, without a private copy
 * (the job's temporary folder is missing): its JSON equals the file path's
 * on the same data as CSV (but for the name), for consecutive QI columns
 * (the file path's in-buffer hashing), QIs whose text holds the delimiter
 * and quotes, SUDA2 and the achieved model of a sensitive column. */
static void test_risk_table(void **state)
{
    (void)state;
    const char *dir = tu_mkdtemp();
    char in[4200], nowhere[4200];
    snprintf(in, sizeof in, "%s/in.csv", dir);
    snprintf(nowhere, sizeof nowhere, "%s/missing-folder", dir);
    data *d = calloc(1, sizeof *d);
    assert_non_null(d);
    make_data(d, 53);
    write_csv(d, in);
    anonkit_table *t = table_of(d);
    static const char *const qis[] = {"zip,sex", "age,sex,zip", "sex,note", "job,age"};
    for (size_t i = 0; i < sizeof qis / sizeof *qis; i++) {
        anonkit_job *job[2];
        anonkit_result *r[2];
        for (int j = 0; j < 2; j++) {
            job[j] = anonkit_job_create();
            assert_non_null(job[j]);
            assert_int_equal(anonkit_job_set(job[j], ANONKIT_OPT_QI, qis[i]), ANONKIT_OK);
            assert_int_equal(anonkit_job_set(job[j], ANONKIT_OPT_SUDA, "2"), ANONKIT_OK);
            assert_int_equal(anonkit_job_set(job[j], ANONKIT_OPT_SENSITIVE, i == 3 ? "zip" : "job"), ANONKIT_OK);
            assert_int_equal(anonkit_job_set(job[j], ANONKIT_OPT_THREADS, "2"), ANONKIT_OK);
        }
        assert_int_equal(anonkit_job_set(job[0], ANONKIT_OPT_INPUT, in), ANONKIT_OK);
        assert_int_equal(anonkit_job_set_input_table(job[1], t), ANONKIT_OK);
        assert_int_equal(anonkit_job_set(job[1], ANONKIT_OPT_TMPDIR, nowhere), ANONKIT_OK);
        for (int j = 0; j < 2; j++) run_ok(job[j], anonkit_risk(job[j], &r[j]));
        char *expect = replaced(anonkit_result_json(r[0]), in, "the input table");
        assert_string_equal(anonkit_result_json(r[1]), expect);
        free(expect);
        for (int j = 0; j < 2; j++) {
            anonkit_result_free(r[j]);
            anonkit_job_free(job[j]);
        }
    }
    anonkit_table_free(t);
    /* texts that hold the delimiter: "a,b" + "c" and "a" + "b,c" are two classes, not one */
    anonkit_table *dt = anonkit_table_create();
    const int64_t xo[] = {0, 3, 4, 7}, yo[] = {0, 1, 4, 5};
    assert_int_equal(anonkit_table_add_text(dt, "x", xo, "a,baa,b", NULL, 3), ANONKIT_OK);
    assert_int_equal(anonkit_table_add_text(dt, "y", yo, "cb,cc", NULL, 3), ANONKIT_OK);
    FILE *f = fopen(in, "w");
    ak_error err = {0};
    assert_non_null(f);
    assert_int_equal(memtable_write_csv(dt, f, ',', 1, in, &err), ANONKIT_OK);
    assert_int_equal(fclose(f), 0);
    anonkit_job *job[2];
    anonkit_result *r[2];
    for (int j = 0; j < 2; j++) {
        job[j] = anonkit_job_create();
        assert_int_equal(anonkit_job_set(job[j], ANONKIT_OPT_QI, "x,y"), ANONKIT_OK);
    }
    assert_int_equal(anonkit_job_set(job[0], ANONKIT_OPT_INPUT, in), ANONKIT_OK);
    assert_int_equal(anonkit_job_set_input_table(job[1], dt), ANONKIT_OK);
    for (int j = 0; j < 2; j++) run_ok(job[j], anonkit_risk(job[j], &r[j]));
    char *expect = replaced(anonkit_result_json(r[0]), in, "the input table");
    assert_string_equal(anonkit_result_json(r[1]), expect);
    assert_int_equal(anonkit_result_classes(r[1]), 2);
    free(expect);
    for (int j = 0; j < 2; j++) {
        anonkit_result_free(r[j]);
        anonkit_job_free(job[j]);
    }
    anonkit_table_free(dt);
    free(d);
    tu_rmtree(dir);
}

/* The sensitive column's hierarchy given as a table (hierarchical
 * t-closeness, whose model reads it as a file: its private copy) gives what
 * the file gives, in anonymize and check. */
static void test_sensitive_hierarchy_table(void **state)
{
    (void)state;
    const char *dir = tu_mkdtemp();
    char in[4200], out[4200], spec[4300];
    snprintf(in, sizeof in, "%s/in.csv", dir);
    snprintf(out, sizeof out, "%s/out.csv", dir);
    snprintf(spec, sizeof spec, "sex=%s/sex.csv", dir);
    tu_write_file(spec + 4, "female;*\nmale;*\n");
    data *d = calloc(1, sizeof *d);
    assert_non_null(d);
    make_data(d, 61);
    write_csv(d, in);
    anonkit_job *job[2];
    for (int j = 0; j < 2; j++) {
        job[j] = anonkit_job_create();
        assert_non_null(job[j]);
        assert_int_equal(anonkit_job_set(job[j], ANONKIT_OPT_QI, "age,zip"), ANONKIT_OK);
        assert_int_equal(anonkit_job_set(job[j], ANONKIT_OPT_K, "4"), ANONKIT_OK);
        assert_int_equal(anonkit_job_set(job[j], ANONKIT_OPT_SEED, "3"), ANONKIT_OK);
        assert_int_equal(anonkit_job_set(job[j], ANONKIT_OPT_SENSITIVE, "sex"), ANONKIT_OK);
        assert_int_equal(anonkit_job_set(job[j], ANONKIT_OPT_T, "0.2"), ANONKIT_OK);
        assert_int_equal(anonkit_job_set(job[j], ANONKIT_OPT_T_DISTANCE, "hierarchical"), ANONKIT_OK);
    }
    assert_int_equal(anonkit_job_set(job[0], ANONKIT_OPT_INPUT, in), ANONKIT_OK);
    assert_int_equal(anonkit_job_set(job[0], ANONKIT_OPT_OUTPUT, out), ANONKIT_OK);
    assert_int_equal(anonkit_job_set(job[0], ANONKIT_OPT_HIERARCHY, spec), ANONKIT_OK);
    anonkit_table *t = table_of(d), *h = sex_hierarchy();
    assert_int_equal(anonkit_job_set_input_table(job[1], t), ANONKIT_OK);
    assert_int_equal(anonkit_job_set_hierarchy_table(job[1], "sex", h), ANONKIT_OK);
    assert_int_equal(anonkit_job_set_output_table(job[1]), ANONKIT_OK);
    anonkit_result *r[2];
    for (int j = 0; j < 2; j++) run_ok(job[j], anonkit_anonymize(job[j], &r[j]));
    anonkit_table *back = read_published(out);
    assert_same_table(anonkit_result_table(r[1]), back);
    anonkit_result *cr = NULL;
    run_ok(job[1], anonkit_check_table(job[1], anonkit_result_table(r[1]), &cr));
    anonkit_result_free(cr);
    anonkit_table_free(back);
    for (int j = 0; j < 2; j++) {
        anonkit_result_free(r[j]);
        anonkit_job_free(job[j]);
    }
    anonkit_table_free(t);
    anonkit_table_free(h);
    free(d);
    tu_rmtree(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hierarchy_tables), cmocka_unit_test(test_metrics_tables),
        cmocka_unit_test(test_risk_table), cmocka_unit_test(test_sensitive_hierarchy_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
