/* job.c — the job object of the public API: every setting as text through
 * anonkit_job_set, and JSON job files (jansson) carrying the same settings
 * under the same names as the command line's long options. */
#include "api/job.h"
#include "algo/mondrian/rothko.h"
#include "api/algorithm.h"
#include "algo/onedim/onedim.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const option_names[ANONKIT_OPT__COUNT] = {
    [ANONKIT_OPT_INPUT] = "input",         [ANONKIT_OPT_OUTPUT] = "output",
    [ANONKIT_OPT_QI] = "qi",               [ANONKIT_OPT_SENSITIVE] = "sensitive",
    [ANONKIT_OPT_IDENTIFIER] = "identifier", [ANONKIT_OPT_HIERARCHY] = "hierarchy",
    [ANONKIT_OPT_NUMERIC] = "numeric",     [ANONKIT_OPT_K] = "k",
    [ANONKIT_OPT_L] = "l",                 [ANONKIT_OPT_L_VARIANT] = "l-variant",
    [ANONKIT_OPT_C] = "c",                 [ANONKIT_OPT_ALGORITHM] = "algorithm",
    [ANONKIT_OPT_REPORT] = "report",       [ANONKIT_OPT_SEED] = "seed",
    [ANONKIT_OPT_KEEP_ORDER] = "keep-order", [ANONKIT_OPT_DELIMITER] = "delimiter",
    [ANONKIT_OPT_WEIGHTS] = "weights",     [ANONKIT_OPT_JOB] = "job",
    [ANONKIT_OPT_THREADS] = "threads",     [ANONKIT_OPT_SPLIT] = "split",
    [ANONKIT_OPT_CLASS] = "class",         [ANONKIT_OPT_TARGET] = "target",
    [ANONKIT_OPT_MIN_GAIN] = "min-gain",   [ANONKIT_OPT_VARIANCE] = "variance",
    [ANONKIT_OPT_PUBLISH] = "publish",     [ANONKIT_OPT_RULES] = "rules",
    [ANONKIT_OPT_MEMORY] = "memory",       [ANONKIT_OPT_FCACHE] = "fcache",
    [ANONKIT_OPT_BLOCK_SIZE] = "block-size", [ANONKIT_OPT_TMPDIR] = "tmpdir",
    [ANONKIT_OPT_PREVIOUS] = "previous",   [ANONKIT_OPT_X] = "x",
    [ANONKIT_OPT_Y] = "y",                 [ANONKIT_OPT_ANONYMITY] = "anonymity",
    [ANONKIT_OPT_LINKABILITY] = "linkability", [ANONKIT_OPT_SENSITIVE_VALUES] = "sensitive-values",
    [ANONKIT_OPT_SCORE] = "score",         [ANONKIT_OPT_INCONSISTENT] = "inconsistent",
    [ANONKIT_OPT_BITS] = "bits",
    [ANONKIT_OPT_CENTERS] = "centers",     [ANONKIT_OPT_KL_LEVEL] = "kl-level",
    [ANONKIT_OPT_SUPPRESSION] = "suppression", [ANONKIT_OPT_INCOGNITO_VARIANT] = "incognito-variant",
    [ANONKIT_OPT_CHOOSE] = "choose",
    [ANONKIT_OPT_ALPHA] = "alpha",         [ANONKIT_OPT_TEST] = "test",
    [ANONKIT_OPT_SAMPLE_SIZE] = "sample-size", [ANONKIT_OPT_GROWTH_DEPTH] = "growth-depth",
    [ANONKIT_OPT_CLASS_ERROR] = "class-error",
    [ANONKIT_OPT_TRAIN_ROWS] = "train-rows", [ANONKIT_OPT_SPLIT_COLUMN] = "split-column",
};

void anonkit_job_set_spill_notice(anonkit_job *job, volatile char *buf, size_t size)
{
    job->spill_notice = buf;
    job->spill_notice_size = size;
    if (buf && size) buf[0] = '\0';
}

const char *anonkit_option_name(anonkit_option option)
{
    return (unsigned)option < ANONKIT_OPT__COUNT ? option_names[option] : "?";
}

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
    }
    return "unknown status";
}

static void strlist_free(strlist *l)
{
    for (size_t i = 0; i < l->count; i++) free(l->items[i]);
    free(l->items);
    l->items = NULL;
    l->count = 0;
}

static int strlist_push(strlist *l, const char *s, size_t len)
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
    job->inc_variant = INC_CUBE; /* the fastest variant; the others are there to compare */
    job->min_gain = 0.01; /* 000 footnote 13 */
    ak_err_clear(&job->err);
    return job;
}

void anonkit_job_free(anonkit_job *job)
{
    if (!job) return;
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
    free(job);
}

const ak_algorithm *job_algorithm(const anonkit_job *job)
{
    return job->algorithm ? job->algorithm : ak_algorithm_default();
}

const char *anonkit_errmsg(const anonkit_job *job)
{
    return job ? job->errmsg : "no job";
}

int job_fail(anonkit_job *job)
{
    ak_err_format(&job->err, job->errmsg, sizeof job->errmsg);
    return job->err.code ? job->err.code : ANONKIT_E_INTERNAL;
}

static int usage_error(anonkit_job *job, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static int usage_error(anonkit_job *job, const char *fmt, ...)
{
    char msg[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    ak_err_set(&job->err, ANONKIT_E_USAGE, NULL, 0, 0, "%s", msg);
    return job_fail(job);
}

static int out_of_memory(anonkit_job *job)
{
    ak_err_nomem(&job->err);
    return job_fail(job);
}

static int set_string(anonkit_job *job, char **slot, const char *value)
{
    char *copy = strdup(value);
    if (!copy) {
        return out_of_memory(job);
    }
    free(*slot);
    *slot = copy;
    return ANONKIT_OK;
}

/* Appends the comma-separated names of value to a list. */
static int append_names(anonkit_job *job, strlist *list, const char *value, const char *option)
{
    if (!*value) { /* "" empties the list, so that a later source can replace it */
        strlist_free(list);
        return ANONKIT_OK;
    }
    const char *p = value;
    for (;;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == 0) return usage_error(job, "--%s: empty name in '%s'", option, value);
        if (strlist_push(list, p, len) != 0) {
            return out_of_memory(job);
        }
        if (!end) return ANONKIT_OK;
        p = end + 1;
    }
}

static int parse_u64(const char *s, uint64_t *out)
{
    if (!*s || *s == '-' || *s == '+') return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end) return -1;
    *out = v;
    return 0;
}

static int parse_double(const char *s, double *out)
{
    if (!*s) return -1;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || *end || !isfinite(v)) return -1;
    *out = v;
    return 0;
}

static int parse_bool(const char *s, int *out)
{
    if (!strcmp(s, "1") || !strcmp(s, "true") || !strcmp(s, "yes") || !*s) *out = 1;
    else if (!strcmp(s, "0") || !strcmp(s, "false") || !strcmp(s, "no")) *out = 0;
    else return -1;
    return 0;
}

static int load_job_file(anonkit_job *job, const char *path);

/* The options of the 1-D algorithms and the KL-divergence metric. */
static int job_set_onedim(anonkit_job *job, anonkit_option option, const char *value)
{
    uint64_t n;
    switch (option) {
    case ANONKIT_OPT_BITS:
        if (parse_u64(value, &n) != 0 || n < 1 || n > HIL_MAX_BITS)
            return usage_error(job, "--bits must be a whole number from 1 to %d, not '%s'", HIL_MAX_BITS, value);
        job->bits = (unsigned)n;
        return ANONKIT_OK;
    case ANONKIT_OPT_CENTERS:
        if (parse_u64(value, &n) != 0 || n < 1 || n > 1000000)
            return usage_error(job, "--centers must be a whole number from 1 to 1000000, not '%s'", value);
        job->centers = (unsigned)n;
        return ANONKIT_OK;
    default:
        if (parse_u64(value, &n) != 0 || n < 1 || n > 64)
            return usage_error(job, "--kl-level must be a whole number from 1 to the number of QIs, not '%s'", value);
        job->kl_level = (unsigned)n;
        return ANONKIT_OK;
    }
}

int anonkit_job_set(anonkit_job *job, anonkit_option option, const char *value)
{
    if (!job) return ANONKIT_E_USAGE;
    if (!value) return usage_error(job, "--%s needs a value", anonkit_option_name(option));
    const char *name = anonkit_option_name(option);
    switch (option) {
    case ANONKIT_OPT_INPUT: return set_string(job, &job->input, value);
    case ANONKIT_OPT_OUTPUT: return set_string(job, &job->output, value);
    case ANONKIT_OPT_REPORT: return set_string(job, &job->report, value);
    case ANONKIT_OPT_SENSITIVE: return set_string(job, &job->sensitive, value);
    case ANONKIT_OPT_ALGORITHM: {
        const ak_algorithm *algo = ak_algorithm_find(value);
        if (!algo) {
            char known[256];
            ak_algorithm_names(known, sizeof known);
            return usage_error(job, "--algorithm: unknown algorithm '%s' (known: %s)", value, known);
        }
        job->algorithm = algo;
        return ANONKIT_OK;
    }
    case ANONKIT_OPT_QI: return append_names(job, &job->qi, value, name);
    case ANONKIT_OPT_IDENTIFIER: return append_names(job, &job->identifiers, value, name);
    case ANONKIT_OPT_NUMERIC: return append_names(job, &job->numeric, value, name);
    case ANONKIT_OPT_HIERARCHY: {
        if (!*value) {
            strlist_free(&job->hierarchy_attrs);
            strlist_free(&job->hierarchy_paths);
            return ANONKIT_OK;
        }
        const char *eq = strchr(value, '=');
        if (!eq || eq == value || !eq[1])
            return usage_error(job, "--hierarchy: expected ATTRIBUTE=FILE, got '%s'", value);
        if (strlist_push(&job->hierarchy_attrs, value, (size_t)(eq - value)) != 0 ||
            strlist_push(&job->hierarchy_paths, eq + 1, strlen(eq + 1)) != 0) {
            return out_of_memory(job);
        }
        return ANONKIT_OK;
    }
    case ANONKIT_OPT_K: {
        uint64_t k;
        if (parse_u64(value, &k) != 0 || k < 1)
            return usage_error(job, "--k must be a whole number of at least 1, not '%s'", value);
        job->model.k = k;
        return ANONKIT_OK;
    }
    case ANONKIT_OPT_L: {
        double l;
        if (parse_double(value, &l) != 0 || l < 1)
            return usage_error(job, "--l must be a number of at least 1, not '%s'", value);
        job->model.l = l;
        return ANONKIT_OK;
    }
    case ANONKIT_OPT_L_VARIANT: {
        unsigned bits;
        if (model_parse_variants(value, &bits) != 0)
            return usage_error(job, "--l-variant: '%s' is not one of %s", value, "distinct, entropy, recursive, probabilistic");
        job->model.l_variants = bits;
        job->l_variant_set = 1;
        return ANONKIT_OK;
    }
    case ANONKIT_OPT_C: {
        double c;
        if (parse_double(value, &c) != 0 || !(c > 0))
            return usage_error(job, "--c must be a positive number, not '%s'", value);
        job->model.c = c;
        return ANONKIT_OK;
    }
    case ANONKIT_OPT_SEED:
        if (parse_u64(value, &job->seed) != 0)
            return usage_error(job, "--seed must be a whole number, not '%s'", value);
        job->seed_set = 1;
        return ANONKIT_OK;
    case ANONKIT_OPT_KEEP_ORDER:
        if (parse_bool(value, &job->keep_order) != 0)
            return usage_error(job, "--keep-order: expected true or false, not '%s'", value);
        return ANONKIT_OK;
    case ANONKIT_OPT_DELIMITER:
        if (!strcmp(value, "\\t") || !strcmp(value, "tab")) value = "\t";
        if (strlen(value) != 1 || value[0] == '"' || value[0] == '\n' || value[0] == '\r')
            return usage_error(job, "--delimiter must be one character (not a quote or line end), not '%s'", value);
        job->delimiter = value[0];
        return ANONKIT_OK;
    case ANONKIT_OPT_WEIGHTS: {
        const char *p = value;
        for (;;) {
            const char *end = strchr(p, ',');
            size_t len = end ? (size_t)(end - p) : strlen(p);
            const char *eq = memchr(p, '=', len);
            char number[64];
            double w;
            if (!eq || eq == p || (size_t)(p + len - eq - 1) >= sizeof number)
                return usage_error(job, "--weights: expected ATTR=WEIGHT,..., got '%s'", value);
            memcpy(number, eq + 1, (size_t)(p + len - eq - 1));
            number[p + len - eq - 1] = '\0';
            if (parse_double(number, &w) != 0 || w < 0)
                return usage_error(job, "--weights: '%s' is not a non-negative number", number);
            double *values = realloc(job->weight_values, (job->weight_attrs.count + 1) * sizeof *values);
            if (!values || strlist_push(&job->weight_attrs, p, (size_t)(eq - p)) != 0) {
                if (values) job->weight_values = values;
                return out_of_memory(job);
            }
            job->weight_values = values;
            job->weight_values[job->weight_attrs.count - 1] = w;
            if (!end) return ANONKIT_OK;
            p = end + 1;
        }
    }
    case ANONKIT_OPT_JOB: return load_job_file(job, value);
    case ANONKIT_OPT_THREADS: {
        uint64_t n;
        if (parse_u64(value, &n) != 0 || n > 1024)
            return usage_error(job, "--threads must be a whole number from 0 (one per core) to 1024, not '%s'", value);
        job->threads = (unsigned)n;
        return ANONKIT_OK;
    }
    case ANONKIT_OPT_SPLIT:
        if (mdr_parse_split(value, &job->split) != 0)
            return usage_error(job, "--split: '%s' is not one of median, infogain, regression", value);
        return ANONKIT_OK;
    case ANONKIT_OPT_CLASS: return set_string(job, &job->class_name, value);
    case ANONKIT_OPT_TARGET: return set_string(job, &job->target_name, value);
    case ANONKIT_OPT_RULES: return set_string(job, &job->rules, value);
    case ANONKIT_OPT_MEMORY:
        if (rothko_parse_size(value, &job->memory) != 0 || job->memory < 1024)
            return usage_error(job, "--memory must be a size of at least 1K such as 64M or 2G, not '%s'", value);
        return ANONKIT_OK;
    case ANONKIT_OPT_FCACHE: {
        uint64_t n;
        if (parse_u64(value, &n) != 0 || n > (1u << 20))
            return usage_error(job, "--fcache must be a whole number from 0 (as many as fit) to 1048576, not '%s'", value);
        job->fcache = (unsigned)n;
        return ANONKIT_OK;
    }
    case ANONKIT_OPT_BLOCK_SIZE:
        if (rothko_parse_size(value, &job->block_size) != 0 || job->block_size < 512 || job->block_size > ((size_t)64 << 20))
            return usage_error(job, "--block-size must be a size from 512 to 64M such as 256K, not '%s'", value);
        return ANONKIT_OK;
    case ANONKIT_OPT_TMPDIR: return set_string(job, &job->tmpdir, value);
    case ANONKIT_OPT_MIN_GAIN:
        if (parse_double(value, &job->min_gain) != 0 || job->min_gain < 0)
            return usage_error(job, "--min-gain must be a number >= 0, not '%s'", value);
        return ANONKIT_OK;
    case ANONKIT_OPT_VARIANCE: {
        double v;
        if (parse_double(value, &v) != 0 || !(v >= 0))
            return usage_error(job, "--variance must be a number >= 0, not '%s'", value);
        job->model.variance = v;
        return ANONKIT_OK;
    }
    case ANONKIT_OPT_PUBLISH:
        if (recode_parse_style(value, &job->publish) != 0)
            return usage_error(job, "--publish: '%s' is not one of generalize, range, mean", value);
        return ANONKIT_OK;
    /* sequential releases (004) */
    case ANONKIT_OPT_PREVIOUS:
        if (!*value) return strlist_free(&job->previous), ANONKIT_OK;
        return strlist_push(&job->previous, value, strlen(value)) != 0 ? out_of_memory(job) : ANONKIT_OK;
    case ANONKIT_OPT_X: return append_names(job, &job->x_attrs, value, name);
    case ANONKIT_OPT_Y: return append_names(job, &job->y_attrs, value, name);
    case ANONKIT_OPT_SENSITIVE_VALUES: return append_names(job, &job->sensitive_values, value, name);
    case ANONKIT_OPT_ANONYMITY:
        if (parse_u64(value, &job->xy.k) != 0 || job->xy.k < 1)
            return usage_error(job, "--anonymity must be a whole number of at least 1, not '%s'", value);
        job->xy.kind = XY_ANONYMITY;
        return ANONKIT_OK;
    case ANONKIT_OPT_LINKABILITY:
        if (parse_double(value, &job->xy.p) != 0 || !(job->xy.p > 0 && job->xy.p <= 1))
            return usage_error(job, "--linkability must be a number in (0, 1], not '%s'", value);
        job->xy.kind = XY_LINKABILITY;
        return ANONKIT_OK;
    case ANONKIT_OPT_SCORE:
        if (strcmp(value, "entropy") && strcmp(value, "distortion"))
            return usage_error(job, "--score: '%s' is not one of entropy, distortion", value);
        job->score_distortion = !strcmp(value, "distortion");
        return ANONKIT_OK;
    case ANONKIT_OPT_INCONSISTENT: return set_string(job, &job->inconsistent, value);
    case ANONKIT_OPT_BITS:
    case ANONKIT_OPT_CENTERS:
    case ANONKIT_OPT_KL_LEVEL: return job_set_onedim(job, option, value);
    case ANONKIT_OPT_SUPPRESSION:
        if (parse_double(value, &job->suppression) != 0 || job->suppression < 0 || job->suppression > 1)
            return usage_error(job, "--suppression must be a share of the rows from 0 to 1, not '%s'", value);
        job->inc_set |= 1;
        return ANONKIT_OK;
    case ANONKIT_OPT_INCOGNITO_VARIANT:
        if (inc_parse_variant(value, &job->inc_variant) != 0)
            return usage_error(job, "--incognito-variant: '%s' is not one of %s", value,
                               "basic, super-roots, cube, binary-search, bottom-up, bottom-up-norollup");
        job->inc_set |= 2;
        return ANONKIT_OK;
    case ANONKIT_OPT_CHOOSE:
        if (inc_parse_choose(value, &job->choose) != 0)
            return usage_error(job, "--choose: '%s' is not one of gcp, height, dm", value);
        job->inc_set |= 4;
        return ANONKIT_OK;
    case ANONKIT_OPT_ALPHA:
        if (parse_double(value, &job->alpha) != 0 || !(job->alpha > 0 && job->alpha < 1))
            return usage_error(job, "--alpha must be a number strictly between 0 and 1, not '%s'", value);
        return ANONKIT_OK;
    case ANONKIT_OPT_TEST:
        if (sample_test_parse(value, &job->test) != 0)
            return usage_error(job, "--test: '%s' is not one of hypothesis, naive", value);
        return ANONKIT_OK;
    case ANONKIT_OPT_SAMPLE_SIZE:
        if (parse_u64(value, &job->sample_size) != 0 || job->sample_size < 1)
            return usage_error(job, "--sample-size must be a whole number of rows >= 1, not '%s'", value);
        return ANONKIT_OK;
    case ANONKIT_OPT_GROWTH_DEPTH: {
        uint64_t n;
        if (parse_u64(value, &n) != 0 || n < 1 || n > 64)
            return usage_error(job, "--growth-depth must be a whole number from 1 to 64, not '%s'", value);
        job->growth_depth = (uint32_t)n;
        return ANONKIT_OK;
    }
    case ANONKIT_OPT_CLASS_ERROR: return set_string(job, &job->class_error, value);
    case ANONKIT_OPT_SPLIT_COLUMN: return set_string(job, &job->split_column, value);
    case ANONKIT_OPT_TRAIN_ROWS:
        if (parse_u64(value, &job->train_rows) != 0 || job->train_rows < 1)
            return usage_error(job, "--train-rows must be a whole number of at least 1, not '%s'", value);
        return ANONKIT_OK;
    case ANONKIT_OPT__COUNT: break;
    }
    return usage_error(job, "unknown option");
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

static int is_path_option(anonkit_option o)
{
    return o == ANONKIT_OPT_INPUT || o == ANONKIT_OPT_OUTPUT || o == ANONKIT_OPT_REPORT || o == ANONKIT_OPT_RULES ||
           o == ANONKIT_OPT_TMPDIR || o == ANONKIT_OPT_PREVIOUS || o == ANONKIT_OPT_INCONSISTENT;
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
    char text[4096];
    if (json_is_string(v)) {
        const char *s = json_string_value(v);
        if (is_path_option(o)) {
            if (resolve_path(path, s, text, sizeof text) != 0) return job_file_error(job, path, 0, "path too long in '%s'", key);
            return anonkit_job_set(job, o, text);
        }
        return anonkit_job_set(job, o, s);
    }
    const int names_only = o == ANONKIT_OPT_QI || o == ANONKIT_OPT_IDENTIFIER || o == ANONKIT_OPT_NUMERIC ||
                           o == ANONKIT_OPT_SENSITIVE || o == ANONKIT_OPT_INPUT || o == ANONKIT_OPT_OUTPUT ||
                           o == ANONKIT_OPT_REPORT || o == ANONKIT_OPT_ALGORITHM || o == ANONKIT_OPT_L_VARIANT ||
                           o == ANONKIT_OPT_SPLIT || o == ANONKIT_OPT_CLASS || o == ANONKIT_OPT_TARGET ||
                           o == ANONKIT_OPT_PUBLISH || o == ANONKIT_OPT_RULES || o == ANONKIT_OPT_TMPDIR ||
                           o == ANONKIT_OPT_INCOGNITO_VARIANT || o == ANONKIT_OPT_CHOOSE ||
                           o == ANONKIT_OPT_CLASS_ERROR || o == ANONKIT_OPT_SPLIT_COLUMN ||
                           o == ANONKIT_OPT_TEST;
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
    if (json_is_object(v) && (o == ANONKIT_OPT_HIERARCHY || o == ANONKIT_OPT_WEIGHTS)) {
        const char *attr;
        json_t *item;
        json_object_foreach(v, attr, item) {
            char resolved[4096];
            if (o == ANONKIT_OPT_HIERARCHY) {
                if (!json_is_string(item)) return job_file_error(job, path, 0, "hierarchy of '%s' must be a file name", attr);
                if (resolve_path(path, json_string_value(item), resolved, sizeof resolved) != 0)
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

static int load_job_file(anonkit_job *job, const char *path)
{
    json_error_t jerr;
    json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
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
        anonkit_option o = ANONKIT_OPT__COUNT;
        for (int i = 0; i < ANONKIT_OPT__COUNT; i++)
            if (!strcmp(option_names[i], key)) o = (anonkit_option)i;
        if (o == ANONKIT_OPT__COUNT || o == ANONKIT_OPT_JOB) {
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
    size_t n = job->qi.count;
    storage->hierarchy_paths = calloc(n ? n : 1, sizeof *storage->hierarchy_paths);
    storage->force_numeric = calloc(n ? n : 1, 1);
    if (!storage->hierarchy_paths || !storage->force_numeric) {
        job_spec_free(storage);
        return ak_err_nomem(&job->err);
    }
    for (size_t h = 0; h < job->hierarchy_attrs.count; h++) {
        size_t q = 0;
        while (q < n && strcmp(job->qi.items[q], job->hierarchy_attrs.items[h]) != 0) q++;
        if (q == n) {
            job_spec_free(storage);
            return ak_err_set(&job->err, ANONKIT_E_USAGE, NULL, 0, 0,
                              "--hierarchy given for '%s', which is not a quasi-identifier (--qi)",
                              job->hierarchy_attrs.items[h]);
        }
        storage->hierarchy_paths[q] = job->hierarchy_paths.items[h];
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
    spec->force_numeric = storage->force_numeric;
    spec->sensitive_name = job->sensitive;
    spec->sensitive_numeric = job->model.variance > 0;
    spec->class_name = job->class_name;
    spec->target_name = job->target_name;
    spec->nidentifiers = job->identifiers.count;
    spec->identifier_names = (const char *const *)job->identifiers.items;
    return ANONKIT_OK;
}

void job_spec_free(job_spec_storage *storage)
{
    free(storage->hierarchy_paths);
    free(storage->force_numeric);
    storage->hierarchy_paths = NULL;
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
