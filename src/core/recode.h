/* recode.h — the published value of a QI for a class (docs/ARCHITECTURE.md §3 step 3).
 *
 * Generalization (the default):
 *   numeric      the single value, or "lo-hi" of the lowest and highest value
 *                (each in the spelling first seen in the input);
 *   categorical  the label of the lowest hierarchy node covering the box.
 * Summary statistics of a numeric QI ([LeFevre06], "range and mean statistics"):
 *   range        "lo-hi" always, even when lo = hi, so MIN and MAX can be read
 *                from every row;
 *   mean         the mean of the class's values (printed with 12 significant
 *                digits), for AVG and SUM; categorical QIs keep their label.
 * Full suppression is the text "*" (RECODE_SUPPRESSED). */
#ifndef AK_RECODE_H
#define AK_RECODE_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "core/partition.h"
#include "common/strbuf.h"
#include "core/table.h"

#define RECODE_SUPPRESSED "*"

/* Writes the published text of QI q for codes [lo, hi] into buf (NUL-terminated,
 * truncated to size) and returns its length before truncation. */
size_t recode_value(const table *t, uint32_t q, uint32_t lo, uint32_t hi, char *buf, size_t size);

/* The input's spelling of value `code` of numeric QI a (buf: room for 24
 * bytes, used for integer columns, which keep no spellings). */
const char *recode_numeric_text(const table_qi *a, uint32_t code, char *buf);

typedef enum recode_style { RECODE_GENERALIZE = 0, RECODE_RANGE, RECODE_MEAN } recode_style;

/* Parses "generalize", "range" or "mean"; -1 on anything else. */
int recode_parse_style(const char *text, recode_style *out /* OUT */);
const char *recode_style_name(recode_style style);

/* The mean of every numeric QI in every class of p, means[c * nqi + q]
 * (categorical QIs: 0); caller frees. */
int recode_class_means(const table *t, const partition *p, double **means /* OUT */, ak_error *err);

/* The published text of QI q for class c in the given style (means from
 * recode_class_means, needed for RECODE_MEAN only); as recode_value. A class
 * that names its hierarchy nodes (full-domain) publishes their labels. */
size_t recode_class_value(const table *t, const partition *p, const double *means, recode_style style, size_t c,
                          uint32_t q, char *buf, size_t size);

/* The same text, whatever its length, into out (emptied first; not
 * NUL-terminated: out->len is its length). 0, or -1 when out of memory. */
int recode_class_text(const table *t, const partition *p, const double *means, recode_style style, size_t c,
                      uint32_t q, strbuf *out);

/* Whether recode_class_text of numeric QI q in style is made of the values at
 * the ends of a class's box alone: an integer column (no spellings kept), the
 * generalize or range style, classes without hierarchy nodes. The text is
 * then recode_int_range's, and a caller may fetch the values of many classes
 * before formatting any (they are read at random). */
int recode_is_int_range(const table *t, const partition *p, recode_style style, uint32_t q);

/* That text for QI q of a class whose box has codes lo, hi and values
 * vlo = values[lo], vhi = values[hi], into buf (room for 48 bytes, not
 * NUL-terminated); returns its length. */
size_t recode_int_range(recode_style style, uint32_t lo, uint32_t hi, double vlo, double vhi, char *buf);

#endif
