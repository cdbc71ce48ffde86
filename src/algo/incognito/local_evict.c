/* local_evict.c — the eviction pass of local recoding (issue 28, part 3):
 * after the iterations and lifting (local.c, local_lift.c), classes are
 * lowered once the rows that keep them high have moved to classes that
 * already cover them; and the passes after the iterations (inc_local_post).
 *
 * Owns: a greedy local search over the published classes under k-anonymity
 * alone, the converse of lifting. A candidate lowers class D in one QI, or in
 * two at once, to levels below D's: the groups of D's rows that share their
 * values there and hold at least k rows become classes at those levels (D
 * keeps the largest, a group whose tuple another class has joins it); every
 * other row of D moves to the cheapest other class whose labels cover it
 * (one hash lookup per distinct level vector of the classes, after a filter
 * on the labels of three QIs) or stays at D's
 * old tuple as a remainder of at least k rows (borrowing rows from the group
 * that saves least per row when it falls short), whichever costs least. A
 * candidate may also dissolve D (no lowering: its rows whose covers are
 * cheaper leave while D keeps k rows, or all leave). Its gain is what the
 * lowered rows save minus what the moved rows pay more. A round measures the
 * best candidate of every class, applies them best first, each measured again
 * on the classes as they are by then (a class whose tuple changed takes no
 * further part in the round, neither as source nor as target; one that grew
 * is no source), then, from k = POST_LARGE_K, merges pairs: a class and the
 * partner of least merge cost among those nearest to it in cost per row,
 * generalized to their common labels, lowered as one class as above when the
 * lowering saves more than the merge costs. The top-down specialization of
 * [Fung05] applied to one class (or two merged), with the rows that stop it
 * sent to classes that cover them, as in the relaxed partitioning of
 * [LeFevre06].
 *
 * Soundness: a moved row goes only to a class whose unchanged label tuple is
 * its own values generalized (the lookup is by that exact key), so the labels
 * cover it, and that class only grows; each lowered group keeps at least k
 * rows that generalize to its values, its other labels D's (or the merged
 * pair's common ones, which cover both); the remainder keeps D's old tuple,
 * which no other class holds, and k rows; a lowered tuple that another class
 * has merges with it (distinct label tuples). An applied candidate lowers the
 * weighted NCP sum (a merge: by more than the merge cost), so the pass never
 * raises the loss. */
#include "algo/incognito/local_internal.h"

#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "common/parallel.h"

/* One distinct level vector of the classes: its levels and a map from the
 * packed labels at those levels to the class (ids[map id]). */
typedef struct evict_bucket {
    double minc; /* the least weighted NCP per row of its classes */
    uint64_t lv;
    uint32_t level[64];
    const uint64_t **gen; /* per QI: the map from level-0 codes to its level's values, in their key field */
    u64map map;
    uint32_t *ids;
    /* A filter before the map: the bits of the labels of three QIs (fq, those with the most values at the bucket's
     * levels; fewer QIs repeat one) of every class in it, one per class at bloom_shift (a row whose bit is clear
     * has no class here). */
    uint32_t fq[3];
    uint32_t nrest, rest[64]; /* the other QIs: a key is the filter's labels and theirs */
    const uint64_t *fgen[3];  /* gen[fq[j]] */
    int bloom_shift;
    uint64_t *bloom;
} evict_bucket;

/* The bit of a bucket's filter for the labels fk (the key fields of its two QIs). */
static inline uint64_t bloom_bit(const evict_bucket *b, uint64_t fk)
{
    return (fk * 0x9E3779B97F4A7C15ULL) >> b->bloom_shift;
}

/* A lowering of a class: QIs q[0..nl) to levels l2[0..nl), each below the
 * class's level there. */
typedef struct evict_low {
    uint32_t nl, q[2], l2[2];
} evict_low;

static int bucket_cmp(const void *a, const void *b)
{
    const evict_bucket *x = a, *y = b;
    if (x->minc != y->minc) return x->minc < y->minc ? -1 : 1;
    return x->lv < y->lv ? -1 : x->lv > y->lv;
}

typedef struct evict_cand {
    double gain;
    uint32_t d;
    evict_low low;
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

/* Two QIs are lowered together only among the best this many single lowerings. */
enum { EVICT_PAIR_SINGLES = 6 };

/* A class looks for a partner to merge with among this many classes nearest to it in cost per row. */
enum { EVICT_MERGE_SCAN = 64 };

/* A row of a class's remainder with what moving it to its cover costs more. */
typedef struct evict_row {
    double delta;
    uint32_t row;
} evict_row;

static int row_cmp(const void *a, const void *b)
{
    const evict_row *x = a, *y = b;
    if (x->delta != y->delta) return x->delta < y->delta ? -1 : 1;
    return x->row < y->row ? -1 : x->row > y->row;
}

typedef struct cost_id {
    double cost;
    uint32_t id;
} cost_id;

static int cost_id_cmp(const void *a, const void *b)
{
    const cost_id *x = a, *y = b;
    if (x->cost != y->cost) return x->cost < y->cost ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

/* What a pass keeps across its rounds: per class, the signature of its
 * count and labels when it last had no gainful lowering (sig) or merge
 * (msig); 0: none. A class whose signature is unchanged is not measured again
 * (what changed around it may have made a move possible: a heuristic that
 * only skips candidates). */
typedef struct evict_memo {
    uint64_t *sig, *msig;
    size_t cap;
} evict_memo;

/* The signature of class d. */
static uint64_t class_sig(const lift_classes *cl, uint32_t d)
{
    uint64_t h = ak_mix64(cl->count[d] + 1);
    for (uint32_t q = 0; q < cl->nqi; q++)
        h = ak_mix64(h ^ ((uint64_t)cl->lv[(size_t)d * cl->nqi + q] << 32 | cl->val[(size_t)d * cl->nqi + q]));
    return h | 1;
}

/* Room for the classes of cl (ids only grow). */
static int memo_fit(evict_memo *m, size_t n, ak_error *err)
{
    if (n <= m->cap) return ANONKIT_OK;
    size_t cap = m->cap ? m->cap : 256;
    while (cap < n) cap *= 2;
    uint64_t *sig = realloc(m->sig, cap * sizeof *sig);
    if (sig) m->sig = sig;
    uint64_t *msig = realloc(m->msig, cap * sizeof *msig);
    if (msig) m->msig = msig;
    if (!sig || !msig) return ak_err_nomem(err);
    memset(m->sig + m->cap, 0, (cap - m->cap) * sizeof *sig);
    memset(m->msig + m->cap, 0, (cap - m->cap) * sizeof *msig);
    m->cap = cap;
    return ANONKIT_OK;
}

/* What a round works with. */
typedef struct evict_ctx {
    const inc_ctx *c;
    lift_classes *cl;
    uint32_t *class_of;
    const double *w;
    uint64_t k;
    double *cost;             /* per class: weighted NCP per row */
    unsigned char *changed;   /* per class: its tuple changed, it merged away or is new in this round */
    unsigned char *grew;      /* per class: it took rows in this round */
    evict_bucket *b;
    size_t nb;
    uint32_t *start, *members; /* rows of the classes at the start of the round */
    uint32_t *covcls;         /* per row: the cheapest other class covering it (UINT32_MAX: none), cached */
    double *covcost;
    unsigned char *covknown;
    u64scratch groups;        /* the groups of a class's rows under a lowering */
    uint32_t *cnt, *dest;     /* per group: its rows; the class that takes them */
    uint32_t *gid;            /* per row: its group */
    evict_row *rem;           /* rows of the class in the children of fewer than k rows */
    uint32_t *chg;            /* classes whose tuple is not in the buckets' maps (changed or new) */
    uint32_t *bycost, *pos;   /* the round's live classes by cost per row; each one's place there */
    evict_memo *memo;
    size_t nchg;
    uint32_t *rowcode;        /* per row: its level-0 codes of every QI, side by side (row-major) */
    uint64_t *field;          /* per QI and level: the map from level-0 codes to the level's values shifted into
                                 their key field (at fieldat[q] + level * card0) */
    size_t fieldat[64];
} evict_ctx;

/* The cheapest class other than own, unchanged in this round and holding
 * rows, whose labels cover row r; UINT32_MAX when there is none. */
static uint32_t find_cover(const evict_ctx *x, uint32_t r, uint32_t own)
{
    const inc_ctx *c = x->c;
    const uint32_t nqi = c->nqi, *code = x->rowcode + (size_t)r * nqi;
    uint32_t best = UINT32_MAX;
    for (size_t i = 0; i < x->nb; i++) {
        const evict_bucket *b = &x->b[i];
        if (best != UINT32_MAX && b->minc >= x->cost[best]) break;
        const uint64_t fk = b->fgen[0][code[b->fq[0]]] | b->fgen[1][code[b->fq[1]]] | b->fgen[2][code[b->fq[2]]];
        const uint64_t bit = bloom_bit(b, fk);
        if (!(b->bloom[bit >> 6] >> (bit & 63) & 1)) continue;
        uint64_t key = fk;
        for (uint32_t j = 0; j < b->nrest; j++) key |= b->gen[b->rest[j]][code[b->rest[j]]];
        const uint32_t id = u64map_find(&b->map, key);
        if (id == AK_NOT_FOUND) continue;
        const uint32_t e = b->ids[id];
        if (e == own || x->changed[e] || !x->cl->count[e]) continue;
        if (best == UINT32_MAX || x->cost[e] < x->cost[best]) best = e;
    }
    return best;
}

/* The cover of row r (a row of class own), cached while its class is valid;
 * its cost per row, or -1 when no class covers it. */
static double cover_cost(evict_ctx *x, uint32_t r, uint32_t own)
{
    if (x->covknown[r] && x->covcls[r] != UINT32_MAX && (x->changed[x->covcls[r]] || !x->cl->count[x->covcls[r]]))
        x->covknown[r] = 0;
    if (!x->covknown[r]) {
        x->covcls[r] = find_cover(x, r, own);
        x->covcost[r] = x->covcls[r] == UINT32_MAX ? -1 : x->cost[x->covcls[r]];
        x->covknown[r] = 1;
    }
    return x->covcost[r];
}

/* A class of the round whose tuple is (lv, val) other than d, UINT32_MAX
 * when none holds rows. */
static uint32_t same_tuple(const evict_ctx *x, uint32_t d, const uint32_t *lv, const uint32_t *val)
{
    const inc_ctx *c = x->c;
    const uint32_t nqi = c->nqi;
    uint64_t plv = 0, key = 0;
    for (uint32_t q = 0; q < nqi; q++) {
        plv = inc_with_level(c, plv, q, lv[q]);
        key |= (uint64_t)val[q] << c->qi[q].shift;
    }
    for (size_t i = 0; i < x->nb; i++) {
        if (x->b[i].lv != plv) continue;
        const uint32_t id = u64map_find(&x->b[i].map, key);
        if (id == AK_NOT_FOUND) break;
        const uint32_t f = x->b[i].ids[id];
        if (f != d && !x->changed[f] && x->cl->count[f]) return f;
        break;
    }
    for (size_t i = 0; i < x->nchg; i++) {
        const uint32_t f = x->chg[i];
        if (f != d && x->cl->count[f] && !memcmp(x->cl->lv + (size_t)f * nqi, lv, nqi * sizeof *lv) &&
            !memcmp(x->cl->val + (size_t)f * nqi, val, nqi * sizeof *val))
            return f;
    }
    return UINT32_MAX;
}

/* The key of row r's values at the lowering's levels (in the key fields of its QIs). */
static uint64_t low_key(const inc_ctx *c, const evict_low *lw, uint32_t r)
{
    uint64_t key = 0;
    for (uint32_t i = 0; i < lw->nl; i++)
        key |= (uint64_t)c->qi[lw->q[i]].gen[lw->l2[i]][c->code0[lw->q[i]][r]] << c->qi[lw->q[i]].shift;
    return key;
}

/* The gain of lowering class d by lw (see the top): the groups of rows that
 * share their values at the lower levels and hold at least k rows become
 * classes (d keeps the largest), the other rows move to their covers or stay
 * at d's tuple as a remainder of at least k rows (borrowing rows from the
 * group that saves least per row when it falls short), whichever costs least.
 * With `apply` it is made. -1: no group holds k rows; 0: no gain. */
static double evict_eval(evict_ctx *x, uint32_t d, const uint32_t *rows, size_t nrows, const evict_low *lw, int apply,
                         double min_gain, ak_error *err, int *rc)
{
    const inc_ctx *c = x->c;
    const uint32_t nqi = c->nqi;
    const uint64_t k = x->k;
    lift_classes *cl = x->cl;
    u64scratch_reset(&x->groups);
    uint32_t ng = 0;
    for (size_t i = 0; i < nrows; i++) {
        const uint32_t r = rows[i];
        if (x->class_of[r] != d) continue;
        uint32_t id;
        int inserted;
        if (u64scratch_intern(&x->groups, low_key(c, lw, r), &id, &inserted) != 0) {
            *rc = ak_err_nomem(err);
            return -1;
        }
        if (inserted) {
            x->cnt[id] = 0;
            ng++;
        }
        x->cnt[id]++;
        x->gid[r] = id;
    }
    double save = 0, least = -1;
    uint32_t kept = 0, big = UINT32_MAX, lend = UINT32_MAX;
    const uint64_t keep = lw->nl ? k : UINT64_MAX; /* no lowering: every row may leave (the class dissolves) */
    for (uint32_t g = 0; g < ng; g++) {
        if (x->cnt[g] < keep) continue;
        const uint64_t key = x->groups.keys[x->groups.slot_of[g]];
        double per = 0;
        for (uint32_t i = 0; i < lw->nl; i++) {
            const uint32_t q = lw->q[i];
            per += (x->w ? x->w[q] : 1.0) * (c->qi[q].ncp[cl->lv[(size_t)d * nqi + q]][cl->val[(size_t)d * nqi + q]] -
                                             c->qi[q].ncp[lw->l2[i]][inc_key_value(c, key, q)]);
        }
        save += per * x->cnt[g];
        kept++;
        if (big == UINT32_MAX || x->cnt[g] > x->cnt[big]) big = g;
        if (x->cnt[g] > k && (lend == UINT32_MAX || per < least)) {
            lend = g;
            least = per;
        }
    }
    if (!kept && lw->nl) return -1;
    double gain = -1;
    size_t m = 0, moved = 0;
    uint64_t borrow = 0;
    for (size_t i = 0; i < nrows; i++) {
        const uint32_t r = rows[i];
        if (x->class_of[r] != d || x->cnt[x->gid[r]] >= keep) continue;
        const double cc = cover_cost(x, r, d);
        x->rem[m++] = (evict_row){cc < 0 ? 1e300 : cc - x->cost[d], r};
    }
    if (m > 32) {
        qsort(x->rem, m, sizeof *x->rem, row_cmp);
    } else { /* few rows (most classes): insertion sort */
        for (size_t i = 1; i < m; i++) {
            const evict_row t = x->rem[i];
            size_t j = i;
            while (j > 0 && row_cmp(&x->rem[j - 1], &t) > 0) {
                x->rem[j] = x->rem[j - 1];
                j--;
            }
            x->rem[j] = t;
        }
    }
    /* Move the j cheapest to move, keep the rest (none, or k with what is borrowed). */
    double best = 1e300, sum = 0;
    for (size_t j = 0; j <= m; j++) {
        if (j > 0) {
            if (x->rem[j - 1].delta >= 1e299) break;
            sum += x->rem[j - 1].delta;
        }
        const size_t left = m - j;
        double cost = sum;
        uint64_t b = 0;
        if (left > 0 && left < k) {
            b = k - left;
            if (lend == UINT32_MAX || x->cnt[lend] < k + b) continue;
            cost += (double)b * least;
        }
        if (cost < best) {
            best = cost;
            moved = j;
            borrow = b;
        }
    }
    if (best < 1e299) gain = save - best;
    if (gain < 0) gain = 0;
    if (!apply || !(gain > min_gain)) return gain;
    const size_t left = m - moved;
    uint32_t remid = UINT32_MAX;
    if (!lw->nl) {
        remid = d;
    } else if (left > 0 || borrow) { /* the remainder keeps d's tuple */
        uint32_t lv[64], val[64];
        memcpy(lv, cl->lv + (size_t)d * nqi, nqi * sizeof *lv);
        memcpy(val, cl->val + (size_t)d * nqi, nqi * sizeof *val);
        if ((*rc = lift_add(cl, lv, val, 0, &remid, err)) < 0) return 0;
        x->changed[remid] = 1;
        x->chg[x->nchg++] = remid;
    }
    for (size_t j = 0; j < m; j++) {
        const uint32_t r = x->rem[j].row, to = j < moved ? x->covcls[r] : remid;
        if (to == d) continue;
        x->class_of[r] = to;
        cl->count[to]++;
        cl->count[d]--;
        if (j < moved) x->grew[to] = 1;
    }
    if (!lw->nl) {
        x->changed[d] = 1;
        return gain;
    }
    /* Every kept group a class at the lower levels: the class that already has that tuple, d for the largest, or a
     * new one. */
    int into_d = 1;
    for (uint32_t g = 0; g < ng; g++) {
        if (x->cnt[g] < keep) continue;
        const uint64_t key = x->groups.keys[x->groups.slot_of[g]];
        uint32_t lv[64], val[64], id;
        memcpy(lv, cl->lv + (size_t)d * nqi, nqi * sizeof *lv);
        memcpy(val, cl->val + (size_t)d * nqi, nqi * sizeof *val);
        for (uint32_t i = 0; i < lw->nl; i++) {
            lv[lw->q[i]] = lw->l2[i];
            val[lw->q[i]] = inc_key_value(c, key, lw->q[i]);
        }
        id = same_tuple(x, d, lv, val);
        if (id != UINT32_MAX) {
            x->grew[id] = 1;
            if (g == big) into_d = 0;
        } else if (g == big) {
            id = d;
            memcpy(cl->lv + (size_t)d * nqi, lv, nqi * sizeof *lv);
            memcpy(cl->val + (size_t)d * nqi, val, nqi * sizeof *val);
        } else {
            if ((*rc = lift_add(cl, lv, val, 0, &id, err)) < 0) return 0;
            x->changed[id] = 1;
            x->chg[x->nchg++] = id;
        }
        x->dest[g] = id;
    }
    for (size_t i = 0; i < nrows; i++) {
        const uint32_t r = rows[i];
        if (x->class_of[r] != d) continue;
        const uint32_t g = x->gid[r];
        uint32_t to = x->dest[g];
        if (g == lend && borrow) {
            to = remid;
            borrow--;
        }
        if (to == d) continue;
        x->class_of[r] = to;
        cl->count[to]++;
        cl->count[d]--;
    }
    x->changed[d] = 1;
    if (into_d) x->chg[x->nchg++] = d;
    return gain;
}

/* The best lowering of class d (rows[0..nrows), those of d among them):
 * dissolving it (with `dissolve`), one QI, or two QIs each of which alone
 * leaves a group of k rows; into *best when it gains more. */
static void best_lowering(evict_ctx *x, uint32_t d, const uint32_t *rows, size_t nrows, int dissolve,
                          evict_cand *best, ak_error *err, int *rc)
{
    const uint32_t nqi = x->c->nqi;
    evict_low single[64 * 8];
    double sgain[64 * 8];
    uint32_t ns = 0;
    if (dissolve) {
        const evict_low none = {0, {0, 0}, {0, 0}};
        const double gain = evict_eval(x, d, rows, nrows, &none, 0, 0, err, rc);
        if (gain > best->gain) best->gain = gain, best->low = none;
    }
    for (uint32_t q = 0; q < nqi && *rc == ANONKIT_OK; q++) {
        for (uint32_t l2 = x->cl->lv[(size_t)d * nqi + q]; l2-- > 0;) {
            const evict_low lw = {1, {q, 0}, {l2, 0}};
            const double gain = evict_eval(x, d, rows, nrows, &lw, 0, 0, err, rc);
            if (gain < 0) break; /* no value of q at l2 holds k rows of d: none lower does */
            if (gain > best->gain) best->gain = gain, best->low = lw;
            if (ns < 64 * 8) {
                uint32_t at = ns++; /* by gain, best first */
                while (at > 0 && sgain[at - 1] < gain) {
                    single[at] = single[at - 1];
                    sgain[at] = sgain[at - 1];
                    at--;
                }
                single[at] = lw;
                sgain[at] = gain;
            }
        }
    }
    const uint32_t top = EVICT_PAIR_SINGLES;
    if (ns > top) ns = top;
    for (uint32_t i = 0; i < ns && *rc == ANONKIT_OK; i++)
        for (uint32_t j = i + 1; j < ns && *rc == ANONKIT_OK; j++) {
            if (single[i].q[0] == single[j].q[0]) continue;
            const evict_low lw = {2, {single[i].q[0], single[j].q[0]}, {single[i].l2[0], single[j].l2[0]}};
            const double gain = evict_eval(x, d, rows, nrows, &lw, 0, 0, err, rc);
            if (gain > best->gain) best->gain = gain, best->low = lw;
        }
}

/* The labels of class d raised to cover class e too (least common ancestors
 * per QI) into lv, val; returns the weighted NCP per row there. */
static double lca(const evict_ctx *x, uint32_t d, uint32_t e, uint32_t *lv, uint32_t *val)
{
    const inc_ctx *c = x->c;
    const uint32_t nqi = c->nqi;
    double cost = 0;
    for (uint32_t q = 0; q < nqi; q++) {
        const inc_qi *a = &c->qi[q];
        const uint32_t la = x->cl->lv[(size_t)d * nqi + q], lb = x->cl->lv[(size_t)e * nqi + q];
        const uint32_t va = x->cl->val[(size_t)d * nqi + q], vb = x->cl->val[(size_t)e * nqi + q];
        uint32_t l = la > lb ? la : lb;
        for (;; l++) {
            const uint32_t ua = l == la ? va : a->up[la * (a->height + 1) + l][va];
            const uint32_t ub = l == lb ? vb : a->up[lb * (a->height + 1) + l][vb];
            if (ua == ub) {
                lv[q] = l;
                val[q] = ua;
                break;
            }
        }
        cost += (x->w ? x->w[q] : 1.0) * a->ncp[lv[q]][val[q]];
    }
    return cost;
}

/* Pairs of classes merged at their common labels and lowered again
 * (evict_eval on the union), when what the lowering saves exceeds what the
 * merge costs: per class, dearest first, the partner of least merge cost. */
static int merge_phase(evict_ctx *x, const lvid *sorted, size_t nalive, uint64_t *applied, ak_error *err)
{
    lift_classes *cl = x->cl;
    const uint32_t nqi = x->c->nqi;
    int rc = ANONKIT_OK;
    uint32_t *rows = malloc((x->c->nrows ? x->c->nrows : 1) * sizeof *rows);
    x->bycost = malloc((nalive ? nalive : 1) * sizeof *x->bycost);
    x->pos = malloc((cl->n ? cl->n : 1) * sizeof *x->pos);
    cost_id *tmp = malloc((nalive ? nalive : 1) * sizeof *tmp);
    if (!rows || !x->bycost || !x->pos || !tmp) {
        free(rows);
        free(x->bycost);
        free(x->pos);
        free(tmp);
        return ak_err_nomem(err);
    }
    for (size_t i = 0; i < nalive; i++) tmp[i] = (cost_id){x->cost[sorted[i].id], sorted[i].id};
    qsort(tmp, nalive, sizeof *tmp, cost_id_cmp);
    for (size_t i = 0; i < nalive; i++) {
        x->bycost[i] = tmp[i].id;
        x->pos[tmp[i].id] = (uint32_t)i;
    }
    free(tmp);
    for (size_t i = 0; i < nalive && rc == ANONKIT_OK; i++) {
        const uint32_t d = sorted[i].id;
        if (x->changed[d] || x->grew[d] || !cl->count[d]) continue;
        const uint64_t sig = class_sig(cl, d);
        if (x->memo->msig[d] == sig) continue;
        uint32_t lv[64], val[64], blv[64], bval[64], partner = UINT32_MAX;
        double pen = 0;
        /* Partners by cost outwards from d's (bycost[pos[d]] is d): the common labels cost at least the dearer
         * class's labels, so a partner of cost ce costs the merge at least count(d) (ce - cd) when dearer and
         * k (cd - ce) when cheaper; the scan stops on each side when that bound reaches the best. */
        const double cd = x->cost[d];
        size_t up = x->pos[d] + 1, down = x->pos[d];
        const size_t scan_max = EVICT_MERGE_SCAN;
        for (size_t scanned = 0; scanned < scan_max; scanned++) {
            const int can_up = up < nalive, can_down = down > 0;
            if (!can_up && !can_down) break;
            size_t j;
            if (can_up && (!can_down || x->cost[x->bycost[up]] - cd <= cd - x->cost[x->bycost[down - 1]])) {
                j = up++;
                if (partner != UINT32_MAX && (double)cl->count[d] * (x->cost[x->bycost[j]] - cd) >= pen) {
                    up = nalive;
                    continue;
                }
            } else {
                j = --down;
                if (partner != UINT32_MAX && (double)x->k * (cd - x->cost[x->bycost[j]]) >= pen) {
                    down = 0;
                    continue;
                }
            }
            const uint32_t e = x->bycost[j];
            if (x->changed[e] || x->grew[e] || !cl->count[e]) continue;
            const double tc = lca(x, d, e, lv, val);
            const double p = (double)(cl->count[d] + cl->count[e]) * tc - (double)cl->count[d] * cd -
                             (double)cl->count[e] * x->cost[e];
            if (partner == UINT32_MAX || p < pen) {
                pen = p;
                partner = e;
                memcpy(blv, lv, sizeof lv);
                memcpy(bval, val, sizeof val);
            }
        }
        if (partner == UINT32_MAX) continue;
        const uint32_t e = partner;
        if (same_tuple(x, d, blv, bval) != UINT32_MAX) {
            x->memo->msig[d] = sig;
            continue;
        } /* (e's own labels: e covers d, lifting's move) */
        /* The union as d at the common labels, tried. */
        size_t nr = 0;
        for (uint32_t m = x->start[d]; m < x->start[d + 1]; m++)
            if (x->class_of[x->members[m]] == d) rows[nr++] = x->members[m];
        for (uint32_t m = x->start[e]; m < x->start[e + 1]; m++)
            if (x->class_of[x->members[m]] == e) rows[nr++] = x->members[m];
        uint32_t olv[64], oval[64];
        memcpy(olv, cl->lv + (size_t)d * nqi, nqi * sizeof *olv);
        memcpy(oval, cl->val + (size_t)d * nqi, nqi * sizeof *oval);
        const uint64_t nd = cl->count[d], ne = cl->count[e];
        memcpy(cl->lv + (size_t)d * nqi, blv, nqi * sizeof *blv);
        memcpy(cl->val + (size_t)d * nqi, bval, nqi * sizeof *bval);
        for (size_t r = nd; r < nr; r++) x->class_of[rows[r]] = d;
        cl->count[d] = nd + ne;
        cl->count[e] = 0;
        const double oldcost = x->cost[d];
        x->cost[d] = 0;
        for (uint32_t q = 0; q < nqi; q++) x->cost[d] += (x->w ? x->w[q] : 1.0) * x->c->qi[q].ncp[blv[q]][bval[q]];
        x->changed[d] = x->changed[e] = 1; /* neither is a cover while tried */
        evict_cand best = {.gain = 0, .d = d};
        best_lowering(x, d, rows, nr, 0, &best, err, &rc);
        const double min_gain = pen + 1e-9 * (1 + oldcost);
        if (rc == ANONKIT_OK && best.gain > min_gain && evict_eval(x, d, rows, nr, &best.low, 1, min_gain, err, &rc) > min_gain) {
            (*applied)++;
            continue;
        }
        if (rc != ANONKIT_OK) break;
        /* Undone (a lowering that was made gained at least the merge's cost, so only an untaken one is undone). */
        memcpy(cl->lv + (size_t)d * nqi, olv, nqi * sizeof *olv);
        memcpy(cl->val + (size_t)d * nqi, oval, nqi * sizeof *oval);
        for (size_t r = nd; r < nr; r++) x->class_of[rows[r]] = e;
        cl->count[d] = nd;
        cl->count[e] = ne;
        x->cost[d] = oldcost;
        x->changed[d] = x->changed[e] = 0; /* no cached cover is d or e: they were changed while tried */
        x->memo->msig[d] = sig;
    }
    free(rows);
    free(x->bycost);
    free(x->pos);
    return rc;
}

/* One part of a round's measurement: the live classes sorted[part],
 * sorted[part + nparts], ... each with its best candidate into best[] (its
 * place in sorted; gain 0: none). A part works on a copy of the round's
 * context with scratch of its own (groups, cnt, rem); what else it writes
 * is per row or per class of its own classes (gid, the cover cache,
 * memo->sig), and the classes do not change while they are measured, so the
 * result is the same on any number of threads. */
typedef struct evict_part {
    evict_ctx x;
    const lvid *sorted;
    size_t nalive;
    unsigned part, nparts;
    evict_cand *best;
    int rc;
    ak_error err;
} evict_part;

static void *evict_measure_part(void *arg)
{
    evict_part *p = arg;
    evict_ctx *x = &p->x;
    const lift_classes *cl = x->cl;
    for (size_t x0 = p->part; x0 < p->nalive && p->rc == ANONKIT_OK; x0 += p->nparts) {
        const uint32_t d = p->sorted[x0].id;
        p->best[x0] = (evict_cand){.gain = 0, .d = d};
        if (cl->count[d] < x->k) continue;
        const uint64_t sig = class_sig(cl, d);
        if (x->memo->sig[d] == sig) continue;
        evict_cand best = {.gain = 0, .d = d};
        best_lowering(x, d, x->members + x->start[d], x->start[d + 1] - x->start[d], 1, &best, &p->err, &p->rc);
        if (best.gain > 1e-9 * (1 + x->cost[d])) p->best[x0] = best;
        else x->memo->sig[d] = sig;
    }
    return NULL;
}

/* One round (see the top): *applied candidates taken. */
static int evict_round(const inc_ctx *c, const double *w, uint64_t k, lift_classes *cl, uint32_t *class_of,
                       evict_memo *memo, unsigned threads, size_t part_min, uint64_t *applied, ak_error *err)
{
    const uint32_t nqi = c->nqi;
    const size_t n = c->nrows, nc = cl->n, ncap = nc + n / (k ? k : 1) + 2; /* classes a round may reach */
    *applied = 0;
    evict_ctx x = {.c = c, .cl = cl, .class_of = class_of, .w = w, .k = k, .memo = memo};
    if (memo_fit(memo, nc, err) < 0) return ANONKIT_E_NOMEM;
    x.cost = malloc(ncap * sizeof *x.cost);
    x.changed = calloc(ncap, 1);
    x.grew = calloc(ncap, 1);
    x.covcls = malloc((n ? n : 1) * sizeof *x.covcls);
    x.covcost = malloc((n ? n : 1) * sizeof *x.covcost);
    x.covknown = calloc(n ? n : 1, 1);
    x.start = calloc(nc + 1, sizeof *x.start);
    x.members = malloc((n ? n : 1) * sizeof *x.members);
    x.rem = malloc((n ? n : 1) * sizeof *x.rem);
    lvid *sorted = malloc((nc ? nc : 1) * sizeof *sorted);
    x.b = calloc(nc ? nc : 1, sizeof *x.b);
    evict_cand *cand = malloc((nc ? nc : 1) * sizeof *cand); /* per live class, then the candidates */
    x.cnt = malloc((n ? n : 1) * sizeof *x.cnt);
    x.dest = malloc((n ? n : 1) * sizeof *x.dest);
    x.gid = malloc((n ? n : 1) * sizeof *x.gid);
    x.chg = malloc(ncap * sizeof *x.chg);
    x.rowcode = malloc((n ? n : 1) * nqi * sizeof *x.rowcode);
    size_t nfield = 0;
    for (uint32_t q = 0; q < nqi; q++) {
        x.fieldat[q] = nfield;
        nfield += (size_t)(c->qi[q].height + 1) * c->qi[q].card[0];
    }
    x.field = malloc((nfield ? nfield : 1) * sizeof *x.field);
    int rc = ANONKIT_OK;
    if (!x.rowcode || !x.field || !x.cost || !x.changed || !x.grew || !x.covcls || !x.covcost || !x.covknown || !x.start || !x.members ||
        !x.rem || !sorted || !x.b || !cand || !x.cnt || !x.dest || !x.gid || !x.chg) {
        rc = ak_err_nomem(err);
        goto done;
    }
    uint32_t *start = x.start, *members = x.members;
    /* The rows' codes side by side: a cover search builds one key per bucket from them. */
    for (uint32_t q = 0; q < nqi; q++) {
        const inc_qi *a = &c->qi[q];
        for (size_t r = 0; r < n; r++) x.rowcode[r * nqi + q] = c->code0[q][r];
        for (uint32_t l = 0; l <= a->height; l++)
            for (uint32_t v = 0; v < a->card[0]; v++)
                x.field[x.fieldat[q] + (size_t)l * a->card[0] + v] = (uint64_t)a->gen[l][v] << a->shift;
    }
    for (size_t r = 0; r < n; r++)
        if (class_of[r] != PARTITION_SUPPRESSED) start[class_of[r] + 1]++;
    for (size_t i = 0; i < nc; i++) start[i + 1] += start[i];
    for (size_t r = 0; r < n; r++)
        if (class_of[r] != PARTITION_SUPPRESSED) members[start[class_of[r]]++] = (uint32_t)r;
    for (size_t i = nc; i-- > 0;) start[i + 1] = start[i];
    start[0] = 0;
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
    /* Buckets: the classes by level vector, each with its map of labels. */
    qsort(sorted, nalive, sizeof *sorted, lvid_cmp);
    for (size_t s = 0; s < nalive && rc == ANONKIT_OK;) {
        size_t e = s;
        while (e < nalive && sorted[e].lv == sorted[s].lv) e++;
        evict_bucket *b = &x.b[x.nb++];
        b->lv = sorted[s].lv;
        for (uint32_t q = 0; q < nqi; q++) b->level[q] = inc_level(c, b->lv, q);
        for (uint32_t j = 0; j < 3; j++) { /* the QIs of most values (the first on ties); once all are taken, again */
            uint32_t pick = UINT32_MAX;
            for (uint32_t q = 0; q < nqi; q++) {
                int taken = 0;
                for (uint32_t i = 0; i < j; i++) taken |= b->fq[i] == q;
                if (!taken && (pick == UINT32_MAX || c->qi[q].card[b->level[q]] > c->qi[pick].card[b->level[pick]]))
                    pick = q;
            }
            b->fq[j] = pick != UINT32_MAX ? pick : b->fq[j - 1];
        }
        b->nrest = 0;
        for (uint32_t q = 0; q < nqi; q++)
            if (q != b->fq[0] && q != b->fq[1] && q != b->fq[2]) b->rest[b->nrest++] = q;
        int bits = 6; /* at least 8 bits per class, at least one word */
        while (((size_t)1 << bits) < 8 * (e - s)) bits++;
        b->bloom_shift = 64 - bits;
        b->bloom = calloc((size_t)1 << (bits - 6), sizeof *b->bloom);
        b->ids = malloc((e - s) * sizeof *b->ids);
        b->gen = malloc(nqi * sizeof *b->gen);
        if (b->gen)
            for (uint32_t q = 0; q < nqi; q++) b->gen[q] = x.field + x.fieldat[q] + (size_t)b->level[q] * c->qi[q].card[0];
        if (!b->ids || !b->gen || !b->bloom || u64map_init(&b->map, e - s) != 0) {
            rc = ak_err_nomem(err);
            break;
        }
        uint64_t fmask = 0;
        for (int j = 0; j < 3; j++) b->fgen[j] = b->gen[b->fq[j]];
        for (int j = 0; j < 3; j++) {
            const inc_qi *a = &c->qi[b->fq[j]];
            fmask |= a->bits == 64 ? ~(uint64_t)0 : (((uint64_t)1 << a->bits) - 1) << a->shift;
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
            const uint64_t bit = bloom_bit(b, key & fmask);
            b->bloom[bit >> 6] |= (uint64_t)1 << (bit & 63);
            if (j == s || x.cost[d] < b->minc) b->minc = x.cost[d];
        }
        s = e;
    }
    if (rc != ANONKIT_OK) goto done;
    qsort(x.b, x.nb, sizeof *x.b, bucket_cmp); /* cheapest first: a cover search stops at a dearer bucket */
    /* Per class, its best candidate: the classes measured in parts on up to `threads` threads (part 0 with the
     * round's own scratch), then taken in their order. */
    size_t ncand = 0;
    {
        evict_part parts[AK_MAX_PARTS];
        const unsigned np = ak_parts(nalive, threads, part_min ? part_min : EVICT_PART_MIN);
        for (unsigned i = 0; i < np; i++) {
            parts[i] = (evict_part){.x = x, .sorted = sorted, .nalive = nalive, .part = i, .nparts = np,
                                    .best = cand, .rc = ANONKIT_OK};
            ak_err_clear(&parts[i].err);
            if (i == 0) continue;
            parts[i].x.groups = (u64scratch){0};
            parts[i].x.cnt = malloc((n ? n : 1) * sizeof *parts[i].x.cnt);
            parts[i].x.rem = malloc((n ? n : 1) * sizeof *parts[i].x.rem);
            if (!parts[i].x.cnt || !parts[i].x.rem) parts[i].rc = ak_err_nomem(&parts[i].err);
        }
        ak_run_parts(parts, sizeof *parts, np, evict_measure_part);
        for (unsigned i = 0; i < np; i++) {
            if (parts[i].rc != ANONKIT_OK && rc == ANONKIT_OK) {
                rc = parts[i].rc;
                *err = parts[i].err;
            }
            if (i == 0) {
                x.groups = parts[0].x.groups; /* it may have grown */
                continue;
            }
            u64scratch_free(&parts[i].x.groups);
            free(parts[i].x.cnt);
            free(parts[i].x.rem);
        }
        for (size_t x0 = 0; x0 < nalive && rc == ANONKIT_OK; x0++)
            if (cand[x0].gain > 0) cand[ncand++] = cand[x0];
    }
    qsort(cand, ncand, sizeof *cand, cand_cmp);
    /* Apply best first, each measured again. */
    for (size_t m = 0; m < ncand && rc == ANONKIT_OK; m++) {
        const evict_cand *e = &cand[m];
        const uint32_t d = e->d;
        if (x.changed[d] || x.grew[d] || !cl->count[d]) continue;
        if (evict_eval(&x, d, members + start[d], start[d + 1] - start[d], &e->low, 1, 1e-9, err, &rc) > 1e-9 &&
            rc == ANONKIT_OK)
            (*applied)++;
    }
    if (rc == ANONKIT_OK && k >= POST_LARGE_K) rc = merge_phase(&x, sorted, nalive, applied, err);
done:
    for (size_t i = 0; i < x.nb; i++) {
        u64map_free(&x.b[i].map);
        free(x.b[i].ids);
        free(x.b[i].gen);
        free(x.b[i].bloom);
    }
    free(x.b);
    free(x.cost);
    free(x.changed);
    free(x.grew);
    free(x.covcls);
    free(x.covcost);
    free(x.covknown);
    free(x.start);
    free(x.members);
    free(x.rem);
    free(sorted);
    free(cand);
    free(x.cnt);
    free(x.dest);
    free(x.gid);
    u64scratch_free(&x.groups);
    free(x.chg);
    free(x.rowcode);
    free(x.field);
    return rc;
}

static int evict_pass(const inc_ctx *c, const double *w, uint64_t k, lift_classes *cl, uint32_t *class_of,
                      evict_memo *memo, unsigned threads, size_t part_min, uint64_t *rounds, uint64_t *moves,
                      ak_error *err)
{
    *rounds = *moves = 0;
    int rc = ANONKIT_OK;
    for (int round = 0; rc == ANONKIT_OK && round < EVICT_ROUNDS; round++) {
        uint64_t applied;
        rc = evict_round(c, w, k, cl, class_of, memo, threads, part_min, &applied, err);
        ++*rounds;
        *moves += applied;
        if (rc == ANONKIT_OK && !applied) break;
    }
    return rc;
}

int inc_local_post(inc_ctx *c, const double *w, uint64_t k, int evict, lift_classes *cl, uint32_t *class_of,
                   unsigned threads, size_t part_min, inc_local_post_stats *st, ak_error *err)
{
    memset(st, 0, sizeof *st);
    int rc = ANONKIT_OK;
    evict_memo memo = {0};
    const int cycles = k >= POST_LARGE_K ? POST_CYCLES : 1;
    for (int cycle = 0; rc == ANONKIT_OK && cycle < cycles; cycle++) {
        inc_local_lift_stats ls;
        uint64_t er = 0, em = 0;
        rc = inc_local_lift(c, w, k, cl, class_of, cycle ? POST_LIFT_LATER : POST_LIFT_FIRST, threads, part_min, &ls,
                            err);
        if (!evict) { /* lifting alone (to compare) */
            st->lift_rounds += ls.rounds;
            st->lift_moves += ls.moves;
            break;
        }
        if (rc == ANONKIT_OK) rc = evict_pass(c, w, k, cl, class_of, &memo, threads, part_min, &er, &em, err);
        st->lift_rounds += ls.rounds;
        st->lift_moves += ls.moves;
        st->evict_rounds += er;
        st->evict_moves += em;
        if (!ls.moves && !em) break;
    }
    free(memo.sig);
    free(memo.msig);
    return rc;
}
