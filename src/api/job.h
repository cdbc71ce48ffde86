/* job.h — the settings of one run (the anonkit_job behind the public API),
 * shared by the entry points in src/api/. The settings every verb shares sit
 * in the job itself; each algorithm's own settings in its options struct
 * inside it (job->rothko, job->incognito, job->onedim). Options are set only
 * through the option table (options.c); knobs that only tests turn through
 * job_set_knob. */
#ifndef AK_JOB_H
#define AK_JOB_H

#include <stddef.h>
#include <stdint.h>

#include "anonkit/anonkit.h"
#include "api/risk_options.h"
#include "algo/incognito/incognito.h"
#include "algo/mondrian/mondrian.h"
#include "common/error.h"
#include "common/progress.h"
#include "core/recode.h"
#include "core/table.h"
#include "model/model.h"
#include "model/sampletest.h"
#include "model/xyprivacy.h"

typedef struct strlist {
    char **items;
    size_t count;
} strlist;

/* Rothko-T and Rothko-S (--algorithm rothko-t|rothko-s). */
typedef struct rothko_job_options {
    unsigned fcache;       /* rothko-t: 0 = as many as fit */
    double alpha;          /* rothko-s: 0 = 0.05 */
    sample_test_kind test;
    uint64_t sample_size;  /* rothko-s: 0 = as many rows as the budget holds */
    uint32_t growth_depth; /* rothko-s: 0 = until memory is full */
    size_t block_size;     /* 0 = 256 KiB */
    uint64_t pipeline_min_rows; /* test knob: rothko_options' (repartition small tables on two threads) */
    uint64_t first_sample_rows; /* test knob: rothko_options' (sample the root by a scan) */
} rothko_job_options;

/* Incognito (--algorithm incognito). */
typedef struct incognito_job_options {
    inc_variant variant;
    inc_choose choose;
    unsigned given; /* incognito-only options given: 1 suppression, 2 variant, 4 choose */
} incognito_job_options;

/* The 1-D algorithms (hilbert, idistance and their -fast variants). */
typedef struct onedim_job_options {
    unsigned bits, centers; /* 0: the defaults */
} onedim_job_options;

/* anonkit hierarchy (src/api/hierarchy.c): the builder's settings as given. */
typedef struct hier_job_options {
    char *column, *interval, *fanout, *min, *max, *quantiles, *levels, *date, *order;
    int mask, flat, preview;
} hier_job_options;

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
    int k_set;             /* --k was given (--k 1: publishing without a privacy model is asked for) */
    int l_variant_set;
    uint64_t seed;
    int seed_set;
    int keep_order;
    unsigned threads;      /* 0: one per online core */
    uint64_t parallel_min_bytes; /* test knob: table_spec's (read small files in two pieces) */
    void (*loaded_hook)(void *ctx, const char *path); /* test hook: table_spec's `loaded` (job_set_loaded_hook) */
    void *loaded_ctx;
    size_t memory;         /* out of core: budget in bytes (0: not given) */
    char *tmpdir;          /* --tmpdir: where spill files, sort runs and the copy of stdin go (NULL: $TMPDIR) */
    char delimiter;
    /* sequential releases ([Wang06]) */
    strlist previous, x_attrs, y_attrs, sensitive_values;
    xy_model xy;
    int score_distortion;
    char *inconsistent;
    unsigned kl_level;     /* metrics --kl-level; 0: none */
    char *class_error;     /* metrics --class-error: the class column of the decision tree */
    uint64_t train_rows;   /* metrics --train-rows: the first N rows train (0: not given) */
    char *split_column;    /* metrics --split-column: train/test per row */
    strlist job_files;     /* the job files read (--job), which a run must not write */
    double suppression;    /* incognito, check: share of rows that may be suppressed */
    char *query;           /* --query: the input's rows are this SELECT's (io/source.h) */
    int replace;           /* --replace: a table output may replace an existing table */
    int use_codes;         /* --use-codes: value codes instead of value labels */
    rothko_job_options rothko;
    incognito_job_options incognito;
    onedim_job_options onedim;
    risk_job_options risk; /* anonkit risk, check --achieved, --max-risk (api/risk_options.h) */
    char *html;            /* --html: the release report (docs/report.md); NULL: none */
    char *original;        /* --original: the original of `anonkit report`'s published file */
    strlist settings;      /* every option set, "--name value" in the order set (the release report) */
    ak_error err;
    char errmsg[2048];
    /* missing values and generalized numbers (docs/hierarchies.md) */
    strlist missing;       /* --missing: tokens that stand for a missing value besides the empty cell */
    int interval_format;   /* --interval-format: ak_interval_style */
    hier_job_options hbuild; /* anonkit hierarchy */
    struct job_tables *tables; /* tables in memory (api/tables.h); NULL until the table API is used */
    /* progress and cancelling (anonkit_job_set_progress; docs/ARCHITECTURE.md §12a) */
    ak_progress progress;  /* its callback, counters and cancel flag */
    int progress_on, progress_off; /* --progress, --no-progress */
};

/* Knobs that are not options: only tests turn them, to reach code paths that
 * small inputs would not take. */
typedef enum job_knob {
    JOB_KNOB_PARALLEL_MIN_BYTES = 0, /* table_spec: read files from this size in two pieces */
    JOB_KNOB_PIPELINE_MIN_ROWS = 1,  /* rothko: repartition from this many rows on two threads */
    JOB_KNOB_FIRST_SAMPLE_ROWS = 2,  /* rothko-s: most rows each first-scan piece keeps for the root's sample */
    JOB_KNOB_PROGRESS_INTERVAL_US = 3 /* least microseconds between two progress calls (0: at every check) */
} job_knob;
void job_set_knob(anonkit_job *job, job_knob knob, uint64_t value);
/* Tests only: fn(ctx, path) runs once the input is read and encoded, before
 * anything reads it again (table_spec.loaded), so that a test can change the
 * file right there. */
void job_set_loaded_hook(anonkit_job *job, void (*fn)(void *ctx, const char *path), void *ctx);

/* The job's progress state when a callback is set, else NULL (nothing to
 * count, nothing to check). */
ak_progress *job_progress(anonkit_job *job);

/* Starts the progress of a run (when a callback is set) with its reading
 * phase, the input at path (NULL: not a file) giving the bytes expected.
 * ANONKIT_E_CANCELLED (in job->err) when the callback cancels at once. */
int job_progress_start(anonkit_job *job, const char *path);

/* The algorithm the job runs (Mondrian when it names none). */
const struct ak_algorithm *job_algorithm(const anonkit_job *job);

/* Fills errmsg from err and returns err.code. */
int job_fail(anonkit_job *job);

/* A usage error (ANONKIT_E_USAGE) with a printf-style message, in errmsg. */
int job_usage_error(anonkit_job *job, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* An out-of-memory error, in errmsg. */
int job_out_of_memory(anonkit_job *job);

/* Loads every setting of the JSON job file at path (ANONKIT_OPT_JOB); relative
 * paths in it are taken relative to the file's folder. */
int job_load_file(anonkit_job *job, const char *path);

/* The job's lists of texts. */
void strlist_free(strlist *l);
int strlist_push(strlist *l, const char *s, size_t len); /* a copy of s[0..len); -1 when out of memory */

/* Builds the table spec of the job for input `path` (shown as display_name).
 * The arrays it points to live in *storage until job_spec_free(storage). */
typedef struct job_spec_storage {
    const char **hierarchy_paths;
    const struct anonkit_table **hierarchy_tables;
    unsigned char *force_numeric;
} job_spec_storage;
int job_table_spec(anonkit_job *job, const char *path, const char *display_name, table_spec *spec,
                   job_spec_storage *storage);
void job_spec_free(job_spec_storage *storage);

/* The --hierarchy file given for the sensitive column, or NULL. */
const char *job_sensitive_hierarchy(const anonkit_job *job);
/* Sets job->model.dist.hierarchy and checks t/δ/β against the other settings
 * (a sensitive column; a hierarchy for the hierarchical distance). */
int job_check_dist(anonkit_job *job);

/* NCP weights per QI of the job (NULL when equal); caller frees. */
int job_weights(anonkit_job *job, double **out /* OUT */);

#endif
