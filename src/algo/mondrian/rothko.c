/* rothko.c — Rothko-T, exact out-of-core Mondrian (000 §2, RainForest style).
 *
 * The first scan streams the CSV into a spill file of fixed-width tuples (QI
 * codes, sensitive code, class code; numeric codes still provisional) and a
 * companion file with the escaped copied columns of each row, which travel
 * with the tuples so that the output never needs the input again.
 *
 * A disk-resident partition larger than TM rows (what the in-memory Mondrian
 * can hold within the budget) is processed as in 000 §2.1: one scan builds the
 * frequency groups of the open nodes — per QI the AV set (value counts), with
 * the AVS set (value, sensitive value) for l-diversity and the AVC set (value,
 * class label) for InfoGain — and each node's split is chosen from them exactly
 * as the in-memory algorithm chooses it from the rows (mondrian.c: the same
 * order of dimensions, medians, sweeps, scores, tolerances and ties). While the
 * children's groups fit (F_CACHE) the tree grows breadth-first with one more
 * scan; then one scan repartitions the tuples across the leaves, and each
 * child partition is processed in turn, depth-first. A partition of at most TM
 * rows is loaded and finished by the in-memory Mondrian, started from its node's
 * region, so the classes, their boxes and regions are those of the in-memory
 * run. The finished partitions go to a callback in depth-first order, which is
 * how the recoding rules are written without holding the tree (000 §2.2).
 *
 * Rothko-S (000 §3, process_sampled) shares the spill files, the leaves and
 * the repartitioning: a partition larger than the sample is sampled in one
 * scan (reservoir sampling), a tree is grown on the sample by mondrian.c's
 * growth phase (splits through the hypothesis tests of sampletest.c), the
 * partition is repartitioned across its leaves while each node's population
 * statistics are counted, nodes with a violating child are merged (pruning),
 * and each resulting partition is processed in turn. Its tuples also carry
 * the numeric sensitive value and the regression target, which frequency
 * groups cannot summarize but samples can. */
#include "algo/mondrian/rothko.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/bottomk.h"
#include "common/clock.h"
#include "common/compare.h"
#include "common/hash.h"
#include "common/parallel.h"
#include "common/rng.h"
#include "common/stats.h"
#include "io/csv.h"
#include "io/spill.h"
#include "io/tuple.h"

/* ------------------------------------------------------------ sizes */

int rothko_parse_size(const char *text, size_t *out)
{
    char *end;
    double v = strtod(text, &end);
    if (end == text || !(v >= 0)) return -1;
    double unit = 1;
    if (*end == 'K' || *end == 'k') unit = 1024.0, end++;
    else if (*end == 'M' || *end == 'm') unit = 1024.0 * 1024, end++;
    else if (*end == 'G' || *end == 'g') unit = 1024.0 * 1024 * 1024, end++;
    if (*end == 'B' || *end == 'b') end++;
    if (*end) return -1;
    v *= unit;
    if (v < 1 || v > 1e18) return -1;
    *out = (size_t)v;
    return 0;
}

/* ------------------------------------------------------------ run state */

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

/* ------------------------------------------------------------ first scan */

static int copied_columns(rk *r, const table *t, ak_error *err)
{
    r->copied_col = malloc((t->ncolumns + 1) * sizeof *r->copied_col);
    if (!r->copied_col) return ak_err_nomem(err);
    for (uint32_t c = 0; c < t->ncolumns; c++) {
        if (t->roles[c] == ROLE_IDENTIFIER) continue;
        int qi = 0;
        for (uint32_t q = 0; q < t->nqi; q++) qi |= t->qi[q].column == c;
        if (!qi) r->copied_col[r->ncopied++] = c;
    }
    return ANONKIT_OK;
}

/* The root file's tuple: d codes, the sensitive and class codes, 4 bytes
 * each, then the numeric sensitive value (variance diversity) and the
 * regression target when the run needs them (Rothko-S). */
static void tuple_layout(rk *r, const table *t)
{
    r->d = t->nqi;
    r->has_sval = r->need_mom && t->sensitive_numeric;
    r->has_target = r->o->split == MDR_SPLIT_REGRESSION && t->target_column >= 0;
    r->extra = 8 * (uint32_t)(r->has_sval + r->has_target);
    r->width = 4 * (t->nqi + 2) + r->extra;
}

static void moments_add_into(model_moments *into, const model_moments *mo)
{
    into->n += mo->n;
    into->isum += mo->isum;
    into->isumsq += mo->isumsq;
    into->sum += mo->sum;
    into->sumsq += mo->sumsq;
}

static void piece_free(rk_piece *pc)
{
    spill_writer_free(&pc->tuples);
    spill_writer_free(&pc->payload);
    free(pc->rowbuf);
    strbuf_free(&pc->escaped);
    free(pc->sens_count);
    memset(pc, 0, sizeof *pc);
}

static void first_sample_free(rk *r)
{
    for (unsigned i = 0; i < 2; i++) bottomk_free(&r->first_sample[i]);
    r->first_sample_parts = 0;
}

static size_t bytes_per_row(const rk *r, double payload_per_row);
static int part_file_open(rk *r, spill_file *f, ak_error *err);

/* Rothko-S: sets up each of the first scan's pieces to keep the least
 * priorities of its rows, enough for the largest sample the budget can allow
 * (000 §3: the root's sample taken while the input is read). With two
 * pieces each keeps a little over half of that: the rows of the sample are
 * spread over the pieces about as their rows are, and should a piece's share
 * exceed what it kept, sample_first_scan says so and the root is sampled by
 * a scan after all. */
static int first_sample_start(rk *r, unsigned pieces, ak_error *err)
{
    first_sample_free(r);
    if (!r->o->sampling) return ANONKIT_OK;
    const size_t reserved = 8 * r->block; /* (as in rothko_run's TM, less the dictionaries it cannot know yet) */
    if (r->o->memory <= reserved) return ANONKIT_OK;
    uint64_t most = (r->o->memory - reserved) / bytes_per_row(r, 0);
    if (r->o->sample_rows && r->o->sample_rows < most) most = r->o->sample_rows;
    uint64_t m = pieces < 2 ? most : most / 2 + most / 20 + 4 * (uint64_t)sqrt((double)most) + 16;
    if (m > most) m = most;
    /* the stores (m + m/8 records each, keys included) take at most half the budget */
    const uint64_t fits = (r->o->memory - reserved) / 2 / pieces / bottomk_record_bytes(r->width) / 9 * 8;
    if (m > fits) m = fits;
    if (r->o->first_sample_rows && r->o->first_sample_rows < m) m = r->o->first_sample_rows;
    if (m < 1) return ANONKIT_OK;
    for (unsigned i = 0; i < pieces; i++) AK_CHECK(bottomk_init(&r->first_sample[i], r->width, (size_t)m, err));
    r->first_sample_parts = pieces;
    /* Expecting rows_estimate rows, the sample's priorities lie below about
     * most / rows_estimate of their range: the stores take only what lies
     * below twice that (a file much shorter than its estimate makes the root
     * sampled by a scan). */
    if (r->rows_estimate > 2 * most) {
        const uint64_t below = (uint64_t)ldexp((double)(2 * most) / (double)r->rows_estimate, 64);
        for (unsigned i = 0; i < pieces; i++) bottomk_admit_below(&r->first_sample[i], below);
    }
    return ANONKIT_OK;
}

/* (Re)starts the first scan in `pieces` pieces (table_spec.sink_start): the
 * first piece writes the root file, the second the tail files; whatever an
 * earlier start wrote is dropped. */
static int sink_start(void *ctx, const table *t, unsigned pieces, ak_error *err)
{
    rk *r = ctx;
    if (!r->copied_col) {
        tuple_layout(r, t);
        AK_CHECK(copied_columns(r, t, err));
    }
    for (unsigned i = 0; i < 2; i++) piece_free(&r->piece[i]);
    AK_CHECK(first_sample_start(r, pieces, err));
    if (pieces < 2) {
        spill_file_close(&r->tail_tuples);
        spill_file_close(&r->tail_payload);
    }
    for (unsigned i = 0; i < pieces; i++) {
        rk_piece *pc = &r->piece[i];
        pc->values_exact = 1;
        spill_file *tuples = i ? &r->tail_tuples : &r->root.tuples, *payload = i ? &r->tail_payload : &r->root.payload;
        if (tuples->fd < 0) AK_CHECK(part_file_open(r, tuples, err));
        if (payload->fd < 0) AK_CHECK(part_file_open(r, payload, err));
        tuples->size = payload->size = 0; /* rewritten from the start */
        AK_CHECK(spill_writer_init(&pc->tuples, tuples, &r->dir, r->block, &pc->tuple_io, err));
        AK_CHECK(spill_writer_init(&pc->payload, payload, &r->dir, r->block, &pc->payload_io, err));
        if (!(pc->rowbuf = malloc(r->width + 4 * (size_t)(r->ncopied + 1)))) return ak_err_nomem(err);
    }
    r->npieces = pieces;
    return ANONKIT_OK;
}

/* Writes one encoded row (slot of t's arrays) and its copied fields to its
 * piece's files; called by each piece's thread with its own piece. */
static int sink_row(void *ctx, const table *t, unsigned piece, size_t slot, const csv_record *rec, ak_error *err)
{
    rk *r = ctx;
    rk_piece *pc = &r->piece[piece];
    uint8_t *row = pc->rowbuf;
    for (uint32_t q = 0; q < r->d; q++) tuple_store_u32(row + 4 * q, t->qi[q].codes[slot]);
    tuple_store_u32(row + 4 * r->d, t->sensitive_column >= 0 ? t->sensitive_codes[slot] : 0);
    tuple_store_u32(row + 4 * r->d + 4, t->class_column >= 0 ? t->class_codes[slot] : 0);
    if (r->has_sval) {
        store_f64(row + 4 * (r->d + 2), t->sensitive_values[slot]);
        pc->values_exact &= model_value_is_small_integer(t->sensitive_values[slot]);
        model_moments_add(&pc->mom, t->sensitive_values[slot]);
    }
    if (r->m->l > 0 && t->sensitive_column >= 0) { /* codes come in order of first appearance */
        const uint32_t v = t->sensitive_codes[slot];
        if (v >= pc->sens_cap) {
            const size_t cap = pc->sens_cap ? 2 * pc->sens_cap : 64;
            uint32_t *grown = realloc(pc->sens_count, cap * sizeof *grown);
            if (!grown) return ak_err_nomem(err);
            memset(grown + pc->sens_cap, 0, (cap - pc->sens_cap) * sizeof *grown);
            pc->sens_count = grown;
            pc->sens_cap = cap;
        }
        pc->sens_count[v]++;
    }
    if (r->has_target) store_f64(row + 4 * (r->d + 2) + 8 * r->has_sval, t->target_values[slot]);
    AK_CHECK(spill_put(&pc->tuples, row, r->width, err));
    if (r->first_sample_parts) {
        const uint64_t pri = ak_priority(r->o->seed, rec->offset);
        if (bottomk_wants(&r->first_sample[piece], pri, pc->rows))
            AK_CHECK(bottomk_offer(&r->first_sample[piece], pri, pc->rows, row, err));
    }
    if (r->ncopied) {
        /* total bytes, then each field's length, then the fields */
        pc->escaped.len = 0;
        uint8_t *lens = pc->rowbuf + r->width;
        for (uint32_t j = 0; j < r->ncopied; j++) {
            const csv_field *f = &rec->fields[r->copied_col[j]];
            const size_t before = pc->escaped.len;
            if (strbuf_reserve(&pc->escaped, csv_escaped_max(f->len)) != 0) return ak_err_nomem(err);
            pc->escaped.len += csv_escape(pc->escaped.data + pc->escaped.len, f->data, f->len, t->delimiter);
            tuple_store_u32(lens + 4 + 4 * j, (uint32_t)(pc->escaped.len - before));
        }
        tuple_store_u32(lens, (uint32_t)pc->escaped.len);
        AK_CHECK(spill_write(&pc->payload, lens, 4 * (size_t)(r->ncopied + 1), err));
        AK_CHECK(spill_write(&pc->payload, pc->escaped.data, pc->escaped.len, err));
    }
    pc->rows++;
    return ANONKIT_OK;
}

/* Ends the first scan: flushes the pieces' files, makes the second piece's
 * the root's tail, and gathers the pieces' statistics under the table's
 * sensitive codes. */
static int sink_finish(rk *r, ak_error *err)
{
    const table *t = r->t;
    r->values_exact = 1;
    r->root.rows = 0;
    if (r->m->l > 0 && t->sensitive_column >= 0 && !(r->sens_count = calloc(t->sensitive_dict.count + 1, sizeof *r->sens_count)))
        return ak_err_nomem(err);
    for (unsigned i = 0; i < r->npieces; i++) {
        rk_piece *pc = &r->piece[i];
        AK_CHECK(spill_writer_flush(&pc->tuples, err));
        AK_CHECK(spill_writer_flush(&pc->payload, err));
        r->stats->first_scan_blocks_written += pc->tuple_io.blocks_written;
        r->root.rows += pc->rows;
        r->values_exact &= pc->values_exact;
        moments_add_into(&r->all_mom, &pc->mom);
        const uint32_t *map = i ? t->split.sensitive_map : NULL;
        for (size_t v = 0; r->sens_count && v < pc->sens_cap; v++)
            if (pc->sens_count[v]) r->sens_count[map ? map[v] : v] += pc->sens_count[v];
        piece_free(pc);
    }
    r->stats->first_scan_pieces = r->npieces;
    if (r->npieces == 2) {
        r->root.tail_tuples = &r->tail_tuples;
        r->root.tail_payload = &r->tail_payload;
    }
    return ANONKIT_OK;
}

/* ------------------------------------------------------------ tuple layouts */

/* Partitions written by repartitioning store each code in as few bytes as
 * the range its rows can hold needs (CONVENTIONS.md: narrow columns first),
 * so that they and every later scan of them take fewer blocks; the root file
 * keeps 4-byte codes, its numeric ones provisional until ranked. */

static void layout_free(rk_layout *l)
{
    free(l->base);
    memset(l, 0, sizeof *l);
}

static int layout_alloc(const rk *r, rk_layout *l, ak_error *err)
{
    const size_t ncol = (size_t)r->d + 2;
    layout_free(l);
    if (!(l->base = malloc(ncol * (2 * sizeof *l->base + sizeof *l->bytes)))) return ak_err_nomem(err);
    l->off = l->base + ncol;
    l->bytes = (uint8_t *)(l->off + ncol);
    return ANONKIT_OK;
}

/* Lays the columns out one after the other, then the doubles. */
static void layout_place(const rk *r, rk_layout *l)
{
    l->width = 0;
    for (uint32_t c = 0; c < r->d + 2; c++) {
        l->off[c] = l->width;
        l->width += l->bytes[c];
    }
    l->extra_at = l->width;
    l->width += r->extra;
}

/* The numeric sensitive value and the target of a stored tuple. */
static inline double tuple_sval(const rk_layout *l, const uint8_t *row) { return load_f64(row + l->extra_at); }
static inline double tuple_target(const rk *r, const rk_layout *l, const uint8_t *row)
{
    return load_f64(row + l->extra_at + 8 * r->has_sval);
}

/* The root file's layout: 4-byte codes. */
static int layout_wide(const rk *r, rk_layout *l, ak_error *err)
{
    AK_CHECK(layout_alloc(r, l, err));
    for (uint32_t c = 0; c < r->d + 2; c++) l->base[c] = 0, l->bytes[c] = 4;
    layout_place(r, l);
    return ANONKIT_OK;
}

/* Bytes that offsets 0..span need. */
static uint8_t span_bytes(uint32_t span)
{
    return span == 0 ? 0 : span < 1u << 8 ? 1 : span < 1u << 16 ? 2 : span < 1u << 24 ? 3 : 4;
}

/* The narrowest layout for rows whose QI codes lie in [lo[q], hi[q]]. */
static int layout_fit(const rk *r, const uint32_t *lo, const uint32_t *hi, rk_layout *l, ak_error *err)
{
    AK_CHECK(layout_alloc(r, l, err));
    for (uint32_t q = 0; q < r->d; q++) {
        l->base[q] = lo[q];
        l->bytes[q] = span_bytes(hi[q] - lo[q]);
    }
    const uint32_t sens = r->t->sensitive_dict.count, cls = r->t->class_dict.count;
    l->base[r->d] = l->base[r->d + 1] = 0;
    l->bytes[r->d] = span_bytes(sens ? sens - 1 : 0);
    l->bytes[r->d + 1] = span_bytes(cls ? cls - 1 : 0);
    layout_place(r, l);
    if (l->width == 0) { /* every column constant: keep one byte, so that a tuple still takes room */
        l->bytes[r->d + 1] = 1;
        layout_place(r, l);
    }
    return ANONKIT_OK;
}

/* l becomes a copy of from. */
static int layout_copy(const rk *r, const rk_layout *from, rk_layout *l, ak_error *err)
{
    AK_CHECK(layout_alloc(r, l, err));
    const size_t ncol = (size_t)r->d + 2;
    memcpy(l->base, from->base, ncol * sizeof *l->base);
    memcpy(l->bytes, from->bytes, ncol * sizeof *l->bytes);
    layout_place(r, l);
    return ANONKIT_OK;
}

/* Column c of n tuples stored at raw (in a spill buffer, which may be read
 * SPILL_READ_SLACK bytes past its tuples), decoded into col. */
static void layout_column(const rk_layout *l, uint32_t c, const uint8_t *raw, size_t n, uint32_t *col)
{
    const uint8_t *at = raw + l->off[c];
    const uint32_t base = l->base[c], w = l->width;
    switch (l->bytes[c]) {
    case 0:
        for (size_t i = 0; i < n; i++) col[i] = base;
        break;
    case 1:
        for (size_t i = 0; i < n; i++, at += w) col[i] = base + at[0];
        break;
    case 2:
        for (size_t i = 0; i < n; i++, at += w) col[i] = base + (at[0] | (uint32_t)at[1] << 8);
        break;
    case 3: /* a word load (spill buffers have slack after the last tuple) */
        for (size_t i = 0; i < n; i++, at += w) col[i] = base + (tuple_load_u32(at) & 0xffffff);
        break;
    default:
        for (size_t i = 0; i < n; i++, at += w) col[i] = base + tuple_load_u32(at);
        break;
    }
}

/* Stores m rows of a decoded batch (columns of codes `stride` apart), rows
 * pick[0..m) of it (NULL: rows 0..m), as m consecutive tuples of layout l at
 * out, their doubles copied from the same rows of the tuples at raw (layout
 * src). A column at a time, its width chosen once: storing a tuple's columns
 * one by one chose each's width per tuple, and those branches were most of a
 * repartitioning scan's writing. */
static void layout_rows(const rk_layout *l, uint32_t ncol, uint32_t extra, const uint32_t *codes, size_t stride,
                        const uint32_t *pick, size_t m, const uint8_t *raw, const rk_layout *src, uint8_t *out)
{
    const uint32_t w = l->width;
    for (uint32_t c = 0; c < ncol; c++) {
        const uint32_t *col = codes + (size_t)c * stride, base = l->base[c];
        uint8_t *at = out + l->off[c];
        switch (l->bytes[c]) {
        case 0:
            break;
        case 1:
            for (size_t j = 0; j < m; j++, at += w) at[0] = (uint8_t)(col[pick ? pick[j] : j] - base);
            break;
        case 2:
            for (size_t j = 0; j < m; j++, at += w) {
                const uint32_t x = col[pick ? pick[j] : j] - base;
                at[0] = (uint8_t)x, at[1] = (uint8_t)(x >> 8);
            }
            break;
        case 3:
            for (size_t j = 0; j < m; j++, at += w) {
                const uint32_t x = col[pick ? pick[j] : j] - base;
                at[0] = (uint8_t)x, at[1] = (uint8_t)(x >> 8), at[2] = (uint8_t)(x >> 16);
            }
            break;
        default:
            for (size_t j = 0; j < m; j++, at += w) tuple_store_u32(at, col[pick ? pick[j] : j] - base);
            break;
        }
    }
    for (size_t j = 0; extra && j < m; j++)
        memcpy(out + j * w + l->extra_at, raw + (size_t)(pick ? pick[j] : j) * src->width + src->extra_at, extra);
}

/* ------------------------------------------------------------ partition files */

/* Writing into a new file costs the kernel fresh page-cache pages (on this
 * kind of machine over twice the cost of overwriting cached ones), and
 * repartitioning writes a file per leaf at every level. Creating a file is
 * not free either: ext4 looks for a free inode past the recently deleted
 * ones, so that with thousands of partitions (Rothko-S with small samples)
 * each new file took 0.3 to 0.75 ms of system time. So files a partition is
 * done with are kept until the run ends and handed out again, overwritten
 * from the start (what lies past `size` is never read; the files stay
 * unnamed and private). */
enum { RK_POOL_MAX = 256 };

static int part_file_open(rk *r, spill_file *f, ak_error *err)
{
    if (r->npool) {
        *f = r->pool[--r->npool];
        f->size = 0;
        return ANONKIT_OK;
    }
    r->stats->spill_files_created++;
    return spill_file_open(f, &r->dir, err);
}

/* Closes f, or keeps it for part_file_open. */
static void part_file_release(rk *r, spill_file *f)
{
    if (f->fd < 0) return;
    if (r->npool == r->pool_cap && r->pool_cap < RK_POOL_MAX) {
        const size_t cap = r->pool_cap ? 2 * r->pool_cap : 8;
        spill_file *p = realloc(r->pool, cap * sizeof *p);
        if (p) r->pool = p, r->pool_cap = cap;
    }
    if (r->npool < r->pool_cap) {
        r->pool[r->npool++] = *f;
        f->fd = -1;
        f->size = 0;
        return;
    }
    spill_file_close(f);
}

/* Closes the kept files. */
static void part_pool_drain(rk *r)
{
    while (r->npool) spill_file_close(&r->pool[--r->npool]);
    free(r->pool);
    r->pool = NULL;
    r->pool_cap = 0;
}

/* ------------------------------------------------------------ reading a partition */

typedef struct rk_reader {
    spill_reader tuples, payload;
    const uint8_t *raw; /* read_row: the last tuple as stored */
    int with_payload;
    const rk_layout *lay; /* the partition's, or own */
    rk_layout own;        /* the root file's */
    uint64_t row;         /* tuples handed out so far */
} rk_reader;

static int reader_open(rk *r, rk_reader *rd, const rk_part *p, int with_payload, ak_error *err)
{
    memset(rd, 0, sizeof *rd);
    rd->with_payload = with_payload && r->ncopied;
    rd->lay = p->layout;
    if (!rd->lay) {
        AK_CHECK(layout_wide(r, &rd->own, err));
        rd->lay = &rd->own;
    }
    AK_CHECK(spill_reader_init(&rd->tuples, &p->tuples, r->block, &r->tuple_io, err));
    if (p->tail_tuples) spill_reader_then(&rd->tuples, p->tail_tuples);
    if (rd->with_payload) {
        AK_CHECK(spill_reader_init(&rd->payload, &p->payload, r->block, &r->payload_io, err));
        if (p->tail_payload) spill_reader_then(&rd->payload, p->tail_payload);
    }
    return ANONKIT_OK;
}

/* Releases (part_file_release) every file of p. */
static void part_release(rk *r, rk_part *p)
{
    part_file_release(r, &p->tuples);
    part_file_release(r, &p->payload);
    if (p->tail_tuples) part_file_release(r, p->tail_tuples);
    if (p->tail_payload) part_file_release(r, p->tail_payload);
    p->tail_tuples = p->tail_payload = NULL;
}

/* Column c of n tuples of the root file, the first of them its tuple `row`,
 * from codes as the first scan wrote them to the table's: the second piece's
 * (t->split) mapped, then numeric QIs ranked unless `rank` is 0. */
static void root_column(const rk *r, uint32_t c, uint32_t *col, size_t n, uint64_t row, int rank)
{
    const table *t = r->t;
    const uint64_t second = t->split.first_row;
    if (second && row + n > second) {
        const size_t from = row >= second ? 0 : (size_t)(second - row);
        if (c < r->d) {
            if (t->qi[c].kind == ATTR_NUMERIC && t->split.numeric_ids[c])
                for (size_t i = from; i < n; i++) col[i] = table_second_numeric(t, c, col[i]);
        } else {
            const uint32_t *map = c == r->d ? t->split.sensitive_map : t->split.class_map;
            const int present = c == r->d ? t->sensitive_column >= 0 : t->class_column >= 0;
            for (size_t i = from; present && i < n; i++) col[i] = map[col[i]];
        }
    }
    if (rank && c < r->d && t->qi[c].kind == ATTR_NUMERIC) table_numeric_ranks(t, c, col, n);
}

/* Whether p's codes of QI q are integer codes in value order (a value plus
 * a bias; the root file's numeric QIs without general-mode ids), which may
 * be gathered as they are and ranked afterwards, in bulk or just their
 * extremes: ranking is a lookup in a table as wide as the values' range. */
static int ranked_later(const rk *r, const rk_part *p, uint32_t q)
{
    return p->provisional && r->t->qi[q].kind == ATTR_NUMERIC && !r->t->qi[q].prov.has_ids;
}

static void reader_close(rk_reader *rd)
{
    spill_reader_free(&rd->tuples);
    spill_reader_free(&rd->payload);
    layout_free(&rd->own);
}

/* The next row's payload record: its fields' lengths, then the fields
 * (without the total that leads it in the file). 1, or < 0. */
static int read_payload(const rk *r, rk_reader *rd, const uint8_t **pay, size_t *paylen, ak_error *err)
{
    const uint8_t *head;
    int got = spill_read(&rd->payload, 4, &head, err);
    if (got <= 0) return got < 0 ? got : ak_err_set(err, ANONKIT_E_INTERNAL, NULL, 0, 0, "a payload file ends early");
    const size_t total = 4 * (size_t)r->ncopied + tuple_load_u32(head);
    got = spill_read(&rd->payload, total, pay, err);
    if (got <= 0) return got < 0 ? got : ak_err_set(err, ANONKIT_E_INTERNAL, NULL, 0, 0, "a payload file ends early");
    *paylen = total;
    return 1;
}

/* The next row: codes (final) into code[0..d+2), and with_payload its payload
 * record (lengths then fields) into pay and paylen. 1, 0 at the end, or < 0. */
static int read_row(rk *r, rk_reader *rd, const rk_part *p, uint32_t *code, const uint8_t **pay, size_t *paylen,
                    ak_error *err)
{
    const uint8_t *row;
    int got = spill_read(&rd->tuples, rd->lay->width, &row, err);
    if (got <= 0) return got;
    rd->raw = row;
    for (uint32_t c = 0; c < r->d + 2; c++) {
        layout_column(rd->lay, c, row, 1, code + c);
        if (p->provisional) root_column(r, c, code + c, 1, rd->row, 1);
    }
    rd->row++;
    if (rd->with_payload) AK_CHECK(read_payload(r, rd, pay, paylen, err));
    return 1;
}

/* ------------------------------------------------------------ frequency groups */

/* (code, sub-value) -> count: the AVS set (sub-value: sensitive code) or AVC
 * set (class code) of one QI in one node (000 §2). Dense, a count per code of
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

/* Whether the pair set of a QI over `range` codes and nsub sub-values is
 * dense for a node of n rows, with fg_budget bytes for frequency groups
 * (dense counts are known in advance and take at most a quarter of it). */
static int pairs_dense(uint64_t range, uint32_t nsub, uint64_t n, size_t fg_budget)
{
    return range * nsub <= 10 * n && range * nsub * 4 <= fg_budget / 4;
}

static int pairset_init(pairset *s, uint32_t base, uint32_t range, uint32_t nsub, uint64_t n, size_t fg_budget,
                        ak_error *err)
{
    memset(s, 0, sizeof *s);
    s->base = base;
    s->range = range;
    s->nsub = nsub ? nsub : 1;
    if (pairs_dense(range, s->nsub, n, fg_budget)) {
        if (!(s->dense = calloc((size_t)range * s->nsub, sizeof *s->dense))) return ak_err_nomem(err);
        return ANONKIT_OK;
    }
    if (u64map_init(&s->ids, 256) != 0) return ak_err_nomem(err);
    return ANONKIT_OK;
}

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

static void pairset_free(pairset *s)
{
    if (s->ids.keys) u64map_free(&s->ids);
    free(s->dense);
    free(s->count);
    free(s->sorted);
    memset(s, 0, sizeof *s);
}

/* Bytes the set takes: dense exactly, hashed about 40 a pair. */
static size_t pairset_bytes(const pairset *s)
{
    if (s->dense) return (size_t)s->range * s->nsub * sizeof *s->dense;
    return (s->sorted ? s->npairs : s->ids.count) * (size_t)40;
}

/* After the scan, once: a hashed set's keys sorted with their counts (LSD
 * radix sort, a byte a pass, passes over constant bytes skipped). The hash
 * table is freed first: the sort's buffers take its place. */
static int pairset_sort(pairset *s, ak_error *err)
{
    if (s->dense || s->sorted) return ANONKIT_OK;
    const size_t n = s->ids.count;
    uint64_t *key = s->ids.id_keys, *cnt = s->count; /* per id */
    s->ids.id_keys = NULL;
    u64map_free(&s->ids);
    s->count = NULL;
    uint64_t *key2 = malloc((n ? n : 1) * sizeof *key2), *cnt2 = malloc((n ? n : 1) * sizeof *cnt2);
    if (!key2 || !cnt2) {
        free(key), free(key2), free(cnt), free(cnt2);
        return ak_err_nomem(err);
    }
    for (unsigned shift = 0; shift < 64; shift += 8) {
        size_t bucket[256] = {0};
        for (size_t i = 0; i < n; i++) bucket[key[i] >> shift & 255]++;
        if (!n || bucket[key[0] >> shift & 255] == n) continue;
        size_t at = 0;
        for (unsigned b = 0; b < 256; b++) {
            const size_t c = bucket[b];
            bucket[b] = at;
            at += c;
        }
        for (size_t i = 0; i < n; i++) {
            const size_t to = bucket[key[i] >> shift & 255]++;
            key2[to] = key[i];
            cnt2[to] = cnt[i];
        }
        uint64_t *t = key;
        key = key2, key2 = t;
        t = cnt, cnt = cnt2, cnt2 = t;
    }
    free(key2);
    free(cnt2);
    s->sorted = key;
    s->count = cnt;
    s->cap = s->npairs = n;
    return ANONKIT_OK;
}

/* The AV set of one QI in one node (000 §2: SELECT A, COUNT(*) GROUP BY A),
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

/* Bytes an AV set over `range` codes takes for a node of n rows, and whether
 * it is counted sparsely: when the dense counts would take more than twice
 * the gathered codes and their sort buffer. */
static size_t av_set_bytes(uint64_t range, uint64_t n, int *sparse /* OUT, may be NULL */)
{
    const int sp = range > 4 * n;
    if (sparse) *sparse = sp;
    return (size_t)(sp ? 8 * n : 4 * range);
}

static int av_init(avset *s, uint32_t base, uint32_t hi, uint64_t n, ak_error *err)
{
    memset(s, 0, sizeof *s);
    s->base = base;
    s->range = hi - base + 1;
    av_set_bytes(s->range, n, &s->sparse);
    if (!s->sparse) {
        if (!(s->count = calloc(s->range, sizeof *s->count))) return ak_err_nomem(err);
        return ANONKIT_OK;
    }
    s->cap = (size_t)n;
    s->codes = malloc((s->cap ? s->cap : 1) * sizeof *s->codes);
    s->count = malloc((s->cap ? s->cap : 1) * sizeof *s->count);
    if (!s->codes || !s->count) return ak_err_nomem(err);
    return ANONKIT_OK;
}

static void av_free(avset *s)
{
    free(s->count);
    free(s->codes);
    memset(s, 0, sizeof *s);
}

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

/* After the scan: a sparse set's codes sorted (LSD radix sort on the offset
 * from base, one byte a pass, passes over constant bytes skipped) and
 * run-length counted into codes[0..ncodes) and count[0..ncodes). */
static void av_finish(avset *s)
{
    if (!s->sparse) return;
    uint32_t *src = s->codes, *dst = s->count;
    const size_t n = s->ncodes;
    for (unsigned shift = 0; shift < 32 && (s->range - 1) >> shift; shift += 8) {
        size_t bucket[256] = {0};
        for (size_t i = 0; i < n; i++) bucket[(src[i] - s->base) >> shift & 255]++;
        if (n && bucket[(src[0] - s->base) >> shift & 255] == n) continue; /* one digit: already in order */
        size_t at = 0;
        for (unsigned b = 0; b < 256; b++) {
            const size_t c = bucket[b];
            bucket[b] = at;
            at += c;
        }
        for (size_t i = 0; i < n; i++) dst[bucket[(src[i] - s->base) >> shift & 255]++] = src[i];
        uint32_t *t = src;
        src = dst;
        dst = t;
    }
    /* src holds the sorted codes; run-length count them into codes and count */
    size_t m = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        while (j < n && src[j] == src[i]) j++;
        s->codes[m] = src[i];
        s->count[m] = (uint32_t)(j - i); /* writes at m <= i: never ahead of what is still read */
        m++;
        i = j;
    }
    s->ncodes = m;
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

/* Rows with codes in [lo, hi]. */
static uint64_t av_sum(const avset *s, uint32_t lo, uint32_t hi)
{
    uint64_t sum = 0, cnt;
    if (!s->sparse) {
        const uint64_t top = (uint64_t)s->base + s->range - 1;
        const uint64_t a = lo > s->base ? lo : s->base, b = hi < top ? hi : top;
        for (uint64_t c = a; c <= b; c++) sum += s->count[c - s->base];
        return sum;
    }
    for (uint32_t c = av_next(s, lo, &cnt); c <= hi && c != UINT32_MAX;) {
        sum += cnt;
        c = c < hi ? av_next(s, c + 1, &cnt) : UINT32_MAX;
    }
    return sum;
}

/* The frequency group of one node (000 §2: AV group, with the AVS group for
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
    /* Rothko-S: population statistics gathered while repartitioning (000 §3, pruning) */
    int track;
    uint32_t *shist;       /* count per sensitive code (l-diversity) */
    model_moments mom;     /* numeric sensitive values (variance diversity) */
} rk_node;

typedef struct rk_tree {
    rk_node *nodes;
    size_t count, cap;
} rk_tree;

static void fgroup_free(rk *r, fgroup *g)
{
    if (!g) return;
    for (uint32_t q = 0; q < r->d; q++) {
        if (g->av) av_free(&g->av[q]);
        if (g->avs) pairset_free(&g->avs[q]);
        if (g->avc) pairset_free(&g->avc[q]);
    }
    free(g->lo);
    free(g->av);
    free(g->avs);
    free(g->avc);
    free(g);
}

/* QIs whose sets counting a node pays off more than cheaply: wider than this. */
#define RK_NARROW_RANGE 256u
/* QIs counted in a node's first scan under Median, in the order it will try them. */
#define RK_PREDICTED 2u

/* Which QIs a node's scan counts (mask[q]). InfoGain scores every QI, so all.
 * Median tries QIs by decreasing normalized range and takes the first
 * allowable split, which for a partition larger than memory is nearly always
 * the first; so its first scan counts the RK_PREDICTED QIs first in that
 * order over the codes the node can hold (its box is within), and the QIs too
 * narrow to matter. Every node still gets its exact box (least and greatest
 * codes), so the order choose_median uses is the in-memory one; should it
 * reach a QI that was not counted, the node is counted again in full in the
 * next scan (count_all). The split is the in-memory one either way; most
 * scans just skip the wide QIs' counts, which cost a cache miss a row each. */
static void count_mask(const rk *r, const rk_node *x, uint8_t *mask)
{
    const uint32_t d = r->d;
    const int all = x->count_all || (r->infogain && !x->median_only);
    uint32_t order[d ? d : 1];
    for (uint32_t q = 0; q < d; q++) mask[q] = all || (uint64_t)x->chi[q] - x->clo[q] < RK_NARROW_RANGE;
    const uint32_t ncand = table_widest_first(r->t, x->clo, x->chi, order);
    for (uint32_t i = 0; i < ncand && i < RK_PREDICTED; i++) mask[order[i]] = 1;
}

static int fgroup_new(rk *r, const rk_node *node, fgroup **out, ak_error *err)
{
    fgroup *g = calloc(1, sizeof *g);
    if (!g) return ak_err_nomem(err);
    *out = g;
    if (!(g->lo = malloc(r->d * (2 * sizeof *g->lo + sizeof *g->counted)))) return ak_err_nomem(err);
    g->hi = g->lo + r->d;
    g->counted = (uint8_t *)(g->hi + r->d);
    count_mask(r, node, g->counted);
    if (!(g->av = calloc(r->d, sizeof *g->av))) return ak_err_nomem(err);
    for (uint32_t q = 0; q < r->d; q++) {
        g->lo[q] = UINT32_MAX;
        g->hi[q] = 0;
        if (!g->counted[q]) continue;
        AK_CHECK(av_init(&g->av[q], node->clo[q], node->chi[q], node->n, err));
        r->stats->sparse_sets += g->av[q].sparse;
    }
    const uint64_t n = node->n;
    const size_t budget = r->fg_budget;
    if (r->need_hist) {
        if (!(g->avs = calloc(r->d, sizeof *g->avs))) return ak_err_nomem(err);
        for (uint32_t q = 0; q < r->d; q++)
            if (g->counted[q])
                AK_CHECK(pairset_init(&g->avs[q], node->clo[q], g->av[q].range, r->sdomain, n, budget, err));
    }
    if (r->infogain) {
        if (!(g->avc = calloc(r->d, sizeof *g->avc))) return ak_err_nomem(err);
        for (uint32_t q = 0; q < r->d; q++)
            if (g->counted[q])
                AK_CHECK(pairset_init(&g->avc[q], node->clo[q], g->av[q].range, r->cdomain, n, budget, err));
    }
    return ANONKIT_OK;
}

/* Bytes of the AV sets and dense pair sets a node's scan counts; *nhashed
 * (may be NULL) receives how many hashed pair sets it adds, whose size is
 * known only after a scan. */
static size_t av_bytes(const rk *r, const rk_node *x, uint32_t *nhashed)
{
    uint8_t mask[r->d];
    count_mask(r, x, mask);
    size_t bytes = 0;
    uint32_t hashed = 0;
    for (uint32_t q = 0; q < r->d; q++) {
        if (!mask[q]) continue;
        const uint64_t range = (uint64_t)x->chi[q] - x->clo[q] + 1;
        bytes += av_set_bytes(range, x->n, NULL);
        for (int kind = 0; kind < 2; kind++) { /* AVS, AVC */
            const uint32_t domain = kind ? r->cdomain : r->sdomain, nsub = domain ? domain : 1;
            if (!(kind ? r->infogain : r->need_hist)) continue;
            if (pairs_dense(range, nsub, x->n, r->fg_budget)) bytes += (size_t)(range * nsub * 4);
            else hashed++;
        }
    }
    if (nhashed) *nhashed = hashed;
    return bytes;
}

/* The most memory one hashed pair set of a group took (about 40 bytes a
 * pair), folded into *per_set. */
static void fgroup_pair_bytes(const rk *r, const fgroup *g, size_t *per_set)
{
    for (uint32_t q = 0; q < r->d; q++) {
        if (g->avs && !g->avs[q].dense && pairset_bytes(&g->avs[q]) > *per_set) *per_set = pairset_bytes(&g->avs[q]);
        if (g->avc && !g->avc[q].dense && pairset_bytes(&g->avc[q]) > *per_set) *per_set = pairset_bytes(&g->avc[q]);
    }
}

/* ------------------------------------------------------------ choosing a split (mirrors mondrian.c) */

static inline void hist_add_n(ak_hist *h, uint32_t code, uint64_t n)
{
    if (!n) return;
    if (h->count[code] == 0) h->touched[h->ntouched++] = code;
    h->count[code] += (uint32_t)n;
    h->total += n;
}

/* Adds the sub-value counts of the pairs of codes [lo, hi] to h, in
 * ascending (code, sub-value) order (after pairset_sort). */
static void add_pairs(const pairset *s, uint32_t lo, uint32_t hi, ak_hist *h)
{
    if (s->dense) {
        const uint64_t top = (uint64_t)s->base + s->range - 1;
        const uint64_t a = lo > s->base ? lo : s->base, b = hi < top ? hi : top;
        for (uint64_t c = a; c <= b; c++) {
            const uint32_t *row = s->dense + (size_t)(c - s->base) * s->nsub;
            for (uint32_t sub = 0; sub < s->nsub; sub++) hist_add_n(h, sub, row[sub]);
        }
        return;
    }
    const size_t n = s->npairs;
    size_t a = 0, b = n;
    const uint64_t key = (uint64_t)lo << 32;
    while (a < b) { /* first key >= lo << 32 */
        size_t mid = (a + b) / 2;
        if (s->sorted[mid] < key) a = mid + 1;
        else b = mid;
    }
    for (; a < n && (uint32_t)(s->sorted[a] >> 32) <= hi; a++) hist_add_n(h, (uint32_t)s->sorted[a], s->count[a]);
}

static int side_holds(rk *r, uint64_t count, const ak_hist *h)
{
    if (count < r->m->k) return 0;
    if (!r->need_hist) return 1;
    return model_holds(r->m, count, r->counts, ak_hist_counts(h, r->counts), r->counts_scratch);
}

/* split_allowable of mondrian.c over histograms: r->whole is the node's. */
static int allowable(rk *r, uint64_t n, uint64_t left_count, const ak_hist *left)
{
    const uint64_t k = r->m->k;
    if (left_count < k || n - left_count < k || left_count == 0 || left_count == n) return 0;
    if (!r->need_hist) return 1;
    if (!model_holds(r->m, left_count, r->counts, ak_hist_counts(left, r->counts), r->counts_scratch)) return 0;
    return model_holds(r->m, n - left_count, r->counts, ak_hist_counts_minus(&r->whole, left, r->counts),
                       r->counts_scratch);
}

/* A chosen split. */
typedef struct rk_split {
    int found;
    uint32_t q;
    uint32_t cut;       /* numeric: lhs = code < cut */
    uint32_t node;      /* categorical: the hierarchy node specialized */
    int median_only;    /* children continue under Median */
    double score;
} rk_split;

/* Child rows per child of hierarchy node u (rows_in[c]); 0 when a non-empty child has fewer than k. */
static int child_rows(rk *r, const fgroup *g, const rk_node *node, uint32_t q, const hier_node *u, uint64_t *rows_in)
{
    const hier *h = r->t->qi[q].h;
    const uint32_t *children = hier_children(h) + u->first_child;
    int ok = 1;
    for (uint32_t c = 0; c < u->nchildren; c++) {
        const hier_node *ch = hier_node_at(h, children[c]);
        uint32_t lo = ch->lo > node->rlo[q] ? ch->lo : node->rlo[q];
        uint32_t hi = ch->hi < node->rhi[q] ? ch->hi : node->rhi[q];
        rows_in[c] = lo <= hi ? av_sum(&g->av[q], lo, hi) : 0;
        if (rows_in[c] && rows_in[c] < r->m->k) ok = 0;
    }
    return ok;
}

/* Whether every non-empty child's sensitive values satisfy the model. */
static int children_hold(rk *r, const fgroup *g, uint32_t q, const hier_node *u, const uint64_t *rows_in)
{
    if (!r->need_hist) return 1;
    const hier *h = r->t->qi[q].h;
    const uint32_t *children = hier_children(h) + u->first_child;
    for (uint32_t c = 0; c < u->nchildren; c++) {
        if (!rows_in[c]) continue;
        const hier_node *ch = hier_node_at(h, children[c]);
        ak_hist_clear(&r->child);
        add_pairs(&g->avs[q], ch->lo, ch->hi, &r->child);
        if (!side_holds(r, rows_in[c], &r->child)) return 0;
    }
    return 1;
}

/* Median: dimensions by decreasing normalized range, the first allowable
 * split. 1 with *out, 0 when there is none, 2 when it needs the counts of a
 * QI the node's scan skipped (count_mask), < 0 on error. */
static int choose_median(rk *r, const fgroup *g, const rk_node *node, const uint32_t *lo, const uint32_t *hi,
                         rk_split *out, uint64_t *rows_in, ak_error *err)
{
    const uint32_t d = r->d;
    uint32_t order[d ? d : 1];
    const uint32_t ncand = table_widest_first(r->t, lo, hi, order);
    const uint64_t n = g->n;
    for (uint32_t i = 0; i < ncand; i++) {
        const uint32_t q = order[i];
        if (!g->counted[q]) return 2; /* count the node in full and choose again */
        if (r->need_hist) AK_CHECK(pairset_sort(&g->avs[q], err));
        if (r->t->qi[q].kind == ATTR_NUMERIC) {
            const avset *av = &g->av[q];
            const uint64_t nth = (n - 1) / 2;
            uint64_t below = 0, equal;
            uint32_t v = av_next(av, lo[q], &equal); /* the code holding the median row */
            while (below + equal <= nth) {
                below += equal;
                v = av_next(av, v + 1, &equal);
            }
            ak_hist_clear(&r->left);
            if (r->need_hist) add_pairs(&g->avs[q], lo[q], v, &r->left);
            uint32_t cut = 0;
            if (allowable(r, n, below + equal, &r->left)) {
                cut = v + 1;
            } else {
                ak_hist_clear(&r->left);
                if (r->need_hist && v > lo[q]) add_pairs(&g->avs[q], lo[q], v - 1, &r->left);
                if (allowable(r, n, below, &r->left)) {
                    cut = v;
                } else if (r->need_hist) {
                    /* sweep every threshold: the allowable one nearest the median */
                    ak_hist_clear(&r->left);
                    uint64_t left = 0, best_distance = UINT64_MAX, cnt, next_cnt;
                    for (uint32_t c = av_next(av, lo[q], &cnt), next; c < hi[q]; c = next, cnt = next_cnt) {
                        add_pairs(&g->avs[q], c, c, &r->left);
                        left += cnt;
                        next = av_next(av, c + 1, &next_cnt);
                        const uint64_t distance = 2 * left > n ? 2 * left - n : n - 2 * left;
                        if (distance < best_distance && allowable(r, n, left, &r->left)) {
                            best_distance = distance;
                            cut = next;
                        }
                    }
                }
            }
            if (!cut) continue;
            *out = (rk_split){.found = 1, .q = q, .cut = cut, .median_only = node->median_only};
            return 1;
        }
        const hier *h = r->t->qi[q].h;
        const hier_node *u = hier_node_at(h, hier_lca(h, lo[q], hi[q]));
        if (!child_rows(r, g, node, q, u, rows_in)) continue;
        if (!children_hold(r, g, q, u, rows_in)) continue;
        *out = (rk_split){.found = 1, .q = q, .node = hier_lca(h, lo[q], hi[q]), .median_only = node->median_only};
        return 1;
    }
    return 0;
}



/* InfoGain: the allowable split of largest gain (ties to the lowest attribute
 * and threshold); below min_gain the node and its subtree go on under Median. */
static int choose_infogain(rk *r, const fgroup *g, const rk_node *node, const uint32_t *lo, const uint32_t *hi,
                           rk_split *out, uint64_t *rows_in, ak_error *err)
{
    const uint64_t n = g->n, k = r->m->k;
    for (uint32_t q = 0; q < r->d; q++) {
        AK_CHECK(pairset_sort(&g->avc[q], err));
        if (r->need_hist) AK_CHECK(pairset_sort(&g->avs[q], err));
    }
    ak_hist_clear(&r->cls_whole);
    add_pairs(&g->avc[0], lo[0], hi[0], &r->cls_whole);
    const double xlogx = ak_hist_xlogx(&r->cls_whole);
    const double weighted_entropy = ak_xlog2x((double)n) - xlogx, tolerance = 1e-12;
    rk_split best = {0};
    for (uint32_t q = 0; q < r->d; q++) {
        if (lo[q] == hi[q]) continue;
        if (r->t->qi[q].kind == ATTR_NUMERIC) {
            ak_hist_clear(&r->left);
            ak_hist_clear(&r->cls_left);
            double left_xlogx = 0, right_xlogx = xlogx;
            uint64_t i = 0, cnt;
            const avset *av = &g->av[q];
            for (uint32_t code = av_next(av, lo[q], &cnt); code <= hi[q]; code = av_next(av, code + 1, &cnt)) {
                if (r->need_hist) add_pairs(&g->avs[q], code, code, &r->left);
                ak_hist_clear(&r->cls_group);
                add_pairs(&g->avc[q], code, code, &r->cls_group);
                i += cnt;
                ak_hist_sort_touched(&r->cls_group);
                for (size_t x = 0; x < r->cls_group.ntouched; x++) {
                    const uint32_t c = r->cls_group.touched[x];
                    const double moved = r->cls_group.count[c], had = r->cls_left.count[c];
                    const double all = r->cls_whole.count[c];
                    left_xlogx += ak_xlog2x(had + moved) - ak_xlog2x(had);
                    right_xlogx += ak_xlog2x(all - had - moved) - ak_xlog2x(all - had);
                    hist_add_n(&r->cls_left, c, r->cls_group.count[c]);
                }
                if (i == n) break;
                const uint64_t nl = i, nr = n - i;
                if (nl < k || nr < k) continue;
                const double children = ak_xlog2x((double)nl) - left_xlogx + ak_xlog2x((double)nr) - right_xlogx;
                const double score = (weighted_entropy - children) / (double)n;
                if ((!best.found || score > best.score + tolerance) && allowable(r, n, nl, &r->left)) {
                    uint64_t next_cnt;
                    const uint32_t next = av_next(av, code + 1, &next_cnt);
                    best = (rk_split){.found = 1, .q = q, .cut = next, .score = score};
                }
            }
            continue;
        }
        const hier *h = r->t->qi[q].h;
        const hier_node *u = hier_node_at(h, hier_lca(h, lo[q], hi[q]));
        if (!child_rows(r, g, node, q, u, rows_in)) continue;
        const uint32_t *kids = hier_children(h) + u->first_child;
        double children = 0;
        for (uint32_t c = 0; c < u->nchildren; c++) {
            if (!rows_in[c]) continue;
            const hier_node *ch = hier_node_at(h, kids[c]);
            ak_hist_clear(&r->cls_group);
            add_pairs(&g->avc[q], ch->lo, ch->hi, &r->cls_group);
            children += ak_xlog2x((double)rows_in[c]) - ak_hist_xlogx(&r->cls_group);
        }
        const double score = (weighted_entropy - children) / (double)n;
        if (best.found && !(score > best.score + tolerance)) continue;
        if (!children_hold(r, g, q, u, rows_in)) continue;
        best = (rk_split){.found = 1, .q = q, .node = hier_lca(h, lo[q], hi[q]), .score = score};
    }
    if (!best.found) return 0;
    if (best.score < r->o->min_gain) {
        rk_node as_median = *node;
        as_median.median_only = 1;
        return choose_median(r, g, &as_median, lo, hi, out, rows_in, err);
    }
    *out = best;
    if (r->t->qi[best.q].kind == ATTR_CATEGORICAL) {
        const hier *h = r->t->qi[best.q].h;
        child_rows(r, g, node, best.q, hier_node_at(h, best.node), rows_in);
    }
    return 1;
}

/* ------------------------------------------------------------ the tree over one partition */

static void tree_free(rk *r, rk_tree *tr)
{
    for (size_t i = 0; i < tr->count; i++) {
        rk_node *x = &tr->nodes[i];
        free(x->rlo);
        fgroup_free(r, x->fg);
        part_release(r, &x->part);
        spill_writer_free(&x->wt);
        spill_writer_free(&x->wp);
        layout_free(&x->lay);
        free(x->shist);
    }
    free(tr->nodes);
    memset(tr, 0, sizeof *tr);
}

/* Appends an open node of region [rlo, rhi] and n rows; known_lo/known_hi
 * (NULL: none) bound its rows' codes, narrowing what its AV sets count. */
static int tree_add(rk *r, rk_tree *tr, const uint32_t *rlo, const uint32_t *rhi, const uint32_t *known_lo,
                    const uint32_t *known_hi, uint64_t n, int median_only, ak_error *err)
{
    if (tr->count == tr->cap) {
        size_t cap = tr->cap ? 2 * tr->cap : 16;
        rk_node *p = realloc(tr->nodes, cap * sizeof *p);
        if (!p) return ak_err_nomem(err);
        tr->nodes = p;
        tr->cap = cap;
    }
    rk_node *x = &tr->nodes[tr->count];
    memset(x, 0, sizeof *x);
    x->part.tuples.fd = x->part.payload.fd = -1;
    x->kind = RK_OPEN;
    x->n = n;
    x->median_only = median_only;
    if (!(x->rlo = malloc(6 * (size_t)r->d * sizeof *x->rlo))) return ak_err_nomem(err);
    x->rhi = x->rlo + r->d;
    x->blo = x->rhi + r->d;
    x->bhi = x->blo + r->d;
    x->clo = x->bhi + r->d;
    x->chi = x->clo + r->d;
    memcpy(x->rlo, rlo, r->d * sizeof *rlo);
    memcpy(x->rhi, rhi, r->d * sizeof *rhi);
    for (uint32_t q = 0; q < r->d; q++) {
        x->clo[q] = known_lo && known_lo[q] > rlo[q] ? known_lo[q] : rlo[q];
        x->chi[q] = known_hi && known_hi[q] < rhi[q] ? known_hi[q] : rhi[q];
        if (x->clo[q] > x->chi[q]) x->clo[q] = x->chi[q]; /* (an empty node counts nothing) */
    }
    tr->count++;
    return ANONKIT_OK;
}

/* Turns node i into an inner node with the children of split s. */
static int make_children(rk *r, rk_tree *tr, size_t i, const rk_split *s, const uint32_t *lo, const uint32_t *hi,
                         const uint64_t *rows_in, ak_error *err)
{
    const uint32_t d = r->d, q = s->q;
    uint32_t plo[d], phi[d];
    memcpy(plo, tr->nodes[i].rlo, sizeof plo);
    memcpy(phi, tr->nodes[i].rhi, sizeof phi);
    const uint32_t rlo = plo[q], rhi = phi[q];
    const size_t first = tr->count;
    if (r->t->qi[q].kind == ATTR_NUMERIC) {
        const rk_node *x = &tr->nodes[i];
        const uint64_t left = av_sum(&x->fg->av[q], lo[q], s->cut - 1);
        const uint64_t n = x->n;
        phi[q] = s->cut - 1;
        AK_CHECK(tree_add(r, tr, plo, phi, lo, hi, left, s->median_only, err));
        plo[q] = s->cut;
        phi[q] = rhi;
        AK_CHECK(tree_add(r, tr, plo, phi, lo, hi, n - left, s->median_only, err));
    } else {
        const hier *h = r->t->qi[q].h;
        const hier_node *u = hier_node_at(h, s->node);
        const uint32_t *kids = hier_children(h) + u->first_child;
        uint32_t firstc = 0;
        while (!rows_in[firstc]) firstc++;
        /* regions as push_children in mondrian.c: each child's leaves, the
         * leaves of empty children given to the nearest non-empty one before */
        uint32_t starts[u->nchildren];
        uint32_t nkids = 0;
        for (uint32_t c = 0; c < u->nchildren; c++)
            if (rows_in[c]) starts[nkids++] = c == firstc ? rlo : hier_node_at(h, kids[c])->lo;
        uint32_t at = 0;
        for (uint32_t c = 0; c < u->nchildren; c++) {
            if (!rows_in[c]) continue;
            plo[q] = starts[at];
            phi[q] = at + 1 < nkids ? starts[at + 1] - 1 : rhi;
            AK_CHECK(tree_add(r, tr, plo, phi, lo, hi, rows_in[c], s->median_only, err));
            at++;
        }
    }
    rk_node *x = &tr->nodes[i];
    x->kind = RK_INNER;
    x->q = q;
    x->first_child = first;
    x->nchildren = tr->count - first;
    return ANONKIT_OK;
}

/* The box of a node: the least and greatest codes its scan saw (it has rows). */
static void fg_box(const rk *r, const rk_node *x, uint32_t *lo, uint32_t *hi)
{
    memcpy(lo, x->fg->lo, r->d * sizeof *lo);
    memcpy(hi, x->fg->hi, r->d * sizeof *hi);
}

static int process_partition(rk *r, rk_part *p, const uint32_t *rlo, const uint32_t *rhi, int median_only,
                             ak_error *err);

/* ------------------------------------------------------------ leaves */

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

static void load_free(rk *r, rk_load *l)
{
    for (uint32_t q = 0; l->codes && q < r->d; q++) free(l->codes[q]);
    free(l->codes);
    free(l->sens);
    free(l->cls);
    free(l->sval);
    free(l->target);
    strbuf_free(&l->copied);
    free(l->off);
    memset(l, 0, sizeof *l);
}

/* Copies the doubles of a stored tuple (layout lay) into slot `at` of l. */
static inline void load_values(const rk *r, const rk_layout *lay, rk_load *l, size_t at, const uint8_t *tuple)
{
    if (r->has_sval) l->sval[at] = tuple_sval(lay, tuple);
    if (r->has_target) l->target[at] = tuple_target(r, lay, tuple);
}

/* Room in l for `cap` rows: codes, sensitive and class codes, the doubles
 * the tuples carry, and with `copied` the offsets of their copied fields. */
static int load_alloc(const rk *r, rk_load *l, size_t cap, int copied, ak_error *err)
{
    l->cap = cap;
    const size_t rows = cap ? cap : 1;
    if (!(l->codes = calloc(r->d ? r->d : 1, sizeof *l->codes))) return ak_err_nomem(err);
    for (uint32_t q = 0; q < r->d; q++)
        if (!(l->codes[q] = malloc(rows * sizeof **l->codes))) return ak_err_nomem(err);
    l->sens = malloc(rows * sizeof *l->sens);
    l->cls = malloc(rows * sizeof *l->cls);
    if (!l->sens || !l->cls) return ak_err_nomem(err);
    if (copied && !(l->off = malloc((cap * r->ncopied + 1) * sizeof *l->off))) return ak_err_nomem(err);
    if (r->has_sval && !(l->sval = malloc(rows * sizeof *l->sval))) return ak_err_nomem(err);
    if (r->has_target && !(l->target = malloc(rows * sizeof *l->target))) return ak_err_nomem(err);
    return ANONKIT_OK;
}

static int load_rows(rk *r, rk_reader *rd, const rk_part *p, uint64_t limit, rk_load *l, size_t *got, ak_error *err)
{
    if (!l->codes) AK_CHECK(load_alloc(r, l, (size_t)limit, 1, err));
    l->copied.len = 0;
    size_t n = 0;
    while (n < limit) { /* a block's whole tuples at a time, decoded column by column */
        const uint8_t *raw;
        size_t count;
        int rc = spill_read_records(&rd->tuples, rd->lay->width, (size_t)(limit - n), &raw, &count, err);
        if (rc < 0) return rc;
        if (rc == 0) break;
        for (uint32_t c = 0; c < r->d + 2; c++) {
            uint32_t *col = (c < r->d ? l->codes[c] : c == r->d ? l->sens : l->cls) + n;
            layout_column(rd->lay, c, raw, count, col);
            if (p->provisional) root_column(r, c, col, count, rd->row, 1);
        }
        rd->row += count;
        for (size_t i = 0; r->extra && i < count; i++) load_values(r, rd->lay, l, n + i, raw + i * rd->lay->width);
        for (size_t i = 0; rd->with_payload && i < count; i++) {
            const uint8_t *pay;
            size_t paylen;
            AK_CHECK(read_payload(r, rd, &pay, &paylen, err));
            const uint8_t *fields = pay + 4 * (size_t)r->ncopied;
            size_t at = 0;
            for (uint32_t j = 0; j < r->ncopied; j++) {
                const size_t len = tuple_load_u32(pay + 4 * j);
                l->off[(n + i) * r->ncopied + j] = l->copied.len;
                if (strbuf_append(&l->copied, (const char *)fields + at, len) != 0) return ak_err_nomem(err);
                at += len;
            }
        }
        n += count;
    }
    l->off[n * r->ncopied] = l->copied.len;
    *got = n;
    return ANONKIT_OK;
}

/* A table that shares the schema's dictionaries and holds the loaded rows. */
static void make_view(const rk *r, const rk_load *l, size_t n, table *view, table_qi *qi)
{
    *view = *r->t;
    memcpy(qi, r->t->qi, r->d * sizeof *qi);
    for (uint32_t q = 0; q < r->d; q++) qi[q].codes = l->codes[q];
    view->qi = qi;
    view->nrows = n;
    view->sensitive_codes = l->sens;
    view->class_codes = l->cls;
    view->sensitive_values = l->sval;
    view->target_values = l->target;
}

/* Finishes a partition of at most TM rows with the in-memory Mondrian. */
static int finish_in_memory(rk *r, rk_part *p, const uint32_t *rlo, const uint32_t *rhi, int median_only,
                            ak_error *err)
{
    const double mark = ak_seconds();
    rk_reader rd;
    rk_load l;
    memset(&l, 0, sizeof l);
    partition classes;
    memset(&classes, 0, sizeof classes);
    table view;
    table_qi qi[r->d];
    size_t n = 0;
    int rc = reader_open(r, &rd, p, 1, err);
    if (rc == ANONKIT_OK) rc = load_rows(r, &rd, p, p->rows, &l, &n, err);
    reader_close(&rd);
    part_release(r, p);
    if (rc == ANONKIT_OK) {
        make_view(r, &l, n, &view, qi);
        const mdr_options mo = {.threads = r->o->threads, .split = r->o->split, .min_gain = r->o->min_gain,
                                .root_rlo = rlo, .root_rhi = rhi, .root_median_only = median_only};
        rc = partition_init(&classes, n, r->d, err);
        if (rc == ANONKIT_OK) rc = mdr_run_with(&view, r->m, &mo, &classes, err);
        if (rc == ANONKIT_OK) rc = r->leaf_fn(r->ctx, &view, &classes, l.copied.data, l.off, 0, err);
        r->stats->partitions_in_memory++;
    }
    partition_free(&classes);
    load_free(r, &l);
    r->stats->in_memory_seconds += ak_seconds() - mark;
    return rc;
}

/* Publishes a class larger than memory (no allowable split) in chunks of TM rows. */
static int finish_big_class(rk *r, rk_part *part, const uint32_t *rlo, const uint32_t *rhi, const uint32_t *lo,
                            const uint32_t *hi, ak_error *err)
{
    rk_reader rd;
    rk_load l;
    memset(&l, 0, sizeof l);
    partition classes;
    memset(&classes, 0, sizeof classes);
    table view;
    table_qi qi[r->d];
    int rc = reader_open(r, &rd, part, 1, err);
    for (int continued = 0; rc == ANONKIT_OK; continued = 1) {
        size_t n = 0;
        if ((rc = load_rows(r, &rd, part, r->tm, &l, &n, err)) < 0 || n == 0) break;
        make_view(r, &l, n, &view, qi);
        partition_free(&classes);
        uint32_t id;
        if ((rc = partition_init(&classes, n, r->d, err)) < 0) break;
        if ((rc = partition_add_class_in(&classes, lo, hi, rlo, rhi, part->rows, &id, err)) < 0) break;
        memset(classes.class_of, 0, n * sizeof *classes.class_of);
        rc = r->leaf_fn(r->ctx, &view, &classes, l.copied.data, l.off, continued, err);
    }
    reader_close(&rd);
    partition_free(&classes);
    load_free(r, &l);
    return rc;
}

/* ------------------------------------------------------------ one disk-resident partition (000 §2.1) */

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
    uint8_t *tuples;      /* cap tuples of any layout, stored for writing (layout_rows) */
    /* the tree as route_batch reads it, built for each scan */
    rk_hop *hop;          /* per node */
    uint32_t *bound;      /* per node: the least code of the split attribute its rows hold (its rlo there) */
    unsigned height;      /* edges on the longest path from the root */
} rk_batch;

static int batch_init(const rk *r, rk_batch *b, ak_error *err)
{
    /* about a block of decoded codes (the budget holds spare blocks), 16 to 4096 rows */
    size_t rows = r->block / (4 * ((size_t)r->d + 3));
    b->cap = rows < 16 ? 16 : rows > 4096 ? 4096 : rows;
    b->stride = b->cap + 16;
    b->code = malloc(b->stride * ((size_t)r->d + 2) * sizeof *b->code);
    b->node = malloc(b->cap * sizeof *b->node);
    b->order = malloc(b->cap * sizeof *b->order);
    b->gathered = malloc(b->cap * sizeof *b->gathered);
    b->provisional = calloc((size_t)r->d + 2, 1);
    b->tuples = malloc(b->cap * r->width);
    if (!b->code || !b->node || !b->order || !b->gathered || !b->provisional || !b->tuples) return ak_err_nomem(err);
    return ANONKIT_OK;
}

static void batch_free(rk_batch *b)
{
    free(b->hop);
    free(b->bound);
    free(b->code);
    free(b->node);
    free(b->order);
    free(b->gathered);
    free(b->first);
    free(b->provisional);
    free(b->tuples);
    memset(b, 0, sizeof *b);
}

/* Lays the tree out for route_batch (children always follow their parent
 * in tr, so one pass finds every node's depth). */
static int router_build(const rk_tree *tr, rk_batch *b, ak_error *err)
{
    free(b->hop);
    free(b->bound);
    b->hop = malloc(tr->count * sizeof *b->hop);
    b->bound = malloc(tr->count * sizeof *b->bound);
    unsigned *depth = calloc(tr->count, sizeof *depth);
    if (!b->hop || !b->bound || !depth) {
        free(depth);
        return ak_err_nomem(err);
    }
    b->height = 0;
    memset(b->bound, 0, tr->count * sizeof *b->bound);
    for (size_t x = 0; x < tr->count; x++) {
        const rk_node *u = &tr->nodes[x];
        rk_hop *h = &b->hop[x];
        if (u->kind != RK_INNER) {
            *h = (rk_hop){.q = 0, .first = (uint32_t)x, .n = 1};
            continue;
        }
        *h = (rk_hop){.q = u->q, .first = (uint32_t)u->first_child, .n = (uint32_t)u->nchildren};
        for (size_t c = u->first_child; c < u->first_child + u->nchildren; c++) {
            b->bound[c] = tr->nodes[c].rlo[u->q];
            depth[c] = depth[x] + 1;
            if (depth[c] > b->height) b->height = depth[c];
        }
    }
    free(depth);
    return ANONKIT_OK;
}

/* The node each of the n rows of the batch belongs to, into node[]: down
 * from the root by the chosen splits, a level at a time for all rows (the
 * rows' steps are independent, so they overlap; a split sends rows either
 * way at random, so the child is chosen without branching on the code).
 * route_levels takes the steps from level `from` (0: the root) to `to`. */
static void route_levels(const rk_batch *b, size_t n, uint32_t *node, unsigned from, unsigned to)
{
    if (from == 0)
        for (size_t i = 0; i < n; i++) node[i] = 0;
    for (unsigned level = from; level < to; level++)
        for (size_t i = 0; i < n; i++) {
            const rk_hop h = b->hop[node[i]];
            const uint32_t v = b->code[h.q * b->stride + i];
            uint32_t at = h.first, len = h.n; /* the last child with bound <= v (the first's always is) */
            while (len > 1) {
                const uint32_t half = len / 2;
                at = b->bound[at + half] <= v ? at + half : at;
                len -= half;
            }
            node[i] = at;
        }
}

static void route_batch(const rk_batch *b, size_t n, uint32_t *node) { route_levels(b, n, node, 0, b->height); }

/* Decodes the columns c with need[c] of the next n tuples of rd's partition
 * p (at raw) into the batch, with final codes unless b->provisional[c]. */
static void batch_decode(const rk *r, const rk_part *p, rk_reader *rd, const uint8_t *raw, size_t n,
                         const uint8_t *need, rk_batch *b)
{
    for (uint32_t c = 0; c < r->d + 2; c++) {
        if (!need[c]) continue;
        uint32_t *col = b->code + c * b->stride;
        layout_column(rd->lay, c, raw, n, col);
        if (p->provisional) root_column(r, c, col, n, rd->row, !b->provisional[c]);
    }
    rd->row += n;
}

/* Adds n codes of QI q, all of one node's rows, to its group g: the box,
 * and the AV set when counted. */
static int count_column(fgroup *g, uint32_t q, const uint32_t *col, size_t n, ak_error *err)
{
    ak_min_max(col, n, &g->lo[q], &g->hi[q]);
    if (!g->counted[q]) return ANONKIT_OK;
    avset *s = &g->av[q];
    if (g->lo[q] - s->base >= s->range || g->hi[q] - s->base >= s->range)
        return ak_err_set(err, ANONKIT_E_INTERNAL, NULL, 0, 0, "a code lies outside its partition's box");
    if (!s->sparse) {
        uint32_t *count = s->count;
        const uint32_t base = s->base;
        for (size_t i = 0; i < n; i++) count[col[i] - base]++;
    } else {
        for (size_t i = 0; i < n; i++) AK_CHECK(av_add(s, col[i], err));
    }
    return ANONKIT_OK;
}

/* Groups the n routed rows of the batch by node, in file order within a
 * node: node x's rows are order[first[x] .. first[x + 1]). */
static int batch_group(const rk_tree *tr, rk_batch *b, size_t n, ak_error *err)
{
    if (b->nfirst < tr->count + 1) {
        size_t *first = realloc(b->first, (tr->count + 1) * sizeof *first);
        if (!first) return ak_err_nomem(err);
        b->first = first;
        b->nfirst = tr->count + 1;
    }
    memset(b->first, 0, (tr->count + 1) * sizeof *b->first);
    for (size_t i = 0; i < n; i++) b->first[b->node[i] + 1]++;
    for (size_t x = 0; x < tr->count; x++) b->first[x + 1] += b->first[x];
    for (size_t i = 0; i < n; i++) b->order[b->first[b->node[i]]++] = (uint32_t)i;
    for (size_t x = tr->count; x > 0; x--) b->first[x] = b->first[x - 1]; /* back to the starts */
    b->first[0] = 0;
    return ANONKIT_OK;
}

/* Adds n decoded rows to the frequency groups of their open nodes: every
 * QI's box, the counted QIs' sets. With several open nodes the rows are
 * first grouped by node, so that each node's codes are counted in one tight
 * loop as a single node's are. */
static int batch_count(rk *r, rk_tree *tr, rk_batch *b, size_t n, ak_error *err)
{
    const uint32_t d = r->d;
    fgroup *only = tr->count == 1 ? tr->nodes[0].fg : NULL; /* a partition's first scan: every row counts */
    if (only) {
        only->n += n;
    } else {
        route_batch(b, n, b->node);
        AK_CHECK(batch_group(tr, b, n, err));
        for (size_t x = 0; x < tr->count; x++)
            if (tr->nodes[x].fg) tr->nodes[x].fg->n += b->first[x + 1] - b->first[x];
    }
    for (uint32_t q = 0; q < d; q++) {
        const uint32_t *col = b->code + (size_t)q * b->stride;
        if (only && b->provisional[q]) { /* integer codes in value order: rank just the extremes */
            uint32_t lo = UINT32_MAX, hi = 0;
            ak_min_max(col, n, &lo, &hi);
            lo = table_numeric_rank(r->t, q, lo);
            hi = table_numeric_rank(r->t, q, hi);
            only->lo[q] = lo < only->lo[q] ? lo : only->lo[q];
            only->hi[q] = hi > only->hi[q] ? hi : only->hi[q];
            continue; /* (not counted) */
        }
        if (only) {
            AK_CHECK(count_column(only, q, col, n, err));
        } else {
            for (size_t i = 0; i < n; i++) b->gathered[i] = col[b->order[i]];
            for (size_t x = 0; x < tr->count; x++)
                if (tr->nodes[x].fg && b->first[x + 1] > b->first[x])
                    AK_CHECK(count_column(tr->nodes[x].fg, q, b->gathered + b->first[x], b->first[x + 1] - b->first[x],
                                          err));
        }
        if (!r->need_hist && !r->infogain) continue;
        const uint32_t *sens = b->code + (size_t)d * b->stride, *cls = b->code + (size_t)(d + 1) * b->stride;
        for (size_t i = 0; i < n; i++) {
            fgroup *g = only ? only : tr->nodes[b->node[i]].fg;
            if (!g || !g->counted[q]) continue;
            if (g->avs) AK_CHECK(pairset_add(&g->avs[q], col[i], sens[i], err));
            if (g->avc) AK_CHECK(pairset_add(&g->avc[q], col[i], cls[i], err));
        }
    }
    return ANONKIT_OK;
}

/* Writes n decoded and routed rows (stored at raw) to the files of their
 * leaves, as read or in the leaf's own layout, each with its copied fields:
 * a leaf at a time, its rows in file order. */
static int batch_write(rk *r, rk_tree *tr, rk_reader *rd, const uint8_t *raw, rk_batch *b, size_t n, ak_error *err)
{
    const uint32_t width = rd->lay->width;
    AK_CHECK(batch_group(tr, b, n, err));
    for (size_t leaf = 0; leaf < tr->count; leaf++) {
        const uint32_t *rows = b->order + b->first[leaf];
        const size_t m = b->first[leaf + 1] - b->first[leaf];
        if (m == 0) continue;
        rk_node *x = &tr->nodes[leaf];
        if (x->track) { /* Rothko-S: the leaf's population statistics */
            for (size_t j = 0; j < m; j++) {
                const size_t i = rows[j];
                if (x->shist) { /* (decoded when transcoding: the root file's codes may need mapping) */
                    uint32_t v = b->code[r->d * b->stride + i];
                    if (!x->transcode) layout_column(rd->lay, r->d, raw + i * width, 1, &v);
                    x->shist[v]++;
                }
                if (r->has_sval) model_moments_add(&x->mom, tuple_sval(rd->lay, raw + i * width));
            }
        }
        if (x->transcode) {
            layout_rows(&x->lay, r->d + 2, r->extra, b->code, b->stride, rows, m, raw, rd->lay, b->tuples);
            AK_CHECK(spill_write(&x->wt, b->tuples, m * x->lay.width, err));
        } else {
            for (size_t j = 0; j < m; j++) AK_CHECK(spill_put(&x->wt, raw + rows[j] * width, width, err));
        }
        x->part.rows += m;
    }
    for (size_t i = 0; rd->with_payload && i < n; i++) { /* the payload file is read in file order */
        rk_node *x = &tr->nodes[b->node[i]];
        const uint8_t *pay;
        size_t paylen;
        AK_CHECK(read_payload(r, rd, &pay, &paylen, err));
        uint8_t head[4];
        tuple_store_u32(head, (uint32_t)(paylen - 4 * (size_t)r->ncopied));
        AK_CHECK(spill_put(&x->wp, head, 4, err));
        AK_CHECK(spill_put(&x->wp, pay, paylen, err));
    }
    r->stats->rows_written += n;
    return ANONKIT_OK;
}

/* Writes n decoded rows (stored at raw as src says) to w in layout lay. */
static int batch_copy(rk *r, rk_batch *b, const uint8_t *raw, const rk_layout *src, size_t n, spill_writer *w,
                      const rk_layout *lay, ak_error *err)
{
    layout_rows(lay, r->d + 2, r->extra, b->code, b->stride, NULL, n, raw, src, b->tuples);
    AK_CHECK(spill_write(w, b->tuples, n * lay->width, err));
    r->stats->rows_written += n;
    return ANONKIT_OK;
}

/* ---- repartitioning on two threads ---- */

/* Rows below which a repartitioning scan is not worth a second thread. */
#define RK_PIPE_MIN_ROWS 65536
/* Chunks in flight between the two threads. */
enum { RK_PIPE_CHUNKS = 3 };

/* A batch of tuples copied out of the reader's buffer, decoded and routed halfway. */
typedef struct rk_chunk {
    rk_batch b;
    uint8_t *raw;
    size_t n;
    int ready; /* decoded, waiting to be routed and written */
} rk_chunk;

/* A repartitioning scan split in two stages: a helper thread reads and
 * decodes chunks of rows (ranking the root file's codes) and routes them
 * down the upper half of the tree, while the caller routes the chunks
 * before down the lower half and writes them to the leaves' files (so
 * split, the two stages take about as long from the root file). The helper
 * alone touches the reader's tuples and row count, the caller alone its
 * payload, the tree's leaves and their writers. */
typedef struct rk_pipe {
    rk *r;
    const rk_part *p;
    rk_reader *rd;
    const uint8_t *need;
    rk_chunk chunk[RK_PIPE_CHUNKS];
    pthread_mutex_t lock;
    pthread_cond_t changed;
    int finished; /* the helper is done: at the end of the file, stopped or failed */
    int failed;   /* the helper's status when it failed */
    int stop;     /* the caller failed: the helper is to stop */
    ak_error err;
} rk_pipe;

/* The helper: fills free chunks in turn until the file ends. */
static void *pipe_decode(void *arg)
{
    rk_pipe *pp = arg;
    rk *r = pp->r;
    rk_reader *rd = pp->rd;
    const size_t width = rd->lay->width;
    int rc = ANONKIT_OK, end = 0;
    ak_error e;
    memset(&e, 0, sizeof e);
    for (unsigned k = 0; !end; k = (k + 1) % RK_PIPE_CHUNKS) {
        rk_chunk *c = &pp->chunk[k];
        pthread_mutex_lock(&pp->lock);
        while (c->ready && !pp->stop) pthread_cond_wait(&pp->changed, &pp->lock);
        const int stop = pp->stop;
        pthread_mutex_unlock(&pp->lock);
        if (stop) break;
        size_t n = 0;
        while (n < c->b.cap) {
            const uint8_t *raw;
            size_t got;
            const int more = spill_read_records(&rd->tuples, width, c->b.cap - n, &raw, &got, &e);
            if (more <= 0) {
                rc = more;
                end = 1;
                break;
            }
            memcpy(c->raw + n * width, raw, got * width);
            n += got;
        }
        if (rc < 0) break;
        batch_decode(r, pp->p, rd, c->raw, n, pp->need, &c->b);
        route_levels(&c->b, n, c->b.node, 0, c->b.height / 2);
        pthread_mutex_lock(&pp->lock);
        c->n = n;
        c->ready = n > 0;
        pthread_cond_broadcast(&pp->changed);
        pthread_mutex_unlock(&pp->lock);
    }
    pthread_mutex_lock(&pp->lock);
    pp->finished = 1;
    if (rc < 0) {
        pp->failed = rc;
        pp->err = e;
    }
    pthread_cond_broadcast(&pp->changed);
    pthread_mutex_unlock(&pp->lock);
    return NULL;
}

/* A repartitioning scan of p through tr on two threads (see rk_pipe); the
 * rows reach the leaves in file order, as scan() writes them. Returns 1,
 * having read nothing, when the system gives no thread (scan() then does the
 * work alone). */
static int scan_pipelined(rk *r, rk_tree *tr, rk_part *p, const uint8_t *need, ak_error *err)
{
    rk_reader rd;
    rk_pipe pp;
    memset(&pp, 0, sizeof pp);
    pp.r = r;
    pp.p = p;
    pp.rd = &rd;
    pp.need = need;
    int rc = reader_open(r, &rd, p, 1, err);
    for (unsigned k = 0; rc == ANONKIT_OK && k < RK_PIPE_CHUNKS; k++) {
        rk_chunk *c = &pp.chunk[k];
        rc = batch_init(r, &c->b, err);
        if (rc == ANONKIT_OK) rc = router_build(tr, &c->b, err);
        /* (slack: a decoder loads a 3-byte field as a word) */
        if (rc == ANONKIT_OK && !(c->raw = malloc(c->b.cap * rd.lay->width + SPILL_READ_SLACK))) rc = ak_err_nomem(err);
    }
    int locks = 0, started = 0;
    pthread_t helper;
    if (rc == ANONKIT_OK && pthread_mutex_init(&pp.lock, NULL) == 0) {
        if (pthread_cond_init(&pp.changed, NULL) == 0)
            locks = 1;
        else
            pthread_mutex_destroy(&pp.lock);
    }
    if (locks) started = ak_thread_create(&helper, pipe_decode, &pp) == 0;
    if (rc == ANONKIT_OK && !started) rc = 1; /* no thread: nothing was read */
    for (unsigned k = 0; rc == ANONKIT_OK; k = (k + 1) % RK_PIPE_CHUNKS) {
        rk_chunk *c = &pp.chunk[k];
        pthread_mutex_lock(&pp.lock);
        while (!c->ready && !pp.finished) pthread_cond_wait(&pp.changed, &pp.lock);
        const int ready = c->ready;
        pthread_mutex_unlock(&pp.lock);
        if (!ready) break; /* (the helper fills the chunks in turn: none is left) */
        route_levels(&c->b, c->n, c->b.node, c->b.height / 2, c->b.height);
        rc = batch_write(r, tr, &rd, c->raw, &c->b, c->n, err);
        pthread_mutex_lock(&pp.lock);
        c->ready = 0;
        if (rc < 0) pp.stop = 1;
        pthread_cond_broadcast(&pp.changed);
        pthread_mutex_unlock(&pp.lock);
    }
    if (started) {
        if (rc < 0) {
            pthread_mutex_lock(&pp.lock);
            pp.stop = 1;
            pthread_cond_broadcast(&pp.changed);
            pthread_mutex_unlock(&pp.lock);
        }
        pthread_join(helper, NULL);
        if (rc == ANONKIT_OK && pp.failed) {
            rc = pp.failed;
            if (err) *err = pp.err;
        }
    }
    if (locks) {
        pthread_cond_destroy(&pp.changed);
        pthread_mutex_destroy(&pp.lock);
    }
    for (unsigned k = 0; k < RK_PIPE_CHUNKS; k++) {
        batch_free(&pp.chunk[k].b);
        free(pp.chunk[k].raw);
    }
    reader_close(&rd);
    if (rc != 1) r->stats->scans++;
    return rc;
}

/* One scan of p, a block at a time: rows routed through the tree to open
 * nodes' frequency groups, or (repartition) to the leaves' files (000 §2.1).
 * A counting scan with copy also writes every row there in layout copy_lay. */
static int scan(rk *r, rk_tree *tr, rk_part *p, int repartition, spill_writer *copy, const rk_layout *copy_lay,
                ak_error *err)
{
    rk_reader rd;
    rk_batch b = {0};
    /* the columns to decode: a count needs every QI (and the sensitive value
     * or class label it pairs them with), routing the split attributes, and
     * ranking provisional codes the numeric QIs */
    int transcode = 0;
    for (size_t i = 0; repartition && i < tr->count; i++)
        transcode |= tr->nodes[i].kind == RK_LEAF && tr->nodes[i].transcode;
    uint8_t need[r->d + 2];
    for (uint32_t c = 0; c < r->d + 2; c++)
        need[c] = !repartition ? copy || c < r->d || (c == r->d && r->need_hist) || (c == r->d + 1 && r->infogain)
                               : transcode;
    for (size_t i = 0; i < tr->count; i++)
        if (tr->nodes[i].kind == RK_INNER) need[tr->nodes[i].q] = 1;
    const uint64_t pipe_min = r->o->pipeline_min_rows ? r->o->pipeline_min_rows : RK_PIPE_MIN_ROWS;
    if (repartition && r->o->threads > 1 && p->rows >= pipe_min) {
        const int piped = scan_pipelined(r, tr, p, need, err);
        if (piped != 1) return piped;
    }
    int rc = reader_open(r, &rd, p, repartition, err);
    if (rc == ANONKIT_OK) rc = batch_init(r, &b, err);
    if (rc == ANONKIT_OK) rc = router_build(tr, &b, err);
    /* A partition's first count of the root file ranks only the QIs it
     * counts: the others want just their box, and integer codes (value plus
     * a bias) are in value order, so their least and greatest are ranked
     * alone. Ranking is a lookup in a table as wide as the values' range. */
    const fgroup *only = tr->count == 1 ? tr->nodes[0].fg : NULL;
    for (uint32_t c = 0; rc == ANONKIT_OK && c < r->d; c++)
        b.provisional[c] = !repartition && !copy && only && !only->counted[c] && ranked_later(r, p, c);
    while (rc == ANONKIT_OK) {
        const uint8_t *raw;
        size_t n;
        int got = spill_read_records(&rd.tuples, rd.lay->width, b.cap, &raw, &n, err);
        if (got <= 0) {
            rc = got;
            break;
        }
        batch_decode(r, p, &rd, raw, n, need, &b);
        if (repartition) route_batch(&b, n, b.node);
        rc = repartition ? batch_write(r, tr, &rd, raw, &b, n, err) : batch_count(r, tr, &b, n, err);
        if (rc == ANONKIT_OK && copy) rc = batch_copy(r, &b, raw, rd.lay, n, copy, copy_lay, err);
    }
    batch_free(&b);
    reader_close(&rd);
    r->stats->scans++;
    return rc;
}

/* Creates the (empty) files of a new partition and a writer for each (no
 * payload file when no column is copied: creating files is not free). */
static int part_create(rk *r, rk_part *part, spill_writer *wt, spill_writer *wp, ak_error *err)
{
    AK_CHECK(part_file_open(r, &part->tuples, err));
    AK_CHECK(spill_writer_init(wt, &part->tuples, &r->dir, r->block, &r->tuple_io, err));
    if (!r->ncopied) return ANONKIT_OK;
    AK_CHECK(part_file_open(r, &part->payload, err));
    return spill_writer_init(wp, &part->payload, &r->dir, r->block, &r->payload_io, err);
}

/* Divides the rows of p across the leaves of tr in one scan (000 §2.1, §3),
 * each leaf stored in the narrowest layout its codes (within clo..chi) allow
 * when that is at least a quarter narrower than p's (and always from the
 * root file, whose codes are ranked on the way), else as read; then releases
 * p's files: its rows now live in the leaves. */
static int repartition(rk *r, rk_tree *tr, rk_part *p, ak_error *err)
{
    rk_layout from = {0};
    int rc = p->layout ? ANONKIT_OK : layout_wide(r, &from, err);
    const rk_layout *src = p->layout ? p->layout : &from;
    for (size_t i = 0; rc == ANONKIT_OK && i < tr->count; i++) {
        rk_node *x = &tr->nodes[i];
        if (x->kind != RK_LEAF) continue;
        rc = layout_fit(r, x->clo, x->chi, &x->lay, err);
        if (rc < 0) break;
        /* (re-encoding costs a decode and encode of every column a row; a
         * byte or two less a tuple saves less than that in later scans) */
        x->transcode = p->provisional || 4 * x->lay.width <= 3 * src->width;
        if (!x->transcode && (rc = layout_copy(r, src, &x->lay, err)) < 0) break;
        x->part.layout = &x->lay;
        x->part.lo = x->clo;
        x->part.hi = x->chi;
        rc = part_create(r, &x->part, &x->wt, &x->wp, err);
    }
    layout_free(&from);
    const double mark = ak_seconds();
    if (rc == ANONKIT_OK) rc = scan(r, tr, p, 1, NULL, NULL, err);
    r->stats->repartition_seconds += ak_seconds() - mark;
    if (rc == ANONKIT_OK) r->stats->repartitions++;
    for (size_t i = 0; rc == ANONKIT_OK && i < tr->count; i++) {
        rk_node *x = &tr->nodes[i];
        if (x->kind != RK_LEAF) continue;
        rc = spill_writer_flush(&x->wt, err);
        if (rc == ANONKIT_OK) rc = spill_writer_flush(&x->wp, err);
        spill_writer_free(&x->wt);
        spill_writer_free(&x->wp);
    }
    part_release(r, p);
    return rc;
}

static int process_partition(rk *r, rk_part *p, const uint32_t *rlo, const uint32_t *rhi, int median_only,
                             ak_error *err)
{
    if (p->rows <= r->tm) return finish_in_memory(r, p, rlo, rhi, median_only, err);
    if (p->rows > UINT32_MAX)
        return ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0,
                          "rothko-t counts a partition's values in 32 bits: at most 4294967295 rows");
    rk_tree tr = {0};
    int rc = tree_add(r, &tr, rlo, rhi, p->lo, p->hi, p->rows, median_only, err);
    uint64_t *rows_in = NULL;
    size_t max_children = 2;
    for (uint32_t q = 0; q < r->d; q++)
        if (r->t->qi[q].kind == ATTR_CATEGORICAL)
            for (uint32_t u = 0; u < hier_node_count(r->t->qi[q].h); u++)
                if (hier_node_at(r->t->qi[q].h, u)->nchildren > max_children)
                    max_children = hier_node_at(r->t->qi[q].h, u)->nchildren;
    if (rc == ANONKIT_OK && !(rows_in = malloc(max_children * sizeof *rows_in))) rc = ak_err_nomem(err);
    unsigned fcache = r->o->fcache;
    if (!fcache) fcache = UINT32_MAX; /* as many as the budget holds */
    /* The root file's codes are 4 bytes, the numeric ones ranked on every
     * read. When more than one frequency group may be held, the tree grows
     * breadth-first over it for several scans: its first scan then also
     * writes it ranked and narrowed, and the later scans read that copy. */
    rk_layout copy_lay = {0};
    spill_file copy = {.fd = -1};
    spill_writer copy_w = {0};
    if (rc == ANONKIT_OK && p->provisional && fcache > 1) {
        rc = layout_fit(r, tr.nodes[0].clo, tr.nodes[0].chi, &copy_lay, err);
        if (rc == ANONKIT_OK) rc = part_file_open(r, &copy, err);
        if (rc == ANONKIT_OK) rc = spill_writer_init(&copy_w, &copy, &r->dir, r->block, &r->tuple_io, err);
    }
    /* Leaves written at once when repartitioning: two buffers each. */
    const size_t max_leaves = r->o->memory / 4 / (2 * r->block) > 2 ? r->o->memory / 4 / (2 * r->block) : 2;
    while (rc == ANONKIT_OK) {
        /* frequency groups of the open nodes (a level of the tree, and nodes
         * to count again in full), in one scan */
        size_t need = 0, groups = 0;
        for (size_t i = 0; i < tr.count; i++)
            if (tr.nodes[i].kind == RK_OPEN) need += av_bytes(r, &tr.nodes[i], NULL), groups++;
        if (need > r->fg_budget) {
            rc = ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0,
                            "--memory is too small for one frequency group of this table (%zu bytes of %zu available)",
                            need, r->fg_budget);
            break;
        }
        if (groups > r->stats->fcache) r->stats->fcache = (unsigned)groups;
        for (size_t i = 0; rc == ANONKIT_OK && i < tr.count; i++)
            if (tr.nodes[i].kind == RK_OPEN) rc = fgroup_new(r, &tr.nodes[i], &tr.nodes[i].fg, err);
        if (rc == ANONKIT_OK) rc = scan(r, &tr, p, 0, copy.fd >= 0 ? &copy_w : NULL, &copy_lay, err);
        if (rc == ANONKIT_OK && copy.fd >= 0) { /* from now on p is the ranked copy */
            rc = spill_writer_flush(&copy_w, err);
            spill_writer_free(&copy_w);
            part_file_release(r, &p->tuples);
            if (p->tail_tuples) part_file_release(r, p->tail_tuples);
            p->tail_tuples = NULL;
            p->tuples = copy;
            copy.fd = -1;
            p->provisional = 0;
            p->layout = &copy_lay;
        }
        size_t pair_bytes = 0; /* the most one hashed pair set took */
        const size_t counted = tr.count;
        for (size_t i = 0; rc == ANONKIT_OK && i < counted; i++) {
            rk_node *x = &tr.nodes[i];
            if (x->kind != RK_OPEN) continue;
            fgroup_pair_bytes(r, x->fg, &pair_bytes);
            for (uint32_t q = 0; q < r->d; q++) av_finish(&x->fg->av[q]);
            uint32_t lo[r->d], hi[r->d];
            fg_box(r, x, lo, hi);
            /* ak_hist of the node's sensitive values, from the pairs of any counted QI */
            if (r->need_hist) {
                uint32_t q = 0;
                while (!x->fg->counted[q]) q++; /* (at least RK_PREDICTED or all QIs are counted) */
                ak_hist_clear(&r->whole);
                if ((rc = pairset_sort(&x->fg->avs[q], err)) < 0) break;
                add_pairs(&x->fg->avs[q], x->clo[q], x->chi[q], &r->whole);
            }
            rk_split s = {0};
            int split = r->o->split == MDR_SPLIT_INFOGAIN && !x->median_only
                            ? choose_infogain(r, x->fg, x, lo, hi, &s, rows_in, err)
                            : choose_median(r, x->fg, x, lo, hi, &s, rows_in, err);
            if (split < 0) {
                rc = split;
                break;
            }
            if (split == 2) {
                x->count_all = 1; /* stays open */
                r->stats->recounted_nodes++;
            } else if (split) {
                rc = make_children(r, &tr, i, &s, lo, hi, rows_in, err);
                x = &tr.nodes[i];
            } else {
                x->kind = RK_LEAF; /* a class: no allowable split */
                x->is_class = 1;
                memcpy(x->blo, lo, sizeof lo);
                memcpy(x->bhi, hi, sizeof hi);
            }
            if (rc == ANONKIT_OK) {
                fgroup_free(r, x->fg);
                x->fg = NULL;
            }
        }
        if (rc < 0) break;
        /* the next scan: children larger than TM stay open */
        size_t next_open = 0, leaves = 0, next_need = 0;
        for (size_t i = counted; i < tr.count; i++)
            if (tr.nodes[i].n <= r->tm) tr.nodes[i].kind = RK_LEAF;
        for (size_t i = 0; i < tr.count; i++) {
            leaves += tr.nodes[i].kind != RK_INNER;
            if (tr.nodes[i].kind != RK_OPEN) continue;
            uint32_t hashed;
            next_open++;
            next_need += av_bytes(r, &tr.nodes[i], &hashed) + pair_bytes * hashed;
        }
        if (next_open == 0 || next_open > fcache || next_need > r->fg_budget || leaves + next_open > max_leaves) {
            for (size_t i = 0; i < tr.count; i++)
                if (tr.nodes[i].kind == RK_OPEN) tr.nodes[i].kind = RK_LEAF;
            break;
        }
    }
    /* repartition across the leaves */
    if (rc == ANONKIT_OK) rc = repartition(r, &tr, p, err);
    /* depth-first: children in order (the tree's leaves left to right) */
    size_t stack_cap = tr.count + 1, depth = 0;
    size_t *stack = rc == ANONKIT_OK ? malloc(stack_cap * sizeof *stack) : NULL;
    if (rc == ANONKIT_OK && !stack) rc = ak_err_nomem(err);
    if (rc == ANONKIT_OK) stack[depth++] = 0;
    while (rc == ANONKIT_OK && depth) {
        rk_node *x = &tr.nodes[stack[--depth]];
        if (x->kind == RK_INNER) {
            for (size_t c = x->nchildren; c-- > 0;) stack[depth++] = x->first_child + c;
            continue;
        }
        if (x->part.rows != x->n) {
            rc = ak_err_set(err, ANONKIT_E_INTERNAL, NULL, 0, 0, "a partition's row count changed between scans");
            break;
        }
        if (x->is_class && x->n > r->tm) { /* a class larger than memory */
            rc = finish_big_class(r, &x->part, x->rlo, x->rhi, x->blo, x->bhi, err);
        } else {
            rc = process_partition(r, &x->part, x->rlo, x->rhi, x->median_only, err);
        }
        part_release(r, &x->part);
        fgroup_free(r, x->fg);
        x->fg = NULL;
    }
    free(stack);
    free(rows_in);
    tree_free(r, &tr);
    if (p->layout == &copy_lay) p->layout = NULL;
    layout_free(&copy_lay);
    spill_writer_free(&copy_w);
    part_file_release(r, &copy);
    return rc;
}

/* ------------------------------------------------------------ Rothko-S (000 §3) */

/* Per column of p (d QIs, sensitive, class), ranked_later, into provisional. */
static void sample_provisional(const rk *r, const rk_part *p, uint8_t *provisional)
{
    memset(provisional, 0, (size_t)r->d + 2);
    for (uint32_t q = 0; q < r->d; q++) provisional[q] = (uint8_t)ranked_later(r, p, q);
}

/* Ranks the n sampled codes of the QIs left provisional by sample_take. */
static void sample_rank(const rk *r, const uint8_t *provisional, rk_load *l, size_t n)
{
    for (uint32_t q = 0; q < r->d; q++)
        if (provisional[q]) table_numeric_ranks(r->t, q, l->codes[q], n);
}

/* Decodes the tuple of p at raw, the reader's row `row`, into slot `slot`
 * of the sample l: final codes, but numeric QIs with provisional[q] left
 * provisional (sample_scan ranks them at the end). */
static void sample_take(const rk *r, const rk_part *p, const rk_layout *lay, const uint8_t *raw, uint64_t row,
                        const uint8_t *provisional, rk_load *l, size_t slot)
{
    for (uint32_t c = 0; c < r->d + 2; c++) {
        uint32_t v;
        layout_column(lay, c, raw, 1, &v);
        if (p->provisional) root_column(r, c, &v, 1, row, !provisional[c]);
        if (c < r->d)
            l->codes[c][slot] = v;
        else if (c == r->d)
            l->sens[slot] = v;
        else
            l->cls[slot] = v;
    }
    load_values(r, lay, l, slot, raw);
}

/* A simple random sample without replacement of up to `want` of p's rows
 * into l (reservoir sampling, 000 §3), in one scan of p. *got receives the
 * rows sampled. Which rows the reservoir ends with depends only on p's row
 * count and the generator, so Algorithm R is played on row numbers first and
 * the scan then decodes just the rows it kept, in file order (rather than
 * every row the reservoir takes on the way, about want * ln(rows / want)
 * more). */
static int sample_scan(rk *r, rk_part *p, size_t want, rk_load *l, size_t *got, ak_error *err)
{
    const uint32_t d = r->d;
    memset(l, 0, sizeof *l);
    AK_CHECK(load_alloc(r, l, want, 0, err));
    const size_t n = p->rows < want ? (size_t)p->rows : want;
    uint64_t *pick = malloc((n ? n : 1) * sizeof *pick);
    if (!pick) return ak_err_nomem(err);
    /* Algorithm R: row i replaces a uniform slot with probability want / (i + 1) */
    for (size_t i = 0; i < n; i++) pick[i] = i;
    for (uint64_t i = n; i < p->rows; i++) {
        const uint64_t j = ak_rng_below(&r->rng, i + 1);
        if (j < want) pick[j] = i;
    }
    qsort(pick, n, sizeof *pick, ak_cmp_u64);
    rk_reader rd;
    int rc = reader_open(r, &rd, p, 0, err);
    uint8_t provisional[d + 2]; /* ranked together at the end */
    sample_provisional(r, p, provisional);
    const size_t width = rc == ANONKIT_OK ? rd.lay->width : 1;
    size_t next = 0;
    while (rc == ANONKIT_OK && next < n) {
        const uint8_t *raw;
        size_t batch;
        const int more = spill_read_records(&rd.tuples, width, r->block / width + 1, &raw, &batch, err);
        if (more <= 0) {
            rc = more < 0 ? more : ak_err_set(err, ANONKIT_E_INTERNAL, NULL, 0, 0, "a partition file ends early");
            break;
        }
        for (; next < n && pick[next] < rd.row + batch; next++)
            sample_take(r, p, rd.lay, raw + (pick[next] - rd.row) * width, pick[next], provisional, l, next);
        rd.row += batch;
    }
    free(pick);
    *got = n;
    if (rc == ANONKIT_OK) sample_rank(r, provisional, l, n);
    reader_close(&rd);
    r->stats->scans++;
    return rc;
}

/* The root's sample from the first scan's stores (first_sample_start): its
 * `want` rows of least priority, which are a simple random sample without
 * replacement of the table's rows whichever way the input was cut. Returns 1
 * with them in l (in file order, *got = want), or 0 when the stores do not
 * hold them all (then nothing is allocated). */
static int sample_first_scan(rk *r, rk_part *p, size_t want, rk_load *l, size_t *got, ak_error *err)
{
    const uint32_t d = r->d;
    const uint64_t base[2] = {0, r->t->split.first_row}; /* the second piece's rows follow the first's */
    memset(l, 0, sizeof *l);
    bottomk_key cut;
    const int held = bottomk_cut(r->first_sample, base, r->first_sample_parts, want, &cut, err);
    if (held <= 0) return held;
    for (unsigned i = 0; i < r->first_sample_parts; i++) /* the rows past the cut make room for the sample */
        bottomk_trim(&r->first_sample[i], base[i], cut);
    AK_CHECK(load_alloc(r, l, want, 0, err));
    rk_layout lay;
    memset(&lay, 0, sizeof lay);
    AK_CHECK(layout_wide(r, &lay, err)); /* (one allocation: nothing to free when it fails) */
    uint8_t provisional[d + 2]; /* ranked together at the end */
    sample_provisional(r, p, provisional);
    size_t n = 0;
    for (unsigned i = 0; i < r->first_sample_parts; i++)
        for (size_t j = 0; j < r->first_sample[i].n; j++) {
            bottomk_key key;
            const uint8_t *tuple = bottomk_record(&r->first_sample[i], j, &key);
            key.seq += base[i];
            if (!bottomk_key_less(cut, key)) sample_take(r, p, &lay, tuple, key.seq, provisional, l, n++);
        }
    layout_free(&lay);
    sample_rank(r, provisional, l, n);
    *got = n;
    return 1;
}

/* One scan of p for the box of its rows: per QI the least and greatest code
 * they hold, into box_lo and box_hi. */
static int part_box(rk *r, rk_part *p, uint32_t *box_lo, uint32_t *box_hi, ak_error *err)
{
    const uint32_t d = r->d;
    for (uint32_t q = 0; q < d; q++) box_lo[q] = UINT32_MAX, box_hi[q] = 0;
    uint8_t need[d + 2];
    memset(need, 1, d);
    need[d] = need[d + 1] = 0;
    rk_reader rd;
    rk_batch b = {0};
    int rc = reader_open(r, &rd, p, 0, err);
    if (rc == ANONKIT_OK) rc = batch_init(r, &b, err);
    for (uint32_t q = 0; rc == ANONKIT_OK && q < d; q++) b.provisional[q] = (uint8_t)ranked_later(r, p, q); /* extremes only */
    uint64_t seen = 0;
    while (rc == ANONKIT_OK) {
        const uint8_t *raw;
        size_t n;
        const int more = spill_read_records(&rd.tuples, rd.lay->width, b.cap, &raw, &n, err);
        if (more <= 0) {
            rc = more;
            break;
        }
        batch_decode(r, p, &rd, raw, n, need, &b);
        for (uint32_t q = 0; q < d; q++) ak_min_max(b.code + (size_t)q * b.stride, n, &box_lo[q], &box_hi[q]);
        seen += n;
    }
    for (uint32_t q = 0; rc == ANONKIT_OK && seen && q < d; q++)
        if (b.provisional[q]) {
            box_lo[q] = table_numeric_rank(r->t, q, box_lo[q]);
            box_hi[q] = table_numeric_rank(r->t, q, box_hi[q]);
        }
    batch_free(&b);
    reader_close(&rd);
    r->stats->scans++;
    return rc;
}

/* Rebuilds the tree grown on a sample as an rk_tree whose nodes are in
 * breadth-first order with each node's children contiguous and ordered by
 * their region in the QI split on, which is what route_batch() needs. */
static int tree_from_growth(rk *r, const mdr_tree *g, rk_tree *tr, ak_error *err)
{
    const size_t count = g->count;
    /* each node's children, bucketed by parent: kids[first[i] .. first[i] + nkids[i]) */
    size_t *nkids = calloc(count + 1, sizeof *nkids), *first = calloc(count + 1, sizeof *first);
    size_t *fill = malloc((count + 1) * sizeof *fill);
    uint32_t *kids = malloc((count ? count : 1) * sizeof *kids), *queue = malloc((count ? count : 1) * sizeof *queue);
    int rc = nkids && first && fill && kids && queue ? ANONKIT_OK : ak_err_nomem(err);
    for (size_t i = 1; rc == ANONKIT_OK && i < count; i++) nkids[g->nodes[i].parent]++;
    for (size_t i = 0; rc == ANONKIT_OK && i < count; i++) first[i + 1] = first[i] + nkids[i];
    if (rc == ANONKIT_OK) memcpy(fill, first, (count + 1) * sizeof *fill);
    for (size_t i = 1; rc == ANONKIT_OK && i < count; i++) kids[fill[g->nodes[i].parent]++] = (uint32_t)i;
    if (rc == ANONKIT_OK)
        rc = tree_add(r, tr, mdr_tree_rlo(g, 0), mdr_tree_rhi(g, 0), NULL, NULL, 0, g->nodes[0].median_only, err);
    size_t head = 0, tail = 0;
    if (rc == ANONKIT_OK) queue[tail++] = 0;
    while (rc == ANONKIT_OK && head < tail) {
        const uint32_t gi = queue[head];
        const size_t at = head++; /* its index in tr: nodes enter tr in queue order */
        const mdr_tree_node *gx = &g->nodes[gi];
        if (gx->split_q == UINT32_MAX || !nkids[gi]) {
            tr->nodes[at].kind = RK_LEAF;
            continue;
        }
        uint32_t *ks = kids + first[gi];
        const uint32_t q = gx->split_q;
        for (size_t a = 1; a < nkids[gi]; a++) /* insertion sort by region start (few children) */
            for (size_t b = a; b > 0 && mdr_tree_rlo(g, ks[b - 1])[q] > mdr_tree_rlo(g, ks[b])[q]; b--) {
                const uint32_t tmp = ks[b];
                ks[b] = ks[b - 1];
                ks[b - 1] = tmp;
            }
        const size_t child0 = tr->count;
        for (size_t c = 0; rc == ANONKIT_OK && c < nkids[gi]; c++) {
            rc = tree_add(r, tr, mdr_tree_rlo(g, ks[c]), mdr_tree_rhi(g, ks[c]), NULL, NULL, 0,
                          g->nodes[ks[c]].median_only, err);
            queue[tail++] = ks[c];
        }
        rk_node *x = &tr->nodes[at];
        x->kind = RK_INNER;
        x->q = q;
        x->first_child = child0;
        x->nchildren = tr->count - child0;
    }
    free(nkids);
    free(first);
    free(fill);
    free(kids);
    free(queue);
    return rc;
}

/* Whether the population of node x (its statistics after repartitioning)
 * satisfies the model. */
static int node_holds(rk *r, const rk_node *x)
{
    size_t ncounts = 0;
    if (r->need_hist)
        for (uint32_t v = 0; v < r->sdomain; v++)
            if (x->shist[v]) r->counts[ncounts++] = x->shist[v];
    return model_holds(r->m, x->part.rows, r->counts, ncounts, r->counts_scratch) &&
           model_variance_holds(r->m, &x->mom, r->values_exact);
}

/* Appends the rows of every leaf under node x, left to right, to one new
 * partition in 4-byte codes (the merge of 000 Figure 4). */
static int merge_subtree(rk *r, rk_tree *tr, size_t x, rk_part *out, ak_error *err)
{
    spill_writer wt = {0}, wp = {0};
    int rc = part_create(r, out, &wt, &wp, err);
    size_t *stack = rc == ANONKIT_OK ? malloc((tr->count + 1) * sizeof *stack) : NULL;
    if (rc == ANONKIT_OK && !stack) rc = ak_err_nomem(err);
    size_t depth = 0;
    if (rc == ANONKIT_OK) stack[depth++] = x;
    while (rc == ANONKIT_OK && depth) {
        rk_node *y = &tr->nodes[stack[--depth]];
        if (y->kind == RK_INNER) {
            for (size_t c = y->nchildren; c-- > 0;) stack[depth++] = y->first_child + c;
            continue;
        }
        rk_reader rd;
        rc = reader_open(r, &rd, &y->part, 1, err);
        uint32_t code[r->d + 2];
        const uint8_t *pay = NULL;
        size_t paylen = 0;
        while (rc == ANONKIT_OK) {
            const int more = read_row(r, &rd, &y->part, code, &pay, &paylen, err);
            if (more <= 0) {
                rc = more;
                break;
            }
            uint8_t wide[r->width];
            for (uint32_t c = 0; c < r->d + 2; c++) tuple_store_u32(wide + 4 * c, code[c]);
            memcpy(wide + 4 * (r->d + 2), rd.raw + rd.lay->extra_at, r->extra);
            rc = spill_write(&wt, wide, r->width, err);
            if (rc == ANONKIT_OK && r->ncopied) {
                uint8_t head[4];
                tuple_store_u32(head, (uint32_t)(paylen - 4 * (size_t)r->ncopied));
                rc = spill_write(&wp, head, 4, err);
                if (rc == ANONKIT_OK) rc = spill_write(&wp, pay, paylen, err);
            }
            out->rows++;
        }
        reader_close(&rd);
        part_release(r, &y->part);
    }
    if (rc == ANONKIT_OK) rc = spill_writer_flush(&wt, err);
    if (rc == ANONKIT_OK) rc = spill_writer_flush(&wp, err);
    spill_writer_free(&wt);
    spill_writer_free(&wp);
    free(stack);
    return rc;
}

static int process_sampled(rk *r, rk_part *p, const uint32_t *rlo, const uint32_t *rhi, int median_only,
                           ak_error *err);

/* A partition larger than the sample that admits no high-confidence split, or
 * whose splits were all undone: Rothko-T finishes it exactly where it can
 * (Median or InfoGain under k-anonymity and l-diversity, 000 footnote 9);
 * otherwise it is published as one class, possibly non-minimal (000 §3.2). */
static int finish_unsplit(rk *r, rk_part *p, const uint32_t *rlo, const uint32_t *rhi, int median_only,
                          ak_error *err)
{
    r->stats->no_confident_split++;
    if (r->o->split != MDR_SPLIT_REGRESSION && !r->need_mom) {
        r->stats->finished_by_rothko_t++;
        return process_partition(r, p, rlo, rhi, median_only, err);
    }
    r->stats->non_minimal++;
    const uint32_t d = r->d;
    uint32_t box_lo[d ? d : 1], box_hi[d ? d : 1];
    int rc = part_box(r, p, box_lo, box_hi, err);
    if (rc == ANONKIT_OK) rc = finish_big_class(r, p, rlo, rhi, box_lo, box_hi, err);
    part_release(r, p);
    return rc;
}

/* Processes one disk-resident partition as 000 §3 describes: a partition of
 * at most n rows (the sample size) is the sample itself and is finished by
 * the in-memory Mondrian; a larger one is sampled, a tree is grown on the
 * sample with the hypothesis tests (growth phase), the partition is divided
 * across the tree's leaves while each node's population statistics are
 * gathered (repartitioning), every node that violates the model has the
 * partitions under its parent merged (pruning), and each resulting partition
 * is processed in turn, left to right. */
static int process_sampled(rk *r, rk_part *p, const uint32_t *rlo, const uint32_t *rhi, int median_only,
                           ak_error *err)
{
    if (p->rows <= r->sample_rows) return finish_in_memory(r, p, rlo, rhi, median_only, err);
    const uint32_t d = r->d;
    rk_load l;
    size_t n = 0;
    mdr_tree grown;
    memset(&grown, 0, sizeof grown);
    rk_tree tr = {0};
    partition classes;
    memset(&classes, 0, sizeof classes);
    size_t *emit = NULL, *stack = NULL;
    rk_part *merged = NULL;
    size_t nemit = 0;
    /* the sample */
    double mark = ak_seconds();
    int rc = ANONKIT_OK, drawn = 0;
    if (p == &r->root && r->first_sample_parts) {
        drawn = sample_first_scan(r, p, (size_t)r->sample_rows, &l, &n, err);
        if (drawn < 0) rc = drawn;
        r->stats->sampled_in_first_scan = drawn == 1;
        first_sample_free(r);
    }
    if (rc == ANONKIT_OK && !drawn) rc = sample_scan(r, p, (size_t)r->sample_rows, &l, &n, err);
    r->stats->sample_seconds += ak_seconds() - mark;
    mark = ak_seconds();
    /* growth phase */
    if (rc == ANONKIT_OK) {
        sample_test st;
        rc = sample_test_init(&st, r->m, r->o->test, r->o->alpha > 0 ? r->o->alpha : 0.05, p->rows, n, err);
        /* without a depth limit, nodes whose estimated population fits in memory are not split further */
        const mdr_grow g = {.test = &st,
                            .stop_rows = r->o->growth_depth ? 0
                                                            : (uint64_t)(0.9 * (double)r->sample_rows * (double)n /
                                                                         (double)p->rows),
                            .max_depth = r->o->growth_depth,
                            .max_leaves = r->max_leaves,
                            .tree = &grown};
        table view;
        table_qi qi[d ? d : 1];
        make_view(r, &l, n, &view, qi);
        const mdr_options mo = {.threads = 1, .split = r->o->split, .min_gain = r->o->min_gain, .root_rlo = rlo,
                                .root_rhi = rhi, .root_median_only = median_only, .grow = &g};
        if (rc == ANONKIT_OK) rc = partition_init(&classes, n, d, err);
        if (rc == ANONKIT_OK) rc = mdr_run_with(&view, r->m, &mo, &classes, err);
        r->stats->growth_phases++;
    }
    partition_free(&classes);
    load_free(r, &l);
    r->stats->growth_seconds += ak_seconds() - mark;
    if (rc == ANONKIT_OK && grown.count <= 1) { /* no high-confidence split */
        mdr_tree_free(&grown);
        return finish_unsplit(r, p, rlo, rhi, median_only, err);
    }
    if (rc == ANONKIT_OK) rc = tree_from_growth(r, &grown, &tr, err);
    mdr_tree_free(&grown);
    /* repartitioning, with each node's population statistics */
    for (size_t i = 0; rc == ANONKIT_OK && i < tr.count; i++) {
        rk_node *x = &tr.nodes[i];
        x->track = 1;
        if (r->need_hist && !(x->shist = calloc(r->sdomain ? r->sdomain : 1, sizeof *x->shist))) rc = ak_err_nomem(err);
    }
    if (rc == ANONKIT_OK) rc = repartition(r, &tr, p, err);
    /* population statistics of the inner nodes, children first */
    for (size_t i = tr.count; rc == ANONKIT_OK && i-- > 0;) {
        rk_node *x = &tr.nodes[i];
        if (x->kind != RK_INNER) continue;
        for (size_t c = 0; c < x->nchildren; c++) {
            const rk_node *y = &tr.nodes[x->first_child + c];
            x->part.rows += y->part.rows;
            moments_add_into(&x->mom, &y->mom);
            if (r->need_hist)
                for (uint32_t v = 0; v < r->sdomain; v++) x->shist[v] += y->shist[v];
        }
    }
    /* pruning, top down: a node with a violating child becomes one partition */
    if (rc == ANONKIT_OK) {
        emit = malloc((tr.count + 1) * sizeof *emit);
        stack = malloc((tr.count + 1) * sizeof *stack);
        merged = calloc(tr.count + 1, sizeof *merged);
        if (!emit || !stack || !merged) rc = ak_err_nomem(err);
    }
    for (size_t i = 0; rc == ANONKIT_OK && i <= tr.count; i++) merged[i].tuples.fd = merged[i].payload.fd = -1;
    size_t depth = 0;
    if (rc == ANONKIT_OK) stack[depth++] = 0;
    while (rc == ANONKIT_OK && depth) {
        const size_t i = stack[--depth];
        const rk_node *x = &tr.nodes[i];
        if (x->kind != RK_INNER) {
            emit[nemit++] = i;
            continue;
        }
        int violated = 0;
        for (size_t c = 0; c < x->nchildren && !violated; c++) violated = !node_holds(r, &tr.nodes[x->first_child + c]);
        if (!violated) {
            for (size_t c = x->nchildren; c-- > 0;) stack[depth++] = x->first_child + c;
            continue;
        }
        /* every node below x is undone */
        size_t below = 0, sub = 0;
        size_t *sub_stack = stack + depth; /* (free space above the stack) */
        sub_stack[sub++] = i;
        while (sub) {
            const rk_node *y = &tr.nodes[sub_stack[--sub]];
            if (y->kind != RK_INNER) continue;
            for (size_t c = 0; c < y->nchildren; c++) sub_stack[sub++] = y->first_child + c, below++;
        }
        r->stats->pruned_nodes += below;
        rc = merge_subtree(r, &tr, i, &merged[i], err);
        emit[nemit++] = i;
    }
    /* recursion on each resulting partition, left to right */
    if (rc == ANONKIT_OK && nemit == 1 && emit[0] == 0) { /* every split undone: stop growing here */
        uint32_t region[2 * (d ? d : 1)];
        memcpy(region, tr.nodes[0].rlo, d * sizeof *region);
        memcpy(region + d, tr.nodes[0].rhi, d * sizeof *region);
        rc = finish_unsplit(r, &merged[0], region, region + d, tr.nodes[0].median_only, err);
    } else {
        for (size_t e = 0; rc == ANONKIT_OK && e < nemit; e++) {
            rk_node *x = &tr.nodes[emit[e]];
            rk_part *part = x->kind == RK_INNER ? &merged[emit[e]] : &x->part;
            part->provisional = 0;
            rc = process_sampled(r, part, x->rlo, x->rhi, x->median_only, err);
            part_release(r, part);
        }
    }
    for (size_t i = 0; merged && i <= tr.count; i++) part_release(r, &merged[i]);
    free(merged);
    free(emit);
    free(stack);
    tree_free(r, &tr);
    return rc;
}

/* repartitions_S(N) of 000 §4: how often Rothko-S repartitions the whole
 * table under k-anonymity, with samples of tm rows and balanced binary splits. */
uint64_t rothko_s_repartitions(uint64_t rows, uint64_t tm, uint64_t k, double alpha)
{
    uint64_t count = 0;
    double N = (double)rows;
    const double z = sample_test_z(alpha / 2);
    while (N > (double)tm) {
        const double p0 = (double)k / N, n = (double)tm < N ? (double)tm : N;
        const double bound = z * sqrt(p0 * (1 - p0) / n * ((N - n) / (N - 1)));
        int levels = 0;
        while (levels < 64 && ldexp(1.0, -(levels + 1)) - p0 >= bound) levels++;
        if (levels == 0) break; /* non-minimal partitioning */
        count++;
        N = N / ldexp(1.0, levels);
    }
    return count;
}

/* Fails with ANONKIT_E_INELIGIBLE unless the whole table (its sensitive
 * statistics gathered by the first scan) satisfies the model. */
static int check_whole(rk *r, uint64_t rows, ak_error *err)
{
    size_t ncounts = 0;
    for (size_t v = 0; r->sens_count && v < r->sdomain; v++)
        if (r->sens_count[v]) r->counts[ncounts++] = r->sens_count[v];
    char why[256] = "";
    if (!model_explain(r->m, rows, r->counts, ncounts, r->counts_scratch, why, sizeof why))
        return ak_err_set(err, ANONKIT_E_INELIGIBLE, NULL, 0, 0,
                          "the whole table does not satisfy the privacy model (%s), so no anonymization can", why);
    if (!model_variance_holds(r->m, &r->all_mom, r->values_exact))
        return ak_err_set(err, ANONKIT_E_INELIGIBLE, NULL, 0, 0,
                          "the whole table does not satisfy the privacy model (variance of the sensitive values %.6Lg "
                          "< %g), so no anonymization can",
                          model_moments_variance(&r->all_mom, r->values_exact), r->m->variance);
    return ANONKIT_OK;
}

/* ------------------------------------------------------------ the run */

/* Bytes per row of a partition finished in memory: the loaded codes and
 * copied fields, the in-memory Mondrian's work rows and buffers, the output. */
static size_t bytes_per_row(const rk *r, double payload_per_row)
{
    const size_t d = r->d;
    return 4 * d + 8               /* loaded codes, sensitive, class */
           + 8 * (d + 2)           /* work rows and their regrouping copy */
           + 20                    /* selection, ordering, counting */
           + 4                     /* class_of */
           + 8 * (r->ncopied + 1)  /* copied field offsets */
           + 16                    /* output order and composition */
           + 8 * (size_t)(r->has_sval + r->has_target) /* numeric sensitive value, target (Rothko-S) */
           + (size_t)(2 * payload_per_row) + 16;
}

/* Bytes the dictionaries of the schema hold. */
static size_t schema_bytes(const table *t)
{
    size_t bytes = 0;
    for (uint32_t q = 0; q < t->nqi; q++) {
        const table_qi *a = &t->qi[q];
        bytes += (size_t)a->ncodes * (a->kind == ATTR_NUMERIC ? (a->texts ? 24 : 8) : 64);
        bytes += numdict_map_bytes(&a->prov, a->ncodes);
    }
    bytes += (size_t)(t->sensitive_dict.count + t->class_dict.count) * 64;
    return bytes;
}

int rothko_run(const table_spec *spec_in, const model *m, const rothko_options *o, rothko_leaf_fn leaf_fn, void *ctx,
               table **schema, rothko_stats *stats, ak_error *err)
{
    *schema = NULL;
    memset(stats, 0, sizeof *stats);
    rk r;
    memset(&r, 0, sizeof r);
    r.m = m;
    r.o = o;
    r.block = o->block ? o->block : SPILL_DEFAULT_BLOCK;
    r.leaf_fn = leaf_fn;
    r.ctx = ctx;
    r.stats = stats;
    r.root.tuples.fd = r.root.payload.fd = -1;
    r.tail_tuples.fd = r.tail_payload.fd = -1;
    r.root.provisional = 1;
    if (o->split == MDR_SPLIT_REGRESSION && !o->sampling)
        return ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0,
                          "rothko-t cannot use --split regression (its statistics do not fit frequency groups; 000 §2): "
                          "use rothko-s");
    if (m->variance > 0 && !o->sampling)
        return ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0,
                          "rothko-t cannot check variance diversity (its statistics do not fit frequency groups; 000 §2): "
                          "use rothko-s");
    r.need_mom = m->variance > 0;
    r.values_exact = 1;
    ak_rng_seed(&r.rng, o->seed);
    int rc = spill_dir_create(&r.dir, o->tmpdir, err);
    if (rc < 0) return rc;
    const size_t path_len = strlen(r.dir.path);
    if (o->spill_notice && path_len < o->spill_notice_size) { /* the first byte last: a handler sees all or nothing */
        for (size_t i = 1; i <= path_len; i++) o->spill_notice[i] = r.dir.path[i];
        o->spill_notice[0] = r.dir.path[0];
    }
    table_spec spec = *spec_in;
    spec.sink_start = sink_start;
    spec.row_sink = sink_row;
    spec.sink_ctx = &r;
    struct stat input;
    if (o->sampling && stat(spec.path, &input) == 0 && input.st_size > 0)
        r.rows_estimate = csv_estimate_lines(spec.path, 0, (uint64_t)input.st_size);
    const double scan_start = ak_seconds();
    if ((rc = table_load(&r.t, &spec, err)) < 0) goto done;
    if ((rc = sink_finish(&r, err)) < 0) goto done;
    stats->first_scan_seconds = ak_seconds() - scan_start;
    const table *t = r.t;
    stats->rows = t->nrows;
    const mdr_options checked = {.split = o->split};
    if ((rc = mdr_check_inputs(t, m, &checked, err)) < 0) goto done;
    if (m->k > t->nrows) {
        rc = ak_err_set(err, ANONKIT_E_INELIGIBLE, NULL, 0, 0, "--k %llu is larger than the table, which has %zu rows",
                        (unsigned long long)m->k, t->nrows);
        goto done;
    }
    r.need_hist = m->l > 0;
    r.infogain = o->split == MDR_SPLIT_INFOGAIN;
    r.sdomain = r.need_hist ? t->sensitive_dict.count : 1;
    r.cdomain = r.infogain ? t->class_dict.count : 1;
    r.counts = malloc((r.sdomain + 1) * sizeof *r.counts);
    r.counts_scratch = malloc((r.sdomain + 1) * sizeof *r.counts_scratch);
    if (!r.counts || !r.counts_scratch || ak_hist_init(&r.whole, r.sdomain) ||
        ak_hist_init(&r.left, r.sdomain) || ak_hist_init(&r.child, r.sdomain) || ak_hist_init(&r.cls_whole, r.cdomain) ||
        ak_hist_init(&r.cls_left, r.cdomain) || ak_hist_init(&r.cls_group, r.cdomain)) {
        rc = ak_err_nomem(err);
        goto done;
    }
    /* TM: what is left of the budget after the dictionaries and the buffers */
    const uint64_t payload_bytes = r.root.payload.size + (r.root.tail_payload ? r.root.tail_payload->size : 0);
    const double payload_per_row = t->nrows ? (double)payload_bytes / (double)t->nrows : 0;
    /* (the program itself, its stacks and the allocator lie in the 16 MB the budget does not cover) */
    const size_t fixed = schema_bytes(t) + 8 * r.block;
    const size_t per_row = bytes_per_row(&r, payload_per_row);
    if (o->memory <= fixed + 100 * per_row) {
        rc = ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0,
                        "--memory %zu bytes is too small for this table: its dictionaries and buffers take %zu bytes "
                        "and a partition of 100 rows %zu more",
                        o->memory, fixed, 100 * per_row);
        goto done;
    }
    r.tm = (o->memory - fixed) / per_row;
    r.fg_budget = (o->memory - fixed) / 4 * 3; /* the rest: hash tables' slack */
    stats->tm_rows = r.tm;
    if (o->sampling) {
        r.sample_rows = o->sample_rows && o->sample_rows < r.tm ? o->sample_rows : r.tm;
        stats->sample_rows = r.sample_rows;
        /* a leaf of a growth phase holds its write buffers and, with its
         * ancestors, sensitive histograms; at most 256 (open files) */
        const size_t per_leaf = (r.ncopied ? 2 : 1) * r.block + (r.need_hist ? 8 * (size_t)r.sdomain : 0) +
                                sizeof(rk_node) + 40 * r.d;
        r.max_leaves = (o->memory - fixed) / per_leaf;
        if (r.max_leaves > 256) r.max_leaves = 256;
        if (r.max_leaves < 2) {
            rc = ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0,
                            "--memory %zu bytes is too small for rothko-s to repartition this table (a leaf takes %zu "
                            "bytes: its buffers and sensitive histogram)",
                            o->memory, per_leaf);
            goto done;
        }
    }
    /* The whole table must satisfy the model (checked from the statistics of the first scan). */
    if ((rc = check_whole(&r, t->nrows, err)) < 0) goto done;
    if (t->nrows) {
        uint32_t rlo[r.d ? r.d : 1], rhi[r.d ? r.d : 1];
        for (uint32_t q = 0; q < r.d; q++) {
            rlo[q] = 0;
            rhi[q] = t->qi[q].ncodes ? t->qi[q].ncodes - 1 : 0;
        }
        rc = o->sampling ? process_sampled(&r, &r.root, rlo, rhi, 0, err)
                         : process_partition(&r, &r.root, rlo, rhi, 0, err);
        if (rc < 0) goto done;
    }
    /* 000 §4 */
    stats->data_blocks = ((uint64_t)t->nrows * r.width + r.block - 1) / r.block;
    stats->blocks_read = r.tuple_io.blocks_read;
    stats->blocks_written = r.tuple_io.blocks_written;
    stats->payload_blocks_read = r.payload_io.blocks_read;
    stats->payload_blocks_written = r.payload_io.blocks_written;
    {
        const double ratio = (double)t->nrows / (double)r.tm;
        const uint64_t height = ratio > 1 ? (uint64_t)ceil(log2(ratio)) : 0;
        const unsigned f = stats->fcache ? stats->fcache : 1;
        const uint64_t per = (uint64_t)floor(log2((double)f)) + 1;
        const uint64_t reparts = (height + per - 1) / per;
        stats->model_height = height;
        stats->model_repartitions = reparts;
        stats->model_reads = stats->data_blocks * (height + reparts + 1);
        stats->model_writes = stats->data_blocks * reparts;
        if (o->sampling) {
            const uint64_t rs = rothko_s_repartitions(t->nrows, r.sample_rows, m->k, o->alpha > 0 ? o->alpha : 0.05);
            stats->model_repartitions = rs;
            stats->model_reads = stats->data_blocks * (2 * rs + 1);
            stats->model_writes = stats->data_blocks * rs;
        }
    }
    rc = ANONKIT_OK;
done:
    part_pool_drain(&r);
    for (unsigned i = 0; i < 2; i++) piece_free(&r.piece[i]);
    first_sample_free(&r);
    spill_file_close(&r.root.tuples);
    spill_file_close(&r.root.payload);
    spill_file_close(&r.tail_tuples);
    spill_file_close(&r.tail_payload);
    if (o->spill_notice && o->spill_notice_size) o->spill_notice[0] = '\0';
    spill_dir_remove(&r.dir);
    free(r.copied_col);
    free(r.counts);
    free(r.counts_scratch);
    free(r.sens_count);
    ak_hist_free(&r.whole);
    ak_hist_free(&r.left);
    ak_hist_free(&r.child);
    ak_hist_free(&r.cls_whole);
    ak_hist_free(&r.cls_left);
    ak_hist_free(&r.cls_group);
    if (rc < 0) {
        table_free(r.t);
        return rc;
    }
    *schema = r.t;
    return ANONKIT_OK;
}
