/* test_exact_numbers.c — numeric quasi-identifiers are ordered and published
 * exactly (src/common/numparse.c, src/core/numdict.c; docs/ARCHITECTURE.md
 * §4): integers at ±2^53 ± 1 and ±(2^63 − 1), values beyond int64 and many
 * decimals get one code per distinct value in their true order, and every
 * range an algorithm publishes covers its row's exact value; a value with
 * more digits than anonkit can order exactly (2^63, 30 significant digits)
 * is refused with a message naming its line.
 *
 * The reference is the definition of a decimal number, not a double: the
 * test compares decimal texts as exact numbers (dec_cmp, on their digit
 * strings), so that a rounding anywhere in anonkit cannot hide itself. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "common/numparse.h"
#include "core/numdict.h"
#include "testutil.h"

/* ------------------------------------------------ exact decimal comparison */

/* A decimal text as sign * 0.DIGITS * 10^point: DIGITS without leading or
 * trailing zeros (none for zero, whose sign is 0). */
typedef struct dec {
    int sign;
    char digits[128];
    long point;
} dec;

/* Reads a decimal number text (sign, digits, point, exponent) into *d:
 * 0.R * 10^(integer digits + exponent) for the digit string R, less one for
 * every leading zero of R taken off. */
static void dec_read(const char *s, size_t len, dec *d)
{
    size_t i = 0;
    d->sign = 1;
    if (i < len && (s[i] == '-' || s[i] == '+')) d->sign = s[i++] == '-' ? -1 : 1;
    size_t n = 0;
    long int_digits = 0;
    int after_point = 0;
    for (; i < len && s[i] != 'e' && s[i] != 'E'; i++) {
        if (s[i] == '.') {
            after_point = 1;
            continue;
        }
        assert_true(s[i] >= '0' && s[i] <= '9');
        if (!after_point) int_digits++;
        if (n == 0 && s[i] == '0') { /* a leading zero: 0.0D * 10^p = 0.D * 10^(p - 1) */
            int_digits--;
            continue;
        }
        assert_true(n + 1 < sizeof d->digits);
        d->digits[n++] = s[i];
    }
    long exponent = 0;
    if (i < len) exponent = strtol(s + i + 1, NULL, 10);
    while (n && d->digits[n - 1] == '0') n--;
    d->digits[n] = '\0';
    d->point = int_digits + exponent;
    if (n == 0) d->sign = 0;
}

/* The exact order of two decimal texts: <0, 0 or >0. */
static int dec_cmp(const char *a, size_t alen, const char *b, size_t blen)
{
    dec x, y;
    dec_read(a, alen, &x);
    dec_read(b, blen, &y);
    if (x.sign != y.sign) return x.sign < y.sign ? -1 : 1;
    if (x.sign == 0) return 0;
    int mag; /* the order of the magnitudes */
    if (x.point != y.point) {
        mag = x.point < y.point ? -1 : 1;
    } else {
        mag = 0;
        for (size_t i = 0; !mag && (x.digits[i] || y.digits[i]); i++) {
            const char cx = x.digits[i] ? x.digits[i] : '0', cy = y.digits[i] ? y.digits[i] : '0';
            mag = (cx > cy) - (cx < cy);
            if (!x.digits[i] || !y.digits[i]) { /* one ended: the longer is larger unless equal so far */
                if (!mag) mag = x.digits[i] ? 1 : -1;
                break;
            }
        }
    }
    return x.sign * mag;
}

static int dec_cmp_str(const char *a, const char *b) { return dec_cmp(a, strlen(a), b, strlen(b)); }

/* The comparison itself, on cases whose order is known by hand. */
static void test_dec_cmp(void **state)
{
    (void)state;
    assert_true(dec_cmp_str("9007199254740997", "9007199254740995") > 0);
    assert_true(dec_cmp_str("9007199254740993", "9007199254740992") > 0);
    assert_true(dec_cmp_str("-9007199254740993", "-9007199254740992") < 0);
    assert_int_equal(dec_cmp_str("5", "5.0"), 0);
    assert_int_equal(dec_cmp_str("5", "0.5e1"), 0);
    assert_int_equal(dec_cmp_str("-0", "0.000"), 0);
    assert_int_equal(dec_cmp_str("0.0012", "1.2e-3"), 0);
    assert_true(dec_cmp_str("0.0012", "0.00121") < 0);
    assert_true(dec_cmp_str("1e29", "99999999999999999999999999999") > 0);
    assert_int_equal(dec_cmp_str("1e29", "100000000000000000000000000000"), 0);
    assert_true(dec_cmp_str("9.22337203685478e18", "9223372036854775807") > 0);
    assert_true(dec_cmp_str("-9.22337203685478e18", "-9223372036854775808") < 0);
    assert_true(dec_cmp_str("007", "7.0000000000000000001") < 0);
    assert_true(dec_cmp_str("-1", "0") < 0);
}

/* ------------------------------------------------ what is accepted */

/* ak_num_parse_exact: the rule of numparse.h, case by case. */
static void test_parse_rule(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        int rc;       /* 0, AK_NUM_NOT_NUMBER or AK_NUM_INEXACT */
        int wide;     /* when accepted */
        int64_t i;    /* when wide */
    } cases[] = {
        {"9007199254740992", 0, 0, 0}, /* 2^53: a double holds it */
        {"9007199254740993", 0, 1, 9007199254740993LL},
        {"9007199254740991", 0, 0, 0},
        {"-9007199254740993", 0, 1, -9007199254740993LL},
        {"9007199254740993.000", 0, 1, 9007199254740993LL},
        {"9.007199254740993e15", 0, 1, 9007199254740993LL},
        {"+9007199254740993", 0, 1, 9007199254740993LL},
        {"9223372036854775807", 0, 1, INT64_MAX},
        {"-9223372036854775807", 0, 1, -INT64_MAX},
        {"-9223372036854775808", 0, 1, INT64_MIN},
        {"9223372036854775808", AK_NUM_INEXACT, 0, 0}, /* 2^63: 19 digits beyond int64 */
        {"-9223372036854775809", AK_NUM_INEXACT, 0, 0},
        {"123456789012345678901234567890", AK_NUM_INEXACT, 0, 0},
        {"100000000000000000000000000000", 0, 0, 0}, /* 1e29: one significant digit */
        {"9.22337203685478e18", 0, 0, 0},           /* beyond int64, 15 digits */
        {"0.123456789012345", 0, 0, 0},             /* 15 significant digits */
        {"0.1234567890123456", AK_NUM_INEXACT, 0, 0},
        {"1234567890.123456", AK_NUM_INEXACT, 0, 0},
        {"0.000000000000000000000000000001234", 0, 0, 0},
        {"1e-300", 0, 0, 0},
        {"1e-400", AK_NUM_INEXACT, 0, 0}, /* below the normal doubles */
        {"1e400", AK_NUM_NOT_NUMBER, 0, 0},
        {"0e99999999999999", 0, 0, 0},
        {"0x1A", AK_NUM_NOT_NUMBER, 0, 0},
        {"inf", AK_NUM_NOT_NUMBER, 0, 0},
        {"", AK_NUM_NOT_NUMBER, 0, 0},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        ak_num x;
        const int rc = ak_num_parse_exact(cases[c].text, strlen(cases[c].text), &x);
        if (rc != cases[c].rc) fail_msg("%s: %d, expected %d", cases[c].text, rc, cases[c].rc);
        if (rc != 0) continue;
        if (x.wide != cases[c].wide) fail_msg("%s: wide %d", cases[c].text, x.wide);
        if (x.wide) {
            assert_true(x.i == cases[c].i);
        } else { /* otherwise the double is exact enough: an integer up to 2^53 exactly, anything else
                    to its 15 significant digits */
            char buf[400];
            if (x.v <= 9007199254740992.0 && x.v >= -9007199254740992.0 && x.v == (double)(int64_t)x.v)
                snprintf(buf, sizeof buf, "%.0f", x.v);
            else
                snprintf(buf, sizeof buf, "%.14e", x.v);
            dec a, b;
            dec_read(buf, strlen(buf), &a);
            dec_read(cases[c].text, strlen(cases[c].text), &b);
            assert_int_equal(a.sign, b.sign);
            if (a.sign) {
                assert_int_equal(a.point, b.point);
                assert_string_equal(a.digits, b.digits);
            }
        }
    }
}

/* ------------------------------------------------ the dictionary */

/* Values whose doubles collide or nearly do, spelled in several ways. */
static const char *const tricky[] = {
    "9007199254740992", "9007199254740993", "9007199254740994", "9007199254740995", "9007199254740997",
    "9007199254740993.0", "9.007199254740995e15", "-9007199254740991", "-9007199254740992", "-9007199254740993",
    "-9007199254740994", "9223372036854775807", "9223372036854775806", "9223372036854775296", "9223372036854775295",
    "-9223372036854775807", "-9223372036854775808", "-9223372036854775296", "9.22337203685478e18",
    "9223372036854780000", "-9.22337203685478e18", "1e29", "100000000000000000000000000000", "0.123456789012345",
    "0.123456789012346", "12345678901234.5", "12345678901234.6", "1e-300", "1.00000000000001e-300", "5", "5.0",
    "7", "-3", "0", "-0", "999999999", "1000000000", "4611686018427387904", "4611686018427387905",
};
enum { NTRICKY = sizeof tricky / sizeof tricky[0] };

/* Checks ranks and spellings of column col[0..n) against dec_cmp: equal
 * values one rank, lower values lower ranks, each published in the first
 * spelling of its value. */
static void expect_exact(const char *const *col, size_t n, const uint32_t *ranks, const char *const *texts,
                         uint32_t count)
{
    for (size_t i = 0; i < n; i++) {
        assert_true(ranks[i] < count);
        for (size_t j = 0; j < n; j++) {
            const int c = dec_cmp_str(col[i], col[j]);
            const int r = (ranks[i] > ranks[j]) - (ranks[i] < ranks[j]);
            if ((c > 0) - (c < 0) != r) fail_msg("%s (rank %u) against %s (rank %u)", col[i], ranks[i], col[j], ranks[j]);
        }
        size_t first = 0;
        while (dec_cmp_str(col[first], col[i]) != 0) first++;
        if (texts) assert_string_equal(texts[ranks[i]], col[first]);
    }
}

/* A random column of the tricky values. */
static void tricky_column(tu_rng *g, const char **col, size_t n)
{
    for (size_t i = 0; i < n; i++) col[i] = tricky[tu_below(g, NTRICKY)];
}

/* In memory: every order of the tricky values, from small canonical
 * integers first (the switch to the general mode) or not. */
static void test_dict_in_memory(void **state)
{
    (void)state;
    tu_rng g = {21};
    for (int rep = 0; rep < 200; rep++) {
        const size_t n = 1 + tu_below(&g, 120);
        const char *col[120];
        tricky_column(&g, col, n);
        ak_error err;
        ak_err_clear(&err);
        numdict d;
        numdict_init(&d);
        uint32_t codes[120];
        for (size_t i = 0; i < n; i++) assert_int_equal(numdict_add(&d, col[i], strlen(col[i]), codes, i, &err), 0);
        double *values;
        const char **texts;
        strbuf spellings;
        uint32_t count;
        assert_int_equal(numdict_finish(&d, codes, n, &values, &texts, &spellings, &count, &err), ANONKIT_OK);
        expect_exact(col, n, codes, texts, count);
        for (uint32_t r = 1; r < count; r++) assert_true(values[r - 1] <= values[r]); /* doubles: nearest, in order */
        free(values);
        free(texts);
        strbuf_free(&spellings);
        numdict_free(&d);
    }
}

/* Pairs of distinct values whose doubles are equal or nearly so, in both
 * orders of first appearance (a sort that left equal doubles alone would
 * keep one of the two orders wrong), in memory and streaming. */
static void test_dict_ties(void **state)
{
    (void)state;
    static const char *const pairs[][2] = {
        {"9223372036854775807", "9.22337203685478e18"},   /* 2^63 and 2^63 + 4096 as doubles */
        {"-9223372036854775808", "-9.22337203685478e18"},
        {"9007199254740992", "9007199254740993"},         /* both round to 2^53 */
        {"-9007199254740992", "-9007199254740993"},
        {"9223372036854775806", "9223372036854775807"},
        {"4611686018427387904", "4611686018427387905"},
    };
    for (size_t p = 0; p < sizeof pairs / sizeof pairs[0]; p++)
        for (int swap = 0; swap < 2; swap++)
            for (int streaming = 0; streaming < 2; streaming++) {
                const char *col[3] = {"1.5", pairs[p][swap], pairs[p][!swap]}; /* (1.5: the general mode at once) */
                ak_error err;
                ak_err_clear(&err);
                numdict d;
                numdict_init(&d);
                d.streaming = streaming;
                uint32_t codes[3];
                for (size_t i = 0; i < 3; i++)
                    assert_int_equal(numdict_add(&d, col[i], strlen(col[i]), codes, i, &err), 0);
                double *values;
                const char **texts;
                strbuf spellings;
                uint32_t count;
                numdict_map map;
                if (streaming) {
                    assert_int_equal(numdict_absorb(&d, codes, 3, &err), ANONKIT_OK);
                    assert_int_equal(numdict_finish_stream(&d, &values, &texts, &spellings, &count, &map, &err),
                                     ANONKIT_OK);
                    numdict_map_codes(&map, codes, 3);
                    numdict_map_free(&map);
                } else {
                    assert_int_equal(numdict_finish(&d, codes, 3, &values, &texts, &spellings, &count, &err),
                                     ANONKIT_OK);
                }
                assert_int_equal(count, 3);
                expect_exact(col, 3, codes, texts, count);
                free(values);
                free(texts);
                strbuf_free(&spellings);
                numdict_free(&d);
            }
}

/* Streaming (the out-of-core loads): blocks absorbed, a second piece read
 * on its own and merged, the map ranking every provisional code. */
static void test_dict_streaming(void **state)
{
    (void)state;
    tu_rng g = {22};
    for (int rep = 0; rep < 200; rep++) {
        const size_t n = 2 + tu_below(&g, 119);
        const char *col[120];
        tricky_column(&g, col, n);
        const size_t half = 1 + tu_below(&g, n - 1);
        ak_error err;
        ak_err_clear(&err);
        numdict d, b;
        numdict_init(&d);
        numdict_init(&b);
        d.streaming = b.streaming = 1;
        uint32_t prov[120];
        for (size_t i = 0; i < n; i++) {
            numdict *into = i < half ? &d : &b;
            assert_int_equal(numdict_add(into, col[i], strlen(col[i]), prov, i, &err), 0);
        }
        assert_int_equal(numdict_absorb(&d, prov, half, &err), ANONKIT_OK);
        assert_int_equal(numdict_absorb(&b, prov + half, n - half, &err), ANONKIT_OK);
        uint32_t *id_map;
        assert_int_equal(numdict_merge_stream(&d, &b, &id_map, &err), ANONKIT_OK);
        for (size_t i = half; id_map && i < n; i++)
            if (prov[i] < NUMDICT_INT_LOW) prov[i] = id_map[prov[i]];
        free(id_map);
        double *values;
        const char **texts;
        strbuf spellings;
        uint32_t count;
        numdict_map map;
        assert_int_equal(numdict_finish_stream(&d, &values, &texts, &spellings, &count, &map, &err), ANONKIT_OK);
        numdict_map_codes(&map, prov, n);
        expect_exact(col, n, prov, texts, count);
        free(values);
        free(texts);
        strbuf_free(&spellings);
        numdict_map_free(&map);
        numdict_free(&d);
        numdict_free(&b);
    }
}

/* numdict_add refuses what it cannot order, with its own status. */
static void test_dict_refuses(void **state)
{
    (void)state;
    static const char *const refused[] = {"9223372036854775808", "123456789012345678901234567890",
                                          "0.1234567890123456", "1e-400"};
    for (size_t c = 0; c < sizeof refused / sizeof refused[0]; c++) {
        ak_error err;
        ak_err_clear(&err);
        numdict d;
        numdict_init(&d);
        uint32_t codes[2];
        assert_int_equal(numdict_add(&d, "5", 1, codes, 0, &err), 0);
        assert_int_equal(numdict_add(&d, refused[c], strlen(refused[c]), codes, 1, &err), NUMDICT_INEXACT);
        numdict_free(&d);
    }
}

/* ------------------------------------------------ through the command line */

/* Runs `anonkit ARGS` with stderr into errf; returns the exit status. */
static int run(const char *args, const char *errf)
{
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "'%s' %s >/dev/null 2>'%s'", ANONKIT_BINARY, args, errf);
    const int status = system(cmd);
    assert_true(WIFEXITED(status));
    return WEXITSTATUS(status);
}

/* Splits a published numeric text into [lo, hi] (" - " separates a range
 * with a negative bound, else a '-' after a digit or a point). */
static void split_range(const char *text, size_t len, const char **lo, size_t *lolen, const char **hi, size_t *hilen)
{
    *lo = *hi = text;
    *lolen = *hilen = len;
    const char *spaced = strstr(text, " - ");
    if (spaced && (size_t)(spaced - text) < len) {
        *lolen = (size_t)(spaced - text);
        *hi = spaced + 3;
        *hilen = len - *lolen - 3;
        return;
    }
    for (size_t i = 1; i + 1 < len; i++)
        if (text[i] == '-' && ((text[i - 1] >= '0' && text[i - 1] <= '9') || text[i - 1] == '.')) {
            *lolen = i;
            *hi = text + i + 1;
            *hilen = len - i - 1;
            return;
        }
}

/* The fields of one CSV line without quotes (the tables here need none). */
static size_t fields(char *line, char **f, size_t max)
{
    size_t n = 0;
    for (char *p = line; n < max;) {
        f[n++] = p;
        char *comma = strchr(p, ',');
        if (!comma) break;
        *comma = '\0';
        p = comma + 1;
    }
    return n;
}

/* Every published row of out (columns rid, a, b, s in some order of rows)
 * covers its input row's exact a and b: lo <= value <= hi as decimals. */
static void expect_covered(const char *out, const char *const (*rows)[2], size_t nrows, const char *what)
{
    char *text = tu_read_file(out, NULL);
    if (!text) fail_msg("%s: no output", what);
    char *save = NULL;
    char *line = strtok_r(text, "\n", &save);
    assert_non_null(line);
    assert_string_equal(line, "rid,a,b,s");
    size_t seen = 0;
    while ((line = strtok_r(NULL, "\n", &save))) {
        char *f[4];
        assert_int_equal(fields(line, f, 4), 4);
        const size_t rid = (size_t)strtoul(f[0], NULL, 10);
        assert_true(rid < nrows);
        for (int q = 0; q < 2; q++) {
            const char *lo, *hi;
            size_t lolen, hilen;
            if (strcmp(f[1 + q], "*") == 0) fail_msg("%s: row %zu suppressed", what, rid);
            split_range(f[1 + q], strlen(f[1 + q]), &lo, &lolen, &hi, &hilen);
            const char *v = rows[rid][q];
            if (dec_cmp(lo, lolen, v, strlen(v)) > 0 || dec_cmp(v, strlen(v), hi, hilen) > 0)
                fail_msg("%s: row %zu publishes %s for %s", what, rid, f[1 + q], v);
        }
        seen++;
    }
    assert_int_equal(seen, nrows);
    free(text);
}

/* Every algorithm that takes numeric QIs without a hierarchy. Incognito is
 * not here: it needs a hierarchy for every QI and publishes its labels,
 * whose texts the hierarchy file gives. */
static const char *const algorithms[] = {
    "--algorithm mondrian",
    "--algorithm mondrian --threads 1",
    "--algorithm rothko-t --memory 4M",
    "--algorithm rothko-s --memory 4M --seed 3",
    "--algorithm hilbert",
    "--algorithm hilbert --memory 4M",
    "--algorithm hilbert-fast",
    "--algorithm idistance",
    "--algorithm idistance --memory 4M",
    "--algorithm idistance-fast",
};

/* Writes rows (rid, a, b, s) to path. */
static void write_table(const char *path, const char *const (*rows)[2], size_t n, tu_rng *g)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "rid,a,b,s\n");
    for (size_t i = 0; i < n; i++) fprintf(f, "%zu,%s,%s,%c\n", i, rows[i][0], rows[i][1], (char)('x' + tu_below(g, 3)));
    assert_int_equal(fclose(f), 0);
}

/* Anonymizes path with every algorithm and proves every row covered. */
static void anonymize_all(const char *in, const char *const (*rows)[2], size_t n, int k)
{
    const char *out = tu_path(tu_group_dir, "out.csv"), *errf = tu_path(tu_group_dir, "err.txt");
    for (size_t a = 0; a < sizeof algorithms / sizeof algorithms[0]; a++) {
        char args[4096];
        snprintf(args, sizeof args, "anonymize '%s' --qi a,b --k %d %s -o '%s'", in, k, algorithms[a], out);
        const int rc = run(args, errf);
        if (rc != 0) {
            char *msg = tu_read_file(errf, NULL);
            fail_msg("%s: exit %d: %s", algorithms[a], rc, msg ? msg : "");
        }
        expect_covered(out, rows, n, algorithms[a]);
        /* and anonkit metrics, which compares them with the original exactly, agrees */
        snprintf(args, sizeof args, "metrics '%s' '%s' --qi a,b", in, out);
        if (run(args, errf) != 0) {
            char *msg = tu_read_file(errf, NULL);
            fail_msg("metrics of %s: %s", algorithms[a], msg ? msg : "");
        }
    }
}

/* The case of the report: 9007199254740993, ...995 and ...997, two rows
 * each, at k = 2: doubles cannot tell ...995 from ...997 (both round to
 * ...996), and ...997 was published inside 9007199254740993-9007199254740995. */
static void test_cli_beyond_2_53(void **state)
{
    (void)state;
    static const char *const rows[][2] = {
        {"9007199254740993", "1"}, {"9007199254740995", "1"}, {"9007199254740997", "1"},
        {"9007199254740997", "1"}, {"9007199254740995", "1"}, {"9007199254740993", "1"},
    };
    tu_rng g = {5};
    const char *in = tu_path(tu_group_dir, "in2_53.csv");
    write_table(in, rows, 6, &g);
    anonymize_all(in, rows, 6, 2);
}

/* Random tables of the tricky values in both QIs, at several k. */
static void test_cli_tricky(void **state)
{
    (void)state;
    tu_rng g = {31};
    for (int rep = 0; rep < 2; rep++) {
        enum { N = 300 };
        static const char *rows[N][2];
        for (size_t i = 0; i < N; i++) {
            rows[i][0] = tricky[tu_below(&g, NTRICKY)];
            rows[i][1] = tricky[tu_below(&g, NTRICKY)];
        }
        const char *in = tu_path(tu_group_dir, "tricky.csv");
        write_table(in, (const char *const(*)[2])rows, N, &g);
        anonymize_all(in, (const char *const(*)[2])rows, N, 2 + rep);
    }
}

/* A value anonkit cannot order exactly is refused, naming file and line,
 * and nothing is written, in memory and out of core. */
static void test_cli_refuses(void **state)
{
    (void)state;
    static const char *const bad[] = {"123456789012345678901234567890", "9223372036854775808", "0.1234567890123456"};
    const char *in = tu_path(tu_group_dir, "bad.csv"), *out = tu_path(tu_group_dir, "bad-out.csv"),
               *errf = tu_path(tu_group_dir, "bad-err.txt");
    for (size_t c = 0; c < sizeof bad / sizeof bad[0]; c++)
        for (int ooc = 0; ooc < 2; ooc++) {
            char table[512];
            snprintf(table, sizeof table, "rid,a,b,s\n0,1,2,x\n1,3,4,y\n2,%s,5,x\n3,6,7,y\n", bad[c]);
            tu_write_file(in, table);
            remove(out);
            char args[4096];
            snprintf(args, sizeof args, "anonymize '%s' --qi a,b --k 2 %s -o '%s'", in,
                     ooc ? "--algorithm rothko-t --memory 4M" : "", out);
            assert_int_equal(run(args, errf), 1);
            char *msg = tu_read_file(errf, NULL);
            assert_non_null(msg);
            char want[4200];
            snprintf(want, sizeof want, "%s:4:", in); /* the header is line 1 */
            if (!strstr(msg, want) || !strstr(msg, bad[c]) || !strstr(msg, "more digits than anonkit can order exactly"))
                fail_msg("%s: %s", bad[c], msg);
            free(msg);
            FILE *f = fopen(out, "r");
            if (f) fclose(f);
            assert_null(f);
        }
}

/* anonkit metrics, which has the original, refuses a published file whose
 * ranges cannot each cover a row of their own: the output the doubles once
 * gave (...997 published as ...995, a value with two rows in the original
 * but four published) fails, naming a line of it; a true anonymization of
 * the same rows, and a file whose ranges do cover them, pass. */
static void test_cli_metrics_covers(void **state)
{
    (void)state;
    const char *orig = tu_path(tu_group_dir, "m-orig.csv"), *pub = tu_path(tu_group_dir, "m-pub.csv"),
               *errf = tu_path(tu_group_dir, "m-err.txt"), *out = tu_path(tu_group_dir, "m-out.csv");
    tu_write_file(orig, "id,a,s\n1,9007199254740993,x\n2,9007199254740995,y\n3,9007199254740997,x\n"
                        "4,9007199254740993,y\n5,9007199254740997,z\n6,9007199254740995,y\n");
    char args[4096];
    /* rounded: ...997 (rows 3 and 5) published as ...995 */
    tu_write_file(pub, "id,a,s\n1,9007199254740993,x\n2,9007199254740995,y\n3,9007199254740995,x\n"
                       "4,9007199254740993,y\n5,9007199254740995,z\n6,9007199254740995,y\n");
    snprintf(args, sizeof args, "metrics '%s' '%s' --qi a", orig, pub);
    assert_int_equal(run(args, errf), 1);
    char *msg = tu_read_file(errf, NULL);
    assert_non_null(msg);
    char want[4200];
    snprintf(want, sizeof want, "%s:3:", pub); /* the first line of the range that finds no value left */
    if (!strstr(msg, want) || !strstr(msg, "does not cover")) fail_msg("%s", msg);
    free(msg);
    /* covered: ranges that hold the rows' values, in another order */
    tu_write_file(pub, "id,a,s\n6,9007199254740995-9007199254740997,y\n1,9007199254740993,x\n"
                       "3,9007199254740995-9007199254740997,x\n4,9007199254740993,y\n"
                       "5,9007199254740995-9007199254740997,z\n2,9007199254740995-9007199254740997,y\n");
    assert_int_equal(run(args, errf), 0);
    /* a range one below what its rows need: ...993-...996 holds no ...997 */
    tu_write_file(pub, "id,a,s\n1,9007199254740993-9007199254740996,x\n2,9007199254740993-9007199254740996,y\n"
                       "3,9007199254740997,x\n4,9007199254740993-9007199254740996,y\n"
                       "5,9007199254740993-9007199254740996,z\n6,9007199254740993-9007199254740996,y\n");
    assert_int_equal(run(args, errf), 1);
    /* every algorithm's output passes */
    for (size_t a = 0; a < sizeof algorithms / sizeof algorithms[0]; a++) {
        snprintf(args, sizeof args, "anonymize '%s' --qi a --k 2 %s -o '%s'", orig, algorithms[a], out);
        assert_int_equal(run(args, errf), 0);
        snprintf(args, sizeof args, "metrics '%s' '%s' --qi a", orig, out);
        if (run(args, errf) != 0) {
            char *m = tu_read_file(errf, NULL);
            fail_msg("%s: %s", algorithms[a], m ? m : "");
        }
    }
}

/* anonkit recode keys values by doubles (src/publish/rules.c): a rule bound
 * or an input value beyond ±2^53 is refused with its file and line, not
 * routed into a neighbour's region, while rules within 2^53 still recode. */
static void test_cli_recode_refuses_wide(void **state)
{
    (void)state;
    const char *in = tu_path(tu_group_dir, "r-in.csv"), *rules = tu_path(tu_group_dir, "r-rules.csv"),
               *out = tu_path(tu_group_dir, "r-out.csv"), *errf = tu_path(tu_group_dir, "r-err.txt"),
               *wide = tu_path(tu_group_dir, "r-wide.csv");
    char args[8192], want[4200];
    /* rules whose bounds are wide integers */
    tu_write_file(in, "id,a,s\n1,9007199254740993,x\n2,9007199254740995,y\n3,9007199254740997,x\n"
                      "4,9007199254740993,y\n5,9007199254740997,z\n6,9007199254740995,y\n");
    snprintf(args, sizeof args, "anonymize '%s' --qi a --k 2 -o '%s' --rules '%s'", in, out, rules);
    assert_int_equal(run(args, errf), 0);
    snprintf(args, sizeof args, "recode --rules '%s' '%s' -o '%s'", rules, in, out);
    assert_int_equal(run(args, errf), 1);
    char *msg = tu_read_file(errf, NULL);
    assert_non_null(msg);
    snprintf(want, sizeof want, "%s:", rules);
    if (!strstr(msg, want) || !strstr(msg, "more digits than the rules can compare exactly")) fail_msg("%s", msg);
    free(msg);
    /* rules within 2^53, an input value beyond it */
    tu_write_file(in, "id,a,s\n1,9007199254740990,x\n2,9007199254740991,y\n3,9007199254740992,x\n"
                      "4,9007199254740990,y\n");
    snprintf(args, sizeof args, "anonymize '%s' --qi a --k 2 -o '%s' --rules '%s'", in, out, rules);
    assert_int_equal(run(args, errf), 0);
    snprintf(args, sizeof args, "recode --rules '%s' '%s' -o '%s'", rules, in, out);
    assert_int_equal(run(args, errf), 0);
    tu_write_file(wide, "id,a,s\n1,9007199254740991,x\n2,9007199254740993,y\n");
    snprintf(args, sizeof args, "recode --rules '%s' '%s' -o '%s'", rules, wide, out);
    assert_int_equal(run(args, errf), 1);
    msg = tu_read_file(errf, NULL);
    assert_non_null(msg);
    snprintf(want, sizeof want, "%s:3:", wide);
    if (!strstr(msg, want) || !strstr(msg, "9007199254740993")) fail_msg("%s", msg);
    free(msg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dec_cmp),         cmocka_unit_test(test_parse_rule),
        cmocka_unit_test(test_dict_in_memory),  cmocka_unit_test(test_dict_ties),
        cmocka_unit_test(test_dict_streaming),
        cmocka_unit_test(test_dict_refuses),    cmocka_unit_test(test_cli_beyond_2_53),
        cmocka_unit_test(test_cli_tricky),      cmocka_unit_test(test_cli_refuses),
        cmocka_unit_test(test_cli_metrics_covers), cmocka_unit_test(test_cli_recode_refuses_wide),
    };
    return cmocka_run_group_tests(tests, tu_group_setup, tu_group_teardown);
}
