/* hugemem.h — large arrays backed by transparent huge pages where the
 * system offers them (Linux with THP in "madvise" mode): fewer page faults
 * when an array is first written and fewer TLB misses when it is read at
 * random (value arrays, work rows, the rows of a shuffled output). Only a
 * hint: without it, or where it is refused, nothing changes but speed. */
#ifndef AK_HUGEMEM_H
#define AK_HUGEMEM_H

#include <stddef.h>

/* Arrays smaller than this are left alone. */
#define AK_HUGE_MIN_BYTES ((size_t)4 << 20)

/* Asks for huge pages under the whole 2 MiB pages inside [p, p + bytes), an
 * array just allocated (the hint applies to pages not yet touched). */
void ak_huge_advise(void *p, size_t bytes);

/* malloc(bytes) with ak_huge_advise; from 2 MiB on, the array is made of
 * whole huge pages (2 MiB aligned, its size rounded up). Freed by free. */
void *ak_huge_malloc(size_t bytes);

/* realloc(p, bytes) with ak_huge_advise on the result; ak_huge_malloc when p
 * is NULL. */
void *ak_huge_realloc(void *p, size_t bytes);

#endif
