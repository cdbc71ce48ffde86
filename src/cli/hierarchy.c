/* hierarchy.c — `anonkit hierarchy`: a generalization hierarchy built from
 * the distinct values of one column (anonkit_hierarchy). */
#include <stdio.h>

#include "cli/cli.h"

static const char intro[] =
    "usage: anonkit hierarchy DATA --column COL BUILDER [-o FILE | --preview]\n"
    "\n"
    "Reads the distinct values of COL in DATA (- for stdin) and writes an ARX-format\n"
    "hierarchy (';'-separated, one row per value, up to '*') that covers every one\n"
    "of them. A missing value (an empty cell or a --missing token) becomes the leaf\n"
    "NULL. BUILDER is one of --interval, --quantiles, --mask, --date, --order, --flat\n"
    "(docs/hierarchies.md).\n"
    "\n";

static const cli_help_line help_lines[] = {
    {ANONKIT_OPT_COLUMN, NULL},
    {ANONKIT_OPT_OUTPUT, "the hierarchy (- for stdout); written only on success"},
    {ANONKIT_OPT_INTERVAL, NULL},
    {ANONKIT_OPT_FANOUT, NULL},
    {ANONKIT_OPT_MIN, NULL},
    {ANONKIT_OPT_MAX, NULL},
    {ANONKIT_OPT_QUANTILES, NULL},
    {ANONKIT_OPT_MASK, NULL},
    {ANONKIT_OPT_LEVELS, NULL},
    {ANONKIT_OPT_DATE, NULL},
    {ANONKIT_OPT_ORDER, NULL},
    {ANONKIT_OPT_FLAT, NULL},
    {ANONKIT_OPT_PREVIEW, NULL},
    {ANONKIT_OPT_MISSING, NULL},
    {ANONKIT_OPT_INTERVAL_FORMAT, "interval labels as range (30-34) or bracket ([30, 34])"},
    {ANONKIT_OPT_DELIMITER, "field delimiter of DATA (default ',')"},
};

static void help(void)
{
    cli_print_help(intro, help_lines, sizeof help_lines / sizeof *help_lines, 27);
}

int cli_hierarchy(int argc, char **argv)
{
    char *positional[1];
    int npositional = 0, exit_code = CLI_OK;
    anonkit_job *job = cli_open_job(argc, argv, help, positional, 1, &npositional, &exit_code);
    if (!job) return exit_code;
    if (npositional != 1) {
        fputs("anonkit: hierarchy needs the data file (see --help)\n", stderr);
        exit_code = CLI_USER_ERROR;
        goto done;
    }
    int rc = anonkit_job_set(job, ANONKIT_OPT_INPUT, positional[0]);
    anonkit_result *result = NULL;
    if (rc == ANONKIT_OK) rc = anonkit_hierarchy(job, &result);
    if (rc < 0) {
        exit_code = cli_fail(job, rc);
        goto done;
    }
    fprintf(stderr, "anonkit: %s\n", anonkit_result_summary(result));
    anonkit_result_free(result);
done:
    anonkit_job_free(job);
    return exit_code;
}
