/* rules_internal.h — what the writer (rules_write.c) and the reader
 * (rules.c) of the recoding rules share (docs/rules-format.md). */
#ifndef AK_RULES_INTERNAL_H
#define AK_RULES_INTERNAL_H

#include <float.h>

#include "publish/rules.h"

/* The first field of the first record. */
#define RULES_MAGIC "anonkit-rules"

/* The bound, lowest or highest value of a numeric QI that stands for its
 * missing values, which lie below every number. */
#define RULES_MISSING_WORD "missing"

/* A missing value's key: below every number a numeric QI accepts (at most 15
 * significant digits: none rounds to -DBL_MAX itself), above the open lower
 * bound -inf. */
#define RULES_MISSING_KEY (-DBL_MAX)

/* The names of the column roles (rules_role). */
extern const char *const rules_role_names[4];

#endif
