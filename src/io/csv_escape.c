/* csv_escape.c — the quoting rule of the CSV writer, for callers that build
 * output records in memory (the publisher composes rows before shuffling). */
#include <string.h>

#include "io/csv.h"

int csv_needs_quotes(const char *src, size_t len, char delimiter)
{
    if (len == 0) return 0;
    if (src[0] == ' ' || src[len - 1] == ' ') return 1;
    for (size_t i = 0; i < len; i++) {
        char c = src[i];
        if (c == delimiter || c == '"' || c == '\n' || c == '\r') return 1;
    }
    return 0;
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
