/* table_missing.h — missing values while a table is encoded
 * (docs/hierarchies.md, "Missing values"; docs/ARCHITECTURE.md §4): which
 * fields are missing, and the numeric QI's reserved code 0. Private to the
 * table loader (table.c). */
#ifndef AK_TABLE_MISSING_H
#define AK_TABLE_MISSING_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "core/table.h"
#include "io/csv.h"

/* The rows of one numeric QI holding a missing value. Until ranking they
 * carry the provisional code of the column's first present value (fill), so
 * that the dictionary ranks them like any row; tm_shift then gives them 0. */
typedef struct tm_rows {
    size_t *rows, n, cap;
    uint64_t streamed; /* a streaming load: the missing values read (their rows are not kept) */
    size_t fill_row; /* the row of that first present value (its code changes when the column leaves integer mode) */
    int fill_set;
    char text[64]; /* the first one's spelling, published for a class of missing values */
} tm_rows;

/* Whether field f of t is a missing value: empty, or one of t->missing. */
int table_is_missing(const table *t, const csv_field *f);

/* Records row `row` (field f) as missing. A streaming load (out of core)
 * keeps no rows: it codes the row NUMDICT_MISSING, which the column's map
 * ranks 0 once tm_shift has run. */
int tm_rows_add(tm_rows *r, int streaming, const csv_field *f, uint32_t *codes, size_t row, ak_error *err);

/* The column's first present value was just coded at codes[row]: the
 * missing rows read before it take that code until ranking. */
void tm_rows_fill(tm_rows *r, uint32_t *codes, size_t row);

/* Forgets every row (a load read again from the start). */
void tm_rows_reset(tm_rows *r);

/* After ranking: gives r's rows of numeric QI a the code 0 and moves the
 * present values up by one (values[0] repeats the least present value, so
 * that ranges and NCP see no spread; texts[0] is the missing spelling;
 * a->has_missing is set). After a streaming load (a->codes NULL) the
 * column's map a->prov ranks the same way. Nothing when r is empty. */
int tm_shift(table_qi *a, tm_rows *r, size_t nrows, ak_error *err);

#endif
