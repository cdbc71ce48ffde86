/* source_readstat.c — SPSS (.sav, .zsav, .por), Stata (.dta) and SAS
 * (.sas7bdat, .xpt) files as sources, and .sav, .zsav, .dta, .xpt as sinks
 * through ReadStat, opened on demand (io/readstat_load.h; docs/sources.md).
 *
 * Reading: a first parse takes the variables (names, labels, types) and the
 * value labels without the data (Stata keeps its value labels after the
 * data); every scan then parses the data once more, a row handed out as soon
 * as its last value is read. A labelled value is read as its label (the
 * published categorical value) unless --use-codes; a missing value is empty;
 * numbers are written exactly (integers plainly, others with the fewest of
 * 15 or 17 significant digits that give the same double).
 *
 * Writing: the finished CSV output is typed by one pass (a column whose
 * every value is a number stays numeric, every other — the generalized
 * ranges and labels — is a string as wide as its longest value), the
 * variable labels and value labels of the input's columns of the same names
 * are kept, and the file is written through an outfile beside the
 * destination (io/outfile.h), renamed into place at commit. */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "io/outfile.h"
#include "io/readstat_load.h"
#include "io/source.h"

typedef enum rs_format { RS_SAV, RS_ZSAV, RS_POR, RS_DTA, RS_SAS7BDAT, RS_XPT } rs_format;

/* The format of path by its extension. */
static rs_format rs_format_of(const char *path)
{
    const char *dot = strrchr(path, '.');
    if (!dot) return RS_SAV;
    if (!strcasecmp(dot, ".zsav")) return RS_ZSAV;
    if (!strcasecmp(dot, ".por")) return RS_POR;
    if (!strcasecmp(dot, ".dta")) return RS_DTA;
    if (!strcasecmp(dot, ".sas7bdat")) return RS_SAS7BDAT;
    if (!strcasecmp(dot, ".xpt")) return RS_XPT;
    return RS_SAV;
}

/* A named value label set while the variables are read. */
typedef struct rs_set {
    char *name;
    source_label *labels;
    size_t n, cap;
} rs_set;

typedef struct rs_source {
    source base;
    rs_api api;         /* libreadstat, loaded on opening */
    char *path;
    rs_format format;
    int use_codes;
    char **set_of;      /* per column: the name of its label set, NULL when none */
    uint32_t nset_of;   /* entries of set_of (base.ncols may be zeroed when the columns are taken) */
    rs_set *sets;
    size_t nsets, capsets;
    uint32_t capcols;
    char msg[512];      /* ReadStat's last message */
    /* the scan */
    strbuf row;         /* the current row's texts, each NUL-terminated */
    size_t *off;        /* per column: its text's offset in row, SIZE_MAX when missing */
    const char **text;
    size_t *len;
    source_row_fn fn;
    void *ctx;
    ak_error *err;
    int rc;             /* the first failure of fn */
} rs_source;

static void rs_on_error(const char *message, void *ctx)
{
    rs_source *s = ctx;
    snprintf(s->msg, sizeof s->msg, "%s", message);
    size_t n = strlen(s->msg);
    while (n && s->msg[n - 1] == '\n') s->msg[--n] = '\0';
}

/* Runs the parser of s's format. */
static readstat_error_t rs_parse(rs_source *s, readstat_parser_t *p)
{
    switch (s->format) {
    case RS_SAV:
    case RS_ZSAV: return s->api.readstat_parse_sav(p, s->path, s);
    case RS_POR: return s->api.readstat_parse_por(p, s->path, s);
    case RS_DTA: return s->api.readstat_parse_dta(p, s->path, s);
    case RS_SAS7BDAT: return s->api.readstat_parse_sas7bdat(p, s->path, s);
    case RS_XPT: return s->api.readstat_parse_xport(p, s->path, s);
    }
    return READSTAT_ERROR_PARSE;
}

/* The first parse: one variable. */
static int rs_on_variable(int index, readstat_variable_t *v, const char *val_labels, void *ctx)
{
    rs_source *s = ctx;
    if (index < 0 || (uint32_t)index != s->base.ncols) return READSTAT_HANDLER_ABORT;
    if (s->base.ncols == s->capcols) {
        const uint32_t cap = s->capcols ? 2 * s->capcols : 16;
        source_column *c = realloc(s->base.cols, cap * sizeof *c);
        if (c) s->base.cols = c;
        char **so = realloc(s->set_of, cap * sizeof *so);
        if (so) s->set_of = so;
        if (!c || !so) return READSTAT_HANDLER_ABORT;
        s->capcols = cap;
    }
    source_column *c = &s->base.cols[s->base.ncols];
    memset(c, 0, sizeof *c);
    s->set_of[s->base.ncols] = NULL;
    s->base.ncols++;
    s->nset_of = s->base.ncols;
    const char *name = s->api.readstat_variable_get_name(v), *label = s->api.readstat_variable_get_label(v);
    c->numeric = s->api.readstat_variable_get_type_class(v) == READSTAT_TYPE_CLASS_NUMERIC;
    c->width = s->api.readstat_variable_get_storage_width(v);
    if (!(c->name = strdup(name ? name : ""))) return READSTAT_HANDLER_ABORT;
    if (label && *label && !(c->label = strdup(label))) return READSTAT_HANDLER_ABORT;
    if (val_labels && *val_labels && !(s->set_of[s->base.ncols - 1] = strdup(val_labels))) return READSTAT_HANDLER_ABORT;
    return READSTAT_HANDLER_OK;
}

/* The first parse: one value label (numeric values only). */
static int rs_on_value_label(const char *set, readstat_value_t value, const char *label, void *ctx)
{
    rs_source *s = ctx;
    if (s->api.readstat_value_type_class(value) != READSTAT_TYPE_CLASS_NUMERIC || s->api.readstat_value_is_tagged_missing(value))
        return READSTAT_HANDLER_OK;
    rs_set *st = NULL;
    for (size_t i = 0; i < s->nsets && !st; i++)
        if (!strcmp(s->sets[i].name, set)) st = &s->sets[i];
    if (!st) {
        if (AK_RESERVE(s->sets, s->capsets, s->nsets + 1) != 0) return READSTAT_HANDLER_ABORT;
        st = &s->sets[s->nsets];
        memset(st, 0, sizeof *st);
        if (!(st->name = strdup(set))) return READSTAT_HANDLER_ABORT;
        s->nsets++;
    }
    if (AK_RESERVE(st->labels, st->cap, st->n + 1) != 0) return READSTAT_HANDLER_ABORT;
    st->labels[st->n].value = s->api.readstat_double_value(value);
    if (!(st->labels[st->n].label = strdup(label ? label : ""))) return READSTAT_HANDLER_ABORT;
    st->n++;
    return READSTAT_HANDLER_OK;
}

/* Writes a number exactly: an integer plainly, else the shortest of %.15g
 * and %.17g that reads back as the same double. */
static int rs_number(char *buf, size_t cap, double d)
{
    if (d == floor(d) && fabs(d) < 9007199254740992.0) return snprintf(buf, cap, "%.0f", d == 0 ? 0.0 : d);
    int n = snprintf(buf, cap, "%.15g", d);
    if (strtod(buf, NULL) != d) n = snprintf(buf, cap, "%.17g", d);
    return n;
}

/* The scan: one value; a row goes to fn when its last value is read. */
static int rs_on_value(int obs, readstat_variable_t *v, readstat_value_t value, void *ctx)
{
    (void)obs;
    rs_source *s = ctx;
    const int i = s->api.readstat_variable_get_index(v);
    if (i < 0 || (uint32_t)i >= s->base.ncols) return READSTAT_HANDLER_ABORT;
    if (i == 0) s->row.len = 0;
    const source_column *c = &s->base.cols[i];
    char num[64];
    const char *text = NULL;
    size_t len = 0;
    if (s->api.readstat_value_is_missing(value, v)) {
        s->off[i] = SIZE_MAX;
    } else {
        if (s->api.readstat_value_type_class(value) == READSTAT_TYPE_CLASS_STRING) {
            text = s->api.readstat_string_value(value);
            if (!text) text = "";
        } else {
            const double d = s->api.readstat_double_value(value);
            for (size_t k = 0; !s->use_codes && k < c->nlabels && !text; k++)
                if (c->labels[k].value == d) text = c->labels[k].label;
            if (!text) {
                rs_number(num, sizeof num, d);
                text = num;
            }
        }
        len = strlen(text);
        s->off[i] = s->row.len;
        if (strbuf_reserve(&s->row, len + 1) != 0) {
            s->rc = ak_err_nomem(s->err);
            return READSTAT_HANDLER_ABORT;
        }
        memcpy(s->row.data + s->row.len, text, len + 1);
        s->row.len += len + 1;
    }
    s->len[i] = len;
    if ((uint32_t)i + 1 < s->base.ncols) return READSTAT_HANDLER_OK;
    for (uint32_t k = 0; k < s->base.ncols; k++) s->text[k] = s->off[k] == SIZE_MAX ? NULL : s->row.data + s->off[k];
    const source_row row = {s->text, s->len, s->base.ncols};
    s->rc = s->fn(s->ctx, &row, s->err);
    return s->rc < 0 ? READSTAT_HANDLER_ABORT : READSTAT_HANDLER_OK;
}

/* The scan: the variables again, as the first parse read them (ReadStat's
 * SPSS parser needs a variable handler to hand out values). */
static int rs_on_variable_again(int index, readstat_variable_t *v, const char *val_labels, void *ctx)
{
    (void)v;
    (void)val_labels;
    const rs_source *s = ctx;
    return index >= 0 && (uint32_t)index < s->base.ncols ? READSTAT_HANDLER_OK : READSTAT_HANDLER_ABORT;
}

/* A failed parse as an error naming the file. */
static int rs_fail(rs_source *s, readstat_error_t e, ak_error *err)
{
    return ak_err_set(err, ANONKIT_E_INPUT, s->base.shown, 0, 0, "cannot read: %s%s%s", s->api.readstat_error_message(e),
                      s->msg[0] ? ": " : "", s->msg);
}

static int rs_scan(source *base, source_row_fn fn, void *ctx, ak_error *err)
{
    rs_source *s = (rs_source *)base;
    readstat_parser_t *p = s->api.readstat_parser_init();
    if (!p) return ak_err_nomem(err);
    s->fn = fn;
    s->ctx = ctx;
    s->err = err;
    s->rc = ANONKIT_OK;
    s->msg[0] = '\0';
    s->api.readstat_set_variable_handler(p, rs_on_variable_again);
    s->api.readstat_set_value_handler(p, rs_on_value);
    s->api.readstat_set_error_handler(p, rs_on_error);
    s->api.readstat_set_handler_character_encoding(p, "UTF-8");
    const readstat_error_t e = rs_parse(s, p);
    s->api.readstat_parser_free(p);
    if (s->rc < 0) return s->rc;
    return e == READSTAT_OK ? ANONKIT_OK : rs_fail(s, e, err);
}

static void rs_close(source *base)
{
    rs_source *s = (rs_source *)base;
    for (uint32_t i = 0; s->set_of && i < s->nset_of; i++) free(s->set_of[i]);
    free(s->set_of);
    for (size_t i = 0; i < s->nsets; i++) {
        for (size_t k = 0; k < s->sets[i].n; k++) free(s->sets[i].labels[k].label);
        free(s->sets[i].labels);
        free(s->sets[i].name);
    }
    free(s->sets);
    source_columns_free(base->cols, base->ncols);
    free(base->shown);
    free(s->path);
    strbuf_free(&s->row);
    free(s->off);
    free(s->text);
    free(s->len);
    rs_api_close(&s->api);
    free(s);
}

static const source_ops rs_ops = {rs_scan, rs_close};

int source_open_readstat(source **out, const char *name, const source_options *o, ak_error *err)
{
    *out = NULL;
    rs_source *s = calloc(1, sizeof *s);
    if (!s) return ak_err_nomem(err);
    s->base.ops = &rs_ops;
    s->base.kind = SOURCE_READSTAT;
    s->format = rs_format_of(name);
    s->use_codes = o && o->use_codes;
    int rc = (s->base.shown = strdup(name)) && (s->path = strdup(name)) ? ANONKIT_OK : ak_err_nomem(err);
    if (rc == ANONKIT_OK) rc = rs_api_open(&s->api, RS_SONAME, s->base.shown, err);
    readstat_parser_t *p = rc == ANONKIT_OK ? s->api.readstat_parser_init() : NULL;
    if (rc == ANONKIT_OK && !p) rc = ak_err_nomem(err);
    if (rc == ANONKIT_OK) {
        s->api.readstat_set_variable_handler(p, rs_on_variable);
        s->api.readstat_set_value_label_handler(p, rs_on_value_label);
        s->api.readstat_set_error_handler(p, rs_on_error);
        s->api.readstat_set_handler_character_encoding(p, "UTF-8");
        const readstat_error_t e = rs_parse(s, p);
        if (e != READSTAT_OK) rc = rs_fail(s, e, err);
    }
    if (p) s->api.readstat_parser_free(p);
    if (rc == ANONKIT_OK && !s->base.ncols)
        rc = ak_err_set(err, ANONKIT_E_INPUT, s->base.shown, 0, 0, "the file has no variables");
    /* the value labels of each column, kept on the column for sinks and for the scan */
    for (uint32_t i = 0; rc == ANONKIT_OK && i < s->base.ncols; i++) {
        if (!s->set_of[i]) continue;
        for (size_t k = 0; k < s->nsets; k++) {
            if (strcmp(s->sets[k].name, s->set_of[i])) continue;
            source_column *c = &s->base.cols[i];
            if (!(c->labels = calloc(s->sets[k].n ? s->sets[k].n : 1, sizeof *c->labels))) {
                rc = ak_err_nomem(err);
                break;
            }
            for (size_t j = 0; j < s->sets[k].n; j++) {
                c->labels[j].value = s->sets[k].labels[j].value;
                if (!(c->labels[j].label = strdup(s->sets[k].labels[j].label))) {
                    rc = ak_err_nomem(err);
                    break;
                }
                c->nlabels = j + 1;
            }
            /* a labelled column is read as its labels: text */
            if (!s->use_codes && c->nlabels) c->numeric = 0;
            break;
        }
    }
    if (rc == ANONKIT_OK && (!(s->off = calloc(s->base.ncols, sizeof *s->off)) ||
                             !(s->text = calloc(s->base.ncols, sizeof *s->text)) ||
                             !(s->len = calloc(s->base.ncols, sizeof *s->len))))
        rc = ak_err_nomem(err);
    if (rc < 0) {
        rs_close(&s->base);
        return rc;
    }
    *out = &s->base;
    return ANONKIT_OK;
}

/* ---- Writing ---- */

typedef struct rs_sink {
    sink base;
    rs_api api;                 /* libreadstat, loaded on opening */
    rs_format format;
    outfile file;               /* the destination's temporary */
    readstat_writer_t *writer;
    readstat_variable_t **vars;
    const sink_table *types;
    strbuf field;               /* one value, NUL-terminated */
    char msg[512];
} rs_sink;

static ssize_t rs_write(const void *bytes, size_t len, void *ctx)
{
    rs_sink *s = ctx;
    return fwrite(bytes, 1, len, s->file.stream) == len ? (ssize_t)len : -1;
}

static void rs_sink_on_error(const char *message, void *ctx)
{
    rs_sink *s = ctx;
    snprintf(s->msg, sizeof s->msg, "%s", message);
}

/* A failed write as an error naming the file. */
static int rs_sink_fail(rs_sink *s, readstat_error_t e, ak_error *err)
{
    return ak_err_set(err, ANONKIT_E_IO, s->base.shown, 0, 0, "cannot write: %s%s%s", s->api.readstat_error_message(e),
                      s->msg[0] ? ": " : "", s->msg);
}

/* One row of the finished output into the file. */
static int rs_put_row(void *ctx, const source_row *row, ak_error *err)
{
    rs_sink *s = ctx;
    readstat_error_t e = s->api.readstat_begin_row(s->writer);
    for (uint32_t i = 0; e == READSTAT_OK && i < row->count; i++) {
        const sink_type t = s->types->types[i];
        s->field.len = 0;
        if (strbuf_reserve(&s->field, row->len[i] + 1) != 0) return ak_err_nomem(err);
        if (row->len[i]) memcpy(s->field.data, row->text[i], row->len[i]);
        s->field.data[row->len[i]] = '\0';
        if (t == SINK_TEXT)
            e = s->api.readstat_insert_string_value(s->writer, s->vars[i], s->field.data);
        else if (!row->len[i])
            e = s->api.readstat_insert_missing_value(s->writer, s->vars[i]);
        else
            e = s->api.readstat_insert_double_value(s->writer, s->vars[i], strtod(s->field.data, NULL));
    }
    if (e == READSTAT_OK) e = s->api.readstat_end_row(s->writer);
    return e == READSTAT_OK ? ANONKIT_OK : rs_sink_fail(s, e, err);
}

/* Adds the value labels of origin column c to numeric variable v. */
static int rs_add_labels(rs_sink *s, readstat_variable_t *v, const source_column *c, uint32_t i)
{
    if (!c || !c->nlabels || s->format == RS_XPT) return 0;
    char name[32];
    snprintf(name, sizeof name, "labels%u", i);
    const int int32 = s->format == RS_DTA;
    for (size_t k = 0; int32 && k < c->nlabels; k++)
        if (c->labels[k].value != floor(c->labels[k].value) || fabs(c->labels[k].value) > 2147483000.0) return 0;
    readstat_label_set_t *set = s->api.readstat_add_label_set(s->writer, int32 ? READSTAT_TYPE_INT32 : READSTAT_TYPE_DOUBLE, name);
    if (!set) return -1;
    for (size_t k = 0; k < c->nlabels; k++) {
        if (int32) s->api.readstat_label_int32_value(set, (int32_t)c->labels[k].value, c->labels[k].label);
        else s->api.readstat_label_double_value(set, c->labels[k].value, c->labels[k].label);
    }
    s->api.readstat_variable_set_label_set(v, set);
    return 0;
}

/* Writes the whole file into the temporary: all but the rename. */
static int rs_prepare(sink *base, FILE *csv, ak_error *err)
{
    rs_sink *s = (rs_sink *)base;
    sink_table t;
    AK_CHECK(sink_table_scan(&t, csv, base->delimiter, base->shown, err));
    s->types = &t;
    int rc = ANONKIT_OK;
    if (!(s->writer = s->api.readstat_writer_init()) || !(s->vars = calloc(t.ncols ? t.ncols : 1, sizeof *s->vars)))
        rc = ak_err_nomem(err);
    if (rc == ANONKIT_OK) {
        s->api.readstat_set_data_writer(s->writer, rs_write);
        s->api.readstat_writer_set_error_handler(s->writer, rs_sink_on_error);
        if (s->format == RS_ZSAV) s->api.readstat_writer_set_compression(s->writer, READSTAT_COMPRESS_BINARY);
        if (s->format == RS_XPT) s->api.readstat_writer_set_file_format_version(s->writer, 8); /* names of 32 characters */
    }
    for (uint32_t i = 0; rc == ANONKIT_OK && i < t.ncols; i++) {
        const int text = t.types[i] == SINK_TEXT;
        const size_t width = t.width[i] ? t.width[i] : 1;
        readstat_variable_t *v = s->api.readstat_add_variable(s->writer, t.names[i], text ? READSTAT_TYPE_STRING : READSTAT_TYPE_DOUBLE,
                                                       text ? width : 0);
        if (!v) {
            rc = ak_err_nomem(err);
            break;
        }
        s->vars[i] = v;
        const source_column *c = sink_origin(base, t.names[i]);
        if (c && c->label) s->api.readstat_variable_set_label(v, c->label);
        if (!text && rs_add_labels(s, v, c, i) != 0) rc = ak_err_nomem(err);
    }
    readstat_error_t e = READSTAT_OK;
    if (rc == ANONKIT_OK) {
        switch (s->format) {
        case RS_DTA: e = s->api.readstat_begin_writing_dta(s->writer, s, (long)t.rows); break;
        case RS_XPT: e = s->api.readstat_begin_writing_xport(s->writer, s, (long)t.rows); break;
        default: e = s->api.readstat_begin_writing_sav(s->writer, s, (long)t.rows); break;
        }
        if (e == READSTAT_OK) e = s->api.readstat_validate_metadata(s->writer);
        for (uint32_t i = 0; e == READSTAT_OK && i < t.ncols; i++) e = s->api.readstat_validate_variable(s->writer, s->vars[i]);
        if (e != READSTAT_OK) rc = rs_sink_fail(s, e, err);
    }
    if (rc == ANONKIT_OK) rc = sink_rows(csv, base->delimiter, base->shown, rs_put_row, s, err);
    if (rc == ANONKIT_OK && (e = s->api.readstat_end_writing(s->writer)) != READSTAT_OK) rc = rs_sink_fail(s, e, err);
    s->types = NULL;
    sink_table_free(&t);
    return rc;
}

static int rs_commit(sink *base, ak_error *err)
{
    rs_sink *s = (rs_sink *)base;
    return outfile_commit(&s->file, err);
}

static void rs_sink_free(sink *base)
{
    rs_sink *s = (rs_sink *)base;
    outfile_abort(&s->file);
    if (s->writer) s->api.readstat_writer_free(s->writer);
    rs_api_close(&s->api);
    free(s->vars);
    strbuf_free(&s->field);
    free(base->shown);
    free(s);
}

static const sink_ops rs_sink_ops = {rs_prepare, rs_commit, rs_sink_free};

int sink_open_readstat(sink **out, const char *name, const source_options *o, ak_error *err)
{
    *out = NULL;
    rs_sink *s = calloc(1, sizeof *s);
    if (!s) return ak_err_nomem(err);
    s->base.ops = &rs_sink_ops;
    s->base.delimiter = o && o->delimiter ? o->delimiter : ',';
    s->format = rs_format_of(name);
    int rc = (s->base.shown = strdup(name)) ? ANONKIT_OK : ak_err_nomem(err);
    if (rc == ANONKIT_OK && s->format == RS_SAS7BDAT)
        rc = ak_err_set(err, ANONKIT_E_USAGE, name, 0, 0, "SAS .sas7bdat files are read only; write .xpt");
    if (rc == ANONKIT_OK && s->format == RS_POR)
        rc = ak_err_set(err, ANONKIT_E_USAGE, name, 0, 0, "SPSS portable .por files are read only; write .sav");
    if (rc == ANONKIT_OK) rc = rs_api_open(&s->api, RS_SONAME, s->base.shown, err);
    if (rc == ANONKIT_OK) rc = outfile_open(&s->file, name, err); /* an unwritable destination fails now */
    if (rc < 0) {
        rs_sink_free(&s->base);
        return rc;
    }
    *out = &s->base;
    return ANONKIT_OK;
}
