/* sources.h (api) — the settings of a job that its sources and sinks take
 * (io/source.h, docs/sources.md). */
#ifndef AK_API_SOURCES_H
#define AK_API_SOURCES_H

#include <jansson.h>
#include <stdlib.h>

#include "api/job.h"
#include "api/tables.h"
#include "io/source.h"

/* The source options of job: its delimiter, --query, --use-codes, --replace, --tmpdir. */
static inline source_options job_source_options(const anonkit_job *job)
{
    const source_options o = {.delimiter = job->delimiter ? job->delimiter : ',', .query = job->query,
                              .use_codes = job->use_codes, .replace = job->replace, .tmpdir = job->tmpdir,
                              .table_out = job->tables ? &job->tables->output : NULL,
                              .table_in = job_tables_input(job)};
    return o;
}

/* name as a JSON string for a report, its password masked (io/source.h);
 * NULL when out of memory (which fails the report). */
static inline json_t *job_json_name(const char *name)
{
    if (!name) return json_null();
    char *shown = source_display(name);
    json_t *j = shown ? json_string(shown) : NULL;
    free(shown);
    return j;
}

#endif
