/* mondrian_internal.h — what the files of the in-memory Mondrian share
 * (mondrian.c: splitting partitions, the split criteria, the run;
 * mondrian_rows.c: the work rows' primitives — boxes with their AVX2
 * kernels, in-place splits, sorting by one code, medians;
 * mondrian_threads.c: workers, helper threads, filling the work array and
 * writing the class ids), and the partition tree Rothko-S grows on a sample
 * ([LeFevre07] §3), which rothko_s.c reads. Not part of the family's interface
 * (mondrian.h is). */
#ifndef AK_MONDRIAN_INTERNAL_H
#define AK_MONDRIAN_INTERNAL_H

#include <stdatomic.h>
#include <stdint.h>

#include "algo/mondrian/mondrian.h"
#include "common/progress.h"
#include "common/stats.h"

/* The partition tree grown on a sample by Rothko-S ([LeFevre07] §3): nodes in the
 * order they were made (a parent before its children), each with its region. */
typedef struct mdr_tree_node {
    uint32_t parent;   /* UINT32_MAX for the root */
    uint32_t depth;    /* the root's is 0 */
    uint32_t split_q;  /* the QI the node was split on; UINT32_MAX for a leaf */
    int median_only;   /* InfoGain gave up at or above it */
    uint64_t rows;     /* sample rows */
} mdr_tree_node;

typedef struct mdr_tree {
    uint32_t d;
    mdr_tree_node *nodes;
    size_t count, cap;
    uint32_t *regions; /* per node: rlo then rhi, d codes each */
} mdr_tree;

static inline const uint32_t *mdr_tree_rlo(const mdr_tree *tr, size_t i) { return tr->regions + 2 * (size_t)tr->d * i; }
static inline const uint32_t *mdr_tree_rhi(const mdr_tree *tr, size_t i) { return mdr_tree_rlo(tr, i) + tr->d; }
void mdr_tree_free(mdr_tree *tr);

/* The growth phase of Rothko-S ([LeFevre07] §3): the table is a sample of a larger
 * partition, a split is made when `test` lets every child through, and the
 * tree is recorded. Nodes are split breadth-first; a node is not split when
 * it holds at most stop_rows sample rows, lies at max_depth, or when the
 * split would leave more than max_leaves leaves (each 0: no limit). */
typedef struct mdr_grow {
    const sample_test *test;
    uint64_t stop_rows;
    uint32_t max_depth;
    size_t max_leaves;
    mdr_tree *tree; /* OUT: initialized empty by the caller */
} mdr_grow;

/* The AVX2 box kernels (mondrian_rows.c) where the compiler can make them. */
#if defined(__GNUC__) && defined(__x86_64__)
#define MDR_HAVE_AVX2 1
#define MDR_MAX_CHUNKS 8 /* vector kernels for up to 64 QIs */
#else
#define MDR_HAVE_AVX2 0
#define MDR_MAX_CHUNKS 0
#endif

/* Partitions of at most this many rows are split out of place (partition_rows). */
#define MDR_SMALL_PARTITION 4096

typedef struct mdr_frame {
    size_t begin, end;
    int median_only; /* InfoGain gave up in an ancestor: Median from here down */
    uint32_t node;   /* growth phase: its node of the tree */
} mdr_frame;

typedef struct mdr {
    const table *t;
    const model *m;
    partition *out;     /* classes found by this worker, ids local to it */
    uint32_t *class_of; /* shared: class of every input row (written once all classes are known) */
    size_t *class_begin;/* per class this worker made (its out), the first of its rows in the work array */
    size_t class_begin_cap;
    unsigned threads;   /* threads this worker may still hand work to, itself included */
    atomic_uint *lent;  /* threads its parent lends it while waiting for it (NULL: none, the first worker) */
    size_t capacity;    /* rows of the largest partition this worker can meet */
    uint32_t d;         /* QIs */
    uint32_t w;         /* words per work row: d codes, the sensitive code (l-diversity only), the row id */
    uint32_t idw;       /* the word of a work row holding its row id (d, or d + 1 after a sensitive code) */
    size_t n;
    uint32_t *rows;     /* n * w */
    uint32_t *scratch;  /* n values: median selection */
    uint32_t *moved;    /* n * w, categorical redistribution (lazily allocated) */
    uint32_t *small_side, *small_rows; /* partition_rows of small partitions: 2 * MDR_SMALL_PARTITION indexes,
                                          MDR_SMALL_PARTITION * w + 8 words */
    uint32_t *order, *order_tmp, *code_count; /* sorting a partition by one code (lazily allocated) */
    int need_hist;      /* l-diversity: sensitive histograms */
    int need_mom;       /* variance diversity: sums of the numeric sensitive values */
    int need_sensitive; /* either */
    int exact;          /* every sensitive value is a small integer (model_moments) */
    uint32_t sensitive_domain;
    ak_hist whole, left, less; /* partition, candidate left side, rows < median */
    model_moments whole_mom, left_mom, less_mom;
    uint32_t *counts, *counts_scratch;
    uint32_t *codes;    /* t, δ, β: the codes beside counts (model_dist_holds) */
    model_work *work;   /* t, δ, β: the predicates' scratch, one per worker */
    uint32_t *child_rows; /* per child of a categorical node: row count */
    uint32_t max_children;
    mdr_split split;
    double min_gain;
    uint32_t class_domain;
    ak_hist cls_whole, cls_left, cls_group; /* InfoGain: class-label histograms */
    uint32_t bw;        /* box half-width: d rounded up to 8 (lo codes, then hi codes) */
    uint32_t fw;        /* words per frame: box (2 bw), region lo (d), region hi (d) */
    int simd;           /* use the AVX2 box kernels */
    /* stack of pending partitions with their boxes and regions (fw codes per frame) */
    mdr_frame *stack;
    uint32_t *boxes;
    size_t depth, cap;
    /* growth phase of Rothko-S (NULL otherwise) */
    const mdr_grow *grow;
    uint32_t grow_parent;   /* node being split: parent of the frames pushed */
    uint32_t grow_q;        /* the QI of the split just applied */
    unsigned grow_children; /* children of the split being tested (Bonferroni's m) */
    size_t grow_head;       /* frames are taken from the front: [grow_head, depth) are waiting */
    size_t grow_leaves;     /* nodes made leaves so far */
    /* progress (mdr_options.progress; NULL: none): rows of the classes made,
     * counted in batches; the first worker (lent NULL) may call the callback */
    struct ak_progress *progress;
    uint64_t progress_rows;
} mdr;

static inline uint32_t *row_at(const mdr *s, size_t i) { return s->rows + i * s->w; }

/* Exchanges two work rows of w words (a plain loop: a memcpy call per swap
 * costs more than the copy). */
static inline void swap_rows(uint32_t *a, uint32_t *b, uint32_t w)
{
    for (uint32_t x = 0; x < w; x++) {
        uint32_t tmp = a[x];
        a[x] = b[x];
        b[x] = tmp;
    }
}

/* A box is bw lowest codes then bw highest codes; lanes d..bw-1 are padding
 * the vector kernels fill with whatever follows a row's codes. */
static inline void box_reset(uint32_t *box, uint32_t bw)
{
    for (uint32_t q = 0; q < bw; q++) {
        box[q] = UINT32_MAX;
        box[bw + q] = 0;
    }
}

static inline void box_add(uint32_t *box, const uint32_t *r, uint32_t d, uint32_t bw)
{
    for (uint32_t q = 0; q < d; q++) {
        if (r[q] < box[q]) box[q] = r[q];
        if (r[q] > box[bw + q]) box[bw + q] = r[q];
    }
}

/* ---- the split choice of the family (split.c) ---- */

/* Adds n rows of value `code` to h (n may be 0). */
static inline void hist_add_n(ak_hist *h, uint32_t code, uint64_t n)
{
    if (!n) return;
    if (h->count[code] == 0) h->touched[h->ntouched++] = code;
    h->count[code] += (uint32_t)n;
    h->total += n;
    if (h->weight) h->wsum += (uint64_t)h->weight[code] * n;
}

/* A chosen split. */
typedef struct mdr_choice {
    int found;
    uint32_t q;
    uint32_t cut;    /* numeric: lhs = code < cut */
    uint32_t node;   /* categorical: the hierarchy node specialized (the values' lowest common ancestor) */
    int median_only; /* the children continue under Median */
    double score;    /* InfoGain / Regression: information gain in bits, or reduction of the squared error */
} mdr_choice;

/* The sides a source keeps sensitive statistics for: the candidate left
 * side, and the rows below the median. */
enum { MDR_SIDE_LEFT, MDR_SIDE_LESS };

/* What a group of rows adds to a score: InfoGain class counts into cls,
 * Regression sums of the target and its squares (by `split`). */
typedef struct mdr_acc {
    mdr_split split;
    ak_hist *cls;
    long double t1, t2;
} mdr_acc;

/* A partition's statistics as the split choice reads them, from its rows
 * (mondrian.c) or from frequency groups (rothko_fgroup.c). Codes and ranges
 * are those of QI q within the partition's box [lo, hi]. */
typedef struct mdr_source_ops {
    /* Before a choice (median: 1 for Median, 0 for InfoGain / Regression);
     * may be NULL. */
    int (*start)(void *src, int median, ak_error *err);
    /* Before Median tries QI q: 1, or 0 when its statistics were not
     * gathered (the choice returns 2); may be NULL. */
    int (*prepare)(void *src, uint32_t q, ak_error *err);
    /* The lower median of numeric q, with the rows below and at it; the
     * sensitive statistics of {code <= median} on the LEFT side. */
    int (*median)(void *src, uint32_t q, const uint32_t *lo, const uint32_t *hi, uint32_t *median, uint64_t *below,
                  uint64_t *equal, ak_error *err);
    /* The sensitive statistics of {code < median} on the LESS side. */
    void (*less_side)(void *src, uint32_t q, const uint32_t *lo, uint32_t median);
    /* Whether splitting the partition's n rows into `left` rows (statistics
     * on `side`) and the rest is allowable. */
    int (*allowable)(void *src, uint64_t n, uint64_t left, int side);
    /* The groups of equal codes of numeric q in ascending order: start
     * (clears the LEFT side), next (the code and row count of the next group;
     * 0 after the last), add (the group last returned by next: its sensitive
     * statistics to the LEFT side, its classes or targets to acc). */
    int (*groups_start)(void *src, uint32_t q, const uint32_t *lo, const uint32_t *hi, ak_error *err);
    int (*group_next)(void *src, uint32_t *code, uint64_t *rows);
    void (*group_add)(void *src, mdr_acc *acc);
    /* The rows of categorical q under each child of hierarchy node u: 1, or
     * 0 when a non-empty child is too small to be allowable. */
    int (*children)(void *src, uint32_t q, const hier_node *u, ak_error *err);
    uint64_t (*child_rows)(void *src, uint32_t child);
    void (*child_add)(void *src, uint32_t q, const hier_node *u, uint32_t child, mdr_acc *acc);
    /* Whether every non-empty child satisfies the model. */
    int (*children_hold)(void *src, uint32_t q, const hier_node *u);
    /* The whole partition's classes or targets. */
    void (*whole_add)(void *src, mdr_acc *acc);
} mdr_source_ops;

typedef struct mdr_chooser {
    const table *t;
    uint64_t n;                /* rows of the partition */
    uint64_t k;
    mdr_split split;
    double min_gain;
    int need_sensitive;        /* Median sweeps every threshold when both sides of the median fail */
    int score_small_sides;     /* growth phase: thresholds leaving fewer than k rows are scored too */
    ak_hist *cls_whole, *cls_left, *cls_group; /* InfoGain: class-label histograms */
    const mdr_source_ops *ops;
    void *src;
} mdr_chooser;

/* mdr_choose (split_choose.h) chooses the split of a partition with box
 * [lo, hi] under c->split (Median when median_only): 1 with *out, 0 when no
 * split is allowable, 2 when the source lacks a QI's statistics, < 0 on error. */

/* The regions in a QI of the non-empty children (nonempty[c]) of hierarchy
 * node u, specialized in a partition whose region there is [rlo, rhi]: each
 * child's leaves, with the leaves of empty children and of the region
 * outside u given to the nearest non-empty child before them (or the
 * first); child c's is [lo[c], hi[c]]. The recoding rules of both Mondrian
 * and Rothko come from these. */
void mdr_child_regions(const hier *h, const hier_node *u, const uint8_t *nonempty, uint32_t rlo, uint32_t rhi,
                       uint32_t *lo, uint32_t *hi);

/* mondrian.c */
int mdr_push(mdr *s, size_t begin, size_t end, const uint32_t *box_in, const uint32_t *rlo, const uint32_t *rhi,
             int median_only, ak_error *err);
int mdr_reserve_class_rows(mdr *s, size_t classes, ak_error *err);
int mdr_note_class_rows(mdr *s, uint32_t id, size_t begin, ak_error *err);
int mdr_process_top(mdr *s, ak_error *err);

/* mondrian_rows.c */
void mdr_compute_box(const mdr *s, size_t begin, size_t end, uint32_t *box);
size_t mdr_partition_rows(mdr *s, size_t begin, size_t end, uint32_t q, uint32_t cut, uint32_t *left_box,
                          uint32_t *right_box);
int mdr_order_by_code(mdr *s, size_t begin, size_t end, uint32_t q, uint32_t lo, uint32_t hi, ak_error *err);
uint32_t mdr_median_of(mdr *s, size_t begin, size_t end, uint32_t q, uint32_t lo, uint32_t hi, size_t *less,
                       size_t *equal);

/* mondrian_threads.c */
void mdr_worker_free(mdr *s);
int mdr_worker_alloc(mdr *s, size_t capacity, ak_error *err);
int mdr_run_worker(mdr *s, ak_error *err);
void mdr_write_all_classes(const mdr *s, size_t first_class);
void mdr_fill_all_rows(mdr *s, uint32_t *box);

#endif
