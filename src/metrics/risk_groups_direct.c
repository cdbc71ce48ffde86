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
 * error.
 *
 * The rows are read by a block scan of plain lines (rx_scan: 64-byte blocks
 * classified by io/blockscan.h, only the delimiters that bound the key's
 * columns located, the key's bytes hashed where they lie), not by the CSV
 * reader, unless told otherwise (risk_group_params.generic_reader) or the
 * header is not a plain line; from the first line that is not for the scan
 * (a quote, an empty line, a ragged row, a bad weight, a line longer than a
 * block) the CSV reader takes over, into the same table. By the scan a file
 * is read in two pieces only from RX_SCAN_PIECES_MIN bytes. */
#include "metrics/risk_groups_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/cpu.h"
#include "common/numparse.h"
#include "common/parallel.h"
#include "io/blockscan.h"
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

/* The same for the block scan, whose second piece reads through a buffer of
 * 128 KiB (docs/risk.md §9); and the least file it reads in two pieces: the
 * scan takes less time a row than the CSV reader, so the second thread's
 * fixed costs (its start, its table, the merge of its classes) are repaid
 * only later (on Adult, 2.5 MB, and a generated file of 2.3 MB one piece
 * was faster, on one of 7.6 MB both alike). */
#define RX_SCAN_SECOND_START ((uint64_t)256 << 10)
#define RX_SCAN_PIECES_MIN ((uint64_t)4 << 20)

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
 * [start, size) that leaves the first piece second_start bytes more
 * than half of the rest (at most nine tenths), read with 1 KiB preads
 * (csv_find_split reads 64 KiB on the stack, 16 fresh pages); 0 when there
 * is none within 1 MiB. */
static uint64_t small_file_split(const char *path, uint64_t start, uint64_t size, uint64_t second_start)
{
    const int fd = open(path, O_RDONLY);
    if (fd < 0) return 0;
    char buf[1024];
    const uint64_t rest = size - start;
    uint64_t first = rest / 2 + second_start / 2;
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

/* ------------------------------------------------------------------------ */
/* The block scan: the rows of plain lines without the CSV reader.          */

/* Bytes of one read of the block scan (a carried partial line before them,
 * RX_PAD bytes of zeros after them for the 64-byte masks). */
#define RX_BLOCK ((size_t)1 << 16)
#define RX_PAD 64

/* What the block scan needs of a row: the key's columns hcols[0 .. n) of
 * ncolumns (and the weight's, weight_col >= 0); a line's delimiters are
 * numbered from 1 (column c begins after delimiter c, column 0 at the line's
 * start, and ends at delimiter c + 1, the last column at the line's end).
 * next[k] is the least delimiter number above k that begins or ends a
 * column wanted (UINT32_MAX: none), at[k] that delimiter's byte in the
 * buffer for the line being read (at[0] and at[ncolumns] its start - 1 and
 * its end). */
typedef struct rx_plan {
    const uint32_t *hcols;
    size_t n;
    uint32_t ncolumns;
    int consecutive;
    int weight_col;
    char delimiter;
    uint32_t *next;
    size_t *at;
    csv_field *f;   /* the key's fields, when they are copied (not consecutive) */
    char *kbuf;     /* rg_key_hash's copy */
    size_t kcap;
} rx_plan;

static void rx_plan_free(rx_plan *pl)
{
    free(pl->next);
    free(pl->at);
    free(pl->f);
    free(pl->kbuf);
    memset(pl, 0, sizeof *pl);
}

/* The plan for the key of hcols[0 .. n) (and the weight's column) of a file
 * of ncolumns columns; 0 or -1 (no memory). Of consecutive key columns only
 * the key's first start and last end are wanted (Adult's first eight of
 * nine columns: one delimiter a line). */
static int rx_plan_init(rx_plan *pl, const uint32_t *hcols, size_t n, uint32_t ncolumns, int weight_col, char delimiter)
{
    memset(pl, 0, sizeof *pl);
    pl->hcols = hcols;
    pl->n = n;
    pl->ncolumns = ncolumns;
    pl->consecutive = rg_consecutive_columns(hcols, n);
    pl->weight_col = weight_col;
    pl->delimiter = delimiter;
    pl->next = malloc(((size_t)ncolumns + 1) * sizeof *pl->next);
    pl->at = malloc(((size_t)ncolumns + 1) * sizeof *pl->at);
    pl->f = malloc((n ? n : 1) * sizeof *pl->f);
    if (!pl->next || !pl->at || !pl->f) return -1;
    uint32_t after = UINT32_MAX; /* the least delimiter wanted above k, from the top down */
    for (uint32_t k = ncolumns + 1; k-- > 0;) {
        pl->next[k] = after;
        int wanted = 0;
        if (k >= 1 && k < ncolumns) {
            if (pl->consecutive) wanted = k == hcols[0] || k == hcols[n - 1] + 1;
            else
                for (size_t q = 0; q < n; q++) wanted |= hcols[q] == k || hcols[q] + 1 == k;
            wanted |= weight_col >= 0 && ((uint32_t)weight_col == k || (uint32_t)weight_col + 1 == k);
        }
        if (wanted) after = k;
    }
    return 0;
}

/* The row in buf[ls .. ls + len), ended by an LF when `ended`, with `seen`
 * delimiters, those wanted placed in pl->at: its key hashed as the CSV
 * reader's path hashes it (rx_rows: the bytes from the key's first field to
 * the end of its last when consecutive, else rg_key_hash's plain copy; a CR
 * before the LF is no part of the last field) and counted into x. Returns 1,
 * 0 when the row is not for the scan (an empty line, another field count
 * than the header's, a weight that is not a positive number: the CSV reader
 * takes it from here and gives the exact error or skips it), -1 (no memory). */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline int rx_scan_row(rx_table *x, rx_plan *pl, const unsigned char *buf, size_t ls, size_t len, int ended,
                              uint32_t seen)
{
    if (len == 0 || seen + 1 != pl->ncolumns) return 0;
    if (ended && buf[ls + len - 1] == '\r' && --len == 0) return 0; /* (a line of a CR alone: the reader's) */
    size_t *const at = pl->at;
    at[0] = ls - 1; /* (wraps around for ls 0, and + 1 back) */
    at[pl->ncolumns] = ls + len;
    double w = 0;
    if (pl->weight_col >= 0) {
        const size_t from = at[pl->weight_col] + 1;
        if (ak_num_parse((const char *)buf + from, at[pl->weight_col + 1] - from, &w) != 0 || !(w > 0)) return 0;
    }
    XXH128_hash_t h;
    if (pl->consecutive) {
        const size_t from = at[pl->hcols[0]] + 1;
        h = XXH3_128bits_withSeed(buf + from, at[pl->hcols[pl->n - 1] + 1] - from, 0);
    } else {
        for (size_t q = 0; q < pl->n; q++) {
            const size_t from = at[pl->hcols[q]] + 1;
            pl->f[q] = (csv_field){(const char *)buf + from, (uint32_t)(at[pl->hcols[q] + 1] - from)};
        }
        if (rg_key_hash(pl->f, NULL, pl->n, pl->delimiter, 0, 0, &pl->kbuf, &pl->kcap, &h) != 0) return -1;
    }
    uint32_t id;
    if (rx_class(x, h.low64, h.high64, &id) != 0) return -1;
    x->count[id]++;
    if (x->weighted) x->weight[id] += w;
    return 1;
}

/* Bytes [offset, offset + length) of the file (length UINT64_MAX: to its
 * end), starting at a record on line `line`, read as plain lines without the
 * CSV reader: 64 bytes at a time are classified (blockscan.h), a line's
 * delimiters counted by popcount and looked at one by one only where a
 * column wanted begins or ends; every row counted into x (rx_scan_row),
 * rows into *rows. At the first line that holds a quote (a field may then
 * span lines), or that is not for the scan (rx_scan_row), or that is longer
 * than RX_BLOCK, or where a read fails, it stops: *stop gets that line's
 * byte and *stop_line its number, for the CSV reader to go on from there
 * (UINT64_MAX: the range was read to its end). Returns 0 or -1 (no memory). */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline int rx_scan_with(rx_table *x, rx_plan *pl, int fd, uint64_t offset, uint64_t length, long line,
                               uint64_t *rows_out, uint64_t *stop, long *stop_line, int hw)
{
    *stop = UINT64_MAX;
    *rows_out = 0;
    unsigned char *buf = malloc(2 * RX_BLOCK + RX_PAD);
    if (!buf) return -1;
    int rc = 0;
    uint64_t rows = 0;
    const uint32_t first = pl->next[0];
    size_t have = 0;        /* bytes in buf (a partial line carried over first) */
    uint64_t base = offset; /* file byte of buf[0] */
    uint64_t pos = offset, left = length;
    for (int eof = 0; !eof;) {
        const size_t want_bytes = left < RX_BLOCK ? (size_t)left : RX_BLOCK;
        size_t got = 0;
        while (got < want_bytes) {
            const ssize_t r = pread(fd, buf + have + got, want_bytes - got, (off_t)pos);
            if (r < 0 && errno == EINTR) continue;
            if (r < 0) { /* the CSV reader reads it again, and says what failed */
                *stop = base;
                *stop_line = line;
                goto done;
            }
            if (r == 0) break;
            got += (size_t)r;
            pos += (uint64_t)r;
        }
        if (left != UINT64_MAX) left -= got;
        if (got < want_bytes || left == 0) eof = 1;
        have += got;
        memset(buf + have, pl->delimiter ? 0 : 1, RX_PAD); /* (neither the delimiter nor LF nor a quote: no mask
                                                              of the last 64 bytes needs cutting at `have`) */
        /* the lines of buf[0 .. have): ls the current line's first byte, seen
         * its delimiters so far, want the next one wanted */
        size_t ls = 0;
        uint32_t seen = 0, want = first;
        for (size_t c = 0; c < have; c += 64) {
            uint64_t dm, nm, qm;
            chunk_masks(buf + c, pl->delimiter, &dm, &nm, &qm);
            if (__builtin_expect(qm != 0, 0)) { /* only the lines before the quote's */
                const uint64_t before = ((uint64_t)1 << __builtin_ctzll(qm)) - 1;
                dm &= before, nm &= before;
            }
            for (;;) {
                const uint64_t below = nm ? (nm & (0 - nm)) - 1 : ~(uint64_t)0; /* the bytes before the next LF */
                const uint64_t seg = dm & below;
                uint32_t count = popcount64(seg, hw);
                for (uint64_t m = seg; seen + count >= want;) { /* a delimiter wanted is here */
                    const uint32_t j = want - seen; /* it is the j-th of m's count, counted from 1 */
                    size_t at;
                    if (2 * j <= count + 1) { /* (the ones before it cleared from the bottom) */
                        for (uint32_t k = j; k > 1; k--) m &= m - 1;
                        at = (size_t)__builtin_ctzll(m);
                        m &= m - 1;
                    } else { /* from the top: the last of m (Adult's key ends at a line's last delimiter) */
                        uint64_t top = m;
                        for (uint32_t k = count - j; k > 0; k--) top ^= (uint64_t)1 << (63 - __builtin_clzll(top));
                        at = (size_t)(63 - __builtin_clzll(top));
                        m &= ~(uint64_t)0 << at << 1; /* (what lies above it) */
                    }
                    count -= j;
                    seen = want;
                    pl->at[seen] = c + at;
                    want = pl->next[seen];
                }
                seen += count;
                if (!nm) break;
                dm &= ~below;
                const size_t e = c + (size_t)__builtin_ctzll(nm);
                nm &= nm - 1;
                const int taken = rx_scan_row(x, pl, buf, ls, e - ls, 1, seen);
                if (taken <= 0) {
                    rc = taken;
                    *stop = base + ls;
                    *stop_line = line;
                    goto done;
                }
                rows++;
                line++;
                ls = e + 1;
                seen = 0;
                want = first;
            }
            if (qm) { /* the CSV reader goes on from the quote's line */
                *stop = base + ls;
                *stop_line = line;
                goto done;
            }
        }
        if (eof) { /* a last line without a line end (its CR, if any, is data, as the reader has it) */
            if (ls < have) {
                const int taken = rx_scan_row(x, pl, buf, ls, have - ls, 0, seen);
                if (taken <= 0) {
                    rc = taken;
                    *stop = base + ls;
                    *stop_line = line;
                    goto done;
                }
                rows++;
            }
            break;
        }
        /* the partial line to the front, scanned again with the next block */
        memmove(buf, buf + ls, have - ls);
        base += ls;
        have -= ls;
        if (have >= RX_BLOCK) { /* a line longer than a block: the CSV reader takes it */
            *stop = base;
            *stop_line = line;
            goto done;
        }
    }
done:
    free(buf);
    *rows_out = rows;
    return rc;
}

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__)) && !defined(__POPCNT__)
/* rx_scan_with compiled for a processor with POPCNT (chosen at run time). */
__attribute__((target("popcnt"))) static int rx_scan_popcnt(rx_table *x, rx_plan *pl, int fd, uint64_t offset,
                                                            uint64_t length, long line, uint64_t *rows,
                                                            uint64_t *stop, long *stop_line)
{
    return rx_scan_with(x, pl, fd, offset, length, line, rows, stop, stop_line, 1);
}
#define RX_POPCNT_AT_RUN_TIME 1
#endif

/* rx_scan_with on path, with the POPCNT instruction where the processor has
 * it; a file that cannot be opened is left to the CSV reader (*stop = offset). */
static int rx_scan(rx_table *x, rx_plan *pl, const char *path, uint64_t offset, uint64_t length, long line,
                   uint64_t *rows, uint64_t *stop, long *stop_line)
{
    const int fd = open(path, O_RDONLY);
    if (fd < 0) {
        *rows = 0;
        *stop = offset;
        *stop_line = line;
        return 0;
    }
    int rc;
#if defined(RX_POPCNT_AT_RUN_TIME)
    if (ak_cpu_has(AK_CPU_POPCNT)) rc = rx_scan_popcnt(x, pl, fd, offset, length, line, rows, stop, stop_line);
    else rc = rx_scan_with(x, pl, fd, offset, length, line, rows, stop, stop_line, 0);
#elif defined(__POPCNT__)
    rc = rx_scan_with(x, pl, fd, offset, length, line, rows, stop, stop_line, 1);
#else
    rc = rx_scan_with(x, pl, fd, offset, length, line, rows, stop, stop_line, 0);
#endif
    close(fd);
    return rc;
}

uint64_t rg_header_end(const char *path)
{
    char buf[4096];
    const int fd = open(path, O_RDONLY);
    if (fd < 0) return 0;
    const ssize_t got = pread(fd, buf, sizeof buf, 0);
    close(fd);
    if (got <= 0) return 0;
    const char *lf = memchr(buf, '\n', (size_t)got);
    if (!lf || memchr(buf, '"', (size_t)(lf - buf))) return 0;
    if (lf == buf || (lf == buf + 1 && buf[0] == '\r')) return 0; /* (an empty line: the reader's, whole) */
    return (uint64_t)(lf - buf) + 1;
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

/* Ends a two-piece read that worked: the second piece's classes y in their
 * order after the first's x, then x's classes into c; *done set. */
static int merge_pieces(rx_table *x, const rx_table *y, uint64_t rows, XXH128_hash_t star, rg_classes *c,
                        uint64_t *rows_out, int *done, ak_error *err)
{
    for (size_t k = 0; k < y->n; k++) {
        uint32_t id;
        if (rx_class(x, y->key[2 * k], y->key[2 * k + 1], &id) != 0) return ak_err_nomem(err);
        x->count[id] += y->count[k];
    }
    if (rx_finish(x, star, c) != 0) return ak_err_nomem(err);
    *rows_out = rows;
    *done = 1;
    return ANONKIT_OK;
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
    const uint64_t split = small_file_split(p->path, start, size, RX_SECOND_START);
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
        rc = merge_pieces(&parts[0].pc.x, &parts[1].pc.x, parts[0].pc.rows + parts[1].pc.rows, star, c, rows_out,
                          done, err);
    }
    rx_free(&parts[0].pc.x);
    rx_free(&parts[1].pc.x);
    return rc;
}

/* A piece of the block scan's two-piece read: bytes [offset, offset +
 * length) into a table of its own. */
typedef struct rx_spiece {
    rx_table x;
    rx_plan plan;
    const char *path;
    uint64_t offset, length, lines, rows, stop;
    long line, stop_line;
    int rc; /* 0, or -1 (no memory) */
} rx_spiece;

static void *rx_spiece_run(void *arg)
{
    rx_spiece *s = arg;
    s->rc = rx_init(&s->x, s->lines, 0) != 0 ? -1
                                              : rx_scan(&s->x, &s->plan, s->path, s->offset, s->length, s->line,
                                                        &s->rows, &s->stop, &s->stop_line);
    return NULL;
}

/* The two-piece read (see the top of the file) by the block scan: the first
 * piece on the calling thread, the second on a thread of its own, each
 * scanned to its end or not at all (*done 0: the caller reads the file
 * sequentially, which also takes what stopped the scan). Only a lack of
 * memory is an error. */
static int scan_two_pieces(const risk_group_params *p, const uint32_t *hcols, uint32_t ncolumns, XXH128_hash_t star,
                           uint64_t start, long first_line, uint64_t size, uint64_t lines, rg_classes *c,
                           uint64_t *rows_out, int *done, ak_error *err)
{
    *done = 0;
    const uint64_t split = small_file_split(p->path, start, size, RX_SCAN_SECOND_START);
    if (!split || split <= start) return ANONKIT_OK;
    rx_spiece parts[2];
    memset(parts, 0, sizeof parts);
    int rc = ANONKIT_OK;
    for (unsigned i = 0; i < 2; i++) {
        parts[i].path = p->path;
        if (rx_plan_init(&parts[i].plan, hcols, p->nqi, ncolumns, -1, p->delimiter) != 0) rc = ak_err_nomem(err);
    }
    /* the first piece's table takes the second's classes too: sized for all
     * the lines (its class arrays are faulted in only as they fill) */
    parts[0].offset = start;
    parts[0].length = split - start;
    parts[0].line = first_line;
    parts[0].lines = lines;
    parts[1].offset = split;
    parts[1].length = UINT64_MAX;
    parts[1].lines = (uint64_t)((double)lines * (double)(size - split) / (double)(size - start)) + 1;
    if (rc == ANONKIT_OK) ak_run_parts(parts, sizeof *parts, 2, rx_spiece_run);
    if (rc == ANONKIT_OK && (parts[0].rc != 0 || parts[1].rc != 0)) {
        rc = ak_err_nomem(err);
    } else if (rc == ANONKIT_OK && parts[0].stop == UINT64_MAX && parts[1].stop == UINT64_MAX) {
        rc = merge_pieces(&parts[0].x, &parts[1].x, parts[0].rows + parts[1].rows, star, c, rows_out, done, err);
    }
    for (unsigned i = 0; i < 2; i++) {
        rx_free(&parts[i].x);
        rx_plan_free(&parts[i].plan);
    }
    return rc;
}

/* The rows from byte `start` (line first_line) to the end into x: by the
 * block scan as far as it goes, the rest by the CSV reader from the line
 * where it stopped (so that a quoted field, a ragged row or a bad weight is
 * read, or refused, exactly as the reader's path reads it). */
static int read_scanned(const risk_group_params *p, const uint32_t *hcols, uint32_t ncolumns, int weight_col,
                        uint64_t start, long first_line, rx_table *x, uint64_t *rows_out, ak_error *err)
{
    rx_plan pl;
    uint64_t rows = 0, stop = UINT64_MAX;
    long stop_line = 0;
    int rc = rx_plan_init(&pl, hcols, p->nqi, ncolumns, weight_col, p->delimiter) != 0 ? ak_err_nomem(err) : ANONKIT_OK;
    if (rc == ANONKIT_OK && rx_scan(x, &pl, p->path, start, UINT64_MAX, first_line, &rows, &stop, &stop_line) != 0)
        rc = ak_err_nomem(err);
    rx_plan_free(&pl);
    if (rc == ANONKIT_OK && stop != UINT64_MAX) {
        csv_reader *rest = NULL;
        uint64_t more = 0;
        rc = csv_reader_open_range(&rest, p->path, p->delimiter, stop, UINT64_MAX, stop_line, err);
        if (rc == ANONKIT_OK) rc = rx_rows(x, rest, p, hcols, ncolumns, weight_col, UINT64_MAX, &more, err);
        rows += more;
        csv_reader_free(rest);
    }
    *rows_out = rows;
    return rc;
}

int rg_read_direct(csv_reader *reader, const risk_group_params *p, const uint32_t *hcols, uint32_t ncolumns,
                   int weight_col, XXH128_hash_t star, uint64_t size, int scan, rg_classes *c, uint64_t *rows_out,
                   ak_error *err)
{
    memset(c, 0, sizeof *c);
    c->star = AK_NOT_FOUND;
    *rows_out = 0;
    const uint64_t lines = small_file_lines(p->path, size);
    if (scan) {
        const uint64_t start = csv_reader_offset(reader);
        const long first_line = csv_reader_line(reader);
        /* two pieces: not with weights (their sums would be added in another order) */
        if (p->threads > 1 && weight_col < 0 && size >= RX_SCAN_PIECES_MIN) {
            int done = 0;
            AK_CHECK(scan_two_pieces(p, hcols, ncolumns, star, start, first_line, size, lines, c, rows_out, &done, err));
            if (done) return ANONKIT_OK;
        }
        rx_table x;
        int rc = rx_init(&x, lines, weight_col >= 0) != 0 ? ak_err_nomem(err) : ANONKIT_OK;
        if (rc == ANONKIT_OK) rc = read_scanned(p, hcols, ncolumns, weight_col, start, first_line, &x, rows_out, err);
        if (rc == ANONKIT_OK && rx_finish(&x, star, c) != 0) rc = ak_err_nomem(err);
        rx_free(&x);
        return rc;
    }
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
