/* test_table_merge.c — the dictionaries of a table read in shards merged into
 * the whole table's (docs/distributed.md §2): numeric codes are ranks among
 * every shard's distinct values, a number written two ways keeps the spelling
 * read first, sensitive codes follow first appearance over the shards in order,
 * and each shard's codes map onto the merged ones — exactly the codes a load of
 * the concatenated shards gives. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/table.h"
#include "core/table_merge.h"
#include "testutil.h"

static table *load(const char *name, const char *text)
{
    const char *path = tu_path(tu_group_dir, name);
    tu_write_file(path, text);
    static const char *qi[] = {"x"};
    table_spec spec = {0};
    spec.path = path;
    spec.delimiter = ',';
    spec.nqi = 1;
    spec.qi_names = qi;
    spec.sensitive_name = "s";
    table *t = NULL;
    ak_error err;
    assert_int_equal(table_load(&t, &spec, &err), ANONKIT_OK);
    return t;
}

static void test_merge_matches_the_concatenation(void **state)
{
    (void)state;
    table *a = load("a.csv", "x,s\n5,b\n2.5,a\n9,b\n");
    table *b = load("b.csv", "x,s\n5.0,c\n1,a\n7,d\n9,c\n");
    table *whole = load("ab.csv", "x,s\n5,b\n2.5,a\n9,b\n5.0,c\n1,a\n7,d\n9,c\n");
    strbuf pa = {0}, pb = {0};
    ak_error err;
    assert_int_equal(table_dict_pack(a, &pa, &err), ANONKIT_OK);
    assert_int_equal(table_dict_pack(b, &pb, &err), ANONKIT_OK);
    const char *packs[2] = {pa.data, pb.data};
    const size_t lens[2] = {pa.len, pb.len};
    assert_int_equal(table_dict_merge(a, packs, lens, 2, &err), ANONKIT_OK);
    /* the merged numeric dictionary is the whole table's: values, order, first spelling */
    assert_int_equal(a->qi[0].ncodes, whole->qi[0].ncodes);
    for (uint32_t c = 0; c < whole->qi[0].ncodes; c++) {
        assert_true(a->qi[0].values[c] == whole->qi[0].values[c]);
        const char *want = whole->qi[0].texts ? whole->qi[0].texts[c] : NULL;
        if (want) assert_string_equal(a->qi[0].texts[c], want);
    }
    assert_string_equal(a->qi[0].texts[2], "5"); /* 1, 2.5, 5, 7, 9: "5" read before "5.0" */
    /* sensitive values in order of first appearance over the shards */
    assert_int_equal(a->sensitive_dict.count, whole->sensitive_dict.count);
    for (uint32_t c = 0; c < whole->sensitive_dict.count; c++)
        assert_string_equal(strmap_key(&a->sensitive_dict, c), strmap_key(&whole->sensitive_dict, c));
    /* the second shard's codes map onto the merged ones */
    table_dict_maps m;
    assert_int_equal(table_dict_maps_make(a, pb.data, pb.len, &m, &err), ANONKIT_OK);
    for (uint32_t c = 0; c < b->qi[0].ncodes; c++) {
        const uint32_t g = m.num_map[0][c];
        assert_true(a->qi[0].values[g] == b->qi[0].values[c]);
    }
    for (uint32_t c = 0; c < b->sensitive_dict.count; c++)
        assert_string_equal(strmap_key(&a->sensitive_dict, m.sens_map[c]), strmap_key(&b->sensitive_dict, c));
    table_dict_maps_free(&m);
    /* a damaged pack is refused, not read past its end */
    assert_true(table_dict_maps_make(a, pb.data, pb.len / 2, &m, &err) < 0);
    assert_int_equal(err.code, ANONKIT_E_INTERNAL);
    strbuf_free(&pa);
    strbuf_free(&pb);
    table_free(a);
    table_free(b);
    table_free(whole);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_merge_matches_the_concatenation),
    };
    return cmocka_run_group_tests(tests, tu_group_setup, tu_group_teardown);
}
