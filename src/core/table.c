/* table.c — reading a CSV once and encoding its QI and sensitive columns
 * (docs/ARCHITECTURE.md §3 step 1). Numeric QIs are interned by value while streaming and
 * ranked once at the end; categorical QIs are looked up in their hierarchy. */
#include "core/table.h"

#include <math.h>
#include <stdatomic.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/hugemem.h"
#include "common/numparse.h"
#include "common/parallel.h"
#include "core/hierbuild.h"
#include "core/numdict.h"
#include "core/table_missing.h"
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

static void table_split_free(table_split *s, uint32_t nqi)
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
    table_split_free(&t->split, t->nqi);
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

/* Per-QI state while streaming. */
typedef struct qi_reader {
    numdict numbers;     /* numeric: the values seen */
    tm_rows missing;     /* numeric: the rows holding a missing value (table_missing.h) */
} qi_reader;

/* Whether any numeric QI of readers qr saw a missing value. */
static int has_missing_rows(const table *t, const qi_reader *qr)
{
    for (uint32_t q = 0; qr && q < t->nqi; q++)
        if (qr[q].missing.n || qr[q].missing.streamed) return 1;
    return 0;
}

typedef struct missing_value {
    char text[AK_SHOW_SIZE]; /* the value as messages show it (ak_escape) */
    long line;
    uint32_t qi;
} missing_value;

static int grow_rows(table *t, size_t *cap, size_t need, ak_error *err)
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

/* Values missing from their hierarchy: the first few with their lines, and a count. */
typedef struct missing_list {
    missing_value listed[MAX_MISSING_LISTED];
    size_t nlisted;
    uint64_t count;
} missing_list;

/* The dictionaries of the columns coded by first appearance: the table's own,
 * or one piece's while a file is read in parallel. */
typedef struct label_dicts {
    strmap *sensitive, *classes;
} label_dicts;

/* Parses field f of column `column` as a number into *out. */
static int parse_number(const table *t, const csv_field *f, long line, int column, const char *what, double *out,
                        ak_error *err)
{
    if (ak_num_parse(f->data, f->len, out) == 0) return ANONKIT_OK;
    return ak_err_set(err, ANONKIT_E_INPUT, t->display_name, line, column + 1,
                      "%s '%s' must be numeric but holds '%s'", what, t->column_names[column],
                      AK_SHOW(f->data, f->len));
}

/* Encodes the QI, sensitive, class and target fields of one record as row `row`. */
static int encode_record(table *t, qi_reader *qr, const label_dicts *dicts, const csv_record *rec, size_t row,
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
        if (a->kind == ATTR_NUMERIC && !a->h && table_is_missing(t, f)) {
            AK_CHECK(tm_rows_add(&qr[q].missing, qr[q].numbers.streaming, f, a->codes, row, err));
            continue;
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
        AK_CHECK(grow_rows(t, &cap, t->nrows + 1, err));
        const label_dicts dicts = {&t->sensitive_dict, &t->class_dict};
        AK_CHECK(encode_record(t, qr, &dicts, &rec, t->nrows, &missing, err));
        t->nrows++;
    }
    if (rc < 0) return rc;
    if (missing.count) return report_missing(t, missing.listed, missing.nlisted, missing.count, err);
    return ANONKIT_OK;
}

/* Rows held at once by a streaming load before their numeric codes are absorbed. */
#define STREAM_CHUNK_ROWS 4096

/* Absorbs the provisional numeric codes of the n rows at slot base. */
static int absorb_chunk(table *t, qi_reader *qr, size_t base, size_t n, ak_error *err)
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
    AK_CHECK(grow_rows(t, &cap, STREAM_CHUNK_ROWS, err));
    missing_list missing;
    missing.nlisted = 0;
    missing.count = 0;
    csv_record rec;
    const label_dicts dicts = {&t->sensitive_dict, &t->class_dict};
    size_t slot = 0;
    int rc;
    while ((rc = csv_read(reader, &rec, err)) == 1) {
        AK_CHECK(encode_record(t, qr, &dicts, &rec, slot, &missing, err));
        if (!missing.count) AK_CHECK(spec->row_sink(spec->sink_ctx, t, 0, slot, &rec, err));
        t->nrows++;
        if (++slot == STREAM_CHUNK_ROWS) {
            AK_CHECK(absorb_chunk(t, qr, 0, slot, err));
            slot = 0;
        }
    }
    if (rc < 0) return rc;
    AK_CHECK(absorb_chunk(t, qr, 0, slot, err));
    if (missing.count) return report_missing(t, missing.listed, missing.nlisted, missing.count, err);
    return ANONKIT_OK;
}

/* One of the two pieces of a file read in parallel, by load_rows_parallel
 * or stream_rows_parallel. */
typedef struct read_piece {
    table *t;                /* where its rows go: the table, or a view of it with arrays of its own */
    const table_spec *spec;
    unsigned index;          /* 0 or 1 */
    uint64_t offset, length; /* bytes of the file */
    long first_line;         /* of the first piece; the second's is not known (see load_rows_parallel) */
    size_t nrows, cap;
    long lines;              /* physical lines the piece's reader consumed */
    int quoted;              /* a field began with a quote */
    qi_reader *qr;           /* this piece's numeric dictionaries (the first piece: the table's) */
    strmap sensitive, classes; /* this piece's dictionaries */
    missing_list missing;
    size_t slot_base;        /* streaming: its slots, [slot_base, slot_base + STREAM_CHUNK_ROWS) */
    atomic_int *give_up;     /* streaming: set by a piece that failed; the other stops at its next chunk */
    input_digest digest;     /* not streaming: the records it read (table.digest) */
    uint64_t cut;            /* where the file is cut: the second piece's offset */
    int rc;
    ak_error err;
} read_piece;

/* Sets up the pieces [data_start, split) and [split, size) of spec's file,
 * the first with the table's numeric dictionaries qr, the second with fresh
 * ones (streaming as the load is). */
static int pieces_init(read_piece *pieces, table *t, const table_spec *spec, qi_reader *qr, uint64_t data_start,
                       uint64_t split, uint64_t size, ak_error *err)
{
    memset(pieces, 0, 2 * sizeof *pieces);
    int rc = ANONKIT_OK;
    for (unsigned i = 0; i < 2; i++) {
        read_piece *p = &pieces[i];
        p->t = t;
        p->spec = spec;
        p->index = i;
        p->offset = i ? split : data_start;
        p->length = i ? size - split : split - data_start;
        p->cut = split;
        p->first_line = 2; /* the header is line 1; the second piece's numbers serve no message */
        p->qr = i ? calloc(t->nqi, sizeof *p->qr) : qr;
        if (!p->qr || strmap_init(&p->sensitive, 64) != 0 || strmap_init(&p->classes, 64) != 0)
            rc = ak_err_nomem(err);
        for (uint32_t q = 0; i && p->qr && q < t->nqi; q++) {
            numdict_init(&p->qr[q].numbers);
            p->qr[q].numbers.streaming = spec->row_sink != NULL;
            p->qr[q].numbers.stream_base = i * STREAM_CHUNK_ROWS; /* its slots (stream_rows_parallel) */
        }
    }
    return rc;
}

static void pieces_free(read_piece *pieces, uint32_t nqi)
{
    for (int i = 0; i < 2; i++) {
        strmap_free(&pieces[i].sensitive);
        strmap_free(&pieces[i].classes);
        digest_free(&pieces[i].digest);
    }
    for (uint32_t q = 0; pieces[1].qr && q < nqi; q++) {
        numdict_free(&pieces[1].qr[q].numbers);
        tm_rows_reset(&pieces[1].qr[q].missing);
    }
    free(pieces[1].qr);
}

static void *load_piece_rows(void *arg)
{
    read_piece *p = arg;
    csv_reader *reader = NULL;
    p->rc = csv_reader_open_range(&reader, p->spec->path, p->spec->delimiter, p->offset, p->length, p->first_line,
                                  &p->err);
    if (reader) csv_reader_progress(reader, p->spec->progress, p->index != 0); /* piece 0: the calling thread */
    if (p->rc == ANONKIT_OK && !p->spec->read_once) p->rc = csv_reader_digest(reader, &p->digest, p->cut, &p->err);
    csv_record rec;
    int got = 0;
    while (p->rc == ANONKIT_OK && (got = csv_read(reader, &rec, &p->err)) == 1) {
        const label_dicts dicts = {&p->sensitive, &p->classes};
        if ((p->rc = grow_rows(p->t, &p->cap, p->nrows + 1, &p->err)) < 0) break;
        p->rc = encode_record(p->t, p->qr, &dicts, &rec, p->nrows, &p->missing, &p->err);
        p->nrows++;
    }
    if (p->rc == ANONKIT_OK && got < 0) p->rc = got;
    if (reader) {
        p->lines = csv_reader_line(reader) - p->first_line;
        p->quoted = csv_reader_saw_quote(reader);
    }
    csv_reader_free(reader);
    return NULL;
}

/* Maps codes[0..n) of a piece through map into dst[0..n). */
static void map_codes(uint32_t *dst, const uint32_t *codes, size_t n, const uint32_t *map)
{
    for (size_t r = 0; r < n; r++) dst[r] = map[codes[r]];
}

/* Makes the first piece's dictionary the table's and gives in map the code in
 * it of every code of the second piece's dictionary (added when new), which
 * keeps the order of first appearance of a sequential read. map has room
 * for second->count codes (the caller frees it). */
static int merge_piece_dicts(strmap *table_dict, strmap *first, const strmap *second, uint32_t **map, ak_error *err)
{
    strmap_free(table_dict);
    *table_dict = *first;
    memset(first, 0, sizeof *first);
    if (!(*map = malloc((second->count + 1) * sizeof **map))) return ak_err_nomem(err);
    for (uint32_t id = 0; id < second->count; id++)
        if (strmap_intern(table_dict, strmap_key(second, id), strmap_key_len(second, id), &(*map)[id], NULL) != 0)
            return ak_err_nomem(err);
    return ANONKIT_OK;
}

/* Work of finish_numeric: the numeric QIs q with owner[q] == who. */
typedef struct finish_job {
    table *t;
    qi_reader *qr;
    uint32_t **more;       /* per QI, the rows from n0 on (a second piece's, freed once ranked), or NULL */
    size_t n0;
    const unsigned char *owner;
    unsigned char who;
    int rc;
    ak_error err;
} finish_job;

static void *finish_some(void *arg)
{
    finish_job *job = arg;
    table *t = job->t;
    job->rc = ANONKIT_OK;
    for (uint32_t q = 0; q < t->nqi && job->rc == ANONKIT_OK; q++) {
        table_qi *a = &t->qi[q];
        if (a->kind != ATTR_NUMERIC || job->owner[q] != job->who) continue;
        const size_t n0 = job->more ? job->n0 : t->nrows;
        job->rc = numdict_finish_parts(&job->qr[q].numbers, a->codes, n0, job->more ? job->more[q] : NULL,
                                       t->nrows - n0, &a->values, &a->texts, &a->text_store, &a->ncodes, &job->err);
        if (job->more) { /* freed here, on the thread that ranked it */
            free(job->more[q]);
            job->more[q] = NULL;
        }
    }
    return NULL;
}

/* Rows below which ranking the numeric columns on two threads does not pay. */
#define PARALLEL_FINISH_ROWS 100000

/* Ranks every numeric QI's codes (numdict_finish). The columns are
 * independent: with two threads each column goes, largest first, to the one
 * with less work so far, a column's work being its rows plus its value range
 * (integer mode) or twice its rows (hashed and sorted). With more, rows from
 * n0 on are still in more[q] (a second piece's) and move to the table's array
 * in the same pass (numdict_finish_parts); more[q] is then freed and NULL. */
static int finish_numeric(table *t, qi_reader *qr, unsigned threads, uint32_t **more, size_t n0,
                          ak_error *err)
{
    unsigned char owner[t->nqi ? t->nqi : 1];
    memset(owner, 0, sizeof owner);
    const int two = threads > 1 && t->nrows >= PARALLEL_FINISH_ROWS;
    if (two) {
        double work[t->nqi ? t->nqi : 1], load[2] = {0, 0};
        unsigned char done[t->nqi ? t->nqi : 1];
        for (uint32_t q = 0; q < t->nqi; q++) {
            const numdict *d = &qr[q].numbers;
            done[q] = t->qi[q].kind != ATTR_NUMERIC;
            work[q] = d->general || d->max < d->min ? 2.0 * (double)t->nrows
                                                     : (double)t->nrows + (double)(d->max - d->min) + 1;
        }
        for (;;) {
            uint32_t big = t->nqi;
            for (uint32_t q = 0; q < t->nqi; q++)
                if (!done[q] && (big == t->nqi || work[q] > work[big])) big = q;
            if (big == t->nqi) break;
            done[big] = 1;
            owner[big] = load[1] < load[0];
            load[owner[big]] += work[big];
        }
    }
    finish_job jobs[2] = {{t, qr, more, n0, owner, 0, 0, {0}}, {t, qr, more, n0, owner, 1, 0, {0}}};
    ak_run_parts(jobs, sizeof *jobs, two ? 2 : 1, finish_some); /* (one: jobs[0] owns every column) */
    for (int i = 0; i < 2; i++)
        if (jobs[i].rc < 0) {
            if (err) *err = jobs[i].err;
            return jobs[i].rc;
        }
    return ANONKIT_OK;
}

/* Bytes below which reading in parallel does not pay. */
#define PARALLEL_MIN_BYTES (8u << 20)

static uint64_t parallel_min_bytes(const table_spec *spec)
{
    return spec->parallel_min_bytes ? spec->parallel_min_bytes : PARALLEL_MIN_BYTES;
}

/* Whether the file of spec is large enough to be read in two pieces, and
 * where (*split: the first line end after the middle of its data, which
 * starts at data_start; *size: the file's size). */
static int find_cut(const table_spec *spec, uint64_t data_start, uint64_t *split, uint64_t *size)
{
    struct stat st;
    if (stat(spec->path, &st) != 0 || (uint64_t)st.st_size < data_start + parallel_min_bytes(spec)) return 0;
    *size = (uint64_t)st.st_size;
    *split = csv_find_split(spec->path, data_start, *size);
    return *split && *split < *size;
}

/* The arrays of a view made by piece_view. */
static void piece_view_free(table *v)
{
    for (uint32_t q = 0; v->qi && q < v->nqi; q++) free(v->qi[q].codes);
    free(v->qi);
    free(v->sensitive_codes);
    free(v->class_codes);
    free(v->sensitive_values);
    free(v->target_values);
}

/* A view of t that shares its schema and hierarchies but encodes rows into
 * arrays of its own (freed by piece_view_free). */
static int piece_view(table *v, const table *t, ak_error *err)
{
    *v = *t;
    v->qi = malloc(t->nqi * sizeof *v->qi);
    v->sensitive_codes = v->class_codes = NULL;
    v->sensitive_values = v->target_values = NULL;
    if (!v->qi) return ak_err_nomem(err);
    for (uint32_t q = 0; q < t->nqi; q++) {
        v->qi[q] = t->qi[q];
        v->qi[q].codes = NULL;
    }
    return ANONKIT_OK;
}

/* Reads the data rows in two pieces on two threads when the file allows it:
 * the file is large and is cut at the first line end after its middle; the
 * first piece goes to the table, the second to arrays of its own that are
 * appended afterwards (numeric codes while they are ranked, finish_numeric,
 * which is done here). The cut is at a record boundary when no field of the
 * first piece begins with a quote (a line end then always ends a record),
 * and the pieces read as the whole file does when neither holds a quoted
 * field and the first piece has one record per line (a run of empty lines at
 * its end would not be records). Those are checked after reading; that and
 * any other surprise (a bad row, a value outside integer mode, ...) send the
 * caller back to the sequential reader, which also gives the exact error.
 * *loaded tells whether the rows were read (and ranked). */
static int load_rows_parallel(table *t, const table_spec *spec, qi_reader *qr, uint64_t data_start, int *loaded,
                              ak_error *err)
{
    *loaded = 0;
    uint64_t split, size;
    if (!find_cut(spec, data_start, &split, &size)) return ANONKIT_OK;
    read_piece pieces[2];
    table view;
    memset(&view, 0, sizeof view);
    int rc = piece_view(&view, t, err);
    const int ready = pieces_init(pieces, t, spec, qr, data_start, split, size, err);
    if (rc == ANONKIT_OK) rc = ready;
    pieces[1].t = &view;
    /* The arrays sized for each piece at once (grown further if need be), so
     * that they are written on fresh (huge) pages rather than moved around. */
    uint64_t lines[2];
    for (int i = 0; i < 2; i++) lines[i] = csv_estimate_lines(spec->path, pieces[i].offset, pieces[i].length);
    for (int i = 0; rc == ANONKIT_OK && i < 2; i++) {
        /* the table's: room for both pieces, which it holds in the end */
        const uint64_t want = i ? lines[1] : lines[0] + lines[1];
        if (lines[0] && lines[1] && want < SIZE_MAX / 64) rc = grow_rows(pieces[i].t, &pieces[i].cap, (size_t)want, err);
    }
    if (rc == ANONKIT_OK) ak_run_parts(pieces, sizeof *pieces, 2, load_piece_rows);
    int usable = rc == ANONKIT_OK && pieces[0].rc == ANONKIT_OK && pieces[1].rc == ANONKIT_OK && !has_missing_rows(t, qr) &&
                 !has_missing_rows(t, pieces[1].qr) &&
                 !pieces[0].missing.count && !pieces[1].missing.count && !pieces[0].quoted && !pieces[1].quoted &&
                 pieces[0].lines == (long)pieces[0].nrows;
    for (uint32_t q = 0; usable && q < t->nqi; q++)
        if (t->qi[q].kind == ATTR_NUMERIC && (qr[q].numbers.general || pieces[1].qr[q].numbers.general)) usable = 0;
    if (pieces[0].rc == ANONKIT_E_NOMEM || pieces[1].rc == ANONKIT_E_NOMEM) rc = ak_err_nomem(err);
    if (usable && rc == ANONKIT_OK) {
        /* Merge: the second piece's rows appended; integer dictionaries by
         * their extent; the second piece's label codes mapped into the first
         * piece's dictionaries. */
        const size_t n0 = pieces[0].nrows, n1 = pieces[1].nrows;
        size_t cap = pieces[0].cap;
        rc = grow_rows(t, &cap, n0 + n1, err);
        uint32_t *more[t->nqi ? t->nqi : 1];
        for (uint32_t q = 0; q < t->nqi; q++) more[q] = view.qi[q].codes;
        for (uint32_t q = 0; rc == ANONKIT_OK && q < t->nqi; q++) {
            numdict *a = &qr[q].numbers, *b = &pieces[1].qr[q].numbers;
            if (b->min < a->min) a->min = b->min;
            if (b->max > a->max) a->max = b->max;
            /* numeric codes move in the ranking pass (finish_numeric, below) */
            if (n1 && t->qi[q].kind != ATTR_NUMERIC)
                memcpy(t->qi[q].codes + n0, view.qi[q].codes, n1 * sizeof *view.qi[q].codes);
        }
        uint32_t *map = NULL;
        if (rc == ANONKIT_OK && t->sensitive_column >= 0 &&
            (rc = merge_piece_dicts(&t->sensitive_dict, &pieces[0].sensitive, &pieces[1].sensitive, &map, err)) == 0)
            map_codes(t->sensitive_codes + n0, view.sensitive_codes, n1, map);
        free(map);
        map = NULL;
        if (rc == ANONKIT_OK && t->class_column >= 0 &&
            (rc = merge_piece_dicts(&t->class_dict, &pieces[0].classes, &pieces[1].classes, &map, err)) == 0)
            map_codes(t->class_codes + n0, view.class_codes, n1, map);
        free(map);
        if (rc == ANONKIT_OK && t->sensitive_numeric && n1)
            memcpy(t->sensitive_values + n0, view.sensitive_values, n1 * sizeof *view.sensitive_values);
        if (rc == ANONKIT_OK && t->target_column >= 0 && n1)
            memcpy(t->target_values + n0, view.target_values, n1 * sizeof *view.target_values);
        t->nrows = n0 + n1;
        if (rc == ANONKIT_OK && (digest_merge(&t->digest, &pieces[0].digest) != 0 ||
                                 digest_merge(&t->digest, &pieces[1].digest) != 0))
            rc = ak_err_nomem(err);
        t->digest.cut = split; /* a second read makes the same segments (csv_reader_digest) */
        if (rc == ANONKIT_OK) rc = finish_numeric(t, qr, spec->threads, more, n0, err);
        for (uint32_t q = 0; q < t->nqi; q++) view.qi[q].codes = more[q]; /* NULL where freed */
        *loaded = rc == ANONKIT_OK;
    }
    if (!*loaded) {
        /* Back to a clean state for the sequential reader. */
        t->nrows = 0;
        for (uint32_t q = 0; q < t->nqi; q++)
            if (t->qi[q].kind == ATTR_NUMERIC) {
                numdict_free(&qr[q].numbers);
                numdict_init(&qr[q].numbers);
                tm_rows_reset(&qr[q].missing);
            }
    }
    pieces_free(pieces, t->nqi);
    piece_view_free(&view);
    return rc;
}

/* stream_rows for one piece, on its own thread: encodes into its own slots
 * and dictionaries and hands every row to the sink as piece p->index. */
static void *stream_piece_rows(void *arg)
{
    read_piece *p = arg;
    csv_reader *reader = NULL;
    p->rc = csv_reader_open_range(&reader, p->spec->path, p->spec->delimiter, p->offset, p->length, p->first_line,
                                  &p->err);
    if (reader) csv_reader_progress(reader, p->spec->progress, p->index != 0); /* piece 0: the calling thread */
    csv_record rec;
    size_t slot = 0;
    int got = 0;
    while (p->rc == ANONKIT_OK && (got = csv_read(reader, &rec, &p->err)) == 1) {
        const label_dicts dicts = {&p->sensitive, &p->classes};
        p->rc = encode_record(p->t, p->qr, &dicts, &rec, p->slot_base + slot, &p->missing, &p->err);
        if (p->rc == ANONKIT_OK && p->missing.count) break; /* the sequential read lists them */
        if (p->rc == ANONKIT_OK)
            p->rc = p->spec->row_sink(p->spec->sink_ctx, p->t, p->index, p->slot_base + slot, &rec, &p->err);
        p->nrows++;
        if (p->rc == ANONKIT_OK && ++slot == STREAM_CHUNK_ROWS) {
            p->rc = absorb_chunk(p->t, p->qr, p->slot_base, slot, &p->err);
            slot = 0;
            if (csv_reader_saw_quote(reader)) break; /* the cut may lie inside a field: give up early */
            if (atomic_load_explicit(p->give_up, memory_order_relaxed)) break;
        }
    }
    if (p->rc == ANONKIT_OK && got < 0) p->rc = got;
    if (p->rc == ANONKIT_OK) p->rc = absorb_chunk(p->t, p->qr, p->slot_base, slot, &p->err);
    if (reader) {
        p->lines = csv_reader_line(reader) - p->first_line;
        p->quoted = csv_reader_saw_quote(reader);
    }
    if (p->rc != ANONKIT_OK || p->missing.count || p->quoted || got == 1) atomic_store(p->give_up, 1);
    csv_reader_free(reader);
    return NULL;
}

/* stream_rows in two pieces on two threads, when the file is large, cut and
 * checked as load_rows_parallel does. The first piece keeps the table's
 * dictionaries; the second piece's are folded into them afterwards and the
 * maps of its codes left in t->split. On any surprise the sink is told to
 * start over and *loaded stays 0: the caller reads sequentially, which also
 * gives the exact error. */
static int stream_rows_parallel(table *t, const table_spec *spec, qi_reader *qr, uint64_t data_start, int *loaded,
                                ak_error *err)
{
    *loaded = 0;
    uint64_t split, size;
    if (!find_cut(spec, data_start, &split, &size)) return ANONKIT_OK;
    size_t cap = 0;
    AK_CHECK(grow_rows(t, &cap, 2 * STREAM_CHUNK_ROWS, err));
    AK_CHECK(spec->sink_start(spec->sink_ctx, t, 2, err));
    atomic_int give_up;
    atomic_init(&give_up, 0);
    read_piece pieces[2];
    int rc = pieces_init(pieces, t, spec, qr, data_start, split, size, err);
    for (unsigned i = 0; i < 2; i++) {
        pieces[i].slot_base = i * STREAM_CHUNK_ROWS;
        pieces[i].give_up = &give_up;
    }
    if (rc == ANONKIT_OK) ak_run_parts(pieces, sizeof *pieces, 2, stream_piece_rows);
    int usable = rc == ANONKIT_OK && pieces[0].rc == ANONKIT_OK && pieces[1].rc == ANONKIT_OK && !has_missing_rows(t, qr) &&
                 !has_missing_rows(t, pieces[1].qr) &&
                 !pieces[0].missing.count && !pieces[1].missing.count && !pieces[0].quoted && !pieces[1].quoted &&
                 pieces[0].lines == (long)pieces[0].nrows;
    if (pieces[0].rc == ANONKIT_E_NOMEM || pieces[1].rc == ANONKIT_E_NOMEM) rc = ak_err_nomem(err);
    if (usable && rc == ANONKIT_OK) {
        table_split *sp = &t->split;
        sp->first_row = pieces[0].nrows;
        if (!(sp->numeric_ids = calloc(t->nqi, sizeof *sp->numeric_ids))) rc = ak_err_nomem(err);
        for (uint32_t q = 0; rc == ANONKIT_OK && q < t->nqi; q++)
            if (t->qi[q].kind == ATTR_NUMERIC)
                rc = numdict_merge_stream(&qr[q].numbers, &pieces[1].qr[q].numbers, &sp->numeric_ids[q], err);
        if (rc == ANONKIT_OK)
            rc = merge_piece_dicts(&t->sensitive_dict, &pieces[0].sensitive, &pieces[1].sensitive, &sp->sensitive_map,
                                  err);
        if (rc == ANONKIT_OK)
            rc = merge_piece_dicts(&t->class_dict, &pieces[0].classes, &pieces[1].classes, &sp->class_map, err);
        t->nrows = pieces[0].nrows + pieces[1].nrows;
        *loaded = rc == ANONKIT_OK;
    } else if (rc == ANONKIT_OK) {
        /* Back to a clean state for the sequential reader. */
        for (uint32_t q = 0; q < t->nqi; q++)
            if (t->qi[q].kind == ATTR_NUMERIC) {
                numdict_free(&qr[q].numbers);
                numdict_init(&qr[q].numbers);
                qr[q].numbers.streaming = 1;
                tm_rows_reset(&qr[q].missing);
            }
        table_split_free(&t->split, t->nqi);
    }
    pieces_free(pieces, t->nqi);
    return rc;
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
    if ((rc = csv_reader_open(&reader, spec->path, spec->delimiter, err)) < 0) goto done;
    /* the digest (streaming loads keep what they need and do not read the input again) */
    if (!spec->row_sink && !spec->read_once && (rc = csv_reader_digest(reader, &t->digest, 0, err)) < 0) goto done;
    if ((rc = read_header(t, reader, spec, err)) < 0) goto done;
    csv_reader_progress(reader, spec->progress, 0);
    if (spec->row_sink) {
        int streamed = 0;
        if (spec->threads > 1 &&
            (rc = stream_rows_parallel(t, spec, qr, csv_reader_offset(reader), &streamed, err)) < 0)
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
    if (spec->threads > 1 && (rc = load_rows_parallel(t, spec, qr, csv_reader_offset(reader), &loaded, err)) < 0)
        goto done;
    if (!loaded && (rc = load_rows(t, reader, qr, err)) < 0) goto done;
    if ((rc = ak_progress_phase(spec->progress, ANONKIT_PHASE_ENCODING, t->nrows, 0, err)) < 0) goto done;
    if (!loaded && (rc = finish_numeric(t, qr, spec->threads, NULL, 0, err)) < 0) goto done;
    for (uint32_t q = 0; q < t->nqi; q++)
        if (t->qi[q].kind == ATTR_NUMERIC && (rc = tm_shift(&t->qi[q], &qr[q].missing, t->nrows, err)) < 0) goto done;
    rc = ANONKIT_OK;
done:
    csv_reader_free(reader);
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
