/* spool.c — private spooled copies of standard input (see spool.h).
 * O_TMPFILE is a Linux open flag (_GNU_SOURCE). */
#define _GNU_SOURCE
#include "io/spool.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Opens an unnamed file of mode 0600 in folder `base`: O_TMPFILE, or where
 * the file system has none, a file made by mkstemp and unlinked at once.
 * Returns the descriptor, or -1 with errno set. */
static int open_unnamed(const char *base)
{
#ifdef O_TMPFILE
    int fd = open(base, O_TMPFILE | O_RDWR | O_EXCL | O_CLOEXEC, 0600);
    if (fd >= 0) return fd;
#endif
    char name[4096];
    if (snprintf(name, sizeof name, "%s/anonkit-stdin-XXXXXX", base) >= (int)sizeof name) {
        errno = ENAMETOOLONG;
        return -1;
    }
    int named = mkstemp(name);
    if (named < 0) return -1;
    if (unlink(name) != 0) {
        const int e = errno;
        close(named);
        unlink(name);
        errno = e;
        return -1;
    }
    (void)fcntl(named, F_SETFD, FD_CLOEXEC); /* best effort: only keeps the copy from child programs */
    return named;
}

/* The old way, where /proc is not mounted: a named file in a private folder. */
static int open_named(spool *s, const char *base, ak_error *err)
{
    if (snprintf(s->dir, sizeof s->dir - 32, "%s/anonkit-XXXXXX", base) >= (int)sizeof s->dir - 32) {
        s->dir[0] = '\0';
        return ak_err_set(err, ANONKIT_E_IO, base, 0, 0, "the temporary folder's path is too long");
    }
    if (!mkdtemp(s->dir)) {
        const int e = errno;
        s->dir[0] = '\0';
        return ak_err_set(err, ANONKIT_E_IO, base, 0, 0, "cannot create a private temporary folder: %s", strerror(e));
    }
    const size_t dlen = strlen(s->dir); /* less than sizeof s->dir - 32 */
    memcpy(s->path, s->dir, dlen);
    memcpy(s->path + dlen, "/stdin.csv", sizeof "/stdin.csv");
    s->fd = open(s->path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (s->fd < 0) {
        const int e = errno;
        spool_remove(s);
        return ak_err_set(err, ANONKIT_E_IO, base, 0, 0, "cannot create a temporary file: %s", strerror(e));
    }
    s->has_fd = 1;
    return ANONKIT_OK;
}

/* Makes the copy: unnamed when readers can reach it through /proc/self/fd. */
static int spool_create(spool *s, const char *base, ak_error *err)
{
    int fd = open_unnamed(base);
    if (fd < 0) {
        const int e = errno;
        return ak_err_set(err, ANONKIT_E_IO, base, 0, 0, "cannot create a temporary file: %s", strerror(e));
    }
    snprintf(s->path, sizeof s->path, "/proc/self/fd/%d", fd);
    struct stat by_path, by_fd;
    if (stat(s->path, &by_path) == 0 && fstat(fd, &by_fd) == 0 && by_path.st_dev == by_fd.st_dev &&
        by_path.st_ino == by_fd.st_ino) {
        s->fd = fd;
        s->has_fd = 1;
        return ANONKIT_OK;
    }
    close(fd);
    s->path[0] = '\0';
    return open_named(s, base, err);
}

/* Writes all of buf to fd, retrying after signals. 0, or -1 with errno set. */
static int write_all(int fd, const char *buf, size_t len)
{
    size_t done = 0;
    while (done < len) {
        const ssize_t w = write(fd, buf + done, len - done);
        if (w < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        done += (size_t)w;
    }
    return 0;
}

int spool_stream_in(spool *s, FILE *in, const char *tmpdir, ak_error *err)
{
    memset(s, 0, sizeof *s);
    const char *base = tmpdir && *tmpdir ? tmpdir : getenv("TMPDIR");
    if (!base || !*base) base = "/tmp";
    if (strlen(base) > sizeof s->dir - 64)
        return ak_err_set(err, ANONKIT_E_IO, base, 0, 0, "the temporary folder's path is too long");
    AK_CHECK(spool_create(s, base, err));
    char buf[1 << 16];
    size_t got;
    int rc = ANONKIT_OK;
    while ((got = fread(buf, 1, sizeof buf, in)) > 0) {
        if (write_all(s->fd, buf, got) != 0) {
            rc = ak_err_set(err, ANONKIT_E_IO, base, 0, 0, "cannot spool standard input: %s", strerror(errno));
            break;
        }
    }
    if (rc == ANONKIT_OK && ferror(in))
        rc = ak_err_set(err, ANONKIT_E_IO, "stdin", 0, 0, "cannot read standard input: %s", strerror(errno));
    /* Readers open the path afresh, each at offset 0; the descriptor stays open
     * as long as they may (an unnamed copy lives only as long as it). */
    if (rc < 0) spool_remove(s);
    return rc;
}

int spool_open_empty(spool *s, const char *tmpdir, ak_error *err)
{
    memset(s, 0, sizeof *s);
    const char *base = tmpdir && *tmpdir ? tmpdir : getenv("TMPDIR");
    if (!base || !*base) base = "/tmp";
    if (strlen(base) > sizeof s->dir - 64)
        return ak_err_set(err, ANONKIT_E_IO, base, 0, 0, "the temporary folder's path is too long");
    return spool_create(s, base, err);
}

int spool_stream(spool *s, FILE *in, ak_error *err) { return spool_stream_in(s, in, NULL, err); }

void spool_remove(spool *s)
{
    if (s->dir[0] && s->path[0]) unlink(s->path);
    if (s->dir[0]) rmdir(s->dir);
    if (s->has_fd) close(s->fd);
    s->has_fd = 0;
    s->path[0] = s->dir[0] = '\0';
}
