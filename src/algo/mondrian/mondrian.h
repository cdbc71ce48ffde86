/* mondrian.h — in-memory Mondrian, strict multidimensional partitioning with
 * the Median, InfoGain and Regression split criteria (000 §1.2; the ICDE 2006
 * slides in 003). */
#ifndef AK_MONDRIAN_H
#define AK_MONDRIAN_H

#include "common/error.h"
#include "core/partition.h"
#include "core/table.h"
#include "model/model.h"
#include "model/sampletest.h"

/* Partitions table t greedily until no allowable split remains, filling out
 * (initialized by the caller with partition_init). Up to `threads` threads
 * work on disjoint subtrees; the result is the same for any thread count.
 * Fails with ANONKIT_E_INELIGIBLE when the whole table does not satisfy m. */
int mdr_run(const table *t, const model *m, unsigned threads, partition *out, ak_error *err);

typedef enum mdr_split {
    MDR_SPLIT_MEDIAN = 0, /* widest normalized range, median threshold */
    MDR_SPLIT_INFOGAIN,   /* largest information gain on t->class_codes */
    MDR_SPLIT_REGRESSION  /* least sum of squared errors of t->target_values */
} mdr_split;

/* The partition tree grown on a sample by Rothko-S (000 §3): nodes in the
 * order they were made (a parent before its children), each with its region. */
typedef struct mdr_tree_node {
    uint32_t parent;   /* UINT32_MAX for the root */
    uint32_t depth;    /* the root's is 0 */
    uint32_t split_q;  /* the QI the node was split on; UINT32_MAX for a leaf */
    int median_only;   /* InfoGain gave up at or above it */
    uint64_t rows;     /* sample rows */
} mdr_tree_node;

typedef struct mdr_tree {
    uint32_t d;
    mdr_tree_node *nodes;
    size_t count, cap;
    uint32_t *regions; /* per node: rlo then rhi, d codes each */
} mdr_tree;

static inline const uint32_t *mdr_tree_rlo(const mdr_tree *tr, size_t i) { return tr->regions + 2 * (size_t)tr->d * i; }
static inline const uint32_t *mdr_tree_rhi(const mdr_tree *tr, size_t i) { return mdr_tree_rlo(tr, i) + tr->d; }
void mdr_tree_free(mdr_tree *tr);

/* The growth phase of Rothko-S (000 §3): the table is a sample of a larger
 * partition, a split is made when `test` lets every child through, and the
 * tree is recorded. Nodes are split breadth-first; a node is not split when
 * it holds at most stop_rows sample rows, lies at max_depth, or when the
 * split would leave more than max_leaves leaves (each 0: no limit). */
typedef struct mdr_grow {
    const sample_test *test;
    uint64_t stop_rows;
    uint32_t max_depth;
    size_t max_leaves;
    mdr_tree *tree; /* OUT: initialized empty by the caller */
} mdr_grow;

typedef struct mdr_options {
    unsigned threads; /* 0 or 1: one thread */
    int no_simd;      /* 1: plain C box loops even where AVX2 is available (for tests) */
    mdr_split split;
    double min_gain;  /* InfoGain: below this gain (bits) a subtree continues with Median */
    /* A partition of a larger table (Rothko, 000 §2.1): the region of its node
     * of the partition tree (NULL: the whole domain), and whether InfoGain gave
     * up above it. */
    const uint32_t *root_rlo, *root_rhi;
    int root_median_only;
    /* Rothko-S: grow a tree on a sample instead of judging splits by the
     * model (single-threaded; the whole-sample check is skipped). */
    const mdr_grow *grow;
} mdr_options;

/* Parses "median", "infogain" or "regression"; -1 on anything else. */
int mdr_parse_split(const char *text, mdr_split *out /* OUT */);
const char *mdr_split_name(mdr_split split);

/* Checks that the table holds what the model and the split criterion read. */
int mdr_check_inputs(const table *t, const model *m, const mdr_options *options, ak_error *err);

/* mdr_run with every option. */
int mdr_run_with(const table *t, const model *m, const mdr_options *options, partition *out, ak_error *err);

#endif
