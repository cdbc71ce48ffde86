/* local_split.c — local recoding by top-down specialization with a remainder
 * class (issue 28, part 3).
 *
 * Owns: the search that starts from one class holding every row at the top
 * of every hierarchy and splits classes while that lowers the NCP, in the
 * manner of the top-down specialization of [Fung05] applied per class (each
 * class chooses its own next QI, so that rows end at their own levels: local
 * recoding), with the remainder idea of Mondrian's relaxed partitioning
 * [LeFevre06]: lowering QI q of a class by one level sorts its rows into the
 * children (the values of q one level down); the children that satisfy the
 * privacy model become classes, the rows of the others stay together at the
 * class's level of q as one remainder class. When that remainder fails the
 * model it takes rows from the children: under k-anonymity alone the
 * cheapest of (the missing rows from one child that keeps k of its own, a
 * whole child), under the other models whole children, least NCP gain
 * first, until it holds (all children: no split). The QI whose split saves
 * the most NCP (weighted) is lowered; then each part is split again.
 *
 * Soundness: every class holds rows whose labels are their own values
 * generalized along the hierarchies (a label covers its rows); the classes
 * are distinct label tuples, because two classes separate at one split,
 * where they get either different values of q at one level or a child level
 * and the remainder's level, and a remainder never lowers that q again
 * (`frozen`); every class is tested with the privacy model itself
 * (model_holds, model_dist_holds), so any per-class model works: k, the
 * l-diversity variants, t-closeness, δ-disclosure, β-likeness. No row is
 * suppressed unless the whole table fails the model (then every row is). */
#include "algo/incognito/local_internal.h"

#include <stdlib.h>
#include <string.h>
#include <math.h>

#include "common/progress.h"

/* A class waiting to be split: rows idx[start .. start+n), its levels, and
 * the QIs it may not lower (bit q). */
typedef struct split_task {
    size_t start, n;
    uint64_t lv;
    uint64_t frozen;
} split_task;

struct inc_split {
    inc_ctx *c;
    partition *p;
    const double *w;
    uint64_t k;
    uint32_t *idx, *tmp;  /* rows, grouped by class; scratch of the same size */
    uint32_t *chof;       /* child of each row of the current class */
    uint32_t *cnt, *cpos; /* per child value: rows, fill position */
    uint32_t *touched;    /* children present, in order of first appearance */
    unsigned char *ckeep; /* per child value: a class of its own (1) or in the remainder (0) */
    unsigned char *ckeep0; /* the same before the remainder took children */
    double *cdelta;       /* per child value: NCP saved per row */
    uint32_t *hist, *hlist, *hcounts, *hcodes, *hscratch; /* sensitive histogram of a set of rows */
    split_task *stack;
    size_t nstack, capstack;
    const size_t *map;    /* table row of each row of c, NULL: the same */
    double lam;           /* >= 0: failing children may leave for a later pass, each costing lam x the class's row */
    uint32_t *left;       /* rows left for the next pass */
    size_t nleft;
    int dry;              /* rollouts: left rows add lam_dry x their row cost to dry_cost */
    double dry_cost, lam_dry, row_cost;
    int leave;            /* the last try_split left its remainder (1) rather than keeping it */
    size_t rollout_min;   /* classes of at least this many rows are split by rollouts (SIZE_MAX: none) */
    inc_local_split_stats st;
};
typedef struct inc_split split_ctx;

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

/* The remainder of a split: the rows of the children with ckeep 0, gathered
 * in tmp (children in touched order) after the kept children; with `borrow`
 * rows of child `from` moved to it. Returns the remainder's first position. */
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
        if (s->ckeep[ch] && ch == from && borrow) { /* the first `borrow` rows of `from` go to the remainder */
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

/* The NCP saved by lowering QI q of class t by one level (0: no split), with
 * the split's choice left in chof / cnt / touched / ckeep and *from / *borrow.
 * With `apply` the rows are rearranged and the parts pushed. */
static double try_split(split_ctx *s, const split_task *t, uint32_t q, int apply, ak_error *err, int *rc)
{
    inc_ctx *c = s->c;
    const inc_qi *a = &c->qi[q];
    const uint32_t l = inc_level(c, t->lv, q);
    uint32_t *rows = s->idx + t->start;
    const size_t n = t->n;
    const uint32_t *gen = a->gen[l - 1], *code = c->code0[q];
    const uint32_t parent = a->gen[l][code[rows[0]]];
    const double wq = s->w ? s->w[q] : 1.0, pncp = a->ncp[l][parent];
    uint32_t nt = 0;
    for (size_t i = 0; i < n; i++) {
        const uint32_t ch = gen[code[rows[i]]];
        s->chof[i] = ch;
        if (!s->cnt[ch]++) s->touched[nt++] = ch;
    }
    /* Which children satisfy the model on their own. */
    size_t rem_n = 0;
    double gain = 0;
    if (c->sens) { /* group the rows by child to test each */
        for (uint32_t j = 0; j < nt; j++) s->ckeep[s->touched[j]] = 1;
        const size_t rem = arrange(s, rows, n, nt, UINT32_MAX, 0);
        for (uint32_t j = 0, at = 0; j < nt; j++) {
            const uint32_t ch = s->touched[j];
            s->ckeep[ch] = (unsigned char)rows_hold(s, s->tmp + at, s->cnt[ch]);
            at += s->cnt[ch];
        }
        (void)rem;
    } else {
        for (uint32_t j = 0; j < nt; j++) s->ckeep[s->touched[j]] = s->cnt[s->touched[j]] >= s->k;
    }
    for (uint32_t j = 0; j < nt; j++) {
        const uint32_t ch = s->touched[j];
        s->cdelta[ch] = pncp - a->ncp[l - 1][ch];
        if (s->ckeep[ch]) gain += s->cdelta[ch] * s->cnt[ch];
        else rem_n += s->cnt[ch];
    }
    const double gain0 = gain;
    const size_t rem_n0 = rem_n;
    uint32_t kept0 = 0;
    for (uint32_t j = 0; j < nt; j++) {
        s->ckeep0[s->touched[j]] = s->ckeep[s->touched[j]];
        kept0 += s->ckeep[s->touched[j]];
    }
    uint32_t from = UINT32_MAX, borrow = 0;
    if (rem_n > 0 && !c->sens) {
        /* k alone: the remainder needs k - rem_n more rows, from the child
         * that loses least by giving them (or by joining whole). */
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
            if (from == UINT32_MAX) gain = 0;
            else {
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
        /* Other models: whole children join the remainder, least gain first, until it holds. */
        for (;;) {
            for (uint32_t j = 0; j < nt; j++) s->ckeep[s->touched[j]] ^= 1; /* the remainder's children */
            const size_t start = arrange(s, rows, n, nt, UINT32_MAX, 0);
            for (uint32_t j = 0; j < nt; j++) s->ckeep[s->touched[j]] ^= 1;
            (void)start;
            /* arrange put the remainder's children first now: their rows are tmp[0 .. rem_n) */
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
    s->leave = 0;
    if (s->lam >= 0 && rem_n0 > 0) {
        double row = 0;
        for (uint32_t r = 0; r < c->nqi; r++) {
            const uint32_t lr = inc_level(c, t->lv, r);
            row += (s->w ? s->w[r] : 1.0) * c->qi[r].ncp[lr][c->qi[r].gen[lr][c->code0[r][rows[0]]]];
        }
        const double leave = wq * gain0 - s->lam * (double)rem_n0 * row;
        s->row_cost = row;
        if (leave > gain && kept0) {
            gain = leave;
            s->leave = 1;
            for (uint32_t j = 0; j < nt; j++) s->ckeep[s->touched[j]] = s->ckeep0[s->touched[j]];
            from = UINT32_MAX;
            borrow = 0;
        }
    }
    {
        static int crit = -1;
        if (crit < 0) crit = getenv("AK_CRIT") ? atoi(getenv("AK_CRIT")) : 0;
        uint32_t kept = 0;
        for (uint32_t j = 0; j < nt; j++) kept += s->ckeep[s->touched[j]];
        if (!apply && gain > 0 && crit == 1) gain /= log2(kept + 1.0);
        if (!apply && gain > 0 && crit == 2) gain /= kept;
        if (!apply && gain > 0 && crit == 3) gain /= sqrt(kept);
    }
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
        if (*rc == ANONKIT_OK && rem < n && s->leave && s->dry) {
            s->dry_cost += s->lam_dry * (double)(n - rem) * s->row_cost;
        } else if (*rc == ANONKIT_OK && rem < n && s->leave) {
            for (size_t i = rem; i < n; i++) s->left[s->nleft++] = rows[i];
        } else if (*rc == ANONKIT_OK && rem < n)
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
    for (size_t i = 0; i < t->n; i++) {
        const uint32_t r = s->idx[t->start + i];
        s->p->class_of[s->map ? s->map[r] : r] = id;
    }
    s->st.classes++;
    return ANONKIT_OK;
}

int inc_split_new(inc_ctx *c, const double *w, partition *p, inc_split **out, ak_error *err)
{
    *out = NULL;
    const size_t n = c->nrows;
    uint32_t maxcard = 1, nsens = 1;
    for (uint32_t q = 0; q < c->nqi; q++)
        if (c->qi[q].card[0] > maxcard) maxcard = c->qi[q].card[0];
    if (c->sens) nsens = (uint32_t)c->t->sensitive_dict.count + 1;
    split_ctx *s = calloc(1, sizeof *s);
    if (!s) return ak_err_nomem(err);
    *s = (split_ctx){.c = c, .p = p, .w = w, .k = c->m->k > 1 ? c->m->k : 1};
    s->rollout_min = getenv("AK_RMIN") ? (size_t)atoll(getenv("AK_RMIN")) : SIZE_MAX;
    const size_t nn = n ? n : 1;
    s->idx = malloc(nn * sizeof *s->idx);
    s->tmp = malloc(nn * sizeof *s->tmp);
    s->chof = malloc(nn * sizeof *s->chof);
    s->cnt = calloc(maxcard, sizeof *s->cnt);
    s->cpos = malloc(maxcard * sizeof *s->cpos);
    s->touched = malloc(maxcard * sizeof *s->touched);
    s->ckeep = malloc(maxcard);
    s->ckeep0 = malloc(maxcard);
    s->left = malloc(nn * sizeof *s->left);
    s->lam = getenv("AK_LAM") ? atof(getenv("AK_LAM")) : -1;
    s->lam_dry = getenv("AK_LAMD") ? atof(getenv("AK_LAMD")) : 1;
    s->cdelta = malloc(maxcard * sizeof *s->cdelta);
    s->hist = calloc(nsens, sizeof *s->hist);
    s->hlist = malloc(nsens * sizeof *s->hlist);
    s->hcounts = malloc(nsens * sizeof *s->hcounts);
    s->hcodes = malloc(nsens * sizeof *s->hcodes);
    s->hscratch = malloc(nsens * sizeof *s->hscratch);
    if (!(s->ckeep0 && s->left && s->idx && s->tmp && s->chof && s->cnt && s->cpos && s->touched && s->ckeep && s->cdelta && s->hist &&
          s->hlist && s->hcounts && s->hcodes && s->hscratch)) {
        inc_split_free(s);
        return ak_err_nomem(err);
    }
    *out = s;
    return ANONKIT_OK;
}

void inc_split_free(inc_split *s)
{
    if (!s) return;
    free(s->idx);
    free(s->tmp);
    free(s->chof);
    free(s->cnt);
    free(s->cpos);
    free(s->touched);
    free(s->ckeep);
    free(s->ckeep0);
    free(s->left);
    free(s->cdelta);
    free(s->hist);
    free(s->hlist);
    free(s->hcounts);
    free(s->hcodes);
    free(s->hscratch);
    free(s->stack);
    free(s);
}

const inc_local_split_stats *inc_split_stats(const inc_split *s) { return &s->st; }

/* The weighted NCP sum of class t published as it is. */
static double class_cost(const split_ctx *s, const split_task *t)
{
    const inc_ctx *c = s->c;
    const uint32_t r0 = s->idx[t->start];
    double sum = 0;
    for (uint32_t q = 0; q < c->nqi; q++) {
        const uint32_t l = inc_level(c, t->lv, q);
        sum += (s->w ? s->w[q] : 1.0) * c->qi[q].ncp[l][c->qi[q].gen[l][c->code0[q][r0]]];
    }
    return sum * (double)t->n;
}

/* The greedy step for class t: the gain of lowering each QI (gain[q], 0 when
 * it cannot be lowered or saves nothing); returns the best QI or UINT32_MAX. */
static uint32_t gains(split_ctx *s, const split_task *t, double *gain, ak_error *err, int *rc)
{
    const inc_ctx *c = s->c;
    uint32_t best_q = UINT32_MAX;
    double best = 0;
    for (uint32_t q = 0; q < c->nqi && *rc == ANONKIT_OK; q++) {
        gain[q] = 0;
        if (t->frozen >> q & 1 || inc_level(c, t->lv, q) == 0) continue;
        gain[q] = try_split(s, t, q, 0, err, rc);
        if (gain[q] > best) {
            best = gain[q];
            best_q = q;
        }
    }
    return best_q;
}

/* Splits the classes on the stack above `base` greedily (the best gain
 * first) until none is left; publishes them, or with `cost` only adds up
 * their NCP (a rollout). */
static int greedy_run(split_ctx *s, size_t base, double *cost, ak_error *err)
{
    int rc = ANONKIT_OK;
    double gain[64];
    while (rc == ANONKIT_OK && s->nstack > base) {
        const split_task t = s->stack[--s->nstack];
        if ((s->st.tasks++ & 1023) == 0 && (rc = ak_progress_poll(s->c->progress, err)) < 0) break;
        const uint32_t q = gains(s, &t, gain, err, &rc);
        if (rc < 0) break;
        if (q != UINT32_MAX) try_split(s, &t, q, 1, err, &rc);
        else if (cost) *cost += class_cost(s, &t);
        else rc = publish(s, &t, err);
    }
    return rc;
}

/* Splits the classes on the stack by rollouts: for each class, every QI
 * that saves NCP is tried by splitting and finishing the parts greedily
 * (greedy_run, not published), and the QI whose finished parts cost least
 * is lowered (or none, when the class as it is costs least); a rollout of
 * the greedy policy (Bertsekas et al., rollout algorithms), which is never
 * worse than the greedy split itself. Classes of fewer than s->rollout_min
 * rows are split greedily. */
static int rollout_run(split_ctx *s, ak_error *err)
{
    int rc = ANONKIT_OK;
    double gain[64];
    while (rc == ANONKIT_OK && s->nstack) {
        const split_task t = s->stack[--s->nstack];
        if ((s->st.tasks++ & 1023) == 0 && (rc = ak_progress_poll(s->c->progress, err)) < 0) break;
        const uint32_t greedy_q = gains(s, &t, gain, err, &rc);
        if (rc < 0) break;
        if (greedy_q == UINT32_MAX) {
            rc = publish(s, &t, err);
            continue;
        }
        uint32_t best_q = greedy_q;
        if (t.n >= s->rollout_min) {
            double best = class_cost(s, &t);
            best_q = UINT32_MAX;
            for (uint32_t q = 0; q < s->c->nqi && rc == ANONKIT_OK; q++) {
                if (!(gain[q] > 0)) continue;
                const size_t base = s->nstack;
                double cost = 0;
                s->dry = 1;
                s->dry_cost = 0;
                try_split(s, &t, q, 1, err, &rc);
                if (rc == ANONKIT_OK) rc = greedy_run(s, base, &cost, err);
                s->dry = 0;
                cost += s->dry_cost;
                if (rc == ANONKIT_OK && cost < best) {
                    best = cost;
                    best_q = q;
                }
            }
            if (rc < 0) break;
        }
        if (best_q == UINT32_MAX) rc = publish(s, &t, err);
        else try_split(s, &t, best_q, 1, err, &rc);
    }
    return rc;
}

int inc_split_class(inc_split *s, const uint32_t *rows, size_t n, uint64_t lv, const size_t *map, ak_error *err)
{
    s->map = map;
    if (rows != s->idx) memcpy(s->idx, rows, n * sizeof *rows);
    s->nstack = 0;
    AK_CHECK(n ? push(s, 0, n, lv, 0, err) : ANONKIT_OK);
    return s->rollout_min == SIZE_MAX ? greedy_run(s, 0, NULL, err) : rollout_run(s, err);
}

int inc_local_split(inc_ctx *c, const double *w, partition *p, inc_local_split_stats *st, ak_error *err)
{
    memset(st, 0, sizeof *st);
    const size_t n = c->nrows;
    for (size_t i = 0; i < n; i++) p->class_of[i] = PARTITION_SUPPRESSED;
    inc_split *s;
    AK_CHECK(inc_split_new(c, w, p, &s, err));
    int rc = ANONKIT_OK;
    uint32_t *rows = malloc((n ? n : 1) * sizeof *rows);
    if (!rows) rc = ak_err_nomem(err);
    for (size_t i = 0; rc == ANONKIT_OK && i < n; i++) rows[i] = (uint32_t)i;
    size_t nrows = n;
    const double lam = s->lam;
    const size_t tail = getenv("AK_TAILN") ? (size_t)atoll(getenv("AK_TAILN")) : 0;
    while (rc == ANONKIT_OK && nrows && rows_hold(s, rows, nrows)) {
        uint64_t top = 0;
        for (uint32_t q = 0; q < c->nqi; q++) top = inc_with_level(c, top, q, c->qi[q].height);
        s->lam = nrows > tail ? lam : -1;
        s->nleft = 0;
        rc = inc_split_class(s, rows, nrows, top, NULL, err);
        s->st.passes++;
        memcpy(rows, s->left, s->nleft * sizeof *rows);
        nrows = s->nleft;
    }
    free(rows);
    *st = s->st;
    inc_split_free(s);
    p->suppressed = 0;
    for (size_t i = 0; i < n; i++) p->suppressed += p->class_of[i] == PARTITION_SUPPRESSED;
    return rc;
}
