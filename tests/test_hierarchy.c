/* test_hierarchy.c — generalization hierarchies (src/core/hierarchy.c).
 *
 * The real ARX hierarchies of the Adult data (copied into tests/data/hier_*)
 * with expected values worked out by hand from the files; random trees written
 * as ARX files with shuffled rows, checked against an independent model of the
 * tree and a brute-force lowest common ancestor; and every rejected input. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/hierarchy.h"
#include "testutil.h"

#define DATA(name) ANONKIT_SOURCE_DIR "/tests/data/" name


static hier *load_ok(const char *path)
{
    hier *h = NULL;
    ak_error err;
    ak_err_clear(&err);
    int rc = hier_load(&h, path, &err);
    if (rc != ANONKIT_OK) {
        char buf[2048];
        ak_err_format(&err, buf, sizeof buf);
        fail_msg("loading %s failed: %s", path, buf);
    }
    assert_non_null(h);
    return h;
}

static hier *load_text_ok(const char *name, const char *text)
{
    const char *path = tu_path(tu_group_dir, name);
    tu_write_file(path, text);
    return load_ok(path);
}

/* Loads text that must be rejected; returns the error record. */
static ak_error load_text_err(const char *name, const char *text, int want_code)
{
    const char *path = tu_path(tu_group_dir, name);
    tu_write_file(path, text);
    hier *h = (hier *)1;
    ak_error err;
    ak_err_clear(&err);
    int rc = hier_load(&h, path, &err);
    assert_int_equal(rc, want_code);
    assert_int_equal(err.code, want_code);
    assert_null(h);
    assert_string_equal(err.file, path);
    return err;
}

static void assert_contains(const char *haystack, const char *needle)
{
    if (!strstr(haystack, needle)) fail_msg("\"%s\" does not contain \"%s\"", haystack, needle);
}

static uint32_t leaf(const hier *h, const char *value)
{
    uint32_t code = UINT32_MAX;
    if (hier_find_leaf(h, value, strlen(value), &code) != 0) fail_msg("no leaf \"%s\"", value);
    return code;
}

static const char *label(const hier *h, uint32_t node) { return hier_node_at(h, node)->label; }

static uint32_t label_node(const hier *h, const char *lab)
{
    uint32_t n = hier_find_label(h, lab, strlen(lab));
    if (n == UINT32_MAX) fail_msg("no node \"%s\"", lab);
    return n;
}

/* Asserts that the node labelled lab (lowest such) sits at level and covers [lo, hi]. */
static void assert_node(const hier *h, const char *lab, uint32_t level, uint32_t lo, uint32_t hi)
{
    const hier_node *nd = hier_node_at(h, label_node(h, lab));
    assert_string_equal(nd->label, lab);
    assert_int_equal(nd->level, level);
    assert_int_equal(nd->lo, lo);
    assert_int_equal(nd->hi, hi);
}

/* Lowest node covering [lo, hi], by looking at every node. */
static uint32_t brute_lca(const hier *h, uint32_t lo, uint32_t hi)
{
    uint32_t best = UINT32_MAX;
    for (uint32_t i = 0; i < hier_node_count(h); i++) {
        const hier_node *nd = hier_node_at(h, i);
        if (nd->lo <= lo && hi <= nd->hi &&
            (best == UINT32_MAX || nd->level < hier_node_at(h, best)->level))
            best = i;
    }
    return best;
}

/* The structural invariants every loaded hierarchy must satisfy. */
static void check_invariants(const hier *h)
{
    uint32_t n = hier_leaf_count(h), nn = hier_node_count(h), height = hier_height(h);
    const uint32_t *ch = hier_children(h);
    assert_true(n >= 1);
    assert_true(nn > n);
    const hier_node *root = hier_node_at(h, hier_root(h));
    assert_int_equal(root->parent, UINT32_MAX);
    assert_int_equal(root->level, height);
    assert_int_equal(root->lo, 0);
    assert_int_equal(root->hi, n - 1);
    assert_true(height >= 1);

    uint32_t nleaf_nodes = 0, nchild_refs = 0;
    for (uint32_t i = 0; i < nn; i++) {
        const hier_node *nd = hier_node_at(h, i);
        assert_non_null(nd->label);
        assert_true(nd->label[0] != '\0');
        assert_true(nd->lo <= nd->hi);
        assert_true(nd->hi < n);
        assert_true(nd->level <= height);
        if (i != hier_root(h)) {
            assert_true(nd->parent < nn);
            assert_int_equal(hier_node_at(h, nd->parent)->level, nd->level + 1);
        }
        /* Every node's label finds a node with that label at this level or lower. */
        uint32_t f = hier_find_label(h, nd->label, strlen(nd->label));
        assert_true(f < nn);
        assert_string_equal(label(h, f), nd->label);
        assert_true(hier_node_at(h, f)->level <= nd->level);
        if (nd->nchildren == 0) {
            assert_int_equal(nd->level, 0);
            assert_int_equal(nd->lo, nd->hi);
            assert_int_equal(hier_leaf_node(h, nd->lo), i);
            nleaf_nodes++;
            continue;
        }
        assert_int_not_equal(nd->level, 0);
        /* The children's ranges tile the parent's range exactly, in code order. */
        uint32_t next = nd->lo;
        for (uint32_t c = 0; c < nd->nchildren; c++) {
            uint32_t ci = ch[nd->first_child + c];
            assert_true(ci < nn);
            const hier_node *cn = hier_node_at(h, ci);
            assert_int_equal(cn->parent, i);
            assert_int_equal(cn->level + 1, nd->level);
            assert_int_equal(cn->lo, next);
            next = cn->hi + 1;
            nchild_refs++;
        }
        assert_int_equal(next, nd->hi + 1);
        /* Every leaf below is covered, and the node is the ancestor of each. */
        for (uint32_t c = nd->lo; c <= nd->hi; c++) assert_int_equal(hier_ancestor(h, c, nd->level), i);
    }
    assert_int_equal(nleaf_nodes, n);
    assert_int_equal(nchild_refs, nn - 1); /* every node but the root is someone's child once */

    for (uint32_t c = 0; c < n; c++) {
        uint32_t ln = hier_leaf_node(h, c);
        const hier_node *nd = hier_node_at(h, ln);
        assert_int_equal(nd->level, 0);
        assert_int_equal(nd->lo, c);
        assert_int_equal(nd->hi, c);
        assert_int_equal(leaf(h, nd->label), c);
        assert_int_equal(hier_ancestor(h, c, 0), ln);
        assert_int_equal(hier_ancestor(h, c, height), hier_root(h));
        /* All leaves are at depth height. */
        uint32_t depth = 0;
        for (uint32_t x = ln; x != hier_root(h); x = hier_node_at(h, x)->parent) depth++;
        assert_int_equal(depth, height);
    }
}

static void check_lca_pairs(const hier *h, tu_rng *rng, uint32_t random_pairs)
{
    uint32_t n = hier_leaf_count(h);
    if ((uint64_t)n * n <= 40000) {
        for (uint32_t lo = 0; lo < n; lo++)
            for (uint32_t hi = lo; hi < n; hi++) assert_int_equal(hier_lca(h, lo, hi), brute_lca(h, lo, hi));
        return;
    }
    for (uint32_t k = 0; k < random_pairs; k++) {
        uint32_t a = (uint32_t)tu_below(rng, n), b = (uint32_t)tu_below(rng, n);
        uint32_t lo = a < b ? a : b, hi = a < b ? b : a;
        assert_int_equal(hier_lca(h, lo, hi), brute_lca(h, lo, hi));
    }
}

/* ---- the Adult hierarchies ------------------------------------------------ */

static void test_education(void **state)
{
    (void)state;
    hier *h = load_ok(DATA("hier_education.csv"));
    check_invariants(h);
    assert_int_equal(hier_leaf_count(h), 16);
    assert_int_equal(hier_height(h), 3);
    assert_int_equal(hier_node_count(h), 16 + 5 + 3 + 1);
    assert_string_equal(hier_path(h), DATA("hier_education.csv"));

    /* Leaf codes: depth first, children in order of first appearance. The
     * file interleaves the groups; the codes do not. */
    static const char *const order[16] = {
        "Bachelors", "Some-college",                               /* Undergraduate */
        "Prof-school", "Assoc-acdm", "Assoc-voc",                  /* Professional Education */
        "Masters", "Doctorate",                                    /* Graduate */
        "11th", "HS-grad", "9th", "7th-8th", "12th", "10th",       /* High School */
        "1st-4th", "5th-6th", "Preschool"};                        /* Primary School */
    for (uint32_t c = 0; c < 16; c++) {
        assert_int_equal(leaf(h, order[c]), c);
        assert_string_equal(label(h, hier_leaf_node(h, c)), order[c]);
    }
    uint32_t code;
    assert_int_equal(hier_find_leaf(h, "Undergraduate", 13, &code), -1);
    assert_int_equal(hier_find_leaf(h, "Bachelor", 8, &code), -1);
    assert_int_equal(hier_find_leaf(h, "Bachelorsx", 9, &code), 0); /* length counts */
    assert_int_equal(code, 0);

    assert_node(h, "Undergraduate", 1, 0, 1);
    assert_node(h, "Professional Education", 1, 2, 4);
    assert_node(h, "Graduate", 1, 5, 6);
    assert_node(h, "High School", 1, 7, 12);
    assert_node(h, "Primary School", 1, 13, 15);
    assert_node(h, "Higher education", 2, 0, 6);
    assert_node(h, "Secondary education", 2, 7, 12);
    assert_node(h, "Primary education", 2, 13, 15);
    assert_node(h, "*", 3, 0, 15);
    assert_int_equal(label_node(h, "*"), hier_root(h));
    assert_int_equal(hier_find_label(h, "Nothing", 7), UINT32_MAX);
    assert_int_equal(hier_find_label(h, "High", 4), UINT32_MAX);

    /* Children in order of first appearance. */
    const uint32_t *ch = hier_children(h);
    const hier_node *root = hier_node_at(h, hier_root(h));
    assert_int_equal(root->nchildren, 3);
    assert_string_equal(label(h, ch[root->first_child + 0]), "Higher education");
    assert_string_equal(label(h, ch[root->first_child + 1]), "Secondary education");
    assert_string_equal(label(h, ch[root->first_child + 2]), "Primary education");
    const hier_node *higher = hier_node_at(h, label_node(h, "Higher education"));
    assert_int_equal(higher->nchildren, 3);
    assert_string_equal(label(h, ch[higher->first_child + 0]), "Undergraduate");
    assert_string_equal(label(h, ch[higher->first_child + 1]), "Professional Education");
    assert_string_equal(label(h, ch[higher->first_child + 2]), "Graduate");
    const hier_node *hs = hier_node_at(h, label_node(h, "High School"));
    assert_int_equal(hs->nchildren, 6);
    assert_int_equal(hs->parent, label_node(h, "Secondary education"));

    /* Lowest common ancestors. */
    assert_string_equal(label(h, hier_lca(h, 0, 0)), "Bachelors");
    assert_string_equal(label(h, hier_lca(h, 3, 3)), "Assoc-acdm");
    assert_string_equal(label(h, hier_lca(h, 0, 1)), "Undergraduate");
    assert_string_equal(label(h, hier_lca(h, 2, 4)), "Professional Education");
    assert_string_equal(label(h, hier_lca(h, 3, 4)), "Professional Education");
    assert_string_equal(label(h, hier_lca(h, 1, 2)), "Higher education");
    assert_string_equal(label(h, hier_lca(h, 0, 6)), "Higher education");
    assert_string_equal(label(h, hier_lca(h, 4, 5)), "Higher education");
    assert_string_equal(label(h, hier_lca(h, 7, 12)), "High School"); /* not Secondary education */
    assert_string_equal(label(h, hier_lca(h, 8, 10)), "High School");
    assert_string_equal(label(h, hier_lca(h, 13, 15)), "Primary School");
    assert_string_equal(label(h, hier_lca(h, 6, 7)), "*");
    assert_string_equal(label(h, hier_lca(h, 12, 13)), "*");
    assert_string_equal(label(h, hier_lca(h, 0, 15)), "*");
    assert_int_equal(hier_lca(h, 0, 15), hier_root(h));

    /* Ancestors at each level. */
    uint32_t c78 = leaf(h, "7th-8th");
    assert_int_equal(c78, 10);
    assert_string_equal(label(h, hier_ancestor(h, c78, 0)), "7th-8th");
    assert_string_equal(label(h, hier_ancestor(h, c78, 1)), "High School");
    assert_string_equal(label(h, hier_ancestor(h, c78, 2)), "Secondary education");
    assert_string_equal(label(h, hier_ancestor(h, c78, 3)), "*");
    uint32_t cdoc = leaf(h, "Doctorate");
    assert_string_equal(label(h, hier_ancestor(h, cdoc, 1)), "Graduate");
    assert_string_equal(label(h, hier_ancestor(h, cdoc, 2)), "Higher education");
    uint32_t cpre = leaf(h, "Preschool");
    assert_string_equal(label(h, hier_ancestor(h, cpre, 1)), "Primary School");
    assert_string_equal(label(h, hier_ancestor(h, cpre, 2)), "Primary education");

    tu_rng rng = {1};
    check_lca_pairs(h, &rng, 0);
    hier_free(h);
}

static void test_age(void **state)
{
    (void)state;
    hier *h = load_ok(DATA("hier_age.csv"));
    check_invariants(h);
    /* Ages 1..100 in file order; levels of 5, 10 and 20 years (ARX labels
     * them from 0: "0-4" holds 1..5), then "*". */
    assert_int_equal(hier_leaf_count(h), 100);
    assert_int_equal(hier_height(h), 4);
    assert_int_equal(hier_node_count(h), 100 + 20 + 10 + 5 + 1);
    char buf[32];
    for (uint32_t c = 0; c < 100; c++) {
        snprintf(buf, sizeof buf, "%u", c + 1);
        assert_int_equal(leaf(h, buf), c);
    }
    for (uint32_t k = 0; k < 20; k++) {
        snprintf(buf, sizeof buf, "%u-%u", 5 * k, 5 * k + 4);
        assert_node(h, buf, 1, 5 * k, 5 * k + 4);
    }
    for (uint32_t k = 0; k < 10; k++) {
        snprintf(buf, sizeof buf, "%u-%u", 10 * k, 10 * k + 9);
        assert_node(h, buf, 2, 10 * k, 10 * k + 9);
    }
    for (uint32_t k = 0; k < 5; k++) {
        snprintf(buf, sizeof buf, "%u-%u", 20 * k, 20 * k + 19);
        assert_node(h, buf, 3, 20 * k, 20 * k + 19);
    }
    assert_node(h, "*", 4, 0, 99);

    uint32_t c37 = leaf(h, "37");
    assert_int_equal(c37, 36);
    assert_string_equal(label(h, hier_ancestor(h, c37, 0)), "37");
    assert_string_equal(label(h, hier_ancestor(h, c37, 1)), "35-39");
    assert_string_equal(label(h, hier_ancestor(h, c37, 2)), "30-39");
    assert_string_equal(label(h, hier_ancestor(h, c37, 3)), "20-39");
    assert_string_equal(label(h, hier_ancestor(h, c37, 4)), "*");

    assert_string_equal(label(h, hier_lca(h, 0, 4)), "0-4");
    assert_string_equal(label(h, hier_lca(h, 35, 38)), "35-39");
    assert_string_equal(label(h, hier_lca(h, 34, 36)), "30-39");
    assert_string_equal(label(h, hier_lca(h, 20, 39)), "20-39");
    assert_string_equal(label(h, hier_lca(h, 29, 30)), "20-39");
    assert_string_equal(label(h, hier_lca(h, 19, 20)), "*");
    assert_string_equal(label(h, hier_lca(h, 80, 99)), "80-99");
    assert_string_equal(label(h, hier_lca(h, 99, 99)), "100");

    tu_rng rng = {2};
    check_lca_pairs(h, &rng, 0);
    hier_free(h);
}

static void test_workclass(void **state)
{
    (void)state;
    hier *h = load_ok(DATA("hier_workclass.csv"));
    check_invariants(h);
    assert_int_equal(hier_leaf_count(h), 8);
    assert_int_equal(hier_height(h), 2);
    assert_int_equal(hier_node_count(h), 8 + 3 + 1);
    static const char *const order[8] = {"Private",   "Self-emp-not-inc", "Self-emp-inc",
                                         "Federal-gov", "Local-gov",      "State-gov",
                                         "Without-pay", "Never-worked"};
    for (uint32_t c = 0; c < 8; c++) assert_int_equal(leaf(h, order[c]), c);
    assert_node(h, "Non-Government", 1, 0, 2);
    assert_node(h, "Government", 1, 3, 5);
    assert_node(h, "Unemployed", 1, 6, 7);
    assert_node(h, "*", 2, 0, 7);
    assert_string_equal(label(h, hier_lca(h, 3, 5)), "Government");
    assert_string_equal(label(h, hier_lca(h, 4, 5)), "Government");
    assert_string_equal(label(h, hier_lca(h, 2, 3)), "*");
    assert_string_equal(label(h, hier_lca(h, 6, 7)), "Unemployed");
    assert_string_equal(label(h, hier_ancestor(h, 7, 1)), "Unemployed");
    assert_string_equal(label(h, hier_ancestor(h, 7, 2)), "*");
    tu_rng rng = {3};
    check_lca_pairs(h, &rng, 0);
    hier_free(h);
}

static void test_native_country(void **state)
{
    (void)state;
    /* Regions interleaved in the file, and no line end after the last row. */
    hier *h = load_ok(DATA("hier_native_country.csv"));
    check_invariants(h);
    assert_int_equal(hier_leaf_count(h), 41);
    assert_int_equal(hier_height(h), 2);
    assert_int_equal(hier_node_count(h), 41 + 5 + 1);
    assert_node(h, "North America", 1, 0, 11);
    assert_node(h, "Asia", 1, 12, 22);
    assert_node(h, "Europe", 1, 23, 34);
    assert_node(h, "Africa", 1, 35, 35);
    assert_node(h, "South America", 1, 36, 40);
    assert_int_equal(leaf(h, "United-States"), 0);
    assert_int_equal(leaf(h, "Puerto-Rico"), 1);
    assert_int_equal(leaf(h, "El-Salvador"), 11);
    assert_int_equal(leaf(h, "Cambodia"), 12);
    assert_int_equal(leaf(h, "Hong"), 22);
    assert_int_equal(leaf(h, "England"), 23);
    assert_int_equal(leaf(h, "Holand-Netherlands"), 34); /* the last row */
    assert_int_equal(leaf(h, "South"), 35);
    assert_int_equal(leaf(h, "Ecuador"), 36);
    assert_int_equal(leaf(h, "Peru"), 40);
    assert_int_equal(leaf(h, "Trinadad&Tobago"), 39);
    assert_int_equal(leaf(h, "Outlying-US(Guam-USVI-etc)"), 3);
    assert_string_equal(label(h, hier_lca(h, 35, 35)), "South");
    assert_string_equal(label(h, hier_lca(h, 36, 40)), "South America");
    assert_string_equal(label(h, hier_lca(h, 35, 36)), "*");
    tu_rng rng = {4};
    check_lca_pairs(h, &rng, 0);
    hier_free(h);
}

/* ---- small files: shapes -------------------------------------------------- */

/* Asserts that two hierarchies are the same tree with the same labels. */
static void assert_same_tree(const hier *a, const hier *b)
{
    assert_int_equal(hier_leaf_count(a), hier_leaf_count(b));
    assert_int_equal(hier_node_count(a), hier_node_count(b));
    assert_int_equal(hier_height(a), hier_height(b));
    assert_int_equal(hier_root(a), hier_root(b));
    for (uint32_t i = 0; i < hier_node_count(a); i++) {
        const hier_node *x = hier_node_at(a, i), *y = hier_node_at(b, i);
        assert_int_equal(x->lo, y->lo);
        assert_int_equal(x->hi, y->hi);
        assert_int_equal(x->level, y->level);
        assert_int_equal(x->parent, y->parent);
        assert_int_equal(x->first_child, y->first_child);
        assert_int_equal(x->nchildren, y->nchildren);
        assert_string_equal(x->label, y->label);
    }
    for (uint32_t i = 0; i + 1 < hier_node_count(a); i++)
        assert_int_equal(hier_children(a)[i], hier_children(b)[i]);
}

static void test_crlf_same_as_lf(void **state)
{
    (void)state;
    char *text = tu_read_file(DATA("hier_education.csv"), NULL);
    assert_non_null(text);
    size_t n = strlen(text), k = 0;
    char *crlf = malloc(2 * n + 8);
    assert_non_null(crlf);
    for (size_t i = 0; i < n; i++) {
        if (text[i] == '\n') crlf[k++] = '\r';
        crlf[k++] = text[i];
    }
    crlf[k] = '\0';
    hier *lf = load_ok(DATA("hier_education.csv"));
    hier *cr = load_text_ok("crlf.csv", crlf);
    check_invariants(cr);
    assert_same_tree(lf, cr);
    assert_int_equal(leaf(cr, "Preschool"), 15); /* no "\r" left on the last field */
    assert_int_equal(label_node(cr, "*"), hier_root(cr));
    hier_free(cr);
    /* CRLF with trailing blank lines. */
    crlf[k] = '\0';
    strcpy(crlf + k, "\r\n\r\n");
    cr = load_text_ok("crlf2.csv", crlf);
    assert_same_tree(lf, cr);
    hier_free(cr);
    hier_free(lf);
    free(crlf);
    free(text);
}

static void test_single_column(void **state)
{
    (void)state;
    hier *h = load_text_ok("one.csv", "red\ngreen\nblue\n");
    check_invariants(h);
    assert_int_equal(hier_leaf_count(h), 3);
    assert_int_equal(hier_height(h), 1);
    assert_int_equal(hier_node_count(h), 4);
    assert_string_equal(label(h, hier_root(h)), "*");
    assert_int_equal(label_node(h, "*"), hier_root(h));
    assert_int_equal(leaf(h, "red"), 0);
    assert_int_equal(leaf(h, "green"), 1);
    assert_int_equal(leaf(h, "blue"), 2);
    assert_int_equal(hier_lca(h, 0, 2), hier_root(h));
    assert_int_equal(hier_lca(h, 1, 2), hier_root(h));
    assert_int_equal(hier_ancestor(h, 1, 1), hier_root(h));
    hier_free(h);

    /* One row of one field: a leaf under "*". */
    h = load_text_ok("one1.csv", "only");
    check_invariants(h);
    assert_int_equal(hier_leaf_count(h), 1);
    assert_int_equal(hier_height(h), 1);
    assert_int_equal(hier_node_count(h), 2);
    assert_string_equal(label(h, hier_root(h)), "*");
    assert_int_equal(hier_lca(h, 0, 0), 0);
    hier_free(h);

    /* A leaf called "*" beside another leaf: "*" would name the leaf and the
     * root added above both. */
    ak_error err = load_text_err("one2.csv", "*\nx\n", ANONKIT_E_INPUT);
    assert_int_equal(err.line, 1);
    assert_non_null(strstr(err.message, "root"));
}

static void test_root_shapes(void **state)
{
    (void)state;
    /* A single top label is the root, whatever it says. */
    hier *h = load_text_ok("top1.csv", "a;all\nb;all\n");
    check_invariants(h);
    assert_int_equal(hier_height(h), 1);
    assert_int_equal(hier_node_count(h), 3);
    assert_string_equal(label(h, hier_root(h)), "all");
    hier_free(h);

    /* Several top labels get a root "*" above them. */
    h = load_text_ok("top2.csv", "a;x;P\nb;y;Q\nc;x;P\n");
    check_invariants(h);
    assert_int_equal(hier_height(h), 3);
    assert_int_equal(hier_node_count(h), 3 + 2 + 2 + 1);
    assert_string_equal(label(h, hier_root(h)), "*");
    assert_int_equal(leaf(h, "a"), 0);
    assert_int_equal(leaf(h, "c"), 1);
    assert_int_equal(leaf(h, "b"), 2);
    assert_node(h, "P", 2, 0, 1);
    assert_node(h, "Q", 2, 2, 2);
    assert_string_equal(label(h, hier_lca(h, 1, 2)), "*");
    hier_free(h);

    /* The same label at several levels: nodes are (level, label). */
    h = load_text_ok("same.csv", "Male;Male;*\nFemale;Female;*\n");
    check_invariants(h);
    assert_int_equal(hier_height(h), 2);
    assert_int_equal(hier_node_count(h), 5);
    assert_int_equal(label_node(h, "Male"), hier_leaf_node(h, 0));
    assert_int_equal(hier_node_at(h, label_node(h, "Female"))->level, 0);
    assert_string_equal(label(h, hier_ancestor(h, 1, 1)), "Female");
    assert_int_equal(hier_node_at(h, hier_ancestor(h, 1, 1))->level, 1);
    hier_free(h);

    /* Trailing blank lines are fine; quoted fields and a byte order mark too. */
    h = load_text_ok("trail.csv", "\xEF\xBB\xBF" "a;x;*\n\"b;1\";x;*\n\"c\"\"\";\"x\";*\n\n\n\n");
    check_invariants(h);
    assert_int_equal(hier_leaf_count(h), 3);
    assert_int_equal(leaf(h, "a"), 0);
    assert_int_equal(leaf(h, "b;1"), 1);
    assert_int_equal(leaf(h, "c\""), 2);
    assert_int_equal(hier_node_count(h), 5);
    hier_free(h);

    hier_free(NULL);
}

/* ---- rejected input -------------------------------------------------------- */

static void test_unequal_rows(void **state)
{
    (void)state;
    ak_error e = load_text_err("uneq.csv", "a;x;*\nb;x;*\nc;*\nd;x;*\n", ANONKIT_E_INPUT);
    assert_int_equal(e.line, 3);
    assert_contains(e.message, "expected 3");
    assert_contains(e.message, "got 2");

    e = load_text_err("uneq2.csv", "a;x;*\r\nb;x;*\r\nc;x;y;*\r\n", ANONKIT_E_INPUT);
    assert_int_equal(e.line, 3);
    assert_contains(e.message, "got 4");

    /* A blank line in the middle. */
    e = load_text_err("blank.csv", "a;x;*\nb;x;*\n\nc;x;*\n", ANONKIT_E_INPUT);
    assert_int_equal(e.line, 3);
    assert_contains(e.message, "expected 3");
    e = load_text_err("blank2.csv", "a\n\n\nb\n", ANONKIT_E_INPUT);
    assert_int_equal(e.line, 2);
    e = load_text_err("blank3.csv", "\na;x\n", ANONKIT_E_INPUT);
    assert_int_equal(e.line, 1);

    /* Line numbers count physical lines, quoted newlines included. */
    e = load_text_err("quoted.csv", "\"a\nb\";x;*\nc;x\n", ANONKIT_E_INPUT);
    assert_int_equal(e.line, 3);
}

static void test_empty_label(void **state)
{
    (void)state;
    ak_error e = load_text_err("el.csv", "a;x;*\nb;;*\n", ANONKIT_E_INPUT);
    assert_int_equal(e.line, 2);
    assert_contains(e.message, "empty label");
    e = load_text_err("el2.csv", "a;x;*\n;x;*\n", ANONKIT_E_INPUT);
    assert_int_equal(e.line, 2);
    e = load_text_err("el3.csv", "a;x;\n", ANONKIT_E_INPUT);
    assert_int_equal(e.line, 1);
}

/* A NUL byte in a label would cut it short where labels are C strings (the
 * published text, lookups): refused, with its line and field. */
static void test_nul_in_label(void **state)
{
    (void)state;
    const char *path = tu_path(tu_group_dir, "nul.csv");
    static const char text[] = "a;x;*\nb;x\0y;*\n";
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, sizeof text - 1, f), sizeof text - 1);
    fclose(f);
    hier *h = NULL;
    ak_error err;
    ak_err_clear(&err);
    assert_int_equal(hier_load(&h, path, &err), ANONKIT_E_INPUT);
    assert_null(h);
    assert_int_equal(err.line, 2);
    assert_int_equal(err.column, 2);
    assert_contains(err.message, "NUL byte");
}

static void test_two_parents(void **state)
{
    (void)state;
    ak_error e = load_text_err("tp.csv", "a;x;P;*\nb;y;Q;*\nc;y;Q;*\nd;x;Q;*\n", ANONKIT_E_INPUT);
    assert_int_equal(e.line, 4);
    assert_contains(e.message, "\"x\"");
    assert_contains(e.message, "\"P\"");
    assert_contains(e.message, "\"Q\"");
    assert_contains(e.message, "line 1");
    assert_contains(e.message, "level 1");

    /* Two parents of a level-2 label, under a root "*". */
    e = load_text_err("tp2.csv", "a;x;P;R1\nb;y;P;R2\n", ANONKIT_E_INPUT);
    assert_int_equal(e.line, 2);
    assert_contains(e.message, "\"P\"");
    assert_contains(e.message, "\"R1\"");
    assert_contains(e.message, "\"R2\"");
}

static void test_duplicate_leaf(void **state)
{
    (void)state;
    ak_error e = load_text_err("dup.csv", "a;x;*\nb;x;*\nc;y;*\nb;x;*\n", ANONKIT_E_INPUT);
    assert_int_equal(e.line, 4);
    assert_contains(e.message, "\"b\"");
    assert_contains(e.message, "line 2");
    /* Under another parent it is still a duplicate leaf. */
    e = load_text_err("dup2.csv", "a;x;*\nb;y;*\na;y;*\n", ANONKIT_E_INPUT);
    assert_int_equal(e.line, 3);
    assert_contains(e.message, "duplicate leaf");
    e = load_text_err("dup3.csv", "a\nb\na\n", ANONKIT_E_INPUT);
    assert_int_equal(e.line, 3);
}

static void test_empty_and_missing(void **state)
{
    (void)state;
    ak_error e = load_text_err("empty.csv", "", ANONKIT_E_INPUT);
    assert_contains(e.message, "empty");
    e = load_text_err("empty2.csv", "\n\n", ANONKIT_E_INPUT);
    assert_contains(e.message, "empty");

    const char *missing = tu_path(tu_group_dir, "no-such-file.csv");
    hier *h = (hier *)1;
    ak_error err;
    ak_err_clear(&err);
    assert_int_equal(hier_load(&h, missing, &err), ANONKIT_E_IO);
    assert_null(h);
    assert_int_equal(err.code, ANONKIT_E_IO);
    assert_contains(err.message, strerror(ENOENT));
    assert_contains(err.file, "no-such-file.csv");
    /* NULL error record: only the status. */
    assert_int_equal(hier_load(&h, missing, NULL), ANONKIT_E_IO);
    tu_write_file(tu_path(tu_group_dir, "dup4.csv"), "a\nb\na\n");
    assert_int_equal(hier_load(&h, tu_path(tu_group_dir, "dup4.csv"), NULL), ANONKIT_E_INPUT);
}

/* ---- random trees ------------------------------------------------------------ */

typedef struct gnode {
    uint32_t level, parent, index; /* index among the nodes of its level, names the label */
    uint32_t first_row;            /* smallest (shuffled) row of a leaf below */
    uint32_t code;                 /* expected leaf code (leaves) */
    uint32_t lo, hi;               /* expected range */
} gnode;

typedef struct gtree {
    gnode *nodes;
    uint32_t n, cap;
    uint32_t *leaves; /* gnode index of each leaf, in generation order */
    uint32_t nleaves;
} gtree;

static uint32_t gadd(gtree *t, uint32_t level, uint32_t parent, uint32_t *per_level)
{
    if (t->n == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 64;
        t->nodes = realloc(t->nodes, t->cap * sizeof *t->nodes);
        assert_non_null(t->nodes);
    }
    gnode *g = &t->nodes[t->n];
    memset(g, 0, sizeof *g);
    g->level = level;
    g->parent = parent;
    g->index = per_level[level]++;
    g->first_row = UINT32_MAX;
    return t->n++;
}

/* Builds the subtree below node p (at level `level`): random fanout 1..maxfan. */
static void ggrow(gtree *t, tu_rng *rng, uint32_t p, uint32_t level, uint32_t maxfan,
                  uint32_t *per_level)
{
    if (level == 0) return;
    uint32_t fan = 1 + (uint32_t)tu_below(rng, maxfan);
    for (uint32_t i = 0; i < fan; i++) {
        uint32_t c = gadd(t, level - 1, p, per_level);
        ggrow(t, rng, c, level - 1, maxfan, per_level);
    }
}

/* Expected codes: depth first, children ordered by their first row. Children
 * of a node are found by scanning (the trees are small). */
static void gnumber(gtree *t, uint32_t p, uint32_t *next)
{
    gnode *g = &t->nodes[p];
    uint32_t kids[4096], nk = 0;
    for (uint32_t i = 0; i < t->n; i++)
        if (t->nodes[i].parent == p && i != p) kids[nk++] = i;
    if (nk == 0) {
        g->code = g->lo = g->hi = (*next)++;
        return;
    }
    /* insertion sort by first_row */
    for (uint32_t i = 1; i < nk; i++)
        for (uint32_t j = i; j > 0 && t->nodes[kids[j]].first_row < t->nodes[kids[j - 1]].first_row; j--) {
            uint32_t x = kids[j];
            kids[j] = kids[j - 1];
            kids[j - 1] = x;
        }
    g->lo = *next;
    for (uint32_t i = 0; i < nk; i++) gnumber(t, kids[i], next);
    g->hi = *next - 1;
}

static void test_random_trees(void **state)
{
    (void)state;
    tu_rng rng = {20240611};
    char *text = malloc(1 << 20);
    assert_non_null(text);
    for (int iter = 0; iter < 300; iter++) {
        gtree t = {0};
        uint32_t per_level[8] = {0};
        uint32_t height = 1 + (uint32_t)tu_below(&rng, 5);
        uint32_t maxfan = 1 + (uint32_t)tu_below(&rng, height <= 2 ? 12 : 4);
        const uint32_t NOPARENT = UINT32_MAX - 1;
        uint32_t root = gadd(&t, height, NOPARENT, per_level);
        ggrow(&t, &rng, root, height, maxfan, per_level);
        /* Write the root column ("*") or leave it out (then a root "*" is
         * synthesized when the top level has several labels). Rows of one
         * field happen when height is 1 and the root column is left out. */
        int write_root = (int)tu_below(&rng, 2);
        uint32_t top = write_root ? height : height - 1;

        t.leaves = malloc(t.n * sizeof *t.leaves);
        assert_non_null(t.leaves);
        for (uint32_t i = 0; i < t.n; i++)
            if (t.nodes[i].level == 0) t.leaves[t.nleaves++] = i;
        /* Shuffled rows. */
        for (uint32_t i = t.nleaves; i > 1; i--) {
            uint32_t j = (uint32_t)tu_below(&rng, i);
            uint32_t x = t.leaves[i - 1];
            t.leaves[i - 1] = t.leaves[j];
            t.leaves[j] = x;
        }
        const char *eol = tu_below(&rng, 3) == 0 ? "\r\n" : "\n";
        size_t len = 0;
        for (uint32_t r = 0; r < t.nleaves; r++) {
            uint32_t x = t.leaves[r];
            for (uint32_t l = 0; l <= top; l++) {
                gnode *g = &t.nodes[x];
                if (g->first_row == UINT32_MAX) g->first_row = r;
                /* Labels "l<level>n<index>": a label names one node. */
                if (l == height)
                    len += (size_t)sprintf(text + len, "*");
                else
                    len += (size_t)sprintf(text + len, "l%un%u", g->level, g->index);
                len += (size_t)sprintf(text + len, "%s", l < top ? ";" : "");
                x = g->parent;
            }
            if (r + 1 < t.nleaves || tu_below(&rng, 2)) len += (size_t)sprintf(text + len, "%s", eol);
        }
        if (tu_below(&rng, 4) == 0) len += (size_t)sprintf(text + len, "%s%s", eol, eol);
        assert_true(len < (1 << 20));
        t.nodes[root].first_row = 0;

        uint32_t next = 0;
        gnumber(&t, root, &next);
        assert_int_equal(next, t.nleaves);

        char name[64];
        snprintf(name, sizeof name, "rand%d.csv", iter);
        hier *h = load_text_ok(name, text);
        check_invariants(h);
        assert_int_equal(hier_leaf_count(h), t.nleaves);
        /* A root "*" is synthesized above the written top level when the rows
         * have one field or the top level has several labels. */
        uint32_t want_height = write_root ? height : (top == 0 || per_level[top] > 1) ? height : top;
        assert_int_equal(hier_height(h), want_height);
        uint32_t want_nodes = want_height > top ? 1 : 0;
        for (uint32_t l = 0; l <= top; l++) want_nodes += per_level[l];
        assert_int_equal(hier_node_count(h), want_nodes);

        /* Every generated node below the written top is where the model says. */
        char lab[32];
        for (uint32_t i = 0; i < t.n; i++) {
            const gnode *g = &t.nodes[i];
            if (g->level > top) continue;
            uint32_t any_leaf = g->lo;
            uint32_t hn = hier_ancestor(h, any_leaf, g->level);
            const hier_node *nd = hier_node_at(h, hn);
            if (g->level == height)
                snprintf(lab, sizeof lab, "*");
            else
                snprintf(lab, sizeof lab, "l%un%u", g->level, g->index);
            assert_string_equal(nd->label, lab);
            assert_int_equal(nd->level, g->level);
            assert_int_equal(nd->lo, g->lo);
            assert_int_equal(nd->hi, g->hi);
            if (g->level == 0) {
                uint32_t code;
                assert_int_equal(hier_find_leaf(h, lab, strlen(lab), &code), 0);
                assert_int_equal(code, g->code);
            }
        }
        check_lca_pairs(h, &rng, 2000);
        hier_free(h);
        free(t.leaves);
        free(t.nodes);
    }
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_education),
        cmocka_unit_test(test_age),
        cmocka_unit_test(test_workclass),
        cmocka_unit_test(test_native_country),
        cmocka_unit_test(test_crlf_same_as_lf),
        cmocka_unit_test(test_single_column),
        cmocka_unit_test(test_root_shapes),
        cmocka_unit_test(test_unequal_rows),
        cmocka_unit_test(test_empty_label),
        cmocka_unit_test(test_nul_in_label),
        cmocka_unit_test(test_two_parents),
        cmocka_unit_test(test_duplicate_leaf),
        cmocka_unit_test(test_empty_and_missing),
        cmocka_unit_test(test_random_trees),
    };
    return cmocka_run_group_tests(tests, tu_group_setup, tu_group_teardown);
}
