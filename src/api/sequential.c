/* sequential.c — anonkit_sequential: the sequential release of [Wang06] end to end.
 * From the job's settings: the releases are read, joined and encoded by
 * src/algo/sequential/releases.c around the loading of the current release T1
 * through table_load, TDS4SA runs (src/algo/sequential/tds.c), and T1 is
 * published through the common writer, with the final cut and the achieved
 * A_Y(X) or L_Y(X) in the report. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "algo/sequential/releases.h"
#include "algo/sequential/tds.h"
#include "api/jsonb.h"
#include "api/job.h"
#include "api/locale.h"
#include "api/paths.h"
#include "api/result.h"
#include "api/tables.h"
#include "api/sources.h"
#include "common/clock.h"
#include "common/rng.h"
#include "core/partition.h"
#include "core/recode.h"
#include "core/table.h"
#include "io/outfile.h"
#include "io/spool.h"
#include "metrics/metrics.h"
#include "publish/publish.h"

#define NONE UINT32_MAX

static int usage(anonkit_job *job, const char *msg, const char *name)
{
    return ak_err_set(&job->err, ANONKIT_E_USAGE, NULL, 0, 0, msg, name);
}

static seq_names names_of(const strlist *l) { return (seq_names){l->items, l->count}; }

static int in_names(const seq_names *l, const char *name)
{
    for (size_t i = 0; i < l->count; i++)
        if (!strcmp(l->items[i], name)) return 1;
    return 0;
}

/* Loads T1 through the common reader with the QIs the releases name (X1,
 * then the raw join attributes), the job's hierarchies of those QIs only (the
 * others belong to earlier releases), and Y of T1 as its sensitive column
 * when it is one attribute. */
static int load_t1(anonkit_job *job, const seq_releases *rel, const char *in_path, const char *display,
                   unsigned threads, job_spec_storage *storage, table **t)
{
    ak_error *err = &job->err;
    const seq_names *qi = seq_t1_qi(rel);
    strlist saved = job->qi, saved_ha = job->hierarchy_attrs, saved_hp = job->hierarchy_paths;
    strlist ha = {calloc(saved_ha.count + 1, sizeof(char *)), 0}, hp = {calloc(saved_ha.count + 1, sizeof(char *)), 0};
    table_spec spec;
    int rc = 0;
    if (!ha.items || !hp.items) rc = ak_err_nomem(err);
    for (size_t i = 0; rc == 0 && i < saved_ha.count; i++)
        if (in_names(qi, saved_ha.items[i])) {
            ha.items[ha.count++] = saved_ha.items[i];
            hp.items[hp.count++] = saved_hp.items[i];
        }
    job->qi = (strlist){qi->items, qi->count};
    job->hierarchy_attrs = ha;
    job->hierarchy_paths = hp;
    if (rc == 0) rc = job_table_spec(job, in_path, display, &spec, storage);
    job->qi = saved;
    job->hierarchy_attrs = saved_ha;
    job->hierarchy_paths = saved_hp;
    free(ha.items);
    free(hp.items);
    if (rc == 0) {
        spec.sensitive_name = seq_t1_sensitive(rel); /* Y of T1 read in the same pass */
        spec.sensitive_numeric = 0;
        spec.threads = threads;
        rc = table_load(t, &spec, err);
    }
    return rc < 0 ? rc : 0;
}

/* The report (JSON) and the summary of a finished run. */
static int describe(anonkit_job *job, const table *t, const tds_result *res, const publish_stats *ps,
                    const partition *part, double secs, char **summary, char **json)
{
    int jfail = 0;
    json_t *root = json_object(), *params = json_object(), *cut = json_object();
    JSET(params, "input", job_json_name(job->input));
    json_t *prev = json_array();
    for (size_t i = 0; i < job->previous.count; i++) JAPPEND(prev, json_string(job->previous.items[i]));
    JSET(params, "previous", prev);
    json_t *xs = json_array(), *ys = json_array();
    for (size_t i = 0; i < job->x_attrs.count; i++) JAPPEND(xs, json_string(job->x_attrs.items[i]));
    for (size_t i = 0; i < job->y_attrs.count; i++) JAPPEND(ys, json_string(job->y_attrs.items[i]));
    JSET(params, "x", xs);
    JSET(params, "y", ys);
    if (job->xy.kind == XY_ANONYMITY) JSET(params, "anonymity", json_integer((json_int_t)job->xy.k));
    else JSET(params, "linkability", json_real(job->xy.p));
    JSET(params, "score", json_string(job->score_distortion ? "distortion" : "entropy"));
    char seed[32];
    snprintf(seed, sizeof seed, "%llu", (unsigned long long)job->seed);
    JSET(params, "seed", json_string(seed));
    JSET(root, "anonkit_version", json_string(ANONKIT_VERSION));
    JSET(root, "parameters", params);
    JSET(root, "rows_read", json_integer((json_int_t)t->nrows));
    JSET(root, "rows_published", json_integer((json_int_t)ps->published));
    JSET(root, "rows_suppressed", json_integer((json_int_t)ps->suppressed));
    JSET(root, "partitions", json_integer((json_int_t)part->nclasses));
    char buf[1024];
    for (size_t i = 0; i < res->ncut; i++) {
        const tds_cut_value *v = &res->cut[i];
        const char *name = t->qi[v->attr].name;
        json_t *a = json_object_get(cut, name);
        if (!a) JSET(cut, name, a = json_array());
        if (v->node != NONE) snprintf(buf, sizeof buf, "%s", hier_node_at(t->qi[v->attr].h, v->node)->label);
        else recode_value(t, v->attr, v->lo, v->hi, buf, sizeof buf);
        JAPPEND(a, json_string(buf));
    }
    JSET(root, "cut", cut);
    const int anon = job->xy.kind == XY_ANONYMITY;
    if (res->empty_join) JSET(root, anon ? "A_Y(X)" : "L_Y(X)", json_null());
    else if (anon) JSET(root, "A_Y(X)", json_integer((json_int_t)(-res->risk)));
    else JSET(root, "L_Y(X)", json_real(res->risk));
    JSET(root, "special_case", json_string(res->special_case));
    JSET(root, "specializations", json_integer((json_int_t)res->specializations));
    JSET(root, "distortion_categorical", json_real(res->distortion_cat));
    JSET(root, "distortion_continuous", json_real(res->distortion_cont));
    double entropy = 0;
    if (t->class_column >= 0) {
        const int rc = metrics_partition_entropy(t, part, &entropy, &job->err);
        if (rc < 0) {
            json_decref(root);
            return rc;
        }
        JSET(root, "conditional_entropy", json_real(entropy));
    }
    JSET(root, "seconds", json_real(secs));
    if (jfail) {
        json_decref(root);
        return ak_err_nomem(&job->err);
    }
    *json = jsonb_dumps(root);
    json_decref(root);
    *summary = malloc(1024);
    if (!*json || !*summary) return ak_err_nomem(&job->err);
    char achieved[96];
    if (res->empty_join) snprintf(achieved, sizeof achieved, "no x occurs in the join");
    else if (anon) snprintf(achieved, sizeof achieved, "A_Y(X) = %.0f (k = %llu)", -res->risk, (unsigned long long)job->xy.k);
    else snprintf(achieved, sizeof achieved, "L_Y(X) = %.6g (p = %g)", res->risk, job->xy.p);
    snprintf(*summary, 1024,
             "read %zu rows from %s and %zu earlier release(s)\n"
             "published %llu rows, suppressed %llu (published + suppressed = read)\n"
             "%llu specializations, %zu partitions; %s\n"
             "distortion per record: categorical %.4f, continuous %.4f%s\n"
             "time %.3f s\n",
             t->nrows, t->display_name, job->previous.count, (unsigned long long)ps->published, (unsigned long long)ps->suppressed,
             (unsigned long long)res->specializations, part->nclasses, achieved, res->distortion_cat,
             res->distortion_cont, t->class_column >= 0 ? "" : "", secs);
    return 0;
}

/* anonkit_sequential in the C numeric locale. */
static int sequential(anonkit_job *job, anonkit_result **out_result)
{
    *out_result = NULL;
    ak_err_clear(&job->err);
    const double start = ak_seconds();
    ak_error *err = &job->err;
    if (!job->input) return usage(job, "no current release given%s", ""), job_fail(job);
    if (!job->output) return usage(job, "no output file given (-o FILE, or - for stdout)%s", ""), job_fail(job);
    if (!job->previous.count) return usage(job, "no earlier release given (--previous FILE)%s", ""), job_fail(job);
    if (!job->x_attrs.count || !job->y_attrs.count) return usage(job, "--x and --y are both needed%s", ""), job_fail(job);
    if (job->xy.kind == XY_NONE) return usage(job, "give --anonymity K or --linkability P%s", ""), job_fail(job);
    if (model_has_dist(&job->model))
        return usage(job, "--t, --delta-disclosure and --beta are not taken by sequential releases: TDS4SA protects "
                          "the join with earlier releases by (X,Y)-privacy ([Wang06] §3), whose specialization does not "
                          "test a class's sensitive distribution%s", ""),
               job_fail(job);
    if (job->sensitive_values.count && job->xy.kind != XY_LINKABILITY)
        return usage(job, "--sensitive-values applies to --linkability only%s", ""), job_fail(job);
    if (!job->score_distortion && !job->class_name)
        return usage(job, "the entropy score needs a class column (--class), or use --score distortion%s", ""), job_fail(job);
    if (job_check_paths(job, JOB_VERB_SEQUENTIAL) < 0) return job_fail(job);
    if (!job->seed_set) job->seed = ak_fresh_seed();

    source_input src;
    memset(&src, 0, sizeof src);
    const source_options so = job_source_options(job);
    outfile of, rf;
    memset(&of, 0, sizeof of);
    memset(&rf, 0, sizeof rf);
    partition part;
    memset(&part, 0, sizeof part);
    tds_result res;
    memset(&res, 0, sizeof res);
    job_spec_storage storage = {0};
    publish_copied *copied = NULL;
    seq_releases *rel = NULL;
    table *t = NULL;
    anonkit_result *result = NULL;
    int rc;
    if ((rc = outfile_open_table(&of, job->output, &so, err)) < 0) goto done;
    if (job->report && (rc = outfile_open(&rf, job->report, err)) < 0) goto done;
    /* stdin and any source that is not a CSV file are read through a private spool (io/source.h) */
    if ((rc = source_input_open(&src, job->input, &so, 1, err)) < 0) goto done;
    sink_set_origin(of.sink, src.cols, src.ncols);
    const char *in_path = src.path;
    const char *display = src.shown;
    /* reading and writing take up to two threads (the same result for any number) */
    unsigned threads = job->threads;
    if (!threads) {
        const long cores = sysconf(_SC_NPROCESSORS_ONLN);
        threads = cores > 0 ? (unsigned)cores : 1;
    }
    const seq_settings cfg = {.input = in_path, .display = display, .previous = names_of(&job->previous),
                              .x_attrs = names_of(&job->x_attrs), .y_attrs = names_of(&job->y_attrs),
                              .sensitive_values = names_of(&job->sensitive_values),
                              .identifiers = names_of(&job->identifiers),
                              .hierarchy_attrs = names_of(&job->hierarchy_attrs),
                              .hierarchy_paths = names_of(&job->hierarchy_paths), .class_name = job->class_name,
                              .inconsistent = job->inconsistent, .delimiter = job->delimiter, .xy = job->xy,
                              .distortion = job->score_distortion, .threads = threads};
    if ((rc = seq_open(&rel, &cfg, err)) < 0) goto done;
    if ((rc = load_t1(job, rel, in_path, display, threads, &storage, &t)) < 0) goto done;
    tds_input in;
    if ((rc = seq_encode(rel, t, &in, err)) < 0) goto done;
    if ((rc = partition_init(&part, t->nrows, t->nqi, err)) < 0) goto done;
    /* the columns the writer copies through are read while TDS runs (on one core) */
    if (!job->keep_order && threads > 1 && (rc = publish_copied_start(&copied, t, err)) < 0) goto done;
    if ((rc = tds_run(&in, &part, &res, err)) < 0) goto done;
    publish_opts po = {.keep_order = job->keep_order, .seed = job->seed, .threads = threads, .style = RECODE_GENERALIZE,
                       .copied = copied};
    publish_stats ps;
    if ((rc = publish_write(t, &part, &po, of.stream, of.sink ? of.sink->shown : job->output, &ps, err)) < 0) goto done;
    if (!(result = result_new())) {
        rc = ak_err_nomem(err);
        goto done;
    }
    result->rows_read = t->nrows;
    result->published = ps.published;
    result->suppressed = ps.suppressed;
    result->classes = part.nclasses;
    if ((rc = describe(job, t, &res, &ps, &part, ak_seconds() - start, &result->summary, &result->json)) < 0)
        goto done;
    if (job->report && fprintf(rf.stream, "%s\n", result->json) < 0) {
        rc = ak_err_set(err, ANONKIT_E_IO, job->report, 0, 0, "cannot write the report");
        goto done;
    }
    outfile *const files[] = {&of, &rf}; /* committed together: both or neither */
    rc = outfile_commit_all(files, sizeof files / sizeof *files, threads, err);
done:
    if (rc < 0) {
        outfile_abort(&of);
        outfile_abort(&rf);
    }
    publish_copied_free(copied);
    outfile_abort(&of); /* (after a commit: nothing) */
    source_input_close(&src);
    job_spec_free(&storage);
    partition_free(&part);
    tds_result_free(&res);
    seq_free(rel);
    table_free(t);
    if (rc < 0) {
        anonkit_result_free(result);
        return job_fail(job);
    }
    *out_result = result;
    return ANONKIT_OK;
}

int anonkit_sequential(anonkit_job *job, anonkit_result **out_result)
{
    ak_c_numeric scope;
    ak_c_numeric_enter(&scope);
    anonkit_result *result = NULL;
    job_tables_reset_output(job);
    char *saved = NULL; /* an input table is read as its private CSV copy (api/tables.h) */
    int rc = job && job_tables_input_file(job, &saved) < 0 ? job->err.code ? job->err.code : ANONKIT_E_INTERNAL : ANONKIT_OK;
    if (rc == ANONKIT_OK) rc = sequential(job, &result);
    if (job) job_tables_input_restore(job, saved);
    if (rc == ANONKIT_OK) job_tables_hand_output(job, result); /* a table output (api/tables.h) */
    else job_tables_reset_output(job);
    result_hand_over(result, out_result);
    ak_c_numeric_leave(&scope);
    return rc;
}
