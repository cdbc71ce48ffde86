/* report.c — the summary and the JSON report of an anonymize run: parameters,
 * counts, class sizes, metrics and timing (the algorithm adds its own part). */
#include "api/jsonb.h"
#include "api/report.h"
#include "api/sources.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/algorithm.h"
#include "api/risk.h"

int report_measure_workload(anonkit_job *job, const table *t, const partition *p, workload_quality *wq)
{
    memset(wq, 0, sizeof *wq);
    if (t->class_column >= 0) {
        AK_CHECK(metrics_partition_entropy(t, p, &wq->entropy, &job->err));
        wq->has_entropy = 1;
    }
    if (t->target_column >= 0) {
        AK_CHECK(metrics_partition_rmse(t, p, &wq->rmse, &job->err));
        wq->has_rmse = 1;
    }
    return ANONKIT_OK;
}

/* The JSON report: parameters, counts, class sizes, metrics, timing. */
int report_model_params(json_t *params, const model *m, unsigned t_distance)
{
    int jfail = 0;
    JSET(params, "k", json_integer((json_int_t)m->k));
    if (m->variance > 0) JSET(params, "variance", json_real(m->variance));
    if (m->l > 0) {
        char variants[128];
        model_variant_names(m->l_variants, variants, sizeof variants);
        JSET(params, "l", json_real(m->l));
        JSET(params, "l-variant", json_string(variants));
        if (m->l_variants & MODEL_L_RECURSIVE) JSET(params, "c", json_real(m->c));
    }
    if (m->dist.t >= 0) {
        JSET(params, "t", json_real(m->dist.t));
        JSET(params, "t-distance", json_string(model_t_distance_name(t_distance)));
    }
    if (m->dist.delta > 0) JSET(params, "delta-disclosure", json_real(m->dist.delta));
    if (m->dist.beta > 0) {
        JSET(params, "beta", json_real(m->dist.beta));
        JSET(params, "beta-variant", json_string(model_beta_variant_name(m->dist.beta_variant)));
    }
    return jfail;
}

char *report_build(const anonkit_job *job, const table *t, const metrics *mt, const workload_quality *wq,
                   double seconds, const phase_times *pt, const publish_stats *ps, json_t *out_of_core, json_t *algo)
{
    int jfail = 0;
    json_t *root = json_object();
    json_t *params = json_object();
    JSET(params, "input", job_json_name(job->input));
    JSET(params, "output", job_json_name(job->output));
    JSET(params, "algorithm", json_string(job_algorithm(job)->name));
    JSET(params, "qi", jsonb_strings(job->qi.items, job->qi.count));
    JSET(params, "sensitive", job->sensitive ? json_string(job->sensitive) : json_null());
    JSET(params, "identifier", jsonb_strings(job->identifiers.items, job->identifiers.count));
    json_t *hier = json_object();
    for (size_t i = 0; i < job->hierarchy_attrs.count; i++)
        JSET(hier, job->hierarchy_attrs.items[i], json_string(job->hierarchy_paths.items[i]));
    JSET(params, "hierarchy", hier);
    JSET(params, "split", json_string(mdr_split_name(job->split)));
    if (job->split == MDR_SPLIT_INFOGAIN) JSET(params, "min-gain", json_real(job->min_gain));
    JSET(params, "class", job->class_name ? json_string(job->class_name) : json_null());
    JSET(params, "target", job->target_name ? json_string(job->target_name) : json_null());
    JSET(params, "publish", json_string(recode_style_name(job->publish)));
    if (job->rules) JSET(params, "rules", json_string(job->rules));
    jfail |= report_model_params(params, &job->model, wq->has_achieved ? wq->t_distance : job->model.dist.t_distance);
    char seed[32]; /* a string: JSON integers are signed 64-bit in most readers */
    snprintf(seed, sizeof seed, "%llu", (unsigned long long)job->seed);
    JSET(params, "seed", json_string(seed));
    JSET(params, "keep-order", json_boolean(job->keep_order));
    char delim[2] = {job->delimiter, 0};
    JSET(params, "delimiter", json_string(delim));
    JSET(root, "anonkit_version", json_string(ANONKIT_VERSION));
    JSET(root, "parameters", params);
    JSET(root, "rows_read", json_integer((json_int_t)t->nrows));
    JSET(root, "rows_published", json_integer((json_int_t)(ps->published)));
    JSET(root, "rows_suppressed", json_integer((json_int_t)ps->suppressed));
    JSET(root, "classes", json_integer((json_int_t)mt->classes));
    JSET(root, "min_class_size", json_integer((json_int_t)mt->min_class));
    JSET(root, "mean_class_size", json_real(mt->mean_class));
    JSET(root, "max_class_size", json_integer((json_int_t)mt->max_class));
    json_t *metric = json_object();
    JSET(metric, "dm", json_real(mt->dm));
    JSET(metric, "cavg", json_real(mt->cavg));
    JSET(metric, "gcp", json_real(mt->gcp));
    json_t *ncp = json_object();
    for (uint32_t q = 0; q < t->nqi; q++) JSET(ncp, t->qi[q].name, json_real(mt->ncp[q]));
    JSET(metric, "ncp", ncp);
    if (wq->has_entropy) JSET(metric, "conditional_entropy", json_real(wq->entropy));
    if (wq->has_rmse) JSET(metric, "rmse", json_real(wq->rmse));
    if (wq->has_achieved) { /* the least t, δ and β the published classes achieve */
        json_t *a = json_object();
        JSET(a, "t", json_real(wq->achieved.t));
        JSET(a, "t_distance", json_string(model_t_distance_name(wq->t_distance)));
        JSET(a, "delta", isinf(wq->achieved.delta) ? json_null() : json_real(wq->achieved.delta));
        JSET(a, "beta", json_real(wq->achieved.beta));
        JSET(a, "beta_enhanced_satisfiable", json_boolean(wq->achieved.beta_enhanced_ok));
        JSET(metric, "achieved", a);
    }
    JSET(root, "metrics", metric);
    JSET(root, "seconds", json_real(seconds));
    json_t *phases = json_object();
    JSET(phases, "read", json_real(pt->read));
    JSET(phases, "anonymize", json_real(pt->anonymize));
    JSET(phases, "write", json_real(pt->write));
    JSET(phases, "metrics", json_real(pt->metrics));
    JSET(root, "phase_seconds", phases);
    if (out_of_core) JSET_REF(root, "out_of_core", out_of_core);
    if (algo && job_algorithm(job)->report_key) /* the algorithm's own results */
        JSET_REF(root, job_algorithm(job)->report_key, algo);
    if (job->risk.report_block) JSET_REF(root, "risk", job->risk.report_block); /* report_prepare_risk */
    if (jfail) {
        json_decref(root);
        return NULL;
    }
    char *text = jsonb_dumps(root);
    json_decref(root);
    return text;
}

char *report_summary(const anonkit_job *job, const table *t, const metrics *mt, const workload_quality *wq,
                     double seconds, const publish_stats *ps, const char *algo)
{
    const size_t size = 1536 + (algo ? strlen(algo) : 0);
    char *text = malloc(size);
    if (!text) return NULL;
    char workload[480] = "";
    if (wq->has_achieved) {
        char line[320];
        model_achieved_format(&wq->achieved, wq->t_distance, line, sizeof line);
        snprintf(workload, sizeof workload, "%s\n", line);
    }
    const size_t used = strlen(workload);
    if (wq->has_entropy && wq->has_rmse)
        snprintf(workload + used, sizeof workload - used, "conditional entropy %.6g bits, RMSE %.6g\n", wq->entropy, wq->rmse);
    else if (wq->has_entropy)
        snprintf(workload + used, sizeof workload - used, "conditional entropy %.6g bits\n", wq->entropy);
    else if (wq->has_rmse)
        snprintf(workload + used, sizeof workload - used, "RMSE %.6g\n", wq->rmse);
    char autos[512] = ""; /* hierarchies built in memory (--hierarchy COL=auto) */
    for (uint32_t q = 0; q < t->nqi; q++) {
        const table_qi *a = &t->qi[q];
        const char *p = a->h ? hier_path(a->h) : NULL;
        const size_t used = strlen(autos), plen = p ? strlen(p) : 0;
        if (plen > 5 && !strcmp(p + plen - 5, "=auto") && used < sizeof autos)
            snprintf(autos + used, sizeof autos - used, "hierarchy of '%s': flat, built from the data (%u values)\n",
                     a->name, hier_leaf_count(a->h));
    }
    snprintf(text, size,
             "%s"
             "read %zu rows from %s\n"
             "%s"
             "published %llu rows, suppressed %llu (published + suppressed = read)\n"
             "%llu classes, class size min %llu, mean %.2f, max %llu\n"
             "GCP %.4f, DM %.6g, C_AVG %.4f (k = %llu)\n"
             "%s"
             "time %.3f s\n",
             algo ? algo : "", t->nrows, t->display_name, autos, (unsigned long long)ps->published, (unsigned long long)ps->suppressed,
             (unsigned long long)mt->classes, (unsigned long long)mt->min_class, mt->mean_class,
             (unsigned long long)mt->max_class, mt->gcp, mt->dm, mt->cavg, (unsigned long long)job->model.k,
             workload, seconds);
    return text;
}

int report_prepare_risk(anonkit_job *job, const table *t, const partition *p)
{
    report_release_risk(job);
    const size_t size = 4096;
    if (!(job->risk.report_lines = malloc(size))) return ak_err_nomem(&job->err);
    return risk_report_block(job, t, p, &job->risk.report_block, job->risk.report_lines, size);
}

int report_append_risk(anonkit_job *job, char **summary)
{
    if (!job->risk.report_lines || !*summary) return ANONKIT_OK;
    const size_t n = strlen(*summary) + strlen(job->risk.report_lines) + 1;
    char *both = malloc(n);
    if (!both) return ak_err_nomem(&job->err);
    snprintf(both, n, "%s%s", *summary, job->risk.report_lines);
    free(*summary);
    *summary = both;
    return ANONKIT_OK;
}

void report_release_risk(anonkit_job *job)
{
    json_decref(job->risk.report_block);
    job->risk.report_block = NULL;
    free(job->risk.report_lines);
    job->risk.report_lines = NULL;
}
