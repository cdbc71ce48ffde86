/* test_recode.c — the published text of a QI for a class (core/recode): the
 * first spelling of numeric values, "lo-hi" ranges, lowest common ancestors
 * of categorical boxes, the range and mean styles, full-domain classes that
 * publish their node's label, truncation to a buffer and texts of any length.
 * The expected texts are worked out by hand from the small table below. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/hierarchy.h"
#include "core/partition.h"
#include "core/recode.h"
#include "core/table.h"
#include "testutil.h"

/* x: general mode (decimals; "1.5" and "2.0" repeat values first spelled
 *    "1.50" and "2"); y: integer mode; c: categorical under {a,b} -> AB,
 *    {c,d} -> CD, -> *. Row 6 is suppressed in the partitioning below. */
static const char *const INPUT = "x,y,c\n"
                                 "1.50,5,a\n"
                                 "2,100,b\n"
                                 "1.5,5,c\n"
                                 "-3,-7,d\n"
                                 "10,43,a\n"
                                 "2.0,0,c\n"
                                 "7,3,b\n";
static const char *const HIER = "a;AB;*\nb;AB;*\nc;CD;*\nd;CD;*\n";
/* the distinct values of x and y in ascending order, as first spelled */
static const char *const XTEXT[] = {"-3", "1.50", "2", "7", "10"};
static const double XVAL[] = {-3, 1.5, 2, 7, 10};
static const char *const YTEXT[] = {"-7", "0", "3", "5", "43", "100"};
/* classes: rows {0,1,4}, {2,3}, {5}; row 6 suppressed */
static const uint32_t CLASS_OF[7] = {0, 0, 1, 1, 0, 2, PARTITION_SUPPRESSED};

static table *load_table(const char *csv, const char *hier_text, size_t nqi, const char **qi, const char **hier)
{
    tu_write_file(tu_path(tu_group_dir, "in.csv"), csv);
    tu_write_file(tu_path(tu_group_dir, "h.csv"), hier_text);
    table_spec spec = {0};
    spec.path = tu_path(tu_group_dir, "in.csv");
    spec.delimiter = ',';
    spec.nqi = nqi;
    spec.qi_names = qi;
    spec.hierarchy_paths = hier;
    table *t = NULL;
    ak_error err;
    ak_err_clear(&err);
    if (table_load(&t, &spec, &err) != ANONKIT_OK) fail_msg("table_load: %s", err.message);
    return t;
}

static table *load_small(void)
{
    static const char *qi[] = {"x", "y", "c"};
    static char hpath[4096];
    snprintf(hpath, sizeof hpath, "%s", tu_path(tu_group_dir, "h.csv"));
    const char *hpaths[] = {NULL, NULL, hpath};
    table *t = load_table(INPUT, HIER, 3, qi, hpaths);
    /* preconditions: the dictionaries this test's expectations assume */
    assert_int_equal(t->nrows, 7);
    assert_int_equal(t->qi[0].ncodes, 5);
    assert_int_equal(t->qi[1].ncodes, 6);
    assert_int_equal(t->qi[2].ncodes, 4);
    for (uint32_t c = 0; c < 5; c++) assert_true(t->qi[0].values[c] == XVAL[c]);
    assert_non_null(t->qi[0].texts);
    assert_null(t->qi[1].texts);
    return t;
}

/* The partitioning of CLASS_OF, each box the codes' extent over the class's rows. */
static void make_partition(const table *t, partition *p, int with_nodes, const uint32_t *nodes)
{
    ak_error err;
    ak_err_clear(&err);
    assert_int_equal(partition_init(p, t->nrows, t->nqi, &err), ANONKIT_OK);
    for (uint32_t c = 0; c < 3; c++) {
        uint32_t lo[3] = {UINT32_MAX, UINT32_MAX, UINT32_MAX}, hi[3] = {0, 0, 0};
        uint64_t count = 0;
        for (size_t r = 0; r < t->nrows; r++) {
            if (CLASS_OF[r] != c) continue;
            count++;
            for (uint32_t q = 0; q < 3; q++) {
                const uint32_t code = t->qi[q].codes[r];
                if (code < lo[q]) lo[q] = code;
                if (code > hi[q]) hi[q] = code;
            }
        }
        uint32_t id;
        if (with_nodes)
            assert_int_equal(partition_add_class_nodes(p, lo, hi, nodes + c * 3, count, &id, &err), ANONKIT_OK);
        else
            assert_int_equal(partition_add_class(p, lo, hi, count, &id, &err), ANONKIT_OK);
        assert_int_equal(id, c);
    }
    for (size_t r = 0; r < t->nrows; r++) p->class_of[r] = CLASS_OF[r];
    p->suppressed = 1;
}

/* recode_value of a numeric QI is the first spelling of the value, or of both
 * ends joined by '-', for every box of the domain. */
static void test_numeric_value(void **state)
{
    (void)state;
    table *t = load_small();
    char buf[64], want[64];
    for (uint32_t q = 0; q < 2; q++) {
        const char *const *text = q ? YTEXT : XTEXT;
        for (uint32_t lo = 0; lo < t->qi[q].ncodes; lo++)
            for (uint32_t hi = lo; hi < t->qi[q].ncodes; hi++) {
                if (lo == hi) snprintf(want, sizeof want, "%s", text[lo]);
                else if (text[lo][0] == '-' || text[hi][0] == '-') /* a negative bound: " - " */
                    snprintf(want, sizeof want, "%s - %s", text[lo], text[hi]);
                else snprintf(want, sizeof want, "%s-%s", text[lo], text[hi]);
                assert_int_equal(recode_value(t, q, lo, hi, buf, sizeof buf), strlen(want));
                assert_string_equal(buf, want);
            }
    }
    char num[24];
    assert_string_equal(recode_numeric_text(&t->qi[0], 1, num), "1.50");
    assert_string_equal(recode_numeric_text(&t->qi[1], 0, num), "-7");
    assert_string_equal(recode_numeric_text(&t->qi[1], 5, num), "100");
    table_free(t);
}

/* recode_value of a categorical QI is the label of the lowest node covering the box. */
static void test_categorical_value(void **state)
{
    (void)state;
    table *t = load_small();
    const hier *h = t->qi[2].h;
    assert_non_null(h);
    static const char *const want[4][4] = {
        {"a", "AB", "*", "*"},
        {"", "b", "*", "*"},
        {"", "", "c", "CD"},
        {"", "", "", "d"},
    };
    static const char *const leaf[4] = {"a", "b", "c", "d"};
    uint32_t code[4];
    for (int i = 0; i < 4; i++) assert_int_equal(hier_find_leaf(h, leaf[i], 1, &code[i]), 0);
    char buf[16];
    for (int i = 0; i < 4; i++)
        for (int j = i; j < 4; j++) {
            const uint32_t lo = code[i] < code[j] ? code[i] : code[j], hi = code[i] < code[j] ? code[j] : code[i];
            assert_int_equal(recode_value(t, 2, lo, hi, buf, sizeof buf), strlen(want[i][j]));
            assert_string_equal(buf, want[i][j]);
        }
    table_free(t);
}

/* A buffer too small holds the text's beginning, NUL-terminated; the length
 * returned is always the whole text's; a buffer of size 0 is not written. */
static void test_truncation(void **state)
{
    (void)state;
    table *t = load_small();
    const char *whole = "-3 - 10"; /* the whole domain of x (a negative bound: " - ") */
    const size_t len = strlen(whole);
    for (size_t size = 0; size <= len + 2; size++) {
        char buf[16];
        memset(buf, '#', sizeof buf);
        assert_int_equal(recode_value(t, 0, 0, 4, buf, size), len);
        if (size == 0) {
            assert_int_equal(buf[0], '#');
            continue;
        }
        const size_t kept = size - 1 < len ? size - 1 : len;
        assert_memory_equal(buf, whole, kept);
        assert_int_equal(buf[kept], '\0');
        assert_int_equal(buf[kept + 1], '#'); /* nothing written past the end */
    }
    table_free(t);
}

static void test_style_names(void **state)
{
    (void)state;
    static const char *const names[] = {"generalize", "range", "mean"};
    static const recode_style styles[] = {RECODE_GENERALIZE, RECODE_RANGE, RECODE_MEAN};
    for (int i = 0; i < 3; i++) {
        recode_style s = (recode_style)99;
        assert_int_equal(recode_parse_style(names[i], &s), 0);
        assert_int_equal(s, styles[i]);
        assert_string_equal(recode_style_name(s), names[i]);
    }
    static const char *const bad[] = {"", "Range", "means", "generalise", "range "};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        recode_style s = RECODE_MEAN;
        assert_int_equal(recode_parse_style(bad[i], &s), -1);
    }
}

/* Means per class and QI over the class's rows only (suppressed rows count
 * nowhere), 0 for categorical QIs; then the texts of every style. */
static void test_class_styles(void **state)
{
    (void)state;
    table *t = load_small();
    partition p;
    make_partition(t, &p, 0, NULL);
    ak_error err;
    ak_err_clear(&err);
    double *means = NULL;
    assert_int_equal(recode_class_means(t, &p, &means, &err), ANONKIT_OK);
    /* by hand: x {1.5, 2, 10}, {1.5, -3}, {2}; y {5, 100, 43}, {5, -7}, {0} */
    const double want[3][3] = {{13.5 / 3, 148.0 / 3, 0}, {-0.75, -1, 0}, {2, 0, 0}};
    for (int c = 0; c < 3; c++)
        for (int q = 0; q < 3; q++) assert_true(fabs(means[c * 3 + q] - want[c][q]) < 1e-12);

    static const char *const text[3][3][3] = {
        /* class 0 */
        {{"1.50-10", "5-100", "AB"}, {"1.50-10", "5-100", "AB"}, {"4.5", "49.3333333333", "AB"}},
        /* class 1 */
        {{"-3 - 1.50", "-7 - 5", "CD"}, {"-3 - 1.50", "-7 - 5", "CD"}, {"-0.75", "-1", "CD"}},
        /* class 2: one value; the range style still writes both ends, the
         * mean style the value as spelled */
        {{"2", "0", "c"}, {"2-2", "0-0", "c"}, {"2", "0", "c"}},
    };
    static const recode_style styles[3] = {RECODE_GENERALIZE, RECODE_RANGE, RECODE_MEAN};
    strbuf sb = {0};
    char buf[64];
    for (size_t c = 0; c < 3; c++)
        for (int s = 0; s < 3; s++)
            for (uint32_t q = 0; q < 3; q++) {
                const char *w = text[c][s][q];
                assert_int_equal(recode_class_value(t, &p, means, styles[s], c, q, buf, sizeof buf), strlen(w));
                assert_string_equal(buf, w);
                assert_int_equal(recode_class_text(t, &p, means, styles[s], c, q, &sb), 0);
                assert_int_equal(sb.len, strlen(w));
                assert_memory_equal(sb.data, w, sb.len);
                /* the shortcut for integer columns: the same text from the box's values */
                const int shortcut = q == 1 && s != 2;
                assert_int_equal(recode_is_int_range(t, &p, styles[s], q), shortcut);
                if (shortcut) {
                    const uint32_t lo = partition_lo(&p, c)[q], hi = partition_hi(&p, c)[q];
                    char ib[48];
                    const size_t n = recode_int_range(styles[s], lo, hi, t->qi[q].values[lo], t->qi[q].values[hi], ib);
                    assert_int_equal(n, strlen(w));
                    assert_memory_equal(ib, w, n);
                }
            }
    free(sb.data);
    free(means);
    partition_free(&p);
    table_free(t);
}

/* A full-domain class publishes the label of its node, even where a lower
 * node covers the same box; numeric QIs without hierarchy are unaffected. */
static void test_class_nodes(void **state)
{
    (void)state;
    table *t = load_small();
    const hier *h = t->qi[2].h;
    const uint32_t root = hier_root(h), ab = hier_find_label(h, "AB", 2), cd = hier_find_label(h, "CD", 2);
    assert_int_not_equal(ab, cd);
    assert_string_equal(hier_node_at(h, ab)->label, "AB");
    uint32_t c_code;
    assert_int_equal(hier_find_leaf(h, "c", 1, &c_code), 0);
    /* class 0 at the root, class 1 at CD, class 2 (the single value c) at CD */
    const uint32_t nodes[9] = {0, 0, root, 0, 0, cd, 0, 0, cd};
    partition p;
    make_partition(t, &p, 1, nodes);
    static const char *const want[3] = {"*", "CD", "CD"};
    static const char *const x_gen[3] = {"1.50-10", "-3 - 1.50", "2"};
    char buf[16];
    for (size_t c = 0; c < 3; c++) {
        for (int s = 0; s < 2; s++) {
            assert_int_equal(recode_class_value(t, &p, NULL, s ? RECODE_RANGE : RECODE_GENERALIZE, c, 2, buf,
                                                sizeof buf),
                             strlen(want[c]));
            assert_string_equal(buf, want[c]);
        }
        assert_int_equal(recode_class_value(t, &p, NULL, RECODE_GENERALIZE, c, 0, buf, sizeof buf), strlen(x_gen[c]));
        assert_string_equal(buf, x_gen[c]);
    }
    assert_int_equal(recode_is_int_range(t, &p, RECODE_GENERALIZE, 1), 1);
    assert_int_equal(recode_is_int_range(t, &p, RECODE_GENERALIZE, 2), 0);
    partition_free(&p);
    table_free(t);
}

/* recode_class_text holds a label of any length whole (past its first
 * 256-byte attempt), and empties what the buffer held before. */
static void test_long_label(void **state)
{
    (void)state;
    enum { LONG = 700 };
    char label[LONG + 1];
    for (int i = 0; i < LONG; i++) label[i] = (char)('A' + i % 26);
    label[LONG] = '\0';
    char *hier_text = malloc(2 * LONG + 64);
    assert_non_null(hier_text);
    snprintf(hier_text, 2 * LONG + 64, "p;%s;*\nq;%s;*\nr;R;*\n", label, label);
    static const char *qi[] = {"c"};
    static char hpath[4096];
    snprintf(hpath, sizeof hpath, "%s", tu_path(tu_group_dir, "h.csv"));
    const char *hpaths[] = {hpath};
    table *t = load_table("c\np\nq\nr\n", hier_text, 1, qi, hpaths);
    free(hier_text);
    const hier *h = t->qi[0].h;
    uint32_t pc, qc;
    assert_int_equal(hier_find_leaf(h, "p", 1, &pc), 0);
    assert_int_equal(hier_find_leaf(h, "q", 1, &qc), 0);
    ak_error err;
    ak_err_clear(&err);
    partition p;
    assert_int_equal(partition_init(&p, 3, 1, &err), ANONKIT_OK);
    const uint32_t lo = pc < qc ? pc : qc, hi = pc < qc ? qc : pc;
    uint32_t id;
    assert_int_equal(partition_add_class(&p, &lo, &hi, 2, &id, &err), ANONKIT_OK);
    strbuf sb = {0};
    assert_int_equal(strbuf_append(&sb, "old", 3), 0);
    assert_int_equal(recode_class_text(t, &p, NULL, RECODE_GENERALIZE, 0, 0, &sb), 0);
    assert_int_equal(sb.len, LONG);
    assert_memory_equal(sb.data, label, LONG);
    /* and recode_value reports the whole length while keeping what fits */
    char small[10];
    assert_int_equal(recode_value(t, 0, lo, hi, small, sizeof small), LONG);
    assert_memory_equal(small, label, 9);
    assert_int_equal(small[9], '\0');
    free(sb.data);
    partition_free(&p);
    table_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_numeric_value),  cmocka_unit_test(test_categorical_value),
        cmocka_unit_test(test_truncation),     cmocka_unit_test(test_style_names),
        cmocka_unit_test(test_class_styles),   cmocka_unit_test(test_class_nodes),
        cmocka_unit_test(test_long_label),
    };
    return cmocka_run_group_tests(tests, tu_group_setup, tu_group_teardown);
}
