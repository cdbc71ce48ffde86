/* rothko_data.h — the random tables and comparisons shared by the tests of
 * Rothko-T (test_rothko.c) and Rothko-S (test_rothko_s.c). */
#ifndef AK_TESTS_ROTHKO_DATA_H
#define AK_TESTS_ROTHKO_DATA_H

#include <stddef.h>
#include <stdio.h>

#include "anonkit/anonkit.h"
#include "testutil.h"

/* A fresh folder (tu_mkdtemp, copied out of its static storage) and the
 * paths the tests use in it: out.csv, report.json and the folder spill
 * (not created). */
typedef struct rk_files {
    char dir[4096], out[4200], report[4200], spill[4200];
} rk_files;
void rk_files_new(rk_files *files);

/* Random QI kinds for a random table: 2 to `most` QIs (returned), each
 * categorical (categorical[q] = 1) one time in two. */
int rk_random_qis(tu_rng *rng, int most, int categorical[8]);

/* Sets option o of job to v or fails the test with the job's message. */
void rk_must_set(anonkit_job *job, anonkit_option o, const char *v);
/* Writes a random hierarchy h<q>.csv for each categorical QI q (its leaf
 * count into leaves[q]) and opens in.csv with its header: id, a0.., then
 * `rest`. */
FILE *rk_start_table(tu_rng *rng, const char *dir, int nqi, const int *categorical, int *leaves, const char *rest);
/* A random table in dir/in.csv: id, QIs a0.. (numeric: integers, some
 * negative, some decimals; categorical: leaves of a random hierarchy),
 * sensitive s, class c, with `numeric` a numeric sensitive value v and a
 * regression target t, and a free-text column with delimiters, quotes and
 * newlines. */
void rk_generate_with(tu_rng *rng, const char *dir, int nqi, const int *categorical, size_t n, int decimals,
                      int numeric);
/* rk_generate_with without the numeric columns v and t. */
void rk_generate(tu_rng *rng, const char *dir, int nqi, const int *categorical, size_t n, int decimals);
/* A job over dir/in.csv (QIs a0.., hierarchies of the categorical ones,
 * sensitive s) writing out. */
anonkit_job *rk_job_for(const char *dir, int nqi, const int *categorical, const char *out);
/* The CSV records of a file (quoted newlines kept inside), sorted. */
char **rk_sorted_records(const char *path, size_t *n);
/* Fails unless both files hold the header and `rows` records, the same as
 * multisets (the output is shuffled within partitions). */
void rk_assert_same_records(const char *path_a, const char *path_b, size_t rows, int iter);
/* The integer after "key": in a report's JSON text, or -1 without it. */
long rk_report_number(const char *json, const char *key);

#endif
