/* measure.h — a published file measured against its original, the step that
 * `anonkit metrics` and `anonkit report` share: standard input and table or
 * statistics-file sources spooled (io/source.h), the original loaded for its
 * domains, the published file grouped and measured (metrics/published.h). */
#ifndef AK_API_MEASURE_H
#define AK_API_MEASURE_H

#include "api/job.h"
#include "io/source.h"
#include "io/spool.h"
#include "metrics/published.h"

typedef struct measure_pair {
    metrics_pub_options o;       /* o.path / o.shown: the published file as read and as named */
    const char *original_path;   /* the original as read (a spool for stdin or a source) */
    const char *original_shown;  /* and as named in messages (passwords masked) */
    metrics_pub_groups g;
    metrics_pub_result r;
    table *t;                    /* the original */
    double *weights;             /* NCP weights (NULL: equal) */
    /* owned storage */
    spool sp;
    source_input orig_in, pub_in;
    job_spec_storage storage;
} measure_pair;

/* Measures published_path against original_path with the job's settings
 * into *m (which measure_pair_free releases, also after a failure).
 * `with_kl`: the original's sensitive values are read for --kl-level. */
int measure_pair_run(anonkit_job *job, const char *original_path, const char *published_path, int with_kl,
                     measure_pair *m /* OUT */);
void measure_pair_free(measure_pair *m);

#endif
