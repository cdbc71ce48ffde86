/* hierbuild_collect.c — reading the distinct values of one or more columns
 * of a CSV file in one pass (hierbuild.h: hb_collect, hb_collect_columns),
 * for the builders of hierbuild.c and hierbuild_num.c.
 *
 * Records that are plain lines (no quote) are scanned 64 bytes at a time:
 * a bit mask of the delimiters and one of the line ends per 64 bytes (SSE2
 * on x86-64; a block's first quote found once beforehand), the delimiters
 * of a line counted by popcount and looked at one by one only in the part
 * of a line where a column asked for begins or ends; each column asked for
 * taken as its plan says (scan_take: integers marked in a bitmap, short
 * text counted through the memo, the rest out of line); the CSV reader
 * (io/csv.h) takes the header and any record from the first quote on. On a
 * processor with AVX2 (chosen at run time: scan_lines_avx2) the masks are
 * made 32 bytes at a time and the bitmap columns taken four fields of a
 * line at once (scan_bits_avx2); elsewhere the same scan without them. */
#include "core/hierbuild.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/cpu.h"
#include "core/hierbuild_internal.h"
#include "io/blockscan.h"
#include "io/csv.h"

#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
#endif

/* The value of a canonical integer field below HB_DENSE (digits, no leading
 * zero, at most 7 of them), or -1. */
static inline long dense_value(const char *s, size_t len)
{
    if (len == 0 || len > 7 || (s[0] == '0' && len > 1)) return -1;
    long v = 0;
    for (size_t i = 0; i < len; i++) {
        const unsigned d = (unsigned)(unsigned char)s[i] - '0';
        if (d > 9) return -1;
        v = v * 10 + (long)d;
    }
    return v < (long)HB_DENSE ? v : -1;
}

/* The number whose decimal digits' values (0-9, one per byte) fill word x
 * right-aligned, most significant first in memory, leading zero bytes
 * before them: pairs, fours and eights of digits combined by three
 * multiplications (SWAR, as in Lemire's "parse eight digits"). */
static inline uint32_t swar_digits_value(uint64_t x)
{
    x = x * 10 + (x >> 8);
    x = (((x & 0x000000FF000000FFULL) * (100 + (1000000ULL << 32))) +
         (((x >> 16) & 0x000000FF000000FFULL) * (1 + (10000ULL << 32)))) >> 32;
    return (uint32_t)x;
}

/* dense_value for a field followed by at least 8 - len readable bytes (the
 * fast scan's padded buffer): the digits checked and converted eight bytes
 * at once (SWAR: each byte XOR '0' must be below 10; then pairs, fours and
 * eights of digits combined by three multiplications, as in Lemire's
 * "parse eight digits"). */
static inline long dense_value_padded(const char *s, size_t len)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (len - 1 >= 7 || (unsigned)(unsigned char)s[0] - '0' > 9 || (s[0] == '0' && len > 1))
        return -1; /* (len 0 wraps around; text mostly ends here, at its first byte) */
    uint64_t x;
    memcpy(&x, s, sizeof x);
    x = (x ^ 0x3030303030303030ULL) & ((((uint64_t)1) << (8 * len)) - 1); /* digit values, the rest 0 */
    if (((x + 0x7676767676767676ULL) | x) & 0x8080808080808080ULL) return -1; /* a byte that is no digit */
    x <<= 8 * (8 - len); /* right-aligned: the bytes before the first digit are leading zeros */
    const long v = (long)swar_digits_value(x);
    return v < (long)HB_DENSE ? v : -1;
#else
    return dense_value(s, len);
#endif
}

/* A cache in front of v->dict for text values of up to MEMO_MAX (24) bytes
 * (the categories of most columns, "Married-civ-spouse" among them): a slot
 * per hash of the value's bytes, holding those bytes (three words,
 * zero-padded, and the length: the value itself) and its id, so that a value
 * seen before is counted without hashing it in full and probing the map. A
 * slot is one 32-byte record: a lookup reads one cache line. */
#define MEMO_SLOTS 256
#define MEMO_MAX 24
typedef struct hb_memo_slot {
    uint64_t a, b, c;
    uint32_t len, id; /* len 0: an empty slot */
} hb_memo_slot;
typedef struct hb_memo {
    hb_memo_slot s[MEMO_SLOTS];
} hb_memo;

/* The low n bytes of a word (n from 0 to 8). */
#define MEMO_BYTES(n) ((n) <= 0 ? 0ULL : (n) >= 8 ? ~0ULL : (((uint64_t)1 << ((8 * (n)) & 63)) - 1))
#define MEMO_MASKS(n) {MEMO_BYTES(n), MEMO_BYTES((n) - 8), MEMO_BYTES((n) - 16)}
/* Per length 0..MEMO_MAX: the masks of the value's bytes in its three words. */
static const uint64_t memo_masks[MEMO_MAX + 1][3] = {
    MEMO_MASKS(0),  MEMO_MASKS(1),  MEMO_MASKS(2),  MEMO_MASKS(3),  MEMO_MASKS(4),  MEMO_MASKS(5),  MEMO_MASKS(6),
    MEMO_MASKS(7),  MEMO_MASKS(8),  MEMO_MASKS(9),  MEMO_MASKS(10), MEMO_MASKS(11), MEMO_MASKS(12), MEMO_MASKS(13),
    MEMO_MASKS(14), MEMO_MASKS(15), MEMO_MASKS(16), MEMO_MASKS(17), MEMO_MASKS(18), MEMO_MASKS(19), MEMO_MASKS(20),
    MEMO_MASKS(21), MEMO_MASKS(22), MEMO_MASKS(23), MEMO_MASKS(24)};

/* The bytes of text[0..len), len <= MEMO_MAX, as three zero-padded words
 * (with the length, the value itself); padded: MEMO_MAX bytes are readable
 * from text on (the fast scan's buffer), read as three whole words and
 * masked, without a branch on the length. */
static inline void memo_key(const char *text, size_t len, int padded, uint64_t *a, uint64_t *b, uint64_t *c)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (padded) {
        const uint64_t *mask = memo_masks[len];
        memcpy(a, text, 8);
        memcpy(b, text + 8, 8);
        memcpy(c, text + 16, 8);
        *a &= mask[0], *b &= mask[1], *c &= mask[2];
        return;
    }
#else
    (void)padded;
#endif
    unsigned char w[3 * 8] = {0};
    memcpy(w, text, len);
    memcpy(a, w, 8);
    memcpy(b, w + 8, 8);
    memcpy(c, w + 16, 8);
}

/* The memo slot of a value's key: a multiplicative hash of its words and
 * length folded by XOR (no rotations: the multiplication mixes, and values
 * that share their first eight bytes still differ in the words after). */
static inline uint32_t memo_slot(uint64_t a, uint64_t b, uint64_t c, size_t len)
{
    const uint64_t x = a ^ b ^ c ^ (uint64_t)len;
    return (uint32_t)((x * 0x9E3779B97F4A7C15ULL) >> 56);
}

/* Counts one present value text[0..len) of `line` that is not marked in a
 * bitmap and not found in the memo (take's rarer cases, out of line); the
 * memo learns it. */
static int take_counted(hb_values *v, const char *text, size_t len, long x, long line, int padded, ak_error *err)
{
    if (x < 0 && len <= MEMO_MAX && v->memo) {
        hb_memo *m = v->memo;
        uint64_t a, b, c;
        memo_key(text, len, padded, &a, &b, &c);
        hb_memo_slot *e = &m->s[memo_slot(a, b, c, len)];
        AK_CHECK(hb__add_value(v, text, len, line, 1, &e->id, err));
        e->a = a, e->b = b, e->c = c, e->len = (uint32_t)len;
        return ANONKIT_OK;
    }
    if (x >= 0 && !v->dense) {
        v->dense = calloc(HB_DENSE, sizeof *v->dense);
        v->dense_line = calloc(HB_DENSE, sizeof *v->dense_line);
        if (!v->dense || !v->dense_line) return ak_err_nomem(err);
    }
    if (x >= 0) {
        if (!v->dense[x]++) {
            v->dense_line[x] = (uint32_t)line;
            if ((uint32_t)x < v->dense_lo) v->dense_lo = (uint32_t)x;
            if ((uint32_t)x > v->dense_hi) v->dense_hi = (uint32_t)x;
        }
        return ANONKIT_OK;
    }
    return hb__add_value(v, text, len, line, 1, NULL, err);
}

/* Counts (or marks) one present or missing value text[0..len) of `line`
 * without counting its row (take does; the fast scan counts its records
 * once); padded: text is followed by readable bytes (dense_value_padded).
 * The fast scan marks the interval builder's plain whole numbers itself
 * (scan_bits): what reaches this from there is every other field. */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline int take_value(hb_values *v, const char *text, size_t len, long line, const hb_missing *missing,
                             int padded, ak_error *err)
{
    if (padded && len - 1 < MEMO_MAX && (unsigned)(unsigned char)text[0] - '0' > 9) {
        /* a short value that is no number (it starts with no digit): the memo
         * first, which holds only present values that are not numbers (so a
         * hit is neither missing nor counted by value); len 0 wraps around */
        uint64_t a, b, c;
        memo_key(text, len, 1, &a, &b, &c);
        const hb_memo_slot *e = &v->memo->s[memo_slot(a, b, c, len)];
        if (((e->a ^ a) | (e->b ^ b) | (e->c ^ c) | (e->len ^ len)) == 0) {
            v->count[e->id]++;
            return ANONKIT_OK;
        }
        if (missing->count && hb_is_missing(missing, text, len)) {
            if (!v->nmissing++) v->missing_line = line;
            return ANONKIT_OK;
        }
        return take_counted(v, text, len, -1, line, 1, err);
    }
    if (len == 0 || (missing && missing->count && hb_is_missing(missing, text, len))) {
        if (!v->nmissing++) v->missing_line = line;
        return ANONKIT_OK;
    }
    const long x = padded ? dense_value_padded(text, len) : dense_value(text, len);
    if (x >= 0 && v->bits) {
        v->bits[x >> 6] |= (uint64_t)1 << (x & 63);
        v->bits_or |= (uint32_t)x;
        return ANONKIT_OK;
    }
    if (x < 0 && len <= MEMO_MAX && v->memo) { /* a short text value seen before: counted without the map (lines
                                                  only grow while a file is read: a value's first line stays) */
        const hb_memo *m = v->memo;
        uint64_t a, b, c;
        memo_key(text, len, padded, &a, &b, &c);
        const hb_memo_slot *e = &m->s[memo_slot(a, b, c, len)];
        if (((e->a ^ a) | (e->b ^ b) | (e->c ^ c) | (e->len ^ len)) == 0) {
            v->count[e->id]++;
            return ANONKIT_OK;
        }
    }
    return take_counted(v, text, len, x, line, padded, err);
}

/* take_value, and the value's row counted. */
static inline int take(hb_values *v, const char *text, size_t len, long line, const hb_missing *missing, int padded,
                       ak_error *err)
{
    v->rows++;
    return take_value(v, text, len, line, missing, padded, err);
}

/* Sets v->dense_lo and dense_hi to the least and greatest value marked in
 * v->bits (the marking itself leaves them: a compare each per value saved),
 * looking no higher than v->bits_or allows (the pages of the bitmap above
 * are never touched: most columns mark a few values near its start). */
static void bits_bounds(hb_values *v)
{
    if (!v->bits) return;
    const uint32_t top = v->bits_or ? (uint32_t)(((uint64_t)2 << (31 - __builtin_clz(v->bits_or))) - 1) : 0;
    const uint32_t words = top / 64 + 1 < HB_DENSE / 64 ? top / 64 + 1 : HB_DENSE / 64;
    uint32_t lo = 0, hi = words;
    const uint64_t *b = v->bits;
    /* eight words at a time (the bitmap is 65,536 words) */
    while (lo + 8 <= words && !(b[lo] | b[lo + 1] | b[lo + 2] | b[lo + 3] | b[lo + 4] | b[lo + 5] | b[lo + 6] | b[lo + 7]))
        lo += 8;
    while (lo < words && !b[lo]) lo++;
    if (lo == words) return; /* (none: dense_lo stays above dense_hi) */
    while (hi >= lo + 8 && !(b[hi - 1] | b[hi - 2] | b[hi - 3] | b[hi - 4] | b[hi - 5] | b[hi - 6] | b[hi - 7] | b[hi - 8]))
        hi -= 8;
    while (!b[hi - 1]) hi--;
    v->dense_lo = lo * 64 + (uint32_t)__builtin_ctzll(b[lo]);
    v->dense_hi = (hi - 1) * 64 + 63 - (uint32_t)__builtin_clzll(b[hi - 1]);
}

/* Block of the fast scan, and room after it for the 64-byte masks and the
 * 8-byte loads of dense_value_padded. */
#define SCAN_BLOCK ((size_t)1 << 16)
#define SCAN_PAD 64

/* The columns asked for, as the fast scan finds them in a line: column c
 * begins after delimiter c (the c-th of the line, counted from 1; column 0
 * at the line's start) and ends at delimiter c + 1 (the last column at the
 * line's end). next[k] is the least delimiter number above k that begins or
 * ends a column asked for (UINT32_MAX: none); at[k] that delimiter's byte
 * in the line being read (with all, every delimiter's, while a line has no
 * more than the header's). */
typedef struct scan_plan {
    hb_values *vs;
    const uint32_t *cols;
    size_t n;
    uint32_t ncolumns;
    uint32_t *next;
    size_t *at;
    int all; /* every delimiter placed in at (most of them begin or end a column asked for), not only those */
    uint32_t last; /* with all, the last delimiter placed: the greatest that ends a column asked for (at most
                      ncolumns - 1: the line's end is at[ncolumns]) */
    uint64_t limit; /* the byte before which the scan ends (a line's start), UINT64_MAX for none */
    struct scan_take *take; /* per column asked for (n), what scan_record needs of it: first the nbits
                               whose integers are only marked, then the others */
    size_t nbits;
    size_t ngroups; /* the groups of four of those nbits that scan_bits_avx2 takes at once (nbits / 4) */
    uint64_t *gbits; /* per take of those groups, its bitmap's address (scan_bits_avx2 adds a number's word) */
    uint64_t *gor;  /* per take of those groups, the OR of the numbers scan_bits_avx2 marked (added to its bits_or
                       once the scan ends) */
} scan_plan;

/* Column j of a plan as scan_record takes it: the bitmap in which its whole
 * numbers are only marked (vs[j].bits when no token is missing), else NULL;
 * its memo, values and missing tokens; its number in the line. */
typedef struct scan_take {
    uint64_t *bits;
    uint32_t bits_or; /* (the scan's part of v->bits_or, added to it once the scan ends) */
    const hb_memo *memo;
    hb_values *v;
    const hb_missing *missing;
    uint32_t col;
    uint32_t run; /* the first of a group of four (scan_bits_avx2) whose columns are col to col + 3 */
} scan_take;

/* take_value of the fast scan out of line: the rarer values of scan_record
 * (its loop keeps the common ones' few variables in registers). */
#if defined(__GNUC__)
__attribute__((noinline))
#endif
static int take_slow(const scan_take *t, const unsigned char *s, size_t len, long line, ak_error *err)
{
    return take_value(t->v, (const char *)s, len, line, t->missing, 1, err);
}

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
/* Column tk's field of the line whose delimiters are in at (scan_record):
 * a whole number of 1 to 7 digits without a leading zero, below HB_DENSE,
 * marked in its bitmap at once, any other field taken by take_slow. */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline int scan_bits(scan_take *tk, const unsigned char *buf, const size_t *at, long line, ak_error *err)
{
    const uint32_t c = tk->col;
    const size_t from = at[c] + 1, flen_j = at[c + 1] - from;
    const unsigned char *const s = buf + from;
    if (flen_j - 1 < 7) {
        /* 1 to 7 digits, no leading zero, marked at once. The digit checks of dense_value_padded on the
           field's eight bytes, those beyond the field shifted out (the first of them at the top once
           shifted: the digits right-aligned, leading zeros before them) */
        uint64_t t;
        memcpy(&t, s, sizeof t);
        t ^= 0x3030303030303030ULL;
        const unsigned sh = 8 * (8 - (unsigned)flen_j);
        if (!(((((t + 0x7676767676767676ULL) | t) & 0x8080808080808080ULL) << sh) |
              ((t & 0xFF) == 0 && flen_j > 1))) {
            const uint32_t d = swar_digits_value(t << sh);
            if (d < HB_DENSE) {
                tk->bits[d >> 6] |= (uint64_t)1 << (d & 63);
                tk->bits_or |= d;
                return ANONKIT_OK;
            }
        }
    }
    return take_slow(tk, s, flen_j, line, err);
}
#endif

#if defined(__GNUC__) && defined(__x86_64__)
/* The bitmap columns of a line (p->take[0..nbits), scan_record) four at a
 * time with AVX2: each field's eight bytes in a 64-bit lane, the checks and
 * the conversion of scan_bits in every lane at once (the digits
 * right-aligned by a variable shift per lane, VPSLLVQ; pairs, fours and
 * eights of digits combined by VPMADDUBSW, VPMADDWD and VPMULUDQ: the
 * SIMD form of Lemire's "parse eight digits"), then each number marked in
 * its column's bitmap; a lane that fails a check (no digit, a leading
 * zero, no or more than 7 digits, HB_DENSE or more) goes to scan_bits, so
 * every field gets what scan_bits gives it. The columns left over (fewer
 * than four) are taken by scan_bits too. */
__attribute__((target("avx2,bmi,bmi2,popcnt"))) static int scan_bits_avx2(const scan_plan *p,
                                                                           const unsigned char *buf, long line,
                                                                           ak_error *err)
{
    const size_t *const at = p->at;
    const __m256i zeros = _mm256_set1_epi8('0'), k76 = _mm256_set1_epi8(0x76), k80 = _mm256_set1_epi8((char)0x80);
    const __m256i two = _mm256_set1_epi64x(2), high = _mm256_set1_epi64x(~(long long)7);
    const __m256i pairs = _mm256_set1_epi16(0x010A), fours = _mm256_set1_epi32(0x00010064);
    const __m256i eights = _mm256_set1_epi64x(10000), one = _mm256_set1_epi64x(1), low6 = _mm256_set1_epi64x(63);
    const size_t groups4 = 4 * p->ngroups;
    for (size_t g4 = 0; g4 < groups4; g4 += 4) {
        scan_take *const tk = p->take + g4;
        size_t a0, a1, a2, a3; /* at[c] of each lane's column c: the delimiter before its field (at[0] wraps
                                  around: + 1 back) */
        __m256i l;             /* each field's length + 1 */
        if (tk->run) {         /* four columns in a row: their delimiters are at[c..c + 4] */
            const size_t *const ac = at + tk->col;
            a0 = ac[0], a1 = ac[1], a2 = ac[2], a3 = ac[3];
            l = _mm256_sub_epi64(_mm256_loadu_si256((const __m256i *)(const void *)(ac + 1)),
                                 _mm256_loadu_si256((const __m256i *)(const void *)ac));
        } else {
            a0 = at[tk[0].col], a1 = at[tk[1].col], a2 = at[tk[2].col], a3 = at[tk[3].col];
            l = _mm256_set_epi64x((long long)(at[tk[3].col + 1] - a3), (long long)(at[tk[2].col + 1] - a2),
                                  (long long)(at[tk[1].col + 1] - a1), (long long)(at[tk[0].col + 1] - a0));
        }
        uint64_t w0, w1, w2, w3;
        memcpy(&w0, buf + (a0 + 1), 8);
        memcpy(&w1, buf + (a1 + 1), 8);
        memcpy(&w2, buf + (a2 + 1), 8);
        memcpy(&w3, buf + (a3 + 1), 8);
        const __m256i t = _mm256_xor_si256(_mm256_set_epi64x((long long)w3, (long long)w2, (long long)w1,
                                                             (long long)w0), zeros);
        const __m256i u = _mm256_sub_epi64(l, two); /* length - 1: 0 to 6 wanted */
        const __m256i sh = _mm256_slli_epi64(_mm256_sub_epi64(_mm256_set1_epi64x(7), u), 3); /* 8 * (8 - length) */
        /* no digit: a byte of t above 9 (scan_bits' test); a leading zero: the first byte 0 with a length above
           1, whose 1 subtracted borrows into the top bit */
        const __m256i lead = _mm256_cmpgt_epi64(u, _mm256_setzero_si256());
        const __m256i ck = _mm256_and_si256(
            _mm256_or_si256(_mm256_or_si256(_mm256_add_epi64(t, k76), t), _mm256_add_epi64(t, lead)), k80);
        const __m256i x = _mm256_sllv_epi64(t, sh);
        const __m256i y = _mm256_madd_epi16(_mm256_maddubs_epi16(x, pairs), fours);
        const __m256i v = _mm256_add_epi64(_mm256_mul_epu32(y, eights), _mm256_srli_epi64(y, 32));
        /* a length of 1 to 7 only (u 0 to 6; 7 gives eight digits, at least 10^7 without a leading zero: above
           HB_DENSE), and the number below HB_DENSE */
        _Static_assert(HB_DENSE == 1u << 22, "v >> 22: HB_DENSE or more");
        const __m256i bad = _mm256_or_si256(_mm256_or_si256(_mm256_sllv_epi64(ck, sh), _mm256_and_si256(u, high)),
                                            _mm256_srli_epi64(v, 22));
        const unsigned good =
            (unsigned)_mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpeq_epi64(bad, _mm256_setzero_si256())));
        /* each number's word of its bitmap (the bitmaps' addresses in p->gbits) and bit in it */
        uint64_t wa[4], bit[4];
        _mm256_storeu_si256((__m256i *)(void *)wa,
                            _mm256_add_epi64(_mm256_loadu_si256((const __m256i *)(const void *)(p->gbits + g4)),
                                             _mm256_slli_epi64(_mm256_srli_epi64(v, 6), 3)));
        _mm256_storeu_si256((__m256i *)(void *)bit, _mm256_sllv_epi64(one, _mm256_and_si256(v, low6)));
        if (good == 0xF) { /* (the common case: four numbers marked) */
            __m256i *const gor = (__m256i *)(void *)(p->gor + g4); /* (the group's bits_or: one OR) */
            _mm256_storeu_si256(gor, _mm256_or_si256(_mm256_loadu_si256(gor), v));
            *(uint64_t *)(uintptr_t)wa[0] |= bit[0];
            *(uint64_t *)(uintptr_t)wa[1] |= bit[1];
            *(uint64_t *)(uintptr_t)wa[2] |= bit[2];
            *(uint64_t *)(uintptr_t)wa[3] |= bit[3];
            continue;
        }
        uint64_t d[4];
        _mm256_storeu_si256((__m256i *)(void *)d, v);
        for (unsigned k = 0; k < 4; k++) {
            if (good >> k & 1) {
                *(uint64_t *)(uintptr_t)wa[k] |= bit[k];
                tk[k].bits_or |= (uint32_t)d[k];
            } else {
                AK_CHECK(scan_bits(&tk[k], buf, at, line, err));
            }
        }
    }
    for (scan_take *tk = p->take + groups4, *const tend = p->take + p->nbits; tk < tend; tk++)
        AK_CHECK(scan_bits(tk, buf, at, line, err));
    return ANONKIT_OK;
}
#endif

/* The record in line buf[ls..ls + len) of `line` (ended: an LF followed it),
 * whose delimiters were counted into seen and the ones asked for placed in
 * p->at: an empty line is skipped, a field count other than the header's
 * refused, the columns' fields taken (their rows counted in *records, added
 * to each column's once the scan ends). */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline int scan_record(const scan_plan *p, const unsigned char *buf, size_t ls, size_t len, int ended,
                              uint32_t seen, long line, uint64_t *records, int simd, ak_error *err)
{
    if (ended && (len == 0 || (len == 1 && buf[ls] == '\r'))) return ANONKIT_OK; /* an empty line */
    if (seen + 1 != p->ncolumns)
        return ak_err_set(err, ANONKIT_E_INPUT, p->vs[0].file, line, 0, "expected %u fields as in the header, found %u",
                          p->ncolumns, seen + 1);
    const size_t flen = ended && buf[ls + len - 1] == '\r' ? len - 1 : len; /* the line without the CR of a CRLF */
    size_t *const at = p->at; /* (the plan's fields in locals: the counts stored below could alias them) */
    at[0] = ls - 1; /* (the line's start and end as delimiters 0 and ncolumns: no case for the first and last
                       column; ls - 1 wraps around for ls 0, and + 1 back) */
    at[p->ncolumns] = ls + flen;
    scan_take *tk = p->take; /* (not const: a number marked adds to its bits_or) */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    /* the columns whose whole numbers are only marked (first in p->take), then the others: two loops of
       one kind each */
#if defined(__GNUC__) && defined(__x86_64__)
    if (simd && p->ngroups) {
        AK_CHECK(scan_bits_avx2(p, buf, line, err));
        tk += p->nbits;
    }
#else
    (void)simd;
#endif
    for (const scan_take *const tend = p->take + p->nbits; tk < tend; tk++) AK_CHECK(scan_bits(tk, buf, at, line, err));
#else
    (void)simd;
#endif
    for (const scan_take *const tend = p->take + p->n; tk < tend; tk++) {
        const uint32_t c = tk->col;
        const size_t from = at[c] + 1, flen_j = at[c + 1] - from;
        const unsigned char *const s = buf + from;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        if (flen_j - 1 < MEMO_MAX && (unsigned)s[0] - '0' > 9) {
            /* a short value that is no number, seen before: take_value's memo hit (probed for a number, the
               memo would only miss: a column of numbers would pay for it) */
            uint64_t a;
            memcpy(&a, s, sizeof a);
            a &= memo_masks[flen_j][0];
            if (flen_j <= 8) { /* one word (the key's others are 0: the slot memo_slot(a, 0, 0, len)) */
                const hb_memo_slot *e = &tk->memo->s[memo_slot(a, 0, 0, flen_j)];
                if (((e->a ^ a) | (e->len ^ flen_j)) == 0) {
                    tk->v->count[e->id]++;
                    continue;
                }
            } else {
                uint64_t b, w;
                memcpy(&b, s + 8, sizeof b);
                memcpy(&w, s + 16, sizeof w);
                b &= memo_masks[flen_j][1], w &= memo_masks[flen_j][2];
                const hb_memo_slot *e = &tk->memo->s[memo_slot(a, b, w, flen_j)];
                if (((e->a ^ a) | (e->b ^ b) | (e->c ^ w) | (e->len ^ flen_j)) == 0) {
                    tk->v->count[e->id]++;
                    continue;
                }
            }
        }
#endif
        AK_CHECK(take_slow(tk, s, flen_j, line, err));
    }
    ++*records;
    return ANONKIT_OK;
}

/* The fast path of collect for a file whose records are lines without
 * quotes (each line a record, fields between delimiters, a CR before the LF
 * not part of the last field): from byte `offset`, the record of `line`,
 * every line's field count is checked and only the fields of the columns
 * asked for are taken, without splitting the others. At the first line that
 * holds a quote it stops: *stop gets that line's byte and *stop_line its
 * number, for the CSV reader to go on from there (UINT64_MAX: the end was
 * reached, or p->limit, the start of a line, whose number is then in
 * *stop_line). The same records, values, lines and errors as the CSV reader. */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline int scan_lines_with(const scan_plan *p, const char *path, char delimiter, uint64_t offset, long line,
                                  const hb_missing *missing, uint64_t *stop, long *stop_line, int hw, int all,
                                  int simd, ak_error *err)
{
    *stop = UINT64_MAX;
    FILE *f = fopen(path, "rb");
    unsigned char *buf = malloc(2 * SCAN_BLOCK + SCAN_PAD);
    int rc = ANONKIT_OK;
    uint64_t records = 0; /* (added to each column's rows at the end: not counted per value) */
    (void)missing; /* (in the plan: p->take) */
    if (!f || !buf || fseeko(f, (off_t)offset, SEEK_SET) != 0) {
        rc = !buf ? ak_err_nomem(err) : ak_err_set(err, ANONKIT_E_IO, p->vs[0].file, 0, 0, "cannot read the file");
        goto done;
    }
    const uint32_t first = p->next[0], last = p->last;
    size_t have = 0;        /* bytes in buf (a partial line carried over first) */
    uint64_t base = offset; /* file byte of buf[0] */
    for (int eof = 0; !eof;) {
        const uint64_t room = p->limit - (base + have); /* (to the limit, a line start, or the file's end) */
        const size_t ask = room < SCAN_BLOCK ? (size_t)room : SCAN_BLOCK;
        const size_t got = ask ? fread(buf + have, 1, ask, f) : 0;
        if (got < ask || ask == 0) {
            if (ferror(f)) {
                rc = ak_err_set(err, ANONKIT_E_IO, p->vs[0].file, 0, 0, "cannot read the file");
                goto done;
            }
            eof = 1;
        }
        have += got;
        memset(buf + have, 0, SCAN_PAD);
        /* the lines of buf[0..have): ls the current line's first byte, seen
         * its delimiters so far, want the next one asked for */
        size_t ls = 0;
        uint32_t seen = 0, want = first;
        /* the block's first quote found beforehand (memchr: a quote is rare),
         * not looked for in every 64 bytes */
        const unsigned char *const quote = memchr(buf, '"', have);
        const size_t qpos = quote ? (size_t)(quote - buf) : SIZE_MAX;
        for (size_t c = 0; c < have; c += 64) {
            uint64_t dm, nm;
#if defined(__GNUC__) && defined(__x86_64__)
            if (simd)
                chunk_masks_dn_avx2(buf + c, delimiter, &dm, &nm);
            else
#endif
                chunk_masks_dn(buf + c, delimiter, &dm, &nm);
            if (have - c < 64) {
                const uint64_t keep = ((uint64_t)1 << (have - c)) - 1;
                dm &= keep, nm &= keep;
            }
            const uint64_t qm = qpos - c < 64 ? (uint64_t)1 << (qpos - c) : 0;
            if (qm) { /* only the lines before the quote's */
                const uint64_t before = ((uint64_t)1 << __builtin_ctzll(qm)) - 1;
                dm &= before, nm &= before;
            }
            for (;;) {
                const uint64_t below = nm ? (nm & (0 - nm)) - 1 : ~(uint64_t)0; /* the bytes before the next LF */
                const uint64_t seg = dm & below;
                const uint32_t count = popcount64(seg, hw);
                if (all) { /* every delimiter placed up to the last one asked for */
                    size_t *to = p->at + seen;
                    if (seen + count <= last) {
                        for (uint64_t m = seg; m; m &= m - 1) *++to = c + (unsigned)__builtin_ctzll(m);
                    } else if (seen < last) { /* (the segment that passes the last) */
                        uint64_t m = seg;
                        for (uint32_t i = seen; i < last; i++, m &= m - 1) *++to = c + (unsigned)__builtin_ctzll(m);
                    }
                    seen += count;
                } else {
                    uint32_t left = count;
                    for (uint64_t m = seg; seen + left >= want;) { /* a delimiter asked for is here */
                        for (uint32_t k = want - seen; k > 1; k--) m &= m - 1; /* (the ones before it) */
                        left -= want - seen;
                        seen = want;
                        p->at[seen] = c + (size_t)__builtin_ctzll(m);
                        m &= m - 1;
                        want = p->next[seen];
                    }
                    seen += left;
                }
                if (!nm) break;
                dm &= ~below;
                const size_t e = c + (size_t)__builtin_ctzll(nm);
                nm &= nm - 1;
                if ((rc = scan_record(p, buf, ls, e - ls, 1, seen, line, &records, simd, err)) < 0) goto done;
                line++;
                ls = e + 1;
                seen = 0;
                want = first;
            }
            if (qm) { /* the CSV reader goes on from the quote's line */
                *stop = base + ls;
                *stop_line = line;
                goto done;
            }
        }
        if (eof) { /* a last line without a line end */
            *stop_line = line; /* (the limit's line, when it was reached) */
            if (ls < have) rc = scan_record(p, buf, ls, have - ls, 0, seen, line, &records, simd, err);
            break;
        }
        /* the partial line to the front, scanned again with the next block */
        memmove(buf, buf + ls, have - ls);
        base += ls;
        have -= ls;
        if (have > SCAN_BLOCK) { /* a line longer than a block: the CSV reader takes it */
            *stop = base;
            *stop_line = line;
            goto done;
        }
    }
done:
    for (size_t j = 0; j < p->n; j++) p->vs[j].rows += records;
    for (size_t j = 0; j < p->nbits; j++)
        p->take[j].v->bits_or |= p->take[j].bits_or | (j < 4 * p->ngroups ? (uint32_t)p->gor[j] : 0);
    if (f) fclose(f);
    free(buf);
    return rc;
}

/* scan_lines_with for a plan that places every delimiter (p->all) or only
 * the ones asked for, each its own copy (the choice out of the loop). */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline int scan_lines_hw(const scan_plan *p, const char *path, char delimiter, uint64_t offset, long line,
                                const hb_missing *missing, uint64_t *stop, long *stop_line, int hw, int simd,
                                ak_error *err)
{
    if (p->all) return scan_lines_with(p, path, delimiter, offset, line, missing, stop, stop_line, hw, 1, simd, err);
    return scan_lines_with(p, path, delimiter, offset, line, missing, stop, stop_line, hw, 0, simd, err);
}

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__)) && !defined(__POPCNT__)
/* scan_lines_hw compiled for a processor with POPCNT (chosen at run time). */
__attribute__((target("popcnt"))) static int scan_lines_popcnt(const scan_plan *p, const char *path, char delimiter,
                                                               uint64_t offset, long line, const hb_missing *missing,
                                                               uint64_t *stop, long *stop_line, ak_error *err)
{
    return scan_lines_hw(p, path, delimiter, offset, line, missing, stop, stop_line, 1, 0, err);
}
/* The same for a processor with BMI1 and BMI2 as well: TZCNT, BLSR and SHLX
 * (no shift count in CL) take fewer instructions per delimiter placed and
 * per number marked. */
__attribute__((target("popcnt,bmi,bmi2"))) static int scan_lines_bmi(const scan_plan *p, const char *path,
                                                                     char delimiter, uint64_t offset, long line,
                                                                     const hb_missing *missing, uint64_t *stop,
                                                                     long *stop_line, ak_error *err)
{
    return scan_lines_hw(p, path, delimiter, offset, line, missing, stop, stop_line, 1, 0, err);
}
#define HB_POPCNT_AT_RUN_TIME 1
#endif
#if defined(__GNUC__) && defined(__x86_64__)
/* The same for a processor with AVX2 as well: the bitmap columns four at a
 * time (scan_bits_avx2). */
__attribute__((target("popcnt,bmi,bmi2,avx2"), flatten)) static int scan_lines_avx2(const scan_plan *p, const char *path,
                                                                          char delimiter, uint64_t offset, long line,
                                                                          const hb_missing *missing, uint64_t *stop,
                                                                          long *stop_line, ak_error *err)
{
    return scan_lines_hw(p, path, delimiter, offset, line, missing, stop, stop_line, 1, 1, err);
}
#define HB_AVX2_AT_RUN_TIME 1
#endif

/* scan_lines_hw, with the POPCNT instruction (and BMI1 and BMI2) where the
 * processor has it. */
static int scan_lines(const scan_plan *p, const char *path, char delimiter, uint64_t offset, long line,
                      const hb_missing *missing, uint64_t *stop, long *stop_line, ak_error *err)
{
#if defined(HB_AVX2_AT_RUN_TIME)
    if (ak_cpu_has(AK_CPU_AVX2) && ak_cpu_has(AK_CPU_POPCNT) && ak_cpu_has(AK_CPU_BMI1) && ak_cpu_has(AK_CPU_BMI2))
        return scan_lines_avx2(p, path, delimiter, offset, line, missing, stop, stop_line, err);
#endif
#if defined(HB_POPCNT_AT_RUN_TIME)
    if (ak_cpu_has(AK_CPU_POPCNT) && ak_cpu_has(AK_CPU_BMI1) && ak_cpu_has(AK_CPU_BMI2))
        return scan_lines_bmi(p, path, delimiter, offset, line, missing, stop, stop_line, err);
    if (ak_cpu_has(AK_CPU_POPCNT))
        return scan_lines_popcnt(p, path, delimiter, offset, line, missing, stop, stop_line, err);
    return scan_lines_hw(p, path, delimiter, offset, line, missing, stop, stop_line, 0, 0, err);
#elif defined(__POPCNT__)
    return scan_lines_hw(p, path, delimiter, offset, line, missing, stop, stop_line, 1, 0, err);
#else
    return scan_lines_hw(p, path, delimiter, offset, line, missing, stop, stop_line, 0, 0, err);
#endif
}

/* The plan for columns cols[0..n) of ncolumns (arrays allocated; NULL when out of memory). */
static int plan_init(scan_plan *p, hb_values *vs, const uint32_t *cols, size_t n, uint32_t ncolumns,
                     const hb_missing *missing)
{
    p->vs = vs, p->cols = cols, p->n = n, p->ncolumns = ncolumns, p->limit = UINT64_MAX;
    p->next = malloc(((size_t)ncolumns + 1) * sizeof *p->next);
    p->at = malloc(((size_t)ncolumns + 1) * sizeof *p->at);
    p->take = malloc((n ? n : 1) * sizeof *p->take);
    p->gor = calloc(n ? n : 1, sizeof *p->gor);
    p->gbits = calloc(n ? n : 1, sizeof *p->gbits);
    if (!p->next || !p->at || !p->take || !p->gor || !p->gbits) return -1;
    size_t k = 0; /* (the columns whose integers are only marked first, then the others) */
    for (size_t j = 0; j < n; j++)
        if (vs[j].bits && !missing[j].count)
            p->take[k++] = (scan_take){vs[j].bits, 0, vs[j].memo, &vs[j], &missing[j], cols[j], 0};
    p->nbits = k;
    p->ngroups = k / 4;
    for (size_t g = 0; g < p->ngroups; g++) {
        scan_take *const t = &p->take[4 * g];
        t->run = t[1].col == t->col + 1 && t[2].col == t->col + 2 && t[3].col == t->col + 3;
        for (int k = 0; k < 4; k++) p->gbits[4 * g + (size_t)k] = (uint64_t)(uintptr_t)t[k].bits;
    }
    for (size_t j = 0; j < n; j++)
        if (!vs[j].bits || missing[j].count)
            p->take[k++] = (scan_take){NULL, 0, vs[j].memo, &vs[j], &missing[j], cols[j], 0};
    uint32_t after = UINT32_MAX, wanted = 0; /* the least delimiter asked for above k, from the top down */
    for (uint32_t k = ncolumns + 1; k-- > 0;) {
        p->next[k] = after;
        int asked = 0;
        for (size_t j = 0; j < n; j++) asked |= k >= 1 && k < ncolumns && (cols[j] == k || cols[j] + 1 == k);
        if (asked) after = k;
        wanted += asked;
    }
    /* placing a delimiter costs a few instructions, finding one asked for among
     * others some twenty: every one is placed when a quarter or more are asked for */
    p->all = ncolumns > 1 && 4 * wanted >= ncolumns - 1;
    p->last = 0;
    for (size_t j = 0; j < n; j++)
        if (cols[j] + 1 > p->last) p->last = cols[j] + 1 < ncolumns ? cols[j] + 1 : ncolumns - 1;
    return 0;
}

static void plan_free(scan_plan *p)
{
    free(p->next);
    free(p->at);
    free(p->take);
    free(p->gor);
    free(p->gbits);
}

/* The size of the regular file at path (0 when it is none or cannot be told;
 * stat opens nothing, so a FIFO is read once as before). */
static uint64_t file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 ? (uint64_t)st.st_size : 0;
}

/* The first bytes of a file read for its header and first record. */
#define HEAD_BYTES ((uint64_t)1 << 16)

int hb__collect_range(hb_values *vs, size_t n, const char *const *columns, const int *presence,
                      const hb_missing *missing, const char *path, const char *shown, char delimiter, uint64_t from,
                      uint64_t to, int *whole, long *to_line, ak_error *err)
{
    memset(vs, 0, n * sizeof *vs);
    *whole = 1;
    int rc = ANONKIT_OK;
    for (size_t j = 0; j < n && rc == 0; j++) {
        hb_values *v = &vs[j];
        v->dense_lo = UINT32_MAX;
        v->file = strdup(shown ? shown : path);
        if ((presence && presence[j] && !(v->bits = calloc(HB_DENSE / 64, sizeof *v->bits))) || !v->file ||
            !(v->memo = calloc(1, sizeof *v->memo)) || strmap_init(&v->dict, 64) != 0)
            rc = ak_err_nomem(err);
    }
    uint32_t *cols = calloc(n ? n : 1, sizeof *cols);
    scan_plan plan = {0};
    const int stream = !strcmp(path, "-");
    csv_reader *reader = NULL;
    if (rc == 0 && !cols) rc = ak_err_nomem(err);
    if (rc < 0) goto fail;
    const uint64_t total = stream ? 0 : file_size(path);
    csv_record rec;
    int fast = 0, first_read = 0, scanned = 0;
    /* the header and the first record read by a reader limited to the first
     * HEAD_BYTES of a larger file (whose buffer then touches only the pages
     * they fill); unless the fast scan can start from that record, all again
     * with a reader of the whole file */
    for (int bounded = !stream && total > HEAD_BYTES;; bounded = 0) {
        rc = stream ? csv_reader_open_stream(&reader, stdin, vs[0].file, delimiter, err)
             : bounded ? csv_reader_open_range(&reader, path, delimiter, 0, HEAD_BYTES, 1, err)
                       : csv_reader_open(&reader, path, delimiter, err);
        if (rc == 0 && (rc = csv_read(reader, &rec, err)) == 0)
            rc = ak_err_set(err, ANONKIT_E_INPUT, vs[0].file, 1, 0, "the file is empty: a header row is needed");
        if (rc > 0) rc = ANONKIT_OK;
        size_t absent = n; /* the first column not in the header */
        for (size_t j = 0; j < n && rc == 0; j++) {
            const int col = csv_column_index(&rec, columns[j]);
            if (col < 0 && absent == n) absent = j;
            cols[j] = col < 0 ? 0 : (uint32_t)col;
        }
        const uint32_t ncolumns = rc == 0 ? rec.count : 0;
        fast = rc == 0 && !stream && ncolumns > 1 && !csv_reader_saw_quote(reader); /* (one column: empty lines are
                                                                                      values) */
        if (bounded) { /* the first record, which the fast scan must be able to start from */
            const int got = rc == 0 ? csv_read(reader, &rec, err) : rc;
            if (got <= 0 || !fast || csv_reader_saw_quote(reader) || rec.count != ncolumns) {
                csv_reader_free(reader);
                reader = NULL;
                ak_err_clear(err);
                continue;
            }
            first_read = 1; /* (its offset and line: the header is whole) */
        }
        if (rc == 0 && absent < n)
            rc = ak_err_set(err, ANONKIT_E_USAGE, vs[0].file, 1, 0, "no column '%s' in the header", columns[absent]);
        if (rc == 0 && plan_init(&plan, vs, cols, n, ncolumns, missing) != 0) rc = ak_err_nomem(err);
        break;
    }
    if (rc < 0) goto fail;
    const uint32_t ncolumns = plan.ncolumns;
    for (rc = first_read ? 1 : csv_read(reader, &rec, err); rc > 0; rc = csv_read(reader, &rec, err)) {
        if (fast && !csv_reader_saw_quote(reader) && rec.count == ncolumns) {
            /* the first data record: from its byte on, the fast scan, then the reader again from where it stopped */
            uint64_t stop;
            long stop_line;
            csv_reader_free(reader);
            reader = NULL;
            const uint64_t start = from ? from : rec.offset;
            if (!from && to < total && rec.offset < to) plan.limit = to; /* the first part of a cut file */
            scanned = 1;
            if ((rc = scan_lines(&plan, path, delimiter, start, from ? 1 : rec.line, missing, &stop, &stop_line,
                                 err)) < 0)
                goto fail;
            if (stop == UINT64_MAX) {
                if (plan.limit != UINT64_MAX) *whole = 0, *to_line = stop_line;
                break;
            }
            if ((rc = csv_reader_open_range(&reader, path, delimiter, stop, total - stop, stop_line, err)) < 0)
                goto fail;
            fast = 0;
            continue;
        }
        if (from && !scanned) { /* the second part of a cut file, which only the fast scan starts */
            *whole = 0;
            break;
        }
        fast = 0;
        if (rec.count != ncolumns) {
            if (rec.count == 1 && rec.fields[0].len == 0) continue; /* an empty line */
            rc = ak_err_set(err, ANONKIT_E_INPUT, vs[0].file, rec.line, 0,
                            "expected %u fields as in the header, found %u", ncolumns, rec.count);
            goto fail;
        }
        for (size_t j = 0; j < n; j++) {
            const csv_field *f = &rec.fields[cols[j]];
            if ((rc = take(&vs[j], f->data, f->len, rec.line, &missing[j], 0, err)) < 0) goto fail;
        }
    }
    if (rc < 0) goto fail;
    csv_reader_free(reader);
    plan_free(&plan);
    free(cols);
    for (size_t j = 0; j < n; j++) bits_bounds(&vs[j]);
    return ANONKIT_OK;
fail:
    csv_reader_free(reader);
    plan_free(&plan);
    free(cols);
    for (size_t j = 0; j < n; j++) hb_values_free(&vs[j]);
    return rc;
}

int hb_collect_columns(hb_values *vs, size_t n, const char *const *columns, const int *presence,
                       const hb_missing *missing, const char *path, const char *shown, char delimiter, ak_error *err)
{
    int whole;
    long to_line;
    return hb__collect_range(vs, n, columns, presence, missing, path, shown, delimiter, 0, UINT64_MAX, &whole,
                             &to_line, err);
}

int hb_collect(hb_values *v, const char *path, const char *shown, char delimiter, const char *column,
               const hb_missing *missing, ak_error *err)
{
    const int presence = 0;
    const hb_missing none = {NULL, 0};
    return hb_collect_columns(v, 1, &column, &presence, missing ? missing : &none, path, shown, delimiter, err);
}

int hb_collect_presence(hb_values *v, const char *path, const char *shown, char delimiter, const char *column,
                        const hb_missing *missing, ak_error *err)
{
    const int presence = 1;
    const hb_missing none = {NULL, 0};
    return hb_collect_columns(v, 1, &column, &presence, missing ? missing : &none, path, shown, delimiter, err);
}
