/* incognito.c — full-domain k-anonymity: the result of a lattice search
 * ([LeFevre05] slides 22, 32; "K-Minimal Generalization", "Suppression").
 *
 * Owns: the entry points of incognito.h — checking that the top of the
 * lattice is anonymous at all, running a variant (search.c), ordering the
 * anonymous nodes, finding the k-minimal ones (no anonymous node one level
 * lower in one attribute), measuring each (rows suppressed, classes, DM,
 * GCP through metrics.c), choosing one, and publishing a node as a
 * partitioning whose classes carry the hierarchy node of every QI. */
#include "algo/incognito/inc_internal.h"

#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "metrics/metrics.h"

static const char *const variant_names[INC_VARIANT__COUNT] = {
    [INC_BASIC] = "basic",
    [INC_SUPER_ROOTS] = "super-roots",
    [INC_CUBE] = "cube",
    [INC_BINARY_SEARCH] = "binary-search",
    [INC_BOTTOM_UP] = "bottom-up",
    [INC_BOTTOM_UP_NOROLLUP] = "bottom-up-norollup",
    [INC_OPTIMAL] = "optimal",
    [INC_EXHAUSTIVE] = "exhaustive",
};

int inc_parse_variant(const char *text, inc_variant *out)
{
    for (int v = 0; v < INC_VARIANT__COUNT; v++)
        if (!strcmp(text, variant_names[v])) {
            *out = (inc_variant)v;
            return 0;
        }
    return -1;
}

const char *inc_variant_name(inc_variant v)
{
    return (unsigned)v < INC_VARIANT__COUNT ? variant_names[v] : "?";
}

int inc_parse_choose(const char *text, inc_choose *out)
{
    if (!strcmp(text, "gcp")) *out = INC_CHOOSE_GCP;
    else if (!strcmp(text, "height")) *out = INC_CHOOSE_HEIGHT;
    else if (!strcmp(text, "dm")) *out = INC_CHOOSE_DM;
    else if (!strcmp(text, "k-minimal")) *out = INC_CHOOSE_K_MINIMAL;
    else return -1;
    return 0;
}

const char *inc_choose_name(inc_choose c)
{
    return c == INC_CHOOSE_HEIGHT ? "height" : c == INC_CHOOSE_DM ? "dm" : c == INC_CHOOSE_K_MINIMAL ? "k-minimal" : "gcp";
}

int inc_model_monotone_with_suppression(const model *m)
{
    /* t-closeness, δ-disclosure and β-likeness are kept under the union of
     * classes, but a failing class merged with a passing one may fail, so the
     * rows failing at a node may grow under generalization once they may be
     * dropped: no generalization property with suppression. */
    return !(m->l > 0 && (m->l_variants & ~(unsigned)MODEL_L_DISTINCT)) && !(m->variance > 0) && !model_has_dist(m);
}

void inc_result_free(inc_result *res)
{
    if (!res) return;
    free(res->anonymous);
    free(res->minimal);
    free(res->info);
    memset(res, 0, sizeof *res);
}

/* A node by height, then packed levels (= lexicographic level vector). */
typedef struct ranked {
    uint64_t height, lv;
} ranked;

static int ranked_cmp(const void *a, const void *b)
{
    const ranked *x = a, *y = b;
    if (x->height != y->height) return x->height < y->height ? -1 : 1;
    return x->lv < y->lv ? -1 : x->lv > y->lv;
}

static void unpack(const inc_ctx *c, uint64_t lv, uint32_t *levels)
{
    for (uint32_t q = 0; q < c->nqi; q++) levels[q] = inc_level(c, lv, q);
}

/* Suppressed rows, classes, DM and GCP of node lv over all QIs. */
static int measure(inc_ctx *c, uint64_t lv, const double *weights, inc_minimal *out, ak_error *err)
{
    inc_fset *fs;
    AK_CHECK(inc_fset_scan(c, (inc_node){inc_full_mask(c), lv}, &fs, err));
    int anonymous;
    uint64_t failing;
    int rc = inc_fset_eval(c, fs, 1, &anonymous, &failing, err);
    inc_fset_free(fs);
    AK_CHECK(rc);
    metrics mt;
    AK_CHECK(metrics_init(&mt, c->nqi, weights, err));
    double ncp[64];
    for (size_t g = 0; g < c->ngroups; g++) {
        if (!c->gholds[g]) continue;
        for (uint32_t q = 0; q < c->nqi; q++) ncp[q] = c->qi[q].ncp[inc_level(c, lv, q)][inc_key_value(c, c->gkey[g], q)];
        metrics_add_class(&mt, c->gtotal[g], ncp);
    }
    if (failing) metrics_add_suppressed(&mt, failing);
    metrics_finish(&mt, c->m->k);
    out->suppressed = failing;
    out->classes = mt.classes;
    out->dm = mt.dm;
    out->gcp = mt.gcp;
    metrics_free(&mt);
    return ANONKIT_OK;
}

/* Whether x ranks before y under measure `by` (ties: the earlier in order wins). */
static int better(inc_choose by, const inc_minimal *x, const inc_minimal *y)
{
    switch (by) {
    case INC_CHOOSE_HEIGHT: return x->height < y->height;
    case INC_CHOOSE_DM: return x->dm < y->dm;
    case INC_CHOOSE_GCP:
    case INC_CHOOSE_K_MINIMAL: return x->gcp < y->gcp;
    }
    return 0;
}

/* Orders the anonymous nodes and finds the k-minimal ones. */
static int finish(inc_ctx *c, uint64_t *lv, size_t n, int complete, inc_result *res, ak_error *err)
{
    ranked *r = malloc((n ? n : 1) * sizeof *r);
    if (!r) return ak_err_nomem(err);
    for (size_t i = 0; i < n; i++) r[i] = (ranked){inc_node_height(c, (inc_node){inc_full_mask(c), lv[i]}), lv[i]};
    qsort(r, n, sizeof *r, ranked_cmp);
    const uint32_t nqi = c->nqi;
    res->nqi = nqi;
    res->complete = complete;
    res->nanonymous = n;
    res->anonymous = malloc((n ? n : 1) * nqi * sizeof *res->anonymous);
    res->minimal = malloc((n ? n : 1) * nqi * sizeof *res->minimal);
    res->info = calloc(n ? n : 1, sizeof *res->info);
    int rc = ANONKIT_OK;
    if (!res->anonymous || !res->minimal || !res->info) rc = ak_err_nomem(err);
    for (size_t i = 0; rc == ANONKIT_OK && i < n; i++) {
        unpack(c, r[i].lv, res->anonymous + i * nqi);
        /* k-minimal: no anonymous node one level lower in one attribute. */
        int minimal = 1;
        for (uint32_t q = 0; q < nqi && minimal && r[i].height > 0; q++) {
            const uint32_t l = inc_level(c, r[i].lv, q);
            if (!l) continue;
            const ranked lower = {r[i].height - 1, inc_with_level(c, r[i].lv, q, l - 1)};
            minimal = bsearch(&lower, r, n, sizeof *r, ranked_cmp) == NULL;
        }
        if (!minimal) continue;
        const size_t m = res->nminimal++;
        unpack(c, r[i].lv, res->minimal + m * nqi);
        res->info[m].height = (uint32_t)r[i].height;
    }
    free(r);
    return rc;
}

int inc_measure_choose(const table *t, const model *m, const inc_options *o, inc_result *res, ak_error *err)
{
    inc_ctx c;
    AK_CHECK(inc_ctx_init(&c, t, m, o->suppression, err));
    c.progress = o->progress;
    int rc = ANONKIT_OK;
    res->chosen = 0;
    for (size_t i = 0; i < res->nminimal && rc == ANONKIT_OK; i++) {
        uint64_t lv = 0;
        for (uint32_t q = 0; q < c.nqi; q++) lv = inc_with_level(&c, lv, q, res->minimal[i * c.nqi + q]);
        rc = measure(&c, lv, o->weights, &res->info[i], err);
        if (rc == ANONKIT_OK && i && better(o->choose, &res->info[i], &res->info[res->chosen])) res->chosen = i;
    }
    inc_ctx_free(&c);
    return rc;
}

/* Refuses what the lattice searches cannot do with this model. */
static int check_model(const model *m, double suppression, ak_error *err)
{
    if (suppression > 0 && !inc_model_monotone_with_suppression(m))
        return ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0,
                          "--suppression works with k-anonymity and distinct l-diversity only: with entropy, "
                          "recursive or probabilistic l-diversity (or variance) suppressing failing classes breaks "
                          "the generalization property the lattice search relies on");
    if (m->variance > 0)
        return ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0, "--algorithm incognito does not take --variance");
    return ANONKIT_OK;
}

int inc_optimal(const table *t, const model *m, const inc_options *o, int exhaustive, inc_optimum *out, ak_error *err)
{
    memset(out, 0, sizeof *out);
    AK_CHECK(check_model(m, o->suppression, err));
    inc_ctx c;
    AK_CHECK(inc_ctx_init(&c, t, m, o->suppression, err));
    c.progress = o->progress;
    c.risk = o->risk; /* --max-risk (risk_hook.c): the published node satisfies it too */
    out->suppression_limit = c.limit;
    inc_opt_result r;
    int rc = inc_optimal_ctx(&c, o->choose, o->weights, exhaustive, &r, err);
    out->counters = c.counters;
    if (rc == ANONKIT_OK) {
        unpack(&c, r.lv, out->levels);
        out->lattice = r.lattice;
        out->pruned_tagged = r.pruned_tagged;
        out->pruned_bound = r.pruned_bound;
        out->loss = r.loss;
        if (o->choose == INC_CHOOSE_GCP || o->choose == INC_CHOOSE_K_MINIMAL) {
            double w = 0;
            for (uint32_t q = 0; q < c.nqi; q++) w += o->weights ? o->weights[q] : 1.0;
            out->loss = c.nrows && w > 0 ? r.loss / (w * (double)c.nrows) : 0;
        }
        out->info.height = r.height;
        rc = measure(&c, r.lv, o->weights, &out->info, err);
    }
    inc_ctx_free(&c);
    return rc;
}

int inc_search(const table *t, const model *m, const inc_options *o, inc_result *res, ak_error *err)
{
    memset(res, 0, sizeof *res);
    AK_CHECK(check_model(m, o->suppression, err));
    if (o->variant == INC_OPTIMAL || o->variant == INC_EXHAUSTIVE)
        return ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0,
                          "the %s variant finds the node of least loss only, not the anonymous and k-minimal nodes",
                          inc_variant_name(o->variant));
    inc_ctx c;
    AK_CHECK(inc_ctx_init(&c, t, m, o->suppression, err));
    c.progress = o->progress;
    res->suppression_limit = c.limit;
    if (o->cube_share_min) c.share_min = o->cube_share_min;
    c.risk = o->risk; /* --max-risk (risk_hook.c) */
    /* Eligibility: the top of the lattice must be anonymous. */
    uint64_t top = 0;
    for (uint32_t q = 0; q < c.nqi; q++) top = inc_with_level(&c, top, q, c.qi[q].height);
    inc_fset *fs = NULL;
    int anonymous = 0;
    int rc = inc_fset_scan(&c, (inc_node){inc_full_mask(&c), top}, &fs, err);
    if (rc == ANONKIT_OK) rc = inc_fset_eval(&c, fs, 0, &anonymous, NULL, err);
    inc_fset_free(fs);
    if (rc == ANONKIT_OK && !anonymous)
        rc = ak_err_set(err, ANONKIT_E_INELIGIBLE, NULL, 0, 0,
                        "no full-domain generalization satisfies the privacy model, not even every quasi-identifier "
                        "at the top of its hierarchy (with at most %llu of %zu rows suppressed)",
                        (unsigned long long)c.limit, t->nrows);
    memset(&c.counters, 0, sizeof c.counters);
    uint64_t *lv = NULL;
    size_t n = 0;
    if (rc == ANONKIT_OK) rc = inc_run_variant(&c, o->variant, &lv, &n, err);
    res->counters = c.counters;
    if (rc == ANONKIT_OK && n == 0)
        rc = ak_err_set(err, ANONKIT_E_INTERNAL, NULL, 0, 0, "the %s search found no anonymous node",
                        inc_variant_name(o->variant));
    if (rc == ANONKIT_OK) rc = finish(&c, lv, n, o->variant != INC_BINARY_SEARCH, res, err);
    free(lv);
    inc_ctx_free(&c);
    if (rc < 0) inc_result_free(res);
    return rc;
}

int inc_publish(const table *t, const model *m, const uint32_t *levels, partition *p, ak_error *err)
{
    inc_ctx c;
    AK_CHECK(inc_ctx_init(&c, t, m, 0, err));
    uint64_t lv = 0;
    for (uint32_t q = 0; q < c.nqi; q++) lv = inc_with_level(&c, lv, q, levels[q]);
    inc_fset *fs = NULL;
    u64map groups = {0};
    uint32_t *class_of_group = NULL;
    int anonymous;
    int rc = inc_fset_scan(&c, (inc_node){inc_full_mask(&c), lv}, &fs, err);
    if (rc == ANONKIT_OK) rc = inc_fset_eval(&c, fs, 1, &anonymous, NULL, err);
    inc_fset_free(fs);
    if (rc < 0) goto done;
    if (u64map_init(&groups, c.ngroups) != 0 || !(class_of_group = malloc((c.ngroups ? c.ngroups : 1) * sizeof *class_of_group))) {
        rc = ak_err_nomem(err);
        goto done;
    }
    for (size_t g = 0; g < c.ngroups; g++) {
        uint32_t id;
        if (u64map_intern(&groups, c.gkey[g], &id, NULL) != 0) { rc = ak_err_nomem(err); goto done; }
        class_of_group[g] = UINT32_MAX;
    }
    /* Classes in order of their first row; each with its box and node per QI. */
    uint32_t box_lo[64], box_hi[64], nodes[64];
    p->suppressed = 0;
    for (size_t r = 0; r < c.nrows; r++) {
        uint64_t key = 0;
        for (uint32_t q = 0; q < c.nqi; q++) key |= (uint64_t)c.qi[q].gen[levels[q]][c.code0[q][r]] << c.qi[q].shift;
        const uint32_t g = u64map_find(&groups, key);
        if (g == AK_NOT_FOUND) { rc = ak_err_set(err, ANONKIT_E_INTERNAL, NULL, 0, 0, "incognito: a row lost its class"); goto done; }
        if (!c.gholds[g]) {
            p->class_of[r] = PARTITION_SUPPRESSED;
            p->suppressed++;
            continue;
        }
        if (class_of_group[g] == UINT32_MAX) {
            for (uint32_t q = 0; q < c.nqi; q++) {
                const uint32_t v = inc_key_value(&c, key, q), l = levels[q];
                box_lo[q] = c.qi[q].box_lo[l][v];
                box_hi[q] = c.qi[q].box_hi[l][v];
                nodes[q] = c.qi[q].node[l][v];
            }
            if ((rc = partition_add_class_nodes(p, box_lo, box_hi, nodes, c.gtotal[g], &class_of_group[g], err)) < 0)
                goto done;
        }
        p->class_of[r] = class_of_group[g];
    }
done:
    u64map_free(&groups);
    free(class_of_group);
    inc_ctx_free(&c);
    return rc;
}
