/* report.c — `anonkit report`: the release report (docs/report.md) of a table
 * published earlier, from the published file and its original. */
#include <stdio.h>

#include "cli/cli.h"

static const char intro[] =
    "usage: anonkit report PUBLISHED --original ORIGINAL --qi A,B,... --html FILE [options]\n"
    "\n"
    "Writes the self-contained HTML release report of PUBLISHED, made earlier from\n"
    "ORIGINAL, without anonymizing again: the SHA-256 of every file, the settings,\n"
    "the verifier's verdict on PUBLISHED, rows, classes, information loss, risk per\n"
    "record before and after, and charts. Give the settings of the run that\n"
    "published it (--job job.json): they are the model the file is proven against.\n"
    "Exits 1 when PUBLISHED violates the model (the document says so).\n"
    "\n";

/* The options this subcommand documents (every option is accepted). */
static const cli_help_line help_lines[] = {
    {ANONKIT_OPT_ORIGINAL, NULL},
    {ANONKIT_OPT_HTML, NULL},
    {ANONKIT_OPT_QI, NULL},
    {ANONKIT_OPT_HIERARCHY, NULL},
    {ANONKIT_OPT_NUMERIC, NULL},
    {ANONKIT_OPT_SENSITIVE, NULL},
    {ANONKIT_OPT_K, NULL},
    {ANONKIT_OPT_L, NULL},
    {ANONKIT_OPT_L_VARIANT, NULL},
    {ANONKIT_OPT_C, NULL},
    {ANONKIT_OPT_VARIANCE, NULL},
    {ANONKIT_OPT_SUPPRESSION, "rows with every QI '*', at most F of all rows, are suppressed rows"},
    {ANONKIT_OPT_PUBLISH, NULL},
    {ANONKIT_OPT_WEIGHTS, NULL},
    {ANONKIT_OPT_CLASS, NULL},
    {ANONKIT_OPT_TARGET, NULL},
    {ANONKIT_OPT_DELIMITER, NULL},
    {ANONKIT_OPT_JOB, NULL},
};

static void help(void)
{
    cli_print_help(intro, help_lines, sizeof help_lines / sizeof *help_lines, 27);
}

int cli_report(int argc, char **argv)
{
    char *positional[1];
    int npositional = 0, exit_code = CLI_OK;
    anonkit_job *job = cli_open_job(argc, argv, help, positional, 1, &npositional, &exit_code);
    if (!job) return exit_code;
    if (npositional != 1) {
        fputs("anonkit: report needs the published file (see --help)\n", stderr);
        exit_code = CLI_USER_ERROR;
        goto done;
    }
    anonkit_result *result = NULL;
    const int rc = anonkit_report(job, positional[0], &result);
    if (rc < 0) {
        exit_code = cli_fail(job, rc);
        goto done;
    }
    fprintf(stderr, "anonkit: %s: %llu rows in %llu classes verified; report written\n", positional[0],
            (unsigned long long)anonkit_result_rows_read(result), (unsigned long long)anonkit_result_classes(result));
    anonkit_result_free(result);
done:
    anonkit_job_free(job);
    return exit_code;
}
