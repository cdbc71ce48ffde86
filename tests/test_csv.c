/* test_csv.c — unit and property tests of the CSV reader and writer (src/io/csv.c).
 *
 * Expected values are written out by hand from RFC 4180 and csv.h, never taken
 * from the program's own output; the round-trip property test compares what
 * the reader returns with the fields the generator made, not with a file. */
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

/* ------------------------------------------------------------------------ */
/* Writer. */

static char *write_records(char delim, void (*body)(csv_writer *), size_t *len)
{
    const char *path = tu_path(tu_group_dir, "out.csv");
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    csv_writer *w = NULL;
    ak_error err;
    assert_int_equal(csv_writer_open_stream(&w, f, "out.csv", delim, &err), ANONKIT_OK);
    body(w);
    assert_int_equal(csv_writer_flush(w, &err), ANONKIT_OK);
    csv_writer_free(w);
    assert_int_equal(fclose(f), 0);
    return tu_read_file(path, len);
}

static void put(csv_writer *w, const char *s)
{
    ak_error err;
    assert_int_equal(csv_write_field(w, s, strlen(s), &err), ANONKIT_OK);
}

static void end(csv_writer *w)
{
    ak_error err;
    assert_int_equal(csv_write_end(w, &err), ANONKIT_OK);
}

static void body_quoting(csv_writer *w)
{
    ak_error err;
    put(w, "plain");
    put(w, "a,b");
    put(w, "say \"hi\"");
    put(w, " lead");
    put(w, "trail ");
    put(w, "mid space");
    put(w, "cr\r");
    put(w, "lf\n");
    put(w, "");
    put(w, "a;b");
    end(w);
    put(w, ""); /* one empty field alone */
    end(w);
    put(w, "");
    put(w, "");
    end(w);
    assert_int_equal(csv_write_raw(w, "raw,\"bytes\"", 11, &err), ANONKIT_OK);
    end(w);
    put(w, "x");
    assert_int_equal(csv_write_field(w, "a\0b", 3, &err), ANONKIT_OK);
    end(w);
}

static void test_writer_quoting(void **state)
{
    (void)state;
    size_t len;
    char *out = write_records(',', body_quoting, &len);
    const char want[] = "plain,\"a,b\",\"say \"\"hi\"\"\",\" lead\",\"trail \",mid space,"
                        "\"cr\r\",\"lf\n\",,a;b\n"
                        "\"\"\n"
                        ",\n"
                        "raw,\"bytes\"\n"
                        "x,a\0b\n";
    assert_int_equal(len, sizeof want - 1);
    assert_memory_equal(out, want, sizeof want - 1);
    free(out);

    out = write_records(';', body_quoting, &len);
    const char want_semi[] = "plain;a,b;\"say \"\"hi\"\"\";\" lead\";\"trail \";mid space;"
                             "\"cr\r\";\"lf\n\";;\"a;b\"\n"
                             "\"\"\n"
                             ";\n"
                             "raw,\"bytes\"\n"
                             "x;a\0b\n";
    assert_int_equal(len, sizeof want_semi - 1);
    assert_memory_equal(out, want_semi, sizeof want_semi - 1);
    free(out);
}

/* A first field that begins with the bytes of a UTF-8 byte order mark: the
 * reader drops a mark at the start of a file, so the writer quotes that
 * field (and only at the start: later fields are data). */
static void body_bom(csv_writer *w)
{
    put(w, "\xEF\xBB\xBFname");
    put(w, "\xEF\xBB\xBFx");
    end(w);
}

static void test_writer_quotes_leading_bom(void **state)
{
    (void)state;
    size_t len;
    char *out = write_records(',', body_bom, &len);
    const char want[] = "\"\xEF\xBB\xBFname\",\xEF\xBB\xBFx\n";
    assert_int_equal(len, sizeof want - 1);
    assert_memory_equal(out, want, sizeof want - 1);
    free(out);
    /* and it reads back as written */
    const char *path = tu_path(tu_group_dir, "out.csv");
    csv_reader *r = NULL;
    ak_error err;
    assert_int_equal(csv_reader_open(&r, path, ',', &err), ANONKIT_OK);
    csv_record rec;
    assert_int_equal(csv_read(r, &rec, &err), 1);
    assert_int_equal(rec.count, 2);
    assert_int_equal(rec.fields[0].len, 7);
    assert_memory_equal(rec.fields[0].data, "\xEF\xBB\xBFname", 7);
    csv_reader_free(r);
}

/* Fields larger than the writer's buffer, quoted and not. */
static void body_big(csv_writer *w)
{
    ak_error err;
    size_t n = 700 * 1000;
    char *s = malloc(n);
    assert_non_null(s);
    for (size_t i = 0; i < n; i++) s[i] = (i % 1000 == 999) ? '"' : 'k';
    assert_int_equal(csv_write_field(w, s, n, &err), ANONKIT_OK);
    memset(s, 'u', n);
    assert_int_equal(csv_write_field(w, s, n, &err), ANONKIT_OK);
    end(w);
    free(s);
}

static void test_writer_big_fields(void **state)
{
    (void)state;
    size_t len;
    char *out = write_records(',', body_big, &len);
    size_t n = 700 * 1000;
    assert_int_equal(len, (n + 700 + 2) + 1 + n + 1);
    assert_int_equal(out[0], '"');
    for (size_t i = 0; i < n; i++) {
        /* In the file each 1000-byte unit is 999 'k' and two quotes. */
        size_t unit = i / 1000, off = i % 1000;
        char want_c = off == 999 ? '"' : 'k';
        size_t at = 1 + unit * 1001 + off;
        if (out[at] != want_c) fail_msg("quoted big field differs at %zu", i);
        if (off == 999 && out[at + 1] != '"') fail_msg("quote not doubled at %zu", i);
    }
    assert_memory_equal(out + n + 700 + 2, ",", 1);
    for (size_t i = 0; i < n; i++)
        if (out[n + 703 + i] != 'u') fail_msg("plain big field differs at %zu", i);
    assert_int_equal(out[len - 1], '\n');
    free(out);
}

/* One random field over an alphabet of troublemakers. */
static size_t gen_field(tu_rng *rng, char *buf)
{
    static const char alphabet[] = {'a', 'b', '7', ' ', '"', ',', ';', '\t', '|', '\r', '\n',
                                    '\0', (char)0xc3, (char)0xa9};
    uint64_t kind = tu_below(rng, 10);
    size_t len;
    if (kind == 0) len = 0;
    else if (kind < 8) len = (size_t)tu_below(rng, 12);
    else len = (size_t)tu_below(rng, 400);
    for (size_t i = 0; i < len; i++) buf[i] = alphabet[tu_below(rng, sizeof alphabet)];
    return len;
}

#define MAX_FIELDS 9

static uint32_t gen_record(tu_rng *rng, char bufs[MAX_FIELDS][400], size_t lens[MAX_FIELDS])
{
    uint32_t n = 1 + (uint32_t)tu_below(rng, MAX_FIELDS);
    for (uint32_t i = 0; i < n; i++) lens[i] = gen_field(rng, bufs[i]);
    return n;
}

/* Property: whatever the writer writes, the reader reads back unchanged, for
 * several delimiters, over enough data to cross several reader blocks. */
static void test_round_trip_property(void **state)
{
    (void)state;
    static const char delims[] = {',', ';', '\t', '|'};
    static char bufs[MAX_FIELDS][400];
    size_t lens[MAX_FIELDS];
    const int nrec = 30000;
    for (size_t d = 0; d < sizeof delims; d++) {
        uint64_t seed = 0x5eed0000u + d;
        const char *path = tu_path(tu_group_dir, "roundtrip.csv");
        FILE *f = fopen(path, "wb");
        assert_non_null(f);
        csv_writer *w = NULL;
        ak_error err;
        assert_int_equal(csv_writer_open_stream(&w, f, path, delims[d], &err), ANONKIT_OK);
        tu_rng rng = {seed};
        for (int i = 0; i < nrec; i++) {
            uint32_t n = gen_record(&rng, bufs, lens);
            for (uint32_t j = 0; j < n; j++)
                assert_int_equal(csv_write_field(w, bufs[j], lens[j], &err), ANONKIT_OK);
            assert_int_equal(csv_write_end(w, &err), ANONKIT_OK);
        }
        assert_int_equal(csv_writer_flush(w, &err), ANONKIT_OK);
        csv_writer_free(w);
        assert_int_equal(fclose(f), 0);

        csv_reader *r = NULL;
        assert_int_equal(csv_reader_open(&r, path, delims[d], &err), ANONKIT_OK);
        rng.s = seed;
        long line = 1;
        uint64_t offset = 0; /* where the record starts: the lengths of those before, as csv_escape writes them */
        char escaped[2 * 400 + 2];
        for (int i = 0; i < nrec; i++) {
            uint32_t n = gen_record(&rng, bufs, lens);
            csv_record rec;
            ak_err_clear(&err);
            int rc = csv_read(r, &rec, &err);
            if (rc != 1) fail_msg("record %d: rc %d: %s", i, rc, err.message);
            assert_int_equal(rec.line, line);
            assert_int_equal(rec.offset, offset);
            for (uint32_t j = 0; j < n; j++) offset += csv_escape(escaped, bufs[j], lens[j], delims[d]) + 1;
            if (n == 1 && lens[0] == 0) offset += 2; /* a lone empty field is written "" (not an empty line) */
            assert_int_equal(rec.count, n);
            for (uint32_t j = 0; j < n; j++) {
                if (rec.fields[j].len != lens[j] ||
                    memcmp(rec.fields[j].data, bufs[j], lens[j]) != 0)
                    fail_msg("delimiter %zu record %d field %u differs", d, i, j);
                for (size_t b = 0; b < lens[j]; b++) line += bufs[j][b] == '\n';
            }
            line++;
        }
        expect_end(r);
        size_t file_len;
        free(tu_read_file(path, &file_len));
        assert_true(file_len > 2 * READER_BLOCK);
        assert_int_equal(csv_reader_offset(r), file_len);
        csv_reader_free(r);
    }
}

/* The writer's quoting agrees with csv_escape(), which callers use to build
 * records in memory. */
static void test_writer_matches_escape(void **state)
{
    (void)state;
    static char field[400];
    char esc[2 * 400 + 2];
    tu_rng rng = {42};
    const char *path = tu_path(tu_group_dir, "escape.csv");
    for (int i = 0; i < 2000; i++) {
        FILE *f = fopen(path, "wb");
        assert_non_null(f);
        csv_writer *w = NULL;
        ak_error err;
        assert_int_equal(csv_writer_open_stream(&w, f, path, ';', &err), ANONKIT_OK);
        size_t len = gen_field(&rng, field);
        assert_int_equal(csv_write_field(w, field, len, &err), ANONKIT_OK);
        assert_int_equal(csv_writer_flush(w, &err), ANONKIT_OK);
        csv_writer_free(w);
        assert_int_equal(fclose(f), 0);
        size_t got_len;
        char *got = tu_read_file(path, &got_len);
        size_t esc_len = csv_escape(esc, field, len, ';');
        assert_int_equal(got_len, esc_len);
        assert_memory_equal(got, esc, esc_len);
        assert_int_equal(csv_needs_quotes(field, len, ';'), esc_len != len);
        free(got);
    }
}

/* Raw blocks larger than the writer's buffer go to the stream directly; the
 * bytes still come out in the order they were given. */
static void test_writer_raw_blocks(void **state)
{
    (void)state;
    const char *path = tu_path(tu_group_dir, "raw.csv");
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    csv_writer *w = NULL;
    ak_error err;
    assert_int_equal(csv_writer_open_stream(&w, f, path, ',', &err), ANONKIT_OK);
    const size_t sizes[] = {5, 1 << 20, 3, (256 << 10) - 1, 256 << 10, 7, (3 << 20) + 11, 1};
    size_t total = 0;
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) total += sizes[i];
    char *want = malloc(total), *at = want;
    assert_non_null(want);
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        for (size_t j = 0; j < sizes[i]; j++) at[j] = (char)('a' + (i * 7 + j) % 26);
        assert_int_equal(csv_write_raw(w, at, sizes[i], &err), ANONKIT_OK);
        at += sizes[i];
    }
    assert_int_equal(csv_writer_flush(w, &err), ANONKIT_OK);
    csv_writer_free(w);
    assert_int_equal(fclose(f), 0);
    size_t len;
    char *got = tu_read_file(path, &len);
    assert_int_equal(len, total);
    assert_memory_equal(got, want, total);
    free(got);
    free(want);
}

static void test_write_error(void **state)
{
    (void)state;
    FILE *f = fopen("/dev/full", "wb");
    if (!f) skip();
    csv_writer *w = NULL;
    ak_error err;
    assert_int_equal(csv_writer_open_stream(&w, f, "/dev/full", ',', &err), ANONKIT_OK);

    /* A small record stays in the buffers until the flush, which must fail. */
    put(w, "hello");
    end(w);
    ak_err_clear(&err);
    assert_int_equal(csv_writer_flush(w, &err), ANONKIT_E_IO);
    assert_int_equal(err.code, ANONKIT_E_IO);
    assert_non_null(strstr(err.message, strerror(ENOSPC)));
    assert_string_equal(err.file, "/dev/full");
    /* Later calls keep failing. */
    ak_err_clear(&err);
    assert_int_equal(csv_write_field(w, "x", 1, &err), ANONKIT_E_IO);
    assert_non_null(strstr(err.message, strerror(ENOSPC)));
    assert_int_equal(csv_write_end(w, &err), ANONKIT_E_IO);
    assert_int_equal(csv_write_raw(w, "x", 1, &err), ANONKIT_E_IO);
    assert_int_equal(csv_writer_flush(w, &err), ANONKIT_E_IO);
    csv_writer_free(w);
    fclose(f);

    /* Much more than the buffer: a write itself fails before any flush. */
    f = fopen("/dev/full", "wb");
    assert_non_null(f);
    assert_int_equal(csv_writer_open_stream(&w, f, "/dev/full", ',', &err), ANONKIT_OK);
    char field[1000];
    memset(field, 'z', sizeof field);
    int rc = ANONKIT_OK;
    for (int i = 0; i < 2000 && rc == ANONKIT_OK; i++) rc = csv_write_field(w, field, sizeof field, &err);
    assert_int_equal(rc, ANONKIT_E_IO);
    assert_non_null(strstr(err.message, strerror(ENOSPC)));
    csv_writer_free(w);
    fclose(f);
}

/* One random sequence of writes (fields, records' ends, raw bytes, blocks
 * of any size and flushes) made to w, from seed. */
static void random_writes(csv_writer *w, uint64_t seed)
{
    tu_rng rng = {seed};
    ak_error err;
    char field[400];
    strbuf block = {0};
    for (int i = 0; i < 3000; i++) {
        const uint64_t what = tu_below(&rng, 20);
        if (what < 10) {
            const size_t len = gen_field(&rng, field);
            assert_int_equal(csv_write_field(w, field, len, &err), ANONKIT_OK);
        } else if (what < 13) {
            assert_int_equal(csv_write_end(w, &err), ANONKIT_OK);
        } else if (what < 15) {
            const size_t len = (size_t)tu_below(&rng, tu_below(&rng, 4) ? 300 : 5000);
            char *raw = malloc(len + 1);
            assert_non_null(raw);
            for (size_t j = 0; j < len; j++) raw[j] = (char)('a' + tu_below(&rng, 26));
            assert_int_equal(csv_write_raw(w, raw, len, &err), ANONKIT_OK);
            free(raw);
        } else if (what < 19) {
            const size_t len = (size_t)tu_below(&rng, tu_below(&rng, 4) ? 200 : 20000);
            for (size_t j = 0; j < len; j++) {
                const char c = (char)('A' + tu_below(&rng, 26));
                assert_int_equal(strbuf_append(&block, &c, 1), 0);
            }
            assert_int_equal(csv_write_block(w, &block, &err), ANONKIT_OK);
            assert_int_equal(block.len, 0);
        } else {
            assert_int_equal(csv_writer_flush(w, &err), ANONKIT_OK);
        }
    }
    assert_int_equal(csv_writer_flush(w, &err), ANONKIT_OK);
    strbuf_free(&block);
}

/* The background mode writes exactly what the synchronous writer writes,
 * with few or many buffers, small or large, switched on before or after the
 * first writes. */
static void test_writer_background(void **state)
{
    (void)state;
    const char *sync_path = tu_path(tu_group_dir, "sync.csv");
    char want_path[4200];
    snprintf(want_path, sizeof want_path, "%s", sync_path);
    static const unsigned nbufs[] = {1, 2, 3, 4};
    static const size_t sizes[] = {1, 64, 4096, 1 << 20};
    for (uint64_t seed = 1; seed <= 8; seed++) {
        FILE *f = fopen(want_path, "wb");
        assert_non_null(f);
        csv_writer *w = NULL;
        ak_error err;
        assert_int_equal(csv_writer_open_stream(&w, f, want_path, ',', &err), ANONKIT_OK);
        random_writes(w, seed);
        csv_writer_free(w);
        assert_int_equal(fclose(f), 0);
        size_t want_len;
        char *want = tu_read_file(want_path, &want_len);
        assert_non_null(want);

        const char *path = tu_path(tu_group_dir, "background.csv");
        f = fopen(path, "wb");
        assert_non_null(f);
        assert_int_equal(csv_writer_open_stream(&w, f, path, ',', &err), ANONKIT_OK);
        if (seed % 2) assert_int_equal(csv_write_field(w, "early", 5, &err), ANONKIT_OK);
        assert_int_equal(csv_writer_background(w, nbufs[seed % 4], sizes[(seed / 2) % 4], seed % 3 ? 1000 : 0, &err),
                         ANONKIT_OK);
        if (seed % 2) assert_int_equal(csv_write_end(w, &err), ANONKIT_OK);
        random_writes(w, seed);
        csv_writer_free(w);
        assert_int_equal(fclose(f), 0);
        size_t got_len;
        char *got = tu_read_file(path, &got_len);
        const size_t skip = seed % 2 ? 6 : 0; /* "early\n" */
        assert_int_equal(got_len, want_len + skip);
        assert_memory_equal(got, "early\n", skip);
        assert_memory_equal(got + skip, want, want_len);
        free(got);
        free(want);
    }
}

/* In the background mode a failed write is reported with the synchronous
 * writer's message by a later hand-over or by the flush, later calls keep
 * failing, and the writer can be freed at any point without a hang or a
 * leak. */
static void test_write_error_background(void **state)
{
    (void)state;
    FILE *f = fopen("/dev/full", "wb");
    if (!f) skip();
    ak_error err;
    for (int variant = 0; variant < 4; variant++) {
        csv_writer *w = NULL;
        assert_int_equal(csv_writer_open_stream(&w, f, "/dev/full", ',', &err), ANONKIT_OK);
        assert_int_equal(csv_writer_background(w, 2, 4096, 0, &err), ANONKIT_OK);
        put(w, "hello");
        end(w);
        if (variant == 0) { /* freed with a buffer not handed over */
            csv_writer_free(w);
            continue;
        }
        strbuf block = {0};
        int rc = ANONKIT_OK;
        for (int i = 0; i < 100 && rc == ANONKIT_OK; i++) {
            assert_int_equal(strbuf_reserve(&block, 10000), 0);
            memset(block.data, 'z', 10000);
            block.len = 10000;
            rc = csv_write_block(w, &block, &err);
            if (variant == 2 && i == 1) break; /* freed with blocks queued */
        }
        if (variant == 3) {
            assert_int_equal(rc, ANONKIT_E_IO); /* the thread's failure, seen at a later hand-over */
            assert_int_equal(err.code, ANONKIT_E_IO);
            assert_string_equal(err.file, "/dev/full");
            assert_non_null(strstr(err.message, strerror(ENOSPC)));
            ak_err_clear(&err);
            assert_int_equal(csv_write_field(w, "x", 1, &err), ANONKIT_E_IO);
            assert_non_null(strstr(err.message, strerror(ENOSPC)));
            assert_int_equal(csv_write_block(w, &block, &err), ANONKIT_E_IO);
        }
        if (variant != 2) {
            ak_err_clear(&err);
            assert_int_equal(csv_writer_flush(w, &err), ANONKIT_E_IO);
            assert_string_equal(err.file, "/dev/full");
            assert_non_null(strstr(err.message, strerror(ENOSPC)));
        }
        csv_writer_free(w);
        strbuf_free(&block);
        clearerr(f);
    }
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
        cmocka_unit_test(test_writer_quoting),
        cmocka_unit_test(test_writer_quotes_leading_bom),
        cmocka_unit_test(test_writer_big_fields),
        cmocka_unit_test(test_round_trip_property),
        cmocka_unit_test(test_writer_matches_escape),
        cmocka_unit_test(test_writer_raw_blocks),
        cmocka_unit_test(test_write_error),
        cmocka_unit_test(test_writer_background),
        cmocka_unit_test(test_write_error_background),
    };
    return cmocka_run_group_tests(tests, tu_group_setup, tu_group_teardown);
}
