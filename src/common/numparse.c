/* numparse.c — reading decimal numbers (see numparse.h). */
#include "common/numparse.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Counts the decimal digits of s from *i on, moving *i past them. */
static size_t skip_digits(const char *s, size_t len, size_t *i)
{
    const size_t from = *i;
    while (*i < len && s[*i] >= '0' && s[*i] <= '9') (*i)++;
    return *i - from;
}

int ak_num_is_decimal(const char *s, size_t len)
{
    size_t i = 0;
    if (i < len && (s[i] == '-' || s[i] == '+')) i++;
    size_t digits = skip_digits(s, len, &i);
    if (i < len && s[i] == '.') {
        i++;
        digits += skip_digits(s, len, &i);
    }
    if (digits == 0) return 0;
    if (i < len && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < len && (s[i] == '-' || s[i] == '+')) i++;
        if (skip_digits(s, len, &i) == 0) return 0;
    }
    return i == len;
}

/* The common case: [+-]digits[.digits] with at most 15 digits in all is
 * exact as mantissa / 10^fraction_digits (both exact doubles, one correctly
 * rounded division). 1 when s is of that form (*out set), else 0. */
static inline int parse_short(const char *s, size_t len, double *out)
{
    size_t i = 0;
    int negative = 0;
    if (len == 0) return 0;
    if (s[0] == '-' || s[0] == '+') {
        negative = s[0] == '-';
        i = 1;
    }
    uint64_t mantissa = 0;
    int digits = 0, fraction_digits = 0, seen_point = 0;
    for (; i < len; i++) {
        const char ch = s[i];
        if (ch >= '0' && ch <= '9') {
            mantissa = mantissa * 10 + (uint64_t)(ch - '0');
            digits++;
            fraction_digits += seen_point;
        } else if (ch == '.' && !seen_point) {
            seen_point = 1;
        } else {
            break;
        }
    }
    if (i != len || digits == 0 || digits > 15) return 0;
    static const double pow10[] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};
    double v = (double)mantissa / pow10[fraction_digits];
    if (negative) v = -v;
    *out = v == 0 ? 0.0 : v; /* no negative zero: -0 and 0 are one value */
    return 1;
}

int ak_num_parse(const char *s, size_t len, double *out)
{
    if (parse_short(s, len, out)) return 0;
    /* strtod also takes hexadecimal ("0x1A"), "inf", "nan" and leading
     * blanks, which are no decimal numbers: the text is checked first. */
    if (!ak_num_is_decimal(s, len)) return -1;
    char buf[128];
    if (len >= sizeof buf) return -1;
    memcpy(buf, s, len);
    buf[len] = '\0';
    char *end;
    const double v = strtod(buf, &end);
    if (end != buf + len || !isfinite(v)) return -1;
    *out = v == 0 ? 0.0 : v;
    return 0;
}

/* Exponents beyond this are only counted up to it (any value they give is
 * refused or infinite anyway). */
#define EXPONENT_CAP 1000000LL

int ak_num_parse_exact(const char *s, size_t len, ak_num *out)
{
    out->wide = 0;
    if (parse_short(s, len, &out->v)) return 0; /* at most 15 digits: below 2^53 */
    out->i = 0;
    if (!ak_num_is_decimal(s, len)) return AK_NUM_NOT_NUMBER;
    /* The value as m * 10^e with m's significant digits only (no leading or
     * trailing zeros): nsig of them, kept in m while there are at most 19. */
    size_t i = 0;
    const int negative = s[0] == '-';
    if (s[0] == '-' || s[0] == '+') i = 1;
    uint64_t m = 0;
    long long nsig = 0, zeros = 0, fraction_digits = 0; /* zeros: after the last nonzero digit, not in m */
    int after_point = 0;
    for (; i < len && s[i] != 'e' && s[i] != 'E'; i++) {
        if (s[i] == '.') {
            after_point = 1;
            continue;
        }
        fraction_digits += after_point;
        const unsigned digit = (unsigned)(s[i] - '0');
        if (digit == 0) {
            zeros += nsig > 0;
            continue;
        }
        if (nsig + zeros + 1 <= 19) {
            for (long long z = 0; z < zeros; z++) m *= 10;
            m = m * 10 + digit;
        }
        nsig += zeros + 1;
        zeros = 0;
    }
    long long exponent = 0;
    if (i < len) { /* the exponent: ak_num_is_decimal checked its form */
        i++;
        const int exp_negative = s[i] == '-';
        if (s[i] == '-' || s[i] == '+') i++;
        for (; i < len; i++)
            if (exponent < EXPONENT_CAP) exponent = exponent * 10 + (s[i] - '0');
        if (exp_negative) exponent = -exponent;
    }
    if (nsig == 0) { /* zero, however written */
        out->v = 0.0;
        return 0;
    }
    const long long e = exponent - fraction_digits + zeros;
    if (nsig <= 19 && e >= 0 && nsig + e <= 19) { /* an integer below 10^19: is it within int64? */
        uint64_t u = m;
        for (long long z = 0; z < e; z++) u *= 10;
        const uint64_t limit = negative ? (uint64_t)1 << 63 : ((uint64_t)1 << 63) - 1;
        if (u <= limit) {
            out->i = negative ? -(int64_t)(u - 1) - 1 : (int64_t)u;
            out->v = (double)out->i;
            out->wide = u > (uint64_t)AK_NUM_EXACT_DOUBLE_INT;
            return 0;
        }
    }
    if (nsig > AK_NUM_MAX_DIGITS) return AK_NUM_INEXACT;
    const long long lead = e + nsig - 1; /* the power of ten of the leading digit */
    if (lead > 308) return AK_NUM_NOT_NUMBER;
    if (lead < -307) return AK_NUM_INEXACT; /* subnormal doubles have fewer digits */
    /* the nearest double of exactly m * 10^e (no point in the text: no locale) */
    char buf[48];
    snprintf(buf, sizeof buf, "%s%" PRIu64 "e%lld", negative ? "-" : "", m, e);
    const double v = strtod(buf, NULL);
    if (!isfinite(v)) return AK_NUM_NOT_NUMBER;
    out->v = v;
    return 0;
}

/* The exact integer of a value whose double ties with a wide integer's:
 * the integer itself, or the double's (an integer then: ±2^53), clamped
 * beyond int64 where a double's conversion is undefined. */
static int64_t tie_integer(const ak_num *x)
{
    if (x->wide) return x->i;
    if (x->v >= 9223372036854775808.0) return INT64_MAX;
    if (x->v <= -9223372036854775808.0) return INT64_MIN;
    return (int64_t)x->v;
}

int ak_num_cmp(const ak_num *a, const ak_num *b)
{
    if (a->v != b->v) return a->v < b->v ? -1 : 1;
    if (!a->wide && !b->wide) return 0;
    const int64_t x = tie_integer(a), y = tie_integer(b);
    return (x > y) - (x < y);
}
