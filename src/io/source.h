/* source.h — the one source interface: where a table is read from and where a
 * published table goes (docs/sources.md, ARCHITECTURE.md §3 step 1 and §4).
 *
 * A source is named by the text the user gives: a URI scheme picks a
 * database (postgresql:// or postgres://, sqlite:), a file extension a
 * statistics file (.sav, .zsav, .por, .dta, .sas7bdat, .xpt), anything else
 * is a CSV file ("-": standard input). Every reader implements source_ops:
 *
 *   source_open(name)  -> columns (name, label, numeric or text, value labels)
 *   source_scan(fn)    -> every row, in order, as text fields (NULL: empty),
 *                         handed to fn; scanning again (a rewind) reads the
 *                         same rows again
 *   source_close
 *
 * Rows are pushed to a callback rather than pulled because ReadStat's
 * parsers push; a database or CSV reader streams them one at a time, never
 * holding the table. A PostgreSQL source reads with COPY (...) TO STDOUT
 * inside one REPEATABLE READ, READ ONLY transaction that stays open until
 * source_close, so every scan sees one snapshot; an SQLite source holds one
 * read transaction likewise.
 *
 * The commands (anonymize, check, metrics, recode, sequential) take their
 * input through source_input_open: a CSV file is handed to the CSV reader
 * as it is (the hot path, unchanged), and any other source is scanned once
 * into a private unnamed spool in CSV form (src/io/spool.h), which the table
 * loader, the out-of-core first scan and the writer's re-read of copied
 * columns then read — so the rows the algorithm saw are exactly the rows
 * whose copied columns are published, and the input digest is kept but can
 * never differ (the spool is private; the database snapshot is what the
 * digest stands for).
 *
 * Outputs: an output named like a source is a sink (struct sink). The one
 * writer writes CSV into an unnamed spool as for a file; at commit
 * (outfile_commit_all) the sink loads it into a new table (created and
 * renamed into place in one transaction, an existing target replaced only
 * with --replace) or converts it into a .sav/.dta/.xpt written through an
 * outfile beside the destination. A failed run leaves nothing.
 *
 * Passwords: every name shown in a message goes through source_display,
 * which masks the password of a URI (user:PASSWORD@ and password=...). */
#ifndef AK_SOURCE_H
#define AK_SOURCE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/error.h"
#include "common/strbuf.h"
#include "io/spool.h"

typedef enum source_kind {
    SOURCE_CSV = 0,      /* a CSV file or "-" */
    SOURCE_POSTGRES = 1, /* postgresql://... or postgres://... */
    SOURCE_SQLITE = 2,   /* sqlite:PATH?table=NAME */
    SOURCE_READSTAT = 3, /* .sav .zsav .por .dta .sas7bdat .xpt */
    SOURCE_TABLE = 4     /* "table:": a table in memory, an output of the library only (io/memtable.h) */
} source_kind;

/* The settings a source or sink takes from the job. */
typedef struct source_options {
    char delimiter;     /* of the CSV form the commands read and the writer writes */
    const char *query;  /* --query: the rows of this SELECT instead of ?table= (databases) */
    int use_codes;      /* --use-codes: value codes instead of value labels (ReadStat) */
    int replace;        /* --replace: a sink may replace an existing table */
    const char *tmpdir; /* where spools go; NULL: $TMPDIR, else /tmp */
    struct anonkit_table **table_out; /* the "table:" sink hands its table here at commit (io/memtable.h) */
    const struct anonkit_table *table_in; /* the input "table:" is this table in memory (NULL: none) */
} source_options;

/* One value label of a labelled variable. */
typedef struct source_label {
    double value;
    char *label;
} source_label;

/* One column of a source. */
typedef struct source_column {
    char *name;
    char *label;           /* variable label; NULL when none */
    int numeric;           /* the source stores numbers */
    size_t width;          /* text: the declared storage width (0: unknown) */
    source_label *labels;  /* value labels (ReadStat), used instead of the codes unless use_codes */
    size_t nlabels;
} source_column;

/* One row handed to a scan callback: count fields; field i is text[i] of
 * len[i] bytes (not NUL-terminated), or NULL for a missing value. Valid only
 * during the call. */
typedef struct source_row {
    const char *const *text;
    const size_t *len;
    uint32_t count;
} source_row;

typedef int (*source_row_fn)(void *ctx, const source_row *row, ak_error *err);

typedef struct source source;

/* What a reader implements. */
typedef struct source_ops {
    /* Hands every row to fn in order; stops at fn's first negative status. */
    int (*scan)(source *s, source_row_fn fn, void *ctx, ak_error *err);
    /* Ends any transaction and frees everything. */
    void (*close)(source *s);
} source_ops;

/* The part every reader's state starts with. */
struct source {
    const source_ops *ops;
    source_kind kind;
    char *shown;          /* the name for messages, password masked */
    source_column *cols;
    uint32_t ncols;
};

/* The kind of source `name` names (by scheme or extension). */
source_kind source_kind_of(const char *name);
/* Whether name names a source that is not a CSV file. */
static inline int source_is_special(const char *name) { return name && source_kind_of(name) != SOURCE_CSV; }

/* Whether name is a database URI (postgresql://, postgres://, sqlite:), not a path. */
static inline int source_is_uri(const char *name)
{
    const source_kind k = source_kind_of(name);
    return k == SOURCE_POSTGRES || k == SOURCE_SQLITE;
}

/* A copy of name for messages with any password masked as "***"; NULL when
 * out of memory. */
char *source_display(const char *name);

/* Opens the source `name` (one call for every kind; the entry point for a
 * command that reads a table). */
int source_open(source **out /* OUT */, const char *name, const source_options *o, ak_error *err);
/* source_open's readers, by kind. */
int source_open_csv(source **out /* OUT */, const char *name, const source_options *o, ak_error *err);
int source_open_pg(source **out /* OUT */, const char *name, const source_options *o, ak_error *err);
int source_open_sqlite(source **out /* OUT */, const char *name, const source_options *o, ak_error *err);
int source_open_readstat(source **out /* OUT */, const char *name, const source_options *o, ak_error *err);

static inline int source_scan(source *s, source_row_fn fn, void *ctx, ak_error *err)
{
    return s->ops->scan(s, fn, ctx, err);
}
/* Frees the source; accepts NULL. */
void source_close(source *s);

/* Frees cols[0..n) and the array. */
void source_columns_free(source_column *cols, uint32_t n);

/* ---- The input of a command ---- */

/* Where a command's CSV reader finds its input. */
typedef struct source_input {
    const char *path;      /* what csv_reader_open reads: the CSV file itself or the spool */
    char *shown;           /* the name for messages (password masked); "stdin" for "-" */
    spool sp;              /* the spooled copy of a non-CSV source or stdin */
    source_column *cols;   /* the source's columns (NULL for CSV), for a sink that keeps labels */
    uint32_t ncols;
    uint64_t rows;         /* rows spooled */
    const struct anonkit_table *table; /* the input is this table in memory (the name "table:",
                                          o->table_in), read as it is: path is "table:", nothing to open */
} source_input;

/* Makes name readable by the CSV reader: a CSV file as it is; the name
 * "table:" with o->table_in is that table, read through the reader's table
 * backend (in->table; shown as "the input table"); "-" is
 * spooled when spool_stdin is set (else left as "-"); any other source is
 * scanned once into a private unnamed spool in CSV form with o->delimiter,
 * header first. */
int source_input_open(source_input *in, const char *name, const source_options *o, int spool_stdin, ak_error *err);
/* Frees in (the spool too); safe on a zeroed one. */
void source_input_close(source_input *in);

/* ---- Sinks ---- */

typedef struct sink sink;

/* Opens the sink an output named `name` goes to (a database table or a
 * statistics file), checking what can be checked before any work (the
 * server is reachable, the target may be written, an existing target is
 * refused without --replace). */
int sink_open(sink **out /* OUT */, const char *name, const source_options *o, ak_error *err);
/* The columns of the input (names, labels, value labels) that the sink
 * keeps for the output columns of the same names; borrowed until sink_free. */
void sink_set_origin(sink *s, const source_column *cols, uint32_t ncols);
/* Loads the CSV in `csv` (rewound here) into the target, leaving it
 * invisible: the transaction open, or the file unrenamed. */
int sink_prepare(sink *s, FILE *csv, ak_error *err);
/* Makes the target visible (commit, rename). */
int sink_commit(sink *s, ak_error *err);
/* Rolls back whatever is not committed and frees the sink; accepts NULL. */
void sink_free(sink *s);

/* The sinks by kind (source_pg.c, source_sqlite.c, source_readstat.c). A
 * sink is a sink_ops and its state. */
typedef struct sink_ops {
    int (*prepare)(sink *s, FILE *csv, ak_error *err);
    int (*commit)(sink *s, ak_error *err);
    void (*free)(sink *s);
} sink_ops;
struct sink {
    const sink_ops *ops;
    char *shown;
    char delimiter;
    int replace;
    const source_column *origin;
    uint32_t norigin;
};
int sink_open_pg(sink **out /* OUT */, const char *name, const source_options *o, ak_error *err);
int sink_open_sqlite(sink **out /* OUT */, const char *name, const source_options *o, ak_error *err);
int sink_open_readstat(sink **out /* OUT */, const char *name, const source_options *o, ak_error *err);

/* ---- Shared by the sinks ---- */

/* What a CSV output's columns hold, found by one pass over it. */
typedef enum sink_type { SINK_INTEGER = 0, SINK_REAL = 1, SINK_TEXT = 2 } sink_type;
typedef struct sink_table {
    uint32_t ncols;
    char **names;        /* the header */
    sink_type *types;    /* integer when every non-empty value is an int64, real when a number, else text */
    size_t *width;       /* longest value in bytes */
    uint64_t rows;       /* data rows */
} sink_table;
/* Reads the CSV in csv (from its start) and fills t. */
int sink_table_scan(sink_table *t, FILE *csv, char delimiter, const char *shown, ak_error *err);
void sink_table_free(sink_table *t);
/* Calls fn for every data row of the CSV in csv (from its start; the header skipped). */
int sink_rows(FILE *csv, char delimiter, const char *shown, source_row_fn fn, void *ctx, ak_error *err);
/* The same for the CSV file at path. */
int sink_rows_path(const char *path, char delimiter, const char *shown, source_row_fn fn, void *ctx, ak_error *err);
/* The origin column called name, or NULL. */
const source_column *sink_origin(const sink *s, const char *name);

/* Appends printf-style text to b, keeping it NUL-terminated (the NUL not
 * counted in b->len). 0, or -1 when out of memory. */
int sink_printf(strbuf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Splits "...?a=b&table=NAME&..." of a URI: *table gets a copy of the value
 * of `key` (NULL when absent) and *rest a copy of name without that pair. */
int source_uri_take(const char *name, const char *key, char **rest, char **value, ak_error *err);

#endif
