/* generate.c — anonkit_generate: the synthetic data of [LeFevre07] Figure 7 (io/synth.h)
 * written through the atomic output file (io/outfile.h), so a failed run leaves
 * nothing behind. */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include "anonkit/anonkit.h"
#include "api/locale.h"
#include "common/error.h"
#include "common/rng.h"
#include "io/outfile.h"
#include "io/synth.h"

/* Fewer bytes than any generated row takes, as CSV or as tuples (twelve
 * delimiters and a line end, and a digit or more in each of the 13 fields). */
#define SYNTH_MIN_ROW_BYTES 26

/* Refuses, before anything is written, a row count whose output cannot fit
 * the free space of the file system the regular output file is on. */
static int check_room(const outfile *of, const char *path, uint64_t rows, ak_error *err)
{
    struct stat st;
    struct statvfs vfs;
    const int fd = fileno(of->stream);
    if (of->stream == stdout || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || fstatvfs(fd, &vfs) != 0)
        return ANONKIT_OK; /* a pipe or a device: nothing to measure */
    const unsigned long long avail = (unsigned long long)vfs.f_bavail * vfs.f_frsize;
    if (rows <= avail / SYNTH_MIN_ROW_BYTES) return ANONKIT_OK;
    return ak_err_set(err, ANONKIT_E_USAGE, path, 0, 0,
                      "--rows %llu needs more than %llu MB and the output's file system has %llu MB free",
                      (unsigned long long)rows, (unsigned long long)(rows / (1000000 / SYNTH_MIN_ROW_BYTES)),
                      avail / 1000000);
}

static int fail(const ak_error *err, char *errbuf, size_t errsize)
{
    if (errbuf && errsize) ak_err_format(err, errbuf, errsize);
    return err->code ? err->code : ANONKIT_E_INTERNAL;
}

/* anonkit_generate in the C numeric locale. */
static int generate(const char *output_path, uint64_t rows, const uint64_t *seed, const char *format,
                     const char *salary, uint64_t *out_seed, char *errbuf, size_t errsize)
{
    ak_error err;
    ak_err_clear(&err);
    if (errbuf && errsize) errbuf[0] = '\0';
    synth_format fmt;
    if (!format || !strcmp(format, "csv")) {
        fmt = SYNTH_CSV;
    } else if (!strcmp(format, "binary")) {
        fmt = SYNTH_BINARY;
    } else {
        ak_err_set(&err, ANONKIT_E_USAGE, NULL, 0, 0, "--format must be csv or binary, not '%s'", format);
        return fail(&err, errbuf, errsize);
    }
    synth_salary how;
    if (!salary || !strcmp(salary, "uniform")) {
        how = SYNTH_SALARY_UNIFORM;
    } else if (!strcmp(salary, "normal")) {
        how = SYNTH_SALARY_NORMAL;
    } else {
        ak_err_set(&err, ANONKIT_E_USAGE, NULL, 0, 0, "--salary must be uniform or normal, not '%s'", salary);
        return fail(&err, errbuf, errsize);
    }
    if (!output_path || !*output_path) {
        ak_err_set(&err, ANONKIT_E_USAGE, NULL, 0, 0, "no output file given (-o FILE, or - for stdout)");
        return fail(&err, errbuf, errsize);
    }
    uint64_t seed_used;
    seed_used = seed ? *seed : ak_fresh_seed();
    if (out_seed) *out_seed = seed_used;

    outfile of;
    int rc = outfile_open(&of, output_path, &err);
    if (rc < 0) return fail(&err, errbuf, errsize);
    const char *name = strcmp(output_path, "-") ? output_path : "stdout";
    rc = check_room(&of, output_path, rows, &err);
    if (rc == ANONKIT_OK) rc = synth_write(of.stream, name, rows, seed_used, fmt, how, 0, NULL, &err);
    if (rc == ANONKIT_OK) rc = outfile_commit(&of, &err);
    if (rc < 0) {
        outfile_abort(&of);
        return fail(&err, errbuf, errsize);
    }
    return ANONKIT_OK;
}

int anonkit_generate(const char *output_path, uint64_t rows, const uint64_t *seed, const char *format,
                     const char *salary, uint64_t *out_seed, char *errbuf, size_t errsize)
{
    ak_c_numeric scope;
    ak_c_numeric_enter(&scope);
    const int rc = generate(output_path, rows, seed, format, salary, out_seed, errbuf, errsize);
    ak_c_numeric_leave(&scope);
    return rc;
}
