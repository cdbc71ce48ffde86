/* risk_model.c — the table-level risk predicates of --max-risk
 * (risk_model.h; [Dankar12] §3 for the prosecutor measures). */
#include "model/risk_model.h"

#include <math.h>

uint64_t risk_model_k(double highest)
{
    if (!(highest > 0)) return 1;
    if (highest >= 1) return 1;
    uint64_t k = (uint64_t)ceil(1.0 / highest);
    /* 1/R in floating point may land one off either way: settle on the least k with 1/k <= R. */
    while (k > 1 && 1.0 / (double)(k - 1) <= highest) k--;
    while (1.0 / (double)k > highest) k++;
    return k;
}

int risk_model_holds(const risk_model *r, const risk_summary *s)
{
    if (!s->rows) return 1;
    if (r->average > 0 && (double)s->classes > r->average * (double)s->rows) return 0;
    if (r->highest > 0 && 1.0 / (double)s->smallest > r->highest) return 0;
    if (r->uniqueness > 0) {
        const double N = r->population_size > 0 ? r->population_size : (double)s->rows;
        if ((double)s->uniques > r->uniqueness * N) return 0;
    }
    return 1;
}
