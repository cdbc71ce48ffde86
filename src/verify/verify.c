/* verify.c — the independent verifier (verify.h): reads a published file,
 * groups its rows by their published QI texts and tests every group with the
 * model predicates. Its own grouping; from the rest of anonkit only the CSV
 * reader (with its column lookup and row keys), the spool of standard input, the hash maps,
 * the number reader of common/numparse.h (the syntax and values with which
 * tables are read, so that the verifier tests the values the algorithms
 * tested) and model.c. */
#include "verify/verify.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "common/numparse.h"
#include "io/csv.h"
#include "io/source.h"
#include "io/spool.h"

/* The classes of a published file: its rows grouped by their QI texts. */
typedef struct vgroups {
    strmap keys;          /* group key: the QI texts, each prefixed by its 4-byte length */
    uint64_t *count;      /* per group: rows */
    long *first_line;     /* per group: line of its first row */
    model_moments *moments; /* per group: numeric sensitive values (variance diversity) */
    size_t cap;
    strmap sensitive;     /* sensitive text -> id */
    u64map pairs;         /* (group << 32 | sensitive id) -> pair id */
    uint32_t *pair_count; /* per pair: rows */
    size_t pair_cap;
    uint64_t rows;
    int exact;            /* every numeric sensitive value is a small integer */
} vgroups;

static void vgroups_free(vgroups *g)
{
    strmap_free(&g->keys);
    strmap_free(&g->sensitive);
    u64map_free(&g->pairs);
    free(g->count);
    free(g->first_line);
    free(g->moments);
    free(g->pair_count);
    memset(g, 0, sizeof *g);
}

/* Columns of the QIs into qi_col and of the sensitive attribute (or -1) into
 * *sens_col; a usage error naming the first missing one. */
static int find_columns(const csv_record *header, const char *shown, const verify_params *p, uint32_t *qi_col,
                        int *sens_col, ak_error *err)
{
    AK_CHECK(csv_find_columns(header, shown, p->qi, p->nqi, "a quasi-identifier", qi_col, err));
    *sens_col = -1;
    if (p->sensitive && (*sens_col = csv_column_index(header, p->sensitive)) < 0)
        return ak_err_set(err, ANONKIT_E_USAGE, shown, 1, 0, "no column named '%s' (given as the sensitive attribute)",
                          p->sensitive);
    return ANONKIT_OK;
}

/* Makes room for group `group` (ids are dense, one more at a time). */
static int grow_groups(vgroups *g, uint32_t group, ak_error *err)
{
    if (group < g->cap) return ANONKIT_OK;
    const size_t cap = g->cap ? g->cap * 2 : 1024;
    uint64_t *count = realloc(g->count, cap * sizeof *count);
    if (!count) return ak_err_nomem(err);
    g->count = count;
    long *lines = realloc(g->first_line, cap * sizeof *lines);
    if (!lines) return ak_err_nomem(err);
    g->first_line = lines;
    model_moments *mo = realloc(g->moments, cap * sizeof *mo);
    if (!mo) return ak_err_nomem(err);
    g->moments = mo;
    g->cap = cap;
    return ANONKIT_OK;
}

/* The sensitive field f as counted: every missing value (an empty cell or a
 * token of p->missing) is the one empty value. */
static const csv_field *sensitive_field(const verify_params *p, const csv_field *f)
{
    static const csv_field empty = {"", 0};
    for (size_t i = 0; i < p->nmissing; i++)
        if (strlen(p->missing[i]) == f->len && memcmp(p->missing[i], f->data, f->len) == 0) return &empty;
    return f;
}

/* Counts one row of sensitive text f in `group`. */
static int add_pair(vgroups *g, uint32_t group, const csv_field *f, ak_error *err)
{
    uint32_t value, pair;
    int inserted;
    if (strmap_intern(&g->sensitive, f->data, f->len, &value, NULL) != 0 ||
        u64map_intern(&g->pairs, (uint64_t)group << 32 | value, &pair, &inserted) != 0)
        return ak_err_nomem(err);
    if (inserted) {
        if (pair >= g->pair_cap) {
            const size_t cap = g->pair_cap ? g->pair_cap * 2 : 1024;
            uint32_t *pc = realloc(g->pair_count, cap * sizeof *pc);
            if (!pc) return ak_err_nomem(err);
            g->pair_count = pc;
            g->pair_cap = cap;
        }
        g->pair_count[pair] = 0;
    }
    g->pair_count[pair]++;
    return ANONKIT_OK;
}

/* Reads the file at path (named `shown` in messages) into g: every row's
 * group, and with a sensitive column its histogram per group (and, when
 * `numeric`, its sums for the variance). */
static int vgroups_read(vgroups *g, const verify_params *p, const char *path, const char *shown, int numeric,
                        ak_error *err)
{
    memset(g, 0, sizeof *g);
    g->exact = 1;
    if (strmap_init(&g->keys, 1024) || strmap_init(&g->sensitive, 64) || u64map_init(&g->pairs, 1024))
        return ak_err_nomem(err);
    uint32_t *qi_col = malloc((p->nqi ? p->nqi : 1) * sizeof *qi_col);
    char *key = NULL;
    size_t key_cap = 0;
    csv_reader *reader = NULL;
    int rc;
    if (!qi_col) return ak_err_nomem(err);
    if ((rc = p->table ? csv_reader_open_table(&reader, p->table, shown, err)
                       : csv_reader_open(&reader, path, p->delimiter, err)) < 0)
        goto done;
    csv_record rec;
    if ((rc = csv_read(reader, &rec, err)) < 0) goto done;
    if (rc == 0) {
        rc = ak_err_set(err, ANONKIT_E_INPUT, shown, 1, 0, "the file is empty: a header row is needed");
        goto done;
    }
    const uint32_t ncolumns = rec.count;
    int sens_col = -1;
    if ((rc = find_columns(&rec, shown, p, qi_col, &sens_col, err)) < 0) goto done;
    for (;;) {
        if ((rc = csv_read(reader, &rec, err)) < 0) goto done;
        if (rc == 0) break;
        if (rec.count != ncolumns) {
            rc = ak_err_set(err, ANONKIT_E_INPUT, shown, rec.line, 0, "expected %u fields as in the header, found %u",
                            ncolumns, rec.count);
            goto done;
        }
        size_t len = 0;
        if ((rc = csv_row_key(&rec, qi_col, p->nqi, &key, &key_cap, &len, err)) < 0) goto done;
        uint32_t group;
        int inserted;
        if (strmap_intern(&g->keys, key, len, &group, &inserted) != 0) { rc = ak_err_nomem(err); goto done; }
        if (inserted) {
            if ((rc = grow_groups(g, group, err)) < 0) goto done;
            g->count[group] = 0;
            g->first_line[group] = rec.line;
            memset(&g->moments[group], 0, sizeof g->moments[group]);
        }
        if (sens_col >= 0 && numeric) {
            const csv_field *f = &rec.fields[sens_col];
            double v = 0;
            const int not_number = ak_num_parse(f->data, f->len, &v) != 0;
            if (not_number && numeric == 2) { /* verify_classes: a text column has no variance */
                numeric = 0;
                g->exact = -1;
            } else if (not_number) {
                rc = ak_err_set(err, ANONKIT_E_INPUT, shown, rec.line, sens_col + 1,
                                "the sensitive column must be numeric but holds '%s'",
                                AK_SHOW(f->data, f->len));
                goto done;
            }
            if (numeric) {
                model_moments_add(&g->moments[group], v);
                if (!model_value_is_small_integer(v)) g->exact = 0;
            }
        }
        g->count[group]++;
        g->rows++;
        if (sens_col >= 0 && (rc = add_pair(g, group, sensitive_field(p, &rec.fields[sens_col]), err)) < 0) goto done;
    }
    rc = ANONKIT_OK;
done:
    csv_reader_free(reader);
    free(qi_col);
    free(key);
    if (rc < 0 && strcmp(err->file, path) == 0) snprintf(err->file, sizeof err->file, "%s", shown);
    return rc;
}

/* Writes "a=x, b=y" for a group key into buf. */
static void describe_group(const vgroups *g, const verify_params *p, uint32_t group, char *buf, size_t size)
{
    const char *key = strmap_key(&g->keys, group);
    size_t used = 0, at = 0;
    buf[0] = '\0';
    for (size_t q = 0; q < p->nqi && used < size; q++) {
        uint32_t len;
        memcpy(&len, key + at, 4);
        const int n = snprintf(buf + used, size - used, "%s%s=%.*s", q ? ", " : "", p->qi[q],
                               (int)(len > 80 ? 80 : len), key + at + 4);
        if (n < 0) break;
        used += (size_t)n;
        at += 4 + len;
    }
}

/* The group whose QI texts are all "*" (suppressed rows look like this), or AK_NOT_FOUND. */
static uint32_t all_star_group(const vgroups *g, size_t nqi)
{
    char key[8 * 64];
    if (nqi > 64) return AK_NOT_FOUND;
    const uint32_t one = 1;
    for (size_t q = 0; q < nqi; q++) {
        memcpy(key + 5 * q, &one, 4);
        key[5 * q + 4] = '*';
    }
    return strmap_find(&g->keys, key, 5 * nqi);
}

/* Usage errors of the parameters themselves. */
static int check_params(const verify_params *p, ak_error *err)
{
    if (!p->nqi) return ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0, "no quasi-identifiers given (--qi)");
    if (p->model.l > 0 && !p->sensitive)
        return ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0, "--l needs a sensitive column (--sensitive)");
    if (p->model.variance > 0 && !p->sensitive)
        return ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0, "--variance needs a numeric sensitive column (--sensitive)");
    if (model_has_dist(&p->model) && !p->sensitive)
        return ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0,
                          "--t, --delta-disclosure and --beta need a sensitive column (--sensitive)");
    return model_validate(&p->model, err);
}

/* The per-group sensitive histograms of g laid out by group: the counts of
 * group i are (*counts)[(*start)[i] .. (*start)[i+1]). */
static int histograms(const vgroups *g, uint32_t **start, uint32_t **counts, uint32_t **codes, ak_error *err)
{
    const size_t ngroups = g->keys.count, npairs = g->pairs.count;
    uint32_t *fill = calloc(ngroups + 1, sizeof *fill);
    *start = calloc(ngroups + 1, sizeof **start);
    *counts = malloc((npairs ? npairs : 1) * sizeof **counts);
    *codes = malloc((npairs ? npairs : 1) * sizeof **codes);
    if (!fill || !*start || !*counts || !*codes) {
        free(fill);
        return ak_err_nomem(err);
    }
    for (size_t p = 0; p < npairs; p++) (*start)[(g->pairs.id_keys[p] >> 32) + 1]++;
    for (size_t i = 0; i < ngroups; i++) (*start)[i + 1] += (*start)[i];
    for (size_t p = 0; p < npairs; p++) {
        const uint32_t group = (uint32_t)(g->pairs.id_keys[p] >> 32);
        (*codes)[(*start)[group] + fill[group]] = (uint32_t)g->pairs.id_keys[p];
        (*counts)[(*start)[group] + fill[group]++] = g->pair_count[p];
    }
    free(fill);
    return ANONKIT_OK;
}

/* The table-wide reference distribution of the file (model/closeness.h): the
 * counts of every sensitive text over all rows. */
static int build_reference(const vgroups *g, const verify_params *p, const uint32_t *counts, const uint32_t *codes,
                           model_ref **ref, ak_error *err)
{
    const uint32_t nv = g->sensitive.count;
    uint64_t *total = calloc(nv ? nv : 1, sizeof *total);
    if (!total) return ak_err_nomem(err);
    for (size_t i = 0; i < g->pairs.count; i++) total[codes[i]] += counts[i];
    const int rc = model_ref_for(&p->model.dist, &g->sensitive, total, p->sensitive, ref, err);
    free(total);
    return rc;
}

/* Tests every class of g; the first that violates the model is reported. */
static int test_classes(const vgroups *g, const verify_params *p, const char *shown, verify_counts *out,
                        verify_dist_achieved *ach, ak_error *err)
{
    const model *m = &p->model;
    const size_t ngroups = g->keys.count;
    uint32_t *start = NULL, *counts = NULL, *codes = NULL;
    model_ref *ref = NULL;
    model_work *work = NULL;
    uint32_t *scratch = malloc((g->pairs.count ? g->pairs.count : 1) * sizeof *scratch);
    int rc = scratch ? histograms(g, &start, &counts, &codes, err) : ak_err_nomem(err);
    if (rc < 0) goto done;
    if (model_has_dist(m)) { /* the reference: every row of the file, suppressed rows too */
        rc = build_reference(g, p, counts, codes, &ref, err);
        if (rc == ANONKIT_OK && !(work = model_work_new(ref))) rc = ak_err_nomem(err);
        if (rc < 0) goto done;
        if (ach) model_achieved_init(&ach->a);
    }
    /* With a suppression limit, the all-"*" rows are suppressed rows when they are at most the
     * limit; more of them must satisfy the model as a class (the top of a lattice). */
    const uint32_t star = p->suppression > 0 ? all_star_group(g, p->nqi) : AK_NOT_FOUND;
    const uint64_t limit = model_suppression_limit(p->suppression, g->rows);
    uint64_t suppressed = 0, classes = ngroups;
    if (star != AK_NOT_FOUND && g->count[star] <= limit) {
        suppressed = g->count[star];
        classes--;
    }
    for (uint32_t i = 0; i < ngroups; i++) {
        if (i == star && suppressed) continue;
        char why[256];
        int holds = model_explain(m, g->count[i], counts + start[i], start[i + 1] - start[i], scratch, why, sizeof why);
        if (holds && !model_variance_holds(m, &g->moments[i], g->exact)) {
            holds = 0;
            snprintf(why, sizeof why, "variance of the sensitive values %.6Lg < %g",
                     model_moments_variance(&g->moments[i], g->exact), m->variance);
        }
        if (ref) {
            const size_t n = start[i + 1] - start[i];
            if (holds)
                holds = model_dist_explain(&m->dist, ref, work, g->count[i], codes + start[i], counts + start[i], n, why,
                                           sizeof why);
            if (ach) model_achieved_add(&ach->a, ref, work, g->count[i], codes + start[i], counts + start[i], n);
        }
        if (holds) continue;
        if (i == star) {
            rc = ak_err_set(err, ANONKIT_E_VIOLATION, shown, g->first_line[i], 0,
                            "%llu rows have every quasi-identifier '*', more than the %llu that --suppression %g "
                            "allows of %llu rows, and as a class they violate the privacy model: %s",
                            (unsigned long long)g->count[i], (unsigned long long)limit, p->suppression,
                            (unsigned long long)g->rows, why);
            goto done;
        }
        char desc[600];
        describe_group(g, p, i, desc, sizeof desc);
        rc = ak_err_set(err, ANONKIT_E_VIOLATION, shown, g->first_line[i], 0,
                        "class (%s) of %llu rows violates the privacy model: %s", desc,
                        (unsigned long long)g->count[i], why);
        goto done;
    }
    if (out) *out = (verify_counts){classes, g->rows, suppressed};
    if (ach) {
        ach->has = ref != NULL;
        ach->t_distance = ref ? model_ref_distance(ref) : 0;
    }
    rc = ANONKIT_OK;
done:
    model_work_free(work);
    model_ref_free(ref);
    free(codes);
    free(start);
    free(counts);
    free(scratch);
    return rc;
}

/* Makes p->published readable by the CSV reader: standard input is spooled
 * (sp), a table or statistics file is read into a private spool (in, io/source.h),
 * a CSV file is read as it is. *path and *shown are what to read and its name. */
static int open_published(const verify_params *p, spool *sp, source_input *in, const char **path, const char **shown,
                          ak_error *err)
{
    memset(in, 0, sizeof *in);
    *path = *shown = p->published;
    if (p->table) return ANONKIT_OK; /* read as it is, through the reader's table backend */
    if (strcmp(p->published, "-") == 0) {
        *shown = "stdin";
        AK_CHECK(spool_stream_in(sp, stdin, p->tmpdir, err));
        *path = sp->path;
    } else if (source_is_special(p->published)) {
        const source_options so = {.delimiter = p->delimiter ? p->delimiter : ',', .query = p->query,
                                   .use_codes = p->use_codes, .tmpdir = p->tmpdir};
        AK_CHECK(source_input_open(in, p->published, &so, 0, err));
        *path = in->path;
        *shown = in->shown;
    }
    return ANONKIT_OK;
}

int verify_published(const verify_params *p, verify_counts *out, ak_error *err)
{
    return verify_published_achieved(p, out, NULL, err);
}

int verify_published_achieved(const verify_params *p, verify_counts *out, verify_dist_achieved *achieved, ak_error *err)
{
    if (achieved) memset(achieved, 0, sizeof *achieved);
    AK_CHECK(check_params(p, err));
    spool sp;
    memset(&sp, 0, sizeof sp);
    const char *path = p->published, *shown = p->published;
    vgroups g;
    memset(&g, 0, sizeof g);
    source_input in;
    int rc = open_published(p, &sp, &in, &path, &shown, err);
    if (rc < 0) goto done;
    const int needs = model_needs_sensitive(&p->model);
    const verify_params use = {p->published, p->delimiter, p->qi, p->nqi, needs ? p->sensitive : NULL, p->model,
                               p->suppression, p->tmpdir, p->query, p->use_codes, p->missing, p->nmissing, p->table};
    if ((rc = vgroups_read(&g, &use, path, shown, p->model.variance > 0, err)) < 0) goto done;
    rc = test_classes(&g, p, shown, out, achieved, err);
done:
    spool_remove(&sp);
    source_input_close(&in);
    vgroups_free(&g);
    return rc;
}

/* verify_classes (verify.h): the classes of a published file as the verifier
 * forms them, handed one by one to the caller (check --achieved, achieved.c). */
int verify_classes(const verify_params *p, verify_class_fn fn, void *ctx, verify_counts *out, ak_error *err)
{
    if (!p->nqi) return ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0, "no quasi-identifiers given (--qi)");
    spool sp;
    memset(&sp, 0, sizeof sp);
    const char *path = p->published, *shown = p->published;
    vgroups g;
    memset(&g, 0, sizeof g);
    uint32_t *start = NULL, *counts = NULL, *codes = NULL;
    source_input in;
    int rc = open_published(p, &sp, &in, &path, &shown, err);
    if (rc < 0) goto done;
    if ((rc = vgroups_read(&g, p, path, shown, p->sensitive ? 2 : 0, err)) < 0) goto done;
    if ((rc = histograms(&g, &start, &counts, &codes, err)) < 0) goto done;
    const uint32_t star = p->suppression > 0 ? all_star_group(&g, p->nqi) : AK_NOT_FOUND;
    const uint64_t limit = model_suppression_limit(p->suppression, g.rows);
    uint64_t suppressed = 0, classes = g.keys.count;
    if (star != AK_NOT_FOUND && g.count[star] <= limit) {
        suppressed = g.count[star];
        classes--;
    }
    for (uint32_t i = 0; i < g.keys.count; i++) {
        if (i == star && suppressed) continue;
        const verify_class c = {g.count[i], counts + start[i], start[i + 1] - start[i],
                                p->sensitive && g.exact >= 0 ? &g.moments[i] : NULL, g.exact > 0};
        if ((rc = fn(ctx, &c, err)) < 0) goto done;
    }
    if (out) *out = (verify_counts){classes, g.rows, suppressed};
done:
    free(codes);
    free(start);
    free(counts);
    spool_remove(&sp);
    source_input_close(&in);
    vgroups_free(&g);
    return rc;
}
