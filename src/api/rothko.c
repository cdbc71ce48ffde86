/* rothko.c (api) — the Rothko-T and Rothko-S entries of the algorithm
 * registry: the job's checks and settings for an out-of-core run, and the
 * run's statistics as the report's "out_of_core" object. */
#include "api/rothko.h"

#include <jansson.h>
#include <string.h>

#include "api/job.h"

/* The report's "out_of_core" object of a finished run; NULL when out of memory. */
static json_t *out_of_core_json(const anonkit_job *job, const rothko_stats *rs, int sampling)
{
    json_t *io = json_object();
    if (!io) return NULL;
    json_object_set_new(io, "memory", json_integer((json_int_t)job->memory));
    json_object_set_new(io, "block_size", json_integer((json_int_t)(job->rothko.block_size ? job->rothko.block_size : 262144)));
    json_object_set_new(io, "tm_rows", json_integer((json_int_t)rs->tm_rows));
    json_object_set_new(io, "fcache", json_integer((json_int_t)rs->fcache));
    json_object_set_new(io, "data_blocks", json_integer((json_int_t)rs->data_blocks));
    json_object_set_new(io, "first_scan_blocks_written", json_integer((json_int_t)rs->first_scan_blocks_written));
    json_object_set_new(io, "first_scan_pieces", json_integer((json_int_t)rs->first_scan_pieces));
    json_object_set_new(io, "first_scan_seconds", json_real(rs->first_scan_seconds));
    json_t *stages = json_object();
    json_object_set_new(stages, "first_scan", json_real(rs->first_scan_seconds));
    if (sampling) {
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
    if (sampling) {
        json_object_set_new(io, "sample_rows", json_integer((json_int_t)rs->sample_rows));
        json_object_set_new(io, "sampled_in_first_scan", json_boolean(rs->sampled_in_first_scan));
        json_object_set_new(io, "test", json_string(sample_test_name(job->rothko.test)));
        json_object_set_new(io, "alpha", json_real(job->rothko.alpha > 0 ? job->rothko.alpha : 0.05));
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
                               .first_sample_rows = job->rothko.first_sample_rows};
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
