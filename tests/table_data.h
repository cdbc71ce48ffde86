/* table_data.h — the random table of the table API's tests
 * (test_table_api.c, test_table_verbs.c): the same data as arrays, as a
 * table built column by column or row by row, and as a CSV file; a job that
 * anonymizes it; column-by-column comparison of published tables. */
#ifndef AK_TESTS_TABLE_DATA_H
#define AK_TESTS_TABLE_DATA_H

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

#define ROWS 300

/* The data: age (int64), income (double, some missing), zip (text), sex
 * (text, hierarchy), job (text, some missing), note (text with commas and
 * quotes: the CSV form must quote it). */
typedef struct data {
    int64_t age[ROWS];
    double income[ROWS];
    uint8_t income_missing[ROWS];
    int64_t zip_off[ROWS + 1], sex_off[ROWS + 1], job_off[ROWS + 1], note_off[ROWS + 1];
    char zip[ROWS * 8], sex[ROWS * 8], job[ROWS * 16], note[ROWS * 32];
    uint8_t job_missing[ROWS];
} data;

/* Appends text as the next value of a text column. */
static inline void put_text(int64_t *off, char *bytes, size_t r, const char *text)
{
    const size_t n = strlen(text);
    memcpy(bytes + off[r], text, n);
    off[r + 1] = off[r] + (int64_t)n;
}

static inline void make_data(data *d, uint64_t seed)
{
    tu_rng rng = {seed};
    static const char *const jobs[] = {"nurse", "clerk", "smith", "teacher"};
    d->zip_off[0] = d->sex_off[0] = d->job_off[0] = d->note_off[0] = 0;
    for (size_t r = 0; r < ROWS; r++) {
        char buf[32];
        d->age[r] = 18 + (int64_t)tu_below(&rng, 60);
        d->income_missing[r] = tu_below(&rng, 10) == 0;
        d->income[r] = d->income_missing[r] ? 0 : (double)tu_below(&rng, 100000) / 3.0 + 0.1;
        snprintf(buf, sizeof buf, "%05u", (unsigned)tu_below(&rng, 20) * 7);
        put_text(d->zip_off, d->zip, r, buf);
        put_text(d->sex_off, d->sex, r, tu_below(&rng, 2) ? "female" : "male");
        d->job_missing[r] = tu_below(&rng, 8) == 0;
        put_text(d->job_off, d->job, r, d->job_missing[r] ? "" : jobs[tu_below(&rng, 4)]);
        snprintf(buf, sizeof buf, "n%u, \"q\"", (unsigned)r);
        put_text(d->note_off, d->note, r, buf);
    }
}

static inline anonkit_table *table_of(const data *d)
{
    anonkit_table *t = anonkit_table_create();
    assert_non_null(t);
    assert_int_equal(anonkit_table_add_int64(t, "age", d->age, NULL, ROWS), ANONKIT_OK);
    assert_int_equal(anonkit_table_add_double(t, "income", d->income, d->income_missing, ROWS), ANONKIT_OK);
    assert_int_equal(anonkit_table_add_text(t, "zip", d->zip_off, d->zip, NULL, ROWS), ANONKIT_OK);
    assert_int_equal(anonkit_table_add_text(t, "sex", d->sex_off, d->sex, NULL, ROWS), ANONKIT_OK);
    assert_int_equal(anonkit_table_add_text(t, "job", d->job_off, d->job, d->job_missing, ROWS), ANONKIT_OK);
    assert_int_equal(anonkit_table_add_text(t, "note", d->note_off, d->note, NULL, ROWS), ANONKIT_OK);
    return t;
}

/* The same table, row by row from text. */
static inline anonkit_table *table_by_rows(const data *d)
{
    anonkit_table *t = anonkit_table_create();
    assert_non_null(t);
    assert_int_equal(anonkit_table_add_int64(t, "age", NULL, NULL, 0), ANONKIT_OK);
    assert_int_equal(anonkit_table_add_double(t, "income", NULL, NULL, 0), ANONKIT_OK);
    static const char *const names[] = {"zip", "sex", "job", "note"};
    for (int c = 0; c < 4; c++) assert_int_equal(anonkit_table_add_text(t, names[c], NULL, NULL, NULL, 0), ANONKIT_OK);
    for (size_t r = 0; r < ROWS; r++) {
        char age[24], income[40];
        snprintf(age, sizeof age, "%lld", (long long)d->age[r]);
        ak_format_double(income, d->income[r]);
        const char *f[6] = {age, d->income_missing[r] ? NULL : income, d->zip + d->zip_off[r], d->sex + d->sex_off[r],
                            d->job_missing[r] ? NULL : d->job + d->job_off[r], d->note + d->note_off[r]};
        const size_t len[6] = {strlen(age), f[1] ? strlen(income) : 0,
                               (size_t)(d->zip_off[r + 1] - d->zip_off[r]), (size_t)(d->sex_off[r + 1] - d->sex_off[r]),
                               (size_t)(d->job_off[r + 1] - d->job_off[r]),
                               (size_t)(d->note_off[r + 1] - d->note_off[r])};
        assert_int_equal(anonkit_table_append_row(t, f, len, 6), ANONKIT_OK);
    }
    assert_int_equal(anonkit_table_rows(t), ROWS);
    return t;
}

/* The hierarchy of sex as a table: value, "*". */
static inline anonkit_table *sex_hierarchy(void)
{
    anonkit_table *h = anonkit_table_create();
    assert_non_null(h);
    const int64_t off0[] = {0, 6, 10}, off1[] = {0, 1, 2};
    assert_int_equal(anonkit_table_add_text(h, "0", off0, "femalemale", NULL, 2), ANONKIT_OK);
    assert_int_equal(anonkit_table_add_text(h, "1", off1, "**", NULL, 2), ANONKIT_OK);
    return h;
}

/* Writes d as the CSV file the file path reads (a table's own CSV form). */
static inline void write_csv(const data *d, const char *path)
{
    anonkit_table *t = table_of(d);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    ak_error err = {0};
    assert_int_equal(memtable_write_csv(t, f, ',', 1, path, &err), ANONKIT_OK);
    assert_int_equal(fclose(f), 0);
    anonkit_table_free(t);
}

/* Asserts that a call on job returned ANONKIT_OK, printing its message when not. */
static inline void run_ok(const anonkit_job *job, int rc)
{
    if (rc != ANONKIT_OK) fprintf(stderr, "%s\n", anonkit_errmsg(job));
    assert_int_equal(rc, ANONKIT_OK);
}

/* A job with the settings every case shares. */
static inline anonkit_job *job_for(const char *algorithm)
{
    anonkit_job *job = anonkit_job_create();
    assert_non_null(job);
    /* incognito needs a hierarchy for every QI: sex only */
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_QI, strcmp(algorithm, "incognito") ? "age,zip,sex" : "sex"),
                     ANONKIT_OK);
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_K, "5"), ANONKIT_OK);
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_SEED, "7"), ANONKIT_OK);
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_THREADS, "2"), ANONKIT_OK);
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_ALGORITHM, algorithm), ANONKIT_OK);
    return job;
}

/* Asserts that tables a and b hold the same columns, kinds and values. */
static inline void assert_same_table(const anonkit_table *a, const anonkit_table *b)
{
    assert_int_equal(anonkit_table_columns(a), anonkit_table_columns(b));
    assert_int_equal(anonkit_table_rows(a), anonkit_table_rows(b));
    const uint64_t rows = anonkit_table_rows(a);
    for (uint32_t c = 0; c < anonkit_table_columns(a); c++) {
        assert_string_equal(anonkit_table_column_name(a, c), anonkit_table_column_name(b, c));
        const int kind = anonkit_table_column_kind(a, c);
        assert_int_equal(kind, anonkit_table_column_kind(b, c));
        const uint8_t *ma = anonkit_table_column_missing(a, c), *mb = anonkit_table_column_missing(b, c);
        assert_true((ma == NULL) == (mb == NULL));
        for (uint64_t r = 0; ma && r < rows; r++) assert_int_equal(ma[r], mb[r]);
        for (uint64_t r = 0; r < rows; r++) {
            if (ma && ma[r]) continue;
            if (kind == ANONKIT_COLUMN_DOUBLE) {
                assert_memory_equal(&anonkit_table_column_double(a, c)[r], &anonkit_table_column_double(b, c)[r],
                                    sizeof(double));
            } else if (kind == ANONKIT_COLUMN_INT64) {
                assert_int_equal(anonkit_table_column_int64(a, c)[r], anonkit_table_column_int64(b, c)[r]);
            } else {
                const int64_t *oa, *ob;
                const char *ba, *bb;
                assert_int_equal(anonkit_table_column_text(a, c, &oa, &ba), ANONKIT_OK);
                assert_int_equal(anonkit_table_column_text(b, c, &ob, &bb), ANONKIT_OK);
                assert_int_equal(oa[r + 1] - oa[r], ob[r + 1] - ob[r]);
                assert_memory_equal(ba + oa[r], bb + ob[r], (size_t)(oa[r + 1] - oa[r]));
            }
        }
    }
}

/* Reads a published CSV file as a table (the sink's own parsing). */
static inline anonkit_table *read_published(const char *path)
{
    FILE *f = fopen(path, "r+");
    assert_non_null(f);
    anonkit_table *t = NULL;
    ak_error err = {0};
    assert_int_equal(memtable_from_csv(&t, f, ',', path, &err), ANONKIT_OK);
    fclose(f);
    return t;
}

#endif
