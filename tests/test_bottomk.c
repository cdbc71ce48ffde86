/* test_bottomk.c — bottom-m samples (common/bottomk.h) against brute force: a
 * random stream cut into 1..3 parts, each kept in a store of its own m, gives
 * through bottomk_cut exactly the stream's `want` least keys and their
 * records whenever it says so, and says so whenever every part's m covers its
 * share, and trimmed to the cut they hold just those; priorities give every
 * record the same chance. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/bottomk.h"
#include "testutil.h"

static int cmp_key(const void *a, const void *b)
{
    const bottomk_key *x = a, *y = b;
    return bottomk_key_less(*x, *y) ? -1 : bottomk_key_less(*y, *x) ? 1 : 0;
}

static void test_against_brute_force(void **state)
{
    (void)state;
    tu_rng rng = {7};
    int held = 0, not_held = 0;
    for (int round = 0; round < 400; round++) {
        const size_t n = 1 + (size_t)tu_below(&rng, 3000);
        const unsigned nparts = 1 + (unsigned)tu_below(&rng, 3);
        const size_t want = 1 + (size_t)tu_below(&rng, n);
        /* priorities: hashed (the real use), or few distinct values (ties broken by seq) */
        const int few = tu_below(&rng, 4) == 0;
        const uint64_t seed = tu_next(&rng);
        uint64_t cut_at[4] = {0};
        for (unsigned p = 1; p < nparts; p++) cut_at[p] = tu_below(&rng, n + 1);
        cut_at[nparts] = n;
        for (unsigned p = 1; p < nparts; p++) /* sort the inner cuts (insertion) */
            for (unsigned q = p; q > 1 && cut_at[q - 1] > cut_at[q]; q--) {
                const uint64_t t = cut_at[q];
                cut_at[q] = cut_at[q - 1];
                cut_at[q - 1] = t;
            }
        bottomk parts[3];
        uint64_t base[3], guess[3];
        int guessed[3];
        bottomk_key *all = malloc(n * sizeof *all);
        assert_non_null(all);
        for (unsigned p = 0; p < nparts; p++) {
            const size_t len = (size_t)(cut_at[p + 1] - cut_at[p]);
            /* m: enough for any share, or about the expected share (may miss) */
            const size_t m = tu_below(&rng, 2) ? want : 1 + want * (len + 1) / n + (size_t)tu_below(&rng, 8);
            assert_int_equal(bottomk_init(&parts[p], 12, m, NULL), ANONKIT_OK);
            guessed[p] = tu_below(&rng, 3) == 0;
            if (guessed[p]) { /* a guessed bound: any priority, so often too low */
                guess[p] = few ? tu_below(&rng, 6) : tu_next(&rng);
                bottomk_admit_below(&parts[p], guess[p]);
            }
            base[p] = cut_at[p];
            for (uint64_t i = cut_at[p]; i < cut_at[p + 1]; i++) {
                const uint64_t pri = few ? tu_below(&rng, 5) : ak_priority(seed, i * 37 + 11);
                all[i] = (bottomk_key){pri, i};
                uint8_t rec[12];
                memcpy(rec, &i, sizeof i);
                memset(rec + 8, 0xA5, 4);
                assert_int_equal(bottomk_offer(&parts[p], pri, i - cut_at[p], rec, NULL), ANONKIT_OK);
            }
            assert_true(parts[p].n <= parts[p].cap);
        }
        qsort(all, n, sizeof *all, cmp_key);
        bottomk_key cut;
        const int got = bottomk_cut(parts, base, nparts, want, &cut, NULL);
        assert_true(got >= 0);
        /* Every part surely kept its share of the want least when the share is
         * below its m (its bound is then above the cut) and a guessed bound
         * lies at or above the cut: then the parts must say they hold them. */
        int covered = 1;
        for (unsigned p = 0; p < nparts; p++) {
            size_t share = 0;
            for (size_t j = 0; j < want; j++) share += all[j].seq >= cut_at[p] && all[j].seq < cut_at[p + 1];
            if (share >= parts[p].m || (guessed[p] && all[want - 1].pri > guess[p])) covered = 0;
        }
        if (covered) assert_int_equal(got, 1);
        held += got == 1;
        not_held += got == 0;
        if (got == 1) {
            assert_true(cut.pri == all[want - 1].pri && cut.seq == all[want - 1].seq);
            /* the records up to the cut are exactly the want least, each intact */
            size_t taken = 0;
            for (unsigned p = 0; p < nparts; p++)
                for (size_t i = 0; i < parts[p].n; i++) {
                    bottomk_key k;
                    const uint8_t *rec = bottomk_record(&parts[p], i, &k);
                    k.seq += base[p];
                    uint64_t id;
                    memcpy(&id, rec, sizeof id);
                    assert_int_equal(id, k.seq);
                    assert_int_equal(rec[8], 0xA5);
                    if (bottomk_key_less(cut, k)) continue;
                    int found = 0;
                    for (size_t j = 0; j < want && !found; j++) found = all[j].seq == k.seq;
                    assert_true(found);
                    taken++;
                }
            assert_int_equal(taken, want);
            /* trimmed to the cut, the parts hold just those */
            size_t left = 0;
            for (unsigned p = 0; p < nparts; p++) {
                bottomk_trim(&parts[p], base[p], cut);
                for (size_t i = 0; i < parts[p].n; i++) {
                    bottomk_key k;
                    bottomk_record(&parts[p], i, &k);
                    k.seq += base[p];
                    assert_false(bottomk_key_less(cut, k));
                }
                left += parts[p].n;
            }
            assert_int_equal(left, want);
        }
        for (unsigned p = 0; p < nparts; p++) bottomk_free(&parts[p]);
        free(all);
    }
    print_message("400 streams: the parts held the least %d times, not %d times\n", held, not_held);
    assert_true(held >= 150 && not_held >= 20);
}

/* Over many seeds, every record of a stream of 200 is among the 50 least
 * about a quarter of the time (each count within 6 standard deviations of
 * 1000 / 4 = 250: a biased priority fails this). */
static void test_uniform(void **state)
{
    (void)state;
    enum { N = 200, WANT = 50, SEEDS = 1000 };
    unsigned hits[N] = {0};
    for (uint64_t seed = 1; seed <= SEEDS; seed++) {
        bottomk s;
        assert_int_equal(bottomk_init(&s, 8, WANT, NULL), ANONKIT_OK);
        for (uint64_t i = 0; i < N; i++) assert_int_equal(bottomk_offer(&s, ak_priority(seed, 100 + 40 * i), i, &i, NULL), 0);
        bottomk_key cut;
        const uint64_t base = 0;
        assert_int_equal(bottomk_cut(&s, &base, 1, WANT, &cut, NULL), 1);
        size_t taken = 0;
        for (size_t i = 0; i < s.n; i++) {
            bottomk_key k;
            bottomk_record(&s, i, &k);
            if (!bottomk_key_less(cut, k)) hits[k.seq]++, taken++;
        }
        assert_int_equal(taken, WANT);
        bottomk_free(&s);
    }
    for (size_t i = 0; i < N; i++) {
        if (hits[i] < 250 - 6 * 14 || hits[i] > 250 + 6 * 14) fail_msg("record %zu sampled %u times of %d", i, hits[i], SEEDS);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_against_brute_force),
        cmocka_unit_test(test_uniform),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
