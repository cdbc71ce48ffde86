/* stats.h — class statistics: a sparse-resettable histogram of sensitive
 * codes (docs/ARCHITECTURE.md §4). Adding is O(1); clearing and listing the non-zero
 * counts cost only the number of distinct codes touched, so small classes
 * over a large sensitive domain stay cheap. */
#ifndef AK_STATS_H
#define AK_STATS_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

typedef struct ak_hist {
    uint32_t *count;   /* count[code], size = domain */
    uint32_t *touched; /* codes with a non-zero count, in order of first touch */
    size_t ntouched;
    uint64_t total;
    /* Optional: a weight per code whose sum over the rows added the adders that
     * know of it keep in wsum (t-closeness's lower bound, model/closeness.h);
     * NULL unless a caller sets it. ak_hist_clear resets wsum. */
    const uint32_t *weight;
    uint64_t wsum;
} ak_hist;

/* x log2 x, with 0 log 0 = 0: the terms of entropies in bits (InfoGain,
 * conditional entropy). */
static inline double ak_xlog2x(double x) { return x > 0 ? x * log2(x) : 0; }

/* Returns 0 or -1 (no memory). */
int ak_hist_init(ak_hist *h, uint32_t domain);
void ak_hist_free(ak_hist *h);

static inline void ak_hist_add(ak_hist *h, uint32_t code)
{
    if (h->count[code]++ == 0) h->touched[h->ntouched++] = code;
    h->total++;
}

/* Sets every count back to zero. */
void ak_hist_clear(ak_hist *h);

/* Writes the non-zero counts into out (room for ntouched) and returns how many. */
size_t ak_hist_counts(const ak_hist *h, uint32_t *out);

/* Writes the non-zero counts of whole - part (part must be a sub-multiset of
 * whole) and returns how many. */
size_t ak_hist_counts_minus(const ak_hist *whole, const ak_hist *part, uint32_t *out);

/* Writes the non-zero counts into counts[] and their codes into codes[] (room
 * for ntouched each) and returns how many: the histogram with value identities
 * that the distribution models need (model/closeness.h). */
size_t ak_hist_pairs(const ak_hist *h, uint32_t *codes, uint32_t *counts);

/* The same for whole - part (part a sub-multiset of whole). */
size_t ak_hist_pairs_minus(const ak_hist *whole, const ak_hist *part, uint32_t *codes, uint32_t *counts);

/* Puts the touched codes in ascending order, so that sums over them are formed
 * in one canonical order (in-memory and out-of-core runs must agree to the bit). */
void ak_hist_sort_touched(ak_hist *h);

/* The sum over codes of count log2 count, in ascending code order (InfoGain). */
double ak_hist_xlogx(ak_hist *h);

#endif
