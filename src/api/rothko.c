/* rothko.c (api) — the Rothko-T and Rothko-S entries of the algorithm
 * registry: the job's checks and settings for an out-of-core run, and the
 * run's statistics as the report's "out_of_core" object. */
#include "api/jsonb.h"
#include "api/rothko.h"

#include <jansson.h>
#include <string.h>

#include "api/job.h"

/* The report's "out_of_core" object of a finished run; NULL when out of memory. */
static json_t *out_of_core_json(const anonkit_job *job, const rothko_stats *rs, int sampling)
{
    int jfail = 0;
    json_t *io = json_object();
    if (!io) return NULL;
    JSET(io, "memory", json_integer((json_int_t)job->memory));
    JSET(io, "block_size", json_integer((json_int_t)(job->rothko.block_size ? job->rothko.block_size : 262144)));
    JSET(io, "tm_rows", json_integer((json_int_t)rs->tm_rows));
    JSET(io, "fcache", json_integer((json_int_t)rs->fcache));
    JSET(io, "data_blocks", json_integer((json_int_t)rs->data_blocks));
    JSET(io, "first_scan_blocks_written", json_integer((json_int_t)rs->first_scan_blocks_written));
    JSET(io, "first_scan_pieces", json_integer((json_int_t)rs->first_scan_pieces));
    JSET(io, "first_scan_seconds", json_real(rs->first_scan_seconds));
    json_t *stages = json_object();
    JSET(stages, "first_scan", json_real(rs->first_scan_seconds));
    if (sampling) {
        JSET(stages, "sampling", json_real(rs->sample_seconds));
        JSET(stages, "growth", json_real(rs->growth_seconds));
    }
    JSET(stages, "repartitioning", json_real(rs->repartition_seconds));
    JSET(stages, "in_memory", json_real(rs->in_memory_seconds));
    JSET(io, "stage_seconds", stages);
    JSET(io, "scans", json_integer((json_int_t)rs->scans));
    JSET(io, "repartitions", json_integer((json_int_t)rs->repartitions));
    JSET(io, "blocks_read", json_integer((json_int_t)rs->blocks_read));
    JSET(io, "blocks_written", json_integer((json_int_t)rs->blocks_written));
    JSET(io, "payload_blocks_read", json_integer((json_int_t)rs->payload_blocks_read));
    JSET(io, "payload_blocks_written", json_integer((json_int_t)rs->payload_blocks_written));
    JSET(io, "partitions_in_memory", json_integer((json_int_t)rs->partitions_in_memory));
    JSET(io, "spill_files_created", json_integer((json_int_t)rs->spill_files_created));
    JSET(io, "rows_written", json_integer((json_int_t)rs->rows_written));
    JSET(io, "sparse_av_sets", json_integer((json_int_t)rs->sparse_sets));
    JSET(io, "recounted_nodes", json_integer((json_int_t)rs->recounted_nodes));
    json_t *model = json_object();
    if (sampling) {
        JSET(io, "sample_rows", json_integer((json_int_t)rs->sample_rows));
        JSET(io, "sampled_in_first_scan", json_boolean(rs->sampled_in_first_scan));
        JSET(io, "test", json_string(sample_test_name(job->rothko.test)));
        JSET(io, "alpha", json_real(job->rothko.alpha > 0 ? job->rothko.alpha : 0.05));
        JSET(io, "growth_phases", json_integer((json_int_t)rs->growth_phases));
        JSET(io, "pruned_nodes", json_integer((json_int_t)rs->pruned_nodes));
        JSET(io, "no_confident_split", json_integer((json_int_t)rs->no_confident_split));
        JSET(io, "finished_by_rothko_t", json_integer((json_int_t)rs->finished_by_rothko_t));
        JSET(io, "leaves_possibly_non_minimal", json_integer((json_int_t)rs->non_minimal));
        JSET(model, "repartitions_S", json_integer((json_int_t)rs->model_repartitions));
        JSET(model, "reads_S", json_integer((json_int_t)rs->model_reads));
        JSET(model, "writes_S", json_integer((json_int_t)rs->model_writes));
    } else {
        JSET(model, "height", json_integer((json_int_t)rs->model_height));
        JSET(model, "repartitions_T", json_integer((json_int_t)rs->model_repartitions));
        JSET(model, "reads_T", json_integer((json_int_t)rs->model_reads));
        JSET(model, "writes_T", json_integer((json_int_t)rs->model_writes));
    }
    JSET(io, "model", model);

    if (jfail) {
        json_decref(io);
        return NULL;
    }
    return io;
}

/* Checks the job, runs Rothko-T (sampling 0) or Rothko-S (1) and reports. */
static int rothko_stream(anonkit_job *job, const table_spec *spec, const ak_run_context *ctx, rothko_leaf_fn leaf_fn,
                         void *leaf_ctx, int sampling, ak_stream_output *out)
{
    const char *name = job_algorithm(job)->name;
    if (!job->memory)
        return ak_err_set(&job->err, ANONKIT_E_USAGE, NULL, 0, 0, "--algorithm %s needs a memory budget (--memory, e.g. 256M)",
                          name);
    if (job->keep_order)
        return ak_err_set(&job->err, ANONKIT_E_USAGE, NULL, 0, 0,
                          "--keep-order needs the in-memory algorithm: %s writes its partitions one after another",
                          name);
    const rothko_options ro = {.split = job->split, .min_gain = job->min_gain, .memory = job->memory,
                               .fcache = job->rothko.fcache, .block = job->rothko.block_size, .tmpdir = job->tmpdir,
                               .threads = ctx->threads,
                               .sampling = sampling, .test = job->rothko.test,
                               .alpha = job->rothko.alpha, .sample_rows = job->rothko.sample_size,
                               .growth_depth = job->rothko.growth_depth, .seed = job->seed,
                               .pipeline_min_rows = job->rothko.pipeline_min_rows,
                               .first_sample_rows = job->rothko.first_sample_rows, .progress = ctx->progress,
                               .regions_only = job->rules != NULL};
    rothko_stats rs;
    AK_CHECK(rothko_run(spec, &job->model, &ro, leaf_fn, leaf_ctx, &out->schema, &rs, &job->err));
    if (!(out->out_of_core = out_of_core_json(job, &rs, sampling))) return ak_err_nomem(&job->err);
    return ANONKIT_OK;
}

int rothko_t_stream(anonkit_job *job, const table_spec *spec, const ak_run_context *ctx, rothko_leaf_fn leaf_fn,
                    void *leaf_ctx, ak_stream_output *out)
{
    return rothko_stream(job, spec, ctx, leaf_fn, leaf_ctx, 0, out);
}

int rothko_s_stream(anonkit_job *job, const table_spec *spec, const ak_run_context *ctx, rothko_leaf_fn leaf_fn,
                    void *leaf_ctx, ak_stream_output *out)
{
    return rothko_stream(job, spec, ctx, leaf_fn, leaf_ctx, 1, out);
}
