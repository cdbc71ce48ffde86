/* recode.c — anonkit_recode: applies saved recoding rules (publish/rules.h) to
 * new data, streaming row by row (stdin needs no spooling: it is read once),
 * through the atomic output file so that a failed run leaves nothing behind. */
#include <stdio.h>
#include <string.h>

#include "api/job.h"
#include "api/locale.h"
#include "api/paths.h"
#include "api/result.h"
#include "api/tables.h"
#include "io/memtable.h"
#include "api/sources.h"
#include "publish/rules.h"
#include "io/csv.h"
#include "io/outfile.h"

/* anonkit_recode in the C numeric locale. */
static int recode(anonkit_job *job, anonkit_result **out_result)
{
    *out_result = NULL;
    ak_err_clear(&job->err);
    if (!job->rules)
        return ak_err_set(&job->err, ANONKIT_E_USAGE, NULL, 0, 0,
                          "no recoding rules given (--rules FILE, written by anonkit anonymize --rules)"),
               job_fail(job);
    if (!strcmp(job->rules, "-"))
        return ak_err_set(&job->err, ANONKIT_E_USAGE, NULL, 0, 0, "the rules must come from a file, not stdin"),
               job_fail(job);
    if (!job->input) return ak_err_set(&job->err, ANONKIT_E_USAGE, NULL, 0, 0, "no input file given"), job_fail(job);
    if (!job->output)
        return ak_err_set(&job->err, ANONKIT_E_USAGE, NULL, 0, 0, "no output file given (-o FILE, or - for stdout)"),
               job_fail(job);
    if (job_check_paths(job, JOB_VERB_RECODE) < 0) return job_fail(job);

    const int from_stdin = !strcmp(job->input, "-");
    source_input src;
    memset(&src, 0, sizeof src);
    source_options so = job_source_options(job);
    const char *out_name = strcmp(job->output, "-") ? job->output : "stdout";
    rules *r = NULL;
    csv_reader *in = NULL;
    csv_writer *out = NULL;
    outfile of;
    memset(&of, 0, sizeof of);
    rules_stats stats = {0, 0};
    anonkit_result *result = result_new();
    if (!result) return job_out_of_memory(job);
    int rc = rules_load(&r, job->rules, &job->err);
    if (rc == ANONKIT_OK) so.delimiter = rules_delimiter(r);
    /* an input table in memory and a table output: read and built without CSV text (io/csv.h backends) */
    anonkit_table *built = NULL;
    const int table_out = so.table_in && source_kind_of(job->output) == SOURCE_TABLE && job->tables;
    if (rc == ANONKIT_OK && table_out && !(built = anonkit_table_create())) rc = ak_err_nomem(&job->err);
    if (rc == ANONKIT_OK && !table_out) rc = outfile_open_table(&of, job->output, &so, &job->err);
    /* a source that is not a CSV file is read through a private spool (io/source.h); stdin as a stream */
    if (of.sink) out_name = of.sink->shown;
    if (rc == ANONKIT_OK) rc = source_input_open(&src, job->input, &so, 0, &job->err);
    if (rc == ANONKIT_OK) sink_set_origin(of.sink, src.cols, src.ncols);
    const char *in_name = src.shown ? src.shown : job->input;
    if (rc == ANONKIT_OK)
        rc = src.table    ? csv_reader_open_table(&in, src.table, in_name, &job->err)
             : from_stdin ? csv_reader_open_stream(&in, stdin, in_name, rules_delimiter(r), &job->err)
                          : csv_reader_open(&in, src.path, rules_delimiter(r), &job->err);
    if (rc == ANONKIT_OK)
        rc = built ? csv_writer_open_table(&out, built, "the output table", &job->err)
                   : csv_writer_open_stream(&out, of.stream, out_name, rules_delimiter(r), &job->err);
    /* progress: the rows read, per block; a cancel stops the reading */
    if (rc == ANONKIT_OK && (rc = job_progress_start(job, from_stdin || src.table ? NULL : src.path)) == ANONKIT_OK)
        csv_reader_progress(in, job_progress(job), 0);
    if (rc == ANONKIT_OK) rc = rules_apply(r, in, in_name, out, &stats, &job->err);
    if (rc == ANONKIT_OK) rc = ak_progress_end(job_progress(job), &job->err);
    if (rc == ANONKIT_OK && built) rc = memtable_writer_finish(built, &job->err);
    if (rc == ANONKIT_OK && !built) rc = outfile_commit(&of, &job->err);
    if (rc == ANONKIT_OK && built) { /* handed to the result by anonkit_recode (job_tables_hand_output) */
        anonkit_table_free(job->tables->output);
        job->tables->output = built;
        built = NULL;
    }
    anonkit_table_free(built);
    csv_writer_free(out);
    csv_reader_free(in);
    rules_free(r);
    outfile_abort(&of); /* (after a commit: nothing) */
    source_input_close(&src);
    if (rc < 0) {
        anonkit_result_free(result);
        return job_fail(job);
    }
    result->rows_read = result->published = stats.rows;
    result->outside = stats.outside;
    *out_result = result;
    return ANONKIT_OK;
}

int anonkit_recode(anonkit_job *job, anonkit_result **out_result)
{
    ak_c_numeric scope;
    ak_c_numeric_enter(&scope);
    anonkit_result *result = NULL;
    job_tables_reset_output(job);
    const int rc = recode(job, &result); /* an input table is read as it is (no copy) */
    if (rc == ANONKIT_OK) job_tables_hand_output(job, result); /* a table output (api/tables.h) */
    else job_tables_reset_output(job);
    result_hand_over(result, out_result);
    ak_c_numeric_leave(&scope);
    return rc;
}
