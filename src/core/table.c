/* table.c — reading a CSV once and encoding its QI and sensitive columns
 * (DESIGN.md §1 step 1). Numeric QIs are interned by value while streaming and
 * ranked once at the end; categorical QIs are looked up in their hierarchy. */
#include "core/table.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/numdict.h"
#include "io/csv.h"

#define MAX_MISSING_LISTED 10

static char *dup_str(const char *s, size_t len)
{
    char *p = malloc(len + 1);
    if (!p) return NULL;
    memcpy(p, s, len);
    p[len] = '\0';
    return p;
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
    }
    free(t->qi);
    free(t->sensitive_codes);
    strmap_free(&t->sensitive_dict);
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
    for (uint32_t c = 0; c < rec.count; c++) {
        if (!(t->column_names[c] = dup_str(rec.fields[c].data, rec.fields[c].len))) return ak_err_nomem(err);
        for (uint32_t prev = 0; prev < c; prev++)
            if (strcmp(t->column_names[prev], t->column_names[c]) == 0)
                return ak_err_set(err, ANONKIT_E_INPUT, t->display_name, 1, c + 1,
                                  "the header names column '%s' twice", t->column_names[c]);
    }
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
    return ANONKIT_OK;
}

/* Per-QI state while streaming. */
typedef struct qi_reader {
    numdict numbers;     /* numeric: the values seen */
    uint32_t missing;    /* categorical: values absent from the hierarchy */
} qi_reader;

typedef struct missing_value {
    char text[64];
    long line;
    uint32_t qi;
} missing_value;

static int grow_rows(table *t, size_t *cap, size_t need, ak_error *err)
{
    if (need <= *cap) return ANONKIT_OK;
    size_t n = *cap ? *cap * 2 : 65536;
    while (n < need) n *= 2;
    for (uint32_t q = 0; q < t->nqi; q++) {
        uint32_t *p = realloc(t->qi[q].codes, n * sizeof *p);
        if (!p) return ak_err_nomem(err);
        t->qi[q].codes = p;
    }
    if (t->sensitive_column >= 0) {
        uint32_t *p = realloc(t->sensitive_codes, n * sizeof *p);
        if (!p) return ak_err_nomem(err);
        t->sensitive_codes = p;
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
    return ak_err_set(err, ANONKIT_E_INPUT, t->display_name, missing[0].line, t->qi[missing[0].qi].column + 1,
                      "%s", msg);
}

int table_load(table **out, const table_spec *spec, ak_error *err)
{
    *out = NULL;
    table *t = calloc(1, sizeof *t);
    if (!t) return ak_err_nomem(err);
    t->sensitive_column = -1;
    t->delimiter = spec->delimiter;
    t->path = dup_str(spec->path, strlen(spec->path));
    const char *shown = spec->display_name ? spec->display_name : spec->path;
    t->display_name = dup_str(shown, strlen(shown));
    t->nqi = (uint32_t)spec->nqi;
    t->qi = calloc(spec->nqi ? spec->nqi : 1, sizeof *t->qi);
    qi_reader *qr = calloc(spec->nqi ? spec->nqi : 1, sizeof *qr);
    missing_value missing[MAX_MISSING_LISTED];
    size_t nmissing_listed = 0;
    uint64_t nmissing = 0;
    csv_reader *reader = NULL;
    int rc = ANONKIT_OK;
    if (!t->path || !t->display_name || !t->qi || !qr || strmap_init(&t->sensitive_dict, 64) != 0) {
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
            if ((rc = hier_load(&a->h, spec->hierarchy_paths[q], err)) < 0) goto done;
        }
        a->kind = a->h && !(spec->force_numeric && spec->force_numeric[q]) ? ATTR_CATEGORICAL : ATTR_NUMERIC;
        if (a->kind == ATTR_NUMERIC) {
            numdict_init(&qr[q].numbers);
        } else {
            a->ncodes = hier_leaf_count(a->h);
        }
    }
    if ((rc = csv_reader_open(&reader, spec->path, spec->delimiter, err)) < 0) goto done;
    if ((rc = read_header(t, reader, spec, err)) < 0) goto done;

    size_t cap = 0;
    csv_record rec;
    for (;;) {
        rc = csv_read(reader, &rec, err);
        if (rc < 0) goto done;
        if (rc == 0) break;
        if (rec.count != t->ncolumns) {
            if (rec.count == 1 && rec.fields[0].len == 0)
                rc = ak_err_set(err, ANONKIT_E_INPUT, t->display_name, rec.line, 0,
                                "empty line: expected %u fields", t->ncolumns);
            else
                rc = ak_err_set(err, ANONKIT_E_INPUT, t->display_name, rec.line, 0,
                                "expected %u fields as in the header, found %u", t->ncolumns, rec.count);
            goto done;
        }
        size_t row = t->nrows;
        if ((rc = grow_rows(t, &cap, row + 1, err)) < 0) goto done;
        for (uint32_t q = 0; q < t->nqi; q++) {
            table_qi *a = &t->qi[q];
            const csv_field *f = &rec.fields[a->column];
            if (a->kind == ATTR_NUMERIC) {
                int added = numdict_add(&qr[q].numbers, f->data, f->len, a->codes, row, err);
                if (added < -1) { rc = added; goto done; }
                if (added == -1) {
                    if (a->h)
                        rc = ak_err_set(err, ANONKIT_E_INPUT, t->display_name, rec.line, a->column + 1,
                                        "column '%s' is declared numeric but holds '%.*s'", a->name,
                                        (int)(f->len > 60 ? 60 : f->len), f->data);
                    else
                        rc = ak_err_set(err, ANONKIT_E_INPUT, t->display_name, rec.line, a->column + 1,
                                        "quasi-identifier '%s' has no hierarchy, so it must be numeric, but holds '%.*s'; "
                                        "give it one with --hierarchy %s=FILE",
                                        a->name, (int)(f->len > 60 ? 60 : f->len), f->data, a->name);
                    goto done;
                }
                if (a->h) { /* numeric with a hierarchy: every value must be a leaf too */
                    uint32_t leaf;
                    if (hier_find_leaf(a->h, f->data, f->len, &leaf) != 0) goto missing_leaf;
                }
                continue;
            }
            uint32_t code;
            if (hier_find_leaf(a->h, f->data, f->len, &code) == 0) {
                a->codes[row] = code;
                continue;
            }
        missing_leaf:
            if (a->kind == ATTR_CATEGORICAL) a->codes[row] = 0;
            if (nmissing_listed < MAX_MISSING_LISTED) {
                missing_value *m = &missing[nmissing_listed++];
                snprintf(m->text, sizeof m->text, "%.*s", (int)(f->len > 60 ? 60 : f->len), f->data);
                m->line = rec.line;
                m->qi = q;
            }
            nmissing++;
        }
        if (t->sensitive_column >= 0) {
            const csv_field *f = &rec.fields[t->sensitive_column];
            if (strmap_intern(&t->sensitive_dict, f->data, f->len, &t->sensitive_codes[row], NULL) != 0) {
                rc = ak_err_nomem(err);
                goto done;
            }
        }
        t->nrows++;
    }
    if (nmissing) {
        rc = report_missing(t, missing, nmissing_listed, nmissing, err);
        goto done;
    }
    for (uint32_t q = 0; q < t->nqi; q++)
        if (t->qi[q].kind == ATTR_NUMERIC &&
            (rc = numdict_finish(&qr[q].numbers, t->qi[q].codes, t->nrows, &t->qi[q].values, &t->qi[q].texts,
                                 &t->qi[q].text_store, &t->qi[q].ncodes, err)) < 0)
            goto done;
    rc = ANONKIT_OK;
done:
    csv_reader_free(reader);
    for (uint32_t q = 0; qr && q < t->nqi; q++) numdict_free(&qr[q].numbers);
    free(qr);
    if (rc < 0) {
        /* Messages name the input as the user gave it, not a spooled copy. */
        if (err && spec->display_name && strcmp(err->file, spec->path) == 0)
            snprintf(err->file, sizeof err->file, "%s", spec->display_name);
        table_free(t);
        return rc;
    }
    *out = t;
    return ANONKIT_OK;
}
