/* csv_writer.c — the buffered CSV writer (docs/ARCHITECTURE.md §3, step 3;
 * interface in csv.h).
 *
 * Fields are appended to a 256 KiB buffer that is written with
 * fwrite when it fills and by csv_writer_flush, which also fflushes the stream
 * and checks ferror; a block of raw bytes at least that large is handed to
 * fwrite as it is, after what the buffer holds, saving a copy. The first write failure is remembered: every later call
 * returns ANONKIT_E_IO with the same message. In the background mode
 * (csv_writer_background) the fwrite calls are made by a thread of the
 * writer's own, so that the copy of the output into the kernel overlaps the
 * caller's work: full buffers, and whole blocks composed by the caller
 * (csv_write_block, which exchanges the caller's buffer for a spare one
 * without copying), are queued to it in order, from a fixed number of
 * buffers; the caller waits only when all of them are queued. A failure of
 * the thread is reported by the next call that hands a buffer over, or by
 * csv_writer_flush, which waits for the queue to be written. A record made of exactly one
 * empty field is written as "" rather than as an empty line, because an empty
 * line at the end of a file is not a record for the reader. csv_writer_free
 * does not flush: a caller that stops on an error has nothing more to write.
 */
#include "io/csv.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common/parallel.h"
#include "io/memtable.h"
#include "io/outfile.h"

#define CSV_WRITE_BUF_SIZE ((size_t)256 << 10) /* writer buffer */

/* A buffer of the background mode: bytes [0, len) of data, which holds cap
 * (data NULL: not allocated yet). */
typedef struct csv_piece {
    char *data;
    size_t len, cap;
} csv_piece;

/* The background mode (csv_writer_background): buffers handed to a thread
 * that writes them in order. The writer owns nbufs buffers, each at any time
 * free, queued, being written, or the writer's current one; csv_write_block
 * exchanges one for the caller's, so their number never changes. Every field
 * but the thread's own counters is guarded by lock. */
typedef struct csv_bg {
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t wake;     /* to the thread: a buffer queued, or stop */
    pthread_cond_t done;     /* to the caller: a buffer written */
    FILE *stream;
    unsigned nbufs;
    size_t buf_size;         /* of a buffer allocated by the writer */
    csv_piece *queue;        /* ring of nbufs: buffers to write, oldest at head */
    size_t head, count;
    csv_piece *spare;        /* nbufs: buffers free for use */
    size_t nspare;
    int busy;                /* the thread holds a buffer it is writing */
    int stop;                /* csv_writer_free: write nothing more, end */
    int failed_errno;        /* errno of the thread's first failure, -1 unknown, 0 none */
    uint64_t behind_bytes;   /* the thread's: outfile_write_behind every that many bytes (0 never) */
    uint64_t unsynced, synced;
} csv_bg;

struct csv_writer {
    FILE *stream;
    char *name;
    char delim;
    char *buf;             /* background mode: the current buffer, NULL when none */
    size_t len, cap;
    uint32_t rec_fields;   /* fields written in the current record */
    int rec_has_bytes;     /* any byte written in the current record */
    int started;           /* anything written at all (a byte order mark first would be taken for one) */
    int failed_errno;      /* errno of the first write failure, -1 unknown, 0 none */
    csv_bg *bg;            /* NULL: written synchronously */
    struct anonkit_table *mem; /* the table backend (csv_writer_open_table): fields go into its columns */
    int mem_rows;          /* the header is written: fields are rows' */
    unsigned char special[256]; /* bytes that force quoting */
};

int csv_writer_open_stream(csv_writer **out, FILE *stream, const char *name, char delimiter,
                           ak_error *err)
{
    *out = NULL;
    if (!name) name = "(stream)";
    AK_CHECK(csv_check_delimiter(delimiter, name, err));
    csv_writer *w = calloc(1, sizeof *w);
    if (!w) return ak_err_nomem(err);
    w->stream = stream;
    w->delim = delimiter;
    w->cap = CSV_WRITE_BUF_SIZE;
    w->buf = malloc(w->cap);
    w->name = malloc(strlen(name) + 1);
    if (!w->buf || !w->name) {
        csv_writer_free(w);
        return ak_err_nomem(err);
    }
    strcpy(w->name, name);
    w->special[(unsigned char)delimiter] = 1;
    w->special['"'] = 1;
    w->special['\r'] = 1;
    w->special['\n'] = 1;
    *out = w;
    return ANONKIT_OK;
}

static int writer_error(const csv_writer *w, ak_error *err);
static int writer_drain(csv_writer *w, ak_error *err);

/* The writing thread: writes the queued buffers in order with fwrite and
 * returns each to the spare ones, starting the disk write of every
 * behind_bytes written (outfile_write_behind). After a failure it records
 * errno and writes nothing more, but still returns the buffers, so a caller
 * waiting for one never hangs; the caller reports the failure. */
static void *bg_main(void *arg)
{
    csv_bg *bg = arg;
    pthread_mutex_lock(&bg->lock);
    for (;;) {
        while (!bg->count && !bg->stop) pthread_cond_wait(&bg->wake, &bg->lock);
        if (bg->stop) break; /* what is still queued is freed by csv_writer_free */
        csv_piece piece = bg->queue[bg->head];
        bg->head = (bg->head + 1) % bg->nbufs;
        bg->count--;
        bg->busy = 1;
        const int failed = bg->failed_errno;
        pthread_mutex_unlock(&bg->lock);

        int fail = 0;
        if (!failed) {
            errno = 0;
            if (fwrite(piece.data, 1, piece.len, bg->stream) != piece.len) fail = errno ? errno : -1;
            bg->unsynced += piece.len;
            if (!fail && bg->behind_bytes && bg->unsynced >= bg->behind_bytes) {
                /* the output so far on its way to the disk, as in publish_write */
                errno = 0;
                if (fflush(bg->stream) != 0) fail = errno ? errno : -1;
                else outfile_write_behind(bg->stream, &bg->synced);
                bg->unsynced = 0;
            }
        }

        pthread_mutex_lock(&bg->lock);
        if (fail && !bg->failed_errno) bg->failed_errno = fail;
        piece.len = 0;
        bg->spare[bg->nspare++] = piece;
        bg->busy = 0;
        pthread_cond_broadcast(&bg->done);
    }
    pthread_mutex_unlock(&bg->lock);
    return NULL;
}

/* Frees bg and every buffer it holds (its thread already ended or never started). */
static void bg_free(csv_bg *bg)
{
    if (!bg) return;
    for (size_t i = 0; bg->queue && i < bg->count; i++) free(bg->queue[(bg->head + i) % bg->nbufs].data);
    for (size_t i = 0; bg->spare && i < bg->nspare; i++) free(bg->spare[i].data);
    free(bg->queue);
    free(bg->spare);
    free(bg);
}

int csv_writer_background(csv_writer *w, unsigned nbufs, size_t buf_size, uint64_t behind_bytes, ak_error *err)
{
    if (w->mem) return ANONKIT_OK; /* a table: nothing to write in the background */
    if (w->failed_errno) return writer_error(w, err);
    if (w->bg) return ANONKIT_OK;
    if (nbufs == 0 || buf_size == 0)
        return ak_err_set(err, ANONKIT_E_INTERNAL, NULL, 0, 0, "csv_writer_background: no buffers");
    AK_CHECK(writer_drain(w, err)); /* what is buffered goes first, as before */
    csv_bg *bg = calloc(1, sizeof *bg);
    if (!bg) return ak_err_nomem(err);
    bg->queue = calloc(nbufs, sizeof *bg->queue);
    bg->spare = calloc(nbufs, sizeof *bg->spare); /* all unallocated until used */
    if (!bg->queue || !bg->spare) {
        bg_free(bg);
        return ak_err_nomem(err);
    }
    bg->stream = w->stream;
    bg->nbufs = nbufs;
    bg->nspare = nbufs;
    bg->buf_size = buf_size;
    bg->behind_bytes = behind_bytes;
    /* Without a lock or a thread the writer stays synchronous, which writes the same bytes. */
    if (pthread_mutex_init(&bg->lock, NULL) != 0) {
        bg_free(bg);
        return ANONKIT_OK;
    }
    int ready = pthread_cond_init(&bg->wake, NULL) == 0;
    if (ready && pthread_cond_init(&bg->done, NULL) != 0) {
        pthread_cond_destroy(&bg->wake);
        ready = 0;
    }
    /* a long-lived thread that writes what the caller queues, not a job cut in parts: not ak_run_parts */
    if (ready && ak_thread_create(&bg->thread, bg_main, bg) != 0) {
        pthread_cond_destroy(&bg->done);
        pthread_cond_destroy(&bg->wake);
        ready = 0;
    }
    if (!ready) {
        pthread_mutex_destroy(&bg->lock);
        bg_free(bg);
        return ANONKIT_OK;
    }
    free(w->buf); /* from now on the current buffer is one of the thread's */
    w->buf = NULL;
    w->cap = 0;
    w->bg = bg;
    return ANONKIT_OK;
}

/* Ends the background thread without writing what is still queued, and frees everything. */
static void bg_stop(csv_bg *bg)
{
    pthread_mutex_lock(&bg->lock);
    bg->stop = 1;
    pthread_cond_signal(&bg->wake);
    pthread_mutex_unlock(&bg->lock);
    pthread_join(bg->thread, NULL);
    pthread_cond_destroy(&bg->done);
    pthread_cond_destroy(&bg->wake);
    pthread_mutex_destroy(&bg->lock);
    bg_free(bg);
}

void csv_writer_free(csv_writer *w)
{
    if (!w) return;
    if (w->bg) bg_stop(w->bg);
    free(w->buf);
    free(w->name);
    free(w);
}

static int writer_error(const csv_writer *w, ak_error *err)
{
    return ak_err_set(err, ANONKIT_E_IO, w->name, 0, 0, "write failed: %s",
                      w->failed_errno > 0 ? strerror(w->failed_errno) : "unknown error");
}

static int writer_fail(csv_writer *w, int saved_errno, ak_error *err)
{
    w->failed_errno = saved_errno ? saved_errno : -1;
    return writer_error(w, err);
}

/* Background mode: the thread's failure, if any, as the writer's own. */
static int bg_check(csv_writer *w, ak_error *err)
{
    pthread_mutex_lock(&w->bg->lock);
    const int failed = w->bg->failed_errno;
    pthread_mutex_unlock(&w->bg->lock);
    return failed ? writer_fail(w, failed, err) : ANONKIT_OK;
}

/* Background mode: queues piece for the thread (there is always room: it is
 * one of the writer's buffers) and checks for a failure. */
static int bg_queue(csv_writer *w, csv_piece piece, ak_error *err)
{
    csv_bg *bg = w->bg;
    pthread_mutex_lock(&bg->lock);
    bg->queue[(bg->head + bg->count) % bg->nbufs] = piece;
    bg->count++;
    pthread_cond_signal(&bg->wake);
    const int failed = bg->failed_errno;
    pthread_mutex_unlock(&bg->lock);
    return failed ? writer_fail(w, failed, err) : ANONKIT_OK;
}

/* Background mode: takes a spare buffer, waiting while the thread holds them all. */
static csv_piece bg_take(csv_bg *bg)
{
    pthread_mutex_lock(&bg->lock);
    while (!bg->nspare) pthread_cond_wait(&bg->done, &bg->lock);
    const csv_piece piece = bg->spare[--bg->nspare];
    pthread_mutex_unlock(&bg->lock);
    return piece;
}

/* Background mode: gives back a buffer taken but not used. */
static void bg_give_back(csv_bg *bg, csv_piece piece)
{
    pthread_mutex_lock(&bg->lock);
    bg->spare[bg->nspare++] = piece;
    pthread_mutex_unlock(&bg->lock);
}

/* Writes the buffer to the stream; in the background mode hands it to the
 * thread instead, leaving the writer without a current buffer. */
static int writer_drain(csv_writer *w, ak_error *err)
{
    if (w->len == 0) return ANONKIT_OK;
    if (w->bg) {
        const csv_piece piece = {w->buf, w->len, w->cap};
        w->buf = NULL;
        w->len = w->cap = 0;
        return bg_queue(w, piece, err);
    }
    errno = 0;
    size_t put = fwrite(w->buf, 1, w->len, w->stream);
    if (put != w->len) return writer_fail(w, errno, err);
    w->len = 0;
    return ANONKIT_OK;
}

/* Makes the buffer empty: drains it, and in the background mode takes a
 * spare buffer as the current one (allocated on first use). */
static int writer_make_room(csv_writer *w, ak_error *err)
{
    AK_CHECK(writer_drain(w, err));
    if (!w->bg || w->buf) return ANONKIT_OK;
    csv_piece piece = bg_take(w->bg);
    if (!piece.data) {
        piece.data = malloc(w->bg->buf_size);
        if (!piece.data) {
            bg_give_back(w->bg, piece);
            return ak_err_nomem(err);
        }
        piece.cap = w->bg->buf_size;
    }
    w->buf = piece.data;
    w->cap = piece.cap;
    w->len = 0;
    return ANONKIT_OK;
}

static int writer_append(csv_writer *w, const char *data, size_t n, ak_error *err)
{
    if (n == 0) return ANONKIT_OK; /* data may be NULL then */
    if (n >= w->cap && !w->bg) { /* a block at least as large as the buffer goes to the stream as it is */
        AK_CHECK(writer_drain(w, err));
        errno = 0;
        if (fwrite(data, 1, n, w->stream) != n) return writer_fail(w, errno, err);
        return ANONKIT_OK;
    }
    while (n > w->cap - w->len) {
        size_t room = w->cap - w->len;
        if (room) { /* w->buf is NULL in the background mode before the first write */
            memcpy(w->buf + w->len, data, room);
            w->len += room;
            data += room;
            n -= room;
        }
        AK_CHECK(writer_make_room(w, err));
    }
    memcpy(w->buf + w->len, data, n);
    w->len += n;
    return ANONKIT_OK;
}

static int writer_put(csv_writer *w, char c, ak_error *err)
{
    if (w->len == w->cap) AK_CHECK(writer_make_room(w, err));
    w->buf[w->len++] = c;
    return ANONKIT_OK;
}

static int writer_needs_quotes(const csv_writer *w, const char *data, size_t len)
{
    if (len == 0) return 0;
    if (data[0] == ' ' || data[len - 1] == ' ') return 1;
    /* the first field of the output beginning with what reads as a UTF-8
     * byte order mark: the reader would drop those bytes */
    if (!w->started && len >= 3 && memcmp(data, "\xEF\xBB\xBF", 3) == 0) return 1;
    const unsigned char *s = (const unsigned char *)data;
    for (size_t i = 0; i < len; i++)
        if (w->special[s[i]]) return 1;
    return 0;
}

int csv_writer_open_table(csv_writer **out, struct anonkit_table *t, const char *name, ak_error *err)
{
    *out = NULL;
    csv_writer *w = calloc(1, sizeof *w);
    if (!w || !(w->name = strdup(name ? name : "(table)"))) {
        free(w);
        return ak_err_nomem(err);
    }
    w->mem = t;
    *out = w;
    return ANONKIT_OK;
}

int csv_write_field(csv_writer *w, const char *data, size_t len, ak_error *err)
{
    if (w->mem) return memtable_writer_field(w->mem, !w->mem_rows, w->rec_fields++, data, len, err);
    if (w->failed_errno) return writer_error(w, err);
    if (w->rec_fields++ > 0) {
        AK_CHECK(writer_put(w, w->delim, err));
        w->rec_has_bytes = 1;
    }
    if (len) w->rec_has_bytes = 1;
    const int quoted = writer_needs_quotes(w, data, len);
    w->started = 1;
    if (!quoted) return writer_append(w, data, len, err);

    AK_CHECK(writer_put(w, '"', err));
    const char *quote;
    while ((quote = memchr(data, '"', len)) != NULL) {
        size_t seg = (size_t)(quote - data) + 1; /* up to and with the quote */
        AK_CHECK(writer_append(w, data, seg, err));
        AK_CHECK(writer_put(w, '"', err));
        data += seg;
        len -= seg;
    }
    AK_CHECK(writer_append(w, data, len, err));
    return writer_put(w, '"', err);
}

int csv_write_end(csv_writer *w, ak_error *err)
{
    if (w->mem) {
        const int rc = memtable_writer_row_end(w->mem, !w->mem_rows, w->rec_fields, err);
        w->rec_fields = 0;
        w->mem_rows = 1;
        return rc;
    }
    if (w->failed_errno) return writer_error(w, err);
    /* One empty field alone would be an empty line, which the reader drops
     * at the end of a file: write it as "". */
    if (w->rec_fields == 1 && !w->rec_has_bytes) AK_CHECK(writer_append(w, "\"\"", 2, err));
    w->rec_fields = 0;
    w->rec_has_bytes = 0;
    return writer_put(w, '\n', err);
}

int csv_write_raw(csv_writer *w, const char *data, size_t len, ak_error *err)
{
    if (w->mem) return ak_err_set(err, ANONKIT_E_INTERNAL, w->name, 0, 0, "CSV text cannot go into a table");
    if (w->failed_errno) return writer_error(w, err);
    if (len) w->rec_has_bytes = 1;
    w->started = 1;
    return writer_append(w, data, len, err);
}

int csv_write_block(csv_writer *w, strbuf *block, ak_error *err)
{
    if (w->mem) return ak_err_set(err, ANONKIT_E_INTERNAL, w->name, 0, 0, "CSV text cannot go into a table");
    if (w->failed_errno) return writer_error(w, err);
    if (block->len == 0) return ANONKIT_OK;
    w->rec_has_bytes = 1;
    w->started = 1;
    if (!w->bg) {
        const int rc = writer_append(w, block->data, block->len, err);
        block->len = 0;
        return rc;
    }
    AK_CHECK(writer_drain(w, err)); /* what the buffer holds comes first */
    /* A spare buffer first: with all of the writer's buffers queued, the
     * queue has no room for one more. */
    const csv_piece spare = bg_take(w->bg);
    const csv_piece piece = {block->data, block->len, block->cap};
    block->data = spare.data;
    block->cap = spare.cap;
    block->len = 0;
    return bg_queue(w, piece, err);
}

int csv_writer_flush(csv_writer *w, ak_error *err)
{
    if (w->mem) return ANONKIT_OK;
    if (w->failed_errno) return writer_error(w, err);
    AK_CHECK(writer_drain(w, err));
    if (w->bg) { /* wait until the thread has written everything; the stream is then the caller's */
        csv_bg *bg = w->bg;
        pthread_mutex_lock(&bg->lock);
        while (bg->count || bg->busy) pthread_cond_wait(&bg->done, &bg->lock);
        pthread_mutex_unlock(&bg->lock);
        AK_CHECK(bg_check(w, err));
    }
    errno = 0;
    if (fflush(w->stream) != 0 || ferror(w->stream)) return writer_fail(w, errno, err);
    return ANONKIT_OK;
}
