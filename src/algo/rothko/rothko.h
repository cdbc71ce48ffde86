/* rothko.h — Rothko-T: exact out-of-core Mondrian within a memory budget
 * (000 §2; the I/O model of 000 §4). */
#ifndef AK_ROTHKO_H
#define AK_ROTHKO_H

#include <stddef.h>
#include <stdint.h>

#include "algo/mondrian/mondrian.h"
#include "core/error.h"
#include "core/partition.h"
#include "core/table.h"
#include "model/model.h"

typedef struct rothko_options {
    mdr_split split;     /* median or infogain (regression needs Rothko-S) */
    double min_gain;
    size_t memory;       /* the budget in bytes */
    unsigned fcache;     /* frequency groups held at once; 0: as many as the budget allows */
    size_t block;        /* bytes per read/write (0: 256 KiB) */
    const char *tmpdir;  /* parent of the private spill folder (NULL: $TMPDIR, /tmp) */
    unsigned threads;    /* for the in-memory Mondrian of leaf partitions */
    volatile char *spill_notice; /* when not NULL: the spill folder's path while it exists */
    size_t spill_notice_size;
} rothko_options;

typedef struct rothko_stats {
    uint64_t rows;
    uint64_t tm_rows;            /* TM: rows of a partition finished in memory */
    unsigned fcache;             /* the most frequency groups held at once */
    uint64_t scans;              /* scans of disk-resident partitions (frequency groups or repartitioning) */
    uint64_t repartitions;       /* scans that wrote child partitions */
    uint64_t data_blocks;        /* |R|: blocks of the tuple data */
    uint64_t blocks_read, blocks_written;         /* tuple files, after the first scan */
    uint64_t payload_blocks_read, payload_blocks_written; /* copied columns that travel with the tuples */
    uint64_t first_scan_blocks_written;           /* the CSV turned into the root spill file */
    uint64_t partitions_in_memory;                /* leaf partitions finished by in-memory Mondrian */
    uint64_t rows_written;                        /* tuples written after the first scan (narrowed: blocks_written
                                                     x block / rows_written is the mean bytes a tuple took) */
    uint64_t sparse_sets;                         /* AV sets counted sparsely (range much wider than the rows) */
    uint64_t recounted_nodes;                     /* nodes scanned again to count QIs their first scan skipped */
    /* 000 §4 */
    uint64_t model_height, model_repartitions, model_reads, model_writes;
} rothko_stats;

/* Receives the finished partitions in depth-first order of the partition
 * tree. `view` is a table sharing the schema's dictionaries whose rows are the
 * partition's (codes final), `classes` its classes and class_of; the copied
 * (non-QI, non-identifier) fields of row r, escaped for output, are
 * copied[copied_off[r * ncopied + j] .. copied_off[r * ncopied + j + 1]).
 * A class larger than memory arrives in several calls: `continued` is 1 on
 * every call after its first, whose classes->count already holds the whole
 * class. */
typedef int (*rothko_leaf_fn)(void *ctx, const table *view, const partition *classes, const char *copied,
                              const size_t *copied_off, int continued, ak_error *err);

/* Reads the input of spec into a spill file, then partitions it as in-memory
 * Mondrian would, with memory bounded by options->memory. On success *schema
 * holds the dictionaries (no rows) and every row has gone to leaf_fn once.
 * Spill files are removed whatever happens. */
int rothko_run(const table_spec *spec, const model *m, const rothko_options *options, rothko_leaf_fn leaf_fn,
               void *ctx, table **schema /* OUT */, rothko_stats *stats /* OUT */, ak_error *err);

/* Parses "256M", "1G", "65536", "64K" into bytes; -1 on anything else. */
int rothko_parse_size(const char *text, size_t *out /* OUT */);

#endif
