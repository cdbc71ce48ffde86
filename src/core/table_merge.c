/* table_merge.c — merging the dictionaries of a table read in shards
 * (docs/distributed.md §2; the encoding of docs/ARCHITECTURE.md §3 step 1):
 * a pack is, per numeric QI, u32 count then count values; then the sensitive
 * values and the class values the same way; a value is u32 length and bytes. */
#include "core/table_merge.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/numparse.h"

static int put_u32(strbuf *b, uint32_t v)
{
    unsigned char x[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16), (unsigned char)(v >> 24)};
    return strbuf_append(b, (const char *)x, 4);
}

static int put_text(strbuf *b, const char *s, size_t len)
{
    if (put_u32(b, (uint32_t)len) != 0) return -1;
    return strbuf_append(b, s, len);
}

/* A reader over a pack; ok drops to 0 on a short pack. */
typedef struct packrd {
    const unsigned char *p, *end;
    int ok;
} packrd;

static uint32_t get_u32(packrd *r)
{
    if (r->end - r->p < 4) {
        r->ok = 0;
        return 0;
    }
    const uint32_t v = (uint32_t)r->p[0] | (uint32_t)r->p[1] << 8 | (uint32_t)r->p[2] << 16 | (uint32_t)r->p[3] << 24;
    r->p += 4;
    return v;
}

static const char *get_text(packrd *r, uint32_t *len)
{
    *len = get_u32(r);
    if (!r->ok || (size_t)(r->end - r->p) < *len) {
        r->ok = 0;
        return NULL;
    }
    const char *s = (const char *)r->p;
    r->p += *len;
    return s;
}

int table_dict_pack(const table *t, strbuf *out, ak_error *err)
{
    char num[64];
    for (uint32_t q = 0; q < t->nqi; q++) {
        const table_qi *a = &t->qi[q];
        if (a->kind != ATTR_NUMERIC) continue;
        if (put_u32(out, a->ncodes) != 0) return ak_err_nomem(err);
        for (uint32_t c = 0; c < a->ncodes; c++) {
            const char *s = a->texts ? a->texts[c] : NULL;
            size_t len;
            if (s) len = strlen(s);
            else {
                len = (size_t)snprintf(num, sizeof num, "%.0f", a->values[c]);
                s = num;
            }
            if (put_text(out, s, len) != 0) return ak_err_nomem(err);
        }
    }
    const strmap *dicts[2] = {&t->sensitive_dict, &t->class_dict};
    for (int i = 0; i < 2; i++) {
        const uint32_t n = dicts[i]->slots ? dicts[i]->count : 0;
        if (put_u32(out, n) != 0) return ak_err_nomem(err);
        for (uint32_t c = 0; c < n; c++)
            if (put_text(out, strmap_key(dicts[i], c), strmap_key_len(dicts[i], c)) != 0) return ak_err_nomem(err);
    }
    return ANONKIT_OK;
}

typedef struct numval {
    ak_num v;
    const char *s;
    uint32_t len;
    size_t order;
} numval;

static int numval_cmp(const void *a, const void *b)
{
    const numval *x = a, *y = b;
    const int c = ak_num_cmp(&x->v, &y->v);
    if (c) return c;
    return x->order < y->order ? -1 : x->order > y->order;
}

/* Skips a section of count texts. */
static void skip_texts(packrd *r)
{
    const uint32_t n = get_u32(r);
    for (uint32_t i = 0; i < n && r->ok; i++) {
        uint32_t len;
        get_text(r, &len);
    }
}

static int bad_pack(ak_error *err)
{
    return ak_err_set(err, ANONKIT_E_INTERNAL, NULL, 0, 0, "a shard's dictionaries arrived damaged");
}

/* The merged dictionary of numeric QI q (its qi_index-th numeric QI). */
static int merge_numeric(table *schema, uint32_t q, uint32_t nth, const char *const *packs, const size_t *lens,
                         size_t npacks, ak_error *err)
{
    size_t total = 0, cap = 0;
    numval *all = NULL;
    int rc = ANONKIT_OK;
    for (size_t i = 0; i < npacks && rc == ANONKIT_OK; i++) {
        packrd r = {(const unsigned char *)packs[i], (const unsigned char *)packs[i] + lens[i], 1};
        for (uint32_t skip = 0; skip < nth && r.ok; skip++) skip_texts(&r);
        const uint32_t n = get_u32(&r);
        if (!r.ok) {
            rc = bad_pack(err);
            break;
        }
        if (total + n > cap) {
            size_t ncap = cap ? 2 * cap : 1024;
            while (ncap < total + n) ncap *= 2;
            numval *p = realloc(all, ncap * sizeof *p);
            if (!p) {
                rc = ak_err_nomem(err);
                break;
            }
            all = p;
            cap = ncap;
        }
        for (uint32_t c = 0; c < n; c++) {
            numval *v = &all[total];
            v->s = get_text(&r, &v->len);
            if (!r.ok || ak_num_parse_exact(v->s, v->len, &v->v) != 0) {
                rc = bad_pack(err);
                break;
            }
            v->order = total++;
        }
    }
    if (rc == ANONKIT_OK && total) qsort(all, total, sizeof *all, numval_cmp);
    size_t m = 0; /* distinct values, each its first spelling */
    for (size_t i = 0; rc == ANONKIT_OK && i < total; i++)
        if (!m || ak_num_cmp(&all[m - 1].v, &all[i].v) != 0) all[m++] = all[i];
    table_qi *a = &schema->qi[q];
    double *values = NULL;
    const char **texts = NULL;
    strbuf store = {0};
    size_t *off = NULL;
    if (rc == ANONKIT_OK) {
        values = malloc((m ? m : 1) * sizeof *values);
        texts = malloc((m ? m : 1) * sizeof *texts);
        off = malloc((m ? m : 1) * sizeof *off);
        if (!values || !texts || !off) rc = ak_err_nomem(err);
    }
    for (size_t i = 0; rc == ANONKIT_OK && i < m; i++) {
        values[i] = all[i].v.v;
        off[i] = store.len;
        if (strbuf_append(&store, all[i].s, all[i].len) != 0 || strbuf_append(&store, "", 1) != 0) rc = ak_err_nomem(err);
    }
    if (rc == ANONKIT_OK) {
        for (size_t i = 0; i < m; i++) texts[i] = store.data + off[i];
        free(a->values);
        free(a->texts);
        strbuf_free(&a->text_store);
        a->values = values;
        a->texts = texts;
        a->text_store = store;
        a->ncodes = (uint32_t)m;
    } else {
        free(values);
        free(texts);
        strbuf_free(&store);
    }
    free(off);
    free(all);
    return rc;
}

/* The merged sensitive (which 0) or class (1) dictionary: first appearance over the packs in order. */
static int merge_texts(table *schema, int which, uint32_t nnumeric, const char *const *packs, const size_t *lens,
                       size_t npacks, ak_error *err)
{
    strmap m;
    if (strmap_init(&m, 64) != 0) return ak_err_nomem(err);
    for (size_t i = 0; i < npacks; i++) {
        packrd r = {(const unsigned char *)packs[i], (const unsigned char *)packs[i] + lens[i], 1};
        for (uint32_t skip = 0; skip < nnumeric + (uint32_t)which && r.ok; skip++) skip_texts(&r);
        const uint32_t n = get_u32(&r);
        for (uint32_t c = 0; c < n && r.ok; c++) {
            uint32_t len, id;
            const char *s = get_text(&r, &len);
            if (r.ok && strmap_intern(&m, s, len, &id, NULL) != 0) {
                strmap_free(&m);
                return ak_err_nomem(err);
            }
        }
        if (!r.ok) {
            strmap_free(&m);
            return bad_pack(err);
        }
    }
    strmap *into = which ? &schema->class_dict : &schema->sensitive_dict;
    strmap_free(into);
    *into = m;
    return ANONKIT_OK;
}

int table_dict_merge(table *schema, const char *const *packs, const size_t *lens, size_t npacks, ak_error *err)
{
    uint32_t nth = 0;
    for (uint32_t q = 0; q < schema->nqi; q++) {
        if (schema->qi[q].kind != ATTR_NUMERIC) continue;
        AK_CHECK(merge_numeric(schema, q, nth, packs, lens, npacks, err));
        nth++;
    }
    AK_CHECK(merge_texts(schema, 0, nth, packs, lens, npacks, err));
    return merge_texts(schema, 1, nth, packs, lens, npacks, err);
}

void table_dict_maps_free(table_dict_maps *m)
{
    if (!m) return;
    for (uint32_t q = 0; m->num_map && q < m->nqi; q++) free(m->num_map[q]);
    free(m->num_map);
    free(m->sens_map);
    free(m->class_map);
    memset(m, 0, sizeof *m);
}

/* The global code of a numeric value (it is in the merged dictionary). */
static uint32_t find_numeric(const table_qi *a, const ak_num *v)
{
    size_t lo = 0, hi = a->ncodes;
    while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2;
        ak_num x;
        if (ak_num_parse_exact(a->texts[mid], strlen(a->texts[mid]), &x) != 0) return UINT32_MAX;
        const int c = ak_num_cmp(&x, v);
        if (c == 0) return (uint32_t)mid;
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    return UINT32_MAX;
}

int table_dict_maps_make(const table *schema, const char *pack, size_t len, table_dict_maps *out, ak_error *err)
{
    memset(out, 0, sizeof *out);
    out->nqi = schema->nqi;
    if (!(out->num_map = calloc(schema->nqi ? schema->nqi : 1, sizeof *out->num_map))) return ak_err_nomem(err);
    packrd r = {(const unsigned char *)pack, (const unsigned char *)pack + len, 1};
    int rc = ANONKIT_OK;
    for (uint32_t q = 0; q < schema->nqi && rc == ANONKIT_OK; q++) {
        if (schema->qi[q].kind != ATTR_NUMERIC) continue;
        const uint32_t n = get_u32(&r);
        if (!r.ok) break;
        if (!(out->num_map[q] = malloc((n ? n : 1) * sizeof **out->num_map))) rc = ak_err_nomem(err);
        for (uint32_t c = 0; c < n && rc == ANONKIT_OK; c++) {
            uint32_t tl;
            const char *s = get_text(&r, &tl);
            ak_num v;
            if (!r.ok || ak_num_parse_exact(s, tl, &v) != 0 ||
                (out->num_map[q][c] = find_numeric(&schema->qi[q], &v)) == UINT32_MAX)
                rc = bad_pack(err);
        }
    }
    const strmap *dicts[2] = {&schema->sensitive_dict, &schema->class_dict};
    for (int i = 0; i < 2 && rc == ANONKIT_OK && r.ok; i++) {
        const uint32_t n = get_u32(&r);
        uint32_t *map = malloc((n ? n : 1) * sizeof *map);
        if (!map) {
            rc = ak_err_nomem(err);
            break;
        }
        if (i) out->class_map = map;
        else out->sens_map = map;
        for (uint32_t c = 0; c < n && rc == ANONKIT_OK; c++) {
            uint32_t tl;
            const char *s = get_text(&r, &tl);
            if (!r.ok || (map[c] = strmap_find(dicts[i], s, tl)) == AK_NOT_FOUND) rc = bad_pack(err);
        }
    }
    if (rc == ANONKIT_OK && !r.ok) rc = bad_pack(err);
    if (rc < 0) table_dict_maps_free(out);
    return rc;
}
