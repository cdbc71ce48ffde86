/* local_split.c — local recoding by top-down splits (issue 28, part 3), for
 * every per-class privacy model.
 *
 * Owns: a search that starts from one class holding every row at the top of
 * every hierarchy and splits classes while that lowers the NCP, in the manner
 * of the top-down specialization of [Fung05] applied per class (each class
 * chooses its own next QI, so that rows end at their own levels: local
 * recoding). Lowering QI q of a class by one level sorts its rows into the
 * children (the values of q one level down); the children that satisfy the
 * privacy model become classes, and the rows of the others stay together at
 * the class's level of q as one remainder class (the relaxed partitioning of
 * [LeFevre06], with hierarchies). When that remainder fails the model it
 * takes rows from the children: under k-anonymity alone the cheaper of the
 * missing rows from one child that keeps k of its own or a whole child; under
 * the other models whole children, least NCP saved first, until it holds (all
 * of them: no split). The split of a class is the QI whose split saves the
 * most weighted NCP; then each part is split again.
 *
 * Soundness: a class holds rows whose labels are their own values
 * generalized along the hierarchies (a label covers its rows); the classes
 * are distinct label tuples, because two classes separate at one split, where
 * they get different values of q at one level, or a child level and the
 * remainder's level, and a remainder never lowers that q again (`frozen`);
 * every class is tested with the model itself (model_holds,
 * model_dist_holds), so any per-class model works: k, the l-diversity
 * variants, t-closeness, δ-disclosure, β-likeness. Every row is published
 * when the whole table satisfies the model (the first class), none when it
 * does not. */
#include "algo/incognito/local_internal.h"

#include <stdlib.h>
#include <string.h>

#include "common/progress.h"

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
    uint32_t *idx, *tmp;  /* rows, grouped by class; scratch of the same size */
    uint32_t *chof;       /* child of each row of the current class */
    uint32_t *cnt, *cpos; /* per child value: rows, fill position */
    uint32_t *touched;    /* children present, in order of first appearance */
    unsigned char *ckeep; /* per child value: a class of its own (1) or in the remainder (0) */
    double *cdelta;       /* per child value: NCP saved per row */
    uint32_t *hist, *hlist, *hcounts, *hcodes, *hscratch; /* sensitive histogram of a set of rows */
    split_task *stack;
    size_t nstack, capstack;
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

/* The weighted NCP saved by lowering QI q of class t by one level (0: no
 * split). With `apply` the split is made: its rows rearranged, the children
 * that keep their own class and the remainder pushed. */
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
    double gain = 0;
    for (uint32_t j = 0; j < nt; j++) {
        const uint32_t ch = s->touched[j];
        s->cdelta[ch] = pncp - a->ncp[l - 1][ch];
        if (s->ckeep[ch]) gain += s->cdelta[ch] * s->cnt[ch];
        else rem_n += s->cnt[ch];
    }
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
        if (*rc == ANONKIT_OK && rem < n)
            *rc = push(s, t->start + rem, n - rem, t->lv, t->frozen | (uint64_t)1 << q, err);
        s->st.splits++;
    }
    for (uint32_t j = 0; j < nt; j++) s->cnt[s->touched[j]] = 0;
    return gain;
}

/* Publishes class t as it is. */
static int publish(split_ctx *s, const split_task *t, ak_error *err)
{
    const inc_ctx *c = s->c;
    uint32_t lo[64], hi[64], nodes[64], id;
    const uint32_t r0 = s->idx[t->start];
    for (uint32_t q = 0; q < c->nqi; q++) {
        const uint32_t l = inc_level(c, t->lv, q), v = c->qi[q].gen[l][c->code0[q][r0]];
        lo[q] = c->qi[q].box_lo[l][v];
        hi[q] = c->qi[q].box_hi[l][v];
        nodes[q] = c->qi[q].node[l][v];
    }
    AK_CHECK(partition_add_class_nodes(s->p, lo, hi, nodes, t->n, &id, err));
    for (size_t i = 0; i < t->n; i++) s->p->class_of[s->idx[t->start + i]] = id;
    s->st.classes++;
    return ANONKIT_OK;
}

/* Splits the classes on the stack greedily (the QI that saves most first)
 * until none is left; a class no split improves is published. */
static int run(split_ctx *s, ak_error *err)
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
        if (best_q != UINT32_MAX) try_split(s, &t, best_q, 1, err, &rc);
        else rc = publish(s, &t, err);
    }
    return rc;
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
    free(s->cdelta);
    free(s->hist);
    free(s->hlist);
    free(s->hcounts);
    free(s->hcodes);
    free(s->hscratch);
    free(s->stack);
}

int inc_local_split(inc_ctx *c, const double *w, partition *p, inc_local_split_stats *st, ak_error *err)
{
    memset(st, 0, sizeof *st);
    const size_t n = c->nrows, nn = n ? n : 1;
    uint32_t maxcard = 1, nsens = 1;
    for (uint32_t q = 0; q < c->nqi; q++)
        if (c->qi[q].card[0] > maxcard) maxcard = c->qi[q].card[0];
    if (c->sens) nsens = (uint32_t)c->t->sensitive_dict.count + 1;
    split_ctx s = {.c = c, .p = p, .w = w, .k = c->m->k > 1 ? c->m->k : 1};
    s.idx = malloc(nn * sizeof *s.idx);
    s.tmp = malloc(nn * sizeof *s.tmp);
    s.chof = malloc(nn * sizeof *s.chof);
    s.cnt = calloc(maxcard, sizeof *s.cnt);
    s.cpos = malloc(maxcard * sizeof *s.cpos);
    s.touched = malloc(maxcard * sizeof *s.touched);
    s.ckeep = malloc(maxcard);
    s.cdelta = malloc(maxcard * sizeof *s.cdelta);
    s.hist = calloc(nsens, sizeof *s.hist);
    s.hlist = malloc(nsens * sizeof *s.hlist);
    s.hcounts = malloc(nsens * sizeof *s.hcounts);
    s.hcodes = malloc(nsens * sizeof *s.hcodes);
    s.hscratch = malloc(nsens * sizeof *s.hscratch);
    int rc = s.idx && s.tmp && s.chof && s.cnt && s.cpos && s.touched && s.ckeep && s.cdelta && s.hist && s.hlist &&
                     s.hcounts && s.hcodes && s.hscratch
                 ? ANONKIT_OK
                 : ak_err_nomem(err);
    for (size_t i = 0; rc == ANONKIT_OK && i < n; i++) {
        s.idx[i] = (uint32_t)i;
        p->class_of[i] = PARTITION_SUPPRESSED;
    }
    /* One class at the top of every hierarchy, when the whole table satisfies the model. */
    if (rc == ANONKIT_OK && n && rows_hold(&s, s.idx, n)) {
        uint64_t top = 0;
        for (uint32_t q = 0; q < c->nqi; q++) top = inc_with_level(c, top, q, c->qi[q].height);
        rc = push(&s, 0, n, top, 0, err);
        if (rc == ANONKIT_OK) rc = run(&s, err);
    }
    *st = s.st;
    split_free(&s);
    p->suppressed = 0;
    for (size_t i = 0; i < n; i++) p->suppressed += p->class_of[i] == PARTITION_SUPPRESSED;
    return rc;
}
