/* outfile.h — output written to a temporary file beside its destination and
 * renamed into place only on success (DESIGN.md §1 step 3, §7), so a failed
 * run never leaves a partial file. "-" writes to stdout directly, and so does an
 * existing destination that is not a regular file (/dev/null, a FIFO). */
#ifndef AK_OUTFILE_H
#define AK_OUTFILE_H

#include <stdint.h>
#include <stdio.h>

#include "common/error.h"

typedef struct outfile {
    FILE *stream;     /* where to write */
    char *path;       /* destination, NULL for stdout */
    char *temp_path;  /* the temporary file, NULL for stdout */
} outfile;

/* Creates the temporary file now, so an unwritable destination fails before any work. */
int outfile_open(outfile *o, const char *path, ak_error *err);
/* Flushes, syncs and renames into place. */
int outfile_commit(outfile *o, ak_error *err);
/* Removes the temporary file (safe to call after commit or on a zeroed outfile). */
void outfile_abort(outfile *o);

/* Starts writing to disk what was written to stream since offset *synced
 * (and moves *synced on), without waiting for it: a large output is then
 * mostly on disk when outfile_commit's fsync comes, instead of all of it
 * being written then. Flushes the stream first. Does nothing where the
 * system has no such call or the stream is not a file; failures are left to
 * the writes and the commit to report. */
void outfile_write_behind(FILE *stream, uint64_t *synced);

#endif
