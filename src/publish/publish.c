/* publish.c — recode and write (DESIGN.md §1 step 3).
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
 * composing. Streamed output (partition by partition, for the out-of-core
 * algorithms) is composed in small blocks which, with more than one thread,
 * the writer's own thread writes (csv_writer_background); a partition's
 * rows are then composed on a thread of the stream's while the caller goes
 * on with the algorithm (stream_composer). */
#include "publish/publish.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/hugemem.h"
#include "common/parallel.h"
#include "core/recode.h"
#include "common/rng.h"
#include "common/strbuf.h"
#include "io/csv.h"
#include "io/outfile.h"

/* The output columns in order, as segments: a run of adjacent QI columns,
 * whose text per class is formatted once, or one copied unit. */
typedef struct segment {
    uint32_t first, count; /* run: output QIs out_qi[first .. first + count) */
    int copied;            /* 1: copied unit number `first` */
} segment;

typedef struct publisher {
    const table *t;
    const partition *p;
    recode_style style;
    const double *means;    /* per class and QI, for RECODE_MEAN */
    char delim;
    uint32_t nout;          /* output columns */
    int32_t *out_qi;        /* per output column: QI index, or -1 for a copied column */
    uint32_t ncopied;       /* copied units: a copied column, or a run of adjacent ones (merge_copied) */
    uint32_t *copied_col;   /* first input column of each copied unit */
    uint32_t *copied_ncols; /* columns of each copied unit */
    segment *segments;
    uint32_t nsegments, nruns;
    strbuf class_text;      /* per class and run: the escaped values joined by the delimiter */
    size_t *class_off;      /* (class, run) -> offset in class_text; one extra at the end */
    strbuf star_text;       /* the same for a suppressed row: "*" per QI */
    size_t *star_off;
    unsigned char *int_range; /* per QI: texts made by recode_int_range (format_classes) */
    strbuf line;
} publisher;

static int escape_append(strbuf *b, const char *s, size_t len, char delim)
{
    if (strbuf_reserve(b, csv_escaped_max(len)) != 0) return -1;
    b->len += csv_escape(b->data + b->len, s, len, delim);
    return 0;
}

/* Appends the run texts of class c (or of a suppressed row when star) to b,
 * with their offsets in b to off[0 .. nruns). For the QIs flagged in
 * pub->int_range, vals holds the values at the box's ends (2 per QI). */
static int format_class(const publisher *pub, size_t c, int star, strbuf *b, size_t *off, strbuf *value,
                        const double *vals)
{
    int rc = 0;
    uint32_t run = 0;
    char num[48];
    for (uint32_t g = 0; g < pub->nsegments; g++) {
        const segment *seg = &pub->segments[g];
        if (seg->copied) continue;
        off[run++] = b->len;
        for (uint32_t i = 0; i < seg->count && rc == 0; i++) {
            const uint32_t q = (uint32_t)pub->out_qi[seg->first + i];
            const char *text = RECODE_SUPPRESSED;
            size_t len = 1;
            if (!star && pub->int_range[q]) {
                len = recode_int_range(pub->style, partition_lo(pub->p, c)[q], partition_hi(pub->p, c)[q],
                                       vals[2 * q], vals[2 * q + 1], num);
                text = num;
            } else if (!star) {
                if (recode_class_text(pub->t, pub->p, pub->means, pub->style, c, q, value) != 0) rc = -1;
                text = value->data;
                len = value->len;
            }
            if (rc == 0 && ((i && strbuf_append(b, &pub->delim, 1) != 0) || escape_append(b, text, len, pub->delim) != 0))
                rc = -1;
        }
    }
    return rc;
}

/* Classes [first, last) formatted into their own text; offsets go to the
 * shared class_off, relative to that text. */
typedef struct format_job {
    publisher *pub;
    size_t first, last;
    strbuf text;
    int rc;
} format_job;

/* Classes whose values are fetched together before they are formatted. */
#define FORMAT_BATCH 16

/* Formats classes [first, last) in batches: first the values at the box ends
 * of every int_range QI of every class of the batch, in one tight loop of
 * loads (they lie anywhere in arrays of up to a value per row and mostly
 * miss the cache, so the misses overlap), then the texts. */
static void *format_classes_some(void *arg)
{
    format_job *job = arg;
    const publisher *pub = job->pub;
    const table *t = pub->t;
    const uint32_t d = t->nqi;
    strbuf value = {0}; /* one value's text, reused for every class */
    double *vals = malloc((size_t)FORMAT_BATCH * 2 * (d ? d : 1) * sizeof *vals);
    job->rc = vals ? 0 : -1;
    for (size_t c0 = job->first; c0 < job->last && job->rc == 0; c0 += FORMAT_BATCH) {
        const size_t cn = job->last - c0 < FORMAT_BATCH ? job->last - c0 : FORMAT_BATCH;
        for (size_t i = 0; i < cn; i++) {
            const uint32_t *lo = partition_lo(pub->p, c0 + i), *hi = partition_hi(pub->p, c0 + i);
            double *v = vals + i * 2 * d;
            for (uint32_t q = 0; q < d; q++)
                if (pub->int_range[q]) {
                    v[2 * q] = t->qi[q].values[lo[q]];
                    v[2 * q + 1] = t->qi[q].values[hi[q]];
                }
        }
        for (size_t i = 0; i < cn && job->rc == 0; i++)
            job->rc = format_class(pub, c0 + i, 0, &job->text, pub->class_off + (c0 + i) * pub->nruns, &value,
                                   vals + i * 2 * d);
    }
    free(vals);
    strbuf_free(&value);
    return NULL;
}

/* Formats the text of every QI run: per class (the values' lookups miss the
 * cache, so two threads share the classes), and once for suppressed rows. */
static int format_classes(publisher *pub, unsigned threads, ak_error *err)
{
    const partition *p = pub->p;
    const size_t cells = p->nclasses * pub->nruns;
    pub->class_off = malloc((cells + 1) * sizeof *pub->class_off);
    pub->star_off = malloc((pub->nruns + 1) * sizeof *pub->star_off);
    if (!pub->class_off || !pub->star_off) return ak_err_nomem(err);
    if (!(pub->int_range = calloc(pub->t->nqi ? pub->t->nqi : 1, 1))) return ak_err_nomem(err);
    for (uint32_t q = 0; q < pub->t->nqi; q++)
        pub->int_range[q] = (unsigned char)recode_is_int_range(pub->t, pub->p, pub->style, q);
    if (format_class(pub, 0, 1, &pub->star_text, pub->star_off, NULL, NULL) != 0) return ak_err_nomem(err);
    pub->star_off[pub->nruns] = pub->star_text.len;
    const size_t half = threads > 1 && p->nclasses >= 4096 ? p->nclasses / 2 : p->nclasses;
    format_job jobs[2] = {{pub, 0, half, {0}, 0}, {pub, half, p->nclasses, {0}, 0}};
    pthread_t helper;
    int helped = half < p->nclasses && ak_thread_create(&helper, format_classes_some, &jobs[1]) == 0;
    format_classes_some(&jobs[0]);
    if (helped) pthread_join(helper, NULL);
    else format_classes_some(&jobs[1]);
    int rc = jobs[0].rc || jobs[1].rc ? ak_err_nomem(err) : ANONKIT_OK;
    pub->class_text = jobs[0].text;
    if (rc == ANONKIT_OK) {
        const size_t base = pub->class_text.len;
        if (strbuf_append(&pub->class_text, jobs[1].text.data, jobs[1].text.len) != 0) rc = ak_err_nomem(err);
        for (size_t i = half * pub->nruns; rc == ANONKIT_OK && i < cells; i++) pub->class_off[i] += base;
    }
    strbuf_free(&jobs[1].text);
    pub->class_off[cells] = pub->class_text.len;
    return rc;
}

/* Appends one output row to b from its class and its copied fields
 * (escaped, field j at copied[off[j] .. off[j + 1])). */
static int compose_row(const publisher *pub, strbuf *b, uint32_t cls, const char *copied, const size_t *off)
{
    const size_t start = b->len;
    const int star = cls == PARTITION_SUPPRESSED;
    const char *runs = star ? pub->star_text.data : pub->class_text.data;
    const size_t *run_off = star ? pub->star_off : pub->class_off + (size_t)cls * pub->nruns;
    uint32_t run = 0;
    for (uint32_t g = 0; g < pub->nsegments; g++) {
        const segment *seg = &pub->segments[g];
        const char *src;
        size_t len;
        if (seg->copied) {
            src = copied + off[seg->first];
            len = off[seg->first + 1] - off[seg->first];
        } else {
            src = runs + run_off[run];
            len = run_off[run + 1] - run_off[run];
            run++;
        }
        if (strbuf_reserve(b, len + 2) != 0) return -1;
        if (g) b->data[b->len++] = pub->delim;
        memcpy(b->data + b->len, src, len);
        b->len += len;
    }
    if (b->len == start && strbuf_append(b, "\"\"", 2) != 0) return -1; /* one empty field is not an empty line */
    return strbuf_append(b, "\n", 1);
}

/* A block of output rows composed by one thread. */
typedef struct compose_job {
    const publisher *pub;
    const uint32_t *class_of;
    const uint32_t *order;     /* rows to write, in output order */
    size_t first, last;        /* this job's part of order */
    const char *copied;        /* copied fields of all rows (NULL when none) */
    const size_t *copied_off;  /* ncopied offsets per row, one extra at the end */
    const size_t *no_copied;   /* offsets to use when there are no copied fields */
    size_t limit;              /* > 0: stop after the row that brings out to limit bytes (last is then moved there) */
    strbuf out;
    int rc;
} compose_job;

static void *compose_rows(void *arg)
{
    compose_job *job = arg;
    const publisher *pub = job->pub;
    const uint32_t k = pub->ncopied;
    job->out.len = 0;
    job->rc = 0;
    for (size_t i = job->first; i < job->last; i++) {
        const uint32_t r = job->order[i];
        /* Rows come in random order: fetch the class text a few rows ahead. */
        if (i + 8 < job->last) {
            uint32_t ahead = job->class_of[job->order[i + 8]];
            if (ahead != PARTITION_SUPPRESSED) {
                __builtin_prefetch(pub->class_off + (size_t)ahead * pub->nruns);
                __builtin_prefetch(pub->class_text.data + pub->class_off[(size_t)ahead * pub->nruns]);
            }
        }
        if (i + 16 < job->last) __builtin_prefetch(job->class_of + job->order[i + 16]);
        /* and the row's copied fields: their offsets, then their bytes */
        if (k && i + 16 < job->last) __builtin_prefetch(job->copied_off + (size_t)job->order[i + 16] * k);
        if (k && i + 8 < job->last) {
            const size_t *ahead_off = job->copied_off + (size_t)job->order[i + 8] * k;
            if (ahead_off[k] > ahead_off[0]) { /* not all empty */
                __builtin_prefetch(job->copied + ahead_off[0]);
                __builtin_prefetch(job->copied + (ahead_off[k] - 1));
            }
        }
        if (compose_row(pub, &job->out, job->class_of[r], job->copied, k ? job->copied_off + (size_t)r * k : job->no_copied) !=
            0) {
            job->rc = -1;
            break;
        }
        if (job->limit && job->out.len >= job->limit) {
            job->last = i + 1;
            break;
        }
    }
    return NULL;
}

/* The rows of a part of n rows to write, in writing order, into order;
 * returns how many: every row but suppressed ones when they are dropped,
 * shuffled with rng unless the input order is kept. Counts the rows into
 * stats. */
static size_t order_rows(const uint32_t *class_of, size_t n, const publish_opts *opts, ak_rng *rng, uint32_t *order,
                         publish_stats *stats)
{
    size_t nwrite = 0;
    for (size_t r = 0; r < n; r++) {
        const int suppressed = class_of[r] == PARTITION_SUPPRESSED;
        stats->suppressed += (uint64_t)suppressed;
        stats->published += (uint64_t)!suppressed;
        if (!(suppressed && opts->drop_suppressed)) order[nwrite++] = (uint32_t)r;
    }
    if (!opts->keep_order)
        for (size_t i = nwrite; i > 1; i--) {
            const size_t j = (size_t)ak_rng_below(rng, i);
            const uint32_t tmp = order[i - 1];
            order[i - 1] = order[j];
            order[j] = tmp;
        }
    return nwrite;
}

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

/* Appends the CSV form of copied unit u of rec to b: its fields escaped and
 * joined by the delimiter, taken as the reader holds them when they are
 * already that (csv_run_is_plain, and no field begins or ends with a space;
 * a unit of one field is always escaped, as the bytes of a quoted field
 * alone do not show its quotes). */
static int append_unit(const publisher *pub, const csv_record *rec, uint32_t u, strbuf *b)
{
    const csv_field *f = rec->fields + pub->copied_col[u];
    const uint32_t nc = pub->copied_ncols[u];
    if (nc > 1) {
        const char *from = f[0].data, *to = f[nc - 1].data + f[nc - 1].len;
        int plain = to >= from && csv_run_is_plain(from, (size_t)(to - from));
        for (uint32_t i = 0; i < nc && plain; i++)
            plain = !f[i].len || (f[i].data[0] != ' ' && f[i].data[f[i].len - 1] != ' ');
        if (plain) return strbuf_append(b, from, (size_t)(to - from));
    }
    for (uint32_t i = 0; i < nc; i++)
        if ((i && strbuf_append(b, &pub->delim, 1) != 0) || escape_append(b, f[i].data, f[i].len, pub->delim) != 0)
            return -1;
    return 0;
}

/* Appends the copied units of rec to b, their offsets to off[0 .. ncopied). */
static int append_copied(const publisher *pub, const csv_record *rec, strbuf *b, size_t *off)
{
    for (uint32_t u = 0; u < pub->ncopied; u++) {
        off[u] = b->len;
        if (append_unit(pub, rec, u, b) != 0) return -1;
    }
    return 0;
}

static void publisher_free(publisher *pub)
{
    free(pub->out_qi);
    free(pub->copied_col);
    free(pub->copied_ncols);
    free(pub->segments);
    strbuf_free(&pub->class_text);
    free(pub->class_off);
    strbuf_free(&pub->star_text);
    free(pub->star_off);
    free(pub->int_range);
    strbuf_free(&pub->line);
}

static int input_changed(const table *t, long line, ak_error *err)
{
    return ak_err_set(err, ANONKIT_E_INPUT, t->display_name, line, 0, "the input changed while it was read");
}

/* The output columns of t as segments (identifiers dropped); with
 * merge_copied, copied columns next to each other in the input are one unit. */
static int publisher_setup(publisher *pub, const table *t, const publish_opts *opts, int merge_copied, ak_error *err)
{
    memset(pub, 0, sizeof *pub);
    pub->t = t;
    pub->style = opts->style;
    pub->means = opts->means;
    pub->delim = t->delimiter;
    pub->out_qi = malloc((t->ncolumns + 1) * sizeof *pub->out_qi);
    pub->copied_col = malloc((t->ncolumns + 1) * sizeof *pub->copied_col);
    pub->copied_ncols = malloc((t->ncolumns + 1) * sizeof *pub->copied_ncols);
    pub->segments = malloc((t->ncolumns + 1) * sizeof *pub->segments);
    if (!pub->out_qi || !pub->copied_col || !pub->copied_ncols || !pub->segments) return ak_err_nomem(err);
    for (uint32_t c = 0; c < t->ncolumns; c++) {
        if (t->roles[c] == ROLE_IDENTIFIER) continue;
        int32_t q = -1;
        for (uint32_t i = 0; i < t->nqi; i++)
            if (t->qi[i].column == c) q = (int32_t)i;
        segment *last = pub->nsegments ? &pub->segments[pub->nsegments - 1] : NULL;
        if (q < 0 && merge_copied && last && last->copied &&
            pub->copied_col[last->first] + pub->copied_ncols[last->first] == c) {
            pub->copied_ncols[last->first]++;
        } else if (q < 0) {
            pub->segments[pub->nsegments++] = (segment){.first = pub->ncopied, .count = 1, .copied = 1};
            pub->copied_ncols[pub->ncopied] = 1;
            pub->copied_col[pub->ncopied++] = c;
        } else if (last && !last->copied) {
            last->count++;
        } else {
            pub->segments[pub->nsegments++] = (segment){.first = pub->nout, .count = 1, .copied = 0};
            pub->nruns++;
        }
        pub->out_qi[pub->nout++] = q;
    }
    return ANONKIT_OK;
}

/* The header row: every column but the identifiers. */
static int write_header(const table *t, csv_writer *writer, ak_error *err)
{
    for (uint32_t c = 0; c < t->ncolumns; c++)
        if (t->roles[c] != ROLE_IDENTIFIER) AK_CHECK(csv_write_field(writer, t->column_names[c], strlen(t->column_names[c]), err));
    return csv_write_end(writer, err);
}

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
    int rc;
    ak_error err;
} copy_piece;

/* Rows between two looks at copy_piece.cancel. */
#define COPY_CANCEL_ROWS 65536

/* Gives b room for `bytes` bytes on fresh (huge) pages, b being empty. */
static int reserve_huge(strbuf *b, size_t bytes)
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
        if (p->length < SIZE_MAX / 2) (void)reserve_huge(&p->text, (size_t)(p->length + p->length / 16) + 4096);
    }
    p->rc = p->whole ? csv_reader_open(&reader, p->t->path, p->pub->delim, &p->err)
                     : csv_reader_open_range(&reader, p->t->path, p->pub->delim, p->offset, p->length, 2, &p->err);
    if (p->rc == ANONKIT_OK && p->whole && (got = csv_read(reader, &rec, &p->err)) < 0) p->rc = got; /* the header */
    while (p->rc == ANONKIT_OK && (got = csv_read(reader, &rec, &p->err)) == 1) {
        if (p->nrows >= p->limit || rec.count != p->t->ncolumns) {
            p->rc = input_changed(p->t, rec.line, &p->err);
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
        if (append_copied(p->pub, &rec, &p->text, p->off + p->nrows * k) != 0) {
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
}

/* Reads the copied units of all t->nrows rows into *text, with their offsets
 * in *off (ncopied per row and one more, the end). A large input is cut in
 * two pieces read on two threads, as table_load does, and read whole
 * whenever the pieces may not read as the whole does. */
static int read_copied(const publisher *pub, const table *t, unsigned threads, const atomic_int *cancel,
                       strbuf *text, size_t **off, ak_error *err)
{
    const size_t n = t->nrows;
    const uint32_t k = pub->ncopied;
    struct stat st;
    if (threads > 1 && stat(t->path, &st) == 0 && (uint64_t)st.st_size >= PUBLISH_PARALLEL_MIN_BYTES) {
        csv_reader *reader = NULL;
        csv_record rec;
        uint64_t data_start = 0;
        if (csv_reader_open(&reader, t->path, pub->delim, err) == ANONKIT_OK && csv_read(reader, &rec, err) == 1)
            data_start = csv_reader_offset(reader);
        csv_reader_free(reader);
        const uint64_t split = data_start ? csv_find_split(t->path, data_start, (uint64_t)st.st_size) : 0;
        if (split && split < (uint64_t)st.st_size) {
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
            if (both < SIZE_MAX / 2) (void)reserve_huge(&pieces[0].text, (size_t)(both + both / 16) + 8192);
            pthread_t helper;
            const int started = ak_thread_create(&helper, copy_rows, &pieces[1]) == 0;
            if (started) {
                copy_rows(&pieces[0]);
                pthread_join(helper, NULL);
            }
            const size_t n0 = pieces[0].nrows, n1 = pieces[1].nrows;
            int rc = ANONKIT_OK;
            if (started && pieces[0].rc == ANONKIT_OK && pieces[1].rc == ANONKIT_OK && !pieces[0].quoted &&
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
            if (rc != ANONKIT_OK) return rc < 0 ? rc : ANONKIT_OK;
        }
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
        (void)reserve_huge(&whole.text, (size_t)whole_st.st_size + (size_t)whole_st.st_size / 16 + 4096);
    copy_rows(&whole);
    if (whole.rc == ANONKIT_OK && whole.nrows != n) whole.rc = input_changed(t, 0, &whole.err);
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
    int rc;            /* of read_copied */
    ak_error err;
    strbuf text;
    size_t *off;
};

static void *copied_main(void *arg)
{
    publish_copied *c = arg;
    /* one thread: the other core runs the algorithm meanwhile */
    c->rc = read_copied(&c->pub, c->t, 1, &c->cancel, &c->text, &c->off, &c->err);
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
    atomic_store(&c->cancel, 1); /* not wanted any more (after copied_take, the reading has ended) */
    copied_join(c);
    publisher_free(&c->pub);
    strbuf_free(&c->text);
    free(c->off);
    free(c);
}

/* Takes the units read ahead by c for t (whose writer has the layout pub):
 * fills text and off, or returns the reading's error. */
static int copied_take(publish_copied *c, const table *t, const publisher *pub, strbuf *text, size_t **off,
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
        compose_rows(&job);
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
                      ak_error *err)
{
    write_pipe wp;
    memset(&wp, 0, sizeof wp);
    wp.stream = stream;
    wp.proto = *proto;
    wp.nwrite = nwrite;
    wp.nblocks = (nwrite + PUBLISH_BLOCK_ROWS - 1) / PUBLISH_BLOCK_ROWS;
    wp.writer = writer;
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
    for (int i = 0; i < 2 && nwrite > 0; i++) (void)reserve_huge(&workers[i].out, block_bytes);
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

int publish_write(const table *t, const partition *p, const publish_opts *opts, FILE *out,
                  const char *out_name, publish_stats *stats, ak_error *err)
{
    memset(stats, 0, sizeof *stats);
    publisher pub;
    int rc = publisher_setup(&pub, t, opts, 1, err);
    pub.p = p;
    csv_reader *reader = NULL;
    csv_writer *writer = NULL;
    strbuf copied = {0};
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
    if ((rc = format_classes(&pub, opts->threads, err)) < 0) goto done;
    if ((rc = csv_writer_open_stream(&writer, out, out_name, pub.delim, err)) < 0) goto done;
    if ((rc = write_header(t, writer, err)) < 0) goto done;

    /* The rows to write, in order: all but dropped suppressed rows. */
    if (!(order = ak_huge_malloc((n ? n : 1) * sizeof *order))) { rc = ak_err_nomem(err); goto done; } /* shuffled at random */
    ak_rng rng;
    ak_rng_seed(&rng, opts->seed);
    const size_t nwrite = order_rows(p->class_of, n, opts, &rng, order, stats);

    const uint32_t k = pub.ncopied;
    if (k && opts->keep_order) {
        /* Stream: read a row, write it. */
        if ((rc = csv_reader_open(&reader, t->path, pub.delim, err)) < 0) goto done;
        csv_record rec;
        if ((rc = csv_read(reader, &rec, err)) < 0) goto done;
        size_t r = 0, next = 0;
        while ((rc = csv_read(reader, &rec, err)) == 1) {
            if (r >= n || rec.count != t->ncolumns) { rc = input_changed(t, rec.line, err); goto done; }
            if (next < nwrite && order[next] == r) {
                copied.len = 0;
                if (append_copied(&pub, &rec, &copied, local_off) != 0) { rc = ak_err_nomem(err); goto done; }
                local_off[k] = copied.len;
                pub.line.len = 0;
                if (compose_row(&pub, &pub.line, p->class_of[r], copied.data, local_off) != 0) { rc = ak_err_nomem(err); goto done; }
                if ((rc = csv_write_raw(writer, pub.line.data, pub.line.len, err)) < 0) goto done;
                next++;
            }
            r++;
        }
        if (rc < 0) goto done;
        if (r != n) { rc = input_changed(t, 0, err); goto done; }
    } else {
        /* Hold the copied units of every row, then write in output order. */
        if (k && opts->copied) rc = copied_take(opts->copied, t, &pub, &copied, &copied_off, err);
        else if (k) rc = read_copied(&pub, t, opts->threads, NULL, &copied, &copied_off, err);
        if (rc < 0) goto done;
        const compose_job proto = {.pub = &pub, .class_of = p->class_of, .order = order, .copied = copied.data,
                                   .copied_off = copied_off, .no_copied = local_off};
        if ((rc = write_rows(&proto, nwrite, opts->threads, writer, out, err)) < 0) goto done;
    }
    rc = csv_writer_flush(writer, err);
done:
    csv_reader_free(reader);
    csv_writer_free(writer);
    publisher_free(&pub);
    strbuf_free(&copied);
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
    /* the part handed over: its rows, ordered by the thread (order_rows) */
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
        compose_rows(&job);
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
        const size_t nwrite = order_rows(c->class_of, c->nrows, &ps->opts, &ps->rng, ps->order, &ps->stats);
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
    if (rc == ANONKIT_OK) rc = write_header(schema, ps->writer, err);
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
    AK_CHECK(format_classes(pub, ps->opts.threads, err));
    const size_t n = view->nrows;
    if (n > UINT32_MAX) return ak_err_set(err, ANONKIT_E_INTERNAL, NULL, 0, 0, "publish_stream_part: too many rows");
    if (n > ps->cap) {
        uint32_t *o = realloc(ps->order, n * sizeof *o);
        if (!o) return ak_err_nomem(err);
        ps->order = o;
        ps->cap = n;
    }
    if (ps->comp.started) return composer_hand_over(ps, n, p->class_of, copied, copied_off, err);
    const size_t nwrite = order_rows(p->class_of, n, &ps->opts, &ps->rng, ps->order, &ps->stats);
    if (ps->opts.threads > 1) return compose_part(ps, p->class_of, nwrite, copied, copied_off, NULL, err);
    const size_t none[2] = {0, 0};
    for (size_t start = 0; start < nwrite; start += PUBLISH_BLOCK_ROWS) {
        compose_job job = {.pub = pub, .class_of = p->class_of, .order = ps->order, .first = start,
                           .last = start + PUBLISH_BLOCK_ROWS < nwrite ? start + PUBLISH_BLOCK_ROWS : nwrite,
                           .copied = copied, .copied_off = copied_off, .no_copied = none, .out = ps->out};
        compose_rows(&job);
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
