/* job.h — the settings of one run (the anonkit_job behind the public API),
 * shared by the anonymize, check and metrics entry points in src/api/. */
#ifndef AK_JOB_H
#define AK_JOB_H

#include <stddef.h>
#include <stdint.h>

#include "anonkit/anonkit.h"
#include "algo/incognito/incognito.h"
#include "algo/mondrian/mondrian.h"
#include "common/error.h"
#include "core/recode.h"
#include "core/table.h"
#include "model/model.h"
#include "model/xyprivacy.h"

typedef struct strlist {
    char **items;
    size_t count;
} strlist;

struct anonkit_job {
    char *input, *output, *report, *sensitive;
    const struct ak_algorithm *algorithm; /* --algorithm; NULL: not given (Mondrian) */
    char *class_name, *target_name, *rules;
    mdr_split split;
    double min_gain;
    recode_style publish;
    strlist qi, identifiers, numeric;
    strlist hierarchy_attrs, hierarchy_paths; /* parallel */
    strlist weight_attrs;                     /* parallel to weight_values */
    double *weight_values;
    model model;
    int l_variant_set;
    uint64_t seed;
    int seed_set;
    int keep_order;
    unsigned threads;      /* 0: one per online core */
    uint64_t parallel_min_bytes; /* not an option: table_spec's (tests set it to read small files in two pieces) */
    uint64_t pipeline_min_rows;  /* not an option: rothko_options' (tests set it to repartition small tables on two threads) */
    uint64_t first_sample_rows;  /* not an option: rothko_options' (tests set it low to sample the root by a scan) */
    size_t memory;         /* out of core: budget in bytes (0: not given) */
    unsigned fcache;       /* rothko-t: 0 = as many as fit */
    double alpha;          /* rothko-s: 0 = 0.05 */
    sample_test_kind test;
    uint64_t sample_size;  /* rothko-s: 0 = as many rows as the budget holds */
    uint32_t growth_depth; /* rothko-s: 0 = until memory is full */
    size_t block_size;     /* out of core: 0 = 256 KiB */
    char *tmpdir;
    volatile char *spill_notice; /* anonkit_job_set_spill_notice */
    size_t spill_notice_size;
    char delimiter;
    /* sequential releases (004) */
    strlist previous, x_attrs, y_attrs, sensitive_values;
    xy_model xy;
    int score_distortion;
    char *inconsistent;
    unsigned bits, centers;/* 1-D algorithms; 0: the defaults */
    unsigned kl_level;     /* metrics --kl-level; 0: none */
    char *class_error;     /* metrics --class-error: the class column of the decision tree */
    uint64_t train_rows;   /* metrics --train-rows: the first N rows train (0: not given) */
    char *split_column;    /* metrics --split-column: train/test per row */
    double suppression;    /* incognito, check: share of rows that may be suppressed */
    inc_variant inc_variant;
    inc_choose choose;
    unsigned inc_set;      /* incognito-only options given: 1 suppression, 2 variant, 4 choose */
    ak_error err;
    char errmsg[2048];
};

/* The algorithm the job runs (Mondrian when it names none). */
const struct ak_algorithm *job_algorithm(const anonkit_job *job);

/* Fills errmsg from err and returns err.code. */
int job_fail(anonkit_job *job);

/* Builds the table spec of the job for input `path` (shown as display_name).
 * The arrays it points to live in *storage until job_spec_free(storage). */
typedef struct job_spec_storage {
    const char **hierarchy_paths;
    unsigned char *force_numeric;
} job_spec_storage;
int job_table_spec(anonkit_job *job, const char *path, const char *display_name, table_spec *spec,
                   job_spec_storage *storage);
void job_spec_free(job_spec_storage *storage);

/* NCP weights per QI of the job (NULL when equal); caller frees. */
int job_weights(anonkit_job *job, double **out /* OUT */);

#endif
