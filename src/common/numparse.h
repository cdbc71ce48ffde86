/* numparse.h — reading a field as a decimal number, shared by the tables'
 * encoding (core), the metrics and the independent verifier (which may not
 * include core): one syntax and one set of values everywhere.
 *
 * Two readers. ak_num_parse gives the nearest double of any finite decimal
 * number (sensitive values, targets, published ranges read back). A numeric
 * quasi-identifier must be ordered and published exactly, so its values go
 * through ak_num_parse_exact, which accepts a value only when anonkit can
 * order it exactly against every other accepted value (docs/ARCHITECTURE.md
 * §4): an integer within int64 (whatever its spelling: "5", "5.0", "5e0"),
 * or a number of at most AK_NUM_MAX_DIGITS significant digits whose leading
 * digit lies between 10^-307 and 10^308. Two distinct values of the second
 * kind never round to the same double (DBL_DIG is 15) and rounding keeps
 * order, so their doubles order them; the integers between 2^53 and 2^63,
 * which doubles cannot tell apart, come back exactly in ak_num.i. */
#ifndef AK_NUMPARSE_H
#define AK_NUMPARSE_H

#include <stddef.h>
#include <stdint.h>

/* Significant digits a value that is not an int64 integer may have. */
#define AK_NUM_MAX_DIGITS 15

/* 2^53: integers up to it in magnitude are exact as doubles. */
#define AK_NUM_EXACT_DOUBLE_INT 9007199254740992LL

/* Results of ak_num_parse_exact besides 0. */
#define AK_NUM_NOT_NUMBER (-1) /* not a finite decimal number */
#define AK_NUM_INEXACT (-2)    /* a number anonkit cannot order exactly (too many digits) */

/* A value read by ak_num_parse_exact. */
typedef struct ak_num {
    double v; /* the nearest double (exact unless `wide`) */
    int wide; /* an integer beyond ±2^53 within int64: i holds it exactly */
    int64_t i;
} ak_num;

/* Whether text is a decimal number: an optional sign, digits with an
 * optional fraction (at least one digit before or after the point), an
 * optional exponent ("e" or "E", optional sign, digits). Nothing else: no
 * blanks, no hexadecimal, no "inf" or "nan". */
int ak_num_is_decimal(const char *text, size_t len);

/* Parses a whole field as a finite decimal number (ak_num_is_decimal; a
 * value beyond the range of a double is refused too) into its nearest
 * double, without negative zero. 0 or -1. */
int ak_num_parse(const char *text, size_t len, double *out /* OUT */);

/* Parses a whole field as a value of a numeric quasi-identifier (see the top
 * of this file). 0, AK_NUM_NOT_NUMBER or AK_NUM_INEXACT. */
int ak_num_parse_exact(const char *text, size_t len, ak_num *out /* OUT */);

/* The exact order of two values of ak_num_parse_exact: <0, 0 or >0.
 * Distinct doubles order them (rounding keeps order); equal doubles of
 * distinct values are wide integers, or one of them ±2^53 itself. */
int ak_num_cmp(const ak_num *a, const ak_num *b);

#endif
