/* rothko.c — Rothko-T, exact out-of-core Mondrian ([LeFevre07] §2, RainForest style);
 * this file: sizes, the first scan and the run (the others: rothko_internal.h).
 *
 * The first scan streams the CSV into a spill file of fixed-width tuples (QI
 * codes, sensitive code, class code; numeric codes still provisional) and a
 * companion file with the escaped copied columns of each row, which travel
 * with the tuples so that the output never needs the input again.
 *
 * A disk-resident partition larger than TM rows (what the in-memory Mondrian
 * can hold within the budget) is processed as in [LeFevre07] §2.1: one scan builds the
 * frequency groups of the open nodes — per QI the AV set (value counts), with
 * the AVS set (value, sensitive value) for l-diversity and the AVC set (value,
 * class label) for InfoGain — and each node's split is chosen from them by
 * the code that chooses the in-memory algorithm's from the rows (split.c: one
 * order of dimensions, medians, sweeps, scores, tolerances and ties). While the
 * children's groups fit (F_CACHE) the tree grows breadth-first with one more
 * scan; then one scan repartitions the tuples across the leaves, and each
 * child partition is processed in turn, depth-first. A partition of at most TM
 * rows is loaded and finished by the in-memory Mondrian, started from its node's
 * region, so the classes, their boxes and regions are those of the in-memory
 * run. The finished partitions go to a callback in depth-first order, which is
 * how the recoding rules are written without holding the tree ([LeFevre07] §2.2).
 *
 * Rothko-S ([LeFevre07] §3, process_sampled) shares the spill files, the leaves and
 * the repartitioning: a partition larger than the sample is sampled in one
 * scan (reservoir sampling), a tree is grown on the sample by mondrian.c's
 * growth phase (splits through the hypothesis tests of sampletest.c), the
 * partition is repartitioned across its leaves while each node's population
 * statistics are counted, nodes with a violating child are merged (pruning),
 * and each resulting partition is processed in turn. Its tuples also carry
 * the numeric sensitive value and the regression target, which frequency
 * groups cannot summarize but samples can. */

#include "algo/mondrian/rothko_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/clock.h"
#include "io/csv.h"
#include "common/progress.h"

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

int rk_dist_holds(rk *r, uint64_t count, const ak_hist *h, int minus)
{
    return model_dist_hist_holds(&r->m->dist, r->m->ref, r->work, count, &r->whole, h, minus, r->codes, r->counts);
}

void rk_moments_add_into(model_moments *into, const model_moments *mo)
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

void rk_first_sample_free(rk *r)
{
    for (unsigned i = 0; i < 2; i++) bottomk_free(&r->first_sample[i]);
    r->first_sample_parts = 0;
}


static size_t bytes_per_row(const rk *r, double payload_per_row);

/* Rothko-S: sets up each of the first scan's pieces to keep the least
 * priorities of its rows, enough for the largest sample the budget can allow
 * ([LeFevre07] §3: the root's sample taken while the input is read). With two
 * pieces each keeps a little over half of that: the rows of the sample are
 * spread over the pieces about as their rows are, and should a piece's share
 * exceed what it kept, sample_first_scan says so and the root is sampled by
 * a scan after all. */
static int first_sample_start(rk *r, unsigned pieces, ak_error *err)
{
    rk_first_sample_free(r);
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
        if (tuples->fd < 0) AK_CHECK(rk_part_file_open(r, tuples, err));
        if (payload->fd < 0) AK_CHECK(rk_part_file_open(r, payload, err));
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
    if ((r->m->l > 0 || model_has_dist(r->m)) && t->sensitive_column >= 0) { /* codes come in order of first appearance */
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
    if ((r->m->l > 0 || model_has_dist(r->m)) && t->sensitive_column >= 0 && !(r->sens_count = calloc(t->sensitive_dict.count + 1, sizeof *r->sens_count)))
        return ak_err_nomem(err);
    for (unsigned i = 0; i < r->npieces; i++) {
        rk_piece *pc = &r->piece[i];
        AK_CHECK(spill_writer_flush(&pc->tuples, err));
        AK_CHECK(spill_writer_flush(&pc->payload, err));
        r->stats->first_scan_blocks_written += pc->tuple_io.blocks_written;
        r->root.rows += pc->rows;
        r->values_exact &= pc->values_exact;
        rk_moments_add_into(&r->all_mom, &pc->mom);
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
                          "rothko-t cannot use --split regression (its statistics do not fit frequency groups; [LeFevre07] §2): "
                          "use rothko-s");
    if (m->variance > 0 && !o->sampling)
        return ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0,
                          "rothko-t cannot check variance diversity (its statistics do not fit frequency groups; [LeFevre07] §2): "
                          "use rothko-s");
    r.need_mom = m->variance > 0;
    r.values_exact = 1;
    ak_rng_seed(&r.rng, o->seed);
    int rc = spill_dir_create(&r.dir, o->tmpdir, err);
    if (rc < 0) return rc;
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
    if (model_has_dist(m) && t->sensitive_column >= 0) { /* the reference: the first scan's counts */
        uint64_t *counts = calloc(t->sensitive_dict.count + 1, sizeof *counts);
        if (!counts) { rc = ak_err_nomem(err); goto done; }
        for (uint32_t v = 0; v < t->sensitive_dict.count; v++) counts[v] = r.sens_count[v];
        rc = model_ref_for(&m->dist, &t->sensitive_dict, counts, t->column_names[t->sensitive_column], &r.ref, err);
        free(counts);
        if (rc < 0) goto done;
        r.mref = *m;
        r.mref.ref = r.ref;
        r.m = m = &r.mref;
        if (!(r.work = model_work_new(r.ref)) || !(r.codes = malloc((t->sensitive_dict.count + 1) * sizeof *r.codes))) {
            rc = ak_err_nomem(err);
            goto done;
        }
    }
    const uint32_t *rank_weights = r.work ? model_dist_weights(&m->dist, r.ref) : NULL;
    const mdr_options checked = {.split = o->split};
    if ((rc = mdr_check_inputs(t, m, &checked, err)) < 0) goto done;
    if (m->k > t->nrows) {
        rc = ak_err_set(err, ANONKIT_E_INELIGIBLE, NULL, 0, 0, "--k %llu is larger than the table, which has %zu rows",
                        (unsigned long long)m->k, t->nrows);
        goto done;
    }
    r.need_hist = m->l > 0 || model_has_dist(m);
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
    r.whole.weight = r.left.weight = rank_weights; /* t-closeness's lower bound (model_dist_may_hold) */
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
    if ((rc = rk_check_whole(&r, t->nrows, err)) < 0) goto done;
    if (t->nrows > r.tm) { /* about as many repartitions as inner nodes of the tree above the partitions finished in
                              memory, which hold 2/3 TM rows on average; Rothko-S grows about 4 children per scan */
        const double passes = (double)t->nrows / (double)r.tm * (o->sampling ? 0.375 : 0.75) - 0.5;
        r.passes = passes < 1 ? 1 : passes > 1e9 ? 1000000000u : (unsigned)(passes + 0.5);
    }
    if ((rc = ak_progress_phase(o->progress, ANONKIT_PHASE_PARTITIONING, t->nrows, 0, err)) < 0) goto done;
    if (t->nrows) {
        uint32_t rlo[r.d ? r.d : 1], rhi[r.d ? r.d : 1];
        for (uint32_t q = 0; q < r.d; q++) {
            rlo[q] = 0;
            rhi[q] = t->qi[q].ncodes ? t->qi[q].ncodes - 1 : 0;
        }
        rc = o->sampling ? rk_process_sampled(&r, &r.root, rlo, rhi, 0, err)
                         : rk_process_partition(&r, &r.root, rlo, rhi, 0, err);
        if (rc == ANONKIT_OK) rc = rk_leaf_waiting(&r, err); /* missing numbers: the parts that waited */
        if (rc < 0) goto done;
    }
    /* [LeFevre07] §4 */
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
    rk_part_pool_drain(&r);
    for (unsigned i = 0; i < 2; i++) piece_free(&r.piece[i]);
    rk_first_sample_free(&r);
    spill_file_close(&r.root.tuples);
    spill_file_close(&r.root.payload);
    spill_file_close(&r.tail_tuples);
    spill_file_close(&r.tail_payload);
    spill_dir_remove(&r.dir);
    rk_load_free(&r, &r.waiting);
    free(r.copied_col);
    free(r.counts);
    free(r.counts_scratch);
    free(r.sens_count);
    free(r.codes);
    model_work_free(r.work);
    model_ref_free(r.ref);
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
