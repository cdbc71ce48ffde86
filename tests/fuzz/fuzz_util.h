/* fuzz_util.h — what the fuzz harnesses share: a private folder under
 * $TMPDIR for the files an input becomes, and writing bytes to one. */
#ifndef AK_FUZZ_UTIL_H
#define AK_FUZZ_UTIL_H

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static char fuzz_dir[4096];

/* Removes the folder and the files in it (at exit). */
static inline void fuzz_cleanup(void)
{
    DIR *d = opendir(fuzz_dir);
    if (d) {
        struct dirent *e;
        char path[4400];
        while ((e = readdir(d)) != NULL) {
            if (e->d_name[0] == '.' && (!e->d_name[1] || (e->d_name[1] == '.' && !e->d_name[2]))) continue;
            snprintf(path, sizeof path, "%s/%s", fuzz_dir, e->d_name);
            unlink(path);
        }
        closedir(d);
    }
    rmdir(fuzz_dir);
}

/* The harness's own folder (made on first use, removed at exit) with NULL,
 * else the path of a file `name` in it (in a buffer the next call reuses). */
static inline const char *fuzz_path(const char *name)
{
    static char path[4300];
    if (!fuzz_dir[0]) {
        const char *tmp = getenv("TMPDIR");
        snprintf(fuzz_dir, sizeof fuzz_dir, "%s/anonkit-fuzz-XXXXXX", tmp && *tmp ? tmp : "/tmp");
        if (!mkdtemp(fuzz_dir)) abort();
        atexit(fuzz_cleanup);
    }
    if (!name) return fuzz_dir;
    snprintf(path, sizeof path, "%s/%s", fuzz_dir, name);
    return path;
}

/* Writes data[0 .. size) to path, aborting on failure. */
static inline void fuzz_write(const char *path, const uint8_t *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    if (!f) abort();
    if (size && fwrite(data, 1, size, f) != size) abort();
    if (fclose(f) != 0) abort();
}

#endif
