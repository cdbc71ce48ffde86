/* fuzz_metrics.c — libFuzzer harness for reading a published file against
 * its original (anonkit_metrics, src/api/published): the original is a fixed
 * small table (a numeric QI, a categorical QI under a hierarchy, a class
 * column), the published file is any bytes after a fixed header. A refusal
 * needs a message and no internal error; an accepted file gives JSON. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "anonkit/anonkit.h"
#include "fuzz_util.h"

static char original[4200], published[4200], hier_opt[4300];

static void setup(void)
{
    snprintf(original, sizeof original, "%s", fuzz_path("original.csv"));
    snprintf(published, sizeof published, "%s", fuzz_path("published.csv"));
    static const char table[] = "a,c,cls\n1,v0,y\n2,v1,n\n3,v2,y\n4,v3,n\n5,v0,y\n6,v1,n\n";
    fuzz_write(original, (const uint8_t *)table, sizeof table - 1);
    static const char hier[] = "v0;g0;*\nv1;g0;*\nv2;g1;*\nv3;g1;*\n";
    const char *h = fuzz_path("c.csv");
    fuzz_write(h, (const uint8_t *)hier, sizeof hier - 1);
    snprintf(hier_opt, sizeof hier_opt, "c=%s", h);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!original[0]) setup();
    FILE *f = fopen(published, "wb");
    if (!f) abort();
    fputs("a,c,cls\n", f);
    if (size && fwrite(data, 1, size, f) != size) abort();
    fclose(f);
    anonkit_job *job = anonkit_job_create();
    if (!job) abort();
    if (anonkit_job_set(job, ANONKIT_OPT_QI, "a,c") || anonkit_job_set(job, ANONKIT_OPT_HIERARCHY, hier_opt) ||
        anonkit_job_set(job, ANONKIT_OPT_CLASS, "cls"))
        abort();
    anonkit_result *result = NULL;
    const int rc = anonkit_metrics(job, original, published, &result);
    const char *json = anonkit_result_json(result);
    if (rc == ANONKIT_OK) {
        if (!json || json[0] != '{') abort();
    } else if (rc == ANONKIT_E_INTERNAL || !anonkit_errmsg(job)[0]) {
        fprintf(stderr, "metrics: status %d (%s)\n", rc, anonkit_errmsg(job));
        abort();
    }
    anonkit_result_free(result);
    anonkit_job_free(job);
    return 0;
}
