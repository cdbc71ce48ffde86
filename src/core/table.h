/* table.h — the encoded table (DESIGN.md §1 step 1, §3).
 *
 * The input is streamed once. Each quasi-identifier becomes a dense array of
 * uint32_t codes whose order is the attribute's order: numeric values by rank
 * in the sorted dictionary of their distinct values, categorical values by the
 * in-order position of their leaf in the attribute's hierarchy. The sensitive
 * attribute becomes codes in order of first appearance (and numbers, for
 * variance diversity); a class label likewise becomes codes, a regression
 * target numbers. Other columns are not held: the writer re-reads the input. */
#ifndef AK_TABLE_H
#define AK_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "core/error.h"
#include "core/hash.h"
#include "core/hierarchy.h"
#include "core/strbuf.h"

typedef enum attr_kind { ATTR_NUMERIC, ATTR_CATEGORICAL } attr_kind;

typedef enum column_role { ROLE_OTHER = 0, ROLE_QI, ROLE_SENSITIVE, ROLE_IDENTIFIER } column_role;

/* What to read: column names by role, hierarchies, delimiter. */
typedef struct table_spec {
    const char *path;          /* input CSV (already spooled if it was stdin) */
    const char *display_name;  /* name used in messages ("-" shows as "stdin") */
    char delimiter;
    size_t nqi;
    const char *const *qi_names;
    const char *const *hierarchy_paths; /* per QI, NULL when none */
    const unsigned char *force_numeric;  /* per QI: numeric even with a hierarchy */
    const char *sensitive_name;          /* NULL when none */
    int sensitive_numeric;               /* also read the sensitive values as numbers */
    const char *class_name;              /* class label of InfoGain splitting; NULL when none */
    const char *target_name;             /* numeric target of Regression splitting; NULL when none */
    size_t nidentifiers;
    const char *const *identifier_names;
    unsigned threads;                    /* > 1: a large file may be read in two pieces at once */
} table_spec;

typedef struct table_qi {
    char *name;
    uint32_t column;      /* index in the input row */
    attr_kind kind;
    hier *h;              /* owned; NULL for numeric QIs without hierarchy */
    uint32_t ncodes;      /* domain size: distinct values or hierarchy leaves */
    double *values;       /* numeric: values[code], ascending */
    const char **texts;   /* numeric: first spelling seen of values[code]; NULL when every
                             value is a canonically written integer (spelled as itself) */
    strbuf text_store;    /* owns the texts */
    uint32_t *codes;      /* codes[row] */
} table_qi;

typedef struct table {
    char *path;               /* the file read, re-read by the writer */
    char *display_name;
    char delimiter;
    size_t nrows;
    uint32_t ncolumns;
    char **column_names;
    unsigned char *roles;     /* column_role per column */
    uint32_t nqi;
    table_qi *qi;
    int sensitive_column;     /* -1 when none */
    uint32_t *sensitive_codes;/* per row, codes in order of first appearance */
    strmap sensitive_dict;    /* code -> text */
    int sensitive_numeric;    /* the spec asked for numeric sensitive values */
    double *sensitive_values; /* per row, when sensitive_numeric */
    int class_column;         /* -1 when none; copied through to the output */
    uint32_t *class_codes;    /* per row, codes in order of first appearance */
    strmap class_dict;        /* code -> text */
    int target_column;        /* -1 when none; copied through to the output */
    double *target_values;    /* per row */
} table;

/* Reads and encodes the input described by spec. */
int table_load(table **out /* OUT */, const table_spec *spec, ak_error *err);
void table_free(table *t);


#endif
