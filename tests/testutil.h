/* testutil.h — helpers shared by the test programs: temporary folders,
 * whole-file reads and writes, a seeded random generator, the random tables
 * the property tests anonymize, and anonymizing then proving the result with
 * the independent verifier. */
#ifndef AK_TESTUTIL_H
#define AK_TESTUTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

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
/* 1 when the folder holds nothing but . and .. (fails the test when it
 * cannot be opened). */
int tu_dir_is_empty(const char *path);
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

/* ---- random tables ----
 *
 * A random table is a CSV file "in.csv" with columns id, QIs a0..a{nqi-1},
 * and (unless the shape leaves it to a `tail`) a categorical sensitive column
 * s; each QI is categorical (leaves "v0".. of a random hierarchy file
 * "h<q>.csv", tu_write_random_hierarchy) or numeric (integers). Every random
 * choice is drawn from the caller's generator in a fixed order, so a seed
 * names a table. */

#define TU_MAX_QI 4
#define TU_MAX_ROWS 400

typedef struct tu_table {
    size_t nrows;
    int nqi;
    int categorical[TU_MAX_QI];
    int nleaves[TU_MAX_QI];             /* hierarchy leaves, or the numeric domain's size */
    char hier_path[TU_MAX_QI][4096];    /* categorical QIs' hierarchy files */
    int value[TU_MAX_ROWS][TU_MAX_QI];  /* leaf index (file order), or numeric domain index */
    int sensitive[TU_MAX_ROWS];         /* s = "d<sensitive>" (none with a tail) */
    int nsensitive;
    char csv_path[4096];
} tu_table;

/* What varies between the tests' tables. Rows: min_rows + [0, rows_span),
 * except one table in four min_rows + [0, rows_span_rare) when that is set.
 * A QI is categorical one time in categorical_one_in; a numeric QI has a
 * domain of 1..numeric_small or 1..numeric_large values (even odds), its
 * value v written as v * scale + offset. With skew, one value in three is
 * drawn from the lower half of the domain (many duplicates). The sensitive
 * value is d0 one time in dominant_one_in, else one of 1..max_sensitive
 * values (their number drawn before the QIs). note adds a quoted free-text
 * column "x, <row>" after s. */
typedef struct tu_table_shape {
    size_t min_rows, rows_span, rows_span_rare;
    int max_qi; /* at most TU_MAX_QI */
    int categorical_one_in;
    int numeric_small, numeric_large;
    int scale, offset;
    int skew;
    int max_sensitive, dominant_one_in;
    int note;
    /* Instead of s (and note): tail_header (e.g. ",s,cls,y") in the header,
     * and tail writing the rest of each row after the QIs (from ',' to the
     * newline), drawing from rng as it likes; ctx is passed through. */
    const char *tail_header;
    void (*tail)(tu_rng *rng, FILE *f, const tu_table *g, size_t row, void *ctx);
    void *ctx;
} tu_table_shape;

/* Writes a random table of the given shape into dir (in.csv and the
 * hierarchy files) and describes it in *g. Aborts on failure. */
void tu_random_table(tu_rng *rng, const char *dir, const tu_table_shape *shape, tu_table *g);

/* tu_job_generated for a random table. */
void tu_job_table(anonkit_job *job, const tu_table *g);

/* ---- anonymize, then prove ----
 *
 * The property tests run anonkit_anonymize on random tables and hold every
 * published file to the independent verifier, anonkit_check: */

/* Runs anonkit_anonymize(job), whose output is `out`. When eligible, it must
 * succeed and count every row read as published or suppressed; the result is
 * returned (the caller frees it). When not, it must fail with
 * ANONKIT_E_INELIGIBLE and leave no file at out; NULL is returned. `what`
 * names the case in failure messages (which end the test through cmocka). */
anonkit_result *tu_anonymize(anonkit_job *job, const char *out, int eligible, const char *what);

/* anonkit_check(job, out) must accept the published file; returns the
 * verifier's count of published rows and sets *classes (may be NULL). */
uint64_t tu_verify(anonkit_job *job, const char *out, const char *what, uint64_t *classes /* OUT */);

/* tu_verify for a model with a suppression limit:
 * also sets *suppressed, the rows published as all "*" that the verifier
 * counted as suppressed. */
uint64_t tu_verify_suppressed(anonkit_job *job, const char *out, const char *what, uint64_t *classes /* OUT */,
                              uint64_t *suppressed /* OUT */);

/* Both: tu_anonymize, then, when eligible, tu_verify, which must see every
 * row read (published rows and suppressed ones, written as "*"). */
anonkit_result *tu_anonymize_verified(anonkit_job *job, const char *out, int eligible, const char *what,
                                      uint64_t *classes /* OUT, may be NULL */, uint64_t *rows /* OUT, may be NULL */);

#endif
