/* numdict.h — the dictionary of a numeric QI (docs/ARCHITECTURE.md §3 step 1): values are
 * collected while streaming and finally ranked, so that a row's code is the
 * rank of its value among the column's distinct values.
 *
 * Two modes. While every value is a canonically written integer of at most
 * nine digits (no sign but '-', no leading zero), codes hold the values
 * themselves and ranks come from one counting pass over the value range: no
 * hashing and no sorting, the common case of integer microdata. The first
 * other value (a decimal, "007", "1e3") moves the column to the general mode,
 * a hash map from value to first spelling followed by one sort. Both modes
 * keep the first spelling of every value for publication.
 *
 * Values are ordered exactly (docs/ARCHITECTURE.md §4): a value is accepted
 * only when ak_num_parse_exact accepts it (an integer within int64, or at
 * most 15 significant digits), and then two distinct values get two codes in
 * their true order. The general mode keys a value by its double's bits,
 * which tell apart every accepted value except the integers beyond ±2^53
 * (ak_num.wide): those are keyed exactly in a second map, `wide`, and enter
 * the first under a NaN pattern (NUMDICT_WIDE_TAG | index + 1) that no
 * accepted value has. Their doubles in `values` are the nearest ones (for
 * the metrics); codes and spellings stay exact. */
#ifndef AK_NUMDICT_H
#define AK_NUMDICT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "common/error.h"
#include "common/hash.h"
#include "common/numparse.h"
#include "common/strbuf.h"

typedef struct numdict {
    int general;        /* 0: integer mode, 1: general mode */
    int streaming;      /* rows are not kept (numdict_absorb): codes stay provisional */
    int64_t min, max;   /* integer mode: extent of the values seen */
    u64map ids;         /* general mode: bits of the double (or a wide integer's tag) -> provisional id */
    u64map *wide;       /* general mode: a wide integer (as uint64_t) -> its index; NULL: none yet */
    strbuf spellings;   /* general mode: first spelling of each provisional id, NUL-terminated */
    size_t *spelling_at;/* general mode: offset of each provisional id's spelling */
    size_t spelling_cap;
    size_t stream_base; /* streaming: the first slot of the codes array its rows are added at */
    uint64_t *present;  /* streaming integer mode: bit v - present_base set when v occurs */
    int64_t present_base;
    size_t present_words;
    int64_t present_lo, present_hi; /* the least and greatest value set in it (the bitmap has room to grow) */
} numdict;

void numdict_init(numdict *d);
void numdict_free(numdict *d);

/* Integer mode stores value + NUMDICT_INT_BIAS in a code. */
#define NUMDICT_INT_BIAS 2147483648LL

/* The key in `ids` of the wide integer of index j (a NaN: no accepted value's bits). */
#define NUMDICT_WIDE_TAG 0x7FF0000000000000ULL

/* Returned by numdict_add for a number anonkit cannot order exactly
 * (AK_NUM_INEXACT): the caller names the file, line and column. */
#define NUMDICT_INEXACT (-64)

/* numdict_add for every value the inline fast path does not take. */
int numdict_add_slow(numdict *d, const char *text, size_t len, uint32_t *codes, size_t row, ak_error *err);

/* Adds the value of row `row` (rows are added in order 0, 1, ...), storing its
 * provisional code in codes[row]. Returns 0, -1 when the text is not a finite
 * number, NUMDICT_INEXACT when it has more digits than anonkit can order
 * exactly, or ANONKIT_E_NOMEM. Inline for the common case, a positive integer
 * of at most nine digits in integer mode: this runs once per numeric field. */
static inline int numdict_add(numdict *d, const char *text, size_t len, uint32_t *codes, size_t row, ak_error *err)
{
    if (!d->general && len >= 1 && len <= 9 && text[0] >= '1' && text[0] <= '9') {
        int64_t v = text[0] - '0';
        size_t i = 1;
        for (; i < len; i++) {
            unsigned digit = (unsigned)(unsigned char)text[i] - '0';
            if (digit > 9) break;
            v = v * 10 + digit;
        }
        if (i == len) {
            codes[row] = (uint32_t)(v + NUMDICT_INT_BIAS);
            if (v < d->min) d->min = v;
            if (v > d->max) d->max = v;
            return 0;
        }
    }
    return numdict_add_slow(d, text, len, codes, row, err);
}

/* numdict_add for text that may be read 8 bytes from its start even when
 * shorter (a field of the CSV reader, CSV_FIELD_READABLE). A canonical integer
 * of one to eight digits, the common case, is checked and converted eight
 * bytes at a time, without a branch per digit (whose mispredictions at the
 * varying end of numbers were most of the cost of a field); anything else goes
 * through numdict_add, so the result is always numdict_add's. */
static inline int numdict_add_padded(numdict *d, const char *text, size_t len, uint32_t *codes, size_t row,
                                     ak_error *err)
{
    if (!d->general && len - 1 < 8) { /* 1 to 8 bytes */
        const unsigned char *u = (const unsigned char *)text;
        const uint64_t word = (uint64_t)u[0] | (uint64_t)u[1] << 8 | (uint64_t)u[2] << 16 | (uint64_t)u[3] << 24 |
                              (uint64_t)u[4] << 32 | (uint64_t)u[5] << 40 | (uint64_t)u[6] << 48 |
                              (uint64_t)u[7] << 56; /* byte i of text in bits 8i..8i+7 */
        /* The field's bytes moved to the top of the word, '0's below them:
         * the number written with 8 digits, its first digit in the lowest byte. */
        const unsigned pad = 8 * (8 - (unsigned)len);
        const uint64_t x = word << pad | ((((uint64_t)1 << pad) - 1) & 0x3030303030303030ULL);
        /* every byte in '0'..'9': high nibble 3, and no carry out of the low
         * nibble when 6 is added; no leading zero unless the number is 0 */
        const int digits = (x & 0xF0F0F0F0F0F0F0F0ULL) == 0x3030303030303030ULL &&
                           ((x + 0x0606060606060606ULL) & 0xF0F0F0F0F0F0F0F0ULL) == 0x3030303030303030ULL;
        if (digits && (u[0] != '0' || len == 1)) {
            uint64_t v = x & 0x0F0F0F0F0F0F0F0FULL; /* digit values, pairs then quads then all 8 combined */
            v = (v * 2561) >> 8;
            v = ((v & 0x00FF00FF00FF00FFULL) * 6553601) >> 16;
            v = ((v & 0x0000FFFF0000FFFFULL) * 42949672960001ULL) >> 32;
            const int64_t value = (int64_t)v;
            codes[row] = (uint32_t)(value + NUMDICT_INT_BIAS);
            if (value < d->min) d->min = value;
            if (value > d->max) d->max = value;
            return 0;
        }
    }
    return numdict_add(d, text, len, codes, row, err);
}

/* Replaces codes[0..nrows) by ranks and returns the ascending distinct values,
 * their spellings (pointing into *spellings, which the caller then owns; NULL
 * in integer mode, where a value's spelling is the value itself) and their
 * count. */
int numdict_finish(numdict *d, uint32_t *codes, size_t nrows, double **values /* OUT */,
                   const char ***texts /* OUT */, strbuf *spellings /* OUT */, uint32_t *count /* OUT */,
                   ak_error *err);

/* numdict_finish of rows in two parts, codes[0..nrows) and more[0..nmore)
 * (rows added in that order), whose ranks all go to codes[0..nrows + nmore):
 * codes has room for them. The second part is moved in the pass that maps
 * codes to ranks, so a table read in two pieces needs no copy of its own. */
int numdict_finish_parts(numdict *d, uint32_t *codes, size_t nrows, const uint32_t *more, size_t nmore,
                         double **values /* OUT */, const char ***texts /* OUT */, strbuf *spellings /* OUT */,
                         uint32_t *count /* OUT */, ak_error *err);

/* ---- streaming (out-of-core) use ----
 * When rows are not kept, provisional codes handed out by numdict_add are final
 * for the rows already written away: integer-mode codes (value + bias, all at
 * least NUMDICT_INT_LOW) and general-mode ids (below it) may then coexist.
 * Set d->streaming = 1 before the first add, pass every block of provisional
 * codes to numdict_absorb before reusing its array, and end with
 * numdict_finish_stream, whose map turns any provisional code into its rank. */
#define NUMDICT_INT_LOW ((uint32_t)(NUMDICT_INT_BIAS - 999999999LL))

/* The provisional code of a missing value (docs/hierarchies.md, "Missing
 * values"): above every integer code and every id, never absorbed; a map
 * with `missing` set ranks it 0 and every value one higher. */
#define NUMDICT_MISSING UINT32_MAX

int numdict_absorb(numdict *d, const uint32_t *codes, size_t n, ak_error *err);

/* Folds the streaming dictionary b (rows read after d's, on another thread)
 * into d. b's integer codes stay valid as they are; its general-mode ids do
 * not: *id_map (NULL when b has none, else the caller frees it) maps each to
 * d's id for the same value. */
int numdict_merge_stream(numdict *d, const numdict *b, uint32_t **id_map /* OUT */, ak_error *err);

/* The widest integer range whose ranks numdict_map also keeps directly
 * (4 bytes a value, 16 KiB at most: a first-level cache holds it). */
#define NUMDICT_DIRECT_RANGE 4096

typedef struct numdict_map {
    /* integer values: a rank directory over the presence bitmap, 64 values a
     * word with the count of values before it (a quarter of a byte a value,
     * so that the directory of a wide domain stays in cache); NULL: look up ids */
    struct numdict_rank_word { uint64_t present, before; } *int_words;
    int64_t int_base;
    uint64_t int_range;
    uint32_t *int_rank;   /* a range of at most NUMDICT_DIRECT_RANGE values: the rank of each, one
                             load instead of a directory word and a count (NULL: none) */
    uint32_t *id_rank;    /* rank of general id */
    u64map ids;           /* double bits -> id, when int_words is NULL */
    int has_ids;
    int missing; /* the column holds missing values: NUMDICT_MISSING ranks 0, the values from 1 */
} numdict_map;

int numdict_finish_stream(numdict *d, double **values /* OUT */, const char ***texts /* OUT */,
                          strbuf *spellings /* OUT */, uint32_t *count /* OUT */, numdict_map *map /* OUT */,
                          ak_error *err);
void numdict_map_free(numdict_map *map);
/* Bytes map holds for a column of `count` distinct values (the memory
 * budgets count them): the rank directory, the direct ranks, and per
 * general-mode id its rank and hash entry (about 40 bytes). */
size_t numdict_map_bytes(const numdict_map *map, uint32_t count);

/* Set bits of x: a few shifts and adds (without -mpopcnt the builtin is a
 * library call; hot loops pick the instruction at run time instead). */
static inline uint32_t numdict_popcount(uint64_t x)
{
    x -= (x >> 1) & 0x5555555555555555ULL;
    x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
    x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
    return (uint32_t)((x * 0x0101010101010101ULL) >> 56);
}

/* The rank of the provisional code of a value among the values. */
static inline uint32_t numdict_map_value(const numdict_map *m, uint32_t code)
{
    if (code < NUMDICT_INT_LOW) return m->id_rank[code];
    const int64_t v = (int64_t)code - NUMDICT_INT_BIAS;
    if (m->int_rank) return m->int_rank[v - m->int_base];
    if (m->int_words) {
        const uint64_t i = (uint64_t)(v - m->int_base);
        const struct numdict_rank_word w = m->int_words[i / 64];
        return (uint32_t)w.before + numdict_popcount(w.present & (((uint64_t)1 << (i % 64)) - 1));
    }
    double dv = (double)v;
    uint64_t bits;
    memcpy(&bits, &dv, sizeof bits);
    return m->id_rank[u64map_find(&m->ids, bits)];
}

/* The rank of a provisional code (the missing code and the values above it
 * when the column holds missing values). */
static inline uint32_t numdict_map_code(const numdict_map *m, uint32_t code)
{
    if (m->missing) return code == NUMDICT_MISSING ? 0 : numdict_map_value(m, code) + 1;
    return numdict_map_value(m, code);
}

/* The ranks of n provisional codes, in place (numdict_map_code for each, in
 * one loop that uses the POPCNT instruction where the processor has it). */
void numdict_map_codes(const numdict_map *m, uint32_t *codes, size_t n);

/* Writes v in decimal into buf (room for 21 bytes) and returns its length. */
int numdict_format_int(char *buf, int64_t v);


#endif
