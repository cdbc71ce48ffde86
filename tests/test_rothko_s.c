/* test_rothko_s.c — Rothko-S ([LeFevre07] §3): on random tables, every
 * sampled run publishes a table that passes the verifier whatever the sample
 * gives; when the table fits the budget the result equals the in-memory
 * Mondrian's; pruning and the reuse of spill files are exercised, and no
 * spill file is left behind. The random tables: rothko_data.c. */
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
    rk_must_set(job, ANONKIT_OPT_K, c->k);
    if (c->model == 1) {
        rk_must_set(job, ANONKIT_OPT_L, "2");
        rk_must_set(job, ANONKIT_OPT_L_VARIANT, c->variant);
    } else if (c->model == 2) {
        rk_must_set(job, ANONKIT_OPT_SENSITIVE, "v");
        rk_must_set(job, ANONKIT_OPT_VARIANCE, c->variance);
    }
    rk_must_set(job, ANONKIT_OPT_SPLIT, c->split);
    if (!strcmp(c->split, "infogain")) rk_must_set(job, ANONKIT_OPT_CLASS, "c");
    if (!strcmp(c->split, "regression")) rk_must_set(job, ANONKIT_OPT_TARGET, "t");
    if (!sampled) return;
    rk_must_set(job, ANONKIT_OPT_ALGORITHM, "rothko-s");
    rk_must_set(job, ANONKIT_OPT_TEST, c->test);
    if (c->sample) rk_must_set(job, ANONKIT_OPT_SAMPLE_SIZE, c->sample);
    if (c->depth) rk_must_set(job, ANONKIT_OPT_GROWTH_DEPTH, c->depth);
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
        rk_files files;
        rk_files_new(&files);
        int categorical[8];
        const int nqi = rk_random_qis(&rng, 4, categorical);
        const size_t n = 2000 + tu_below(&rng, 4000);
        rk_generate_with(&rng, files.dir, nqi, categorical, n, iter % 3 == 0, 1);
        rs_case c;
        rs_case_pick(&rng, &c);
        char outs[2][4200];
        snprintf(outs[0], sizeof outs[0], "%s/mem.csv", files.dir);
        snprintf(outs[1], sizeof outs[1], "%s/rs.csv", files.dir);
        mkdir(files.spill, 0700);
        anonkit_job *jobs[2];
        int rcs[2];
        for (int which = 0; which < 2; which++) {
            anonkit_job *job = jobs[which] = rk_job_for(files.dir, nqi, categorical, outs[which]);
            rs_case_apply(job, &c, which);
            if (which) {
                rk_must_set(job, ANONKIT_OPT_MEMORY, "256K");
                rk_must_set(job, ANONKIT_OPT_BLOCK_SIZE, "2K");
                rk_must_set(job, ANONKIT_OPT_TMPDIR, files.spill);
                rk_must_set(job, ANONKIT_OPT_REPORT, files.report);
                /* every third run: the first scan keeps too few rows, so the root is sampled by a scan */
                if (iter % 3 == 1) job_set_knob(job, JOB_KNOB_FIRST_SAMPLE_ROWS, 20);
            }
            anonkit_result *res = NULL;
            rcs[which] = anonkit_anonymize(job, &res);
            anonkit_result_free(res);
        }
        if (!tu_dir_is_empty(files.spill)) fail_msg("iteration %d: spill files left behind", iter);
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
            char *json = tu_read_file(files.report, NULL);
            assert_non_null(json);
            sampled += rk_report_number(json, "\"growth_phases\"") > 0;
            if (rk_report_number(json, "\"growth_phases\"") > 0) {
                const int first = strstr(json, "\"sampled_in_first_scan\": true") != NULL;
                if (first && iter % 3 == 1) fail_msg("iteration %d: the root sampled from a store too small", iter);
                in_first_scan += first;
                by_scan += !first;
            }
            pruned += rk_report_number(json, "\"pruned_nodes\"") > 0;
            unsplit += rk_report_number(json, "\"no_confident_split\"") > 0;
            free(json);
            runs++;
        }
        anonkit_job_free(jobs[0]);
        anonkit_job_free(jobs[1]);
        tu_rmtree(files.dir);
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
        rk_files files;
        rk_files_new(&files);
        int categorical[8];
        const int nqi = rk_random_qis(&rng, 4, categorical);
        const size_t n = 500 + tu_below(&rng, 2500);
        rk_generate_with(&rng, files.dir, nqi, categorical, n, iter % 2, 1);
        rs_case c;
        rs_case_pick(&rng, &c);
        c.sample = NULL; /* as many rows as the budget holds: all of them */
        char outs[2][4200];
        int rcs[2];
        for (int which = 0; which < 2; which++) {
            snprintf(outs[which], sizeof outs[which], "%s/out%d.csv", files.dir, which);
            anonkit_job *job = rk_job_for(files.dir, nqi, categorical, outs[which]);
            rs_case_apply(job, &c, which);
            if (which) rk_must_set(job, ANONKIT_OPT_MEMORY, "8M");
            anonkit_result *res = NULL;
            rcs[which] = anonkit_anonymize(job, &res);
            anonkit_result_free(res);
            anonkit_job_free(job);
        }
        assert_int_equal(rcs[0], rcs[1]);
        if (rcs[0] == ANONKIT_OK) rk_assert_same_records(outs[0], outs[1], n, iter);
        tu_rmtree(files.dir);
    }
}

/* Tiny samples and the naive rule with a large k make splits in error, which
 * pruning undoes ([LeFevre07] Figure 4): nodes are pruned and the output still
 * satisfies the model; the hypothesis test prunes less on the same input. */
static void test_sampled_pruning(void **state)
{
    (void)state;
    tu_rng rng = {79};
    rk_files files;
    rk_files_new(&files);
    const int categorical[2] = {0, 0};
    rk_generate(&rng, files.dir, 2, categorical, 20000, 0);
    long pruned[2];
    for (int naive = 0; naive < 2; naive++) {
        anonkit_job *job = rk_job_for(files.dir, 2, categorical, files.out);
        rk_must_set(job, ANONKIT_OPT_K, "300");
        rk_must_set(job, ANONKIT_OPT_ALGORITHM, "rothko-s");
        rk_must_set(job, ANONKIT_OPT_MEMORY, "8M");
        rk_must_set(job, ANONKIT_OPT_SAMPLE_SIZE, "100");
        rk_must_set(job, ANONKIT_OPT_GROWTH_DEPTH, "8");
        rk_must_set(job, ANONKIT_OPT_TEST, naive ? "naive" : "hypothesis");
        rk_must_set(job, ANONKIT_OPT_REPORT, files.report);
        uint64_t rows = 0;
        anonkit_result_free(tu_anonymize_verified(job, files.out, 1, naive ? "naive" : "hypothesis", NULL, &rows));
        assert_int_equal(rows, 20000);
        char *json = tu_read_file(files.report, NULL);
        pruned[naive] = rk_report_number(json, "\"pruned_nodes\"");
        free(json);
        anonkit_job_free(job);
    }
    print_message("pruned nodes: %ld with the hypothesis test, %ld with the naive rule\n", pruned[0], pruned[1]);
    assert_true(pruned[1] > 0);
    assert_true(pruned[0] < pruned[1]);
    tu_rmtree(files.dir);
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
    rk_generate(&rng, dir, 3, categorical, 30000, 0);
    anonkit_job *job = rk_job_for(dir, 3, categorical, out);
    rk_must_set(job, ANONKIT_OPT_K, "5");
    rk_must_set(job, ANONKIT_OPT_ALGORITHM, "rothko-s");
    rk_must_set(job, ANONKIT_OPT_MEMORY, "8M");
    rk_must_set(job, ANONKIT_OPT_SAMPLE_SIZE, "300");
    rk_must_set(job, ANONKIT_OPT_GROWTH_DEPTH, "3");
    rk_must_set(job, ANONKIT_OPT_TMPDIR, spill);
    rk_must_set(job, ANONKIT_OPT_REPORT, report);
    anonkit_result_free(tu_anonymize(job, out, 1, "rothko-s"));
    if (!tu_dir_is_empty(spill)) fail_msg("spill files left behind");
    assert_int_equal(tu_verify(job, out, "rothko-s", NULL), 30000);
    char *json = tu_read_file(report, NULL);
    assert_non_null(json);
    const long phases = rk_report_number(json, "\"growth_phases\"");
    const long partitions = rk_report_number(json, "\"partitions_in_memory\"");
    const long created = rk_report_number(json, "\"spill_files_created\"");
    print_message("%ld growth phases, %ld partitions finished in memory, %ld spill files created\n", phases,
                  partitions, created);
    assert_true(phases >= 20);
    assert_true(partitions >= 100);
    assert_true(created >= 2 && created < partitions);
    free(json);
    anonkit_job_free(job);
    tu_rmtree(dir);
}
int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sampled_always_valid),
        cmocka_unit_test(test_sampled_fits_equals_in_memory),
        cmocka_unit_test(test_sampled_pruning),
        cmocka_unit_test(test_sampled_reuses_files),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
