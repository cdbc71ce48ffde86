/* tuple.h — files of fixed-width binary tuples (docs/ARCHITECTURE.md §10; [LeFevre07] §5.1: "disk-resident
 * data partitions were stored as ordinary files of fixed-width binary-encoded tuples",
 * read and written in large blocks). The out-of-core algorithms spill and read these;
 * `anonkit generate --format binary` writes them. The byte layout is specified in
 * docs/tuple-format.md: a header (magic "AKTUPLE1", version, column count, row width,
 * per column its name, type and, for codes, labels), rows of row_width bytes,
 * little-endian, without padding, and an end marker holding the row count.
 *
 * Ownership: a tuple_schema owns copies of its names and labels; a reader owns its
 * schema and hands out pointers into its buffer that stay valid until its next call. */
#ifndef AK_TUPLE_H
#define AK_TUPLE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "common/error.h"

/* Column types; the values are the type numbers stored in the header. */
typedef enum tuple_type {
    TUPLE_I32 = 1,  /* signed 32-bit integer */
    TUPLE_I64 = 2,  /* signed 64-bit integer */
    TUPLE_F64 = 3,  /* IEEE 754 binary64 */
    TUPLE_CODE = 4  /* unsigned 32-bit code of a categorical value: index into the column's labels */
} tuple_type;

/* Bytes a value of the type takes in a row (0 for an unknown type). */
uint32_t tuple_type_size(tuple_type type);
/* "i32", "i64", "f64", "code" (or "?"). */
const char *tuple_type_name(tuple_type type);

typedef struct tuple_column {
    char *name;       /* non-empty */
    tuple_type type;
    uint32_t offset;  /* byte offset of the value within a row */
    uint32_t nlabels; /* TUPLE_CODE: number of labels (codes 0..nlabels-1); otherwise 0 */
    char **labels;    /* TUPLE_CODE: label of each code; otherwise NULL */
} tuple_column;

typedef struct tuple_schema {
    tuple_column *columns;
    uint32_t ncolumns;
    uint32_t row_width; /* sum of the columns' sizes: rows are packed */
} tuple_schema;

/* Limits the reader enforces on a header (a writer refuses schemas beyond them). */
#define TUPLE_MAX_COLUMNS 65536u
#define TUPLE_MAX_NAME 65536u            /* bytes of one column name or label */
#define TUPLE_MAX_HEADER (64u << 20)     /* bytes of the whole header */

/* The block size of [LeFevre07] §5.1, used when a caller passes 0. */
#define TUPLE_DEFAULT_BLOCK ((size_t)256 << 10)

void tuple_schema_init(tuple_schema *schema);
/* Appends a column. labels/nlabels are given for TUPLE_CODE only (copied). */
int tuple_schema_add(tuple_schema *schema, const char *name, tuple_type type, const char *const *labels,
                     uint32_t nlabels, ak_error *err);
/* Index of the column named name, or -1. */
long tuple_schema_find(const tuple_schema *schema, const char *name);
/* Releases what the schema owns and leaves it empty. */
void tuple_schema_clear(tuple_schema *schema);

/* Little-endian loads and stores of one value at row + offset (any alignment). */
static inline void tuple_store_u32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8), p[2] = (uint8_t)(v >> 16), p[3] = (uint8_t)(v >> 24);
}
static inline uint32_t tuple_load_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline void tuple_store_u64(uint8_t *p, uint64_t v)
{
    tuple_store_u32(p, (uint32_t)v);
    tuple_store_u32(p + 4, (uint32_t)(v >> 32));
}
static inline uint64_t tuple_load_u64(const uint8_t *p)
{
    return (uint64_t)tuple_load_u32(p) | (uint64_t)tuple_load_u32(p + 4) << 32;
}
static inline void tuple_put_i32(uint8_t *row, uint32_t offset, int32_t v) { tuple_store_u32(row + offset, (uint32_t)v); }
static inline int32_t tuple_get_i32(const uint8_t *row, uint32_t offset) { return (int32_t)tuple_load_u32(row + offset); }
static inline void tuple_put_i64(uint8_t *row, uint32_t offset, int64_t v) { tuple_store_u64(row + offset, (uint64_t)v); }
static inline int64_t tuple_get_i64(const uint8_t *row, uint32_t offset) { return (int64_t)tuple_load_u64(row + offset); }
static inline void tuple_put_code(uint8_t *row, uint32_t offset, uint32_t v) { tuple_store_u32(row + offset, v); }
static inline uint32_t tuple_get_code(const uint8_t *row, uint32_t offset) { return tuple_load_u32(row + offset); }
static inline void tuple_put_f64(uint8_t *row, uint32_t offset, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    tuple_store_u64(row + offset, bits);
}
static inline double tuple_get_f64(const uint8_t *row, uint32_t offset)
{
    uint64_t bits = tuple_load_u64(row + offset);
    double v;
    memcpy(&v, &bits, sizeof v);
    return v;
}

/* ---- writer: header, then rows, through a buffer flushed in whole blocks ---- */

typedef struct tuple_writer tuple_writer;

/* Starts a tuple file on stream (not closed by the writer; name is used in
 * messages). The schema is copied. Every write to the stream is one block of
 * block_size bytes (0: TUPLE_DEFAULT_BLOCK), except the last one. */
int tuple_writer_open(tuple_writer **out /* OUT */, FILE *stream, const char *name, const tuple_schema *schema,
                      size_t block_size, ak_error *err);
/* Appends one row of schema.row_width bytes. */
int tuple_write(tuple_writer *writer, const uint8_t *row, ak_error *err);
/* Writes the buffered rows and the end marker and flushes the stream. A file
 * whose writer was not closed has no end marker and is rejected by the reader. */
int tuple_writer_close(tuple_writer *writer, ak_error *err);
void tuple_writer_free(tuple_writer *writer);
uint64_t tuple_writer_rows(const tuple_writer *writer);
/* Blocks written to the stream so far (the last, partial one included). */
uint64_t tuple_writer_blocks(const tuple_writer *writer);
/* Bytes written to the stream so far. */
uint64_t tuple_writer_bytes(const tuple_writer *writer);
const tuple_schema *tuple_writer_schema(const tuple_writer *writer);

/* ---- reader: checks header and end marker on open, then rows block by block ---- */

typedef struct tuple_reader tuple_reader;

/* Opens a tuple file (a regular file: its size is checked against the end
 * marker before any row is read). Fails with ANONKIT_E_INPUT naming the file
 * for a bad magic, an unknown version or type, a truncated header, a file cut
 * short (no end marker) and a short last row. Reads of row data are blocks of
 * block_size bytes (0: TUPLE_DEFAULT_BLOCK). */
int tuple_reader_open(tuple_reader **out /* OUT */, const char *path, size_t block_size, ak_error *err);
void tuple_reader_free(tuple_reader *reader);
const tuple_schema *tuple_reader_schema(const tuple_reader *reader);
/* Number of rows in the file (from the end marker). */
uint64_t tuple_reader_rows(const tuple_reader *reader);
/* The next whole rows already read: *rows points at *nrows rows of row_width
 * bytes, valid until the next call. Returns 1, 0 at the end, or a negative status
 * (ANONKIT_E_INPUT when the file turns out shorter than its end marker says). */
int tuple_read_rows(tuple_reader *reader, const uint8_t **rows /* OUT */, size_t *nrows /* OUT */, ak_error *err);
/* One row at a time: 1 with *row set, 0 at the end, or a negative status. */
int tuple_read(tuple_reader *reader, const uint8_t **row /* OUT */, ak_error *err);
/* Starts over at the first row (blocks keep counting). */
int tuple_reader_rewind(tuple_reader *reader, ak_error *err);
/* Blocks read from the file so far: one for the header, then one per read of
 * row data (the 16-byte end-marker check at open is not counted). */
uint64_t tuple_reader_blocks(const tuple_reader *reader);

#endif
