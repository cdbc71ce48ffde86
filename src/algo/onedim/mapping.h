/* mapping.h — the multi-dimensional to 1-D mappings of 001 §5, private to
 * src/algo/onedim: every row's QI codes become a key of `words` uint64 words
 * that sorts in 1-D order. */
#ifndef AK_ONEDIM_MAPPING_H
#define AK_ONEDIM_MAPPING_H

#include "algo/onedim/onedim.h"

typedef struct hil_mapper {
    hil_mapping kind;
    unsigned d, bits, words; /* QIs, Hilbert bits per QI, key words */
    hil_curve curve;         /* the Hilbert curve of d axes, bits each */
    double **unit;           /* unit[q][code]: the code's place in [0, 1] */
    uint32_t **cell;         /* cell[q][code]: its Hilbert grid cell */
    size_t ncenters;         /* iDistance: centres, in Hilbert order */
    double *centers;         /* ncenters * d coordinates in [0, 1] */
    double stride;           /* iDistance: key of centre j starts at j * stride */
} hil_mapper;

/* Prepares the mapping of table t (for iDistance: samples 10 % of the rows
 * with o->seed and runs k-means for the centres). */
int hil_mapper_init(hil_mapper *mp, const table *t, const hil_options *o, ak_error *err);
void hil_mapper_free(hil_mapper *mp);

/* The key of row `row` into key[0 .. mp->words). */
void hil_mapper_key(const hil_mapper *mp, const table *t, size_t row, uint64_t *key /* OUT */);

/* The 1-D distance from key a to key b (a <= b), as a double. */
double hil_mapper_gap(const hil_mapper *mp, const uint64_t *a, const uint64_t *b);

#endif
