/* check.c — anonkit_check: the public entry point of the independent verifier
 * (src/verify/), which it calls with the job's settings. */
#include "api/job.h"
#include "api/locale.h"
#include "api/result.h"
#include "verify/verify.h"
#include "api/achieved.h"
#include "api/jsonb.h"
#include "verify/achieved.h"

#include <stdlib.h>

/* check --achieved: the parameters the file achieves, as the result's JSON
 * and summary (api/achieved.c). */
static int check_achieved(anonkit_job *job, const verify_params *p, anonkit_result *r)
{
    verify_achieved a;
    AK_CHECK(verify_achieved_measure(p, &a, &job->err));
    json_t *o = achieved_json(&a);
    json_t *root = json_object();
    int jfail = o == NULL;
    JSET(root, "rows", json_integer((json_int_t)a.counts.rows));
    JSET(root, "rows_suppressed", json_integer((json_int_t)a.counts.suppressed));
    JSET(root, "classes", json_integer((json_int_t)a.counts.classes));
    JSET(root, "achieved", o);
    r->json = jfail ? NULL : jsonb_dumps(root);
    json_decref(root);
    r->summary = malloc(4096);
    if (!r->json || !r->summary) return ak_err_nomem(&job->err);
    achieved_summary(&a, r->summary, 4096);
    return ANONKIT_OK;
}

/* anonkit_check in the C numeric locale. */
static int check(anonkit_job *job, const char *published_path, anonkit_result **out_result)
{
    *out_result = NULL;
    ak_err_clear(&job->err);
    const verify_params p = {published_path, job->delimiter, (const char *const *)job->qi.items, job->qi.count,
                             job->sensitive, job->model, job->suppression, job->tmpdir};
    verify_counts counts;
    if (verify_published(&p, &counts, &job->err) < 0) return job_fail(job);
    anonkit_result *r = result_new();
    if (!r) return job_out_of_memory(job);
    r->rows_read = counts.rows;
    r->published = counts.rows - counts.suppressed;
    r->suppressed = counts.suppressed;
    r->classes = counts.classes;
    if (job->risk.achieved && check_achieved(job, &p, r) < 0) { /* --achieved (verify/achieved.c) */
        anonkit_result_free(r);
        return job_fail(job);
    }
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
