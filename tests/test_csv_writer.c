/* test_csv_writer.c — unit and property tests of the CSV writer (src/io/csv_writer.c):
 * quoting, a leading byte-order mark, large fields, the writer against
 * csv_escape, raw blocks, write errors and the background writer; and the
 * round trip of random records through the writer and the reader
 * (test_csv.c tests the reader alone).
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

/* The reader's first block size (CSV_BLOCK_SIZE in csv.c): the round trip
 * makes files longer than two blocks. */
#define READER_BLOCK ((size_t)1 << 20)

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
        {
            csv_record end;
            ak_error end_err;
            ak_err_clear(&end_err);
            assert_int_equal(csv_read(r, &end, &end_err), 0); /* nothing after the last record */
        }
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
