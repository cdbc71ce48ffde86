/* hierbuild_check.c — the check a built hierarchy passes before it is
 * written (hierbuild.h: hb_check): the rows alone, read as the loader of
 * core/hierarchy.c would read the file, must form a complete, consistent ARX
 * hierarchy. It relies on one property every builder keeps, tree order (the
 * rows of one label above the leaves are consecutive), and checks that too,
 * so that one pass per level finds every label's run of rows, where loading
 * builds the whole tree with a map per level. No map here either (a random
 * access per label): the hashes of the leaves and of the runs' labels are
 * sorted by radix (sequential passes), equal neighbours compared by text,
 * and the two sorted lists merged to find a label that is a leaf too. */
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

int hb_check(const hb_rows *r, const char *path, ak_error *err) { return hb_check_sizes(r, path, NULL, err); }

int hb_check_sizes(const hb_rows *r, const char *path, uint64_t *sizes, ak_error *err)
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
