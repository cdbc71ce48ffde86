/* test_source.c — the one source interface (src/io/source.h): names to
 * readers, masked passwords, URI parameters, the SQLite and ReadStat readers
 * (columns, types, labels, scans that can be repeated), spooling a source
 * into CSV form for the commands, and table sinks committed or aborted
 * through outfile (nothing left behind by an abort). The PostgreSQL reader
 * and sink need a server: tests/cli_sources.sh starts one. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/outfile.h"
#include "io/crypto_load.h"
#include "io/pg_load.h"
#include "io/readstat_load.h"
#include "io/sqlite_load.h"
#include "io/source.h"
#include "testutil.h"

static void test_kind_and_mask(void **state)
{
    (void)state;
    assert_int_equal(source_kind_of("a.csv"), SOURCE_CSV);
    assert_int_equal(source_kind_of("-"), SOURCE_CSV);
    assert_int_equal(source_kind_of("postgresql:///db?table=t"), SOURCE_POSTGRES);
    assert_int_equal(source_kind_of("postgres://h/db"), SOURCE_POSTGRES);
    assert_int_equal(source_kind_of("sqlite:x.db?table=t"), SOURCE_SQLITE);
    assert_int_equal(source_kind_of("survey.SAV"), SOURCE_READSTAT);
    assert_int_equal(source_kind_of("s.zsav"), SOURCE_READSTAT);
    assert_int_equal(source_kind_of("s.dta"), SOURCE_READSTAT);
    assert_int_equal(source_kind_of("s.sas7bdat"), SOURCE_READSTAT);
    assert_int_equal(source_kind_of("s.xpt"), SOURCE_READSTAT);
    static const char *const cases[][2] = {
        {"postgresql://u:secret@host:5432/db?table=t", "postgresql://u:***@host:5432/db?table=t"},
        {"postgres://u@host/db", "postgres://u@host/db"},
        {"postgresql:///db?password=secret&table=t", "postgresql:///db?password=***&table=t"},
        {"postgresql:///db?table=t&password=s%40cret", "postgresql:///db?table=t&password=***"},
        {"postgresql://u:a:b@h/db?password=x", "postgresql://u:***@h/db?password=***"},
        {"postgresql:///db?table=mypassword=1", "postgresql:///db?table=mypassword=1"},
        {"sqlite:x.db?table=t", "sqlite:x.db?table=t"},
        {"plain.csv", "plain.csv"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *shown = source_display(cases[i][0]);
        assert_non_null(shown);
        assert_string_equal(shown, cases[i][1]);
        free(shown);
    }
}

static void test_uri_take(void **state)
{
    (void)state;
    ak_error err;
    char *rest, *value;
    assert_int_equal(source_uri_take("postgresql:///db?a=1&table=s%2Et&b=2", "table", &rest, &value, &err), ANONKIT_OK);
    assert_string_equal(rest, "postgresql:///db?a=1&b=2");
    assert_string_equal(value, "s.t");
    free(rest);
    free(value);
    assert_int_equal(source_uri_take("postgresql:///db?table=t", "table", &rest, &value, &err), ANONKIT_OK);
    assert_string_equal(rest, "postgresql:///db");
    assert_string_equal(value, "t");
    free(rest);
    free(value);
    assert_int_equal(source_uri_take("postgresql:///db", "table", &rest, &value, &err), ANONKIT_OK);
    assert_string_equal(rest, "postgresql:///db");
    assert_null(value);
    free(rest);
}

/* Collects the rows of a scan as CSV-like text (missing: "~"). */
static int collect(void *ctx, const source_row *row, ak_error *err)
{
    (void)err;
    strbuf *b = ctx;
    for (uint32_t i = 0; i < row->count; i++) {
        if (i) assert_int_equal(strbuf_append(b, ",", 1), 0);
        if (row->text[i]) assert_int_equal(strbuf_append(b, row->text[i], row->len[i]), 0);
        else assert_int_equal(strbuf_append(b, "~", 1), 0);
    }
    assert_int_equal(strbuf_append(b, "\n", 2), 0);
    b->len--; /* keeps it NUL-terminated */
    return ANONKIT_OK;
}

static void exec_sql(sqlite3 *db, const char *sql)
{
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) fail_msg("%s: %s", sql, msg);
}

static void test_sqlite_reader(void **state)
{
    (void)state;
    const char *dir = tu_mkdtemp();
    char uri[4200];
    const char *path = tu_path(dir, "r.db");
    sqlite3 *db;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    exec_sql(db, "CREATE TABLE t (age INTEGER, income REAL, city TEXT);"
                 "INSERT INTO t VALUES (30, 1.5, 'Oslo'), (41, NULL, 'a,\"b\"'), (NULL, 2, '');");
    sqlite3_close(db);
    snprintf(uri, sizeof uri, "sqlite:%s?table=t", path);
    const source_options o = {.delimiter = ','};
    source *s = NULL;
    ak_error err;
    assert_int_equal(source_open(&s, uri, &o, &err), ANONKIT_OK);
    assert_int_equal(s->ncols, 3);
    assert_string_equal(s->cols[0].name, "age");
    assert_true(s->cols[0].numeric && s->cols[1].numeric && !s->cols[2].numeric);
    for (int pass = 0; pass < 2; pass++) { /* a second scan reads the same rows */
        strbuf b = {0};
        assert_int_equal(source_scan(s, collect, &b, &err), ANONKIT_OK);
        assert_string_equal(b.data, "30,1.5,Oslo\n41,~,a,\"b\"\n~,2.0,\n");
        strbuf_free(&b);
    }
    source_close(s);
    /* the CSV form the commands read */
    source_input in;
    assert_int_equal(source_input_open(&in, uri, &o, 1, &err), ANONKIT_OK);
    assert_string_equal(in.shown, uri);
    char *text = tu_read_file(in.path, NULL);
    assert_non_null(text);
    assert_string_equal(text, "age,income,city\n30,1.5,Oslo\n41,,\"a,\"\"b\"\"\"\n,2.0,\n");
    free(text);
    source_input_close(&in);
    /* --query */
    const source_options q = {.delimiter = ',', .query = "SELECT city FROM t WHERE age > 35"};
    snprintf(uri, sizeof uri, "sqlite:%s", path);
    assert_int_equal(source_open(&s, uri, &q, &err), ANONKIT_OK);
    strbuf b = {0};
    assert_int_equal(source_scan(s, collect, &b, &err), ANONKIT_OK);
    assert_string_equal(b.data, "a,\"b\"\n");
    strbuf_free(&b);
    source_close(s);
    /* a missing table, a query error */
    snprintf(uri, sizeof uri, "sqlite:%s?table=nope", path);
    assert_int_equal(source_open(&s, uri, &o, &err), ANONKIT_E_INPUT);
    assert_non_null(strstr(err.message, "no such table: nope"));
    tu_rmtree(dir);
}

/* Writes text through outfile_open_table to name; commits or aborts. */
static int write_table(const char *name, const char *text, int commit, int replace, const source_column *origin,
                       uint32_t norigin, ak_error *err)
{
    const source_options o = {.delimiter = ',', .replace = replace};
    outfile of;
    int rc = outfile_open_table(&of, name, &o, err);
    if (rc < 0) return rc;
    assert_non_null(of.sink);
    sink_set_origin(of.sink, origin, norigin);
    assert_int_equal(fputs(text, of.stream) >= 0, 1);
    if (!commit) {
        outfile_abort(&of);
        return ANONKIT_OK;
    }
    outfile *const files[] = {&of};
    return outfile_commit_all(files, 1, 1, err);
}

static void test_sqlite_sink(void **state)
{
    (void)state;
    const char *dir = tu_mkdtemp();
    const char *path = tu_path(dir, "w.db");
    char uri[4200];
    snprintf(uri, sizeof uri, "sqlite:%s?table=pub", path);
    ak_error err;
    const char *csv = "age,zip,note\n20-29,123,x\n30-39,124,\n";
    /* aborted: the database the run would have created is not there */
    assert_int_equal(write_table(uri, csv, 0, 0, NULL, 0, &err), ANONKIT_OK);
    assert_int_not_equal(access(path, F_OK), 0);
    assert_int_equal(write_table(uri, csv, 1, 0, NULL, 0, &err), ANONKIT_OK);
    source *s = NULL;
    const source_options o = {.delimiter = ','};
    assert_int_equal(source_open(&s, uri, &o, &err), ANONKIT_OK);
    assert_true(!s->cols[0].numeric && s->cols[1].numeric && !s->cols[2].numeric);
    strbuf b = {0};
    assert_int_equal(source_scan(s, collect, &b, &err), ANONKIT_OK);
    assert_string_equal(b.data, "20-29,123,x\n30-39,124,\n");
    strbuf_free(&b);
    source_close(s);
    /* an existing target: refused without --replace, replaced with it */
    assert_int_equal(write_table(uri, "a\n1\n", 1, 0, NULL, 0, &err), ANONKIT_E_USAGE);
    assert_non_null(strstr(err.message, "exists (give --replace"));
    assert_int_equal(write_table(uri, "a\n1\n", 1, 1, NULL, 0, &err), ANONKIT_OK);
    assert_int_equal(source_open(&s, uri, &o, &err), ANONKIT_OK);
    assert_int_equal(s->ncols, 1);
    source_close(s);
    tu_rmtree(dir);
}

static void test_readstat(void **state)
{
    (void)state;
    const char *dir = tu_mkdtemp();
    ak_error err;
    source_label labels[] = {{1, "low"}, {2, "high"}};
    source_column origin[] = {{.name = "age", .label = "Age in years"},
                              {.name = "level", .label = "Level", .numeric = 1, .labels = labels, .nlabels = 2}};
    static const char *const exts[] = {"o.sav", "o.dta", "o.xpt", "o.zsav"};
    for (size_t e = 0; e < sizeof exts / sizeof *exts; e++) {
        const char *path = tu_path(dir, exts[e]);
        assert_int_equal(write_table(path, "age,level,w\n20-29,1,1.25\n30,2,\n", 0, 0, origin, 2, &err), ANONKIT_OK);
        assert_int_not_equal(access(path, F_OK), 0); /* aborted: nothing */
        if (write_table(path, "age,level,w\n20-29,1,1.25\n30,2,\n", 1, 0, origin, 2, &err) != ANONKIT_OK)
            fail_msg("%s: %s", exts[e], err.message);
        source *s = NULL;
        const source_options o = {.delimiter = ','};
        if (source_open(&s, path, &o, &err) != ANONKIT_OK) fail_msg("%s: %s", exts[e], err.message);
        assert_int_equal(s->ncols, 3);
        assert_false(s->cols[0].numeric); /* a generalized value: a string */
        assert_true(s->cols[2].numeric);
        assert_string_equal(s->cols[0].label, "Age in years");
        const int has_labels = strcmp(exts[e], "o.xpt") != 0; /* (SAS transport files keep none) */
        strbuf b = {0};
        assert_int_equal(source_scan(s, collect, &b, &err), ANONKIT_OK);
        assert_string_equal(b.data, has_labels ? "20-29,low,1.25\n30,high,~\n" : "20-29,1,1.25\n30,2,~\n");
        strbuf_free(&b);
        source_close(s);
        const source_options codes = {.delimiter = ',', .use_codes = 1};
        assert_int_equal(source_open(&s, path, &codes, &err), ANONKIT_OK);
        assert_int_equal(source_scan(s, collect, &b, &err), ANONKIT_OK);
        assert_string_equal(b.data, "20-29,1,1.25\n30,2,~\n");
        strbuf_free(&b);
        source_close(s);
    }
    /* a corrupt file */
    const char *bad = tu_path(dir, "bad.sav");
    tu_write_file(bad, "$FL2@(#) not really an SPSS file");
    source *s = NULL;
    const source_options o = {.delimiter = ','};
    assert_int_equal(source_open(&s, bad, &o, &err), ANONKIT_E_INPUT);
    assert_non_null(strstr(err.message, "cannot read"));
    tu_rmtree(dir);
}

/* libpq loaded on demand: the real one gives every function; a missing
 * library, or one without libpq's functions, a message naming the package. */
static void test_pg_load(void **state)
{
    (void)state;
    pg_api api;
    ak_error err = {0};
    assert_int_equal(pg_api_open(&api, PG_LIBPQ_SONAME, "db", &err), ANONKIT_OK);
    assert_non_null(api.lib);
    assert_non_null(api.PQconnectdbParams);
    assert_non_null(api.PQgetResult);
    assert_ptr_not_equal((void *)api.PQexec, (void *)api.PQclear);
    pg_api_close(&api);
    assert_null(api.lib);
    pg_api_close(&api); /* twice: a no-op */
    assert_int_equal(pg_api_open(&api, "libanonkit-no-such-library.so.5", "db", &err), ANONKIT_E_IO);
    assert_null(api.lib);
    assert_non_null(strstr(err.message, "package libpq5"));
    assert_non_null(strstr(err.message, "libanonkit-no-such-library.so.5"));
    assert_string_equal(err.file, "db");
    memset(&err, 0, sizeof err);
    assert_int_equal(pg_api_open(&api, "libz.so.1", "db", &err), ANONKIT_E_IO);
    assert_null(api.lib);
    assert_non_null(strstr(err.message, "lacks PQconnectdbParams"));
}

/* SQLite, ReadStat and libcrypto loaded on demand the same way: the real
 * library gives every function; a missing one, or one without the functions,
 * a message naming the Debian package, and a zeroed table. */
static void test_dl_load(void **state)
{
    (void)state;
    ak_error err = {0};
    sq_api sq;
    assert_int_equal(sq_api_open(&sq, SQ_SONAME, "db", &err), ANONKIT_OK);
    assert_non_null(sq.lib);
    assert_non_null(sq.sqlite3_open_v2);
    assert_non_null(sq.sqlite3_step);
    assert_ptr_not_equal((void *)sq.sqlite3_step, (void *)sq.sqlite3_reset);
    sq_api_close(&sq);
    assert_null(sq.lib);
    sq_api_close(&sq); /* twice: a no-op */
    assert_int_equal(sq_api_open(&sq, "libanonkit-no-such-library.so.0", "db", &err), ANONKIT_E_IO);
    assert_null(sq.lib);
    assert_null(sq.sqlite3_step);
    assert_non_null(strstr(err.message, "package libsqlite3-0"));
    assert_non_null(strstr(err.message, "libanonkit-no-such-library.so.0"));
    assert_string_equal(err.file, "db");
    memset(&err, 0, sizeof err);
    assert_int_equal(sq_api_open(&sq, "libz.so.1", "db", &err), ANONKIT_E_IO);
    assert_null(sq.lib);
    assert_null(sq.sqlite3_bind_double); /* the table is zeroed */
    assert_non_null(strstr(err.message, "lacks sqlite3_bind_double"));

    rs_api rs;
    memset(&err, 0, sizeof err);
    assert_int_equal(rs_api_open(&rs, RS_SONAME, "f.sav", &err), ANONKIT_OK);
    assert_non_null(rs.readstat_parse_sav);
    assert_non_null(rs.readstat_writer_init);
    rs_api_close(&rs);
    assert_null(rs.lib);
    assert_int_equal(rs_api_open(&rs, "libanonkit-no-such-library.so.1", "f.sav", &err), ANONKIT_E_IO);
    assert_non_null(strstr(err.message, "package libreadstat1"));
    assert_string_equal(err.file, "f.sav");

    crypto_api c;
    memset(&err, 0, sizeof err);
    assert_int_equal(crypto_api_open(&c, CRYPTO_SONAME, "r.html", &err), ANONKIT_OK);
    assert_non_null(c.EVP_MD_fetch);
    assert_non_null(c.EVP_DigestFinal_ex);
    crypto_api_close(&c);
    assert_null(c.lib);
    assert_int_equal(crypto_api_open(&c, "libanonkit-no-such-library.so.3", "r.html", &err), ANONKIT_E_IO);
    assert_non_null(strstr(err.message, "package libssl3"));
    memset(&err, 0, sizeof err);
    assert_int_equal(crypto_api_open(&c, "libz.so.1", "r.html", &err), ANONKIT_E_IO);
    assert_non_null(strstr(err.message, "lacks ERR_clear_error"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kind_and_mask), cmocka_unit_test(test_uri_take), cmocka_unit_test(test_sqlite_reader),
        cmocka_unit_test(test_sqlite_sink),   cmocka_unit_test(test_readstat),
        cmocka_unit_test(test_pg_load),       cmocka_unit_test(test_dl_load),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
