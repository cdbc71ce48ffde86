/* rothko.h — out-of-core Mondrian within a memory budget: Rothko-T, exact
 * ([LeFevre07] §2), and Rothko-S, sampling-based ([LeFevre07] §3); the I/O model of [LeFevre07] §4. */
#ifndef AK_ROTHKO_H
#define AK_ROTHKO_H

#include <stddef.h>
#include <stdint.h>

#include "algo/mondrian/mondrian.h"
#include "common/error.h"
#include "core/partition.h"
#include "core/table.h"
#include "model/model.h"

typedef struct rothko_options {
    mdr_split split;     /* median or infogain; regression needs sampling */
    double min_gain;
    size_t memory;       /* the budget in bytes */
    unsigned fcache;     /* frequency groups held at once; 0: as many as the budget allows */
    size_t block;        /* bytes per read/write (0: 256 KiB) */
    const char *tmpdir;  /* folder of the unnamed spill files (NULL: $TMPDIR, /tmp) */
    unsigned threads;    /* for the in-memory Mondrian of leaf partitions */
    /* Rothko-S ([LeFevre07] §3) */
    int sampling;               /* 1: Rothko-S; 0: Rothko-T */
    sample_test_kind test;      /* hypothesis tests or the naive rule */
    double alpha;               /* significance of the tests (0: 0.05) */
    uint64_t sample_rows;       /* largest sample (0: as many rows as the budget holds) */
    uint32_t growth_depth;      /* repartition when the grown tree is this deep (0: when memory is full) */
    uint64_t seed;              /* of the reservoir samples */
    uint64_t pipeline_min_rows; /* partitions from which repartitioning takes two threads (0: RK_PIPE_MIN_ROWS) */
    uint64_t first_sample_rows; /* most rows each piece of the first scan keeps for the root's sample (0: as the
                                   budget allows; tests set it low to make the root sampled by a scan) */
    struct ak_progress *progress; /* common/progress.h (NULL: none): the first scan's reading, then the
                                     partitioning (rows counted by the leaf function's caller), repartition
                                     passes; the cancel flag is checked per block of every scan */
    int regions_only;             /* --rules: every class must have a region of its own, so rows with missing
                                     numbers that would wait for a class pooled across partitions (rk_leaf) are
                                     an error instead */
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
    unsigned first_scan_pieces;                   /* 2: the CSV was read in two pieces on two threads */
    double first_scan_seconds;                    /* wall time of the first scan */
    double sample_seconds, growth_seconds;        /* Rothko-S: wall time of the sample scans and growth phases */
    double repartition_seconds;                   /* wall time of the repartitioning scans */
    double in_memory_seconds;                     /* wall time of the partitions finished in memory, published */
    uint64_t partitions_in_memory;                /* leaf partitions finished by in-memory Mondrian */
    uint64_t spill_files_created;                 /* spill files created (the others were reused) */
    uint64_t rows_written;                        /* tuples written after the first scan (narrowed: blocks_written
                                                     x block / rows_written is the mean bytes a tuple took) */
    uint64_t sparse_sets;                         /* AV sets counted sparsely (range much wider than the rows) */
    uint64_t recounted_nodes;                     /* nodes scanned again to count QIs their first scan skipped */
    /* [LeFevre07] §4 */
    uint64_t model_height, model_repartitions, model_reads, model_writes;
    /* Rothko-S */
    uint64_t sample_rows;        /* n: the largest sample */
    int sampled_in_first_scan;   /* the root's sample was drawn while the input was read (no scan of its own) */
    uint64_t growth_phases;      /* samples grown into trees */
    uint64_t pruned_nodes;       /* nodes undone by pruning ([LeFevre07] Figure 4) */
    uint64_t no_confident_split; /* partitions larger than the sample that admitted no high-confidence split */
    uint64_t finished_by_rothko_t;  /* of these, finished exactly by Rothko-T (footnote 9) */
    uint64_t non_minimal;        /* of these, published as one class: possibly non-minimal ([LeFevre07] §3.2) */
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
 * Mondrian would (Rothko-T), or by growing trees on samples (Rothko-S), with
 * memory bounded by options->memory. On success *schema
 * holds the dictionaries (no rows) and every row has gone to leaf_fn once.
 * Spill files are removed whatever happens. */
int rothko_run(const table_spec *spec, const model *m, const rothko_options *options, rothko_leaf_fn leaf_fn,
               void *ctx, table **schema /* OUT */, rothko_stats *stats /* OUT */, ak_error *err);

/* repartitions_S(rows) of [LeFevre07] §4: the times Rothko-S repartitions the whole
 * table under k-anonymity with samples of tm rows (level alpha). */
uint64_t rothko_s_repartitions(uint64_t rows, uint64_t tm, uint64_t k, double alpha);

/* Parses "256M", "1G", "65536", "64K" into bytes; -1 on anything else. */
int rothko_parse_size(const char *text, size_t *out /* OUT */);

#endif
