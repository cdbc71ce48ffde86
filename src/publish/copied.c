/* copied.c — the columns the writer copies through (neither QI nor
 * identifier), read a second time from the input: on two threads in two
 * pieces when it is large (read whole whenever the pieces may not read as
 * the whole does), each row's copied units in CSV form; or read ahead on a
 * thread of their own while the algorithm runs (publish_copied). Every
 * record of the second read is hashed, and the units are used only when the
 * digest of the read equals the table's (io/digest.h): the input may have
 * been edited, truncated, appended to or replaced since it was loaded, and
 * what is published must be what the run read and encoded. */
#include "publish/publish_internal.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/hugemem.h"
#include "common/parallel.h"

/* ---- the copied units of every row, read once more from the input ---- */

/* Bytes below which the input is not read in two pieces. */
#define PUBLISH_PARALLEL_MIN_BYTES (8u << 20)

/* The copied units of the rows of the input, or of one piece of it. */
typedef struct copy_piece {
    const publisher *pub;
    const table *t;
    int whole;                /* the whole input, header included; else bytes [offset, offset + length) */
    uint64_t offset, length;
    size_t limit;             /* rows it may hold: more means the input changed */
    strbuf text;              /* the units, in CSV form */
    size_t *off;              /* ncopied offsets into text per row */
    size_t nrows, cap;
    long lines;               /* physical lines read (pieces) */
    int quoted;               /* a field began with a quote (pieces) */
    const atomic_int *cancel; /* set when the units are no longer wanted (NULL: never) */
    input_digest digest;      /* the records read, to compare with the table's */
    int rc;
    ak_error err;
} copy_piece;

/* Rows between two looks at copy_piece.cancel. */
#define COPY_CANCEL_ROWS 65536

/* Gives b room for `bytes` bytes on fresh (huge) pages, b being empty. */
int publish_reserve_huge(strbuf *b, size_t bytes)
{
    if (b->data || !bytes) return 0;
    if (!(b->data = ak_huge_malloc(bytes))) return -1;
    b->cap = bytes;
    return 0;
}

/* Reads the rows of one copy_piece. */
static void *copy_rows(void *arg)
{
    copy_piece *p = arg;
    const uint32_t k = p->pub->ncopied;
    csv_reader *reader = NULL;
    csv_record rec;
    int got = 0;
    if (!p->whole) { /* room for about all of the piece at once: the text is at most a little longer */
        const uint64_t lines = csv_estimate_lines(p->t->path, p->offset, p->length);
        const size_t cap = lines < p->limit ? (size_t)lines : p->limit;
        if (cap && !p->off && (p->off = ak_huge_malloc((cap * k + 1) * sizeof *p->off))) p->cap = cap;
        if (p->length < SIZE_MAX / 2) (void)publish_reserve_huge(&p->text, (size_t)(p->length + p->length / 16) + 4096);
    }
    p->rc = p->whole ? table_reader_open(p->t, &reader, &p->err)
                     : csv_reader_open_range(&reader, p->t->path, p->pub->delim, p->offset, p->length, 2, &p->err);
    if (p->rc == ANONKIT_OK) p->rc = csv_reader_digest(reader, &p->digest, p->t->digest.cut, &p->err);
    if (p->rc == ANONKIT_OK && p->whole && (got = csv_read(reader, &rec, &p->err)) < 0) p->rc = got; /* the header */
    while (p->rc == ANONKIT_OK && (got = csv_read(reader, &rec, &p->err)) == 1) {
        if (p->nrows >= p->limit || rec.count != p->t->ncolumns) {
            p->rc = publish_input_changed(p->t, &p->err);
            break;
        }
        if (p->nrows == p->cap) {
            size_t cap = p->cap ? 2 * p->cap : 65536;
            if (cap > p->limit) cap = p->limit;
            size_t *off = realloc(p->off, (cap * k + 1) * sizeof *off);
            if (!off) {
                p->rc = ak_err_nomem(&p->err);
                break;
            }
            p->off = off;
            p->cap = cap;
        }
        if (publisher_append_copied(p->pub, &rec, &p->text, p->off + p->nrows * k) != 0) {
            p->rc = ak_err_nomem(&p->err);
            break;
        }
        p->nrows++;
        if (p->cancel && p->nrows % COPY_CANCEL_ROWS == 0 && atomic_load(p->cancel)) {
            p->rc = ak_err_set(&p->err, ANONKIT_E_INTERNAL, NULL, 0, 0, "reading the copied columns was cancelled");
            break;
        }
    }
    if (p->rc == ANONKIT_OK && got < 0) p->rc = got;
    if (reader) {
        p->lines = csv_reader_line(reader) - 2;
        p->quoted = csv_reader_saw_quote(reader);
    }
    csv_reader_free(reader);
    return NULL;
}

static void copy_piece_free(copy_piece *p)
{
    strbuf_free(&p->text);
    free(p->off);
    p->off = NULL;
    digest_free(&p->digest);
}

/* Reads the copied units of all t->nrows rows into *text, with their offsets
 * in *off (ncopied per row and one more, the end). A large input that the
 * load read in two pieces is cut where the load cut it (t->digest.cut, so
 * that the digests compare) and read in two pieces on two threads, and read
 * whole whenever the pieces may not read as the whole does. */
int publish_read_copied(const publisher *pub, const table *t, unsigned threads, const atomic_int *cancel,
                        strbuf *text, size_t **off, ak_error *err)
{
    const size_t n = t->nrows;
    const uint32_t k = pub->ncopied;
    struct stat st;
    if (threads > 1 && !t->mem && t->digest.cut && stat(t->path, &st) == 0 && (uint64_t)st.st_size >= PUBLISH_PARALLEL_MIN_BYTES) {
        csv_reader *reader = NULL;
        csv_record rec;
        input_digest header = {0}; /* the header's segment */
        uint64_t data_start = 0;
        if (csv_reader_open(&reader, t->path, pub->delim, err) == ANONKIT_OK &&
            csv_reader_digest(reader, &header, t->digest.cut, err) == ANONKIT_OK && csv_read(reader, &rec, err) == 1)
            data_start = csv_reader_offset(reader);
        csv_reader_free(reader); /* (which ends the header's segment) */
        const uint64_t split = t->digest.cut;
        if (data_start && data_start < split && split < (uint64_t)st.st_size) {
            copy_piece pieces[2];
            memset(pieces, 0, sizeof pieces);
            for (int i = 0; i < 2; i++) {
                pieces[i].pub = pub;
                pieces[i].t = t;
                pieces[i].offset = i ? split : data_start;
                pieces[i].length = i ? (uint64_t)st.st_size - split : split - data_start;
                pieces[i].limit = n;
                pieces[i].cancel = cancel;
            }
            /* the first piece's text with room for the second's after it */
            const uint64_t both = (uint64_t)st.st_size - data_start;
            if (both < SIZE_MAX / 2) (void)publish_reserve_huge(&pieces[0].text, (size_t)(both + both / 16) + 8192);
            ak_run_parts(pieces, sizeof *pieces, 2, copy_rows);
            const size_t n0 = pieces[0].nrows, n1 = pieces[1].nrows;
            int rc = ANONKIT_OK;
            int same = 0; /* the header and both pieces digest as the load did */
            if (pieces[0].rc == ANONKIT_OK && pieces[1].rc == ANONKIT_OK) {
                if (digest_merge(&pieces[0].digest, &pieces[1].digest) != 0 || digest_merge(&pieces[0].digest, &header) != 0)
                    rc = ak_err_nomem(err);
                else same = digest_equal(&pieces[0].digest, &t->digest);
            }
            if (rc == ANONKIT_OK && same && !pieces[0].quoted &&
                !pieces[1].quoted && pieces[0].lines == (long)n0 && n0 + n1 == n) {
                /* Piece two's units after piece one's. */
                const size_t base = pieces[0].text.len;
                size_t *all = realloc(pieces[0].off, (n * k + 1) * sizeof *all);
                if (all) pieces[0].off = all;
                if (!all || strbuf_append(&pieces[0].text, pieces[1].text.data, pieces[1].text.len) != 0) {
                    rc = ak_err_nomem(err);
                } else {
                    for (size_t i = 0; i < n1 * k; i++) all[n0 * k + i] = pieces[1].off[i] + base;
                    all[n * k] = pieces[0].text.len;
                    *text = pieces[0].text;
                    *off = all;
                    memset(&pieces[0].text, 0, sizeof pieces[0].text);
                    pieces[0].off = NULL;
                    rc = 1;
                }
            } else if (pieces[0].rc == ANONKIT_E_NOMEM || pieces[1].rc == ANONKIT_E_NOMEM) {
                rc = ak_err_nomem(err);
            }
            copy_piece_free(&pieces[0]);
            copy_piece_free(&pieces[1]);
            if (rc != ANONKIT_OK) {
                digest_free(&header);
                return rc < 0 ? rc : ANONKIT_OK;
            }
        }
        digest_free(&header);
    }
    /* The whole input on this thread (which also gives any error exactly). */
    copy_piece whole;
    memset(&whole, 0, sizeof whole);
    whole.pub = pub;
    whole.t = t;
    whole.whole = 1;
    whole.limit = n;
    whole.cap = n;
    whole.cancel = cancel;
    whole.off = ak_huge_malloc((n * k + 1) * sizeof *whole.off);
    if (!whole.off) return ak_err_nomem(err);
    struct stat whole_st;
    if (stat(t->path, &whole_st) == 0 && (uint64_t)whole_st.st_size < SIZE_MAX / 2)
        (void)publish_reserve_huge(&whole.text, (size_t)whole_st.st_size + (size_t)whole_st.st_size / 16 + 4096);
    copy_rows(&whole);
    if (whole.rc == ANONKIT_OK && (whole.nrows != n || !digest_equal(&whole.digest, &t->digest)))
        whole.rc = publish_input_changed(t, &whole.err);
    digest_free(&whole.digest);
    if (whole.rc < 0) {
        if (err) *err = whole.err;
        copy_piece_free(&whole);
        return whole.rc;
    }
    whole.off[n * k] = whole.text.len;
    *text = whole.text;
    *off = whole.off;
    return ANONKIT_OK;
}

/* ---- the copied units read ahead ---- */

struct publish_copied {
    publisher pub;     /* the units' layout */
    const table *t;
    pthread_t thread;
    int started;
    atomic_int cancel; /* publish_copied_free before the reading ended: stop it */
    int rc;            /* of publish_read_copied */
    ak_error err;
    strbuf text;
    size_t *off;
};

static void *copied_main(void *arg)
{
    publish_copied *c = arg;
    /* one thread: the other core runs the algorithm meanwhile */
    c->rc = publish_read_copied(&c->pub, c->t, 1, &c->cancel, &c->text, &c->off, &c->err);
    return NULL;
}

int publish_copied_start(publish_copied **out, const table *t, ak_error *err)
{
    *out = NULL;
    publish_copied *c = calloc(1, sizeof *c);
    if (!c) return ak_err_nomem(err);
    atomic_init(&c->cancel, 0);
    const publish_opts none = {0};
    int rc = publisher_setup(&c->pub, t, &none, 1, err);
    if (rc == ANONKIT_OK && c->pub.ncopied) {
        c->t = t;
        /* a thread of its own, not ak_run_parts: it reads on while the caller runs the algorithm */
        if (ak_thread_create(&c->thread, copied_main, c) != 0)
            rc = ak_err_set(err, ANONKIT_E_INTERNAL, NULL, 0, 0, "cannot start a thread");
        else c->started = 1;
    }
    if (rc < 0 || !c->started) {
        publish_copied_free(c);
        return rc;
    }
    *out = c;
    return ANONKIT_OK;
}

/* Waits for the reading to end. */
static void copied_join(publish_copied *c)
{
    if (c->started) pthread_join(c->thread, NULL);
    c->started = 0;
}

void publish_copied_free(publish_copied *c)
{
    if (!c) return;
    atomic_store(&c->cancel, 1); /* not wanted any more (after publish_copied_take, the reading has ended) */
    copied_join(c);
    publisher_free(&c->pub);
    strbuf_free(&c->text);
    free(c->off);
    free(c);
}

/* Takes the units read ahead by c for t (whose writer has the layout pub):
 * fills text and off, or returns the reading's error. */
int publish_copied_take(publish_copied *c, const table *t, const publisher *pub, strbuf *text, size_t **off,
                        ak_error *err)
{
    copied_join(c);
    if (c->t != t || c->pub.ncopied != pub->ncopied)
        return ak_err_set(err, ANONKIT_E_INTERNAL, NULL, 0, 0, "publish_write: columns read ahead for another table");
    if (c->rc < 0) {
        if (err) *err = c->err;
        return c->rc;
    }
    *text = c->text;
    *off = c->off;
    memset(&c->text, 0, sizeof c->text);
    c->off = NULL;
    return ANONKIT_OK;
}
