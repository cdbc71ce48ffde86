/* hierarchy.c — anonkit_hierarchy: `anonkit hierarchy`, a generalization
 * hierarchy built from a column's distinct values (core/hierbuild.h,
 * docs/hierarchies.md), written in ARX format through the atomic output file,
 * or previewed as level sizes. */
#include <errno.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/job.h"
#include "api/tables.h"
#include "api/locale.h"
#include "api/result.h"
#include "common/parallel.h"
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

/* The summary of one built hierarchy from its level sizes (sizes[0..width)). */
static int summarize(anonkit_job *job, const hb_rows *rows, const uint64_t *sizes, const hb_values *v, char **out)
{
    int rc = ANONKIT_OK;
    strbuf b = {0};
    char line[160];
    int n = snprintf(line, sizeof line, "hierarchy of '%s': %u leaves, %u levels above them;", job->hbuild.column,
                     rows->nrows, rows->width - 1);
    if (strbuf_append(&b, line, (size_t)n) != 0) rc = ak_err_nomem(&job->err);
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
    if (rc < 0) {
        strbuf_free(&b);
        return rc;
    }
    *out = b.data;
    return ANONKIT_OK;
}

/* One hierarchy of a run: its job, builder, values read, output file and summary. */
typedef struct hier_task {
    anonkit_job *job;
    hb_options o;
    build_storage s;
    hb_values v;
    outfile of;
    char *summary;
    uint64_t rows_read;
} hier_task;

/* The job's own settings checked and its builder's options parsed (errors on the job). */
static int task_prepare(hier_task *t)
{
    anonkit_job *job = t->job;
    ak_err_clear(&job->err);
    if (!job->input) return job_usage_error(job, "no input file given");
    if (!job->hbuild.column) return job_usage_error(job, "no column given (--column COL)");
    if (!job->output && !job->hbuild.preview)
        return job_usage_error(job, "no output file given (-o FILE, or - for stdout), or --preview");
    return options_of_job(job, &t->o, &t->s);
}

/* From this many rows a hierarchy's check and its writing run at the same
 * time, on two threads (check_write), when the run has two: both only read
 * the rows, and a written temporary whose check fails is never published. */
#define HIER_SPLIT_ROWS ((uint32_t)1 << 17)

/* The memory a thread's builds pass on from one hierarchy to the next (the
 * rows, the check's arrays): not allocated and freed, their fresh pages
 * zeroed by the system, for each. */
typedef struct build_mem {
    hb_rows rows;
    hb_check_mem check;
} build_mem;

/* The check or the writing of one hierarchy (check_write's parts). */
typedef struct check_write_part {
    const hb_rows *rows;
    hier_task *t;
    uint64_t *sizes;
    hb_check_mem *mem; /* the check's */
    int write; /* 0: the check (with the level sizes), 1: the writing */
    int rc;
    ak_error err;
} check_write_part;

/* Runs one part (ak_run_parts). */
static void *check_write_run(void *arg)
{
    check_write_part *p = arg;
    ak_err_clear(&p->err);
    p->rc = p->write ? hb_write(p->rows, p->t->of.stream, p->t->job->output, &p->err)
                     : hb_check_sizes_mem(p->rows, p->t->job->output, p->sizes, p->mem, &p->err);
    return NULL;
}

/* The error on job of a built hierarchy whose check failed with rc and e:
 * running out of memory as such, anything else as a hierarchy that does not
 * load (a defect of the builder). */
static int check_failed(anonkit_job *job, int rc, const ak_error *e)
{
    job->err = *e;
    if (rc == ANONKIT_E_NOMEM) return rc;
    return ak_err_set(&job->err, ANONKIT_E_INTERNAL, NULL, 0, 0, "the built hierarchy does not load: %s", e->message);
}

/* hb_check_sizes, then hb_write of the rows; with threads >= 2 and a large
 * hierarchy both at once. The error is the one the two in turn would give:
 * the check's first. */
static int check_write(hier_task *t, const hb_rows *rows, uint64_t *sizes, hb_check_mem *mem, unsigned threads)
{
    anonkit_job *job = t->job;
    if (threads < 2 || rows->nrows < HIER_SPLIT_ROWS) {
        ak_error e;
        ak_err_clear(&e);
        const int rc = hb_check_sizes_mem(rows, job->output, sizes, mem, &e);
        if (rc < 0) return check_failed(job, rc, &e);
        return hb_write(rows, t->of.stream, job->output, &job->err);
    }
    check_write_part parts[2] = {{rows, t, sizes, mem, 0, 0, {0}}, {rows, t, sizes, mem, 1, 0, {0}}};
    ak_run_parts(parts, sizeof parts[0], 2, check_write_run);
    if (parts[0].rc < 0) return check_failed(job, parts[0].rc, &parts[0].err);
    if (parts[1].rc < 0) job->err = parts[1].err;
    return parts[1].rc;
}

/* Builds task t's hierarchy from its values, checks it and writes it to its
 * output's temporary (not yet committed), or previews it; its summary into
 * t->summary. Errors on t's job. With threads >= 2, a large hierarchy's
 * check and writing run at the same time (check_write). */
static int task_build(hier_task *t, unsigned threads, build_mem *mem)
{
    anonkit_job *job = t->job;
    hb_rows *const rows = &mem->rows;
    int rc = hb_build_into(&t->v, &t->o, rows, &job->err);
    if (rc < 0) return rc;
    uint64_t *sizes = calloc(rows->width, sizeof *sizes);
    if (!sizes) rc = ak_err_nomem(&job->err);
    if (rc == 0 && !job->hbuild.preview) {
        /* what is written must load: the rows checked against the loader's rules, once (which
         * counts the labels of each level too); the file is published only when it passes */
        rc = check_write(t, rows, sizes, &mem->check, threads);
        if (rc == 0) outfile_ready(&t->of); /* its writing to disk started while the next ones are built */
    } else if (rc == 0) {
        rc = hb_level_sizes(rows, sizes, &job->err);
    }
    if (rc == 0) rc = summarize(job, rows, sizes, &t->v, &t->summary);
    t->rows_read = t->v.rows;
    free(sizes);
    return rc; /* (the rows' arrays kept in mem for the next build) */
}

/* Below this size a second thread costs more than it saves (its start, its
 * own read of the header, the merge); from there the file is cut in two
 * byte ranges (hb_collect_columns_threads). Adult's nine hierarchies (2.5 MB)
 * took 27.9M instructions on one thread, 14.6M and 13.5M on two. */
#define HIER_THREADS_MIN_BYTES ((off_t)1 << 20)

/* The threads a run of job may use: --threads, else one per online core
 * unless the input is a file smaller than HIER_THREADS_MIN_BYTES; at most
 * two (the file's two byte ranges, the builds shared). */
static unsigned run_threads(const anonkit_job *job)
{
    long t = job->threads;
    if (t == 0) {
        struct stat st;
        if (job->input && stat(job->input, &st) == 0 && S_ISREG(st.st_mode) && st.st_size < HIER_THREADS_MIN_BYTES)
            return 1;
        t = sysconf(_SC_NPROCESSORS_ONLN);
    }
    return t >= 2 ? 2 : 1;
}

/* The builds shared by the threads: each takes the next task not yet taken
 * (in order, so that a thread that read the cheaper columns builds more);
 * after a failure no more are taken. */
typedef struct build_queue {
    hier_task *t;
    size_t n;
    unsigned threads; /* the run's (task_build's check and writing of a large hierarchy at once) */
    atomic_size_t next;
    atomic_int stop;
} build_queue;

/* One thread's builds from the queue; its first failure's task in
 * failed_at (else n) and status in rc. */
typedef struct build_part {
    build_queue *q;
    size_t failed_at;
    int rc;
} build_part;

/* Builds, checks and writes tasks taken from the queue (ak_run_parts).
 * Tasks are taken in order, so every task before a failed one was taken
 * and finishes: the lowest failure is the one a single thread meets. One
 * thread's builds share their memory (build_mem), freed at its end. */
static void *build_part_run(void *arg)
{
    build_part *p = arg;
    build_queue *q = p->q;
    p->rc = ANONKIT_OK;
    p->failed_at = q->n;
    build_mem mem = {0};
    while (!atomic_load(&q->stop)) {
        const size_t i = atomic_fetch_add(&q->next, 1);
        if (i >= q->n) break;
        p->rc = task_build(&q->t[i], q->threads, &mem);
        hb_values_free(&q->t[i].v); /* (no longer needed: the next column's build has the memory) */
        if (p->rc < 0) {
            p->failed_at = i;
            atomic_store(&q->stop, 1);
            break;
        }
    }
    hb_rows_free(&mem.rows);
    hb_check_mem_free(&mem.check);
    return NULL;
}

/* The hierarchies of jobs[0..n) from one read of their common input, all
 * committed together or none (anonkit_hierarchies); n == 1 is
 * anonkit_hierarchy. With several, an error is reported on jobs[0], naming
 * the column it concerns. */
static int build(anonkit_job *const *jobs, size_t n, anonkit_result **out_results)
{
    for (size_t i = 0; i < n; i++) out_results[i] = NULL;
    hier_task *t = calloc(n ? n : 1, sizeof *t);
    const char **columns = calloc(n ? n : 1, sizeof *columns);
    int *presence = calloc(n ? n : 1, sizeof *presence);
    hb_missing *missing = calloc(n ? n : 1, sizeof *missing);
    outfile **files = calloc(n ? n : 1, sizeof *files);
    anonkit_job *const first = jobs[0];
    anonkit_job *failed = NULL; /* the job of the column the error concerns; NULL: all (on jobs[0]) */
    const unsigned threads = run_threads(jobs[0]); /* (the collection's; the builds' at most n) */
    int rc = ANONKIT_OK;
    ak_err_clear(&first->err);
    if (!t || !columns || !presence || !missing || !files) rc = ak_err_nomem(&first->err);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        t[i].job = jobs[i];
        if ((rc = task_prepare(&t[i])) < 0) failed = jobs[i];
    }
    for (size_t i = 1; rc == 0 && i < n; i++) { /* one read: one file, one delimiter */
        const anonkit_job *a = jobs[i];
        failed = jobs[i];
        if (strcmp(a->input, first->input) != 0)
            rc = job_usage_error(jobs[i], "every column is read from one file: '%s', not also '%s'", first->input,
                                 a->input);
        else if (a->delimiter != first->delimiter)
            rc = job_usage_error(jobs[i], "every column is read with one --delimiter ('%c', not also '%c')",
                                 first->delimiter, a->delimiter);
        struct stat st; /* (a device such as /dev/null may be given to several) */
        const int device = a->output && stat(a->output, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
        for (size_t k = 0; rc == 0 && k < i && a->output && !device; k++)
            if (jobs[k]->output && strcmp(jobs[k]->output, a->output) == 0)
                rc = job_usage_error(jobs[i], "the hierarchies of '%s' and '%s' are both given the output '%s'",
                                     jobs[k]->hbuild.column, a->hbuild.column, a->output);
    }
    for (size_t i = 0; rc == 0 && n > 1 && i < n; i++)
        if (jobs[i]->output && !strcmp(jobs[i]->output, "-")) {
            failed = jobs[i];
            rc = job_usage_error(jobs[i], "-o -: several hierarchies are written to files, each its own");
        }
    /* every output created now, so that an unwritable one fails before any work */
    for (size_t i = 0; rc == 0 && i < n; i++) {
        failed = jobs[i];
        if (!jobs[i]->hbuild.preview) {
            if ((rc = outfile_open(&t[i].of, jobs[i]->output, &jobs[i]->err)) == 0) files[i] = &t[i].of;
        }
        columns[i] = jobs[i]->hbuild.column;
        presence[i] = t[i].o.kind == HB_INTERVAL;
        missing[i] = (hb_missing){(const char *const *)jobs[i]->missing.items, jobs[i]->missing.count};
    }
    if (rc == 0) {
        failed = NULL;
        hb_values *vs = calloc(n, sizeof *vs);
        if (!vs) rc = ak_err_nomem(&first->err);
        else rc = hb_collect_columns_threads(vs, n, columns, presence, missing, first->input,
                                             strcmp(first->input, "-") ? first->input : "stdin", first->delimiter,
                                             threads, &first->err);
        for (size_t i = 0; rc == 0 && i < n; i++) t[i].v = vs[i];
        free(vs);
    }
    if (rc == 0) { /* the builds on up to two threads (each its own job, error and output), each taking the next
                      task; the failure of the lowest task is the one reported, as one thread would have */
        build_queue q = {.t = t, .n = n, .threads = threads};
        atomic_init(&q.next, 0);
        atomic_init(&q.stop, 0);
        build_part parts[2] = {{&q, n, 0}, {&q, n, 0}};
        ak_run_parts(parts, sizeof parts[0], n > 1 ? threads : 1, build_part_run);
        size_t lowest = n;
        for (unsigned k = 0; k < threads && k < n; k++)
            if (parts[k].rc < 0 && parts[k].failed_at < lowest) {
                lowest = parts[k].failed_at;
                rc = parts[k].rc;
                failed = jobs[lowest];
            }
    }
    for (size_t i = 0; rc == 0 && i < n; i++) { /* the results made before the commit: nothing fails after it */
        anonkit_result *r = result_new();
        if (!r) {
            failed = NULL;
            rc = ak_err_nomem(&first->err);
            break;
        }
        r->rows_read = t[i].rows_read;
        r->summary = t[i].summary;
        t[i].summary = NULL;
        out_results[i] = r;
    }
    if (rc == 0) {
        failed = NULL;
        rc = outfile_commit_all(files, n, first->threads, &first->err);
    }
    if (rc < 0) {
        for (size_t i = 0; t && i < n; i++) outfile_abort(&t[i].of);
        if (failed && n > 1) { /* one column's error, named, on the first job */
            char msg[sizeof first->err.message];
            snprintf(msg, sizeof msg, "%s", failed->err.message);
            first->err = failed->err;
            snprintf(first->err.message, sizeof first->err.message, "column '%s': %.900s",
                     failed->hbuild.column ? failed->hbuild.column : "?", msg);
            if (failed != first) job_fail(failed);
        }
        rc = job_fail(first);
    }
    for (size_t i = 0; t && i < n; i++) {
        hb_values_free(&t[i].v);
        storage_free(&t[i].s);
        free(t[i].summary);
    }
    if (rc < 0)
        for (size_t i = 0; i < n; i++) {
            anonkit_result_free(out_results[i]);
            out_results[i] = NULL;
        }
    free(t);
    free(columns);
    free(presence);
    free(missing);
    free(files);
    return rc;
}

int anonkit_hierarchy(anonkit_job *job, anonkit_result **out_result)
{
    ak_c_numeric scope;
    ak_c_numeric_enter(&scope);
    anonkit_result *result = NULL;
    char *saved = NULL; /* an input table is read as its private CSV copy (api/tables.h) */
    int rc = job && job_tables_input_file(job, &saved) < 0 ? job->err.code ? job->err.code : ANONKIT_E_INTERNAL : ANONKIT_OK;
    if (rc == ANONKIT_OK) rc = build(&job, 1, &result);
    if (job) job_tables_input_restore(job, saved);
    result_hand_over(result, out_result);
    ak_c_numeric_leave(&scope);
    return rc;
}

int anonkit_hierarchies(anonkit_job *const *jobs, size_t count, anonkit_result **out_results)
{
    if (!jobs || !count || !out_results) return ANONKIT_E_USAGE;
    ak_c_numeric scope;
    ak_c_numeric_enter(&scope);
    const int rc = build(jobs, count, out_results);
    for (size_t i = 0; i < count; i++) {
        anonkit_result *r = out_results[i];
        result_hand_over(r, &out_results[i]);
    }
    ak_c_numeric_leave(&scope);
    return rc;
}
