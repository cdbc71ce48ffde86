/* mapping.c — the Hilbert and iDistance mappings of [Ghinita07] §5.
 *
 * Every QI code gets a place in [0, 1] and a cell of the Hilbert grid (2^bits
 * cells per QI). A numeric value is placed by its distance from the
 * attribute's minimum over its range, as NCP measures it, and scaled into
 * the grid. A categorical value keeps its in-order leaf position ([Ghinita07] Figure
 * 11) with the hierarchy's shape added: its cell comes from aligned blocks
 * that nest like the hierarchy, its place from gaps that grow with the level
 * of the lowest common ancestor (hil_hierarchy_cells / _places, mapping.h).
 * The Hilbert key is the cell's index on the d-dimensional Hilbert curve
 * (J. Skilling, "Programming the Hilbert curve", AIP Conf. Proc. 707, 2004);
 * d * bits may exceed 64, so keys are multiword. iDistance (Zhang et al.,
 * TODS 2005) clusters a 10 % sample of the places into c centres with
 * k-means (from k-means++ start centres), orders the centres by their
 * Hilbert key, and keys a row by (its nearest centre's rank, its Euclidean
 * distance to it). */
#include "algo/onedim/mapping.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/parallel.h"
#include "common/rng.h"
#include "io/extsort.h"

void hil_hilbert_key(const uint32_t *coords, unsigned d, unsigned bits, uint64_t *key)
{
    uint32_t x[d ? d : 1];
    memcpy(x, coords, d * sizeof *x);
    const unsigned words = (d * bits + 63) / 64;
    memset(key, 0, words * sizeof *key);
    if (!d || !bits) return;
    /* Skilling's AxestoTranspose: inverse undo, then Gray encode. */
    const uint32_t top = 1u << (bits - 1);
    for (uint32_t q = top; q > 1; q >>= 1) {
        const uint32_t p = q - 1;
        for (unsigned i = 0; i < d; i++) {
            if (x[i] & q) {
                x[0] ^= p;
            } else {
                uint32_t t = (x[0] ^ x[i]) & p;
                x[0] ^= t;
                x[i] ^= t;
            }
        }
    }
    for (unsigned i = 1; i < d; i++) x[i] ^= x[i - 1];
    uint32_t t = 0;
    for (uint32_t q = top; q > 1; q >>= 1)
        if (x[d - 1] & q) t ^= q - 1;
    for (unsigned i = 0; i < d; i++) x[i] ^= t;
    /* The transposed index: bit b of x[i] is index bit (bits-1-b)*d + i from the top. */
    unsigned pos = 0;
    for (unsigned b = bits; b-- > 0;)
        for (unsigned i = 0; i < d; i++, pos++)
            if ((x[i] >> b) & 1u) key[pos / 64] |= 1ull << (63 - pos % 64);
}

int hil_curve_init(hil_curve *c, unsigned d, unsigned bits, ak_error *err)
{
    memset(c, 0, sizeof *c);
    c->d = d;
    c->bits = bits;
    c->words = (d * bits + 63) / 64;
    if (!d || !bits || d * bits > 128) return ANONKIT_OK;
    const unsigned bytes = (bits + 7) / 8;
    c->spread = malloc(bytes * 256 * sizeof *c->spread);
    if (!c->spread) return ak_err_nomem(err);
    for (unsigned byte = 0; byte < bytes; byte++)
        for (unsigned v = 0; v < 256; v++) {
            __uint128_t s = 0;
            for (unsigned j = 0; j < 8 && byte * 8 + j < bits; j++)
                if ((v >> j) & 1u) s |= (__uint128_t)1 << ((byte * 8 + j) * d);
            c->spread[byte * 256 + v] = s;
        }
    return ANONKIT_OK;
}

void hil_curve_free(hil_curve *c)
{
    free(c->spread);
    c->spread = NULL;
}

/* Skilling's transform as in hil_hilbert_key, with the data-dependent choice
 * (invert the low bits of x[0], or exchange them with those of x[i]) made by
 * masks instead of branches. Inlined with a constant d for small d, so that
 * the coordinates stay in registers. */
static inline void skilling_transpose(uint32_t *x, unsigned d, unsigned bits)
{
    uint32_t x0 = x[0];
    for (unsigned level = bits - 1; level > 0; level--) {
        const uint32_t p = (1u << level) - 1;
        x0 ^= p & (0u - ((x0 >> level) & 1u));
#pragma GCC unroll 8
        for (unsigned i = 1; i < d; i++) {
            const uint32_t set = 0u - ((x[i] >> level) & 1u);
            const uint32_t t = (x0 ^ x[i]) & p & ~set;
            x0 ^= t ^ (p & set);
            x[i] ^= t;
        }
    }
    x[0] = x0;
    for (unsigned i = 1; i < d; i++) x[i] ^= x[i - 1];
    /* bit L of t: the parity of x[d-1]'s bits above L */
    uint32_t t = x[d - 1] >> 1;
    t ^= t >> 1;
    t ^= t >> 2;
    t ^= t >> 4;
    t ^= t >> 8;
    t ^= t >> 16;
    for (unsigned i = 0; i < d; i++) x[i] ^= t;
}

#define SKILLING_FIXED_D(n) \
    case n: { \
        uint32_t y[n]; \
        memcpy(y, coords, sizeof y); \
        skilling_transpose(y, n, bits); \
        memcpy(x, y, sizeof y); \
        break; \
    }

/* The transposed index (as hil_hilbert_key computes it) is interleaved by
 * spreading each axis's bytes with the tables (bit L of x[i] goes to bit
 * L*d + d-1-i of the (d*bits)-bit index), axes in order. */
void hil_curve_key(const hil_curve *c, const uint32_t *coords, uint64_t *key)
{
    const unsigned d = c->d, bits = c->bits;
    if (!c->spread) {
        hil_hilbert_key(coords, d, bits, key);
        return;
    }
    uint32_t x[128];
    switch (d) {
        SKILLING_FIXED_D(1)
        SKILLING_FIXED_D(2)
        SKILLING_FIXED_D(3)
        SKILLING_FIXED_D(4)
        SKILLING_FIXED_D(5)
        SKILLING_FIXED_D(6)
        SKILLING_FIXED_D(7)
        SKILLING_FIXED_D(8)
    default:
        memcpy(x, coords, d * sizeof *x);
        skilling_transpose(x, d, bits);
    }
    __uint128_t h = 0;
    const unsigned bytes = (bits + 7) / 8;
    for (unsigned i = 0; i < d; i++) {
        __uint128_t s = c->spread[x[i] & 0xffu];
        for (unsigned byte = 1; byte < bytes; byte++) s |= c->spread[byte * 256 + ((x[i] >> (8 * byte)) & 0xffu)];
        h = h << 1 | s;
    }
    h <<= 128 - d * bits; /* left-aligned, word 0 most significant */
    key[0] = (uint64_t)(h >> 64);
    if (c->words > 1) key[1] = (uint64_t)h;
}

/* Four points at once: the same steps on vectors of 4 coordinates (GCC /
 * Clang vector extensions; SSE2 on x86-64), lane j for point j. */
typedef uint32_t curve_v4 __attribute__((vector_size(16)));

static inline void skilling_transpose4(curve_v4 *x, unsigned d, unsigned bits)
{
    curve_v4 x0 = x[0];
    for (unsigned level = bits - 1; level > 0; level--) {
        const curve_v4 p = (curve_v4){0, 0, 0, 0} + ((1u << level) - 1);
        x0 ^= p & (0u - ((x0 >> level) & 1u));
#pragma GCC unroll 8
        for (unsigned i = 1; i < d; i++) {
            const curve_v4 set = 0u - ((x[i] >> level) & 1u);
            const curve_v4 t = (x0 ^ x[i]) & p & ~set;
            x0 ^= t ^ (p & set);
            x[i] ^= t;
        }
    }
    x[0] = x0;
    for (unsigned i = 1; i < d; i++) x[i] ^= x[i - 1];
    curve_v4 t = x[d - 1] >> 1;
    t ^= t >> 1;
    t ^= t >> 2;
    t ^= t >> 4;
    t ^= t >> 8;
    t ^= t >> 16;
    for (unsigned i = 0; i < d; i++) x[i] ^= t;
}

/* Interleaves the transposed indices of the 4 lanes into their keys. */
static inline void spread4(const hil_curve *c, const curve_v4 *x, uint64_t *keys, size_t stride)
{
    const unsigned d = c->d, bits = c->bits, words = c->words, bytes = (bits + 7) / 8;
    for (unsigned j = 0; j < 4; j++) {
        __uint128_t h = 0;
        for (unsigned i = 0; i < d; i++) {
            const uint32_t v = x[i][j];
            __uint128_t s = c->spread[v & 0xffu];
            for (unsigned byte = 1; byte < bytes; byte++) s |= c->spread[byte * 256 + ((v >> (8 * byte)) & 0xffu)];
            h = h << 1 | s;
        }
        h <<= 128 - d * bits;
        keys[j * stride] = (uint64_t)(h >> 64);
        if (words > 1) keys[j * stride + 1] = (uint64_t)h;
    }
}

static inline void load4(const uint32_t *coords, unsigned d, curve_v4 *x)
{
    for (unsigned q = 0; q < d; q++) x[q] = (curve_v4){coords[q], coords[d + q], coords[2 * d + q], coords[3 * d + q]};
}

#define SKILLING4_FIXED_D(n) \
    case n: { \
        curve_v4 y[n]; \
        load4(coords, n, y); \
        skilling_transpose4(y, n, c->bits); \
        spread4(c, y, keys, stride); \
        return; \
    }

/* The keys of 4 points into keys[j * stride ..] (stride >= c->words). */
static void curve_key4_stride(const hil_curve *c, const uint32_t *coords, uint64_t *keys, size_t stride)
{
    const unsigned d = c->d;
    if (!c->spread || d > 32) {
        for (unsigned j = 0; j < 4; j++) hil_curve_key(c, coords + (size_t)j * d, keys + (size_t)j * stride);
        return;
    }
    switch (d) {
        SKILLING4_FIXED_D(1)
        SKILLING4_FIXED_D(2)
        SKILLING4_FIXED_D(3)
        SKILLING4_FIXED_D(4)
        SKILLING4_FIXED_D(5)
        SKILLING4_FIXED_D(6)
        SKILLING4_FIXED_D(7)
        SKILLING4_FIXED_D(8)
    default: {
        curve_v4 x[32] = {{0}}; /* d > 8 here; zeroed to keep the compiler sure of it */
        load4(coords, d, x);
        skilling_transpose4(x, d, c->bits);
        spread4(c, x, keys, stride);
    }
    }
}

void hil_curve_key4(const hil_curve *c, const uint32_t *coords, uint64_t *keys)
{
    curve_key4_stride(c, coords, keys, c->words);
}

/* The grid cell of a place u in [0, 1] on a grid of 2^bits cells per side. */
static uint32_t grid_cell(double u, unsigned bits)
{
    const double top = (double)((1ull << bits) - 1);
    double c = floor(u * top + 0.5);
    if (c < 0) c = 0;
    if (c > top) c = top;
    return (uint32_t)c;
}

static void row_point(const hil_mapper *mp, const table *t, size_t row, double *p)
{
    for (unsigned q = 0; q < mp->d; q++) p[q] = mp->unit[q][t->qi[q].codes[row]];
}

/* Chooses `want` of n items uniformly (Knuth's selection sampling, in order). */
static void sample_rows(ak_rng *rng, size_t n, size_t want, size_t *out)
{
    size_t got = 0;
    for (size_t i = 0; i < n && got < want; i++)
        if (ak_rng_below(rng, n - i) < want - got) out[got++] = i;
}

/* perm[0 .. nc): the centres in the Hilbert order of their cells, ties by index. */
static int hilbert_order(const hil_mapper *mp, const double *centers, size_t nc, uint32_t *perm, ak_error *err)
{
    const unsigned d = mp->d;
    const unsigned kw = (d * mp->bits + 63) / 64 + 1; /* key words, then the index */
    uint64_t *keys = malloc((nc ? nc : 1) * kw * sizeof *keys);
    if (!keys) return ak_err_nomem(err);
    uint32_t cells[d ? d : 1];
    for (size_t c = 0; c < nc; c++) {
        for (unsigned q = 0; q < d; q++) cells[q] = grid_cell(centers[c * d + q], mp->bits);
        hil_curve_key(&mp->curve, cells, keys + c * kw);
        keys[c * kw + kw - 1] = c;
    }
    int rc = extsort_sort_array(keys, nc, kw, 1, err);
    for (size_t c = 0; rc >= 0 && c < nc; c++) perm[c] = (uint32_t)keys[c * kw + kw - 1];
    free(keys);
    return rc;
}

static double dist2(const double *a, const double *b, unsigned d)
{
    double s2 = 0;
    for (unsigned q = 0; q < d; q++) s2 += (a[q] - b[q]) * (a[q] - b[q]);
    return s2;
}

/* What Lloyd's iterations keep per point to skip the search for its nearest
 * centre (Hamerly, SDM 2010): an upper bound on its distance to its centre
 * and a lower bound on its distance to every other one. When the centres
 * move by moved[c], the first grows by its centre's move and the second
 * shrinks by the largest move of another centre; while the first stays below
 * the second (by a margin far above rounding), the point's centre is the
 * nearest by far and the search would find it again. */
typedef struct kmeans_bounds {
    double *upper, *lower;
    const double *moved;    /* per centre, its distance from where it was (NULL: the first iteration) */
    size_t most_moved;      /* the centre that moved most */
    double most, next_most; /* its move, and the largest move of any other */
} kmeans_bounds;

static inline int bound_clear(double upper, double lower) { return upper * (1 + 1e-9) + 1e-12 < lower; }

/* Points from .. to-1 to their nearest centres (the previous one as hint). */
typedef struct assign_range {
    const hil_nn *nn;
    const double *pts, *centers;
    unsigned d;
    size_t *assign;
    kmeans_bounds *kb;
    size_t from, to, changed, searched;
} assign_range;

static void *assign_range_main(void *arg)
{
    assign_range *r = arg;
    kmeans_bounds *kb = r->kb;
    r->changed = r->searched = 0;
    for (size_t i = r->from; i < r->to; i++) {
        const double *p = r->pts + i * r->d;
        if (kb->moved) {
            const size_t a = r->assign[i];
            kb->upper[i] += kb->moved[a];
            kb->lower[i] -= a == kb->most_moved ? kb->next_most : kb->most;
            if (bound_clear(kb->upper[i], kb->lower[i])) continue;
            kb->upper[i] = sqrt(dist2(p, r->centers + a * r->d, r->d)); /* tightened */
            if (bound_clear(kb->upper[i], kb->lower[i])) continue;
        }
        double b2, second2;
        const size_t c = hil_nn_nearest(r->nn, p, r->assign[i], &b2, &second2);
        r->searched++;
        if (c != r->assign[i]) r->changed++;
        r->assign[i] = c;
        kb->upper[i] = sqrt(b2);
        kb->lower[i] = sqrt(second2);
    }
    return NULL;
}

/* Every point's nearest centre into assign (threads ranges at once, a range
 * whose thread cannot start in the caller), skipping the points whose
 * bounds show it unchanged; returns how many changed, and in *searched how
 * many were searched. */
static size_t assign_nearest(const hil_nn *nn, const double *pts, const double *centers, unsigned d, size_t n,
                             size_t *assign, kmeans_bounds *kb, unsigned threads, size_t *searched)
{
    threads = ak_parts(n, threads, 1024);
    assign_range part[AK_MAX_PARTS];
    for (unsigned j = 0; j < threads; j++)
        part[j] = (assign_range){nn, pts, centers, d, assign, kb, n * j / threads, n * (j + 1) / threads, 0, 0};
    ak_run_parts(part, sizeof *part, threads, assign_range_main);
    size_t changed = 0;
    *searched = 0;
    for (unsigned j = 0; j < threads; j++) changed += part[j].changed, *searched += part[j].searched;
    return changed;
}

/* The start centres of the k-means of [Ghinita07] §5, by k-means++ seeding (Arthur
 * and Vassilvitskii, SODA 2007): the first a sample point drawn uniformly,
 * each next one a sample point drawn with probability proportional to its
 * squared distance to the nearest centre so far. Unlike start points drawn
 * uniformly from the sample, it takes no point twice while some point has no
 * centre on it: on tables with many repeated QI tuples (mach2019), uniform
 * draws put several centres on the same frequent tuple and their clusters
 * stay empty. A new centre is compared only with the points it may be
 * nearer to (by the triangle inequality). One thread, sums in sample order:
 * the same centres whatever the threads. */
static int kmeanspp_seed(ak_rng *rng, const double *pts, size_t n, unsigned d, size_t nc, double *centers,
                         ak_error *err)
{
    double *near2 = malloc((n ? n : 1) * sizeof *near2); /* squared distance to the nearest centre so far */
    size_t *near = malloc((n ? n : 1) * sizeof *near);   /* that centre */
    double *z2 = malloc((nc ? nc : 1) * sizeof *z2);      /* squared distances of the new centre to the others */
    double *upto = malloc((n ? n : 1) * sizeof *upto);   /* near2[0] + ... + near2[i], summed in that order */
    if (!near2 || !near || !z2 || !upto) {
        free(near2), free(near), free(z2), free(upto);
        return ak_err_nomem(err);
    }
    size_t pick = n ? (size_t)ak_rng_below(rng, n) : 0;
    for (size_t c = 0; c < nc; c++) {
        const double *z = pts + pick * d;
        memcpy(centers + c * d, z, d * sizeof *centers);
        if (c + 1 == nc) break;
        for (size_t j = 0; j < c; j++) z2[j] = dist2(z, centers + j * d, d);
        double total = 0;
        for (size_t i = 0; i < n; i++) {
            /* |p - z| >= |z - C| - |p - C| >= |p - C| when |z - C| >= 2 |p - C|
             * (C the point's nearest centre): z is no nearer, skip it */
            if (c == 0 || z2[near[i]] < 4 * near2[i]) {
                const double s2 = dist2(pts + i * d, z, d);
                if (c == 0 || s2 < near2[i]) near2[i] = s2, near[i] = c;
            }
            upto[i] = total += near2[i];
        }
        if (!(total > 0)) { /* a centre on every point: any point */
            pick = (size_t)ak_rng_below(rng, n);
            continue;
        }
        const double r = (double)(ak_rng_next(rng) >> 11) * 0x1p-53 * total; /* in [0, total) */
        /* the first point whose running sum passes r (it is off the centres:
         * the sum grew there), found by halving, since the sums never
         * decrease; the last point off the centres should rounding leave
         * every sum <= r */
        size_t lo = 0, hi = n;
        while (lo < hi) {
            const size_t mid = lo + (hi - lo) / 2;
            if (upto[mid] > r) hi = mid;
            else lo = mid + 1;
        }
        if (lo < n) {
            pick = lo;
        } else {
            for (size_t i = n; i-- > 0;)
                if (near2[i] > 0) {
                    pick = i;
                    break;
                }
        }
    }
    free(near2), free(near), free(z2), free(upto);
    return ANONKIT_OK;
}

/* k-means on the sample: Lloyd's iterations from k-means++ start centres
 * (each point to its nearest centre, each centre to its points' mean), at
 * most 10, fewer when no point changes centre. */
static int kmeans(hil_mapper *mp, const table *t, const hil_options *o, ak_error *err)
{
    const unsigned d = mp->d;
    const size_t n = t->nrows;
    size_t want = n / 10;
    const size_t c_req = o->centers ? o->centers : HIL_DEFAULT_CENTERS;
    if (want < c_req) want = c_req < n ? c_req : n;
    ak_rng rng;
    ak_rng_seed(&rng, o->seed ^ 0x1d157a11ce5ull);
    size_t *rows = malloc((want ? want : 1) * sizeof *rows);
    double *pts = malloc((want ? want : 1) * d * sizeof *pts);
    if (!rows || !pts) {
        free(rows);
        free(pts);
        return ak_err_nomem(err);
    }
    sample_rows(&rng, n, want, rows);
    for (size_t i = 0; i < want; i++) row_point(mp, t, rows[i], pts + i * d);
    size_t nc = c_req < want ? c_req : want;
    double *centers = malloc((nc ? nc : 1) * d * sizeof *centers);
    double *sum = calloc((nc ? nc : 1) * d, sizeof *sum);
    size_t *count = calloc(nc ? nc : 1, sizeof *count);
    size_t *assign = malloc((want ? want : 1) * sizeof *assign);
    uint32_t *perm = malloc((nc ? nc : 1) * sizeof *perm);
    double *prev = malloc((nc ? nc : 1) * d * sizeof *prev), *moved = malloc((nc ? nc : 1) * sizeof *moved);
    kmeans_bounds kb = {malloc((want ? want : 1) * sizeof *kb.upper), malloc((want ? want : 1) * sizeof *kb.lower),
                        NULL, 0, 0, 0};
    int rc = centers && sum && count && assign && perm && prev && moved && kb.upper && kb.lower ? ANONKIT_OK
                                                                                               : ak_err_nomem(err);
    if (rc >= 0) rc = kmeanspp_seed(&rng, pts, want, d, nc, centers, err);
    for (size_t i = 0; rc >= 0 && i < want; i++) assign[i] = SIZE_MAX;
    mp->kmeans_iterations = mp->kmeans_searches = 0;
    for (int iter = 0; rc >= 0 && iter < 10; iter++) {
        memset(sum, 0, nc * d * sizeof *sum);
        memset(count, 0, nc * sizeof *count);
        hil_nn nn;
        if ((rc = hilbert_order(mp, centers, nc, perm, err)) < 0 || (rc = hil_nn_init(&nn, centers, nc, d, perm, err)) < 0)
            break;
        nn.tree_search = o->tuning && o->tuning->tree_search;
        size_t searched;
        const size_t changed = assign_nearest(&nn, pts, centers, d, want, assign, &kb, o->threads, &searched);
        mp->kmeans_iterations++;
        mp->kmeans_searches += searched;
        for (size_t i = 0; i < want; i++) { /* in sample order: the same sums whatever the threads */
            const size_t c = assign[i];
            count[c]++;
            for (unsigned q = 0; q < d; q++) sum[c * d + q] += pts[i * d + q];
        }
        memcpy(prev, centers, nc * d * sizeof *prev);
        for (size_t c = 0; c < nc; c++)
            if (count[c])
                for (unsigned q = 0; q < d; q++) centers[c * d + q] = sum[c * d + q] / (double)count[c];
        hil_nn_free(&nn);
        if (!changed) break;
        /* how far each centre moved, for the bounds of the next iteration */
        kb.moved = moved;
        kb.most = kb.next_most = 0;
        for (size_t c = 0; c < nc; c++) {
            moved[c] = sqrt(dist2(prev + c * d, centers + c * d, d)) * (1 + 1e-12); /* (rounded up) */
            if (moved[c] > kb.most) kb.next_most = kb.most, kb.most = moved[c], kb.most_moved = c;
            else if (moved[c] > kb.next_most) kb.next_most = moved[c];
        }
    }
    free(rows), free(pts), free(sum), free(count), free(assign), free(prev), free(moved), free(kb.upper),
        free(kb.lower);
    if (rc < 0) {
        free(perm), free(centers);
        return rc;
    }
    /* The centres in Hilbert order (ties: lower index), searched in that order. */
    double *ordered = malloc((nc ? nc : 1) * d * sizeof *ordered);
    if (rc >= 0 && !ordered) rc = ak_err_nomem(err);
    if (rc >= 0) rc = hilbert_order(mp, centers, nc, perm, err);
    for (size_t c = 0; rc >= 0 && c < nc; c++) memcpy(ordered + c * d, centers + (size_t)perm[c] * d, d * sizeof *ordered);
    if (rc >= 0) rc = hil_nn_init(&mp->nn, ordered, nc, d, NULL, err);
    if (rc >= 0) mp->nn.tree_search = o->tuning && o->tuning->tree_search;
    free(perm), free(centers);
    if (rc < 0) {
        free(ordered);
        return rc;
    }
    mp->centers = ordered;
    mp->ncenters = nc;
    mp->stride = sqrt((double)d) + 1; /* above any distance in [0, 1]^d */
    return ANONKIT_OK;
}

/* The nodes of h in breadth-first order from the root (parents before
 * children) into order[0 .. node count). */
static void hier_bfs(const hier *h, uint32_t *order)
{
    const uint32_t *children = hier_children(h);
    size_t n = 0;
    order[n++] = hier_root(h);
    for (size_t at = 0; at < n; at++) {
        const hier_node *u = hier_node_at(h, order[at]);
        for (uint32_t j = 0; j < u->nchildren; j++) order[n++] = children[u->first_child + j];
    }
}

static unsigned ceil_log2(uint32_t x)
{
    unsigned b = 0;
    while (b < 32 && (1ull << b) < x) b++;
    return b;
}

int hil_hierarchy_cells(const hier *h, unsigned bits, uint32_t *cell, ak_error *err)
{
    const uint32_t nodes = hier_node_count(h);
    uint32_t *order = malloc(nodes * sizeof *order), *base = malloc(nodes * sizeof *base);
    unsigned char *room = malloc(nodes); /* bits of the node's block; 255: placed by an ancestor */
    if (!order || !base || !room) {
        free(order), free(base), free(room);
        return ak_err_nomem(err);
    }
    hier_bfs(h, order);
    const uint32_t root = hier_root(h), *children = hier_children(h);
    base[root] = 0;
    room[root] = (unsigned char)bits;
    for (uint32_t at = 0; at < nodes; at++) {
        const uint32_t v = order[at];
        const hier_node *u = hier_node_at(h, v);
        if (room[v] == 255) { /* placed by an ancestor that spread its leaves */
            for (uint32_t j = 0; j < u->nchildren; j++) room[children[u->first_child + j]] = 255;
            continue;
        }
        if (!u->nchildren) {
            cell[u->lo] = base[v];
            continue;
        }
        const unsigned need = ceil_log2(u->nchildren), m = room[v];
        if (need <= m) { /* child j: the j-th aligned block of 2^(m - need) cells */
            for (uint32_t j = 0; j < u->nchildren; j++) {
                const uint32_t c = children[u->first_child + j];
                base[c] = base[v] + (j << (m - need));
                room[c] = (unsigned char)(m - need);
            }
            continue;
        }
        /* too many children for the block: the leaves spread evenly over it */
        const uint64_t leaves = (uint64_t)u->hi - u->lo + 1;
        for (uint32_t x = u->lo; x <= u->hi; x++)
            cell[x] = base[v] + (uint32_t)(((uint64_t)(x - u->lo) << m) / leaves);
        for (uint32_t j = 0; j < u->nchildren; j++) room[children[u->first_child + j]] = 255;
    }
    free(order), free(base), free(room);
    return ANONKIT_OK;
}

int hil_hierarchy_places(const hier *h, double *place, ak_error *err)
{
    const uint32_t nodes = hier_node_count(h), nleaves = hier_leaf_count(h);
    uint32_t *order = malloc(nodes * sizeof *order);
    double *span = malloc(nodes * sizeof *span), *gap = malloc(nodes * sizeof *gap);
    if (!order || !span || !gap) {
        free(order), free(span), free(gap);
        return ak_err_nomem(err);
    }
    hier_bfs(h, order);
    const uint32_t *children = hier_children(h);
    for (uint32_t at = nodes; at-- > 0;) { /* children before parents */
        const uint32_t v = order[at];
        const hier_node *u = hier_node_at(h, v);
        if (!u->nchildren) {
            span[v] = gap[v] = 0;
            continue;
        }
        double inner = 0;
        for (uint32_t j = 0; j < u->nchildren; j++) inner += span[children[u->first_child + j]];
        const uint32_t leaves = u->hi - u->lo + 1;
        const double ncp = leaves > 1 ? (double)leaves / (double)nleaves : 0;
        gap[v] = ncp > inner ? ncp : inner;
        span[v] = inner + (double)(u->nchildren - 1) * gap[v];
    }
    double at = 0;
    place[0] = 0;
    for (uint32_t x = 1; x < nleaves; x++) place[x] = at += gap[hier_lca(h, x - 1, x)];
    if (at > 0)
        for (uint32_t x = 0; x < nleaves; x++) place[x] /= at;
    free(order), free(span), free(gap);
    return ANONKIT_OK;
}

int hil_mapper_init(hil_mapper *mp, const table *t, const hil_options *o, ak_error *err)
{
    memset(mp, 0, sizeof *mp);
    mp->kind = o->mapping;
    mp->d = t->nqi;
    mp->bits = o->bits ? o->bits : HIL_DEFAULT_BITS;
    if (mp->bits > HIL_MAX_BITS)
        return ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0, "--bits must be from 1 to %d", HIL_MAX_BITS);
    mp->words = mp->kind == HIL_MAP_HILBERT ? (mp->d * mp->bits + 63) / 64 : 2;
    int rc = hil_curve_init(&mp->curve, mp->d, mp->bits, err);
    if (rc < 0) return rc;
    mp->unit = calloc(mp->d ? mp->d : 1, sizeof *mp->unit);
    mp->cell = calloc(mp->d ? mp->d : 1, sizeof *mp->cell);
    if (!mp->unit || !mp->cell) {
        hil_mapper_free(mp);
        return ak_err_nomem(err);
    }
    for (unsigned q = 0; rc >= 0 && q < mp->d; q++) {
        const table_qi *a = &t->qi[q];
        const uint32_t nc = a->ncodes ? a->ncodes : 1;
        mp->unit[q] = malloc(nc * sizeof **mp->unit);
        mp->cell[q] = malloc(nc * sizeof **mp->cell);
        if (!mp->unit[q] || !mp->cell[q]) {
            rc = ak_err_nomem(err);
            break;
        }
        if (a->kind == ATTR_CATEGORICAL && a->h && a->ncodes == hier_leaf_count(a->h)) {
            rc = hil_hierarchy_places(a->h, mp->unit[q], err);
            if (rc >= 0) rc = hil_hierarchy_cells(a->h, mp->bits, mp->cell[q], err);
            continue;
        }
        for (uint32_t c = 0; c < nc; c++) {
            double u = 0;
            if (a->kind == ATTR_NUMERIC && a->ncodes > 1) {
                const double span = a->values[a->ncodes - 1] - a->values[0];
                u = span > 0 ? (a->values[c] - a->values[0]) / span : 0;
            } else if (a->ncodes > 1) {
                u = (double)c / (double)(a->ncodes - 1);
            }
            mp->unit[q][c] = u;
            mp->cell[q][c] = grid_cell(u, mp->bits);
        }
    }
    if (rc >= 0 && mp->kind == HIL_MAP_IDISTANCE && t->nrows) rc = kmeans(mp, t, o, err);
    if (rc < 0) {
        hil_mapper_free(mp);
        return rc;
    }
    return ANONKIT_OK;
}

void hil_mapper_free(hil_mapper *mp)
{
    for (unsigned q = 0; mp->unit && q < mp->d; q++) free(mp->unit[q]);
    for (unsigned q = 0; mp->cell && q < mp->d; q++) free(mp->cell[q]);
    free(mp->unit);
    free(mp->cell);
    free(mp->centers);
    hil_nn_free(&mp->nn);
    hil_curve_free(&mp->curve);
    memset(mp, 0, sizeof *mp);
}

void hil_mapper_keys(const hil_mapper *mp, const table *t, size_t row, size_t count, uint64_t *keys, size_t stride)
{
    const unsigned d = mp->d;
    enum { BATCH = 64 };
    size_t done = 0;
    while (mp->kind == HIL_MAP_HILBERT && d && d <= 32 && count - done >= 4) {
        const size_t m = (count - done < BATCH ? count - done : BATCH) & ~(size_t)3, at = row + done;
        /* The cells column by column: loads of the cell tables at codes in
         * row order, independent of each other, so that many misses are in
         * flight at once; the next batch's are prefetched. */
        uint32_t cells[BATCH * 32];
        const int ahead = at + m + BATCH <= t->nrows;
        for (unsigned q = 0; q < d; q++) {
            const uint32_t *cq = mp->cell[q], *codes = t->qi[q].codes + at;
            for (size_t j = 0; j < m; j++) cells[j * d + q] = cq[codes[j]];
            if (ahead)
                for (size_t j = 0; j < BATCH; j++) __builtin_prefetch(&cq[codes[m + j]]);
        }
        for (size_t j = 0; j < m; j += 4) curve_key4_stride(&mp->curve, cells + j * d, keys + (done + j) * stride, stride);
        done += m;
    }
    for (; done < count; done++) hil_mapper_key(mp, t, row + done, keys + done * stride);
}

void hil_mapper_key(const hil_mapper *mp, const table *t, size_t row, uint64_t *key)
{
    const unsigned d = mp->d;
    if (mp->kind == HIL_MAP_HILBERT) {
        uint32_t cells[d ? d : 1];
        for (unsigned q = 0; q < d; q++) cells[q] = mp->cell[q][t->qi[q].codes[row]];
        hil_curve_key(&mp->curve, cells, key);
        return;
    }
    double p[d ? d : 1], b2 = 0;
    row_point(mp, t, row, p);
    size_t c = mp->ncenters ? hil_nn_nearest(&mp->nn, p, SIZE_MAX, &b2, NULL) : 0;
    double dist = sqrt(b2);
    key[0] = c;
    memcpy(&key[1], &dist, sizeof dist); /* non-negative doubles sort as their bits */
}

double hil_mapper_gap(const hil_mapper *mp, const uint64_t *a, const uint64_t *b)
{
    if (mp->kind == HIL_MAP_IDISTANCE) {
        double da, db;
        memcpy(&da, &a[1], sizeof da);
        memcpy(&db, &b[1], sizeof db);
        return ((double)b[0] - (double)a[0]) * mp->stride + (db - da);
    }
    /* b - a exactly in words, then as a double in units of the top word */
    double g = 0;
    uint64_t borrow = 0;
    double scale = 1;
    uint64_t diff[mp->words];
    for (unsigned w = mp->words; w-- > 0;) {
        const uint64_t x = b[w], y = a[w];
        diff[w] = x - y - borrow;
        borrow = (x < y) || (x == y && borrow) ? 1 : 0;
    }
    for (unsigned w = 0; w < mp->words; w++, scale *= 0x1p-64) g += (double)diff[w] * scale;
    return g;
}
