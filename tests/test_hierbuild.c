/* test_hierbuild.c — the hierarchy builders (core/hierbuild.h) on random
 * columns, checked independently: every value of the column is a leaf once,
 * each level is a partition coarser than the one below (a label determines
 * its parent), the labels follow the interval, quantile, mask, date and order
 * rules (each read back and compared with the value it generalizes), the
 * missing value is the leaf NULL, and the rows load as a hierarchy. Also the
 * shortest decimals and the interval grammar (common/interval.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/interval.h"
#include "core/hierarchy.h"
#include "core/hierbuild.h"
#include "core/hierbuild_internal.h"
#include "io/csv.h"
#include "testutil.h"

/* Writes a one-column CSV of the given cells and collects its values
 * (presence: only marked present, as for the interval builder). */
static void collect_mode(const char *const *cells, size_t n, const hb_missing *missing, hb_values *v, int presence)
{
    const char *path = tu_path(tu_group_dir, "col.csv");
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("other,c\n", f);
    for (size_t i = 0; i < n; i++) fprintf(f, "%zu,%s\n", i, cells[i]);
    fclose(f);
    ak_error err;
    assert_int_equal((presence ? hb_collect_presence : hb_collect)(v, path, NULL, ',', "c", missing, &err), 0);
}

static void collect(const char *const *cells, size_t n, const hb_missing *missing, hb_values *v)
{
    collect_mode(cells, n, missing, v, 0);
}

/* The generic properties of built rows over the distinct present values
 * `values` (nvalues of them) and whether a missing value occurred. */
static void check_rows(const hb_rows *r, const char *const *values, size_t nvalues, int has_missing)
{
    /* every value once as a leaf, the missing leaf when there are missing values, nothing else */
    assert_int_equal(r->nrows, nvalues + (has_missing ? 1 : 0));
    for (size_t i = 0; i < nvalues; i++) {
        int found = 0;
        for (uint32_t j = 0; j < r->nrows; j++) found += strcmp(hb_label(r, j, 0), values[i]) == 0;
        if (found != 1) fail_msg("value '%s' is a leaf %d times", values[i], found);
    }
    if (has_missing) {
        int found = 0;
        for (uint32_t j = 0; j < r->nrows; j++) found += strcmp(hb_label(r, j, 0), HB_MISSING_LABEL) == 0;
        assert_int_equal(found, 1);
    }
    /* each level is a function of the one below: same label below, same label above */
    for (uint32_t l = 0; l + 1 < r->width; l++)
        for (uint32_t a = 0; a < r->nrows; a++)
            for (uint32_t b = a + 1; b < r->nrows; b++)
                if (!strcmp(hb_label(r, a, l), hb_label(r, b, l)) && strcmp(hb_label(r, a, l + 1), hb_label(r, b, l + 1)))
                    fail_msg("'%s' at level %u has parents '%s' and '%s'", hb_label(r, a, l), l, hb_label(r, a, l + 1),
                             hb_label(r, b, l + 1));
    /* one root */
    for (uint32_t a = 1; a < r->nrows; a++) assert_string_equal(hb_label(r, a, r->width - 1), hb_label(r, 0, r->width - 1));
    /* the missing leaf stays apart up to the root */
    for (uint32_t a = 0; a < r->nrows; a++) {
        if (strcmp(hb_label(r, a, 0), HB_MISSING_LABEL)) continue;
        for (uint32_t l = 1; l + 1 < r->width; l++)
            for (uint32_t b = 0; b < r->nrows; b++)
                if (b != a && !strcmp(hb_label(r, a, l), hb_label(r, b, l))) fail_msg("NULL shares level %u", l);
    }
    /* the rows load, pass the check before writing, and load again from the written file */
    hier *h = NULL;
    ak_error err;
    if (hb_to_hier(r, "built", &h, &err) != 0) fail_msg("does not load: %s", err.message);
    assert_int_equal(hier_leaf_count(h), r->nrows);
    hier_free(h);
    if (hb_check(r, "built", &err) != 0) fail_msg("the check refuses it: %s", err.message);
    const char *path = tu_path(tu_group_dir, "written.csv");
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(hb_write(r, f, path, &err), 0);
    assert_int_equal(fclose(f), 0);
    if (hier_load(&h, path, &err) != 0) fail_msg("the written file does not load: %s", err.message);
    assert_int_equal(hier_leaf_count(h), r->nrows);
    for (uint32_t i = 0; i < r->nrows; i++) { /* each leaf's labels up to the root, as built */
        uint32_t code;
        assert_int_equal(hier_find_leaf(h, hb_label(r, i, 0), strlen(hb_label(r, i, 0)), &code), 0);
        uint32_t node = hier_leaf_node(h, code);
        for (uint32_t l = 1; l < r->width; l++) {
            node = hier_node_at(h, node)->parent;
            assert_string_equal(hier_node_at(h, node)->label, hb_label(r, i, l));
        }
    }
    hier_free(h);
}

/* Reads an interval label independently: "[a, b]", "[a, b[", "a-b", "a - b",
 * "<b", ">=a"; bounds as doubles, unbounded as infinities. */
static void read_label(const char *s, double *lo, double *hi, int *hi_open)
{
    char a[64], b[64];
    *hi_open = 0;
    size_t n = strlen(s);
    if (s[0] == '[') {
        assert_int_equal(sscanf(s, "[%63[^,], %63[^]]", a, b), 2);
        *hi_open = s[n - 1] == '[';
        if (*hi_open) b[strlen(b) - 1] = '\0'; /* "[a, b[": the scan took the '[' */
        *lo = !strcmp(a, "-inf") ? -INFINITY : strtod(a, NULL);
        *hi = !strcmp(b, "inf") ? INFINITY : strtod(b, NULL);
        return;
    }
    if (s[0] == '<') {
        *lo = -INFINITY, *hi = strtod(s + 1, NULL), *hi_open = 1;
        return;
    }
    if (s[0] == '>') {
        *lo = strtod(s + 2, NULL), *hi = INFINITY;
        return;
    }
    const char *sp = strstr(s, " - ");
    if (sp) {
        *lo = strtod(s, NULL), *hi = strtod(sp + 3, NULL);
        return;
    }
    const char *dash = strchr(s + 1, '-');
    assert_non_null(dash);
    *lo = strtod(s, NULL), *hi = strtod(dash + 1, NULL);
}

/* value x lies in label s */
static int inside(const char *s, double x)
{
    double lo, hi;
    int open;
    read_label(s, &lo, &hi, &open);
    return x >= lo && (open ? x < hi : x <= hi);
}

/* Fixed-width intervals on random integer and decimal columns with and
 * without bounds, in both formats: every label holds its value, labels of one
 * level do not overlap, a level-l label's width is the width times the fan-outs. */
static void test_interval_random(void **state)
{
    (void)state;
    tu_rng g = {11};
    for (int rep = 0; rep < 40; rep++) {
        const int decimal = rep % 3 == 2, bounded = rep % 4 == 1, bracket = rep % 2;
        const size_t n = 1 + tu_below(&g, 300);
        char **cells = malloc(n * sizeof *cells);
        char **distinct = malloc(n * sizeof *distinct);
        size_t nd = 0;
        int missing = 0;
        for (size_t i = 0; i < n; i++) {
            char buf[64];
            if (tu_below(&g, 10) == 0) {
                buf[0] = '\0';
                missing = 1;
            } else if (decimal) snprintf(buf, sizeof buf, "%.2f", ((double)tu_below(&g, 20000) - 10000) / 100);
            else if (tu_below(&g, 8) == 0) snprintf(buf, sizeof buf, "%d.0", (int)tu_below(&g, 200) - 60); /* ties "5" */
            else snprintf(buf, sizeof buf, "%d", (int)tu_below(&g, 200) - 60);
            cells[i] = strdup(buf);
            int seen = !buf[0];
            for (size_t j = 0; j < nd && !seen; j++) seen = !strcmp(distinct[j], buf);
            if (!seen) distinct[nd++] = cells[i];
        }
        hb_values v;
        collect_mode((const char *const *)cells, n, NULL, &v, rep % 4 >= 2);
        uint32_t fan[3] = {2 + (uint32_t)tu_below(&g, 3), 2, 3};
        hb_options o = {.kind = HB_INTERVAL, .width = decimal ? 0.25 * (1 + (double)tu_below(&g, 8)) : 1 + (double)tu_below(&g, 12),
                        .fanout = fan, .nfanout = tu_below(&g, 4), .style = bracket ? AK_INTERVAL_BRACKET : AK_INTERVAL_RANGE};
        if (bounded) o.has_min = 1, o.min = -20, o.has_max = 1, o.max = 80;
        hb_rows r;
        ak_error err;
        if (nd == 0) {
            assert_true(hb_build(&v, &o, &r, &err) < 0 || missing);
        } else {
            assert_int_equal(hb_build(&v, &o, &r, &err), 0);
            check_rows(&r, (const char *const *)distinct, nd, missing);
            assert_int_equal(r.width, o.nfanout + 3); /* leaf, intervals, fan-outs, root */
            for (uint32_t i = 0; i < r.nrows; i++) {
                const char *leaf = hb_label(&r, i, 0);
                if (!strcmp(leaf, HB_MISSING_LABEL)) continue;
                const double x = strtod(leaf, NULL);
                for (uint32_t l = 1; l + 1 < r.width; l++) {
                    const char *lab = hb_label(&r, i, l);
                    if (!inside(lab, x)) fail_msg("%s is not in '%s' (level %u)", leaf, lab, l);
                    if (bracket && lab[0] != '[') fail_msg("bracket label '%s'", lab);
                    double lo, hi;
                    int open;
                    read_label(lab, &lo, &hi, &open);
                    if (isinf(lo) || isinf(hi) || (bounded && hi >= o.max - 1 - 1e-9)) continue; /* clamped at --max */
                    double span = o.width;
                    for (uint32_t k = 1; k < l; k++) span *= fan[k - 1];
                    const double width = open ? hi - lo : hi - lo + 1; /* closed integer labels */
                    if (fabs(width - span) > 1e-9) fail_msg("'%s' at level %u is %g wide, not %g", lab, l, width, span);
                }
            }
            /* labels of a level do not overlap: any two distinct labels hold no common value */
            for (uint32_t l = 1; l + 1 < r.width; l++)
                for (uint32_t a = 0; a < r.nrows; a++)
                    for (uint32_t b = 0; b < r.nrows; b++) {
                        const char *la = hb_label(&r, a, l), *lb = hb_label(&r, b, l), *xb = hb_label(&r, b, 0);
                        if (!strcmp(xb, HB_MISSING_LABEL) || !strcmp(la, HB_MISSING_LABEL) || !strcmp(la, lb)) continue;
                        if (inside(la, strtod(xb, NULL))) fail_msg("'%s' holds %s of '%s'", la, xb, lb);
                    }
            hb_rows_free(&r);
        }
        hb_values_free(&v);
        for (size_t i = 0; i < n; i++) free(cells[i]);
        free(cells);
        free(distinct);
    }
}

/* Equal-frequency intervals: labels hold their values, at most N intervals
 * at the first level, equal numbers in one interval, groups of F above. */
static void test_quantiles_random(void **state)
{
    (void)state;
    tu_rng g = {12};
    for (int rep = 0; rep < 30; rep++) {
        const size_t n = 1 + tu_below(&g, 400);
        char **cells = malloc(n * sizeof *cells), **distinct = malloc(n * sizeof *distinct);
        size_t nd = 0;
        for (size_t i = 0; i < n; i++) {
            char buf[32];
            const long x = (long)tu_below(&g, 1 + tu_below(&g, 500)) - 100;
            /* the same number spelled two ways now and then */
            snprintf(buf, sizeof buf, tu_below(&g, 8) ? "%ld" : "%ld.0", x);
            cells[i] = strdup(buf);
            int seen = 0;
            for (size_t j = 0; j < nd && !seen; j++) seen = !strcmp(distinct[j], buf);
            if (!seen) distinct[nd++] = cells[i];
        }
        hb_values v;
        collect((const char *const *)cells, n, NULL, &v);
        const uint32_t q[3] = {2 + (uint32_t)tu_below(&g, 8), 2, 2};
        hb_options o = {.kind = HB_QUANTILES, .quantiles = q, .nquantiles = 1 + tu_below(&g, 3),
                        .style = rep % 2 ? AK_INTERVAL_BRACKET : AK_INTERVAL_RANGE};
        hb_rows r;
        ak_error err;
        assert_int_equal(hb_build(&v, &o, &r, &err), 0);
        check_rows(&r, (const char *const *)distinct, nd, 0);
        uint64_t sizes[8];
        assert_int_equal(hb_level_sizes(&r, sizes, &err), 0);
        assert_true(sizes[1] <= q[0]);
        for (size_t l = 2; l <= o.nquantiles; l++) assert_true(sizes[l] <= (sizes[l - 1] + q[l - 1] - 1) / q[l - 1]);
        for (uint32_t i = 0; i < r.nrows; i++) {
            const double x = strtod(hb_label(&r, i, 0), NULL);
            for (uint32_t l = 1; l + 1 < r.width; l++)
                if (!inside(hb_label(&r, i, l), x)) fail_msg("%g not in '%s'", x, hb_label(&r, i, l));
            for (uint32_t j = 0; j < r.nrows; j++) /* one number, one interval */
                if (strtod(hb_label(&r, j, 0), NULL) == x) assert_string_equal(hb_label(&r, i, 1), hb_label(&r, j, 1));
        }
        hb_rows_free(&r);
        hb_values_free(&v);
        for (size_t i = 0; i < n; i++) free(cells[i]);
        free(cells);
        free(distinct);
    }
}

/* Masks: level l is the value with its last l characters '*'. */
static void test_mask_random(void **state)
{
    (void)state;
    tu_rng g = {13};
    for (int rep = 0; rep < 30; rep++) {
        const size_t n = 1 + tu_below(&g, 200), len = 1 + tu_below(&g, 6);
        char **cells = malloc(n * sizeof *cells), **distinct = malloc(n * sizeof *distinct);
        size_t nd = 0;
        int missing = 0;
        const char *const tokens[] = {"?"};
        const hb_missing m = {tokens, 1};
        for (size_t i = 0; i < n; i++) {
            char buf[16];
            if (tu_below(&g, 12) == 0) {
                snprintf(buf, sizeof buf, "?");
                missing = 1;
            } else {
                for (size_t k = 0; k < len; k++) buf[k] = (char)('0' + tu_below(&g, 3));
                buf[len] = '\0';
            }
            cells[i] = strdup(buf);
            int seen = !strcmp(buf, "?");
            for (size_t j = 0; j < nd && !seen; j++) seen = !strcmp(distinct[j], buf);
            if (!seen) distinct[nd++] = cells[i];
        }
        if (nd == 0) {
            for (size_t i = 0; i < n; i++) free(cells[i]);
            free(cells);
            free(distinct);
            continue;
        }
        hb_values v;
        collect((const char *const *)cells, n, &m, &v);
        hb_options o = {.kind = HB_MASK, .levels = (uint32_t)tu_below(&g, len + 1)};
        hb_rows r;
        ak_error err;
        assert_int_equal(hb_build(&v, &o, &r, &err), 0);
        check_rows(&r, (const char *const *)distinct, nd, missing);
        const uint32_t levels = o.levels ? o.levels : (uint32_t)len;
        for (uint32_t i = 0; i < r.nrows; i++) {
            const char *leaf = hb_label(&r, i, 0);
            if (!strcmp(leaf, HB_MISSING_LABEL)) continue;
            for (uint32_t l = 1; l <= levels; l++) {
                char want[16];
                memcpy(want, leaf, len + 1);
                for (uint32_t k = 0; k < l; k++) want[len - 1 - k] = '*';
                assert_string_equal(hb_label(&r, i, l), want);
            }
        }
        hb_rows_free(&r);
        hb_values_free(&v);
        for (size_t i = 0; i < n; i++) free(cells[i]);
        free(cells);
        free(distinct);
    }
}

/* ISO weeks: dates whose week is known (ISO 8601 examples and year ends),
 * and on random days: consecutive days Monday to Sunday share a week, a
 * week has 7 days (the first and last of the data's span aside) and is
 * numbered one above the week before it or 1 in a new week-based year. */
static void test_date_week(void **state)
{
    (void)state;
    static const char *const known[][2] = {
        {"2005-01-01", "2004-W53"}, {"2005-01-02", "2004-W53"}, {"2005-12-31", "2005-W52"},
        {"2007-01-01", "2007-W01"}, {"2007-12-30", "2007-W52"}, {"2007-12-31", "2008-W01"},
        {"2008-01-01", "2008-W01"}, {"2008-12-28", "2008-W52"}, {"2008-12-29", "2009-W01"},
        {"2009-12-31", "2009-W53"}, {"2010-01-03", "2009-W53"}, {"2010-01-04", "2010-W01"},
        {"2024-03-15", "2024-W11"}, {"1900-01-01", "1900-W01"}, {"2000-02-29", "2000-W09"},
    };
    const size_t n = sizeof known / sizeof known[0];
    const char *cells[sizeof known / sizeof known[0]];
    for (size_t i = 0; i < n; i++) cells[i] = known[i][0];
    hb_values v;
    collect(cells, n, NULL, &v);
    const hb_date_level levels[] = {HB_DAY, HB_WEEK};
    hb_options o = {.kind = HB_DATE, .dates = levels, .ndates = 2};
    hb_rows r;
    ak_error err;
    assert_int_equal(hb_build(&v, &o, &r, &err), 0);
    check_rows(&r, cells, n, 0);
    for (uint32_t i = 0; i < r.nrows; i++)
        for (size_t k = 0; k < n; k++)
            if (!strcmp(hb_label(&r, i, 0), known[k][0])) assert_string_equal(hb_label(&r, i, 2), known[k][1]);
    hb_rows_free(&r);
    hb_values_free(&v);
    /* a run of consecutive days from a random Monday-or-not start */
    tu_rng g = {31};
    for (int rep = 0; rep < 5; rep++) {
        char (*days)[40] = malloc(400 * sizeof *days);
        const char *ptr[400];
        int y = 1950 + (int)tu_below(&g, 100), m = 12, d = 1 + (int)tu_below(&g, 28);
        static const int mdays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
        for (int i = 0; i < 400; i++) {
            snprintf(days[i], sizeof days[i], "%04d-%02d-%02d", y, m, d);
            ptr[i] = days[i];
            const int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
            if (++d > mdays[m - 1] + (m == 2 && leap)) d = 1, m = m == 12 ? (y++, 1) : m + 1;
        }
        collect(ptr, 400, NULL, &v);
        const hb_date_level week_only[] = {HB_WEEK};
        hb_options ow = {.kind = HB_DATE, .dates = week_only, .ndates = 1};
        assert_int_equal(hb_build(&v, &ow, &r, &err), 0);
        check_rows(&r, ptr, 400, 0);
        uint32_t run = 0;
        int prev_year = 0, prev_week = 0, runs = 0;
        for (uint32_t i = 0; i <= r.nrows; i++) {
            if (i < r.nrows && i && !strcmp(hb_label(&r, i, 1), hb_label(&r, i - 1, 1))) {
                run++;
                continue;
            }
            if (i) { /* a week ended: 7 days unless it is the first or the last */
                if (runs > 0 && i < r.nrows) assert_int_equal(run, 7);
                runs++;
            }
            if (i == r.nrows) break;
            int wy, wk;
            assert_int_equal(sscanf(hb_label(&r, i, 1), "%d-W%d", &wy, &wk), 2);
            if (prev_year) assert_true((wy == prev_year && wk == prev_week + 1) || (wy == prev_year + 1 && wk == 1));
            prev_year = wy;
            prev_week = wk;
            run = 1;
        }
        hb_rows_free(&r);
        hb_values_free(&v);
        free(days);
    }
    /* week only on top, above minute, hour or day */
    const hb_date_level bad1[] = {HB_WEEK, HB_YEAR}, bad2[] = {HB_MONTH, HB_WEEK};
    collect(cells, n, NULL, &v);
    hb_options ob = {.kind = HB_DATE, .dates = bad1, .ndates = 2};
    assert_int_equal(hb_build(&v, &ob, &r, &err), ANONKIT_E_USAGE);
    ob.dates = bad2;
    assert_int_equal(hb_build(&v, &ob, &r, &err), ANONKIT_E_USAGE);
    hb_values_free(&v);
}

/* Dates: each level's label is the date cut to that granularity. */
static void test_date_random(void **state)
{
    (void)state;
    tu_rng g = {14};
    const hb_date_level levels[] = {HB_DAY, HB_MONTH, HB_QUARTER, HB_YEAR, HB_DECADE, HB_CENTURY};
    for (int rep = 0; rep < 20; rep++) {
        const size_t n = 1 + tu_below(&g, 150);
        char **cells = malloc(n * sizeof *cells), **distinct = malloc(n * sizeof *distinct);
        size_t nd = 0;
        for (size_t i = 0; i < n; i++) {
            char buf[48];
            snprintf(buf, sizeof buf, "%04d-%02d-%02d", 1890 + (int)tu_below(&g, 200), 1 + (int)tu_below(&g, 12),
                     1 + (int)tu_below(&g, 28));
            cells[i] = strdup(buf);
            int seen = 0;
            for (size_t j = 0; j < nd && !seen; j++) seen = !strcmp(distinct[j], buf);
            if (!seen) distinct[nd++] = cells[i];
        }
        hb_values v;
        collect((const char *const *)cells, n, NULL, &v);
        const size_t first = tu_below(&g, 3), count = 1 + tu_below(&g, 6 - first);
        hb_options o = {.kind = HB_DATE, .dates = levels + first, .ndates = count};
        hb_rows r;
        ak_error err;
        assert_int_equal(hb_build(&v, &o, &r, &err), 0);
        check_rows(&r, (const char *const *)distinct, nd, 0);
        for (uint32_t i = 0; i < r.nrows; i++) {
            const char *d = hb_label(&r, i, 0);
            int y, mo, da;
            assert_int_equal(sscanf(d, "%d-%d-%d", &y, &mo, &da), 3);
            for (size_t l = 0; l < count; l++) {
                char want[64];
                switch (levels[first + l]) {
                case HB_DAY: snprintf(want, sizeof want, "%s", d); break;
                case HB_MONTH: snprintf(want, sizeof want, "%.7s", d); break;
                case HB_QUARTER: snprintf(want, sizeof want, "%.4s-Q%d", d, (mo + 2) / 3); break;
                case HB_YEAR: snprintf(want, sizeof want, "%.4s", d); break;
                case HB_DECADE: snprintf(want, sizeof want, "%d-%d", y - y % 10, y - y % 10 + 9); break;
                default: snprintf(want, sizeof want, "%d-%d", y - y % 100, y - y % 100 + 99); break;
                }
                assert_string_equal(hb_label(&r, i, 1 + (uint32_t)l), want);
            }
        }
        hb_rows_free(&r);
        hb_values_free(&v);
        for (size_t i = 0; i < n; i++) free(cells[i]);
        free(cells);
        free(distinct);
    }
}

/* Order: groups of consecutive categories, "[first, last]" (or the category alone). */
static void test_order_and_flat(void **state)
{
    (void)state;
    static const char *const cats[] = {"a", "b", "c", "d", "e", "f", "g"};
    static const char *const cells[] = {"c", "a", "g", "", "c", "e"};
    hb_values v;
    collect(cells, 6, NULL, &v);
    const uint32_t fan[2] = {2, 3};
    hb_options o = {.kind = HB_ORDER, .order = cats, .norder = 7, .fanout = fan, .nfanout = 2};
    hb_rows r;
    ak_error err;
    assert_int_equal(hb_build(&v, &o, &r, &err), 0);
    check_rows(&r, cats, 7, 1);
    for (uint32_t i = 0; i < r.nrows; i++) {
        const char *leaf = hb_label(&r, i, 0);
        if (!strcmp(leaf, HB_MISSING_LABEL)) continue;
        const int k = leaf[0] - 'a';
        char want[32];
        const int lo = k / 2 * 2, hi = lo + 1 < 7 ? lo + 1 : 6;
        if (lo == hi) snprintf(want, sizeof want, "%s", cats[lo]);
        else snprintf(want, sizeof want, "[%s, %s]", cats[lo], cats[hi]);
        assert_string_equal(hb_label(&r, i, 1), want);
        const int lo2 = k / 6 * 6, hi2 = lo2 + 5 < 7 ? lo2 + 5 : 6;
        if (lo2 == hi2) snprintf(want, sizeof want, "%s", cats[lo2]);
        else snprintf(want, sizeof want, "[%s, %s]", cats[lo2], cats[hi2]);
        assert_string_equal(hb_label(&r, i, 2), want);
    }
    hb_rows_free(&r);
    /* values not in the list are named with their lines */
    const char *const few[] = {"a", "b"};
    hb_options o2 = {.kind = HB_ORDER, .order = few, .norder = 2};
    assert_int_equal(hb_build(&v, &o2, &r, &err), ANONKIT_E_INPUT);
    assert_non_null(strstr(err.message, "'c' (line 2)"));
    assert_non_null(strstr(err.message, "'g' (line 4)"));
    /* flat */
    hb_options f = {.kind = HB_FLAT};
    assert_int_equal(hb_build(&v, &f, &r, &err), 0);
    static const char *const present[] = {"a", "c", "e", "g"};
    check_rows(&r, present, 4, 1);
    assert_int_equal(r.width, 2);
    hb_rows_free(&r);
    hb_values_free(&v);
}

/* Bad options and data: clear errors. */
static void test_bad_builders(void **state)
{
    (void)state;
    static const char *const cells[] = {"10", "2024-02-30", "abc"};
    hb_values v;
    collect(cells, 3, NULL, &v);
    hb_rows r;
    ak_error err;
    hb_options o = {.kind = HB_INTERVAL, .width = 0};
    assert_int_equal(hb_build(&v, &o, &r, &err), ANONKIT_E_USAGE);
    assert_non_null(strstr(err.message, "width"));
    const uint32_t one = 1;
    o = (hb_options){.kind = HB_INTERVAL, .width = 5, .fanout = &one, .nfanout = 1};
    assert_int_equal(hb_build(&v, &o, &r, &err), ANONKIT_E_USAGE);
    assert_non_null(strstr(err.message, "at least 2"));
    o = (hb_options){.kind = HB_INTERVAL, .width = 5};
    assert_int_equal(hb_build(&v, &o, &r, &err), ANONKIT_E_INPUT);
    assert_non_null(strstr(err.message, "needs numbers"));
    const hb_date_level day = HB_DAY;
    o = (hb_options){.kind = HB_DATE, .dates = &day, .ndates = 1};
    assert_int_equal(hb_build(&v, &o, &r, &err), ANONKIT_E_INPUT);
    assert_non_null(strstr(err.message, "not an ISO-8601 date"));
    assert_int_equal(err.line, 2);
    o = (hb_options){.kind = HB_MASK};
    assert_int_equal(hb_build(&v, &o, &r, &err), ANONKIT_E_INPUT);
    assert_non_null(strstr(err.message, "equal length"));
    hb_values_free(&v);
}

/* The shortest text that reads back, and no shorter one among %.15g..%.17g. */
static void test_shortest_decimals(void **state)
{
    (void)state;
    tu_rng g = {15};
    for (int i = 0; i < 20000; i++) {
        double x;
        uint64_t bits = tu_next(&g);
        memcpy(&x, &bits, sizeof x);
        if (!isfinite(x)) continue;
        if (i % 2) x = (double)(int64_t)(tu_next(&g) % 2000001) / 1000 - 1000; /* short decimals */
        char buf[32], alt[40];
        const int n = ak_format_double(buf, x);
        assert_int_equal((int)strlen(buf), n);
        assert_true(strtod(buf, NULL) == x);
        for (int d = 15; d <= 17; d++) {
            snprintf(alt, sizeof alt, "%.*g", d, x);
            if (strtod(alt, NULL) == x) {
                assert_string_equal(buf, alt);
                break;
            }
        }
    }
    char buf[32];
    ak_format_double(buf, 0.1);
    assert_string_equal(buf, "0.1");
    ak_format_double(buf, 0.1 + 0.2);
    assert_string_equal(buf, "0.30000000000000004");
}

/* Every interval written in both styles splits back into its bounds. */
static void test_interval_round_trip(void **state)
{
    (void)state;
    tu_rng g = {16};
    for (int i = 0; i < 5000; i++) {
        char lo[32], hi[32], text[80];
        double a = ((double)(int64_t)tu_below(&g, 20001) - 10000) / (i % 2 ? 1 : 8), b = a + (double)tu_below(&g, 500) / 4;
        const int la = ak_format_double(lo, a), lb = ak_format_double(hi, b);
        for (int st = 0; st < 2; st++) {
            const size_t n = ak_interval_write((ak_interval_style)st, lo, (size_t)la, hi, (size_t)lb, text);
            text[n] = '\0';
            if (st == AK_INTERVAL_RANGE && (a < 0 || b < 0)) assert_non_null(strstr(text, " - "));
            ak_interval_text iv;
            assert_int_equal(ak_interval_split(text, n, &iv, NULL), 0);
            assert_false(iv.single);
            assert_int_equal(iv.lo_len, (size_t)la);
            assert_int_equal(iv.hi_len, (size_t)lb);
            assert_memory_equal(iv.lo, lo, (size_t)la);
            assert_memory_equal(iv.hi, hi, (size_t)lb);
        }
    }
    ak_interval_text iv;
    assert_int_equal(ak_interval_split("[-inf, 5[", 9, &iv, NULL), 0);
    assert_true(iv.lo_unbounded && iv.hi_open && iv.hi_len == 1);
    assert_int_equal(ak_interval_split(">=65", 4, &iv, NULL), 0);
    assert_true(iv.hi_unbounded && iv.lo_len == 2);
    assert_int_equal(ak_interval_split("-5--3", 5, &iv, NULL), 0); /* the historical form still reads */
    assert_true(iv.lo_len == 2 && iv.hi_len == 2 && !memcmp(iv.hi, "-3", 2));
}

/* Rows given as text ("a;b;c|d;e;f", no quoting) through the row assembly. */
static void rows_of(const char *text, uint32_t width, hb_rows *r)
{
    ak_error err;
    memset(r, 0, sizeof *r);
    assert_int_equal(hb__rows_init(r, width, &err), 0);
    const char *p = text;
    for (;;) {
        const size_t len = strcspn(p, ";|");
        assert_int_equal(hb__put(r, p, len, &err), 0);
        if (!p[len]) break;
        p += len + 1;
    }
}

/* hb_check against the loader on hand-made rows: it refuses what the loader
 * refuses (a leaf twice, two parents, a label naming two nodes, "*" below the
 * added root, an empty label), and rows out of tree order, which the loader
 * takes but no builder writes. */
static void test_check(void **state)
{
    (void)state;
    static const struct {
        const char *rows;
        uint32_t width;
        int loads, passes;
    } cases[] = {
        {"1;1-2;*|2;1-2;*|3;3-4;*", 3, 1, 1},
        {"1;1-2;*|2;1-2;*|1;3-4;*", 3, 0, 0},       /* a leaf twice */
        {"1;1-2;a|2;1-2;b|3;3-4;b", 3, 0, 0},       /* two parents */
        {"1;1-2;1-4|2;1-2;1-4|3;3-4;1-2", 3, 0, 0}, /* a label for two nodes */
        {"1;12;*|2;12;*|12;x;*", 3, 0, 0},          /* a leaf's label above other leaves too */
        {"1;1;1|2;2;2", 3, 1, 1},                   /* a leaf padded upwards */
        {"1;*|2;a", 2, 0, 0},                       /* "*" below the added root */
        {"1;a|2;b|3;a", 2, 1, 0},                   /* out of tree order */
        {"1;;*|2;b;*", 3, 0, 0},                    /* an empty label */
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        hb_rows r;
        rows_of(cases[c].rows, cases[c].width, &r);
        ak_error err;
        hier *h = NULL;
        const int loads = hb_to_hier(&r, "rows", &h, &err) == 0;
        hier_free(h);
        const int passes = hb_check(&r, "rows", &err) == 0;
        if (loads != cases[c].loads || passes != cases[c].passes)
            fail_msg("case %zu (%s): loads %d, passes %d", c, cases[c].rows, loads, passes);
        hb_rows_free(&r);
    }
}

/* Two collections of one column hold the same values: rows, missing values,
 * distinct values with their counts and first lines, the integers marked
 * present. */
static void values_equal(const hb_values *x, const hb_values *y, int rep, const char *what)
{
    if (x->rows != y->rows || x->nmissing != y->nmissing || (x->nmissing && x->missing_line != y->missing_line) ||
        x->dict.count != y->dict.count || !x->bits != !y->bits)
        fail_msg("rep %d, %s: rows %llu/%llu, missing %llu/%llu, distinct %u/%u", rep, what,
                 (unsigned long long)x->rows, (unsigned long long)y->rows, (unsigned long long)x->nmissing,
                 (unsigned long long)y->nmissing, x->dict.count, y->dict.count);
    for (uint32_t i = 0; i < x->dict.count; i++) {
        const uint32_t k = strmap_find(&y->dict, strmap_key(&x->dict, i), strmap_key_len(&x->dict, i));
        if (k == AK_NOT_FOUND || x->count[i] != y->count[k] || x->line[i] != y->line[k])
            fail_msg("rep %d, %s: value '%s' differs", rep, what, strmap_key(&x->dict, i));
    }
    if (x->bits) {
        assert_int_equal(x->dense_lo, y->dense_lo);
        assert_int_equal(x->dense_hi, y->dense_hi);
        assert_memory_equal(x->bits, y->bits, HB_DENSE / 8);
    }
}

/* hb_collect, which scans lines without quotes itself and hands the rest of
 * the file to the CSV reader from the first quote (or an overlong line) on,
 * against the CSV reader alone on random files: CRLF or LF, empty lines,
 * quoted fields (some with a line end) from a random line on, a line longer
 * than the scan's block, a last line with or without its line end;
 * the same rows, missing values, distinct values with their counts and first
 * lines. */
static void test_collect_scan(void **state)
{
    (void)state;
    tu_rng g = {23};
    const char *path = tu_path(tu_group_dir, "scan.csv");
    for (int rep = 0; rep < 60; rep++) {
        FILE *f = fopen(path, "wb");
        assert_non_null(f);
        const char *eol = rep % 2 ? "\r\n" : "\n";
        const size_t n = tu_below(&g, 400), quote_from = tu_below(&g, n + 2);
        fprintf(f, "a,c,b%s", eol);
        for (size_t i = 0; i < n; i++) {
            if (tu_below(&g, 30) == 0) fputs(eol, f); /* an empty line */
            char c[32];
            const unsigned k = (unsigned)tu_below(&g, 13);
            if (k == 0) c[0] = '\0';
            else if (k == 9) snprintf(c, sizeof c, "0%u", (unsigned)tu_below(&g, 30)); /* a leading zero: text */
            else if (k == 10) snprintf(c, sizeof c, "%u", HB_DENSE - 4 + (unsigned)tu_below(&g, 8)); /* its edge */
            else if (k == 11) snprintf(c, sizeof c, "%u%c%u", (unsigned)tu_below(&g, 99), " :/a+-.9"[tu_below(&g, 8)],
                                       (unsigned)tu_below(&g, 99999)); /* digits around another byte */
            else if (k == 12) /* short categories, and ones of 17 to 25 bytes that differ in one byte (the memo's words) */
                snprintf(c, sizeof c, "%s",
                         (const char *[]){"United-States", "Never-married", "a-rather-longer-category", "x",
                                          "Married-civ-spouse", "Married-civ-spousX", "Xarried-civ-spouse",
                                          "aaaaaaaaaaaaXaaaaaaaaaaa", "aaaaaaaaaaaaYaaaaaaaaaaa",
                                          "aaaaaaaaaaaaXaaaaaaaaaaaa", "Machine-op-inspct",
                                          "Machine-op-inspcX"}[tu_below(&g, 12)]);
            else if (k == 1) snprintf(c, sizeof c, "NA");
            else if (k == 2) snprintf(c, sizeof c, "%u", 5000000u + (unsigned)tu_below(&g, 20)); /* beyond HB_DENSE */
            else if (k == 3) snprintf(c, sizeof c, "x%u", (unsigned)tu_below(&g, 5));
            else snprintf(c, sizeof c, "%u", (unsigned)tu_below(&g, 50));
            if (i == 3 && (rep % 10 == 7 || rep % 10 == 2)) { /* lines longer than the scan's block (the longer: */
                for (int k = 0; k < (rep % 10 == 7 ? 600000 : 300000); k++) fputc('w', f); /* the reader's) */
                fprintf(f, ",%s,z", c);
            } else if (i >= quote_from && tu_below(&g, 3) == 0)
                fprintf(f, "\"q%zu\",\"%s\",\"l\nx\"", i, c);
            else
                fprintf(f, "%zu,%s,z", i, c);
            if (i + 1 < n || tu_below(&g, 2)) fputs(eol, f);
        }
        fclose(f);
        const char *tokens[] = {"NA"};
        const hb_missing missing = {tokens, 1};
        hb_values v;
        ak_error err;
        assert_int_equal(hb_collect(&v, path, NULL, ',', "c", &missing, &err), 0);
        assert_int_equal(hb__fold_dense(&v, &err), 0);
        /* the reference: the CSV reader, record by record */
        csv_reader *rd;
        assert_int_equal(csv_reader_open(&rd, path, ',', &err), 0);
        csv_record rec;
        assert_int_equal(csv_read(rd, &rec, &err), 1);
        uint64_t rows = 0, nmissing = 0, total = 0;
        long missing_line = 0;
        strmap seen;
        assert_int_equal(strmap_init(&seen, 64), 0);
        while (csv_read(rd, &rec, &err) == 1) {
            if (rec.count == 1 && rec.fields[0].len == 0) continue;
            assert_int_equal(rec.count, 3);
            rows++;
            const csv_field *c = &rec.fields[1];
            if (c->len == 0 || (c->len == 2 && !memcmp(c->data, "NA", 2))) {
                if (!nmissing++) missing_line = rec.line;
                continue;
            }
            total++;
            uint32_t id;
            int inserted;
            assert_int_equal(strmap_intern(&seen, c->data, c->len, &id, &inserted), 0);
            const uint32_t vid = strmap_find(&v.dict, c->data, c->len);
            if (vid == AK_NOT_FOUND) fail_msg("rep %d: value '%.*s' not collected", rep, (int)c->len, c->data);
            if (inserted) assert_int_equal(v.line[vid], rec.line);
        }
        csv_reader_free(rd);
        assert_int_equal(v.rows, rows);
        assert_int_equal(v.nmissing, nmissing);
        if (nmissing) assert_int_equal(v.missing_line, missing_line);
        assert_int_equal(v.dict.count, seen.count);
        uint64_t counted = 0;
        for (uint32_t i = 0; i < v.dict.count; i++) counted += v.count[i];
        assert_int_equal(counted, total);
        strmap_free(&seen);
        /* the same columns read together, c twice (once only marked present), each as read alone */
        const char *const cols[] = {"a", "c", "b", "c"};
        const int presence[] = {0, 0, 0, 1};
        const hb_missing ms[] = {missing, missing, missing, missing};
        hb_values vs[4];
        assert_int_equal(hb_collect_columns(vs, 4, cols, presence, ms, path, NULL, ',', &err), 0);
        for (int j = 0; j < 4; j++) {
            hb_values alone;
            assert_int_equal((presence[j] ? hb_collect_presence : hb_collect)(&alone, path, NULL, ',', cols[j], &missing,
                                                                             &err),
                             0);
            if (!presence[j]) {
                assert_int_equal(hb__fold_dense(&vs[j], &err), 0);
                assert_int_equal(hb__fold_dense(&alone, &err), 0);
            }
            values_equal(&vs[j], &alone, rep, cols[j]);
            hb_values_free(&alone);
        }
        values_equal(&vs[1], &v, rep, "c (counted)");
        /* on two threads (two sets of columns, a pass each): the same values */
        hb_values ts[4];
        assert_int_equal(hb_collect_columns_threads(ts, 4, cols, presence, ms, path, NULL, ',', 2, &err), 0);
        for (int j = 0; j < 4; j++) {
            if (!presence[j]) assert_int_equal(hb__fold_dense(&ts[j], &err), 0);
            values_equal(&ts[j], &vs[j], rep, "two threads");
            hb_values_free(&ts[j]);
        }
        for (int j = 0; j < 4; j++) hb_values_free(&vs[j]);
        hb_values_free(&v);
    }
}

/* hb_collect_columns refuses a line with another number of fields than the
 * header, naming its line, from the fast scan as from the CSV reader. */
static void test_collect_columns_errors(void **state)
{
    (void)state;
    const char *path = tu_path(tu_group_dir, "ragged.csv");
    for (int quoted = 0; quoted < 2; quoted++) {
        FILE *f = fopen(path, "wb");
        assert_non_null(f);
        fputs("a,b,c\n1,2,3\n4,5,6\n", f);
        if (quoted) fputs("\"7\",8,9\n", f);
        fputs("10,11\n12,13,14\n", f);
        fclose(f);
        const char *const cols[] = {"c", "a"};
        const hb_missing ms[] = {{NULL, 0}, {NULL, 0}};
        hb_values vs[2];
        ak_error err;
        assert_true(hb_collect_columns(vs, 2, cols, NULL, ms, path, NULL, ',', &err) < 0);
        assert_int_equal(err.line, quoted ? 5 : 4);
        assert_non_null(strstr(err.message, "expected 3 fields"));
        const char *const bad[] = {"a", "nope"};
        assert_true(hb_collect_columns(vs, 2, bad, NULL, ms, path, NULL, ',', &err) < 0);
        assert_non_null(strstr(err.message, "no column 'nope'"));
        /* on two threads, the same errors: the ragged line, and a missing column (in either set) before it */
        for (unsigned threads = 1; threads <= 2; threads++) {
            assert_true(hb_collect_columns_threads(vs, 2, cols, NULL, ms, path, NULL, ',', threads, &err) < 0);
            assert_int_equal(err.line, quoted ? 5 : 4);
            assert_non_null(strstr(err.message, "expected 3 fields"));
            assert_true(hb_collect_columns_threads(vs, 2, bad, NULL, ms, path, NULL, ',', threads, &err) < 0);
            assert_non_null(strstr(err.message, "no column 'nope'"));
            const char *const bad0[] = {"nope0", "a"};
            assert_true(hb_collect_columns_threads(vs, 2, bad0, NULL, ms, path, NULL, ',', threads, &err) < 0);
            assert_non_null(strstr(err.message, "no column 'nope0'"));
        }
    }
}

/* One distinct value of test_interval_order: its text, number, whether the
 * collector counts it by value (a canonical integer below HB_DENSE) and
 * where it was first seen. */
typedef struct order_value {
    const char *text;
    double x;
    int counted;
    size_t first;
} order_value;

/* The expected order of leaves: by number; at equal numbers the values read
 * as text first, in their order of first appearance, the integer counted
 * by value last (the order all values had as text). */
static int cmp_order_value(const void *a, const void *b)
{
    const order_value *p = a, *q = b;
    if (p->x != q->x) return p->x < q->x ? -1 : 1;
    if (p->counted != q->counted) return p->counted - q->counted;
    return (p->first > q->first) - (p->first < q->first);
}

/* Whether s is a canonical integer below HB_DENSE (digits, no leading zero). */
static int counted_by_value(const char *s)
{
    size_t len = strlen(s);
    if (!len || len > 7 || (s[0] == '0' && len > 1)) return 0;
    for (size_t i = 0; i < len; i++)
        if (s[i] < '0' || s[i] > '9') return 0;
    return strtol(s, NULL, 10) < (long)HB_DENSE;
}

/* The interval builder takes the values in turn from the integers counted by
 * value (an array of counts, or a bitmap of presence) merged with those read
 * as text: on columns mixing the two (ties such as "5", "5.0", "05",
 * negatives, decimals, integers above HB_DENSE) the leaves come out in the
 * order of an independent sort, and the counted and the marked columns give
 * the same rows. */
static void test_interval_order(void **state)
{
    (void)state;
    tu_rng g = {29};
    for (int rep = 0; rep < 30; rep++) {
        const size_t n = 1 + tu_below(&g, 400);
        char **cells = malloc(n * sizeof *cells);
        order_value *d = malloc(n * sizeof *d);
        size_t nd = 0;
        for (size_t i = 0; i < n; i++) {
            char buf[64];
            /* around HB_DENSE, and beyond 32 bits (labels of 11 digits and more) */
            const long k = (long)tu_below(&g, 120) + (rep % 3 == 0 ? (long)HB_DENSE - 60 : rep % 3 == 1 ? 99999999950L : 0);
            switch (rep % 3 == 1 ? 1 + 3 * tu_below(&g, 2) : tu_below(&g, 7)) { /* (beyond 32 bits: whole, positive) */
            case 0: snprintf(buf, sizeof buf, "%ld.0", k); break;
            case 1: snprintf(buf, sizeof buf, "0%ld", k); break;
            case 2: snprintf(buf, sizeof buf, "-%ld", k + 1); break;
            case 3: snprintf(buf, sizeof buf, "%ld.5", k); break;
            default: snprintf(buf, sizeof buf, "%ld", k); break;
            }
            cells[i] = strdup(buf);
            int seen = 0;
            for (size_t j = 0; j < nd && !seen; j++) seen = !strcmp(d[j].text, buf);
            if (!seen) d[nd++] = (order_value){cells[i], strtod(buf, NULL), counted_by_value(buf), i};
        }
        qsort(d, nd, sizeof *d, cmp_order_value);
        const uint32_t fan[2] = {2, 3};
        const hb_options o = {.kind = HB_INTERVAL, .width = 1 + (double)tu_below(&g, 9), .fanout = fan,
                              .nfanout = tu_below(&g, 3), .style = AK_INTERVAL_RANGE};
        hb_rows r[2];
        for (int presence = 0; presence < 2; presence++) {
            hb_values v;
            collect_mode((const char *const *)cells, n, NULL, &v, presence);
            ak_error err;
            assert_int_equal(hb_build(&v, &o, &r[presence], &err), 0);
            hb_values_free(&v);
            assert_int_equal(r[presence].nrows, nd);
            for (uint32_t i = 0; i < nd; i++)
                if (strcmp(hb_label(&r[presence], i, 0), d[i].text) != 0)
                    fail_msg("leaf %u is '%s', not '%s' (presence %d)", i, hb_label(&r[presence], i, 0), d[i].text, presence);
                else if (rep % 3 == 1) { /* whole numbers: level 1 is "lo-hi" of the bin of x from the least one's */
                    const long w = (long)o.width, base = (long)floor(d[0].x / o.width) * w;
                    const long lo = base + ((long)d[i].x - base) / w * w;
                    char want[64];
                    snprintf(want, sizeof want, "%ld-%ld", lo, lo + w - 1);
                    assert_string_equal(hb_label(&r[presence], i, 1), want);
                } else
                    for (uint32_t l = 1; l + 1 < r[presence].width; l++)
                        if (!inside(hb_label(&r[presence], i, l), d[i].x))
                            fail_msg("%s is not in '%s' (level %u)", d[i].text, hb_label(&r[presence], i, l), l);
        }
        assert_int_equal(r[0].width, r[1].width);
        for (uint32_t i = 0; i < nd; i++)
            for (uint32_t l = 0; l < r[0].width; l++) assert_string_equal(hb_label(&r[0], i, l), hb_label(&r[1], i, l));
        hb_rows_free(&r[0]);
        hb_rows_free(&r[1]);
        for (size_t i = 0; i < n; i++) free(cells[i]);
        free(cells);
        free(d);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_interval_random),   cmocka_unit_test(test_quantiles_random),
        cmocka_unit_test(test_mask_random),       cmocka_unit_test(test_date_random),
        cmocka_unit_test(test_order_and_flat),    cmocka_unit_test(test_bad_builders),
        cmocka_unit_test(test_shortest_decimals), cmocka_unit_test(test_interval_round_trip),
        cmocka_unit_test(test_check),             cmocka_unit_test(test_collect_scan),
        cmocka_unit_test(test_date_week),         cmocka_unit_test(test_collect_columns_errors),
        cmocka_unit_test(test_interval_order),
    };
    return cmocka_run_group_tests(tests, tu_group_setup, tu_group_teardown);
}
