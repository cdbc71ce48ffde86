/* metrics.c — DM, C_AVG, NCP and GCP (003 quality metrics; 001 §2.1 eq. 1-2). */
#include "metrics/metrics.h"

#include "core/numdict.h"

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

static double categorical_ncp(const hier *h, uint32_t node)
{
    const hier_node *u = hier_node_at(h, node);
    uint32_t leaves = u->hi - u->lo + 1;
    return leaves == 1 ? 0.0 : (double)leaves / (double)hier_leaf_count(h);
}

static double numeric_span(const table_qi *a)
{
    return a->ncodes > 1 ? a->values[a->ncodes - 1] - a->values[0] : 0;
}

double metrics_ncp(const table *t, uint32_t q, uint32_t lo, uint32_t hi)
{
    const table_qi *a = &t->qi[q];
    if (a->kind == ATTR_CATEGORICAL) return categorical_ncp(a->h, hier_lca(a->h, lo, hi));
    double span = numeric_span(a);
    return span > 0 ? (a->values[hi] - a->values[lo]) / span : 0;
}

int metrics_from_partition(const table *t, const partition *p, uint64_t k, const double *weights,
                           metrics *out, ak_error *err)
{
    AK_CHECK(metrics_init(out, t->nqi, weights, err));
    double ncp[t->nqi ? t->nqi : 1];
    for (size_t c = 0; c < p->nclasses; c++) {
        for (uint32_t q = 0; q < t->nqi; q++) ncp[q] = metrics_ncp(t, q, partition_lo(p, c)[q], partition_hi(p, c)[q]);
        metrics_add_class(out, p->count[c], ncp);
    }
    if (p->suppressed) metrics_add_suppressed(out, p->suppressed);
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
        *ncp = categorical_ncp(a->h, node);
        return 0;
    }
    /* "v" or "lo-hi" (the separator is a '-' after a digit or a point), inside
     * the original's range: anything else is not a value this table publishes. */
    const double min = a->ncodes ? a->values[0] : 0, max = a->ncodes ? a->values[a->ncodes - 1] : 0;
    double span = numeric_span(a), lo, hi;
    if (numdict_parse(text, len, &lo) == 0) {
        if (lo < min || lo > max) return -1;
        *ncp = 0;
        return 0;
    }
    for (size_t i = 1; i + 1 < len; i++) {
        if (text[i] != '-' || !((text[i - 1] >= '0' && text[i - 1] <= '9') || text[i - 1] == '.')) continue;
        if (numdict_parse(text, i, &lo) == 0 && numdict_parse(text + i + 1, len - i - 1, &hi) == 0 && hi >= lo) {
            if (lo < min || hi > max) return -1;
            *ncp = span > 0 ? (hi - lo) / span : 0;
            return 0;
        }
    }
    return -1;
}
