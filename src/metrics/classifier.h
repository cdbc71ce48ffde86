/* classifier.h — classification error of a published table, the
 * "classification metric" of [Wang06] §6 (after the C4.5 experiments of its
 * reference [5]): a decision tree for a class column is grown from the
 * training rows of the (generalized) table and its error is measured on the
 * testing rows.
 *
 * The tree follows C4.5 (Quinlan 1993, release 8):
 *   - a categorical attribute splits multiway, one branch per category (each
 *     published label is a category, whatever its level); a numeric attribute
 *     splits in two at a threshold t (value <= t to the first branch), t being
 *     a training value, chosen by information gain among the cut points that
 *     leave at least min(25, max(min_leaf, 0.1 n / labels)) rows each side,
 *     and its gain is charged log2(cut points tried) / n (release 8);
 *   - of the attributes with at least two branches holding min_leaf rows, the
 *     one with the highest gain ratio among those whose gain is at least the
 *     average gain is taken (ties: the lowest attribute index); a node with
 *     fewer than 2 min_leaf rows, or one class, is a leaf;
 *   - a subtree that makes as many training errors as its root would make as a
 *     leaf is collapsed, then error-based (pessimistic) pruning replaces a
 *     subtree by a leaf when the leaf's upper confidence limit of errors (at
 *     confidence cf, C4.5's AddErrs) is at most the subtree's plus 0.1.
 * Simplifications, all documented here: no subtree raising (C4.5 also tries
 * to graft a node's largest branch in its place), no missing values (a
 * published "*" is a category, or for a numeric attribute the whole range),
 * no grouping of categories into subsets, every categorical attribute counts
 * toward the average gain. A category that reaches a node in testing but not
 * in training gets the node's majority class, as C4.5's empty branches do.
 * Ties of a majority go to the lowest class code. */
#ifndef AK_CLASSIFIER_H
#define AK_CLASSIFIER_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

/* The rows the tree sees: per attribute either category codes or numbers. */
typedef struct ctree_data {
    size_t nrows;
    uint32_t nattrs;
    const unsigned char *numeric; /* per attribute: 1 numeric, 0 categorical */
    const uint32_t *const *cat;   /* per attribute: codes[row] < ncat[a] (categorical), else NULL */
    const uint32_t *ncat;         /* per attribute: number of categories (0 for numeric) */
    const double *const *num;     /* per attribute: values[row] (numeric), else NULL */
    const uint32_t *label;        /* per row: class code < nlabels */
    uint32_t nlabels;
} ctree_data;

typedef struct ctree_params {
    uint32_t min_leaf; /* C4.5's -m: least rows in two branches of a split (0 means 2) */
    double cf;         /* C4.5's -c: pruning confidence in (0, 1), 0.25 by default; 0: no pruning */
} ctree_params;

/* C4.5's defaults: -m 2 -c 25%. */
#define CTREE_DEFAULTS ((ctree_params){2, 0.25})

typedef struct ctree ctree;

/* Grows (and prunes) a tree on rows[0..nrows) of d. */
int ctree_grow(const ctree_data *d, const uint32_t *rows, size_t nrows, const ctree_params *p, ctree **out /* OUT */,
               ak_error *err);
void ctree_free(ctree *t);

/* The class the tree gives row `row` of d. */
uint32_t ctree_classify(const ctree *t, const ctree_data *d, size_t row);

/* Leaves of the (pruned) tree; the root's attribute (UINT32_MAX when the
 * root is a leaf) and, for a numeric root, its threshold. */
size_t ctree_leaves(const ctree *t);
uint32_t ctree_root_attr(const ctree *t);
double ctree_root_threshold(const ctree *t);

/* Classification error: the tree grown on the rows with is_test[row] == 0,
 * measured on the rows with is_test[row] == 1. */
typedef struct class_error {
    size_t train_rows, test_rows;
    size_t errors;          /* misclassified test rows */
    double error;           /* errors / test_rows */
    size_t majority_errors; /* test rows whose class is not the training majority */
    size_t leaves;
} class_error;

/* Fails with ANONKIT_E_USAGE when there are no training or no testing rows. */
int metrics_class_error(const ctree_data *d, const unsigned char *is_test, const ctree_params *p,
                        class_error *out /* OUT */, ak_error *err);

#endif
