/* job.c — the job object of the public API: creation, errors, the test
 * knobs, and JSON job files (jansson) carrying the settings of the option
 * table (options.c) under the command line's long names. */
#include "api/job.h"

#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <string.h>

#include "api/algorithm.h"
#include "api/options.h"
#include "api/tables.h"
#include "io/source.h"


const char *anonkit_strerror(int status)
{
    switch (status) {
    case ANONKIT_OK: return "success";
    case ANONKIT_E_INPUT: return "bad input";
    case ANONKIT_E_USAGE: return "bad parameter";
    case ANONKIT_E_INELIGIBLE: return "table cannot satisfy the privacy model";
    case ANONKIT_E_IO: return "input/output error";
    case ANONKIT_E_NOMEM: return "out of memory";
    case ANONKIT_E_VIOLATION: return "privacy model violated";
    case ANONKIT_E_INTERNAL: return "internal error";
    case ANONKIT_E_CANCELLED: return "cancelled";
    }
    return "unknown status";
}

void strlist_free(strlist *l)
{
    for (size_t i = 0; i < l->count; i++) free(l->items[i]);
    free(l->items);
    l->items = NULL;
    l->count = 0;
}

int strlist_push(strlist *l, const char *s, size_t len)
{
    char **items = realloc(l->items, (l->count + 1) * sizeof *items);
    if (!items) return -1;
    l->items = items;
    char *copy = malloc(len + 1);
    if (!copy) return -1;
    memcpy(copy, s, len);
    copy[len] = '\0';
    l->items[l->count++] = copy;
    return 0;
}

anonkit_job *anonkit_job_create(void)
{
    anonkit_job *job = calloc(1, sizeof *job);
    if (!job) return NULL;
    model_init(&job->model);
    job->delimiter = ',';
    job->incognito.variant = INC_CUBE; /* the fastest variant; the others are there to compare */
    job->min_gain = 0.01; /* [LeFevre07] footnote 13 */
    ak_progress_init(&job->progress);
    ak_err_clear(&job->err);
    return job;
}

void anonkit_job_free(anonkit_job *job)
{
    if (!job) return;
    job_tables_free(job);
    free(job->input);
    free(job->output);
    free(job->report);
    free(job->sensitive);
    free(job->class_name);
    free(job->target_name);
    free(job->rules);
    free(job->tmpdir);
    strlist_free(&job->qi);
    strlist_free(&job->identifiers);
    strlist_free(&job->numeric);
    strlist_free(&job->hierarchy_attrs);
    strlist_free(&job->hierarchy_paths);
    strlist_free(&job->weight_attrs);
    free(job->weight_values);
    strlist_free(&job->previous);
    strlist_free(&job->x_attrs);
    strlist_free(&job->y_attrs);
    strlist_free(&job->sensitive_values);
    free(job->inconsistent);
    free(job->class_error);
    free(job->split_column);
    free(job->risk.population);
    free(job->risk.weight);
    free(job->risk.json);
    free(job->risk.report_lines);
    free(job->query);
    strlist_free(&job->job_files);
    strlist_free(&job->missing);
    char **hb_texts[] = {&job->hbuild.column, &job->hbuild.interval, &job->hbuild.fanout, &job->hbuild.min,
                         &job->hbuild.max, &job->hbuild.quantiles, &job->hbuild.levels, &job->hbuild.date,
                         &job->hbuild.order};
    for (size_t i = 0; i < sizeof hb_texts / sizeof *hb_texts; i++) free(*hb_texts[i]);
    free(job->html);
    free(job->original);
    strlist_free(&job->settings);
    free(job);
}

const ak_algorithm *job_algorithm(const anonkit_job *job)
{
    return job->algorithm ? job->algorithm : ak_algorithm_default();
}

void job_set_knob(anonkit_job *job, job_knob knob, uint64_t value)
{
    switch (knob) {
    case JOB_KNOB_PARALLEL_MIN_BYTES: job->parallel_min_bytes = value; break;
    case JOB_KNOB_PIPELINE_MIN_ROWS: job->rothko.pipeline_min_rows = value; break;
    case JOB_KNOB_FIRST_SAMPLE_ROWS: job->rothko.first_sample_rows = value; break;
    case JOB_KNOB_PROGRESS_INTERVAL_US: job->progress.interval = (double)value * 1e-6; break;
    }
}

void anonkit_job_set_progress(anonkit_job *job, anonkit_progress_fn fn, void *ctx)
{
    if (!job) return;
    job->progress.fn = fn;
    job->progress.ctx = fn ? ctx : NULL;
}

int anonkit_job_progress_wanted(const anonkit_job *job)
{
    if (!job) return 0;
    return job->progress_off ? -1 : job->progress_on ? 1 : 0;
}

ak_progress *job_progress(anonkit_job *job)
{
    return job->progress.fn ? &job->progress : NULL;
}

int job_progress_start(anonkit_job *job, const char *path)
{
    ak_progress *p = job_progress(job);
    if (!p) return ANONKIT_OK;
    struct stat st;
    const uint64_t size = path && stat(path, &st) == 0 && S_ISREG(st.st_mode) ? (uint64_t)st.st_size : 0;
    ak_progress_begin(p);
    return ak_progress_phase(p, ANONKIT_PHASE_READING, 0, size, &job->err);
}

void job_set_loaded_hook(anonkit_job *job, void (*fn)(void *ctx, const char *path), void *ctx)
{
    job->loaded_hook = fn;
    job->loaded_ctx = ctx;
}

const char *anonkit_errmsg(const anonkit_job *job)
{
    return job ? job->errmsg : "no job";
}

int job_fail(anonkit_job *job)
{
    ak_err_format(&job->err, job->errmsg, sizeof job->errmsg);
    job_tables_name_spools(job); /* a table's private CSV copy is named as the table */
    return job->err.code ? job->err.code : ANONKIT_E_INTERNAL;
}

int job_usage_error(anonkit_job *job, const char *fmt, ...)
{
    char msg[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    ak_err_set(&job->err, ANONKIT_E_USAGE, NULL, 0, 0, "%s", msg);
    return job_fail(job);
}

int job_out_of_memory(anonkit_job *job)
{
    ak_err_nomem(&job->err);
    return job_fail(job);
}

/* A path from a job file, taken relative to the job file's folder. */
static int resolve_path(const char *job_path, const char *value, char *out, size_t size)
{
    const char *slash = strrchr(job_path, '/');
    int n;
    if (value[0] == '/' || !slash || !strcmp(value, "-")) n = snprintf(out, size, "%s", value);
    else n = snprintf(out, size, "%.*s/%s", (int)(slash - job_path), job_path, value);
    return n < 0 || (size_t)n >= size ? -1 : 0;
}

/* resolve_path for the file of an ATTR=PATH setting (a hierarchy); the word
 * "auto" (--hierarchy COL=auto, a hierarchy built from the data) stays as it is. */
static int resolve_hierarchy(const char *job_path, const char *value, char *out, size_t size)
{
    if (!strcmp(value, "auto")) return snprintf(out, size, "auto") < (int)size ? 0 : -1;
    return resolve_path(job_path, value, out, size);
}

static int job_file_error(anonkit_job *job, const char *path, int line, const char *fmt, const char *what)
{
    char msg[600];
    snprintf(msg, sizeof msg, fmt, what);
    ak_err_set(&job->err, ANONKIT_E_USAGE, path, line > 0 ? line : 0, 0, "%s", msg);
    return job_fail(job);
}

/* Applies one JSON value of a job file to option o. */
static int apply_json_value(anonkit_job *job, const char *path, anonkit_option o, const char *key, json_t *v)
{
    const ak_option_desc *d = ak_option_desc_of(o);
    char text[4096];
    if (json_is_string(v)) {
        const char *s = json_string_value(v);
        if ((d->flags & ANONKIT_OPTF_PATH) && !source_is_uri(s)) { /* a database URI is no path */
            if (resolve_path(path, s, text, sizeof text) != 0) return job_file_error(job, path, 0, "path too long in '%s'", key);
            return anonkit_job_set(job, o, text);
        }
        const char *eq = strchr(s, '=');
        if ((d->flags & AK_OPTF_JSON_PATHS) && eq) {
            /* "attr=path" (a hierarchy given as text, or in an array of them):
             * the path is the job file's, as in the object form */
            char resolved[4096];
            if (resolve_hierarchy(path, eq + 1, resolved, sizeof resolved) != 0)
                return job_file_error(job, path, 0, "path too long in '%s'", key);
            const int n = snprintf(text, sizeof text, "%.*s=%s", (int)(eq - s), s, resolved);
            if (n < 0 || (size_t)n >= sizeof text) return job_file_error(job, path, 0, "path too long in '%s'", key);
            return anonkit_job_set(job, o, text);
        }
        return anonkit_job_set(job, o, s);
    }
    const int names_only = (d->flags & AK_OPTF_JSON_TEXT) != 0;
    if (names_only && !json_is_array(v)) return job_file_error(job, path, 0, "the value of '%s' must be text", key);
    if (json_is_integer(v)) {
        snprintf(text, sizeof text, "%lld", (long long)json_integer_value(v));
        return anonkit_job_set(job, o, text);
    }
    if (json_is_real(v)) {
        snprintf(text, sizeof text, "%.17g", json_real_value(v));
        return anonkit_job_set(job, o, text);
    }
    if (json_is_boolean(v)) return anonkit_job_set(job, o, json_is_true(v) ? "true" : "false");
    if (json_is_array(v)) {
        size_t i;
        json_t *item;
        json_array_foreach(v, i, item) {
            int rc = apply_json_value(job, path, o, key, item);
            if (rc < 0) return rc;
        }
        return ANONKIT_OK;
    }
    if (json_is_object(v) && (d->flags & (AK_OPTF_JSON_PATHS | AK_OPTF_JSON_NUMBERS))) {
        const char *attr;
        json_t *item;
        json_object_foreach(v, attr, item) {
            char resolved[4096];
            if (d->flags & AK_OPTF_JSON_PATHS) {
                if (!json_is_string(item)) return job_file_error(job, path, 0, "hierarchy of '%s' must be a file name", attr);
                if (resolve_hierarchy(path, json_string_value(item), resolved, sizeof resolved) != 0)
                    return job_file_error(job, path, 0, "path too long in '%s'", key);
                int n = snprintf(text, sizeof text, "%s=%s", attr, resolved);
                if (n < 0 || (size_t)n >= sizeof text) return job_file_error(job, path, 0, "path too long in '%s'", key);
            } else {
                if (!json_is_number(item)) return job_file_error(job, path, 0, "weight of '%s' must be a number", attr);
                snprintf(text, sizeof text, "%s=%.17g", attr, json_number_value(item));
            }
            int rc = anonkit_job_set(job, o, text);
            if (rc < 0) return rc;
        }
        return ANONKIT_OK;
    }
    return job_file_error(job, path, 0, "the value of '%s' has the wrong type", key);
}

/* Loads every setting of a JSON job file (ANONKIT_OPT_JOB). */
int job_load_file(anonkit_job *job, const char *path)
{
    if (strlist_push(&job->job_files, path, strlen(path)) != 0) return job_out_of_memory(job);
    json_error_t jerr;
    json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
    /* jansson out of memory: its code says so, or it leaves the text empty */
    if (!root && (json_error_code(&jerr) == json_error_out_of_memory || !jerr.text[0])) {
        ak_err_nomem(&job->err);
        return job_fail(job);
    }
    if (!root) {
        ak_err_set(&job->err, errno == ENOENT && jerr.line < 0 ? ANONKIT_E_IO : ANONKIT_E_USAGE, path,
                   jerr.line > 0 ? jerr.line : 0, jerr.column > 0 ? jerr.column : 0, "%s", jerr.text);
        return job_fail(job);
    }
    int rc = ANONKIT_OK;
    if (!json_is_object(root)) {
        rc = job_file_error(job, path, 1, "a job file holds one JSON object%s", "");
        goto done;
    }
    const char *key;
    json_t *value;
    json_object_foreach(root, key, value) {
        const anonkit_option o = anonkit_option_find(key);
        if (o == ANONKIT_OPT__COUNT || (ak_option_desc_of(o)->flags & AK_OPTF_NOT_IN_FILE)) {
            rc = job_file_error(job, path, 0, "unknown setting '%s'", key);
            goto done;
        }
        if ((rc = apply_json_value(job, path, o, key, value)) < 0) {
            if (!job->err.file[0]) { /* name the job file in messages about its values */
                char msg[sizeof job->err.message];
                snprintf(msg, sizeof msg, "%s", job->err.message);
                ak_err_set(&job->err, job->err.code, path, 0, 0, "%s", msg);
                job_fail(job);
            }
            goto done;
        }
    }
done:
    json_decref(root);
    return rc;
}

int job_table_spec(anonkit_job *job, const char *path, const char *display_name, table_spec *spec,
                   job_spec_storage *storage)
{
    memset(spec, 0, sizeof *spec);
    memset(storage, 0, sizeof *storage);
    spec->parallel_min_bytes = job->parallel_min_bytes;
    spec->loaded = job->loaded_hook;
    spec->loaded_ctx = job->loaded_ctx;
    size_t n = job->qi.count;
    storage->hierarchy_paths = calloc(n ? n : 1, sizeof *storage->hierarchy_paths);
    storage->hierarchy_tables = calloc(n ? n : 1, sizeof *storage->hierarchy_tables);
    storage->force_numeric = calloc(n ? n : 1, 1);
    if (!storage->hierarchy_paths || !storage->hierarchy_tables || !storage->force_numeric) {
        job_spec_free(storage);
        return ak_err_nomem(&job->err);
    }
    for (size_t h = 0; h < job->hierarchy_attrs.count; h++) {
        size_t q = 0;
        while (q < n && strcmp(job->qi.items[q], job->hierarchy_attrs.items[h]) != 0) q++;
        if (q == n && job->sensitive && !strcmp(job->sensitive, job->hierarchy_attrs.items[h])) continue;
        if (q == n) {
            job_spec_free(storage);
            return ak_err_set(&job->err, ANONKIT_E_USAGE, NULL, 0, 0,
                              "--hierarchy given for '%s', which is not a quasi-identifier (--qi)",
                              job->hierarchy_attrs.items[h]);
        }
        storage->hierarchy_paths[q] = job->hierarchy_paths.items[h];
        storage->hierarchy_tables[q] = job_tables_hierarchy(job, job->hierarchy_paths.items[h]); /* api/tables.h */
    }
    for (size_t i = 0; i < job->numeric.count; i++) {
        size_t q = 0;
        while (q < n && strcmp(job->qi.items[q], job->numeric.items[i]) != 0) q++;
        if (q == n) {
            job_spec_free(storage);
            return ak_err_set(&job->err, ANONKIT_E_USAGE, NULL, 0, 0,
                              "--numeric names '%s', which is not a quasi-identifier (--qi)", job->numeric.items[i]);
        }
        storage->force_numeric[q] = 1;
    }
    spec->path = path;
    spec->display_name = display_name;
    spec->delimiter = job->delimiter;
    spec->nqi = n;
    spec->qi_names = (const char *const *)job->qi.items;
    spec->hierarchy_paths = storage->hierarchy_paths;
    spec->hierarchy_tables = storage->hierarchy_tables;
    spec->force_numeric = storage->force_numeric;
    spec->sensitive_name = job->sensitive;
    spec->sensitive_numeric = job->model.variance > 0;
    spec->class_name = job->class_name;
    spec->target_name = job->target_name;
    spec->nidentifiers = job->identifiers.count;
    spec->identifier_names = (const char *const *)job->identifiers.items;
    spec->missing = (const char *const *)job->missing.items;
    spec->nmissing = job->missing.count;
    spec->interval_format = job->interval_format;
    return ANONKIT_OK;
}

void job_spec_free(job_spec_storage *storage)
{
    free(storage->hierarchy_paths);
    free(storage->hierarchy_tables);
    free(storage->force_numeric);
    storage->hierarchy_paths = NULL;
    storage->hierarchy_tables = NULL;
    storage->force_numeric = NULL;
}

int job_weights(anonkit_job *job, double **out)
{
    *out = NULL;
    if (!job->weight_attrs.count) return ANONKIT_OK;
    double *w = malloc((job->qi.count ? job->qi.count : 1) * sizeof *w);
    if (!w) return ak_err_nomem(&job->err);
    for (size_t q = 0; q < job->qi.count; q++) w[q] = 1.0;
    for (size_t i = 0; i < job->weight_attrs.count; i++) {
        size_t q = 0;
        while (q < job->qi.count && strcmp(job->qi.items[q], job->weight_attrs.items[i]) != 0) q++;
        if (q == job->qi.count) {
            free(w);
            return ak_err_set(&job->err, ANONKIT_E_USAGE, NULL, 0, 0,
                              "--weights names '%s', which is not a quasi-identifier (--qi)", job->weight_attrs.items[i]);
        }
        w[q] = job->weight_values[i];
    }
    *out = w;
    return ANONKIT_OK;
}

const char *job_sensitive_hierarchy(const anonkit_job *job)
{
    const char *path = NULL;
    for (size_t h = 0; job->sensitive && h < job->hierarchy_attrs.count; h++)
        if (!strcmp(job->hierarchy_attrs.items[h], job->sensitive)) path = job->hierarchy_paths.items[h];
    return path;
}

int job_check_dist(anonkit_job *job)
{
    model_dist *d = &job->model.dist;
    d->hierarchy = job_sensitive_hierarchy(job);
    if (!model_dist_any(d)) return ANONKIT_OK;
    /* the model reads the sensitive column's hierarchy as a file: a table's private copy (api/tables.h) */
    if (job_tables_is_hierarchy(job, d->hierarchy) && job_tables_hierarchy_file(job, d->hierarchy, &d->hierarchy) < 0)
        return job->err.code ? job->err.code : ANONKIT_E_INTERNAL;
    const char *which = d->t >= 0 ? "--t" : d->delta > 0 ? "--delta-disclosure" : "--beta";
    if (!job->sensitive) return job_usage_error(job, "%s needs a sensitive column (--sensitive)", which);
    if (d->t >= 0 && d->t_distance == MODEL_T_HIERARCHICAL && !d->hierarchy)
        return job_usage_error(job, "--t-distance hierarchical needs a hierarchy for sensitive column '%s' "
                               "(--hierarchy %s=FILE)", job->sensitive, job->sensitive);
    return ANONKIT_OK;
}
