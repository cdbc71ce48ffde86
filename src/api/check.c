/* check.c — anonkit_check and anonkit_check_counts: the public entry points of
 * the independent verifier (src/verify/), which they call with the job's
 * settings. */
#include "api/job.h"
#include "verify/verify.h"

int anonkit_check(anonkit_job *job, const char *published_path, uint64_t *out_classes, uint64_t *out_rows)
{
    return anonkit_check_counts(job, published_path, out_classes, out_rows, NULL);
}

int anonkit_check_counts(anonkit_job *job, const char *published_path, uint64_t *out_classes, uint64_t *out_rows,
                         uint64_t *out_suppressed)
{
    ak_err_clear(&job->err);
    const verify_params p = {published_path, job->delimiter, (const char *const *)job->qi.items, job->qi.count,
                             job->sensitive, job->model, job->suppression};
    verify_counts counts;
    if (verify_published(&p, &counts, &job->err) < 0) return job_fail(job);
    if (out_classes) *out_classes = counts.classes;
    if (out_rows) *out_rows = counts.rows;
    if (out_suppressed) *out_suppressed = counts.suppressed;
    return ANONKIT_OK;
}
