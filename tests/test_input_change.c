/* test_input_change.c — the input changing under a run (issue: copied columns
 * read a second time). The writer reads the input again for the columns it
 * copies through (the sensitive column among them), and a sequential release
 * reads Y of T1 again; what it publishes must be what the run read and
 * encoded (src/io/digest.h, src/publish/copied.c, src/publish/publish.c,
 * src/algo/sequential/releases.c).
 *
 * A test hook (job_set_loaded_hook) changes the input right after it was
 * read and encoded, before anything reads it again: another file renamed
 * over it, a byte edited in place, the file truncated, a row appended; and,
 * as controls, the same bytes renamed over it or written over themselves.
 * For every algorithm, and for a sequential release, a run then either
 *   - fails with "INPUT changed while it was being anonymized", leaving an
 *     old file at the output path byte for byte as it was, or
 *   - publishes exactly what it read: the bytes of a run on the unchanged
 *     input with the same seed, which the independent verifier accepts.
 * Which one is expected follows from the design: the algorithms that hold
 * the table in memory read the copied columns again (they must fail when the
 * bytes changed, and succeed on the controls); Rothko-T and Rothko-S carry the
 * copied fields of the one read in their spill files (they must succeed). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/job.h"
#include "testutil.h"

#define ROWS 64
#define OLD_OUTPUT "an older output that a failed run must leave as it is\n"

typedef enum change {
    CHANGE_RENAME,      /* another file (every sensitive value A) renamed over the input */
    CHANGE_EDIT,        /* one byte of a sensitive value edited in place, same size */
    CHANGE_TRUNCATE,    /* cut after half the rows */
    CHANGE_APPEND,      /* one more row */
    CHANGE_SAME_RENAME, /* control: the same bytes renamed over the input (a new file) */
    CHANGE_SAME_WRITE,  /* control: a byte written over itself */
    CHANGE_COUNT
} change;

static const char *const change_names[CHANGE_COUNT] = {"rename", "edit", "truncate", "append", "same-rename",
                                                       "same-write"};

/* Whether the change leaves the bytes of the file as they were. */
static int change_keeps_bytes(change c) { return c == CHANGE_SAME_RENAME || c == CHANGE_SAME_WRITE; }

/* What the hook does, and how often it ran. */
typedef struct hook_ctx {
    change what;
    int calls;
} hook_ctx;

/* The row text of row r: identifier, two categorical QIs, the sensitive
 * value (A, B, C in turn; all A with all_a) and a free-text note. */
static void row_text(char *buf, size_t size, int r, int all_a)
{
    snprintf(buf, size, "%d,a%d,z%d,%c,note %d\n", r, r % 8, (r / 8) % 4, all_a ? 'A' : "ABC"[r % 3], r);
}

/* The whole table as text (with all_a: every sensitive value A, the file
 * of the rename, which --l 2 would make ineligible had it been read). */
static char *table_text(int all_a)
{
    size_t cap = 64 + (size_t)ROWS * 48, len = 0;
    char *s = malloc(cap);
    assert_non_null(s);
    len += (size_t)snprintf(s, cap, "id,age,zip,disease,note\n");
    for (int r = 0; r < ROWS; r++) {
        row_text(s + len, cap - len, r, all_a);
        len += strlen(s + len);
    }
    return s;
}

/* Writes path's bytes into a new file beside it and renames that over path. */
static void rename_over(const char *path, const char *text)
{
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.new", path);
    tu_write_file(tmp, text);
    assert_int_equal(rename(tmp, path), 0);
}

/* Writes byte c at offset `at` of path, in place. */
static void poke(const char *path, off_t at, char c)
{
    const int fd = open(path, O_WRONLY);
    assert_true(fd >= 0);
    assert_int_equal(pwrite(fd, &c, 1, at), 1);
    assert_int_equal(close(fd), 0);
}

/* The offset in path's text of the sensitive value of data row r. */
static off_t sensitive_offset(const char *text, int r)
{
    const char *p = strchr(text, '\n') + 1; /* row 0 */
    for (int i = 0; i < r; i++) p = strchr(p, '\n') + 1;
    for (int commas = 0; commas < 3; p++)
        if (*p == ',') commas++;
    return (off_t)(p - text);
}

/* The hook: changes the input as ctx says, once it was read and encoded. */
static void change_input(void *arg, const char *path)
{
    hook_ctx *ctx = arg;
    ctx->calls++;
    size_t len = 0;
    char *text = tu_read_file(path, &len);
    assert_non_null(text);
    switch (ctx->what) {
    case CHANGE_RENAME: {
        char *all_a = table_text(1);
        rename_over(path, all_a);
        free(all_a);
        break;
    }
    case CHANGE_EDIT: {
        const off_t at = sensitive_offset(text, 1); /* row 1's B */
        assert_int_equal(text[at], 'B');
        poke(path, at, 'A');
        break;
    }
    case CHANGE_TRUNCATE: {
        const off_t at = sensitive_offset(text, ROWS / 2);
        off_t line = at;
        while (text[line - 1] != '\n') line--;
        assert_int_equal(truncate(path, line), 0);
        break;
    }
    case CHANGE_APPEND: {
        FILE *f = fopen(path, "ab");
        assert_non_null(f);
        fputs("64,a0,z0,A,note 64\n", f);
        assert_int_equal(fclose(f), 0);
        break;
    }
    case CHANGE_SAME_RENAME: rename_over(path, text); break;
    case CHANGE_SAME_WRITE: poke(path, sensitive_offset(text, 1), text[sensitive_offset(text, 1)]); break;
    case CHANGE_COUNT: break;
    }
    free(text);
}

/* How a run reads: threads, order kept, the table read in two pieces. */
typedef struct mode {
    const char *name, *threads;
    int keep_order, pieces;
} mode;

static const mode modes[] = {
    {"one thread", "1", 0, 0},                  /* copied columns read at write time */
    {"two threads", "2", 0, 0},                 /* read ahead while the algorithm runs */
    {"two threads, two pieces", "2", 0, 1},     /* the table loaded in two pieces too */
    {"order kept", "2", 1, 0},                  /* streamed, block by block */
};

/* A job for algorithm `algo` on dir's in.csv, published to out. */
static anonkit_job *make_job(const char *dir, const char *algo, const mode *m, const char *out)
{
    anonkit_job *job = anonkit_job_create();
    char h[4200];
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_INPUT, tu_path(dir, "in.csv")), 0);
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_OUTPUT, out), 0);
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_QI, "age,zip"), 0);
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_IDENTIFIER, "id"), 0);
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_SENSITIVE, "disease"), 0);
    snprintf(h, sizeof h, "age=%s", tu_path(dir, "age.csv"));
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_HIERARCHY, h), 0);
    snprintf(h, sizeof h, "zip=%s", tu_path(dir, "zip.csv"));
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_HIERARCHY, h), 0);
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_K, "4"), 0);
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_L, "2"), 0);
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_SEED, "7"), 0);
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_ALGORITHM, algo), 0);
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_THREADS, m->threads), 0);
    if (m->keep_order) assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_KEEP_ORDER, "1"), 0);
    if (m->pieces) job_set_knob(job, JOB_KNOB_PARALLEL_MIN_BYTES, 1);
    if (!strncmp(algo, "rothko", 6)) {
        assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_MEMORY, "1M"), 0);
        assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_BLOCK_SIZE, "4K"), 0);
    }
    return job;
}

/* Writes the table and its hierarchies into dir. */
static void write_inputs(const char *dir)
{
    char *text = table_text(0);
    tu_write_file(tu_path(dir, "in.csv"), text);
    free(text);
    tu_write_file(tu_path(dir, "age.csv"),
                  "a0;lo;*\na1;lo;*\na2;lo;*\na3;lo;*\na4;hi;*\na5;hi;*\na6;hi;*\na7;hi;*\n");
    tu_write_file(tu_path(dir, "zip.csv"), "z0;zA;*\nz1;zA;*\nz2;zB;*\nz3;zB;*\n");
}

/* Checks that a failed run names the input as changed and left the old
 * output as it was. */
static void expect_refused(anonkit_job *job, int rc, const char *dir, const char *out, const char *what)
{
    if (rc == ANONKIT_OK) fail_msg("%s: published although the input changed", what);
    char expect[4300];
    snprintf(expect, sizeof expect, "%s changed while it was being anonymized", tu_path(dir, "in.csv"));
    if (!strstr(anonkit_errmsg(job), expect)) fail_msg("%s: message '%s' lacks '%s'", what, anonkit_errmsg(job), expect);
    char *now = tu_read_file(out, NULL);
    if (!now || strcmp(now, OLD_OUTPUT) != 0) fail_msg("%s: the old output at %s was changed", what, out);
    free(now);
}

/* One algorithm under every mode and every change. */
static void check_algorithm(const char *algo, int rereads)
{
    const char *dir = tu_mkdtemp();
    int refused = 0, published = 0, nmodes = 0;
    const int streams = !strncmp(algo, "rothko", 6); /* writes partition by partition: refuses --keep-order */
    for (size_t mi = 0; mi < sizeof modes / sizeof modes[0]; mi++) {
        const mode *m = &modes[mi];
        if (streams && m->keep_order) continue;
        nmodes++;
        /* the run on the unchanged input: what a run that reads it must publish */
        write_inputs(dir);
        char base_out[4200], out[4200], what[200];
        snprintf(base_out, sizeof base_out, "%s", tu_path(dir, "base.csv"));
        snprintf(out, sizeof out, "%s", tu_path(dir, "out.csv"));
        snprintf(what, sizeof what, "%s, %s, unchanged", algo, m->name);
        anonkit_job *job = make_job(dir, algo, m, base_out);
        anonkit_result_free(tu_anonymize_verified(job, base_out, 1, what, NULL, NULL));
        anonkit_job_free(job);
        char *base = tu_read_file(base_out, NULL);
        assert_non_null(base);
        for (change c = 0; c < CHANGE_COUNT; c++) {
            write_inputs(dir);
            tu_write_file(out, OLD_OUTPUT);
            snprintf(what, sizeof what, "%s, %s, %s", algo, m->name, change_names[c]);
            job = make_job(dir, algo, m, out);
            hook_ctx ctx = {c, 0};
            job_set_loaded_hook(job, change_input, &ctx);
            anonkit_result *res = NULL;
            const int rc = anonkit_anonymize(job, &res);
            if (ctx.calls != 1) fail_msg("%s: the input was changed %d times, not once", what, ctx.calls);
            if (rereads && !change_keeps_bytes(c)) {
                expect_refused(job, rc, dir, out, what);
                refused++;
            } else {
                /* published exactly what it read: the unchanged input's bytes, proven */
                if (rc != ANONKIT_OK) fail_msg("%s: %s", what, anonkit_errmsg(job));
                char *now = tu_read_file(out, NULL);
                if (!now || strcmp(now, base) != 0) fail_msg("%s: published other bytes than the run on the unchanged input", what);
                free(now);
                /* the verifier reads only the published file: the model holds */
                if (tu_verify(job, out, what, NULL) != ROWS) fail_msg("%s: the verifier saw other than %d rows", what, ROWS);
                published++;
            }
            anonkit_result_free(res);
            anonkit_job_free(job);
        }
        free(base);
    }
    /* every case was one or the other, as the algorithm's design says */
    assert_int_equal(nmodes, streams ? 3 : 4);
    assert_int_equal(refused + published, nmodes * CHANGE_COUNT);
    assert_int_equal(refused, rereads ? nmodes * (CHANGE_COUNT - 2) : 0);
    tu_rmtree(dir);
}

static void test_mondrian(void **state) { (void)state; check_algorithm("mondrian", 1); }
static void test_rothko_t(void **state) { (void)state; check_algorithm("rothko-t", 0); }
static void test_rothko_s(void **state) { (void)state; check_algorithm("rothko-s", 0); }
static void test_incognito(void **state) { (void)state; check_algorithm("incognito", 1); }
static void test_hilbert(void **state) { (void)state; check_algorithm("hilbert", 1); }
static void test_hilbert_fast(void **state) { (void)state; check_algorithm("hilbert-fast", 1); }
static void test_idistance(void **state) { (void)state; check_algorithm("idistance", 1); }
static void test_idistance_fast(void **state) { (void)state; check_algorithm("idistance-fast", 1); }

/* ---- a sequential release ([Wang06]): T1 changed after its load ---- */

#define T1_TEXT "Name,Job,Class\nAlice,Banker,c1\nAlice,Banker,c1\nBob,Clerk,c2\nBob,Driver,c3\nCathy,Engineer,c4\n"

/* The hook for T1: the changes of change_input, on T1's rows. */
static void change_t1(void *arg, const char *path)
{
    hook_ctx *ctx = arg;
    ctx->calls++;
    const char *at2 = strstr(T1_TEXT, "c2");
    switch (ctx->what) {
    case CHANGE_RENAME: rename_over(path, "Name,Job,Class\nAlice,Banker,c9\nAlice,Banker,c9\nBob,Clerk,c9\nBob,Driver,c9\nCathy,Engineer,c9\n"); break;
    case CHANGE_EDIT: poke(path, (off_t)(at2 - T1_TEXT) + 1, '9'); break;
    case CHANGE_TRUNCATE: assert_int_equal(truncate(path, (off_t)(strstr(T1_TEXT, "Bob,Driver") - T1_TEXT)), 0); break;
    case CHANGE_APPEND: {
        FILE *f = fopen(path, "ab");
        assert_non_null(f);
        fputs("Cathy,Engineer,c4\n", f);
        assert_int_equal(fclose(f), 0);
        break;
    }
    case CHANGE_SAME_RENAME: rename_over(path, T1_TEXT); break;
    case CHANGE_SAME_WRITE: poke(path, (off_t)(at2 - T1_TEXT) + 1, '2'); break;
    case CHANGE_COUNT: break;
    }
}

/* A sequential job over dir's t1.csv and t2.csv: Y = y (with "Class,Disease"
 * Y of T1 is the class, which the release reads apart from the table: a
 * second read of T1 before the algorithm). */
static anonkit_job *make_seq_job(const char *dir, const char *y, const char *bound, const mode *m, const char *out)
{
    anonkit_job *job = anonkit_job_create();
    char h[4200];
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_INPUT, tu_path(dir, "t1.csv")), 0);
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_PREVIOUS, tu_path(dir, "t2.csv")), 0);
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_OUTPUT, out), 0);
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_X, "Name"), 0);
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_Y, y), 0);
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_ANONYMITY, bound), 0);
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_CLASS, "Class"), 0);
    snprintf(h, sizeof h, "Job=%s", tu_path(dir, "job.csv"));
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_HIERARCHY, h), 0);
    snprintf(h, sizeof h, "Name=%s", tu_path(dir, "name.csv"));
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_HIERARCHY, h), 0);
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_SEED, "5"), 0);
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_THREADS, m->threads), 0);
    if (m->keep_order) assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_KEEP_ORDER, "1"), 0);
    if (m->pieces) job_set_knob(job, JOB_KNOB_PARALLEL_MIN_BYTES, 1);
    return job;
}

static void write_seq_inputs(const char *dir)
{
    tu_write_file(tu_path(dir, "t1.csv"), T1_TEXT);
    tu_write_file(tu_path(dir, "t2.csv"), "Job,Disease\nBanker,Cancer\nBanker,Cancer\nClerk,HIV\nDriver,Cancer\nEngineer,HIV\n");
    tu_write_file(tu_path(dir, "job.csv"),
                  "Banker;White-collar;*\nClerk;White-collar;*\nDriver;Blue-collar;*\nEngineer;Blue-collar;*\n");
    tu_write_file(tu_path(dir, "name.csv"), "Alice;*\nBob;*\nCathy;*\n");
}

/* T1's class column is copied through to the release, and with Y = Class,
 * Disease also read apart as Y of T1: both second reads must be refused
 * when T1 changed, and publish the unchanged input's bytes when it did not. */
static void test_sequential(void **state)
{
    (void)state;
    const char *dir = tu_mkdtemp();
    const struct {
        const char *y, *bound;
    } configs[] = {{"Disease", "2"}, {"Class,Disease", "1"}};
    int refused = 0, published = 0;
    for (size_t ci = 0; ci < sizeof configs / sizeof configs[0]; ci++)
        for (size_t mi = 0; mi < sizeof modes / sizeof modes[0]; mi++) {
            const mode *m = &modes[mi];
            char base_out[4200], out[4200], what[200];
            snprintf(base_out, sizeof base_out, "%s", tu_path(dir, "base.csv"));
            snprintf(out, sizeof out, "%s", tu_path(dir, "out.csv"));
            write_seq_inputs(dir);
            anonkit_job *job = make_seq_job(dir, configs[ci].y, configs[ci].bound, m, base_out);
            if (anonkit_sequential(job, NULL, NULL) != ANONKIT_OK)
                fail_msg("sequential, Y %s, %s, unchanged: %s", configs[ci].y, m->name, anonkit_errmsg(job));
            anonkit_job_free(job);
            char *base = tu_read_file(base_out, NULL);
            assert_non_null(base);
            for (change c = 0; c < CHANGE_COUNT; c++) {
                write_seq_inputs(dir);
                tu_write_file(out, OLD_OUTPUT);
                snprintf(what, sizeof what, "sequential, Y %s, %s, %s", configs[ci].y, m->name, change_names[c]);
                job = make_seq_job(dir, configs[ci].y, configs[ci].bound, m, out);
                hook_ctx ctx = {c, 0};
                job_set_loaded_hook(job, change_t1, &ctx);
                const int rc = anonkit_sequential(job, NULL, NULL);
                if (ctx.calls != 1) fail_msg("%s: T1 was changed %d times, not once", what, ctx.calls);
                if (!change_keeps_bytes(c)) {
                    if (rc == ANONKIT_OK) fail_msg("%s: published although T1 changed", what);
                    char expect[4300];
                    snprintf(expect, sizeof expect, "%s changed while it was being anonymized", tu_path(dir, "t1.csv"));
                    if (!strstr(anonkit_errmsg(job), expect))
                        fail_msg("%s: message '%s' lacks '%s'", what, anonkit_errmsg(job), expect);
                    char *now = tu_read_file(out, NULL);
                    if (!now || strcmp(now, OLD_OUTPUT) != 0) fail_msg("%s: the old output was changed", what);
                    free(now);
                    refused++;
                } else {
                    if (rc != ANONKIT_OK) fail_msg("%s: %s", what, anonkit_errmsg(job));
                    char *now = tu_read_file(out, NULL);
                    if (!now || strcmp(now, base) != 0) fail_msg("%s: published other bytes than on the unchanged T1", what);
                    free(now);
                    published++;
                }
                anonkit_job_free(job);
            }
            free(base);
        }
    const int runs = 2 * (int)(sizeof modes / sizeof modes[0]);
    assert_int_equal(refused, runs * (CHANGE_COUNT - 2));
    assert_int_equal(published, runs * 2);
    tu_rmtree(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mondrian),     cmocka_unit_test(test_rothko_t),      cmocka_unit_test(test_rothko_s),
        cmocka_unit_test(test_incognito),    cmocka_unit_test(test_hilbert),       cmocka_unit_test(test_hilbert_fast),
        cmocka_unit_test(test_idistance),    cmocka_unit_test(test_idistance_fast), cmocka_unit_test(test_sequential),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
