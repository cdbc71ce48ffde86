/* onedim.c — the anonymize pipeline's branch for the 1-D algorithms of [Ghinita07]
 * (--algorithm hilbert|hilbert-fast|idistance|idistance-fast): job settings
 * into hil_options, and what the run did into the JSON report. */
#include "api/jsonb.h"
#include "api/onedim.h"

#include <string.h>
#include <unistd.h>

#include "algo/onedim/onedim.h"
#include "api/job.h"

int onedim_job_validate(anonkit_job *job)
{
    if (!model_has_dist(&job->model)) return ANONKIT_OK;
    return job_usage_error(job, "--algorithm %s cannot guarantee t-closeness, delta-disclosure or beta-likeness: its "
                           "groups are cut along the 1-D order by size alone ([Ghinita07] §4), and no sound rule for "
                           "these models is implemented; use mondrian, rothko-t, rothko-s or incognito",
                           job_algorithm(job)->name);
}

int onedim_job_run(anonkit_job *job, const table *t, const ak_run_context *ctx, partition *part,
                   ak_run_output *out)
{
    int jfail = 0;
    ak_error *err = &job->err;
    const char *name = job_algorithm(job)->name;
    hil_options o;
    memset(&o, 0, sizeof o);
    if (hil_parse_algorithm(name, &o) != 0) /* the 1-D family's own names of its variants */
        return ak_err_set(err, ANONKIT_E_INTERNAL, NULL, 0, 0, "'%s' is not a 1-D algorithm", name);
    o.bits = job->onedim.bits;
    o.centers = job->onedim.centers;
    o.seed = job->seed;
    o.memory = job->memory;
    o.tmpdir = job->tmpdir; /* --tmpdir */
    o.weights = ctx->weights;
    o.progress = ctx->progress;
    o.threads = job->threads;
    if (!o.threads) {
        const long cores = sysconf(_SC_NPROCESSORS_ONLN);
        o.threads = cores > 0 ? (unsigned)cores : 1;
    }
    /* [Ghinita07] Definition 3 is the l-diversity these algorithms guarantee. */
    if (!job->l_variant_set) job->model.l_variants = MODEL_L_PROBABILISTIC;
    hil_stats st;
    AK_CHECK(hil_run(t, &job->model, &o, part, &st, err));
    json_t *j = json_object();
    if (!j) return ak_err_nomem(err);
    JSET(j, "key_bits", json_integer((json_int_t)st.key_bits));
    if (o.mapping == HIL_MAP_IDISTANCE) {
        JSET(j, "centers", json_integer((json_int_t)st.centers));
        JSET(j, "kmeans_iterations", json_integer((json_int_t)st.kmeans_iterations));
        JSET(j, "kmeans_searches", json_integer((json_int_t)st.kmeans_searches));
    }
    else JSET(j, "bits", json_integer(o.bits ? o.bits : HIL_DEFAULT_BITS));
    JSET(j, "memory", json_integer((json_int_t)job->memory));
    JSET(j, "sort_runs", json_integer((json_int_t)st.sort_runs));
    JSET(j, "sort_merge_passes", json_integer((json_int_t)st.sort_merge_passes));
    JSET(j, "block_size", json_integer((json_int_t)st.block_size));
    JSET(j, "blocks_written", json_integer((json_int_t)st.blocks_written));
    JSET(j, "blocks_read", json_integer((json_int_t)st.blocks_read));
    if (job->model.l > 0) {
        JSET(j, "fallback_steps", json_integer((json_int_t)st.fallback_steps));
        JSET(j, "closing_groups", json_integer((json_int_t)st.closing_groups));
        JSET(j, "exchanges", json_integer((json_int_t)st.exchanges));
    }
    if (jfail) {
        json_decref(j);
        return ak_err_nomem(err);
    }
    out->report = j;
    return ANONKIT_OK;
}
