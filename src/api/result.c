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
    if (r->json_ctx_free) r->json_ctx_free(r->json_ctx);
    anonkit_table_free(r->table);
    free(r);
}

uint64_t anonkit_result_rows_read(const anonkit_result *r) { return r ? r->rows_read : 0; }
uint64_t anonkit_result_rows_published(const anonkit_result *r) { return r ? r->published : 0; }
uint64_t anonkit_result_rows_suppressed(const anonkit_result *r) { return r ? r->suppressed : 0; }
uint64_t anonkit_result_classes(const anonkit_result *r) { return r ? r->classes : 0; }
uint64_t anonkit_result_rows_outside(const anonkit_result *r) { return r ? r->outside : 0; }
const char *anonkit_result_summary(const anonkit_result *r) { return r ? r->summary : NULL; }

/* The JSON text; a result whose verb left it to be built on demand
 * (json_make) builds it here once and keeps it: the result was allocated
 * writable (result_new), so the const the getter promises its caller is
 * only cast away for that one store. */
const char *anonkit_result_json(const anonkit_result *r)
{
    if (!r) return NULL;
    if (!r->json && r->json_make) {
        anonkit_result *w = (anonkit_result *)r;
        w->json = w->json_make(w->json_ctx);
    }
    return r->json;
}

void result_hand_over(anonkit_result *r, anonkit_result **out)
{
    if (out) *out = r;
    else anonkit_result_free(r);
}
