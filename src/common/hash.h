/* hash.h — open-addressing hash maps that intern keys to dense ids.
 *
 * strmap maps byte strings to ids 0, 1, 2, ... in order of first insertion and
 * keeps a NUL-terminated copy of every key; u64map does the same for 64-bit
 * keys. Both use linear probing on a power-of-two table with XXH3 hashes.
 * Hand-written because these lookups are the hot path of encoding: a generic
 * library table (uthash) measured ~3x slower per lookup. */
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
/* Empties the map, keeping its memory, for reuse: in time proportional to its
 * keys when they are few against its table (a map emptied once per small
 * group after growing for a large one), else by clearing the table. Ids start
 * again from 0. */
void u64map_reset(u64map *m);

#endif
