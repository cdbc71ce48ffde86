/* memtable_rows.c — a table in memory (memtable.h) without its CSV form: its
 * rows handed to the CSV reader as fields (csv_reader_open_table, the
 * reader's table backend), and a published table built column by column by
 * the writer (publish/table_out.c): generalized columns in dictionary form,
 * copied columns gathered from the input table by row. The kinds of the
 * columns are those the "table:" sink gives the CSV form of the same rows
 * (memtable_from_csv), so both ways publish the same table. */
#define _GNU_SOURCE
#include "io/memtable.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void memtable_record(const anonkit_table *t, uint64_t row, csv_field *fields, char *scratch, const uint32_t *cols,
                     uint32_t ncols)
{
    for (uint32_t i = 0; i < ncols; i++) {
        const uint32_t ci = cols ? cols[i] : i;
        const memcol *c = &t->cols[ci];
        csv_field *f = &fields[ci];
        if (c->missing && c->missing[row]) {
            f->data = "";
            f->len = 0;
        } else if (c->kind == ANONKIT_COLUMN_TEXT) {
            size_t len;
            f->data = memcol_text(c, row, &len);
            f->len = (uint32_t)len;
        } else {
            char *buf = scratch + (size_t)ci * MEMTABLE_NUMBER_SCRATCH;
            const int n = c->kind == ANONKIT_COLUMN_DOUBLE ? memtable_format_double(buf, c->d[row])
                                                           : memtable_format_int64(buf, c->i[row]);
            memset(buf + n, 0, CSV_FIELD_READABLE);
            f->data = buf;
            f->len = (uint32_t)n;
        }
    }
}

/* Adds an empty column slot named `name` to t for n rows; NULL when out of
 * memory (the table's own checks of names are not needed: the writer's
 * column names are the input's, distinct). */
static memcol *new_column(anonkit_table *t, const char *name, uint64_t n)
{
    memcol *c = memtable_column_slot(t);
    if (!c) return NULL;
    if (!(c->name = strdup(name))) return NULL;
    c->cap = n;
    t->ncols++;
    t->nrows = n;
    return c;
}

/* A missing mask for n rows, one byte each, all present; NULL when out of memory. */
static uint8_t *new_mask(uint64_t n) { return calloc(n ? (size_t)n : 1, 1); }

int memtable_add_coded(anonkit_table *t, const char *name, int32_t *codes, uint64_t n, int64_t *off, char *bytes,
                       uint32_t ndict, ak_error *err)
{
    /* which values the rows use, and whether any row is missing */
    uint8_t *used = calloc(ndict ? ndict : 1, 1);
    int any_missing = 0;
    if (!used) goto nomem;
    for (uint64_t r = 0; r < n; r++) {
        if (codes[r] < 0) any_missing = 1;
        else used[codes[r]] = 1;
    }
    /* the kind: int64 when every used value is a plain integer, else double
     * when every one is a double's shortest text, else text (memtable_col_narrow's rule) */
    int can_int = 1, can_double = 1, present = 0;
    for (uint32_t v = 0; v < ndict && (can_int || can_double); v++) {
        if (!used[v]) continue;
        present = 1;
        const char *s = bytes + off[v];
        const size_t len = (size_t)(off[v + 1] - off[v]);
        int64_t iv;
        double dv;
        if (can_int && !memtable_plain_int64(s, len, &iv)) can_int = 0;
        if (!can_int && can_double && !memtable_plain_double(s, len, &dv)) can_double = 0;
    }
    memcol *c = new_column(t, name, n);
    if (!c) goto nomem;
    if (any_missing && !(c->missing = new_mask(n))) goto nomem;
    if (c->missing)
        for (uint64_t r = 0; r < n; r++) c->missing[r] = codes[r] < 0;
    if (present && (can_int || can_double)) {
        /* numbers: each value parsed once, the rows gathered */
        const size_t nd = ndict ? ndict : 1;
        int64_t *iv = can_int ? calloc(nd, sizeof *iv) : NULL;
        double *dv = can_int ? NULL : calloc(nd, sizeof *dv);
        if (!iv && !dv) goto nomem;
        for (uint32_t v = 0; v < ndict; v++) {
            if (!used[v]) continue;
            const char *s = bytes + off[v];
            const size_t len = (size_t)(off[v + 1] - off[v]);
            if (iv) (void)memtable_plain_int64(s, len, &iv[v]);
            else (void)memtable_plain_double(s, len, &dv[v]);
        }
        c->kind = iv ? ANONKIT_COLUMN_INT64 : ANONKIT_COLUMN_DOUBLE;
        if (iv && !(c->i = malloc((n ? (size_t)n : 1) * sizeof *c->i))) {
            free(iv);
            goto nomem;
        }
        if (dv && !(c->d = malloc((n ? (size_t)n : 1) * sizeof *c->d))) {
            free(dv);
            goto nomem;
        }
        for (uint64_t r = 0; r < n; r++) {
            if (iv) c->i[r] = codes[r] < 0 ? 0 : iv[codes[r]];
            else c->d[r] = codes[r] < 0 ? 0 : dv[codes[r]];
        }
        free(iv);
        free(dv);
        free(codes);
        free(off);
        free(bytes);
    } else {
        /* only the values the rows use stay (a reader of the codes gets no
         * value that is not in the column): the others dropped, codes renumbered */
        uint32_t kept = 0;
        for (uint32_t v = 0; v < ndict; v++) kept += used[v];
        if (kept < ndict) {
            uint32_t *id = malloc((size_t)ndict * sizeof *id);
            if (!id) goto nomem;
            int64_t at = 0;
            for (uint32_t v = 0, k = 0; v < ndict; v++) {
                if (!used[v]) continue;
                const int64_t len = off[v + 1] - off[v], from = off[v]; /* (off[k] may be overwritten below) */
                memmove(bytes + at, bytes + from, (size_t)len);
                off[k] = at;
                at += len;
                id[v] = k++;
            }
            off[kept] = at;
            memset(bytes + at, 0, CSV_FIELD_READABLE);
            for (uint64_t r = 0; r < n; r++)
                if (codes[r] >= 0) codes[r] = (int32_t)id[codes[r]];
            free(id);
            ndict = kept;
        }
        c->kind = ANONKIT_COLUMN_TEXT;
        c->codes = codes;
        c->ndict = ndict;
        c->off = off;
        c->bytes = bytes;
        c->bytes_cap = ndict ? (size_t)off[ndict] : 0;
    }
    free(used);
    return ANONKIT_OK;
nomem:
    free(used);
    free(codes);
    free(off);
    free(bytes);
    return ak_err_nomem(err);
}

/* memtable_add_gathered for a text column: the texts of the rows, an empty
 * one missing, then memtable_col_narrow. */
static int gather_text(memcol *c, const memcol *s, const uint32_t *order, uint64_t n)
{
    size_t total = 0;
    for (uint64_t i = 0; i < n; i++) {
        size_t len;
        if (!(s->missing && s->missing[order[i]])) (void)memcol_text(s, order[i], &len), total += len;
    }
    c->kind = ANONKIT_COLUMN_TEXT;
    if (!(c->off = malloc(((size_t)n + 1) * sizeof *c->off)) || !(c->bytes = malloc(total + CSV_FIELD_READABLE)))
        return -1;
    c->bytes_cap = total;
    c->off[0] = 0;
    int64_t at = 0;
    for (uint64_t i = 0; i < n; i++) {
        const uint32_t r = order[i];
        size_t len = 0;
        const char *text = s->missing && s->missing[r] ? "" : memcol_text(s, r, &len);
        if (!len) {
            if (!c->missing && !(c->missing = new_mask(n))) return -1;
            c->missing[i] = 1;
        }
        memcpy(c->bytes + at, text, len);
        at += (int64_t)len;
        c->off[i + 1] = at;
    }
    memset(c->bytes + at, 0, CSV_FIELD_READABLE); /* the reader's padding (csv.h) */
    return memtable_col_narrow(c, n);
}

/* memtable_add_gathered for a text column in dictionary form (a categorical
 * or factorized column given with anonkit_table_add_text_codes): the codes
 * gathered by row (an empty value or a missing cell: -1) with a copy of the
 * values, through memtable_add_coded, whose kind rule is memtable_col_narrow's
 * on the same texts; no text per row. */
static int gather_coded(anonkit_table *t, const memcol *s, const uint32_t *order, uint64_t n, ak_error *err)
{
    const uint32_t nd = s->ndict;
    const size_t total = nd ? (size_t)s->off[nd] : 0;
    int32_t *codes = malloc((n ? (size_t)n : 1) * sizeof *codes);
    int64_t *off = malloc(((size_t)nd + 1) * sizeof *off);
    char *bytes = malloc(total + CSV_FIELD_READABLE);
    int32_t *empty_to = malloc(((size_t)nd + 1) * sizeof *empty_to); /* code -> code, -1 for an empty value */
    if (!codes || !off || !bytes || !empty_to) {
        free(codes), free(off), free(bytes), free(empty_to);
        return ak_err_nomem(err);
    }
    for (uint32_t v = 0; v <= nd; v++) off[v] = s->off[v] - s->off[0];
    if (total) memcpy(bytes, s->bytes + s->off[0], total);
    memset(bytes + total, 0, CSV_FIELD_READABLE);
    for (uint32_t v = 0; v < nd; v++) empty_to[v] = off[v + 1] == off[v] ? -1 : (int32_t)v;
    for (uint64_t i = 0; i < n; i++) {
        const uint32_t r = order[i];
        const int32_t code = s->codes[r];
        codes[i] = code < 0 || (s->missing && s->missing[r]) ? -1 : empty_to[code];
    }
    free(empty_to);
    return memtable_add_coded(t, s->name, codes, n, off, bytes, nd, err);
}

int memtable_add_gathered(anonkit_table *t, const anonkit_table *src, uint32_t col, const uint32_t *order, uint64_t n,
                          ak_error *err)
{
    const memcol *s = &src->cols[col];
    if (s->kind == ANONKIT_COLUMN_TEXT && s->codes) return gather_coded(t, s, order, n, err);
    memcol *c = new_column(t, s->name, n);
    if (!c) return ak_err_nomem(err);
    const size_t rows = n ? (size_t)n : 1;
    if (s->kind == ANONKIT_COLUMN_TEXT) return gather_text(c, s, order, n) != 0 ? ak_err_nomem(err) : ANONKIT_OK;
    int any_missing = 0;
    uint64_t present = 0;
    for (uint64_t i = 0; i < n; i++) {
        const int m = s->missing && s->missing[order[i]];
        any_missing |= m;
        present += (uint64_t)!m;
    }
    if (!present) { /* no value at all: a text column of missing cells, as the CSV form reads back */
        c->kind = ANONKIT_COLUMN_TEXT;
        if (!(c->off = calloc(rows + 1, sizeof *c->off)) || !(c->missing = malloc(rows))) return ak_err_nomem(err);
        memset(c->missing, 1, rows);
        return ANONKIT_OK;
    }
    if (any_missing) {
        if (!(c->missing = new_mask(n))) return ak_err_nomem(err);
        for (uint64_t i = 0; i < n; i++) c->missing[i] = s->missing[order[i]] != 0;
    }
    if (s->kind == ANONKIT_COLUMN_INT64) {
        c->kind = ANONKIT_COLUMN_INT64;
        if (!(c->i = malloc(rows * sizeof *c->i))) return ak_err_nomem(err);
        for (uint64_t i = 0; i < n; i++) c->i[i] = s->i[order[i]];
        return ANONKIT_OK;
    }
    /* double: int64 when every present value is an integer below 1e15 (its
     * text is then an integer's, memtable_format_double), else double */
    int integral = 1;
    for (uint64_t i = 0; i < n && integral; i++) {
        if (c->missing && c->missing[i]) continue;
        const double v = s->d[order[i]];
        integral = v > -1e15 && v < 1e15 && v == (double)(int64_t)v;
    }
    if (integral) {
        c->kind = ANONKIT_COLUMN_INT64;
        if (!(c->i = malloc(rows * sizeof *c->i))) return ak_err_nomem(err);
        for (uint64_t i = 0; i < n; i++) c->i[i] = c->missing && c->missing[i] ? 0 : (int64_t)s->d[order[i]];
        return ANONKIT_OK;
    }
    c->kind = ANONKIT_COLUMN_DOUBLE;
    if (!(c->d = malloc(rows * sizeof *c->d))) return ak_err_nomem(err);
    for (uint64_t i = 0; i < n; i++) c->d[i] = c->missing && c->missing[i] ? 0 : s->d[order[i]];
    return ANONKIT_OK;
}

int memtable_move_column(anonkit_table *dst, anonkit_table *src, uint32_t i, ak_error *err)
{
    if (i >= src->ncols) return ak_err_set(err, ANONKIT_E_INTERNAL, NULL, 0, 0, "memtable_move_column: no column %u", i);
    memcol *c = memtable_column_slot(dst);
    if (!c) return ak_err_nomem(err);
    *c = src->cols[i];
    dst->ncols++;
    memset(&src->cols[i], 0, sizeof src->cols[i]); /* (freeing src frees nothing of it) */
    dst->nrows = src->nrows;
    return ANONKIT_OK;
}
