/* publish.h — the one writer for all algorithms (DESIGN.md §1 step 3). */
#ifndef AK_PUBLISH_H
#define AK_PUBLISH_H

#include <stdint.h>
#include <stdio.h>

#include "core/error.h"
#include "core/partition.h"
#include "core/recode.h"
#include "core/table.h"

typedef struct publish_opts {
    int keep_order;      /* 0: rows are shuffled with `seed` (row order can re-identify) */
    uint64_t seed;
    int drop_suppressed; /* suppressed rows: 1 dropped, 0 written with "*" in every QI */
    unsigned threads;    /* > 1: rows are composed by two threads */
    recode_style style;  /* generalized values, or the range or mean statistic */
    const double *means; /* RECODE_MEAN: the class means (recode_class_means) */
} publish_opts;

typedef struct publish_stats {
    uint64_t published;  /* rows of classes written (suppressed rows not included) */
    uint64_t suppressed; /* rows of suppressed classes */
} publish_stats;

/* Re-reads t's input and writes it to out with every QI replaced by its
 * class's published value, identifier columns dropped and all other columns
 * copied through. */
int publish_write(const table *t, const partition *p, const publish_opts *opts, FILE *out,
                  const char *out_name, publish_stats *stats /* OUT */, ak_error *err);

#endif
