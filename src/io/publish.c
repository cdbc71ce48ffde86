/* publish.c — recode and write (DESIGN.md §1 step 3): the published value of
 * every class is formatted once, then the input is streamed a second time and
 * each row composed from its class's values and its own non-QI fields. Rows
 * are shuffled (Fisher-Yates with the run's seed) unless input order is kept,
 * since the order of rows can itself re-identify people. */
#include "io/publish.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/recode.h"
#include "core/rng.h"
#include "io/csv.h"

typedef struct bytes {
    char *data;
    size_t len, cap;
} bytes;

static int bytes_reserve(bytes *b, size_t extra)
{
    if (b->len + extra <= b->cap) return 0;
    size_t cap = b->cap ? b->cap * 2 : 1 << 16;
    while (cap < b->len + extra) cap *= 2;
    char *p = realloc(b->data, cap);
    if (!p) return -1;
    b->data = p;
    b->cap = cap;
    return 0;
}

static int bytes_append_escaped(bytes *b, const char *s, size_t len, char delimiter)
{
    if (bytes_reserve(b, csv_escaped_max(len) + 1) != 0) return -1;
    b->len += csv_escape(b->data + b->len, s, len, delimiter);
    return 0;
}

/* The escaped published text of every (class, QI), concatenated; text of
 * class c, QI q is data[off[c*d+q] .. off[c*d+q+1]). */
static int format_classes(const table *t, const partition *p, bytes *text, uint64_t **off_out, ak_error *err)
{
    const uint32_t d = t->nqi;
    size_t cells = p->nclasses * d;
    uint64_t *off = malloc((cells + 1) * sizeof *off);
    if (!off) return ak_err_nomem(err);
    char value[4096];
    for (size_t c = 0; c < p->nclasses; c++) {
        for (uint32_t q = 0; q < d; q++) {
            off[c * d + q] = text->len;
            size_t len = recode_value(t, q, partition_lo(p, c)[q], partition_hi(p, c)[q], value, sizeof value);
            if (len >= sizeof value) len = sizeof value - 1;
            if (bytes_append_escaped(text, value, len, t->delimiter) != 0) {
                free(off);
                return ak_err_nomem(err);
            }
        }
    }
    off[cells] = text->len;
    *off_out = off;
    return ANONKIT_OK;
}

int publish_write(const table *t, const partition *p, const publish_opts *opts, FILE *out,
                  const char *out_name, publish_stats *stats, ak_error *err)
{
    const uint32_t d = t->nqi;
    const char delim = t->delimiter;
    memset(stats, 0, sizeof *stats);
    int rc = ANONKIT_OK;
    bytes class_text = {0}, line = {0}, all = {0};
    uint64_t *class_off = NULL, *row_off = NULL;
    int32_t *qi_of_column = NULL;
    csv_reader *reader = NULL;
    csv_writer *writer = NULL;
    size_t *order = NULL;

    if ((rc = format_classes(t, p, &class_text, &class_off, err)) < 0) goto done;
    if (!(qi_of_column = malloc(t->ncolumns * sizeof *qi_of_column))) { rc = ak_err_nomem(err); goto done; }
    for (uint32_t c = 0; c < t->ncolumns; c++) qi_of_column[c] = -1;
    for (uint32_t q = 0; q < d; q++) qi_of_column[t->qi[q].column] = (int32_t)q;

    if ((rc = csv_reader_open(&reader, t->path, delim, err)) < 0) goto done;
    if ((rc = csv_writer_open_stream(&writer, out, out_name, delim, err)) < 0) goto done;
    csv_record rec;
    if ((rc = csv_read(reader, &rec, err)) <= 0) {
        if (rc == 0) rc = ak_err_set(err, ANONKIT_E_INPUT, t->display_name, 1, 0, "the input changed while it was read");
        goto done;
    }
    for (uint32_t c = 0; c < rec.count; c++)
        if (t->roles[c] != ROLE_IDENTIFIER && (rc = csv_write_field(writer, rec.fields[c].data, rec.fields[c].len, err)) < 0)
            goto done;
    if ((rc = csv_write_end(writer, err)) < 0) goto done;

    if (!opts->keep_order) {
        struct stat st;
        size_t guess = stat(t->path, &st) == 0 ? (size_t)st.st_size : 0;
        if (bytes_reserve(&all, guess + 1) != 0 ||
            !(row_off = malloc((t->nrows + 1) * sizeof *row_off))) { rc = ak_err_nomem(err); goto done; }
    }
    size_t row = 0, nwritten = 0;
    for (;;) {
        if ((rc = csv_read(reader, &rec, err)) < 0) goto done;
        if (rc == 0) break;
        if (row >= t->nrows || rec.count != t->ncolumns) {
            rc = ak_err_set(err, ANONKIT_E_INPUT, t->display_name, rec.line, 0, "the input changed while it was read");
            goto done;
        }
        uint32_t cls = p->class_of[row++];
        int suppressed = cls == PARTITION_SUPPRESSED;
        if (suppressed) {
            stats->suppressed++;
            if (opts->drop_suppressed) continue;
        }
        bytes *b = opts->keep_order ? &line : &all;
        if (opts->keep_order) line.len = 0;
        else row_off[nwritten] = all.len;
        int first = 1;
        for (uint32_t c = 0; c < rec.count; c++) {
            if (t->roles[c] == ROLE_IDENTIFIER) continue;
            if (!first) {
                if (bytes_reserve(b, 1) != 0) { rc = ak_err_nomem(err); goto done; }
                b->data[b->len++] = delim;
            }
            first = 0;
            int32_t q = qi_of_column[c];
            if (q < 0) {
                if (bytes_append_escaped(b, rec.fields[c].data, rec.fields[c].len, delim) != 0) { rc = ak_err_nomem(err); goto done; }
                continue;
            }
            const char *src = RECODE_SUPPRESSED;
            size_t len = 1;
            if (!suppressed) {
                size_t cell = (size_t)cls * d + (size_t)q;
                src = class_text.data + class_off[cell];
                len = class_off[cell + 1] - class_off[cell];
            }
            if (bytes_reserve(b, len) != 0) { rc = ak_err_nomem(err); goto done; }
            memcpy(b->data + b->len, src, len);
            b->len += len;
        }
        if (bytes_reserve(b, 1) != 0) { rc = ak_err_nomem(err); goto done; }
        b->data[b->len++] = '\n';
        nwritten++;
        if (!suppressed) stats->published++;
        if (opts->keep_order && (rc = csv_write_raw(writer, line.data, line.len, err)) < 0) goto done;
    }
    if (row != t->nrows) {
        rc = ak_err_set(err, ANONKIT_E_INPUT, t->display_name, 0, 0, "the input changed while it was read");
        goto done;
    }
    if (!opts->keep_order) {
        size_t n = nwritten;
        row_off[n] = all.len;
        if (!(order = malloc((n ? n : 1) * sizeof *order))) { rc = ak_err_nomem(err); goto done; }
        for (size_t i = 0; i < n; i++) order[i] = i;
        ak_rng rng;
        ak_rng_seed(&rng, opts->seed);
        for (size_t i = n; i > 1; i--) {
            size_t j = (size_t)ak_rng_below(&rng, i);
            size_t tmp = order[i - 1];
            order[i - 1] = order[j];
            order[j] = tmp;
        }
        for (size_t i = 0; i < n; i++) {
            size_t r = order[i];
            if ((rc = csv_write_raw(writer, all.data + row_off[r], row_off[r + 1] - row_off[r], err)) < 0) goto done;
        }
    }
    rc = csv_writer_flush(writer, err);
done:
    csv_reader_free(reader);
    csv_writer_free(writer);
    free(class_text.data);
    free(line.data);
    free(all.data);
    free(class_off);
    free(row_off);
    free(qi_of_column);
    free(order);
    return rc < 0 ? rc : ANONKIT_OK;
}
