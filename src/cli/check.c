/* check.c — `anonkit check`: the independent verifier on the command line. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

static const char intro[] =
    "usage: anonkit check PUBLISHED --qi A,B,... [--sensitive COL] [--k K] [--l L ...]\n"
    "\n"
    "Groups the rows of PUBLISHED (- for stdin) by their published QI values and\n"
    "tests every group against the privacy model. Exits 0 when every class\n"
    "satisfies it, 1 naming the first class that does not.\n"
    "\n";

/* The options this subcommand documents (every option is accepted). */
static const cli_help_line help_lines[] = {
    {ANONKIT_OPT_QI, NULL},
    {ANONKIT_OPT_SENSITIVE, "sensitive column"},
    {ANONKIT_OPT_K, "k-anonymity"},
    {ANONKIT_OPT_L, "l-diversity"},
    {ANONKIT_OPT_L_VARIANT, NULL},
    {ANONKIT_OPT_C, "c of recursive (c,l)-diversity"},
    {ANONKIT_OPT_HIERARCHY, "the sensitive column's hierarchy (hierarchical distance)"},
    {ANONKIT_OPT_T, NULL},
    {ANONKIT_OPT_T_DISTANCE, NULL},
    {ANONKIT_OPT_DELTA_DISCLOSURE, NULL},
    {ANONKIT_OPT_BETA, NULL},
    {ANONKIT_OPT_BETA_VARIANT, NULL},
    {ANONKIT_OPT_VARIANCE,
     "variance diversity: population variance of the numeric\n"
     "sensitive column at least V in every class"},
    {ANONKIT_OPT_SUPPRESSION,
     "rows whose QIs are all '*' are suppressed rows when they\n"
     "are at most F of all rows (else they must form a class)"},
    {ANONKIT_OPT_ACHIEVED, NULL},
    {ANONKIT_OPT_MISSING, NULL},
    {ANONKIT_OPT_DELIMITER, "field delimiter (default ',')"},
    {ANONKIT_OPT_JOB, "take the settings from a JSON job file"},
};

static void help(void)
{
    cli_print_help(intro, help_lines, sizeof help_lines / sizeof *help_lines, 27);
}

int cli_check(int argc, char **argv)
{
    char *positional[1];
    int npositional = 0, exit_code = CLI_OK;
    anonkit_job *job = cli_open_job(argc, argv, help, positional, 1, &npositional, &exit_code);
    if (!job) return exit_code;
    if (npositional != 1) {
        fputs("anonkit: check needs the published file (see --help)\n", stderr);
        exit_code = CLI_USER_ERROR;
        goto done;
    }
    anonkit_result *result = NULL;
    int rc = anonkit_check(job, positional[0], &result);
    if (rc < 0) {
        exit_code = cli_fail(job, rc);
        goto done;
    }
    const uint64_t classes = anonkit_result_classes(result), rows = anonkit_result_rows_read(result),
                   suppressed = anonkit_result_rows_suppressed(result);
    fprintf(stderr, "anonkit: %s: ok, %llu rows in %llu classes satisfy the privacy model",
            strcmp(positional[0], "-") ? positional[0] : "stdin",
            (unsigned long long)(rows - suppressed), (unsigned long long)classes);
    if (suppressed) fprintf(stderr, ", %llu rows suppressed", (unsigned long long)suppressed);
    fputc('\n', stderr);
    /* what the file achieves (--achieved; the least t, δ and β when asked) is a result: stdout */
    if (anonkit_result_summary(result)) fputs(anonkit_result_summary(result), stdout);
    anonkit_result_free(result);
done:
    anonkit_job_free(job);
    return exit_code;
}
