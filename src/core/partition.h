/* partition.h — the partitioning every algorithm produces (docs/ARCHITECTURE.md §3 step 2, §4).
 *
 * class_of[row] names the equivalence class of every input row (or
 * PARTITION_SUPPRESSED). Each class has its row count and its box: per QI the
 * lowest and highest code among its rows, which the writer turns into a range
 * or a hierarchy label. A class made by recursive partitioning also has its
 * region: the code ranges of the part of the domain its leaf of the partition
 * tree covers ([LeFevre07] §1.2, Figure 2), which the recoding rules publish; the
 * regions of all classes cover the whole domain. A full-domain class
 * (Incognito) also names the hierarchy node of every QI, which the writer
 * publishes: a node with one child covers the same codes as its child, so the
 * box alone cannot tell the level. */
#ifndef AK_PARTITION_H
#define AK_PARTITION_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

#define PARTITION_SUPPRESSED UINT32_MAX

typedef struct partition {
    uint32_t nqi;
    size_t nrows;
    uint32_t *class_of;  /* per row */
    size_t nclasses, cap;
    uint32_t *lo, *hi;   /* per class, nqi codes each: lo[c * nqi + q] */
    uint32_t *rlo, *rhi; /* per class region, nqi codes each; the box when no region was given */
    uint64_t *count;     /* rows per class */
    uint64_t suppressed; /* rows with class PARTITION_SUPPRESSED */
    uint32_t *node;      /* per class, nqi hierarchy nodes (full-domain), or NULL */
} partition;

int partition_init(partition *p, size_t nrows, uint32_t nqi, ak_error *err);
void partition_free(partition *p);
/* Appends a class with box [lo, hi] and returns its id in *id. */
int partition_add_class(partition *p, const uint32_t *lo, const uint32_t *hi, uint64_t count,
                        uint32_t *id /* OUT */, ak_error *err);
/* The same with the class's region [rlo, rhi]. */
int partition_add_class_in(partition *p, const uint32_t *lo, const uint32_t *hi, const uint32_t *rlo,
                           const uint32_t *rhi, uint64_t count, uint32_t *id /* OUT */, ak_error *err);
/* Makes room for `classes` classes in all (an estimate: more still fit), so
 * that adding them moves nothing. */
int partition_reserve(partition *p, size_t classes, ak_error *err);
/* Appends every class of src (boxes, regions, counts, nodes when both have
 * them) after p's, in order: src's class c becomes p's class nclasses + c. */
int partition_append(partition *p, const partition *src, ak_error *err);
/* The same with the hierarchy node of every QI; a partitioning holds either
 * only classes with nodes or none. */
int partition_add_class_nodes(partition *p, const uint32_t *lo, const uint32_t *hi, const uint32_t *nodes,
                              uint64_t count, uint32_t *id /* OUT */, ak_error *err);
static inline const uint32_t *partition_lo(const partition *p, size_t c) { return p->lo + c * p->nqi; }
static inline const uint32_t *partition_hi(const partition *p, size_t c) { return p->hi + c * p->nqi; }
static inline const uint32_t *partition_rlo(const partition *p, size_t c) { return p->rlo + c * p->nqi; }
static inline const uint32_t *partition_rhi(const partition *p, size_t c) { return p->rhi + c * p->nqi; }

#endif
