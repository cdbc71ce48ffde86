/* partition.h — the partitioning every algorithm produces (DESIGN.md §1 step 2, §3).
 *
 * class_of[row] names the equivalence class of every input row (or
 * PARTITION_SUPPRESSED). Each class has its row count and its box: per QI the
 * lowest and highest code among its rows, which the writer turns into a range
 * or a hierarchy label. */
#ifndef AK_PARTITION_H
#define AK_PARTITION_H

#include <stddef.h>
#include <stdint.h>

#include "core/error.h"

#define PARTITION_SUPPRESSED UINT32_MAX

typedef struct partition {
    uint32_t nqi;
    size_t nrows;
    uint32_t *class_of;  /* per row */
    size_t nclasses, cap;
    uint32_t *lo, *hi;   /* per class, nqi codes each: lo[c * nqi + q] */
    uint64_t *count;     /* rows per class */
    uint64_t suppressed; /* rows with class PARTITION_SUPPRESSED */
} partition;

int partition_init(partition *p, size_t nrows, uint32_t nqi, ak_error *err);
void partition_free(partition *p);
/* Appends a class with box [lo, hi] and returns its id in *id. */
int partition_add_class(partition *p, const uint32_t *lo, const uint32_t *hi, uint64_t count,
                        uint32_t *id /* OUT */, ak_error *err);
static inline const uint32_t *partition_lo(const partition *p, size_t c) { return p->lo + c * p->nqi; }
static inline const uint32_t *partition_hi(const partition *p, size_t c) { return p->hi + c * p->nqi; }

#endif
