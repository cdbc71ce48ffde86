/* compare.h — comparisons shared across the library: orders for qsort, and
 * the extent of a column of codes. */
#ifndef AK_COMPARE_H
#define AK_COMPARE_H

#include <stddef.h>
#include <stdint.h>

/* Ascending order of uint64_t values (callers pack keys into them). */
static inline int ak_cmp_u64(const void *a, const void *b)
{
    const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Widens [*lo, *hi] to hold v[0 .. n). Eight independent lanes, so that the
 * compiler makes vector code of it at -O2 (a single running minimum is a
 * chain of dependent compares it leaves scalar). */
static inline void ak_min_max(const uint32_t *v, size_t n, uint32_t *lo, uint32_t *hi)
{
    uint32_t l[8], h[8];
    for (unsigned k = 0; k < 8; k++) l[k] = *lo, h[k] = *hi;
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (unsigned k = 0; k < 8; k++) {
            l[k] = v[i + k] < l[k] ? v[i + k] : l[k];
            h[k] = v[i + k] > h[k] ? v[i + k] : h[k];
        }
    for (; i < n; i++) {
        l[0] = v[i] < l[0] ? v[i] : l[0];
        h[0] = v[i] > h[0] ? v[i] : h[0];
    }
    for (unsigned k = 0; k < 8; k++) {
        *lo = l[k] < *lo ? l[k] : *lo;
        *hi = h[k] > *hi ? h[k] : *hi;
    }
}

#endif
