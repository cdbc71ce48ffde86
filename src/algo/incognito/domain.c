/* domain.c — the encoded lattice domain of Incognito ([LeFevre05] slides 14-22:
 * domain generalization hierarchies and the multi-attribute lattice).
 *
 * Owns: per QI and level, the generalized values present in the table as
 * dense numbers (the dimension tables of [LeFevre05] slide 26, restricted to values
 * that occur), the maps between levels that rollup needs, each value's
 * hierarchy node, box and NCP, the per-row level-0 values, the layout of
 * keys and packed nodes, and the group-by scratch. */
#include "algo/incognito/inc_internal.h"

#include <stdlib.h>
#include <string.h>

#include "core/recode.h"

/* Bits needed to hold values 0..x. */
static uint32_t bits_for(uint64_t x)
{
    uint32_t b = 0;
    while (b < 64 && (x >> b) != 0) b++;
    return b;
}

uint64_t inc_full_mask(const inc_ctx *c)
{
    return c->nqi >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << c->nqi) - 1);
}

uint32_t inc_node_height(const inc_ctx *c, inc_node n)
{
    uint32_t h = 0;
    for (uint32_t q = 0; q < c->nqi; q++)
        if (n.mask >> q & 1) h += inc_level(c, n.lv, q);
    return h;
}

uint32_t inc_qi_height(const table *t, uint32_t q)
{
    return t->qi[q].h ? hier_height(t->qi[q].h) : 0;
}

/* Frees one QI's domain; any of its per-level arrays may be missing, when
 * qi_build ran out of memory part way. */
static void qi_free(inc_qi *a)
{
    for (uint32_t l = 0; l <= a->height; l++) {
        if (a->gen) free(a->gen[l]);
        if (a->rep) free(a->rep[l]);
        if (a->node) free(a->node[l]);
        if (a->box_lo) free(a->box_lo[l]);
        if (a->box_hi) free(a->box_hi[l]);
        if (a->ncp) free(a->ncp[l]);
    }
    free(a->gen);
    free(a->rep);
    free(a->node);
    free(a->box_lo);
    free(a->box_hi);
    free(a->ncp);
    if (a->up)
        for (uint32_t i = 0; i < (a->height + 1) * (a->height + 1); i++) free(a->up[i]);
    free(a->up);
    if (a->upk)
        for (uint32_t i = 0; i < (a->height + 1) * (a->height + 1); i++) free(a->upk[i]);
    free(a->upk);
    free(a->card);
}

void inc_ctx_free(inc_ctx *c)
{
    for (uint32_t q = 0; c->qi && q < c->nqi; q++) {
        qi_free(&c->qi[q]);
        if (c->code0) free(c->code0[q]);
    }
    free(c->qi);
    free(c->code0);
    free(c->slot);
    free(c->hused);
    for (size_t i = 0; i < c->npool; i++) inc_fset_free(c->pool[i]);
    free(c->lat_bottom);
    free(c->lat_top);
    free(c->lat_pb);
    free(c->lat_pm);
    free(c->lat_ht);
    free(c->gkey);
    free(c->gtotal);
    free(c->gholds);
    free(c->gstart);
    free(c->gfill);
    free(c->gcounts);
    free(c->gscratch);
    free(c->gcodes);
    model_work_free(c->work);
    free(c->gid);
    memset(c, 0, sizeof *c);
}

/* The hierarchy leaf of every table code of QI q: the code itself for a
 * categorical QI, the leaf spelled like the value for a numeric one. */
static int leaf_of_codes(const table *t, uint32_t q, uint32_t *leaf, ak_error *err)
{
    const table_qi *a = &t->qi[q];
    for (uint32_t code = 0; code < a->ncodes; code++) {
        if (a->kind == ATTR_CATEGORICAL) {
            leaf[code] = code;
            continue;
        }
        char buf[24];
        const char *text = recode_numeric_text(a, code, buf);
        if (hier_find_leaf(a->h, text, strlen(text), &leaf[code]) != 0)
            return ak_err_set(err, ANONKIT_E_INPUT, hier_path(a->h), 0, 0,
                              "value '%s' of quasi-identifier '%s' is not a leaf of this hierarchy", text, a->name);
    }
    return ANONKIT_OK;
}

/* Builds the levels of QI q: dense values per level and their maps. */
static int qi_build(inc_ctx *c, uint32_t q, ak_error *err)
{
    const table_qi *a = &c->t->qi[q];
    inc_qi *d = &c->qi[q];
    const hier *h = a->h;
    const uint32_t nleaves = hier_leaf_count(h), ncodes = a->ncodes;
    d->height = hier_height(h);
    const uint32_t nl = d->height + 1;
    d->card = calloc(nl, sizeof *d->card);
    d->gen = calloc(nl, sizeof *d->gen);
    d->rep = calloc(nl, sizeof *d->rep);
    d->node = calloc(nl, sizeof *d->node);
    d->box_lo = calloc(nl, sizeof *d->box_lo);
    d->box_hi = calloc(nl, sizeof *d->box_hi);
    d->ncp = calloc(nl, sizeof *d->ncp);
    uint32_t *leaf = malloc((ncodes ? ncodes : 1) * sizeof *leaf);
    uint32_t *v0_of_leaf = malloc((nleaves ? nleaves : 1) * sizeof *v0_of_leaf);
    uint32_t *code_of_v0 = malloc((ncodes ? ncodes : 1) * sizeof *code_of_v0);
    int rc = ANONKIT_OK;
    if (!d->card || !d->gen || !d->rep || !d->node || !d->box_lo || !d->box_hi || !d->ncp || !leaf ||
        !v0_of_leaf || !code_of_v0) {
        rc = ak_err_nomem(err);
        goto done;
    }
    if ((rc = leaf_of_codes(c->t, q, leaf, err)) < 0) goto done;
    /* Level-0 values: the leaves that occur, in leaf-code order. */
    for (uint32_t l = 0; l < nleaves; l++) v0_of_leaf[l] = UINT32_MAX;
    for (size_t r = 0; r < c->nrows; r++) v0_of_leaf[leaf[a->codes[r]]] = 0;
    uint32_t n0 = 0;
    for (uint32_t l = 0; l < nleaves; l++)
        if (v0_of_leaf[l] == 0) v0_of_leaf[l] = n0++;
    /* A level-0 value's table code (numeric QIs: codes and leaves correspond one to one). */
    for (uint32_t code = 0; code < ncodes; code++)
        if (v0_of_leaf[leaf[code]] != UINT32_MAX) code_of_v0[v0_of_leaf[leaf[code]]] = code;
    uint32_t *v0_leaf = malloc((n0 ? n0 : 1) * sizeof *v0_leaf);
    if (!v0_leaf) { rc = ak_err_nomem(err); goto done; }
    for (uint32_t l = 0; l < nleaves; l++)
        if (v0_of_leaf[l] != UINT32_MAX) v0_leaf[v0_of_leaf[l]] = l;
    for (uint32_t L = 0; L < nl && rc == ANONKIT_OK; L++) {
        /* Ancestors at level L of leaves in code order come in node order. */
        d->gen[L] = malloc((n0 ? n0 : 1) * sizeof **d->gen);
        d->rep[L] = malloc((n0 ? n0 : 1) * sizeof **d->rep);
        d->node[L] = malloc((n0 ? n0 : 1) * sizeof **d->node);
        d->box_lo[L] = malloc((n0 ? n0 : 1) * sizeof **d->box_lo);
        d->box_hi[L] = malloc((n0 ? n0 : 1) * sizeof **d->box_hi);
        d->ncp[L] = malloc((n0 ? n0 : 1) * sizeof **d->ncp);
        if (!d->gen[L] || !d->rep[L] || !d->node[L] || !d->box_lo[L] || !d->box_hi[L] || !d->ncp[L]) {
            rc = ak_err_nomem(err);
            break;
        }
        uint32_t n = 0, prev = UINT32_MAX;
        for (uint32_t v0 = 0; v0 < n0; v0++) {
            const uint32_t anc = hier_ancestor(h, v0_leaf[v0], L);
            const uint32_t code = code_of_v0[v0];
            if (anc != prev) {
                prev = anc;
                d->rep[L][n] = v0;
                d->node[L][n] = anc;
                d->box_lo[L][n] = code;
                d->box_hi[L][n] = code;
                n++;
            }
            d->gen[L][v0] = n - 1;
            if (code < d->box_lo[L][n - 1]) d->box_lo[L][n - 1] = code;
            if (code > d->box_hi[L][n - 1]) d->box_hi[L][n - 1] = code;
        }
        d->card[L] = n;
        for (uint32_t v = 0; v < n; v++) {
            if (a->kind == ATTR_CATEGORICAL) { /* the whole subtree, as the writer's label says */
                d->box_lo[L][v] = hier_node_at(h, d->node[L][v])->lo;
                d->box_hi[L][v] = hier_node_at(h, d->node[L][v])->hi;
            }
            d->ncp[L][v] = table_ncp(c->t, q, d->box_lo[L][v], d->box_hi[L][v]);
        }
    }
    /* The rollup maps between every pair of levels a < b. */
    if (rc == ANONKIT_OK && !(d->up = calloc((size_t)nl * nl, sizeof *d->up))) rc = ak_err_nomem(err);
    for (uint32_t x = 0; x < nl && rc == ANONKIT_OK; x++)
        for (uint32_t y = x + 1; y < nl && rc == ANONKIT_OK; y++) {
            uint32_t *m = malloc((d->card[x] ? d->card[x] : 1) * sizeof *m);
            if (!m) {
                rc = ak_err_nomem(err);
                break;
            }
            for (uint32_t v = 0; v < d->card[x]; v++) m[v] = d->gen[y][d->rep[x][v]];
            d->up[x * nl + y] = m;
        }
    if (rc == ANONKIT_OK) {
        if (!(c->code0[q] = malloc((c->nrows ? c->nrows : 1) * sizeof *c->code0[q]))) rc = ak_err_nomem(err);
        for (size_t r = 0; rc == ANONKIT_OK && r < c->nrows; r++) c->code0[q][r] = v0_of_leaf[leaf[a->codes[r]]];
    }
    free(v0_leaf);
done:
    free(leaf);
    free(v0_of_leaf);
    free(code_of_v0);
    return rc;
}

int inc_ctx_init(inc_ctx *c, const table *t, const model *m, double suppression, ak_error *err)
{
    memset(c, 0, sizeof *c);
    c->t = t;
    c->m = m;
    c->nqi = t->nqi;
    c->nrows = t->nrows;
    c->limit = model_suppression_limit(suppression, t->nrows);
    c->share_min = 4096;
    c->defer = 1.0;
    if (t->nqi == 0 || t->nqi > 64)
        return ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0, "incognito takes 1 to 64 quasi-identifiers, not %u", t->nqi);
    for (uint32_t q = 0; q < t->nqi; q++)
        if (!t->qi[q].h)
            return ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0,
                              "--algorithm incognito needs a hierarchy for every quasi-identifier, and '%s' has none "
                              "(give --hierarchy %s=FILE, e.g. ARX intervals such as 34;30-34;30-39;20-39;*)",
                              t->qi[q].name, t->qi[q].name);
    c->qi = calloc(t->nqi, sizeof *c->qi);
    c->code0 = calloc(t->nqi, sizeof *c->code0);
    if (!c->qi || !c->code0) {
        inc_ctx_free(c);
        return ak_err_nomem(err);
    }
    int rc = ANONKIT_OK;
    for (uint32_t q = 0; q < t->nqi && rc == ANONKIT_OK; q++) rc = qi_build(c, q, err);
    if (rc < 0) {
        inc_ctx_free(c);
        return rc;
    }
    /* Key layout: the sensitive code lowest, then QI fields; node levels with QI 0 highest. */
    if (model_has_dist(m) && (!m->ref || !t->sensitive_codes)) {
        inc_ctx_free(c);
        return ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0,
                          "t-closeness, delta-disclosure and beta-likeness need a sensitive column (--sensitive)");
    }
    if (model_has_dist(m) && !(c->work = model_work_new(m->ref))) {
        inc_ctx_free(c);
        return ak_err_nomem(err);
    }
    if (model_needs_sensitive(m) && t->sensitive_codes) {
        c->sens = t->sensitive_codes;
        c->sbits = bits_for(t->sensitive_dict.count ? t->sensitive_dict.count - 1 : 0);
    }
    uint32_t shift = c->sbits, lbits = 0;
    for (uint32_t q = 0; q < t->nqi; q++) {
        c->qi[q].shift = shift;
        c->qi[q].bits = bits_for(c->qi[q].card[0] - 1);
        shift += c->qi[q].bits;
        c->qi[q].lbits = bits_for(c->qi[q].height);
        lbits += c->qi[q].lbits;
    }
    if (shift > 64 || lbits > 64) {
        inc_ctx_free(c);
        return ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0,
                          "incognito packs a generalized row into 64 bits, but these quasi-identifiers need %u bits "
                          "(their distinct values) and %u bits (their hierarchy levels)",
                          shift, lbits);
    }
    uint32_t at = lbits;
    for (uint32_t q = 0; q < t->nqi; q++) {
        at -= c->qi[q].lbits;
        c->qi[q].lshift = at;
    }
    /* The rollup maps shifted into their key fields (inc_fset_rollup ORs them in directly). */
    for (uint32_t q = 0; q < t->nqi; q++) {
        inc_qi *a = &c->qi[q];
        const uint32_t nl = a->height + 1;
        if (!(a->upk = calloc((size_t)nl * nl, sizeof *a->upk))) {
            inc_ctx_free(c);
            return ak_err_nomem(err);
        }
        for (uint32_t i = 0; i < nl * nl; i++) {
            if (!a->up[i]) continue;
            const uint32_t x = i / nl;
            if (!(a->upk[i] = malloc((a->card[x] ? a->card[x] : 1) * sizeof *a->upk[i]))) {
                inc_ctx_free(c);
                return ak_err_nomem(err);
            }
            for (uint32_t v = 0; v < a->card[x]; v++) a->upk[i][v] = a->bits ? (uint64_t)a->up[i][v] << a->shift : 0;
        }
    }
    /* Group-by scratch for up to one key per row, at most half full. */
    size_t cap = 16;
    while (cap < 2 * (c->nrows + 1)) cap *= 2;
    c->hcap = cap;
    c->slot = calloc(cap, sizeof *c->slot);
    c->hused = malloc(cap * sizeof *c->hused);
    if (!c->slot || !c->hused) {
        inc_ctx_free(c);
        return ak_err_nomem(err);
    }
    return ANONKIT_OK;
}
