/* risk_groups.h — the equivalence classes `anonkit risk` measures, read in
 * one pass of a CSV file: rows grouped by the texts of their QIs, the way
 * the verifier groups a published file (src/verify/verify.c): equal texts are
 * one class, and with --published the rows whose QIs are all "*" are
 * suppressed rows when they are at most the suppression allowance
 * (model_suppression_limit), otherwise a class. Optionally per class the sum
 * of a weight column and its size in a population table, and per row the
 * QI values as dense codes (for SUDA2). */
#ifndef AK_METRICS_RISK_GROUPS_H
#define AK_METRICS_RISK_GROUPS_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "common/hash.h"

typedef struct risk_group_params {
    const char *path, *shown;      /* the file to read and its name in messages */
    char delimiter;
    const char *const *qi;
    size_t nqi;
    const char *weight;            /* sampling-weight column, or NULL */
    int published;                 /* the all-"*" rows may be suppressed rows */
    double suppression;            /* their allowance, a share of the rows */
    int keep_codes;                /* keep every row's QI codes (SUDA2) */
    const char *population_path;   /* a population table with the same QIs, or NULL */
    const char *population_shown;
    unsigned threads;              /* more than 1: a large file may be read in two pieces at once */
    int any_order;                 /* the classes may come in any order: the measures made of them add up
                                      no figure that depends on it (no population size; a weight column or
                                      a population table makes them come in order all the same) */
    int buckets_only;              /* group even a small file through the buckets, not directly (tests) */
    const struct anonkit_table *mem; /* the sample is this table in memory (io/memtable.h), read through the CSV
                                        reader's table backend in one piece by the generic record path (its
                                        fields do not lie in one buffer); path is then only its name. NULL: path */
    int generic_reader;            /* read a small file's rows by the CSV reader, not by the block scan (tests) */
} risk_group_params;

typedef struct risk_groups {
    uint64_t rows, suppressed;
    /* the classes measured (the suppressed rows left out), in the order of
     * their first rows (unless any_order) */
    size_t nclasses;
    uint64_t *class_size, *class_population;
    double *class_weight;
    uint64_t population_rows;  /* rows of the population table (0: none) */
    uint32_t *codes;           /* keep_codes: codes[row * nqi + q] */
    size_t codes_cap;
} risk_groups;

/* Reads p->path (a file; the caller spools standard input) into g. Errors
 * carry the file and line: a weight that is not a positive number, a
 * population table smaller than the sample or missing a class of it. */
int risk_groups_read(risk_groups *g, const risk_group_params *p, ak_error *err);
void risk_groups_free(risk_groups *g);

#endif
