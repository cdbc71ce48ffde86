/* hierbuild_values.c — the values of a column as the hierarchy builders
 * collect them (hierbuild.h: hb_values): a value added with its count and
 * first line, the values of two parts of a file merged, the integers
 * counted by value moved into the map, and a column's missing tokens. The
 * collection itself is hierbuild_collect.c. */
#include "core/hierbuild.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/hierbuild_internal.h"

int hb_is_missing(const hb_missing *m, const char *text, size_t len)
{
    if (len == 0) return 1;
    if (!m || m->count == 0) return 0;
    for (size_t i = 0; m && i < m->count; i++)
        if (strlen(m->tokens[i]) == len && memcmp(m->tokens[i], text, len) == 0) return 1;
    return 0;
}

void hb_values_free(hb_values *v)
{
    strmap_free(&v->dict);
    free(v->count);
    free(v->line);
    free(v->file);
    free(v->dense);
    free(v->dense_line);
    free(v->bits);
    free(v->memo);
    memset(v, 0, sizeof *v);
}

/* Adds value text[0..len) first seen on `line`, n times, to v->dict; its id into *out_id (when not NULL). */
int hb__add_value(hb_values *v, const char *text, size_t len, long line, uint64_t n, uint32_t *out_id,
                  ak_error *err)
{
    uint32_t id;
    int inserted;
    if (strmap_intern(&v->dict, text, len, &id, &inserted) != 0) return ak_err_nomem(err);
    if (inserted) {
        const size_t old_cap = v->cap;
        if (ak_reserve((void **)&v->count, &v->cap, (size_t)id + 1, sizeof *v->count) != 0) return ak_err_nomem(err);
        if (v->cap != old_cap || !v->line) {
            long *lines = realloc(v->line, v->cap * sizeof *lines);
            if (!lines) return ak_err_nomem(err);
            v->line = lines;
        }
        v->count[id] = 0;
        v->line[id] = line;
    } else if (line < v->line[id]) {
        v->line[id] = line;
    }
    v->count[id] += n;
    if (out_id) *out_id = id;
    return ANONKIT_OK;
}

int hb__merge_values(hb_values *a, hb_values *b, long shift, ak_error *err)
{
    a->rows += b->rows;
    if (b->nmissing && !a->nmissing) a->missing_line = b->missing_line + shift;
    a->nmissing += b->nmissing;
    if (b->dense_lo <= b->dense_hi) {
        if (b->bits && a->bits)
            for (uint32_t w = b->dense_lo / 64; w <= b->dense_hi / 64; w++) a->bits[w] |= b->bits[w];
        if (b->dense && !a->dense) { /* (a has none: b's, its lines shifted) */
            a->dense = b->dense, a->dense_line = b->dense_line;
            b->dense = b->dense_line = NULL;
            for (uint32_t x = b->dense_lo; x <= b->dense_hi; x++)
                if (a->dense[x]) a->dense_line[x] += (uint32_t)shift;
        } else if (b->dense) {
            for (uint32_t x = b->dense_lo; x <= b->dense_hi; x++) {
                if (!b->dense[x]) continue;
                if (!a->dense[x]) a->dense_line[x] = b->dense_line[x] + (uint32_t)shift;
                a->dense[x] += b->dense[x];
            }
        }
        if (b->dense_lo < a->dense_lo) a->dense_lo = b->dense_lo;
        if (b->dense_hi > a->dense_hi) a->dense_hi = b->dense_hi;
    }
    for (uint32_t id = 0; id < b->dict.count; id++) /* (in b's order: values new to a keep their order of first sight) */
        AK_CHECK(hb__add_value(a, strmap_key(&b->dict, id), strmap_key_len(&b->dict, id), b->line[id] + shift,
                           b->count[id], NULL, err));
    return ANONKIT_OK;
}

/* Moves the integers counted by value into v->dict, ascending (after the
 * values read as text, so ids keep that order). */
int hb__fold_dense(hb_values *v, ak_error *err)
{
    if (!v->dense) return ANONKIT_OK;
    if (v->dict.count == 0) { /* the map sized for them at once, rather than grown step by step */
        size_t distinct = 0;
        for (uint32_t x = v->dense_lo; x <= v->dense_hi; x++) distinct += v->dense[x] != 0;
        strmap_free(&v->dict);
        if (strmap_init(&v->dict, distinct) != 0) return ak_err_nomem(err);
    }
    for (uint32_t x = v->dense_lo; x <= v->dense_hi; x++) {
        if (!v->dense[x]) continue;
        char buf[16];
        const int len = snprintf(buf, sizeof buf, "%u", x);
        AK_CHECK(hb__add_value(v, buf, (size_t)len, (long)v->dense_line[x], v->dense[x], NULL, err));
    }
    free(v->dense);
    free(v->dense_line);
    v->dense = v->dense_line = NULL;
    return ANONKIT_OK;
}
