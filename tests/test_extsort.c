/* test_extsort.c — sorting fixed-width records within a memory budget
 * (io/extsort), always against qsort: record widths of 1 to 7 words, budgets
 * from "unlimited" down to less than one block (many runs, several merge
 * passes), keys already sorted, reversed, all equal or with few distinct
 * values; blocks counted as the I/O model says (every block written is read
 * once); spill files have no name, so the temporary folder shows nothing
 * while runs are on disk and nothing after; misuse and unusable folders are
 * errors. In-memory sorts of
 * arrays on one to three threads give qsort's order. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "io/extsort.h"
#include "testutil.h"

/* ------------------------------------------------------------ external sort -- */

static int cmp_rec3(const void *a, const void *b)
{
    const uint64_t *x = a, *y = b;
    for (int w = 0; w < 3; w++)
        if (x[w] != y[w]) return x[w] < y[w] ? -1 : 1;
    return 0;
}

static void test_external_sort(void **state)
{
    (void)state;
    tu_rng rng = {5};
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", tu_mkdtemp());
    static const size_t budgets[] = {0, 4096, 20000, 100000, 1 << 20};
    for (size_t bi = 0; bi < sizeof budgets / sizeof budgets[0]; bi++) {
        const size_t n = 1 + tu_below(&rng, 60000);
        uint64_t *recs = malloc(n * 3 * sizeof *recs);
        assert_non_null(recs);
        extsort *s;
        ak_error err;
        assert_int_equal(extsort_open(&s, 3, budgets[bi], dir, &err), ANONKIT_OK);
        for (size_t i = 0; i < n; i++) {
            recs[i * 3] = tu_below(&rng, 50);
            recs[i * 3 + 1] = tu_next(&rng);
            recs[i * 3 + 2] = i;
            assert_int_equal(extsort_add(s, recs + i * 3, &err), ANONKIT_OK);
        }
        assert_int_equal(extsort_finish(s, &err), ANONKIT_OK);
        qsort(recs, n, 3 * sizeof *recs, cmp_rec3);
        const uint64_t *r;
        for (size_t i = 0; i < n; i++) {
            assert_int_equal(extsort_next(s, &r, &err), 1);
            assert_memory_equal(r, recs + i * 3, 3 * sizeof *recs);
        }
        assert_int_equal(extsort_next(s, &r, &err), 0);
        extsort_stats st;
        extsort_get_stats(s, &st);
        assert_int_equal(st.records, n);
        if (budgets[bi] && n * 24 > budgets[bi]) {
            assert_true(st.runs >= 2);
            assert_true(st.blocks_written > 0 && st.blocks_read >= st.blocks_written / 2);
        }
        if (budgets[bi] == 4096 && n > 2000) assert_true(st.merge_passes > 0);
        extsort_free(s);
        assert_true(tu_dir_is_empty(dir)); /* no spill folder or file left */
        free(recs);
    }
    tu_rmtree(dir);
}

/* In-memory sorts of more than 65536 records (split on 16 bits of word 0
 * first, on one to three threads) against qsort: top words spread out, all
 * sharing their top two bytes, few distinct values (long runs of equal
 * keys), only low bits set, and one word 0 for all. */
static void test_sort_many_records(void **state)
{
    (void)state;
    tu_rng rng = {6};
    for (int kind = 0; kind < 5; kind++) {
        /* more than 3 * 65536 records for every other kind: enough for three parts of the split */
        const size_t n = (kind % 2 ? 65536 : 3 * 65536) + tu_below(&rng, 80000);
        uint64_t *recs = malloc(n * 3 * sizeof *recs), *want = malloc(n * 3 * sizeof *want);
        assert_non_null(recs);
        assert_non_null(want);
        for (size_t i = 0; i < n; i++) {
            const uint64_t r = tu_next(&rng);
            /* kinds: random; one value in the top 16 bits; a few in the top 3; small numbers (iDistance's
             * centre ranks); word 0 the same everywhere */
            recs[i * 3] = kind == 0   ? r
                          : kind == 1 ? (0xabcdull << 48) | (r >> 16)
                          : kind == 2 ? (r % 5) << 62
                          : kind == 3 ? r % 512
                                      : 77;
            recs[i * 3 + 1] = kind == 2 ? 0 : tu_next(&rng);
            recs[i * 3 + 2] = i;
        }
        memcpy(want, recs, n * 3 * sizeof *recs);
        qsort(want, n, 3 * sizeof *want, cmp_rec3);
        uint64_t *copy = malloc(n * 3 * sizeof *copy);
        assert_non_null(copy);
        memcpy(copy, recs, n * 3 * sizeof *recs);
        for (unsigned threads = 1; threads <= 3; threads++) { /* the same order on any number of threads */
            memcpy(recs, copy, n * 3 * sizeof *recs);
            ak_error err;
            assert_int_equal(extsort_sort_array(recs, n, 3, threads, &err), ANONKIT_OK);
            assert_memory_equal(recs, want, n * 3 * sizeof *recs);
        }
        free(copy);
        free(recs);
        free(want);
    }
}

/* ------------------------------------------------------- any width, any keys -- */

static size_t cmp_words; /* record width for cmp_rec (qsort has no context argument) */

static int cmp_rec(const void *a, const void *b)
{
    const uint64_t *x = a, *y = b;
    for (size_t w = 0; w < cmp_words; w++)
        if (x[w] != y[w]) return x[w] < y[w] ? -1 : 1;
    return 0;
}

/* n records of `words` words of the given kind; the last word is the row
 * number unless `dups` (then whole records repeat). */
static uint64_t *make_records(tu_rng *g, size_t n, size_t words, int kind, int dups)
{
    uint64_t *recs = malloc((n ? n : 1) * words * sizeof *recs);
    assert_non_null(recs);
    for (size_t i = 0; i < n; i++) {
        uint64_t *r = recs + i * words;
        for (size_t w = 0; w < words; w++) {
            const uint64_t x = tu_next(g);
            switch (kind) {
            case 0: r[w] = x; break;                                 /* random */
            case 1: r[w] = w == 0 ? i : x % 3; break;                /* sorted on word 0 */
            case 2: r[w] = w == 0 ? UINT64_MAX - i : x % 3; break;   /* reversed */
            case 3: r[w] = 42; break;                                /* all equal */
            default: r[w] = w == 0 ? (x % 4) << 62 : x % 5; break;   /* few distinct, top bits */
            }
        }
        if (!dups && words > 1) r[words - 1] = i;
    }
    return recs;
}

/* Sorts recs through an extsort with the given budget in the group's folder
 * (empty before and after), checks the order against qsort and the block
 * counts, and returns the stats. */
static extsort_stats sort_and_check(const uint64_t *recs, size_t n, size_t words, size_t memory)
{
    const char *folder = tu_group_dir;
    ak_error err;
    ak_err_clear(&err);
    extsort *s = NULL;
    assert_int_equal(extsort_open(&s, words, memory, folder, &err), ANONKIT_OK);
    for (size_t i = 0; i < n; i++) assert_int_equal(extsort_add(s, recs + i * words, &err), ANONKIT_OK);
    assert_int_equal(extsort_finish(s, &err), ANONKIT_OK);
    uint64_t *want = malloc((n ? n : 1) * words * sizeof *want);
    assert_non_null(want);
    if (n) memcpy(want, recs, n * words * sizeof *want);
    cmp_words = words;
    qsort(want, n, words * sizeof *want, cmp_rec);
    const uint64_t *r;
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(extsort_next(s, &r, &err), 1);
        assert_memory_equal(r, want + i * words, words * sizeof *want);
    }
    assert_int_equal(extsort_next(s, &r, &err), 0);
    assert_null(r);
    assert_int_equal(extsort_next(s, &r, &err), 0);
    extsort_stats st;
    extsort_get_stats(s, &st);
    assert_true(st.records == n);
    const size_t rec = words * 8;
    assert_true(st.block_size >= rec && st.block_size % rec == 0);
    if (!memory) assert_true(st.runs == 0);
    /* beyond the budget (and the buffer's floor of 64 records): runs on disk */
    if (memory && n * rec > memory && n > 64) assert_true(st.runs >= 2);
    if (st.runs) {
        /* every record is written once per pass (the first included), in
         * whole blocks but for the last of each run, and all of it read back */
        const uint64_t bytes = (uint64_t)n * rec, per_pass = (bytes + st.block_size - 1) / st.block_size;
        assert_true(st.blocks_written >= (1 + st.merge_passes) * per_pass);
        assert_true(st.blocks_written <= (1 + st.merge_passes) * per_pass + st.runs);
        assert_true(st.blocks_read == st.blocks_written);
    } else {
        assert_true(st.blocks_written == 0 && st.blocks_read == 0 && st.merge_passes == 0);
    }
    extsort_free(s);
    DIR *d = opendir(folder);
    assert_non_null(d);
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) fail_msg("left behind: %s", e->d_name);
    closedir(d);
    free(want);
    return st;
}

static void test_widths_and_keys(void **state)
{
    (void)state;
    tu_rng g = {11};
    const size_t widths[] = {1, 2, 5, 7};
    const size_t budgets[] = {0, 1, 20000, 1 << 20};
    for (size_t wi = 0; wi < sizeof widths / sizeof widths[0]; wi++)
        for (int kind = 0; kind < 5; kind++)
            for (size_t bi = 0; bi < sizeof budgets / sizeof budgets[0]; bi++) {
                const size_t n = 2000 + tu_below(&g, 2000);
                uint64_t *recs = make_records(&g, n, widths[wi], kind, kind == 3 || widths[wi] == 1);
                const extsort_stats st = sort_and_check(recs, n, widths[wi], budgets[bi]);
                /* below one block the merges cannot take all runs at once */
                if (budgets[bi] == 1) assert_true(st.merge_passes > 0);
                free(recs);
            }
}

/* No records, one, and exactly as many as fill the budget's buffer. */
static void test_small_counts(void **state)
{
    (void)state;
    tu_rng g = {12};
    const size_t counts[] = {0, 1, 2, 63, 64, 65, 128, 129};
    for (size_t ci = 0; ci < sizeof counts / sizeof counts[0]; ci++)
        for (size_t memory = 0; memory <= 1; memory++) {
            uint64_t *recs = make_records(&g, counts[ci], 3, 0, 0);
            sort_and_check(recs, counts[ci], 3, memory);
            free(recs);
        }
}

/* While runs are on disk the temporary folder shows nothing at all: the run
 * files have no names and there is no private folder, so no signal, not even
 * SIGKILL, can leave anything in it. Abandoning a sort at any point leaves
 * nothing either. */
static void test_spill_folder(void **state)
{
    (void)state;
    ak_error err;
    ak_err_clear(&err);
    for (int stop = 0; stop < 3; stop++) { /* 0: after adding, 1: after finish, 2: half read */
        char folder[4096];
        snprintf(folder, sizeof folder, "%s", tu_mkdtemp());
        extsort *s;
        assert_int_equal(extsort_open(&s, 2, 1, folder, &err), ANONKIT_OK);
        uint64_t rec[2];
        for (uint64_t i = 0; i < 1000; i++) {
            rec[0] = 999 - i;
            rec[1] = i;
            assert_int_equal(extsort_add(s, rec, &err), ANONKIT_OK);
        }
        if (stop >= 1) assert_int_equal(extsort_finish(s, &err), ANONKIT_OK);
        extsort_stats st;
        extsort_get_stats(s, &st);
        assert_true(st.runs >= 2); /* runs are on disk now */
        assert_true(tu_dir_is_empty(folder));
        const uint64_t *r;
        if (stop == 2)
            for (uint64_t i = 0; i < 500; i++) {
                assert_int_equal(extsort_next(s, &r, &err), 1);
                assert_true(r[0] == i && r[1] == 999 - i);
            }
        assert_true(tu_dir_is_empty(folder));
        extsort_free(s);
        assert_true(tu_dir_is_empty(folder));
        tu_rmtree(folder);
    }
    extsort_free(NULL);
}

/* Reading before the end of input is refused; a folder that cannot hold
 * spill files fails at the first spill (not before: an in-memory sort needs
 * none), naming it; a path too long fails at once. */
static void test_errors(void **state)
{
    (void)state;
    ak_error err;
    ak_err_clear(&err);
    extsort *s;
    assert_int_equal(extsort_open(&s, 1, 0, NULL, &err), ANONKIT_OK);
    const uint64_t one = 1, *r = &one;
    assert_int_equal(extsort_add(s, &one, &err), ANONKIT_OK);
    assert_int_equal(extsort_next(s, &r, &err), ANONKIT_E_INTERNAL);
    assert_null(r);
    extsort_free(s);

    const char *missing = tu_path(tu_group_dir, "no/such/folder");
    assert_int_equal(extsort_open(&s, 1, 1, missing, &err), ANONKIT_OK);
    int rc = ANONKIT_OK;
    uint64_t i = 0;
    for (; i < 100000 && rc == ANONKIT_OK; i++) rc = extsort_add(s, &i, &err);
    assert_int_equal(rc, ANONKIT_E_IO);
    assert_true(i > 64); /* the first buffer of 64 records filled first */
    assert_non_null(strstr(err.message, "cannot create spill files"));
    assert_non_null(strstr(err.file, "no/such/folder"));
    extsort_free(s);
    /* the same folder does for a sort that stays in memory */
    assert_int_equal(extsort_open(&s, 1, 0, missing, &err), ANONKIT_OK);
    for (i = 0; i < 1000; i++) assert_int_equal(extsort_add(s, &(uint64_t){999 - i}, &err), ANONKIT_OK);
    assert_int_equal(extsort_finish(s, &err), ANONKIT_OK);
    for (i = 0; i < 1000; i++) {
        assert_int_equal(extsort_next(s, &r, &err), 1);
        assert_true(*r == i);
    }
    extsort_free(s);

    char *longp = malloc(5000);
    assert_non_null(longp);
    memset(longp, 'x', 4999);
    longp[4999] = '\0';
    ak_err_clear(&err);
    s = (extsort *)&one;
    assert_int_equal(extsort_open(&s, 1, 1, longp, &err), ANONKIT_E_IO);
    assert_null(s);
    free(longp);
}

/* In-memory array sorts of every small count (the insertion-sort and radix
 * paths) and widths, on one to three threads, equal qsort's. */
static void test_sort_array_small(void **state)
{
    (void)state;
    tu_rng g = {13};
    ak_error err;
    ak_err_clear(&err);
    for (size_t words = 1; words <= 4; words++)
        for (size_t n = 0; n <= 300; n += n < 40 ? 1 : 37)
            for (int kind = 0; kind < 5; kind++) {
                uint64_t *recs = make_records(&g, n, words, kind, 1);
                uint64_t *want = malloc((n ? n : 1) * words * sizeof *want);
                uint64_t *work = malloc((n ? n : 1) * words * sizeof *work);
                assert_non_null(want);
                assert_non_null(work);
                if (n) memcpy(want, recs, n * words * sizeof *want);
                cmp_words = words;
                qsort(want, n, words * sizeof *want, cmp_rec);
                for (unsigned threads = 1; threads <= 3; threads++) {
                    if (n) memcpy(work, recs, n * words * sizeof *work);
                    assert_int_equal(extsort_sort_array(work, n, words, threads, &err), ANONKIT_OK);
                    if (n) assert_memory_equal(work, want, n * words * sizeof *want);
                }
                free(work);
                free(want);
                free(recs);
            }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_external_sort),  cmocka_unit_test(test_sort_many_records),
        cmocka_unit_test(test_widths_and_keys), cmocka_unit_test(test_small_counts),
        cmocka_unit_test(test_spill_folder),   cmocka_unit_test(test_errors),
        cmocka_unit_test(test_sort_array_small),
    };
    return cmocka_run_group_tests(tests, tu_group_setup, tu_group_teardown);
}
