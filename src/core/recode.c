/* recode.c — turning a class's box into published QI values (docs/ARCHITECTURE.md §3
 * step 3; ranges and hierarchy labels as in [LeFevre06]'s Mondrian slides). */
#include "core/recode.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/interval.h"
#include "core/numdict.h"

/* Copies the len bytes of src into buf[at..] as far as they fit; returns at + len. */
static size_t put_n(char *buf, size_t size, size_t at, const char *src, size_t len)
{
    if (at < size) {
        size_t room = size - at - 1;
        memcpy(buf + at, src, len < room ? len : room);
    }
    return at + len;
}

/* Copies src into buf[at..] as far as it fits; returns at + strlen(src). */
static size_t put(char *buf, size_t size, size_t at, const char *src)
{
    return put_n(buf, size, at, src, strlen(src));
}

const char *recode_numeric_text(const table_qi *a, uint32_t code, char *buf)
{
    if (a->texts) return a->texts[code];
    numdict_format_int(buf, (int64_t)a->values[code]);
    return buf;
}

/* recode_numeric_text with the text's length in *len. */
static const char *numeric_text_len(const table_qi *a, uint32_t code, char *buf, size_t *len)
{
    if (a->texts) {
        *len = strlen(a->texts[code]);
        return a->texts[code];
    }
    *len = (size_t)numdict_format_int(buf, (int64_t)a->values[code]);
    return buf;
}

/* The text of a numeric QI's range [lo, hi] in interval style `format`
 * (common/interval.h); both ends when `always_pair`. */
static size_t numeric_range(const table_qi *a, uint32_t lo, uint32_t hi, int always_pair, int format, char *buf,
                            size_t size)
{
    char low[24], high[24];
    size_t n, m;
    if (a->has_missing && lo == 0) /* missing values (code 0) are published alone, never in a range */
        return hi == 0 ? put(buf, size, 0, a->texts[0]) : put(buf, size, 0, RECODE_SUPPRESSED);
    const char *text = numeric_text_len(a, lo, low, &n);
    if (lo == hi && !always_pair) return put_n(buf, size, 0, text, n);
    const char *text_hi = numeric_text_len(a, hi, high, &m);
    char small[128];
    char *joined = n + m + 6 <= sizeof small ? small : malloc(n + m + 6);
    if (!joined) return put(buf, size, 0, RECODE_SUPPRESSED); /* out of memory: never a wrong range */
    const size_t len = ak_interval_write((ak_interval_style)format, text, n, text_hi, m, joined);
    put_n(buf, size, 0, joined, len);
    if (joined != small) free(joined);
    return len;
}

size_t recode_value(const table *t, uint32_t q, uint32_t lo, uint32_t hi, char *buf, size_t size)
{
    const table_qi *a = &t->qi[q];
    size_t len;
    if (a->kind == ATTR_NUMERIC) {
        len = numeric_range(a, lo, hi, 0, t->interval_format, buf, size);
    } else {
        len = put(buf, size, 0, hier_node_at(a->h, hier_lca(a->h, lo, hi))->label);
    }
    if (size) buf[len < size ? len : size - 1] = '\0';
    return len;
}

int recode_parse_style(const char *text, recode_style *out)
{
    if (!strcmp(text, "generalize")) *out = RECODE_GENERALIZE;
    else if (!strcmp(text, "range")) *out = RECODE_RANGE;
    else if (!strcmp(text, "mean")) *out = RECODE_MEAN;
    else return -1;
    return 0;
}

const char *recode_style_name(recode_style style)
{
    return style == RECODE_RANGE ? "range" : style == RECODE_MEAN ? "mean" : "generalize";
}

int recode_class_means(const table *t, const partition *p, double **means, ak_error *err)
{
    const size_t cells = p->nclasses * t->nqi;
    long double *sum = calloc(cells ? cells : 1, sizeof *sum);
    *means = malloc((cells ? cells : 1) * sizeof **means);
    if (!sum || !*means) {
        free(sum);
        free(*means);
        *means = NULL;
        return ak_err_nomem(err);
    }
    for (size_t r = 0; r < t->nrows; r++) {
        const uint32_t c = p->class_of[r];
        if (c == PARTITION_SUPPRESSED) continue;
        for (uint32_t q = 0; q < t->nqi; q++)
            if (t->qi[q].kind == ATTR_NUMERIC) sum[(size_t)c * t->nqi + q] += t->qi[q].values[t->qi[q].codes[r]];
    }
    for (size_t c = 0; c < p->nclasses; c++)
        for (uint32_t q = 0; q < t->nqi; q++)
            (*means)[c * t->nqi + q] = p->count[c] ? (double)(sum[c * t->nqi + q] / (long double)p->count[c]) : 0;
    free(sum);
    return ANONKIT_OK;
}

size_t recode_class_value(const table *t, const partition *p, const double *means, recode_style style, size_t c,
                          uint32_t q, char *buf, size_t size)
{
    const table_qi *a = &t->qi[q];
    const uint32_t lo = partition_lo(p, c)[q], hi = partition_hi(p, c)[q];
    size_t len;
    if (p->node && a->h) { /* full-domain: the label of the class's node at its level */
        len = put(buf, size, 0, hier_node_at(a->h, p->node[c * p->nqi + q])->label);
        if (size) buf[len < size ? len : size - 1] = '\0';
        return len;
    }
    if (a->kind != ATTR_NUMERIC || style == RECODE_GENERALIZE) return recode_value(t, q, lo, hi, buf, size);
    if (style == RECODE_RANGE) {
        len = numeric_range(a, lo, hi, 1, t->interval_format, buf, size);
    } else if (lo == hi) { /* the mean of equal values is that value, as spelled in the input */
        len = numeric_range(a, lo, hi, 0, t->interval_format, buf, size);
    } else {
        char text[40];
        snprintf(text, sizeof text, "%.12g", means[c * t->nqi + q]);
        len = put(buf, size, 0, text);
    }
    if (size) buf[len < size ? len : size - 1] = '\0';
    return len;
}

int recode_is_int_range(const table *t, const partition *p, recode_style style, uint32_t q)
{
    const table_qi *a = &t->qi[q];
    return a->kind == ATTR_NUMERIC && !a->texts && !(p->node && a->h) && t->interval_format == AK_INTERVAL_RANGE &&
           (style == RECODE_GENERALIZE || style == RECODE_RANGE);
}

size_t recode_int_range(recode_style style, uint32_t lo, uint32_t hi, double vlo, double vhi, char *buf)
{
    /* numeric_range of an integer column: the value, or "lo-hi" ("lo - hi" when a bound is negative) */
    size_t len = (size_t)numdict_format_int(buf, (int64_t)vlo);
    if (lo != hi || style == RECODE_RANGE) {
        if (vlo < 0 || vhi < 0) {
            memcpy(buf + len, " - ", 3);
            len += 3;
        } else {
            buf[len++] = '-';
        }
        len += (size_t)numdict_format_int(buf + len, (int64_t)vhi);
    }
    return len;
}

int recode_class_text(const table *t, const partition *p, const double *means, recode_style style, size_t c,
                      uint32_t q, strbuf *out)
{
    out->len = 0;
    if (strbuf_reserve(out, 256) != 0) return -1;
    size_t len = recode_class_value(t, p, means, style, c, q, out->data, out->cap);
    if (len >= out->cap) { /* a long hierarchy label: once more with room for all of it */
        if (strbuf_reserve(out, len + 1) != 0) return -1;
        len = recode_class_value(t, p, means, style, c, q, out->data, out->cap);
    }
    out->len = len;
    return 0;
}
