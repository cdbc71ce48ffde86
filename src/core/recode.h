/* recode.h — the published value of a QI for a class's box (DESIGN.md §1 step 3).
 *
 * numeric      the single value, or "lo-hi" of the lowest and highest value
 *              (each in the spelling first seen in the input);
 * categorical  the label of the lowest hierarchy node covering the box.
 * Full suppression is the text "*" (RECODE_SUPPRESSED). */
#ifndef AK_RECODE_H
#define AK_RECODE_H

#include <stddef.h>
#include <stdint.h>

#include "core/table.h"

#define RECODE_SUPPRESSED "*"

/* Writes the published text of QI q for codes [lo, hi] into buf (NUL-terminated,
 * truncated to size) and returns its length before truncation. */
size_t recode_value(const table *t, uint32_t q, uint32_t lo, uint32_t hi, char *buf, size_t size);

#endif
