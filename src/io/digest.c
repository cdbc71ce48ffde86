/* digest.c — per block of an input file, the sums of the hashes of its
 * segments of records (digest.h; the CSV reader hashes them), to prove that a
 * second read reads what the first one did. */
#include "io/digest.h"

#include <stdlib.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

/* Grows d to at least `blocks` blocks, the new ones empty. */
static int digest_grow(input_digest *d, size_t blocks)
{
    if (blocks <= d->nblocks) return 0;
    size_t n = d->nblocks ? d->nblocks : 16;
    while (n < blocks) n *= 2;
    uint64_t *sums = realloc(d->sums, n * sizeof *sums);
    if (!sums) return -1;
    memset(sums + d->nblocks, 0, (n - d->nblocks) * sizeof *sums);
    d->sums = sums;
    d->nblocks = n;
    return 0;
}

int digest_reserve(input_digest *d, uint64_t bytes)
{
    return digest_grow(d, digest_block(bytes) + 1);
}

int digest_merge(input_digest *into, const input_digest *from)
{
    if (digest_grow(into, from->nblocks) != 0) return -1;
    for (size_t b = 0; b < from->nblocks; b++) into->sums[b] += from->sums[b];
    into->records += from->records;
    into->overflow |= from->overflow;
    return 0;
}

int digest_blocks_equal(const input_digest *a, const input_digest *b, size_t first, size_t last)
{
    if (a->overflow || b->overflow) return 0;
    for (size_t i = first; i < last; i++)
        if (digest_sum(a, i) != digest_sum(b, i)) return 0;
    return 1;
}

int digest_equal(const input_digest *a, const input_digest *b)
{
    const size_t n = a->nblocks > b->nblocks ? a->nblocks : b->nblocks;
    return a->records == b->records && digest_blocks_equal(a, b, 0, n);
}

void digest_free(input_digest *d)
{
    free(d->sums);
    memset(d, 0, sizeof *d);
}

int digest_changed(ak_error *err, const char *name)
{
    return ak_err_set(err, ANONKIT_E_INPUT, NULL, 0, 0,
                      "%s changed while it was being anonymized: a second read of it does not give the bytes "
                      "the run read and encoded; nothing is published",
                      name);
}

/* ---- a reader's records going in ---- */

int digest_stream_start(digest_stream *s, input_digest *d, uint64_t file_size, uint64_t data_start, uint64_t cut,
                        size_t pos)
{
    if (!s->xs && !(s->xs = XXH3_createState())) return -1;
    if (digest_reserve(d, file_size) != 0) return -1;
    s->d = d;
    s->open = 0;
    s->limit = 0; /* the first record opens a segment */
    s->pos = s->end = pos;
    s->data_start = data_start;
    s->cut = cut;
    return 0;
}

void digest_stream_feed(digest_stream *s, const char *buf)
{
    if (s->end > s->pos) (void)XXH3_64bits_update(s->xs, buf + s->pos, s->end - s->pos);
    s->pos = s->end;
}

void digest_stream_moved(digest_stream *s, const char *buf)
{
    digest_stream_feed(s, buf);
    s->pos = s->end = 0; /* (a record at 0 after the move continues the segment; one later follows a gap) */
}

void digest_stream_close(digest_stream *s, const char *buf)
{
    if (!s->open) return;
    digest_stream_feed(s, buf);
    digest_add_hash(s->d, s->block, XXH3_64bits_digest(s->xs));
    s->open = 0;
    s->limit = 0;
}

void digest_stream_turn(digest_stream *s, const char *buf, uint64_t offset, size_t start)
{
    if (s->open && offset < s->limit) {
        digest_stream_feed(s, buf); /* the segment's bytes before the empty lines, which are not hashed */
        s->pos = start;
        return;
    }
    digest_stream_close(s, buf);
    (void)XXH3_64bits_reset_withSeed(s->xs, offset);
    s->open = 1;
    s->block = digest_block(offset);
    s->pos = start;
    uint64_t limit = ((uint64_t)s->block + 1) << DIGEST_BLOCK_SHIFT;
    if (offset < s->data_start) limit = offset + 1; /* the header: alone (the next record starts after it) */
    else if (s->cut > offset && s->cut < limit) limit = s->cut;
    s->limit = limit;
}

void digest_stream_free(digest_stream *s)
{
    if (s->xs) XXH3_freeState(s->xs);
    s->xs = NULL;
}
