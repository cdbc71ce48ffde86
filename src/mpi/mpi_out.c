/* mpi_out.c — anonkit-mpi's outputs (docs/distributed.md §5), committed only
 * when every rank succeeded: -o DIR/ is one part per rank (an unnamed file in
 * the destination's folder, linked into a staging folder at the commit) plus
 * a manifest; -o FILE is one file, rank 0's unnamed file, which every rank
 * reaches (open_one_file) and writes its rows into at the exclusive prefix
 * sum of the lengths before it, all ranks at once: each rank's length is
 * measured before any row is written (mp_part_length, mp_out_place) and
 * checked against what it wrote at the commit.
 * O_TMPFILE, linkat's AT_SYMLINK_FOLLOW, sync_file_range and fopencookie are
 * Linux and glibc calls (_GNU_SOURCE). */
#define _GNU_SOURCE
#include "mpi/mpi_internal.h"

#include "core/recode.h"
#include "io/csv.h"

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

/* The stream of a FILE run: every byte goes to this rank's offset in the one
 * file through MPI-IO (MPI_File_write_at: an independent write at an explicit
 * offset, so no file pointer is shared with another rank); a rank other than 0
 * drops the header the writer starts with, and nothing is written before the
 * offset is known (a rank other than 0 writes its rows only after
 * mp_out_place). */
static ssize_t file_write(void *cookie, const char *buf, size_t size)
{
    mp_out *o = cookie;
    const size_t drop = o->skip > 0 ? ((size_t)o->skip < size ? (size_t)o->skip : size) : 0;
    o->skip -= (long)drop;
    if (drop == size) return (ssize_t)size;
    if (!o->placed) {
        errno = EINVAL;
        return -1;
    }
    for (size_t put = drop; put < size;) {
        const int want = size - put < (size_t)INT_MAX ? (int)(size - put) : INT_MAX;
        MPI_Status st;
        int w = 0;
        if (MPI_File_write_at(o->mf, (MPI_Offset)(o->base + o->pos), buf + put, want, MPI_BYTE, &st) != MPI_SUCCESS ||
            MPI_Get_count(&st, MPI_BYTE, &w) != MPI_SUCCESS || w <= 0) {
            errno = EIO;
            return -1;
        }
        put += (size_t)w;
        o->pos += (uint64_t)w;
    }
    return (ssize_t)size;
}

/* Under -o FILE: what every rank needs to reach rank 0's unnamed file
 * through /proc/PID/fd/FD on the same machine. */
typedef struct file_id {
    long long pid, fd, dev, ino;
    int unnamed;
    char host[256];
} file_id;

/* The path `name` as a fresh hidden name in `parent` (.BASE.anonkit-tmp-XXXXXX)
 * for rank 0's file: linked from /proc/self/fd/FD (or renamed from o->named
 * where O_TMPFILE is missing); the name into out. */
static int link_fresh(mp_ctx *c, const char *d, const char *parent, const char *from_proc, const char *from_named,
                      char *out, size_t outsize)
{
    const char *base = strrchr(d, '/') ? strrchr(d, '/') + 1 : d;
    for (int tries = 0; tries < 100; tries++) {
        snprintf(out, outsize, "%.2000s/.%.1000s.anonkit-tmp-XXXXXX", parent, base);
        const int fd = mkstemp(out);
        if (fd < 0) break;
        close(fd);
        unlink(out);
        if (from_named ? rename(from_named, out) == 0 : linkat(AT_FDCWD, from_proc, AT_FDCWD, out, AT_SYMLINK_FOLLOW) == 0)
            return ANONKIT_OK;
        if (errno != EEXIST) break;
    }
    out[0] = '\0';
    return mp_fail_io(c, d, "cannot create the output");
}

/* -o FILE: every rank opens the one file, rank 0's part. On one machine the
 * others open rank 0's unnamed file (O_TMPFILE) through /proc/PID/fd/FD
 * (checked to be that file by its device and inode), so a run that ends
 * early, even by SIGKILL, leaves nothing; otherwise (ranks on other
 * machines, or no O_TMPFILE) rank 0 names it with a hidden temporary name in
 * the destination's folder, which every failure path removes but a killed
 * job leaves behind (docs/distributed.md §5). */
static int open_one_file(mp_ctx *c, const char *d, mp_out *o)
{
    int rc = ANONKIT_OK;
    file_id id;
    memset(&id, 0, sizeof id);
    if (c->rank == 0) {
#ifdef O_TMPFILE
        o->fd = open(o->parent, O_TMPFILE | O_RDWR | O_CLOEXEC, 0666);
        id.unnamed = o->fd >= 0;
#endif
        if (o->fd < 0) { /* no O_TMPFILE here: a hidden temporary name until the commit */
            const char *base = strrchr(d, '/') ? strrchr(d, '/') + 1 : d;
            snprintf(o->named, sizeof o->named, "%.2000s/.%.1000s.anonkit-tmp-XXXXXX", o->parent, base);
            if ((o->fd = mkstemp(o->named)) < 0) o->named[0] = '\0';
        }
        struct stat sb;
        if (o->fd < 0 || fstat(o->fd, &sb) != 0) rc = mp_fail_io(c, d, "cannot create the output");
        else {
            id.pid = (long long)getpid();
            id.fd = o->fd;
            id.dev = (long long)sb.st_dev;
            id.ino = (long long)sb.st_ino;
        }
        gethostname(id.host, sizeof id.host - 1);
    }
    if ((rc = mp_agree(c, rc)) < 0) return rc;
    if (c->size == 1) return ANONKIT_OK;
    double t = mp_cpu();
    MPI_Bcast(&id, (int)sizeof id, MPI_BYTE, 0, c->comm);
    c->comm_cpu += mp_cpu() - t;
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    const char *force = getenv("ANONKIT_MPI_TEST_NAMED"); /* tests: the path of ranks on other machines */
    if (c->rank != 0 && id.unnamed && !(force && *force == '1') && !strcmp(host, id.host)) {
        char proc[96];
        snprintf(proc, sizeof proc, "/proc/%lld/fd/%lld", id.pid, id.fd);
        o->fd = open(proc, O_WRONLY | O_CLOEXEC);
        struct stat sb;
        if (o->fd >= 0 && (fstat(o->fd, &sb) != 0 || (long long)sb.st_dev != id.dev || (long long)sb.st_ino != id.ino)) {
            close(o->fd);
            o->fd = -1;
        }
    }
    int reached = c->rank == 0 || o->fd >= 0, all = 0;
    t = mp_cpu();
    MPI_Allreduce(&reached, &all, 1, MPI_INT, MPI_LAND, c->comm);
    c->comm_cpu += mp_cpu() - t;
    if (all) return ANONKIT_OK;
    /* a rank cannot reach the unnamed file: it gets a hidden name */
    char name[4300] = "";
    if (c->rank == 0) {
        if (o->named[0]) snprintf(name, sizeof name, "%s", o->named);
        else {
            char proc[64];
            snprintf(proc, sizeof proc, "/proc/self/fd/%d", o->fd);
            if ((rc = link_fresh(c, d, o->parent, proc, NULL, o->named, sizeof o->named)) == ANONKIT_OK)
                snprintf(name, sizeof name, "%s", o->named);
        }
    }
    if ((rc = mp_agree(c, rc)) < 0) return rc;
    t = mp_cpu();
    MPI_Bcast(name, (int)sizeof name, MPI_CHAR, 0, c->comm);
    c->comm_cpu += mp_cpu() - t;
    if (c->rank != 0 && o->fd < 0 && (o->fd = open(name, O_WRONLY | O_CLOEXEC)) < 0)
        rc = mp_fail_io(c, d, "cannot open the output (is its folder on a file system every rank shares?)");
    return mp_agree(c, rc);
}

/* Opens this rank's output stream, which has no name until the commit: DIR:
 * an unnamed file in the destination's folder (O_TMPFILE), linked into the
 * staging folder at the commit; FILE: rank 0's unnamed file (open_one_file),
 * which every rank writes at its offset. So a run that ends early, even by
 * SIGKILL, leaves nothing at the output path. */
int mp_out_open(mp_ctx *c, const char *dest, long header, mp_out *o)
{
    memset(o, 0, sizeof *o);
    o->fd = -1;
    const size_t len = strlen(dest);
    o->dir_mode = len && dest[len - 1] == '/';
    struct stat sb;
    if (!o->dir_mode && stat(dest, &sb) == 0 && S_ISDIR(sb.st_mode)) o->dir_mode = 1;
    char d[4096];
    mp_dest_names(dest, d, sizeof d, o->parent, sizeof o->parent);
    int rc = ANONKIT_OK, fd = -1;
    if (o->dir_mode) {
#ifdef O_TMPFILE
        fd = open(o->parent, O_TMPFILE | O_RDWR | O_CLOEXEC, 0666);
#endif
        if (fd < 0) { /* no O_TMPFILE here: a temporary name until the commit */
            snprintf(o->named, sizeof o->named, "%s/.part-%05d.anonkit-tmp-XXXXXX", o->parent, c->rank);
            if ((fd = mkstemp(o->named)) < 0) o->named[0] = '\0';
        }
        if (fd < 0 || !(o->f = fdopen(fd, "w+"))) rc = mp_fail_io(c, d, "cannot create a part of the output");
    } else {
        if ((rc = open_one_file(c, d, o)) < 0) return rc;
        /* the file as MPI-IO sees it: opened again by this rank alone (its own
         * descriptor's path names the same file on every rank), so that a
         * failure on one rank cannot leave the others in a collective call */
        char self[64];
        snprintf(self, sizeof self, "/proc/self/fd/%d", o->fd);
        if (MPI_File_open(MPI_COMM_SELF, self, MPI_MODE_WRONLY, MPI_INFO_NULL, &o->mf) != MPI_SUCCESS)
            rc = ak_err_set(&c->err, ANONKIT_E_IO, d, 0, 0, "cannot open the output through MPI-IO");
        else o->mf_open = 1;
        o->header = header;
        o->skip = c->rank == 0 ? 0 : header;
        o->placed = c->rank == 0; /* rank 0 writes at 0, its header first */
        static const cookie_io_functions_t file_io = {.write = file_write};
        if (!(o->f = fopencookie(o, "w", file_io))) rc = ak_err_nomem(&c->err);
    }
    if (rc == ANONKIT_OK && setvbuf(o->f, NULL, _IOFBF, (size_t)1 << 20) != 0) rc = ak_err_nomem(&c->err);
    if (rc < 0 && fd >= 0 && !o->f) close(fd);
    return mp_agree(c, rc);
}

int mp_out_place(mp_ctx *c, mp_out *o, uint64_t len)
{
    uint64_t at = 0;
    if (c->rank == 0) len += (uint64_t)o->header;
    const double t = mp_cpu();
    MPI_Exscan(&len, &at, 1, MPI_UINT64_T, MPI_SUM, c->comm);
    c->comm_cpu += mp_cpu() - t;
    if (c->rank != 0) o->base = at; /* (rank 0's is 0; MPI_Exscan leaves its result undefined) */
    o->expect = len;
    o->placed = 1;
    return ANONKIT_OK;
}

/* The bytes csv_escape makes of s[0 .. len) (scratch: room for csv_escaped_max(len)). */
static size_t escaped_len(const char *s, size_t len, char delim, strbuf *scratch)
{
    if (strbuf_reserve(scratch, csv_escaped_max(len)) != 0) return SIZE_MAX;
    return csv_escape(scratch->data, s, len, delim);
}

int mp_part_length(mp_ctx *c, const table *view, const partition *p, const size_t *off, uint32_t ncopied,
                   uint64_t *len)
{
    *len = 0;
    const uint32_t d = view->nqi;
    const size_t n = view->nrows;
    const char delim = view->delimiter;
    uint32_t nout = 0; /* the output columns: every one but the identifiers */
    for (uint32_t col = 0; col < view->ncolumns; col++) nout += view->roles[col] != ROLE_IDENTIFIER;
    const recode_style style = c->job->publish;
    strbuf value = {0}, scratch = {0};
    uint64_t *cls = malloc((p->nclasses ? p->nclasses : 1) * sizeof *cls);
    unsigned char *int_range = calloc(d ? d : 1, 1);
    int rc = cls && int_range ? ANONKIT_OK : ak_err_nomem(&c->err);
    for (uint32_t q = 0; rc == ANONKIT_OK && q < d; q++)
        int_range[q] = (unsigned char)recode_is_int_range(view, p, style, q);
    /* per class: its QIs' texts, escaped (as the writer's format_class makes them) */
    for (size_t k = 0; rc == ANONKIT_OK && k < p->nclasses; k++) {
        uint64_t sum = 0;
        for (uint32_t q = 0; q < d; q++) {
            const char *text;
            size_t tl;
            char num[48];
            if (int_range[q]) {
                const uint32_t lo = partition_lo(p, k)[q], hi = partition_hi(p, k)[q];
                tl = recode_int_range(style, lo, hi, view->qi[q].values[lo], view->qi[q].values[hi], num);
                text = num;
            } else {
                if (recode_class_text(view, p, NULL, style, k, q, &value) != 0) {
                    rc = ak_err_nomem(&c->err);
                    break;
                }
                text = value.data;
                tl = value.len;
            }
            const size_t e = escaped_len(text, tl, delim, &scratch);
            if (e == SIZE_MAX) {
                rc = ak_err_nomem(&c->err);
                break;
            }
            sum += e;
        }
        cls[k] = sum;
    }
    const size_t star = rc == ANONKIT_OK ? escaped_len(RECODE_SUPPRESSED, strlen(RECODE_SUPPRESSED), delim, &scratch) : 0;
    if (rc == ANONKIT_OK && star == SIZE_MAX) rc = ak_err_nomem(&c->err);
    /* per row: its class's texts, its copied fields, nout - 1 delimiters and the
     * newline: by class (its rows' count) but where a row may be one empty
     * field, written as "" (one output column) */
    uint64_t total = 0;
    if (rc == ANONKIT_OK && nout > 1) {
        uint64_t classed = 0;
        for (size_t k = 0; k < p->nclasses; k++) {
            total += cls[k] * p->count[k];
            classed += p->count[k];
        }
        total += (n - classed) * (uint64_t)star * d + (uint64_t)n * nout;
        if (ncopied) total += off[n * ncopied] - off[0];
    }
    for (size_t r = 0; rc == ANONKIT_OK && nout == 1 && r < n; r++) {
        const uint32_t k = p->class_of[r];
        uint64_t row = k == PARTITION_SUPPRESSED ? (uint64_t)star * d : cls[k];
        if (ncopied) row += off[(r + 1) * ncopied] - off[r * ncopied];
        total += row ? row + 1 : 3;
    }
    free(cls);
    free(int_range);
    strbuf_free(&value);
    strbuf_free(&scratch);
    if (rc == ANONKIT_OK) *len = total;
    return rc;
}

int mp_out_progress(mp_ctx *c, mp_out *o)
{
    if (fflush(o->f) != 0) return mp_fail_io(c, "output", "cannot write");
    const int fd = o->dir_mode ? fileno(o->f) : o->fd;
    const off_t told = o->dir_mode ? ftello(o->f) : 0;
    const uint64_t base = o->dir_mode ? 0 : o->base, end = o->dir_mode ? (told > 0 ? (uint64_t)told : 0) : o->pos;
    if (end >= o->synced + ((uint64_t)8 << 20)) {
        /* a hint: where the call is missing or refused, the commit's fsync does it all */
        (void)sync_file_range(fd, (off_t)(base + o->synced), (off_t)(end - o->synced), SYNC_FILE_RANGE_WRITE);
        o->synced = end;
    }
    return ANONKIT_OK;
}

/* Closes this rank's stream and its descriptor of the one file. */
void mp_out_close(mp_out *o)
{
    if (o->f) fclose(o->f);
    o->f = NULL;
    if (o->mf_open) MPI_File_close(&o->mf);
    o->mf_open = 0;
    if (o->fd >= 0) close(o->fd);
    o->fd = -1;
}

/* Removes whatever was made for the output (every rank its part; rank 0 the
 * staging folder or file, and the one file's hidden name). */
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

/* DIR: rank 0 makes the staging folder beside the destination; every rank learns its name. */
static int make_staging(mp_ctx *c, const char *dest, mp_out *o)
{
    int rc = ANONKIT_OK;
    if (c->rank == 0) {
        char d[4096], parent[4096];
        mp_dest_names(dest, d, sizeof d, parent, sizeof parent);
        snprintf(o->tmp, sizeof o->tmp, "%.4000s.anonkit-tmp-XXXXXX", d);
        if (!mkdtemp(o->tmp)) {
            rc = mp_fail_io(c, d, "cannot create the output folder");
            o->tmp[0] = '\0';
        }
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
    if (o->dir_mode) {
        if (rc == ANONKIT_OK && (fflush(o->f) != 0 || fsync(fileno(o->f)) != 0)) rc = mp_fail_io(c, dest, "cannot write");
    } else if (rc == ANONKIT_OK) { /* every rank its rows, at its offset, as long as measured, on disk */
        if (fflush(o->f) != 0) rc = mp_fail_io(c, dest, "cannot write");
        else if (o->skip != 0 || o->pos != o->expect)
            rc = ak_err_set(&c->err, ANONKIT_E_INTERNAL, dest, 0, 0,
                            "rank %d wrote %llu bytes of the output where %llu were measured", c->rank,
                            (unsigned long long)o->pos, (unsigned long long)o->expect);
        else if (MPI_File_sync(o->mf) != MPI_SUCCESS) { /* (this rank's alone: mf is opened on MPI_COMM_SELF) */
            errno = EIO;
            rc = mp_fail_io(c, dest, "cannot write");
        }
    }
    const char *pause = getenv("ANONKIT_MPI_TEST_PAUSE"); /* tests: a window to kill a rank in */
    if (pause && c->rank == 1) sleep((unsigned)atoi(pause));
    if ((rc = mp_agree(c, rc)) < 0) return rc;
    if (!o->dir_mode) { /* one file: rank 0 names it (its hidden name, or a fresh one) and renames it to dest */
        if (c->rank == 0) {
            char d[4096], parent[4096], proc[64];
            mp_dest_names(dest, d, sizeof d, parent, sizeof parent);
            snprintf(proc, sizeof proc, "/proc/self/fd/%d", o->fd);
            /* (every rank synced its rows, with the file's size where its rows end it) */
            if (!o->named[0]) rc = link_fresh(c, d, o->parent, proc, NULL, o->named, sizeof o->named);
            if (rc == ANONKIT_OK) {
                if (rename(o->named, dest) != 0) rc = mp_fail_io(c, dest, "cannot commit the output");
                else o->named[0] = '\0';
            }
        }
        mp_out_close(o);
        return mp_agree(c, rc);
    }
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
