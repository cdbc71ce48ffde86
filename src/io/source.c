/* source.c — the one source interface (see source.h): picking a reader or a
 * sink by name, masking passwords, the CSV reader behind the interface,
 * spooling a non-CSV source into CSV form for the commands, and what the
 * sinks share (one pass that types a CSV output's columns, its rows). */
#define _GNU_SOURCE
#include "io/source.h"

#include <ctype.h>
#include <stdarg.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "io/csv.h"
#include "io/memtable.h"

/* Whether name ends with the extension ext (with its dot), ignoring case. */
static int ends_with(const char *name, const char *ext)
{
    const size_t n = strlen(name), e = strlen(ext);
    return n > e && strcasecmp(name + n - e, ext) == 0;
}

source_kind source_kind_of(const char *name)
{
    if (!name) return SOURCE_CSV;
    if (!strncmp(name, "postgresql://", 13) || !strncmp(name, "postgres://", 11)) return SOURCE_POSTGRES;
    if (!strncmp(name, "sqlite:", 7)) return SOURCE_SQLITE;
    if (!strcmp(name, "table:")) return SOURCE_TABLE;
    static const char *const exts[] = {".sav", ".zsav", ".por", ".dta", ".sas7bdat", ".xpt"};
    for (size_t i = 0; i < sizeof exts / sizeof *exts; i++)
        if (ends_with(name, exts[i])) return SOURCE_READSTAT;
    return SOURCE_CSV;
}

/* Appends src[0..n) to the growing text *out of length *len (room for it is made by the caller). */
static void put(char *out, size_t *len, const char *src, size_t n)
{
    memcpy(out + *len, src, n);
    *len += n;
}

char *source_display(const char *name)
{
    if (!name) return NULL;
    const size_t n = strlen(name);
    char *out = malloc(n + 8 * (n + 1) + 1); /* each masked part may grow to "***" */
    if (!out) return NULL;
    size_t len = 0;
    if (source_kind_of(name) != SOURCE_POSTGRES) {
        memcpy(out, name, n + 1);
        return out;
    }
    /* user:PASSWORD@ in the authority */
    const char *auth = strstr(name, "://") + 3;
    const char *auth_end = auth + strcspn(auth, "/?#");
    const char *at = NULL;
    for (const char *p = auth; p < auth_end; p++)
        if (*p == '@') at = p;
    const char *colon = NULL;
    for (const char *p = auth; at && p < at; p++)
        if (*p == ':') {
            colon = p;
            break;
        }
    const char *p = name;
    if (colon) {
        put(out, &len, name, (size_t)(colon + 1 - name));
        put(out, &len, "***", 3);
        p = at;
    }
    /* password=... among the parameters */
    while (*p) {
        const int starts_param = p > name && (p[-1] == '?' || p[-1] == '&');
        if (starts_param && !strncasecmp(p, "password=", 9)) {
            put(out, &len, p, 9);
            put(out, &len, "***", 3);
            p += 9;
            p += strcspn(p, "&#");
            continue;
        }
        out[len++] = *p++;
    }
    out[len] = '\0';
    return out;
}

int source_uri_take(const char *name, const char *key, char **rest, char **value, ak_error *err)
{
    *rest = *value = NULL;
    const size_t n = strlen(name), klen = strlen(key);
    char *r = malloc(n + 1);
    if (!r) return ak_err_nomem(err);
    const char *q = strchr(name, '?');
    if (!q) {
        memcpy(r, name, n + 1);
        *rest = r;
        return ANONKIT_OK;
    }
    size_t len = (size_t)(q - name);
    memcpy(r, name, len);
    const char *p = q + 1;
    int first = 1;
    while (*p) {
        const size_t plen = strcspn(p, "&");
        if (plen > klen && !strncmp(p, key, klen) && p[klen] == '=') {
            free(*value);
            if (!(*value = strndup(p + klen + 1, plen - klen - 1))) {
                free(r);
                return ak_err_nomem(err);
            }
        } else if (plen) {
            r[len++] = first ? '?' : '&';
            memcpy(r + len, p, plen);
            len += plen;
            first = 0;
        }
        p += plen + (p[plen] == '&');
    }
    r[len] = '\0';
    /* percent-decoding of the value (%2E and the like) */
    if (*value) {
        char *v = *value, *w = *value;
        for (; *v; v++) {
            if (v[0] == '%' && isxdigit((unsigned char)v[1]) && isxdigit((unsigned char)v[2])) {
                const char hex[3] = {v[1], v[2], 0};
                *w++ = (char)strtol(hex, NULL, 16);
                v += 2;
            } else {
                *w++ = *v;
            }
        }
        *w = '\0';
    }
    *rest = r;
    return ANONKIT_OK;
}

void source_columns_free(source_column *cols, uint32_t n)
{
    for (uint32_t i = 0; cols && i < n; i++) {
        free(cols[i].name);
        free(cols[i].label);
        for (size_t j = 0; j < cols[i].nlabels; j++) free(cols[i].labels[j].label);
        free(cols[i].labels);
    }
    free(cols);
}

int source_open(source **out, const char *name, const source_options *o, ak_error *err)
{
    *out = NULL;
    switch (source_kind_of(name)) {
    case SOURCE_POSTGRES: return source_open_pg(out, name, o, err);
    case SOURCE_SQLITE: return source_open_sqlite(out, name, o, err);
    case SOURCE_READSTAT: return source_open_readstat(out, name, o, err);
    case SOURCE_TABLE:
        return ak_err_set(err, ANONKIT_E_USAGE, name, 0, 0, "a table in memory is given with anonkit_job_set_input_table");
    case SOURCE_CSV: break;
    }
    return source_open_csv(out, name, o, err);
}

void source_close(source *s)
{
    if (s) s->ops->close(s);
}

/* ---- CSV behind the interface ---- */

typedef struct csv_source {
    source base;
    char *path;
    char delimiter;
} csv_source;

/* Hands every data record of the CSV file to fn (the header is the columns). */
static int csv_scan(source *s, source_row_fn fn, void *ctx, ak_error *err)
{
    csv_source *c = (csv_source *)s;
    return sink_rows_path(c->path, c->delimiter, s->shown, fn, ctx, err);
}

static void csv_close(source *s)
{
    csv_source *c = (csv_source *)s;
    source_columns_free(s->cols, s->ncols);
    free(s->shown);
    free(c->path);
    free(c);
}

static const source_ops csv_ops = {csv_scan, csv_close};

int source_open_csv(source **out, const char *name, const source_options *o, ak_error *err)
{
    *out = NULL;
    csv_source *c = calloc(1, sizeof *c);
    if (!c) return ak_err_nomem(err);
    c->base.ops = &csv_ops;
    c->base.kind = SOURCE_CSV;
    c->delimiter = o && o->delimiter ? o->delimiter : ',';
    csv_reader *r = NULL;
    int rc = ANONKIT_OK;
    if (!(c->path = strdup(name)) || !(c->base.shown = strdup(name))) rc = ak_err_nomem(err);
    if (rc == ANONKIT_OK) rc = csv_reader_open(&r, name, c->delimiter, err);
    csv_record rec;
    if (rc == ANONKIT_OK) {
        rc = csv_read(r, &rec, err);
        if (rc == 0) rc = ak_err_set(err, ANONKIT_E_INPUT, name, 1, 0, "empty file: no header");
        else if (rc > 0) rc = ANONKIT_OK;
    }
    if (rc == ANONKIT_OK && !(c->base.cols = calloc(rec.count ? rec.count : 1, sizeof *c->base.cols)))
        rc = ak_err_nomem(err);
    for (uint32_t i = 0; rc == ANONKIT_OK && i < rec.count; i++) {
        c->base.ncols = i + 1;
        if (!(c->base.cols[i].name = strndup(rec.fields[i].data, rec.fields[i].len))) rc = ak_err_nomem(err);
    }
    csv_reader_free(r);
    if (rc < 0) {
        csv_close(&c->base);
        return rc;
    }
    *out = &c->base;
    return ANONKIT_OK;
}

/* ---- Spooling a source for the commands ---- */

/* Writes one row to the spool's CSV writer. */
static int spool_row(void *ctx, const source_row *row, ak_error *err)
{
    csv_writer *w = ctx;
    for (uint32_t i = 0; i < row->count; i++)
        AK_CHECK(csv_write_field(w, row->text[i] ? row->text[i] : "", row->text[i] ? row->len[i] : 0, err));
    return csv_write_end(w, err);
}

int source_input_open(source_input *in, const char *name, const source_options *o, int spool_stdin, ak_error *err)
{
    memset(in, 0, sizeof *in);
    const int is_stdin = !strcmp(name, "-");
    if (!(in->shown = is_stdin ? strdup("stdin") : source_display(name))) return ak_err_nomem(err);
    in->path = name;
    if (o && o->table_in && source_kind_of(name) == SOURCE_TABLE) {
        free(in->shown);
        if (!(in->shown = strdup("the input table"))) return ak_err_nomem(err);
        in->table = o->table_in;
        return ANONKIT_OK;
    }
    if (is_stdin) {
        if (!spool_stdin) return ANONKIT_OK;
        AK_CHECK(spool_stream_in(&in->sp, stdin, o ? o->tmpdir : NULL, err));
        in->path = in->sp.path;
        return ANONKIT_OK;
    }
    if (source_kind_of(name) == SOURCE_CSV) return ANONKIT_OK;
    const char delimiter = o && o->delimiter ? o->delimiter : ',';
    source *s = NULL;
    FILE *f = NULL;
    csv_writer *w = NULL;
    int rc = source_open(&s, name, o, err);
    if (rc == ANONKIT_OK) rc = spool_open_empty(&in->sp, o ? o->tmpdir : NULL, err);
    if (rc == ANONKIT_OK) {
        const int fd = dup(in->sp.fd);
        if (fd < 0 || !(f = fdopen(fd, "w"))) {
            rc = ak_err_set(err, ANONKIT_E_IO, in->shown, 0, 0, "cannot write its private copy: %s", strerror(errno));
            if (fd >= 0) close(fd);
        }
    }
    if (rc == ANONKIT_OK) rc = csv_writer_open_stream(&w, f, "the private copy", delimiter, err);
    for (uint32_t i = 0; rc == ANONKIT_OK && i < s->ncols; i++)
        rc = csv_write_field(w, s->cols[i].name, strlen(s->cols[i].name), err);
    if (rc == ANONKIT_OK) rc = csv_write_end(w, err);
    if (rc == ANONKIT_OK) rc = source_scan(s, spool_row, w, err);
    if (rc == ANONKIT_OK) rc = csv_writer_flush(w, err);
    csv_writer_free(w);
    if (f && fclose(f) != 0 && rc == ANONKIT_OK)
        rc = ak_err_set(err, ANONKIT_E_IO, in->shown, 0, 0, "cannot write its private copy: %s", strerror(errno));
    if (rc == ANONKIT_OK) {
        in->path = in->sp.path;
        in->cols = s->cols; /* kept for a sink that keeps labels */
        in->ncols = s->ncols;
        s->cols = NULL;
        s->ncols = 0;
    }
    source_close(s);
    if (rc < 0) source_input_close(in);
    return rc;
}

void source_input_close(source_input *in)
{
    spool_remove(&in->sp);
    free(in->shown);
    source_columns_free(in->cols, in->ncols);
    in->shown = NULL;
    in->cols = NULL;
    in->ncols = 0;
}

/* ---- Sinks ---- */

int sink_open(sink **out, const char *name, const source_options *o, ak_error *err)
{
    *out = NULL;
    switch (source_kind_of(name)) {
    case SOURCE_POSTGRES: return sink_open_pg(out, name, o, err);
    case SOURCE_SQLITE: return sink_open_sqlite(out, name, o, err);
    case SOURCE_READSTAT: return sink_open_readstat(out, name, o, err);
    case SOURCE_TABLE: return sink_open_table(out, name, o, err);
    case SOURCE_CSV: break;
    }
    return ak_err_set(err, ANONKIT_E_INTERNAL, name, 0, 0, "not a sink");
}

void sink_set_origin(sink *s, const source_column *cols, uint32_t ncols)
{
    if (!s) return;
    s->origin = cols;
    s->norigin = ncols;
}

int sink_prepare(sink *s, FILE *csv, ak_error *err) { return s->ops->prepare(s, csv, err); }
int sink_commit(sink *s, ak_error *err) { return s->ops->commit(s, err); }
void sink_free(sink *s)
{
    if (s) s->ops->free(s);
}

const source_column *sink_origin(const sink *s, const char *name)
{
    for (uint32_t i = 0; i < s->norigin; i++)
        if (!strcmp(s->origin[i].name, name)) return &s->origin[i];
    return NULL;
}

/* Hands every data record of reader r (after its header) to fn as a row. */
static int rows_of(csv_reader *r, const char *shown, source_row_fn fn, void *ctx, ak_error *err)
{
    csv_record rec;
    int rc = csv_read(r, &rec, err);
    if (rc <= 0) return rc < 0 ? rc : ak_err_set(err, ANONKIT_E_INPUT, shown, 1, 0, "empty: no header");
    const uint32_t ncols = rec.count;
    const char **text = calloc(ncols, sizeof *text);
    size_t *len = calloc(ncols, sizeof *len);
    char *nul = calloc(1, 1); /* an empty field that is not missing */
    if (!text || !len || !nul) rc = ak_err_nomem(err);
    else rc = ANONKIT_OK;
    while (rc == ANONKIT_OK && (rc = csv_read(r, &rec, err)) > 0) {
        if (rec.count != ncols) {
            rc = ak_err_set(err, ANONKIT_E_INPUT, shown, rec.line, 0, "%u fields where the header has %u",
                            rec.count, ncols);
            break;
        }
        for (uint32_t i = 0; i < ncols; i++) {
            text[i] = rec.fields[i].len ? rec.fields[i].data : nul;
            len[i] = rec.fields[i].len;
        }
        const source_row row = {text, len, ncols};
        rc = fn(ctx, &row, err);
    }
    free(text);
    free(len);
    free(nul);
    return rc < 0 ? rc : ANONKIT_OK;
}

int sink_rows_path(const char *path, char delimiter, const char *shown, source_row_fn fn, void *ctx, ak_error *err)
{
    csv_reader *r = NULL;
    AK_CHECK(csv_reader_open(&r, path, delimiter, err));
    const int rc = rows_of(r, shown, fn, ctx, err);
    csv_reader_free(r);
    return rc;
}

int sink_rows(FILE *csv, char delimiter, const char *shown, source_row_fn fn, void *ctx, ak_error *err)
{
    if (fflush(csv) != 0 || fseeko(csv, 0, SEEK_SET) != 0)
        return ak_err_set(err, ANONKIT_E_IO, shown, 0, 0, "cannot read the finished output back: %s",
                          strerror(errno));
    csv_reader *r = NULL;
    AK_CHECK(csv_reader_open_stream(&r, csv, shown, delimiter, err));
    const int rc = rows_of(r, shown, fn, ctx, err);
    csv_reader_free(r);
    return rc;
}

/* Whether text[0..len) is an integer within int64 written plainly (digits, an optional minus). */
static int plain_integer(const char *text, size_t len)
{
    if (len > 20) return 0;
    char buf[21];
    memcpy(buf, text, len);
    buf[len] = '\0';
    size_t i = buf[0] == '-';
    if (i == len || (buf[i] == '0' && len > 1)) return 0; /* no leading zero, no -0 */
    for (; i < len; i++)
        if (!isdigit((unsigned char)buf[i])) return 0;
    errno = 0;
    (void)strtoll(buf, NULL, 10);
    return errno == 0;
}

/* Whether text[0..len) is a decimal number written plainly: an optional
 * minus, digits without a superfluous leading zero, one point between digits
 * (so that a database or file that stores it gives the same text back). */
static int plain_real(const char *text, size_t len)
{
    size_t i = text[0] == '-', digits = 0, point = 0;
    if (i == len || (text[i] == '0' && i + 1 < len && text[i + 1] != '.')) return 0;
    for (; i < len; i++) {
        if (isdigit((unsigned char)text[i])) {
            digits++;
        } else if (text[i] == '.' && !point && digits && i + 1 < len) {
            point = 1;
        } else {
            return 0;
        }
    }
    return digits > 0 && digits <= 15;
}

/* One row of sink_table_scan. */
static int type_row(void *ctx, const source_row *row, ak_error *err)
{
    (void)err;
    sink_table *t = ctx;
    t->rows++;
    for (uint32_t i = 0; i < row->count; i++) {
        const size_t len = row->len[i];
        if (len > t->width[i]) t->width[i] = len;
        if (!len || t->types[i] == SINK_TEXT) continue;
        if (t->types[i] == SINK_INTEGER && plain_integer(row->text[i], len)) continue;
        t->types[i] = plain_real(row->text[i], len) ? SINK_REAL : SINK_TEXT;
    }
    return ANONKIT_OK;
}

int sink_table_scan(sink_table *t, FILE *csv, char delimiter, const char *shown, ak_error *err)
{
    memset(t, 0, sizeof *t);
    if (fflush(csv) != 0 || fseeko(csv, 0, SEEK_SET) != 0)
        return ak_err_set(err, ANONKIT_E_IO, shown, 0, 0, "cannot read the finished output back: %s",
                          strerror(errno));
    csv_reader *r = NULL;
    AK_CHECK(csv_reader_open_stream(&r, csv, shown, delimiter, err));
    csv_record rec;
    int rc = csv_read(r, &rec, err);
    if (rc == 0) rc = ak_err_set(err, ANONKIT_E_INTERNAL, shown, 0, 0, "the output has no header");
    if (rc > 0) {
        rc = ANONKIT_OK;
        t->ncols = rec.count;
        if (!(t->names = calloc(rec.count, sizeof *t->names)) || !(t->types = calloc(rec.count, sizeof *t->types)) ||
            !(t->width = calloc(rec.count, sizeof *t->width)))
            rc = ak_err_nomem(err);
        for (uint32_t i = 0; rc == ANONKIT_OK && i < rec.count; i++)
            if (!(t->names[i] = strndup(rec.fields[i].data, rec.fields[i].len))) rc = ak_err_nomem(err);
    }
    csv_reader_free(r);
    if (rc == ANONKIT_OK) rc = sink_rows(csv, delimiter, shown, type_row, t, err);
    if (rc < 0) sink_table_free(t);
    return rc;
}

void sink_table_free(sink_table *t)
{
    for (uint32_t i = 0; t->names && i < t->ncols; i++) free(t->names[i]);
    free(t->names);
    free(t->types);
    free(t->width);
    memset(t, 0, sizeof *t);
}

int sink_printf(strbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    const int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || strbuf_reserve(b, (size_t)n + 1) != 0) return -1;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
    return 0;
}
