/* rothko_internal.h — what the files of Rothko (rothko*.c, src/algo/mondrian)
 * share: the run state, the spill files' tuple layouts and readers, the
 * frequency groups and the tree grown over one disk-resident partition, the
 * decoded batches of a scan, and the functions one file of Rothko calls in
 * another. Not part of the family's interface (rothko.h is).
 *
 * rothko.c          sizes, the first scan, the run
 * rothko_spill.c    tuple layouts, partition files, reading a partition
 * rothko_fgroup.c   frequency groups ([LeFevre07] §2), choosing a split from them,
 *                   the tree over one partition
 * rothko_t.c        leaves finished in memory; one disk-resident partition
 *                   ([LeFevre07] §2.1): scans, repartitioning, Rothko-T
 * rothko_s.c        Rothko-S ([LeFevre07] §3): samples, growth, pruning */
#ifndef AK_ROTHKO_INTERNAL_H
#define AK_ROTHKO_INTERNAL_H

#include <stdint.h>
#include <string.h>

#include "algo/mondrian/mondrian_internal.h"
#include "algo/mondrian/rothko.h"
#include "common/bottomk.h"
#include "common/hash.h"
#include "common/rng.h"
#include "common/stats.h"
#include "io/spill.h"
#include "io/tuple.h"

/* How a partition's file stores a tuple: column c (the d QIs, then the
 * sensitive code, then the class code) at byte off[c], as its offset from
 * base[c] in bytes[c] bytes, little-endian; 0 bytes: every row holds base[c].
 * The run's doubles (Rothko-S: the numeric sensitive value, the regression
 * target) follow at extra_at, as stored. */
typedef struct rk_layout {
    uint32_t width; /* bytes per tuple */
    uint32_t extra_at;
    uint32_t *base, *off;
    uint8_t *bytes;
} rk_layout;

/* A partition on disk: tuples and the copied fields of its rows. */
typedef struct rk_part {
    spill_file tuples, payload;
    uint64_t rows;
    int provisional; /* numeric codes still need table_numeric_rank (the root file) */
    const rk_layout *layout;   /* NULL: d + 2 codes of 4 bytes (the root file) */
    const uint32_t *lo, *hi;   /* NULL, or per QI bounds of every row's codes */
    /* the root file of a first scan read in two pieces: the second piece's
     * tuples and payload, read after tuples and payload (NULL: none) */
    spill_file *tail_tuples, *tail_payload;
} rk_part;

/* What one piece of the first scan writes and gathers (the first scan may
 * read the input in two pieces on two threads: table_spec.row_sink). */
typedef struct rk_piece {
    spill_writer tuples, payload;
    spill_stats tuple_io, payload_io;
    uint8_t *rowbuf;
    strbuf escaped;
    uint64_t rows;
    uint32_t *sens_count;  /* per sensitive code of the piece (l-diversity) */
    size_t sens_cap;
    model_moments mom;     /* numeric sensitive values (variance diversity) */
    int values_exact;
} rk_piece;

/* Loads up to `limit` rows of p (from an open reader) into a view table and
 * its copied fields; *got receives the rows loaded. */
typedef struct rk_load {
    uint32_t **codes; /* per QI */
    uint32_t *sens, *cls;
    double *sval, *target; /* when the tuples carry them */
    strbuf copied;
    size_t *off;
    size_t cap;
} rk_load;

typedef struct rk {
    const model *m;
    const rothko_options *o;
    table *t;            /* the schema: dictionaries, no rows */
    uint32_t d;
    uint32_t width;      /* bytes per tuple of the root file: d codes, sensitive, class, the doubles */
    uint32_t extra;      /* bytes of doubles per tuple: the numeric sensitive value, then the target (Rothko-S) */
    int has_sval, has_target;
    uint32_t ncopied;
    uint32_t *copied_col;
    size_t block;
    spill_dir dir;
    spill_stats tuple_io, payload_io;
    /* first scan */
    rk_piece piece[2];
    unsigned npieces;
    spill_file tail_tuples, tail_payload; /* the second piece's files */
    rk_part root;
    /* Rothko-S: each piece's bottom-m sample of its rows (priorities hashed
     * from the rows' byte offsets), from which the root's sample is drawn
     * without a scan of its own (sample_first_scan) */
    bottomk first_sample[2];
    unsigned first_sample_parts; /* stores in use (0: none) */
    uint64_t rows_estimate;      /* of the input, from its size and first lines (0: unknown) */
    /* split choice */
    int need_hist, need_mom, infogain;
    uint32_t sdomain, cdomain;
    ak_hist whole, left, cls_whole, cls_left, cls_group, child;
    uint32_t *counts, *counts_scratch;
    /* t-closeness, δ-disclosure, β-likeness (model/closeness.h): the model with
     * the table's reference distribution (r->m points to mref then), the codes
     * beside counts and the predicates' scratch */
    model mref;
    model_ref *ref;
    model_work *work;
    uint32_t *codes;
    uint64_t tm;         /* TM in rows */
    size_t fg_budget;    /* bytes the frequency groups of one level may take */
    spill_file *pool;    /* spill files done with, kept for reuse until the run ends */
    size_t npool, pool_cap;
    rothko_leaf_fn leaf_fn;
    void *ctx;
    rothko_stats *stats;
    /* Rothko-S */
    uint64_t sample_rows;  /* n: rows of the largest sample; partitions up to it are finished in memory */
    size_t max_leaves;     /* leaves one growth phase may make (write buffers and histograms) */
    ak_rng rng;
    int values_exact;      /* every numeric sensitive value is a small integer (model_moments) */
    /* the whole table's sensitive statistics, gathered by the first scan */
    uint32_t *sens_count;  /* per sensitive code (l-diversity) */
    model_moments all_mom; /* numeric sensitive values (variance diversity) */
    /* missing numbers: rows of mixed classes that could not stand alone (rothko_missing.c) */
    rk_load waiting;
    size_t nwaiting;
    unsigned passes;       /* about how many repartitions the run takes (the progress's "n of m") */
} rk;

static inline void store_f64(uint8_t *p, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    tuple_store_u64(p, bits);
}

static inline double load_f64(const uint8_t *p)
{
    const uint64_t bits = tuple_load_u64(p);
    double v;
    memcpy(&v, &bits, sizeof v);
    return v;
}

/* t, δ, β of a histogram h (minus: of r->whole less h) of `count` rows; 1 without those models. */
int rk_dist_holds(rk *r, uint64_t count, const ak_hist *h, int minus);

/* The numeric sensitive value and the target of a stored tuple. */
static inline double tuple_sval(const rk_layout *l, const uint8_t *row) { return load_f64(row + l->extra_at); }

static inline double tuple_target(const rk *r, const rk_layout *l, const uint8_t *row)
{
    return load_f64(row + l->extra_at + 8 * r->has_sval);
}

typedef struct rk_reader {
    spill_reader tuples, payload;
    const uint8_t *raw; /* read_row: the last tuple as stored */
    int with_payload;
    const rk_layout *lay; /* the partition's, or own */
    rk_layout own;        /* the root file's */
    uint64_t row;         /* tuples handed out so far */
} rk_reader;

/* (code, sub-value) -> count: the AVS set (sub-value: sensitive code) or AVC
 * set (class code) of one QI in one node ([LeFevre07] §2). Dense, a count per code of
 * the node's AV range and sub-value, when that is at most 10 counts a row (a
 * hashed pair takes about 40 bytes); else a hash table of the pairs seen,
 * whose pairs are sorted by key with their counts after the scan. Either way
 * they are read in ascending (code, sub-value) order. */
typedef struct pairset {
    uint32_t base, range, nsub;
    uint32_t *dense;        /* dense: count[(code - base) * nsub + sub] */
    u64map ids;             /* hashed: key code << 32 | sub -> id */
    uint64_t *count;        /* hashed: per id, then per sorted pair */
    size_t cap;
    uint64_t *sorted;       /* hashed, after pairset_sort (which frees ids): keys ascending, count[i] theirs */
    size_t npairs;          /* hashed, after pairset_sort: pairs */
} pairset;

static inline int pairset_add(pairset *s, uint32_t code, uint32_t sub, ak_error *err)
{
    if (s->dense) {
        s->dense[(size_t)(code - s->base) * s->nsub + sub]++;
        return ANONKIT_OK;
    }
    uint32_t id;
    int inserted;
    if (u64map_intern(&s->ids, (uint64_t)code << 32 | sub, &id, &inserted) != 0) return ak_err_nomem(err);
    if (inserted) {
        if (id >= s->cap) {
            size_t cap = s->cap ? 2 * s->cap : 256;
            uint64_t *c = realloc(s->count, cap * sizeof *c);
            if (!c) return ak_err_nomem(err);
            s->count = c;
            s->cap = cap;
        }
        s->count[id] = 0;
    }
    s->count[id]++;
    return ANONKIT_OK;
}

/* The AV set of one QI in one node ([LeFevre07] §2: SELECT A, COUNT(*) GROUP BY A),
 * over the codes [base, base + range) that the node's rows can hold (its
 * region, narrowed to a known box). Dense: a count per code. Sparse, when the
 * range is much wider than the node has rows: the scan gathers the codes and
 * they are sorted and run-length counted after it, so memory follows the rows
 * rather than the range. Partitions have fewer than 2^32 rows. */
typedef struct avset {
    uint32_t base, range;
    int sparse;
    uint32_t *count; /* dense: count[c - base]; sparse, after av_finish: count of codes[i] (before: scratch) */
    uint32_t *codes; /* sparse: every code seen, then after av_finish the distinct codes ascending */
    size_t ncodes;   /* sparse: codes gathered, then distinct codes */
    size_t cap;      /* sparse: room, the node's rows */
} avset;

/* Counts one code (within the set's range). */
static inline int av_add(avset *s, uint32_t code, ak_error *err)
{
    if (!s->sparse) {
        s->count[code - s->base]++;
        return ANONKIT_OK;
    }
    if (s->ncodes == s->cap) /* more rows than the node was said to have */
        return ak_err_set(err, ANONKIT_E_INTERNAL, NULL, 0, 0, "a partition's row count changed between scans");
    s->codes[s->ncodes++] = code;
    return ANONKIT_OK;
}

/* The smallest code >= c with a non-zero count (its count in *count), or
 * UINT32_MAX when there is none. */
static inline uint32_t av_next(const avset *s, uint32_t c, uint64_t *count)
{
    if (c < s->base) c = s->base;
    if (!s->sparse) {
        for (uint64_t at = (uint64_t)c - s->base; at < s->range; at++)
            if (s->count[at]) {
                *count = s->count[at];
                return s->base + (uint32_t)at;
            }
        *count = 0;
        return UINT32_MAX;
    }
    size_t a = 0, b = s->ncodes; /* first code >= c */
    while (a < b) {
        const size_t mid = a + (b - a) / 2;
        if (s->codes[mid] < c) a = mid + 1;
        else b = mid;
    }
    if (a == s->ncodes) {
        *count = 0;
        return UINT32_MAX;
    }
    *count = s->count[a];
    return s->codes[a];
}

/* The frequency group of one node ([LeFevre07] §2: AV group, with the AVS group for
 * l-diversity and the AVC group for InfoGain). */
typedef struct fgroup {
    uint64_t n;
    uint32_t *lo, *hi; /* per QI: the least and greatest code seen, the node's box */
    uint8_t *counted;  /* per QI: whether its sets below are counted (see count_mask) */
    avset *av;         /* per QI */
    pairset *avs;      /* per QI, l-diversity */
    pairset *avc;      /* per QI, InfoGain */
} fgroup;

/* A node of the tree grown over one disk-resident partition. */
enum { RK_OPEN, RK_INNER, RK_LEAF };
typedef struct rk_node {
    int kind;
    int median_only;
    uint64_t n;
    uint32_t *rlo, *rhi;   /* region */
    uint32_t *blo, *bhi;   /* a class (no allowable split): its box */
    uint32_t *clo, *chi;   /* codes its rows can hold: the region within the parent's box */
    int is_class;
    int count_all;         /* open: the split needs QIs its last scan did not count */
    uint32_t q;            /* inner: split attribute */
    size_t first_child, nchildren;
    fgroup *fg;            /* open: during the scan */
    rk_part part;          /* leaf: its rows after repartitioning */
    rk_layout lay;         /* leaf: how its file stores them */
    int transcode;         /* leaf: stored in its own layout (else as read) */
    spill_writer wt, wp;
    /* Rothko-S: population statistics gathered while repartitioning ([LeFevre07] §3, pruning) */
    int track;
    uint32_t *shist;       /* count per sensitive code (l-diversity) */
    model_moments mom;     /* numeric sensitive values (variance diversity) */
} rk_node;

typedef struct rk_tree {
    rk_node *nodes;
    size_t count, cap;
} rk_tree;

/* QIs whose sets counting a node pays off more than cheaply: wider than this. */
#define RK_NARROW_RANGE 256u
/* QIs counted in a node's first scan under Median, in the order it will try them. */
#define RK_PREDICTED 2u

/* Copies the doubles of a stored tuple (layout lay) into slot `at` of l. */
static inline void load_values(const rk *r, const rk_layout *lay, rk_load *l, size_t at, const uint8_t *tuple)
{
    if (r->has_sval) l->sval[at] = tuple_sval(lay, tuple);
    if (r->has_target) l->target[at] = tuple_target(r, lay, tuple);
}

/* Tuples of a block decoded column by column: each step of a scan (ranking
 * provisional codes, routing, counting) is then a tight loop over one column
 * whose memory accesses the processor overlaps, instead of one row's chain of
 * dependent cache misses at a time. */
/* A node of the tree for routing: 16 bytes, so that the whole tree stays in
 * the first-level cache (a node of rk_tree spans several cache lines). A
 * leaf or open node is its own only child, so that every row takes the same
 * number of steps. */
typedef struct rk_hop {
    uint32_t q;           /* the split attribute */
    uint32_t first;       /* the first child */
    uint32_t n;           /* children (1: this node itself) */
    uint32_t unused;
} rk_hop;

typedef struct rk_batch {
    size_t cap;     /* rows */
    size_t stride;  /* codes from one column to the next: cap, padded so the columns fall in different cache sets */
    uint32_t *code; /* d + 2 columns of cap codes: code[c * stride + i] */
    uint32_t *node; /* per row: the index of its node in the tree */
    uint32_t *order;      /* counting scans over several nodes: rows grouped by node */
    uint32_t *gathered;   /* one column's codes in that order */
    size_t *first;        /* per tree node: where its rows start in order (tree size + 1) */
    size_t nfirst;
    uint8_t *provisional; /* per column: its codes left provisional (only the box is wanted, see scan) */
    uint8_t *tuples;      /* cap tuples of any layout, stored for writing (rk_layout_rows) */
    /* the tree as route_batch reads it, built for each scan */
    rk_hop *hop;          /* per node */
    uint32_t *bound;      /* per node: the least code of the split attribute its rows hold (its rlo there) */
    unsigned height;      /* edges on the longest path from the root */
} rk_batch;

/* Rows below which a repartitioning scan is not worth a second thread. */
#define RK_PIPE_MIN_ROWS 65536

/* rothko.c */
void rk_moments_add_into(model_moments *into, const model_moments *mo);
void rk_first_sample_free(rk *r);

/* rothko_spill.c */
void rk_layout_free(rk_layout *l);
int rk_layout_wide(const rk *r, rk_layout *l, ak_error *err);
int rk_layout_fit(const rk *r, const uint32_t *lo, const uint32_t *hi, rk_layout *l, ak_error *err);
int rk_layout_copy(const rk *r, const rk_layout *from, rk_layout *l, ak_error *err);
void rk_layout_column(const rk_layout *l, uint32_t c, const uint8_t *raw, size_t n, uint32_t *col);
void rk_layout_rows(const rk_layout *l, uint32_t ncol, uint32_t extra, const uint32_t *codes, size_t stride,
                    const uint32_t *pick, size_t m, const uint8_t *raw, const rk_layout *src, uint8_t *out);
int rk_part_file_open(rk *r, spill_file *f, ak_error *err);
void rk_part_file_release(rk *r, spill_file *f);
void rk_part_pool_drain(rk *r);
int rk_reader_open(rk *r, rk_reader *rd, const rk_part *p, int with_payload, ak_error *err);
void rk_part_release(rk *r, rk_part *p);
void rk_root_column(const rk *r, uint32_t c, uint32_t *col, size_t n, uint64_t row, int rank);
int rk_ranked_later(const rk *r, const rk_part *p, uint32_t q);
void rk_reader_close(rk_reader *rd);
int rk_read_payload(const rk *r, rk_reader *rd, const uint8_t **pay, size_t *paylen, ak_error *err);
int rk_read_row(rk *r, rk_reader *rd, const rk_part *p, uint32_t *code, const uint8_t **pay, size_t *paylen,
                ak_error *err);

/* rothko_fgroup.c */
int rk_pairset_sort(pairset *s, ak_error *err);
void rk_av_finish(avset *s);
void rk_fgroup_free(rk *r, fgroup *g);
int rk_fgroup_new(rk *r, const rk_node *node, fgroup **out, ak_error *err);
size_t rk_av_bytes(const rk *r, const rk_node *x, uint32_t *nhashed);
void rk_fgroup_pair_bytes(const rk *r, const fgroup *g, size_t *per_set);
void rk_add_pairs(const pairset *s, uint32_t lo, uint32_t hi, ak_hist *h);
int rk_choose(rk *r, const rk_node *node, const uint32_t *lo, const uint32_t *hi, mdr_choice *out, uint64_t *rows_in,
              ak_error *err);
void rk_tree_free(rk *r, rk_tree *tr);
int rk_tree_add(rk *r, rk_tree *tr, const uint32_t *rlo, const uint32_t *rhi, const uint32_t *known_lo,
                const uint32_t *known_hi, uint64_t n, int median_only, ak_error *err);
int rk_make_children(rk *r, rk_tree *tr, size_t i, const mdr_choice *s, const uint32_t *lo, const uint32_t *hi,
                     const uint64_t *rows_in, ak_error *err);
void rk_fg_box(const rk *r, const rk_node *x, uint32_t *lo, uint32_t *hi);

/* rothko_t.c */
void rk_load_free(rk *r, rk_load *l);
int rk_load_alloc(const rk *r, rk_load *l, size_t cap, int copied, ak_error *err);
void rk_make_view(const rk *r, const rk_load *l, size_t n, table *view, table_qi *qi);
/* Hands a partition finished in memory (view v, its classes and copied
 * fields) to r->leaf_fn, a class that mixes missing and present values of a
 * numeric QI cut by pattern first; parts that cannot stand alone wait
 * (rothko_missing.c). */
int rk_leaf(rk *r, const table *v, const partition *classes, const char *copied, const size_t *off, ak_error *err);
/* At the end of the run: the rows that wait, one class per pattern of
 * missing QIs where it satisfies the model, the rest suppressed. */
int rk_leaf_waiting(rk *r, ak_error *err);
int rk_finish_in_memory(rk *r, rk_part *p, const uint32_t *rlo, const uint32_t *rhi, int median_only,
                        ak_error *err);
int rk_finish_big_class(rk *r, rk_part *part, const uint32_t *rlo, const uint32_t *rhi, const uint32_t *lo,
                        const uint32_t *hi, ak_error *err);
int rk_batch_init(const rk *r, rk_batch *b, ak_error *err);
void rk_batch_free(rk_batch *b);
void rk_batch_decode(const rk *r, const rk_part *p, rk_reader *rd, const uint8_t *raw, size_t n,
                     const uint8_t *need, rk_batch *b);
int rk_part_create(rk *r, rk_part *part, spill_writer *wt, spill_writer *wp, ak_error *err);
int rk_repartition(rk *r, rk_tree *tr, rk_part *p, ak_error *err);
int rk_process_partition(rk *r, rk_part *p, const uint32_t *rlo, const uint32_t *rhi, int median_only,
                         ak_error *err);

/* rothko_s.c */
int rk_process_sampled(rk *r, rk_part *p, const uint32_t *rlo, const uint32_t *rhi, int median_only,
                       ak_error *err);
int rk_check_whole(rk *r, uint64_t rows, ak_error *err);

#endif
