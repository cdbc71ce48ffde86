/* achieved.c (api) — the achieved parameters of a published file as JSON
 * and as summary lines (achieved.h); docs/risk.md §5 says what each means. */
#include "api/achieved.h"

#include <math.h>
#include <stdio.h>

#include "api/jsonb.h"

json_t *achieved_json(const verify_achieved *a)
{
    int jfail = 0;
    json_t *o = json_object();
    JSET(o, "k", json_integer((json_int_t)a->k));
    if (a->has_sensitive) {
        JSET(o, "l_distinct", json_integer((json_int_t)a->l_distinct));
        JSET(o, "l_entropy", json_real(a->l_entropy));
        JSET(o, "l_probabilistic", json_real(a->l_probabilistic));
        json_t *rec = json_array();
        for (size_t l = 1; l <= a->nrecursive; l++) {
            json_t *e = json_object();
            JSET(e, "l", json_integer((json_int_t)l));
            JSET(e, "c_above", json_real(a->recursive_c[l - 1]));
            JAPPEND(rec, e);
        }
        JSET(o, "recursive", rec);
        JSET(o, "variance", a->has_variance ? json_real(a->variance) : json_null());
    }
    if (jfail) {
        json_decref(o);
        return NULL;
    }
    return o;
}

void achieved_summary(const verify_achieved *a, char *buf, size_t size)
{
    int n = snprintf(buf, size, "achieved: k = %llu\n", (unsigned long long)a->k);
    if (n < 0 || (size_t)n >= size || !a->has_sensitive) return;
    size_t used = (size_t)n;
    n = snprintf(buf + used, size - used,
                 "achieved: distinct l = %llu, entropy l = %.6f, probabilistic l = %.6f\n",
                 (unsigned long long)a->l_distinct, a->l_entropy, a->l_probabilistic);
    if (n < 0 || (size_t)n >= size - used) return;
    used += (size_t)n;
    for (size_t l = 1; l <= a->nrecursive && l <= 8; l++) {
        n = snprintf(buf + used, size - used, "achieved: recursive (c,%zu)-diversity for every c > %.6f\n", l,
                     a->recursive_c[l - 1]);
        if (n < 0 || (size_t)n >= size - used) return;
        used += (size_t)n;
    }
    if (a->has_variance) snprintf(buf + used, size - used, "achieved: variance %.6g\n", a->variance);
}
