/* table_internal.h — what the loader (table.c) and its two-piece parallel
 * reading (table_pieces.c) share: the per-QI reading state, the lists of
 * values missing from a hierarchy, and the functions each calls of the other. */
#ifndef AK_CORE_TABLE_INTERNAL_H
#define AK_CORE_TABLE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "common/hash.h"
#include "core/numdict.h"
#include "core/table.h"
#include "core/table_missing.h"
#include "io/csv.h"

#define MAX_MISSING_LISTED 10

/* Per-QI state while streaming. */
typedef struct qi_reader {
    numdict numbers;     /* numeric: the values seen */
    tm_rows missing;     /* numeric: the rows holding a missing value (table_missing.h) */
} qi_reader;

typedef struct missing_value {
    char text[AK_SHOW_SIZE]; /* the value as messages show it (ak_escape) */
    long line;
    uint32_t qi;
} missing_value;

/* Values missing from their hierarchy: the first few with their lines, and a count. */
typedef struct missing_list {
    missing_value listed[MAX_MISSING_LISTED];
    size_t nlisted;
    uint64_t count;
} missing_list;

/* The dictionaries of the columns coded by first appearance: the table's own,
 * or one piece's while a file is read in parallel. */
typedef struct label_dicts {
    strmap *sensitive, *classes;
} label_dicts;

/* Rows held at once by a streaming load before their numeric codes are absorbed. */
#define STREAM_CHUNK_ROWS 4096

/* table.c */
/* Encodes the QI, sensitive, class and target fields of one record as row `row`. */
int table__encode_record(table *t, qi_reader *qr, const label_dicts *dicts, const csv_record *rec, size_t row,
                         missing_list *missing, ak_error *err);
/* Grows every per-row array of t to hold at least `need` rows (*cap: what they hold). */
int table__grow_rows(table *t, size_t *cap, size_t need, ak_error *err);
/* Absorbs the provisional numeric codes of the n rows at slot base. */
int table__absorb_chunk(table *t, qi_reader *qr, size_t base, size_t n, ak_error *err);
/* Whether any numeric QI of readers qr saw a missing value. */
int table__has_missing_rows(const table *t, const qi_reader *qr);
/* Frees a split table's maps (the second piece's codes mapped to the table's). */
void table__split_free(table_split *s, uint32_t nqi);

/* table_pieces.c */
/* Ranks every numeric QI's codes (numdict_finish). The columns are
 * independent: with two threads each column goes, largest first, to the one
 * with less work so far, a column's work being its rows plus its value range
 * (integer mode) or twice its rows (hashed and sorted). With more, rows from
 * n0 on are still in more[q] (a second piece's) and move to the table's array
 * in the same pass (numdict_finish_parts); more[q] is then freed and NULL. */
int table__finish_numeric(table *t, qi_reader *qr, unsigned threads, uint32_t **more, size_t n0,
                          ak_error *err);
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
                              ak_error *err);
/* stream_rows in two pieces on two threads, when the file is large, cut and
 * checked as load_rows_parallel does. The first piece keeps the table's
 * dictionaries; the second piece's are folded into them afterwards and the
 * maps of its codes left in t->split. On any surprise the sink is told to
 * start over and *loaded stays 0: the caller reads sequentially, which also
 * gives the exact error. */
int table__stream_rows_parallel(table *t, const table_spec *spec, qi_reader *qr, uint64_t data_start, int *loaded,
                                ak_error *err);

/* A table in memory (t->mem): has reader hand out the fields of the
 * columns the load reads only (csv_reader_table_columns). */
int table__reader_wants(const table *t, csv_reader *reader, ak_error *err);

#endif
