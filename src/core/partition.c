/* partition.c — storage of a partitioning: per-row class ids, per-class boxes. */
#include "core/partition.h"

#include <stdlib.h>
#include <string.h>

int partition_init(partition *p, size_t nrows, uint32_t nqi, ak_error *err)
{
    memset(p, 0, sizeof *p);
    p->nqi = nqi;
    p->nrows = nrows;
    p->class_of = malloc((nrows ? nrows : 1) * sizeof *p->class_of);
    if (!p->class_of) return ak_err_nomem(err);
    return ANONKIT_OK;
}

void partition_free(partition *p)
{
    if (!p) return;
    free(p->class_of);
    free(p->lo);
    free(p->hi);
    free(p->count);
    memset(p, 0, sizeof *p);
}

int partition_add_class(partition *p, const uint32_t *lo, const uint32_t *hi, uint64_t count,
                        uint32_t *id, ak_error *err)
{
    if (p->nclasses == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 1024;
        uint32_t *nlo = realloc(p->lo, cap * p->nqi * sizeof *nlo);
        if (!nlo) return ak_err_nomem(err);
        p->lo = nlo;
        uint32_t *nhi = realloc(p->hi, cap * p->nqi * sizeof *nhi);
        if (!nhi) return ak_err_nomem(err);
        p->hi = nhi;
        uint64_t *ncount = realloc(p->count, cap * sizeof *ncount);
        if (!ncount) return ak_err_nomem(err);
        p->count = ncount;
        p->cap = cap;
    }
    size_t c = p->nclasses++;
    memcpy(p->lo + c * p->nqi, lo, p->nqi * sizeof *lo);
    memcpy(p->hi + c * p->nqi, hi, p->nqi * sizeof *hi);
    p->count[c] = count;
    *id = (uint32_t)c;
    return ANONKIT_OK;
}
