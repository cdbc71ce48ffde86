/* publish.h — the one writer for all algorithms (docs/ARCHITECTURE.md §3 step 3). */
#ifndef AK_PUBLISH_H
#define AK_PUBLISH_H

#include <stdint.h>
#include <stdio.h>

#include "common/error.h"
#include "core/partition.h"
#include "core/recode.h"
#include "core/table.h"

typedef struct publish_copied publish_copied;

typedef struct publish_opts {
    int keep_order;      /* 0: rows are shuffled with `seed` (row order can re-identify) */
    uint64_t seed;
    int drop_suppressed; /* suppressed rows: 1 dropped, 0 written with "*" in every QI */
    unsigned threads;    /* > 1: rows are composed by two threads */
    recode_style style;  /* generalized values, or the range or mean statistic */
    const double *means; /* RECODE_MEAN: the class means (recode_class_means) */
    publish_copied *copied; /* the copied columns read ahead (publish_copied_start), or NULL */
    struct ak_progress *progress; /* publish_write: rows written counted per block, cancel checked (NULL: none) */
} publish_opts;

typedef struct publish_stats {
    uint64_t published;  /* rows of classes written (suppressed rows not included) */
    uint64_t suppressed; /* rows of suppressed classes */
} publish_stats;

/* Re-reads t's input and writes it to out with every QI replaced by its
 * class's published value, identifier columns dropped and all other columns
 * copied through. With opts->copied, the columns copied through are those it
 * read ahead (it waits for them; they are used only for shuffled output). */
int publish_write(const table *t, const partition *p, const publish_opts *opts, FILE *out,
                  const char *out_name, publish_stats *stats /* OUT */, ak_error *err);

/* publish_write's table in memory instead of CSV text (table_out.c), for an
 * input that is a table in memory (t->mem): the same rows in the same order,
 * the same columns and values, built column by column into a new table
 * (*out, the caller's): QI columns in dictionary form, copied columns
 * gathered from t->mem with their own types; kinds as the "table:" sink
 * gives the published CSV (io/memtable.h). */
struct anonkit_table;
int publish_table(const table *t, const partition *p, const publish_opts *opts, struct anonkit_table **out /* OUT */,
                  publish_stats *stats /* OUT */, ak_error *err);

/* Starts reading t's columns that publish_write copies through on a thread of
 * its own, so that the reading overlaps other work (the algorithm, on the
 * other core). Only worth it for shuffled output, which holds them anyway;
 * *out is NULL (and nothing is started) when t has no such column. */
int publish_copied_start(publish_copied **out /* OUT */, const table *t, ak_error *err);
/* Waits for the reading (when still running) and frees what it read; NULL is fine. */
void publish_copied_free(publish_copied *c);

/* The same output written partition by partition (out-of-core runs): the
 * header from the schema on open, then each partition's rows — a view table
 * sharing the schema's dictionaries, its classes, and the copied fields of its
 * rows already escaped (row r's field j at copied[copied_off[r * ncopied + j]
 * .. copied_off[r * ncopied + j + 1]), ncopied being the columns that are
 * neither QI nor identifier) — shuffled within the partition unless order is
 * kept. */
typedef struct publish_stream publish_stream;
int publish_stream_open(publish_stream **out /* OUT */, const table *schema, const publish_opts *opts, FILE *stream,
                        const char *out_name, ak_error *err);
int publish_stream_part(publish_stream *ps, const table *view, const partition *p, const double *means,
                        const char *copied, const size_t *copied_off, ak_error *err);
int publish_stream_close(publish_stream *ps, publish_stats *stats /* OUT */, ak_error *err);
void publish_stream_free(publish_stream *ps);

#endif
