/* source_pg.c — PostgreSQL tables as sources and sinks, through libpq
 * (docs/sources.md). Connection settings follow libpq's conventions: the URI
 * (postgresql:// or postgres://, anonkit's own parameter ?table= taken out),
 * the PG* variables and ~/.pgpass. Reading: one REPEATABLE READ, READ ONLY
 * transaction, held until the source is closed, and COPY (query) TO STDOUT
 * streamed a row at a time, so every scan sees one snapshot and no scan
 * holds the table. Writing: in one transaction, a new table of a temporary
 * name is created and filled with COPY ... FROM STDIN, an existing target
 * dropped (only with --replace), the new one renamed to the target; only
 * COMMIT makes it visible, and a run that ends any other way (an error, a
 * signal, SIGKILL: the server rolls back a transaction whose connection
 * drops) leaves nothing. libpq is loaded only here, when a source or sink is
 * opened (io/pg_load.h), so that no other run pays for loading it. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/strbuf.h"
#include "io/pg_load.h"
#include "io/source.h"

/* Copies libpq's message without its final line end into a new error. */
static int pg_fail(ak_error *err, const char *shown, const char *what, const char *msg)
{
    char text[1024];
    snprintf(text, sizeof text, "%s", msg ? msg : "");
    text[strcspn(text, "\n")] = '\0'; /* the first line: the message, not the query's context */
    char *w = text;                      /* runs of spaces as one ("ERROR:  x") */
    for (const char *p = text; *p; p++)
        if (*p != ' ' || w == text || w[-1] != ' ') *w++ = *p;
    while (w > text && w[-1] == ' ') w--;
    *w = '\0';
    return ak_err_set(err, ANONKIT_E_INPUT, shown, 0, 0, "%s: %s", what, text);
}

/* Connects to the database the URI (without ?table=) names. */
static int pg_connect(const pg_api *pq, PGconn **out, const char *conninfo, const char *shown, ak_error *err)
{
    const char *const keys[] = {"dbname", "fallback_application_name", NULL};
    const char *const values[] = {conninfo, "anonkit", NULL};
    PGconn *c = pq->PQconnectdbParams(keys, values, 1);
    if (!c) return ak_err_nomem(err);
    if (pq->PQstatus(c) != CONNECTION_OK) {
        const int rc = pg_fail(err, shown, "cannot connect", pq->PQerrorMessage(c));
        pq->PQfinish(c);
        return rc;
    }
    *out = c;
    return ANONKIT_OK;
}

/* Runs a statement that returns no rows. */
static int pg_exec(const pg_api *pq, PGconn *c, const char *sql, const char *shown, const char *what, ak_error *err)
{
    PGresult *r = pq->PQexec(c, sql);
    const ExecStatusType st = pq->PQresultStatus(r);
    int rc = ANONKIT_OK;
    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) rc = pg_fail(err, shown, what, pq->PQerrorMessage(c));
    pq->PQclear(r);
    return rc;
}

/* The quoted form of a table name that may carry a schema ("s.t" -> "s"."t");
 * *last gets the quoted last part. Both malloc'd. */
static int pg_quote_name(const pg_api *pq, PGconn *c, const char *name, char **quoted, char **last, ak_error *err)
{
    *quoted = *last = NULL;
    const char *dot = strchr(name, '.');
    char *a = NULL, *b = NULL;
    if (dot) {
        a = pq->PQescapeIdentifier(c, name, (size_t)(dot - name));
        b = pq->PQescapeIdentifier(c, dot + 1, strlen(dot + 1));
    } else {
        b = pq->PQescapeIdentifier(c, name, strlen(name));
    }
    if ((dot && !a) || !b) {
        pq->PQfreemem(a);
        pq->PQfreemem(b);
        return ak_err_nomem(err);
    }
    const size_t n = (a ? strlen(a) + 1 : 0) + strlen(b) + 1;
    *quoted = malloc(n);
    *last = strdup(b);
    if (*quoted) snprintf(*quoted, n, "%s%s%s", a ? a : "", a ? "." : "", b);
    pq->PQfreemem(a);
    pq->PQfreemem(b);
    if (!*quoted || !*last) {
        free(*quoted);
        free(*last);
        *quoted = *last = NULL;
        return ak_err_nomem(err);
    }
    return ANONKIT_OK;
}

/* ---- Reading ---- */

typedef struct pg_source {
    source base;
    pg_api pq;       /* libpq, loaded on opening */
    PGconn *conn;
    char *copy;      /* COPY (query) TO STDOUT */
    char **text;     /* per column: the decoded field of the current row */
    size_t *len;
    unsigned char *null; /* per column: the field of the current row is NULL */
    strbuf row;      /* the decoded row */
} pg_source;

/* Whether a type oid is a number: int2, int4, int8, float4, float8, numeric, oid. */
static int pg_numeric_type(Oid t) { return t == 20 || t == 21 || t == 23 || t == 26 || t == 700 || t == 701 || t == 1700; }

/* Decodes one row of COPY's text format (tab-separated, \N for NULL,
 * backslash escapes) into s->text/s->len. */
static int pg_decode(pg_source *s, const char *buf, int n, ak_error *err)
{
    strbuf *out = &s->row;
    out->len = 0;
    if (strbuf_reserve(out, (size_t)n + 1) != 0) return ak_err_nomem(err);
    size_t *start = s->len; /* offsets first, pointers after */
    uint32_t col = 0;
    int null = 0;
    size_t field_start = 0;
    int i = 0;
    if (n > 0 && buf[n - 1] == '\n') n--;
    for (;;) {
        if (i == n || buf[i] == '\t') {
            if (col >= s->base.ncols)
                return ak_err_set(err, ANONKIT_E_INPUT, s->base.shown, 0, 0, "COPY gave more fields than columns");
            start[col] = field_start;
            s->null[col] = (unsigned char)null;
            col++;
            null = 0;
            if (i == n) break;
            i++;
            field_start = out->len;
            continue;
        }
        char ch = buf[i++];
        if (ch == '\\' && i < n) {
            const char e = buf[i++];
            switch (e) {
            case 'N': null = 1; continue;
            case 'b': ch = '\b'; break;
            case 'f': ch = '\f'; break;
            case 'n': ch = '\n'; break;
            case 'r': ch = '\r'; break;
            case 't': ch = '\t'; break;
            case 'v': ch = '\v'; break;
            case 'x': {
                int v = 0, k = 0;
                for (; k < 2 && i < n && strchr("0123456789abcdefABCDEF", buf[i]) && buf[i]; k++, i++)
                    v = v * 16 + (buf[i] <= '9' ? buf[i] - '0' : (buf[i] | 32) - 'a' + 10);
                ch = (char)v;
                break;
            }
            default:
                if (e >= '0' && e <= '7') {
                    int v = e - '0';
                    for (int k = 0; k < 2 && i < n && buf[i] >= '0' && buf[i] <= '7'; k++, i++) v = v * 8 + buf[i] - '0';
                    ch = (char)v;
                } else {
                    ch = e;
                }
            }
        }
        out->data[out->len++] = ch;
    }
    if (col != s->base.ncols)
        return ak_err_set(err, ANONKIT_E_INPUT, s->base.shown, 0, 0, "COPY gave %u fields for %u columns", col,
                          s->base.ncols);
    for (uint32_t k = 0; k < col; k++) {
        const size_t end = k + 1 < col ? start[k + 1] : out->len;
        const size_t off = start[k];
        s->len[k] = end - off;
        s->text[k] = s->null[k] ? NULL : out->data + off;
    }
    return ANONKIT_OK;
}

/* Streams the rows of COPY (query) TO STDOUT to fn (again on every scan: the
 * transaction's snapshot makes every scan the same). */
static int pg_scan(source *base, source_row_fn fn, void *ctx, ak_error *err)
{
    pg_source *s = (pg_source *)base;
    const pg_api *pq = &s->pq;
    PGresult *r = pq->PQexec(s->conn, s->copy);
    if (pq->PQresultStatus(r) != PGRES_COPY_OUT) {
        const int rc = pg_fail(err, base->shown, "cannot read", pq->PQerrorMessage(s->conn));
        pq->PQclear(r);
        return rc;
    }
    pq->PQclear(r);
    int rc = ANONKIT_OK;
    char *buf = NULL;
    int n;
    while ((n = pq->PQgetCopyData(s->conn, &buf, 0)) > 0) {
        if (rc == ANONKIT_OK) rc = pg_decode(s, buf, n, err);
        if (rc == ANONKIT_OK) {
            const source_row row = {(const char *const *)s->text, s->len, base->ncols};
            rc = fn(ctx, &row, err);
        }
        pq->PQfreemem(buf);
        buf = NULL;
        if (rc < 0) break;
    }
    if (rc < 0) { /* drain what the server still sends */
        while ((n = pq->PQgetCopyData(s->conn, &buf, 0)) > 0) pq->PQfreemem(buf);
    } else if (n == -2) {
        rc = pg_fail(err, base->shown, "cannot read", pq->PQerrorMessage(s->conn));
    }
    while ((r = pq->PQgetResult(s->conn))) {
        if (rc == ANONKIT_OK && pq->PQresultStatus(r) != PGRES_COMMAND_OK)
            rc = pg_fail(err, base->shown, "cannot read", pq->PQerrorMessage(s->conn));
        pq->PQclear(r);
    }
    return rc;
}

static void pg_close(source *base)
{
    pg_source *s = (pg_source *)base;
    const pg_api *pq = &s->pq;
    if (s->conn) {
        PGresult *r = pq->PQexec(s->conn, "COMMIT"); /* read only: nothing to keep */
        pq->PQclear(r);
        pq->PQfinish(s->conn);
    }
    pg_api_close(&s->pq);
    source_columns_free(base->cols, base->ncols);
    free(base->shown);
    free(s->copy);
    free(s->text);
    free(s->len);
    free(s->null);
    strbuf_free(&s->row);
    free(s);
}

static const source_ops pg_ops = {pg_scan, pg_close};

/* The SELECT of a source or sink name: --query, else every column of ?table=. */
static int pg_select(const pg_api *pq, PGconn *c, const char *table, const source_options *o, const char *shown, char **sql,
                     ak_error *err)
{
    *sql = NULL;
    if (o && o->query) return (*sql = strdup(o->query)) ? ANONKIT_OK : ak_err_nomem(err);
    if (!table)
        return ak_err_set(err, ANONKIT_E_USAGE, shown, 0, 0, "name a table (?table=NAME) or give --query");
    char *quoted, *last;
    AK_CHECK(pg_quote_name(pq, c, table, &quoted, &last, err));
    free(last);
    const size_t n = strlen(quoted) + 32;
    if ((*sql = malloc(n))) snprintf(*sql, n, "SELECT * FROM %s", quoted);
    free(quoted);
    return *sql ? ANONKIT_OK : ak_err_nomem(err);
}

int source_open_pg(source **out, const char *name, const source_options *o, ak_error *err)
{
    *out = NULL;
    pg_source *s = calloc(1, sizeof *s);
    if (!s) return ak_err_nomem(err);
    const pg_api *pq = &s->pq;
    s->base.ops = &pg_ops;
    s->base.kind = SOURCE_POSTGRES;
    char *conninfo = NULL, *table = NULL, *sql = NULL;
    PGresult *r = NULL;
    int rc = (s->base.shown = source_display(name)) ? ANONKIT_OK : ak_err_nomem(err);
    if (rc == ANONKIT_OK) rc = source_uri_take(name, "table", &conninfo, &table, err);
    if (rc == ANONKIT_OK) rc = pg_api_open(&s->pq, PG_LIBPQ_SONAME, s->base.shown, err);
    if (rc == ANONKIT_OK) rc = pg_connect(pq, &s->conn, conninfo, s->base.shown, err);
    if (rc == ANONKIT_OK)
        rc = pg_exec(pq, s->conn, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", s->base.shown, "cannot begin", err);
    if (rc == ANONKIT_OK) rc = pg_select(pq, s->conn, table, o, s->base.shown, &sql, err);
    if (rc == ANONKIT_OK) { /* the columns, without reading a row */
        r = pq->PQprepare(s->conn, "", sql, 0, NULL);
        if (pq->PQresultStatus(r) != PGRES_COMMAND_OK) rc = pg_fail(err, s->base.shown, "cannot read", pq->PQerrorMessage(s->conn));
        pq->PQclear(r);
        r = NULL;
    }
    if (rc == ANONKIT_OK) {
        r = pq->PQdescribePrepared(s->conn, "");
        if (pq->PQresultStatus(r) != PGRES_COMMAND_OK) rc = pg_fail(err, s->base.shown, "cannot read", pq->PQerrorMessage(s->conn));
    }
    if (rc == ANONKIT_OK && pq->PQnfields(r) == 0)
        rc = ak_err_set(err, ANONKIT_E_INPUT, s->base.shown, 0, 0, "the query returns no columns");
    if (rc == ANONKIT_OK) {
        const int nf = pq->PQnfields(r);
        if (!(s->base.cols = calloc((size_t)nf, sizeof *s->base.cols)) || !(s->text = calloc((size_t)nf, sizeof *s->text)) ||
            !(s->len = calloc((size_t)nf, sizeof *s->len)) || !(s->null = calloc((size_t)nf, 1)))
            rc = ak_err_nomem(err);
        for (int i = 0; rc == ANONKIT_OK && i < nf; i++) {
            s->base.ncols = (uint32_t)i + 1;
            s->base.cols[i].numeric = pg_numeric_type(pq->PQftype(r, i));
            if (!(s->base.cols[i].name = strdup(pq->PQfname(r, i)))) rc = ak_err_nomem(err);
        }
    }
    pq->PQclear(r);
    if (rc == ANONKIT_OK) {
        /* a query may end in a semicolon, which COPY (...) does not take */
        size_t n = strlen(sql);
        while (n && (sql[n - 1] == ';' || sql[n - 1] == ' ' || sql[n - 1] == '\n' || sql[n - 1] == '\t')) sql[--n] = '\0';
        const size_t cap = n + 64;
        if ((s->copy = malloc(cap))) snprintf(s->copy, cap, "COPY (%s) TO STDOUT", sql);
        else rc = ak_err_nomem(err);
    }
    free(conninfo);
    free(table);
    free(sql);
    if (rc < 0) {
        pg_close(&s->base);
        return rc;
    }
    *out = &s->base;
    return ANONKIT_OK;
}

/* ---- Writing ---- */

typedef struct pg_sink {
    sink base;
    pg_api pq;         /* libpq, loaded on opening */
    PGconn *conn;
    char *target;      /* quoted, perhaps with its schema */
    char *target_last; /* quoted last part */
    char *temp;        /* quoted name of the new table, in the target's schema */
    char *temp_last;
    int in_tx;         /* a transaction is open */
    strbuf buf;        /* rows for the next PQputCopyData */
    const sink_table *types;
} pg_sink;

/* Appends a field to the COPY text form: \N when missing, backslash escapes. */
static int pg_put_field(strbuf *b, const char *text, size_t len, int null)
{
    if (null) return strbuf_append(b, "\\N", 2);
    if (strbuf_reserve(b, 2 * len) != 0) return -1;
    for (size_t i = 0; i < len; i++) {
        const char ch = text[i];
        const char *esc = ch == '\\' ? "\\\\" : ch == '\t' ? "\\t" : ch == '\n' ? "\\n" : ch == '\r' ? "\\r" : NULL;
        if (esc) {
            b->data[b->len++] = esc[0];
            b->data[b->len++] = esc[1];
        } else {
            b->data[b->len++] = ch;
        }
    }
    return 0;
}

/* One row of the finished output into the COPY; an empty field of a number
 * column is NULL. */
static int pg_put_row(void *ctx, const source_row *row, ak_error *err)
{
    pg_sink *s = ctx;
    const pg_api *pq = &s->pq;
    for (uint32_t i = 0; i < row->count; i++) {
        const int null = !row->text[i] || (!row->len[i] && s->types->types[i] != SINK_TEXT);
        if ((i && strbuf_append(&s->buf, "\t", 1) != 0) || pg_put_field(&s->buf, row->text[i], row->len[i], null) != 0)
            return ak_err_nomem(err);
    }
    if (strbuf_append(&s->buf, "\n", 1) != 0) return ak_err_nomem(err);
    if (s->buf.len >= (1u << 16)) {
        if (pq->PQputCopyData(s->conn, s->buf.data, (int)s->buf.len) != 1)
            return pg_fail(err, s->base.shown, "cannot write", pq->PQerrorMessage(s->conn));
        s->buf.len = 0;
    }
    return ANONKIT_OK;
}

/* Creates the new table, fills it, replaces the target: all but COMMIT. */
static int pg_prepare(sink *base, FILE *csv, ak_error *err)
{
    pg_sink *s = (pg_sink *)base;
    const pg_api *pq = &s->pq;
    sink_table t;
    AK_CHECK(sink_table_scan(&t, csv, base->delimiter, base->shown, err));
    s->types = &t;
    strbuf sql = {0};
    int rc = pg_exec(pq, s->conn, "BEGIN", base->shown, "cannot begin", err);
    s->in_tx = rc == ANONKIT_OK;
    if (rc == ANONKIT_OK && (sink_printf(&sql, "CREATE TABLE %s (", s->temp) != 0)) rc = ak_err_nomem(err);
    for (uint32_t i = 0; rc == ANONKIT_OK && i < t.ncols; i++) {
        char *col = pq->PQescapeIdentifier(s->conn, t.names[i], strlen(t.names[i]));
        const char *type = t.types[i] == SINK_INTEGER ? "bigint" : t.types[i] == SINK_REAL ? "numeric" : "text";
        if (!col || sink_printf(&sql, "%s%s %s", i ? ", " : "", col, type) != 0) rc = ak_err_nomem(err);
        pq->PQfreemem(col);
    }
    if (rc == ANONKIT_OK && sink_printf(&sql, ")") != 0) rc = ak_err_nomem(err);
    if (rc == ANONKIT_OK) rc = pg_exec(pq, s->conn, sql.data, base->shown, "cannot create the table", err);
    if (rc == ANONKIT_OK) {
        sql.len = 0;
        if (sink_printf(&sql, "COPY %s FROM STDIN", s->temp) != 0) rc = ak_err_nomem(err);
    }
    if (rc == ANONKIT_OK) {
        PGresult *r = pq->PQexec(s->conn, sql.data);
        if (pq->PQresultStatus(r) != PGRES_COPY_IN) rc = pg_fail(err, base->shown, "cannot write", pq->PQerrorMessage(s->conn));
        pq->PQclear(r);
        if (rc == ANONKIT_OK) {
            rc = sink_rows(csv, base->delimiter, base->shown, pg_put_row, s, err);
            if (rc == ANONKIT_OK && s->buf.len && pq->PQputCopyData(s->conn, s->buf.data, (int)s->buf.len) != 1)
                rc = pg_fail(err, base->shown, "cannot write", pq->PQerrorMessage(s->conn));
            if (pq->PQputCopyEnd(s->conn, rc == ANONKIT_OK ? NULL : "anonkit failed") != 1 && rc == ANONKIT_OK)
                rc = pg_fail(err, base->shown, "cannot write", pq->PQerrorMessage(s->conn));
            while ((r = pq->PQgetResult(s->conn))) {
                if (rc == ANONKIT_OK && pq->PQresultStatus(r) != PGRES_COMMAND_OK)
                    rc = pg_fail(err, base->shown, "cannot write", pq->PQerrorMessage(s->conn));
                pq->PQclear(r);
            }
        }
    }
    if (rc == ANONKIT_OK && base->replace) {
        sql.len = 0;
        if (sink_printf(&sql, "DROP TABLE IF EXISTS %s", s->target) != 0) rc = ak_err_nomem(err);
        else rc = pg_exec(pq, s->conn, sql.data, base->shown, "cannot replace the table", err);
    }
    if (rc == ANONKIT_OK) {
        sql.len = 0;
        if (sink_printf(&sql, "ALTER TABLE %s RENAME TO %s", s->temp, s->target_last) != 0) rc = ak_err_nomem(err);
        else rc = pg_exec(pq, s->conn, sql.data, base->shown, "cannot rename the new table into place", err);
    }
    strbuf_free(&sql);
    s->types = NULL;
    sink_table_free(&t);
    return rc;
}

static int pg_commit(sink *base, ak_error *err)
{
    pg_sink *s = (pg_sink *)base;
    const pg_api *pq = &s->pq;
    const int rc = pg_exec(pq, s->conn, "COMMIT", base->shown, "cannot commit", err);
    s->in_tx = 0;
    return rc;
}

static void pg_sink_free(sink *base)
{
    pg_sink *s = (pg_sink *)base;
    const pg_api *pq = &s->pq;
    if (s->conn) {
        if (s->in_tx) pq->PQclear(pq->PQexec(s->conn, "ROLLBACK"));
        pq->PQfinish(s->conn);
    }
    pg_api_close(&s->pq);
    free(base->shown);
    free(s->target);
    free(s->target_last);
    free(s->temp);
    free(s->temp_last);
    strbuf_free(&s->buf);
    free(s);
}

static const sink_ops pg_sink_ops = {pg_prepare, pg_commit, pg_sink_free};

int sink_open_pg(sink **out, const char *name, const source_options *o, ak_error *err)
{
    *out = NULL;
    pg_sink *s = calloc(1, sizeof *s);
    if (!s) return ak_err_nomem(err);
    const pg_api *pq = &s->pq;
    s->base.ops = &pg_sink_ops;
    s->base.delimiter = o && o->delimiter ? o->delimiter : ',';
    s->base.replace = o && o->replace;
    char *conninfo = NULL, *table = NULL;
    int rc = (s->base.shown = source_display(name)) ? ANONKIT_OK : ak_err_nomem(err);
    if (rc == ANONKIT_OK) rc = source_uri_take(name, "table", &conninfo, &table, err);
    if (rc == ANONKIT_OK && !table)
        rc = ak_err_set(err, ANONKIT_E_USAGE, s->base.shown, 0, 0, "name the table to write (?table=NAME)");
    if (rc == ANONKIT_OK) rc = pg_api_open(&s->pq, PG_LIBPQ_SONAME, s->base.shown, err);
    if (rc == ANONKIT_OK) rc = pg_connect(pq, &s->conn, conninfo, s->base.shown, err);
    if (rc == ANONKIT_OK) rc = pg_quote_name(pq, s->conn, table, &s->target, &s->target_last, err);
    if (rc == ANONKIT_OK) { /* the new table: beside the target, a name of this process */
        char temp[160];
        const char *dot = strchr(table, '.');
        struct timespec ts; /* (the process id alone may repeat on another host) */
        clock_gettime(CLOCK_REALTIME, &ts);
        snprintf(temp, sizeof temp, "%.*s%sanonkit_new_%ld_%ld", dot ? (int)(dot - table) : 0, table, dot ? "." : "",
                 (long)getpid(), (long)(ts.tv_nsec / 1000));
        rc = pg_quote_name(pq, s->conn, temp, &s->temp, &s->temp_last, err);
    }
    /* refused before any work: an existing target without --replace, a target that cannot be created */
    if (rc == ANONKIT_OK) {
        const char *params[1] = {s->target};
        PGresult *r = pq->PQexecParams(s->conn, "SELECT to_regclass($1) IS NOT NULL", 1, NULL, params, NULL, NULL, 0);
        if (pq->PQresultStatus(r) != PGRES_TUPLES_OK) rc = pg_fail(err, s->base.shown, "cannot look for the table", pq->PQerrorMessage(s->conn));
        else if (!strcmp(pq->PQgetvalue(r, 0, 0), "t") && !s->base.replace)
            rc = ak_err_set(err, ANONKIT_E_USAGE, s->base.shown, 0, 0,
                            "table %s exists (give --replace to replace it)", table);
        pq->PQclear(r);
    }
    if (rc == ANONKIT_OK) {
        strbuf sql = {0};
        if (sink_printf(&sql, "BEGIN; CREATE TABLE %s (); ROLLBACK", s->temp) != 0) rc = ak_err_nomem(err);
        else rc = pg_exec(pq, s->conn, sql.data, s->base.shown, "cannot create the table", err);
        if (rc < 0) pq->PQclear(pq->PQexec(s->conn, "ROLLBACK"));
        strbuf_free(&sql);
    }
    free(conninfo);
    free(table);
    if (rc < 0) {
        pg_sink_free(&s->base);
        return rc;
    }
    *out = &s->base;
    return ANONKIT_OK;
}
