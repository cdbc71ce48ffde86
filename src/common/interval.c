/* interval.c — shortest decimals and the interval grammar of published
 * numeric values (interval.h; docs/hierarchies.md, "Interval formats"). */
#include "common/interval.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ak_interval_parse_style(const char *text, ak_interval_style *out)
{
    if (!strcmp(text, "range")) *out = AK_INTERVAL_RANGE;
    else if (!strcmp(text, "bracket")) *out = AK_INTERVAL_BRACKET;
    else return -1;
    return 0;
}

int ak_format_double(char *buf, double v)
{
    if (v == 0) v = 0; /* -0 prints as 0 */
    int n = 0;
    for (int digits = 15; digits <= 17; digits++) {
        n = snprintf(buf, 32, "%.*g", digits, v);
        if (strtod(buf, NULL) == v) break;
    }
    return n;
}

size_t ak_interval_write(ak_interval_style style, const char *lo, size_t lo_len, const char *hi, size_t hi_len,
                         char *buf)
{
    size_t n = 0;
    if (style == AK_INTERVAL_BRACKET) buf[n++] = '[';
    memcpy(buf + n, lo, lo_len);
    n += lo_len;
    if (style == AK_INTERVAL_BRACKET) {
        memcpy(buf + n, ", ", 2);
        n += 2;
    } else if ((lo_len && lo[0] == '-') || (hi_len && hi[0] == '-')) {
        memcpy(buf + n, " - ", 3);
        n += 3;
    } else {
        buf[n++] = '-';
    }
    memcpy(buf + n, hi, hi_len);
    n += hi_len;
    if (style == AK_INTERVAL_BRACKET) buf[n++] = ']';
    return n;
}

/* Whether s[0..len) is "inf" (sign allowed, any case). */
static int is_inf(const char *s, size_t len, int *negative)
{
    *negative = len && s[0] == '-';
    if (len && (s[0] == '-' || s[0] == '+')) s++, len--;
    return len == 3 && (s[0] | 32) == 'i' && (s[1] | 32) == 'n' && (s[2] | 32) == 'f';
}

/* s[0..*len) without spaces at either end. */
static const char *trim(const char *s, size_t *len)
{
    while (*len && s[0] == ' ') s++, (*len)--;
    while (*len && s[*len - 1] == ' ') (*len)--;
    return s;
}

int ak_interval_split(const char *text, size_t len, ak_interval_text *out,
                      int (*check)(const char *lo, size_t lo_len, const char *hi, size_t hi_len))
{
    memset(out, 0, sizeof *out);
    if (len >= 5 && text[0] == '[' && (text[len - 1] == ']' || text[len - 1] == '[')) {
        const char *comma = memchr(text, ',', len);
        if (!comma || memchr(comma + 1, ',', (size_t)(text + len - comma - 1))) return -1;
        out->lo_len = (size_t)(comma - text - 1);
        out->lo = trim(text + 1, &out->lo_len);
        out->hi_len = (size_t)(text + len - 1 - comma - 1);
        out->hi = trim(comma + 1, &out->hi_len);
        out->hi_open = text[len - 1] == '[';
        int neg;
        if (is_inf(out->lo, out->lo_len, &neg)) {
            if (!neg) return -1;
            out->lo_unbounded = 1;
            out->lo_len = 0;
        }
        if (is_inf(out->hi, out->hi_len, &neg)) {
            if (neg) return -1;
            out->hi_unbounded = 1;
            out->hi_len = 0;
        }
        return out->lo_len || out->lo_unbounded ? (out->hi_len || out->hi_unbounded ? 0 : -1) : -1;
    }
    if (len >= 2 && text[0] == '<') {
        out->lo_unbounded = 1;
        out->hi = text + 1;
        out->hi_len = len - 1;
        out->hi_open = 1;
        return 0;
    }
    if (len >= 3 && text[0] == '>' && text[1] == '=') {
        out->hi_unbounded = 1;
        out->lo = text + 2;
        out->lo_len = len - 2;
        return 0;
    }
    for (size_t i = 1; i + 3 < len; i++) /* "LO - HI" */
        if (text[i] == ' ' && text[i + 1] == '-' && text[i + 2] == ' ') {
            out->lo = text;
            out->lo_len = i;
            out->hi = text + i + 3;
            out->hi_len = len - i - 3;
            return 0;
        }
    for (size_t i = 1; i + 1 < len; i++) { /* "LO-HI": a hyphen after a digit or a point */
        if (text[i] != '-' || !((text[i - 1] >= '0' && text[i - 1] <= '9') || text[i - 1] == '.')) continue;
        if (check && !check(text, i, text + i + 1, len - i - 1)) continue;
        out->lo = text;
        out->lo_len = i;
        out->hi = text + i + 1;
        out->hi_len = len - i - 1;
        return 0;
    }
    out->lo = out->hi = text;
    out->lo_len = out->hi_len = len;
    out->single = 1;
    return 0;
}
