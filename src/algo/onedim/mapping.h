/* mapping.h — the multi-dimensional to 1-D mappings of [Ghinita07] §5, private to
 * src/algo/onedim: every row's QI codes become a key of `words` uint64 words
 * that sorts in 1-D order. */
#ifndef AK_ONEDIM_MAPPING_H
#define AK_ONEDIM_MAPPING_H

#include "algo/onedim/onedim.h"

/* Exact nearest-centre search over n centres of d coordinates (nearest.c):
 * the centres in `order` (NULL: index order; an order that keeps neighbours
 * together, such as the Hilbert order, prunes best) under a tree of
 * bounding boxes. */
typedef struct hil_nn {
    unsigned d;
    size_t n;
    uint32_t *id;       /* id[i]: the centre at leaf position i */
    uint32_t *pos;      /* pos[id]: the leaf position of centre id */
    unsigned nlevels;   /* levels of items: the centres, then boxes of 8 items each, up to one block */
    size_t *first;      /* first[l]: level l's first block of 8 items in lo / hi */
    size_t *count;      /* count[l]: items at level l */
    double *lo, *hi;    /* per block, axis by axis, 8 bounds (a centre: its coordinates) */
    float *cf;          /* the centres' coordinates as floats, laid out as level 0 of lo (empty lanes far away) */
    int tree_search;    /* 0: hil_nn_nearest scans every centre with AVX2 where the processor has it; 1 (the
                           tests): it always searches the tree */
} hil_nn;

int hil_nn_init(hil_nn *t, const double *centers, size_t n, unsigned d, const uint32_t *order, ak_error *err);
void hil_nn_free(hil_nn *t);
/* The index of the centre nearest p — the lowest index among those at the
 * least squared Euclidean distance (summed over the coordinates in order), as
 * a scan of every centre in index order finds it — and that squared distance
 * in *best2. A hint (a centre index, or SIZE_MAX for none) likely to be near,
 * such as a point's centre in the previous k-means iteration, only speeds the
 * search up. When second2 is not NULL it receives a lower bound on the
 * squared distance of every other centre (INFINITY when there is none; as
 * low as *best2 when the search cannot tell more). */
size_t hil_nn_nearest(const hil_nn *t, const double *p, size_t hint, double *best2 /* OUT */,
                      double *second2 /* OUT, may be NULL */);

typedef struct hil_mapper {
    hil_mapping kind;
    unsigned d, bits, words; /* QIs, Hilbert bits per QI, key words */
    hil_curve curve;         /* the Hilbert curve of d axes, bits each */
    double **unit;           /* unit[q][code]: the code's place in [0, 1] */
    uint32_t **cell;         /* cell[q][code]: its Hilbert grid cell */
    size_t ncenters;         /* iDistance: centres, in Hilbert order */
    uint64_t kmeans_iterations, kmeans_searches; /* iDistance: Lloyd's iterations, nearest-centre searches in them */
    double *centers;         /* ncenters * d coordinates in [0, 1] */
    hil_nn nn;               /* nearest-centre search over them */
    double stride;           /* iDistance: key of centre j starts at j * stride */
} hil_mapper;

/* Where a categorical QI's values go ([Ghinita07] Figure 11 labels them by their
 * leaf's in-order position; these keep that order and add the hierarchy's
 * shape), for hierarchy h, indexed by leaf code:
 *
 * hil_hierarchy_cells: cells of a Hilbert axis of 2^bits cells. The root
 * takes the whole axis and every node hands its children equal aligned
 * blocks (child j of a node with c children and a block of 2^m cells gets
 * the j-th block of 2^(m - ceil(log2 c))); a leaf takes its block's first
 * cell. The Hilbert curve fills aligned blocks one after the other, so a run
 * of consecutive keys crosses from one subtree into another only where the
 * curve leaves a block, and groups along the curve stay under low common
 * ancestors (small NCP, [Ghinita07] §2.1). A node whose children do not fit in its
 * block spreads its leaves evenly over the block.
 *
 * hil_hierarchy_places: places in [0, 1] for iDistance's Euclidean distance.
 * Consecutive leaves are separated by a gap that depends on their lowest
 * common ancestor u: NCP(u), raised to the total width of u's children when
 * that is larger, so that a leaf is never farther from a leaf of its own
 * subtree than from a leaf outside it; the total is scaled to 1. */
int hil_hierarchy_cells(const hier *h, unsigned bits, uint32_t *cell /* OUT */, ak_error *err);
int hil_hierarchy_places(const hier *h, double *place /* OUT */, ak_error *err);

/* Prepares the mapping of table t (for iDistance: samples 10 % of the rows
 * with o->seed and runs k-means for the centres). */
int hil_mapper_init(hil_mapper *mp, const table *t, const hil_options *o, ak_error *err);
void hil_mapper_free(hil_mapper *mp);

/* The key of row `row` into key[0 .. mp->words). */
void hil_mapper_key(const hil_mapper *mp, const table *t, size_t row, uint64_t *key /* OUT */);
/* The keys of rows row .. row+count-1 into keys[i * stride ..] (stride >=
 * mp->words; Hilbert: four at a time). */
void hil_mapper_keys(const hil_mapper *mp, const table *t, size_t row, size_t count, uint64_t *keys /* OUT */,
                     size_t stride);

/* The 1-D distance from key a to key b (a <= b), as a double. */
double hil_mapper_gap(const hil_mapper *mp, const uint64_t *a, const uint64_t *b);

/* The QI codes of a row packed into a few words (kanon.c): QI q in the
 * bits shift .. of word `word` (as many bits as its codes need, no code
 * across two words). The 1-D sort carries them with the keys, so that the
 * DP reads every row's codes in 1-D order front to back. Word 0 may be
 * shared with the sort key: the key and row number take its high bits and
 * the codes only its low first_bits bits, which never decide the order
 * (key and row are unique), so that the records are a word shorter. */
typedef struct hil_pack_field {
    uint32_t word;
    unsigned shift;
    uint64_t mask;
} hil_pack_field;

typedef struct hil_packing {
    uint32_t d;
    size_t words;          /* per row, word 0 included when shared */
    unsigned first_bits;   /* word 0 shared with the key: its low bits the codes may use; 0: not shared */
    hil_pack_field *field; /* per QI */
} hil_packing;

/* first_bits: the low bits of a word 0 shared with the sort key (0: none). */
int hil_pack_init(hil_packing *pk, const table *t, unsigned first_bits, ak_error *err);
void hil_pack_free(hil_packing *pk);
/* Packs rows row .. row+count-1 into out[j * stride ..] (pk->words words
 * each; a shared word 0 already holds its key bits, and its low first_bits
 * bits are zero). */
void hil_pack_rows(const hil_packing *pk, const table *t, size_t row, size_t count, uint64_t *out /* OUT */,
                   size_t stride);

/* hil_kanon_dp on rows whose packed codes are given in 1-D order, position
 * p's at in[p * stride ..] (pk and in unused when gap is not NULL); the
 * candidates' costs are worked out by `threads` threads at once (the result
 * does not depend on it, nor on `tuning`, NULL: none). */
int hil_kanon_dp_packed(const table *t, const hil_packing *pk, const uint64_t *in, size_t stride, size_t n,
                        uint64_t k, const double *weights, const double *gap, unsigned threads,
                        const hil_tuning *tuning, uint32_t *sizes /* OUT */, size_t *ngroups /* OUT */,
                        double *cost /* OUT */, ak_error *err);

#endif
