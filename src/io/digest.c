/* digest.c — per block of an input file, the sums of the hashes of its
 * segments of records (digest.h; the CSV reader hashes them), to prove that a
 * second read reads what the first one did. */
#include "io/digest.h"

#include <stdlib.h>
#include <string.h>

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
