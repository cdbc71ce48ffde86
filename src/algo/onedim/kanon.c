/* kanon.c — optimal 1-D k-anonymity by dynamic programming (001 §3, Figure 3;
 * §5.1 for the multi-dimensional cost).
 *
 * Opt(i), the least information loss of the first i rows in 1-D order, is
 * min over k <= L <= 2k-1 of Opt(i - L) + L * NCP(rows i-L .. i-1): by Lemma 1
 * an optimal partitioning has only groups of k..2k-1 consecutive rows. For a
 * fixed end the candidate groups are grown leftwards one row at a time,
 * keeping their minimum bounding rectangle (the incremental MBR of §5.1).
 *
 * Most rows grow no side of the box: going left from the end, the box's low
 * side of a QI moves only at a row whose code is below every code after it
 * within the window of the last 2k-1 rows, and those rows are exactly the
 * members of the window's monotone "sliding minimum" queue (likewise for the
 * high side). The queues of all QIs are kept up to date as the window slides
 * (O(d) amortized per row), and every row of the window counts the queues it
 * is in. The box of the k-row candidate is read off the queues (the entry
 * nearest the front within the last k rows, a cursor that only moves back);
 * growing it further costs O(1) at an unmarked row and O(d) (a changed NCP,
 * the weighted sum) only at a marked one, instead of O(d) at every row. The
 * window keeps each row's codes and numeric values, so a numeric NCP reads no
 * table array. The box, its NCP and the candidates' costs are the same
 * numbers as growing it row by row, so the optimum and the partitioning are
 * too. The Fast variants cost a group by its extent on the 1-D key instead,
 * in O(1). Only the last 2k values of Opt and the window's codes are kept
 * (rings); the chosen group length of every prefix is kept to read the
 * solution back. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "algo/onedim/onedim.h"
#include "metrics/metrics.h"

/* A monotone queue of window positions: entries first .. last-1 (counters)
 * in a ring of the window's size (a power of two). */
typedef struct mono_queue {
    uint32_t *pos;
    size_t first, last;
    size_t near;      /* the entry nearest the front inside the last k positions */
} mono_queue;

/* The state of the exact DP over the window of the last 2k-1 positions. */
typedef struct kanon_window {
    const table *t;
    uint32_t d;
    size_t mask;          /* ring size - 1; the ring size is a power of two >= 2k */
    size_t mw;            /* mark words per position: bit 2q / 2q+1 = in QI q's low / high queue */
    uint32_t *code;       /* code[(p & mask) * d + q]: QI q of the row at position p */
    double *value;        /* value[(p & mask) * d + q]: its numeric value (0 for a categorical QI) */
    uint64_t *marks;      /* marks[(p & mask) * mw ...]: the queues position p is in */
    uint64_t *any;        /* bit (p & mask) of any[]: position p is in some queue */
    size_t n;             /* positions in the 1-D order */
    size_t cfirst, cend;  /* the chunk holds positions cfirst .. cend-1 */
    uint32_t *ccode;      /* ccode[(p - cfirst) * d + q]: QI q of the row at position p */
    double *cvalue;       /* its numeric value (0 for a categorical QI) */
    uint64_t *packed;     /* packed[row * pw ..]: the row's QI codes, QI q in bits shift[q] ..
                             of word word[q] (width[q] bits, no code across two words) */
    size_t pw;            /* words per row in packed */
    uint32_t *word;       /* per QI: its word in the row's packed codes */
    unsigned char *shift, *width;
    mono_queue *queue;    /* queue[2q]: positions whose code of QI q is below every later one
                             in the window; queue[2q+1]: above every later one */
    uint32_t *lo, *hi;    /* the growing box */
    double *lov, *hiv;    /* the values of its sides (numeric QIs) */
    double *ncp;          /* its NCP per QI */
    double *span;         /* per numeric QI: the table's range */
    double *weight;       /* per QI (1 when no weights are given) */
    uint32_t *klo, *khi;  /* the last k-row box, its side values */
    double *klov, *khiv;  /* and */
    double *kncp;         /* its NCP per QI */
    int k_valid;          /* klo, khi and kncp are set */
} kanon_window;

static void window_free(kanon_window *win)
{
    if (win->queue)
        for (uint32_t i = 0; i < 2 * win->d; i++) free(win->queue[i].pos);
    free(win->queue), free(win->code), free(win->marks), free(win->any), free(win->ccode), free(win->cvalue);
    free(win->packed), free(win->word), free(win->shift), free(win->width);
    free(win->lo), free(win->hi), free(win->ncp), free(win->span), free(win->weight);
    free(win->klo), free(win->khi), free(win->kncp), free(win->value);
    free(win->lov), free(win->hiv), free(win->klov), free(win->khiv);
}

/* Positions gathered at a time into the chunk. */
#define KANON_CHUNK 1024

static int window_init(kanon_window *win, const table *t, size_t n, size_t ring, const double *weights, ak_error *err)
{
    memset(win, 0, sizeof *win);
    const uint32_t d = t->nqi, dd = d ? d : 1;
    win->t = t;
    win->d = d;
    win->mask = ring - 1;
    win->mw = (2 * (size_t)dd + 63) / 64;
    win->code = malloc(ring * dd * sizeof *win->code);
    win->marks = calloc(ring * win->mw, sizeof *win->marks);
    win->any = calloc((ring + 63) / 64, sizeof *win->any);
    win->n = n;
    win->ccode = malloc(KANON_CHUNK * (size_t)dd * sizeof *win->ccode);
    win->cvalue = malloc(KANON_CHUNK * (size_t)dd * sizeof *win->cvalue);
    win->queue = calloc(2 * (size_t)dd, sizeof *win->queue);
    win->lo = malloc(dd * sizeof *win->lo);
    win->hi = malloc(dd * sizeof *win->hi);
    win->ncp = malloc(dd * sizeof *win->ncp);
    win->span = malloc(dd * sizeof *win->span);
    win->weight = malloc(dd * sizeof *win->weight);
    win->klo = malloc(dd * sizeof *win->klo);
    win->khi = malloc(dd * sizeof *win->khi);
    win->kncp = malloc(dd * sizeof *win->kncp);
    win->value = malloc(ring * dd * sizeof *win->value);
    win->lov = malloc(dd * sizeof *win->lov);
    win->hiv = malloc(dd * sizeof *win->hiv);
    win->klov = malloc(dd * sizeof *win->klov);
    win->khiv = malloc(dd * sizeof *win->khiv);
    int ok = win->code && win->marks && win->any && win->ccode && win->cvalue && win->queue && win->lo && win->hi && win->ncp && win->span && win->weight &&
             win->klo && win->khi && win->kncp && win->value && win->lov && win->hiv && win->klov && win->khiv;
    for (uint32_t q = 0; ok && q < d; q++) {
        win->queue[2 * q].pos = malloc(ring * sizeof *win->queue[2 * q].pos);
        win->queue[2 * q + 1].pos = malloc(ring * sizeof *win->queue[2 * q + 1].pos);
        ok = win->queue[2 * q].pos && win->queue[2 * q + 1].pos;
        const table_qi *a = &t->qi[q];
        win->span[q] = a->kind == ATTR_NUMERIC && a->ncodes > 1 ? a->values[a->ncodes - 1] - a->values[0] : 0;
        win->weight[q] = weights ? weights[q] : 1.0;
    }
    if (!ok) {
        window_free(win);
        return ak_err_nomem(err);
    }
    /* The rows' codes packed row by row, so that gathering a position's
     * codes in 1-D order reads one place instead of one per column. */
    win->word = malloc(dd * sizeof *win->word);
    win->shift = malloc(dd);
    win->width = malloc(dd);
    ok = win->word && win->shift && win->width;
    size_t pw = 0, used = 64;
    for (uint32_t q = 0; ok && q < d; q++) {
        unsigned width = 1;
        while (width < 32 && ((uint64_t)1 << width) < t->qi[q].ncodes) width++;
        if (used + width > 64) pw++, used = 0;
        win->word[q] = (uint32_t)(pw - 1);
        win->shift[q] = (unsigned char)used;
        win->width[q] = (unsigned char)width;
        used += width;
    }
    win->pw = pw ? pw : 1;
    if (ok) win->packed = calloc((n ? n : 1) * win->pw, sizeof *win->packed);
    if (!ok || !win->packed) {
        window_free(win);
        return ak_err_nomem(err);
    }
    for (uint32_t q = 0; q < d; q++) {
        const uint32_t *codes = t->qi[q].codes;
        uint64_t *out = win->packed + win->word[q];
        const unsigned sh = win->shift[q];
        for (size_t row = 0; row < n; row++) out[row * win->pw] |= (uint64_t)codes[row] << sh;
    }
    return ANONKIT_OK;
}

/* Clears position p's membership of queue `bit` (2q: low, 2q+1: high),
 * and its summary bit in `any` when it is in no queue any more. */
static inline void mark_clear(kanon_window *win, size_t p, size_t bit)
{
    const size_t slot = p & win->mask;
    uint64_t *m = win->marks + slot * win->mw;
    m[bit / 64] &= ~(1ull << (bit % 64));
    for (size_t wi = 0; wi < win->mw; wi++)
        if (m[wi]) return;
    win->any[slot / 64] &= ~(1ull << (slot % 64));
}

/* Gathers the codes and numeric values of positions from .. from+CHUNK-1
 * (the rows order[p], at random places in the table): each row's packed
 * codes are one read, prefetched ahead; the numeric values (whose arrays
 * may be large too) column by column, loads independent of each other, so
 * that many misses are in flight at once. The reads that follow are
 * sequential. */
static void window_gather(kanon_window *win, const uint32_t *order, size_t from)
{
    const uint32_t d = win->d;
    const size_t m = win->n - from < KANON_CHUNK ? win->n - from : KANON_CHUNK, pw = win->pw;
    win->cfirst = from;
    win->cend = from + m;
    for (size_t x = 0; x < m; x++) {
        if (x + 16 < m) __builtin_prefetch(&win->packed[(size_t)order[from + x + 16] * pw]);
        const uint64_t *src = win->packed + (size_t)order[from + x] * pw;
        uint32_t *out = win->ccode + x * d;
        for (uint32_t q = 0; q < d; q++)
            out[q] = (uint32_t)((src[win->word[q]] >> win->shift[q]) & ((2ull << (win->width[q] - 1)) - 1));
    }
    for (uint32_t q = 0; q < d; q++) {
        const table_qi *a = &win->t->qi[q];
        const uint32_t *code = win->ccode + q;
        double *val = win->cvalue + q;
        if (a->kind == ATTR_NUMERIC) {
            const double *values = a->values;
            for (size_t x = 0; x < m; x++) {
                if (x + 16 < m) __builtin_prefetch(&values[code[(x + 16) * d]]);
                val[x * d] = values[code[x * d]];
            }
        } else {
            for (size_t x = 0; x < m; x++) val[x * d] = 0;
        }
    }
}

/* Position p (the row order[p]) enters the window of the last w positions:
 * entries before the window leave every queue; then, in each QI's low (high)
 * queue, entries whose code is not strictly below (above) p's can no longer
 * move that side of any box ending at p or later and leave too; p joins. */
static void window_slide(kanon_window *win, const uint32_t *order, size_t p, size_t w)
{
    const uint32_t d = win->d;
    const size_t mask = win->mask, mw = win->mw;
    if (p >= w) { /* position p - w leaves: it is the front of every queue it is in */
        const size_t slot = (p - w) & mask;
        uint64_t *m = win->marks + slot * mw;
        for (size_t wi = 0; wi < mw; wi++) {
            for (uint64_t bits = m[wi]; bits; bits &= bits - 1) win->queue[wi * 64 + (size_t)__builtin_ctzll(bits)].first++;
            m[wi] = 0;
        }
        win->any[slot / 64] &= ~(1ull << (slot % 64));
    }
    uint32_t *row = win->code + (p & mask) * d; /* the slot of position p - w, gone now */
    double *val = win->value + (p & mask) * d;
    if (p >= win->cend) window_gather(win, order, p);
    memcpy(row, win->ccode + (p - win->cfirst) * d, d * sizeof *row);
    memcpy(val, win->cvalue + (p - win->cfirst) * d, d * sizeof *val);
    for (uint32_t q = 0; q < d; q++) {
        const uint32_t c = row[q];
        mono_queue *low = &win->queue[2 * (size_t)q], *high = low + 1;
        while (low->first < low->last) {
            const uint32_t back = low->pos[(low->last - 1) & mask];
            if (win->code[(back & mask) * d + q] < c) break;
            mark_clear(win, back, 2 * (size_t)q);
            low->last--;
        }
        low->pos[low->last++ & mask] = (uint32_t)p;
        while (high->first < high->last) {
            const uint32_t back = high->pos[(high->last - 1) & mask];
            if (win->code[(back & mask) * d + q] > c) break;
            mark_clear(win, back, 2 * (size_t)q + 1);
            high->last--;
        }
        high->pos[high->last++ & mask] = (uint32_t)p;
    }
    /* p joins every queue */
    uint64_t *m = win->marks + (p & mask) * mw;
    for (size_t wi = 0; wi < mw; wi++) {
        const size_t bits = 2 * (size_t)d - wi * 64;
        m[wi] = bits >= 64 ? ~0ull : (1ull << bits) - 1;
    }
    win->any[(p & mask) / 64] |= 1ull << ((p & mask) % 64);
}

/* NCP of codes [lo, hi] of QI q (001 §2.1): numeric from the side values
 * (the values of codes lo and hi, kept in the window so the table's value
 * array is not read again), categorical by the lowest common ancestor. */
static double window_ncp(const kanon_window *win, uint32_t q, uint32_t lo, uint32_t hi, double lov, double hiv)
{
    if (win->t->qi[q].kind == ATTR_NUMERIC) return win->span[q] > 0 ? (hiv - lov) / win->span[q] : 0;
    return table_ncp(win->t, q, lo, hi);
}

/* Sets the box to the last k positions, from `from` on: per side, the entry
 * of the side's queue nearest the front that is not before `from` holds the
 * extreme code. That entry only moves back as the window slides (a cursor,
 * O(1) amortized); the NCP of a QI is recomputed only when its side codes
 * changed. Returns the box's weighted NCP sum (QIs in order, as GCP sums
 * them). */
static double box_set(kanon_window *win, size_t from)
{
    const size_t mask = win->mask;
    for (uint32_t q = 0; q < win->d; q++) {
        uint32_t side[2];
        double sidev[2];
        for (int high = 0; high < 2; high++) {
            mono_queue *mq = &win->queue[2 * (size_t)q + (size_t)high];
            size_t at = mq->near < mq->first ? mq->first : mq->near;
            if (at >= mq->last) at = mq->last - 1; /* popped from the back: the last entry is inside */
            while (mq->pos[at & mask] < from) at++;
            mq->near = at;
            const size_t slot = ((size_t)mq->pos[at & mask] & mask) * win->d + q;
            side[high] = win->code[slot];
            sidev[high] = win->value[slot];
        }
        if (side[0] != win->klo[q] || side[1] != win->khi[q] || !win->k_valid) {
            win->klo[q] = side[0];
            win->khi[q] = side[1];
            win->klov[q] = sidev[0];
            win->khiv[q] = sidev[1];
            win->kncp[q] = window_ncp(win, q, side[0], side[1], sidev[0], sidev[1]);
        }
        win->lo[q] = win->klo[q];
        win->hi[q] = win->khi[q];
        win->lov[q] = win->klov[q];
        win->hiv[q] = win->khiv[q];
        win->ncp[q] = win->kncp[q];
    }
    win->k_valid = 1;
    double s = 0;
    for (uint32_t q = 0; q < win->d; q++) s += win->weight[q] * win->ncp[q];
    return s;
}

/* Grows the box by marked position p: each queue it is in moves one side of
 * the box (its code is strictly beyond every later code of the window).
 * Returns the box's weighted NCP sum, `sum` before, updated by the changes
 * of the QIs that grew. */
static double box_grow(kanon_window *win, size_t p, double sum)
{
    const uint32_t *row = win->code + (p & win->mask) * win->d;
    const double *val = win->value + (p & win->mask) * win->d;
    const uint64_t *m = win->marks + (p & win->mask) * win->mw;
    for (size_t wi = 0; wi < win->mw; wi++)
        for (uint64_t bits = m[wi]; bits; bits &= bits - 1) {
            const size_t b = wi * 64 + (size_t)__builtin_ctzll(bits);
            const uint32_t q = (uint32_t)(b / 2);
            if (b % 2) win->hi[q] = row[q], win->hiv[q] = val[q];
            else win->lo[q] = row[q], win->lov[q] = val[q];
            const double ncp = window_ncp(win, q, win->lo[q], win->hi[q], win->lov[q], win->hiv[q]);
            sum += win->weight[q] * (ncp - win->ncp[q]);
            win->ncp[q] = ncp;
        }
    return sum;
}

/* The unmarked positions at the top of [lo, hi] (hi + 1 >= lo): returns r
 * such that positions r .. hi are in no queue and, when r > lo, position
 * r - 1 is in one. Scans the summary bits a word at a time. */
static size_t last_marked(const kanon_window *win, size_t lo, size_t hi)
{
    size_t p = hi + 1; /* positions p .. hi are unmarked */
    while (p > lo) {
        const size_t slot = (p - 1) & win->mask, b = slot % 64;
        const uint64_t word = win->any[slot / 64] & (b == 63 ? ~0ull : (2ull << b) - 1); /* slots .. slot */
        if (word) {
            const size_t at = (p - 1) - (b - (size_t)(63 - __builtin_clzll(word)));
            return at + 1 > lo ? at + 1 : lo;
        }
        if (p - lo <= b + 1) return lo;
        p -= b + 1;
    }
    return lo;
}

/* a[0 .. n) = v, four at a time. */
static inline void fill(double *a, size_t n, double v)
{
    size_t j = 0;
    for (; j + 4 <= n; j += 4) a[j] = a[j + 1] = a[j + 2] = a[j + 3] = v;
    for (; j < n; j++) a[j] = v;
}

/* The candidates of prefix i: o[j] is Opt of position lo + j, where the
 * candidate group starting there begins (it has l_first - j rows), and
 * cost[j] the weighted NCP of its box. The least o[j] + l * cost[j], ties
 * to the shortest group, goes to *best and *best_len: the outcome of a scan
 * from the shortest group that takes a candidate only when strictly below
 * the best so far. Each candidate's cost is the same double whichever way it
 * is computed (a product, then a sum; no fused multiply-add). */
static void best_scalar(const double *o, const double *cost, size_t count, double l_first, double *best,
                        uint32_t *best_len)
{
    double l = l_first - (double)count;
    for (size_t j = count; j-- > 0;) {
        l += 1;
        const double c = o[j] + l * cost[j];
        if (c < *best) {
            *best = c;
            *best_len = (uint32_t)l;
        }
    }
}

#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
#define KANON_HAVE_AVX 1

/* best_scalar four candidates at a time (AVX): from the shortest group on,
 * every lane keeps its least cost and, as the minimum keeps the earlier
 * value on a tie, the shortest group reaching it; the lanes are then merged
 * by the same rule, and the longest groups left over go through
 * best_scalar. */
__attribute__((target("avx"))) static void best_avx(const double *o, const double *cost, size_t count,
                                                     double l_first, double *best, uint32_t *best_len)
{
    size_t j = count;
    if (j >= 4) {
        __m256d bc = _mm256_set1_pd(INFINITY), bl = _mm256_setzero_pd();
        const __m256d four = _mm256_set1_pd(4);
        const double l0 = l_first - (double)j; /* lane a holds position j-4+a: l0 + 4 - a rows */
        __m256d l = _mm256_set_pd(l0 + 1, l0 + 2, l0 + 3, l0 + 4);
        for (; j >= 4; j -= 4) {
            const __m256d c = _mm256_add_pd(_mm256_loadu_pd(o + j - 4), _mm256_mul_pd(l, _mm256_loadu_pd(cost + j - 4)));
            const __m256d take = _mm256_cmp_pd(c, bc, _CMP_LT_OQ);
            bc = _mm256_min_pd(c, bc); /* c where c < bc, else bc */
            bl = _mm256_or_pd(_mm256_and_pd(take, l), _mm256_andnot_pd(take, bl));
            l = _mm256_add_pd(l, four);
        }
        double c[4], len[4];
        _mm256_storeu_pd(c, bc);
        _mm256_storeu_pd(len, bl);
        for (int a = 0; a < 4; a++)
            if (c[a] < *best || (c[a] == *best && len[a] < *best_len)) *best = c[a], *best_len = (uint32_t)len[a];
    }
    best_scalar(o, cost, j, l_first, best, best_len);
}
#else
#define KANON_HAVE_AVX 0
#endif

/* Reverses the chosen group lengths (read back from the end) into sizes. */
static int read_back(const uint32_t *len, size_t n, uint32_t *sizes, size_t *ngroups, ak_error *err)
{
    size_t count = 0;
    for (size_t i = n; i > 0; i -= len[i]) {
        if (!len[i]) /* cannot happen for n >= k */
            return ak_err_set(err, ANONKIT_E_INTERNAL, NULL, 0, 0, "1-D k-anonymity found no partitioning");
        sizes[count++] = len[i];
    }
    for (size_t a = 0, z = count ? count - 1 : 0; a < z; a++, z--) {
        uint32_t x = sizes[a];
        sizes[a] = sizes[z];
        sizes[z] = x;
    }
    *ngroups = count;
    return ANONKIT_OK;
}

int hil_kanon_dp(const table *t, const uint32_t *order, size_t n, uint64_t k, const double *weights,
                 const double *gap, uint32_t *sizes, size_t *ngroups, double *cost, ak_error *err)
{
    *ngroups = 0;
    *cost = 0;
    if (k < 1 || n < k || k > UINT32_MAX / 4)
        return ak_err_set(err, ANONKIT_E_INTERNAL, NULL, 0, 0, "1-D k-anonymity with k = %llu on %zu rows",
                          (unsigned long long)k, n);
    const size_t w = (size_t)(2 * k - 1);
    size_t ring = 2;
    while (ring < 2 * k) ring *= 2;
    const size_t mask = ring - 1;
    double *opt = malloc(2 * ring * sizeof *opt); /* a ring written twice over: any run of up to ring slots is contiguous */
    double *boxcost = gap ? NULL : malloc(w * sizeof *boxcost); /* per candidate, its box's weighted NCP */
    uint32_t *len = malloc((n + 1) * sizeof *len);
    kanon_window win;
    /* Fast: the extent of the k-row candidate is the sum of its k-1 gaps,
     * taken over blocks of b = k-1 gaps as a suffix of the block before plus
     * a prefix of the current one (sums of non-negative numbers, so no
     * cancellation), in O(1) per row. */
    const size_t b = k > 1 ? (size_t)k - 1 : 1;
    double *suf = gap ? malloc(b * sizeof *suf) : NULL, pre = 0;
    int rc = opt && len && (suf || !gap) && (boxcost || gap) ? ANONKIT_OK : ak_err_nomem(err);
    if (rc >= 0 && !gap) rc = window_init(&win, t, n, ring, weights, err);
    if (rc < 0) {
        free(opt), free(len), free(suf), free(boxcost);
        return rc;
    }
    /* Opt(0) = 0 and Opt(j) = infinity for 0 < j < k: no partitioning. The
     * candidates of prefix i start at j >= i - 2k + 1, so the ring of >= 2k
     * slots still holds every Opt(j) they read. */
    opt[0] = opt[ring] = 0;
#if KANON_HAVE_AVX
    const int avx = __builtin_cpu_supports("avx");
#endif
    len[0] = 0;
    for (size_t i = 1; i <= n; i++) {
        double best = INFINITY;
        uint32_t best_len = 0;
        const size_t longest = i < w ? i : w;
        if (gap) {
            if (i >= 2 && k >= 2) { /* gap e = i-1 enters the window */
                const size_t e = i - 1;
                if ((e - 1) % b == 0) { /* a block starts: suffix sums of the one before */
                    double acc = 0;
                    for (size_t x = e; x-- > (e > b ? e - b : 1);) suf[(x - 1) % b] = acc += gap[x];
                    pre = 0;
                }
                pre += gap[e];
            }
            if (i >= k) {
                /* key distance from row i-k to row i-1: gaps i-k+1 .. i-1 */
                const size_t first = i - k + 1;
                double extent = k < 2 ? 0 : (first - 1) % b == 0 ? pre : suf[(first - 1) % b] + pre;
                for (size_t l = k; l <= longest; l++) {
                    if (l > k) extent += gap[i - l + 1];
                    const double c = opt[(i - l) & mask] + (double)l * extent;
                    if (c < best) {
                        best = c;
                        best_len = (uint32_t)l;
                    }
                }
            }
        } else {
            window_slide(&win, order, i - 1, w);
            if (i >= k) {
                /* The box of every candidate, from the k-row group
                 * leftwards: it stays the same over a run of unmarked
                 * positions and grows at the marked one below it. Then all
                 * candidates at once. */
                double sum = box_set(&win, i - k);
                const size_t lo = i - longest; /* the longest candidate's first position */
                size_t p = i - k;              /* the candidate's first position */
                for (;;) {
                    boxcost[p - lo] = sum;
                    if (p == lo) break;
                    const size_t r = last_marked(&win, lo, p - 1); /* r .. p-1 unmarked: the same box */
                    fill(boxcost + (r - lo), p - r, sum);
                    if (r == lo) break;
                    p = r - 1;
                    sum = box_grow(&win, p, sum);
                }
                const size_t count = i - k - lo + 1;
#if KANON_HAVE_AVX
                if (avx) best_avx(opt + (lo & mask), boxcost, count, (double)longest, &best, &best_len);
                else
#endif
                    best_scalar(opt + (lo & mask), boxcost, count, (double)longest, &best, &best_len);
            }
        }
        opt[i & mask] = opt[(i & mask) + ring] = best;
        len[i] = best_len;
    }
    *cost = opt[n & mask];
    rc = read_back(len, n, sizes, ngroups, err);
    if (!gap) window_free(&win);
    free(opt), free(len), free(suf), free(boxcost);
    return rc;
}
