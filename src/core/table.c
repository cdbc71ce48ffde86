/* table.c — reading a CSV once and encoding its QI and sensitive columns
 * (DESIGN.md §1 step 1). Numeric QIs are interned by value while streaming and
 * ranked once at the end; categorical QIs are looked up in their hierarchy. */
#include "core/table.h"

#include <math.h>
#include <pthread.h>
#include <sys/stat.h>
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
        numdict_map_free(&a->prov);
    }
    free(t->qi);
    free(t->sensitive_codes);
    strmap_free(&t->sensitive_dict);
    free(t->sensitive_values);
    free(t->class_codes);
    strmap_free(&t->class_dict);
    free(t->target_values);
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
    /* The class label and the target keep no role: they are copied to the
     * output. They must not be sensitive (000 footnote 3) nor a QI. */
    AK_CHECK(find_plain_column(t, "the class label", spec->class_name, &t->class_column, err));
    AK_CHECK(find_plain_column(t, "the regression target", spec->target_name, &t->target_column, err));
    return ANONKIT_OK;
}

/* Per-QI state while streaming. */
typedef struct qi_reader {
    numdict numbers;     /* numeric: the values seen */
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
    if (numdict_parse(f->data, f->len, out) == 0) return ANONKIT_OK;
    return ak_err_set(err, ANONKIT_E_INPUT, t->display_name, line, column + 1,
                      "%s '%s' must be numeric but holds '%.*s'", what, t->column_names[column],
                      (int)(f->len > 60 ? 60 : f->len), f->data);
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
        if (a->kind == ATTR_NUMERIC) {
            int added = numdict_add(&qr[q].numbers, f->data, f->len, a->codes, row, err);
            if (added < -1) return added;
            if (added == -1) {
                if (a->h)
                    return ak_err_set(err, ANONKIT_E_INPUT, t->display_name, rec->line, a->column + 1,
                                      "column '%s' is declared numeric but holds '%.*s'", a->name,
                                      (int)(f->len > 60 ? 60 : f->len), f->data);
                return ak_err_set(err, ANONKIT_E_INPUT, t->display_name, rec->line, a->column + 1,
                                  "quasi-identifier '%s' has no hierarchy, so it must be numeric, but holds '%.*s'; "
                                  "give it one with --hierarchy %s=FILE",
                                  a->name, (int)(f->len > 60 ? 60 : f->len), f->data, a->name);
            }
            /* numeric with a hierarchy: every value must be a leaf too */
            if (!a->h || hier_find_leaf(a->h, f->data, f->len, &code) == 0) continue;
        } else {
            if (hier_find_leaf(a->h, f->data, f->len, &code) == 0) {
                a->codes[row] = code;
                continue;
            }
            a->codes[row] = 0;
        }
        if (missing->nlisted < MAX_MISSING_LISTED) {
            missing_value *m = &missing->listed[missing->nlisted++];
            snprintf(m->text, sizeof m->text, "%.*s", (int)(f->len > 60 ? 60 : f->len), f->data);
            m->line = rec->line;
            m->qi = q;
        }
        missing->count++;
    }
    if (t->sensitive_column >= 0) {
        const csv_field *f = &rec->fields[t->sensitive_column];
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
        if (!missing.count) AK_CHECK(spec->row_sink(spec->sink_ctx, t, slot, &rec, err));
        t->nrows++;
        if (++slot == STREAM_CHUNK_ROWS || rc != 1) {
            for (uint32_t q = 0; q < t->nqi; q++)
                if (t->qi[q].kind == ATTR_NUMERIC) AK_CHECK(numdict_absorb(&qr[q].numbers, t->qi[q].codes, slot, err));
            slot = 0;
        }
    }
    if (rc < 0) return rc;
    for (uint32_t q = 0; q < t->nqi; q++)
        if (t->qi[q].kind == ATTR_NUMERIC) AK_CHECK(numdict_absorb(&qr[q].numbers, t->qi[q].codes, slot, err));
    if (missing.count) return report_missing(t, missing.listed, missing.nlisted, missing.count, err);
    return ANONKIT_OK;
}

/* One of the pieces of a file read in parallel. */
typedef struct load_piece {
    table *t;
    const table_spec *spec;
    uint64_t offset, length; /* bytes of the file */
    long first_line;
    size_t first_row, nrows;
    qi_reader *qr;           /* this piece's numeric dictionaries */
    strmap sensitive, classes; /* this piece's dictionaries */
    missing_list missing;
    int rc;
    ak_error err;
} load_piece;

static void *load_piece_rows(void *arg)
{
    load_piece *p = arg;
    csv_reader *reader = NULL;
    p->rc = csv_reader_open_range(&reader, p->spec->path, p->spec->delimiter, p->offset, p->length, p->first_line,
                                  &p->err);
    csv_record rec;
    int got = 0;
    while (p->rc == ANONKIT_OK && (got = csv_read(reader, &rec, &p->err)) == 1) {
        const label_dicts dicts = {&p->sensitive, &p->classes};
        p->rc = encode_record(p->t, p->qr, &dicts, &rec, p->first_row + p->nrows, &p->missing, &p->err);
        p->nrows++;
    }
    if (p->rc == ANONKIT_OK && got < 0) p->rc = got;
    csv_reader_free(reader);
    return NULL;
}

/* Looks at the data part of the file (from `start`): whether it holds a quote
 * character, its size, its line ends, and the first line end at or after
 * half its size, so that it can be cut into two pieces of whole records. */
static int scan_for_split(const char *path, uint64_t start, uint64_t *split, uint64_t *lines_before,
                          uint64_t *lines_total, int *quoted)
{
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || fseeko(f, (off_t)start, SEEK_SET) != 0) {
        fclose(f);
        return -1;
    }
    const uint64_t half = start + ((uint64_t)st.st_size - start) / 2;
    static const size_t block = 1 << 20;
    char *buf = malloc(block);
    if (!buf) {
        fclose(f);
        return -1;
    }
    uint64_t at = start, lines = 0;
    *split = 0;
    *quoted = 0;
    size_t got;
    while ((got = fread(buf, 1, block, f)) > 0 && !*quoted) {
        if (memchr(buf, '"', got)) *quoted = 1;
        for (const char *p = buf, *end = buf + got; (p = memchr(p, '\n', (size_t)(end - p))) != NULL; p++) {
            lines++;
            if (!*split && at + (uint64_t)(p - buf) >= half) {
                *split = at + (uint64_t)(p - buf) + 1;
                *lines_before = lines;
            }
        }
        at += got;
    }
    int failed = ferror(f);
    free(buf);
    fclose(f);
    *lines_total = lines;
    return failed ? -1 : 0;
}

/* Makes the first piece's dictionary the table's and maps the second piece's
 * codes (its n rows at codes[0..n)) into it, which keeps the order of first
 * appearance of a sequential read. */
static int merge_piece_codes(strmap *table_dict, strmap *first, const strmap *second, uint32_t *codes, size_t n,
                             ak_error *err)
{
    strmap_free(table_dict);
    *table_dict = *first;
    memset(first, 0, sizeof *first);
    uint32_t *map = malloc((second->count + 1) * sizeof *map);
    if (!map) return ak_err_nomem(err);
    for (uint32_t id = 0; id < second->count; id++)
        if (strmap_intern(table_dict, strmap_key(second, id), strmap_key_len(second, id), &map[id], NULL) != 0) {
            free(map);
            return ak_err_nomem(err);
        }
    for (size_t r = 0; r < n; r++) codes[r] = map[codes[r]];
    free(map);
    return ANONKIT_OK;
}

/* Rows per piece below which reading in parallel does not pay. */
#define PARALLEL_MIN_BYTES (8u << 20)

/* Reads the data rows in two pieces on two threads when the file allows it:
 * large, and without any quote character, so that a line end always ends a
 * record. Any surprise (a bad row, a value outside integer mode, ...) sends
 * the caller back to the sequential reader, which also gives the exact error.
 * *loaded tells whether the rows were read. */
static int load_rows_parallel(table *t, const table_spec *spec, qi_reader *qr, uint64_t data_start, int *loaded,
                              ak_error *err)
{
    *loaded = 0;
    struct stat st;
    if (stat(spec->path, &st) != 0 || (uint64_t)st.st_size < data_start + PARALLEL_MIN_BYTES) return ANONKIT_OK;
    uint64_t split, lines_before = 0, lines;
    int quoted;
    if (scan_for_split(spec->path, data_start, &split, &lines_before, &lines, &quoted) != 0 || quoted || !split ||
        split >= (uint64_t)st.st_size)
        return ANONKIT_OK;
    size_t cap = 0;
    AK_CHECK(grow_rows(t, &cap, (size_t)lines + 1, err));
    load_piece pieces[2];
    memset(pieces, 0, sizeof pieces);
    int rc = ANONKIT_OK, started = 0;
    pthread_t helper;
    for (int i = 0; i < 2; i++) {
        load_piece *p = &pieces[i];
        p->t = t;
        p->spec = spec;
        p->offset = i ? split : data_start;
        p->length = i ? (uint64_t)st.st_size - split : split - data_start;
        p->first_line = i ? 2 + (long)lines_before : 2; /* the header is line 1 */
        p->first_row = i ? (size_t)lines_before : 0;
        p->qr = i ? calloc(t->nqi, sizeof *p->qr) : qr;
        if (!p->qr || strmap_init(&p->sensitive, 64) != 0 || strmap_init(&p->classes, 64) != 0)
            rc = ak_err_nomem(err);
        for (uint32_t q = 0; i && p->qr && q < t->nqi; q++) numdict_init(&p->qr[q].numbers);
    }
    if (rc == ANONKIT_OK) {
        started = pthread_create(&helper, NULL, load_piece_rows, &pieces[1]) == 0;
        load_piece_rows(&pieces[0]);
        if (started) pthread_join(helper, NULL);
    }
    int usable = rc == ANONKIT_OK && started && pieces[0].rc == ANONKIT_OK && pieces[1].rc == ANONKIT_OK &&
                 !pieces[0].missing.count && !pieces[1].missing.count && pieces[0].nrows == pieces[1].first_row;
    for (uint32_t q = 0; usable && q < t->nqi; q++)
        if (t->qi[q].kind == ATTR_NUMERIC && (qr[q].numbers.general || pieces[1].qr[q].numbers.general)) usable = 0;
    if (pieces[0].rc == ANONKIT_E_NOMEM || pieces[1].rc == ANONKIT_E_NOMEM) rc = ak_err_nomem(err);
    if (usable && rc == ANONKIT_OK) {
        /* Merge: integer dictionaries by their extent; sensitive codes of the
         * second piece mapped into the first's dictionary, which keeps the
         * order of first appearance of a sequential read. */
        for (uint32_t q = 0; q < t->nqi; q++) {
            numdict *a = &qr[q].numbers, *b = &pieces[1].qr[q].numbers;
            if (b->min < a->min) a->min = b->min;
            if (b->max > a->max) a->max = b->max;
        }
        if (t->sensitive_column >= 0)
            rc = merge_piece_codes(&t->sensitive_dict, &pieces[0].sensitive, &pieces[1].sensitive,
                                   t->sensitive_codes + pieces[1].first_row, pieces[1].nrows, err);
        if (rc == ANONKIT_OK && t->class_column >= 0)
            rc = merge_piece_codes(&t->class_dict, &pieces[0].classes, &pieces[1].classes,
                                   t->class_codes + pieces[1].first_row, pieces[1].nrows, err);
        t->nrows = pieces[0].nrows + pieces[1].nrows;
        *loaded = rc == ANONKIT_OK;
    } else {
        /* Back to a clean state for the sequential reader. */
        for (uint32_t q = 0; q < t->nqi; q++)
            if (t->qi[q].kind == ATTR_NUMERIC) {
                numdict_free(&qr[q].numbers);
                numdict_init(&qr[q].numbers);
            }
    }
    for (int i = 0; i < 2; i++) {
        strmap_free(&pieces[i].sensitive);
        strmap_free(&pieces[i].classes);
    }
    for (uint32_t q = 0; pieces[1].qr && q < t->nqi; q++) numdict_free(&pieces[1].qr[q].numbers);
    free(pieces[1].qr);
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
    t->nqi = (uint32_t)spec->nqi;
    t->qi = calloc(spec->nqi ? spec->nqi : 1, sizeof *t->qi);
    qi_reader *qr = calloc(spec->nqi ? spec->nqi : 1, sizeof *qr);
    csv_reader *reader = NULL;
    int rc = ANONKIT_OK;
    if (!t->path || !t->display_name || !t->qi || !qr || strmap_init(&t->sensitive_dict, 64) != 0 ||
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
            if ((rc = hier_load(&a->h, spec->hierarchy_paths[q], err)) < 0) goto done;
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
    if ((rc = read_header(t, reader, spec, err)) < 0) goto done;
    if (spec->row_sink) {
        if ((rc = stream_rows(t, spec, reader, qr, err)) < 0) goto done;
        for (uint32_t q = 0; q < t->nqi; q++) {
            table_qi *a = &t->qi[q];
            free(a->codes); /* the last chunk's provisional codes */
            a->codes = NULL;
            if (a->kind == ATTR_NUMERIC &&
                (rc = numdict_finish_stream(&qr[q].numbers, &a->values, &a->texts, &a->text_store, &a->ncodes,
                                            &a->prov, err)) < 0)
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
