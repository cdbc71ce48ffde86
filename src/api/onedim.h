/* onedim.h — the anonymize pipeline's branch for the 1-D algorithms ([Ghinita07]). */
#ifndef AK_API_ONEDIM_H
#define AK_API_ONEDIM_H

#include "api/algorithm.h"

/* Runs the job's 1-D algorithm on t into part (initialized); out->report
 * receives a JSON object of what the run did (the report's "onedim"). */
int onedim_job_run(anonkit_job *job, const table *t, const ak_run_context *ctx, partition *part,
                   ak_run_output *out);

/* Refuses t-closeness, δ-disclosure and β-likeness (no sound 1-D grouping rule for them). */
int onedim_job_validate(anonkit_job *job);

#endif
