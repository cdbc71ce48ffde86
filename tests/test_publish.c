/* test_publish.c — the common writer (docs/ARCHITECTURE.md §3 step 3): copied columns
 * come out exactly as the writer's quoting rule makes them whatever the input
 * looked like (runs of adjacent copied columns are taken as they are only
 * when that is the same text), identifiers are dropped, and the output is
 * the same byte for byte for one thread or two, for a file read in two
 * pieces or whole, shuffled or in input order. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/partition.h"
#include "core/table.h"
#include "io/csv.h"
#include "io/outfile.h"
#include "publish/publish.h"
#include "testutil.h"

/* Columns of the generated input: QI q0, copied c1 c2 c3 (adjacent),
 * identifier id, copied c4, QI q1, copied c5 (last). */
#define NCOLS 8
static const char *const col_names[NCOLS] = {"q0", "c1", "c2", "c3", "id", "c4", "q1", "c5"};
static const int col_qi[NCOLS] = {1, 0, 0, 0, 0, 0, 1, 0};

/* One random field value: usually plain letters and digits, sometimes with a
 * space at either end, a quote, the delimiter, a CR or an LF somewhere, or
 * empty. */
static size_t gen_value(tu_rng *rng, char *buf)
{
    size_t len = (size_t)tu_below(rng, 14);
    for (size_t i = 0; i < len; i++) buf[i] = (char)("abcxyz0123456789"[tu_below(rng, 16)]);
    if (len && tu_below(rng, 8) == 0) {
        static const char special[] = {' ', '"', ',', '\r', '\n'};
        const char c = special[tu_below(rng, sizeof special)];
        const uint64_t where = tu_below(rng, 3);
        buf[where == 0 ? 0 : where == 1 ? len - 1 : (size_t)tu_below(rng, len)] = c;
    }
    return len;
}

/* Appends the CSV form of a value to f as an input writer might: quoted when
 * needed, sometimes quoted although not needed, and sometimes not quoted
 * although our writer would (a quote or CR inside an unquoted field, or a
 * space at its ends, are data to the reader). */
static void put_input_field(FILE *f, tu_rng *rng, const char *v, size_t len)
{
    int raw_ok = len == 0 || (v[0] != '"' && v[len - 1] != '\r');
    for (size_t i = 0; i < len; i++) raw_ok &= v[i] != ',' && v[i] != '\n';
    const int quote = csv_needs_quotes(v, len, ',') ? !raw_ok || tu_below(rng, 2) : tu_below(rng, 10) == 0;
    if (quote) {
        fputc('"', f);
        for (size_t i = 0; i < len; i++) {
            if (v[i] == '"') fputc('"', f);
            fputc(v[i], f);
        }
        fputc('"', f);
    } else {
        fwrite(v, 1, len, f);
    }
}

/* Writes `rows` rows to path (QIs always "5") and the expected published
 * lines, in input order, to *expected (one string per row, malloc'd).
 * With plain_only every copied value is plain letters, so that no field is
 * quoted and the file can be read in two pieces. With special_at < rows, row
 * special_at gets a c3 value with an LF, quoted (a line end inside a field). */
static void write_input(const char *path, size_t rows, int plain_only, size_t special_at, char ***expected,
                        tu_rng *rng)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    for (int c = 0; c < NCOLS; c++) fprintf(f, "%s%s", c ? "," : "", col_names[c]);
    fputc('\n', f);
    *expected = calloc(rows, sizeof **expected);
    assert_non_null(*expected);
    char value[64], esc[200];
    for (size_t r = 0; r < rows; r++) {
        char line[1024];
        size_t at = 0;
        for (int c = 0; c < NCOLS; c++) {
            size_t len;
            if (col_qi[c]) {
                len = 1;
                value[0] = '5';
            } else if (plain_only) {
                len = 1 + (size_t)tu_below(rng, 9);
                for (size_t i = 0; i < len; i++) value[i] = (char)('a' + tu_below(rng, 26));
            } else {
                len = gen_value(rng, value);
            }
            if (r == special_at && c == 3) {
                memcpy(value, "x\ny", 3);
                len = 3;
            }
            if (c) fputc(',', f);
            if (plain_only && r != special_at) fwrite(value, 1, len, f);
            else put_input_field(f, rng, value, len);
            if (c == 4) continue; /* the identifier is not published */
            if (at) line[at++] = ',';
            const size_t n = csv_escape(esc, value, len, ',');
            memcpy(line + at, esc, n);
            at += n;
        }
        fputs(tu_below(rng, 4) == 0 ? "\r\n" : "\n", f);
        line[at++] = '\n';
        line[at] = '\0';
        (*expected)[r] = strdup(line);
        assert_non_null((*expected)[r]);
    }
    fclose(f);
}

/* Loads path (QIs q0 and q1, identifier id) and publishes it as one class;
 * with ahead, the copied columns are read ahead (publish_copied_start), and
 * ahead = 2 also starts and drops a second reading (cancelled unused). */
static char *publish_with(const char *path, unsigned threads, int keep_order, int ahead, size_t *len)
{
    const char *qi[] = {"q0", "q1"};
    const char *ids[] = {"id"};
    table_spec spec = {0};
    spec.path = path;
    spec.delimiter = ',';
    spec.nqi = 2;
    spec.qi_names = qi;
    spec.nidentifiers = 1;
    spec.identifier_names = ids;
    spec.threads = threads;
    table *t = NULL;
    ak_error err;
    if (table_load(&t, &spec, &err) != ANONKIT_OK) fail_msg("load: %s (line %ld)", err.message, err.line);
    partition p;
    assert_int_equal(partition_init(&p, t->nrows, t->nqi, &err), ANONKIT_OK);
    const uint32_t lo[2] = {0, 0}, hi[2] = {0, 0};
    uint32_t id;
    assert_int_equal(partition_add_class(&p, lo, hi, t->nrows, &id, &err), ANONKIT_OK);
    for (size_t r = 0; r < t->nrows; r++) p.class_of[r] = id;
    const char *out_path = tu_path(tu_group_dir, "out.csv");
    FILE *out = fopen(out_path, "wb");
    assert_non_null(out);
    publish_copied *copied = NULL, *dropped = NULL;
    if (ahead) assert_int_equal(publish_copied_start(&copied, t, &err), ANONKIT_OK);
    if (ahead == 2) {
        assert_int_equal(publish_copied_start(&dropped, t, &err), ANONKIT_OK);
        publish_copied_free(dropped);
    }
    publish_opts po = {.keep_order = keep_order, .seed = 7, .threads = threads, .copied = copied};
    publish_stats ps;
    if (publish_write(t, &p, &po, out, out_path, &ps, &err) != ANONKIT_OK) fail_msg("publish: %s", err.message);
    publish_copied_free(copied);
    assert_int_equal(ps.published, t->nrows);
    assert_int_equal(fclose(out), 0);
    partition_free(&p);
    table_free(t);
    return tu_read_file(out_path, len);
}

static char *publish(const char *path, unsigned threads, int keep_order, size_t *len)
{
    return publish_with(path, threads, keep_order, 0, len);
}

static const char header[] = "q0,c1,c2,c3,c4,q1,c5\n";

/* Fails unless text is the header and the expected lines in input order. */
static void assert_in_order(const char *text, char **expected, size_t rows)
{
    size_t hl = strlen(header);
    assert_memory_equal(text, header, hl);
    const char *at = text + hl;
    for (size_t r = 0; r < rows; r++) {
        const size_t n = strlen(expected[r]);
        if (strncmp(at, expected[r], n) != 0) fail_msg("row %zu: expected %s", r, expected[r]);
        at += n;
    }
    assert_int_equal(*at, '\0');
}

/* Publishes path's rows in input order (on ordered_threads threads), which
 * must give the expected lines in order, and shuffled on one thread, on two,
 * and on two with the copied columns read ahead (publish_with's `ahead`),
 * which must all give the same bytes, as many as in order; frees expected. */
static void assert_publish_alike(const char *path, char **expected, size_t rows, unsigned ordered_threads, int ahead)
{
    size_t len1, len2, len3, len4;
    char *ordered = publish(path, ordered_threads, 1, &len1);
    assert_in_order(ordered, expected, rows);
    char *one = publish(path, 1, 0, &len2), *two = publish(path, 2, 0, &len3);
    assert_int_equal(len2, len3);
    assert_memory_equal(one, two, len2);
    assert_int_equal(len1, len2); /* the same lines in another order */
    char *read_ahead = publish_with(path, 2, 0, ahead, &len4);
    assert_int_equal(len4, len2);
    assert_memory_equal(read_ahead, one, len2);
    free(read_ahead);
    for (size_t r = 0; r < rows; r++) free(expected[r]);
    free(expected);
    free(ordered);
    free(one);
    free(two);
}

/* Small tables full of troublesome values: every copied field comes out in
 * the writer's CSV form, however the input wrote it; shuffled output holds
 * the same lines as the ordered one and does not depend on the threads. */
static void test_copied_fields(void **state)
{
    (void)state;
    tu_rng rng = {3};
    const char *path = tu_path(tu_group_dir, "in.csv");
    char pcopy[4200];
    snprintf(pcopy, sizeof pcopy, "%s", path);
    for (int iter = 0; iter < 40; iter++) {
        const size_t rows = 1 + (size_t)tu_below(&rng, 300);
        char **expected;
        write_input(pcopy, rows, 0, SIZE_MAX, &expected, &rng);
        assert_publish_alike(pcopy, expected, rows, 1, 2);
    }
}

/* A large input (read in two pieces on two threads) gives the output of the
 * whole read on one thread: plain, with a quoted line end at the middle (the
 * pieces cannot be used), and with troublesome values throughout. */
static void test_parallel_reread(void **state)
{
    (void)state;
    const char *path = tu_path(tu_group_dir, "big.csv");
    char pcopy[4200];
    snprintf(pcopy, sizeof pcopy, "%s", path);
    const size_t rows = 250000; /* about 11 MB: above the two-piece threshold of 8 MB */
    for (int variant = 0; variant < 3; variant++) {
        tu_rng rng = {(uint64_t)variant + 100};
        char **expected;
        write_input(pcopy, rows, variant < 2, variant == 1 ? rows / 2 : SIZE_MAX, &expected, &rng);
        assert_publish_alike(pcopy, expected, rows, 2, 1);
    }
}

/* Columns read ahead from an input that changed since it was loaded: the
 * writer reports it (and writes nothing more); read ahead but not used, they
 * are freed cleanly. */
static void test_read_ahead_errors(void **state)
{
    (void)state;
    const char *path = tu_path(tu_group_dir, "changed.csv");
    char pcopy[4200];
    snprintf(pcopy, sizeof pcopy, "%s", path);
    tu_write_file(pcopy, "q0,c1,c2,c3,id,c4,q1,c5\n5,a,b,c,i,d,5,e\n5,f,g,h,j,k,5,l\n");
    const char *qi[] = {"q0", "q1"};
    const char *ids[] = {"id"};
    table_spec spec = {0};
    spec.path = pcopy;
    spec.delimiter = ',';
    spec.nqi = 2;
    spec.qi_names = qi;
    spec.nidentifiers = 1;
    spec.identifier_names = ids;
    table *t = NULL;
    ak_error err;
    assert_int_equal(table_load(&t, &spec, &err), ANONKIT_OK);
    publish_copied *unused = NULL;
    assert_int_equal(publish_copied_start(&unused, t, &err), ANONKIT_OK);
    assert_non_null(unused);
    publish_copied_free(unused);
    tu_write_file(pcopy, "q0,c1,c2,c3,id,c4,q1,c5\n5,a,b,c,i,d,5,e\n5,f,g,h,j,k,5,l\n5,m,n,o,p,q,5,r\n");
    publish_copied *copied = NULL;
    assert_int_equal(publish_copied_start(&copied, t, &err), ANONKIT_OK);
    partition p;
    assert_int_equal(partition_init(&p, t->nrows, t->nqi, &err), ANONKIT_OK);
    const uint32_t lo[2] = {0, 0}, hi[2] = {0, 0};
    uint32_t id;
    assert_int_equal(partition_add_class(&p, lo, hi, t->nrows, &id, &err), ANONKIT_OK);
    for (size_t r = 0; r < t->nrows; r++) p.class_of[r] = id;
    FILE *out = fopen(tu_path(tu_group_dir, "changed-out.csv"), "wb");
    assert_non_null(out);
    publish_opts po = {.seed = 7, .threads = 2, .copied = copied};
    publish_stats ps;
    assert_int_equal(publish_write(t, &p, &po, out, "changed-out.csv", &ps, &err), ANONKIT_E_INPUT);
    assert_non_null(strstr(err.message, "changed"));
    fclose(out);
    publish_copied_free(copied);
    partition_free(&p);
    table_free(t);
}

/* outfile_write_behind hands a file's new bytes to the disk and remembers
 * how far; on a pipe it does nothing and breaks nothing. */
static void test_write_behind(void **state)
{
    (void)state;
    const char *path = tu_path(tu_group_dir, "behind.txt");
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    uint64_t synced = 0;
    static char block[100000];
    memset(block, 'x', sizeof block);
    assert_int_equal(fwrite(block, 1, sizeof block, f), sizeof block);
    outfile_write_behind(f, &synced);
#if defined(__linux__)
    assert_int_equal(synced, sizeof block);
#endif
    assert_int_equal(fwrite(block, 1, 10, f), 10);
    outfile_write_behind(f, &synced);
#if defined(__linux__)
    assert_int_equal(synced, sizeof block + 10);
#endif
    assert_int_equal(fclose(f), 0);
    size_t len;
    char *text = tu_read_file(path, &len);
    assert_int_equal(len, sizeof block + 10);
    free(text);

    int fds[2];
    assert_int_equal(pipe(fds), 0);
    FILE *w = fdopen(fds[1], "wb");
    assert_non_null(w);
    assert_int_equal(fwrite("abc", 1, 3, w), 3);
    synced = 0;
    outfile_write_behind(w, &synced);
    assert_int_equal(synced, 0);
    assert_int_equal(fclose(w), 0);
    char got[4] = {0};
    assert_int_equal(read(fds[0], got, 3), 3);
    assert_string_equal(got, "abc");
    close(fds[0]);
}

/* csv_run_is_plain and csv_needs_quotes against byte-by-byte definitions,
 * with one special byte at every position of fields of every short length
 * (the checks look at eight bytes at a time). */
static void test_quoting_checks(void **state)
{
    (void)state;
    char buf[64];
    const char specials[] = {'"', '\r', '\n', ',', ';', ' ', 'a'};
    for (size_t len = 0; len < 40; len++)
        for (size_t at = 0; at <= len; at++)
            for (size_t s = 0; s < sizeof specials; s++) {
                memset(buf, 'b', len);
                if (at < len) buf[at] = specials[s];
                int plain = 1, quotes = len && (buf[0] == ' ' || buf[len - 1] == ' ');
                for (size_t i = 0; i < len; i++) {
                    plain &= buf[i] != '"' && buf[i] != '\r';
                    quotes |= buf[i] == '"' || buf[i] == '\r' || buf[i] == '\n' || buf[i] == ';';
                }
                assert_int_equal(csv_run_is_plain(buf, len), plain);
                assert_int_equal(csv_needs_quotes(buf, len, ';'), quotes);
            }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_quoting_checks),
        cmocka_unit_test(test_copied_fields),
        cmocka_unit_test(test_parallel_reread),
        cmocka_unit_test(test_read_ahead_errors),
        cmocka_unit_test(test_write_behind),
    };
    return cmocka_run_group_tests(tests, tu_group_setup, tu_group_teardown);
}
