/* algorithm.h — the registry of anonymization algorithms behind
 * `anonkit anonymize --algorithm NAME`. Every algorithm is one entry: its
 * name, its checks of the job, how it runs (on the table in memory, or out of
 * core streaming its partitions) and where its own results go in the report.
 * Adding an algorithm means adding one entry to the table in algorithm.c. */
#ifndef AK_API_ALGORITHM_H
#define AK_API_ALGORITHM_H

#include <jansson.h>
#include <stddef.h>

#include "algo/mondrian/rothko.h"
#include "core/partition.h"
#include "core/table.h"

typedef struct anonkit_job anonkit_job;

/* What an algorithm run has besides the job: resolved once by anonymize. */
typedef struct ak_run_context {
    const double *weights; /* NCP weights per QI (NULL: equal) */
    unsigned threads;      /* worker threads, at least 1 */
    struct ak_progress *progress; /* progress and cancelling (common/progress.h; NULL: none) */
} ak_run_context;

/* What an algorithm adds to the summary and the report (either may stay NULL;
 * the caller frees both). */
typedef struct ak_run_output {
    json_t *report; /* its own object in the JSON report, under ak_algorithm.report_key */
    char *summary;  /* lines that open the human summary */
} ak_run_output;

/* An out-of-core run publishes its finished partitions through this sink
 * (rothko.h's leaf function) and leaves the schema table and an
 * "out_of_core" report object behind. */
typedef struct ak_stream_output {
    table *schema;       /* the input's schema and row count (caller frees) */
    json_t *out_of_core; /* the report's "out_of_core" object (caller frees) */
} ak_stream_output;

typedef struct ak_algorithm {
    const char *name;       /* as given to --algorithm */
    const char *report_key; /* key of the algorithm's own report object (NULL: it has none) */
    /* Checks the job before anything is read or written; NULL: no checks. */
    int (*validate)(anonkit_job *job);
    /* Rejects options that only this algorithm takes when another one runs; NULL: none to reject. */
    int (*reject_options)(anonkit_job *job);
    /* In memory: partitions t into part (initialized). */
    int (*run)(anonkit_job *job, const table *t, const ak_run_context *ctx, partition *part, ak_run_output *out);
    /* Out of core (run is NULL): reads spec itself and hands every finished partition to leaf_fn. */
    int (*stream)(anonkit_job *job, const table_spec *spec, const ak_run_context *ctx, rothko_leaf_fn leaf_fn,
                  void *leaf_ctx, ak_stream_output *out);
} ak_algorithm;

/* The algorithm called `name`, or NULL when there is none. */
const ak_algorithm *ak_algorithm_find(const char *name);

/* The algorithm of a job that names none: Mondrian. */
const ak_algorithm *ak_algorithm_default(void);

/* The known names, comma separated ("mondrian, rothko-t, ..."), into buf. */
void ak_algorithm_names(char *buf, size_t size);

/* The number of registered algorithms and the i-th of them (for checks that
 * visit every algorithm). */
size_t ak_algorithm_count(void);
const ak_algorithm *ak_algorithm_at(size_t i);

#endif
