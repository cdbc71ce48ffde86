/* rules.c — writing, loading and applying the recoding rules ([LeFevre07] §1.2,
 * §2.2; the format is docs/rules-format.md).
 *
 * Writing is in rules_write.c.
 *
 * Loading keeps, per rule and QI, the region as a half-open interval of keys
 * (lo, hi] — numeric QIs by value (an empty bound is infinite), categorical
 * QIs by leaf code of the embedded hierarchy (leaves [a, b] are (a - 1, b]) —
 * and the range of keys the published text stands for. It then rebuilds a
 * guillotine tree: the rules of a subtree are contiguous in depth-first order,
 * so for a run of rules some QI q and cut split it into a prefix inside
 * (-inf, cut] and a rest inside (cut, +inf); of all such cuts the one nearest
 * the middle of the run is taken, and both parts are split in turn (an
 * explicit stack, no recursion). Every run's box is known on the way down
 * (the root's is the whole domain); a run of one rule must have exactly its
 * box as region. Hence a file is accepted only when its rules tile the domain:
 * no gap, no overlap. Building costs O(rules x QIs x height); a row is located
 * by O(height) comparisons. */
#include "publish/rules.h"
#include "publish/rules_internal.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/hierarchy.h"
#include "core/hierbuild.h"
#include "common/numparse.h"
#include "common/strbuf.h"

#define MAGIC RULES_MAGIC
/* Fields per QI in a rule record: region low, region high, lowest, highest, text. */
#define FIELDS_PER_QI 5
/* A tree child that is a rule (the rule's index in the low bits), not a node. */
#define LEAF_BIT 0x80000000u

const char *const rules_role_names[4] = {
    [RULES_QI_NUMERIC] = "qi-numeric",
    [RULES_QI_CATEGORICAL] = "qi-categorical",
    [RULES_IDENTIFIER] = "identifier",
    [RULES_COPIED] = "copied",
};
#define role_names rules_role_names


/* ------------------------------------------------------------------ loading */

typedef struct rules_qi {
    uint32_t column;
    rules_role kind;
    hier_builder *builder; /* categorical, while its rows are read */
    hier *h;               /* categorical */
    long first_line;       /* of its first hierarchy row */
    const struct rules_missing *missing; /* numeric: its 'missing' record, NULL when none */
} rules_qi;

/* A 'missing' record: a QI whose missing values are an empty cell or one of
 * the tokens; numeric, they have rules of their own (key RULES_MISSING_KEY);
 * categorical, they are the leaf NULL of its hierarchy. */
typedef struct rules_missing {
    uint32_t column;
    char **tokens;
    size_t ntokens;
} rules_missing;

typedef struct rules_node {
    uint32_t q;
    double cut;        /* keys <= cut go to child[0] */
    uint32_t child[2]; /* node index, or LEAF_BIT | rule */
} rules_node;

struct rules {
    char *path;
    char delimiter;
    uint32_t ncolumns;
    char **names;
    unsigned char *roles; /* rules_role per column */
    uint32_t nqi;
    rules_qi *qi;
    size_t nrules, cap;
    uint64_t *rows;      /* per rule */
    long *line;          /* per rule: its line in the file */
    double *region;      /* per rule and QI: lo, hi of (lo, hi] */
    double *shown;       /* per rule and QI: the keys the text stands for, [lo, hi] */
    size_t *text_off;    /* per rule and QI: offset into text */
    strbuf text;
    rules_node *nodes;
    size_t nnodes, node_cap;
    uint32_t root;
    size_t height;       /* comparisons to locate a row, at most */
    rules_missing *missing; /* the 'missing' records */
    size_t nmissing;
};

void rules_free(rules *r)
{
    if (!r) return;
    for (uint32_t c = 0; c < r->ncolumns; c++) free(r->names[c]);
    free(r->names);
    free(r->roles);
    for (uint32_t q = 0; r->qi && q < r->nqi; q++) { /* (no qi when its allocation failed) */
        hier_builder_free(r->qi[q].builder);
        hier_free(r->qi[q].h);
    }
    free(r->qi);
    free(r->rows);
    free(r->line);
    free(r->region);
    free(r->shown);
    free(r->text_off);
    strbuf_free(&r->text);
    free(r->nodes);
    free(r->path);
    for (size_t i = 0; i < r->nmissing; i++) {
        for (size_t k = 0; k < r->missing[i].ntokens; k++) free(r->missing[i].tokens[k]);
        free(r->missing[i].tokens);
    }
    free(r->missing);
    free(r);
}

char rules_delimiter(const rules *r) { return r->delimiter; }
uint32_t rules_column_count(const rules *r) { return r->ncolumns; }
const char *rules_column_name(const rules *r, uint32_t c) { return r->names[c]; }
rules_role rules_column_role(const rules *r, uint32_t c) { return (rules_role)r->roles[c]; }
uint32_t rules_qi_count(const rules *r) { return r->nqi; }
uint32_t rules_qi_column(const rules *r, uint32_t q) { return r->qi[q].column; }
size_t rules_count(const rules *r) { return r->nrules; }
uint64_t rules_class_rows(const rules *r, size_t rule) { return r->rows[rule]; }
size_t rules_height(const rules *r) { return r->height; }

const char *rules_text(const rules *r, size_t rule, uint32_t q, size_t *len)
{
    const size_t i = rule * r->nqi + q;
    if (len) *len = r->text_off[i + 1] - r->text_off[i] - 1;
    return r->text.data + r->text_off[i];
}

/* A numeric key: the value's double, when doubles order it exactly among the
 * values a numeric QI accepts (ak_num_parse_exact, but no integer beyond
 * ±2^53, which doubles cannot tell apart). 0, -1 when the text is no
 * number, RULES_INEXACT when the rules cannot compare it exactly. */
static int numeric_key(const char *text, size_t len, double *key)
{
    ak_num x;
    const int rc = ak_num_parse_exact(text, len, &x);
    if (rc == AK_NUM_NOT_NUMBER) return -1;
    if (rc != 0 || x.wide) return RULES_INEXACT;
    *key = x.v;
    return 0;
}

/* Whether text is a missing value of numeric QI a (an empty cell or one of its tokens). */
static int is_missing(const rules_qi *a, const char *text, size_t len)
{
    if (!a->missing) return 0;
    if (len == 0) return 1;
    for (size_t k = 0; k < a->missing->ntokens; k++)
        if (strlen(a->missing->tokens[k]) == len && !memcmp(a->missing->tokens[k], text, len)) return 1;
    return 0;
}

int rules_key(const rules *r, uint32_t q, const char *text, size_t len, double *key)
{
    if (r->qi[q].kind == RULES_QI_NUMERIC && is_missing(&r->qi[q], text, len)) {
        *key = RULES_MISSING_KEY;
        return 0;
    }
    if (r->qi[q].kind == RULES_QI_NUMERIC) return numeric_key(text, len, key);
    uint32_t code;
    if (hier_find_leaf(r->qi[q].h, text, len, &code) != 0 &&
        !(is_missing(&r->qi[q], text, len) &&
          hier_find_leaf(r->qi[q].h, HB_MISSING_LABEL, strlen(HB_MISSING_LABEL), &code) == 0))
        return -1; /* (a missing value: the leaf NULL, as the table's encoding takes it) */
    *key = code;
    return 0;
}

size_t rules_find(const rules *r, const double *keys)
{
    uint32_t n = r->root;
    while (!(n & LEAF_BIT)) {
        const rules_node *node = &r->nodes[n];
        n = node->child[keys[node->q] > node->cut];
    }
    return n & ~LEAF_BIT;
}

int rules_outside(const rules *r, size_t rule, uint32_t q, double key)
{
    const double *shown = r->shown + 2 * (rule * r->nqi + q);
    return key < shown[0] || key > shown[1];
}

/* What the reader is expecting next. */
typedef enum phase { PHASE_MAGIC, PHASE_HEADER, PHASE_HIERARCHY, PHASE_RULES, PHASE_DONE } phase;

typedef struct loader {
    rules *r;
    const char *path;
    phase at;
    int have_delimiter, have_publish;
    uint64_t rows;      /* sum of the rules' counts */
    ak_error *err;
} loader;

static int bad(loader *ld, long line, long column, const char *fmt, const char *a, const char *b)
{
    return ak_err_set(ld->err, ANONKIT_E_INPUT, ld->path, line, column, fmt, a, b);
}

/* "FIELD is not a ..." errors: one quoted field and one more word. */
#define BAD_FIELD(ld, rec, i, fmt, word) \
    bad(ld, (rec)->line, (long)(i) + 1, fmt, AK_SHOW((rec)->fields[i].data, (rec)->fields[i].len), word)

static int field_is(const csv_field *f, const char *s) { return f->len == strlen(s) && !memcmp(f->data, s, f->len); }

static char *dup_field(const csv_field *f)
{
    char *s = malloc((size_t)f->len + 1);
    if (s) {
        memcpy(s, f->data, f->len);
        s[f->len] = '\0';
    }
    return s;
}

/* A whole field of decimal digits, no more than UINT64_MAX. */
static int parse_count(const csv_field *f, uint64_t *out)
{
    if (f->len == 0 || f->len > 20) return -1;
    uint64_t v = 0;
    for (uint32_t i = 0; i < f->len; i++) {
        unsigned d = (unsigned)(unsigned char)f->data[i] - '0';
        if (d > 9 || v > (UINT64_MAX - d) / 10) return -1;
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}

static int expect_fields(loader *ld, const csv_record *rec, uint32_t n, const char *what)
{
    if (rec->count == n) return ANONKIT_OK;
    return ak_err_set(ld->err, ANONKIT_E_INPUT, ld->path, rec->line, 0, "a '%s' record needs %u fields, not %u", what,
                      n, rec->count);
}

static int find_name(const rules *r, const char *name, size_t len)
{
    for (uint32_t c = 0; c < r->ncolumns; c++)
        if (strlen(r->names[c]) == len && !memcmp(r->names[c], name, len)) return (int)c;
    return -1;
}

static int read_magic(loader *ld, const csv_record *rec)
{
    if (rec->count < 1 || !field_is(&rec->fields[0], MAGIC))
        return ak_err_set(ld->err, ANONKIT_E_INPUT, ld->path, rec->line, 0,
                          "not a rules file: the first line must be '%s,%d'", MAGIC, RULES_FORMAT_VERSION);
    AK_CHECK(expect_fields(ld, rec, 2, MAGIC));
    uint64_t version;
    if (parse_count(&rec->fields[1], &version) != 0 || version != RULES_FORMAT_VERSION)
        return BAD_FIELD(ld, rec, 1, "rules format version '%s' is not supported (this anonkit reads version %s)",
                         "1");
    ld->at = PHASE_HEADER;
    return ANONKIT_OK;
}

static int read_column(loader *ld, const csv_record *rec)
{
    rules *r = ld->r;
    AK_CHECK(expect_fields(ld, rec, 3, "column"));
    const csv_field *name = &rec->fields[1], *role = &rec->fields[2];
    if (find_name(r, name->data, name->len) >= 0)
        return BAD_FIELD(ld, rec, 1, "column '%s' is named twice%s", "");
    int kind = -1;
    for (int k = 0; k < (int)(sizeof role_names / sizeof *role_names); k++)
        if (field_is(role, role_names[k])) kind = k;
    if (kind < 0)
        return BAD_FIELD(ld, rec, 2, "unknown column role '%s' (%s)",
                         "qi-numeric, qi-categorical, identifier or copied");
    if (r->ncolumns == UINT32_MAX - 1) return ak_err_set(ld->err, ANONKIT_E_INPUT, ld->path, rec->line, 0, "too many columns");
    char **names = realloc(r->names, ((size_t)r->ncolumns + 1) * sizeof *names);
    if (!names) return ak_err_nomem(ld->err);
    r->names = names;
    unsigned char *roles = realloc(r->roles, (size_t)r->ncolumns + 1);
    if (!roles) return ak_err_nomem(ld->err);
    r->roles = roles;
    if (!(r->names[r->ncolumns] = dup_field(name))) return ak_err_nomem(ld->err);
    r->roles[r->ncolumns++] = (unsigned char)kind;
    return ANONKIT_OK;
}

/* A 'missing' record: a numeric QI named before it, once, then its tokens. */
static int read_missing(loader *ld, const csv_record *rec)
{
    rules *r = ld->r;
    if (rec->count < 2)
        return ak_err_set(ld->err, ANONKIT_E_INPUT, ld->path, rec->line, 0, "a 'missing' record needs the column");
    const int c = find_name(r, rec->fields[1].data, rec->fields[1].len);
    if (c < 0 || r->roles[c] > RULES_QI_CATEGORICAL)
        return BAD_FIELD(ld, rec, 1, "'%s' is not a quasi-identifier named before this record%s", "");
    for (size_t i = 0; i < r->nmissing; i++)
        if (r->missing[i].column == (uint32_t)c) return BAD_FIELD(ld, rec, 1, "a second 'missing' record for '%s'%s", "");
    rules_missing *m = realloc(r->missing, (r->nmissing + 1) * sizeof *m);
    if (!m) return ak_err_nomem(ld->err);
    r->missing = m;
    m = &r->missing[r->nmissing++];
    memset(m, 0, sizeof *m);
    m->column = (uint32_t)c;
    if (rec->count > 2 && !(m->tokens = calloc(rec->count - 2, sizeof *m->tokens))) return ak_err_nomem(ld->err);
    for (uint32_t i = 2; i < rec->count; i++) {
        if (rec->fields[i].len == 0)
            return BAD_FIELD(ld, rec, i, "'%s': an empty token (the empty cell is always missing)%s", "");
        if (!(m->tokens[m->ntokens++] = dup_field(&rec->fields[i]))) return ak_err_nomem(ld->err);
    }
    return ANONKIT_OK;
}

static int read_header_record(loader *ld, const csv_record *rec)
{
    const csv_field *kind = &rec->fields[0];
    if (field_is(kind, "delimiter")) {
        AK_CHECK(expect_fields(ld, rec, 2, "delimiter"));
        if (ld->have_delimiter)
            return ak_err_set(ld->err, ANONKIT_E_INPUT, ld->path, rec->line, 0, "a second 'delimiter' record");
        if (rec->fields[1].len != 1 || rec->fields[1].data[0] == '"' || rec->fields[1].data[0] == '\n' ||
            rec->fields[1].data[0] == '\r')
            return BAD_FIELD(ld, rec, 1, "the delimiter must be one character other than a quote or a line end, not '%s'%s", "");
        ld->r->delimiter = rec->fields[1].data[0];
        ld->have_delimiter = 1;
        return ANONKIT_OK;
    }
    if (field_is(kind, "publish")) {
        AK_CHECK(expect_fields(ld, rec, 2, "publish"));
        if (ld->have_publish)
            return ak_err_set(ld->err, ANONKIT_E_INPUT, ld->path, rec->line, 0, "a second 'publish' record");
        char *text = dup_field(&rec->fields[1]);
        if (!text) return ak_err_nomem(ld->err);
        recode_style style;
        int ok = recode_parse_style(text, &style) == 0;
        free(text);
        if (!ok) return BAD_FIELD(ld, rec, 1, "unknown publish style '%s' (%s)", "generalize, range or mean");
        ld->have_publish = 1;
        return ANONKIT_OK;
    }
    if (field_is(kind, "missing")) return read_missing(ld, rec);
    return read_column(ld, rec);
}

/* The header is complete: set up the QIs. */
static int end_header(loader *ld, const csv_record *rec)
{
    rules *r = ld->r;
    if (!ld->have_delimiter)
        return ak_err_set(ld->err, ANONKIT_E_INPUT, ld->path, rec->line, 0, "no 'delimiter' record before this one");
    for (uint32_t c = 0; c < r->ncolumns; c++) r->nqi += r->roles[c] <= RULES_QI_CATEGORICAL;
    if (!r->nqi)
        return ak_err_set(ld->err, ANONKIT_E_INPUT, ld->path, rec->line, 0,
                          "no quasi-identifier among the 'column' records before this one");
    if (!(r->qi = calloc(r->nqi, sizeof *r->qi))) return ak_err_nomem(ld->err);
    uint32_t q = 0;
    for (uint32_t c = 0; c < r->ncolumns; c++) {
        if (r->roles[c] > RULES_QI_CATEGORICAL) continue;
        r->qi[q].column = c;
        r->qi[q].kind = (rules_role)r->roles[c];
        for (size_t i = 0; i < r->nmissing; i++)
            if (r->missing[i].column == c) r->qi[q].missing = &r->missing[i];
        if (r->qi[q].kind == RULES_QI_CATEGORICAL) AK_CHECK(hier_builder_open(&r->qi[q].builder, ld->path, ld->err));
        q++;
    }
    ld->at = PHASE_HIERARCHY;
    return ANONKIT_OK;
}

static int qi_of_column(const rules *r, uint32_t c)
{
    for (uint32_t q = 0; q < r->nqi; q++)
        if (r->qi[q].column == c) return (int)q;
    return -1;
}

static int read_hierarchy_row(loader *ld, const csv_record *rec)
{
    rules *r = ld->r;
    if (rec->count < 3)
        return ak_err_set(ld->err, ANONKIT_E_INPUT, ld->path, rec->line, 0,
                          "a 'hierarchy' record needs the column and at least a leaf");
    const int c = find_name(r, rec->fields[1].data, rec->fields[1].len);
    if (c < 0 || r->roles[c] != RULES_QI_CATEGORICAL)
        return BAD_FIELD(ld, rec, 1, "'%s' is not a categorical quasi-identifier%s", "");
    rules_qi *a = &r->qi[qi_of_column(r, (uint32_t)c)];
    if (!a->first_line) a->first_line = rec->line;
    return hier_builder_add(a->builder, rec->fields + 2, rec->count - 2, rec->line, ld->err);
}

/* The hierarchies are complete. */
static int end_hierarchies(loader *ld, const csv_record *rec)
{
    rules *r = ld->r;
    for (uint32_t q = 0; q < r->nqi; q++) {
        rules_qi *a = &r->qi[q];
        if (a->kind != RULES_QI_CATEGORICAL) continue;
        if (!a->first_line)
            return ak_err_set(ld->err, ANONKIT_E_INPUT, ld->path, rec->line, 0,
                              "no 'hierarchy' records for categorical column '%s' before this one",
                              r->names[a->column]);
        hier_builder *b = a->builder;
        a->builder = NULL;
        AK_CHECK(hier_builder_finish(b, &a->h, ld->err));
    }
    ld->at = PHASE_RULES;
    return ANONKIT_OK;
}

static int grow_rules(rules *r, ak_error *err)
{
    if (r->nrules < r->cap) return ANONKIT_OK;
    size_t cap = r->cap ? r->cap * 2 : 256;
    const size_t d = r->nqi;
    uint64_t *rows = realloc(r->rows, cap * sizeof *rows);
    if (!rows) return ak_err_nomem(err);
    r->rows = rows;
    long *line = realloc(r->line, cap * sizeof *line);
    if (!line) return ak_err_nomem(err);
    r->line = line;
    double *region = realloc(r->region, cap * d * 2 * sizeof *region);
    if (!region) return ak_err_nomem(err);
    r->region = region;
    double *shown = realloc(r->shown, cap * d * 2 * sizeof *shown);
    if (!shown) return ak_err_nomem(err);
    r->shown = shown;
    size_t *off = realloc(r->text_off, (cap * d + 1) * sizeof *off);
    if (!off) return ak_err_nomem(err);
    r->text_off = off;
    r->cap = cap;
    return ANONKIT_OK;
}

/* Field i of rec as a key of QI q: a numeric bound (empty = `unbounded`,
 * when allowed) or a leaf label. */
static int field_key(loader *ld, const csv_record *rec, uint32_t i, uint32_t q, double unbounded, double *key)
{
    const rules_qi *a = &ld->r->qi[q];
    const csv_field *f = &rec->fields[i];
    const char *name = ld->r->names[a->column];
    if (a->kind == RULES_QI_NUMERIC) {
        if (a->missing && field_is(f, RULES_MISSING_WORD)) {
            *key = RULES_MISSING_KEY;
            return ANONKIT_OK;
        }
        if (f->len == 0 && unbounded != 0) {
            *key = unbounded;
            return ANONKIT_OK;
        }
        const int rc = numeric_key(f->data, f->len, key);
        if (rc == RULES_INEXACT)
            return BAD_FIELD(ld, rec, i, "'%s' of numeric column '%s' has more digits than the rules can compare "
                                         "exactly (an integer within +-2^53, or at most 15 significant digits)", name);
        if (rc != 0)
            return BAD_FIELD(ld, rec, i, "'%s' is not a number (a value of numeric column '%s')", name);
        return ANONKIT_OK;
    }
    uint32_t code;
    if (hier_find_leaf(a->h, f->data, f->len, &code) != 0)
        return BAD_FIELD(ld, rec, i, "'%s' is not a leaf of the hierarchy of column '%s'", name);
    *key = code;
    return ANONKIT_OK;
}

static int read_rule(loader *ld, const csv_record *rec)
{
    rules *r = ld->r;
    const uint32_t d = r->nqi;
    if (rec->count != 2 + FIELDS_PER_QI * d)
        return ak_err_set(ld->err, ANONKIT_E_INPUT, ld->path, rec->line, 0,
                          "a 'rule' record needs %u fields (2, and 5 for each of the %u quasi-identifiers), not %u",
                          2 + FIELDS_PER_QI * d, d, rec->count);
    if (r->nrules >= LEAF_BIT)
        return ak_err_set(ld->err, ANONKIT_E_INPUT, ld->path, rec->line, 0, "too many rules (at most %u)", LEAF_BIT);
    AK_CHECK(grow_rules(r, ld->err));
    const size_t k = r->nrules;
    uint64_t rows;
    if (parse_count(&rec->fields[1], &rows) != 0 || rows == 0)
        return BAD_FIELD(ld, rec, 1, "'%s' is not a row count (a whole number of at least 1)%s", "");
    if (rows > UINT64_MAX - ld->rows)
        return ak_err_set(ld->err, ANONKIT_E_INPUT, ld->path, rec->line, 2, "the row counts add up beyond 2^64");
    for (uint32_t q = 0; q < d; q++) {
        const uint32_t f = 2 + FIELDS_PER_QI * q;
        const rules_qi *a = &r->qi[q];
        double *region = r->region + 2 * (k * d + q), *shown = r->shown + 2 * (k * d + q);
        double lowest, highest;
        AK_CHECK(field_key(ld, rec, f, q, -INFINITY, &region[0]));
        AK_CHECK(field_key(ld, rec, f + 1, q, INFINITY, &region[1]));
        AK_CHECK(field_key(ld, rec, f + 2, q, 0, &lowest));
        AK_CHECK(field_key(ld, rec, f + 3, q, 0, &highest));
        const char *name = r->names[a->column];
        if (a->kind == RULES_QI_CATEGORICAL) region[0] -= 1; /* leaves [a, b] are keys (a - 1, b] */
        if (!(region[0] < region[1]))
            return ak_err_set(ld->err, ANONKIT_E_INPUT, ld->path, rec->line, (long)f + 1,
                              "the region of column '%s' is empty (its low end is not below its high end)", name);
        if (!(lowest <= highest && lowest > region[0] && highest <= region[1]))
            return ak_err_set(ld->err, ANONKIT_E_INPUT, ld->path, rec->line, (long)f + 3,
                              "the class's values of column '%s' do not lie in order inside its region", name);
        if (a->kind == RULES_QI_NUMERIC) {
            shown[0] = lowest;
            shown[1] = highest;
        } else {
            const hier_node *node = hier_node_at(a->h, hier_lca(a->h, (uint32_t)lowest, (uint32_t)highest));
            shown[0] = node->lo;
            shown[1] = node->hi;
        }
        size_t off;
        const csv_field *text = &rec->fields[f + 4];
        if (strbuf_append_str(&r->text, text->data, text->len, &off) != 0) return ak_err_nomem(ld->err);
        r->text_off[k * d + q] = off;
    }
    r->text_off[k * d + d] = r->text.len;
    r->rows[k] = rows;
    r->line[k] = rec->line;
    ld->rows += rows;
    r->nrules++;
    return ANONKIT_OK;
}

static int read_end(loader *ld, const csv_record *rec)
{
    AK_CHECK(expect_fields(ld, rec, 3, "end"));
    uint64_t nrules, rows;
    if (parse_count(&rec->fields[1], &nrules) != 0 || nrules != ld->r->nrules) {
        char count[24];
        snprintf(count, sizeof count, "%zu", ld->r->nrules);
        return BAD_FIELD(ld, rec, 1, "the 'end' record counts '%s' rules, the file has %s", count);
    }
    if (parse_count(&rec->fields[2], &rows) != 0 || rows != ld->rows) {
        char count[24];
        snprintf(count, sizeof count, "%llu", (unsigned long long)ld->rows);
        return BAD_FIELD(ld, rec, 2, "the 'end' record counts '%s' rows, the rules' counts add up to %s", count);
    }
    ld->at = PHASE_DONE;
    return ANONKIT_OK;
}

static int read_record(loader *ld, const csv_record *rec)
{
    if (ld->at == PHASE_MAGIC) return read_magic(ld, rec);
    const csv_field *kind = &rec->fields[0];
    if (ld->at == PHASE_DONE)
        return ak_err_set(ld->err, ANONKIT_E_INPUT, ld->path, rec->line, 0, "a record after the 'end' record");
    if (rec->count == 1 && kind->len == 0)
        return ak_err_set(ld->err, ANONKIT_E_INPUT, ld->path, rec->line, 0, "an empty line");
    const int is_header = field_is(kind, "delimiter") || field_is(kind, "publish") || field_is(kind, "column") ||
                          field_is(kind, "missing");
    const int is_hierarchy = field_is(kind, "hierarchy"), is_rule = field_is(kind, "rule"), is_end = field_is(kind, "end");
    if (!is_header && !is_hierarchy && !is_rule && !is_end)
        return BAD_FIELD(ld, rec, 0, "unknown record kind '%s' (%s)",
                         "delimiter, publish, column, missing, hierarchy, rule or end");
    if (is_header) {
        if (ld->at != PHASE_HEADER)
            return BAD_FIELD(ld, rec, 0, "a '%s' record after the first hierarchy or rule record%s", "");
        return read_header_record(ld, rec);
    }
    if (ld->at == PHASE_HEADER) AK_CHECK(end_header(ld, rec));
    if (is_hierarchy) {
        if (ld->at != PHASE_HIERARCHY)
            return ak_err_set(ld->err, ANONKIT_E_INPUT, ld->path, rec->line, 0,
                              "a 'hierarchy' record after the first rule");
        return read_hierarchy_row(ld, rec);
    }
    if (ld->at == PHASE_HIERARCHY) AK_CHECK(end_hierarchies(ld, rec));
    return is_rule ? read_rule(ld, rec) : read_end(ld, rec);
}

/* ------------------------------------------------------------ the tree */

/* A run of rules [a, b) still to be split, its box (2 keys per QI, stored
 * apart), and where its subtree hangs: child `side` of node `parent`, or the
 * root when parent is UINT32_MAX. */
typedef struct pending {
    size_t a, b;
    uint32_t parent;
    int side;
    size_t depth; /* of the subtree's root; the tree's root has depth 0 */
} pending;

typedef struct builder {
    pending *stack;
    double *boxes; /* 2 * nqi per stack entry */
    size_t depth, cap;
} builder;

static int push_run(builder *bd, uint32_t d, size_t a, size_t b, uint32_t parent, int side, size_t depth,
                    const double *box)
{
    if (bd->depth == bd->cap) {
        size_t cap = bd->cap ? bd->cap * 2 : 64;
        pending *stack = realloc(bd->stack, cap * sizeof *stack);
        if (!stack) return -1;
        bd->stack = stack;
        double *boxes = realloc(bd->boxes, cap * 2 * d * sizeof *boxes);
        if (!boxes) return -1;
        bd->boxes = boxes;
        bd->cap = cap;
    }
    bd->stack[bd->depth] = (pending){a, b, parent, side, depth};
    memcpy(bd->boxes + bd->depth * 2 * d, box, 2 * d * sizeof *box);
    bd->depth++;
    return 0;
}

/* The cut of run [a, b) nearest its middle: *q, the prefix end *m and the
 * cut value; 0 when there is none. suffix: room for b - a + 1 keys. */
static int find_cut(const rules *r, size_t a, size_t b, double *suffix, uint32_t *best_q, size_t *best_m,
                    double *best_cut)
{
    const uint32_t d = r->nqi;
    const size_t n = b - a;
    size_t best_score = SIZE_MAX;
    for (uint32_t q = 0; q < d && best_score > n % 2; q++) {
        suffix[n] = INFINITY;
        for (size_t i = n; i-- > 0;) {
            double lo = r->region[2 * ((a + i) * d + q)];
            suffix[i] = lo < suffix[i + 1] ? lo : suffix[i + 1];
        }
        double prefix = -INFINITY;
        for (size_t m = 1; m < n; m++) {
            double hi = r->region[2 * ((a + m - 1) * d + q) + 1];
            if (hi > prefix) prefix = hi;
            if (prefix > suffix[m]) continue;
            size_t score = 2 * m > n ? 2 * m - n : n - 2 * m;
            if (score < best_score) {
                best_score = score;
                *best_q = q;
                *best_m = a + m;
                *best_cut = prefix;
            }
        }
    }
    return best_score != SIZE_MAX;
}

static int add_node(rules *r, uint32_t q, double cut, uint32_t *id, ak_error *err)
{
    if (r->nnodes == r->node_cap) {
        size_t cap = r->node_cap ? r->node_cap * 2 : 64;
        rules_node *nodes = realloc(r->nodes, cap * sizeof *nodes);
        if (!nodes) return ak_err_nomem(err);
        r->nodes = nodes;
        r->node_cap = cap;
    }
    *id = (uint32_t)r->nnodes;
    r->nodes[r->nnodes++] = (rules_node){q, cut, {0, 0}};
    return ANONKIT_OK;
}

static void hang(rules *r, uint32_t parent, int side, uint32_t child)
{
    if (parent == UINT32_MAX) r->root = child;
    else r->nodes[parent].child[side] = child;
}

static int build_tree(rules *r, const char *path, ak_error *err)
{
    const uint32_t d = r->nqi;
    if (r->nrules == 0) return ak_err_set(err, ANONKIT_E_INPUT, path, 0, 0, "the file has no rules");
    builder bd = {0};
    double *suffix = malloc((r->nrules + 1) * sizeof *suffix);
    double *box = malloc(2 * d * sizeof *box), *part = malloc(2 * d * sizeof *part);
    int rc = ANONKIT_OK;
    if (!suffix || !box || !part) { rc = ak_err_nomem(err); goto done; }
    /* The whole domain. */
    for (uint32_t q = 0; q < d; q++) {
        box[2 * q] = r->qi[q].kind == RULES_QI_NUMERIC ? -INFINITY : -1;
        box[2 * q + 1] = r->qi[q].kind == RULES_QI_NUMERIC ? INFINITY : (double)hier_leaf_count(r->qi[q].h) - 1;
    }
    if (push_run(&bd, d, 0, r->nrules, UINT32_MAX, 0, 0, box) != 0) { rc = ak_err_nomem(err); goto done; }
    while (bd.depth) {
        const pending run = bd.stack[--bd.depth];
        memcpy(box, bd.boxes + bd.depth * 2 * d, 2 * d * sizeof *box);
        if (run.b - run.a == 1) {
            const double *region = r->region + 2 * run.a * d;
            for (uint32_t q = 0; q < 2 * d; q++) {
                if (region[q] == box[q]) continue;
                rc = ak_err_set(err, ANONKIT_E_INPUT, path, r->line[run.a], 0,
                                "the region of column '%s' does not fit the other rules: the rules must cover the "
                                "whole domain without gaps or overlaps, in depth-first order of the partition tree",
                                r->names[r->qi[q / 2].column]);
                goto done;
            }
            hang(r, run.parent, run.side, LEAF_BIT | (uint32_t)run.a);
            if (run.depth > r->height) r->height = run.depth;
            continue;
        }
        uint32_t q = 0, id = 0;
        size_t m = 0;
        double cut = 0;
        if (!find_cut(r, run.a, run.b, suffix, &q, &m, &cut)) {
            rc = ak_err_set(err, ANONKIT_E_INPUT, path, r->line[run.a], 0,
                            "the rules on lines %ld to %ld cannot be cut apart along any quasi-identifier: their "
                            "regions overlap, or they are not in depth-first order of the partition tree",
                            r->line[run.a], r->line[run.b - 1]);
            goto done;
        }
        if ((rc = add_node(r, q, cut, &id, err)) < 0) goto done;
        hang(r, run.parent, run.side, id);
        /* Right part first, so that the left one is built next. */
        memcpy(part, box, 2 * d * sizeof *part);
        part[2 * q] = cut;
        if (push_run(&bd, d, m, run.b, id, 1, run.depth + 1, part) != 0) { rc = ak_err_nomem(err); goto done; }
        memcpy(part, box, 2 * d * sizeof *part);
        part[2 * q + 1] = cut;
        if (push_run(&bd, d, run.a, m, id, 0, run.depth + 1, part) != 0) { rc = ak_err_nomem(err); goto done; }
    }
done:
    free(bd.stack);
    free(bd.boxes);
    free(suffix);
    free(box);
    free(part);
    return rc;
}

int rules_load(rules **out, const char *path, ak_error *err)
{
    *out = NULL;
    rules *r = calloc(1, sizeof *r);
    if (!r) return ak_err_nomem(err);
    if (!(r->path = malloc(strlen(path) + 1))) {
        rules_free(r);
        return ak_err_nomem(err);
    }
    strcpy(r->path, path);
    loader ld = {.r = r, .path = r->path, .at = PHASE_MAGIC, .err = err};
    csv_reader *rd = NULL;
    int rc = csv_reader_open(&rd, path, ',', err);
    csv_record rec;
    long last_line = 0;
    while (rc >= 0 && (rc = csv_read(rd, &rec, err)) == 1) {
        last_line = rec.line;
        rc = read_record(&ld, &rec);
    }
    csv_reader_free(rd);
    if (rc == 0 && ld.at != PHASE_DONE)
        rc = ak_err_set(err, ANONKIT_E_INPUT, path, last_line, 0,
                        ld.at == PHASE_MAGIC ? "the file is empty: it holds no rules"
                                             : "the file ends without its 'end' record: it is cut short");
    if (rc >= 0) rc = build_tree(r, r->path, err);
    if (rc < 0) {
        rules_free(r);
        return rc;
    }
    *out = r;
    return ANONKIT_OK;
}

/* ----------------------------------------------------------------- applying */

static int unknown_input_column(const rules *r, const char *in_name, const csv_field *f, uint32_t column,
                                ak_error *err)
{
    char list[512];
    size_t used = 0;
    list[0] = '\0';
    for (uint32_t c = 0; c < r->ncolumns && used < sizeof list - 8; c++) {
        int n = snprintf(list + used, sizeof list - used, "%s%s", c ? ", " : "", r->names[c]);
        if (n < 0) break;
        used += (size_t)n;
    }
    return ak_err_set(err, ANONKIT_E_INPUT, in_name, 1, (long)column + 1,
                      "column '%s' is not in the rules %s, which know the columns: %s", AK_SHOW(f->data, f->len),
                      r->path, list);
}

/* Reads the input header and maps every column of the rules to its input
 * column (src[c], or -1 for an identifier the input does not have). */
static int map_columns(const rules *r, csv_reader *in, const char *in_name, int64_t *src, uint32_t *ninput,
                       ak_error *err)
{
    csv_record rec;
    int rc = csv_read(in, &rec, err);
    if (rc < 0) return rc;
    if (rc == 0) return ak_err_set(err, ANONKIT_E_INPUT, in_name, 1, 0, "the file is empty: a header row is needed");
    for (uint32_t c = 0; c < r->ncolumns; c++) src[c] = -1;
    for (uint32_t i = 0; i < rec.count; i++) {
        const csv_field *f = &rec.fields[i];
        int c = find_name(r, f->data, f->len);
        if (c < 0) return unknown_input_column(r, in_name, f, i, err);
        if (src[c] >= 0)
            return ak_err_set(err, ANONKIT_E_INPUT, in_name, 1, (long)i + 1, "the header names column '%s' twice",
                              r->names[c]);
        src[c] = i;
    }
    for (uint32_t c = 0; c < r->ncolumns; c++)
        if (src[c] < 0 && r->roles[c] != RULES_IDENTIFIER)
            return ak_err_set(err, ANONKIT_E_INPUT, in_name, 1, 0, "column '%s' of the rules %s is missing",
                              r->names[c], r->path);
    *ninput = rec.count;
    return ANONKIT_OK;
}

static int recode_rows(const rules *r, csv_reader *in, const char *in_name, csv_writer *out, const int64_t *src,
                       uint32_t ninput, double *keys, rules_stats *stats, ak_error *err)
{
    csv_record rec;
    int rc;
    while ((rc = csv_read(in, &rec, err)) == 1) {
        if (rec.count != ninput) {
            if (rec.count == 1 && rec.fields[0].len == 0)
                return ak_err_set(err, ANONKIT_E_INPUT, in_name, rec.line, 0, "empty line: expected %u fields", ninput);
            return ak_err_set(err, ANONKIT_E_INPUT, in_name, rec.line, 0, "expected %u fields as in the header, found %u",
                              ninput, rec.count);
        }
        for (uint32_t q = 0; q < r->nqi; q++) {
            const uint32_t column = (uint32_t)src[r->qi[q].column];
            const csv_field *f = &rec.fields[column];
            const int keyed = rules_key(r, q, f->data, f->len, &keys[q]);
            if (keyed == 0) continue;
            const char *name = r->names[r->qi[q].column];
            if (keyed == RULES_INEXACT)
                return ak_err_set(err, ANONKIT_E_INPUT, in_name, rec.line, (long)column + 1,
                                  "value %s of QI '%s' has more digits than the rules can compare exactly (an "
                                  "integer within +-2^53, or at most 15 significant digits)",
                                  AK_SHOW(f->data, f->len), name);
            if (r->qi[q].kind == RULES_QI_NUMERIC)
                return ak_err_set(err, ANONKIT_E_INPUT, in_name, rec.line, (long)column + 1,
                                  "quasi-identifier '%s' is numeric but holds '%s'", name, AK_SHOW(f->data, f->len));
            return ak_err_set(err, ANONKIT_E_INPUT, in_name, rec.line, (long)column + 1,
                              "value '%s' of column '%s' is not a leaf of its hierarchy in the rules %s",
                              AK_SHOW(f->data, f->len), name, r->path);
        }
        const size_t rule = rules_find(r, keys);
        int outside = 0;
        for (uint32_t q = 0; q < r->nqi && !outside; q++) outside = rules_outside(r, rule, q, keys[q]);
        stats->outside += (uint64_t)outside;
        stats->rows++;
        uint32_t q = 0;
        for (uint32_t c = 0; c < r->ncolumns; c++) {
            if (r->roles[c] == RULES_IDENTIFIER) continue;
            if (r->roles[c] <= RULES_QI_CATEGORICAL) {
                size_t len;
                const char *text = rules_text(r, rule, q++, &len);
                AK_CHECK(csv_write_field(out, text, len, err));
            } else {
                const csv_field *f = &rec.fields[src[c]];
                AK_CHECK(csv_write_field(out, f->data, f->len, err));
            }
        }
        AK_CHECK(csv_write_end(out, err));
    }
    return rc;
}

int rules_apply(const rules *r, csv_reader *in, const char *in_name, csv_writer *out, rules_stats *stats,
                ak_error *err)
{
    memset(stats, 0, sizeof *stats);
    int64_t *src = malloc(r->ncolumns * sizeof *src);
    double *keys = malloc(r->nqi * sizeof *keys);
    uint32_t ninput = 0;
    int rc = src && keys ? ANONKIT_OK : ak_err_nomem(err);
    if (rc == ANONKIT_OK) rc = map_columns(r, in, in_name, src, &ninput, err);
    for (uint32_t c = 0; rc == ANONKIT_OK && c < r->ncolumns; c++)
        if (r->roles[c] != RULES_IDENTIFIER) rc = csv_write_field(out, r->names[c], strlen(r->names[c]), err);
    if (rc == ANONKIT_OK) rc = csv_write_end(out, err);
    if (rc == ANONKIT_OK) rc = recode_rows(r, in, in_name, out, src, ninput, keys, stats, err);
    if (rc >= 0) rc = csv_writer_flush(out, err);
    free(src);
    free(keys);
    return rc < 0 ? rc : ANONKIT_OK;
}
