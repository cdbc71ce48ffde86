/* achieved.h — the privacy parameters a published file achieves
 * (`anonkit check --achieved`, docs/risk.md §5), computed from the file
 * alone with the verifier's classes (verify_classes): what pycanon reports.
 * The struct grows a field per model; its JSON and summary are made by one
 * function each in src/api/achieved.c. */
#ifndef AK_VERIFY_ACHIEVED_H
#define AK_VERIFY_ACHIEVED_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "verify/verify.h"

/* Levels l for which the least c of recursive (c,l)-diversity is reported: 1 .. this. */
#define ACHIEVED_MAX_RECURSIVE_L 64

typedef struct verify_achieved {
    verify_counts counts;     /* classes, rows, suppressed rows */
    uint64_t k;               /* largest k: the smallest class (0 when there is no class) */
    int has_sensitive;
    uint64_t l_distinct;      /* largest distinct l: fewest distinct sensitive values in a class */
    double l_entropy;         /* largest entropy l: min over classes of exp(entropy) */
    double l_probabilistic;   /* largest probabilistic l: min over classes of count / top count */
    size_t nrecursive;        /* recursive_c[l-1] for l = 1 .. nrecursive (min(l_distinct, ACHIEVED_MAX_RECURSIVE_L)) */
    double recursive_c[ACHIEVED_MAX_RECURSIVE_L];
                              /* max over classes of x1 / (x_l + ... + x_m): (c,l) holds for every c above it */
    int has_variance;         /* the sensitive column is numeric */
    double variance;          /* least population variance of a class */
    /* accumulation state (verify_achieved_add) */
    int seen;                 /* classes added */
    uint32_t *scratch;
    size_t scratch_cap;
} verify_achieved;

/* Measures the file p->published (p->model is not used). */
int verify_achieved_measure(const verify_params *p, verify_achieved *out /* OUT */, ak_error *err);

/* The same from classes handed one by one (the anonymize report's
 * partition): begin, add every class, end (which frees the scratch and is
 * needed after a failed add too). */
void verify_achieved_begin(verify_achieved *a, int has_sensitive, int numeric);
int verify_achieved_add(verify_achieved *a, const verify_class *c, ak_error *err);
void verify_achieved_end(verify_achieved *a);

#endif
