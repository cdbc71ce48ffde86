/* anonymize.c — anonkit_anonymize: the whole data flow of docs/ARCHITECTURE.md §3 —
 * read + encode, run the algorithm, recode + write, metrics — and the run's
 * summary and JSON report. This is the only layer that knows every module. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "api/algorithm.h"
#include "api/html.h"
#include "api/job.h"
#include "api/missing.h"
#include "api/locale.h"
#include "api/paths.h"
#include "api/report.h"
#include "api/risk.h"
#include "api/result.h"
#include "api/tables.h"
#include "api/sources.h"
#include "common/clock.h"
#include "core/partition.h"
#include "common/rng.h"
#include "common/stats.h"
#include "publish/rules.h"
#include "core/table.h"
#include "io/outfile.h"
#include "publish/publish.h"
#include "io/spool.h"
#include "metrics/metrics.h"

/* Parameter checks that need the loaded table: k and l against the data. */
static int check_against_table(anonkit_job *job, const table *t)
{
    const model *m = &job->model;
    if (m->k > t->nrows)
        return ak_err_set(&job->err, ANONKIT_E_INELIGIBLE, NULL, 0, 0,
                          "--k %llu is larger than the table, which has %zu rows",
                          (unsigned long long)m->k, t->nrows);
    if (m->l > 0 && m->l > (double)t->sensitive_dict.count)
        return ak_err_set(&job->err, ANONKIT_E_INELIGIBLE, NULL, 0, 0,
                          "--l %g is larger than the %u distinct values of sensitive column '%s'",
                          m->l, t->sensitive_dict.count, job->sensitive);
    return ANONKIT_OK;
}


/* Builds the table-wide reference distribution of t-closeness, δ-disclosure
 * and β-likeness (model/closeness.h) from the loaded table into *ref. */
static int build_reference(anonkit_job *job, const table *t, model_ref **ref)
{
    *ref = NULL;
    if (!model_has_dist(&job->model)) return ANONKIT_OK;
    const uint32_t nv = t->sensitive_dict.count;
    uint64_t *counts = calloc(nv ? nv : 1, sizeof *counts);
    if (!counts) return ak_err_nomem(&job->err);
    for (size_t i = 0; i < t->nrows; i++) counts[t->sensitive_codes[i]]++;
    const int rc = model_ref_for(&job->model.dist, &t->sensitive_dict, counts, job->sensitive, ref, &job->err);
    free(counts);
    return rc;
}

/* The least t, δ and β the classes of part achieve (model_achieved), into wq. */
static int measure_achieved(anonkit_job *job, const table *t, const partition *part, const model_ref *ref,
                            workload_quality *wq)
{
    if (!ref) return ANONKIT_OK;
    const uint32_t nv = t->sensitive_dict.count;
    const size_t nc = part->nclasses;
    size_t *start = calloc(nc + 1, sizeof *start);
    uint32_t *rows = malloc((t->nrows ? t->nrows : 1) * sizeof *rows);
    uint32_t *codes = malloc((nv ? nv : 1) * sizeof *codes), *counts = malloc((nv ? nv : 1) * sizeof *counts);
    model_work *w = model_work_new(ref);
    ak_hist h;
    memset(&h, 0, sizeof h);
    int rc = ANONKIT_OK;
    if (!start || !rows || !codes || !counts || !w || ak_hist_init(&h, nv ? nv : 1)) {
        rc = ak_err_nomem(&job->err);
        goto done;
    }
    for (size_t i = 0; i < t->nrows; i++)
        if (part->class_of[i] != PARTITION_SUPPRESSED) start[part->class_of[i] + 1]++;
    for (size_t c = 0; c < nc; c++) start[c + 1] += start[c];
    for (size_t i = 0; i < t->nrows; i++)
        if (part->class_of[i] != PARTITION_SUPPRESSED) rows[start[part->class_of[i]]++] = (uint32_t)i;
    for (size_t c = nc; c > 0; c--) start[c] = start[c - 1];
    start[0] = 0;
    model_achieved_init(&wq->achieved);
    for (size_t c = 0; c < nc; c++) {
        ak_hist_clear(&h);
        for (size_t j = start[c]; j < start[c + 1]; j++) ak_hist_add(&h, t->sensitive_codes[rows[j]]);
        const size_t n = ak_hist_pairs(&h, codes, counts);
        model_achieved_add(&wq->achieved, ref, w, start[c + 1] - start[c], codes, counts, n);
    }
    wq->has_achieved = 1;
    wq->t_distance = model_ref_distance(ref);
done:
    free(start);
    free(rows);
    free(codes);
    free(counts);
    model_work_free(w);
    ak_hist_free(&h);
    return rc;
}

/* ---- The data flow out of core (Rothko-T and Rothko-S, [LeFevre07] §2, §3) ---- */

/* Where the finished partitions of an out-of-core run go: the output, the
 * rules and the metrics. The output and rules open with the first partition,
 * when the schema is known. */
typedef struct leaf_sink {
    anonkit_job *job;
    outfile *of, *rulesf;
    publish_opts po;
    publish_stream *out;
    rules_stream *rules;
    metrics *mt;
} leaf_sink;

/* Opens the output and the rules (once; later calls do nothing). */
static int leaf_sink_open(leaf_sink *sink, const table *schema, ak_error *err)
{
    if (sink->out) return ANONKIT_OK;
    const anonkit_job *job = sink->job;
    AK_CHECK(publish_stream_open(&sink->out, schema, &sink->po, sink->of->stream,
                                 sink->of->sink ? sink->of->sink->shown : job->output, err));
    if (job->rules) AK_CHECK(rules_stream_open(&sink->rules, schema, job->publish, sink->rulesf->stream, job->rules, err));
    return ANONKIT_OK;
}

/* Publishes one finished partition, writes its rules and adds its classes to the metrics. */
static int publish_leaf(void *ctx, const table *view, const partition *classes, const char *copied,
                        const size_t *copied_off, int continued, ak_error *err)
{
    leaf_sink *sink = ctx;
    AK_CHECK(leaf_sink_open(sink, view, err));
    double *means = NULL;
    if (sink->job->publish == RECODE_MEAN) {
        if (continued || (classes->nclasses == 1 && classes->count[0] != view->nrows))
            return ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0,
                              "--publish mean: a class is larger than --memory; give more memory or another style");
        AK_CHECK(recode_class_means(view, classes, &means, err));
    }
    int rc = publish_stream_part(sink->out, view, classes, means, copied, copied_off, err);
    if (rc == ANONKIT_OK) rc = ak_progress_add(job_progress(sink->job), view->nrows, 0, err); /* rows published */
    if (rc == ANONKIT_OK && !continued && sink->rules) rc = rules_stream_part(sink->rules, view, classes, means, err);
    if (rc == ANONKIT_OK && !continued) metrics_add_partition(sink->mt, view, classes);
    free(means);
    return rc;
}

/* anonkit_anonymize for an algorithm that runs out of core: its partitions
 * are published, written as rules and measured as they come. */
static int anonymize_out_of_core(anonkit_job *job, const table_spec *spec, outfile *of, outfile *rf, outfile *rulesf,
                                 const ak_run_context *ctx, double start, anonkit_result **out_result)
{
    metrics mt;
    int rc = metrics_init(&mt, (uint32_t)job->qi.count, ctx->weights, &job->err);
    if (rc < 0) return rc;
    leaf_sink sink = {.job = job, .of = of, .rulesf = rulesf, .mt = &mt,
                      .po = {.keep_order = 0, .seed = job->seed, .threads = ctx->threads, .style = job->publish}};
    ak_stream_output so = {NULL, NULL};
    anonkit_result *result = NULL;
    publish_stats ps = {0, 0};
    phase_times pt = {0, 0, 0, 0};
    double mark = ak_seconds();
    rc = job_algorithm(job)->stream(job, spec, ctx, publish_leaf, &sink, &so);
    if (rc == ANONKIT_OK) rc = ak_progress_end(ctx->progress, &job->err);
    pt.anonymize = ak_seconds() - mark;
    table *schema = so.schema;
    if (rc == ANONKIT_OK) rc = leaf_sink_open(&sink, schema, &job->err); /* an empty table: header only */
    if (rc == ANONKIT_OK) rc = publish_stream_close(sink.out, &ps, &job->err);
    if (rc == ANONKIT_OK && sink.rules) rc = rules_stream_close(sink.rules, &job->err);
    if (rc == ANONKIT_OK && ps.published + ps.suppressed != schema->nrows)
        rc = ak_err_set(&job->err, ANONKIT_E_INTERNAL, NULL, 0, 0, "row accounting failed: %zu read, %llu written",
                        schema->nrows, (unsigned long long)ps.published);
    if (rc == ANONKIT_OK) {
        metrics_finish(&mt, job->model.k);
        workload_quality wq;
        memset(&wq, 0, sizeof wq);
        const double seconds = ak_seconds() - start;
        if (!(result = result_new())) rc = ak_err_nomem(&job->err);
        if (rc == ANONKIT_OK) {
            result->rows_read = schema->nrows;
            result->published = ps.published;
            result->suppressed = ps.suppressed;
            result->classes = mt.classes;
            result->summary = report_summary(job, schema, &mt, &wq, seconds, &ps, NULL);
            result->json = report_build(job, schema, &mt, &wq, seconds, &pt, &ps, so.out_of_core, NULL);
            if (!result->summary || !result->json) rc = ak_err_nomem(&job->err);
        }
        if (rc == ANONKIT_OK && job->report && fprintf(rf->stream, "%s\n", result->json) < 0)
            rc = ak_err_set(&job->err, ANONKIT_E_IO, job->report, 0, 0, "cannot write the report");
    }
    publish_stream_free(sink.out);
    rules_stream_free(sink.rules);
    metrics_free(&mt);
    table_free(schema);
    json_decref(so.out_of_core);
    if (rc < 0) {
        anonkit_result_free(result);
        return rc;
    }
    *out_result = result;
    return ANONKIT_OK;
}

/* Commits the table, the report and the rules of a run together: all of
 * them or, when any fails before its rename, none (io/outfile.h). */
static int commit_outputs(anonkit_job *job, outfile *of, outfile *rf, outfile *rulesf, outfile *hf)
{
    outfile *const files[] = {of, rf, rulesf, hf};
    const int rc = outfile_commit_all(files, sizeof files / sizeof *files, job->threads, &job->err);
    /* With -o - the table cannot be taken back: say which part failed. */
    ak_error *e = &job->err;
    if (rc < 0 && !strcmp(job->output, "-") && strcmp(e->file, "-") && strcmp(e->file, "stdout")) {
        const size_t used = strlen(e->message);
        snprintf(e->message + used, sizeof e->message - used,
                 " (the table went to standard output whole; %s was not written)",
                 e->file[0] ? e->file : "this output");
    }
    return rc;
}

/* Runs the checks of the job's algorithm, and every other algorithm's
 * rejection of the options that only it takes. */
static int validate_algorithm(anonkit_job *job)
{
    const ak_algorithm *algo = job_algorithm(job);
    for (size_t i = 0; i < ak_algorithm_count(); i++) {
        const ak_algorithm *other = ak_algorithm_at(i);
        if (other != algo && other->reject_options) AK_CHECK(other->reject_options(job));
    }
    return algo->validate ? algo->validate(job) : ANONKIT_OK;
}

/* anonkit_anonymize in the C numeric locale. */
static int anonymize(anonkit_job *job, anonkit_result **out_result)
{
    *out_result = NULL;
    ak_err_clear(&job->err);
    const double start = ak_seconds();
    if (!job->input) return ak_err_set(&job->err, ANONKIT_E_USAGE, NULL, 0, 0, "no input file given"), job_fail(job);
    if (!job->output)
        return ak_err_set(&job->err, ANONKIT_E_USAGE, NULL, 0, 0, "no output file given (-o FILE, or - for stdout)"), job_fail(job);
    if (!job->qi.count)
        return ak_err_set(&job->err, ANONKIT_E_USAGE, NULL, 0, 0, "no quasi-identifiers given (--qi)"), job_fail(job);
    if (risk_job_prepare(job) < 0) return job_fail(job); /* --max-risk (api/risk.c) */
    if (job->model.k < 2 && !(job->model.l > 1) && !(job->model.variance > 0) && !model_has_dist(&job->model) &&
        !job->k_set)
        return ak_err_set(&job->err, ANONKIT_E_USAGE, NULL, 0, 0,
                          "no privacy model given: the quasi-identifiers would be published as they are; give --k K "
                          "(at least 2), --l L or --variance V, or --k 1 to publish without a privacy model"),
               job_fail(job);
    if (job->model.l > 0 && !job->sensitive)
        return ak_err_set(&job->err, ANONKIT_E_USAGE, NULL, 0, 0, "--l needs a sensitive column (--sensitive)"), job_fail(job);
    if (job->model.variance > 0 && !job->sensitive)
        return ak_err_set(&job->err, ANONKIT_E_USAGE, NULL, 0, 0, "--variance needs a numeric sensitive column (--sensitive)"), job_fail(job);
    if (job->split == MDR_SPLIT_INFOGAIN && !job->class_name)
        return ak_err_set(&job->err, ANONKIT_E_USAGE, NULL, 0, 0, "--split infogain needs a class label column (--class)"), job_fail(job);
    if (job->split == MDR_SPLIT_REGRESSION && !job->target_name)
        return ak_err_set(&job->err, ANONKIT_E_USAGE, NULL, 0, 0, "--split regression needs a numeric target column (--target)"), job_fail(job);
    if (model_validate(&job->model, &job->err) < 0) return job_fail(job);
    if (job_check_dist(job) < 0) return ANONKIT_E_USAGE;
    if (validate_algorithm(job) < 0) return job_fail(job);
    if (job_check_paths(job, JOB_VERB_ANONYMIZE) < 0) return job_fail(job);
    if (!job->seed_set) job->seed = ak_fresh_seed();
    ak_progress *const progress = job_progress(job); /* NULL: no callback */

    int rc;
    source_input in;
    memset(&in, 0, sizeof in);
    const source_options so = job_source_options(job);
    outfile of, rf, rulesf, hf;
    memset(&of, 0, sizeof of);
    memset(&hf, 0, sizeof hf);
    memset(&rf, 0, sizeof rf);
    memset(&rulesf, 0, sizeof rulesf);
    double *means = NULL;
    table *t = NULL;
    publish_copied *copied = NULL;
    partition part;
    memset(&part, 0, sizeof part);
    metrics mt;
    memset(&mt, 0, sizeof mt);
    double *weights = NULL;
    job_spec_storage storage = {0};
    anonkit_result *result = NULL;
    ak_run_output algo_out = {NULL, NULL};
    publish_stats ps;
    model_ref *ref = NULL;

    /* An input table read in memory and an output table: the writer builds
     * the published table itself (publish_table), no sink, no CSV text. */
    const int table_out = so.table_in && source_kind_of(job->output) == SOURCE_TABLE && job->tables;
    anonkit_table *built = NULL;
    if (!table_out && (rc = outfile_open_table(&of, job->output, &so, &job->err)) < 0) goto done;
    if (job->report && (rc = outfile_open(&rf, job->report, &job->err)) < 0) goto done;
    if (job->rules && (rc = outfile_open(&rulesf, job->rules, &job->err)) < 0) goto done;
    if (job->html && (rc = outfile_open(&hf, job->html, &job->err)) < 0) goto done;
    /* stdin and any source that is not a CSV file are read through a private spool (io/source.h) */
    if ((rc = source_input_open(&in, job->input, &so, 1, &job->err)) < 0) goto done;
    sink_set_origin(of.sink, in.cols, in.ncols);
    table_spec spec;
    if ((rc = job_table_spec(job, in.path, in.shown, &spec, &storage)) < 0) goto done;
    spec.mem = in.table; /* (anonkit_anonymize reads a table directly only in memory: anonymize_reads_table) */
    if ((rc = job_weights(job, &weights)) < 0) goto done;
    unsigned threads = job->threads;
    if (!threads) {
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        threads = cores > 0 ? (unsigned)cores : 1;
    }
    spec.threads = threads;
    spec.progress = progress;
    const ak_run_context ctx = {.weights = weights, .threads = threads, .progress = progress};
    if ((rc = job_progress_start(job, in.table ? NULL : in.path)) < 0) goto done; /* (a table: rows, no bytes) */
    if (!job_algorithm(job)->run) {
        if ((rc = anonymize_out_of_core(job, &spec, &of, &rf, &rulesf, &ctx, start, &result)) < 0) goto done;
        if (job->html && (rc = html_anonymize_write(job, &of, &hf, in.path, in.shown, result->json)) < 0)
            goto done;
        rc = commit_outputs(job, &of, &rf, &rulesf, &hf);
        goto done;
    }
    phase_times pt;
    double mark = ak_seconds();
    if ((rc = table_load(&t, &spec, &job->err)) < 0) goto done;
    pt.read = ak_seconds() - mark;
    if ((rc = check_against_table(job, t)) < 0) goto done;
    if ((rc = build_reference(job, t, &ref)) < 0) goto done;
    job->model.ref = ref;
    /* the columns the writer copies through are read while the algorithm runs */
    if (!table_out && !job->keep_order && threads > 1 && (rc = publish_copied_start(&copied, t, &job->err)) < 0)
        goto done; /* (a table output gathers them from the input table: publish_table) */
    mark = ak_seconds();
    if ((rc = partition_init(&part, t->nrows, t->nqi, &job->err)) < 0) goto done;
    if ((rc = ak_progress_phase(progress, ANONKIT_PHASE_PARTITIONING, t->nrows, 0, &job->err)) < 0) goto done;
    if ((rc = job_algorithm(job)->run(job, t, &ctx, &part, &algo_out)) < 0) goto done;
    if ((rc = job_separate_missing(job, t, &part)) < 0) goto done; /* numeric QIs: missing apart from present */
    pt.anonymize = ak_seconds() - mark;
    mark = ak_seconds();
    /* The class means are computed once, for the output and the rules. */
    if (job->publish == RECODE_MEAN && (rc = recode_class_means(t, &part, &means, &job->err)) < 0) goto done;
    publish_opts po = {.keep_order = job->keep_order, .seed = job->seed, .drop_suppressed = 0, .threads = threads,
                       .style = job->publish, .means = means, .copied = copied, .progress = progress};
    if ((rc = ak_progress_phase(progress, ANONKIT_PHASE_WRITING, t->nrows, 0, &job->err)) < 0) goto done;
    if (table_out) rc = publish_table(t, &part, &po, &built, &ps, &job->err);
    else rc = publish_write(t, &part, &po, of.stream, of.sink ? of.sink->shown : job->output, &ps, &job->err);
    if (rc < 0) goto done;
    if (ps.published + ps.suppressed != t->nrows) {
        rc = ak_err_set(&job->err, ANONKIT_E_INTERNAL, NULL, 0, 0, "row accounting failed: %zu read, %llu written",
                        t->nrows, (unsigned long long)ps.published);
        goto done;
    }
    if (job->rules && (rc = rules_write(t, &part, job->publish, means, rulesf.stream, job->rules, &job->err)) < 0)
        goto done;
    pt.write = ak_seconds() - mark;
    mark = ak_seconds();
    if ((rc = metrics_from_partition(t, &part, job->model.k, weights, &mt, &job->err)) < 0) goto done;
    workload_quality wq;
    if ((rc = report_measure_workload(job, t, &part, &wq)) < 0) goto done;
    if ((rc = measure_achieved(job, t, &part, ref, &wq)) < 0) goto done;
    pt.metrics = ak_seconds() - mark;

    const double seconds = ak_seconds() - start;
    if (!(result = result_new())) { rc = ak_err_nomem(&job->err); goto done; }
    result->rows_read = t->nrows;
    result->published = ps.published;
    result->suppressed = ps.suppressed;
    result->classes = part.nclasses;
    if ((rc = report_prepare_risk(job, t, &part)) < 0) goto done; /* the risk block (api/risk.c) */
    result->summary = report_summary(job, t, &mt, &wq, seconds, &ps, algo_out.summary);
    result->json = report_build(job, t, &mt, &wq, seconds, &pt, &ps, NULL, algo_out.report);
    if (!result->summary || !result->json) { rc = ak_err_nomem(&job->err); goto done; }
    if ((rc = report_append_risk(job, &result->summary)) < 0) goto done;
    if (job->report && fprintf(rf.stream, "%s\n", result->json) < 0) {
        /* a report larger than the stream's buffer fails here rather than at the commit:
         * with -o - say, as commit_outputs does, that the table is out whole */
        rc = ak_err_set(&job->err, ANONKIT_E_IO, job->report, 0, 0, "cannot write the report%s%s%s",
                        strcmp(job->output, "-") ? "" : " (the table went to standard output whole; ",
                        strcmp(job->output, "-") ? "" : job->report, strcmp(job->output, "-") ? "" : " was not written)");
        goto done;
    }
    if (job->html && (rc = html_anonymize_write(job, &of, &hf, in.path, in.shown, result->json)) < 0)
        goto done;
    if ((rc = ak_progress_end(progress, &job->err)) < 0) goto done; /* the last report (it may still cancel) */
    rc = commit_outputs(job, &of, &rf, &rulesf, &hf);
    if (rc == ANONKIT_OK && built) { /* handed to the result by anonkit_anonymize (job_tables_hand_output) */
        anonkit_table_free(job->tables->output);
        job->tables->output = built;
        built = NULL;
    }
done:
    anonkit_table_free(built);
    if (rc < 0) {
        outfile_abort(&of);
        outfile_abort(&rf);
        outfile_abort(&rulesf);
        outfile_abort(&hf);
        anonkit_result_free(result);
        result = NULL;
    }
    report_release_risk(job);
    publish_copied_free(copied); /* before the table and the spooled input it reads */
    outfile_abort(&of); /* (after a commit: nothing; frees a table output's sink before the input it names) */
    source_input_close(&in);
    table_free(t);
    partition_free(&part);
    metrics_free(&mt);
    free(weights);
    free(means);
    json_decref(algo_out.report);
    free(algo_out.summary);
    job_spec_free(&storage);
    job->model.ref = NULL;
    model_ref_free(ref);
    if (rc < 0) return job_fail(job);
    *out_result = result;
    return ANONKIT_OK;
}

/* Whether a run of job reads an input table and hierarchy tables in memory
 * directly (the in-memory algorithms, without an HTML report or a hierarchy
 * built from the data, which read files): else their private CSV copies. */
static int anonymize_reads_table(const anonkit_job *job)
{
    if (!job_algorithm(job)->run || job->html) return 0;
    for (size_t h = 0; h < job->hierarchy_paths.count; h++)
        if (!strcmp(job->hierarchy_paths.items[h], "auto")) return 0;
    return 1;
}

int anonkit_anonymize(anonkit_job *job, anonkit_result **out_result)
{
    ak_c_numeric scope;
    ak_c_numeric_enter(&scope);
    anonkit_result *result = NULL;
    job_tables_reset_output(job);
    char *saved = NULL;
    int rc = ANONKIT_OK;
    if (job && job->tables && !anonymize_reads_table(job) && job_tables_input_file(job, &saved) < 0)
        rc = job->err.code ? job->err.code : ANONKIT_E_INTERNAL;
    if (rc == ANONKIT_OK) rc = anonymize(job, &result);
    if (job) job_tables_input_restore(job, saved);
    if (rc == ANONKIT_OK) job_tables_hand_output(job, result); /* a table output (api/tables.h) */
    else job_tables_reset_output(job);
    result_hand_over(result, out_result);
    ak_c_numeric_leave(&scope);
    return rc;
}
