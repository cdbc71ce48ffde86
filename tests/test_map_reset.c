/* test_map_reset.c — the u64scratch map (common/hash) and the growable-array
 * helper ak_reserve (common/strbuf): a map emptied and refilled many times,
 * with few keys in a grown table and with many, behaves as a fresh map every
 * time, and emptying it leaves no slot taken. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "common/strbuf.h"
#include "testutil.h"

/* A small deterministic generator (xorshift64*). */
static uint64_t next(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545f4914f6cdd1dULL;
}

/* Fills m with `count` keys drawn from a range of `range` values (so keys
 * repeat and chains form), checking ids against first-insertion order; then
 * checks every key is interned again with its id and nothing inserted. */
static void fill_and_check(u64scratch *m, uint64_t *seed, uint32_t count, uint64_t range, uint64_t *order)
{
    uint32_t distinct = 0;
    for (uint32_t i = 0; i < count; i++) {
        const uint64_t key = next(seed) % range * 0x100000000ULL; /* low 32 bits all zero */
        uint32_t id, expect = AK_NOT_FOUND;
        for (uint32_t j = 0; j < distinct; j++)
            if (order[j] == key) expect = j;
        int inserted;
        assert_int_equal(u64scratch_intern(m, key, &id, &inserted), 0);
        if (expect == AK_NOT_FOUND) {
            assert_int_equal(inserted, 1);
            assert_int_equal(id, distinct);
            order[distinct++] = key;
        } else {
            assert_int_equal(inserted, 0);
            assert_int_equal(id, expect);
        }
    }
    assert_int_equal(m->count, distinct);
    assert_true(m->count <= (m->mask + 1) / 2 || m->count == 0);
    for (uint32_t j = 0; j < distinct; j++) {
        uint32_t id;
        int inserted;
        assert_int_equal(u64scratch_intern(m, order[j], &id, &inserted), 0);
        assert_int_equal(inserted, 0);
        assert_int_equal(id, j);
    }
    assert_int_equal(m->count, distinct);
}

/* Whether no slot of m is taken. */
static int all_empty(const u64scratch *m)
{
    for (size_t s = 0; m->ids && s <= m->mask; s++)
        if (m->ids[s]) return 0;
    return 1;
}

/* After each reset no slot is taken and ids start from 0 again (an earlier
 * key is new again); the sizes alternate between a large fill (the table
 * grows) and small ones. A zeroed map is empty. */
static void test_u64scratch_reset_refill(void **state)
{
    (void)state;
    u64scratch m;
    memset(&m, 0, sizeof m);
    u64scratch_reset(&m); /* before the first key: nothing to do */
    uint64_t *order = malloc(4096 * sizeof *order);
    uint64_t *prev = malloc(4096 * sizeof *prev);
    assert_non_null(order);
    assert_non_null(prev);
    uint64_t seed = 0x9e3779b97f4a7c15ULL;
    const uint32_t sizes[] = {3000, 5, 0, 40, 1, 2500, 17, 300, 2, 9};
    uint32_t nprev = 0;
    for (size_t round = 0; round < sizeof sizes / sizeof sizes[0]; round++) {
        u64scratch_reset(&m);
        assert_int_equal(m.count, 0);
        assert_true(all_empty(&m));
        if (nprev) {
            uint32_t id;
            int inserted;
            assert_int_equal(u64scratch_intern(&m, prev[nprev - 1], &id, &inserted), 0);
            assert_int_equal(inserted, 1);
            assert_int_equal(id, 0);
            u64scratch_reset(&m);
        }
        fill_and_check(&m, &seed, sizes[round], sizes[round] + 7, order);
        nprev = m.count;
        memcpy(prev, order, nprev * sizeof *prev);
    }
    u64scratch_free(&m);
    free(order);
    free(prev);
}

/* Consecutive keys crowd the table's slots (long probe runs): emptying a few
 * of them after the table grew large leaves no slot taken. */
static void test_u64scratch_reset_runs(void **state)
{
    (void)state;
    u64scratch m;
    memset(&m, 0, sizeof m);
    for (uint32_t i = 0; i < 5000; i++) { /* grow the table */
        uint32_t id;
        int inserted;
        assert_int_equal(u64scratch_intern(&m, i, &id, &inserted), 0);
    }
    for (int round = 0; round < 50; round++) {
        u64scratch_reset(&m);
        assert_true(all_empty(&m));
        const uint32_t n = (uint32_t)(1 + round * 7 % 60);
        for (uint32_t i = 0; i < n; i++) {
            uint32_t id;
            int inserted;
            assert_int_equal(u64scratch_intern(&m, (uint64_t)round * 1000 + i, &id, &inserted), 0);
            assert_int_equal(inserted, 1);
            assert_int_equal(id, i);
        }
    }
    u64scratch_free(&m);
    assert_null(m.ids);
}

/* ak_reserve: capacity doubles from 16 and covers what is asked; contents
 * survive growth; an impossible size fails and leaves the array as it was. */
static void test_ak_reserve(void **state)
{
    (void)state;
    uint64_t *a = NULL;
    size_t cap = 0;
    assert_int_equal(AK_RESERVE(a, cap, 0), 0);
    assert_null(a);
    assert_int_equal(AK_RESERVE(a, cap, 1), 0);
    assert_int_equal(cap, 16);
    for (size_t i = 0; i < 1000; i++) {
        assert_int_equal(AK_RESERVE(a, cap, i + 1), 0);
        assert_true(cap >= i + 1);
        a[i] = i * 3;
    }
    assert_int_equal(cap, 1024);
    for (size_t i = 0; i < 1000; i++) assert_int_equal(a[i], i * 3);
    uint64_t *before = a;
    assert_int_equal(AK_RESERVE(a, cap, SIZE_MAX / 4), -1);
    assert_ptr_equal(a, before);
    assert_int_equal(cap, 1024);
    free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_u64scratch_reset_refill),
        cmocka_unit_test(test_u64scratch_reset_runs),
        cmocka_unit_test(test_ak_reserve),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
