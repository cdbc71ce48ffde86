/* risk_options.h (api) — the settings of `anonkit risk`, `check --achieved`
 * and --max-risk inside the job (job->risk); set through the option table. */
#ifndef AK_API_RISK_OPTIONS_H
#define AK_API_RISK_OPTIONS_H

#include "model/risk_model.h"

typedef struct risk_job_options {
    int published;            /* --published: classes from a published file's values */
    char *population;         /* --population FILE: a superset table (journalist risk) */
    double population_size;   /* --population-size N; 0: not given */
    double sampling_fraction; /* --sampling-fraction F; 0: not given */
    char *weight;             /* --weight COL: sampling weights (individual risk) */
    double threshold;         /* --threshold (default 0.2, set by the verb when not given) */
    int threshold_set;
    unsigned suda;            /* --suda M; 0: none */
    char *json;               /* --json FILE */
    int achieved;             /* check --achieved */
    risk_model max;           /* --max-risk */
    /* an anonymize run's risk block, between report_prepare_risk and report_release_risk */
    struct json_t *report_block;
    char *report_lines;
} risk_job_options;

#endif
