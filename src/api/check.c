/* check.c — anonkit_check: the public entry point of the independent verifier
 * (src/verify/), which it calls with the job's settings. */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "api/job.h"
#include "api/jsonb.h"
#include "api/locale.h"
#include "api/result.h"
#include "verify/verify.h"

/* anonkit_check in the C numeric locale. */
static int check(anonkit_job *job, const char *published_path, anonkit_result **out_result)
{
    *out_result = NULL;
    ak_err_clear(&job->err);
    if (job_check_dist(job) < 0) return ANONKIT_E_USAGE;
    const verify_params p = {published_path, job->delimiter, (const char *const *)job->qi.items, job->qi.count,
                             job->sensitive, job->model, job->suppression, job->tmpdir};
    verify_counts counts;
    verify_achieved ach;
    if (verify_published_achieved(&p, &counts, &ach, &job->err) < 0) return job_fail(job);
    anonkit_result *r = result_new();
    if (!r) return job_out_of_memory(job);
    r->rows_read = counts.rows;
    r->published = counts.rows - counts.suppressed;
    r->suppressed = counts.suppressed;
    r->classes = counts.classes;
    if (ach.has) {
        char text[512];
        model_achieved_format(&ach.a, ach.t_distance, text, sizeof text);
        json_t *o = json_pack("{s:{s:f,s:s,s:o,s:f,s:b}}", "achieved", "t", ach.a.t, "t_distance",
                              model_t_distance_name(ach.t_distance), "delta",
                              isinf(ach.a.delta) ? json_null() : json_real(ach.a.delta), "beta",
                              ach.a.beta, "beta_enhanced_satisfiable", ach.a.beta_enhanced_ok);
        r->summary = strdup(text);
        r->json = o ? jsonb_dumps(o) : NULL;
        json_decref(o);
        if (!r->summary || !r->json) {
            anonkit_result_free(r);
            return job_out_of_memory(job);
        }
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
