/* testutil.c — helpers for the test programs (see testutil.h). */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* anonkit_job_set or abort (the helpers here do not depend on cmocka). */
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
