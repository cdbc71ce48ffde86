/* hierbuild_threads.c — hb_collect_columns on two threads
 * (hierbuild.h: hb_collect_columns_threads): the file cut in two byte
 * ranges at the start of a line near its middle, each range read by the
 * fast scan of hierbuild_collect.c on its own thread for every column, and
 * the second range's values merged into the first's (counts added, first
 * lines from the first range, the second's lines shifted by the first's
 * line count). The cut holds only when the first range has no quote (a
 * quoted line end could hide the cut line's start): otherwise the first
 * thread reads the rest of the file itself and the second range is
 * dropped. Each column gets exactly the values of one pass, and the same
 * error (the first in the file). */
#include "core/hierbuild.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/parallel.h"
#include "core/hierbuild_internal.h"

/* One range and its pass. */
typedef struct collect_part {
    hb_values *vs;
    size_t n;
    const char *const *columns;
    const int *presence;
    const hb_missing *missing;
    const char *path, *shown;
    char delimiter;
    uint64_t from, to;
    int whole;    /* the first range: it read the whole file; the second: it read its range */
    long to_line; /* the first range, not whole: the line that starts at `to` */
    int rc;
    ak_error err;
} collect_part;

/* Collects one part's range (ak_run_parts). */
static void *collect_part_run(void *arg)
{
    collect_part *p = arg;
    ak_err_clear(&p->err);
    p->rc = hb__collect_range(p->vs, p->n, p->columns, p->presence, p->missing, p->path, p->shown, p->delimiter,
                              p->from, p->to, &p->whole, &p->to_line, &p->err);
    return NULL;
}

/* Below this size a file is read by one thread (a second one's start, its
 * own header read and the merge cost more than half a read saves). */
#define CUT_MIN_BYTES ((uint64_t)1 << 20)

/* Where a file at path is cut: the start of the first line after its middle
 * (found in the 64 KiB from there); 0 when it is not cut (not a regular
 * file, a small one, no line end there). */
static uint64_t cut_point(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size < CUT_MIN_BYTES) return 0;
    const uint64_t total = (uint64_t)st.st_size, mid = total / 2;
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    char buf[1 << 16];
    size_t got = 0;
    if (fseeko(f, (off_t)mid, SEEK_SET) == 0) got = fread(buf, 1, sizeof buf, f);
    fclose(f);
    const char *lf = got ? memchr(buf, '\n', got) : NULL;
    const uint64_t cut = lf ? mid + (uint64_t)(lf - buf) + 1 : 0;
    return cut < total ? cut : 0;
}

int hb_collect_columns_threads(hb_values *vs, size_t n, const char *const *columns, const int *presence,
                               const hb_missing *missing, const char *path, const char *shown, char delimiter,
                               unsigned threads, ak_error *err)
{
    const uint64_t cut = threads < 2 || !strcmp(path, "-") ? 0 : cut_point(path); /* (standard input is read once) */
    hb_values *second = cut ? calloc(n ? n : 1, sizeof *second) : NULL;
    if (!second) return hb_collect_columns(vs, n, columns, presence, missing, path, shown, delimiter, err);
    collect_part parts[2];
    memset(parts, 0, sizeof parts);
    for (int k = 0; k < 2; k++)
        parts[k] = (collect_part){k ? second : vs, n, columns, presence, missing, path, shown, delimiter,
                                  k ? cut : 0, k ? UINT64_MAX : cut, 0, 0, 0, {0}};
    ak_run_parts(parts, sizeof parts[0], 2, collect_part_run);
    collect_part *a = &parts[0], *b = &parts[1];
    const int use_b = a->rc == 0 && !a->whole; /* (a stopped at the cut: no quote before it) */
    int rc = a->rc;
    if (rc == 0 && use_b && b->rc < 0) { /* the first error in the file: b's, its line shifted */
        rc = b->rc;
        *err = b->err;
        if (err->line > 0) err->line += a->to_line - 1;
    } else if (rc < 0) {
        *err = a->err;
    }
    if (rc == 0 && use_b && !b->whole) { /* (b could not start where a could: not expected) read once */
        for (size_t j = 0; j < n; j++) hb_values_free(&vs[j]), hb_values_free(&second[j]);
        free(second);
        return hb_collect_columns(vs, n, columns, presence, missing, path, shown, delimiter, err);
    }
    for (size_t j = 0; rc == 0 && use_b && j < n; j++) rc = hb__merge_values(&vs[j], &second[j], a->to_line - 1, err);
    for (size_t j = 0; b->rc == 0 && j < n; j++) hb_values_free(&second[j]);
    if (rc < 0 && a->rc == 0)
        for (size_t j = 0; j < n; j++) hb_values_free(&vs[j]);
    free(second);
    return rc;
}
