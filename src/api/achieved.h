/* achieved.h (api) — the JSON object and the summary lines of the achieved
 * parameters (src/verify/achieved.h), one function each, shared by
 * `check --achieved`, `anonkit risk` and the anonymize report. */
#ifndef AK_API_ACHIEVED_H
#define AK_API_ACHIEVED_H

#include <jansson.h>
#include <stddef.h>

#include "verify/achieved.h"

/* The "achieved" object; NULL when out of memory. */
json_t *achieved_json(const verify_achieved *a);

/* The summary lines into buf (always NUL-terminated). */
void achieved_summary(const verify_achieved *a, char *buf, size_t size);

#endif
