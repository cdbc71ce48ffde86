/* options.c — the option table (options.h): every anonkit_option with its
 * long name, kind, parser and help, declared once; anonkit_job_set, job files
 * and the command line all read it. */
#include "api/options.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algo/incognito/incognito.h"
#include "algo/mondrian/rothko.h"
#include "algo/onedim/onedim.h"
#include "api/algorithm.h"
#include "api/locale.h"
#include "common/interval.h"

/* ---- parsers of option values ---- */

/* A whole number in [0, 2^64): digits only, no sign. */
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

/* A finite number, the whole text. */
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

/* 1/true/yes/"" or 0/false/no. */
static int parse_bool(const char *s, int *out)
{
    if (!strcmp(s, "1") || !strcmp(s, "true") || !strcmp(s, "yes") || !*s) *out = 1;
    else if (!strcmp(s, "0") || !strcmp(s, "false") || !strcmp(s, "no")) *out = 0;
    else return -1;
    return 0;
}

/* A whole number in [lo, hi] into *out; -1 when it is not one. */
static int parse_range(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
    uint64_t n;
    if (parse_u64(s, &n) != 0 || n < lo || n > hi) return -1;
    *out = n;
    return 0;
}

/* The job field at d->offset. */
static void *field(anonkit_job *job, const ak_option_desc *d) { return (char *)job + d->offset; }

/* ---- generic setters: a text, a list of names ---- */

/* Replaces the text at d->offset with a copy of value. */
static int set_text(anonkit_job *job, const ak_option_desc *d, const char *value)
{
    char **slot = field(job, d);
    char *copy = strdup(value);
    if (!copy) return job_out_of_memory(job);
    free(*slot);
    *slot = copy;
    return ANONKIT_OK;
}

/* Appends the comma-separated names of value to the list at d->offset; ""
 * empties it, so that a later source can replace it. */
static int set_names(anonkit_job *job, const ak_option_desc *d, const char *value)
{
    strlist *list = field(job, d);
    if (!*value) {
        strlist_free(list);
        return ANONKIT_OK;
    }
    const char *p = value;
    for (;;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == 0) return job_usage_error(job, "--%s: empty name in '%s'", d->name, value);
        if (strlist_push(list, p, len) != 0) return job_out_of_memory(job);
        if (!end) return ANONKIT_OK;
        p = end + 1;
    }
}

/* ---- the options' own setters ---- */

static int set_hierarchy(anonkit_job *job, const ak_option_desc *d, const char *value)
{
    (void)d;
    if (!*value) {
        strlist_free(&job->hierarchy_attrs);
        strlist_free(&job->hierarchy_paths);
        return ANONKIT_OK;
    }
    const char *eq = strchr(value, '=');
    if (!eq || eq == value || !eq[1]) return job_usage_error(job, "--hierarchy: expected ATTRIBUTE=FILE, got '%s'", value);
    if (strlist_push(&job->hierarchy_attrs, value, (size_t)(eq - value)) != 0 ||
        strlist_push(&job->hierarchy_paths, eq + 1, strlen(eq + 1)) != 0)
        return job_out_of_memory(job);
    return ANONKIT_OK;
}

static int set_k(anonkit_job *job, const ak_option_desc *d, const char *value)
{
    (void)d;
    if (parse_range(value, 1, UINT64_MAX, &job->model.k) != 0)
        return job_usage_error(job, "--k must be a whole number of at least 1, not '%s'", value);
    job->k_set = 1;
    return ANONKIT_OK;
}

static int set_l(anonkit_job *job, const ak_option_desc *d, const char *value)
{
    (void)d;
    double l;
    if (parse_double(value, &l) != 0 || l < 1) return job_usage_error(job, "--l must be a number of at least 1, not '%s'", value);
    job->model.l = l;
    return ANONKIT_OK;
}

static int set_l_variant(anonkit_job *job, const ak_option_desc *d, const char *value)
{
    (void)d;
    unsigned bits;
    if (model_parse_variants(value, &bits) != 0)
        return job_usage_error(job, "--l-variant: '%s' is not one of %s", value, "distinct, entropy, recursive, probabilistic");
    job->model.l_variants = bits;
    job->l_variant_set = 1;
    return ANONKIT_OK;
}

static int set_c(anonkit_job *job, const ak_option_desc *d, const char *value)
{
    (void)d;
    double c;
    if (parse_double(value, &c) != 0 || !(c > 0)) return job_usage_error(job, "--c must be a positive number, not '%s'", value);
    job->model.c = c;
    return ANONKIT_OK;
}

static int set_t(anonkit_job *job, const ak_option_desc *d, const char *value)
{
    (void)d;
    double t;
    if (parse_double(value, &t) != 0 || !(t >= 0 && t <= 1))
        return job_usage_error(job, "--t must be a number in [0, 1], not '%s'", value);
    job->model.dist.t = t;
    return ANONKIT_OK;
}

static int set_t_distance(anonkit_job *job, const ak_option_desc *d, const char *value)
{
    (void)d;
    if (model_parse_t_distance(value, &job->model.dist.t_distance) != 0)
        return job_usage_error(job, "--t-distance: '%s' is not one of equal, ordered, hierarchical", value);
    return ANONKIT_OK;
}

static int set_delta_disclosure(anonkit_job *job, const ak_option_desc *d, const char *value)
{
    (void)d;
    double x;
    if (parse_double(value, &x) != 0 || !(x > 0))
        return job_usage_error(job, "--delta-disclosure must be a positive number, not '%s'", value);
    job->model.dist.delta = x;
    return ANONKIT_OK;
}

static int set_beta(anonkit_job *job, const ak_option_desc *d, const char *value)
{
    (void)d;
    double x;
    if (parse_double(value, &x) != 0 || !(x > 0)) return job_usage_error(job, "--beta must be a positive number, not '%s'", value);
    job->model.dist.beta = x;
    return ANONKIT_OK;
}

static int set_beta_variant(anonkit_job *job, const ak_option_desc *d, const char *value)
{
    (void)d;
    if (model_parse_beta_variant(value, &job->model.dist.beta_variant) != 0)
        return job_usage_error(job, "--beta-variant: '%s' is not one of basic, enhanced", value);
    return ANONKIT_OK;
}

static int set_algorithm(anonkit_job *job, const ak_option_desc *d, const char *value)
{
    (void)d;
    const ak_algorithm *algo = ak_algorithm_find(value);
    if (!algo) {
        char known[256];
        ak_algorithm_names(known, sizeof known);
        return job_usage_error(job, "--algorithm: unknown algorithm '%s' (known: %s)", value, known);
    }
    job->algorithm = algo;
    return ANONKIT_OK;
}

static int set_seed(anonkit_job *job, const ak_option_desc *d, const char *value)
{
    (void)d;
    if (parse_u64(value, &job->seed) != 0) return job_usage_error(job, "--seed must be a whole number, not '%s'", value);
    job->seed_set = 1;
    return ANONKIT_OK;
}

static int set_keep_order(anonkit_job *job, const ak_option_desc *d, const char *value)
{
    (void)d;
    if (parse_bool(value, &job->keep_order) != 0)
        return job_usage_error(job, "--keep-order: expected true or false, not '%s'", value);
    return ANONKIT_OK;
}

/* --replace and --use-codes: a flag at d->offset. */
static int set_int_flag(anonkit_job *job, const ak_option_desc *d, const char *value)
{
    if (parse_bool(value, (int *)field(job, d)) != 0)
        return job_usage_error(job, "--%s: expected true or false, not '%s'", d->name, value);
    return ANONKIT_OK;
}

static int set_delimiter(anonkit_job *job, const ak_option_desc *d, const char *value)
{
    (void)d;
    if (!strcmp(value, "\\t") || !strcmp(value, "tab")) value = "\t";
    if (strlen(value) != 1 || value[0] == '"' || value[0] == '\n' || value[0] == '\r')
        return job_usage_error(job, "--delimiter must be one character (not a quote or line end), not '%s'", value);
    job->delimiter = value[0];
    return ANONKIT_OK;
}

/* Appends ATTR=WEIGHT pairs, comma separated. */
static int set_weights(anonkit_job *job, const ak_option_desc *d, const char *value)
{
    (void)d;
    const char *p = value;
    for (;;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        const char *eq = memchr(p, '=', len);
        char number[64];
        double w;
        if (!eq || eq == p || (size_t)(p + len - eq - 1) >= sizeof number)
            return job_usage_error(job, "--weights: expected ATTR=WEIGHT,..., got '%s'", value);
        memcpy(number, eq + 1, (size_t)(p + len - eq - 1));
        number[p + len - eq - 1] = '\0';
        if (parse_double(number, &w) != 0 || w < 0)
            return job_usage_error(job, "--weights: '%s' is not a non-negative number", number);
        double *values = realloc(job->weight_values, (job->weight_attrs.count + 1) * sizeof *values);
        if (!values || strlist_push(&job->weight_attrs, p, (size_t)(eq - p)) != 0) {
            if (values) job->weight_values = values;
            return job_out_of_memory(job);
        }
        job->weight_values = values;
        job->weight_values[job->weight_attrs.count - 1] = w;
        if (!end) return ANONKIT_OK;
        p = end + 1;
    }
}

static int set_job(anonkit_job *job, const ak_option_desc *d, const char *value)
{
    (void)d;
    return job_load_file(job, value);
}

static int set_threads(anonkit_job *job, const ak_option_desc *d, const char *value)
{
    (void)d;
    uint64_t n;
    if (parse_range(value, 0, 1024, &n) != 0)
        return job_usage_error(job, "--threads must be a whole number from 0 (one per core) to 1024, not '%s'", value);
    job->threads = (unsigned)n;
    return ANONKIT_OK;
}

static int set_split(anonkit_job *job, const ak_option_desc *d, const char *value)
{
    (void)d;
    if (mdr_parse_split(value, &job->split) != 0)
        return job_usage_error(job, "--split: '%s' is not one of median, infogain, regression", value);
    return ANONKIT_OK;
}

static int set_min_gain(anonkit_job *job, const ak_option_desc *d, const char *value)
{
    (void)d;
    if (parse_double(value, &job->min_gain) != 0 || job->min_gain < 0)
        return job_usage_error(job, "--min-gain must be a number >= 0, not '%s'", value);
    return ANONKIT_OK;
}

static int set_variance(anonkit_job *job, const ak_option_desc *d, const char *value)
{
    (void)d;
    double v;
    if (parse_double(value, &v) != 0 || !(v >= 0)) return job_usage_error(job, "--variance must be a number >= 0, not '%s'", value);
    job->model.variance = v;
    return ANONKIT_OK;
}

static int set_publish(anonkit_job *job, const ak_option_desc *d, const char *value)
{
    (void)d;
    if (recode_parse_style(value, &job->publish) != 0)
        return job_usage_error(job, "--publish: '%s' is not one of generalize, range, mean", value);
    return ANONKIT_OK;
}

static int set_memory(anonkit_job *job, const ak_option_desc *d, const char *value)
{
    (void)d;
    if (rothko_parse_size(value, &job->memory) != 0 || job->memory < 1024)
        return job_usage_error(job, "--memory must be a size of at least 1K such as 64M or 2G, not '%s'", value);
    return ANONKIT_OK;
}

static int set_fcache(anonkit_job *job, const ak_option_desc *d, const char *value)
{
    (void)d;
    uint64_t n;
    if (parse_range(value, 0, 1u << 20, &n) != 0)
        return job_usage_error(job, "--fcache must be a whole number from 0 (as many as fit) to 1048576, not '%s'", value);
    job->rothko.fcache = (unsigned)n;
    return ANONKIT_OK;
}

static int set_block_size(anonkit_job *job, const ak_option_desc *d, const char *value)
{
    (void)d;
    size_t *b = &job->rothko.block_size;
    if (rothko_parse_size(value, b) != 0 || *b < 512 || *b > ((size_t)64 << 20))
        return job_usage_error(job, "--block-size must be a size from 512 to 64M such as 256K, not '%s'", value);
    return ANONKIT_OK;
}

/* An earlier release: appends one path ("" empties the list). */
static int set_previous(anonkit_job *job, const ak_option_desc *d, const char *value)
{
    (void)d;
    if (!*value) return strlist_free(&job->previous), ANONKIT_OK;
    return strlist_push(&job->previous, value, strlen(value)) != 0 ? job_out_of_memory(job) : ANONKIT_OK;
}

static int set_anonymity(anonkit_job *job, const ak_option_desc *d, const char *value)
{
    (void)d;
    if (parse_range(value, 1, UINT64_MAX, &job->xy.k) != 0)
        return job_usage_error(job, "--anonymity must be a whole number of at least 1, not '%s'", value);
    job->xy.kind = XY_ANONYMITY;
    return ANONKIT_OK;
}

static int set_linkability(anonkit_job *job, const ak_option_desc *d, const char *value)
{
    (void)d;
    if (parse_double(value, &job->xy.p) != 0 || !(job->xy.p > 0 && job->xy.p <= 1))
        return job_usage_error(job, "--linkability must be a number in (0, 1], not '%s'", value);
    job->xy.kind = XY_LINKABILITY;
    return ANONKIT_OK;
}

static int set_score(anonkit_job *job, const ak_option_desc *d, const char *value)
{
    (void)d;
    if (strcmp(value, "entropy") && strcmp(value, "distortion"))
        return job_usage_error(job, "--score: '%s' is not one of entropy, distortion", value);
    job->score_distortion = !strcmp(value, "distortion");
    return ANONKIT_OK;
}

static int set_bits(anonkit_job *job, const ak_option_desc *d, const char *value)
{
    (void)d;
    uint64_t n;
    if (parse_range(value, 1, HIL_MAX_BITS, &n) != 0)
        return job_usage_error(job, "--bits must be a whole number from 1 to %d, not '%s'", HIL_MAX_BITS, value);
    job->onedim.bits = (unsigned)n;
    return ANONKIT_OK;
}

static int set_centers(anonkit_job *job, const ak_option_desc *d, const char *value)
{
    (void)d;
    uint64_t n;
    if (parse_range(value, 1, 1000000, &n) != 0)
        return job_usage_error(job, "--centers must be a whole number from 1 to 1000000, not '%s'", value);
    job->onedim.centers = (unsigned)n;
    return ANONKIT_OK;
}

static int set_kl_level(anonkit_job *job, const ak_option_desc *d, const char *value)
{
    (void)d;
    uint64_t n;
    if (parse_range(value, 1, 64, &n) != 0)
        return job_usage_error(job, "--kl-level must be a whole number from 1 to the number of QIs, not '%s'", value);
    job->kl_level = (unsigned)n;
    return ANONKIT_OK;
}

static int set_suppression(anonkit_job *job, const ak_option_desc *d, const char *value)
{
    (void)d;
    if (parse_double(value, &job->suppression) != 0 || job->suppression < 0 || job->suppression > 1)
        return job_usage_error(job, "--suppression must be a share of the rows from 0 to 1, not '%s'", value);
    job->incognito.given |= 1;
    return ANONKIT_OK;
}

static int set_incognito_variant(anonkit_job *job, const ak_option_desc *d, const char *value)
{
    (void)d;
    if (inc_parse_variant(value, &job->incognito.variant) != 0)
        return job_usage_error(job, "--incognito-variant: '%s' is not one of %s", value,
                               "optimal, exhaustive, basic, super-roots, cube, binary-search, bottom-up, bottom-up-norollup");
    job->incognito.given |= 2;
    return ANONKIT_OK;
}

static int set_choose(anonkit_job *job, const ak_option_desc *d, const char *value)
{
    (void)d;
    if (inc_parse_choose(value, &job->incognito.choose) != 0)
        return job_usage_error(job, "--choose: '%s' is not one of gcp, height, dm, k-minimal", value);
    job->incognito.given |= 4;
    return ANONKIT_OK;
}

static int set_alpha(anonkit_job *job, const ak_option_desc *d, const char *value)
{
    (void)d;
    double *a = &job->rothko.alpha;
    if (parse_double(value, a) != 0 || !(*a > 0 && *a < 1))
        return job_usage_error(job, "--alpha must be a number strictly between 0 and 1, not '%s'", value);
    return ANONKIT_OK;
}

static int set_test(anonkit_job *job, const ak_option_desc *d, const char *value)
{
    (void)d;
    if (sample_test_parse(value, &job->rothko.test) != 0)
        return job_usage_error(job, "--test: '%s' is not one of hypothesis, naive", value);
    return ANONKIT_OK;
}

static int set_sample_size(anonkit_job *job, const ak_option_desc *d, const char *value)
{
    (void)d;
    if (parse_range(value, 1, UINT64_MAX, &job->rothko.sample_size) != 0)
        return job_usage_error(job, "--sample-size must be a whole number of rows >= 1, not '%s'", value);
    return ANONKIT_OK;
}

static int set_growth_depth(anonkit_job *job, const ak_option_desc *d, const char *value)
{
    (void)d;
    uint64_t n;
    if (parse_range(value, 1, 64, &n) != 0)
        return job_usage_error(job, "--growth-depth must be a whole number from 1 to 64, not '%s'", value);
    job->rothko.growth_depth = (uint32_t)n;
    return ANONKIT_OK;
}

static int set_train_rows(anonkit_job *job, const ak_option_desc *d, const char *value)
{
    (void)d;
    if (parse_range(value, 1, UINT64_MAX, &job->train_rows) != 0)
        return job_usage_error(job, "--train-rows must be a whole number of at least 1, not '%s'", value);
    return ANONKIT_OK;
}

/* ---- re-identification risk (docs/risk.md) ---- */

static int set_risk_flag(anonkit_job *job, const ak_option_desc *d, const char *value)
{
    int *slot = field(job, d);
    if (parse_bool(value, slot) != 0) return job_usage_error(job, "--%s: expected true or false, not '%s'", d->name, value);
    return ANONKIT_OK;
}

static int set_population_size(anonkit_job *job, const ak_option_desc *d, const char *value)
{
    (void)d;
    double n;
    if (parse_double(value, &n) != 0 || !(n >= 1))
        return job_usage_error(job, "--population-size must be a number of at least 1, not '%s'", value);
    job->risk.population_size = n;
    return ANONKIT_OK;
}

static int set_sampling_fraction(anonkit_job *job, const ak_option_desc *d, const char *value)
{
    (void)d;
    double f;
    if (parse_double(value, &f) != 0 || !(f > 0 && f <= 1))
        return job_usage_error(job, "--sampling-fraction must be a number in (0, 1], not '%s'", value);
    job->risk.sampling_fraction = f;
    return ANONKIT_OK;
}

static int set_threshold(anonkit_job *job, const ak_option_desc *d, const char *value)
{
    (void)d;
    double t;
    if (parse_double(value, &t) != 0 || !(t >= 0 && t <= 1))
        return job_usage_error(job, "--threshold must be a risk from 0 to 1, not '%s'", value);
    job->risk.threshold = t;
    job->risk.threshold_set = 1;
    return ANONKIT_OK;
}

static int set_suda(anonkit_job *job, const ak_option_desc *d, const char *value)
{
    (void)d;
    uint64_t m;
    if (parse_range(value, 1, 64, &m) != 0)
        return job_usage_error(job, "--suda must be a whole number of attributes from 1 to the number of QIs, not '%s'", value);
    job->risk.suda = (unsigned)m;
    return ANONKIT_OK;
}

/* KIND=R[,KIND=R...], KIND one of average, highest, uniqueness, 0 < R <= 1. */
static int set_max_risk(anonkit_job *job, const ak_option_desc *d, const char *value)
{
    (void)d;
    risk_model *r = &job->risk.max;
    if (!*value) {
        r->average = r->highest = r->uniqueness = 0;
        return ANONKIT_OK;
    }
    const char *p = value;
    for (;;) {
        const char *end = strchr(p, ',');
        const size_t len = end ? (size_t)(end - p) : strlen(p);
        const char *eq = memchr(p, '=', len);
        char number[64];
        double v;
        double *slot = NULL;
        if (eq && (size_t)(eq - p) == 7 && !strncmp(p, "average", 7)) slot = &r->average;
        else if (eq && (size_t)(eq - p) == 7 && !strncmp(p, "highest", 7)) slot = &r->highest;
        else if (eq && (size_t)(eq - p) == 10 && !strncmp(p, "uniqueness", 10)) slot = &r->uniqueness;
        if (!slot || (size_t)(p + len - eq - 1) >= sizeof number)
            return job_usage_error(job, "--max-risk: expected average=R, highest=R or uniqueness=R, got '%s'", value);
        memcpy(number, eq + 1, (size_t)(p + len - eq - 1));
        number[p + len - eq - 1] = '\0';
        if (parse_double(number, &v) != 0 || !(v > 0 && v <= 1))
            return job_usage_error(job, "--max-risk: the risk '%s' must be a number in (0, 1]", number);
        *slot = v;
        if (!end) return ANONKIT_OK;
        p = end + 1;
    }
}

/* ---- the table ----
 *
 * One entry per option, indexed by its anonkit_option value: {long name,
 * flags, setter, field of the generic setters, placeholder, help}. The help
 * is the option's line in `anonkit anonymize --help` (or in the help of the
 * one subcommand that takes it); a subcommand may word it for itself. */

/* An on/off setting (an int at d->offset). */
static int set_flag(anonkit_job *job, const ak_option_desc *d, const char *value)
{
    if (parse_bool(value, field(job, d)) != 0)
        return job_usage_error(job, "--%s: expected true or false, not '%s'", d->name, value);
    return ANONKIT_OK;
}

static int set_interval_format(anonkit_job *job, const ak_option_desc *d, const char *value)
{
    (void)d;
    ak_interval_style style;
    if (ak_interval_parse_style(value, &style) != 0)
        return job_usage_error(job, "--interval-format: expected range or bracket, not '%s'", value);
    job->interval_format = (int)style;
    return ANONKIT_OK;
}

static const ak_option_desc options[ANONKIT_OPT__COUNT] = {
    [ANONKIT_OPT_INPUT] =
        {"input", ANONKIT_OPTF_PATH | AK_OPTF_JSON_TEXT, set_text, offsetof(anonkit_job, input), "FILE",
         "input CSV (- for stdin)"},
    [ANONKIT_OPT_OUTPUT] =
        {"output", ANONKIT_OPTF_PATH | AK_OPTF_JSON_TEXT, set_text, offsetof(anonkit_job, output), "FILE",
         "published CSV (- for stdout); written only on success"},
    [ANONKIT_OPT_QI] =
        {"qi", ANONKIT_OPTF_LIST | ANONKIT_OPTF_REPLACE | AK_OPTF_JSON_TEXT, set_names,
         offsetof(anonkit_job, qi), "A,B,...",
         "quasi-identifier columns"},
    [ANONKIT_OPT_SENSITIVE] =
        {"sensitive", AK_OPTF_JSON_TEXT, set_text, offsetof(anonkit_job, sensitive), "COL",
         "sensitive column (needed by --l and --variance)"},
    [ANONKIT_OPT_IDENTIFIER] =
        {"identifier", ANONKIT_OPTF_LIST | ANONKIT_OPTF_REPLACE | AK_OPTF_JSON_TEXT, set_names,
         offsetof(anonkit_job, identifiers), "A,...",
         "identifier columns, dropped from the output"},
    [ANONKIT_OPT_HIERARCHY] =
        {"hierarchy", ANONKIT_OPTF_LIST | AK_OPTF_JSON_PATHS, set_hierarchy, 0, "A=FILE",
         "ARX generalization hierarchy of QI A (';'-separated,\n"
         "one row per leaf); a QI without one must be numeric;\n"
         "A=auto: a flat one built from the data"},
    [ANONKIT_OPT_NUMERIC] =
        {"numeric", ANONKIT_OPTF_LIST | ANONKIT_OPTF_REPLACE | AK_OPTF_JSON_TEXT, set_names,
         offsetof(anonkit_job, numeric), "A,...",
         "treat these QIs as numeric although they have a hierarchy"},
    [ANONKIT_OPT_K] =
        {"k", 0, set_k, 0, "K",
         "k-anonymity: every class has at least K rows"},
    [ANONKIT_OPT_L] =
        {"l", 0, set_l, 0, "L",
         "l-diversity of the sensitive column"},
    [ANONKIT_OPT_L_VARIANT] =
        {"l-variant", AK_OPTF_JSON_TEXT, set_l_variant, 0, "V[,V]",
         "distinct (default), entropy, recursive, probabilistic"},
    [ANONKIT_OPT_C] =
        {"c", 0, set_c, 0, "C",
         "c of recursive (c,l)-diversity (default 1)"},
    [ANONKIT_OPT_ALGORITHM] =
        {"algorithm", AK_OPTF_JSON_TEXT, set_algorithm, 0, "NAME",
         "mondrian (default): greedy multidimensional partitioning;\n"
         "rothko-t: the same result out of core, within --memory\n"
         "rothko-s: out of core by growing trees on random samples\n"
         "(hypothesis tests, pruning); also regression and variance\n"
         "hilbert, idistance: map the QIs to 1-D (Hilbert curve,\n"
         "iDistance), then optimal 1-D k-anonymity (groups of\n"
         "k..2k-1 by exact NCP) or the 1-D l-diversity heuristic\n"
         "(probabilistic l-diversity); hilbert-fast, idistance-fast:\n"
         "cost groups by their 1-D extent ([Ghinita07], local recoding)\n"
         "incognito: full-domain generalization over the hierarchies\n"
         "(every QI needs one), all anonymous levels found\n"
         "local: full-domain optima applied iteratively, each row at\n"
         "its own levels of the hierarchies (local recoding)"},
    [ANONKIT_OPT_REPORT] =
        {"report", ANONKIT_OPTF_PATH | AK_OPTF_JSON_TEXT, set_text, offsetof(anonkit_job, report), "FILE",
         "JSON report: parameters, counts, metrics, time"},
    [ANONKIT_OPT_SEED] =
        {"seed", 0, set_seed, 0, "N",
         "seed of the output shuffle (default: random, in the report)"},
    [ANONKIT_OPT_KEEP_ORDER] =
        {"keep-order", ANONKIT_OPTF_FLAG, set_keep_order, 0, NULL,
         "keep input row order (row order can re-identify people)"},
    [ANONKIT_OPT_DELIMITER] =
        {"delimiter", 0, set_delimiter, 0, "C",
         "field delimiter of input and output (default ',')"},
    [ANONKIT_OPT_WEIGHTS] =
        {"weights", AK_OPTF_JSON_NUMBERS, set_weights, 0, "A=W,...",
         "NCP weights per QI for GCP (default equal)"},
    [ANONKIT_OPT_JOB] =
        {"job", AK_OPTF_NOT_IN_FILE, set_job, 0, "FILE",
         "JSON job file with any of these settings by long name;\n"
         "command-line options override it"},
    [ANONKIT_OPT_THREADS] =
        {"threads", 0, set_threads, 0, "N",
         "worker threads (default: one per core; same result for any N)"},
    [ANONKIT_OPT_SPLIT] =
        {"split", AK_OPTF_JSON_TEXT, set_split, 0, "S",
         "median (default): widest range, median threshold;\n"
         "infogain: best information gain on --class;\n"
         "regression: least squared error of --target"},
    [ANONKIT_OPT_CLASS] =
        {"class", AK_OPTF_JSON_TEXT, set_text, offsetof(anonkit_job, class_name), "COL",
         "class label column (InfoGain; conditional entropy in the report)"},
    [ANONKIT_OPT_TARGET] =
        {"target", AK_OPTF_JSON_TEXT, set_text, offsetof(anonkit_job, target_name), "COL",
         "numeric target column (Regression; RMSE in the report)"},
    [ANONKIT_OPT_MIN_GAIN] =
        {"min-gain", 0, set_min_gain, 0, "G",
         "InfoGain: below G bits a subtree goes on with median (default 0.01)"},
    [ANONKIT_OPT_VARIANCE] =
        {"variance", 0, set_variance, 0, "V",
         "variance diversity: every class's population variance\n"
         "of the numeric sensitive column is at least V"},
    [ANONKIT_OPT_PUBLISH] =
        {"publish", AK_OPTF_JSON_TEXT, set_publish, 0, "S",
         "numeric QIs as generalize (default: lo-hi or the value),\n"
         "range (always lo-hi) or mean (the class mean)"},
    [ANONKIT_OPT_RULES] =
        {"rules", ANONKIT_OPTF_PATH | AK_OPTF_JSON_TEXT, set_text, offsetof(anonkit_job, rules), "FILE",
         "write the recoding rules (see anonkit recode)"},
    [ANONKIT_OPT_MEMORY] =
        {"memory", 0, set_memory, 0, "SIZE",
         "memory budget (K/M/G suffixes), e.g. 256M: needed by rothko-t/-s;\n"
         "the 1-D algorithms sort their keys on disk beyond it"},
    [ANONKIT_OPT_FCACHE] =
        {"fcache", 0, set_fcache, 0, "N",
         "rothko-t: frequency groups held at once (default: as many as fit)"},
    [ANONKIT_OPT_BLOCK_SIZE] =
        {"block-size", 0, set_block_size, 0, "SIZE",
         "rothko-t/-s: bytes per read and write of spill files (default 256K)"},
    [ANONKIT_OPT_TMPDIR] =
        {"tmpdir", ANONKIT_OPTF_PATH | AK_OPTF_JSON_TEXT, set_text, offsetof(anonkit_job, tmpdir), "DIR",
         "where spill files (rothko-t/-s, hilbert/idistance --memory) and the\n"
         "copy of standard input go (default $TMPDIR)"},
    [ANONKIT_OPT_PREVIOUS] =
        {"previous", ANONKIT_OPTF_PATH | ANONKIT_OPTF_LIST, set_previous, 0, "FILE",
         "an earlier release (repeat for several: star join)"},
    [ANONKIT_OPT_X] =
        {"x", ANONKIT_OPTF_LIST, set_names, offsetof(anonkit_job, x_attrs), "A,B,...",
         "X: attributes of any release; a name in several\n"
         "releases names all its copies"},
    [ANONKIT_OPT_Y] =
        {"y", ANONKIT_OPTF_LIST, set_names, offsetof(anonkit_job, y_attrs), "C,...",
         "Y: attributes of one release each"},
    [ANONKIT_OPT_ANONYMITY] =
        {"anonymity", 0, set_anonymity, 0, "K",
         "(X,Y)-anonymity: every x co-occurs with >= K distinct y"},
    [ANONKIT_OPT_LINKABILITY] =
        {"linkability", 0, set_linkability, 0, "P",
         "(X,Y)-linkability: no y is inferred from x with\n"
         "confidence above P (0 < P <= 1); Y in one release"},
    [ANONKIT_OPT_SENSITIVE_VALUES] =
        {"sensitive-values", ANONKIT_OPTF_LIST, set_names, offsetof(anonkit_job, sensitive_values), "V,..",
         "linkability counts only y holding one of these values"},
    [ANONKIT_OPT_SCORE] =
        {"score", 0, set_score, 0, "S",
         "entropy (default, needs --class) or distortion"},
    [ANONKIT_OPT_INCONSISTENT] =
        {"inconsistent", ANONKIT_OPTF_PATH, set_text, offsetof(anonkit_job, inconsistent), "FILE",
         "lines ATTR,VALUE,ATTR,VALUE: values (and all their\n"
         "specializations) that cannot belong to one person"},
    [ANONKIT_OPT_BITS] =
        {"bits", 0, set_bits, 0, "B",
         "1-D algorithms: Hilbert grid bits per QI (default 12)"},
    [ANONKIT_OPT_CENTERS] =
        {"centers", 0, set_centers, 0, "C",
         "iDistance: k-means centres on a 10% sample (default 512)"},
    [ANONKIT_OPT_KL_LEVEL] =
        {"kl-level", 0, set_kl_level, 0, "I",
         "with --sensitive: KL-divergence between the original's and\n"
         "the published datacube of COUNT(*) WHERE SA = v GROUP BY\n"
         "every I QIs, uniform inside each published box ([Ghinita07] §6.3)"},
    [ANONKIT_OPT_SUPPRESSION] =
        {"suppression", 0, set_suppression, 0, "F",
         "incognito: rows of failing classes may be suppressed ('*'\n"
         "in every QI, counted) up to F of the table (default 0);\n"
         "local: the rows no generalization can publish, up to F"},
    [ANONKIT_OPT_INCOGNITO_VARIANT] =
        {"incognito-variant", AK_OPTF_JSON_TEXT, set_incognito_variant, 0, "V",
         "cube (default), optimal (the chosen node only),\n"
         "exhaustive, super-roots, basic, or the baselines\n"
         "binary-search, bottom-up, bottom-up-norollup"},
    [ANONKIT_OPT_CHOOSE] =
        {"choose", AK_OPTF_JSON_TEXT, set_choose, 0, "M",
         "incognito: publish the anonymous node of least gcp\n"
         "(default), height or dm (suppressed rows fully\n"
         "generalized), or k-minimal: the k-minimal node of least gcp"},
    [ANONKIT_OPT_ALPHA] =
        {"alpha", 0, set_alpha, 0, "A",
         "rothko-s: significance of the split tests (default 0.05)"},
    [ANONKIT_OPT_TEST] =
        {"test", AK_OPTF_JSON_TEXT, set_test, 0, "T",
         "rothko-s: hypothesis (default) or naive (the sample's own counts)"},
    [ANONKIT_OPT_SAMPLE_SIZE] =
        {"sample-size", 0, set_sample_size, 0, "N",
         "rothko-s: rows of the largest sample (default: what --memory holds)"},
    [ANONKIT_OPT_GROWTH_DEPTH] =
        {"growth-depth", 0, set_growth_depth, 0, "D",
         "rothko-s: repartition when the grown tree is D deep\n"
         "(default: when its partitions would fit in memory)"},
    [ANONKIT_OPT_CLASS_ERROR] =
        {"class-error", AK_OPTF_JSON_TEXT, set_text, offsetof(anonkit_job, class_error), "COL",
         "classification error ([Wang06] §6): a C4.5 decision tree for\n"
         "COL grown on the training rows of PUBLISHED over its QIs\n"
         "(each published label a category; a numeric value or\n"
         "interval is its midpoint), its error on the testing rows;\n"
         "the rows are told apart by one of:"},
    [ANONKIT_OPT_TRAIN_ROWS] =
        {"train-rows", 0, set_train_rows, 0, "N",
         "the first N rows of PUBLISHED train, the others test\n"
         "(publish with --keep-order to keep the input's order)"},
    [ANONKIT_OPT_SPLIT_COLUMN] =
        {"split-column", AK_OPTF_JSON_TEXT, set_text, offsetof(anonkit_job, split_column), "COL",
         "a column holding train or test in every row (other\n"
         "columns are published as they are, so any row order)"},
    [ANONKIT_OPT_T] =
        {"t", 0, set_t, 0, "T",
         "t-closeness ([Li07]): the Earth Mover's Distance between every\n"
         "class's sensitive distribution and the table's is at most T"},
    [ANONKIT_OPT_T_DISTANCE] =
        {"t-distance", AK_OPTF_JSON_TEXT, set_t_distance, 0, "D",
         "ground distance of t-closeness: equal, ordered (numeric\n"
         "values) or hierarchical (--hierarchy SENSITIVE=FILE); default:\n"
         "hierarchical with a hierarchy, ordered when numeric, else equal"},
    [ANONKIT_OPT_DELTA_DISCLOSURE] =
        {"delta-disclosure", 0, set_delta_disclosure, 0, "D",
         "delta-disclosure privacy ([Brickell08]): every class holds every\n"
         "sensitive value with a share within a factor e^D of the table's"},
    [ANONKIT_OPT_BETA] =
        {"beta", 0, set_beta, 0, "B",
         "beta-likeness ([Cao12]): no sensitive value's share in a class\n"
         "exceeds its share p in the table by more than B*p"},
    [ANONKIT_OPT_BETA_VARIANT] =
        {"beta-variant", AK_OPTF_JSON_TEXT, set_beta_variant, 0, "V",
         "basic (default) or enhanced (bound min(B, -ln p))"},
    [ANONKIT_OPT_PUBLISHED] =
        {"published", ANONKIT_OPTF_FLAG, set_risk_flag, offsetof(anonkit_job, risk.published), NULL,
         "the file is published: classes are its rows with equal\n"
         "published QI values, as anonkit check forms them"},
    [ANONKIT_OPT_POPULATION] =
        {"population", ANONKIT_OPTF_PATH | AK_OPTF_JSON_TEXT, set_text, offsetof(anonkit_job, risk.population), "FILE",
         "a population table holding the sample, same QI columns:\n"
         "its class sizes give the journalist risk"},
    [ANONKIT_OPT_POPULATION_SIZE] =
        {"population-size", 0, set_population_size, 0, "N",
         "size of the population the table was sampled from\n"
         "(population uniques, individual risk, uniqueness=R)"},
    [ANONKIT_OPT_SAMPLING_FRACTION] =
        {"sampling-fraction", 0, set_sampling_fraction, 0, "F",
         "or: the table's share of the population, in (0, 1]"},
    [ANONKIT_OPT_WEIGHT] =
        {"weight", AK_OPTF_JSON_TEXT, set_text, offsetof(anonkit_job, risk.weight), "COL",
         "sampling-weight column (positive numbers): the individual\n"
         "risk estimates each class's population size by its weights"},
    [ANONKIT_OPT_THRESHOLD] =
        {"threshold", 0, set_threshold, 0, "R",
         "records at risk: those whose risk is above R (default 0.2)"},
    [ANONKIT_OPT_SUDA] =
        {"suda", 0, set_suda, 0, "M",
         "SUDA2: minimal sample uniques of up to M QIs, per record\n"
         "SUDA and DIS-SUDA scores"},
    [ANONKIT_OPT_JSON] =
        {"json", ANONKIT_OPTF_PATH | AK_OPTF_JSON_TEXT, set_text, offsetof(anonkit_job, risk.json), "FILE",
         "write the measures as JSON to FILE (only on success)"},
    [ANONKIT_OPT_ACHIEVED] =
        {"achieved", ANONKIT_OPTF_FLAG, set_risk_flag, offsetof(anonkit_job, risk.achieved), NULL,
         "print the parameters the file achieves: largest k; with\n"
         "--sensitive the largest distinct, entropy and probabilistic l,\n"
         "the least c of recursive (c,l) at each l, the least variance"},
    [ANONKIT_OPT_MAX_RISK] =
        {"max-risk", AK_OPTF_JSON_TEXT, set_max_risk, 0, "KIND=R",
         "re-identification risk at most R: highest=R (every algorithm;\n"
         "k = ceil(1/R)); incognito also average=R (average prosecutor\n"
         "risk) and uniqueness=R (population uniques, see docs/risk.md)"},
    [ANONKIT_OPT_QUERY] =
        {"query", AK_OPTF_JSON_TEXT, set_text, offsetof(anonkit_job, query), "SQL",
         "read the rows of this SELECT (a postgresql:// or sqlite:\n"
         "input) instead of its ?table="},
    [ANONKIT_OPT_REPLACE] =
        {"replace", ANONKIT_OPTF_FLAG, set_int_flag, offsetof(anonkit_job, replace), NULL,
         "a table output (postgresql://, sqlite:) replaces an\n"
         "existing table of its name (else that is refused)"},
    [ANONKIT_OPT_USE_CODES] =
        {"use-codes", ANONKIT_OPTF_FLAG, set_int_flag, offsetof(anonkit_job, use_codes), NULL,
         "read the codes of SPSS/Stata value labels, not the labels"},
    [ANONKIT_OPT_MISSING] =
        {"missing", ANONKIT_OPTF_LIST | ANONKIT_OPTF_REPLACE | AK_OPTF_JSON_TEXT, set_names,
         offsetof(anonkit_job, missing), "T,...",
         "tokens that stand for a missing value, besides the empty\n"
         "cell (docs/hierarchies.md)"},
    [ANONKIT_OPT_INTERVAL_FORMAT] =
        {"interval-format", AK_OPTF_JSON_TEXT, set_interval_format, 0, "F",
         "generalized numbers as range (default: 30-39, -5 - -3)\n"
         "or bracket ([30, 39])"},
    [ANONKIT_OPT_COLUMN] =
        {"column", AK_OPTF_JSON_TEXT, set_text, offsetof(anonkit_job, hbuild.column), "COL",
         "hierarchy: the column to build a hierarchy for"},
    [ANONKIT_OPT_INTERVAL] =
        {"interval", AK_OPTF_JSON_TEXT, set_text, offsetof(anonkit_job, hbuild.interval), "W",
         "hierarchy: intervals of width W"},
    [ANONKIT_OPT_FANOUT] =
        {"fanout", AK_OPTF_JSON_TEXT, set_text, offsetof(anonkit_job, hbuild.fanout), "F,...",
         "hierarchy: groups of F of the level below, one per level"},
    [ANONKIT_OPT_MIN] =
        {"min", AK_OPTF_JSON_TEXT, set_text, offsetof(anonkit_job, hbuild.min), "X",
         "hierarchy --interval: intervals start at X; below it one\n"
         "open-ended range"},
    [ANONKIT_OPT_MAX] =
        {"max", AK_OPTF_JSON_TEXT, set_text, offsetof(anonkit_job, hbuild.max), "X",
         "hierarchy --interval: from X up one open-ended range"},
    [ANONKIT_OPT_QUANTILES] =
        {"quantiles", AK_OPTF_JSON_TEXT, set_text, offsetof(anonkit_job, hbuild.quantiles), "N,F,...",
         "hierarchy: N intervals of equal frequency, then groups\n"
         "of F per level"},
    [ANONKIT_OPT_MASK] =
        {"mask", ANONKIT_OPTF_FLAG, set_flag, offsetof(anonkit_job, hbuild.mask), NULL,
         "hierarchy: mask codes of equal length from the right,\n"
         "one character ('*') per level"},
    [ANONKIT_OPT_LEVELS] =
        {"levels", AK_OPTF_JSON_TEXT, set_text, offsetof(anonkit_job, hbuild.levels), "N",
         "hierarchy --mask: mask at most N characters"},
    [ANONKIT_OPT_DATE] =
        {"date", AK_OPTF_JSON_TEXT, set_text, offsetof(anonkit_job, hbuild.date), "L,...",
         "hierarchy: levels of an ISO-8601 date column, fine to coarse:\n"
         "minute,hour,day,month,quarter,year,decade,century"},
    [ANONKIT_OPT_ORDER] =
        {"order", AK_OPTF_JSON_TEXT, set_text, offsetof(anonkit_job, hbuild.order), "A,B,...",
         "hierarchy: the categories in order, grouped by --fanout"},
    [ANONKIT_OPT_FLAT] =
        {"flat", ANONKIT_OPTF_FLAG, set_flag, offsetof(anonkit_job, hbuild.flat), NULL,
         "hierarchy: every value directly under '*'"},
    [ANONKIT_OPT_PREVIEW] =
        {"preview", ANONKIT_OPTF_FLAG, set_flag, offsetof(anonkit_job, hbuild.preview), NULL,
         "hierarchy: print the distinct labels per level, write nothing"},
    [ANONKIT_OPT_HTML] =
        {"html", ANONKIT_OPTF_PATH | AK_OPTF_JSON_TEXT, set_text, offsetof(anonkit_job, html), "FILE",
         "self-contained HTML release report: checksums, settings,\n"
         "the verifier's verdict on the written file, information\n"
         "loss, risk, charts (docs/report.md)"},
    [ANONKIT_OPT_ORIGINAL] =
        {"original", ANONKIT_OPTF_PATH | AK_OPTF_JSON_TEXT, set_text, offsetof(anonkit_job, original), "FILE",
         "report: the original the published file was made from"},
    [ANONKIT_OPT_PROGRESS] =
        {"progress", ANONKIT_OPTF_FLAG, set_flag, offsetof(anonkit_job, progress_on), NULL,
         "show the progress line on stderr even when it is not a\n"
         "terminal (one line per update there)"},
    [ANONKIT_OPT_NO_PROGRESS] =
        {"no-progress", ANONKIT_OPTF_FLAG, set_flag, offsetof(anonkit_job, progress_off), NULL,
         "never show the progress line (default: shown on a terminal\n"
         "once a run passes one second)"},
};

const ak_option_desc *ak_option_desc_of(anonkit_option o)
{
    return (unsigned)o < ANONKIT_OPT__COUNT ? &options[o] : NULL;
}

const char *anonkit_option_name(anonkit_option option)
{
    const ak_option_desc *d = ak_option_desc_of(option);
    return d ? d->name : "?";
}

unsigned anonkit_option_flags(anonkit_option option)
{
    const ak_option_desc *d = ak_option_desc_of(option);
    return d ? d->flags & (ANONKIT_OPTF_FLAG | ANONKIT_OPTF_LIST | ANONKIT_OPTF_PATH | ANONKIT_OPTF_REPLACE) : 0;
}

const char *anonkit_option_arg(anonkit_option option)
{
    const ak_option_desc *d = ak_option_desc_of(option);
    return d ? d->arg : NULL;
}

const char *anonkit_option_help(anonkit_option option)
{
    const ak_option_desc *d = ak_option_desc_of(option);
    return d ? d->help : NULL;
}

anonkit_option anonkit_option_find(const char *name)
{
    for (int i = 0; name && i < ANONKIT_OPT__COUNT; i++)
        if (!strcmp(options[i].name, name)) return (anonkit_option)i;
    return ANONKIT_OPT__COUNT;
}

/* anonkit_job_set in the C numeric locale. */
static int job_set(anonkit_job *job, anonkit_option option, const char *value)
{
    if (!job) return ANONKIT_E_USAGE;
    if (!value) return job_usage_error(job, "--%s needs a value", anonkit_option_name(option));
    const ak_option_desc *d = ak_option_desc_of(option);
    if (!d) return job_usage_error(job, "unknown option");
    const int rc = d->set(job, d, value);
    /* (how a run is shown is no setting of the release) */
    const int shown_only = option == ANONKIT_OPT_PROGRESS || option == ANONKIT_OPT_NO_PROGRESS;
    if (rc == ANONKIT_OK && *value && !shown_only) { /* remembered for the release report's configuration */
        char *text = malloc(strlen(d->name) + strlen(value) + 4);
        if (!text) return job_out_of_memory(job);
        sprintf(text, "--%s %s", d->name, value);
        const int pushed = strlist_push(&job->settings, text, strlen(text));
        free(text);
        if (pushed != 0) return job_out_of_memory(job);
    }
    return rc;
}

int anonkit_job_set(anonkit_job *job, anonkit_option option, const char *value)
{
    ak_c_numeric scope;
    ak_c_numeric_enter(&scope);
    const int rc = job_set(job, option, value);
    ak_c_numeric_leave(&scope);
    return rc;
}
