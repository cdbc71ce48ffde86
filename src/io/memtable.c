/* memtable.c — anonkit_table (see memtable.h): building a table from column
 * arrays (copied, or numbers borrowed: anonkit_table_add_*_ref), dictionary
 * codes or rows, reading it back column by column, its CSV form for a
 * private copy, the cells of the CSV writer's table backend, and the
 * "table:" sink that parses a writer's CSV output into a new table. */
#define _GNU_SOURCE
#include "io/memtable.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "common/interval.h"
#include "io/csv.h"

/* Leaves a printf-style message in t->errmsg and returns status. */
static int fail(anonkit_table *t, int status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static int fail(anonkit_table *t, int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t->errmsg, sizeof t->errmsg, fmt, ap);
    va_end(ap);
    return status;
}

anonkit_table *anonkit_table_create(void) { return calloc(1, sizeof(anonkit_table)); }

static void col_free(memcol *c)
{
    free(c->name);
    if (!c->borrowed) {
        free(c->d);
        free(c->i);
    }
    free(c->off);
    free(c->bytes);
    free(c->missing);
    free(c->codes);
    free(c->row_off);
    free(c->row_bytes);
}

void anonkit_table_free(anonkit_table *t)
{
    if (!t) return;
    for (uint32_t c = 0; c < t->ncols; c++) col_free(&t->cols[c]);
    free(t->cols);
    free(t);
}

const char *anonkit_table_errmsg(const anonkit_table *t) { return t ? t->errmsg : "no table"; }

/* Makes room for rows more rows in column c's arrays (cap grows by doubling). */
static int col_reserve(memcol *c, uint64_t rows)
{
    if (rows <= c->cap) return 0;
    uint64_t cap = c->cap ? c->cap : 64;
    while (cap < rows) cap *= 2;
    if (cap > SIZE_MAX / 16) return -1;
    if (c->missing) {
        uint8_t *m = realloc(c->missing, (size_t)cap);
        if (!m) return -1;
        memset(m + c->cap, 0, (size_t)(cap - c->cap));
        c->missing = m;
    }
    if (c->kind == ANONKIT_COLUMN_DOUBLE) {
        double *d = realloc(c->d, (size_t)cap * sizeof *d);
        if (!d) return -1;
        c->d = d;
    } else if (c->kind == ANONKIT_COLUMN_INT64) {
        int64_t *i = realloc(c->i, (size_t)cap * sizeof *i);
        if (!i) return -1;
        c->i = i;
    } else {
        int64_t *o = realloc(c->off, ((size_t)cap + 1) * sizeof *o);
        if (!o) return -1;
        if (!c->off) o[0] = 0;
        c->off = o;
    }
    c->cap = cap;
    return 0;
}

memcol *memtable_column_slot(anonkit_table *t)
{
    if (t->ncols == t->cap) {
        const uint32_t cap = t->cap ? t->cap * 2 : 8;
        memcol *cols = realloc(t->cols, cap * sizeof *cols);
        if (!cols) return NULL;
        t->cols = cols;
        t->cap = cap;
    }
    memcol *c = &t->cols[t->ncols];
    memset(c, 0, sizeof *c);
    return c;
}

/* Adds an empty column of `kind` with room for n rows; NULL when out of memory
 * or the name is taken (message in t). */
static memcol *add_column(anonkit_table *t, const char *name, int kind, uint64_t n, int *status)
{
    *status = ANONKIT_OK;
    if (!name || !*name) {
        *status = fail(t, ANONKIT_E_USAGE, "a column needs a name");
        return NULL;
    }
    for (uint32_t c = 0; c < t->ncols; c++)
        if (!strcmp(t->cols[c].name, name)) {
            *status = fail(t, ANONKIT_E_USAGE, "column '%s' is there already", name);
            return NULL;
        }
    if (t->ncols && n != t->nrows) {
        *status = fail(t, ANONKIT_E_USAGE, "column '%s' has %" PRIu64 " rows where the table has %" PRIu64, name, n,
                       t->nrows);
        return NULL;
    }
    memcol *c = memtable_column_slot(t);
    if (!c) goto nomem;
    c->kind = kind;
    if (!(c->name = strdup(name)) || col_reserve(c, n ? n : 1) != 0) {
        col_free(c);
        goto nomem;
    }
    t->ncols++;
    t->nrows = n;
    return c;
nomem:
    *status = fail(t, ANONKIT_E_NOMEM, "out of memory");
    return NULL;
}

/* Copies the missing mask (NULL: none missing) into c. */
static int copy_missing(memcol *c, const uint8_t *missing, uint64_t n)
{
    if (!missing) return 0;
    int any = 0;
    for (uint64_t r = 0; r < n && !any; r++) any = missing[r] != 0;
    if (!any) return 0;
    if (!(c->missing = calloc((size_t)c->cap, 1))) return -1;
    for (uint64_t r = 0; r < n; r++) c->missing[r] = missing[r] != 0;
    return 0;
}

/* Makes column c use the caller's array `values` instead of its own: it is
 * only read, never written or freed (anonkit_table_add_*_ref). */
static void col_borrow(memcol *c, const void *values)
{
    if (c->kind == ANONKIT_COLUMN_DOUBLE) {
        free(c->d);
        c->d = (double *)(uintptr_t)values; /* read only: borrowed (never written, never freed) */
    } else {
        free(c->i);
        c->i = (int64_t *)(uintptr_t)values;
    }
    c->borrowed = 1;
}

/* anonkit_table_add_double, the values copied or (borrow) borrowed. */
static int add_double(anonkit_table *t, const char *name, const double *values, const uint8_t *missing, uint64_t n,
                      int borrow)
{
    if (!t) return ANONKIT_E_USAGE;
    if (n && !values) return fail(t, ANONKIT_E_USAGE, "column '%s': no values", name ? name : "");
    int rc;
    memcol *c = add_column(t, name, ANONKIT_COLUMN_DOUBLE, n, &rc);
    if (!c) return rc;
    if (borrow && n) col_borrow(c, values);
    else if (n) memcpy(c->d, values, (size_t)n * sizeof *values);
    if (copy_missing(c, missing, n) != 0) return fail(t, ANONKIT_E_NOMEM, "out of memory");
    for (uint64_t r = 0; r < n; r++)
        if (!isfinite(values[r]) && !(c->missing && c->missing[r])) {
            if (isnan(values[r])) { /* NaN is pandas' missing float */
                if (!c->missing && !(c->missing = calloc((size_t)c->cap, 1)))
                    return fail(t, ANONKIT_E_NOMEM, "out of memory");
                c->missing[r] = 1;
            } else {
                return fail(t, ANONKIT_E_INPUT, "column '%s', row %" PRIu64 ": an infinite value", name, r + 1);
            }
        }
    return ANONKIT_OK;
}

int anonkit_table_add_double(anonkit_table *t, const char *name, const double *values, const uint8_t *missing,
                             uint64_t n)
{
    return add_double(t, name, values, missing, n, 0);
}

int anonkit_table_add_double_ref(anonkit_table *t, const char *name, const double *values, const uint8_t *missing,
                                 uint64_t n)
{
    return add_double(t, name, values, missing, n, 1);
}

/* anonkit_table_add_int64, the values copied or (borrow) borrowed. */
static int add_int64(anonkit_table *t, const char *name, const int64_t *values, const uint8_t *missing, uint64_t n,
                     int borrow)
{
    if (!t) return ANONKIT_E_USAGE;
    if (n && !values) return fail(t, ANONKIT_E_USAGE, "column '%s': no values", name ? name : "");
    int rc;
    memcol *c = add_column(t, name, ANONKIT_COLUMN_INT64, n, &rc);
    if (!c) return rc;
    if (borrow && n) col_borrow(c, values);
    else if (n) memcpy(c->i, values, (size_t)n * sizeof *values);
    if (copy_missing(c, missing, n) != 0) return fail(t, ANONKIT_E_NOMEM, "out of memory");
    return ANONKIT_OK;
}

int anonkit_table_add_int64(anonkit_table *t, const char *name, const int64_t *values, const uint8_t *missing,
                            uint64_t n)
{
    return add_int64(t, name, values, missing, n, 0);
}

int anonkit_table_add_int64_ref(anonkit_table *t, const char *name, const int64_t *values, const uint8_t *missing,
                                uint64_t n)
{
    return add_int64(t, name, values, missing, n, 1);
}

int anonkit_table_add_text(anonkit_table *t, const char *name, const int64_t *offsets, const char *bytes,
                           const uint8_t *missing, uint64_t n)
{
    if (!t) return ANONKIT_E_USAGE;
    if (n && !offsets) return fail(t, ANONKIT_E_USAGE, "column '%s': no offsets", name ? name : "");
    for (uint64_t r = 0; r < n; r++)
        if (offsets[r + 1] < offsets[r] || offsets[r] < 0)
            return fail(t, ANONKIT_E_USAGE, "column '%s': offsets decrease at row %" PRIu64, name ? name : "", r + 1);
    const size_t total = n ? (size_t)(offsets[n] - offsets[0]) : 0;
    if (total && !bytes) return fail(t, ANONKIT_E_USAGE, "column '%s': no bytes", name ? name : "");
    int rc;
    memcol *c = add_column(t, name, ANONKIT_COLUMN_TEXT, n, &rc);
    if (!c) return rc;
    if (total && !(c->bytes = malloc(total + CSV_FIELD_READABLE))) return fail(t, ANONKIT_E_NOMEM, "out of memory");
    c->bytes_cap = total;
    if (total) memcpy(c->bytes, bytes + offsets[0], total); /* Arrow slices start past 0 */
    if (c->bytes) memset(c->bytes + total, 0, CSV_FIELD_READABLE); /* the reader's padding (csv.h) */
    for (uint64_t r = 0; n && r <= n; r++) c->off[r] = offsets[r] - offsets[0];
    if (copy_missing(c, missing, n) != 0) return fail(t, ANONKIT_E_NOMEM, "out of memory");
    return ANONKIT_OK;
}

int anonkit_table_add_text_codes(anonkit_table *t, const char *name, const int32_t *codes, uint64_t n,
                                 const int64_t *offsets, const char *bytes, uint32_t count)
{
    if (!t) return ANONKIT_E_USAGE;
    if ((n && !codes) || !offsets) return fail(t, ANONKIT_E_USAGE, "column '%s': no codes or offsets", name ? name : "");
    for (uint32_t v = 0; v < count; v++)
        if (offsets[v + 1] < offsets[v] || offsets[v] < 0)
            return fail(t, ANONKIT_E_USAGE, "column '%s': offsets decrease at value %u", name ? name : "", v + 1);
    for (uint64_t r = 0; r < n; r++)
        if (codes[r] >= (int64_t)count)
            return fail(t, ANONKIT_E_USAGE, "column '%s', row %" PRIu64 ": code %d of %u values", name ? name : "",
                        r + 1, codes[r], count);
    const size_t total = (size_t)(offsets[count] - offsets[0]);
    if (total && !bytes) return fail(t, ANONKIT_E_USAGE, "column '%s': no bytes", name ? name : "");
    int rc;
    memcol *c = add_column(t, name, ANONKIT_COLUMN_TEXT, n, &rc);
    if (!c) return rc;
    free(c->off); /* the row offsets col_reserve made: the values' instead */
    c->off = malloc(((size_t)count + 1) * sizeof *c->off);
    c->codes = malloc((n ? (size_t)n : 1) * sizeof *c->codes);
    c->bytes = malloc(total + CSV_FIELD_READABLE);
    if (!c->off || !c->codes || !c->bytes) return fail(t, ANONKIT_E_NOMEM, "out of memory");
    c->bytes_cap = total;
    c->ndict = count;
    c->cap = n;
    if (total) memcpy(c->bytes, bytes + offsets[0], total);
    memset(c->bytes + total, 0, CSV_FIELD_READABLE); /* the reader's padding (csv.h) */
    for (uint32_t v = 0; v <= count; v++) c->off[v] = offsets[v] - offsets[0];
    int any = 0;
    for (uint64_t r = 0; r < n; r++) {
        /* an empty value is missing, as an empty cell of the CSV form reads back */
        const int miss = codes[r] < 0 || c->off[codes[r] + 1] == c->off[codes[r]];
        c->codes[r] = miss ? -1 : codes[r];
        if (miss && !any) {
            if (!(c->missing = calloc((size_t)n, 1))) return fail(t, ANONKIT_E_NOMEM, "out of memory");
            any = 1;
        }
        if (miss) c->missing[r] = 1;
    }
    t->nrows = n;
    return ANONKIT_OK;
}

/* Appends field[0..len) as the next row of column c (text parsed for a
 * numeric column); field NULL is a missing value. */
static int append_field(anonkit_table *t, memcol *c, const char *field, size_t len)
{
    const uint64_t r = t->nrows;
    if (col_reserve(c, r + 1) != 0) return fail(t, ANONKIT_E_NOMEM, "out of memory");
    if (!field || (!len && c->kind != ANONKIT_COLUMN_TEXT)) {
        if (!c->missing && !(c->missing = calloc((size_t)c->cap, 1))) return fail(t, ANONKIT_E_NOMEM, "out of memory");
        c->missing[r] = 1;
        if (c->kind == ANONKIT_COLUMN_DOUBLE) c->d[r] = 0;
        if (c->kind == ANONKIT_COLUMN_INT64) c->i[r] = 0;
        if (c->kind == ANONKIT_COLUMN_TEXT) c->off[r + 1] = c->off[r];
        return ANONKIT_OK;
    }
    if (c->missing) c->missing[r] = 0; /* (a row that failed half-way may have left 1) */
    if (c->kind == ANONKIT_COLUMN_TEXT) {
        if (len && (size_t)c->off[r] + len > c->bytes_cap) {
            size_t cap = c->bytes_cap ? c->bytes_cap : 256;
            while (cap < (size_t)c->off[r] + len) cap *= 2;
            char *b = realloc(c->bytes, cap + CSV_FIELD_READABLE);
            if (!b) return fail(t, ANONKIT_E_NOMEM, "out of memory");
            c->bytes = b;
            c->bytes_cap = cap;
        }
        if (len) memcpy(c->bytes + c->off[r], field, len);
        c->off[r + 1] = c->off[r] + (int64_t)len;
        return ANONKIT_OK;
    }
    char buf[64];
    if (len >= sizeof buf) return fail(t, ANONKIT_E_INPUT, "column '%s', row %" PRIu64 ": not a number", c->name, r + 1);
    memcpy(buf, field, len);
    buf[len] = '\0';
    char *end;
    errno = 0;
    if (c->kind == ANONKIT_COLUMN_DOUBLE) c->d[r] = strtod(buf, &end);
    else c->i[r] = (int64_t)strtoll(buf, &end, 10);
    if (*end || errno)
        return fail(t, ANONKIT_E_INPUT, "column '%s', row %" PRIu64 ": '%s' is not a number", c->name, r + 1, buf);
    return ANONKIT_OK;
}

int anonkit_table_append_row(anonkit_table *t, const char *const *fields, const size_t *lengths, uint32_t count)
{
    if (!t) return ANONKIT_E_USAGE;
    if (count != t->ncols)
        return fail(t, ANONKIT_E_USAGE, "a row of %u fields where the table has %u columns", count, t->ncols);
    for (uint32_t c = 0; c < count; c++)
        if (t->cols[c].borrowed || t->cols[c].codes)
            return fail(t, ANONKIT_E_USAGE, "column '%s' borrows its values or is in dictionary form: no row can be "
                        "appended", t->cols[c].name);
    for (uint32_t c = 0; c < count; c++) {
        const char *f = fields ? fields[c] : NULL;
        const int rc = append_field(t, &t->cols[c], f, f ? (lengths ? lengths[c] : strlen(f)) : 0);
        if (rc < 0) return rc; /* (the columns before c hold the row; nrows does not count it) */
    }
    t->nrows++;
    return ANONKIT_OK;
}

uint32_t anonkit_table_columns(const anonkit_table *t) { return t ? t->ncols : 0; }
uint64_t anonkit_table_rows(const anonkit_table *t) { return t ? t->nrows : 0; }

/* Column i of t, or NULL. */
static const memcol *col_at(const anonkit_table *t, uint32_t i) { return t && i < t->ncols ? &t->cols[i] : NULL; }

const char *anonkit_table_column_name(const anonkit_table *t, uint32_t i)
{
    const memcol *c = col_at(t, i);
    return c ? c->name : NULL;
}
int anonkit_table_column_kind(const anonkit_table *t, uint32_t i)
{
    const memcol *c = col_at(t, i);
    return c ? c->kind : 0;
}
const double *anonkit_table_column_double(const anonkit_table *t, uint32_t i)
{
    const memcol *c = col_at(t, i);
    return c && c->kind == ANONKIT_COLUMN_DOUBLE ? c->d : NULL;
}
const int64_t *anonkit_table_column_int64(const anonkit_table *t, uint32_t i)
{
    const memcol *c = col_at(t, i);
    return c && c->kind == ANONKIT_COLUMN_INT64 ? c->i : NULL;
}
int anonkit_table_column_text(const anonkit_table *t, uint32_t i, const int64_t **offsets, const char **bytes)
{
    const memcol *c = col_at(t, i);
    if (!c || c->kind != ANONKIT_COLUMN_TEXT) return ANONKIT_E_USAGE;
    static const char none[1] = "";
    if (c->codes && !c->row_off) { /* a dictionary column's text form, made once */
        memcol *m = (memcol *)(uintptr_t)c; /* (the table's own cache: the documented first-call rule) */
        size_t total = 0, len;
        for (uint64_t r = 0; r < t->nrows; r++)
            if (!(c->missing && c->missing[r])) (void)memcol_text(c, r, &len), total += len;
        int64_t *off = malloc(((size_t)t->nrows + 1) * sizeof *off);
        char *b = malloc(total + CSV_FIELD_READABLE);
        if (!off || !b) {
            free(off);
            free(b);
            return ANONKIT_E_NOMEM;
        }
        off[0] = 0;
        for (uint64_t r = 0; r < t->nrows; r++) {
            len = 0;
            const char *text = c->missing && c->missing[r] ? "" : memcol_text(c, r, &len);
            memcpy(b + off[r], text, len);
            off[r + 1] = off[r] + (int64_t)len;
        }
        memset(b + total, 0, CSV_FIELD_READABLE);
        m->row_off = off;
        m->row_bytes = b;
    }
    if (offsets) *offsets = c->codes ? c->row_off : c->off;
    if (bytes) *bytes = c->codes ? c->row_bytes : c->bytes ? c->bytes : none;
    return ANONKIT_OK;
}

int anonkit_table_column_codes(const anonkit_table *t, uint32_t i, const int32_t **codes, uint32_t *count,
                               const int64_t **offsets, const char **bytes)
{
    const memcol *c = col_at(t, i);
    if (!c || c->kind != ANONKIT_COLUMN_TEXT || !c->codes) return ANONKIT_E_USAGE;
    static const char none[1] = "";
    if (codes) *codes = c->codes;
    if (count) *count = c->ndict;
    if (offsets) *offsets = c->off;
    if (bytes) *bytes = c->bytes ? c->bytes : none;
    return ANONKIT_OK;
}
const uint8_t *anonkit_table_column_missing(const anonkit_table *t, uint32_t i)
{
    const memcol *c = col_at(t, i);
    return c ? c->missing : NULL;
}

/* ---- CSV form ---- */

/* "00" to "99": two digits at a time. */
static const char digit_pairs[201] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
                                     "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
                                     "8081828384858687888990919293949596979899";

/* Writes v in decimal into buf (room for 21 bytes); returns the length.
 * Digits are made two at a time from the end (one division per pair). */
int memtable_format_int64(char *buf, int64_t v)
{
    char tmp[24];
    int n = (int)sizeof tmp;
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    while (u >= 100) {
        const unsigned pair = (unsigned)(u % 100);
        u /= 100;
        tmp[--n] = digit_pairs[2 * pair + 1];
        tmp[--n] = digit_pairs[2 * pair];
    }
    if (u >= 10) {
        tmp[--n] = digit_pairs[2 * u + 1];
        tmp[--n] = digit_pairs[2 * u];
    } else {
        tmp[--n] = (char)('0' + u);
    }
    int len = 0;
    if (v < 0) buf[len++] = '-';
    memcpy(buf + len, tmp + n, sizeof tmp - (size_t)n);
    return len + (int)(sizeof tmp - (size_t)n);
}

/* Tests only (tests/test_table_api.c): format_int64, to be compared with printf's %lld. */
int memtable__format_int64(char *buf, int64_t v) { return memtable_format_int64(buf, v); }

/* Powers of ten that doubles hold exactly. */
static const double pow10_exact[] = {1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12};

/* The text of a double as ak_format_double writes it (the first of %.15g,
 * %.16g, %.17g that reads back), without printf for the common values:
 * an integral value below 1e15 as the integer; a value v with
 * 1e-4 <= |v| < 1e15 that is the double nearest to a decimal D = r / 10^k
 * with at most 15 significant digits (|r| < 1e15, k <= 12 and smallest) as
 * D, because then %.15g of v is D: D's 15-digit neighbours are at least
 * 1e-15 of |D| apart, far more than v's distance to D (half an ulp, about
 * 1.1e-16 of |D|), and the smallest k leaves no trailing zero. That v is
 * D's nearest double is proved exactly: r and 10^k are exact doubles, so
 * r / 10^k, which IEEE division rounds correctly, is D's nearest double. */
int memtable_format_double(char *buf, double v)
{
    if (v > -1e15 && v < 1e15 && v == (double)(int64_t)v) return memtable_format_int64(buf, (int64_t)v);
    const double a = fabs(v);
    if (a >= 1e-4 && a < 1e15) {
        for (int k = 1; k < (int)(sizeof pow10_exact / sizeof *pow10_exact); k++) {
            const double m = a * pow10_exact[k];
            if (m >= 1e15) break;
            const double r = nearbyint(m);
            if (r / pow10_exact[k] != a) continue;
            char digits[24];
            int nd = memtable_format_int64(digits, (int64_t)r), len = 0;
            if (v < 0) buf[len++] = '-';
            if (nd <= k) { /* 0.000ddd */
                buf[len++] = '0';
                buf[len++] = '.';
                for (int z = nd; z < k; z++) buf[len++] = '0';
                memcpy(buf + len, digits, (size_t)nd);
                return len + nd;
            }
            memcpy(buf + len, digits, (size_t)(nd - k));
            len += nd - k;
            buf[len++] = '.';
            memcpy(buf + len, digits + nd - k, (size_t)k);
            return len + k;
        }
    }
    return ak_format_double(buf, v);
}

/* Tests only (tests/test_table_api.c): format_double, to be compared with ak_format_double. */
int memtable__format_double(char *buf, double v) { return memtable_format_double(buf, v); }

/* Appends text[0..len) to b as one CSV field, quoted exactly when the one
 * writer (io/csv_writer.c, csv_write_field) quotes it: it holds the
 * delimiter, a quote, CR or LF, begins or ends with a space, or is the very
 * first field of the output and begins like a UTF-8 byte order mark. */
static int put_text_field(strbuf *b, const char *text, size_t len, const unsigned char *special, int first)
{
    int quote = len && (text[0] == ' ' || text[len - 1] == ' ' || (first && len >= 3 && !memcmp(text, "\xEF\xBB\xBF", 3)));
    const unsigned char *u = (const unsigned char *)text;
    for (size_t i = 0; i < len && !quote; i++) quote = special[u[i]];
    if (!quote) return strbuf_append(b, text, len);
    if (strbuf_reserve(b, 2 * len + 2) != 0) return -1;
    char *o = b->data + b->len;
    *o++ = '"';
    for (size_t i = 0; i < len; i++) {
        if (text[i] == '"') *o++ = '"';
        *o++ = text[i];
    }
    *o++ = '"';
    b->len = (size_t)(o - b->data);
    return 0;
}

/* Rows composed into one buffer before it goes to the writer. */
#define MEMTABLE_CSV_BLOCK ((size_t)256 << 10)

int memtable_write_csv(const anonkit_table *t, FILE *f, char delimiter, int header, const char *shown,
                       ak_error *err)
{
    csv_writer *w = NULL;
    AK_CHECK(csv_writer_open_stream(&w, f, shown, delimiter, err));
    int rc = ANONKIT_OK;
    for (uint32_t c = 0; header && rc == ANONKIT_OK && c < t->ncols; c++)
        rc = csv_write_field(w, t->cols[c].name, strlen(t->cols[c].name), err);
    if (header && rc == ANONKIT_OK) rc = csv_write_end(w, err);
    /* The rows are composed here, field by field as csv_write_field would
     * write them, and handed to the writer in blocks (csv_write_raw). */
    strbuf b = {0};
    char buf[40];
    unsigned char special[256] = {0}; /* the bytes that make the writer quote a field */
    special[(unsigned char)delimiter] = special['"'] = special['\r'] = special['\n'] = 1;
    const int numbers_plain = !strchr("0123456789-.e+", delimiter); /* a number never holds the delimiter */
    for (uint64_t r = 0; rc == ANONKIT_OK && r < t->nrows; r++) {
        const size_t row_start = b.len;
        for (uint32_t ci = 0; rc == ANONKIT_OK && ci < t->ncols; ci++) {
            const memcol *c = &t->cols[ci];
            if (ci && strbuf_append(&b, &delimiter, 1) != 0) rc = ak_err_nomem(err);
            else if (c->missing && c->missing[r]) continue;
            else if (c->kind == ANONKIT_COLUMN_TEXT) {
                size_t len;
                const char *text = memcol_text(c, r, &len);
                if (put_text_field(&b, text, len, special, !header && r == 0 && ci == 0) != 0)
                    rc = ak_err_nomem(err);
            } else { /* a number: quoted only with a delimiter among its characters */
                const int n = c->kind == ANONKIT_COLUMN_DOUBLE ? memtable_format_double(buf, c->d[r]) : memtable_format_int64(buf, c->i[r]);
                if ((numbers_plain ? strbuf_append(&b, buf, (size_t)n) : put_text_field(&b, buf, (size_t)n, special, 0)) != 0)
                    rc = ak_err_nomem(err);
            }
        }
        /* one empty field alone would be an empty line, which is no record: "" */
        if (rc == ANONKIT_OK && b.len == row_start && strbuf_append(&b, "\"\"", 2) != 0) rc = ak_err_nomem(err);
        if (rc == ANONKIT_OK && strbuf_append(&b, "\n", 1) != 0) rc = ak_err_nomem(err);
        if (rc == ANONKIT_OK && (b.len >= MEMTABLE_CSV_BLOCK || r + 1 == t->nrows)) {
            rc = csv_write_raw(w, b.data, b.len, err);
            b.len = 0;
        }
    }
    strbuf_free(&b);
    if (rc == ANONKIT_OK) rc = csv_writer_flush(w, err);
    csv_writer_free(w);
    return rc;
}

/* Whether s[0..len) is an int64 written plainly: an optional minus, digits, no leading zero. */
int memtable_plain_int64(const char *s, size_t len, int64_t *v)
{
    size_t i = s[0] == '-';
    if (i == len || len > 20 || (s[i] == '0' && len > i + 1) || (i && s[i] == '0')) return 0;
    uint64_t u = 0;
    for (size_t j = i; j < len; j++) {
        if (s[j] < '0' || s[j] > '9') return 0;
        u = u * 10 + (uint64_t)(s[j] - '0');
    }
    if (len - i <= 18) { /* no overflow below 10^18 */
        *v = i ? -(int64_t)u : (int64_t)u;
        return 1;
    }
    char buf[24];
    memcpy(buf, s, len);
    buf[len] = '\0';
    errno = 0;
    *v = (int64_t)strtoll(buf, NULL, 10);
    return errno == 0;
}

/* Whether s[0..len) is a decimal as %g writes one without exponent: an
 * optional minus, digits without a superfluous leading zero, and a fraction
 * (if any) of digits not ending in 0. */
static int plain_decimal(const char *s, size_t len)
{
    size_t i = s[0] == '-', int_digits = 0;
    if (i == len) return 0;
    if (s[i] == '0' && i + 1 < len && s[i + 1] != '.') return 0;
    for (; i < len && s[i] >= '0' && s[i] <= '9'; i++) int_digits++;
    if (!int_digits) return 0;
    if (i == len) return 1;
    if (s[i] != '.' || i + 1 == len || s[len - 1] == '0') return 0;
    for (i++; i < len; i++)
        if (s[i] < '0' || s[i] > '9') return 0;
    return 1;
}

/* Whether s[0..len) is a finite double whose shortest text (ak_format_double:
 * the first of %.15g, %.16g, %.17g that reads back) is s itself. One
 * formatting per value: the precision is the count of s's significant digits. */
int memtable_plain_double(const char *s, size_t len, double *v)
{
    char buf[40], back[40];
    if (len >= 32) return 0;
    memcpy(buf, s, len);
    buf[len] = '\0';
    int digits = 0, leading = 1;
    for (size_t i = 0; i < len && buf[i] != 'e' && buf[i] != 'E'; i++) {
        if (buf[i] < '0' || buf[i] > '9') continue;
        if (buf[i] == '0' && leading) continue;
        leading = 0;
        digits++;
    }
    if (digits > 17) return 0;
    char *end;
    *v = strtod(buf, &end);
    if (*end || !isfinite(*v)) return 0;
    if (*v > -1e15 && *v < 1e15 && *v == (double)(int64_t)*v) { /* integral: written as an integer */
        const int n = memtable_format_double(back, *v);
        return (size_t)n == len && !memcmp(back, s, len);
    }
    if (digits <= 15 && plain_decimal(buf, len) && fabs(*v) >= 1e-4 && fabs(*v) < 1e15)
        return 1; /* %.15g of the double nearest to a decimal of <= 15 digits is that decimal */
    const int p = digits < 15 ? 15 : digits;
    const int n = snprintf(back, sizeof back, "%.*g", p, *v);
    if ((size_t)n != len || memcmp(back, s, len)) return 0;
    if (p > 15) { /* the shorter text must not read back, or it would be the one written */
        snprintf(back, sizeof back, "%.*g", p - 1, *v);
        if (strtod(back, NULL) == *v) return 0;
    }
    return 1;
}

/* Turns text column c into int64 or double when every present value reads
 * back as its own text in that kind. */
int memtable_col_narrow(memcol *c, uint64_t rows)
{
    int can_int = 1, can_double = 1, present = 0;
    for (uint64_t r = 0; r < rows && (can_int || can_double); r++) {
        if (c->missing && c->missing[r]) continue;
        present = 1;
        const char *s = c->bytes + c->off[r];
        const size_t len = (size_t)(c->off[r + 1] - c->off[r]);
        int64_t iv;
        double dv;
        if (can_int && !memtable_plain_int64(s, len, &iv)) can_int = 0;
        if (!can_int && can_double && !memtable_plain_double(s, len, &dv)) can_double = 0;
    }
    if (!present || (!can_int && !can_double)) return 0;
    const size_t n = rows ? (size_t)rows : 1;
    int64_t *iv = can_int ? calloc(n, sizeof *iv) : NULL;
    double *dv = can_int ? NULL : calloc(n, sizeof *dv);
    if (!iv && !dv) return -1;
    for (uint64_t r = 0; r < rows; r++) {
        if (c->missing && c->missing[r]) continue;
        const char *s = c->bytes + c->off[r];
        const size_t len = (size_t)(c->off[r + 1] - c->off[r]);
        if (iv) (void)memtable_plain_int64(s, len, &iv[r]);
        else (void)memtable_plain_double(s, len, &dv[r]);
    }
    free(c->off);
    free(c->bytes);
    c->off = NULL;
    c->bytes = NULL;
    c->bytes_cap = 0;
    c->i = iv;
    c->d = dv;
    c->kind = iv ? ANONKIT_COLUMN_INT64 : ANONKIT_COLUMN_DOUBLE;
    c->cap = rows;
    return 0;
}

/* Puts text s[0..len) as row r of text column c (an empty text: missing),
 * growing its arrays; the one step of take_row and of the table writer. */
static int put_cell(memcol *c, uint64_t r, const char *s, size_t len, ak_error *err)
{
    if (r >= c->cap && col_reserve(c, r + 1) != 0) return ak_err_nomem(err);
    const int64_t at = c->off[r];
    if (!len) {
        if (!c->missing && !(c->missing = calloc((size_t)c->cap, 1))) return ak_err_nomem(err);
        c->missing[r] = 1;
        c->off[r + 1] = at;
        return ANONKIT_OK;
    }
    if (c->missing) c->missing[r] = 0;
    if ((size_t)at + len > c->bytes_cap) {
        size_t cap = c->bytes_cap ? c->bytes_cap : 4096;
        while (cap < (size_t)at + len) cap *= 2;
        char *grown = realloc(c->bytes, cap + CSV_FIELD_READABLE);
        if (!grown) return ak_err_nomem(err);
        c->bytes = grown;
        c->bytes_cap = cap;
    }
    memcpy(c->bytes + at, s, len);
    c->off[r + 1] = at + (int64_t)len;
    return ANONKIT_OK;
}

/* sink_rows' callback: one published row into the text columns (every
 * column is text while the rows come; memtable_col_narrow turns them
 * afterwards): an empty field is missing. */
static int take_row(void *ctx, const source_row *row, ak_error *err)
{
    anonkit_table *t = ctx;
    for (uint32_t ci = 0; ci < row->count; ci++)
        AK_CHECK(put_cell(&t->cols[ci], t->nrows, row->text[ci], row->len[ci], err));
    t->nrows++;
    return ANONKIT_OK;
}

int memtable_writer_field(anonkit_table *t, int header, uint32_t col, const char *data, size_t len, ak_error *err)
{
    if (header) {
        char *name = strndup(data, len);
        int st = ANONKIT_OK;
        if (!name) return ak_err_nomem(err);
        const memcol *c = add_column(t, name, ANONKIT_COLUMN_TEXT, 0, &st);
        free(name);
        return c ? ANONKIT_OK : ak_err_set(err, st, NULL, 0, 0, "%s", t->errmsg);
    }
    if (col >= t->ncols)
        return ak_err_set(err, ANONKIT_E_INTERNAL, NULL, 0, 0, "a published row has more fields than the header");
    return put_cell(&t->cols[col], t->nrows, data, len, err);
}

int memtable_writer_row_end(anonkit_table *t, int header, uint32_t count, ak_error *err)
{
    if (header) return ANONKIT_OK;
    if (count != t->ncols)
        return ak_err_set(err, ANONKIT_E_INTERNAL, NULL, 0, 0, "a published row of %u fields where the header has %u",
                          count, t->ncols);
    t->nrows++;
    return ANONKIT_OK;
}

int memtable_writer_finish(anonkit_table *t, ak_error *err)
{
    for (uint32_t c = 0; c < t->ncols; c++)
        if (memtable_col_narrow(&t->cols[c], t->nrows) != 0) return ak_err_nomem(err);
    return ANONKIT_OK;
}

int memtable_from_csv(anonkit_table **out, FILE *csv, char delimiter, const char *shown, ak_error *err)
{
    *out = NULL;
    if (fflush(csv) != 0 || fseeko(csv, 0, SEEK_SET) != 0)
        return ak_err_set(err, ANONKIT_E_IO, shown, 0, 0, "cannot read the finished output back: %s", strerror(errno));
    anonkit_table *t = anonkit_table_create();
    if (!t) return ak_err_nomem(err);
    csv_reader *r = NULL;
    int rc = csv_reader_open_stream(&r, csv, shown, delimiter, err);
    csv_record rec;
    if (rc == ANONKIT_OK) { /* the header: the columns */
        rc = csv_read(r, &rec, err);
        if (rc == 0) rc = ak_err_set(err, ANONKIT_E_INTERNAL, shown, 0, 0, "the output has no header");
        else if (rc > 0) rc = ANONKIT_OK;
    }
    for (uint32_t c = 0; rc == ANONKIT_OK && c < rec.count; c++) {
        char *name = strndup(rec.fields[c].data, rec.fields[c].len);
        int st_rc = ANONKIT_OK;
        if (!name) rc = ak_err_nomem(err);
        else if (!add_column(t, name, ANONKIT_COLUMN_TEXT, 0, &st_rc))
            rc = ak_err_set(err, st_rc, shown, 0, 0, "%s", t->errmsg);
        free(name);
    }
    csv_reader_free(r);
    if (rc == ANONKIT_OK) rc = sink_rows(csv, delimiter, shown, take_row, t, err);
    for (uint32_t c = 0; rc == ANONKIT_OK && c < t->ncols; c++)
        if (memtable_col_narrow(&t->cols[c], t->nrows) != 0) rc = ak_err_nomem(err);
    if (rc < 0) {
        anonkit_table_free(t);
        return rc;
    }
    *out = t;
    return ANONKIT_OK;
}

/* ---- The "table:" sink ---- */

typedef struct table_sink {
    sink base;
    anonkit_table *held;  /* loaded, not yet handed over */
    anonkit_table **dest;
} table_sink;

static int table_prepare(sink *s, FILE *csv, ak_error *err)
{
    table_sink *ts = (table_sink *)s;
    anonkit_table_free(ts->held);
    ts->held = NULL;
    return memtable_from_csv(&ts->held, csv, s->delimiter, s->shown, err);
}

static int table_commit(sink *s, ak_error *err)
{
    (void)err;
    table_sink *ts = (table_sink *)s;
    anonkit_table_free(*ts->dest);
    *ts->dest = ts->held;
    ts->held = NULL;
    return ANONKIT_OK;
}

static void table_free_sink(sink *s)
{
    table_sink *ts = (table_sink *)s;
    anonkit_table_free(ts->held);
    free(s->shown);
    free(ts);
}

static const sink_ops table_sink_ops = {table_prepare, table_commit, table_free_sink};

int sink_open_table(sink **out, const char *name, const source_options *o, ak_error *err)
{
    *out = NULL;
    if (!o || !o->table_out)
        return ak_err_set(err, ANONKIT_E_USAGE, name, 0, 0,
                          "a table in memory is an output of the library only (anonkit_job_set_output_table)");
    table_sink *ts = calloc(1, sizeof *ts);
    if (!ts || !(ts->base.shown = strdup("the output table"))) {
        free(ts);
        return ak_err_nomem(err);
    }
    ts->base.ops = &table_sink_ops;
    ts->base.delimiter = o->delimiter ? o->delimiter : ',';
    ts->dest = o->table_out;
    *out = &ts->base;
    return ANONKIT_OK;
}

int memtable_copy(anonkit_table **out, const anonkit_table *src)
{
    *out = NULL;
    anonkit_table *t = anonkit_table_create();
    if (!t) return ANONKIT_E_NOMEM;
    const uint64_t n = src->nrows;
    int rc = ANONKIT_OK;
    for (uint32_t i = 0; i < src->ncols && rc == ANONKIT_OK; i++) {
        const memcol *c = &src->cols[i];
        if (!c->name) continue; /* a slot memtable_move_column emptied */
        if (c->kind == ANONKIT_COLUMN_DOUBLE) rc = anonkit_table_add_double(t, c->name, c->d, c->missing, n);
        else if (c->kind == ANONKIT_COLUMN_INT64) rc = anonkit_table_add_int64(t, c->name, c->i, c->missing, n);
        else if (c->codes) rc = anonkit_table_add_text_codes(t, c->name, c->codes, n, c->off, c->bytes, c->ndict);
        else rc = anonkit_table_add_text(t, c->name, c->off, c->bytes, c->missing, n);
    }
    if (rc == ANONKIT_OK && !src->ncols) t->nrows = n;
    if (rc < 0) {
        anonkit_table_free(t);
        return rc;
    }
    *out = t;
    return ANONKIT_OK;
}
