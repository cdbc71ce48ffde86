/* hugemem.c — the huge-page hint of hugemem.h (madvise MADV_HUGEPAGE, a Linux
 * extension: _DEFAULT_SOURCE exposes it beside the POSIX names). */
#define _DEFAULT_SOURCE
#include "common/hugemem.h"

#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#define HUGE_PAGE ((uintptr_t)2 << 20)
/* Arrays from which ak_huge_malloc makes whole huge pages (at most half of it wasted). */
#define AK_HUGE_ALIGN_MIN_BYTES ((size_t)2 << 20)

void ak_huge_advise(void *p, size_t bytes)
{
#ifdef MADV_HUGEPAGE
    if (!p || bytes < AK_HUGE_MIN_BYTES) return;
    const uintptr_t start = ((uintptr_t)p + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
    const uintptr_t end = ((uintptr_t)p + bytes) & ~(HUGE_PAGE - 1);
    if (end > start) (void)madvise((void *)start, end - start, MADV_HUGEPAGE); /* a refusal only costs speed */
#else
    (void)p;
    (void)bytes;
#endif
}

void *ak_huge_malloc(size_t bytes)
{
#ifdef MADV_HUGEPAGE
    /* Large enough to gain from huge pages: whole ones, aligned, so that no
     * part of the array is left on small pages at either end. */
    if (bytes >= AK_HUGE_ALIGN_MIN_BYTES && bytes <= SIZE_MAX - HUGE_PAGE) {
        const size_t rounded = (bytes + HUGE_PAGE - 1) & ~(size_t)(HUGE_PAGE - 1);
        void *p = aligned_alloc(HUGE_PAGE, rounded);
        if (p) {
            (void)madvise(p, rounded, MADV_HUGEPAGE);
            return p;
        }
    }
#endif
    void *p = malloc(bytes);
    ak_huge_advise(p, bytes);
    return p;
}

void *ak_huge_realloc(void *p, size_t bytes)
{
    if (!p) return ak_huge_malloc(bytes); /* a first allocation: whole huge pages */
    void *q = realloc(p, bytes);
    ak_huge_advise(q, bytes);
    return q;
}
