/* missing.h (api) — missing values of numeric quasi-identifiers after an
 * in-memory algorithm (docs/hierarchies.md, "Missing values"). */
#ifndef AK_API_MISSING_H
#define AK_API_MISSING_H

#include "api/job.h"
#include "core/partition.h"

/* Separates, in every class of p, the rows whose numeric QIs with missing
 * values (table_qi.has_missing, code 0) are missing from those where they
 * are present, so that no class mixes the two: a class that mixes them is
 * cut into one class per pattern of missing QIs, each with its own box, and
 * a part that does not satisfy the job's model on its own is suppressed.
 * Classes that do not mix are kept as they are. Nothing to do when the table
 * has no missing numeric value. */
int job_separate_missing(anonkit_job *job, const table *t, partition *p);

#endif
