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

/* Whether the rows rows[0..n) form a class that satisfies the model. */
static int part_holds(const anonkit_job *job, const table *t, const size_t *rows, size_t n, uint32_t *scratch,
                      uint32_t *counts)
{
    if (n < job->model.k) return 0;
    size_t ncounts = 0;
    if (t->sensitive_codes) {
        for (size_t i = 0; i < n; i++) scratch[i] = t->sensitive_codes[rows[i]];
        qsort(scratch, n, sizeof *scratch, cmp_u32);
        for (size_t i = 0; i < n; i++) {
            if (i == 0 || scratch[i] != scratch[i - 1]) counts[ncounts++] = 0;
            counts[ncounts - 1]++;
        }
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

int job_separate_missing(anonkit_job *job, const table *t, partition *p)
{
    uint32_t qs[32], nq = 0;
    for (uint32_t q = 0; q < t->nqi; q++)
        if (t->qi[q].kind == ATTR_NUMERIC && t->qi[q].has_missing) {
            if (nq == 32)
                return ak_err_set(&job->err, ANONKIT_E_USAGE, NULL, 0, 0,
                                  "more than 32 numeric quasi-identifiers hold missing values");
            qs[nq++] = q;
        }
    if (nq && job->rules)
        return ak_err_set(&job->err, ANONKIT_E_USAGE, NULL, 0, 0,
                          "--rules: numeric quasi-identifier '%s' holds missing values, which the recoding rules "
                          "cannot express yet; give it an interval hierarchy (anonkit hierarchy), whose leaf NULL "
                          "takes them",
                          t->qi[qs[0]].name),
               job_fail(job);
    if (!nq || p->node) return ANONKIT_OK; /* full-domain classes take missing values through their hierarchies */
    const uint32_t nqi = t->nqi;
    const size_t nclasses = p->nclasses;
    /* the rows of each class together: rows[start[c] .. start[c + 1]) */
    size_t *start = calloc(nclasses + 2, sizeof *start);
    size_t *rows = malloc((t->nrows ? t->nrows : 1) * sizeof *rows);
    uint32_t *scratch = malloc((t->nrows ? t->nrows : 1) * sizeof *scratch);
    uint32_t *counts = malloc((t->nrows ? t->nrows : 1) * sizeof *counts);
    uint32_t *box = malloc(4 * (size_t)nqi * sizeof *box);
    partition np;
    memset(&np, 0, sizeof np);
    int rc = start && rows && scratch && counts && box ? partition_init(&np, 0, nqi, &job->err) : ak_err_nomem(&job->err);
    if (rc == 0) {
        for (size_t r = 0; r < t->nrows; r++)
            if (p->class_of[r] != PARTITION_SUPPRESSED) start[p->class_of[r] + 2]++;
        for (size_t c = 0; c < nclasses; c++) start[c + 2] += start[c + 1];
        for (size_t r = 0; r < t->nrows; r++)
            if (p->class_of[r] != PARTITION_SUPPRESSED) rows[start[p->class_of[r] + 1]++] = r;
    }
    uint64_t suppressed = p->suppressed;
    for (size_t c = 0; rc == 0 && c < nclasses; c++) {
        size_t *cr = rows + start[c];
        const size_t n = start[c + 1] - start[c];
        const uint32_t *lo = partition_lo(p, c), *hi = partition_hi(p, c);
        int mixed = 0;
        for (uint32_t i = 0; i < nq; i++) mixed |= lo[qs[i]] == 0 && hi[qs[i]] > 0;
        uint32_t id;
        if (!mixed) {
            rc = partition_add_class_in(&np, lo, hi, partition_rlo(p, c), partition_rhi(p, c), p->count[c], &id,
                                        &job->err);
            for (size_t i = 0; rc == 0 && i < n; i++) p->class_of[cr[i]] = id;
            continue;
        }
        /* one part per pattern of missing QIs: rows ordered by pattern */
        for (size_t i = 0; i < n; i++) scratch[i] = pattern_of(t, qs, nq, cr[i]);
        for (size_t i = 1; i < n; i++) { /* insertion sort by pattern, stable (classes are small) */
            const uint32_t key = scratch[i];
            const size_t row = cr[i];
            size_t j = i;
            while (j > 0 && scratch[j - 1] > key) {
                scratch[j] = scratch[j - 1];
                cr[j] = cr[j - 1];
                j--;
            }
            scratch[j] = key;
            cr[j] = row;
        }
        uint32_t *patterns = counts; /* reused below: the patterns first copied aside */
        memcpy(patterns, scratch, n * sizeof *patterns);
        for (size_t a = 0; rc == 0 && a < n;) {
            size_t b = a;
            while (b < n && patterns[b] == patterns[a]) b++;
            const uint32_t pattern = patterns[a];
            uint32_t *plo = box, *phi = box + nqi, *prlo = box + 2 * nqi, *prhi = box + 3 * nqi;
            for (uint32_t q = 0; q < nqi; q++) {
                plo[q] = UINT32_MAX;
                phi[q] = 0;
                prlo[q] = partition_rlo(p, c)[q];
                prhi[q] = partition_rhi(p, c)[q];
            }
            for (size_t i = a; i < b; i++)
                for (uint32_t q = 0; q < nqi; q++) {
                    const uint32_t code = t->qi[q].codes[cr[i]];
                    if (code < plo[q]) plo[q] = code;
                    if (code > phi[q]) phi[q] = code;
                }
            for (uint32_t i = 0; i < nq; i++) { /* the region: missing alone, or the present values */
                const uint32_t q = qs[i];
                if (pattern & (1u << i)) prlo[q] = prhi[q] = 0;
                else if (prlo[q] == 0) prlo[q] = 1;
            }
            /* counts is in use for the patterns: the model's counts go to the part past them */
            uint32_t *pcounts = malloc((b - a) * sizeof *pcounts);
            if (!pcounts) {
                rc = ak_err_nomem(&job->err);
                break;
            }
            const int holds = part_holds(job, t, cr + a, b - a, scratch, pcounts);
            free(pcounts);
            if (holds) {
                rc = partition_add_class_in(&np, plo, phi, prlo, prhi, b - a, &id, &job->err);
                for (size_t i = a; rc == 0 && i < b; i++) p->class_of[cr[i]] = id;
            } else {
                for (size_t i = a; i < b; i++) p->class_of[cr[i]] = PARTITION_SUPPRESSED;
                suppressed += b - a;
            }
            a = b;
        }
    }
    if (rc == 0) {
        /* the new classes replace the old; class_of was rewritten in place and stays */
        uint32_t *class_of = p->class_of;
        p->class_of = np.class_of;
        np.class_of = class_of;
        const size_t nrows = p->nrows;
        const partition old = *p;
        *p = np;
        p->nrows = nrows;
        p->suppressed = suppressed;
        memset(&np, 0, sizeof np);
        partition old_copy = old;
        partition_free(&old_copy);
    }
    partition_free(&np);
    free(start);
    free(rows);
    free(scratch);
    free(counts);
    free(box);
    return rc < 0 ? job_fail(job) : ANONKIT_OK;
}
