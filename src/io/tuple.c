/* tuple.c — fixed-width binary tuple files: schema, block-buffered writer and
 * block-by-block reader (docs/ARCHITECTURE.md §10; [LeFevre07] §5.1, whose files were read and written
 * in 256 KiB blocks). The byte layout is docs/tuple-format.md; this file is its
 * only implementation. */
#include "io/tuple.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static const char tuple_magic[8] = {'A', 'K', 'T', 'U', 'P', 'L', 'E', '1'};
static const char tuple_end_magic[8] = {'A', 'K', 'T', 'U', 'P', 'E', 'N', 'D'};
enum {
    TUPLE_VERSION = 1,
    FIXED_HEADER = 24, /* magic, version, header size, column count, row width */
    END_MARKER = 16    /* end magic, row count */
};

uint32_t tuple_type_size(tuple_type type)
{
    switch (type) {
    case TUPLE_I32:
    case TUPLE_CODE:
        return 4;
    case TUPLE_I64:
    case TUPLE_F64:
        return 8;
    }
    return 0;
}

const char *tuple_type_name(tuple_type type)
{
    switch (type) {
    case TUPLE_I32:
        return "i32";
    case TUPLE_I64:
        return "i64";
    case TUPLE_F64:
        return "f64";
    case TUPLE_CODE:
        return "code";
    }
    return "?";
}

/* ------------------------------------------------------------------ schema -- */

void tuple_schema_init(tuple_schema *schema)
{
    memset(schema, 0, sizeof *schema);
}

static char *dup_text(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

static void column_clear(tuple_column *c)
{
    free(c->name);
    for (uint32_t i = 0; i < c->nlabels; i++) free(c->labels ? c->labels[i] : NULL);
    free(c->labels);
    memset(c, 0, sizeof *c);
}

void tuple_schema_clear(tuple_schema *schema)
{
    for (uint32_t i = 0; i < schema->ncolumns; i++) column_clear(&schema->columns[i]);
    free(schema->columns);
    tuple_schema_init(schema);
}

int tuple_schema_add(tuple_schema *schema, const char *name, tuple_type type, const char *const *labels,
                     uint32_t nlabels, ak_error *err)
{
    uint32_t size = tuple_type_size(type);
    if (!size) return ak_err_set(err, ANONKIT_E_INTERNAL, NULL, 0, 0, "tuple column '%s': unknown type %d", name, (int)type);
    if (!*name || strlen(name) > TUPLE_MAX_NAME)
        return ak_err_set(err, ANONKIT_E_INTERNAL, NULL, 0, 0, "tuple column name must have 1 to %u bytes", TUPLE_MAX_NAME);
    if (type != TUPLE_CODE && nlabels)
        return ak_err_set(err, ANONKIT_E_INTERNAL, NULL, 0, 0, "tuple column '%s': only codes have labels", name);
    if (schema->ncolumns >= TUPLE_MAX_COLUMNS || schema->row_width > UINT32_MAX - size)
        return ak_err_set(err, ANONKIT_E_INTERNAL, NULL, 0, 0, "too many tuple columns");
    tuple_column *grown = realloc(schema->columns, (schema->ncolumns + 1) * sizeof *grown);
    if (!grown) return ak_err_nomem(err);
    schema->columns = grown;
    tuple_column *c = &schema->columns[schema->ncolumns];
    memset(c, 0, sizeof *c);
    c->type = type;
    c->offset = schema->row_width;
    if (!(c->name = dup_text(name))) return ak_err_nomem(err);
    if (nlabels) {
        if (!(c->labels = calloc(nlabels, sizeof *c->labels))) goto nomem;
        c->nlabels = nlabels;
        for (uint32_t i = 0; i < nlabels; i++) {
            if (strlen(labels[i]) > TUPLE_MAX_NAME) {
                column_clear(c);
                return ak_err_set(err, ANONKIT_E_INTERNAL, NULL, 0, 0, "tuple column '%s': label too long", name);
            }
            if (!(c->labels[i] = dup_text(labels[i]))) goto nomem;
        }
    }
    schema->ncolumns++;
    schema->row_width += size;
    return ANONKIT_OK;
nomem:
    column_clear(c);
    return ak_err_nomem(err);
}

long tuple_schema_find(const tuple_schema *schema, const char *name)
{
    for (uint32_t i = 0; i < schema->ncolumns; i++)
        if (!strcmp(schema->columns[i].name, name)) return (long)i;
    return -1;
}

static int schema_copy(tuple_schema *dst, const tuple_schema *src, ak_error *err)
{
    tuple_schema_init(dst);
    for (uint32_t i = 0; i < src->ncolumns; i++) {
        const tuple_column *c = &src->columns[i];
        int rc = tuple_schema_add(dst, c->name, c->type, (const char *const *)c->labels, c->nlabels, err);
        if (rc < 0) {
            tuple_schema_clear(dst);
            return rc;
        }
    }
    return ANONKIT_OK;
}

/* The header's size in bytes (docs/tuple-format.md), or 0 when over the limit. */
static size_t header_size(const tuple_schema *s)
{
    uint64_t n = FIXED_HEADER;
    for (uint32_t i = 0; i < s->ncolumns; i++) {
        const tuple_column *c = &s->columns[i];
        n += 8 + strlen(c->name);
        if (c->type == TUPLE_CODE) {
            n += 4;
            for (uint32_t j = 0; j < c->nlabels; j++) n += 4 + strlen(c->labels[j]);
        }
        if (n > TUPLE_MAX_HEADER) return 0;
    }
    return (size_t)n;
}

static uint8_t *put_text(uint8_t *p, const char *s)
{
    uint32_t n = (uint32_t)strlen(s);
    tuple_store_u32(p, n);
    memcpy(p + 4, s, n);
    return p + 4 + n;
}

static void encode_header(const tuple_schema *s, uint8_t *p, size_t size)
{
    memcpy(p, tuple_magic, 8);
    tuple_store_u32(p + 8, TUPLE_VERSION);
    tuple_store_u32(p + 12, (uint32_t)size);
    tuple_store_u32(p + 16, s->ncolumns);
    tuple_store_u32(p + 20, s->row_width);
    p += FIXED_HEADER;
    for (uint32_t i = 0; i < s->ncolumns; i++) {
        const tuple_column *c = &s->columns[i];
        tuple_store_u32(p, (uint32_t)c->type);
        p = put_text(p + 4, c->name);
        if (c->type == TUPLE_CODE) {
            tuple_store_u32(p, c->nlabels);
            p += 4;
            for (uint32_t j = 0; j < c->nlabels; j++) p = put_text(p, c->labels[j]);
        }
    }
}

/* ------------------------------------------------------------------ writer -- */

struct tuple_writer {
    FILE *stream;
    char *name;
    tuple_schema schema;
    uint8_t *buf; /* block_size bytes */
    size_t block_size, used;
    uint64_t rows, blocks, bytes;
    int failed;
};

static int flush_block(tuple_writer *w, ak_error *err)
{
    if (!w->used) return ANONKIT_OK;
    if (fwrite(w->buf, 1, w->used, w->stream) != w->used) {
        w->failed = 1;
        return ak_err_set(err, ANONKIT_E_IO, w->name, 0, 0, "write failed: %s", strerror(errno));
    }
    w->blocks++;
    w->bytes += w->used;
    w->used = 0;
    return ANONKIT_OK;
}

static int put_bytes(tuple_writer *w, const uint8_t *data, size_t len, ak_error *err)
{
    while (len) {
        size_t n = w->block_size - w->used;
        if (n > len) n = len;
        memcpy(w->buf + w->used, data, n);
        w->used += n;
        data += n;
        len -= n;
        if (w->used == w->block_size) AK_CHECK(flush_block(w, err));
    }
    return ANONKIT_OK;
}

int tuple_writer_open(tuple_writer **out, FILE *stream, const char *name, const tuple_schema *schema,
                      size_t block_size, ak_error *err)
{
    *out = NULL;
    if (!schema->ncolumns) return ak_err_set(err, ANONKIT_E_INTERNAL, name, 0, 0, "a tuple file needs at least one column");
    size_t hsize = header_size(schema);
    if (!hsize) return ak_err_set(err, ANONKIT_E_INTERNAL, name, 0, 0, "tuple header over %u bytes", TUPLE_MAX_HEADER);
    tuple_writer *w = calloc(1, sizeof *w);
    if (!w) return ak_err_nomem(err);
    w->stream = stream;
    w->block_size = block_size ? block_size : TUPLE_DEFAULT_BLOCK;
    int rc = ANONKIT_OK;
    uint8_t *header = NULL;
    if (!(w->name = dup_text(name)) || !(w->buf = malloc(w->block_size)) || !(header = malloc(hsize))) {
        rc = ak_err_nomem(err);
        goto fail;
    }
    if ((rc = schema_copy(&w->schema, schema, err)) < 0) goto fail;
    encode_header(schema, header, hsize);
    rc = put_bytes(w, header, hsize, err);
    free(header);
    header = NULL;
    if (rc < 0) goto fail;
    *out = w;
    return ANONKIT_OK;
fail:
    free(header);
    tuple_writer_free(w);
    return rc;
}

int tuple_write(tuple_writer *w, const uint8_t *row, ak_error *err)
{
    size_t width = w->schema.row_width;
    if (w->block_size - w->used > width) { /* the common case: the row fits and the block is not full */
        memcpy(w->buf + w->used, row, width);
        w->used += width;
    } else {
        AK_CHECK(put_bytes(w, row, width, err));
    }
    w->rows++;
    return ANONKIT_OK;
}

int tuple_writer_close(tuple_writer *w, ak_error *err)
{
    if (w->failed) return ak_err_set(err, ANONKIT_E_IO, w->name, 0, 0, "an earlier write failed");
    uint8_t end[END_MARKER];
    memcpy(end, tuple_end_magic, 8);
    tuple_store_u64(end + 8, w->rows);
    AK_CHECK(put_bytes(w, end, sizeof end, err));
    AK_CHECK(flush_block(w, err));
    if (fflush(w->stream) != 0 || ferror(w->stream))
        return ak_err_set(err, ANONKIT_E_IO, w->name, 0, 0, "write failed: %s", strerror(errno));
    return ANONKIT_OK;
}

void tuple_writer_free(tuple_writer *w)
{
    if (!w) return;
    tuple_schema_clear(&w->schema);
    free(w->buf);
    free(w->name);
    free(w);
}

uint64_t tuple_writer_rows(const tuple_writer *w) { return w->rows; }
uint64_t tuple_writer_blocks(const tuple_writer *w) { return w->blocks; }
uint64_t tuple_writer_bytes(const tuple_writer *w) { return w->bytes; }
const tuple_schema *tuple_writer_schema(const tuple_writer *w) { return &w->schema; }

/* ------------------------------------------------------------------ reader -- */

struct tuple_reader {
    int fd;
    char *path;
    tuple_schema schema;
    uint64_t rows;      /* from the end marker */
    uint64_t data_start, data_end, pos; /* byte offsets in the file; pos = next byte to read */
    uint8_t *buf;       /* block_size + row_width bytes */
    size_t block_size, len, next; /* bytes in buf; offset of the next row in buf */
    uint64_t blocks;
};

/* Reads exactly len bytes at offset; returns the bytes read (short at the end of
 * the file) or -1 with errno set. */
static ssize_t read_at(int fd, void *buf, size_t len, uint64_t offset)
{
    size_t done = 0;
    while (done < len) {
        ssize_t n = pread(fd, (char *)buf + done, len - done, (off_t)(offset + done));
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return -1;
        if (n == 0) break;
        done += (size_t)n;
    }
    return (ssize_t)done;
}

/* A header field: "text" of at most TUPLE_MAX_NAME bytes, copied NUL-terminated. */
static int get_text(const uint8_t **p, const uint8_t *end, char **out)
{
    if (end - *p < 4) return -1;
    uint32_t n = tuple_load_u32(*p);
    *p += 4;
    if (n > TUPLE_MAX_NAME || (size_t)(end - *p) < n) return -1;
    if (!(*out = malloc((size_t)n + 1))) return -2;
    memcpy(*out, *p, n);
    (*out)[n] = '\0';
    *p += n;
    return 0;
}

/* Decodes the column descriptors of a header into r->schema. */
static int decode_columns(tuple_reader *r, const uint8_t *p, const uint8_t *end, uint32_t ncolumns,
                          ak_error *err)
{
    char *name = NULL, **labels = NULL;
    uint32_t nlabels = 0;
    int rc = ANONKIT_OK;
    for (uint32_t i = 0; i < ncolumns; i++) {
        const char *what = "truncated";
        if (end - p < 4) goto malformed;
        uint32_t type = tuple_load_u32(p);
        p += 4;
        int got = get_text(&p, end, &name);
        if (got == -2) goto nomem;
        if (got < 0) goto malformed;
        what = "empty column name in";
        if (!*name) goto malformed;
        if (!tuple_type_size((tuple_type)type)) {
            rc = ak_err_set(err, ANONKIT_E_INPUT, r->path, 0, 0,
                            "not a tuple file this version reads: column '%s' has unknown type %u", name, type);
            goto fail;
        }
        if (type == TUPLE_CODE) {
            what = "truncated";
            if (end - p < 4) goto malformed;
            nlabels = tuple_load_u32(p);
            p += 4;
            if (nlabels > (size_t)(end - p) / 4) goto malformed; /* each label takes at least 4 bytes */
            if (nlabels && !(labels = calloc(nlabels, sizeof *labels))) goto nomem;
            for (uint32_t j = 0; j < nlabels; j++) {
                got = get_text(&p, end, &labels[j]);
                if (got == -2) goto nomem;
                if (got < 0) goto malformed;
            }
        }
        if ((rc = tuple_schema_add(&r->schema, name, (tuple_type)type, (const char *const *)labels, nlabels, err)) < 0)
            goto fail;
        for (uint32_t j = 0; j < nlabels; j++) free(labels[j]);
        free(labels);
        free(name);
        labels = NULL, name = NULL, nlabels = 0;
        continue;
    malformed:
        rc = ak_err_set(err, ANONKIT_E_INPUT, r->path, 0, 0, "%s header: column %u of %u is malformed", what, i + 1,
                        ncolumns);
        goto fail;
    }
    if (p != end)
        return ak_err_set(err, ANONKIT_E_INPUT, r->path, 0, 0, "malformed header: %zu bytes after the last column",
                          (size_t)(end - p));
    return ANONKIT_OK;
nomem:
    rc = ak_err_nomem(err);
fail:
    if (labels)
        for (uint32_t j = 0; j < nlabels; j++) free(labels[j]);
    free(labels);
    free(name);
    return rc;
}

static int read_header(tuple_reader *r, uint64_t file_size, ak_error *err)
{
    uint8_t fixed[FIXED_HEADER];
    ssize_t got = read_at(r->fd, fixed, sizeof fixed, 0);
    if (got < 0) return ak_err_set(err, ANONKIT_E_IO, r->path, 0, 0, "read failed: %s", strerror(errno));
    if (got >= 8 && memcmp(fixed, tuple_magic, 8) != 0)
        return ak_err_set(err, ANONKIT_E_INPUT, r->path, 0, 0, "not an anonkit tuple file (bad magic: expected \"AKTUPLE1\")");
    if (got < FIXED_HEADER)
        return ak_err_set(err, ANONKIT_E_INPUT, r->path, 0, 0, "truncated file: %zd bytes, shorter than the %d-byte header",
                          got, FIXED_HEADER);
    uint32_t version = tuple_load_u32(fixed + 8), hsize = tuple_load_u32(fixed + 12);
    uint32_t ncolumns = tuple_load_u32(fixed + 16), width = tuple_load_u32(fixed + 20);
    if (version != TUPLE_VERSION)
        return ak_err_set(err, ANONKIT_E_INPUT, r->path, 0, 0, "tuple format version %u, this anonkit reads version %d",
                          version, TUPLE_VERSION);
    if (hsize < FIXED_HEADER || hsize > TUPLE_MAX_HEADER || ncolumns < 1 || ncolumns > TUPLE_MAX_COLUMNS)
        return ak_err_set(err, ANONKIT_E_INPUT, r->path, 0, 0,
                          "malformed header: header size %u, %u columns (1 to %u columns, at most %u bytes)", hsize,
                          ncolumns, TUPLE_MAX_COLUMNS, TUPLE_MAX_HEADER);
    if (file_size < hsize)
        return ak_err_set(err, ANONKIT_E_INPUT, r->path, 0, 0, "truncated file: %llu bytes, the header alone has %u",
                          (unsigned long long)file_size, hsize);
    uint8_t *header = malloc(hsize);
    if (!header) return ak_err_nomem(err);
    got = read_at(r->fd, header, hsize, 0);
    r->blocks++;
    int rc = ANONKIT_OK;
    if (got < 0) rc = ak_err_set(err, ANONKIT_E_IO, r->path, 0, 0, "read failed: %s", strerror(errno));
    else if ((uint32_t)got < hsize) rc = ak_err_set(err, ANONKIT_E_INPUT, r->path, 0, 0, "truncated file: the header is cut short");
    else rc = decode_columns(r, header + FIXED_HEADER, header + hsize, ncolumns, err);
    free(header);
    if (rc < 0) return rc;
    if (r->schema.row_width != width)
        return ak_err_set(err, ANONKIT_E_INPUT, r->path, 0, 0,
                          "malformed header: row width %u, but the columns take %u bytes", width, r->schema.row_width);
    r->data_start = hsize;
    return ANONKIT_OK;
}

/* Checks the end marker against the file size: sets r->rows and r->data_end. */
static int read_end_marker(tuple_reader *r, uint64_t file_size, ak_error *err)
{
    const uint64_t width = r->schema.row_width, after_header = file_size - r->data_start;
    uint8_t end[END_MARKER];
    int has_end = 0;
    if (after_header >= END_MARKER) {
        ssize_t got = read_at(r->fd, end, sizeof end, file_size - END_MARKER);
        if (got < 0) return ak_err_set(err, ANONKIT_E_IO, r->path, 0, 0, "read failed: %s", strerror(errno));
        has_end = got == END_MARKER && memcmp(end, tuple_end_magic, 8) == 0;
    }
    if (!has_end) {
        if (after_header % width)
            return ak_err_set(err, ANONKIT_E_INPUT, r->path, 0, 0,
                              "truncated file: no end marker, and the last row is short (%llu of %llu bytes)",
                              (unsigned long long)(after_header % width), (unsigned long long)width);
        return ak_err_set(err, ANONKIT_E_INPUT, r->path, 0, 0,
                          "truncated file: no end marker after %llu rows (the writer did not finish)",
                          (unsigned long long)(after_header / width));
    }
    const uint64_t data = after_header - END_MARKER, rows = tuple_load_u64(end + 8);
    if (data % width)
        return ak_err_set(err, ANONKIT_E_INPUT, r->path, 0, 0,
                          "short row: the rows take %llu bytes, not a multiple of the row width %llu",
                          (unsigned long long)data, (unsigned long long)width);
    if (data / width != rows)
        return ak_err_set(err, ANONKIT_E_INPUT, r->path, 0, 0,
                          "truncated file: the end marker says %llu rows, the file holds %llu", (unsigned long long)rows,
                          (unsigned long long)(data / width));
    r->rows = rows;
    r->data_end = r->data_start + data;
    return ANONKIT_OK;
}

int tuple_reader_open(tuple_reader **out, const char *path, size_t block_size, ak_error *err)
{
    *out = NULL;
    tuple_reader *r = calloc(1, sizeof *r);
    if (!r) return ak_err_nomem(err);
    r->fd = -1;
    tuple_schema_init(&r->schema);
    r->block_size = block_size ? block_size : TUPLE_DEFAULT_BLOCK;
    int rc;
    if (!(r->path = dup_text(path))) {
        rc = ak_err_nomem(err);
        goto fail;
    }
    if ((r->fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
        rc = ak_err_set(err, ANONKIT_E_IO, path, 0, 0, "cannot open: %s", strerror(errno));
        goto fail;
    }
    struct stat st;
    if (fstat(r->fd, &st) != 0) {
        rc = ak_err_set(err, ANONKIT_E_IO, path, 0, 0, "cannot stat: %s", strerror(errno));
        goto fail;
    }
    if (!S_ISREG(st.st_mode)) {
        rc = ak_err_set(err, ANONKIT_E_INPUT, path, 0, 0, "a tuple file must be a regular file");
        goto fail;
    }
    if ((rc = read_header(r, (uint64_t)st.st_size, err)) < 0) goto fail;
    if ((rc = read_end_marker(r, (uint64_t)st.st_size, err)) < 0) goto fail;
    if (!(r->buf = malloc(r->block_size + r->schema.row_width))) {
        rc = ak_err_nomem(err);
        goto fail;
    }
    r->pos = r->data_start;
    *out = r;
    return ANONKIT_OK;
fail:
    tuple_reader_free(r);
    return rc;
}

void tuple_reader_free(tuple_reader *r)
{
    if (!r) return;
    if (r->fd >= 0) close(r->fd);
    tuple_schema_clear(&r->schema);
    free(r->buf);
    free(r->path);
    free(r);
}

const tuple_schema *tuple_reader_schema(const tuple_reader *r) { return &r->schema; }
uint64_t tuple_reader_rows(const tuple_reader *r) { return r->rows; }
uint64_t tuple_reader_blocks(const tuple_reader *r) { return r->blocks; }

/* Moves the partial row left in the buffer to its front and reads the next block. */
static int refill(tuple_reader *r, ak_error *err)
{
    size_t keep = r->len - r->next;
    memmove(r->buf, r->buf + r->next, keep);
    r->len = keep;
    r->next = 0;
    uint64_t left = r->data_end - r->pos;
    size_t want = left < r->block_size ? (size_t)left : r->block_size;
    ssize_t got = read_at(r->fd, r->buf + keep, want, r->pos);
    if (got < 0) return ak_err_set(err, ANONKIT_E_IO, r->path, 0, 0, "read failed: %s", strerror(errno));
    r->blocks++;
    r->pos += (uint64_t)got;
    r->len += (size_t)got;
    if ((size_t)got < want)
        return ak_err_set(err, ANONKIT_E_INPUT, r->path, 0, 0,
                          "truncated file: it ended after %llu of %llu rows (was it cut while being read?)",
                          (unsigned long long)((r->pos - r->data_start) / r->schema.row_width),
                          (unsigned long long)r->rows);
    return ANONKIT_OK;
}

int tuple_read_rows(tuple_reader *r, const uint8_t **rows, size_t *nrows, ak_error *err)
{
    const size_t width = r->schema.row_width;
    *rows = NULL;
    *nrows = 0;
    while (r->len - r->next < width) {
        if (r->pos == r->data_end) return 0;
        AK_CHECK(refill(r, err));
    }
    size_t n = (r->len - r->next) / width;
    *rows = r->buf + r->next;
    *nrows = n;
    r->next += n * width;
    return 1;
}

int tuple_read(tuple_reader *r, const uint8_t **row, ak_error *err)
{
    const size_t width = r->schema.row_width;
    *row = NULL;
    while (r->len - r->next < width) {
        if (r->pos == r->data_end) return 0;
        AK_CHECK(refill(r, err));
    }
    *row = r->buf + r->next;
    r->next += width;
    return 1;
}

int tuple_reader_rewind(tuple_reader *r, ak_error *err)
{
    (void)err;
    r->pos = r->data_start;
    r->len = r->next = 0;
    return ANONKIT_OK;
}
