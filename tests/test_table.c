/* test_table.c — encoding of the input (docs/ARCHITECTURE.md §3 step 1): numeric codes
 * are ranks of distinct values (both dictionary modes), categorical codes are
 * depth-first leaf positions, sensitive codes follow first appearance, and
 * bad input is rejected with file, line and a clear message. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>

#include "common/numparse.h"
#include "core/numdict.h"
#include "core/partition.h"
#include "core/recode.h"
#include "core/table.h"
#include "testutil.h"


/* Loads text as a table with the given QIs (hierarchy file per QI or NULL). */
static int load(const char *text, size_t nqi, const char **qi, const char **hier, const char *sensitive,
                table **t, ak_error *err)
{
    const char *path = tu_path(tu_group_dir, "in.csv");
    tu_write_file(path, text);
    table_spec spec = {0};
    spec.path = path;
    spec.delimiter = ',';
    spec.nqi = nqi;
    spec.qi_names = qi;
    spec.hierarchy_paths = hier;
    spec.sensitive_name = sensitive;
    return table_load(t, &spec, err);
}

static void test_integer_mode_ranks(void **state)
{
    (void)state;
    const char *qi[] = {"a"};
    table *t;
    ak_error err;
    assert_int_equal(load("a\n30\n-5\n30\n7\n0\n", 1, qi, NULL, NULL, &t, &err), ANONKIT_OK);
    assert_int_equal(t->nrows, 5);
    const table_qi *a = &t->qi[0];
    assert_int_equal(a->ncodes, 4);
    const uint32_t expect[] = {3, 0, 3, 2, 1};
    for (int i = 0; i < 5; i++) assert_int_equal(a->codes[i], expect[i]);
    assert_true(a->values[0] == -5 && a->values[1] == 0 && a->values[2] == 7 && a->values[3] == 30);
    assert_null(a->texts); /* integers are spelled as themselves */
    char text[64];
    assert_int_equal(recode_value(t, 0, 0, 3, text, sizeof text), 7);
    assert_string_equal(text, "-5 - 30"); /* a negative bound: " - " (docs/hierarchies.md) */
    assert_int_equal(recode_value(t, 0, 2, 2, text, sizeof text), 1);
    assert_string_equal(text, "7");
    table_free(t);
}

static void test_general_mode_keeps_first_spelling(void **state)
{
    (void)state;
    const char *qi[] = {"a"};
    table *t;
    ak_error err;
    /* integers first, then a decimal switches modes; "007" and "7" are one value */
    assert_int_equal(load("a\n3\n10\n2.5\n007\n7\n1.0\n1\n", 1, qi, NULL, NULL, &t, &err), ANONKIT_OK);
    const table_qi *a = &t->qi[0];
    assert_int_equal(a->ncodes, 5); /* 1, 2.5, 3, 7, 10 */
    const uint32_t expect[] = {2, 4, 1, 3, 3, 0, 0};
    for (int i = 0; i < 7; i++) assert_int_equal(a->codes[i], expect[i]);
    assert_string_equal(a->texts[3], "007");
    assert_string_equal(a->texts[0], "1.0");
    assert_string_equal(a->texts[2], "3"); /* re-spelled exactly when leaving integer mode */
    table_free(t);
}

static void test_wide_range_falls_back(void **state)
{
    (void)state;
    const char *qi[] = {"a"};
    table *t;
    ak_error err;
    assert_int_equal(load("a\n999999999\n-999999999\n0\n999999999\n", 1, qi, NULL, NULL, &t, &err), ANONKIT_OK);
    const table_qi *a = &t->qi[0];
    assert_int_equal(a->ncodes, 3);
    assert_int_equal(a->codes[0], 2);
    assert_int_equal(a->codes[1], 0);
    assert_int_equal(a->codes[2], 1);
    assert_string_equal(a->texts[0], "-999999999");
    table_free(t);
}

static void test_negative_zero_is_zero(void **state)
{
    (void)state;
    double v;
    assert_int_equal(ak_num_parse("-0", 2, &v), 0);
    assert_true(v == 0 && !signbit(v));
    assert_int_equal(ak_num_parse("1e3", 3, &v), 0);
    assert_true(v == 1000);
    assert_int_equal(ak_num_parse("12.25", 5, &v), 0);
    assert_true(v == 12.25);
    assert_int_equal(ak_num_parse("", 0, &v), -1);
    assert_int_equal(ak_num_parse("abc", 3, &v), -1);
    assert_int_equal(ak_num_parse(" 1", 2, &v), -1);
    assert_int_equal(ak_num_parse("nan", 3, &v), -1);
    assert_int_equal(ak_num_parse("inf", 3, &v), -1);
}

/* Random integer columns: codes must be the rank among distinct values. */
static void test_random_ranks(void **state)
{
    (void)state;
    tu_rng rng = {7};
    for (int iter = 0; iter < 50; iter++) {
        size_t n = 1 + tu_below(&rng, 500);
        long long *vals = malloc(n * sizeof *vals);
        size_t cap = 16 + n * 24;
        char *text = malloc(cap);
        size_t used = (size_t)snprintf(text, cap, "a\n");
        long long span = (long long)tu_below(&rng, 2) ? 50 : 2000000000LL;
        int decimal = tu_below(&rng, 4) == 0;
        for (size_t i = 0; i < n; i++) {
            vals[i] = (long long)tu_below(&rng, (uint64_t)span) - span / 2;
            if (decimal && i == n / 2) used += (size_t)snprintf(text + used, cap - used, "%lld.0\n", vals[i]);
            else used += (size_t)snprintf(text + used, cap - used, "%lld\n", vals[i]);
        }
        const char *qi[] = {"a"};
        table *t;
        ak_error err;
        assert_int_equal(load(text, 1, qi, NULL, NULL, &t, &err), ANONKIT_OK);
        for (size_t i = 0; i < n; i++) {
            uint32_t below = 0; /* distinct values smaller than vals[i] */
            for (size_t j = 0; j < n; j++) {
                int smaller = vals[j] < vals[i], first = 1;
                for (size_t k = 0; k < j && smaller; k++)
                    if (vals[k] == vals[j]) first = 0;
                below += (uint32_t)(smaller && first);
            }
            assert_int_equal(t->qi[0].codes[i], below);
            assert_true(t->qi[0].values[below] == (double)vals[i]);
        }
        /* the writer's shortcut for integer columns makes recode_class_value's text */
        partition p;
        assert_int_equal(partition_init(&p, t->nrows, 1, &err), ANONKIT_OK);
        for (int box = 0; box < 20; box++) {
            uint32_t lo = (uint32_t)tu_below(&rng, t->qi[0].ncodes), hi = (uint32_t)tu_below(&rng, t->qi[0].ncodes);
            if (lo > hi) {
                const uint32_t tmp = lo;
                lo = hi;
                hi = tmp;
            }
            if (box == 0) hi = lo;
            uint32_t id;
            assert_int_equal(partition_add_class(&p, &lo, &hi, 1, &id, &err), ANONKIT_OK);
            for (int style = RECODE_GENERALIZE; style <= RECODE_RANGE; style++) {
                char want[128], got[48];
                const size_t wlen = recode_class_value(t, &p, NULL, (recode_style)style, id, 0, want, sizeof want);
                /* (a decimal, or a range too wide for counting, keeps spellings) */
                assert_int_equal(recode_is_int_range(t, &p, (recode_style)style, 0), t->qi[0].texts == NULL);
                if (t->qi[0].texts) continue;
                const size_t glen = recode_int_range((recode_style)style, lo, hi, t->qi[0].values[lo],
                                                     t->qi[0].values[hi], got);
                assert_int_equal(glen, wlen);
                assert_memory_equal(got, want, wlen);
            }
        }
        partition_free(&p);
        table_free(t);
        free(text);
        free(vals);
    }
}

static void test_categorical_and_sensitive(void **state)
{
    (void)state;
    const char *hpath = tu_path(tu_group_dir, "h.csv");
    /* file order interleaves the groups; codes follow the tree */
    tu_write_file(hpath, "a1;A;*\nb1;B;*\na2;A;*\n");
    const char *qi[] = {"c"};
    const char *hier[] = {hpath};
    table *t;
    ak_error err;
    assert_int_equal(load("c,s\nb1,x\na2,y\na1,x\n", 1, qi, hier, "s", &t, &err), ANONKIT_OK);
    assert_int_equal(t->qi[0].kind, ATTR_CATEGORICAL);
    assert_int_equal(t->qi[0].codes[0], 2); /* a1=0, a2=1, b1=2 */
    assert_int_equal(t->qi[0].codes[1], 1);
    assert_int_equal(t->qi[0].codes[2], 0);
    assert_int_equal(t->sensitive_codes[0], 0);
    assert_int_equal(t->sensitive_codes[1], 1);
    assert_int_equal(t->sensitive_codes[2], 0);
    assert_int_equal(t->sensitive_dict.count, 2);
    table_free(t);
}

static void test_bad_input(void **state)
{
    (void)state;
    const char *qi[] = {"a"};
    table *t = NULL;
    ak_error err;
    assert_int_equal(load("a,b\n1,2\n3\n", 1, qi, NULL, NULL, &t, &err), ANONKIT_E_INPUT);
    assert_int_equal(err.line, 3);
    assert_non_null(strstr(err.message, "expected 2 fields"));
    assert_int_equal(load("a\n1\nMale\n", 1, qi, NULL, NULL, &t, &err), ANONKIT_E_INPUT);
    assert_int_equal(err.line, 3);
    assert_non_null(strstr(err.message, "--hierarchy a=FILE"));
    const char *missing[] = {"zz"};
    assert_int_equal(load("a\n1\n", 1, missing, NULL, NULL, &t, &err), ANONKIT_E_USAGE);
    assert_non_null(strstr(err.message, "no column named 'zz'"));
    assert_int_equal(load("", 1, qi, NULL, NULL, &t, &err), ANONKIT_E_INPUT);
    assert_null(t);
    /* values missing from the hierarchy: the first with its line, up to 10 listed */
    const char *hpath = tu_path(tu_group_dir, "h2.csv");
    tu_write_file(hpath, "x;*\ny;*\n");
    const char *hier[] = {hpath};
    char text[2048] = "a\nx\n";
    for (int i = 0; i < 12; i++) {
        char row[32];
        snprintf(row, sizeof row, "bad%d\n", i);
        strcat(text, row);
    }
    assert_int_equal(load(text, 1, qi, hier, NULL, &t, &err), ANONKIT_E_INPUT);
    assert_int_equal(err.line, 3);
    assert_non_null(strstr(err.message, "'bad0'"));
    assert_non_null(strstr(err.message, "12 values are missing"));
    assert_non_null(strstr(err.message, "'bad9' (a, line 12)"));
    assert_null(strstr(err.message, "bad10"));
}

/* Loads path with the given threads; QIs x (numeric), c (categorical), sensitive s. */
static int load_big(const char *path, const char *hier_path, unsigned threads, table **t, ak_error *err)
{
    const char *qi[] = {"x", "c"};
    const char *hier[] = {NULL, hier_path};
    table_spec spec = {0};
    spec.path = path;
    spec.delimiter = ',';
    spec.nqi = 2;
    spec.qi_names = qi;
    spec.hierarchy_paths = hier;
    spec.sensitive_name = "s";
    spec.threads = threads;
    return table_load(t, &spec, err);
}

static void assert_same_table(const table *a, const table *b)
{
    assert_int_equal(a->nrows, b->nrows);
    for (uint32_t q = 0; q < a->nqi; q++) {
        assert_int_equal(a->qi[q].ncodes, b->qi[q].ncodes);
        assert_memory_equal(a->qi[q].codes, b->qi[q].codes, a->nrows * sizeof *a->qi[q].codes);
        if (a->qi[q].kind == ATTR_NUMERIC)
            assert_memory_equal(a->qi[q].values, b->qi[q].values, a->qi[q].ncodes * sizeof *a->qi[q].values);
    }
    assert_memory_equal(a->sensitive_codes, b->sensitive_codes, a->nrows * sizeof *a->sensitive_codes);
    assert_int_equal(a->sensitive_dict.count, b->sensitive_dict.count);
    for (uint32_t id = 0; id < a->sensitive_dict.count; id++)
        assert_string_equal(strmap_key(&a->sensitive_dict, id), strmap_key(&b->sensitive_dict, id));
}

/* Loads path on one thread and on two: both fail alike, on line fail_line
 * with the same message (returns the status), or both succeed with the
 * same table of `rows` rows (ANONKIT_OK: *two holds it, *one freed). */
static int load_one_and_two(const char *path, const char *hier_path, long fail_line, size_t rows, table **two)
{
    table *one = NULL;
    ak_error e1, e2;
    const int rc1 = load_big(path, hier_path, 1, &one, &e1), rc2 = load_big(path, hier_path, 2, two, &e2);
    assert_int_equal(rc1, rc2);
    if (rc1 != ANONKIT_OK) {
        assert_int_equal(e1.line, fail_line);
        assert_int_equal(e2.line, fail_line);
        assert_string_equal(e1.message, e2.message);
        return rc1;
    }
    assert_same_table(one, *two);
    assert_int_equal((*two)->nrows, rows);
    table_free(one);
    return ANONKIT_OK;
}

/* numdict_format_int writes what printf's %lld writes, for every length of
 * number, both signs and the extremes. */
static void test_format_int(void **state)
{
    (void)state;
    const int64_t fixed[] = {0, 1, -1, 9, 10, 99, 100, 101, 999, 1000, 123456789, -987654321, INT64_MAX, INT64_MIN,
                             INT64_MIN + 1, 2147483648LL, -2147483648LL};
    char buf[24], want[32];
    for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++) {
        const int len = numdict_format_int(buf, fixed[i]);
        snprintf(want, sizeof want, "%lld", (long long)fixed[i]);
        assert_string_equal(buf, want);
        assert_int_equal(len, (int)strlen(want));
    }
    tu_rng rng = {11};
    for (int i = 0; i < 100000; i++) {
        const int digits = 1 + (int)tu_below(&rng, 18);
        int64_t v = 0;
        for (int d = 0; d < digits; d++) v = v * 10 + (int64_t)tu_below(&rng, 10);
        if (tu_below(&rng, 2)) v = -v;
        const int len = numdict_format_int(buf, v);
        snprintf(want, sizeof want, "%lld", (long long)v);
        assert_string_equal(buf, want);
        assert_int_equal(len, (int)strlen(want));
    }
}

/* A large file is read in two pieces on two threads; the result must be the
 * sequential one, and anything unusual must give the sequential behaviour. */
/* Adds values[from .. to) to the streaming dictionary d in chunks of random
 * sizes, each absorbed as the streaming load does. */
static void stream_values(tu_rng *rng, numdict *d, const long long *values, size_t from, size_t to)
{
    uint32_t codes[64];
    ak_error err;
    while (from < to) {
        size_t n = 1 + tu_below(rng, 64);
        if (n > to - from) n = to - from;
        for (size_t i = 0; i < n; i++) {
            char text[32];
            const int len = snprintf(text, sizeof text, "%lld", values[from + i]);
            assert_int_equal(numdict_add(d, text, (size_t)len, codes, i, &err), 0);
        }
        assert_int_equal(numdict_absorb(d, codes, n, &err), ANONKIT_OK);
        from += n;
    }
}

static int cmp_ll(const void *a, const void *b)
{
    const long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}

/* A streaming dictionary (the out-of-core first scan) fed all values in one
 * run, or in two pieces merged, ends the same: the same ranks, the same rank
 * directory (base and range, which the memory budget counts) and the same
 * choice between bitmap and hashing, whatever the order the values came in;
 * every rank is the count of smaller distinct values. */
static void test_stream_pieces_alike(void **state)
{
    (void)state;
    tu_rng rng = {29};
    int hashed = 0, bitmap = 0, direct = 0;
    for (int iter = 0; iter < 60; iter++) {
        const size_t n = 1 + tu_below(&rng, 3000);
        long long *values = malloc(n * sizeof *values), *sorted = malloc(n * sizeof *sorted);
        assert_true(values && sorted);
        /* spans around the bitmap's limit (2^28 values) too; a piece may hold
         * the other's extremes, or values far apart from it */
        const long long spans[] = {50, 3000, 100000, 200000000, 300000000};
        const long long span = spans[tu_below(&rng, 5)];
        const size_t m = tu_below(&rng, n + 1);
        for (size_t i = 0; i < n; i++) {
            const long long shift = tu_below(&rng, 2) && i >= m ? span / 3 : 0;
            values[i] = 1 + (long long)tu_below(&rng, (uint64_t)span) + shift;
        }
        numdict whole, first, second;
        numdict_init(&whole);
        numdict_init(&first);
        numdict_init(&second);
        whole.streaming = first.streaming = second.streaming = 1;
        stream_values(&rng, &whole, values, 0, n);
        stream_values(&rng, &first, values, 0, m);
        stream_values(&rng, &second, values, m, n);
        uint32_t *id_map = NULL;
        ak_error err;
        assert_int_equal(numdict_merge_stream(&first, &second, &id_map, &err), ANONKIT_OK);
        free(id_map); /* (integers keep their codes) */
        numdict *dicts[2] = {&whole, &first};
        numdict_map maps[2];
        uint32_t counts[2];
        for (int w = 0; w < 2; w++) {
            double *vals;
            const char **texts;
            strbuf spellings;
            assert_int_equal(numdict_finish_stream(dicts[w], &vals, &texts, &spellings, &counts[w], &maps[w], &err),
                             ANONKIT_OK);
            free(vals);
            free(texts);
            strbuf_free(&spellings);
        }
        assert_int_equal(counts[0], counts[1]);
        assert_int_equal(maps[0].has_ids, maps[1].has_ids);
        assert_true(maps[0].int_base == maps[1].int_base);
        assert_true(maps[0].int_range == maps[1].int_range);
        hashed += maps[0].has_ids;
        bitmap += maps[0].int_words != NULL;
        direct += maps[0].int_rank != NULL; /* a small range's ranks kept directly too */
        assert_int_equal(maps[0].int_rank != NULL, maps[0].int_words != NULL && maps[0].int_range <= NUMDICT_DIRECT_RANGE);
        memcpy(sorted, values, n * sizeof *sorted);
        qsort(sorted, n, sizeof *sorted, cmp_ll);
        size_t distinct = 0;
        for (size_t i = 0; i < n; i++)
            if (i == 0 || sorted[i] != sorted[i - 1]) sorted[distinct++] = sorted[i];
        assert_int_equal(counts[0], distinct);
        for (size_t i = 0; i < n; i++) {
            const uint32_t code = (uint32_t)(values[i] + NUMDICT_INT_BIAS);
            const long long *at = bsearch(&values[i], sorted, distinct, sizeof *sorted, cmp_ll);
            assert_non_null(at);
            assert_int_equal(numdict_map_code(&maps[0], code), (uint32_t)(at - sorted));
            assert_int_equal(numdict_map_code(&maps[1], code), (uint32_t)(at - sorted));
            uint32_t batch[1] = {code};
            numdict_map_codes(&maps[1], batch, 1);
            assert_int_equal(batch[0], (uint32_t)(at - sorted));
        }
        for (int w = 0; w < 2; w++) numdict_map_free(&maps[w]);
        numdict_free(&whole);
        numdict_free(&first);
        numdict_free(&second);
        free(values);
        free(sorted);
    }
    print_message("%d dictionaries ranked through the bitmap (%d of them directly too), %d hashed\n", bitmap, direct,
                  hashed);
    assert_true(bitmap >= 20 && direct >= 5 && hashed >= 5);
}

/* Writes the parallel tests' hierarchy (leaves a, b, c) and gives its path in
 * hcopy and that of the input `name` in pcopy (both 4200 bytes). */
static void parallel_paths(const char *name, char *hcopy, char *pcopy)
{
    const char *hpath = tu_path(tu_group_dir, "hc.csv");
    tu_write_file(hpath, "a;A;*\nb;A;*\nc;B;*\n");
    snprintf(hcopy, 4200, "%s", hpath);
    snprintf(pcopy, 4200, "%s", tu_path(tu_group_dir, name));
}

static void test_parallel_read(void **state)
{
    (void)state;
    char hcopy[4200], pcopy[4200];
    parallel_paths("big.csv", hcopy, pcopy);
    const size_t rows = 900000; /* about 10 MB: above the parallel threshold of 8 MB */
    for (int variant = 0; variant < 5; variant++) {
        FILE *f = fopen(pcopy, "w");
        assert_non_null(f);
        fprintf(f, "x,c,s\n");
        tu_rng rng = {5};
        for (size_t r = 0; r < rows; r++) {
            /* variant 4: values too spread out to be ranked by counting */
            long x = variant == 4 ? (long)tu_below(&rng, 900000000) : (long)tu_below(&rng, 100000) - 500;
            const char c = (char)('a' + tu_below(&rng, 3));
            /* sensitive values first seen late, so that the dictionary merge matters */
            unsigned sv = (unsigned)tu_below(&rng, r < rows / 2 ? 5 : 9);
            if (variant == 1 && r == rows - 10) fprintf(f, "%ld.5,%c,\"v%u\"\n", x, c, sv); /* decimal + quote */
            else if (variant == 2 && r == rows * 3 / 4) fprintf(f, "%ld.5,%c,v%u\n", x, c, sv); /* decimal only */
            else if (variant == 3 && r == rows * 3 / 4) fprintf(f, "%ld,%c\n", x, c); /* short row */
            else fprintf(f, "%ld,%c,v%u\n", x, c, sv);
        }
        fclose(f);
        table *two = NULL;
        /* variant 3: the exact line, from either path */
        const int rc = load_one_and_two(pcopy, hcopy, (long)(rows * 3 / 4) + 2, rows, &two);
        assert_int_equal(rc, variant == 3 ? ANONKIT_E_INPUT : ANONKIT_OK);
        table_free(two);
    }
}

/* Writes the fixed-width table of test_parallel_read_cut: header "x,c,s",
 * then rows of 12 bytes ("xxxxxx,c,vN"), row `special` replaced by `row`
 * (NULL: none) and an empty line after row `empty_after` (-1: none). */
static void write_fixed(const char *path, size_t rows, size_t special, const char *row, long empty_after)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("x,c,s\n", f);
    tu_rng rng = {9};
    for (size_t r = 0; r < rows; r++) {
        const unsigned x = 100000 + (unsigned)tu_below(&rng, 900000);
        const char c = (char)('a' + tu_below(&rng, 3));
        const unsigned sv = (unsigned)tu_below(&rng, 10);
        if (row && r == special) fputs(row, f);
        else fprintf(f, "%u,%c,v%u\n", x, c, sv);
        if ((long)r == empty_after) fputs("\n", f);
    }
    fclose(f);
}

/* The parallel reader cuts the file at the first line end after its middle
 * without looking at the rest; a cut inside a quoted field, or one that
 * leaves an empty line at the end of the first piece (not a record there, but
 * a record, and here an error, in the whole file), must still give the
 * sequential result. Rows are 12 bytes so that the middle is known: with an
 * even number N of them after a 6-byte header, an empty line after row
 * N/2 - 1 has its line end exactly in the middle, and a 15-byte row
 * "123456,a,"v<LF>w"" at row N/2 has its quoted line end just after it. */
static void test_parallel_read_cut(void **state)
{
    (void)state;
    char hcopy[4200], pcopy[4200];
    parallel_paths("fixed.csv", hcopy, pcopy);
    const size_t rows = 800000; /* 9.6 MB: above the parallel threshold */
    for (int variant = 0; variant < 3; variant++) {
        if (variant == 0) write_fixed(pcopy, rows, 0, NULL, -1);
        if (variant == 1) write_fixed(pcopy, rows, 0, NULL, (long)rows / 2 - 1);
        if (variant == 2) write_fixed(pcopy, rows, rows / 2, "123456,a,\"v\nw\"\n", -1);
        table *two = NULL;
        /* variant 1: the empty line, after the header and N/2 rows */
        const int rc = load_one_and_two(pcopy, hcopy, (long)rows / 2 + 2, rows, &two);
        assert_int_equal(rc, variant == 1 ? ANONKIT_E_INPUT : ANONKIT_OK);
        if (rc != ANONKIT_OK) continue;
        if (variant == 2) {
            uint32_t id = two->sensitive_codes[rows / 2];
            assert_int_equal(strmap_key_len(&two->sensitive_dict, id), 3);
            assert_memory_equal(strmap_key(&two->sensitive_dict, id), "v\nw", 3);
        }
        table_free(two);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_integer_mode_ranks),
        cmocka_unit_test(test_general_mode_keeps_first_spelling),
        cmocka_unit_test(test_wide_range_falls_back),
        cmocka_unit_test(test_negative_zero_is_zero),
        cmocka_unit_test(test_format_int),
        cmocka_unit_test(test_random_ranks),
        cmocka_unit_test(test_categorical_and_sensitive),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_parallel_read),
        cmocka_unit_test(test_parallel_read_cut),
        cmocka_unit_test(test_stream_pieces_alike),
    };
    return cmocka_run_group_tests(tests, tu_group_setup, tu_group_teardown);
}
