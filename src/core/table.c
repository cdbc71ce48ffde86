/* table.c — reading a CSV once and encoding its QI and sensitive columns
 * (docs/ARCHITECTURE.md §3 step 1). Numeric QIs are interned by value while streaming and
 * ranked once at the end; categorical QIs are looked up in their hierarchy. */
#include "core/table.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/hugemem.h"
#include "common/numparse.h"
#include "core/hierbuild.h"
#include "core/numdict.h"
#include "core/table_internal.h"
#include "core/table_missing.h"
#include "io/csv.h"
#include "io/memtable.h"

static char *dup_str(const char *s, size_t len)
{
    char *p = malloc(len + 1);
    if (!p) return NULL;
    memcpy(p, s, len);
    p[len] = '\0';
    return p;
}

void table__split_free(table_split *s, uint32_t nqi)
{
    free(s->sensitive_map);
    free(s->class_map);
    for (uint32_t q = 0; s->numeric_ids && q < nqi; q++) free(s->numeric_ids[q]);
    free(s->numeric_ids);
    memset(s, 0, sizeof *s);
}

void table_free(table *t)
{
    if (!t) return;
    free(t->path);
    free(t->display_name);
    if (t->column_names)
        for (uint32_t c = 0; c < t->ncolumns; c++) free(t->column_names[c]);
    free(t->column_names);
    free(t->roles);
    for (uint32_t q = 0; t->qi && q < t->nqi; q++) {
        table_qi *a = &t->qi[q];
        free(a->name);
        hier_free(a->h);
        free(a->values);
        free(a->texts);
        strbuf_free(&a->text_store);
        free(a->codes);
        numdict_map_free(&a->prov);
    }
    free(t->qi);
    free(t->sensitive_codes);
    strmap_free(&t->sensitive_dict);
    free(t->sensitive_values);
    free(t->class_codes);
    strmap_free(&t->class_dict);
    free(t->target_values);
    table__split_free(&t->split, t->nqi);
    digest_free(&t->digest);
    for (size_t i = 0; i < t->nmissing; i++) free(t->missing[i]);
    free(t->missing);
    free(t);
}

static int find_column(const table *t, const char *name)
{
    for (uint32_t c = 0; c < t->ncolumns; c++)
        if (strcmp(t->column_names[c], name) == 0) return (int)c;
    return -1;
}

static int unknown_column(const table *t, const char *what, const char *name, ak_error *err)
{
    char list[512];
    size_t used = 0;
    list[0] = '\0';
    for (uint32_t c = 0; c < t->ncolumns && used < sizeof list - 8; c++) {
        int n = snprintf(list + used, sizeof list - used, "%s%s", c ? ", " : "", t->column_names[c]);
        if (n < 0) break;
        used += (size_t)n;
    }
    return ak_err_set(err, ANONKIT_E_USAGE, t->display_name, 1, 0,
                      "no column named '%s' (given as %s); the columns are: %s", name, what, list);
}

/* Claims a column for a role; a column may have one role only. */
static int assign_role(table *t, const char *what, const char *name, column_role role, int *column,
                       ak_error *err)
{
    int c = find_column(t, name);
    if (c < 0) return unknown_column(t, what, name, err);
    if (t->roles[c] != ROLE_OTHER)
        return ak_err_set(err, ANONKIT_E_USAGE, t->display_name, 1, 0,
                          "column '%s' is given two roles (quasi-identifier, sensitive, identifier)", name);
    t->roles[c] = (unsigned char)role;
    *column = c;
    return ANONKIT_OK;
}

/* Finds the column of a class label or target (none when name is NULL); it
 * may not also be a QI, sensitive or an identifier. */
static int find_plain_column(table *t, const char *what, const char *name, int *column, ak_error *err)
{
    *column = -1;
    if (!name) return ANONKIT_OK;
    int c = find_column(t, name);
    if (c < 0) return unknown_column(t, what, name, err);
    if (t->roles[c] != ROLE_OTHER)
        return ak_err_set(err, ANONKIT_E_USAGE, t->display_name, 1, 0,
                          "column '%s' is %s and cannot also be a quasi-identifier, sensitive or an identifier",
                          name, what);
    *column = c;
    return ANONKIT_OK;
}

/* Reads the header row and resolves the column roles of spec. */
static int read_header(table *t, csv_reader *reader, const table_spec *spec, ak_error *err)
{
    csv_record rec;
    int rc = csv_read(reader, &rec, err);
    if (rc < 0) return rc;
    if (rc == 0) return ak_err_set(err, ANONKIT_E_INPUT, t->display_name, 1, 0, "the file is empty: a header row is needed");
    t->ncolumns = rec.count;
    t->column_names = calloc(rec.count, sizeof *t->column_names);
    t->roles = calloc(rec.count, 1);
    if (!t->column_names || !t->roles) return ak_err_nomem(err);
    /* a name seen twice is found through a map: a header of 100,000 columns
     * compared pair by pair took seconds */
    strmap seen;
    if (strmap_init(&seen, rec.count) != 0) return ak_err_nomem(err);
    rc = ANONKIT_OK;
    for (uint32_t c = 0; c < rec.count && rc == ANONKIT_OK; c++) {
        uint32_t id;
        int inserted;
        if (memchr(rec.fields[c].data, '\0', rec.fields[c].len)) /* (names are C strings) */
            rc = ak_err_set(err, ANONKIT_E_INPUT, t->display_name, 1, c + 1, "column %u's name holds a NUL byte", c + 1);
        else if (!(t->column_names[c] = dup_str(rec.fields[c].data, rec.fields[c].len)) ||
                 strmap_intern(&seen, rec.fields[c].data, rec.fields[c].len, &id, &inserted) != 0)
            rc = ak_err_nomem(err);
        else if (!inserted)
            rc = ak_err_set(err, ANONKIT_E_INPUT, t->display_name, 1, c + 1, "the header names column '%s' twice",
                            t->column_names[c]);
    }
    strmap_free(&seen);
    if (rc < 0) return rc;
    int column;
    for (uint32_t q = 0; q < t->nqi; q++) {
        AK_CHECK(assign_role(t, "a quasi-identifier", spec->qi_names[q], ROLE_QI, &column, err));
        t->qi[q].column = (uint32_t)column;
    }
    if (spec->sensitive_name)
        AK_CHECK(assign_role(t, "the sensitive attribute", spec->sensitive_name, ROLE_SENSITIVE,
                             &t->sensitive_column, err));
    for (size_t i = 0; i < spec->nidentifiers; i++)
        AK_CHECK(assign_role(t, "an identifier", spec->identifier_names[i], ROLE_IDENTIFIER, &column, err));
    /* The class label and the target keep no role: they are copied to the
     * output. They must not be sensitive ([LeFevre07] footnote 3) nor a QI. */
    AK_CHECK(find_plain_column(t, "the class label", spec->class_name, &t->class_column, err));
    AK_CHECK(find_plain_column(t, "the regression target", spec->target_name, &t->target_column, err));
    return ANONKIT_OK;
}

/* Whether any numeric QI of readers qr saw a missing value. */
int table__has_missing_rows(const table *t, const qi_reader *qr)
{
    for (uint32_t q = 0; qr && q < t->nqi; q++)
        if (qr[q].missing.n || qr[q].missing.streamed) return 1;
    return 0;
}

int table__grow_rows(table *t, size_t *cap, size_t need, ak_error *err)
{
    if (need <= *cap) return ANONKIT_OK;
    size_t n = *cap ? *cap * 2 : 65536;
    while (n < need) n *= 2;
    for (uint32_t q = 0; q < t->nqi; q++) {
        uint32_t *p = ak_huge_realloc(t->qi[q].codes, n * sizeof *p);
        if (!p) return ak_err_nomem(err);
        t->qi[q].codes = p;
    }
    if (t->sensitive_column >= 0) {
        uint32_t *p = realloc(t->sensitive_codes, n * sizeof *p);
        if (!p) return ak_err_nomem(err);
        t->sensitive_codes = p;
    }
    if (t->class_column >= 0) {
        uint32_t *p = realloc(t->class_codes, n * sizeof *p);
        if (!p) return ak_err_nomem(err);
        t->class_codes = p;
    }
    if (t->sensitive_numeric) {
        double *p = realloc(t->sensitive_values, n * sizeof *p);
        if (!p) return ak_err_nomem(err);
        t->sensitive_values = p;
    }
    if (t->target_column >= 0) {
        double *p = realloc(t->target_values, n * sizeof *p);
        if (!p) return ak_err_nomem(err);
        t->target_values = p;
    }
    *cap = n;
    return ANONKIT_OK;
}

static int report_missing(const table *t, const missing_value *missing, size_t nlisted,
                          uint64_t total, ak_error *err)
{
    char msg[900];
    size_t used = 0;
    const table_qi *a = &t->qi[missing[0].qi];
    int n = snprintf(msg, sizeof msg, "value '%s' of column '%s' is not a leaf of hierarchy %s",
                     missing[0].text, a->name, hier_path(a->h));
    used = n > 0 ? (size_t)n : 0;
    if (nlisted > 1) {
        n = snprintf(msg + used, sizeof msg - used, "; %llu values are missing in all, among them:",
                     (unsigned long long)total);
        if (n > 0) used += (size_t)n;
        for (size_t i = 1; i < nlisted && used < sizeof msg; i++) {
            n = snprintf(msg + used, sizeof msg - used, " '%s' (%s, line %ld)%s", missing[i].text,
                         t->qi[missing[i].qi].name, missing[i].line, i + 1 < nlisted ? "," : "");
            if (n < 0) break;
            used += (size_t)n;
        }
    }
    if (used < sizeof msg) {
        /* how to add them: the builder that covers every value of the column */
        char delim[24] = "";
        if (t->delimiter != ',') snprintf(delim, sizeof delim, " --delimiter '%c'", t->delimiter);
        snprintf(msg + used, sizeof msg - used,
                 "; add a row for each to the hierarchy, or build one that covers every value: anonkit hierarchy %s%s "
                 "--column %s --flat -o FILE (docs/hierarchies.md)",
                 t->display_name, delim, a->name);
    }
    return ak_err_set(err, ANONKIT_E_INPUT, t->display_name, missing[0].line, t->qi[missing[0].qi].column + 1,
                      "%s", msg);
}

/* Parses field f of column `column` as a number into *out. */
static int parse_number(const table *t, const csv_field *f, long line, int column, const char *what, double *out,
                        ak_error *err)
{
    if (ak_num_parse(f->data, f->len, out) == 0) return ANONKIT_OK;
    return ak_err_set(err, ANONKIT_E_INPUT, t->display_name, line, column + 1,
                      "%s '%s' must be numeric but holds '%s'", what, t->column_names[column],
                      AK_SHOW(f->data, f->len));
}

/* Numeric QI column c of a table in memory (table_qi.direct), data row r,
 * without the reader's text: 1 with the value in *v when numdict_add would
 * take the text the table backend gives the cell (memtable_record: the
 * shortest text of the number) by its integer-mode fast path, that is an
 * integer in 0 .. 999,999,999 while d is in integer mode; else 0 with that
 * text (or the empty field of a missing cell) in *f, laid in buf (which has
 * MEMTABLE_NUMBER_SCRATCH + CSV_FIELD_READABLE bytes) as the reader would.
 * Either way the code numdict gives the row is the one the text gives it. */
static inline int direct_cell(const memcol *c, uint64_t r, const numdict *d, int64_t *v, csv_field *f, char *buf)
{
    int n;
    if (c->missing && c->missing[r]) {
        f->data = "";
        f->len = 0;
        return 0;
    }
    if (c->kind == ANONKIT_COLUMN_INT64) {
        const int64_t x = c->i[r];
        if (!d->general && x >= 0 && x <= 999999999) {
            *v = x;
            return 1;
        }
        n = memtable_format_int64(buf, x);
    } else { /* (an integral double below 1e15 is written as its integer, -0 as "0": memtable_format_double) */
        const double x = c->d[r];
        if (!d->general && x >= 0 && x <= 999999999.0 && x == (double)(int64_t)x) {
            *v = (int64_t)x;
            return 1;
        }
        n = memtable_format_double(buf, x);
    }
    memset(buf + n, 0, CSV_FIELD_READABLE);
    f->data = buf;
    f->len = (uint32_t)n;
    return 0;
}

/* Encodes the QI, sensitive, class and target fields of one record as row `row`. */
int table__encode_record(table *t, qi_reader *qr, const label_dicts *dicts, const csv_record *rec, size_t row,
                         missing_list *missing, ak_error *err)
{
    if (rec->count != t->ncolumns) {
        if (rec->count == 1 && rec->fields[0].len == 0)
            return ak_err_set(err, ANONKIT_E_INPUT, t->display_name, rec->line, 0, "empty line: expected %u fields",
                              t->ncolumns);
        return ak_err_set(err, ANONKIT_E_INPUT, t->display_name, rec->line, 0,
                          "expected %u fields as in the header, found %u", t->ncolumns, rec->count);
    }
    for (uint32_t q = 0; q < t->nqi; q++) {
        table_qi *a = &t->qi[q];
        const csv_field *f = &rec->fields[a->column];
        uint32_t code;
        csv_field cell;
        char cell_text[MEMTABLE_NUMBER_SCRATCH + CSV_FIELD_READABLE];
        /* (table_is_missing without its call for the common cases: an empty
         * field is missing, any other only when it is one of --missing's spellings) */
        if (a->kind == ATTR_NUMERIC && !a->h && (f->len == 0 || (t->nmissing && table_is_missing(t, f)))) {
            /* A number of a table in memory is handed out as an empty field
             * (table__reader_wants), so it is looked at here, where a file's
             * rows come only for a missing value: its array instead, at data
             * row rec->offset - 1. (Such a table has no --missing spellings:
             * an empty field is all table_is_missing takes.) */
            if (a->direct) {
                int64_t v;
                if (direct_cell(a->direct, (uint64_t)rec->offset - 1, &qr[q].numbers, &v, &cell, cell_text)) {
                    numdict *d = &qr[q].numbers;
                    a->codes[row] = (uint32_t)(v + NUMDICT_INT_BIAS); /* numdict_add's integer mode */
                    if (v < d->min) d->min = v;
                    if (v > d->max) d->max = v;
                    if (!qr[q].missing.fill_set) tm_rows_fill(&qr[q].missing, a->codes, row);
                    continue;
                }
                f = &cell; /* its text, or the empty field of a missing cell */
            }
            if (!a->direct || f->len == 0) {
                AK_CHECK(tm_rows_add(&qr[q].missing, qr[q].numbers.streaming, f, a->codes, row, err));
                continue;
            }
        }
        if (a->kind == ATTR_NUMERIC) {
            /* fields of the CSV reader may be read as words (CSV_FIELD_READABLE) */
            int added = numdict_add_padded(&qr[q].numbers, f->data, f->len, a->codes, row, err);
            if (added == 0 && !qr[q].missing.fill_set) tm_rows_fill(&qr[q].missing, a->codes, row);
            if (added < -1) {
                if (added == NUMDICT_INEXACT)
                    return ak_err_set(err, ANONKIT_E_INPUT, t->display_name, rec->line, a->column + 1,
                                      "value %s of QI '%s' has more digits than anonkit can order exactly (an "
                                      "integer within +-(2^63 - 1), or at most %d significant digits)",
                                      AK_SHOW(f->data, f->len), a->name, AK_NUM_MAX_DIGITS);
                return added;
            }
            if (added == -1) {
                if (a->h)
                    return ak_err_set(err, ANONKIT_E_INPUT, t->display_name, rec->line, a->column + 1,
                                      "column '%s' is declared numeric but holds '%s'", a->name,
                                      AK_SHOW(f->data, f->len));
                return ak_err_set(err, ANONKIT_E_INPUT, t->display_name, rec->line, a->column + 1,
                                  "quasi-identifier '%s' has no hierarchy, so it must be numeric, but holds '%s'; "
                                  "give it one with --hierarchy %s=FILE, or %s=auto for a flat one built from the data",
                                  a->name, AK_SHOW(f->data, f->len), a->name, a->name);
            }
            /* numeric with a hierarchy: every value must be a leaf too */
            if (!a->h || hier_find_leaf(a->h, f->data, f->len, &code) == 0) continue;
        } else {
            if (hier_find_leaf(a->h, f->data, f->len, &code) == 0 ||
                (table_is_missing(t, f) && hier_find_leaf(a->h, HB_MISSING_LABEL, strlen(HB_MISSING_LABEL), &code) == 0)) {
                a->codes[row] = code; /* a missing value: its own leaf, else the leaf NULL */
                continue;
            }
            a->codes[row] = 0;
        }
        if (missing->nlisted < MAX_MISSING_LISTED) { /* distinct values, each with its first line */
            missing_value *m = &missing->listed[missing->nlisted];
            snprintf(m->text, sizeof m->text, "%s", AK_SHOW(f->data, f->len));
            m->line = rec->line;
            m->qi = q;
            size_t i = 0;
            while (i < missing->nlisted && (missing->listed[i].qi != q || strcmp(missing->listed[i].text, m->text)))
                i++;
            if (i == missing->nlisted) missing->nlisted++;
        }
        missing->count++;
    }
    if (t->sensitive_column >= 0) {
        const csv_field *f = &rec->fields[t->sensitive_column];
        static const csv_field no_value = {"", 0}; /* every missing value is one value, however spelled */
        if (t->nmissing && table_is_missing(t, f)) f = &no_value;
        if (strmap_intern(dicts->sensitive, f->data, f->len, &t->sensitive_codes[row], NULL) != 0)
            return ak_err_nomem(err);
        if (t->sensitive_numeric)
            AK_CHECK(parse_number(t, f, rec->line, t->sensitive_column, "sensitive attribute",
                                  &t->sensitive_values[row], err));
    }
    if (t->class_column >= 0) {
        const csv_field *f = &rec->fields[t->class_column];
        if (strmap_intern(dicts->classes, f->data, f->len, &t->class_codes[row], NULL) != 0) return ak_err_nomem(err);
    }
    if (t->target_column >= 0)
        AK_CHECK(parse_number(t, &rec->fields[t->target_column], rec->line, t->target_column, "regression target",
                              &t->target_values[row], err));
    return ANONKIT_OK;
}

/* Reads and encodes every data row that `reader` still holds. */
static int load_rows(table *t, csv_reader *reader, qi_reader *qr, ak_error *err)
{
    size_t cap = 0;
    missing_list missing;
    missing.nlisted = 0;
    missing.count = 0;
    csv_record rec;
    int rc;
    while ((rc = csv_read(reader, &rec, err)) == 1) {
        AK_CHECK(table__grow_rows(t, &cap, t->nrows + 1, err));
        const label_dicts dicts = {&t->sensitive_dict, &t->class_dict};
        AK_CHECK(table__encode_record(t, qr, &dicts, &rec, t->nrows, &missing, err));
        t->nrows++;
    }
    if (rc < 0) return rc;
    if (missing.count) return report_missing(t, missing.listed, missing.nlisted, missing.count, err);
    return ANONKIT_OK;
}

/* Absorbs the provisional numeric codes of the n rows at slot base. */
int table__absorb_chunk(table *t, qi_reader *qr, size_t base, size_t n, ak_error *err)
{
    for (uint32_t q = 0; q < t->nqi; q++)
        if (t->qi[q].kind == ATTR_NUMERIC) AK_CHECK(numdict_absorb(&qr[q].numbers, t->qi[q].codes + base, n, err));
    return ANONKIT_OK;
}

/* load_rows for a streaming load (spec->row_sink): every row goes to the sink
 * and its slot is reused; numeric codes are absorbed by their dictionaries
 * every STREAM_CHUNK_ROWS rows. */
static int stream_rows(table *t, const table_spec *spec, csv_reader *reader, qi_reader *qr, ak_error *err)
{
    size_t cap = 0;
    AK_CHECK(table__grow_rows(t, &cap, STREAM_CHUNK_ROWS, err));
    missing_list missing;
    missing.nlisted = 0;
    missing.count = 0;
    csv_record rec;
    const label_dicts dicts = {&t->sensitive_dict, &t->class_dict};
    size_t slot = 0;
    int rc;
    while ((rc = csv_read(reader, &rec, err)) == 1) {
        AK_CHECK(table__encode_record(t, qr, &dicts, &rec, slot, &missing, err));
        if (!missing.count) AK_CHECK(spec->row_sink(spec->sink_ctx, t, 0, slot, &rec, err));
        t->nrows++;
        if (++slot == STREAM_CHUNK_ROWS) {
            AK_CHECK(table__absorb_chunk(t, qr, 0, slot, err));
            slot = 0;
        }
    }
    if (rc < 0) return rc;
    AK_CHECK(table__absorb_chunk(t, qr, 0, slot, err));
    if (missing.count) return report_missing(t, missing.listed, missing.nlisted, missing.count, err);
    return ANONKIT_OK;
}

/* Which numeric QIs of a table in memory are read as numbers (table_qi.direct):
 * those without a hierarchy whose column is int64 or double, when every
 * missing value is an empty cell (no --missing spellings, which a number's
 * text might match) and the rows are kept (a streaming load hands the
 * reader's fields on to its sink). */
static void set_direct(table *t, const table_spec *spec)
{
    if (!t->mem || spec->row_sink || t->nmissing) return;
    for (uint32_t q = 0; q < t->nqi; q++) {
        table_qi *a = &t->qi[q];
        const memcol *c = &t->mem->cols[a->column];
        if (a->kind == ATTR_NUMERIC && !a->h && (c->kind == ANONKIT_COLUMN_INT64 || c->kind == ANONKIT_COLUMN_DOUBLE))
            a->direct = c;
    }
}

int table_load(table **out, const table_spec *spec, ak_error *err)
{
    *out = NULL;
    table *t = calloc(1, sizeof *t);
    if (!t) return ak_err_nomem(err);
    t->sensitive_column = -1;
    t->class_column = -1;
    t->target_column = -1;
    t->sensitive_numeric = spec->sensitive_numeric && spec->sensitive_name;
    t->delimiter = spec->delimiter;
    t->path = dup_str(spec->path, strlen(spec->path));
    t->mem = spec->mem;
    const char *shown = spec->display_name ? spec->display_name : spec->path;
    t->display_name = dup_str(shown, strlen(shown));
    t->interval_format = spec->interval_format;
    if (spec->nmissing && (t->missing = calloc(spec->nmissing, sizeof *t->missing)) != NULL) {
        for (size_t i = 0; i < spec->nmissing; i++)
            if ((t->missing[t->nmissing] = dup_str(spec->missing[i], strlen(spec->missing[i]))) != NULL) t->nmissing++;
    }
    const int missing_copied = t->nmissing == spec->nmissing;
    t->nqi = (uint32_t)spec->nqi;
    t->qi = calloc(spec->nqi ? spec->nqi : 1, sizeof *t->qi);
    qi_reader *qr = calloc(spec->nqi ? spec->nqi : 1, sizeof *qr);
    csv_reader *reader = NULL;
    int rc = ANONKIT_OK;
    if (!t->path || !t->display_name || !t->qi || !qr || !missing_copied || strmap_init(&t->sensitive_dict, 64) != 0 ||
        strmap_init(&t->class_dict, 64) != 0) {
        rc = ak_err_nomem(err);
        goto done;
    }
    if (spec->nqi == 0) {
        rc = ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0, "no quasi-identifier given (--qi)");
        goto done;
    }
    for (uint32_t q = 0; q < t->nqi; q++) {
        table_qi *a = &t->qi[q];
        a->name = dup_str(spec->qi_names[q], strlen(spec->qi_names[q]));
        if (!a->name) { rc = ak_err_nomem(err); goto done; }
        for (uint32_t p = 0; p < q; p++)
            if (strcmp(t->qi[p].name, a->name) == 0) {
                rc = ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0, "quasi-identifier '%s' is named twice", a->name);
                goto done;
            }
        if (spec->hierarchy_paths && spec->hierarchy_paths[q]) {
            if (!strcmp(spec->hierarchy_paths[q], "auto")) { /* a flat one built from the data */
                const hb_missing m = {spec->missing, spec->nmissing};
                uint32_t nvalues;
                if ((rc = hb_flat_hier(spec->path, shown, spec->delimiter, a->name, &m, &a->h, &nvalues, err)) < 0)
                    goto done;
            } else if (spec->hierarchy_tables && spec->hierarchy_tables[q]) {
                if ((rc = hier_load_table(&a->h, spec->hierarchy_tables[q], spec->hierarchy_paths[q], err)) < 0)
                    goto done;
            } else if ((rc = hier_load(&a->h, spec->hierarchy_paths[q], err)) < 0) {
                goto done;
            }
        }
        a->kind = a->h && !(spec->force_numeric && spec->force_numeric[q]) ? ATTR_CATEGORICAL : ATTR_NUMERIC;
        if (a->kind == ATTR_NUMERIC) {
            numdict_init(&qr[q].numbers);
            qr[q].numbers.streaming = spec->row_sink != NULL;
        } else {
            a->ncodes = hier_leaf_count(a->h);
        }
    }
    if ((rc = spec->mem ? csv_reader_open_table(&reader, spec->mem, spec->display_name, err)
                        : csv_reader_open(&reader, spec->path, spec->delimiter, err)) < 0)
        goto done;
    /* the digest (streaming loads keep what they need and do not read the input again) */
    if (!spec->row_sink && !spec->read_once && (rc = csv_reader_digest(reader, &t->digest, 0, err)) < 0) goto done;
    if ((rc = read_header(t, reader, spec, err)) < 0) goto done;
    set_direct(t, spec);
    if ((rc = table__reader_wants(t, reader, err)) < 0) goto done; /* a table: only the columns read are formatted */
    if (spec->body_range) { /* the rows of one byte range: the same reader, from there */
        csv_reader_free(reader);
        reader = NULL;
        if ((rc = csv_reader_open_range(&reader, spec->path, spec->delimiter, spec->body_offset, spec->body_length,
                                        spec->body_first_line, err)) < 0)
            goto done;
    }
    csv_reader_progress(reader, spec->progress, 0);
    if (spec->row_sink) {
        int streamed = 0;
        if (spec->threads > 1 && !spec->body_range &&
            (rc = table__stream_rows_parallel(t, spec, qr, csv_reader_offset(reader), &streamed, err)) < 0)
            goto done;
        if (!streamed && ((rc = spec->sink_start(spec->sink_ctx, t, 1, err)) < 0 ||
                          (rc = stream_rows(t, spec, reader, qr, err)) < 0))
            goto done;
        for (uint32_t q = 0; q < t->nqi; q++) {
            table_qi *a = &t->qi[q];
            free(a->codes); /* the last chunk's provisional codes */
            a->codes = NULL;
            if (a->kind == ATTR_NUMERIC &&
                ((rc = numdict_finish_stream(&qr[q].numbers, &a->values, &a->texts, &a->text_store, &a->ncodes,
                                             &a->prov, err)) < 0 ||
                 (rc = tm_shift(a, &qr[q].missing, 0, err)) < 0))
                goto done;
        }
        free(t->sensitive_codes);
        free(t->class_codes);
        free(t->sensitive_values);
        free(t->target_values);
        t->sensitive_codes = t->class_codes = NULL;
        t->sensitive_values = t->target_values = NULL;
        rc = ANONKIT_OK;
        goto done;
    }
    int loaded = 0;
    if (spec->threads > 1 && !spec->body_range && (rc = table__load_rows_parallel(t, spec, qr, csv_reader_offset(reader), &loaded, err)) < 0)
        goto done;
    if (!loaded && (rc = load_rows(t, reader, qr, err)) < 0) goto done;
    if ((rc = ak_progress_phase(spec->progress, ANONKIT_PHASE_ENCODING, t->nrows, 0, err)) < 0) goto done;
    if (!loaded && (rc = table__finish_numeric(t, qr, spec->threads, NULL, 0, err)) < 0) goto done;
    for (uint32_t q = 0; q < t->nqi; q++)
        if (t->qi[q].kind == ATTR_NUMERIC && (rc = tm_shift(&t->qi[q], &qr[q].missing, t->nrows, err)) < 0) goto done;
    rc = ANONKIT_OK;
done:
    csv_reader_free(reader);
    for (uint32_t q = 0; t->qi && q < t->nqi; q++) t->qi[q].direct = NULL; /* (the load's only) */
    for (uint32_t q = 0; qr && q < t->nqi; q++) {
        numdict_free(&qr[q].numbers);
        tm_rows_reset(&qr[q].missing);
    }
    free(qr);
    if (rc < 0) {
        /* Messages name the input as the user gave it, not a spooled copy. */
        if (err && spec->display_name && strcmp(err->file, spec->path) == 0)
            snprintf(err->file, sizeof err->file, "%s", spec->display_name);
        table_free(t);
        return rc;
    }
    if (spec->loaded) spec->loaded(spec->loaded_ctx, spec->path);
    *out = t;
    return ANONKIT_OK;
}

int table__reader_wants(const table *t, csv_reader *reader, ak_error *err)
{
    if (!t->mem) return ANONKIT_OK;
    unsigned char *wanted = calloc(t->ncolumns ? t->ncolumns : 1, 1);
    if (!wanted) return ak_err_nomem(err);
    for (uint32_t q = 0; q < t->nqi; q++) wanted[t->qi[q].column] = !t->qi[q].direct; /* (read as numbers) */
    if (t->sensitive_column >= 0) wanted[t->sensitive_column] = 1;
    if (t->class_column >= 0) wanted[t->class_column] = 1;
    if (t->target_column >= 0) wanted[t->target_column] = 1;
    const int rc = csv_reader_table_columns(reader, wanted, err);
    free(wanted);
    return rc;
}

int table_reader_open(const table *t, csv_reader **out, ak_error *err)
{
    return t->mem ? csv_reader_open_table(out, t->mem, t->display_name, err)
                  : csv_reader_open(out, t->path, t->delimiter, err);
}

/* The normalized range of codes [lo, hi] of numeric QI a (see table_ncp). */
static inline double numeric_ncp(const table_qi *a, uint32_t lo, uint32_t hi)
{
    const double span = a->ncodes > 1 ? a->values[a->ncodes - 1] - a->values[0] : 0;
    return span > 0 ? (a->values[hi] - a->values[lo]) / span : 0;
}

double table_ncp(const table *t, uint32_t q, uint32_t lo, uint32_t hi)
{
    const table_qi *a = &t->qi[q];
    if (a->kind == ATTR_CATEGORICAL) {
        const hier_node *u = hier_node_at(a->h, hier_lca(a->h, lo, hi));
        const uint32_t leaves = u->hi - u->lo + 1;
        return leaves == 1 ? 0.0 : (double)leaves / (double)hier_leaf_count(a->h);
    }
    return numeric_ncp(a, lo, hi);
}

uint32_t table_widest_first(const table *t, const uint32_t *lo, const uint32_t *hi, uint32_t *order)
{
    const uint32_t d = t->nqi;
    /* The values at a box's ends lie anywhere in the (large) value arrays and
     * mostly miss the cache: ask for all of them before using any, so that
     * the misses overlap instead of following one another. */
    for (uint32_t q = 0; q < d; q++) {
        const table_qi *a = &t->qi[q];
        if (a->kind == ATTR_NUMERIC && lo[q] != hi[q]) {
            __builtin_prefetch(a->values + lo[q]);
            __builtin_prefetch(a->values + hi[q]);
        }
    }
    double range[d ? d : 1];
    for (uint32_t q = 0; q < d; q++) {
        const table_qi *a = &t->qi[q];
        range[q] = lo[q] == hi[q] ? 0 : a->kind == ATTR_NUMERIC ? numeric_ncp(a, lo[q], hi[q]) : table_ncp(t, q, lo[q], hi[q]);
    }
    uint32_t ncand = 0;
    for (uint32_t q = 0; q < d; q++) {
        if (range[q] <= 0) continue;
        uint32_t at = ncand++; /* insertion sort: wider first, then lower index */
        while (at > 0 && range[order[at - 1]] < range[q]) {
            order[at] = order[at - 1];
            at--;
        }
        order[at] = q;
    }
    return ncand;
}
