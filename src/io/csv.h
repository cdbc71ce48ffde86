/* csv.h — streaming RFC 4180 CSV reader and writer (docs/ARCHITECTURE.md §3, steps 1 and 3).
 *
 * The reader never holds the file as text: it reads large blocks and hands out
 * one record at a time as (pointer, length) fields that point into its block
 * buffer and stay valid until the next csv_read() call. Quoted fields are
 * unescaped in place ("" becomes "), so a field is exactly its value.
 * Accepted: quoted fields with embedded delimiters, quotes and newlines; LF and
 * CRLF line ends (a lone CR inside an unquoted field is kept as data); a final
 * record without a line end; any one-byte delimiter. Rejected with file, line
 * and column: a quote that is never closed, and characters after a closing
 * quote other than the delimiter or the line end. A completely empty line at
 * the end of the file is not a record. Field counts are checked by the caller
 * (csv_reader knows nothing of headers), except that csv_read reports the
 * count it saw. */
#ifndef AK_CSV_H
#define AK_CSV_H

#include <stdint.h>
#include <stdio.h>

#include "common/error.h"
#include "common/progress.h"
#include "common/strbuf.h"

typedef struct csv_field {
    const char *data; /* not NUL-terminated */
    uint32_t len;
} csv_field;

/* The 8 bytes from the start of a non-empty field handed out by csv_read may
 * all be read, even past the field's end (the reader's buffer is padded), so
 * short fields can be loaded as one machine word. */
#define CSV_FIELD_READABLE 8

typedef struct csv_record {
    const csv_field *fields; /* owned by the reader, valid until the next csv_read */
    uint32_t count;          /* number of fields */
    long line;               /* 1-based line on which the record starts */
    uint64_t offset;         /* byte of the input at which it starts, the same however the input is cut (an empty
                                line of a run of them: the run's first byte plus its place in the run) */
} csv_record;

typedef struct csv_reader csv_reader;

/* Opens path ("-" is not accepted here: spool stdin to a file first) for
 * reading with the given delimiter. */
int csv_reader_open(csv_reader **out /* OUT */, const char *path, char delimiter, ak_error *err);

/* Reads only bytes [offset, offset + length) of path, which must start at a
 * record boundary; the first record there is on line first_line. Used to
 * read one file in parallel pieces. */
int csv_reader_open_range(csv_reader **out /* OUT */, const char *path, char delimiter, uint64_t offset,
                          uint64_t length, long first_line, ak_error *err);

/* Reads from an already open stream (not closed by csv_reader_free); name is
 * used in messages. */
int csv_reader_open_stream(csv_reader **out /* OUT */, FILE *stream, const char *name,
                           char delimiter, ak_error *err);

/* The table backend: the rows of table t (io/memtable.h) as records, the
 * column names first as the header, without any CSV text: fields are
 * exactly those the reader would hand out of the table's CSV form (a text
 * cell points into the table's bytes, a missing cell is the empty field, a
 * number is its shortest text in the reader's scratch). t is read, never
 * changed, and must not change while the reader is open; no digest is kept
 * (csv_reader_digest does nothing: the proof of an unchanged input is for
 * files). Record offsets are row numbers; csv_reader_offset stays 0. */
struct anonkit_table;
int csv_reader_open_table(csv_reader **out /* OUT */, const struct anonkit_table *t, const char *name,
                          ak_error *err);
/* A table reader hands out the fields of the columns c with wanted[c] only
 * (one per column of t), the others as empty fields: a reader that uses a
 * few columns does not have the others' numbers formatted. No-op for a file. */
int csv_reader_table_columns(csv_reader *reader, const unsigned char *wanted, ak_error *err);
/* The same for data rows [first, first + count) of t only, no header (the
 * table's rows read in pieces, as csv_reader_open_range reads a file's). */
int csv_reader_open_table_rows(csv_reader **out /* OUT */, const struct anonkit_table *t, const char *name,
                               uint64_t first, uint64_t count, ak_error *err);

void csv_reader_free(csv_reader *reader);

/* From now on the records the reader hands out go into digest d
 * (src/io/digest.h, which says what it holds): their bytes are hashed as the
 * input holds them, before any quoted field is unescaped, segment by segment
 * (the first record of a reader that starts at the top of the file, the
 * header, is a segment of its own; a range reader starts after it); `cut` is
 * where the read that made the digest to compare with cut the file in two
 * pieces (0: none), which cuts segments too. d gets room for the file as it
 * is now. A segment's hash goes to d once the reader has passed it, at the
 * end of the input at the latest, or when the reader is freed. Returns
 * ANONKIT_E_NOMEM (with err) or ANONKIT_OK. */
struct input_digest;
int csv_reader_digest(csv_reader *reader, struct input_digest *d, uint64_t cut, ak_error *err);

/* Reads the next record: returns 1 and fills rec, 0 at end of input, or a
 * negative status with err filled (ANONKIT_E_INPUT for malformed CSV,
 * ANONKIT_E_IO for a read failure). */
int csv_read(csv_reader *reader, csv_record *rec /* OUT */, ak_error *err);

/* From now on the reader counts the records it hands out and the bytes it
 * reads into p (NULL: stop), once per block read and at the end of the input
 * (records handed out before the call, such as a header, are not counted; the
 * bytes read before it are);
 * a worker reader (worker 1) only adds and checks the cancel flag, the
 * calling thread's may call the progress callback. Once the run is
 * cancelled, csv_read fails with ANONKIT_E_CANCELLED. */
void csv_reader_progress(csv_reader *reader, ak_progress *p, int worker);

/* Bytes consumed so far (for throughput figures and progress). */
uint64_t csv_reader_offset(const csv_reader *reader);

/* The line on which the next record starts (after the last record: one past
 * the last line consumed, counting empty lines the reader skipped). */
long csv_reader_line(const csv_reader *reader);

/* Whether any field read so far began with a quote (so that a line end may
 * have been inside a field). */
int csv_reader_saw_quote(const csv_reader *reader);

/* Columns by name (csv_columns.c). The index of the header field named
 * `name`, or -1. */
int csv_column_index(const csv_record *header, const char *name);
/* The columns of names[0..n) into cols; a usage error on file `shown`, line
 * 1, naming the first missing one "(given as <what>)". */
int csv_find_columns(const csv_record *header, const char *shown, const char *const *names, size_t n,
                     const char *what, uint32_t *cols, ak_error *err);
/* The key of a row's fields cols[0..n): each text prefixed by its 4-byte
 * length, so that two rows have equal keys exactly when their texts are
 * equal field by field. Into *key, grown as needed (*key_cap); its length
 * into *len. */
int csv_row_key(const csv_record *rec, const uint32_t *cols, size_t n, char **key, size_t *key_cap, size_t *len,
                ak_error *err);

/* Refuses a delimiter the format cannot carry (a quote, CR or LF), naming
 * `name`; shared by the reader and the writer. */
int csv_check_delimiter(char delimiter, const char *name, ak_error *err);

/* Buffered writer. Fields are quoted only when they contain the delimiter, a
 * quote, CR or LF (or begin/end with a space, to survive trimming readers); a
 * record made of one empty field is written as "" so it is not an empty line. */
typedef struct csv_writer csv_writer;

/* Writes to stream (not closed by csv_writer_free); name is used in messages. */
int csv_writer_open_stream(csv_writer **out /* OUT */, FILE *stream, const char *name,
                           char delimiter, ak_error *err);
/* The table backend: the fields written go into table t (empty, created by
 * the caller; io/memtable.h) instead of CSV text, the first record naming its
 * text columns; csv_write_raw and _block (CSV text) are refused. The caller
 * ends with memtable_writer_finish, after which t holds what reading the CSV
 * back would (memtable_from_csv). */
struct anonkit_table;
int csv_writer_open_table(csv_writer **out /* OUT */, struct anonkit_table *t, const char *name, ak_error *err);
void csv_writer_free(csv_writer *writer);

/* Appends one field to the current record (a delimiter is written before every
 * field but the first of a record). */
int csv_write_field(csv_writer *writer, const char *data, size_t len, ak_error *err);
/* Ends the current record with "\n". */
int csv_write_end(csv_writer *writer, ak_error *err);
/* Appends already formatted bytes of a record verbatim (no quoting, no delimiter). */
int csv_write_raw(csv_writer *writer, const char *data, size_t len, ak_error *err);
/* Writes block's bytes (already formatted records, like csv_write_raw) and
 * leaves block empty. In the background mode its buffer is handed to the
 * writing thread without a copy, and block receives a spare buffer of the
 * writer's in exchange (perhaps none yet: data NULL), waiting for one while
 * all are queued; the caller frees whichever buffer block holds in the end
 * (strbuf_free), the writer those it holds. */
int csv_write_block(csv_writer *writer, strbuf *block, ak_error *err);
/* Flushes the buffer to the stream and checks the stream for errors; in the
 * background mode waits until the thread has written everything first. */
int csv_writer_flush(csv_writer *writer, ak_error *err);

/* Moves the writes of the stream to a thread of the writer's own (the
 * background mode; what was buffered is written first). The writer then owns
 * nbufs buffers of buf_size bytes, allocated when first used, and queues each
 * to the thread as it fills; with behind_bytes > 0 the thread also starts
 * the disk write of every behind_bytes it writes (outfile_write_behind). The
 * stream is not the caller's again until csv_writer_flush returns, and
 * csv_writer_free ends the thread (what is still queued is dropped). The
 * same bytes are written as without it; a failure of the thread is reported
 * with the same message by the next call that hands a buffer over, or by
 * csv_writer_flush. Where no thread can be started the writer simply stays
 * synchronous. */
int csv_writer_background(csv_writer *writer, unsigned nbufs, size_t buf_size, uint64_t behind_bytes,
                          ak_error *err);

/* Appends the CSV form of one field to dst (quoted when it contains the
 * delimiter, a quote, CR or LF, or begins or ends with a space; embedded
 * quotes doubled) and returns the bytes written. dst must have room for
 * csv_escaped_max(len) bytes. The writer quotes by the same rule. */
size_t csv_escape(char *dst, const char *src, size_t len, char delimiter);
static inline size_t csv_escaped_max(size_t len) { return 2 * len + 2; }
/* Whether a field needs quoting under that rule. */
int csv_needs_quotes(const char *src, size_t len, char delimiter);

/* Whether src[0..len) holds neither a quote nor a CR. The bytes a reader
 * holds from the start of one field to the end of a later one of the same
 * record, when that is so, come from unquoted fields that need no quoting
 * (an unquoted field holds no delimiter and no LF) unless one of them begins
 * or ends with a space: they are then already those fields' CSV form,
 * delimiters included. */
int csv_run_is_plain(const char *src, size_t len);

/* The byte after the first line end at or after the middle of bytes
 * [start, size) of path, or 0 when none lies within a few MiB of it: where
 * a file may be cut into two pieces read on two threads (when no field of
 * the first piece begins with a quote, a line end there ends a record). */
uint64_t csv_find_split(const char *path, uint64_t start, uint64_t size);

/* About how many lines bytes [offset, offset + length) of path hold, from the
 * line ends in their first 64 KiB (somewhat more, rather than fewer); 0 when
 * it cannot be read. For sizing arrays before reading. */
uint64_t csv_estimate_lines(const char *path, uint64_t offset, uint64_t length);

#endif
