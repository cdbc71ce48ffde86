/* kanon.c — optimal 1-D k-anonymity by dynamic programming ([Ghinita07] §3, Figure 3;
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
 * (O(d) amortized per row), and every row of the window records the queues
 * it is in. The box of the k-row candidate is read off the queues (the entry
 * nearest the front within the last k rows, a cursor that only moves back);
 * growing it further costs nothing over a run of unmarked rows and O(changed
 * sides) at a marked one, instead of O(d) at every row. The costs of all k
 * candidates of a prefix are then weighed in one pass (four at a time with
 * AVX). The window keeps each row's codes and numeric values, so a numeric
 * NCP reads no table array. The box, its NCP and the candidates' costs are
 * the numbers of growing it row by row (up to the order in which the NCP
 * changes are summed), and ties go to the shortest group, as in a scan.
 *
 * The k-row box is kept from prefix to prefix: only the sides whose cursor
 * entry a new row popped, or whose extreme row just left the k rows, are
 * looked at again.
 *
 * The rows' codes come packed into a few words per row and in 1-D order
 * (hil_pack_*): the sort carries them with the keys, so the DP reads them
 * front to back instead of at random places of every column.
 *
 * Working out the boxes (the window) does not depend on Opt, weighing the
 * candidates does: the prefixes are cut into blocks whose boxes threads
 * describe at once (each block's window led in over the positions before
 * it), and one thread weighs them in order (see "exact DP, in blocks").
 *
 * The Fast variants cost a group by its extent on the 1-D key: every start
 * position of the window keeps its key distance to the current end, each a
 * sum of gaps from left to right (no differences of large sums, so no
 * cancellation), all raised by the new gap as the end moves (a vector add);
 * batches of prefixes are costed on threads as the block boxes' are.
 *
 * The runs above are the exact DP's way for categorical QIs of large
 * hierarchies. When every categorical QI has at most BB_MAX_CODES codes
 * (and their NCP tables fit in BB_MAX_TABLE_ENTRIES), it costs its
 * candidates by block boxes instead (see "exact DP by block boxes"): every
 * candidate's box is the union of a suffix box of a block of k positions
 * and a prefix box from the block's end, each kept up to date in O(d) per
 * position, and the costs are summed QI by QI with AVX2, without a
 * data-dependent branch (the runs' queues mispredict often); a candidate's
 * cost is kept from prefix to prefix while its boundary's prefix box does
 * not grow.
 *
 * Only the last 2k-1 values of Opt, the window's codes and the boxes of the
 * blocks in flight are kept; the chosen group length of every prefix is kept
 * to read the solution back.
 *
 * Files: kanon.c packs the codes, weighs a prefix's candidates and holds the
 * entry points; kanon_runs.c is the exact DP by the window's runs (the
 * window and the blocks); kanon_batches.c the exact DP by block boxes and
 * the Fast variants' DP; kanon_internal.h what they share. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "algo/onedim/kanon_internal.h"
#include "common/cpu.h"
#include "common/parallel.h"

/* ------------------------------------------------------------- packing -- */

int hil_pack_init(hil_packing *pk, const table *t, unsigned first_bits, ak_error *err)
{
    memset(pk, 0, sizeof *pk);
    const uint32_t d = t->nqi;
    pk->d = d;
    pk->first_bits = first_bits < 64 ? first_bits : 0;
    pk->field = malloc((d ? d : 1) * sizeof *pk->field);
    if (!pk->field) return ak_err_nomem(err);
    size_t words = pk->first_bits ? 1 : 0;
    unsigned used = 0, room = pk->first_bits; /* of the current word */
    for (uint32_t q = 0; q < d; q++) {
        unsigned width = 1;
        while (width < 32 && ((uint64_t)1 << width) < t->qi[q].ncodes) width++;
        if (used + width > room) words++, used = 0, room = 64; /* no code across two words */
        pk->field[q].word = (uint32_t)(words - 1);
        pk->field[q].shift = used;
        pk->field[q].mask = ((uint64_t)2 << (width - 1)) - 1;
        used += width;
    }
    pk->words = words ? words : 1;
    return ANONKIT_OK;
}

void hil_pack_free(hil_packing *pk)
{
    free(pk->field);
    memset(pk, 0, sizeof *pk);
}

void hil_pack_rows(const hil_packing *pk, const table *t, size_t row, size_t count, uint64_t *out, size_t stride)
{
    const size_t own = pk->first_bits ? 1 : 0; /* a shared word 0 holds the key already */
    for (size_t j = 0; j < count; j++) memset(out + j * stride + own, 0, (pk->words - own) * sizeof *out);
    for (uint32_t q = 0; q < pk->d; q++) { /* column by column: sequential reads */
        const uint32_t *codes = t->qi[q].codes + row;
        uint64_t *o = out + pk->field[q].word;
        const unsigned shift = pk->field[q].shift;
        for (size_t j = 0; j < count; j++) o[j * stride] |= (uint64_t)codes[j] << shift;
    }
}

/* The codes of positions from .. from+m-1, packed at in[p * stride ..],
 * into out[x * d + q] (read front to back). */
void kanon_unpack_rows(const hil_packing *pk, const uint64_t *in, size_t stride, size_t from, size_t m,
                       uint32_t *out)
{
    const uint32_t d = pk->d;
    const hil_pack_field *f = pk->field;
    for (size_t x = 0; x < m; x++) {
        const uint64_t *src = in + (from + x) * stride;
        for (uint32_t q = 0; q < d; q++) out[x * d + q] = (uint32_t)((src[f[q].word] >> f[q].shift) & f[q].mask);
    }
}

/* ---------------------------------------------------------- candidates -- */

/* The candidates of a prefix: o[j] is Opt of the position where the j-th
 * candidate group begins (it has l_first - j rows), cost[j] the group's
 * cost per row (its box's weighted NCP, or its extent on the key). The
 * least o[j] + l * cost[j], ties to the shortest group, goes to *best and
 * *best_len when below *best: the outcome of a scan from the shortest group
 * that takes a candidate only when strictly below the best so far. Each
 * candidate's cost is the same double whichever way it is computed (a
 * product, then a sum; no fused multiply-add). */
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

#if KANON_HAVE_AVX

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
        const double l0 = l_first - (double)j; /* lane a holds candidate j-4+a: l0 + 4 - a rows */
        __m256d l = _mm256_set_pd(l0 + 1, l0 + 2, l0 + 3, l0 + 4);
        for (; j >= 4; j -= 4) {
            const __m256d c =
                _mm256_add_pd(_mm256_loadu_pd(o + j - 4), _mm256_mul_pd(l, _mm256_loadu_pd(cost + j - 4)));
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
#endif

/* best_avx where `avx` (the processor has AVX and no test asked for the
 * scalar code), else best_scalar. */
void kanon_best_of(const double *o, const double *cost, size_t count, double l_first, double *best,
                   uint32_t *best_len, int avx)
{
#if KANON_HAVE_AVX
    if (avx) {
        best_avx(o, cost, count, l_first, best, best_len);
        return;
    }
#else
    (void)avx;
#endif
    best_scalar(o, cost, count, l_first, best, best_len);
}

/* ------------------------------------------------------------------ DP -- */

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

int hil_kanon_dp_packed(const table *t, const hil_packing *pk, const uint64_t *in, size_t stride, size_t n,
                        uint64_t k, const double *weights, const double *gap, unsigned threads,
                        const hil_tuning *tuning, uint32_t *sizes, size_t *ngroups, double *cost, ak_error *err)
{
    static const hil_tuning untuned; /* (all zero, never written) */
    const hil_tuning *tune = tuning ? tuning : &untuned;
    *ngroups = 0;
    *cost = 0;
    if (k < 1 || n < k || k > UINT32_MAX / 4)
        return ak_err_set(err, ANONKIT_E_INTERNAL, NULL, 0, 0, "1-D k-anonymity with k = %llu on %zu rows",
                          (unsigned long long)k, n);
    const size_t w = (size_t)(2 * k - 1);
    size_t ring = 2;
    while (ring < 2 * k) ring *= 2;
    dp_line ln = {NULL, 0, 2 * w + 64, w, 0, tune};
#if KANON_HAVE_AVX
    ln.avx = !tune->scalar && ak_cpu_has(AK_CPU_AVX);
#endif
    ln.opt = malloc(ln.room * sizeof *ln.opt);
    double *boxmem = gap ? NULL : malloc((w + 3) * sizeof *boxmem); /* per candidate, its box's weighted NCP */
    double *boxcost = boxmem ? boxmem + 3 : NULL;
    uint32_t *len = malloc((n + 1) * sizeof *len);
    int rc = ln.opt && len && (boxmem || gap) ? ANONKIT_OK : ak_err_nomem(err);
    /* Opt(0) = 0 and Opt(j) = infinity for 0 < j < k: no partitioning. */
    if (rc >= 0) {
        ln.opt[0] = 0;
        len[0] = 0;
    }
    if (rc >= 0 && gap) {
        rc = kanon_run_fast(gap, n, (size_t)k, threads, &ln, len, err);
    } else if (rc >= 0 && kanon_bb_usable(t, tune)) {
        rc = kanon_run_block_boxes(t, pk, in, stride, n, (size_t)k, weights, threads, &ln, len, err);
    } else if (rc >= 0) {
        if (threads < 1) threads = 1;
        if (threads > AK_MAX_PARTS) threads = AK_MAX_PARTS;
        dp_shared sh = {.t = t, .pk = pk, .in = in, .stride = stride, .n = n, .ring = ring, .w = w, .k = k,
                        .weights = weights, .ln = &ln, .boxcost = boxcost, .len = len};
        /* Prefixes per block: with several threads, enough that a window's
         * lead-in is at most 1/8 of its block; with one, the window goes on
         * from block to block and small blocks keep the runs in cache. */
        sh.size = 8 * w > 8192 ? 8 * w : 8192;
        if (threads > (n + sh.size - 1) / sh.size) threads = (unsigned)((n + sh.size - 1) / sh.size);
        if (threads == 1) sh.size = 1024;
        if (tune->block_rows) sh.size = tune->block_rows;
        const size_t nblocks = (n + sh.size - 1) / sh.size;
        if (threads > nblocks) threads = (unsigned)nblocks;
        const size_t nbuf = 2 * (size_t)threads;
        dp_block *buf = calloc(nbuf, sizeof *buf);
        for (size_t j = 0; buf && j < nbuf; j++)
            if (!(buf[j].nruns = malloc(sh.size * sizeof *buf[j].nruns))) rc = ak_err_nomem(err);
        if (!buf) rc = ak_err_nomem(err);
        if (rc >= 0) rc = kanon_run_exact(&sh, buf, nbuf, nblocks, threads, err);
        for (size_t j = 0; buf && j < nbuf; j++) free(buf[j].nruns), free(buf[j].from), free(buf[j].sum);
        free(buf);
    }
    if (rc >= 0) {
        *cost = ln.opt[n - ln.base];
        rc = read_back(len, n, sizes, ngroups, err);
    }
    free(ln.opt), free(boxmem), free(len);
    return rc;
}

int hil_kanon_dp(const table *t, const uint32_t *order, size_t n, uint64_t k, const double *weights,
                 const double *gap, unsigned threads, const hil_tuning *tuning, uint32_t *sizes, size_t *ngroups,
                 double *cost, ak_error *err)
{
    if (gap) return hil_kanon_dp_packed(t, NULL, NULL, 0, n, k, weights, gap, 1, tuning, sizes, ngroups, cost, err);
    hil_packing pk;
    AK_CHECK(hil_pack_init(&pk, t, 0, err));
    /* the rows' codes packed in 1-D order, gathered column by column */
    uint64_t *in = calloc((n ? n : 1) * pk.words, sizeof *in);
    if (!in) {
        hil_pack_free(&pk);
        return ak_err_nomem(err);
    }
    for (uint32_t q = 0; q < pk.d; q++) {
        const uint32_t *codes = t->qi[q].codes;
        uint64_t *o = in + pk.field[q].word;
        const unsigned shift = pk.field[q].shift;
        for (size_t i = 0; i < n; i++) o[i * pk.words] |= (uint64_t)codes[order[i]] << shift;
    }
    int rc = hil_kanon_dp_packed(t, &pk, in, pk.words, n, k, weights, NULL, threads, tuning, sizes, ngroups, cost,
                                 err);
    free(in);
    hil_pack_free(&pk);
    return rc;
}

