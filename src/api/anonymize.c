/* anonymize.c — anonkit_anonymize: the whole data flow of DESIGN.md §1 —
 * read + encode, run the algorithm, recode + write, metrics — and the run's
 * summary and JSON report. This is the only layer that knows every module. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "algo/mondrian/mondrian.h"
#include "algo/mondrian/rothko.h"
#include "api/incognito.h"
#include "api/job.h"
#include "api/onedim.h"
#include "common/clock.h"
#include "core/partition.h"
#include "common/rng.h"
#include "publish/rules.h"
#include "core/table.h"
#include "io/outfile.h"
#include "publish/publish.h"
#include "io/spool.h"
#include "metrics/metrics.h"

struct anonkit_result {
    uint64_t rows_read, published, suppressed, classes;
    char *summary;
    char *json;
};

void anonkit_result_free(anonkit_result *r)
{
    if (!r) return;
    free(r->summary);
    free(r->json);
    free(r);
}

uint64_t anonkit_result_rows_read(const anonkit_result *r) { return r->rows_read; }
uint64_t anonkit_result_rows_published(const anonkit_result *r) { return r->published; }
uint64_t anonkit_result_rows_suppressed(const anonkit_result *r) { return r->suppressed; }
uint64_t anonkit_result_classes(const anonkit_result *r) { return r->classes; }
const char *anonkit_result_summary(const anonkit_result *r) { return r->summary; }
const char *anonkit_result_json(const anonkit_result *r) { return r->json; }

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

static json_t *string_array(const strlist *l)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < l->count; i++) json_array_append_new(a, json_string(l->items[i]));
    return a;
}

/* Seconds spent in each phase of a run. */
typedef struct phase_times {
    double read, anonymize, write, metrics;
} phase_times;

/* Workload quality (000 §5.5), when a class label or a target is known. */
typedef struct workload_quality {
    int has_entropy, has_rmse;
    double entropy, rmse;
} workload_quality;

static int measure_workload(anonkit_job *job, const table *t, const partition *p, workload_quality *wq)
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
static char *build_report(const anonkit_job *job, const table *t, const metrics *mt, const workload_quality *wq,
                          double seconds, const phase_times *pt, const publish_stats *ps, const rothko_stats *rs,
                          json_t *onedim, json_t *algo)
{
    json_t *root = json_object();
    json_t *params = json_object();
    json_object_set_new(params, "input", json_string(job->input));
    json_object_set_new(params, "output", json_string(job->output));
    json_object_set_new(params, "algorithm", json_string(job->algorithm ? job->algorithm : "mondrian"));
    json_object_set_new(params, "qi", string_array(&job->qi));
    json_object_set_new(params, "sensitive", job->sensitive ? json_string(job->sensitive) : json_null());
    json_object_set_new(params, "identifier", string_array(&job->identifiers));
    json_t *hier = json_object();
    for (size_t i = 0; i < job->hierarchy_attrs.count; i++)
        json_object_set_new(hier, job->hierarchy_attrs.items[i], json_string(job->hierarchy_paths.items[i]));
    json_object_set_new(params, "hierarchy", hier);
    json_object_set_new(params, "split", json_string(mdr_split_name(job->split)));
    if (job->split == MDR_SPLIT_INFOGAIN) json_object_set_new(params, "min-gain", json_real(job->min_gain));
    json_object_set_new(params, "class", job->class_name ? json_string(job->class_name) : json_null());
    json_object_set_new(params, "target", job->target_name ? json_string(job->target_name) : json_null());
    json_object_set_new(params, "publish", json_string(recode_style_name(job->publish)));
    if (job->rules) json_object_set_new(params, "rules", json_string(job->rules));
    json_object_set_new(params, "k", json_integer((json_int_t)job->model.k));
    if (job->model.variance > 0) json_object_set_new(params, "variance", json_real(job->model.variance));
    if (job->model.l > 0) {
        char variants[128];
        model_variant_names(job->model.l_variants, variants, sizeof variants);
        json_object_set_new(params, "l", json_real(job->model.l));
        json_object_set_new(params, "l-variant", json_string(variants));
        if (job->model.l_variants & MODEL_L_RECURSIVE) json_object_set_new(params, "c", json_real(job->model.c));
    }
    char seed[32]; /* a string: JSON integers are signed 64-bit in most readers */
    snprintf(seed, sizeof seed, "%llu", (unsigned long long)job->seed);
    json_object_set_new(params, "seed", json_string(seed));
    json_object_set_new(params, "keep-order", json_boolean(job->keep_order));
    char delim[2] = {job->delimiter, 0};
    json_object_set_new(params, "delimiter", json_string(delim));
    json_object_set_new(root, "anonkit_version", json_string(ANONKIT_VERSION));
    json_object_set_new(root, "parameters", params);
    json_object_set_new(root, "rows_read", json_integer((json_int_t)t->nrows));
    json_object_set_new(root, "rows_published", json_integer((json_int_t)(ps->published)));
    json_object_set_new(root, "rows_suppressed", json_integer((json_int_t)ps->suppressed));
    json_object_set_new(root, "classes", json_integer((json_int_t)mt->classes));
    json_object_set_new(root, "min_class_size", json_integer((json_int_t)mt->min_class));
    json_object_set_new(root, "mean_class_size", json_real(mt->mean_class));
    json_object_set_new(root, "max_class_size", json_integer((json_int_t)mt->max_class));
    json_t *metric = json_object();
    json_object_set_new(metric, "dm", json_real(mt->dm));
    json_object_set_new(metric, "cavg", json_real(mt->cavg));
    json_object_set_new(metric, "gcp", json_real(mt->gcp));
    json_t *ncp = json_object();
    for (uint32_t q = 0; q < t->nqi; q++) json_object_set_new(ncp, t->qi[q].name, json_real(mt->ncp[q]));
    json_object_set_new(metric, "ncp", ncp);
    if (wq->has_entropy) json_object_set_new(metric, "conditional_entropy", json_real(wq->entropy));
    if (wq->has_rmse) json_object_set_new(metric, "rmse", json_real(wq->rmse));
    json_object_set_new(root, "metrics", metric);
    json_object_set_new(root, "seconds", json_real(seconds));
    json_t *phases = json_object();
    json_object_set_new(phases, "read", json_real(pt->read));
    json_object_set_new(phases, "anonymize", json_real(pt->anonymize));
    json_object_set_new(phases, "write", json_real(pt->write));
    json_object_set_new(phases, "metrics", json_real(pt->metrics));
    json_object_set_new(root, "phase_seconds", phases);
    if (rs) {
        json_t *io = json_object();
        json_object_set_new(io, "memory", json_integer((json_int_t)job->memory));
        json_object_set_new(io, "block_size", json_integer((json_int_t)(job->block_size ? job->block_size : 262144)));
        json_object_set_new(io, "tm_rows", json_integer((json_int_t)rs->tm_rows));
        json_object_set_new(io, "fcache", json_integer((json_int_t)rs->fcache));
        json_object_set_new(io, "data_blocks", json_integer((json_int_t)rs->data_blocks));
        json_object_set_new(io, "first_scan_blocks_written", json_integer((json_int_t)rs->first_scan_blocks_written));
        json_object_set_new(io, "first_scan_pieces", json_integer((json_int_t)rs->first_scan_pieces));
        json_object_set_new(io, "first_scan_seconds", json_real(rs->first_scan_seconds));
        json_t *stages = json_object();
        json_object_set_new(stages, "first_scan", json_real(rs->first_scan_seconds));
        if (!strcmp(job->algorithm, "rothko-s")) {
            json_object_set_new(stages, "sampling", json_real(rs->sample_seconds));
            json_object_set_new(stages, "growth", json_real(rs->growth_seconds));
        }
        json_object_set_new(stages, "repartitioning", json_real(rs->repartition_seconds));
        json_object_set_new(stages, "in_memory", json_real(rs->in_memory_seconds));
        json_object_set_new(io, "stage_seconds", stages);
        json_object_set_new(io, "scans", json_integer((json_int_t)rs->scans));
        json_object_set_new(io, "repartitions", json_integer((json_int_t)rs->repartitions));
        json_object_set_new(io, "blocks_read", json_integer((json_int_t)rs->blocks_read));
        json_object_set_new(io, "blocks_written", json_integer((json_int_t)rs->blocks_written));
        json_object_set_new(io, "payload_blocks_read", json_integer((json_int_t)rs->payload_blocks_read));
        json_object_set_new(io, "payload_blocks_written", json_integer((json_int_t)rs->payload_blocks_written));
        json_object_set_new(io, "partitions_in_memory", json_integer((json_int_t)rs->partitions_in_memory));
        json_object_set_new(io, "spill_files_created", json_integer((json_int_t)rs->spill_files_created));
        json_object_set_new(io, "rows_written", json_integer((json_int_t)rs->rows_written));
        json_object_set_new(io, "sparse_av_sets", json_integer((json_int_t)rs->sparse_sets));
        json_object_set_new(io, "recounted_nodes", json_integer((json_int_t)rs->recounted_nodes));
        json_t *model = json_object();
        if (!strcmp(job->algorithm, "rothko-s")) {
            json_object_set_new(io, "sample_rows", json_integer((json_int_t)rs->sample_rows));
            json_object_set_new(io, "sampled_in_first_scan", json_boolean(rs->sampled_in_first_scan));
            json_object_set_new(io, "test", json_string(sample_test_name(job->test)));
            json_object_set_new(io, "alpha", json_real(job->alpha > 0 ? job->alpha : 0.05));
            json_object_set_new(io, "growth_phases", json_integer((json_int_t)rs->growth_phases));
            json_object_set_new(io, "pruned_nodes", json_integer((json_int_t)rs->pruned_nodes));
            json_object_set_new(io, "no_confident_split", json_integer((json_int_t)rs->no_confident_split));
            json_object_set_new(io, "finished_by_rothko_t", json_integer((json_int_t)rs->finished_by_rothko_t));
            json_object_set_new(io, "leaves_possibly_non_minimal", json_integer((json_int_t)rs->non_minimal));
            json_object_set_new(model, "repartitions_S", json_integer((json_int_t)rs->model_repartitions));
            json_object_set_new(model, "reads_S", json_integer((json_int_t)rs->model_reads));
            json_object_set_new(model, "writes_S", json_integer((json_int_t)rs->model_writes));
        } else {
            json_object_set_new(model, "height", json_integer((json_int_t)rs->model_height));
            json_object_set_new(model, "repartitions_T", json_integer((json_int_t)rs->model_repartitions));
            json_object_set_new(model, "reads_T", json_integer((json_int_t)rs->model_reads));
            json_object_set_new(model, "writes_T", json_integer((json_int_t)rs->model_writes));
        }
        json_object_set_new(io, "model", model);
        json_object_set_new(root, "out_of_core", io);
    }
    if (onedim) json_object_set(root, "onedim", onedim);
    if (algo) json_object_set(root, job->algorithm, algo); /* the algorithm's own results */
    char *text = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
    json_decref(root);
    return text;
}

static char *build_summary(const anonkit_job *job, const table *t, const metrics *mt, const workload_quality *wq,
                           double seconds, const publish_stats *ps, const char *algo)
{
    const size_t size = 1024 + (algo ? strlen(algo) : 0);
    char *text = malloc(size);
    if (!text) return NULL;
    char workload[160] = "";
    if (wq->has_entropy && wq->has_rmse)
        snprintf(workload, sizeof workload, "conditional entropy %.6g bits, RMSE %.6g\n", wq->entropy, wq->rmse);
    else if (wq->has_entropy)
        snprintf(workload, sizeof workload, "conditional entropy %.6g bits\n", wq->entropy);
    else if (wq->has_rmse)
        snprintf(workload, sizeof workload, "RMSE %.6g\n", wq->rmse);
    snprintf(text, size,
             "%s"
             "read %zu rows from %s\n"
             "published %llu rows, suppressed %llu (published + suppressed = read)\n"
             "%llu classes, class size min %llu, mean %.2f, max %llu\n"
             "GCP %.4f, DM %.6g, C_AVG %.4f (k = %llu)\n"
             "%s"
             "time %.3f s\n",
             algo ? algo : "", t->nrows, t->display_name, (unsigned long long)ps->published, (unsigned long long)ps->suppressed,
             (unsigned long long)mt->classes, (unsigned long long)mt->min_class, mt->mean_class,
             (unsigned long long)mt->max_class, mt->gcp, mt->dm, mt->cavg, (unsigned long long)job->model.k,
             workload, seconds);
    return text;
}

/* ---- Rothko-T: the data flow out of core (000 §2) ---- */

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
    AK_CHECK(publish_stream_open(&sink->out, schema, &sink->po, sink->of->stream, job->output, err));
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
    if (rc == ANONKIT_OK && !continued && sink->rules) rc = rules_stream_part(sink->rules, view, classes, means, err);
    if (rc == ANONKIT_OK && !continued) metrics_add_partition(sink->mt, view, classes);
    free(means);
    return rc;
}

/* anonkit_anonymize for --algorithm rothko-t and rothko-s. */
static int anonymize_rothko(anonkit_job *job, const table_spec *spec, outfile *of, outfile *rf, outfile *rulesf,
                            const double *weights, unsigned threads, double start, anonkit_result **out_result)
{
    if (!job->memory)
        return ak_err_set(&job->err, ANONKIT_E_USAGE, NULL, 0, 0, "--algorithm %s needs a memory budget (--memory, e.g. 256M)",
                          job->algorithm);
    if (job->keep_order)
        return ak_err_set(&job->err, ANONKIT_E_USAGE, NULL, 0, 0,
                          "--keep-order needs the in-memory algorithm: %s writes its partitions one after another",
                          job->algorithm);
    metrics mt;
    int rc = metrics_init(&mt, (uint32_t)job->qi.count, weights, &job->err);
    if (rc < 0) return rc;
    leaf_sink sink = {.job = job, .of = of, .rulesf = rulesf, .mt = &mt,
                      .po = {.keep_order = 0, .seed = job->seed, .threads = threads, .style = job->publish}};
    const rothko_options ro = {.split = job->split, .min_gain = job->min_gain, .memory = job->memory,
                               .fcache = job->fcache, .block = job->block_size, .tmpdir = job->tmpdir,
                               .threads = threads, .spill_notice = job->spill_notice,
                               .spill_notice_size = job->spill_notice_size,
                               .sampling = !strcmp(job->algorithm, "rothko-s"), .test = job->test,
                               .alpha = job->alpha, .sample_rows = job->sample_size,
                               .growth_depth = job->growth_depth, .seed = job->seed,
                               .pipeline_min_rows = job->pipeline_min_rows,
                               .first_sample_rows = job->first_sample_rows};
    rothko_stats rs;
    table *schema = NULL;
    anonkit_result *result = NULL;
    publish_stats ps = {0, 0};
    phase_times pt = {0, 0, 0, 0};
    double mark = ak_seconds();
    rc = rothko_run(spec, &job->model, &ro, publish_leaf, &sink, &schema, &rs, &job->err);
    pt.anonymize = ak_seconds() - mark;
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
        if (!(result = calloc(1, sizeof *result))) rc = ak_err_nomem(&job->err);
        if (rc == ANONKIT_OK) {
            result->rows_read = schema->nrows;
            result->published = ps.published;
            result->suppressed = ps.suppressed;
            result->classes = mt.classes;
            result->summary = build_summary(job, schema, &mt, &wq, seconds, &ps, NULL);
            result->json = build_report(job, schema, &mt, &wq, seconds, &pt, &ps, &rs, NULL, NULL);
            if (!result->summary || !result->json) rc = ak_err_nomem(&job->err);
        }
        if (rc == ANONKIT_OK && job->report && fprintf(rf->stream, "%s\n", result->json) < 0)
            rc = ak_err_set(&job->err, ANONKIT_E_IO, job->report, 0, 0, "cannot write the report");
    }
    publish_stream_free(sink.out);
    rules_stream_free(sink.rules);
    metrics_free(&mt);
    table_free(schema);
    if (rc < 0) {
        anonkit_result_free(result);
        return rc;
    }
    *out_result = result;
    return ANONKIT_OK;
}

int anonkit_anonymize(anonkit_job *job, anonkit_result **out_result)
{
    *out_result = NULL;
    ak_err_clear(&job->err);
    const double start = ak_seconds();
    if (!job->input) return ak_err_set(&job->err, ANONKIT_E_USAGE, NULL, 0, 0, "no input file given"), job_fail(job);
    if (!job->output)
        return ak_err_set(&job->err, ANONKIT_E_USAGE, NULL, 0, 0, "no output file given (-o FILE, or - for stdout)"), job_fail(job);
    if (!job->qi.count)
        return ak_err_set(&job->err, ANONKIT_E_USAGE, NULL, 0, 0, "no quasi-identifiers given (--qi)"), job_fail(job);
    if (job->model.l > 0 && !job->sensitive)
        return ak_err_set(&job->err, ANONKIT_E_USAGE, NULL, 0, 0, "--l needs a sensitive column (--sensitive)"), job_fail(job);
    if (job->model.variance > 0 && !job->sensitive)
        return ak_err_set(&job->err, ANONKIT_E_USAGE, NULL, 0, 0, "--variance needs a numeric sensitive column (--sensitive)"), job_fail(job);
    if (job->split == MDR_SPLIT_INFOGAIN && !job->class_name)
        return ak_err_set(&job->err, ANONKIT_E_USAGE, NULL, 0, 0, "--split infogain needs a class label column (--class)"), job_fail(job);
    if (job->split == MDR_SPLIT_REGRESSION && !job->target_name)
        return ak_err_set(&job->err, ANONKIT_E_USAGE, NULL, 0, 0, "--split regression needs a numeric target column (--target)"), job_fail(job);
    if (model_validate(&job->model, &job->err) < 0) return job_fail(job);
    if (inc_job_validate(job) < 0) return job_fail(job);
    if (!job->seed_set) job->seed = ak_fresh_seed();

    int rc;
    spool sp;
    memset(&sp, 0, sizeof sp);
    outfile of, rf, rulesf;
    memset(&of, 0, sizeof of);
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
    json_t *algo_report = NULL;
    char *algo_summary = NULL;
    publish_stats ps;
    json_t *onedim = NULL;

    const int from_stdin = strcmp(job->input, "-") == 0;
    if ((rc = outfile_open(&of, job->output, &job->err)) < 0) goto done;
    if (job->report && (rc = outfile_open(&rf, job->report, &job->err)) < 0) goto done;
    if (job->rules && (rc = outfile_open(&rulesf, job->rules, &job->err)) < 0) goto done;
    if (from_stdin && (rc = spool_stream(&sp, stdin, &job->err)) < 0) goto done;
    table_spec spec;
    if ((rc = job_table_spec(job, from_stdin ? sp.path : job->input, from_stdin ? "stdin" : job->input, &spec,
                             &storage)) < 0)
        goto done;
    if ((rc = job_weights(job, &weights)) < 0) goto done;
    unsigned threads = job->threads;
    if (!threads) {
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        threads = cores > 0 ? (unsigned)cores : 1;
    }
    spec.threads = threads;
    if (job->algorithm && (!strcmp(job->algorithm, "rothko-t") || !strcmp(job->algorithm, "rothko-s"))) {
        if ((rc = anonymize_rothko(job, &spec, &of, &rf, &rulesf, weights, threads, start, &result)) < 0) goto done;
        if ((rc = outfile_commit(&of, &job->err)) < 0) goto done;
        if (job->report && (rc = outfile_commit(&rf, &job->err)) < 0) goto done;
        if (job->rules && (rc = outfile_commit(&rulesf, &job->err)) < 0) goto done;
        rc = ANONKIT_OK;
        goto done;
    }
    phase_times pt;
    double mark = ak_seconds();
    if ((rc = table_load(&t, &spec, &job->err)) < 0) goto done;
    pt.read = ak_seconds() - mark;
    if ((rc = check_against_table(job, t)) < 0) goto done;
    /* the columns the writer copies through are read while the algorithm runs */
    if (!job->keep_order && threads > 1 && (rc = publish_copied_start(&copied, t, &job->err)) < 0) goto done;
    mark = ak_seconds();
    if ((rc = partition_init(&part, t->nrows, t->nqi, &job->err)) < 0) goto done;
    if (job->algorithm && !strcmp(job->algorithm, "incognito")) {
        if ((rc = inc_job_run(job, t, &part, &algo_report, &algo_summary)) < 0) goto done;
    } else if (job->algorithm && hil_parse_algorithm(job->algorithm, NULL) == 0) {
        if ((rc = job_run_onedim(job, t, weights, &part, &onedim, &job->err)) < 0) goto done;
    } else {
        const mdr_options mo = {.threads = threads, .split = job->split, .min_gain = job->min_gain};
        if ((rc = mdr_run_with(t, &job->model, &mo, &part, &job->err)) < 0) goto done;
    }
    pt.anonymize = ak_seconds() - mark;
    mark = ak_seconds();
    /* The class means are computed once, for the output and the rules. */
    if (job->publish == RECODE_MEAN && (rc = recode_class_means(t, &part, &means, &job->err)) < 0) goto done;
    publish_opts po = {.keep_order = job->keep_order, .seed = job->seed, .drop_suppressed = 0, .threads = threads,
                       .style = job->publish, .means = means, .copied = copied};
    if ((rc = publish_write(t, &part, &po, of.stream, job->output, &ps, &job->err)) < 0) goto done;
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
    if ((rc = measure_workload(job, t, &part, &wq)) < 0) goto done;
    pt.metrics = ak_seconds() - mark;

    const double seconds = ak_seconds() - start;
    if (!(result = calloc(1, sizeof *result))) { rc = ak_err_nomem(&job->err); goto done; }
    result->rows_read = t->nrows;
    result->published = ps.published;
    result->suppressed = ps.suppressed;
    result->classes = part.nclasses;
    result->summary = build_summary(job, t, &mt, &wq, seconds, &ps, algo_summary);
    result->json = build_report(job, t, &mt, &wq, seconds, &pt, &ps, NULL, onedim, algo_report);
    if (!result->summary || !result->json) { rc = ak_err_nomem(&job->err); goto done; }
    if (job->report && fprintf(rf.stream, "%s\n", result->json) < 0) {
        rc = ak_err_set(&job->err, ANONKIT_E_IO, job->report, 0, 0, "cannot write the report");
        goto done;
    }
    if ((rc = outfile_commit(&of, &job->err)) < 0) goto done;
    if (job->report && (rc = outfile_commit(&rf, &job->err)) < 0) goto done;
    if (job->rules && (rc = outfile_commit(&rulesf, &job->err)) < 0) goto done;
    rc = ANONKIT_OK;
done:
    if (rc < 0) {
        outfile_abort(&of);
        outfile_abort(&rf);
        outfile_abort(&rulesf);
        anonkit_result_free(result);
        result = NULL;
    }
    publish_copied_free(copied); /* before the table and the spooled input it reads */
    spool_remove(&sp);
    table_free(t);
    partition_free(&part);
    metrics_free(&mt);
    free(weights);
    free(means);
    json_decref(algo_report);
    free(algo_summary);
    job_spec_free(&storage);
    json_decref(onedim);
    if (rc < 0) return job_fail(job);
    *out_result = result;
    return ANONKIT_OK;
}
