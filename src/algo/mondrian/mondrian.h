/* mondrian.h — in-memory Mondrian, strict multidimensional partitioning with
 * the Median, InfoGain and Regression split criteria ([LeFevre07] §1.2; the ICDE 2006
 * slides in [LeFevre06]). */
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

typedef struct mdr_options {
    unsigned threads; /* 0 or 1: one thread */
    int no_simd;      /* 1: plain C box loops even where AVX2 is available (for tests) */
    mdr_split split;
    double min_gain;  /* InfoGain: below this gain (bits) a subtree continues with Median */
    /* A partition of a larger table (Rothko, [LeFevre07] §2.1): the region of its node
     * of the partition tree (NULL: the whole domain), and whether InfoGain gave
     * up above it. */
    const uint32_t *root_rlo, *root_rhi;
    int root_median_only;
    /* Rothko-S: grow a tree on a sample instead of judging splits by the
     * model (single-threaded; the whole-sample check is skipped). */
    const struct mdr_grow *grow; /* (mondrian_internal.h) */
    /* Progress and cancelling (common/progress.h; NULL: none): the rows of the
     * classes made are counted; a cancelled run fails with ANONKIT_E_CANCELLED. */
    struct ak_progress *progress;
} mdr_options;

/* Parses "median", "infogain" or "regression"; -1 on anything else. */
int mdr_parse_split(const char *text, mdr_split *out /* OUT */);
const char *mdr_split_name(mdr_split split);

/* Checks that the table holds what the model and the split criterion read. */
int mdr_check_inputs(const table *t, const model *m, const mdr_options *options, ak_error *err);

/* mdr_run with every option. */
int mdr_run_with(const table *t, const model *m, const mdr_options *options, partition *out, ak_error *err);

#endif
