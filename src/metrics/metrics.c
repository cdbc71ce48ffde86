/* metrics.c — DM, C_AVG, NCP and GCP ([LeFevre06] quality metrics; [Ghinita07] §2.1 eq. 1-2),
 * [Wang06] §6's distortion per record, class entropy and RMSE ([LeFevre07] §5.5). */
#include "metrics/metrics.h"

#include "common/compare.h"
#include "common/interval.h"
#include "common/numparse.h"
#include "core/numdict.h"
#include "common/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int metrics_init(metrics *m, uint32_t nqi, const double *weights, ak_error *err)
{
    memset(m, 0, sizeof *m);
    m->nqi = nqi;
    m->min_class = UINT64_MAX;
    m->ncp = calloc(nqi ? nqi : 1, sizeof *m->ncp);
    m->weights = malloc((nqi ? nqi : 1) * sizeof *m->weights);
    if (!m->ncp || !m->weights) {
        metrics_free(m);
        return ak_err_nomem(err);
    }
    for (uint32_t q = 0; q < nqi; q++) m->weights[q] = weights ? weights[q] : 1.0;
    return ANONKIT_OK;
}

void metrics_free(metrics *m)
{
    if (!m) return;
    free(m->ncp);
    free(m->weights);
    m->ncp = m->weights = NULL;
}

void metrics_add_class(metrics *m, uint64_t count, const double *ncp)
{
    m->classes++;
    m->published += count;
    if (count < m->min_class) m->min_class = count;
    if (count > m->max_class) m->max_class = count;
    m->dm += (double)count * (double)count;
    double weighted = 0;
    for (uint32_t q = 0; q < m->nqi; q++) {
        m->ncp[q] += (double)count * ncp[q];
        weighted += m->weights[q] * ncp[q];
    }
    m->weighted_sum += (double)count * weighted;
}

void metrics_add_suppressed(metrics *m, uint64_t count)
{
    m->suppressed += count;
    double weights = 0;
    for (uint32_t q = 0; q < m->nqi; q++) {
        m->ncp[q] += (double)count;
        weights += m->weights[q];
    }
    m->weighted_sum += (double)count * weights;
}

void metrics_finish(metrics *m, uint64_t k)
{
    m->rows = m->published + m->suppressed;
    double weights = 0;
    for (uint32_t q = 0; q < m->nqi; q++) weights += m->weights[q];
    m->dm += (double)m->suppressed * (double)m->rows;
    m->gcp = m->rows && weights > 0 ? m->weighted_sum / (weights * (double)m->rows) : 0;
    for (uint32_t q = 0; q < m->nqi; q++) m->ncp[q] = m->rows ? m->ncp[q] / (double)m->rows : 0;
    m->mean_class = m->classes ? (double)m->published / (double)m->classes : 0;
    m->cavg = m->classes ? m->mean_class / (double)(k ? k : 1) : 0;
    if (!m->classes) m->min_class = 0;
}

double metrics_distortion(const table *t, uint32_t q, uint32_t lo, uint32_t hi)
{
    const table_qi *a = &t->qi[q];
    if (a->kind == ATTR_CATEGORICAL) return (double)hier_node_at(a->h, hier_lca(a->h, lo, hi))->level;
    const double span = a->ncodes > 1 ? a->values[a->ncodes - 1] - a->values[0] : 0;
    return span > 0 ? (a->values[hi] - a->values[lo]) / span : 0;
}

static double numeric_span(const table_qi *a)
{
    return a->ncodes > 1 ? a->values[a->ncodes - 1] - a->values[0] : 0;
}

/* Classes ahead of the one measured whose value-array entries are prefetched. */
#define METRICS_PREFETCH_CLASSES 8

void metrics_add_partition(metrics *m, const table *t, const partition *p)
{
    double ncp[t->nqi ? t->nqi : 1];
    for (size_t c = 0; c < p->nclasses; c++) {
        /* the values at a box's ends lie anywhere in the value arrays: asked
         * for a few classes ahead, so that their cache misses overlap */
        if (c + METRICS_PREFETCH_CLASSES < p->nclasses) {
            const uint32_t *lo = partition_lo(p, c + METRICS_PREFETCH_CLASSES);
            const uint32_t *hi = partition_hi(p, c + METRICS_PREFETCH_CLASSES);
            for (uint32_t q = 0; q < t->nqi; q++)
                if (t->qi[q].kind == ATTR_NUMERIC) {
                    __builtin_prefetch(t->qi[q].values + lo[q]);
                    __builtin_prefetch(t->qi[q].values + hi[q]);
                }
        }
        for (uint32_t q = 0; q < t->nqi; q++) ncp[q] = table_ncp(t, q, partition_lo(p, c)[q], partition_hi(p, c)[q]);
        metrics_add_class(m, p->count[c], ncp);
    }
    if (p->suppressed) metrics_add_suppressed(m, p->suppressed);
}

int metrics_from_partition(const table *t, const partition *p, uint64_t k, const double *weights,
                           metrics *out, ak_error *err)
{
    AK_CHECK(metrics_init(out, t->nqi, weights, err));
    metrics_add_partition(out, t, p);
    metrics_finish(out, k);
    return ANONKIT_OK;
}

int metrics_ncp_of_published(const table *t, uint32_t q, const char *text, size_t len, double *ncp)
{
    const table_qi *a = &t->qi[q];
    if (len == 1 && text[0] == '*') {
        *ncp = 1.0;
        return 0;
    }
    if (a->kind == ATTR_CATEGORICAL) {
        uint32_t node = hier_find_label(a->h, text, len);
        if (node == UINT32_MAX) return -1;
        *ncp = table_ncp(t, q, hier_node_at(a->h, node)->lo, hier_node_at(a->h, node)->hi);
        return 0;
    }
    /* "v" or "lo-hi" inside the original's range: anything else is not a value this table publishes. */
    const double min = a->ncodes ? a->values[0] : 0, max = a->ncodes ? a->values[a->ncodes - 1] : 0;
    double span = numeric_span(a), lo, hi;
    if (metrics_numeric_of_published(t, q, text, len, &lo, &hi) != 0 || lo < min || hi > max) return -1;
    *ncp = span > 0 ? (hi - lo) / span : 0;
    return 0;
}

int metrics_numeric_of_published(const table *t, uint32_t q, const char *text, size_t len, double *lo, double *hi)
{
    const table_qi *a = &t->qi[q];
    if (len == 1 && text[0] == '*') {
        *lo = a->ncodes ? a->values[0] : 0;
        *hi = a->ncodes ? a->values[a->ncodes - 1] : 0;
        return 0;
    }
    if (metrics_is_missing_text(t, q, text, len)) {
        *lo = *hi = a->values[0];
        return 0;
    }
    ak_interval_text iv;
    if (ak_interval_split(text, len, &iv, metrics_bounds_are_numbers) != 0) return -1;
    if (iv.lo_unbounded) *lo = a->ncodes ? a->values[0] : 0;
    else if (ak_num_parse(iv.lo, iv.lo_len, lo) != 0) return -1;
    if (iv.hi_unbounded) *hi = a->ncodes ? a->values[a->ncodes - 1] : 0;
    else if (ak_num_parse(iv.hi, iv.hi_len, hi) != 0) return -1;
    return *hi >= *lo ? 0 : -1;
}

int metrics_is_missing_text(const table *t, uint32_t q, const char *text, size_t len)
{
    const table_qi *a = &t->qi[q];
    if (a->kind != ATTR_NUMERIC || !a->has_missing) return 0;
    if (len == 0 || (strlen(a->texts[0]) == len && memcmp(a->texts[0], text, len) == 0)) return 1;
    for (size_t i = 0; i < t->nmissing; i++)
        if (strlen(t->missing[i]) == len && memcmp(t->missing[i], text, len) == 0) return 1;
    return 0;
}

int metrics_bounds_are_numbers(const char *lo, size_t lo_len, const char *hi, size_t hi_len)
{
    return ak_num_is_decimal(lo, lo_len) && ak_num_is_decimal(hi, hi_len);
}

/* N H(C | G) = sum over groups of n_g log n_g - sum_c n_gc log n_gc, added up
 * group by group in ascending order and, inside a group, label by label in
 * ascending order; the counts come from count (a dense table) or sort_counts. */
static double entropy_sum(size_t ngroups, uint32_t nlabels, const uint64_t *count)
{
    double sum = 0;
    for (size_t g = 0; g < ngroups; g++) {
        const uint64_t *row = count + g * nlabels;
        uint64_t group_size = 0;
        for (uint32_t c = 0; c < nlabels; c++) {
            if (!row[c]) continue;
            sum -= ak_xlog2x((double)row[c]);
            group_size += row[c];
        }
        if (group_size) sum += ak_xlog2x((double)group_size);
    }
    return sum;
}

int metrics_conditional_entropy(const uint32_t *group_of, size_t n, const uint32_t *label, double *out,
                                ak_error *err)
{
    *out = 0;
    if (n == 0) return ANONKIT_OK;
    /* few groups times labels: count them in a dense table, in O(n) */
    uint32_t gmax = 0, lmax = 0;
    for (size_t i = 0; i < n; i++) {
        if (group_of[i] > gmax) gmax = group_of[i];
        if (label[i] > lmax) lmax = label[i];
    }
    const size_t ngroups = (size_t)gmax + 1, nlabels = (size_t)lmax + 1;
    if (ngroups <= (n + 4096) / nlabels) {
        uint64_t *count = calloc(ngroups * nlabels, sizeof *count);
        if (!count) return ak_err_nomem(err);
        for (size_t i = 0; i < n; i++) count[(size_t)group_of[i] * nlabels + label[i]]++;
        *out = entropy_sum(ngroups, (uint32_t)nlabels, count) / (double)n;
        free(count);
        return ANONKIT_OK;
    }
    /* (group, label) pairs sorted: each group's labels are then adjacent. */
    uint64_t *pairs = malloc(n * sizeof *pairs);
    if (!pairs) return ak_err_nomem(err);
    for (size_t i = 0; i < n; i++) pairs[i] = (uint64_t)group_of[i] << 32 | label[i];
    qsort(pairs, n, sizeof *pairs, ak_cmp_u64);
    /* the same sum as entropy_sum, in the same order */
    double sum = 0;
    size_t i = 0;
    while (i < n) {
        const uint32_t g = (uint32_t)(pairs[i] >> 32);
        size_t group_size = 0;
        while (i < n && (uint32_t)(pairs[i] >> 32) == g) {
            size_t j = i;
            while (j < n && pairs[j] == pairs[i]) j++;
            sum -= ak_xlog2x((double)(j - i));
            group_size += j - i;
            i = j;
        }
        sum += ak_xlog2x((double)group_size);
    }
    free(pairs);
    *out = sum / (double)n;
    return ANONKIT_OK;
}

int metrics_rmse(const uint32_t *group_of, size_t n, size_t ngroups, const double *target, double *out,
                 ak_error *err)
{
    *out = 0;
    if (n == 0) return ANONKIT_OK;
    long double *sum = calloc(ngroups ? ngroups : 1, sizeof *sum);
    uint64_t *count = calloc(ngroups ? ngroups : 1, sizeof *count);
    if (!sum || !count) {
        free(sum);
        free(count);
        return ak_err_nomem(err);
    }
    for (size_t i = 0; i < n; i++) {
        sum[group_of[i]] += target[i];
        count[group_of[i]]++;
    }
    for (size_t g = 0; g < ngroups; g++)
        if (count[g]) sum[g] /= (long double)count[g]; /* now the mean */
    long double squared = 0;
    for (size_t i = 0; i < n; i++) {
        const long double e = target[i] - sum[group_of[i]];
        squared += e * e;
    }
    free(sum);
    free(count);
    *out = (double)sqrtl(squared / (long double)n);
    return ANONKIT_OK;
}

/* class_of with suppressed rows as one more class, for the functions above. */
static uint32_t *groups_of_partition(const partition *p)
{
    uint32_t *group_of = malloc((p->nrows ? p->nrows : 1) * sizeof *group_of);
    if (!group_of) return NULL;
    for (size_t i = 0; i < p->nrows; i++)
        group_of[i] = p->class_of[i] == PARTITION_SUPPRESSED ? (uint32_t)p->nclasses : p->class_of[i];
    return group_of;
}

int metrics_partition_entropy(const table *t, const partition *p, double *out, ak_error *err)
{
    uint32_t *group_of = groups_of_partition(p);
    if (!group_of) return ak_err_nomem(err);
    int rc = metrics_conditional_entropy(group_of, p->nrows, t->class_codes, out, err);
    free(group_of);
    return rc;
}

int metrics_partition_rmse(const table *t, const partition *p, double *out, ak_error *err)
{
    uint32_t *group_of = groups_of_partition(p);
    if (!group_of) return ak_err_nomem(err);
    int rc = metrics_rmse(group_of, p->nrows, p->nclasses + 1, t->target_values, out, err);
    free(group_of);
    return rc;
}
