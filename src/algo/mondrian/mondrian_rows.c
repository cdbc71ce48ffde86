/* mondrian_rows.c — the in-memory Mondrian's primitives over its work array
 * (row-major QI codes, sensitive code, row id): the box of a partition
 * (AVX2 kernels where available), splitting a partition in place at a
 * threshold with both sides' boxes, sorting a partition by one code, and
 * the median of one code by radix selection. */
#include "algo/mondrian/mondrian_internal.h"

#include <stdlib.h>
#include <string.h>

#include "common/compare.h"

/* The box loops read every row at every level of the tree and dominate the
 * running time; with AVX2 a row's codes are folded in eight at a time. The
 * kernels read bw codes (or whole vectors) from each row start, past its last
 * code into the rows after it: those lanes are ignored. The rows after a
 * partition may belong to a partition another thread is rearranging, so a row
 * whose reading would pass the end of its range is read from a copy instead
 * (row_or_copy). */
#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>

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
#endif

/* The box of rows [begin, end). */
void mdr_compute_box(const mdr *s, size_t begin, size_t end, uint32_t *box)
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


/* Moves rows with code(q) < cut to the front of [begin, end) and returns the
 * split point; computes both sides' boxes (lo then hi codes) on the way, so
 * that each row is read once. */
size_t mdr_partition_rows(mdr *s, size_t begin, size_t end, uint32_t q, uint32_t cut, uint32_t *left_box,
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
int mdr_order_by_code(mdr *s, size_t begin, size_t end, uint32_t q, uint32_t lo, uint32_t hi, ak_error *err)
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

/* The lower median of QI q over rows [begin, end) whose codes lie in
 * [lo, hi], with the number of rows below and at it, by one round of radix
 * selection: the codes are counted in buckets of 2^shift consecutive codes,
 * with shift the least that makes at most n buckets, and the bucket holding
 * the median is found from the counts. A narrow code range has one code per
 * bucket, and that is the answer; otherwise the codes of that bucket (few,
 * unless the data crowd into it) are gathered and quickselect finds the
 * median among them. Both passes read the rows once and do not branch on
 * the data, which a quickselect over all n codes would. */
uint32_t mdr_median_of(mdr *s, size_t begin, size_t end, uint32_t q, uint32_t lo, uint32_t hi, size_t *less,
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
