/* test_parallel.c — common/parallel.h: ak_parts' counts, and ak_pipeline_run
 * on 1..5 workers with 1..6 slots and produce times that vary at random:
 * every item is produced exactly once, into its own slot, by a worker with
 * the state it was given, and consumed in order with what was produced for
 * it; a failing produce stops the run and its status comes back. On Linux,
 * a thread of ak_thread_create may run on every processor its creator may
 * (it starts elsewhere than its creator, then widens), also when the
 * creator may use only some of them. */
#if defined(__linux__)
#define _GNU_SOURCE /* sched_getaffinity, pthread_getaffinity_np */
#include <sched.h>
#endif
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "common/parallel.h"
#include "testutil.h"

static void test_parts(void **state)
{
    (void)state;
    assert_int_equal(ak_parts(100, 0, 1), 1);
    assert_int_equal(ak_parts(100, 4, 25), 4);
    assert_int_equal(ak_parts(99, 4, 25), 1); /* fewer than 25 for each of 4 */
    assert_int_equal(ak_parts(1000, 64, 1), AK_MAX_PARTS);
}

enum { ITEMS_MAX = 300 };

typedef struct slot {
    size_t item;
    uint64_t value;
    unsigned by;
} slot;

typedef struct worker {
    unsigned id;
    tu_rng rng; /* this worker's own: no other thread touches it */
} worker;

typedef struct run {
    size_t consumed;
    int in_order;
    size_t fail_at;       /* produce fails for this item (SIZE_MAX: never) */
    int produced[ITEMS_MAX];
} run;

static uint64_t value_of(size_t item) { return (uint64_t)item * 2654435761u + 17; }

static int produce(void *ctx, void *wk, size_t item, void *sl)
{
    run *r = ctx;
    worker *w = wk;
    if (tu_below(&w->rng, 4) == 0) { /* items finish out of order */
        const struct timespec pause = {0, (long)(tu_below(&w->rng, 200) * 1000)};
        nanosleep(&pause, NULL);
    }
    if (item == r->fail_at) return -7;
    slot *s = sl;
    s->item = item;
    s->value = value_of(item);
    s->by = w->id;
    __atomic_add_fetch(&r->produced[item], 1, __ATOMIC_RELAXED);
    return 0;
}

static void consume(void *ctx, size_t item, void *sl)
{
    run *r = ctx;
    const slot *s = sl;
    if (item != r->consumed || s->item != item || s->value != value_of(item)) r->in_order = 0;
    r->consumed++;
}

static void test_pipeline(void **state)
{
    (void)state;
    tu_rng rng = {31};
    for (int round = 0; round < 60; round++) {
        const unsigned nworkers = 1 + (unsigned)tu_below(&rng, 5);
        const size_t nslots = 1 + tu_below(&rng, 6), nitems = tu_below(&rng, ITEMS_MAX + 1);
        const int failing = nitems > 0 && tu_below(&rng, 4) == 0;
        run r = {.in_order = 1, .fail_at = failing ? tu_below(&rng, nitems) : SIZE_MAX};
        worker w[5];
        void *wp[5];
        for (unsigned j = 0; j < nworkers; j++) w[j] = (worker){j, {100 + j + (uint64_t)round * 8}}, wp[j] = &w[j];
        slot slots[6];
        const ak_pipeline p = {&r, produce, consume, slots, sizeof *slots, nslots, wp, nworkers};
        const int status = ak_pipeline_run(&p, nitems);
        assert_true(r.in_order);
        if (failing) {
            assert_int_equal(status, -7);
            assert_true(r.consumed <= r.fail_at); /* nothing from the failed item on */
        } else {
            assert_int_equal(status, 0);
            assert_int_equal(r.consumed, nitems);
            for (size_t i = 0; i < nitems; i++) assert_int_equal(r.produced[i], 1);
        }
        for (size_t i = 0; i < nitems; i++) assert_true(r.produced[i] <= 1);
    }
}

#if defined(__linux__)
/* The processors the calling thread may run on, into arg (a cpu_set_t). */
static void *affinity_of_thread(void *arg)
{
    assert_int_equal(pthread_getaffinity_np(pthread_self(), sizeof(cpu_set_t), arg), 0);
    return NULL;
}

/* A worker thread's processors equal its creator's: with all of the
 * process's, and with only the first two of them (or the one) when the
 * creator is narrowed; the same on threads started one after another. */
static void test_thread_affinity(void **state)
{
    (void)state;
    cpu_set_t all, mine, theirs;
    assert_int_equal(sched_getaffinity(0, sizeof all, &all), 0);
    for (int narrow = 0; narrow < 2; narrow++) {
        mine = all;
        if (narrow) { /* the first two allowed processors */
            CPU_ZERO(&mine);
            for (int c = 0, k = 0; c < CPU_SETSIZE && k < 2; c++)
                if (CPU_ISSET(c, &all)) CPU_SET(c, &mine), k++;
            assert_int_equal(pthread_setaffinity_np(pthread_self(), sizeof mine, &mine), 0);
        }
        for (int rep = 0; rep < 4; rep++) {
            pthread_t t;
            CPU_ZERO(&theirs);
            assert_int_equal(ak_thread_create(&t, affinity_of_thread, &theirs), 0);
            assert_int_equal(pthread_join(t, NULL), 0);
            assert_true(CPU_EQUAL(&theirs, &mine));
        }
    }
    assert_int_equal(pthread_setaffinity_np(pthread_self(), sizeof all, &all), 0);
}
#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parts),
        cmocka_unit_test(test_pipeline),
#if defined(__linux__)
        cmocka_unit_test(test_thread_affinity),
#endif
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
