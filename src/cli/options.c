/* options.c — getopt_long over the job options shared by every subcommand. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

enum { OPT_HELP = 1000 };

static const struct option long_options[] = {
    {"output", required_argument, NULL, ANONKIT_OPT_OUTPUT},
    {"qi", required_argument, NULL, ANONKIT_OPT_QI},
    {"sensitive", required_argument, NULL, ANONKIT_OPT_SENSITIVE},
    {"identifier", required_argument, NULL, ANONKIT_OPT_IDENTIFIER},
    {"hierarchy", required_argument, NULL, ANONKIT_OPT_HIERARCHY},
    {"numeric", required_argument, NULL, ANONKIT_OPT_NUMERIC},
    {"k", required_argument, NULL, ANONKIT_OPT_K},
    {"l", required_argument, NULL, ANONKIT_OPT_L},
    {"l-variant", required_argument, NULL, ANONKIT_OPT_L_VARIANT},
    {"c", required_argument, NULL, ANONKIT_OPT_C},
    {"algorithm", required_argument, NULL, ANONKIT_OPT_ALGORITHM},
    {"report", required_argument, NULL, ANONKIT_OPT_REPORT},
    {"seed", required_argument, NULL, ANONKIT_OPT_SEED},
    {"keep-order", no_argument, NULL, ANONKIT_OPT_KEEP_ORDER},
    {"delimiter", required_argument, NULL, ANONKIT_OPT_DELIMITER},
    {"weights", required_argument, NULL, ANONKIT_OPT_WEIGHTS},
    {"job", required_argument, NULL, ANONKIT_OPT_JOB},
    {"threads", required_argument, NULL, ANONKIT_OPT_THREADS},
    {"split", required_argument, NULL, ANONKIT_OPT_SPLIT},
    {"class", required_argument, NULL, ANONKIT_OPT_CLASS},
    {"target", required_argument, NULL, ANONKIT_OPT_TARGET},
    {"min-gain", required_argument, NULL, ANONKIT_OPT_MIN_GAIN},
    {"variance", required_argument, NULL, ANONKIT_OPT_VARIANCE},
    {"publish", required_argument, NULL, ANONKIT_OPT_PUBLISH},
    {"rules", required_argument, NULL, ANONKIT_OPT_RULES},
    {"memory", required_argument, NULL, ANONKIT_OPT_MEMORY},
    {"fcache", required_argument, NULL, ANONKIT_OPT_FCACHE},
    {"block-size", required_argument, NULL, ANONKIT_OPT_BLOCK_SIZE},
    {"tmpdir", required_argument, NULL, ANONKIT_OPT_TMPDIR},
    /* sequential releases (004) */
    {"previous", required_argument, NULL, ANONKIT_OPT_PREVIOUS},
    {"x", required_argument, NULL, ANONKIT_OPT_X},
    {"y", required_argument, NULL, ANONKIT_OPT_Y},
    {"anonymity", required_argument, NULL, ANONKIT_OPT_ANONYMITY},
    {"linkability", required_argument, NULL, ANONKIT_OPT_LINKABILITY},
    {"sensitive-values", required_argument, NULL, ANONKIT_OPT_SENSITIVE_VALUES},
    {"score", required_argument, NULL, ANONKIT_OPT_SCORE},
    {"inconsistent", required_argument, NULL, ANONKIT_OPT_INCONSISTENT},
    {"bits", required_argument, NULL, ANONKIT_OPT_BITS},
    {"centers", required_argument, NULL, ANONKIT_OPT_CENTERS},
    {"kl-level", required_argument, NULL, ANONKIT_OPT_KL_LEVEL},
    {"suppression", required_argument, NULL, ANONKIT_OPT_SUPPRESSION},
    {"incognito-variant", required_argument, NULL, ANONKIT_OPT_INCOGNITO_VARIANT},
    {"choose", required_argument, NULL, ANONKIT_OPT_CHOOSE},
    {"alpha", required_argument, NULL, ANONKIT_OPT_ALPHA},
    {"test", required_argument, NULL, ANONKIT_OPT_TEST},
    {"sample-size", required_argument, NULL, ANONKIT_OPT_SAMPLE_SIZE},
    {"growth-depth", required_argument, NULL, ANONKIT_OPT_GROWTH_DEPTH},
    {"class-error", required_argument, NULL, ANONKIT_OPT_CLASS_ERROR},
    {"train-rows", required_argument, NULL, ANONKIT_OPT_TRAIN_ROWS},
    {"split-column", required_argument, NULL, ANONKIT_OPT_SPLIT_COLUMN},
    {"help", no_argument, NULL, OPT_HELP},
    {NULL, 0, NULL, 0},
};

int cli_fail(const anonkit_job *job, int status)
{
    fprintf(stderr, "anonkit: %s\n", anonkit_errmsg(job));
    return status == ANONKIT_E_NOMEM || status == ANONKIT_E_INTERNAL ? CLI_INTERNAL_ERROR : CLI_USER_ERROR;
}

static int parse_job(int argc, char **argv, anonkit_job *job, const char *help, char **positional,
                     int max_positional, int *npositional, int *exit_code)
{
    /* First pass: --help and the job file, which the other options override. */
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--")) break;
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            fputs(help, stdout);
            *exit_code = CLI_OK;
            return -1;
        }
        const char *file = NULL;
        if (!strcmp(argv[i], "--job") && i + 1 < argc) file = argv[++i];
        else if (!strncmp(argv[i], "--job=", 6)) file = argv[i] + 6;
        if (file) {
            int rc = anonkit_job_set(job, ANONKIT_OPT_JOB, file);
            if (rc < 0) {
                *exit_code = cli_fail(job, rc);
                return -1;
            }
        }
    }
    unsigned char replaced[ANONKIT_OPT__COUNT] = {0};
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":o:", long_options, NULL)) != -1) {
        if (c == '?' || c == ':') {
            fprintf(stderr, "anonkit: %s: %s (see --help)\n", argv[optind - 1],
                    c == '?' ? "unknown option" : "this option needs a value");
            *exit_code = CLI_USER_ERROR;
            return -1;
        }
        if (c == OPT_HELP || c == ANONKIT_OPT_JOB) continue;
        anonkit_option o = c == 'o' ? ANONKIT_OPT_OUTPUT : (anonkit_option)c;
        /* A list given on the command line replaces the job file's list. */
        if ((o == ANONKIT_OPT_QI || o == ANONKIT_OPT_IDENTIFIER || o == ANONKIT_OPT_NUMERIC) && !replaced[o]) {
            anonkit_job_set(job, o, "");
            replaced[o] = 1;
        }
        int rc = anonkit_job_set(job, o, o == ANONKIT_OPT_KEEP_ORDER ? "true" : optarg);
        if (rc < 0) {
            *exit_code = cli_fail(job, rc);
            return -1;
        }
    }
    *npositional = 0;
    for (int i = optind; i < argc; i++) {
        if (*npositional == max_positional) {
            fprintf(stderr, "anonkit: unexpected argument '%s' (see --help)\n", argv[i]);
            *exit_code = CLI_USER_ERROR;
            return -1;
        }
        positional[(*npositional)++] = argv[i];
    }
    return 0;
}

anonkit_job *cli_open_job(int argc, char **argv, const char *help, char **positional, int max_positional,
                          int *npositional, int *exit_code)
{
    anonkit_job *job = anonkit_job_create();
    if (!job) {
        fputs("anonkit: out of memory\n", stderr);
        *exit_code = CLI_INTERNAL_ERROR;
        return NULL;
    }
    if (parse_job(argc, argv, job, help, positional, max_positional, npositional, exit_code) < 0) {
        anonkit_job_free(job);
        return NULL;
    }
    return job;
}
