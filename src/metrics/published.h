/* published.h — the metrics of a published file read against its original
 * (`anonkit metrics`): the published rows are grouped by their QI texts
 * (equal texts = one class), each published text is mapped back onto the
 * original's codes, and DM, C_AVG, GCP, NCP (metrics.h), the distortion,
 * the conditional entropy and RMSE of a workload, the KL-divergence of a
 * datacube level (kl.h) and the classification error (classifier.h) are
 * measured. Used in two steps, metrics_pub_read then metrics_pub_measure, so
 * that the caller may do its own work (the NCP weights) in between. */
#ifndef AK_METRICS_PUBLISHED_H
#define AK_METRICS_PUBLISHED_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "common/hash.h"
#include "core/table.h"
#include "metrics/classifier.h"
#include "metrics/metrics.h"

/* What to read and measure. */
typedef struct metrics_pub_options {
    const char *path;         /* the published file (a file: standard input already copied) */
    const char *shown;        /* its name in messages */
    const struct anonkit_table *mem; /* the published table in memory, read through the CSV reader's table backend
                                        (io/csv.h; path then names nothing to open); NULL: path */
    char delimiter;
    const char *const *qi;    /* QI column names, in the order of the table's QIs */
    size_t nqi;
    uint64_t k;               /* k of the model (C_AVG) */
    double suppression;       /* share of rows that may be suppressed: all-"*" rows within it are suppressed */
    int extents_known;        /* 0 when the file publishes class means: no NCP, GCP or continuous distortion */
    const char *class_name;   /* class label column: conditional entropy; NULL: none */
    const char *target;       /* numeric target column: RMSE; NULL: none */
    unsigned kl_level;        /* datacube level of the KL-divergence; 0: none */
    const char *sensitive;    /* the sensitive column (the KL-divergence's) */
    const char *class_error;  /* class column of the classification error; NULL: none */
    uint64_t train_rows;      /* the first N rows train the tree (0: the split column says) */
    const char *split_column; /* column of train and test */
} metrics_pub_options;

/* The rows of a published file grouped by their QI texts. */
typedef struct metrics_pub_groups {
    uint32_t nqi;
    strmap keys;              /* group key: the QI texts, each prefixed by its 4-byte length */
    uint64_t *count;          /* per group: rows */
    long *first_line;         /* per group: line of its first row */
    size_t cap;
    uint64_t rows;
    uint32_t *row_group;      /* per row, when a class label, target or classification error is read */
    uint32_t *row_label;      /* per row: class label id */
    double *row_target;       /* per row: target value */
    uint32_t *row_tree_label; /* per row: label id of the classification error's class column */
    unsigned char *row_test;  /* per row: 1 when the split column says test */
    size_t row_cap;
    strmap labels;            /* class label text -> id */
    strmap tree_labels;       /* classification error's label text -> id */
} metrics_pub_groups;

/* The measured values. */
typedef struct metrics_pub_result {
    metrics m;              /* DM, C_AVG, GCP, NCP per QI and the class sizes */
    double distortion[2];   /* categorical and continuous distortion summed over the original's rows */
    double conditional_entropy; /* with class_name */
    double rmse;            /* with target */
    size_t kl_groupbys;     /* with kl_level */
    double kl_divergence;   /* with kl_level; +inf when an estimate misses a cell */
    class_error ce;         /* with class_error */
} metrics_pub_result;

/* Usage errors of the options (class error without a split, or with both). */
int metrics_pub_usage(const metrics_pub_options *o, ak_error *err);

/* Reads o->path into g: the groups and the per-row values the options ask for. */
int metrics_pub_read(metrics_pub_groups *g, const metrics_pub_options *o, ak_error *err);
void metrics_pub_groups_free(metrics_pub_groups *g);

/* Measures the groups g of the file o->path against t, the original (read
 * for its domains, and with its sensitive column when o->kl_level), with NCP
 * weights per QI (NULL: equal). Fills *out; free with metrics_pub_result_free. */
int metrics_pub_measure(const table *t, const metrics_pub_groups *g, const metrics_pub_options *o,
                        const double *weights, metrics_pub_result *out, ak_error *err);
void metrics_pub_result_free(metrics_pub_result *r);

#endif
