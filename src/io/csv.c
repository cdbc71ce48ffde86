/* csv.c — the streaming RFC 4180 CSV reader
 * (docs/ARCHITECTURE.md §3, step 1; interface and accepted syntax in csv.h; the
 * writer is csv_writer.c).
 *
 * Reader. The input is read in large blocks into one buffer: 1 MiB to start,
 * doubled whenever a single record does not fit, never the whole file. A
 * record is parsed in two phases. The scan phase walks the bytes of one record
 * and records every field as (pointer, length) into the buffer without
 * changing anything; if it runs into the end of the buffered data before the
 * record ends (and the input has more), nothing is committed: the unconsumed
 * tail is moved to the front of the buffer, more is read, and the record is
 * scanned again from its start. Only once the whole record is known does the
 * second phase unescape its quoted fields in place ("" becomes "), so a retry
 * never sees modified bytes.
 *
 * The scan has a fast path for unquoted fields, which are most of real data:
 * it flags the delimiters and LFs of 64 bytes at a time (SSE2 compares; on
 * other machines eight bytes at a time, SWAR: a byte equal to c is a zero
 * byte of word ^ c*0x0101..., found with an exact zero-byte test) and ends
 * one field at each flag in turn, lowest first, so a block holding several
 * fields is loaded once. A sentinel LF is kept right after the buffered data,
 * followed by zero padding, so that loop needs no bounds check. A field that
 * begins with a quote takes the slow, byte-at-a-time path. See
 * bench/bench_csv.c for the throughput on numeric CSV.
 *
 * Line numbers count physical lines, including the line ends inside quoted
 * fields. Empty lines are records of one empty field, except a run of empty
 * lines that reaches the end of the input: those are not records. Such a run
 * is consumed as it is scanned (so a file of a million blank lines needs no
 * big buffer) and, when a non-empty record follows, handed out one by one.
 */
#include "io/csv.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/parallel.h"
#include "io/digest.h"
#include "io/memtable.h"
#include "io/outfile.h"

#define CSV_BLOCK_SIZE ((size_t)1 << 20)      /* first size of the read buffer */
#define CSV_MAX_BLOCK ((size_t)1 << 31)       /* largest record we agree to hold */
#define CSV_PAD 64                            /* sentinel LF + zeros for the scan's loads */
#define CSV_NEED_MORE 2                       /* parse_record: record not complete yet */

/* ------------------------------------------------------------------------ */
/* Finding the next delimiter or LF.                                        */

#define CSV_ONES 0x0101010101010101ULL
#define CSV_LOW7 0x7f7f7f7f7f7f7f7fULL

/* The scan of unquoted fields looks at CSV_SCAN bytes at a time: a scan
 * mask flags those that are the delimiter or LF, csv_scan_first gives the
 * offset of the lowest flag and csv_scan_next clears it. With SSE2 (every
 * x86-64) a mask covers 64 bytes, one bit a byte, so that most records take
 * one or two masks and the loop that fetches the next mask, whose exit the
 * branch predictor cannot foresee, runs once per 64 bytes instead of once
 * per 8. Elsewhere the 8-byte words above. */
#if defined(__SSE2__) && defined(__GNUC__)
#include <emmintrin.h>
#define CSV_SCAN 64
typedef struct csv_scanner {
    __m128i delim, lf;
} csv_scanner;

static inline csv_scanner csv_scanner_make(char delim)
{
    csv_scanner s = {_mm_set1_epi8(delim), _mm_set1_epi8('\n')};
    return s;
}

static inline uint64_t csv_scan_mask(const csv_scanner *s, const char *p)
{
    uint64_t m = 0;
    for (int i = 0; i < 4; i++) {
        const __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + 16 * i));
        const __m128i hit = _mm_or_si128(_mm_cmpeq_epi8(v, s->delim), _mm_cmpeq_epi8(v, s->lf));
        m |= (uint64_t)(uint32_t)_mm_movemask_epi8(hit) << (16 * i);
    }
    return m;
}

static inline unsigned csv_scan_first(uint64_t m) { return (unsigned)__builtin_ctzll(m); }
#else
/* The 8 bytes at p as a little-endian word (byte i in bits 8i..8i+7) on any
 * machine; compilers turn this into one load on little-endian ones. */
static inline uint64_t csv_load64(const char *p)
{
    const unsigned char *u = (const unsigned char *)p;
    return (uint64_t)u[0] | (uint64_t)u[1] << 8 | (uint64_t)u[2] << 16 | (uint64_t)u[3] << 24 |
           (uint64_t)u[4] << 32 | (uint64_t)u[5] << 40 | (uint64_t)u[6] << 48 |
           (uint64_t)u[7] << 56;
}

/* 0x80 in every byte of v that is zero, 0 elsewhere. Exact (no borrow
 * between bytes), so every flagged byte is a real match, in order. */
static inline uint64_t csv_zero_bytes(uint64_t v)
{
    uint64_t t = (v & CSV_LOW7) + CSV_LOW7;
    return ~(t | v | CSV_LOW7);
}

/* Flags (0x80) the bytes of the 8 at p that are the delimiter or LF. */
static inline uint64_t csv_matches(const char *p, uint64_t delim_mask)
{
    uint64_t w = csv_load64(p);
    return csv_zero_bytes(w ^ delim_mask) | csv_zero_bytes(w ^ (CSV_ONES * (unsigned char)'\n'));
}

/* Index of the lowest flagged byte of a nonzero match word. */
static inline unsigned csv_first_byte(uint64_t m)
{
#if defined(__GNUC__)
    return (unsigned)__builtin_ctzll(m) >> 3;
#else
    unsigned i = 0;
    while (!(m & 0x80)) {
        m >>= 8;
        i++;
    }
    return i;
#endif
}

#define CSV_SCAN 8
typedef struct csv_scanner {
    uint64_t delim_mask;
} csv_scanner;

static inline csv_scanner csv_scanner_make(char delim)
{
    csv_scanner s = {CSV_ONES * (unsigned char)delim};
    return s;
}

static inline uint64_t csv_scan_mask(const csv_scanner *s, const char *p) { return csv_matches(p, s->delim_mask); }
static inline unsigned csv_scan_first(uint64_t m) { return csv_first_byte(m); }
#endif
/* Clears the lowest flag of a mask (a flag is one bit in either form). */
static inline uint64_t csv_scan_next(uint64_t m) { return m & (m - 1); }

/* ------------------------------------------------------------------------ */
/* Reader.                                                                  */

struct csv_reader {
    FILE *stream;
    int own_stream;       /* opened by csv_reader_open: closed by free */
    char *name;           /* for messages */
    char delim;
    uint64_t delim_mask;  /* delim in every byte */
    char *buf;            /* cap + CSV_PAD bytes */
    size_t cap;           /* bytes of data the buffer can hold */
    size_t start;         /* first unconsumed byte */
    size_t end;           /* end of buffered data; buf[end] is a sentinel LF */
    int eof;              /* the stream has nothing more */
    uint64_t base;        /* input offset of buf[0] */
    long line;            /* line on which the next record starts */
    csv_field *fields;    /* fields of the current record */
    uint32_t fields_cap;
    uint32_t *escaped;    /* indexes of fields holding "" to unescape */
    uint32_t n_escaped, escaped_cap;
    uint64_t pending_empty; /* empty-line records still to hand out */
    long pending_line;      /* line of the next of them */
    uint64_t pending_offset; /* offset handed to the next of them (the run's first byte, then one more each) */
    int bom_checked;        /* a leading UTF-8 byte order mark was looked for */
    int saw_quote;          /* a field began with a quote (csv_reader_saw_quote) */
    digest_stream *ds;      /* csv_reader_digest: the records' bytes hashed into a digest (NULL: none) */
    uint64_t remaining;     /* bytes the reader may still take from the stream (range readers) */
    int failed;             /* status of an earlier failure, 0 if none */
    ak_error last;          /* that failure, repeated on later calls */
    ak_progress *progress;  /* csv_reader_progress: rows and bytes counted per block (NULL: none) */
    int progress_worker;    /* it reads on a worker thread: no callback from here */
    uint64_t records, records_counted; /* records handed out; of them, counted into progress */
    uint64_t origin;        /* the input offset the reader started at */
    /* The table backend (csv_reader_open_table): the rows of a table in
     * memory, no stream; header names and numbers' texts in scratch. */
    const struct anonkit_table *mem;
    uint64_t mem_row;       /* next row to hand out, 0 being the header, r + 1 data row r */
    uint64_t mem_stop;      /* one past the last of them */
    unsigned char *mem_skip; /* csv_reader_table_columns: per column, 1 when its fields are handed out empty */
    uint32_t *mem_cols;     /* the other columns, the ones memtable_record fills (NULL: all) */
    uint32_t mem_ncols;
    int mem_blanked;        /* the skipped columns' fields are empty already (set once, not per row) */
    char *scratch;
};

void csv_reader_progress(csv_reader *r, ak_progress *p, int worker)
{
    r->progress = p;
    r->progress_worker = worker;
    r->records_counted = r->records; /* (the header, when it was read already, is no row) */
    if (p) ak_progress_worker_add(p, 0, r->base + r->end - r->origin, NULL); /* the bytes read already */
}

/* Counts the records handed out since the last count, and `bytes` more of
 * the input, into the reader's progress (once per block read); fails with
 * ANONKIT_E_CANCELLED (in r->last) once the run is cancelled. */
static int reader_count(csv_reader *r, uint64_t bytes)
{
    if (!r->progress) return ANONKIT_OK;
    const uint64_t rows = r->records - r->records_counted;
    r->records_counted = r->records;
    return r->progress_worker ? ak_progress_worker_add(r->progress, rows, bytes, &r->last)
                              : ak_progress_add(r->progress, rows, bytes, &r->last);
}

static const csv_field csv_empty_field = {"", 0};

int csv_check_delimiter(char delimiter, const char *name, ak_error *err)
{
    if (delimiter == '"' || delimiter == '\n' || delimiter == '\r')
        return ak_err_set(err, ANONKIT_E_USAGE, name, 0, 0,
                          "the CSV delimiter cannot be a quote, CR or LF");
    return ANONKIT_OK;
}

static void reader_set_sentinel(csv_reader *r)
{
    r->buf[r->end] = '\n';
    memset(r->buf + r->end + 1, 0, CSV_PAD - 1);
}

int csv_reader_open_stream(csv_reader **out, FILE *stream, const char *name, char delimiter,
                           ak_error *err)
{
    *out = NULL;
    if (!name) name = "(stream)";
    AK_CHECK(csv_check_delimiter(delimiter, name, err));
    csv_reader *r = calloc(1, sizeof *r);
    if (!r) return ak_err_nomem(err);
    r->stream = stream;
    r->delim = delimiter;
    r->delim_mask = CSV_ONES * (unsigned char)delimiter;
    r->line = 1;
    r->remaining = UINT64_MAX;
    r->cap = CSV_BLOCK_SIZE;
    r->fields_cap = 64;
    r->escaped_cap = 8;
    r->name = malloc(strlen(name) + 1);
    r->buf = malloc(r->cap + CSV_PAD);
    r->fields = malloc(r->fields_cap * sizeof *r->fields);
    r->escaped = malloc(r->escaped_cap * sizeof *r->escaped);
    if (!r->name || !r->buf || !r->fields || !r->escaped) {
        csv_reader_free(r);
        return ak_err_nomem(err);
    }
    strcpy(r->name, name);
    reader_set_sentinel(r);
    *out = r;
    return ANONKIT_OK;
}

int csv_reader_open_range(csv_reader **out, const char *path, char delimiter, uint64_t offset, uint64_t length,
                          long first_line, ak_error *err)
{
    AK_CHECK(csv_reader_open(out, path, delimiter, err));
    csv_reader *r = *out;
    if (length < r->cap) { /* a short range (a header and first record, say): a buffer of its size, grown as
                              any is for a longer record, not a megabyte mapped and unmapped for it */
        const size_t cap = length < 4096 ? 4096 : (size_t)length;
        char *smaller = realloc(r->buf, cap + CSV_PAD);
        if (smaller) {
            r->buf = smaller;
            r->cap = cap;
            reader_set_sentinel(r);
        }
    }
    if (fseeko(r->stream, (off_t)offset, SEEK_SET) != 0) {
        int e = errno;
        csv_reader_free(r);
        *out = NULL;
        return ak_err_set(err, ANONKIT_E_IO, path, 0, 0, "cannot seek: %s", strerror(e));
    }
    r->remaining = length;
    r->base = r->origin = offset;
    r->line = first_line;
    r->bom_checked = offset > 0;
    return ANONKIT_OK;
}

int csv_reader_open(csv_reader **out, const char *path, char delimiter, ak_error *err)
{
    *out = NULL;
    if (strcmp(path, "-") == 0)
        return ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0,
                          "the CSV reader cannot read stdin directly: spool it to a file first");
    AK_CHECK(csv_check_delimiter(delimiter, path, err));
    FILE *f = fopen(path, "rb");
    if (!f) return ak_err_set(err, ANONKIT_E_IO, path, 0, 0, "cannot open: %s", strerror(errno));
    int rc = csv_reader_open_stream(out, f, path, delimiter, err);
    if (rc < 0) {
        fclose(f);
        return rc;
    }
    (*out)->own_stream = 1;
    return ANONKIT_OK;
}

void csv_reader_free(csv_reader *r)
{
    if (!r) return;
    if (r->ds) {
        digest_stream_close(r->ds, r->buf);
        digest_stream_free(r->ds);
        free(r->ds);
    }
    if (r->own_stream && r->stream) fclose(r->stream);
    free(r->scratch);
    free(r->mem_skip);
    free(r->mem_cols);
    free(r->name);
    free(r->buf);
    free(r->fields);
    free(r->escaped);
    free(r);
}

int csv_reader_open_table(csv_reader **out, const struct anonkit_table *t, const char *name, ak_error *err)
{
    *out = NULL;
    csv_reader *r = calloc(1, sizeof *r);
    if (!r) return ak_err_nomem(err);
    r->mem = t;
    r->line = 1;
    r->mem_stop = t->nrows + 1;
    r->fields_cap = t->ncols ? t->ncols : 1;
    size_t names = 0;
    for (uint32_t c = 0; c < t->ncols; c++) names += strlen(t->cols[c].name) + CSV_FIELD_READABLE;
    const size_t numbers = (size_t)t->ncols * MEMTABLE_NUMBER_SCRATCH;
    r->name = strdup(name ? name : "(table)");
    r->fields = malloc(r->fields_cap * sizeof *r->fields);
    r->scratch = calloc(1, (names > numbers ? names : numbers) + CSV_FIELD_READABLE);
    if (!r->name || !r->fields || !r->scratch) {
        csv_reader_free(r);
        return ak_err_nomem(err);
    }
    *out = r;
    return ANONKIT_OK;
}

static int reader_fail(csv_reader *r, ak_error *err);

/* csv_read of the table backend: the header (the column names, copied into
 * scratch, padded), then row after row (memtable_record). */
int csv_reader_open_table_rows(csv_reader **out, const struct anonkit_table *t, const char *name, uint64_t first,
                               uint64_t count, ak_error *err)
{
    AK_CHECK(csv_reader_open_table(out, t, name, err));
    if (first > t->nrows) first = t->nrows;
    if (count > t->nrows - first) count = t->nrows - first;
    (*out)->mem_row = first + 1;
    (*out)->mem_stop = first + 1 + count;
    (*out)->line = (long)first + 2;
    return ANONKIT_OK;
}

int csv_reader_table_columns(csv_reader *r, const unsigned char *wanted, ak_error *err)
{
    if (!r->mem) return ANONKIT_OK;
    const uint32_t n = r->mem->ncols;
    if (!r->mem_skip && !(r->mem_skip = calloc(n ? n : 1, 1))) return ak_err_nomem(err);
    if (!r->mem_cols && !(r->mem_cols = malloc((n ? n : 1) * sizeof *r->mem_cols))) return ak_err_nomem(err);
    r->mem_ncols = 0;
    for (uint32_t c = 0; c < n; c++) {
        r->mem_skip[c] = !wanted[c];
        if (wanted[c]) r->mem_cols[r->mem_ncols++] = c;
    }
    r->mem_blanked = 0;
    return ANONKIT_OK;
}

static int table_read(csv_reader *r, csv_record *rec, ak_error *err)
{
    const struct anonkit_table *t = r->mem;
    if (r->mem_row >= r->mem_stop) {
        if (reader_count(r, 0) < 0) return reader_fail(r, err);
        return 0;
    }
    if (r->mem_row == 0) {
        char *at = r->scratch;
        for (uint32_t c = 0; c < t->ncols; c++) {
            const size_t len = strlen(t->cols[c].name);
            memcpy(at, t->cols[c].name, len);
            memset(at + len, 0, CSV_FIELD_READABLE);
            r->fields[c] = (csv_field){at, (uint32_t)len};
            at += len + CSV_FIELD_READABLE;
        }
        r->mem_blanked = 0;
    } else {
        if (!r->mem_blanked) { /* the skipped columns' empty fields, once: rows then fill only the others */
            for (uint32_t c = 0; c < t->ncols; c++)
                if (r->mem_skip && r->mem_skip[c]) r->fields[c] = (csv_field){"", 0};
            r->mem_blanked = 1;
        }
        if (r->mem_cols) memtable_record(t, r->mem_row - 1, r->fields, r->scratch, r->mem_cols, r->mem_ncols);
        else memtable_record(t, r->mem_row - 1, r->fields, r->scratch, NULL, t->ncols);
    }
    rec->fields = r->fields;
    rec->count = t->ncols;
    rec->line = (long)r->mem_row + 1;
    rec->offset = r->mem_row;
    r->line = rec->line + 1;
    r->mem_row++;
    r->records++;
    if ((r->records & 65535) == 0 && reader_count(r, 0) < 0) return reader_fail(r, err);
    return 1;
}

int csv_reader_digest(csv_reader *r, input_digest *d, uint64_t cut, ak_error *err)
{
    if (r->mem) return ANONKIT_OK; /* a table cannot change during the call: no digest (csv.h) */
    struct stat st;
    const uint64_t size = fstat(fileno(r->stream), &st) == 0 && st.st_size > 0 ? (uint64_t)st.st_size : 0;
    if (!r->ds && !(r->ds = calloc(1, sizeof *r->ds))) return ak_err_nomem(err);
    /* a range starts after the header; a whole read starts with it */
    const uint64_t data_start = r->base == 0 && r->remaining == UINT64_MAX ? UINT64_MAX : r->base;
    if (digest_stream_start(r->ds, d, size, data_start, cut, r->start) != 0) return ak_err_nomem(err);
    return ANONKIT_OK;
}

uint64_t csv_reader_offset(const csv_reader *r)
{
    return r->base + r->start;
}

uint64_t csv_find_split(const char *path, uint64_t start, uint64_t size)
{
    if (size <= start) return 0;
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    const uint64_t half = start + (size - start) / 2;
    uint64_t split = 0;
    if (fseeko(f, (off_t)half, SEEK_SET) == 0) {
        char buf[1 << 16];
        uint64_t at = half;
        size_t got;
        /* lines of a few MiB are not worth cutting the file for */
        while (!split && at - half < ((uint64_t)4 << 20) && (got = fread(buf, 1, sizeof buf, f)) > 0) {
            const char *lf = memchr(buf, '\n', got);
            if (lf) split = at + (uint64_t)(lf - buf) + 1;
            at += got;
        }
    }
    fclose(f);
    return split;
}

uint64_t csv_estimate_lines(const char *path, uint64_t offset, uint64_t length)
{
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    char buf[1 << 16];
    size_t got = 0;
    if (fseeko(f, (off_t)offset, SEEK_SET) == 0)
        got = fread(buf, 1, length < sizeof buf ? (size_t)length : sizeof buf, f);
    fclose(f);
    if (!got) return 0;
    uint64_t lines = 0;
    for (const char *p = buf, *end = buf + got; (p = memchr(p, '\n', (size_t)(end - p))) != NULL; p++) lines++;
    if (!lines) return 1;
    /* lines per byte of the sample, over the whole range, with an eighth more */
    const double estimate = (double)length * (double)lines / (double)got;
    return (uint64_t)(estimate + estimate / 8) + 1;
}

long csv_reader_line(const csv_reader *r)
{
    return r->line;
}

int csv_reader_saw_quote(const csv_reader *r)
{
    return r->saw_quote;
}

/* Remembers the failure in r->last (already filled) and copies it out. */
static int reader_fail(csv_reader *r, ak_error *err)
{
    r->failed = r->last.code;
    if (err) *err = r->last;
    return r->last.code;
}

/* Keeps the unconsumed bytes, moved to the front, and reads more after them,
 * growing the buffer when they fill it. Failures go to r->last. */
static int reader_fill(csv_reader *r)
{
    if (r->start > 0) {
        if (r->ds) digest_stream_moved(r->ds, r->buf); /* what is to be hashed moves, or goes */
        size_t keep = r->end - r->start;
        memmove(r->buf, r->buf + r->start, keep);
        r->base += r->start;
        r->end = keep;
        r->start = 0;
    }
    if (r->end == r->cap) {
        if (r->cap >= CSV_MAX_BLOCK)
            return ak_err_set(&r->last, ANONKIT_E_INPUT, r->name, r->line, 0,
                              "the record starting on this line is longer than %zu bytes "
                              "(is a quoted field left open?)",
                              (size_t)CSV_MAX_BLOCK);
        size_t new_cap = r->cap * 2;
        char *bigger = realloc(r->buf, new_cap + CSV_PAD);
        if (!bigger) return ak_err_nomem(&r->last);
        r->buf = bigger;
        r->cap = new_cap;
    }
    size_t want = r->cap - r->end;
    if (want > r->remaining) want = (size_t)r->remaining;
    errno = 0;
    size_t got = want ? fread(r->buf + r->end, 1, want, r->stream) : 0;
    int saved = errno;
    if (r->remaining != UINT64_MAX) r->remaining -= got;
    r->end += got;
    reader_set_sentinel(r);
    if (got < want) {
        if (ferror(r->stream))
            return ak_err_set(&r->last, ANONKIT_E_IO, r->name, 0, 0, "read failed: %s",
                              saved ? strerror(saved) : "unknown error");
        r->eof = 1;
    }
    if (r->remaining == 0) r->eof = 1; /* the end of a range */
    AK_CHECK(reader_count(r, got));
    /* A UTF-8 byte order mark at the start of the input is not data. */
    if (!r->bom_checked && (r->end >= 3 || r->eof)) {
        r->bom_checked = 1;
        if (r->base == 0 && r->end >= 3 && memcmp(r->buf, "\xEF\xBB\xBF", 3) == 0) r->start = 3;
    }
    return ANONKIT_OK;
}

static int reader_grow_fields(csv_reader *r)
{
    if (r->fields_cap > UINT32_MAX / 2)
        return ak_err_set(&r->last, ANONKIT_E_INPUT, r->name, r->line, 0,
                          "too many fields in one record");
    uint32_t new_cap = r->fields_cap * 2;
    csv_field *bigger = realloc(r->fields, (size_t)new_cap * sizeof *bigger);
    if (!bigger) return ak_err_nomem(&r->last);
    r->fields = bigger;
    r->fields_cap = new_cap;
    return ANONKIT_OK;
}

static int reader_note_escaped(csv_reader *r, uint32_t field)
{
    if (r->n_escaped == r->escaped_cap) {
        uint32_t new_cap = r->escaped_cap * 2;
        uint32_t *bigger = realloc(r->escaped, (size_t)new_cap * sizeof *bigger);
        if (!bigger) return ak_err_nomem(&r->last);
        r->escaped = bigger;
        r->escaped_cap = new_cap;
    }
    r->escaped[r->n_escaped++] = field;
    return ANONKIT_OK;
}

/* Turns every "" of a quoted field into ", in place. */
static void reader_unescape(csv_reader *r, csv_field *f)
{
    char *s = r->buf + (f->data - r->buf);
    uint32_t in = 0, out = 0;
    while (in < f->len) {
        char c = s[in++];
        s[out++] = c;
        if (c == '"') in++; /* the scan guaranteed the second quote */
    }
    f->len = out;
}

static int reader_garbage(csv_reader *r, long line, uint32_t field, unsigned char c)
{
    if (c >= 0x20 && c < 0x7f)
        return ak_err_set(&r->last, ANONKIT_E_INPUT, r->name, line, (long)field,
                          "field %u: unexpected character '%c' after a closing quote "
                          "(expected the delimiter or the end of the line)",
                          (unsigned)field, c);
    return ak_err_set(&r->last, ANONKIT_E_INPUT, r->name, line, (long)field,
                      "field %u: unexpected byte 0x%02x after a closing quote "
                      "(expected the delimiter or the end of the line)",
                      (unsigned)field, (unsigned)c);
}

/* Scans one record starting at r->start, which is not an empty line. Returns
 * 1 with rec filled and the record consumed, CSV_NEED_MORE when the buffered
 * data ends inside the record and the stream has more, or a negative status
 * (in r->last). */
static int parse_record(csv_reader *r, csv_record *rec)
{
    const char *buf = r->buf;
    const size_t end = r->end;
    const char delim = r->delim;
    const csv_scanner scanner = csv_scanner_make(delim);
    const int eof = r->eof;
    csv_field *fields = r->fields;
    uint32_t fields_cap = r->fields_cap;
    uint32_t nf = 0;
    long nl = 0;        /* line ends inside quoted fields so far */
    int ended_by_lf = 1;
    size_t fs = r->start; /* start of the current field */
    size_t next;          /* first byte after the record */
    r->n_escaped = 0;

    for (;;) {
        if (buf[fs] != '"') { /* buf[end] is the sentinel LF, never a quote */
            /* Fast path: unquoted fields (a quote inside one is data). Every
             * delimiter or LF flagged in a scan mask ends a field; the
             * sentinel stops the scan at end at the latest, and the padding
             * after it keeps the loads of a mask inside the buffer. */
            size_t base = fs;
            uint64_t m = csv_scan_mask(&scanner, buf + base);
            for (;;) {
                while (!m) {
                    base += CSV_SCAN;
                    m = csv_scan_mask(&scanner, buf + base);
                }
                size_t p = base + csv_scan_first(m);
                m = csv_scan_next(m);
                if (nf == fields_cap) {
                    AK_CHECK(reader_grow_fields(r));
                    fields = r->fields;
                    fields_cap = r->fields_cap;
                }
                if (buf[p] == delim) {
                    fields[nf].data = buf + fs;
                    fields[nf].len = (uint32_t)(p - fs);
                    nf++;
                    fs = p + 1;
                    if (buf[fs] == '"') break; /* to the quoted path */
                    continue;
                }
                if (p == end) { /* the sentinel */
                    if (!eof) return CSV_NEED_MORE;
                    fields[nf].data = buf + fs;
                    fields[nf].len = (uint32_t)(end - fs);
                    nf++;
                    next = end;
                    ended_by_lf = 0;
                    goto done;
                }
                size_t len = p - fs;
                if (len && buf[p - 1] == '\r') len--; /* CRLF */
                fields[nf].data = buf + fs;
                fields[nf].len = (uint32_t)len;
                nf++;
                next = p + 1;
                goto done;
            }
            continue;
        }

        /* Slow path: a quoted field. Find the closing quote, counting line
         * ends and noting whether any "" needs unescaping afterwards. */
        r->saw_quote = 1;
        if (nf == fields_cap) {
            AK_CHECK(reader_grow_fields(r));
            fields = r->fields;
            fields_cap = r->fields_cap;
        }
        long open_line = r->line + nl;
        size_t q = fs + 1;
        int has_escape = 0;
        for (;;) {
            while (q < end && buf[q] != '"') {
                if (buf[q] == '\n') nl++;
                q++;
            }
            if (q >= end) {
                if (!eof) return CSV_NEED_MORE;
                return ak_err_set(&r->last, ANONKIT_E_INPUT, r->name, open_line, (long)nf + 1,
                                  "field %u: quoted field opened on this line is never closed",
                                  (unsigned)nf + 1);
            }
            if (q + 1 < end && buf[q + 1] == '"') {
                has_escape = 1;
                q += 2;
                continue;
            }
            if (q + 1 == end && !eof) return CSV_NEED_MORE; /* closing, or half of ""? */
            break;
        }
        fields[nf].data = buf + fs + 1;
        fields[nf].len = (uint32_t)(q - fs - 1);
        if (has_escape) AK_CHECK(reader_note_escaped(r, nf));
        nf++;
        size_t after = q + 1;
        if (after == end) { /* eof is set: the input ends right after the quote */
            next = end;
            ended_by_lf = 0;
            break;
        }
        char c = buf[after];
        if (c == delim) {
            fs = after + 1;
            continue;
        }
        if (c == '\n') {
            next = after + 1;
            break;
        }
        if (c == '\r') {
            if (after + 1 < end && buf[after + 1] == '\n') {
                next = after + 2;
                break;
            }
            if (after + 1 == end && !eof) return CSV_NEED_MORE;
        }
        return reader_garbage(r, r->line + nl, nf, (unsigned char)c);
    }

done:
    rec->offset = r->base + r->start;
    if (r->ds) /* before any "" is unescaped */
        digest_stream_record(r->ds, r->buf, rec->offset, r->start, next, r->n_escaped > 0, r->base + next);
    for (uint32_t i = 0; i < r->n_escaped; i++) reader_unescape(r, &fields[r->escaped[i]]);
    rec->fields = fields;
    rec->count = nf;
    rec->line = r->line;
    r->line += nl + ended_by_lf;
    r->start = next;
    return 1;
}

static int is_empty_line_at(const csv_reader *r, size_t pos)
{
    return pos < r->end &&
           (r->buf[pos] == '\n' ||
            (r->buf[pos] == '\r' && pos + 1 < r->end && r->buf[pos + 1] == '\n'));
}

/* r->start is at an empty line. Consumes the run of empty lines there.
 * Returns 0 when the run reaches the end of the input (not records), or 1
 * with the run queued as records of one empty field; a negative status on a
 * read failure. */
static int reader_skip_empty_lines(csv_reader *r)
{
    long first = r->line;
    const uint64_t first_offset = r->base + r->start;
    uint64_t n = 0;
    for (;;) {
        size_t pos = r->start;
        while (is_empty_line_at(r, pos)) {
            pos += r->buf[pos] == '\n' ? 1 : 2;
            n++;
        }
        r->start = pos;
        if (pos < r->end) {
            /* A CR that ends the buffered data may be the start of a CRLF. */
            int undecided = r->buf[pos] == '\r' && pos + 1 == r->end && !r->eof;
            if (!undecided) break;
        } else if (r->eof) {
            r->line = first + (long)n;
            return 0;
        }
        AK_CHECK(reader_fill(r));
    }
    r->line = first + (long)n;
    r->pending_empty = n;
    r->pending_line = first;
    r->pending_offset = first_offset;
    return 1;
}

int csv_read(csv_reader *r, csv_record *rec, ak_error *err)
{
    if (r->failed) return reader_fail(r, err);
    if (r->mem) return table_read(r, rec, err);
    for (;;) {
        if (r->pending_empty) {
            r->pending_empty--;
            rec->fields = &csv_empty_field;
            rec->count = 1;
            rec->offset = r->pending_offset;
            if (r->ds) r->ds->d->records++; /* (its bytes are a line end) */
            r->pending_offset++; /* (a run of empty lines: one byte apart at least) */
            rec->line = r->pending_line++;
            r->records++;
            return 1;
        }
        if (r->start == r->end) {
            if (r->eof) {
                if (r->ds) digest_stream_close(r->ds, r->buf);
                if (reader_count(r, 0) < 0) return reader_fail(r, err);
                return 0;
            }
            if (reader_fill(r) < 0) return reader_fail(r, err);
            continue;
        }
        int rc;
        if (is_empty_line_at(r, r->start)) {
            rc = reader_skip_empty_lines(r);
            if (rc < 0) return reader_fail(r, err);
            if (rc == 0) {
                if (r->ds) digest_stream_close(r->ds, r->buf);
                if (reader_count(r, 0) < 0) return reader_fail(r, err);
                return 0;
            }
            continue; /* hand out the first pending empty record */
        }
        rc = parse_record(r, rec);
        if (rc == 1) {
            r->records++;
            return 1;
        }
        if (rc < 0) return reader_fail(r, err);
        if (reader_fill(r) < 0) return reader_fail(r, err);
    }
}
