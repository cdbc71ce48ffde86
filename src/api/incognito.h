/* incognito.h (api) — `anonkit anonymize --algorithm incognito`: the job's
 * options checked, the lattice searched, the chosen node published as a
 * partitioning, and the search's result for the summary and the report. */
#ifndef AK_API_INCOGNITO_H
#define AK_API_INCOGNITO_H

#include <jansson.h>

#include "api/job.h"
#include "core/partition.h"
#include "core/table.h"

/* Rejects options that do not go with the job's algorithm (before reading). */
int inc_job_validate(anonkit_job *job);

/* Searches, chooses and fills part (initialized); *report receives the
 * "incognito" object of the JSON report and *summary lines for the human
 * summary (caller frees both). */
int inc_job_run(anonkit_job *job, const table *t, partition *part, json_t **report /* OUT */,
                char **summary /* OUT */);

#endif
