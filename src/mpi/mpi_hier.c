/* mpi_hier.c — --hierarchy COL=auto on a cluster (docs/distributed.md §2):
 * the flat hierarchy of a QI built from the whole table's distinct values,
 * the same on every rank. Each rank collects the values of the files it
 * reads (the hierarchy builder's own collector, core/hierbuild.h); the value
 * sets are exchanged with one MPI_Allgatherv; every rank then builds the
 * flat hierarchy of their union with the same builder that `anonkit
 * anonymize --hierarchy COL=auto` and `anonkit hierarchy --flat` use on one
 * machine (the leaves in byte order, the leaf NULL first when a cell is
 * missing and NULL is no value), writes it to a private file and gives the
 * loader that file in place of "auto". */
#include "mpi/mpi_internal.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/hierbuild.h"

/* Appends the values of column col of `path` to pack (a 4-byte length, then
 * the bytes, per value) and sets *missing when a cell is missing. The values
 * are the leaves of the file's own flat hierarchy but its missing leaf. */
static int collect_file(mp_ctx *c, const char *path, const char *col, const hb_missing *miss, strbuf *pack,
                        int *missing)
{
    hb_values v;
    hb_rows rows;
    memset(&rows, 0, sizeof rows);
    int rc = hb_collect(&v, path, path, c->job->delimiter, col, miss, &c->err);
    if (rc < 0) return rc;
    const hb_options o = {.kind = HB_FLAT};
    rc = hb_build(&v, &o, &rows, &c->err);
    if (rc == ANONKIT_E_INPUT && !v.nmissing) { /* a part without a value adds nothing */
        hb_values_free(&v);
        memset(&c->err, 0, sizeof c->err);
        return ANONKIT_OK;
    }
    if (rc == ANONKIT_OK) {
        /* the first row is the missing leaf when a cell is missing and NULL is no value */
        const uint32_t skip =
            v.nmissing && strmap_find(&v.dict, HB_MISSING_LABEL, strlen(HB_MISSING_LABEL)) == AK_NOT_FOUND;
        if (v.nmissing) *missing = 1;
        for (uint32_t r = skip; rc == ANONKIT_OK && r < rows.nrows; r++) {
            const char *label = rows.text.data + rows.at[(size_t)r * rows.width];
            const uint32_t len = (uint32_t)strlen(label);
            if (strbuf_append(pack, (const char *)&len, 4) != 0 || strbuf_append(pack, label, len) != 0)
                rc = ak_err_nomem(&c->err);
        }
    }
    hb_rows_free(&rows);
    hb_values_free(&v);
    return rc;
}

/* Writes one column "v" holding every value of the packs (quoted) and, when
 * any rank saw a missing cell, an empty cell, into a private CSV file. */
static int write_union(mp_ctx *c, const char *all, size_t total, const int *lens, const int *displ, int missing,
                       FILE *f)
{
    int bad = fputs("v,x\n", f) < 0;
    if (missing) bad |= fputs(",x\n", f) < 0;
    for (int r = 0; r < c->size && !bad; r++)
        for (size_t at = (size_t)displ[r], end = at + (size_t)lens[r]; at + 4 <= end && at + 4 <= total && !bad;) {
            uint32_t len;
            memcpy(&len, all + at, 4);
            at += 4;
            bad |= fputc('"', f) == EOF;
            for (uint32_t i = 0; i < len && !bad; i++) {
                if (all[at + i] == '"') bad |= fputc('"', f) == EOF;
                bad |= fputc(all[at + i], f) == EOF;
            }
            bad |= fputs("\",x\n", f) < 0;
            at += len;
        }
    bad |= fflush(f) != 0;
    return bad ? mp_fail_io(c, "(a private file)", "cannot write the values of a flat hierarchy") : ANONKIT_OK;
}

/* A private file in the --tmpdir (or $TMPDIR, or /tmp) named into path. */
static FILE *private_file(mp_ctx *c, const char *what, char *path, size_t size)
{
    const char *dir = c->job->tmpdir ? c->job->tmpdir : getenv("TMPDIR");
    if (!dir || !*dir) dir = "/tmp";
    snprintf(path, size, "%s/anonkit-mpi-%s-XXXXXX", dir, what);
    const int fd = mkstemp(path);
    FILE *f = fd >= 0 ? fdopen(fd, "w+") : NULL;
    if (!f) {
        if (fd >= 0) {
            close(fd);
            unlink(path);
        }
        path[0] = '\0';
    }
    return f;
}

int mp_auto_hierarchies(mp_ctx *c, char *const *files, const int *owner, size_t nfiles, char ***made, size_t *nmade)
{
    *made = NULL;
    *nmade = 0;
    anonkit_job *j = c->job;
    const hb_missing miss = {(const char *const *)j->missing.items, j->missing.count};
    int rc = ANONKIT_OK;
    for (size_t h = 0; h < j->hierarchy_paths.count && rc == ANONKIT_OK; h++) {
        if (strcmp(j->hierarchy_paths.items[h], "auto") != 0) continue;
        const char *col = j->hierarchy_attrs.items[h];
        int qi = 0; /* (another column keeps "auto": the loader and the models say what they make of it) */
        for (size_t q = 0; q < j->qi.count && !qi; q++) qi = !strcmp(j->qi.items[q], col);
        if (!qi) continue;
        strbuf pack = {0};
        int missing = 0, any_missing = 0, len = 0, *lens = calloc(2 * (size_t)c->size, sizeof *lens);
        char *all = NULL, csv[4200], hpath[4200];
        csv[0] = hpath[0] = '\0';
        if (!lens) rc = ak_err_nomem(&c->err);
        for (size_t i = 0; rc == ANONKIT_OK && i < nfiles; i++)
            if (owner[i] == c->rank) rc = collect_file(c, files[i], col, &miss, &pack, &missing);
        if (rc == ANONKIT_OK && pack.len > (size_t)INT_MAX / 2)
            rc = ak_err_set(&c->err, ANONKIT_E_USAGE, NULL, 0, 0,
                            "--hierarchy %s=auto: one rank's distinct values pass 1 GiB", col);
        if ((rc = mp_agree(c, rc)) < 0) {
            free(lens);
            strbuf_free(&pack);
            break;
        }
        len = (int)pack.len;
        double t = mp_cpu();
        MPI_Allgather(&len, 1, MPI_INT, lens, 1, MPI_INT, c->comm);
        MPI_Allreduce(&missing, &any_missing, 1, MPI_INT, MPI_LOR, c->comm);
        size_t total = 0;
        for (int r = 0; r < c->size; r++) {
            lens[c->size + r] = (int)total;
            total += (size_t)lens[r];
        }
        c->comm_cpu += mp_cpu() - t;
        if (total > (size_t)INT_MAX)
            rc = ak_err_set(&c->err, ANONKIT_E_USAGE, NULL, 0, 0, "--hierarchy %s=auto: the distinct values pass 2 GiB",
                            col);
        else if (!(all = malloc(total ? total : 1))) rc = ak_err_nomem(&c->err);
        if ((rc = mp_agree(c, rc)) == ANONKIT_OK) {
            t = mp_cpu();
            MPI_Allgatherv(pack.data ? pack.data : "", len, MPI_BYTE, all, lens, lens + c->size, MPI_BYTE, c->comm);
            c->comm_cpu += mp_cpu() - t;
            /* the union through the one builder: a private CSV of the values, its flat hierarchy */
            FILE *f = private_file(c, "values", csv, sizeof csv);
            if (!f) rc = mp_fail_io(c, "(a private file)", "cannot create a file for a flat hierarchy");
            else {
                rc = write_union(c, all, total, lens, lens + c->size, any_missing, f);
                fclose(f);
            }
            hb_values v;
            hb_rows rows;
            memset(&rows, 0, sizeof rows);
            int collected = 0;
            if (rc == ANONKIT_OK && (rc = hb_collect(&v, csv, col, ',', "v", &miss, &c->err)) == ANONKIT_OK) {
                collected = 1;
                const hb_options o = {.kind = HB_FLAT};
                rc = hb_build(&v, &o, &rows, &c->err);
            }
            FILE *hf = rc == ANONKIT_OK ? private_file(c, "hierarchy", hpath, sizeof hpath) : NULL;
            if (rc == ANONKIT_OK && !hf) rc = mp_fail_io(c, "(a private file)", "cannot create a flat hierarchy");
            if (rc == ANONKIT_OK) rc = hb_write(&rows, hf, hpath, &c->err);
            if (hf && fclose(hf) != 0 && rc == ANONKIT_OK) rc = mp_fail_io(c, hpath, "cannot write a flat hierarchy");
            if (rc < 0 && hpath[0]) {
                unlink(hpath);
                hpath[0] = '\0';
            }
            hb_rows_free(&rows);
            if (collected) hb_values_free(&v);
            if (csv[0]) unlink(csv);
        }
        char **grown = rc == ANONKIT_OK ? realloc(*made, (*nmade + 1) * sizeof *grown) : NULL;
        char *copy = grown ? strdup(hpath) : NULL;
        if (grown) *made = grown;
        if (rc == ANONKIT_OK && (!grown || !copy)) {
            free(copy);
            unlink(hpath);
            rc = ak_err_nomem(&c->err);
        }
        if (rc == ANONKIT_OK) { /* the loader reads the built file in place of "auto" */
            (*made)[(*nmade)++] = copy;
            free(j->hierarchy_paths.items[h]);
            j->hierarchy_paths.items[h] = strdup(hpath);
            if (!j->hierarchy_paths.items[h]) rc = ak_err_nomem(&c->err);
        }
        free(all);
        free(lens);
        strbuf_free(&pack);
        rc = mp_agree(c, rc);
    }
    if (rc < 0) mp_auto_hierarchies_free(*made, *nmade), *made = NULL, *nmade = 0;
    return rc;
}

void mp_auto_hierarchies_free(char **made, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unlink(made[i]);
        free(made[i]);
    }
    free(made);
}
