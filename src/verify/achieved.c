/* achieved.c — the parameters a published file achieves (achieved.h): for
 * each model of model.h the strongest parameter every class of the file
 * satisfies, from the classes as the verifier forms them, so that the file
 * passes `anonkit check` at these values and fails one step beyond
 * (tests/test_risk_achieved.c). Entropy summed as model.c sums it. */
#include "verify/achieved.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct walk {
    verify_achieved *a;
    uint32_t *sorted;
    size_t cap;
    int first;
} walk;

static int cmp_desc(const void *x, const void *y)
{
    const uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    return (a < b) - (a > b);
}

/* Folds one class into the achieved parameters. */
static int visit(void *ctx, const verify_class *c, ak_error *err)
{
    walk *w = ctx;
    verify_achieved *a = w->a;
    if (w->first || c->count < a->k) a->k = c->count;
    if (a->has_sensitive) {
        if (c->ncounts > w->cap) {
            uint32_t *s = realloc(w->sorted, c->ncounts * sizeof *s);
            if (!s) return ak_err_nomem(err);
            w->sorted = s;
            w->cap = c->ncounts;
        }
        memcpy(w->sorted, c->counts, c->ncounts * sizeof *w->sorted);
        qsort(w->sorted, c->ncounts, sizeof *w->sorted, cmp_desc);
        double entropy = 0; /* ascending order of counts, as model.c */
        for (size_t i = c->ncounts; i-- > 0;) {
            const double p = (double)w->sorted[i] / (double)c->count;
            if (p > 0) entropy -= p * log(p);
        }
        const double l_entropy = exp(entropy);
        /* count / top, lowered until top * l <= count holds in floating point (model.c's test) */
        const double top = w->sorted[0];
        double l_prob = (double)c->count / top;
        while (top * l_prob > (double)c->count) l_prob = nextafter(l_prob, 0);
        if (w->first || c->ncounts < a->l_distinct) a->l_distinct = c->ncounts;
        if (w->first || l_entropy < a->l_entropy) a->l_entropy = l_entropy;
        if (w->first || l_prob < a->l_probabilistic) a->l_probabilistic = l_prob;
        /* recursive: x1 < c (x_l + ... + x_m) for every c above x1 / tail(l) */
        double tail = 0;
        for (size_t i = 0; i < c->ncounts; i++) tail += w->sorted[i];
        for (size_t l = 1; l <= ACHIEVED_MAX_RECURSIVE_L; l++) {
            if (l > 1) tail -= l - 2 < c->ncounts ? w->sorted[l - 2] : 0;
            const double need = l <= c->ncounts && tail > 0 ? top / tail : INFINITY;
            if (w->first || need > a->recursive_c[l - 1]) a->recursive_c[l - 1] = need;
        }
        if (!c->moments) a->has_variance = 0;
        else {
            double v = (double)model_moments_variance(c->moments, c->exact);
            /* lowered until model.c's own test accepts it (the double may round above the exact variance) */
            model m;
            model_init(&m);
            m.variance = v;
            while (v > 0 && !model_variance_holds(&m, c->moments, c->exact)) m.variance = v = nextafter(v, 0);
            if (w->first || v < a->variance) a->variance = v;
        }
    }
    w->first = 0;
    return ANONKIT_OK;
}

int verify_achieved_measure(const verify_params *p, verify_achieved *out, ak_error *err)
{
    memset(out, 0, sizeof *out);
    out->has_sensitive = p->sensitive != NULL;
    out->has_variance = out->has_sensitive;
    walk w = {out, NULL, 0, 1};
    const int rc = verify_classes(p, visit, &w, &out->counts, err);
    free(w.sorted);
    if (rc < 0) return rc;
    if (w.first) { /* no class at all */
        out->has_variance = 0;
        return ANONKIT_OK;
    }
    if (out->has_sensitive) {
        out->nrecursive = out->l_distinct < ACHIEVED_MAX_RECURSIVE_L ? (size_t)out->l_distinct : ACHIEVED_MAX_RECURSIVE_L;
    }
    return ANONKIT_OK;
}
