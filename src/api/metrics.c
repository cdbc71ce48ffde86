/* metrics.c — anonkit_metrics: the public entry point of the metrics of a
 * published file (src/metrics/published.c). Loads the original with the
 * job's settings, copies "-" (standard input) into a private file, calls the
 * metrics layer and writes its values as the JSON document of the API. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/jsonb.h"
#include "api/job.h"
#include "api/locale.h"
#include "api/result.h"
#include "api/sources.h"
#include "io/spool.h"
#include "metrics/published.h"

/* The metrics' options from the job, for the published file at path (shown as `shown`). */
static metrics_pub_options pub_options(const anonkit_job *job, const char *path, const char *shown)
{
    return (metrics_pub_options){
        .path = path,
        .shown = shown,
        .delimiter = job->delimiter,
        .qi = (const char *const *)job->qi.items,
        .nqi = job->qi.count,
        .k = job->model.k,
        .suppression = job->suppression,
        .extents_known = job->publish != RECODE_MEAN,
        .class_name = job->class_name,
        .target = job->target_name,
        .kl_level = job->kl_level,
        .sensitive = job->sensitive,
        .class_error = job->class_error,
        .train_rows = job->train_rows,
        .split_column = job->split_column,
    };
}

/* The JSON document of anonkit_metrics for the values r of the original t. */
static json_t *metrics_json(const anonkit_job *job, const table *t, const metrics_pub_result *r)
{
    int jfail = 0;
    const metrics *mt = &r->m;
    const int ncp_known = job->publish != RECODE_MEAN;
    json_t *root = json_object();
    JSET(root, "rows", json_integer((json_int_t)mt->rows));
    JSET(root, "rows_published", json_integer((json_int_t)mt->published));
    JSET(root, "rows_suppressed", json_integer((json_int_t)mt->suppressed));
    JSET(root, "classes", json_integer((json_int_t)mt->classes));
    JSET(root, "min_class_size", json_integer((json_int_t)mt->min_class));
    JSET(root, "mean_class_size", json_real(mt->mean_class));
    JSET(root, "max_class_size", json_integer((json_int_t)mt->max_class));
    JSET(root, "k", json_integer((json_int_t)job->model.k));
    JSET(root, "dm", json_real(mt->dm));
    JSET(root, "cavg", json_real(mt->cavg));
    JSET(root, "gcp", json_real(mt->gcp));
    if (!ncp_known) JSET_REF(root, "gcp", json_null());
    json_t *per = json_object();
    for (uint32_t q = 0; q < t->nqi; q++)
        JSET(per, t->qi[q].name,
                            ncp_known || t->qi[q].kind != ATTR_NUMERIC ? json_real(mt->ncp[q]) : json_null());
    JSET(root, "ncp", per);
    for (int kind = 0; kind < 2; kind++)
        JSET(root, kind ? "distortion_continuous" : "distortion_categorical",
                            (ncp_known || !kind) && t->nrows ? json_real(r->distortion[kind] / (double)t->nrows)
                                                             : json_null());
    if (job->class_name) JSET(root, "conditional_entropy", json_real(r->conditional_entropy));
    if (job->target_name) JSET(root, "rmse", json_real(r->rmse));
    if (job->kl_level) {
        JSET(root, "kl_level", json_integer((json_int_t)job->kl_level));
        JSET(root, "kl_groupbys", json_integer((json_int_t)r->kl_groupbys));
        /* +inf (a cell the estimate misses) has no JSON number: null */
        JSET(root, "kl_divergence", isfinite(r->kl_divergence) ? json_real(r->kl_divergence) : json_null());
    }
    if (job->class_error) {
        const class_error *ce = &r->ce;
        json_t *o = json_object();
        JSET(o, "column", json_string(job->class_error));
        JSET(o, "train_rows", json_integer((json_int_t)ce->train_rows));
        JSET(o, "test_rows", json_integer((json_int_t)ce->test_rows));
        JSET(o, "errors", json_integer((json_int_t)ce->errors));
        JSET(o, "error", json_real(ce->error));
        JSET(o, "majority_error", json_real((double)ce->majority_errors / (double)ce->test_rows));
        JSET(o, "leaves", json_integer((json_int_t)ce->leaves));
        JSET(root, "class_error", o);
    }
    if (jfail) {
        json_decref(root);
        return NULL;
    }
    return root;
}

/* anonkit_metrics in the C numeric locale. */
static int metrics_run(anonkit_job *job, const char *original_path, const char *published_path,
                       anonkit_result **out_result)
{
    *out_result = NULL;
    ak_error *err = &job->err;
    ak_err_clear(err);
    if (!job->qi.count) return ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0, "no quasi-identifiers given (--qi)"), job_fail(job);
    metrics_pub_options o = pub_options(job, published_path, published_path);
    if (metrics_pub_usage(&o, err) < 0) return job_fail(job);
    spool sp;
    memset(&sp, 0, sizeof sp);
    source_input orig_in, pub_in; /* a source that is not a CSV file, through a private spool (io/source.h) */
    memset(&orig_in, 0, sizeof orig_in);
    memset(&pub_in, 0, sizeof pub_in);
    const source_options so = job_source_options(job);
    metrics_pub_groups g;
    memset(&g, 0, sizeof g);
    metrics_pub_result r;
    memset(&r, 0, sizeof r);
    table *t = NULL;
    double *weights = NULL;
    job_spec_storage storage = {0};
    table_spec spec;
    anonkit_result *result = NULL;
    int rc = ANONKIT_OK;
    if (strcmp(published_path, "-") == 0 && strcmp(original_path, "-") == 0) {
        rc = ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0, "the original and the published file cannot both be stdin");
        goto done;
    }
    const char *original_shown = original_path;
    if (strcmp(published_path, "-") == 0) {
        o.shown = "stdin";
        if ((rc = spool_stream_in(&sp, stdin, job->tmpdir, err)) < 0) goto done;
        o.path = sp.path;
    } else if (strcmp(original_path, "-") == 0) { /* the original is read as a file, so it is spooled too */
        original_shown = "stdin";
        if ((rc = spool_stream_in(&sp, stdin, job->tmpdir, err)) < 0) goto done;
        original_path = sp.path;
    }
    if (source_is_special(original_path)) {
        if ((rc = source_input_open(&orig_in, original_path, &so, 0, err)) < 0) goto done;
        original_path = orig_in.path;
        original_shown = orig_in.shown;
    }
    if (source_is_special(published_path)) {
        if ((rc = source_input_open(&pub_in, published_path, &so, 0, err)) < 0) goto done;
        o.path = pub_in.path;
        o.shown = pub_in.shown;
    }
    if ((rc = job_table_spec(job, original_path, original_shown, &spec, &storage)) < 0) goto done;
    /* the original is read for its domains only (and its sensitive values for --kl-level) */
    spec.sensitive_name = job->kl_level ? job->sensitive : NULL;
    spec.nidentifiers = 0;
    spec.read_once = 1;
    spec.progress = job_progress(job); /* the original's rows, per block; a cancel stops the reading */
    if ((rc = job_progress_start(job, original_path)) < 0) goto done;
    if ((rc = table_load(&t, &spec, err)) < 0) goto done;
    if ((rc = metrics_pub_read(&g, &o, err)) < 0) goto done;
    if ((rc = job_weights(job, &weights)) < 0) goto done;
    if ((rc = metrics_pub_measure(t, &g, &o, weights, &r, err)) < 0) goto done;
    if ((rc = ak_progress_end(job_progress(job), err)) < 0) goto done;
    if (!(result = result_new())) {
        rc = ak_err_nomem(err);
        goto done;
    }
    result->rows_read = r.m.rows;
    result->published = r.m.published;
    result->suppressed = r.m.suppressed;
    result->classes = r.m.classes;
    json_t *root = metrics_json(job, t, &r);
    result->json = jsonb_dumps(root);
    json_decref(root);
    rc = result->json ? ANONKIT_OK : ak_err_nomem(err);
done:
    spool_remove(&sp);
    source_input_close(&orig_in);
    source_input_close(&pub_in);
    metrics_pub_groups_free(&g);
    metrics_pub_result_free(&r);
    table_free(t);
    free(weights);
    job_spec_free(&storage);
    if (rc < 0) {
        anonkit_result_free(result);
        return job_fail(job);
    }
    *out_result = result;
    return ANONKIT_OK;
}

int anonkit_metrics(anonkit_job *job, const char *original_path, const char *published_path,
                    anonkit_result **out_result)
{
    ak_c_numeric scope;
    ak_c_numeric_enter(&scope);
    anonkit_result *result = NULL;
    const int rc = metrics_run(job, original_path, published_path, &result);
    result_hand_over(result, out_result);
    ak_c_numeric_leave(&scope);
    return rc;
}
