/* result.h (api) — the anonkit_result that every verb of the public API
 * returns (anonymize, check, metrics, recode, sequential): counts, the human
 * summary and the JSON text, each filled only by the verbs it applies to. */
#ifndef AK_API_RESULT_H
#define AK_API_RESULT_H

#include <stdint.h>

#include "anonkit/anonkit.h"

struct anonkit_result {
    uint64_t rows_read, published, suppressed, classes, outside;
    char *summary; /* malloc'd; NULL when the verb has none */
    char *json;    /* malloc'd; NULL when the verb has none (or has not built it yet: json_make) */
    /* a verb whose JSON most callers never ask for (risk) leaves json NULL
     * and sets json_make: anonkit_result_json builds it on its first call
     * with json_make(json_ctx), byte for byte what the verb would have
     * built; json_ctx_free(json_ctx) when the result is freed */
    char *(*json_make)(void *ctx);
    void *json_ctx;
    void (*json_ctx_free)(void *ctx);
    anonkit_table *table; /* the published table of a run with a table output (api/tables.h); NULL otherwise */
};

/* A zeroed result; NULL when out of memory. */
anonkit_result *result_new(void);

/* Gives a verb's result to the caller: into *out, or freed when the caller
 * passed no out (out NULL: the result is not wanted). */
void result_hand_over(anonkit_result *r, anonkit_result **out);

#endif
