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

/* Sums buf[0..n) over every shard, in place; 0, or a negative status with err
 * filled. Called by every shard with the same n, in the same order. */
typedef int (*mdr_dist_reduce_fn)(void *ctx, uint64_t *buf, size_t n, ak_error *err);

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
    uint64_t levels;        /* reductions made (one per tree level) */
    uint64_t words_reduced; /* 64-bit counts summed, over all reductions */
    uint64_t nodes_split;
} mdr_dist_result;

/* Splits breadth-first, every open node of a level counted in one reduction,
 * until each node has at most finish_rows rows (or no allowable split).
 * t holds this shard's rows with the global dictionaries (its nrows may be
 * 0). Fails with ANONKIT_E_INELIGIBLE when the whole table does not satisfy
 * m, alike on every shard. */
int mdr_dist_partition(const table *t, const model *m, const mdr_options *o, uint64_t finish_rows,
                       mdr_dist_reduce_fn reduce, void *reduce_ctx, mdr_dist_result *out /* OUT */, ak_error *err);
void mdr_dist_result_free(mdr_dist_result *r);

#endif
