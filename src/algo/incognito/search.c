/* search.c — the lattice searches of Incognito and its baselines ([LeFevre05]
 * slides 32-40, [LeFevre05] "Basic Incognito Algorithm", "Graph Construction",
 * "Algorithm Optimization").
 *
 * Owns: candidate graphs C_i / E_i and their generation from S_{i-1} (join,
 * prune and edge-generation phases), the modified breadth-first search that
 * marks the direct generalizations of anonymous nodes (generalization
 * property) and rolls frequency sets up from a failed parent (rollup
 * property), the a-priori iteration over attribute subsets (subset
 * property), the root frequency sets of Basic (a scan), Super-roots (one scan
 * per family, then rollup) and Cube Incognito (zero-generalization frequency
 * sets of every subset, each projected from a larger one), and the baselines:
 * bottom-up breadth-first search of the whole lattice with and without rollup,
 * and Samarati's binary search on the height.
 *
 * Edge generation takes, for every candidate and attribute, the candidate one
 * level higher in that attribute: since every C_i is closed under
 * generalization (a generalization of a node whose subsets are anonymous has
 * anonymous subsets), these are exactly the direct generalizations that the
 * paper's join of E_{i-1} with itself minus implied edges yields. */
#include "algo/incognito/inc_internal.h"

#include <stdlib.h>
#include <string.h>

/* ---- node sets: open addressing over (mask, levels) -> index ---- */

typedef struct nodemap {
    uint32_t *slot; /* index + 1, 0 = empty */
    size_t mask;
    const inc_node *nodes;
} nodemap;

static inline size_t node_hash(inc_node n)
{
    uint64_t h = n.mask * 0x9E3779B97F4A7C15ULL ^ (n.lv + 0x632BE59BD9B4E019ULL) * 0xC2B2AE3D27D4EB4FULL;
    return (size_t)(h ^ (h >> 29));
}

/* Indexes nodes[0..n). */
static int nodemap_build(nodemap *m, const inc_node *nodes, size_t n, ak_error *err)
{
    size_t cap = 16;
    while (cap < 2 * n + 2) cap *= 2;
    m->slot = calloc(cap, sizeof *m->slot);
    if (!m->slot) return ak_err_nomem(err);
    m->mask = cap - 1;
    m->nodes = nodes;
    for (size_t i = 0; i < n; i++) {
        size_t s = node_hash(nodes[i]) & m->mask;
        while (m->slot[s]) s = (s + 1) & m->mask;
        m->slot[s] = (uint32_t)i + 1;
    }
    return ANONKIT_OK;
}

static uint32_t nodemap_find(const nodemap *m, inc_node n)
{
    size_t s = node_hash(n) & m->mask;
    while (m->slot[s]) {
        const inc_node *x = &m->nodes[m->slot[s] - 1];
        if (x->mask == n.mask && x->lv == n.lv) return m->slot[s] - 1;
        s = (s + 1) & m->mask;
    }
    return UINT32_MAX;
}

static void nodemap_free(nodemap *m)
{
    free(m->slot);
    m->slot = NULL;
}

/* ---- candidate graphs ---- */

typedef struct graph {
    size_t n;
    inc_node *node;
    uint32_t *height;
    uint32_t *eoff, *edst; /* out-edges (direct generalizations), CSR */
    uint32_t *indeg;
    nodemap map;
} graph;

static void graph_free(graph *g)
{
    free(g->node);
    free(g->height);
    free(g->eoff);
    free(g->edst);
    free(g->indeg);
    nodemap_free(&g->map);
    memset(g, 0, sizeof *g);
}

/* The direct generalization of node i in attribute q within g, or UINT32_MAX. */
static uint32_t up_in(const inc_ctx *c, const graph *g, inc_node x, uint32_t q)
{
    if (!(x.mask >> q & 1)) return UINT32_MAX;
    const uint32_t l = inc_level(c, x.lv, q);
    if (l >= c->qi[q].height) return UINT32_MAX;
    return nodemap_find(&g->map, (inc_node){x.mask, inc_with_level(c, x.lv, q, l + 1)});
}

/* Index, heights and edges of the nodes g->node[0..n) (edge-generation phase). */
static int graph_link(inc_ctx *c, graph *g, ak_error *err)
{
    const size_t n = g->n;
    g->height = malloc((n ? n : 1) * sizeof *g->height);
    g->eoff = calloc(n + 1, sizeof *g->eoff);
    g->indeg = calloc(n ? n : 1, sizeof *g->indeg);
    if (!g->height || !g->eoff || !g->indeg) return ak_err_nomem(err);
    AK_CHECK(nodemap_build(&g->map, g->node, n, err));
    for (size_t i = 0; i < n; i++) {
        g->height[i] = inc_node_height(c, g->node[i]);
        for (uint32_t q = 0; q < c->nqi; q++) g->eoff[i + 1] += up_in(c, g, g->node[i], q) != UINT32_MAX;
    }
    for (size_t i = 0; i < n; i++) g->eoff[i + 1] += g->eoff[i];
    g->edst = malloc((g->eoff[n] ? g->eoff[n] : 1) * sizeof *g->edst);
    if (!g->edst) return ak_err_nomem(err);
    for (size_t i = 0; i < n; i++) {
        uint32_t e = g->eoff[i];
        for (uint32_t q = 0; q < c->nqi; q++) {
            const uint32_t j = up_in(c, g, g->node[i], q);
            if (j == UINT32_MAX) continue;
            g->edst[e++] = j;
            g->indeg[j]++;
        }
    }
    c->counters.candidates += n;
    return ANONKIT_OK;
}

/* C_1: every level of every single attribute. */
static int graph_singletons(inc_ctx *c, graph *g, ak_error *err)
{
    memset(g, 0, sizeof *g);
    size_t n = 0;
    for (uint32_t q = 0; q < c->nqi; q++) n += c->qi[q].height + 1;
    if (!(g->node = malloc(n * sizeof *g->node))) return ak_err_nomem(err);
    for (uint32_t q = 0; q < c->nqi; q++)
        for (uint32_t l = 0; l <= c->qi[q].height; l++)
            g->node[g->n++] = (inc_node){(uint64_t)1 << q, inc_with_level(c, 0, q, l)};
    return graph_link(c, g, err);
}

/* The whole lattice over all attributes (the baselines' search space). */
static int graph_lattice(inc_ctx *c, graph *g, ak_error *err)
{
    memset(g, 0, sizeof *g);
    size_t n = 1;
    for (uint32_t q = 0; q < c->nqi; q++) {
        if (n > ((size_t)1 << 26) / (c->qi[q].height + 1))
            return ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0,
                              "the generalization lattice has more than 2^26 nodes: too large for the baselines "
                              "(use an Incognito variant)");
        n *= c->qi[q].height + 1;
    }
    if (!(g->node = malloc(n * sizeof *g->node))) return ak_err_nomem(err);
    uint32_t level[64] = {0};
    const uint64_t full = inc_full_mask(c);
    for (size_t i = 0; i < n; i++) {
        uint64_t lv = 0;
        for (uint32_t q = 0; q < c->nqi; q++) lv = inc_with_level(c, lv, q, level[q]);
        g->node[g->n++] = (inc_node){full, lv};
        for (uint32_t q = c->nqi; q-- > 0;) { /* mixed-radix increment */
            if (++level[q] <= c->qi[q].height) break;
            level[q] = 0;
        }
    }
    return graph_link(c, g, err);
}

/* Highest attribute of a mask. */
static uint32_t top_attr(uint64_t mask)
{
    return 63u - (uint32_t)__builtin_clzll(mask);
}

typedef struct join_item {
    inc_node prefix; /* the node without its highest attribute */
    uint32_t top;    /* that attribute */
    uint64_t field;  /* its level field */
} join_item;

static int join_cmp(const void *a, const void *b)
{
    const join_item *x = a, *y = b;
    if (x->prefix.mask != y->prefix.mask) return x->prefix.mask < y->prefix.mask ? -1 : 1;
    if (x->prefix.lv != y->prefix.lv) return x->prefix.lv < y->prefix.lv ? -1 : 1;
    if (x->top != y->top) return x->top < y->top ? -1 : 1;
    return x->field < y->field ? -1 : x->field > y->field;
}

/* C_{i+1} from S_i (nodes s[0..ns), all with i attributes): the join phase
 * pairs nodes that agree on all but their highest attribute, the prune phase
 * drops candidates with an i-subset outside S_i, then the edges are linked. */
static int graph_generate(inc_ctx *c, const inc_node *s, size_t ns, graph *g, ak_error *err)
{
    memset(g, 0, sizeof *g);
    nodemap sm = {0};
    join_item *items = malloc((ns ? ns : 1) * sizeof *items);
    size_t cap = 1024, n = 0;
    inc_node *out = malloc(cap * sizeof *out);
    int rc = ANONKIT_OK;
    if (!items || !out) { rc = ak_err_nomem(err); goto done; }
    if ((rc = nodemap_build(&sm, s, ns, err)) < 0) goto done;
    for (size_t i = 0; i < ns; i++) {
        const uint32_t q = top_attr(s[i].mask);
        const uint64_t field = inc_level_field(c, q);
        items[i] = (join_item){{s[i].mask & ~((uint64_t)1 << q), s[i].lv & ~field}, q, s[i].lv & field};
    }
    qsort(items, ns, sizeof *items, join_cmp);
    for (size_t a = 0; a < ns;) {
        size_t b = a;
        while (b < ns && items[b].prefix.mask == items[a].prefix.mask && items[b].prefix.lv == items[a].prefix.lv) b++;
        for (size_t i = a; i < b; i++)
            for (size_t j = i + 1; j < b; j++) {
                if (items[j].top == items[i].top) continue;
                const inc_node x = {items[i].prefix.mask | (uint64_t)1 << items[i].top | (uint64_t)1 << items[j].top,
                                    items[i].prefix.lv | items[i].field | items[j].field};
                /* Prune: every subset with one attribute fewer must be in S_i. */
                int keep = 1;
                for (uint32_t q = 0; q < c->nqi && keep; q++) {
                    if (!(x.mask >> q & 1) || q == items[i].top || q == items[j].top) continue;
                    const inc_node sub = {x.mask & ~((uint64_t)1 << q), x.lv & ~inc_level_field(c, q)};
                    keep = nodemap_find(&sm, sub) != UINT32_MAX;
                }
                if (!keep) continue;
                if (n == cap) {
                    inc_node *bigger = realloc(out, 2 * cap * sizeof *out);
                    if (!bigger) { rc = ak_err_nomem(err); goto done; }
                    out = bigger;
                    cap *= 2;
                }
                out[n++] = x;
            }
        a = b;
    }
    g->node = out;
    g->n = n;
    out = NULL;
    rc = graph_link(c, g, err);
done:
    free(items);
    free(out);
    nodemap_free(&sm);
    return rc;
}

/* ---- the modified breadth-first search ---- */

enum { ST_NONE = 0, ST_QUEUED, ST_MARKED, ST_PASSED, ST_FAILED };

/* Where root frequency sets come from. */
typedef enum root_source { ROOT_SCAN, ROOT_SUPER, ROOT_CUBE } root_source;

/* Cube Incognito: zero-generalization frequency sets by attribute set. A set
 * that would barely shrink its superset's is not stored: the entry then
 * shares the superset's (of attributes `has`), and rollups drop the extra
 * attributes on the way, as a data cube leaves such group-bys unmaterialized. */
typedef struct cube {
    size_t n, cap;
    uint64_t *mask;
    uint64_t *has;   /* attributes of fs[i]: mask[i], or a superset when shared */
    inc_fset **fs;
    unsigned char *owned;
} cube;

static void cube_free(cube *cb)
{
    for (size_t i = 0; i < cb->n; i++)
        if (cb->owned[i]) inc_fset_free(cb->fs[i]);
    free(cb->mask);
    free(cb->has);
    free(cb->fs);
    free(cb->owned);
    memset(cb, 0, sizeof *cb);
}

/* The frequency set of the attributes `mask` at level 0: from the table for
 * all attributes, otherwise projected from the smallest one computed so far
 * with one attribute more, or from the one with the lowest missing attribute
 * added (each subset from a larger one, computed once). */
static int cube_get(inc_ctx *c, cube *cb, uint64_t mask, const inc_fset **out, uint64_t *has, ak_error *err)
{
    for (size_t i = 0; i < cb->n; i++)
        if (cb->mask[i] == mask) {
            *out = cb->fs[i];
            *has = cb->has[i];
            return ANONKIT_OK;
        }
    inc_fset *f = NULL;
    const inc_fset *larger = NULL;
    uint64_t larger_has = 0;
    const uint64_t full = inc_full_mask(c);
    if (mask == full) {
        AK_CHECK(inc_fset_scan(c, (inc_node){full, 0}, &f, err));
    } else {
        for (size_t i = 0; i < cb->n; i++)
            if ((cb->mask[i] & mask) == mask && __builtin_popcountll(cb->mask[i] ^ mask) == 1 &&
                (!larger || cb->fs[i]->n < larger->n)) {
                larger = cb->fs[i];
                larger_has = cb->has[i];
            }
        const uint64_t add = (uint64_t)1 << __builtin_ctzll(~mask & full);
        if (!larger) AK_CHECK(cube_get(c, cb, mask | add, &larger, &larger_has, err));
        AK_CHECK(inc_fset_project(c, larger, mask, &f, err));
    }
    if (cb->n == cb->cap) {
        size_t cap = cb->cap ? cb->cap * 2 : 64;
        uint64_t *m = realloc(cb->mask, cap * sizeof *m);
        if (m) cb->mask = m;
        uint64_t *h = realloc(cb->has, cap * sizeof *h);
        if (h) cb->has = h;
        inc_fset **fs = realloc(cb->fs, cap * sizeof *fs);
        if (fs) cb->fs = fs;
        unsigned char *owned = realloc(cb->owned, cap);
        if (owned) cb->owned = owned;
        if (!m || !h || !fs || !owned) {
            inc_fset_free(f);
            return ak_err_nomem(err);
        }
        cb->cap = cap;
    }
    cb->mask[cb->n] = mask;
    cb->has[cb->n] = f ? mask : larger_has;
    cb->fs[cb->n] = f ? f : (inc_fset *)larger;
    cb->owned[cb->n] = f != NULL;
    *out = cb->fs[cb->n];
    *has = cb->has[cb->n++];
    return ANONKIT_OK;
}

/* Super-roots: per family (attribute set) of roots, the family's greatest
 * lower bound and its roots. */
typedef struct family {
    uint64_t mask, lv;
    uint32_t roots;  /* how many */
    uint32_t first;  /* its roots are root_list[first .. first + roots) */
    int done;        /* the roots' frequency sets are computed */
} family;

typedef struct search {
    inc_ctx *c;
    graph *g;
    int rollup;            /* 0: every frequency set by a scan */
    root_source roots;
    cube *cb;
    family *fam;
    size_t nfam;
    unsigned char *st;     /* ST_* per node */
    inc_fset **parent;     /* per queued node: the failed node's frequency set to roll up from */
    uint32_t *pnode;       /* ... and that node */
    uint32_t *root_list;   /* roots grouped by family */
    inc_fset **rootfs;     /* per root: its frequency set, computed with its family's */
    uint32_t **bucket;     /* the queue, one bucket per height */
    size_t *blen, *bcap;
    uint32_t maxh;
} search;

static void release(inc_fset *f)
{
    if (f && --f->refs == 0) inc_fset_free(f);
}

static int push(search *s, uint32_t node)
{
    const uint32_t h = s->g->height[node];
    if (s->blen[h] == s->bcap[h]) {
        size_t cap = s->bcap[h] ? s->bcap[h] * 2 : 64;
        uint32_t *b = realloc(s->bucket[h], cap * sizeof *b);
        if (!b) return -1;
        s->bucket[h] = b;
        s->bcap[h] = cap;
    }
    s->bucket[h][s->blen[h]++] = node;
    return 0;
}

/* Componentwise least levels of nodes list[0..n) (all with attributes mask). */
static uint64_t meet(const inc_ctx *c, const graph *g, const uint32_t *list, size_t n, uint64_t mask)
{
    uint64_t lv = g->node[list[0]].lv;
    for (size_t i = 1; i < n; i++)
        for (uint32_t q = 0; q < c->nqi; q++) {
            if (!(mask >> q & 1)) continue;
            const uint32_t l = inc_level(c, g->node[list[i]].lv, q);
            if (l < inc_level(c, lv, q)) lv = inc_with_level(c, lv, q, l);
        }
    return lv;
}

/* Groups the roots by family (attribute set), in node order within each. */
static int families(search *s, ak_error *err)
{
    const graph *g = s->g;
    s->fam = malloc((g->n ? g->n : 1) * sizeof *s->fam);
    s->root_list = malloc((g->n ? g->n : 1) * sizeof *s->root_list);
    s->rootfs = calloc(g->n ? g->n : 1, sizeof *s->rootfs);
    uint32_t *fam_of = malloc((g->n ? g->n : 1) * sizeof *fam_of);
    if (!s->fam || !s->root_list || !s->rootfs || !fam_of) {
        free(fam_of);
        return ak_err_nomem(err);
    }
    for (size_t i = 0; i < g->n; i++) {
        if (g->indeg[i]) continue;
        size_t f = 0;
        while (f < s->nfam && s->fam[f].mask != g->node[i].mask) f++;
        if (f == s->nfam) s->fam[s->nfam++] = (family){g->node[i].mask, 0, 0, 0, 0};
        s->fam[f].roots++;
        fam_of[i] = (uint32_t)f;
    }
    uint32_t at = 0;
    for (size_t f = 0; f < s->nfam; f++) {
        s->fam[f].first = at;
        at += s->fam[f].roots;
        s->fam[f].roots = 0;
    }
    for (size_t i = 0; i < g->n; i++)
        if (!g->indeg[i]) {
            family *fm = &s->fam[fam_of[i]];
            s->root_list[fm->first + fm->roots++] = (uint32_t)i;
        }
    for (size_t f = 0; f < s->nfam; f++)
        s->fam[f].lv = meet(s->c, g, s->root_list + s->fam[f].first, s->fam[f].roots, s->fam[f].mask);
    free(fam_of);
    return ANONKIT_OK;
}

/* The frequency sets of roots list[0..n) from src, the frequency set of their
 * meet `from`: the two halves' meets are rolled up from src, then each half
 * recursively, so that a root is rolled up from a close specialization
 * rather than from the family's (often far lower) greatest lower bound. */
static int roots_from(search *s, const uint32_t *list, size_t n, const inc_fset *src, inc_node from, ak_error *err)
{
    const graph *g = s->g;
    if (n == 1) {
        const inc_node x = g->node[list[0]];
        return inc_fset_rollup(s->c, src, from, x, &s->rootfs[list[0]], err);
    }
    const size_t half = n / 2;
    for (int side = 0; side < 2; side++) {
        const uint32_t *part = side ? list + half : list;
        const size_t m = side ? n - half : half;
        const inc_node up = {from.mask, meet(s->c, g, part, m, from.mask)};
        if (m == 1 || up.lv == from.lv) { /* a single root, or no closer common specialization */
            AK_CHECK(roots_from(s, part, m, src, from, err));
            continue;
        }
        inc_fset *fs;
        AK_CHECK(inc_fset_rollup(s->c, src, from, up, &fs, err));
        int rc = roots_from(s, part, m, fs, up, err);
        inc_fset_free(fs);
        AK_CHECK(rc);
    }
    return ANONKIT_OK;
}

/* The frequency set of node x from the cube: rolled up from the
 * zero-generalization set of its attributes. */
static int from_cube(search *s, inc_node x, inc_fset **out, ak_error *err)
{
    const inc_fset *zero;
    uint64_t has;
    AK_CHECK(cube_get(s->c, s->cb, x.mask, &zero, &has, err));
    return inc_fset_rollup(s->c, zero, (inc_node){has, 0}, x, out, err);
}

/* The frequency set of root `node`: Basic scans the table; Super-roots scans
 * once per family for the family's greatest lower bound (the super-root) and
 * rolls the roots up from it; Cube does the same with the super-root rolled
 * up from the cube instead of scanned. */
static int root_fset(search *s, uint32_t node, inc_fset **out, ak_error *err)
{
    inc_ctx *c = s->c;
    const inc_node x = s->g->node[node];
    if (s->roots == ROOT_SCAN) return inc_fset_scan(c, x, out, err);
    size_t f = 0;
    while (s->fam[f].mask != x.mask) f++;
    family *fm = &s->fam[f];
    if (fm->roots == 1) /* its own super-root */
        return s->roots == ROOT_CUBE ? from_cube(s, x, out, err) : inc_fset_scan(c, x, out, err);
    if (!fm->done) {
        const inc_node sup = {fm->mask, fm->lv};
        inc_fset *fs;
        AK_CHECK(s->roots == ROOT_CUBE ? from_cube(s, sup, &fs, err) : inc_fset_scan(c, sup, &fs, err));
        int rc = roots_from(s, s->root_list + fm->first, fm->roots, fs, sup, err);
        inc_fset_free(fs);
        AK_CHECK(rc);
        fm->done = 1;
    }
    *out = s->rootfs[node];
    s->rootfs[node] = NULL;
    return ANONKIT_OK;
}

/* Processes one node taken from the queue. */
static int visit(search *s, uint32_t node, ak_error *err)
{
    inc_ctx *c = s->c;
    graph *g = s->g;
    inc_fset *par = s->parent[node];
    s->parent[node] = NULL;
    if (s->st[node] == ST_MARKED) { /* anonymous by the generalization property: not checked */
        release(par);
        return ANONKIT_OK;
    }
    inc_fset *fs = NULL;
    int rc;
    if (par) rc = inc_fset_rollup(c, par, g->node[s->pnode[node]], g->node[node], &fs, err);
    else if (!s->rollup) rc = inc_fset_scan(c, g->node[node], &fs, err);
    else rc = root_fset(s, node, &fs, err);
    release(par);
    if (rc < 0) return rc;
    int anonymous;
    if ((rc = inc_fset_eval(c, fs, 0, &anonymous, NULL, err)) < 0) {
        inc_fset_free(fs);
        return rc;
    }
    c->counters.nodes_checked++;
    s->st[node] = anonymous ? ST_PASSED : ST_FAILED;
    for (uint32_t e = g->eoff[node]; e < g->eoff[node + 1]; e++) {
        const uint32_t d = g->edst[e];
        if (anonymous) {
            if (s->st[d] == ST_NONE || s->st[d] == ST_QUEUED) s->st[d] = ST_MARKED;
            continue;
        }
        if (s->st[d] == ST_NONE) {
            s->st[d] = ST_QUEUED;
            if (push(s, d) != 0) rc = ak_err_nomem(err);
            if (s->rollup) {
                s->parent[d] = fs;
                s->pnode[d] = node;
                fs->refs++;
            }
        } else if (s->st[d] == ST_QUEUED && s->rollup && s->parent[d] && s->parent[d]->n > fs->n) {
            release(s->parent[d]); /* roll up from the smaller of two failed parents */
            s->parent[d] = fs;
            s->pnode[d] = node;
            fs->refs++;
        }
    }
    if (fs->refs == 0) inc_fset_free(fs);
    return rc;
}

static void search_free(search *s)
{
    for (size_t i = 0; s->parent && i < s->g->n; i++) release(s->parent[i]);
    for (uint32_t h = 0; s->bucket && h <= s->maxh; h++) free(s->bucket[h]);
    for (size_t i = 0; s->rootfs && i < s->g->n; i++) inc_fset_free(s->rootfs[i]);
    free(s->rootfs);
    free(s->root_list);
    free(s->fam);
    free(s->st);
    free(s->parent);
    free(s->pnode);
    free(s->bucket);
    free(s->blen);
    free(s->bcap);
}

/* The modified breadth-first search over g ([LeFevre05] slides 33-34): roots first,
 * then by height; *st_out receives the ST_* state per node (ST_FAILED = not
 * anonymous), which the caller frees. */
static int bfs(inc_ctx *c, graph *g, int rollup, root_source roots, cube *cb, unsigned char **st_out, ak_error *err)
{
    search s;
    memset(&s, 0, sizeof s);
    s.c = c;
    s.g = g;
    s.rollup = rollup;
    s.roots = roots;
    s.cb = cb;
    for (size_t i = 0; i < g->n; i++)
        if (g->height[i] > s.maxh) s.maxh = g->height[i];
    s.st = calloc(g->n ? g->n : 1, 1);
    s.parent = calloc(g->n ? g->n : 1, sizeof *s.parent);
    s.pnode = calloc(g->n ? g->n : 1, sizeof *s.pnode);
    s.bucket = calloc(s.maxh + 1, sizeof *s.bucket);
    s.blen = calloc(s.maxh + 1, sizeof *s.blen);
    s.bcap = calloc(s.maxh + 1, sizeof *s.bcap);
    int rc = ANONKIT_OK;
    if (!s.st || !s.parent || !s.pnode || !s.bucket || !s.blen || !s.bcap) rc = ak_err_nomem(err);
    if (rc == ANONKIT_OK && roots != ROOT_SCAN) rc = families(&s, err);
    for (size_t i = 0; rc == ANONKIT_OK && i < g->n; i++)
        if (!g->indeg[i]) {
            s.st[i] = ST_QUEUED;
            if (push(&s, (uint32_t)i) != 0) rc = ak_err_nomem(err);
        }
    for (uint32_t h = 0; rc == ANONKIT_OK && h <= s.maxh; h++)
        for (size_t at = 0; rc == ANONKIT_OK && at < s.blen[h]; at++) rc = visit(&s, s.bucket[h][at], err);
    if (rc == ANONKIT_OK) {
        *st_out = s.st;
        s.st = NULL;
    }
    search_free(&s);
    return rc;
}

/* ---- the variants ---- */

/* Appends the nodes of g that did not fail to *out (the set S). */
static int survivors(const graph *g, const unsigned char *st, inc_node **out, size_t *n, ak_error *err)
{
    *n = 0;
    *out = malloc((g->n ? g->n : 1) * sizeof **out);
    if (!*out) return ak_err_nomem(err);
    for (size_t i = 0; i < g->n; i++)
        if (st[i] != ST_FAILED) (*out)[(*n)++] = g->node[i];
    return ANONKIT_OK;
}

/* Incognito: for i = 1..n, search C_i, keep S_i, generate C_{i+1} from S_i. */
static int incognito(inc_ctx *c, root_source roots, inc_node **out, size_t *nout, ak_error *err)
{
    graph g;
    cube cb = {0};
    unsigned char *st = NULL;
    inc_node *s = NULL;
    size_t ns = 0;
    int rc = graph_singletons(c, &g, err);
    for (uint32_t i = 1; rc == ANONKIT_OK; i++) {
        if ((rc = bfs(c, &g, 1, roots, &cb, &st, err)) < 0) break;
        free(s);
        rc = survivors(&g, st, &s, &ns, err);
        free(st);
        st = NULL;
        graph_free(&g);
        if (rc < 0 || i == c->nqi) break;
        rc = graph_generate(c, s, ns, &g, err);
    }
    graph_free(&g);
    cube_free(&cb);
    if (rc < 0) {
        free(s);
        return rc;
    }
    *out = s;
    *nout = ns;
    return ANONKIT_OK;
}

/* Bottom-up breadth-first search of the whole lattice from its bottom. */
static int bottom_up(inc_ctx *c, int rollup, inc_node **out, size_t *nout, ak_error *err)
{
    graph g;
    unsigned char *st = NULL;
    int rc = graph_lattice(c, &g, err);
    if (rc == ANONKIT_OK) rc = bfs(c, &g, rollup, ROOT_SCAN, NULL, &st, err);
    if (rc == ANONKIT_OK) rc = survivors(&g, st, out, nout, err);
    free(st);
    graph_free(&g);
    return rc;
}

/* Whether node i of the lattice is anonymous, checked once by a scan. */
static int check_cached(inc_ctx *c, const graph *g, unsigned char *st, size_t i, int *anonymous, ak_error *err)
{
    if (st[i] == ST_NONE) {
        inc_fset *fs;
        AK_CHECK(inc_fset_scan(c, g->node[i], &fs, err));
        int rc = inc_fset_eval(c, fs, 0, anonymous, NULL, err);
        inc_fset_free(fs);
        AK_CHECK(rc);
        c->counters.nodes_checked++;
        st[i] = *anonymous ? ST_PASSED : ST_FAILED;
    }
    *anonymous = st[i] == ST_PASSED;
    return ANONKIT_OK;
}

/* Samarati's binary search: the least height with an anonymous node (a height
 * has one as soon as a lower one has), then every anonymous node there. */
static int binary_search(inc_ctx *c, inc_node **out, size_t *nout, ak_error *err)
{
    graph g;
    int rc = graph_lattice(c, &g, err);
    unsigned char *st = calloc(g.n ? g.n : 1, 1);
    if (rc == ANONKIT_OK && !st) rc = ak_err_nomem(err);
    uint32_t lo = 0, hi = 0;
    for (size_t i = 0; rc == ANONKIT_OK && i < g.n; i++)
        if (g.height[i] > hi) hi = g.height[i];
    while (rc == ANONKIT_OK && lo < hi) {
        const uint32_t mid = lo + (hi - lo) / 2;
        int found = 0;
        for (size_t i = 0; rc == ANONKIT_OK && i < g.n && !found; i++)
            if (g.height[i] == mid) rc = check_cached(c, &g, st, i, &found, err);
        if (found) hi = mid;
        else lo = mid + 1;
    }
    *nout = 0;
    *out = NULL;
    if (rc == ANONKIT_OK && !(*out = malloc((g.n ? g.n : 1) * sizeof **out))) rc = ak_err_nomem(err);
    for (size_t i = 0; rc == ANONKIT_OK && i < g.n; i++) {
        int anonymous = 0;
        if (g.height[i] == lo) rc = check_cached(c, &g, st, i, &anonymous, err);
        if (anonymous) (*out)[(*nout)++] = g.node[i];
    }
    if (rc < 0) {
        free(*out);
        *out = NULL;
    }
    free(st);
    graph_free(&g);
    return rc;
}

int inc_run_variant(inc_ctx *c, inc_variant v, uint64_t **out_lv, size_t *out_n, ak_error *err)
{
    inc_node *nodes = NULL;
    size_t n = 0;
    int rc;
    switch (v) {
    case INC_BASIC: rc = incognito(c, ROOT_SCAN, &nodes, &n, err); break;
    case INC_SUPER_ROOTS: rc = incognito(c, ROOT_SUPER, &nodes, &n, err); break;
    case INC_CUBE: rc = incognito(c, ROOT_CUBE, &nodes, &n, err); break;
    case INC_BINARY_SEARCH: rc = binary_search(c, &nodes, &n, err); break;
    case INC_BOTTOM_UP: rc = bottom_up(c, 1, &nodes, &n, err); break;
    case INC_BOTTOM_UP_NOROLLUP: rc = bottom_up(c, 0, &nodes, &n, err); break;
    default: return ak_err_set(err, ANONKIT_E_INTERNAL, NULL, 0, 0, "unknown incognito variant %d", (int)v);
    }
    if (rc < 0) return rc;
    uint64_t *lv = malloc((n ? n : 1) * sizeof *lv);
    if (!lv) {
        free(nodes);
        return ak_err_nomem(err);
    }
    for (size_t i = 0; i < n; i++) lv[i] = nodes[i].lv;
    free(nodes);
    *out_lv = lv;
    *out_n = n;
    return ANONKIT_OK;
}
