/* fuzz_csv.c — libFuzzer harness for the CSV reader and writer (src/io/csv):
 * any bytes are read as CSV (the first byte picks the delimiter); whatever
 * the reader accepts, the writer writes back and the reader must read the
 * same records again, field for field. Malformed input must end in an error,
 * never a crash. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/csv.h"

enum { MAX_RECORDS = 4096 };

/* Every record of `stream` appended to *fields (data, len pairs copied into
 * *text) with per-record counts; returns the csv_read status that ended it. */
typedef struct records {
    char *text;
    size_t len, cap;
    size_t *field_off, *field_len, nfields, fcap;
    uint32_t counts[MAX_RECORDS];
    size_t nrecords;
} records;

static void put(records *r, const char *data, size_t len)
{
    if (r->len + len + 1 > r->cap) {
        r->cap = 2 * (r->len + len + 1);
        r->text = realloc(r->text, r->cap);
        if (!r->text) abort();
    }
    if (len) memcpy(r->text + r->len, data, len);
    if (r->nfields == r->fcap) {
        r->fcap = r->fcap ? 2 * r->fcap : 64;
        r->field_off = realloc(r->field_off, r->fcap * sizeof *r->field_off);
        r->field_len = realloc(r->field_len, r->fcap * sizeof *r->field_len);
        if (!r->field_off || !r->field_len) abort();
    }
    r->field_off[r->nfields] = r->len;
    r->field_len[r->nfields++] = len;
    r->len += len;
}

static int read_all(const char *data, size_t size, char delim, records *r)
{
    FILE *in = fmemopen((void *)data, size ? size : 1, "rb");
    if (!in) abort();
    if (!size) { /* fmemopen wants a size: read nothing */
        fclose(in);
        in = fopen("/dev/null", "rb");
        if (!in) abort();
    }
    csv_reader *reader = NULL;
    ak_error err;
    int rc = csv_reader_open_stream(&reader, in, "fuzz", delim, &err);
    if (rc < 0) abort(); /* (opening a stream cannot fail but for memory) */
    csv_record rec;
    while (r->nrecords < MAX_RECORDS && (rc = csv_read(reader, &rec, &err)) == 1) {
        if (rec.count == 0) abort();
        for (uint32_t f = 0; f < rec.count; f++) {
            if (rec.fields[f].len) {
                /* the promise of CSV_FIELD_READABLE: 8 bytes from a field's start may be read */
                volatile char sink = 0;
                for (int b = 0; b < CSV_FIELD_READABLE; b++) sink ^= rec.fields[f].data[b];
                (void)sink;
            }
            put(r, rec.fields[f].data, rec.fields[f].len);
        }
        r->counts[r->nrecords++] = rec.count;
    }
    csv_reader_free(reader);
    fclose(in);
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    static const char delims[4] = {',', ';', '\t', '|'};
    const char delim = delims[data[0] & 3];
    records first = {0}, again = {0};
    const int rc = read_all((const char *)data + 1, size - 1, delim, &first);
    if (rc < 0 || first.nrecords == 0 || first.nrecords == MAX_RECORDS) goto done;
    /* write what was read, read it back */
    char *buf = NULL;
    size_t buflen = 0;
    FILE *out = open_memstream(&buf, &buflen);
    if (!out) abort();
    csv_writer *w = NULL;
    ak_error err;
    if (csv_writer_open_stream(&w, out, "fuzz-out", delim, &err) < 0) abort();
    size_t field = 0;
    for (size_t i = 0; i < first.nrecords; i++) {
        for (uint32_t f = 0; f < first.counts[i]; f++, field++)
            if (csv_write_field(w, first.text + first.field_off[field], first.field_len[field], &err) < 0) abort();
        if (csv_write_end(w, &err) < 0) abort();
    }
    if (csv_writer_flush(w, &err) < 0) abort();
    csv_writer_free(w);
    fclose(out);
    const int rc2 = read_all(buf, buflen, delim, &again);
    if (rc2 < 0) {
        fprintf(stderr, "the reader refused what the writer wrote: %s\n", err.message);
        abort();
    }
    if (again.nrecords != first.nrecords || again.nfields != first.nfields) {
        fprintf(stderr, "records %zu -> %zu, fields %zu -> %zu\n", first.nrecords, again.nrecords, first.nfields,
                again.nfields);
        abort();
    }
    for (size_t i = 0; i < first.nrecords; i++)
        if (again.counts[i] != first.counts[i]) abort();
    for (size_t f = 0; f < first.nfields; f++)
        if (again.field_len[f] != first.field_len[f] ||
            memcmp(again.text + again.field_off[f], first.text + first.field_off[f], first.field_len[f])) {
            fprintf(stderr, "field %zu changed in a round trip\n", f);
            abort();
        }
    free(buf);
done:
    free(first.text), free(first.field_off), free(first.field_len);
    free(again.text), free(again.field_off), free(again.field_len);
    return 0;
}
