/* tables.c (api) — the job side of the table API (include/anonkit/anonkit.h,
 * docs/python.md): the job's input table is borrowed and named "table:" in
 * job->input; anonymize, recode and check read it directly (the CSV reader's
 * table backend, io/csv.h) and build their output tables without CSV text,
 * while a run that reads its input as a file gets a private unnamed CSV copy
 * made for it (job_tables_input_file, the way a database source is spooled,
 * io/source.h). A hierarchy table is copied into the job (job_hier_table),
 * loaded from memory through table_spec.hierarchy_tables, and spooled only
 * for runs that read hierarchies as files; previous-release tables are
 * spooled during the call that takes them. A table output built by a run, or loaded
 * by the "table:" sink (io/memtable.c), reaches the result. */
#define _GNU_SOURCE
#include "api/tables.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/job.h"
#include "api/result.h"
#include "io/memtable.h"

/* job->tables, created on first use; NULL when out of memory. */
static struct job_tables *tables_of(anonkit_job *job)
{
    if (!job->tables) job->tables = calloc(1, sizeof *job->tables);
    return job->tables;
}

void job_tables_free(anonkit_job *job)
{
    struct job_tables *jt = job->tables;
    if (!jt) return;
    for (size_t i = 0; i < jt->count; i++) {
        spool_remove(&jt->spools[i]->sp);
        free(jt->spools[i]);
    }
    free(jt->spools);
    for (size_t i = 0; i < jt->nhier; i++) {
        free(jt->hier[i].name);
        anonkit_table_free(jt->hier[i].table);
    }
    free(jt->hier);
    free(jt->hier_saved);
    anonkit_table_free(jt->output);
    free(jt);
    job->tables = NULL;
}

/* Writes table into a new spool of the job (CSV with `delimiter`, a header
 * when `header`) and sets *path to where readers open it. */
static int spool_table(anonkit_job *job, const anonkit_table *table, char delimiter, int header, const char *shown,
                       const char **path)
{
    if (!table) return job_usage_error(job, "%s: no table", shown);
    struct job_tables *jt = tables_of(job);
    job_table_spool *ts = jt ? calloc(1, sizeof *ts) : NULL;
    job_table_spool **grown = ts ? realloc(jt->spools, (jt->count + 1) * sizeof *grown) : NULL;
    if (!grown) {
        free(ts);
        return job_out_of_memory(job);
    }
    jt->spools = grown;
    ts->shown = shown;
    ak_error *err = &job->err;
    int rc = spool_open_empty(&ts->sp, job->tmpdir, err);
    FILE *f = NULL;
    if (rc == ANONKIT_OK) {
        const int fd = dup(ts->sp.fd);
        if (fd < 0 || !(f = fdopen(fd, "w"))) {
            rc = ak_err_set(err, ANONKIT_E_IO, shown, 0, 0, "cannot write its private copy: %s", strerror(errno));
            if (fd >= 0) close(fd);
        }
    }
    if (rc == ANONKIT_OK) rc = memtable_write_csv(table, f, delimiter, header, shown, err);
    if (f && fclose(f) != 0 && rc == ANONKIT_OK)
        rc = ak_err_set(err, ANONKIT_E_IO, shown, 0, 0, "cannot write its private copy: %s", strerror(errno));
    if (rc < 0) {
        spool_remove(&ts->sp);
        free(ts);
        return job_fail(job);
    }
    jt->spools[jt->count++] = ts;
    *path = ts->sp.path;
    return ANONKIT_OK;
}

/* Sets the text option `field` to a copy of value. */
static int set_text(anonkit_job *job, char **field, const char *value)
{
    char *copy = strdup(value);
    if (!copy) return job_out_of_memory(job);
    free(*field);
    *field = copy;
    return ANONKIT_OK;
}

int anonkit_job_set_input_table(anonkit_job *job, const anonkit_table *table)
{
    if (!job) return ANONKIT_E_USAGE;
    if (!table) return job_usage_error(job, "the input table: no table");
    struct job_tables *jt = tables_of(job);
    if (!jt) return job_out_of_memory(job);
    AK_CHECK(set_text(job, &job->input, JOB_TABLE_INPUT));
    jt->input = table; /* borrowed: read by each run (anonkit.h, Lifetime) */
    jt->input_spool = NULL;
    return ANONKIT_OK;
}

const anonkit_table *job_tables_input(const anonkit_job *job)
{
    if (!job->tables || !job->tables->input || !job->input || strcmp(job->input, JOB_TABLE_INPUT)) return NULL;
    return job->tables->input;
}

static job_hier_table *hier_named(const anonkit_job *job, const char *name)
{
    if (!job->tables || !name || strncmp(name, JOB_TABLE_INPUT, strlen(JOB_TABLE_INPUT))) return NULL;
    for (size_t i = 0; i < job->tables->nhier; i++)
        if (!strcmp(job->tables->hier[i].name, name)) return &job->tables->hier[i];
    return NULL;
}

const anonkit_table *job_tables_hierarchy(const anonkit_job *job, const char *name)
{
    const job_hier_table *ht = hier_named(job, name);
    return ht ? ht->table : NULL;
}

int job_tables_is_hierarchy(const anonkit_job *job, const char *name) { return hier_named(job, name) != NULL; }

int job_tables_hierarchy_file(anonkit_job *job, const char *name, const char **path)
{
    job_hier_table *ht = hier_named(job, name);
    if (!ht) return job_usage_error(job, "no hierarchy table named '%s'", name ? name : "");
    if (!ht->spool) AK_CHECK(spool_table(job, ht->table, ';', 0, ht->name, &ht->spool)); /* ';'-separated */
    *path = ht->spool;
    return ANONKIT_OK;
}

/* Replaces each hierarchy table's name in job->hierarchy_paths by the path
 * of its private copy (made once), saving the names in jt->hier_saved. */
static int hierarchy_files(anonkit_job *job)
{
    struct job_tables *jt = job->tables;
    const size_t n = job->hierarchy_paths.count;
    if (!jt || !jt->nhier || !n || jt->hier_saved) return ANONKIT_OK;
    if (!(jt->hier_saved = calloc(n, sizeof *jt->hier_saved))) return job_out_of_memory(job);
    jt->nsaved = n;
    for (size_t i = 0; i < n; i++) {
        job_hier_table *ht = hier_named(job, job->hierarchy_paths.items[i]);
        if (!ht) continue;
        const char *spool;
        AK_CHECK(job_tables_hierarchy_file(job, ht->name, &spool));
        char *path = strdup(spool);
        if (!path) return job_out_of_memory(job);
        jt->hier_saved[i] = job->hierarchy_paths.items[i];
        job->hierarchy_paths.items[i] = path;
    }
    return ANONKIT_OK;
}

int job_tables_input_file(anonkit_job *job, char **saved)
{
    *saved = NULL;
    AK_CHECK(hierarchy_files(job));
    const anonkit_table *t = job_tables_input(job);
    if (!t) return ANONKIT_OK;
    struct job_tables *jt = job->tables;
    if (!jt->input_spool)
        AK_CHECK(spool_table(job, t, job->delimiter ? job->delimiter : ',', 1, "the input table", &jt->input_spool));
    char *path = strdup(jt->input_spool);
    if (!path) return job_out_of_memory(job);
    *saved = job->input;
    job->input = path;
    return ANONKIT_OK;
}

void job_tables_input_restore(anonkit_job *job, char *saved)
{
    struct job_tables *jt = job->tables;
    if (jt && jt->hier_saved) {
        for (size_t i = 0; i < jt->nsaved && i < job->hierarchy_paths.count; i++)
            if (jt->hier_saved[i]) {
                free(job->hierarchy_paths.items[i]);
                job->hierarchy_paths.items[i] = jt->hier_saved[i];
            }
        free(jt->hier_saved);
        jt->hier_saved = NULL;
        jt->nsaved = 0;
    }
    if (!saved) return;
    free(job->input);
    job->input = saved;
}

int anonkit_job_set_hierarchy_table(anonkit_job *job, const char *column, const anonkit_table *table)
{
    if (!job) return ANONKIT_E_USAGE;
    if (!column || !*column) return job_usage_error(job, "a hierarchy table needs its column's name");
    if (!table) return job_usage_error(job, "a hierarchy table: no table");
    struct job_tables *jt = tables_of(job);
    if (!jt) return job_out_of_memory(job);
    const size_t n = strlen(JOB_TABLE_INPUT "hierarchy:") + strlen(column) + 1;
    char *name = malloc(n);
    if (!name) return job_out_of_memory(job);
    snprintf(name, n, "%s%s", JOB_TABLE_INPUT "hierarchy:", column);
    anonkit_table *copy = NULL; /* read after the call (the caller may free its table) */
    int rc = memtable_copy(&copy, table);
    if (rc < 0) {
        free(name);
        return rc == ANONKIT_E_NOMEM ? job_out_of_memory(job) : job_usage_error(job, "a hierarchy table: %s",
                                                                                  anonkit_table_errmsg(table));
    }
    job_hier_table *ht = hier_named(job, name);
    if (!ht) {
        job_hier_table *grown = realloc(jt->hier, (jt->nhier + 1) * sizeof *grown);
        if (!grown) {
            free(name);
            anonkit_table_free(copy);
            return job_out_of_memory(job);
        }
        jt->hier = grown;
        ht = &jt->hier[jt->nhier++];
        *ht = (job_hier_table){name, NULL, NULL};
    } else {
        free(name);
        /* a spool made of the former table stays in spools (freed with the job) but is no longer this one's */
        ht->spool = NULL;
    }
    anonkit_table_free(ht->table);
    ht->table = copy;
    const size_t m = strlen(column) + strlen(ht->name) + 2;
    char *spec = malloc(m);
    if (!spec) return job_out_of_memory(job);
    snprintf(spec, m, "%s=%s", column, ht->name);
    rc = anonkit_job_set(job, ANONKIT_OPT_HIERARCHY, spec);
    free(spec);
    return rc;
}

int anonkit_job_add_previous_table(anonkit_job *job, const anonkit_table *table)
{
    if (!job) return ANONKIT_E_USAGE;
    const char *path;
    AK_CHECK(spool_table(job, table, job->delimiter ? job->delimiter : ',', 1, "a previous release table", &path));
    return anonkit_job_set(job, ANONKIT_OPT_PREVIOUS, path);
}

int anonkit_job_set_output_table(anonkit_job *job)
{
    if (!job) return ANONKIT_E_USAGE;
    if (!tables_of(job)) return job_out_of_memory(job);
    return set_text(job, &job->output, "table:");
}

int anonkit_metrics_table(anonkit_job *job, const anonkit_table *original, const anonkit_table *published,
                          anonkit_result **out_result)
{
    if (out_result) *out_result = NULL;
    if (!job) return ANONKIT_E_USAGE;
    if (!original || !published)
        return job_usage_error(job, "%s: no table", original ? "the published table" : "the original table");
    return job_metrics_tables(job, original, published, out_result);
}

void job_tables_reset_output(anonkit_job *job)
{
    if (!job || !job->tables) return;
    anonkit_table_free(job->tables->output);
    job->tables->output = NULL;
}

void job_tables_hand_output(anonkit_job *job, anonkit_result *result)
{
    if (!job || !job->tables || !job->tables->output) return;
    if (result) {
        anonkit_table_free(result->table);
        result->table = job->tables->output;
    } else {
        anonkit_table_free(job->tables->output);
    }
    job->tables->output = NULL;
}

void job_tables_name_spools(anonkit_job *job)
{
    if (!job->tables) return;
    for (size_t i = 0; i < job->tables->count; i++) {
        const char *path = job->tables->spools[i]->sp.path, *shown = job->tables->spools[i]->shown;
        const size_t plen = strlen(path), slen = strlen(shown);
        char *at = job->errmsg;
        while ((at = strstr(at, path)) != NULL) {
            if (at[plen] >= '0' && at[plen] <= '9') { /* /proc/self/fd/1 inside /proc/self/fd/12 */
                at += plen;
                continue;
            }
            const size_t tail = strlen(at + plen) + 1;
            if ((size_t)(at - job->errmsg) + slen + tail > sizeof job->errmsg) break;
            memmove(at + slen, at + plen, tail);
            memcpy(at, shown, slen);
            at += slen;
        }
    }
}

const anonkit_table *anonkit_result_table(const anonkit_result *result) { return result ? result->table : NULL; }

anonkit_table *anonkit_result_take_table(anonkit_result *result)
{
    if (!result) return NULL;
    anonkit_table *t = result->table;
    result->table = NULL;
    return t;
}
