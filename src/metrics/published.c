/* published.c — the metrics of a published file read against its original
 * (published.h): groups the published rows by their QI texts, maps every
 * published text back onto the original's codes and measures DM, C_AVG, GCP,
 * NCP, the distortion, the workload's conditional entropy and RMSE, the
 * KL-divergence of a datacube level and the classification error. */
#include "metrics/published.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/numparse.h"
#include "core/numdict.h"
#include "io/csv.h"
#include "metrics/kl.h"
#include "model/model.h"

void metrics_pub_groups_free(metrics_pub_groups *g)
{
    strmap_free(&g->keys);
    free(g->count);
    free(g->first_line);
    free(g->row_group);
    free(g->row_label);
    free(g->row_target);
    free(g->row_tree_label);
    free(g->row_test);
    strmap_free(&g->labels);
    strmap_free(&g->tree_labels);
    memset(g, 0, sizeof *g);
}

/* Index of a named column for `what`, or an error. */
static int named_column(const csv_record *header, const char *shown, const char *name, const char *what, int *col,
                        ak_error *err)
{
    *col = -1;
    if (!name) return ANONKIT_OK;
    if ((*col = csv_column_index(header, name)) < 0)
        return ak_err_set(err, ANONKIT_E_USAGE, shown, 1, 0, "no column named '%s' (given as %s)", name, what);
    return ANONKIT_OK;
}

/* Parses a numeric field for metrics_pub_read. */
static int field_number(const csv_field *f, const char *shown, long line, int col, const char *what, double *out,
                        ak_error *err)
{
    if (ak_num_parse(f->data, f->len, out) == 0) return ANONKIT_OK;
    return ak_err_set(err, ANONKIT_E_INPUT, shown, line, col + 1, "%s must be numeric but holds '%s'", what,
                      AK_SHOW(f->data, f->len));
}

/* Columns of the per-row values metrics_pub_read keeps (-1: not wanted). */
typedef struct row_cols {
    int class_col, target_col, tree_col, split_col;
} row_cols;

/* Records row `row`'s group, class label, target, and the label and
 * train/test part of the classification error (per-row arrays). */
static int record_row(metrics_pub_groups *g, size_t row, uint32_t group, const csv_record *rec, const row_cols *rc,
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
                              "the split column must hold train or test, not '%s'",
                              AK_SHOW(f->data, f->len));
    }
    return ANONKIT_OK;
}

/* Makes room for group `group` (ids are dense, one more at a time). */
static int grow_groups(metrics_pub_groups *g, uint32_t group, ak_error *err)
{
    if (group < g->cap) return ANONKIT_OK;
    const size_t cap = g->cap ? g->cap * 2 : 1024;
    uint64_t *count = realloc(g->count, cap * sizeof *count);
    if (!count) return ak_err_nomem(err);
    g->count = count;
    long *lines = realloc(g->first_line, cap * sizeof *lines);
    if (!lines) return ak_err_nomem(err);
    g->first_line = lines;
    g->cap = cap;
    return ANONKIT_OK;
}

/* The columns of the per-row values the options ask for. */
static int find_row_columns(const csv_record *header, const metrics_pub_options *o, row_cols *cols, ak_error *err)
{
    const char *shown = o->shown;
    AK_CHECK(named_column(header, shown, o->class_name, "the class label", &cols->class_col, err));
    AK_CHECK(named_column(header, shown, o->target, "the target", &cols->target_col, err));
    AK_CHECK(named_column(header, shown, o->class_error, "the class of --class-error", &cols->tree_col, err));
    return named_column(header, shown, o->class_error ? o->split_column : NULL, "the split column", &cols->split_col,
                        err);
}

/* Opens the published file, or the published table (o->mem) without CSV text. */
static int open_published(csv_reader **reader, const metrics_pub_options *o, ak_error *err)
{
    return o->mem ? csv_reader_open_table(reader, o->mem, o->shown, err)
                  : csv_reader_open(reader, o->path, o->delimiter, err);
}

int metrics_pub_read(metrics_pub_groups *g, const metrics_pub_options *o, ak_error *err)
{
    memset(g, 0, sizeof *g);
    const char *path = o->path, *shown = o->shown;
    g->nqi = (uint32_t)o->nqi;
    if (strmap_init(&g->keys, 1024) || strmap_init(&g->labels, 64) || strmap_init(&g->tree_labels, 64))
        return ak_err_nomem(err);
    uint32_t *qi_col = malloc((o->nqi ? o->nqi : 1) * sizeof *qi_col);
    char *key = NULL;
    size_t key_cap = 0;
    csv_reader *reader = NULL;
    int rc;
    if (!qi_col) return ak_err_nomem(err);
    if ((rc = open_published(&reader, o, err)) < 0) goto done;
    csv_record rec;
    if ((rc = csv_read(reader, &rec, err)) < 0) goto done;
    if (rc == 0) {
        rc = ak_err_set(err, ANONKIT_E_INPUT, shown, 1, 0, "the file is empty: a header row is needed");
        goto done;
    }
    const uint32_t ncolumns = rec.count;
    if ((rc = csv_find_columns(&rec, shown, o->qi, o->nqi, "a quasi-identifier", qi_col, err)) < 0) goto done;
    row_cols cols;
    if ((rc = find_row_columns(&rec, o, &cols, err)) < 0) goto done;
    const int per_row = cols.class_col >= 0 || cols.target_col >= 0 || cols.tree_col >= 0;
    for (;;) {
        if ((rc = csv_read(reader, &rec, err)) < 0) goto done;
        if (rc == 0) break;
        if (rec.count != ncolumns) {
            rc = ak_err_set(err, ANONKIT_E_INPUT, shown, rec.line, 0, "expected %u fields as in the header, found %u",
                            ncolumns, rec.count);
            goto done;
        }
        size_t len = 0;
        if ((rc = csv_row_key(&rec, qi_col, g->nqi, &key, &key_cap, &len, err)) < 0) goto done;
        uint32_t group;
        int inserted;
        if (strmap_intern(&g->keys, key, len, &group, &inserted) != 0) { rc = ak_err_nomem(err); goto done; }
        if (inserted) {
            if ((rc = grow_groups(g, group, err)) < 0) goto done;
            g->count[group] = 0;
            g->first_line[group] = rec.line;
        }
        if (per_row && (rc = record_row(g, g->rows, group, &rec, &cols, shown, err)) < 0) goto done;
        g->count[group]++;
        g->rows++;
    }
    rc = ANONKIT_OK;
done:
    csv_reader_free(reader);
    free(qi_col);
    free(key);
    if (rc < 0 && strcmp(err->file, path) == 0) snprintf(err->file, sizeof err->file, "%s", shown);
    return rc;
}

/* The group whose QI texts are all "*" (suppressed rows look like this), or AK_NOT_FOUND. */
static uint32_t all_star_group(const metrics_pub_groups *g)
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

int metrics_pub_usage(const metrics_pub_options *o, ak_error *err)
{
    if (!o->class_error && (o->train_rows || o->split_column))
        return ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0, "--train-rows and --split-column go with --class-error COL");
    if (o->class_error && !o->train_rows == !o->split_column)
        return ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0,
                          "--class-error needs one of --train-rows N (the first N published rows train the tree) "
                          "and --split-column COL (a column of train and test)");
    return ANONKIT_OK;
}

/* The classification error of [Wang06] §6 (--class-error) into *ce: a C4.5-style
 * tree (src/metrics/classifier.c) over the published QIs — each published
 * text of a categorical QI one category, a numeric QI's published value or
 * interval taken as its midpoint — grown on the training rows and measured on
 * the testing rows (the first --train-rows rows train, or the --split-column
 * says which). Labels are numbered in the order of their texts, so that the
 * result (ties of a majority go to the lowest label) does not depend on the
 * order of the rows. */
static int class_error_metric(const table *t, const metrics_pub_groups *g, const metrics_pub_options *o,
                              class_error *ce, ak_error *err)
{
    const char *shown = o->shown;
    const size_t n = g->rows;
    const uint32_t nqi = t->nqi, ngroups = g->keys.count;
    if (o->train_rows && o->train_rows >= n)
        return ak_err_set(err, ANONKIT_E_USAGE, shown, 0, 0, "--train-rows %llu leaves no row to test: the file has %zu rows",
                          (unsigned long long)o->train_rows, n);
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
                    rc = ak_err_set(err, ANONKIT_E_INPUT, shown, g->first_line[i], 0, "'%s' is not a published value of '%s'",
                                    AK_SHOW(text, len), t->qi[q].name);
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
    for (size_t r = 0; rc == 0 && r < n; r++) is_test[r] = o->train_rows ? r >= o->train_rows : g->row_test[r];
    if (rc == 0) {
        const ctree_data d = {n, nqi, numeric, (const uint32_t *const *)cat, ncat, (const double *const *)num,
                              label, nlabels};
        const ctree_params p = CTREE_DEFAULTS;
        rc = metrics_class_error(&d, is_test, &p, ce, err);
        if (rc < 0 && err->file[0] == '\0') snprintf(err->file, sizeof err->file, "%s", shown);
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

/* The KL-divergence of [Ghinita07] §6.3 at datacube level o->kl_level (kl.h): reads
 * the published file again for every row's box and sensitive value (a value
 * of the original, which t holds) into out->kl_groupbys and out->kl_divergence. */
static int kl_metric(const table *t, const metrics_pub_options *o, metrics_pub_result *out, ak_error *err)
{
    if (!o->sensitive)
        return ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0, "--kl-level needs the sensitive column (--sensitive)");
    const char *path = o->path, *shown = o->shown;
    const uint32_t nqi = t->nqi;
    csv_reader *reader = NULL;
    uint32_t *lo = NULL, *hi = NULL, *sa = NULL;
    size_t n = 0, cap = 0;
    int col[nqi ? nqi : 1], scol;
    int rc = open_published(&reader, o, err);
    csv_record rec;
    if (rc >= 0 && (rc = csv_read(reader, &rec, err)) == 0)
        rc = ak_err_set(err, ANONKIT_E_INPUT, shown, 1, 0, "the file is empty: a header row is needed");
    if (rc < 0) goto done;
    for (uint32_t q = 0; q < nqi; q++)
        if ((col[q] = csv_column_index(&rec, t->qi[q].name)) < 0) {
            rc = ak_err_set(err, ANONKIT_E_USAGE, shown, 1, 0, "no column named '%s' (given as a quasi-identifier)",
                            t->qi[q].name);
            goto done;
        }
    if ((scol = csv_column_index(&rec, o->sensitive)) < 0) {
        rc = ak_err_set(err, ANONKIT_E_USAGE, shown, 1, 0, "no column named '%s' (given as the sensitive attribute)",
                        o->sensitive);
        goto done;
    }
    const uint32_t ncolumns = rec.count;
    while ((rc = csv_read(reader, &rec, err)) > 0) {
        if (rec.count != ncolumns) {
            rc = ak_err_set(err, ANONKIT_E_INPUT, shown, rec.line, 0, "expected %u fields as in the header, found %u",
                            ncolumns, rec.count);
            goto done;
        }
        if (n == cap) {
            cap = cap ? cap * 2 : 4096;
            uint32_t *l2 = realloc(lo, cap * (nqi ? nqi : 1) * sizeof *lo);
            if (l2) lo = l2;
            uint32_t *h2 = realloc(hi, cap * (nqi ? nqi : 1) * sizeof *hi);
            if (h2) hi = h2;
            uint32_t *s2 = realloc(sa, cap * sizeof *sa);
            if (s2) sa = s2;
            if (!l2 || !h2 || !s2) {
                rc = ak_err_nomem(err);
                goto done;
            }
        }
        for (uint32_t q = 0; q < nqi; q++) {
            const csv_field *f = &rec.fields[col[q]];
            if (metrics_range_of_published(t, q, f->data, f->len, &lo[n * nqi + q], &hi[n * nqi + q]) != 0) {
                rc = ak_err_set(err, ANONKIT_E_INPUT, shown, rec.line, col[q] + 1, "'%s' is not a published value of '%s'",
                                AK_SHOW(f->data, f->len), t->qi[q].name);
                goto done;
            }
        }
        const csv_field *f = &rec.fields[scol];
        if ((sa[n] = strmap_find(&t->sensitive_dict, f->data, f->len)) == AK_NOT_FOUND) {
            rc = ak_err_set(err, ANONKIT_E_INPUT, shown, rec.line, scol + 1,
                            "sensitive value '%s' does not occur in the original", AK_SHOW(f->data, f->len));
            goto done;
        }
        n++;
    }
    if (rc < 0) goto done;
    const kl_published pub = {n, lo, hi, sa};
    rc = metrics_kl_divergence(t, &pub, o->kl_level, &out->kl_divergence, &out->kl_groupbys, err);
done:
    csv_reader_free(reader);
    free(lo), free(hi), free(sa);
    if (rc < 0 && !strcmp(err->file, path)) snprintf(err->file, sizeof err->file, "%s", shown);
    return rc < 0 ? rc : ANONKIT_OK;
}

/* DM, C_AVG, GCP, NCP and the distortion of the groups g (metrics.h) into
 * out->m and out->distortion: every published text is mapped back onto the
 * original's codes; an all-"*" group within the suppression allowance counts
 * as suppressed rows, and so do the original's rows the file lacks (only
 * with a suppression limit: otherwise a missing row is an error). */
static int loss_metrics(const table *t, const metrics_pub_groups *g, const metrics_pub_options *o, double *ncp,
                        metrics_pub_result *out, ak_error *err)
{
    metrics *mt = &out->m;
    if (g->rows > t->nrows)
        return ak_err_set(err, ANONKIT_E_INPUT, o->shown, 0, 0, "has %llu rows, more than the %zu of the original",
                          (unsigned long long)g->rows, t->nrows);
    if (g->rows < t->nrows && !(o->suppression > 0))
        return ak_err_set(err, ANONKIT_E_INPUT, o->shown, 0, 0,
                          "has %llu rows, fewer than the %zu of the original: rows are missing (with --suppression "
                          "SHARE the rows a file lacks count as suppressed)",
                          (unsigned long long)g->rows, t->nrows);
    /* As in anonkit check: with a suppression limit, all-"*" rows within it are suppressed rows. */
    uint32_t star = o->suppression > 0 ? all_star_group(g) : AK_NOT_FOUND;
    if (star != AK_NOT_FOUND && g->count[star] > model_suppression_limit(o->suppression, g->rows)) star = AK_NOT_FOUND;
    /* A class mean says nothing of the class's extent: no NCP, GCP or continuous distortion for it. */
    const int ncp_known = o->extents_known;
    /* [Wang06] §6's distortion, summed over records: a suppressed row counts as every QI at its top */
    double *distortion = out->distortion; /* categorical, continuous */
    distortion[0] = distortion[1] = 0;
    const uint64_t unpublished = (star != AK_NOT_FOUND ? g->count[star] : 0) + (t->nrows > g->rows ? t->nrows - g->rows : 0);
    for (uint32_t q = 0; q < t->nqi; q++)
        if (t->qi[q].ncodes)
            distortion[t->qi[q].kind != ATTR_CATEGORICAL] +=
                (double)unpublished * metrics_distortion(t, q, 0, t->qi[q].ncodes - 1);
    if (star != AK_NOT_FOUND) metrics_add_suppressed(mt, g->count[star]);
    for (uint32_t i = 0; i < g->keys.count; i++) {
        if (i == star) continue;
        const char *key = strmap_key(&g->keys, i);
        size_t at = 0;
        for (uint32_t q = 0; q < t->nqi; q++) {
            uint32_t len, lo, hi;
            memcpy(&len, key + at, 4);
            const int kind = t->qi[q].kind != ATTR_CATEGORICAL; /* distortion[kind] */
            const int extent = ncp_known || !kind;
            if (metrics_ncp_of_published(t, q, key + at + 4, len, &ncp[q]) != 0 ||
                (extent && metrics_range_of_published(t, q, key + at + 4, len, &lo, &hi) != 0))
                return ak_err_set(err, ANONKIT_E_INPUT, o->shown, g->first_line[i], 0,
                                  "'%s' is not a published value of '%s'", AK_SHOW(key + at + 4, len),
                                  t->qi[q].name);
            if (extent) distortion[kind] += (double)g->count[i] * metrics_distortion(t, q, lo, hi);
            at += 4 + len;
        }
        metrics_add_class(mt, g->count[i], ncp);
    }
    if (t->nrows > g->rows) metrics_add_suppressed(mt, t->nrows - g->rows);
    metrics_finish(mt, o->k);
    return ANONKIT_OK;
}

/* A published range of one QI (a group's text) as original codes. */
typedef struct cover_span {
    uint32_t lo, hi, group;
} cover_span;

static int cmp_cover_span(const void *a, const void *b)
{
    const cover_span *x = a, *y = b;
    if (x->hi != y->hi) return (x->hi > y->hi) - (x->hi < y->hi);
    if (x->lo != y->lo) return (x->lo > y->lo) - (x->lo < y->lo);
    return (x->group > y->group) - (x->group < y->group);
}

/* The least code at or above c with a value left (n: none), halving the
 * paths of next[] on the way. */
static uint32_t next_left(uint32_t *next, uint32_t c)
{
    while (next[c] != c) {
        next[c] = next[next[c]];
        c = next[c];
    }
    return c;
}

/* Whether every published row of QI q can be given its own row of the
 * original whose exact value lies in the row's published range, as it must
 * when each row was published from its own value: a matching of the ranges
 * (with their row counts) into the original's values, found greedily —
 * ranges by ascending upper end, each taking the least value left at or
 * above its lower end, which finds a matching whenever one exists. Rows
 * are compared as multisets, so the published order does not matter. An
 * error names the range that found no value left: it and the ranges ending
 * below it hold more rows than the original has values in them. */
static int cover_check(const table *t, const metrics_pub_groups *g, uint32_t q, const char *shown, ak_error *err)
{
    const table_qi *a = &t->qi[q];
    const uint32_t n = a->ncodes, ng = g->keys.count;
    cover_span *spans = malloc((ng ? ng : 1) * sizeof *spans);
    uint64_t *left = calloc((size_t)n + 1, sizeof *left);
    uint32_t *next = malloc(((size_t)n + 1) * sizeof *next);
    int rc = ANONKIT_OK;
    if (!spans || !left || !next) rc = ak_err_nomem(err);
    for (size_t r = 0; rc == 0 && r < t->nrows; r++) left[a->codes[r]]++;
    for (uint32_t c = 0; rc == 0 && c <= n; c++) next[c] = c < n && !left[c] ? c + 1 : c;
    uint32_t m = 0;
    for (uint32_t i = 0; rc == 0 && i < ng; i++) {
        uint32_t len, lo, hi;
        const char *text = key_field(strmap_key(&g->keys, i), q, &len);
        if (metrics_range_of_published(t, q, text, len, &lo, &hi) != 0) /* (loss_metrics refused it first) */
            rc = ak_err_set(err, ANONKIT_E_INPUT, shown, g->first_line[i], 0, "'%s' is not a published value of '%s'",
                            AK_SHOW(text, len), a->name);
        else spans[m++] = (cover_span){lo, hi, i};
    }
    if (rc == 0) qsort(spans, m, sizeof *spans, cmp_cover_span);
    for (uint32_t s = 0; rc == 0 && s < m; s++)
        for (uint64_t need = g->count[spans[s].group]; need;) {
            const uint32_t c = next_left(next, spans[s].lo);
            if (c > spans[s].hi) {
                uint32_t len;
                const char *text = key_field(strmap_key(&g->keys, spans[s].group), q, &len);
                rc = ak_err_set(err, ANONKIT_E_INPUT, shown, g->first_line[spans[s].group], 0,
                                "'%s' of '%s' does not cover its rows' values in the original: it and the ranges "
                                "below it hold more rows than the original has values in them",
                                AK_SHOW(text, len), a->name);
                break;
            }
            const uint64_t take = need < left[c] ? need : left[c];
            left[c] -= take;
            need -= take;
            if (!left[c]) next[c] = c + 1;
        }
    free(spans);
    free(left);
    free(next);
    return rc;
}

int metrics_pub_measure(const table *t, const metrics_pub_groups *g, const metrics_pub_options *o,
                        const double *weights, metrics_pub_result *out, ak_error *err)
{
    memset(out, 0, sizeof *out);
    double *ncp = NULL;
    int rc = metrics_init(&out->m, t->nqi, weights, err);
    if (rc < 0) return rc;
    if (!(ncp = malloc((t->nqi ? t->nqi : 1) * sizeof *ncp))) rc = ak_err_nomem(err);
    if (rc == 0) rc = loss_metrics(t, g, o, ncp, out, err);
    free(ncp);
    /* every row's range covers a value of its own (a class mean covers nothing: not with --publish mean) */
    for (uint32_t q = 0; rc == 0 && q < t->nqi; q++)
        if (o->extents_known || t->qi[q].kind == ATTR_CATEGORICAL) rc = cover_check(t, g, q, o->shown, err);
    if (rc == 0 && o->class_name)
        rc = metrics_conditional_entropy(g->row_group, g->rows, g->row_label, &out->conditional_entropy, err);
    if (rc == 0 && o->target)
        rc = metrics_rmse(g->row_group, g->rows, g->keys.count, g->row_target, &out->rmse, err);
    if (rc == 0 && o->kl_level) rc = kl_metric(t, o, out, err);
    if (rc == 0 && o->class_error) rc = class_error_metric(t, g, o, &out->ce, err);
    if (rc < 0) metrics_pub_result_free(out);
    return rc < 0 ? rc : ANONKIT_OK;
}

void metrics_pub_result_free(metrics_pub_result *r)
{
    metrics_free(&r->m);
}
