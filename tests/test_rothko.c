/* test_rothko.c — Rothko-T ([LeFevre07] §2): on random tables and budgets small
 * enough to force several levels of repartitioning, with F_CACHE 1, 2, 8 and
 * chosen by the budget, the published table equals the in-memory Mondrian's
 * as a multiset of rows (k-anonymity, the l-diversity variants, Median and
 * InfoGain) and passes the verifier; spill storage is private (folder 0700,
 * unnamed files 0600) and nothing is left behind after success or failure.
 * Rothko-S: test_rothko_s.c; the shared random tables: rothko_data.c. */
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

static void test_identical_to_in_memory(void **state)
{
    (void)state;
    tu_rng rng = {2024};
    int repartitioned = 0, deep = 0, runs = 0;
    static const char *const fcaches[] = {"1", "2", "8", "0"};
    for (int iter = 0; iter < 28; iter++) {
        rk_files files;
        rk_files_new(&files);
        int categorical[8];
        const int nqi = rk_random_qis(&rng, 5, categorical);
        const size_t n = 2500 + tu_below(&rng, 5000);
        rk_generate(&rng, files.dir, nqi, categorical, n, iter % 3 == 0);
        char k[16], l[16];
        snprintf(k, sizeof k, "%d", 1 + (int)tu_below(&rng, 30));
        const int with_l = tu_below(&rng, 2) == 0;
        snprintf(l, sizeof l, "%d", 2);
        static const char *const variants[] = {"distinct", "entropy", "recursive", "probabilistic"};
        const char *variant = variants[tu_below(&rng, 4)];
        const int infogain = tu_below(&rng, 2) == 0;
        const char *fcache = fcaches[iter % 4];

        char mem_out[4200], ooc_out[4200];
        snprintf(mem_out, sizeof mem_out, "%s/mem.csv", files.dir);
        snprintf(ooc_out, sizeof ooc_out, "%s/ooc.csv", files.dir);
        mkdir(files.spill, 0700);
        anonkit_job *jobs[2];
        int rcs[2];
        for (int which = 0; which < 2; which++) {
            anonkit_job *job = rk_job_for(files.dir, nqi, categorical, which ? ooc_out : mem_out);
            rk_must_set(job, ANONKIT_OPT_K, k);
            if (with_l) {
                rk_must_set(job, ANONKIT_OPT_L, l);
                rk_must_set(job, ANONKIT_OPT_L_VARIANT, variant);
                if (!strcmp(variant, "recursive")) rk_must_set(job, ANONKIT_OPT_C, "3");
            }
            if (infogain) {
                rk_must_set(job, ANONKIT_OPT_SPLIT, "infogain");
                rk_must_set(job, ANONKIT_OPT_CLASS, "c");
            }
            if (which) {
                rk_must_set(job, ANONKIT_OPT_ALGORITHM, "rothko-t");
                rk_must_set(job, ANONKIT_OPT_MEMORY, "256K");
                rk_must_set(job, ANONKIT_OPT_BLOCK_SIZE, "2K");
                rk_must_set(job, ANONKIT_OPT_FCACHE, fcache);
                rk_must_set(job, ANONKIT_OPT_TMPDIR, files.spill);
                rk_must_set(job, ANONKIT_OPT_REPORT, files.report);
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
        if (!tu_dir_is_empty(files.spill)) fail_msg("iteration %d: spill files left behind", iter);
        if (rcs[0] == ANONKIT_OK) {
            rk_assert_same_records(mem_out, ooc_out, n, iter);
            char what[32];
            snprintf(what, sizeof what, "iteration %d", iter);
            assert_int_equal(tu_verify(jobs[1], ooc_out, what, NULL), n);
            char *json = tu_read_file(files.report, NULL);
            assert_non_null(json);
            const long reparts = rk_report_number(json, "\"repartitions\"");
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
        tu_rmtree(files.dir);
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
    rk_files files;
    rk_files_new(&files);
    FILE *f = fopen(tu_path(files.dir, "in.csv"), "w");
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
        snprintf(outs[which], sizeof outs[which], "%s/out%d.csv", files.dir, which);
        anonkit_job *job = rk_job_for(files.dir, 2, categorical, outs[which]);
        rk_must_set(job, ANONKIT_OPT_K, "5");
        rk_must_set(job, ANONKIT_OPT_L, "2");
        if (which) {
            rk_must_set(job, ANONKIT_OPT_ALGORITHM, "rothko-t");
            rk_must_set(job, ANONKIT_OPT_MEMORY, "300K");
            rk_must_set(job, ANONKIT_OPT_BLOCK_SIZE, "2K");
        }
        anonkit_result *res = NULL;
        if (anonkit_anonymize(job, &res) != ANONKIT_OK) fail_msg("run %d: %s", which, anonkit_errmsg(job));
        anonkit_result_free(res);
        anonkit_job_free(job);
    }
    rk_assert_same_records(outs[0], outs[1], 4000, 0);
    tu_rmtree(files.dir);
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
        anonkit_job *job = rk_job_for(dir, nqi, categorical, outs[which]);
        rk_must_set(job, ANONKIT_OPT_K, k);
        if (flags & WITH_L) rk_must_set(job, ANONKIT_OPT_L, "2");
        if (flags & WITH_INFOGAIN) {
            rk_must_set(job, ANONKIT_OPT_SPLIT, "infogain");
            rk_must_set(job, ANONKIT_OPT_CLASS, "c");
        }
        if (which) {
            rk_must_set(job, ANONKIT_OPT_ALGORITHM, "rothko-t");
            rk_must_set(job, ANONKIT_OPT_MEMORY, memory);
            rk_must_set(job, ANONKIT_OPT_BLOCK_SIZE, block);
            rk_must_set(job, ANONKIT_OPT_FCACHE, fcache);
            rk_must_set(job, ANONKIT_OPT_REPORT, report);
        }
        anonkit_result *res = NULL;
        if (anonkit_anonymize(job, &res) != ANONKIT_OK) fail_msg("run %d: %s", which, anonkit_errmsg(job));
        anonkit_result_free(res);
        anonkit_job_free(job);
    }
    size_t na, nb;
    char **a = rk_sorted_records(outs[0], &na), **b = rk_sorted_records(outs[1], &nb);
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
    rk_files files;
    rk_files_new(&files);
    enum { N = 70000 };
    int *perm = malloc(N * sizeof *perm);
    assert_non_null(perm);
    for (int i = 0; i < N; i++) perm[i] = i;
    for (int i = N - 1; i > 0; i--) {
        const int j = (int)tu_below(&rng, (uint64_t)i + 1), t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    FILE *f = fopen(tu_path(files.dir, "in.csv"), "w");
    assert_non_null(f);
    fprintf(f, "id,a0,a1,a2,s,c,note\n");
    for (int i = 0; i < N; i++)
        fprintf(f, "%d,%d,%d,%d,s%d,%s,n%d\n", i, perm[i] == 0 ? 16 * N : perm[i], (int)tu_below(&rng, 2000),
                (int)tu_below(&rng, 40), (int)tu_below(&rng, 5), tu_below(&rng, 3) ? "yes" : "no", i % 3);
    fclose(f);
    free(perm);
    const int categorical[3] = {0, 0, 0};
    for (int variant = 0; variant < 2; variant++) {
        char *json = same_as_in_memory(files.dir, 3, categorical, variant ? "4" : "5", variant ? WITH_L | WITH_INFOGAIN : 0, "2M", "4K", "1");
        const long sparse = rk_report_number(json, "\"sparse_av_sets\""), reparts = rk_report_number(json, "\"repartitions\"");
        const long written = rk_report_number(json, "\"blocks_written\""), rows = rk_report_number(json, "\"rows_written\"");
        print_message("variant %d: %ld repartitions, %ld sparse AV sets, %ld blocks written for %ld tuples\n", variant,
                      reparts, sparse, written, rows);
        assert_true(reparts >= 3);
        assert_true(sparse > 0);
        /* narrowed: well under the 20 bytes a tuple of 4-byte codes takes (blocks rounded up per file) */
        assert_true(rows > 0);
        assert_true((double)written * 4096 < 0.6 * 20 * (double)rows);
        free(json);
    }
    tu_rmtree(files.dir);
}

/* A categorical QI of 60,000 leaves (in 10 groups) and 12,000 rows: even the
 * root's AV set for it is counted sparsely (96 KB where dense counts take
 * 240 KB, more than this budget leaves for frequency groups), and the output
 * equals the in-memory one. */
static void test_wide_hierarchy_sparse(void **state)
{
    (void)state;
    tu_rng rng = {78};
    rk_files files;
    rk_files_new(&files);
    enum { LEAVES = 60000, N = 12000 };
    FILE *h = fopen(tu_path(files.dir, "h0.csv"), "w");
    assert_non_null(h);
    for (int i = 0; i < LEAVES; i++) fprintf(h, "v%d;g%d;*\n", i, i / (LEAVES / 10));
    fclose(h);
    FILE *f = fopen(tu_path(files.dir, "in.csv"), "w");
    assert_non_null(f);
    fprintf(f, "id,a0,a1,s,c,note\n");
    for (int i = 0; i < N; i++)
        fprintf(f, "%d,v%d,%d,s%d,%s,x\n", i, (int)tu_below(&rng, LEAVES), (int)tu_below(&rng, 300),
                (int)tu_below(&rng, 4), tu_below(&rng, 2) ? "yes" : "no");
    fclose(f);
    const int categorical[2] = {1, 0};
    char *json = same_as_in_memory(files.dir, 2, categorical, "5", 0, "4000K", "4K", "0");
    const long sparse = rk_report_number(json, "\"sparse_av_sets\""), reparts = rk_report_number(json, "\"repartitions\"");
    print_message("%ld repartitions, %ld sparse AV sets\n", reparts, sparse);
    assert_true(reparts >= 1);
    assert_true(sparse > 0);
    free(json);
    tu_rmtree(files.dir);
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
    rk_files files;
    rk_files_new(&files);
    for (int q = 0; q < 2; q++) {
        FILE *h = fopen(tu_path(files.dir, q ? "h1.csv" : "h0.csv"), "w");
        assert_non_null(h);
        for (int i = 0; i < 1000; i++) fprintf(h, "v%d;g%d;*\n", i, i / 10);
        fclose(h);
    }
    FILE *f = fopen(tu_path(files.dir, "in.csv"), "w");
    assert_non_null(f);
    fprintf(f, "id,a0,a1,a2,s,c,note\n");
    for (int i = 0; i < 6000; i++)
        fprintf(f, "%d,v%d,v%d,%d,s%d,%s,x\n", i, 500 + (int)tu_below(&rng, 10), 500 + (int)tu_below(&rng, 10),
                (int)tu_below(&rng, 1000), (int)tu_below(&rng, 4), tu_below(&rng, 2) ? "yes" : "no");
    fclose(f);
    const int categorical[3] = {1, 1, 0};
    for (int variant = 0; variant < 2; variant++) {
        char *json = same_as_in_memory(files.dir, 3, categorical, "5", variant ? WITH_L : 0, "300K", "2K", variant ? "4" : "1");
        const long recounted = rk_report_number(json, "\"recounted_nodes\""), reparts = rk_report_number(json, "\"repartitions\"");
        print_message("F_CACHE %s: %ld repartitions, %ld nodes counted again\n", variant ? "4" : "1", reparts, recounted);
        assert_true(reparts >= 1);
        assert_true(recounted >= 1);
        free(json);
    }
    tu_rmtree(files.dir);
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
    assert_true(tu_dir_is_empty(parent));
    struct stat st;
    spill_file f;
    assert_int_equal(spill_file_open(&f, &dir, &err), ANONKIT_OK);
    assert_int_equal(fstat(f.fd, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    assert_int_equal(st.st_nlink, 0);
    assert_true(tu_dir_is_empty(parent));
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
    assert_true(tu_dir_is_empty(parent));
    tu_rmtree(parent);
}

/* An unwritable spill folder and a model the table cannot meet are clear
 * errors that leave neither output nor spill files. */
static void test_failures_leave_nothing(void **state)
{
    (void)state;
    tu_rng rng = {9};
    rk_files files;
    rk_files_new(&files);
    const int categorical[2] = {0, 1};
    rk_generate(&rng, files.dir, 2, categorical, 3000, 0);

    anonkit_job *job = rk_job_for(files.dir, 2, categorical, files.out);
    rk_must_set(job, ANONKIT_OPT_K, "2");
    rk_must_set(job, ANONKIT_OPT_ALGORITHM, "rothko-t");
    rk_must_set(job, ANONKIT_OPT_MEMORY, "256K");
    rk_must_set(job, ANONKIT_OPT_BLOCK_SIZE, "2K");
    rk_must_set(job, ANONKIT_OPT_TMPDIR, tu_path(files.dir, "missing/folder"));
    anonkit_result *res = NULL;
    assert_int_equal(anonkit_anonymize(job, &res), ANONKIT_E_IO);
    assert_non_null(strstr(anonkit_errmsg(job), "cannot create spill files"));
    assert_int_equal(access(files.out, F_OK), -1);

    mkdir(files.spill, 0700);
    rk_must_set(job, ANONKIT_OPT_TMPDIR, files.spill);
    rk_must_set(job, ANONKIT_OPT_L, "50"); /* more than the sensitive values */
    assert_int_equal(anonkit_anonymize(job, &res), ANONKIT_E_INELIGIBLE);
    assert_int_equal(access(files.out, F_OK), -1);
    assert_true(tu_dir_is_empty(files.spill));

    rk_must_set(job, ANONKIT_OPT_L, "1");
    rk_must_set(job, ANONKIT_OPT_MEMORY, "64K"); /* with 8K blocks too small for the buffers and one partition */
    rk_must_set(job, ANONKIT_OPT_BLOCK_SIZE, "8K");
    assert_int_equal(anonkit_anonymize(job, &res), ANONKIT_E_USAGE);
    assert_non_null(strstr(anonkit_errmsg(job), "too small"));
    assert_true(tu_dir_is_empty(files.spill));
    assert_int_equal(access(files.out, F_OK), -1);
    anonkit_job_free(job);
    tu_rmtree(files.dir);
}


/* A random table without quote characters (so that it may be read in two
 * pieces): integer, decimal and zero-padded numeric QIs, categorical ones,
 * and labels of which some first appear in the second half, so that the
 * second piece's dictionaries differ from the first's. */
static void generate_plain(tu_rng *rng, const char *dir, int nqi, const int *categorical, size_t n)
{
    int leaves[8];
    FILE *f = rk_start_table(rng, dir, nqi, categorical, leaves, ",s,c,v,t,note");
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
        rk_files files;
        rk_files_new(&files);
        const int nqi = 2 + (int)tu_below(&rng, 4);
        int categorical[8];
        for (int q = 0; q < nqi; q++) categorical[q] = q > 0 && tu_below(&rng, 3) == 0;
        const size_t n = 1500 + tu_below(&rng, 4000);
        generate_plain(&rng, files.dir, nqi, categorical, n);
        const int sampled = iter % 2, with_l = tu_below(&rng, 2) == 0, infogain = tu_below(&rng, 2) == 0;
        char k[16];
        snprintf(k, sizeof k, "%d", 2 + (int)tu_below(&rng, 25));
        char outs[2][4200], reports[2][4200];
        int rcs[2];
        for (int pieces = 1; pieces <= 2; pieces++) {
            const int w = pieces - 1;
            snprintf(outs[w], sizeof outs[w], "%s/out%d.csv", files.dir, pieces);
            snprintf(reports[w], sizeof reports[w], "%s/report%d.json", files.dir, pieces);
            anonkit_job *job = rk_job_for(files.dir, nqi, categorical, outs[w]);
            rk_must_set(job, ANONKIT_OPT_K, k);
            if (with_l) {
                rk_must_set(job, ANONKIT_OPT_L, "2");
                rk_must_set(job, ANONKIT_OPT_L_VARIANT, "entropy");
            }
            if (infogain) {
                rk_must_set(job, ANONKIT_OPT_SPLIT, "infogain");
                rk_must_set(job, ANONKIT_OPT_CLASS, "c");
            }
            rk_must_set(job, ANONKIT_OPT_ALGORITHM, sampled ? "rothko-s" : "rothko-t");
            rk_must_set(job, ANONKIT_OPT_MEMORY, "256K");
            rk_must_set(job, ANONKIT_OPT_BLOCK_SIZE, "2K");
            if (sampled) rk_must_set(job, ANONKIT_OPT_SAMPLE_SIZE, "300");
            rk_must_set(job, ANONKIT_OPT_REPORT, reports[w]);
            if (pieces == 2) {
                rk_must_set(job, ANONKIT_OPT_THREADS, "2");
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
                assert_int_equal(rk_report_number(json, "\"first_scan_pieces\""), w + 1);
                first_scan_samples += strstr(json, "\"sampled_in_first_scan\": true") != NULL;
                repartitioned += w == 1 && rk_report_number(json, "\"repartitions\"") > 0;
                free(json);
            }
            two++;
        }
        tu_rmtree(files.dir);
    }
    print_message("%d of 16 tables published, all alike read in one or two pieces (%d repartitioned; %d samples of "
                  "the root drawn while read)\n", two, repartitioned, first_scan_samples);
    assert_true(two >= 12 && valid == two && repartitioned >= 8 && first_scan_samples >= 8);

    /* a value missing from its hierarchy in the second half: the sequential read's message */
    rk_files files;
    rk_files_new(&files);
    const int categorical[2] = {0, 1};
    generate_plain(&rng, files.dir, 2, categorical, 3000);
    FILE *f = fopen(tu_path(files.dir, "in.csv"), "a");
    assert_non_null(f);
    fprintf(f, "3000,5,nowhere,s1,yes,1,1.0,plain\n");
    fclose(f);
    anonkit_job *job = rk_job_for(files.dir, 2, categorical, files.out);
    rk_must_set(job, ANONKIT_OPT_K, "5");
    rk_must_set(job, ANONKIT_OPT_ALGORITHM, "rothko-t");
    rk_must_set(job, ANONKIT_OPT_MEMORY, "256K");
    rk_must_set(job, ANONKIT_OPT_THREADS, "2");
    job_set_knob(job, JOB_KNOB_PARALLEL_MIN_BYTES, 1);
    anonkit_result *res = NULL;
    assert_int_equal(anonkit_anonymize(job, &res), ANONKIT_E_INPUT);
    anonkit_result_free(res);
    if (!strstr(anonkit_errmsg(job), "nowhere") || !strstr(anonkit_errmsg(job), "3002"))
        fail_msg("message: %s", anonkit_errmsg(job));
    assert_int_equal(access(files.out, F_OK), -1);
    anonkit_job_free(job);
    tu_rmtree(files.dir);
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
    anonkit_job *job = rk_job_for(dir, 3, categorical, out);
    rk_must_set(job, ANONKIT_OPT_K, "3");
    rk_must_set(job, ANONKIT_OPT_ALGORITHM, algorithm);
    rk_must_set(job, ANONKIT_OPT_MEMORY, "8M");
    rk_must_set(job, ANONKIT_OPT_TMPDIR, spill);
    rk_must_set(job, ANONKIT_OPT_THREADS, threads > 1 ? "2" : "1");
    return job;
}

static void test_threads_write_alike(void **state)
{
    (void)state;
    tu_rng rng = {77};
    rk_files files;
    rk_files_new(&files);
    mkdir(files.spill, 0700);
    const int categorical[3] = {0, 1, 0};
    const size_t n = 120000; /* about 5 MB of output, in partitions of more than a buffer (512 KiB) */
    rk_generate_with(&rng, files.dir, 3, categorical, n, 1, 1);
    static const char *const algorithms[] = {"rothko-t", "rothko-s"};
    for (int a = 0; a < 2; a++) {
        char outs[2][4200];
        for (int t = 0; t < 2; t++) {
            snprintf(outs[t], sizeof outs[t], "%s/out-%s-%d.csv", files.dir, algorithms[a], t + 1);
            anonkit_job *job = threads_job(files.dir, categorical, outs[t], algorithms[a], files.spill, t + 1);
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
            anonkit_job *job = threads_job(files.dir, categorical, "/dev/full", algorithms[a], files.spill, t + 1);
            anonkit_result *res = NULL;
            assert_int_equal(anonkit_anonymize(job, &res), ANONKIT_E_IO);
            assert_null(res);
            snprintf(messages[t], sizeof messages[t], "%s", anonkit_errmsg(job));
            anonkit_job_free(job);
            if (!strstr(messages[t], "/dev/full") || !strstr(messages[t], strerror(ENOSPC)))
                fail_msg("%s, %d threads: %s", algorithms[a], t + 1, messages[t]);
            assert_true(tu_dir_is_empty(files.spill));
        }
        assert_string_equal(messages[0], messages[1]);
    }
    tu_rmtree(files.dir);
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
        cmocka_unit_test(test_two_pieces_read_as_one),
        cmocka_unit_test(test_threads_write_alike),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
