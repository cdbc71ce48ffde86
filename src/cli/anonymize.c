/* anonymize.c — `anonkit anonymize`: options in, summary out. */
#include <stdio.h>

#include "cli/cli.h"

static const char intro[] =
    "usage: anonkit anonymize INPUT -o OUTPUT --qi A,B,... [options]\n"
    "\n"
    "Publishes INPUT (CSV with a header row; - for stdin) so that every row hides\n"
    "in an equivalence class that satisfies the privacy model.\n"
    "INPUT and OUTPUT may also be tables and files (docs/sources.md):\n"
    "postgresql://...?table=T, sqlite:FILE?table=T, .sav .zsav .dta .xpt\n"
    "(.por and .sas7bdat are read only).\n"
    "\n";

/* The options this subcommand documents (every option is accepted). */
static const cli_help_line help_lines[] = {
    {ANONKIT_OPT_OUTPUT, NULL},
    {ANONKIT_OPT_QI, NULL},
    {ANONKIT_OPT_SENSITIVE, NULL},
    {ANONKIT_OPT_IDENTIFIER, NULL},
    {ANONKIT_OPT_HIERARCHY, NULL},
    {ANONKIT_OPT_NUMERIC, NULL},
    {ANONKIT_OPT_K, NULL},
    {ANONKIT_OPT_L, NULL},
    {ANONKIT_OPT_L_VARIANT, NULL},
    {ANONKIT_OPT_C, NULL},
    {ANONKIT_OPT_T, NULL},
    {ANONKIT_OPT_T_DISTANCE, NULL},
    {ANONKIT_OPT_DELTA_DISCLOSURE, NULL},
    {ANONKIT_OPT_BETA, NULL},
    {ANONKIT_OPT_BETA_VARIANT, NULL},
    {ANONKIT_OPT_VARIANCE, NULL},
    {ANONKIT_OPT_ALGORITHM, NULL},
    {ANONKIT_OPT_BITS, NULL},
    {ANONKIT_OPT_CENTERS, NULL},
    {ANONKIT_OPT_INCOGNITO_VARIANT, NULL},
    {ANONKIT_OPT_SUPPRESSION, NULL},
    {ANONKIT_OPT_CHOOSE, NULL},
    {ANONKIT_OPT_MAX_RISK, NULL},
    {ANONKIT_OPT_POPULATION_SIZE, "population size for uniqueness=R and the report's risk"},
    {ANONKIT_OPT_SAMPLING_FRACTION, NULL},
    {ANONKIT_OPT_SPLIT, NULL},
    {ANONKIT_OPT_CLASS, NULL},
    {ANONKIT_OPT_TARGET, NULL},
    {ANONKIT_OPT_MIN_GAIN, NULL},
    {ANONKIT_OPT_PUBLISH, NULL},
    {ANONKIT_OPT_INTERVAL_FORMAT, NULL},
    {ANONKIT_OPT_MISSING, NULL},
    {ANONKIT_OPT_RULES, NULL},
    {ANONKIT_OPT_REPORT, NULL},
    {ANONKIT_OPT_HTML, NULL},
    {ANONKIT_OPT_WEIGHTS, NULL},
    {ANONKIT_OPT_SEED, NULL},
    {ANONKIT_OPT_KEEP_ORDER, NULL},
    {ANONKIT_OPT_DELIMITER, NULL},
    {ANONKIT_OPT_MEMORY, NULL},
    {ANONKIT_OPT_FCACHE, NULL},
    {ANONKIT_OPT_BLOCK_SIZE, NULL},
    {ANONKIT_OPT_TMPDIR, NULL},
    {ANONKIT_OPT_ALPHA, NULL},
    {ANONKIT_OPT_TEST, NULL},
    {ANONKIT_OPT_SAMPLE_SIZE, NULL},
    {ANONKIT_OPT_GROWTH_DEPTH, NULL},
    {ANONKIT_OPT_THREADS, NULL},
    {ANONKIT_OPT_JOB, NULL},
    {ANONKIT_OPT_QUERY, NULL},
    {ANONKIT_OPT_REPLACE, NULL},
    {ANONKIT_OPT_USE_CODES, NULL},
    {ANONKIT_OPT_PROGRESS, NULL},
    {ANONKIT_OPT_NO_PROGRESS, NULL},
};

static void help(void)
{
    cli_print_help(intro, help_lines, sizeof help_lines / sizeof *help_lines, 27);
}

int cli_anonymize(int argc, char **argv)
{
    char *positional[1];
    int npositional = 0, exit_code = CLI_OK;
    anonkit_job *job = cli_open_job(argc, argv, help, positional, 1, &npositional, &exit_code);
    if (!job) return exit_code;
    anonkit_result *result = NULL;
    int rc = npositional == 1 ? anonkit_job_set(job, ANONKIT_OPT_INPUT, positional[0]) : ANONKIT_OK;
    cli_progress progress;
    cli_progress_start(&progress, job);
    if (rc == ANONKIT_OK) rc = anonkit_anonymize(job, &result);
    cli_progress_clear(&progress); /* before the summary or the message */
    if (rc < 0) {
        exit_code = cli_fail(job, rc);
        goto done;
    }
    fputs(anonkit_result_summary(result), stderr);
    anonkit_result_free(result);
done:
    anonkit_job_free(job);
    return exit_code;
}
