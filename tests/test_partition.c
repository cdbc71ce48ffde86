/* test_partition.c — the storage of a partitioning (core/partition): class ids
 * in order of addition, boxes and regions read back exactly after any amount
 * of growth, reserve that moves nothing, append as concatenation, and the
 * rule that a partitioning holds either only classes with hierarchy nodes or
 * none. Expected values come from a plain model kept alongside. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "core/partition.h"
#include "testutil.h"

/* A model class: box, region, nodes and count kept as plain arrays. */
enum { MAXQ = 5 };
typedef struct model_class {
    uint32_t lo[MAXQ], hi[MAXQ], rlo[MAXQ], rhi[MAXQ], node[MAXQ];
    uint64_t count;
} model_class;

static void random_class(tu_rng *g, uint32_t nqi, model_class *m)
{
    for (uint32_t q = 0; q < nqi; q++) {
        uint32_t a = (uint32_t)tu_below(g, 1000), b = (uint32_t)tu_below(g, 1000);
        m->lo[q] = a < b ? a : b;
        m->hi[q] = a < b ? b : a;
        /* a region holds the box */
        m->rlo[q] = m->lo[q] - (uint32_t)tu_below(g, m->lo[q] + 1);
        m->rhi[q] = m->hi[q] + (uint32_t)tu_below(g, 50);
        m->node[q] = (uint32_t)tu_next(g);
    }
    m->count = tu_next(g) >> 20;
}

/* Every class c of p is the model's class c (regions when with_region, else the box). */
static void expect_classes(const partition *p, const model_class *m, size_t n, int with_region, int with_nodes)
{
    assert_int_equal(p->nclasses, n);
    assert_true(p->cap >= n);
    for (size_t c = 0; c < n; c++) {
        assert_memory_equal(partition_lo(p, c), m[c].lo, p->nqi * sizeof(uint32_t));
        assert_memory_equal(partition_hi(p, c), m[c].hi, p->nqi * sizeof(uint32_t));
        assert_memory_equal(partition_rlo(p, c), with_region ? m[c].rlo : m[c].lo, p->nqi * sizeof(uint32_t));
        assert_memory_equal(partition_rhi(p, c), with_region ? m[c].rhi : m[c].hi, p->nqi * sizeof(uint32_t));
        if (with_nodes) assert_memory_equal(p->node + c * p->nqi, m[c].node, p->nqi * sizeof(uint32_t));
        assert_true(p->count[c] == m[c].count);
    }
}

/* A fresh partitioning is empty, with a class per row to fill; none of nothing works too. */
static void test_init(void **state)
{
    (void)state;
    ak_error err;
    ak_err_clear(&err);
    partition p;
    assert_int_equal(partition_init(&p, 1000, 3, &err), ANONKIT_OK);
    assert_int_equal(p.nqi, 3);
    assert_int_equal(p.nrows, 1000);
    assert_int_equal(p.nclasses, 0);
    assert_true(p.suppressed == 0);
    assert_null(p.node);
    for (size_t r = 0; r < 1000; r++) p.class_of[r] = r % 7 ? (uint32_t)r : PARTITION_SUPPRESSED;
    assert_int_equal(p.class_of[999], 999);
    partition_free(&p);
    assert_null(p.class_of);
    assert_int_equal(p.nclasses, 0);
    partition_free(&p); /* twice, and NULL */
    partition_free(NULL);

    assert_int_equal(partition_init(&p, 0, 1, &err), ANONKIT_OK);
    assert_non_null(p.class_of);
    partition_free(&p);
}

/* Ids count up from 0 and every box and region stays as added while the
 * storage grows well past its first allocation. */
static void test_add_many(void **state)
{
    (void)state;
    ak_error err;
    ak_err_clear(&err);
    for (uint32_t nqi = 1; nqi <= MAXQ; nqi += 2) {
        for (int with_region = 0; with_region <= 1; with_region++) {
            tu_rng g = {nqi * 10 + (uint64_t)with_region};
            const size_t n = 5000;
            model_class *m = calloc(n, sizeof *m);
            assert_non_null(m);
            partition p;
            assert_int_equal(partition_init(&p, 10, nqi, &err), ANONKIT_OK);
            for (size_t c = 0; c < n; c++) {
                random_class(&g, nqi, &m[c]);
                uint32_t id = UINT32_MAX;
                if (with_region)
                    assert_int_equal(partition_add_class_in(&p, m[c].lo, m[c].hi, m[c].rlo, m[c].rhi, m[c].count,
                                                            &id, &err),
                                     ANONKIT_OK);
                else
                    assert_int_equal(partition_add_class(&p, m[c].lo, m[c].hi, m[c].count, &id, &err), ANONKIT_OK);
                assert_int_equal(id, c);
            }
            expect_classes(&p, m, n, with_region, 0);
            assert_null(p.node);
            partition_free(&p);
            free(m);
        }
    }
}

/* After partition_reserve(n), adding n classes moves no array; a smaller
 * reserve changes nothing; more classes than reserved still fit. */
static void test_reserve(void **state)
{
    (void)state;
    ak_error err;
    ak_err_clear(&err);
    partition p;
    assert_int_equal(partition_init(&p, 1, 2, &err), ANONKIT_OK);
    assert_int_equal(partition_reserve(&p, 3000, &err), ANONKIT_OK);
    assert_true(p.cap >= 3000);
    const size_t cap = p.cap;
    const uint32_t *lo = p.lo, *hi = p.hi, *rlo = p.rlo, *rhi = p.rhi;
    const uint64_t *count = p.count;
    tu_rng g = {7};
    model_class *m = calloc(3500, sizeof *m);
    assert_non_null(m);
    for (size_t c = 0; c < 3000; c++) {
        random_class(&g, 2, &m[c]);
        uint32_t id;
        assert_int_equal(partition_add_class_in(&p, m[c].lo, m[c].hi, m[c].rlo, m[c].rhi, m[c].count, &id, &err),
                         ANONKIT_OK);
    }
    assert_ptr_equal(p.lo, lo);
    assert_ptr_equal(p.hi, hi);
    assert_ptr_equal(p.rlo, rlo);
    assert_ptr_equal(p.rhi, rhi);
    assert_ptr_equal(p.count, count);
    assert_int_equal(partition_reserve(&p, 10, &err), ANONKIT_OK);
    assert_int_equal(p.cap, cap);
    assert_ptr_equal(p.lo, lo);
    for (size_t c = 3000; c < 3500; c++) {
        random_class(&g, 2, &m[c]);
        uint32_t id;
        assert_int_equal(partition_add_class_in(&p, m[c].lo, m[c].hi, m[c].rlo, m[c].rhi, m[c].count, &id, &err),
                         ANONKIT_OK);
        assert_int_equal(id, c);
    }
    expect_classes(&p, m, 3500, 1, 0);
    partition_free(&p);
    free(m);
}

/* Fills p (already initialised) with n random model classes, with nodes or regions. */
static void fill(partition *p, tu_rng *g, model_class *m, size_t n, int with_nodes)
{
    ak_error err;
    ak_err_clear(&err);
    for (size_t c = 0; c < n; c++) {
        random_class(g, p->nqi, &m[c]);
        uint32_t id;
        if (with_nodes)
            assert_int_equal(partition_add_class_nodes(p, m[c].lo, m[c].hi, m[c].node, m[c].count, &id, &err),
                             ANONKIT_OK);
        else
            assert_int_equal(
                partition_add_class_in(p, m[c].lo, m[c].hi, m[c].rlo, m[c].rhi, m[c].count, &id, &err),
                ANONKIT_OK);
    }
}

/* partition_append is the concatenation of the two lists of classes, for
 * every pair of sizes around the first allocation, with and without nodes;
 * the source is left as it was. */
static void test_append(void **state)
{
    (void)state;
    ak_error err;
    ak_err_clear(&err);
    const size_t sizes[] = {0, 1, 5, 1023, 1024, 1025, 2100};
    const size_t nsizes = sizeof sizes / sizeof sizes[0];
    tu_rng g = {99};
    for (int with_nodes = 0; with_nodes <= 1; with_nodes++)
        for (size_t i = 0; i < nsizes; i++)
            for (size_t j = 0; j < nsizes; j += 2) {
                const size_t a = sizes[i], b = sizes[j];
                model_class *m = calloc(a + b + 1, sizeof *m);
                assert_non_null(m);
                partition p, src;
                assert_int_equal(partition_init(&p, 4, 3, &err), ANONKIT_OK);
                assert_int_equal(partition_init(&src, 4, 3, &err), ANONKIT_OK);
                fill(&p, &g, m, a, with_nodes);
                fill(&src, &g, m + a, b, with_nodes);
                assert_int_equal(partition_append(&p, &src, &err), ANONKIT_OK);
                /* nodes come from whichever side has classes */
                const int nodes = with_nodes && a + b > 0;
                expect_classes(&p, m, a + b, !with_nodes, nodes);
                if (nodes) assert_non_null(p.node);
                expect_classes(&src, m + a, b, !with_nodes, with_nodes && b > 0);
                /* a class added after the append follows the appended ones */
                uint32_t id;
                random_class(&g, 3, &m[a + b]);
                if (with_nodes)
                    assert_int_equal(partition_add_class_nodes(&p, m[a + b].lo, m[a + b].hi, m[a + b].node,
                                                               m[a + b].count, &id, &err),
                                     ANONKIT_OK);
                else
                    assert_int_equal(partition_add_class_in(&p, m[a + b].lo, m[a + b].hi, m[a + b].rlo,
                                                            m[a + b].rhi, m[a + b].count, &id, &err),
                                     ANONKIT_OK);
                assert_int_equal(id, a + b);
                expect_classes(&p, m, a + b + 1, !with_nodes, with_nodes);
                partition_free(&src);
                partition_free(&p);
                free(m);
            }
}

/* Classes with nodes and classes without do not mix, whichever comes first. */
static void test_nodes_do_not_mix(void **state)
{
    (void)state;
    ak_error err;
    ak_err_clear(&err);
    tu_rng g = {5};
    model_class m[4];
    partition plain, nodes;
    assert_int_equal(partition_init(&plain, 1, 2, &err), ANONKIT_OK);
    assert_int_equal(partition_init(&nodes, 1, 2, &err), ANONKIT_OK);
    fill(&plain, &g, m, 2, 0);
    fill(&nodes, &g, m + 2, 2, 1);
    uint32_t id = 77;
    assert_int_equal(partition_add_class_nodes(&plain, m[2].lo, m[2].hi, m[2].node, 1, &id, &err),
                     ANONKIT_E_INTERNAL);
    assert_non_null(strstr(err.message, "mixed"));
    assert_int_equal(plain.nclasses, 2);
    ak_err_clear(&err);
    assert_int_equal(partition_append(&plain, &nodes, &err), ANONKIT_E_INTERNAL);
    assert_int_equal(plain.nclasses, 2);
    ak_err_clear(&err);
    assert_int_equal(partition_append(&nodes, &plain, &err), ANONKIT_E_INTERNAL);
    assert_int_equal(nodes.nclasses, 2);
    /* still whole after the refusals */
    expect_classes(&plain, m, 2, 1, 0);
    expect_classes(&nodes, m + 2, 2, 0, 1);
    partition_free(&plain);
    partition_free(&nodes);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_init),
        cmocka_unit_test(test_add_many),
        cmocka_unit_test(test_reserve),
        cmocka_unit_test(test_append),
        cmocka_unit_test(test_nodes_do_not_mix),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
