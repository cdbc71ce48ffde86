/* blockscan.h — the classification of 64-byte blocks of CSV text that the
 * line scanners of plain (unquoted) records share: the hierarchy builders'
 * column collector (src/core/hierbuild_collect.c) and the grouping of
 * `anonkit risk` (src/metrics/risk_groups_direct.c). A block gives one bit
 * mask per byte class (the delimiter, LF, the quote); a scanner counts the
 * delimiters of a line with popcount64 and finds a line's end as the lowest
 * bit of the LF mask (chunk_masks_dn: the delimiters and LFs only, for a
 * scanner that looks for quotes beforehand). Static inline, no state. */
#ifndef AK_IO_BLOCKSCAN_H
#define AK_IO_BLOCKSCAN_H

#include <stdint.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
#endif

/* Set bits of x: the POPCNT instruction when hw (a caller compiled for
 * it), else a SWAR count. */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline uint32_t popcount64(uint64_t x, int hw)
{
#if defined(__GNUC__)
    if (hw) return (uint32_t)__builtin_popcountll(x);
#else
    (void)hw;
#endif
    x = x - ((x >> 1) & 0x5555555555555555ULL);
    x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
    x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
    return (uint32_t)((x * 0x0101010101010101ULL) >> 56);
}

#if defined(__SSE2__)
/* Bit i set when byte i of the 64 bytes x0..x3 (16 each) equals v's. */
static inline uint64_t sse_eq_mask(__m128i x0, __m128i x1, __m128i x2, __m128i x3, __m128i v)
{
    return (uint64_t)(uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(x0, v)) |
           (uint64_t)(uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(x1, v)) << 16 |
           (uint64_t)(uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(x2, v)) << 32 |
           (uint64_t)(uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(x3, v)) << 48;
}
#endif

/* The masks of the 64 bytes at p: bit i of *d set when p[i] is the
 * delimiter, of *n when it is LF (for a scanner that finds a block's first
 * quote beforehand, memchr, and scans only the lines before it). */
static inline void chunk_masks_dn(const unsigned char *p, char delimiter, uint64_t *d, uint64_t *n)
{
#if defined(__SSE2__)
    /* (the four 16-byte parts written out: compilers at -O2 keep a loop of
     * four as a loop) */
    const __m128i x0 = _mm_loadu_si128((const __m128i *)(const void *)p);
    const __m128i x1 = _mm_loadu_si128((const __m128i *)(const void *)(p + 16));
    const __m128i x2 = _mm_loadu_si128((const __m128i *)(const void *)(p + 32));
    const __m128i x3 = _mm_loadu_si128((const __m128i *)(const void *)(p + 48));
    *d = sse_eq_mask(x0, x1, x2, x3, _mm_set1_epi8(delimiter));
    *n = sse_eq_mask(x0, x1, x2, x3, _mm_set1_epi8('\n'));
#else
    uint64_t md = 0, mn = 0;
    for (int i = 0; i < 64; i++) {
        md |= (uint64_t)(p[i] == (unsigned char)delimiter) << i;
        mn |= (uint64_t)(p[i] == '\n') << i;
    }
    *d = md, *n = mn;
#endif
}

/* chunk_masks_dn, and bit i of *q set when p[i] is a quote. */
static inline void chunk_masks(const unsigned char *p, char delimiter, uint64_t *d, uint64_t *n, uint64_t *q)
{
#if defined(__SSE2__)
    const __m128i qv = _mm_set1_epi8('"');
    const __m128i x0 = _mm_loadu_si128((const __m128i *)(const void *)p);
    const __m128i x1 = _mm_loadu_si128((const __m128i *)(const void *)(p + 16));
    const __m128i x2 = _mm_loadu_si128((const __m128i *)(const void *)(p + 32));
    const __m128i x3 = _mm_loadu_si128((const __m128i *)(const void *)(p + 48));
    *d = sse_eq_mask(x0, x1, x2, x3, _mm_set1_epi8(delimiter));
    *n = sse_eq_mask(x0, x1, x2, x3, _mm_set1_epi8('\n'));
    const __m128i anyq = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x0, qv), _mm_cmpeq_epi8(x1, qv)),
                                      _mm_or_si128(_mm_cmpeq_epi8(x2, qv), _mm_cmpeq_epi8(x3, qv)));
    *q = _mm_movemask_epi8(anyq) ? sse_eq_mask(x0, x1, x2, x3, qv) : 0; /* (rare: the quotes' places only then) */
#else
    chunk_masks_dn(p, delimiter, d, n);
    uint64_t mq = 0;
    for (int i = 0; i < 64; i++) mq |= (uint64_t)(p[i] == '"') << i;
    *q = mq;
#endif
}

#if defined(__GNUC__) && defined(__x86_64__)
/* chunk_masks_dn with AVX2 (two 32-byte compares per class), for a scanner
 * compiled for AVX2 and chosen at run time (not forced inline: a caller
 * without AVX2 cannot take it in). */
__attribute__((target("avx2"))) static inline void chunk_masks_dn_avx2(const unsigned char *p, char delimiter,
                                                                       uint64_t *d, uint64_t *n)
{
    const __m256i dv = _mm256_set1_epi8(delimiter), nv = _mm256_set1_epi8('\n');
    const __m256i x0 = _mm256_loadu_si256((const __m256i *)(const void *)p);
    const __m256i x1 = _mm256_loadu_si256((const __m256i *)(const void *)(p + 32));
    *d = (uint64_t)(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(x0, dv)) |
         (uint64_t)(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(x1, dv)) << 32;
    *n = (uint64_t)(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(x0, nv)) |
         (uint64_t)(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(x1, nv)) << 32;
}
#endif

#endif
