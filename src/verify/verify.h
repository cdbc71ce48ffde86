/* verify.h — the independent verifier behind `anonkit check`: does a
 * published file satisfy a privacy model?
 *
 * The verifier knows nothing of how the file was made. It reads the file
 * (io/csv.h; "-" is standard input, spooled by io/spool.h), groups its rows
 * by their published quasi-identifier texts (equal texts = one equivalence
 * class, as an attacker would see it) and tests every group with the model
 * predicates of model/model.h. It shares nothing with the algorithms, the
 * metrics or the writer: only the CSV reader, the common utilities and the
 * model predicates (tests/check_layers.py holds it to common, io and model). */
#ifndef AK_VERIFY_H
#define AK_VERIFY_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "model/model.h"

struct anonkit_table;

/* What to verify. */
typedef struct verify_params {
    const char *published;     /* path of the published CSV; "-" reads standard input */
    char delimiter;            /* field delimiter of the file */
    const char *const *qi;     /* names of the quasi-identifier columns */
    size_t nqi;                /* at least 1 */
    const char *sensitive;     /* name of the sensitive column; NULL when none */
    model model;               /* k, l and its variants, c, variance */
    double suppression;        /* share of the rows that may be suppressed (all QIs "*"); 0: none */
    const char *tmpdir;        /* where standard input is spooled; NULL: $TMPDIR */
    const char *query;         /* a database source: the rows of this SELECT (io/source.h); NULL: its ?table= */
    int use_codes;             /* SPSS/Stata: value codes instead of labels */
    const char *const *missing; /* tokens that stand for a missing value besides the empty cell: a missing
                                   sensitive value is one value, however spelled (docs/hierarchies.md) */
    size_t nmissing;
    const struct anonkit_table *table; /* the published table in memory (io/memtable.h), read through the CSV
                                          reader's table backend; `published` is then only its name. NULL: a file */
} verify_params;

/* What a file that satisfies the model holds. */
typedef struct verify_counts {
    uint64_t classes;    /* equivalence classes, the suppressed rows not counted as one */
    uint64_t rows;       /* data rows of the file */
    uint64_t suppressed; /* rows counted as suppressed (all QIs "*", within the allowance) */
} verify_counts;

/* The least t, δ and β the classes of a file achieve (model_achieved_add over
 * every class but the suppressed rows), filled when t, δ or β was asked. */
typedef struct verify_dist_achieved {
    int has;             /* t, δ or β was asked */
    unsigned t_distance; /* the ground distance of a.t (MODEL_T_*) */
    model_achieved a;
} verify_dist_achieved;

/* Verifies p->published against p->model. Returns ANONKIT_OK and fills *out
 * (when not NULL) when every class satisfies the model; otherwise a negative
 * status with err describing the failure: ANONKIT_E_VIOLATION names the first
 * violating class (in the order of the rows that open the classes) and what it
 * violates; ANONKIT_E_USAGE a missing column or an invalid model;
 * ANONKIT_E_INPUT a malformed file. err must not be NULL. */
int verify_published(const verify_params *p, verify_counts *out /* OUT, may be NULL */, ak_error *err);
/* verify_published that also fills *achieved (may be NULL). */
int verify_published_achieved(const verify_params *p, verify_counts *out /* OUT, may be NULL */,
                              verify_dist_achieved *achieved /* OUT, may be NULL */, ak_error *err);

/* One class of a published file, as the verifier forms it. */
typedef struct verify_class {
    uint64_t count;                /* rows */
    const uint32_t *counts;        /* its non-zero sensitive counts (with a sensitive column) */
    size_t ncounts;
    const model_moments *moments;  /* sums of the numeric sensitive values; NULL when the column is not numeric */
    int exact;                     /* every value a small integer (model_moments_variance) */
} verify_class;
typedef int (*verify_class_fn)(void *ctx, const verify_class *c, ak_error *err);

/* Reads p->published, groups it as verify_published does (the suppressed
 * all-"*" rows left out under p->suppression) and calls fn for every class;
 * p->model is not tested. A sensitive column that is not numeric leaves
 * `moments` NULL instead of failing. fn's negative status stops the walk and
 * is returned. */
int verify_classes(const verify_params *p, verify_class_fn fn, void *ctx, verify_counts *out /* OUT, may be NULL */,
                   ak_error *err);

#endif
