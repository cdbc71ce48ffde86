/* hierbuild_internal.h — shared by the builder files (hierbuild*.c): row
 * assembly and the numeric builders. */
#ifndef AK_HIERBUILD_INTERNAL_H
#define AK_HIERBUILD_INTERNAL_H

#include <string.h>

#include "core/hierbuild.h"

/* Starts the rows of a hierarchy of `width` labels per row in r, zeroed or
 * holding an earlier build whose arrays it keeps (emptied). */
int hb__rows_init(hb_rows *r, uint32_t width, ak_error *err);
/* The error of a hierarchy whose labels would pass HB_TEXT_MAX bytes. */
int hb__text_full(ak_error *err);
/* Appends label s[0..len) to the current row (a row is complete after width labels). */
int hb__put(hb_rows *r, const char *s, size_t len, ak_error *err);
/* The current row one label further (complete after width labels). */
static inline void hb__row_advance(hb_rows *r)
{
    if (++r->row == r->width) {
        r->row = 0;
        r->nrows++;
    }
}
/* Opens the next label of the current row for writing in place, at
 * r->text.data + r->text.len: its slot reserved and `room` bytes and a NUL
 * made free in r->text (the error of a hierarchy past HB_TEXT_MAX when they
 * would pass it). The caller writes at most room bytes, then hb__label_close. */
static inline int hb__label_open(hb_rows *r, size_t room, ak_error *err)
{
    const size_t slot = (size_t)r->nrows * r->width + r->row;
    if (slot >= r->cap && ak_reserve((void **)&r->at, &r->cap, slot + 1, sizeof *r->at) != 0) return ak_err_nomem(err);
    if (room >= HB_TEXT_MAX - r->text.len) return hb__text_full(err);
    if (strbuf_reserve(&r->text, room + 1) != 0) return ak_err_nomem(err);
    r->at[slot] = (uint32_t)r->text.len;
    return ANONKIT_OK;
}
/* Closes the label hb__label_open opened, len bytes written there. */
static inline void hb__label_close(hb_rows *r, size_t len)
{
    r->text.len += len;
    r->text.data[r->text.len++] = '\0';
    hb__row_advance(r);
}
/* Makes room for nrows rows and text_bytes of labels at once (a size known ahead). */
int hb__rows_reserve(hb_rows *r, size_t nrows, size_t text_bytes, ak_error *err);
/* hb__put_prev when the slot array must grow first. */
int hb__put_prev_grow(hb_rows *r, ak_error *err);
/* Appends the label of the same level in the row above (that row's bytes,
 * shared); inline: most labels above the leaves are shared (one interval's
 * rows), and the slots are mostly reserved ahead (hb__rows_reserve). */
static inline int hb__put_prev(hb_rows *r, ak_error *err)
{
    const size_t slot = (size_t)r->nrows * r->width + r->row;
    if (slot >= r->cap) return hb__put_prev_grow(r, err);
    r->at[slot] = r->at[slot - r->width];
    hb__row_advance(r);
    return ANONKIT_OK;
}
/* Completes the current row with the labels of the row above (hb__put_prev
 * for each level left): the rows of one interval above their leaves. */
static inline int hb__put_prev_rest(hb_rows *r, ak_error *err)
{
    const size_t slot = (size_t)r->nrows * r->width + r->row, k = r->width - r->row;
    if (slot + k > r->cap) {
        while (r->row) AK_CHECK(hb__put_prev(r, err)); /* (the array grows on the way) */
        return ANONKIT_OK;
    }
    uint32_t *to = r->at + slot;
    const uint32_t *from = to - r->width;
    if (k == 4) memcpy(to, from, 4 * sizeof *to); /* (a fixed size: two moves) */
    else
        for (size_t i = 0; i < k; i++) to[i] = from[i];
    r->row = 0;
    r->nrows++;
    return ANONKIT_OK;
}
/* Whether a[0..k) and b[0..k) hold the same offsets (the labels above the
 * leaf of two rows), two at a time. */
static inline int hb__same_offsets(const uint32_t *a, const uint32_t *b, uint32_t k)
{
    uint64_t x = 0;
    uint32_t j = 0;
    if (k == 4) { /* (the labels above the leaf of --fanout F,F: two words) */
        uint64_t u[2], v[2];
        memcpy(u, a, sizeof u);
        memcpy(v, b, sizeof v);
        return ((u[0] ^ v[0]) | (u[1] ^ v[1])) == 0;
    }
    for (; j + 2 <= k; j += 2) {
        uint64_t u, v;
        memcpy(&u, a + j, sizeof u);
        memcpy(&v, b + j, sizeof v);
        x |= u ^ v;
    }
    if (j < k) x |= a[j] ^ b[j];
    return x == 0;
}
/* Adds value text[0..len) first seen on `line`, n times, to v->dict; its id
 * into *out_id (when not NULL). */
int hb__add_value(hb_values *v, const char *text, size_t len, long line, uint64_t n, uint32_t *out_id,
                  ak_error *err);
/* Moves the integers counted by value into v->dict. */
int hb__fold_dense(hb_values *v, ak_error *err);
/* Adds the missing leaf's row when v has missing values (first, before the others):
 * HB_MISSING_LABEL on every level but the last, root_label there. */
int hb__missing_row(hb_rows *r, const hb_values *v, const char *root_label, ak_error *err);

/* hb_collect_columns over part of the file (hierbuild_threads.c): from 0,
 * the header and the records up to byte `to` (a line start; UINT64_MAX: no
 * limit), *whole set to 0 and *to_line to the line starting at `to` when the
 * fast scan stopped there, else to 1 (the whole file read: `to` had to be
 * passed, after a quote); from a line start `from` > 0, the header, then
 * the records from `from` to the end with lines counted from 1 there,
 * *whole 1, or *whole 0 and no values when the fast scan cannot start
 * (after a quote in the header or the first record). */
int hb__collect_range(hb_values *vs, size_t n, const char *const *columns, const int *presence,
                      const hb_missing *missing, const char *path, const char *shown, char delimiter, uint64_t from,
                      uint64_t to, int *whole, long *to_line, ak_error *err);
/* Adds the values of b (collected from a later part of the file, whose lines
 * are shift more than b says) to a; b keeps its values but for the dense
 * arrays a may take over. */
int hb__merge_values(hb_values *a, hb_values *b, long shift, ak_error *err);

/* The check of hb_check_sizes as first written (hierbuild_check.c): what
 * the faster one must agree with, and what tells why rows are refused. */
int hb__check_reference(const hb_rows *rows, const char *path, uint64_t *sizes, ak_error *err);

int hb__build_interval(const hb_values *v, const hb_options *o, hb_rows *rows, ak_error *err);
int hb__build_quantiles(const hb_values *v, const hb_options *o, hb_rows *rows, ak_error *err);

#endif
