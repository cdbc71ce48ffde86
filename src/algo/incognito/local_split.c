/* local_split.c — local recoding by top-down splits in passes (issue 28,
 * part 3), for every per-class privacy model.
 *
 * Owns: a search that starts from one class holding the rows at the top of
 * every hierarchy and splits classes while that lowers the NCP, in the manner
 * of the top-down specialization of [Fung05] applied per class (each class
 * chooses its own next QI, so that rows end at their own levels: local
 * recoding). Lowering QI q of a class by one level sorts its rows into the
 * children (the values of q one level down); the children that satisfy the
 * privacy model become classes. The rows of the other children either
 *   - stay together at the class's level of q as one remainder class (the
 *     relaxed partitioning of [LeFevre06], with hierarchies): when that
 *     remainder fails the model it takes rows from the children — under
 *     k-anonymity alone the cheaper of the missing rows from one child that
 *     keeps k of its own or a whole child, under the other models whole
 *     children, least NCP saved first, until it holds (all: no split); or
 *   - leave the pass, to be anonymized again from the top with the other
 *     rows left (the iterated scheme of local.c, per class).
 * A pass publishes only classes whose NCP per row is at most its threshold
 * theta (the others leave whole), theta growing by LOCAL_THETA_GROWTH per
 * pass, so that cheap classes are published first as in the iterated
 * full-domain scheme; once few rows are left (LOCAL_TAIL_ROWS, 10 k) a last
 * pass keeps remainders and publishes everything. The split of a class is
 * the QI whose split saves the most weighted NCP on the rows it keeps.
 *
 * Soundness: a class holds rows whose labels are their own values
 * generalized along the hierarchies (a label covers its rows). Within a pass
 * the classes are distinct label tuples: two classes separate at one split,
 * where they get different values of q at one level, or a child level and
 * the remainder's level, and a remainder never lowers that q again
 * (`frozen`). Across passes a class may get the labels of an earlier one;
 * then the two are one class, published only when their union satisfies the
 * model (under k-anonymity and distinct l-diversity it always does),
 * otherwise its rows leave. Every class is tested with the model itself
 * (model_holds, model_dist_holds), so any per-class model works: k, the
 * l-diversity variants, t-closeness, δ-disclosure, β-likeness. Rows left at
 * the end join the class of least NCP that covers them when the union
 * satisfies the model; the rest are suppressed. */
#include "algo/incognito/local_internal.h"

#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "common/progress.h"

#define LOCAL_THETA_START 0.05 /* the first pass's threshold, a share of the top's NCP per row */
#define LOCAL_THETA_GROWTH 1.2
#define LOCAL_TAIL_ROWS 500    /* at least; 10 k when larger */

/* A class waiting to be split: rows idx[start .. start+n), its levels, and
 * the QIs it may not lower (bit q). */
typedef struct split_task {
    size_t start, n;
    uint64_t lv;
    uint64_t frozen;
} split_task;

typedef struct split_ctx {
    inc_ctx *c;
    partition *p;
    const double *w;
    uint64_t k;
    int union_safe;       /* the union of two classes that satisfy the model satisfies it (k, distinct l) */
    uint32_t *idx, *tmp;  /* rows, grouped by class; scratch of the same size */
    uint32_t *chof;       /* child of each row of the current class */
    uint32_t *cnt, *cpos; /* per child value: rows, fill position */
    uint32_t *touched;    /* children present, in order of first appearance */
    unsigned char *ckeep; /* per child value: a class of its own (1) or not (0) */
    unsigned char *ckeep0;/* the same before the remainder took children */
    double *cdelta;       /* per child value: NCP saved per row */
    uint32_t *hist, *hlist, *hcounts, *hcodes, *hscratch; /* sensitive histogram of a set of rows */
    split_task *stack;
    size_t nstack, capstack;
    int leaving;          /* this pass lets rows leave */
    double theta;         /* this pass publishes classes of at most this NCP per row */
    uint32_t *left;       /* rows left for the next pass */
    size_t nleft;
    int leave;            /* the last try_split lets its failing children leave */
    /* The published classes: levels, one row, and the map of their label tuples. */
    uint64_t *cls_lv;
    uint32_t *cls_rep;
    size_t ncls, capcls;
    u64map labels;        /* hash of a class's hierarchy nodes -> index into label_class */
    uint32_t *label_class;
    size_t caplabel;
    inc_local_split_stats st;
} split_ctx;

/* Whether the rows rows[0..n) form a class that satisfies the model. */
static int rows_hold(split_ctx *s, const uint32_t *rows, size_t n)
{
    const inc_ctx *c = s->c;
    if (n < s->k) return 0;
    if (!c->sens) return 1;
    size_t nv = 0;
    for (size_t i = 0; i < n; i++) {
        const uint32_t v = c->sens[rows[i]];
        if (!s->hist[v]++) s->hlist[nv++] = v;
    }
    for (size_t j = 0; j < nv; j++) {
        s->hcodes[j] = s->hlist[j];
        s->hcounts[j] = s->hist[s->hlist[j]];
        s->hist[s->hlist[j]] = 0;
    }
    int holds = model_holds(c->m, n, s->hcounts, nv, s->hscratch);
    if (holds && c->work) holds = model_dist_holds(&c->m->dist, c->m->ref, c->work, n, s->hcodes, s->hcounts, nv);
    return holds;
}

/* Lays the rows of a class out in tmp by child: the children with ckeep 1
 * first (in touched order), then the others; with `borrow`, that many rows of
 * child `from` go with the others. Returns where the others start. */
static size_t arrange(split_ctx *s, const uint32_t *rows, size_t n, uint32_t nt, uint32_t from, uint32_t borrow)
{
    size_t at = 0;
    for (uint32_t j = 0; j < nt; j++) {
        const uint32_t ch = s->touched[j];
        if (!s->ckeep[ch]) continue;
        s->cpos[ch] = (uint32_t)at;
        at += s->cnt[ch] - (ch == from ? borrow : 0);
    }
    const size_t rem = at;
    for (size_t i = 0; i < n; i++) {
        const uint32_t ch = s->chof[i];
        if (s->ckeep[ch] && ch == from && borrow) {
            borrow--;
            s->tmp[at++] = rows[i];
        } else if (s->ckeep[ch]) {
            s->tmp[s->cpos[ch]++] = rows[i];
        } else {
            s->tmp[at++] = rows[i];
        }
    }
    return rem;
}

/* Pushes a class to split later. */
static int push(split_ctx *s, size_t start, size_t n, uint64_t lv, uint64_t frozen, ak_error *err)
{
    if (s->nstack == s->capstack) {
        const size_t cap = s->capstack ? 2 * s->capstack : 256;
        split_task *grown = realloc(s->stack, cap * sizeof *grown);
        if (!grown) return ak_err_nomem(err);
        s->stack = grown;
        s->capstack = cap;
    }
    s->stack[s->nstack++] = (split_task){start, n, lv, frozen};
    return ANONKIT_OK;
}

/* The weighted NCP of one row of class t (its labels at levels lv). */
static double row_cost(const split_ctx *s, uint64_t lv, uint32_t row)
{
    const inc_ctx *c = s->c;
    double sum = 0;
    for (uint32_t q = 0; q < c->nqi; q++) {
        const uint32_t l = inc_level(c, lv, q);
        sum += (s->w ? s->w[q] : 1.0) * c->qi[q].ncp[l][c->qi[q].gen[l][c->code0[q][row]]];
    }
    return sum;
}

/* The weighted NCP saved by lowering QI q of class t by one level (0: no
 * split). With `apply` the split is made: its rows rearranged, the children
 * that keep their own class and the remainder pushed, or the rows of the
 * failing children left for the next pass. */
static double try_split(split_ctx *s, const split_task *t, uint32_t q, int apply, ak_error *err, int *rc)
{
    inc_ctx *c = s->c;
    const inc_qi *a = &c->qi[q];
    const uint32_t l = inc_level(c, t->lv, q);
    uint32_t *rows = s->idx + t->start;
    const size_t n = t->n;
    const uint32_t *gen = a->gen[l - 1], *code = c->code0[q];
    const double wq = s->w ? s->w[q] : 1.0, pncp = a->ncp[l][a->gen[l][code[rows[0]]]];
    uint32_t nt = 0;
    for (size_t i = 0; i < n; i++) {
        const uint32_t ch = gen[code[rows[i]]];
        s->chof[i] = ch;
        if (!s->cnt[ch]++) s->touched[nt++] = ch;
    }
    /* The children that satisfy the model on their own. */
    if (c->sens) {
        for (uint32_t j = 0; j < nt; j++) s->ckeep[s->touched[j]] = 1;
        arrange(s, rows, n, nt, UINT32_MAX, 0);
        for (uint32_t j = 0, at = 0; j < nt; j++) {
            const uint32_t ch = s->touched[j];
            s->ckeep[ch] = (unsigned char)rows_hold(s, s->tmp + at, s->cnt[ch]);
            at += s->cnt[ch];
        }
    } else {
        for (uint32_t j = 0; j < nt; j++) s->ckeep[s->touched[j]] = s->cnt[s->touched[j]] >= s->k;
    }
    size_t rem_n = 0;
    uint32_t kept = 0;
    double gain = 0;
    for (uint32_t j = 0; j < nt; j++) {
        const uint32_t ch = s->touched[j];
        s->cdelta[ch] = pncp - a->ncp[l - 1][ch];
        s->ckeep0[ch] = s->ckeep[ch];
        if (s->ckeep[ch]) {
            gain += s->cdelta[ch] * s->cnt[ch];
            kept++;
        } else {
            rem_n += s->cnt[ch];
        }
    }
    const double gain_leave = gain;
    uint32_t from = UINT32_MAX, borrow = 0;
    if (rem_n > 0 && !c->sens) {
        /* k alone: the remainder needs k - rem_n more rows, from the child that
         * loses least by giving them (or by joining whole). */
        if (rem_n < s->k) {
            const uint32_t need = (uint32_t)(s->k - rem_n);
            double best = -1;
            int whole = 0;
            for (uint32_t j = 0; j < nt; j++) {
                const uint32_t ch = s->touched[j];
                if (!s->ckeep[ch]) continue;
                const int part = s->cnt[ch] >= s->k + need;
                const double cost = s->cdelta[ch] * (part ? need : s->cnt[ch]);
                if (best < 0 || cost < best) {
                    best = cost;
                    from = ch;
                    whole = !part;
                }
            }
            if (from == UINT32_MAX) {
                gain = 0;
            } else {
                gain -= best;
                if (whole) {
                    s->ckeep[from] = 0;
                    from = UINT32_MAX;
                } else {
                    borrow = need;
                }
            }
        }
    } else if (rem_n > 0) {
        /* Other models: whole children join the remainder, least saving first, until it holds. */
        for (;;) {
            for (uint32_t j = 0; j < nt; j++) s->ckeep[s->touched[j]] ^= 1;
            arrange(s, rows, n, nt, UINT32_MAX, 0); /* the remainder's rows first: tmp[0 .. rem_n) */
            for (uint32_t j = 0; j < nt; j++) s->ckeep[s->touched[j]] ^= 1;
            if (rows_hold(s, s->tmp, rem_n)) break;
            uint32_t pick = UINT32_MAX;
            for (uint32_t j = 0; j < nt; j++) {
                const uint32_t ch = s->touched[j];
                if (s->ckeep[ch] && (pick == UINT32_MAX || s->cdelta[ch] * s->cnt[ch] < s->cdelta[pick] * s->cnt[pick]))
                    pick = ch;
            }
            if (pick == UINT32_MAX) { /* every child in the remainder: no split */
                gain = 0;
                break;
            }
            s->ckeep[pick] = 0;
            gain -= s->cdelta[pick] * s->cnt[pick];
            rem_n += s->cnt[pick];
        }
    }
    /* Leaving the failing children to the next pass keeps every saving. */
    s->leave = s->leaving && kept && gain_leave > gain;
    if (s->leave) {
        gain = gain_leave;
        for (uint32_t j = 0; j < nt; j++) s->ckeep[s->touched[j]] = s->ckeep0[s->touched[j]];
        from = UINT32_MAX;
        borrow = 0;
    }
    gain *= wq;
    if (apply && gain > 0) {
        const size_t rem = arrange(s, rows, n, nt, from, borrow);
        memcpy(rows, s->tmp, n * sizeof *rows);
        const uint64_t down = inc_with_level(c, t->lv, q, l - 1);
        size_t at = 0;
        for (uint32_t j = 0; j < nt && *rc == ANONKIT_OK; j++) {
            const uint32_t ch = s->touched[j];
            if (!s->ckeep[ch]) continue;
            const size_t m = s->cnt[ch] - (ch == from ? borrow : 0);
            *rc = push(s, t->start + at, m, down, t->frozen, err);
            at += m;
        }
        if (rem < n && s->leave) {
            for (size_t i = rem; i < n; i++) s->left[s->nleft++] = rows[i];
        } else if (*rc == ANONKIT_OK && rem < n) {
            *rc = push(s, t->start + rem, n - rem, t->lv, t->frozen | (uint64_t)1 << q, err);
        }
        s->st.splits++;
    }
    for (uint32_t j = 0; j < nt; j++) s->cnt[s->touched[j]] = 0;
    return gain;
}

/* The hierarchy nodes and boxes of the labels of `row` at levels lv; returns
 * a hash of the nodes. */
static uint64_t labels_of(const split_ctx *s, uint64_t lv, uint32_t row, uint32_t *lo, uint32_t *hi, uint32_t *nodes)
{
    const inc_ctx *c = s->c;
    uint64_t h = 0x9e3779b97f4a7c15ull;
    for (uint32_t q = 0; q < c->nqi; q++) {
        const uint32_t l = inc_level(c, lv, q), v = c->qi[q].gen[l][c->code0[q][row]];
        lo[q] = c->qi[q].box_lo[l][v];
        hi[q] = c->qi[q].box_hi[l][v];
        nodes[q] = c->qi[q].node[l][v];
        h = (h ^ nodes[q]) * 0xff51afd7ed558ccdull;
        h ^= h >> 32;
    }
    return h;
}

/* The rows of class id followed by rows[0..n), in tmp; returns their number. */
static size_t gather(split_ctx *s, uint32_t id, const uint32_t *rows, size_t n)
{
    size_t m = 0;
    for (size_t r = 0; r < s->c->nrows; r++)
        if (s->p->class_of[r] == id) s->tmp[m++] = (uint32_t)r;
    memcpy(s->tmp + m, rows, n * sizeof *rows);
    return m + n;
}

/* Publishes rows[0..n) at levels lv as a class, or into the earlier class
 * with the same labels when their union satisfies the model; *done tells
 * whether they were published. */
static int publish_rows(split_ctx *s, const uint32_t *rows, size_t n, uint64_t lv, int *done, ak_error *err)
{
    const inc_ctx *c = s->c;
    partition *p = s->p;
    uint32_t lo[64], hi[64], nodes[64], slot, id = UINT32_MAX;
    int inserted;
    const uint64_t h = labels_of(s, lv, rows[0], lo, hi, nodes);
    if (u64map_intern(&s->labels, h, &slot, &inserted) != 0) return ak_err_nomem(err);
    if (!inserted) {
        id = s->label_class[slot];
        if (memcmp(p->node + (size_t)id * c->nqi, nodes, c->nqi * sizeof *nodes) != 0) {
            /* another label tuple with the same hash: look for these labels among all classes */
            id = UINT32_MAX;
            for (size_t k = 0; k < p->nclasses && id == UINT32_MAX; k++)
                if (!memcmp(p->node + k * c->nqi, nodes, c->nqi * sizeof *nodes)) id = (uint32_t)k;
        }
    }
    *done = 1;
    if (id != UINT32_MAX) { /* the labels of an earlier class: one class with it */
        if (!s->union_safe) {
            const size_t m = gather(s, id, rows, n);
            if (!rows_hold(s, s->tmp, m)) {
                *done = 0;
                return ANONKIT_OK;
            }
        }
        p->count[id] += n;
        s->st.merged++;
    } else {
        AK_CHECK(partition_add_class_nodes(p, lo, hi, nodes, n, &id, err));
        if (inserted) {
            if (slot >= s->caplabel) {
                const size_t cap = s->caplabel ? 2 * s->caplabel : 1024;
                uint32_t *grown = realloc(s->label_class, cap * sizeof *grown);
                if (!grown) return ak_err_nomem(err);
                s->label_class = grown;
                s->caplabel = cap;
            }
            s->label_class[slot] = id;
        }
        if (s->ncls == s->capcls) {
            const size_t cap = s->capcls ? 2 * s->capcls : 1024;
            uint64_t *lv2 = realloc(s->cls_lv, cap * sizeof *lv2);
            if (lv2) s->cls_lv = lv2;
            uint32_t *rep = realloc(s->cls_rep, cap * sizeof *rep);
            if (rep) s->cls_rep = rep;
            if (!lv2 || !rep) return ak_err_nomem(err);
            s->capcls = cap;
        }
        s->cls_lv[s->ncls] = lv;
        s->cls_rep[s->ncls++] = rows[0];
        s->st.classes++;
    }
    for (size_t i = 0; i < n; i++) p->class_of[rows[i]] = id;
    return ANONKIT_OK;
}

/* Splits the classes on the stack greedily (the QI that saves most first)
 * until none is left; a class no split improves is published, or leaves the
 * pass when it costs more than theta per row or cannot be published. */
static int run_pass(split_ctx *s, ak_error *err)
{
    int rc = ANONKIT_OK;
    while (rc == ANONKIT_OK && s->nstack) {
        const split_task t = s->stack[--s->nstack];
        if ((s->st.tasks++ & 1023) == 0 && (rc = ak_progress_poll(s->c->progress, err)) < 0) break;
        uint32_t best_q = UINT32_MAX;
        double best = 0;
        for (uint32_t q = 0; q < s->c->nqi && rc == ANONKIT_OK; q++) {
            if (t.frozen >> q & 1 || inc_level(s->c, t.lv, q) == 0) continue;
            const double gain = try_split(s, &t, q, 0, err, &rc);
            if (gain > best) {
                best = gain;
                best_q = q;
            }
        }
        if (rc < 0) break;
        if (best_q != UINT32_MAX) {
            try_split(s, &t, best_q, 1, err, &rc);
            continue;
        }
        const uint32_t *rows = s->idx + t.start;
        int done = 0;
        if (!s->leaving || row_cost(s, t.lv, rows[0]) <= s->theta) rc = publish_rows(s, rows, t.n, t.lv, &done, err);
        if (rc == ANONKIT_OK && !done) {
            memcpy(s->left + s->nleft, rows, t.n * sizeof *rows);
            s->nleft += t.n;
        }
    }
    return rc;
}

/* Puts each row of rows[0..n) into the published class of least NCP whose
 * labels cover it, when their union satisfies the model; the others stay
 * suppressed. */
static int absorb(split_ctx *s, const uint32_t *rows, size_t n)
{
    const inc_ctx *c = s->c;
    for (size_t i = 0; i < n; i++) {
        const uint32_t r = rows[i];
        uint32_t best = UINT32_MAX;
        double best_cost = 0;
        for (size_t k = 0; k < s->ncls; k++) {
            const uint64_t lv = s->cls_lv[k];
            const uint32_t rep = s->cls_rep[k];
            uint32_t q = 0;
            while (q < c->nqi) {
                const uint32_t l = inc_level(c, lv, q);
                if (c->qi[q].gen[l][c->code0[q][r]] != c->qi[q].gen[l][c->code0[q][rep]]) break;
                q++;
            }
            if (q < c->nqi) continue;
            const double cost = row_cost(s, lv, rep);
            if (best != UINT32_MAX && cost >= best_cost) continue;
            const uint32_t id = s->p->class_of[rep];
            if (!s->union_safe && !rows_hold(s, s->tmp, gather(s, id, &r, 1))) continue;
            best = id;
            best_cost = cost;
        }
        if (best == UINT32_MAX) continue;
        s->p->class_of[r] = best;
        s->p->count[best]++;
        s->st.absorbed++;
    }
    return ANONKIT_OK;
}

static void split_free(split_ctx *s)
{
    free(s->idx);
    free(s->tmp);
    free(s->chof);
    free(s->cnt);
    free(s->cpos);
    free(s->touched);
    free(s->ckeep);
    free(s->ckeep0);
    free(s->cdelta);
    free(s->hist);
    free(s->hlist);
    free(s->hcounts);
    free(s->hcodes);
    free(s->hscratch);
    free(s->stack);
    free(s->left);
    free(s->cls_lv);
    free(s->cls_rep);
    free(s->label_class);
    u64map_free(&s->labels);
}

int inc_local_split(inc_ctx *c, const double *w, partition *p, inc_local_split_stats *st, ak_error *err)
{
    memset(st, 0, sizeof *st);
    const size_t n = c->nrows, nn = n ? n : 1;
    uint32_t maxcard = 1, nsens = 1;
    for (uint32_t q = 0; q < c->nqi; q++)
        if (c->qi[q].card[0] > maxcard) maxcard = c->qi[q].card[0];
    if (c->sens) nsens = (uint32_t)c->t->sensitive_dict.count + 1;
    split_ctx s = {.c = c, .p = p, .w = w, .k = c->m->k > 1 ? c->m->k : 1,
                   .union_safe = inc_model_monotone_with_suppression(c->m)};
    s.idx = malloc(nn * sizeof *s.idx);
    s.tmp = malloc(nn * sizeof *s.tmp);
    s.chof = malloc(nn * sizeof *s.chof);
    s.left = malloc(nn * sizeof *s.left);
    s.cnt = calloc(maxcard, sizeof *s.cnt);
    s.cpos = malloc(maxcard * sizeof *s.cpos);
    s.touched = malloc(maxcard * sizeof *s.touched);
    s.ckeep = malloc(maxcard);
    s.ckeep0 = malloc(maxcard);
    s.cdelta = malloc(maxcard * sizeof *s.cdelta);
    s.hist = calloc(nsens, sizeof *s.hist);
    s.hlist = malloc(nsens * sizeof *s.hlist);
    s.hcounts = malloc(nsens * sizeof *s.hcounts);
    s.hcodes = malloc(nsens * sizeof *s.hcodes);
    s.hscratch = malloc(nsens * sizeof *s.hscratch);
    uint32_t *rows = malloc(nn * sizeof *rows);
    int rc = rows && s.idx && s.tmp && s.chof && s.left && s.cnt && s.cpos && s.touched && s.ckeep && s.ckeep0 &&
                     s.cdelta && s.hist && s.hlist && s.hcounts && s.hcodes && s.hscratch &&
                     u64map_init(&s.labels, 1024) == 0
                 ? ANONKIT_OK
                 : ak_err_nomem(err);
    uint64_t top = 0;
    double top_cost = 0;
    for (uint32_t q = 0; q < c->nqi; q++) {
        top = inc_with_level(c, top, q, c->qi[q].height);
        top_cost += w ? w[q] : 1.0;
    }
    const size_t tail = s.k * 10 > LOCAL_TAIL_ROWS ? s.k * 10 : LOCAL_TAIL_ROWS;
    /* First with passes; when that leaves rows no class can take, again in one pass that keeps every remainder
     * (it publishes every row whenever the whole table satisfies the model). */
    for (int attempt = 0; rc == ANONKIT_OK && attempt < 2; attempt++) {
        double theta = LOCAL_THETA_START * top_cost;
        size_t nrows = n;
        for (size_t i = 0; i < n; i++) {
            rows[i] = (uint32_t)i;
            p->class_of[i] = PARTITION_SUPPRESSED;
        }
        p->nclasses = 0; /* (a restart drops the first attempt's classes) */
        s.ncls = 0;
        u64map_free(&s.labels);
        if (u64map_init(&s.labels, 1024) != 0) rc = ak_err_nomem(err);
        /* Passes over the rows left, from the top, while they satisfy the model together and the last pass
         * published some. */
        while (rc == ANONKIT_OK && nrows && rows_hold(&s, rows, nrows)) {
            s.leaving = attempt == 0 && nrows > tail;
            s.theta = theta;
            theta *= LOCAL_THETA_GROWTH;
            s.nleft = 0;
            memcpy(s.idx, rows, nrows * sizeof *rows);
            s.nstack = 0;
            rc = push(&s, 0, nrows, top, 0, err);
            if (rc == ANONKIT_OK) rc = run_pass(&s, err);
            s.st.passes++;
            if (rc < 0 || (s.nleft == nrows && !s.leaving)) break;
            memcpy(rows, s.left, s.nleft * sizeof *rows);
            nrows = s.nleft;
        }
        if (rc == ANONKIT_OK) rc = absorb(&s, rows, nrows);
        size_t left = 0;
        for (size_t i = 0; i < n; i++) left += p->class_of[i] == PARTITION_SUPPRESSED;
        if (!left || attempt == 1) break;
        for (size_t i = 0; i < n; i++) s.tmp[i] = (uint32_t)i;
        if (!rows_hold(&s, s.tmp, n)) break; /* the whole table fails: no attempt publishes more */
        memset(&s.st, 0, sizeof s.st);
        s.st.restarted = 1;
    }
    *st = s.st;
    split_free(&s);
    free(rows);
    p->suppressed = 0;
    for (size_t i = 0; i < n; i++) p->suppressed += p->class_of[i] == PARTITION_SUPPRESSED;
    return rc;
}
