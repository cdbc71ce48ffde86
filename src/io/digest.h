/* digest.h — what a run read of its input, so that a later read of the same
 * file can be proven to read the same bytes (docs/ARCHITECTURE.md §3 step 1):
 * the writer reads the input a second time for the columns it copies
 * through, and what it publishes must be what the run read and encoded.
 *
 * Per block of DIGEST_BLOCK_BYTES of the file, the sum (mod 2^64) of the
 * hashes of the records that begin in it (csv_record.hash: XXH3 of the
 * record's bytes, seeded with its offset; csv_reader_hash_records), and the
 * number of records. A sum does not depend on the order in which its records
 * are added, so a file read in two pieces on two threads, each piece into a
 * digest of its own, adds up (digest_merge) to the digest of a whole read,
 * wherever either read cut the file. An edit, a truncation, an append or
 * another file renamed over the path changes the hash or the offset of some
 * record, and so a sum or the count; a block's sum can be checked as soon as
 * a read has passed it, before the rows read in it are written. */
#ifndef AK_DIGEST_H
#define AK_DIGEST_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "io/csv.h"

#define DIGEST_BLOCK_SHIFT 20
#define DIGEST_BLOCK_BYTES ((uint64_t)1 << DIGEST_BLOCK_SHIFT)

typedef struct input_digest {
    uint64_t *sums;   /* per block; blocks from nblocks on hold no record */
    size_t nblocks;   /* blocks allocated */
    uint64_t records;
} input_digest;

/* The block a record at offset begins in. */
static inline size_t digest_block(uint64_t offset) { return (size_t)(offset >> DIGEST_BLOCK_SHIFT); }

/* Makes room for a file of `bytes` bytes at once (a digest grows by itself
 * otherwise); -1 when out of memory. */
int digest_reserve(input_digest *d, uint64_t bytes);

/* Adds a record read with csv_reader_hash_records; -1 when out of memory. */
int digest_add(input_digest *d, const csv_record *rec);

/* Adds every record of `from` to `into`; -1 when out of memory. */
int digest_merge(input_digest *into, const input_digest *from);

/* The sum of block b (0 beyond the blocks allocated). */
static inline uint64_t digest_sum(const input_digest *d, size_t b) { return b < d->nblocks ? d->sums[b] : 0; }

/* Whether blocks [first, last) of a and b hold the same sums. */
int digest_blocks_equal(const input_digest *a, const input_digest *b, size_t first, size_t last);

/* Whether a and b digest the same records. */
int digest_equal(const input_digest *a, const input_digest *b);

/* Back to no record (the blocks stay allocated). */
void digest_clear(input_digest *d);
void digest_free(input_digest *d);

/* The error of an input `name` that does not read a second time as it did
 * the first (ANONKIT_E_INPUT). */
int digest_changed(ak_error *err, const char *name);

#endif
