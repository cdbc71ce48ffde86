/* published.c — everything that reads a published file: the independent
 * verifier anonkit_check (DESIGN.md §1 step 4) and anonkit_metrics.
 *
 * The verifier knows nothing of how the file was made: it groups the rows by
 * their published QI texts (equal texts = one equivalence class, as an
 * attacker would see it) and tests every group with the model predicates. It
 * shares only the CSV reader, the hash maps and model.c with the algorithms. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/job.h"
#include "api/kl.h"
#include "common/hash.h"
#include "core/numdict.h"
#include "io/csv.h"
#include "io/spool.h"
#include "metrics/classifier.h"
#include "metrics/kl.h"
#include "metrics/metrics.h"

typedef struct pub_groups {
    uint32_t nqi;
    strmap keys;          /* group key: the QI texts, each prefixed by its length */
    uint64_t *count;      /* per group */
    long *first_line;     /* per group: line of its first row */
    size_t cap;
    strmap sensitive;     /* sensitive text -> id */
    u64map pairs;         /* (group << 32 | sensitive id) -> pair id */
    uint32_t *pair_count; /* per pair */
    size_t pair_cap;
    uint64_t rows;
    model_moments *moments; /* per group: numeric sensitive values (variance diversity) */
    int exact;              /* every numeric sensitive value is a small integer */
    uint32_t *row_group;    /* per row, when a class label or target is read */
    uint32_t *row_label;    /* per row: class label id */
    double *row_target;     /* per row: target value */
    uint32_t *row_tree_label; /* per row: label id of the --class-error column */
    unsigned char *row_test;  /* per row: 1 when the --split-column says test */
    size_t row_cap;
    strmap labels;          /* class label text -> id */
    strmap tree_labels;     /* --class-error label text -> id */
} pub_groups;

/* What groups_read gathers besides the groups' sizes. */
typedef struct pub_wants {
    const char *sensitive;  /* histograms of this column (l-diversity) */
    int sensitive_numeric;  /* and sums of its values (variance diversity) */
    const char *class_name; /* per-row class labels */
    const char *target;     /* per-row numeric targets */
    const char *tree_class; /* per-row labels of the classification error's column */
    const char *split;      /* per-row train/test of the classification error */
} pub_wants;

static void groups_free(pub_groups *g)
{
    strmap_free(&g->keys);
    strmap_free(&g->sensitive);
    u64map_free(&g->pairs);
    free(g->count);
    free(g->first_line);
    free(g->pair_count);
    free(g->moments);
    free(g->row_group);
    free(g->row_label);
    free(g->row_target);
    free(g->row_tree_label);
    free(g->row_test);
    strmap_free(&g->labels);
    strmap_free(&g->tree_labels);
    memset(g, 0, sizeof *g);
}

/* Index of the header field named `name`, or -1. */
static int column_index(const csv_record *header, const char *name)
{
    size_t len = strlen(name);
    for (uint32_t c = 0; c < header->count; c++)
        if (header->fields[c].len == len && memcmp(header->fields[c].data, name, len) == 0) return (int)c;
    return -1;
}

static int find_columns(const csv_record *header, const char *shown, const strlist *qi, const char *sensitive,
                        uint32_t *qi_col, int *sens_col, ak_error *err)
{
    for (size_t q = 0; q < qi->count; q++) {
        int c = column_index(header, qi->items[q]);
        if (c < 0)
            return ak_err_set(err, ANONKIT_E_USAGE, shown, 1, 0, "no column named '%s' (given as a quasi-identifier)", qi->items[q]);
        qi_col[q] = (uint32_t)c;
    }
    *sens_col = -1;
    if (sensitive && (*sens_col = column_index(header, sensitive)) < 0)
        return ak_err_set(err, ANONKIT_E_USAGE, shown, 1, 0, "no column named '%s' (given as the sensitive attribute)", sensitive);
    return ANONKIT_OK;
}

/* Index of a named column for `what`, or an error. */
static int named_column(const csv_record *header, const char *shown, const char *name, const char *what, int *col,
                        ak_error *err)
{
    *col = -1;
    if (!name) return ANONKIT_OK;
    if ((*col = column_index(header, name)) < 0)
        return ak_err_set(err, ANONKIT_E_USAGE, shown, 1, 0, "no column named '%s' (given as %s)", name, what);
    return ANONKIT_OK;
}

/* Parses a numeric field for groups_read. */
static int field_number(const csv_field *f, const char *shown, long line, int col, const char *what, double *out,
                        ak_error *err)
{
    if (numdict_parse(f->data, f->len, out) == 0) return ANONKIT_OK;
    return ak_err_set(err, ANONKIT_E_INPUT, shown, line, col + 1, "%s must be numeric but holds '%.*s'", what,
                      (int)(f->len > 60 ? 60 : f->len), f->data);
}

/* Columns of the per-row values groups_read keeps (-1: not wanted). */
typedef struct row_cols {
    int class_col, target_col, tree_col, split_col;
} row_cols;

/* Records row `row`'s group, class label, target, and the label and
 * train/test part of the classification error (per-row arrays). */
static int record_row(pub_groups *g, size_t row, uint32_t group, const csv_record *rec, const row_cols *rc,
                      const char *shown, ak_error *err)
{
    if (row >= g->row_cap) {
        size_t cap = g->row_cap ? g->row_cap * 2 : 65536;
        uint32_t *rg = realloc(g->row_group, cap * sizeof *rg);
        if (!rg) return ak_err_nomem(err);
        g->row_group = rg;
        uint32_t *rl = realloc(g->row_label, cap * sizeof *rl);
        if (!rl) return ak_err_nomem(err);
        g->row_label = rl;
        double *rt = realloc(g->row_target, cap * sizeof *rt);
        if (!rt) return ak_err_nomem(err);
        g->row_target = rt;
        uint32_t *rtl = realloc(g->row_tree_label, cap * sizeof *rtl);
        if (!rtl) return ak_err_nomem(err);
        g->row_tree_label = rtl;
        unsigned char *rte = realloc(g->row_test, cap * sizeof *rte);
        if (!rte) return ak_err_nomem(err);
        g->row_test = rte;
        g->row_cap = cap;
    }
    g->row_group[row] = group;
    g->row_label[row] = 0;
    g->row_target[row] = 0;
    g->row_tree_label[row] = 0;
    g->row_test[row] = 0;
    if (rc->class_col >= 0) {
        const csv_field *f = &rec->fields[rc->class_col];
        if (strmap_intern(&g->labels, f->data, f->len, &g->row_label[row], NULL) != 0) return ak_err_nomem(err);
    }
    if (rc->target_col >= 0)
        AK_CHECK(field_number(&rec->fields[rc->target_col], shown, rec->line, rc->target_col, "the target column",
                              &g->row_target[row], err));
    if (rc->tree_col >= 0) {
        const csv_field *f = &rec->fields[rc->tree_col];
        if (strmap_intern(&g->tree_labels, f->data, f->len, &g->row_tree_label[row], NULL) != 0)
            return ak_err_nomem(err);
    }
    if (rc->split_col >= 0) {
        const csv_field *f = &rec->fields[rc->split_col];
        if (f->len == 4 && !memcmp(f->data, "test", 4)) g->row_test[row] = 1;
        else if (f->len != 5 || memcmp(f->data, "train", 5) != 0)
            return ak_err_set(err, ANONKIT_E_INPUT, shown, rec->line, rc->split_col + 1,
                              "the split column must hold train or test, not '%.*s'",
                              (int)(f->len > 60 ? 60 : f->len), f->data);
    }
    return ANONKIT_OK;
}

/* Reads a published file and groups its rows by their QI texts. */
static int groups_read(pub_groups *g, anonkit_job *job, const char *path, const char *shown, const pub_wants *wants)
{
    memset(g, 0, sizeof *g);
    ak_error *err = &job->err;
    const strlist *qi = &job->qi;
    const char *sensitive = wants->sensitive;
    g->nqi = (uint32_t)qi->count;
    g->exact = 1;
    if (strmap_init(&g->keys, 1024) || strmap_init(&g->sensitive, 64) || u64map_init(&g->pairs, 1024) ||
        strmap_init(&g->labels, 64) || strmap_init(&g->tree_labels, 64))
        return ak_err_nomem(err);
    uint32_t *qi_col = malloc((qi->count ? qi->count : 1) * sizeof *qi_col);
    char *key = NULL;
    size_t key_cap = 0;
    csv_reader *reader = NULL;
    int rc;
    if (!qi_col) return ak_err_nomem(err);
    if ((rc = csv_reader_open(&reader, path, job->delimiter, err)) < 0) goto done;
    csv_record rec;
    if ((rc = csv_read(reader, &rec, err)) < 0) goto done;
    if (rc == 0) {
        rc = ak_err_set(err, ANONKIT_E_INPUT, shown, 1, 0, "the file is empty: a header row is needed");
        goto done;
    }
    const uint32_t ncolumns = rec.count;
    int sens_col = -1;
    if ((rc = find_columns(&rec, shown, qi, sensitive, qi_col, &sens_col, err)) < 0) goto done;
    row_cols cols;
    if ((rc = named_column(&rec, shown, wants->class_name, "the class label", &cols.class_col, err)) < 0) goto done;
    if ((rc = named_column(&rec, shown, wants->target, "the target", &cols.target_col, err)) < 0) goto done;
    if ((rc = named_column(&rec, shown, wants->tree_class, "the class of --class-error", &cols.tree_col, err)) < 0)
        goto done;
    if ((rc = named_column(&rec, shown, wants->split, "the split column", &cols.split_col, err)) < 0) goto done;
    const int per_row = cols.class_col >= 0 || cols.target_col >= 0 || cols.tree_col >= 0;
    for (;;) {
        if ((rc = csv_read(reader, &rec, err)) < 0) goto done;
        if (rc == 0) break;
        if (rec.count != ncolumns) {
            rc = ak_err_set(err, ANONKIT_E_INPUT, shown, rec.line, 0, "expected %u fields as in the header, found %u",
                            ncolumns, rec.count);
            goto done;
        }
        size_t need = 0;
        for (uint32_t q = 0; q < g->nqi; q++) need += 4 + rec.fields[qi_col[q]].len;
        if (need > key_cap) {
            char *bigger = realloc(key, need * 2);
            if (!bigger) { rc = ak_err_nomem(err); goto done; }
            key = bigger;
            key_cap = need * 2;
        }
        size_t at = 0;
        for (uint32_t q = 0; q < g->nqi; q++) {
            const csv_field *f = &rec.fields[qi_col[q]];
            memcpy(key + at, &f->len, 4);
            memcpy(key + at + 4, f->data, f->len);
            at += 4 + f->len;
        }
        uint32_t group;
        int inserted;
        if (strmap_intern(&g->keys, key, at, &group, &inserted) != 0) { rc = ak_err_nomem(err); goto done; }
        if (inserted) {
            if (group >= g->cap) {
                size_t cap = g->cap ? g->cap * 2 : 1024;
                uint64_t *count = realloc(g->count, cap * sizeof *count);
                if (!count) { rc = ak_err_nomem(err); goto done; }
                g->count = count;
                long *lines = realloc(g->first_line, cap * sizeof *lines);
                if (!lines) { rc = ak_err_nomem(err); goto done; }
                g->first_line = lines;
                model_moments *mo = realloc(g->moments, cap * sizeof *mo);
                if (!mo) { rc = ak_err_nomem(err); goto done; }
                g->moments = mo;
                g->cap = cap;
            }
            g->count[group] = 0;
            g->first_line[group] = rec.line;
            memset(&g->moments[group], 0, sizeof g->moments[group]);
        }
        if (per_row && (rc = record_row(g, g->rows, group, &rec, &cols, shown, err)) < 0) goto done;
        if (sens_col >= 0 && wants->sensitive_numeric) {
            double v;
            if ((rc = field_number(&rec.fields[sens_col], shown, rec.line, sens_col, "the sensitive column", &v, err)) < 0)
                goto done;
            model_moments_add(&g->moments[group], v);
            if (!model_value_is_small_integer(v)) g->exact = 0;
        }
        g->count[group]++;
        g->rows++;
        if (sens_col >= 0) {
            const csv_field *f = &rec.fields[sens_col];
            uint32_t value, pair;
            if (strmap_intern(&g->sensitive, f->data, f->len, &value, NULL) != 0 ||
                u64map_intern(&g->pairs, (uint64_t)group << 32 | value, &pair, &inserted) != 0) {
                rc = ak_err_nomem(err);
                goto done;
            }
            if (inserted) {
                if (pair >= g->pair_cap) {
                    size_t cap = g->pair_cap ? g->pair_cap * 2 : 1024;
                    uint32_t *pc = realloc(g->pair_count, cap * sizeof *pc);
                    if (!pc) { rc = ak_err_nomem(err); goto done; }
                    g->pair_count = pc;
                    g->pair_cap = cap;
                }
                g->pair_count[pair] = 0;
            }
            g->pair_count[pair]++;
        }
    }
    rc = ANONKIT_OK;
done:
    csv_reader_free(reader);
    free(qi_col);
    free(key);
    if (rc < 0 && strcmp(err->file, path) == 0) snprintf(err->file, sizeof err->file, "%s", shown);
    return rc;
}

/* Resolves "-" to a spooled copy of stdin. */
static int open_path(anonkit_job *job, const char *path, spool *sp, const char **use, const char **shown)
{
    memset(sp, 0, sizeof *sp);
    *use = path;
    *shown = path;
    if (strcmp(path, "-") != 0) return ANONKIT_OK;
    *shown = "stdin";
    int rc = spool_stream(sp, stdin, &job->err);
    if (rc < 0) return rc;
    *use = sp->path;
    return ANONKIT_OK;
}

/* The group whose QI texts are all "*" (suppressed rows look like this), or AK_NOT_FOUND. */
static uint32_t all_star_group(const pub_groups *g)
{
    char key[8 * 64];
    if (g->nqi > 64) return AK_NOT_FOUND;
    const uint32_t one = 1;
    for (uint32_t q = 0; q < g->nqi; q++) {
        memcpy(key + 5 * q, &one, 4);
        key[5 * q + 4] = '*';
    }
    return strmap_find(&g->keys, key, 5 * (size_t)g->nqi);
}

/* The text of QI q in a group key (each QI text prefixed by its length). */
static const char *key_field(const char *key, uint32_t q, uint32_t *len)
{
    size_t at = 0;
    for (uint32_t i = 0;; i++) {
        memcpy(len, key + at, 4);
        if (i == q) return key + at + 4;
        at += 4 + *len;
    }
}

/* A label text and its id, to number labels in the order of their texts. */
typedef struct label_text {
    const char *text;
    uint32_t len, id;
} label_text;

static int cmp_label_text(const void *a, const void *b)
{
    const label_text *x = a, *y = b;
    const int c = memcmp(x->text, y->text, x->len < y->len ? x->len : y->len);
    return c ? c : (x->len > y->len) - (x->len < y->len);
}

/* Usage errors of --class-error, --train-rows and --split-column. */
static int class_error_usage(anonkit_job *job)
{
    if (!job->class_error && (job->train_rows || job->split_column))
        return ak_err_set(&job->err, ANONKIT_E_USAGE, NULL, 0, 0, "--train-rows and --split-column go with --class-error COL");
    if (job->class_error && !job->train_rows == !job->split_column)
        return ak_err_set(&job->err, ANONKIT_E_USAGE, NULL, 0, 0,
                          "--class-error needs one of --train-rows N (the first N published rows train the tree) "
                          "and --split-column COL (a column of train and test)");
    return ANONKIT_OK;
}

/* The classification error of 004 §6 (--class-error) into root: a C4.5-style
 * tree (src/metrics/classifier.c) over the published QIs — each published
 * text of a categorical QI one category, a numeric QI's published value or
 * interval taken as its midpoint — grown on the training rows and measured on
 * the testing rows (the first --train-rows rows train, or the --split-column
 * says which). Labels are numbered in the order of their texts, so that the
 * result (ties of a majority go to the lowest label) does not depend on the
 * order of the rows. */
static int class_error_metric(anonkit_job *job, const table *t, const pub_groups *g, const char *shown, json_t *root)
{
    ak_error *err = &job->err;
    const size_t n = g->rows;
    const uint32_t nqi = t->nqi, ngroups = g->keys.count;
    if (job->train_rows && job->train_rows >= n)
        return ak_err_set(err, ANONKIT_E_USAGE, shown, 0, 0, "--train-rows %llu leaves no row to test: the file has %zu rows",
                          (unsigned long long)job->train_rows, n);
    unsigned char *numeric = calloc(nqi ? nqi : 1, 1), *is_test = malloc(n ? n : 1);
    uint32_t *ncat = calloc(nqi ? nqi : 1, sizeof *ncat), *gcode = malloc((ngroups ? ngroups : 1) * sizeof *gcode);
    uint32_t **cat = calloc(nqi ? nqi : 1, sizeof *cat);
    double **num = calloc(nqi ? nqi : 1, sizeof *num), *gvalue = malloc((ngroups ? ngroups : 1) * sizeof *gvalue);
    const uint32_t nlabels = g->tree_labels.count;
    label_text *order = malloc((nlabels ? nlabels : 1) * sizeof *order);
    uint32_t *rank = malloc((nlabels ? nlabels : 1) * sizeof *rank), *label = malloc((n ? n : 1) * sizeof *label);
    int rc = 0;
    if (!numeric || !is_test || !ncat || !gcode || !cat || !num || !gvalue || !order || !rank || !label)
        rc = ak_err_nomem(err);
    if (rc == 0) {
        for (uint32_t i = 0; i < nlabels; i++)
            order[i] = (label_text){strmap_key(&g->tree_labels, i), strmap_key_len(&g->tree_labels, i), i};
        qsort(order, nlabels, sizeof *order, cmp_label_text);
        for (uint32_t i = 0; i < nlabels; i++) rank[order[i].id] = i;
        for (size_t r = 0; r < n; r++) label[r] = rank[g->row_tree_label[r]];
    }
    for (uint32_t q = 0; rc == 0 && q < nqi; q++) {
        numeric[q] = t->qi[q].kind == ATTR_NUMERIC;
        if (numeric[q]) {
            if (!(num[q] = malloc((n ? n : 1) * sizeof *num[q]))) rc = ak_err_nomem(err);
            for (uint32_t i = 0; rc == 0 && i < ngroups; i++) {
                uint32_t len;
                const char *text = key_field(strmap_key(&g->keys, i), q, &len);
                double lo, hi;
                if (metrics_numeric_of_published(t, q, text, len, &lo, &hi) != 0)
                    rc = ak_err_set(err, ANONKIT_E_INPUT, shown, g->first_line[i], 0, "'%.*s' is not a published value of '%s'",
                                    (int)(len > 80 ? 80 : len), text, t->qi[q].name);
                else gvalue[i] = lo + (hi - lo) / 2;
            }
            for (size_t r = 0; rc == 0 && r < n; r++) num[q][r] = gvalue[g->row_group[r]];
            continue;
        }
        strmap texts;
        if (strmap_init(&texts, 64) != 0 || !(cat[q] = malloc((n ? n : 1) * sizeof *cat[q]))) rc = ak_err_nomem(err);
        for (uint32_t i = 0; rc == 0 && i < ngroups; i++) {
            uint32_t len;
            const char *text = key_field(strmap_key(&g->keys, i), q, &len);
            if (strmap_intern(&texts, text, len, &gcode[i], NULL) != 0) rc = ak_err_nomem(err);
        }
        ncat[q] = texts.count;
        strmap_free(&texts);
        for (size_t r = 0; rc == 0 && r < n; r++) cat[q][r] = gcode[g->row_group[r]];
    }
    for (size_t r = 0; rc == 0 && r < n; r++) is_test[r] = job->train_rows ? r >= job->train_rows : g->row_test[r];
    class_error ce;
    if (rc == 0) {
        const ctree_data d = {n, nqi, numeric, (const uint32_t *const *)cat, ncat, (const double *const *)num,
                              label, nlabels};
        const ctree_params p = CTREE_DEFAULTS;
        rc = metrics_class_error(&d, is_test, &p, &ce, err);
        if (rc < 0 && err->file[0] == '\0') snprintf(err->file, sizeof err->file, "%s", shown);
    }
    if (rc == 0) {
        json_t *o = json_object();
        json_object_set_new(o, "column", json_string(job->class_error));
        json_object_set_new(o, "train_rows", json_integer((json_int_t)ce.train_rows));
        json_object_set_new(o, "test_rows", json_integer((json_int_t)ce.test_rows));
        json_object_set_new(o, "errors", json_integer((json_int_t)ce.errors));
        json_object_set_new(o, "error", json_real(ce.error));
        json_object_set_new(o, "majority_error", json_real((double)ce.majority_errors / (double)ce.test_rows));
        json_object_set_new(o, "leaves", json_integer((json_int_t)ce.leaves));
        json_object_set_new(root, "class_error", o);
    }
    for (uint32_t q = 0; cat && num && q < nqi; q++) {
        free(cat[q]);
        free(num[q]);
    }
    free(numeric);
    free(is_test);
    free(ncat);
    free(gcode);
    free(cat);
    free(num);
    free(gvalue);
    free(order);
    free(rank);
    free(label);
    return rc;
}

int anonkit_metrics(anonkit_job *job, const char *original_path, const char *published_path, char **out_json)
{
    *out_json = NULL;
    ak_err_clear(&job->err);
    if (!job->qi.count) return ak_err_set(&job->err, ANONKIT_E_USAGE, NULL, 0, 0, "no quasi-identifiers given (--qi)"), job_fail(job);
    if (class_error_usage(job) < 0) return job_fail(job);
    spool sp;
    const char *path, *shown;
    pub_groups g;
    memset(&g, 0, sizeof g);
    table *t = NULL;
    metrics mt;
    memset(&mt, 0, sizeof mt);
    double *weights = NULL, *ncp = NULL;
    job_spec_storage storage = {0};
    table_spec spec;
    int rc = open_path(job, published_path, &sp, &path, &shown);
    if (rc < 0) goto done;
    if ((rc = job_table_spec(job, original_path, original_path, &spec, &storage)) < 0) goto done;
    /* the original is read for its domains only (and its sensitive values for --kl-level) */
    spec.sensitive_name = job->kl_level ? job->sensitive : NULL;
    spec.nidentifiers = 0;
    if ((rc = table_load(&t, &spec, &job->err)) < 0) goto done;
    const pub_wants wants = {NULL, 0, job->class_name, job->target_name, job->class_error,
                             job->class_error ? job->split_column : NULL};
    if ((rc = groups_read(&g, job, path, shown, &wants)) < 0) goto done;
    if ((rc = job_weights(job, &weights)) < 0) goto done;
    if ((rc = metrics_init(&mt, t->nqi, weights, &job->err)) < 0) goto done;
    if (!(ncp = malloc(t->nqi * sizeof *ncp))) { rc = ak_err_nomem(&job->err); goto done; }
    if (g.rows > t->nrows) {
        rc = ak_err_set(&job->err, ANONKIT_E_INPUT, shown, 0, 0, "has %llu rows, more than the %zu of the original",
                        (unsigned long long)g.rows, t->nrows);
        goto done;
    }
    /* As in anonkit_check: with a suppression limit, all-"*" rows within it are suppressed rows. */
    uint32_t star = job->suppression > 0 ? all_star_group(&g) : AK_NOT_FOUND;
    if (star != AK_NOT_FOUND && g.count[star] > model_suppression_limit(job->suppression, g.rows)) star = AK_NOT_FOUND;
    /* A class mean says nothing of the class's extent: no NCP, GCP or continuous distortion for it. */
    const int ncp_known = job->publish != RECODE_MEAN;
    /* 004 §6's distortion, summed over records: a suppressed row counts as every QI at its top */
    double distortion[2] = {0, 0}; /* categorical, continuous */
    const uint64_t unpublished = (star != AK_NOT_FOUND ? g.count[star] : 0) + (t->nrows > g.rows ? t->nrows - g.rows : 0);
    for (uint32_t q = 0; q < t->nqi; q++)
        if (t->qi[q].ncodes)
            distortion[t->qi[q].kind != ATTR_CATEGORICAL] +=
                (double)unpublished * metrics_distortion(t, q, 0, t->qi[q].ncodes - 1);
    if (star != AK_NOT_FOUND) metrics_add_suppressed(&mt, g.count[star]);
    for (uint32_t i = 0; i < g.keys.count; i++) {
        if (i == star) continue;
        const char *key = strmap_key(&g.keys, i);
        size_t at = 0;
        for (uint32_t q = 0; q < t->nqi; q++) {
            uint32_t len, lo, hi;
            memcpy(&len, key + at, 4);
            const int kind = t->qi[q].kind != ATTR_CATEGORICAL; /* distortion[kind] */
            const int extent = ncp_known || !kind;
            if (metrics_ncp_of_published(t, q, key + at + 4, len, &ncp[q]) != 0 ||
                (extent && metrics_range_of_published(t, q, key + at + 4, len, &lo, &hi) != 0)) {
                rc = ak_err_set(&job->err, ANONKIT_E_INPUT, shown, g.first_line[i], 0,
                                "'%.*s' is not a published value of '%s'", (int)(len > 80 ? 80 : len), key + at + 4,
                                t->qi[q].name);
                goto done;
            }
            if (extent) distortion[kind] += (double)g.count[i] * metrics_distortion(t, q, lo, hi);
            at += 4 + len;
        }
        metrics_add_class(&mt, g.count[i], ncp);
    }
    if (t->nrows > g.rows) metrics_add_suppressed(&mt, t->nrows - g.rows);
    metrics_finish(&mt, job->model.k);
    json_t *root = json_object();
    json_object_set_new(root, "rows", json_integer((json_int_t)mt.rows));
    json_object_set_new(root, "rows_published", json_integer((json_int_t)mt.published));
    json_object_set_new(root, "rows_suppressed", json_integer((json_int_t)mt.suppressed));
    json_object_set_new(root, "classes", json_integer((json_int_t)mt.classes));
    json_object_set_new(root, "min_class_size", json_integer((json_int_t)mt.min_class));
    json_object_set_new(root, "mean_class_size", json_real(mt.mean_class));
    json_object_set_new(root, "max_class_size", json_integer((json_int_t)mt.max_class));
    json_object_set_new(root, "k", json_integer((json_int_t)job->model.k));
    json_object_set_new(root, "dm", json_real(mt.dm));
    json_object_set_new(root, "cavg", json_real(mt.cavg));
    json_object_set_new(root, "gcp", json_real(mt.gcp));
    if (!ncp_known) json_object_set(root, "gcp", json_null());
    json_t *per = json_object();
    for (uint32_t q = 0; q < t->nqi; q++)
        json_object_set_new(per, t->qi[q].name,
                            ncp_known || t->qi[q].kind != ATTR_NUMERIC ? json_real(mt.ncp[q]) : json_null());
    json_object_set_new(root, "ncp", per);
    for (int kind = 0; kind < 2; kind++)
        json_object_set_new(root, kind ? "distortion_continuous" : "distortion_categorical",
                            (ncp_known || !kind) && t->nrows ? json_real(distortion[kind] / (double)t->nrows)
                                                             : json_null());
    if (job->class_name || job->target_name) {
        double value;
        if (job->class_name) {
            if ((rc = metrics_conditional_entropy(g.row_group, g.rows, g.row_label, &value, &job->err)) < 0) {
                json_decref(root);
                goto done;
            }
            json_object_set_new(root, "conditional_entropy", json_real(value));
        }
        if (job->target_name) {
            if ((rc = metrics_rmse(g.row_group, g.rows, g.keys.count, g.row_target, &value, &job->err)) < 0) {
                json_decref(root);
                goto done;
            }
            json_object_set_new(root, "rmse", json_real(value));
        }
    }
    if (job->kl_level && (rc = job_kl_metric(job, t, path, shown, root)) < 0) {
        json_decref(root);
        goto done;
    }
    if (job->class_error && (rc = class_error_metric(job, t, &g, shown, root)) < 0) {
        json_decref(root);
        goto done;
    }
    *out_json = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
    json_decref(root);
    rc = *out_json ? ANONKIT_OK : ak_err_nomem(&job->err);
done:
    spool_remove(&sp);
    groups_free(&g);
    table_free(t);
    metrics_free(&mt);
    free(weights);
    free(ncp);
    job_spec_free(&storage);
    return rc < 0 ? job_fail(job) : ANONKIT_OK;
}
