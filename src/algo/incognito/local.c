/* local.c — local recoding by iterated full-domain generalization (issue 28;
 * the scheme of ARX's iterative local transformation).
 *
 * Owns: the loop that publishes the rows of the optimum under a suppression
 * limit (optimal.c) at that node's levels, then anonymizes the rows it
 * suppressed again on their own, with the same hierarchies and the same
 * NCP (measured against the whole table), until no row is left; an
 * iteration that would leave fewer than k rows (or all of them) is run again
 * without suppression, so that the last rows are published rather than
 * suppressed whenever the top of the lattice satisfies the model for them.
 * Every row is published at the levels of its own iteration: a class carries
 * the hierarchy node of each QI (partition.node), classes are the groups of
 * identical labels, and rows no iteration can publish are suppressed.
 * The iterations serve k-anonymity and distinct l-diversity (their
 * suppression needs the generalization property under suppression); every
 * other per-class model goes to the top-down split search of local_split.c
 * (inc_local_options.method). Under k alone, once at most final_share of
 * the rows is left, one last iteration publishes them all at the optimum
 * without suppression (the passes of local_evict.c then move them on).
 */
#include "algo/incognito/local_internal.h"

#include <stdlib.h>
#include <string.h>

#include "common/hash.h"

void inc_local_result_free(inc_local_result *res)
{
    if (!res) return;
    free(res->iter);
    memset(res, 0, sizeof *res);
}

/* A row of the current selection under its key for a candidate split. */
typedef struct keyed_row {
    uint64_t key;
    uint32_t row;
} keyed_row;

static int keyed_cmp(const void *a, const void *b)
{
    const keyed_row *x = a, *y = b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return x->row < y->row ? -1 : x->row > y->row;
}

/* What the refinement of one iteration's classes works with. */
typedef struct refine_ctx {
    inc_ctx *c;
    lift_classes *cl;     /* the classes published so far */
    uint32_t *class_of;   /* per table row: its class in cl */
    const size_t *rows;   /* table row of each current row */
    const double *w;      /* NCP weights per QI, NULL for equal */
    keyed_row *kr;        /* scratch, one per current row */
    uint32_t *idx;        /* the current rows, grouped by class */
    inc_fset fs;          /* scratch frequency set, one entry per current row at most */
    int refine;           /* 0: publish each class at the iteration's levels */
    uint64_t classes;     /* classes added */
} refine_ctx;

/* Keys of rows idx[0..n) for splitting QI q at level l: the QI's value there
 * above the sensitive code, sorted. */
static void split_keys(const refine_ctx *r, const uint32_t *idx, size_t n, uint32_t q, uint32_t l, keyed_row *kr)
{
    const inc_ctx *c = r->c;
    const uint32_t *gen = c->qi[q].gen[l], *code = c->code0[q];
    for (size_t i = 0; i < n; i++)
        kr[i] = (keyed_row){((uint64_t)gen[code[idx[i]]] << c->qi[q].shift) | (c->sens ? c->sens[idx[i]] : 0), idx[i]};
    qsort(kr, n, sizeof *kr, keyed_cmp);
}

/* Publishes rows idx[0..n) (one class at levels `level`, satisfying the model)
 * with the least NCP the hierarchies allow, greedily: while lowering one QI by
 * one level splits the class into classes that all satisfy the model (tested
 * by inc_fset_eval with no row suppressed), lower the QI whose step saves the
 * most NCP, then refine each part on its own. Sound because each part is a
 * class of identical labels that satisfies the model, and every label covers
 * its rows (it is each row's own value generalized to the part's level); this
 * is the top-down specialization of [Fung05] applied inside one class. */
static int refine_class(refine_ctx *r, uint32_t *idx, size_t n, const uint32_t *level, ak_error *err)
{
    inc_ctx *c = r->c;
    keyed_row *kr = r->kr + (idx - r->idx);
    uint32_t best_q = UINT32_MAX;
    double best_gain = -1;
    const uint64_t limit = c->limit;
    c->limit = 0;
    int rc = ANONKIT_OK;
    for (uint32_t q = 0; q < c->nqi && rc == ANONKIT_OK; q++) {
        const uint32_t l = level[q];
        if (l == 0 || !r->refine) continue;
        const inc_qi *a = &c->qi[q];
        const uint32_t v = a->gen[l][c->code0[q][idx[0]]];
        split_keys(r, idx, n, q, l - 1, kr);
        double gain = 0;
        size_t nf = 0;
        for (size_t i = 0; i < n; i++) {
            if (i == 0 || kr[i].key != kr[i - 1].key) {
                r->fs.key[nf] = kr[i].key;
                r->fs.count[nf++] = 0;
            }
            r->fs.count[nf - 1]++;
            gain += a->ncp[l][v] - a->ncp[l - 1][(uint32_t)(kr[i].key >> a->shift)];
        }
        gain *= r->w ? r->w[q] : 1.0;
        if (gain <= best_gain) continue;
        r->fs.n = nf;
        int anonymous;
        rc = inc_fset_eval(c, &r->fs, 0, &anonymous, NULL, err);
        if (rc == ANONKIT_OK && anonymous) {
            best_q = q;
            best_gain = gain;
        }
    }
    c->limit = limit;
    AK_CHECK(rc);
    if (best_q == UINT32_MAX) { /* publish the class */
        uint32_t val[64], id;
        for (uint32_t q = 0; q < c->nqi; q++) val[q] = c->qi[q].gen[level[q]][c->code0[q][idx[0]]];
        AK_CHECK(lift_add(r->cl, level, val, n, &id, err));
        for (size_t i = 0; i < n; i++) r->class_of[r->rows[idx[i]]] = id;
        r->classes++;
        return ANONKIT_OK;
    }
    uint32_t sub[64];
    memcpy(sub, level, c->nqi * sizeof *sub);
    sub[best_q]--;
    split_keys(r, idx, n, best_q, sub[best_q], kr);
    for (size_t i = 0; i < n; i++) idx[i] = kr[i].row;
    const uint64_t field = c->qi[best_q].bits == 64 ? ~(uint64_t)0 : ((((uint64_t)1 << c->qi[best_q].bits) - 1)
                                                                      << c->qi[best_q].shift);
    for (size_t start = 0, i = 1; i <= n; i++) {
        if (i < n && (kr[i].key & field) == (kr[start].key & field)) continue;
        AK_CHECK(refine_class(r, idx + start, i - start, sub, err));
        start = i;
    }
    return ANONKIT_OK;
}

/* Publishes the current rows of c (rows[i] = table row of c's row i) at node
 * lv: rows of classes that satisfy the model are published (each class
 * refined by refine_class when `refine`), the others go to next[0..*nnext). */
static int publish_iteration(inc_ctx *c, uint64_t lv, const size_t *rows, const double *w, int refine, lift_classes *cl,
                             uint32_t *class_of, size_t *next, size_t *nnext, uint64_t *classes, ak_error *err)
{
    inc_fset *fs = NULL;
    int anonymous;
    AK_CHECK(inc_fset_scan(c, (inc_node){inc_full_mask(c), lv}, &fs, err));
    int rc = inc_fset_eval(c, fs, 1, &anonymous, NULL, err);
    inc_fset_free(fs);
    AK_CHECK(rc);
    const size_t ng = c->ngroups, n = c->nrows;
    u64map groups = {0};
    uint32_t *group_of = malloc((n ? n : 1) * sizeof *group_of);
    uint32_t *start = malloc((ng + 1) * sizeof *start);
    unsigned char *holds = malloc(ng ? ng : 1);
    refine_ctx r = {.c = c, .cl = cl, .class_of = class_of, .rows = rows, .w = w, .refine = refine};
    r.kr = malloc((n ? n : 1) * sizeof *r.kr);
    r.idx = malloc((n ? n : 1) * sizeof *r.idx);
    r.fs.key = malloc((n ? n : 1) * sizeof *r.fs.key);
    r.fs.count = malloc((n ? n : 1) * sizeof *r.fs.count);
    if (!group_of || !start || !holds || !r.kr || !r.idx || !r.fs.key || !r.fs.count || u64map_init(&groups, ng) != 0)
        rc = ak_err_nomem(err);
    for (size_t g = 0; g < ng && rc == ANONKIT_OK; g++) {
        uint32_t id;
        if (u64map_intern(&groups, c->gkey[g], &id, NULL) != 0) rc = ak_err_nomem(err);
        holds[g] = c->gholds[g];
        start[g] = 0;
    }
    uint32_t level[64];
    for (uint32_t q = 0; q < c->nqi; q++) level[q] = inc_level(c, lv, q);
    *nnext = 0;
    /* Each row's class (the groups' order is that of u64map ids: the order of gkey). */
    for (size_t i = 0; rc == ANONKIT_OK && i < n; i++) {
        uint64_t key = 0;
        for (uint32_t q = 0; q < c->nqi; q++) key |= (uint64_t)c->qi[q].gen[level[q]][c->code0[q][i]] << c->qi[q].shift;
        const uint32_t g = u64map_find(&groups, key);
        if (g == AK_NOT_FOUND) {
            rc = ak_err_set(err, ANONKIT_E_INTERNAL, NULL, 0, 0, "local recoding: a row lost its class");
            break;
        }
        group_of[i] = g;
        if (!holds[g]) next[(*nnext)++] = rows[i];
        else start[g]++;
    }
    /* The published rows grouped by class (counting sort), then each class refined or published as it is. */
    if (rc == ANONKIT_OK && ng) {
        for (size_t g = 0, at = 0; g < ng; g++) {
            const uint32_t cnt = start[g];
            start[g] = (uint32_t)at;
            at += cnt;
        }
        start[ng] = (uint32_t)(n - *nnext);
        for (size_t i = 0; i < n; i++)
            if (holds[group_of[i]]) r.idx[start[group_of[i]]++] = (uint32_t)i;
        for (size_t g = ng; g-- > 1;) start[g] = start[g - 1];
        start[0] = 0;
        for (size_t g = 0; g < ng && rc == ANONKIT_OK; g++) {
            if (!holds[g]) continue;
            const size_t cnt = start[g + 1] - start[g];
            rc = refine_class(&r, r.idx + start[g], cnt, level, err);
        }
    }
    *classes = r.classes;
    u64map_free(&groups);
    free(group_of);
    free(start);
    free(holds);
    free(r.kr);
    free(r.idx);
    free(r.fs.key);
    free(r.fs.count);
    return rc;
}

/* Publishes the classes of cl that hold rows in p, in order, each with its
 * hierarchy node per QI; p->class_of (ids in cl) becomes partition ids. */
static int emit_classes(const inc_ctx *c, const lift_classes *cl, partition *p, ak_error *err)
{
    uint32_t *id = malloc((cl->n ? cl->n : 1) * sizeof *id);
    if (!id) return ak_err_nomem(err);
    int rc = partition_reserve(p, cl->n, err);
    for (size_t i = 0; i < cl->n && rc == ANONKIT_OK; i++) {
        id[i] = PARTITION_SUPPRESSED;
        if (!cl->count[i]) continue;
        uint32_t lo[64], hi[64], nodes[64];
        for (uint32_t q = 0; q < c->nqi; q++) {
            const uint32_t l = cl->lv[i * c->nqi + q], v = cl->val[i * c->nqi + q];
            lo[q] = c->qi[q].box_lo[l][v];
            hi[q] = c->qi[q].box_hi[l][v];
            nodes[q] = c->qi[q].node[l][v];
        }
        rc = partition_add_class_nodes(p, lo, hi, nodes, cl->count[i], &id[i], err);
    }
    for (size_t r = 0; r < p->nrows && rc == ANONKIT_OK; r++)
        if (p->class_of[r] != PARTITION_SUPPRESSED) p->class_of[r] = id[p->class_of[r]];
    free(id);
    return rc;
}

/* Points c at the rows rows[0..n) of the table: their level-0 values and
 * sensitive codes go to the scratch arrays code[q] and sens. */
static void select_rows(inc_ctx *c, uint32_t *const *full_code, const uint32_t *full_sens, const size_t *rows, size_t n,
                        uint32_t **code, uint32_t *sens)
{
    for (uint32_t q = 0; q < c->nqi; q++) {
        for (size_t i = 0; i < n; i++) code[q][i] = full_code[q][rows[i]];
        c->code0[q] = code[q];
    }
    if (full_sens) {
        for (size_t i = 0; i < n; i++) sens[i] = full_sens[rows[i]];
        c->sens = sens;
    }
    c->nrows = n;
}

int inc_local(const table *t, const model *m, const inc_local_options *o, partition *p, inc_local_result *res,
              ak_error *err)
{
    memset(res, 0, sizeof *res);
    if (m->variance > 0)
        return ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0, "local recoding does not take --variance");
    res->method = o->method != INC_LOCAL_AUTO ? o->method
                  : inc_model_monotone_with_suppression(m) ? INC_LOCAL_ITERATE
                                                           : INC_LOCAL_SPLIT;
    if (res->method == INC_LOCAL_SPLIT) { /* local_split.c */
        inc_ctx c;
        AK_CHECK(inc_ctx_init(&c, t, m, 0, err));
        c.progress = o->progress;
        inc_local_split_stats st;
        const int rc = inc_local_split(&c, o->weights, p, &st, err);
        inc_ctx_free(&c);
        res->suppressed = p->suppressed;
        res->tasks = st.tasks;
        res->splits = st.splits;
        res->classes = st.classes;
        return rc;
    }
    if (o->iteration_suppression > 0 && !inc_model_monotone_with_suppression(m))
        return ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0,
                          "local recoding by iterated optima suppresses rows in its iterations, which works with "
                          "k-anonymity and distinct l-diversity only");
    inc_ctx c;
    AK_CHECK(inc_ctx_init(&c, t, m, 0, err));
    c.progress = o->progress;
    const size_t n = c.nrows;
    uint32_t *full_code[64];
    memcpy(full_code, c.code0, c.nqi * sizeof *full_code);
    const uint32_t *full_sens = c.sens;
    uint32_t *code[64] = {0};
    uint32_t *sens = malloc((n ? n : 1) * sizeof *sens);
    size_t *rows = malloc((n ? n : 1) * sizeof *rows), *next = malloc((n ? n : 1) * sizeof *next);
    int rc = sens && rows && next ? ANONKIT_OK : ak_err_nomem(err);
    for (uint32_t q = 0; rc == ANONKIT_OK && q < c.nqi; q++)
        if (!(code[q] = malloc((n ? n : 1) * sizeof *code[q]))) rc = ak_err_nomem(err);
    for (size_t r = 0; rc == ANONKIT_OK && r < n; r++) {
        rows[r] = r;
        p->class_of[r] = PARTITION_SUPPRESSED;
    }
    size_t nrows = n, cap = 0;
    const uint64_t k = m->k > 1 ? m->k : 1;
    lift_classes cl = {.nqi = c.nqi};
    while (rc == ANONKIT_OK && nrows > 0) {
        select_rows(&c, full_code, full_sens, rows, nrows, code, sens);
        /* Once few rows are left, an iteration publishes a larger share of them (fewer, coarser iterations),
         * under k alone, where lifting and eviction make up for it (distinct l-diversity keeps its schedule); once
         * very few are left, the last iteration publishes them all: the node tests of the many small iterations
         * that would follow cost more than the passes recover. */
        const double leave = o->final_share > 0 && !full_sens && (double)nrows <= o->final_share * (double)n ? 0
                             : o->tail_suppression > 0 && !full_sens && (double)nrows <= o->tail_share * (double)n
                                 ? o->tail_suppression
                                 : o->iteration_suppression;
        c.limit = model_suppression_limit(leave, nrows);
        c.defer = c.limit > 0 ? o->defer : 1; /* as the run without suppression below */
        inc_opt_result r;
        memset(&c.counters, 0, sizeof c.counters);
        rc = inc_optimal_ctx(&c, INC_CHOOSE_GCP, o->weights, 0, &r, err);
        uint64_t checked = c.counters.nodes_checked;
        if (rc == ANONKIT_OK && r.suppressed > 0 && (r.suppressed < k || r.suppressed == nrows) && c.limit > 0) {
            /* Too few rows would be left for another iteration (or none published): publish them all now. */
            c.limit = 0;
            c.defer = 1;
            inc_opt_result all;
            rc = inc_optimal_ctx(&c, INC_CHOOSE_GCP, o->weights, 0, &all, err);
            checked += c.counters.nodes_checked;
            if (rc == ANONKIT_OK) r = all;
            else if (rc == ANONKIT_E_INELIGIBLE && r.suppressed < nrows) rc = ANONKIT_OK; /* keep the first */
        }
        if (rc == ANONKIT_E_INELIGIBLE) { /* no node publishes any of these rows: they stay suppressed */
            rc = ANONKIT_OK;
            break;
        }
        if (rc < 0) break;
        if (res->niter == cap) {
            cap = cap ? 2 * cap : 8;
            inc_local_iteration *grown = realloc(res->iter, cap * sizeof *grown);
            if (!grown) {
                rc = ak_err_nomem(err);
                break;
            }
            res->iter = grown;
        }
        inc_local_iteration *it = &res->iter[res->niter++];
        memset(it, 0, sizeof *it);
        for (uint32_t q = 0; q < c.nqi; q++) it->levels[q] = inc_level(&c, r.lv, q);
        it->rows = nrows;
        it->nodes_checked = checked;
        size_t nnext = 0;
        if ((rc = publish_iteration(&c, r.lv, rows, o->weights, o->refine, &cl, p->class_of, next, &nnext, &it->classes, err)) < 0) break;
        it->published = nrows - nnext;
        if (nnext == nrows) break; /* no progress: the rest stays suppressed */
        memcpy(rows, next, nnext * sizeof *rows);
        nrows = nnext;
    }
    /* The context's own arrays back: the whole table. */
    memcpy(c.code0, full_code, c.nqi * sizeof *full_code);
    c.sens = full_sens;
    c.nrows = n;
    /* Under k alone, classes are raised or joined while rows of dearer classes can move to them, and lowered
     * while their other rows can move to classes that cover them (local_evict.c). */
    if (rc == ANONKIT_OK && o->refine && !c.sens) {
        inc_local_post_stats ps;
        rc = inc_local_post(&c, o->weights, k, o->evict, &cl, p->class_of, o->threads, o->part_min, &ps,
                            err);
        res->lift_rounds = ps.lift_rounds;
        res->lift_moves = ps.lift_moves;
        res->evict_rounds = ps.evict_rounds;
        res->evict_moves = ps.evict_moves;
    }
    if (rc == ANONKIT_OK) rc = emit_classes(&c, &cl, p, err);
    p->suppressed = 0;
    for (size_t r = 0; r < n; r++) p->suppressed += p->class_of[r] == PARTITION_SUPPRESSED;
    res->suppressed = p->suppressed;
    lift_free(&cl);
    for (uint32_t q = 0; q < c.nqi; q++) free(code[q]);
    free(sens);
    free(rows);
    free(next);
    inc_ctx_free(&c);
    if (rc < 0) inc_local_result_free(res);
    return rc;
}
