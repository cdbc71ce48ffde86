/* hash.c — the interning hash maps of hash.h (linear probing, XXH3). */
#include "common/hash.h"

#include <stdlib.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

/* Whether a[0..len) equals b[0..len): short keys (the usual labels) by a few
 * overlapping word loads, all inside both keys, instead of a call to memcmp. */
static inline int key_equal(const char *a, const char *b, size_t len)
{
    if (len >= 8) {
        if (len > 16) return memcmp(a, b, len) == 0;
        uint64_t x0, y0, x1, y1; /* first and last 8 bytes (overlapping when len < 16) */
        memcpy(&x0, a, 8);
        memcpy(&y0, b, 8);
        memcpy(&x1, a + len - 8, 8);
        memcpy(&y1, b + len - 8, 8);
        return ((x0 ^ y0) | (x1 ^ y1)) == 0;
    }
    if (len >= 4) {
        uint32_t x0, y0, x1, y1;
        memcpy(&x0, a, 4);
        memcpy(&y0, b, 4);
        memcpy(&x1, a + len - 4, 4);
        memcpy(&y1, b + len - 4, 4);
        return ((x0 ^ y0) | (x1 ^ y1)) == 0;
    }
    for (size_t i = 0; i < len; i++)
        if (a[i] != b[i]) return 0;
    return 1;
}

static size_t table_size_for(size_t keys)
{
    size_t n = 16;
    while (n < keys * 2) n <<= 1;
    return n;
}

int strmap_init(strmap *m, size_t expected_keys)
{
    memset(m, 0, sizeof *m);
    size_t n = table_size_for(expected_keys);
    m->slots = calloc(n, sizeof *m->slots);
    m->slot_hash = malloc(n * sizeof *m->slot_hash);
    m->cap_ids = expected_keys > 16 ? expected_keys : 16;
    m->offsets = malloc(m->cap_ids * sizeof *m->offsets);
    m->lengths = malloc(m->cap_ids * sizeof *m->lengths);
    m->cap_bytes = m->cap_ids * 16;
    m->bytes = malloc(m->cap_bytes);
    m->mask = n - 1;
    if (!m->slots || !m->slot_hash || !m->offsets || !m->lengths || !m->bytes) {
        strmap_free(m);
        return -1;
    }
    return 0;
}

void strmap_free(strmap *m)
{
    if (!m) return;
    free(m->slots);
    free(m->slot_hash);
    free(m->offsets);
    free(m->lengths);
    free(m->bytes);
    memset(m, 0, sizeof *m);
}

static int strmap_grow(strmap *m)
{
    size_t n = (m->mask + 1) * 2;
    uint32_t *slots = calloc(n, sizeof *slots);
    uint32_t *hashes = malloc(n * sizeof *hashes);
    if (!slots || !hashes) {
        free(slots);
        free(hashes);
        return -1;
    }
    for (size_t i = 0; i <= m->mask; i++) {
        if (!m->slots[i]) continue;
        size_t j = m->slot_hash[i] & (n - 1);
        while (slots[j]) j = (j + 1) & (n - 1);
        slots[j] = m->slots[i];
        hashes[j] = m->slot_hash[i];
    }
    free(m->slots);
    free(m->slot_hash);
    m->slots = slots;
    m->slot_hash = hashes;
    m->mask = n - 1;
    return 0;
}

uint32_t strmap_find(const strmap *m, const char *key, size_t len)
{
    uint32_t h = (uint32_t)XXH3_64bits(key, len);
    for (size_t i = h & m->mask;; i = (i + 1) & m->mask) {
        uint32_t s = m->slots[i];
        if (!s) return AK_NOT_FOUND;
        uint32_t id = s - 1;
        if (m->slot_hash[i] == h && m->lengths[id] == len && key_equal(m->bytes + m->offsets[id], key, len))
            return id;
    }
}

int strmap_intern(strmap *m, const char *key, size_t len, uint32_t *id, int *inserted)
{
    uint32_t h = (uint32_t)XXH3_64bits(key, len);
    size_t i = h & m->mask;
    for (;; i = (i + 1) & m->mask) {
        uint32_t s = m->slots[i];
        if (!s) break;
        uint32_t sid = s - 1;
        if (m->slot_hash[i] == h && m->lengths[sid] == len && key_equal(m->bytes + m->offsets[sid], key, len)) {
            *id = sid;
            if (inserted) *inserted = 0;
            return 0;
        }
    }
    if (m->count == UINT32_MAX - 1) return -1;
    if (m->count >= m->cap_ids) {
        size_t cap = m->cap_ids * 2;
        uint64_t *offsets = realloc(m->offsets, cap * sizeof *offsets);
        if (!offsets) return -1;
        m->offsets = offsets;
        uint32_t *lengths = realloc(m->lengths, cap * sizeof *lengths);
        if (!lengths) return -1;
        m->lengths = lengths;
        m->cap_ids = cap;
    }
    if (m->nbytes + len + 1 > m->cap_bytes) {
        size_t cap = m->cap_bytes * 2;
        while (cap < m->nbytes + len + 1) cap *= 2;
        char *bytes = realloc(m->bytes, cap);
        if (!bytes) return -1;
        m->bytes = bytes;
        m->cap_bytes = cap;
    }
    uint32_t nid = m->count++;
    m->offsets[nid] = m->nbytes;
    m->lengths[nid] = (uint32_t)len;
    if (len) memcpy(m->bytes + m->nbytes, key, len);
    m->bytes[m->nbytes + len] = '\0';
    m->nbytes += len + 1;
    m->slots[i] = nid + 1;
    m->slot_hash[i] = h;
    *id = nid;
    if (inserted) *inserted = 1;
    if ((size_t)m->count * 2 > m->mask + 1 && strmap_grow(m) != 0) return -1;
    return 0;
}

/* The u64map's hash: ak_mix64's low bits (keys are often small consecutive
 * integers or doubles whose low bits are all zero). */
static inline uint32_t hash_u64(uint64_t key)
{
    return (uint32_t)ak_mix64(key);
}

int u64map_init(u64map *m, size_t expected_keys)
{
    memset(m, 0, sizeof *m);
    size_t n = table_size_for(expected_keys);
    m->keys = malloc(n * sizeof *m->keys);
    m->slots = calloc(n, sizeof *m->slots);
    m->cap_ids = expected_keys > 16 ? expected_keys : 16;
    m->id_keys = malloc(m->cap_ids * sizeof *m->id_keys);
    m->mask = n - 1;
    if (!m->keys || !m->slots || !m->id_keys) {
        u64map_free(m);
        return -1;
    }
    return 0;
}

void u64map_free(u64map *m)
{
    if (!m) return;
    free(m->keys);
    free(m->slots);
    free(m->id_keys);
    memset(m, 0, sizeof *m);
}

static int u64map_grow(u64map *m)
{
    size_t n = (m->mask + 1) * 2;
    uint64_t *keys = malloc(n * sizeof *keys);
    uint32_t *slots = calloc(n, sizeof *slots);
    if (!keys || !slots) {
        free(keys);
        free(slots);
        return -1;
    }
    for (size_t i = 0; i <= m->mask; i++) {
        if (!m->slots[i]) continue;
        size_t j = hash_u64(m->keys[i]) & (n - 1);
        while (slots[j]) j = (j + 1) & (n - 1);
        slots[j] = m->slots[i];
        keys[j] = m->keys[i];
    }
    free(m->keys);
    free(m->slots);
    m->keys = keys;
    m->slots = slots;
    m->mask = n - 1;
    return 0;
}

uint32_t u64map_find(const u64map *m, uint64_t key)
{
    for (size_t i = hash_u64(key) & m->mask;; i = (i + 1) & m->mask) {
        if (!m->slots[i]) return AK_NOT_FOUND;
        if (m->keys[i] == key) return m->slots[i] - 1;
    }
}

int u64map_intern(u64map *m, uint64_t key, uint32_t *id, int *inserted)
{
    size_t i = hash_u64(key) & m->mask;
    for (;; i = (i + 1) & m->mask) {
        if (!m->slots[i]) break;
        if (m->keys[i] == key) {
            *id = m->slots[i] - 1;
            if (inserted) *inserted = 0;
            return 0;
        }
    }
    if (m->count == UINT32_MAX - 1) return -1;
    if (m->count >= m->cap_ids) {
        size_t cap = m->cap_ids * 2;
        uint64_t *ids = realloc(m->id_keys, cap * sizeof *ids);
        if (!ids) return -1;
        m->id_keys = ids;
        m->cap_ids = cap;
    }
    uint32_t nid = m->count++;
    m->id_keys[nid] = key;
    m->keys[i] = key;
    m->slots[i] = nid + 1;
    *id = nid;
    if (inserted) *inserted = 1;
    if ((size_t)m->count * 2 > m->mask + 1 && u64map_grow(m) != 0) return -1;
    return 0;
}

int u64scratch_grow(u64scratch *m)
{
    const size_t cap = m->mask ? (m->mask + 1) * 2 : 64;
    if (cap - 1 > UINT32_MAX) return -1; /* slots are numbered in 32 bits */
    uint64_t *keys = malloc(cap * sizeof *keys);
    uint32_t *ids = calloc(cap, sizeof *ids);
    uint32_t *slot_of = malloc(cap / 2 * sizeof *slot_of);
    if (!keys || !ids || !slot_of) {
        free(keys);
        free(ids);
        free(slot_of);
        return -1;
    }
    for (uint32_t id = 0; id < m->count; id++) {
        const uint64_t k = m->keys[m->slot_of[id]];
        size_t s = ak_mix64(k) & (cap - 1);
        while (ids[s]) s = (s + 1) & (cap - 1);
        keys[s] = k;
        ids[s] = id + 1;
        slot_of[id] = (uint32_t)s;
    }
    free(m->keys);
    free(m->ids);
    free(m->slot_of);
    m->keys = keys;
    m->ids = ids;
    m->slot_of = slot_of;
    m->mask = cap - 1;
    return 0;
}

void u64scratch_reset(u64scratch *m)
{
    for (uint32_t i = 0; i < m->count; i++) m->ids[m->slot_of[i]] = 0;
    m->count = 0;
}

void u64scratch_free(u64scratch *m)
{
    free(m->keys);
    free(m->ids);
    free(m->slot_of);
    memset(m, 0, sizeof *m);
}
