/* hierarchy.h — generalization hierarchies (taxonomy trees), docs/ARCHITECTURE.md §4.
 *
 * Loaded from an ARX-style CSV: ';'-separated, no header, one row per leaf:
 * the leaf value, then its generalization at level 1, 2, ..., usually ending
 * in "*"; all rows have the same number of fields. A label names one node:
 * it repeats where rows share that node (the "*" of every row, a parent of
 * several leaves), and on two levels only for nodes covering the same leaves
 * (a leaf not generalized at a level, "Male;Male;*"). Leaves are
 * numbered 0..nleaves-1 in depth-first, left-to-right order of the tree
 * (children in the order of their first appearance in the file), so that every
 * node covers one contiguous range [lo, hi] of leaf codes. When the top level
 * has more than one distinct label, a root "*" is added above them.
 *
 * Rejected with file and line: rows of unequal length, empty labels, a label
 * with two different parents, a label on two levels for nodes covering
 * different leaves (both lines named; also a "*" below the top when a root
 * "*" is added above it), duplicate leaves, an empty file. */
#ifndef AK_HIERARCHY_H
#define AK_HIERARCHY_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

typedef struct hier hier;

typedef struct hier_node {
    uint32_t lo, hi;        /* leaf code range covered, inclusive */
    uint32_t level;         /* 0 for leaves, height for the root */
    uint32_t parent;        /* node index of the parent, UINT32_MAX for the root */
    uint32_t first_child;   /* index into hier_children(), children in code order */
    uint32_t nchildren;     /* 0 for leaves */
    const char *label;      /* NUL-terminated */
} hier_node;

/* Loads a hierarchy file. */
int hier_load(hier **out /* OUT */, const char *path, ak_error *err);
/* Loads a hierarchy from table t (io/memtable.h: one row per leaf, no
 * header) through the CSV reader's table backend, without CSV text: the
 * same tree hier_load gives t's CSV form (';'-separated, no header); `name`
 * is used in messages (rows as lines) and is the hierarchy's path. */
struct anonkit_table;
int hier_load_table(hier **out /* OUT */, const struct anonkit_table *t, const char *name, ak_error *err);
void hier_free(hier *h);

/* A hierarchy whose rows are embedded in another file (the recoding rules):
 * rows are handed over one at a time, each with its line in that file, and
 * checked as hier_load checks a file's rows; `name` (the other file) is used
 * in messages and is the hierarchy's path. hier_builder_finish lays the tree
 * out and frees the builder, as does hier_builder_free. */
typedef struct hier_builder hier_builder;
struct csv_field;
int hier_builder_open(hier_builder **out /* OUT */, const char *name, ak_error *err);
int hier_builder_add(hier_builder *b, const struct csv_field *fields, uint32_t count, long line, ak_error *err);
int hier_builder_finish(hier_builder *b, hier **out /* OUT */, ak_error *err);
void hier_builder_free(hier_builder *b);

uint32_t hier_leaf_count(const hier *h);
uint32_t hier_node_count(const hier *h);
uint32_t hier_height(const hier *h); /* level of the root */
uint32_t hier_root(const hier *h);   /* node index of the root */
const hier_node *hier_node_at(const hier *h, uint32_t node);
/* Node index of the leaf with code `code` (0 <= code < leaf count). */
uint32_t hier_leaf_node(const hier *h, uint32_t code);
/* Child node indices of node n are hier_children(h)[n.first_child + i], i < n.nchildren. */
const uint32_t *hier_children(const hier *h);

/* Leaf code of a value; returns 0 and sets *code, or -1 if it is no leaf. */
int hier_find_leaf(const hier *h, const char *value, size_t len, uint32_t *code /* OUT */);

/* Lowest node covering leaf codes [lo, hi], in O(height). */
uint32_t hier_lca(const hier *h, uint32_t lo, uint32_t hi);

/* The ancestor of leaf `code` at `level` (0 = the leaf itself). */
uint32_t hier_ancestor(const hier *h, uint32_t code, uint32_t level);

/* Lowest-level node whose label is `label` (any level; the nodes of one label
 * cover the same leaves), or UINT32_MAX. */
uint32_t hier_find_label(const hier *h, const char *label, size_t len);

/* The file it was loaded from. */
const char *hier_path(const hier *h);

#endif
