/* risk_groups_direct.c — a small file's rows grouped straight into the
 * classes of `anonkit risk`, with no buckets (docs/risk.md §9): one
 * linear-probing table of class numbers by the key's 128-bit hash
 * (rg_key_hash, the same hash and the same collision bound as the buckets'
 * grouping), the classes numbered in the order of their first rows. With
 * two threads and a file of RX_PIECES_MIN bytes or more, the rows are read in
 * two pieces at once, cut at a line end past the middle (small_file_split): the first piece by
 * the caller's reader, the second on a thread of its own; the second piece's
 * classes are then merged into the first's in their order, which puts every
 * class where a sequential read puts it (a class first met in the first
 * piece keeps its number, one met only in the second comes after them in
 * the order of its first row there). Any surprise (a quoted field, a bad
 * row) sends the file back to the sequential read, which gives the exact
 * error. */
#include "metrics/risk_groups_internal.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/numparse.h"
#include "common/parallel.h"
#include "io/csv.h"
#include "model/model.h"

/* An empty slot of the table. */
#define RX_EMPTY UINT32_MAX

/* Files of at least this many bytes are read in two pieces when two threads
 * are allowed (docs/risk.md §9: below it the second thread saves less than
 * it costs). */
#define RX_PIECES_MIN ((uint64_t)2 << 20)

/* What the second thread costs before it reads a row (its start, its reader's
 * 1 MiB buffer of fresh pages), in bytes of reading: the first piece is the
 * larger by that much (on Adult's 2.5 MB, 70 % against 30 %; half against
 * half was slower than one piece). */
#define RX_SECOND_START ((uint64_t)1 << 20)

/* The classes met so far: a table of 4-byte class numbers (at most three
 * quarters full), and per class its hash's two halves side by side (one
 * cache line for a probe), its count and (weighted) its weight. */
typedef struct rx_table {
    size_t mask, cap, n;
    uint64_t lines; /* the lines expected: the class arrays' first size */
    uint32_t *slot;
    uint64_t *key;
    uint32_t *count;
    double *weight;
    int weighted;
} rx_table;

/* The lines of a small file of `size` bytes by the line ends of its first
 * 4 KiB (with an eighth more), as csv_estimate_lines makes it from 64 KiB:
 * its buffer would be 16 more fresh pages for a run that is over in a few
 * milliseconds. 0 when it cannot be read. */
static uint64_t small_file_lines(const char *path, uint64_t size)
{
    char buf[4096];
    const int fd = open(path, O_RDONLY);
    if (fd < 0) return 0;
    const ssize_t got = pread(fd, buf, sizeof buf, 0);
    close(fd);
    if (got <= 0) return 0;
    uint64_t lines = 0;
    for (const char *p = buf, *end = buf + got; (p = memchr(p, '\n', (size_t)(end - p))) != NULL; p++) lines++;
    if (!lines) return 1;
    const double estimate = (double)size * (double)lines / (double)got;
    return (uint64_t)(estimate + estimate / 8) + 1;
}

/* The first byte after the first line end at or after the point of
 * [start, size) that leaves the first piece RX_SECOND_START bytes more
 * than half of the rest (at most nine tenths), read with 1 KiB preads
 * (csv_find_split reads 64 KiB on the stack, 16 fresh pages); 0 when there
 * is none within 1 MiB. */
static uint64_t small_file_split(const char *path, uint64_t start, uint64_t size)
{
    const int fd = open(path, O_RDONLY);
    if (fd < 0) return 0;
    char buf[1024];
    const uint64_t rest = size - start;
    uint64_t first = rest / 2 + RX_SECOND_START / 2;
    if (first > rest / 10 * 9) first = rest / 10 * 9;
    uint64_t at = start + first, split = 0;
    const uint64_t stop = at + ((uint64_t)1 << 20);
    while (!split && at < stop) {
        const ssize_t got = pread(fd, buf, sizeof buf, (off_t)at);
        if (got <= 0) break;
        const char *lf = memchr(buf, '\n', (size_t)got);
        if (lf) split = at + (uint64_t)(lf - buf) + 1;
        at += (uint64_t)got;
    }
    close(fd);
    return split < size ? split : 0;
}

/* A table for about `lines` rows: the slots for two thirds of them (every
 * page of the slots is touched: on Adult 32,768 slots for 18,109 classes,
 * not 65,536), filled with RX_EMPTY (all ones) at once: calloc's fresh zero
 * pages would be mapped twice, first for the probe that reads them, then
 * again for the first write. Returns 0 or -1 (no memory). */
static int rx_init(rx_table *x, uint64_t lines, int weighted)
{
    memset(x, 0, sizeof *x);
    x->mask = 1023;
    x->lines = lines;
    x->weighted = weighted;
    while (2 * lines > 3 * x->mask && x->mask < ((size_t)1 << 30)) x->mask = 2 * x->mask + 1;
    if (!(x->slot = malloc((x->mask + 1) * sizeof *x->slot))) return -1;
    memset(x->slot, 0xff, (x->mask + 1) * sizeof *x->slot);
    return 0;
}

static void rx_free(rx_table *x)
{
    free(x->slot);
    free(x->key);
    free(x->count);
    free(x->weight);
    memset(x, 0, sizeof *x);
}

/* A new class of hash (lo, hi) at slot s: its arrays sized for all the lines
 * expected at once (pages of their own, faulted in only as the classes fill
 * them, nothing copied), doubled past that; the table doubled when three
 * quarters full. Its number into *id; returns 0 or -1 (no memory). */
static int rx_add(rx_table *x, size_t s, uint64_t lo, uint64_t hi, uint32_t *id)
{
    if (x->n == x->cap) {
        const size_t nc = x->cap ? 2 * x->cap : x->lines > 1024 && x->lines < ((size_t)1 << 30) ? (size_t)x->lines : 1024;
        uint64_t *k2 = realloc(x->key, 2 * nc * sizeof *k2);
        if (k2) x->key = k2;
        uint32_t *cn = k2 ? realloc(x->count, nc * sizeof *cn) : NULL;
        if (cn) x->count = cn;
        double *ws = cn && x->weighted ? realloc(x->weight, nc * sizeof *ws) : NULL;
        if (ws) x->weight = ws;
        if (!cn || (x->weighted && !ws)) return -1;
        x->cap = nc;
    }
    const uint32_t k = (uint32_t)x->n++;
    x->key[2 * (size_t)k] = lo;
    x->key[2 * (size_t)k + 1] = hi;
    x->count[k] = 0;
    if (x->weighted) x->weight[k] = 0;
    x->slot[s] = k;
    *id = k;
    if (4 * x->n > 3 * x->mask) {
        const size_t m2 = 2 * x->mask + 1;
        uint32_t *t = malloc((m2 + 1) * sizeof *t);
        if (!t) return -1;
        memset(t, 0xff, (m2 + 1) * sizeof *t);
        for (size_t c = 0; c < x->n; c++) {
            size_t d = (size_t)x->key[2 * c] & m2;
            while (t[d] != RX_EMPTY) d = (d + 1) & m2;
            t[d] = (uint32_t)c;
        }
        free(x->slot);
        x->slot = t;
        x->mask = m2;
    }
    return 0;
}

/* The class of hash (lo, hi), added when new, into *id; 0 or -1 (no memory). */
static inline int rx_class(rx_table *x, uint64_t lo, uint64_t hi, uint32_t *id)
{
    size_t s = (size_t)lo & x->mask;
    while (x->slot[s] != RX_EMPTY && (x->key[2 * (size_t)x->slot[s]] != lo || x->key[2 * (size_t)x->slot[s] + 1] != hi))
        s = (s + 1) & x->mask;
    if (x->slot[s] != RX_EMPTY) {
        *id = x->slot[s];
        return 0;
    }
    return rx_add(x, s, lo, hi, id);
}

/* Reads rows from reader into x until the input ends or a record starts at
 * byte `stop` or later (UINT64_MAX: none), a weight column added up row by
 * row in file order, as the buckets' grouping adds it. Rows into *rows;
 * errors as the buckets' read gives them. */
static int rx_rows(rx_table *x, csv_reader *reader, const risk_group_params *p, const uint32_t *hcols,
                   uint32_t ncolumns, int weight_col, uint64_t stop, uint64_t *rows_out, ak_error *err)
{
    const int consecutive = rg_consecutive_columns(hcols, p->nqi);
    char *buf = NULL;
    size_t buf_cap = 0;
    uint64_t rows = 0;
    int rc = ANONKIT_OK;
    for (;;) {
        csv_record rec;
        if ((rc = csv_read(reader, &rec, err)) <= 0) break;
        rc = ANONKIT_OK;
        if (rec.offset >= stop) break;
        if (rec.count != ncolumns) {
            rc = ak_err_set(err, ANONKIT_E_INPUT, p->shown, rec.line, 0, "expected %u fields as in the header, found %u",
                            ncolumns, rec.count);
            break;
        }
        if (rows >= UINT32_MAX - 1) {
            rc = ak_err_set(err, ANONKIT_E_INPUT, p->shown, rec.line, 0, "more than %lu rows: too many to measure",
                            (unsigned long)(UINT32_MAX - 1));
            break;
        }
        double w = 0;
        if (weight_col >= 0) {
            const csv_field *f = &rec.fields[weight_col];
            if (ak_num_parse(f->data, f->len, &w) != 0 || !(w > 0)) {
                rc = ak_err_set(err, ANONKIT_E_INPUT, p->shown, rec.line, weight_col + 1,
                                "the weight '%s' of column '%s' is not a positive number", AK_SHOW(f->data, f->len),
                                p->weight);
                break;
            }
        }
        XXH128_hash_t h;
        const int quoted = csv_reader_saw_quote(reader);
        if (consecutive && !quoted) {
            h = rg_key_span_hash(&rec.fields[hcols[0]], p->nqi);
        } else if (rg_key_hash(rec.fields, hcols, p->nqi, p->delimiter, consecutive, quoted, &buf, &buf_cap, &h) != 0) {
            rc = ak_err_nomem(err);
            break;
        }
        uint32_t id;
        if (rx_class(x, h.low64, h.high64, &id) != 0) {
            rc = ak_err_nomem(err);
            break;
        }
        x->count[id]++;
        if (weight_col >= 0) x->weight[id] += w;
        rows++;
    }
    free(buf);
    *rows_out = rows;
    return rc;
}

/* x's classes into c (x emptied): the sizes written as 8-byte words over
 * the hashes' memory (size k's word lies before hash k's), c->star the class
 * of the all-"*" key. Returns 0 or -1 (no memory). */
static int rx_finish(rx_table *x, XXH128_hash_t star, rg_classes *c)
{
    memset(c, 0, sizeof *c);
    c->star = AK_NOT_FOUND;
    for (size_t s = (size_t)star.low64 & x->mask; x->slot[s] != RX_EMPTY; s = (s + 1) & x->mask)
        if (x->key[2 * (size_t)x->slot[s]] == star.low64 && x->key[2 * (size_t)x->slot[s] + 1] == star.high64) {
            c->star = x->slot[s];
            break;
        }
    for (size_t k = 0; k < x->n; k++) x->key[k] = x->count[k];
    if (!x->key && !(x->key = malloc(sizeof *x->key))) return -1; /* (no rows) */
    c->n = x->n;
    c->size = x->key;
    c->weight = x->weight;
    x->key = NULL;
    x->weight = NULL;
    rx_free(x);
    return 0;
}

/* A piece of a two-piece read: the second, bytes [offset, offset + length)
 * by a reader of its own. */
typedef struct rx_piece {
    rx_table x;
    const risk_group_params *p;
    const uint32_t *hcols;
    uint32_t ncolumns;
    uint64_t offset, length, lines, rows;
    int quoted, rc;
    ak_error err;
} rx_piece;

static void *rx_piece_run(void *arg)
{
    rx_piece *pc = arg;
    csv_reader *reader = NULL;
    ak_err_clear(&pc->err);
    pc->rc = rx_init(&pc->x, pc->lines, 0) != 0 ? ak_err_nomem(&pc->err) : ANONKIT_OK;
    if (pc->rc == ANONKIT_OK)
        pc->rc = csv_reader_open_range(&reader, pc->p->path, pc->p->delimiter, pc->offset, pc->length, 2, &pc->err);
    if (pc->rc == ANONKIT_OK)
        pc->rc = rx_rows(&pc->x, reader, pc->p, pc->hcols, pc->ncolumns, -1, UINT64_MAX, &pc->rows, &pc->err);
    if (reader) pc->quoted = csv_reader_saw_quote(reader);
    csv_reader_free(reader);
    return NULL;
}

/* ak_run_parts runs fn on parts of one size: part 0 reads the first piece
 * with the caller's reader, part 1 the second with its own. */
typedef struct rx_part {
    rx_piece pc;
    csv_reader *reader; /* part 0: the caller's reader; part 1: NULL */
    uint64_t stop;
} rx_part;

static void *rx_part_run(void *arg)
{
    rx_part *pt = arg;
    if (!pt->reader) return rx_piece_run(&pt->pc);
    rx_piece *pc = &pt->pc;
    ak_err_clear(&pc->err);
    pc->rc = rx_init(&pc->x, pc->lines, 0) != 0 ? ak_err_nomem(&pc->err) : ANONKIT_OK;
    if (pc->rc == ANONKIT_OK)
        pc->rc = rx_rows(&pc->x, pt->reader, pc->p, pc->hcols, pc->ncolumns, -1, pt->stop, &pc->rows, &pc->err);
    pc->quoted = csv_reader_saw_quote(pt->reader);
    return NULL;
}

/* Tries the two-piece read (see the top of the file) of [start, size) into
 * c; *done tells whether it worked. Only a lack of memory is an error. */
static int read_two_pieces(csv_reader *reader, const risk_group_params *p, const uint32_t *hcols, uint32_t ncolumns,
                           XXH128_hash_t star, uint64_t start, uint64_t size, uint64_t lines, rg_classes *c,
                           uint64_t *rows_out, int *done, ak_error *err)
{
    *done = 0;
    const uint64_t split = small_file_split(p->path, start, size);
    if (!split || split <= start) return ANONKIT_OK;
    rx_part parts[2];
    memset(parts, 0, sizeof parts);
    for (unsigned i = 0; i < 2; i++) {
        parts[i].pc.p = p;
        parts[i].pc.hcols = hcols;
        parts[i].pc.ncolumns = ncolumns;
    }
    /* the first piece's table takes the second's classes too: sized for
     * all the lines (its class arrays are faulted in only as they fill) */
    parts[0].reader = reader;
    parts[0].stop = split;
    parts[0].pc.lines = lines;
    parts[1].pc.offset = split;
    parts[1].pc.length = size - split;
    parts[1].pc.lines = (uint64_t)((double)lines * (double)(size - split) / (double)(size - start)) + 1;
    ak_run_parts(parts, sizeof *parts, 2, rx_part_run);
    int rc = ANONKIT_OK;
    if (parts[0].pc.rc == ANONKIT_E_NOMEM || parts[1].pc.rc == ANONKIT_E_NOMEM) {
        rc = ak_err_nomem(err);
    } else if (parts[0].pc.rc == ANONKIT_OK && parts[1].pc.rc == ANONKIT_OK && !parts[0].pc.quoted &&
               !parts[1].pc.quoted && parts[0].pc.rows + parts[1].pc.rows < UINT32_MAX - 1) {
        /* the second piece's classes in their order after the first's */
        rx_table *x = &parts[0].pc.x;
        const rx_table *y = &parts[1].pc.x;
        for (size_t k = 0; rc == ANONKIT_OK && k < y->n; k++) {
            uint32_t id;
            if (rx_class(x, y->key[2 * k], y->key[2 * k + 1], &id) != 0) rc = ak_err_nomem(err);
            else x->count[id] += y->count[k];
        }
        if (rc == ANONKIT_OK && rx_finish(x, star, c) != 0) rc = ak_err_nomem(err);
        if (rc == ANONKIT_OK) {
            *rows_out = parts[0].pc.rows + parts[1].pc.rows;
            *done = 1;
        }
    }
    rx_free(&parts[0].pc.x);
    rx_free(&parts[1].pc.x);
    return rc;
}

int rg_read_direct(csv_reader *reader, const risk_group_params *p, const uint32_t *hcols, uint32_t ncolumns,
                   int weight_col, XXH128_hash_t star, uint64_t size, rg_classes *c, uint64_t *rows_out, ak_error *err)
{
    memset(c, 0, sizeof *c);
    c->star = AK_NOT_FOUND;
    *rows_out = 0;
    const uint64_t lines = small_file_lines(p->path, size);
    /* two pieces: not with weights (their sums would be added in another
     * order), nor after a quoted header (a line end may lie in a field) */
    if (p->threads > 1 && weight_col < 0 && size >= RX_PIECES_MIN && !csv_reader_saw_quote(reader)) {
        const uint64_t start = csv_reader_offset(reader);
        const long first_line = csv_reader_line(reader);
        int done = 0;
        AK_CHECK(read_two_pieces(reader, p, hcols, ncolumns, star, start, size, lines, c, rows_out, &done, err));
        if (done) return ANONKIT_OK;
        /* back to the sequential read, from the first data row */
        csv_reader *again = NULL;
        AK_CHECK(csv_reader_open_range(&again, p->path, p->delimiter, start, size - start, first_line, err));
        rx_table x;
        int rc = rx_init(&x, lines, 0) != 0 ? ak_err_nomem(err) : ANONKIT_OK;
        if (rc == ANONKIT_OK) rc = rx_rows(&x, again, p, hcols, ncolumns, -1, UINT64_MAX, rows_out, err);
        if (rc == ANONKIT_OK && rx_finish(&x, star, c) != 0) rc = ak_err_nomem(err);
        rx_free(&x);
        csv_reader_free(again);
        return rc;
    }
    rx_table x;
    int rc = rx_init(&x, lines, weight_col >= 0) != 0 ? ak_err_nomem(err) : ANONKIT_OK;
    if (rc == ANONKIT_OK) rc = rx_rows(&x, reader, p, hcols, ncolumns, weight_col, UINT64_MAX, rows_out, err);
    if (rc == ANONKIT_OK && rx_finish(&x, star, c) != 0) rc = ak_err_nomem(err);
    rx_free(&x);
    return rc;
}
