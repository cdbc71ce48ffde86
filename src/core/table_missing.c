/* table_missing.c — missing values while a table is encoded (table_missing.h;
 * docs/hierarchies.md, "Missing values"). */
#include "core/table_missing.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"
#include "core/hierbuild.h"
#include "core/numdict.h"

int table_is_missing(const table *t, const csv_field *f)
{
    const hb_missing m = {(const char *const *)t->missing, t->nmissing};
    return hb_is_missing(&m, f->data, f->len);
}

int tm_rows_add(tm_rows *r, int streaming, const csv_field *f, uint32_t *codes, size_t row, ak_error *err)
{
    if (!r->n && !r->streamed) snprintf(r->text, sizeof r->text, "%.*s", (int)(f->len < 63 ? f->len : 63), f->data);
    if (streaming) { /* (the rows are not kept: the code says it, and ranking maps it to 0) */
        r->streamed++;
        codes[row] = NUMDICT_MISSING;
        return ANONKIT_OK;
    }
    if (ak_reserve((void **)&r->rows, &r->cap, r->n + 1, sizeof *r->rows) != 0) return ak_err_nomem(err);
    r->rows[r->n++] = row;
    codes[row] = r->fill_set ? codes[r->fill_row] : 0; /* (its code now: the column may have left integer mode) */
    return ANONKIT_OK;
}

void tm_rows_fill(tm_rows *r, uint32_t *codes, size_t row)
{
    r->fill_row = row;
    r->fill_set = 1;
    for (size_t i = 0; i < r->n; i++) codes[r->rows[i]] = codes[row];
}

void tm_rows_reset(tm_rows *r)
{
    free(r->rows);
    r->rows = NULL;
    r->n = r->cap = 0;
    r->streamed = 0;
    r->fill_set = 0;
}

int tm_shift(table_qi *a, tm_rows *r, size_t nrows, ak_error *err)
{
    if (!r->n && !r->streamed) return ANONKIT_OK;
    if (!r->fill_set)
        return ak_err_set(err, ANONKIT_E_INPUT, NULL, 0, 0,
                          "quasi-identifier '%s' holds no number, only missing values: leave it out of --qi", a->name);
    const uint32_t n = a->ncodes;
    double *values = malloc(((size_t)n + 1) * sizeof *values);
    const char **texts = malloc(((size_t)n + 1) * sizeof *texts);
    size_t *at = malloc(((size_t)n + 1) * sizeof *at);
    strbuf store = {0};
    /* the spellings into a store of their own, the missing one last (integer
     * columns keep none: theirs are written now) */
    int rc = values && texts && at ? ANONKIT_OK : -1;
    for (uint32_t c = 0; c < n && rc == 0; c++) {
        char buf[24];
        const char *text = a->texts ? a->texts[c] : buf;
        const size_t len = a->texts ? strlen(text) : (size_t)numdict_format_int(buf, (int64_t)a->values[c]);
        at[c] = store.len;
        if (strbuf_append(&store, text, len) != 0 || strbuf_append(&store, "", 1) != 0) rc = -1;
    }
    if (rc == 0) {
        at[n] = store.len;
        if (strbuf_append(&store, r->text, strlen(r->text)) != 0 || strbuf_append(&store, "", 1) != 0) rc = -1;
    }
    if (rc != 0) {
        free(values);
        free(texts);
        free(at);
        strbuf_free(&store);
        return ak_err_nomem(err);
    }
    values[0] = a->values[0];
    for (uint32_t c = 0; c < n; c++) {
        values[c + 1] = a->values[c];
        texts[c + 1] = store.data + at[c];
    }
    texts[0] = store.data + at[n];
    free(at);
    free(a->values);
    free(a->texts);
    strbuf_free(&a->text_store);
    a->text_store = store;
    a->values = values;
    a->texts = texts;
    a->ncodes = n + 1;
    a->has_missing = 1;
    a->prov.missing = r->streamed > 0; /* a streaming load ranks its provisional codes through the map */
    for (size_t i = 0; a->codes && i < nrows; i++) a->codes[i]++;
    for (size_t i = 0; a->codes && i < r->n; i++) a->codes[r->rows[i]] = 0;
    return ANONKIT_OK;
}
