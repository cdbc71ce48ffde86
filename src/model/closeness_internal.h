/* closeness_internal.h — the layouts behind closeness.h, shared by
 * closeness.c and shier.c (and the unit tests) only. */
#ifndef AK_CLOSENESS_INTERNAL_H
#define AK_CLOSENESS_INTERNAL_H

#include <stdint.h>

#include "common/hash.h"
#include "model/closeness.h"

struct model_shier {
    strmap paths;     /* node id -> its path: labels from the node to the top, joined by '\x1f' */
    uint32_t *parent; /* per node; UINT32_MAX at the root */
    uint32_t *level;  /* per node: 0 at leaves, height at the root */
    uint32_t nnodes;
    uint32_t height;  /* H: the root's level */
    strmap leaves;    /* leaf label -> leaf index */
    uint32_t *leaf_node; /* per leaf index: its node */
};

/* The leaf node of label, or UINT32_MAX. */
uint32_t shier_leaf(const model_shier *h, const char *label, uint32_t len);

struct model_ref {
    uint32_t nvalues;  /* codes 0..nvalues-1 */
    uint32_t present;  /* codes with a non-zero count */
    uint64_t *count;   /* table count per code */
    uint64_t total;    /* N */
    unsigned distance; /* MODEL_T_* */
    /* ordered */
    uint32_t *rank;    /* per code: rank of its value among the m distinct ones */
    uint32_t m;
    uint64_t *cq;      /* [m]: table rows with rank <= r */
    __int128 *sq;      /* [m+1]: sq[r] = cq[0] + ... + cq[r-1] */
    /* hierarchical */
    uint32_t *leaf;    /* per code: its leaf node */
    uint32_t *parent, *level;
    uint64_t *nodeq;   /* table rows under each node */
    uint32_t nnodes, height;
};

struct model_work {
    uint32_t (*pairs)[2]; /* ordered: (rank, count) of the class */
    uint64_t *ncount;     /* hierarchical: class rows under each node (zero between calls) */
    __int128 *pos;        /* hierarchical: pos_extra per node (zero between calls) */
    uint32_t *touched;
};

#endif
