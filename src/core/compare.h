/* compare.h — comparison functions for qsort shared across the library. */
#ifndef AK_COMPARE_H
#define AK_COMPARE_H

#include <stdint.h>

/* Ascending order of uint64_t values (callers pack keys into them). */
static inline int ak_cmp_u64(const void *a, const void *b)
{
    const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

#endif
