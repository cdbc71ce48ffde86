/* local_internal.h — what the files of local recoding share (local.c,
 * local_split.c): the top-down split search over the rows of an inc_ctx. */
#ifndef AK_LOCAL_INTERNAL_H
#define AK_LOCAL_INTERNAL_H

#include "algo/incognito/inc_internal.h"

typedef struct inc_local_split_stats {
    uint64_t tasks;   /* classes examined */
    uint64_t splits;  /* of them split */
    uint64_t classes; /* published */
} inc_local_split_stats;

/* Local recoding of the rows of c (c->nrows, c->code0, c->sens) by top-down
 * splits from the top of every hierarchy (local_split.c): every row gets a
 * class of p (partition.node: its hierarchy node per QI) that satisfies c->m
 * when the whole table does; otherwise every row stays suppressed. */
int inc_local_split(inc_ctx *c, const double *w, partition *p, inc_local_split_stats *st /* OUT */, ak_error *err);

#endif
