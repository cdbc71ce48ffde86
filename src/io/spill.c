/* spill.c — unnamed spill files in the temporary folder and block-counted I/O
 * (see spill.h; docs/ARCHITECTURE.md §10, [LeFevre07] §5.1). */
#define _GNU_SOURCE /* O_TMPFILE */
#include "io/spill.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Creates a file that has no name in folder and sets *fd: O_TMPFILE where the
 * file system has it (nothing can leave it behind, not even SIGKILL), else a
 * 0600 file made by mkstemp and unlinked at once, before any data is written.
 * Returns 0 or the errno of the failure. */
static int unnamed_file(const char *folder, int *fd)
{
#ifdef O_TMPFILE
    *fd = open(folder, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (*fd >= 0) return 0;
    if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL) return errno;
#endif
    char path[sizeof ((spill_dir *)0)->folder + 32];
    for (int attempt = 0; attempt < 100; attempt++) {
        snprintf(path, sizeof path, "%s/anonkit-spill-XXXXXX", folder);
        *fd = mkstemp(path);
        if (*fd >= 0) {
            unlink(path);
            (void)fcntl(*fd, F_SETFD, FD_CLOEXEC);
            return 0;
        }
        if (errno != EEXIST) break;
    }
    return errno;
}

int spill_dir_create(spill_dir *dir, const char *parent, ak_error *err)
{
    memset(dir, 0, sizeof *dir);
    if (!parent || !*parent) parent = getenv("TMPDIR");
    if (!parent || !*parent) parent = "/tmp";
    if (strlen(parent) > sizeof dir->folder - 64)
        return ak_err_set(err, ANONKIT_E_IO, parent, 0, 0, "the temporary folder's path is too long");
    snprintf(dir->folder, sizeof dir->folder, "%s", parent);
    /* one file made and dropped at once, so that an unusable folder is an
     * error before any input is read */
    int fd = -1;
    const int e = unnamed_file(dir->folder, &fd);
    if (e) {
        dir->folder[0] = '\0';
        return ak_err_set(err, ANONKIT_E_IO, parent, 0, 0, "cannot create spill files in the temporary folder: %s",
                          strerror(e));
    }
    close(fd);
    return ANONKIT_OK;
}

void spill_dir_remove(spill_dir *dir)
{
    dir->folder[0] = '\0';
}

int spill_file_open(spill_file *f, const spill_dir *dir, ak_error *err)
{
    f->size = 0;
    const int e = unnamed_file(dir->folder, &f->fd);
    if (e) {
        f->fd = -1;
        return ak_err_set(err, ANONKIT_E_IO, dir->folder, 0, 0, "cannot create a spill file: %s", strerror(e));
    }
    return ANONKIT_OK;
}

void spill_file_close(spill_file *f)
{
    if (f->fd >= 0) close(f->fd);
    f->fd = -1;
    f->size = 0;
}

int spill_writer_init(spill_writer *w, spill_file *file, const spill_dir *dir, size_t block, spill_stats *stats,
                      ak_error *err)
{
    memset(w, 0, sizeof *w);
    w->file = file;
    w->dir = dir->folder;
    w->block = block ? block : SPILL_DEFAULT_BLOCK;
    w->stats = stats;
    if (!(w->buf = malloc(w->block))) return ak_err_nomem(err);
    return ANONKIT_OK;
}

/* Writes buf[0 .. len) at the end of the file as one counted block. */
static int write_block(spill_writer *w, const uint8_t *buf, size_t len, ak_error *err)
{
    size_t done = 0;
    while (done < len) {
        ssize_t got = pwrite(w->file->fd, buf + done, len - done, (off_t)(w->file->size + done));
        if (got < 0) {
            if (errno == EINTR) continue;
            return ak_err_set(err, ANONKIT_E_IO, w->dir, 0, 0, "cannot write a spill file: %s", strerror(errno));
        }
        if (got == 0)
            return ak_err_set(err, ANONKIT_E_IO, w->dir, 0, 0, "cannot write a spill file: %s", strerror(ENOSPC));
        done += (size_t)got;
    }
    w->file->size += len;
    w->stats->blocks_written++;
    w->stats->bytes_written += len;
    return ANONKIT_OK;
}

int spill_write(spill_writer *w, const void *data, size_t len, ak_error *err)
{
    const uint8_t *p = data;
    while (len) {
        size_t room = w->block - w->used, take = len < room ? len : room;
        memcpy(w->buf + w->used, p, take);
        w->used += take;
        p += take;
        len -= take;
        if (w->used == w->block) {
            AK_CHECK(write_block(w, w->buf, w->used, err));
            w->used = 0;
        }
    }
    return ANONKIT_OK;
}

int spill_writer_flush(spill_writer *w, ak_error *err)
{
    if (w->used) AK_CHECK(write_block(w, w->buf, w->used, err));
    w->used = 0;
    return ANONKIT_OK;
}

void spill_writer_free(spill_writer *w)
{
    free(w->buf);
    w->buf = NULL;
}

int spill_reader_init(spill_reader *r, const spill_file *file, size_t block, spill_stats *stats, ak_error *err)
{
    memset(r, 0, sizeof *r);
    r->file = file;
    r->block = block ? block : SPILL_DEFAULT_BLOCK;
    r->stats = stats;
    (void)err; /* (the buffer comes with the first read) */
    return ANONKIT_OK;
}

/* Reads the next block into buf; returns the bytes read (0 at the end). */
static long read_block(spill_reader *r, ak_error *err)
{
    if (!r->buf) { /* a block, or less when the files hold less (most partitions are small) */
        const uint64_t bytes = r->file->size + (r->then ? r->then->size : 0);
        r->cap = bytes < r->block ? (size_t)bytes : r->block;
        if (!(r->buf = malloc(r->cap + SPILL_READ_SLACK))) return ak_err_nomem(err);
    }
    if (r->offset == r->file->size && r->then) { /* on into the next file */
        r->file = r->then;
        r->then = NULL;
        r->offset = 0;
    }
    uint64_t left = r->file->size - r->offset;
    size_t want = left < r->cap ? (size_t)left : r->cap, done = 0;
    while (done < want) {
        ssize_t got = pread(r->file->fd, r->buf + done, want - done, (off_t)(r->offset + done));
        if (got < 0) {
            if (errno == EINTR) continue;
            return ak_err_set(err, ANONKIT_E_IO, NULL, 0, 0, "cannot read a spill file: %s", strerror(errno));
        }
        if (got == 0) return ak_err_set(err, ANONKIT_E_INTERNAL, NULL, 0, 0, "a spill file is shorter than written");
        done += (size_t)got;
    }
    memset(r->buf + want, 0, SPILL_READ_SLACK); /* (read, never used) */
    r->offset += want;
    r->len = want;
    r->at = 0;
    if (want) {
        r->stats->blocks_read++;
        r->stats->bytes_read += want;
    }
    return (long)want;
}

int spill_read(spill_reader *r, size_t len, const uint8_t **data, ak_error *err)
{
    if (r->len - r->at >= len) {
        *data = r->buf + r->at;
        r->at += len;
        return 1;
    }
    /* The record straddles blocks (or the file ends): gather it in staging. */
    if (len > r->staging_cap) {
        uint8_t *s = realloc(r->staging, len + SPILL_READ_SLACK);
        if (!s) return ak_err_nomem(err);
        memset(s + len, 0, SPILL_READ_SLACK);
        r->staging = s;
        r->staging_cap = len;
    }
    size_t have = r->len - r->at;
    if (have) memcpy(r->staging, r->buf + r->at, have); /* (no buffer before the first read) */
    r->at = r->len;
    while (have < len) {
        long got = read_block(r, err);
        if (got < 0) return (int)got;
        if (got == 0) {
            if (have == 0) return 0;
            return ak_err_set(err, ANONKIT_E_INTERNAL, NULL, 0, 0, "a spill file ends inside a record");
        }
        size_t take = len - have < r->len ? len - have : r->len;
        memcpy(r->staging + have, r->buf, take);
        r->at = take;
        have += take;
    }
    *data = r->staging;
    return 1;
}

int spill_read_records(spill_reader *r, size_t width, size_t max, const uint8_t **data, size_t *count,
                       ak_error *err)
{
    const size_t whole = width ? (r->len - r->at) / width : 0;
    if (whole && max) {
        *count = whole < max ? whole : max;
        *data = r->buf + r->at;
        r->at += *count * width;
        return 1;
    }
    *count = 0;
    const int got = spill_read(r, width, data, err);
    if (got == 1) *count = 1;
    return got;
}

void spill_reader_free(spill_reader *r)
{
    free(r->buf);
    free(r->staging);
    r->buf = r->staging = NULL;
}
