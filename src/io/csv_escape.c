/* csv_escape.c — the quoting rule of the CSV writer, for callers that build
 * output records in memory (the publisher composes rows before shuffling).
 *
 * The scans look at eight bytes at a time: a byte equal to c is a zero byte
 * of word ^ (c in every byte), found with an exact zero-byte test (no borrow
 * between bytes), as in the reader. */
#include <stdint.h>
#include <string.h>

#include "io/csv.h"

#define ESC_ONES 0x0101010101010101ULL
#define ESC_LOW7 0x7f7f7f7f7f7f7f7fULL

/* The 8 bytes at p as a little-endian word, on any machine. */
static inline uint64_t esc_load64(const char *p)
{
    const unsigned char *u = (const unsigned char *)p;
    return (uint64_t)u[0] | (uint64_t)u[1] << 8 | (uint64_t)u[2] << 16 | (uint64_t)u[3] << 24 |
           (uint64_t)u[4] << 32 | (uint64_t)u[5] << 40 | (uint64_t)u[6] << 48 | (uint64_t)u[7] << 56;
}

/* Nonzero when some byte of v is zero. */
static inline uint64_t esc_zero_byte(uint64_t v)
{
    return ~(((v & ESC_LOW7) + ESC_LOW7) | v | ESC_LOW7);
}

int csv_needs_quotes(const char *src, size_t len, char delimiter)
{
    if (len == 0) return 0;
    if (src[0] == ' ' || src[len - 1] == ' ') return 1;
    const uint64_t d = ESC_ONES * (unsigned char)delimiter, q = ESC_ONES * '"', cr = ESC_ONES * '\r',
                   lf = ESC_ONES * '\n';
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        const uint64_t w = esc_load64(src + i);
        if (esc_zero_byte(w ^ d) | esc_zero_byte(w ^ q) | esc_zero_byte(w ^ cr) | esc_zero_byte(w ^ lf)) return 1;
    }
    for (; i < len; i++) {
        char c = src[i];
        if (c == delimiter || c == '"' || c == '\n' || c == '\r') return 1;
    }
    return 0;
}

int csv_run_is_plain(const char *src, size_t len)
{
    const uint64_t q = ESC_ONES * '"', cr = ESC_ONES * '\r';
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        const uint64_t w = esc_load64(src + i);
        if (esc_zero_byte(w ^ q) | esc_zero_byte(w ^ cr)) return 0;
    }
    for (; i < len; i++)
        if (src[i] == '"' || src[i] == '\r') return 0;
    return 1;
}

size_t csv_escape(char *dst, const char *src, size_t len, char delimiter)
{
    if (!csv_needs_quotes(src, len, delimiter)) {
        memcpy(dst, src, len);
        return len;
    }
    size_t n = 0;
    dst[n++] = '"';
    for (size_t i = 0; i < len; i++) {
        if (src[i] == '"') dst[n++] = '"';
        dst[n++] = src[i];
    }
    dst[n++] = '"';
    return n;
}
