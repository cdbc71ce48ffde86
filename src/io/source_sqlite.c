/* source_sqlite.c — SQLite tables as sources and sinks, through libsqlite3
 * opened on demand (io/sqlite_load.h; docs/sources.md). A name is sqlite:PATH?table=NAME (sqlite:///abs/path
 * too). Reading: the database is opened read-only and every scan runs inside
 * one read transaction (BEGIN ... COMMIT at close), so every scan sees the
 * same rows. Writing: BEGIN IMMEDIATE, a new table of a temporary name
 * filled by one prepared INSERT, an existing target dropped (only with
 * --replace), the new table renamed to the target, COMMIT; a run that ends
 * any other way leaves the database as it was (SQLite's journal undoes an
 * interrupted transaction), and a database file the run created is removed. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/source.h"
#include "io/sqlite_load.h"

/* A new error from SQLite's message for db. */
static int sq_fail(const sq_api *api, ak_error *err, const char *shown, const char *what, sqlite3 *db)
{
    return ak_err_set(err, ANONKIT_E_INPUT, shown, 0, 0, "%s: %s", what, db ? api->sqlite3_errmsg(db) : "out of memory");
}

/* The database path and the table of a name sqlite:PATH?table=NAME. */
static int sq_parse(const char *name, char **path, char **table, ak_error *err)
{
    char *rest = NULL;
    AK_CHECK(source_uri_take(name + 7, "table", &rest, table, err));
    char *q = strchr(rest, '?'); /* other parameters are not taken */
    if (q) *q = '\0';
    const char *p = rest;
    if (!strncmp(p, "//", 2)) p += 2;
    *path = strdup(p);
    free(rest);
    if (!*path) {
        free(*table);
        *table = NULL;
        return ak_err_nomem(err);
    }
    return ANONKIT_OK;
}

/* Appends name as an SQL identifier ("..." with quotes doubled). */
static int sq_quote(strbuf *b, const char *name)
{
    if (sink_printf(b, "\"") != 0) return -1;
    for (const char *p = name; *p; p++)
        if (sink_printf(b, *p == '"' ? "\"\"" : "%c", *p) != 0) return -1;
    return sink_printf(b, "\"");
}

/* Runs SQL that returns no rows. */
static int sq_exec(const sq_api *api, sqlite3 *db, const char *sql, const char *shown, const char *what, ak_error *err)
{
    return api->sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK ? ANONKIT_OK : sq_fail(api, err, shown, what, db);
}

/* ---- Reading ---- */

typedef struct sq_source {
    source base;
    sq_api api; /* libsqlite3, loaded on opening */
    sqlite3 *db;
    sqlite3_stmt *stmt;
    const char **text;
    size_t *len;
} sq_source;

/* Whether a declared type has numeric affinity (SQLite's rules, section 3.1 of its datatype page). */
static int sq_numeric_decl(const char *decl)
{
    if (!decl) return 0;
    if (strcasestr(decl, "INT")) return 1;
    if (strcasestr(decl, "CHAR") || strcasestr(decl, "CLOB") || strcasestr(decl, "TEXT")) return 0;
    return strcasestr(decl, "REAL") || strcasestr(decl, "FLOA") || strcasestr(decl, "DOUB") ||
           strcasestr(decl, "NUM") || strcasestr(decl, "DEC");
}

/* Steps through the SELECT, handing every row to fn. */
static int sq_scan(source *base, source_row_fn fn, void *ctx, ak_error *err)
{
    sq_source *s = (sq_source *)base;
    s->api.sqlite3_reset(s->stmt);
    int st;
    int rc = ANONKIT_OK;
    while (rc == ANONKIT_OK && (st = s->api.sqlite3_step(s->stmt)) == SQLITE_ROW) {
        for (uint32_t i = 0; i < base->ncols; i++) {
            if (s->api.sqlite3_column_type(s->stmt, (int)i) == SQLITE_NULL) {
                s->text[i] = NULL;
                s->len[i] = 0;
                continue;
            }
            const unsigned char *t = s->api.sqlite3_column_text(s->stmt, (int)i);
            if (!t) return ak_err_nomem(err);
            s->text[i] = (const char *)t;
            s->len[i] = (size_t)s->api.sqlite3_column_bytes(s->stmt, (int)i);
        }
        const source_row row = {s->text, s->len, base->ncols};
        rc = fn(ctx, &row, err);
    }
    if (rc == ANONKIT_OK && st != SQLITE_DONE) rc = sq_fail(&s->api, err, base->shown, "cannot read", s->db);
    s->api.sqlite3_reset(s->stmt);
    return rc;
}

static void sq_close(source *base)
{
    sq_source *s = (sq_source *)base;
    if (s->api.lib) { /* (else nothing of SQLite's was made) */
        s->api.sqlite3_finalize(s->stmt);
        if (s->db) {
            s->api.sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL);
            s->api.sqlite3_close(s->db);
        }
    }
    sq_api_close(&s->api);
    source_columns_free(base->cols, base->ncols);
    free(base->shown);
    free(s->text);
    free(s->len);
    free(s);
}

static const source_ops sq_ops = {sq_scan, sq_close};

int source_open_sqlite(source **out, const char *name, const source_options *o, ak_error *err)
{
    *out = NULL;
    sq_source *s = calloc(1, sizeof *s);
    if (!s) return ak_err_nomem(err);
    s->base.ops = &sq_ops;
    s->base.kind = SOURCE_SQLITE;
    char *path = NULL, *table = NULL;
    strbuf sql = {0};
    int rc = (s->base.shown = source_display(name)) ? ANONKIT_OK : ak_err_nomem(err);
    if (rc == ANONKIT_OK) rc = sq_parse(name, &path, &table, err);
    if (rc == ANONKIT_OK) rc = sq_api_open(&s->api, SQ_SONAME, s->base.shown, err);
    if (rc == ANONKIT_OK && s->api.sqlite3_open_v2(path, &s->db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
        rc = sq_fail(&s->api, err, s->base.shown, "cannot open", s->db);
    if (rc == ANONKIT_OK) rc = sq_exec(&s->api, s->db, "BEGIN", s->base.shown, "cannot begin", err);
    if (rc == ANONKIT_OK) {
        if (o && o->query) {
            if (sink_printf(&sql, "%s", o->query) != 0) rc = ak_err_nomem(err);
        } else if (!table) {
            rc = ak_err_set(err, ANONKIT_E_USAGE, s->base.shown, 0, 0, "name a table (?table=NAME) or give --query");
        } else if (sink_printf(&sql, "SELECT * FROM ") != 0 || sq_quote(&sql, table) != 0) {
            rc = ak_err_nomem(err);
        }
    }
    if (rc == ANONKIT_OK && s->api.sqlite3_prepare_v2(s->db, sql.data, -1, &s->stmt, NULL) != SQLITE_OK)
        rc = sq_fail(&s->api, err, s->base.shown, "cannot read", s->db);
    if (rc == ANONKIT_OK && (!s->stmt || s->api.sqlite3_column_count(s->stmt) == 0))
        rc = ak_err_set(err, ANONKIT_E_INPUT, s->base.shown, 0, 0, "the query returns no columns");
    if (rc == ANONKIT_OK) {
        const int nc = s->api.sqlite3_column_count(s->stmt);
        if (!(s->base.cols = calloc((size_t)nc, sizeof *s->base.cols)) || !(s->text = calloc((size_t)nc, sizeof *s->text)) ||
            !(s->len = calloc((size_t)nc, sizeof *s->len)))
            rc = ak_err_nomem(err);
        for (int i = 0; rc == ANONKIT_OK && i < nc; i++) {
            s->base.ncols = (uint32_t)i + 1;
            const char *cn = s->api.sqlite3_column_name(s->stmt, i);
            s->base.cols[i].numeric = sq_numeric_decl(s->api.sqlite3_column_decltype(s->stmt, i));
            if (!cn || !(s->base.cols[i].name = strdup(cn))) rc = ak_err_nomem(err);
        }
    }
    free(path);
    free(table);
    strbuf_free(&sql);
    if (rc < 0) {
        sq_close(&s->base);
        return rc;
    }
    *out = &s->base;
    return ANONKIT_OK;
}

/* ---- Writing ---- */

typedef struct sq_sink {
    sink base;
    sq_api api; /* libsqlite3, loaded on opening */
    sqlite3 *db;
    char *path;
    char *table;
    char *temp;
    int existed;   /* the database file was there before the run */
    int in_tx;
    int committed;
    sqlite3_stmt *insert;
    const sink_table *types;
} sq_sink;

/* Binds one row of the finished output to the INSERT and runs it; an empty
 * field of a number column is NULL, a number is bound as one. */
static int sq_put_row(void *ctx, const source_row *row, ak_error *err)
{
    sq_sink *s = ctx;
    for (uint32_t i = 0; i < row->count; i++) {
        const sink_type t = s->types->types[i];
        int b;
        if (!row->text[i] || (!row->len[i] && t != SINK_TEXT)) {
            b = s->api.sqlite3_bind_null(s->insert, (int)i + 1);
        } else if (t == SINK_INTEGER) {
            char buf[32];
            memcpy(buf, row->text[i], row->len[i]);
            buf[row->len[i]] = '\0';
            b = s->api.sqlite3_bind_int64(s->insert, (int)i + 1, strtoll(buf, NULL, 10));
        } else if (t == SINK_REAL) {
            char buf[80];
            memcpy(buf, row->text[i], row->len[i]);
            buf[row->len[i]] = '\0';
            b = s->api.sqlite3_bind_double(s->insert, (int)i + 1, strtod(buf, NULL));
        } else {
            b = s->api.sqlite3_bind_text(s->insert, (int)i + 1, row->text[i], (int)row->len[i], SQLITE_STATIC);
        }
        if (b != SQLITE_OK) return sq_fail(&s->api, err, s->base.shown, "cannot write", s->db);
    }
    const int st = s->api.sqlite3_step(s->insert);
    s->api.sqlite3_reset(s->insert);
    return st == SQLITE_DONE ? ANONKIT_OK : sq_fail(&s->api, err, s->base.shown, "cannot write", s->db);
}

/* Creates and fills the new table and puts it in place: all but COMMIT. */
static int sq_prepare(sink *base, FILE *csv, ak_error *err)
{
    sq_sink *s = (sq_sink *)base;
    sink_table t;
    AK_CHECK(sink_table_scan(&t, csv, base->delimiter, base->shown, err));
    s->types = &t;
    strbuf sql = {0};
    int rc = sq_exec(&s->api, s->db, "BEGIN IMMEDIATE", base->shown, "cannot begin", err);
    s->in_tx = rc == ANONKIT_OK;
    if (rc == ANONKIT_OK && (sink_printf(&sql, "CREATE TABLE ") != 0 || sq_quote(&sql, s->temp) != 0 ||
                             sink_printf(&sql, " (") != 0))
        rc = ak_err_nomem(err);
    for (uint32_t i = 0; rc == ANONKIT_OK && i < t.ncols; i++) {
        const char *type = t.types[i] == SINK_INTEGER ? "INTEGER" : t.types[i] == SINK_REAL ? "REAL" : "TEXT";
        if ((i && sink_printf(&sql, ", ") != 0) || sq_quote(&sql, t.names[i]) != 0 || sink_printf(&sql, " %s", type) != 0)
            rc = ak_err_nomem(err);
    }
    if (rc == ANONKIT_OK && sink_printf(&sql, ")") != 0) rc = ak_err_nomem(err);
    if (rc == ANONKIT_OK) rc = sq_exec(&s->api, s->db, sql.data, base->shown, "cannot create the table", err);
    sql.len = 0;
    if (rc == ANONKIT_OK && (sink_printf(&sql, "INSERT INTO ") != 0 || sq_quote(&sql, s->temp) != 0 ||
                             sink_printf(&sql, " VALUES (") != 0))
        rc = ak_err_nomem(err);
    for (uint32_t i = 0; rc == ANONKIT_OK && i < t.ncols; i++)
        if (sink_printf(&sql, i ? ", ?" : "?") != 0) rc = ak_err_nomem(err);
    if (rc == ANONKIT_OK && sink_printf(&sql, ")") != 0) rc = ak_err_nomem(err);
    if (rc == ANONKIT_OK && s->api.sqlite3_prepare_v2(s->db, sql.data, -1, &s->insert, NULL) != SQLITE_OK)
        rc = sq_fail(&s->api, err, base->shown, "cannot write", s->db);
    if (rc == ANONKIT_OK) rc = sink_rows(csv, base->delimiter, base->shown, sq_put_row, s, err);
    sql.len = 0;
    if (rc == ANONKIT_OK && base->replace) {
        if (sink_printf(&sql, "DROP TABLE IF EXISTS ") != 0 || sq_quote(&sql, s->table) != 0) rc = ak_err_nomem(err);
        else rc = sq_exec(&s->api, s->db, sql.data, base->shown, "cannot replace the table", err);
        sql.len = 0;
    }
    if (rc == ANONKIT_OK && (sink_printf(&sql, "ALTER TABLE ") != 0 || sq_quote(&sql, s->temp) != 0 ||
                             sink_printf(&sql, " RENAME TO ") != 0 || sq_quote(&sql, s->table) != 0))
        rc = ak_err_nomem(err);
    if (rc == ANONKIT_OK) rc = sq_exec(&s->api, s->db, sql.data, base->shown, "cannot rename the new table into place", err);
    strbuf_free(&sql);
    s->api.sqlite3_finalize(s->insert);
    s->insert = NULL;
    s->types = NULL;
    sink_table_free(&t);
    return rc;
}

static int sq_commit(sink *base, ak_error *err)
{
    sq_sink *s = (sq_sink *)base;
    const int rc = sq_exec(&s->api, s->db, "COMMIT", base->shown, "cannot commit", err);
    s->in_tx = 0;
    s->committed = rc == ANONKIT_OK;
    return rc;
}

/* Removes path and SQLite's companion files of it. */
static void sq_remove(const char *path)
{
    static const char *const suffix[] = {"", "-journal", "-wal", "-shm"};
    for (size_t i = 0; i < sizeof suffix / sizeof *suffix; i++) {
        char name[4200];
        if (snprintf(name, sizeof name, "%s%s", path, suffix[i]) < (int)sizeof name) unlink(name);
    }
}

static void sq_sink_free(sink *base)
{
    sq_sink *s = (sq_sink *)base;
    if (s->api.lib) { /* (else nothing of SQLite's was made) */
        s->api.sqlite3_finalize(s->insert);
        if (s->db) {
            if (s->in_tx) s->api.sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
            s->api.sqlite3_close(s->db);
        }
    }
    sq_api_close(&s->api);
    if (s->path && !s->existed && !s->committed) sq_remove(s->path);
    free(base->shown);
    free(s->path);
    free(s->table);
    free(s->temp);
    free(s);
}

static const sink_ops sq_sink_ops = {sq_prepare, sq_commit, sq_sink_free};

int sink_open_sqlite(sink **out, const char *name, const source_options *o, ak_error *err)
{
    *out = NULL;
    sq_sink *s = calloc(1, sizeof *s);
    if (!s) return ak_err_nomem(err);
    s->base.ops = &sq_sink_ops;
    s->base.delimiter = o && o->delimiter ? o->delimiter : ',';
    s->base.replace = o && o->replace;
    s->existed = 1; /* until it is known */
    int rc = (s->base.shown = source_display(name)) ? ANONKIT_OK : ak_err_nomem(err);
    if (rc == ANONKIT_OK) rc = sq_parse(name, &s->path, &s->table, err);
    if (rc == ANONKIT_OK && !s->table)
        rc = ak_err_set(err, ANONKIT_E_USAGE, s->base.shown, 0, 0, "name the table to write (?table=NAME)");
    if (rc == ANONKIT_OK) {
        char temp[64];
        snprintf(temp, sizeof temp, "anonkit_new_%ld", (long)getpid());
        if (!(s->temp = strdup(temp))) rc = ak_err_nomem(err);
    }
    if (rc == ANONKIT_OK) rc = sq_api_open(&s->api, SQ_SONAME, s->base.shown, err);
    if (rc == ANONKIT_OK) {
        struct stat st;
        s->existed = stat(s->path, &st) == 0;
        if (s->api.sqlite3_open_v2(s->path, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK)
            rc = sq_fail(&s->api, err, s->base.shown, "cannot open", s->db);
    }
    /* refused before any work: an unwritable database, an existing target without --replace */
    if (rc == ANONKIT_OK) rc = sq_exec(&s->api, s->db, "BEGIN IMMEDIATE; ROLLBACK", s->base.shown, "cannot write", err);
    if (rc == ANONKIT_OK) {
        sqlite3_stmt *q = NULL;
        if (s->api.sqlite3_prepare_v2(s->db, "SELECT 1 FROM sqlite_master WHERE type IN ('table','view') AND name = ?", -1, &q,
                               NULL) != SQLITE_OK ||
            s->api.sqlite3_bind_text(q, 1, s->table, -1, SQLITE_STATIC) != SQLITE_OK) {
            rc = sq_fail(&s->api, err, s->base.shown, "cannot look for the table", s->db);
        } else {
            const int st = s->api.sqlite3_step(q);
            if (st == SQLITE_ROW && !s->base.replace)
                rc = ak_err_set(err, ANONKIT_E_USAGE, s->base.shown, 0, 0,
                                "table %s exists (give --replace to replace it)", s->table);
            else if (st != SQLITE_ROW && st != SQLITE_DONE)
                rc = sq_fail(&s->api, err, s->base.shown, "cannot look for the table", s->db);
        }
        s->api.sqlite3_finalize(q);
    }
    if (rc < 0) {
        sq_sink_free(&s->base);
        return rc;
    }
    *out = &s->base;
    return ANONKIT_OK;
}
