/* test_numdict.c — the dictionary of a numeric QI (core/numdict), against a
 * model built here with strtod and qsort: a row's code is the rank of its
 * value among the distinct values, values come out ascending, and each is
 * published in the first spelling the input gave it — in integer mode,
 * after the switch to the general mode at any row, and after the fallback of
 * a wide integer range; numdict_add_padded and numdict_finish_parts give
 * numdict_add's and numdict_finish's results; the streaming map ranks every
 * provisional code; ak_num_parse agrees with strtod and rejects what is not
 * a finite number; numdict_format_int writes what printf writes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/numparse.h"
#include "core/numdict.h"
#include "testutil.h"

enum { TEXT = 24 };

/* A column of n texts (TEXT bytes each, NUL-terminated) of the given kind:
 * 0 canonical integers in a narrow range; 1 canonical integers of up to nine
 * digits over a wide range (few values, far apart); 2 mixed: the same small
 * numbers in other spellings ("007", "+7", "7.0", "7e0", "-0"), decimals,
 * integers of ten and more digits; 3 integers, then from a random row on
 * decimals too (the switch to the general mode mid-column). */
static char *make_column(tu_rng *g, size_t n, int kind)
{
    char *col = malloc(n * TEXT + 1);
    assert_non_null(col);
    const size_t switch_at = kind == 3 ? tu_below(g, n + 1) : 0;
    for (size_t i = 0; i < n; i++) {
        char *t = col + i * TEXT;
        const long long small = (long long)tu_below(g, 101) - 50;
        int k = kind == 0 ? 0 : kind == 1 ? 1 : kind == 3 ? (i < switch_at ? 0 : (int)tu_below(g, 2) * 2 + 2) : (int)tu_below(g, 9);
        switch (k) {
        case 0: snprintf(t, TEXT, "%lld", small); break;
        case 1: snprintf(t, TEXT, "%lld", (long long)tu_below(g, 1000000000) - 500000000); break;
        case 2: snprintf(t, TEXT, "%lld.%02d", small, (int)tu_below(g, 4) * 25); break;
        case 3: snprintf(t, TEXT, "%03lld", small < 0 ? -small : small); break;
        case 4: snprintf(t, TEXT, "+%lld", small < 0 ? -small : small); break;
        case 5: snprintf(t, TEXT, "%llde0", small); break;
        case 6: snprintf(t, TEXT, "%s", tu_below(g, 2) ? "-0" : "0.0"); break;
        case 7: snprintf(t, TEXT, "%lld", 1000000000LL + (long long)tu_below(g, 5)); break;
        default: snprintf(t, TEXT, "%lld", small); break;
        }
    }
    return col;
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The model: the distinct values ascending, the first spelling of each and
 * every row's rank. */
typedef struct model {
    double *values;
    const char **first;
    uint32_t *rank;
    uint32_t count;
} model;

static void make_model(const char *col, size_t n, model *m)
{
    double *v = malloc((n ? n : 1) * sizeof *v);
    m->values = malloc((n ? n : 1) * sizeof *m->values);
    m->first = malloc((n ? n : 1) * sizeof *m->first);
    m->rank = malloc((n ? n : 1) * sizeof *m->rank);
    assert_true(v && m->values && m->first && m->rank);
    for (size_t i = 0; i < n; i++) {
        char *end;
        v[i] = strtod(col + i * TEXT, &end);
        assert_int_equal(*end, '\0');
        if (v[i] == 0) v[i] = 0; /* -0 is 0 */
        m->values[i] = v[i];
    }
    qsort(m->values, n, sizeof *m->values, cmp_double);
    m->count = 0;
    for (size_t i = 0; i < n; i++)
        if (i == 0 || m->values[i] != m->values[m->count - 1]) m->values[m->count++] = m->values[i];
    for (uint32_t c = 0; c < m->count; c++) m->first[c] = NULL;
    for (size_t i = 0; i < n; i++) {
        const double *at = bsearch(&v[i], m->values, m->count, sizeof *m->values, cmp_double);
        assert_non_null(at);
        m->rank[i] = (uint32_t)(at - m->values);
        if (!m->first[m->rank[i]]) m->first[m->rank[i]] = col + i * TEXT;
    }
    free(v);
}

static void free_model(model *m)
{
    free(m->values);
    free(m->first);
    free(m->rank);
}

/* The result of numdict_finish against the model: ranks, values, and the
 * published spelling (texts, or the integer itself when texts is NULL;
 * unless !spellings). */
static void expect_finish(const model *m, size_t n, const uint32_t *codes, const double *values,
                          const char **texts, uint32_t count, int spellings)
{
    assert_int_equal(count, m->count);
    for (size_t i = 0; i < n; i++)
        if (codes[i] != m->rank[i]) fail_msg("row %zu: rank %u, expected %u", i, codes[i], m->rank[i]);
    for (uint32_t c = 0; c < count; c++) {
        assert_true(values[c] == m->values[c]);
        assert_false(signbit(values[c]) && values[c] == 0);
        if (!spellings) continue;
        char buf[24];
        const char *spelled = texts ? texts[c] : buf;
        if (!texts) {
            assert_true(values[c] == floor(values[c]));
            numdict_format_int(buf, (int64_t)values[c]);
        }
        if (strcmp(spelled, m->first[c])) fail_msg("value %g spelled '%s', first seen as '%s'", values[c], spelled, m->first[c]);
    }
}

/* Adds the column to a fresh dictionary (padded: through numdict_add_padded
 * from buffers with junk after each text) and finishes it, in one part or
 * with the rows from `split` on moved by numdict_finish_parts. */
static void run_dict(const char *col, size_t n, const model *m, int padded, size_t split)
{
    ak_error err;
    ak_err_clear(&err);
    numdict d;
    numdict_init(&d);
    uint32_t *codes = malloc((n ? n : 1) * sizeof *codes);
    assert_non_null(codes);
    for (size_t i = 0; i < n; i++) {
        const char *t = col + i * TEXT;
        const size_t len = strlen(t);
        if (padded) {
            char buf[TEXT + 8];
            memset(buf, '7', sizeof buf); /* digits after the text: must not be read as part of it */
            memcpy(buf, t, len);
            assert_int_equal(numdict_add_padded(&d, buf, len, codes, i, &err), 0);
        } else {
            assert_int_equal(numdict_add(&d, t, len, codes, i, &err), 0);
        }
    }
    double *values;
    const char **texts;
    strbuf spellings;
    uint32_t count;
    if (split < n) {
        uint32_t *more = malloc((n - split) * sizeof *more);
        assert_non_null(more);
        memcpy(more, codes + split, (n - split) * sizeof *more);
        for (size_t i = split; i < n; i++) codes[i] = 0xdeadbeef;
        assert_int_equal(numdict_finish_parts(&d, codes, split, more, n - split, &values, &texts, &spellings, &count,
                                              &err),
                         ANONKIT_OK);
        free(more);
    } else {
        assert_int_equal(numdict_finish(&d, codes, n, &values, &texts, &spellings, &count, &err), ANONKIT_OK);
    }
    expect_finish(m, n, codes, values, texts, count, 1);
    free(values);
    free(texts);
    strbuf_free(&spellings);
    numdict_free(&d);
    free(codes);
}

static void test_ranks_and_spellings(void **state)
{
    (void)state;
    tu_rng g = {314};
    const size_t sizes[] = {0, 1, 2, 10, 1000, 20000};
    for (int kind = 0; kind < 4; kind++)
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
            const size_t n = sizes[si];
            char *col = make_column(&g, n, kind);
            model m;
            make_model(col, n, &m);
            for (int padded = 0; padded < 2; padded++) {
                run_dict(col, n, &m, padded, n);
                if (n) run_dict(col, n, &m, padded, tu_below(&g, n)); /* two parts */
            }
            free_model(&m);
            free(col);
        }
}

/* Texts that are not finite numbers are refused with -1; the dictionary can
 * still be freed (and used, for the rows before). */
static void test_not_numbers(void **state)
{
    (void)state;
    static const char *const bad[] = {"", "-", "+", ".", "1.2.3", "1e", "e5", " 1", "1 ", "abc", "12a", "nan", "inf",
                                      "-inf", "1e999", "--1", "1,5"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        for (int general = 0; general < 2; general++) {
            numdict d;
            numdict_init(&d);
            ak_error err;
            ak_err_clear(&err);
            uint32_t codes[3];
            assert_int_equal(numdict_add(&d, "5", 1, codes, 0, &err), 0);
            if (general) assert_int_equal(numdict_add(&d, "2.5", 3, codes, 1, &err), 0);
            else assert_int_equal(numdict_add(&d, "3", 1, codes, 1, &err), 0);
            if (numdict_add(&d, bad[i], strlen(bad[i]), codes, 2, &err) != -1) fail_msg("'%s' accepted", bad[i]);
            char padded[32];
            memset(padded, '1', sizeof padded);
            memcpy(padded, bad[i], strlen(bad[i]));
            if (numdict_add_padded(&d, padded, strlen(bad[i]), codes, 2, &err) != -1)
                fail_msg("'%s' accepted (padded)", bad[i]);
            double v;
            assert_int_equal(ak_num_parse(bad[i], strlen(bad[i]), &v), -1);
            double *values;
            const char **texts;
            strbuf spellings;
            uint32_t count;
            assert_int_equal(numdict_finish(&d, codes, 2, &values, &texts, &spellings, &count, &err), ANONKIT_OK);
            assert_int_equal(count, 2);
            assert_int_equal(codes[0], 1);
            assert_int_equal(codes[1], 0);
            free(values);
            free(texts);
            strbuf_free(&spellings);
            numdict_free(&d);
        }
    }
}

/* ak_num_parse equals strtod on random decimal texts of every length, in
 * the fast path's reach (up to 15 digits) and beyond it, with exponents too. */
static void test_parse_against_strtod(void **state)
{
    (void)state;
    tu_rng g = {2718};
    for (int i = 0; i < 200000; i++) {
        char t[64];
        int len = 0;
        const int sign = (int)tu_below(&g, 3);
        if (sign == 1) t[len++] = '-';
        if (sign == 2) t[len++] = '+';
        const int digits = 1 + (int)tu_below(&g, 20), point = (int)tu_below(&g, digits + 2);
        for (int d = 0; d < digits; d++) {
            if (d == point && d > 0) t[len++] = '.';
            t[len++] = (char)('0' + tu_below(&g, 10));
        }
        if (tu_below(&g, 10) == 0) len += snprintf(t + len, sizeof t - (size_t)len, "e%d", (int)tu_below(&g, 40) - 20);
        t[len] = '\0';
        char *end;
        double want = strtod(t, &end);
        assert_int_equal(end - t, len);
        if (want == 0) want = 0;
        double got = -1;
        if (ak_num_parse(t, (size_t)len, &got) != 0) fail_msg("'%s' refused", t);
        if (memcmp(&got, &want, sizeof got) != 0) fail_msg("'%s': %.17g, strtod %.17g", t, got, want);
    }
}

/* Streaming: provisional codes absorbed in blocks, then ranked through the
 * map, one at a time and in batches, for integer columns of narrow and wide
 * range and mixed columns. */
static void test_stream_map(void **state)
{
    (void)state;
    tu_rng g = {99};
    for (int kind = 0; kind < 4; kind++)
        for (int rep = 0; rep < 3; rep++) {
            const size_t n = 1 + tu_below(&g, 5000);
            char *col = make_column(&g, n, kind);
            model m;
            make_model(col, n, &m);
            ak_error err;
            ak_err_clear(&err);
            numdict d;
            numdict_init(&d);
            d.streaming = 1;
            uint32_t *prov = malloc(n * sizeof *prov);
            assert_non_null(prov);
            uint32_t block[64];
            for (size_t at = 0; at < n;) {
                size_t k = 1 + tu_below(&g, 64);
                if (k > n - at) k = n - at;
                for (size_t i = 0; i < k; i++) {
                    const char *t = col + (at + i) * TEXT;
                    assert_int_equal(numdict_add(&d, t, strlen(t), block, i, &err), 0);
                }
                assert_int_equal(numdict_absorb(&d, block, k, &err), ANONKIT_OK);
                memcpy(prov + at, block, k * sizeof *block);
                at += k;
            }
            double *values;
            const char **texts;
            strbuf spellings;
            uint32_t count;
            numdict_map map;
            assert_int_equal(numdict_finish_stream(&d, &values, &texts, &spellings, &count, &map, &err), ANONKIT_OK);
            uint32_t *ranks = malloc(n * sizeof *ranks);
            assert_non_null(ranks);
            for (size_t i = 0; i < n; i++) ranks[i] = numdict_map_code(&map, prov[i]);
            expect_finish(&m, n, ranks, values, texts, count, 1);
            numdict_map_codes(&map, prov, n);
            assert_memory_equal(prov, ranks, n * sizeof *ranks);
            assert_true(numdict_map_bytes(&map, count) > 0);
            free(ranks);
            free(prov);
            free(values);
            free(texts);
            strbuf_free(&spellings);
            numdict_map_free(&map);
            numdict_free(&d);
            free_model(&m);
            free(col);
        }
}

/* A value first seen as a canonical integer and later in another spelling
 * ("5", then "2.5" turns the column general, then "5.0"): both the in-memory
 * and the streaming dictionary (the out-of-core loads) publish "5", the first
 * spelling, as numdict.h promises. The streaming one once published "5.0"
 * (its integer rows reached the map only at numdict_finish_stream), so that
 * Rothko-T wrote "5.0-6" where Mondrian wrote "5-6" for the same input. */
static void test_stream_first_spelling(void **state)
{
    (void)state;
    static const char *const col[] = {"5", "7", "2.5", "5.0", "7"};
    const size_t n = sizeof col / sizeof col[0];
    ak_error err;
    ak_err_clear(&err);
    for (int streaming = 0; streaming < 2; streaming++) {
        numdict d;
        numdict_init(&d);
        d.streaming = streaming;
        uint32_t codes[5];
        for (size_t i = 0; i < n; i++) assert_int_equal(numdict_add(&d, col[i], strlen(col[i]), codes, i, &err), 0);
        double *values;
        const char **texts;
        strbuf spellings;
        uint32_t count;
        numdict_map map;
        if (streaming) {
            assert_int_equal(numdict_absorb(&d, codes, n, &err), ANONKIT_OK);
            assert_int_equal(numdict_finish_stream(&d, &values, &texts, &spellings, &count, &map, &err), ANONKIT_OK);
        } else {
            assert_int_equal(numdict_finish(&d, codes, n, &values, &texts, &spellings, &count, &err), ANONKIT_OK);
        }
        assert_int_equal(count, 3);
        assert_non_null(texts);
        const char *five = texts[1];
        char copy[8];
        snprintf(copy, sizeof copy, "%s", five);
        free(values);
        free(texts);
        strbuf_free(&spellings);
        if (streaming) numdict_map_free(&map);
        numdict_free(&d);
        assert_string_equal(copy, "5");
    }
}

/* numdict_format_int against printf at every power of ten, its neighbours
 * and the ends of int64_t; numdict_popcount against a bit loop. */
static void test_format_and_popcount(void **state)
{
    (void)state;
    char buf[24], want[24];
    int64_t p = 1;
    for (int e = 0; e <= 18; e++, p = e <= 18 ? p * 10 : p) /* 10^0 .. 10^18 */
        for (int64_t d = -1; d <= 1; d++)
            for (int s = -1; s <= 1; s += 2) {
                const int64_t v = s * (p + d);
                assert_int_equal(numdict_format_int(buf, v), snprintf(want, sizeof want, "%" PRId64, v));
                assert_string_equal(buf, want);
            }
    assert_int_equal(numdict_format_int(buf, INT64_MAX), 19);
    assert_string_equal(buf, "9223372036854775807");
    assert_int_equal(numdict_format_int(buf, INT64_MIN), 20);
    assert_string_equal(buf, "-9223372036854775808");
    tu_rng g = {1};
    for (int i = 0; i < 10000; i++) {
        const uint64_t x = tu_next(&g) & tu_next(&g);
        uint32_t bits = 0;
        for (int b = 0; b < 64; b++) bits += (uint32_t)(x >> b & 1);
        assert_int_equal(numdict_popcount(x), bits);
    }
    assert_int_equal(numdict_popcount(UINT64_MAX), 64);
    assert_int_equal(numdict_popcount(0), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ranks_and_spellings), cmocka_unit_test(test_not_numbers),
        cmocka_unit_test(test_parse_against_strtod), cmocka_unit_test(test_stream_map),
        cmocka_unit_test(test_stream_first_spelling), cmocka_unit_test(test_format_and_popcount),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
