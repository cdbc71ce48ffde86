/* spill.h — private scratch storage of the out-of-core algorithms (docs/ARCHITECTURE.md §10).
 *
 * Spill files hold raw personal data, so they never have a name: they are
 * created in the temporary folder itself (--tmpdir, $TMPDIR, /tmp) with
 * O_TMPFILE and mode 0600, or where the file system cannot, by mkstemp and
 * unlinked at once, before anything is written. The kernel frees them when
 * they are closed or the process ends, however it ends (SIGKILL included),
 * and no private folder is made, so there is nothing for a signal handler
 * to remove.
 *
 * Reads and writes go through buffers of one block ([LeFevre07] §5.1: 256 KiB) and are
 * counted in a spill_stats, so a run can be held against the I/O model of
 * [LeFevre07] §4. */
#ifndef AK_SPILL_H
#define AK_SPILL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "common/error.h"

/* The block size of [LeFevre07] §5.1. */
#define SPILL_DEFAULT_BLOCK ((size_t)256 << 10)

/* Where a run's spill files go. */
typedef struct spill_dir {
    char folder[4096]; /* the temporary folder the unnamed files are created in; "" when none */
} spill_dir;

/* Takes parent (NULL or "": $TMPDIR, else /tmp) as the folder for spill files,
 * after making one there and dropping it, so that a folder that cannot hold
 * them is an error at once. Creates nothing that stays. */
int spill_dir_create(spill_dir *dir, const char *parent, ak_error *err);
/* Forgets the folder (nothing to remove); safe on a zeroed one. */
void spill_dir_remove(spill_dir *dir);

typedef struct spill_stats {
    uint64_t blocks_read, blocks_written; /* one per read(2)/write(2) of up to a block */
    uint64_t bytes_read, bytes_written;
} spill_stats;

/* An unnamed file in the spill files' folder, written by appending and read from
 * the start any number of times. */
typedef struct spill_file {
    int fd;        /* -1 when closed */
    uint64_t size; /* bytes written */
} spill_file;

int spill_file_open(spill_file *f, const spill_dir *dir, ak_error *err);
/* Closes (and so frees) the file; safe on a closed one. */
void spill_file_close(spill_file *f);

/* Appends to a spill file through one block of buffer. */
typedef struct spill_writer {
    spill_file *file;
    const char *dir; /* for messages */
    uint8_t *buf;
    size_t block, used;
    spill_stats *stats;
} spill_writer;

int spill_writer_init(spill_writer *w, spill_file *file, const spill_dir *dir, size_t block, spill_stats *stats,
                      ak_error *err);
/* Writes out whole blocks as they fill; a full disk is reported with the folder. */
int spill_write(spill_writer *w, const void *data, size_t len, ak_error *err);
/* spill_write with the common case inline: data that fits in the buffer
 * without filling it is copied without a call (a repartitioning scan writes
 * every tuple through one of these). */
static inline int spill_put(spill_writer *w, const void *data, size_t len, ak_error *err)
{
    if (w->block - w->used > len) {
        memcpy(w->buf + w->used, data, len);
        w->used += len;
        return ANONKIT_OK;
    }
    return spill_write(w, data, len, err);
}
/* Writes out what is buffered (call before the file is read). */
int spill_writer_flush(spill_writer *w, ak_error *err);
void spill_writer_free(spill_writer *w);

/* Reads a spill file from the start in blocks. */
typedef struct spill_reader {
    const spill_file *file;
    const spill_file *then; /* read after file, as if appended to it; NULL when none */
    uint8_t *buf;          /* cap + SPILL_READ_SLACK bytes, from the first read on */
    size_t block, cap;     /* cap: the block, or less when the files are smaller */
    size_t len, at;        /* buffered bytes buf[at .. len) */
    uint64_t offset;       /* file offset of the next read */
    uint8_t *staging;      /* a record that straddles two blocks */
    size_t staging_cap;
    spill_stats *stats;
} spill_reader;

int spill_reader_init(spill_reader *r, const spill_file *file, size_t block, spill_stats *stats, ak_error *err);
/* Has r go on reading `then` once file ends, as one stream (each file must
 * hold whole records): a file written in two pieces at once reads as one. */
static inline void spill_reader_then(spill_reader *r, const spill_file *then) { r->then = then; }
/* Bytes past the end of what spill_read and spill_read_records hand out that
 * may be read (and ignored), so that a decoder can load a 3-byte field as a
 * 4-byte word. */
#define SPILL_READ_SLACK 8

/* Points *data at the next `len` bytes (valid until the next call). Returns 1,
 * 0 at the end of the file, or a negative status (a file shorter than a whole
 * record is ANONKIT_E_INTERNAL: spill files are only written by anonkit). */
int spill_read(spill_reader *r, size_t len, const uint8_t **data /* OUT */, ak_error *err);
/* Points *data at the next *count (1 to max) records of `width` bytes, all
 * that the buffered block holds whole, so that a scan handles a block at a
 * time; a record straddling two blocks comes alone. Valid until the next
 * call. Returns 1, 0 at the end of the file, or a negative status as
 * spill_read. */
int spill_read_records(spill_reader *r, size_t width, size_t max, const uint8_t **data /* OUT */,
                       size_t *count /* OUT */, ak_error *err);
void spill_reader_free(spill_reader *r);

#endif
