/* kl.h — the KL-divergence of `anonkit metrics --kl-level` (001 §6.3). */
#ifndef AK_API_KL_H
#define AK_API_KL_H

#include <jansson.h>

#include "api/job.h"

/* Reads the published file at path (shown as `shown` in messages), measures
 * the divergence of its datacube at job->kl_level against t (the original,
 * loaded with its sensitive column) and adds kl_level, kl_groupbys and
 * kl_divergence to root. */
int job_kl_metric(anonkit_job *job, const table *t, const char *path, const char *shown, json_t *root);

#endif
