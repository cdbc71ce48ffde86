/* rules_write.c — writing the recoding rules ([LeFevre07] §1.2, §2.2; the
 * format is docs/rules-format.md; loading and applying them is rules.c).
 *
 * Writing streams one CSV record per rule from the partition, in class order
 * (depth-first), through the csv writer: nothing but one record is held. */
#include <stdlib.h>
#include <string.h>

#include "core/hierarchy.h"
#include "core/hierbuild.h"
#include "publish/rules.h"
#include "publish/rules_internal.h"

#define MAGIC RULES_MAGIC
#define role_names rules_role_names

/* ------------------------------------------------------------------ writing */

static int put_str(csv_writer *w, const char *s, ak_error *err) { return csv_write_field(w, s, strlen(s), err); }

static int put_u64(csv_writer *w, uint64_t v, ak_error *err)
{
    char buf[24];
    int n = snprintf(buf, sizeof buf, "%llu", (unsigned long long)v);
    return csv_write_field(w, buf, (size_t)n, err);
}

static const char *leaf_label(const hier *h, uint32_t code) { return hier_node_at(h, hier_leaf_node(h, code))->label; }

/* The rows of a categorical QI's hierarchy: per leaf in code order, its label
 * and those of its ancestors up to the root. */
static int write_hierarchy(csv_writer *w, const table *t, const table_qi *a, ak_error *err)
{
    const hier *h = a->h;
    for (uint32_t code = 0; code < hier_leaf_count(h); code++) {
        AK_CHECK(put_str(w, "hierarchy", err));
        AK_CHECK(put_str(w, t->column_names[a->column], err));
        uint32_t n = hier_leaf_node(h, code);
        for (;;) {
            const hier_node *node = hier_node_at(h, n);
            AK_CHECK(put_str(w, node->label, err));
            if (n == hier_root(h)) break;
            n = node->parent;
        }
        AK_CHECK(csv_write_end(w, err));
    }
    return ANONKIT_OK;
}

/* The five fields of QI q in the rule of class c. */
static int write_rule_qi(csv_writer *w, const table *t, const partition *p, recode_style style, const double *means,
                         size_t c, uint32_t q, ak_error *err)
{
    const table_qi *a = &t->qi[q];
    const uint32_t rlo = partition_rlo(p, c)[q], rhi = partition_rhi(p, c)[q];
    const uint32_t lo = partition_lo(p, c)[q], hi = partition_hi(p, c)[q];
    if (a->kind == ATTR_NUMERIC) {
        /* with missing values code 0 is missing, below every number: a bound
         * or value there is the word RULES_MISSING_WORD */
        const int m = a->has_missing;
        char buf[24];
        AK_CHECK(put_str(w, rlo == 0 ? "" : m && rlo == 1 ? RULES_MISSING_WORD : recode_numeric_text(a, rlo - 1, buf),
                         err));
        AK_CHECK(put_str(w, rhi + 1 >= a->ncodes ? "" : m && rhi == 0 ? RULES_MISSING_WORD : recode_numeric_text(a, rhi, buf),
                         err));
        AK_CHECK(put_str(w, m && lo == 0 ? RULES_MISSING_WORD : recode_numeric_text(a, lo, buf), err));
        AK_CHECK(put_str(w, m && hi == 0 ? RULES_MISSING_WORD : recode_numeric_text(a, hi, buf), err));
    } else {
        AK_CHECK(put_str(w, leaf_label(a->h, rlo), err));
        AK_CHECK(put_str(w, leaf_label(a->h, rhi), err));
        AK_CHECK(put_str(w, leaf_label(a->h, lo), err));
        AK_CHECK(put_str(w, leaf_label(a->h, hi), err));
    }
    /* The same text as the writer publishes. */
    strbuf value = {0};
    if (recode_class_text(t, p, means, style, c, q, &value) != 0) {
        strbuf_free(&value);
        return ak_err_nomem(err);
    }
    const int rc = csv_write_field(w, value.data, value.len, err);
    strbuf_free(&value);
    return rc;
}

/* The magic, settings, columns and hierarchies. */
static int write_head(csv_writer *w, const table *t, recode_style style, const uint32_t *order, ak_error *err)
{
    char delim[2] = {t->delimiter, '\0'};
    AK_CHECK(put_str(w, MAGIC, err));
    AK_CHECK(put_u64(w, RULES_FORMAT_VERSION, err));
    AK_CHECK(csv_write_end(w, err));
    AK_CHECK(put_str(w, "delimiter", err));
    AK_CHECK(put_str(w, delim, err));
    AK_CHECK(csv_write_end(w, err));
    AK_CHECK(put_str(w, "publish", err));
    AK_CHECK(put_str(w, recode_style_name(style), err));
    AK_CHECK(csv_write_end(w, err));
    for (uint32_t c = 0; c < t->ncolumns; c++) {
        rules_role role = t->roles[c] == ROLE_IDENTIFIER ? RULES_IDENTIFIER : RULES_COPIED;
        for (uint32_t i = 0; i < t->nqi; i++)
            if (t->qi[order[i]].column == c)
                role = t->qi[order[i]].kind == ATTR_NUMERIC ? RULES_QI_NUMERIC : RULES_QI_CATEGORICAL;
        AK_CHECK(put_str(w, "column", err));
        AK_CHECK(put_str(w, t->column_names[c], err));
        AK_CHECK(put_str(w, role_names[role], err));
        AK_CHECK(csv_write_end(w, err));
    }
    /* a numeric QI with missing values, or a categorical one whose hierarchy
     * has the leaf NULL that takes them: the tokens that are missing besides
     * the empty cell */
    for (uint32_t i = 0; i < t->nqi; i++) {
        const table_qi *a = &t->qi[order[i]];
        uint32_t code;
        if (a->kind == ATTR_NUMERIC ? !a->has_missing
                                    : hier_find_leaf(a->h, HB_MISSING_LABEL, strlen(HB_MISSING_LABEL), &code) != 0)
            continue;
        AK_CHECK(put_str(w, "missing", err));
        AK_CHECK(put_str(w, t->column_names[a->column], err));
        for (size_t k = 0; k < t->nmissing; k++) AK_CHECK(put_str(w, t->missing[k], err));
        AK_CHECK(csv_write_end(w, err));
    }
    for (uint32_t i = 0; i < t->nqi; i++)
        if (t->qi[order[i]].kind == ATTR_CATEGORICAL) AK_CHECK(write_hierarchy(w, t, &t->qi[order[i]], err));
    return ANONKIT_OK;
}

/* One rule per class of p; adds to the counts of classes and rows. */
static int write_rules(csv_writer *w, const table *t, const partition *p, recode_style style, const double *means,
                       const uint32_t *order, uint64_t *classes, uint64_t *rows, ak_error *err)
{
    for (size_t c = 0; c < p->nclasses; c++) {
        AK_CHECK(put_str(w, "rule", err));
        AK_CHECK(put_u64(w, p->count[c], err));
        for (uint32_t i = 0; i < t->nqi; i++) AK_CHECK(write_rule_qi(w, t, p, style, means, c, order[i], err));
        AK_CHECK(csv_write_end(w, err));
        *rows += p->count[c];
        (*classes)++;
    }
    return ANONKIT_OK;
}

static int write_end(csv_writer *w, uint64_t classes, uint64_t rows, ak_error *err)
{
    AK_CHECK(put_str(w, "end", err));
    AK_CHECK(put_u64(w, classes, err));
    AK_CHECK(put_u64(w, rows, err));
    AK_CHECK(csv_write_end(w, err));
    return csv_writer_flush(w, err);
}

/* The QIs in column order (caller frees). */
static uint32_t *qi_column_order(const table *t)
{
    uint32_t *order = malloc((t->nqi ? t->nqi : 1) * sizeof *order);
    if (!order) return NULL;
    uint32_t n = 0;
    for (uint32_t c = 0; c < t->ncolumns; c++)
        for (uint32_t q = 0; q < t->nqi; q++)
            if (t->qi[q].column == c) order[n++] = q;
    return order;
}

int rules_write(const table *t, const partition *p, recode_style style, const double *means, FILE *out,
                const char *out_name, ak_error *err)
{
    if (style == RECODE_MEAN && !means)
        return ak_err_set(err, ANONKIT_E_INTERNAL, NULL, 0, 0, "rules_write: the mean style needs the class means");
    uint32_t *order = qi_column_order(t);
    if (!order) return ak_err_nomem(err);
    csv_writer *w = NULL;
    uint64_t classes = 0, rows = 0;
    int rc = csv_writer_open_stream(&w, out, out_name, ',', err);
    if (rc == ANONKIT_OK) rc = write_head(w, t, style, order, err);
    if (rc == ANONKIT_OK) rc = write_rules(w, t, p, style, means, order, &classes, &rows, err);
    if (rc == ANONKIT_OK) rc = write_end(w, classes, rows, err);
    csv_writer_free(w);
    free(order);
    return rc < 0 ? rc : ANONKIT_OK;
}

struct rules_stream {
    csv_writer *w;
    uint32_t *order;
    recode_style style;
    uint64_t classes, rows;
};

int rules_stream_open(rules_stream **out, const table *schema, recode_style style, FILE *stream, const char *out_name,
                      ak_error *err)
{
    *out = NULL;
    rules_stream *rs = calloc(1, sizeof *rs);
    if (!rs) return ak_err_nomem(err);
    rs->style = style;
    int rc = (rs->order = qi_column_order(schema)) ? ANONKIT_OK : ak_err_nomem(err);
    if (rc == ANONKIT_OK) rc = csv_writer_open_stream(&rs->w, stream, out_name, ',', err);
    if (rc == ANONKIT_OK) rc = write_head(rs->w, schema, style, rs->order, err);
    if (rc < 0) {
        rules_stream_free(rs);
        return rc;
    }
    *out = rs;
    return ANONKIT_OK;
}

int rules_stream_part(rules_stream *rs, const table *view, const partition *p, const double *means, ak_error *err)
{
    if (rs->style == RECODE_MEAN && !means)
        return ak_err_set(err, ANONKIT_E_INTERNAL, NULL, 0, 0, "rules: the mean style needs the class means");
    return write_rules(rs->w, view, p, rs->style, means, rs->order, &rs->classes, &rs->rows, err);
}

int rules_stream_close(rules_stream *rs, ak_error *err) { return write_end(rs->w, rs->classes, rs->rows, err); }

void rules_stream_free(rules_stream *rs)
{
    if (!rs) return;
    csv_writer_free(rs->w);
    free(rs->order);
    free(rs);
}

