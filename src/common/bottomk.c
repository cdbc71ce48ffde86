/* bottomk.c — bottom-m samples of record streams (see bottomk.h). */
#include "common/bottomk.h"

#include <stdlib.h>
#include <string.h>

static inline bottomk_key slot_key(const bottomk *s, size_t i)
{
    bottomk_key k;
    memcpy(&k, s->slots + i * s->stride, sizeof k);
    return k;
}

int bottomk_init(bottomk *s, size_t width, size_t m, ak_error *err)
{
    memset(s, 0, sizeof *s);
    s->width = width;
    s->stride = bottomk_record_bytes(width);
    s->m = m ? m : 1;
    s->cap = s->m + s->m / 8 + 1;
    if (!(s->slots = malloc(s->cap * s->stride))) return ak_err_nomem(err);
    return ANONKIT_OK;
}

void bottomk_free(bottomk *s)
{
    free(s->slots);
    memset(s, 0, sizeof *s);
}

static int key_cmp(const void *a, const void *b)
{
    const bottomk_key *x = a, *y = b;
    return bottomk_key_less(*x, *y) ? -1 : bottomk_key_less(*y, *x) ? 1 : 0;
}

/* The k-th least (from 1) of the distinct keys a[0..n), 1 <= k <= n, into
 * *out: the keys are counted in 4096 buckets of their priorities' high bits
 * (priorities are uniform, so a bucket holds about n / 4096 of them) and only
 * the bucket holding the k-th is sorted. */
static int kth_least(const bottomk_key *a, size_t n, size_t k, bottomk_key *out, ak_error *err)
{
    enum { BUCKETS = 4096 };
    uint64_t hi = 0;
    for (size_t i = 0; i < n; i++) hi = a[i].pri > hi ? a[i].pri : hi;
    unsigned shift = 0;
    while ((hi >> shift) >= BUCKETS) shift++;
    size_t *count = calloc(BUCKETS, sizeof *count);
    if (!count) return ak_err_nomem(err);
    for (size_t i = 0; i < n; i++) count[a[i].pri >> shift]++;
    size_t b = 0, below = 0;
    while (below + count[b] < k) below += count[b++];
    bottomk_key *in = malloc(count[b] * sizeof *in);
    if (!in) {
        free(count);
        return ak_err_nomem(err);
    }
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if ((a[i].pri >> shift) == b) in[m++] = a[i];
    qsort(in, m, sizeof *in, key_cmp);
    *out = in[k - below - 1];
    free(in);
    free(count);
    return ANONKIT_OK;
}

/* Cuts a full store back to its m least keys, which become the bound. */
static int compact(bottomk *s, ak_error *err)
{
    bottomk_key *keys = malloc(s->n * sizeof *keys);
    if (!keys) return ak_err_nomem(err);
    for (size_t i = 0; i < s->n; i++) keys[i] = slot_key(s, i);
    bottomk_key bound;
    const int rc = kth_least(keys, s->n, s->m, &bound, err);
    if (rc == ANONKIT_OK) {
        size_t kept = 0;
        for (size_t i = 0; i < s->n; i++) {
            if (bottomk_key_less(bound, keys[i])) continue;
            if (kept != i) memcpy(s->slots + kept * s->stride, s->slots + i * s->stride, s->stride);
            kept++;
        }
        s->n = kept;
        s->bound = bound;
        s->bounded = 1;
    }
    free(keys);
    return rc;
}

void bottomk_admit_below(bottomk *s, uint64_t pri)
{
    const bottomk_key bound = {pri, UINT64_MAX};
    if (!s->bounded || bottomk_key_less(bound, s->bound)) s->bound = bound;
    s->bounded = 1;
}

int bottomk_offer(bottomk *s, uint64_t pri, uint64_t seq, const void *rec, ak_error *err)
{
    if (!bottomk_wants(s, pri, seq)) return ANONKIT_OK;
    if (s->n == s->cap) {
        AK_CHECK(compact(s, err));
        if (!bottomk_wants(s, pri, seq)) return ANONKIT_OK;
    }
    uint8_t *slot = s->slots + s->n++ * s->stride;
    const bottomk_key key = {pri, seq};
    memcpy(slot, &key, sizeof key);
    memcpy(slot + sizeof key, rec, s->width);
    return ANONKIT_OK;
}

int bottomk_cut(const bottomk *parts, const uint64_t *seq_base, unsigned nparts, size_t want, bottomk_key *cut,
                ak_error *err)
{
    size_t total = 0;
    for (unsigned p = 0; p < nparts; p++) total += parts[p].n;
    if (want == 0 || total < want) return 0;
    bottomk_key *keys = malloc(total * sizeof *keys);
    if (!keys) return ak_err_nomem(err);
    size_t at = 0;
    for (unsigned p = 0; p < nparts; p++)
        for (size_t i = 0; i < parts[p].n; i++) {
            keys[at] = slot_key(&parts[p], i);
            keys[at++].seq += seq_base[p];
        }
    int rc = kth_least(keys, total, want, cut, err);
    free(keys);
    if (rc < 0) return rc;
    for (unsigned p = 0; p < nparts; p++) {
        const uint64_t seq = parts[p].bound.seq; /* (UINT64_MAX from bottomk_admit_below: stays the greatest) */
        const bottomk_key bound = {parts[p].bound.pri, seq > UINT64_MAX - seq_base[p] ? UINT64_MAX : seq + seq_base[p]};
        if (parts[p].bounded && bottomk_key_less(bound, *cut)) return 0;
    }
    return 1;
}

void bottomk_trim(bottomk *s, uint64_t seq_base, bottomk_key cut)
{
    size_t kept = 0;
    for (size_t i = 0; i < s->n; i++) {
        bottomk_key k = slot_key(s, i);
        k.seq += seq_base;
        if (bottomk_key_less(cut, k)) continue;
        if (kept != i) memcpy(s->slots + kept * s->stride, s->slots + i * s->stride, s->stride);
        kept++;
    }
    s->n = s->cap = kept;
    uint8_t *smaller = realloc(s->slots, (kept ? kept : 1) * s->stride);
    if (smaller) s->slots = smaller; /* (on failure the larger block stays: nothing is lost) */
}
