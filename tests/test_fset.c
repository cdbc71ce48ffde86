/* test_fset.c — Incognito's frequency-set rollup (src/algo/incognito/fset.c)
 * against a scan of the table at the target node: on random tables of one to
 * seven numeric QIs, every rollup from a random specialization (raising any
 * number of QIs, dropping some) must give the scan's set entry for entry, in
 * the same order (that of the first row), so also the sums the optimal search
 * takes over it. Sets range from a few keys to more than 16,384, on both sides
 * of the rollup's switch from the direct group-by to the blocked, prefetching
 * one (tables of more than 4,096 slots), and the group-by's
 * generations are made to wrap around over slots that low generations filled
 * (a stale slot the clearing missed would send a key to another key's entry
 * only by chance, so the wrap is exercised here rather than proved). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algo/incognito/inc_internal.h"
#include "core/table.h"
#include "lattice_table.h"
#include "model/model.h"
#include "testutil.h"

#define FS_MAX_QI 7

/* A random table of nrows rows and nqi numeric QIs with domains dom[q] in dir, loaded. */
static table *random_table(tu_rng *rng, const char *dir, size_t nrows, int nqi, const int *dom)
{
    static char paths[FS_MAX_QI][4096];
    const char *names[FS_MAX_QI] = {"a0", "a1", "a2", "a3", "a4", "a5", "a6"};
    const char *hp[FS_MAX_QI];
    unsigned char numeric[FS_MAX_QI];
    for (int q = 0; q < nqi; q++) {
        char name[32];
        snprintf(name, sizeof name, "h%d.csv", q);
        snprintf(paths[q], sizeof paths[q], "%s", tu_path(dir, name));
        lattice_write_interval_hierarchy(paths[q], dom[q], 1 + (int)tu_below(rng, 4), 0);
        hp[q] = paths[q];
        numeric[q] = 1;
    }
    char csv[4096];
    snprintf(csv, sizeof csv, "%s", tu_path(dir, "in.csv"));
    FILE *f = fopen(csv, "w");
    assert_non_null(f);
    fprintf(f, "a0");
    for (int q = 1; q < nqi; q++) fprintf(f, ",a%d", q);
    fprintf(f, "\n");
    for (size_t r = 0; r < nrows; r++) {
        for (int q = 0; q < nqi; q++) {
            int v = (int)tu_below(rng, (uint64_t)dom[q]);
            if (tu_below(rng, 4) == 0) v = (int)tu_below(rng, (uint64_t)(dom[q] + 3) / 4); /* duplicates */
            fprintf(f, q ? ",%d" : "%d", v);
        }
        fprintf(f, "\n");
    }
    fclose(f);
    table_spec spec = {.path = csv, .display_name = csv, .delimiter = ',', .nqi = (size_t)nqi,
                       .qi_names = names, .hierarchy_paths = hp, .force_numeric = numeric, .threads = 1};
    table *t = NULL;
    ak_error err;
    if (table_load(&t, &spec, &err) < 0) fail_msg("table_load: %s", err.message);
    return t;
}

/* Random packed levels of c, each at most the one in `cap` (all when cap_all). */
static uint64_t random_levels(tu_rng *rng, const inc_ctx *c, uint64_t cap, int cap_all)
{
    uint64_t lv = 0;
    for (uint32_t q = 0; q < c->nqi; q++) {
        const uint32_t top = cap_all ? c->qi[q].height : inc_level(c, cap, q);
        uint32_t l = (uint32_t)tu_below(rng, (uint64_t)top + 1);
        if (tu_below(rng, 3) == 0) l = top; /* often equal: fewer QIs raised */
        lv = inc_with_level(c, lv, q, l);
    }
    return lv;
}

static void assert_same_set(const inc_fset *a, const inc_fset *b)
{
    assert_int_equal(a->n, b->n);
    for (size_t i = 0; i < a->n; i++) {
        if (a->key[i] != b->key[i] || a->count[i] != b->count[i])
            fail_msg("entry %zu: rollup (%llx, %u), scan (%llx, %u)", i, (unsigned long long)a->key[i],
                     a->count[i], (unsigned long long)b->key[i], b->count[i]);
    }
}

static void test_rollup_agrees_with_scan(void **state)
{
    (void)state;
    tu_rng rng = {20261127};
    size_t largest = 0, smallest = SIZE_MAX;
    for (int round = 0; round < 24; round++) {
        const char *dir = tu_mkdtemp();
        const int nqi = 1 + (int)tu_below(&rng, FS_MAX_QI);
        int dom[FS_MAX_QI];
        size_t nrows = 1 + tu_below(&rng, 3000);
        for (int q = 0; q < nqi; q++) dom[q] = 1 + (int)tu_below(&rng, 40);
        if (round % 4 == 3) { /* many distinct keys: past the direct group-by */
            nrows = 40000 + tu_below(&rng, 20000);
            for (int q = 0; q < nqi; q++) dom[q] = 64 + (int)tu_below(&rng, 200);
            if (nqi == 1) dom[0] = 60000;
        }
        table *t = random_table(&rng, dir, nrows, nqi, dom);
        model m;
        model_init(&m);
        m.k = 2;
        inc_ctx c;
        ak_error err;
        if (inc_ctx_init(&c, t, &m, 0, &err) < 0) fail_msg("inc_ctx_init: %s", err.message);
        const uint64_t full = inc_full_mask(&c);
        inc_fset *bottom = NULL;
        assert_int_equal(inc_fset_scan(&c, (inc_node){full, 0}, &bottom, &err), ANONKIT_OK);
        for (int trial = 0; trial < 12; trial++) {
            /* The generations wrap around within the round, over slots that low generations filled. */
            if (round % 3 == 1 && trial == 3) c.hgen = UINT32_MAX - 3;
            const uint64_t to_lv = random_levels(&rng, &c, 0, 1);
            const uint64_t from_lv = random_levels(&rng, &c, to_lv, 0);
            /* The target keeps a random non-empty subset of the QIs (a projection as well as a rollup). */
            uint64_t to_mask = full;
            if (nqi > 1 && tu_below(&rng, 3) == 0) {
                to_mask = tu_next(&rng) & full;
                if (!to_mask) to_mask = 1;
            }
            inc_fset *from = NULL, *got = NULL, *want = NULL;
            assert_int_equal(inc_fset_rollup(&c, bottom, (inc_node){full, 0}, (inc_node){full, from_lv}, &from, &err),
                             ANONKIT_OK);
            inc_fset *scanned_from = NULL;
            assert_int_equal(inc_fset_scan(&c, (inc_node){full, from_lv}, &scanned_from, &err), ANONKIT_OK);
            assert_same_set(from, scanned_from);
            assert_int_equal(inc_fset_rollup(&c, from, (inc_node){full, from_lv}, (inc_node){to_mask, to_lv}, &got, &err),
                             ANONKIT_OK);
            assert_int_equal(inc_fset_scan(&c, (inc_node){to_mask, to_lv}, &want, &err), ANONKIT_OK);
            assert_same_set(got, want);
            if (want->n > largest) largest = want->n;
            if (from->n > largest) largest = from->n;
            if (want->n < smallest) smallest = want->n;
            /* Every row is counted once. */
            uint64_t rows = 0;
            for (size_t i = 0; i < got->n; i++) rows += got->count[i];
            assert_int_equal(rows, c.nrows);
            inc_fset_free(from);
            inc_fset_free(scanned_from);
            inc_fset_free(got);
            inc_fset_free(want);
        }
        if (round % 3 == 1) assert_true(c.hgen < UINT32_MAX - 3); /* it did wrap around */
        inc_fset_free(bottom);
        inc_ctx_free(&c);
        table_free(t);
        tu_rmtree(dir);
    }
    /* The cases reached both group-bys: sets of more than 16,384 keys and small ones. */
    assert_true(largest > 16384);
    assert_true(smallest < 64);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rollup_agrees_with_scan),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
