/* fuzz_hierarchy.c — libFuzzer harness for the hierarchy loader
 * (src/core/hierarchy): any bytes are loaded as an ARX hierarchy file. A
 * refused file must come with a message; an accepted one must be a tree as
 * hierarchy.h describes it: every node covers a contiguous range of leaf
 * codes that its children split in order, levels rise by one to the root,
 * every leaf is found by its label, and hier_lca and hier_ancestor agree with
 * walking up the parents. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/hierarchy.h"
#include "fuzz_util.h"

static void fail(const char *what)
{
    fprintf(stderr, "hierarchy: %s\n", what);
    abort();
}

/* The lowest common ancestor of leaves lo and hi by walking up the parents. */
static uint32_t walk_lca(const hier *h, uint32_t lo, uint32_t hi)
{
    uint32_t n = hier_leaf_node(h, lo);
    for (;;) {
        const hier_node *x = hier_node_at(h, n);
        if (x->lo <= lo && hi <= x->hi) return n;
        if (x->parent == UINT32_MAX) fail("the root does not cover every leaf");
        n = x->parent;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_path("hierarchy.csv");
    fuzz_write(path, data, size);
    hier *h = NULL;
    ak_error err;
    memset(&err, 0, sizeof err);
    if (hier_load(&h, path, &err) < 0) {
        if (!err.message[0]) fail("refused without a message");
        unlink(path);
        return 0;
    }
    unlink(path);
    const uint32_t leaves = hier_leaf_count(h), nodes = hier_node_count(h), root = hier_root(h);
    if (leaves == 0 || root >= nodes) fail("no leaves or no root");
    const hier_node *r = hier_node_at(h, root);
    if (r->lo != 0 || r->hi != leaves - 1 || r->parent != UINT32_MAX || r->level != hier_height(h))
        fail("the root is not above everything");
    const uint32_t *children = hier_children(h);
    for (uint32_t n = 0; n < nodes; n++) {
        const hier_node *x = hier_node_at(h, n);
        if (x->lo > x->hi || x->hi >= leaves || !x->label) fail("a node's range or label");
        if (x->nchildren == 0) {
            if (x->level != 0 || x->lo != x->hi || hier_leaf_node(h, x->lo) != n) fail("a leaf");
            uint32_t code;
            /* (a leaf's label may also be an inner node's: found among leaves by its leaf code) */
            if (hier_find_leaf(h, x->label, strlen(x->label), &code) != 0 || code != x->lo) fail("a leaf not found");
            continue;
        }
        uint32_t next = x->lo;
        for (uint32_t c = 0; c < x->nchildren; c++) {
            const hier_node *y = hier_node_at(h, children[x->first_child + c]);
            if (y->parent != n || y->lo != next || y->level + 1 != x->level) fail("children do not split their parent");
            next = y->hi + 1;
        }
        if (next != x->hi + 1) fail("children do not cover their parent");
    }
    for (uint32_t i = 0; i < 64 && i < leaves; i++) {
        const uint32_t lo = (uint32_t)((uint64_t)i * 7919 % leaves), hi = lo + (leaves - lo) / (1 + i % 5) - ((leaves - lo) / (1 + i % 5) > 0);
        if (hier_lca(h, lo, hi) != walk_lca(h, lo, hi)) fail("hier_lca");
        for (uint32_t level = 0; level <= hier_height(h); level++) {
            const uint32_t a = hier_ancestor(h, lo, level);
            const hier_node *x = hier_node_at(h, a);
            if (x->level != level || x->lo > lo || x->hi < lo) fail("hier_ancestor");
        }
    }
    hier_free(h);
    return 0;
}
