/* classifier.c — the C4.5-style decision tree of classifier.h and the
 * classification error of [Wang06] §6.
 *
 * The tree is grown with an explicit work stack over one permutation of the
 * training rows (a node owns a slice, reordered in place when it splits).
 * Nodes are appended as they are created, so every node's descendants come
 * after it in the node array: collapsing and pruning walk the array backwards
 * and see children before parents, without recursion. */
#include "metrics/classifier.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/stats.h"

#define NONE UINT32_MAX
#define EPSILON 1e-3 /* C4.5's Epsilon */

typedef struct cnode {
    uint32_t attr;           /* NONE: a leaf */
    uint32_t label;          /* majority class of its training rows */
    uint32_t first, nbranch; /* its branches: branch[first .. first + nbranch) */
    double threshold;        /* numeric attribute: value <= threshold takes branch 0 */
    size_t n, errors;        /* training rows; those not of class `label` */
} cnode;

typedef struct cbranch {
    uint32_t value; /* categorical: the category (ascending); numeric: 0 (<=) or 1 (>) */
    uint32_t child; /* node index */
} cbranch;

struct ctree {
    cnode *node;
    size_t nnodes, cap_nodes;
    cbranch *branch;
    size_t nbranches, cap_branches;
    size_t leaves; /* reachable leaves once pruned */
};

typedef struct numval {
    double v;
    uint32_t y;
} numval;

/* One pending node: its index and its slice of the row permutation. */
typedef struct work {
    uint32_t node;
    size_t b, e;
} work;

/* Per attribute, what the best split of the current node on it would be. */
typedef struct attr_eval {
    int possible;
    double gain, info, threshold;
} attr_eval;

typedef struct grower {
    const ctree_data *d;
    uint32_t min_leaf;
    ctree *t;
    uint32_t *rows;    /* permutation of the training rows */
    uint32_t *scratch; /* as many: reordering */
    size_t *vcount;    /* per category: rows of the node */
    size_t *vstart;    /* per category: next slot when grouping */
    uint32_t *touched; /* categories present at the node, ascending */
    size_t *ncount;    /* per label: rows of the node */
    size_t *lcount;    /* per label: rows of one branch */
    numval *pairs;     /* a numeric attribute's (value, label) at the node */
    attr_eval *eval;   /* per attribute */
    work *stack;
    size_t nstack, cap_stack;
    ak_error *err;
} grower;

static int grow_array(void **arr, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap) return 0;
    size_t cap2 = *cap ? *cap * 2 : 64;
    while (cap2 < need) cap2 *= 2;
    void *p = realloc(*arr, cap2 * size);
    if (!p) return -1;
    *arr = p;
    *cap = cap2;
    return 0;
}
#define RESERVE(arr, cap, n) grow_array((void **)&(arr), &(cap), (n), sizeof *(arr))

static int cmp_u32(const void *a, const void *b)
{
    const uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static int cmp_numval(const void *a, const void *b)
{
    const numval *x = a, *y = b;
    if (x->v != y->v) return x->v < y->v ? -1 : 1;
    return (x->y > y->y) - (x->y < y->y);
}

/* n * entropy of a histogram of n rows: n log2 n - sum_y n_y log2 n_y. */
static double n_info(const size_t *count, uint32_t k, size_t n)
{
    double s = ak_xlog2x((double)n);
    for (uint32_t y = 0; y < k; y++) s -= ak_xlog2x((double)count[y]);
    return s;
}

/* Groups the node's rows [b, e) by their category of attribute a: fills
 * touched[0..nt) (ascending) and vcount, and writes the rows to scratch[b..e)
 * category by category. Returns nt; the caller clears vcount. */
static size_t group_by_category(grower *g, uint32_t a, size_t b, size_t e)
{
    const uint32_t *code = g->d->cat[a];
    size_t nt = 0;
    for (size_t i = b; i < e; i++) {
        const uint32_t v = code[g->rows[i]];
        if (g->vcount[v]++ == 0) g->touched[nt++] = v;
    }
    qsort(g->touched, nt, sizeof *g->touched, cmp_u32);
    size_t at = b;
    for (size_t j = 0; j < nt; j++) {
        g->vstart[g->touched[j]] = at;
        at += g->vcount[g->touched[j]];
    }
    for (size_t i = b; i < e; i++) {
        const uint32_t r = g->rows[i];
        g->scratch[g->vstart[code[r]]++] = r;
    }
    return nt;
}

static void clear_counts(grower *g, size_t nt)
{
    for (size_t j = 0; j < nt; j++) g->vcount[g->touched[j]] = 0;
}

/* Gain and split information of the multiway split of [b, e) on categorical
 * attribute a (C4.5's EvalDiscreteAtt): possible when at least two
 * categories hold min_leaf rows. base = n * info of the node. */
static void eval_categorical(grower *g, uint32_t a, size_t b, size_t e, double base, attr_eval *out)
{
    const ctree_data *d = g->d;
    const size_t n = e - b, nt = group_by_category(g, a, b, e);
    size_t reasonable = 0, at = b;
    double rest = 0, split = ak_xlog2x((double)n);
    for (size_t j = 0; j < nt; j++) {
        const size_t m = g->vcount[g->touched[j]];
        reasonable += m >= g->min_leaf;
        for (size_t i = at; i < at + m; i++) g->lcount[d->label[g->scratch[i]]]++;
        rest += ak_xlog2x((double)m);
        for (size_t i = at; i < at + m; i++) {
            const uint32_t y = d->label[g->scratch[i]];
            if (g->lcount[y]) {
                rest -= ak_xlog2x((double)g->lcount[y]);
                g->lcount[y] = 0;
            }
        }
        split -= ak_xlog2x((double)m);
        at += m;
    }
    clear_counts(g, nt);
    out->possible = reasonable >= 2;
    out->gain = (base - rest) / (double)n;
    out->info = split / (double)n;
    out->threshold = 0;
}

/* The best threshold of numeric attribute a over [b, e) by information gain,
 * charged log2(cut points tried) / n (C4.5 release 8's EvalContinuousAtt). */
static void eval_numeric(grower *g, uint32_t a, size_t b, size_t e, double base, attr_eval *out)
{
    const ctree_data *d = g->d;
    const uint32_t k = d->nlabels;
    const size_t n = e - b;
    for (size_t i = 0; i < n; i++) {
        const uint32_t r = g->rows[b + i];
        g->pairs[i] = (numval){d->num[a][r], d->label[r]};
    }
    qsort(g->pairs, n, sizeof *g->pairs, cmp_numval);
    double min_split = 0.1 * (double)n / (double)(k ? k : 1);
    if (min_split <= g->min_leaf) min_split = g->min_leaf;
    else if (min_split > 25) min_split = 25;
    size_t tries = 0, best_i = 0;
    double best = 0;
    out->possible = 0;
    for (size_t i = 0; i + 1 < n; i++) {
        g->lcount[g->pairs[i].y]++;
        const size_t nl = i + 1, nr = n - nl;
        if ((double)nl < min_split) continue;
        if ((double)nr < min_split) break;
        if (!(g->pairs[i].v < g->pairs[i + 1].v)) continue;
        double rest = n_info(g->lcount, k, nl) + ak_xlog2x((double)nr);
        for (uint32_t y = 0; y < k; y++) rest -= ak_xlog2x((double)(g->ncount[y] - g->lcount[y]));
        const double gain = (base - rest) / (double)n;
        if (!tries || gain > best) {
            best = gain;
            best_i = i;
        }
        tries++;
    }
    memset(g->lcount, 0, k * sizeof *g->lcount);
    if (!tries) return;
    const double charged = best - log2((double)tries) / (double)n;
    if (!(charged > 0)) return;
    const size_t nl = best_i + 1;
    out->possible = 1;
    out->gain = charged;
    out->info = (ak_xlog2x((double)n) - ak_xlog2x((double)nl) - ak_xlog2x((double)(n - nl))) / (double)n;
    out->threshold = g->pairs[best_i].v;
}

/* A new node (a leaf until it is split) and a work item for its rows. */
static int push_node(grower *g, size_t b, size_t e, uint32_t *id)
{
    ctree *t = g->t;
    if (t->nnodes >= NONE - 1 || RESERVE(t->node, t->cap_nodes, t->nnodes + 1) != 0 ||
        RESERVE(g->stack, g->cap_stack, g->nstack + 1) != 0)
        return ak_err_nomem(g->err);
    *id = (uint32_t)t->nnodes;
    t->node[t->nnodes++] = (cnode){NONE, 0, 0, 0, 0, e - b, 0};
    g->stack[g->nstack++] = (work){*id, b, e};
    return 0;
}

/* Processes one node: its majority class, and its split when C4.5 makes one. */
static int expand(grower *g, work w)
{
    const ctree_data *d = g->d;
    const uint32_t k = d->nlabels;
    const size_t n = w.e - w.b;
    memset(g->ncount, 0, k * sizeof *g->ncount);
    for (size_t i = w.b; i < w.e; i++) g->ncount[d->label[g->rows[i]]]++;
    uint32_t label = 0;
    for (uint32_t y = 1; y < k; y++)
        if (g->ncount[y] > g->ncount[label]) label = y;
    cnode *nd = &g->t->node[w.node];
    nd->label = label;
    nd->errors = n - (k ? g->ncount[label] : 0);
    if (nd->errors == 0 || n < 2 * (size_t)g->min_leaf) return 0;
    /* C4.5's choice: the highest gain ratio among the attributes whose gain is at least the average */
    const double base = n_info(g->ncount, k, n);
    double average = 0;
    size_t possible = 0;
    for (uint32_t a = 0; a < d->nattrs; a++) {
        attr_eval *ev = &g->eval[a];
        if (d->numeric[a]) eval_numeric(g, a, w.b, w.e, base, ev);
        else eval_categorical(g, a, w.b, w.e, base, ev);
        if (ev->possible) {
            average += ev->gain;
            possible++;
        }
    }
    if (!possible) return 0;
    average /= (double)possible;
    uint32_t best = NONE;
    double best_ratio = -EPSILON;
    for (uint32_t a = 0; a < d->nattrs; a++) {
        const attr_eval *ev = &g->eval[a];
        if (!ev->possible || ev->gain < average - EPSILON || !(ev->info > EPSILON)) continue;
        const double ratio = ev->gain / ev->info;
        if (ratio > best_ratio) {
            best_ratio = ratio;
            best = a;
        }
    }
    if (best == NONE) return 0;
    /* split: reorder the slice branch by branch, one child per branch */
    ctree *t = g->t;
    size_t nt, *sizes;
    if (d->numeric[best]) {
        const double thr = g->eval[best].threshold;
        size_t nl = 0;
        for (size_t i = w.b; i < w.e; i++) nl += d->num[best][g->rows[i]] <= thr;
        size_t left = w.b, right = w.b + nl;
        for (size_t i = w.b; i < w.e; i++) {
            const uint32_t r = g->rows[i];
            g->scratch[d->num[best][r] <= thr ? left++ : right++] = r;
        }
        g->touched[0] = 0;
        g->touched[1] = 1;
        g->vcount[0] = nl;
        g->vcount[1] = n - nl;
        nt = 2;
        sizes = g->vcount;
        t->node[w.node].threshold = thr;
    } else {
        nt = group_by_category(g, best, w.b, w.e);
        sizes = g->vcount;
    }
    memcpy(g->rows + w.b, g->scratch + w.b, n * sizeof *g->rows);
    int rc = 0;
    if (t->nbranches + nt >= NONE || RESERVE(t->branch, t->cap_branches, t->nbranches + nt) != 0)
        rc = ak_err_nomem(g->err);
    const size_t first = t->nbranches;
    size_t at = w.b;
    for (size_t j = 0; rc == 0 && j < nt; j++) {
        const size_t m = sizes[g->touched[j]];
        uint32_t child;
        if ((rc = push_node(g, at, at + m, &child)) < 0) break;
        t->branch[t->nbranches++] = (cbranch){g->touched[j], child};
        at += m;
    }
    if (d->numeric[best]) g->vcount[0] = g->vcount[1] = 0;
    else clear_counts(g, nt);
    if (rc < 0) return rc;
    nd = &t->node[w.node];
    nd->attr = best;
    nd->first = (uint32_t)first;
    nd->nbranch = (uint32_t)nt;
    return 0;
}

/* Interpolation coefficient of C4.5's AddErrs for confidence cf: z^2 of the
 * normal deviate, interpolated in C4.5's table. */
static double pruning_coeff(double cf)
{
    static const double conf[] = {0, 0.001, 0.005, 0.01, 0.05, 0.10, 0.20, 0.40, 1.00};
    static const double dev[] = {4.0, 3.09, 2.58, 2.33, 1.65, 1.28, 0.84, 0.25, 0.00};
    int i = 1;
    while (i < 8 && cf > conf[i]) i++;
    const double z = dev[i - 1] + (dev[i] - dev[i - 1]) * (cf - conf[i - 1]) / (conf[i] - conf[i - 1]);
    return z * z;
}

/* C4.5's AddErrs: the extra errors to add to e observed errors among n rows
 * for the upper limit of the confidence interval at cf (pessimistic pruning). */
static double add_errs(double n, double e, double cf, double coeff)
{
    if (n <= 0) return 0;
    if (e < 1e-6) return n * (1 - exp(log(cf) / n));
    if (e < 0.9999) {
        const double v0 = n * (1 - exp(log(cf) / n));
        return v0 + e * (add_errs(n, 1.0, cf, coeff) - v0);
    }
    if (e + 0.5 >= n) return 0.67 * (n - e);
    const double pr =
        (e + 0.5 + coeff / 2 + sqrt(coeff * ((e + 0.5) * (1 - (e + 0.5) / n) + coeff / 4))) / (n + coeff);
    return n * pr - e;
}

/* Collapses subtrees that do not reduce training errors, then (cf > 0)
 * replaces subtrees by leaves when the leaf's pessimistic error estimate is at
 * most the subtree's plus 0.1. Children come after parents in t->node, so a
 * backward walk sees every child first. */
static int prune(ctree *t, double cf, ak_error *err)
{
    double *sum = malloc((t->nnodes ? t->nnodes : 1) * sizeof *sum);
    if (!sum) return ak_err_nomem(err);
    for (size_t i = t->nnodes; i-- > 0;) {
        cnode *nd = &t->node[i];
        double below = 0;
        for (uint32_t j = 0; nd->attr != NONE && j < nd->nbranch; j++) below += sum[t->branch[nd->first + j].child];
        if (nd->attr != NONE && below >= (double)nd->errors - EPSILON) nd->attr = NONE;
        sum[i] = nd->attr == NONE ? (double)nd->errors : below;
    }
    if (cf > 0) {
        const double coeff = pruning_coeff(cf);
        for (size_t i = t->nnodes; i-- > 0;) {
            cnode *nd = &t->node[i];
            const double leaf = (double)nd->errors + add_errs((double)nd->n, (double)nd->errors, cf, coeff);
            if (nd->attr == NONE) {
                sum[i] = leaf;
                continue;
            }
            double below = 0;
            for (uint32_t j = 0; j < nd->nbranch; j++) below += sum[t->branch[nd->first + j].child];
            if (leaf <= below + 0.1) {
                nd->attr = NONE;
                sum[i] = leaf;
            } else {
                sum[i] = below;
            }
        }
    }
    /* count the leaves still reachable from the root (sum[] now marks reachable nodes) */
    t->leaves = 0;
    for (size_t i = 0; i < t->nnodes; i++) sum[i] = i == 0;
    for (size_t i = 0; i < t->nnodes; i++) {
        const cnode *nd = &t->node[i];
        if (sum[i] == 0) continue;
        if (nd->attr == NONE) t->leaves++;
        else
            for (uint32_t j = 0; j < nd->nbranch; j++) sum[t->branch[nd->first + j].child] = 1;
    }
    free(sum);
    return 0;
}

void ctree_free(ctree *t)
{
    if (!t) return;
    free(t->node);
    free(t->branch);
    free(t);
}

int ctree_grow(const ctree_data *d, const uint32_t *rows, size_t nrows, const ctree_params *p, ctree **out,
               ak_error *err)
{
    *out = NULL;
    if (!(p->cf >= 0 && p->cf < 1))
        return ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0, "the pruning confidence must be in [0, 1), not %g", p->cf);
    uint32_t widest = 2;
    for (uint32_t a = 0; a < d->nattrs; a++)
        if (!d->numeric[a] && d->ncat[a] > widest) widest = d->ncat[a];
    const uint32_t k = d->nlabels ? d->nlabels : 1;
    const size_t n = nrows ? nrows : 1;
    grower g = {.d = d, .min_leaf = p->min_leaf ? p->min_leaf : 2, .err = err};
    g.t = calloc(1, sizeof *g.t);
    g.rows = malloc(n * sizeof *g.rows);
    g.scratch = malloc(n * sizeof *g.scratch);
    g.vcount = calloc(widest, sizeof *g.vcount);
    g.vstart = malloc(widest * sizeof *g.vstart);
    g.touched = malloc(widest * sizeof *g.touched);
    g.ncount = calloc(k, sizeof *g.ncount);
    g.lcount = calloc(k, sizeof *g.lcount);
    g.pairs = malloc(n * sizeof *g.pairs);
    g.eval = malloc((d->nattrs ? d->nattrs : 1) * sizeof *g.eval);
    int rc = 0;
    if (!g.t || !g.rows || !g.scratch || !g.vcount || !g.vstart || !g.touched || !g.ncount || !g.lcount || !g.pairs ||
        !g.eval)
        rc = ak_err_nomem(err);
    if (rc == 0) {
        memcpy(g.rows, rows, nrows * sizeof *rows);
        uint32_t root;
        rc = push_node(&g, 0, nrows, &root);
    }
    while (rc == 0 && g.nstack) rc = expand(&g, g.stack[--g.nstack]);
    if (rc == 0) rc = prune(g.t, p->cf, err);
    free(g.rows);
    free(g.scratch);
    free(g.vcount);
    free(g.vstart);
    free(g.touched);
    free(g.ncount);
    free(g.lcount);
    free(g.pairs);
    free(g.eval);
    free(g.stack);
    if (rc < 0) {
        ctree_free(g.t);
        return rc;
    }
    *out = g.t;
    return 0;
}

uint32_t ctree_classify(const ctree *t, const ctree_data *d, size_t row)
{
    uint32_t i = 0;
    for (;;) {
        const cnode *nd = &t->node[i];
        if (nd->attr == NONE) return nd->label;
        const cbranch *br = t->branch + nd->first;
        if (d->numeric[nd->attr]) {
            i = br[d->num[nd->attr][row] > nd->threshold].child;
            continue;
        }
        const uint32_t v = d->cat[nd->attr][row];
        uint32_t lo = 0, hi = nd->nbranch;
        while (lo < hi) {
            const uint32_t mid = lo + (hi - lo) / 2;
            if (br[mid].value < v) lo = mid + 1;
            else hi = mid;
        }
        if (lo == nd->nbranch || br[lo].value != v) return nd->label; /* no training row took this branch */
        i = br[lo].child;
    }
}

size_t ctree_leaves(const ctree *t) { return t->leaves; }

uint32_t ctree_root_attr(const ctree *t) { return t->nnodes ? t->node[0].attr : NONE; }

double ctree_root_threshold(const ctree *t) { return t->nnodes ? t->node[0].threshold : 0; }

int metrics_class_error(const ctree_data *d, const unsigned char *is_test, const ctree_params *p, class_error *out,
                        ak_error *err)
{
    memset(out, 0, sizeof *out);
    if (d->nrows > UINT32_MAX - 1)
        return ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0, "the classification error takes at most %u rows",
                          UINT32_MAX - 1);
    for (size_t r = 0; r < d->nrows; r++) {
        if (is_test[r]) out->test_rows++;
        else out->train_rows++;
    }
    if (!out->train_rows || !out->test_rows)
        return ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0, "the classification error needs training and testing rows "
                          "(%zu training, %zu testing)", out->train_rows, out->test_rows);
    uint32_t *train = malloc(out->train_rows * sizeof *train);
    if (!train) return ak_err_nomem(err);
    size_t m = 0;
    for (size_t r = 0; r < d->nrows; r++)
        if (!is_test[r]) train[m++] = (uint32_t)r;
    ctree *t;
    int rc = ctree_grow(d, train, m, p, &t, err);
    free(train);
    if (rc < 0) return rc;
    const uint32_t majority = t->node[0].label;
    for (size_t r = 0; r < d->nrows; r++) {
        if (!is_test[r]) continue;
        out->errors += ctree_classify(t, d, r) != d->label[r];
        out->majority_errors += majority != d->label[r];
    }
    out->error = (double)out->errors / (double)out->test_rows;
    out->leaves = ctree_leaves(t);
    ctree_free(t);
    return 0;
}
