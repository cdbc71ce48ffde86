/* mpi_out.c — anonkit-mpi's outputs (docs/distributed.md §5), committed only
 * when every rank succeeded: -o DIR/ is one part per rank (an unnamed file in
 * the destination's folder, linked into a staging folder at the commit) plus
 * a manifest; -o FILE is one file: rank 0's part, streamed to disk while the
 * run goes on, becomes the file, and every other rank writes its rows once,
 * with MPI-IO, at the exclusive prefix sum of the lengths before it.
 * O_TMPFILE, linkat's AT_SYMLINK_FOLLOW, sync_file_range and fopencookie are
 * Linux and glibc calls (_GNU_SOURCE). */
#define _GNU_SOURCE
#include "mpi/mpi_internal.h"

#include <fcntl.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
/* ---- the outputs */

int mp_fail_io(mp_ctx *c, const char *path, const char *what)
{
    return ak_err_set(&c->err, ANONKIT_E_IO, path, 0, 0, "%s: %s", what, strerror(errno));
}

/* The destination without trailing slashes, and its folder. */
void mp_dest_names(const char *dest, char *d, size_t dsize, char *parent, size_t psize)
{
    snprintf(d, dsize, "%s", dest);
    while (strlen(d) > 1 && d[strlen(d) - 1] == '/') d[strlen(d) - 1] = '\0';
    const char *slash = strrchr(d, '/');
    if (!slash) snprintf(parent, psize, ".");
    else if (slash == d) snprintf(parent, psize, "/");
    else snprintf(parent, psize, "%.*s", (int)(slash - d), d);
}

/* The memory stream of a FILE run's rank other than 0: its rows, appended to
 * one buffer that realloc grows (in place, or by remapping: never copied by
 * the stream itself, as open_memstream's growth copies and clears). */
static ssize_t mem_write(void *cookie, const char *buf, size_t size)
{
    mp_out *o = cookie;
    if (o->memlen + size > o->memcap) {
        size_t cap = o->memcap ? o->memcap : (size_t)1 << 24;
        while (cap < o->memlen + size) cap *= 2;
        char *m = realloc(o->mem, cap);
        if (!m) {
            errno = ENOMEM;
            return -1;
        }
        o->mem = m;
        o->memcap = cap;
    }
    memcpy(o->mem + o->memlen, buf, size);
    o->memlen += size;
    return (ssize_t)size;
}

/* Opens this rank's output stream, which has no name until the commit: DIR,
 * and FILE on rank 0: an unnamed file in the destination's folder
 * (O_TMPFILE), named at the commit (DIR: linked into the staging folder;
 * FILE: linked as the staging file, which the other ranks then complete);
 * FILE on the other ranks: a stream in memory that MPI-IO writes once into
 * the staging file at the commit. So a run that ends early, even by SIGKILL,
 * leaves nothing at the output path. */
int mp_out_open(mp_ctx *c, const char *dest, mp_out *o)
{
    memset(o, 0, sizeof *o);
    const size_t len = strlen(dest);
    o->dir_mode = len && dest[len - 1] == '/';
    struct stat sb;
    if (!o->dir_mode && stat(dest, &sb) == 0 && S_ISDIR(sb.st_mode)) o->dir_mode = 1;
    char d[4096];
    mp_dest_names(dest, d, sizeof d, o->parent, sizeof o->parent);
    int rc = ANONKIT_OK, fd = -1;
    if (o->dir_mode || c->rank == 0) {
#ifdef O_TMPFILE
        fd = open(o->parent, O_TMPFILE | O_RDWR | O_CLOEXEC, 0666);
#endif
        if (fd < 0) { /* no O_TMPFILE here: a temporary name until the commit */
            snprintf(o->named, sizeof o->named, "%s/.part-%05d.anonkit-tmp-XXXXXX", o->parent, c->rank);
            if ((fd = mkstemp(o->named)) < 0) o->named[0] = '\0';
        }
        if (fd < 0 || !(o->f = fdopen(fd, "w+"))) rc = mp_fail_io(c, d, "cannot create a part of the output");
    } else {
        static const cookie_io_functions_t mem_io = {.write = mem_write};
        if (!(o->f = fopencookie(o, "w", mem_io))) rc = ak_err_nomem(&c->err);
    }
    if (rc == ANONKIT_OK && setvbuf(o->f, NULL, _IOFBF, (size_t)1 << 20) != 0) rc = ak_err_nomem(&c->err);
    if (rc < 0 && fd >= 0 && !o->f) close(fd);
    return mp_agree(c, rc);
}

int mp_out_progress(mp_ctx *c, mp_out *o)
{
    if (fflush(o->f) != 0) return mp_fail_io(c, "output", "cannot write");
    if (!o->dir_mode && c->rank != 0) return ANONKIT_OK; /* (in memory) */
    const off_t end = ftello(o->f);
    if (end > 0 && (uint64_t)end >= o->synced + ((uint64_t)8 << 20)) {
        /* a hint: where the call is missing or refused, the commit's fsync does it all */
        (void)sync_file_range(fileno(o->f), (off_t)o->synced, end - (off_t)o->synced, SYNC_FILE_RANGE_WRITE);
        o->synced = (uint64_t)end;
    }
    return ANONKIT_OK;
}

/* Closes this rank's stream (and frees the memory of a FILE's). */
void mp_out_close(mp_out *o)
{
    if (o->f) fclose(o->f);
    o->f = NULL;
    free(o->mem);
    o->mem = NULL;
    o->memlen = o->memcap = 0;
}

/* Removes whatever was made for the output (every rank its part; rank 0 the staging folder or file). */
void mp_out_abort(mp_ctx *c, mp_out *o)
{
    mp_out_close(o);
    if (o->named[0]) unlink(o->named);
    if (o->dir_mode && o->tmp[0]) {
        char part[4200];
        snprintf(part, sizeof part, "%.4000s/part-%05d.csv", o->tmp, c->rank);
        unlink(part);
    }
    MPI_Barrier(c->comm);
    if (c->rank == 0 && o->tmp[0]) {
        if (o->dir_mode) {
            char m[4200];
            snprintf(m, sizeof m, "%.4000s/manifest.json", o->tmp);
            unlink(m);
            rmdir(o->tmp);
        } else unlink(o->tmp);
    }
}

/* Rank 0 makes the staging folder or file beside the destination; every rank learns its name. */
static int make_staging(mp_ctx *c, const char *dest, mp_out *o)
{
    int rc = ANONKIT_OK;
    if (c->rank == 0) {
        char d[4096], parent[4096];
        mp_dest_names(dest, d, sizeof d, parent, sizeof parent);
        snprintf(o->tmp, sizeof o->tmp, "%.4000s.anonkit-tmp-XXXXXX", d);
        if (o->dir_mode) {
            if (!mkdtemp(o->tmp)) rc = mp_fail_io(c, d, "cannot create the output folder");
        } else { /* rank 0's part, named: a fresh name, then the part linked (or renamed) to it */
            char proc[64];
            snprintf(proc, sizeof proc, "/proc/self/fd/%d", fileno(o->f));
            int linked = 0;
            for (int tries = 0; !linked && rc == ANONKIT_OK && tries < 100; tries++) {
                snprintf(o->tmp, sizeof o->tmp, "%.4000s.anonkit-tmp-XXXXXX", d);
                const int fd = mkstemp(o->tmp);
                if (fd < 0) {
                    rc = mp_fail_io(c, d, "cannot create the output");
                    break;
                }
                close(fd);
                unlink(o->tmp);
                if (o->named[0] ? rename(o->named, o->tmp) == 0
                                : linkat(AT_FDCWD, proc, AT_FDCWD, o->tmp, AT_SYMLINK_FOLLOW) == 0)
                    linked = 1;
                else if (errno != EEXIST)
                    rc = mp_fail_io(c, d, "cannot create the output");
            }
            if (rc == ANONKIT_OK && !linked) rc = mp_fail_io(c, d, "cannot create the output");
            if (linked) o->named[0] = '\0';
        }
        if (rc < 0) o->tmp[0] = '\0';
    }
    if ((rc = mp_agree(c, rc)) < 0) return rc;
    const double t = mp_cpu();
    MPI_Bcast(o->tmp, (int)sizeof o->tmp, MPI_CHAR, 0, c->comm);
    c->comm_cpu += mp_cpu() - t;
    return ANONKIT_OK;
}

/* DIR: this rank's part, complete and synced, named into the staging folder. */
static int link_part(mp_ctx *c, mp_out *o)
{
    char part[4200], proc[64];
    snprintf(part, sizeof part, "%.4000s/part-%05d.csv", o->tmp, c->rank);
    if (o->named[0]) {
        if (rename(o->named, part) != 0) return mp_fail_io(c, part, "cannot name the part");
        o->named[0] = '\0';
        return ANONKIT_OK;
    }
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", fileno(o->f));
    if (linkat(AT_FDCWD, proc, AT_FDCWD, part, AT_SYMLINK_FOLLOW) != 0) return mp_fail_io(c, part, "cannot name the part");
    return ANONKIT_OK;
}

/* Writes buf[0..len) into the shared file at `at` with MPI-IO (in pieces an int counts). */
static int write_body(mp_ctx *c, MPI_File fh, const char *buf, size_t len, uint64_t at)
{
    static const size_t chunk = (size_t)1 << 26;
    for (size_t put = 0; put < len;) {
        const size_t n = len - put < chunk ? len - put : chunk;
        MPI_Status st;
        if (MPI_File_write_at(fh, (MPI_Offset)(at + put), buf + put, (int)n, MPI_BYTE, &st) != MPI_SUCCESS)
            return ak_err_set(&c->err, ANONKIT_E_IO, "output", 0, 0, "MPI-IO could not write");
        put += n;
    }
    return ANONKIT_OK;
}

/* Moves an existing folder aside, the new one in, and removes the old one. */
static int replace_dir(mp_ctx *c, const char *tmp, const char *dest)
{
    char d[4096], old[4200];
    snprintf(d, sizeof d, "%s", dest);
    while (strlen(d) > 1 && d[strlen(d) - 1] == '/') d[strlen(d) - 1] = '\0';
    struct stat sb;
    if (stat(d, &sb) != 0) return rename(tmp, d) == 0 ? ANONKIT_OK : mp_fail_io(c, d, "cannot commit the output");
    snprintf(old, sizeof old, "%s.anonkit-old-XXXXXX", d);
    if (!mkdtemp(old) || rmdir(old) != 0 || rename(d, old) != 0) return mp_fail_io(c, d, "cannot replace the output");
    if (rename(tmp, d) != 0) {
        rename(old, d);
        return mp_fail_io(c, d, "cannot commit the output");
    }
    char cmd[4400];
    for (int r = 0;; r++) { /* the old parts and manifest */
        snprintf(cmd, sizeof cmd, "%s/part-%05d.csv", old, r);
        if (unlink(cmd) != 0) break;
    }
    snprintf(cmd, sizeof cmd, "%s/manifest.json", old);
    unlink(cmd);
    rmdir(old);
    return ANONKIT_OK;
}

/* Ends every rank's stream and commits the output when every rank succeeded. */
int mp_out_commit(mp_ctx *c, const char *dest, mp_out *o, uint64_t rows, int rc)
{
    if (rc == ANONKIT_OK && (fflush(o->f) != 0 || ((o->dir_mode || c->rank == 0) && fsync(fileno(o->f)) != 0)))
        rc = mp_fail_io(c, dest, "cannot write");
    const char *pause = getenv("ANONKIT_MPI_TEST_PAUSE"); /* tests: a window to kill a rank in */
    if (pause && c->rank == 1) sleep((unsigned)atoi(pause));
    if ((rc = mp_agree(c, rc)) < 0) return rc;
    uint64_t *per = calloc((size_t)c->size, sizeof *per);
    if (!per) rc = ak_err_nomem(&c->err);
    if ((rc = mp_agree(c, rc)) < 0) return rc;
    double t = mp_cpu();
    MPI_Gather(&rows, 1, MPI_UINT64_T, per, 1, MPI_UINT64_T, 0, c->comm);
    c->comm_cpu += mp_cpu() - t;
    if ((rc = make_staging(c, dest, o)) < 0) {
        free(per);
        return rc;
    }
    if (o->dir_mode) {
        rc = link_part(c, o);
        if (fclose(o->f) != 0 && rc == ANONKIT_OK) rc = mp_fail_io(c, dest, "cannot write");
        o->f = NULL;
        if ((rc = mp_agree(c, rc)) == ANONKIT_OK && c->rank == 0) {
            char m[4200];
            snprintf(m, sizeof m, "%.4000s/manifest.json", o->tmp);
            FILE *f = fopen(m, "w");
            if (!f) rc = mp_fail_io(c, m, "cannot create");
            else {
                uint64_t total = 0;
                fprintf(f, "{\n  \"format\": \"anonkit-parts\",\n  \"parts\": [\n");
                for (int r = 0; r < c->size; r++) {
                    fprintf(f, "    {\"file\": \"part-%05d.csv\", \"rows\": %llu}%s\n", r, (unsigned long long)per[r],
                            r + 1 < c->size ? "," : "");
                    total += per[r];
                }
                fprintf(f, "  ],\n  \"rows\": %llu\n}\n", (unsigned long long)total);
                if (fflush(f) != 0 || fsync(fileno(f)) != 0) rc = mp_fail_io(c, m, "cannot write");
                if (fclose(f) != 0 && rc == ANONKIT_OK) rc = mp_fail_io(c, m, "cannot write");
            }
            if (rc == ANONKIT_OK) rc = replace_dir(c, o->tmp, dest);
            if (rc == ANONKIT_OK) o->tmp[0] = '\0';
        }
        free(per);
        return mp_agree(c, rc);
    }
    /* one file: rank 0's part (with the header) is the file; every other
     * rank writes its rows once at the prefix sum of the lengths before it */
    const off_t end = c->rank == 0 ? ftello(o->f) : 0;
    uint64_t len = c->rank == 0 ? (end > 0 ? (uint64_t)end : 0)
                                : (o->memlen > (size_t)o->header ? (uint64_t)(o->memlen - (size_t)o->header) : 0),
             at = 0;
    t = mp_cpu();
    MPI_Exscan(&len, &at, 1, MPI_UINT64_T, MPI_SUM, c->comm);
    c->comm_cpu += mp_cpu() - t;
    if (c->rank == 0) at = 0;
    if (c->size > 1) {
        MPI_File fh;
        /* opening and closing are collective: their waiting is not busy time */
        t = mp_cpu();
        const int opened = MPI_File_open(c->comm, o->tmp, MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
        c->comm_cpu += mp_cpu() - t;
        if (opened != MPI_SUCCESS)
            rc = mp_agree(c, ak_err_set(&c->err, ANONKIT_E_IO, dest, 0, 0, "MPI-IO could not open the output"));
        else {
            if (c->rank > 0) rc = write_body(c, fh, o->mem + o->header, (size_t)len, at);
            /* syncing is collective too: rank 0, its part already synced, polls
             * there while the others write theirs (0.43 CPU seconds of 1.3 s on
             * 2 ranks of 10^7 rows), which is waiting, not work */
            t = mp_cpu();
            const int synced = MPI_File_sync(fh);
            c->comm_cpu += mp_cpu() - t;
            if (synced != MPI_SUCCESS && rc == ANONKIT_OK)
                rc = ak_err_set(&c->err, ANONKIT_E_IO, dest, 0, 0, "MPI-IO could not sync the output");
            t = mp_cpu();
            MPI_File_close(&fh);
            c->comm_cpu += mp_cpu() - t;
            rc = mp_agree(c, rc);
        }
    }
    mp_out_close(o);
    if (rc == ANONKIT_OK && c->rank == 0) {
        if (rename(o->tmp, dest) != 0) rc = mp_fail_io(c, dest, "cannot commit the output");
        else o->tmp[0] = '\0';
    }
    free(per);
    return mp_agree(c, rc);
}

