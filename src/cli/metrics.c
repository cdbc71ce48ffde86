/* metrics.c — `anonkit metrics`: information loss of a published file as JSON. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

static const char intro[] =
    "usage: anonkit metrics ORIGINAL PUBLISHED --qi A,B,... [--hierarchy A=FILE ...] [options]\n"
    "\n"
    "Prints, as JSON on stdout, the information loss of PUBLISHED against ORIGINAL:\n"
    "DM (discernibility), C_AVG (normalized average class size, uses --k), GCP,\n"
    "the NCP of every quasi-identifier and the distortion per record ([Wang06] §6: one\n"
    "unit per hierarchy level a categorical value was raised; (b-a)/(max-min) for a\n"
    "numeric value published as the interval a-b); with --class the conditional\n"
    "entropy of the class label given the classes, with --target the RMSE of\n"
    "predicting the target by its class mean ([LeFevre07] §5.5).\n"
    "\n";

/* The options this subcommand documents (every option is accepted). */
static const cli_help_line help_lines[] = {
    {ANONKIT_OPT_QI, NULL},
    {ANONKIT_OPT_HIERARCHY, "hierarchy of a categorical QI"},
    {ANONKIT_OPT_NUMERIC, "QIs that are numeric although they have a hierarchy"},
    {ANONKIT_OPT_K, "k used for C_AVG (default 1)"},
    {ANONKIT_OPT_WEIGHTS, NULL},
    {ANONKIT_OPT_CLASS, "class label column: conditional entropy (bits)"},
    {ANONKIT_OPT_TARGET, "numeric target column: RMSE"},
    {ANONKIT_OPT_KL_LEVEL, NULL},
    {ANONKIT_OPT_SENSITIVE, "the sensitive column (for --kl-level)"},
    {ANONKIT_OPT_CLASS_ERROR, NULL},
    {ANONKIT_OPT_TRAIN_ROWS, NULL},
    {ANONKIT_OPT_SPLIT_COLUMN, NULL},
    {ANONKIT_OPT_PUBLISH,
     "how PUBLISHED was written; with mean, NCP, GCP and the\n"
     "continuous distortion are null (a mean has no extent)"},
    {ANONKIT_OPT_SUPPRESSION,
     "rows with every QI '*', at most F of all rows, count as\n"
     "suppressed (as anonymize --suppression wrote them)"},
    {ANONKIT_OPT_MISSING, NULL},
    {ANONKIT_OPT_DELIMITER, "field delimiter (default ',')"},
    {ANONKIT_OPT_JOB, "take the settings from a JSON job file"},
};

static void help(void)
{
    cli_print_help(intro, help_lines, sizeof help_lines / sizeof *help_lines, 27);
}

int cli_metrics(int argc, char **argv)
{
    char *positional[2];
    int npositional = 0, exit_code = CLI_OK;
    anonkit_job *job = cli_open_job(argc, argv, help, positional, 2, &npositional, &exit_code);
    if (!job) return exit_code;
    if (npositional != 2) {
        fputs("anonkit: metrics needs the original and the published file (see --help)\n", stderr);
        exit_code = CLI_USER_ERROR;
        goto done;
    }
    anonkit_result *result = NULL;
    int rc = anonkit_metrics(job, positional[0], positional[1], &result);
    if (rc < 0) {
        exit_code = cli_fail(job, rc);
        goto done;
    }
    /* A full disk or a closed pipe on stdout is a failure like any other. */
    if (printf("%s\n", anonkit_result_json(result)) < 0 || fflush(stdout) != 0) {
        fprintf(stderr, "anonkit: cannot write the metrics to stdout: %s\n", strerror(errno));
        exit_code = CLI_USER_ERROR;
    }
    anonkit_result_free(result);
done:
    anonkit_job_free(job);
    return exit_code;
}
