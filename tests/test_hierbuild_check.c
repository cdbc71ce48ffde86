/* test_hierbuild_check.c — the check of built hierarchies (hb_check_sizes,
 * core/hierbuild.h) and the memory a run's builds share: the fast check
 * against the check as first written (hb__check_reference) on random rows,
 * well formed and broken in random ways (a leaf twice, a label on two
 * runs, a label for two nodes, two parents, an empty label, "*" below the
 * added root; numbers ascending, text ascending, text in no order, shared
 * and unshared label bytes), the same verdict, error and level sizes, with
 * one hb_check_mem across all; and builds of very different sizes one after
 * the other into the same rows (hb_build_into), written file for file like
 * builds one at a time. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/hierbuild.h"
#include "core/hierbuild_internal.h"
#include "testutil.h"

#define MAXW 6
#define MAXN 260

/* Random rows as labels: lab[i][l], NUL-terminated, of w levels. */
typedef struct grid {
    uint32_t n, w;
    char lab[MAXN][MAXW][24];
} grid;

/* A well-formed grid: leaves in one of three orders (numbers ascending,
 * possibly negative or with a NULL first; text ascending by bytes; text in
 * no order), groups of consecutive rows above, a root or several top labels. */
static void make_grid(tu_rng *g, grid *d)
{
    d->n = 1 + (uint32_t)tu_below(g, MAXN);
    d->w = 1 + (uint32_t)tu_below(g, MAXW);
    const int order = (int)tu_below(g, 3), null_first = tu_below(g, 3) == 0;
    long x = (long)tu_below(g, 40) - (tu_below(g, 2) ? 20 : 0);
    for (uint32_t i = 0; i < d->n; i++) {
        char *s = d->lab[i][0];
        if (i == 0 && null_first) snprintf(s, 24, "NULL");
        else if (order == 0) snprintf(s, 24, "%ld", x += 1 + (long)tu_below(g, tu_below(g, 4) ? 3 : 5000));
        else if (order == 1) snprintf(s, 24, "k%06ld", x += 1 + (long)tu_below(g, 30));
        else snprintf(s, 24, "v%u_%u", (unsigned)tu_below(g, 1000), i);
    }
    uint32_t span = 1;
    for (uint32_t l = 1; l < d->w; l++) {
        span *= 2 + (uint32_t)tu_below(g, 3);
        const int last = l + 1 == d->w, root = last && tu_below(g, 2);
        for (uint32_t i = 0; i < d->n; i++)
            if (root) snprintf(d->lab[i][l], 24, "*");
            else if (tu_below(g, 4) == 0) snprintf(d->lab[i][l], 24, "%u-%u", i / span * span, i / span * span + span - 1);
            else snprintf(d->lab[i][l], 24, "L%u:%u", l, i / span);
    }
}

/* Breaks the grid in one random way (or leaves it, or breaks it twice). */
static void mutate(tu_rng *g, grid *d)
{
    const int times = (int)tu_below(g, 3);
    for (int t = 0; t < times; t++) {
        const uint32_t i = (uint32_t)tu_below(g, d->n), j = (uint32_t)tu_below(g, d->n);
        const uint32_t l = (uint32_t)tu_below(g, d->w), m = (uint32_t)tu_below(g, d->w);
        char was[24];
        switch (tu_below(g, 7)) {
        case 6: /* a whole run's label made a leaf's (that of one of its rows, or another) */
            if (l == 0) break;
            memcpy(was, d->lab[i][l], 24);
            for (uint32_t k = 0; k < d->n; k++)
                if (!strcmp(d->lab[k][l], was)) memcpy(d->lab[k][l], d->lab[tu_below(g, 2) ? i : j][0], 24);
            break;
        case 0: memcpy(d->lab[i][l], d->lab[j][m], 24); break; /* any label of another place */
        case 1: d->lab[i][l][0] = '\0'; break;                  /* empty */
        case 2: snprintf(d->lab[tu_below(g, 2) ? i : d->n > 1 ? tu_below(g, 2) : 0][tu_below(g, 2) ? l : 0], 24, "*"); break;
        case 3: memcpy(d->lab[i][0], d->lab[j][0], 24); break;  /* a leaf twice */
        case 4: memcpy(d->lab[i][l], d->lab[i][0], 24); break;  /* the leaf's label above it */
        default: /* a run's label on a run of the same level elsewhere */
            for (uint32_t k = i; k < d->n && k < i + 3; k++) memcpy(d->lab[k][l], d->lab[j][l], 24);
            break;
        }
    }
}

/* The grid as rows; a label equal to the one above shares its bytes when `share`. */
static void rows_of_grid(const grid *d, int share, hb_rows *r)
{
    ak_error err;
    memset(r, 0, sizeof *r);
    assert_int_equal(hb__rows_init(r, d->w, &err), 0);
    for (uint32_t i = 0; i < d->n; i++)
        for (uint32_t l = 0; l < d->w; l++) {
            if (share && i > 0 && !strcmp(d->lab[i][l], d->lab[i - 1][l])) assert_int_equal(hb__put_prev(r, &err), 0);
            else assert_int_equal(hb__put(r, d->lab[i][l], strlen(d->lab[i][l]), &err), 0);
        }
}

static void test_check_against_reference(void **state)
{
    (void)state;
    tu_rng g = {31};
    grid *d = malloc(sizeof *d);
    assert_non_null(d);
    hb_check_mem mem = {0};
    int passed = 0, refused = 0;
    for (int rep = 0; rep < 4000; rep++) {
        make_grid(&g, d);
        if (rep % 4) mutate(&g, d);
        hb_rows r;
        rows_of_grid(d, (int)tu_below(&g, 2), &r);
        uint64_t s1[MAXW], s2[MAXW];
        ak_error e1, e2;
        memset(&e1, 0, sizeof e1);
        memset(&e2, 0, sizeof e2);
        const int fast = hb_check_sizes_mem(&r, "rows", s1, &mem, &e1);
        const int ref = hb__check_reference(&r, "rows", s2, &e2);
        if (fast != ref || (ref && (strcmp(e1.message, e2.message) || e1.line != e2.line)))
            fail_msg("rep %d: fast %d (%s), reference %d (%s)", rep, fast, e1.message, ref, e2.message);
        if (ref == 0) {
            assert_memory_equal(s1, s2, r.width * sizeof *s1);
            passed++;
        } else {
            refused++;
        }
        hb_rows_free(&r);
    }
    hb_check_mem_free(&mem);
    free(d);
    if (passed < 400 || refused < 400) fail_msg("passed %d, refused %d: the cases do not cover both", passed, refused);
}

/* The hierarchy built from the column given as cells, written to path. */
static void write_rows(const hb_rows *r, const char *path)
{
    ak_error err;
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(hb_write(r, f, path, &err), 0);
    assert_int_equal(fclose(f), 0);
}

/* Writes a one-column CSV of n random cells (integers below `range`, or
 * decimals, some missing) and collects it. */
static void random_column(tu_rng *g, size_t n, uint32_t range, int decimals, int presence, hb_values *v)
{
    const char *path = tu_path(tu_group_dir, "col.csv");
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("c\n", f);
    for (size_t i = 0; i < n; i++) {
        if (tu_below(g, 20) == 0) fputs("\n", f);
        else if (decimals) fprintf(f, "%.2f\n", (double)tu_below(g, range) / 100);
        else fprintf(f, "%u\n", (unsigned)tu_below(g, range));
    }
    assert_int_equal(fclose(f), 0);
    ak_error err;
    assert_int_equal((presence ? hb_collect_presence : hb_collect)(v, path, NULL, ',', "c", NULL, &err), 0);
}

static void test_build_reuse(void **state)
{
    (void)state;
    tu_rng g = {32};
    hb_rows shared = {0};
    hb_check_mem mem = {0};
    static const uint32_t sizes[] = {200000, 30, 5, 120000, 1, 60000, 300, 200000, 7};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        const uint32_t kind = (uint32_t)(k % 3); /* interval, quantiles, flat */
        const int decimals = k == 5;
        hb_values v1, v2;
        uint64_t seed = g.s;
        random_column(&g, sizes[k] / 2 + 1, sizes[k], decimals, kind == 0, &v1);
        g.s = seed; /* the same column again, for the build on its own */
        random_column(&g, sizes[k] / 2 + 1, sizes[k], decimals, kind == 0, &v2);
        uint32_t fan[2] = {2, 3}, q[2] = {8, 2};
        hb_options o = {.kind = HB_INTERVAL, .width = decimals ? 0.5 : 10, .fanout = fan, .nfanout = k % 2 + 1};
        if (kind == 1) o = (hb_options){.kind = HB_QUANTILES, .quantiles = q, .nquantiles = 2};
        if (kind == 2) o = (hb_options){.kind = HB_FLAT};
        ak_error err;
        hb_rows alone;
        assert_int_equal(hb_build(&v1, &o, &alone, &err), 0);
        assert_int_equal(hb_build_into(&v2, &o, &shared, &err), 0);
        uint64_t s1[8], s2[8];
        assert_int_equal(hb_check_sizes(&alone, "alone", s1, &err), 0);
        assert_int_equal(hb_check_sizes_mem(&shared, "shared", s2, &mem, &err), 0);
        assert_int_equal(alone.width, shared.width);
        assert_memory_equal(s1, s2, alone.width * sizeof *s1);
        const char *pa = tu_path(tu_group_dir, "alone.csv"), *pb = tu_path(tu_group_dir, "shared.csv");
        write_rows(&alone, pa);
        write_rows(&shared, pb);
        size_t la, lb;
        char *a = tu_read_file(pa, &la), *b = tu_read_file(pb, &lb);
        if (la != lb || memcmp(a, b, la)) fail_msg("build %zu (%u values): the files differ", k, sizes[k]);
        free(a);
        free(b);
        hb_rows_free(&alone);
        hb_values_free(&v1);
        hb_values_free(&v2);
    }
    /* a build that fails leaves the rows freed, ready for the next */
    hb_values v;
    random_column(&g, 10, 10, 0, 0, &v);
    hb_options bad = {.kind = HB_INTERVAL, .width = -1};
    ak_error err;
    assert_int_equal(hb_build_into(&v, &bad, &shared, &err), ANONKIT_E_USAGE);
    assert_null(shared.at);
    hb_values_free(&v);
    hb_rows_free(&shared);
    hb_check_mem_free(&mem);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_check_against_reference),
        cmocka_unit_test(test_build_reuse),
    };
    return cmocka_run_group_tests(tests, tu_group_setup, tu_group_teardown);
}
