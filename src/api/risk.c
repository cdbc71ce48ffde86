/* risk.c (api) — anonkit_risk: the re-identification risk of a table or of
 * a published file (docs/risk.md), its JSON document and summary; the risk
 * block of the anonymize report; the --max-risk settings. The measures are
 * computed in src/metrics/risk*.c and suda2.c, the achieved parameters in
 * src/verify/achieved.c. */
#include "api/risk.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/achieved.h"
#include "api/algorithm.h"
#include "api/jsonb.h"
#include "api/locale.h"
#include "api/result.h"
#include "api/tables.h"
#include "common/hash.h"
#include "io/outfile.h"
#include "io/source.h"
#include "io/spool.h"
#include "metrics/risk.h"
#include "metrics/risk_groups.h"
#include "verify/achieved.h"

/* Default --threshold: records above 20 % risk are at risk. */
#define RISK_DEFAULT_THRESHOLD 0.2

/* ---- --max-risk ---- */

int risk_job_prepare(anonkit_job *job)
{
    const risk_model *r = &job->risk.max;
    if (r->highest > 0) {
        const uint64_t k = risk_model_k(r->highest);
        if (k > job->model.k) job->model.k = k;
        job->k_set = 1;
    }
    if (!risk_model_has_table_predicate(r)) return ANONKIT_OK;
    job->k_set = 1; /* a privacy model was given */
    const char *name = job_algorithm(job)->name;
    if (strcmp(name, "incognito") != 0)
        return job_usage_error(job,
                               "--max-risk average=R and uniqueness=R are supported by --algorithm incognito only "
                               "(its lattice search tests the whole table at each node); --algorithm %s takes "
                               "--max-risk highest=R",
                               name);
    if (job->suppression > 0)
        return job_usage_error(job, "--max-risk average=R and uniqueness=R cannot go with --suppression: suppressing "
                                    "rows breaks the monotonicity the lattice search relies on (docs/risk.md §6)");
    if (r->uniqueness > 0 && job->risk.population_size > 0 && job->risk.sampling_fraction > 0)
        return job_usage_error(job, "give --population-size or --sampling-fraction, not both");
    return ANONKIT_OK;
}

/* N of the job for a table of `rows` rows (0: neither option given); a usage
 * error when the population is smaller than the table. */
static int population_of(anonkit_job *job, uint64_t rows, const char *shown, double *N)
{
    *N = 0;
    if (job->risk.population_size > 0 && job->risk.sampling_fraction > 0)
        return job_usage_error(job, "give --population-size or --sampling-fraction, not both");
    if (job->risk.sampling_fraction > 0) *N = (double)rows / job->risk.sampling_fraction;
    if (job->risk.population_size > 0) {
        *N = job->risk.population_size;
        if (*N < (double)rows)
            return job_usage_error(job, "%s: --population-size %.17g is smaller than the %llu rows of the sample", shown,
                                   *N, (unsigned long long)rows);
    }
    return ANONKIT_OK;
}

const risk_model *risk_job_table_model(anonkit_job *job, uint64_t rows, risk_model *storage, int *status)
{
    *status = ANONKIT_OK;
    if (!risk_model_has_table_predicate(&job->risk.max)) return NULL;
    *storage = job->risk.max;
    double N;
    if ((*status = population_of(job, rows, job->input, &N)) < 0) return NULL;
    storage->population_size = N;
    return storage;
}

/* ---- JSON and summary of the measures ---- */

static json_t *estimate_json(const risk_estimate *e, const char *model)
{
    int jfail = 0;
    json_t *o = json_object();
    if (model) JSET(o, "model", json_string(model));
    JSET(o, "uniques", e->ok ? json_real(e->uniques) : json_null());
    JSET(o, "share", e->ok ? json_real(e->share) : json_null());
    if (!e->ok) JSET(o, "note", json_string(e->note ? e->note : "no estimate"));
    if (jfail) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static json_t *attacker_json(const risk_attacker *a, const char *note)
{
    int jfail = 0;
    json_t *o = json_object();
    JSET(o, "records_at_risk", json_real(a->records_at_risk));
    JSET(o, "highest_risk", json_real(a->highest));
    JSET(o, "lowest_risk", json_real(a->lowest));
    JSET(o, "average_risk", json_real(a->average));
    JSET(o, "records_affected_by_highest_risk", json_real(a->highest_risk_records));
    if (note) JSET(o, "note", json_string(note));
    if (jfail) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* The JSON object of the measures m (and SUDA2 s when not NULL). */
static json_t *measures_json(const risk_measures *m, const risk_suda *s, const char *weight, double threshold)
{
    int jfail = 0;
    json_t *o = json_object();
    JSET(o, "rows", json_integer((json_int_t)m->rows));
    JSET(o, "classes", json_integer((json_int_t)m->classes));
    JSET(o, "threshold", json_real(threshold));
    json_t *sizes = json_array();
    for (unsigned b = 0; b < RISK_NBUCKETS; b++) {
        json_t *e = json_object();
        JSET(e, "from", json_integer((json_int_t)risk_bucket_lo[b]));
        JSET(e, "to", b + 1 < RISK_NBUCKETS ? json_integer((json_int_t)risk_bucket_lo[b + 1] - 1) : json_null());
        JSET(e, "classes", json_integer((json_int_t)m->bucket_classes[b]));
        JSET(e, "records", json_integer((json_int_t)m->bucket_records[b]));
        JAPPEND(sizes, e);
    }
    JSET(o, "class_sizes", sizes);
    json_t *su = json_object();
    JSET(su, "records", json_integer((json_int_t)m->sample_uniques));
    JSET(su, "share", json_real(m->rows ? (double)m->sample_uniques / (double)m->rows : 0));
    JSET(o, "sample_uniques", su);
    JSET(o, "prosecutor", attacker_json(&m->prosecutor, NULL));
    JSET(o, "journalist", attacker_json(&m->journalist, m->journalist_from_population
                                                            ? NULL
                                                            : "no --population table: equal to the prosecutor risk"));
    json_t *mk = json_object();
    JSET(mk, "success_rate", json_real(m->marketer));
    JSET(o, "marketer", mk);
    if (m->has_population) {
        json_t *p = json_object();
        JSET(p, "size", json_real(m->population_size));
        JSET(p, "sampling_fraction", json_real(m->sampling_fraction));
        JSET(p, "zayatz", estimate_json(&m->zayatz, NULL));
        JSET(p, "pitman", estimate_json(&m->pitman, NULL));
        JSET(p, "snb", estimate_json(&m->snb, NULL));
        JSET(p, "dankar", estimate_json(&m->dankar, m->dankar_model));
        JSET(o, "population_uniques", p);
    }
    if (m->has_population || weight) {
        json_t *ir = json_object();
        JSET(ir, "weights", weight ? json_string(weight) : json_null());
        JSET(ir, "highest", json_real(m->individual_max));
        JSET(ir, "average", json_real(m->individual_mean));
        JSET(ir, "records_at_risk", json_real(m->individual_records_at_risk));
        JSET(ir, "global_risk", json_real(m->global_risk));
        JSET(ir, "global_risk_rate", json_real(m->global_risk_rate));
        JSET(o, "individual_risk", ir);
    }
    if (s) {
        json_t *js = json_object();
        JSET(js, "max_size", json_integer((json_int_t)s->max_size));
        json_t *by = json_array();
        for (unsigned k = 0; k < s->max_size; k++) JAPPEND(by, json_integer((json_int_t)s->msus[k]));
        JSET(js, "msus_by_size", by);
        JSET(js, "records_with_msu", json_integer((json_int_t)s->records_with_msu));
        JSET(js, "max_score", json_real(s->max_score));
        JSET(js, "mean_score", json_real(s->mean_score));
        JSET(js, "max_dis_score", json_real(s->max_dis));
        /* records by DIS-SUDA score, as sdcMicro prints them: above 0, 0.1, ..., 0.7 */
        json_t *dis = json_array();
        for (int t = 0; t <= 7; t++) {
            uint64_t n = 0;
            for (uint64_t r = 0; r < s->nrows; r++)
                if (s->dis[r] > t / 10.0) n++;
            json_t *e = json_object();
            JSET(e, "above", json_real(t / 10.0));
            JSET(e, "records", json_integer((json_int_t)n));
            JAPPEND(dis, e);
        }
        JSET(js, "dis_scores", dis);
        JSET(o, "suda2", js);
    }
    if (jfail) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* Appends printf output to buf (used bytes in *used). */
static void add(char *buf, size_t size, size_t *used, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
static void add(char *buf, size_t size, size_t *used, const char *fmt, ...)
{
    if (*used >= size) return;
    va_list ap;
    va_start(ap, fmt);
    const int n = vsnprintf(buf + *used, size - *used, fmt, ap);
    va_end(ap);
    if (n > 0) *used = *used + (size_t)n < size ? *used + (size_t)n : size;
}

static void estimate_text(char *buf, size_t size, size_t *used, const char *name, const risk_estimate *e)
{
    if (e->ok) add(buf, size, used, "%s %.6g (%.4g%%)", name, e->uniques, 100 * e->share);
    else add(buf, size, used, "%s null (%s)", name, e->note ? e->note : "no estimate");
}

/* The summary lines of m (prefix opens every line). */
static void measures_text(const risk_measures *m, const risk_suda *s, double threshold, const char *prefix, char *buf,
                          size_t size, size_t *used)
{
    const double n = m->rows ? (double)m->rows : 1;
    add(buf, size, used, "%s%llu rows in %llu classes; sample uniques %llu (%.2f%%)\n", prefix,
        (unsigned long long)m->rows, (unsigned long long)m->classes, (unsigned long long)m->sample_uniques,
        100.0 * (double)m->sample_uniques / n);
    add(buf, size, used, "%sclass sizes (classes/records):", prefix);
    for (unsigned b = 0; b < RISK_NBUCKETS; b++) {
        if (!m->bucket_classes[b]) continue;
        if (b + 1 < RISK_NBUCKETS && risk_bucket_lo[b + 1] - 1 > risk_bucket_lo[b])
            add(buf, size, used, " %llu-%llu: %llu/%llu", (unsigned long long)risk_bucket_lo[b],
                (unsigned long long)risk_bucket_lo[b + 1] - 1, (unsigned long long)m->bucket_classes[b],
                (unsigned long long)m->bucket_records[b]);
        else
            add(buf, size, used, " %llu%s: %llu/%llu", (unsigned long long)risk_bucket_lo[b],
                b + 1 < RISK_NBUCKETS ? "" : "+", (unsigned long long)m->bucket_classes[b],
                (unsigned long long)m->bucket_records[b]);
    }
    add(buf, size, used, "\n");
    for (int j = 0; j < 2; j++) {
        const risk_attacker *a = j ? &m->journalist : &m->prosecutor;
        if (j && !m->journalist_from_population) {
            add(buf, size, used, "%sjournalist risk: as prosecutor (no --population table)\n", prefix);
            continue;
        }
        add(buf, size, used,
            "%s%s risk: highest %.4g, lowest %.4g, average %.4g; records at risk (> %g) %.2f%%; records at the "
            "highest risk %.2f%%\n",
            prefix, j ? "journalist" : "prosecutor", a->highest, a->lowest, a->average, threshold,
            100 * a->records_at_risk, 100 * a->highest_risk_records);
    }
    add(buf, size, used, "%smarketer risk (success rate): %.4g\n", prefix, m->marketer);
    if (m->has_population) {
        add(buf, size, used, "%spopulation %.17g (sampling fraction %.4g), population uniques: ", prefix,
            m->population_size, m->sampling_fraction);
        estimate_text(buf, size, used, "Zayatz", &m->zayatz);
        add(buf, size, used, ", ");
        estimate_text(buf, size, used, "Pitman", &m->pitman);
        add(buf, size, used, ", ");
        estimate_text(buf, size, used, "SNB", &m->snb);
        add(buf, size, used, "; Dankar et al. rule (%s): ", m->dankar_model ? m->dankar_model : "none");
        estimate_text(buf, size, used, "", &m->dankar);
        add(buf, size, used, "\n");
    }
    if (m->has_population || m->global_risk > 0)
        add(buf, size, used,
            "%sindividual risk (Benedetti-Franconi): highest %.4g, average %.4g, records at risk %.2f%%; global "
            "risk %.6g expected re-identifications (%.4g%%)\n",
            prefix, m->individual_max, m->individual_mean, 100 * m->individual_records_at_risk, m->global_risk,
            100 * m->global_risk_rate);
    if (s) {
        add(buf, size, used, "%sSUDA2 (M = %u): MSUs by size", prefix, s->max_size);
        for (unsigned k = 0; k < s->max_size; k++) add(buf, size, used, " %u: %llu", k + 1, (unsigned long long)s->msus[k]);
        add(buf, size, used, "; records with an MSU %llu; SUDA score max %.6g, mean %.6g; DIS-SUDA max %.4g\n",
            (unsigned long long)s->records_with_msu, s->max_score, s->mean_score, s->max_dis);
    }
}

/* What the JSON document of a risk run is made of, kept by its result until
 * anonkit_result_json asks for the document (risk_json_make). */
typedef struct risk_json_ctx {
    risk_measures m; /* (its notes and model names are string literals) */
    risk_suda suda;
    int with_suda, published;
    char *shown, *weight; /* malloc'd; weight NULL without --weight */
    uint64_t rows, suppressed;
    double threshold;
} risk_json_ctx;

static void risk_json_free(void *ctx)
{
    risk_json_ctx *x = ctx;
    if (!x) return;
    risk_suda_free(&x->suda);
    free(x->shown);
    free(x->weight);
    free(x);
}

/* The JSON document of a risk run (achieved: with --sensitive, else NULL);
 * NULL when out of memory. */
static json_t *risk_root(const risk_json_ctx *x, const verify_achieved *achieved)
{
    int jfail = 0;
    json_t *root = json_object();
    JSET(root, "anonkit_version", json_string(ANONKIT_VERSION));
    JSET(root, "file", json_string(x->shown));
    JSET(root, "published", json_boolean(x->published));
    JSET(root, "rows_read", json_integer((json_int_t)x->rows));
    JSET(root, "rows_suppressed", json_integer((json_int_t)x->suppressed));
    JSET(root, "risk", measures_json(&x->m, x->with_suda ? &x->suda : NULL, x->weight, x->threshold));
    if (achieved) JSET(root, "achieved", achieved_json(achieved));
    if (jfail) {
        json_decref(root);
        return NULL;
    }
    return root;
}

/* result->json_make of a risk run: the document's text, in the C numeric
 * locale as the run itself would have made it; NULL when out of memory. */
static char *risk_json_make(void *ctx)
{
    ak_c_numeric scope;
    ak_c_numeric_enter(&scope);
    json_t *root = risk_root(ctx, NULL);
    char *text = root ? jsonb_dumps(root) : NULL;
    json_decref(root);
    ak_c_numeric_leave(&scope);
    return text;
}

/* ---- anonkit_risk ---- */

/* Usage errors found before any reading. */
static int risk_usage(anonkit_job *job)
{
    if (!job->input) return job_usage_error(job, "risk needs the table to measure");
    if (!job->qi.count) return job_usage_error(job, "no quasi-identifiers given (--qi)");
    if (job->risk.population_size > 0 && job->risk.sampling_fraction > 0)
        return job_usage_error(job, "give --population-size or --sampling-fraction, not both");
    if (job->risk.suda > job->qi.count)
        return job_usage_error(job, "--suda %u is more attributes than the %zu quasi-identifiers (--qi)", job->risk.suda,
                               job->qi.count);
    if (job->risk.population && !strcmp(job->risk.population, "-"))
        return job_usage_error(job, "--population must be a file, not standard input");
    return ANONKIT_OK;
}

/* The threads of the job (0: one per core). */
static unsigned risk_threads(const anonkit_job *job)
{
    if (job->threads) return job->threads;
    const long cores = sysconf(_SC_NPROCESSORS_ONLN);
    return cores > 0 ? (unsigned)cores : 1;
}

/* anonkit_risk in the C numeric locale. */
static int risk_run(anonkit_job *job, anonkit_result **out_result)
{
    *out_result = NULL;
    ak_error *err = &job->err;
    ak_err_clear(err);
    if (risk_usage(job) < 0) return ANONKIT_E_USAGE;
    const double threshold = job->risk.threshold_set ? job->risk.threshold : RISK_DEFAULT_THRESHOLD;
    source_input input; /* a CSV file as it is; stdin and database or statistics-file sources spooled */
    memset(&input, 0, sizeof input);
    risk_groups g;
    memset(&g, 0, sizeof g);
    risk_suda suda;
    memset(&suda, 0, sizeof suda);
    outfile jf;
    memset(&jf, 0, sizeof jf);
    anonkit_result *result = NULL;
    json_t *root = NULL;
    risk_json_ctx *jc = NULL;
    char *summary = NULL;
    const size_t summary_size = 16384;
    int rc = ANONKIT_OK;
    if (job->risk.json && (rc = outfile_open(&jf, job->risk.json, err)) < 0) goto done;
    const source_options so = {job->delimiter, job->query, job->use_codes, 0, job->tmpdir, NULL, NULL};
    const anonkit_table *mem = job_tables_input(job); /* an input table: read in memory (api/tables.h) */
    if (!mem && (rc = source_input_open(&input, job->input, &so, 1, err)) < 0) goto done;
    const char *path = mem ? "the input table" : input.path, *shown = mem ? path : input.shown;
    const risk_group_params gp = {path, shown, job->delimiter, (const char *const *)job->qi.items, job->qi.count,
                                  job->risk.weight, job->risk.published, job->suppression, job->risk.suda > 0,
                                  job->risk.population, job->risk.population, risk_threads(job),
                                  /* with no population size the measures' sums are of exact terms
                                   * (1 / f_k times f_k): any order adds them up alike */
                                  !(job->risk.population_size > 0 || job->risk.sampling_fraction > 0), 0, mem, 0};
    if ((rc = risk_groups_read(&g, &gp, err)) < 0) goto done;
    double N;
    if ((rc = population_of(job, g.rows - g.suppressed, shown, &N)) < 0) goto done;
    const risk_input in = {g.nclasses, g.class_size, g.class_population, g.class_weight, N, threshold};
    risk_measures m;
    if ((rc = risk_measure(&in, &m, err)) < 0) goto done;
    if (job->risk.suda) {
        const double dis = m.has_population ? m.sampling_fraction : 0.01;
        if ((rc = risk_suda2(g.codes, g.rows, (unsigned)job->qi.count, job->risk.suda, dis, &suda, err)) < 0) goto done;
    }
    verify_achieved achieved;
    const int with_achieved = job->sensitive != NULL;
    if (with_achieved) {
        const verify_params vp = {path, job->delimiter, (const char *const *)job->qi.items, job->qi.count, job->sensitive,
                                  job->model, job->risk.published ? job->suppression : 0, job->tmpdir, NULL, 0,
                                  (const char *const *)job->missing.items, job->missing.count, mem};
        if ((rc = verify_achieved_measure(&vp, &achieved, err)) < 0) goto done;
    }
    if (!(jc = calloc(1, sizeof *jc)) || !(jc->shown = strdup(shown)) ||
        (job->risk.weight && !(jc->weight = strdup(job->risk.weight)))) {
        rc = ak_err_nomem(err);
        goto done;
    }
    jc->m = m;
    jc->with_suda = job->risk.suda > 0;
    jc->suda = suda; /* (moved: freed with jc) */
    memset(&suda, 0, sizeof suda);
    jc->published = job->risk.published;
    jc->rows = g.rows;
    jc->suppressed = g.suppressed;
    jc->threshold = threshold;
    if (!(summary = malloc(summary_size)) || !(result = result_new())) {
        rc = ak_err_nomem(err);
        goto done;
    }
    size_t used = 0;
    add(summary, summary_size, &used, "%s%s: ", shown, job->risk.published ? " (published)" : "");
    if (g.suppressed) add(summary, summary_size, &used, "%llu suppressed rows left out; ", (unsigned long long)g.suppressed);
    measures_text(&m, jc->with_suda ? &jc->suda : NULL, threshold, "", summary, summary_size, &used);
    if (with_achieved) achieved_summary(&achieved, summary + used, summary_size - used);
    result->rows_read = g.rows;
    result->suppressed = g.suppressed;
    result->published = g.rows - g.suppressed;
    result->classes = g.nclasses;
    result->summary = summary;
    summary = NULL;
    if (job->risk.json || with_achieved) { /* the JSON now: it is written, or holds what is not kept */
        if (!(root = risk_root(jc, with_achieved ? &achieved : NULL)) || !(result->json = jsonb_dumps(root))) {
            rc = ak_err_nomem(err);
            goto done;
        }
    } else { /* built when asked for (anonkit_result_json): the CLI asks only with --json */
        result->json_make = risk_json_make;
        result->json_ctx = jc;
        result->json_ctx_free = risk_json_free;
        jc = NULL;
    }
    if (job->risk.json) {
        if (fputs(result->json, jf.stream) < 0 || fputc('\n', jf.stream) < 0) {
            rc = ak_err_set(err, ANONKIT_E_IO, job->risk.json, 0, 0, "cannot write the JSON");
            goto done;
        }
        if ((rc = outfile_commit(&jf, err)) < 0) goto done;
    }
done:
    if (rc < 0) outfile_abort(&jf);
    risk_json_free(jc);
    json_decref(root);
    free(summary);
    source_input_close(&input);
    risk_groups_free(&g);
    risk_suda_free(&suda);
    if (rc < 0) {
        anonkit_result_free(result);
        return job_fail(job);
    }
    *out_result = result;
    return ANONKIT_OK;
}

int anonkit_risk(anonkit_job *job, anonkit_result **out_result)
{
    if (!job) return ANONKIT_E_USAGE;
    ak_c_numeric scope;
    ak_c_numeric_enter(&scope);
    anonkit_result *result = NULL;
    const int rc = risk_run(job, &result); /* an input table is read in memory, without a private copy */
    result_hand_over(result, out_result);
    ak_c_numeric_leave(&scope);
    return rc;
}

/* ---- the risk block of the anonymize report ---- */

/* The class sizes of t's rows grouped by their QI codes (level 0). */
static int input_classes(const table *t, uint64_t **sizes, size_t *n, ak_error *err)
{
    strmap keys;
    if (strmap_init(&keys, 4096) != 0) return ak_err_nomem(err);
    uint32_t *key = malloc((t->nqi ? t->nqi : 1) * sizeof *key);
    uint64_t *s = NULL;
    size_t cap = 0;
    int rc = key ? ANONKIT_OK : ak_err_nomem(err);
    for (size_t r = 0; rc == ANONKIT_OK && r < t->nrows; r++) {
        for (uint32_t q = 0; q < t->nqi; q++) key[q] = t->qi[q].codes[r];
        uint32_t id;
        int inserted;
        if (strmap_intern(&keys, (const char *)key, t->nqi * sizeof *key, &id, &inserted) != 0) {
            rc = ak_err_nomem(err);
            break;
        }
        if (id >= cap) {
            const size_t c = cap ? cap * 2 : 4096;
            uint64_t *grown = realloc(s, c * sizeof *grown);
            if (!grown) {
                rc = ak_err_nomem(err);
                break;
            }
            s = grown;
            cap = c;
        }
        if (inserted) s[id] = 0;
        s[id]++;
    }
    *n = keys.count;
    strmap_free(&keys);
    free(key);
    if (rc < 0) {
        free(s);
        return rc;
    }
    *sizes = s;
    return ANONKIT_OK;
}

/* The achieved parameters of the partition's classes (the suppressed rows
 * left out), from the table's sensitive codes (and numeric values, when the
 * table holds them), by verify_achieved_add: the same fold check --achieved
 * applies to the published file. */
static int partition_achieved(const table *t, const partition *p, verify_achieved *a, ak_error *err)
{
    const int sensitive = t->sensitive_codes != NULL;
    const int numeric = sensitive && t->sensitive_values != NULL;
    verify_achieved_begin(a, sensitive, numeric);
    const size_t nc = p->nclasses;
    uint32_t *start = calloc(nc + 2, sizeof *start), *counts = NULL;
    model_moments *mo = numeric ? calloc(nc ? nc : 1, sizeof *mo) : NULL;
    u64map pairs;
    memset(&pairs, 0, sizeof pairs);
    uint32_t *pair_count = NULL;
    int rc = ANONKIT_OK, exact = 1;
    if (!start || (numeric && !mo) || u64map_init(&pairs, 1024) != 0) {
        rc = ak_err_nomem(err);
        goto done;
    }
    size_t pair_cap = 0;
    for (size_t r = 0; sensitive && r < t->nrows; r++) {
        const uint32_t c = p->class_of[r];
        if (c == PARTITION_SUPPRESSED) continue;
        uint32_t id;
        int inserted;
        if (u64map_intern(&pairs, (uint64_t)c << 32 | t->sensitive_codes[r], &id, &inserted) != 0) {
            rc = ak_err_nomem(err);
            goto done;
        }
        if (id >= pair_cap) {
            const size_t cap = pair_cap ? pair_cap * 2 : 1024;
            uint32_t *grown = realloc(pair_count, cap * sizeof *grown);
            if (!grown) {
                rc = ak_err_nomem(err);
                goto done;
            }
            pair_count = grown;
            pair_cap = cap;
        }
        if (inserted) pair_count[id] = 0;
        pair_count[id]++;
        if (numeric) {
            model_moments_add(&mo[c], t->sensitive_values[r]);
            if (!model_value_is_small_integer(t->sensitive_values[r])) exact = 0;
        }
    }
    /* the counts of class c at counts[start[c] .. start[c+1]) */
    const size_t np = pairs.count;
    if (!(counts = malloc((np ? np : 1) * sizeof *counts))) {
        rc = ak_err_nomem(err);
        goto done;
    }
    for (size_t i = 0; i < np; i++) start[(pairs.id_keys[i] >> 32) + 2]++;
    for (size_t c = 0; c < nc; c++) start[c + 2] += start[c + 1];
    for (size_t i = 0; i < np; i++) counts[start[(pairs.id_keys[i] >> 32) + 1]++] = pair_count[i];
    for (size_t c = 0; c < nc && rc == ANONKIT_OK; c++) {
        if (!p->count[c]) continue;
        const verify_class vc = {p->count[c], counts + start[c], start[c + 1] - start[c], numeric ? &mo[c] : NULL, exact};
        rc = verify_achieved_add(a, &vc, err);
    }
done:
    verify_achieved_end(a);
    free(start);
    free(counts);
    free(mo);
    free(pair_count);
    u64map_free(&pairs);
    return rc;
}

int risk_report_block(anonkit_job *job, const table *t, const partition *p, json_t **out, char *buf, size_t size)
{
    *out = NULL;
    if (buf && size) buf[0] = '\0';
    const double threshold = job->risk.threshold_set ? job->risk.threshold : RISK_DEFAULT_THRESHOLD;
    uint64_t *in_sizes = NULL;
    size_t nin = 0;
    AK_CHECK(input_classes(t, &in_sizes, &nin, &job->err));
    double N_in, N_out;
    int rc = population_of(job, t->nrows, t->display_name, &N_in);
    if (rc == ANONKIT_OK) rc = population_of(job, t->nrows - p->suppressed, t->display_name, &N_out);
    if (rc < 0) {
        free(in_sizes);
        return rc;
    }
    uint64_t *out_sizes = malloc((p->nclasses ? p->nclasses : 1) * sizeof *out_sizes);
    if (!out_sizes) {
        free(in_sizes);
        return ak_err_nomem(&job->err);
    }
    size_t nout = 0;
    for (size_t c = 0; c < p->nclasses; c++)
        if (p->count[c]) out_sizes[nout++] = p->count[c];
    const risk_input in_i = {nin, in_sizes, NULL, NULL, N_in, threshold};
    const risk_input in_o = {nout, out_sizes, NULL, NULL, N_out, threshold};
    risk_measures mi, mo;
    rc = risk_measure(&in_i, &mi, &job->err);
    if (rc == ANONKIT_OK) rc = risk_measure(&in_o, &mo, &job->err);
    free(in_sizes);
    free(out_sizes);
    if (rc < 0) return rc;
    verify_achieved achieved;
    if ((rc = partition_achieved(t, p, &achieved, &job->err)) < 0) return rc;
    int jfail = 0;
    json_t *o = json_object();
    JSET(o, "input", measures_json(&mi, NULL, NULL, threshold));
    JSET(o, "output", measures_json(&mo, NULL, NULL, threshold));
    JSET(o, "achieved", achieved_json(&achieved));
    const risk_model *r = &job->risk.max;
    if (r->average > 0 || r->highest > 0 || r->uniqueness > 0) {
        json_t *mr = json_object();
        if (r->average > 0) JSET(mr, "average", json_real(r->average));
        if (r->uniqueness > 0) JSET(mr, "uniqueness", json_real(r->uniqueness));
        if (r->highest > 0) {
            JSET(mr, "highest", json_real(r->highest));
            JSET(mr, "k_equivalent", json_integer((json_int_t)risk_model_k(r->highest)));
            JSET(mr, "note", json_string("highest=R is k-anonymity with k = ceil(1/R)"));
        }
        JSET(o, "max_risk", mr);
    }
    if (jfail) {
        json_decref(o);
        return ak_err_nomem(&job->err);
    }
    if (buf && size) {
        size_t used = 0;
        if (r->highest > 0)
            add(buf, size, &used, "--max-risk highest=%g is k-anonymity with k = ceil(1/R) = %llu\n", r->highest,
                (unsigned long long)risk_model_k(r->highest));
        /* two lines beside the summary; every figure, by class size too, is in the report's "risk" */
        add(buf, size, &used,
            "prosecutor risk, input -> output: highest %.4g -> %.4g, average %.4g -> %.4g, records at risk (> %g) "
            "%.2f%% -> %.2f%%, sample uniques %llu -> %llu\n",
            mi.prosecutor.highest, mo.prosecutor.highest, mi.prosecutor.average, mo.prosecutor.average, threshold,
            100 * mi.prosecutor.records_at_risk, 100 * mo.prosecutor.records_at_risk,
            (unsigned long long)mi.sample_uniques, (unsigned long long)mo.sample_uniques);
        add(buf, size, &used, "achieved: k = %llu", (unsigned long long)achieved.k);
        if (achieved.has_sensitive)
            add(buf, size, &used, ", distinct l = %llu, entropy l = %.4g, probabilistic l = %.4g",
                (unsigned long long)achieved.l_distinct, achieved.l_entropy, achieved.l_probabilistic);
        add(buf, size, &used, "\n");
    }
    *out = o;
    return ANONKIT_OK;
}
