/* risk_hook.c — Incognito's hook for --max-risk average=R and
 * uniqueness=R (docs/risk.md §6): a lattice node is anonymous only when the
 * classes of its frequency set also satisfy the table-level risk predicate
 * of model/risk_model.h, which is monotone under generalization and
 * projection (the Incognito generalization and subset properties,
 * [LeFevre05]), so the search's pruning stays exact. */
#include "algo/incognito/inc_internal.h"

int inc_risk_holds_u32(const inc_ctx *c, const uint32_t *sizes, size_t n)
{
    if (!c->risk) return 1;
    risk_summary s = {0, 0, 0, 0};
    for (size_t i = 0; i < n; i++) risk_summary_add(&s, sizes[i]);
    return risk_model_holds(c->risk, &s);
}

int inc_risk_holds_u64(const inc_ctx *c, const uint64_t *sizes, size_t n)
{
    if (!c->risk) return 1;
    risk_summary s = {0, 0, 0, 0};
    for (size_t i = 0; i < n; i++) risk_summary_add(&s, sizes[i]);
    return risk_model_holds(c->risk, &s);
}
