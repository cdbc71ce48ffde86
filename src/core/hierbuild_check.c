/* hierbuild_check.c — the check a built hierarchy passes before it is
 * written (hierbuild.h: hb_check): the rows alone, read as the loader of
 * core/hierarchy.c would read the file, must form a complete, consistent ARX
 * hierarchy. It relies on one property every builder keeps, tree order (the
 * rows of one label above the leaves are consecutive), and checks that too,
 * so that one pass per level finds every label's run of rows, where loading
 * builds the whole tree with a map per level. No map here either (a random
 * access per label): the hashes of the leaves and of the runs' labels are
 * sorted by radix (sequential passes), equal neighbours compared by text,
 * and the two sorted lists merged to find a label that is a leaf too.
 *
 * That check (hb__check_reference) is kept as written; hb_check_sizes runs a
 * faster one first (fast_check, below) that accepts exactly the rows the
 * reference accepts, and leaves every refusal to the reference, so that
 * errors read as they did. */
#include <stdlib.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "common/hugemem.h"
#include "core/hierbuild_internal.h"

/* Longest label quoted in a message. */
#define CHECK_LABEL_MAX 200

static int show_len(size_t len) { return len > CHECK_LABEL_MAX ? CHECK_LABEL_MAX : (int)len; }

/* The label at (row, level) differs from the one at (row - 1, level). */
static inline int differs(const hb_rows *r, uint32_t row, uint32_t level)
{
    const size_t a = r->at[(size_t)row * r->width + level], b = r->at[(size_t)(row - 1) * r->width + level];
    return a != b && strcmp(r->text.data + a, r->text.data + b) != 0;
}

/* A label's hash (its low 32 bits, in the high half) and what it is (the low
 * half): a leaf's row, or a run's index. Eight bytes: the sort moves half
 * as much as with the whole hash beside the index. */
typedef uint64_t keyed;

static inline keyed make_key(uint64_t hash, uint32_t i) { return (uint64_t)(uint32_t)hash << 32 | i; }
/* The sort key. */
static inline uint32_t low(keyed k) { return (uint32_t)(k >> 32); }
static inline uint32_t idx(keyed k) { return (uint32_t)k; }

/* A run of one label above the leaves: rows [lo, hi] of a level. */
typedef struct run {
    uint32_t lo, hi, level;
} run;

/* Below this many keys radix_sort sorts by insertion: four passes of 8
 * bits clear and add up 4 x 256 counts, more work than sorting a few dozen
 * keys (Adult's nine hierarchies have 2 to 72 leaves). */
#define RADIX_MIN 48

/* Sorts a[0..n) by the hash bits (equal hashes then lie together): LSD
 * radix, from 2^16 keys 3 passes of 11, 11 and 10 bits (counts of 2,048
 * entries stay in the first-level cache; a pass fewer than 4 of 8 bits),
 * below that 4 passes of 8 bits (fewer counts to clear and add up);
 * tmp: room for n. */
static void radix_sort(keyed *a, keyed *tmp, size_t n)
{
    if (n < RADIX_MIN) { /* a few keys (a flat hierarchy's leaves): by insertion, no counts to clear */
        for (size_t i = 1; i < n; i++) {
            const keyed k = a[i];
            size_t j = i;
            for (; j > 0 && a[j - 1] > k; j--) a[j] = a[j - 1];
            a[j] = k;
        }
        return;
    }
    static const unsigned shifts[2][4] = {{32, 40, 48, 56}, {32, 43, 54, 0}}, bits[2][4] = {{8, 8, 8, 8}, {11, 11, 10, 0}};
    const int wide = n >= ((size_t)1 << 16), passes = wide ? 3 : 4;
    keyed *from = a, *to = tmp;
    size_t c[2048 + 1];
    for (int p = 0; p < passes; p++) {
        const unsigned shift = shifts[wide][p];
        const uint64_t mask = ((uint64_t)1 << bits[wide][p]) - 1;
        memset(c, 0, (mask + 2) * sizeof *c);
        for (size_t i = 0; i < n; i++) c[((from[i] >> shift) & mask) + 1]++;
        for (uint64_t d = 0; d < mask; d++) c[d + 1] += c[d];
        for (size_t i = 0; i < n; i++) to[c[(from[i] >> shift) & mask]++] = from[i];
        keyed *t = from;
        from = to;
        to = t;
    }
    if (from != a) memcpy(a, from, n * sizeof *a); /* (an odd number of passes: the sorted keys are in tmp) */
}

static const char *run_label(const hb_rows *r, const run *u) { return hb_label(r, u->lo, u->level); }

/* Refuses an empty label, a leaf twice, a label on two runs of one level
 * (not tree order) or on two levels for other rows, and a label that is a
 * leaf too for other rows; leaves[0..nl) and runs' keys[0..nr) sorted. */
static int check_sorted(const hb_rows *r, const keyed *leaves, size_t nl, const keyed *keys, size_t nr,
                        const run *runs, const char *path, ak_error *err)
{
    for (size_t a = 0; a < nl; a++)
        for (size_t b = a + 1; b < nl && low(leaves[b]) == low(leaves[a]); b++) {
            const char *s = hb_label(r, idx(leaves[a]), 0);
            if (strcmp(s, hb_label(r, idx(leaves[b]), 0)) != 0) continue;
            const uint32_t first = idx(leaves[a]) < idx(leaves[b]) ? idx(leaves[a]) : idx(leaves[b]);
            const uint32_t again = idx(leaves[a]) ^ idx(leaves[b]) ^ first;
            return ak_err_set(err, ANONKIT_E_INTERNAL, path, (long)again + 1, 0,
                              "duplicate leaf \"%.*s\" (first on line %u)", show_len(strlen(s)), s, first + 1);
        }
    for (size_t a = 0; a < nr; a++)
        for (size_t b = a + 1; b < nr && low(keys[b]) == low(keys[a]); b++) {
            const run *x = &runs[idx(keys[a])], *y = &runs[idx(keys[b])];
            const char *s = run_label(r, x);
            if (strcmp(s, run_label(r, y)) != 0) continue;
            if (x->level == y->level)
                return ak_err_set(err, ANONKIT_E_INTERNAL, path, (long)y->lo + 1, 0,
                                  "\"%.*s\" at level %u is on lines %u-%u and on lines %u-%u: the rows are not in "
                                  "tree order",
                                  show_len(strlen(s)), s, x->level, x->lo + 1, x->hi + 1, y->lo + 1, y->hi + 1);
            if (x->lo != y->lo || x->hi != y->hi)
                return ak_err_set(err, ANONKIT_E_INTERNAL, path, (long)y->lo + 1, 0,
                                  "label \"%.*s\" at level %u names another node than at level %u (lines %u-%u): a "
                                  "label must name one node",
                                  show_len(strlen(s)), s, y->level, x->level, x->lo + 1, x->hi + 1);
        }
    /* both lists merged: a label that is a leaf too covers that leaf alone */
    for (size_t a = 0, b = 0; a < nl && b < nr;) {
        if (low(leaves[a]) < low(keys[b])) a++;
        else if (low(leaves[a]) > low(keys[b])) b++;
        else {
            for (size_t c = b; c < nr && low(keys[c]) == low(leaves[a]); c++) {
                const run *u = &runs[idx(keys[c])];
                const char *s = run_label(r, u);
                if (strcmp(s, hb_label(r, idx(leaves[a]), 0)) == 0 && (u->lo != idx(leaves[a]) || u->hi != idx(leaves[a])))
                    return ak_err_set(err, ANONKIT_E_INTERNAL, path, (long)u->lo + 1, 0,
                                      "label \"%.*s\" at level %u names another node than the leaf on line %u: a "
                                      "label must name one node",
                                      show_len(strlen(s)), s, u->level, idx(leaves[a]) + 1);
            }
            a++;
        }
    }
    return ANONKIT_OK;
}

/* The runs of every level above the leaves into *runs (*nruns; caller frees),
 * refusing an empty label and a label whose parent changes within its run;
 * *top gets the number of labels of the top level, sizes[l] (when not NULL)
 * the number of runs of level l, and sizes[0] the number of rows. */
static int find_runs(const hb_rows *r, run **runs, size_t *nruns, uint32_t *top, uint64_t *sizes, const char *path,
                     ak_error *err)
{
    size_t cap = 0, n = 0;
    *runs = NULL;
    *top = r->nrows;
    for (uint32_t l = 1; l < r->width; l++) {
        uint32_t labels = 0;
        for (uint32_t i = 0; i < r->nrows; i++) {
            if (i == 0 || differs(r, i, l)) { /* a run of a label begins */
                if (!*hb_label(r, i, l))
                    return ak_err_set(err, ANONKIT_E_INTERNAL, path, (long)i + 1, (long)l + 1,
                                      "empty label in field %u (level %u)", l + 1, l);
                if (ak_reserve((void **)runs, &cap, n + 1, sizeof **runs) != 0) return ak_err_nomem(err);
                (*runs)[n++] = (run){i, i, l};
                labels++;
                continue;
            }
            (*runs)[n - 1].hi = i;
            /* the same label as the row above: so its parent must be */
            if (l + 1 < r->width && differs(r, i, l + 1)) {
                const char *s = hb_label(r, i, l), *p0 = hb_label(r, i - 1, l + 1), *p1 = hb_label(r, i, l + 1);
                return ak_err_set(err, ANONKIT_E_INTERNAL, path, (long)i + 1, 0,
                                  "\"%.*s\" at level %u has two parents: \"%.*s\" (line %u) and \"%.*s\"",
                                  show_len(strlen(s)), s, l, show_len(strlen(p0)), p0, i, show_len(strlen(p1)), p1);
            }
        }
        *top = labels;
        if (sizes) sizes[l] = labels;
    }
    if (sizes) sizes[0] = r->nrows;
    *nruns = n;
    return ANONKIT_OK;
}

int hb__check_reference(const hb_rows *r, const char *path, uint64_t *sizes, ak_error *err)
{
    if (r->nrows == 0 || r->width == 0 || r->row != 0)
        return ak_err_set(err, ANONKIT_E_INTERNAL, path, 0, 0, "the hierarchy has no complete rows");
    run *runs = NULL;
    size_t nr = 0;
    uint32_t top;
    int rc = find_runs(r, &runs, &nr, &top, sizes, path, err);
    const size_t nl = r->nrows, most = nl > nr ? nl : nr;
    keyed *leaves = NULL, *keys = NULL, *tmp = NULL;
    if (rc == 0 && (!(leaves = ak_huge_malloc(nl * sizeof *leaves)) ||
                    !(keys = ak_huge_malloc((nr ? nr : 1) * sizeof *keys)) || !(tmp = ak_huge_malloc(most * sizeof *tmp))))
        rc = ak_err_nomem(err);
    for (uint32_t i = 0; rc == 0 && i < nl; i++) {
        const char *s = hb_label(r, i, 0);
        if (!*s) rc = ak_err_set(err, ANONKIT_E_INTERNAL, path, (long)i + 1, 1, "empty label in field 1 (level 0)");
        leaves[i] = make_key(XXH3_64bits(s, strlen(s)), i);
    }
    for (size_t k = 0; rc == 0 && k < nr; k++) {
        const char *s = run_label(r, &runs[k]);
        keys[k] = make_key(XXH3_64bits(s, strlen(s)), (uint32_t)k);
    }
    if (rc == 0) {
        radix_sort(leaves, tmp, nl);
        radix_sort(keys, tmp, nr);
        rc = check_sorted(r, leaves, nl, keys, nr, runs, path, err);
    }
    /* several top labels get a root "*" above them: a "*" below names it only for all rows */
    const uint32_t star = low(make_key(XXH3_64bits("*", 1), 0));
    for (size_t k = 0; rc == 0 && top > 1 && k < nr; k++) {
        const run *u = &runs[idx(keys[k])];
        if (low(keys[k]) == star && !strcmp(run_label(r, u), "*") && (u->lo != 0 || u->hi + 1 != r->nrows))
            rc = ak_err_set(err, ANONKIT_E_INTERNAL, path, (long)u->lo + 1, 0,
                            "label \"*\" at level %u names another node than the root \"*\" that is added above the "
                            "%u labels of the top level",
                            u->level, top);
    }
    for (size_t k = 0; rc == 0 && top > 1 && k < nl; k++)
        if (low(leaves[k]) == star && !strcmp(hb_label(r, idx(leaves[k]), 0), "*"))
            rc = ak_err_set(err, ANONKIT_E_INTERNAL, path, (long)idx(leaves[k]) + 1, 0,
                            "the leaf \"*\" names another node than the root \"*\" that is added above the %u labels "
                            "of the top level",
                            top);
    free(runs);
    free(leaves);
    free(keys);
    free(tmp);
    return rc;
}

/* ---- the fast check ---- */

/* Where a level above the leaves stands in the pass over the rows
 * (hb_check_mem.levels): its open run (an index of hb_check_mem.runs) and
 * how many runs it has. */
typedef struct level_state {
    size_t open;
    uint64_t count;
} level_state;

/* Makes *p an array of at least n elements of sz bytes; what it held is
 * dropped (no copy), and a large enough one is kept as it is. */
static int need(void **p, size_t *cap, size_t n, size_t sz)
{
    if (n <= *cap && *p) return 0;
    free(*p);
    *cap = 0;
    if (!(*p = ak_huge_malloc((n ? n : 1) * sz))) return -1;
    *cap = n ? n : 1;
    return 0;
}

void hb_check_mem_free(hb_check_mem *m)
{
    free(m->levels);
    free(m->runs);
    free(m->keys);
    free(m->tmp);
    free(m->leaves);
    memset(m, 0, sizeof *m);
}

/* s as a canonical decimal integer of at most 18 digits ("0", or an optional
 * '-' and digits not starting with 0; not "-0") into *out: 1, else 0. Two
 * such texts are equal exactly when their numbers are. */
static inline int canon_int(const char *s, int64_t *out)
{
    const char *p = s;
    const int neg = *p == '-';
    p += neg;
    if ((unsigned)(*p - '0') > 9) return 0;
    if (*p == '0') {
        if (p[1] || neg) return 0;
        *out = 0;
        return 1;
    }
    uint64_t v = 0;
    const char *start = p;
    for (; (unsigned)(*p - '0') <= 9; p++) v = v * 10 + (uint64_t)(*p - '0');
    if (*p || p - start > 18) return 0;
    *out = neg ? -(int64_t)v : (int64_t)v;
    return 1;
}

/* How the leaves after the first are known to be distinct: by their order. */
enum { LEAVES_HASHED = 0, LEAVES_NUMBERS, LEAVES_BYTES };

/* The row in [1, nrows) whose leaf is s (in the order of mode), else 0 (no row: row 0 is compared apart). */
static uint32_t find_leaf(const hb_rows *r, int mode, const char *s)
{
    uint32_t lo = 1, hi = r->nrows; /* [lo, hi) */
    if (mode == LEAVES_NUMBERS) {
        int64_t x, y = 0;
        const char *p = s + (*s == '-');
        while ((unsigned)(*p - '0') <= 9) p++;
        if (*p || !canon_int(s, &x)) return 0; /* (every leaf there is one; most labels looked up are not
                                                   digits alone, e.g. intervals: refused by this look, cheaper
                                                   than canon_int's reading of their digits) */
        while (lo < hi) {
            const uint32_t mid = lo + (hi - lo) / 2;
            (void)canon_int(hb_label(r, mid, 0), &y);
            if (y == x) return mid;
            if (y < x) lo = mid + 1;
            else hi = mid;
        }
        return 0;
    }
    while (lo < hi) {
        const uint32_t mid = lo + (hi - lo) / 2;
        const int c = strcmp(hb_label(r, mid, 0), s);
        if (!c) return mid;
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    return 0;
}

/* The runs of every level in one pass over the rows (row after row: the
 * rows are read once, where find_runs reads them once a level), in the
 * order they begin into m->runs (*nr of them, m->levels[l].count of level
 * l); *ok = 0 when a run's label is empty or a label's parent changes
 * within its run (the reference then says which first). The array is kept
 * from the check before, made a quarter of the rows (the runs of an
 * interval hierarchy's levels above 2 values a bin) when smaller, and grows. */
static int runs_by_rows(const hb_rows *r, hb_check_mem *m, size_t *nr, int *ok, ak_error *err)
{
    const uint32_t w = r->width, n = r->nrows;
    *ok = 0;
    if (m->nlevels < w) {
        level_state *lv = realloc(m->levels, w * sizeof *lv);
        if (!lv) return ak_err_nomem(err);
        m->levels = lv;
        m->nlevels = w;
    }
    level_state *lv = m->levels;
    if (need(&m->runs, &m->runs_cap, (size_t)n / 4 + w, sizeof(run)) != 0) return ak_err_nomem(err);
    run *runs = m->runs;
    size_t k = 0;
    const char *text = r->text.data;
    for (uint32_t l = 1; l < w; l++) {
        if (!text[r->at[l]]) return ANONKIT_OK;
        runs[k] = (run){0, 0, l};
        lv[l] = (level_state){k++, 1};
    }
    for (uint32_t i = 1; i < n; i++) {
        const uint32_t *cur = r->at + (size_t)i * w, *prev = cur - w;
        if (hb__same_offsets(cur + 1, prev + 1, w - 1)) continue; /* (mostly: the rows of one interval) */
        int above = 0;                                  /* the label of the level above changes here */
        for (uint32_t l = w - 1; l >= 1; l--) {
            if (cur[l] == prev[l] || !strcmp(text + cur[l], text + prev[l])) {
                if (above) return ANONKIT_OK; /* one label, two parents */
                continue;
            }
            if (!text[cur[l]]) return ANONKIT_OK;
            runs[lv[l].open].hi = i - 1;
            if (k == m->runs_cap) {
                if (ak_reserve(&m->runs, &m->runs_cap, k + 1, sizeof *runs) != 0) return ak_err_nomem(err);
                runs = m->runs;
            }
            runs[k] = (run){i, i, l};
            lv[l].open = k++;
            lv[l].count++;
            above = 1;
        }
    }
    for (uint32_t l = 1; l < w; l++) runs[lv[l].open].hi = n - 1;
    *nr = k;
    *ok = 1;
    return ANONKIT_OK;
}

/* The reference's conditions, checked faster: the runs in one pass over
 * the rows; the leaves after the first known distinct by their order when
 * they are canonical integers ascending (the numeric builders) or ascend by
 * their bytes (flat, mask), a label above then looked up among them by
 * binary search, else hashed and sorted as in the reference; the memory
 * kept in m for the next check. *ok = 1 when the rows pass, 0 when the
 * reference must tell why not. */
static int fast_check(const hb_rows *r, uint64_t *sizes, hb_check_mem *m, int *ok, ak_error *err)
{
    const uint32_t w = r->width, n = r->nrows;
    size_t nr = 0;
    AK_CHECK(runs_by_rows(r, m, &nr, ok, err));
    if (!*ok) return ANONKIT_OK;
    *ok = 0;
    const level_state *lv = m->levels;
    /* the leaves */
    if (!*hb_label(r, 0, 0)) return ANONKIT_OK;
    int mode = LEAVES_NUMBERS;
    int64_t last = 0, x;
    for (uint32_t i = 1; i < n; i++) {
        if (!canon_int(hb_label(r, i, 0), &x) || (i > 1 && x <= last)) {
            mode = LEAVES_BYTES;
            break;
        }
        last = x;
    }
    if (mode == LEAVES_BYTES) {
        /* lookups by strcmp: worth it for few runs only (a flat hierarchy's) */
        size_t log = 1;
        while (((size_t)1 << log) < n) log++;
        if (nr * log > (size_t)n * 2) mode = LEAVES_HASHED;
        for (uint32_t i = 1; mode == LEAVES_BYTES && i < n; i++) {
            const char *s = hb_label(r, i, 0);
            if (!*s) return ANONKIT_OK;
            if (i > 1 && strcmp(hb_label(r, i - 1, 0), s) >= 0) mode = LEAVES_HASHED;
        }
    }
    /* the runs' labels hashed and sorted (pairs of equal hashes are all compared: their order in the
       array does not matter for what passes) */
    if (need((void **)&m->keys, &m->keys_cap, nr, sizeof(keyed)) != 0) return ak_err_nomem(err);
    const run *runs = m->runs;
    keyed *keys = m->keys;
    for (size_t j = 0; j < nr; j++) {
        const char *s = run_label(r, &runs[j]);
        keys[j] = make_key(XXH3_64bits(s, strlen(s)), (uint32_t)j);
    }
    keyed *leaves = NULL;
    size_t nl = 0;
    if (mode == LEAVES_HASHED) {
        nl = n;
        if (need((void **)&m->leaves, &m->leaves_cap, nl, sizeof(keyed)) != 0) return ak_err_nomem(err);
        leaves = m->leaves;
        for (uint32_t i = 0; i < n; i++) {
            const char *s = hb_label(r, i, 0);
            if (!*s) return ANONKIT_OK;
            leaves[i] = make_key(XXH3_64bits(s, strlen(s)), i);
        }
    }
    const size_t most = nl > nr ? nl : nr;
    if (need((void **)&m->tmp, &m->tmp_cap, most, sizeof(keyed)) != 0) return ak_err_nomem(err);
    radix_sort(keys, m->tmp, nr);
    if (nl) radix_sort(leaves, m->tmp, nl);
    ak_error scratch;
    if (check_sorted(r, leaves, nl, keys, nr, runs, "", &scratch) != 0) return ANONKIT_OK;
    const char *first = hb_label(r, 0, 0);
    if (mode != LEAVES_HASHED) {
        if (find_leaf(r, mode, first)) return ANONKIT_OK; /* the first leaf twice */
        for (size_t j = 0; j < nr; j++) { /* a label above that is a leaf too stands for that leaf alone */
            const run *u = &runs[j];
            const char *s = run_label(r, u);
            uint32_t i = 0;
            const int leaf = (s[0] == first[0] && !strcmp(s, first)) || (i = find_leaf(r, mode, s)) != 0;
            if (leaf && (u->lo != i || u->hi != i)) return ANONKIT_OK;
        }
    }
    const uint32_t top = w > 1 ? (uint32_t)lv[w - 1].count : n;
    if (top > 1) { /* "*" below the root added above the top labels: only for all rows */
        const uint32_t star = low(make_key(XXH3_64bits("*", 1), 0));
        for (size_t j = 0; j < nr; j++) {
            const run *u = &runs[idx(keys[j])];
            if (low(keys[j]) == star && !strcmp(run_label(r, u), "*") && (u->lo != 0 || u->hi + 1 != n))
                return ANONKIT_OK;
        }
        if (!strcmp(first, "*")) return ANONKIT_OK;
        if (mode == LEAVES_HASHED) {
            for (size_t j = 0; j < nl; j++)
                if (low(leaves[j]) == star && !strcmp(hb_label(r, idx(leaves[j]), 0), "*")) return ANONKIT_OK;
        } else if (find_leaf(r, mode, "*")) {
            return ANONKIT_OK;
        }
    }
    if (sizes) {
        sizes[0] = n;
        for (uint32_t l = 1; l < w; l++) sizes[l] = lv[l].count;
    }
    *ok = 1;
    return ANONKIT_OK;
}

int hb_check_sizes_mem(const hb_rows *r, const char *path, uint64_t *sizes, hb_check_mem *m, ak_error *err)
{
    if (r->nrows == 0 || r->width == 0 || r->row != 0) return hb__check_reference(r, path, sizes, err);
    int ok;
    AK_CHECK(fast_check(r, sizes, m, &ok, err));
    return ok ? ANONKIT_OK : hb__check_reference(r, path, sizes, err);
}

int hb_check_sizes(const hb_rows *r, const char *path, uint64_t *sizes, ak_error *err)
{
    hb_check_mem m = {0};
    const int rc = hb_check_sizes_mem(r, path, sizes, &m, err);
    hb_check_mem_free(&m);
    return rc;
}

int hb_check(const hb_rows *r, const char *path, ak_error *err) { return hb_check_sizes(r, path, NULL, err); }
