/* kanon_batches.c — the 1-D k-anonymity DPs whose candidates' costs do not
 * depend on Opt, costed in batches of prefixes by workers and weighed in
 * order by the caller (ak_pipeline): the exact DP by block boxes ([Ghinita07] §5.1,
 * for categorical QIs of small domains) and the Fast variants' DP by key
 * distance. How and why is told at the top of kanon.c. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "algo/onedim/kanon_internal.h"
#include "common/cpu.h"
#include "common/parallel.h"

/* ----------------------------------------- exact DP by block boxes -- */

/* The exact DP's boxes from blocks of k positions, when every categorical
 * QI has at most BB_MAX_CODES codes. A candidate group of prefix i starts
 * at some j (i-2k+1 <= j <= i-k); with b the first multiple of k at or
 * after j, its box is the union of the suffix box of j's block, positions
 * j .. b-1 (empty when j = b), and the prefix box of positions b .. i-1.
 * Since b < i and b > i-2k, b is one of the last two boundaries before i.
 * The suffix boxes of a block are worked out backwards when the block is
 * complete (O(d) per position), and the prefix boxes of the last two
 * boundaries grow by every new position (O(d) each), so that every
 * candidate's box, and its NCP, takes O(d) ([Ghinita07] §5.1), without branches:
 * numeric sides are the values pre-scaled by weight / range (the NCP is
 * their difference), categorical sides are codes whose weighted NCP is read
 * from a table per code pair. The costs of one boundary's candidates are
 * summed QI by QI, sixteen candidates at a time with AVX2, and kept while
 * the boundary's prefix box does not grow; Opt + rows * cost is then
 * weighed by best_of, as for the runs. Each candidate's cost is the sum over
 * the QIs in order: the same doubles with or without AVX2 and on any number
 * of threads. A worker holds the suffix boxes of the last few blocks, one
 * block's values and the costs of two boundaries' candidates. Batches of
 * prefixes are costed by the workers and weighed in order (ak_pipeline). */

/* Largest categorical domain for which the block boxes are used, and most
 * entries of all the NCP tables together (2^22 doubles: 32 MiB). */
#define BB_MAX_CODES 512
#define BB_MAX_TABLE_ENTRIES ((size_t)1 << 22)

/* What the costing needs of the table, read only (shared by threads). */
typedef struct bb_tables {
    uint32_t d;
    unsigned char *numeric; /* per QI */
    double *factor;         /* numeric QI: weight / range (0 when the range is 0) */
    double **ncp;           /* categorical QI: weight * NCP of codes [lo, hi] at lo * ncodes + hi */
    double *flat;           /* categorical QI: the table's one value for lo < hi, when it has one; else -1 */
    uint32_t *ncodes;
} bb_tables;

/* The boxes of one costing thread. */
typedef struct bb_dp {
    const bb_tables *tb;
    uint32_t d;
    size_t k;
    size_t base, room;      /* suffix boxes of positions base .. base + room - 1 */
    double *slo, *shi;      /* QI q's side of position j at q * room + (j - base) */
    double *block;          /* the current block's positions: [(p % k) * d + q] */
    double *plo, *phi;      /* prefix boxes: boundary b_cur at [q], b_cur - k at [d + q] */
    double *run_lo, *run_hi;/* a growing suffix box */
    uint32_t *ccode;        /* chunk of positions: codes, then their sides */
    double *cval;
    size_t cfirst, cend;
    /* The costs of the candidates of boundary b_cur ([0]) and b_cur - k
     * ([1]), candidate j at [j + k - 1 - b]: those up to done[] are valid
     * while valid[] (the boundary's prefix box has not moved since). */
    double *bcost[2];
    size_t done[2];
    int valid[2];
} bb_dp;

/* Whether the table's categorical QIs are small enough, each and together. */
int kanon_bb_usable(const table *t, const hil_tuning *tune)
{
    size_t entries = 0;
    for (uint32_t q = 0; q < t->nqi; q++) {
        if (t->qi[q].kind == ATTR_NUMERIC) continue;
        if (t->qi[q].ncodes > BB_MAX_CODES) return 0;
        entries += (size_t)t->qi[q].ncodes * t->qi[q].ncodes;
    }
    return !tune->runs_only && entries <= BB_MAX_TABLE_ENTRIES;
}

static void bb_tables_free(bb_tables *tb)
{
    for (uint32_t q = 0; tb->ncp && q < tb->d; q++) free(tb->ncp[q]);
    free(tb->ncp), free(tb->numeric), free(tb->factor), free(tb->flat), free(tb->ncodes);
}

static int bb_tables_init(bb_tables *tb, const table *t, const double *weights, ak_error *err)
{
    memset(tb, 0, sizeof *tb);
    const uint32_t d = t->nqi, dd = d ? d : 1;
    tb->d = d;
    tb->numeric = malloc(dd);
    tb->factor = calloc(dd, sizeof *tb->factor);
    tb->flat = calloc(dd, sizeof *tb->flat);
    tb->ncp = calloc(dd, sizeof *tb->ncp);
    tb->ncodes = calloc(dd, sizeof *tb->ncodes);
    int ok = tb->numeric && tb->factor && tb->flat && tb->ncp && tb->ncodes;
    for (uint32_t q = 0; ok && q < d; q++) {
        const table_qi *a = &t->qi[q];
        const double weight = weights ? weights[q] : 1.0;
        tb->numeric[q] = a->kind == ATTR_NUMERIC;
        tb->ncodes[q] = a->ncodes;
        if (tb->numeric[q]) {
            const double span = a->ncodes > 1 ? a->values[a->ncodes - 1] - a->values[0] : 0;
            tb->factor[q] = span > 0 ? weight / span : 0;
            continue;
        }
        const size_t m = a->ncodes ? a->ncodes : 1;
        if (!(tb->ncp[q] = calloc(m * m, sizeof *tb->ncp[q]))) ok = 0;
        for (uint32_t lo = 0; ok && lo < a->ncodes; lo++)
            for (uint32_t hi = lo; hi < a->ncodes; hi++) tb->ncp[q][lo * m + hi] = weight * table_ncp(t, q, lo, hi);
        tb->flat[q] = m > 1 && ok ? tb->ncp[q][1] : -1; /* lo = 0, hi = 1 */
        for (uint32_t lo = 0; ok && lo < a->ncodes; lo++)
            for (uint32_t hi = lo + 1; hi < a->ncodes; hi++)
                if (tb->ncp[q][lo * m + hi] != tb->flat[q] || tb->flat[q] < 0) tb->flat[q] = -1;
    }
    if (!ok) {
        bb_tables_free(tb);
        return ak_err_nomem(err);
    }
    return ANONKIT_OK;
}

static void bb_free(bb_dp *s)
{
    free(s->slo), free(s->shi), free(s->block), free(s->plo), free(s->phi), free(s->run_lo), free(s->run_hi);
    free(s->ccode), free(s->cval), free(s->bcost[0]), free(s->bcost[1]);
}

static int bb_init(bb_dp *s, const bb_tables *tb, size_t k, ak_error *err)
{
    memset(s, 0, sizeof *s);
    const uint32_t d = tb->d, dd = d ? d : 1;
    s->tb = tb;
    s->d = d;
    s->k = k;
    s->room = 4 * k + 64;
    s->slo = calloc(s->room * dd + 4, sizeof *s->slo); /* + what bb_costs_avx2 reads past the last QI's */
    s->shi = calloc(s->room * dd + 4, sizeof *s->shi);
    s->block = malloc(k * dd * sizeof *s->block);
    s->plo = malloc(2 * dd * sizeof *s->plo);
    s->phi = malloc(2 * dd * sizeof *s->phi);
    s->run_lo = malloc(dd * sizeof *s->run_lo);
    s->run_hi = malloc(dd * sizeof *s->run_hi);
    s->ccode = malloc(KANON_CHUNK * (size_t)dd * sizeof *s->ccode);
    s->cval = malloc(KANON_CHUNK * (size_t)dd * sizeof *s->cval);
    s->bcost[0] = malloc((k + 4) * sizeof *s->bcost[0]); /* + what bb_costs_avx2 writes past */
    s->bcost[1] = malloc((k + 4) * sizeof *s->bcost[1]);
    if (!(s->slo && s->shi && s->block && s->plo && s->phi && s->run_lo && s->run_hi && s->ccode && s->cval &&
          s->bcost[0] && s->bcost[1])) {
        bb_free(s);
        return ak_err_nomem(err);
    }
    for (uint32_t q = 0; q < 2 * d; q++) s->plo[q] = INFINITY, s->phi[q] = -INFINITY;
    return ANONKIT_OK;
}

/* Sets the boxes up for a fresh start at position `from` (a multiple of k):
 * no suffix boxes, no prefix boxes, no positions gathered. */
static void bb_reset(bb_dp *s, size_t from)
{
    s->base = from;
    s->cfirst = s->cend = 0;
    s->valid[0] = s->valid[1] = 0;
    for (uint32_t q = 0; q < 2 * s->d; q++) s->plo[q] = INFINITY, s->phi[q] = -INFINITY;
}

/* Unpacks positions from .. from+CHUNK-1 into their sides (as
 * window_gather): numeric values scaled, categorical codes as doubles. */
static void bb_gather(bb_dp *s, const table *t, const hil_packing *pk, const uint64_t *in, size_t stride, size_t n,
                      size_t from)
{
    const uint32_t d = s->d;
    const size_t m = n - from < KANON_CHUNK ? n - from : KANON_CHUNK;
    s->cfirst = from;
    s->cend = from + m;
    kanon_unpack_rows(pk, in, stride, from, m, s->ccode);
    for (uint32_t q = 0; q < d; q++) {
        const uint32_t *code = s->ccode + q;
        double *val = s->cval + q;
        if (s->tb->numeric[q]) {
            const double *values = t->qi[q].values, low = values[0], factor = s->tb->factor[q];
            for (size_t x = 0; x < m; x++) {
                if (x + 64 < m) __builtin_prefetch(&values[code[(x + 64) * d]]);
                val[x * d] = (values[code[x * d]] - low) * factor;
            }
        } else {
            for (size_t x = 0; x < m; x++) val[x * d] = (double)code[x * d];
        }
    }
}

/* The suffix boxes of the block that ends with position `last`: position j
 * gets the box of j .. last, the block's first position the empty box (its
 * candidates' boxes are the prefix boxes from it). */
static void bb_suffixes(bb_dp *s, size_t last)
{
    const uint32_t d = s->d;
    const size_t k = s->k, first = last + 1 - k, room = s->room;
    if (last + 1 - s->base > room) { /* keep the block before it: candidates start there still */
        const size_t keep = first >= k ? first - k : 0;
        for (uint32_t q = 0; q < d; q++) {
            memmove(s->slo + q * room, s->slo + q * room + (keep - s->base), (first - keep) * sizeof *s->slo);
            memmove(s->shi + q * room, s->shi + q * room + (keep - s->base), (first - keep) * sizeof *s->shi);
        }
        s->base = keep;
    }
    for (uint32_t q = 0; q < d; q++) s->run_lo[q] = INFINITY, s->run_hi[q] = -INFINITY;
    for (size_t x = k; x-- > 1;) {
        const double *v = s->block + x * d;
        const size_t at = first + x - s->base;
        for (uint32_t q = 0; q < d; q++) {
            if (v[q] < s->run_lo[q]) s->run_lo[q] = v[q];
            if (v[q] > s->run_hi[q]) s->run_hi[q] = v[q];
            s->slo[q * room + at] = s->run_lo[q];
            s->shi[q * room + at] = s->run_hi[q];
        }
    }
    for (uint32_t q = 0; q < d; q++) {
        s->slo[q * room + (first - s->base)] = INFINITY;
        s->shi[q * room + (first - s->base)] = -INFINITY;
    }
}

/* Candidate j's cost per row: its box from the suffix box of j and the
 * prefix box (lo, hi), QIs in order. */
static inline double bb_cost(const bb_dp *s, size_t j, const double *lo, const double *hi)
{
    double cost = 0;
    const size_t at = j - s->base;
    for (uint32_t q = 0; q < s->d; q++) {
        const double a = s->slo[q * s->room + at], b = s->shi[q * s->room + at];
        const double l = a < lo[q] ? a : lo[q], h = b > hi[q] ? b : hi[q];
        cost += s->tb->numeric[q] ? h - l : s->tb->ncp[q][(size_t)l * s->tb->ncodes[q] + (size_t)h];
    }
    return cost;
}

/* The costs per row of the candidates ja .. ja+n-1 of one boundary, whose
 * boxes take its prefix box (lo, hi), into cost[0 .. n). */
static void bb_costs_scalar(const bb_dp *s, size_t ja, size_t n, const double *lo, const double *hi, double *cost)
{
    for (size_t x = 0; x < n; x++) cost[x] = bb_cost(s, ja + x, lo, hi);
}

#if KANON_HAVE_AVX
/* The weighted NCP of QI q for the four candidates whose suffix boxes are
 * at slo / shi [q * room + at ..], joined with the prefix box side (plo,
 * phi): numeric sides' difference; categorical NCPs gathered from the QI's
 * table or, when its NCP is the same for every pair of different codes,
 * compared. */
__attribute__((target("avx2"))) static inline __m256d bb_ncp4(const bb_dp *s, uint32_t q, size_t at, __m256d plo,
                                                               __m256d phi)
{
    const __m256d l = _mm256_min_pd(_mm256_loadu_pd(s->slo + q * s->room + at), plo);
    const __m256d h = _mm256_max_pd(_mm256_loadu_pd(s->shi + q * s->room + at), phi);
    if (s->tb->numeric[q]) return _mm256_sub_pd(h, l);
    if (s->tb->flat[q] >= 0) return _mm256_and_pd(_mm256_cmp_pd(h, l, _CMP_NEQ_OQ), _mm256_set1_pd(s->tb->flat[q]));
    const __m128i index =
        _mm_add_epi32(_mm_mullo_epi32(_mm256_cvttpd_epi32(l), _mm_set1_epi32((int)s->tb->ncodes[q])), _mm256_cvttpd_epi32(h));
    return _mm256_i32gather_pd(s->tb->ncp[q], index, 8);
}

/* bb_costs_scalar four candidates at a time (AVX2), sixteen at once in
 * registers while they last, QI after QI (no branch but the QI's kind).
 * Every candidate's sum is over the QIs in order from 0, as bb_cost's.
 * Writes up to three costs past n, and reads the suffix boxes that far
 * (bb_init pads them). */
__attribute__((target("avx2"))) static void bb_costs_avx2(const bb_dp *s, size_t ja, size_t n, const double *lo,
                                                          const double *hi, double *cost)
{
    const size_t at = ja - s->base;
    size_t x = 0;
    for (; x + 16 <= n; x += 16) {
        __m256d c0 = _mm256_setzero_pd(), c1 = c0, c2 = c0, c3 = c0;
        for (uint32_t q = 0; q < s->d; q++) {
            const __m256d plo = _mm256_set1_pd(lo[q]), phi = _mm256_set1_pd(hi[q]);
            c0 = _mm256_add_pd(c0, bb_ncp4(s, q, at + x, plo, phi));
            c1 = _mm256_add_pd(c1, bb_ncp4(s, q, at + x + 4, plo, phi));
            c2 = _mm256_add_pd(c2, bb_ncp4(s, q, at + x + 8, plo, phi));
            c3 = _mm256_add_pd(c3, bb_ncp4(s, q, at + x + 12, plo, phi));
        }
        _mm256_storeu_pd(cost + x, c0);
        _mm256_storeu_pd(cost + x + 4, c1);
        _mm256_storeu_pd(cost + x + 8, c2);
        _mm256_storeu_pd(cost + x + 12, c3);
    }
    for (; x < n; x += 4) {
        __m256d c = _mm256_setzero_pd();
        for (uint32_t q = 0; q < s->d; q++) c = _mm256_add_pd(c, bb_ncp4(s, q, at + x, _mm256_set1_pd(lo[q]), _mm256_set1_pd(hi[q])));
        _mm256_storeu_pd(cost + x, c);
    }
}
#endif

/* Candidate costs of a batch of prefixes s .. e-1, for the weighing: per
 * prefix, its boundaries' candidates (cur's, then cur-k's) as segments:
 * first candidate, count (0: none) and where their costs start in cost. */
typedef struct cost_batch {
    size_t s, e;
    double *cost;
    size_t *seg;          /* per prefix 6 values: ja, count, offset of cur's; of cur-k's */
} cost_batch;

/* What the costing workers and the weighing caller share. */
typedef struct bb_pipe {
    const table *t;
    const hil_packing *pk;
    const uint64_t *in;
    size_t stride, n, k, w, batch;
    const bb_tables *tb;
    int avx2;
    dp_line *ln;          /* the weighing's */
    uint32_t *len;
} bb_pipe;

/* A costing worker's boxes and the next prefix they would cost. */
typedef struct bb_worker {
    bb_dp s;
    size_t next_prefix;
} bb_worker;

/* Slides the boxes over position i-1 and, when cost is not NULL, costs
 * prefix i's candidates into cost (segments in seg[0..6), offsets from
 * cost); returns how many costs it wrote (at most k). */
static size_t bb_prefix(bb_dp *s, const bb_pipe *pp, size_t i, size_t w, double *cost, size_t *seg)
{
    const uint32_t d = s->d;
    const size_t k = s->k, p = i - 1; /* the new position */
    if (p >= s->cend) bb_gather(s, pp->t, pp->pk, pp->in, pp->stride, pp->n, p);
    const double *v = s->cval + (p - s->cfirst) * d;
    memcpy(s->block + (p % k) * d, v, d * sizeof *v);
    if (p % k == 0) { /* a boundary: its prefix box starts, the one before moves back with its costs */
        memcpy(s->plo + d, s->plo, d * sizeof *s->plo);
        memcpy(s->phi + d, s->phi, d * sizeof *s->phi);
        for (uint32_t q = 0; q < d; q++) s->plo[q] = INFINITY, s->phi[q] = -INFINITY;
        double *c = s->bcost[1];
        s->bcost[1] = s->bcost[0], s->done[1] = s->done[0], s->valid[1] = s->valid[0];
        s->bcost[0] = c, s->valid[0] = 0;
    }
    int moved = 0; /* bit b: boundary b's prefix box grew */
    for (uint32_t q = 0; q < d; q++) { /* both prefix boxes */
        const double x = v[q];
        if (x < s->plo[q]) s->plo[q] = x, moved |= 1;
        if (x > s->phi[q]) s->phi[q] = x, moved |= 1;
        if (x < s->plo[d + q]) s->plo[d + q] = x, moved |= 2;
        if (x > s->phi[d + q]) s->phi[d + q] = x, moved |= 2;
    }
    if (moved & 1) s->valid[0] = 0;
    if (moved & 2) s->valid[1] = 0;
    if (i % k == 0) bb_suffixes(s, p);
    if (!cost) return 0;
    memset(seg, 0, 6 * sizeof *seg);
    if (i < k) return 0;
    const size_t jlo = i > w ? i - w : 0, jhi = i - k, cur = p / k * k;
    size_t used = 0;
    /* boundary cur: candidates cur-k+1 .. cur (the shorter groups), then cur-k: up to cur-k */
    for (int back = 0; back < 2; back++) {
        const size_t b = cur - (back ? k : 0);
        const size_t ja = b + 1 >= k && b + 1 - k > jlo ? b + 1 - k : jlo, jb = b < jhi ? b : jhi;
        if ((back && cur < k) || ja > jb) {
            s->valid[back] = 0;
            continue;
        }
        /* the candidates costed before keep their costs while the prefix box has not grown */
        const size_t from = s->valid[back] && s->done[back] + 1 > ja ? s->done[back] + 1 : ja;
        double *bc = s->bcost[back]; /* candidate j's cost at bc[j + k - 1 - b] */
        if (from <= jb) {
            const double *lo = s->plo + (back ? d : 0), *hi = s->phi + (back ? d : 0);
#if KANON_HAVE_AVX
            if (pp->avx2) bb_costs_avx2(s, from, jb - from + 1, lo, hi, bc + (from + k - 1 - b));
            else
#endif
                bb_costs_scalar(s, from, jb - from + 1, lo, hi, bc + (from + k - 1 - b));
        }
        s->valid[back] = 1, s->done[back] = jb;
        const size_t count = jb - ja + 1;
        memcpy(cost + used, bc + (ja + k - 1 - b), count * sizeof *cost);
        seg[3 * back] = ja, seg[3 * back + 1] = count, seg[3 * back + 2] = used;
        used += count;
    }
    if (pp->ln->tune->cost_trace) {
        double sum = 0;
        for (size_t j = jlo; j <= jhi; j++) {
            const int back = j + k <= cur;
            sum += bb_cost(s, j, s->plo + (back ? d : 0), s->phi + (back ? d : 0)) * (double)(j - jlo + 1);
        }
        pp->ln->tune->cost_trace[i] = sum;
    }
    return used;
}

/* Costs batch `item` into x with the boxes of s, whose next prefix is
 * *next_prefix: when that is not the batch's first, the boxes are set up
 * afresh and slide over the positions from two blocks before the boundary
 * that the first prefix's candidates reach (what its boxes depend on)
 * without costing. The costs do not depend on where the boxes started. */
static void bb_cost_batch(const bb_pipe *pp, bb_dp *s, size_t *next_prefix, size_t item, cost_batch *x)
{
    const size_t k = pp->k;
    block_bounds(item, pp->batch, pp->n, &x->s, &x->e);
    if (*next_prefix != x->s) {
        const size_t cur = (x->s - 1) / k * k, from = cur >= 2 * k ? cur - 2 * k : 0; /* position */
        bb_reset(s, from);
        for (size_t i = from + 1; i < x->s; i++) bb_prefix(s, pp, i, pp->w, NULL, NULL);
    }
    size_t used = 0;
    for (size_t i = x->s; i < x->e; i++) {
        size_t *seg = x->seg + 6 * (i - x->s);
        const size_t wrote = bb_prefix(s, pp, i, pp->w, x->cost + used, seg);
        seg[2] += used, seg[5] += used; /* from the batch's start */
        used += wrote;
    }
    *next_prefix = x->e;
}

/* ak_pipeline's produce: batch `item`'s costs into slot. */
static int bb_produce(void *ctx, void *worker, size_t item, void *slot)
{
    bb_worker *wk = worker;
    bb_cost_batch(ctx, &wk->s, &wk->next_prefix, item, slot);
    return 0;
}

/* Opt(i) from the costs of prefix i's candidates (segments seg[0 .. 6),
 * offsets from cost). */
static void weigh_prefix(size_t i, const size_t *seg, const double *cost, dp_line *ln, uint32_t *len)
{
    double best = INFINITY;
    uint32_t best_len = 0;
    for (int back = 0; back < 2; back++) {
        const size_t ja = seg[3 * back], count = seg[3 * back + 1];
        if (count)
            kanon_best_of(ln->opt + (ja - ln->base), cost + seg[3 * back + 2], count, (double)(i - ja), &best, &best_len,
                    ln->avx);
    }
    line_set(ln, len, i, best, best_len);
}

/* Opt of batch x's prefixes from their costs. */
static void weigh_batch(const cost_batch *x, dp_line *ln, uint32_t *len)
{
    for (size_t i = x->s; i < x->e; i++) weigh_prefix(i, x->seg + 6 * (i - x->s), x->cost, ln, len);
}

/* Prefixes per batch of candidate costs: about 2 MB of them (the tests'
 * block_rows, when set). */
static size_t batch_prefixes(size_t k, const hil_tuning *tune)
{
    if (tune->block_rows) return tune->block_rows;
    return (size_t)1 << 18 > k + 8 ? ((size_t)1 << 18) / (k + 8) : 1;
}

/* Workers for nbatches batches of `batch` prefixes: threads, at least 1, at
 * most AK_MAX_PARTS and nbatches; 1 when batches are shorter than
 * min_batch, where leading a worker in before each batch would cost more
 * than a second worker saves (large k: the batches are short, the lead-in
 * long), unless the tests set the batches' length. */
static unsigned batch_workers(unsigned threads, size_t nbatches, size_t batch, size_t min_batch,
                              const hil_tuning *tune)
{
    if (threads < 1 || (batch < min_batch && !tune->block_rows)) threads = 1;
    if (threads > AK_MAX_PARTS) threads = AK_MAX_PARTS;
    return threads > nbatches ? (unsigned)nbatches : threads;
}

static void batches_free(cost_batch *buf, size_t nbuf)
{
    for (size_t j = 0; buf && j < nbuf; j++) free(buf[j].cost), free(buf[j].seg);
    free(buf);
}

/* nbuf batches of `batch` prefixes, each with room for the costs of k
 * candidates; NULL when out of memory. */
static cost_batch *batches_new(size_t nbuf, size_t batch, size_t k)
{
    cost_batch *buf = calloc(nbuf, sizeof *buf);
    for (size_t j = 0; buf && j < nbuf; j++) {
        buf[j].cost = malloc(batch * k * sizeof *buf[j].cost);
        buf[j].seg = malloc(batch * 6 * sizeof *buf[j].seg);
        if (!buf[j].cost || !buf[j].seg) {
            batches_free(buf, nbuf);
            return NULL;
        }
    }
    return buf;
}

/* Runs nbatches batches of `batch` prefixes through ak_pipeline: produce
 * costs them with the states in worker[0 .. nworkers), weigh_batch
 * (consume) gives Opt in order. */
static int run_cost_batches(void *ctx, int (*produce)(void *, void *, size_t, void *),
                            void (*consume)(void *, size_t, void *), void **worker, unsigned nworkers,
                            size_t nbatches, size_t batch, size_t k, ak_error *err)
{
    const size_t nbuf = 2 * (size_t)nworkers;
    cost_batch *buf = batches_new(nbuf, batch, k);
    if (!buf) return ak_err_nomem(err);
    const ak_pipeline p = {ctx, produce, consume, buf, sizeof *buf, nbuf, worker, nworkers};
    const int status = ak_pipeline_run(&p, nbatches);
    batches_free(buf, nbuf);
    return status < 0 ? ak_err_set(err, ANONKIT_E_INTERNAL, NULL, 0, 0, "cannot set up the DP's threads") : ANONKIT_OK;
}

/* ak_pipeline's consume: Opt of batch `item`'s prefixes. */
static void bb_consume(void *ctx, size_t item, void *slot)
{
    (void)item;
    const bb_pipe *pp = ctx;
    weigh_batch(slot, pp->ln, pp->len);
}

/* Opt(i) for i = 1..n by the block boxes: the prefixes in batches, costed
 * by `threads` workers, each with boxes of its own (the costs do not depend
 * on Opt), while the caller, one of them, weighs them in order. The result
 * does not depend on the number of threads. */
int kanon_run_block_boxes(const table *t, const hil_packing *pk, const uint64_t *in, size_t stride, size_t n,
                          size_t k, const double *weights, unsigned threads, dp_line *ln, uint32_t *len,
                          ak_error *err)
{
    bb_tables tb;
    AK_CHECK(bb_tables_init(&tb, t, weights, err));
    bb_pipe pp = {.t = t, .pk = pk, .in = in, .stride = stride, .n = n, .k = k, .w = ln->w, .tb = &tb, .ln = ln,
                  .len = len};
    pp.batch = batch_prefixes(k, ln->tune);
    const size_t nbatches = (n + pp.batch - 1) / pp.batch;
#if KANON_HAVE_AVX
    pp.avx2 = !ln->tune->scalar && ak_cpu_has(AK_CPU_AVX2);
#endif
    threads = batch_workers(threads, nbatches, pp.batch, 3 * k, ln->tune); /* lead-in: up to 3k positions */
    int rc = ANONKIT_OK;
    bb_worker wk[AK_MAX_PARTS];
    void *worker[AK_MAX_PARTS];
    unsigned ready = 0;
    for (; rc >= 0 && ready < threads; ready++) {
        if ((rc = bb_init(&wk[ready].s, &tb, k, err)) < 0) break;
        wk[ready].next_prefix = SIZE_MAX;
        worker[ready] = &wk[ready];
    }
    if (rc >= 0 && threads > 1) {
        rc = run_cost_batches(&pp, bb_produce, bb_consume, worker, threads, nbatches, pp.batch, k, err);
    } else if (rc >= 0) { /* one worker: each prefix costed and weighed in turn, no batches to hold */
        double *cost = malloc(k * sizeof *cost);
        size_t seg[6];
        if (!cost) rc = ak_err_nomem(err);
        for (size_t i = 1; rc >= 0 && i <= n; i++) {
            bb_prefix(&wk[0].s, &pp, i, pp.w, cost, seg);
            weigh_prefix(i, seg, cost, ln, len);
        }
        free(cost);
    }
    for (unsigned j = 0; j < ready; j++) bb_free(&wk[j].s);
    bb_tables_free(&tb);
    return rc;
}

/* ----------------------------------------- the Fast DP on threads -- */

/* a[0 .. n) += v. */
static inline void add_all(double *a, size_t n, double v)
{
    size_t j = 0;
    for (; j + 4 <= n; j += 4) a[j] += v, a[j + 1] += v, a[j + 2] += v, a[j + 3] += v;
    for (; j < n; j++) a[j] += v;
}

/* The Fast variants' DP with the costs (key distances) worked out in
 * batches of prefixes by `threads` workers and weighed in order by the
 * caller (weigh_batch), as the block boxes: the distances do not depend on
 * Opt. A worker keeps the distances of the window's start positions to the
 * current end, each a sum of gaps from left to right (no differences of
 * large sums, so no cancellation), all raised by the new gap as the end
 * moves; a worker that starts a batch afresh leads in over the 2k-1
 * prefixes before it, which gives every distance the same additions in the
 * same order, so the same doubles on any number of threads. */
typedef struct fast_pipe {
    const double *gap;
    size_t n, k, w, batch;
    dp_line *ln;          /* the weighing's */
    uint32_t *len;
} fast_pipe;

typedef struct fast_worker {
    double *dist;         /* position j's distance to the current end at dist[j - base] */
    size_t base, room;
    size_t next_prefix;
} fast_worker;

/* Moves the end to prefix i: dist of the window's starts raised by gap[i-1],
 * position i-1 joins at 0. */
static void fast_step(const fast_pipe *fp, fast_worker *wk, size_t i)
{
    const size_t from = i > fp->w ? i - fp->w : 0;
    if (i - wk->base >= wk->room) { /* keep the window's starts */
        memmove(wk->dist, wk->dist + (from - wk->base), (i - 1 - from) * sizeof *wk->dist);
        wk->base = from;
    }
    add_all(wk->dist + (from - wk->base), i - 1 - from, fp->gap[i - 1]);
    wk->dist[i - 1 - wk->base] = 0;
}

/* ak_pipeline's produce: the distances of batch `item`'s candidates. */
static int fast_produce(void *ctx, void *worker, size_t item, void *slot)
{
    const fast_pipe *fp = ctx;
    fast_worker *wk = worker;
    cost_batch *x = slot;
    block_bounds(item, fp->batch, fp->n, &x->s, &x->e);
    if (wk->next_prefix != x->s) { /* afresh: lead in */
        const size_t lead = x->s > fp->w ? x->s - fp->w : 1;
        wk->base = lead > fp->w ? lead - fp->w : 0;
        memset(wk->dist, 0, wk->room * sizeof *wk->dist);
        for (size_t i = lead; i < x->s; i++) fast_step(fp, wk, i);
    }
    size_t used = 0;
    for (size_t i = x->s; i < x->e; i++) {
        fast_step(fp, wk, i);
        size_t *seg = x->seg + 6 * (i - x->s);
        memset(seg, 0, 6 * sizeof *seg);
        if (i < fp->k) continue;
        const size_t jlo = i > fp->w ? i - fp->w : 0, count = i - fp->k - jlo + 1;
        memcpy(x->cost + used, wk->dist + (jlo - wk->base), count * sizeof *x->cost);
        seg[0] = jlo, seg[1] = count, seg[2] = used;
        used += count;
    }
    wk->next_prefix = x->e;
    return 0;
}

static void fast_consume(void *ctx, size_t item, void *slot)
{
    (void)item;
    const fast_pipe *fp = ctx;
    weigh_batch(slot, fp->ln, fp->len);
}

/* Opt(i) for i = 1..n by the Fast variants' cost. */
int kanon_run_fast(const double *gap, size_t n, size_t k, unsigned threads, dp_line *ln, uint32_t *len,
                   ak_error *err)
{
    fast_pipe fp = {gap, n, k, ln->w, batch_prefixes(k, ln->tune), ln, len};
    const size_t nbatches = (n + fp.batch - 1) / fp.batch;
    threads = batch_workers(threads, nbatches, fp.batch, 2 * fp.w, ln->tune); /* lead-in: w steps of w additions */
    int rc = ANONKIT_OK;
    fast_worker wk[AK_MAX_PARTS];
    void *worker[AK_MAX_PARTS];
    unsigned ready = 0;
    for (; rc >= 0 && ready < threads; ready++) {
        wk[ready] = (fast_worker){NULL, 0, 4 * fp.w + 64, SIZE_MAX};
        if (!(wk[ready].dist = calloc(wk[ready].room, sizeof *wk[ready].dist))) {
            rc = ak_err_nomem(err);
            break;
        }
        worker[ready] = &wk[ready];
    }
    if (rc >= 0 && threads > 1) {
        rc = run_cost_batches(&fp, fast_produce, fast_consume, worker, threads, nbatches, fp.batch, k, err);
    } else if (rc >= 0) { /* one worker: the distances weighed where they are */
        for (size_t i = 1; i <= n; i++) {
            fast_step(&fp, &wk[0], i);
            const size_t jlo = i > fp.w ? i - fp.w : 0;
            const size_t seg[6] = {jlo, i >= k ? i - k - jlo + 1 : 0, 0, 0, 0, 0};
            weigh_prefix(i, seg, wk[0].dist + (jlo - wk[0].base), ln, len);
        }
    }
    for (unsigned j = 0; j < ready; j++) free(wk[j].dist);
    return rc;
}
