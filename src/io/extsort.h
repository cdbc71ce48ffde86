/* extsort.h — sorting fixed-width records within a memory budget (docs/ARCHITECTURE.md §10).
 *
 * A record is `words` uint64_t values compared lexicographically, word 0 first
 * (callers put the key first and a unique row number last, so the order is
 * total and reproducible). Records are added one at a time; while they fit in
 * the budget they stay in memory and are sorted there. Beyond it, each full
 * buffer is sorted and written as a run to a spill file. Spill files hold
 * personal data, so they have no name: they are created in the temporary
 * folder itself with O_TMPFILE (mode 0600), or where the file system lacks it
 * by mkstemp and unlinked before anything is written. No private folder is
 * made, so however the process ends (SIGKILL included) the kernel frees the
 * files and nothing is left to remove. Runs are written and read in
 * blocks and merged with a heap, in several passes when there are more runs
 * than block buffers fit in the budget. Blocks read and written are counted. */
#ifndef AK_EXTSORT_H
#define AK_EXTSORT_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

typedef struct extsort extsort;

typedef struct extsort_stats {
    uint64_t records;
    uint64_t runs;           /* runs written (0: sorted in memory) */
    uint64_t merge_passes;   /* passes that wrote merged runs back to disk */
    uint64_t blocks_written; /* blocks of block_size bytes (the last of a run may be shorter) */
    uint64_t blocks_read;
    size_t block_size;
} extsort_stats;

/* memory: bytes the sorter may hold (0 = unlimited, always in memory);
 * tmpdir: folder for the unnamed spill files (NULL or "": $TMPDIR, else /tmp);
 * it is first used at the first spill, so a sort that stays in memory never
 * touches it. */
int extsort_open(extsort **out /* OUT */, size_t words, size_t memory, const char *tmpdir, ak_error *err);
int extsort_add(extsort *s, const uint64_t *record, ak_error *err);
/* Ends the input; the records can then be read in order with extsort_next. */
int extsort_finish(extsort *s, ak_error *err);
/* Points *record at the next record in order (valid until the next call);
 * returns 1, 0 at the end, or a negative status. */
int extsort_next(extsort *s, const uint64_t **record /* OUT */, ak_error *err);
void extsort_get_stats(const extsort *s, extsort_stats *out /* OUT */);
/* Closes the spill files (which frees them) and the sorter; accepts NULL. */
void extsort_free(extsort *s);

/* Sorts n records of `words` words held in memory, in the same order, on up
 * to `threads` threads (the result does not depend on their number). */
int extsort_sort_array(uint64_t *records, size_t n, size_t words, unsigned threads, ak_error *err);

#endif
