/* rothko_data.c — the random tables and comparisons shared by the tests of
 * Rothko-T (test_rothko.c) and Rothko-S (test_rothko_s.c). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <dirent.h>
#include <unistd.h>

#include <cmocka.h>

#include "anonkit/anonkit.h"
#include "api/job.h"
#include "io/spill.h"
#include "testutil.h"
#include "rothko_data.h"

/* Sets option o of job to v or fails the test with the job's message. */
void rk_files_new(rk_files *files)
{
    snprintf(files->dir, sizeof files->dir, "%s", tu_mkdtemp());
    snprintf(files->out, sizeof files->out, "%s/out.csv", files->dir);
    snprintf(files->report, sizeof files->report, "%s/report.json", files->dir);
    snprintf(files->spill, sizeof files->spill, "%s/spill", files->dir);
}

int rk_random_qis(tu_rng *rng, int most, int categorical[8])
{
    assert_true(most >= 2 && most <= 8);
    const int nqi = 2 + (int)tu_below(rng, (uint64_t)most - 1);
    for (int q = 0; q < nqi; q++) categorical[q] = tu_below(rng, 2) == 0;
    return nqi;
}

void rk_must_set(anonkit_job *job, anonkit_option o, const char *v)
{
    if (anonkit_job_set(job, o, v) != ANONKIT_OK) fail_msg("set %s=%s: %s", anonkit_option_name(o), v, anonkit_errmsg(job));
}

/* A random table: id, QIs a0.. (numeric: integers, some negative, some
 * decimals; categorical: leaves of a random hierarchy), sensitive s, class c,
 * with `numeric` a numeric sensitive value v and a regression target t, and a
 * free-text column with delimiters, quotes and newlines. */
/* Writes a random hierarchy h<q>.csv for each categorical QI q (its leaf
 * count into leaves[q]) and opens in.csv with its header: id, a0.., then
 * `rest`. */
FILE *rk_start_table(tu_rng *rng, const char *dir, int nqi, const int *categorical, int *leaves, const char *rest)
{
    for (int q = 0; q < nqi; q++)
        if (categorical[q]) {
            char name[32];
            snprintf(name, sizeof name, "h%d.csv", q);
            leaves[q] = tu_write_random_hierarchy(rng, tu_path(dir, name), q);
        }
    FILE *f = fopen(tu_path(dir, "in.csv"), "w");
    assert_non_null(f);
    fprintf(f, "id");
    for (int q = 0; q < nqi; q++) fprintf(f, ",a%d", q);
    fprintf(f, "%s\n", rest);
    return f;
}

void rk_generate_with(tu_rng *rng, const char *dir, int nqi, const int *categorical, size_t n, int decimals,
                          int numeric)
{
    int leaves[8];
    FILE *f = rk_start_table(rng, dir, nqi, categorical, leaves, numeric ? ",s,c,v,t,note" : ",s,c,note");
    const int sdomain = 2 + (int)tu_below(rng, 6);
    const int spread = 5 + (int)tu_below(rng, 400);
    for (size_t i = 0; i < n; i++) {
        fprintf(f, "%zu", i);
        for (int q = 0; q < nqi; q++) {
            if (categorical[q]) fprintf(f, ",v%d", (int)tu_below(rng, (uint64_t)leaves[q]));
            else if (decimals && tu_below(rng, 8) == 0) fprintf(f, ",%d.5", (int)tu_below(rng, (uint64_t)spread) - 20);
            else fprintf(f, ",%d", (int)tu_below(rng, (uint64_t)spread) - 20);
        }
        fprintf(f, ",s%d,%s", (int)tu_below(rng, (uint64_t)sdomain), tu_below(rng, 3) ? "yes" : "no");
        if (numeric) fprintf(f, ",%d,%d.%02d", (int)tu_below(rng, 1000), (int)tu_below(rng, 500), (int)tu_below(rng, 100));
        switch (tu_below(rng, 4)) {
        case 0: fprintf(f, ",\"a, b\"\n"); break;
        case 1: fprintf(f, ",\"say \"\"hi\"\"\nthere\"\n"); break;
        case 2: fprintf(f, ",\n"); break;
        default: fprintf(f, ",plain%zu\n", i % 7); break;
        }
    }
    fclose(f);
}

/* rk_generate_with without the numeric columns v and t. */
void rk_generate(tu_rng *rng, const char *dir, int nqi, const int *categorical, size_t n, int decimals)
{
    rk_generate_with(rng, dir, nqi, categorical, n, decimals, 0);
}

/* A job over dir/in.csv: QIs a0.. with the hierarchies of the categorical
 * ones, sensitive s, identifier id, seed 5, one thread, writing out. */
anonkit_job *rk_job_for(const char *dir, int nqi, const int *categorical, const char *out)
{
    anonkit_job *job = anonkit_job_create();
    char hier_path[8][4096];
    assert_true(nqi <= 8);
    for (int q = 0; q < nqi; q++)
        if (categorical[q]) {
            char file[32];
            snprintf(file, sizeof file, "h%d.csv", q);
            snprintf(hier_path[q], sizeof hier_path[q], "%s", tu_path(dir, file));
        }
    tu_job_generated(job, nqi, categorical, (const char (*)[4096])hier_path, tu_path(dir, "in.csv"));
    rk_must_set(job, ANONKIT_OPT_OUTPUT, out);
    rk_must_set(job, ANONKIT_OPT_SEED, "5");
    rk_must_set(job, ANONKIT_OPT_THREADS, "1");
    return job;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The CSV records of a file (quoted newlines kept inside), sorted. */
char **rk_sorted_records(const char *path, size_t *n)
{
    char *text = tu_read_file(path, NULL);
    assert_non_null(text);
    size_t cap = 1024, count = 0;
    char **rec = malloc(cap * sizeof *rec);
    int quoted = 0;
    char *start = text;
    for (char *p = text; *p; p++) {
        if (*p == '"') quoted = !quoted;
        if (*p == '\n' && !quoted) {
            *p = '\0';
            if (count == cap) rec = realloc(rec, (cap *= 2) * sizeof *rec);
            rec[count++] = start;
            start = p + 1;
        }
    }
    qsort(rec + 1, count - 1, sizeof *rec, cmp_str); /* the header stays first */
    *n = count;
    return rec;
}

/* Fails unless both files hold the header and `rows` records, the same as
 * multisets (the output is shuffled within partitions). */
void rk_assert_same_records(const char *path_a, const char *path_b, size_t rows, int iter)
{
    size_t na, nb;
    char **a = rk_sorted_records(path_a, &na), **b = rk_sorted_records(path_b, &nb);
    if (na != rows + 1 || nb != rows + 1)
        fail_msg("iteration %d: %zu and %zu records, not %zu", iter, na - 1, nb - 1, rows);
    for (size_t i = 0; i < na; i++)
        if (strcmp(a[i], b[i])) fail_msg("iteration %d: rows differ:\n  %s\n  %s", iter, a[i], b[i]);
    free(a[0]);
    free(b[0]);
    free(a);
    free(b);
}

/* The integer after "key": in a report's JSON text, or -1 without it. */
long rk_report_number(const char *json, const char *key)
{
    const char *at = strstr(json, key);
    if (!at) return -1;
    return strtol(at + strlen(key) + 1, NULL, 10); /* past the colon */
}
