/* kanon_internal.h — what the files of the 1-D k-anonymity DP ([Ghinita07] §3,
 * Figure 3; §5.1) share, private to src/algo/onedim: kanon.c (packing the
 * rows' codes, weighing a prefix's candidates against Opt, the entry
 * points), kanon_runs.c (the exact DP by the window's runs) and
 * kanon_batches.c (the exact DP by block boxes and the Fast variants' DP,
 * both costed in batches of prefixes). How the DP works is told at the top
 * of kanon.c. */
#ifndef AK_ONEDIM_KANON_INTERNAL_H
#define AK_ONEDIM_KANON_INTERNAL_H

#include <string.h>

#include "algo/onedim/mapping.h"

/* Positions gathered at a time into the chunk. */
#define KANON_CHUNK 1024

#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
#define KANON_HAVE_AVX 1
#else
#define KANON_HAVE_AVX 0
#endif

/* The codes of positions from .. from+m-1, packed at in[p * stride ..],
 * into out[x * d + q] (read front to back). */
void kanon_unpack_rows(const hil_packing *pk, const uint64_t *in, size_t stride, size_t from, size_t m,
                       uint32_t *out);

/* The candidates of a prefix: o[j] is Opt of the position where the j-th
 * candidate group begins (it has l_first - j rows), cost[j] the group's
 * cost per row. The least o[j] + l * cost[j], ties to the shortest group,
 * goes to *best and *best_len when below *best (the outcome of a scan from
 * the shortest group); with AVX where `avx` (the processor has it and no
 * test asked for the scalar code). */
void kanon_best_of(const double *o, const double *cost, size_t count, double l_first, double *best,
                   uint32_t *best_len, int avx);

/* Opt in a linear buffer: position j at [j - base]; when the end reaches
 * the buffer's end, the last w positions move to its front. */
typedef struct dp_line {
    double *opt;
    size_t base, room, w;
    int avx;                 /* best_of may use AVX */
    const hil_tuning *tune;  /* never NULL */
} dp_line;

static inline void line_make_room(dp_line *ln, size_t i)
{
    if (i - ln->base < ln->room) return;
    const size_t keep_from = i - ln->w; /* the candidates of Opt(i) start at i - w or later */
    memmove(ln->opt, ln->opt + (keep_from - ln->base), ln->w * sizeof *ln->opt);
    ln->base = keep_from;
}

/* Opt(i) = best, reached by a last group of best_len rows (0: none). */
static inline void line_set(dp_line *ln, uint32_t *len, size_t i, double best, uint32_t best_len)
{
    line_make_room(ln, i);
    ln->opt[i - ln->base] = best;
    len[i] = best_len;
}

/* Prefixes *s .. *e-1 of block (or batch) `item` of `size` prefixes, of
 * prefixes 1 .. n. */
static inline void block_bounds(size_t item, size_t size, size_t n, size_t *s, size_t *e)
{
    *s = 1 + item * size;
    *e = *s + size < n + 1 ? *s + size : n + 1;
}

/* The exact DP in two parts. Producing: the window slides over the
 * positions and, for every prefix i, describes the boxes of its candidate
 * groups as runs: run j has the same box (cost `sum` per row) for the
 * candidates starting at positions from_j .. (run j-1's start - 1), run 0
 * ending at i-k, the last run starting at the longest candidate's first
 * position. Consuming: every prefix in order weighs its candidates against
 * Opt. Only consuming depends on earlier prefixes, so the prefixes are cut
 * into blocks that threads produce at once, each with its own window that
 * first slides over the 2k-1 positions before its block (a window holds
 * exactly what those positions determine, so every block's runs are the
 * numbers of one window sliding over everything), while one thread consumes
 * the blocks in order. One thread or many, the result is the same. */
typedef struct dp_block {
    size_t s, e;          /* prefixes s .. e-1 */
    uint32_t *nruns;      /* per prefix */
    uint32_t *from;       /* run starts, prefix after prefix */
    double *sum;          /* their costs */
    size_t nrun, cap;
} dp_block;

/* What the producers and the consumer of the exact DP by runs share. */
typedef struct dp_shared {
    const table *t;
    const hil_packing *pk;
    const uint64_t *in;
    size_t stride, n, ring, w, size;
    uint64_t k;
    const double *weights;
    dp_line *ln;          /* the consumer's */
    double *boxcost;
    uint32_t *len;
} dp_shared;

/* Opt(i) for i = 1..n by the groups' NCP, the blocks' runs produced by
 * `threads` workers (the caller one of them) and consumed by the caller
 * (kanon_runs.c). */
int kanon_run_exact(dp_shared *sh, dp_block *buf, size_t nbuf, size_t nblocks, unsigned threads, ak_error *err);

/* Whether the table's categorical QIs are small enough, each and together,
 * for the block boxes (kanon_batches.c). */
int kanon_bb_usable(const table *t, const hil_tuning *tune);

/* Opt(i) for i = 1..n by the block boxes, costed by `threads` workers and
 * weighed in order by the caller (kanon_batches.c). */
int kanon_run_block_boxes(const table *t, const hil_packing *pk, const uint64_t *in, size_t stride, size_t n,
                          size_t k, const double *weights, unsigned threads, dp_line *ln, uint32_t *len,
                          ak_error *err);

/* Opt(i) for i = 1..n by the Fast variants' cost, the key distances given
 * as the gaps between neighbouring positions (kanon_batches.c). */
int kanon_run_fast(const double *gap, size_t n, size_t k, unsigned threads, dp_line *ln, uint32_t *len,
                   ak_error *err);

#endif
