/* embed.c — anonkit from a C program: anonymizes the bundled Adult table
 * (examples/adult) to 10-anonymity with distinct 3-diversity of the
 * occupation, proves the published file with the independent verifier and
 * prints the summary. The settings are those of examples/adult/job.json, given
 * one by one through anonkit_job_set.
 *
 *   cc embed.c $(pkg-config --cflags --libs anonkit) -o embed
 *   ./embed path/to/examples/adult adult-anonymized.csv
 */
#include <stdio.h>
#include <stdlib.h>

#include <anonkit/anonkit.h>

/* Sets one option, or reports why it was refused. */
static int set(anonkit_job *job, anonkit_option option, const char *value)
{
    int status = anonkit_job_set(job, option, value);
    if (status != ANONKIT_OK)
        fprintf(stderr, "embed: %s=%s: %s\n", anonkit_option_name(option), value, anonkit_errmsg(job));
    return status;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: embed ADULT_FOLDER OUTPUT_CSV\n");
        return 2;
    }
    const char *dir = argv[1], *output = argv[2];
    if (anonkit_version_number() != ANONKIT_VERSION_NUMBER) /* headers and library of one version */
        fprintf(stderr, "embed: compiled with anonkit %s, running with %s\n", ANONKIT_VERSION,
                anonkit_version_string());

    static const char *const qi[] = {"age", "sex", "race", "marital-status", "education", "native-country",
                                     "workclass"};
    char path[4096];
    anonkit_job *job = anonkit_job_create();
    if (!job) {
        fprintf(stderr, "embed: out of memory\n");
        return 1;
    }
    int status = ANONKIT_OK;
    snprintf(path, sizeof path, "%s/adult.csv", dir);
    if (!status) status = set(job, ANONKIT_OPT_INPUT, path);
    if (!status) status = set(job, ANONKIT_OPT_OUTPUT, output);
    if (!status) status = set(job, ANONKIT_OPT_DELIMITER, ";");
    for (size_t i = 0; i < sizeof qi / sizeof *qi && !status; i++) {
        status = set(job, ANONKIT_OPT_QI, qi[i]);
        snprintf(path, sizeof path, "%s=%s/adult_hierarchy_%s.csv", qi[i], dir, qi[i]);
        if (!status) status = set(job, ANONKIT_OPT_HIERARCHY, path);
    }
    if (!status) status = set(job, ANONKIT_OPT_NUMERIC, "age");
    if (!status) status = set(job, ANONKIT_OPT_SENSITIVE, "occupation");
    if (!status) status = set(job, ANONKIT_OPT_K, "10");
    if (!status) status = set(job, ANONKIT_OPT_L, "3");
    if (!status) status = set(job, ANONKIT_OPT_L_VARIANT, "distinct");
    if (!status) status = set(job, ANONKIT_OPT_SEED, "1");

    anonkit_result *result = NULL;
    if (!status) {
        status = anonkit_anonymize(job, &result);
        if (status != ANONKIT_OK)
            fprintf(stderr, "embed: anonymize: %s: %s\n", anonkit_strerror(status), anonkit_errmsg(job));
    }
    if (!status) {
        fputs(anonkit_result_summary(result), stdout);
        anonkit_result *checked = NULL;
        status = anonkit_check(job, output, &checked);
        const uint64_t classes = anonkit_result_classes(checked), rows = anonkit_result_rows_read(checked);
        anonkit_result_free(checked);
        if (status == ANONKIT_OK)
            printf("check: %llu rows in %llu classes satisfy the model\n", (unsigned long long)rows,
                   (unsigned long long)classes);
        else
            fprintf(stderr, "embed: check: %s: %s\n", anonkit_strerror(status), anonkit_errmsg(job));
        if (status == ANONKIT_OK && rows != anonkit_result_rows_published(result)) {
            fprintf(stderr, "embed: check saw %llu rows, anonymize published %llu\n", (unsigned long long)rows,
                    (unsigned long long)anonkit_result_rows_published(result));
            status = ANONKIT_E_INTERNAL;
        }
    }
    anonkit_result_free(result);
    anonkit_job_free(job);
    return status == ANONKIT_OK ? 0 : 1;
}
