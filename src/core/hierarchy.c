/* hierarchy.c — generalization hierarchies (taxonomy trees), docs/ARCHITECTURE.md §4.
 *
 * Owns: loading an ARX-style hierarchy file into a tree, and the tree itself
 * (node array, child index array, one label strmap per file level). Lookups:
 * leaf by value, node by label, ancestor at a level, and the lowest common
 * ancestor of a leaf code range in O(height).
 *
 * Layout. Nodes are stored level by level, leaves first, and within a level in
 * code (depth-first, left-to-right) order; the root is the last node. Hence the
 * leaf with code c is node c, and the children of every node are consecutive
 * node indices. Labels live in the per-level strmaps (each label once per
 * level; the maps are not touched after loading, so the label pointers handed
 * out stay valid until hier_free), except the synthetic root's "*", which is a
 * string literal.
 *
 * Loading is two passes: the rows are streamed once through the CSV reader,
 * interning every label in its level's map (ids in order of first appearance)
 * and recording each label's parent and first line; then the tree is laid out
 * top-down, each level's order being its parents' order with each parent's
 * children in id (= first appearance) order.
 *
 * Rows embedded in another file (the recoding rules, publish/rules.c) take the
 * same first pass row by row through a hier_builder, with that file's lines.
 *
 * Every label names one node: check_labels_unique refuses, once the tree is
 * laid out, a label on two levels whose nodes cover different leaves.
 *
 * Beyond hierarchy.h: a UTF-8 byte order mark before the first leaf is
 * ignored; blank lines are an error unless only blank lines follow; at most
 * HIER_MAX_LEVELS fields per row. */
#include "core/hierarchy.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "io/csv.h"

/* Fields per row beyond which a file is rejected: every level costs a label
 * map of its own, and no real taxonomy is anywhere near this deep. */
#define HIER_MAX_LEVELS 4096u
/* Longest label quoted in an error message. */
#define MSG_LABEL_MAX 200

#define NONE UINT32_MAX

struct hier {
    char *path;
    uint32_t nleaves, nnodes, height, root;
    uint32_t nfile_levels;  /* levels read from the file (fields per row) */
    int synthetic_root;     /* 1 when the root "*" was added above the file's top level */
    hier_node *nodes;       /* nnodes, see the layout above */
    uint32_t *children;     /* nnodes - 1 child node indices */
    strmap *labels;         /* labels[l], l < nfile_levels */
    uint32_t *level_base;   /* node index of the first node of level l, l <= height */
    uint32_t *node_of;      /* node_of[level_base[l] + label id] = node index, l < nfile_levels */
};

/* What the first pass records about the labels of one file level. */
typedef struct level_info {
    uint32_t *parent; /* parent[id] = label id at the next level, NONE at the top */
    long *line;       /* line[id] = line on which the label first appeared */
    size_t cap;
} level_info;

typedef struct loader {
    const char *path;
    uint32_t nfields;   /* fields per row, 0 until the first row */
    long first_line;    /* line of the first row (the one nfields comes from) */
    strmap *maps;       /* nfields label maps */
    level_info *info;   /* nfields */
    uint32_t *ids;      /* nfields scratch: the label ids of the current row */
    int *inserted;      /* nfields scratch */
    ak_error *err;
    long line_shift;    /* added to each record's line: -1 for a table's rows, which the reader numbers from 2 */
} loader;

static void loader_free(loader *ld)
{
    if (ld->maps) {
        for (uint32_t l = 0; l < ld->nfields; l++) strmap_free(&ld->maps[l]);
    }
    if (ld->info) {
        for (uint32_t l = 0; l < ld->nfields; l++) {
            free(ld->info[l].parent);
            free(ld->info[l].line);
        }
    }
    free(ld->maps);
    free(ld->info);
    free(ld->ids);
    free(ld->inserted);
    ld->maps = NULL;
    ld->info = NULL;
    ld->ids = NULL;
    ld->inserted = NULL;
}

/* Sets up the per-level state once the first row has told the field count. */
static int loader_start(loader *ld, uint32_t nfields, long line)
{
    if (nfields > HIER_MAX_LEVELS)
        return ak_err_set(ld->err, ANONKIT_E_INPUT, ld->path, line, 0,
                          "%u fields in a row; a hierarchy may have at most %u levels",
                          nfields, HIER_MAX_LEVELS);
    ld->maps = calloc(nfields, sizeof *ld->maps);
    ld->info = calloc(nfields, sizeof *ld->info);
    ld->ids = malloc(nfields * sizeof *ld->ids);
    ld->inserted = malloc(nfields * sizeof *ld->inserted);
    if (!ld->maps || !ld->info || !ld->ids || !ld->inserted) return ak_err_nomem(ld->err);
    /* From here loader_free walks nfields maps; strmap_free of a zeroed map is harmless. */
    ld->nfields = nfields;
    ld->first_line = line;
    for (uint32_t l = 0; l < nfields; l++) {
        if (strmap_init(&ld->maps[l], l == 0 ? 256 : 16) != 0) return ak_err_nomem(ld->err);
    }
    return ANONKIT_OK;
}

/* Makes room for label id `id` in a level's info arrays. */
static int level_reserve(level_info *li, uint32_t id)
{
    if (id < li->cap) return 0;
    size_t cap = li->cap ? li->cap * 2 : 64;
    while (cap <= id) cap *= 2;
    uint32_t *parent = realloc(li->parent, cap * sizeof *parent);
    if (!parent) return -1;
    li->parent = parent;
    long *line = realloc(li->line, cap * sizeof *line);
    if (!line) return -1;
    li->line = line;
    li->cap = cap;
    return 0;
}

static int label_len(uint32_t len) { return len > MSG_LABEL_MAX ? MSG_LABEL_MAX : (int)len; }

/* First pass, one row: intern its labels and check it against the rows before. */
static int loader_row(loader *ld, const csv_record *rec)
{
    if (rec->count != ld->nfields)
        return ak_err_set(ld->err, ANONKIT_E_INPUT, ld->path, rec->line, 0,
                          "expected %u field%s like line %ld, got %u", ld->nfields,
                          ld->nfields == 1 ? "" : "s", ld->first_line, rec->count);
    for (uint32_t l = 0; l < ld->nfields; l++) {
        if (rec->fields[l].len == 0)
            return ak_err_set(ld->err, ANONKIT_E_INPUT, ld->path, rec->line, (long)l + 1,
                              "empty label in field %u (level %u)", l + 1, l);
        /* labels are published and looked up as C strings: a NUL would cut one short */
        if (memchr(rec->fields[l].data, '\0', rec->fields[l].len))
            return ak_err_set(ld->err, ANONKIT_E_INPUT, ld->path, rec->line, (long)l + 1,
                              "label in field %u (level %u) holds a NUL byte", l + 1, l);
    }
    for (uint32_t l = 0; l < ld->nfields; l++) {
        csv_field f = rec->fields[l];
        uint32_t id;
        int ins;
        if (strmap_intern(&ld->maps[l], f.data, f.len, &id, &ins) != 0)
            return ak_err_nomem(ld->err);
        level_info *li = &ld->info[l];
        if (ins) {
            if (level_reserve(li, id) != 0) return ak_err_nomem(ld->err);
            li->parent[id] = NONE;
            li->line[id] = rec->line;
        } else if (l == 0) {
            return ak_err_set(ld->err, ANONKIT_E_INPUT, ld->path, rec->line, 0,
                              "duplicate leaf \"%.*s\" (first on line %ld)",
                              label_len(f.len), f.data, li->line[id]);
        }
        ld->ids[l] = id;
        ld->inserted[l] = ins;
    }
    for (uint32_t l = 0; l + 1 < ld->nfields; l++) {
        level_info *li = &ld->info[l];
        uint32_t id = ld->ids[l], pid = ld->ids[l + 1];
        if (ld->inserted[l]) {
            li->parent[id] = pid;
        } else if (li->parent[id] != pid) {
            const strmap *m = &ld->maps[l], *pm = &ld->maps[l + 1];
            uint32_t old = li->parent[id];
            return ak_err_set(
                ld->err, ANONKIT_E_INPUT, ld->path, rec->line, 0,
                "\"%.*s\" at level %u has two parents: \"%.*s\" (line %ld) and \"%.*s\"",
                label_len(strmap_key_len(m, id)), strmap_key(m, id), l,
                label_len(strmap_key_len(pm, old)), strmap_key(pm, old), li->line[id],
                label_len(strmap_key_len(pm, pid)), strmap_key(pm, pid));
        }
    }
    return ANONKIT_OK;
}

/* First pass: streams the file through the loader. Blank lines are errors
 * unless only blank lines follow them. */
static int loader_read(loader *ld, csv_reader *rd)
{
    csv_record rec;
    long blank_line = 0; /* first of the blank lines not yet followed by a row */
    int rc;
    while ((rc = csv_read(rd, &rec, ld->err)) > 0) {
        rec.line += ld->line_shift;
        if (rec.count == 1 && rec.fields[0].len == 0) {
            if (!blank_line) blank_line = rec.line;
            continue;
        }
        if (blank_line) {
            if (ld->nfields)
                return ak_err_set(ld->err, ANONKIT_E_INPUT, ld->path, blank_line, 0,
                                  "expected %u field%s like line %ld, got an empty line",
                                  ld->nfields, ld->nfields == 1 ? "" : "s", ld->first_line);
            return ak_err_set(ld->err, ANONKIT_E_INPUT, ld->path, blank_line, 0,
                              "empty line before the first row");
        }
        if (!ld->nfields) {
            AK_CHECK(loader_start(ld, rec.count, rec.line));
        }
        AK_CHECK(loader_row(ld, &rec));
    }
    if (rc < 0) return rc;
    if (!ld->nfields)
        return ak_err_set(ld->err, ANONKIT_E_INPUT, ld->path, 0, 0,
                          "hierarchy file is empty (expected one row per leaf)");
    return ANONKIT_OK;
}

/* Refuses a label that names two different nodes, which would publish alike
 * (a leaf "HS" and a level-2 "HS" above "BSc" too). A label may stand on
 * several levels only for nodes that cover the same leaves, the padding of a
 * leaf that is not generalized at some level ("Male;Male;*"); a "*" below the
 * top names another node than the root "*" added above several top labels.
 * Within one level a label is one node (a second parent is refused by
 * loader_row), so its repeats across rows are that node's. Runs on the laid
 * out tree, one pass over all labels with a map from label to its first node. */
static int check_labels_unique(const hier *h, const loader *ld)
{
    const uint32_t F = h->nfile_levels;
    const size_t total = h->level_base[F];
    strmap all;
    uint32_t *node_at = malloc((total ? total : 1) * sizeof *node_at); /* first node of each label */
    long *line_at = malloc((total ? total : 1) * sizeof *line_at);     /* and its first line */
    if (!node_at || !line_at || strmap_init(&all, total) != 0) {
        free(node_at);
        free(line_at);
        return ak_err_nomem(ld->err);
    }
    int rc = ANONKIT_OK;
    for (uint32_t l = 0; l < F && rc == ANONKIT_OK; l++) {
        const strmap *m = &h->labels[l];
        for (uint32_t id = 0; id < m->count; id++) {
            const char *key = strmap_key(m, id);
            const uint32_t len = strmap_key_len(m, id);
            const uint32_t node = h->node_of[h->level_base[l] + id];
            const hier_node *nd = &h->nodes[node];
            const long line = ld->info[l].line[id];
            if (h->synthetic_root && len == 1 && key[0] == '*' && (nd->lo != 0 || nd->hi + 1 != h->nleaves)) {
                rc = ak_err_set(ld->err, ANONKIT_E_INPUT, ld->path, line, 0,
                                "label \"*\" at level %u names another node than the root \"*\" that is added "
                                "above the %u labels of the top level: a label must name one node",
                                l, h->labels[F - 1].count);
                break;
            }
            uint32_t g;
            int ins;
            if (strmap_intern(&all, key, len, &g, &ins) != 0) {
                rc = ak_err_nomem(ld->err);
                break;
            }
            if (ins) {
                node_at[g] = node;
                line_at[g] = line;
                continue;
            }
            const hier_node *first = &h->nodes[node_at[g]];
            if (first->lo == nd->lo && first->hi == nd->hi) continue; /* one node padded upwards */
            rc = ak_err_set(ld->err, ANONKIT_E_INPUT, ld->path, line, 0,
                            "label \"%.*s\" at level %u names another node than \"%.*s\" at level %u (line %ld), "
                            "which covers other leaves: a label must name one node",
                            label_len(len), key, l, label_len(len), key, first->level, line_at[g]);
            break;
        }
    }
    strmap_free(&all);
    free(node_at);
    free(line_at);
    return rc;
}

/* Second pass: lays the tree out (see the top of the file). Takes over the
 * label maps from the loader. */
static int build_tree(hier *h, loader *ld)
{
    ak_error *err = ld->err;
    uint32_t F = ld->nfields;
    h->nfile_levels = F;
    h->synthetic_root = (F == 1 || ld->maps[F - 1].count > 1);
    h->height = h->synthetic_root ? F : F - 1;
    h->nleaves = ld->maps[0].count;

    h->level_base = malloc(((size_t)h->height + 2) * sizeof *h->level_base);
    if (!h->level_base) return ak_err_nomem(err);
    uint64_t total = 0;
    for (uint32_t l = 0; l <= h->height; l++) {
        h->level_base[l] = (uint32_t)total;
        total += l < F ? ld->maps[l].count : 1;
        if (total >= UINT32_MAX)
            return ak_err_set(err, ANONKIT_E_INPUT, ld->path, 0, 0,
                              "hierarchy has too many nodes (more than %u)", UINT32_MAX - 1);
    }
    h->level_base[h->height + 1] = (uint32_t)total;
    h->nnodes = (uint32_t)total;
    h->root = h->nnodes - 1;

    /* order[level_base[l] + k] = label id of the k-th node of level l. */
    uint32_t nfile_nodes = h->level_base[F];
    uint32_t *order = malloc((size_t)nfile_nodes * sizeof *order);
    uint32_t *start = malloc(((size_t)nfile_nodes + 1) * sizeof *start);
    uint32_t *bucket = malloc((size_t)nfile_nodes * sizeof *bucket);
    h->node_of = malloc((size_t)nfile_nodes * sizeof *h->node_of);
    h->nodes = calloc(h->nnodes, sizeof *h->nodes);
    h->children = malloc((size_t)(h->nnodes - 1) * sizeof *h->children);
    if (!order || !start || !bucket || !h->node_of || !h->nodes || !h->children) {
        free(order);
        free(start);
        free(bucket);
        return ak_err_nomem(err);
    }

    /* The file's top level: the root alone, or the root's children in order. */
    uint32_t *top = order + h->level_base[F - 1];
    for (uint32_t id = 0; id < ld->maps[F - 1].count; id++) top[id] = id;
    /* Each lower level: for every parent in order, its children by id. */
    for (uint32_t l = F - 1; l-- > 0;) {
        uint32_t n = ld->maps[l].count, np = ld->maps[l + 1].count;
        const uint32_t *parent = ld->info[l].parent;
        memset(start, 0, ((size_t)np + 1) * sizeof *start);
        for (uint32_t id = 0; id < n; id++) start[parent[id] + 1]++;
        for (uint32_t p = 0; p < np; p++) start[p + 1] += start[p];
        for (uint32_t id = 0; id < n; id++) bucket[start[parent[id]]++] = id;
        /* start[p] now ends p's bucket; p's bucket begins at start[p - 1]. */
        const uint32_t *porder = order + h->level_base[l + 1];
        uint32_t *lorder = order + h->level_base[l];
        uint32_t k = 0;
        for (uint32_t j = 0; j < np; j++) {
            uint32_t p = porder[j];
            for (uint32_t b = p ? start[p - 1] : 0; b < start[p]; b++) lorder[k++] = bucket[b];
        }
        assert(k == n);
    }
    for (uint32_t l = 0; l < F; l++) {
        uint32_t base = h->level_base[l];
        for (uint32_t k = 0; k < ld->maps[l].count; k++) h->node_of[base + order[base + k]] = base + k;
    }
    free(start);
    free(bucket);

    /* Nodes: labels, levels, parents. */
    for (uint32_t l = 0; l < F; l++) {
        uint32_t base = h->level_base[l];
        for (uint32_t k = 0; k < ld->maps[l].count; k++) {
            hier_node *nd = &h->nodes[base + k];
            uint32_t id = order[base + k];
            nd->level = l;
            nd->label = strmap_key(&ld->maps[l], id);
            if (l + 1 < F)
                nd->parent = h->node_of[h->level_base[l + 1] + ld->info[l].parent[id]];
            else
                nd->parent = h->synthetic_root ? h->root : NONE;
        }
    }
    free(order);
    if (h->synthetic_root) {
        hier_node *r = &h->nodes[h->root];
        r->level = h->height;
        r->label = "*";
        r->parent = NONE;
    }
    /* Ranges and children, bottom-up: a node's children precede it and, being
     * laid out in their parents' order, are consecutive. */
    uint32_t nch = 0;
    for (uint32_t i = 0; i < h->nnodes; i++) {
        hier_node *nd = &h->nodes[i];
        if (i < h->nleaves) nd->lo = nd->hi = i;
        if (nd->parent == NONE) continue;
        hier_node *p = &h->nodes[nd->parent];
        if (p->nchildren == 0) {
            p->first_child = nch;
            p->lo = nd->lo;
        }
        assert(p->first_child + p->nchildren == nch);
        assert(p->nchildren == 0 || p->hi + 1 == nd->lo);
        h->children[nch++] = i;
        p->nchildren++;
        p->hi = nd->hi;
    }
    assert(nch == h->nnodes - 1);

    /* The maps now belong to the tree. */
    h->labels = ld->maps;
    ld->maps = NULL;
    return check_labels_unique(h, ld);
}

/* Loads a hierarchy from the records of rd (opened by the caller, freed
 * here); `path` is its name in messages and the hierarchy's path. */
static int hier_load_reader(hier **out, const char *path, csv_reader *rd, long line_shift, ak_error *err)
{
    *out = NULL;
    hier *h = calloc(1, sizeof *h);
    size_t plen = strlen(path);
    if (h) h->path = malloc(plen + 1);
    if (!h || !h->path) {
        free(h);
        csv_reader_free(rd);
        return ak_err_nomem(err);
    }
    memcpy(h->path, path, plen + 1);

    loader ld = {.path = path, .err = err, .line_shift = line_shift};
    int rc = loader_read(&ld, rd);
    csv_reader_free(rd);
    if (rc == ANONKIT_OK) rc = build_tree(h, &ld); /* takes the label maps on success */
    loader_free(&ld);
    if (rc != ANONKIT_OK) {
        hier_free(h);
        return rc;
    }
    *out = h;
    return ANONKIT_OK;
}

int hier_load(hier **out, const char *path, ak_error *err)
{
    *out = NULL;
    csv_reader *rd = NULL;
    AK_CHECK(csv_reader_open(&rd, path, ';', err));
    return hier_load_reader(out, path, rd, 0, err);
}

int hier_load_table(hier **out, const struct anonkit_table *t, const char *name, ak_error *err)
{
    *out = NULL;
    csv_reader *rd = NULL;
    /* the data rows only: a hierarchy has no header; row r (from 1) is "line" r in messages */
    AK_CHECK(csv_reader_open_table_rows(&rd, t, name, 0, UINT64_MAX, err));
    return hier_load_reader(out, name, rd, -1, err);
}

struct hier_builder {
    hier *h;
    loader ld;
};

int hier_builder_open(hier_builder **out, const char *name, ak_error *err)
{
    *out = NULL;
    hier_builder *b = calloc(1, sizeof *b);
    if (!b) return ak_err_nomem(err);
    size_t len = strlen(name);
    if (!(b->h = calloc(1, sizeof *b->h)) || !(b->h->path = malloc(len + 1))) {
        hier_builder_free(b);
        return ak_err_nomem(err);
    }
    memcpy(b->h->path, name, len + 1);
    b->ld.path = b->h->path;
    *out = b;
    return ANONKIT_OK;
}

int hier_builder_add(hier_builder *b, const csv_field *fields, uint32_t count, long line, ak_error *err)
{
    b->ld.err = err;
    if (!b->ld.nfields) AK_CHECK(loader_start(&b->ld, count, line));
    const csv_record rec = {.fields = fields, .count = count, .line = line};
    return loader_row(&b->ld, &rec);
}

int hier_builder_finish(hier_builder *b, hier **out, ak_error *err)
{
    *out = NULL;
    b->ld.err = err;
    int rc = b->ld.nfields ? build_tree(b->h, &b->ld)
                           : ak_err_set(err, ANONKIT_E_INPUT, b->h->path, 0, 0, "a hierarchy without rows");
    if (rc == ANONKIT_OK) {
        *out = b->h;
        b->h = NULL;
    }
    hier_builder_free(b);
    return rc;
}

void hier_builder_free(hier_builder *b)
{
    if (!b) return;
    loader_free(&b->ld);
    hier_free(b->h);
    free(b);
}

void hier_free(hier *h)
{
    if (!h) return;
    if (h->labels) {
        for (uint32_t l = 0; l < h->nfile_levels; l++) strmap_free(&h->labels[l]);
        free(h->labels);
    }
    free(h->path);
    free(h->nodes);
    free(h->children);
    free(h->level_base);
    free(h->node_of);
    free(h);
}

uint32_t hier_leaf_count(const hier *h) { return h->nleaves; }
uint32_t hier_node_count(const hier *h) { return h->nnodes; }
uint32_t hier_height(const hier *h) { return h->height; }
uint32_t hier_root(const hier *h) { return h->root; }
const uint32_t *hier_children(const hier *h) { return h->children; }
const char *hier_path(const hier *h) { return h->path; }

const hier_node *hier_node_at(const hier *h, uint32_t node)
{
    assert(node < h->nnodes);
    return &h->nodes[node];
}

uint32_t hier_leaf_node(const hier *h, uint32_t code)
{
    assert(code < h->nleaves);
    (void)h;
    return code; /* leaves come first, in code order */
}

int hier_find_leaf(const hier *h, const char *value, size_t len, uint32_t *code)
{
    uint32_t id = strmap_find(&h->labels[0], value, len);
    if (id == AK_NOT_FOUND) return -1;
    *code = h->node_of[id]; /* level_base[0] == 0, and leaf node == code */
    return 0;
}

uint32_t hier_lca(const hier *h, uint32_t lo, uint32_t hi)
{
    assert(lo <= hi && hi < h->nleaves);
    uint32_t n = lo;
    while (h->nodes[n].hi < hi && n != h->root) n = h->nodes[n].parent;
    return n;
}

uint32_t hier_ancestor(const hier *h, uint32_t code, uint32_t level)
{
    assert(code < h->nleaves && level <= h->height);
    uint32_t n = code;
    while (h->nodes[n].level < level && n != h->root) n = h->nodes[n].parent;
    return n;
}

uint32_t hier_find_label(const hier *h, const char *label, size_t len)
{
    for (uint32_t l = 0; l < h->nfile_levels; l++) {
        uint32_t id = strmap_find(&h->labels[l], label, len);
        if (id != AK_NOT_FOUND) return h->node_of[h->level_base[l] + id];
    }
    if (h->synthetic_root && len == 1 && label[0] == '*') return h->root;
    return NONE;
}
