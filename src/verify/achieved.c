/* achieved.c — the parameters a published file achieves (achieved.h): for
 * each model of model.h the strongest parameter every class of the file
 * satisfies, from the classes as the verifier forms them, so that the file
 * passes `anonkit check` at these values and fails one step beyond
 * (tests/test_risk_achieved.c). Entropy summed as model.c sums it. */
#include "verify/achieved.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_desc(const void *x, const void *y)
{
    const uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    return (a < b) - (a > b);
}

void verify_achieved_begin(verify_achieved *a, int has_sensitive, int numeric)
{
    memset(a, 0, sizeof *a);
    a->has_sensitive = has_sensitive;
    a->has_variance = has_sensitive && numeric;
}

/* Folds one class into the achieved parameters. */
int verify_achieved_add(verify_achieved *a, const verify_class *c, ak_error *err)
{
    const int first = !a->seen;
    if (first || c->count < a->k) a->k = c->count;
    if (a->has_sensitive && c->ncounts) {
        if (c->ncounts > a->scratch_cap) {
            uint32_t *s = realloc(a->scratch, c->ncounts * sizeof *s);
            if (!s) return ak_err_nomem(err);
            a->scratch = s;
            a->scratch_cap = c->ncounts;
        }
        uint32_t *sorted = a->scratch;
        memcpy(sorted, c->counts, c->ncounts * sizeof *sorted);
        qsort(sorted, c->ncounts, sizeof *sorted, cmp_desc);
        double entropy = 0; /* ascending order of counts, as model.c */
        for (size_t i = c->ncounts; i-- > 0;) {
            const double p = (double)sorted[i] / (double)c->count;
            if (p > 0) entropy -= p * log(p);
        }
        const double l_entropy = exp(entropy);
        /* count / top, lowered until top * l <= count holds in floating point (model.c's test) */
        const double top = sorted[0];
        double l_prob = (double)c->count / top;
        while (top * l_prob > (double)c->count) l_prob = nextafter(l_prob, 0);
        if (first || c->ncounts < a->l_distinct) a->l_distinct = c->ncounts;
        if (first || l_entropy < a->l_entropy) a->l_entropy = l_entropy;
        if (first || l_prob < a->l_probabilistic) a->l_probabilistic = l_prob;
        /* recursive: x1 < c (x_l + ... + x_m) for every c above x1 / tail(l) */
        double tail = 0;
        for (size_t i = 0; i < c->ncounts; i++) tail += sorted[i];
        for (size_t l = 1; l <= ACHIEVED_MAX_RECURSIVE_L; l++) {
            if (l > 1) tail -= l - 2 < c->ncounts ? sorted[l - 2] : 0;
            const double need = l <= c->ncounts && tail > 0 ? top / tail : INFINITY;
            if (first || need > a->recursive_c[l - 1]) a->recursive_c[l - 1] = need;
        }
    }
    if (a->has_variance) {
        if (!c->moments) {
            a->has_variance = 0;
        } else {
            double v = (double)model_moments_variance(c->moments, c->exact);
            /* lowered until model.c's own test accepts it (the double may round above the exact variance) */
            model m;
            model_init(&m);
            m.variance = v;
            while (v > 0 && !model_variance_holds(&m, c->moments, c->exact)) m.variance = v = nextafter(v, 0);
            if (first || v < a->variance) a->variance = v;
        }
    }
    a->seen++;
    return ANONKIT_OK;
}

void verify_achieved_end(verify_achieved *a)
{
    free(a->scratch);
    a->scratch = NULL;
    a->scratch_cap = 0;
    if (!a->seen) a->has_variance = 0;
    if (a->has_sensitive)
        a->nrecursive = a->l_distinct < ACHIEVED_MAX_RECURSIVE_L ? (size_t)a->l_distinct : ACHIEVED_MAX_RECURSIVE_L;
}

static int visit(void *ctx, const verify_class *c, ak_error *err)
{
    return verify_achieved_add(ctx, c, err);
}

int verify_achieved_measure(const verify_params *p, verify_achieved *out, ak_error *err)
{
    verify_achieved_begin(out, p->sensitive != NULL, 1);
    const int rc = verify_classes(p, visit, out, &out->counts, err);
    verify_achieved_end(out);
    return rc;
}
