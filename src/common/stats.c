/* stats.c — the sparse-resettable sensitive histogram of stats.h. */
#include "common/stats.h"

#include <stdlib.h>
#include <string.h>

int ak_hist_init(ak_hist *h, uint32_t domain)
{
    memset(h, 0, sizeof *h);
    size_t n = domain ? domain : 1;
    h->count = calloc(n, sizeof *h->count);
    h->touched = malloc(n * sizeof *h->touched);
    if (!h->count || !h->touched) {
        ak_hist_free(h);
        return -1;
    }
    return 0;
}

void ak_hist_free(ak_hist *h)
{
    if (!h) return;
    free(h->count);
    free(h->touched);
    memset(h, 0, sizeof *h);
}

void ak_hist_clear(ak_hist *h)
{
    for (size_t i = 0; i < h->ntouched; i++) h->count[h->touched[i]] = 0;
    h->ntouched = 0;
    h->total = 0;
    h->wsum = 0;
}

size_t ak_hist_counts(const ak_hist *h, uint32_t *out)
{
    for (size_t i = 0; i < h->ntouched; i++) out[i] = h->count[h->touched[i]];
    return h->ntouched;
}

size_t ak_hist_counts_minus(const ak_hist *whole, const ak_hist *part, uint32_t *out)
{
    size_t n = 0;
    for (size_t i = 0; i < whole->ntouched; i++) {
        uint32_t code = whole->touched[i];
        uint32_t c = whole->count[code] - part->count[code];
        if (c) out[n++] = c;
    }
    return n;
}

size_t ak_hist_pairs(const ak_hist *h, uint32_t *codes, uint32_t *counts)
{
    size_t n = 0;
    for (size_t i = 0; i < h->ntouched; i++) {
        const uint32_t code = h->touched[i];
        if (!h->count[code]) continue;
        codes[n] = code;
        counts[n++] = h->count[code];
    }
    return n;
}

size_t ak_hist_pairs_minus(const ak_hist *whole, const ak_hist *part, uint32_t *codes, uint32_t *counts)
{
    size_t n = 0;
    for (size_t i = 0; i < whole->ntouched; i++) {
        const uint32_t code = whole->touched[i];
        const uint32_t c = whole->count[code] - part->count[code];
        if (!c) continue;
        codes[n] = code;
        counts[n++] = c;
    }
    return n;
}

void ak_hist_sort_touched(ak_hist *h)
{
    for (size_t i = 1; i < h->ntouched; i++) { /* insertion sort: few classes */
        const uint32_t v = h->touched[i];
        size_t j = i;
        while (j > 0 && h->touched[j - 1] > v) {
            h->touched[j] = h->touched[j - 1];
            j--;
        }
        h->touched[j] = v;
    }
}

double ak_hist_xlogx(ak_hist *h)
{
    ak_hist_sort_touched(h);
    double sum = 0;
    for (size_t i = 0; i < h->ntouched; i++) sum += ak_xlog2x(h->count[h->touched[i]]);
    return sum;
}
