/* hierbuild.h — hierarchy builders (docs/hierarchies.md): the distinct values
 * of one column, read by streaming the file once, turned into the rows of an
 * ARX-format hierarchy that is complete for them by construction.
 *
 * Builders: fixed-width intervals with a fan-out per level, equal-frequency
 * intervals, right-to-left masking of codes of equal length, date levels of
 * ISO-8601 dates, groups of an ordered list of categories, and flat
 * (value -> "*"). Missing values (an empty cell or a --missing token) become
 * one leaf HB_MISSING_LABEL, first, generalized to itself up to the root.
 * Rows come out in the order of the attribute (numbers ascending, dates in
 * time, an --order list in its order), so that leaf codes follow it. */
#ifndef AK_HIERBUILD_H
#define AK_HIERBUILD_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/error.h"
#include "common/hash.h"
#include "common/interval.h"
#include "common/strbuf.h"

struct hier;

/* The leaf that stands for a missing value (ARX writes NULL). */
#define HB_MISSING_LABEL "NULL"

typedef enum hb_kind { HB_NONE = 0, HB_FLAT, HB_INTERVAL, HB_QUANTILES, HB_MASK, HB_DATE, HB_ORDER } hb_kind;

/* Missing-value tokens besides the empty cell. */
typedef struct hb_missing {
    const char *const *tokens;
    size_t count;
} hb_missing;

/* Whether field text[0..len) is a missing value. */
int hb_is_missing(const hb_missing *m, const char *text, size_t len);

/* The distinct values of one column with their counts and the line each was
 * first seen on; missing values are counted apart. */
typedef struct hb_values {
    strmap dict;          /* distinct present values */
    uint64_t *count;      /* per value id */
    long *line;           /* per value id: first line */
    size_t cap;
    uint64_t nmissing;    /* missing cells */
    long missing_line;    /* first line with one */
    uint64_t rows;
    char *file;           /* the file as messages name it */
    /* canonical integers in [0, HB_DENSE) counted in place of a hash lookup
     * (dense[v], first line dense_line[v]); the numeric builders read them
     * there, the others move them into dict first (after the other values) */
    uint32_t *dense, *dense_line;
    uint32_t dense_lo, dense_hi; /* the least and greatest value counted (or marked) there */
    struct hb_memo *memo; /* the value ids of recent short text values, by their bytes (hierbuild_collect.c) */
    uint64_t *bits;       /* in place of dense when only presence is asked for (hb_collect_presence):
                             bit v set when v occurs; no count, no line (they are numbers: no message needs it) */
    uint32_t bits_or;     /* the OR of the values marked in bits: none of them has a bit above its highest, so
                             the search for the greatest starts there, not at the top of the bitmap */
} hb_values;

/* Integers below this are counted by value while a column is read (two
 * arrays of 4 bytes a value, allocated zeroed: pages never touched cost nothing). */
#define HB_DENSE (1u << 22)

/* Reads column `column` of the CSV at path (shown as `shown`). */
int hb_collect(hb_values *v /* OUT */, const char *path, const char *shown, char delimiter, const char *column,
               const hb_missing *missing, ak_error *err);
/* As hb_collect, but the canonical integers below HB_DENSE are only marked
 * present in a bitmap (an eighth of a megabyte, where counting them takes
 * 16 MiB of random accesses): for the interval builder, which needs no counts. */
int hb_collect_presence(hb_values *v /* OUT */, const char *path, const char *shown, char delimiter,
                        const char *column, const hb_missing *missing, ak_error *err);
/* Reads columns columns[0..n) of the CSV at path (shown as `shown`) in one
 * pass into vs[0..n): vs[j] as hb_collect_presence gives it when
 * presence[j] (presence may be NULL: none), else as hb_collect, with the
 * missing-value tokens missing[j]. A column may be named more than once. On failure every vs[j] is left freed. */
int hb_collect_columns(hb_values *vs /* OUT */, size_t n, const char *const *columns, const int *presence,
                       const hb_missing *missing /* [n] */, const char *path, const char *shown, char delimiter,
                       ak_error *err);
/* hb_collect_columns with up to `threads` threads (hierbuild_threads.c):
 * with two or more, a regular file of 1 MiB or more is cut in two byte
 * ranges at a line start near its middle, each read for every column on
 * its own thread, and the second range's values merged into the first's;
 * the same values, and the same error as one pass (the first in the file).
 * A first range with a quote is read to the end by its own thread. */
int hb_collect_columns_threads(hb_values *vs /* OUT */, size_t n, const char *const *columns, const int *presence,
                               const hb_missing *missing /* [n] */, const char *path, const char *shown,
                               char delimiter, unsigned threads, ak_error *err);
void hb_values_free(hb_values *v);

typedef enum hb_date_level {
    HB_MINUTE = 0, HB_HOUR, HB_DAY, HB_MONTH, HB_QUARTER, HB_YEAR, HB_DECADE, HB_CENTURY,
    HB_WEEK /* the ISO 8601 week, YYYY-Www of its week-based year: only as the top level (weeks cross
               months and years), above minute, hour or day */
} hb_date_level;

/* What to build. Arrays are the caller's. */
typedef struct hb_options {
    hb_kind kind;
    double width;                   /* interval: bin width > 0 */
    const uint32_t *fanout;         /* interval, order: groups per level above the first */
    size_t nfanout;
    int has_min, has_max;           /* interval: bounds; values outside them go to open-ended ranges */
    double min, max;
    const uint32_t *quantiles;      /* quantiles: bins, then groups per level */
    size_t nquantiles;
    uint32_t levels;                /* mask: masked characters at the top (0: all) */
    const hb_date_level *dates;     /* date: levels, finest first */
    size_t ndates;
    const char *const *order;       /* order: the categories in order */
    size_t norder;
    ak_interval_style style;        /* how interval labels are written */
} hb_options;

/* The rows of a built hierarchy: nrows rows of width labels each (leaf first,
 * root last). */
typedef struct hb_rows {
    uint32_t nrows, width;
    strbuf text;           /* labels, each NUL-terminated */
    uint32_t *at;          /* at[row * width + level]: offset of the label in text (4 bytes: half the
                              memory to fault in of 8; the labels of one hierarchy stay below
                              HB_TEXT_MAX bytes, hb__put refuses more) */
    size_t cap;
    uint32_t row;          /* rows begun so far (while building) */
    int plain;             /* set by a builder whose labels are all numbers it wrote itself and fixed
                              punctuation (none starts or ends with a space or holds ';', '"', CR or LF):
                              hb_write copies them without looking for what needs quotes */
} hb_rows;

/* The most bytes of labels one hierarchy holds (offsets of 32 bits). */
#define HB_TEXT_MAX ((size_t)UINT32_MAX)

static inline const char *hb_label(const hb_rows *r, uint32_t row, uint32_t level)
{
    return r->text.data + r->at[(size_t)row * r->width + level];
}

/* Builds the rows for the values of v; errors name v->file and a line. A
 * builder that is not numeric moves v's integers counted by value into
 * v->dict first. */
int hb_build(hb_values *v, const hb_options *o, hb_rows *rows /* OUT */, ak_error *err);
/* hb_build into rows that are zeroed or hold an earlier build, whose arrays
 * are reused (a run's hierarchies one after the other: no fresh pages for
 * the system to zero each time); on failure rows are freed. */
int hb_build_into(hb_values *v, const hb_options *o, hb_rows *rows /* IN/OUT */, ak_error *err);
void hb_rows_free(hb_rows *rows);

/* Distinct labels per level into sizes[0..width). */
int hb_level_sizes(const hb_rows *rows, uint64_t *sizes /* OUT */, ak_error *err);

/* Checks that the rows form a complete, consistent ARX hierarchy that
 * hier_load accepts (path for messages): one row per leaf, no empty label,
 * no leaf twice, every label of a level above the leaves on one run of
 * consecutive rows (the builders write rows in tree order) with one parent,
 * and a label on two levels only for the same rows (one node padded
 * upwards), "*" below a synthetic root only for all rows. Reads only the
 * rows, not how they were built: the check before a hierarchy is written. */
int hb_check(const hb_rows *rows, const char *path, ak_error *err);
/* hb_check, which also counts the distinct labels of each level into
 * sizes[0..width) (as hb_level_sizes does, for rows that pass). */
int hb_check_sizes(const hb_rows *rows, const char *path, uint64_t *sizes /* OUT */, ak_error *err);

/* Memory one check leaves to the next (hb_check_sizes_mem): the arrays of a
 * run's hierarchies kept, not allocated and freed (and their fresh pages
 * zeroed by the system) for each. Zeroed to start; hb_check_mem_free. */
typedef struct hb_check_mem {
    void *levels; /* per level above the leaves: where the pass over the rows stands (hierbuild_check.c) */
    size_t nlevels;
    void *runs; /* the runs of one label on consecutive rows, of every level */
    size_t runs_cap;
    uint64_t *keys, *tmp, *leaves;
    size_t keys_cap, tmp_cap, leaves_cap;
} hb_check_mem;
/* hb_check_sizes with the memory of m (kept there for the next). */
int hb_check_sizes_mem(const hb_rows *rows, const char *path, uint64_t *sizes /* OUT */, hb_check_mem *m,
                       ak_error *err);
void hb_check_mem_free(hb_check_mem *m);

/* Writes the rows, ';'-separated, to f (path for messages). */
int hb_write(const hb_rows *rows, FILE *f, const char *path, ak_error *err);

/* The rows as a loaded hierarchy named `name` (hier_builder). */
int hb_to_hier(const hb_rows *rows, const char *name, struct hier **out /* OUT */, ak_error *err);

/* A flat hierarchy of column `column` of the CSV at path, built in memory
 * (--hierarchy COL=auto); *nvalues gets the number of leaves. */
int hb_flat_hier(const char *path, const char *shown, char delimiter, const char *column, const hb_missing *missing,
                 struct hier **out /* OUT */, uint32_t *nvalues /* OUT */, ak_error *err);

/* Parses a date level name ("day", "month", ...); -1 when it is none. */
int hb_parse_date_level(const char *name, size_t len, hb_date_level *out /* OUT */);

#endif
