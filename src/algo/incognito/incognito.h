/* incognito.h — full-domain generalization over hierarchies: Incognito and
 * its baselines ([LeFevre05]; LeFevre, DeWitt & Ramakrishnan, SIGMOD 2005).
 *
 * Every QI has a hierarchy whose leaves all sit at the same depth; a node of
 * the generalization lattice is a vector of levels, one per QI (0 = the
 * value itself, height = the root). A node is anonymous when the classes of
 * the table generalized to it satisfy the privacy model, except classes
 * whose rows together are at most the suppression limit (those rows are
 * suppressed). The search finds every anonymous node (the binary search:
 * those of least height), the k-minimal ones among them (no anonymous
 * direct specialization), picks one by the chosen measure and publishes it.
 *
 * Ownership: inc_result_free releases what inc_search fills. */
#ifndef AK_INCOGNITO_H
#define AK_INCOGNITO_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "core/partition.h"
#include "core/table.h"
#include "model/model.h"
#include "model/risk_model.h"

typedef enum inc_variant {
    INC_BASIC = 0,          /* Basic Incognito ([LeFevre05] slides 32-36) */
    INC_SUPER_ROOTS,        /* one scan per family of roots ([LeFevre05] slides 38-39) */
    INC_CUBE,               /* zero-generalization frequency sets bottom-up ([LeFevre05] slide 40) */
    INC_BINARY_SEARCH,      /* Samarati's binary search on the lattice height */
    INC_BOTTOM_UP,          /* breadth-first search of the whole lattice, rollup from a parent */
    INC_BOTTOM_UP_NOROLLUP, /* the same, every frequency set by a scan of the table */
    INC_OPTIMAL,            /* only the node of least loss: bound-ordered search with tagging (optimal.c) */
    INC_EXHAUSTIVE,         /* only the node of least loss: every lattice node tested and measured */
    INC_VARIANT__COUNT
} inc_variant;

/* GCP, HEIGHT and DM: the anonymous node of least loss over every anonymous
 * node, suppressed rows counted as fully generalized; K_MINIMAL: the k-minimal
 * node of least GCP (the rule before issue 28). */
typedef enum inc_choose { INC_CHOOSE_GCP = 0, INC_CHOOSE_HEIGHT, INC_CHOOSE_DM, INC_CHOOSE_K_MINIMAL } inc_choose;

typedef struct inc_options {
    inc_variant variant;
    double suppression;     /* largest share of rows that may be suppressed, in [0, 1] */
    inc_choose choose;
    const double *weights;  /* NCP weights per QI for GCP, NULL for equal */
    size_t cube_share_min;  /* Cube: smallest frequency set whose projections may be shared rather
                               than stored (0: 4096); the tests lower it to reach that path */
    const risk_model *risk; /* --max-risk average/uniqueness: a node must also satisfy this table
                               predicate (model/risk_model.h, monotone); NULL: none */
    struct ak_progress *progress; /* common/progress.h: cancelled searches stop at the next frequency set */
} inc_options;

/* Work done by a search (the figures of [LeFevre05] slides 44-47). */
typedef struct inc_counters {
    uint64_t nodes_checked;  /* frequency sets tested against the model */
    uint64_t scans;          /* frequency sets computed from the table */
    uint64_t rollups;        /* frequency sets computed from another one */
    uint64_t candidates;     /* nodes of all candidate graphs (or of the lattice) */
} inc_counters;

/* A k-minimal node with the measures --choose ranks by. */
typedef struct inc_minimal {
    uint32_t height;
    uint64_t suppressed; /* rows suppressed when it is published */
    uint64_t classes;
    double dm, gcp;
} inc_minimal;

typedef struct inc_result {
    uint32_t nqi;
    int complete;         /* 1: `anonymous` is every anonymous node; 0 (binary search): those of least height */
    size_t nanonymous;
    uint32_t *anonymous;  /* nanonymous level vectors of nqi, ascending by height, then lexicographically */
    size_t nminimal;
    uint32_t *minimal;    /* the k-minimal nodes, same order */
    inc_minimal *info;    /* per k-minimal node */
    size_t chosen;        /* index into minimal */
    uint64_t suppression_limit;
    inc_counters counters;
} inc_result;

/* The node of least loss (inc_optimal). */
typedef struct inc_optimum {
    uint32_t levels[64];
    inc_minimal info;       /* measured like a k-minimal node (metrics.c) */
    double loss;            /* the loss it was chosen by: GCP (normalized), height or DM */
    uint64_t lattice;       /* nodes of the lattice */
    uint64_t pruned_tagged; /* not tested: below a failed node, or above an anonymous one without suppression */
    uint64_t pruned_bound;  /* not visited: their loss bound exceeds the optimum */
    uint64_t suppression_limit;
    inc_counters counters;
} inc_optimum;

/* The anonymous node of least loss by o->choose (GCP when K_MINIMAL) over
 * every anonymous node of the lattice, by the bound-ordered search or, with
 * `exhaustive`, by testing every node; both return the same node. */
int inc_optimal(const table *t, const model *m, const inc_options *o, int exhaustive, inc_optimum *out /* OUT */,
                ak_error *err);

/* How local recoding works (inc_local_options.method). */
typedef enum inc_local_method {
    INC_LOCAL_AUTO = 0, /* ITERATE under k-anonymity and distinct l-diversity, SPLIT under the other models */
    INC_LOCAL_ITERATE,  /* full-domain optima under a suppression limit, iterated (local.c) */
    INC_LOCAL_SPLIT     /* top-down splits from the top node (local_split.c): any per-class model */
} inc_local_method;

/* Local recoding (local.c): full-domain optima applied iteratively, every
 * row at the levels of the iteration that published it. */
typedef struct inc_local_options {
    double iteration_suppression; /* share of an iteration's rows its optimum may leave for the next one */
    double tail_share;            /* once at most this share of the table's rows is left ... */
    double tail_suppression;      /* ... an iteration may leave this share of its rows (0: iteration_suppression);
                                     k alone (with a sensitive value: iteration_suppression throughout) */
    double defer;                 /* what a row left to the next iteration costs, as a share of its full generalization */
    const double *weights;        /* NCP weights per QI, NULL for equal */
    int refine;                   /* split each published class further while its parts satisfy the model, then
                                     (k alone) raise or join classes that rows of dearer classes can move to */
    struct ak_progress *progress; /* common/progress.h: cancelled runs stop at the next frequency set */
    inc_local_method method;
    int evict;                    /* with refine, k alone: the eviction pass after lifting (local_evict.c); 0: the
                                     first lifting rounds alone (to compare) */
    unsigned threads;             /* threads lifting and eviction may measure on (0 or 1: none); the same output */
    size_t part_min;              /* least work per thread (groups of lifting, classes of eviction); 0: the defaults
                                     (LIFT_PART_MIN, EVICT_PART_MIN); tests set 1 to cut small tables too */
    double final_share;           /* k alone: once at most this share of the table's rows is left, one last
                                     iteration publishes them all, without suppression (0: never) */
} inc_local_options;

typedef struct inc_local_iteration {
    uint32_t levels[64];    /* the iteration's node */
    uint64_t rows;          /* rows it started with */
    uint64_t published;     /* rows it published (the rest went on) */
    uint64_t classes;
    uint64_t nodes_checked;
} inc_local_iteration;

typedef struct inc_local_result {
    size_t niter;
    inc_local_iteration *iter;
    uint64_t suppressed;    /* rows no iteration could publish */
    inc_local_method method; /* ITERATE or SPLIT: the one that ran */
    uint64_t tasks, splits, classes; /* SPLIT: classes examined, split, published */
    uint64_t lift_rounds, lift_moves; /* ITERATE under k alone: the lifting pass (local_lift.c) */
    uint64_t evict_rounds, evict_moves; /* ITERATE under k alone: the eviction pass (local_evict.c) */
} inc_local_result;

/* Partitions t by local recoding into p (freshly initialized, one row each).
 * SPLIT: local_split.c. ITERATE: the optimum of least GCP with at most o->iteration_suppression of the rows
 * suppressed, then the suppressed rows on their own, until none is left (an
 * iteration that would leave fewer than k rows, or none published, runs
 * without suppression). Classes carry their hierarchy node per QI. */
int inc_local(const table *t, const model *m, const inc_local_options *o, partition *p,
              inc_local_result *res /* OUT */, ak_error *err);
void inc_local_result_free(inc_local_result *res);

/* Parses / names the variants and the choice measures; parse returns -1 on an unknown name. */
int inc_parse_variant(const char *text, inc_variant *out /* OUT */);
const char *inc_variant_name(inc_variant v);
int inc_parse_choose(const char *text, inc_choose *out /* OUT */);
const char *inc_choose_name(inc_choose c);

/* Whether the model stays monotone when classes may be suppressed: a class
 * that fails merged with one that passes may fail for entropy, recursive and
 * probabilistic l-diversity, so the lattice properties hold with suppression
 * only for k-anonymity and distinct l-diversity. */
int inc_model_monotone_with_suppression(const model *m);

/* Searches the lattice of t (every QI must have a hierarchy) and fills res
 * with the anonymous and the k-minimal nodes. ANONKIT_E_INELIGIBLE when not
 * even the top node is anonymous. */
int inc_search(const table *t, const model *m, const inc_options *o, inc_result *res /* OUT */, ak_error *err);

/* Measures every k-minimal node of res (res->info: suppressed rows, classes,
 * DM, GCP with o->weights) and chooses one by o->choose (res->chosen). */
int inc_measure_choose(const table *t, const model *m, const inc_options *o, inc_result *res, ak_error *err);
void inc_result_free(inc_result *res);

/* Publishes node `levels`: one class per distinct generalized row, rows of
 * classes that fail the model suppressed; each class carries its hierarchy
 * node per QI for the writer. p must be freshly initialized. */
int inc_publish(const table *t, const model *m, const uint32_t *levels, partition *p, ak_error *err);

/* The hierarchy height of QI q (its top level). */
uint32_t inc_qi_height(const table *t, uint32_t q);

#endif
