/* hierbuild_threads.c — hb_collect_columns on two threads
 * (hierbuild.h: hb_collect_columns_threads): the columns asked for cut into
 * two sets, in the order given, each set collected by its own pass over the
 * file (the fast scan of hierbuild_collect.c); every column's values are
 * exactly those of one pass over all of them, so the hierarchies built
 * from them are the same. */
#include "core/hierbuild.h"

#include <string.h>

#include "common/parallel.h"

/* One set of columns and its pass. */
typedef struct collect_part {
    hb_values *vs;
    size_t n;
    const char *const *columns;
    const int *presence;
    const hb_missing *missing;
    const char *path, *shown;
    char delimiter;
    int rc;
    ak_error err;
} collect_part;

/* Collects one part's columns (ak_run_parts). */
static void *collect_part_run(void *arg)
{
    collect_part *p = arg;
    ak_err_clear(&p->err);
    p->rc = hb_collect_columns(p->vs, p->n, p->columns, p->presence, p->missing, p->path, p->shown, p->delimiter,
                               &p->err);
    return NULL;
}

int hb_collect_columns_threads(hb_values *vs, size_t n, const char *const *columns, const int *presence,
                               const hb_missing *missing, const char *path, const char *shown, char delimiter,
                               unsigned threads, ak_error *err)
{
    if (threads < 2 || n < 2 || !strcmp(path, "-")) /* (standard input is read once) */
        return hb_collect_columns(vs, n, columns, presence, missing, path, shown, delimiter, err);
    const size_t h = n / 2; /* the first h columns (on the calling thread, which also started the run: the smaller
                               set), then the others */
    collect_part parts[2];
    memset(parts, 0, sizeof parts);
    for (int k = 0; k < 2; k++) {
        const size_t from = k ? h : 0;
        parts[k] = (collect_part){vs + from, k ? n - h : h, columns + from, presence ? presence + from : NULL,
                                  missing + from, path, shown, delimiter, 0, {0}};
    }
    ak_run_parts(parts, sizeof parts[0], 2, collect_part_run);
    if (parts[0].rc == 0 && parts[1].rc == 0) return ANONKIT_OK;
    /* the error one pass would have given: a column missing from the header
     * (found before any record) before an error in the records, else the
     * first part's (both passes check every record alike) */
    const collect_part *bad = parts[0].rc < 0 ? &parts[0] : &parts[1];
    if (parts[0].rc < 0 && parts[1].rc < 0 && parts[1].err.code == ANONKIT_E_USAGE &&
        parts[0].err.code != ANONKIT_E_USAGE)
        bad = &parts[1];
    for (int k = 0; k < 2; k++)
        if (parts[k].rc == 0)
            for (size_t j = 0; j < parts[k].n; j++) hb_values_free(&parts[k].vs[j]);
    *err = bad->err;
    return bad->rc;
}
