/* incognito.c (api) — the Incognito branch of anonkit_anonymize ([LeFevre05]):
 * option checks, the search, the choice among the k-minimal nodes (issue:
 * --choose, default least GCP), publication as a partitioning, and the
 * "incognito" part of the report: every anonymous node and the k-minimal
 * ones as level vectors with their attribute names, and the search's work. */
#include "api/jsonb.h"
#include "api/incognito.h"
#include "api/risk.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "algo/incognito/incognito.h"
#include "api/job.h"
#include "common/clock.h"

static int usage(anonkit_job *job, const char *what)
{
    return ak_err_set(&job->err, ANONKIT_E_USAGE, NULL, 0, 0, "%s", what);
}

int inc_job_reject_options(anonkit_job *job)
{
    /* --algorithm local shares the hierarchies and checks its own use of these options. */
    if (job->incognito.given && !(job->algorithm && !strcmp(job->algorithm->name, "local")))
        return usage(job, "--suppression, --incognito-variant and --choose go with --algorithm incognito");
    return ANONKIT_OK;
}

int inc_job_validate(anonkit_job *job)
{
    for (size_t q = 0; q < job->qi.count; q++) {
        size_t h = 0;
        while (h < job->hierarchy_attrs.count && strcmp(job->hierarchy_attrs.items[h], job->qi.items[q]) != 0) h++;
        if (h == job->hierarchy_attrs.count)
            return ak_err_set(&job->err, ANONKIT_E_USAGE, NULL, 0, 0,
                              "--algorithm incognito needs a hierarchy for every quasi-identifier, and '%s' has none "
                              "(give --hierarchy %s=FILE; numbers take ARX intervals such as 34;30-34;30-39;20-39;*)",
                              job->qi.items[q], job->qi.items[q]);
    }
    if (job->rules) return usage(job, "--rules: recoding rules come from Mondrian's partition tree, not from incognito");
    if (job->publish != RECODE_GENERALIZE)
        return usage(job, "--publish: incognito publishes every quasi-identifier as its hierarchy label (generalize)");
    if (job->split != MDR_SPLIT_MEDIAN) return usage(job, "--split is a Mondrian option; incognito does not split");
    if (job->model.variance > 0) return usage(job, "--algorithm incognito takes --k and --l, not --variance");
    /* (local recoding suppresses only rows no class can take, under any per-class model) */
    if (job->suppression > 0 && !inc_model_monotone_with_suppression(&job->model) &&
        !(job->algorithm && !strcmp(job->algorithm->name, "local")))
        return usage(job, "--suppression works with k-anonymity and distinct l-diversity only: with entropy, recursive "
                          "or probabilistic l-diversity, t-closeness, delta-disclosure or beta-likeness suppressing "
                          "failing classes breaks the generalization property the lattice search relies on");
    return ANONKIT_OK;
}

/* "<a=1, b=0, ...>" for a level vector. */
static void node_name(const table *t, const uint32_t *levels, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (uint32_t q = 0; q < t->nqi && used < size; q++) {
        int n = snprintf(buf + used, size - used, "%s%s=%u", q ? ", " : "<", t->qi[q].name, levels[q]);
        if (n < 0) break;
        used += (size_t)n;
    }
    if (used < size) snprintf(buf + used, size - used, ">");
}

static json_t *levels_json(const table *t, const uint32_t *levels)
{
    int jfail = 0;
    json_t *a = json_array();
    for (uint32_t q = 0; a && q < t->nqi; q++) JAPPEND(a, json_integer(levels[q]));
    if (jfail) {
        json_decref(a);
        return NULL;
    }
    return a;
}

/* A node with its measures (a k-minimal node, or the chosen optimum). */
static json_t *node_json(const table *t, const uint32_t *levels, const inc_minimal *info)
{
    int jfail = 0;
    char name[4096];
    node_name(t, levels, name, sizeof name);
    json_t *o = json_object();
    JSET(o, "levels", levels_json(t, levels));
    JSET(o, "name", json_string(name));
    JSET(o, "height", json_integer(info->height));
    JSET(o, "rows_suppressed", json_integer((json_int_t)info->suppressed));
    JSET(o, "classes", json_integer((json_int_t)info->classes));
    JSET(o, "dm", json_real(info->dm));
    JSET(o, "gcp", json_real(info->gcp));
    if (jfail) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static json_t *minimal_json(const table *t, const inc_result *r, size_t i)
{
    return node_json(t, r->minimal + i * r->nqi, &r->info[i]);
}

/* The work of the search for the node of least loss (issue 28). */
static json_t *optimum_json(const inc_optimum *opt, int exhaustive, double seconds)
{
    int jfail = 0;
    json_t *o = json_object();
    JSET(o, "search", json_string(exhaustive ? "exhaustive" : "bound-ordered"));
    JSET(o, "seconds", json_real(seconds));
    JSET(o, "loss", json_real(opt->loss));
    JSET(o, "lattice_nodes", json_integer((json_int_t)opt->lattice));
    JSET(o, "nodes_checked", json_integer((json_int_t)opt->counters.nodes_checked));
    JSET(o, "nodes_pruned", json_integer((json_int_t)(opt->pruned_tagged + opt->pruned_bound)));
    JSET(o, "nodes_pruned_by_tag", json_integer((json_int_t)opt->pruned_tagged));
    JSET(o, "nodes_pruned_by_bound", json_integer((json_int_t)opt->pruned_bound));
    JSET(o, "nodes_not_reached",
         json_integer((json_int_t)(opt->lattice - opt->counters.nodes_checked - opt->pruned_tagged - opt->pruned_bound)));
    JSET(o, "scans", json_integer((json_int_t)opt->counters.scans));
    JSET(o, "rollups", json_integer((json_int_t)opt->counters.rollups));
    if (jfail) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* The report: r may be NULL (the optimal and exhaustive variants list no
 * anonymous nodes), opt NULL with --choose k-minimal. */
static json_t *build_json(const anonkit_job *job, inc_variant variant, const table *t, const inc_result *r,
                          double seconds, const inc_optimum *opt, double opt_seconds)
{
    int jfail = 0;
    json_t *o = json_object();
    JSET(o, "variant", json_string(inc_variant_name(variant)));
    JSET(o, "choose", json_string(inc_choose_name(job->incognito.choose)));
    JSET(o, "suppression", json_real(job->suppression));
    JSET(o, "suppression_limit_rows", json_integer((json_int_t)(r ? r->suppression_limit : opt->suppression_limit)));
    json_t *qi = json_array(), *heights = json_array();
    for (uint32_t q = 0; q < t->nqi; q++) {
        JAPPEND(qi, json_string(t->qi[q].name));
        JAPPEND(heights, json_integer(inc_qi_height(t, q)));
    }
    JSET(o, "qi", qi);
    JSET(o, "hierarchy_heights", heights);
    if (r) {
        JSET(o, "search_seconds", json_real(seconds));
        JSET(o, "nodes_checked", json_integer((json_int_t)r->counters.nodes_checked));
        JSET(o, "scans", json_integer((json_int_t)r->counters.scans));
        JSET(o, "rollups", json_integer((json_int_t)r->counters.rollups));
        JSET(o, "candidate_nodes", json_integer((json_int_t)r->counters.candidates));
        /* The binary search visits one height only: its anonymous nodes are those of least height. */
        JSET(o, "anonymous_complete", json_boolean(r->complete));
        JSET(o, "anonymous_count", json_integer((json_int_t)r->nanonymous));
        json_t *anon = json_array();
        for (size_t i = 0; i < r->nanonymous; i++) JAPPEND(anon, levels_json(t, r->anonymous + i * r->nqi));
        JSET(o, "anonymous", anon);
        json_t *minimal = json_array();
        for (size_t i = 0; i < r->nminimal; i++) JAPPEND(minimal, minimal_json(t, r, i));
        JSET(o, "k_minimal", minimal);
    } else {
        JSET(o, "search_seconds", json_real(opt_seconds));
        JSET(o, "nodes_checked", json_integer((json_int_t)opt->counters.nodes_checked));
    }
    if (opt) {
        JSET(o, "chosen", node_json(t, opt->levels, &opt->info));
        JSET(o, "optimum", optimum_json(opt, variant == INC_EXHAUSTIVE, opt_seconds));
    } else {
        JSET(o, "chosen", minimal_json(t, r, r->chosen));
    }
    if (jfail) {
        json_decref(o);
        return NULL;
    }
    return o;
}

int inc_job_run(anonkit_job *job, const table *t, const ak_run_context *ctx, partition *part, ak_run_output *out)
{
    char **summary = &out->summary;
    json_t **report = &out->report;
    const inc_variant variant = job->incognito.variant;
    const inc_choose choose = job->incognito.choose;
    const int optimum_only = variant == INC_OPTIMAL || variant == INC_EXHAUSTIVE;
    if (optimum_only && choose == INC_CHOOSE_K_MINIMAL)
        return usage(job, "--choose k-minimal needs every k-minimal node: give an Incognito variant "
                          "(--incognito-variant cube, super-roots or basic), not optimal or exhaustive");
    risk_model risk_storage; /* --max-risk average/uniqueness (api/risk.c) */
    int risk_status;
    const risk_model *risk = risk_job_table_model(job, t->nrows, &risk_storage, &risk_status);
    if (risk_status < 0) return risk_status;
    const inc_options o = {.variant = variant, .suppression = job->suppression, .choose = choose,
                           .weights = ctx->weights, .risk = risk, .progress = ctx->progress};
    inc_result r;
    memset(&r, 0, sizeof r);
    inc_optimum opt;
    double seconds = 0, opt_seconds = 0;
    int rc = ANONKIT_OK;
    if (!optimum_only) {
        const double start = ak_seconds();
        rc = inc_search(t, &job->model, &o, &r, &job->err);
        seconds = ak_seconds() - start;
        if (rc == ANONKIT_OK) rc = inc_measure_choose(t, &job->model, &o, &r, &job->err);
    }
    if (rc == ANONKIT_OK && choose != INC_CHOOSE_K_MINIMAL) {
        const double start = ak_seconds();
        rc = inc_optimal(t, &job->model, &o, variant == INC_EXHAUSTIVE, &opt, &job->err);
        opt_seconds = ak_seconds() - start;
    }
    if (rc < 0) {
        inc_result_free(&r);
        return rc;
    }
    const uint32_t *levels = choose == INC_CHOOSE_K_MINIMAL ? r.minimal + r.chosen * r.nqi : opt.levels;
    if ((rc = inc_publish(t, &job->model, levels, part, &job->err)) < 0) goto done;
    char name[4096];
    node_name(t, levels, name, sizeof name);
    const size_t size = strlen(name) + 512;
    *summary = malloc(size);
    *report = build_json(job, variant, t, optimum_only ? NULL : &r, seconds,
                         choose == INC_CHOOSE_K_MINIMAL ? NULL : &opt, opt_seconds);
    if (!*summary || !*report) {
        rc = ak_err_nomem(&job->err);
        goto done;
    }
    if (optimum_only)
        snprintf(*summary, size,
                 "incognito (%s): %llu of %llu lattice nodes checked, %llu pruned, in %.3f s\n"
                 "chosen %s (least %s over every anonymous node: %.6g), %llu rows suppressed, suppression limit %llu rows\n",
                 inc_variant_name(variant), (unsigned long long)opt.counters.nodes_checked,
                 (unsigned long long)opt.lattice, (unsigned long long)(opt.pruned_tagged + opt.pruned_bound), opt_seconds,
                 name, inc_choose_name(choose), opt.loss, (unsigned long long)opt.info.suppressed,
                 (unsigned long long)opt.suppression_limit);
    else if (choose == INC_CHOOSE_K_MINIMAL)
        snprintf(*summary, size,
                 "incognito (%s): %zu %sanonymous nodes, %zu k-minimal; %llu nodes checked in %.3f s\n"
                 "chosen %s (least gcp among the k-minimal), suppression limit %llu rows\n",
                 inc_variant_name(variant), r.nanonymous, r.complete ? "" : "least-height ", r.nminimal,
                 (unsigned long long)r.counters.nodes_checked, seconds, name, (unsigned long long)r.suppression_limit);
    else
        snprintf(*summary, size,
                 "incognito (%s): %zu %sanonymous nodes, %zu k-minimal; %llu nodes checked in %.3f s\n"
                 "chosen %s (least %s over every anonymous node: %.6g), %llu rows suppressed, suppression limit %llu rows\n",
                 inc_variant_name(variant), r.nanonymous, r.complete ? "" : "least-height ", r.nminimal,
                 (unsigned long long)r.counters.nodes_checked, seconds, name, inc_choose_name(choose), opt.loss,
                 (unsigned long long)opt.info.suppressed, (unsigned long long)r.suppression_limit);
    rc = ANONKIT_OK;
done:
    if (rc < 0) {
        free(*summary);
        json_decref(*report);
        *summary = NULL;
        *report = NULL;
    }
    inc_result_free(&r);
    return rc;
}
