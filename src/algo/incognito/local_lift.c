/* local_lift.c — the lifting pass of local recoding (issue 28, part 3): after
 * the iterations of local.c, classes are raised one level in one QI when
 * that lets rows of dearer classes join them.
 *
 * Owns: a greedy local search over the published classes under k-anonymity
 * alone. A candidate raises class D one level in QI q, to the label tuple
 * t2 (or joins the class E that already has t2: raising nothing). Every row
 * whose own values generalize to t2 (it is covered by t2's labels) and whose
 * class C costs more per row than t2 may move to it: all rows of C when all
 * of C is covered (C disappears), otherwise as many as leave C with k rows.
 * The candidate's gain is what the moved rows save minus what D's rows pay
 * for the higher level. Each round measures every candidate (one per tuple:
 * the class that takes it at least cost), then applies them best first, each
 * measured again on the classes as they are by then; a class whose tuple
 * changed, that grew or emptied in the round takes no further part in it.
 * Up to `rounds` rounds (inc_local_post: two, then one per later cycle), while one gains.
 *
 * Soundness: each label covers its rows (a row moves only to a tuple its
 * values generalize to; D's rows share D's value at q, whose parent is t2's
 * label); every class keeps at least k rows (a target only grows, a source
 * keeps k or empties); label tuples stay distinct (a raise onto an existing
 * tuple merges the two classes). Each applied candidate lowers the weighted
 * NCP sum, so the pass never raises the loss. It does what the iterations
 * cannot: they publish each row only with the rows left at its iteration,
 * while a class published later, one level higher in one QI, may cover rows
 * that an earlier iteration published at a dearer node. */
#include "algo/incognito/local_internal.h"

#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "common/parallel.h"

int lift_add(lift_classes *cl, const uint32_t *level, const uint32_t *val, uint64_t count, uint32_t *id,
             ak_error *err)
{
    if (cl->n == cl->cap) {
        const size_t cap = cl->cap ? 2 * cl->cap : 256;
        uint32_t *lv = realloc(cl->lv, cap * cl->nqi * sizeof *lv);
        if (lv) cl->lv = lv;
        uint32_t *va = realloc(cl->val, cap * cl->nqi * sizeof *va);
        if (va) cl->val = va;
        uint64_t *cnt = realloc(cl->count, cap * sizeof *cnt);
        if (cnt) cl->count = cnt;
        if (!lv || !va || !cnt) return ak_err_nomem(err);
        cl->cap = cap;
    }
    memcpy(cl->lv + cl->n * cl->nqi, level, cl->nqi * sizeof *level);
    memcpy(cl->val + cl->n * cl->nqi, val, cl->nqi * sizeof *val);
    cl->count[cl->n] = count;
    *id = (uint32_t)cl->n++;
    return ANONKIT_OK;
}

void lift_free(lift_classes *cl)
{
    free(cl->lv);
    free(cl->val);
    free(cl->count);
    memset(cl, 0, sizeof *cl);
}

/* A label tuple some class may take: class d raised in QI q (q = UINT32_MAX:
 * d's own tuple, a target rows may join at no raise). */
typedef struct lift_entry {
    uint64_t lv, key; /* packed levels and values (key fields) of the tuple */
    double cost;      /* its weighted NCP per row */
    uint32_t d, q;
} lift_entry;

/* Whether entry x comes before y: by levels, key, the class's own tuple
 * before its raises, QI, class (a total order). */
static inline int entry_before(const lift_entry *x, const lift_entry *y)
{
    if (x->lv != y->lv) return x->lv < y->lv;
    if (x->key != y->key) return x->key < y->key;
    if (x->q != y->q) return x->q == UINT32_MAX ? 1 : y->q == UINT32_MAX ? 0 : x->q < y->q;
    return x->d < y->d;
}

/* Sorts e[0..n) by entry_before (a total order: the result is that of any
 * sort), a merge sort with the comparison inline, through tmp (n entries). */
static void entry_sort(lift_entry *e, lift_entry *tmp, size_t n)
{
    if (n <= 16) {
        for (size_t i = 1; i < n; i++) {
            const lift_entry t = e[i];
            size_t j = i;
            for (; j > 0 && entry_before(&t, &e[j - 1]); j--) e[j] = e[j - 1];
            e[j] = t;
        }
        return;
    }
    const size_t h = n / 2;
    entry_sort(e, tmp, h);
    entry_sort(e + h, tmp, n - h);
    if (!entry_before(&e[h], &e[h - 1])) return; /* already in order */
    memcpy(tmp, e, h * sizeof *e);
    size_t i = 0, j = h, o = 0;
    while (i < h && j < n) e[o++] = entry_before(&e[j], &tmp[i]) ? e[j++] : tmp[i++];
    while (i < h) e[o++] = tmp[i++];
}

/* The best use of a tuple: its gain and the entry (class, QI) that takes it.
 * (Rows of dearer classes that a tuple covers are kept as pairs
 * (tuple index << 32) | the row's class.) */
typedef struct lift_move {
    double gain;
    uint32_t tuple, d;
} lift_move;

static int move_cmp(const void *a, const void *b)
{
    const lift_move *x = a, *y = b;
    if (x->gain != y->gain) return x->gain > y->gain ? -1 : 1;
    return x->tuple < y->tuple ? -1 : x->tuple > y->tuple;
}

static int u64_cmp(const void *a, const void *b)
{
    const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

typedef struct lv_id {
    uint64_t lv;
    double cost;
    uint32_t id;
} lv_id;

/* By levels, then dearest first. */
static int lv_id_cmp(const void *a, const void *b)
{
    const lv_id *x = a, *y = b;
    if (x->lv != y->lv) return x->lv < y->lv ? -1 : 1;
    if (x->cost != y->cost) return x->cost > y->cost ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

/* Whether x comes before y: by cost, cheapest first, then id. */
static inline int cheap_before(const lv_id *x, const lv_id *y)
{
    return x->cost != y->cost ? x->cost < y->cost : x->id < y->id;
}

/* Sorts a[0..n) by cheap_before (a total order over distinct ids: the result is that of any sort), a merge sort with
 * the comparison inline, through tmp (n / 2 entries). */
static void cheap_sort(lv_id *a, lv_id *tmp, size_t n)
{
    if (n <= 16) {
        for (size_t i = 1; i < n; i++) {
            const lv_id t = a[i];
            size_t j = i;
            for (; j > 0 && cheap_before(&t, &a[j - 1]); j--) a[j] = a[j - 1];
            a[j] = t;
        }
        return;
    }
    const size_t h = n / 2;
    cheap_sort(a, tmp, h);
    cheap_sort(a + h, tmp, n - h);
    if (!cheap_before(&a[h], &a[h - 1])) return; /* already in order */
    memcpy(tmp, a, h * sizeof *a);
    size_t i = 0, j = h, o = 0;
    while (i < h && j < n) a[o++] = cheap_before(&a[j], &tmp[i]) ? a[j++] : tmp[i++];
    while (i < h) a[o++] = tmp[i++];
}

/* Sorts e[0..n) by entry_before: first by levels into runs (a counting sort over the distinct levels, in their
 * order), then each run by entry_sort; the same order as one entry_sort, with shorter sorts. */
static int entry_sort_by_levels(lift_entry *e, size_t n, ak_error *err)
{
    int rc = ANONKIT_OK;
    u64scratch lvs = {0};
    lift_entry *tmp = malloc((n ? n : 1) * sizeof *tmp);
    uint32_t *gid = malloc((n ? n : 1) * sizeof *gid);
    lv_id *dl = NULL;
    size_t *off = NULL;
    if (!tmp || !gid) goto nomem;
    for (size_t i = 0; i < n; i++) {
        int inserted;
        if (u64scratch_intern(&lvs, e[i].lv, &gid[i], &inserted) != 0) goto nomem;
    }
    const size_t nl = lvs.count;
    dl = malloc((nl ? nl : 1) * sizeof *dl);
    off = calloc(nl + 1, sizeof *off);
    if (!dl || !off) goto nomem;
    for (uint32_t id = 0; id < nl; id++) dl[id] = (lv_id){lvs.keys[lvs.slot_of[id]], 0, id};
    qsort(dl, nl, sizeof *dl, lv_id_cmp); /* by levels (distinct) */
    uint32_t *rank = (uint32_t *)lvs.slot_of; /* the id's place in level order (slot_of no longer needed) */
    for (size_t x = 0; x < nl; x++) rank[dl[x].id] = (uint32_t)x;
    for (size_t i = 0; i < n; i++) off[rank[gid[i]] + 1]++;
    for (size_t x = 0; x < nl; x++) off[x + 1] += off[x];
    for (size_t i = 0; i < n; i++) tmp[off[rank[gid[i]]]++] = e[i];
    for (size_t x = nl; x-- > 0;) off[x + 1] = off[x];
    off[0] = 0;
    for (size_t x = 0; x < nl; x++) entry_sort(tmp + off[x], e, off[x + 1] - off[x]);
    memcpy(e, tmp, n * sizeof *e);
    goto out;
nomem:
    rc = ak_err_nomem(err);
out:
    free(tmp);
    free(gid);
    free(dl);
    free(off);
    lvs.count = 0; /* slot_of was overwritten: free without a reset */
    u64scratch_free(&lvs);
    return rc;
}

/* The id of key in m (u64scratch_intern without inserting), AK_NOT_FOUND when absent. */
static uint32_t scratch_find(const u64scratch *m, uint64_t key)
{
    if (!m->mask) return AK_NOT_FOUND;
    size_t s = ak_mix64(key) & m->mask;
    while (m->ids[s]) {
        if (m->keys[s] == key) return m->ids[s] - 1;
        s = (s + 1) & m->mask;
    }
    return AK_NOT_FOUND;
}

/* The key of row r (a row of c) at packed levels lv. */
static uint64_t row_key(const inc_ctx *c, size_t r, uint64_t lv)
{
    uint64_t key = 0;
    for (uint32_t q = 0; q < c->nqi; q++)
        key |= (uint64_t)c->qi[q].gen[inc_level(c, lv, q)][c->code0[q][r]] << c->qi[q].shift;
    return key;
}

/* A group's tuples: key -> its first entry, open addressing over 16-byte
 * slots with generation stamps (a group starts at no cost; key and value in
 * one cache line), one table per part for all its groups. */
typedef struct tup_slot {
    uint64_t key;
    uint32_t val, stamp;
} tup_slot;

typedef struct tup_map {
    tup_slot *slot;
    size_t cap, mask;
    int shift;
    uint32_t gen;
} tup_map;

/* Room for groups of up to n keys (at most half full). */
static int tup_init(tup_map *m, size_t n)
{
    m->cap = 16;
    while (m->cap < 2 * (n + 1)) m->cap *= 2;
    m->slot = calloc(m->cap, sizeof *m->slot);
    m->gen = 0;
    return m->slot ? 0 : -1;
}

/* Starts a group of n keys. */
static void tup_begin(tup_map *m, size_t n)
{
    size_t size = 16;
    while (size < 2 * (n + 1)) size *= 2;
    m->mask = size - 1;
    m->shift = 64;
    for (size_t z = size; z > 1; z >>= 1) m->shift--;
    if (++m->gen == 0) {
        memset(m->slot, 0, m->cap * sizeof *m->slot);
        m->gen = 1;
    }
}

static inline size_t tup_home(const tup_map *m, uint64_t key)
{
    return (size_t)((key * 0x9E3779B97F4A7C15ULL) >> m->shift) & m->mask;
}

/* Adds key with value v unless it is there (the first value stays). */
static void tup_add(tup_map *m, uint64_t key, uint32_t v)
{
    for (size_t i = tup_home(m, key);; i = (i + 1) & m->mask) {
        tup_slot *t = &m->slot[i];
        if (t->stamp != m->gen) {
            *t = (tup_slot){key, v, m->gen};
            return;
        }
        if (t->key == key) return;
    }
}

/* The value of key, AK_NOT_FOUND when absent. */
static inline uint32_t tup_find(const tup_map *m, uint64_t key)
{
    for (size_t i = tup_home(m, key);; i = (i + 1) & m->mask) {
        const tup_slot *t = &m->slot[i];
        if (t->stamp != m->gen) return AK_NOT_FOUND;
        if (t->key == key) return t->val;
    }
}

/* What the parts of a round's measurement share (read only, but for byc,
 * whose slice of each group only that group's part writes). */
typedef struct lift_shared {
    const inc_ctx *c;
    const lift_classes *cl;
    const lift_entry *e;
    const double *cost, *bmax;
    const uint32_t *start, *tuple_of, *byclv;
    const size_t *bstart, *gfirst;
    const uint64_t *crow, *field;
    const uint64_t *ckey; /* per class: its labels packed (key fields) */
    const uint64_t *sgen; /* per QI and level: level-0 code -> the level's value in its key field, at sgat[q] + level * card0 */
    const size_t *sgat;
    lv_id *byc;
    size_t nbuckets, ngroups, ne;
    const uint32_t *mcode; /* per place in members: the row's level-0 codes of every QI, side by side */
    size_t maxgroup;       /* entries of the largest group */
} lift_shared;

/* A class filter of a group (measure_part): per key of the tuples masked to
 * the QIs `above` (where the buckets are at or below the group's levels), the
 * least cost of a tuple with it, over the `filled` cheapest tuples of the
 * group. A part keeps LIFT_FILTERS of them per group, the least recently used
 * rebuilt: buckets of the same mask share one. */
enum { LIFT_FILTERS = 8 };

typedef struct lift_filter {
    u64scratch map;
    double *pmin; /* per id of map */
    uint64_t above;
    size_t filled;
    unsigned tick; /* last use */
    int used;
} lift_filter;

/* One part of the measurement: the groups part, part + nparts, ... and the
 * pairs (tuple << 32 | source class) they find, one per covered row. */
typedef struct lift_part {
    const lift_shared *s;
    unsigned part, nparts;
    uint64_t *pairs;
    size_t npairs;
    int rc;
    ak_error err;
} lift_part;

/* Measures the groups of one part (see lift_part): per group of equal levels,
 * the rows dearer than the group's cheapest tuple, each looked up. The parts
 * are independent; their pairs, sorted together, are the same whichever part
 * found them. */
static void *measure_part(void *arg)
{
    lift_part *p = arg;
    const lift_shared *s = p->s;
    const inc_ctx *c = s->c;
    const lift_classes *cl = s->cl;
    const lift_entry *e = s->e;
    const double *cost = s->cost, *bmax = s->bmax;
    const uint32_t *start = s->start, *tuple_of = s->tuple_of, *byclv = s->byclv;
    const size_t *bstart = s->bstart;
    const uint64_t *crow = s->crow, *field = s->field, *ckey = s->ckey;
    lv_id *byc = s->byc;
    const size_t nbuckets = s->nbuckets;
    const uint32_t nqi = c->nqi;
    ak_error *err = &p->err;
    int rc = ANONKIT_OK;
    uint64_t *pairs = NULL;
    size_t npairs = 0, cappairs = 0;
    const uint32_t *mcode = s->mcode;
    lift_filter flt[LIFT_FILTERS];
    memset(flt, 0, sizeof flt);
    unsigned tick = 0;
    tup_map tm = {0};
    lv_id *ctmp = malloc((s->maxgroup / 2 + 1) * sizeof *ctmp);
    if (!ctmp) rc = ak_err_nomem(err);
    for (unsigned f = 0; f < LIFT_FILTERS && rc == ANONKIT_OK; f++)
        if (!(flt[f].pmin = malloc((s->maxgroup ? s->maxgroup : 1) * sizeof *flt[f].pmin))) rc = ak_err_nomem(err);
    if (rc == ANONKIT_OK && tup_init(&tm, s->maxgroup) != 0) rc = ak_err_nomem(err);
        for (size_t gi = p->part; gi < s->ngroups && rc == ANONKIT_OK; gi += p->nparts) {
        const size_t g = s->gfirst[gi], end = s->gfirst[gi + 1];
        double cheapest = e[g].cost;
        for (size_t i = g; i < end; i++)
            if (e[i].cost < cheapest) cheapest = e[i].cost;
        if (rc != ANONKIT_OK) break;
        /* The group's tuples: each key's first entry, in a table of the part's own (stamped slots). */
        tup_begin(&tm, end - g);
        for (size_t i = g; i < end; i++) tup_add(&tm, e[i].key, (uint32_t)i);
        for (unsigned f = 0; f < LIFT_FILTERS; f++) flt[f].filled = 0, flt[f].used = 0; /* a new group: none built */
        const double eps = 1e-12 * (1 + cheapest);
        /* Only classes with some QI above the group's level: one at or below it in every QI is covered whole or not
         * at all, and costs no more than any tuple covering it (NCP grows up a hierarchy). */
        /* The group's entries by cost, cheapest first. */
        for (size_t i = g; i < end; i++) byc[i] = (lv_id){0, e[i].cost, (uint32_t)i};
        cheap_sort(byc + g, ctmp, end - g);
        /* The group's levels: per QI the map from level-0 values. */
        const uint64_t *gen[64]; /* values shifted into their key fields */
        uint32_t glv[64];
        for (uint32_t q = 0; q < nqi; q++) {
            glv[q] = inc_level(c, e[g].lv, q);
            gen[q] = s->sgen + s->sgat[q] + (size_t)glv[q] * c->qi[q].card[0];
        }
        for (size_t b = 0; b < nbuckets && rc == ANONKIT_OK; b++) {
            const uint32_t *blv = cl->lv + (size_t)byclv[bstart[b]] * nqi;
            /* The QIs where the group is at or above the bucket's levels: there a covering tuple's label is the
             * ancestor of the class's own (none below it: the class is covered whole or not at all, and costs no
             * more than any tuple covering it, NCP growing up a hierarchy). */
            if (!(bmax[b] > cheapest + eps)) continue; /* no class of the bucket dearer than a tuple */
            /* With them, the QIs where the bucket is at the group's levels (its labels as they are) and below them
             * (raised by one lookup). */
            uint64_t above = 0, eqmask = 0;
            uint32_t nbelow = 0, bq[64], nup = 0, up_q[64], up_sh[64];
            const uint32_t *up_tab[64];
            for (uint32_t q = 0; q < nqi; q++) {
                if (blv[q] > glv[q]) {
                    bq[nbelow++] = q;
                    continue;
                }
                above |= field[q];
                if (blv[q] == glv[q]) {
                    eqmask |= field[q];
                } else {
                    const inc_qi *a = &c->qi[q];
                    up_q[nup] = q;
                    up_sh[nup] = a->shift;
                    up_tab[nup++] = a->up[blv[q] * (a->height + 1) + glv[q]];
                }
            }
            if (!nbelow) continue;
            const uint64_t *bgen[64];
            for (uint32_t j = 0; j < nbelow; j++) bgen[j] = gen[bq[j]];
            /* The group's tuples cheaper than the bucket's dearest class, and the rows of the bucket's classes
             * dearer than the group's cheapest tuple (binary searches: tuples by cost, classes dearest first). */
            size_t lo = g, hi = end;
            while (lo < hi) {
                const size_t mid = lo + (hi - lo) / 2;
                if (byc[mid].cost + eps < bmax[b]) lo = mid + 1;
                else hi = mid;
            }
            const size_t ntup = lo - g;
            size_t xlo = bstart[b], xhi = bstart[b + 1];
            while (xlo < xhi) {
                const size_t mid = xlo + (xhi - xlo) / 2;
                if (cost[byclv[mid]] > cheapest + eps) xlo = mid + 1;
                else xhi = mid;
            }
            const size_t xend = xlo, nrows_dear = crow[xend] - crow[bstart[b]];
            /* Few rows: look each up; else first the classes, by their labels in those QIs against the tuples',
             * whichever costs less. */
            const int filter = ntup < nrows_dear;
            double least = cheapest;
            lift_filter *fl = NULL;
            if (filter) {
                /* The group's filter of this mask (built for an earlier bucket, or now), holding at least the
                 * ntup cheapest tuples; those beyond are no cheaper than this bucket's dearest class, so they pass
                 * none of its classes and change no minimum that does: the same classes pass. */
                least = ntup ? byc[g].cost : bmax[b];
                for (unsigned f = 0; f < LIFT_FILTERS && !fl; f++)
                    if (flt[f].used && flt[f].above == above) fl = &flt[f];
                if (!fl) {
                    fl = &flt[0];
                    for (unsigned f = 0; f < LIFT_FILTERS; f++) {
                        if (!flt[f].used) {
                            fl = &flt[f];
                            break;
                        }
                        if (flt[f].tick < fl->tick) fl = &flt[f];
                    }
                    u64scratch_reset(&fl->map);
                    *fl = (lift_filter){fl->map, fl->pmin, above, 0, 0, 1};
                }
                fl->tick = ++tick;
                for (size_t o = g + fl->filled; o < g + ntup; o++) {
                    const size_t i = byc[o].id;
                    uint32_t id;
                    int inserted;
                    if (u64scratch_intern(&fl->map, e[i].key & above, &id, &inserted) != 0) {
                        rc = ak_err_nomem(err);
                        break;
                    }
                    if (inserted) fl->pmin[id] = e[i].cost; /* the cheapest first */
                }
                if (ntup > fl->filled) fl->filled = ntup;
            }
            for (size_t x = bstart[b]; x < xend && rc == ANONKIT_OK; x++) {
                const uint32_t src = byclv[x];
                if (!(cost[src] > least + eps)) break; /* the bucket's classes come dearest first */
                /* The class's labels raised to the group's levels where it is not above them; per row only the
                 * QIs where it is. */
                const uint32_t *cv = cl->val + (size_t)src * nqi;
                uint64_t pkey = 0;
                pkey |= ckey[src] & eqmask; /* the QIs at the group's levels: the class's own labels */
                for (uint32_t j = 0; j < nup; j++) pkey |= (uint64_t)up_tab[j][cv[up_q[j]]] << up_sh[j];
                if (filter) {
                    const uint32_t pid = scratch_find(&fl->map, pkey);
                    if (pid == AK_NOT_FOUND || !(cost[src] > fl->pmin[pid] + eps)) continue;
                }
                for (uint32_t i = start[src]; i < start[src + 1]; i++) {
                    const uint32_t *code = mcode + (size_t)i * nqi; /* row members[i]'s codes */
                    uint64_t key = pkey;
                    for (uint32_t j = 0; j < nbelow; j++) key |= bgen[j][code[bq[j]]];
                    const uint32_t fe = tup_find(&tm, key);
                    if (fe == AK_NOT_FOUND) continue;
                    const lift_entry *t = &e[fe];
                    if (!(cost[src] > t->cost + eps)) continue;
                    if (npairs == cappairs) {
                        const size_t cap = cappairs ? 2 * cappairs : 4096;
                        uint64_t *grown = realloc(pairs, cap * sizeof *grown);
                        if (!grown) {
                            rc = ak_err_nomem(err);
                            break;
                        }
                        pairs = grown;
                        cappairs = cap;
                    }
                    pairs[npairs++] = (uint64_t)tuple_of[fe] << 32 | src;
                }
            }
        }
    }
    for (unsigned f = 0; f < LIFT_FILTERS; f++) {
        free(flt[f].pmin);
        u64scratch_free(&flt[f].map);
    }
    free(tm.slot);
    free(ctmp);
    p->pairs = pairs;
    p->npairs = npairs;
    p->rc = rc;
    return NULL;
}

/* One round: measures every candidate, then applies them best first, each
 * measured again (see the top). *applied: how many; *saved grows by their
 * gains (weighted NCP). */
static int lift_round(inc_ctx *c, const double *w, uint64_t k, lift_classes *cl,
                      uint32_t *class_of, unsigned threads, size_t part_min, uint64_t *applied, double *saved,
                      ak_error *err)
{
    const uint32_t nqi = c->nqi;
    const size_t n = c->nrows, nc = cl->n;
    *applied = 0;
    int rc = ANONKIT_OK;
    double *cost = malloc((nc ? nc : 1) * sizeof *cost);
    uint64_t *clv = malloc((nc ? nc : 1) * sizeof *clv), *ckey = malloc((nc ? nc : 1) * sizeof *ckey);
    size_t ne = 0;
    for (size_t i = 0; i < nc; i++) ne += cl->count[i] ? 1 + (size_t)nqi * LIFT_STEPS : 0;
    lift_entry *e = malloc((ne ? ne : 1) * sizeof *e);
    uint32_t *start = calloc(nc + 1, sizeof *start), *members = malloc((n ? n : 1) * sizeof *members);
    uint32_t *tuple_of = malloc((ne ? ne : 1) * sizeof *tuple_of); /* entry -> tuple index */
    uint32_t *byclv = malloc((nc ? nc : 1) * sizeof *byclv);
    size_t *bstart = malloc((nc + 1) * sizeof *bstart);
    lv_id *sorted = malloc((nc ? nc : 1) * sizeof *sorted);
    double *qcost = malloc((nc ? nc : 1) * nqi * sizeof *qcost);
    lv_id *byc = malloc((ne ? ne : 1) * sizeof *byc);
    uint64_t *crow = malloc((nc + 1) * sizeof *crow); /* rows of the classes before each in bucket order */
    double *bmax = malloc((nc ? nc : 1) * sizeof *bmax);
    size_t *gfirst = malloc((ne + 1) * sizeof *gfirst); /* the first entry of each group of equal levels */
    uint32_t *mcode = malloc((n ? n : 1) * nqi * sizeof *mcode);
    uint64_t field[64];
    size_t sgat[64], nsgen = 0;
    for (uint32_t q = 0; q < nqi; q++) {
        sgat[q] = nsgen;
        nsgen += (size_t)(c->qi[q].height + 1) * c->qi[q].card[0];
    }
    uint64_t *sgen = malloc((nsgen ? nsgen : 1) * sizeof *sgen);
    if (sgen)
        for (uint32_t q = 0; q < nqi; q++)
            for (uint32_t l = 0; l <= c->qi[q].height; l++)
                for (uint32_t v = 0; v < c->qi[q].card[0]; v++)
                    sgen[sgat[q] + (size_t)l * c->qi[q].card[0] + v] = (uint64_t)c->qi[q].gen[l][v] << c->qi[q].shift;
    for (uint32_t q = 0; q < nqi; q++)
        field[q] = c->qi[q].bits == 64 ? ~(uint64_t)0 : ((((uint64_t)1 << c->qi[q].bits) - 1) << c->qi[q].shift);
    uint64_t *pairs = NULL;
    size_t npairs = 0;
    lift_move *moves = NULL;
    unsigned char *used = calloc(nc ? nc : 1, 1);
    if (!cost || !clv || !ckey || !sgen || !e || !start || !members || !tuple_of || !used || !byclv || !bstart || !sorted || !qcost || !gfirst || !mcode || !bmax || !byc || !crow) {
        rc = ak_err_nomem(err);
        goto done;
    }
    /* Classes: cost, packed levels, members (counting sort). */
    for (size_t i = 0; i < nc; i++) {
        cost[i] = 0;
        for (uint32_t q = 0; q < nqi; q++) {
            qcost[i * nqi + q] = (w ? w[q] : 1.0) * c->qi[q].ncp[cl->lv[i * nqi + q]][cl->val[i * nqi + q]];
            cost[i] += qcost[i * nqi + q];
        }
        uint64_t lv = 0;
        for (uint32_t q = 0; q < nqi; q++) lv = inc_with_level(c, lv, q, cl->lv[i * nqi + q]);
        clv[i] = lv;
    }
    for (size_t r = 0; r < n; r++)
        if (class_of[r] != PARTITION_SUPPRESSED) start[class_of[r] + 1]++;
    for (size_t i = 0; i < nc; i++) start[i + 1] += start[i];
    for (size_t r = 0; r < n; r++)
        if (class_of[r] != PARTITION_SUPPRESSED) members[start[class_of[r]]++] = (uint32_t)r;
    for (size_t i = nc; i-- > 0;) start[i + 1] = start[i];
    start[0] = 0;
    /* Alive classes grouped by their levels (buckets). */
    size_t nalive = 0, nbuckets = 0;
    for (size_t i = 0; i < nc; i++)
        if (cl->count[i]) sorted[nalive++] = (lv_id){clv[i], cost[i], (uint32_t)i};
    qsort(sorted, nalive, sizeof *sorted, lv_id_cmp);
    for (size_t x = 0; x < nalive; x++) byclv[x] = sorted[x].id;
    /* Entries: every class's own tuple and each of its raises. */
    ne = 0;
    for (size_t i = 0; i < nc; i++) {
        if (!cl->count[i]) continue;
        uint64_t key = 0;
        for (uint32_t q = 0; q < nqi; q++) key |= (uint64_t)cl->val[i * nqi + q] << c->qi[q].shift;
        ckey[i] = key;
        e[ne++] = (lift_entry){clv[i], key, cost[i], (uint32_t)i, UINT32_MAX};
        for (uint32_t q = 0; q < nqi; q++) {
            const inc_qi *a = &c->qi[q];
            const uint32_t l = cl->lv[i * nqi + q], v = cl->val[i * nqi + q];
            for (uint32_t l2 = l + 1; l2 <= a->height && l2 <= l + LIFT_STEPS; l2++) {
                const uint32_t v2 = a->up[l * (a->height + 1) + l2][v];
                const double wq = w ? w[q] : 1.0;
                e[ne++] = (lift_entry){inc_with_level(c, clv[i], q, l2),
                                       (key & ~(a->bits == 64 ? ~(uint64_t)0 : ((((uint64_t)1 << a->bits) - 1) << a->shift))) |
                                           (uint64_t)v2 << a->shift,
                                       cost[i] + wq * (a->ncp[l2][v2] - a->ncp[l][v]), (uint32_t)i, q};
            }
        }
    }
    if ((rc = entry_sort_by_levels(e, ne, err)) != ANONKIT_OK) goto done;
    /* Tuples: runs of equal (lv, key); the first entry of a run is the existing class when there is one. */
    size_t ntuples = 0;
    for (size_t i = 0; i < ne; i++) {
        if (i > 0 && (e[i].lv != e[i - 1].lv || e[i].key != e[i - 1].key)) ntuples++;
        tuple_of[i] = (uint32_t)ntuples;
    }
    ntuples += ne > 0;
    for (size_t x = 0; x < nalive; x++) {
        if (x == 0 || clv[byclv[x]] != clv[byclv[x - 1]]) {
            bstart[nbuckets] = x;
            bmax[nbuckets++] = 0;
        }
        if (cost[byclv[x]] > bmax[nbuckets - 1]) bmax[nbuckets - 1] = cost[byclv[x]];
    }
    bstart[nbuckets] = nalive;
    crow[0] = 0;
    for (size_t x = 0; x < nalive; x++) crow[x + 1] = crow[x] + cl->count[byclv[x]];
    /* The groups of equal levels (runs of e), measured in parts on up to `threads` threads. */
    size_t ngroups = 0;
    for (size_t i = 0; i < ne; i++)
        if (i == 0 || e[i].lv != e[i - 1].lv) gfirst[ngroups++] = i;
    gfirst[ngroups] = ne;
    size_t maxgroup = 0;
    for (size_t i = 0; i < ngroups; i++)
        if (gfirst[i + 1] - gfirst[i] > maxgroup) maxgroup = gfirst[i + 1] - gfirst[i];
    /* The rows' codes in members order, side by side: a class's rows are read in one stream. */
    for (size_t i = 0; i < start[nc]; i++)
        for (uint32_t q = 0; q < nqi; q++) mcode[i * nqi + q] = c->code0[q][members[i]];
    {
        const lift_shared sh = {c, cl, e, cost, bmax, start, tuple_of, byclv, bstart, gfirst, crow, field,
                                ckey, sgen, sgat, byc, nbuckets, ngroups, ne, mcode, maxgroup};
        lift_part parts[AK_MAX_PARTS];
        const unsigned np = ak_parts(ngroups, threads, part_min ? part_min : LIFT_PART_MIN);
        for (unsigned i = 0; i < np; i++) {
            parts[i] = (lift_part){.s = &sh, .part = i, .nparts = np};
            ak_err_clear(&parts[i].err);
        }
        ak_run_parts(parts, sizeof *parts, np, measure_part);
        size_t total = 0;
        for (unsigned i = 0; i < np; i++) {
            if (parts[i].rc != ANONKIT_OK && rc == ANONKIT_OK) {
                rc = parts[i].rc;
                *err = parts[i].err;
            }
            total += parts[i].npairs;
        }
        if (rc == ANONKIT_OK && np == 1) {
            pairs = parts[0].pairs;
            npairs = parts[0].npairs;
            parts[0].pairs = NULL;
        } else if (rc == ANONKIT_OK && total) {
            if (!(pairs = malloc(total * sizeof *pairs))) rc = ak_err_nomem(err);
            for (unsigned i = 0; i < np && rc == ANONKIT_OK; i++) {
                if (!parts[i].npairs) continue; /* (its pairs may be NULL) */
                memcpy(pairs + npairs, parts[i].pairs, parts[i].npairs * sizeof *pairs);
                npairs += parts[i].npairs;
            }
        }
        for (unsigned i = 0; i < np; i++) free(parts[i].pairs);
    }
    if (rc != ANONKIT_OK) goto done;
    /* Per tuple: the rows its sources give (all of a source, or down to k), and the best class to take it. */
    if (npairs) qsort(pairs, npairs, sizeof *pairs, u64_cmp);
    size_t *tfirst = malloc((ntuples + 1) * sizeof *tfirst);
    moves = malloc((ntuples ? ntuples : 1) * sizeof *moves);
    if (!tfirst || !moves) {
        free(tfirst);
        rc = ak_err_nomem(err);
        goto done;
    }
    for (size_t i = ne; i-- > 0;) tfirst[tuple_of[i]] = i;
    size_t nmoves = 0;
    for (size_t p = 0; p < npairs;) {
        const uint32_t t = (uint32_t)(pairs[p] >> 32);
        const lift_entry *te = &e[tfirst[t]];
        double gain = 0;
        while (p < npairs && (uint32_t)(pairs[p] >> 32) == t) {
            const uint32_t src = (uint32_t)pairs[p];
            uint64_t cov = 0;
            while (p < npairs && pairs[p] == ((uint64_t)t << 32 | src)) cov++, p++;
            const uint64_t cnt = cl->count[src];
            const uint64_t mv = cov == cnt ? cnt : cnt > k ? (cov < cnt - k ? cov : cnt - k) : 0;
            gain += (double)mv * (cost[src] - te->cost);
        }
        /* The class that takes the tuple: the existing one (no raise) or the cheapest raise. */
        double best = -1;
        uint32_t bd = UINT32_MAX;
        for (size_t i = tfirst[t]; i < ne && tuple_of[i] == t; i++) {
            const double g = gain - (e[i].q == UINT32_MAX ? 0 : (double)cl->count[e[i].d] * (e[i].cost - cost[e[i].d]));
            if (g > best) {
                best = g;
                bd = (uint32_t)i;
            }
        }
        if (bd != UINT32_MAX && best > 1e-9 * (1 + gain)) moves[nmoves++] = (lift_move){best, t, bd};
    }
    qsort(moves, nmoves, sizeof *moves, move_cmp);
    /* Apply the moves, best first, each measured again on the classes as they are by then: a class whose tuple
     * changed, that grew or emptied in this round takes no part in another move (sources only shrink, and their
     * rows are found again by their keys). */
    uint32_t *srcs = malloc((nc ? nc : 1) * sizeof *srcs);
    uint64_t *mvs = malloc((nc ? nc : 1) * sizeof *mvs);
    if (!srcs || !mvs) {
        free(srcs);
        free(mvs);
        free(tfirst);
        rc = ak_err_nomem(err);
        goto done;
    }
    unsigned char *changed = used;
    for (size_t m = 0; m < nmoves; m++) {
        const uint32_t t = moves[m].tuple;
        const lift_entry *be = &e[moves[m].d], *te = &e[tfirst[t]];
        const uint32_t d = be->d;
        const uint32_t existing = te->q == UINT32_MAX ? te->d : UINT32_MAX;
        if (changed[d] || !cl->count[d] || (existing != UINT32_MAX && (changed[existing] || !cl->count[existing])))
            continue;
        size_t lo = 0, hi = npairs; /* the tuple's first pair */
        while (lo < hi) {
            const size_t mid = lo + (hi - lo) / 2;
            if ((pairs[mid] >> 32) < t) lo = mid + 1;
            else hi = mid;
        }
        double gain = be->q == UINT32_MAX ? 0 : -(double)cl->count[d] * (be->cost - cost[d]);
        size_t ns = 0;
        for (size_t p = lo; p < npairs && (uint32_t)(pairs[p] >> 32) == t;) {
            const uint32_t src = (uint32_t)pairs[p];
            while (p < npairs && pairs[p] == ((uint64_t)t << 32 | src)) p++;
            if (changed[src] || !cl->count[src]) continue;
            uint64_t cov = 0;
            for (uint32_t i = start[src]; i < start[src + 1]; i++)
                cov += class_of[members[i]] == src && row_key(c, members[i], te->lv) == te->key;
            const uint64_t cnt = cl->count[src];
            const uint64_t mv = cov == cnt ? cnt : cnt > k ? (cov < cnt - k ? cov : cnt - k) : 0;
            if (!mv) continue;
            srcs[ns] = src;
            mvs[ns++] = mv;
            gain += (double)mv * (cost[src] - te->cost);
        }
        if (!(gain > 1e-9 * (1 + cost[d]))) continue;
        /* The class that holds the tuple: the existing one, or d raised. */
        uint32_t into = existing;
        if (into == UINT32_MAX) {
            into = d;
            cl->lv[(size_t)d * nqi + be->q] = inc_level(c, be->lv, be->q);
            cl->val[(size_t)d * nqi + be->q] = inc_key_value(c, be->key, be->q);
        } else if (d != existing) {
            for (uint32_t i = start[d]; i < start[d + 1]; i++)
                if (class_of[members[i]] == d) class_of[members[i]] = into;
            cl->count[into] += cl->count[d];
            cl->count[d] = 0;
        }
        changed[d] = changed[into] = 1;
        *saved += gain;
        for (size_t x = 0; x < ns; x++) {
            const uint32_t src = srcs[x];
            uint64_t mv = mvs[x];
            for (uint32_t i = start[src]; i < start[src + 1] && mv > 0; i++) {
                const uint32_t r = members[i];
                if (class_of[r] != src || row_key(c, r, te->lv) != te->key) continue;
                class_of[r] = into;
                cl->count[src]--;
                cl->count[into]++;
                mv--;
            }
            if (!cl->count[src]) changed[src] = 1;
        }
        (*applied)++;
    }
    free(srcs);
    free(mvs);
    free(tfirst);
done:
    free(cost);
    free(clv);
    free(ckey);
    free(sgen);
    free(e);
    free(byclv);
    free(qcost);
    free(gfirst);
    free(mcode);
    free(byc);
    free(crow);
    free(bmax);
    free(sorted);
    free(bstart);
    free(start);
    free(members);
    free(tuple_of);
    free(pairs);
    free(moves);
    free(used);
    return rc;
}

int inc_local_lift(inc_ctx *c, const double *w, uint64_t k, lift_classes *cl, uint32_t *class_of, int rounds,
                   unsigned threads, size_t part_min, inc_local_lift_stats *st, ak_error *err)
{
    memset(st, 0, sizeof *st);
    int rc = ANONKIT_OK;
    for (int round = 0; rc == ANONKIT_OK && round < rounds; round++) {
        uint64_t applied;
        rc = lift_round(c, w, k, cl, class_of, threads, part_min, &applied, &st->saved, err);
        st->rounds++;
        st->moves += applied;
        if (rc == ANONKIT_OK && !applied) break;
    }
    return rc;
}
