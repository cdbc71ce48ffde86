/* onedim.h — 1-D anonymization ([Ghinita07]): the table's
 * quasi-identifiers are mapped to one dimension (Hilbert curve or iDistance,
 * §5), sorted by that key (in memory, or by external merge sort within a
 * memory budget), and partitioned there: optimal k-anonymity by dynamic
 * programming (§3, Figure 3; exact NCP cost with the incremental MBR, or the
 * 1-D extent for the Fast variants, §5.1) or the l-diversity heuristic (§4.2,
 * Figures 8-9, probabilistic l-diversity of Definition 3, optionally with k).
 * Every class is published as its bounding box (local recoding: boxes of
 * different classes may overlap). */
#ifndef AK_ONEDIM_H
#define AK_ONEDIM_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "core/partition.h"
#include "core/table.h"
#include "model/model.h"

typedef enum hil_mapping { HIL_MAP_HILBERT = 0, HIL_MAP_IDISTANCE } hil_mapping;

/* Choices the tests make to reach every way of computing the same result
 * (all zero, or no tuning at all: the normal run). */
typedef struct hil_tuning {
    int scalar;         /* the DP without its AVX / AVX2 kernels */
    int runs_only;      /* the exact DP always by runs, never by block boxes */
    int tree_search;    /* iDistance: nearest centres by the tree, not by the AVX2 scan */
    size_t block_rows;  /* the DP's prefixes in blocks of this many (0: the default size: by runs at
                           least 8192 and 8(2k-1), by block boxes and for the Fast DP about 2^18 / k);
                           such blocks run on several workers however short */
    double *cost_trace; /* when not NULL (room for n + 1), the exact DP writes into [i] the sum over
                           prefix i's candidates j = 0, 1, ... (longest first) of (j + 1) times the
                           candidate's cost per row */
} hil_tuning;

#define HIL_DEFAULT_BITS 12
#define HIL_DEFAULT_CENTERS 512
#define HIL_MAX_BITS 31

typedef struct hil_options {
    hil_mapping mapping;
    int fast;            /* cost of a group by its extent on the 1-D key (HilbFast, iDistFast) */
    unsigned bits;       /* Hilbert bits per QI (1..31); 0 = HIL_DEFAULT_BITS */
    unsigned centers;    /* iDistance centres; 0 = HIL_DEFAULT_CENTERS */
    uint64_t seed;       /* iDistance sample and k-means start */
    size_t memory;       /* bytes for sorting; 0 = in memory */
    const char *tmpdir;  /* folder for the external sort's unnamed spill files (NULL: $TMPDIR, else /tmp) */
    const double *weights; /* NCP weights per QI (NULL = equal), as for GCP */
    unsigned threads;    /* threads for the keys (in memory); 0 or 1 = the caller's alone; same result */
    const hil_tuning *tuning; /* NULL: none */
    struct ak_progress *progress; /* common/progress.h: cancel checked between stages and per sort batch */
} hil_options;

/* What a run did, for the report. */
typedef struct hil_stats {
    uint64_t key_bits;   /* bits of the 1-D key */
    uint64_t centers;    /* iDistance centres used */
    uint64_t kmeans_iterations, kmeans_searches; /* iDistance: Lloyd's iterations on the sample, and the
                                                    nearest-centre searches they made (the others skipped) */
    uint64_t sort_runs, sort_merge_passes, blocks_written, blocks_read;
    size_t block_size;
    uint64_t fallback_steps; /* l-diversity: groups formed by the fall-back step */
    uint64_t closing_groups; /* l-diversity: the remainder taken as one group */
    uint64_t exchanges;      /* l-diversity: rows exchanged between groups (hil_ldiv_exchange) */
} hil_stats;

/* Parses "hilbert", "hilbert-fast", "idistance", "idistance-fast" into
 * o->mapping and o->fast (o may be NULL to only test the name); -1 otherwise. */
int hil_parse_algorithm(const char *name, hil_options *o /* OUT */);

/* Anonymizes t under m (k-anonymity and/or probabilistic l-diversity),
 * filling out (initialized by the caller with partition_init). Fails with
 * ANONKIT_E_INELIGIBLE when no partitioning can satisfy m, with
 * ANONKIT_E_USAGE for a model the 1-D algorithms do not implement. */
int hil_run(const table *t, const model *m, const hil_options *o, partition *out, hil_stats *stats /* OUT */,
            ak_error *err);

/* ---- the pieces, exposed for the tests ---- */

/* The Hilbert index of a point of d coordinates of `bits` bits each (Skilling's
 * transposition algorithm): d * bits bits, most significant first, written
 * left-aligned into key[0 .. ceil(d * bits / 64)) (word 0 most significant). */
void hil_hilbert_key(const uint32_t *coords, unsigned d, unsigned bits, uint64_t *key /* OUT */);

/* A Hilbert curve of d axes and `bits` bits per axis prepared for keying many
 * points: hil_curve_key gives the same keys as hil_hilbert_key, without
 * branches on the data and with a table-driven bit transposition, when the
 * key has at most 128 bits (otherwise it calls hil_hilbert_key). */
typedef struct hil_curve {
    unsigned d, bits, words;
    __uint128_t *spread; /* spread[256 b + v]: bit j of byte b of a coordinate, v, at bit (8b+j)*d;
                            NULL: keys of more than 128 bits, the generic path */
} hil_curve;

int hil_curve_init(hil_curve *c /* OUT */, unsigned d, unsigned bits, ak_error *err);
void hil_curve_free(hil_curve *c);
void hil_curve_key(const hil_curve *c, const uint32_t *coords, uint64_t *key /* OUT */);
/* The keys of 4 points (coords[j * d + q] for point j) into keys[j * words ..]. */
void hil_curve_key4(const hil_curve *c, const uint32_t *coords, uint64_t *keys /* OUT */);

/* Optimal 1-D k-anonymity ([Ghinita07] Figure 3) of the rows order[0..n) taken in that
 * order: groups of k..2k-1 consecutive rows minimizing the sum of |G| NCP(G)
 * (weights as for GCP) — or, when gap is not NULL, the sum of |G| times the
 * group's 1-D extent, gap[i] being the key distance from row i-1 to row i.
 * Writes the group sizes from the first group on into sizes (room for n / k),
 * their number into *ngroups and the optimum into *cost. n >= k >= 1. The
 * exact DP's candidate boxes are worked out on `threads` threads (0 or 1:
 * the caller's alone); the result does not depend on it, nor on `tuning`
 * (NULL: none). */
int hil_kanon_dp(const table *t, const uint32_t *order, size_t n, uint64_t k, const double *weights,
                 const double *gap, unsigned threads, const hil_tuning *tuning, uint32_t *sizes /* OUT */,
                 size_t *ngroups /* OUT */, double *cost /* OUT */, ak_error *err);

/* The rows behind the 1-D positions, for measuring groups by NCP ([Ghinita07] §5.2):
 * position i holds row order[i] of t; weights as for GCP (NULL = equal). */
typedef struct hil_rows {
    const table *t;
    const uint32_t *order;
    const double *weights;
} hil_rows;

/* The 1-D l-diversity heuristic ([Ghinita07] Figure 8 with the Figure 9 step) on n
 * positions in 1-D order with sensitive codes sa[i] (< m) and 1-D positions
 * pos[i] (non-decreasing): writes the group of every position into
 * group_of[i] (groups numbered from 0 in the order they are closed) and their
 * number into *ngroups. Every group has probabilistic l-diversity. The
 * Figure 9 step compares extents on the 1-D positions, or, when rows is not
 * NULL, the groups' weighted NCP in the QI space (§5.2). Fails with
 * ANONKIT_E_INELIGIBLE when the whole table has a value more frequent than
 * n / l. */
int hil_ldiv(const uint32_t *sa, const long double *pos, size_t n, uint32_t m, double l, const hil_rows *rows,
             uint32_t *group_of /* OUT */, size_t *ngroups /* OUT */, hil_stats *stats, ak_error *err);

/* The exchange step after the heuristic (the exchange argument of [Ghinita07] §4.1,
 * Lemmas 3 and 5, with the cost of §5): for each pair of consecutive groups
 * (in the order they were formed), two rows of the same sensitive value swap
 * groups while the best such swap lowers the pair's sum of |G| NCP(G). Each
 * group keeps its size and its multiset of sensitive values, so its
 * l-diversity, and k, are untouched. group_of as hil_ldiv wrote it. */
int hil_ldiv_exchange(const uint32_t *sa, uint32_t m, size_t n, const hil_rows *rows, uint32_t *group_of /* IN/OUT */,
                      size_t ngroups, hil_stats *stats, ak_error *err);

#endif
