/* mondrian.c — greedy top-down Mondrian partitioning (000 §1.2, 003 "The
 * Greedy Partitioning Algorithm") with the Median, InfoGain and Regression
 * split criteria.
 *
 * Rows are copied into one row-major work array (QI codes, the sensitive
 * code when l-diversity needs it, row id) and every partition is a contiguous
 * slice of it, split in place like quicksort (small ones out of place); an
 * explicit stack replaces recursion.
 *
 * Median: the dimensions are tried in order of decreasing normalized range
 * (numeric: range of values over the table's range; categorical: leaves under
 * the lowest common ancestor over all leaves; ties to the lowest attribute
 * index), and the first allowable split is taken:
 *   numeric      lhs = {code <= median}; if that is not allowable, the other
 *                side of the median value, lhs = {code < median}; when an
 *                l-diversity or variance model rejects both, every threshold
 *                is swept and the allowable one nearest the median taken, so
 *                that the result is minimal for every monotone model, not
 *                only k-anonymity;
 *   categorical  the lowest common ancestor of the partition's values is
 *                specialized into its children (empty children hold no rows).
 * InfoGain / Regression: every allowable split of every attribute is scored
 * (numeric thresholds by sorting the partition on the attribute and scanning
 * the cut points; categorical by the children of the lowest common ancestor)
 * and the best taken: largest information gain on the class label, or least
 * sum of squared errors of the target. Ties go to the lowest attribute, then
 * the lowest threshold. Under InfoGain a partition whose best gain is below
 * min_gain continues, with its whole subtree, under Median (000 footnote 13).
 *
 * A partition with no allowable split becomes an equivalence class. Each
 * frame also carries its region, the part of the domain its node of the
 * partition tree covers, which becomes the class's recoding rule. */
#include "algo/mondrian/mondrian.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/compare.h"
#include "common/hugemem.h"
#include "common/parallel.h"
#include "common/stats.h"

/* Partitions of at most this many rows are split out of place (partition_rows). */
#define MDR_SMALL_PARTITION 4096

typedef struct mdr_frame {
    size_t begin, end;
    int median_only; /* InfoGain gave up in an ancestor: Median from here down */
    uint32_t node;   /* growth phase: its node of the tree */
} mdr_frame;

/* The best split found so far for a partition (InfoGain / Regression). */
typedef struct best_split {
    int found;
    uint32_t q;
    uint32_t cut;  /* numeric: lhs = code < cut */
    double score;  /* information gain in bits, or reduction of the squared error */
} best_split;

typedef struct mdr {
    const table *t;
    const model *m;
    partition *out;     /* classes found by this worker, ids local to it */
    uint32_t *class_of; /* shared: class of every input row (written once all classes are known) */
    size_t *class_begin;/* per class this worker made (its out), the first of its rows in the work array */
    size_t class_begin_cap;
    unsigned threads;   /* threads this worker may still hand work to, itself included */
    atomic_uint *lent;  /* threads its parent lends it while waiting for it (NULL: none, the first worker) */
    size_t capacity;    /* rows of the largest partition this worker can meet */
    uint32_t d;         /* QIs */
    uint32_t w;         /* words per work row: d codes, the sensitive code (l-diversity only), the row id */
    uint32_t idw;       /* the word of a work row holding its row id (d, or d + 1 after a sensitive code) */
    size_t n;
    uint32_t *rows;     /* n * w */
    uint32_t *scratch;  /* n values: median selection */
    uint32_t *moved;    /* n * w, categorical redistribution (lazily allocated) */
    uint32_t *small_side, *small_rows; /* partition_rows of small partitions: 2 * MDR_SMALL_PARTITION indexes,
                                          MDR_SMALL_PARTITION * w + 8 words */
    uint32_t *order, *order_tmp, *code_count; /* sorting a partition by one code (lazily allocated) */
    int need_hist;      /* l-diversity: sensitive histograms */
    int need_mom;       /* variance diversity: sums of the numeric sensitive values */
    int need_sensitive; /* either */
    int exact;          /* every sensitive value is a small integer (model_moments) */
    uint32_t sensitive_domain;
    ak_hist whole, left, less; /* partition, candidate left side, rows < median */
    model_moments whole_mom, left_mom, less_mom;
    uint32_t *counts, *counts_scratch;
    uint32_t *child_rows; /* per child of a categorical node: row count */
    uint32_t max_children;
    mdr_split split;
    double min_gain;
    uint32_t class_domain;
    ak_hist cls_whole, cls_left, cls_group; /* InfoGain: class-label histograms */
    uint32_t bw;        /* box half-width: d rounded up to 8 (lo codes, then hi codes) */
    uint32_t fw;        /* words per frame: box (2 bw), region lo (d), region hi (d) */
    int simd;           /* use the AVX2 box kernels */
    /* stack of pending partitions with their boxes and regions (fw codes per frame) */
    mdr_frame *stack;
    uint32_t *boxes;
    size_t depth, cap;
    /* growth phase of Rothko-S (NULL otherwise) */
    const mdr_grow *grow;
    uint32_t grow_parent;   /* node being split: parent of the frames pushed */
    uint32_t grow_q;        /* the QI of the split just applied */
    unsigned grow_children; /* children of the split being tested (Bonferroni's m) */
    size_t grow_head;       /* frames are taken from the front: [grow_head, depth) are waiting */
    size_t grow_leaves;     /* nodes made leaves so far */
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
 * kernels read bw codes (or whole vectors) from each row start, past its last
 * code into the rows after it: those lanes are ignored. The rows after a
 * partition may belong to a partition another thread is rearranging, so a row
 * whose reading would pass the end of its range is read from a copy instead
 * (row_or_copy). */
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

/* Words a row is read as by the kernels, at most (box lanes, or whole vectors of a row). */
#define MDR_ROW_READ (8 * MDR_MAX_CHUNKS + 8)

/* The last row of rows[0 .. end) (w words each) from which `reach` words can
 * be read without passing end; rows after it are read by row_or_copy from a
 * copy. NULL when even the first row is too near the end. */
static inline const uint32_t *last_safe_row(const uint32_t *rows, size_t end, uint32_t w, uint32_t reach)
{
    const size_t words = end * w;
    return words >= reach ? rows + (words - reach) / w * w : NULL;
}

/* r, or when r lies after `safe` (last_safe_row) a copy of its w codes in tmp
 * (MDR_ROW_READ words), so that the vector loads stay inside the range. */
static inline const uint32_t *row_or_copy(const uint32_t *r, const uint32_t *safe, uint32_t w, uint32_t *tmp)
{
    if (safe && r <= safe) return r;
    memcpy(tmp, r, w * sizeof *r);
    memset(tmp + w, 0, (MDR_ROW_READ - w) * sizeof *tmp);
    return tmp;
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
    uint32_t tmp[MDR_ROW_READ];
    const uint32_t *safe = last_safe_row(rows, end, w, bw);
    box_load_avx2(lo, hi, chunks);
    for (size_t i = begin; i < end; i++) box_add_avx2(lo, hi, row_or_copy(rows + i * w, safe, w, tmp), chunks);
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
    const uint32_t *safe = last_safe_row(rows, end, w, 8 * chunks);
    uint32_t tmp[MDR_ROW_READ];
    size_t i = begin, j = end;
    for (;;) {
        while (i < j && rows[i * w + q] < cut) {
            box_add_avx2(llo, lhi, row_or_copy(rows + w * i, safe, w, tmp), chunks);
            i++;
        }
        while (i < j && rows[(j - 1) * w + q] >= cut) {
            --j;
            box_add_avx2(rlo, rhi, row_or_copy(rows + w * j, safe, w, tmp), chunks);
        }
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
        box_add_avx2(llo, lhi, row_or_copy(a, safe, w, tmp), chunks);
        box_add_avx2(rlo, rhi, row_or_copy(b, safe, w, tmp), chunks);
        i++;
        j--;
    }
    box_store_avx2(left_box, llo, lhi, chunks);
    box_store_avx2(right_box, rlo, rhi, chunks);
    return i;
}

/* partition_rows_small (below) with the AVX2 box kernels. */
__attribute__((target("avx2"), always_inline)) static inline size_t
partition_small_avx2_n(uint32_t *rows, uint32_t w, size_t begin, size_t end, uint32_t q, uint32_t cut,
                       const uint32_t chunks, uint32_t *side, uint32_t *moved, uint32_t *left_box, uint32_t *right_box)
{
    const size_t n = end - begin;
    const uint32_t *base = rows + begin * w;
    /* which side each row goes to, without a branch: left rows' indexes from
     * the front of side[], right rows' from side[n] on */
    uint32_t nl = 0, nr = 0;
    for (size_t i = 0; i < n; i++) {
        const uint32_t right = base[i * w + q] >= cut;
        side[nl] = (uint32_t)i;
        side[n + nr] = (uint32_t)i;
        nl += 1 - right;
        nr += right;
    }
    /* the rows in their new order, each side's box on the way; a row is
     * copied as whole vectors of 8 words, the tail past its w words being
     * overwritten by the next row (moved has room past the last one) */
    const uint32_t vectors = (w + 7) / 8;
    __m256i lo[MDR_MAX_CHUNKS], hi[MDR_MAX_CHUNKS];
    const uint32_t *safe = last_safe_row(base, n, w, 8 * (chunks > vectors ? chunks : vectors));
    uint32_t tmp[MDR_ROW_READ];
    uint32_t *to = moved;
    for (int s2 = 0; s2 < 2; s2++) {
        const uint32_t *idx = s2 ? side + n : side;
        const uint32_t count = s2 ? nr : nl;
        box_load_avx2(lo, hi, chunks);
        for (uint32_t m = 0; m < count; m++, to += w) {
            const uint32_t *from = row_or_copy(base + (size_t)idx[m] * w, safe, w, tmp);
            for (uint32_t c = 0; c < chunks; c++) {
                __m256i v = _mm256_loadu_si256((const __m256i *)(from + 8 * c));
                lo[c] = _mm256_min_epu32(lo[c], v);
                hi[c] = _mm256_max_epu32(hi[c], v);
            }
            for (uint32_t c = 0; c < vectors; c++)
                _mm256_storeu_si256((__m256i *)(to + 8 * c), _mm256_loadu_si256((const __m256i *)(from + 8 * c)));
        }
        box_store_avx2(s2 ? right_box : left_box, lo, hi, chunks);
    }
    memcpy(rows + begin * w, moved, n * w * sizeof *rows);
    return begin + nl;
}

__attribute__((target("avx2"))) static size_t partition_small_avx2(uint32_t *rows, uint32_t w, size_t begin,
                                                                  size_t end, uint32_t q, uint32_t cut, uint32_t bw,
                                                                  uint32_t *side, uint32_t *moved, uint32_t *left_box,
                                                                  uint32_t *right_box)
{
    switch (bw / 8) {
    case 1: return partition_small_avx2_n(rows, w, begin, end, q, cut, 1, side, moved, left_box, right_box);
    case 2: return partition_small_avx2_n(rows, w, begin, end, q, cut, 2, side, moved, left_box, right_box);
    case 3: return partition_small_avx2_n(rows, w, begin, end, q, cut, 3, side, moved, left_box, right_box);
    default: return partition_small_avx2_n(rows, w, begin, end, q, cut, bw / 8, side, moved, left_box, right_box);
    }
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


void mdr_tree_free(mdr_tree *tr)
{
    free(tr->nodes);
    free(tr->regions);
    tr->nodes = NULL;
    tr->regions = NULL;
    tr->count = tr->cap = 0;
}

/* Growth phase: records the node of a partition about to be pushed, a child
 * of s->grow_parent (none for the root). */
static int tree_add(mdr *s, size_t begin, size_t end, const uint32_t *rlo, const uint32_t *rhi, int median_only,
                    uint32_t *id, ak_error *err)
{
    mdr_tree *tr = s->grow->tree;
    if (tr->count == tr->cap) {
        const size_t cap = tr->cap ? 2 * tr->cap : 64;
        mdr_tree_node *nodes = realloc(tr->nodes, cap * sizeof *nodes);
        if (!nodes) return ak_err_nomem(err);
        tr->nodes = nodes;
        uint32_t *regions = realloc(tr->regions, cap * 2 * (s->d ? s->d : 1) * sizeof *regions);
        if (!regions) return ak_err_nomem(err);
        tr->regions = regions;
        tr->cap = cap;
    }
    tr->d = s->d;
    const uint32_t parent = tr->count ? s->grow_parent : UINT32_MAX;
    tr->nodes[tr->count] = (mdr_tree_node){.parent = parent,
                                           .depth = parent == UINT32_MAX ? 0 : tr->nodes[parent].depth + 1,
                                           .split_q = UINT32_MAX,
                                           .median_only = median_only,
                                           .rows = end - begin};
    memcpy(tr->regions + 2 * (size_t)s->d * tr->count, rlo, s->d * sizeof *rlo);
    memcpy(tr->regions + 2 * (size_t)s->d * tr->count + s->d, rhi, s->d * sizeof *rhi);
    *id = (uint32_t)tr->count++;
    return ANONKIT_OK;
}

/* Pushes partition [begin, end) with its box (computed when box_in is NULL)
 * and its region [rlo, rhi]. */
static int push(mdr *s, size_t begin, size_t end, const uint32_t *box_in, const uint32_t *rlo, const uint32_t *rhi,
                int median_only, ak_error *err)
{
    if (s->depth == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 256;
        mdr_frame *stack = realloc(s->stack, cap * sizeof *stack);
        if (!stack) return ak_err_nomem(err);
        s->stack = stack;
        uint32_t *boxes = realloc(s->boxes, cap * s->fw * sizeof *boxes);
        if (!boxes) return ak_err_nomem(err);
        s->boxes = boxes;
        s->cap = cap;
    }
    mdr_frame *f = &s->stack[s->depth];
    f->begin = begin;
    f->end = end;
    f->median_only = median_only;
    f->node = 0;
    if (s->grow) AK_CHECK(tree_add(s, begin, end, rlo, rhi, median_only, &f->node, err));
    uint32_t *box = s->boxes + s->depth * s->fw;
    if (box_in) memcpy(box, box_in, 2 * s->bw * sizeof *box);
    else compute_box(s, begin, end, box);
    memcpy(box + 2 * s->bw, rlo, s->d * sizeof *rlo);
    memcpy(box + 2 * s->bw + s->d, rhi, s->d * sizeof *rhi);
    s->depth++;
    /* The values at the box's ends, which ordering the dimensions reads (and
     * which mostly miss the cache), asked for now: the last partition pushed
     * is the next one split. */
    for (uint32_t q = 0; q < s->d; q++) {
        const table_qi *a = &s->t->qi[q];
        if (a->kind == ATTR_NUMERIC && box[q] != box[s->bw + q]) {
            __builtin_prefetch(a->values + box[q]);
            __builtin_prefetch(a->values + box[s->bw + q]);
        }
    }
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


/* Adds a row to the sensitive statistics of one side of a split. */
static inline void side_add(mdr *s, ak_hist *h, model_moments *mo, const uint32_t *r)
{
    if (s->need_hist) ak_hist_add(h, r[s->d]);
    if (s->need_mom) model_moments_add(mo, s->t->sensitive_values[r[s->idw]]);
}

static void side_clear(ak_hist *h, model_moments *mo)
{
    ak_hist_clear(h);
    memset(mo, 0, sizeof *mo);
}

/* Whether `count` rows with sensitive statistics (h, mo) satisfy the model;
 * the histogram counts are written to s->counts. */
static int side_holds(mdr *s, uint64_t count, const ak_hist *h, const model_moments *mo)
{
    if (s->grow) {
        const size_t ncounts = s->need_hist ? ak_hist_counts(h, s->counts) : 0;
        return sample_test_child(s->grow->test, count, s->counts, ncounts, s->counts_scratch, mo, s->exact,
                                 s->grow_children);
    }
    if (count < s->m->k) return 0;
    if (s->need_mom && !model_variance_holds(s->m, mo, s->exact)) return 0;
    if (!s->need_hist) return 1;
    return model_holds(s->m, count, s->counts, ak_hist_counts(h, s->counts), s->counts_scratch);
}

/* Growth phase: the test of the right side of a binary split, whose
 * histogram is the partition's (s->whole) less the left side's. */
static int right_side_holds(mdr *s, uint64_t count, const ak_hist *left, const model_moments *mo)
{
    const size_t ncounts = s->need_hist ? ak_hist_counts_minus(&s->whole, left, s->counts) : 0;
    return sample_test_child(s->grow->test, count, s->counts, ncounts, s->counts_scratch, mo, s->exact, 2);
}

/* Whether splitting the partition (statistics s->whole, s->whole_mom; n rows)
 * into a left side of `left_count` rows with statistics (left, left_mom) and
 * the rest is allowable. */
static int split_allowable(mdr *s, size_t n, size_t left_count, const ak_hist *left, const model_moments *left_mom)
{
    const uint64_t k = s->m->k;
    if (s->grow) { /* both sides through the tests of 000 §3.1 */
        if (left_count == 0 || left_count == n) return 0;
        s->grow_children = 2;
        if (!side_holds(s, left_count, left, left_mom)) return 0;
        const model_moments right_mom = model_moments_minus(&s->whole_mom, left_mom);
        return right_side_holds(s, n - left_count, left, &right_mom);
    }
    if (left_count < k || n - left_count < k || left_count == 0 || left_count == n) return 0;
    if (!s->need_sensitive) return 1;
    if (s->need_mom) {
        const model_moments right = model_moments_minus(&s->whole_mom, left_mom);
        if (!model_variance_holds(s->m, left_mom, s->exact) || !model_variance_holds(s->m, &right, s->exact))
            return 0;
    }
    if (!s->need_hist) return 1;
    if (!model_holds(s->m, left_count, s->counts, ak_hist_counts(left, s->counts), s->counts_scratch)) return 0;
    return model_holds(s->m, n - left_count, s->counts, ak_hist_counts_minus(&s->whole, left, s->counts),
                       s->counts_scratch);
}

static void fill_whole(mdr *s, size_t begin, size_t end)
{
    side_clear(&s->whole, &s->whole_mom);
    for (size_t i = begin; i < end; i++) side_add(s, &s->whole, &s->whole_mom, row_at(s, i));
}

/* Whether the rows [begin, end) (one child of a split) satisfy the model's
 * sensitive requirements. */
static int rows_hold(mdr *s, size_t begin, size_t end)
{
    side_clear(&s->left, &s->left_mom);
    for (size_t i = begin; i < end; i++) side_add(s, &s->left, &s->left_mom, row_at(s, i));
    return side_holds(s, end - begin, &s->left, &s->left_mom);
}

/* Moves rows with code(q) < cut to the front of [begin, end) and returns the
 * split point; computes both sides' boxes (lo then hi codes) on the way, so
 * that each row is read once. */
static size_t partition_rows(mdr *s, size_t begin, size_t end, uint32_t q, uint32_t cut, uint32_t *left_box,
                             uint32_t *right_box)
{
#if MDR_HAVE_AVX2
    /* A small partition (in cache) is split out of place through index
     * lists, without a branch on the data: the in-place exchange below
     * mispredicts about every other row, which in cache costs more than the
     * extra copy. */
    if (s->simd && end - begin <= MDR_SMALL_PARTITION && s->small_side)
        return partition_small_avx2(s->rows, s->w, begin, end, q, cut, s->bw, s->small_side, s->small_rows,
                                    left_box, right_box);
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

/* Partitions up to this size are sorted by comparison in order_by_code. */
#define MDR_SMALL_SORT 4096

/* Sorts the rows [begin, end) stably by their code of QI q (all within
 * [lo, hi]) into s->order, as row indices: one counting pass when the code
 * range is at most the partition size; a comparison sort of (code, row) keys
 * for small partitions; else an LSD radix sort on 16-bit digits, so large
 * partitions are sorted in linear time where a comparison sort would add a
 * log factor to every threshold scan. */
static int order_by_code(mdr *s, size_t begin, size_t end, uint32_t q, uint32_t lo, uint32_t hi, ak_error *err)
{
    const size_t n = end - begin;
    if (!s->order) {
        s->order = malloc((s->capacity ? s->capacity : 1) * sizeof *s->order);
        s->order_tmp = malloc((s->capacity ? s->capacity : 1) * sizeof *s->order_tmp);
        s->code_count = malloc((s->capacity + 65537) * sizeof *s->code_count);
        if (!s->order || !s->order_tmp || !s->code_count) return ak_err_nomem(err);
    }
    uint32_t *count = s->code_count;
    const uint64_t range = (uint64_t)hi - lo + 1;
    if (range <= n) {
        memset(count, 0, (range + 1) * sizeof *count);
        for (size_t i = begin; i < end; i++) count[row_at(s, i)[q] - lo + 1]++;
        for (uint64_t v = 1; v <= range; v++) count[v] += count[v - 1];
        for (size_t i = begin; i < end; i++) s->order[count[row_at(s, i)[q] - lo]++] = (uint32_t)i;
        return ANONKIT_OK;
    }
    if (n <= MDR_SMALL_SORT) { /* (code, row) keys: cheaper than clearing 64K radix counters */
        uint64_t *keys = (uint64_t *)(void *)s->code_count;
        for (size_t i = begin; i < end; i++) keys[i - begin] = (uint64_t)row_at(s, i)[q] << 32 | (uint32_t)i;
        qsort(keys, n, sizeof *keys, ak_cmp_u64);
        for (size_t i = 0; i < n; i++) s->order[i] = (uint32_t)keys[i];
        return ANONKIT_OK;
    }
    const int passes = range > 65536 ? 2 : 1;
    uint32_t *first = passes == 2 ? s->order_tmp : s->order;
    memset(count, 0, 65537 * sizeof *count);
    for (size_t i = begin; i < end; i++) count[((row_at(s, i)[q] - lo) & 0xffff) + 1]++;
    for (size_t v = 1; v <= 65536; v++) count[v] += count[v - 1];
    for (size_t i = begin; i < end; i++) first[count[(row_at(s, i)[q] - lo) & 0xffff]++] = (uint32_t)i;
    if (passes == 1) return ANONKIT_OK;
    memset(count, 0, 65537 * sizeof *count);
    for (size_t i = 0; i < n; i++) count[((row_at(s, first[i])[q] - lo) >> 16) + 1]++;
    for (size_t v = 1; v <= 65536; v++) count[v] += count[v - 1];
    for (size_t i = 0; i < n; i++) s->order[count[(row_at(s, first[i])[q] - lo) >> 16]++] = first[i];
    return ANONKIT_OK;
}

/* Every threshold of QI q in the partition, when a sensitive model rejected
 * both sides of the median: returns 1 with the cut (lhs = code < cut) of the
 * allowable split whose left side is closest to half, or 0 if none is. */
static int sweep_thresholds(mdr *s, size_t begin, size_t end, uint32_t q, const uint32_t *lo, const uint32_t *hi,
                            uint32_t *cut, ak_error *err)
{
    const size_t n = end - begin;
    AK_CHECK(order_by_code(s, begin, end, q, lo[q], hi[q], err));
    side_clear(&s->left, &s->left_mom);
    size_t best = 0, best_distance = SIZE_MAX;
    for (size_t i = 0; i + 1 < n; i++) {
        const uint32_t *r = row_at(s, s->order[i]);
        side_add(s, &s->left, &s->left_mom, r);
        const uint32_t next = row_at(s, s->order[i + 1])[q];
        if (r[q] == next) continue;
        const size_t left = i + 1;
        const size_t distance = 2 * left > n ? 2 * left - n : n - 2 * left;
        if (distance < best_distance && split_allowable(s, n, left, &s->left, &s->left_mom)) {
            best = left;
            best_distance = distance;
            *cut = next;
        }
    }
    return best ? 1 : 0;
}

/* The lower median of QI q over rows [begin, end) whose codes lie in
 * [lo, hi], with the number of rows below and at it, by one round of radix
 * selection: the codes are counted in buckets of 2^shift consecutive codes,
 * with shift the least that makes at most n buckets, and the bucket holding
 * the median is found from the counts. A narrow code range has one code per
 * bucket, and that is the answer; otherwise the codes of that bucket (few,
 * unless the data crowd into it) are gathered and quickselect finds the
 * median among them. Both passes read the rows once and do not branch on
 * the data, which a quickselect over all n codes would. */
static uint32_t median_of(mdr *s, size_t begin, size_t end, uint32_t q, uint32_t lo, uint32_t hi, size_t *less,
                          size_t *equal)
{
    const size_t n = end - begin, nth = (n - 1) / 2;
    const uint64_t span = (uint64_t)(hi - lo); /* the range has span + 1 codes */
    unsigned shift = 0;
    while ((span >> shift) >= n) shift++;
    const size_t nbuckets = (size_t)(span >> shift) + 1; /* <= n <= capacity */
    uint32_t *count = s->scratch;
    memset(count, 0, nbuckets * sizeof *count);
    const uint32_t w = s->w;
    const uint32_t *col = s->rows + begin * w + q;
    for (size_t i = 0; i < n; i++) count[(uint64_t)(col[i * w] - lo) >> shift]++;
    size_t below = 0, b = 0;
    while (below + count[b] <= nth) below += count[b++];
    if (shift == 0) {
        *less = below;
        *equal = count[b];
        return lo + (uint32_t)b;
    }
    /* Gather the codes of bucket b (over the counts, no longer needed; the
     * store is unconditional, so the buffer has room for one more). */
    uint32_t *in_bucket = s->scratch;
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        const uint32_t v = col[i * w];
        in_bucket[m] = v;
        m += ((uint64_t)(v - lo) >> shift) == b;
    }
    size_t less_in, equal_in;
    const uint32_t median = select_nth(in_bucket, m, nth - below, &less_in, &equal_in);
    *less = below + less_in;
    *equal = equal_in;
    return median;
}

/* Splits [begin, end) at lhs = {code(q) < cut} and pushes both halves, each
 * with its part of the region [rlo, rhi]. */
static int apply_numeric(mdr *s, size_t begin, size_t end, uint32_t q, uint32_t cut, const uint32_t *rlo,
                         const uint32_t *rhi, int median_only, ak_error *err)
{
    uint32_t left_box[2 * s->bw], right_box[2 * s->bw];
    const size_t mid = partition_rows(s, begin, end, q, cut, left_box, right_box);
    uint32_t part[s->d];
    s->grow_q = q;
    memcpy(part, rlo, sizeof part);
    part[q] = cut;
    AK_CHECK(push(s, mid, end, right_box, part, rhi, median_only, err));
    memcpy(part, rhi, sizeof part);
    part[q] = cut - 1;
    return push(s, begin, mid, left_box, rlo, part, median_only, err);
}

/* Tries the median split of numeric QI q; pushes the two halves and returns 1
 * when it is allowable, 0 when not. */
static int split_numeric(mdr *s, size_t begin, size_t end, uint32_t q, const uint32_t *lo, const uint32_t *hi,
                         const uint32_t *rlo, const uint32_t *rhi, int median_only, ak_error *err)
{
    const size_t n = end - begin;
    size_t less, equal;
    const uint32_t median = median_of(s, begin, end, q, lo[q], hi[q], &less, &equal);
    if (s->need_sensitive) {
        side_clear(&s->left, &s->left_mom);
        side_clear(&s->less, &s->less_mom);
        for (size_t i = begin; i < end; i++) {
            const uint32_t *r = row_at(s, i);
            if (r[q] < median) {
                side_add(s, &s->less, &s->less_mom, r);
                side_add(s, &s->left, &s->left_mom, r);
            } else if (r[q] == median) {
                side_add(s, &s->left, &s->left_mom, r);
            }
        }
    }
    uint32_t cut = 0;
    if (split_allowable(s, n, less + equal, &s->left, &s->left_mom)) {
        cut = median + 1; /* lhs: code <= median */
    } else if (split_allowable(s, n, less, &s->less, &s->less_mom)) {
        cut = median;     /* lhs: code < median */
    } else if (s->need_sensitive) {
        int found = sweep_thresholds(s, begin, end, q, lo, hi, &cut, err);
        if (found <= 0) return found;
    } else {
        return 0; /* under k-anonymity alone no other threshold can be allowable */
    }
    AK_CHECK(apply_numeric(s, begin, end, q, cut, rlo, rhi, median_only, err));
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

/* Groups the rows of [begin, end) by the child of node u their code of QI q
 * lies under (a stable counting sort), with the row count of each child in
 * s->child_rows. Returns 1, or 0 without moving anything when a non-empty
 * child has fewer than k rows (no such split is allowable). */
static int group_by_child(mdr *s, size_t begin, size_t end, uint32_t q, const hier_node *u, ak_error *err)
{
    const hier *h = s->t->qi[q].h;
    const uint32_t nc = u->nchildren;
    uint32_t *rows_in = s->child_rows;
    memset(rows_in, 0, nc * sizeof *rows_in);
    for (size_t i = begin; i < end; i++) rows_in[child_of(h, u, row_at(s, i)[q])]++;
    s->grow_children = 0;
    for (uint32_t c = 0; c < nc; c++) {
        if (rows_in[c] && rows_in[c] < s->m->k && !s->grow) return 0; /* (a sample's children go to the tests) */
        s->grow_children += rows_in[c] != 0;
    }
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
    free(start);
    return 1;
}

/* Pushes the non-empty children of node u (rows grouped by group_by_child,
 * the partition ending at row `end`).
 * Their regions cover the parent's region [rlo, rhi] in QI q: each child's
 * leaves, with the leaves of empty children and of the region outside u
 * given to the nearest non-empty child before them (or the first). */
static int push_children(mdr *s, size_t end, uint32_t q, const hier_node *u, const uint32_t *rlo,
                         const uint32_t *rhi, int median_only, ak_error *err)
{
    const hier *h = s->t->qi[q].h;
    const uint32_t *children = hier_children(h) + u->first_child;
    uint32_t first = 0;
    while (!s->child_rows[first]) first++;
    s->grow_q = q;
    uint32_t part_lo[s->d], part_hi[s->d];
    memcpy(part_lo, rlo, sizeof part_lo);
    memcpy(part_hi, rhi, sizeof part_hi);
    /* Push in reverse so that the first child is processed first. */
    size_t stop = end;
    uint32_t region_end = rhi[q];
    for (uint32_t c = u->nchildren; c-- > 0;) {
        if (!s->child_rows[c]) continue;
        part_lo[q] = c == first ? rlo[q] : hier_node_at(h, children[c])->lo;
        part_hi[q] = region_end;
        AK_CHECK(push(s, stop - s->child_rows[c], stop, NULL, part_lo, part_hi, median_only, err));
        stop -= s->child_rows[c];
        region_end = part_lo[q] - 1;
    }
    return ANONKIT_OK;
}

/* Whether every non-empty child of node u (rows grouped by group_by_child
 * from row `begin`) satisfies the model; group_by_child has checked k, except
 * in the growth phase, where every child goes through the tests. */
static int children_hold(mdr *s, size_t begin, const hier_node *u)
{
    if (!s->need_sensitive && !s->grow) return 1;
    size_t at = begin;
    for (uint32_t c = 0; c < u->nchildren; c++) {
        if (s->child_rows[c] && !rows_hold(s, at, at + s->child_rows[c])) return 0;
        at += s->child_rows[c];
    }
    return 1;
}

/* Tries to specialize categorical QI q's lowest common ancestor into its
 * children; pushes the non-empty children and returns 1 when allowable. */
static int split_categorical(mdr *s, size_t begin, size_t end, uint32_t q, const uint32_t *lo, const uint32_t *hi,
                             const uint32_t *rlo, const uint32_t *rhi, int median_only, ak_error *err)
{
    const hier *h = s->t->qi[q].h;
    const hier_node *u = hier_node_at(h, hier_lca(h, lo[q], hi[q]));
    int grouped = group_by_child(s, begin, end, q, u, err);
    if (grouped <= 0) return grouped;
    if (!children_hold(s, begin, u)) return 0;
    AK_CHECK(push_children(s, end, q, u, rlo, rhi, median_only, err));
    return 1;
}

/* The Median criterion: tries the dimensions by decreasing normalized range
 * and takes the first allowable split. Returns 1 when split, 0 when none is
 * allowable. */
static int split_median(mdr *s, size_t begin, size_t end, const uint32_t *lo, const uint32_t *hi,
                        const uint32_t *rlo, const uint32_t *rhi, int median_only, ak_error *err)
{
    uint32_t order[s->d ? s->d : 1];
    const uint32_t ncand = table_widest_first(s->t, lo, hi, order);
    if (ncand && s->need_sensitive) fill_whole(s, begin, end);
    for (uint32_t i = 0; i < ncand; i++) {
        uint32_t q = order[i];
        int split = s->t->qi[q].kind == ATTR_NUMERIC
                        ? split_numeric(s, begin, end, q, lo, hi, rlo, rhi, median_only, err)
                        : split_categorical(s, begin, end, q, lo, hi, rlo, rhi, median_only, err);
        if (split != 0) return split;
    }
    return 0;
}

/* ---- InfoGain and Regression (000 §1.2) ---- */

/* What a partition's children are scored against. */
typedef struct parent_stats {
    double weighted_entropy;   /* InfoGain: n H(C) in bits = n log n - sum P_c log P_c */
    double xlogx;              /* InfoGain: sum P_c log P_c */
    long double t1, t2, sse;   /* Regression: sums of the target, its squares; squared error */
    double tolerance;          /* a score must beat the best by this much to replace it */
} parent_stats;

static void parent_stats_fill(mdr *s, size_t begin, size_t end, parent_stats *ps)
{
    const size_t n = end - begin;
    memset(ps, 0, sizeof *ps);
    if (s->split == MDR_SPLIT_INFOGAIN) {
        ak_hist_clear(&s->cls_whole);
        for (size_t i = begin; i < end; i++) ak_hist_add(&s->cls_whole, s->t->class_codes[row_at(s, i)[s->idw]]);
        ps->xlogx = ak_hist_xlogx(&s->cls_whole);
        ps->weighted_entropy = ak_xlog2x((double)n) - ps->xlogx;
        ps->tolerance = 1e-12;
    } else {
        for (size_t i = begin; i < end; i++) {
            const long double y = s->t->target_values[row_at(s, i)[s->idw]];
            ps->t1 += y;
            ps->t2 += y * y;
        }
        ps->sse = ps->t2 - ps->t1 * ps->t1 / (long double)n;
        ps->tolerance = 1e-12 * (ps->sse > 1 ? (double)ps->sse : 1.0);
    }
}

static inline int beats(const best_split *best, const parent_stats *ps, double score)
{
    return !best->found || score > best->score + ps->tolerance;
}

/* Scores every threshold of numeric QI q in [begin, end) — the rows sorted
 * on q, each cut point between two distinct codes evaluated with running
 * class counts (InfoGain) or target sums (Regression) — and records the best
 * allowable one in *best. */
static int score_numeric(mdr *s, size_t begin, size_t end, uint32_t q, const uint32_t *lo, const uint32_t *hi,
                         const parent_stats *ps, best_split *best, ak_error *err)
{
    const size_t n = end - begin;
    const uint64_t k = s->m->k;
    const int infogain = s->split == MDR_SPLIT_INFOGAIN;
    AK_CHECK(order_by_code(s, begin, end, q, lo[q], hi[q], err));
    side_clear(&s->left, &s->left_mom);
    ak_hist_clear(&s->cls_left);
    double left_xlogx = 0, right_xlogx = ps->xlogx; /* sum L_c log L_c, sum R_c log R_c */
    long double t1 = 0, t2 = 0;
    size_t i = 0;
    while (i < n) {
        const uint32_t code = row_at(s, s->order[i])[q];
        do {
            const uint32_t *r = row_at(s, s->order[i]);
            if (s->need_sensitive) side_add(s, &s->left, &s->left_mom, r);
            if (infogain) {
                ak_hist_add(&s->cls_group, s->t->class_codes[r[s->idw]]);
            } else {
                const long double y = s->t->target_values[r[s->idw]];
                t1 += y;
                t2 += y * y;
            }
            i++;
        } while (i < n && row_at(s, s->order[i])[q] == code);
        if (infogain) { /* move this code's rows from right to left, class by class */
            ak_hist_sort_touched(&s->cls_group);
            for (size_t x = 0; x < s->cls_group.ntouched; x++) {
                const uint32_t c = s->cls_group.touched[x];
                const double moved = s->cls_group.count[c], had = s->cls_left.count[c];
                const double all = s->cls_whole.count[c];
                left_xlogx += ak_xlog2x(had + moved) - ak_xlog2x(had);
                right_xlogx += ak_xlog2x(all - had - moved) - ak_xlog2x(all - had);
                if (!s->cls_left.count[c]) s->cls_left.touched[s->cls_left.ntouched++] = c;
                s->cls_left.count[c] += s->cls_group.count[c];
            }
            ak_hist_clear(&s->cls_group);
        }
        if (i == n) break;
        const size_t nl = i, nr = n - i;
        if ((nl < k || nr < k) && !s->grow) continue;
        double score;
        if (infogain) {
            const double children = ak_xlog2x((double)nl) - left_xlogx + ak_xlog2x((double)nr) - right_xlogx;
            score = (ps->weighted_entropy - children) / (double)n;
        } else {
            const long double r1 = ps->t1 - t1, r2 = ps->t2 - t2;
            const long double sse = (t2 - t1 * t1 / (long double)nl) + (r2 - r1 * r1 / (long double)nr);
            score = (double)(ps->sse - sse);
        }
        if (beats(best, ps, score) && split_allowable(s, n, nl, &s->left, &s->left_mom)) {
            best->found = 1;
            best->q = q;
            best->cut = row_at(s, s->order[i])[q];
            best->score = score;
        }
    }
    ak_hist_clear(&s->cls_left);
    return ANONKIT_OK;
}

/* Scores the split of categorical QI q into the children of its lowest
 * common ancestor (rows are regrouped by child on the way) and records it in
 * *best when it is allowable and better. */
static int score_categorical(mdr *s, size_t begin, size_t end, uint32_t q, const uint32_t *lo, const uint32_t *hi,
                             const parent_stats *ps, best_split *best, ak_error *err)
{
    const hier *h = s->t->qi[q].h;
    const hier_node *u = hier_node_at(h, hier_lca(h, lo[q], hi[q]));
    const int grouped = group_by_child(s, begin, end, q, u, err);
    if (grouped <= 0) return grouped;
    const int infogain = s->split == MDR_SPLIT_INFOGAIN;
    double children = 0;
    long double sse = 0;
    size_t at = begin;
    for (uint32_t c = 0; c < u->nchildren; c++) {
        const size_t rows = s->child_rows[c];
        if (!rows) continue;
        if (infogain) {
            ak_hist_clear(&s->cls_group);
            for (size_t i = at; i < at + rows; i++) ak_hist_add(&s->cls_group, s->t->class_codes[row_at(s, i)[s->idw]]);
            children += ak_xlog2x((double)rows) - ak_hist_xlogx(&s->cls_group);
            ak_hist_clear(&s->cls_group);
        } else {
            long double t1 = 0, t2 = 0;
            for (size_t i = at; i < at + rows; i++) {
                const long double y = s->t->target_values[row_at(s, i)[s->idw]];
                t1 += y;
                t2 += y * y;
            }
            sse += t2 - t1 * t1 / (long double)rows;
        }
        at += rows;
    }
    const double score = infogain ? (ps->weighted_entropy - children) / (double)(end - begin) : (double)(ps->sse - sse);
    if (!beats(best, ps, score)) return ANONKIT_OK;
    if (!children_hold(s, begin, u)) return ANONKIT_OK;
    best->found = 1;
    best->q = q;
    best->cut = 0;
    best->score = score;
    return ANONKIT_OK;
}

/* The InfoGain / Regression criterion: scores every allowable split of every
 * attribute and takes the best; under InfoGain, when the best gain is below
 * min_gain, the partition and its subtree go on under Median. Returns 1 when
 * split, 0 when no split is allowable. */
static int split_best(mdr *s, size_t begin, size_t end, const uint32_t *lo, const uint32_t *hi, const uint32_t *rlo,
                      const uint32_t *rhi, ak_error *err)
{
    if (s->need_sensitive) fill_whole(s, begin, end);
    parent_stats ps;
    parent_stats_fill(s, begin, end, &ps);
    best_split best = {0, 0, 0, 0};
    for (uint32_t q = 0; q < s->d; q++) {
        if (lo[q] == hi[q]) continue;
        if (s->t->qi[q].kind == ATTR_NUMERIC) AK_CHECK(score_numeric(s, begin, end, q, lo, hi, &ps, &best, err));
        else AK_CHECK(score_categorical(s, begin, end, q, lo, hi, &ps, &best, err));
    }
    if (!best.found) return 0;
    if (s->split == MDR_SPLIT_INFOGAIN && best.score < s->min_gain)
        return split_median(s, begin, end, lo, hi, rlo, rhi, 1, err);
    const uint32_t q = best.q;
    if (s->t->qi[q].kind == ATTR_NUMERIC) {
        AK_CHECK(apply_numeric(s, begin, end, q, best.cut, rlo, rhi, 0, err));
        return 1;
    }
    const hier *h = s->t->qi[q].h;
    const hier_node *u = hier_node_at(h, hier_lca(h, lo[q], hi[q]));
    const int grouped = group_by_child(s, begin, end, q, u, err);
    if (grouped <= 0) return grouped < 0 ? grouped : ak_err_set(err, ANONKIT_E_INTERNAL, NULL, 0, 0, "a chosen split vanished");
    AK_CHECK(push_children(s, end, q, u, rlo, rhi, 0, err));
    return 1;
}

/* Growth phase: whether the limits let node f be split at all. */
static int grow_may_split(const mdr *s, const mdr_frame *f)
{
    const mdr_grow *g = s->grow;
    const mdr_tree_node *x = &g->tree->nodes[f->node];
    if (g->stop_rows && x->rows <= g->stop_rows) return 0;
    if (g->max_depth && x->depth >= g->max_depth) return 0;
    return 1;
}

/* Makes room in class_begin for ids below `classes`. */
static int reserve_class_rows(mdr *s, size_t classes, ak_error *err)
{
    if (classes <= s->class_begin_cap) return ANONKIT_OK;
    size_t *grown = ak_huge_realloc(s->class_begin, classes * sizeof *grown);
    if (!grown) return ak_err_nomem(err);
    s->class_begin = grown;
    s->class_begin_cap = classes;
    return ANONKIT_OK;
}

/* Records that the class with id (in s->out) starts at work row begin. */
static int note_class_rows(mdr *s, uint32_t id, size_t begin, ak_error *err)
{
    if (id >= s->class_begin_cap) {
        size_t cap = s->class_begin_cap ? 2 * s->class_begin_cap : 1024;
        while (cap <= id) cap *= 2;
        size_t *grown = ak_huge_realloc(s->class_begin, cap * sizeof *grown);
        if (!grown) return ak_err_nomem(err);
        s->class_begin = grown;
        s->class_begin_cap = cap;
    }
    s->class_begin[id] = begin;
    return ANONKIT_OK;
}

/* Splits partition f (its box and region in `frame`), or makes it a class.
 * In the growth phase a split that would leave more than max_leaves leaves
 * is taken back: its children are the last frames pushed. */
static int process_frame(mdr *s, const mdr_frame *f, const uint32_t *frame, ak_error *err)
{
    const uint32_t *lo = frame, *hi = frame + s->bw, *rlo = frame + 2 * s->bw, *rhi = rlo + s->d;
    int split = 0;
    if (!s->grow || grow_may_split(s, f)) {
        const size_t depth_before = s->depth, nodes_before = s->grow ? s->grow->tree->count : 0;
        s->grow_parent = f->node;
        split = s->split == MDR_SPLIT_MEDIAN || f->median_only
                    ? split_median(s, f->begin, f->end, lo, hi, rlo, rhi, f->median_only, err)
                    : split_best(s, f->begin, f->end, lo, hi, rlo, rhi, err);
        if (split < 0) return split;
        if (split && s->grow) {
            const size_t leaves = s->grow_leaves + (s->depth - s->grow_head);
            if (s->grow->max_leaves && leaves > s->grow->max_leaves) {
                s->depth = depth_before;
                s->grow->tree->count = nodes_before;
                split = 0;
            } else {
                s->grow->tree->nodes[f->node].split_q = s->grow_q;
            }
        }
    }
    if (split) return ANONKIT_OK;
    s->grow_leaves++;
    uint32_t id;
    AK_CHECK(partition_add_class_in(s->out, lo, hi, rlo, rhi, f->end - f->begin, &id, err));
    /* Its rows, work rows [begin, end), are not moved again: their class ids
     * are written at the end (mdr_run_with), when every class's id is final. */
    AK_CHECK(note_class_rows(s, id, f->begin, err));
    return ANONKIT_OK;
}

/* Splits the partition on top of the stack, or makes it a class. */
static int process_top(mdr *s, ak_error *err)
{
    s->depth--;
    const mdr_frame f = s->stack[s->depth];
    uint32_t frame[s->fw];
    memcpy(frame, s->boxes + s->depth * s->fw, sizeof frame);
    return process_frame(s, &f, frame, err);
}

/* The growth phase: frames are taken first in, first out, so the tree grows
 * breadth-first and a leaf limit cuts it evenly. */
static int run_grow(mdr *s, ak_error *err)
{
    uint32_t frame[s->fw];
    while (s->grow_head < s->depth) {
        const mdr_frame f = s->stack[s->grow_head];
        memcpy(frame, s->boxes + s->grow_head * s->fw, sizeof frame);
        s->grow_head++;
        AK_CHECK(process_frame(s, &f, frame, err));
    }
    return ANONKIT_OK;
}

/* Forgets the buffers of one worker (a helper starts from a copy of its
 * parent, sharing the table, rows and class_of but nothing else). */
static void worker_forget(mdr *s)
{
    s->scratch = s->moved = s->order = s->order_tmp = s->code_count = NULL;
    s->small_side = s->small_rows = NULL;
    s->class_begin = NULL;
    s->class_begin_cap = 0;
    s->counts = s->counts_scratch = s->child_rows = NULL;
    s->stack = NULL;
    s->boxes = NULL;
    s->depth = s->cap = 0;
    memset(&s->whole, 0, sizeof s->whole);
    memset(&s->left, 0, sizeof s->left);
    memset(&s->less, 0, sizeof s->less);
    memset(&s->cls_whole, 0, sizeof s->cls_whole);
    memset(&s->cls_left, 0, sizeof s->cls_left);
    memset(&s->cls_group, 0, sizeof s->cls_group);
}

/* Frees the buffers of one worker (not the shared rows). */
static void worker_free(mdr *s)
{
    free(s->scratch);
    free(s->moved);
    free(s->small_side);
    free(s->small_rows);
    free(s->class_begin);
    free(s->order);
    free(s->order_tmp);
    free(s->code_count);
    ak_hist_free(&s->whole);
    ak_hist_free(&s->left);
    ak_hist_free(&s->less);
    ak_hist_free(&s->cls_whole);
    ak_hist_free(&s->cls_left);
    ak_hist_free(&s->cls_group);
    free(s->counts);
    free(s->counts_scratch);
    free(s->child_rows);
    free(s->stack);
    free(s->boxes);
    worker_forget(s);
}

/* Allocates the buffers of a worker for partitions of up to `capacity` rows. */
static int worker_alloc(mdr *s, size_t capacity, ak_error *err)
{
    s->capacity = capacity;
    s->scratch = malloc((capacity + 1) * sizeof *s->scratch); /* + 1: median_of's gathering */
    if (s->simd) { /* small partitions' out-of-place split (optional: without it the in-place one serves) */
        s->small_side = malloc(2 * MDR_SMALL_PARTITION * sizeof *s->small_side);
        s->small_rows = malloc(((size_t)MDR_SMALL_PARTITION * s->w + 8) * sizeof *s->small_rows);
        if (!s->small_side || !s->small_rows) {
            free(s->small_side);
            free(s->small_rows);
            s->small_side = s->small_rows = NULL;
        }
    }
    s->counts = malloc((s->sensitive_domain + 1) * sizeof *s->counts);
    s->counts_scratch = malloc((s->sensitive_domain + 1) * sizeof *s->counts_scratch);
    s->child_rows = malloc((s->max_children + 1) * sizeof *s->child_rows);
    if (!s->scratch || !s->counts || !s->counts_scratch || !s->child_rows ||
        ak_hist_init(&s->whole, s->sensitive_domain) || ak_hist_init(&s->left, s->sensitive_domain) ||
        ak_hist_init(&s->less, s->sensitive_domain) || ak_hist_init(&s->cls_whole, s->class_domain) ||
        ak_hist_init(&s->cls_left, s->class_domain) || ak_hist_init(&s->cls_group, s->class_domain))
        return ak_err_nomem(err);
    return ANONKIT_OK;
}

/* Partitions smaller than this are not worth a thread. */
#define MDR_PARALLEL_MIN_ROWS 50000

typedef struct helper {
    mdr s;
    partition classes;
    unsigned threads;  /* threads it took from its parent, itself included */
    ak_error err;
    int rc;
    pthread_t thread;
    int started;       /* its thread runs or has not been joined yet */
    atomic_int done;   /* its thread has finished */
    atomic_uint lent;  /* threads lent to it by its parent (mdr.lent) */
} helper;

static int run_worker(mdr *s, ak_error *err);

static void *helper_main(void *arg)
{
    helper *h = arg;
    h->rc = run_worker(&h->s, &h->err);
    atomic_store(&h->done, 1);
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
    atomic_init(&h->done, 0);
    atomic_init(&h->lent, 0);
    h->s = *s; /* shares table, model, rows and class_of */
    mdr *c = &h->s;
    worker_forget(c);
    c->threads = s->threads / 2;
    c->lent = &h->lent;
    h->threads = c->threads;
    c->out = &h->classes;
    size_t largest = 0;
    for (size_t f = 0; f < give; f++)
        if (s->stack[f].end - s->stack[f].begin > largest) largest = s->stack[f].end - s->stack[f].begin;
    int rc = partition_init(&h->classes, 0, s->d, err);
    const size_t expected = rows / (s->m->k > 1 ? s->m->k : 1) + 1; /* classes it can make at most (rows: given) */
    if (rc == ANONKIT_OK) rc = partition_reserve(&h->classes, expected, err);
    if (rc == ANONKIT_OK) rc = reserve_class_rows(c, expected, err);
    if (rc == ANONKIT_OK) rc = worker_alloc(c, largest, err);
    for (size_t f = 0; rc == ANONKIT_OK && f < give; f++) {
        const uint32_t *frame = s->boxes + f * s->fw;
        rc = push(c, s->stack[f].begin, s->stack[f].end, frame, frame + 2 * s->bw, frame + 2 * s->bw + s->d,
                  s->stack[f].median_only, err);
    }
    if (rc == ANONKIT_OK && ak_thread_create(&h->thread, helper_main, h) != 0)
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
    memmove(s->boxes, s->boxes + give * s->fw, (s->depth - give) * s->fw * sizeof *s->boxes);
    s->depth -= give;
    s->threads -= h->threads; /* (not c->threads: the helper's own, which it may change once it runs) */
    *out = h;
    return 1;
}

/* Waits for a helper's thread to end and takes its threads back. */
static void wait_helper(mdr *s, helper *h)
{
    if (!h->started) return;
    pthread_join(h->thread, NULL);
    h->started = 0;
    s->threads += h->threads;
}

/* Appends the classes of a finished helper to this worker's (their ids
 * after the worker's), then frees it. */
static int join_helper(mdr *s, helper *h, int rc, ak_error *err)
{
    wait_helper(s, h);
    if (rc == ANONKIT_OK && h->rc < 0) {
        *err = h->err;
        rc = h->rc;
    }
    const size_t offset = s->out->nclasses;
    if (rc == ANONKIT_OK) rc = partition_append(s->out, &h->classes, err);
    /* the helper's classes' first rows after this worker's */
    if (rc == ANONKIT_OK && h->classes.nclasses) rc = note_class_rows(s, (uint32_t)(s->out->nclasses - 1), 0, err);
    if (rc == ANONKIT_OK && h->classes.nclasses)
        memcpy(s->class_begin + offset, h->s.class_begin, h->classes.nclasses * sizeof *s->class_begin);
    worker_free(&h->s);
    partition_free(&h->classes);
    free(h);
    return rc;
}

/* Processes the worker's stack until it is empty, handing the bottom frames
 * to a helper thread whenever threads are left: after the first split, and
 * again each time a helper finishes while this worker still has enough
 * work; and when this worker runs out of work first, it lends its threads
 * to the running helper (which may then hand part of its own work on) while
 * it waits, so that the threads stay busy. Each helper takes partitions that
 * come after all this worker keeps (depth-first), and before those of the
 * helpers started earlier, so the helpers' classes are appended in reverse
 * order of their start, which keeps the class order of a single-threaded
 * run. */
static int run_worker(mdr *s, ak_error *err)
{
    helper *h = NULL;      /* the running helper */
    helper **done = NULL;  /* finished helpers, in order of their start */
    size_t ndone = 0, cap_done = 0;
    int rc = ANONKIT_OK;
    while (s->depth > 0 && rc == ANONKIT_OK) {
        rc = process_top(s, err);
        if (s->lent && atomic_load(s->lent)) s->threads += atomic_exchange(s->lent, 0); /* the parent waits for us */
        if (rc == ANONKIT_OK && h && atomic_load(&h->done)) {
            if (ndone == cap_done) {
                const size_t cap = cap_done ? 2 * cap_done : 4;
                helper **grown = realloc(done, cap * sizeof *grown);
                if (!grown) {
                    rc = ak_err_nomem(err);
                    break;
                }
                done = grown;
                cap_done = cap;
            }
            wait_helper(s, h);
            done[ndone++] = h;
            h = NULL;
        }
        if (rc == ANONKIT_OK && !h && s->threads > 1) {
            int spawned = spawn_helper(s, &h, err);
            if (spawned < 0) rc = spawned;
        }
    }
    const unsigned lend = h && rc == ANONKIT_OK ? s->threads : 0;
    if (lend) { /* nothing left here: this worker's threads help the helper */
        s->threads -= lend;
        atomic_fetch_add(&h->lent, lend);
    }
    if (h) rc = join_helper(s, h, rc, err);
    s->threads += lend;
    while (ndone > 0) rc = join_helper(s, done[--ndone], rc, err);
    free(done);
    return rc;
}

int mdr_parse_split(const char *text, mdr_split *out)
{
    if (!strcmp(text, "median")) *out = MDR_SPLIT_MEDIAN;
    else if (!strcmp(text, "infogain")) *out = MDR_SPLIT_INFOGAIN;
    else if (!strcmp(text, "regression")) *out = MDR_SPLIT_REGRESSION;
    else return -1;
    return 0;
}

const char *mdr_split_name(mdr_split split)
{
    switch (split) {
    case MDR_SPLIT_INFOGAIN: return "infogain";
    case MDR_SPLIT_REGRESSION: return "regression";
    case MDR_SPLIT_MEDIAN: break;
    }
    return "median";
}

int mdr_run(const table *t, const model *m, unsigned threads, partition *out, ak_error *err)
{
    const mdr_options options = {.threads = threads, .split = MDR_SPLIT_MEDIAN};
    return mdr_run_with(t, m, &options, out, err);
}

int mdr_check_inputs(const table *t, const model *m, const mdr_options *options, ak_error *err)
{
    if (m->l > 0 && t->sensitive_column < 0)
        return ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0, "l-diversity needs a sensitive column (--sensitive)");
    if (m->variance > 0 && !t->sensitive_numeric)
        return ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0,
                          "variance diversity needs a numeric sensitive column (--sensitive)");
    if (options->split == MDR_SPLIT_INFOGAIN && t->class_column < 0)
        return ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0, "--split infogain needs a class label column (--class)");
    if (options->split == MDR_SPLIT_REGRESSION && t->target_column < 0)
        return ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0, "--split regression needs a numeric target column (--target)");
    return ANONKIT_OK;
}

/* Writes the class id of the rows of classes [first, last) of s->out. */
typedef struct class_job {
    const mdr *s;
    size_t first, last;
} class_job;

static void *write_classes(void *arg)
{
    const class_job *job = arg;
    const mdr *s = job->s;
    for (size_t c = job->first; c < job->last; c++) {
        const size_t begin = s->class_begin[c], end = begin + s->out->count[c];
        for (size_t i = begin; i < end; i++) s->class_of[row_at(s, i)[s->idw]] = (uint32_t)c;
    }
    return NULL;
}

/* class_of of every row of the classes s made, from their first rows
 * (class_begin) and counts: each class's rows are consecutive in the work
 * array. The ids are written at random, so two threads share the classes
 * when there are threads and rows enough. */
static void write_all_classes(const mdr *s, size_t first_class)
{
    const size_t n = s->out->nclasses;
    const size_t half = s->threads > 1 && s->n >= MDR_PARALLEL_MIN_ROWS ? first_class + (n - first_class) / 2 : n;
    class_job jobs[2] = {{s, first_class, half}, {s, half, n}};
    pthread_t helper;
    const int helped = half < n && ak_thread_create(&helper, write_classes, &jobs[1]) == 0;
    write_classes(&jobs[0]);
    if (helped) pthread_join(helper, NULL);
    else write_classes(&jobs[1]);
}

/* Rows [first, last) of the work array from the table's columns. */
typedef struct fill_job {
    mdr *s;
    size_t first, last;
    uint32_t *box; /* 2 bw codes: the box of these rows (padding lanes as box_reset leaves them) */
} fill_job;

static void *fill_rows(void *arg)
{
    fill_job *job = arg;
    mdr *s = job->s;
    const table *t = s->t;
    const uint32_t d = s->d, bw = s->bw;
    box_reset(job->box, bw);
    /* the box a column at a time, in registers (box_add per row kept it in memory) */
    const uint32_t *column[d];
    for (uint32_t q = 0; q < d; q++) {
        column[q] = t->qi[q].codes;
        ak_min_max(column[q] + job->first, job->last - job->first, &job->box[q], &job->box[bw + q]);
    }
    for (size_t i = job->first; i < job->last; i++) {
        uint32_t *r = row_at(s, i);
        for (uint32_t q = 0; q < d; q++) r[q] = column[q][i];
        if (s->need_hist) r[d] = t->sensitive_codes[i];
        r[s->idw] = (uint32_t)i;
    }
    return NULL;
}

/* Fills the whole work array and gives the box of all rows, the two halves
 * on two threads when there are threads to spare and rows enough (the
 * copies and the first touch of the array's pages are then shared). */
static void fill_all_rows(mdr *s, uint32_t *box)
{
    const uint32_t bw = s->bw;
    uint32_t other[2 * bw];
    const size_t half = s->threads > 1 && s->n >= MDR_PARALLEL_MIN_ROWS ? s->n / 2 : s->n;
    fill_job jobs[2] = {{s, 0, half, box}, {s, half, s->n, other}};
    pthread_t helper;
    const int helped = half < s->n && ak_thread_create(&helper, fill_rows, &jobs[1]) == 0;
    fill_rows(&jobs[0]);
    if (helped) pthread_join(helper, NULL);
    else fill_rows(&jobs[1]);
    for (uint32_t q = 0; q < bw; q++) {
        if (other[q] < box[q]) box[q] = other[q];
        if (other[bw + q] > box[bw + q]) box[bw + q] = other[bw + q];
    }
}

int mdr_run_with(const table *t, const model *m, const mdr_options *options, partition *out, ak_error *err)
{
    AK_CHECK(mdr_check_inputs(t, m, options, err));
    mdr s;
    memset(&s, 0, sizeof s);
    s.t = t;
    s.m = m;
    s.out = out;
    s.class_of = out->class_of;
    s.threads = options->threads ? options->threads : 1;
    s.grow = options->grow;
    if (s.grow) s.threads = 1;
    s.split = options->split;
    s.min_gain = options->min_gain;
    s.d = t->nqi;
    s.idw = m->l > 0 ? s.d + 1 : s.d; /* the sensitive code only where histograms need it (need_hist) */
    s.w = s.idw + 1;
    s.bw = (s.d + 7) / 8 * 8;
    s.fw = 2 * s.bw + 2 * s.d;
#if MDR_HAVE_AVX2
    s.simd = !options->no_simd && s.bw / 8 <= MDR_MAX_CHUNKS && __builtin_cpu_supports("avx2");
#endif
    s.n = t->nrows;
    s.need_hist = m->l > 0;
    s.need_mom = m->variance > 0;
    s.need_sensitive = s.need_hist || s.need_mom;
    s.sensitive_domain = s.need_hist ? t->sensitive_dict.count : 1;
    s.class_domain = s.split == MDR_SPLIT_INFOGAIN ? t->class_dict.count : 1;
    s.exact = 1;
    for (size_t i = 0; s.need_mom && s.exact && i < t->nrows; i++)
        s.exact = model_value_is_small_integer(t->sensitive_values[i]);
    for (uint32_t q = 0; q < s.d; q++) {
        const table_qi *a = &t->qi[q];
        if (a->kind == ATTR_CATEGORICAL)
            for (uint32_t node = 0; node < hier_node_count(a->h); node++)
                if (hier_node_at(a->h, node)->nchildren > s.max_children)
                    s.max_children = hier_node_at(a->h, node)->nchildren;
    }
    int rc = worker_alloc(&s, s.n, err);
    s.rows = ak_huge_malloc(((s.n ? s.n : 1) * s.w + s.bw) * sizeof *s.rows); /* + padding read by the kernels */
    uint32_t *root_lo = calloc(s.d ? s.d : 1, sizeof *root_lo), *root_hi = calloc(s.d ? s.d : 1, sizeof *root_hi);
    uint32_t *root_box = NULL;
    if (rc == ANONKIT_OK && (!s.rows || !root_lo || !root_hi)) rc = ak_err_nomem(err);
    if (rc < 0) goto done;
    for (uint32_t q = 0; q < s.d; q++) {
        const table_qi *a = &t->qi[q];
        root_hi[q] = a->ncodes ? a->ncodes - 1 : 0; /* the root's region is the whole domain */
    }
    if (options->root_rlo && options->root_rhi) {
        memcpy(root_lo, options->root_rlo, s.d * sizeof *root_lo);
        memcpy(root_hi, options->root_rhi, s.d * sizeof *root_hi);
    }
    memset(s.rows + s.n * s.w, 0, s.bw * sizeof *s.rows);
    if (!(root_box = malloc(2 * s.bw * sizeof *root_box))) {
        rc = ak_err_nomem(err);
        goto done;
    }
    fill_all_rows(&s, root_box);
    /* The whole table must satisfy the model, or no partitioning can. */
    fill_whole(&s, 0, s.n);
    char why[256];
    why[0] = '\0';
    int eligible = model_explain(m, s.n, s.counts, ak_hist_counts(&s.whole, s.counts), s.counts_scratch, why, sizeof why);
    if (eligible && s.need_mom && !model_variance_holds(m, &s.whole_mom, s.exact)) {
        eligible = 0;
        snprintf(why, sizeof why, "variance of the sensitive values %.6Lg < %g",
                 model_moments_variance(&s.whole_mom, s.exact), m->variance);
    }
    if (!eligible && !s.grow) { /* (a sample need not: the tests judge its population) */
        rc = ak_err_set(err, ANONKIT_E_INELIGIBLE, NULL, 0, 0,
                        "the whole table does not satisfy the privacy model (%s), so no anonymization can", why);
        goto done;
    }
    if (s.n == 0) goto done;
    const size_t first_class = out->nclasses;
    /* at most n / k classes, each of at least k rows: room for them at once */
    if ((rc = partition_reserve(out, first_class + s.n / (m->k > 1 ? m->k : 1) + 1, err)) < 0) goto done;
    if ((rc = reserve_class_rows(&s, first_class + s.n / (m->k > 1 ? m->k : 1) + 1, err)) < 0) goto done;
    if ((rc = push(&s, 0, s.n, root_box, root_lo, root_hi, options->root_median_only, err)) < 0) goto done;
    rc = s.grow ? run_grow(&s, err) : run_worker(&s, err);
    if (rc == ANONKIT_OK) write_all_classes(&s, first_class);
done:
    worker_free(&s);
    free(s.rows);
    free(root_lo);
    free(root_hi);
    free(root_box);
    return rc;
}
