/* test_progress.c — the progress callback and cancelling through it
 * (anonkit_job_set_progress), for every algorithm of anonymize:
 *
 * - a run that is not cancelled reports phases in order, each phase's rows
 *   done never go down, each phase ends with done == total, the last report
 *   says every row of the table is done, and shares stay within [0, 1];
 * - a run cancelled at a random call of the callback (seeded:
 *   ANONKIT_PROGRESS_SEED) returns ANONKIT_E_CANCELLED with a message, leaves
 *   the old output byte for byte and nothing else in the output's folder (no
 *   report, no rules, no temporary), nothing in TMPDIR or --tmpdir, and no
 *   file descriptor open (spill files are unnamed: an open one would be a
 *   leftover);
 * - recode and metrics report and cancel alike;
 * - the options --progress and --no-progress reach anonkit_job_progress_wanted;
 * - a job without a callback runs as before. */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "api/job.h"
#include "testutil.h"

enum { ROWS = 100000 };

/* The fixture: the generated table, the interval hierarchies Incognito needs,
 * a private TMPDIR and the output folder. */
static char base[4096], data[4200], tmp[4200], out[4200];

/* One configuration of anonymize. */
typedef struct algo_case {
    const char *algorithm;
    int hierarchies; /* QIs elevel, car, zipcode, hyears with hierarchies (Incognito, local) */
    const char *memory;
} algo_case;

static const algo_case cases[] = {
    {"mondrian", 0, NULL},       {"rothko-t", 0, "5M"},   {"rothko-s", 0, "5M"},
    {"incognito", 1, NULL},      {"local", 1, NULL},      {"hilbert", 0, NULL},
    {"hilbert-fast", 0, NULL},   {"idistance", 0, NULL},  {"idistance-fast", 0, NULL},
};

/* What the callback saw, and when it cancels. */
typedef struct recorder {
    unsigned long calls;
    unsigned long cancel_at; /* cancel at this call (1-based); 0: never */
    int phase, bad;
    uint64_t done, total;
    char why[256];
} recorder;

/* Records a problem once (the first one is the one to read). */
static void bad(recorder *r, const char *what, const anonkit_progress *p)
{
    if (r->bad++) return;
    snprintf(r->why, sizeof r->why, "call %lu (%s, %llu of %llu, last %llu of %llu in phase %d): %s", r->calls,
             p->phase_name ? p->phase_name : "?", (unsigned long long)p->done, (unsigned long long)p->total,
             (unsigned long long)r->done, (unsigned long long)r->total, r->phase, what);
}

/* The callback: checks what it is told against what it was told before. */
static int record(void *ctx, const anonkit_progress *p)
{
    recorder *r = ctx;
    r->calls++;
    if (p->phase < ANONKIT_PHASE_READING || p->phase > ANONKIT_PHASE_WRITING || !p->phase_name) bad(r, "no phase", p);
    if (p->phase < r->phase) bad(r, "a phase went back", p);
    if (r->calls > 1 && p->phase != r->phase && p->phase != ANONKIT_PHASE_REPARTITION && r->done != r->total)
        bad(r, "a phase ended before done == total", p);
    if (p->phase == r->phase && p->done < r->done) bad(r, "done went down", p);
    if (p->done > p->total) bad(r, "done above total", p);
    if (p->fraction != -1.0 && (p->fraction < 0 || p->fraction > 1)) bad(r, "share outside [0, 1]", p);
    if (p->phase == ANONKIT_PHASE_REPARTITION && (p->pass < 1 || (p->passes && p->pass > p->passes))) bad(r, "pass n of m", p);
    if (p->elapsed < 0 || p->phase_elapsed < 0 || p->phase_elapsed > p->elapsed + 1e-9) bad(r, "clock", p);
    r->phase = p->phase;
    r->done = p->done;
    r->total = p->total;
    return r->cancel_at && r->calls >= r->cancel_at;
}

/* Open file descriptors of this process. */
static int open_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    assert_non_null(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

/* The entries of folder path, sorted, "a b c" into buf. */
static int by_name(const struct dirent **a, const struct dirent **b) { return strcmp((*a)->d_name, (*b)->d_name); }
static const char *listing(const char *path, char *buf, size_t size)
{
    struct dirent **names = NULL;
    const int n = scandir(path, &names, NULL, by_name);
    assert_true(n >= 0);
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < n; i++) {
        if (strcmp(names[i]->d_name, ".") && strcmp(names[i]->d_name, "..") && used < size)
            used += (size_t)snprintf(buf + used, size - used, "%s%s", used ? " " : "", names[i]->d_name);
        free(names[i]);
    }
    free(names);
    return buf;
}

/* A job for case c on the generated table, writing o.csv, r.json and
 * rules.json in the output folder, spilling under tmp. */
static anonkit_job *make_job(const algo_case *c)
{
    anonkit_job *job = anonkit_job_create();
    assert_non_null(job);
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_INPUT, tu_path(data, "g.csv")), ANONKIT_OK);
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_OUTPUT, tu_path(out, "o.csv")), ANONKIT_OK);
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_REPORT, tu_path(out, "r.json")), ANONKIT_OK);
    if (c->memory || !strcmp(c->algorithm, "mondrian")) /* (rules come from Mondrian's partition tree) */
        assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_RULES, tu_path(out, "rules.json")), ANONKIT_OK);
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_TMPDIR, tmp), ANONKIT_OK);
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_K, "10"), ANONKIT_OK);
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_SEED, "1"), ANONKIT_OK);
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_ALGORITHM, c->algorithm), ANONKIT_OK);
    if (c->memory) assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_MEMORY, c->memory), ANONKIT_OK);
    if (c->hierarchies) {
        static const char *const names[] = {"elevel", "car", "zipcode", "hyears"};
        assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_QI, "elevel,car,zipcode,hyears"), ANONKIT_OK);
        for (int i = 0; i < 4; i++) {
            char setting[4500];
            snprintf(setting, sizeof setting, "%s=%s/%s.csv", names[i], data, names[i]);
            assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_HIERARCHY, setting), ANONKIT_OK);
        }
    } else {
        assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_QI, "age,zipcode,salary"), ANONKIT_OK);
    }
    job_set_knob(job, JOB_KNOB_PROGRESS_INTERVAL_US, 0); /* every check calls back: many points to cancel at */
    return job;
}

static int setup(void **state)
{
    (void)state;
    snprintf(base, sizeof base, "%s", tu_mkdtemp());
    snprintf(data, sizeof data, "%s/data", base);
    snprintf(tmp, sizeof tmp, "%s/tmp", base);
    snprintf(out, sizeof out, "%s/out", base);
    if (mkdir(data, 0700) || mkdir(tmp, 0700) || mkdir(out, 0700)) return -1;
    setenv("TMPDIR", tmp, 1); /* whatever does not take --tmpdir would show up here too */
    const uint64_t seed = 3;
    char msg[256];
    if (anonkit_generate(tu_path(data, "g.csv"), ROWS, &seed, "csv", NULL, NULL, msg, sizeof msg) != ANONKIT_OK) return -1;
    /* interval hierarchies over the generator's small domains */
    static const struct { const char *name; int lo, hi, width; } h[] = {
        {"elevel", 0, 4, 2}, {"car", 1, 20, 5}, {"zipcode", 0, 9, 5}, {"hyears", 1, 30, 10}};
    for (size_t i = 0; i < sizeof h / sizeof *h; i++) {
        char name[64], text[4096];
        size_t used = 0;
        for (int v = h[i].lo; v <= h[i].hi; v++) {
            const int lo = h[i].lo + (v - h[i].lo) / h[i].width * h[i].width;
            used += (size_t)snprintf(text + used, sizeof text - used, "%d;%d-%d;*\n", v, lo, lo + h[i].width - 1);
        }
        snprintf(name, sizeof name, "%s.csv", h[i].name);
        tu_write_file(tu_path(data, name), text);
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    tu_rmtree(base);
    return 0;
}

/* Every algorithm, not cancelled: the reports are consistent and end at the
 * table's rows; returns nothing but fills calls[i] for the cancelling test. */
static unsigned long full_calls[sizeof cases / sizeof *cases];

static void test_progress_reports(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        anonkit_job *job = make_job(&cases[i]);
        recorder r = {.phase = ANONKIT_PHASE_READING};
        anonkit_job_set_progress(job, record, &r);
        anonkit_result *res = NULL;
        const int rc = anonkit_anonymize(job, &res);
        if (rc != ANONKIT_OK) fail_msg("%s: %s", cases[i].algorithm, anonkit_errmsg(job));
        if (r.bad) fail_msg("%s: %s", cases[i].algorithm, r.why);
        if (r.calls < 4) fail_msg("%s: only %lu calls", cases[i].algorithm, r.calls);
        if (r.done != ROWS || r.total != ROWS)
            fail_msg("%s: the last report says %llu of %llu rows, not %d", cases[i].algorithm,
                     (unsigned long long)r.done, (unsigned long long)r.total, ROWS);
        full_calls[i] = r.calls;
        print_message("%s: %lu calls\n", cases[i].algorithm, r.calls);
        anonkit_result_free(res);
        anonkit_job_free(job);
        remove(tu_path(out, "o.csv"));
        remove(tu_path(out, "r.json"));
        remove(tu_path(out, "rules.json"));
    }
}

/* Every algorithm, cancelled at random calls: nothing is left behind. */
static void test_progress_cancel(void **state)
{
    (void)state;
    const char *seed_text = getenv("ANONKIT_PROGRESS_SEED");
    tu_rng rng = {seed_text ? strtoull(seed_text, NULL, 10) : 25};
    print_message("seed %llu (ANONKIT_PROGRESS_SEED)\n", (unsigned long long)rng.s);
    static const char old[] = "old output, not to be touched\n";
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const unsigned long calls = full_calls[i] ? full_calls[i] : 8;
        /* the first call, the last one, and random ones between */
        const unsigned long at[] = {1, calls, 1 + tu_below(&rng, calls), 1 + tu_below(&rng, calls),
                                    1 + tu_below(&rng, calls)};
        for (size_t j = 0; j < sizeof at / sizeof *at; j++) {
            tu_write_file(tu_path(out, "o.csv"), old);
            char before[512], after[512], left[512];
            listing(out, before, sizeof before);
            const int fds = open_fds();
            anonkit_job *job = make_job(&cases[i]);
            recorder r = {.phase = ANONKIT_PHASE_READING, .cancel_at = at[j]};
            anonkit_job_set_progress(job, record, &r);
            anonkit_result *res = NULL;
            const int rc = anonkit_anonymize(job, &res);
            if (rc != ANONKIT_E_CANCELLED)
                fail_msg("%s cancelled at call %lu of %lu: status %d (%s)", cases[i].algorithm, at[j], calls, rc,
                         anonkit_errmsg(job));
            assert_null(res);
            assert_non_null(strstr(anonkit_errmsg(job), "cancelled"));
            assert_string_equal(anonkit_strerror(rc), "cancelled");
            if (r.calls != at[j]) fail_msg("%s: called %lu times after cancelling at %lu", cases[i].algorithm, r.calls, at[j]);
            anonkit_job_free(job);
            char *text = tu_read_file(tu_path(out, "o.csv"), NULL);
            assert_non_null(text);
            assert_string_equal(text, old);
            free(text);
            if (strcmp(listing(out, after, sizeof after), before))
                fail_msg("%s cancelled at call %lu: the output folder holds '%s', not '%s'", cases[i].algorithm, at[j],
                         after, before);
            if (*listing(tmp, left, sizeof left))
                fail_msg("%s cancelled at call %lu: left '%s' in TMPDIR", cases[i].algorithm, at[j], left);
            if (open_fds() != fds)
                fail_msg("%s cancelled at call %lu: %d files open, not %d", cases[i].algorithm, at[j], open_fds(), fds);
        }
    }
}

/* The same job runs again after a cancel, and without a callback as before. */
static void test_progress_again(void **state)
{
    (void)state;
    anonkit_job *job = make_job(&cases[0]);
    recorder r = {.phase = ANONKIT_PHASE_READING, .cancel_at = 2};
    anonkit_job_set_progress(job, record, &r);
    anonkit_result *res = NULL;
    assert_int_equal(anonkit_anonymize(job, &res), ANONKIT_E_CANCELLED);
    anonkit_job_set_progress(job, NULL, NULL);
    assert_int_equal(anonkit_anonymize(job, &res), ANONKIT_OK);
    assert_int_equal(anonkit_result_rows_read(res), ROWS);
    anonkit_result_free(res);
    anonkit_job_free(job);
}

/* Runs recode (metrics 0) or metrics (1) of the table published from the
 * generated one with a callback that cancels at call cancel_at (0: never);
 * returns the status and fills *r. */
static int run_verb(int metrics, unsigned long cancel_at, recorder *r)
{
    anonkit_job *job = make_job(&cases[0]);
    if (!metrics) {
        assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_RULES, tu_path(data, "rules.json")), ANONKIT_OK);
        assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_REPORT, ""), ANONKIT_OK);
    }
    *r = (recorder){.phase = ANONKIT_PHASE_READING, .cancel_at = cancel_at};
    anonkit_job_set_progress(job, record, r);
    anonkit_result *res = NULL;
    const int rc = metrics ? anonkit_metrics(job, tu_path(data, "g.csv"), tu_path(data, "pub.csv"), &res)
                           : anonkit_recode(job, &res);
    if (rc == ANONKIT_E_CANCELLED) assert_non_null(strstr(anonkit_errmsg(job), "cancelled"));
    else if (rc != ANONKIT_OK) fail_msg("%s: %s", metrics ? "metrics" : "recode", anonkit_errmsg(job));
    anonkit_result_free(res);
    anonkit_job_free(job);
    return rc;
}

/* recode and metrics honour the callback too: consistent reports, and a
 * cancel leaves the old output and nothing else. */
static void test_progress_other_verbs(void **state)
{
    (void)state;
    anonkit_job *job = make_job(&cases[0]); /* the published table and its rules, made once */
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_OUTPUT, tu_path(data, "pub.csv")), ANONKIT_OK);
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_REPORT, tu_path(data, "pub.json")), ANONKIT_OK);
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_RULES, tu_path(data, "rules.json")), ANONKIT_OK);
    if (anonkit_anonymize(job, NULL) != ANONKIT_OK) fail_msg("%s", anonkit_errmsg(job));
    anonkit_job_free(job);
    tu_rng rng = {7};
    static const char old[] = "old output, not to be touched\n";
    for (int metrics = 0; metrics < 2; metrics++) {
        recorder r;
        tu_write_file(tu_path(out, "o.csv"), old);
        assert_int_equal(run_verb(metrics, 0, &r), ANONKIT_OK);
        if (r.bad) fail_msg("%s: %s", metrics ? "metrics" : "recode", r.why);
        if (r.calls < 2 || r.done != r.total) fail_msg("%s: %lu calls, ending at %llu of %llu", metrics ? "metrics" : "recode",
                                                       r.calls, (unsigned long long)r.done, (unsigned long long)r.total);
        const unsigned long calls = r.calls;
        const unsigned long at[] = {1, calls, 1 + tu_below(&rng, calls)};
        for (size_t j = 0; j < sizeof at / sizeof *at; j++) {
            char before[512], after[512], left[512];
            tu_write_file(tu_path(out, "o.csv"), old);
            listing(out, before, sizeof before);
            const int fds = open_fds();
            if (run_verb(metrics, at[j], &r) != ANONKIT_E_CANCELLED)
                fail_msg("%s cancelled at call %lu of %lu: not cancelled", metrics ? "metrics" : "recode", at[j], calls);
            char *text = tu_read_file(tu_path(out, "o.csv"), NULL);
            assert_non_null(text);
            assert_string_equal(text, old);
            free(text);
            assert_string_equal(listing(out, after, sizeof after), before);
            assert_string_equal(listing(tmp, left, sizeof left), "");
            assert_int_equal(open_fds(), fds);
        }
    }
    remove(tu_path(out, "o.csv"));
}

/* --progress and --no-progress, as the command line reads them. */
static void test_progress_options(void **state)
{
    (void)state;
    anonkit_job *job = anonkit_job_create();
    assert_non_null(job);
    assert_int_equal(anonkit_job_progress_wanted(job), 0);
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_PROGRESS, "true"), ANONKIT_OK);
    assert_int_equal(anonkit_job_progress_wanted(job), 1);
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_NO_PROGRESS, "true"), ANONKIT_OK);
    assert_int_equal(anonkit_job_progress_wanted(job), -1);
    assert_int_equal(anonkit_option_find("no-progress"), ANONKIT_OPT_NO_PROGRESS);
    assert_true(anonkit_option_flags(ANONKIT_OPT_PROGRESS) & ANONKIT_OPTF_FLAG);
    assert_int_equal(anonkit_job_progress_wanted(NULL), 0);
    anonkit_job_free(job);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_progress_options),
        cmocka_unit_test(test_progress_reports),
        cmocka_unit_test(test_progress_cancel),
        cmocka_unit_test(test_progress_again),
        cmocka_unit_test(test_progress_other_verbs),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
