/* mondrian.h — in-memory Mondrian, median split, strict multidimensional
 * partitioning (000 §1.2; the ICDE 2006 slides in 003). */
#ifndef AK_MONDRIAN_H
#define AK_MONDRIAN_H

#include "core/error.h"
#include "core/partition.h"
#include "core/table.h"
#include "model/model.h"

/* Partitions table t greedily until no allowable split remains, filling out
 * (initialized by the caller with partition_init). Up to `threads` threads
 * work on disjoint subtrees; the result is the same for any thread count.
 * Fails with ANONKIT_E_INELIGIBLE when the whole table does not satisfy m. */
int mdr_run(const table *t, const model *m, unsigned threads, partition *out, ak_error *err);

typedef struct mdr_options {
    unsigned threads; /* 0 or 1: one thread */
    int no_simd;      /* 1: plain C box loops even where AVX2 is available (for tests) */
} mdr_options;

/* mdr_run with every option. */
int mdr_run_with(const table *t, const model *m, const mdr_options *options, partition *out, ak_error *err);

#endif
