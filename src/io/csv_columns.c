/* csv_columns.c — finding named columns in a CSV header and the text key of a
 * row's chosen fields: what every reader of a published file (the verifier,
 * the metrics) needs to group rows by their published QI texts, the classes
 * an attacker would see. Declared in csv.h. */
#include "io/csv.h"

#include <stdlib.h>
#include <string.h>

int csv_column_index(const csv_record *header, const char *name)
{
    const size_t len = strlen(name);
    for (uint32_t c = 0; c < header->count; c++)
        if (header->fields[c].len == len && memcmp(header->fields[c].data, name, len) == 0) return (int)c;
    return -1;
}

int csv_find_columns(const csv_record *header, const char *shown, const char *const *names, size_t n,
                     const char *what, uint32_t *cols, ak_error *err)
{
    for (size_t i = 0; i < n; i++) {
        const int c = csv_column_index(header, names[i]);
        if (c < 0) return ak_err_set(err, ANONKIT_E_USAGE, shown, 1, 0, "no column named '%s' (given as %s)", names[i], what);
        cols[i] = (uint32_t)c;
    }
    return ANONKIT_OK;
}

int csv_row_key(const csv_record *rec, const uint32_t *cols, size_t n, char **key, size_t *key_cap, size_t *len,
                ak_error *err)
{
    size_t need = 0;
    for (size_t i = 0; i < n; i++) need += 4 + rec->fields[cols[i]].len;
    if (need > *key_cap) {
        char *bigger = realloc(*key, need * 2);
        if (!bigger) return ak_err_nomem(err);
        *key = bigger;
        *key_cap = need * 2;
    }
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        const csv_field *f = &rec->fields[cols[i]];
        memcpy(*key + at, &f->len, 4);
        memcpy(*key + at + 4, f->data, f->len);
        at += 4 + f->len;
    }
    *len = at;
    return ANONKIT_OK;
}
