/* mondrian_dist.h — the upper levels of the Mondrian partition tree chosen
 * from frequency groups summed across the shards of a table that several
 * processes hold ([LeFevre07] §2: AV, AVS and AVC sets; docs/distributed.md).
 * Nothing here knows how the shards talk to one another: the caller passes a
 * reduce callback that sums an array of counts over every shard in place (the
 * MPI driver, src/mpi/, passes MPI_Allreduce). Every shard calls
 * mdr_dist_partition with its own rows and the same schema and options, and
 * every shard gets the same tree, because every split is chosen by the family's
 * one scorer (split_choose.h) from the same summed counts. */
#ifndef AK_MONDRIAN_DIST_H
#define AK_MONDRIAN_DIST_H

#include <stddef.h>
#include <stdint.h>

#include "algo/mondrian/mondrian.h"
#include "common/error.h"
#include "core/table.h"
#include "model/model.h"

/* Combines buf[0..n) over every shard, in place, by op: MDR_DIST_SUM adds,
 * MDR_DIST_MIN takes the least; 0, or a negative status with err filled.
 * Called by every shard with the same n and op, in the same order. */
enum { MDR_DIST_SUM = 0, MDR_DIST_MIN = 1 };
typedef int (*mdr_dist_reduce_fn)(void *ctx, uint64_t *buf, size_t n, int op, ak_error *err);

/* A node left for the in-memory Mondrian: its region, its global rows, and
 * whether InfoGain gave up above it. */
typedef struct mdr_dist_leaf {
    uint32_t *rlo, *rhi; /* d codes each */
    uint64_t rows;
    int median_only;
} mdr_dist_leaf;

typedef struct mdr_dist_result {
    mdr_dist_leaf *leaves;
    size_t nleaves;
    uint32_t *leaf_of;      /* per local row: its leaf */
    uint64_t levels;        /* tree levels reduced */
    uint64_t words_reduced; /* 64-bit words combined, over all reductions (boxes and frequency groups) */
    uint64_t recounted;     /* nodes counted again in full (Median reached a QI its first count skipped) */
    uint64_t nodes_split;
} mdr_dist_result;

/* Splits breadth-first, every open node of a level at once: one MIN reduction
 * gives every node's box, one SUM reduction the frequency groups of the QIs
 * its split is chosen from (InfoGain: all; Median: the two widest and the
 * narrow ones, and all in a second round for the rare node that needs more),
 * until each node has at most finish_rows rows (or no allowable split).
 * t holds this shard's rows with the global dictionaries (its nrows may be
 * 0). Fails with ANONKIT_E_INELIGIBLE when the whole table does not satisfy
 * m, alike on every shard. */
int mdr_dist_partition(const table *t, const model *m, const mdr_options *o, uint64_t finish_rows,
                       mdr_dist_reduce_fn reduce, void *reduce_ctx, mdr_dist_result *out /* OUT */, ak_error *err);
void mdr_dist_result_free(mdr_dist_result *r);

#endif
