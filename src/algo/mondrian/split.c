/* split.c — the regions of a categorical split's children in the Mondrian
 * family, shared by the in-memory Mondrian and Rothko-T so that their
 * recoding rules agree; the split choice itself is split_choose.h. */
#include "algo/mondrian/mondrian_internal.h"

void mdr_child_regions(const hier *h, const hier_node *u, const uint8_t *nonempty, uint32_t rlo, uint32_t rhi,
                       uint32_t *lo, uint32_t *hi)
{
    const uint32_t *children = hier_children(h) + u->first_child;
    uint32_t first = 0;
    while (!nonempty[first]) first++;
    uint32_t region_end = rhi;
    for (uint32_t c = u->nchildren; c-- > 0;) {
        if (!nonempty[c]) continue;
        lo[c] = c == first ? rlo : hier_node_at(h, children[c])->lo;
        hi[c] = region_end;
        region_end = lo[c] - 1;
    }
}
