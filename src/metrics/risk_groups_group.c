/* risk_groups_group.c — the second half of the grouping of `anonkit risk`
 * (risk_groups.c, docs/risk.md §9): the buckets of hashes the reading made
 * are grouped into classes, each bucket on its own in a linear-probing
 * table keyed by the full 128-bit hash (the buckets in two halves on two
 * threads), and the classes put in the order of their first rows. */
#include "metrics/risk_groups_internal.h"

#include <stdlib.h>
#include <string.h>

#include "common/parallel.h"


void rg_classes_free(rg_classes *c)
{
    free(c->first);
    free(c->size);
    free(c->weight);
    free(c->lo);
    free(c->hi);
}

/* Buckets [b0, b1) of the pieces grouped into classes base, base + 1, ...
 * of the shared arrays (one thread's share of rg_group_buckets). */
typedef struct rg_group_job {
    const rg_part *parts;
    unsigned nparts;
    uint32_t b0, b1;
    int weighted, keep_hashes;
    XXH128_hash_t star;
    rg_classes *c;
    size_t base, n;   /* its classes: c's base .. base + n - 1 */
    uint32_t star_id; /* the all-"*" key's class, or AK_NOT_FOUND */
    int rc;
} rg_group_job;

static size_t bucket_entries(const rg_part *parts, unsigned nparts, uint32_t b)
{
    size_t count = 0;
    for (unsigned i = 0; i < nparts; i++) {
        if (parts[i].fl) count += parts[i].fl_start[b + 1] - parts[i].fl_start[b];
        count += parts[i].total[b];
    }
    return count;
}

/* One bucket's grouping: a linear-probing table of its classes by hash
 * (ids + 1; 0: empty) and the classes' hashes, first rows, sizes and weights. */
typedef struct rg_bucket_table {
    uint32_t *slot;
    size_t mask;
    uint64_t *lo, *hi;
    uint32_t *first; /* NULL: no order wanted */
    uint64_t *size;
    double *weight;  /* NULL: no weights */
    uint32_t n;
} rg_bucket_table;

/* Adds an entry (count rows of the class of hash (lo, hi), the first of them
 * at `row`, weight w) to the bucket's table. The first entry met holds the
 * first row: a piece's entries of a class come in the order of its rows. */
static inline void group_add(rg_bucket_table *t, uint64_t lo, uint64_t hi, uint32_t row, uint32_t count, double w)
{
    size_t s = (size_t)lo & t->mask;
    uint32_t id;
    for (;;) {
        id = t->slot[s];
        if (!id) {
            t->slot[s] = ++t->n;
            id = t->n - 1;
            t->lo[id] = lo;
            t->hi[id] = hi;
            if (t->first) t->first[id] = row;
            t->size[id] = 0;
            if (t->weight) t->weight[id] = 0;
            break;
        }
        if (t->lo[--id] == lo && t->hi[id] == hi) {
            if (t->first && row < t->first[id]) t->first[id] = row;
            break;
        }
        s = (s + 1) & t->mask;
    }
    t->size[id] += count;
    if (t->weight) t->weight[id] += w;
}

/* Groups each bucket of a job in a linear-probing table of the bucket's
 * classes, small enough for the cache, keyed by the full 128-bit hash; the
 * entries come piece by piece, each piece's in the order of its rows. */
static void *group_range(void *arg)
{
    rg_group_job *job = arg;
    const rg_part *parts = job->parts;
    rg_classes *c = job->c;
    const int weighted = job->weighted;
    uint32_t *table = NULL;
    uint64_t *llo = NULL, *lhi = NULL;
    size_t table_cap = 0, local_cap = 0;
    job->rc = ANONKIT_OK;
    job->n = 0;
    job->star_id = AK_NOT_FOUND;
    for (uint32_t b = job->b0; b < job->b1; b++) {
        const size_t count = bucket_entries(parts, job->nparts, b);
        if (!count) continue;
        size_t cap = 16;
        while (cap < 2 * count) cap *= 2;
        if (cap > table_cap) {
            free(table);
            if (!(table = malloc(cap * sizeof *table))) {
                job->rc = ANONKIT_E_NOMEM;
                break;
            }
            table_cap = cap;
        }
        if (count > local_cap) {
            free(llo);
            free(lhi);
            llo = malloc(count * sizeof *llo);
            lhi = malloc(count * sizeof *lhi);
            if (!llo || !lhi) {
                job->rc = ANONKIT_E_NOMEM;
                break;
            }
            local_cap = count;
        }
        memset(table, 0, cap * sizeof *table);
        const size_t mask = cap - 1, base = job->base + job->n;
        uint32_t *first = c->first ? c->first + base : NULL;
        uint64_t *size = c->size + base;
        double *weight = weighted ? c->weight + base : NULL;
        rg_bucket_table t = {table, mask, llo, lhi, first, size, weight, 0};
        uint64_t row_base = 0;
        for (unsigned i = 0; i < job->nparts; row_base += parts[i].rows, i++) {
            const rg_part *pt = &parts[i];
            if (pt->fl)
                for (uint32_t j = pt->fl_start[b]; j < pt->fl_start[b + 1]; j++)
                    group_add(&t, pt->fl[j].lo, pt->fl[j].hi, 0, pt->fl[j].count, 0);
            if (pt->stride == 2) {
                /* the slot of the entry RG_AHEAD places on is asked for early: a bucket's
                 * table is larger than the L2 cache when the classes are many */
                for (const rg_block *k = pt->head[b]; k; k = k->next)
                    for (uint32_t j = 0; j < k->count; j++) {
                        if (j + RG_AHEAD < k->count) __builtin_prefetch(&t.slot[k->w[2 * (j + RG_AHEAD)] & t.mask]);
                        group_add(&t, k->w[2 * j], k->w[2 * j + 1], 0, 1, 0);
                    }
                continue;
            }
            for (const rg_block *k = pt->head[b]; k; k = k->next)
                for (uint32_t j = 0; j < k->count; j++) {
                    const uint64_t *d = &k->w[3 * j];
                    const uint32_t row = (uint32_t)d[2];
                    group_add(&t, d[0], d[1], (uint32_t)(row_base + row), (uint32_t)(d[2] >> 32),
                              weighted ? pt->weights[row] : 0);
                }
        }
        const uint32_t nloc = t.n;
        for (uint32_t id = 0; id < nloc; id++)
            if (llo[id] == job->star.low64 && lhi[id] == job->star.high64) job->star_id = (uint32_t)(base + id);
        if (job->keep_hashes) {
            memcpy(c->lo + base, llo, nloc * sizeof *llo);
            memcpy(c->hi + base, lhi, nloc * sizeof *lhi);
        }
        job->n += nloc;
    }
    free(table);
    free(llo);
    free(lhi);
    return NULL;
}

/* Groups the buckets of the pieces into c, in two halves on two threads
 * when there are threads and rows enough: the second half's classes are
 * made from the place its entries could reach at most, then moved down. */
int rg_group_buckets(const rg_part *parts, unsigned nparts, uint64_t rows, unsigned threads, int ordered, int weighted,
                     int keep_hashes, XXH128_hash_t star, rg_classes *c, ak_error *err)
{
    const size_t alloc = rows ? (size_t)rows : 1;
    c->star = AK_NOT_FOUND;
    if ((ordered && !(c->first = malloc(alloc * sizeof *c->first))) ||
        !(c->size = malloc(alloc * sizeof *c->size)) ||
        (weighted && !(c->weight = malloc(alloc * sizeof *c->weight))) ||
        (keep_hashes && (!(c->lo = malloc(alloc * sizeof *c->lo)) || !(c->hi = malloc(alloc * sizeof *c->hi)))))
        return ak_err_nomem(err);
    const uint32_t nb = 1u << parts[0].bits;
    rg_group_job jobs[2];
    for (unsigned t = 0; t < 2; t++)
        jobs[t] = (rg_group_job){parts, nparts, 0, nb, weighted, keep_hashes, star, c, 0, 0, AK_NOT_FOUND, 0};
    unsigned njobs = 1;
    if (threads > 1 && nb > 1 && rows >= 4 * RG_BUCKET_ROWS) {
        /* the cut: the first bucket at which half the entries are passed */
        size_t seen = 0;
        uint32_t b = 0;
        while (b < nb && seen < rows / 2) seen += bucket_entries(parts, nparts, b++);
        if (b < nb) {
            jobs[0].b1 = jobs[1].b0 = b;
            jobs[1].base = seen;
            njobs = 2;
        }
    }
    ak_run_parts(jobs, sizeof *jobs, njobs, group_range);
    for (unsigned t = 0; t < njobs; t++)
        if (jobs[t].rc < 0) return ak_err_nomem(err);
    c->n = jobs[0].n;
    c->star = jobs[0].star_id;
    if (njobs == 2) {
        const size_t from = jobs[1].base, n = jobs[1].n;
        if (ordered) memmove(c->first + c->n, c->first + from, n * sizeof *c->first);
        memmove(c->size + c->n, c->size + from, n * sizeof *c->size);
        if (weighted) memmove(c->weight + c->n, c->weight + from, n * sizeof *c->weight);
        if (keep_hashes) {
            memmove(c->lo + c->n, c->lo + from, n * sizeof *c->lo);
            memmove(c->hi + c->n, c->hi + from, n * sizeof *c->hi);
        }
        if (jobs[1].star_id != AK_NOT_FOUND) c->star = (uint32_t)(jobs[1].star_id - from + c->n);
        c->n += n;
    }
    return ANONKIT_OK;
}

static int cmp_u64(const void *a, const void *b)
{
    const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* order[0 .. c->n): the classes by their first rows. Few classes are
 * sorted; many are placed through an array over the rows (one scattered
 * write per class, one pass over the rows). */
int rg_order_classes(const rg_classes *c, uint64_t rows, uint32_t **order, ak_error *err)
{
    uint32_t *o = malloc((c->n ? c->n : 1) * sizeof *o);
    if (!o) return ak_err_nomem(err);
    if (c->n <= rows / 64) {
        uint64_t *key = malloc((c->n ? c->n : 1) * sizeof *key);
        if (!key) {
            free(o);
            return ak_err_nomem(err);
        }
        for (size_t k = 0; k < c->n; k++) key[k] = (uint64_t)c->first[k] << 32 | k;
        qsort(key, c->n, sizeof *key, cmp_u64);
        for (size_t k = 0; k < c->n; k++) o[k] = (uint32_t)key[k];
        free(key);
        *order = o;
        return ANONKIT_OK;
    }
    uint32_t *at = malloc((rows ? (size_t)rows : 1) * sizeof *at);
    if (!at) {
        free(o);
        return ak_err_nomem(err);
    }
    memset(at, 0xff, (size_t)rows * sizeof *at);
    for (size_t k = 0; k < c->n; k++) at[c->first[k]] = (uint32_t)k;
    size_t n = 0;
    for (uint64_t r = 0; r < rows; r++)
        if (at[r] != UINT32_MAX) o[n++] = at[r];
    free(at);
    *order = o;
    return ANONKIT_OK;
}
