/* bottomk.h — a bottom-m sample of a stream of fixed-width records: of the
 * records offered so far, the m with the least keys, where a record's key is
 * its priority (a hash of something that identifies it, see ak_priority)
 * and then its number in the stream. With priorities that behave as
 * independent uniform draws, the m least form a simple random sample without
 * replacement; unlike a reservoir driven by the record count (Algorithm R),
 * which record is sampled does not depend on how the stream was cut, so the
 * pieces of a stream read on several threads can each keep their own and the
 * union of the pieces' samples holds the whole stream's (bottomk_cut).
 *
 * Memory stays within m + m/8 records: when the store is full it is cut back
 * to its m least keys, and from then on only records below the greatest of
 * those are taken (the bound). Hand-written: a handful of lines on the first
 * scan's hot path of Rothko-S, and no packaged library offers it. */
#ifndef AK_BOTTOMK_H
#define AK_BOTTOMK_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "common/error.h"

/* A record's priority: a hash of the run's seed and x (splitmix64's finalizer
 * of their mix), uniform over 64 bits for distinct x. */
static inline uint64_t ak_priority(uint64_t seed, uint64_t x)
{
    uint64_t z = seed ^ (x * 0x9e3779b97f4a7c15ULL + 0x632be59bd9b4e019ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

typedef struct bottomk_key {
    uint64_t pri, seq;
} bottomk_key;

static inline int bottomk_key_less(bottomk_key a, bottomk_key b)
{
    return a.pri < b.pri || (a.pri == b.pri && a.seq < b.seq);
}

typedef struct bottomk {
    uint8_t *slots;    /* n of cap records: key (pri, seq) then the record's width bytes */
    size_t width, stride, n, cap, m;
    int bounded;       /* some record was dropped: the store holds exactly the keys up to bound */
    bottomk_key bound;
} bottomk;

/* Bytes a store takes per record of `width` bytes, its key included. */
static inline size_t bottomk_record_bytes(size_t width) { return sizeof(bottomk_key) + (width + 7) / 8 * 8; }

/* A store for the m least of records of `width` bytes (m >= 1): at most
 * m + m/8 + 1 records of bottomk_record_bytes(width). */
int bottomk_init(bottomk *s, size_t width, size_t m, ak_error *err);
void bottomk_free(bottomk *s);

/* Whether a record of that key would be kept; records must be offered with
 * increasing seq. */
static inline int bottomk_wants(const bottomk *s, uint64_t pri, uint64_t seq)
{
    return !s->bounded || bottomk_key_less((bottomk_key){pri, seq}, s->bound);
}

/* From now on takes only records of priority at most pri: a guess at the
 * m-th least priority of the stream (from its expected length) spares the
 * store most of the records it would take and cut away again. A guess too
 * low leaves it fewer than the records sought, which bottomk_cut reports. */
void bottomk_admit_below(bottomk *s, uint64_t pri);

/* Offers the record at rec (width bytes) with key (pri, seq). */
int bottomk_offer(bottomk *s, uint64_t pri, uint64_t seq, const void *rec, ak_error *err);

/* The i-th record kept (in the order offered) and its key. */
static inline const uint8_t *bottomk_record(const bottomk *s, size_t i, bottomk_key *key)
{
    const uint8_t *slot = s->slots + i * s->stride;
    if (key) memcpy(key, slot, sizeof *key);
    return slot + sizeof(bottomk_key);
}

/* Of the records the stores parts[0..nparts) kept, where part i's records
 * are numbered from seq_base[i] on in one stream (parts in stream order, each
 * offered its records with seq from 0): finds the want-th least key over all
 * the parts, with seq taken as seq_base[i] + seq. Returns 1 with it in *cut
 * when the parts together hold the whole stream's want least keys (every
 * record of the stream with a key up to *cut was kept); 0 when they do not
 * (a part's bound lies below it, or fewer than want were kept), and then the
 * sample must be drawn otherwise. */
int bottomk_cut(const bottomk *parts, const uint64_t *seq_base, unsigned nparts, size_t want, bottomk_key *cut,
                ak_error *err);

/* Drops the records whose key (seq taken as seq_base + seq) lies above cut
 * and gives back the memory they took; the store takes no more records. */
void bottomk_trim(bottomk *s, uint64_t seq_base, bottomk_key cut);

#endif
