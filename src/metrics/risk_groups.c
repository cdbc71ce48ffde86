/* risk_groups.c — one pass over a CSV file grouping its rows into the
 * classes of `anonkit risk` (risk_groups.h), and the class sizes of a
 * population table (journalist risk, [Dankar12] §3). */
#include "metrics/risk_groups.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/numparse.h"
#include "io/csv.h"
#include "model/model.h"

void risk_groups_free(risk_groups *g)
{
    strmap_free(&g->keys);
    free(g->size);
    free(g->weight);
    free(g->first_line);
    free(g->class_size);
    free(g->class_population);
    free(g->class_weight);
    free(g->codes);
    memset(g, 0, sizeof *g);
}

/* Makes room for key id `id` (ids are dense). */
static int grow(risk_groups *g, uint32_t id, size_t *cap, int weighted, ak_error *err)
{
    if (id < *cap) return ANONKIT_OK;
    const size_t n = *cap ? *cap * 2 : 4096;
    uint64_t *size = realloc(g->size, n * sizeof *size);
    if (!size) return ak_err_nomem(err);
    g->size = size;
    long *line = realloc(g->first_line, n * sizeof *line);
    if (!line) return ak_err_nomem(err);
    g->first_line = line;
    if (weighted) {
        double *w = realloc(g->weight, n * sizeof *w);
        if (!w) return ak_err_nomem(err);
        g->weight = w;
    }
    *cap = n;
    return ANONKIT_OK;
}

/* Appends one row's QI codes (each QI's texts interned in values[q]). */
static int keep_codes(risk_groups *g, strmap *values, const csv_record *rec, const uint32_t *cols, size_t nqi,
                      ak_error *err)
{
    if ((g->rows + 1) * nqi > g->codes_cap) {
        const size_t cap = g->codes_cap ? g->codes_cap * 2 : 4096 * nqi;
        uint32_t *c = realloc(g->codes, cap * sizeof *c);
        if (!c) return ak_err_nomem(err);
        g->codes = c;
        g->codes_cap = cap;
    }
    for (size_t q = 0; q < nqi; q++) {
        const csv_field *f = &rec->fields[cols[q]];
        if (strmap_intern(&values[q], f->data, f->len, &g->codes[g->rows * nqi + q], NULL) != 0)
            return ak_err_nomem(err);
    }
    return ANONKIT_OK;
}

/* The key of the all-"*" row, for the suppressed rows of a published file. */
static uint32_t star_key(const risk_groups *g, size_t nqi)
{
    char key[5 * 64];
    if (nqi > 64) return AK_NOT_FOUND;
    const uint32_t one = 1;
    for (size_t q = 0; q < nqi; q++) {
        memcpy(key + 5 * q, &one, 4);
        key[5 * q + 4] = '*';
    }
    return strmap_find(&g->keys, key, 5 * nqi);
}

/* Reads the header of an opened file and finds the QI (and weight) columns. */
static int open_columns(csv_reader *reader, const char *shown, const risk_group_params *p, uint32_t *cols,
                        int *weight_col, uint32_t *ncolumns, ak_error *err)
{
    csv_record rec;
    int rc = csv_read(reader, &rec, err);
    if (rc < 0) return rc;
    if (rc == 0) return ak_err_set(err, ANONKIT_E_INPUT, shown, 1, 0, "the file is empty: a header row is needed");
    *ncolumns = rec.count;
    AK_CHECK(csv_find_columns(&rec, shown, p->qi, p->nqi, "a quasi-identifier", cols, err));
    if (weight_col) {
        *weight_col = -1;
        if (p->weight && (*weight_col = csv_column_index(&rec, p->weight)) < 0)
            return ak_err_set(err, ANONKIT_E_USAGE, shown, 1, 0, "no column named '%s' (given as --weight)", p->weight);
    }
    return ANONKIT_OK;
}

/* Counts the population table's rows into the sample's classes (pop[id]). */
static int read_population(risk_groups *g, const risk_group_params *p, uint64_t *pop, ak_error *err)
{
    const char *shown = p->population_shown ? p->population_shown : p->population_path;
    uint32_t *cols = malloc(p->nqi * sizeof *cols);
    char *key = NULL;
    size_t key_cap = 0;
    csv_reader *reader = NULL;
    int rc;
    if (!cols) return ak_err_nomem(err);
    uint32_t ncolumns;
    if ((rc = csv_reader_open(&reader, p->population_path, p->delimiter, err)) < 0) goto done;
    if ((rc = open_columns(reader, shown, p, cols, NULL, &ncolumns, err)) < 0) goto done;
    long last_line = 1;
    for (;;) {
        csv_record rec;
        if ((rc = csv_read(reader, &rec, err)) < 0) goto done;
        if (rc == 0) break;
        last_line = rec.line;
        if (rec.count != ncolumns) {
            rc = ak_err_set(err, ANONKIT_E_INPUT, shown, rec.line, 0, "expected %u fields as in the header, found %u",
                            ncolumns, rec.count);
            goto done;
        }
        size_t len;
        if ((rc = csv_row_key(&rec, cols, p->nqi, &key, &key_cap, &len, err)) < 0) goto done;
        const uint32_t id = strmap_find(&g->keys, key, len);
        if (id != AK_NOT_FOUND) pop[id]++;
        g->population_rows++;
    }
    if (g->population_rows < g->rows) {
        rc = ak_err_set(err, ANONKIT_E_INPUT, shown, last_line, 0,
                        "the population has %llu rows, fewer than the %llu rows of the sample %s",
                        (unsigned long long)g->population_rows, (unsigned long long)g->rows, p->shown);
        goto done;
    }
    for (uint32_t id = 0; id < g->keys.count; id++)
        if (pop[id] < g->size[id]) {
            rc = ak_err_set(err, ANONKIT_E_INPUT, p->shown, g->first_line[id], 0,
                            "this row's class has %llu rows in the sample but only %llu in the population %s: "
                            "the population must hold the sample",
                            (unsigned long long)g->size[id], (unsigned long long)pop[id], shown);
            goto done;
        }
    rc = ANONKIT_OK;
done:
    csv_reader_free(reader);
    free(cols);
    free(key);
    return rc;
}

/* Leaves out the suppressed rows' class and lays the classes out compactly. */
static int compact(risk_groups *g, const risk_group_params *p, const uint64_t *pop, ak_error *err)
{
    uint32_t star = AK_NOT_FOUND;
    if (p->published && p->suppression > 0) {
        star = star_key(g, p->nqi);
        if (star != AK_NOT_FOUND && g->size[star] > model_suppression_limit(p->suppression, g->rows))
            star = AK_NOT_FOUND;
    }
    const size_t n = g->keys.count;
    g->class_size = malloc((n ? n : 1) * sizeof *g->class_size);
    if (!g->class_size) return ak_err_nomem(err);
    if (pop && !(g->class_population = malloc((n ? n : 1) * sizeof *g->class_population))) return ak_err_nomem(err);
    if (g->weight && !(g->class_weight = malloc((n ? n : 1) * sizeof *g->class_weight))) return ak_err_nomem(err);
    for (uint32_t id = 0; id < n; id++) {
        if (id == star) {
            g->suppressed = g->size[id];
            continue;
        }
        g->class_size[g->nclasses] = g->size[id];
        if (pop) g->class_population[g->nclasses] = pop[id];
        if (g->weight) g->class_weight[g->nclasses] = g->weight[id];
        g->nclasses++;
    }
    return ANONKIT_OK;
}

int risk_groups_read(risk_groups *g, const risk_group_params *p, ak_error *err)
{
    memset(g, 0, sizeof *g);
    /* grown as classes appear: a table sized for the rows would scatter a few classes over
     * more memory than the caches hold */
    if (strmap_init(&g->keys, 4096) != 0) return ak_err_nomem(err);
    uint32_t *cols = malloc((p->nqi ? p->nqi : 1) * sizeof *cols);
    strmap *values = p->keep_codes ? calloc(p->nqi, sizeof *values) : NULL;
    uint64_t *pop = NULL;
    char *key = NULL;
    size_t key_cap = 0, cap = 0;
    csv_reader *reader = NULL;
    int rc = ANONKIT_OK;
    if (!cols || (p->keep_codes && !values)) {
        rc = ak_err_nomem(err);
        goto done;
    }
    for (size_t q = 0; values && q < p->nqi; q++)
        if (strmap_init(&values[q], 256) != 0) {
            rc = ak_err_nomem(err);
            goto done;
        }
    uint32_t ncolumns;
    int weight_col;
    if ((rc = csv_reader_open(&reader, p->path, p->delimiter, err)) < 0) goto done;
    if ((rc = open_columns(reader, p->shown, p, cols, &weight_col, &ncolumns, err)) < 0) goto done;
    for (;;) {
        csv_record rec;
        if ((rc = csv_read(reader, &rec, err)) < 0) goto done;
        if (rc == 0) break;
        if (rec.count != ncolumns) {
            rc = ak_err_set(err, ANONKIT_E_INPUT, p->shown, rec.line, 0, "expected %u fields as in the header, found %u",
                            ncolumns, rec.count);
            goto done;
        }
        double w = 0;
        if (weight_col >= 0) {
            const csv_field *f = &rec.fields[weight_col];
            if (ak_num_parse(f->data, f->len, &w) != 0 || !(w > 0)) {
                rc = ak_err_set(err, ANONKIT_E_INPUT, p->shown, rec.line, weight_col + 1,
                                "the weight '%s' of column '%s' is not a positive number", AK_SHOW(f->data, f->len),
                                p->weight);
                goto done;
            }
        }
        size_t len;
        if ((rc = csv_row_key(&rec, cols, p->nqi, &key, &key_cap, &len, err)) < 0) goto done;
        uint32_t id;
        int inserted;
        if (strmap_intern(&g->keys, key, len, &id, &inserted) != 0) {
            rc = ak_err_nomem(err);
            goto done;
        }
        if (inserted) {
            if ((rc = grow(g, id, &cap, weight_col >= 0, err)) < 0) goto done;
            g->size[id] = 0;
            g->first_line[id] = rec.line;
            if (weight_col >= 0) g->weight[id] = 0;
        }
        g->size[id]++;
        if (weight_col >= 0) g->weight[id] += w;
        if (values && (rc = keep_codes(g, values, &rec, cols, p->nqi, err)) < 0) goto done;
        g->rows++;
    }
    if (p->population_path) {
        if (!(pop = calloc(g->keys.count ? g->keys.count : 1, sizeof *pop))) {
            rc = ak_err_nomem(err);
            goto done;
        }
        if ((rc = read_population(g, p, pop, err)) < 0) goto done;
    }
    rc = compact(g, p, pop, err);
done:
    csv_reader_free(reader);
    free(cols);
    free(key);
    free(pop);
    for (size_t q = 0; values && q < p->nqi; q++) strmap_free(&values[q]);
    free(values);
    if (rc < 0) {
        if (strcmp(err->file, p->path) == 0) snprintf(err->file, sizeof err->file, "%s", p->shown);
        risk_groups_free(g);
    }
    return rc;
}
