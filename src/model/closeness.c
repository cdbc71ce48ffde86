/* closeness.c — the reference distribution, the three EMD forms of [Li07]
 * §4.2, δ-disclosure [Brickell08] Def. 4 and β-likeness [Cao12] Def. 2–3 as
 * predicates on a class's histogram with value identities (closeness.h). */
#include "model/closeness.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/numparse.h"
#include "model/closeness_internal.h"

int model_parse_t_distance(const char *text, unsigned *out)
{
    if (!strcmp(text, "equal")) *out = MODEL_T_EQUAL;
    else if (!strcmp(text, "ordered")) *out = MODEL_T_ORDERED;
    else if (!strcmp(text, "hierarchical")) *out = MODEL_T_HIERARCHICAL;
    else return -1;
    return 0;
}

int model_parse_beta_variant(const char *text, unsigned *out)
{
    if (!strcmp(text, "basic")) *out = MODEL_BETA_BASIC;
    else if (!strcmp(text, "enhanced")) *out = MODEL_BETA_ENHANCED;
    else return -1;
    return 0;
}

const char *model_t_distance_name(unsigned d)
{
    switch (d) {
    case MODEL_T_EQUAL: return "equal";
    case MODEL_T_ORDERED: return "ordered";
    case MODEL_T_HIERARCHICAL: return "hierarchical";
    }
    return "auto";
}

const char *model_beta_variant_name(unsigned v) { return v == MODEL_BETA_ENHANCED ? "enhanced" : "basic"; }

void model_ref_free(model_ref *ref)
{
    if (!ref) return;
    free(ref->count);
    free(ref->rank);
    free(ref->cq);
    free(ref->sq);
    free(ref->leaf);
    free(ref->parent);
    free(ref->level);
    free(ref->nodeq);
    free(ref);
}

uint64_t model_ref_rows(const model_ref *ref) { return ref->total; }
unsigned model_ref_distance(const model_ref *ref) { return ref->distance; }

typedef struct ranked {
    double value;
    uint32_t code;
} ranked;

static int cmp_ranked(const void *a, const void *b)
{
    const ranked *x = a, *y = b;
    if (x->value != y->value) return x->value < y->value ? -1 : 1;
    return (x->code > y->code) - (x->code < y->code);
}

/* Ordered distance: ranks of the distinct numeric values present, their
 * cumulative table counts CQ[r] and the prefix sums SQ[r] = CQ[0]+..+CQ[r-1]. */
static int build_ordered(model_ref *ref, const strmap *dict, const char *column, ak_error *err)
{
    const uint32_t nv = ref->nvalues;
    ranked *rk = malloc((nv ? nv : 1) * sizeof *rk);
    ref->rank = malloc((nv ? nv : 1) * sizeof *ref->rank);
    if (!rk || !ref->rank) {
        free(rk);
        return ak_err_nomem(err);
    }
    uint32_t used = 0;
    for (uint32_t v = 0; v < nv; v++) {
        ref->rank[v] = UINT32_MAX;
        if (!ref->count[v]) continue;
        double x;
        if (ak_num_parse(strmap_key(dict, v), strmap_key_len(dict, v), &x) != 0) {
            free(rk);
            return ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0,
                              "--t-distance ordered needs a numeric sensitive column, but '%s' holds '%s'", column,
                              AK_SHOW(strmap_key(dict, v), strmap_key_len(dict, v)));
        }
        rk[used++] = (ranked){x, v};
    }
    qsort(rk, used, sizeof *rk, cmp_ranked);
    uint32_t m = 0;
    for (uint32_t i = 0; i < used; i++) {
        if (i > 0 && rk[i].value != rk[i - 1].value) m++;
        ref->rank[rk[i].code] = m;
    }
    ref->m = used ? m + 1 : 0;
    free(rk);
    ref->cq = calloc(ref->m + 1, sizeof *ref->cq);
    ref->sq = calloc(ref->m + 1, sizeof *ref->sq);
    if (!ref->cq || !ref->sq) return ak_err_nomem(err);
    for (uint32_t v = 0; v < nv; v++)
        if (ref->count[v]) ref->cq[ref->rank[v]] += ref->count[v];
    for (uint32_t r = 1; r < ref->m; r++) ref->cq[r] += ref->cq[r - 1];
    for (uint32_t r = 0; r < ref->m; r++) ref->sq[r + 1] = ref->sq[r] + ref->cq[r];
    return ANONKIT_OK;
}

/* Hierarchical distance: each value's leaf node, and the table count under every node. */
static int build_hierarchical(model_ref *ref, const strmap *dict, const model_shier *h, const char *column,
                              ak_error *err)
{
    const uint32_t nv = ref->nvalues, nn = h->nnodes;
    ref->nnodes = nn;
    ref->height = h->height;
    ref->leaf = malloc((nv ? nv : 1) * sizeof *ref->leaf);
    ref->parent = malloc((nn ? nn : 1) * sizeof *ref->parent);
    ref->level = malloc((nn ? nn : 1) * sizeof *ref->level);
    ref->nodeq = calloc(nn ? nn : 1, sizeof *ref->nodeq);
    if (!ref->leaf || !ref->parent || !ref->level || !ref->nodeq) return ak_err_nomem(err);
    memcpy(ref->parent, h->parent, nn * sizeof *ref->parent);
    memcpy(ref->level, h->level, nn * sizeof *ref->level);
    for (uint32_t v = 0; v < nv; v++) {
        ref->leaf[v] = UINT32_MAX;
        if (!ref->count[v]) continue;
        const uint32_t node = shier_leaf(h, strmap_key(dict, v), strmap_key_len(dict, v));
        if (node == UINT32_MAX)
            return ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0,
                              "--t-distance hierarchical: value '%s' of sensitive column '%s' is not a leaf of its "
                              "hierarchy",
                              AK_SHOW(strmap_key(dict, v), strmap_key_len(dict, v)), column);
        ref->leaf[v] = node;
        for (uint32_t x = node; x != UINT32_MAX; x = ref->parent[x]) ref->nodeq[x] += ref->count[v];
    }
    return ANONKIT_OK;
}

int model_ref_build(model_ref **out, const strmap *dict, const uint64_t *counts, unsigned distance,
                    const model_shier *h, const char *column, ak_error *err)
{
    *out = NULL;
    model_ref *ref = calloc(1, sizeof *ref);
    if (!ref) return ak_err_nomem(err);
    ref->nvalues = dict->count;
    ref->distance = distance;
    ref->count = malloc((ref->nvalues ? ref->nvalues : 1) * sizeof *ref->count);
    if (!ref->count) {
        model_ref_free(ref);
        return ak_err_nomem(err);
    }
    for (uint32_t v = 0; v < ref->nvalues; v++) {
        ref->count[v] = counts[v];
        ref->total += counts[v];
        if (counts[v]) ref->present++;
    }
    int rc = ANONKIT_OK;
    if (distance == MODEL_T_ORDERED) rc = build_ordered(ref, dict, column, err);
    else if (distance == MODEL_T_HIERARCHICAL) {
        if (!h)
            rc = ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0,
                            "--t-distance hierarchical needs a hierarchy for sensitive column '%s' (--hierarchy %s=FILE)",
                            column, column);
        else rc = build_hierarchical(ref, dict, h, column, err);
    }
    if (rc < 0) {
        model_ref_free(ref);
        return rc;
    }
    *out = ref;
    return ANONKIT_OK;
}

model_work *model_work_new(const model_ref *ref)
{
    model_work *w = calloc(1, sizeof *w);
    if (!w) return NULL;
    const size_t nv = ref->nvalues ? ref->nvalues : 1, nn = ref->nnodes ? ref->nnodes : 1;
    w->pairs = malloc(nv * sizeof *w->pairs);
    if (ref->distance == MODEL_T_HIERARCHICAL) {
        w->ncount = calloc(nn, sizeof *w->ncount);
        w->pos = calloc(nn, sizeof *w->pos);
        w->touched = malloc(nn * sizeof *w->touched);
    }
    if (!w->pairs || (ref->distance == MODEL_T_HIERARCHICAL && (!w->ncount || !w->pos || !w->touched))) {
        model_work_free(w);
        return NULL;
    }
    return w;
}

void model_work_free(model_work *w)
{
    if (!w) return;
    free(w->pairs);
    free(w->ncount);
    free(w->pos);
    free(w->touched);
    free(w);
}

static inline __int128 abs128(__int128 x) { return x < 0 ? -x : x; }

/* Equal distance [Li07] §4.2: EMD = 1/2 sum_i |p_i - q_i|; scaled by 2nN:
 * sum over all values of |c_i N - Q_i n|, the values outside the class adding Q_i n. */
static __int128 emd_equal(const model_ref *ref, uint64_t count, const uint32_t *codes, const uint32_t *counts,
                          size_t n)
{
    const __int128 N = ref->total, cn = count;
    __int128 s = N * cn; /* sum_i Q_i n over every value */
    for (size_t i = 0; i < n; i++) {
        const __int128 q = (__int128)ref->count[codes[i]] * cn;
        s += abs128((__int128)counts[i] * N - q) - q;
    }
    return s;
}

static int cmp_pair_rank(const void *a, const void *b)
{
    const uint32_t *x = a, *y = b;
    return (x[0] > y[0]) - (x[0] < y[0]);
}

/* sum_{i in [a, b)} |P - n CQ[i]| for a fixed P = N * (class rows up to i):
 * CQ is non-decreasing, so one binary search splits the range into the part
 * below P and the part above. */
static __int128 ordered_segment(const model_ref *ref, __int128 P, uint64_t n, uint32_t a, uint32_t b)
{
    if (a >= b) return 0;
    uint32_t lo = a, hi = b; /* first j in [a, b) with n CQ[j] > P, or b */
    while (lo < hi) {
        const uint32_t mid = lo + (hi - lo) / 2;
        if ((__int128)n * ref->cq[mid] > P) hi = mid;
        else lo = mid + 1;
    }
    const uint32_t j = lo;
    const __int128 below = P * (j - a) - (__int128)n * (ref->sq[j] - ref->sq[a]);
    const __int128 above = (__int128)n * (ref->sq[b] - ref->sq[j]) - P * (b - j);
    return below + above;
}

/* Ordered distance [Li07] §4.2: EMD = 1/(m-1) sum_{i=1}^{m} |r_1 + ... + r_i|,
 * r_j = p_j - q_j over the m distinct values in ascending order; scaled by
 * (m-1)nN: sum_i |N CP_i - n CQ_i|, CP/CQ the cumulative class/table counts.
 * O(d log m) for a class of d distinct values. */
static __int128 emd_ordered(const model_ref *ref, model_work *w, uint64_t count, const uint32_t *codes,
                            const uint32_t *counts, size_t n)
{
    uint32_t(*pr)[2] = w->pairs;
    for (size_t i = 0; i < n; i++) {
        pr[i][0] = ref->rank[codes[i]];
        pr[i][1] = counts[i];
    }
    qsort(pr, n, sizeof *pr, cmp_pair_rank);
    const __int128 N = ref->total;
    __int128 s = 0, cp = 0;
    uint32_t at = 0;
    for (size_t i = 0; i < n; i++) {
        s += ordered_segment(ref, N * cp, count, at, pr[i][0]);
        at = pr[i][0];
        cp += pr[i][1];
    }
    s += ordered_segment(ref, N * cp, count, at, ref->m);
    return s;
}

/* Hierarchical distance [Li07] §4.2: EMD = sum over internal nodes N of
 * height(N)/H * min(pos_extra(N), neg_extra(N)); scaled by H nN with
 * extra(N) = N cnt(N) - n Q(N). Since pos - neg = extra(N),
 * min = pos_extra(N) - max(0, extra(N)); a child the class does not touch has
 * extra <= 0 and adds nothing to pos_extra, so only the class's leaves and
 * their ancestors are visited: O(d H). */
static __int128 emd_hierarchical(const model_ref *ref, model_work *w, uint64_t count, const uint32_t *codes,
                                 const uint32_t *counts, size_t n)
{
    size_t nt = 0;
    for (size_t i = 0; i < n; i++)
        for (uint32_t x = ref->leaf[codes[i]]; x != UINT32_MAX; x = ref->parent[x]) {
            if (w->ncount[x] == 0) w->touched[nt++] = x;
            w->ncount[x] += counts[i];
        }
    const __int128 N = ref->total, cn = count;
    for (size_t i = 0; i < nt; i++) {
        const uint32_t x = w->touched[i];
        const __int128 extra = N * w->ncount[x] - cn * ref->nodeq[x];
        if (extra > 0 && ref->parent[x] != UINT32_MAX) w->pos[ref->parent[x]] += extra;
    }
    __int128 s = 0;
    for (size_t i = 0; i < nt; i++) {
        const uint32_t x = w->touched[i];
        if (ref->level[x] > 0) {
            const __int128 extra = N * w->ncount[x] - cn * ref->nodeq[x];
            s += (__int128)ref->level[x] * (w->pos[x] - (extra > 0 ? extra : 0));
        }
        w->ncount[x] = 0;
        w->pos[x] = 0;
    }
    return s;
}

void model_emd_scaled(const model_ref *ref, model_work *w, uint64_t count, const uint32_t *codes,
                      const uint32_t *counts, size_t n, __int128 *num, __int128 *den)
{
    const __int128 nN = (__int128)count * ref->total;
    switch (ref->distance) {
    case MODEL_T_ORDERED:
        *num = ref->m > 1 ? emd_ordered(ref, w, count, codes, counts, n) : 0;
        *den = ref->m > 1 ? nN * (ref->m - 1) : 1;
        return;
    case MODEL_T_HIERARCHICAL:
        *num = ref->height > 0 ? emd_hierarchical(ref, w, count, codes, counts, n) : 0;
        *den = ref->height > 0 ? nN * ref->height : 1;
        return;
    default:
        *num = emd_equal(ref, count, codes, counts, n);
        *den = 2 * nN;
    }
}

double model_emd(const model_ref *ref, model_work *w, uint64_t count, const uint32_t *codes, const uint32_t *counts,
                 size_t n)
{
    if (!count) return 0;
    __int128 num, den;
    model_emd_scaled(ref, w, count, codes, counts, n, &num, &den);
    return (double)((long double)num / (long double)den);
}

/* x <= bound, with the documented relative tolerance. */
static inline int within(long double x, long double bound)
{
    return x <= bound + bound * (long double)MODEL_DIST_TOLERANCE;
}

static int check(const model_dist *d, const model_ref *ref, model_work *w, uint64_t count, const uint32_t *codes,
                 const uint32_t *counts, size_t n, char *buf, size_t size)
{
    if (d->t >= 0) {
        __int128 num, den;
        model_emd_scaled(ref, w, count, codes, counts, n, &num, &den);
        if (!within((long double)num, (long double)d->t * (long double)den)) {
            if (buf)
                snprintf(buf, size, "EMD (%s distance) of the sensitive distribution to the table's is %.6Lg > t = %g",
                         model_t_distance_name(ref->distance), (long double)num / (long double)den, d->t);
            return 0;
        }
    }
    const long double N = (long double)ref->total, cn = (long double)count;
    if (d->delta > 0) {
        /* e^-δ Q n <= c N <= e^δ Q n for every value of the table. */
        const long double up = expl((long double)d->delta), down = expl(-(long double)d->delta);
        size_t present = 0;
        for (size_t i = 0; i < n; i++) {
            const long double cN = (long double)counts[i] * N, Qn = (long double)ref->count[codes[i]] * cn;
            if (!within(cN, up * Qn) || !within(down * Qn, cN)) {
                if (buf)
                    snprintf(buf, size, "a sensitive value has share %u/%llu, against %llu/%llu in the table: "
                             "|ln ratio| = %.6Lg > delta = %g", counts[i], (unsigned long long)count,
                             (unsigned long long)ref->count[codes[i]], (unsigned long long)ref->total,
                             fabsl(logl(cN / Qn)), d->delta);
                return 0;
            }
            present++;
        }
        if (present < ref->present) {
            if (buf)
                snprintf(buf, size, "%zu of the table's %u sensitive values are missing from the class, "
                         "which delta-disclosure privacy forbids", (size_t)(ref->present - present), ref->present);
            return 0;
        }
    }
    if (d->beta > 0) {
        for (size_t i = 0; i < n; i++) {
            const uint64_t Q = ref->count[codes[i]];
            const long double cN = (long double)counts[i] * N, Qn = (long double)Q * cn;
            long double b = (long double)d->beta;
            if (d->beta_variant == MODEL_BETA_ENHANCED) {
                const long double cap = -logl((long double)Q / N);
                if (cap < b) b = cap;
            }
            if (cN > Qn && !within(cN - Qn, b * Qn)) {
                if (buf)
                    snprintf(buf, size, "a sensitive value has share %u/%llu, against %llu/%llu in the table: "
                             "relative increase %.6Lg > %s beta %.6Lg", counts[i], (unsigned long long)count,
                             (unsigned long long)Q, (unsigned long long)ref->total, (cN - Qn) / Qn,
                             model_beta_variant_name(d->beta_variant), b);
                return 0;
            }
        }
    }
    return 1;
}

int model_dist_holds(const model_dist *d, const model_ref *ref, model_work *w, uint64_t count, const uint32_t *codes,
                     const uint32_t *counts, size_t n)
{
    return check(d, ref, w, count, codes, counts, n, NULL, 0);
}

int model_dist_explain(const model_dist *d, const model_ref *ref, model_work *w, uint64_t count,
                       const uint32_t *codes, const uint32_t *counts, size_t n, char *buf, size_t size)
{
    if (size) buf[0] = '\0';
    return check(d, ref, w, count, codes, counts, n, buf, size);
}

const uint32_t *model_dist_weights(const model_dist *d, const model_ref *ref)
{
    return d->t >= 0 && ref->distance == MODEL_T_ORDERED && ref->m > 1 ? ref->rank : NULL;
}

int model_dist_may_hold(const model_dist *d, const model_ref *ref, uint64_t count, uint64_t rank_sum)
{
    if (!(d->t >= 0) || ref->distance != MODEL_T_ORDERED || ref->m <= 1 || !count) return 1;
    const __int128 N = ref->total, n = count;
    const __int128 lb = N * (n * ref->m - (__int128)rank_sum) - n * ref->sq[ref->m];
    return within((long double)(lb < 0 ? -lb : lb), (long double)d->t * (long double)(n * N * (ref->m - 1)));
}

void model_achieved_init(model_achieved *a)
{
    a->t = 0;
    a->delta = 0;
    a->beta = 0;
    a->beta_enhanced_ok = 1;
    a->classes = 0;
}

void model_achieved_add(model_achieved *a, const model_ref *ref, model_work *w, uint64_t count,
                        const uint32_t *codes, const uint32_t *counts, size_t n)
{
    if (!count) return;
    a->classes++;
    const double t = model_emd(ref, w, count, codes, counts, n);
    if (t > a->t) a->t = t;
    const long double N = (long double)ref->total, cn = (long double)count;
    if (n < ref->present) a->delta = INFINITY;
    for (size_t i = 0; i < n; i++) {
        const uint64_t Q = ref->count[codes[i]];
        const long double cN = (long double)counts[i] * N, Qn = (long double)Q * cn;
        const double dl = (double)fabsl(logl(cN / Qn));
        if (dl > a->delta) a->delta = dl;
        if (cN > Qn) {
            const double b = (double)((cN - Qn) / Qn);
            if (b > a->beta) a->beta = b;
            if ((long double)b > -logl((long double)Q / N) * (1 + (long double)MODEL_DIST_TOLERANCE))
                a->beta_enhanced_ok = 0;
        }
    }
}

int model_ref_for(const model_dist *d, const strmap *dict, const uint64_t *counts, const char *column,
                  model_ref **out, ak_error *err)
{
    unsigned distance = d->t >= 0 ? d->t_distance : MODEL_T_EQUAL;
    if (distance == MODEL_T_AUTO) {
        distance = MODEL_T_ORDERED;
        if (d->hierarchy) distance = MODEL_T_HIERARCHICAL;
        else
            for (uint32_t v = 0; v < dict->count && distance == MODEL_T_ORDERED; v++) {
                double x;
                if (counts[v] && ak_num_parse(strmap_key(dict, v), strmap_key_len(dict, v), &x) != 0)
                    distance = MODEL_T_EQUAL;
            }
    }
    model_shier *h = NULL;
    if (distance == MODEL_T_HIERARCHICAL && d->hierarchy) AK_CHECK(model_shier_read(&h, d->hierarchy, err));
    const int rc = model_ref_build(out, dict, counts, distance, h, column, err);
    model_shier_free(h);
    return rc;
}

void model_achieved_format(const model_achieved *a, unsigned distance, char *buf, size_t size)
{
    char delta[64];
    if (isinf(a->delta)) snprintf(delta, sizeof delta, "none (a class lacks a value of the table)");
    else snprintf(delta, sizeof delta, "%.6g", a->delta);
    snprintf(buf, size, "least t %.6g (%s distance), least delta %s, least beta %.6g%s", a->t,
             model_t_distance_name(distance), delta, a->beta,
             a->beta_enhanced_ok ? "" : " (no beta satisfies enhanced beta-likeness)");
}

int model_dist_hist_holds(const model_dist *d, const model_ref *ref, model_work *w, uint64_t count,
                          const ak_hist *whole, const ak_hist *h, int minus, uint32_t *codes, uint32_t *counts)
{
    if (!w) return 1;
    if (h->weight && !model_dist_may_hold(d, ref, count, minus ? whole->wsum - h->wsum : h->wsum)) return 0;
    const size_t n = minus ? ak_hist_pairs_minus(whole, h, codes, counts) : ak_hist_pairs(h, codes, counts);
    return model_dist_holds(d, ref, w, count, codes, counts, n);
}
