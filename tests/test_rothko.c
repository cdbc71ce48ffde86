/* test_rothko.c — Rothko-T ([LeFevre07] §2): on random tables and budgets small
 * enough to force several levels of repartitioning, with F_CACHE 1, 2, 8 and
 * chosen by the budget, the published table equals the in-memory Mondrian's
 * as a multiset of rows (k-anonymity, the l-diversity variants, Median and
 * InfoGain) and passes the verifier; spill storage is private (folder 0700,
 * unnamed files 0600) and nothing is left behind after success or failure. */
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

static void must_set(anonkit_job *job, anonkit_option o, const char *v)
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
static FILE *start_table(tu_rng *rng, const char *dir, int nqi, const int *categorical, int *leaves, const char *rest)
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

static void generate_with(tu_rng *rng, const char *dir, int nqi, const int *categorical, size_t n, int decimals,
                          int numeric)
{
    int leaves[8];
    FILE *f = start_table(rng, dir, nqi, categorical, leaves, numeric ? ",s,c,v,t,note" : ",s,c,note");
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

static void generate(tu_rng *rng, const char *dir, int nqi, const int *categorical, size_t n, int decimals)
{
    generate_with(rng, dir, nqi, categorical, n, decimals, 0);
}

static anonkit_job *job_for(const char *dir, int nqi, const int *categorical, const char *out)
{
    anonkit_job *job = anonkit_job_create();
    char qi[256] = "";
    for (int q = 0; q < nqi; q++) {
        char name[16];
        snprintf(name, sizeof name, "%sa%d", q ? "," : "", q);
        strcat(qi, name);
        if (categorical[q]) {
            char h[4200], file[32];
            snprintf(file, sizeof file, "h%d.csv", q);
            snprintf(h, sizeof h, "a%d=%s", q, tu_path(dir, file));
            must_set(job, ANONKIT_OPT_HIERARCHY, h);
        }
    }
    must_set(job, ANONKIT_OPT_QI, qi);
    must_set(job, ANONKIT_OPT_SENSITIVE, "s");
    must_set(job, ANONKIT_OPT_IDENTIFIER, "id");
    must_set(job, ANONKIT_OPT_INPUT, tu_path(dir, "in.csv"));
    must_set(job, ANONKIT_OPT_OUTPUT, out);
    must_set(job, ANONKIT_OPT_SEED, "5");
    must_set(job, ANONKIT_OPT_THREADS, "1");
    return job;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The CSV records of a file (quoted newlines kept inside), sorted. */
static char **sorted_records(const char *path, size_t *n)
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
static void assert_same_records(const char *path_a, const char *path_b, size_t rows, int iter)
{
    size_t na, nb;
    char **a = sorted_records(path_a, &na), **b = sorted_records(path_b, &nb);
    if (na != rows + 1 || nb != rows + 1)
        fail_msg("iteration %d: %zu and %zu records, not %zu", iter, na - 1, nb - 1, rows);
    for (size_t i = 0; i < na; i++)
        if (strcmp(a[i], b[i])) fail_msg("iteration %d: rows differ:\n  %s\n  %s", iter, a[i], b[i]);
    free(a[0]);
    free(b[0]);
    free(a);
    free(b);
}

static int dir_is_empty(const char *path)
{
    DIR *d = opendir(path);
    if (!d) return 0;
    struct dirent *e;
    int empty = 1;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) empty = 0;
    closedir(d);
    return empty;
}

static long report_number(const char *json, const char *key)
{
    const char *at = strstr(json, key);
    if (!at) return -1;
    return strtol(at + strlen(key) + 1, NULL, 10); /* past the colon */
}

static void test_identical_to_in_memory(void **state)
{
    (void)state;
    tu_rng rng = {2024};
    int repartitioned = 0, deep = 0, runs = 0;
    static const char *const fcaches[] = {"1", "2", "8", "0"};
    for (int iter = 0; iter < 28; iter++) {
        const char *tmp = tu_mkdtemp();
        char dir[4096];
        snprintf(dir, sizeof dir, "%s", tmp);
        const int nqi = 2 + (int)tu_below(&rng, 4);
        int categorical[8];
        for (int q = 0; q < nqi; q++) categorical[q] = tu_below(&rng, 2) == 0;
        const size_t n = 2500 + tu_below(&rng, 5000);
        generate(&rng, dir, nqi, categorical, n, iter % 3 == 0);
        char k[16], l[16];
        snprintf(k, sizeof k, "%d", 1 + (int)tu_below(&rng, 30));
        const int with_l = tu_below(&rng, 2) == 0;
        snprintf(l, sizeof l, "%d", 2);
        static const char *const variants[] = {"distinct", "entropy", "recursive", "probabilistic"};
        const char *variant = variants[tu_below(&rng, 4)];
        const int infogain = tu_below(&rng, 2) == 0;
        const char *fcache = fcaches[iter % 4];

        char mem_out[4200], ooc_out[4200], spill[4200], report[4200];
        snprintf(mem_out, sizeof mem_out, "%s/mem.csv", dir);
        snprintf(ooc_out, sizeof ooc_out, "%s/ooc.csv", dir);
        snprintf(spill, sizeof spill, "%s/spill", dir);
        snprintf(report, sizeof report, "%s/report.json", dir);
        mkdir(spill, 0700);
        anonkit_job *jobs[2];
        int rcs[2];
        for (int which = 0; which < 2; which++) {
            anonkit_job *job = job_for(dir, nqi, categorical, which ? ooc_out : mem_out);
            must_set(job, ANONKIT_OPT_K, k);
            if (with_l) {
                must_set(job, ANONKIT_OPT_L, l);
                must_set(job, ANONKIT_OPT_L_VARIANT, variant);
                if (!strcmp(variant, "recursive")) must_set(job, ANONKIT_OPT_C, "3");
            }
            if (infogain) {
                must_set(job, ANONKIT_OPT_SPLIT, "infogain");
                must_set(job, ANONKIT_OPT_CLASS, "c");
            }
            if (which) {
                must_set(job, ANONKIT_OPT_ALGORITHM, "rothko-t");
                must_set(job, ANONKIT_OPT_MEMORY, "256K");
                must_set(job, ANONKIT_OPT_BLOCK_SIZE, "2K");
                must_set(job, ANONKIT_OPT_FCACHE, fcache);
                must_set(job, ANONKIT_OPT_TMPDIR, spill);
                must_set(job, ANONKIT_OPT_REPORT, report);
                /* every third run: the first scan keeps too few rows, so the root is sampled by a scan */
                if (iter % 3 == 1) job_set_knob(job, JOB_KNOB_FIRST_SAMPLE_ROWS, 20);
            }
            anonkit_result *res = NULL;
            rcs[which] = anonkit_anonymize(job, &res);
            anonkit_result_free(res);
            jobs[which] = job;
        }
        if (rcs[0] != rcs[1])
            fail_msg("iteration %d: in memory %d (%s), rothko-t %d (%s)", iter, rcs[0], anonkit_errmsg(jobs[0]), rcs[1],
                     anonkit_errmsg(jobs[1]));
        if (!dir_is_empty(spill)) fail_msg("iteration %d: spill files left behind", iter);
        if (rcs[0] == ANONKIT_OK) {
            assert_same_records(mem_out, ooc_out, n, iter);
            char what[32];
            snprintf(what, sizeof what, "iteration %d", iter);
            assert_int_equal(tu_verify(jobs[1], ooc_out, what, NULL), n);
            char *json = tu_read_file(report, NULL);
            assert_non_null(json);
            const long reparts = report_number(json, "\"repartitions\"");
            repartitioned += reparts > 0;
            deep += reparts > 2;
            free(json);
            runs++;
        } else {
            assert_int_equal(rcs[0], ANONKIT_E_INELIGIBLE);
            assert_int_equal(access(ooc_out, F_OK), -1);
        }
        anonkit_job_free(jobs[0]);
        anonkit_job_free(jobs[1]);
        tu_rmtree(dir);
    }
    print_message("%d runs, %d repartitioned, %d more than twice\n", runs, repartitioned, deep);
    assert_true(runs >= 20);
    assert_true(repartitioned >= 15);
    assert_true(deep >= 3);
}

/* Integers spread wider than the presence bitmap of the streaming dictionary
 * (2^28 values) are ranked through its hash map, mixed with decimals: the
 * out-of-core output still equals the in-memory one. */
static void test_wide_integer_range(void **state)
{
    (void)state;
    tu_rng rng = {31};
    const char *tmp = tu_mkdtemp();
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", tmp);
    FILE *f = fopen(tu_path(dir, "in.csv"), "w");
    assert_non_null(f);
    fprintf(f, "id,a0,a1,s,c,note\n");
    for (int i = 0; i < 4000; i++) {
        const long a = tu_below(&rng, 2) ? (long)tu_below(&rng, 1999999999) - 999999999 : (long)tu_below(&rng, 50);
        if (i % 7) fprintf(f, "%d,%ld,%d,s%d,yes,x\n", i, a, (int)tu_below(&rng, 300), (int)tu_below(&rng, 4));
        else fprintf(f, "%d,%ld,%d.25,s%d,no,x\n", i, a, (int)tu_below(&rng, 300), (int)tu_below(&rng, 4));
    }
    fclose(f);
    const int categorical[2] = {0, 0};
    char outs[2][4200];
    for (int which = 0; which < 2; which++) {
        snprintf(outs[which], sizeof outs[which], "%s/out%d.csv", dir, which);
        anonkit_job *job = job_for(dir, 2, categorical, outs[which]);
        must_set(job, ANONKIT_OPT_K, "5");
        must_set(job, ANONKIT_OPT_L, "2");
        if (which) {
            must_set(job, ANONKIT_OPT_ALGORITHM, "rothko-t");
            must_set(job, ANONKIT_OPT_MEMORY, "300K");
            must_set(job, ANONKIT_OPT_BLOCK_SIZE, "2K");
        }
        anonkit_result *res = NULL;
        if (anonkit_anonymize(job, &res) != ANONKIT_OK) fail_msg("run %d: %s", which, anonkit_errmsg(job));
        anonkit_result_free(res);
        anonkit_job_free(job);
    }
    assert_same_records(outs[0], outs[1], 4000, 0);
    tu_rmtree(dir);
}

enum { WITH_L = 1, WITH_INFOGAIN = 2 };

/* Runs the table in dir/in.csv (columns id, a0.., s, c, note) in memory and
 * with rothko-t (memory, block size, F_CACHE; with flags WITH_L distinct
 * l = 2, WITH_INFOGAIN InfoGain on c), fails unless both publish the same
 * rows, and returns rothko-t's report. */
static char *same_as_in_memory(const char *dir, int nqi, const int *categorical, const char *k, int flags,
                               const char *memory, const char *block, const char *fcache)
{
    char outs[2][4200], report[4200];
    snprintf(report, sizeof report, "%s/report.json", dir);
    for (int which = 0; which < 2; which++) {
        snprintf(outs[which], sizeof outs[which], "%s/out%d.csv", dir, which);
        anonkit_job *job = job_for(dir, nqi, categorical, outs[which]);
        must_set(job, ANONKIT_OPT_K, k);
        if (flags & WITH_L) must_set(job, ANONKIT_OPT_L, "2");
        if (flags & WITH_INFOGAIN) {
            must_set(job, ANONKIT_OPT_SPLIT, "infogain");
            must_set(job, ANONKIT_OPT_CLASS, "c");
        }
        if (which) {
            must_set(job, ANONKIT_OPT_ALGORITHM, "rothko-t");
            must_set(job, ANONKIT_OPT_MEMORY, memory);
            must_set(job, ANONKIT_OPT_BLOCK_SIZE, block);
            must_set(job, ANONKIT_OPT_FCACHE, fcache);
            must_set(job, ANONKIT_OPT_REPORT, report);
        }
        anonkit_result *res = NULL;
        if (anonkit_anonymize(job, &res) != ANONKIT_OK) fail_msg("run %d: %s", which, anonkit_errmsg(job));
        anonkit_result_free(res);
        anonkit_job_free(job);
    }
    size_t na, nb;
    char **a = sorted_records(outs[0], &na), **b = sorted_records(outs[1], &nb);
    assert_int_equal(na, nb);
    for (size_t i = 0; i < na; i++)
        if (strcmp(a[i], b[i])) fail_msg("rows differ:\n  %s\n  %s", a[i], b[i]);
    free(a[0]);
    free(b[0]);
    free(a);
    free(b);
    char *json = tu_read_file(report, NULL);
    assert_non_null(json);
    return json;
}

/* A numeric QI with 70,000 distinct values whose normalized range an outlier
 * makes small, so that the other QIs are split first and partitions of a few
 * thousand rows still span most of its codes: their AV sets for it are
 * counted sparsely, and repartitioned tuples store it in 3 bytes, the others
 * in 1 or 2 (20 bytes a tuple unnarrowed). The output equals the in-memory
 * one under Median / k-anonymity and InfoGain / l-diversity. */
static void test_wide_numeric_sparse_and_narrow(void **state)
{
    (void)state;
    tu_rng rng = {77};
    const char *tmp = tu_mkdtemp();
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", tmp);
    enum { N = 70000 };
    int *perm = malloc(N * sizeof *perm);
    assert_non_null(perm);
    for (int i = 0; i < N; i++) perm[i] = i;
    for (int i = N - 1; i > 0; i--) {
        const int j = (int)tu_below(&rng, (uint64_t)i + 1), t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    FILE *f = fopen(tu_path(dir, "in.csv"), "w");
    assert_non_null(f);
    fprintf(f, "id,a0,a1,a2,s,c,note\n");
    for (int i = 0; i < N; i++)
        fprintf(f, "%d,%d,%d,%d,s%d,%s,n%d\n", i, perm[i] == 0 ? 16 * N : perm[i], (int)tu_below(&rng, 2000),
                (int)tu_below(&rng, 40), (int)tu_below(&rng, 5), tu_below(&rng, 3) ? "yes" : "no", i % 3);
    fclose(f);
    free(perm);
    const int categorical[3] = {0, 0, 0};
    for (int variant = 0; variant < 2; variant++) {
        char *json = same_as_in_memory(dir, 3, categorical, variant ? "4" : "5", variant ? WITH_L | WITH_INFOGAIN : 0, "2M", "4K", "1");
        const long sparse = report_number(json, "\"sparse_av_sets\""), reparts = report_number(json, "\"repartitions\"");
        const long written = report_number(json, "\"blocks_written\""), rows = report_number(json, "\"rows_written\"");
        print_message("variant %d: %ld repartitions, %ld sparse AV sets, %ld blocks written for %ld tuples\n", variant,
                      reparts, sparse, written, rows);
        assert_true(reparts >= 3);
        assert_true(sparse > 0);
        /* narrowed: well under the 20 bytes a tuple of 4-byte codes takes (blocks rounded up per file) */
        assert_true(rows > 0);
        assert_true((double)written * 4096 < 0.6 * 20 * (double)rows);
        free(json);
    }
    tu_rmtree(dir);
}

/* A categorical QI of 60,000 leaves (in 10 groups) and 12,000 rows: even the
 * root's AV set for it is counted sparsely (96 KB where dense counts take
 * 240 KB, more than this budget leaves for frequency groups), and the output
 * equals the in-memory one. */
static void test_wide_hierarchy_sparse(void **state)
{
    (void)state;
    tu_rng rng = {78};
    const char *tmp = tu_mkdtemp();
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", tmp);
    enum { LEAVES = 60000, N = 12000 };
    FILE *h = fopen(tu_path(dir, "h0.csv"), "w");
    assert_non_null(h);
    for (int i = 0; i < LEAVES; i++) fprintf(h, "v%d;g%d;*\n", i, i / (LEAVES / 10));
    fclose(h);
    FILE *f = fopen(tu_path(dir, "in.csv"), "w");
    assert_non_null(f);
    fprintf(f, "id,a0,a1,s,c,note\n");
    for (int i = 0; i < N; i++)
        fprintf(f, "%d,v%d,%d,s%d,%s,x\n", i, (int)tu_below(&rng, LEAVES), (int)tu_below(&rng, 300),
                (int)tu_below(&rng, 4), tu_below(&rng, 2) ? "yes" : "no");
    fclose(f);
    const int categorical[2] = {1, 0};
    char *json = same_as_in_memory(dir, 2, categorical, "5", 0, "4000K", "4K", "0");
    const long sparse = report_number(json, "\"sparse_av_sets\""), reparts = report_number(json, "\"repartitions\"");
    print_message("%ld repartitions, %ld sparse AV sets\n", reparts, sparse);
    assert_true(reparts >= 1);
    assert_true(sparse > 0);
    free(json);
    tu_rmtree(dir);
}

/* Two categorical QIs of 1,000 leaves of which the rows use 10, under one
 * node of 10: over the codes they could hold they look the widest QIs, so the
 * root's first scan counts them and skips the numeric one, whose box is in
 * fact the widest; Median then tries it first and the root is counted again
 * in full. The output equals the in-memory one (k-anonymity with F_CACHE 1,
 * l-diversity with F_CACHE 4). */
static void test_recount_when_prediction_misses(void **state)
{
    (void)state;
    tu_rng rng = {79};
    const char *tmp = tu_mkdtemp();
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", tmp);
    for (int q = 0; q < 2; q++) {
        FILE *h = fopen(tu_path(dir, q ? "h1.csv" : "h0.csv"), "w");
        assert_non_null(h);
        for (int i = 0; i < 1000; i++) fprintf(h, "v%d;g%d;*\n", i, i / 10);
        fclose(h);
    }
    FILE *f = fopen(tu_path(dir, "in.csv"), "w");
    assert_non_null(f);
    fprintf(f, "id,a0,a1,a2,s,c,note\n");
    for (int i = 0; i < 6000; i++)
        fprintf(f, "%d,v%d,v%d,%d,s%d,%s,x\n", i, 500 + (int)tu_below(&rng, 10), 500 + (int)tu_below(&rng, 10),
                (int)tu_below(&rng, 1000), (int)tu_below(&rng, 4), tu_below(&rng, 2) ? "yes" : "no");
    fclose(f);
    const int categorical[3] = {1, 1, 0};
    for (int variant = 0; variant < 2; variant++) {
        char *json = same_as_in_memory(dir, 3, categorical, "5", variant ? WITH_L : 0, "300K", "2K", variant ? "4" : "1");
        const long recounted = report_number(json, "\"recounted_nodes\""), reparts = report_number(json, "\"repartitions\"");
        print_message("F_CACHE %s: %ld repartitions, %ld nodes counted again\n", variant ? "4" : "1", reparts, recounted);
        assert_true(reparts >= 1);
        assert_true(recounted >= 1);
        free(json);
    }
    tu_rmtree(dir);
}

/* Spill files are 0600 and have no name, in the temporary folder itself: no
 * private folder is made, so the folder shows nothing while they are open
 * and no signal can leave anything in it. */
static void test_spill_privacy(void **state)
{
    (void)state;
    const char *tmp = tu_mkdtemp();
    char parent[4096];
    snprintf(parent, sizeof parent, "%s", tmp);
    spill_dir dir;
    ak_error err;
    assert_int_equal(spill_dir_create(&dir, parent, &err), ANONKIT_OK);
    assert_true(dir_is_empty(parent));
    struct stat st;
    spill_file f;
    assert_int_equal(spill_file_open(&f, &dir, &err), ANONKIT_OK);
    assert_int_equal(fstat(f.fd, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    assert_int_equal(st.st_nlink, 0);
    assert_true(dir_is_empty(parent));
    /* what is written reads back, across block boundaries */
    spill_stats io = {0};
    spill_writer w;
    assert_int_equal(spill_writer_init(&w, &f, &dir, 512, &io, &err), ANONKIT_OK);
    for (uint32_t i = 0; i < 1000; i++) assert_int_equal(spill_write(&w, &i, 3, &err), ANONKIT_OK);
    assert_int_equal(spill_writer_flush(&w, &err), ANONKIT_OK);
    spill_writer_free(&w);
    assert_int_equal(io.blocks_written, (3000 + 511) / 512);
    spill_reader rd;
    assert_int_equal(spill_reader_init(&rd, &f, 512, &io, &err), ANONKIT_OK);
    const uint8_t *p;
    for (uint32_t i = 0; i < 1000; i++) {
        assert_int_equal(spill_read(&rd, 3, &p, &err), 1);
        uint32_t v = 0;
        memcpy(&v, p, 3);
        assert_int_equal(v, i & 0xffffff);
    }
    assert_int_equal(spill_read(&rd, 3, &p, &err), 0);
    assert_int_equal(io.blocks_read, (3000 + 511) / 512);
    spill_reader_free(&rd);
    /* a file smaller than a block, then the first one again as its tail: one
     * stream of whole records (the reader's buffer is only as large as both
     * files), with SPILL_READ_SLACK zero bytes past every block */
    spill_file small;
    assert_int_equal(spill_file_open(&small, &dir, &err), ANONKIT_OK);
    assert_int_equal(spill_writer_init(&w, &small, &dir, 512, &io, &err), ANONKIT_OK);
    for (uint32_t i = 0; i < 7; i++) assert_int_equal(spill_write(&w, &(uint32_t){i + 5000}, 3, &err), ANONKIT_OK);
    assert_int_equal(spill_writer_flush(&w, &err), ANONKIT_OK);
    spill_writer_free(&w);
    for (int with_tail = 0; with_tail < 2; with_tail++) {
        assert_int_equal(spill_reader_init(&rd, &small, 4096, &io, &err), ANONKIT_OK);
        if (with_tail) spill_reader_then(&rd, &f);
        size_t count = 0;
        for (uint32_t i = 0;; i++) {
            const int got = spill_read_records(&rd, 3, 1, &p, &count, &err);
            assert_true(got >= 0);
            if (got == 0) {
                assert_int_equal(i, with_tail ? 1007 : 7);
                break;
            }
            uint32_t v = 0;
            memcpy(&v, p, 3);
            assert_int_equal(v, i < 7 ? i + 5000 : (i - 7) & 0xffffff);
            if (i == 6 && !with_tail)
                for (int b = 3; b < 3 + SPILL_READ_SLACK; b++) assert_int_equal(p[b], 0);
        }
        spill_reader_free(&rd);
    }
    spill_file_close(&small);
    spill_file_close(&f);
    spill_dir_remove(&dir);
    assert_true(dir_is_empty(parent));
    tu_rmtree(parent);
}

/* An unwritable spill folder and a model the table cannot meet are clear
 * errors that leave neither output nor spill files. */
static void test_failures_leave_nothing(void **state)
{
    (void)state;
    tu_rng rng = {9};
    const char *tmp = tu_mkdtemp();
    char dir[4096], out[4200], spill[4200];
    snprintf(dir, sizeof dir, "%s", tmp);
    snprintf(out, sizeof out, "%s/out.csv", dir);
    snprintf(spill, sizeof spill, "%s/spill", dir);
    const int categorical[2] = {0, 1};
    generate(&rng, dir, 2, categorical, 3000, 0);

    anonkit_job *job = job_for(dir, 2, categorical, out);
    must_set(job, ANONKIT_OPT_K, "2");
    must_set(job, ANONKIT_OPT_ALGORITHM, "rothko-t");
    must_set(job, ANONKIT_OPT_MEMORY, "256K");
    must_set(job, ANONKIT_OPT_BLOCK_SIZE, "2K");
    must_set(job, ANONKIT_OPT_TMPDIR, tu_path(dir, "missing/folder"));
    anonkit_result *res = NULL;
    assert_int_equal(anonkit_anonymize(job, &res), ANONKIT_E_IO);
    assert_non_null(strstr(anonkit_errmsg(job), "cannot create spill files"));
    assert_int_equal(access(out, F_OK), -1);

    mkdir(spill, 0700);
    must_set(job, ANONKIT_OPT_TMPDIR, spill);
    must_set(job, ANONKIT_OPT_L, "50"); /* more than the sensitive values */
    assert_int_equal(anonkit_anonymize(job, &res), ANONKIT_E_INELIGIBLE);
    assert_int_equal(access(out, F_OK), -1);
    assert_true(dir_is_empty(spill));

    must_set(job, ANONKIT_OPT_L, "1");
    must_set(job, ANONKIT_OPT_MEMORY, "64K"); /* with 8K blocks too small for the buffers and one partition */
    must_set(job, ANONKIT_OPT_BLOCK_SIZE, "8K");
    assert_int_equal(anonkit_anonymize(job, &res), ANONKIT_E_USAGE);
    assert_non_null(strstr(anonkit_errmsg(job), "too small"));
    assert_true(dir_is_empty(spill));
    assert_int_equal(access(out, F_OK), -1);
    anonkit_job_free(job);
    tu_rmtree(dir);
}

/* Sets the model, split and sampling options of one random Rothko-S case on
 * job (and the same model and split on the in-memory job, mem). */
typedef struct rs_case {
    char k[16], variance[32];
    int model;          /* 0 k-anonymity, 1 l-diversity of s, 2 variance diversity of v */
    const char *variant, *split, *test, *sample, *depth;
} rs_case;

static void rs_case_pick(tu_rng *rng, rs_case *c)
{
    static const char *const variants[] = {"distinct", "entropy", "recursive", "probabilistic"};
    static const char *const splits[] = {"median", "infogain", "regression"};
    static const char *const samples[] = {"100", "300", "1000", NULL};
    static const char *const variances[] = {"20000", "60000", "80000"};
    snprintf(c->k, sizeof c->k, "%d", 1 + (int)tu_below(rng, 60));
    c->model = (int)tu_below(rng, 3);
    c->variant = variants[tu_below(rng, 4)];
    snprintf(c->variance, sizeof c->variance, "%s", variances[tu_below(rng, 3)]);
    c->split = splits[tu_below(rng, 3)];
    c->test = tu_below(rng, 2) ? "hypothesis" : "naive";
    c->sample = samples[tu_below(rng, 4)];
    c->depth = tu_below(rng, 3) == 0 ? "3" : NULL;
}

static void rs_case_apply(anonkit_job *job, const rs_case *c, int sampled)
{
    must_set(job, ANONKIT_OPT_K, c->k);
    if (c->model == 1) {
        must_set(job, ANONKIT_OPT_L, "2");
        must_set(job, ANONKIT_OPT_L_VARIANT, c->variant);
    } else if (c->model == 2) {
        must_set(job, ANONKIT_OPT_SENSITIVE, "v");
        must_set(job, ANONKIT_OPT_VARIANCE, c->variance);
    }
    must_set(job, ANONKIT_OPT_SPLIT, c->split);
    if (!strcmp(c->split, "infogain")) must_set(job, ANONKIT_OPT_CLASS, "c");
    if (!strcmp(c->split, "regression")) must_set(job, ANONKIT_OPT_TARGET, "t");
    if (!sampled) return;
    must_set(job, ANONKIT_OPT_ALGORITHM, "rothko-s");
    must_set(job, ANONKIT_OPT_TEST, c->test);
    if (c->sample) must_set(job, ANONKIT_OPT_SAMPLE_SIZE, c->sample);
    if (c->depth) must_set(job, ANONKIT_OPT_GROWTH_DEPTH, c->depth);
}

/* Rothko-S ([LeFevre07] §3) on random tables with budgets and sample sizes that force
 * growth phases on samples — hypothesis tests and the naive rule; Median,
 * InfoGain and Regression; k-anonymity, the l-diversity variants and variance
 * diversity: the output always passes the verifier with every row published
 * once, a table the model cannot fit is refused as in memory, and no spill
 * file stays behind. Pruning and partitions without a confident split occur. */
static void test_sampled_always_valid(void **state)
{
    (void)state;
    tu_rng rng = {77};
    int runs = 0, sampled = 0, pruned = 0, unsplit = 0, in_first_scan = 0, by_scan = 0;
    for (int iter = 0; iter < 36; iter++) {
        const char *tmp = tu_mkdtemp();
        char dir[4096];
        snprintf(dir, sizeof dir, "%s", tmp);
        const int nqi = 2 + (int)tu_below(&rng, 3);
        int categorical[8];
        for (int q = 0; q < nqi; q++) categorical[q] = tu_below(&rng, 2) == 0;
        const size_t n = 2000 + tu_below(&rng, 4000);
        generate_with(&rng, dir, nqi, categorical, n, iter % 3 == 0, 1);
        rs_case c;
        rs_case_pick(&rng, &c);
        char outs[2][4200], spill[4200], report[4200];
        snprintf(outs[0], sizeof outs[0], "%s/mem.csv", dir);
        snprintf(outs[1], sizeof outs[1], "%s/rs.csv", dir);
        snprintf(spill, sizeof spill, "%s/spill", dir);
        snprintf(report, sizeof report, "%s/report.json", dir);
        mkdir(spill, 0700);
        anonkit_job *jobs[2];
        int rcs[2];
        for (int which = 0; which < 2; which++) {
            anonkit_job *job = jobs[which] = job_for(dir, nqi, categorical, outs[which]);
            rs_case_apply(job, &c, which);
            if (which) {
                must_set(job, ANONKIT_OPT_MEMORY, "256K");
                must_set(job, ANONKIT_OPT_BLOCK_SIZE, "2K");
                must_set(job, ANONKIT_OPT_TMPDIR, spill);
                must_set(job, ANONKIT_OPT_REPORT, report);
                /* every third run: the first scan keeps too few rows, so the root is sampled by a scan */
                if (iter % 3 == 1) job_set_knob(job, JOB_KNOB_FIRST_SAMPLE_ROWS, 20);
            }
            anonkit_result *res = NULL;
            rcs[which] = anonkit_anonymize(job, &res);
            anonkit_result_free(res);
        }
        if (!dir_is_empty(spill)) fail_msg("iteration %d: spill files left behind", iter);
        if (rcs[0] == ANONKIT_E_INELIGIBLE) {
            if (rcs[1] != ANONKIT_E_INELIGIBLE) fail_msg("iteration %d: rothko-s %d (%s)", iter, rcs[1], anonkit_errmsg(jobs[1]));
            assert_int_equal(access(outs[1], F_OK), -1);
        } else {
            if (rcs[0] != ANONKIT_OK || rcs[1] != ANONKIT_OK)
                fail_msg("iteration %d: in memory %d (%s), rothko-s %d (%s)", iter, rcs[0], anonkit_errmsg(jobs[0]),
                         rcs[1], anonkit_errmsg(jobs[1]));
            char what[32];
            snprintf(what, sizeof what, "iteration %d", iter);
            assert_int_equal(tu_verify(jobs[1], outs[1], what, NULL), n);
            char *json = tu_read_file(report, NULL);
            assert_non_null(json);
            sampled += report_number(json, "\"growth_phases\"") > 0;
            if (report_number(json, "\"growth_phases\"") > 0) {
                const int first = strstr(json, "\"sampled_in_first_scan\": true") != NULL;
                if (first && iter % 3 == 1) fail_msg("iteration %d: the root sampled from a store too small", iter);
                in_first_scan += first;
                by_scan += !first;
            }
            pruned += report_number(json, "\"pruned_nodes\"") > 0;
            unsplit += report_number(json, "\"no_confident_split\"") > 0;
            free(json);
            runs++;
        }
        anonkit_job_free(jobs[0]);
        anonkit_job_free(jobs[1]);
        tu_rmtree(dir);
    }
    print_message("%d runs: %d sampled (the root %d times while read, %d times by a scan), %d pruned, %d without a "
                  "confident split\n", runs, sampled, in_first_scan, by_scan, pruned, unsplit);
    assert_true(runs >= 25);
    assert_true(sampled >= 20);
    assert_true(in_first_scan >= 8 && by_scan >= 5);
    assert_true(pruned >= 1);
    assert_true(unsplit >= 1);
}

/* When the table fits in the budget the sample is the table and Rothko-S
 * publishes exactly what in-memory Mondrian does, for every split criterion
 * and model. */
static void test_sampled_fits_equals_in_memory(void **state)
{
    (void)state;
    tu_rng rng = {78};
    for (int iter = 0; iter < 12; iter++) {
        const char *tmp = tu_mkdtemp();
        char dir[4096];
        snprintf(dir, sizeof dir, "%s", tmp);
        const int nqi = 2 + (int)tu_below(&rng, 3);
        int categorical[8];
        for (int q = 0; q < nqi; q++) categorical[q] = tu_below(&rng, 2) == 0;
        const size_t n = 500 + tu_below(&rng, 2500);
        generate_with(&rng, dir, nqi, categorical, n, iter % 2, 1);
        rs_case c;
        rs_case_pick(&rng, &c);
        c.sample = NULL; /* as many rows as the budget holds: all of them */
        char outs[2][4200];
        int rcs[2];
        for (int which = 0; which < 2; which++) {
            snprintf(outs[which], sizeof outs[which], "%s/out%d.csv", dir, which);
            anonkit_job *job = job_for(dir, nqi, categorical, outs[which]);
            rs_case_apply(job, &c, which);
            if (which) must_set(job, ANONKIT_OPT_MEMORY, "8M");
            anonkit_result *res = NULL;
            rcs[which] = anonkit_anonymize(job, &res);
            anonkit_result_free(res);
            anonkit_job_free(job);
        }
        assert_int_equal(rcs[0], rcs[1]);
        if (rcs[0] == ANONKIT_OK) assert_same_records(outs[0], outs[1], n, iter);
        tu_rmtree(dir);
    }
}

/* Tiny samples and the naive rule with a large k make splits in error, which
 * pruning undoes ([LeFevre07] Figure 4): nodes are pruned and the output still
 * satisfies the model; the hypothesis test prunes less on the same input. */
static void test_sampled_pruning(void **state)
{
    (void)state;
    tu_rng rng = {79};
    const char *tmp = tu_mkdtemp();
    char dir[4096], out[4200], report[4200];
    snprintf(dir, sizeof dir, "%s", tmp);
    snprintf(out, sizeof out, "%s/out.csv", dir);
    snprintf(report, sizeof report, "%s/report.json", dir);
    const int categorical[2] = {0, 0};
    generate(&rng, dir, 2, categorical, 20000, 0);
    long pruned[2];
    for (int naive = 0; naive < 2; naive++) {
        anonkit_job *job = job_for(dir, 2, categorical, out);
        must_set(job, ANONKIT_OPT_K, "300");
        must_set(job, ANONKIT_OPT_ALGORITHM, "rothko-s");
        must_set(job, ANONKIT_OPT_MEMORY, "8M");
        must_set(job, ANONKIT_OPT_SAMPLE_SIZE, "100");
        must_set(job, ANONKIT_OPT_GROWTH_DEPTH, "8");
        must_set(job, ANONKIT_OPT_TEST, naive ? "naive" : "hypothesis");
        must_set(job, ANONKIT_OPT_REPORT, report);
        uint64_t rows = 0;
        anonkit_result_free(tu_anonymize_verified(job, out, 1, naive ? "naive" : "hypothesis", NULL, &rows));
        assert_int_equal(rows, 20000);
        char *json = tu_read_file(report, NULL);
        pruned[naive] = report_number(json, "\"pruned_nodes\"");
        free(json);
        anonkit_job_free(job);
    }
    print_message("pruned nodes: %ld with the hypothesis test, %ld with the naive rule\n", pruned[0], pruned[1]);
    assert_true(pruned[1] > 0);
    assert_true(pruned[0] < pruned[1]);
    tu_rmtree(dir);
}

/* Files a partition is done with are reused for later partitions rather than
 * created anew (ext4 takes ever longer to create a file while thousands were
 * deleted moments before): with small samples and shallow growth phases,
 * hundreds of partitions come and go, yet the run creates fewer files than
 * it finishes partitions, reads back only what each partition wrote (the
 * output is valid and every row published once), and leaves nothing behind. */
static void test_sampled_reuses_files(void **state)
{
    (void)state;
    tu_rng rng = {80};
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", tu_mkdtemp());
    const char *out = tu_path(dir, "out.csv"), *report = tu_path(dir, "report.json"), *spill = tu_path(dir, "spill");
    mkdir(spill, 0700);
    const int categorical[3] = {0, 1, 0};
    generate(&rng, dir, 3, categorical, 30000, 0);
    anonkit_job *job = job_for(dir, 3, categorical, out);
    must_set(job, ANONKIT_OPT_K, "5");
    must_set(job, ANONKIT_OPT_ALGORITHM, "rothko-s");
    must_set(job, ANONKIT_OPT_MEMORY, "8M");
    must_set(job, ANONKIT_OPT_SAMPLE_SIZE, "300");
    must_set(job, ANONKIT_OPT_GROWTH_DEPTH, "3");
    must_set(job, ANONKIT_OPT_TMPDIR, spill);
    must_set(job, ANONKIT_OPT_REPORT, report);
    anonkit_result_free(tu_anonymize(job, out, 1, "rothko-s"));
    if (!dir_is_empty(spill)) fail_msg("spill files left behind");
    assert_int_equal(tu_verify(job, out, "rothko-s", NULL), 30000);
    char *json = tu_read_file(report, NULL);
    assert_non_null(json);
    const long phases = report_number(json, "\"growth_phases\"");
    const long partitions = report_number(json, "\"partitions_in_memory\"");
    const long created = report_number(json, "\"spill_files_created\"");
    print_message("%ld growth phases, %ld partitions finished in memory, %ld spill files created\n", phases,
                  partitions, created);
    assert_true(phases >= 20);
    assert_true(partitions >= 100);
    assert_true(created >= 2 && created < partitions);
    free(json);
    anonkit_job_free(job);
    tu_rmtree(dir);
}

/* A random table without quote characters (so that it may be read in two
 * pieces): integer, decimal and zero-padded numeric QIs, categorical ones,
 * and labels of which some first appear in the second half, so that the
 * second piece's dictionaries differ from the first's. */
static void generate_plain(tu_rng *rng, const char *dir, int nqi, const int *categorical, size_t n)
{
    int leaves[8];
    FILE *f = start_table(rng, dir, nqi, categorical, leaves, ",s,c,v,t,note");
    const int sdomain = 2 + (int)tu_below(rng, 5);
    const int spread = 5 + (int)tu_below(rng, 300);
    for (size_t i = 0; i < n; i++) {
        const int late = i >= n / 2; /* the second half brings labels of its own */
        fprintf(f, "%zu", i);
        for (int q = 0; q < nqi; q++) {
            const int v = (int)tu_below(rng, (uint64_t)spread);
            if (categorical[q]) fprintf(f, ",v%d", (int)tu_below(rng, (uint64_t)leaves[q]));
            else if (q % 3 == 1 && tu_below(rng, 6) == 0) fprintf(f, ",%d.25", v - 9);
            else if (q % 3 == 2 && tu_below(rng, 9) == 0) fprintf(f, ",0%d", v + 1);
            else fprintf(f, ",%d", v - 9);
        }
        fprintf(f, ",s%d,%s", (int)tu_below(rng, (uint64_t)sdomain) + (late ? 2 : 0),
                late && tu_below(rng, 4) == 0 ? "maybe" : tu_below(rng, 3) ? "yes" : "no");
        fprintf(f, ",%d,%d.%d,plain %zu\n", (int)tu_below(rng, 1000), (int)tu_below(rng, 500), (int)tu_below(rng, 10),
                i % 13);
    }
    fclose(f);
}

/* The first scan reading the input in two pieces on two threads (the second
 * piece with dictionaries of its own, mapped when its rows are read back),
 * with repartitioning on two threads too (one decoding and routing, one
 * writing), publishes byte for byte what one sequential read and scan
 * publish, under Rothko-T and Rothko-S, k and l, Median and InfoGain, and the
 * report says which way the input was read. A missing value in the second half is still reported
 * with its line, as by the sequential read. */
static void test_two_pieces_read_as_one(void **state)
{
    (void)state;
    tu_rng rng = {91};
    int two = 0, valid = 0, repartitioned = 0, first_scan_samples = 0;
    for (int iter = 0; iter < 16; iter++) {
        const char *tmp = tu_mkdtemp();
        char dir[4096];
        snprintf(dir, sizeof dir, "%s", tmp);
        const int nqi = 2 + (int)tu_below(&rng, 4);
        int categorical[8];
        for (int q = 0; q < nqi; q++) categorical[q] = q > 0 && tu_below(&rng, 3) == 0;
        const size_t n = 1500 + tu_below(&rng, 4000);
        generate_plain(&rng, dir, nqi, categorical, n);
        const int sampled = iter % 2, with_l = tu_below(&rng, 2) == 0, infogain = tu_below(&rng, 2) == 0;
        char k[16];
        snprintf(k, sizeof k, "%d", 2 + (int)tu_below(&rng, 25));
        char outs[2][4200], reports[2][4200];
        int rcs[2];
        for (int pieces = 1; pieces <= 2; pieces++) {
            const int w = pieces - 1;
            snprintf(outs[w], sizeof outs[w], "%s/out%d.csv", dir, pieces);
            snprintf(reports[w], sizeof reports[w], "%s/report%d.json", dir, pieces);
            anonkit_job *job = job_for(dir, nqi, categorical, outs[w]);
            must_set(job, ANONKIT_OPT_K, k);
            if (with_l) {
                must_set(job, ANONKIT_OPT_L, "2");
                must_set(job, ANONKIT_OPT_L_VARIANT, "entropy");
            }
            if (infogain) {
                must_set(job, ANONKIT_OPT_SPLIT, "infogain");
                must_set(job, ANONKIT_OPT_CLASS, "c");
            }
            must_set(job, ANONKIT_OPT_ALGORITHM, sampled ? "rothko-s" : "rothko-t");
            must_set(job, ANONKIT_OPT_MEMORY, "256K");
            must_set(job, ANONKIT_OPT_BLOCK_SIZE, "2K");
            if (sampled) must_set(job, ANONKIT_OPT_SAMPLE_SIZE, "300");
            must_set(job, ANONKIT_OPT_REPORT, reports[w]);
            if (pieces == 2) {
                must_set(job, ANONKIT_OPT_THREADS, "2");
                job_set_knob(job, JOB_KNOB_PARALLEL_MIN_BYTES, 1);
                job_set_knob(job, JOB_KNOB_PIPELINE_MIN_ROWS, 1); /* and repartitioned on two threads */
            }
            anonkit_result *res = NULL;
            rcs[w] = anonkit_anonymize(job, &res);
            anonkit_result_free(res);
            if (rcs[w] == ANONKIT_OK && pieces == 2) {
                char what[32];
                snprintf(what, sizeof what, "iteration %d", iter);
                assert_int_equal(tu_verify(job, outs[w], what, NULL), n);
                valid++;
            }
            anonkit_job_free(job);
        }
        assert_int_equal(rcs[0], rcs[1]);
        if (rcs[0] == ANONKIT_OK) {
            size_t la, lb;
            char *a = tu_read_file(outs[0], &la), *b = tu_read_file(outs[1], &lb);
            if (la != lb || memcmp(a, b, la)) fail_msg("iteration %d: two pieces publish other rows than one", iter);
            free(a);
            free(b);
            for (int w = 0; w < 2; w++) {
                char *json = tu_read_file(reports[w], NULL);
                assert_int_equal(report_number(json, "\"first_scan_pieces\""), w + 1);
                first_scan_samples += strstr(json, "\"sampled_in_first_scan\": true") != NULL;
                repartitioned += w == 1 && report_number(json, "\"repartitions\"") > 0;
                free(json);
            }
            two++;
        }
        tu_rmtree(dir);
    }
    print_message("%d of 16 tables published, all alike read in one or two pieces (%d repartitioned; %d samples of "
                  "the root drawn while read)\n", two, repartitioned, first_scan_samples);
    assert_true(two >= 12 && valid == two && repartitioned >= 8 && first_scan_samples >= 8);

    /* a value missing from its hierarchy in the second half: the sequential read's message */
    const char *tmp = tu_mkdtemp();
    char dir[4096], out[4200];
    snprintf(dir, sizeof dir, "%s", tmp);
    snprintf(out, sizeof out, "%s/out.csv", dir);
    const int categorical[2] = {0, 1};
    generate_plain(&rng, dir, 2, categorical, 3000);
    FILE *f = fopen(tu_path(dir, "in.csv"), "a");
    assert_non_null(f);
    fprintf(f, "3000,5,nowhere,s1,yes,1,1.0,plain\n");
    fclose(f);
    anonkit_job *job = job_for(dir, 2, categorical, out);
    must_set(job, ANONKIT_OPT_K, "5");
    must_set(job, ANONKIT_OPT_ALGORITHM, "rothko-t");
    must_set(job, ANONKIT_OPT_MEMORY, "256K");
    must_set(job, ANONKIT_OPT_THREADS, "2");
    job_set_knob(job, JOB_KNOB_PARALLEL_MIN_BYTES, 1);
    anonkit_result *res = NULL;
    assert_int_equal(anonkit_anonymize(job, &res), ANONKIT_E_INPUT);
    anonkit_result_free(res);
    if (!strstr(anonkit_errmsg(job), "nowhere") || !strstr(anonkit_errmsg(job), "3002"))
        fail_msg("message: %s", anonkit_errmsg(job));
    assert_int_equal(access(out, F_OK), -1);
    anonkit_job_free(job);
    tu_rmtree(dir);
}

/* Rothko-T and Rothko-S publish byte for byte the same file with one
 * thread (written as composed) as with two (written by the writer's thread
 * while the next block is composed), on a table cut into several partitions
 * whose output spans more than one of the writer's buffers; written to a
 * full device, both report the write failure of the one-thread run and
 * leave nothing behind. */
/* The job of test_threads_write_alike: k = 3 in 8M, with `threads` threads. */
static anonkit_job *threads_job(const char *dir, const int *categorical, const char *out, const char *algorithm,
                                const char *spill, int threads)
{
    anonkit_job *job = job_for(dir, 3, categorical, out);
    must_set(job, ANONKIT_OPT_K, "3");
    must_set(job, ANONKIT_OPT_ALGORITHM, algorithm);
    must_set(job, ANONKIT_OPT_MEMORY, "8M");
    must_set(job, ANONKIT_OPT_TMPDIR, spill);
    must_set(job, ANONKIT_OPT_THREADS, threads > 1 ? "2" : "1");
    return job;
}

static void test_threads_write_alike(void **state)
{
    (void)state;
    tu_rng rng = {77};
    const char *tmp = tu_mkdtemp();
    char dir[4096], spill[4200];
    snprintf(dir, sizeof dir, "%s", tmp);
    snprintf(spill, sizeof spill, "%s/spill", dir);
    mkdir(spill, 0700);
    const int categorical[3] = {0, 1, 0};
    const size_t n = 120000; /* about 5 MB of output, in partitions of more than a buffer (512 KiB) */
    generate_with(&rng, dir, 3, categorical, n, 1, 1);
    static const char *const algorithms[] = {"rothko-t", "rothko-s"};
    for (int a = 0; a < 2; a++) {
        char outs[2][4200];
        for (int t = 0; t < 2; t++) {
            snprintf(outs[t], sizeof outs[t], "%s/out-%s-%d.csv", dir, algorithms[a], t + 1);
            anonkit_job *job = threads_job(dir, categorical, outs[t], algorithms[a], spill, t + 1);
            anonkit_result *res = NULL;
            if (anonkit_anonymize(job, &res) != ANONKIT_OK) fail_msg("%s: %s", algorithms[a], anonkit_errmsg(job));
            anonkit_result_free(res);
            anonkit_job_free(job);
        }
        size_t la, lb;
        char *one = tu_read_file(outs[0], &la), *two = tu_read_file(outs[1], &lb);
        assert_non_null(one);
        assert_non_null(two);
        assert_true(la > ((size_t)3 << 20));
        if (la != lb || memcmp(one, two, la)) fail_msg("%s: two threads publish other bytes than one", algorithms[a]);
        free(one);
        free(two);

        char messages[2][512];
        for (int t = 0; t < 2; t++) {
            anonkit_job *job = threads_job(dir, categorical, "/dev/full", algorithms[a], spill, t + 1);
            anonkit_result *res = NULL;
            assert_int_equal(anonkit_anonymize(job, &res), ANONKIT_E_IO);
            assert_null(res);
            snprintf(messages[t], sizeof messages[t], "%s", anonkit_errmsg(job));
            anonkit_job_free(job);
            if (!strstr(messages[t], "/dev/full") || !strstr(messages[t], strerror(ENOSPC)))
                fail_msg("%s, %d threads: %s", algorithms[a], t + 1, messages[t]);
            assert_true(dir_is_empty(spill));
        }
        assert_string_equal(messages[0], messages[1]);
    }
    tu_rmtree(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_identical_to_in_memory),
        cmocka_unit_test(test_wide_integer_range),
        cmocka_unit_test(test_wide_numeric_sparse_and_narrow),
        cmocka_unit_test(test_wide_hierarchy_sparse),
        cmocka_unit_test(test_recount_when_prediction_misses),
        cmocka_unit_test(test_spill_privacy),
        cmocka_unit_test(test_failures_leave_nothing),
        cmocka_unit_test(test_sampled_always_valid),
        cmocka_unit_test(test_sampled_fits_equals_in_memory),
        cmocka_unit_test(test_sampled_pruning),
        cmocka_unit_test(test_sampled_reuses_files),
        cmocka_unit_test(test_two_pieces_read_as_one),
        cmocka_unit_test(test_threads_write_alike),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
