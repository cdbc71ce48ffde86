/* model.h — privacy models as predicates on class statistics (DESIGN.md §4).
 *
 * A class is described by its row count and the counts of its sensitive values
 * (only the non-zero ones, in any order). Every model here is monotone: the
 * union of two classes that satisfy it satisfies it too, which is what lets
 * Mondrian stop splitting and lattice searches prune. The algorithms and the
 * independent verifier (anonkit check) share exactly these predicates. */
#ifndef AK_MODEL_H
#define AK_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "core/error.h"

/* l-diversity variants, combinable as a bit set. */
enum {
    MODEL_L_DISTINCT = 1u << 0,      /* at least l distinct sensitive values */
    MODEL_L_ENTROPY = 1u << 1,       /* entropy of the histogram >= log(l) */
    MODEL_L_RECURSIVE = 1u << 2,     /* x1 < c (x_l + ... + x_m) (000 §1.1) */
    MODEL_L_PROBABILISTIC = 1u << 3  /* every value at most 1/l of the class (001 Def. 3) */
};

typedef struct model {
    uint64_t k;         /* k-anonymity; 1 means no constraint */
    double l;           /* l of l-diversity; 0 means none */
    unsigned l_variants;/* MODEL_L_* bits; used when l > 0 */
    double c;           /* c of recursive (c,l)-diversity */
} model;

/* A model that every class satisfies (k = 1, no l). */
void model_init(model *m);

/* Whether the model needs the sensitive attribute. */
static inline int model_needs_sensitive(const model *m) { return m->l > 0; }

/* Parses "distinct,entropy,..." into MODEL_L_* bits; -1 on an unknown name. */
int model_parse_variants(const char *text, unsigned *bits /* OUT */);
/* Writes the variant names of bits, comma separated. */
void model_variant_names(unsigned bits, char *buf, size_t size);

/* Checks parameters for sanity (k >= 1, l >= 1 when set, c > 0 for recursive). */
int model_validate(const model *m, ak_error *err);

/* Whether a class of `count` rows whose non-zero sensitive counts are
 * counts[0..ncounts) satisfies the model. `scratch` must hold ncounts values
 * (used to sort for the recursive variant); it may alias nothing else. */
int model_holds(const model *m, uint64_t count, const uint32_t *counts, size_t ncounts,
                uint32_t *scratch);

/* Like model_holds but explains the first violated requirement in buf. */
int model_explain(const model *m, uint64_t count, const uint32_t *counts, size_t ncounts,
                  uint32_t *scratch, char *buf, size_t size);

#endif
