/* numdict.c — ranking the values of a numeric QI (see numdict.h). */
#include "core/numdict.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cpu.h"
#include "common/hugemem.h"

/* Integer mode stores value + INT_BIAS in a code. */
#define INT_BIAS NUMDICT_INT_BIAS

/* "00" "01" ... "99": two digits per step of numdict_format_int. */
static const char digit_pairs[201] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
                                     "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
                                     "8081828384858687888990919293949596979899";

int numdict_format_int(char *buf, int64_t v)
{
    char tmp[24];
    char *p = tmp + sizeof tmp; /* digits are written backwards from the end */
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    while (u >= 100) {
        const unsigned pair = (unsigned)(u % 100);
        u /= 100;
        p -= 2;
        memcpy(p, digit_pairs + 2 * pair, 2);
    }
    if (u >= 10) {
        p -= 2;
        memcpy(p, digit_pairs + 2 * u, 2);
    } else {
        *--p = (char)('0' + u);
    }
    int len = 0;
    if (v < 0) buf[len++] = '-';
    const size_t ndigits = (size_t)(tmp + sizeof tmp - p);
    memcpy(buf + len, p, ndigits);
    len += (int)ndigits;
    buf[len] = '\0';
    return len;
}

/* A canonically written integer of at most nine digits: -?(0|[1-9][0-9]*). */
static int parse_canonical_int(const char *s, size_t len, int64_t *out)
{
    size_t i = s[0] == '-';
    size_t digits = len - i;
    if (digits == 0 || digits > 9 || (s[i] == '0' && (digits > 1 || i))) return -1;
    int64_t v = 0;
    for (; i < len; i++) {
        unsigned d = (unsigned)(s[i] - '0');
        if (d > 9) return -1;
        v = v * 10 + d;
    }
    *out = s[0] == '-' ? -v : v;
    return 0;
}

void numdict_init(numdict *d)
{
    memset(d, 0, sizeof *d);
    d->min = INT64_MAX;
    d->max = INT64_MIN;
}

void numdict_free(numdict *d)
{
    if (!d) return;
    if (d->general) u64map_free(&d->ids);
    if (d->wide) u64map_free(d->wide);
    free(d->wide);
    free(d->present);
    strbuf_free(&d->spellings);
    free(d->spelling_at);
    memset(d, 0, sizeof *d);
}

/* The value of general id `id`: its double, or the wide integer its key tags. */
static void id_value(const numdict *d, uint32_t id, ak_num *x)
{
    const uint64_t key = d->ids.id_keys[id];
    if (key >> 52 == NUMDICT_WIDE_TAG >> 52) { /* exponent all ones, sign 0: no finite double */
        x->i = (int64_t)d->wide->id_keys[(key & ~NUMDICT_WIDE_TAG) - 1];
        x->v = (double)x->i;
        x->wide = 1;
    } else {
        memcpy(&x->v, &key, sizeof x->v);
        x->wide = 0;
        x->i = 0;
    }
}

/* The key in d->ids of wide integer v: its index in d->wide, tagged
 * (NUMDICT_WIDE_TAG); the map is made at the first. */
static int wide_key(numdict *d, int64_t v, uint64_t *key, ak_error *err)
{
    if (!d->wide) { /* (behind a pointer: the struct stays small, rows index arrays of it) */
        if (!(d->wide = malloc(sizeof *d->wide))) return ak_err_nomem(err);
        if (u64map_init(d->wide, 64) != 0) {
            free(d->wide);
            d->wide = NULL;
            return ak_err_nomem(err);
        }
    }
    uint32_t j;
    if (u64map_intern(d->wide, (uint64_t)v, &j, NULL) != 0) return ak_err_nomem(err);
    *key = NUMDICT_WIDE_TAG | ((uint64_t)j + 1);
    return ANONKIT_OK;
}

/* The key in d->ids of value x: its double's bits, or wide_key. */
static int value_key(numdict *d, const ak_num *x, uint64_t *key, ak_error *err)
{
    if (x->wide) return wide_key(d, x->i, key, err);
    memcpy(key, &x->v, sizeof *key);
    return ANONKIT_OK;
}

/* Interns the value of key `bits` (value_key; first written `text`) in the
 * general map: *code is its provisional id. */
static int intern_general(numdict *d, uint64_t bits, const char *text, size_t len, uint32_t *code, ak_error *err)
{
    int inserted;
    if (u64map_intern(&d->ids, bits, code, &inserted) != 0) return ak_err_nomem(err);
    if (inserted) {
        if (*code >= d->spelling_cap) {
            size_t cap = d->spelling_cap ? d->spelling_cap * 2 : 1024;
            size_t *at = realloc(d->spelling_at, cap * sizeof *at);
            if (!at) return ak_err_nomem(err);
            d->spelling_at = at;
            d->spelling_cap = cap;
        }
        if (strbuf_append_str(&d->spellings, text, len, &d->spelling_at[*code]) != 0) return ak_err_nomem(err);
    }
    return ANONKIT_OK;
}

static int intern_int(numdict *d, int64_t v, ak_error *err);
static int present_ints_to_ids(numdict *d, ak_error *err);

/* Leaves integer mode: re-encodes rows [0, nrows) through the hash map. */
static int go_general(numdict *d, uint32_t *codes, size_t nrows, ak_error *err)
{
    if (u64map_init(&d->ids, 1024) != 0) return ak_err_nomem(err);
    d->general = 1;
    if (d->streaming) {
        /* The rows keep their integer codes (numdict_absorb), but their values
         * enter the map now, before the value that turned the column general:
         * an integer first written canonically keeps that spelling even when
         * a later row writes it otherwise ("5", then "5.0"), as in memory. */
        AK_CHECK(present_ints_to_ids(d, err));
        for (size_t r = d->stream_base; r < nrows; r++) /* this chunk's rows, not yet absorbed */
            if (codes[r] >= NUMDICT_INT_LOW && codes[r] != NUMDICT_MISSING)
                AK_CHECK(intern_int(d, (int64_t)codes[r] - INT_BIAS, err));
        return ANONKIT_OK;
    }
    for (size_t r = 0; r < nrows; r++) {
        if (codes[r] < NUMDICT_INT_LOW) continue; /* a missing value's placeholder (table_missing.h): no value */
        int64_t v = (int64_t)codes[r] - INT_BIAS;
        char text[24];
        int len = numdict_format_int(text, v);
        const double dv = (double)v; /* (at most nine digits: exact) */
        uint64_t bits;
        memcpy(&bits, &dv, sizeof bits);
        AK_CHECK(intern_general(d, bits, text, (size_t)len, &codes[r], err));
    }
    return ANONKIT_OK;
}

int numdict_add_slow(numdict *d, const char *text, size_t len, uint32_t *codes, size_t row, ak_error *err)
{
    int64_t iv;
    if (!d->general) {
        if (len && parse_canonical_int(text, len, &iv) == 0) {
            codes[row] = (uint32_t)(iv + INT_BIAS);
            if (iv < d->min) d->min = iv;
            if (iv > d->max) d->max = iv;
            return ANONKIT_OK;
        }
    }
    ak_num x;
    const int parsed = ak_num_parse_exact(text, len, &x);
    if (parsed != 0) return parsed == AK_NUM_INEXACT ? NUMDICT_INEXACT : -1;
    if (!d->general) AK_CHECK(go_general(d, codes, row, err));
    uint64_t bits;
    if (x.wide) AK_CHECK(wide_key(d, x.i, &bits, err));
    else memcpy(&bits, &x.v, sizeof bits);
    return intern_general(d, bits, text, len, &codes[row], err);
}

static int cmp_double_first(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Distinct values whose doubles are equal: a wide integer next to another
 * or next to ±2^53 itself (a value beyond int64 with at most 15 digits is
 * never this close to ±2^63: the nearest, 9.22337203685478e18, rounds to
 * 2^63 + 4096). Such ties are ordered by t, the exact integer. */
typedef struct tie {
    int64_t t;
    uint32_t id;
} tie;

static int cmp_tie(const void *a, const void *b)
{
    const tie *x = a, *y = b;
    return (x->t > y->t) - (x->t < y->t);
}

/* The tie of general id `id` (see struct tie). */
static tie tie_of(const numdict *d, uint32_t id)
{
    ak_num x;
    id_value(d, id, &x);
    tie k = {x.wide ? x.i : 0, id};
    if (!x.wide) /* (clamped: the conversion of a value beyond int64 is undefined) */
        k.t = x.v >= 9223372036854775808.0 ? INT64_MAX : x.v <= -9223372036854775808.0 ? INT64_MIN : (int64_t)x.v;
    return k;
}

/* The pairs {double, id} sorted by double: puts every run of equal doubles
 * (distinct values, see struct tie) in exact order. */
typedef struct pair {
    double v;
    uint32_t id;
} pair;

static int order_ties(const numdict *d, pair *pairs, uint32_t n, ak_error *err)
{
    tie *run = NULL;
    for (uint32_t r = 0; r < n;) {
        uint32_t end = r + 1;
        while (end < n && pairs[end].v == pairs[r].v) end++;
        if (end - r > 1) {
            if (!run && !(run = malloc((size_t)n * sizeof *run))) return ak_err_nomem(err);
            for (uint32_t i = r; i < end; i++) run[i - r] = tie_of(d, pairs[i].id);
            qsort(run, end - r, sizeof *run, cmp_tie);
            for (uint32_t i = r; i < end; i++) pairs[i].id = run[i - r].id;
        }
        r = end;
    }
    free(run);
    return ANONKIT_OK;
}

/* General mode: sorts the distinct values and rewrites the codes as ranks. */
static int finish_general(numdict *d, uint32_t *codes, size_t nrows, double **values, const char ***texts,
                          strbuf *spellings, uint32_t *count, ak_error *err)
{
    const uint32_t n = d->ids.count;
    pair *pairs = malloc((size_t)(n ? n : 1) * sizeof *pairs);
    uint32_t *rank = malloc((size_t)(n ? n : 1) * sizeof *rank);
    double *vals = malloc((size_t)(n ? n : 1) * sizeof *vals);
    const char **txt = malloc((size_t)(n ? n : 1) * sizeof *txt);
    if (!pairs || !rank || !vals || !txt) {
        free(pairs);
        free(rank);
        free(vals);
        free(txt);
        return ak_err_nomem(err);
    }
    for (uint32_t i = 0; i < n; i++) {
        memcpy(&pairs[i].v, &d->ids.id_keys[i], sizeof pairs[i].v);
        pairs[i].id = i;
    }
    for (uint32_t i = 0; d->wide && i < n; i++) { /* wide integers: their nearest doubles */
        ak_num x;
        id_value(d, i, &x);
        pairs[i].v = x.v;
    }
    qsort(pairs, n, sizeof *pairs, cmp_double_first);
    if (d->wide) {
        const int rc = order_ties(d, pairs, n, err);
        if (rc < 0) {
            free(pairs);
            free(rank);
            free(vals);
            free(txt);
            return rc;
        }
    }
    *spellings = d->spellings;
    memset(&d->spellings, 0, sizeof d->spellings);
    for (uint32_t r = 0; r < n; r++) {
        rank[pairs[r].id] = r;
        vals[r] = pairs[r].v;
        txt[r] = spellings->data + d->spelling_at[pairs[r].id];
    }
    for (size_t row = 0; row < nrows; row++) codes[row] = rank[codes[row]];
    free(pairs);
    free(rank);
    *values = vals;
    *texts = txt;
    *count = n;
    return ANONKIT_OK;
}

/* codes[r] = the rank of value more[r] - base (more may be codes itself):
 * before[word] plus the present values below it in its word of present. */
#define RANK_CODES(POPCOUNT)                                                                                      \
    for (size_t r = 0; r < n; r++) {                                                                              \
        const uint32_t v = more[r] - base;                                                                        \
        codes[r] = before[v / 64] + (uint32_t)POPCOUNT(present[v / 64] & (((uint64_t)1 << (v % 64)) - 1));       \
    }

static void rank_codes_plain(uint32_t *codes, const uint32_t *more, size_t n, uint32_t base, const uint64_t *present,
                             const uint32_t *before)
{
    RANK_CODES(numdict_popcount)
}

#if defined(__GNUC__) && defined(__x86_64__)
/* The same with the POPCNT instruction (chosen at run time). */
__attribute__((target("popcnt"))) static void rank_codes_popcnt(uint32_t *codes, const uint32_t *more, size_t n,
                                                                uint32_t base, const uint64_t *present,
                                                                const uint32_t *before)
{
    RANK_CODES(__builtin_popcountll)
}
#endif

/* Ranks of more[0..n) into codes[0..n) (see RANK_CODES). */
static void rank_codes(uint32_t *codes, const uint32_t *more, size_t n, uint32_t base, const uint64_t *present,
                       const uint32_t *before)
{
#if defined(__GNUC__) && defined(__x86_64__)
    if (ak_cpu_has(AK_CPU_POPCNT)) {
        rank_codes_popcnt(codes, more, n, base, present, before);
        return;
    }
#endif
    rank_codes_plain(codes, more, n, base, present, before);
}

/* numdict_map_codes over integer codes through the rank directory (ids by their table). */
#define MAP_CODES(POPCOUNT)                                                                                       \
    for (size_t r = 0; r < n; r++) {                                                                              \
        const uint32_t code = codes[r];                                                                           \
        if (code < NUMDICT_INT_LOW) {                                                                             \
            codes[r] = m->id_rank[code];                                                                          \
            continue;                                                                                             \
        }                                                                                                         \
        const uint64_t i = (uint64_t)((int64_t)code - NUMDICT_INT_BIAS - m->int_base);                            \
        const struct numdict_rank_word w = m->int_words[i / 64];                                                  \
        codes[r] = (uint32_t)w.before + (uint32_t)POPCOUNT(w.present & (((uint64_t)1 << (i % 64)) - 1));          \
    }

static void map_codes_plain(const numdict_map *m, uint32_t *codes, size_t n)
{
    MAP_CODES(numdict_popcount)
}

#if defined(__GNUC__) && defined(__x86_64__)
/* The same with the POPCNT instruction (chosen at run time). */
__attribute__((target("popcnt"))) static void map_codes_popcnt(const numdict_map *m, uint32_t *codes, size_t n)
{
    MAP_CODES(__builtin_popcountll)
}
#endif

void numdict_map_codes(const numdict_map *m, uint32_t *codes, size_t n)
{
    if (m->missing) { /* (a column with missing values: code by code) */
        for (size_t r = 0; r < n; r++) codes[r] = numdict_map_code(m, codes[r]);
        return;
    }
    if (m->int_rank) { /* (integers only: no ids) */
        const uint32_t *rank = m->int_rank;
        const int64_t base = m->int_base + NUMDICT_INT_BIAS;
        for (size_t r = 0; r < n; r++) codes[r] = rank[(int64_t)codes[r] - base];
        return;
    }
    if (!m->int_words) {
        for (size_t r = 0; r < n; r++) codes[r] = numdict_map_code(m, codes[r]);
        return;
    }
#if defined(__GNUC__) && defined(__x86_64__)
    if (ak_cpu_has(AK_CPU_POPCNT)) {
        map_codes_popcnt(m, codes, n);
        return;
    }
#endif
    map_codes_plain(m, codes, n);
}

int numdict_finish(numdict *d, uint32_t *codes, size_t nrows, double **values, const char ***texts,
                   strbuf *spellings, uint32_t *count, ak_error *err)
{
    return numdict_finish_parts(d, codes, nrows, NULL, 0, values, texts, spellings, count, err);
}

int numdict_finish_parts(numdict *d, uint32_t *codes, size_t nrows, const uint32_t *more, size_t nmore,
                         double **values, const char ***texts, strbuf *spellings, uint32_t *count, ak_error *err)
{
    if (nmore && (d->general || (uint64_t)(d->max - d->min) + 1 > 8 * (uint64_t)(nrows + nmore) + 65536)) {
        /* through the general mode below, on the rows in one array */
        memcpy(codes + nrows, more, nmore * sizeof *more);
        nrows += nmore;
        nmore = 0;
    }
    const size_t total = nrows + nmore;
    *values = NULL;
    *texts = NULL;
    *count = 0;
    memset(spellings, 0, sizeof *spellings);
    if (!d->general && total) {
        /* Counting rank over the value range, when the range is not much
         * larger than the table; otherwise through the general mode (with
         * the rows in one array, see above). */
        uint64_t range = (uint64_t)(d->max - d->min) + 1;
        if (range > 8 * (uint64_t)total + 65536) AK_CHECK(go_general(d, codes, nrows, err));
    }
    if (d->general) return finish_general(d, codes, nrows, values, texts, spellings, count, err);
    if (!total) return ANONKIT_OK;
    /* The values present as a bitmap over the value range (one bit a value:
     * small enough to stay in cache while the rows set and read it at
     * random), with the number of present values before each 64-bit word: a
     * value's rank is that number plus the present values below it in its
     * word. */
    const uint64_t range = (uint64_t)(d->max - d->min) + 1;
    const uint32_t base = (uint32_t)(d->min + INT_BIAS);
    const size_t words = (size_t)((range + 63) / 64);
    uint64_t *present = calloc(words, sizeof *present);
    uint32_t *before = malloc(words * sizeof *before);
    if (!present || !before) {
        free(present);
        free(before);
        return ak_err_nomem(err);
    }
    for (size_t r = 0; r < nrows; r++) {
        const uint32_t v = codes[r] - base;
        present[v / 64] |= (uint64_t)1 << (v % 64);
    }
    for (size_t r = 0; r < nmore; r++) {
        const uint32_t v = more[r] - base;
        present[v / 64] |= (uint64_t)1 << (v % 64);
    }
    uint32_t n = 0;
    for (size_t w = 0; w < words; w++) {
        before[w] = n;
        n += numdict_popcount(present[w]);
    }
    double *vals = ak_huge_malloc((size_t)(n ? n : 1) * sizeof *vals); /* read at random by the algorithms */
    if (!vals) {
        free(present);
        free(before);
        return ak_err_nomem(err);
    }
    /* Distinct values in ascending order: the set bits, lowest first. Their
     * spelling is the value itself, so none is stored (texts = NULL). */
    uint32_t next = 0;
    for (size_t w = 0; w < words; w++)
        for (uint64_t bits = present[w]; bits; bits &= bits - 1)
            vals[next++] = (double)(d->min + (int64_t)(w * 64 + (size_t)__builtin_ctzll(bits)));
    rank_codes(codes, codes, nrows, base, present, before);
    rank_codes(codes + nrows, more, nmore, base, present, before); /* the second part, moved on the way */
    free(present);
    free(before);
    *values = vals;
    *count = n;
    return ANONKIT_OK;
}

/* ---- streaming ---- */

/* Integer values spread over more than this many bits go to the hash map. */
#define PRESENT_MAX_BITS ((uint64_t)1 << 28)

/* Interns integer v (with its canonical spelling) in the general map. */
static int intern_int(numdict *d, int64_t v, ak_error *err)
{
    if (!d->general && u64map_init(&d->ids, 1024) != 0) return ak_err_nomem(err);
    d->general = 1;
    char text[24];
    const int len = numdict_format_int(text, v);
    uint32_t id;
    const double dv = (double)v; /* (a provisional integer code: nine digits at most, exact) */
    uint64_t bits;
    memcpy(&bits, &dv, sizeof bits);
    return intern_general(d, bits, text, (size_t)len, &id, err);
}

/* Interns the integers of the presence bitmap in the general map, keeping
 * the bitmap (their canonical spellings then come before any other). */
static int present_ints_to_ids(numdict *d, ak_error *err)
{
    for (size_t w = 0; w < d->present_words; w++)
        for (uint64_t bits = d->present[w]; bits; bits &= bits - 1)
            AK_CHECK(intern_int(d, d->present_base + (int64_t)(w * 64 + (size_t)__builtin_ctzll(bits)), err));
    return ANONKIT_OK;
}

/* Moves the integers of the presence bitmap into the general map. */
static int present_to_ids(numdict *d, ak_error *err)
{
    AK_CHECK(present_ints_to_ids(d, err));
    free(d->present);
    d->present = NULL;
    d->present_words = 0;
    return ANONKIT_OK;
}

/* Makes the bitmap cover [lo, hi], the least and greatest of values about
 * to be set; 1 when that would be too wide. Whether it is depends on the
 * values alone (not on the room the bitmap has to grow, which depends on the
 * order they came in), so a column read in one piece or two is kept alike. */
static int present_cover(numdict *d, int64_t lo, int64_t hi, ak_error *err)
{
    const int64_t all_lo = d->present && d->present_lo < lo ? d->present_lo : lo;
    const int64_t all_hi = d->present && d->present_hi > hi ? d->present_hi : hi;
    if ((uint64_t)(all_hi + 1 - (all_lo - (all_lo % 64 + 64) % 64)) > PRESENT_MAX_BITS) return 1;
    d->present_lo = all_lo;
    d->present_hi = all_hi;
    if (d->present && lo >= d->present_base && hi < d->present_base + (int64_t)d->present_words * 64) return 0;
    /* from the least value's word (where the bitmap starts already, if it
     * exists: it only grows upwards) to the greatest value, and room above */
    const int64_t new_base = all_lo - (all_lo % 64 + 64) % 64;
    uint64_t bits = (uint64_t)(all_hi + 1 - new_base);
    bits += bits / 2 + 64; /* room to grow upwards */
    size_t words = (size_t)(bits + 63) / 64;
    uint64_t *p = calloc(words, sizeof *p);
    if (!p) return ak_err_nomem(err);
    if (d->present) { /* its set bits all lie in [new_base, all_hi] */
        const size_t at = (size_t)(d->present_base - new_base) / 64;
        const size_t keep = d->present_words < words - at ? d->present_words : words - at;
        memcpy(p + at, d->present, keep * sizeof *p);
    }
    free(d->present);
    d->present = p;
    d->present_base = new_base;
    d->present_words = words;
    return 0;
}

int numdict_absorb(numdict *d, const uint32_t *codes, size_t n, ak_error *err)
{
    /* every integer code handed out so far, these included, lies in [min, max]
     * (numdict_add keeps them): a bitmap covering that covers these */
    const int64_t lo = d->min, hi = d->max;
    if (lo > hi || n == 0) return ANONKIT_OK;
    if (d->present_base != INT64_MIN) { /* INT64_MIN: integers are hashed already */
        int wide = present_cover(d, lo, hi, err);
        if (wide < 0) return wide;
        if (!wide) {
            for (size_t i = 0; i < n; i++)
                if (codes[i] >= NUMDICT_INT_LOW && codes[i] != NUMDICT_MISSING) {
                    const uint64_t at = (uint64_t)((int64_t)codes[i] - INT_BIAS - d->present_base);
                    d->present[at / 64] |= (uint64_t)1 << (at % 64);
                }
            return ANONKIT_OK;
        }
        AK_CHECK(present_to_ids(d, err));
        d->present_base = INT64_MIN; /* from now on integers are hashed */
    }
    for (size_t i = 0; i < n; i++)
        if (codes[i] >= NUMDICT_INT_LOW && codes[i] != NUMDICT_MISSING) AK_CHECK(intern_int(d, (int64_t)codes[i] - INT_BIAS, err));
    return ANONKIT_OK;
}

/* Folds the presence bitmap of b into d's integers (d bitmap or hashed). */
static int absorb_present(numdict *d, const numdict *b, ak_error *err)
{
    if (!b->present) return ANONKIT_OK;
    if (d->present_base != INT64_MIN) {
        int wide = present_cover(d, b->present_lo, b->present_hi, err);
        if (wide < 0) return wide;
        if (!wide) { /* both bases are multiples of 64: whole words line up (b's up to its greatest value) */
            const size_t at = (size_t)(b->present_base - d->present_base) / 64;
            const size_t used = (size_t)(b->present_hi - b->present_base) / 64 + 1;
            for (size_t w = 0; w < used; w++) d->present[at + w] |= b->present[w];
            return ANONKIT_OK;
        }
        AK_CHECK(present_to_ids(d, err));
        d->present_base = INT64_MIN;
    }
    for (size_t w = 0; w < b->present_words; w++)
        for (uint64_t bits = b->present[w]; bits; bits &= bits - 1)
            AK_CHECK(intern_int(d, b->present_base + (int64_t)(w * 64 + (size_t)__builtin_ctzll(bits)), err));
    return ANONKIT_OK;
}

int numdict_merge_stream(numdict *d, const numdict *b, uint32_t **id_map, ak_error *err)
{
    *id_map = NULL;
    if (b->min < d->min) d->min = b->min;
    if (b->max > d->max) d->max = b->max;
    if (b->present_base == INT64_MIN && d->present_base != INT64_MIN) { /* b hashes its integers: so shall d */
        AK_CHECK(present_to_ids(d, err));
        d->present_base = INT64_MIN;
    }
    AK_CHECK(absorb_present(d, b, err));
    if (!b->general) return ANONKIT_OK;
    /* d's integers are earlier rows than any of b's: their canonical
     * spellings go first (b's own came before its other values at its switch) */
    if (d->present) AK_CHECK(present_ints_to_ids(d, err));
    /* b's ids in their order of first appearance, after d's: the order one
     * sequential read of d's rows, then b's, would have given them */
    uint32_t *map = malloc((size_t)(b->ids.count ? b->ids.count : 1) * sizeof *map);
    if (!map) return ak_err_nomem(err);
    if (!d->general && u64map_init(&d->ids, 1024) != 0) {
        free(map);
        return ak_err_nomem(err);
    }
    d->general = 1;
    for (uint32_t id = 0; id < b->ids.count; id++) {
        ak_num x;
        id_value(b, id, &x);
        const char *text = b->spellings.data + b->spelling_at[id];
        uint64_t bits;
        int rc = value_key(d, &x, &bits, err);
        if (rc == 0) rc = intern_general(d, bits, text, strlen(text), &map[id], err);
        if (rc < 0) {
            free(map);
            return rc;
        }
    }
    *id_map = map;
    return ANONKIT_OK;
}

size_t numdict_map_bytes(const numdict_map *map, uint32_t count)
{
    return (size_t)map->int_range / 4 + (map->int_rank ? 4 * (size_t)map->int_range : 0) +
           (map->has_ids ? (size_t)count * 40 : 0);
}

void numdict_map_free(numdict_map *map)
{
    free(map->int_words);
    free(map->int_rank);
    free(map->id_rank);
    if (map->has_ids) u64map_free(&map->ids);
    memset(map, 0, sizeof *map);
}

int numdict_finish_stream(numdict *d, double **values, const char ***texts, strbuf *spellings, uint32_t *count,
                          numdict_map *map, ak_error *err)
{
    memset(map, 0, sizeof *map);
    *values = NULL;
    *texts = NULL;
    *count = 0;
    memset(spellings, 0, sizeof *spellings);
    if (!d->general) {
        /* Integers only: ranks by counting over the bitmap, cut to the words
         * from the least value's to the greatest's (the bitmap has room to
         * grow that depends on the order the values came in; the directory
         * and int_range do not, so a file read in one piece or two is ranked
         * and budgeted alike). */
        if (!d->present) return ANONKIT_OK;
        size_t first = 0, last = d->present_words;
        while (first < d->present_words && !d->present[first]) first++;
        while (last > first && !d->present[last - 1]) last--;
        if (first == last) return ANONKIT_OK;
        const size_t words = last - first;
        const uint64_t *present = d->present + first;
        const int64_t base = d->present_base + (int64_t)first * 64;
        const uint64_t range = (uint64_t)words * 64;
        map->int_base = base;
        map->int_range = range;
        if (!(map->int_words = malloc(words * sizeof *map->int_words))) return ak_err_nomem(err);
        uint32_t n = 0;
        for (size_t w = 0; w < words; w++) {
            map->int_words[w].present = present[w];
            map->int_words[w].before = n;
            n += numdict_popcount(present[w]);
        }
        double *vals = malloc((size_t)(n ? n : 1) * sizeof *vals);
        if (!vals) return ak_err_nomem(err);
        if (range <= NUMDICT_DIRECT_RANGE && !(map->int_rank = malloc(range * sizeof *map->int_rank))) {
            free(vals);
            return ak_err_nomem(err);
        }
        uint32_t next = 0;
        for (uint64_t i = 0; i < range; i++) {
            if (map->int_rank) map->int_rank[i] = next; /* (absent values: the rank they would take) */
            if (present[i / 64] >> (i % 64) & 1) vals[next++] = (double)(base + (int64_t)i);
        }
        *values = vals;
        *count = n;
        return ANONKIT_OK;
    }
    /* Mixed or general: every value through the map, ranked by one sort. */
    if (d->present) AK_CHECK(present_to_ids(d, err));
    const uint32_t n = d->ids.count;
    uint32_t *codes = malloc((size_t)(n ? n : 1) * sizeof *codes);
    if (!codes) return ak_err_nomem(err);
    for (uint32_t i = 0; i < n; i++) codes[i] = i;
    int rc = finish_general(d, codes, n, values, texts, spellings, count, err);
    if (rc < 0) {
        free(codes);
        return rc;
    }
    map->id_rank = codes; /* codes[id] is now the rank of id */
    map->ids = d->ids;    /* the map moves to the caller */
    map->has_ids = 1;
    memset(&d->ids, 0, sizeof d->ids);
    d->general = 0;
    if (d->wide) u64map_free(d->wide); /* (the map keeps only its tags: no integer code is wide) */
    free(d->wide);
    d->wide = NULL;
    return ANONKIT_OK;
}
