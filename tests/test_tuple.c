/* test_tuple.c — files of fixed-width binary tuples (io/tuple): schemas and
 * rows of every type read back bit for bit for random schemas, block sizes
 * and row counts, by batches and one row at a time, after a rewind too; the
 * documented byte layout; every proper prefix of a file, a file with bytes
 * added or a row too many, and a file whose writer never finished are
 * rejected at open naming the file; a header with any one byte changed is
 * rejected or read without harm; the writer refuses what it cannot describe.
 * (Reader errors on generated files are also in test_generate.c.) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "io/tuple.h"
#include "testutil.h"

static tuple_reader *open_reader(const char *path, size_t block)
{
    tuple_reader *r = NULL;
    ak_error err;
    ak_err_clear(&err);
    if (tuple_reader_open(&r, path, block, &err) != ANONKIT_OK) fail_msg("tuple_reader_open: %s", err.message);
    return r;
}

static void write_bytes(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

static void test_type_sizes(void **state)
{
    (void)state;
    assert_int_equal(tuple_type_size(TUPLE_I32), 4);
    assert_int_equal(tuple_type_size(TUPLE_I64), 8);
    assert_int_equal(tuple_type_size(TUPLE_F64), 8);
    assert_int_equal(tuple_type_size(TUPLE_CODE), 4);
    assert_int_equal(tuple_type_size((tuple_type)0), 0);
    assert_int_equal(tuple_type_size((tuple_type)5), 0);
    assert_string_equal(tuple_type_name(TUPLE_I32), "i32");
    assert_string_equal(tuple_type_name(TUPLE_I64), "i64");
    assert_string_equal(tuple_type_name(TUPLE_F64), "f64");
    assert_string_equal(tuple_type_name(TUPLE_CODE), "code");
    assert_string_equal(tuple_type_name((tuple_type)9), "?");
    /* little-endian at any alignment */
    uint8_t buf[16] = {0};
    tuple_put_i32(buf, 3, -2);
    assert_int_equal(buf[3], 0xfe);
    assert_int_equal(buf[6], 0xff);
    assert_int_equal(tuple_get_i32(buf, 3), -2);
    tuple_put_i64(buf, 5, 0x0102030405060708LL);
    assert_int_equal(buf[5], 0x08);
    assert_int_equal(buf[12], 0x01);
    assert_true(tuple_get_i64(buf, 5) == 0x0102030405060708LL);
}

static void test_tuple_round_trip(void **state)
{
    (void)state;
    tuple_schema s;
    tuple_schema_init(&s);
    ak_error err;
    ak_err_clear(&err);
    static const char *const labels[3] = {"", "two words", "ünïcode"};
    assert_int_equal(tuple_schema_add(&s, "a", TUPLE_I64, NULL, 0, &err), ANONKIT_OK);
    assert_int_equal(tuple_schema_add(&s, "b", TUPLE_CODE, labels, 3, &err), ANONKIT_OK);
    assert_int_equal(tuple_schema_add(&s, "c", TUPLE_F64, NULL, 0, &err), ANONKIT_OK);
    assert_int_equal(tuple_schema_add(&s, "d", TUPLE_I32, NULL, 0, &err), ANONKIT_OK);
    assert_int_equal(s.row_width, 24);
    assert_int_equal(tuple_schema_find(&s, "c"), 2);
    assert_int_equal(tuple_schema_find(&s, "zz"), -1);

    const double specials[] = {0.0, -0.0, 1.5, -1e300, INFINITY, -INFINITY, 5e-324};
    const size_t nspecial = sizeof specials / sizeof specials[0];
    const uint64_t N = 5000;
    const char *path = tu_path(tu_group_dir, "rt_types.bin");
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    tuple_writer *w = NULL;
    assert_int_equal(tuple_writer_open(&w, f, path, &s, 37, &err), ANONKIT_OK);
    tu_rng g = {42};
    uint8_t row[24];
    for (uint64_t i = 0; i < N; i++) {
        tuple_put_i64(row, 0, (int64_t)tu_next(&g));
        tuple_put_code(row, 8, (uint32_t)(i % 3));
        tuple_put_f64(row, 12, i < nspecial ? specials[i] : (double)(int64_t)tu_next(&g) / 7.0);
        tuple_put_i32(row, 20, (int32_t)(uint32_t)tu_next(&g));
        assert_int_equal(tuple_write(w, row, &err), ANONKIT_OK);
    }
    assert_int_equal(tuple_writer_close(w, &err), ANONKIT_OK);
    assert_true(tuple_writer_rows(w) == N);
    const uint64_t bytes = tuple_writer_bytes(w);
    assert_true(tuple_writer_blocks(w) == (bytes + 36) / 37);
    tuple_writer_free(w);
    assert_int_equal(fclose(f), 0);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_true((uint64_t)st.st_size == bytes);
    /* header: 24 fixed + a:i64 (4+4+1) + b:code (4+4+1 + 4 + 4+0 + 4+9 + 4+9) + c (9) + d (9) */
    const uint64_t header = 24 + 9 + (9 + 4 + 4 + 13 + 4 + strlen(labels[2])) + 9 + 9;
    assert_true(bytes == header + N * 24 + 16);

    /* The layout on disk is the documented one: check the first row's bytes. */
    char *raw = tu_read_file(path, NULL);
    assert_memory_equal(raw, "AKTUPLE1", 8);
    const uint8_t *u = (const uint8_t *)raw;
    assert_int_equal(u[8] | u[9] << 8, 1);                               /* version */
    assert_true((uint64_t)(u[12] | u[13] << 8 | u[14] << 16) == header); /* header size */
    assert_int_equal(u[16], 4);                                          /* columns */
    assert_int_equal(u[20], 24);                                         /* row width */
    g.s = 42;
    uint64_t first = tu_next(&g);
    for (int i = 0; i < 8; i++) assert_int_equal(u[header + i], (uint8_t)(first >> (8 * i)));
    assert_memory_equal(raw + bytes - 16, "AKTUPEND", 8);
    free(raw);

    tuple_reader *r = open_reader(path, 50);
    const tuple_schema *rs = tuple_reader_schema(r);
    assert_int_equal(rs->ncolumns, 4);
    assert_int_equal(rs->columns[1].nlabels, 3);
    for (int i = 0; i < 3; i++) assert_string_equal(rs->columns[1].labels[i], labels[i]);
    g.s = 42;
    const uint8_t *got;
    uint64_t i = 0;
    int rc;
    while ((rc = tuple_read(r, &got, &err)) == 1) {
        assert_true(tuple_get_i64(got, 0) == (int64_t)tu_next(&g));
        assert_int_equal(tuple_get_code(got, 8), i % 3);
        double want = i < nspecial ? specials[i] : (double)(int64_t)tu_next(&g) / 7.0;
        double have = tuple_get_f64(got, 12);
        assert_memory_equal(&have, &want, sizeof have); /* bit for bit: -0.0 stays -0.0 */
        assert_int_equal(tuple_get_i32(got, 20), (int32_t)(uint32_t)tu_next(&g));
        i++;
    }
    assert_int_equal(rc, 0);
    assert_true(i == N);
    tuple_reader_free(r);
    tuple_schema_clear(&s);
}

/* The writer rejects what it cannot describe. */
static void test_writer_errors(void **state)
{
    (void)state;
    tuple_schema s;
    tuple_schema_init(&s);
    ak_error err;
    ak_err_clear(&err);
    tuple_writer *w = NULL;
    FILE *f = fopen(tu_path(tu_group_dir, "w.bin"), "wb");
    assert_non_null(f);
    assert_true(tuple_writer_open(&w, f, "w.bin", &s, 0, &err) < 0); /* no columns */
    assert_null(w);
    assert_true(tuple_schema_add(&s, "", TUPLE_I32, NULL, 0, &err) < 0);
    assert_true(tuple_schema_add(&s, "x", (tuple_type)7, NULL, 0, &err) < 0);
    static const char *const one[1] = {"A"};
    assert_true(tuple_schema_add(&s, "x", TUPLE_I32, one, 1, &err) < 0);
    assert_int_equal(s.ncolumns, 0);
    fclose(f);
    tuple_schema_clear(&s);
}

/* ------------------------------------------------------ random schemas ---- */

typedef struct model_file {
    tuple_schema schema;
    uint8_t *rows;
    size_t nrows;
} model_file;

/* A random schema of 1..12 columns and nrows random rows; the column offsets
 * are checked to be the running sum of the sizes. */
static void make_model(tu_rng *g, model_file *m, size_t nrows)
{
    ak_error err;
    ak_err_clear(&err);
    tuple_schema_init(&m->schema);
    const uint32_t ncol = 1 + (uint32_t)tu_below(g, 12);
    uint32_t width = 0;
    for (uint32_t c = 0; c < ncol; c++) {
        const tuple_type type = (tuple_type)(1 + tu_below(g, 4));
        char name[32];
        snprintf(name, sizeof name, "col %u%s", c, tu_below(g, 2) ? ", quoted \"x\"" : "");
        char text[8][16];
        const char *labels[8];
        const uint32_t nl = type == TUPLE_CODE ? 1 + (uint32_t)tu_below(g, 8) : 0;
        for (uint32_t i = 0; i < nl; i++) {
            snprintf(text[i], sizeof text[i], i == 0 && tu_below(g, 2) ? "" : "L%u-%u", c, i);
            labels[i] = text[i];
        }
        assert_int_equal(tuple_schema_add(&m->schema, name, type, nl ? labels : NULL, nl, &err), ANONKIT_OK);
        assert_int_equal(m->schema.columns[c].offset, width);
        width += tuple_type_size(type);
    }
    assert_int_equal(m->schema.row_width, width);
    m->nrows = nrows;
    m->rows = malloc(nrows * width + 1);
    assert_non_null(m->rows);
    for (size_t r = 0; r < nrows; r++)
        for (uint32_t c = 0; c < ncol; c++) {
            const tuple_column *col = &m->schema.columns[c];
            uint8_t *row = m->rows + r * width;
            const uint64_t x = tu_next(g);
            switch (col->type) {
            case TUPLE_I32: tuple_put_i32(row, col->offset, (int32_t)(uint32_t)x); break;
            case TUPLE_I64: tuple_put_i64(row, col->offset, (int64_t)x); break;
            case TUPLE_F64: tuple_put_f64(row, col->offset, (double)(int64_t)x / 1e6); break;
            default: tuple_put_code(row, col->offset, (uint32_t)(x % col->nlabels)); break;
            }
        }
}

static void free_model(model_file *m)
{
    tuple_schema_clear(&m->schema);
    free(m->rows);
}

/* Writes the model to path through a writer with the given block; returns the file's size. */
static uint64_t write_model(const model_file *m, const char *path, size_t block)
{
    ak_error err;
    ak_err_clear(&err);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    tuple_writer *w = NULL;
    assert_int_equal(tuple_writer_open(&w, f, path, &m->schema, block, &err), ANONKIT_OK);
    for (size_t r = 0; r < m->nrows; r++)
        assert_int_equal(tuple_write(w, m->rows + r * m->schema.row_width, &err), ANONKIT_OK);
    assert_int_equal(tuple_writer_close(w, &err), ANONKIT_OK);
    assert_true(tuple_writer_rows(w) == m->nrows);
    const uint64_t bytes = tuple_writer_bytes(w);
    const size_t eff = block ? block : TUPLE_DEFAULT_BLOCK;
    assert_true(tuple_writer_blocks(w) == (bytes + eff - 1) / eff);
    const tuple_schema *ws = tuple_writer_schema(w);
    assert_ptr_not_equal(ws, &m->schema); /* a copy */
    assert_int_equal(ws->ncolumns, m->schema.ncolumns);
    tuple_writer_free(w);
    assert_int_equal(fclose(f), 0);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_true((uint64_t)st.st_size == bytes);
    /* rows and the 16-byte end marker after the header */
    assert_true(bytes > m->nrows * m->schema.row_width + 16);
    return bytes;
}

static void expect_schema(const tuple_schema *got, const tuple_schema *want)
{
    assert_int_equal(got->ncolumns, want->ncolumns);
    assert_int_equal(got->row_width, want->row_width);
    for (uint32_t c = 0; c < want->ncolumns; c++) {
        const tuple_column *a = &got->columns[c], *b = &want->columns[c];
        assert_string_equal(a->name, b->name);
        assert_int_equal(a->type, b->type);
        assert_int_equal(a->offset, b->offset);
        assert_int_equal(a->nlabels, b->nlabels);
        for (uint32_t i = 0; i < b->nlabels; i++) assert_string_equal(a->labels[i], b->labels[i]);
        assert_int_equal(tuple_schema_find(got, b->name), (long)c);
    }
}

static void test_random_round_trips(void **state)
{
    (void)state;
    ak_error err;
    ak_err_clear(&err);
    tu_rng g = {2024};
    const size_t wblocks[] = {0, 1, 5, 64, 4096};
    const size_t rblocks[] = {0, 3, 100, 4096, 65536}; /* 3: less than any row */
    const char *path = tu_path(tu_group_dir, "random.bin");
    for (int round = 0; round < 30; round++) {
        model_file m;
        const size_t nrows = round < 3 ? (size_t)round : tu_below(&g, 600);
        make_model(&g, &m, nrows);
        const size_t wb = wblocks[round % 5], rb = rblocks[(round / 5) % 5];
        write_model(&m, path, wb);
        const size_t width = m.schema.row_width;
        tuple_reader *r = open_reader(path, rb);
        expect_schema(tuple_reader_schema(r), &m.schema);
        assert_true(tuple_reader_rows(r) == nrows);
        for (int pass = 0; pass < 2; pass++) {
            size_t seen = 0;
            int rc;
            if (pass == 0) {
                const uint8_t *rows;
                size_t n;
                while ((rc = tuple_read_rows(r, &rows, &n, &err)) == 1) {
                    assert_true(n >= 1 && seen + n <= nrows);
                    assert_memory_equal(rows, m.rows + seen * width, n * width);
                    seen += n;
                }
            } else {
                assert_int_equal(tuple_reader_rewind(r, &err), ANONKIT_OK);
                const uint8_t *row;
                while ((rc = tuple_read(r, &row, &err)) == 1) {
                    assert_true(seen < nrows);
                    assert_memory_equal(row, m.rows + seen * width, width);
                    seen++;
                }
            }
            assert_int_equal(rc, 0);
            assert_int_equal(seen, nrows);
        }
        tuple_reader_free(r);
        free_model(&m);
    }
}

/* Opening must fail with ANONKIT_E_INPUT naming the file. */
static void expect_rejected(const char *path, const char *what)
{
    tuple_reader *r = (tuple_reader *)&r;
    ak_error err;
    ak_err_clear(&err);
    const int rc = tuple_reader_open(&r, path, 0, &err);
    if (rc != ANONKIT_E_INPUT) fail_msg("%s: status %d, expected ANONKIT_E_INPUT (%s)", what, rc, err.message);
    assert_null(r);
    assert_string_equal(err.file, path);
}

/* Every proper prefix of a file is rejected at open, before any row is
 * handed out; so are the file with one byte added, with one row too many
 * before the end marker, and a file whose writer was never closed. */
static void test_every_truncation(void **state)
{
    (void)state;
    tu_rng g = {77};
    model_file m;
    make_model(&g, &m, 5);
    const char *good = tu_path(tu_group_dir, "good.bin");
    const uint64_t bytes = write_model(&m, good, 0);
    size_t len;
    char *data = tu_read_file(good, &len);
    assert_true(len == bytes);
    const char *p = tu_path(tu_group_dir, "cut.bin");
    char what[64];
    for (size_t cut = 0; cut < len; cut++) {
        write_bytes(p, data, cut);
        snprintf(what, sizeof what, "cut at %zu of %zu", cut, len);
        expect_rejected(p, what);
    }
    /* one byte more */
    char *more = malloc(len + m.schema.row_width);
    assert_non_null(more);
    memcpy(more, data, len);
    more[len] = 0;
    write_bytes(p, more, len + 1);
    expect_rejected(p, "one byte added");
    /* one row more before the end marker (a copy of the last row) */
    const size_t w = m.schema.row_width, end = len - 16;
    memcpy(more, data, end);
    memcpy(more + end, data + end - w, w);
    memcpy(more + end + w, data + end, 16);
    write_bytes(p, more, len + w);
    expect_rejected(p, "one row too many");
    /* the whole file opens */
    tuple_reader *r = open_reader(good, 0);
    assert_true(tuple_reader_rows(r) == 5);
    tuple_reader_free(r);

    /* a writer never closed: its rows are out, the end marker is not */
    ak_error err;
    ak_err_clear(&err);
    FILE *f = fopen(p, "wb");
    assert_non_null(f);
    tuple_writer *tw = NULL;
    assert_int_equal(tuple_writer_open(&tw, f, p, &m.schema, 1, &err), ANONKIT_OK);
    for (size_t i = 0; i < m.nrows; i++) assert_int_equal(tuple_write(tw, m.rows + i * w, &err), ANONKIT_OK);
    assert_int_equal(fflush(f), 0);
    expect_rejected(p, "writer not closed");
    tuple_writer_free(tw);
    assert_int_equal(fclose(f), 0);
    free(more);
    free(data);
    free_model(&m);
}

/* A header with any one byte replaced (by its complement, 0, 0xff or a
 * neighbour) is rejected with ANONKIT_E_INPUT or read without harm: whatever
 * opens reads its rows to the end or stops with an error. (Run under the
 * sanitizers, this is where an overread would show.) */
static void test_header_bytes_changed(void **state)
{
    (void)state;
    tu_rng g = {31};
    model_file m;
    make_model(&g, &m, 3);
    const char *good = tu_path(tu_group_dir, "flip_good.bin");
    write_model(&m, good, 0);
    size_t len;
    char *data = tu_read_file(good, &len);
    const size_t header = len - 3 * m.schema.row_width - 16;
    const char *p = tu_path(tu_group_dir, "flip.bin");
    int opened = 0, rejected = 0;
    for (size_t at = 0; at < len; at++) {
        if (at >= header && at < len - 16) continue; /* row data: any bytes are a valid row */
        const uint8_t orig = (uint8_t)data[at], repl[4] = {(uint8_t)~orig, 0, 0xff, (uint8_t)(orig + 1)};
        for (int k = 0; k < 4; k++) {
            if (repl[k] == orig) continue;
            data[at] = (char)repl[k];
            write_bytes(p, data, len);
            tuple_reader *r = NULL;
            ak_error err;
            ak_err_clear(&err);
            const int rc = tuple_reader_open(&r, p, 0, &err);
            if (rc == ANONKIT_OK) {
                opened++;
                const uint8_t *rows;
                size_t n, seen = 0;
                int got;
                while ((got = tuple_read_rows(r, &rows, &n, &err)) == 1) seen += n;
                assert_true(got == 0 || got == ANONKIT_E_INPUT);
                assert_true(seen <= tuple_reader_rows(r));
                tuple_reader_free(r);
            } else {
                if (rc != ANONKIT_E_INPUT) fail_msg("byte %zu := %u: status %d (%s)", at, repl[k], rc, err.message);
                assert_null(r);
                rejected++;
            }
        }
        data[at] = (char)orig;
    }
    /* the magic, version, sizes and end marker alone make many rejections;
     * a changed label or name still opens */
    assert_true(rejected > 50);
    assert_true(opened > 0);
    free(data);
    free_model(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_type_sizes),         cmocka_unit_test(test_tuple_round_trip),
        cmocka_unit_test(test_writer_errors),      cmocka_unit_test(test_random_round_trips),
        cmocka_unit_test(test_every_truncation),   cmocka_unit_test(test_header_bytes_changed),
    };
    return cmocka_run_group_tests(tests, tu_group_setup, tu_group_teardown);
}
