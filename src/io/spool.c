/* spool.c — private spooled copies of standard input (see spool.h). */
#include "io/spool.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int spool_stream(spool *s, FILE *in, ak_error *err)
{
    memset(s, 0, sizeof *s);
    const char *base = getenv("TMPDIR");
    if (!base || !*base) base = "/tmp";
    if (strlen(base) > sizeof s->dir - 64)
        return ak_err_set(err, ANONKIT_E_IO, base, 0, 0, "the temporary folder's path is too long");
    snprintf(s->dir, sizeof s->dir - 32, "%s/anonkit-XXXXXX", base);
    if (!mkdtemp(s->dir)) {
        int e = errno;
        s->dir[0] = '\0';
        return ak_err_set(err, ANONKIT_E_IO, base, 0, 0, "cannot create a private temporary folder: %s", strerror(e));
    }
    memcpy(s->path, s->dir, strlen(s->dir));
    memcpy(s->path + strlen(s->dir), "/stdin.csv", sizeof "/stdin.csv");
    int fd = open(s->path, O_WRONLY | O_CREAT | O_EXCL, 0600);
    if (fd < 0) {
        int e = errno;
        spool_remove(s);
        return ak_err_set(err, ANONKIT_E_IO, base, 0, 0, "cannot create a temporary file: %s", strerror(e));
    }
    char buf[1 << 16];
    size_t got;
    int rc = ANONKIT_OK;
    while ((got = fread(buf, 1, sizeof buf, in)) > 0) {
        size_t done = 0;
        while (done < got) {
            ssize_t w = write(fd, buf + done, got - done);
            if (w < 0) {
                if (errno == EINTR) continue;
                rc = ak_err_set(err, ANONKIT_E_IO, s->path, 0, 0, "cannot spool standard input: %s", strerror(errno));
                break;
            }
            done += (size_t)w;
        }
        if (rc < 0) break;
    }
    if (rc == ANONKIT_OK && ferror(in))
        rc = ak_err_set(err, ANONKIT_E_IO, "stdin", 0, 0, "cannot read standard input: %s", strerror(errno));
    if (close(fd) != 0 && rc == ANONKIT_OK)
        rc = ak_err_set(err, ANONKIT_E_IO, s->path, 0, 0, "cannot spool standard input: %s", strerror(errno));
    if (rc < 0) spool_remove(s);
    return rc;
}

void spool_remove(spool *s)
{
    if (s->path[0]) unlink(s->path);
    if (s->dir[0]) rmdir(s->dir);
    s->path[0] = s->dir[0] = '\0';
}
