/* hash.h — open-addressing hash maps that intern keys to dense ids.
 *
 * strmap maps byte strings to ids 0, 1, 2, ... in order of first insertion and
 * keeps a NUL-terminated copy of every key; u64map does the same for 64-bit
 * keys. Both use linear probing on a power-of-two table with XXH3 hashes.
 * Hand-written because these lookups are the hot path of encoding: a generic
 * library table (uthash) measured ~3x slower per lookup.
 *
 * u64scratch is a u64map for one step of a loop, emptied before the next
 * (the x values of one evaluation in TDS4SA): emptying it takes time in
 * proportion to its keys however large its table grew, and its lookup is
 * inline, for the innermost loops. */
#ifndef AK_HASH_H
#define AK_HASH_H

#include <stddef.h>
#include <stdint.h>

#define AK_NOT_FOUND UINT32_MAX

typedef struct strmap {
    uint32_t *slots;     /* id + 1 per slot, 0 = empty */
    uint32_t *slot_hash; /* low 32 bits of the key's hash per slot */
    size_t mask;         /* slot count - 1 */
    uint32_t count;      /* keys stored */
    uint64_t *offsets;   /* offsets[id] = start of key id in bytes */
    uint32_t *lengths;   /* lengths[id] */
    size_t cap_ids;
    char *bytes;         /* keys, each followed by a NUL */
    size_t nbytes, cap_bytes;
} strmap;

/* Returns 0, or -1 when out of memory. */
int strmap_init(strmap *m, size_t expected_keys);
void strmap_free(strmap *m);
/* Id of key, inserting it when absent (*inserted tells). Returns 0 or -1 (no memory). */
int strmap_intern(strmap *m, const char *key, size_t len, uint32_t *id /* OUT */,
                  int *inserted /* OUT, may be NULL */);
/* Id of key or AK_NOT_FOUND. */
uint32_t strmap_find(const strmap *m, const char *key, size_t len);
static inline const char *strmap_key(const strmap *m, uint32_t id) { return m->bytes + m->offsets[id]; }
static inline uint32_t strmap_key_len(const strmap *m, uint32_t id) { return m->lengths[id]; }

typedef struct u64map {
    uint64_t *keys;
    uint32_t *slots; /* id + 1 per slot, 0 = empty */
    size_t mask;
    uint32_t count;
    uint64_t *id_keys; /* id_keys[id] = key */
    size_t cap_ids;
} u64map;

int u64map_init(u64map *m, size_t expected_keys);
void u64map_free(u64map *m);
int u64map_intern(u64map *m, uint64_t key, uint32_t *id /* OUT */, int *inserted /* OUT, may be NULL */);
uint32_t u64map_find(const u64map *m, uint64_t key);

/* A strong 64-bit finalizer (splitmix64's): keys are often small consecutive
 * integers or packed fields whose low bits vary little. */
static inline uint64_t ak_mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* A zeroed u64scratch is an empty map (its table comes with the first key). */
typedef struct u64scratch {
    uint64_t *keys;
    uint32_t *ids;     /* id + 1 per slot, 0 = empty */
    uint32_t *slot_of; /* per id: its slot, so that emptying visits only those */
    size_t mask;       /* slot count - 1; 0 before the first key */
    uint32_t count;    /* keys stored, ids 0 .. count-1 */
} u64scratch;

/* Doubles the table (64 slots at first), keeping the ids. 0 or -1 (no memory). */
int u64scratch_grow(u64scratch *m);

/* Id of key, inserted when absent (*inserted says). Returns 0 or -1 (no
 * memory). At most half the slots are taken. */
static inline int u64scratch_intern(u64scratch *m, uint64_t key, uint32_t *id /* OUT */, int *inserted /* OUT */)
{
    if ((size_t)m->count + 1 > (m->mask + 1) / 2 && u64scratch_grow(m) != 0) return -1;
    size_t s = ak_mix64(key) & m->mask;
    while (m->ids[s]) {
        if (m->keys[s] == key) {
            *id = m->ids[s] - 1;
            *inserted = 0;
            return 0;
        }
        s = (s + 1) & m->mask;
    }
    m->keys[s] = key;
    m->ids[s] = m->count + 1;
    m->slot_of[m->count] = (uint32_t)s;
    *id = m->count++;
    *inserted = 1;
    return 0;
}

/* Empties the map, keeping its table: the slots of its keys only. Ids start
 * again from 0. */
void u64scratch_reset(u64scratch *m);
void u64scratch_free(u64scratch *m);

#endif
