/* interval.h — the text of a generalized numeric value, written and read
 * (docs/hierarchies.md, "Interval formats"): the shortest decimal of a double,
 * and the grammar of ranges that every reader of published files shares.
 *
 * Written forms (ak_interval_style):
 *   range     "LO-HI" when neither bound is negative (the historical form),
 *             "LO - HI" (a space on each side of the hyphen) when one is;
 *   bracket   "[LO, HI]", ARX's closed interval.
 * Read forms (ak_interval_split): a single value "V"; "LO-HI" where the
 * hyphen follows a digit or a point (so "-5--3" and "1e-5-2" still read);
 * "LO - HI"; "[LO, HI]"; the half-open "[LO, HI[" of hierarchy builders;
 * "<HI" and ">=LO" (open-ended builder ranges); bounds "-inf" and "inf" in
 * brackets. */
#ifndef AK_INTERVAL_H
#define AK_INTERVAL_H

#include <stddef.h>

typedef enum ak_interval_style { AK_INTERVAL_RANGE = 0, AK_INTERVAL_BRACKET = 1 } ak_interval_style;

/* Parses "range" or "bracket"; -1 on anything else. */
int ak_interval_parse_style(const char *text, ak_interval_style *out /* OUT */);

/* The shortest text ("%.15g", "%.16g" or "%.17g", the first that reads back
 * to v exactly) into buf (room for 32 bytes); returns its length. */
int ak_format_double(char *buf, double v);

/* Writes the interval of the bound texts lo[0..lo_len) and hi[0..hi_len) in
 * `style` into buf (room for lo_len + hi_len + 6 bytes, not NUL-terminated);
 * returns its length. */
size_t ak_interval_write(ak_interval_style style, const char *lo, size_t lo_len, const char *hi, size_t hi_len,
                         char *buf);

/* The parts of a read interval: bound texts (not NUL-terminated; len 0 when
 * unbounded on that side) and whether the upper bound is excluded. */
typedef struct ak_interval_text {
    const char *lo, *hi;
    size_t lo_len, hi_len;
    int lo_unbounded, hi_unbounded;
    int hi_open;   /* the upper bound is not in the interval ("[LO, HI[", "<HI") */
    int single;    /* a single value: lo = hi = the text */
} ak_interval_text;

/* Splits text[0..len) into its bounds by the grammar above; the bounds are not
 * checked to be numbers (the caller parses them as exactly as it needs).
 * Returns 0, or -1 when the text has none of these shapes. For the "LO-HI"
 * form, which may be cut at several hyphens, `check` (when not NULL) is asked
 * whether a cut gives two numbers; the first cut it accepts is taken. */
int ak_interval_split(const char *text, size_t len, ak_interval_text *out /* OUT */,
                      int (*check)(const char *lo, size_t lo_len, const char *hi, size_t hi_len));

#endif
