/* incognito.h (api) — `anonkit anonymize --algorithm incognito`: the job's
 * options checked, the lattice searched, the chosen node published as a
 * partitioning, and the search's result for the summary and the report. */
#ifndef AK_API_INCOGNITO_H
#define AK_API_INCOGNITO_H

#include "api/algorithm.h"

/* Checks a job that runs incognito (before reading). */
int inc_job_validate(anonkit_job *job);

/* Rejects incognito's own options in a job that runs another algorithm. */
int inc_job_reject_options(anonkit_job *job);

/* Searches, chooses and fills part (initialized); out->report receives the
 * "incognito" object of the JSON report and out->summary lines for the human
 * summary. */
int inc_job_run(anonkit_job *job, const table *t, const ak_run_context *ctx, partition *part, ak_run_output *out);

/* --algorithm local (api/local.c): local recoding by iterated full-domain
 * generalization; its checks and its run, whose report object is "local". */
int local_job_validate(anonkit_job *job);
int local_job_run(anonkit_job *job, const table *t, const ak_run_context *ctx, partition *part, ak_run_output *out);

#endif
