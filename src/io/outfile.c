/* outfile.c — atomic output files: write to a temporary file in the
 * destination's folder, fsync, rename (DESIGN.md §7: no partial output).
 * outfile_write_behind uses sync_file_range, a Linux call (_GNU_SOURCE). */
#define _GNU_SOURCE
#include "io/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int outfile_open(outfile *o, const char *path, ak_error *err)
{
    memset(o, 0, sizeof *o);
    if (strcmp(path, "-") == 0) {
        o->stream = stdout;
        return ANONKIT_OK;
    }
    size_t len = strlen(path);
    o->path = malloc(len + 1);
    if (!o->path) return ak_err_nomem(err);
    memcpy(o->path, path, len + 1);
    /* An existing destination that is not a regular file (/dev/null, a FIFO, a
     * terminal) is written directly: a temporary file renamed over it would
     * replace the device or pipe with a regular file. */
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
        if (!(o->stream = fopen(path, "wb"))) {
            int e = errno;
            outfile_abort(o);
            return ak_err_set(err, ANONKIT_E_IO, path, 0, 0, "cannot open the output file: %s", strerror(e));
        }
        return ANONKIT_OK;
    }
    o->temp_path = malloc(len + 32);
    if (!o->temp_path) {
        outfile_abort(o);
        return ak_err_nomem(err);
    }
    snprintf(o->temp_path, len + 32, "%s.tmp-XXXXXX", path);
    int fd = mkstemp(o->temp_path);
    if (fd < 0) {
        int e = errno;
        free(o->temp_path);
        o->temp_path = NULL;
        outfile_abort(o);
        return ak_err_set(err, ANONKIT_E_IO, path, 0, 0, "cannot create the output file: %s", strerror(e));
    }
    if (fchmod(fd, 0644) != 0 || !(o->stream = fdopen(fd, "wb"))) {
        int e = errno;
        close(fd);
        outfile_abort(o);
        return ak_err_set(err, ANONKIT_E_IO, path, 0, 0, "cannot open the output file: %s", strerror(e));
    }
    return ANONKIT_OK;
}

int outfile_commit(outfile *o, ak_error *err)
{
    if (!o->path) {
        if (fflush(o->stream) != 0 || ferror(o->stream))
            return ak_err_set(err, ANONKIT_E_IO, "stdout", 0, 0, "write failed: %s", strerror(errno));
        return ANONKIT_OK;
    }
    int rc = ANONKIT_OK;
    if (!o->temp_path) { /* written directly: a device or a pipe, nothing to sync or rename */
        if (fflush(o->stream) != 0 || ferror(o->stream))
            rc = ak_err_set(err, ANONKIT_E_IO, o->path, 0, 0, "write failed: %s", strerror(errno));
        if (fclose(o->stream) != 0 && rc == ANONKIT_OK)
            rc = ak_err_set(err, ANONKIT_E_IO, o->path, 0, 0, "write failed: %s", strerror(errno));
        o->stream = NULL;
        free(o->path);
        o->path = NULL;
        return rc;
    }
    if (fflush(o->stream) != 0 || ferror(o->stream) || fsync(fileno(o->stream)) != 0)
        rc = ak_err_set(err, ANONKIT_E_IO, o->path, 0, 0, "write failed: %s", strerror(errno));
    if (fclose(o->stream) != 0 && rc == ANONKIT_OK)
        rc = ak_err_set(err, ANONKIT_E_IO, o->path, 0, 0, "write failed: %s", strerror(errno));
    o->stream = NULL;
    if (rc == ANONKIT_OK && rename(o->temp_path, o->path) != 0)
        rc = ak_err_set(err, ANONKIT_E_IO, o->path, 0, 0, "cannot rename the finished output into place: %s",
                        strerror(errno));
    if (rc != ANONKIT_OK) {
        outfile_abort(o);
        return rc;
    }
    free(o->temp_path);
    free(o->path);
    o->temp_path = o->path = NULL;
    return ANONKIT_OK;
}

void outfile_write_behind(FILE *stream, uint64_t *synced)
{
#if defined(SYNC_FILE_RANGE_WRITE)
    if (fflush(stream) != 0) return; /* the error stays on the stream for the writer to report */
    const off_t at = ftello(stream);
    if (at < 0 || (uint64_t)at <= *synced) return; /* not a file (a pipe), or nothing new */
    (void)sync_file_range(fileno(stream), (off_t)*synced, at - (off_t)*synced, SYNC_FILE_RANGE_WRITE);
    *synced = (uint64_t)at;
#else
    (void)stream;
    (void)synced;
#endif
}

void outfile_abort(outfile *o)
{
    if (o->stream && o->stream != stdout) fclose(o->stream);
    o->stream = NULL;
    if (o->temp_path) unlink(o->temp_path);
    free(o->temp_path);
    free(o->path);
    o->temp_path = o->path = NULL;
}
