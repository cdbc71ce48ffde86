/* report_cmd.c (api) — anonkit_report: the release report (docs/report.md) of
 * a table published earlier, made from the published file and its original
 * without anonymizing again. The metrics are measured as anonkit_metrics
 * measures them (src/metrics/published.c), the file is proven by the
 * verifier, and the document is written by the renderer anonymize --html
 * uses (html_release.c), from a JSON object shaped like the anonymize report
 * (parameters, rows, classes, metrics), which is the result's JSON. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/algorithm.h"
#include "api/html.h"
#include "api/job.h"
#include "api/jsonb.h"
#include "api/locale.h"
#include "api/measure.h"
#include "api/paths.h"
#include "api/report.h"
#include "api/result.h"
#include "io/outfile.h"
#include "metrics/published.h"

/* The settings of the job as the "parameters" of the anonymize report. */
static json_t *params_json(const anonkit_job *job, const char *published)
{
    int jfail = 0;
    json_t *params = json_object();
    JSET(params, "input", json_string(job->original));
    JSET(params, "output", json_string(published));
    JSET(params, "algorithm", job->algorithm ? json_string(job_algorithm(job)->name) : json_null());
    JSET(params, "qi", jsonb_strings(job->qi.items, job->qi.count));
    JSET(params, "sensitive", job->sensitive ? json_string(job->sensitive) : json_null());
    json_t *hier = json_object();
    for (size_t i = 0; i < job->hierarchy_attrs.count; i++)
        JSET(hier, job->hierarchy_attrs.items[i], json_string(job->hierarchy_paths.items[i]));
    JSET(params, "hierarchy", hier);
    JSET(params, "numeric", jsonb_strings(job->numeric.items, job->numeric.count));
    JSET(params, "publish", json_string(recode_style_name(job->publish)));
    jfail |= report_model_params(params, &job->model, job->model.dist.t_distance);
    if (job->suppression > 0) JSET(params, "suppression", json_real(job->suppression));
    if (job->seed_set) {
        char seed[32];
        snprintf(seed, sizeof seed, "%llu", (unsigned long long)job->seed);
        JSET(params, "seed", json_string(seed));
    }
    char delim[2] = {job->delimiter, 0};
    JSET(params, "delimiter", json_string(delim));
    if (jfail) {
        json_decref(params);
        return NULL;
    }
    return params;
}

/* The JSON the document's figures come from, shaped like the anonymize report. */
static char *report_json(const anonkit_job *job, const char *published, const table *t, const metrics_pub_result *r)
{
    int jfail = 0;
    const metrics *mt = &r->m;
    const int ncp_known = job->publish != RECODE_MEAN;
    json_t *root = json_object();
    JSET(root, "anonkit_version", json_string(ANONKIT_VERSION));
    JSET(root, "source", json_string("a published file and its original (anonkit report)"));
    JSET(root, "parameters", params_json(job, published));
    JSET(root, "rows_read", json_integer((json_int_t)mt->rows));
    JSET(root, "rows_published", json_integer((json_int_t)mt->published));
    JSET(root, "rows_suppressed", json_integer((json_int_t)mt->suppressed));
    JSET(root, "classes", json_integer((json_int_t)mt->classes));
    JSET(root, "min_class_size", json_integer((json_int_t)mt->min_class));
    JSET(root, "mean_class_size", json_real(mt->mean_class));
    JSET(root, "max_class_size", json_integer((json_int_t)mt->max_class));
    json_t *metric = json_object();
    JSET(metric, "dm", json_real(mt->dm));
    JSET(metric, "cavg", json_real(mt->cavg));
    JSET(metric, "gcp", ncp_known ? json_real(mt->gcp) : json_null());
    json_t *ncp = json_object();
    for (uint32_t q = 0; q < t->nqi; q++)
        JSET(ncp, t->qi[q].name, ncp_known || t->qi[q].kind != ATTR_NUMERIC ? json_real(mt->ncp[q]) : json_null());
    JSET(metric, "ncp", ncp);
    if (job->class_name) JSET(metric, "conditional_entropy", json_real(r->conditional_entropy));
    if (job->target_name) JSET(metric, "rmse", json_real(r->rmse));
    JSET(root, "metrics", metric);
    char *text = jfail ? NULL : jsonb_dumps(root);
    json_decref(root);
    return text;
}

/* Refusals before any work. */
static int report_usage(anonkit_job *job, const char *published)
{
    ak_error *err = &job->err;
    if (!job->qi.count) return ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0, "no quasi-identifiers given (--qi)");
    if (!job->original)
        return ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0, "no original given (--original FILE: the table the file was published from)");
    if (!job->html) return ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0, "no document to write given (--html FILE)");
    if (!strcmp(published, "-") || !strcmp(job->original, "-"))
        return ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0,
                          "report reads its files more than once: give the published file and the original as files, not -");
    if (!strcmp(job->html, "-"))
        return ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0, "--html needs a file (the document is written atomically)");
    AK_CHECK(model_validate(&job->model, err));
    /* the published file is what this verb reads as its input */
    char *input = job->input;
    job->input = (char *)published;
    const int rc = job_check_paths(job, JOB_VERB_REPORT);
    job->input = input;
    return rc;
}

/* anonkit_report in the C numeric locale. */
static int report_run(anonkit_job *job, const char *published, anonkit_result **out_result)
{
    *out_result = NULL;
    ak_error *err = &job->err;
    ak_err_clear(err);
    if (report_usage(job, published) < 0) return job_fail(job);
    anonkit_result *result = NULL;
    outfile hf;
    memset(&hf, 0, sizeof hf);
    measure_pair m;
    memset(&m, 0, sizeof m);
    int verdict = ANONKIT_OK;
    int rc = outfile_open(&hf, job->html, err);
    if (rc == ANONKIT_OK) rc = measure_pair_run(job, job->original, published, 0, &m);
    if (rc == ANONKIT_OK && !(result = result_new())) rc = ak_err_nomem(err);
    if (rc < 0) goto done;
    result->rows_read = m.r.m.rows;
    result->published = m.r.m.published;
    result->suppressed = m.r.m.suppressed;
    result->classes = m.r.m.classes;
    if (!(result->json = report_json(job, m.o.shown, m.t, &m.r))) {
        rc = ak_err_nomem(err);
        goto done;
    }
    if ((rc = html_release_write(job, "anonkit report", result->json, m.o.path, m.o.shown, m.original_path,
                                 m.original_shown, hf.stream, job->html, &verdict, err)) < 0)
        goto done;
    rc = outfile_commit(&hf, err);
    if (rc == ANONKIT_OK && verdict == ANONKIT_E_VIOLATION)
        rc = ak_err_set(err, ANONKIT_E_VIOLATION, m.o.shown, 0, 0,
                        "the file violates the privacy model; %s documents the violation", job->html);
done:
    outfile_abort(&hf);
    measure_pair_free(&m);
    if (rc < 0) {
        anonkit_result_free(result);
        return job_fail(job);
    }
    *out_result = result;
    return ANONKIT_OK;
}

int anonkit_report(anonkit_job *job, const char *published_path, anonkit_result **out_result)
{
    ak_c_numeric scope;
    ak_c_numeric_enter(&scope);
    anonkit_result *result = NULL;
    const int rc = report_run(job, published_path, &result);
    result_hand_over(result, out_result);
    ak_c_numeric_leave(&scope);
    return rc;
}
