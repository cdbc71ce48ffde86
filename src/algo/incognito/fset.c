/* fset.c — frequency sets of Incognito ([LeFevre05] slides 9-11, 29-30;
 * "Frequency Set", "Rollup Property").
 *
 * Owns: the hash group-by over packed keys by one scan of the table, the
 * rollup of a frequency set to a more general node without touching the data
 * (each generalized value maps to a representative level-0 value and from
 * there to the target level), the projection onto fewer attributes (Cube
 * Incognito, [LeFevre05] slide 40), and the test of a frequency set against the
 * privacy model with the suppression limit. */
#include "algo/incognito/inc_internal.h"
#include "common/progress.h"

#include <stdlib.h>
#include <string.h>

/* The most distinct keys node n can have: the product of its levels'
 * cardinalities (times the sensitive values), capped at `cap`. */
static size_t key_bound(const inc_ctx *c, inc_node n, size_t cap)
{
    size_t b = c->sens ? (size_t)c->t->sensitive_dict.count : 1;
    for (uint32_t q = 0; q < c->nqi && b < cap; q++)
        if (n.mask >> q & 1) b *= c->qi[q].card[inc_level(c, n.lv, q)];
    return b < cap ? b : cap;
}

/* Starts a group-by of at most `bound` distinct keys. */
static void hb_begin(inc_ctx *c, size_t bound)
{
    size_t size = 16;
    while (size < 2 * (bound + 1) && size < c->hcap) size *= 2;
    c->hmask = size - 1;
    c->hshift = 64;
    for (size_t s = size; s > 1; s >>= 1) c->hshift--;
    c->nused = 0;
    if (++c->hgen == 0) { /* stamps wrapped around: clear them once */
        for (size_t i = 0; i < c->hcap; i++) c->slot[i].stamp = 0;
        c->hgen = 1;
    }
}

/* The slot of key, claimed (value 0) when new. */
static inline size_t hb_slot(inc_ctx *c, uint64_t key)
{
    size_t i = (size_t)((key * 0x9E3779B97F4A7C15ULL) >> c->hshift) & c->hmask;
    for (;;) {
        inc_slot *s = &c->slot[i];
        if (s->stamp != c->hgen) {
            s->stamp = c->hgen;
            s->key = key;
            s->val = 0;
            c->hused[c->nused++] = (uint32_t)i;
            return i;
        }
        if (s->key == key) return i;
        i = (i + 1) & c->hmask;
    }
}

static inline void hb_add(inc_ctx *c, uint64_t key, uint32_t count)
{
    c->slot[hb_slot(c, key)].val += count;
}

/* The group-by's keys and counts as a frequency set, in order of first insertion. */
static int hb_finish(inc_ctx *c, inc_fset **out, ak_error *err)
{
    inc_fset *f = calloc(1, sizeof *f);
    if (!f) return ak_err_nomem(err);
    f->n = c->nused;
    f->key = malloc((f->n ? f->n : 1) * sizeof *f->key);
    f->count = malloc((f->n ? f->n : 1) * sizeof *f->count);
    if (!f->key || !f->count) {
        inc_fset_free(f);
        return ak_err_nomem(err);
    }
    for (size_t i = 0; i < f->n; i++) {
        const uint32_t s = c->hused[i];
        f->key[i] = c->slot[s].key;
        f->count[i] = c->slot[s].val;
    }
    *out = f;
    return ANONKIT_OK;
}

/* The rollup's group-by (inc_fset_rollup): the stamped slots of the other
 * group-bys (key, index of the key in the new set, stamp: a probe reads one
 * cache line, which matters on sets that miss the caches), the new set's keys
 * and counts, its size. The home slot takes the top bits of the
 * multiplicative hash, so that every key bit counts. */
typedef struct roll_out {
    inc_slot *tab;
    uint64_t *key;
    uint32_t *count;
    size_t n, mask;
    int shift;
    uint32_t gen;
} roll_out;

static inline __attribute__((always_inline)) size_t roll_home(int shift, size_t mask, uint64_t key)
{
    return (size_t)((key * 0x9E3779B97F4A7C15ULL) >> shift) & mask;
}

/* Adds count to key, probing from slot i: a new key is appended to the new
 * set, so its order is that of first insertion (the order hb_finish gives). */
static inline __attribute__((always_inline)) void roll_add_at(inc_slot *tab, uint64_t *okey, uint32_t *ocount,
                                                              size_t *on, size_t mask, uint32_t gen, size_t i,
                                                              uint64_t key, uint32_t count)
{
    for (;;) {
        inc_slot *s = &tab[i];
        if (s->stamp != gen) {
            s->stamp = gen;
            s->key = key;
            s->val = (uint32_t)*on;
            okey[*on] = key;
            ocount[(*on)++] = count;
            return;
        }
        if (s->key == key) {
            ocount[s->val] += count;
            return;
        }
        i = (i + 1) & mask;
    }
}

/* Entries a rollup raises ahead of their insertion (their home slots fetched meanwhile). */
enum { ROLL_BLOCK = 16 };
/* Slots up to which the group-by table stays in the nearer caches: the rollup
 * inserts each key as it is raised, without the blocks and prefetches. */
enum { ROLL_NEAR = 4096 };

/* The rollup's loop over src, with RAISE turning `key` (src's key k with the
 * raised fields cleared) into the new key. The group-by's state lives in
 * locals (stores into the new set's keys could otherwise alias it and force
 * reloads). On a large table the group-by is bound by memory (its slots miss
 * the caches): keys are then raised a block at a time and their home slots
 * prefetched before the block is inserted, in the same order as one at a
 * time. */
#define ROLL_LOOP(RAISE)                                                                                               \
    do {                                                                                                               \
        inc_slot *const tab = o->tab;                                                                                  \
        uint64_t *const okey = o->key;                                                                                 \
        uint32_t *const ocount = o->count;                                                                             \
        const size_t mask = o->mask;                                                                                   \
        const int hshift = o->shift;                                                                                   \
        const uint32_t gen = o->gen;                                                                                   \
        size_t on = 0;                                                                                                 \
        if (!blocked) {                                                                                                \
            for (size_t i = 0; i < n; i++) {                                                                           \
                const uint64_t k = skey[i];                                                                            \
                uint64_t key = k & clear;                                                                              \
                RAISE;                                                                                                 \
                roll_add_at(tab, okey, ocount, &on, mask, gen, roll_home(hshift, mask, key), key, scount[i]);          \
            }                                                                                                          \
        } else {                                                                                                       \
            uint64_t keys[ROLL_BLOCK];                                                                                 \
            size_t home[ROLL_BLOCK];                                                                                   \
            for (size_t at = 0; at < n; at += ROLL_BLOCK) {                                                            \
                const size_t nb = n - at < ROLL_BLOCK ? n - at : ROLL_BLOCK;                                           \
                for (size_t b = 0; b < nb; b++) {                                                                      \
                    const uint64_t k = skey[at + b];                                                                   \
                    uint64_t key = k & clear;                                                                          \
                    RAISE;                                                                                             \
                    keys[b] = key;                                                                                     \
                    home[b] = roll_home(hshift, mask, key);                                                            \
                    __builtin_prefetch(&tab[home[b]], 1);                                                              \
                }                                                                                                      \
                for (size_t b = 0; b < nb; b++)                                                                        \
                    roll_add_at(tab, okey, ocount, &on, mask, gen, home[b], keys[b], scount[at + b]);                  \
            }                                                                                                          \
        }                                                                                                              \
        o->n = on;                                                                                                     \
    } while (0)

/* The rollup's loop over src: each key's nq raised fields replaced through
 * their shifted tables up[j]; one to four raised QIs spelled out with their
 * tables in registers (most rollups raise one QI), more in a loop. */
static void roll_entries(roll_out *o, const inc_fset *src, uint64_t clear, const uint64_t *const *up,
                         const uint32_t *shift, const uint64_t *field, uint32_t nq, int blocked)
{
    const uint64_t *const skey = src->key;
    const uint32_t *const scount = src->count;
    const size_t n = src->n;
    if (nq == 1) {
        const uint64_t *const u0 = up[0], f0 = field[0];
        const uint32_t s0 = shift[0];
        ROLL_LOOP(key |= u0[(k >> s0) & f0]);
    } else if (nq == 2) {
        const uint64_t *const u0 = up[0], *const u1 = up[1], f0 = field[0], f1 = field[1];
        const uint32_t s0 = shift[0], s1 = shift[1];
        ROLL_LOOP(key |= u0[(k >> s0) & f0] | u1[(k >> s1) & f1]);
    } else if (nq == 3) {
        const uint64_t *const u0 = up[0], *const u1 = up[1], *const u2 = up[2];
        const uint64_t f0 = field[0], f1 = field[1], f2 = field[2];
        const uint32_t s0 = shift[0], s1 = shift[1], s2 = shift[2];
        ROLL_LOOP(key |= u0[(k >> s0) & f0] | u1[(k >> s1) & f1] | u2[(k >> s2) & f2]);
    } else if (nq == 4) {
        const uint64_t *const u0 = up[0], *const u1 = up[1], *const u2 = up[2], *const u3 = up[3];
        const uint64_t f0 = field[0], f1 = field[1], f2 = field[2], f3 = field[3];
        const uint32_t s0 = shift[0], s1 = shift[1], s2 = shift[2], s3 = shift[3];
        ROLL_LOOP(key |= u0[(k >> s0) & f0] | u1[(k >> s1) & f1] | u2[(k >> s2) & f2] | u3[(k >> s3) & f3]);
    } else {
        ROLL_LOOP(for (uint32_t j = 0; j < nq; j++) key |= up[j][(k >> shift[j]) & field[j]]);
    }
}
#undef ROLL_LOOP

void inc_fset_free(inc_fset *f)
{
    if (!f) return;
    if (!f->one_block) {
        free(f->key);
        free(f->count);
    }
    free(f);
}

static size_t block_bytes(size_t room) { return sizeof(inc_fset) + room * (sizeof(uint64_t) + sizeof(uint32_t)); }

/* An empty frequency set with room for cap keys, its arrays in its own
 * allocation (keys, then counts at key + room): the smallest pooled block
 * with room enough, unless it is more than twice as large, or a new one.
 * NULL: out of memory. */
static inc_fset *fset_block(inc_ctx *c, size_t cap)
{
    const size_t want = cap ? cap : 1;
    size_t pick = SIZE_MAX;
    for (size_t i = 0; i < c->npool; i++)
        if (c->pool[i]->room >= want && c->pool[i]->room <= 2 * want + 1024 &&
            (pick == SIZE_MAX || c->pool[i]->room < c->pool[pick]->room))
            pick = i;
    inc_fset *f;
    if (pick != SIZE_MAX) {
        f = c->pool[pick];
        c->pool[pick] = c->pool[--c->npool];
        c->pool_bytes -= block_bytes(f->room);
    } else {
        if (!(f = malloc(block_bytes(want)))) return NULL;
        f->room = want;
    }
    f->n = 0;
    f->refs = 0;
    f->one_block = 1;
    f->key = (uint64_t *)(void *)(f + 1);
    f->count = (uint32_t *)(void *)(f->key + f->room);
    return f;
}

/* f (from fset_block) holding n keys: when it uses less than half its room,
 * its counts move down behind the keys and the rest is given back (f stays
 * valid when realloc fails). */
static inc_fset *fset_block_fit(inc_fset *f, size_t n)
{
    f->n = n;
    if (!n || 2 * n >= f->room) return f;
    memmove(f->key + n, f->count, n * sizeof *f->count);
    inc_fset *g = realloc(f, block_bytes(n));
    if (g) f = g;
    f->room = n;
    f->key = (uint64_t *)(void *)(f + 1);
    f->count = (uint32_t *)(void *)(f->key + n);
    return f;
}

void inc_fset_release(inc_ctx *c, inc_fset *f)
{
    if (!f) return;
    if (!f->one_block || c->npool == INC_POOL || c->pool_bytes + block_bytes(f->room) > INC_POOL_BYTES) {
        inc_fset_free(f);
        return;
    }
    c->pool_bytes += block_bytes(f->room);
    c->pool[c->npool++] = f;
}

int inc_fset_scan(inc_ctx *c, inc_node n, inc_fset **out, ak_error *err)
{
    AK_CHECK(ak_progress_poll(c->progress, err)); /* (the calling thread: it may call back) cancelled: no more sets */
    uint32_t nq = 0, shift[64];
    const uint32_t *gen[64], *code[64];
    for (uint32_t q = 0; q < c->nqi; q++) {
        if (!(n.mask >> q & 1)) continue;
        shift[nq] = c->qi[q].shift;
        gen[nq] = c->qi[q].gen[inc_level(c, n.lv, q)];
        code[nq] = c->code0[q];
        nq++;
    }
    hb_begin(c, key_bound(c, n, c->nrows));
    for (size_t r = 0; r < c->nrows; r++) {
        uint64_t key = c->sens ? c->sens[r] : 0;
        for (uint32_t i = 0; i < nq; i++) key |= (uint64_t)gen[i][code[i][r]] << shift[i];
        hb_add(c, key, 1);
    }
    c->counters.scans++;
    return hb_finish(c, out, err);
}

int inc_fset_rollup(inc_ctx *c, const inc_fset *src, inc_node from, inc_node to, inc_fset **out, ak_error *err)
{
    AK_CHECK(ak_progress_poll(c->progress, err));
    uint32_t nq = 0, shift[64];
    uint64_t field[64], clear = ~(uint64_t)0;
    const uint64_t *up[64];
    for (uint32_t q = 0; q < c->nqi; q++) {
        if (!(to.mask >> q & 1)) { /* an attribute of `from` that `to` lacks is dropped */
            if (from.mask >> q & 1 && c->qi[q].bits)
                clear &= ~((c->qi[q].bits == 64 ? ~(uint64_t)0 : (((uint64_t)1 << c->qi[q].bits) - 1)) << c->qi[q].shift);
            continue;
        }
        const uint32_t a = inc_level(c, from.lv, q), b = inc_level(c, to.lv, q);
        if (a == b) continue;
        shift[nq] = c->qi[q].shift;
        field[nq] = c->qi[q].bits == 64 ? ~(uint64_t)0 : (((uint64_t)1 << c->qi[q].bits) - 1);
        clear &= ~(field[nq] << shift[nq]);
        up[nq] = c->qi[q].upk[a * (c->qi[q].height + 1) + b];
        nq++;
    }
    const size_t bound = key_bound(c, to, src->n);
    inc_fset *f = fset_block(c, bound);
    if (!f) return ak_err_nomem(err);
    hb_begin(c, bound);
    roll_out o = {c->slot, f->key, f->count, 0, c->hmask, c->hshift, c->hgen};
    roll_entries(&o, src, clear, up, shift, field, nq, c->hmask + 1 > ROLL_NEAR);
    c->counters.rollups++;
    *out = fset_block_fit(f, o.n);
    return ANONKIT_OK;
}

/* Distinct keys among the first `sample` entries of src projected onto keep. */
static size_t sample_distinct(inc_ctx *c, const inc_fset *src, uint64_t keep, size_t sample)
{
    if (sample > src->n) sample = src->n;
    hb_begin(c, sample);
    for (size_t i = 0; i < sample; i++) hb_slot(c, src->key[i] & keep);
    return c->nused;
}

int inc_fset_project(inc_ctx *c, const inc_fset *src, uint64_t keep_mask, inc_fset **out, ak_error *err)
{
    uint64_t keep = c->sbits ? (((uint64_t)1 << c->sbits) - 1) : 0;
    for (uint32_t q = 0; q < c->nqi; q++)
        if (keep_mask >> q & 1 && c->qi[q].bits)
            keep |= (c->qi[q].bits == 64 ? ~(uint64_t)0 : (((uint64_t)1 << c->qi[q].bits) - 1)) << c->qi[q].shift;
    /* A projection that would keep most keys is not worth storing: the caller
     * rolls up from src itself (*out = NULL). Judged on a sample. */
    if (src->n >= c->share_min && sample_distinct(c, src, keep, 1024) * 4 > (src->n < 1024 ? src->n : 1024) * 3) {
        *out = NULL;
        return ANONKIT_OK;
    }
    hb_begin(c, src->n);
    for (size_t i = 0; i < src->n; i++) hb_add(c, src->key[i] & keep, src->count[i]);
    c->counters.rollups++;
    return hb_finish(c, out, err);
}

/* Grows each array arrays[i] (elements of sizes[i] bytes) to cap + 1 elements
 * (offset arrays need one past the last). */
static int grow_arrays(void **arrays[], const size_t sizes[], size_t count, size_t cap, ak_error *err)
{
    for (size_t i = 0; i < count; i++) {
        void *grown = realloc(*arrays[i], (cap + 1) * sizes[i]);
        if (!grown) return ak_err_nomem(err);
        *arrays[i] = grown;
    }
    return ANONKIT_OK;
}

/* Room for n groups in the group arrays. */
static int groups_reserve(inc_ctx *c, size_t n, ak_error *err)
{
    if (n <= c->gcap) return ANONKIT_OK;
    size_t cap = c->gcap ? c->gcap : 1024;
    while (cap < n) cap *= 2;
    void **arrays[] = {(void **)&c->gkey, (void **)&c->gtotal, (void **)&c->gholds, (void **)&c->gstart,
                       (void **)&c->gfill};
    const size_t sizes[] = {sizeof *c->gkey, sizeof *c->gtotal, 1, sizeof *c->gstart, sizeof *c->gfill};
    AK_CHECK(grow_arrays(arrays, sizes, 5, cap, err));
    c->gcap = cap;
    return ANONKIT_OK;
}

/* Room for n entries in the per-entry arrays. */
static int entries_reserve(inc_ctx *c, size_t n, ak_error *err)
{
    if (n <= c->gcounts_cap) return ANONKIT_OK;
    size_t cap = c->gcounts_cap ? c->gcounts_cap : 1024;
    while (cap < n) cap *= 2;
    void **arrays[] = {(void **)&c->gcounts, (void **)&c->gscratch, (void **)&c->gid, (void **)&c->gcodes};
    const size_t sizes[] = {sizeof *c->gcounts, sizeof *c->gscratch, sizeof *c->gid, sizeof *c->gcodes};
    AK_CHECK(grow_arrays(arrays, sizes, c->work ? 4 : 3, cap, err));
    c->gcounts_cap = cap;
    return ANONKIT_OK;
}

int inc_fset_eval(inc_ctx *c, const inc_fset *f, int groups, int *anonymous, uint64_t *failing, ak_error *err)
{
    uint64_t fail = 0;
    int risk_ok = 1; /* --max-risk table predicate (risk_hook.c) */
    c->ngroups = 0;
    if (!c->sens) {
        /* Without a sensitive attribute every entry is a class and only k matters. */
        const uint64_t k = c->m->k;
        if (groups) AK_CHECK(groups_reserve(c, f->n, err));
        for (size_t i = 0; i < f->n; i++) {
            const int holds = f->count[i] >= k;
            if (!holds) fail += f->count[i];
            if (groups) {
                c->gkey[i] = f->key[i];
                c->gtotal[i] = f->count[i];
                c->gholds[i] = (unsigned char)holds;
            } else if (fail > c->limit) {
                break;
            }
        }
        if (groups) c->ngroups = f->n;
        if (c->risk && fail <= c->limit) risk_ok = inc_risk_holds_u32(c, f->count, f->n);
    } else {
        /* Entries are (class, sensitive value) pairs: group them by class, then
         * gather each class's sensitive counts by a counting sort. */
        AK_CHECK(entries_reserve(c, f->n, err));
        AK_CHECK(groups_reserve(c, f->n, err));
        const uint64_t smask = ~((((uint64_t)1 << c->sbits) - 1));
        hb_begin(c, f->n);
        size_t ng = 0;
        for (size_t i = 0; i < f->n; i++) {
            const size_t s = hb_slot(c, f->key[i] & smask);
            if (c->nused > ng) { /* a new class */
                c->slot[s].val = (uint32_t)ng;
                c->gkey[ng] = f->key[i] & smask;
                c->gtotal[ng] = 0;
                c->gstart[ng + 1] = 0;
                ng++;
            }
            const uint32_t g = c->slot[s].val;
            c->gid[i] = g;
            c->gtotal[g] += f->count[i];
            c->gstart[g + 1]++;
        }
        c->gstart[0] = 0;
        for (size_t g = 0; g < ng; g++) {
            c->gstart[g + 1] += c->gstart[g];
            c->gfill[g] = c->gstart[g];
        }
        if (c->work) /* the sensitive codes beside the counts (t, δ, β) */
            for (size_t i = 0; i < f->n; i++) {
                c->gcodes[c->gfill[c->gid[i]]] = (uint32_t)(f->key[i] & ~smask);
                c->gcounts[c->gfill[c->gid[i]]++] = f->count[i];
            }
        else
            for (size_t i = 0; i < f->n; i++) c->gcounts[c->gfill[c->gid[i]]++] = f->count[i];
        for (size_t g = 0; g < ng; g++) {
            const size_t nc = c->gstart[g + 1] - c->gstart[g];
            int holds = model_holds(c->m, c->gtotal[g], c->gcounts + c->gstart[g], nc, c->gscratch);
            /* t-closeness, δ-disclosure, β-likeness: a class's histogram with its codes
             * (generalization property: docs/algorithms/incognito.md) */
            if (holds && c->work)
                holds = model_dist_holds(&c->m->dist, c->m->ref, c->work, c->gtotal[g], c->gcodes + c->gstart[g],
                                         c->gcounts + c->gstart[g], nc);
            c->gholds[g] = (unsigned char)holds;
            if (!holds) {
                fail += c->gtotal[g];
                if (!groups && fail > c->limit) break;
            }
        }
        c->ngroups = groups ? ng : 0;
        if (c->risk && fail <= c->limit) risk_ok = inc_risk_holds_u64(c, c->gtotal, ng);
    }
    *anonymous = fail <= c->limit && risk_ok;
    if (failing) *failing = fail;
    return ANONKIT_OK;
}
