/* report.h — the summary and the JSON report of an anonymize run, shared by
 * the in-memory and the out-of-core data flow of anonymize.c. */
#ifndef AK_API_REPORT_H
#define AK_API_REPORT_H

#include <jansson.h>

#include "api/job.h"
#include "core/partition.h"
#include "core/table.h"
#include "metrics/metrics.h"
#include "publish/publish.h"

/* Seconds spent in each phase of a run. */
typedef struct phase_times {
    double read, anonymize, write, metrics;
} phase_times;

/* Workload quality ([LeFevre07] §5.5), when a class label or a target is known. */
typedef struct workload_quality {
    int has_entropy, has_rmse;
    double entropy, rmse;
    int has_achieved;      /* t, δ or β was asked: the least t, δ and β the classes achieve */
    unsigned t_distance;   /* MODEL_T_* of achieved.t */
    model_achieved achieved;
} workload_quality;

/* Measures the workload quality of partition p (zero when t has neither a
 * class column nor a target). */
int report_measure_workload(anonkit_job *job, const table *t, const partition *p, workload_quality *wq /* OUT */);

/* The privacy model's settings into the report's "parameters" object: k,
 * variance, l (its variants and c), t (and its distance, t_distance: the one
 * the run measured with), δ, β (and its variant), each only when asked for;
 * nonzero when out of memory. Shared by anonymize's report and `anonkit
 * report`'s. */
int report_model_params(json_t *params, const model *m, unsigned t_distance);

/* The JSON report: parameters, counts, class sizes, metrics, timing, then the
 * "out_of_core" object and the algorithm's own object when not NULL. The
 * caller frees the text; NULL when out of memory. */
char *report_build(const anonkit_job *job, const table *t, const metrics *mt, const workload_quality *wq,
                   double seconds, const phase_times *pt, const publish_stats *ps, json_t *out_of_core, json_t *algo);

/* The human summary, opened by the algorithm's own lines `algo` (may be NULL). */
char *report_summary(const anonkit_job *job, const table *t, const metrics *mt, const workload_quality *wq,
                     double seconds, const publish_stats *ps, const char *algo);

/* The re-identification risk of the input and of the output side by side
 * and the output's achieved parameters (api/risk.c, docs/risk.md): prepared
 * before report_build, which adds it as "risk"; report_append_risk adds its
 * lines to the summary; report_release_risk frees it (also after a failure). */
int report_prepare_risk(anonkit_job *job, const table *t, const partition *p);
int report_append_risk(anonkit_job *job, char **summary);
void report_release_risk(anonkit_job *job);

#endif
