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
#include "core/partition.h"
#include "core/table.h"
#include "io/csv.h"
#include "io/digest.h"
#include "publish/publish.h"
#include "testutil.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

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
            if (anonkit_sequential(job, NULL) != ANONKIT_OK)
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
                const int rc = anonkit_sequential(job, NULL);
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

/* ---- the digest itself (src/io/digest.h) ---- */

/* Writes a CSV of `rows` data rows to path (header "id,q0,q1,note"): with
 * quirks, one row in 97 has a quoted note holding "" and the delimiter, one
 * in 89 ends in CRLF, and two empty lines follow row 1000 (records of one
 * empty field in the middle of the file). Returns its size. */
static size_t write_big(const char *path, size_t rows, int quirks)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs("id,q0,q1,note\n", f);
    for (size_t r = 0; r < rows; r++) {
        if (quirks && r % 97 == 5) fprintf(f, "%zu,%zu,%zu,\"say \"\"hi\"\", %zu\"\n", r, r % 50, r % 7, r);
        else if (quirks && r % 89 == 3) fprintf(f, "%zu,%zu,%zu,plain note number %zu\r\n", r, r % 50, r % 7, r);
        else fprintf(f, "%zu,%zu,%zu,plain note number %zu\n", r, r % 50, r % 7, r);
        if (quirks && r == 1000) fputs("\n\n", f);
    }
    const long size = ftell(f);
    assert_int_equal(fclose(f), 0);
    return (size_t)size;
}

/* The digest of text as digest.h defines it, computed here line by line (the
 * file of write_big: a record is a line; the header is line 1): segments of
 * the records that begin in one block and on one side of the header's end and
 * of `cut`, each hashed as the concatenation of its records' bytes (empty
 * lines left out, but counted) seeded with its first record's offset. */
static void expected_digest(const char *text, size_t size, uint64_t cut, input_digest *d)
{
    memset(d, 0, sizeof *d);
    assert_int_equal(digest_reserve(d, size), 0);
    char *seg = malloc(size);
    assert_non_null(seg);
    size_t seg_len = 0, seg_block = 0;
    uint64_t seg_first = 0, seg_key = UINT64_MAX, data_start = 0;
    for (size_t at = 0; at < size;) {
        const char *nl = memchr(text + at, '\n', size - at);
        const size_t end = (size_t)(nl - text) + 1;
        d->records++;
        if (end - at == 1 || (end - at == 2 && text[at] == '\r')) { /* an empty line */
            at = end;
            continue;
        }
        if (at == 0) data_start = end;
        const unsigned part = at < data_start || at == 0 ? 0 : cut && at >= cut ? 2 : 1;
        const uint64_t key = ((uint64_t)digest_block(at) << 2) | part;
        if (key != seg_key) {
            if (seg_key != UINT64_MAX) d->sums[seg_block] += XXH3_64bits_withSeed(seg, seg_len, seg_first);
            seg_key = key;
            seg_block = digest_block(at);
            seg_first = at;
            seg_len = 0;
        }
        memcpy(seg + seg_len, text + at, end - at);
        seg_len += end - at;
        at = end;
    }
    if (seg_key != UINT64_MAX) d->sums[seg_block] += XXH3_64bits_withSeed(seg, seg_len, seg_first);
    free(seg);
}

/* Reads bytes [offset, offset + length) of path (all of it when length is
 * 0) into d with the given cut. */
static void reader_digest(const char *path, uint64_t offset, uint64_t length, uint64_t cut, input_digest *d)
{
    csv_reader *r = NULL;
    ak_error err;
    if (length) assert_int_equal(csv_reader_open_range(&r, path, ',', offset, length, 2, &err), ANONKIT_OK);
    else assert_int_equal(csv_reader_open(&r, path, ',', &err), ANONKIT_OK);
    assert_int_equal(csv_reader_digest(r, d, cut, &err), ANONKIT_OK);
    csv_record rec;
    int got;
    while ((got = csv_read(r, &rec, &err)) == 1) {}
    assert_int_equal(got, 0);
    csv_reader_free(r);
}

/* A reader's digest is the definition's, read whole or in pieces cut where
 * the definition cuts, over several blocks, with quoted fields holding "",
 * CRLF line ends and empty lines; an edit of one byte changes it. */
static void test_digest_definition(void **state)
{
    (void)state;
    const char *dir = tu_mkdtemp();
    const char *path = tu_path(dir, "big.csv");
    const size_t size = write_big(path, 120000, 1);
    assert_true(size > 3 * DIGEST_BLOCK_BYTES); /* four blocks at least */
    char *text = tu_read_file(path, NULL);
    assert_non_null(text);
    /* a cut at the line start after the middle, as a read in two pieces makes */
    uint64_t cut = size / 2;
    while (text[cut - 1] != '\n') cut++;
    const uint64_t data_start = (uint64_t)(strchr(text, '\n') - text) + 1;
    for (int with_cut = 0; with_cut < 2; with_cut++) {
        const uint64_t c = with_cut ? cut : 0;
        input_digest expect, whole = {0};
        expected_digest(text, size, c, &expect);
        assert_int_equal(expect.records, 120000 + 1 + 2);
        reader_digest(path, 0, 0, c, &whole);
        assert_true(digest_equal(&whole, &expect));
        if (with_cut) { /* the header, then the two pieces, each a reader of its own */
            input_digest header = {0}, one = {0}, two = {0};
            csv_reader *r = NULL;
            ak_error err;
            csv_record rec;
            assert_int_equal(csv_reader_open(&r, path, ',', &err), ANONKIT_OK);
            assert_int_equal(csv_reader_digest(r, &header, c, &err), ANONKIT_OK);
            assert_int_equal(csv_read(r, &rec, &err), 1);
            csv_reader_free(r);
            reader_digest(path, data_start, cut - data_start, c, &one);
            reader_digest(path, cut, size - cut, c, &two);
            assert_int_equal(digest_merge(&header, &one), 0);
            assert_int_equal(digest_merge(&header, &two), 0);
            assert_true(digest_equal(&header, &expect));
            digest_free(&header);
            digest_free(&one);
            digest_free(&two);
        }
        digest_free(&expect);
        digest_free(&whole);
    }
    /* one byte of block 2 edited: that block's sum, and only it, differs */
    input_digest before = {0}, after = {0};
    reader_digest(path, 0, 0, cut, &before);
    const size_t at = 2 * DIGEST_BLOCK_BYTES + 100;
    assert_true(text[at] >= '0' && text[at] <= '9');
    poke(path, (off_t)at, text[at] == '9' ? '8' : '9');
    reader_digest(path, 0, 0, cut, &after);
    assert_false(digest_equal(&before, &after));
    assert_true(digest_blocks_equal(&before, &after, 0, 2));
    assert_false(digest_blocks_equal(&before, &after, 2, 3));
    assert_true(digest_blocks_equal(&before, &after, 3, before.nblocks));
    digest_free(&before);
    digest_free(&after);
    free(text);
    tu_rmtree(dir);
}

/* Loads path (QIs q0 and q1 numeric, id an identifier, note copied through)
 * with `threads` threads into *t, with all its rows in one class. */
static void load_one_class(const char *path, unsigned threads, table **t, partition *p)
{
    static const char *const qi[] = {"q0", "q1"};
    static const char *const ids[] = {"id"};
    table_spec spec = {0};
    spec.path = path;
    spec.delimiter = ',';
    spec.nqi = 2;
    spec.qi_names = qi;
    spec.nidentifiers = 1;
    spec.identifier_names = ids;
    spec.threads = threads;
    ak_error err;
    if (table_load(t, &spec, &err) != ANONKIT_OK) fail_msg("load: %s", err.message);
    assert_int_equal(partition_init(p, (*t)->nrows, (*t)->nqi, &err), ANONKIT_OK);
    const uint32_t lo[2] = {0, 0}, hi[2] = {(*t)->qi[0].ncodes - 1, (*t)->qi[1].ncodes - 1};
    uint32_t id;
    assert_int_equal(partition_add_class(p, lo, hi, (*t)->nrows, &id, &err), ANONKIT_OK);
    for (size_t r = 0; r < (*t)->nrows; r++) p->class_of[r] = id;
}

/* publish_write of t's one class to out_path; the status, and the message in err. */
static int publish_to(const table *t, const partition *p, unsigned threads, int keep_order, const char *out_path,
                      ak_error *err)
{
    FILE *out = fopen(out_path, "wb");
    assert_non_null(out);
    publish_opts po = {.keep_order = keep_order, .seed = 11, .threads = threads};
    publish_stats ps;
    const int rc = publish_write(t, p, &po, out, out_path, &ps, err);
    assert_int_equal(fclose(out), 0);
    return rc;
}

/* With the order kept, the rows are written block by block of the input once
 * each block digests as the load's: an edit in block 2 stops the run there,
 * with exactly the rows of blocks 0 and 1 written. */
static void test_order_kept_block_by_block(void **state)
{
    (void)state;
    const char *dir = tu_mkdtemp();
    const char *path = tu_path(dir, "big.csv");
    const size_t size = write_big(path, 80000, 0);
    assert_true(size > 2 * DIGEST_BLOCK_BYTES + 4096);
    char *text = tu_read_file(path, NULL);
    table *t = NULL;
    partition p;
    load_one_class(path, 1, &t, &p);
    char whole_out[4200], cut_out[4200];
    snprintf(whole_out, sizeof whole_out, "%s", tu_path(dir, "whole.csv"));
    snprintf(cut_out, sizeof cut_out, "%s", tu_path(dir, "cut.csv"));
    ak_error err;
    assert_int_equal(publish_to(t, &p, 1, 1, whole_out, &err), ANONKIT_OK);
    /* the rows that begin in blocks 0 and 1: the lines before the first that starts at 2 MiB or later */
    size_t rows_before = 0;
    for (size_t at = (size_t)(strchr(text, '\n') - text) + 1; at < 2 * DIGEST_BLOCK_BYTES; rows_before++)
        at = (size_t)(strchr(text + at, '\n') - text) + 1;
    const size_t at = 2 * DIGEST_BLOCK_BYTES + 200;
    poke(path, (off_t)at, text[at] == '7' ? '6' : '7');
    assert_int_equal(publish_to(t, &p, 1, 1, cut_out, &err), ANONKIT_E_INPUT);
    assert_non_null(strstr(err.message, "changed while it was being anonymized"));
    char *whole = tu_read_file(whole_out, NULL), *cut = tu_read_file(cut_out, NULL);
    /* the header and rows_before rows: the same bytes as the unchanged run's */
    size_t len = 0;
    for (size_t lines = 0; lines < 1 + rows_before; lines++) len = (size_t)(strchr(whole + len, '\n') - whole) + 1;
    assert_int_equal(strlen(cut), len);
    assert_memory_equal(cut, whole, len);
    free(whole);
    free(cut);
    free(text);
    partition_free(&p);
    table_free(t);
    tu_rmtree(dir);
}

/* A file large enough to be loaded in two pieces: the copied columns are
 * read in two pieces at the load's cut; unchanged, they publish what one
 * thread publishes; edited in the second piece, or truncated, they are
 * refused. */
static void test_two_pieces(void **state)
{
    (void)state;
    const char *dir = tu_mkdtemp();
    const char *path = tu_path(dir, "big.csv");
    const size_t size = write_big(path, 300000, 0);
    assert_true(size > (9u << 20)); /* past the 8 MiB from which both reads cut the file */
    char *text = tu_read_file(path, NULL);
    table *t = NULL;
    partition p;
    load_one_class(path, 2, &t, &p);
    assert_true(t->digest.cut > 0 && t->digest.cut < size); /* loaded in two pieces */
    char one[4200], two[4200];
    snprintf(one, sizeof one, "%s", tu_path(dir, "one.csv"));
    snprintf(two, sizeof two, "%s", tu_path(dir, "two.csv"));
    ak_error err;
    assert_int_equal(publish_to(t, &p, 1, 0, one, &err), ANONKIT_OK);
    assert_int_equal(publish_to(t, &p, 2, 0, two, &err), ANONKIT_OK);
    char *a = tu_read_file(one, NULL), *b = tu_read_file(two, NULL);
    assert_string_equal(a, b);
    free(a);
    free(b);
    const size_t at = (size_t)t->digest.cut + 5000;
    poke(path, (off_t)at, text[at] == '7' ? '6' : '7');
    for (unsigned threads = 1; threads <= 2; threads++) {
        assert_int_equal(publish_to(t, &p, threads, 0, two, &err), ANONKIT_E_INPUT);
        assert_non_null(strstr(err.message, "changed while it was being anonymized"));
    }
    poke(path, (off_t)at, text[at]); /* back as it was: published again */
    assert_int_equal(publish_to(t, &p, 2, 0, two, &err), ANONKIT_OK);
    assert_int_equal(truncate(path, (off_t)(size - 40)), 0);
    assert_int_equal(publish_to(t, &p, 2, 0, two, &err), ANONKIT_E_INPUT);
    free(text);
    partition_free(&p);
    table_free(t);
    tu_rmtree(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mondrian),     cmocka_unit_test(test_rothko_t),      cmocka_unit_test(test_rothko_s),
        cmocka_unit_test(test_incognito),    cmocka_unit_test(test_hilbert),       cmocka_unit_test(test_hilbert_fast),
        cmocka_unit_test(test_idistance),    cmocka_unit_test(test_idistance_fast), cmocka_unit_test(test_sequential),
        cmocka_unit_test(test_digest_definition), cmocka_unit_test(test_order_kept_block_by_block),
        cmocka_unit_test(test_two_pieces),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
