/* sequential.c — anonkit_sequential: the sequential release of 004 end to end.
 * Reads the headers of the current release T1 and the earlier releases,
 * resolves X, Y and the join attributes (common categorical attributes, and
 * the attributes named by the inconsistency file, §3.3; star join, §7),
 * encodes T1 through table_load and every earlier release here (their values
 * may be generalized: any node of the hierarchy), runs TDS4SA
 * (src/algo/sequential) and publishes T1 through the common writer, with the
 * final cut and the achieved A_Y(X) or L_Y(X) in the report. */
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "algo/sequential/tds.h"
#include "api/job.h"
#include "common/clock.h"
#include "common/hash.h"
#include "common/hugemem.h"
#include "common/parallel.h"
#include "core/partition.h"
#include "core/recode.h"
#include "common/rng.h"
#include "core/table.h"
#include "io/csv.h"
#include "io/outfile.h"
#include "publish/publish.h"
#include "io/spool.h"
#include "metrics/metrics.h"

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

static int in_list(const strlist *l, const char *name)
{
    for (size_t i = 0; i < l->count; i++)
        if (!strcmp(l->items[i], name)) return 1;
    return 0;
}

static const char *hier_path_of(const anonkit_job *job, const char *name)
{
    for (size_t i = job->hierarchy_attrs.count; i-- > 0;)
        if (!strcmp(job->hierarchy_attrs.items[i], name)) return job->hierarchy_paths.items[i];
    return NULL;
}

/* Hierarchies loaded by attribute name, shared by the earlier releases. */
typedef struct hier_cache {
    size_t count;
    char **names;
    hier **h;
} hier_cache;

static int cache_get(hier_cache *hc, const anonkit_job *job, const char *name, hier **out, ak_error *err)
{
    for (size_t i = 0; i < hc->count; i++)
        if (!strcmp(hc->names[i], name)) return *out = hc->h[i], 0;
    const char *path = hier_path_of(job, name);
    if (!path)
        return ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0,
                          "join attribute '%s' needs a --hierarchy (continuous attributes are not matched, 004 §3.3)", name);
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
                                       "value '%.*s' is in no node of the hierarchy %s", (int)f->len, f->data,
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
    struct stat st;
    if (stat(proto->path, &st) != 0 || (uint64_t)st.st_size < READ_PARALLEL_MIN_BYTES) return 0;
    csv_reader *r = NULL;
    csv_record rec;
    uint64_t data_start = 0;
    ak_error ignored;
    if (csv_reader_open(&r, proto->path, proto->delim, &ignored) == 0 && csv_read(r, &rec, &ignored) == 1)
        data_start = csv_reader_offset(r);
    csv_reader_free(r);
    const uint64_t split = data_start ? csv_find_split(proto->path, data_start, (uint64_t)st.st_size) : 0;
    if (!split || split >= (uint64_t)st.st_size) return 0;
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
    pthread_t helper;
    const int started = rc == 0 && ak_thread_create(&helper, read_piece, &pieces[1]) == 0;
    if (started) {
        read_piece(&pieces[0]);
        pthread_join(helper, NULL);
    }
    const size_t n0 = pieces[0].n, n1 = pieces[1].n;
    if (started && pieces[0].rc == 0 && pieces[1].rc == 0 && !pieces[0].quoted && !pieces[1].quoted &&
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
    return rc;
}

/* Reads columns cols[0..k) of a release: hierarchy nodes where hs[i] is set,
 * otherwise text ids in dicts[i] (empty on entry; ids in order of first
 * appearance). codes is row-major, nrows * k. With threads > 1 a large file
 * is read in two pieces at once. */
static int read_columns(const char *path, const char *display, char delim, uint32_t ncols, uint32_t k,
                        const uint32_t *cols, hier *const *hs, strmap *dicts, unsigned threads, uint32_t **codes,
                        size_t *nrows, ak_error *err)
{
    *codes = NULL;
    col_piece whole = {.path = path, .display = display, .delim = delim, .ncols = ncols, .k = k, .cols = cols,
                       .hs = hs, .dicts = dicts, .whole = 1};
    if (threads > 1) {
        int split = read_columns_split(&whole, codes, nrows, err);
        if (split != 0) return split < 0 ? split : 0;
    }
    read_piece(&whole);
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
                    const strlist *sensitive, uint32_t **y, uint32_t *ny, unsigned char **flags, ak_error *err)
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
static const char *y1_single(const release_cols *cur, const anonkit_job *job)
{
    const char *one = NULL;
    for (size_t i = 0; i < job->y_attrs.count; i++)
        if (col_of(cur, job->y_attrs.items[i]) != NONE) {
            if (one) return NULL;
            one = job->y_attrs.items[i];
        }
    if (!one || (job->class_name && !strcmp(one, job->class_name)) || in_list(&job->identifiers, one)) return NULL;
    return one;
}

/* Everything one run holds, freed in one place. */
typedef struct seq_run {
    anonkit_job *job;
    unsigned threads;         /* for reading and writing */
    size_t nrel;
    release_cols cur, *prev;
    hier_cache hc;
    incons *pairs;
    size_t npairs;
    strlist qi;               /* T1 QIs: X1 then raw join attributes */
    strlist j1;               /* T1 join attributes */
    uint32_t *j1_qi;
    table *t;
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
} seq_run;

static void strlist_clear(strlist *l)
{
    for (size_t i = 0; i < l->count; i++) free(l->items[i]);
    free(l->items);
    l->items = NULL;
    l->count = 0;
}

static int strlist_add(strlist *l, const char *s)
{
    char **items = realloc(l->items, (l->count + 1) * sizeof *items);
    if (!items) return -1;
    l->items = items;
    if (!(l->items[l->count] = strdup(s))) return -1;
    l->count++;
    return 0;
}

static void run_free(seq_run *s)
{
    cols_free(&s->cur);
    for (size_t i = 0; s->prev && i < s->nrel; i++) cols_free(&s->prev[i]);
    free(s->prev);
    incons_free(s->pairs, s->npairs);
    strlist_clear(&s->qi);
    strlist_clear(&s->j1);
    free(s->j1_qi);
    table_free(s->t);
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
        free(s->rcodes[r]);
        for (uint32_t i = 0; s->rdicts[r] && i < s->rdict_count[r]; i++) strmap_free(&s->rdicts[r][i]);
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
static int y1_from_table(seq_run *s, ak_error *err)
{
    const table *t = s->t;
    const strlist *sensitive = &s->job->sensitive_values;
    s->ny1 = t->sensitive_dict.count;
    s->y1_flags = malloc(s->ny1 ? s->ny1 : 1);
    if (!s->y1_flags) return ak_err_nomem(err);
    for (uint32_t v = 0; v < s->ny1; v++)
        s->y1_flags[v] = (unsigned char)(sensitive->count == 0 || in_list(sensitive, strmap_key(&t->sensitive_dict, v)));
    s->y1_codes = t->sensitive_codes;
    return 0;
}

static int usage(anonkit_job *job, const char *msg, const char *name)
{
    return ak_err_set(&job->err, ANONKIT_E_USAGE, NULL, 0, 0, msg, name);
}

/* Resolves X, Y and the join attributes over the headers. */
static int resolve(seq_run *s)
{
    anonkit_job *job = s->job;
    for (size_t i = 0; i < job->x_attrs.count; i++) {
        const char *a = job->x_attrs.items[i];
        int found = col_of(&s->cur, a) != NONE;
        for (size_t r = 0; r < s->nrel; r++) found |= col_of(&s->prev[r], a) != NONE;
        if (!found) return usage(job, "--x names '%s', which is in no release", a);
        if (in_list(&job->y_attrs, a)) return usage(job, "'%s' is in both --x and --y; X and Y are disjoint", a);
    }
    int y_table = -2;
    for (size_t i = 0; i < job->y_attrs.count; i++) {
        const char *a = job->y_attrs.items[i];
        int where = col_of(&s->cur, a) != NONE ? -1 : -2, n = where == -1;
        for (size_t r = 0; r < s->nrel; r++)
            if (col_of(&s->prev[r], a) != NONE) where = (int)r, n++;
        if (n == 0) return usage(job, "--y names '%s', which is in no release", a);
        if (n > 1) return usage(job, "--y names '%s', which is in several releases; name a column of one", a);
        if (job->xy.kind == XY_LINKABILITY && y_table != -2 && y_table != where)
            return usage(job, "--linkability needs every --y attribute in one release ('%s' is in another; 004 Lemma 4.2)", a);
        y_table = where;
    }
    /* star join: a categorical attribute shared by two earlier releases must be in T1 too */
    for (size_t r = 0; r < s->nrel; r++)
        for (uint32_t c = 0; c < s->prev[r].ncols; c++) {
            const char *a = s->prev[r].names[c];
            if (col_of(&s->cur, a) != NONE || !hier_path_of(job, a)) continue;
            for (size_t q = r + 1; q < s->nrel; q++)
                if (col_of(&s->prev[q], a) != NONE)
                    return usage(job, "'%s' joins two earlier releases but is not in the current one; only star joins "
                                      "with the current release are supported (004 §7)", a);
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
        if (in_list(&job->y_attrs, a)) continue; /* reported above */
        if (!hier_path_of(job, a))
            return usage(job, "'%s' is in the current and an earlier release, so it joins them, and needs a "
                              "--hierarchy (continuous attributes are not matched, 004 §3.3)", a);
        if (strlist_add(&s->j1, a) != 0) return ak_err_nomem(&job->err);
    }
    for (size_t p = 0; p < s->npairs; p++) {
        const incons *c = &s->pairs[p];
        int used = 0;
        for (size_t r = 0; r < s->nrel; r++)
            used |= (col_of(&s->cur, c->attr_a) != NONE && col_of(&s->prev[r], c->attr_b) != NONE) ||
                    (col_of(&s->cur, c->attr_b) != NONE && col_of(&s->prev[r], c->attr_a) != NONE);
        if (!used)
            return ak_err_set(&job->err, ANONKIT_E_INPUT, job->inconsistent, c->line, 0,
                              "the pair %s / %s links the current release with no earlier release", c->attr_a, c->attr_b);
    }
    int any = 0;
    for (size_t i = 0; i < job->x_attrs.count; i++) any |= col_of(&s->cur, job->x_attrs.items[i]) != NONE;
    if (!any) return usage(job, "--x names no attribute of the current release %s", s->cur.path);
    /* QIs of T1: X1 in the order of --x, then the raw join attributes */
    for (size_t i = 0; i < job->x_attrs.count; i++)
        if (col_of(&s->cur, job->x_attrs.items[i]) != NONE && !in_list(&s->qi, job->x_attrs.items[i]) &&
            strlist_add(&s->qi, job->x_attrs.items[i]) != 0)
            return ak_err_nomem(&job->err);
    for (size_t i = 0; i < s->j1.count; i++)
        if (!in_list(&job->x_attrs, s->j1.items[i]) && strlist_add(&s->qi, s->j1.items[i]) != 0)
            return ak_err_nomem(&job->err);
    return 0;
}

/* Encodes earlier release r: join nodes, X codes, Y tuples, the common
 * attributes and inconsistent pairs with T1. */
static int encode_release(seq_run *s, size_t r, const char *path)
{
    anonkit_job *job = s->job;
    ak_error *err = &job->err;
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
        rc = cache_get(&s->hc, job, a, &hs[k], err);
        k++;
        nj++;
    }
    for (uint32_t i = 0; i < c->ncols && rc == 0; i++)
        if (in_list(&job->x_attrs, c->names[i]) && !in_list(&s->j1, c->names[i])) {
            int seen = 0;
            for (uint32_t q = 0; q < nj; q++) seen |= cols[q] == i;
            if (!seen) cols[k++] = i, nxo++;
        }
    for (uint32_t i = 0; i < c->ncols && rc == 0; i++)
        if (in_list(&job->y_attrs, c->names[i])) cols[k++] = i, ny++;
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
    if ((rc = read_columns(path, path, job->delimiter, c->ncols, k, cols, hs, s->rdicts[r], s->threads, &s->rcodes[r],
                           &n, err)) < 0)
        goto done;
    const uint32_t *codes = s->rcodes[r];
    rel->nrows = n;
    rel->nj = nj;
    rel->jh = malloc((nj + 1) * sizeof *rel->jh);
    rel->jnode = malloc((n * nj + 1) * sizeof *rel->jnode);
    /* X of this release: the join attributes in X and the other X columns */
    uint32_t nx = nxo;
    for (uint32_t q = 0; q < nj; q++) nx += in_list(&job->x_attrs, c->names[cols[q]]);
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
        if (!in_list(&job->x_attrs, a)) rel->join_in_x = 0;
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
    for (uint32_t q = 0; q < nj; q++) jx[q] = (unsigned char)in_list(&job->x_attrs, c->names[cols[q]]);
    for (size_t row = 0; row < n; row++) {
        uint32_t x = 0;
        for (uint32_t q = 0; q < nj; q++) {
            rel->jnode[row * nj + q] = codes[row * k + q];
            if (jx[q]) rel->xcode[row * nx + x++] = codes[row * k + q];
        }
        for (uint32_t q = 0; q < nxo; q++) rel->xcode[row * nx + x++] = codes[row * k + nj + q];
    }
    free(jx);
    if (ny && (rc = y_tuples(codes, n, k, nj + nxo, ny, s->rdicts[r] + nj + nxo, &job->sensitive_values, &rel->y,
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
            if ((rc = cache_get(&s->hc, job, a1, &h1, err)) < 0) break;
            const uint32_t na = hier_find_label(h1, v1, strlen(v1)), nb = hier_find_label(hs[ji], vi, strlen(vi));
            if (na == NONE || nb == NONE) {
                rc = ak_err_set(err, ANONKIT_E_INPUT, job->inconsistent, ic->line, 0, "'%s' is no value of '%s'",
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

/* The report (JSON) and the summary of a finished run. */
static int describe(seq_run *s, const tds_result *res, const publish_stats *ps, const partition *part, double secs,
                    char **summary, char **json)
{
    anonkit_job *job = s->job;
    const table *t = s->t;
    json_t *root = json_object(), *params = json_object(), *cut = json_object();
    json_object_set_new(params, "input", json_string(job->input));
    json_t *prev = json_array();
    for (size_t i = 0; i < job->previous.count; i++) json_array_append_new(prev, json_string(job->previous.items[i]));
    json_object_set_new(params, "previous", prev);
    json_t *xs = json_array(), *ys = json_array();
    for (size_t i = 0; i < job->x_attrs.count; i++) json_array_append_new(xs, json_string(job->x_attrs.items[i]));
    for (size_t i = 0; i < job->y_attrs.count; i++) json_array_append_new(ys, json_string(job->y_attrs.items[i]));
    json_object_set_new(params, "x", xs);
    json_object_set_new(params, "y", ys);
    if (job->xy.kind == XY_ANONYMITY) json_object_set_new(params, "anonymity", json_integer((json_int_t)job->xy.k));
    else json_object_set_new(params, "linkability", json_real(job->xy.p));
    json_object_set_new(params, "score", json_string(job->score_distortion ? "distortion" : "entropy"));
    char seed[32];
    snprintf(seed, sizeof seed, "%llu", (unsigned long long)job->seed);
    json_object_set_new(params, "seed", json_string(seed));
    json_object_set_new(root, "anonkit_version", json_string(ANONKIT_VERSION));
    json_object_set_new(root, "parameters", params);
    json_object_set_new(root, "rows_read", json_integer((json_int_t)t->nrows));
    json_object_set_new(root, "rows_published", json_integer((json_int_t)ps->published));
    json_object_set_new(root, "rows_suppressed", json_integer((json_int_t)ps->suppressed));
    json_object_set_new(root, "partitions", json_integer((json_int_t)part->nclasses));
    char buf[1024];
    for (size_t i = 0; i < res->ncut; i++) {
        const tds_cut_value *v = &res->cut[i];
        const char *name = t->qi[v->attr].name;
        json_t *a = json_object_get(cut, name);
        if (!a) json_object_set_new(cut, name, a = json_array());
        if (v->node != NONE) snprintf(buf, sizeof buf, "%s", hier_node_at(t->qi[v->attr].h, v->node)->label);
        else recode_value(t, v->attr, v->lo, v->hi, buf, sizeof buf);
        json_array_append_new(a, json_string(buf));
    }
    json_object_set_new(root, "cut", cut);
    const int anon = job->xy.kind == XY_ANONYMITY;
    if (res->empty_join) json_object_set_new(root, anon ? "A_Y(X)" : "L_Y(X)", json_null());
    else if (anon) json_object_set_new(root, "A_Y(X)", json_integer((json_int_t)(-res->risk)));
    else json_object_set_new(root, "L_Y(X)", json_real(res->risk));
    json_object_set_new(root, "special_case", json_string(res->special_case));
    json_object_set_new(root, "specializations", json_integer((json_int_t)res->specializations));
    json_object_set_new(root, "distortion_categorical", json_real(res->distortion_cat));
    json_object_set_new(root, "distortion_continuous", json_real(res->distortion_cont));
    double entropy = 0;
    if (t->class_column >= 0) {
        AK_CHECK(metrics_partition_entropy(t, part, &entropy, &job->err));
        json_object_set_new(root, "conditional_entropy", json_real(entropy));
    }
    json_object_set_new(root, "seconds", json_real(secs));
    *json = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
    json_decref(root);
    *summary = malloc(1024);
    if (!*json || !*summary) return ak_err_nomem(&job->err);
    char achieved[96];
    if (res->empty_join) snprintf(achieved, sizeof achieved, "no x occurs in the join");
    else if (anon) snprintf(achieved, sizeof achieved, "A_Y(X) = %.0f (k = %llu)", -res->risk, (unsigned long long)job->xy.k);
    else snprintf(achieved, sizeof achieved, "L_Y(X) = %.6g (p = %g)", res->risk, job->xy.p);
    snprintf(*summary, 1024,
             "read %zu rows from %s and %zu earlier release(s)\n"
             "published %llu rows, suppressed %llu (published + suppressed = read)\n"
             "%llu specializations, %zu partitions; %s\n"
             "distortion per record: categorical %.4f, continuous %.4f%s\n"
             "time %.3f s\n",
             t->nrows, t->display_name, s->nrel, (unsigned long long)ps->published, (unsigned long long)ps->suppressed,
             (unsigned long long)res->specializations, part->nclasses, achieved, res->distortion_cat,
             res->distortion_cont, t->class_column >= 0 ? "" : "", secs);
    return 0;
}

int anonkit_sequential(anonkit_job *job, char **out_summary, char **out_json)
{
    if (out_summary) *out_summary = NULL;
    if (out_json) *out_json = NULL;
    ak_err_clear(&job->err);
    const double start = ak_seconds();
    ak_error *err = &job->err;
    if (!job->input) return usage(job, "no current release given%s", ""), job_fail(job);
    if (!job->output) return usage(job, "no output file given (-o FILE, or - for stdout)%s", ""), job_fail(job);
    if (!job->previous.count) return usage(job, "no earlier release given (--previous FILE)%s", ""), job_fail(job);
    if (!job->x_attrs.count || !job->y_attrs.count) return usage(job, "--x and --y are both needed%s", ""), job_fail(job);
    if (job->xy.kind == XY_NONE) return usage(job, "give --anonymity K or --linkability P%s", ""), job_fail(job);
    if (job->sensitive_values.count && job->xy.kind != XY_LINKABILITY)
        return usage(job, "--sensitive-values applies to --linkability only%s", ""), job_fail(job);
    if (!job->score_distortion && !job->class_name)
        return usage(job, "the entropy score needs a class column (--class), or use --score distortion%s", ""), job_fail(job);
    if (!job->seed_set) job->seed = ak_fresh_seed();

    seq_run s;
    memset(&s, 0, sizeof s);
    s.job = job;
    s.nrel = job->previous.count;
    spool sp;
    memset(&sp, 0, sizeof sp);
    outfile of, rf;
    memset(&of, 0, sizeof of);
    memset(&rf, 0, sizeof rf);
    partition part;
    memset(&part, 0, sizeof part);
    tds_result res;
    memset(&res, 0, sizeof res);
    job_spec_storage storage = {0};
    publish_copied *copied = NULL;
    char *summary = NULL, *json = NULL;
    int rc;
    const int from_stdin = !strcmp(job->input, "-");
    const char *in_path = job->input;
    if ((rc = outfile_open(&of, job->output, err)) < 0) goto done;
    if (job->report && (rc = outfile_open(&rf, job->report, err)) < 0) goto done;
    if (from_stdin) {
        if ((rc = spool_stream(&sp, stdin, err)) < 0) goto done;
        in_path = sp.path;
    }
    const char *display = from_stdin ? "stdin" : job->input;
    s.prev = calloc(s.nrel, sizeof *s.prev);
    s.rel = calloc(s.nrel, sizeof *s.rel);
    s.rcodes = calloc(s.nrel, sizeof *s.rcodes);
    s.rdicts = calloc(s.nrel, sizeof *s.rdicts);
    s.rdict_count = calloc(s.nrel, sizeof *s.rdict_count);
    if (!s.prev || !s.rel || !s.rcodes || !s.rdicts || !s.rdict_count) {
        rc = ak_err_nomem(err);
        goto done;
    }
    if ((rc = read_header(&s.cur, in_path, display, job->delimiter, err)) < 0) goto done;
    for (size_t r = 0; r < s.nrel; r++)
        if ((rc = read_header(&s.prev[r], job->previous.items[r], job->previous.items[r], job->delimiter, err)) < 0)
            goto done;
    if (job->inconsistent && (rc = read_inconsistent(job->inconsistent, job->delimiter, &s.pairs, &s.npairs, err)) < 0)
        goto done;
    if ((rc = resolve(&s)) < 0) goto done;
    /* reading and writing take up to two threads (the same result for any number) */
    unsigned threads = job->threads;
    if (!threads) {
        const long cores = sysconf(_SC_NPROCESSORS_ONLN);
        threads = cores > 0 ? (unsigned)cores : 1;
    }
    s.threads = threads;
    const int spec_y1 = y1_single(&s.cur, job) != NULL;
    /* T1 through the common reader: QIs are X1, then the raw join attributes */
    {
        /* the job's hierarchies of T1's QIs only (the others belong to earlier releases) */
        strlist saved = job->qi, saved_ha = job->hierarchy_attrs, saved_hp = job->hierarchy_paths;
        strlist ha = {calloc(saved_ha.count + 1, sizeof(char *)), 0}, hp = {calloc(saved_ha.count + 1, sizeof(char *)), 0};
        table_spec spec;
        if (!ha.items || !hp.items) rc = ak_err_nomem(err);
        for (size_t i = 0; rc == 0 && i < saved_ha.count; i++)
            if (in_list(&s.qi, saved_ha.items[i])) {
                ha.items[ha.count++] = saved_ha.items[i];
                hp.items[hp.count++] = saved_hp.items[i];
            }
        job->qi = s.qi;
        job->hierarchy_attrs = ha;
        job->hierarchy_paths = hp;
        if (rc == 0) rc = job_table_spec(job, in_path, display, &spec, &storage);
        job->qi = saved;
        job->hierarchy_attrs = saved_ha;
        job->hierarchy_paths = saved_hp;
        free(ha.items);
        free(hp.items);
        if (rc == 0) {
            spec.sensitive_name = y1_single(&s.cur, job); /* Y of T1 read in the same pass */
            spec.sensitive_numeric = 0;
            spec.threads = threads;
            rc = table_load(&s.t, &spec, err);
        }
        if (rc < 0) goto done;
    }
    uint32_t nx1 = 0;
    for (size_t i = 0; i < s.qi.count; i++) nx1 += in_list(&job->x_attrs, s.qi.items[i]);
    s.j1_qi = malloc((s.j1.count + 1) * sizeof *s.j1_qi);
    if (!s.j1_qi) {
        rc = ak_err_nomem(err);
        goto done;
    }
    for (size_t j = 0; j < s.j1.count; j++)
        for (uint32_t q = 0; q < s.t->nqi; q++)
            if (!strcmp(s.t->qi[q].name, s.j1.items[j])) s.j1_qi[j] = q;
    /* Y of T1 */
    if (spec_y1) {
        if ((rc = y1_from_table(&s, err)) < 0) goto done;
    } else {
        uint32_t cols[64], k = 0;
        hier *none[64] = {0};
        for (size_t i = 0; i < job->y_attrs.count && k < 64; i++) {
            uint32_t c = col_of(&s.cur, job->y_attrs.items[i]);
            if (c != NONE) cols[k++] = c;
        }
        if (k) {
            size_t n = 0;
            s.ny1cols = k;
            if (!(s.y1dicts = calloc(k, sizeof *s.y1dicts))) {
                rc = ak_err_nomem(err);
                goto done;
            }
            for (uint32_t i = 0; i < k; i++)
                if (strmap_init(&s.y1dicts[i], 1024) != 0) {
                    rc = ak_err_nomem(err);
                    goto done;
                }
            if ((rc = read_columns(in_path, display, job->delimiter, s.cur.ncols, k, cols, none, s.y1dicts, threads,
                                   &s.y1codes, &n, err)) < 0)
                goto done;
            if (n != s.t->nrows) {
                rc = ak_err_set(err, ANONKIT_E_INTERNAL, display, 0, 0, "row count changed between two reads");
                goto done;
            }
            if ((rc = y_tuples(s.y1codes, n, k, 0, k, s.y1dicts, &job->sensitive_values, &s.y1, &s.ny1, &s.y1_flags,
                               err)) < 0)
                goto done;
            s.y1_codes = s.y1;
        }
    }
    for (size_t r = 0; r < s.nrel; r++)
        if ((rc = encode_release(&s, r, job->previous.items[r])) < 0) goto done;
    tds_input in = {.t = s.t, .nx1 = nx1, .nj1 = (uint32_t)s.j1.count, .j1_qi = s.j1_qi, .y1 = s.y1_codes, .ny1 = s.ny1,
                    .y1_sensitive = s.y1_flags, .nreleases = s.nrel, .releases = s.rel, .model = job->xy,
                    .distortion = job->score_distortion};
    if ((rc = partition_init(&part, s.t->nrows, s.t->nqi, err)) < 0) goto done;
    /* the columns the writer copies through are read while TDS runs (on one core) */
    if (!job->keep_order && threads > 1 && (rc = publish_copied_start(&copied, s.t, err)) < 0) goto done;
    if ((rc = tds_run(&in, &part, &res, err)) < 0) goto done;
    publish_opts po = {.keep_order = job->keep_order, .seed = job->seed, .threads = threads, .style = RECODE_GENERALIZE,
                       .copied = copied};
    publish_stats ps;
    if ((rc = publish_write(s.t, &part, &po, of.stream, job->output, &ps, err)) < 0) goto done;
    if ((rc = describe(&s, &res, &ps, &part, ak_seconds() - start, &summary, &json)) < 0) goto done;
    if (job->report && fprintf(rf.stream, "%s\n", json) < 0) {
        rc = ak_err_set(err, ANONKIT_E_IO, job->report, 0, 0, "cannot write the report");
        goto done;
    }
    if ((rc = outfile_commit(&of, err)) < 0) goto done;
    if (job->report && (rc = outfile_commit(&rf, err)) < 0) goto done;
    rc = ANONKIT_OK;
done:
    if (rc < 0) {
        outfile_abort(&of);
        outfile_abort(&rf);
    }
    publish_copied_free(copied);
    spool_remove(&sp);
    job_spec_free(&storage);
    partition_free(&part);
    tds_result_free(&res);
    run_free(&s);
    if (rc < 0) {
        free(summary);
        free(json);
        return job_fail(job);
    }
    if (out_summary) *out_summary = summary;
    else free(summary);
    if (out_json) *out_json = json;
    else free(json);
    return ANONKIT_OK;
}
