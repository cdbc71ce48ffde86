/* onedim.h — the anonymize pipeline's branch for the 1-D algorithms (001). */
#ifndef AK_API_ONEDIM_H
#define AK_API_ONEDIM_H

#include <jansson.h>

#include "algo/onedim/onedim.h"
#include "api/job.h"

/* Runs the job's 1-D algorithm on t into part (initialized); *report
 * receives a JSON object of what the run did (the caller owns it). */
int job_run_onedim(anonkit_job *job, const table *t, const double *weights, partition *part, json_t **report,
                   ak_error *err);

#endif
