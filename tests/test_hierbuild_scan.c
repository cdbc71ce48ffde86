/* Tests of the collection of a hierarchy's values (core/hierbuild_collect.c)
 * on wide random files, against the CSV reader record by record: the fast
 * scan placing every delimiter (most columns asked for) or only the ones
 * asked for (a few of many), the header and first record read from the
 * file's first 64 KiB or, when they do not fit or the scan cannot start
 * there, from the whole file, and the CSV reader taking over from the first
 * quote on; and integer interval hierarchies as written, against a file
 * composed with printf. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "core/hierbuild.h"
#include "core/hierbuild_internal.h"
#include "io/csv.h"
#include "testutil.h"

#define MAX_COLS 40

/* One column's values as the CSV reader gives them: rows, missing values
 * (empty or NA) and the first line of one, and per distinct value its count
 * and first line. */
typedef struct ref_column {
    strmap seen;
    uint64_t *count;
    long *line;
    size_t cap;
    uint64_t rows, nmissing;
    long missing_line;
} ref_column;

/* Takes cell text[0..len) of `line` into r. */
static void ref_take(ref_column *r, const char *text, size_t len, long line)
{
    r->rows++;
    if (len == 0 || (len == 2 && !memcmp(text, "NA", 2))) {
        if (!r->nmissing++) r->missing_line = line;
        return;
    }
    uint32_t id;
    int inserted;
    assert_int_equal(strmap_intern(&r->seen, text, len, &id, &inserted), 0);
    if (id >= r->cap) {
        r->cap = 2 * (size_t)id + 16;
        r->count = realloc(r->count, r->cap * sizeof *r->count);
        r->line = realloc(r->line, r->cap * sizeof *r->line);
        assert_non_null(r->count);
        assert_non_null(r->line);
    }
    if (inserted) r->count[id] = 0, r->line[id] = line;
    r->count[id]++;
}

/* The reference for columns idx[0..n) of the w-field CSV at path: each
 * column's values as the CSV reader reads them, into ref[0..n) (empty lines
 * skipped); reading stops at the first line of another number of fields,
 * whose number it returns (0: none). */
static long ref_collect(ref_column *ref, const char *path, uint32_t w, const unsigned *idx, size_t n)
{
    memset(ref, 0, n * sizeof *ref);
    for (size_t j = 0; j < n; j++) assert_int_equal(strmap_init(&ref[j].seen, 64), 0);
    ak_error err;
    csv_reader *rd;
    assert_int_equal(csv_reader_open(&rd, path, ',', &err), 0);
    csv_record rec;
    assert_int_equal(csv_read(rd, &rec, &err), 1);
    long bad_line = 0;
    while (csv_read(rd, &rec, &err) == 1) {
        if (rec.count == 1 && rec.fields[0].len == 0) continue;
        if (rec.count != w) {
            bad_line = rec.line;
            break;
        }
        for (size_t j = 0; j < n; j++) ref_take(&ref[j], rec.fields[idx[j]].data, rec.fields[idx[j]].len, rec.line);
    }
    csv_reader_free(rd);
    return bad_line;
}

/* A random cell written to f: empty, NA, numbers in and beyond the range
 * counted by value, categories (some of more than the memo's 24 bytes,
 * some starting with digits, some sharing their first 8 or 16 bytes; values
 * of 1 to 64 bytes that differ in one random byte), other numbers (signs, leading zeros, 8 to 22
 * digits, HB_DENSE - 1 and HB_DENSE), and from a quoting line on sometimes quoted,
 * with a delimiter, a line end or a doubled quote inside. */
static void put_cell(FILE *f, tu_rng *g, int quoting)
{
    static const char *const cats[] = {"Male", "Female", "United-States", "Married-civ-spouse", "Married-AF-spouse",
                                       "10th", "1st-4th", "Outlying-US(Guam-USVI-etc)", "?", "x",
                                       "aaaaaaaaaaaaaaaaaaaaaaaX", "aaaaaaaaaaaaaaaaaaaaaaaY", "0", "007",
                                       /* the first eight or sixteen bytes the same, one length */
                                       "abcdefgh", "abcdefgi", "abcdefghX", "abcdefghY", "abcdefghijklmnop",
                                       "abcdefghijklmnopX", "abcdefghijklmnopY", "abcdefghijklmnopqrstuvwX",
                                       "abcdefghijklmnopqrstuvwxY",
                                       /* numbers the fast marking must leave to the slower path (negative, signed,
                                          leading zeros, 8 digits and more, over 18, at and above HB_DENSE) or
                                          take (7 digits below it) */
                                       "-5", "+5", "-0", "00", "0000001", "12345678", "1234567890123456789012",
                                       "4194303", "4194304", "9999999", "1e5", "5 ", " 5", "1.0", "9x"};
    const unsigned k = (unsigned)tu_below(g, 10);
    if (quoting && tu_below(g, 4) == 0) {
        static const char *const quoted[] = {"\"a,b\"", "\"l\nx\"", "\"he said \"\"hi\"\"\"", "\"Male\"", "\"\""};
        fputs(quoted[tu_below(g, 5)], f);
    } else if (k == 0) {
        /* empty */
    } else if (k == 1) {
        fputs("NA", f);
    } else if (k <= 4) {
        fprintf(f, "%u", (unsigned)tu_below(g, 120));
    } else if (k == 5) {
        fprintf(f, "%u", HB_DENSE - 3 + (unsigned)tu_below(g, 6));
    } else if (k == 9 && tu_below(g, 2)) {
        /* 1 to 64 bytes, all 'p' but one of 'a'..'c' at a random place: many values of one length that share
           a long prefix or differ only after byte 8 or 16 (the memo's one-word and three-word probes, its
           slots shared) */
        const unsigned len = 1 + (unsigned)tu_below(g, 64), at = (unsigned)tu_below(g, len);
        for (unsigned i = 0; i < len; i++) fputc(i == at ? 'a' + (int)tu_below(g, 3) : 'p', f);
    } else {
        fputs(cats[tu_below(g, sizeof cats / sizeof *cats)], f);
    }
}

/* Compares a collected column with the reference. */
static void same_column(hb_values *v, const ref_column *r, int rep, size_t j)
{
    ak_error err;
    assert_int_equal(hb__fold_dense(v, &err), 0);
    if (v->rows != r->rows || v->nmissing != r->nmissing || (r->nmissing && v->missing_line != r->missing_line) ||
        v->dict.count != r->seen.count)
        fail_msg("rep %d, column %zu: rows %llu/%llu, missing %llu/%llu, distinct %u/%u", rep, j,
                 (unsigned long long)v->rows, (unsigned long long)r->rows, (unsigned long long)v->nmissing,
                 (unsigned long long)r->nmissing, v->dict.count, r->seen.count);
    for (uint32_t i = 0; i < r->seen.count; i++) {
        const uint32_t k = strmap_find(&v->dict, strmap_key(&r->seen, i), strmap_key_len(&r->seen, i));
        if (k == AK_NOT_FOUND || v->count[k] != r->count[i] || v->line[k] != r->line[i])
            fail_msg("rep %d, column %zu: value '%s' differs", rep, j, strmap_key(&r->seen, i));
    }
}

/* Compares a column collected for the interval builder (whole numbers from
 * 0 to HB_DENSE - 1 written plainly only marked in v->bits) with the
 * reference: each such value of the reference marked, and nothing else, the
 * least and greatest of them in dense_lo and dense_hi, every other value in
 * v->dict with its count and first line. */
static void same_presence(const hb_values *v, const ref_column *r, int rep, size_t j)
{
    assert_non_null(v->bits);
    if (v->rows != r->rows || v->nmissing != r->nmissing)
        fail_msg("rep %d, column %zu (presence): rows %llu/%llu, missing %llu/%llu", rep, j,
                 (unsigned long long)v->rows, (unsigned long long)r->rows, (unsigned long long)v->nmissing,
                 (unsigned long long)r->nmissing);
    uint32_t ndense = 0, lo = UINT32_MAX, hi = 0;
    for (uint32_t i = 0; i < r->seen.count; i++) {
        const char *s = strmap_key(&r->seen, i);
        const uint32_t len = strmap_key_len(&r->seen, i);
        int digits = len >= 1 && len <= 7 && (s[0] != '0' || len == 1);
        for (uint32_t k = 0; k < len && digits; k++) digits = s[k] >= '0' && s[k] <= '9';
        const unsigned long x = digits ? strtoul(s, NULL, 10) : 0;
        if (digits && x < HB_DENSE) {
            if (!(v->bits[x / 64] >> (x % 64) & 1)) fail_msg("rep %d, column %zu: %lu not marked", rep, j, x);
            ndense++;
            if (x < lo) lo = (uint32_t)x;
            if (x > hi) hi = (uint32_t)x;
            continue;
        }
        const uint32_t k = strmap_find(&v->dict, s, len);
        if (k == AK_NOT_FOUND || v->count[k] != r->count[i] || v->line[k] != r->line[i])
            fail_msg("rep %d, column %zu (presence): value '%s' differs", rep, j, s);
    }
    uint32_t marked = 0;
    for (uint32_t w = 0; w < HB_DENSE / 64; w++) marked += (uint32_t)__builtin_popcountll(v->bits[w]);
    assert_int_equal(marked, ndense);
    assert_int_equal(v->dict.count, r->seen.count - ndense);
    if (ndense) {
        assert_int_equal(v->dense_lo, lo);
        assert_int_equal(v->dense_hi, hi);
    } else {
        assert_true(v->dense_lo > v->dense_hi);
    }
}

/* hb_collect_columns on random files of 2 to 31 columns and more than
 * 64 KiB against the CSV reader: one column of many, most of them (in any
 * order, one twice), or a third; LF or CRLF; a header or a first record
 * longer than 64 KiB, a quote or an empty line in the first record, quoted
 * cells from a random line on, a line with too many or too few fields (the
 * same error line as the reader's), a last line with or without its end. */
static void test_scan_wide_random(void **state)
{
    (void)state;
    tu_rng g = {91};
    const char *path = tu_path(tu_group_dir, "wide.csv");
    for (int rep = 0; rep < 48; rep++) {
        const unsigned w = 2 + (unsigned)tu_below(&g, 30), kind = (unsigned)rep % 8;
        const size_t nrows = 1200 + tu_below(&g, 1500), quote_from = tu_below(&g, 2 * nrows);
        const size_t ragged = kind == 5 ? tu_below(&g, nrows) : SIZE_MAX;
        const char *eol = tu_below(&g, 2) ? "\r\n" : "\n";
        FILE *f = fopen(path, "wb");
        assert_non_null(f);
        for (unsigned c = 0; c < w; c++) {
            if (c) fputc(',', f);
            if (kind == 1 && c == 0)
                for (int i = 0; i < 70000; i++) fputc('n', f); /* a header beyond the first 64 KiB */
            fprintf(f, "h%u", c);
        }
        fputs(eol, f);
        if (kind == 4) fputs(eol, f); /* an empty first record */
        for (size_t i = 0; i < nrows; i++) {
            const unsigned fields = i == ragged ? (tu_below(&g, 2) ? w + 1 + (unsigned)tu_below(&g, 3) : w - 1) : w;
            for (unsigned c = 0; c < fields; c++) {
                if (c) fputc(',', f);
                if (i == 0 && kind == 2 && c == w - 1)
                    for (int k = 0; k < 70000; k++) fputc('f', f); /* a first record beyond the first 64 KiB */
                else if (i == 0 && kind == 3 && c == 0)
                    fputs("\"q\"", f); /* a quote in the first record */
                else
                    put_cell(f, &g, i >= quote_from);
            }
            if (i + 1 < nrows || tu_below(&g, 2)) fputs(eol, f);
        }
        fclose(f);
        /* the columns asked for */
        const char *names[MAX_COLS];
        char name_buf[MAX_COLS][16];
        size_t n = 0;
        const unsigned mode = (unsigned)tu_below(&g, 3);
        if (mode == 0) { /* one of many */
            snprintf(name_buf[0], sizeof name_buf[0], "h%u", (unsigned)tu_below(&g, w));
            n = 1;
        } else {
            for (unsigned c = 0; c < w; c++)
                if (mode == 1 || tu_below(&g, 3) == 0) snprintf(name_buf[n++], sizeof name_buf[0], "h%u", c);
            if (n == 0) snprintf(name_buf[n++], sizeof name_buf[0], "h%u", w - 1);
            for (size_t a = n; a > 1; a--) { /* in a random order */
                const size_t b = tu_below(&g, a);
                char t[16];
                memcpy(t, name_buf[a - 1], sizeof t);
                memcpy(name_buf[a - 1], name_buf[b], sizeof t);
                memcpy(name_buf[b], t, sizeof t);
            }
            if (mode == 1) memcpy(name_buf[n++], name_buf[0], sizeof name_buf[0]); /* one twice */
        }
        unsigned idx[MAX_COLS];
        for (size_t j = 0; j < n; j++) {
            names[j] = name_buf[j];
            idx[j] = (unsigned)strtoul(name_buf[j] + 1, NULL, 10);
        }
        if (kind == 1) /* (the first header name is long) */
            for (size_t j = 0; j < n; j++)
                if (idx[j] == 0) names[j] = "h1", idx[j] = 1;
        /* the reference: the CSV reader */
        ref_column ref[MAX_COLS];
        ak_error err;
        const long bad_line = ref_collect(ref, path, w, idx, n);
        hb_missing ms[MAX_COLS];
        static const char *const tokens[] = {"NA"};
        for (size_t j = 0; j < n; j++) ms[j] = (hb_missing){tokens, 1};
        hb_values vs[MAX_COLS];
        const int rc = hb_collect_columns(vs, n, names, NULL, ms, path, NULL, ',', &err);
        if (bad_line) {
            if (rc >= 0) fail_msg("rep %d: the line %ld with another number of fields was taken", rep, bad_line);
            assert_int_equal(err.line, bad_line);
            assert_non_null(strstr(err.message, "fields as in the header"));
        } else {
            if (rc != 0) fail_msg("rep %d: %s", rep, err.message);
            for (size_t j = 0; j < n; j++) {
                same_column(&vs[j], &ref[j], rep, j);
                hb_values_free(&vs[j]);
            }
            /* for the interval builder: with the token NA, and without (NA then a value of its own, the
               integers marked by the shorter path that needs no token check: the same marks) */
            int presence[MAX_COLS]; /* (every column, or some: the scan takes the marked ones in a loop of their
                                       own, the others in another) */
            for (size_t j = 0; j < n; j++) presence[j] = rep % 2 ? 1 : (int)tu_below(&g, 2);
            hb_values ps[MAX_COLS], qs[MAX_COLS];
            hb_missing none[MAX_COLS];
            for (size_t j = 0; j < n; j++) none[j] = (hb_missing){NULL, 0};
            assert_int_equal(hb_collect_columns(ps, n, names, presence, ms, path, NULL, ',', &err), 0);
            assert_int_equal(hb_collect_columns(qs, n, names, presence, none, path, NULL, ',', &err), 0);
            for (size_t j = 0; j < n; j++) {
                if (!presence[j]) { /* (without the token NA is a value: only the first compared) */
                    same_column(&ps[j], &ref[j], rep, j);
                    hb_values_free(&ps[j]);
                    hb_values_free(&qs[j]);
                    continue;
                }
                same_presence(&ps[j], &ref[j], rep, j);
                assert_memory_equal(ps[j].bits, qs[j].bits, HB_DENSE / 8);
                assert_int_equal(ps[j].dense_lo, qs[j].dense_lo);
                assert_int_equal(ps[j].dense_hi, qs[j].dense_hi);
                hb_values_free(&ps[j]);
                hb_values_free(&qs[j]);
            }
        }
        for (size_t j = 0; j < n; j++) {
            strmap_free(&ref[j].seen);
            free(ref[j].count);
            free(ref[j].line);
        }
    }
}

/* A random cell of a column of numbers: mostly whole numbers of 1 to 7
 * digits (the fast marking's, four fields at a time on a processor with
 * AVX2: 0, a digit, up to 9999999, next to HB_DENSE), and the fields it must
 * leave to the slower path: empty, leading zeros, 8 to 20 digits, signs,
 * decimals, spaces, letters before, after or among the digits. */
static void put_number(FILE *f, tu_rng *g)
{
    static const char *const odd[] = {"",   "0",       "00",       "01",       "0000000",  "0999999", "00000001",
                                      "-5", "+5",      "-0",       "1.5",      "5 ",       " 5",      "1e5",
                                      "9x", "x9",      "4194303",  "4194304",  "4194305",  "9999999", "10000000",
                                      "99999999",      "123456789012345678901", "12a4",    "1/2",     ":1",
                                      "1:", "/",       "5.",       "abcdefgh", "A",        "4194303x"};
    const unsigned k = (unsigned)tu_below(g, 16);
    if (k < 9) { /* a number of 1 to 7 digits without a leading zero */
        static const unsigned top[8] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000};
        const unsigned digits = 1 + (unsigned)tu_below(g, 7);
        const unsigned lo = digits == 1 ? 0 : top[digits - 1];
        fprintf(f, "%u", lo + (unsigned)tu_below(g, top[digits] - lo));
    } else if (k < 11) {
        fprintf(f, "%u", (unsigned)tu_below(g, 12));
    } else if (k == 11) {
        fprintf(f, "%u", HB_DENSE - 4 + (unsigned)tu_below(g, 8));
    } else {
        fputs(odd[tu_below(g, sizeof odd / sizeof *odd)], f);
    }
}

/* hb_collect_columns for the interval builder (whole numbers only marked, no
 * missing token) on random files of columns of numbers against the CSV
 * reader: 4 to 24 columns asked for, in a row or in any order (the groups
 * of four taken at once: of columns in a row or not), their fields at any
 * place of the 64-byte blocks and of the 64 KiB reads (a text column of
 * random length among them), LF or CRLF, numbers in whole lines or one odd
 * field among many (each lane of a group in turn falls to the slower
 * path). */
static void test_scan_numbers_random(void **state)
{
    (void)state;
    tu_rng g = {4242};
    const char *path = tu_path(tu_group_dir, "numbers.csv");
    for (int rep = 0; rep < 40; rep++) {
        const unsigned w = 4 + (unsigned)tu_below(&g, 21), text_col = (unsigned)tu_below(&g, w + 4);
        const size_t nrows = 2000 + tu_below(&g, 3000);
        const unsigned odd_rate = rep % 3 == 0 ? 2 : rep % 3 == 1 ? 20 : 200; /* (1 in odd_rate fields odd) */
        const char *eol = tu_below(&g, 2) ? "\r\n" : "\n";
        FILE *f = fopen(path, "wb");
        assert_non_null(f);
        for (unsigned c = 0; c < w; c++) fprintf(f, "%sh%u", c ? "," : "", c);
        fputs(eol, f);
        for (size_t i = 0; i < nrows; i++) {
            for (unsigned c = 0; c < w; c++) {
                if (c) fputc(',', f);
                if (c == text_col) { /* 0 to 70 letters: the fields after it at any place of a block */
                    for (unsigned k = (unsigned)tu_below(&g, 71); k > 0; k--) fputc('t', f);
                } else if (tu_below(&g, odd_rate) == 0) {
                    put_number(f, &g);
                } else {
                    fprintf(f, "%u", (unsigned)tu_below(&g, 1u << (1 + tu_below(&g, 23))));
                }
            }
            if (i + 1 < nrows || tu_below(&g, 2)) fputs(eol, f);
        }
        fclose(f);
        /* the columns asked for: every one but the text column, or a random part, in a row or shuffled */
        const char *names[MAX_COLS];
        char name_buf[MAX_COLS][16];
        unsigned idx[MAX_COLS];
        size_t n = 0;
        const int some = rep % 4 == 3;
        for (unsigned c = 0; c < w; c++)
            if (c != text_col && (!some || tu_below(&g, 3))) idx[n++] = c;
        if (rep % 2) /* in any order */
            for (size_t a = n; a > 1; a--) {
                const size_t b = tu_below(&g, a);
                const unsigned t = idx[a - 1];
                idx[a - 1] = idx[b], idx[b] = t;
            }
        for (size_t j = 0; j < n; j++) {
            snprintf(name_buf[j], sizeof name_buf[j], "h%u", idx[j]);
            names[j] = name_buf[j];
        }
        ref_column ref[MAX_COLS];
        ak_error err;
        assert_int_equal(ref_collect(ref, path, w, idx, n), 0); /* (every line has w fields) */
        hb_values vs[MAX_COLS];
        hb_missing none[MAX_COLS];
        int presence[MAX_COLS];
        for (size_t j = 0; j < n; j++) none[j] = (hb_missing){NULL, 0}, presence[j] = 1;
        assert_int_equal(hb_collect_columns(vs, n, names, presence, none, path, NULL, ',', &err), 0);
        for (size_t j = 0; j < n; j++) {
            same_presence(&vs[j], &ref[j], rep, j);
            if (ref[j].nmissing) assert_int_equal(vs[j].missing_line, ref[j].missing_line);
            hb_values_free(&vs[j]);
            strmap_free(&ref[j].seen);
            free(ref[j].count);
            free(ref[j].line);
        }
    }
}

/* A column not in the header is named whether or not the header fits in the
 * first 64 KiB; a header cut there is never taken for the whole one. */
static void test_scan_header_edges(void **state)
{
    (void)state;
    const char *path = tu_path(tu_group_dir, "edges.csv");
    for (int longer = 0; longer < 2; longer++) {
        FILE *f = fopen(path, "wb");
        assert_non_null(f);
        fputs("a,", f);
        for (int i = 0; i < (longer ? 65530 : 100); i++) fputc('b', f);
        fputs(",tail\n", f); /* "tail" begins beyond 64 KiB when longer */
        for (int i = 0; i < 20000; i++) fprintf(f, "%d,x,%d\n", i % 7, i % 3);
        fclose(f);
        const char *const cols[] = {"tail", "a"};
        const hb_missing ms[] = {{NULL, 0}, {NULL, 0}};
        hb_values vs[2];
        ak_error err;
        assert_int_equal(hb_collect_columns(vs, 2, cols, NULL, ms, path, NULL, ',', &err), 0);
        assert_int_equal(hb__fold_dense(&vs[0], &err), 0);
        assert_int_equal(vs[0].dict.count, 3);
        assert_int_equal(vs[0].rows, 20000);
        hb_values_free(&vs[0]);
        hb_values_free(&vs[1]);
        const char *const bad[] = {"a", "tai"};
        assert_true(hb_collect_columns(vs, 2, bad, NULL, ms, path, NULL, ',', &err) < 0);
        assert_non_null(strstr(err.message, "no column 'tai'"));
    }
}

/* Two collections of one column hold the same values. */
static void values_equal(hb_values *x, hb_values *y, int rep, size_t j)
{
    ak_error err;
    if (!x->bits) {
        assert_int_equal(hb__fold_dense(x, &err), 0);
        assert_int_equal(hb__fold_dense(y, &err), 0);
    }
    if (x->rows != y->rows || x->nmissing != y->nmissing || (x->nmissing && x->missing_line != y->missing_line) ||
        x->dict.count != y->dict.count)
        fail_msg("rep %d, column %zu: rows %llu/%llu, missing %llu/%llu, distinct %u/%u", rep, j,
                 (unsigned long long)x->rows, (unsigned long long)y->rows, (unsigned long long)x->nmissing,
                 (unsigned long long)y->nmissing, x->dict.count, y->dict.count);
    for (uint32_t i = 0; i < x->dict.count; i++) { /* the same values in the same order (of first sight) */
        if (strmap_key_len(&x->dict, i) != strmap_key_len(&y->dict, i) ||
            memcmp(strmap_key(&x->dict, i), strmap_key(&y->dict, i), strmap_key_len(&x->dict, i)) != 0 ||
            x->count[i] != y->count[i] || x->line[i] != y->line[i])
            fail_msg("rep %d, column %zu: value %u ('%s') differs", rep, j, i, strmap_key(&x->dict, i));
    }
    if (x->bits) {
        assert_int_equal(x->dense_lo, y->dense_lo);
        assert_int_equal(x->dense_hi, y->dense_hi);
        assert_memory_equal(x->bits, y->bits, HB_DENSE / 8);
    }
}

/* hb_collect_columns_threads on two threads, which cuts a file of 1 MiB or
 * more in two byte ranges at a line start near its middle, against one pass
 * (hb_collect_columns) on random files: no quote, quotes from a line before
 * the middle (the first thread reads on to the end) or after it (the second
 * hands its rest to the CSV reader), a quoted line end across the middle, LF
 * or CRLF, empty lines, a ragged line in either half (the same error line),
 * columns counted, marked present (a column twice) or asked for once of
 * many; the same values in the same order, counts and first lines. */
static void test_cut_random(void **state)
{
    (void)state;
    tu_rng g = {57};
    const char *path = tu_path(tu_group_dir, "cut.csv");
    for (int rep = 0; rep < 16; rep++) {
        const unsigned w = 3 + (unsigned)tu_below(&g, 6), kind = (unsigned)rep % 4;
        const char *eol = tu_below(&g, 2) ? "\r\n" : "\n";
        const size_t nrows = 1400000 / (w * 6) + tu_below(&g, 3000);
        /* kind 0: no quote; 1: quotes from the first quarter; 2: from the last quarter; 3: one quoted line end
         * near the middle only */
        const size_t quote_from = kind == 1 ? nrows / 4 : kind == 2 ? 3 * nrows / 4 : SIZE_MAX;
        const size_t ragged = tu_below(&g, 3) == 0 ? tu_below(&g, nrows) : SIZE_MAX;
        FILE *f = fopen(path, "wb");
        assert_non_null(f);
        for (unsigned c = 0; c < w; c++) fprintf(f, "%sh%u", c ? "," : "", c);
        fputs(eol, f);
        for (size_t i = 0; i < nrows; i++) {
            if (tu_below(&g, 200) == 0) fputs(eol, f); /* an empty line */
            const unsigned fields = i == ragged ? w + 1 : w;
            for (unsigned c = 0; c < fields; c++) {
                if (c) fputc(',', f);
                if (kind == 3 && i == nrows / 2 - 3 + tu_below(&g, 6) && c == 1)
                    fputs("\"across\nthe middle\"", f);
                else
                    put_cell(f, &g, i >= quote_from);
            }
            if (i + 1 < nrows || tu_below(&g, 2)) fputs(eol, f);
        }
        fclose(f);
        const char *cols[6] = {"h0", "h1", "h2", "h1"};
        int presence[6] = {0, 0, 0, 1};
        size_t n = 4;
        if (tu_below(&g, 3) == 0) { /* one column of many */
            cols[0] = "h2";
            presence[0] = (int)tu_below(&g, 2);
            n = 1;
        }
        static const char *const tokens[] = {"NA"};
        hb_missing ms[6];
        for (size_t j = 0; j < n; j++) ms[j] = (hb_missing){tokens, 1};
        hb_values one[6], two[6];
        ak_error e1, e2;
        const int r1 = hb_collect_columns(one, n, cols, presence, ms, path, NULL, ',', &e1);
        const int r2 = hb_collect_columns_threads(two, n, cols, presence, ms, path, NULL, ',', 2, &e2);
        if (r1 < 0) {
            if (r2 >= 0) fail_msg("rep %d: one pass failed (%s), two threads did not", rep, e1.message);
            assert_int_equal(e2.line, e1.line);
            assert_string_equal(e2.message, e1.message);
            continue;
        }
        if (r2 < 0) fail_msg("rep %d: two threads failed: line %ld: %s", rep, e2.line, e2.message);
        for (size_t j = 0; j < n; j++) {
            values_equal(&two[j], &one[j], rep, j);
            hb_values_free(&one[j]);
            hb_values_free(&two[j]);
        }
    }
}

/* Integer interval hierarchies as written (hb_write): integers counted by
 * value (digits of every length up to 7, 0 and the powers of ten around
 * them, HB_DENSE - 1) with or without text values (negative numbers) and a
 * missing value, widths 1 to 1000, fan-outs 2 and 3, counted and only
 * marked present: the file equals one composed here line by line with
 * printf's "%lld" and floor division, and the labels are written without
 * quotes whether or not the builder marked them plain. */
static void test_integer_file(void **state)
{
    (void)state;
    tu_rng g = {77};
    static const long fixed[] = {0, 1, 9, 10, 11, 99, 100, 101, 999, 1000, 9999, 10000, 99999, 100000, 999999,
                                 1000000, 4194303};
    const size_t nfixed = sizeof fixed / sizeof fixed[0];
    for (int rep = 0; rep < 24; rep++) {
        const int negatives = rep % 3 == 1, missing = rep % 4 == 3, presence = rep % 2;
        const size_t n = nfixed + 40;
        long *x = malloc((n + 4) * sizeof *x);
        assert_non_null(x);
        size_t m = 0;
        for (size_t i = 0; i < nfixed; i++) x[m++] = fixed[i];
        for (size_t i = nfixed; i < n; i++) {
            const uint64_t digits = 1 + tu_below(&g, 7);
            uint64_t p = 1;
            for (uint64_t k = 0; k < digits; k++) p *= 10;
            x[m] = (long)tu_below(&g, p < 4194304 ? p : 4194304);
            if (negatives && tu_below(&g, 4) == 0) x[m] = -x[m] - 1;
            m++;
        }
        const char *path = tu_path(tu_group_dir, "ints.csv");
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fputs("a,b\n", f);
        for (size_t i = 0; i < m; i++) fprintf(f, "%zu,%ld\n", i, x[i]);
        if (missing) fputs("9,\n", f);
        fclose(f);
        /* the distinct values ascending */
        for (size_t i = 1; i < m; i++)
            for (size_t j = i; j > 0 && x[j - 1] > x[j]; j--) {
                const long t = x[j];
                x[j] = x[j - 1], x[j - 1] = t;
            }
        size_t d = 0;
        for (size_t i = 0; i < m; i++)
            if (!d || x[d - 1] != x[i]) x[d++] = x[i];
        hb_values v;
        ak_error err;
        assert_int_equal((presence ? hb_collect_presence : hb_collect)(&v, path, NULL, ',', "b", NULL, &err), 0);
        static const long widths[] = {1, 3, 10, 1000};
        const long w = widths[rep % 4];
        uint32_t fan[2] = {2 + (uint32_t)tu_below(&g, 2), 2};
        const hb_options o = {.kind = HB_INTERVAL, .width = (double)w, .fanout = fan, .nfanout = 2,
                              .style = AK_INTERVAL_RANGE};
        hb_rows r;
        assert_int_equal(hb_build(&v, &o, &r, &err), 0);
        assert_int_equal(r.plain, !negatives || v.dict.count == 0);
        const char *out = tu_path(tu_group_dir, "ints-h.csv");
        f = fopen(out, "w");
        assert_non_null(f);
        assert_int_equal(hb_write(&r, f, out, &err), 0);
        fclose(f);
        /* composed here: base = floor(min / w) * w, level l groups w * fan[0] * ... wide */
        strbuf want = {0};
        char line[256];
        if (missing) {
            assert_int_equal(strbuf_append(&want, "NULL;NULL;NULL;NULL;*\n", 22), 0);
        }
        const long lo0 = x[0];
        const long base = (lo0 >= 0 ? lo0 / w : -((-lo0 + w - 1) / w)) * w;
        for (size_t i = 0; i < d; i++) {
            int len = snprintf(line, sizeof line, "%ld", x[i]);
            long span = w;
            for (int l = 0; l < 3; l++) {
                if (l) span *= fan[l - 1];
                const long k = (x[i] - base) / span; /* (x >= base) */
                const long lo = base + k * span, hi = lo + span - 1;
                len += snprintf(line + len, sizeof line - (size_t)len, lo < 0 || hi < 0 ? ";%ld - %ld" : ";%ld-%ld",
                                lo, hi);
            }
            len += snprintf(line + len, sizeof line - (size_t)len, ";*\n");
            assert_int_equal(strbuf_append(&want, line, (size_t)len), 0);
        }
        f = fopen(out, "rb");
        assert_non_null(f);
        char *got = malloc(want.len + 2);
        assert_non_null(got);
        const size_t ngot = fread(got, 1, want.len + 1, f);
        fclose(f);
        if (ngot != want.len || memcmp(got, want.data, want.len) != 0)
            fail_msg("rep %d: the file differs from the one composed (%zu bytes against %zu)", rep, ngot, want.len);
        free(got);
        strbuf_free(&want);
        hb_rows_free(&r);
        hb_values_free(&v);
        free(x);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scan_wide_random),
        cmocka_unit_test(test_scan_numbers_random),
        cmocka_unit_test(test_scan_header_edges),
        cmocka_unit_test(test_cut_random),
        cmocka_unit_test(test_integer_file),
    };
    return cmocka_run_group_tests(tests, tu_group_setup, tu_group_teardown);
}
