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
#include "api/measure.h"
#include "api/result.h"
#include "api/sources.h"
#include "api/tables.h"
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

static int pair_measure(anonkit_job *job, table_spec *spec, int with_kl, measure_pair *m);

/* measure_pair_run, or with the original and the published table in
 * memory when orig_mem and pub_mem are given (the paths then their names in
 * messages): read through the CSV reader's table backend, no private copy. */
static int pair_run(anonkit_job *job, const char *original_path, const char *published_path,
                    const anonkit_table *orig_mem, const anonkit_table *pub_mem, int with_kl, measure_pair *m)
{
    memset(m, 0, sizeof *m);
    ak_error *err = &job->err;
    m->o = pub_options(job, published_path, published_path);
    m->o.mem = pub_mem;
    if (orig_mem && pub_mem) {
        table_spec spec;
        AK_CHECK(job_table_spec(job, original_path, original_path, &spec, &m->storage));
        spec.mem = orig_mem;
        return pair_measure(job, &spec, with_kl, m);
    }
    AK_CHECK(metrics_pub_usage(&m->o, err));
    if (strcmp(published_path, "-") == 0 && strcmp(original_path, "-") == 0)
        return ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0, "the original and the published file cannot both be stdin");
    const source_options so = job_source_options(job);
    m->original_path = m->original_shown = original_path;
    if (strcmp(published_path, "-") == 0) {
        m->o.shown = "stdin";
        AK_CHECK(spool_stream_in(&m->sp, stdin, job->tmpdir, err));
        m->o.path = m->sp.path;
    } else if (strcmp(original_path, "-") == 0) { /* the original is read as a file, so it is spooled too */
        m->original_shown = "stdin";
        AK_CHECK(spool_stream_in(&m->sp, stdin, job->tmpdir, err));
        m->original_path = m->sp.path;
    }
    if (source_is_special(original_path)) { /* a source that is not a CSV file, through a private spool */
        AK_CHECK(source_input_open(&m->orig_in, original_path, &so, 0, err));
        m->original_path = m->orig_in.path;
        m->original_shown = m->orig_in.shown;
    }
    if (source_is_special(published_path)) {
        AK_CHECK(source_input_open(&m->pub_in, published_path, &so, 0, err));
        m->o.path = m->pub_in.path;
        m->o.shown = m->pub_in.shown;
    }
    table_spec spec;
    AK_CHECK(job_table_spec(job, m->original_path, m->original_shown, &spec, &m->storage));
    return pair_measure(job, &spec, with_kl, m);
}

int measure_pair_run(anonkit_job *job, const char *original_path, const char *published_path, int with_kl,
                     measure_pair *m)
{
    return pair_run(job, original_path, published_path, NULL, NULL, with_kl, m);
}

/* The measuring part of pair_run: loads the original by spec (the domains),
 * reads the published rows, measures. */
static int pair_measure(anonkit_job *job, table_spec *spec_in, int with_kl, measure_pair *m)
{
    ak_error *err = &job->err;
    table_spec spec = *spec_in;
    /* the original is read for its domains only (and its sensitive values for --kl-level) */
    spec.sensitive_name = with_kl && job->kl_level ? job->sensitive : NULL;
    spec.nidentifiers = 0;
    spec.read_once = 1;
    spec.progress = job_progress(job); /* the original's rows, per block; a cancel stops the reading */
    AK_CHECK(job_progress_start(job, spec.display_name));
    AK_CHECK(table_load(&m->t, &spec, err));
    AK_CHECK(metrics_pub_read(&m->g, &m->o, err));
    AK_CHECK(job_weights(job, &m->weights));
    AK_CHECK(metrics_pub_measure(m->t, &m->g, &m->o, m->weights, &m->r, err));
    return ak_progress_end(job_progress(job), err);
}

void measure_pair_free(measure_pair *m)
{
    spool_remove(&m->sp);
    source_input_close(&m->orig_in);
    source_input_close(&m->pub_in);
    metrics_pub_groups_free(&m->g);
    metrics_pub_result_free(&m->r);
    table_free(m->t);
    free(m->weights);
    job_spec_free(&m->storage);
    memset(m, 0, sizeof *m);
}

/* anonkit_metrics in the C numeric locale. */
static int metrics_run(anonkit_job *job, const char *original_path, const char *published_path,
                       const anonkit_table *orig_mem, const anonkit_table *pub_mem, anonkit_result **out_result)
{
    *out_result = NULL;
    ak_error *err = &job->err;
    ak_err_clear(err);
    if (!job->qi.count) return ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0, "no quasi-identifiers given (--qi)"), job_fail(job);
    measure_pair m;
    anonkit_result *result = NULL;
    int rc = pair_run(job, original_path, published_path, orig_mem, pub_mem, 1, &m);
    if (rc == ANONKIT_OK && !(result = result_new())) rc = ak_err_nomem(err);
    if (rc == ANONKIT_OK) {
        result->rows_read = m.r.m.rows;
        result->published = m.r.m.published;
        result->suppressed = m.r.m.suppressed;
        result->classes = m.r.m.classes;
        json_t *root = metrics_json(job, m.t, &m.r);
        result->json = jsonb_dumps(root);
        json_decref(root);
        rc = result->json ? ANONKIT_OK : ak_err_nomem(err);
    }
    measure_pair_free(&m);
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
    const int rc = metrics_run(job, original_path, published_path, NULL, NULL, &result);
    result_hand_over(result, out_result);
    ak_c_numeric_leave(&scope);
    return rc;
}

int job_metrics_tables(anonkit_job *job, const anonkit_table *original, const anonkit_table *published,
                       anonkit_result **out_result)
{
    ak_c_numeric scope;
    ak_c_numeric_enter(&scope);
    anonkit_result *result = NULL;
    const int rc = metrics_run(job, "the original table", "the published table", original, published, &result);
    result_hand_over(result, out_result);
    ak_c_numeric_leave(&scope);
    return rc;
}
