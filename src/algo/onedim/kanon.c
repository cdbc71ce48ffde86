/* kanon.c — optimal 1-D k-anonymity by dynamic programming (001 §3, Figure 3;
 * §5.1 for the multi-dimensional cost).
 *
 * Opt(i), the least information loss of the first i rows in 1-D order, is
 * min over k <= L <= 2k-1 of Opt(i - L) + L * NCP(rows i-L .. i-1): by Lemma 1
 * an optimal partitioning has only groups of k..2k-1 consecutive rows. For a
 * fixed end the candidate groups are grown leftwards one row at a time,
 * keeping their minimum bounding rectangle, so each candidate costs O(d)
 * (the incremental MBR of §5.1) and the whole run O(n k d). The Fast
 * variants cost a group by its extent on the 1-D key instead, in O(1).
 * Only the last 2k values of Opt are kept (a ring); the chosen group length
 * of every prefix is kept to read the solution back. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "algo/onedim/onedim.h"
#include "metrics/metrics.h"

/* The incremental bounding box of a candidate group and its weighted NCP. */
typedef struct mbr {
    uint32_t d;
    uint32_t *lo, *hi;
    double *ncp;   /* per QI */
    double *span;  /* per numeric QI: the table's range */
    double sum;    /* sum of w_q ncp_q */
} mbr;

static void mbr_start(mbr *b, const table *t, uint32_t row)
{
    for (uint32_t q = 0; q < b->d; q++) {
        b->lo[q] = b->hi[q] = t->qi[q].codes[row];
        b->ncp[q] = 0;
    }
    b->sum = 0;
}

/* Adds a row to the box; recomputes the NCP of the QIs whose range grew. */
static void mbr_extend(mbr *b, const table *t, uint32_t row, const double *weights)
{
    int grew = 0;
    for (uint32_t q = 0; q < b->d; q++) {
        const uint32_t c = t->qi[q].codes[row];
        if (c >= b->lo[q] && c <= b->hi[q]) continue;
        if (c < b->lo[q]) b->lo[q] = c;
        else b->hi[q] = c;
        const table_qi *a = &t->qi[q];
        /* numeric NCP inline (the hot path); categorical through the hierarchy */
        b->ncp[q] = a->kind == ATTR_NUMERIC ? (b->span[q] > 0 ? (a->values[b->hi[q]] - a->values[b->lo[q]]) / b->span[q] : 0)
                                             : table_ncp(t, q, b->lo[q], b->hi[q]);
        grew = 1;
    }
    if (!grew) return;
    double s = 0;
    for (uint32_t q = 0; q < b->d; q++) s += (weights ? weights[q] : 1.0) * b->ncp[q];
    b->sum = s;
}

int hil_kanon_dp(const table *t, const uint32_t *order, size_t n, uint64_t k, const double *weights,
                 const double *gap, uint32_t *sizes, size_t *ngroups, double *cost, ak_error *err)
{
    *ngroups = 0;
    *cost = 0;
    if (k < 1 || n < k || k > UINT32_MAX / 2)
        return ak_err_set(err, ANONKIT_E_INTERNAL, NULL, 0, 0, "1-D k-anonymity with k = %llu on %zu rows",
                          (unsigned long long)k, n);
    const size_t ring = (size_t)(2 * k);
    const uint32_t d = t->nqi;
    double *opt = malloc(ring * sizeof *opt);
    uint32_t *len = malloc((n + 1) * sizeof *len);
    mbr b = {d, malloc((d ? d : 1) * sizeof *b.lo), malloc((d ? d : 1) * sizeof *b.hi),
             malloc((d ? d : 1) * sizeof *b.ncp), malloc((d ? d : 1) * sizeof *b.span), 0};
    if (!opt || !len || !b.lo || !b.hi || !b.ncp || !b.span) {
        free(opt), free(len), free(b.lo), free(b.hi), free(b.ncp), free(b.span);
        return ak_err_nomem(err);
    }
    for (uint32_t q = 0; q < d; q++) {
        const table_qi *a = &t->qi[q];
        b.span[q] = a->kind == ATTR_NUMERIC && a->ncodes > 1 ? a->values[a->ncodes - 1] - a->values[0] : 0;
    }
    opt[0] = 0;
    len[0] = 0;
    for (size_t i = 1; i <= n; i++) {
        double best = INFINITY;
        uint32_t best_len = 0;
        if (i >= k) {
            const size_t longest = i < 2 * k - 1 ? i : (size_t)(2 * k - 1);
            double extent = 0; /* Fast: key distance from row i-L to row i-1 */
            if (!gap) mbr_start(&b, t, order[i - 1]);
            for (size_t l = 2; l <= k; l++) { /* the k rows every candidate has */
                if (gap) extent += gap[i - l + 1];
                else mbr_extend(&b, t, order[i - l], weights);
            }
            for (size_t l = k; l <= longest; l++) {
                if (l > k) {
                    if (gap) extent += gap[i - l + 1];
                    else mbr_extend(&b, t, order[i - l], weights);
                }
                const size_t j = i - l;
                const double before = j == 0 ? 0 : (j < k ? INFINITY : opt[j % ring]);
                if (before == INFINITY) continue;
                const double c = before + (double)l * (gap ? extent : b.sum);
                if (c < best) {
                    best = c;
                    best_len = (uint32_t)l;
                }
            }
        }
        opt[i % ring] = best;
        len[i] = best_len;
    }
    *cost = opt[n % ring];
    size_t count = 0;
    for (size_t i = n; i > 0; i -= len[i]) {
        if (!len[i]) { /* cannot happen for n >= k */
            free(opt), free(len), free(b.lo), free(b.hi), free(b.ncp), free(b.span);
            return ak_err_set(err, ANONKIT_E_INTERNAL, NULL, 0, 0, "1-D k-anonymity found no partitioning");
        }
        sizes[count++] = len[i];
    }
    for (size_t a = 0, z = count - 1; a < z; a++, z--) {
        uint32_t x = sizes[a];
        sizes[a] = sizes[z];
        sizes[z] = x;
    }
    *ngroups = count;
    free(opt), free(len), free(b.lo), free(b.hi), free(b.ncp), free(b.span);
    return ANONKIT_OK;
}
