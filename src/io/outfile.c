/* outfile.c — atomic output files (see outfile.h): an unnamed temporary in
 * the destination's folder (O_TMPFILE) or a named one, fsync, a name, rename.
 * The folder is synced after the rename, so a crash cannot undo it.
 * O_TMPFILE, linkat's AT_SYMLINK_FOLLOW and sync_file_range (used by
 * outfile_write_behind) are Linux calls (_GNU_SOURCE). */
#define _GNU_SOURCE
#include "io/outfile.h"
#include "io/source.h"

#include "common/parallel.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Tries for a shared flock on a folder, a millisecond apart (lock_folder). */
#define LOCK_TRIES 2000

/* Tries for a fresh temporary name before giving up. */
#define NAME_TRIES 100

/* Writes "DEST.tmp-XXXXXX" into o->temp_path (allocated by the caller with
 * room for it), the six characters drawn from *state, which moves on. */
static void next_temp_name(outfile *o, uint64_t *state)
{
    static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL); /* splitmix64 */
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    const size_t len = strlen(o->path);
    memcpy(o->temp_path, o->path, len);
    memcpy(o->temp_path + len, ".tmp-", 5);
    for (int i = 0; i < 6; i++, z /= 62) o->temp_path[len + 5 + i] = alphabet[z % 62];
    o->temp_path[len + 11] = '\0';
}

/* A seed for next_temp_name that differs between processes and calls; the
 * names are only a first guess, O_EXCL and linkat's EEXIST make them safe. */
static uint64_t temp_name_seed(const outfile *o)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return ((uint64_t)getpid() << 32) ^ (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20) ^ (uint64_t)(uintptr_t)o;
}

/* Allocates o->temp_path with room for "DEST.tmp-XXXXXX". */
static int alloc_temp_path(outfile *o)
{
    free(o->temp_path);
    o->temp_path = malloc(strlen(o->path) + 16);
    if (o->temp_path) return 0;
    errno = ENOMEM;
    return -1;
}

/* Tries fresh names DEST.tmp-XXXXXX in o->temp_path until make(o, arg)
 * returns something other than -1 with EEXIST; that result, or -1 with
 * errno set (o->temp_path then freed). */
static int with_fresh_name(outfile *o, int (*make)(const outfile *o, const void *arg), const void *arg)
{
    if (alloc_temp_path(o) != 0) return -1;
    uint64_t state = temp_name_seed(o);
    for (int tries = 0; tries < NAME_TRIES; tries++) {
        next_temp_name(o, &state);
        const int got = make(o, arg);
        if (got >= 0) return got;
        if (errno != EEXIST) break;
    }
    const int e = errno;
    free(o->temp_path);
    o->temp_path = NULL;
    errno = e;
    return -1;
}

static int open_new(const outfile *o, const void *mode)
{
    return open(o->temp_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, *(const mode_t *)mode);
}

/* Creates the named temporary DEST.tmp-XXXXXX with `mode` (less the umask).
 * Returns the descriptor, or -1 with errno set. */
static int create_named(outfile *o, mode_t mode)
{
    return with_fresh_name(o, open_new, &mode);
}

/* The folder of a path ("." when it has no slash), malloc'd; NULL when out of memory. */
static char *folder_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    const size_t dlen = !slash ? 1 : slash == path ? 1 : (size_t)(slash - path);
    char *dir = malloc(dlen + 1);
    if (!dir) return NULL;
    memcpy(dir, slash ? path : ".", dlen);
    dir[dlen] = '\0';
    return dir;
}

/* Opens the folder of path and takes a shared flock on it, held while this
 * process has names DEST.tmp-XXXXXX in it (the rule of stale names,
 * outfile.h): 1 + the descriptor, or 0 when the folder cannot be opened (no
 * lock then; best effort, as the folder's fsync). */
static int lock_folder(const char *path)
{
    char *dir = folder_of(path);
    if (!dir) return 0;
    const int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    free(dir);
    if (fd < 0) return 0;
    /* An exclusive holder is a run removing stale names, for a moment; one
     * that holds on (no run does) is waited for two seconds at most, then
     * the run goes on without the lock, as where flock is not supported. */
    for (int tries = 0; flock(fd, LOCK_SH | LOCK_NB) != 0 && (errno == EWOULDBLOCK || errno == EINTR) && tries < LOCK_TRIES;
         tries++)
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    return fd + 1;
}

/* Writes "/proc/self/fd/N", the path by which an unnamed file is linked. */
static void fd_path(char *buf, size_t cap, int fd) { snprintf(buf, cap, "/proc/self/fd/%d", fd); }

/* Opens an unnamed file with `mode` (less the umask) in the destination's
 * folder, or returns -1 when the system cannot give one that commit can link
 * (no O_TMPFILE for that file system, no /proc): the caller then falls back
 * to a named temporary. */
static int open_unnamed(const outfile *o, mode_t mode)
{
#ifdef O_TMPFILE
    char *dir = folder_of(o->path);
    if (!dir) return -1;
    const int fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, mode);
    free(dir);
    if (fd < 0) return -1; /* EOPNOTSUPP, EISDIR, EINVAL where there is no O_TMPFILE; else the fallback says why */
    char proc[64];
    fd_path(proc, sizeof proc, fd);
    struct stat by_path, by_fd;
    if (stat(proc, &by_path) == 0 && fstat(fd, &by_fd) == 0 && by_path.st_dev == by_fd.st_dev &&
        by_path.st_ino == by_fd.st_ino)
        return fd;
    close(fd);
#else
    (void)o;
    (void)mode;
#endif
    return -1;
}

int outfile_open(outfile *o, const char *path, ak_error *err)
{
    memset(o, 0, sizeof *o);
    if (strcmp(path, "-") == 0) {
        o->stream = stdout;
        return ANONKIT_OK;
    }
    const size_t len = strlen(path);
    if (len == 0) return ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0, "the output path is empty");
    if (path[len - 1] == '/')
        return ak_err_set(err, ANONKIT_E_IO, path, 0, 0, "cannot create the output file: it names a folder");
    o->path = malloc(len + 1);
    if (!o->path) return ak_err_nomem(err);
    memcpy(o->path, path, len + 1);
    /* An existing destination that is not a regular file (/dev/null, a FIFO, a
     * terminal) is written directly: a temporary file renamed over it would
     * replace the device or pipe with a regular file. */
    struct stat st;
    const int exists = stat(path, &st) == 0;
    if (exists && S_ISDIR(st.st_mode)) {
        outfile_abort(o);
        return ak_err_set(err, ANONKIT_E_IO, path, 0, 0, "cannot create the output file: it is a folder");
    }
    if (exists && !S_ISREG(st.st_mode)) {
        if (!(o->stream = fopen(path, "wb"))) {
            const int e = errno;
            outfile_abort(o);
            return ak_err_set(err, ANONKIT_E_IO, path, 0, 0, "cannot open the output file: %s", strerror(e));
        }
        return ANONKIT_OK;
    }
    /* A new file gets 0666 less the umask (open applies it); an existing one
     * keeps its mode, set again below since the umask may have cut it. */
    const mode_t mode = exists ? st.st_mode & 07777 : 0666;
    o->replace = exists;
    int fd = open_unnamed(o, mode);
    if (fd >= 0) {
        o->unnamed = 1;
    } else if ((o->dir_lock = lock_folder(o->path)), (fd = create_named(o, mode)) < 0) {
        const int e = errno;
        outfile_abort(o);
        if (e == ENOMEM) return ak_err_nomem(err);
        return ak_err_set(err, ANONKIT_E_IO, path, 0, 0, "cannot create the output file: %s", strerror(e));
    }
    if ((exists && fchmod(fd, mode) != 0) || !(o->stream = fdopen(fd, "wb"))) {
        const int e = errno;
        close(fd);
        outfile_abort(o);
        return ak_err_set(err, ANONKIT_E_IO, path, 0, 0, "cannot open the output file: %s", strerror(e));
    }
    return ANONKIT_OK;
}

int outfile_open_table(outfile *o, const char *path, const source_options *so, ak_error *err)
{
    if (!source_is_special(path)) return outfile_open(o, path, err);
    memset(o, 0, sizeof *o);
    int rc = sink_open(&o->sink, path, so, err);
    if (rc == ANONKIT_OK && !(o->sink_spool = calloc(1, sizeof *o->sink_spool))) rc = ak_err_nomem(err);
    if (rc == ANONKIT_OK) rc = spool_open_empty(o->sink_spool, so ? so->tmpdir : NULL, err);
    if (rc == ANONKIT_OK) {
        const int fd = dup(o->sink_spool->fd);
        if (fd < 0 || !(o->stream = fdopen(fd, "w+b"))) {
            const int e = errno;
            if (fd >= 0) close(fd);
            rc = ak_err_set(err, ANONKIT_E_IO, o->sink->shown, 0, 0, "cannot create a temporary file: %s", strerror(e));
        }
    }
    if (rc < 0) outfile_abort(o);
    return rc;
}

static int link_to_name(const outfile *o, const void *proc)
{
    return linkat(AT_FDCWD, (const char *)proc, AT_FDCWD, o->temp_path, AT_SYMLINK_FOLLOW);
}

/* Gives an unnamed file a fresh temporary name beside its destination. */
static int link_unnamed(outfile *o)
{
    char proc[64];
    fd_path(proc, sizeof proc, fileno(o->stream));
    return with_fresh_name(o, link_to_name, proc) < 0 ? -1 : 0;
}

/* Whether o is an unnamed file still waiting for its one link, straight to
 * its destination (a new output: commit_prepare leaves it open and unnamed). */
static int links_direct(const outfile *o) { return o->unnamed && !o->replace && !o->temp_path && o->stream; }

/* Most threads of one sync_together. */
#define SYNC_THREADS 8

/* One task of sync_together. */
typedef struct sync_task {
    enum { TASK_FSYNC, TASK_UNLINK, TASK_CLEAN } kind;
    int fd;           /* FSYNC: the descriptor (a file or a folder); CLEAN: the folder's */
    const char *name; /* UNLINK: the name to remove */
    size_t first;     /* CLEAN: the first output in that folder (files[first]) */
    int result;       /* FSYNC: 0, or the errno of a failure */
} sync_task;

/* One thread's share of sync_together: tasks k, k + step, k + 2 step, ... */
typedef struct sync_part {
    sync_task *task;
    outfile *const *files; /* (for TASK_CLEAN) */
    size_t nfiles;
    size_t count, from, step;
} sync_part;

static void clean_stale(int dfd, outfile *const *files, size_t count, size_t first);

/* Runs a sync_part's tasks (ak_run_parts). */
static void *sync_part_run(void *arg)
{
    const sync_part *p = arg;
    for (size_t i = p->from; i < p->count; i += p->step) {
        sync_task *t = &p->task[i];
        if (t->kind == TASK_FSYNC)
            t->result = fsync(t->fd) == 0 ? 0 : errno;
        else if (t->kind == TASK_UNLINK)
            (void)unlink(t->name);
        else
            clean_stale(t->fd, p->files, p->nfiles, t->first);
    }
    return NULL;
}

/* Runs count tasks on up to max_threads (0: SYNC_THREADS) threads at once,
 * in the calling thread one after the other when no thread starts (or
 * max_threads is 1). The point is waiting together: on a journaling file
 * system (ext4) syncs under way at the same time are made durable by one
 * commit of the journal rather than one each, and the freeing of replaced
 * files (the unlinks) overlaps. */
static void sync_together(sync_task *task, size_t count, outfile *const *files, size_t nfiles, unsigned max_threads)
{
    if (count == 0) return;
    const size_t most = max_threads && max_threads < SYNC_THREADS ? max_threads : SYNC_THREADS;
    const size_t nparts = count < most ? count : most;
    sync_part parts[SYNC_THREADS];
    for (size_t k = 0; k < nparts; k++) parts[k] = (sync_part){task, files, nfiles, count, k, nparts};
    ak_run_parts(parts, sizeof parts[0], (unsigned)nparts, sync_part_run);
}

/* The first half of a commit: everything but the rename. Stdout is flushed;
 * a device or pipe is flushed, closed and finished; a file is flushed and
 * synced; a named or replacing one is then named (if unnamed) and closed,
 * leaving temp_path ready to be renamed; a new unnamed one stays open and
 * unnamed for its one link (links_direct). synced: -1 to sync the file here,
 * else the file was synced already (by sync_together), 0 its success, an
 * errno its failure. */
static int commit_prepare(outfile *o, int synced, ak_error *err)
{
    const char *shown = o->path ? o->path : "stdout";
    int rc = ANONKIT_OK;
    if (o->stream == stdout) {
        if (fflush(o->stream) != 0 || ferror(o->stream))
            return ak_err_set(err, ANONKIT_E_IO, shown, 0, 0, "write failed: %s", strerror(errno));
        return ANONKIT_OK;
    }
    const int is_file = o->unnamed || o->temp_path; /* else written directly: nothing to sync or rename */
    if (fflush(o->stream) != 0 || ferror(o->stream) || (is_file && synced < 0 && fsync(fileno(o->stream)) != 0))
        rc = ak_err_set(err, ANONKIT_E_IO, shown, 0, 0, "write failed: %s", strerror(errno));
    else if (is_file && synced > 0)
        rc = ak_err_set(err, ANONKIT_E_IO, shown, 0, 0, "write failed: %s", strerror(synced));
    if (rc == ANONKIT_OK && o->unnamed && !o->replace) return ANONKIT_OK; /* (linked at the renames) */
    if (rc == ANONKIT_OK && o->unnamed && link_unnamed(o) != 0)
        rc = ak_err_set(err, ANONKIT_E_IO, shown, 0, 0, "cannot name the finished output: %s", strerror(errno));
    if (fclose(o->stream) != 0 && rc == ANONKIT_OK)
        rc = ak_err_set(err, ANONKIT_E_IO, shown, 0, 0, "write failed: %s", strerror(errno));
    o->stream = NULL;
    if (rc == ANONKIT_OK && !is_file) {
        free(o->path);
        o->path = NULL;
    }
    return rc;
}

/* Puts a prepared file in place: the rename of its temporary over the
 * destination, or the one link of a new unnamed file (links_direct) to it,
 * which fails if a file appeared there since the open (never replaced
 * without the backup a rollback needs) and is then closed. */
static int put_in_place(outfile *o, unsigned char *placed, ak_error *err)
{
    if (o->temp_path) {
        if (rename(o->temp_path, o->path) == 0) return *placed = 1, ANONKIT_OK;
        return ak_err_set(err, ANONKIT_E_IO, o->path, 0, 0, "cannot rename the finished output into place: %s",
                          strerror(errno));
    }
    char proc[64];
    fd_path(proc, sizeof proc, fileno(o->stream));
    if (linkat(AT_FDCWD, proc, AT_FDCWD, o->path, AT_SYMLINK_FOLLOW) != 0)
        return ak_err_set(err, ANONKIT_E_IO, o->path, 0, 0, "cannot link the finished output into place: %s%s",
                          strerror(errno), errno == EEXIST ? " (a file appeared there during the run)" : "");
    *placed = 1;
    const int closed = fclose(o->stream);
    o->stream = NULL;
    o->unnamed = 0; /* (named now: o->path) */
    if (closed != 0) return ak_err_set(err, ANONKIT_E_IO, o->path, 0, 0, "write failed: %s", strerror(errno));
    return ANONKIT_OK;
}

/* Whether paths a and b name the same folder as written (their text up to
 * the last slash; both without one: the working folder). */
static int same_folder(const char *a, const char *b)
{
    const char *sa = strrchr(a, '/'), *sb = strrchr(b, '/');
    const size_t la = sa ? (size_t)(sa - a) : 0, lb = sb ? (size_t)(sb - b) : 0;
    return (sa != NULL) == (sb != NULL) && la == lb && memcmp(a, b, la) == 0;
}

/* Whether name is "BASE.tmp-XXXXXX" for the last part BASE of path, the six
 * X from next_temp_name's alphabet: the only names clean_stale removes. */
static int stale_name_of(const char *name, const char *path)
{
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    const size_t blen = strlen(base);
    if (strlen(name) != blen + 11 || memcmp(name, base, blen) != 0 || memcmp(name + blen, ".tmp-", 5) != 0) return 0;
    for (size_t i = blen + 5; i < blen + 11; i++) {
        const char c = name[i];
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))) return 0;
    }
    return 1;
}

/* Removes from the folder dfd (held with an exclusive flock: no live run's
 * temporary is in it, outfile.h) every regular file named DEST.tmp-XXXXXX
 * for a destination DEST committed in it (files[first..count) in that
 * folder): what a run killed in its commit left. Best effort. */
static void clean_stale(int dfd, outfile *const *files, size_t count, size_t first)
{
    const int fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return;
    DIR *d = fdopendir(fd);
    if (!d) {
        close(fd);
        return;
    }
    const struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        for (size_t i = first; i < count; i++) {
            const outfile *o = files[i];
            if (!o || !o->path || !same_folder(o->path, files[first]->path) || !stale_name_of(e->d_name, o->path))
                continue;
            struct stat st;
            if (fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
                (void)unlinkat(dfd, e->d_name, 0);
            break;
        }
    }
    closedir(d);
}

static int link_old(const outfile *o, const void *unused)
{
    (void)unused;
    return link(o->path, o->temp_path);
}

/* A second name DEST.tmp-XXXXXX for the existing file at o->path, malloc'd
 * into *backup; *backup NULL when there is no file there. 0, or -1 with
 * errno set. */
static int keep_old(const outfile *o, char **backup)
{
    *backup = NULL;
    struct stat st;
    if (lstat(o->path, &st) != 0) return errno == ENOENT ? 0 : -1;
    outfile probe = {.path = o->path};
    if (with_fresh_name(&probe, link_old, NULL) < 0) return -1;
    *backup = probe.temp_path;
    return 0;
}

/* Whether o will be put in place as a file (a temporary renamed, or an
 * unnamed file linked), rather than written directly or loaded into a sink. */
static int is_placed_file(const outfile *o) { return o && o->stream && o->path && !o->sink && (o->unnamed || o->temp_path); }

/* Opens each folder the placed files[] go to once (folders[i] = 1 + the
 * descriptor at the first file of each folder, else 0) with a shared flock
 * (lock_folder): taken before any temporary name is made. */
static void lock_folders(outfile *const *files, size_t count, int *folders)
{
    for (size_t i = 0; i < count; i++) {
        folders[i] = 0;
        if (!is_placed_file(files[i])) continue;
        int first = 1;
        for (size_t j = 0; j < i && first; j++)
            first = !(is_placed_file(files[j]) && same_folder(files[j]->path, files[i]->path));
        if (first) folders[i] = lock_folder(files[i]->path);
    }
}

/* Puts o's temporary in place of an old file and keeps the old one under
 * the temporary's name (*old, taken over from o->temp_path; *placed set):
 * one renameat2 with RENAME_EXCHANGE, so that the old file is never without
 * a name and a later failure can rename it back. Where the file system has
 * no exchange, the old file gets a second name (a hard link, keep_old) and
 * the caller renames; where there is no old file (or a folder: refused by
 * the rename), the caller renames. */
static int exchange_old(outfile *o, char **old, unsigned char *placed, ak_error *err)
{
    struct stat st; /* (a folder there is not exchanged: the caller's rename refuses it) */
    if (lstat(o->path, &st) != 0 || !(S_ISREG(st.st_mode) || S_ISLNK(st.st_mode))) return ANONKIT_OK;
#ifdef RENAME_EXCHANGE
    if (renameat2(AT_FDCWD, o->temp_path, AT_FDCWD, o->path, RENAME_EXCHANGE) == 0) {
        *old = o->temp_path;
        o->temp_path = NULL;
        *placed = 1;
        return ANONKIT_OK;
    }
    if (errno == ENOENT) return ANONKIT_OK; /* (no old file: renamed by the caller) */
    if (errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP)
        return ak_err_set(err, ANONKIT_E_IO, o->path, 0, 0, "cannot rename the finished output into place: %s",
                          strerror(errno));
#endif
    if (keep_old(o, old) != 0)
        return ak_err_set(err, ANONKIT_E_IO, o->path, 0, 0, "cannot keep the old file while replacing it: %s",
                          strerror(errno));
    return ANONKIT_OK;
}

int outfile_commit_all(outfile *const *files, size_t count, unsigned max_threads, ak_error *err)
{
    int rc = ANONKIT_OK;
    size_t named = 0;
    /* a table output is loaded first, left invisible (io/source.h) */
    for (size_t i = 0; i < count && rc == ANONKIT_OK; i++)
        if (files[i] && files[i]->sink) rc = sink_prepare(files[i]->sink, files[i]->stream, err);
    /* several files: the writing of all of them to disk started first (those
     * outfile_ready started already go on from there), so that the fsyncs
     * below wait for writes under way together, not one by one */
    for (size_t i = 0; count > 1 && i < count && rc == ANONKIT_OK; i++)
        if (files[i] && files[i]->stream && !files[i]->sink && (files[i]->unnamed || files[i]->temp_path))
            outfile_write_behind(files[i]->stream, &files[i]->behind);
    int *folders = calloc(count ? count : 1, sizeof *folders);
    sync_task *task = calloc(3 * count + 1, sizeof *task);
    if ((!folders || !task) && rc == ANONKIT_OK) rc = ak_err_nomem(err);
    /* several files: synced at the same time (sync_together), each result
     * reported by commit_prepare in order */
    int synced_here = 0;
    if (count > 1 && rc == ANONKIT_OK) {
        for (size_t i = 0; i < count; i++) {
            const outfile *o = files[i];
            const int is_file = o && o->stream && !o->sink && (o->unnamed || o->temp_path);
            task[i] = (sync_task){TASK_FSYNC, -1, NULL, 0, -1};
            if (is_file && fflush(o->stream) == 0 && !ferror(o->stream)) task[i].fd = fileno(o->stream);
        }
        /* (the tasks without a descriptor are skipped by moving them out of the way) */
        size_t n = 0;
        for (size_t i = 0; i < count; i++)
            if (task[i].fd >= 0) task[count + n++] = (sync_task){TASK_FSYNC, task[i].fd, NULL, i, -1};
        sync_together(task + count, n, files, count, max_threads);
        for (size_t k = 0; k < n; k++) task[task[count + k].first].result = task[count + k].result;
        synced_here = 1;
    }
    /* the folders locked before any temporary name is made (outfile.h) */
    if (rc == ANONKIT_OK) lock_folders(files, count, folders);
    for (size_t i = 0; i < count && rc == ANONKIT_OK; i++)
        if (files[i] && files[i]->stream && !files[i]->sink)
            rc = commit_prepare(files[i], synced_here && task[i].fd >= 0 ? task[i].result : -1, err);
    for (size_t i = 0; i < count; i++) named += files[i] && (files[i]->temp_path || links_direct(files[i]));
    /* With several files, each old one keeps a name (old[i]) until all are
     * in place, so that a rename failing after others were done can put
     * those back: exchange_old. */
    char **old = NULL;
    unsigned char *renamed = calloc(count ? count : 1, 1);
    if (!renamed && rc == ANONKIT_OK) rc = ak_err_nomem(err);
    if (rc == ANONKIT_OK && named > 1 && !(old = calloc(count, sizeof *old))) rc = ak_err_nomem(err);
    /* the tables become visible when every file is ready for its rename */
    for (size_t i = 0; i < count && rc == ANONKIT_OK; i++)
        if (files[i] && files[i]->sink) rc = sink_commit(files[i]->sink, err);
    size_t done = 0; /* the renames (and links), in order, until one fails */
    for (; rc == ANONKIT_OK && done < count; done++) {
        outfile *o = files[done];
        if (!o || !(o->temp_path || links_direct(o))) continue;
        if (old && o->temp_path && (rc = exchange_old(o, &old[done], &renamed[done], err)) != ANONKIT_OK) break;
        if (!renamed[done])
            rc = put_in_place(o, &renamed[done], err); /* (a link whose close failed is placed, and taken back) */
    }
    if (rc != ANONKIT_OK) {
        /* put back what was replaced, remove what did not exist before */
        for (size_t i = 0; renamed && i < count; i++) {
            outfile *o = files[i];
            if (!renamed[i]) continue;
            free(o->temp_path); /* (renamed: nothing is left under that name) */
            o->temp_path = NULL;
            if (old && old[i]) {
                if (rename(old[i], o->path) == 0) {
                    free(old[i]);
                    old[i] = NULL;
                }
            } else {
                unlink(o->path);
            }
        }
    }
    /* Done: the second names of the old files that stay replaced removed,
     * stale names of killed runs removed from each folder this run could
     * lock alone (outfile.h), and each folder given a renamed file synced
     * once: all at the same time. The temporaries of the fallback no longer
     * need their lock. */
    size_t ntasks = 0;
    for (size_t i = 0; task && i < count; i++) {
        if (old && old[i]) task[ntasks++] = (sync_task){TASK_UNLINK, -1, old[i], 0, 0};
        if (rc == ANONKIT_OK && files[i] && files[i]->dir_lock) {
            close(files[i]->dir_lock - 1);
            files[i]->dir_lock = 0;
        }
    }
    for (size_t i = 0; rc == ANONKIT_OK && i < count; i++)
        if (folders && folders[i] && flock(folders[i] - 1, LOCK_EX | LOCK_NB) == 0)
            task[ntasks++] = (sync_task){TASK_CLEAN, folders[i] - 1, NULL, i, 0};
    for (size_t i = 0; rc == ANONKIT_OK && i < count; i++) {
        int any = 0; /* (a folder none of whose files was renamed, say after a failure, needs no sync) */
        for (size_t j = i; folders && folders[i] && j < count && !any; j++)
            any = renamed[j] && same_folder(files[j]->path, files[i]->path);
        if (any) task[ntasks++] = (sync_task){TASK_FSYNC, folders[i] - 1, NULL, i, 0};
    }
    sync_together(task, ntasks, files, count, max_threads);
    for (size_t i = 0; folders && i < count; i++)
        if (folders[i]) close(folders[i] - 1);
    free(folders);
    free(task);
    for (size_t i = 0; old && i < count; i++) free(old[i]);
    free(old);
    for (size_t i = 0; i < count; i++) {
        outfile *o = files[i];
        if (!o) continue;
        if (rc != ANONKIT_OK) {
            outfile_abort(o);
            continue;
        }
        if (o->sink) outfile_abort(o); /* committed: frees the sink and its spool */
        free(o->temp_path);
        free(o->path);
        o->temp_path = o->path = NULL;
        o->unnamed = 0;
    }
    free(renamed);
    return rc;
}

int outfile_commit(outfile *o, ak_error *err) { return outfile_commit_all(&o, 1, 1, err); }

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

void outfile_ready(outfile *o)
{
    if (o && o->stream && o->path && !o->sink && (o->unnamed || o->temp_path)) outfile_write_behind(o->stream, &o->behind);
}

void outfile_abort(outfile *o)
{
    sink_free(o->sink); /* rolls back what was not committed */
    o->sink = NULL;
    if (o->sink_spool) spool_remove(o->sink_spool);
    free(o->sink_spool);
    o->sink_spool = NULL;
    if (o->stream && o->stream != stdout) fclose(o->stream);
    o->stream = NULL;
    if (o->temp_path) unlink(o->temp_path);
    if (o->dir_lock) close(o->dir_lock - 1); /* (after the unlink: the name was protected until gone) */
    o->dir_lock = 0;
    free(o->temp_path);
    free(o->path);
    o->temp_path = o->path = NULL;
    o->unnamed = 0;
}
