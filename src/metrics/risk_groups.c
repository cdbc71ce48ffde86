/* risk_groups.c — one pass over a CSV file grouping its rows into the
 * classes of `anonkit risk` (risk_groups.h), and the class sizes of a
 * population table (journalist risk, [Dankar12] §3).
 *
 * Hand-written for speed (docs/risk.md §9): a table keyed by the QI texts is
 * a random memory access per row once the classes outgrow the caches.
 * Instead every row's key (its QI texts joined by the delimiter, or each
 * prefixed by its length) is hashed once with XXH3's 128-bit hash, and the
 * hash (with its row when the classes are to be ordered or weighted) goes
 * into one of up to 64 buckets by bits of the hash; each bucket is then
 * grouped on its own (risk_groups_group.c). Two rows are one class when their
 * 128-bit hashes are equal: for n distinct keys the chance that any two of
 * them share a hash is below n^2 / 2^129 (about 1.5e-25 for 10^7 keys), the
 * bound docs/risk.md states. The classes are then put in the order of their
 * first rows, the order in which the measures add them up. A large file is
 * read in two pieces on two threads (as the table loader does,
 * src/core/table_pieces.c); any surprise there (a quoted field, a bad row)
 * sends it back to the sequential read, which also gives the exact error. */
#include "metrics/risk_groups.h"
#include "metrics/risk_groups_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/numparse.h"
#include "common/parallel.h"
#include "io/csv.h"
#include "model/model.h"

void risk_groups_free(risk_groups *g)
{
    free(g->class_size);
    free(g->class_population);
    free(g->class_weight);
    free(g->codes);
    memset(g, 0, sizeof *g);
}

static void part_free(rg_part *pt)
{
    while (pt->slabs) {
        rg_slab *next = pt->slabs->next;
        free(pt->slabs);
        pt->slabs = next;
    }
    free(pt->head);
    free(pt->tail);
    free(pt->fill);
    free(pt->total);
    free(pt->front);
    free(pt->weights);
    free(pt->fl);
    free(pt->fl_start);
    pt->fl = NULL;
    pt->fl_start = NULL;
    pt->head = pt->tail = NULL;
    pt->fill = NULL;
    pt->total = NULL;
    pt->front = NULL;
    pt->weights = NULL;
}


/* An empty piece reading the columns cols of p's file. */
static void part_init(rg_part *pt, const risk_group_params *p, const uint32_t *cols, const uint32_t *hcols,
                      uint32_t ncolumns, int weight_col)
{
    memset(pt, 0, sizeof *pt);
    pt->p = p;
    pt->cols = cols;
    pt->hcols = hcols;
    pt->ncolumns = ncolumns;
    pt->weight_col = weight_col;
    pt->consecutive = !p->mem && rg_consecutive_columns(hcols, p->nqi); /* a table's fields do not lie in one buffer */
    /* no order and no weights: an entry needs no row, and a count other than
     * 1 only for the front table's classes, which are kept apart (pt->fl) */
    pt->stride = p->any_order && !p->weight && !p->population_path ? 2 : 3;
    pt->block_entries = RG_WORDS / pt->stride;
    ak_err_clear(&pt->err);
}

/* A fresh block at the end of bucket b's list, or NULL (no memory). */
static rg_block *new_block(rg_part *pt, uint32_t b)
{
    if (!pt->slabs || pt->slab_used == RG_SLAB) {
        rg_slab *s = malloc(sizeof *s);
        if (!s) return NULL;
        s->next = pt->slabs;
        pt->slabs = s;
        pt->slab_used = 0;
    }
    rg_block *k = &pt->slabs->blocks[pt->slab_used++];
    k->next = NULL;
    k->count = 0;
    if (pt->tail[b]) {
        pt->tail[b]->count = pt->fill[b];
        pt->total[b] += pt->fill[b];
        pt->tail[b]->next = k;
    } else {
        pt->head[b] = k;
    }
    pt->tail[b] = k;
    pt->fill[b] = 0;
    return k;
}

/* Appends an entry to bucket b: the hash, and in the wide form its row and
 * the rows it stands for. The fill of the open block is kept apart from the
 * block (pt->fill), so that an append touches one line of it. */
static inline int append(rg_part *pt, uint32_t b, rg_entry e)
{
    rg_block *k = pt->tail[b];
    if ((!k || pt->fill[b] == pt->block_entries) && !(k = new_block(pt, b))) return -1;
    uint64_t *d = &k->w[(size_t)pt->fill[b]++ * pt->stride];
    d[0] = e.lo;
    d[1] = e.hi;
    if (pt->stride == 3) d[2] = (uint64_t)e.row | (uint64_t)e.count << 32;
    return 0;
}

/* Counts a row into the front table when its class is there or there is
 * room for it (returns 1), else returns 0 and the row goes to its bucket.
 * While the classes are few this is all a row costs: they stay in the
 * cache, and no row is stored. A class in the front table has all its rows
 * of the piece there until the table is dropped (front_watch), which puts
 * them into the buckets as one entry before the rows that follow. */
static inline int front_count(rg_part *pt, uint64_t lo, uint64_t hi, double w)
{
    const size_t mask = pt->front_mask;
    for (size_t s = (size_t)lo & mask;; s = (s + 1) & mask) {
        rg_entry *e = &pt->front[s];
        if (!e->count) {
            if (pt->front_count >= RG_FRONT_MAX) return 0;
            *e = (rg_entry){lo, hi, (uint32_t)pt->rows, 1};
            pt->front_count++;
            return 1;
        }
        if (e->lo == lo && e->hi == hi) {
            e->count++;
            if (pt->weights) pt->weights[e->row] += w;
            return 1;
        }
    }
}

/* Doubles the front table when it is half full and below its largest size
 * (0, or -1: no memory). Where its classes lie in it changes nothing that
 * is measured: each class's rows are counted in it all the same. */
static int front_grow(rg_part *pt)
{
    if (pt->front_count <= pt->front_mask / 2 || pt->front_mask + 1 >= (size_t)1 << RG_FRONT_BITS) return 0;
    const size_t mask = 2 * pt->front_mask + 1;
    rg_entry *t = calloc(mask + 1, sizeof *t);
    if (!t) return -1;
    for (size_t s = 0; s <= pt->front_mask; s++) {
        const rg_entry *e = &pt->front[s];
        if (!e->count) continue;
        size_t d = (size_t)e->lo & mask;
        while (t[d].count) d = (d + 1) & mask;
        t[d] = *e;
    }
    free(pt->front);
    pt->front = t;
    pt->front_mask = mask;
    return 0;
}

/* Moves the front table's classes to their buckets, each as one entry; in
 * the narrow form (entries without counts) to pt->fl instead, sorted by
 * bucket (a counting sort), where group_range finds them by bucket. */
static int front_flush(rg_part *pt)
{
    const uint32_t nb = 1u << pt->bits;
    const size_t slots = pt->front_mask + 1;
    if (pt->stride == 3) {
        for (size_t s = 0; s < slots; s++) {
            const rg_entry *e = &pt->front[s];
            if (e->count && append(pt, rg_bucket_of(e->hi, nb), *e) != 0) return -1;
        }
        return 0;
    }
    if (!(pt->fl = malloc((pt->front_count ? pt->front_count : 1) * sizeof *pt->fl)) ||
        !(pt->fl_start = calloc((size_t)nb + 1, sizeof *pt->fl_start)))
        return -1;
    for (size_t s = 0; s < slots; s++)
        if (pt->front[s].count) pt->fl_start[rg_bucket_of(pt->front[s].hi, nb) + 1]++;
    for (uint32_t b = 0; b < nb; b++) pt->fl_start[b + 1] += pt->fl_start[b];
    for (size_t s = 0; s < slots; s++)
        if (pt->front[s].count) pt->fl[pt->fl_start[rg_bucket_of(pt->front[s].hi, nb)]++] = pt->front[s];
    for (uint32_t b = nb; b > 0; b--) pt->fl_start[b] = pt->fl_start[b - 1]; /* back to the starts */
    pt->fl_start[0] = 0;
    return 0;
}

/* The q-th field of a key: fields[cols[q]], or fields[q] without cols. */
static inline const csv_field *key_field(const csv_field *fields, const uint32_t *cols, size_t q)
{
    return cols ? &fields[cols[q]] : &fields[q];
}

/* Makes room for `more` bytes after d in *buf (*cap bytes); returns the new d or NULL. */
static char *key_room(char **buf, size_t *cap, char *d, size_t more)
{
    const size_t used = (size_t)(d - *buf);
    if (*cap - used >= more) return d;
    const size_t want = 2 * (*cap + more);
    char *b = realloc(*buf, want);
    if (!b) return NULL;
    *buf = b;
    *cap = want;
    return b + used;
}

/* Copies field f to d (which has CSV_FIELD_READABLE bytes of room past the
 * field) and returns the end: a short field as one word, since the reader
 * guarantees the bytes after it may be read. */
static inline char *put_field(char *d, const csv_field *f)
{
    if (f->len && f->len <= CSV_FIELD_READABLE)
        memcpy(d, f->data, CSV_FIELD_READABLE);
    else if (f->len)
        memcpy(d, f->data, f->len);
    return d + f->len;
}

/* The 128-bit hash of a key of n fields (key_field), which runs once per row.
 * When no text holds the delimiter the key is the texts joined by it, hashed
 * with seed 0: two such keys are equal exactly when the texts are equal
 * field by field (no text holds the separator). When the fields lie in the
 * reader's buffer one after the other, each followed by the delimiter (the
 * QIs are consecutive columns, in order, and the reader has met no quoted
 * field, or none of them is quoted or empty), those bytes already are that
 * key and are hashed where they lie, with no copy. Else the
 * key is built in *buf (*cap bytes, grown as needed); when a text holds the
 * delimiter (a quoted field) it is each text prefixed by its length (one
 * byte below 255, else 255 and 4 bytes), hashed with seed 1 so that the two
 * forms never give one hash but by chance. Only a quoted field can hold the
 * delimiter: `quoted` tells whether the reader has met one. Returns 0 or -1
 * (no memory). */
int rg_key_hash(const csv_field *fields, const uint32_t *cols, size_t n, char delim, int consecutive, int quoted,
                char **buf, size_t *cap, XXH128_hash_t *h)
{
    if (consecutive && n && !quoted) {
        *h = rg_key_span_hash(key_field(fields, cols, 0), n);
        return 0;
    }
    if (consecutive && n) {
        const csv_field *f = key_field(fields, cols, 0);
        size_t q = 1;
        while (q < n && f[q - 1].len && f[q - 1].data + f[q - 1].len + 1 == f[q].data &&
               f[q - 1].data[f[q - 1].len] == delim)
            q++;
        if (q == n && f[n - 1].len) {
            *h = XXH3_128bits_withSeed(f[0].data, (size_t)(f[n - 1].data + f[n - 1].len - f[0].data), 0);
            return 0;
        }
    }
    int plain = 1;
    for (size_t q = 0; quoted && plain && q < n; q++) {
        const csv_field *f = key_field(fields, cols, q);
        if (f->len && memchr(f->data, delim, f->len)) plain = 0;
    }
    if (plain) {
        /* the common case (QIs not consecutive): room made once, the fields
         * copied a word at a time where they are short */
        size_t total = n + CSV_FIELD_READABLE;
        for (size_t q = 0; q < n; q++) total += key_field(fields, cols, q)->len;
        char *d = key_room(buf, cap, *buf, total);
        if (!d) return -1;
        for (size_t q = 0; q < n; q++) {
            d = put_field(d, key_field(fields, cols, q));
            *d++ = delim;
        }
        *h = XXH3_128bits_withSeed(*buf, (size_t)(d - *buf) - (n ? 1 : 0), 0); /* (no delimiter after the last) */
        return 0;
    }
    /* a field holds the delimiter: each field after its length, so that no
     * two keys run together (another seed than the plain form's) */
    char *d = *buf;
    for (size_t q = 0; q < n; q++) {
        const csv_field *f = key_field(fields, cols, q);
        const uint32_t len = f->len;
        if (!(d = key_room(buf, cap, d, 5 + (size_t)len + CSV_FIELD_READABLE))) return -1;
        if (len < 255) {
            *d++ = (char)len;
        } else {
            *d++ = (char)255;
            memcpy(d, &len, 4);
            d += 4;
        }
        d = put_field(d, f);
    }
    *h = XXH3_128bits_withSeed(*buf, (size_t)(d - *buf), 1);
    return 0;
}

/* Whether cols are consecutive columns in order (key_hash's no-copy case);
 * not for no columns. */
int rg_consecutive_columns(const uint32_t *cols, size_t n)
{
    if (!n) return 0;
    for (size_t q = 1; q < n; q++)
        if (cols[q] != cols[0] + q) return 0;
    return 1;
}

/* Appends one row's QI codes (each QI's texts interned in values[q]). */
static int keep_codes(risk_groups *g, strmap *values, const csv_record *rec, const uint32_t *cols, size_t nqi,
                      ak_error *err)
{
    if ((g->rows + 1) * nqi > g->codes_cap) {
        const size_t cap = g->codes_cap ? g->codes_cap * 2 : 4096 * nqi;
        uint32_t *c = realloc(g->codes, cap * sizeof *c);
        if (!c) return ak_err_nomem(err);
        g->codes = c;
        g->codes_cap = cap;
    }
    for (size_t q = 0; q < nqi; q++) {
        const csv_field *f = &rec->fields[cols[q]];
        if (strmap_intern(&values[q], f->data, f->len, &g->codes[g->rows * nqi + q], NULL) != 0)
            return ak_err_nomem(err);
    }
    return ANONKIT_OK;
}

static inline int front_full(const rg_part *pt)
{
    return pt->front_count >= RG_FRONT_MAX;
}

/* Once the front table is full: when most rows of a window of RG_FRONT_WINDOW
 * rows miss it (the classes are many), its classes go to their buckets and
 * it is dropped, as probing it then only costs. Its classes go before the
 * rows that follow, so that every class's entries stay in the order of its
 * rows (and its weights add up in that order). */
static int front_watch(rg_part *pt, int counted)
{
    pt->front_misses += !counted;
    if (++pt->front_seen < RG_FRONT_WINDOW) return ANONKIT_OK;
    const int give_up = pt->front_misses > RG_FRONT_WINDOW / 2;
    pt->front_seen = pt->front_misses = 0;
    if (!give_up) return ANONKIT_OK;
    if (front_flush(pt) != 0) return ak_err_nomem(&pt->err);
    free(pt->front);
    pt->front = NULL;
    return ANONKIT_OK;
}

/* Reads one piece: every row's hash into its bucket, its weight into
 * pt->weights (and with pt->values its codes into pt->g). */
static int part_read(rg_part *pt)
{
    const risk_group_params *p = pt->p;
    ak_error *err = &pt->err;
    const uint32_t nb = 1u << pt->bits;
    if (!(pt->head = calloc(nb, sizeof *pt->head)) || !(pt->tail = calloc(nb, sizeof *pt->tail)) ||
        !(pt->fill = calloc(nb, sizeof *pt->fill)) || !(pt->total = calloc(nb, sizeof *pt->total)) ||
        (!pt->no_front && !(pt->front = calloc((size_t)1 << RG_FRONT_MIN_BITS, sizeof *pt->front))))
        return ak_err_nomem(err);
    pt->front_mask = ((size_t)1 << RG_FRONT_MIN_BITS) - 1;
    if (!pt->reader)
        AK_CHECK(csv_reader_open_range(&pt->reader, p->path, p->delimiter, pt->offset, pt->length, 2, err));
    char *buf = NULL;
    size_t cap = 0;
    int rc;
    for (;;) {
        csv_record rec;
        if ((rc = csv_read(pt->reader, &rec, err)) <= 0) break;
        if (rec.count != pt->ncolumns) {
            rc = ak_err_set(err, ANONKIT_E_INPUT, p->shown, rec.line, 0, "expected %u fields as in the header, found %u",
                            pt->ncolumns, rec.count);
            break;
        }
        if (pt->rows >= UINT32_MAX - 1) {
            rc = ak_err_set(err, ANONKIT_E_INPUT, p->shown, rec.line, 0, "more than %lu rows: too many to measure",
                            (unsigned long)(UINT32_MAX - 1));
            break;
        }
        double w = 0;
        if (pt->weight_col >= 0) {
            const csv_field *f = &rec.fields[pt->weight_col];
            if (ak_num_parse(f->data, f->len, &w) != 0 || !(w > 0)) {
                rc = ak_err_set(err, ANONKIT_E_INPUT, p->shown, rec.line, pt->weight_col + 1,
                                "the weight '%s' of column '%s' is not a positive number", AK_SHOW(f->data, f->len),
                                p->weight);
                break;
            }
            if (pt->rows == pt->weights_cap) {
                const size_t wc = pt->weights_cap ? 2 * pt->weights_cap : 4096;
                double *ws = realloc(pt->weights, wc * sizeof *ws);
                if (!ws) {
                    rc = ak_err_nomem(err);
                    break;
                }
                pt->weights = ws;
                pt->weights_cap = wc;
            }
            pt->weights[pt->rows] = w;
        }
        /* the hash's halves as two words: the compiler otherwise stores the two
         * halves returned in registers and loads them back as one 16-byte word,
         * which stalls on the failed store forwarding (about 5 % of the run) */
        uint64_t lo, hi;
        const int quoted = p->mem || csv_reader_saw_quote(pt->reader); /* a table's text may hold the delimiter */
        if (pt->consecutive && !quoted) {
            const XXH128_hash_t h = rg_key_span_hash(&rec.fields[pt->hcols[0]], p->nqi);
            lo = h.low64;
            hi = h.high64;
        } else {
            XXH128_hash_t h;
            if (rg_key_hash(rec.fields, pt->hcols, p->nqi, p->delimiter, pt->consecutive, quoted, &buf, &cap, &h) != 0) {
                rc = ak_err_nomem(err);
                break;
            }
            lo = h.low64;
            hi = h.high64;
        }
#if defined(__GNUC__) && defined(__x86_64__)
        __asm__("" : "+r"(lo), "+r"(hi)); /* held in general registers: not re-packed through memory */
#endif
        int counted = 0;
        if (pt->front) {
            counted = front_count(pt, lo, hi, w);
            if (front_grow(pt) != 0) {
                rc = ak_err_nomem(err);
                break;
            }
            if (front_full(pt) && (rc = front_watch(pt, counted)) < 0) break;
        }
        if (!counted &&
            append(pt, rg_bucket_of(hi, nb), (rg_entry){lo, hi, (uint32_t)pt->rows, 1}) != 0) {
            rc = ak_err_nomem(err);
            break;
        }
        if (pt->values) {
            pt->g->rows = pt->rows;
            if ((rc = keep_codes(pt->g, pt->values, &rec, pt->cols, p->nqi, err)) < 0) break;
        }
        pt->rows++;
    }
    free(buf);
    if (rc >= 0 && pt->front && front_flush(pt) != 0) rc = ak_err_nomem(err);
    for (uint32_t b = 0; b < nb; b++)
        if (pt->tail[b]) {
            pt->tail[b]->count = pt->fill[b];
            pt->total[b] += pt->fill[b];
        }
    pt->lines = csv_reader_line(pt->reader) - 2;
    pt->quoted = csv_reader_saw_quote(pt->reader);
    return rc < 0 ? rc : ANONKIT_OK;
}

static void *part_run(void *arg)
{
    rg_part *pt = arg;
    pt->rc = part_read(pt);
    return NULL;
}

/* Reads the header of an opened file and finds the QI (and weight) columns. */
static int open_columns(csv_reader *reader, const char *shown, const risk_group_params *p, uint32_t *cols,
                        int *weight_col, uint32_t *ncolumns, ak_error *err)
{
    csv_record rec;
    int rc = csv_read(reader, &rec, err);
    if (rc < 0) return rc;
    if (rc == 0) return ak_err_set(err, ANONKIT_E_INPUT, shown, 1, 0, "the file is empty: a header row is needed");
    *ncolumns = rec.count;
    AK_CHECK(csv_find_columns(&rec, shown, p->qi, p->nqi, "a quasi-identifier", cols, err));
    if (weight_col) {
        *weight_col = -1;
        if (p->weight && (*weight_col = csv_column_index(&rec, p->weight)) < 0)
            return ak_err_set(err, ANONKIT_E_USAGE, shown, 1, 0, "no column named '%s' (given as --weight)", p->weight);
    }
    return ANONKIT_OK;
}

/* The line of data row `row` (0-based) of the sample, for a message: read
 * again, as this is only needed when a check fails. */
static long line_of_row(const risk_group_params *p, uint64_t row)
{
    csv_reader *reader = NULL;
    ak_error err;
    ak_err_clear(&err);
    long line = 0;
    if ((p->mem ? csv_reader_open_table(&reader, p->mem, p->shown, &err)
               : csv_reader_open(&reader, p->path, p->delimiter, &err)) < 0)
        return 0;
    csv_record rec;
    for (uint64_t r = 0; r <= row + 1; r++) {
        if (csv_read(reader, &rec, &err) <= 0) break;
        if (r == row + 1) line = rec.line;
    }
    csv_reader_free(reader);
    return line;
}

/* A linear-probing index of the classes by hash, for the population table. */
static int read_population(risk_groups *g, const risk_group_params *p, const rg_classes *c, const uint32_t *order,
                           uint64_t *pop, ak_error *err)
{
    const char *shown = p->population_shown ? p->population_shown : p->population_path;
    size_t cap = 16;
    while (cap < 2 * c->n) cap *= 2;
    const size_t mask = cap - 1;
    uint32_t *table = calloc(cap, sizeof *table);
    uint32_t *cols = malloc((p->nqi ? p->nqi : 1) * sizeof *cols);
    char *buf = NULL;
    size_t buf_cap = 0;
    csv_reader *reader = NULL;
    int rc;
    if (!table || !cols) {
        rc = ak_err_nomem(err);
        goto done;
    }
    for (size_t k = 0; k < c->n; k++) {
        size_t s = (size_t)c->lo[k] & mask;
        while (table[s]) s = (s + 1) & mask;
        table[s] = (uint32_t)k + 1;
    }
    uint32_t ncolumns;
    if ((rc = csv_reader_open(&reader, p->population_path, p->delimiter, err)) < 0) goto done;
    if ((rc = open_columns(reader, shown, p, cols, NULL, &ncolumns, err)) < 0) goto done;
    long last_line = 1;
    for (;;) {
        csv_record rec;
        if ((rc = csv_read(reader, &rec, err)) < 0) goto done;
        if (rc == 0) break;
        last_line = rec.line;
        if (rec.count != ncolumns) {
            rc = ak_err_set(err, ANONKIT_E_INPUT, shown, rec.line, 0, "expected %u fields as in the header, found %u",
                            ncolumns, rec.count);
            goto done;
        }
        XXH128_hash_t h;
        if (rg_key_hash(rec.fields, cols, p->nqi, p->delimiter, rg_consecutive_columns(cols, p->nqi),
                     csv_reader_saw_quote(reader), &buf, &buf_cap, &h) !=
            0) {
            rc = ak_err_nomem(err);
            goto done;
        }
        for (size_t s = (size_t)h.low64 & mask; table[s]; s = (s + 1) & mask)
            if (c->lo[table[s] - 1] == h.low64 && c->hi[table[s] - 1] == h.high64) {
                pop[table[s] - 1]++;
                break;
            }
        g->population_rows++;
    }
    if (g->population_rows < g->rows) {
        rc = ak_err_set(err, ANONKIT_E_INPUT, shown, last_line, 0,
                        "the population has %llu rows, fewer than the %llu rows of the sample %s",
                        (unsigned long long)g->population_rows, (unsigned long long)g->rows, p->shown);
        goto done;
    }
    for (size_t i = 0; i < c->n; i++) {
        const uint32_t k = order[i];
        if (pop[k] < c->size[k]) {
            rc = ak_err_set(err, ANONKIT_E_INPUT, p->shown, line_of_row(p, c->first[k]), 0,
                            "this row's class has %llu rows in the sample but only %llu in the population %s: "
                            "the population must hold the sample",
                            (unsigned long long)c->size[k], (unsigned long long)pop[k], shown);
            goto done;
        }
    }
    rc = ANONKIT_OK;
done:
    csv_reader_free(reader);
    free(table);
    free(cols);
    free(buf);
    return rc;
}

/* Leaves out the suppressed rows' class and lays the classes out compactly,
 * in the order of their first rows (order; NULL: as grouped). */
static int compact(risk_groups *g, const risk_group_params *p, rg_classes *c, const uint32_t *order,
                   const uint64_t *pop, ak_error *err)
{
    uint32_t star = AK_NOT_FOUND;
    if (p->published && p->suppression > 0 && c->star != AK_NOT_FOUND &&
        c->size[c->star] <= model_suppression_limit(p->suppression, g->rows))
        star = c->star;
    const size_t n = c->n;
    if (!order && !pop && !c->weight) {
        /* in any order: the sizes as they are, the suppressed rows' class replaced by the last */
        g->class_size = c->size;
        c->size = NULL;
        g->nclasses = n;
        if (star != AK_NOT_FOUND) {
            g->suppressed = g->class_size[star];
            g->class_size[star] = g->class_size[--g->nclasses];
        }
        return ANONKIT_OK;
    }
    g->class_size = malloc((n ? n : 1) * sizeof *g->class_size);
    if (!g->class_size) return ak_err_nomem(err);
    if (pop && !(g->class_population = malloc((n ? n : 1) * sizeof *g->class_population))) return ak_err_nomem(err);
    if (c->weight && !(g->class_weight = malloc((n ? n : 1) * sizeof *g->class_weight))) return ak_err_nomem(err);
    for (size_t i = 0; i < n; i++) {
        const uint32_t k = order ? order[i] : (uint32_t)i;
        if (k == star) {
            g->suppressed = c->size[k];
            continue;
        }
        g->class_size[g->nclasses] = c->size[k];
        if (pop) g->class_population[g->nclasses] = pop[k];
        if (c->weight) g->class_weight[g->nclasses] = c->weight[k];
        g->nclasses++;
    }
    return ANONKIT_OK;
}

/* Buckets for about `rows` rows: some RG_BUCKET_ROWS each, at most 1 << RG_MAX_BITS. */
static unsigned bucket_bits(uint64_t rows)
{
    unsigned bits = 0;
    while (bits < RG_MAX_BITS && ((uint64_t)RG_BUCKET_ROWS << bits) < rows) bits++;
    return bits;
}

/* Reads the data rows in two pieces on two threads when the file is large
 * and can be cut; *done tells whether that worked (else the caller reads
 * sequentially, which also gives the exact error). */
static int read_parallel(rg_part *parts, const risk_group_params *p, uint64_t data_start, int *done, ak_error *err)
{
    *done = 0;
    struct stat st;
    if (p->mem || stat(p->path, &st) != 0 || (uint64_t)st.st_size < data_start + RG_PARALLEL_MIN_BYTES)
        return ANONKIT_OK; /* a table: read in one piece */
    const uint64_t size = (uint64_t)st.st_size, split = csv_find_split(p->path, data_start, size);
    if (!split || split >= size) return ANONKIT_OK;
    const unsigned bits = bucket_bits(csv_estimate_lines(p->path, data_start, size - data_start));
    for (unsigned i = 0; i < 2; i++) {
        parts[i].offset = i ? split : data_start;
        parts[i].length = i ? size - split : split - data_start;
        parts[i].bits = bits;
    }
    parts[1].no_front = p->weight != NULL;
    ak_run_parts(parts, sizeof *parts, 2, part_run);
    if (parts[0].rc == ANONKIT_E_NOMEM || parts[1].rc == ANONKIT_E_NOMEM) return ak_err_nomem(err);
    *done = parts[0].rc == ANONKIT_OK && parts[1].rc == ANONKIT_OK && !parts[0].quoted && !parts[1].quoted &&
            parts[0].lines == (long)parts[0].rows;
    return ANONKIT_OK;
}

/* The hash of the all-"*" key, the suppressed rows of a published file. */
static int star_hash(size_t nqi, char delimiter, XXH128_hash_t *h, ak_error *err)
{
    static const char star[CSV_FIELD_READABLE] = "*";
    csv_field *f = malloc((nqi ? nqi : 1) * sizeof *f);
    char *buf = NULL;
    size_t cap = 0;
    for (size_t q = 0; f && q < nqi; q++) f[q] = (csv_field){star, 1};
    const int rc = f ? rg_key_hash(f, NULL, nqi, delimiter, 0, 1, &buf, &cap, h) : -1;
    free(f);
    free(buf);
    return rc == 0 ? ANONKIT_OK : ak_err_nomem(err);
}

int risk_groups_read(risk_groups *g, const risk_group_params *p, ak_error *err)
{
    memset(g, 0, sizeof *g);
    uint32_t *cols = malloc((p->nqi ? p->nqi : 1) * sizeof *cols);
    uint32_t *hcols = malloc((p->nqi ? p->nqi : 1) * sizeof *hcols);
    strmap *values = p->keep_codes ? calloc(p->nqi, sizeof *values) : NULL;
    uint64_t *pop = NULL;
    uint32_t *order = NULL;
    rg_classes classes;
    memset(&classes, 0, sizeof classes);
    rg_part parts[2];
    memset(parts, 0, sizeof parts);
    unsigned nparts = 0;
    csv_reader *reader = NULL;
    int rc = ANONKIT_OK;
    if (!cols || !hcols || (p->keep_codes && !values)) {
        rc = ak_err_nomem(err);
        goto done;
    }
    for (size_t q = 0; values && q < p->nqi; q++)
        if (strmap_init(&values[q], 256) != 0) {
            rc = ak_err_nomem(err);
            goto done;
        }
    XXH128_hash_t star;
    if ((rc = star_hash(p->nqi, p->delimiter, &star, err)) < 0) goto done;
    uint32_t ncolumns;
    int weight_col;
    /* A small file (not read in pieces) without SUDA2's codes or a population
     * table: its classes straight from the rows (rg_read_direct), read by the
     * block scan unless told otherwise; its header then by a reader of the
     * header's bytes alone when it is a plain line. */
    struct stat fst;
    const int direct = !values && !p->population_path && !p->buckets_only && !p->mem && stat(p->path, &fst) == 0 &&
                       (uint64_t)fst.st_size < RG_PARALLEL_MIN_BYTES;
    const uint64_t header_end = direct && !p->generic_reader ? rg_header_end(p->path) : 0;
    if ((rc = p->mem        ? csv_reader_open_table(&reader, p->mem, p->shown, err)
              : header_end ? csv_reader_open_range(&reader, p->path, p->delimiter, 0, header_end, 1, err)
                           : csv_reader_open(&reader, p->path, p->delimiter, err)) < 0)
        goto done;
    if ((rc = open_columns(reader, p->shown, p, cols, &weight_col, &ncolumns, err)) < 0) goto done;
    /* The key's fields in file order: a class is the same set of rows in any
     * order of its fields, and QIs that are consecutive columns in another
     * order (Adult's first eight) are then hashed where they lie, with no
     * copy. Not with a population table, whose columns may lie in another
     * order: its rows are hashed in the QIs' order, and so must these be. */
    memcpy(hcols, cols, p->nqi * sizeof *hcols);
    for (size_t q = 1; !p->population_path && q < p->nqi; q++)
        for (size_t k = q; k > 0 && hcols[k - 1] > hcols[k]; k--) {
            const uint32_t t = hcols[k];
            hcols[k] = hcols[k - 1];
            hcols[k - 1] = t;
        }
    if (direct) {
        if ((rc = rg_read_direct(reader, p, hcols, ncolumns, weight_col, star, (uint64_t)fst.st_size,
                                 header_end > 0, &classes, &g->rows, err)) < 0)
            goto done;
        if (!p->any_order || p->weight) { /* in the order of their first rows already: compact's order is the identity */
            if (!(order = malloc((classes.n ? classes.n : 1) * sizeof *order))) {
                rc = ak_err_nomem(err);
                goto done;
            }
            for (size_t k = 0; k < classes.n; k++) order[k] = (uint32_t)k;
        }
        rc = compact(g, p, &classes, order, NULL, err);
        goto done;
    }
    for (unsigned i = 0; i < 2; i++) part_init(&parts[i], p, cols, hcols, ncolumns, weight_col);
    int parallel = 0;
    if (!values && p->threads > 1) {
        if ((rc = read_parallel(parts, p, csv_reader_offset(reader), &parallel, err)) < 0) goto done;
        if (parallel) nparts = 2;
        for (unsigned i = 0; !parallel && i < 2; i++) {
            csv_reader_free(parts[i].reader);
            part_free(&parts[i]);
            part_init(&parts[i], p, cols, hcols, ncolumns, weight_col);
        }
    }
    if (!parallel) {
        struct stat st;
        const uint64_t size = stat(p->path, &st) == 0 ? (uint64_t)st.st_size : 0;
        parts[0].reader = reader;
        reader = NULL;
        const uint64_t lines = size ? csv_estimate_lines(p->path, 0, size) : 0;
        parts[0].bits = bucket_bits(lines);
        /* a small file: every row's entry in its bucket takes less memory than
         * the front table at its largest, which would be fresh pages to fault
         * in (the most of the system time of a run on Adult) for no gain */
        parts[0].no_front = lines * parts[0].stride * sizeof(uint64_t) <= ((size_t)1 << RG_FRONT_BITS) * sizeof(rg_entry);
        parts[0].g = g;
        parts[0].values = values;
        nparts = 1;
        rc = part_read(&parts[0]);
        if (rc < 0) {
            *err = parts[0].err;
            goto done;
        }
    }
    g->rows = 0; /* (keep_codes counted it) */
    for (unsigned i = 0; i < nparts; i++) g->rows += parts[i].rows;
    const int ordered = !p->any_order || p->weight || p->population_path;
    if ((rc = rg_group_buckets(parts, nparts, g->rows, p->threads, ordered, weight_col >= 0, p->population_path != NULL,
                            star, &classes, err)) < 0)
        goto done;
    for (unsigned i = 0; i < 2; i++) {
        csv_reader_free(parts[i].reader);
        parts[i].reader = NULL;
        part_free(&parts[i]);
    }
    if (ordered && (rc = rg_order_classes(&classes, g->rows, &order, err)) < 0) goto done;
    if (p->population_path) {
        if (!(pop = calloc(classes.n ? classes.n : 1, sizeof *pop))) {
            rc = ak_err_nomem(err);
            goto done;
        }
        if ((rc = read_population(g, p, &classes, order, pop, err)) < 0) goto done;
    }
    rc = compact(g, p, &classes, order, pop, err);
done:
    csv_reader_free(reader);
    for (unsigned i = 0; i < 2; i++) {
        csv_reader_free(parts[i].reader);
        part_free(&parts[i]);
    }
    rg_classes_free(&classes);
    free(order);
    free(cols);
    free(hcols);
    free(pop);
    for (size_t q = 0; values && q < p->nqi; q++) strmap_free(&values[q]);
    free(values);
    if (rc < 0) {
        if (strcmp(err->file, p->path) == 0) snprintf(err->file, sizeof err->file, "%s", p->shown);
        risk_groups_free(g);
    }
    return rc;
}
