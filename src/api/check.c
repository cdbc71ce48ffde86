/* check.c — anonkit_check: the public entry point of the independent verifier
 * (src/verify/), which it calls with the job's settings. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "api/achieved.h"
#include "api/check_parts.h"
#include "api/job.h"
#include "api/jsonb.h"
#include "api/locale.h"
#include "api/result.h"
#include "verify/achieved.h"
#include "verify/verify.h"

/* The least t, δ and β of a file whose check asked none of them
 * (check --achieved with a sensitive column): the file is read once more
 * with t = 1, which every class satisfies, under the default ground distance. */
static int dist_measure(anonkit_job *job, const verify_params *p, verify_dist_achieved *ach)
{
    verify_params q = *p;
    model_init(&q.model);
    q.model.dist = p->model.dist;
    q.model.dist.t = 1;
    q.model.dist.delta = 0;
    q.model.dist.beta = 0;
    return verify_published_achieved(&q, NULL, ach, &job->err);
}

/* The "achieved" object of the least t, δ and β (into o) and their summary line. */
static int dist_achieved_fill(const verify_dist_achieved *ach, json_t *o, char *text, size_t size)
{
    int jfail = 0;
    JSET(o, "t", json_real(ach->a.t));
    JSET(o, "t_distance", json_string(model_t_distance_name(ach->t_distance)));
    JSET(o, "delta", isinf(ach->a.delta) ? json_null() : json_real(ach->a.delta));
    JSET(o, "beta", json_real(ach->a.beta));
    JSET(o, "beta_enhanced_satisfiable", json_boolean(ach->a.beta_enhanced_ok));
    const int n = snprintf(text, size, "achieved: ");
    if (n > 0 && (size_t)n < size) model_achieved_format(&ach->a, ach->t_distance, text + n, size - (size_t)n);
    return jfail ? -1 : 0;
}

/* check with t, δ or β asked: the least values the file achieves, as the
 * result's JSON ({"achieved": {...}}) and summary. */
static int dist_achieved_only(const verify_dist_achieved *ach, anonkit_result *r)
{
    char text[512];
    json_t *root = json_object(), *o = json_object();
    int jfail = !root || !o || dist_achieved_fill(ach, o, text, sizeof text) < 0;
    JSET(root, "achieved", o);
    r->json = jfail ? NULL : jsonb_dumps(root);
    json_decref(root);
    if (r->json && (r->summary = malloc(strlen(text) + 2))) sprintf(r->summary, "%s\n", text);
    return r->summary ? 0 : -1;
}

/* check --achieved: the parameters the file achieves, as the result's JSON
 * and summary (api/achieved.c), with the least t, δ and β when measured. */
static int check_achieved(anonkit_job *job, const verify_params *p, const verify_dist_achieved *ach,
                          anonkit_result *r)
{
    verify_achieved a;
    AK_CHECK(verify_achieved_measure(p, &a, &job->err));
    json_t *o = achieved_json(&a);
    json_t *root = json_object();
    int jfail = o == NULL;
    char dist_text[512] = "";
    if (!jfail && ach->has && dist_achieved_fill(ach, o, dist_text, sizeof dist_text) < 0) jfail = 1;
    JSET(root, "rows", json_integer((json_int_t)a.counts.rows));
    JSET(root, "rows_suppressed", json_integer((json_int_t)a.counts.suppressed));
    JSET(root, "classes", json_integer((json_int_t)a.counts.classes));
    JSET(root, "achieved", o);
    r->json = jfail ? NULL : jsonb_dumps(root);
    json_decref(root);
    r->summary = malloc(4096 + sizeof dist_text);
    if (!r->json || !r->summary) return ak_err_nomem(&job->err);
    achieved_summary(&a, r->summary, 4096);
    if (dist_text[0]) {
        strcat(r->summary, dist_text);
        strcat(r->summary, "\n");
    }
    return ANONKIT_OK;
}

/* anonkit_check in the C numeric locale: verifies the file (a folder of part
 * files, anonkit-mpi's output, as one table), then measures what it achieves
 * when --achieved or a distribution model asks for it. */
static int check(anonkit_job *job, const char *published_path, const anonkit_table *table, anonkit_result **out_result)
{
    *out_result = NULL;
    ak_err_clear(&job->err);
    if (job_check_dist(job) < 0) return ANONKIT_E_USAGE;
    struct stat sb;
    spool parts; /* the parts of a folder, as one file until the end of the check */
    memset(&parts, 0, sizeof parts);
    const char *folder = NULL;
    if (!table && strcmp(published_path, "-") != 0 && stat(published_path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        if (check_parts_spool(published_path, job->tmpdir, &parts, &job->err) < 0) return job_fail(job);
        folder = published_path;
        published_path = parts.path;
    }
    const verify_params p = {published_path, job->delimiter, (const char *const *)job->qi.items, job->qi.count,
                             job->sensitive, job->model, job->suppression, job->tmpdir,
                             job->query, job->use_codes, (const char *const *)job->missing.items, job->missing.count,
                             table};
    verify_counts counts;
    verify_dist_achieved ach;
    anonkit_result *r = NULL;
    int rc = verify_published_achieved(&p, &counts, &ach, &job->err);
    if (rc == ANONKIT_OK && job->risk.achieved && !ach.has && job->sensitive) rc = dist_measure(job, &p, &ach);
    if (rc == ANONKIT_OK && !(r = result_new())) rc = ak_err_nomem(&job->err);
    if (rc == ANONKIT_OK) {
        r->rows_read = counts.rows;
        r->published = counts.rows - counts.suppressed;
        r->suppressed = counts.suppressed;
        r->classes = counts.classes;
        if (job->risk.achieved) /* --achieved (verify/achieved.c), with the least t, δ and β */
            rc = check_achieved(job, &p, &ach, r);
        else if (ach.has && dist_achieved_only(&ach, r) < 0)
            rc = ak_err_nomem(&job->err);
    }
    if (folder) {
        if (rc < 0 && !strcmp(job->err.file, parts.path))
            snprintf(job->err.file, sizeof job->err.file, "%s (its parts as one table)", folder);
        spool_remove(&parts);
    }
    if (rc < 0) {
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
    const int rc = check(job, published_path, NULL, &result);
    result_hand_over(result, out_result);
    ak_c_numeric_leave(&scope);
    return rc;
}

int anonkit_check_table(anonkit_job *job, const anonkit_table *published, anonkit_result **out_result)
{
    if (out_result) *out_result = NULL;
    if (!job) return ANONKIT_E_USAGE;
    if (!published) return job_usage_error(job, "the published table: no table");
    ak_c_numeric scope;
    ak_c_numeric_enter(&scope);
    anonkit_result *result = NULL;
    const int rc = check(job, "the published table", published, &result); /* read as it is: no copy */
    result_hand_over(result, out_result);
    ak_c_numeric_leave(&scope);
    return rc;
}
