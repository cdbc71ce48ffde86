/* check_parts.c — a folder of part files (anonkit-mpi's -o DIR/, one header
 * each) spooled into one table for the verifier (docs/distributed.md §5). The
 * parts are whatever *.csv files the folder holds, in name order; the manifest
 * is not needed. */
#include "api/check_parts.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/strbuf.h"

static int cmp_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Appends f from after its first line (quote-aware) to fd. */
static int append_body(FILE *f, int fd, const char *path, ak_error *err)
{
    int c, inq = 0;
    while ((c = getc(f)) != EOF) {
        if (c == '"') inq = !inq;
        else if (c == '\n' && !inq) break;
    }
    char buf[1 << 16];
    size_t got;
    while ((got = fread(buf, 1, sizeof buf, f)) > 0)
        for (size_t at = 0; at < got;) {
            const ssize_t put = write(fd, buf + at, got - at);
            if (put < 0) return ak_err_set(err, ANONKIT_E_IO, path, 0, 0, "cannot copy the part: %s", strerror(errno));
            at += (size_t)put;
        }
    if (ferror(f)) return ak_err_set(err, ANONKIT_E_IO, path, 0, 0, "cannot read: %s", strerror(errno));
    return ANONKIT_OK;
}

int check_parts_spool(const char *dir, const char *tmpdir, spool *s, ak_error *err)
{
    memset(s, 0, sizeof *s);
    DIR *d = opendir(dir);
    if (!d) return ak_err_set(err, ANONKIT_E_IO, dir, 0, 0, "cannot open the folder: %s", strerror(errno));
    char **names = NULL;
    size_t n = 0, cap = 0;
    int rc = ANONKIT_OK;
    struct dirent *e;
    while (rc == ANONKIT_OK && (e = readdir(d))) {
        const size_t len = strlen(e->d_name);
        if (len < 5 || e->d_name[0] == '.' || strcmp(e->d_name + len - 4, ".csv") != 0) continue;
        if (AK_RESERVE(names, cap, n + 1) != 0 || !(names[n] = malloc(strlen(dir) + len + 2))) {
            rc = ak_err_nomem(err);
            break;
        }
        sprintf(names[n++], "%s/%s", dir, e->d_name);
    }
    closedir(d);
    if (rc == ANONKIT_OK && !n) rc = ak_err_set(err, ANONKIT_E_INPUT, dir, 0, 0, "the folder holds no part files (*.csv)");
    if (rc == ANONKIT_OK) qsort(names, n, sizeof *names, cmp_name);
    for (size_t i = 0; rc == ANONKIT_OK && i < n; i++) {
        FILE *f = fopen(names[i], "rb");
        if (!f) {
            rc = ak_err_set(err, ANONKIT_E_IO, names[i], 0, 0, "cannot open: %s", strerror(errno));
            break;
        }
        if (i == 0) rc = spool_stream_in(s, f, tmpdir, err);
        else if (lseek(s->fd, 0, SEEK_END) < 0) rc = ak_err_set(err, ANONKIT_E_IO, names[i], 0, 0, "cannot copy the part");
        else rc = append_body(f, s->fd, names[i], err);
        fclose(f);
    }
    for (size_t i = 0; i < n; i++) free(names[i]);
    free(names);
    if (rc < 0) spool_remove(s);
    return rc;
}
