/* local_internal.h — what the files of local recoding share (local.c,
 * local_split.c): the top-down split search over the rows of an inc_ctx. */
#ifndef AK_LOCAL_INTERNAL_H
#define AK_LOCAL_INTERNAL_H

#include "algo/incognito/inc_internal.h"

typedef struct inc_local_split_stats {
    uint64_t tasks;   /* classes examined */
    uint64_t splits;  /* of them split */
    uint64_t classes; /* published */
} inc_local_split_stats;

/* Local recoding of the rows of c (c->nrows, c->code0, c->sens) by top-down
 * splits from the top of every hierarchy (local_split.c): every row gets a
 * class of p (partition.node: its hierarchy node per QI) that satisfies c->m
 * when the whole table does; otherwise every row stays suppressed. */
int inc_local_split(inc_ctx *c, const double *w, partition *p, inc_local_split_stats *st /* OUT */, ak_error *err);

/* Classes of local recoding before they go to the partition (local.c,
 * local_lift.c): per class its level and dense value (inc_qi) of every QI,
 * and its rows (0: gone, merged into another). */
typedef struct lift_classes {
    uint32_t nqi;
    size_t n, cap;
    uint32_t *lv, *val; /* n * nqi */
    uint64_t *count;
} lift_classes;

/* Appends a class; its id in *id. */
int lift_add(lift_classes *cl, const uint32_t *level, const uint32_t *val, uint64_t count, uint32_t *id /* OUT */,
             ak_error *err);
void lift_free(lift_classes *cl);

enum { LIFT_STEPS = 1 };

/* The least work a thread takes: groups of lifting's candidates, classes
 * eviction measures. */
enum { LIFT_PART_MIN = 64, EVICT_PART_MIN = 256 };

typedef struct inc_local_lift_stats {
    uint64_t rounds, moves; /* rounds run, tuples taken */
    double saved;           /* weighted NCP saved */
} inc_local_lift_stats;

/* The lifting pass (local_lift.c), k-anonymity alone: classes of cl over the
 * rows of c (class_of[row]: its class, or PARTITION_SUPPRESSED) are raised
 * one level in one QI, or joined, when rows of dearer classes can move to
 * them; each class keeps at least k rows or empties; never raises the loss.
 * Each round's measurement runs on up to `threads` threads (0 or 1: none),
 * each with at least part_min groups of candidates (0: LIFT_PART_MIN); the
 * result does not depend on it. */
int inc_local_lift(inc_ctx *c, const double *w, uint64_t k, lift_classes *cl, uint32_t *class_of, int rounds,
                   unsigned threads, size_t part_min, inc_local_lift_stats *st /* OUT */, ak_error *err);

/* After the iterations: cycles of lifting and eviction (POST_CYCLES from k = POST_LARGE_K on, with merges of
 * pairs of classes; one cycle without merges below, where the classes are many and the loss low), the lifting
 * rounds of the first and later cycles, the eviction rounds of each. */
enum { POST_CYCLES = 2, POST_LARGE_K = 20, POST_LIFT_FIRST = 2, POST_LIFT_LATER = 1, EVICT_ROUNDS = 3 };

typedef struct inc_local_post_stats {
    uint64_t lift_rounds, lift_moves, evict_rounds, evict_moves;
} inc_local_post_stats;

/* The passes after the iterations (local_evict.c), k-anonymity alone:
 * lifting then eviction, up to POST_CYCLES times while either moves rows;
 * their measurements on up to `threads` threads (part_min: see
 * inc_local_options), the same result on any number. */
int inc_local_post(inc_ctx *c, const double *w, uint64_t k, int evict, lift_classes *cl, uint32_t *class_of,
                   unsigned threads, size_t part_min, inc_local_post_stats *st /* OUT */, ak_error *err);

#endif
