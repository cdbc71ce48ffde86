/* testutil.c — helpers for the test programs (see testutil.h). Most abort on
 * failure; the anonymize-and-verify helpers report through cmocka. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <unistd.h>

const char *tu_mkdtemp(void)
{
    static char path[4096];
    const char *base = getenv("TMPDIR");
    snprintf(path, sizeof path, "%s/anonkit-test-XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(path)) {
        perror("mkdtemp");
        abort();
    }
    return path;
}

char tu_group_dir[4096];

int tu_group_setup(void **state)
{
    (void)state;
    snprintf(tu_group_dir, sizeof tu_group_dir, "%s", tu_mkdtemp());
    return 0;
}

int tu_group_teardown(void **state)
{
    (void)state;
    tu_rmtree(tu_group_dir);
    return 0;
}

void tu_rmtree(const char *path)
{
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", path);
    if (system(cmd) != 0) fprintf(stderr, "warning: could not remove %s\n", path);
}

int tu_dir_is_empty(const char *path)
{
    DIR *d = opendir(path);
    assert_non_null(d);
    const struct dirent *e;
    int empty = 1;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) empty = 0;
    closedir(d);
    return empty;
}

void tu_write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(text, 1, strlen(text), f) != strlen(text) || fclose(f) != 0) {
        perror(path);
        abort();
    }
}

char *tu_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += got;
        if (cap - n - 1 == 0) {
            char *bigger = realloc(buf, cap * 2);
            if (!bigger) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = bigger;
            cap *= 2;
        }
    }
    fclose(f);
    if (!buf) abort();
    buf[n] = '\0';
    if (len) *len = n;
    return buf;
}

const char *tu_path(const char *dir, const char *name)
{
    static char bufs[8][4096];
    static int next;
    char *b = bufs[next++ & 7];
    snprintf(b, sizeof bufs[0], "%s/%s", dir, name);
    return b;
}

int tu_write_random_hierarchy(tu_rng *rng, const char *path, int qi)
{
    const int height = 1 + (int)tu_below(rng, 3);
    const int nleaves = 2 + (int)tu_below(rng, 10);
    /* Leaves are grouped per level by dividing their indices by a random fan-out. */
    const int fan[4] = {1, 1 + (int)tu_below(rng, 3), 1 + (int)tu_below(rng, 3), 1 + (int)tu_below(rng, 3)};
    int perm[16];
    for (int i = 0; i < nleaves; i++) perm[i] = i;
    for (int i = nleaves - 1; i > 0; i--) {
        int j = (int)tu_below(rng, (uint64_t)i + 1);
        int t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        abort();
    }
    for (int r = 0; r < nleaves; r++) {
        const int leaf = perm[r];
        fprintf(f, "v%d", leaf);
        int group = leaf;
        for (int level = 1; level < height; level++) {
            group /= fan[level] + 1;
            fprintf(f, ";q%dL%dg%d", qi, level, group);
        }
        fprintf(f, ";*\n");
    }
    fclose(f);
    return nleaves;
}

/* anonkit_job_set or abort. */
static void must_set(anonkit_job *job, anonkit_option option, const char *value)
{
    if (anonkit_job_set(job, option, value) != ANONKIT_OK) {
        fprintf(stderr, "tu_job_generated: %s\n", anonkit_errmsg(job));
        abort();
    }
}

void tu_job_generated(anonkit_job *job, int nqi, const int *categorical, const char (*hier_path)[4096],
                      const char *input)
{
    char qi[256] = "";
    for (int q = 0; q < nqi; q++) {
        char name[16];
        snprintf(name, sizeof name, "%sa%d", q ? "," : "", q);
        strcat(qi, name);
        if (categorical[q]) {
            char h[4200];
            snprintf(h, sizeof h, "a%d=%s", q, hier_path[q]);
            must_set(job, ANONKIT_OPT_HIERARCHY, h);
        }
    }
    must_set(job, ANONKIT_OPT_QI, qi);
    must_set(job, ANONKIT_OPT_SENSITIVE, "s");
    must_set(job, ANONKIT_OPT_IDENTIFIER, "id");
    must_set(job, ANONKIT_OPT_INPUT, input);
}

void tu_random_table(tu_rng *rng, const char *dir, const tu_table_shape *shape, tu_table *g)
{
    memset(g, 0, sizeof *g);
    if (shape->max_qi < 1 || shape->max_qi > TU_MAX_QI || shape->rows_span < 1 ||
        shape->min_rows + shape->rows_span - 1 > TU_MAX_ROWS ||
        (shape->rows_span_rare && shape->min_rows + shape->rows_span_rare - 1 > TU_MAX_ROWS)) {
        fprintf(stderr, "tu_random_table: shape out of range\n");
        abort();
    }
    g->nrows = shape->min_rows + tu_below(rng, shape->rows_span);
    if (shape->rows_span_rare && tu_below(rng, 4) == 0) g->nrows = shape->min_rows + tu_below(rng, shape->rows_span_rare);
    g->nqi = 1 + (int)tu_below(rng, (uint64_t)shape->max_qi);
    if (shape->max_sensitive) g->nsensitive = 1 + (int)tu_below(rng, (uint64_t)shape->max_sensitive);
    for (int q = 0; q < g->nqi; q++) {
        g->categorical[q] = tu_below(rng, (uint64_t)shape->categorical_one_in) == 0;
        if (g->categorical[q]) {
            char name[64];
            snprintf(name, sizeof name, "h%d.csv", q);
            snprintf(g->hier_path[q], sizeof g->hier_path[q], "%s", tu_path(dir, name));
            g->nleaves[q] = tu_write_random_hierarchy(rng, g->hier_path[q], q);
        } else {
            const int large = tu_below(rng, 2) == 0;
            g->nleaves[q] = 1 + (int)tu_below(rng, (uint64_t)(large ? shape->numeric_large : shape->numeric_small));
        }
    }
    snprintf(g->csv_path, sizeof g->csv_path, "%s", tu_path(dir, "in.csv"));
    FILE *f = fopen(g->csv_path, "w");
    if (!f) {
        perror(g->csv_path);
        abort();
    }
    fprintf(f, "id");
    for (int q = 0; q < g->nqi; q++) fprintf(f, ",a%d", q);
    fprintf(f, "%s\n", shape->tail ? shape->tail_header : shape->note ? ",s,note" : ",s");
    for (size_t r = 0; r < g->nrows; r++) {
        fprintf(f, "%zu", r);
        for (int q = 0; q < g->nqi; q++) {
            int v = (int)tu_below(rng, (uint64_t)g->nleaves[q]);
            if (shape->skew && tu_below(rng, 3) == 0) v = (int)tu_below(rng, (uint64_t)(g->nleaves[q] + 1) / 2);
            g->value[r][q] = v;
            if (g->categorical[q]) fprintf(f, ",v%d", v);
            else fprintf(f, ",%d", v * shape->scale + shape->offset);
        }
        if (shape->tail) {
            shape->tail(rng, f, g, r, shape->ctx);
            continue;
        }
        int s = (int)tu_below(rng, (uint64_t)g->nsensitive);
        if (tu_below(rng, (uint64_t)shape->dominant_one_in) == 0) s = 0; /* a dominant sensitive value */
        g->sensitive[r] = s;
        if (shape->note) fprintf(f, ",d%d,\"x, %zu\"\n", s, r);
        else fprintf(f, ",d%d\n", s);
    }
    if (fclose(f) != 0) {
        perror(g->csv_path);
        abort();
    }
}

void tu_job_table(anonkit_job *job, const tu_table *g)
{
    tu_job_generated(job, g->nqi, g->categorical, (const char (*)[4096])g->hier_path, g->csv_path);
}

anonkit_result *tu_anonymize(anonkit_job *job, const char *out, int eligible, const char *what)
{
    anonkit_result *res = NULL;
    const int rc = anonkit_anonymize(job, &res);
    if (!eligible) {
        if (rc != ANONKIT_E_INELIGIBLE) fail_msg("%s: ineligible table gave %d: %s", what, rc, anonkit_errmsg(job));
        if (access(out, F_OK) == 0) fail_msg("%s: an ineligible table left %s behind", what, out);
        anonkit_result_free(res);
        return NULL;
    }
    if (rc != ANONKIT_OK) fail_msg("%s: %s", what, anonkit_errmsg(job));
    if (!res) fail_msg("%s: no result", what);
    if (anonkit_result_rows_published(res) + anonkit_result_rows_suppressed(res) != anonkit_result_rows_read(res))
        fail_msg("%s: %llu rows read, %llu published, %llu suppressed", what,
                 (unsigned long long)anonkit_result_rows_read(res), (unsigned long long)anonkit_result_rows_published(res),
                 (unsigned long long)anonkit_result_rows_suppressed(res));
    return res;
}

uint64_t tu_verify(anonkit_job *job, const char *out, const char *what, uint64_t *classes)
{
    return tu_verify_suppressed(job, out, what, classes, NULL);
}

uint64_t tu_verify_suppressed(anonkit_job *job, const char *out, const char *what, uint64_t *classes,
                              uint64_t *suppressed)
{
    anonkit_result *r = NULL;
    const int rc = anonkit_check(job, out, &r);
    if (rc != ANONKIT_OK) fail_msg("%s: verifier (%d): %s", what, rc, anonkit_errmsg(job));
    if (!r) fail_msg("%s: the verifier returned no result", what);
    if (anonkit_result_rows_published(r) + anonkit_result_rows_suppressed(r) != anonkit_result_rows_read(r))
        fail_msg("%s: the verifier's counts do not add up", what);
    const uint64_t rows = anonkit_result_rows_read(r);
    if (classes) *classes = anonkit_result_classes(r);
    if (suppressed) *suppressed = anonkit_result_rows_suppressed(r);
    anonkit_result_free(r);
    return rows;
}

anonkit_result *tu_anonymize_verified(anonkit_job *job, const char *out, int eligible, const char *what,
                                      uint64_t *classes, uint64_t *rows)
{
    anonkit_result *res = tu_anonymize(job, out, eligible, what);
    if (!res) return NULL;
    const uint64_t seen = tu_verify(job, out, what, classes);
    if (seen != anonkit_result_rows_read(res))
        fail_msg("%s: the verifier saw %llu rows of %llu", what, (unsigned long long)seen,
                 (unsigned long long)anonkit_result_rows_read(res));
    if (rows) *rows = seen;
    return res;
}
