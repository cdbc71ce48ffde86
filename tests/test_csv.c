/* test_csv.c — unit tests of the CSV reader (src/io/csv.c); the writer and the
 * round trip through both: test_csv_writer.c.
 *
 * Expected values are written out by hand from RFC 4180 and csv.h, never taken
 * from the program's own output. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "io/csv.h"
#include "testutil.h"

/* The reader's first block size (CSV_BLOCK_SIZE in csv.c). Only the boundary
 * sweep uses it, to place records across the first block end; if csv.c
 * changes it the tests still pass but aim at the wrong spot. */
#define READER_BLOCK ((size_t)1 << 20)


static void write_bytes(const char *path, const char *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

/* Writes text to a fresh file and opens a reader on it. */
static csv_reader *open_text_n(const char *text, size_t len, char delim)
{
    static int n;
    char name[64];
    snprintf(name, sizeof name, "in%d.csv", n++);
    const char *path = tu_path(tu_group_dir, name);
    write_bytes(path, text, len);
    csv_reader *r = NULL;
    ak_error err;
    ak_err_clear(&err);
    int rc = csv_reader_open(&r, path, delim, &err);
    if (rc != ANONKIT_OK) fail_msg("open failed: %s", err.message);
    unlink(path); /* the reader keeps it open; the disk stays clean */
    return r;
}

static csv_reader *open_text(const char *text, char delim)
{
    return open_text_n(text, strlen(text), delim);
}

/* Reads one record and checks it against a NULL-terminated list of expected
 * fields (C strings) and the expected line. */
static void expect_record(csv_reader *r, long line, ...)
{
    csv_record rec;
    ak_error err;
    ak_err_clear(&err);
    int rc = csv_read(r, &rec, &err);
    if (rc != 1) fail_msg("expected a record on line %ld, got %d (%s)", line, rc, err.message);
    assert_int_equal(rec.line, line);
    va_list ap;
    va_start(ap, line);
    uint32_t i = 0;
    const char *want;
    while ((want = va_arg(ap, const char *)) != NULL) {
        if (i >= rec.count) fail_msg("line %ld: only %u fields", line, rec.count);
        size_t wlen = strlen(want);
        if (rec.fields[i].len != wlen || memcmp(rec.fields[i].data, want, wlen) != 0)
            fail_msg("line %ld field %u: got '%.*s', want '%s'", line, i + 1,
                     (int)rec.fields[i].len, rec.fields[i].data, want);
        i++;
    }
    va_end(ap);
    assert_int_equal(rec.count, i);
}

static void expect_end(csv_reader *r)
{
    csv_record rec;
    ak_error err;
    ak_err_clear(&err);
    assert_int_equal(csv_read(r, &rec, &err), 0);
    assert_int_equal(csv_read(r, &rec, &err), 0); /* stays at the end */
}

static void expect_error(csv_reader *r, int code, long line, long column, const char *needle)
{
    csv_record rec;
    ak_error err;
    ak_err_clear(&err);
    int rc = csv_read(r, &rec, &err);
    assert_int_equal(rc, code);
    assert_int_equal(err.code, code);
    assert_int_equal(err.line, line);
    assert_int_equal(err.column, column);
    if (needle && !strstr(err.message, needle))
        fail_msg("message '%s' lacks '%s'", err.message, needle);
    /* The failure is sticky. */
    ak_err_clear(&err);
    assert_int_equal(csv_read(r, &rec, &err), code);
    assert_int_equal(err.line, line);
}

/* ------------------------------------------------------------------------ */

static void test_simple(void **state)
{
    (void)state;
    csv_reader *r = open_text("name,age,zip\nalice,30,12345\nbob,4,9\n", ',');
    expect_record(r, 1, "name", "age", "zip", NULL);
    expect_record(r, 2, "alice", "30", "12345", NULL);
    expect_record(r, 3, "bob", "4", "9", NULL);
    expect_end(r);
    assert_int_equal(csv_reader_offset(r), 36);
    csv_reader_free(r);
}

static void test_quoted(void **state)
{
    (void)state;
    csv_reader *r = open_text("\"a,b\",\"say \"\"hi\"\"\",\"line1\nline2\",plain,\"\"\n"
                              "\"\"\"\",x\"y,\"\"\"\"\"\"\n"
                              "next\n",
                              ',');
    expect_record(r, 1, "a,b", "say \"hi\"", "line1\nline2", "plain", "", NULL);
    /* A quote inside an unquoted field is data. */
    expect_record(r, 3, "\"", "x\"y", "\"\"", NULL);
    expect_record(r, 4, "next", NULL);
    expect_end(r);
    csv_reader_free(r);
}

static void test_crlf(void **state)
{
    (void)state;
    csv_reader *r = open_text("a,b\r\n\"q\"\r\nc\r,d\r\n\"x\r\ny\",z\r\nlast\r\n", ',');
    expect_record(r, 1, "a", "b", NULL);
    expect_record(r, 2, "q", NULL);
    expect_record(r, 3, "c\r", "d", NULL); /* a lone CR is data */
    expect_record(r, 4, "x\r\ny", "z", NULL);
    expect_record(r, 6, "last", NULL);
    expect_end(r);
    csv_reader_free(r);
}

static void test_no_trailing_newline(void **state)
{
    (void)state;
    csv_reader *r = open_text("a,b\nc,d", ',');
    expect_record(r, 1, "a", "b", NULL);
    expect_record(r, 2, "c", "d", NULL);
    expect_end(r);
    assert_int_equal(csv_reader_offset(r), 7);
    csv_reader_free(r);

    r = open_text("a,\"b\nc\"", ',');
    expect_record(r, 1, "a", "b\nc", NULL);
    expect_end(r);
    csv_reader_free(r);

    r = open_text("x,", ',');
    expect_record(r, 1, "x", "", NULL);
    expect_end(r);
    csv_reader_free(r);

    r = open_text("q\r", ','); /* CR at the end of the file without LF is data */
    expect_record(r, 1, "q\r", NULL);
    expect_end(r);
    csv_reader_free(r);
}

static void test_empty_lines(void **state)
{
    (void)state;
    csv_reader *r = open_text("a\n\n", ',');
    expect_record(r, 1, "a", NULL);
    expect_end(r);
    csv_reader_free(r);

    r = open_text("a\r\n\r\n", ',');
    expect_record(r, 1, "a", NULL);
    expect_end(r);
    csv_reader_free(r);

    /* Empty lines followed only by empty lines are not records. */
    r = open_text("a\n\n\r\n\n", ',');
    expect_record(r, 1, "a", NULL);
    expect_end(r);
    csv_reader_free(r);

    /* In the middle they are records of one empty field. */
    r = open_text("a\n\nb\n\r\n\nc", ',');
    expect_record(r, 1, "a", NULL);
    expect_record(r, 2, "", NULL);
    expect_record(r, 3, "b", NULL);
    expect_record(r, 4, "", NULL);
    expect_record(r, 5, "", NULL);
    expect_record(r, 6, "c", NULL);
    expect_end(r);
    csv_reader_free(r);

    r = open_text("\n\nfirst\n", ',');
    expect_record(r, 1, "", NULL);
    expect_record(r, 2, "", NULL);
    expect_record(r, 3, "first", NULL);
    expect_end(r);
    csv_reader_free(r);

    r = open_text("", ',');
    expect_end(r);
    assert_int_equal(csv_reader_offset(r), 0);
    csv_reader_free(r);

    r = open_text("\n", ',');
    expect_end(r);
    csv_reader_free(r);
}

static void test_empty_fields(void **state)
{
    (void)state;
    csv_reader *r = open_text(",,\n\"\",a,\n,\"\"\n", ',');
    expect_record(r, 1, "", "", "", NULL);
    expect_record(r, 2, "", "a", "", NULL);
    expect_record(r, 3, "", "", NULL);
    expect_end(r);
    csv_reader_free(r);
}

static void test_other_delimiters(void **state)
{
    (void)state;
    csv_reader *r = open_text("a;b,c;\"d;e\"\n1;2\n", ';');
    expect_record(r, 1, "a", "b,c", "d;e", NULL);
    expect_record(r, 2, "1", "2", NULL);
    expect_end(r);
    csv_reader_free(r);

    r = open_text("a\tb c\t\"d\te\"\t\n", '\t');
    expect_record(r, 1, "a", "b c", "d\te", "", NULL);
    expect_end(r);
    csv_reader_free(r);

    r = open_text("x|y\n", '|');
    expect_record(r, 1, "x", "y", NULL);
    expect_end(r);
    csv_reader_free(r);

    csv_reader *bad = NULL;
    ak_error err;
    assert_int_equal(csv_reader_open(&bad, tu_path(tu_group_dir, "x.csv"), '"', &err), ANONKIT_E_USAGE);
    assert_null(bad);
}

static void test_line_numbers(void **state)
{
    (void)state;
    csv_reader *r = open_text("h1,h2\n"
                              "\"a\nb\nc\",x\n"      /* lines 2-4 */
                              "plain,y\n"            /* line 5 */
                              "\"\r\n\",\"\n\n\"\n"  /* lines 6-9 */
                              "end,z\n",             /* line 10 */
                              ',');
    expect_record(r, 1, "h1", "h2", NULL);
    expect_record(r, 2, "a\nb\nc", "x", NULL);
    expect_record(r, 5, "plain", "y", NULL);
    expect_record(r, 6, "\r\n", "\n\n", NULL);
    expect_record(r, 10, "end", "z", NULL);
    expect_end(r);
    csv_reader_free(r);
}

static void test_many_fields(void **state)
{
    (void)state;
    /* 1000 fields: more than the reader's first field array. */
    char *text = malloc(5000);
    assert_non_null(text);
    size_t n = 0;
    for (int i = 0; i < 1000; i++) n += (size_t)sprintf(text + n, i ? ",%d" : "%d", i);
    text[n++] = '\n';
    csv_reader *r = open_text_n(text, n, ',');
    csv_record rec;
    ak_error err;
    assert_int_equal(csv_read(r, &rec, &err), 1);
    assert_int_equal(rec.count, 1000);
    char want[16];
    for (int i = 0; i < 1000; i++) {
        int wl = sprintf(want, "%d", i);
        assert_int_equal(rec.fields[i].len, wl);
        assert_memory_equal(rec.fields[i].data, want, (size_t)wl);
    }
    expect_end(r);
    csv_reader_free(r);
    free(text);
}

/* A 5 MB quoted field with escaped quotes and line ends, then a 5 MB unquoted
 * one: both far larger than the first block. */
static void test_large_records(void **state)
{
    (void)state;
    const size_t big = 5u * 1000 * 1000;
    char *text = malloc(3 * big);
    assert_non_null(text);
    size_t n = 0;
    n += (size_t)sprintf(text + n, "head,er\nx,\"");
    /* Content of the quoted field: a repeating 10-byte unit "abcdefgh" + "" + LF
     * whose value is abcdefgh"<LF> (10 bytes in value, 11 in the file). */
    for (size_t i = 0; i < big / 10; i++) {
        memcpy(text + n, "abcdefgh\"\"\n", 11);
        n += 11;
    }
    n += (size_t)sprintf(text + n, "\",y\n");
    for (size_t i = 0; i < big; i++) text[n++] = (char)('a' + i % 26);
    n += (size_t)sprintf(text + n, ",tail\nlast\n");
    csv_reader *r = open_text_n(text, n, ',');
    free(text);

    expect_record(r, 1, "head", "er", NULL);
    csv_record rec;
    ak_error err;
    ak_err_clear(&err);
    assert_int_equal(csv_read(r, &rec, &err), 1);
    assert_int_equal(rec.line, 2);
    assert_int_equal(rec.count, 3);
    assert_int_equal(rec.fields[0].len, 1);
    assert_int_equal(rec.fields[1].len, big);
    for (size_t i = 0; i < big; i += 10)
        if (memcmp(rec.fields[1].data + i, "abcdefgh\"\n", 10) != 0)
            fail_msg("big quoted field differs at %zu", i);
    assert_int_equal(rec.fields[2].len, 1);
    assert_memory_equal(rec.fields[2].data, "y", 1);

    long line2 = 2 + (long)(big / 10) + 1; /* one LF per unit inside the quotes, one at the end */
    assert_int_equal(csv_read(r, &rec, &err), 1);
    assert_int_equal(rec.line, line2);
    assert_int_equal(rec.count, 2);
    assert_int_equal(rec.fields[0].len, big);
    for (size_t i = 0; i < big; i++)
        if (rec.fields[0].data[i] != (char)('a' + i % 26)) fail_msg("big field differs at %zu", i);
    assert_int_equal(rec.fields[1].len, 4);
    assert_memory_equal(rec.fields[1].data, "tail", 4);
    expect_record(r, line2 + 1, "last", NULL);
    expect_end(r);
    csv_reader_free(r);
}

/* Puts each tricky record so that the first block ends at every offset inside
 * it: inside "", between CR and LF, right after a quote, in empty-line runs. */
static void test_block_boundaries(void **state)
{
    (void)state;
    static const char *tails[] = {
        "\"a\"\"b\r\nc\",d\r\ntail\n",
        "\r\n\r\n\nz\r\n",
        "\"p\"\r\n\n\r\n",
        "ab,\"\"\"\"\r",
    };
    char *text = malloc(READER_BLOCK + 64);
    assert_non_null(text);
    for (size_t t = 0; t < sizeof tails / sizeof *tails; t++) {
        size_t tl = strlen(tails[t]);
        for (size_t k = 0; k <= tl + 1; k++) {
            /* Line 1: filler so that the tail starts k bytes before the block end. */
            size_t fill = READER_BLOCK - k;
            memset(text, 'f', fill - 1);
            text[fill - 1] = '\n';
            memcpy(text + fill, tails[t], tl);
            csv_reader *r = open_text_n(text, fill + tl, ',');
            csv_record rec;
            ak_error err;
            assert_int_equal(csv_read(r, &rec, &err), 1);
            assert_int_equal(rec.count, 1);
            assert_int_equal(rec.fields[0].len, fill - 1);
            switch (t) {
            case 0:
                expect_record(r, 2, "a\"b\r\nc", "d", NULL);
                expect_record(r, 4, "tail", NULL);
                break;
            case 1:
                expect_record(r, 2, "", NULL);
                expect_record(r, 3, "", NULL);
                expect_record(r, 4, "", NULL);
                expect_record(r, 5, "z", NULL);
                break;
            case 2:
                expect_record(r, 2, "p", NULL);
                break;
            case 3:
                expect_error(r, ANONKIT_E_INPUT, 2, 2, "closing quote");
                csv_reader_free(r);
                continue;
            }
            expect_end(r);
            assert_int_equal(csv_reader_offset(r), fill + tl);
            csv_reader_free(r);
        }
    }
    free(text);
}

/* The scan of unquoted fields looks at many bytes at once: a delimiter and a
 * line end at every offset from a record's start, the end of the input at
 * every offset, with and without a final line end, and a field that begins
 * with a quote right after a long unquoted one, all read exactly. */
static void test_scan_offsets(void **state)
{
    (void)state;
    char text[1024], a[160], b[160];
    for (size_t la = 0; la < 140; la++) {
        const size_t lb = 140 - la;
        memset(a, 'a', la);
        a[la] = '\0';
        memset(b, 'b', lb);
        b[lb] = '\0';
        for (int final_lf = 0; final_lf < 2; final_lf++) {
            snprintf(text, sizeof text, "%s,%s\n%s,\"q,%s\"\n%s%s", a, b, b, a, a, final_lf ? "\n" : "");
            csv_reader *r = open_text(text, ',');
            char qa[170];
            snprintf(qa, sizeof qa, "q,%s", a);
            expect_record(r, 1, a, b, NULL);
            expect_record(r, 2, b, qa, NULL);
            if (la) expect_record(r, 3, a, NULL);
            expect_end(r);
            csv_reader_free(r);
        }
    }
}

static void test_unterminated_quote(void **state)
{
    (void)state;
    csv_reader *r = open_text("a,b\n\"m\nn\",ok\nc,\"d\ne\nf\n", ',');
    expect_record(r, 1, "a", "b", NULL);
    expect_record(r, 2, "m\nn", "ok", NULL);
    /* The quote opens on line 4, field 2. */
    expect_error(r, ANONKIT_E_INPUT, 4, 2, "never closed");
    csv_reader_free(r);

    r = open_text("x\n\"", ',');
    expect_record(r, 1, "x", NULL);
    expect_error(r, ANONKIT_E_INPUT, 2, 1, "never closed");
    csv_reader_free(r);

    /* Within one record: the open quote is two lines below the record start. */
    r = open_text("ok\n\"x\ny\nz\",\"open\nnever closed\n", ',');
    expect_record(r, 1, "ok", NULL);
    expect_error(r, ANONKIT_E_INPUT, 4, 2, "never closed");
    csv_reader_free(r);

    r = open_text("\"ends with escaped\"\"", ',');
    expect_error(r, ANONKIT_E_INPUT, 1, 1, "never closed");
    csv_reader_free(r);
}

static void test_garbage_after_quote(void **state)
{
    (void)state;
    csv_reader *r = open_text("a,\"b\"c,d\n", ',');
    expect_error(r, ANONKIT_E_INPUT, 1, 2, "'c' after a closing quote");
    csv_reader_free(r);

    /* Reported on the line of the closing quote. */
    r = open_text("h\n\"multi\nline\" ,x\n", ',');
    expect_record(r, 1, "h", NULL);
    expect_error(r, ANONKIT_E_INPUT, 3, 1, "' ' after a closing quote");
    csv_reader_free(r);

    r = open_text("\"a\"\rb\n", ',');
    expect_error(r, ANONKIT_E_INPUT, 1, 1, "0x0d");
    csv_reader_free(r);

    /* The closing quote of a ';' file followed by ','. */
    r = open_text("\"a\",b\n", ';');
    expect_error(r, ANONKIT_E_INPUT, 1, 1, "','");
    csv_reader_free(r);
}

static void test_open_errors(void **state)
{
    (void)state;
    csv_reader *r = NULL;
    ak_error err;
    ak_err_clear(&err);
    assert_int_equal(csv_reader_open(&r, tu_path(tu_group_dir, "missing.csv"), ',', &err), ANONKIT_E_IO);
    assert_null(r);
    assert_non_null(strstr(err.message, strerror(ENOENT)));
    assert_non_null(strstr(err.file, "missing.csv"));

    assert_int_equal(csv_reader_open(&r, "-", ',', &err), ANONKIT_E_USAGE);
    assert_null(r);

    /* A folder opens but cannot be read. */
    if (csv_reader_open(&r, tu_group_dir, ',', &err) == ANONKIT_OK) {
        csv_record rec;
        ak_err_clear(&err);
        assert_int_equal(csv_read(r, &rec, &err), ANONKIT_E_IO);
        assert_non_null(strstr(err.message, strerror(EISDIR)));
        csv_reader_free(r);
    } else {
        assert_int_equal(err.code, ANONKIT_E_IO);
    }
    csv_reader_free(NULL);
}

static void test_stream(void **state)
{
    (void)state;
    const char *path = tu_path(tu_group_dir, "stream.csv");
    tu_write_file(path, "1,2\n3,4\n");
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    csv_reader *r = NULL;
    ak_error err;
    assert_int_equal(csv_reader_open_stream(&r, f, "my-stream", ',', &err), ANONKIT_OK);
    expect_record(r, 1, "1", "2", NULL);
    expect_record(r, 2, "3", "4", NULL);
    expect_end(r);
    csv_reader_free(r);
    /* The stream is still open and ours. */
    assert_int_equal(fseek(f, 0, SEEK_SET), 0);
    assert_int_equal(fgetc(f), '1');
    fclose(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_simple),
        cmocka_unit_test(test_quoted),
        cmocka_unit_test(test_crlf),
        cmocka_unit_test(test_no_trailing_newline),
        cmocka_unit_test(test_empty_lines),
        cmocka_unit_test(test_empty_fields),
        cmocka_unit_test(test_other_delimiters),
        cmocka_unit_test(test_line_numbers),
        cmocka_unit_test(test_many_fields),
        cmocka_unit_test(test_large_records),
        cmocka_unit_test(test_block_boundaries),
        cmocka_unit_test(test_scan_offsets),
        cmocka_unit_test(test_unterminated_quote),
        cmocka_unit_test(test_garbage_after_quote),
        cmocka_unit_test(test_open_errors),
        cmocka_unit_test(test_stream),
    };
    return cmocka_run_group_tests(tests, tu_group_setup, tu_group_teardown);
}
