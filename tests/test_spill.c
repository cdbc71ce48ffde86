/* test_spill.c — scratch files of the out-of-core algorithms (io/spill): what
 * is written in pieces of any size reads back byte for byte, record by record
 * or a block of records at a time, for every block size; two files read as
 * one stream; blocks are counted as the I/O model says; a file cut short or
 * ending inside a record is an error, and so are unwritable files and
 * folders that cannot hold spill files. (Privacy of the folder and files is checked
 * in test_rothko.) */
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

#include "io/spill.h"
#include "testutil.h"

/* The byte at position i of the model stream of seed s. */
static uint8_t model_byte(uint64_t s, uint64_t i)
{
    tu_rng g = {s * 0x100000001ULL + i};
    return (uint8_t)tu_next(&g);
}

static void fill_model(uint8_t *buf, uint64_t s, uint64_t at, size_t n)
{
    for (size_t i = 0; i < n; i++) buf[i] = model_byte(s, at + i);
}

/* Writes `total` model bytes of seed s to f through a writer of the given
 * block, in pieces of random length (both spill_put and spill_write). */
static void write_model(spill_file *f, const spill_dir *dir, size_t block, uint64_t s, size_t total,
                        spill_stats *io)
{
    ak_error err;
    ak_err_clear(&err);
    spill_writer w;
    assert_int_equal(spill_writer_init(&w, f, dir, block, io, &err), ANONKIT_OK);
    tu_rng g = {s};
    uint8_t piece[3000];
    size_t at = 0;
    while (at < total) {
        size_t n = (size_t)tu_below(&g, tu_below(&g, 4) ? 40 : sizeof piece) + 1;
        if (n > total - at) n = total - at;
        fill_model(piece, s, at, n);
        if (tu_below(&g, 2)) assert_int_equal(spill_put(&w, piece, n, &err), ANONKIT_OK);
        else assert_int_equal(spill_write(&w, piece, n, &err), ANONKIT_OK);
        at += n;
    }
    assert_int_equal(spill_writer_flush(&w, &err), ANONKIT_OK);
    assert_int_equal(spill_writer_flush(&w, &err), ANONKIT_OK); /* nothing left: no empty block */
    spill_writer_free(&w);
    spill_writer_free(&w);
}

/* For several block sizes and stream lengths: whole blocks written as they
 * fill (blocks = ceil(bytes / block)), the file's size is what was written,
 * and reads of records of a fixed width give back every byte in order; a
 * record straddling two blocks is gathered whole. */
static void test_round_trip(void **state)
{
    (void)state;
    ak_error err;
    ak_err_clear(&err);
    spill_dir dir;
    assert_int_equal(spill_dir_create(&dir, tu_group_dir, &err), ANONKIT_OK);
    const size_t blocks[] = {1, 7, 64, 512, 4096, 0};
    const size_t totals[] = {0, 1, 63, 64, 65, 5000, 100003};
    const size_t widths[] = {1, 3, 8, 13, 64, 200, 5000};
    for (size_t bi = 0; bi < sizeof blocks / sizeof blocks[0]; bi++)
        for (size_t ti = 0; ti < sizeof totals / sizeof totals[0]; ti++) {
            const size_t block = blocks[bi], total = totals[ti];
            if (block == 1 && total > 5000) continue; /* a write per byte: slow enough already */
            const size_t eff = block ? block : SPILL_DEFAULT_BLOCK;
            const uint64_t seed = bi * 100 + ti;
            spill_file f;
            assert_int_equal(spill_file_open(&f, &dir, &err), ANONKIT_OK);
            assert_true(f.size == 0);
            spill_stats io = {0};
            write_model(&f, &dir, block, seed, total, &io);
            assert_true(f.size == total);
            assert_true(io.bytes_written == total);
            assert_true(io.blocks_written == (total + eff - 1) / eff);
            struct stat st;
            assert_int_equal(fstat(f.fd, &st), 0);
            assert_true((uint64_t)st.st_size == total);

            for (size_t wi = 0; wi < sizeof widths / sizeof widths[0]; wi++) {
                const size_t width = widths[wi];
                const size_t whole = total / width * width; /* the part made of whole records */
                if (whole != total) continue;               /* (ragged ends: test_ends_inside_a_record) */
                spill_stats rio = {0};
                spill_reader r;
                assert_int_equal(spill_reader_init(&r, &f, block, &rio, &err), ANONKIT_OK);
                uint8_t *want = malloc(width);
                assert_non_null(want);
                size_t at = 0;
                const uint8_t *p;
                int rc;
                while ((rc = spill_read(&r, width, &p, &err)) == 1) {
                    assert_true(at + width <= total);
                    fill_model(want, seed, at, width);
                    assert_memory_equal(p, want, width);
                    volatile uint8_t slack = 0; /* readable, whatever it holds */
                    for (size_t i = 0; i < SPILL_READ_SLACK; i++) slack ^= p[width + i];
                    (void)slack;
                    at += width;
                }
                assert_int_equal(rc, 0);
                assert_true(at == total);
                assert_int_equal(spill_read(&r, width, &p, &err), 0); /* stays at the end */
                /* reads of the smaller of a block and the file, each counted */
                const size_t cap = total < eff ? total : eff;
                assert_true(rio.bytes_read == total);
                assert_true(rio.blocks_read == (cap ? (total + cap - 1) / cap : 0));
                spill_reader_free(&r);
                free(want);
            }
            spill_file_close(&f);
            assert_int_equal(f.fd, -1);
            spill_file_close(&f); /* safe twice */
        }
    spill_dir_remove(&dir);
}

/* spill_read_records hands out 1..max whole records at a time, in order, a
 * record straddling two blocks alone; together they are the file. */
static void test_read_records(void **state)
{
    (void)state;
    ak_error err;
    ak_err_clear(&err);
    spill_dir dir;
    assert_int_equal(spill_dir_create(&dir, tu_group_dir, &err), ANONKIT_OK);
    const size_t widths[] = {1, 4, 12, 100, 1000};
    const size_t maxes[] = {1, 3, 1000, SIZE_MAX};
    for (size_t wi = 0; wi < sizeof widths / sizeof widths[0]; wi++) {
        const size_t width = widths[wi], n = 20011 / width + 5, total = n * width;
        spill_file f;
        assert_int_equal(spill_file_open(&f, &dir, &err), ANONKIT_OK);
        spill_stats io = {0};
        write_model(&f, &dir, 777, wi, total, &io);
        uint8_t *want = malloc(total);
        assert_non_null(want);
        fill_model(want, wi, 0, total);
        for (size_t mi = 0; mi < sizeof maxes / sizeof maxes[0]; mi++) {
            const size_t block = 333 + mi * 500;
            spill_reader r;
            assert_int_equal(spill_reader_init(&r, &f, block, &io, &err), ANONKIT_OK);
            size_t seen = 0, calls = 0, count;
            const uint8_t *p;
            int rc;
            while ((rc = spill_read_records(&r, width, maxes[mi], &p, &count, &err)) == 1) {
                assert_true(count >= 1 && count <= maxes[mi]);
                assert_true(count * width <= block || count == 1);
                assert_true(seen + count <= n);
                assert_memory_equal(p, want + seen * width, count * width);
                seen += count;
                calls++;
            }
            assert_int_equal(rc, 0);
            assert_int_equal(count, 0);
            assert_int_equal(seen, n);
            /* whole blocks' worth at a time: no more calls than one per record
             * in a block plus one per straddling record and block */
            if (maxes[mi] >= block) assert_true(calls <= 2 * ((total + block - 1) / block) + 1);
            spill_reader_free(&r);
        }
        free(want);
        spill_file_close(&f);
    }
    spill_dir_remove(&dir);
}

/* A reader told to go on with a second file reads both as one stream, even
 * when the record at the seam would straddle it; an empty first or second
 * file changes nothing. */
static void test_then(void **state)
{
    (void)state;
    ak_error err;
    ak_err_clear(&err);
    spill_dir dir;
    assert_int_equal(spill_dir_create(&dir, tu_group_dir, &err), ANONKIT_OK);
    const size_t width = 6;
    const size_t sizes[][2] = {{0, 0}, {0, 600}, {600, 0}, {6, 6}, {6000, 60}, {60, 6000}, {3000, 3000}};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        spill_file a, b;
        assert_int_equal(spill_file_open(&a, &dir, &err), ANONKIT_OK);
        assert_int_equal(spill_file_open(&b, &dir, &err), ANONKIT_OK);
        spill_stats io = {0};
        write_model(&a, &dir, 100, 1000 + i, sizes[i][0], &io);
        write_model(&b, &dir, 100, 2000 + i, sizes[i][1], &io);
        for (size_t block = 5; block <= 5000; block *= 10) {
            spill_reader r;
            assert_int_equal(spill_reader_init(&r, &a, block, &io, &err), ANONKIT_OK);
            spill_reader_then(&r, &b);
            size_t at = 0;
            const uint8_t *p;
            int rc;
            uint8_t want[6];
            while ((rc = spill_read(&r, width, &p, &err)) == 1) {
                if (at < sizes[i][0]) fill_model(want, 1000 + i, at, width);
                else fill_model(want, 2000 + i, at - sizes[i][0], width);
                assert_memory_equal(p, want, width);
                at += width;
            }
            assert_int_equal(rc, 0);
            assert_int_equal(at, sizes[i][0] + sizes[i][1]);
            spill_reader_free(&r);
        }
        spill_file_close(&a);
        spill_file_close(&b);
    }
    spill_dir_remove(&dir);
}

/* A file that ends inside a record: the whole records read, then an
 * internal error; the same at every block size. */
static void test_ends_inside_a_record(void **state)
{
    (void)state;
    ak_error err;
    ak_err_clear(&err);
    spill_dir dir;
    assert_int_equal(spill_dir_create(&dir, tu_group_dir, &err), ANONKIT_OK);
    spill_file f;
    assert_int_equal(spill_file_open(&f, &dir, &err), ANONKIT_OK);
    spill_stats io = {0};
    write_model(&f, &dir, 64, 3, 1002, &io); /* 250 records of 4, then 2 bytes */
    for (size_t block = 1; block <= 4096; block *= 4) {
        for (int batch = 0; batch < 2; batch++) {
            spill_reader r;
            assert_int_equal(spill_reader_init(&r, &f, block, &io, &err), ANONKIT_OK);
            const uint8_t *p;
            size_t records = 0, count = 1;
            int rc;
            while ((rc = batch ? spill_read_records(&r, 4, 16, &p, &count, &err) : spill_read(&r, 4, &p, &err)) == 1)
                records += count;
            assert_int_equal(records, 250);
            assert_int_equal(rc, ANONKIT_E_INTERNAL);
            assert_non_null(strstr(err.message, "inside a record"));
            ak_err_clear(&err);
            spill_reader_free(&r);
        }
    }
    spill_file_close(&f);
    spill_dir_remove(&dir);
}

/* A file shorter than its recorded size (cut behind the writer's back): an
 * internal error, not a short or stale read. */
static void test_shorter_than_written(void **state)
{
    (void)state;
    ak_error err;
    ak_err_clear(&err);
    spill_dir dir;
    assert_int_equal(spill_dir_create(&dir, tu_group_dir, &err), ANONKIT_OK);
    spill_file f;
    assert_int_equal(spill_file_open(&f, &dir, &err), ANONKIT_OK);
    spill_stats io = {0};
    write_model(&f, &dir, 256, 4, 4000, &io);
    assert_int_equal(ftruncate(f.fd, 1000), 0);
    spill_reader r;
    assert_int_equal(spill_reader_init(&r, &f, 256, &io, &err), ANONKIT_OK);
    const uint8_t *p;
    size_t records = 0;
    int rc;
    while ((rc = spill_read(&r, 8, &p, &err)) == 1) records++;
    assert_int_equal(rc, ANONKIT_E_INTERNAL);
    assert_non_null(strstr(err.message, "shorter than written"));
    assert_true(records <= 1000 / 8);
    spill_reader_free(&r);
    spill_file_close(&f);
    spill_dir_remove(&dir);
}

/* Failures to write name the spill folder; folders that cannot hold spill
 * files are I/O errors naming them; removal is safe on a zeroed or removed one. */
static void test_errors(void **state)
{
    (void)state;
    ak_error err;
    ak_err_clear(&err);
    spill_dir dir;
    assert_int_equal(spill_dir_create(&dir, tu_group_dir, &err), ANONKIT_OK);
    assert_string_equal(dir.folder, tu_group_dir);
    /* a file open for reading only stands in for a disk that refuses writes */
    spill_file f = {.fd = open("/dev/null", O_RDONLY), .size = 0};
    assert_true(f.fd >= 0);
    spill_stats io = {0};
    spill_writer w;
    assert_int_equal(spill_writer_init(&w, &f, &dir, 16, &io, &err), ANONKIT_OK);
    assert_int_equal(spill_write(&w, "0123456789", 10, &err), ANONKIT_OK); /* buffered */
    assert_int_equal(spill_write(&w, "0123456789", 10, &err), ANONKIT_E_IO);
    assert_string_equal(err.file, dir.folder);
    assert_non_null(strstr(err.message, "cannot write a spill file"));
    spill_writer_free(&w);
    spill_file_close(&f);

    ak_err_clear(&err);
    spill_dir none;
    assert_int_equal(spill_dir_create(&none, tu_path(tu_group_dir, "no/such/folder"), &err), ANONKIT_E_IO);
    assert_non_null(strstr(err.message, "cannot create spill files"));
    char *longp = malloc(5000);
    assert_non_null(longp);
    memset(longp, 'x', 4999);
    longp[4999] = '\0';
    ak_err_clear(&err);
    assert_int_equal(spill_dir_create(&none, longp, &err), ANONKIT_E_IO);
    assert_non_null(strstr(err.message, "too long"));
    free(longp);

    /* the default folder is $TMPDIR (else /tmp), used as it is: nothing is
     * made there, so nothing is left to remove */
    const char *tmp = getenv("TMPDIR");
    spill_dir dflt;
    assert_int_equal(spill_dir_create(&dflt, NULL, &err), ANONKIT_OK);
    assert_string_equal(dflt.folder, tmp && *tmp ? tmp : "/tmp");
    spill_dir_remove(&dflt);
    assert_string_equal(dflt.folder, "");

    spill_dir_remove(&dir);
    spill_dir_remove(&dir); /* twice */
    spill_dir zero;
    memset(&zero, 0, sizeof zero);
    spill_dir_remove(&zero);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),          cmocka_unit_test(test_read_records),
        cmocka_unit_test(test_then),                cmocka_unit_test(test_ends_inside_a_record),
        cmocka_unit_test(test_shorter_than_written), cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, tu_group_setup, tu_group_teardown);
}
