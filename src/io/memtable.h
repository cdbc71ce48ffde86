/* memtable.h — the anonkit_table of the public API: a table held in memory
 * column by column (double, int64, or text as Arrow's offsets + bytes, each
 * with a byte-per-row missing mask), its CSV form for the one input spool
 * (io/source.h), and the sink that turns a published CSV back into a table
 * (docs/python.md, ARCHITECTURE.md §3). */
#ifndef AK_MEMTABLE_H
#define AK_MEMTABLE_H

#include <stdint.h>
#include <stdio.h>

#include "anonkit/anonkit.h"
#include "common/error.h"
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
} memcol;

struct anonkit_table {
    memcol *cols;
    uint32_t ncols, cap;
    uint64_t nrows;
    char errmsg[512];
};

/* Writes t as CSV with `delimiter` to f: a header line of the column names
 * when `header`, then the rows; a missing value is an empty field, a double
 * its shortest text that reads back exactly (ak_format_double). */
int memtable_write_csv(const anonkit_table *t, FILE *f, char delimiter, int header, const char *shown,
                       ak_error *err);

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

/* The sink of the name "table:" (io/source.h): the published CSV becomes a
 * table, handed to *o->table_out at commit. */
int sink_open_table(sink **out /* OUT */, const char *name, const source_options *o, ak_error *err);

#endif
