/* ldiv.c — the linear 1-D l-diversity heuristic of [Ghinita07] §4.2 (Figure 8, with
 * the optimization of Figure 9), for probabilistic l-diversity ([Ghinita07]
 * Definition 3: no sensitive value above 1/l of a group).
 *
 * The rows, in 1-D order, are split into one bucket per sensitive value; the
 * frontier is the first unassigned row of every bucket. A group takes rows of
 * distinct sensitive values from the frontier (Corollary 1, Lemmas 3-4):
 * greedy step — the `count` frontier rows of lowest 1-D position, count from
 * l up, until the eligibility condition EG (no value more frequent than 1/l
 * of the remaining rows) still holds for what remains; fall-back step — the
 * frontier rows of the values most frequent among the remaining rows. EG is
 * evaluated in O(|G|) from the histogram H of remaining rows, the number of
 * values at each count and the maximum count. Figure 9: after a group is
 * formed, the nearest frontier row r_A joins it when the group with r_A
 * would be smaller than the group of the l nearest frontier rows r_A .. r_B
 * (a lower bound for the one r_A would otherwise form), its value is not yet
 * in the group and EG still holds. "Smaller" is the 1-D extent in Figure 9;
 * with the rows at hand it is the weighted NCP in the QI space, which §5.2
 * has the multi-dimensional heuristic compute for each group (on a Hilbert
 * key, a long 1-D gap can separate neighbouring cells). When neither step can form a group (possible only for
 * a fractional l), the remainder, which satisfies EG and so is l-diverse
 * itself, becomes the last group: the heuristic always succeeds on an
 * eligible table. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "algo/onedim/onedim.h"
#include "io/extsort.h"

typedef struct ldiv_state {
    const uint32_t *sa;
    const long double *pos;
    double l;
    uint32_t m;
    uint32_t *start, *head; /* bucket s holds list[start[s] .. start[s+1]), head[s] its next row */
    uint32_t *list;
    uint32_t *h;            /* remaining rows per value */
    uint32_t *at_count;     /* at_count[c]: values with h == c */
    uint32_t top;           /* the largest h */
    size_t remaining;
    size_t nonempty;        /* buckets with rows left = frontier size */
    uint32_t *heap;         /* frontier positions, min-heap; stale entries skipped lazily */
    size_t heap_n;
} ldiv_state;

static void heap_push(ldiv_state *s, uint32_t p)
{
    size_t i = s->heap_n++;
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (s->heap[parent] <= p) break;
        s->heap[i] = s->heap[parent];
        i = parent;
    }
    s->heap[i] = p;
}

static uint32_t heap_pop(ldiv_state *s)
{
    const uint32_t top = s->heap[0], last = s->heap[--s->heap_n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= s->heap_n) break;
        if (c + 1 < s->heap_n && s->heap[c + 1] < s->heap[c]) c++;
        if (s->heap[c] >= last) break;
        s->heap[i] = s->heap[c];
        i = c;
    }
    if (s->heap_n) s->heap[i] = last;
    return top;
}

/* Whether position p is the frontier row of its bucket. */
static int on_frontier(const ldiv_state *s, uint32_t p)
{
    const uint32_t v = s->sa[p];
    return s->head[v] < s->start[v + 1] && s->list[s->head[v]] == p;
}

/* The frontier row of lowest position (popped), or UINT32_MAX. */
static uint32_t pop_frontier(ldiv_state *s)
{
    while (s->heap_n) {
        uint32_t p = heap_pop(s);
        if (on_frontier(s, p)) return p;
    }
    return UINT32_MAX;
}

/* EG after removing `count` rows of distinct values of which `at_top` have
 * h == top: the largest remaining count times l is at most the rows left. */
static int eg_after(const ldiv_state *s, size_t count, size_t at_top)
{
    uint32_t top = s->top;
    if (top && s->at_count[top] <= at_top) top--;
    return (double)top * s->l <= (double)(s->remaining - count);
}

/* Assigns frontier row p (of value v) to group g. */
static void take(ldiv_state *s, uint32_t p, uint32_t g, uint32_t *group_of)
{
    const uint32_t v = s->sa[p];
    group_of[p] = g;
    s->head[v]++;
    const uint32_t c = s->h[v]--;
    s->at_count[c]--;
    s->at_count[c - 1]++;
    if (c == s->top && !s->at_count[c]) s->top--;
    s->remaining--;
    if (c == 1) s->nonempty--;
    else heap_push(s, s->list[s->head[v]]);
}

/* The bounding box of positions at[0 .. count) (lo / hi: d codes each). */
static void rows_box(const hil_rows *r, const uint32_t *at, size_t count, uint32_t *lo, uint32_t *hi)
{
    for (uint32_t q = 0; q < r->t->nqi; q++) {
        const uint32_t *codes = r->t->qi[q].codes;
        lo[q] = hi[q] = codes[r->order[at[0]]];
        for (size_t i = 1; i < count; i++) {
            const uint32_t c = codes[r->order[at[i]]];
            if (c < lo[q]) lo[q] = c;
            if (c > hi[q]) hi[q] = c;
        }
    }
}

/* Weighted NCP of a box ([Ghinita07] eq. 1). */
static double rows_ncp(const hil_rows *r, const uint32_t *lo, const uint32_t *hi)
{
    double s = 0;
    for (uint32_t q = 0; q < r->t->nqi; q++) s += (r->weights ? r->weights[q] : 1.0) * table_ncp(r->t, q, lo[q], hi[q]);
    return s;
}

/* Figure 9's test: whether the group of positions group[0 .. gn) with
 * position a is smaller than the group of the frontier positions
 * next[0 .. nn) (a first). box: room for 4 d codes. */
static int joins(const ldiv_state *s, const hil_rows *r, const uint32_t *group, size_t gn, long double first,
                 const uint32_t *next, size_t nn, uint32_t *box)
{
    const uint32_t a = next[0];
    if (!r) return s->pos[a] - first < s->pos[next[nn - 1]] - s->pos[a];
    const uint32_t d = r->t->nqi;
    uint32_t *glo = box, *ghi = box + d, *nlo = box + 2 * (size_t)d, *nhi = box + 3 * (size_t)d;
    rows_box(r, group, gn, glo, ghi);
    for (uint32_t q = 0; q < d; q++) {
        const uint32_t c = r->t->qi[q].codes[r->order[a]];
        if (c < glo[q]) glo[q] = c;
        if (c > ghi[q]) ghi[q] = c;
    }
    rows_box(r, next, nn, nlo, nhi);
    return rows_ncp(r, glo, ghi) < rows_ncp(r, nlo, nhi);
}

int hil_ldiv(const uint32_t *sa, const long double *pos, size_t n, uint32_t m, double l, const hil_rows *rows,
             uint32_t *group_of, size_t *ngroups, hil_stats *stats, ak_error *err)
{
    *ngroups = 0;
    if (!n) return ANONKIT_OK;
    if (n >= UINT32_MAX) return ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0, "too many rows for the 1-D l-diversity heuristic");
    ldiv_state s;
    memset(&s, 0, sizeof s);
    s.sa = sa;
    s.pos = pos;
    s.l = l;
    s.m = m;
    s.start = calloc((size_t)m + 1, sizeof *s.start);
    s.head = malloc(((size_t)m + 1) * sizeof *s.head);
    s.list = malloc(n * sizeof *s.list);
    s.h = calloc((size_t)m + 1, sizeof *s.h);
    s.at_count = calloc(n + 1, sizeof *s.at_count);
    s.heap = malloc((n + (size_t)m + 1) * sizeof *s.heap);
    uint32_t *members = malloc(((size_t)m + 1) * sizeof *members);
    uint64_t *order = malloc(((size_t)m + 1) * sizeof *order);
    uint32_t *in_group = malloc(((size_t)m + 1) * sizeof *in_group);
    uint32_t *group = malloc(((size_t)m + 1) * sizeof *group); /* the group just formed */
    uint32_t *box = rows ? malloc(4 * ((size_t)rows->t->nqi + 1) * sizeof *box) : NULL;
    int rc = ANONKIT_OK;
    if (!s.start || !s.head || !s.list || !s.h || !s.at_count || !s.heap || !members || !order || !in_group ||
        !group || (rows && !box)) {
        rc = ak_err_nomem(err);
        goto done;
    }
    for (size_t i = 0; i < n; i++) s.h[sa[i]]++;
    for (uint32_t v = 0; v < m; v++) s.start[v + 1] = s.start[v] + s.h[v];
    for (uint32_t v = 0; v < m; v++) s.head[v] = s.start[v];
    for (size_t i = 0; i < n; i++) s.list[s.head[sa[i]]++] = (uint32_t)i;
    for (uint32_t v = 0; v < m; v++) {
        s.head[v] = s.start[v];
        s.at_count[s.h[v]]++;
        if (s.h[v] > s.top) s.top = s.h[v];
        if (s.h[v]) {
            s.nonempty++;
            heap_push(&s, s.list[s.start[v]]);
        }
        in_group[v] = UINT32_MAX;
    }
    s.remaining = n;
    if ((double)s.top * l > (double)n) {
        rc = ak_err_set(err, ANONKIT_E_INELIGIBLE, NULL, 0, 0,
                        "the table is not %g-diverse as a whole: a sensitive value occurs in %u of %zu rows "
                        "(more than 1/%g), so no grouping can be",
                        l, s.top, n, l);
        goto done;
    }
    const size_t need = (size_t)ceil(l);
    uint32_t g = 0;
    while (s.remaining) {
        size_t count = 0, at_top = 0;
        int formed = 0;
        /* Greedy step: the frontier rows of lowest position, l of them and more. */
        while (count < s.nonempty) {
            uint32_t p = pop_frontier(&s);
            members[count++] = p;
            if (s.h[sa[p]] == s.top) at_top++;
            if (count >= need && eg_after(&s, count, at_top)) {
                formed = 1;
                break;
            }
        }
        if (!formed) {
            for (size_t i = 0; i < count; i++) heap_push(&s, members[i]);
            /* Fall-back step: the frontier rows of the most frequent remaining values. */
            /* order: larger h first, then lower frontier position */
            size_t f = 0;
            for (uint32_t v = 0; v < m; v++)
                if (s.head[v] < s.start[v + 1])
                    order[f++] = (uint64_t)(UINT32_MAX - s.h[v]) << 32 | s.list[s.head[v]];
            if ((rc = extsort_sort_array(order, f, 1, 1, err)) < 0) goto done;
            count = at_top = 0;
            for (size_t i = 0; i + 1 < f; i++) {
                const uint32_t v = sa[(uint32_t)order[i]];
                members[count++] = s.list[s.head[v]];
                if (s.h[v] == s.top) at_top++;
                if (count >= need && eg_after(&s, count, at_top)) {
                    formed = 1;
                    break;
                }
            }
            if (formed && stats) stats->fallback_steps++;
        }
        if (!formed) {
            /* The remainder satisfies EG, so it is l-diverse as one group. */
            for (uint32_t v = 0; v < m; v++)
                while (s.head[v] < s.start[v + 1]) take(&s, s.list[s.head[v]], g, group_of);
            if (stats) stats->closing_groups++;
            g++;
            break;
        }
        long double first = pos[members[0]];
        for (size_t i = 0; i < count; i++) {
            take(&s, members[i], g, group_of);
            in_group[sa[members[i]]] = g;
            group[i] = members[i];
            if (pos[members[i]] < first) first = pos[members[i]];
        }
        /* Figure 9: r_A joins when nearer to the group than to r_B. */
        if (s.nonempty >= need) {
            size_t got = 0;
            while (got < need) {
                uint32_t p = pop_frontier(&s);
                if (p == UINT32_MAX) break;
                members[got++] = p;
            }
            for (size_t i = 0; i < got; i++) heap_push(&s, members[i]);
            if (got == need) {
                const uint32_t a = members[0];
                const uint32_t v = sa[a];
                const size_t at = s.h[v] == s.top ? 1 : 0;
                if (in_group[v] != g && eg_after(&s, 1, at) && joins(&s, rows, group, count, first, members, need, box)) {
                    take(&s, a, g, group_of);
                    in_group[v] = g;
                }
            }
        }
        g++;
    }
    *ngroups = g;
done:
    free(s.start), free(s.head), free(s.list), free(s.h), free(s.at_count), free(s.heap);
    free(members), free(order), free(in_group), free(group), free(box);
    return rc;
}

/* The box of a group without one member and with one more row: prefix and
 * suffix boxes of the members, so each candidate costs O(d). */
typedef struct group_boxes {
    uint32_t d;
    size_t cap;
    uint32_t *pre_lo, *pre_hi, *suf_lo, *suf_hi; /* (cap + 1) * d each */
} group_boxes;

static int boxes_reserve(group_boxes *b, size_t count, ak_error *err)
{
    if (count <= b->cap) return ANONKIT_OK;
    size_t cap = b->cap ? b->cap : 8;
    while (cap < count) cap *= 2;
    const size_t each = (cap + 1) * (b->d ? b->d : 1) * sizeof(uint32_t);
    uint32_t *p = malloc(4 * each);
    if (!p) return ak_err_nomem(err);
    free(b->pre_lo);
    b->pre_lo = p;
    b->pre_hi = p + each / sizeof(uint32_t);
    b->suf_lo = p + 2 * (each / sizeof(uint32_t));
    b->suf_hi = p + 3 * (each / sizeof(uint32_t));
    b->cap = cap;
    return ANONKIT_OK;
}

/* Prefix boxes (of members [0, i)) and suffix boxes (of [i, count)). */
static void boxes_fill(group_boxes *b, const hil_rows *r, const uint32_t *mem, size_t count)
{
    const uint32_t d = b->d;
    for (uint32_t q = 0; q < d; q++) {
        b->pre_lo[q] = UINT32_MAX, b->pre_hi[q] = 0;
        b->suf_lo[count * d + q] = UINT32_MAX, b->suf_hi[count * d + q] = 0;
    }
    for (size_t i = 0; i < count; i++)
        for (uint32_t q = 0; q < d; q++) {
            const uint32_t c = r->t->qi[q].codes[r->order[mem[i]]];
            b->pre_lo[(i + 1) * d + q] = c < b->pre_lo[i * d + q] ? c : b->pre_lo[i * d + q];
            b->pre_hi[(i + 1) * d + q] = c > b->pre_hi[i * d + q] ? c : b->pre_hi[i * d + q];
        }
    for (size_t i = count; i-- > 0;)
        for (uint32_t q = 0; q < d; q++) {
            const uint32_t c = r->t->qi[q].codes[r->order[mem[i]]];
            b->suf_lo[i * d + q] = c < b->suf_lo[(i + 1) * d + q] ? c : b->suf_lo[(i + 1) * d + q];
            b->suf_hi[i * d + q] = c > b->suf_hi[(i + 1) * d + q] ? c : b->suf_hi[(i + 1) * d + q];
        }
}

/* |G| times the weighted NCP of the group's box without member `out` (none
 * when out == count) and with position `in` (none when in == UINT32_MAX). */
static double boxes_cost(const group_boxes *b, const hil_rows *r, size_t count, size_t out, uint32_t in)
{
    const uint32_t d = b->d;
    double s = 0;
    for (uint32_t q = 0; q < d; q++) {
        const size_t after = out < count ? out + 1 : count;
        uint32_t lo = b->pre_lo[(out < count ? out : count) * d + q], hi = b->pre_hi[(out < count ? out : count) * d + q];
        if (b->suf_lo[after * d + q] < lo) lo = b->suf_lo[after * d + q];
        if (b->suf_hi[after * d + q] > hi) hi = b->suf_hi[after * d + q];
        if (in != UINT32_MAX) {
            const uint32_t c = r->t->qi[q].codes[r->order[in]];
            if (c < lo) lo = c;
            if (c > hi) hi = c;
        }
        s += (r->weights ? r->weights[q] : 1.0) * table_ncp(r->t, q, lo, hi);
    }
    return (double)count * s;
}

int hil_ldiv_exchange(const uint32_t *sa, uint32_t m, size_t n, const hil_rows *rows, uint32_t *group_of, size_t ngroups,
                      hil_stats *stats, ak_error *err)
{
    if (ngroups < 2) return ANONKIT_OK;
    uint32_t *start = calloc(ngroups + 1, sizeof *start), *fill = calloc(ngroups, sizeof *fill);
    uint32_t *mem = malloc(n * sizeof *mem), *where = malloc(((size_t)m + 1) * sizeof *where);
    group_boxes ba = {rows->t->nqi, 0, NULL, NULL, NULL, NULL}, bb = ba;
    int rc = start && fill && mem && where ? ANONKIT_OK : ak_err_nomem(err);
    if (rc >= 0) {
        for (size_t i = 0; i < n; i++) start[group_of[i] + 1]++;
        for (size_t g = 0; g < ngroups; g++) start[g + 1] += start[g];
        for (size_t i = 0; i < n; i++) mem[start[group_of[i]] + fill[group_of[i]]++] = (uint32_t)i;
        for (uint32_t v = 0; v <= m; v++) where[v] = UINT32_MAX;
    }
    for (size_t g = 0; rc >= 0 && g + 1 < ngroups; g++) {
        uint32_t *a = mem + start[g], *b = mem + start[g + 1];
        const size_t na = start[g + 1] - start[g], nb = start[g + 2] - start[g + 1];
        if ((rc = boxes_reserve(&ba, na, err)) < 0 || (rc = boxes_reserve(&bb, nb, err)) < 0) break;
        for (size_t j = 0; j < nb; j++) where[sa[b[j]]] = (uint32_t)j;
        for (size_t round = 0; round < (na < nb ? na : nb); round++) {
            boxes_fill(&ba, rows, a, na);
            boxes_fill(&bb, rows, b, nb);
            const double now = boxes_cost(&ba, rows, na, na, UINT32_MAX) + boxes_cost(&bb, rows, nb, nb, UINT32_MAX);
            double best = now;
            size_t bi = 0, bj = 0;
            for (size_t i = 0; i < na; i++) {
                const uint32_t j = where[sa[a[i]]];
                if (j == UINT32_MAX) continue;
                const double c = boxes_cost(&ba, rows, na, i, b[j]) + boxes_cost(&bb, rows, nb, j, a[i]);
                if (c < best) {
                    best = c;
                    bi = i;
                    bj = j;
                }
            }
            if (!(best < now)) break;
            const uint32_t x = a[bi];
            a[bi] = b[bj];
            b[bj] = x;
            group_of[a[bi]] = (uint32_t)g;
            group_of[b[bj]] = (uint32_t)(g + 1);
            if (stats) stats->exchanges++;
        }
        for (size_t j = 0; j < nb; j++) where[sa[b[j]]] = UINT32_MAX;
    }
    free(start), free(fill), free(mem), free(where), free(ba.pre_lo), free(bb.pre_lo);
    return rc;
}
