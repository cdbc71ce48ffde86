/* rothko_missing.c — missing numbers out of core (docs/hierarchies.md,
 * "Missing values"; docs/algorithms/mondrian.md, Rothko-T/S): a partition
 * finished in memory may hold a class that mixes missing and present values
 * of a numeric QI (the split missing | present was not allowable). As after
 * the in-memory algorithms (api/missing.c), such a class is cut into one
 * part per pattern of missing QIs; a part that satisfies the model is a
 * class, the others wait until the run ends, when they are pooled by
 * pattern over the whole table: one class per pattern if it satisfies the
 * model, else suppressed. The rows that wait are held in memory. */
#include <stdlib.h>
#include <string.h>

#include "algo/mondrian/rothko_internal.h"
#include "model/closeness.h"
#include "model/model.h"

/* The numeric QIs holding missing values (at most 32), in qs; their count. */
static uint32_t missing_qis(const table *t, uint32_t *qs)
{
    uint32_t nq = 0;
    for (uint32_t q = 0; q < t->nqi && nq < 32; q++)
        if (t->qi[q].kind == ATTR_NUMERIC && t->qi[q].has_missing) qs[nq++] = q;
    return nq;
}

/* The missing QIs of row i of view v as a bit pattern over qs. */
static uint32_t pattern_of(const table *v, const uint32_t *qs, uint32_t nq, size_t i)
{
    uint32_t bits = 0;
    for (uint32_t j = 0; j < nq; j++)
        if (v->qi[qs[j]].codes[i] == 0) bits |= 1u << j;
    return bits;
}

/* A row of a view with its pattern. */
typedef struct prow {
    uint32_t pattern;
    size_t row;
} prow;

/* By pattern, then row. */
static int cmp_prow(const void *a, const void *b)
{
    const prow *x = a, *y = b;
    if (x->pattern != y->pattern) return x->pattern < y->pattern ? -1 : 1;
    return (x->row > y->row) - (x->row < y->row);
}

static int cmp_u32(const void *a, const void *b)
{
    const uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* Whether rows pr[0..n) of view v form a class that satisfies the model (as
 * api/missing.c's part_holds): 1, 0, or < 0 when out of memory. */
static int part_holds(const rk *r, const table *v, const prow *pr, size_t n, ak_error *err)
{
    const model *m = r->m;
    if (n < m->k) return 0;
    uint32_t *codes = malloc((n ? n : 1) * sizeof *codes), *counts = malloc((n ? n : 1) * sizeof *counts);
    if (!codes || !counts) {
        free(codes);
        free(counts);
        return ak_err_nomem(err);
    }
    size_t ncounts = 0;
    if (v->sensitive_codes) {
        for (size_t i = 0; i < n; i++) codes[i] = v->sensitive_codes[pr[i].row];
        qsort(codes, n, sizeof *codes, cmp_u32);
        for (size_t i = 0; i < n; i++) {
            if (i == 0 || codes[i] != codes[i - 1]) {
                codes[ncounts] = codes[i];
                counts[ncounts++] = 0;
            }
            counts[ncounts - 1]++;
        }
    }
    int holds = 1;
    if (model_has_dist(m) && m->ref && r->work)
        holds = model_dist_holds(&m->dist, m->ref, r->work, n, codes, counts, ncounts);
    if (holds && m->l > 0 && !model_holds(m, n, counts, ncounts, codes)) holds = 0;
    if (holds && m->variance > 0 && v->sensitive_values) {
        model_moments mo;
        memset(&mo, 0, sizeof mo);
        int exact = 1;
        for (size_t i = 0; i < n; i++) {
            model_moments_add(&mo, v->sensitive_values[pr[i].row]);
            exact = exact && model_value_is_small_integer(v->sensitive_values[pr[i].row]);
        }
        holds = model_variance_holds(m, &mo, exact);
    }
    free(codes);
    free(counts);
    return holds;
}

/* Appends row i of view v (its copied fields from copied/off) to the rows that wait. */
static int wait_row(rk *r, const table *v, const char *copied, const size_t *off, size_t i, ak_error *err)
{
    rk_load *w = &r->waiting;
    const size_t n = r->nwaiting;
    if (!w->codes && !(w->codes = calloc(r->d ? r->d : 1, sizeof *w->codes))) return ak_err_nomem(err);
    if (n == w->cap) {
        const size_t cap = w->cap ? 2 * w->cap : 256;
        for (uint32_t q = 0; q < r->d; q++) {
            uint32_t *c = realloc(w->codes[q], cap * sizeof *c);
            if (!c) return ak_err_nomem(err);
            w->codes[q] = c;
        }
        uint32_t *s = realloc(w->sens, cap * sizeof *s);
        if (s) w->sens = s;
        uint32_t *c = s ? realloc(w->cls, cap * sizeof *c) : NULL;
        if (c) w->cls = c;
        size_t *o = c ? realloc(w->off, (cap * r->ncopied + 1) * sizeof *o) : NULL;
        if (o) w->off = o;
        if (!o) return ak_err_nomem(err);
        if (r->has_sval) {
            double *x = realloc(w->sval, cap * sizeof *x);
            if (!x) return ak_err_nomem(err);
            w->sval = x;
        }
        if (r->has_target) {
            double *x = realloc(w->target, cap * sizeof *x);
            if (!x) return ak_err_nomem(err);
            w->target = x;
        }
        w->cap = cap;
    }
    for (uint32_t q = 0; q < r->d; q++) w->codes[q][n] = v->qi[q].codes[i];
    w->sens[n] = v->sensitive_codes ? v->sensitive_codes[i] : 0;
    w->cls[n] = v->class_codes ? v->class_codes[i] : 0;
    if (r->has_sval) w->sval[n] = v->sensitive_values ? v->sensitive_values[i] : 0;
    if (r->has_target) w->target[n] = v->target_values ? v->target_values[i] : 0;
    for (uint32_t j = 0; j < r->ncopied; j++) {
        const size_t from = off[i * r->ncopied + j], to = off[i * r->ncopied + j + 1];
        w->off[n * r->ncopied + j] = w->copied.len;
        if (strbuf_append(&w->copied, copied + from, to - from) != 0) return ak_err_nomem(err);
    }
    w->off[(n + 1) * r->ncopied] = w->copied.len;
    r->nwaiting++;
    return ANONKIT_OK;
}

/* Adds rows pr[0..n) of v as a class of np (box from their codes; region
 * rlo/rhi, NULL: the box), class_of indexed by view row. */
static int add_class(const table *v, const prow *pr, size_t n, const uint32_t *rlo, const uint32_t *rhi, partition *np,
                     uint32_t *class_of, uint32_t *box, ak_error *err)
{
    const uint32_t d = v->nqi;
    uint32_t *lo = box, *hi = box + d;
    for (uint32_t q = 0; q < d; q++) {
        lo[q] = UINT32_MAX;
        hi[q] = 0;
    }
    for (size_t i = 0; i < n; i++)
        for (uint32_t q = 0; q < d; q++) {
            const uint32_t c = v->qi[q].codes[pr[i].row];
            if (c < lo[q]) lo[q] = c;
            if (c > hi[q]) hi[q] = c;
        }
    uint32_t id;
    AK_CHECK(partition_add_class_in(np, lo, hi, rlo ? rlo : lo, rhi ? rhi : hi, n, &id, err));
    for (size_t i = 0; i < n; i++) class_of[pr[i].row] = id;
    return ANONKIT_OK;
}

/* Hands to r->leaf_fn the `kept` rows of view v that do not wait (class_of
 * not PARTITION_SUPPRESSED - 1), copied into a load of their own (codes,
 * statistics, copied fields) with the classes np. */
static int publish_kept(rk *r, const table *v, const partition *np, const uint32_t *class_of, const char *copied,
                        const size_t *off, size_t kept, ak_error *err)
{
    rk_load l;
    memset(&l, 0, sizeof l);
    partition out;
    memset(&out, 0, sizeof out);
    int rc = rk_load_alloc(r, &l, kept, 1, err);
    if (rc == ANONKIT_OK) rc = partition_init(&out, kept, r->d, err);
    if (rc == ANONKIT_OK) rc = partition_append(&out, np, err);
    size_t n = 0;
    for (size_t i = 0; rc == ANONKIT_OK && i < v->nrows; i++) {
        if (class_of[i] == PARTITION_SUPPRESSED - 1) continue; /* waits */
        for (uint32_t q = 0; q < r->d; q++) l.codes[q][n] = v->qi[q].codes[i];
        l.sens[n] = v->sensitive_codes ? v->sensitive_codes[i] : 0;
        l.cls[n] = v->class_codes ? v->class_codes[i] : 0;
        if (r->has_sval) l.sval[n] = v->sensitive_values ? v->sensitive_values[i] : 0;
        if (r->has_target) l.target[n] = v->target_values ? v->target_values[i] : 0;
        for (uint32_t j = 0; j < r->ncopied && rc == ANONKIT_OK; j++) {
            const size_t from = off[i * r->ncopied + j], to = off[i * r->ncopied + j + 1];
            l.off[n * r->ncopied + j] = l.copied.len;
            if (strbuf_append(&l.copied, copied + from, to - from) != 0) rc = ak_err_nomem(err);
        }
        out.class_of[n] = class_of[i];
        if (class_of[i] == PARTITION_SUPPRESSED) out.suppressed++;
        n++;
    }
    if (rc == ANONKIT_OK) {
        l.off[n * r->ncopied] = l.copied.len;
        table view;
        table_qi qi[r->d ? r->d : 1];
        rk_make_view(r, &l, n, &view, qi);
        rc = r->leaf_fn(r->ctx, &view, &out, l.copied.data, l.off, 0, err);
    }
    partition_free(&out);
    rk_load_free(r, &l);
    return rc;
}

int rk_leaf(rk *r, const table *v, const partition *classes, const char *copied, const size_t *off, ak_error *err)
{
    uint32_t qs[32];
    const uint32_t nq = missing_qis(v, qs);
    int mixed_any = 0;
    for (size_t c = 0; c < classes->nclasses && !mixed_any; c++)
        for (uint32_t j = 0; j < nq; j++)
            mixed_any |= partition_lo(classes, c)[qs[j]] == 0 && partition_hi(classes, c)[qs[j]] > 0;
    if (!mixed_any) return r->leaf_fn(r->ctx, v, classes, copied, off, 0, err);
    const uint32_t d = r->d;
    const size_t nrows = v->nrows ? v->nrows : 1;
    size_t *start = calloc(classes->nclasses + 2, sizeof *start), *rows = malloc(nrows * sizeof *rows);
    prow *pr = malloc(nrows * sizeof *pr);
    uint32_t *class_of = malloc(nrows * sizeof *class_of), *box = malloc(4 * (size_t)(d ? d : 1) * sizeof *box);
    partition np;
    memset(&np, 0, sizeof np);
    int rc = start && rows && pr && class_of && box ? partition_init(&np, 0, d, err) : ak_err_nomem(err);
    if (rc == ANONKIT_OK) {
        for (size_t i = 0; i < v->nrows; i++) {
            class_of[i] = classes->class_of[i];
            if (class_of[i] != PARTITION_SUPPRESSED) start[class_of[i] + 2]++;
        }
        for (size_t c = 0; c < classes->nclasses; c++) start[c + 2] += start[c + 1];
        for (size_t i = 0; i < v->nrows; i++)
            if (class_of[i] != PARTITION_SUPPRESSED) rows[start[class_of[i] + 1]++] = i;
    }
    size_t kept = v->nrows;
    for (size_t c = 0; rc == ANONKIT_OK && c < classes->nclasses; c++) {
        const size_t *cr = rows + start[c], n = start[c + 1] - start[c];
        const uint32_t *lo = partition_lo(classes, c), *hi = partition_hi(classes, c);
        int mixed = 0;
        for (uint32_t j = 0; j < nq; j++) mixed |= lo[qs[j]] == 0 && hi[qs[j]] > 0;
        if (!mixed) {
            uint32_t id;
            rc = partition_add_class_in(&np, lo, hi, partition_rlo(classes, c), partition_rhi(classes, c),
                                        classes->count[c], &id, err);
            for (size_t i = 0; rc == ANONKIT_OK && i < n; i++) class_of[cr[i]] = id;
            continue;
        }
        for (size_t i = 0; i < n; i++) pr[i] = (prow){pattern_of(v, qs, nq, cr[i]), cr[i]};
        qsort(pr, n, sizeof *pr, cmp_prow);
        for (size_t a = 0; rc == ANONKIT_OK && a < n;) {
            size_t b = a;
            while (b < n && pr[b].pattern == pr[a].pattern) b++;
            uint32_t *rlo = box + 2 * (size_t)d, *rhi = box + 3 * (size_t)d;
            memcpy(rlo, partition_rlo(classes, c), d * sizeof *rlo);
            memcpy(rhi, partition_rhi(classes, c), d * sizeof *rhi);
            for (uint32_t j = 0; j < nq; j++) {
                if (pr[a].pattern & (1u << j)) rlo[qs[j]] = rhi[qs[j]] = 0;
                else if (rlo[qs[j]] == 0) rlo[qs[j]] = 1;
            }
            const int holds = part_holds(r, v, pr + a, b - a, err);
            if (holds < 0) rc = holds;
            else if (holds) rc = add_class(v, pr + a, b - a, rlo, rhi, &np, class_of, box, err);
            else if (r->o->regions_only) /* (as api/missing.c in memory) */
                rc = ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0,
                                "--rules: %zu rows with missing values of numeric quasi-identifier '%s' (or present "
                                "values beside them) form a part of a class too small to stand alone, which only a "
                                "class pooled across the partitions takes, and the recoding rules cannot express "
                                "that; run without --rules, or with a smaller --k",
                                b - a, v->qi[qs[0]].name);
            for (size_t i = a; !holds && rc == ANONKIT_OK && i < b; i++) {
                rc = wait_row(r, v, copied, off, pr[i].row, err);
                class_of[pr[i].row] = PARTITION_SUPPRESSED - 1; /* (no class has this id: it marks a row that waits) */
                kept--;
            }
            a = b;
        }
    }
    if (rc == ANONKIT_OK) rc = publish_kept(r, v, &np, class_of, copied, off, kept, err);
    partition_free(&np);
    free(start);
    free(rows);
    free(pr);
    free(class_of);
    free(box);
    return rc;
}

int rk_leaf_waiting(rk *r, ak_error *err)
{
    if (!r->nwaiting) return ANONKIT_OK;
    table view;
    table_qi qi[r->d ? r->d : 1];
    rk_make_view(r, &r->waiting, r->nwaiting, &view, qi);
    uint32_t qs[32];
    const uint32_t nq = missing_qis(&view, qs);
    const size_t n = r->nwaiting;
    prow *pr = malloc(n * sizeof *pr);
    uint32_t *box = malloc(4 * (size_t)(r->d ? r->d : 1) * sizeof *box);
    partition np;
    memset(&np, 0, sizeof np);
    int rc = pr && box ? partition_init(&np, n, r->d, err) : ak_err_nomem(err);
    for (size_t i = 0; rc == ANONKIT_OK && i < n; i++) pr[i] = (prow){pattern_of(&view, qs, nq, i), i};
    if (rc == ANONKIT_OK) qsort(pr, n, sizeof *pr, cmp_prow);
    for (size_t a = 0; rc == ANONKIT_OK && a < n;) {
        size_t b = a;
        while (b < n && pr[b].pattern == pr[a].pattern) b++;
        const int holds = part_holds(r, &view, pr + a, b - a, err);
        if (holds < 0) rc = holds;
        else if (holds) rc = add_class(&view, pr + a, b - a, NULL, NULL, &np, np.class_of, box, err);
        for (size_t i = a; !holds && i < b; i++) np.class_of[pr[i].row] = PARTITION_SUPPRESSED;
        if (!holds) np.suppressed += b - a;
        a = b;
    }
    if (rc == ANONKIT_OK) rc = r->leaf_fn(r->ctx, &view, &np, r->waiting.copied.data, r->waiting.off, 0, err);
    partition_free(&np);
    free(pr);
    free(box);
    return rc;
}
