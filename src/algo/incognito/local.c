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
 * identical labels, and rows no iteration can publish are suppressed. */
#include "algo/incognito/inc_internal.h"

#include <stdlib.h>
#include <string.h>

#include "common/hash.h"

void inc_local_result_free(inc_local_result *res)
{
    if (!res) return;
    free(res->iter);
    memset(res, 0, sizeof *res);
}

/* The value of QI q in a key. */
static inline uint32_t key_value(const inc_ctx *c, uint64_t key, uint32_t q)
{
    const inc_qi *a = &c->qi[q];
    return a->bits ? (uint32_t)((key >> a->shift) & ((((uint64_t)1) << a->bits) - 1)) : 0;
}

/* Publishes the current rows of c (rows[i] = table row of c's row i) at node
 * lv: rows of classes that satisfy the model get a class of p, the others
 * go to next[0..*nnext). */
static int publish_iteration(inc_ctx *c, uint64_t lv, const size_t *rows, partition *p, size_t *next, size_t *nnext,
                             uint64_t *classes, ak_error *err)
{
    inc_fset *fs = NULL;
    int anonymous;
    AK_CHECK(inc_fset_scan(c, (inc_node){inc_full_mask(c), lv}, &fs, err));
    int rc = inc_fset_eval(c, fs, 1, &anonymous, NULL, err);
    inc_fset_free(fs);
    AK_CHECK(rc);
    u64map groups = {0};
    uint32_t *class_of_group = malloc((c->ngroups ? c->ngroups : 1) * sizeof *class_of_group);
    if (!class_of_group || u64map_init(&groups, c->ngroups) != 0) {
        free(class_of_group);
        u64map_free(&groups);
        return ak_err_nomem(err);
    }
    for (size_t g = 0; g < c->ngroups && rc == ANONKIT_OK; g++) {
        uint32_t id;
        if (u64map_intern(&groups, c->gkey[g], &id, NULL) != 0) rc = ak_err_nomem(err);
        class_of_group[g] = UINT32_MAX;
    }
    uint32_t box_lo[64], box_hi[64], nodes[64], level[64];
    for (uint32_t q = 0; q < c->nqi; q++) level[q] = inc_level(c, lv, q);
    *nnext = 0;
    *classes = 0;
    for (size_t i = 0; rc == ANONKIT_OK && i < c->nrows; i++) {
        uint64_t key = 0;
        for (uint32_t q = 0; q < c->nqi; q++) key |= (uint64_t)c->qi[q].gen[level[q]][c->code0[q][i]] << c->qi[q].shift;
        const uint32_t g = u64map_find(&groups, key);
        if (g == AK_NOT_FOUND) {
            rc = ak_err_set(err, ANONKIT_E_INTERNAL, NULL, 0, 0, "local recoding: a row lost its class");
            break;
        }
        if (!c->gholds[g]) {
            next[(*nnext)++] = rows[i];
            continue;
        }
        if (class_of_group[g] == UINT32_MAX) {
            for (uint32_t q = 0; q < c->nqi; q++) {
                const uint32_t v = key_value(c, key, q), l = level[q];
                box_lo[q] = c->qi[q].box_lo[l][v];
                box_hi[q] = c->qi[q].box_hi[l][v];
                nodes[q] = c->qi[q].node[l][v];
            }
            if ((rc = partition_add_class_nodes(p, box_lo, box_hi, nodes, c->gtotal[g], &class_of_group[g], err)) < 0)
                break;
            ++*classes;
        }
        p->class_of[rows[i]] = class_of_group[g];
    }
    u64map_free(&groups);
    free(class_of_group);
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
    if (o->iteration_suppression > 0 && !inc_model_monotone_with_suppression(m))
        return ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0,
                          "local recoding suppresses rows in its iterations, which works with k-anonymity and "
                          "distinct l-diversity only");
    if (m->variance > 0)
        return ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0, "local recoding does not take --variance");
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
    while (rc == ANONKIT_OK && nrows > 0) {
        select_rows(&c, full_code, full_sens, rows, nrows, code, sens);
        c.limit = model_suppression_limit(o->iteration_suppression, nrows);
        c.defer = o->defer;
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
        if ((rc = publish_iteration(&c, r.lv, rows, p, next, &nnext, &it->classes, err)) < 0) break;
        it->published = nrows - nnext;
        if (nnext == nrows) break; /* no progress: the rest stays suppressed */
        memcpy(rows, next, nnext * sizeof *rows);
        nrows = nnext;
    }
    p->suppressed = 0;
    for (size_t r = 0; r < n; r++) p->suppressed += p->class_of[r] == PARTITION_SUPPRESSED;
    res->suppressed = p->suppressed;
    /* Give the context its own arrays back before freeing it. */
    memcpy(c.code0, full_code, c.nqi * sizeof *full_code);
    c.sens = full_sens;
    c.nrows = n;
    for (uint32_t q = 0; q < c.nqi; q++) free(code[q]);
    free(sens);
    free(rows);
    free(next);
    inc_ctx_free(&c);
    if (rc < 0) inc_local_result_free(res);
    return rc;
}
