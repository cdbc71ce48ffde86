/* format.c — the publisher of the writer (docs/ARCHITECTURE.md §3 step 3): the
 * output's layout as segments (runs of adjacent QI columns, copied units),
 * the published value of every (class, QI) formatted and escaped once per
 * class and run, the copied units of a record in CSV form, the order rows are
 * written in, and output rows composed from these texts. */
#include "publish/publish_internal.h"

#include <stdlib.h>
#include <string.h>

#include "common/parallel.h"
#include "core/recode.h"

/* Appends s, escaped for a CSV field, to b. */
static int escape_append(strbuf *b, const char *s, size_t len, char delim)
{
    if (strbuf_reserve(b, csv_escaped_max(len)) != 0) return -1;
    b->len += csv_escape(b->data + b->len, s, len, delim);
    return 0;
}

/* Appends the run texts of class c (or of a suppressed row when star) to b,
 * with their offsets in b to off[0 .. nruns). For the QIs flagged in
 * pub->int_range, vals holds the values at the box's ends (2 per QI). */
static int format_class(const publisher *pub, size_t c, int star, strbuf *b, size_t *off, strbuf *value,
                        const double *vals)
{
    int rc = 0;
    uint32_t run = 0;
    char num[48];
    for (uint32_t g = 0; g < pub->nsegments; g++) {
        const segment *seg = &pub->segments[g];
        if (seg->copied) continue;
        off[run++] = b->len;
        for (uint32_t i = 0; i < seg->count && rc == 0; i++) {
            const uint32_t q = (uint32_t)pub->out_qi[seg->first + i];
            const char *text = RECODE_SUPPRESSED;
            size_t len = 1;
            if (!star && pub->int_range[q]) {
                len = recode_int_range(pub->style, partition_lo(pub->p, c)[q], partition_hi(pub->p, c)[q],
                                       vals[2 * q], vals[2 * q + 1], num);
                text = num;
            } else if (!star) {
                if (recode_class_text(pub->t, pub->p, pub->means, pub->style, c, q, value) != 0) rc = -1;
                text = value->data;
                len = value->len;
            }
            if (rc == 0 && ((i && strbuf_append(b, &pub->delim, 1) != 0) || escape_append(b, text, len, pub->delim) != 0))
                rc = -1;
        }
    }
    return rc;
}

/* Classes [first, last) formatted into their own text; offsets go to the
 * shared class_off, relative to that text. */
typedef struct format_job {
    publisher *pub;
    size_t first, last;
    strbuf text;
    int rc;
} format_job;

/* Classes whose values are fetched together before they are formatted. */
#define FORMAT_BATCH 16

/* Formats classes [first, last) in batches: first the values at the box ends
 * of every int_range QI of every class of the batch, in one tight loop of
 * loads (they lie anywhere in arrays of up to a value per row and mostly
 * miss the cache, so the misses overlap), then the texts. */
static void *format_classes_some(void *arg)
{
    format_job *job = arg;
    const publisher *pub = job->pub;
    const table *t = pub->t;
    const uint32_t d = t->nqi;
    strbuf value = {0}; /* one value's text, reused for every class */
    double *vals = malloc((size_t)FORMAT_BATCH * 2 * (d ? d : 1) * sizeof *vals);
    job->rc = vals ? 0 : -1;
    for (size_t c0 = job->first; c0 < job->last && job->rc == 0; c0 += FORMAT_BATCH) {
        const size_t cn = job->last - c0 < FORMAT_BATCH ? job->last - c0 : FORMAT_BATCH;
        for (size_t i = 0; i < cn; i++) {
            const uint32_t *lo = partition_lo(pub->p, c0 + i), *hi = partition_hi(pub->p, c0 + i);
            double *v = vals + i * 2 * d;
            for (uint32_t q = 0; q < d; q++)
                if (pub->int_range[q]) {
                    v[2 * q] = t->qi[q].values[lo[q]];
                    v[2 * q + 1] = t->qi[q].values[hi[q]];
                }
        }
        for (size_t i = 0; i < cn && job->rc == 0; i++)
            job->rc = format_class(pub, c0 + i, 0, &job->text, pub->class_off + (c0 + i) * pub->nruns, &value,
                                   vals + i * 2 * d);
    }
    free(vals);
    strbuf_free(&value);
    return NULL;
}

/* Formats the text of every QI run: per class (the values' lookups miss the
 * cache, so two threads share the classes), and once for suppressed rows. */
int publisher_format_classes(publisher *pub, unsigned threads, ak_error *err)
{
    const partition *p = pub->p;
    const size_t cells = p->nclasses * pub->nruns;
    pub->class_off = malloc((cells + 1) * sizeof *pub->class_off);
    pub->star_off = malloc((pub->nruns + 1) * sizeof *pub->star_off);
    if (!pub->class_off || !pub->star_off) return ak_err_nomem(err);
    if (!(pub->int_range = calloc(pub->t->nqi ? pub->t->nqi : 1, 1))) return ak_err_nomem(err);
    for (uint32_t q = 0; q < pub->t->nqi; q++)
        pub->int_range[q] = (unsigned char)recode_is_int_range(pub->t, pub->p, pub->style, q);
    if (format_class(pub, 0, 1, &pub->star_text, pub->star_off, NULL, NULL) != 0) return ak_err_nomem(err);
    pub->star_off[pub->nruns] = pub->star_text.len;
    const size_t half = threads > 1 && p->nclasses >= 4096 ? p->nclasses / 2 : p->nclasses;
    format_job jobs[2] = {{pub, 0, half, {0}, 0}, {pub, half, p->nclasses, {0}, 0}};
    ak_run_parts(jobs, sizeof *jobs, half < p->nclasses ? 2 : 1, format_classes_some); /* (one: jobs[1] is empty) */
    int rc = jobs[0].rc || jobs[1].rc ? ak_err_nomem(err) : ANONKIT_OK;
    pub->class_text = jobs[0].text;
    if (rc == ANONKIT_OK) {
        const size_t base = pub->class_text.len;
        if (strbuf_append(&pub->class_text, jobs[1].text.data, jobs[1].text.len) != 0) rc = ak_err_nomem(err);
        for (size_t i = half * pub->nruns; rc == ANONKIT_OK && i < cells; i++) pub->class_off[i] += base;
    }
    strbuf_free(&jobs[1].text);
    pub->class_off[cells] = pub->class_text.len;
    return rc;
}

/* Appends one output row to b from its class and its copied fields
 * (escaped, field j at copied[off[j] .. off[j + 1])). */
int publisher_compose_row(const publisher *pub, strbuf *b, uint32_t cls, const char *copied, const size_t *off)
{
    const size_t start = b->len;
    const int star = cls == PARTITION_SUPPRESSED;
    const char *runs = star ? pub->star_text.data : pub->class_text.data;
    const size_t *run_off = star ? pub->star_off : pub->class_off + (size_t)cls * pub->nruns;
    uint32_t run = 0;
    for (uint32_t g = 0; g < pub->nsegments; g++) {
        const segment *seg = &pub->segments[g];
        const char *src;
        size_t len;
        if (seg->copied) {
            src = copied + off[seg->first];
            len = off[seg->first + 1] - off[seg->first];
        } else {
            src = runs + run_off[run];
            len = run_off[run + 1] - run_off[run];
            run++;
        }
        if (strbuf_reserve(b, len + 2) != 0) return -1;
        if (g) b->data[b->len++] = pub->delim;
        memcpy(b->data + b->len, src, len);
        b->len += len;
    }
    if (b->len == start && strbuf_append(b, "\"\"", 2) != 0) return -1; /* one empty field is not an empty line */
    return strbuf_append(b, "\n", 1);
}

void *publisher_compose_rows(void *arg)
{
    compose_job *job = arg;
    const publisher *pub = job->pub;
    const uint32_t k = pub->ncopied;
    job->out.len = 0;
    job->rc = 0;
    for (size_t i = job->first; i < job->last; i++) {
        const uint32_t r = job->order[i];
        /* Rows come in random order: fetch the class text a few rows ahead. */
        if (i + 8 < job->last) {
            uint32_t ahead = job->class_of[job->order[i + 8]];
            if (ahead != PARTITION_SUPPRESSED) {
                __builtin_prefetch(pub->class_off + (size_t)ahead * pub->nruns);
                __builtin_prefetch(pub->class_text.data + pub->class_off[(size_t)ahead * pub->nruns]);
            }
        }
        if (i + 16 < job->last) __builtin_prefetch(job->class_of + job->order[i + 16]);
        /* and the row's copied fields: their offsets, then their bytes */
        if (k && i + 16 < job->last) __builtin_prefetch(job->copied_off + (size_t)job->order[i + 16] * k);
        if (k && i + 8 < job->last) {
            const size_t *ahead_off = job->copied_off + (size_t)job->order[i + 8] * k;
            if (ahead_off[k] > ahead_off[0]) { /* not all empty */
                __builtin_prefetch(job->copied + ahead_off[0]);
                __builtin_prefetch(job->copied + (ahead_off[k] - 1));
            }
        }
        const size_t *off = k ? job->copied_off + (size_t)r * k : job->no_copied;
        if (publisher_compose_row(pub, &job->out, job->class_of[r], job->copied, off) != 0) {
            job->rc = -1;
            break;
        }
        if (job->limit && job->out.len >= job->limit) {
            job->last = i + 1;
            break;
        }
    }
    return NULL;
}

/* The rows of a part of n rows to write, in writing order, into order;
 * returns how many: every row but suppressed ones when they are dropped,
 * shuffled with rng unless the input order is kept. Counts the rows into
 * stats. */
size_t publish_order_rows(const uint32_t *class_of, size_t n, const publish_opts *opts, ak_rng *rng,
                          uint32_t *order, publish_stats *stats)
{
    size_t nwrite = 0;
    for (size_t r = 0; r < n; r++) {
        const int suppressed = class_of[r] == PARTITION_SUPPRESSED;
        stats->suppressed += (uint64_t)suppressed;
        stats->published += (uint64_t)!suppressed;
        if (!(suppressed && opts->drop_suppressed)) order[nwrite++] = (uint32_t)r;
    }
    if (!opts->keep_order)
        for (size_t i = nwrite; i > 1; i--) {
            const size_t j = (size_t)ak_rng_below(rng, i);
            const uint32_t tmp = order[i - 1];
            order[i - 1] = order[j];
            order[j] = tmp;
        }
    return nwrite;
}

/* Appends the CSV form of copied unit u of rec to b: its fields escaped and
 * joined by the delimiter, taken as the reader holds them when they are
 * already that (csv_run_is_plain, and no field begins or ends with a space;
 * a unit of one field is always escaped, as the bytes of a quoted field
 * alone do not show its quotes). */
static int append_unit(const publisher *pub, const csv_record *rec, uint32_t u, strbuf *b)
{
    const csv_field *f = rec->fields + pub->copied_col[u];
    const uint32_t nc = pub->copied_ncols[u];
    if (nc > 1 && !pub->t->mem) { /* (a table's fields lie in separate columns, not one buffer) */
        const char *from = f[0].data, *to = f[nc - 1].data + f[nc - 1].len;
        int plain = to >= from && csv_run_is_plain(from, (size_t)(to - from));
        for (uint32_t i = 0; i < nc && plain; i++)
            plain = !f[i].len || (f[i].data[0] != ' ' && f[i].data[f[i].len - 1] != ' ');
        if (plain) return strbuf_append(b, from, (size_t)(to - from));
    }
    for (uint32_t i = 0; i < nc; i++)
        if ((i && strbuf_append(b, &pub->delim, 1) != 0) || escape_append(b, f[i].data, f[i].len, pub->delim) != 0)
            return -1;
    return 0;
}

/* Appends the copied units of rec to b, their offsets to off[0 .. ncopied). */
int publisher_append_copied(const publisher *pub, const csv_record *rec, strbuf *b, size_t *off)
{
    for (uint32_t u = 0; u < pub->ncopied; u++) {
        off[u] = b->len;
        if (append_unit(pub, rec, u, b) != 0) return -1;
    }
    return 0;
}

void publisher_free(publisher *pub)
{
    free(pub->out_qi);
    free(pub->copied_col);
    free(pub->copied_ncols);
    free(pub->segments);
    strbuf_free(&pub->class_text);
    free(pub->class_off);
    strbuf_free(&pub->star_text);
    free(pub->star_off);
    free(pub->int_range);
    strbuf_free(&pub->line);
}

int publish_input_changed(const table *t, ak_error *err)
{
    return digest_changed(err, t->display_name);
}

/* The output columns of t as segments (identifiers dropped); with
 * merge_copied, copied columns next to each other in the input are one unit. */
int publisher_setup(publisher *pub, const table *t, const publish_opts *opts, int merge_copied, ak_error *err)
{
    memset(pub, 0, sizeof *pub);
    pub->t = t;
    pub->style = opts->style;
    pub->means = opts->means;
    pub->delim = t->delimiter;
    pub->out_qi = malloc((t->ncolumns + 1) * sizeof *pub->out_qi);
    pub->copied_col = malloc((t->ncolumns + 1) * sizeof *pub->copied_col);
    pub->copied_ncols = malloc((t->ncolumns + 1) * sizeof *pub->copied_ncols);
    pub->segments = malloc((t->ncolumns + 1) * sizeof *pub->segments);
    if (!pub->out_qi || !pub->copied_col || !pub->copied_ncols || !pub->segments) return ak_err_nomem(err);
    for (uint32_t c = 0; c < t->ncolumns; c++) {
        if (t->roles[c] == ROLE_IDENTIFIER) continue;
        int32_t q = -1;
        for (uint32_t i = 0; i < t->nqi; i++)
            if (t->qi[i].column == c) q = (int32_t)i;
        segment *last = pub->nsegments ? &pub->segments[pub->nsegments - 1] : NULL;
        if (q < 0 && merge_copied && last && last->copied &&
            pub->copied_col[last->first] + pub->copied_ncols[last->first] == c) {
            pub->copied_ncols[last->first]++;
        } else if (q < 0) {
            pub->segments[pub->nsegments++] = (segment){.first = pub->ncopied, .count = 1, .copied = 1};
            pub->copied_ncols[pub->ncopied] = 1;
            pub->copied_col[pub->ncopied++] = c;
        } else if (last && !last->copied) {
            last->count++;
        } else {
            pub->segments[pub->nsegments++] = (segment){.first = pub->nout, .count = 1, .copied = 0};
            pub->nruns++;
        }
        pub->out_qi[pub->nout++] = q;
    }
    return ANONKIT_OK;
}

/* The header row: every column but the identifiers. */
int publisher_write_header(const table *t, csv_writer *writer, ak_error *err)
{
    for (uint32_t c = 0; c < t->ncolumns; c++)
        if (t->roles[c] != ROLE_IDENTIFIER) AK_CHECK(csv_write_field(writer, t->column_names[c], strlen(t->column_names[c]), err));
    return csv_write_end(writer, err);
}
