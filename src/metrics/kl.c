/* kl.c — the KL-divergence query-accuracy measure of [Ghinita07] §6.3 (see kl.h).
 * Each group-by's cubes are dense arrays, one sensitive value at a time; Q is built with a
 * difference array: a published row adds its weight at the 2^i corners of its
 * box with alternating signs, and prefix sums along every grouped QI spread
 * it uniformly over the box, so a row costs O(2^i), not the box's volume. */
#include "metrics/kl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/interval.h"
#include "metrics/metrics.h"
#include "common/numparse.h"
#include "core/numdict.h"

/* The exact order of numeric QI a's value of code c and x. */
static int code_cmp(const table_qi *a, uint32_t c, const ak_num *x)
{
    ak_num v = {a->values[c], 0, 0}; /* integer mode: at most nine digits, exact */
    if (a->texts && ak_num_parse_exact(a->texts[c], strlen(a->texts[c]), &v) != 0)
        v = (ak_num){a->values[c], 0, 0}; /* (not reached: the table accepted the text) */
    return ak_num_cmp(&v, x);
}

int metrics_range_of_published(const table *t, uint32_t q, const char *text, size_t len, uint32_t *lo, uint32_t *hi)
{
    const table_qi *a = &t->qi[q];
    if (!a->ncodes) return -1;
    if (len == 1 && text[0] == '*') {
        *lo = 0;
        *hi = a->ncodes - 1;
        return 0;
    }
    if (a->kind == ATTR_CATEGORICAL) {
        const uint32_t node = hier_find_label(a->h, text, len);
        if (node == UINT32_MAX) return -1;
        *lo = hier_node_at(a->h, node)->lo;
        *hi = hier_node_at(a->h, node)->hi;
        return 0;
    }
    /* a value or an interval (common/interval.h: "lo-hi", "lo - hi", "[lo, hi]",
     * "[lo, hi[", "<hi", ">=lo"), read and compared exactly: a range covers the
     * original's values it holds, not those its doubles would
     * (9007199254740997 is not in 9007199254740993-9007199254740995) */
    if (metrics_is_missing_text(t, q, text, len)) { /* the missing value: code 0 */
        *lo = *hi = 0;
        return 0;
    }
    ak_interval_text iv;
    ak_num vlo = {0}, vhi = {0};
    if (ak_interval_split(text, len, &iv, metrics_bounds_are_numbers) != 0) return -1;
    if ((!iv.lo_unbounded && ak_num_parse_exact(iv.lo, iv.lo_len, &vlo) != 0) ||
        (!iv.hi_unbounded && ak_num_parse_exact(iv.hi, iv.hi_len, &vhi) != 0))
        return -1;
    if (!iv.lo_unbounded && !iv.hi_unbounded && ak_num_cmp(&vhi, &vlo) < 0) return -1;
    /* the first code with value >= vlo, the last with value <= vhi (< vhi when the upper bound is open) */
    const uint32_t first = a->has_missing ? 1 : 0; /* code 0 of a column with missing values is missing */
    uint32_t a0 = first, b0 = iv.lo_unbounded ? first : a->ncodes;
    while (a0 < b0) {
        uint32_t mid = a0 + (b0 - a0) / 2;
        if (code_cmp(a, mid, &vlo) < 0) a0 = mid + 1;
        else b0 = mid;
    }
    uint32_t a1 = iv.hi_unbounded ? a->ncodes : 0, b1 = a->ncodes;
    while (a1 < b1) {
        uint32_t mid = a1 + (b1 - a1) / 2;
        if (iv.hi_open ? code_cmp(a, mid, &vhi) < 0 : code_cmp(a, mid, &vhi) <= 0) a1 = mid + 1;
        else b1 = mid;
    }
    if (a0 >= a1) return -1; /* no value of the original inside */
    *lo = a0;
    *hi = a1 - 1;
    return 0;
}

/* Rows of the original and of the published table, grouped by sensitive
 * value: rows of value v are at[start[v] .. start[v+1]). */
typedef struct by_value {
    size_t *start, *at;
} by_value;

static int group_by_value(const uint32_t *sa, size_t n, uint32_t nsa, by_value *b)
{
    b->start = calloc((size_t)nsa + 2, sizeof *b->start);
    b->at = malloc((n ? n : 1) * sizeof *b->at);
    if (!b->start || !b->at) return -1;
    for (size_t r = 0; r < n; r++) b->start[sa[r] + 2]++;
    for (uint32_t v = 0; v < nsa; v++) b->start[v + 2] += b->start[v + 1];
    for (size_t r = 0; r < n; r++) b->at[b->start[sa[r] + 1]++] = r;
    return 0;
}

/* The divergence of one group-by over the QIs dims[0..level): per sensitive
 * value, a dense slice over the grouped QIs' codes. */
static int groupby_kl(const table *t, const kl_published *pub, const by_value *orig, const by_value *pubv,
                      const uint32_t *dims, unsigned level, double *out, ak_error *err)
{
    const uint32_t nsa = t->sensitive_dict.count;
    size_t stride[level ? level : 1], slice = 1;
    for (unsigned j = level; j-- > 0;) {
        stride[j] = slice;
        const size_t nc = t->qi[dims[j]].ncodes ? t->qi[dims[j]].ncodes : 1;
        if (slice > KL_MAX_CELLS / nc) goto too_big;
        slice *= nc;
    }
    double *p = calloc(slice, sizeof *p), *q = calloc(slice, sizeof *q);
    if (!p || !q) {
        free(p), free(q);
        return ak_err_nomem(err);
    }
    const uint32_t nqi = t->nqi;
    const double np = (double)t->nrows, nq = (double)pub->nrows;
    double kl = 0;
    for (uint32_t v = 0; v < nsa && isfinite(kl); v++) {
        if (orig->start[v + 1] == orig->start[v]) continue; /* no P mass: no term */
        memset(q, 0, slice * sizeof *q);
        for (size_t i = pubv->start[v]; i < pubv->start[v + 1]; i++) {
            const size_t r = pubv->at[i];
            const uint32_t *lo = pub->lo + r * nqi, *hi = pub->hi + r * nqi;
            double volume = 1;
            for (unsigned j = 0; j < level; j++) volume *= (double)(hi[dims[j]] - lo[dims[j]] + 1);
            const double w = 1.0 / volume;
            for (unsigned mask = 0; mask < (1u << level); mask++) {
                size_t at = 0;
                int sign = 1, outside = 0;
                for (unsigned j = 0; j < level; j++) {
                    uint32_t c = lo[dims[j]];
                    if (mask >> j & 1) {
                        c = hi[dims[j]] + 1;
                        sign = -sign;
                        if (c >= t->qi[dims[j]].ncodes) outside = 1;
                    }
                    at += (size_t)c * stride[j];
                }
                if (!outside) q[at] += sign * w;
            }
        }
        /* prefix sums along every grouped QI spread each box over its cells */
        for (unsigned j = 0; j < level; j++) {
            const size_t nc = t->qi[dims[j]].ncodes, s = stride[j];
            for (size_t c = 0; c < slice; c++)
                if ((c / s) % nc) q[c] += q[c - s];
        }
        for (size_t i = orig->start[v]; i < orig->start[v + 1]; i++) {
            const size_t r = orig->at[i];
            size_t at = 0;
            for (unsigned j = 0; j < level; j++) at += (size_t)t->qi[dims[j]].codes[r] * stride[j];
            p[at] += 1;
        }
        for (size_t i = orig->start[v]; i < orig->start[v + 1]; i++) {
            const size_t r = orig->at[i];
            size_t at = 0;
            for (unsigned j = 0; j < level; j++) at += (size_t)t->qi[dims[j]].codes[r] * stride[j];
            if (p[at] <= 0) continue; /* this cell's term is already counted */
            const double pc = p[at] / np, qc = q[at] / nq;
            p[at] = 0;
            if (qc <= 1e-15 * pc) {
                kl = INFINITY;
                break;
            }
            kl += pc * log(pc / qc);
        }
    }
    free(p), free(q);
    *out = kl;
    return ANONKIT_OK;
too_big:
    return ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0,
                      "--kl-level %u: a group-by's cube would exceed %zu cells per sensitive value; use a lower level",
                      level, (size_t)KL_MAX_CELLS);
}

int metrics_kl_divergence(const table *t, const kl_published *pub, unsigned level, double *mean, size_t *groupbys,
                          ak_error *err)
{
    *mean = 0;
    *groupbys = 0;
    if (level < 1 || level > t->nqi || level > 16)
        return ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0, "--kl-level must be from 1 to the %u QIs", t->nqi);
    if (!t->sensitive_codes)
        return ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0, "--kl-level needs the sensitive column (--sensitive)");
    if (!t->nrows || !pub->nrows) return ANONKIT_OK;
    by_value orig = {0}, pubv = {0};
    if (group_by_value(t->sensitive_codes, t->nrows, t->sensitive_dict.count, &orig) != 0 ||
        group_by_value(pub->sa, pub->nrows, t->sensitive_dict.count, &pubv) != 0) {
        free(orig.start), free(orig.at), free(pubv.start), free(pubv.at);
        return ak_err_nomem(err);
    }
    /* every combination of `level` QIs, in lexicographic order */
    uint32_t dims[16];
    int rc = ANONKIT_OK;
    for (unsigned j = 0; j < level; j++) dims[j] = j;
    double sum = 0;
    size_t count = 0;
    for (;;) {
        double kl = 0;
        if ((rc = groupby_kl(t, pub, &orig, &pubv, dims, level, &kl, err)) < 0) break;
        sum += kl;
        count++;
        int j = (int)level - 1;
        while (j >= 0 && dims[j] == t->nqi - level + (unsigned)j) j--;
        if (j < 0) break;
        dims[j]++;
        for (unsigned i = (unsigned)j + 1; i < level; i++) dims[i] = dims[i - 1] + 1;
    }
    free(orig.start), free(orig.at), free(pubv.start), free(pubv.at);
    if (rc < 0) return rc;
    *mean = sum / (double)count;
    *groupbys = count;
    return ANONKIT_OK;
}
