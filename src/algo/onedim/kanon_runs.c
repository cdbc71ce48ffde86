/* kanon_runs.c — the exact 1-D k-anonymity DP by the window's runs ([Ghinita07]
 * §3, Figure 3; §5.1's incremental MBR), for categorical QIs of large
 * hierarchies: the window of the last 2k-1 positions with its monotone
 * queues per QI side, the k-row box kept from prefix to prefix, the boxes
 * of a prefix's candidates read off as runs, and the blocks of prefixes
 * that threads describe while the caller weighs them in order. How and why
 * is told at the top of kanon.c. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "algo/onedim/kanon_internal.h"
#include "common/parallel.h"

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
    kanon_unpack_rows(win->pk, win->in, win->stride, from, m, win->ccode);
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

/* NCP of codes [lo, hi] of QI q ([Ghinita07] §2.1): numeric from the side values
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

/* ------------------------------------------------- exact DP, in blocks -- */

/* (dp_block and dp_shared: kanon_internal.h) */

typedef double kanon_v4d __attribute__((vector_size(32)));

/* a[0 .. n) = v, four at a time from the top: may also write a[-3 .. -1]. */
static inline void fill_down(double *a, size_t n, double v)
{
    const kanon_v4d x = {v, v, v, v};
    for (size_t j = n; j > 0; j = j > 4 ? j - 4 : 0) memcpy(a + j - 4, &x, sizeof x);
}

/* Appends a run (its first position, its cost per row) to block b; -1 when
 * out of memory. */
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
            kanon_best_of(ln->opt + (lo - ln->base), boxcost, i - k - lo + 1, (double)longest, &best, &best_len, ln->avx);
            if (ln->tune->cost_trace) {
                double sum = 0;
                for (size_t j = 0; j < i - k - lo + 1; j++) sum += boxcost[j] * (double)(j + 1);
                ln->tune->cost_trace[i] = sum;
            }
        }
        line_set(ln, len, i, best, best_len);
    }
}

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
int kanon_run_exact(dp_shared *sh, dp_block *buf, size_t nbuf, size_t nblocks, unsigned threads, ak_error *err)
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

