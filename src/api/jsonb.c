/* jsonb.c (api) — the proven text of a JSON document (jsonb.h). */
#include "api/jsonb.h"

#include <stdlib.h>

char *jsonb_dumps(const json_t *root)
{
    if (!root) return NULL;
    char *text = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
    if (!text) return NULL;
    json_t *back = json_loads(text, JSON_REJECT_DUPLICATES, NULL);
    const int same = back && json_equal(back, root);
    json_decref(back);
    if (same) return text;
    free(text);
    return NULL;
}

json_t *jsonb_strings(char *const *items, size_t count)
{
    int jfail = 0;
    json_t *a = json_array();
    for (size_t i = 0; a && i < count; i++) JAPPEND(a, json_string(items[i]));
    if (jfail) {
        json_decref(a);
        return NULL;
    }
    return a;
}
