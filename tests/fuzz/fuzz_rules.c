/* fuzz_rules.c — libFuzzer harness for the recoding rules reader and lookup
 * (src/publish/rules, docs/rules-format.md): any bytes are read as a rules
 * file and applied to a small fixed table (a numeric and a categorical QI,
 * an identifier, a copied column). A refusal must not be an internal error
 * and must leave nothing at the output path; an accepted file must recode
 * every row. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "anonkit/anonkit.h"
#include "fuzz_util.h"

static char rules_path[4200], in_path[4200], out_path[4200];

static void setup(void)
{
    snprintf(rules_path, sizeof rules_path, "%s", fuzz_path("rules.csv"));
    snprintf(in_path, sizeof in_path, "%s", fuzz_path("in.csv"));
    snprintf(out_path, sizeof out_path, "%s", fuzz_path("out.csv"));
    static const char table[] =
        "id,a,c,s\n1,10,v0,x\n2,20,v1,y\n3,30,v2,x\n4,40,v3,y\n5,50,v4,x\n6,60,v5,y\n7,-5,v0,z\n8,1e3,v5,z\n";
    fuzz_write(in_path, (const uint8_t *)table, sizeof table - 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!rules_path[0]) setup();
    fuzz_write(rules_path, data, size);
    anonkit_job *job = anonkit_job_create();
    if (!job) abort();
    if (anonkit_job_set(job, ANONKIT_OPT_RULES, rules_path) != ANONKIT_OK ||
        anonkit_job_set(job, ANONKIT_OPT_INPUT, in_path) != ANONKIT_OK ||
        anonkit_job_set(job, ANONKIT_OPT_OUTPUT, out_path) != ANONKIT_OK)
        abort();
    anonkit_result *result = NULL;
    const int rc = anonkit_recode(job, &result);
    const uint64_t rows = anonkit_result_rows_read(result), outside = anonkit_result_rows_outside(result);
    anonkit_result_free(result);
    if (rc == ANONKIT_OK) {
        if (rows != 8 || outside > rows) {
            fprintf(stderr, "recoded %llu rows of 8 (%llu outside)\n", (unsigned long long)rows,
                    (unsigned long long)outside);
            abort();
        }
        unlink(out_path);
    } else if (rc == ANONKIT_E_INTERNAL || access(out_path, F_OK) == 0) {
        fprintf(stderr, "recode: status %d (%s)%s\n", rc, anonkit_errmsg(job),
                access(out_path, F_OK) == 0 ? ", output left behind" : "");
        abort();
    }
    anonkit_job_free(job);
    return 0;
}
