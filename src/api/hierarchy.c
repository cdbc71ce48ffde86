/* hierarchy.c — anonkit_hierarchy: `anonkit hierarchy`, a generalization
 * hierarchy built from a column's distinct values (core/hierbuild.h,
 * docs/hierarchies.md), written in ARX format through the atomic output file,
 * or previewed as level sizes. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/job.h"
#include "api/tables.h"
#include "api/locale.h"
#include "api/result.h"
#include "core/hierbuild.h"
#include "io/outfile.h"

/* Parses a comma list of whole numbers >= 1 from `text` (option `name`). */
static int parse_counts(anonkit_job *job, const char *name, const char *text, uint32_t **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    size_t cap = 0;
    const char *p = text;
    for (;;) {
        char *end;
        errno = 0;
        if (*p < '0' || *p > '9') goto bad;
        unsigned long v = strtoul(p, &end, 10);
        if (errno || v == 0 || v > UINT32_MAX || (*end && *end != ',')) goto bad;
        if (ak_reserve((void **)out, &cap, *n + 1, sizeof **out) != 0) {
            free(*out);
            *out = NULL;
            return job_out_of_memory(job);
        }
        (*out)[(*n)++] = (uint32_t)v;
        if (!*end) return ANONKIT_OK;
        p = end + 1;
    }
bad:
    free(*out);
    *out = NULL;
    return job_usage_error(job, "--%s: expected whole numbers above 0 separated by commas, not '%s'", name, text);
}

/* A finite number from option `name`. */
static int parse_number(anonkit_job *job, const char *name, const char *text, double *out)
{
    char *end;
    errno = 0;
    *out = strtod(text, &end);
    if (!*text || *end || errno || !isfinite(*out))
        return job_usage_error(job, "--%s: expected a number, not '%s'", name, text);
    return ANONKIT_OK;
}

/* Splits a comma list into a strlist (empty items refused). */
static int split_list(anonkit_job *job, const char *name, const char *text, strlist *out)
{
    const char *p = text;
    for (;;) {
        const char *end = strchr(p, ',');
        const size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == 0) return job_usage_error(job, "--%s: empty item in '%s'", name, text);
        if (strlist_push(out, p, len) != 0) return job_out_of_memory(job);
        if (!end) return ANONKIT_OK;
        p = end + 1;
    }
}

/* The builder's settings of the job into o (arrays in the storage given). */
typedef struct build_storage {
    uint32_t *fanout, *quantiles;
    hb_date_level *dates;
    strlist order;
} build_storage;

static void storage_free(build_storage *s)
{
    free(s->fanout);
    free(s->quantiles);
    free(s->dates);
    strlist_free(&s->order);
}

static int options_of_job(anonkit_job *job, hb_options *o, build_storage *s)
{
    const hier_job_options *h = &job->hbuild;
    memset(o, 0, sizeof *o);
    o->style = (ak_interval_style)job->interval_format;
    int chosen = 0;
    if (h->interval) o->kind = HB_INTERVAL, chosen++;
    if (h->quantiles) o->kind = HB_QUANTILES, chosen++;
    if (h->mask) o->kind = HB_MASK, chosen++;
    if (h->date) o->kind = HB_DATE, chosen++;
    if (h->order) o->kind = HB_ORDER, chosen++;
    if (h->flat) o->kind = HB_FLAT, chosen++;
    if (chosen != 1)
        return job_usage_error(job, "%s: choose one builder: --interval W, --quantiles N, --mask, --date LEVELS, "
                                    "--order LIST or --flat",
                               chosen ? "more than one builder given" : "no builder given");
    if (h->fanout && o->kind != HB_INTERVAL && o->kind != HB_ORDER)
        return job_usage_error(job, "--fanout applies to --interval and --order only");
    if ((h->min || h->max) && o->kind != HB_INTERVAL) return job_usage_error(job, "--min and --max apply to --interval only");
    if (h->levels && o->kind != HB_MASK) return job_usage_error(job, "--levels applies to --mask only");
    if (h->interval) AK_CHECK(parse_number(job, "interval", h->interval, &o->width));
    if (h->interval && !(o->width > 0))
        return job_usage_error(job, "--interval: the width must be above 0, not '%s'", h->interval);
    if (h->fanout) {
        AK_CHECK(parse_counts(job, "fanout", h->fanout, &s->fanout, &o->nfanout));
        for (size_t i = 0; i < o->nfanout; i++)
            if (s->fanout[i] < 2)
                return job_usage_error(job, "--fanout: a fan-out of 1 groups nothing; each must be at least 2");
        o->fanout = s->fanout;
    }
    if (h->min) {
        AK_CHECK(parse_number(job, "min", h->min, &o->min));
        o->has_min = 1;
    }
    if (h->max) {
        AK_CHECK(parse_number(job, "max", h->max, &o->max));
        o->has_max = 1;
    }
    if (h->quantiles) {
        AK_CHECK(parse_counts(job, "quantiles", h->quantiles, &s->quantiles, &o->nquantiles));
        o->quantiles = s->quantiles;
    }
    if (h->levels) {
        uint32_t *l;
        size_t n;
        AK_CHECK(parse_counts(job, "levels", h->levels, &l, &n));
        o->levels = l[0];
        free(l);
        if (n != 1) return job_usage_error(job, "--levels: expected one number, not '%s'", h->levels);
    }
    if (h->date) {
        strlist names = {0};
        int rc = split_list(job, "date", h->date, &names);
        if (rc == 0 && !(s->dates = malloc(names.count * sizeof *s->dates))) rc = job_out_of_memory(job);
        for (size_t i = 0; rc == 0 && i < names.count; i++)
            if (hb_parse_date_level(names.items[i], strlen(names.items[i]), &s->dates[i]) != 0)
                rc = job_usage_error(job,
                                     "--date: unknown level '%s' (minute, hour, day, month, quarter, year, decade, "
                                     "century, week)",
                                     names.items[i]);
        o->dates = s->dates;
        o->ndates = names.count;
        strlist_free(&names);
        AK_CHECK(rc);
    }
    if (h->order) {
        AK_CHECK(split_list(job, "order", h->order, &s->order));
        o->order = (const char *const *)s->order.items;
        o->norder = s->order.count;
    }
    return ANONKIT_OK;
}

/* The summary: the builder's level sizes. */
static int summarize(anonkit_job *job, const hb_rows *rows, const hb_values *v, anonkit_result *result)
{
    uint64_t *sizes = calloc(rows->width, sizeof *sizes);
    if (!sizes) return job_out_of_memory(job);
    int rc = hb_level_sizes(rows, sizes, &job->err);
    strbuf b = {0};
    char line[160];
    int n = snprintf(line, sizeof line, "hierarchy of '%s': %u leaves, %u levels above them;", job->hbuild.column,
                     rows->nrows, rows->width - 1);
    if (rc == 0 && strbuf_append(&b, line, (size_t)n) != 0) rc = ak_err_nomem(&job->err);
    for (uint32_t l = 0; rc == 0 && l < rows->width; l++) {
        n = snprintf(line, sizeof line, " level %u: %llu", l, (unsigned long long)sizes[l]);
        if (strbuf_append(&b, line, (size_t)n) != 0) rc = ak_err_nomem(&job->err);
    }
    if (rc == 0 && v->nmissing) {
        n = snprintf(line, sizeof line, "; %llu missing values as the leaf %s", (unsigned long long)v->nmissing,
                     HB_MISSING_LABEL);
        if (strbuf_append(&b, line, (size_t)n) != 0) rc = ak_err_nomem(&job->err);
    }
    if (rc == 0 && strbuf_append(&b, "", 1) != 0) rc = ak_err_nomem(&job->err);
    free(sizes);
    if (rc < 0) {
        strbuf_free(&b);
        return job_fail(job);
    }
    result->summary = b.data;
    return ANONKIT_OK;
}

/* anonkit_hierarchy in the C numeric locale. */
static int build(anonkit_job *job, anonkit_result **out_result)
{
    *out_result = NULL;
    ak_err_clear(&job->err);
    if (!job->input) return job_usage_error(job, "no input file given");
    if (!job->hbuild.column) return job_usage_error(job, "no column given (--column COL)");
    if (!job->output && !job->hbuild.preview)
        return job_usage_error(job, "no output file given (-o FILE, or - for stdout), or --preview");
    hb_options o;
    build_storage s;
    memset(&s, 0, sizeof s);
    int rc = options_of_job(job, &o, &s);
    if (rc < 0) {
        storage_free(&s);
        return rc;
    }
    const hb_missing missing = {(const char *const *)job->missing.items, job->missing.count};
    anonkit_result *result = result_new();
    hb_values v;
    hb_rows rows;
    memset(&v, 0, sizeof v);
    memset(&rows, 0, sizeof rows);
    outfile of;
    memset(&of, 0, sizeof of);
    if (!result) rc = ak_err_nomem(&job->err);
    if (rc == 0 && !job->hbuild.preview) rc = outfile_open(&of, job->output, &job->err);
    if (rc == 0)
        rc = (o.kind == HB_INTERVAL ? hb_collect_presence : hb_collect)(
            &v, job->input, strcmp(job->input, "-") ? job->input : "stdin", job->delimiter, job->hbuild.column, &missing,
            &job->err);
    if (rc == 0) rc = hb_build(&v, &o, &rows, &job->err);
    if (rc == 0 && !job->hbuild.preview) {
        /* what is written must load: the rows checked against the loader's rules, once */
        rc = hb_check(&rows, job->output, &job->err);
        if (rc < 0) rc = ak_err_set(&job->err, ANONKIT_E_INTERNAL, NULL, 0, 0, "the built hierarchy does not load: %s",
                                    job->err.message);
    }
    if (rc == 0 && !job->hbuild.preview) rc = hb_write(&rows, of.stream, job->output, &job->err);
    if (rc == 0 && !job->hbuild.preview) rc = outfile_commit(&of, &job->err);
    if (rc < 0) {
        outfile_abort(&of);
        anonkit_result_free(result);
        result = NULL;
        rc = job_fail(job);
    } else {
        result->rows_read = v.rows;
        rc = summarize(job, &rows, &v, result);
        if (rc < 0) {
            anonkit_result_free(result);
            result = NULL;
        }
    }
    hb_rows_free(&rows);
    hb_values_free(&v);
    storage_free(&s);
    *out_result = result;
    return rc;
}

int anonkit_hierarchy(anonkit_job *job, anonkit_result **out_result)
{
    ak_c_numeric scope;
    ak_c_numeric_enter(&scope);
    anonkit_result *result = NULL;
    char *saved = NULL; /* an input table is read as its private CSV copy (api/tables.h) */
    int rc = job && job_tables_input_file(job, &saved) < 0 ? job->err.code ? job->err.code : ANONKIT_E_INTERNAL : ANONKIT_OK;
    if (rc == ANONKIT_OK) rc = build(job, &result);
    if (job) job_tables_input_restore(job, saved);
    result_hand_over(result, out_result);
    ak_c_numeric_leave(&scope);
    return rc;
}
