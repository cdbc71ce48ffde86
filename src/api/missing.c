/* missing.c — keeps missing and present values of a numeric quasi-identifier
 * in separate classes (missing.h; docs/hierarchies.md, "Missing values"). */
#include "api/missing.h"

#include <stdlib.h>
#include <string.h>

#include "model/model.h"

/* The missing numeric QIs of row r as a bit pattern over the listed QIs. */
static uint32_t pattern_of(const table *t, const uint32_t *qs, uint32_t nq, size_t r)
{
    uint32_t bits = 0;
    for (uint32_t i = 0; i < nq; i++)
        if (t->qi[qs[i]].codes[r] == 0) bits |= 1u << i;
    return bits;
}

static int cmp_u32(const void *a, const void *b)
{
    const uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* Whether the rows rows[0..n) form a class that satisfies the model: 1 yes,
 * 0 no, -1 out of memory. */
static int part_holds(const anonkit_job *job, const table *t, const size_t *rows, size_t n, uint32_t *scratch,
                      uint32_t *counts)
{
    if (n < job->model.k) return 0;
    size_t ncounts = 0;
    if (t->sensitive_codes) {
        for (size_t i = 0; i < n; i++) scratch[i] = t->sensitive_codes[rows[i]];
        qsort(scratch, n, sizeof *scratch, cmp_u32);
        for (size_t i = 0; i < n; i++) {
            if (i == 0 || scratch[i] != scratch[i - 1]) {
                scratch[ncounts] = scratch[i]; /* the distinct codes, in place (ncounts <= i) */
                counts[ncounts++] = 0;
            }
            counts[ncounts - 1]++;
        }
    }
    if (model_has_dist(&job->model) && job->model.ref) { /* t-closeness, δ-disclosure, β-likeness */
        model_work *w = model_work_new(job->model.ref);
        if (!w) return -1;
        const int holds = model_dist_holds(&job->model.dist, job->model.ref, w, n, scratch, counts, ncounts);
        model_work_free(w);
        if (!holds) return 0;
    }
    if (job->model.l > 0 && !model_holds(&job->model, n, counts, ncounts, scratch)) return 0;
    if (job->model.variance > 0 && t->sensitive_values) {
        model_moments mo;
        memset(&mo, 0, sizeof mo);
        int exact = 1;
        for (size_t i = 0; i < n; i++) {
            model_moments_add(&mo, t->sensitive_values[rows[i]]);
            exact = exact && model_value_is_small_integer(t->sensitive_values[rows[i]]);
        }
        if (!model_variance_holds(&job->model, &mo, exact)) return 0;
    }
    return 1;
}

/* A row with its pattern of missing QIs. */
typedef struct pattern_row {
    uint32_t pattern;
    size_t row;
} pattern_row;

/* By pattern, then row (a total order: qsort's result does not depend on its algorithm). */
static int cmp_pattern_row(const void *a, const void *b)
{
    const pattern_row *x = a, *y = b;
    if (x->pattern != y->pattern) return x->pattern < y->pattern ? -1 : 1;
    return (x->row > y->row) - (x->row < y->row);
}

/* Adds the rows pr[0..n) (one pattern) as a class of np when they satisfy the
 * model, with their box and `region` (rlo, rhi; NULL: the box); else
 * suppresses them. class_of is p's. */
static int add_part(anonkit_job *job, const table *t, const pattern_row *pr, size_t n, const uint32_t *rlo,
                    const uint32_t *rhi, partition *np, uint32_t *class_of, uint64_t *suppressed, size_t *rows,
                    uint32_t *scratch, uint32_t *counts, uint32_t *box)
{
    const uint32_t nqi = t->nqi;
    uint32_t *lo = box, *hi = box + nqi;
    for (uint32_t q = 0; q < nqi; q++) {
        lo[q] = UINT32_MAX;
        hi[q] = 0;
    }
    for (size_t i = 0; i < n; i++) {
        rows[i] = pr[i].row;
        for (uint32_t q = 0; q < nqi; q++) {
            const uint32_t code = t->qi[q].codes[pr[i].row];
            if (code < lo[q]) lo[q] = code;
            if (code > hi[q]) hi[q] = code;
        }
    }
    const int holds = part_holds(job, t, rows, n, scratch, counts);
    if (holds < 0) return ak_err_nomem(&job->err);
    if (!holds) {
        for (size_t i = 0; i < n; i++) class_of[pr[i].row] = PARTITION_SUPPRESSED;
        *suppressed += n;
        return ANONKIT_OK;
    }
    uint32_t id;
    AK_CHECK(partition_add_class_in(np, lo, hi, rlo ? rlo : lo, rhi ? rhi : hi, n, &id, &job->err));
    for (size_t i = 0; i < n; i++) class_of[pr[i].row] = id;
    return ANONKIT_OK;
}

int job_separate_missing(anonkit_job *job, const table *t, partition *p)
{
    uint32_t qs[32], nq = 0;
    for (uint32_t q = 0; q < t->nqi; q++)
        if (t->qi[q].kind == ATTR_NUMERIC && t->qi[q].has_missing) {
            if (nq == 32)
                return ak_err_set(&job->err, ANONKIT_E_USAGE, NULL, 0, 0,
                                  "more than 32 numeric quasi-identifiers hold missing values"),
                       job_fail(job);
            qs[nq++] = q;
        }
    if (!nq || p->node) return ANONKIT_OK; /* full-domain classes take missing values through their hierarchies */
    const uint32_t nqi = t->nqi;
    const size_t nclasses = p->nclasses, nrows = t->nrows ? t->nrows : 1;
    /* the rows of each class together: rows[start[c] .. start[c + 1]) */
    size_t *start = calloc(nclasses + 2, sizeof *start);
    size_t *rows = malloc(nrows * sizeof *rows), *part_rows = malloc(nrows * sizeof *part_rows);
    pattern_row *pr = malloc(nrows * sizeof *pr), *left = malloc(nrows * sizeof *left);
    uint32_t *scratch = malloc(nrows * sizeof *scratch), *counts = malloc(nrows * sizeof *counts);
    uint32_t *box = malloc(4 * (size_t)nqi * sizeof *box);
    partition np;
    memset(&np, 0, sizeof np);
    int rc = start && rows && part_rows && pr && left && scratch && counts && box ? partition_init(&np, 0, nqi, &job->err)
                                                                                  : ak_err_nomem(&job->err);
    if (rc == 0) {
        for (size_t r = 0; r < t->nrows; r++)
            if (p->class_of[r] != PARTITION_SUPPRESSED) start[p->class_of[r] + 2]++;
        for (size_t c = 0; c < nclasses; c++) start[c + 2] += start[c + 1];
        for (size_t r = 0; r < t->nrows; r++)
            if (p->class_of[r] != PARTITION_SUPPRESSED) rows[start[p->class_of[r] + 1]++] = r;
    }
    uint64_t suppressed = p->suppressed;
    size_t nleft = 0; /* rows of parts that could not stand alone, pooled by pattern at the end */
    for (size_t c = 0; rc == 0 && c < nclasses; c++) {
        const size_t *cr = rows + start[c];
        const size_t n = start[c + 1] - start[c];
        const uint32_t *lo = partition_lo(p, c), *hi = partition_hi(p, c);
        int mixed = 0;
        for (uint32_t i = 0; i < nq; i++) mixed |= lo[qs[i]] == 0 && hi[qs[i]] > 0;
        if (!mixed) {
            uint32_t id;
            rc = partition_add_class_in(&np, lo, hi, partition_rlo(p, c), partition_rhi(p, c), p->count[c], &id,
                                        &job->err);
            for (size_t i = 0; rc == 0 && i < n; i++) p->class_of[cr[i]] = id;
            continue;
        }
        /* one part per pattern of missing QIs, in its part of the class's region */
        for (size_t i = 0; i < n; i++) pr[i] = (pattern_row){pattern_of(t, qs, nq, cr[i]), cr[i]};
        qsort(pr, n, sizeof *pr, cmp_pattern_row);
        for (size_t a = 0; rc == 0 && a < n;) {
            size_t b = a;
            while (b < n && pr[b].pattern == pr[a].pattern) b++;
            uint32_t *rlo = box + 2 * nqi, *rhi = box + 3 * nqi;
            memcpy(rlo, partition_rlo(p, c), nqi * sizeof *rlo);
            memcpy(rhi, partition_rhi(p, c), nqi * sizeof *rhi);
            for (uint32_t i = 0; i < nq; i++) {
                if (pr[a].pattern & (1u << i)) rlo[qs[i]] = rhi[qs[i]] = 0;
                else if (rlo[qs[i]] == 0) rlo[qs[i]] = 1;
            }
            for (size_t i = a; i < b; i++) part_rows[i - a] = pr[i].row;
            const int holds = part_holds(job, t, part_rows, b - a, scratch, counts);
            if (holds < 0)
                rc = ak_err_nomem(&job->err);
            else if (holds)
                rc = add_part(job, t, pr + a, b - a, rlo, rhi, &np, p->class_of, &suppressed, part_rows, scratch,
                              counts, box);
            else
                for (size_t i = a; i < b; i++) left[nleft++] = pr[i];
            a = b;
        }
    }
    /* the parts that could not stand alone: one class per pattern over all of them, if it satisfies the model;
     * such a class has no region of its own (its rows come from the regions of several classes), which the
     * recoding rules, a tiling of the domain, cannot express */
    if (rc == 0 && nleft && job->rules)
        rc = ak_err_set(&job->err, ANONKIT_E_USAGE, NULL, 0, 0,
                        "--rules: %zu rows with missing values of numeric quasi-identifier '%s' (or present values "
                        "beside them) form parts of classes too small to stand alone, which only a class pooled across "
                        "the partition takes, and the recoding rules cannot express that; run without --rules, or with "
                        "a smaller --k",
                        nleft, t->qi[qs[0]].name);
    qsort(left, nleft, sizeof *left, cmp_pattern_row);
    for (size_t a = 0; rc == 0 && a < nleft;) {
        size_t b = a;
        while (b < nleft && left[b].pattern == left[a].pattern) b++;
        rc = add_part(job, t, left + a, b - a, NULL, NULL, &np, p->class_of, &suppressed, part_rows, scratch, counts,
                      box);
        a = b;
    }
    if (rc == 0) {
        /* the new classes replace the old; class_of was rewritten in place and stays */
        uint32_t *class_of = p->class_of;
        p->class_of = np.class_of;
        np.class_of = class_of;
        const size_t keep_rows = p->nrows;
        partition old = *p;
        *p = np;
        p->nrows = keep_rows;
        p->suppressed = suppressed;
        memset(&np, 0, sizeof np);
        partition_free(&old);
    }
    partition_free(&np);
    free(start);
    free(rows);
    free(part_rows);
    free(pr);
    free(left);
    free(scratch);
    free(counts);
    free(box);
    return rc < 0 ? job_fail(job) : ANONKIT_OK;
}
