/* options_set.c — the setters behind the option table (options.c): the
 * parsers of option values and one setter per option or kind of option
 * (declared in options_set.h). */
#include "api/options_set.h"

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
int opt_set_text(anonkit_job *job, const ak_option_desc *d, const char *value)
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
int opt_set_names(anonkit_job *job, const ak_option_desc *d, const char *value)
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

int opt_set_hierarchy(anonkit_job *job, const ak_option_desc *d, const char *value)
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

int opt_set_k(anonkit_job *job, const ak_option_desc *d, const char *value)
{
    (void)d;
    if (parse_range(value, 1, UINT64_MAX, &job->model.k) != 0)
        return job_usage_error(job, "--k must be a whole number of at least 1, not '%s'", value);
    job->k_set = 1;
    return ANONKIT_OK;
}

int opt_set_l(anonkit_job *job, const ak_option_desc *d, const char *value)
{
    (void)d;
    double l;
    if (parse_double(value, &l) != 0 || l < 1) return job_usage_error(job, "--l must be a number of at least 1, not '%s'", value);
    job->model.l = l;
    return ANONKIT_OK;
}

int opt_set_l_variant(anonkit_job *job, const ak_option_desc *d, const char *value)
{
    (void)d;
    unsigned bits;
    if (model_parse_variants(value, &bits) != 0)
        return job_usage_error(job, "--l-variant: '%s' is not one of %s", value, "distinct, entropy, recursive, probabilistic");
    job->model.l_variants = bits;
    job->l_variant_set = 1;
    return ANONKIT_OK;
}

int opt_set_c(anonkit_job *job, const ak_option_desc *d, const char *value)
{
    (void)d;
    double c;
    if (parse_double(value, &c) != 0 || !(c > 0)) return job_usage_error(job, "--c must be a positive number, not '%s'", value);
    job->model.c = c;
    return ANONKIT_OK;
}

int opt_set_t(anonkit_job *job, const ak_option_desc *d, const char *value)
{
    (void)d;
    double t;
    if (parse_double(value, &t) != 0 || !(t >= 0 && t <= 1))
        return job_usage_error(job, "--t must be a number in [0, 1], not '%s'", value);
    job->model.dist.t = t;
    return ANONKIT_OK;
}

int opt_set_t_distance(anonkit_job *job, const ak_option_desc *d, const char *value)
{
    (void)d;
    if (model_parse_t_distance(value, &job->model.dist.t_distance) != 0)
        return job_usage_error(job, "--t-distance: '%s' is not one of equal, ordered, hierarchical", value);
    return ANONKIT_OK;
}

int opt_set_delta_disclosure(anonkit_job *job, const ak_option_desc *d, const char *value)
{
    (void)d;
    double x;
    if (parse_double(value, &x) != 0 || !(x > 0))
        return job_usage_error(job, "--delta-disclosure must be a positive number, not '%s'", value);
    job->model.dist.delta = x;
    return ANONKIT_OK;
}

int opt_set_beta(anonkit_job *job, const ak_option_desc *d, const char *value)
{
    (void)d;
    double x;
    if (parse_double(value, &x) != 0 || !(x > 0)) return job_usage_error(job, "--beta must be a positive number, not '%s'", value);
    job->model.dist.beta = x;
    return ANONKIT_OK;
}

int opt_set_beta_variant(anonkit_job *job, const ak_option_desc *d, const char *value)
{
    (void)d;
    if (model_parse_beta_variant(value, &job->model.dist.beta_variant) != 0)
        return job_usage_error(job, "--beta-variant: '%s' is not one of basic, enhanced", value);
    return ANONKIT_OK;
}

int opt_set_algorithm(anonkit_job *job, const ak_option_desc *d, const char *value)
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

int opt_set_seed(anonkit_job *job, const ak_option_desc *d, const char *value)
{
    (void)d;
    if (parse_u64(value, &job->seed) != 0) return job_usage_error(job, "--seed must be a whole number, not '%s'", value);
    job->seed_set = 1;
    return ANONKIT_OK;
}

int opt_set_keep_order(anonkit_job *job, const ak_option_desc *d, const char *value)
{
    (void)d;
    if (parse_bool(value, &job->keep_order) != 0)
        return job_usage_error(job, "--keep-order: expected true or false, not '%s'", value);
    return ANONKIT_OK;
}

/* --replace and --use-codes: a flag at d->offset. */
int opt_set_int_flag(anonkit_job *job, const ak_option_desc *d, const char *value)
{
    if (parse_bool(value, (int *)field(job, d)) != 0)
        return job_usage_error(job, "--%s: expected true or false, not '%s'", d->name, value);
    return ANONKIT_OK;
}

int opt_set_delimiter(anonkit_job *job, const ak_option_desc *d, const char *value)
{
    (void)d;
    if (!strcmp(value, "\\t") || !strcmp(value, "tab")) value = "\t";
    if (strlen(value) != 1 || value[0] == '"' || value[0] == '\n' || value[0] == '\r')
        return job_usage_error(job, "--delimiter must be one character (not a quote or line end), not '%s'", value);
    job->delimiter = value[0];
    return ANONKIT_OK;
}

/* Appends ATTR=WEIGHT pairs, comma separated. */
int opt_set_weights(anonkit_job *job, const ak_option_desc *d, const char *value)
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

int opt_set_job(anonkit_job *job, const ak_option_desc *d, const char *value)
{
    (void)d;
    return job_load_file(job, value);
}

int opt_set_threads(anonkit_job *job, const ak_option_desc *d, const char *value)
{
    (void)d;
    uint64_t n;
    if (parse_range(value, 0, 1024, &n) != 0)
        return job_usage_error(job, "--threads must be a whole number from 0 (one per core) to 1024, not '%s'", value);
    job->threads = (unsigned)n;
    return ANONKIT_OK;
}

int opt_set_split(anonkit_job *job, const ak_option_desc *d, const char *value)
{
    (void)d;
    if (mdr_parse_split(value, &job->split) != 0)
        return job_usage_error(job, "--split: '%s' is not one of median, infogain, regression", value);
    return ANONKIT_OK;
}

int opt_set_min_gain(anonkit_job *job, const ak_option_desc *d, const char *value)
{
    (void)d;
    if (parse_double(value, &job->min_gain) != 0 || job->min_gain < 0)
        return job_usage_error(job, "--min-gain must be a number >= 0, not '%s'", value);
    return ANONKIT_OK;
}

int opt_set_variance(anonkit_job *job, const ak_option_desc *d, const char *value)
{
    (void)d;
    double v;
    if (parse_double(value, &v) != 0 || !(v >= 0)) return job_usage_error(job, "--variance must be a number >= 0, not '%s'", value);
    job->model.variance = v;
    return ANONKIT_OK;
}

int opt_set_publish(anonkit_job *job, const ak_option_desc *d, const char *value)
{
    (void)d;
    if (recode_parse_style(value, &job->publish) != 0)
        return job_usage_error(job, "--publish: '%s' is not one of generalize, range, mean", value);
    return ANONKIT_OK;
}

int opt_set_memory(anonkit_job *job, const ak_option_desc *d, const char *value)
{
    (void)d;
    if (rothko_parse_size(value, &job->memory) != 0 || job->memory < 1024)
        return job_usage_error(job, "--memory must be a size of at least 1K such as 64M or 2G, not '%s'", value);
    return ANONKIT_OK;
}

int opt_set_fcache(anonkit_job *job, const ak_option_desc *d, const char *value)
{
    (void)d;
    uint64_t n;
    if (parse_range(value, 0, 1u << 20, &n) != 0)
        return job_usage_error(job, "--fcache must be a whole number from 0 (as many as fit) to 1048576, not '%s'", value);
    job->rothko.fcache = (unsigned)n;
    return ANONKIT_OK;
}

int opt_set_block_size(anonkit_job *job, const ak_option_desc *d, const char *value)
{
    (void)d;
    size_t *b = &job->rothko.block_size;
    if (rothko_parse_size(value, b) != 0 || *b < 512 || *b > ((size_t)64 << 20))
        return job_usage_error(job, "--block-size must be a size from 512 to 64M such as 256K, not '%s'", value);
    return ANONKIT_OK;
}

/* An earlier release: appends one path ("" empties the list). */
int opt_set_previous(anonkit_job *job, const ak_option_desc *d, const char *value)
{
    (void)d;
    if (!*value) return strlist_free(&job->previous), ANONKIT_OK;
    return strlist_push(&job->previous, value, strlen(value)) != 0 ? job_out_of_memory(job) : ANONKIT_OK;
}

int opt_set_anonymity(anonkit_job *job, const ak_option_desc *d, const char *value)
{
    (void)d;
    if (parse_range(value, 1, UINT64_MAX, &job->xy.k) != 0)
        return job_usage_error(job, "--anonymity must be a whole number of at least 1, not '%s'", value);
    job->xy.kind = XY_ANONYMITY;
    return ANONKIT_OK;
}

int opt_set_linkability(anonkit_job *job, const ak_option_desc *d, const char *value)
{
    (void)d;
    if (parse_double(value, &job->xy.p) != 0 || !(job->xy.p > 0 && job->xy.p <= 1))
        return job_usage_error(job, "--linkability must be a number in (0, 1], not '%s'", value);
    job->xy.kind = XY_LINKABILITY;
    return ANONKIT_OK;
}

int opt_set_score(anonkit_job *job, const ak_option_desc *d, const char *value)
{
    (void)d;
    if (strcmp(value, "entropy") && strcmp(value, "distortion"))
        return job_usage_error(job, "--score: '%s' is not one of entropy, distortion", value);
    job->score_distortion = !strcmp(value, "distortion");
    return ANONKIT_OK;
}

int opt_set_bits(anonkit_job *job, const ak_option_desc *d, const char *value)
{
    (void)d;
    uint64_t n;
    if (parse_range(value, 1, HIL_MAX_BITS, &n) != 0)
        return job_usage_error(job, "--bits must be a whole number from 1 to %d, not '%s'", HIL_MAX_BITS, value);
    job->onedim.bits = (unsigned)n;
    return ANONKIT_OK;
}

int opt_set_centers(anonkit_job *job, const ak_option_desc *d, const char *value)
{
    (void)d;
    uint64_t n;
    if (parse_range(value, 1, 1000000, &n) != 0)
        return job_usage_error(job, "--centers must be a whole number from 1 to 1000000, not '%s'", value);
    job->onedim.centers = (unsigned)n;
    return ANONKIT_OK;
}

int opt_set_kl_level(anonkit_job *job, const ak_option_desc *d, const char *value)
{
    (void)d;
    uint64_t n;
    if (parse_range(value, 1, 64, &n) != 0)
        return job_usage_error(job, "--kl-level must be a whole number from 1 to the number of QIs, not '%s'", value);
    job->kl_level = (unsigned)n;
    return ANONKIT_OK;
}

int opt_set_suppression(anonkit_job *job, const ak_option_desc *d, const char *value)
{
    (void)d;
    if (parse_double(value, &job->suppression) != 0 || job->suppression < 0 || job->suppression > 1)
        return job_usage_error(job, "--suppression must be a share of the rows from 0 to 1, not '%s'", value);
    job->incognito.given |= 1;
    return ANONKIT_OK;
}

int opt_set_incognito_variant(anonkit_job *job, const ak_option_desc *d, const char *value)
{
    (void)d;
    if (inc_parse_variant(value, &job->incognito.variant) != 0)
        return job_usage_error(job, "--incognito-variant: '%s' is not one of %s", value,
                               "optimal, exhaustive, basic, super-roots, cube, binary-search, bottom-up, bottom-up-norollup");
    job->incognito.given |= 2;
    return ANONKIT_OK;
}

int opt_set_choose(anonkit_job *job, const ak_option_desc *d, const char *value)
{
    (void)d;
    if (inc_parse_choose(value, &job->incognito.choose) != 0)
        return job_usage_error(job, "--choose: '%s' is not one of gcp, height, dm, k-minimal", value);
    job->incognito.given |= 4;
    return ANONKIT_OK;
}

int opt_set_alpha(anonkit_job *job, const ak_option_desc *d, const char *value)
{
    (void)d;
    double *a = &job->rothko.alpha;
    if (parse_double(value, a) != 0 || !(*a > 0 && *a < 1))
        return job_usage_error(job, "--alpha must be a number strictly between 0 and 1, not '%s'", value);
    return ANONKIT_OK;
}

int opt_set_test(anonkit_job *job, const ak_option_desc *d, const char *value)
{
    (void)d;
    if (sample_test_parse(value, &job->rothko.test) != 0)
        return job_usage_error(job, "--test: '%s' is not one of hypothesis, naive", value);
    return ANONKIT_OK;
}

int opt_set_sample_size(anonkit_job *job, const ak_option_desc *d, const char *value)
{
    (void)d;
    if (parse_range(value, 1, UINT64_MAX, &job->rothko.sample_size) != 0)
        return job_usage_error(job, "--sample-size must be a whole number of rows >= 1, not '%s'", value);
    return ANONKIT_OK;
}

int opt_set_growth_depth(anonkit_job *job, const ak_option_desc *d, const char *value)
{
    (void)d;
    uint64_t n;
    if (parse_range(value, 1, 64, &n) != 0)
        return job_usage_error(job, "--growth-depth must be a whole number from 1 to 64, not '%s'", value);
    job->rothko.growth_depth = (uint32_t)n;
    return ANONKIT_OK;
}

int opt_set_train_rows(anonkit_job *job, const ak_option_desc *d, const char *value)
{
    (void)d;
    if (parse_range(value, 1, UINT64_MAX, &job->train_rows) != 0)
        return job_usage_error(job, "--train-rows must be a whole number of at least 1, not '%s'", value);
    return ANONKIT_OK;
}

/* ---- re-identification risk (docs/risk.md) ---- */

int opt_set_risk_flag(anonkit_job *job, const ak_option_desc *d, const char *value)
{
    int *slot = field(job, d);
    if (parse_bool(value, slot) != 0) return job_usage_error(job, "--%s: expected true or false, not '%s'", d->name, value);
    return ANONKIT_OK;
}

int opt_set_population_size(anonkit_job *job, const ak_option_desc *d, const char *value)
{
    (void)d;
    double n;
    if (parse_double(value, &n) != 0 || !(n >= 1))
        return job_usage_error(job, "--population-size must be a number of at least 1, not '%s'", value);
    job->risk.population_size = n;
    return ANONKIT_OK;
}

int opt_set_sampling_fraction(anonkit_job *job, const ak_option_desc *d, const char *value)
{
    (void)d;
    double f;
    if (parse_double(value, &f) != 0 || !(f > 0 && f <= 1))
        return job_usage_error(job, "--sampling-fraction must be a number in (0, 1], not '%s'", value);
    job->risk.sampling_fraction = f;
    return ANONKIT_OK;
}

int opt_set_threshold(anonkit_job *job, const ak_option_desc *d, const char *value)
{
    (void)d;
    double t;
    if (parse_double(value, &t) != 0 || !(t >= 0 && t <= 1))
        return job_usage_error(job, "--threshold must be a risk from 0 to 1, not '%s'", value);
    job->risk.threshold = t;
    job->risk.threshold_set = 1;
    return ANONKIT_OK;
}

int opt_set_suda(anonkit_job *job, const ak_option_desc *d, const char *value)
{
    (void)d;
    uint64_t m;
    if (parse_range(value, 1, 64, &m) != 0)
        return job_usage_error(job, "--suda must be a whole number of attributes from 1 to the number of QIs, not '%s'", value);
    job->risk.suda = (unsigned)m;
    return ANONKIT_OK;
}

/* KIND=R[,KIND=R...], KIND one of average, highest, uniqueness, 0 < R <= 1. */
int opt_set_max_risk(anonkit_job *job, const ak_option_desc *d, const char *value)
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

/* An on/off setting (an int at d->offset). */
int opt_set_flag(anonkit_job *job, const ak_option_desc *d, const char *value)
{
    if (parse_bool(value, field(job, d)) != 0)
        return job_usage_error(job, "--%s: expected true or false, not '%s'", d->name, value);
    return ANONKIT_OK;
}

int opt_set_interval_format(anonkit_job *job, const ak_option_desc *d, const char *value)
{
    (void)d;
    ak_interval_style style;
    if (ak_interval_parse_style(value, &style) != 0)
        return job_usage_error(job, "--interval-format: expected range or bracket, not '%s'", value);
    job->interval_format = (int)style;
    return ANONKIT_OK;
}
