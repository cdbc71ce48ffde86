/* releases.c — the releases of a sequential release ([Wang06]) as TDS4SA takes
 * them: reads the headers of the current release T1 and of the earlier
 * releases and the inconsistency file, resolves X, Y and the join attributes
 * (common categorical attributes, and the attributes named by the
 * inconsistency file, §3.3; star join, §7), and, once the caller has loaded
 * T1 through table_load with the QIs named here, encodes the Y tuples of T1
 * and every earlier release (their values may be generalized: any node of the
 * hierarchy) into a tds_input. Large releases are read in two pieces on two
 * threads. */
#include "algo/sequential/releases.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/hash.h"
#include "common/hugemem.h"
#include "common/parallel.h"
#include "core/hierarchy.h"
#include "io/csv.h"
#include "io/digest.h"

#define NONE UINT32_MAX

/* The header of one release. */
typedef struct release_cols {
    const char *path;
    uint32_t ncols;
    char **names;
} release_cols;

static void cols_free(release_cols *c)
{
    for (uint32_t i = 0; c->names && i < c->ncols; i++) free(c->names[i]);
    free(c->names);
    c->names = NULL;
}

static int read_header(release_cols *c, const char *path, const char *display, char delim, ak_error *err)
{
    csv_reader *r;
    csv_record rec;
    c->path = display;
    AK_CHECK(csv_reader_open(&r, path, delim, err));
    int rc = csv_read(r, &rec, err);
    if (rc == 0) rc = ak_err_set(err, ANONKIT_E_INPUT, display, 1, 0, "empty file: expected a header row");
    if (rc > 0) {
        c->names = calloc(rec.count, sizeof *c->names);
        if (!c->names) rc = ak_err_nomem(err);
        for (uint32_t i = 0; rc > 0 && i < rec.count; i++) {
            if (!(c->names[i] = strndup(rec.fields[i].data, rec.fields[i].len))) rc = ak_err_nomem(err);
            c->ncols = i + 1;
        }
    }
    csv_reader_free(r);
    return rc < 0 ? rc : 0;
}

static uint32_t col_of(const release_cols *c, const char *name)
{
    for (uint32_t i = 0; i < c->ncols; i++)
        if (!strcmp(c->names[i], name)) return i;
    return NONE;
}

static int in_list(const seq_names *l, const char *name)
{
    for (size_t i = 0; i < l->count; i++)
        if (!strcmp(l->items[i], name)) return 1;
    return 0;
}

static const char *hier_path_of(const seq_settings *cfg, const char *name)
{
    for (size_t i = cfg->hierarchy_attrs.count; i-- > 0;)
        if (!strcmp(cfg->hierarchy_attrs.items[i], name)) return cfg->hierarchy_paths.items[i];
    return NULL;
}

/* Hierarchies loaded by attribute name, shared by the earlier releases. */
typedef struct hier_cache {
    size_t count;
    char **names;
    hier **h;
} hier_cache;

static int cache_get(hier_cache *hc, const seq_settings *cfg, const char *name, hier **out, ak_error *err)
{
    for (size_t i = 0; i < hc->count; i++)
        if (!strcmp(hc->names[i], name)) return *out = hc->h[i], 0;
    const char *path = hier_path_of(cfg, name);
    if (!path)
        return ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0,
                          "join attribute '%s' needs a --hierarchy (continuous attributes are not matched, [Wang06] §3.3)", name);
    char **names = realloc(hc->names, (hc->count + 1) * sizeof *names);
    if (names) hc->names = names;
    hier **hs = names ? realloc(hc->h, (hc->count + 1) * sizeof *hs) : NULL;
    if (hs) hc->h = hs;
    if (!names || !hs || !(hc->names[hc->count] = strdup(name))) return ak_err_nomem(err);
    if (hier_load(&hc->h[hc->count], path, err) < 0) {
        free(hc->names[hc->count]);
        return err->code;
    }
    *out = hc->h[hc->count++];
    return 0;
}

static void cache_free(hier_cache *hc)
{
    for (size_t i = 0; i < hc->count; i++) {
        free(hc->names[i]);
        hier_free(hc->h[i]);
    }
    free(hc->names);
    free(hc->h);
}

/* One line of the inconsistency file. */
typedef struct incons {
    char *attr_a, *value_a, *attr_b, *value_b;
    long line;
} incons;

static void incons_free(incons *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(p[i].attr_a);
        free(p[i].value_a);
        free(p[i].attr_b);
        free(p[i].value_b);
    }
    free(p);
}

/* Reads "ATTR_A,VALUE_A,ATTR_B,VALUE_B" lines (the data's delimiter). */
static int read_inconsistent(const char *path, char delim, incons **out, size_t *n, ak_error *err)
{
    csv_reader *r;
    csv_record rec;
    *out = NULL;
    *n = 0;
    AK_CHECK(csv_reader_open(&r, path, delim, err));
    int rc;
    while ((rc = csv_read(r, &rec, err)) > 0) {
        if (rec.count == 1 && rec.fields[0].len == 0) continue;
        if (rec.fields[0].len && rec.fields[0].data[0] == '#') continue;
        if (rec.count != 4) {
            rc = ak_err_set(err, ANONKIT_E_INPUT, path, rec.line, 0,
                            "expected 4 fields (ATTRIBUTE, VALUE, ATTRIBUTE, VALUE), found %u", rec.count);
            break;
        }
        incons *p = realloc(*out, (*n + 1) * sizeof *p);
        if (!p) {
            rc = ak_err_nomem(err);
            break;
        }
        *out = p;
        incons *c = &p[(*n)++];
        c->line = rec.line;
        c->attr_a = strndup(rec.fields[0].data, rec.fields[0].len);
        c->value_a = strndup(rec.fields[1].data, rec.fields[1].len);
        c->attr_b = strndup(rec.fields[2].data, rec.fields[2].len);
        c->value_b = strndup(rec.fields[3].data, rec.fields[3].len);
        if (!c->attr_a || !c->value_a || !c->attr_b || !c->value_b) {
            rc = ak_err_nomem(err);
            break;
        }
    }
    csv_reader_free(r);
    return rc < 0 ? rc : 0;
}

/* The columns read by read_columns from a release, or from one piece of it. */
typedef struct col_piece {
    const char *path, *display;
    char delim;
    uint32_t ncols, k;
    const uint32_t *cols;
    hier *const *hs;
    strmap *dicts;            /* text ids per column (hs[i] NULL) */
    int whole;                /* the whole file, header included; else bytes [offset, offset + length) */
    uint64_t offset, length;
    uint32_t *codes;          /* row-major, n * k */
    size_t n, cap;
    long lines;               /* physical lines read (pieces) */
    int quoted;               /* a field began with a quote (pieces) */
    const input_digest *expect; /* T1 read again: its records go to digest, to compare with this (the table's) */
    input_digest digest;
    int rc;
    ak_error err;
} col_piece;

/* Reads the rows of one col_piece. */
static void *read_piece(void *arg)
{
    col_piece *p = arg;
    csv_reader *r = NULL;
    csv_record rec;
    const uint32_t k = p->k;
    if (!p->whole && k) { /* room for about all of the piece's rows at once */
        const uint64_t lines = csv_estimate_lines(p->path, p->offset, p->length);
        if (lines && lines < SIZE_MAX / 8 / k && (p->codes = ak_huge_malloc((size_t)lines * k * sizeof *p->codes)))
            p->cap = (size_t)lines * k;
    }
    p->rc = p->whole ? csv_reader_open(&r, p->path, p->delim, &p->err)
                     : csv_reader_open_range(&r, p->path, p->delim, p->offset, p->length, 2, &p->err);
    int got = 0;
    if (p->rc == 0 && p->expect) p->rc = csv_reader_digest(r, &p->digest, p->expect->cut, &p->err);
    if (p->rc == 0 && p->whole && (got = csv_read(r, &rec, &p->err)) < 0) p->rc = got; /* header */
    while (p->rc == 0 && (got = csv_read(r, &rec, &p->err)) > 0) {
        if (rec.count != p->ncols) {
            p->rc = ak_err_set(&p->err, ANONKIT_E_INPUT, p->display, rec.line, 0,
                               "expected %u fields as in the header, found %u", p->ncols, rec.count);
            break;
        }
        if ((p->n + 1) * k > p->cap) {
            size_t nc = p->cap ? p->cap * 2 : 1024 * (k ? k : 1);
            uint32_t *c = realloc(p->codes, nc * sizeof *c);
            if (!c) {
                p->rc = ak_err_nomem(&p->err);
                break;
            }
            p->codes = c;
            p->cap = nc;
        }
        for (uint32_t i = 0; i < k && p->rc == 0; i++) {
            const csv_field *f = &rec.fields[p->cols[i]];
            uint32_t v;
            if (p->hs[i]) {
                v = hier_find_label(p->hs[i], f->data, f->len);
                if (v == NONE)
                    p->rc = ak_err_set(&p->err, ANONKIT_E_INPUT, p->display, rec.line, (long)p->cols[i] + 1,
                                       "value '%s' is in no node of the hierarchy %s", AK_SHOW(f->data, f->len),
                                       hier_path(p->hs[i]));
            } else if (strmap_intern(&p->dicts[i], f->data, f->len, &v, NULL) != 0) {
                p->rc = ak_err_nomem(&p->err);
            }
            p->codes[p->n * k + i] = v;
        }
        p->n++;
    }
    if (p->rc == 0 && got < 0) p->rc = got;
    if (r) {
        p->lines = csv_reader_line(r) - 2;
        p->quoted = csv_reader_saw_quote(r);
    }
    csv_reader_free(r);
    return NULL;
}

/* Bytes below which a release is not read in two pieces. */
#define READ_PARALLEL_MIN_BYTES (8u << 20)

/* Reads a large file in two pieces on two threads (the cut and its checks as
 * in table_load): returns 1 with the result of the whole read, 0 when the
 * pieces may not read as the whole does (the caller then reads it whole,
 * which also gives any error exactly), or a negative status. */
static int read_columns_split(const col_piece *proto, uint32_t **codes, size_t *nrows, ak_error *err)
{
    const input_digest *expect = proto->expect;
    struct stat st;
    if (stat(proto->path, &st) != 0 || (uint64_t)st.st_size < READ_PARALLEL_MIN_BYTES) return 0;
    if (expect && !expect->cut) return 0; /* read whole, as the table was: the digests then compare */
    csv_reader *r = NULL;
    csv_record rec;
    uint64_t data_start = 0;
    ak_error ignored;
    input_digest header = {0}; /* T1 again: the header's segment */
    if (csv_reader_open(&r, proto->path, proto->delim, &ignored) == 0 &&
        (!expect || csv_reader_digest(r, &header, expect->cut, &ignored) == 0) && csv_read(r, &rec, &ignored) == 1)
        data_start = csv_reader_offset(r);
    csv_reader_free(r); /* (which ends the header's segment) */
    const uint64_t split = !data_start ? 0 : expect ? expect->cut : csv_find_split(proto->path, data_start, (uint64_t)st.st_size);
    if (!split || split <= data_start || split >= (uint64_t)st.st_size) {
        digest_free(&header);
        return 0;
    }
    const uint32_t k = proto->k;
    col_piece pieces[2] = {*proto, *proto};
    strmap *dicts = calloc(k ? k : 1, sizeof *dicts);
    int rc = dicts ? 0 : ak_err_nomem(err);
    for (uint32_t i = 0; rc == 0 && i < k; i++)
        if (strmap_init(&dicts[i], 256) != 0) rc = ak_err_nomem(err);
    for (int i = 0; i < 2; i++) {
        pieces[i].whole = 0;
        pieces[i].offset = i ? split : data_start;
        pieces[i].length = i ? (uint64_t)st.st_size - split : split - data_start;
        pieces[i].dicts = i ? dicts : proto->dicts;
    }
    /* the second piece on a thread of its own (in the caller when none starts) */
    if (rc == 0) ak_run_parts(pieces, sizeof pieces[0], 2, read_piece);
    const size_t n0 = pieces[0].n, n1 = pieces[1].n;
    int same = 1; /* T1 again: the header and both pieces digest as the table's load did */
    if (rc == 0 && expect && pieces[0].rc == 0 && pieces[1].rc == 0) {
        if (digest_merge(&pieces[0].digest, &pieces[1].digest) != 0 || digest_merge(&pieces[0].digest, &header) != 0)
            rc = ak_err_nomem(err);
        else same = digest_equal(&pieces[0].digest, expect);
    }
    if (rc == 0 && same && pieces[0].rc == 0 && pieces[1].rc == 0 && !pieces[0].quoted && !pieces[1].quoted &&
        pieces[0].lines == (long)n0) {
        /* The second piece's rows after the first's, its text ids mapped into
         * the first piece's dictionaries (order of first appearance kept). */
        uint32_t *all = realloc(pieces[0].codes, ((n0 + n1) * k + 1) * sizeof *all);
        if (!all) rc = ak_err_nomem(err);
        else pieces[0].codes = all;
        for (uint32_t i = 0; rc == 0 && i < k; i++) {
            if (proto->hs[i]) {
                for (size_t row = 0; row < n1; row++) all[(n0 + row) * k + i] = pieces[1].codes[row * k + i];
                continue;
            }
            uint32_t *map = malloc((dicts[i].count + 1) * sizeof *map);
            if (!map) {
                rc = ak_err_nomem(err);
                break;
            }
            for (uint32_t id = 0; rc == 0 && id < dicts[i].count; id++)
                if (strmap_intern(&proto->dicts[i], strmap_key(&dicts[i], id), strmap_key_len(&dicts[i], id), &map[id],
                                  NULL) != 0)
                    rc = ak_err_nomem(err);
            for (size_t row = 0; rc == 0 && row < n1; row++)
                all[(n0 + row) * k + i] = map[pieces[1].codes[row * k + i]];
            free(map);
        }
        if (rc == 0) {
            *codes = all;
            *nrows = n0 + n1;
            pieces[0].codes = NULL;
            rc = 1;
        }
    } else {
        if (pieces[0].rc == ANONKIT_E_NOMEM || pieces[1].rc == ANONKIT_E_NOMEM) rc = ak_err_nomem(err);
        /* the first piece's ids are in the caller's dictionaries: start them afresh */
        for (uint32_t i = 0; rc == 0 && i < k; i++) {
            strmap_free(&proto->dicts[i]);
            if (strmap_init(&proto->dicts[i], 256) != 0) rc = ak_err_nomem(err);
        }
    }
    for (uint32_t i = 0; dicts && i < k; i++) strmap_free(&dicts[i]);
    free(dicts);
    free(pieces[0].codes);
    free(pieces[1].codes);
    digest_free(&pieces[0].digest);
    digest_free(&pieces[1].digest);
    digest_free(&header);
    return rc;
}

/* Reads columns cols[0..k) of a release: hierarchy nodes where hs[i] is set,
 * otherwise text ids in dicts[i] (empty on entry; ids in order of first
 * appearance). codes is row-major, nrows * k. With threads > 1 a large file
 * is read in two pieces at once. With expect (T1, which the table has read
 * already), the read must digest as expect: the file is the one the table
 * encoded, not an edited or replaced one. */
static int read_columns(const char *path, const char *display, char delim, uint32_t ncols, uint32_t k,
                        const uint32_t *cols, hier *const *hs, strmap *dicts, unsigned threads,
                        const input_digest *expect, uint32_t **codes, size_t *nrows, ak_error *err)
{
    *codes = NULL;
    col_piece whole = {.path = path, .display = display, .delim = delim, .ncols = ncols, .k = k, .cols = cols,
                       .hs = hs, .dicts = dicts, .whole = 1, .expect = expect};
    if (threads > 1) {
        int split = read_columns_split(&whole, codes, nrows, err);
        if (split != 0) return split < 0 ? split : 0;
    }
    read_piece(&whole);
    if (whole.rc == 0 && expect && !digest_equal(&whole.digest, expect)) whole.rc = digest_changed(&whole.err, display);
    digest_free(&whole.digest);
    if (whole.rc < 0) {
        free(whole.codes);
        if (err) *err = whole.err;
        return whole.rc;
    }
    *codes = whole.codes;
    *nrows = whole.n;
    return 0;
}

/* Y tuple codes from the text ids of the Y columns (k of them, at column
 * offset `at` of row-major codes with `width` per row), and per tuple whether
 * it is sensitive (one of its values listed, or every tuple when none are). */
static int y_tuples(const uint32_t *codes, size_t nrows, uint32_t width, uint32_t at, uint32_t k, const strmap *dicts,
                    const seq_names *sensitive, uint32_t **y, uint32_t *ny, unsigned char **flags, ak_error *err)
{
    strmap m;
    memset(&m, 0, sizeof m);
    *y = malloc((nrows ? nrows : 1) * sizeof **y);
    if (!*y || strmap_init(&m, 1024) != 0) return ak_err_nomem(err);
    int rc = 0;
    unsigned char *f = NULL;
    size_t capf = 0;
    for (size_t r = 0; r < nrows && rc == 0; r++) {
        int ins;
        uint32_t id;
        if (strmap_intern(&m, (const char *)(codes + r * width + at), k * sizeof *codes, &id, &ins) != 0) {
            rc = ak_err_nomem(err);
            break;
        }
        (*y)[r] = id;
        if (ins) {
            if (id >= capf) {
                size_t nc = capf ? capf * 2 : 1024;
                unsigned char *p = realloc(f, nc);
                if (!p) {
                    rc = ak_err_nomem(err);
                    break;
                }
                f = p;
                capf = nc;
            }
            int sens = sensitive->count == 0;
            for (uint32_t i = 0; i < k && !sens; i++) {
                const uint32_t v = codes[r * width + at + i];
                sens = in_list(sensitive, strmap_key(&dicts[i], v));
            }
            f[id] = (unsigned char)sens;
        }
    }
    *ny = m.count;
    strmap_free(&m);
    *flags = f;
    return rc;
}

/* The one Y attribute of T1 when it can be read with the table as its
 * sensitive column (it is neither the class nor an identifier); NULL when Y
 * has no attribute or several in T1 (then read_columns reads them). */
static const char *y1_single(const release_cols *cur, const seq_settings *cfg)
{
    const char *one = NULL;
    for (size_t i = 0; i < cfg->y_attrs.count; i++)
        if (col_of(cur, cfg->y_attrs.items[i]) != NONE) {
            if (one) return NULL;
            one = cfg->y_attrs.items[i];
        }
    if (!one || (cfg->class_name && !strcmp(one, cfg->class_name)) || in_list(&cfg->identifiers, one)) return NULL;
    return one;
}

/* Everything the releases of one run hold, freed in one place. */
struct seq_releases {
    seq_settings cfg;
    ak_error *err;
    size_t nrel;
    release_cols cur, *prev;
    hier_cache hc;
    incons *pairs;
    size_t npairs;
    seq_names qi;             /* T1 QIs: X1 then raw join attributes */
    seq_names j1;             /* T1 join attributes */
    uint32_t *j1_qi;
    const table *t;           /* T1, loaded by the caller */
    uint32_t *y1, *y1codes;   /* owned when Y of T1 is read apart from the table */
    const uint32_t *y1_codes; /* per row of T1: its Y tuple (s->y1 or the table's sensitive codes) */
    unsigned char *y1_flags;
    uint32_t ny1;
    strmap *y1dicts;
    uint32_t ny1cols;
    tds_release *rel;
    uint32_t **rcodes;        /* per release: the columns read */
    strmap **rdicts;
    uint32_t *rdict_count;
};

static void names_clear(seq_names *l)
{
    for (size_t i = 0; i < l->count; i++) free(l->items[i]);
    free(l->items);
    l->items = NULL;
    l->count = 0;
}

static int names_add(seq_names *l, const char *s)
{
    char **items = realloc(l->items, (l->count + 1) * sizeof *items);
    if (!items) return -1;
    l->items = items;
    if (!(l->items[l->count] = strdup(s))) return -1;
    l->count++;
    return 0;
}

static void run_free(seq_releases *s)
{
    cols_free(&s->cur);
    for (size_t i = 0; s->prev && i < s->nrel; i++) cols_free(&s->prev[i]);
    free(s->prev);
    incons_free(s->pairs, s->npairs);
    names_clear(&s->qi);
    names_clear(&s->j1);
    free(s->j1_qi);
    free(s->y1);
    free(s->y1codes);
    free(s->y1_flags);
    for (uint32_t i = 0; s->y1dicts && i < s->ny1cols; i++) strmap_free(&s->y1dicts[i]);
    free(s->y1dicts);
    for (size_t r = 0; s->rel && r < s->nrel; r++) {
        tds_release *x = &s->rel[r];
        free(x->jh);
        free(x->jnode);
        free(x->xcode);
        free(x->y);
        free(x->y_sensitive);
        free(x->common_j1);
        free(x->common_ji);
        free(x->pairs);
        /* (the per-release arrays may be missing: seq_open ran out of memory) */
        if (s->rcodes) free(s->rcodes[r]);
        if (!s->rdicts) continue;
        for (uint32_t i = 0; s->rdicts[r] && s->rdict_count && i < s->rdict_count[r]; i++)
            strmap_free(&s->rdicts[r][i]);
        free(s->rdicts[r]);
    }
    free(s->rel);
    free(s->rcodes);
    free(s->rdicts);
    free(s->rdict_count);
    cache_free(&s->hc);
}

/* Y tuples of T1 from the table's sensitive column (y1_single): the codes
 * are the values' codes in order of first appearance, as y_tuples numbers
 * tuples, and a tuple is sensitive as y_tuples says. */
static int y1_from_table(seq_releases *s, ak_error *err)
{
    const table *t = s->t;
    const seq_names *sensitive = &s->cfg.sensitive_values;
    s->ny1 = t->sensitive_dict.count;
    s->y1_flags = malloc(s->ny1 ? s->ny1 : 1);
    if (!s->y1_flags) return ak_err_nomem(err);
    for (uint32_t v = 0; v < s->ny1; v++)
        s->y1_flags[v] = (unsigned char)(sensitive->count == 0 || in_list(sensitive, strmap_key(&t->sensitive_dict, v)));
    s->y1_codes = t->sensitive_codes;
    return 0;
}

static int usage(ak_error *err, const char *msg, const char *name)
{
    return ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0, msg, name);
}

/* Resolves X, Y and the join attributes over the headers. */
static int resolve(seq_releases *s)
{
    const seq_settings *cfg = &s->cfg;
    for (size_t i = 0; i < cfg->x_attrs.count; i++) {
        const char *a = cfg->x_attrs.items[i];
        int found = col_of(&s->cur, a) != NONE;
        for (size_t r = 0; r < s->nrel; r++) found |= col_of(&s->prev[r], a) != NONE;
        if (!found) return usage(s->err, "--x names '%s', which is in no release", a);
        if (in_list(&cfg->y_attrs, a)) return usage(s->err, "'%s' is in both --x and --y; X and Y are disjoint", a);
    }
    int y_table = -2;
    for (size_t i = 0; i < cfg->y_attrs.count; i++) {
        const char *a = cfg->y_attrs.items[i];
        int where = col_of(&s->cur, a) != NONE ? -1 : -2, n = where == -1;
        for (size_t r = 0; r < s->nrel; r++)
            if (col_of(&s->prev[r], a) != NONE) where = (int)r, n++;
        if (n == 0) return usage(s->err, "--y names '%s', which is in no release", a);
        if (n > 1) return usage(s->err, "--y names '%s', which is in several releases; name a column of one", a);
        if (cfg->xy.kind == XY_LINKABILITY && y_table != -2 && y_table != where)
            return usage(s->err, "--linkability needs every --y attribute in one release ('%s' is in another; [Wang06] Lemma 4.2)", a);
        y_table = where;
    }
    /* star join: a categorical attribute shared by two earlier releases must be in T1 too */
    for (size_t r = 0; r < s->nrel; r++)
        for (uint32_t c = 0; c < s->prev[r].ncols; c++) {
            const char *a = s->prev[r].names[c];
            if (col_of(&s->cur, a) != NONE || !hier_path_of(cfg, a)) continue;
            for (size_t q = r + 1; q < s->nrel; q++)
                if (col_of(&s->prev[q], a) != NONE)
                    return usage(s->err, "'%s' joins two earlier releases but is not in the current one; only star joins "
                                      "with the current release are supported ([Wang06] §7)", a);
        }
    /* T1 join attributes: common with a release, or named by an inconsistent pair with one */
    for (uint32_t c = 0; c < s->cur.ncols; c++) {
        const char *a = s->cur.names[c];
        int join = 0;
        for (size_t r = 0; r < s->nrel; r++) join |= col_of(&s->prev[r], a) != NONE;
        for (size_t p = 0; p < s->npairs && !join; p++) {
            const char *other = !strcmp(s->pairs[p].attr_a, a) ? s->pairs[p].attr_b
                                : !strcmp(s->pairs[p].attr_b, a) ? s->pairs[p].attr_a : NULL;
            for (size_t r = 0; other && r < s->nrel; r++) join |= col_of(&s->prev[r], other) != NONE;
        }
        if (!join) continue;
        if (in_list(&cfg->y_attrs, a)) continue; /* reported above */
        if (!hier_path_of(cfg, a))
            return usage(s->err, "'%s' is in the current and an earlier release, so it joins them, and needs a "
                              "--hierarchy (continuous attributes are not matched, [Wang06] §3.3)", a);
        if (names_add(&s->j1, a) != 0) return ak_err_nomem(s->err);
    }
    for (size_t p = 0; p < s->npairs; p++) {
        const incons *c = &s->pairs[p];
        int used = 0;
        for (size_t r = 0; r < s->nrel; r++)
            used |= (col_of(&s->cur, c->attr_a) != NONE && col_of(&s->prev[r], c->attr_b) != NONE) ||
                    (col_of(&s->cur, c->attr_b) != NONE && col_of(&s->prev[r], c->attr_a) != NONE);
        if (!used)
            return ak_err_set(s->err, ANONKIT_E_INPUT, cfg->inconsistent, c->line, 0,
                              "the pair %s / %s links the current release with no earlier release", c->attr_a, c->attr_b);
    }
    int any = 0;
    for (size_t i = 0; i < cfg->x_attrs.count; i++) any |= col_of(&s->cur, cfg->x_attrs.items[i]) != NONE;
    if (!any) return usage(s->err, "--x names no attribute of the current release %s", s->cur.path);
    /* QIs of T1: X1 in the order of --x, then the raw join attributes */
    for (size_t i = 0; i < cfg->x_attrs.count; i++)
        if (col_of(&s->cur, cfg->x_attrs.items[i]) != NONE && !in_list(&s->qi, cfg->x_attrs.items[i]) &&
            names_add(&s->qi, cfg->x_attrs.items[i]) != 0)
            return ak_err_nomem(s->err);
    for (size_t i = 0; i < s->j1.count; i++)
        if (!in_list(&cfg->x_attrs, s->j1.items[i]) && names_add(&s->qi, s->j1.items[i]) != 0)
            return ak_err_nomem(s->err);
    return 0;
}

/* Encodes earlier release r: join nodes, X codes, Y tuples, the common
 * attributes and inconsistent pairs with T1. */
static int encode_release(seq_releases *s, size_t r, const char *path)
{
    const seq_settings *cfg = &s->cfg;
    ak_error *err = s->err;
    const release_cols *c = &s->prev[r];
    tds_release *rel = &s->rel[r];
    /* columns: join attributes, then X attributes that are not join ones, then Y */
    uint32_t *cols = malloc(((size_t)c->ncols + 1) * sizeof *cols);
    hier **hs = calloc((size_t)c->ncols + 1, sizeof *hs);
    uint32_t k = 0, nj = 0, nxo = 0, ny = 0;
    int rc = 0;
    if (!cols || !hs) {
        rc = ak_err_nomem(err);
        goto done;
    }
    for (uint32_t i = 0; i < c->ncols && rc == 0; i++) {
        const char *a = c->names[i];
        int join = col_of(&s->cur, a) != NONE && in_list(&s->j1, a);
        for (size_t p = 0; p < s->npairs && !join; p++)
            join = (!strcmp(s->pairs[p].attr_a, a) && col_of(&s->cur, s->pairs[p].attr_b) != NONE) ||
                   (!strcmp(s->pairs[p].attr_b, a) && col_of(&s->cur, s->pairs[p].attr_a) != NONE);
        if (!join) continue;
        cols[k] = i;
        rc = cache_get(&s->hc, cfg, a, &hs[k], err);
        k++;
        nj++;
    }
    for (uint32_t i = 0; i < c->ncols && rc == 0; i++)
        if (in_list(&cfg->x_attrs, c->names[i]) && !in_list(&s->j1, c->names[i])) {
            int seen = 0;
            for (uint32_t q = 0; q < nj; q++) seen |= cols[q] == i;
            if (!seen) cols[k++] = i, nxo++;
        }
    for (uint32_t i = 0; i < c->ncols && rc == 0; i++)
        if (in_list(&cfg->y_attrs, c->names[i])) cols[k++] = i, ny++;
    if (rc < 0) goto done;
    s->rdict_count[r] = k;
    if (!(s->rdicts[r] = calloc(k ? k : 1, sizeof **s->rdicts))) {
        rc = ak_err_nomem(err);
        goto done;
    }
    for (uint32_t i = 0; i < k; i++)
        if (strmap_init(&s->rdicts[r][i], 256) != 0) {
            rc = ak_err_nomem(err);
            goto done;
        }
    size_t n = 0;
    if ((rc = read_columns(path, path, cfg->delimiter, c->ncols, k, cols, hs, s->rdicts[r], s->cfg.threads, NULL, &s->rcodes[r],
                           &n, err)) < 0)
        goto done;
    const uint32_t *codes = s->rcodes[r];
    rel->nrows = n;
    rel->nj = nj;
    rel->jh = malloc((nj + 1) * sizeof *rel->jh);
    rel->jnode = malloc((n * nj + 1) * sizeof *rel->jnode);
    /* X of this release: the join attributes in X and the other X columns */
    uint32_t nx = nxo;
    for (uint32_t q = 0; q < nj; q++) nx += in_list(&cfg->x_attrs, c->names[cols[q]]);
    rel->nx = nx;
    rel->xcode = malloc((n * nx + 1) * sizeof *rel->xcode);
    rel->common_j1 = malloc((nj + 1) * sizeof *rel->common_j1);
    rel->common_ji = malloc((nj + 1) * sizeof *rel->common_ji);
    if (!rel->jh || !rel->jnode || !rel->xcode || !rel->common_j1 || !rel->common_ji) {
        rc = ak_err_nomem(err);
        goto done;
    }
    rel->join_in_x = 1;
    for (uint32_t q = 0; q < nj; q++) {
        const char *a = c->names[cols[q]];
        rel->jh[q] = hs[q];
        if (!in_list(&cfg->x_attrs, a)) rel->join_in_x = 0;
        for (uint32_t j = 0; j < s->j1.count; j++)
            if (!strcmp(s->j1.items[j], a)) {
                rel->common_j1[rel->ncommon] = j;
                rel->common_ji[rel->ncommon++] = q;
            }
    }
    unsigned char *jx = malloc(nj + 1); /* per join attribute: in X */
    if (!jx) {
        rc = ak_err_nomem(err);
        goto done;
    }
    for (uint32_t q = 0; q < nj; q++) jx[q] = (unsigned char)in_list(&cfg->x_attrs, c->names[cols[q]]);
    for (size_t row = 0; row < n; row++) {
        uint32_t x = 0;
        for (uint32_t q = 0; q < nj; q++) {
            rel->jnode[row * nj + q] = codes[row * k + q];
            if (jx[q]) rel->xcode[row * nx + x++] = codes[row * k + q];
        }
        for (uint32_t q = 0; q < nxo; q++) rel->xcode[row * nx + x++] = codes[row * k + nj + q];
    }
    free(jx);
    if (ny && (rc = y_tuples(codes, n, k, nj + nxo, ny, s->rdicts[r] + nj + nxo, &cfg->sensitive_values, &rel->y,
                             &rel->ny, &rel->y_sensitive, err)) < 0)
        goto done;
    /* inconsistent pairs between T1 and this release */
    for (size_t p = 0; p < s->npairs && rc == 0; p++) {
        for (int swap = 0; swap < 2 && rc == 0; swap++) {
            const incons *ic = &s->pairs[p];
            const char *a1 = swap ? ic->attr_b : ic->attr_a, *v1 = swap ? ic->value_b : ic->value_a;
            const char *ai = swap ? ic->attr_a : ic->attr_b, *vi = swap ? ic->value_a : ic->value_b;
            uint32_t j1 = NONE, ji = NONE;
            for (uint32_t j = 0; j < s->j1.count; j++)
                if (!strcmp(s->j1.items[j], a1)) j1 = j;
            for (uint32_t q = 0; q < nj; q++)
                if (!strcmp(c->names[cols[q]], ai)) ji = q;
            if (j1 == NONE || ji == NONE) continue;
            hier *h1;
            if ((rc = cache_get(&s->hc, cfg, a1, &h1, err)) < 0) break;
            const uint32_t na = hier_find_label(h1, v1, strlen(v1)), nb = hier_find_label(hs[ji], vi, strlen(vi));
            if (na == NONE || nb == NONE) {
                rc = ak_err_set(err, ANONKIT_E_INPUT, cfg->inconsistent, ic->line, 0, "'%s' is no value of '%s'",
                                na == NONE ? v1 : vi, na == NONE ? a1 : ai);
                break;
            }
            tds_pair *pp = realloc(rel->pairs, (rel->npairs + 1) * sizeof *pp);
            if (!pp) {
                rc = ak_err_nomem(err);
                break;
            }
            rel->pairs = pp;
            pp[rel->npairs++] = (tds_pair){j1, ji, hier_node_at(h1, na)->lo, hier_node_at(h1, na)->hi,
                                           hier_node_at(hs[ji], nb)->lo, hier_node_at(hs[ji], nb)->hi};
        }
    }
done:
    free(cols);
    free(hs);
    return rc;
}

int seq_open(seq_releases **out, const seq_settings *cfg, ak_error *err)
{
    seq_releases *s = calloc(1, sizeof *s);
    *out = s;
    if (!s) return ak_err_nomem(err);
    s->cfg = *cfg;
    s->err = err;
    s->nrel = cfg->previous.count;
    s->prev = calloc(s->nrel, sizeof *s->prev);
    s->rel = calloc(s->nrel, sizeof *s->rel);
    s->rcodes = calloc(s->nrel, sizeof *s->rcodes);
    s->rdicts = calloc(s->nrel, sizeof *s->rdicts);
    s->rdict_count = calloc(s->nrel, sizeof *s->rdict_count);
    if (!s->prev || !s->rel || !s->rcodes || !s->rdicts || !s->rdict_count) return ak_err_nomem(err);
    AK_CHECK(read_header(&s->cur, cfg->input, cfg->display, cfg->delimiter, err));
    for (size_t r = 0; r < s->nrel; r++)
        AK_CHECK(read_header(&s->prev[r], cfg->previous.items[r], cfg->previous.items[r], cfg->delimiter, err));
    if (cfg->inconsistent) AK_CHECK(read_inconsistent(cfg->inconsistent, cfg->delimiter, &s->pairs, &s->npairs, err));
    return resolve(s);
}

const seq_names *seq_t1_qi(const seq_releases *s) { return &s->qi; }

const char *seq_t1_sensitive(const seq_releases *s) { return y1_single(&s->cur, &s->cfg); }

/* Y of T1 when it is not the table's sensitive column: its columns read
 * apart (none when Y has no attribute of T1). */
static int y1_read(seq_releases *s, ak_error *err)
{
    const seq_settings *cfg = &s->cfg;
    uint32_t cols[64], k = 0;
    hier *none[64] = {0};
    for (size_t i = 0; i < cfg->y_attrs.count && k < 64; i++) {
        uint32_t c = col_of(&s->cur, cfg->y_attrs.items[i]);
        if (c != NONE) cols[k++] = c;
    }
    if (!k) return 0;
    size_t n = 0;
    s->ny1cols = k;
    if (!(s->y1dicts = calloc(k, sizeof *s->y1dicts))) return ak_err_nomem(err);
    for (uint32_t i = 0; i < k; i++)
        if (strmap_init(&s->y1dicts[i], 1024) != 0) return ak_err_nomem(err);
    AK_CHECK(read_columns(cfg->input, cfg->display, cfg->delimiter, s->cur.ncols, k, cols, none, s->y1dicts, s->cfg.threads,
                          &s->t->digest, &s->y1codes, &n, err));
    if (n != s->t->nrows) return digest_changed(err, cfg->display);
    AK_CHECK(y_tuples(s->y1codes, n, k, 0, k, s->y1dicts, &cfg->sensitive_values, &s->y1, &s->ny1, &s->y1_flags, err));
    s->y1_codes = s->y1;
    return 0;
}

int seq_encode(seq_releases *s, const table *t, tds_input *in, ak_error *err)
{
    const seq_settings *cfg = &s->cfg;
    s->t = t;
    s->err = err;
    uint32_t nx1 = 0;
    for (size_t i = 0; i < s->qi.count; i++) nx1 += in_list(&cfg->x_attrs, s->qi.items[i]);
    s->j1_qi = malloc((s->j1.count + 1) * sizeof *s->j1_qi);
    if (!s->j1_qi) return ak_err_nomem(err);
    for (size_t j = 0; j < s->j1.count; j++)
        for (uint32_t q = 0; q < t->nqi; q++)
            if (!strcmp(t->qi[q].name, s->j1.items[j])) s->j1_qi[j] = q;
    /* Y of T1 */
    if (seq_t1_sensitive(s)) AK_CHECK(y1_from_table(s, err));
    else AK_CHECK(y1_read(s, err));
    for (size_t r = 0; r < s->nrel; r++) AK_CHECK(encode_release(s, r, cfg->previous.items[r]));
    *in = (tds_input){.t = t, .nx1 = nx1, .nj1 = (uint32_t)s->j1.count, .j1_qi = s->j1_qi, .y1 = s->y1_codes,
                      .ny1 = s->ny1, .y1_sensitive = s->y1_flags, .nreleases = s->nrel, .releases = s->rel,
                      .model = cfg->xy, .distortion = cfg->distortion};
    return 0;
}

void seq_free(seq_releases *s)
{
    if (!s) return;
    run_free(s);
    free(s);
}
