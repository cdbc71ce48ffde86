/* test_hash.c — the interning maps of common/hash: ids in order of first
 * insertion, and keys told apart by every byte at every length (short keys
 * are compared by overlapping word loads). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "common/hash.h"
#include "testutil.h"

/* Keys of every length up to 40, and for each the keys that differ from it in
 * one byte at each position: every one is its own id, found again exactly,
 * and a key one byte shorter or longer is another key. */
static void test_strmap_every_byte(void **state)
{
    (void)state;
    strmap m;
    assert_int_equal(strmap_init(&m, 16), 0);
    char key[48];
    uint32_t expect = 0;
    for (size_t len = 0; len <= 40; len++) {
        for (size_t at = 0; at <= len; at++) {
            for (size_t i = 0; i < len; i++) key[i] = (char)('a' + (i * 7 + len) % 26);
            if (at < len) key[at] = '#';
            uint32_t id;
            int inserted;
            assert_int_equal(strmap_intern(&m, key, len, &id, &inserted), 0);
            if (len == 0 && at == 0) { /* the empty key */
                assert_int_equal(inserted, 1);
            }
            if (inserted) assert_int_equal(id, expect++);
            assert_int_equal(strmap_find(&m, key, len), id);
            assert_int_equal(strmap_key_len(&m, id), len);
            assert_memory_equal(strmap_key(&m, id), key, len);
        }
    }
    assert_int_equal(m.count, expect);
    /* a key that is not there, at every length: one byte no key has */
    for (size_t len = 1; len <= 40; len++)
        for (size_t at = 0; at < len; at++) {
            for (size_t i = 0; i < len; i++) key[i] = (char)('a' + (i * 7 + len) % 26);
            key[at] = '!';
            assert_int_equal(strmap_find(&m, key, len), AK_NOT_FOUND);
        }
    strmap_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_strmap_every_byte),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
