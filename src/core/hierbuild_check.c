/* hierbuild_check.c — the check a built hierarchy passes before it is
 * written (hierbuild.h: hb_check): the rows alone, read as the loader of
 * core/hierarchy.c would read the file, must form a complete, consistent ARX
 * hierarchy. It relies on one property every builder keeps, tree order (the
 * rows of one label above the leaves are consecutive), and checks that too,
 * so that one pass per level and one map of the leaves and of the runs'
 * labels suffice, where loading builds the whole tree with a map per level. */
#include <stdlib.h>
#include <string.h>

#include "core/hierbuild_internal.h"

/* Longest label quoted in a message. */
#define CHECK_LABEL_MAX 200

/* Where a label was first met: its level and its rows [lo, hi]. */
typedef struct seen {
    uint32_t level, lo, hi;
} seen;

static int show_len(size_t len) { return len > CHECK_LABEL_MAX ? CHECK_LABEL_MAX : (int)len; }

/* The label at (row, level) differs from the one at (row - 1, level). */
static inline int differs(const hb_rows *r, uint32_t row, uint32_t level)
{
    const size_t a = r->at[(size_t)row * r->width + level], b = r->at[(size_t)(row - 1) * r->width + level];
    return a != b && strcmp(r->text.data + a, r->text.data + b) != 0;
}

/* Notes label s on rows [lo, hi] of level l in the map of all labels:
 * refuses a leaf twice, a label on two runs of one level, or on two levels
 * for other rows. */
static int note(strmap *all, seen **info, size_t *cap, const char *s, uint32_t l, uint32_t lo, uint32_t hi,
                const char *path, ak_error *err)
{
    const size_t len = strlen(s);
    uint32_t id;
    int inserted;
    if (strmap_intern(all, s, len, &id, &inserted) != 0) return ak_err_nomem(err);
    if (inserted) {
        if (ak_reserve((void **)info, cap, (size_t)id + 1, sizeof **info) != 0) return ak_err_nomem(err);
        (*info)[id] = (seen){l, lo, hi};
        return ANONKIT_OK;
    }
    const seen f = (*info)[id];
    if (f.level == l && l == 0)
        return ak_err_set(err, ANONKIT_E_INTERNAL, path, (long)lo + 1, 0, "duplicate leaf \"%.*s\" (first on line %u)",
                          show_len(len), s, f.lo + 1);
    if (f.level == l)
        return ak_err_set(err, ANONKIT_E_INTERNAL, path, (long)lo + 1, 0,
                          "\"%.*s\" at level %u is on lines %u-%u and again from line %u: the rows are not in tree "
                          "order",
                          show_len(len), s, l, f.lo + 1, f.hi + 1, lo + 1);
    if (f.lo != lo || f.hi != hi)
        return ak_err_set(err, ANONKIT_E_INTERNAL, path, (long)lo + 1, 0,
                          "label \"%.*s\" at level %u names another node than at level %u (lines %u-%u): a label "
                          "must name one node",
                          show_len(len), s, l, f.level, f.lo + 1, f.hi + 1);
    return ANONKIT_OK;
}

int hb_check(const hb_rows *r, const char *path, ak_error *err)
{
    if (r->nrows == 0 || r->width == 0 || r->row != 0)
        return ak_err_set(err, ANONKIT_E_INTERNAL, path, 0, 0, "the hierarchy has no complete rows");
    strmap all;
    if (strmap_init(&all, (size_t)r->nrows + 64) != 0) return ak_err_nomem(err);
    seen *info = NULL;
    size_t cap = 0;
    int rc = ANONKIT_OK;
    uint32_t top_labels = 0;
    for (uint32_t l = 0; l < r->width && rc == 0; l++) {
        uint32_t start = 0, labels = 0;
        for (uint32_t i = 0; i <= r->nrows && rc == 0; i++) {
            if (i < r->nrows) {
                if (l == 0) { /* every row a leaf of its own */
                    const char *s = hb_label(r, i, 0);
                    rc = *s ? note(&all, &info, &cap, s, 0, i, i, path, err)
                            : ak_err_set(err, ANONKIT_E_INTERNAL, path, (long)i + 1, 1, "empty label in field 1 (level 0)");
                    continue;
                }
                if (i == 0 || differs(r, i, l)) { /* a run of a label begins */
                    if (!*hb_label(r, i, l)) {
                        rc = ak_err_set(err, ANONKIT_E_INTERNAL, path, (long)i + 1, (long)l + 1,
                                        "empty label in field %u (level %u)", l + 1, l);
                        break;
                    }
                    if (i) rc = note(&all, &info, &cap, hb_label(r, start, l), l, start, i - 1, path, err);
                    start = i;
                    labels++;
                    continue;
                }
                /* the same label as the row above: so its parent must be */
                if (l + 1 < r->width && differs(r, i, l + 1)) {
                    const char *s = hb_label(r, i, l), *p0 = hb_label(r, i - 1, l + 1), *p1 = hb_label(r, i, l + 1);
                    rc = ak_err_set(err, ANONKIT_E_INTERNAL, path, (long)i + 1, 0,
                                    "\"%.*s\" at level %u has two parents: \"%.*s\" (line %u) and \"%.*s\"",
                                    show_len(strlen(s)), s, l, show_len(strlen(p0)), p0, i, show_len(strlen(p1)), p1);
                }
            } else if (l) {
                rc = note(&all, &info, &cap, hb_label(r, start, l), l, start, r->nrows - 1, path, err);
            }
        }
        top_labels = l == 0 ? r->nrows : labels;
    }
    /* several top labels get a root "*" above them: a "*" below names it only for all rows */
    if (rc == 0 && top_labels > 1) {
        const uint32_t id = strmap_find(&all, "*", 1);
        if (id != AK_NOT_FOUND && (info[id].lo != 0 || info[id].hi + 1 != r->nrows))
            rc = ak_err_set(err, ANONKIT_E_INTERNAL, path, (long)info[id].lo + 1, 0,
                            "label \"*\" at level %u names another node than the root \"*\" that is added above the "
                            "%u labels of the top level",
                            info[id].level, top_labels);
    }
    strmap_free(&all);
    free(info);
    return rc;
}
