/* algorithm.c — the registry of anonymization algorithms (algorithm.h): one
 * entry per --algorithm name, and Mondrian's in-memory run, the default. */
#include "api/algorithm.h"

#include <stdio.h>
#include <string.h>

#include "algo/mondrian/mondrian.h"
#include "api/incognito.h"
#include "api/job.h"
#include "api/onedim.h"
#include "api/rothko.h"

/* Greedy multidimensional partitioning in memory ([LeFevre07] §2's Mondrian). */
static int mondrian_run(anonkit_job *job, const table *t, const ak_run_context *ctx, partition *part,
                        ak_run_output *out)
{
    (void)out;
    const mdr_options mo = {.threads = ctx->threads, .split = job->split, .min_gain = job->min_gain,
                            .progress = ctx->progress};
    return mdr_run_with(t, &job->model, &mo, part, &job->err);
}

static const ak_algorithm algorithms[] = {
    {.name = "mondrian", .run = mondrian_run},
    {.name = "rothko-t", .stream = rothko_t_stream},
    {.name = "rothko-s", .stream = rothko_s_stream},
    {.name = "incognito", .report_key = "incognito", .validate = inc_job_validate,
     .reject_options = inc_job_reject_options, .run = inc_job_run},
    {.name = "hilbert", .report_key = "onedim", .validate = onedim_job_validate, .run = onedim_job_run},
    {.name = "hilbert-fast", .report_key = "onedim", .validate = onedim_job_validate, .run = onedim_job_run},
    {.name = "idistance", .report_key = "onedim", .validate = onedim_job_validate, .run = onedim_job_run},
    {.name = "idistance-fast", .report_key = "onedim", .validate = onedim_job_validate, .run = onedim_job_run},
    {.name = "local", .report_key = "local", .validate = local_job_validate, .run = local_job_run},
};

enum { NALGORITHMS = sizeof algorithms / sizeof algorithms[0] };

const ak_algorithm *ak_algorithm_find(const char *name)
{
    for (size_t i = 0; i < NALGORITHMS; i++)
        if (!strcmp(algorithms[i].name, name)) return &algorithms[i];
    return NULL;
}

const ak_algorithm *ak_algorithm_default(void) { return &algorithms[0]; }

size_t ak_algorithm_count(void) { return NALGORITHMS; }

const ak_algorithm *ak_algorithm_at(size_t i) { return i < NALGORITHMS ? &algorithms[i] : NULL; }

void ak_algorithm_names(char *buf, size_t size)
{
    size_t used = 0;
    if (size) buf[0] = '\0';
    for (size_t i = 0; i < NALGORITHMS && used < size; i++) {
        const int n = snprintf(buf + used, size - used, "%s%s", i ? ", " : "", algorithms[i].name);
        if (n < 0) break;
        used += (size_t)n;
    }
}
