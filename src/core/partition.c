/* partition.c — storage of a partitioning: per-row class ids, per-class boxes. */
#include "core/partition.h"

#include <stdlib.h>
#include <string.h>

#include "common/hugemem.h"

int partition_init(partition *p, size_t nrows, uint32_t nqi, ak_error *err)
{
    memset(p, 0, sizeof *p);
    p->nqi = nqi;
    p->nrows = nrows;
    p->class_of = ak_huge_malloc((nrows ? nrows : 1) * sizeof *p->class_of);
    if (!p->class_of) return ak_err_nomem(err);
    return ANONKIT_OK;
}

void partition_free(partition *p)
{
    if (!p) return;
    free(p->class_of);
    free(p->lo);
    free(p->hi);
    free(p->rlo);
    free(p->rhi);
    free(p->count);
    free(p->node);
    memset(p, 0, sizeof *p);
}

/* Grows *codes to cap classes of nqi codes. */
static int grow_codes(uint32_t **codes, size_t cap, uint32_t nqi, ak_error *err)
{
    uint32_t *grown = ak_huge_realloc(*codes, (cap * nqi > 0 ? cap * nqi : 1) * sizeof *grown);
    if (!grown) return ak_err_nomem(err);
    *codes = grown;
    return ANONKIT_OK;
}

int partition_add_class(partition *p, const uint32_t *lo, const uint32_t *hi, uint64_t count,
                        uint32_t *id, ak_error *err)
{
    return partition_add_class_in(p, lo, hi, lo, hi, count, id, err);
}

int partition_add_class_in(partition *p, const uint32_t *lo, const uint32_t *hi, const uint32_t *rlo,
                           const uint32_t *rhi, uint64_t count, uint32_t *id, ak_error *err)
{
    if (p->nclasses == p->cap) AK_CHECK(partition_reserve(p, p->cap ? p->cap * 2 : 1024, err));
    size_t c = p->nclasses++;
    memcpy(p->lo + c * p->nqi, lo, p->nqi * sizeof *lo);
    memcpy(p->hi + c * p->nqi, hi, p->nqi * sizeof *hi);
    memcpy(p->rlo + c * p->nqi, rlo, p->nqi * sizeof *rlo);
    memcpy(p->rhi + c * p->nqi, rhi, p->nqi * sizeof *rhi);
    p->count[c] = count;
    *id = (uint32_t)c;
    return ANONKIT_OK;
}

int partition_reserve(partition *p, size_t classes, ak_error *err)
{
    if (classes <= p->cap) return ANONKIT_OK;
    AK_CHECK(grow_codes(&p->lo, classes, p->nqi, err));
    AK_CHECK(grow_codes(&p->hi, classes, p->nqi, err));
    AK_CHECK(grow_codes(&p->rlo, classes, p->nqi, err));
    AK_CHECK(grow_codes(&p->rhi, classes, p->nqi, err));
    if (p->node) AK_CHECK(grow_codes(&p->node, classes, p->nqi, err));
    uint64_t *ncount = realloc(p->count, classes * sizeof *ncount);
    if (!ncount) return ak_err_nomem(err);
    p->count = ncount;
    p->cap = classes;
    return ANONKIT_OK;
}

int partition_append(partition *p, const partition *src, ak_error *err)
{
    if (!src->nclasses) return ANONKIT_OK;
    if ((p->node != NULL) != (src->node != NULL) && p->nclasses)
        return ak_err_set(err, ANONKIT_E_INTERNAL, NULL, 0, 0, "partition: classes with and without nodes mixed");
    const size_t need = p->nclasses + src->nclasses;
    if (need > p->cap) { /* room for all at once */
        AK_CHECK(grow_codes(&p->lo, need, p->nqi, err));
        AK_CHECK(grow_codes(&p->hi, need, p->nqi, err));
        AK_CHECK(grow_codes(&p->rlo, need, p->nqi, err));
        AK_CHECK(grow_codes(&p->rhi, need, p->nqi, err));
        if (p->node) AK_CHECK(grow_codes(&p->node, need, p->nqi, err));
        uint64_t *ncount = realloc(p->count, need * sizeof *ncount);
        if (!ncount) return ak_err_nomem(err);
        p->count = ncount;
        p->cap = need;
    }
    if (src->node && !p->node) AK_CHECK(grow_codes(&p->node, p->cap, p->nqi, err));
    const size_t at = p->nclasses * p->nqi, codes = src->nclasses * src->nqi * sizeof *src->lo;
    memcpy(p->lo + at, src->lo, codes);
    memcpy(p->hi + at, src->hi, codes);
    memcpy(p->rlo + at, src->rlo, codes);
    memcpy(p->rhi + at, src->rhi, codes);
    if (src->node) memcpy(p->node + at, src->node, codes);
    memcpy(p->count + p->nclasses, src->count, src->nclasses * sizeof *src->count);
    p->nclasses = need;
    return ANONKIT_OK;
}

int partition_add_class_nodes(partition *p, const uint32_t *lo, const uint32_t *hi, const uint32_t *nodes,
                              uint64_t count, uint32_t *id, ak_error *err)
{
    if (!p->node && p->nclasses)
        return ak_err_set(err, ANONKIT_E_INTERNAL, NULL, 0, 0, "partition: classes with and without nodes mixed");
    AK_CHECK(partition_add_class_in(p, lo, hi, lo, hi, count, id, err));
    if (!p->node) AK_CHECK(grow_codes(&p->node, p->cap, p->nqi, err));
    memcpy(p->node + (size_t)*id * p->nqi, nodes, p->nqi * sizeof *nodes);
    return ANONKIT_OK;
}
