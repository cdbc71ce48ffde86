/* nearest.c — exact nearest-centre search for iDistance ([Ghinita07] §5: "each data
 * point is assigned to its closest cluster center"), used by the k-means
 * iterations on the sample and by the key of every row.
 *
 * The centres are taken in an order that keeps neighbours together (the
 * Hilbert order of their cells) and grouped bottom-up in eights: blocks of 8
 * centres, each with its bounding box; blocks of 8 such boxes, each with
 * theirs; and so on up to a single block (a Hilbert-packed R-tree). A query
 * computes the 8 squared distances of a block at once (coordinates stored
 * axis by axis, so the loop over the 8 vectorizes), goes into the nearest
 * boxes first and skips every box whose distance is already above the best
 * squared distance found. A box's distance is built from the same
 * differences as the distances of the centres inside it, so with rounding it
 * still never exceeds theirs: a box that may hold a centre at the best
 * distance is visited, and ties go to the lowest centre index — the answer of
 * a scan of every centre in index order, exactly. Where the processor has
 * AVX2 and FMA, that scan is what runs (nn_scan): in floats, then the few
 * nearest again in doubles; in 7 dimensions it is faster than the tree. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "algo/onedim/mapping.h"
#include "common/cpu.h"

#define NN_FAN 8

void hil_nn_free(hil_nn *t)
{
    free(t->id), free(t->pos), free(t->first), free(t->count), free(t->lo), free(t->hi), free(t->cf);
    memset(t, 0, sizeof *t);
}

/* Index in lo / hi of axis q of item `item` at level l (level 0: the
 * centres): blocks of 8 items, axis by axis within a block. */
static size_t nn_at(const hil_nn *t, size_t l, size_t item, unsigned q)
{
    return ((t->first[l] + item / NN_FAN) * t->d + q) * NN_FAN + item % NN_FAN;
}

int hil_nn_init(hil_nn *t, const double *centers, size_t n, unsigned d, const uint32_t *order, ak_error *err)
{
    memset(t, 0, sizeof *t);
    t->d = d;
    t->n = n;
    /* levels of items: the centres, then boxes of 8, ... down to one block */
    size_t levels = 1, blocks = (n + NN_FAN - 1) / NN_FAN;
    for (size_t m = n; m > NN_FAN; levels++) {
        m = (m + NN_FAN - 1) / NN_FAN;
        blocks += (m + NN_FAN - 1) / NN_FAN;
    }
    const size_t dd = d ? d : 1;
    t->id = malloc((n ? n : 1) * sizeof *t->id);
    t->pos = malloc((n ? n : 1) * sizeof *t->pos);
    t->first = malloc(levels * sizeof *t->first);
    t->count = malloc(levels * sizeof *t->count);
    t->lo = calloc((blocks ? blocks : 1) * dd * NN_FAN, sizeof *t->lo);
    t->hi = calloc((blocks ? blocks : 1) * dd * NN_FAN, sizeof *t->hi);
    const size_t leaf_blocks = (n + NN_FAN - 1) / NN_FAN;
    t->cf = malloc((leaf_blocks ? leaf_blocks : 1) * dd * NN_FAN * sizeof *t->cf);
    if (!t->id || !t->pos || !t->first || !t->count || !t->lo || !t->hi || !t->cf) {
        hil_nn_free(t);
        return ak_err_nomem(err);
    }
    t->nlevels = (unsigned)levels;
    t->first[0] = 0;
    t->count[0] = n;
    for (size_t i = 0; i < leaf_blocks * dd * NN_FAN; i++) t->cf[i] = 1e30f; /* empty lanes: never nearest */
    for (size_t i = 0; i < n; i++) {
        t->id[i] = order ? order[i] : (uint32_t)i;
        t->pos[t->id[i]] = (uint32_t)i;
        for (unsigned q = 0; q < d; q++) {
            t->lo[nn_at(t, 0, i, q)] = t->hi[nn_at(t, 0, i, q)] = centers[(size_t)t->id[i] * d + q];
            t->cf[nn_at(t, 0, i, q)] = (float)centers[(size_t)t->id[i] * d + q];
        }
    }
    for (size_t l = 1; l < levels; l++) {
        t->first[l] = t->first[l - 1] + (t->count[l - 1] + NN_FAN - 1) / NN_FAN;
        t->count[l] = (t->count[l - 1] + NN_FAN - 1) / NN_FAN;
        for (size_t b = 0; b < t->count[l]; b++) /* box b bounds the items of block b below */
            for (unsigned q = 0; q < d; q++) {
                const size_t from = b * NN_FAN, to = from + NN_FAN < t->count[l - 1] ? from + NN_FAN : t->count[l - 1];
                double lo = t->lo[nn_at(t, l - 1, from, q)], hi = t->hi[nn_at(t, l - 1, from, q)];
                for (size_t i = from + 1; i < to; i++) {
                    if (t->lo[nn_at(t, l - 1, i, q)] < lo) lo = t->lo[nn_at(t, l - 1, i, q)];
                    if (t->hi[nn_at(t, l - 1, i, q)] > hi) hi = t->hi[nn_at(t, l - 1, i, q)];
                }
                t->lo[nn_at(t, l, b, q)] = lo;
                t->hi[nn_at(t, l, b, q)] = hi;
            }
    }
    return ANONKIT_OK;
}

typedef struct nn_best {
    double d2;
    size_t id;
} nn_best;

/* Centre `id` at squared distance d2 becomes the best if nearer, or as near
 * with a lower index. */
static inline void nn_offer(nn_best *best, double d2, size_t id)
{
    if (d2 < best->d2 || (d2 == best->d2 && id < best->id)) best->d2 = d2, best->id = id;
}

/* The squared distance to p of the centre at leaf position j, in doubles,
 * summed as nn_visit sums it. Always inline: called out of line from
 * nn_scan's loop, the iDistance mapping took a quarter longer. */
static inline __attribute__((always_inline)) double nn_exact2(const hil_nn *t, size_t j, const double *p)
{
    double s = 0;
    for (unsigned q = 0; q < t->d; q++) {
        const double e = p[q] - t->lo[nn_at(t, 0, j, q)];
        s += e * e;
    }
    return s;
}

/* Visits block b of level l: the centres' squared distances (level 0) or the
 * boxes' (0 inside), all 8 at once; then the centres that tie or beat the
 * best, or the boxes that may hold such a centre, nearest first. */
static void nn_visit(const hil_nn *t, size_t l, size_t b, const double *p, nn_best *best)
{
    const unsigned d = t->d;
    const size_t first = b * NN_FAN, nb = t->count[l] - first < NN_FAN ? t->count[l] - first : NN_FAN;
    double s[NN_FAN] = {0};
    const double *lo = t->lo + (t->first[l] + b) * d * NN_FAN, *hi = t->hi + (t->first[l] + b) * d * NN_FAN;
    if (l == 0) {
        for (unsigned q = 0; q < d; q++)
#pragma GCC unroll 8
            for (size_t j = 0; j < NN_FAN; j++) {
                const double e = p[q] - lo[q * NN_FAN + j];
                s[j] += e * e;
            }
        for (size_t j = 0; j < nb; j++) nn_offer(best, s[j], t->id[first + j]);
        return;
    }
    for (unsigned q = 0; q < d; q++)
#pragma GCC unroll 8
        for (size_t j = 0; j < NN_FAN; j++) {
            const double below = lo[q * NN_FAN + j] - p[q], above = p[q] - hi[q * NN_FAN + j]; /* one is <= 0 */
            /* max(below, 0) + max(above, 0) without branches: |x| + x is 2x or 0, exactly */
            const double e = 0.5 * ((fabs(below) + below) + (fabs(above) + above));
            s[j] += e * e;
        }
    size_t order[NN_FAN], n = 0;
    for (size_t j = 0; j < nb; j++) { /* boxes that may hold a centre at the best distance, nearest first */
        if (s[j] > best->d2) continue;
        size_t at = n++;
        while (at > 0 && s[order[at - 1]] > s[j]) {
            order[at] = order[at - 1];
            at--;
        }
        order[at] = j;
    }
    for (size_t i = 0; i < n; i++)
        if (s[order[i]] <= best->d2) nn_visit(t, l - 1, first + order[i], p, best);
}

#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
#define NN_HAVE_SCAN 1

/* The nearest centre by a scan of all of them in floats, eight at a time
 * (AVX2, FMA): a float squared distance is within NN_FLOAT_SLACK of the
 * double one for places in [0, 1] (and a little beyond), so every centre
 * whose float distance is within twice that of the least one is measured
 * again in doubles, as nn_visit does, ties to the lowest index: the same
 * answer, bit for bit, as the tree. Much faster than the tree in many
 * dimensions, where its boxes overlap. */
#define NN_FLOAT_SLACK(d) (1e-5 * (double)((d) + 1))

/* Centres kept in floats on the stack by nn_scan between its two passes
 * (more are measured twice). */
#define NN_SCAN_KEPT 4096

/* The float squared distances to the point of the 8 centres of a block (c:
 * their coordinates axis by axis): q = 0, 1, ... in turn, one fused
 * multiply-add each; the point's coordinates broadcast in pv when D (the
 * constant d) is not 0, else taken from pf. */
__attribute__((target("avx2,fma"), always_inline)) static inline __m256 nn_block_f(const float *c, unsigned d,
                                                                                 const __m256 *pv, const float *pf,
                                                                                 const unsigned D)
{
    __m256 s = _mm256_setzero_ps();
#pragma GCC unroll 8
    for (unsigned q = 0; q < d; q++) {
        const __m256 e = _mm256_sub_ps(D ? pv[q] : _mm256_set1_ps(pf[q]), _mm256_loadu_ps(c + q * NN_FAN));
        s = _mm256_fmadd_ps(e, e, s);
    }
    return s;
}

/* nn_scan for centres of D coordinates: D a constant in each of the copies
 * nn_scan makes for D = 1..8 (the point's coordinates then stay in
 * registers, broadcast once), or the general case (D = 0: t->d, read from
 * memory each block). The sums are the same either way: q = 0, 1, ... in
 * turn, one fused multiply-add each. */
__attribute__((target("avx2,fma"), always_inline)) static inline size_t nn_scan_d(const hil_nn *t, const double *p,
                                                                                double *best2, double *second2,
                                                                                const unsigned D)
{
    const unsigned d = D ? D : t->d;
    const size_t blocks = (t->n + NN_FAN - 1) / NN_FAN;
    const int keep = blocks * NN_FAN <= NN_SCAN_KEPT;
    float pf[64], kept[NN_SCAN_KEPT];
    for (unsigned q = 0; q < d; q++) pf[q] = (float)p[q];
    __m256 pv[8];
#pragma GCC unroll 8
    for (unsigned q = 0; q < D; q++) pv[q] = _mm256_set1_ps(pf[q]);
    __m256 least = _mm256_set1_ps(INFINITY);
    for (size_t b = 0; b < blocks; b++) {
        const __m256 s = nn_block_f(t->cf + b * d * NN_FAN, d, pv, pf, D);
        if (keep) _mm256_storeu_ps(kept + b * NN_FAN, s);
        least = _mm256_min_ps(least, s);
    }
    float lanes[8];
    _mm256_storeu_ps(lanes, least);
    float m = lanes[0];
    for (int a = 1; a < 8; a++)
        if (lanes[a] < m) m = lanes[a];
    const __m256 bound = _mm256_set1_ps((float)((double)m + 2 * NN_FLOAT_SLACK(d)));
    nn_best best = {INFINITY, SIZE_MAX};
    for (size_t b = 0; b < blocks; b++) {
        const __m256 s = keep ? _mm256_loadu_ps(kept + b * NN_FAN) : nn_block_f(t->cf + b * d * NN_FAN, d, pv, pf, D);
        for (unsigned mask = (unsigned)_mm256_movemask_ps(_mm256_cmp_ps(s, bound, _CMP_LE_OQ)); mask; mask &= mask - 1) {
            const size_t j = b * NN_FAN + (size_t)__builtin_ctz(mask);
            if (j >= t->n) continue;
            nn_offer(&best, nn_exact2(t, j, p), t->id[j]);
        }
    }
    *best2 = best.d2;
    if (second2) { /* the least float distance of the others, less the float error */
        float least_other = INFINITY;
        if (keep) {
            const size_t at = best.id == SIZE_MAX ? SIZE_MAX : t->pos[best.id];
            for (size_t j = 0; j < t->n; j++)
                if (j != at && kept[j] < least_other) least_other = kept[j];
        }
        *second2 = !keep ? best.d2 : t->n < 2 ? INFINITY : fmax(best.d2, (double)least_other - NN_FLOAT_SLACK(d));
    }
    return best.id == SIZE_MAX ? 0 : best.id;
}

__attribute__((target("avx2,fma"))) static size_t nn_scan(const hil_nn *t, const double *p, double *best2,
                                                         double *second2)
{
    switch (t->d) {
    case 1: return nn_scan_d(t, p, best2, second2, 1);
    case 2: return nn_scan_d(t, p, best2, second2, 2);
    case 3: return nn_scan_d(t, p, best2, second2, 3);
    case 4: return nn_scan_d(t, p, best2, second2, 4);
    case 5: return nn_scan_d(t, p, best2, second2, 5);
    case 6: return nn_scan_d(t, p, best2, second2, 6);
    case 7: return nn_scan_d(t, p, best2, second2, 7);
    case 8: return nn_scan_d(t, p, best2, second2, 8);
    default: return nn_scan_d(t, p, best2, second2, 0);
    }
}
#else
#define NN_HAVE_SCAN 0
#endif

size_t hil_nn_nearest(const hil_nn *t, const double *p, size_t hint, double *best2, double *second2)
{
#if NN_HAVE_SCAN
    if (!t->tree_search && t->n && t->d <= 64 && ak_cpu_has(AK_CPU_AVX2) && ak_cpu_has(AK_CPU_FMA))
        return nn_scan(t, p, best2, second2);
#endif
    nn_best best = {INFINITY, SIZE_MAX};
    if (hint < t->n) /* a first candidate: a tighter bound from the start */
        best = (nn_best){nn_exact2(t, t->pos[hint], p), hint};
    if (t->n) nn_visit(t, t->nlevels - 1, 0, p, &best);
    *best2 = best.d2;
    if (second2) *second2 = t->n < 2 ? INFINITY : best.d2; /* (true, if no help) */
    return best.id == SIZE_MAX ? 0 : best.id;
}
