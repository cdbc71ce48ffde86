/* publish.c — recode and write (docs/ARCHITECTURE.md §3 step 3).
 *
 * The published value of every (class, QI) is formatted and escaped once.
 * Columns that are neither QI nor identifier are copied through: the input is
 * read a second time for them (and not at all when there are none), on two
 * threads in two pieces when it is large. Adjacent copied columns are held
 * as one unit, and when the reader's bytes of such a run are already its CSV
 * form (csv_run_is_plain) they are taken as they are, without a field-by-field
 * escape. Rows are shuffled with Fisher-Yates and the run's seed unless input
 * order is kept, since the order of rows can itself re-identify people; only
 * the copied columns' bytes are held for that, never whole output rows.
 * Output rows are composed in blocks by up to two threads, each writing its
 * blocks in turn while the other composes, so that the writes overlap the
 * composing. The copied columns' second read is proven to read what the
 * load read (io/digest.h; copied.c) before any row made from it is written:
 * with the order kept, block by block of the input. Streamed output
 * (partition by partition, for the out-of-core
 * algorithms) is composed in small blocks which, with more than one thread,
 * the writer's own thread writes (csv_writer_background); a partition's
 * rows are then composed on a thread of the stream's while the caller goes
 * on with the algorithm (stream_composer).
 *
 * Files: format.c formats the classes' texts and composes rows from them,
 * copied.c reads the copied columns, this file writes; publish_internal.h is
 * what they share. */
#include "publish/publish_internal.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "common/hugemem.h"
#include "common/parallel.h"
#include "common/rng.h"
#include "common/strbuf.h"
#include "io/csv.h"
#include "io/outfile.h"
#include "common/progress.h"

/* Rows composed per block. */
#define PUBLISH_BLOCK_ROWS 65536

/* Output written between two calls of outfile_write_behind. */
#define PUBLISH_WRITE_BEHIND_BYTES ((uint64_t)16 << 20)

/* The streamed output with more than one thread: written by the writer's
 * thread (csv_writer_background) from this many buffers of this size, plus
 * the one being composed; blocks end once they pass the size less a margin
 * for the last row. Small blocks are written while still in the caches: on
 * the 10M-row benchmark 512 KiB blocks cost the kernel's copy into the page
 * cache a fraction of what blocks of 65536 rows (some 4.6 MB) did, and 5 x
 * 512 KiB is little beside the memory budgets of the out-of-core runs. */
#define PUBLISH_STREAM_BUFS 4
#define PUBLISH_STREAM_BUF_BYTES ((size_t)512 << 10)
#define PUBLISH_STREAM_BLOCK_BYTES (PUBLISH_STREAM_BUF_BYTES - ((size_t)64 << 10))

/* ---- composing and writing blocks of rows ---- */

/* Blocks of output rows shared by up to two threads: each composes its
 * blocks (every other one) and writes each in turn, the block numbers
 * giving the turns. */
typedef struct write_pipe {
    compose_job proto;      /* what every block shares (rows, classes, copied units) */
    size_t nwrite, nblocks;
    csv_writer *writer;
    pthread_mutex_t lock;
    pthread_cond_t turn;
    size_t next;            /* the block to be written next */
    int failed;             /* status of the first failure, 0 when none */
    ak_error err;
    FILE *stream;           /* the writer's, for outfile_write_behind */
    uint64_t synced;        /* bytes of it handed to the disk so far */
    uint64_t unsynced;      /* bytes written since */
    struct ak_progress *progress; /* rows written (worker 0 runs on the calling thread: it may call back) */
} write_pipe;

typedef struct pipe_worker {
    write_pipe *pipe;
    size_t first, step;     /* blocks first, first + step, ... */
    strbuf out;
} pipe_worker;

/* Records the first failure and wakes a thread waiting for its turn. */
static void pipe_fail(write_pipe *wp, int rc, const ak_error *e)
{
    pthread_mutex_lock(&wp->lock);
    if (!wp->failed) {
        wp->failed = rc;
        wp->err = *e;
    }
    pthread_cond_broadcast(&wp->turn);
    pthread_mutex_unlock(&wp->lock);
}

static void *pipe_work(void *arg)
{
    pipe_worker *me = arg;
    write_pipe *wp = me->pipe;
    for (size_t b = me->first; b < wp->nblocks; b += me->step) {
        compose_job job = wp->proto;
        job.first = b * PUBLISH_BLOCK_ROWS;
        job.last = job.first + PUBLISH_BLOCK_ROWS < wp->nwrite ? job.first + PUBLISH_BLOCK_ROWS : wp->nwrite;
        job.out = me->out;
        publisher_compose_rows(&job);
        me->out = job.out;
        ak_error e;
        if (job.rc < 0) {
            pipe_fail(wp, ak_err_nomem(&e), &e);
            break;
        }
        pthread_mutex_lock(&wp->lock);
        while (wp->next != b && !wp->failed) pthread_cond_wait(&wp->turn, &wp->lock);
        const int stop = wp->failed;
        pthread_mutex_unlock(&wp->lock);
        if (stop) break;
        int rc = csv_write_raw(wp->writer, me->out.data, me->out.len, &e);
        wp->unsynced += me->out.len;
        if (rc == ANONKIT_OK && wp->stream && wp->unsynced >= PUBLISH_WRITE_BEHIND_BYTES) {
            /* the output so far on its way to the disk, while the rest is composed */
            rc = csv_writer_flush(wp->writer, &e);
            if (rc == ANONKIT_OK) outfile_write_behind(wp->stream, &wp->synced);
            wp->unsynced = 0;
        }
        if (rc == ANONKIT_OK && wp->progress)
            rc = me->first == 0 ? ak_progress_add(wp->progress, job.last - job.first, 0, &e)
                                : ak_progress_worker_add(wp->progress, job.last - job.first, 0, &e);
        if (rc < 0) {
            pipe_fail(wp, rc, &e);
            break;
        }
        pthread_mutex_lock(&wp->lock);
        wp->next++;
        pthread_cond_broadcast(&wp->turn);
        pthread_mutex_unlock(&wp->lock);
    }
    return NULL;
}

/* Composes and writes the rows proto->order[0 .. nwrite), on two threads
 * when asked and worth it. */
static int write_rows(const compose_job *proto, size_t nwrite, unsigned threads, csv_writer *writer, FILE *stream,
                      struct ak_progress *pub_progress, ak_error *err)
{
    write_pipe wp;
    memset(&wp, 0, sizeof wp);
    wp.stream = stream;
    wp.proto = *proto;
    wp.nwrite = nwrite;
    wp.nblocks = (nwrite + PUBLISH_BLOCK_ROWS - 1) / PUBLISH_BLOCK_ROWS;
    wp.writer = writer;
    wp.progress = pub_progress;
    if (pthread_mutex_init(&wp.lock, NULL) != 0) return ak_err_set(err, ANONKIT_E_INTERNAL, NULL, 0, 0, "cannot create a lock");
    if (pthread_cond_init(&wp.turn, NULL) != 0) {
        pthread_mutex_destroy(&wp.lock);
        return ak_err_set(err, ANONKIT_E_INTERNAL, NULL, 0, 0, "cannot create a condition variable");
    }
    pipe_worker workers[2] = {{&wp, 0, 1, {0}}, {&wp, 1, 2, {0}}};
    /* Each worker's block buffer sized at once for a block of rows of the
     * average length (classes' texts and copied units), with some room to
     * spare: grown step by step it would be copied and faulted in again. */
    const publisher *pub = proto->pub;
    const partition *p = pub->p;
    const double text_per_row = p->nclasses ? (double)pub->class_text.len / (double)p->nclasses : 0;
    const double copied_per_row =
        proto->copied_off && pub->t->nrows ? (double)proto->copied_off[pub->t->nrows * pub->ncopied] / (double)pub->t->nrows
                                           : 0;
    const double row_bytes = text_per_row + copied_per_row + pub->nsegments + 2;
    const size_t block_rows = nwrite < PUBLISH_BLOCK_ROWS ? nwrite : PUBLISH_BLOCK_ROWS;
    const size_t block_bytes = (size_t)(row_bytes * (double)block_rows * 1.125) + 4096;
    for (int i = 0; i < 2 && nwrite > 0; i++) (void)publish_reserve_huge(&workers[i].out, block_bytes);
    /* Not ak_run_parts: the workers take turns writing, so worker 0 can go
     * on only while worker 1 runs; without the thread worker 0 does all. */
    pthread_t helper;
    int helped = 0;
    if (threads > 1 && wp.nblocks > 1) {
        workers[0].step = 2;
        helped = ak_thread_create(&helper, pipe_work, &workers[1]) == 0;
        if (!helped) workers[0].step = 1;
    }
    pipe_work(&workers[0]);
    if (helped) pthread_join(helper, NULL);
    pthread_cond_destroy(&wp.turn);
    pthread_mutex_destroy(&wp.lock);
    strbuf_free(&workers[0].out);
    strbuf_free(&workers[1].out);
    if (wp.failed) {
        if (err) *err = wp.err;
        return wp.failed;
    }
    return ANONKIT_OK;
}

/* The rows of the input order kept: once the re-read has passed blocks
 * [first, last) of the input, their sums in `seen` must be the load's; the
 * rows composed from them (in pending) are then written, else nothing is. */
static int publish_verified(const table *t, const input_digest *seen, size_t first, size_t last, strbuf *pending,
                            csv_writer *writer, ak_error *err)
{
    if (!digest_blocks_equal(seen, &t->digest, first, last)) return publish_input_changed(t, err);
    if (pending->len) AK_CHECK(csv_write_raw(writer, pending->data, pending->len, err));
    pending->len = 0;
    return ANONKIT_OK;
}

int publish_write(const table *t, const partition *p, const publish_opts *opts, FILE *out,
                  const char *out_name, publish_stats *stats, ak_error *err)
{
    memset(stats, 0, sizeof *stats);
    publisher pub;
    int rc = publisher_setup(&pub, t, opts, 1, err);
    pub.p = p;
    csv_reader *reader = NULL;
    csv_writer *writer = NULL;
    strbuf copied = {0}, pending = {0};
    input_digest seen = {0};
    size_t *copied_off = NULL, *local_off = NULL;
    uint32_t *order = NULL;
    const size_t n = t->nrows;

    local_off = calloc(t->ncolumns + 2, sizeof *local_off);
    if (rc < 0) goto done;
    if (!local_off) { rc = ak_err_nomem(err); goto done; }
    if (n > UINT32_MAX) { /* rows are numbered in 32 bits, as by the algorithms */
        rc = ak_err_set(err, ANONKIT_E_INTERNAL, NULL, 0, 0, "publish_write: more rows than 32-bit row numbers hold");
        goto done;
    }
    if (pub.style == RECODE_MEAN && !pub.means) {
        rc = ak_err_set(err, ANONKIT_E_INTERNAL, NULL, 0, 0, "publish_write: the mean style needs the class means");
        goto done;
    }
    if ((rc = publisher_format_classes(&pub, opts->threads, err)) < 0) goto done;
    if ((rc = csv_writer_open_stream(&writer, out, out_name, pub.delim, err)) < 0) goto done;
    if ((rc = publisher_write_header(t, writer, err)) < 0) goto done;

    /* The rows to write, in order: all but dropped suppressed rows. */
    if (!(order = ak_huge_malloc((n ? n : 1) * sizeof *order))) { rc = ak_err_nomem(err); goto done; } /* shuffled at random */
    ak_rng rng;
    ak_rng_seed(&rng, opts->seed);
    const size_t nwrite = publish_order_rows(p->class_of, n, opts, &rng, order, stats);

    const uint32_t k = pub.ncopied;
    if (k && opts->keep_order) {
        /* Stream: read a row, compose it; a block's rows are written once
         * the block's digest is that of the load (publish_verified). */
        if ((rc = table_reader_open(t, &reader, err)) < 0) goto done;
        if ((rc = csv_reader_digest(reader, &seen, t->digest.cut, err)) < 0) goto done;
        csv_record rec;
        if ((rc = csv_read(reader, &rec, err)) < 0) goto done;
        if (rc == 0) { rc = publish_input_changed(t, err); goto done; }
        csv_reader_progress(reader, opts->progress, 0); /* rows passed, per block */
        size_t r = 0, next = 0, verified = 0;
        while ((rc = csv_read(reader, &rec, err)) == 1) {
            if (r >= n || rec.count != t->ncolumns) { rc = publish_input_changed(t, err); goto done; }
            const size_t b = digest_block(rec.offset); /* (the segments before it are in seen: csv_reader_digest) */
            if (b > verified && (rc = publish_verified(t, &seen, verified, b, &pending, writer, err)) < 0) goto done;
            if (b > verified) verified = b;
            if (next < nwrite && order[next] == r) {
                copied.len = 0;
                if (publisher_append_copied(&pub, &rec, &copied, local_off) != 0) { rc = ak_err_nomem(err); goto done; }
                local_off[k] = copied.len;
                if (publisher_compose_row(&pub, &pending, p->class_of[r], copied.data, local_off) != 0) { rc = ak_err_nomem(err); goto done; }
                next++;
            }
            r++;
        }
        if (rc < 0) goto done;
        if (r != n || seen.records != t->digest.records) { rc = publish_input_changed(t, err); goto done; }
        const size_t blocks = seen.nblocks > t->digest.nblocks ? seen.nblocks : t->digest.nblocks;
        if ((rc = publish_verified(t, &seen, verified, blocks, &pending, writer, err)) < 0) goto done;
    } else {
        /* Hold the copied units of every row, then write in output order. */
        if (k && opts->copied) rc = publish_copied_take(opts->copied, t, &pub, &copied, &copied_off, err);
        else if (k) rc = publish_read_copied(&pub, t, opts->threads, NULL, &copied, &copied_off, err);
        if (rc < 0) goto done;
        const compose_job proto = {.pub = &pub, .class_of = p->class_of, .order = order, .copied = copied.data,
                                   .copied_off = copied_off, .no_copied = local_off};
        if ((rc = write_rows(&proto, nwrite, opts->threads, writer, out, opts->progress, err)) < 0) goto done;
    }
    rc = csv_writer_flush(writer, err);
done:
    csv_reader_free(reader);
    csv_writer_free(writer);
    publisher_free(&pub);
    strbuf_free(&copied);
    strbuf_free(&pending);
    digest_free(&seen);
    free(copied_off);
    free(order);
    free(local_off);
    if (rc < 0 && err && strcmp(err->file, t->path) == 0)
        snprintf(err->file, sizeof err->file, "%s", t->display_name);
    return rc < 0 ? rc : ANONKIT_OK;
}

/* ---- streaming: partitions one after another (the out-of-core algorithms) ---- */

/* With more than one thread, a partition's rows are composed on a thread of
 * the stream's own while the caller goes on with the next partition (its
 * loading and splitting); the caller keeps what the composing needs that the
 * partition's owner frees (its classes and copied fields) and waits for the
 * part before it only when it has the next one ready to go. */
typedef struct stream_composer {
    pthread_t thread;
    int started;
    pthread_mutex_t lock;
    pthread_cond_t changed;
    int busy;           /* a part is handed over and not yet composed */
    atomic_int quit;    /* the stream is being freed: stop */
    int failed;         /* the first failure's status (0: none), reported by the next call */
    ak_error err;
    /* the part handed over: its rows, ordered by the thread (publish_order_rows) */
    size_t nrows;
    uint32_t *class_of;
    size_t class_cap;
    char *copied;
    size_t copied_cap;
    size_t *copied_off;
    size_t off_cap;
} stream_composer;

struct publish_stream {
    publisher pub;
    csv_writer *writer;
    publish_opts opts;
    ak_rng rng;
    publish_stats stats;
    uint32_t *order;
    size_t cap;
    strbuf out;
    stream_composer comp;
};

/* Composes rows order[0 .. nwrite) of the part in blocks of about a buffer,
 * each handed to the writer's thread while the next is composed. */
static int compose_part(publish_stream *ps, const uint32_t *class_of, size_t nwrite, const char *copied,
                        const size_t *copied_off, const atomic_int *quit, ak_error *err)
{
    const size_t none[2] = {0, 0};
    for (size_t start = 0; start < nwrite;) {
        if (quit && atomic_load(quit)) return ANONKIT_OK;
        if (strbuf_reserve(&ps->out, PUBLISH_STREAM_BUF_BYTES) != 0) return ak_err_nomem(err);
        compose_job job = {.pub = &ps->pub, .class_of = class_of, .order = ps->order, .first = start, .last = nwrite,
                           .copied = copied, .copied_off = copied_off, .no_copied = none,
                           .limit = PUBLISH_STREAM_BLOCK_BYTES, .out = ps->out};
        publisher_compose_rows(&job);
        ps->out = job.out;
        if (job.rc < 0) return ak_err_nomem(err);
        AK_CHECK(csv_write_block(ps->writer, &ps->out, err));
        start = job.last;
    }
    return ANONKIT_OK;
}

static void *composer_main(void *arg)
{
    publish_stream *ps = arg;
    stream_composer *c = &ps->comp;
    pthread_mutex_lock(&c->lock);
    for (;;) {
        while (!c->busy && !atomic_load(&c->quit)) pthread_cond_wait(&c->changed, &c->lock);
        if (!c->busy) break; /* (quit) */
        pthread_mutex_unlock(&c->lock);
        ak_error e;
        memset(&e, 0, sizeof e);
        const int copies = ps->pub.ncopied > 0;
        const size_t nwrite = publish_order_rows(c->class_of, c->nrows, &ps->opts, &ps->rng, ps->order, &ps->stats);
        const int rc = compose_part(ps, c->class_of, nwrite, copies ? c->copied : NULL, copies ? c->copied_off : NULL,
                                    &c->quit, &e);
        pthread_mutex_lock(&c->lock);
        if (rc < 0 && !c->failed) {
            c->failed = rc;
            c->err = e;
        }
        c->busy = 0;
        pthread_cond_broadcast(&c->changed);
    }
    pthread_mutex_unlock(&c->lock);
    return NULL;
}

/* Waits until the part handed over last is composed; its failure, if any. */
static int composer_wait(stream_composer *c, ak_error *err)
{
    if (!c->started) return ANONKIT_OK;
    pthread_mutex_lock(&c->lock);
    while (c->busy) pthread_cond_wait(&c->changed, &c->lock);
    const int failed = c->failed;
    if (failed && err) *err = c->err;
    pthread_mutex_unlock(&c->lock);
    return failed;
}

/* Starts the composing thread; without one the caller composes. */
static void composer_start(publish_stream *ps)
{
    stream_composer *c = &ps->comp;
    if (pthread_mutex_init(&c->lock, NULL) != 0) return;
    if (pthread_cond_init(&c->changed, NULL) != 0) {
        pthread_mutex_destroy(&c->lock);
        return;
    }
    atomic_init(&c->quit, 0);
    /* a long-lived thread waiting for parts, not a job cut in parts: not ak_run_parts */
    if (ak_thread_create(&c->thread, composer_main, ps) != 0) {
        pthread_cond_destroy(&c->changed);
        pthread_mutex_destroy(&c->lock);
        return;
    }
    c->started = 1;
}

/* Stops and joins the composing thread (what it was composing is dropped). */
static void composer_stop(stream_composer *c)
{
    if (c->started) {
        pthread_mutex_lock(&c->lock);
        atomic_store(&c->quit, 1);
        pthread_cond_broadcast(&c->changed);
        pthread_mutex_unlock(&c->lock);
        pthread_join(c->thread, NULL);
        pthread_cond_destroy(&c->changed);
        pthread_mutex_destroy(&c->lock);
        c->started = 0;
    }
    free(c->class_of);
    free(c->copied);
    free(c->copied_off);
}

/* Hands a part of n rows over to the composing thread, which orders them
 * (into ps->order, which has room) and composes them, with copies of its
 * classes and copied fields. */
static int composer_hand_over(publish_stream *ps, size_t n, const uint32_t *class_of, const char *copied,
                              const size_t *copied_off, ak_error *err)
{
    stream_composer *c = &ps->comp;
    if (n > c->class_cap) {
        uint32_t *grown = realloc(c->class_of, n * sizeof *grown);
        if (!grown) return ak_err_nomem(err);
        c->class_of = grown;
        c->class_cap = n;
    }
    memcpy(c->class_of, class_of, n * sizeof *class_of);
    const size_t k = ps->pub.ncopied;
    if (k) { /* (copied may be NULL when every copied field is empty) */
        const size_t noff = n * k + 1, bytes = copied_off[n * k];
        if (noff > c->off_cap) {
            size_t *grown = realloc(c->copied_off, noff * sizeof *grown);
            if (!grown) return ak_err_nomem(err);
            c->copied_off = grown;
            c->off_cap = noff;
        }
        if (bytes + 1 > c->copied_cap) {
            char *grown = realloc(c->copied, bytes + 1);
            if (!grown) return ak_err_nomem(err);
            c->copied = grown;
            c->copied_cap = bytes + 1;
        }
        memcpy(c->copied_off, copied_off, noff * sizeof *copied_off);
        if (bytes) memcpy(c->copied, copied, bytes);
    }
    pthread_mutex_lock(&c->lock);
    c->nrows = n;
    c->busy = 1;
    pthread_cond_broadcast(&c->changed);
    pthread_mutex_unlock(&c->lock);
    return ANONKIT_OK;
}

int publish_stream_open(publish_stream **out, const table *schema, const publish_opts *opts, FILE *stream,
                        const char *out_name, ak_error *err)
{
    *out = NULL;
    publish_stream *ps = calloc(1, sizeof *ps);
    if (!ps) return ak_err_nomem(err);
    ps->opts = *opts;
    ak_rng_seed(&ps->rng, opts->seed);
    int rc = publisher_setup(&ps->pub, schema, opts, 0, err); /* the caller's copied fields are per column */
    if (rc == ANONKIT_OK) rc = csv_writer_open_stream(&ps->writer, stream, out_name, schema->delimiter, err);
    if (rc == ANONKIT_OK && opts->threads > 1) /* the writes overlap the algorithm's work */
        rc = csv_writer_background(ps->writer, PUBLISH_STREAM_BUFS, PUBLISH_STREAM_BUF_BYTES,
                                   PUBLISH_WRITE_BEHIND_BYTES, err);
    if (rc == ANONKIT_OK) rc = publisher_write_header(schema, ps->writer, err);
    if (rc == ANONKIT_OK && opts->threads > 1) composer_start(ps); /* and so does the composing */
    if (rc < 0) {
        publish_stream_free(ps);
        return rc;
    }
    *out = ps;
    return ANONKIT_OK;
}

int publish_stream_part(publish_stream *ps, const table *view, const partition *p, const double *means,
                        const char *copied, const size_t *copied_off, ak_error *err)
{
    AK_CHECK(composer_wait(&ps->comp, err)); /* the last part's texts and order are in use until then */
    publisher *pub = &ps->pub;
    pub->t = view;
    pub->p = p;
    pub->means = means;
    strbuf_free(&pub->class_text);
    strbuf_free(&pub->star_text);
    free(pub->class_off);
    free(pub->star_off);
    free(pub->int_range);
    pub->class_off = pub->star_off = NULL;
    pub->int_range = NULL;
    AK_CHECK(publisher_format_classes(pub, ps->opts.threads, err));
    const size_t n = view->nrows;
    if (n > UINT32_MAX) return ak_err_set(err, ANONKIT_E_INTERNAL, NULL, 0, 0, "publish_stream_part: too many rows");
    if (n > ps->cap) {
        uint32_t *o = realloc(ps->order, n * sizeof *o);
        if (!o) return ak_err_nomem(err);
        ps->order = o;
        ps->cap = n;
    }
    if (ps->comp.started) return composer_hand_over(ps, n, p->class_of, copied, copied_off, err);
    const size_t nwrite = publish_order_rows(p->class_of, n, &ps->opts, &ps->rng, ps->order, &ps->stats);
    if (ps->opts.threads > 1) return compose_part(ps, p->class_of, nwrite, copied, copied_off, NULL, err);
    const size_t none[2] = {0, 0};
    for (size_t start = 0; start < nwrite; start += PUBLISH_BLOCK_ROWS) {
        compose_job job = {.pub = pub, .class_of = p->class_of, .order = ps->order, .first = start,
                           .last = start + PUBLISH_BLOCK_ROWS < nwrite ? start + PUBLISH_BLOCK_ROWS : nwrite,
                           .copied = copied, .copied_off = copied_off, .no_copied = none, .out = ps->out};
        publisher_compose_rows(&job);
        ps->out = job.out;
        if (job.rc < 0) return ak_err_nomem(err);
        AK_CHECK(csv_write_raw(ps->writer, ps->out.data, ps->out.len, err));
    }
    return ANONKIT_OK;
}

int publish_stream_close(publish_stream *ps, publish_stats *stats, ak_error *err)
{
    AK_CHECK(composer_wait(&ps->comp, err)); /* (which counts the last part's rows) */
    *stats = ps->stats;
    return csv_writer_flush(ps->writer, err);
}

void publish_stream_free(publish_stream *ps)
{
    if (!ps) return;
    composer_stop(&ps->comp);
    csv_writer_free(ps->writer);
    publisher_free(&ps->pub);
    free(ps->order);
    strbuf_free(&ps->out);
    free(ps);
}
