/* recode.c — turning a class's box into published QI values (DESIGN.md §1
 * step 3; ranges and hierarchy labels as in 003's Mondrian slides). */
#include "core/recode.h"

#include <stdio.h>
#include <string.h>

size_t recode_value(const table *t, uint32_t q, uint32_t lo, uint32_t hi, char *buf, size_t size)
{
    const table_qi *a = &t->qi[q];
    int n;
    if (a->kind == ATTR_NUMERIC) {
        if (lo == hi) n = snprintf(buf, size, "%s", a->texts[lo]);
        else n = snprintf(buf, size, "%s-%s", a->texts[lo], a->texts[hi]);
    } else {
        n = snprintf(buf, size, "%s", hier_node_at(a->h, hier_lca(a->h, lo, hi))->label);
    }
    return n < 0 ? 0 : (size_t)n;
}
