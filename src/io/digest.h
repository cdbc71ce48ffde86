/* digest.h — what a run read of its input, so that a later read of the same
 * file can be proven to read the same bytes (docs/ARCHITECTURE.md §3 step 1):
 * the writer reads the input a second time for the columns it copies
 * through, and what it publishes must be what the run read and encoded.
 *
 * The records of the file fall into segments: those that begin in one block
 * of DIGEST_BLOCK_BYTES of the file and on one side of two cuts, the end of
 * the header and, when a read cut the file in two pieces, that cut. A
 * segment's bytes are the bytes of its records as the file holds them (quotes
 * and line ends included, the empty lines between records left out), and its
 * hash the XXH3 of those bytes seeded with the offset of its first record: a
 * CSV reader hashes them as it hands the records out
 * (csv_reader_digest), in long runs rather than record by record. A digest
 * holds, per block, the sum (mod 2^64) of its segments' hashes, and the number
 * of records. A read in two pieces cut where the first read cut the file (or
 * a read in one piece told where that was) makes the same segments, so the
 * pieces' digests add up (digest_merge) to the first read's; an edit, a
 * truncation, an append or another file renamed over the path changes some
 * segment's bytes or first offset, and so a sum or the count. A block's sum
 * can be checked as soon as a read has passed it, before the rows read in it
 * are written. */
#ifndef AK_DIGEST_H
#define AK_DIGEST_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

#define DIGEST_BLOCK_SHIFT 20
#define DIGEST_BLOCK_BYTES ((uint64_t)1 << DIGEST_BLOCK_SHIFT)

typedef struct input_digest {
    uint64_t *sums;   /* per block; blocks from nblocks on hold no record */
    size_t nblocks;   /* blocks allocated */
    uint64_t records;
    uint64_t cut;     /* where the read that made it cut the file in two pieces (0: it did not) */
    int overflow;     /* a record began past the blocks allocated: the file grew while it was read */
} input_digest;

/* The block a record at offset begins in. */
static inline size_t digest_block(uint64_t offset) { return (size_t)(offset >> DIGEST_BLOCK_SHIFT); }

/* Makes room for a file of `bytes` bytes; -1 when out of memory. */
int digest_reserve(input_digest *d, uint64_t bytes);

/* Adds a segment's hash to block b (past the blocks reserved: overflow). */
static inline void digest_add_hash(input_digest *d, size_t b, uint64_t hash)
{
    if (b < d->nblocks) d->sums[b] += hash;
    else d->overflow = 1;
}

/* Adds every segment and record of `from` to `into`; -1 when out of memory. */
int digest_merge(input_digest *into, const input_digest *from);

/* The sum of block b (0 beyond the blocks allocated). */
static inline uint64_t digest_sum(const input_digest *d, size_t b) { return b < d->nblocks ? d->sums[b] : 0; }

/* Whether blocks [first, last) of a and b hold the same sums (neither overflowed). */
int digest_blocks_equal(const input_digest *a, const input_digest *b, size_t first, size_t last);

/* Whether a and b digest the same records. */
int digest_equal(const input_digest *a, const input_digest *b);

void digest_free(input_digest *d);

/* A reader's records going into a digest (csv_reader_digest): the open
 * segment, whose bytes not hashed yet lie at [pos, end) of the reader's
 * buffer. The reader hands every record over (digest_stream_record) before
 * it changes the record's bytes (unescaping), tells when its buffer moves
 * (digest_stream_moved) and ends the last segment (digest_stream_close). */
typedef struct digest_stream {
    input_digest *d;
    void *xs;            /* the open segment's XXH3 state */
    int open;
    size_t block;        /* the open segment's block */
    uint64_t limit;      /* it holds the records before this offset (the next block, cut or header end) */
    size_t pos, end;
    uint64_t data_start; /* records from here on are data (UINT64_MAX: the header is still to come) */
    uint64_t cut;        /* 0: none */
} digest_stream;

/* Starts s into d (room made for a file of file_size bytes), the reader's
 * unread bytes beginning at buffer index pos; -1 when out of memory. */
int digest_stream_start(digest_stream *s, input_digest *d, uint64_t file_size, uint64_t data_start, uint64_t cut,
                        size_t pos);
/* digest_stream_record's slow path: a record at `offset`, buf[start ..),
 * that does not simply continue the open segment. */
void digest_stream_turn(digest_stream *s, const char *buf, uint64_t offset, size_t start);
/* Hashes the open segment's bytes not hashed yet. */
void digest_stream_feed(digest_stream *s, const char *buf);
/* The reader's buffer is about to move: what is pending is hashed now. */
void digest_stream_moved(digest_stream *s, const char *buf);
/* Ends the open segment (if any): its hash goes to the digest. */
void digest_stream_close(digest_stream *s, const char *buf);
void digest_stream_free(digest_stream *s);

/* A record at `offset`, buf[start, end) as the input holds it (end_offset
 * where it ends in the file), goes into the digest: into the open segment,
 * or a new one when its block or its side of the header's end or of the cut
 * is another. The bytes are hashed lazily, in long runs: when the buffer
 * moves, before a record with escaped quotes is unescaped, and when the
 * segment ends. Empty lines between records are left out. */
static inline void digest_stream_record(digest_stream *s, const char *buf, uint64_t offset, size_t start, size_t end,
                                        int escaped, uint64_t end_offset)
{
    if (offset >= s->limit || start != s->end) digest_stream_turn(s, buf, offset, start);
    s->end = end;
    s->d->records++;
    if (escaped) digest_stream_feed(s, buf); /* before the unescaping changes the bytes */
    if (s->data_start == UINT64_MAX) s->data_start = end_offset; /* the header is a segment of its own */
}

/* The error of an input `name` that does not read a second time as it did
 * the first (ANONKIT_E_INPUT). */
int digest_changed(ak_error *err, const char *name);

#endif
