/* html_release.c (api) — gathers what the release report shows and writes it
 * (html.h): the SHA-256 of every file the release involves, the verifier's
 * verdict on the file as written (src/verify/, the same proof as
 * `anonkit check`), the scans of the published file and of the original, and
 * the JSON report the figures come from. Shared by `anonymize --html` (on the
 * output's temporary, before the commit) and `anonkit report`. */
#include "api/html.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/jsonb.h"
#include "verify/verify.h"

/* Whether QI q of the job is numeric: --numeric, or no hierarchy. */
static int qi_is_numeric(const anonkit_job *job, const char *name)
{
    for (size_t i = 0; i < job->numeric.count; i++)
        if (!strcmp(job->numeric.items[i], name)) return 1;
    for (size_t i = 0; i < job->hierarchy_attrs.count; i++)
        if (!strcmp(job->hierarchy_attrs.items[i], name)) return 0;
    return 1;
}

/* Adds the checksum of the file at `read` (shown as `path`) as `role`. */
static int add_sum(html_checksum *sums, size_t *n, const char *role, const char *path, const char *read, ak_error *err)
{
    html_checksum *c = &sums[*n];
    snprintf(c->role, sizeof c->role, "%s", role);
    c->path = path;
    AK_CHECK(ak_sha256_file(read, path, c->hex, err));
    (*n)++;
    return ANONKIT_OK;
}

/* Runs the verifier on the file at `path` with the job's model into *v. */
static int verify_file(const anonkit_job *job, const char *path, html_verdict *v, ak_error *err)
{
    memset(v, 0, sizeof *v);
    const verify_params p = {path, job->delimiter, (const char *const *)job->qi.items, job->qi.count,
                             job->sensitive, job->model, job->suppression, job->tmpdir, NULL, 0,
                             (const char *const *)job->missing.items, job->missing.count, NULL};
    verify_counts counts;
    ak_error verr;
    ak_err_clear(&verr);
    const int rc = verify_published(&p, &counts, &verr);
    if (rc == ANONKIT_OK) {
        v->status = ANONKIT_OK;
        v->rows = counts.rows;
        v->classes = counts.classes;
        v->suppressed = counts.suppressed;
        return ANONKIT_OK;
    }
    if (rc != ANONKIT_E_VIOLATION) { /* the file could not be read: the run fails */
        *err = verr;
        return rc;
    }
    v->status = ANONKIT_E_VIOLATION;
    ak_err_format(&verr, v->message, sizeof v->message);
    return ANONKIT_OK;
}

int html_release_write(anonkit_job *job, const char *command, const char *report_json, const char *output_read,
                       const char *output_shown, const char *input_read, const char *input_shown, FILE *f,
                       const char *html_shown, int *verdict_status, ak_error *err)
{
    const size_t nqi = job->qi.count;
    const size_t max_sums = 3 + job->hierarchy_paths.count + job->job_files.count;
    html_checksum *sums = calloc(max_sums, sizeof *sums);
    unsigned char *numeric = calloc(nqi ? nqi : 1, 1);
    html_scan published, original;
    memset(&published, 0, sizeof published);
    memset(&original, 0, sizeof original);
    html_verdict verdict;
    memset(&verdict, 0, sizeof verdict);
    json_t *report = json_loads(report_json, 0, NULL);
    int rc = ANONKIT_OK;
    size_t nsums = 0;
    /* jansson's parser can lose a byte of a key when memory runs out
     * (akheron/jansson#362): the document is used only when it prints back
     * to the very text it was read from */
    char *again = report ? jsonb_dumps(report) : NULL;
    const int same = again && !strcmp(again, report_json);
    free(again);
    if (!sums || !numeric || !same) {
        rc = ak_err_nomem(err);
        goto done;
    }
    for (size_t q = 0; q < nqi; q++) numeric[q] = (unsigned char)qi_is_numeric(job, job->qi.items[q]);
    if (input_read && (rc = add_sum(sums, &nsums, "input (original)", input_shown, input_read, err)) < 0) goto done;
    if (output_read && (rc = add_sum(sums, &nsums, "output (published)", output_shown, output_read, err)) < 0) goto done;
    for (size_t i = 0; i < job->hierarchy_paths.count; i++) {
        char role[160];
        snprintf(role, sizeof role, "hierarchy of %s", job->hierarchy_attrs.items[i]);
        if ((rc = add_sum(sums, &nsums, role, job->hierarchy_paths.items[i], job->hierarchy_paths.items[i], err)) < 0)
            goto done;
    }
    for (size_t i = 0; i < job->job_files.count; i++)
        if ((rc = add_sum(sums, &nsums, "job file", job->job_files.items[i], job->job_files.items[i], err)) < 0) goto done;
    if (output_read) {
        if ((rc = verify_file(job, output_read, &verdict, err)) < 0) goto done;
        if ((rc = html_scan_file(output_read, output_shown, job->delimiter, (const char *const *)job->qi.items, nqi,
                                 &published, err)) < 0)
            goto done;
    } else {
        verdict.status = 1;
        snprintf(verdict.message, sizeof verdict.message,
                 "the output went to standard output or a device, which cannot be read back");
    }
    if (input_read && (rc = html_scan_file(input_read, input_shown, job->delimiter, (const char *const *)job->qi.items,
                                           nqi, &original, err)) < 0)
        goto done;
    html_doc d = {
        .command = command,
        .report = report,
        .sums = sums,
        .nsums = nsums,
        .verdict = &verdict,
        .published = output_read ? &published : NULL,
        .original = input_read ? &original : NULL,
        .qi = (const char *const *)job->qi.items,
        .nqi = nqi,
        .numeric = numeric,
        .suppression = job->suppression,
        .settings = &job->settings,
    };
    const time_t now = time(NULL);
    struct tm tm;
    if (gmtime_r(&now, &tm)) strftime(d.date, sizeof d.date, "%Y-%m-%d %H:%M:%S UTC", &tm);
    rc = html_report_write(f, html_shown, &d, err);
    if (verdict_status) *verdict_status = verdict.status;
done:
    html_scan_free(&published);
    html_scan_free(&original);
    json_decref(report);
    free(sums);
    free(numeric);
    return rc;
}

int html_anonymize_write(anonkit_job *job, const outfile *of, const outfile *html, const char *input_read,
                         const char *input_shown, const char *report_json)
{
    char proc[64];
    const char *read = NULL;
    if (of->stream && of->stream != stdout && fflush(of->stream) != 0)
        return ak_err_set(&job->err, ANONKIT_E_IO, job->output, 0, 0, "write failed");
    if (of->unnamed && of->stream) { /* the unnamed temporary, by its descriptor */
        snprintf(proc, sizeof proc, "/proc/self/fd/%d", fileno(of->stream));
        read = proc;
    } else if (of->temp_path) {
        read = of->temp_path;
    }
    return html_release_write(job, "anonkit anonymize", report_json, read, job->output, input_read, input_shown,
                              html->stream, job->html, NULL, &job->err);
}
