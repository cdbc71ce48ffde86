/* test_user_traps.c — small traps a user falls into, each refused with a
 * clear message and nothing written: a run with no privacy model, a published
 * file with rows missing handed to metrics, a value holding a NUL byte shown
 * whole in a message (ak_escape), a header of 100,000 columns, and a report
 * that fails after the table went to standard output, and generate asked
 * for more rows than the disk holds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "common/error.h"
#include "testutil.h"

/* Runs the command line `args` (shell words) of anonkit; its exit status,
 * and its standard error into *err (caller frees). */
static int run(const char *dir, const char *args, char **err)
{
    char errf[4200], cmd[16384];
    snprintf(errf, sizeof errf, "%s", tu_path(dir, "stderr.txt"));
    snprintf(cmd, sizeof cmd, "cd '%s' && '%s' %s >/dev/null 2>'%s'", dir, ANONKIT_BINARY, args, errf);
    const int status = system(cmd);
    assert_true(WIFEXITED(status));
    *err = tu_read_file(errf, NULL);
    assert_non_null(*err);
    return WEXITSTATUS(status);
}

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* ak_escape against the definition: printable bytes kept, NUL as \0, other
 * control bytes as \xNN, a backslash doubled, cut with "..." */
static void test_escape(void **state)
{
    (void)state;
    char buf[64];
    assert_string_equal(ak_escape("M", 1, 80, buf, sizeof buf), "M");
    assert_string_equal(ak_escape("M\0x", 3, 80, buf, sizeof buf), "M\\0x");
    assert_string_equal(ak_escape("a\tb\x7f", 4, 80, buf, sizeof buf), "a\\x09b\\x7f");
    assert_string_equal(ak_escape("a\\b", 3, 80, buf, sizeof buf), "a\\\\b");
    assert_string_equal(ak_escape("h\xc3\xa9", 3, 80, buf, sizeof buf), "h\xc3\xa9"); /* UTF-8 kept */
    assert_string_equal(ak_escape("abcdef", 6, 3, buf, sizeof buf), "abc...");
    assert_string_equal(ak_escape("", 0, 80, buf, sizeof buf), "");
    /* a small buffer: never overrun, always terminated */
    char tiny[8];
    ak_escape("\0\0\0\0\0\0\0\0", 8, 80, tiny, sizeof tiny);
    assert_true(strlen(tiny) < sizeof tiny);
    assert_string_equal(tiny, "\\0\\0..."); /* 7 bytes and the NUL */
    /* AK_SHOW cuts at 80 bytes of the value */
    char longer[200];
    memset(longer, 'z', sizeof longer);
    const char *shown = AK_SHOW(longer, sizeof longer);
    assert_int_equal(strlen(shown), 83);
}

/* No --k of at least 2, no --l, no --variance: refused, naming the options;
 * --k 1 asks for it explicitly. */
static void test_no_privacy_model(void **state)
{
    (void)state;
    const char *dir = tu_mkdtemp();
    tu_write_file(tu_path(dir, "in.csv"), "age,zip\n30,1\n40,2\n50,3\n");
    char *err;
    assert_int_equal(run(dir, "anonymize in.csv -o out.csv --qi age,zip", &err), 1);
    if (!strstr(err, "no privacy model") || !strstr(err, "--k") || !strstr(err, "--l") || !strstr(err, "--variance"))
        fail_msg("the refusal does not name the options: %s", err);
    free(err);
    assert_false(exists(tu_path(dir, "out.csv")));
    assert_int_equal(run(dir, "anonymize in.csv -o out.csv --qi age,zip --l 1", &err), 1); /* l 1 protects nothing */
    free(err);
    assert_false(exists(tu_path(dir, "out.csv")));
    assert_int_equal(run(dir, "anonymize in.csv -o out.csv --qi age,zip --k 1", &err), 0);
    free(err);
    assert_true(exists(tu_path(dir, "out.csv")));
}

/* metrics with rows missing from the published file: an error without
 * --suppression, the missing rows counted as suppressed with it. */
static void test_metrics_missing_rows(void **state)
{
    (void)state;
    const char *dir = tu_mkdtemp();
    tu_write_file(tu_path(dir, "orig.csv"), "age\n1\n2\n3\n4\n5\n6\n");
    tu_write_file(tu_path(dir, "pub.csv"), "age\n1-3\n1-3\n1-3\n");
    char *err;
    assert_int_equal(run(dir, "metrics orig.csv pub.csv --qi age", &err), 1);
    if (!strstr(err, "has 3 rows, fewer than the 6 of the original")) fail_msg("unexpected message: %s", err);
    free(err);
    assert_int_equal(run(dir, "metrics orig.csv pub.csv --qi age --suppression 0.5", &err), 0);
    free(err);
}

/* A value holding a NUL byte that is not a leaf: the message shows it whole
 * ("M\0"), not cut at the NUL (which read as the leaf "M"). */
static void test_nul_in_message(void **state)
{
    (void)state;
    const char *dir = tu_mkdtemp();
    FILE *f = fopen(tu_path(dir, "in.csv"), "wb");
    assert_non_null(f);
    static const char data[] = "sex,age\nM,30\nF,31\nM\0,32\nF,33\n";
    assert_int_equal(fwrite(data, 1, sizeof data - 1, f), sizeof data - 1);
    fclose(f);
    tu_write_file(tu_path(dir, "sex.csv"), "M;*\nF;*\n");
    char *err;
    assert_int_equal(run(dir, "anonymize in.csv -o out.csv --qi sex,age --hierarchy sex=sex.csv --k 2", &err), 1);
    if (!strstr(err, "'M\\0'")) fail_msg("the value is not shown whole: %s", err);
    free(err);
    assert_false(exists(tu_path(dir, "out.csv")));
}

/* A header of 100,000 columns (names checked for repeats through a map,
 * not pair by pair): a repeat at the far end is found and named, and a run
 * over such a table publishes it. */
static void test_wide_header(void **state)
{
    (void)state;
    const char *dir = tu_mkdtemp();
    const size_t ncol = 100000;
    for (int repeat = 0; repeat < 2; repeat++) {
        FILE *f = fopen(tu_path(dir, "wide.csv"), "w");
        assert_non_null(f);
        for (size_t c = 0; c < ncol; c++) fprintf(f, "%sc%zu", c ? "," : "", repeat && c == ncol - 1 ? (size_t)17 : c);
        for (int row = 0; row < 2; row++) {
            fputc('\n', f);
            for (size_t c = 0; c < ncol; c++) fprintf(f, "%s%d", c ? "," : "", row);
        }
        fputc('\n', f);
        fclose(f);
        char *err;
        const int rc = run(dir, "anonymize wide.csv -o out.csv --qi c5,c7 --k 2", &err);
        if (repeat) {
            assert_int_equal(rc, 1);
            if (!strstr(err, ":1: the header names column 'c17' twice")) fail_msg("unexpected message: %s", err);
        } else {
            assert_int_equal(rc, 0);
        }
        free(err);
        assert_int_equal(exists(tu_path(dir, "out.csv")), !repeat);
        remove(tu_path(dir, "out.csv"));
    }
}

/* -o - with a report that cannot be written: the table is out already, so
 * the message says which part failed. */
static void test_stdout_table_report_fails(void **state)
{
    (void)state;
    const char *dir = tu_mkdtemp();
    tu_write_file(tu_path(dir, "in.csv"), "age,zip\n30,1\n40,2\n50,3\n60,4\n");
    char *err;
    assert_int_equal(run(dir, "anonymize in.csv -o - --qi age,zip --k 2 --report /dev/full", &err), 1);
    if (!strstr(err, "/dev/full") || !strstr(err, "the table went to standard output whole"))
        fail_msg("the message does not say which part failed: %s", err);
    free(err);
}

/* generate with more rows than the output's file system can hold: refused
 * before anything is written (it used to write until the disk was full). */
static void test_generate_too_many_rows(void **state)
{
    (void)state;
    const char *dir = tu_mkdtemp();
    char *err;
    assert_int_equal(run(dir, "generate --rows 9223372036854775807 -o g.csv", &err), 1);
    if (!strstr(err, "MB free")) fail_msg("unexpected message: %s", err);
    free(err);
    assert_false(exists(tu_path(dir, "g.csv")));
    assert_int_equal(run(dir, "generate --rows 9223372036854775808 -o g.csv", &err), 1); /* beyond 2^63 - 1 */
    free(err);
    assert_false(exists(tu_path(dir, "g.csv")));
}

/* metrics with the original on standard input measures what it measures with
 * the original as a file (it was refused: the original is read as a file). */
static void test_metrics_original_on_stdin(void **state)
{
    (void)state;
    const char *dir = tu_mkdtemp();
    tu_write_file(tu_path(dir, "orig.csv"), "age,s\n1,a\n2,b\n3,a\n4,b\n5,a\n6,b\n");
    tu_write_file(tu_path(dir, "pub.csv"), "age,s\n1-3,a\n1-3,b\n1-3,a\n4-6,b\n4-6,a\n4-6,b\n");
    char cmd[16384];
    snprintf(cmd, sizeof cmd, "cd '%s' && '%s' metrics orig.csv pub.csv --qi age > file.json && "
             "'%s' metrics - pub.csv --qi age < orig.csv > stdin.json", dir, ANONKIT_BINARY, ANONKIT_BINARY);
    const int status = system(cmd);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    char *a = tu_read_file(tu_path(dir, "file.json"), NULL), *b = tu_read_file(tu_path(dir, "stdin.json"), NULL);
    assert_non_null(a);
    assert_non_null(b);
    assert_non_null(strstr(a, "\"dm\""));
    assert_string_equal(a, b);
    free(a);
    free(b);
    char *err;
    assert_int_equal(run(dir, "metrics - - --qi age < orig.csv", &err), 1);
    if (!strstr(err, "cannot both be stdin")) fail_msg("unexpected message: %s", err);
    free(err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_escape),
        cmocka_unit_test(test_no_privacy_model),
        cmocka_unit_test(test_metrics_missing_rows),
        cmocka_unit_test(test_nul_in_message),
        cmocka_unit_test(test_wide_header),
        cmocka_unit_test(test_stdout_table_report_fails),
        cmocka_unit_test(test_generate_too_many_rows),
        cmocka_unit_test(test_metrics_original_on_stdin),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
