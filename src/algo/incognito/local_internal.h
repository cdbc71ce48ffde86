/* local_internal.h — what the files of local recoding share (local.c,
 * local_split.c): the top-down split search over the rows of an inc_ctx. */
#ifndef AK_LOCAL_INTERNAL_H
#define AK_LOCAL_INTERNAL_H

#include "algo/incognito/inc_internal.h"

typedef struct inc_local_split_stats {
    uint64_t tasks;   /* classes examined */
    uint64_t splits;  /* of them split */
    uint64_t classes; /* published */
    uint64_t passes;
} inc_local_split_stats;

/* Local recoding of the rows of c (c->nrows, c->code0, c->sens) by top-down
 * splits from the top of every hierarchy (local_split.c): every row gets a
 * class of p (partition.node: its hierarchy node per QI) that satisfies
 * c->m, or stays suppressed when the whole table does not. */
int inc_local_split(inc_ctx *c, const double *w, partition *p, inc_local_split_stats *st /* OUT */, ak_error *err);

/* The split search as a tool: over the rows of c as they are when created
 * (c->nrows at most), publishing into p. inc_split_class splits the class of
 * rows[0..n) (rows of c, all with the labels of levels lv) and publishes its
 * parts; map[r]: the table row of c's row r (NULL: the same). */
typedef struct inc_split inc_split;
int inc_split_new(inc_ctx *c, const double *w, partition *p, inc_split **out /* OUT */, ak_error *err);
void inc_split_free(inc_split *s);
int inc_split_class(inc_split *s, const uint32_t *rows, size_t n, uint64_t lv, const size_t *map, ak_error *err);
const inc_local_split_stats *inc_split_stats(const inc_split *s);

#endif
