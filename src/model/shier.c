/* shier.c — the sensitive column's hierarchy for the hierarchical ground
 * distance of t-closeness ([Li07] §4.2), read with the io CSV reader (the
 * verifier may not use core/hierarchy.c): an ARX-style file, ';' separated,
 * one row per leaf listing the leaf and its ancestors up to the top. */
#include <stdlib.h>
#include <string.h>

#include "io/csv.h"
#include "model/closeness_internal.h"

void model_shier_free(model_shier *h)
{
    if (!h) return;
    strmap_free(&h->paths);
    strmap_free(&h->leaves);
    free(h->parent);
    free(h->level);
    free(h->leaf_node);
    free(h);
}

uint32_t shier_leaf(const model_shier *h, const char *label, uint32_t len)
{
    const uint32_t i = strmap_find(&h->leaves, label, len);
    return i == AK_NOT_FOUND ? UINT32_MAX : h->leaf_node[i];
}

/* Grows the per-node arrays to hold node `id`. */
static int grow(model_shier *h, uint32_t id, size_t *cap)
{
    if (id < *cap) return 0;
    const size_t nc = *cap ? *cap * 2 : 256;
    uint32_t *p = realloc(h->parent, nc * sizeof *p);
    if (!p) return -1;
    h->parent = p;
    uint32_t *l = realloc(h->level, nc * sizeof *l);
    if (!l) return -1;
    h->level = l;
    *cap = nc;
    return 0;
}

/* Reads one row: interns the node of every level (its path from it to the
 * top, labels joined by '\x1f') and links each to the one above; the leaf's
 * node into *leaf. -2: too many levels. */
static int add_row(model_shier *h, const csv_record *rec, char **buf, size_t *bufcap, size_t *cap, uint32_t *leaf)
{
    if (rec->count > 64) return -2;
    size_t end = rec->count - 1;
    for (uint32_t j = 0; j < rec->count; j++) end += rec->fields[j].len;
    if (end + 1 > *bufcap) {
        char *nb = realloc(*buf, end + 1);
        if (!nb) return -1;
        *buf = nb;
        *bufcap = end + 1;
    }
    size_t at = end;
    uint32_t above = UINT32_MAX;
    for (uint32_t j = rec->count; j-- > 0;) {
        const csv_field *f = &rec->fields[j];
        if (j + 1 < rec->count) (*buf)[--at] = '\x1f';
        at -= f->len;
        memcpy(*buf + at, f->data, f->len);
        uint32_t id;
        int inserted;
        if (strmap_intern(&h->paths, *buf + at, end - at, &id, &inserted) != 0) return -1;
        if (inserted) {
            if (grow(h, id, cap) != 0) return -1;
            h->parent[id] = above;
            h->level[id] = j;
        }
        above = id;
    }
    *leaf = above;
    return 0;
}

int model_shier_read(model_shier **out, const char *path, ak_error *err)
{
    *out = NULL;
    model_shier *h = calloc(1, sizeof *h);
    if (!h) return ak_err_nomem(err);
    csv_reader *rd = NULL;
    char *buf = NULL;
    size_t bufcap = 0, cap = 0, leafcap = 0;
    uint32_t width = 0;
    int rc = ANONKIT_OK;
    if (strmap_init(&h->paths, 64) || strmap_init(&h->leaves, 64)) { rc = ak_err_nomem(err); goto done; }
    if ((rc = csv_reader_open(&rd, path, ';', err)) < 0) goto done;
    for (;;) {
        csv_record rec;
        if ((rc = csv_read(rd, &rec, err)) < 0) goto done;
        if (rc == 0) break;
        if (rec.count == 1 && rec.fields[0].len == 0) continue; /* a blank line */
        if (!width) width = rec.count;
        if (rec.count != width) {
            rc = ak_err_set(err, ANONKIT_E_INPUT, path, rec.line, 0,
                            "expected %u levels as in the first row of the sensitive hierarchy, found %u", width,
                            rec.count);
            goto done;
        }
        uint32_t leaf, idx;
        int inserted;
        const int r = add_row(h, &rec, &buf, &bufcap, &cap, &leaf);
        if (r == -2) { rc = ak_err_set(err, ANONKIT_E_INPUT, path, rec.line, 0, "more than 64 levels"); goto done; }
        if (r != 0 || strmap_intern(&h->leaves, rec.fields[0].data, rec.fields[0].len, &idx, &inserted) != 0) {
            rc = ak_err_nomem(err);
            goto done;
        }
        if (!inserted) {
            rc = ak_err_set(err, ANONKIT_E_INPUT, path, rec.line, 1, "leaf '%s' appears twice in the hierarchy",
                            AK_SHOW(rec.fields[0].data, rec.fields[0].len));
            goto done;
        }
        if (idx >= leafcap) {
            const size_t nc = leafcap ? leafcap * 2 : 64;
            uint32_t *ln = realloc(h->leaf_node, nc * sizeof *ln);
            if (!ln) { rc = ak_err_nomem(err); goto done; }
            h->leaf_node = ln;
            leafcap = nc;
        }
        h->leaf_node[idx] = leaf;
    }
    if (!width) { rc = ak_err_set(err, ANONKIT_E_INPUT, path, 1, 0, "the sensitive hierarchy is empty"); goto done; }
    h->nnodes = h->paths.count;
    h->height = width - 1;
    uint32_t tops = 0;
    for (uint32_t i = 0; i < h->nnodes; i++) tops += h->parent[i] == UINT32_MAX;
    if (tops > 1) { /* a root above the several tops */
        if (grow(h, h->nnodes, &cap) != 0) { rc = ak_err_nomem(err); goto done; }
        const uint32_t root = h->nnodes++;
        for (uint32_t i = 0; i < root; i++)
            if (h->parent[i] == UINT32_MAX) h->parent[i] = root;
        h->parent[root] = UINT32_MAX;
        h->level[root] = width;
        h->height = width;
    }
    rc = ANONKIT_OK;
done:
    csv_reader_free(rd);
    free(buf);
    if (rc < 0) model_shier_free(h);
    else *out = h;
    return rc;
}
