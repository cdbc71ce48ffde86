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
 * to read the solution back. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "algo/onedim/mapping.h"
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
static void unpack_rows(const hil_packing *pk, const uint64_t *in, size_t stride, size_t from, size_t m,
                            uint32_t *out)
{
    const uint32_t d = pk->d;
    const hil_pack_field *f = pk->field;
    for (size_t x = 0; x < m; x++) {
        const uint64_t *src = in + (from + x) * stride;
        for (uint32_t q = 0; q < d; q++) out[x * d + q] = (uint32_t)((src[f[q].word] >> f[q].shift) & f[q].mask);
    }
}

/* -------------------------------------------------------------- window -- */

/* A monotone queue of window positions: entries first .. last-1 (counters)
 * in a ring of the window's size (a power of two). */
typedef struct mono_queue {
    uint32_t *pos;
    size_t first, last;
    size_t near; /* the entry nearest the front inside the last k positions */
} mono_queue;

/* A box over the d QIs: its sides' codes and values (numeric QIs) and its
 * NCP per QI, in one block (copied whole). */
typedef struct kanon_box {
    uint32_t *lo, *hi;
    double *lov, *hiv, *ncp;
} kanon_box;

/* Positions gathered at a time into the chunk. */
#define KANON_CHUNK 1024

/* The state of the exact DP over the window of the last 2k-1 positions. */
typedef struct kanon_window {
    const table *t;
    const hil_packing *pk;
    const uint64_t *in;   /* position p's packed codes at in[p * stride ..] */
    size_t stride;
    uint32_t d;
    size_t n;             /* positions in the 1-D order */
    size_t mask;          /* ring size - 1; the ring size is a power of two >= 2k */
    size_t mw;            /* mark words per position: bit 2q / 2q+1 = in QI q's low / high queue */
    uint32_t *code;       /* code[(p & mask) * d + q]: QI q of the row at position p */
    double *value;        /* value[(p & mask) * d + q]: its numeric value (0 for a categorical QI) */
    uint64_t *marks;      /* marks[(p & mask) * mw ...]: the queues position p is in */
    uint64_t *any;        /* bit (p & mask) of any[]: position p is in some queue */
    size_t cfirst, cend;  /* the chunk holds positions cfirst .. cend-1 */
    uint32_t *ccode;      /* ccode[(p - cfirst) * d + q]: QI q of the row at position p */
    double *cvalue;       /* its numeric value (0 for a categorical QI) */
    mono_queue *queue;    /* queue[2q]: positions whose code of QI q is below every later one
                             in the window; queue[2q+1]: above every later one */
    unsigned char *numeric; /* per QI */
    double *span;         /* per numeric QI: the table's range */
    double *weight;       /* per QI (1 when no weights are given) */
    kanon_box box;        /* the growing box */
    kanon_box kbox;       /* the last k-row box */
    void *boxes;          /* the memory of both */
    size_t box_bytes;
    int k_valid;          /* kbox is set */
    double ksum;          /* kbox's weighted NCP sum */
    uint64_t *kdirty;     /* bit b: queue b's entry at its cursor changed (popped by a new position) */
} kanon_window;

static void window_free(kanon_window *win)
{
    if (win->queue)
        for (uint32_t i = 0; i < 2 * win->d; i++) free(win->queue[i].pos);
    free(win->queue), free(win->code), free(win->value), free(win->marks), free(win->any);
    free(win->ccode), free(win->cvalue), free(win->numeric), free(win->span), free(win->weight), free(win->boxes);
    free(win->kdirty);
}

static void box_at(kanon_box *b, char *mem, uint32_t d)
{
    b->lov = (double *)mem;
    b->hiv = b->lov + d;
    b->ncp = b->hiv + d;
    b->lo = (uint32_t *)(b->ncp + d);
    b->hi = b->lo + d;
}

static int window_init(kanon_window *win, const table *t, const hil_packing *pk, const uint64_t *in, size_t stride,
                       size_t n, size_t ring, const double *weights, ak_error *err)
{
    memset(win, 0, sizeof *win);
    const uint32_t d = t->nqi, dd = d ? d : 1;
    win->t = t;
    win->pk = pk;
    win->in = in;
    win->stride = stride;
    win->d = d;
    win->n = n;
    win->mask = ring - 1;
    win->mw = (2 * (size_t)dd + 63) / 64;
    win->code = malloc(ring * dd * sizeof *win->code);
    win->value = malloc(ring * dd * sizeof *win->value);
    win->marks = calloc(ring * win->mw, sizeof *win->marks);
    win->any = calloc((ring + 63) / 64, sizeof *win->any);
    win->ccode = malloc(KANON_CHUNK * (size_t)dd * sizeof *win->ccode);
    win->cvalue = malloc(KANON_CHUNK * (size_t)dd * sizeof *win->cvalue);
    win->queue = calloc(2 * (size_t)dd, sizeof *win->queue);
    win->numeric = malloc(dd);
    win->span = malloc(dd * sizeof *win->span);
    win->weight = malloc(dd * sizeof *win->weight);
    win->box_bytes = (size_t)dd * (3 * sizeof(double) + 2 * sizeof(uint32_t));
    win->boxes = malloc(2 * win->box_bytes);
    win->kdirty = calloc(win->mw, sizeof *win->kdirty);
    int ok = win->kdirty && win->code && win->value && win->marks && win->any && win->ccode && win->cvalue && win->queue &&
             win->numeric && win->span && win->weight && win->boxes;
    for (uint32_t q = 0; ok && q < d; q++) {
        win->queue[2 * q].pos = malloc(ring * sizeof *win->queue[2 * q].pos);
        win->queue[2 * q + 1].pos = malloc(ring * sizeof *win->queue[2 * q + 1].pos);
        ok = win->queue[2 * q].pos && win->queue[2 * q + 1].pos;
        const table_qi *a = &t->qi[q];
        win->numeric[q] = a->kind == ATTR_NUMERIC;
        win->span[q] = a->kind == ATTR_NUMERIC && a->ncodes > 1 ? a->values[a->ncodes - 1] - a->values[0] : 0;
        win->weight[q] = weights ? weights[q] : 1.0;
    }
    if (!ok) {
        window_free(win);
        return ak_err_nomem(err);
    }
    box_at(&win->box, win->boxes, dd);
    box_at(&win->kbox, (char *)win->boxes + win->box_bytes, dd);
    return ANONKIT_OK;
}

/* Clears position p's membership of queue `bit` (2q: low, 2q+1: high),
 * and its summary bit in `any` when it is in no queue any more. */
#define KANON_INLINE static inline __attribute__((always_inline))

KANON_INLINE void mark_clear(kanon_window *win, size_t p, size_t bit, size_t mw)
{
    const size_t slot = p & win->mask;
    uint64_t *m = win->marks + slot * mw;
    m[bit / 64] &= ~(1ull << (bit % 64));
    for (size_t wi = 0; wi < mw; wi++)
        if (m[wi]) return;
    win->any[slot / 64] &= ~(1ull << (slot % 64));
}

/* Unpacks the codes of positions from .. from+CHUNK-1 (read front to back)
 * and gathers their numeric values column by column: the values arrays may
 * be large, and the loads of one column are independent of each other, so
 * that many misses are in flight at once. The reads that follow are
 * sequential. */
static void window_gather(kanon_window *win, size_t from)
{
    const uint32_t d = win->d;
    const size_t m = win->n - from < KANON_CHUNK ? win->n - from : KANON_CHUNK;
    win->cfirst = from;
    win->cend = from + m;
    unpack_rows(win->pk, win->in, win->stride, from, m, win->ccode);
    for (uint32_t q = 0; q < d; q++) {
        const uint32_t *code = win->ccode + q;
        double *val = win->cvalue + q;
        if (win->numeric[q]) {
            const double *values = win->t->qi[q].values;
            for (size_t x = 0; x < m; x++) {
                if (x + 16 < m) __builtin_prefetch(&values[code[(x + 16) * d]]);
                val[x * d] = values[code[x * d]];
            }
        } else {
            for (size_t x = 0; x < m; x++) val[x * d] = 0;
        }
    }
}

/* Position p enters the window of the last w positions: the position that
 * leaves is the front of every queue it is in; then, in each QI's low
 * (high) queue, entries whose code is not strictly below (above) p's can no
 * longer move that side of any box ending at p or later and leave too; p
 * joins every queue. */
KANON_INLINE void window_slide(kanon_window *win, size_t p, size_t w, size_t mw)
{
    const uint32_t d = win->d;
    const size_t mask = win->mask;
    if (p >= w) {
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
    if (p >= win->cend) window_gather(win, p);
    memcpy(row, win->ccode + (p - win->cfirst) * d, d * sizeof *row);
    memcpy(val, win->cvalue + (p - win->cfirst) * d, d * sizeof *val);
    for (uint32_t q = 0; q < d; q++) {
        const uint32_t c = row[q];
        mono_queue *low = &win->queue[2 * (size_t)q], *high = low + 1;
        while (low->first < low->last) {
            const uint32_t back = low->pos[(low->last - 1) & mask];
            if (win->code[(back & mask) * d + q] < c) break;
            mark_clear(win, back, 2 * (size_t)q, mw);
            low->last--;
        }
        if (low->near >= low->last) { /* the k-row box's side was popped: p holds it now */
            low->near = low->last;
            win->kdirty[q / 32] |= 1ull << (2 * q % 64);
        }
        low->pos[low->last++ & mask] = (uint32_t)p;
        while (high->first < high->last) {
            const uint32_t back = high->pos[(high->last - 1) & mask];
            if (win->code[(back & mask) * d + q] > c) break;
            mark_clear(win, back, 2 * (size_t)q + 1, mw);
            high->last--;
        }
        if (high->near >= high->last) {
            high->near = high->last;
            win->kdirty[q / 32] |= 1ull << ((2 * q + 1) % 64);
        }
        high->pos[high->last++ & mask] = (uint32_t)p;
    }
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
static inline double window_ncp(const kanon_window *win, uint32_t q, uint32_t lo, uint32_t hi, double lov, double hiv)
{
    if (win->numeric[q]) return win->span[q] > 0 ? (hiv - lov) / win->span[q] : 0;
    return table_ncp(win->t, q, lo, hi);
}

/* Sets the k-row box to positions from .. from+k-1 by scanning every side:
 * per side, the entry of the side's queue nearest the front that is not
 * before `from` holds the extreme code (the side's cursor). */
static void kbox_full(kanon_window *win, size_t from)
{
    const size_t mask = win->mask;
    kanon_box *kb = &win->kbox;
    for (uint32_t q = 0; q < win->d; q++) {
        for (int high = 0; high < 2; high++) {
            mono_queue *mq = &win->queue[2 * (size_t)q + (size_t)high];
            size_t at = mq->near < mq->first ? mq->first : mq->near;
            if (at >= mq->last) at = mq->last - 1;
            while (mq->pos[at & mask] < from) at++;
            mq->near = at;
            const size_t slot = ((size_t)mq->pos[at & mask] & mask) * win->d + q;
            if (high) kb->hi[q] = win->code[slot], kb->hiv[q] = win->value[slot];
            else kb->lo[q] = win->code[slot], kb->lov[q] = win->value[slot];
        }
        kb->ncp[q] = window_ncp(win, q, kb->lo[q], kb->hi[q], kb->lov[q], kb->hiv[q]);
    }
    memset(win->kdirty, 0, win->mw * sizeof *win->kdirty);
    win->k_valid = 1;
}

/* Sets the box to the last k positions, from `from` on, and returns its
 * weighted NCP sum (QIs in order, as GCP sums them). After the first time
 * only the sides that can have changed are visited: those whose cursor
 * entry a new position popped (window_slide marks them), and those whose
 * cursor entry is the position that just left the k rows (from - 1: the
 * queues it is in); each such cursor moves to the next entry of its queue.
 * The NCP of a QI is recomputed only when a side's code changed. */
KANON_INLINE double box_set(kanon_window *win, size_t from, size_t mw, int incremental)
{
    const size_t mask = win->mask;
    kanon_box *kb = &win->kbox;
    if (!win->k_valid || !incremental || from == 0) {
        kbox_full(win, from);
        double s = 0;
        for (uint32_t q = 0; q < win->d; q++) s += win->weight[q] * kb->ncp[q];
        win->ksum = s;
    } else {
        const uint64_t *left = win->marks + ((from - 1) & mask) * mw;
        int changed = 0;
        for (size_t wi = 0; wi < mw; wi++) {
            for (uint64_t bits = left[wi]; bits; bits &= bits - 1) win->queue[wi * 64 + (size_t)__builtin_ctzll(bits)].near++;
            for (uint64_t bits = left[wi] | win->kdirty[wi]; bits; bits &= bits - 1) {
                const size_t b = wi * 64 + (size_t)__builtin_ctzll(bits);
                const uint32_t q = (uint32_t)(b / 2);
                const mono_queue *mq = &win->queue[b];
                const size_t slot = ((size_t)mq->pos[mq->near & mask] & mask) * win->d + q;
                const uint32_t c = win->code[slot];
                if (b % 2) {
                    if (c == kb->hi[q]) continue;
                    kb->hi[q] = c, kb->hiv[q] = win->value[slot];
                } else {
                    if (c == kb->lo[q]) continue;
                    kb->lo[q] = c, kb->lov[q] = win->value[slot];
                }
                kb->ncp[q] = window_ncp(win, q, kb->lo[q], kb->hi[q], kb->lov[q], kb->hiv[q]);
                changed = 1;
            }
            win->kdirty[wi] = 0;
        }
        if (changed) {
            double s = 0;
            for (uint32_t q = 0; q < win->d; q++) s += win->weight[q] * kb->ncp[q];
            win->ksum = s;
        }
    }
    memcpy(win->box.lov, kb->lov, win->box_bytes); /* the growing box starts as the k-row box */
    return win->ksum;
}

/* Grows the box by marked position p: each queue it is in moves one side of
 * the box (its code is strictly beyond every later code of the window).
 * Returns the box's weighted NCP sum, `sum` before, updated by the changes
 * of the QIs that grew. */
KANON_INLINE double box_grow(kanon_window *win, size_t p, double sum, size_t mw)
{
    const uint32_t *row = win->code + (p & win->mask) * win->d;
    const double *val = win->value + (p & win->mask) * win->d;
    const uint64_t *m = win->marks + (p & win->mask) * mw;
    kanon_box *b = &win->box;
    for (size_t wi = 0; wi < mw; wi++)
        for (uint64_t bits = m[wi]; bits; bits &= bits - 1) {
            const size_t bit = wi * 64 + (size_t)__builtin_ctzll(bits);
            const uint32_t q = (uint32_t)(bit / 2);
            if (bit % 2) b->hi[q] = row[q], b->hiv[q] = val[q];
            else b->lo[q] = row[q], b->lov[q] = val[q];
            const double ncp = window_ncp(win, q, b->lo[q], b->hi[q], b->lov[q], b->hiv[q]);
            sum += win->weight[q] * (ncp - b->ncp[q]);
            b->ncp[q] = ncp;
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

/* ---------------------------------------------------------- candidates -- */

typedef double kanon_v4d __attribute__((vector_size(32)));

/* a[0 .. n) = v, four at a time from the top: may also write a[-3 .. -1]. */
static inline void fill_down(double *a, size_t n, double v)
{
    const kanon_v4d x = {v, v, v, v};
    for (size_t j = n; j > 0; j = j > 4 ? j - 4 : 0) memcpy(a + j - 4, &x, sizeof x);
}

/* a[0 .. n) += v. */
static inline void add_all(double *a, size_t n, double v)
{
    size_t j = 0;
    for (; j + 4 <= n; j += 4) a[j] += v, a[j + 1] += v, a[j + 2] += v, a[j + 3] += v;
    for (; j < n; j++) a[j] += v;
}

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
#else
#define KANON_HAVE_AVX 0
#endif

/* best_avx where `avx` (the processor has AVX and no test asked for the
 * scalar code), else best_scalar. */
static void best_of(const double *o, const double *cost, size_t count, double l_first, double *best,
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

/* Opt in a linear buffer: position j at [j - base]; when the end reaches
 * the buffer's end, the last w positions move to its front. */
typedef struct dp_line {
    double *opt;
    size_t base, room, w;
    int avx;                 /* best_of may use AVX */
    const hil_tuning *tune;  /* never NULL */
} dp_line;

static void line_make_room(dp_line *ln, size_t i)
{
    if (i - ln->base < ln->room) return;
    const size_t keep_from = i - ln->w; /* the candidates of Opt(i) start at i - w or later */
    memmove(ln->opt, ln->opt + (keep_from - ln->base), ln->w * sizeof *ln->opt);
    ln->base = keep_from;
}

/* Opt(i) = best, reached by a last group of best_len rows (0: none). */
static void line_set(dp_line *ln, uint32_t *len, size_t i, double best, uint32_t best_len)
{
    line_make_room(ln, i);
    ln->opt[i - ln->base] = best;
    len[i] = best_len;
}

/* ------------------------------------------------- exact DP, in blocks -- */

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

static int block_push(dp_block *b, uint32_t from, double sum)
{
    if (b->nrun == b->cap) {
        const size_t cap = b->cap ? 2 * b->cap : 4096;
        uint32_t *f = realloc(b->from, cap * sizeof *f);
        if (f) b->from = f;
        double *x = f ? realloc(b->sum, cap * sizeof *x) : NULL;
        if (x) b->sum = x;
        if (!f || !x) return -1;
        b->cap = cap;
    }
    b->from[b->nrun] = from;
    b->sum[b->nrun++] = sum;
    return 0;
}

/* Prefixes *s .. *e-1 of block (or batch) `item` of `size` prefixes, of
 * prefixes 1 .. n. */
static void block_bounds(size_t item, size_t size, size_t n, size_t *s, size_t *e)
{
    *s = 1 + item * size;
    *e = *s + size < n + 1 ? *s + size : n + 1;
}

/* Clears a window for a fresh start at any position. */
static void window_reset(kanon_window *win)
{
    memset(win->marks, 0, (win->mask + 1) * win->mw * sizeof *win->marks);
    memset(win->any, 0, (win->mask + 64) / 64 * sizeof *win->any);
    memset(win->kdirty, 0, win->mw * sizeof *win->kdirty);
    for (uint32_t b = 0; b < 2 * win->d; b++) win->queue[b].first = win->queue[b].last = win->queue[b].near = 0;
    win->cfirst = win->cend = 0;
    win->k_valid = 0;
}

/* The runs of the prefixes of block b; *next_pos is the next position the
 * window would slide (the window continues when it is b's first). */
KANON_INLINE int produce_block(kanon_window *win, dp_block *b, size_t *next_pos, size_t w, uint64_t k, size_t mw)
{
    const size_t first = b->s - 1 > w ? b->s - 1 - w : 0; /* positions first .. s-2 before the block */
    if (*next_pos != b->s - 1) {
        window_reset(win);
        for (size_t p = first; p + 1 < b->s; p++) window_slide(win, p, w, mw);
    }
    b->nrun = 0;
    for (size_t i = b->s; i < b->e; i++) {
        window_slide(win, i - 1, w, mw);
        const size_t at = b->nrun;
        if (i >= k) {
            /* The box of every candidate, from the k-row group leftwards:
             * it stays the same over a run of unmarked positions and grows
             * at the marked one below it. */
            const size_t lo = i - (i < w ? i : w);
            double sum = box_set(win, i - k, mw, k >= 2);
            size_t p = i - k; /* the candidate's first position */
            for (;;) {
                const size_t r = p > lo ? last_marked(win, lo, p - 1) : lo; /* r .. p: the same box */
                if (block_push(b, (uint32_t)r, sum) < 0) return -1;
                if (r == lo) break;
                p = r - 1;
                sum = box_grow(win, p, sum, mw);
            }
        }
        b->nruns[i - b->s] = (uint32_t)(b->nrun - at);
    }
    *next_pos = b->e - 1;
    return 0;
}

/* Opt of the prefixes of block b from its runs. boxcost has 3 slots before
 * [0] for fill_down. */
static void consume_block(const dp_block *b, dp_line *ln, double *boxcost, uint32_t *len, uint64_t k)
{
    const size_t w = ln->w;
    size_t run = 0;
    for (size_t i = b->s; i < b->e; i++) {
        double best = INFINITY;
        uint32_t best_len = 0;
        const size_t longest = i < w ? i : w, lo = i - longest;
        if (i >= k) {
            size_t end = i - k; /* the run's last candidate position */
            for (uint32_t j = 0; j < b->nruns[i - b->s]; j++, run++) {
                fill_down(boxcost + (b->from[run] - lo), end - b->from[run] + 1, b->sum[run]);
                end = b->from[run] - 1;
            }
            best_of(ln->opt + (lo - ln->base), boxcost, i - k - lo + 1, (double)longest, &best, &best_len, ln->avx);
            if (ln->tune->cost_trace) {
                double sum = 0;
                for (size_t j = 0; j < i - k - lo + 1; j++) sum += boxcost[j] * (double)(j + 1);
                ln->tune->cost_trace[i] = sum;
            }
        }
        line_set(ln, len, i, best, best_len);
    }
}

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

/* A producer's window and the next position it would slide. */
typedef struct dp_worker {
    kanon_window win;
    size_t next_pos;
} dp_worker;

/* ak_pipeline's produce: the runs of block `item` into slot. */
static int dp_produce(void *ctx, void *worker, size_t item, void *slot)
{
    const dp_shared *sh = ctx;
    dp_worker *wk = worker;
    dp_block *b = slot;
    block_bounds(item, sh->size, sh->n, &b->s, &b->e);
    const int rc = wk->win.mw == 1 ? produce_block(&wk->win, b, &wk->next_pos, sh->w, sh->k, 1) /* up to 32 QIs: one mark word */
                                   : produce_block(&wk->win, b, &wk->next_pos, sh->w, sh->k, wk->win.mw);
    return rc < 0 ? ANONKIT_E_NOMEM : 0;
}

/* ak_pipeline's consume: Opt of block `item`'s prefixes. */
static void dp_consume(void *ctx, size_t item, void *slot)
{
    (void)item;
    const dp_shared *sh = ctx;
    consume_block(slot, sh->ln, sh->boxcost, sh->len, sh->k);
}

/* Opt(i) for i = 1..n by the groups' NCP, the blocks' runs produced by
 * `threads` workers (the caller one of them) and consumed by the caller. */
static int run_exact(dp_shared *sh, dp_block *buf, size_t nbuf, size_t nblocks, unsigned threads, ak_error *err)
{
    dp_worker wk[AK_MAX_PARTS];
    void *worker[AK_MAX_PARTS];
    unsigned ready = 0;
    int rc = ANONKIT_OK;
    for (; ready < threads; ready++) {
        if ((rc = window_init(&wk[ready].win, sh->t, sh->pk, sh->in, sh->stride, sh->n, sh->ring, sh->weights, err)) < 0)
            break;
        wk[ready].next_pos = SIZE_MAX;
        worker[ready] = &wk[ready];
    }
    if (rc >= 0) {
        const ak_pipeline p = {sh, dp_produce, dp_consume, buf, sizeof *buf, nbuf, worker, threads};
        const int status = ak_pipeline_run(&p, nblocks);
        if (status < 0)
            rc = status == ANONKIT_E_NOMEM ? ak_err_nomem(err)
                                           : ak_err_set(err, ANONKIT_E_INTERNAL, NULL, 0, 0, "cannot set up the DP's threads");
    }
    for (unsigned j = 0; j < ready; j++) window_free(&wk[j].win);
    return rc;
}

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
 * candidate's box, and its NCP, takes O(d) (001 §5.1), without branches:
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
static int bb_usable(const table *t, const hil_tuning *tune)
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
    unpack_rows(pk, in, stride, from, m, s->ccode);
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
            best_of(ln->opt + (ja - ln->base), cost + seg[3 * back + 2], count, (double)(i - ja), &best, &best_len,
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
static int run_block_boxes(const table *t, const hil_packing *pk, const uint64_t *in, size_t stride, size_t n,
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
    pp.avx2 = !ln->tune->scalar && __builtin_cpu_supports("avx2");
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
static int run_fast(const double *gap, size_t n, size_t k, unsigned threads, dp_line *ln, uint32_t *len,
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
    ln.avx = !tune->scalar && __builtin_cpu_supports("avx");
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
        rc = run_fast(gap, n, (size_t)k, threads, &ln, len, err);
    } else if (rc >= 0 && bb_usable(t, tune)) {
        rc = run_block_boxes(t, pk, in, stride, n, (size_t)k, weights, threads, &ln, len, err);
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
        if (rc >= 0) rc = run_exact(&sh, buf, nbuf, nblocks, threads, err);
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
