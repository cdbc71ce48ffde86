/* memtable.h — the anonkit_table of the public API: a table held in memory
 * column by column (double or int64, copied or borrowed; text as Arrow's
 * offsets + bytes or in dictionary form; each with a byte-per-row missing
 * mask); its rows as the CSV reader's fields and a published table built
 * column by column or field by field (memtable_rows.c, the reader's and the
 * writer's table backends, no CSV text); its CSV form for the private copy a
 * run that reads files gets (io/source.h); and the sink that turns a
 * published CSV back into a table (docs/python.md, ARCHITECTURE.md §3). */
#ifndef AK_MEMTABLE_H
#define AK_MEMTABLE_H

#include <stdint.h>
#include <stdio.h>

#include "anonkit/anonkit.h"
#include "common/error.h"
#include "io/csv.h"
#include "io/source.h"

/* One column. Exactly one of d, i, (off, bytes) is used, by kind; missing
 * holds one byte per row (non-zero: missing), NULL while no row is missing. */
typedef struct memcol {
    char *name;
    int kind;          /* ANONKIT_COLUMN_* */
    double *d;
    int64_t *i;
    int64_t *off;      /* text: rows + 1 offsets into bytes, off[0] = 0 */
    char *bytes;
    size_t bytes_cap;
    uint8_t *missing;
    uint64_t cap;      /* rows the arrays have room for */
    int borrowed;      /* d or i is the caller's array (anonkit_table_add_*_ref): read, never freed */
    /* A text column in dictionary form (a published table's generalized
     * columns): codes[r] is row r's index among the ndict distinct values,
     * which (off, bytes) then hold, -1 when missing; row_off / row_bytes
     * its text form row by row, made by the first anonkit_table_column_text. */
    int32_t *codes;
    uint32_t ndict;
    int64_t *row_off;
    char *row_bytes;
} memcol;

struct anonkit_table {
    memcol *cols;
    uint32_t ncols, cap;
    uint64_t nrows;
    char errmsg[512];
};

/* The text of row r of text column c (not missing): of its value in
 * dictionary form, or its own. */
static inline const char *memcol_text(const memcol *c, uint64_t r, size_t *len)
{
    const uint64_t i = c->codes ? (uint64_t)c->codes[r] : r;
    *len = (size_t)(c->off[i + 1] - c->off[i]);
    return *len ? c->bytes + c->off[i] : "";
}

/* Writes t as CSV with `delimiter` to f: a header line of the column names
 * when `header`, then the rows; a missing value is an empty field, a double
 * its shortest text that reads back exactly (ak_format_double). */
int memtable_write_csv(const anonkit_table *t, FILE *f, char delimiter, int header, const char *shown,
                       ak_error *err);

/* The texts memtable_write_csv gives a number (memtable.c). */
int memtable_format_int64(char *buf, int64_t v);
int memtable_format_double(char *buf, double v);
/* Whether s[0..len) is an int64 as memtable_format_int64 writes one (into *v). */
int memtable_plain_int64(const char *s, size_t len, int64_t *v);
/* Whether s[0..len) is a finite double whose shortest text is s itself (into *v). */
int memtable_plain_double(const char *s, size_t len, double *v);
/* The next column slot of t (t->cols[t->ncols], zeroed, not yet counted),
 * the array grown when full; NULL when out of memory. */
memcol *memtable_column_slot(anonkit_table *t);
/* Turns text column c of `rows` rows into int64 or double when every present
 * value reads back as its own text in that kind (memtable_from_csv's rule). */
int memtable_col_narrow(memcol *c, uint64_t rows);

/* Tests only: the text memtable_write_csv gives a double, which must be
 * ak_format_double's (common/interval.h) byte for byte. */
int memtable__format_double(char *buf, double v);
/* Tests only: the text memtable_write_csv gives an int64 (printf's %lld). */
int memtable__format_int64(char *buf, int64_t v);

/* Reads the CSV in csv (from its start, header first) into a new table.
 * Empty fields are missing. A column whose every present value is a plain
 * integer becomes int64; else one whose every present value is a number
 * whose shortest text is the field itself becomes double; else text. So
 * every field's text is kept exactly. */
int memtable_from_csv(anonkit_table **out /* OUT */, FILE *csv, char delimiter, const char *shown, ak_error *err);

/* A copy of src that owns all its arrays (borrowed numbers copied, text in
 * dictionary form kept so): for a table read after the call that gave it
 * (a job's hierarchy tables). ANONKIT_E_NOMEM or ANONKIT_E_USAGE. */
int memtable_copy(anonkit_table **out /* OUT */, const anonkit_table *src);

/* ---- memtable_rows.c: the rows of a table as CSV fields, and a published
 * table built column by column ---- */

/* Scratch bytes per column that memtable_record needs (a number's text and
 * the reader's padding). */
#define MEMTABLE_NUMBER_SCRATCH 48

/* The fields of data row `row` of t into fields[c] for the ncols columns c
 * of cols (NULL: columns 0 .. ncols), exactly as the CSV reader would hand
 * them out of t's CSV form (memtable_write_csv): a text cell points into
 * the table's bytes (readable CSV_FIELD_READABLE bytes on), a missing cell
 * is the empty field, a number is its text in scratch
 * (MEMTABLE_NUMBER_SCRATCH bytes per column). The other fields are left as
 * they are (the reader empties the columns it skips once). */
void memtable_record(const anonkit_table *t, uint64_t row, csv_field *fields, char *scratch, const uint32_t *cols,
                     uint32_t ncols);

/* Adds text column `name` in dictionary form to t: codes[0 .. n) (-1:
 * missing) index the ndict values (off, bytes), rows + 1 offsets; the
 * arrays are taken (freed with t, or here on failure). The column becomes
 * int64 or double by the rule of memtable_from_csv applied to the values
 * the rows use, so it has the kind a published CSV read back would have; a
 * text column keeps only the values its rows use (renumbered in their
 * order). An empty value must be given as missing. */
int memtable_add_coded(anonkit_table *t, const char *name, int32_t *codes, uint64_t n, int64_t *off, char *bytes,
                       uint32_t ndict, ak_error *err);

/* Adds column `col` of src to t as a published copy of it: row i of the
 * new column is row order[i] of src, n rows, of the kind memtable_from_csv
 * would give src's CSV form of those rows (an int64 column stays int64, a
 * double column whose present values are all integers below 1e15 becomes
 * int64, a text column becomes a number when all its values read back as
 * their text; an empty text is missing). */
int memtable_add_gathered(anonkit_table *t, const anonkit_table *src, uint32_t col, const uint32_t *order, uint64_t n,
                          ak_error *err);

/* Moves column i of src to the end of dst (src keeps an empty slot, which
 * anonkit_table_free skips); for tables built in parts on several threads. */
int memtable_move_column(anonkit_table *dst, anonkit_table *src, uint32_t i, ak_error *err);

/* The CSV writer's table backend (csv_writer_open_table): field `col` of the
 * current row (the header's fields name new text columns) as text, an empty
 * field missing; the end of a row of `count` fields; at the end, every column
 * narrowed by memtable_from_csv's rule. The table is then exactly what
 * memtable_from_csv would read from the CSV the writer would have written. */
int memtable_writer_field(anonkit_table *t, int header, uint32_t col, const char *data, size_t len, ak_error *err);
int memtable_writer_row_end(anonkit_table *t, int header, uint32_t count, ak_error *err);
int memtable_writer_finish(anonkit_table *t, ak_error *err);

/* The sink of the name "table:" (io/source.h): the published CSV becomes a
 * table, handed to *o->table_out at commit. */
int sink_open_table(sink **out /* OUT */, const char *name, const source_options *o, ak_error *err);

#endif
