/* risk_groups_internal.h — what the two files of the grouping of `anonkit
 * risk` share (src/metrics/risk_groups.c reads the rows into buckets,
 * src/metrics/risk_groups_group.c groups the buckets into classes); rg_
 * prefix. Not part of any other layer's interface. */
#ifndef AK_METRICS_RISK_GROUPS_INTERNAL_H
#define AK_METRICS_RISK_GROUPS_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "common/error.h"
#include "common/hash.h"
#include "io/csv.h"
#include "metrics/risk_groups.h"

/* A class of the front table (and, in the wide form, one row of a bucket):
 * the hash of its key and its row in its piece. */
typedef struct rg_entry {
    uint64_t lo, hi;
    uint32_t row;   /* (of a class from the front table: its first row) */
    uint32_t count; /* rows it stands for: 1, or a front table class's size */
} rg_entry;

#define RG_WORDS 510     /* 64-bit words of entries per block: a block is 4 KiB */
#define RG_SLAB 2048     /* blocks per allocation (8 MiB) */
#define RG_MAX_BITS 6    /* at most 64 buckets: an append writes to one of the open blocks, and more of them
                            than the first-level TLB and cache hold make appends miss (docs/risk.md §9) */
#define RG_BUCKET_ROWS 32768 /* below that many rows per bucket, no more buckets */
#define RG_FRONT_BITS 15 /* front table slots at most (24 bytes each) */
#define RG_FRONT_MIN_BITS 10 /* and at first: it doubles when half full, so that few classes keep it small
                                enough for the L1 and L2 caches while the file streams through them */
#define RG_FRONT_MAX ((((uint32_t)1 << RG_FRONT_BITS) - 1) / 2) /* classes it holds at most */
#define RG_FRONT_WINDOW 65536
#define RG_PARALLEL_MIN_BYTES (8u << 20)
#define RG_AHEAD 16      /* entries between a grouping table's slot asked for and probed */

/* Entries of a bucket, each of `stride` words: the hash (lo, hi) and, in the
 * wide form (stride 3), the row and the rows it stands for (row | count << 32). */
typedef struct rg_block {
    struct rg_block *next;
    uint32_t count;
    uint64_t w[RG_WORDS];
} rg_block;

typedef struct rg_slab {
    struct rg_slab *next;
    rg_block blocks[RG_SLAB];
} rg_slab;

/* One piece of the file read on its own: its rows, bucketed. */
typedef struct rg_part {
    const risk_group_params *p;
    csv_reader *reader;    /* opened by rg_part_run unless given (the sequential read, past the header) */
    uint64_t offset, length;
    const uint32_t *cols;  /* the QIs' columns, in the QIs' order */
    const uint32_t *hcols; /* the columns the key is made of, in this order (key_hash): cols in file
                              order, unless a population table is read with the same keys */
    uint32_t ncolumns;
    int weight_col;
    int consecutive;       /* hcols are consecutive columns in order (key_hash) */
    unsigned bits;         /* buckets: 1 << bits */
    rg_block **head, **tail;
    uint32_t *fill;        /* per bucket: entries in its tail block */
    uint64_t *total;       /* per bucket: its entries (those of the tail block added at the end) */
    unsigned stride;       /* words per bucket entry: 2 (the narrow form: no order, no weights), else 3 */
    uint32_t block_entries; /* entries per block: RG_WORDS / stride */
    rg_entry *fl;          /* the narrow form: the front table's classes, by bucket (NULL: none) */
    uint32_t *fl_start;    /* bucket b's are fl[fl_start[b] .. fl_start[b + 1]) */
    rg_entry *front;       /* the front table: the first classes met, counted in place (NULL: none) */
    size_t front_mask;     /* its slots - 1 */
    uint32_t front_count;
    uint32_t front_seen, front_misses; /* rows since the last look, and those that missed it (front_watch) */
    int no_front;          /* the second piece with weights: their sums must be made row by row, in file
                              order, to come out as the sequential read makes them */
    rg_slab *slabs;
    size_t slab_used;
    double *weights;       /* per row of the piece (with a weight column) */
    size_t weights_cap;
    risk_groups *g;        /* the sequential read keeps the codes (SUDA2) here */
    strmap *values;
    uint64_t rows;
    long lines;
    int quoted;
    int rc;
    ak_error err;
} rg_part;

/* The classes as grouped (in bucket order), before they are ordered. */
typedef struct rg_classes {
    size_t n;
    uint32_t *first;        /* first row (when the classes are to be ordered) */
    uint64_t *size;         /* rows */
    double *weight;         /* with a weight column */
    uint64_t *lo, *hi;      /* the key hashes, kept for a population table */
    uint32_t star;          /* the class of the all-"*" key, or AK_NOT_FOUND */
} rg_classes;

/* The bucket of a hash: its bits 52 .. 52 + bits - 1 (from the high half). */
static inline uint32_t rg_bucket_of(uint64_t hi, uint32_t nb)
{
    return (uint32_t)(hi >> 52) & (nb - 1);
}

void rg_classes_free(rg_classes *c);

/* Groups the buckets of the pieces into c (the first rows kept when
 * ordered, the weights when weighted, the hashes when keep_hashes; c->star
 * the class of the hash star). */
int rg_group_buckets(const rg_part *parts, unsigned nparts, uint64_t rows, unsigned threads, int ordered, int weighted,
                     int keep_hashes, XXH128_hash_t star, rg_classes *c, ak_error *err);

/* order[0 .. c->n): the classes by their first rows. */
int rg_order_classes(const rg_classes *c, uint64_t rows, uint32_t **order, ak_error *err);

/* The hash of the key of n consecutive fields f[0 .. n) when the reader has
 * met no quoted field: its fast path then made every field of the record, a
 * slice of its buffer right after the previous field and its delimiter
 * (src/io/csv.c, parse_record), so the bytes from the first field to the end
 * of the last are the texts joined by the delimiter, rg_key_hash's plain key. */
static inline XXH128_hash_t rg_key_span_hash(const csv_field *f, size_t n)
{
    return XXH3_128bits_withSeed(f[0].data, (size_t)(f[n - 1].data + f[n - 1].len - f[0].data), 0);
}

/* The 128-bit hash of a key of n fields fields[cols[q]] (fields[q] without
 * cols), in *buf when it must be copied (risk_groups.c). Returns 0 or -1 (no
 * memory). */
int rg_key_hash(const csv_field *fields, const uint32_t *cols, size_t n, char delim, int consecutive, int quoted,
                char **buf, size_t *cap, XXH128_hash_t *h);

/* Whether cols are consecutive columns in order (rg_key_hash's no-copy case). */
int rg_consecutive_columns(const uint32_t *cols, size_t n);

/* A small file's rows (after the header, read by reader) grouped straight
 * into classes in the order of their first rows (risk_groups_direct.c);
 * `size` is the file's size in bytes. With `scan` the rows are read by the
 * block scan (the reader, then, may have been opened on the header alone:
 * rg_header_end), the CSV reader taking over from the first line that is
 * not a plain one; else by reader. */
int rg_read_direct(csv_reader *reader, const risk_group_params *p, const uint32_t *hcols, uint32_t ncolumns,
                   int weight_col, XXH128_hash_t star, uint64_t size, int scan, rg_classes *c, uint64_t *rows_out,
                   ak_error *err);

/* The byte after the header of path when it is a plain line (an LF in the
 * first 4 KiB, no quote before it, not empty), else 0: the header can then be read by
 * a reader of that range alone, which touches a page of its 1 MiB buffer
 * instead of filling it. */
uint64_t rg_header_end(const char *path);

#endif
