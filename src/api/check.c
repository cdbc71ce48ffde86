/* check.c — anonkit_check: the public entry point of the independent verifier
 * (src/verify/), which it calls with the job's settings. */
#include "api/job.h"
#include "api/locale.h"
#include "api/result.h"
#include "verify/verify.h"

#include <string.h>
#include <sys/stat.h>

#include "api/check_parts.h"

/* anonkit_check in the C numeric locale. */
static int check(anonkit_job *job, const char *published_path, anonkit_result **out_result)
{
    *out_result = NULL;
    ak_err_clear(&job->err);
    /* a folder of part files (anonkit-mpi's output) is checked as one table */
    struct stat sb;
    spool parts;
    memset(&parts, 0, sizeof parts);
    const char *folder = NULL;
    if (strcmp(published_path, "-") != 0 && stat(published_path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        if (check_parts_spool(published_path, job->tmpdir, &parts, &job->err) < 0) return job_fail(job);
        folder = published_path;
        published_path = parts.path;
    }
    const verify_params p = {published_path, job->delimiter, (const char *const *)job->qi.items, job->qi.count,
                             job->sensitive, job->model, job->suppression, job->tmpdir};
    verify_counts counts;
    const int vrc = verify_published(&p, &counts, &job->err);
    if (folder) {
        if (vrc < 0 && !strcmp(job->err.file, parts.path))
            snprintf(job->err.file, sizeof job->err.file, "%s (its parts as one table)", folder);
        spool_remove(&parts);
    }
    if (vrc < 0) return job_fail(job);
    anonkit_result *r = result_new();
    if (!r) return job_out_of_memory(job);
    r->rows_read = counts.rows;
    r->published = counts.rows - counts.suppressed;
    r->suppressed = counts.suppressed;
    r->classes = counts.classes;
    *out_result = r;
    return ANONKIT_OK;
}

int anonkit_check(anonkit_job *job, const char *published_path, anonkit_result **out_result)
{
    ak_c_numeric scope;
    ak_c_numeric_enter(&scope);
    anonkit_result *result = NULL;
    const int rc = check(job, published_path, &result);
    result_hand_over(result, out_result);
    ak_c_numeric_leave(&scope);
    return rc;
}
