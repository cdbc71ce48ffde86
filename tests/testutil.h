/* testutil.h — small helpers shared by the test programs: temporary folders,
 * whole-file reads and writes, a seeded random generator. */
#ifndef AK_TESTUTIL_H
#define AK_TESTUTIL_H

#include <stddef.h>
#include <stdint.h>

#include "anonkit/anonkit.h"

/* Creates a fresh private folder under $TMPDIR (or /tmp); the returned path is
 * static storage valid until the next call. Aborts the test program on failure. */
const char *tu_mkdtemp(void);
/* A private folder for a whole cmocka group: tu_group_setup creates it as
 * tu_group_dir, tu_group_teardown removes it (pass them to
 * cmocka_run_group_tests). */
extern char tu_group_dir[4096];
int tu_group_setup(void **state);
int tu_group_teardown(void **state);
/* Removes a folder and everything in it (rm -rf). */
void tu_rmtree(const char *path);
/* Writes text to path (aborts on failure). */
void tu_write_file(const char *path, const char *text);
/* Reads a whole file into a malloc'd NUL-terminated buffer (NULL if missing). */
char *tu_read_file(const char *path, size_t *len /* OUT, may be NULL */);
/* Joins dir and name into a static buffer (one of 8 rotating buffers). */
const char *tu_path(const char *dir, const char *name);

/* splitmix64 generator for reproducible random test data. */
typedef struct tu_rng { uint64_t s; } tu_rng;
static inline uint64_t tu_next(tu_rng *r)
{
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}
/* Uniform integer in [0, n). */
static inline uint64_t tu_below(tu_rng *r, uint64_t n) { return n ? tu_next(r) % n : 0; }

/* Writes a random ARX hierarchy of 2..11 leaves "v0", "v1", ... (rows in
 * shuffled order) under 1..3 levels of inner nodes labelled after QI `qi`,
 * ending in "*"; returns the leaf count. Aborts on failure. */
int tu_write_random_hierarchy(tu_rng *rng, const char *path, int qi);

/* Sets the job for a generated table `input` whose columns are "id"
 * (identifier), QIs "a0".."a{nqi-1}" (QI q categorical with hierarchy file
 * hier_path[q] when categorical[q]) and "s" (sensitive). Aborts on failure. */
void tu_job_generated(anonkit_job *job, int nqi, const int *categorical, const char (*hier_path)[4096],
                      const char *input);

#endif
