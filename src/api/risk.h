/* risk.h (api) — re-identification risk in the API layer (docs/risk.md):
 * anonkit_risk, the risk block of the anonymize report and the --max-risk
 * settings, on top of src/metrics/risk.h and src/model/risk_model.h. */
#ifndef AK_API_RISK_H
#define AK_API_RISK_H

#include <jansson.h>
#include <stddef.h>

#include "api/job.h"
#include "core/partition.h"
#include "core/table.h"

/* Applies --max-risk before a run: highest=R raises k to ceil(1/R); average
 * and uniqueness are refused for every algorithm but incognito, and with
 * --suppression (their monotonicity needs every row counted). */
int risk_job_prepare(anonkit_job *job);

/* The --max-risk table predicate Incognito tests at every lattice node, with
 * N resolved for a table of `rows` rows into *storage; NULL when --max-risk
 * asks nothing a k cannot say. A population smaller than the table is an
 * error (*status < 0, in job->err). */
const risk_model *risk_job_table_model(anonkit_job *job, uint64_t rows, risk_model *storage, int *status);

/* The risk of the input (its rows grouped by their QI codes) and of the
 * output (the partition's classes, suppressed rows left out), side by side
 * as the report's "risk" object (*out, NULL on failure) and summary lines
 * (buf). */
int risk_report_block(anonkit_job *job, const table *t, const partition *p, json_t **out /* OUT */, char *buf,
                      size_t size);

#endif
