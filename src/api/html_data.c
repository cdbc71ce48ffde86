/* html_data.c (api) — the scan of a CSV file for the release report
 * (html.h): its rows grouped by their QI texts, as the verifier groups them
 * (src/verify/), for the class-size histogram and the risk per record
 * (1 / its class's size), and every QI's value counts for the distributions
 * of published and original values. Memory: one 64-bit hash and one count per
 * class, and at most HTML_MAX_VALUES distinct values per QI. */
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "api/html.h"

#include <stdlib.h>
#include <string.h>

#include "common/strbuf.h"
#include "io/csv.h"

/* Counts one more row with value v[0..len) of a QI. */
static int count_value(html_values *hv, const char *v, size_t len)
{
    uint32_t id = strmap_find(&hv->values, v, len);
    if (id == AK_NOT_FOUND) {
        if (hv->values.count >= HTML_MAX_VALUES) {
            hv->others++;
            return 0;
        }
        if (strmap_intern(&hv->values, v, len, &id, NULL) != 0) return -1;
        if (id >= hv->cap) {
            const size_t cap = hv->cap ? hv->cap * 2 : 256;
            uint64_t *c = realloc(hv->count, cap * sizeof *c);
            if (!c) return -1;
            memset(c + hv->cap, 0, (cap - hv->cap) * sizeof *c);
            hv->count = c;
            hv->cap = cap;
        }
    }
    hv->count[id]++;
    return 0;
}

/* Counts one more row of the group with key hash h. */
static int count_group(html_scan *s, uint64_t h)
{
    uint32_t id;
    if (u64map_intern(&s->groups, h, &id, NULL) != 0) return -1;
    if (id >= s->group_cap) {
        const size_t cap = s->group_cap ? s->group_cap * 2 : 1024;
        uint64_t *g = realloc(s->group_size, cap * sizeof *g);
        if (!g) return -1;
        memset(g + s->group_cap, 0, (cap - s->group_cap) * sizeof *g);
        s->group_size = g;
        s->group_cap = cap;
    }
    s->group_size[id]++;
    return 0;
}

void html_scan_free(html_scan *s)
{
    if (!s) return;
    for (size_t q = 0; s->qi && q < s->nqi; q++) {
        strmap_free(&s->qi[q].values);
        free(s->qi[q].count);
    }
    free(s->qi);
    if (s->groups.slots) u64map_free(&s->groups);
    free(s->group_size);
    memset(s, 0, sizeof *s);
}

int html_scan_file(const char *path, const char *shown, char delimiter, const char *const *qi, size_t nqi,
                   html_scan *s, ak_error *err)
{
    memset(s, 0, sizeof *s);
    csv_reader *rd = NULL;
    uint32_t *cols = NULL;
    char *key = NULL;
    size_t key_cap = 0, key_len = 0;
    int rc = csv_reader_open(&rd, path, delimiter, err);
    if (rc < 0) return rc;
    s->nqi = nqi;
    if (!(s->qi = calloc(nqi ? nqi : 1, sizeof *s->qi)) || !(cols = malloc((nqi ? nqi : 1) * sizeof *cols)) ||
        u64map_init(&s->groups, 1024) != 0) {
        rc = ak_err_nomem(err);
        goto done;
    }
    for (size_t q = 0; q < nqi; q++)
        if (strmap_init(&s->qi[q].values, 64) != 0) {
            rc = ak_err_nomem(err);
            goto done;
        }
    csv_record rec;
    if ((rc = csv_read(rd, &rec, err)) < 0) goto done;
    if (rc == 0) {
        rc = ak_err_set(err, ANONKIT_E_INPUT, shown, 1, 0, "the file is empty: it has no header row");
        goto done;
    }
    if ((rc = csv_find_columns(&rec, shown, qi, nqi, "--qi", cols, err)) < 0) goto done;
    const uint32_t ncols = rec.count;
    for (;;) {
        if ((rc = csv_read(rd, &rec, err)) < 0) goto done;
        if (rc == 0) break;
        if (rec.count != ncols) {
            rc = ak_err_set(err, ANONKIT_E_INPUT, shown, rec.line, 0, "the row has %u fields, the header %u",
                            rec.count, ncols);
            goto done;
        }
        int stars = 1;
        for (size_t q = 0; q < nqi; q++) {
            const csv_field *fl = &rec.fields[cols[q]];
            stars &= fl->len == 1 && fl->data[0] == '*';
            if (count_value(&s->qi[q], fl->data, fl->len) != 0) {
                rc = ak_err_nomem(err);
                goto done;
            }
        }
        if ((rc = csv_row_key(&rec, cols, nqi, &key, &key_cap, &key_len, err)) < 0) goto done;
        if (count_group(s, XXH3_64bits(key, key_len)) != 0) {
            rc = ak_err_nomem(err);
            goto done;
        }
        s->all_star += (uint64_t)stars;
        s->rows++;
    }
    rc = ANONKIT_OK;
done:
    csv_reader_free(rd);
    free(cols);
    free(key);
    if (rc < 0) html_scan_free(s);
    return rc;
}
