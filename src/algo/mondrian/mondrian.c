/* mondrian.c — greedy top-down Mondrian partitioning with the Median split
 * (000 §1.2, 003 "The Greedy Partitioning Algorithm").
 *
 * Rows are copied into one row-major work array (QI codes, sensitive code, row
 * id) and every partition is a contiguous slice of it, split in place like
 * quicksort; an explicit stack replaces recursion. For each partition the
 * dimensions are tried in order of decreasing normalized range (numeric: range
 * of values over the table's range; categorical: leaves under the lowest
 * common ancestor over all leaves; ties to the lowest attribute index), and
 * the first allowable split is taken:
 *   numeric      lhs = {code <= median}; if that is not allowable, the other
 *                side of the median value, lhs = {code < median}; when an
 *                l-diversity model rejects both, every threshold is swept and
 *                the allowable one nearest the median taken, so that the result
 *                is minimal for every monotone model, not only k-anonymity;
 *   categorical  the lowest common ancestor of the partition's values is
 *                specialized into its children (empty children hold no rows).
 * A partition with no allowable split becomes an equivalence class. */
#include "algo/mondrian/mondrian.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/stats.h"

typedef struct mdr_frame {
    size_t begin, end;
} mdr_frame;

typedef struct mdr {
    const table *t;
    const model *m;
    partition *out;     /* classes found by this worker, ids local to it */
    uint32_t *class_of; /* shared: class of every input row */
    unsigned threads;   /* threads this worker may still hand work to, itself included */
    size_t capacity;    /* rows of the largest partition this worker can meet */
    uint32_t d;         /* QIs */
    uint32_t w;         /* words per work row: d codes, sensitive code, row id */
    size_t n;
    uint32_t *rows;     /* n * w */
    uint32_t *scratch;  /* n values: median selection */
    uint32_t *moved;    /* n * w, categorical redistribution (lazily allocated) */
    uint64_t *pairs;    /* n, threshold sweep (lazily allocated) */
    int need_sensitive;
    uint32_t sensitive_domain;
    ak_hist whole, left, less; /* partition, candidate left side, rows < median */
    uint32_t *counts, *counts_scratch;
    double *span;       /* numeric: table's value range per QI */
    uint32_t *child_rows; /* per child of a categorical node: row count */
    uint32_t max_children;
    uint32_t bw;        /* box half-width: d rounded up to 8 (lo codes, then hi codes) */
    int simd;           /* use the AVX2 box kernels */
    /* stack of pending partitions and their boxes (2*bw codes per frame) */
    mdr_frame *stack;
    uint32_t *boxes;
    size_t depth, cap;
} mdr;

static inline uint32_t *row_at(const mdr *s, size_t i) { return s->rows + i * s->w; }

/* Exchanges two work rows of w words (a plain loop: a memcpy call per swap
 * costs more than the copy). */
static inline void swap_rows(uint32_t *a, uint32_t *b, uint32_t w)
{
    for (uint32_t x = 0; x < w; x++) {
        uint32_t tmp = a[x];
        a[x] = b[x];
        b[x] = tmp;
    }
}

/* A box is bw lowest codes then bw highest codes; lanes d..bw-1 are padding
 * the vector kernels fill with whatever follows a row's codes. */
static inline void box_reset(uint32_t *box, uint32_t bw)
{
    for (uint32_t q = 0; q < bw; q++) {
        box[q] = UINT32_MAX;
        box[bw + q] = 0;
    }
}

static inline void box_add(uint32_t *box, const uint32_t *r, uint32_t d, uint32_t bw)
{
    for (uint32_t q = 0; q < d; q++) {
        if (r[q] < box[q]) box[q] = r[q];
        if (r[q] > box[bw + q]) box[bw + q] = r[q];
    }
}

/* The box loops read every row at every level of the tree and dominate the
 * running time; with AVX2 a row's codes are folded in eight at a time. The
 * kernels read bw codes from each row start, past its last code into the next
 * row (the rows array is padded for the last one): those lanes are ignored. */
#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
#define MDR_HAVE_AVX2 1
#define MDR_MAX_CHUNKS 8 /* vector kernels for up to 64 QIs */

__attribute__((target("avx2"))) static inline void box_add_avx2(__m256i *lo, __m256i *hi, const uint32_t *r,
                                                                 uint32_t chunks)
{
    for (uint32_t c = 0; c < chunks; c++) {
        __m256i v = _mm256_loadu_si256((const __m256i *)(r + 8 * c));
        lo[c] = _mm256_min_epu32(lo[c], v);
        hi[c] = _mm256_max_epu32(hi[c], v);
    }
}

__attribute__((target("avx2"))) static void box_load_avx2(__m256i *lo, __m256i *hi, uint32_t chunks)
{
    for (uint32_t c = 0; c < chunks; c++) {
        lo[c] = _mm256_set1_epi32(-1);
        hi[c] = _mm256_setzero_si256();
    }
}

__attribute__((target("avx2"))) static void box_store_avx2(uint32_t *box, const __m256i *lo, const __m256i *hi,
                                                          uint32_t chunks)
{
    for (uint32_t c = 0; c < chunks; c++) {
        _mm256_storeu_si256((__m256i *)(box + 8 * c), lo[c]);
        _mm256_storeu_si256((__m256i *)(box + 8 * chunks + 8 * c), hi[c]);
    }
}

__attribute__((target("avx2"))) static void compute_box_avx2(const uint32_t *rows, uint32_t w, size_t begin,
                                                            size_t end, uint32_t bw, uint32_t *box)
{
    const uint32_t chunks = bw / 8;
    __m256i lo[MDR_MAX_CHUNKS], hi[MDR_MAX_CHUNKS];
    box_load_avx2(lo, hi, chunks);
    for (size_t i = begin; i < end; i++) box_add_avx2(lo, hi, rows + i * w, chunks);
    box_store_avx2(box, lo, hi, chunks);
}

/* partition_rows (below) with the AVX2 box kernels; `chunks` is a constant
 * in each of the specialized copies made by partition_rows_avx2. */
__attribute__((target("avx2"), always_inline)) static inline size_t
partition_rows_avx2_n(uint32_t *rows, uint32_t w, size_t begin, size_t end, uint32_t q, uint32_t cut,
                      const uint32_t chunks, uint32_t *left_box, uint32_t *right_box)
{
    __m256i llo[MDR_MAX_CHUNKS], lhi[MDR_MAX_CHUNKS], rlo[MDR_MAX_CHUNKS], rhi[MDR_MAX_CHUNKS];
    box_load_avx2(llo, lhi, chunks);
    box_load_avx2(rlo, rhi, chunks);
    size_t i = begin, j = end;
    for (;;) {
        while (i < j && rows[i * w + q] < cut) box_add_avx2(llo, lhi, rows + w * i++, chunks);
        while (i < j && rows[(j - 1) * w + q] >= cut) box_add_avx2(rlo, rhi, rows + w * --j, chunks);
        if (i >= j) break;
        uint32_t *a = rows + i * w, *b = rows + (j - 1) * w;
        uint32_t x = 0;
        for (; x + 8 <= w; x += 8) {
            __m256i va = _mm256_loadu_si256((const __m256i *)(a + x));
            __m256i vb = _mm256_loadu_si256((const __m256i *)(b + x));
            _mm256_storeu_si256((__m256i *)(a + x), vb);
            _mm256_storeu_si256((__m256i *)(b + x), va);
        }
        swap_rows(a + x, b + x, w - x);
        box_add_avx2(llo, lhi, a, chunks);
        box_add_avx2(rlo, rhi, b, chunks);
        i++;
        j--;
    }
    box_store_avx2(left_box, llo, lhi, chunks);
    box_store_avx2(right_box, rlo, rhi, chunks);
    return i;
}

__attribute__((target("avx2"))) static size_t partition_rows_avx2(uint32_t *rows, uint32_t w, size_t begin,
                                                                 size_t end, uint32_t q, uint32_t cut, uint32_t bw,
                                                                 uint32_t *left_box, uint32_t *right_box)
{
    switch (bw / 8) {
    case 1: return partition_rows_avx2_n(rows, w, begin, end, q, cut, 1, left_box, right_box);
    case 2: return partition_rows_avx2_n(rows, w, begin, end, q, cut, 2, left_box, right_box);
    case 3: return partition_rows_avx2_n(rows, w, begin, end, q, cut, 3, left_box, right_box);
    default: return partition_rows_avx2_n(rows, w, begin, end, q, cut, bw / 8, left_box, right_box);
    }
}
#else
#define MDR_HAVE_AVX2 0
#define MDR_MAX_CHUNKS 0
#endif

/* The box of rows [begin, end). */
static void compute_box(const mdr *s, size_t begin, size_t end, uint32_t *box)
{
#if MDR_HAVE_AVX2
    if (s->simd) {
        compute_box_avx2(s->rows, s->w, begin, end, s->bw, box);
        return;
    }
#endif
    box_reset(box, s->bw);
    for (size_t i = begin; i < end; i++) box_add(box, row_at(s, i), s->d, s->bw);
}

/* Pushes partition [begin, end) with its box, or computes the box when box is NULL. */
static int push(mdr *s, size_t begin, size_t end, const uint32_t *box_in, ak_error *err)
{
    if (s->depth == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 256;
        mdr_frame *stack = realloc(s->stack, cap * sizeof *stack);
        if (!stack) return ak_err_nomem(err);
        s->stack = stack;
        uint32_t *boxes = realloc(s->boxes, cap * 2 * s->bw * sizeof *boxes);
        if (!boxes) return ak_err_nomem(err);
        s->boxes = boxes;
        s->cap = cap;
    }
    s->stack[s->depth].begin = begin;
    s->stack[s->depth].end = end;
    uint32_t *box = s->boxes + s->depth * 2 * s->bw;
    if (box_in) memcpy(box, box_in, 2 * s->bw * sizeof *box);
    else compute_box(s, begin, end, box);
    s->depth++;
    return ANONKIT_OK;
}

/* Three-way quickselect: the value of rank `nth` (0-based) in a[0..n), with
 * the number of values below it and equal to it. */
static uint32_t select_nth(uint32_t *a, size_t n, size_t nth, size_t *less, size_t *equal)
{
    /* Everything left of a[lo..hi) is smaller than the answer and everything
     * right of it larger, so the counts of the answer's rank come for free. */
    size_t lo = 0, hi = n; /* search a[lo..hi) */
    for (;;) {
        if (hi - lo <= 1) {
            *less = lo;
            *equal = 1;
            return a[lo];
        }
        uint32_t x = a[lo], y = a[lo + (hi - lo) / 2], z = a[hi - 1];
        uint32_t pivot = x < y ? (y < z ? y : (x < z ? z : x)) : (x < z ? x : (y < z ? z : y));
        /* Dutch flag: [lo,lt) < pivot, [lt,i) == pivot, (gt,hi) > pivot */
        size_t lt = lo, i = lo, gt = hi;
        while (i < gt) {
            uint32_t v = a[i];
            if (v < pivot) {
                a[i++] = a[lt];
                a[lt++] = v;
            } else if (v > pivot) {
                a[i] = a[--gt];
                a[gt] = v;
            } else {
                i++;
            }
        }
        if (nth < lt) {
            hi = lt;
        } else if (nth >= gt) {
            lo = gt;
        } else {
            *less = lt;
            *equal = gt - lt;
            return pivot;
        }
    }
}

/* Whether a side of `count` rows with sensitive histogram counts satisfies the model. */
static int side_holds(mdr *s, uint64_t count, size_t ncounts)
{
    return model_holds(s->m, count, s->counts, ncounts, s->counts_scratch);
}

/* Whether splitting the partition (histogram s->whole, n rows) into a left
 * side of `left_count` rows with histogram `left` and the rest is allowable. */
static int split_allowable(mdr *s, size_t n, size_t left_count, const ak_hist *left)
{
    const uint64_t k = s->m->k;
    if (left_count < k || n - left_count < k || left_count == 0 || left_count == n) return 0;
    if (!s->need_sensitive) return 1;
    if (!side_holds(s, left_count, ak_hist_counts(left, s->counts))) return 0;
    return side_holds(s, n - left_count, ak_hist_counts_minus(&s->whole, left, s->counts));
}

static void fill_whole(mdr *s, size_t begin, size_t end)
{
    ak_hist_clear(&s->whole);
    for (size_t i = begin; i < end; i++) ak_hist_add(&s->whole, row_at(s, i)[s->d]);
}

/* Moves rows with code(q) < cut to the front of [begin, end) and returns the
 * split point; computes both sides' boxes (lo then hi codes) on the way, so
 * that each row is read once. */
static size_t partition_rows(mdr *s, size_t begin, size_t end, uint32_t q, uint32_t cut, uint32_t *left_box,
                             uint32_t *right_box)
{
#if MDR_HAVE_AVX2
    if (s->simd) return partition_rows_avx2(s->rows, s->w, begin, end, q, cut, s->bw, left_box, right_box);
#endif
    const uint32_t w = s->w, d = s->d, bw = s->bw;
    box_reset(left_box, bw);
    box_reset(right_box, bw);
    size_t i = begin, j = end;
    for (;;) {
        while (i < j && row_at(s, i)[q] < cut) box_add(left_box, row_at(s, i++), d, bw);
        while (i < j && row_at(s, j - 1)[q] >= cut) box_add(right_box, row_at(s, --j), d, bw);
        if (i >= j) break;
        uint32_t *a = row_at(s, i), *b = row_at(s, j - 1);
        swap_rows(a, b, w);
        box_add(left_box, a, d, bw);
        box_add(right_box, b, d, bw);
        i++;
        j--;
    }
    return i;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Every threshold of QI q in the partition, when an l-diversity model rejected
 * both sides of the median: returns the cut (lhs = code < cut) of the
 * allowable split whose left side is closest to half, or 0 if none is. */
static int sweep_thresholds(mdr *s, size_t begin, size_t end, uint32_t q, uint32_t *cut, ak_error *err)
{
    const size_t n = end - begin;
    if (!s->pairs && !(s->pairs = malloc(s->capacity * sizeof *s->pairs))) return ak_err_nomem(err);
    for (size_t i = 0; i < n; i++) {
        const uint32_t *r = row_at(s, begin + i);
        s->pairs[i] = (uint64_t)r[q] << 32 | r[s->d];
    }
    qsort(s->pairs, n, sizeof *s->pairs, cmp_u64);
    ak_hist_clear(&s->left);
    size_t best = 0, best_distance = SIZE_MAX;
    for (size_t i = 0; i + 1 < n; i++) {
        ak_hist_add(&s->left, (uint32_t)s->pairs[i]);
        if ((s->pairs[i] >> 32) == (s->pairs[i + 1] >> 32)) continue;
        size_t left = i + 1;
        size_t distance = 2 * left > n ? 2 * left - n : n - 2 * left;
        if (distance < best_distance && split_allowable(s, n, left, &s->left)) {
            best = left;
            best_distance = distance;
        }
    }
    if (!best) return 0;
    *cut = (uint32_t)(s->pairs[best] >> 32);
    return 1;
}

/* Tries the median split of numeric QI q; pushes the two halves and returns 1
 * when it is allowable, 0 when not. */
/* The lower median of QI q over rows [begin, end) whose codes lie in
 * [lo, hi], with the number of rows below and at it. A narrow code range is
 * counted (one pass, no branches on the data); a wide one goes through
 * quickselect on a copy. */
static uint32_t median_of(mdr *s, size_t begin, size_t end, uint32_t q, uint32_t lo, uint32_t hi, size_t *less,
                          size_t *equal)
{
    const size_t n = end - begin, nth = (n - 1) / 2;
    const size_t range = (size_t)(hi - lo) + 1;
    if (range <= n) {
        uint32_t *count = s->scratch; /* range <= n <= capacity */
        memset(count, 0, range * sizeof *count);
        for (size_t i = begin; i < end; i++) count[row_at(s, i)[q] - lo]++;
        size_t below = 0, v = 0;
        while (below + count[v] <= nth) below += count[v++];
        *less = below;
        *equal = count[v];
        return lo + (uint32_t)v;
    }
    for (size_t i = 0; i < n; i++) s->scratch[i] = row_at(s, begin + i)[q];
    return select_nth(s->scratch, n, nth, less, equal);
}

static int split_numeric(mdr *s, size_t begin, size_t end, uint32_t q, const uint32_t *lo, const uint32_t *hi,
                         ak_error *err)
{
    const size_t n = end - begin;
    size_t less, equal;
    const uint32_t median = median_of(s, begin, end, q, lo[q], hi[q], &less, &equal);
    if (s->need_sensitive) {
        ak_hist_clear(&s->left);
        ak_hist_clear(&s->less);
        for (size_t i = begin; i < end; i++) {
            const uint32_t *r = row_at(s, i);
            if (r[q] < median) {
                ak_hist_add(&s->less, r[s->d]);
                ak_hist_add(&s->left, r[s->d]);
            } else if (r[q] == median) {
                ak_hist_add(&s->left, r[s->d]);
            }
        }
    }
    uint32_t cut = 0;
    if (split_allowable(s, n, less + equal, &s->left)) {
        cut = median + 1; /* lhs: code <= median */
    } else if (split_allowable(s, n, less, &s->less)) {
        cut = median;     /* lhs: code < median */
    } else if (s->need_sensitive) {
        int found = sweep_thresholds(s, begin, end, q, &cut, err);
        if (found <= 0) return found;
    } else {
        return 0; /* under k-anonymity alone no other threshold can be allowable */
    }
    uint32_t left_box[2 * s->bw], right_box[2 * s->bw];
    size_t mid = partition_rows(s, begin, end, q, cut, left_box, right_box);
    AK_CHECK(push(s, mid, end, right_box, err));
    AK_CHECK(push(s, begin, mid, left_box, err));
    return 1;
}

/* Index of the child (children sorted by code) that covers code. */
static uint32_t child_of(const hier *h, const hier_node *u, uint32_t code)
{
    const uint32_t *children = hier_children(h) + u->first_child;
    uint32_t lo = 0, hi = u->nchildren - 1;
    while (lo < hi) {
        uint32_t mid = (lo + hi + 1) / 2;
        if (hier_node_at(h, children[mid])->lo <= code) lo = mid;
        else hi = mid - 1;
    }
    return lo;
}

/* Tries to specialize categorical QI q's lowest common ancestor into its
 * children; pushes the non-empty children and returns 1 when allowable. */
static int split_categorical(mdr *s, size_t begin, size_t end, uint32_t q, const uint32_t *lo,
                             const uint32_t *hi, ak_error *err)
{
    const hier *h = s->t->qi[q].h;
    const hier_node *u = hier_node_at(h, hier_lca(h, lo[q], hi[q]));
    const uint32_t nc = u->nchildren;
    uint32_t *rows_in = s->child_rows;
    memset(rows_in, 0, nc * sizeof *rows_in);
    for (size_t i = begin; i < end; i++) rows_in[child_of(h, u, row_at(s, i)[q])]++;
    for (uint32_t c = 0; c < nc; c++)
        if (rows_in[c] && rows_in[c] < s->m->k) return 0;
    /* Redistribute the rows by child (counting sort), then test each child. */
    const size_t n = end - begin;
    if (!s->moved && !(s->moved = malloc(s->capacity * s->w * sizeof *s->moved))) return ak_err_nomem(err);
    uint32_t *start = malloc((nc + 1) * sizeof *start);
    if (!start) return ak_err_nomem(err);
    start[0] = 0;
    for (uint32_t c = 0; c < nc; c++) start[c + 1] = start[c] + rows_in[c];
    for (size_t i = begin; i < end; i++) {
        const uint32_t *r = row_at(s, i);
        uint32_t c = child_of(h, u, r[q]);
        memcpy(s->moved + (size_t)start[c]++ * s->w, r, s->w * sizeof *r);
    }
    memcpy(row_at(s, begin), s->moved, n * s->w * sizeof *s->moved);
    int allowable = 1;
    size_t at = begin;
    if (s->need_sensitive) {
        for (uint32_t c = 0; c < nc && allowable; c++) {
            ak_hist_clear(&s->left);
            for (size_t i = at; i < at + rows_in[c]; i++) ak_hist_add(&s->left, row_at(s, i)[s->d]);
            if (rows_in[c] && !side_holds(s, rows_in[c], ak_hist_counts(&s->left, s->counts))) allowable = 0;
            at += rows_in[c];
        }
    }
    free(start);
    if (!allowable) return 0;
    /* Push in reverse so that the first child is processed first. */
    size_t stop = end;
    for (uint32_t c = nc; c-- > 0;) {
        if (!rows_in[c]) continue;
        AK_CHECK(push(s, stop - rows_in[c], stop, NULL, err));
        stop -= rows_in[c];
    }
    return 1;
}

/* Normalized range of QI q in a partition with box [lo, hi]; 0 when it cannot be split. */
static double normalized_range(const mdr *s, uint32_t q, const uint32_t *lo, const uint32_t *hi)
{
    if (lo[q] == hi[q]) return 0;
    const table_qi *a = &s->t->qi[q];
    if (a->kind == ATTR_NUMERIC) return (a->values[hi[q]] - a->values[lo[q]]) / s->span[q];
    const hier_node *u = hier_node_at(a->h, hier_lca(a->h, lo[q], hi[q]));
    return (double)(u->hi - u->lo + 1) / (double)a->ncodes;
}

/* Splits the partition on top of the stack, or makes it a class. */
static int process_top(mdr *s, ak_error *err)
{
    const uint32_t d = s->d;
    s->depth--;
    const size_t begin = s->stack[s->depth].begin, end = s->stack[s->depth].end;
    uint32_t box[2 * s->bw];
    memcpy(box, s->boxes + s->depth * 2 * s->bw, sizeof box);
    const uint32_t *lo = box, *hi = box + s->bw;

    double range[d];
    uint32_t order[d], ncand = 0;
    for (uint32_t q = 0; q < d; q++) {
        range[q] = normalized_range(s, q, lo, hi);
        if (range[q] <= 0) continue;
        uint32_t at = ncand++; /* insertion sort: wider first, then lower index */
        while (at > 0 && range[order[at - 1]] < range[q]) {
            order[at] = order[at - 1];
            at--;
        }
        order[at] = q;
    }
    if (ncand && s->need_sensitive) fill_whole(s, begin, end);
    for (uint32_t i = 0; i < ncand; i++) {
        uint32_t q = order[i];
        int split = s->t->qi[q].kind == ATTR_NUMERIC ? split_numeric(s, begin, end, q, lo, hi, err)
                                                     : split_categorical(s, begin, end, q, lo, hi, err);
        if (split != 0) return split < 0 ? split : ANONKIT_OK;
    }
    uint32_t id;
    AK_CHECK(partition_add_class(s->out, lo, hi, end - begin, &id, err));
    for (size_t i = begin; i < end; i++) s->class_of[row_at(s, i)[d + 1]] = id;
    return ANONKIT_OK;
}

/* Frees the buffers of one worker (not the shared rows and spans). */
static void worker_free(mdr *s)
{
    free(s->scratch);
    free(s->moved);
    free(s->pairs);
    ak_hist_free(&s->whole);
    ak_hist_free(&s->left);
    ak_hist_free(&s->less);
    free(s->counts);
    free(s->counts_scratch);
    free(s->child_rows);
    free(s->stack);
    free(s->boxes);
}

/* Allocates the buffers of a worker for partitions of up to `capacity` rows. */
static int worker_alloc(mdr *s, size_t capacity, ak_error *err)
{
    s->capacity = capacity;
    s->scratch = malloc((capacity ? capacity : 1) * sizeof *s->scratch);
    s->counts = malloc((s->sensitive_domain + 1) * sizeof *s->counts);
    s->counts_scratch = malloc((s->sensitive_domain + 1) * sizeof *s->counts_scratch);
    s->child_rows = malloc((s->max_children + 1) * sizeof *s->child_rows);
    if (!s->scratch || !s->counts || !s->counts_scratch || !s->child_rows ||
        ak_hist_init(&s->whole, s->sensitive_domain) || ak_hist_init(&s->left, s->sensitive_domain) ||
        ak_hist_init(&s->less, s->sensitive_domain))
        return ak_err_nomem(err);
    return ANONKIT_OK;
}

/* Partitions smaller than this are not worth a thread. */
#define MDR_PARALLEL_MIN_ROWS 50000

typedef struct helper {
    mdr s;
    partition classes;
    size_t begin, end; /* the rows it owns */
    ak_error err;
    int rc;
    pthread_t thread;
    int started;
} helper;

static int run_worker(mdr *s, ak_error *err);

static void *helper_main(void *arg)
{
    helper *h = arg;
    h->rc = run_worker(&h->s, &h->err);
    return NULL;
}

/* Hands the bottom frames of the stack (the partitions that come last in
 * depth-first order) with about half the rows to a new thread; returns 1 when
 * a thread was started. The helper numbers its classes from 0; they are
 * appended after this worker's own when it is joined, which keeps the class
 * order of a single-threaded run. */
static int spawn_helper(mdr *s, helper **out, ak_error *err)
{
    *out = NULL;
    if (s->threads < 2 || s->depth < 2) return 0;
    size_t total = 0;
    for (size_t f = 0; f < s->depth; f++) total += s->stack[f].end - s->stack[f].begin;
    if (total < MDR_PARALLEL_MIN_ROWS) return 0;
    size_t give = 0, rows = 0; /* frames [0, give) go to the helper */
    while (give + 1 < s->depth && rows * 2 < total) {
        rows += s->stack[give].end - s->stack[give].begin;
        give++;
    }
    helper *h = calloc(1, sizeof *h);
    if (!h) return ak_err_nomem(err);
    h->s = *s; /* shares table, model, rows, spans and class_of */
    mdr *c = &h->s;
    c->scratch = NULL; c->moved = NULL; c->pairs = NULL; c->counts = NULL; c->counts_scratch = NULL;
    c->child_rows = NULL; c->stack = NULL; c->boxes = NULL; c->depth = c->cap = 0;
    memset(&c->whole, 0, sizeof c->whole);
    memset(&c->left, 0, sizeof c->left);
    memset(&c->less, 0, sizeof c->less);
    c->threads = s->threads / 2;
    c->out = &h->classes;
    h->begin = SIZE_MAX;
    size_t largest = 0;
    for (size_t f = 0; f < give; f++) {
        if (s->stack[f].begin < h->begin) h->begin = s->stack[f].begin;
        if (s->stack[f].end > h->end) h->end = s->stack[f].end;
        if (s->stack[f].end - s->stack[f].begin > largest) largest = s->stack[f].end - s->stack[f].begin;
    }
    int rc = partition_init(&h->classes, 0, s->d, err);
    if (rc == ANONKIT_OK) rc = worker_alloc(c, largest, err);
    for (size_t f = 0; rc == ANONKIT_OK && f < give; f++)
        rc = push(c, s->stack[f].begin, s->stack[f].end, s->boxes + f * 2 * s->bw, err);
    if (rc == ANONKIT_OK && pthread_create(&h->thread, NULL, helper_main, h) != 0)
        rc = ak_err_set(err, ANONKIT_E_INTERNAL, NULL, 0, 0, "cannot start a thread");
    if (rc < 0) {
        worker_free(c);
        partition_free(&h->classes);
        free(h);
        return rc;
    }
    h->started = 1;
    /* This worker keeps frames [give, depth). */
    memmove(s->stack, s->stack + give, (s->depth - give) * sizeof *s->stack);
    memmove(s->boxes, s->boxes + give * 2 * s->bw, (s->depth - give) * 2 * s->bw * sizeof *s->boxes);
    s->depth -= give;
    s->threads -= c->threads;
    *out = h;
    return 1;
}

/* Waits for a helper and appends its classes to this worker's. */
static int join_helper(mdr *s, helper *h, int rc, ak_error *err)
{
    pthread_join(h->thread, NULL);
    if (rc == ANONKIT_OK && h->rc < 0) {
        *err = h->err;
        rc = h->rc;
    }
    const uint32_t offset = (uint32_t)s->out->nclasses;
    for (size_t c = 0; rc == ANONKIT_OK && c < h->classes.nclasses; c++) {
        uint32_t id;
        rc = partition_add_class(s->out, partition_lo(&h->classes, c), partition_hi(&h->classes, c),
                                 h->classes.count[c], &id, err);
    }
    if (rc == ANONKIT_OK)
        for (size_t i = h->begin; i < h->end; i++) s->class_of[row_at(s, i)[s->d + 1]] += offset;
    worker_free(&h->s);
    partition_free(&h->classes);
    free(h);
    return rc;
}

/* Processes the worker's stack until it is empty, handing part of it to a
 * helper thread after the first split when threads are left. */
static int run_worker(mdr *s, ak_error *err)
{
    helper *h = NULL;
    int rc = ANONKIT_OK;
    while (s->depth > 0 && rc == ANONKIT_OK) {
        rc = process_top(s, err);
        if (rc == ANONKIT_OK && !h && s->threads > 1) {
            int spawned = spawn_helper(s, &h, err);
            if (spawned < 0) rc = spawned;
        }
    }
    if (h) rc = join_helper(s, h, rc, err);
    return rc;
}

int mdr_run(const table *t, const model *m, unsigned threads, partition *out, ak_error *err)
{
    const mdr_options options = {.threads = threads};
    return mdr_run_with(t, m, &options, out, err);
}

int mdr_run_with(const table *t, const model *m, const mdr_options *options, partition *out, ak_error *err)
{
    mdr s;
    memset(&s, 0, sizeof s);
    s.t = t;
    s.m = m;
    s.out = out;
    s.class_of = out->class_of;
    s.threads = options->threads ? options->threads : 1;
    s.d = t->nqi;
    s.w = s.d + 2;
    s.bw = (s.d + 7) / 8 * 8;
#if MDR_HAVE_AVX2
    s.simd = !options->no_simd && s.bw / 8 <= MDR_MAX_CHUNKS && __builtin_cpu_supports("avx2");
#endif
    s.n = t->nrows;
    s.need_sensitive = model_needs_sensitive(m);
    if (s.need_sensitive && t->sensitive_column < 0)
        return ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0, "l-diversity needs a sensitive column (--sensitive)");
    s.sensitive_domain = s.need_sensitive ? t->sensitive_dict.count : 1;
    for (uint32_t q = 0; q < s.d; q++) {
        const table_qi *a = &t->qi[q];
        if (a->kind == ATTR_CATEGORICAL)
            for (uint32_t node = 0; node < hier_node_count(a->h); node++)
                if (hier_node_at(a->h, node)->nchildren > s.max_children)
                    s.max_children = hier_node_at(a->h, node)->nchildren;
    }
    int rc = worker_alloc(&s, s.n, err);
    s.rows = malloc(((s.n ? s.n : 1) * s.w + s.bw) * sizeof *s.rows); /* + padding read by the kernels */
    s.span = calloc(s.d ? s.d : 1, sizeof *s.span);
    if (rc == ANONKIT_OK && (!s.rows || !s.span)) rc = ak_err_nomem(err);
    if (rc < 0) goto done;
    for (uint32_t q = 0; q < s.d; q++) {
        const table_qi *a = &t->qi[q];
        if (a->kind == ATTR_NUMERIC && a->ncodes > 1) s.span[q] = a->values[a->ncodes - 1] - a->values[0];
    }
    memset(s.rows + s.n * s.w, 0, s.bw * sizeof *s.rows);
    for (size_t i = 0; i < s.n; i++) {
        uint32_t *r = row_at(&s, i);
        for (uint32_t q = 0; q < s.d; q++) r[q] = t->qi[q].codes[i];
        r[s.d] = s.need_sensitive ? t->sensitive_codes[i] : 0;
        r[s.d + 1] = (uint32_t)i;
    }
    /* The whole table must satisfy the model, or no partitioning can. */
    fill_whole(&s, 0, s.n);
    char why[256];
    if (!model_explain(m, s.n, s.counts, ak_hist_counts(&s.whole, s.counts), s.counts_scratch, why, sizeof why)) {
        rc = ak_err_set(err, ANONKIT_E_INELIGIBLE, NULL, 0, 0,
                        "the whole table does not satisfy the privacy model (%s), so no anonymization can", why);
        goto done;
    }
    if (s.n == 0) goto done;
    if ((rc = push(&s, 0, s.n, NULL, err)) < 0) goto done;
    rc = run_worker(&s, err);
done:
    worker_free(&s);
    free(s.rows);
    free(s.span);
    return rc;
}
