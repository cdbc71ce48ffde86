/* local_evict.c — the eviction pass of local recoding (issue 28, part 3):
 * after the iterations and the lifting pass of local.c, a class lowers one QI
 * to the value most of its rows share once the few rows that keep it high
 * have moved to other classes that already cover them.
 *
 * Owns: a greedy local search over the published classes under k-anonymity
 * alone, the converse of lifting (local_lift.c). A candidate takes class D
 * (more than k rows), a QI q where D is at level l > 0 and a value v of q at a
 * lower level l2 < l under D's label; the rows of D whose value generalizes to
 * v (at least k of them) stay in D, now labelled v in q, and every other row
 * of D moves to the cheapest other class whose labels cover it (found by one
 * hash lookup per distinct level vector of the classes). Its gain is what
 * D's staying rows save minus what the moved rows pay more in their new
 * classes. A round measures the best candidate of every class, then applies
 * them best first, each measured again on the classes as they are by then; a
 * class whose tuple changed takes no further part in the round (neither as
 * source nor as target), one that grew is no source. Up to EVICT_ROUNDS
 * rounds, while one gains.
 *
 * Soundness: a moved row goes only to a class whose unchanged label tuple is
 * its own values generalized (the lookup is by that exact key), so the labels
 * cover it, and that class only grows; D keeps at least k rows, all of them
 * generalizing to v in q, its other labels unchanged; when D's new tuple is
 * that of another class the two merge (distinct label tuples). An applied
 * candidate lowers the weighted NCP sum, so the pass never raises the loss. */
#include "algo/incognito/local_internal.h"

#include <stdlib.h>
#include <string.h>

#include "common/hash.h"

/* One distinct level vector of the classes: its levels and a map from the
 * packed labels at those levels to the class (ids[map id]). */
typedef struct evict_bucket {
    uint64_t lv;
    uint32_t level[64];
    u64map map;
    uint32_t *ids;
} evict_bucket;

typedef struct evict_cand {
    double gain;
    uint32_t d, q, l2, v;
} evict_cand;

static int cand_cmp(const void *a, const void *b)
{
    const evict_cand *x = a, *y = b;
    if (x->gain != y->gain) return x->gain > y->gain ? -1 : 1;
    return x->d < y->d ? -1 : x->d > y->d;
}

typedef struct lvid {
    uint64_t lv;
    uint32_t id;
} lvid;

static int lvid_cmp(const void *a, const void *b)
{
    const lvid *x = a, *y = b;
    if (x->lv != y->lv) return x->lv < y->lv ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

/* What a round works with. */
typedef struct evict_ctx {
    const inc_ctx *c;
    lift_classes *cl;
    uint32_t *class_of;
    const double *w;
    double *cost;             /* per class: weighted NCP per row */
    unsigned char *changed;   /* per class: its tuple changed (or it merged away) in this round */
    evict_bucket *b;
    size_t nb;
    uint32_t *covcls;         /* per row: the cheapest other class covering it (UINT32_MAX: none), cached */
    double *covcost;
    unsigned char *covknown;
} evict_ctx;

/* The cheapest class other than own, unchanged in this round and holding
 * rows, whose labels cover row r; UINT32_MAX when there is none. */
static uint32_t find_cover(const evict_ctx *x, uint32_t r, uint32_t own)
{
    const inc_ctx *c = x->c;
    uint32_t best = UINT32_MAX;
    for (size_t i = 0; i < x->nb; i++) {
        const evict_bucket *b = &x->b[i];
        uint64_t key = 0;
        for (uint32_t q = 0; q < c->nqi; q++) key |= (uint64_t)c->qi[q].gen[b->level[q]][c->code0[q][r]] << c->qi[q].shift;
        const uint32_t id = u64map_find(&b->map, key);
        if (id == AK_NOT_FOUND) continue;
        const uint32_t e = b->ids[id];
        if (e == own || x->changed[e] || !x->cl->count[e]) continue;
        if (best == UINT32_MAX || x->cost[e] < x->cost[best]) best = e;
    }
    return best;
}

/* The cached cover of row r (a row of class own). */
static double cover_cost(evict_ctx *x, uint32_t r, uint32_t own)
{
    if (!x->covknown[r]) {
        x->covcls[r] = find_cover(x, r, own);
        x->covcost[r] = x->covcls[r] == UINT32_MAX ? -1 : x->cost[x->covcls[r]];
        x->covknown[r] = 1;
    }
    return x->covcost[r];
}

/* One round (see the top): *applied candidates taken. */
static int evict_round(const inc_ctx *c, const double *w, uint64_t k, lift_classes *cl, uint32_t *class_of,
                       uint64_t *applied, ak_error *err)
{
    const uint32_t nqi = c->nqi;
    const size_t n = c->nrows, nc = cl->n;
    *applied = 0;
    uint32_t maxcard = 1;
    for (uint32_t q = 0; q < nqi; q++)
        if (c->qi[q].card[0] > maxcard) maxcard = c->qi[q].card[0];
    evict_ctx x = {.c = c, .cl = cl, .class_of = class_of, .w = w};
    x.cost = malloc((nc ? nc : 1) * sizeof *x.cost);
    x.changed = calloc(nc ? nc : 1, 1);
    unsigned char *grew = calloc(nc ? nc : 1, 1);
    x.covcls = malloc((n ? n : 1) * sizeof *x.covcls);
    x.covcost = malloc((n ? n : 1) * sizeof *x.covcost);
    x.covknown = calloc(n ? n : 1, 1);
    uint32_t *start = calloc(nc + 1, sizeof *start), *members = malloc((n ? n : 1) * sizeof *members);
    lvid *sorted = malloc((nc ? nc : 1) * sizeof *sorted);
    x.b = calloc(nc ? nc : 1, sizeof *x.b);
    evict_cand *cand = malloc((nc ? nc : 1) * sizeof *cand);
    uint32_t *cnt = calloc(maxcard, sizeof *cnt), *touched = malloc(maxcard * sizeof *touched);
    uint32_t *chg = malloc((nc ? nc : 1) * sizeof *chg);
    int rc = ANONKIT_OK;
    if (!x.cost || !x.changed || !grew || !x.covcls || !x.covcost || !x.covknown || !start || !members || !sorted ||
        !x.b || !cand || !cnt || !touched || !chg) {
        rc = ak_err_nomem(err);
        goto done;
    }
    size_t nalive = 0;
    for (size_t i = 0; i < nc; i++) {
        x.cost[i] = 0;
        uint64_t lv = 0;
        for (uint32_t q = 0; q < nqi; q++) {
            x.cost[i] += (w ? w[q] : 1.0) * c->qi[q].ncp[cl->lv[i * nqi + q]][cl->val[i * nqi + q]];
            lv = inc_with_level(c, lv, q, cl->lv[i * nqi + q]);
        }
        if (cl->count[i]) sorted[nalive++] = (lvid){lv, (uint32_t)i};
    }
    for (size_t r = 0; r < n; r++)
        if (class_of[r] != PARTITION_SUPPRESSED) start[class_of[r] + 1]++;
    for (size_t i = 0; i < nc; i++) start[i + 1] += start[i];
    for (size_t r = 0; r < n; r++)
        if (class_of[r] != PARTITION_SUPPRESSED) members[start[class_of[r]]++] = (uint32_t)r;
    for (size_t i = nc; i-- > 0;) start[i + 1] = start[i];
    start[0] = 0;
    /* Buckets: the classes by level vector, each with its map of labels. */
    qsort(sorted, nalive, sizeof *sorted, lvid_cmp);
    for (size_t s = 0; s < nalive && rc == ANONKIT_OK;) {
        size_t e = s;
        while (e < nalive && sorted[e].lv == sorted[s].lv) e++;
        evict_bucket *b = &x.b[x.nb++];
        b->lv = sorted[s].lv;
        for (uint32_t q = 0; q < nqi; q++) b->level[q] = inc_level(c, b->lv, q);
        b->ids = malloc((e - s) * sizeof *b->ids);
        if (!b->ids || u64map_init(&b->map, e - s) != 0) {
            rc = ak_err_nomem(err);
            break;
        }
        for (size_t j = s; j < e; j++) {
            const uint32_t d = sorted[j].id;
            uint64_t key = 0;
            for (uint32_t q = 0; q < nqi; q++) key |= (uint64_t)cl->val[(size_t)d * nqi + q] << c->qi[q].shift;
            uint32_t id;
            if (u64map_intern(&b->map, key, &id, NULL) != 0) {
                rc = ak_err_nomem(err);
                break;
            }
            b->ids[id] = d;
        }
        s = e;
    }
    if (rc != ANONKIT_OK) goto done;
    /* Per class, its best candidate. */
    size_t ncand = 0;
    for (size_t x0 = 0; x0 < nalive; x0++) {
        const uint32_t d = sorted[x0].id;
        const uint64_t count = cl->count[d];
        if (count <= k) continue;
        evict_cand best = {0, d, 0, 0, 0};
        for (uint32_t q = 0; q < nqi; q++) {
            const inc_qi *a = &c->qi[q];
            const uint32_t l = cl->lv[(size_t)d * nqi + q], dv = cl->val[(size_t)d * nqi + q];
            const double wq = w ? w[q] : 1.0;
            for (uint32_t l2 = l; l2-- > 0;) {
                uint32_t nt = 0;
                for (uint32_t i = start[d]; i < start[d + 1]; i++) {
                    const uint32_t v = a->gen[l2][c->code0[q][members[i]]];
                    if (!cnt[v]++) touched[nt++] = v;
                }
                int any = 0;
                for (uint32_t j = 0; j < nt; j++) {
                    const uint32_t v = touched[j];
                    if (cnt[v] < k || cnt[v] == count) continue;
                    any = 1;
                    const double save = (double)cnt[v] * wq * (a->ncp[l][dv] - a->ncp[l2][v]);
                    if (!(save > best.gain)) continue;
                    double gain = save;
                    for (uint32_t i = start[d]; i < start[d + 1] && gain > best.gain; i++) {
                        const uint32_t r = members[i];
                        if (a->gen[l2][c->code0[q][r]] == v) continue;
                        const double cc = cover_cost(&x, r, d);
                        if (cc < 0) gain = -1;
                        else gain -= cc - x.cost[d];
                    }
                    if (gain > best.gain) best = (evict_cand){gain, d, q, l2, v};
                }
                for (uint32_t j = 0; j < nt; j++) cnt[touched[j]] = 0;
                if (!any) break; /* no value of q at l2 holds k rows of d: none lower does */
            }
        }
        if (best.gain > 1e-9 * (1 + x.cost[d])) cand[ncand++] = best;
    }
    qsort(cand, ncand, sizeof *cand, cand_cmp);
    /* Apply best first, each measured again. */
    size_t nchg = 0;
    for (size_t m = 0; m < ncand; m++) {
        const evict_cand *e = &cand[m];
        const uint32_t d = e->d, q = e->q;
        if (x.changed[d] || grew[d] || !cl->count[d]) continue;
        const inc_qi *a = &c->qi[q];
        const uint32_t l = cl->lv[(size_t)d * nqi + q], dv = cl->val[(size_t)d * nqi + q];
        uint64_t stay = 0;
        double gain = 0;
        int ok = 1;
        for (uint32_t i = start[d]; i < start[d + 1] && ok; i++) {
            const uint32_t r = members[i];
            if (a->gen[e->l2][c->code0[q][r]] == e->v) {
                stay++;
                continue;
            }
            if (!x.covknown[r] || x.covcls[r] == UINT32_MAX || x.changed[x.covcls[r]] || !cl->count[x.covcls[r]]) {
                x.covknown[r] = 0;
                if (cover_cost(&x, r, d) < 0) ok = 0;
            }
            if (ok) gain -= x.covcost[r] - x.cost[d];
        }
        if (!ok || stay < k) continue;
        gain += (double)stay * (w ? w[q] : 1.0) * (a->ncp[l][dv] - a->ncp[e->l2][e->v]);
        if (!(gain > 1e-9 * (1 + x.cost[d]))) continue;
        for (uint32_t i = start[d]; i < start[d + 1]; i++) {
            const uint32_t r = members[i];
            if (a->gen[e->l2][c->code0[q][r]] == e->v) continue;
            const uint32_t to = x.covcls[r];
            class_of[r] = to;
            cl->count[to]++;
            cl->count[d]--;
            grew[to] = 1;
        }
        cl->lv[(size_t)d * nqi + q] = e->l2;
        cl->val[(size_t)d * nqi + q] = e->v;
        x.changed[d] = 1;
        /* D's new tuple may be another class's: merge D into it. */
        const uint32_t *dl = cl->lv + (size_t)d * nqi, *dvl = cl->val + (size_t)d * nqi;
        uint32_t same = UINT32_MAX;
        uint64_t dlv = 0, dkey = 0;
        for (uint32_t qq = 0; qq < nqi; qq++) {
            dlv = inc_with_level(c, dlv, qq, dl[qq]);
            dkey |= (uint64_t)dvl[qq] << c->qi[qq].shift;
        }
        for (size_t i = 0; i < x.nb && same == UINT32_MAX; i++) {
            if (x.b[i].lv != dlv) continue;
            const uint32_t id = u64map_find(&x.b[i].map, dkey);
            if (id != AK_NOT_FOUND && x.b[i].ids[id] != d && !x.changed[x.b[i].ids[id]] && cl->count[x.b[i].ids[id]])
                same = x.b[i].ids[id];
        }
        for (size_t i = 0; i < nchg && same == UINT32_MAX; i++) {
            const uint32_t f = chg[i];
            if (f != d && cl->count[f] && !memcmp(cl->lv + (size_t)f * nqi, dl, nqi * sizeof *dl) &&
                !memcmp(cl->val + (size_t)f * nqi, dvl, nqi * sizeof *dvl))
                same = f;
        }
        if (same != UINT32_MAX) {
            for (uint32_t i = start[d]; i < start[d + 1]; i++)
                if (class_of[members[i]] == d) class_of[members[i]] = same;
            cl->count[same] += cl->count[d];
            cl->count[d] = 0;
            grew[same] = 1;
        } else {
            chg[nchg++] = d;
        }
        (*applied)++;
    }
done:
    for (size_t i = 0; i < x.nb; i++) {
        u64map_free(&x.b[i].map);
        free(x.b[i].ids);
    }
    free(x.b);
    free(x.cost);
    free(x.changed);
    free(grew);
    free(x.covcls);
    free(x.covcost);
    free(x.covknown);
    free(start);
    free(members);
    free(sorted);
    free(cand);
    free(cnt);
    free(touched);
    free(chg);
    return rc;
}

int inc_local_evict(const inc_ctx *c, const double *w, uint64_t k, lift_classes *cl, uint32_t *class_of,
                    uint64_t *rounds, uint64_t *moves, ak_error *err)
{
    *rounds = *moves = 0;
    int rc = ANONKIT_OK;
    for (int round = 0; rc == ANONKIT_OK && round < EVICT_ROUNDS; round++) {
        uint64_t applied;
        rc = evict_round(c, w, k, cl, class_of, &applied, err);
        ++*rounds;
        *moves += applied;
        if (rc == ANONKIT_OK && !applied) break;
    }
    return rc;
}
