/* table_pieces.c — the loader reading a large file in two pieces on two
 * threads (docs/ARCHITECTURE.md §12): each piece encodes its rows with
 * dictionaries of its own, which are merged and mapped when both are done;
 * and the numeric QIs ranked at the end of a load (finish_numeric). Split from
 * table.c along that section; what both share is in table_internal.h. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "anonkit/anonkit.h"
#include "common/hugemem.h"
#include "common/parallel.h"
#include "core/table_internal.h"

/* One of the two pieces of a file read in parallel, by load_rows_parallel
 * or stream_rows_parallel. */
typedef struct read_piece {
    table *t;                /* where its rows go: the table, or a view of it with arrays of its own */
    const table_spec *spec;
    unsigned index;          /* 0 or 1 */
    uint64_t offset, length; /* bytes of the file */
    long first_line;         /* of the first piece; the second's is not known (see load_rows_parallel) */
    size_t nrows, cap;
    long lines;              /* physical lines the piece's reader consumed */
    int quoted;              /* a field began with a quote */
    qi_reader *qr;           /* this piece's numeric dictionaries (the first piece: the table's) */
    strmap sensitive, classes; /* this piece's dictionaries */
    missing_list missing;
    size_t slot_base;        /* streaming: its slots, [slot_base, slot_base + STREAM_CHUNK_ROWS) */
    atomic_int *give_up;     /* streaming: set by a piece that failed; the other stops at its next chunk */
    input_digest digest;     /* not streaming: the records it read (table.digest) */
    uint64_t cut;            /* where the file is cut: the second piece's offset */
    int rc;
    ak_error err;
} read_piece;

/* Sets up the pieces [data_start, split) and [split, size) of spec's file,
 * the first with the table's numeric dictionaries qr, the second with fresh
 * ones (streaming as the load is). */
static int pieces_init(read_piece *pieces, table *t, const table_spec *spec, qi_reader *qr, uint64_t data_start,
                       uint64_t split, uint64_t size, ak_error *err)
{
    memset(pieces, 0, 2 * sizeof *pieces);
    int rc = ANONKIT_OK;
    for (unsigned i = 0; i < 2; i++) {
        read_piece *p = &pieces[i];
        p->t = t;
        p->spec = spec;
        p->index = i;
        p->offset = i ? split : data_start;
        p->length = i ? size - split : split - data_start;
        p->cut = split;
        p->first_line = 2; /* the header is line 1; the second piece's numbers serve no message */
        p->qr = i ? calloc(t->nqi, sizeof *p->qr) : qr;
        if (!p->qr || strmap_init(&p->sensitive, 64) != 0 || strmap_init(&p->classes, 64) != 0)
            rc = ak_err_nomem(err);
        for (uint32_t q = 0; i && p->qr && q < t->nqi; q++) {
            numdict_init(&p->qr[q].numbers);
            p->qr[q].numbers.streaming = spec->row_sink != NULL;
            p->qr[q].numbers.stream_base = i * STREAM_CHUNK_ROWS; /* its slots (stream_rows_parallel) */
        }
    }
    return rc;
}

static void pieces_free(read_piece *pieces, uint32_t nqi)
{
    for (int i = 0; i < 2; i++) {
        strmap_free(&pieces[i].sensitive);
        strmap_free(&pieces[i].classes);
        digest_free(&pieces[i].digest);
    }
    for (uint32_t q = 0; pieces[1].qr && q < nqi; q++) {
        numdict_free(&pieces[1].qr[q].numbers);
        tm_rows_reset(&pieces[1].qr[q].missing);
    }
    free(pieces[1].qr);
}

static void *load_piece_rows(void *arg)
{
    read_piece *p = arg;
    csv_reader *reader = NULL;
    p->rc = p->spec->mem ? csv_reader_open_table_rows(&reader, p->spec->mem, p->spec->display_name, p->offset,
                                                      p->length, &p->err) /* a table's pieces: rows */
                         : csv_reader_open_range(&reader, p->spec->path, p->spec->delimiter, p->offset, p->length,
                                                 p->first_line, &p->err);
    if (reader) csv_reader_progress(reader, p->spec->progress, p->index != 0); /* piece 0: the calling thread */
    if (p->rc == ANONKIT_OK) p->rc = table__reader_wants(p->t, reader, &p->err);
    if (p->rc == ANONKIT_OK && !p->spec->read_once) p->rc = csv_reader_digest(reader, &p->digest, p->cut, &p->err);
    csv_record rec;
    int got = 0;
    while (p->rc == ANONKIT_OK && (got = csv_read(reader, &rec, &p->err)) == 1) {
        const label_dicts dicts = {&p->sensitive, &p->classes};
        if ((p->rc = table__grow_rows(p->t, &p->cap, p->nrows + 1, &p->err)) < 0) break;
        p->rc = table__encode_record(p->t, p->qr, &dicts, &rec, p->nrows, &p->missing, &p->err);
        p->nrows++;
    }
    if (p->rc == ANONKIT_OK && got < 0) p->rc = got;
    if (reader) {
        p->lines = csv_reader_line(reader) - p->first_line;
        p->quoted = csv_reader_saw_quote(reader);
    }
    csv_reader_free(reader);
    return NULL;
}

/* Maps codes[0..n) of a piece through map into dst[0..n). */
static void map_codes(uint32_t *dst, const uint32_t *codes, size_t n, const uint32_t *map)
{
    for (size_t r = 0; r < n; r++) dst[r] = map[codes[r]];
}

/* Makes the first piece's dictionary the table's and gives in map the code in
 * it of every code of the second piece's dictionary (added when new), which
 * keeps the order of first appearance of a sequential read. map has room
 * for second->count codes (the caller frees it). */
static int merge_piece_dicts(strmap *table_dict, strmap *first, const strmap *second, uint32_t **map, ak_error *err)
{
    strmap_free(table_dict);
    *table_dict = *first;
    memset(first, 0, sizeof *first);
    if (!(*map = malloc((second->count + 1) * sizeof **map))) return ak_err_nomem(err);
    for (uint32_t id = 0; id < second->count; id++)
        if (strmap_intern(table_dict, strmap_key(second, id), strmap_key_len(second, id), &(*map)[id], NULL) != 0)
            return ak_err_nomem(err);
    return ANONKIT_OK;
}

/* Work of finish_numeric: the numeric QIs q with owner[q] == who. */
typedef struct finish_job {
    table *t;
    qi_reader *qr;
    uint32_t **more;       /* per QI, the rows from n0 on (a second piece's, freed once ranked), or NULL */
    size_t n0;
    const unsigned char *owner;
    unsigned char who;
    int rc;
    ak_error err;
} finish_job;

static void *finish_some(void *arg)
{
    finish_job *job = arg;
    table *t = job->t;
    job->rc = ANONKIT_OK;
    for (uint32_t q = 0; q < t->nqi && job->rc == ANONKIT_OK; q++) {
        table_qi *a = &t->qi[q];
        if (a->kind != ATTR_NUMERIC || job->owner[q] != job->who) continue;
        const size_t n0 = job->more ? job->n0 : t->nrows;
        job->rc = numdict_finish_parts(&job->qr[q].numbers, a->codes, n0, job->more ? job->more[q] : NULL,
                                       t->nrows - n0, &a->values, &a->texts, &a->text_store, &a->ncodes, &job->err);
        if (job->more) { /* freed here, on the thread that ranked it */
            free(job->more[q]);
            job->more[q] = NULL;
        }
    }
    return NULL;
}

/* Rows below which ranking the numeric columns on two threads does not pay. */
#define PARALLEL_FINISH_ROWS 100000

/* Ranks every numeric QI's codes (numdict_finish). The columns are
 * independent: with two threads each column goes, largest first, to the one
 * with less work so far, a column's work being its rows plus its value range
 * (integer mode) or twice its rows (hashed and sorted). With more, rows from
 * n0 on are still in more[q] (a second piece's) and move to the table's array
 * in the same pass (numdict_finish_parts); more[q] is then freed and NULL. */
int table__finish_numeric(table *t, qi_reader *qr, unsigned threads, uint32_t **more, size_t n0,
                          ak_error *err)
{
    unsigned char owner[t->nqi ? t->nqi : 1];
    memset(owner, 0, sizeof owner);
    const int two = threads > 1 && t->nrows >= PARALLEL_FINISH_ROWS;
    if (two) {
        double work[t->nqi ? t->nqi : 1], load[2] = {0, 0};
        unsigned char done[t->nqi ? t->nqi : 1];
        for (uint32_t q = 0; q < t->nqi; q++) {
            const numdict *d = &qr[q].numbers;
            done[q] = t->qi[q].kind != ATTR_NUMERIC;
            work[q] = d->general || d->max < d->min ? 2.0 * (double)t->nrows
                                                     : (double)t->nrows + (double)(d->max - d->min) + 1;
        }
        for (;;) {
            uint32_t big = t->nqi;
            for (uint32_t q = 0; q < t->nqi; q++)
                if (!done[q] && (big == t->nqi || work[q] > work[big])) big = q;
            if (big == t->nqi) break;
            done[big] = 1;
            owner[big] = load[1] < load[0];
            load[owner[big]] += work[big];
        }
    }
    finish_job jobs[2] = {{t, qr, more, n0, owner, 0, 0, {0}}, {t, qr, more, n0, owner, 1, 0, {0}}};
    ak_run_parts(jobs, sizeof *jobs, two ? 2 : 1, finish_some); /* (one: jobs[0] owns every column) */
    for (int i = 0; i < 2; i++)
        if (jobs[i].rc < 0) {
            if (err) *err = jobs[i].err;
            return jobs[i].rc;
        }
    return ANONKIT_OK;
}

/* Bytes below which reading in parallel does not pay. */
#define PARALLEL_MIN_BYTES (8u << 20)
/* Rows of a table in memory below which it is not read in two pieces. */
#define TABLE_PARALLEL_MIN_ROWS 65536

static uint64_t parallel_min_bytes(const table_spec *spec)
{
    return spec->parallel_min_bytes ? spec->parallel_min_bytes : PARALLEL_MIN_BYTES;
}

/* Whether the file of spec is large enough to be read in two pieces, and
 * where (*split: the first line end after the middle of its data, which
 * starts at data_start; *size: the file's size). */
static int find_cut(const table_spec *spec, uint64_t data_start, uint64_t *split, uint64_t *size)
{
    if (spec->mem) { /* a table in memory: cut in rows, at the middle (the pieces' offsets and lengths are rows) */
        const uint64_t rows = anonkit_table_rows(spec->mem);
        if (rows < TABLE_PARALLEL_MIN_ROWS || spec->row_sink) return 0;
        *size = rows;
        *split = rows / 2;
        return 1;
    }
    struct stat st;
    if (stat(spec->path, &st) != 0 || (uint64_t)st.st_size < data_start + parallel_min_bytes(spec)) return 0;
    *size = (uint64_t)st.st_size;
    *split = csv_find_split(spec->path, data_start, *size);
    return *split && *split < *size;
}

/* The arrays of a view made by piece_view. */
static void piece_view_free(table *v)
{
    for (uint32_t q = 0; v->qi && q < v->nqi; q++) free(v->qi[q].codes);
    free(v->qi);
    free(v->sensitive_codes);
    free(v->class_codes);
    free(v->sensitive_values);
    free(v->target_values);
}

/* A view of t that shares its schema and hierarchies but encodes rows into
 * arrays of its own (freed by piece_view_free). */
static int piece_view(table *v, const table *t, ak_error *err)
{
    *v = *t;
    v->qi = malloc(t->nqi * sizeof *v->qi);
    v->sensitive_codes = v->class_codes = NULL;
    v->sensitive_values = v->target_values = NULL;
    if (!v->qi) return ak_err_nomem(err);
    for (uint32_t q = 0; q < t->nqi; q++) {
        v->qi[q] = t->qi[q];
        v->qi[q].codes = NULL;
    }
    return ANONKIT_OK;
}

/* Reads the data rows in two pieces on two threads when the file allows it:
 * the file is large and is cut at the first line end after its middle; the
 * first piece goes to the table, the second to arrays of its own that are
 * appended afterwards (numeric codes while they are ranked, finish_numeric,
 * which is done here). The cut is at a record boundary when no field of the
 * first piece begins with a quote (a line end then always ends a record),
 * and the pieces read as the whole file does when neither holds a quoted
 * field and the first piece has one record per line (a run of empty lines at
 * its end would not be records). Those are checked after reading; that and
 * any other surprise (a bad row, a value outside integer mode, ...) send the
 * caller back to the sequential reader, which also gives the exact error.
 * *loaded tells whether the rows were read (and ranked). */
int table__load_rows_parallel(table *t, const table_spec *spec, qi_reader *qr, uint64_t data_start, int *loaded,
                              ak_error *err)
{
    *loaded = 0;
    uint64_t split, size;
    if (!find_cut(spec, data_start, &split, &size)) return ANONKIT_OK;
    read_piece pieces[2];
    table view;
    memset(&view, 0, sizeof view);
    int rc = piece_view(&view, t, err);
    const int ready = pieces_init(pieces, t, spec, qr, data_start, split, size, err);
    if (rc == ANONKIT_OK) rc = ready;
    pieces[1].t = &view;
    /* The arrays sized for each piece at once (grown further if need be), so
     * that they are written on fresh (huge) pages rather than moved around. */
    uint64_t lines[2];
    for (int i = 0; i < 2; i++)
        lines[i] = spec->mem ? pieces[i].length : csv_estimate_lines(spec->path, pieces[i].offset, pieces[i].length);
    for (int i = 0; rc == ANONKIT_OK && i < 2; i++) {
        /* the table's: room for both pieces, which it holds in the end */
        const uint64_t want = i ? lines[1] : lines[0] + lines[1];
        if (lines[0] && lines[1] && want < SIZE_MAX / 64) rc = table__grow_rows(pieces[i].t, &pieces[i].cap, (size_t)want, err);
    }
    if (rc == ANONKIT_OK) ak_run_parts(pieces, sizeof *pieces, 2, load_piece_rows);
    int usable = rc == ANONKIT_OK && pieces[0].rc == ANONKIT_OK && pieces[1].rc == ANONKIT_OK && !table__has_missing_rows(t, qr) &&
                 !table__has_missing_rows(t, pieces[1].qr) &&
                 !pieces[0].missing.count && !pieces[1].missing.count && !pieces[0].quoted && !pieces[1].quoted &&
                 pieces[0].lines == (long)pieces[0].nrows;
    for (uint32_t q = 0; usable && q < t->nqi; q++)
        if (t->qi[q].kind == ATTR_NUMERIC && (qr[q].numbers.general || pieces[1].qr[q].numbers.general)) usable = 0;
    if (pieces[0].rc == ANONKIT_E_NOMEM || pieces[1].rc == ANONKIT_E_NOMEM) rc = ak_err_nomem(err);
    if (usable && rc == ANONKIT_OK) {
        /* Merge: the second piece's rows appended; integer dictionaries by
         * their extent; the second piece's label codes mapped into the first
         * piece's dictionaries. */
        const size_t n0 = pieces[0].nrows, n1 = pieces[1].nrows;
        size_t cap = pieces[0].cap;
        rc = table__grow_rows(t, &cap, n0 + n1, err);
        uint32_t *more[t->nqi ? t->nqi : 1];
        for (uint32_t q = 0; q < t->nqi; q++) more[q] = view.qi[q].codes;
        for (uint32_t q = 0; rc == ANONKIT_OK && q < t->nqi; q++) {
            numdict *a = &qr[q].numbers, *b = &pieces[1].qr[q].numbers;
            if (b->min < a->min) a->min = b->min;
            if (b->max > a->max) a->max = b->max;
            /* numeric codes move in the ranking pass (finish_numeric, below) */
            if (n1 && t->qi[q].kind != ATTR_NUMERIC)
                memcpy(t->qi[q].codes + n0, view.qi[q].codes, n1 * sizeof *view.qi[q].codes);
        }
        uint32_t *map = NULL;
        if (rc == ANONKIT_OK && t->sensitive_column >= 0 &&
            (rc = merge_piece_dicts(&t->sensitive_dict, &pieces[0].sensitive, &pieces[1].sensitive, &map, err)) == 0)
            map_codes(t->sensitive_codes + n0, view.sensitive_codes, n1, map);
        free(map);
        map = NULL;
        if (rc == ANONKIT_OK && t->class_column >= 0 &&
            (rc = merge_piece_dicts(&t->class_dict, &pieces[0].classes, &pieces[1].classes, &map, err)) == 0)
            map_codes(t->class_codes + n0, view.class_codes, n1, map);
        free(map);
        if (rc == ANONKIT_OK && t->sensitive_numeric && n1)
            memcpy(t->sensitive_values + n0, view.sensitive_values, n1 * sizeof *view.sensitive_values);
        if (rc == ANONKIT_OK && t->target_column >= 0 && n1)
            memcpy(t->target_values + n0, view.target_values, n1 * sizeof *view.target_values);
        t->nrows = n0 + n1;
        if (rc == ANONKIT_OK && (digest_merge(&t->digest, &pieces[0].digest) != 0 ||
                                 digest_merge(&t->digest, &pieces[1].digest) != 0))
            rc = ak_err_nomem(err);
        t->digest.cut = spec->mem ? 0 : split; /* a second read makes the same segments (csv_reader_digest) */
        if (rc == ANONKIT_OK) rc = table__finish_numeric(t, qr, spec->threads, more, n0, err);
        for (uint32_t q = 0; q < t->nqi; q++) view.qi[q].codes = more[q]; /* NULL where freed */
        *loaded = rc == ANONKIT_OK;
    }
    if (!*loaded) {
        /* Back to a clean state for the sequential reader. */
        t->nrows = 0;
        for (uint32_t q = 0; q < t->nqi; q++)
            if (t->qi[q].kind == ATTR_NUMERIC) {
                numdict_free(&qr[q].numbers);
                numdict_init(&qr[q].numbers);
                tm_rows_reset(&qr[q].missing);
            }
    }
    pieces_free(pieces, t->nqi);
    piece_view_free(&view);
    return rc;
}

/* stream_rows for one piece, on its own thread: encodes into its own slots
 * and dictionaries and hands every row to the sink as piece p->index. */
static void *stream_piece_rows(void *arg)
{
    read_piece *p = arg;
    csv_reader *reader = NULL;
    p->rc = csv_reader_open_range(&reader, p->spec->path, p->spec->delimiter, p->offset, p->length, p->first_line,
                                  &p->err);
    if (reader) csv_reader_progress(reader, p->spec->progress, p->index != 0); /* piece 0: the calling thread */
    csv_record rec;
    size_t slot = 0;
    int got = 0;
    while (p->rc == ANONKIT_OK && (got = csv_read(reader, &rec, &p->err)) == 1) {
        const label_dicts dicts = {&p->sensitive, &p->classes};
        p->rc = table__encode_record(p->t, p->qr, &dicts, &rec, p->slot_base + slot, &p->missing, &p->err);
        if (p->rc == ANONKIT_OK && p->missing.count) break; /* the sequential read lists them */
        if (p->rc == ANONKIT_OK)
            p->rc = p->spec->row_sink(p->spec->sink_ctx, p->t, p->index, p->slot_base + slot, &rec, &p->err);
        p->nrows++;
        if (p->rc == ANONKIT_OK && ++slot == STREAM_CHUNK_ROWS) {
            p->rc = table__absorb_chunk(p->t, p->qr, p->slot_base, slot, &p->err);
            slot = 0;
            if (csv_reader_saw_quote(reader)) break; /* the cut may lie inside a field: give up early */
            if (atomic_load_explicit(p->give_up, memory_order_relaxed)) break;
        }
    }
    if (p->rc == ANONKIT_OK && got < 0) p->rc = got;
    if (p->rc == ANONKIT_OK) p->rc = table__absorb_chunk(p->t, p->qr, p->slot_base, slot, &p->err);
    if (reader) {
        p->lines = csv_reader_line(reader) - p->first_line;
        p->quoted = csv_reader_saw_quote(reader);
    }
    if (p->rc != ANONKIT_OK || p->missing.count || p->quoted || got == 1) atomic_store(p->give_up, 1);
    csv_reader_free(reader);
    return NULL;
}

/* stream_rows in two pieces on two threads, when the file is large, cut and
 * checked as load_rows_parallel does. The first piece keeps the table's
 * dictionaries; the second piece's are folded into them afterwards and the
 * maps of its codes left in t->split. On any surprise the sink is told to
 * start over and *loaded stays 0: the caller reads sequentially, which also
 * gives the exact error. */
int table__stream_rows_parallel(table *t, const table_spec *spec, qi_reader *qr, uint64_t data_start, int *loaded,
                                ak_error *err)
{
    *loaded = 0;
    uint64_t split, size;
    if (!find_cut(spec, data_start, &split, &size)) return ANONKIT_OK;
    size_t cap = 0;
    AK_CHECK(table__grow_rows(t, &cap, 2 * STREAM_CHUNK_ROWS, err));
    AK_CHECK(spec->sink_start(spec->sink_ctx, t, 2, err));
    atomic_int give_up;
    atomic_init(&give_up, 0);
    read_piece pieces[2];
    int rc = pieces_init(pieces, t, spec, qr, data_start, split, size, err);
    for (unsigned i = 0; i < 2; i++) {
        pieces[i].slot_base = i * STREAM_CHUNK_ROWS;
        pieces[i].give_up = &give_up;
    }
    if (rc == ANONKIT_OK) ak_run_parts(pieces, sizeof *pieces, 2, stream_piece_rows);
    int usable = rc == ANONKIT_OK && pieces[0].rc == ANONKIT_OK && pieces[1].rc == ANONKIT_OK && !table__has_missing_rows(t, qr) &&
                 !table__has_missing_rows(t, pieces[1].qr) &&
                 !pieces[0].missing.count && !pieces[1].missing.count && !pieces[0].quoted && !pieces[1].quoted &&
                 pieces[0].lines == (long)pieces[0].nrows;
    if (pieces[0].rc == ANONKIT_E_NOMEM || pieces[1].rc == ANONKIT_E_NOMEM) rc = ak_err_nomem(err);
    if (usable && rc == ANONKIT_OK) {
        table_split *sp = &t->split;
        sp->first_row = pieces[0].nrows;
        if (!(sp->numeric_ids = calloc(t->nqi, sizeof *sp->numeric_ids))) rc = ak_err_nomem(err);
        for (uint32_t q = 0; rc == ANONKIT_OK && q < t->nqi; q++)
            if (t->qi[q].kind == ATTR_NUMERIC)
                rc = numdict_merge_stream(&qr[q].numbers, &pieces[1].qr[q].numbers, &sp->numeric_ids[q], err);
        if (rc == ANONKIT_OK)
            rc = merge_piece_dicts(&t->sensitive_dict, &pieces[0].sensitive, &pieces[1].sensitive, &sp->sensitive_map,
                                  err);
        if (rc == ANONKIT_OK)
            rc = merge_piece_dicts(&t->class_dict, &pieces[0].classes, &pieces[1].classes, &sp->class_map, err);
        t->nrows = pieces[0].nrows + pieces[1].nrows;
        *loaded = rc == ANONKIT_OK;
    } else if (rc == ANONKIT_OK) {
        /* Back to a clean state for the sequential reader. */
        for (uint32_t q = 0; q < t->nqi; q++)
            if (t->qi[q].kind == ATTR_NUMERIC) {
                numdict_free(&qr[q].numbers);
                numdict_init(&qr[q].numbers);
                qr[q].numbers.streaming = 1;
                tm_rows_reset(&qr[q].missing);
            }
        table__split_free(&t->split, t->nqi);
    }
    pieces_free(pieces, t->nqi);
    return rc;
}
