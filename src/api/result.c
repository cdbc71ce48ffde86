/* result.c (api) — anonkit_result: its creation, release and getters. A
 * getter returns 0 or NULL for a field the verb that made the result does not
 * fill, and for a NULL result. */
#include "api/result.h"

#include <stdlib.h>

#include "io/memtable.h"

anonkit_result *result_new(void)
{
    return calloc(1, sizeof(anonkit_result));
}

void anonkit_result_free(anonkit_result *r)
{
    if (!r) return;
    free(r->summary);
    free(r->json);
    anonkit_table_free(r->table);
    free(r);
}

uint64_t anonkit_result_rows_read(const anonkit_result *r) { return r ? r->rows_read : 0; }
uint64_t anonkit_result_rows_published(const anonkit_result *r) { return r ? r->published : 0; }
uint64_t anonkit_result_rows_suppressed(const anonkit_result *r) { return r ? r->suppressed : 0; }
uint64_t anonkit_result_classes(const anonkit_result *r) { return r ? r->classes : 0; }
uint64_t anonkit_result_rows_outside(const anonkit_result *r) { return r ? r->outside : 0; }
const char *anonkit_result_summary(const anonkit_result *r) { return r ? r->summary : NULL; }
const char *anonkit_result_json(const anonkit_result *r) { return r ? r->json : NULL; }

void result_hand_over(anonkit_result *r, anonkit_result **out)
{
    if (out) *out = r;
    else anonkit_result_free(r);
}
