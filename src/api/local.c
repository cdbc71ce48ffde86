/* local.c (api) — `anonkit anonymize --algorithm local`: local recoding by
 * iterated full-domain generalization or, under the models other than k and
 * distinct l, by top-down splits (issue 28; src/algo/incognito/local.c,
 * local_split.c). Its checks (those of incognito: a hierarchy for every QI,
 * generalize), the run, and the "local" part of the report: the method, then
 * every iteration with its node, the rows it started with and those it
 * published, or the split search's classes examined, split and published. */
#include "api/jsonb.h"
#include "api/incognito.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "algo/incognito/incognito.h"
#include "api/job.h"
#include "common/clock.h"

/* The share of an iteration's rows its optimum may leave to the next one, and
 * what leaving a row costs in the iteration's choice (0: only the published
 * rows' GCP counts, at least 5 % of the rows must be published). Measured on
 * Adult (9 QIs, k = 5): 0.5 / 0 gives GCP 0.083 in 12 iterations, 0.9 / 0 0.065
 * in 63, 0.95 / 0 0.0626 in 112; counting a left row as fully generalized (1)
 * publishes too much too early (0.17). */
#define LOCAL_ITERATION_SUPPRESSION 0.95
#define LOCAL_DEFER 0.0
/* Once a quarter of the rows is left, an iteration may leave 80 % of its rows
 * (publish at least 20 %): on Adult (9 QIs, k = 5 / 10 / 50, with lifting and
 * eviction) GCP 0.0604 / 0.0874 / 0.1645 in 42 / 44 / 42 iterations and 0.68 /
 * 0.65 / 0.76 of the instructions of 90 % (0.0601 / 0.0867 / 0.1646 in 68 / 66
 * / 57), within the schedule's chaos of about +-0.001; without the passes 90 %
 * gave 0.0607 / 0.0879 / 0.1686 instead of 0.0600 / 0.0875 / 0.1684 in 112 /
 * 104 / 80. */
#define LOCAL_TAIL_SHARE 0.25
#define LOCAL_TAIL_SUPPRESSION 0.80
/* Once 1.5 % of the rows is left, the last iteration publishes them all (no
 * suppression) and lifting and eviction move them on: on Adult (9 QIs, k = 5 /
 * 10 / 50) GCP 0.0604 / 0.0873 / 0.1638 in 27 / 31 / 37 iterations at 0.90 /
 * 0.93 / 0.98 of the instructions of iterating to the end (0.0604 / 0.0874 /
 * 0.1645 in 42 / 44 / 42); from 2 / 3 % 0.0607 / 0.0875 / 0.1637 and 0.0609 /
 * 0.0880 / 0.1641. */
#define LOCAL_FINAL_SHARE 0.015

int local_job_validate(anonkit_job *job)
{
    if (job->incognito.given & 6)
        return ak_err_set(&job->err, ANONKIT_E_USAGE, NULL, 0, 0,
                          "--incognito-variant and --choose go with --algorithm incognito, not local");
    return inc_job_validate(job);
}

static json_t *iteration_json(const table *t, const inc_local_iteration *it)
{
    int jfail = 0;
    json_t *o = json_object(), *levels = json_array();
    for (uint32_t q = 0; levels && q < t->nqi; q++) JAPPEND(levels, json_integer(it->levels[q]));
    JSET(o, "levels", levels);
    JSET(o, "rows", json_integer((json_int_t)it->rows));
    JSET(o, "published", json_integer((json_int_t)it->published));
    JSET(o, "passed_on", json_integer((json_int_t)(it->rows - it->published)));
    JSET(o, "classes", json_integer((json_int_t)it->classes));
    JSET(o, "nodes_checked", json_integer((json_int_t)it->nodes_checked));
    if (jfail) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static json_t *build_json(const table *t, const inc_local_options *o, const inc_local_result *r, double seconds)
{
    int jfail = 0;
    json_t *obj = json_object(), *qi = json_array(), *iters = json_array();
    for (uint32_t q = 0; qi && q < t->nqi; q++) JAPPEND(qi, json_string(t->qi[q].name));
    JSET(obj, "qi", qi);
    JSET(obj, "method", json_string(r->method == INC_LOCAL_SPLIT ? "split" : "iterate"));
    if (r->method == INC_LOCAL_SPLIT) {
        JSET(obj, "classes_examined", json_integer((json_int_t)r->tasks));
        JSET(obj, "splits", json_integer((json_int_t)r->splits));
        JSET(obj, "classes", json_integer((json_int_t)r->classes));
    } else {
        JSET(obj, "iteration_suppression", json_real(o->iteration_suppression));
        JSET(obj, "tail_share", json_real(o->tail_share));
        JSET(obj, "tail_suppression", json_real(o->tail_suppression));
        JSET(obj, "final_share", json_real(o->final_share));
        JSET(obj, "left_row_cost", json_real(o->defer));
        JSET(obj, "lift_rounds", json_integer((json_int_t)r->lift_rounds));
        JSET(obj, "lift_moves", json_integer((json_int_t)r->lift_moves));
        JSET(obj, "evict_rounds", json_integer((json_int_t)r->evict_rounds));
        JSET(obj, "evict_moves", json_integer((json_int_t)r->evict_moves));
    }
    JSET(obj, "seconds", json_real(seconds));
    JSET(obj, "iterations_count", json_integer((json_int_t)r->niter));
    for (size_t i = 0; iters && i < r->niter; i++) JAPPEND(iters, iteration_json(t, &r->iter[i]));
    JSET(obj, "iterations", iters);
    JSET(obj, "rows_suppressed", json_integer((json_int_t)r->suppressed));
    if (jfail) {
        json_decref(obj);
        return NULL;
    }
    return obj;
}

int local_job_run(anonkit_job *job, const table *t, const ak_run_context *ctx, partition *part, ak_run_output *out)
{
    const inc_local_options o = {.iteration_suppression = LOCAL_ITERATION_SUPPRESSION, .defer = LOCAL_DEFER,
                                 .tail_share = LOCAL_TAIL_SHARE, .tail_suppression = LOCAL_TAIL_SUPPRESSION,
                                 .final_share = LOCAL_FINAL_SHARE,
                                 .weights = ctx->weights, .refine = 1, .progress = ctx->progress, .evict = 1,
                                 .threads = ctx->threads};
    inc_local_result r;
    const double start = ak_seconds();
    int rc = inc_local(t, &job->model, &o, part, &r, &job->err);
    const double seconds = ak_seconds() - start;
    if (rc < 0) return rc;
    /* Rows no iteration or pass could publish are suppressed: at most --suppression of them. */
    const uint64_t limit = model_suppression_limit(job->suppression, t->nrows);
    if (r.suppressed > limit) {
        const uint64_t left = r.suppressed;
        inc_local_result_free(&r);
        return ak_err_set(&job->err, ANONKIT_E_INELIGIBLE, NULL, 0, 0,
                          "local recoding could not publish %llu of %zu rows (no generalization satisfies the privacy "
                          "model for them), more than the suppression limit of %llu rows",
                          (unsigned long long)left, t->nrows, (unsigned long long)limit);
    }
    out->report = build_json(t, &o, &r, seconds);
    out->summary = malloc(256);
    if (!out->report || !out->summary) {
        json_decref(out->report);
        free(out->summary);
        out->report = NULL;
        out->summary = NULL;
        inc_local_result_free(&r);
        return ak_err_nomem(&job->err);
    }
    if (r.method == INC_LOCAL_SPLIT)
        snprintf(out->summary, 256, "local recoding: top-down splits into %llu classes in %.3f s, %llu rows suppressed\n",
                 (unsigned long long)r.classes, seconds, (unsigned long long)r.suppressed);
    else
        snprintf(out->summary, 256, "local recoding: %zu iterations in %.3f s, %llu rows suppressed\n", r.niter, seconds,
                 (unsigned long long)r.suppressed);
    inc_local_result_free(&r);
    return ANONKIT_OK;
}
