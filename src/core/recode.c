/* recode.c — turning a class's box into published QI values (DESIGN.md §1
 * step 3; ranges and hierarchy labels as in 003's Mondrian slides). */
#include "core/recode.h"

#include <string.h>

#include "core/numdict.h"

/* Copies src into buf[at..] as far as it fits; returns at + strlen(src). */
static size_t put(char *buf, size_t size, size_t at, const char *src)
{
    size_t len = strlen(src);
    if (at < size) {
        size_t room = size - at - 1;
        memcpy(buf + at, src, len < room ? len : room);
    }
    return at + len;
}

size_t recode_value(const table *t, uint32_t q, uint32_t lo, uint32_t hi, char *buf, size_t size)
{
    const table_qi *a = &t->qi[q];
    size_t len;
    if (a->kind == ATTR_NUMERIC) {
        char low[24], high[24];
        const char *low_text = a->texts ? a->texts[lo] : low, *high_text = a->texts ? a->texts[hi] : high;
        if (!a->texts) {
            numdict_format_int(low, (int64_t)a->values[lo]);
            numdict_format_int(high, (int64_t)a->values[hi]);
        }
        len = put(buf, size, 0, low_text);
        if (lo != hi) {
            len = put(buf, size, len, "-");
            len = put(buf, size, len, high_text);
        }
    } else {
        len = put(buf, size, 0, hier_node_at(a->h, hier_lca(a->h, lo, hi))->label);
    }
    if (size) buf[len < size ? len : size - 1] = '\0';
    return len;
}
