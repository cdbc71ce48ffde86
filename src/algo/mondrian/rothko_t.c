/* rothko_t.c — Rothko-T over one disk-resident partition ([LeFevre07] §2.1): leaves
 * loaded and finished by the in-memory Mondrian, scans that count the open
 * nodes' frequency groups or repartition the tuples across the leaves (on
 * two threads for large partitions), and the partition's processing. */
#include "algo/mondrian/rothko_internal.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/compare.h"
#include "common/parallel.h"
#include "common/progress.h"

/* ------------------------------------------------------------ leaves */


void rk_load_free(rk *r, rk_load *l)
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


/* Room in l for `cap` rows: codes, sensitive and class codes, the doubles
 * the tuples carry, and with `copied` the offsets of their copied fields. */
int rk_load_alloc(const rk *r, rk_load *l, size_t cap, int copied, ak_error *err)
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
    if (!l->codes) AK_CHECK(rk_load_alloc(r, l, (size_t)limit, 1, err));
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
            rk_layout_column(rd->lay, c, raw, count, col);
            if (p->provisional) rk_root_column(r, c, col, count, rd->row, 1);
        }
        rd->row += count;
        for (size_t i = 0; r->extra && i < count; i++) load_values(r, rd->lay, l, n + i, raw + i * rd->lay->width);
        for (size_t i = 0; rd->with_payload && i < count; i++) {
            const uint8_t *pay;
            size_t paylen;
            AK_CHECK(rk_read_payload(r, rd, &pay, &paylen, err));
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
void rk_make_view(const rk *r, const rk_load *l, size_t n, table *view, table_qi *qi)
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
int rk_finish_in_memory(rk *r, rk_part *p, const uint32_t *rlo, const uint32_t *rhi, int median_only,
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
    int rc = rk_reader_open(r, &rd, p, 1, err);
    if (rc == ANONKIT_OK) rc = load_rows(r, &rd, p, p->rows, &l, &n, err);
    rk_reader_close(&rd);
    rk_part_release(r, p);
    if (rc == ANONKIT_OK) {
        rk_make_view(r, &l, n, &view, qi);
        const mdr_options mo = {.threads = r->o->threads, .split = r->o->split, .min_gain = r->o->min_gain,
                                .root_rlo = rlo, .root_rhi = rhi, .root_median_only = median_only};
        rc = partition_init(&classes, n, r->d, err);
        if (rc == ANONKIT_OK) rc = mdr_run_with(&view, r->m, &mo, &classes, err);
        if (rc == ANONKIT_OK) rc = rk_leaf(r, &view, &classes, l.copied.data, l.off, err);
        r->stats->partitions_in_memory++;
    }
    partition_free(&classes);
    rk_load_free(r, &l);
    r->stats->in_memory_seconds += ak_seconds() - mark;
    return rc;
}

/* Publishes a class larger than memory (no allowable split) in chunks of TM rows. */
int rk_finish_big_class(rk *r, rk_part *part, const uint32_t *rlo, const uint32_t *rhi, const uint32_t *lo,
                        const uint32_t *hi, ak_error *err)
{
    rk_reader rd;
    rk_load l;
    memset(&l, 0, sizeof l);
    partition classes;
    memset(&classes, 0, sizeof classes);
    table view;
    table_qi qi[r->d];
    int rc = rk_reader_open(r, &rd, part, 1, err);
    for (int continued = 0; rc == ANONKIT_OK; continued = 1) {
        size_t n = 0;
        if ((rc = load_rows(r, &rd, part, r->tm, &l, &n, err)) < 0 || n == 0) break;
        rk_make_view(r, &l, n, &view, qi);
        partition_free(&classes);
        uint32_t id;
        if ((rc = partition_init(&classes, n, r->d, err)) < 0) break;
        if ((rc = partition_add_class_in(&classes, lo, hi, rlo, rhi, part->rows, &id, err)) < 0) break;
        memset(classes.class_of, 0, n * sizeof *classes.class_of);
        rc = r->leaf_fn(r->ctx, &view, &classes, l.copied.data, l.off, continued, err);
    }
    rk_reader_close(&rd);
    partition_free(&classes);
    rk_load_free(r, &l);
    return rc;
}

/* ------------------------------------------------------------ one disk-resident partition ([LeFevre07] §2.1) */


int rk_batch_init(const rk *r, rk_batch *b, ak_error *err)
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

void rk_batch_free(rk_batch *b)
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
void rk_batch_decode(const rk *r, const rk_part *p, rk_reader *rd, const uint8_t *raw, size_t n,
                     const uint8_t *need, rk_batch *b)
{
    for (uint32_t c = 0; c < r->d + 2; c++) {
        if (!need[c]) continue;
        uint32_t *col = b->code + c * b->stride;
        rk_layout_column(rd->lay, c, raw, n, col);
        if (p->provisional) rk_root_column(r, c, col, n, rd->row, !b->provisional[c]);
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
                    if (!x->transcode) rk_layout_column(rd->lay, r->d, raw + i * width, 1, &v);
                    x->shist[v]++;
                }
                if (r->has_sval) model_moments_add(&x->mom, tuple_sval(rd->lay, raw + i * width));
            }
        }
        if (x->transcode) {
            rk_layout_rows(&x->lay, r->d + 2, r->extra, b->code, b->stride, rows, m, raw, rd->lay, b->tuples);
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
        AK_CHECK(rk_read_payload(r, rd, &pay, &paylen, err));
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
    rk_layout_rows(lay, r->d + 2, r->extra, b->code, b->stride, NULL, n, raw, src, b->tuples);
    AK_CHECK(spill_write(w, b->tuples, n * lay->width, err));
    r->stats->rows_written += n;
    return ANONKIT_OK;
}

/* ---- repartitioning on two threads ---- */

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
 * payload, the tree's leaves and their writers.
 *
 * This is not an ak_pipeline (common/parallel.h), whose workers may each
 * produce any item: the chunks here come off one sequential reader, in file
 * order, and their number is known only at the end of the file, so one
 * long-lived thread decodes them all while the caller consumes. */
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
        rk_batch_decode(r, pp->p, rd, c->raw, n, pp->need, &c->b);
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
    int rc = rk_reader_open(r, &rd, p, 1, err);
    for (unsigned k = 0; rc == ANONKIT_OK && k < RK_PIPE_CHUNKS; k++) {
        rk_chunk *c = &pp.chunk[k];
        rc = rk_batch_init(r, &c->b, err);
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
        rk_batch_free(&pp.chunk[k].b);
        free(pp.chunk[k].raw);
    }
    rk_reader_close(&rd);
    if (rc != 1) r->stats->scans++;
    return rc;
}

/* One scan of p, a block at a time: rows routed through the tree to open
 * nodes' frequency groups, or (repartition) to the leaves' files ([LeFevre07] §2.1).
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
    int rc = rk_reader_open(r, &rd, p, repartition, err);
    if (rc == ANONKIT_OK) rc = rk_batch_init(r, &b, err);
    if (rc == ANONKIT_OK) rc = router_build(tr, &b, err);
    /* A partition's first count of the root file ranks only the QIs it
     * counts: the others want just their box, and integer codes (value plus
     * a bias) are in value order, so their least and greatest are ranked
     * alone. Ranking is a lookup in a table as wide as the values' range. */
    const fgroup *only = tr->count == 1 ? tr->nodes[0].fg : NULL;
    for (uint32_t c = 0; rc == ANONKIT_OK && c < r->d; c++)
        b.provisional[c] = !repartition && !copy && only && !only->counted[c] && rk_ranked_later(r, p, c);
    while (rc == ANONKIT_OK) {
        const uint8_t *raw;
        size_t n;
        int got = spill_read_records(&rd.tuples, rd.lay->width, b.cap, &raw, &n, err);
        if (got <= 0) {
            rc = got;
            break;
        }
        rk_batch_decode(r, p, &rd, raw, n, need, &b);
        if (repartition) route_batch(&b, n, b.node);
        rc = repartition ? batch_write(r, tr, &rd, raw, &b, n, err) : batch_count(r, tr, &b, n, err);
        if (rc == ANONKIT_OK && copy) rc = batch_copy(r, &b, raw, rd.lay, n, copy, copy_lay, err);
        if (rc == ANONKIT_OK) rc = ak_progress_check(r->o->progress, err); /* cancelled: stop at this batch */
    }
    rk_batch_free(&b);
    rk_reader_close(&rd);
    r->stats->scans++;
    return rc;
}

/* Creates the (empty) files of a new partition and a writer for each (no
 * payload file when no column is copied: creating files is not free). */
int rk_part_create(rk *r, rk_part *part, spill_writer *wt, spill_writer *wp, ak_error *err)
{
    AK_CHECK(rk_part_file_open(r, &part->tuples, err));
    AK_CHECK(spill_writer_init(wt, &part->tuples, &r->dir, r->block, &r->tuple_io, err));
    if (!r->ncopied) return ANONKIT_OK;
    AK_CHECK(rk_part_file_open(r, &part->payload, err));
    return spill_writer_init(wp, &part->payload, &r->dir, r->block, &r->payload_io, err);
}

/* Divides the rows of p across the leaves of tr in one scan ([LeFevre07] §2.1, §3),
 * each leaf stored in the narrowest layout its codes (within clo..chi) allow
 * when that is at least a quarter narrower than p's (and always from the
 * root file, whose codes are ranked on the way), else as read; then releases
 * p's files: its rows now live in the leaves. */
int rk_repartition(rk *r, rk_tree *tr, rk_part *p, ak_error *err)
{
    AK_CHECK(ak_progress_pass(r->o->progress, (unsigned)r->stats->repartitions + 1, r->passes, err));
    rk_layout from = {0};
    int rc = p->layout ? ANONKIT_OK : rk_layout_wide(r, &from, err);
    const rk_layout *src = p->layout ? p->layout : &from;
    for (size_t i = 0; rc == ANONKIT_OK && i < tr->count; i++) {
        rk_node *x = &tr->nodes[i];
        if (x->kind != RK_LEAF) continue;
        rc = rk_layout_fit(r, x->clo, x->chi, &x->lay, err);
        if (rc < 0) break;
        /* (re-encoding costs a decode and encode of every column a row; a
         * byte or two less a tuple saves less than that in later scans) */
        x->transcode = p->provisional || 4 * x->lay.width <= 3 * src->width;
        if (!x->transcode && (rc = rk_layout_copy(r, src, &x->lay, err)) < 0) break;
        x->part.layout = &x->lay;
        x->part.lo = x->clo;
        x->part.hi = x->chi;
        rc = rk_part_create(r, &x->part, &x->wt, &x->wp, err);
    }
    rk_layout_free(&from);
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
    rk_part_release(r, p);
    return rc;
}

int rk_process_partition(rk *r, rk_part *p, const uint32_t *rlo, const uint32_t *rhi, int median_only,
                         ak_error *err)
{
    if (p->rows <= r->tm) return rk_finish_in_memory(r, p, rlo, rhi, median_only, err);
    if (p->rows > UINT32_MAX)
        return ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0,
                          "rothko-t counts a partition's values in 32 bits: at most 4294967295 rows");
    rk_tree tr = {0};
    int rc = rk_tree_add(r, &tr, rlo, rhi, p->lo, p->hi, p->rows, median_only, err);
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
        rc = rk_layout_fit(r, tr.nodes[0].clo, tr.nodes[0].chi, &copy_lay, err);
        if (rc == ANONKIT_OK) rc = rk_part_file_open(r, &copy, err);
        if (rc == ANONKIT_OK) rc = spill_writer_init(&copy_w, &copy, &r->dir, r->block, &r->tuple_io, err);
    }
    /* Leaves written at once when repartitioning: two buffers each. */
    const size_t max_leaves = r->o->memory / 4 / (2 * r->block) > 2 ? r->o->memory / 4 / (2 * r->block) : 2;
    while (rc == ANONKIT_OK) {
        /* frequency groups of the open nodes (a level of the tree, and nodes
         * to count again in full), in one scan */
        size_t need = 0, groups = 0;
        for (size_t i = 0; i < tr.count; i++)
            if (tr.nodes[i].kind == RK_OPEN) need += rk_av_bytes(r, &tr.nodes[i], NULL), groups++;
        if (need > r->fg_budget) {
            rc = ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0,
                            "--memory is too small for one frequency group of this table (%zu bytes of %zu available)",
                            need, r->fg_budget);
            break;
        }
        if (groups > r->stats->fcache) r->stats->fcache = (unsigned)groups;
        for (size_t i = 0; rc == ANONKIT_OK && i < tr.count; i++)
            if (tr.nodes[i].kind == RK_OPEN) rc = rk_fgroup_new(r, &tr.nodes[i], &tr.nodes[i].fg, err);
        if (rc == ANONKIT_OK) rc = scan(r, &tr, p, 0, copy.fd >= 0 ? &copy_w : NULL, &copy_lay, err);
        if (rc == ANONKIT_OK && copy.fd >= 0) { /* from now on p is the ranked copy */
            rc = spill_writer_flush(&copy_w, err);
            spill_writer_free(&copy_w);
            rk_part_file_release(r, &p->tuples);
            if (p->tail_tuples) rk_part_file_release(r, p->tail_tuples);
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
            rk_fgroup_pair_bytes(r, x->fg, &pair_bytes);
            for (uint32_t q = 0; q < r->d; q++) rk_av_finish(&x->fg->av[q]);
            uint32_t lo[r->d], hi[r->d];
            rk_fg_box(r, x, lo, hi);
            /* ak_hist of the node's sensitive values, from the pairs of any counted QI */
            if (r->need_hist) {
                uint32_t q = 0;
                while (!x->fg->counted[q]) q++; /* (at least RK_PREDICTED or all QIs are counted) */
                ak_hist_clear(&r->whole);
                if ((rc = rk_pairset_sort(&x->fg->avs[q], err)) < 0) break;
                rk_add_pairs(&x->fg->avs[q], x->clo[q], x->chi[q], &r->whole);
            }
            mdr_choice s;
            int split = rk_choose(r, x, lo, hi, &s, rows_in, err);
            if (split < 0) {
                rc = split;
                break;
            }
            if (split == 2) {
                x->count_all = 1; /* stays open */
                r->stats->recounted_nodes++;
            } else if (split) {
                rc = rk_make_children(r, &tr, i, &s, lo, hi, rows_in, err);
                x = &tr.nodes[i];
            } else {
                x->kind = RK_LEAF; /* a class: no allowable split */
                x->is_class = 1;
                memcpy(x->blo, lo, sizeof lo);
                memcpy(x->bhi, hi, sizeof hi);
            }
            if (rc == ANONKIT_OK) {
                rk_fgroup_free(r, x->fg);
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
            next_need += rk_av_bytes(r, &tr.nodes[i], &hashed) + pair_bytes * hashed;
        }
        if (next_open == 0 || next_open > fcache || next_need > r->fg_budget || leaves + next_open > max_leaves) {
            for (size_t i = 0; i < tr.count; i++)
                if (tr.nodes[i].kind == RK_OPEN) tr.nodes[i].kind = RK_LEAF;
            break;
        }
    }
    /* repartition across the leaves */
    if (rc == ANONKIT_OK) rc = rk_repartition(r, &tr, p, err);
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
            rc = rk_finish_big_class(r, &x->part, x->rlo, x->rhi, x->blo, x->bhi, err);
        } else {
            rc = rk_process_partition(r, &x->part, x->rlo, x->rhi, x->median_only, err);
        }
        rk_part_release(r, &x->part);
        rk_fgroup_free(r, x->fg);
        x->fg = NULL;
    }
    free(stack);
    free(rows_in);
    rk_tree_free(r, &tr);
    if (p->layout == &copy_lay) p->layout = NULL;
    rk_layout_free(&copy_lay);
    spill_writer_free(&copy_w);
    rk_part_file_release(r, &copy);
    return rc;
}
