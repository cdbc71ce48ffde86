/* risk.c — `anonkit risk`: the re-identification risk of a table or of a
 * published file (docs/risk.md); the summary on stdout, or with --json FILE the
 * JSON in FILE and the summary on stderr (as anonymize's beside --report). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

static const char intro[] =
    "usage: anonkit risk DATA --qi A,B,... [--published [--suppression F]] [--sensitive COL]\n"
    "       [--population FILE] [--population-size N | --sampling-fraction F] [--weight COL]\n"
    "       [--threshold R] [--suda M] [--json FILE]\n"
    "\n"
    "Measures the re-identification risk of DATA (- for stdin): its classes (rows\n"
    "with equal QI values; with --published exactly as 'anonkit check' forms them),\n"
    "the class sizes, prosecutor, journalist and marketer risk and the sample\n"
    "uniques; with a population size the estimated population uniques (Zayatz,\n"
    "Pitman, SNB, Dankar et al.'s rule) and the individual (Benedetti-Franconi) and\n"
    "global risk; with --suda the SUDA2 scores; with --sensitive the parameters\n"
    "the file achieves. Prints a summary on stdout (on stderr with --json, whose\n"
    "file holds the figures).\n"
    "\n";

static const cli_help_line help_lines[] = {
    {ANONKIT_OPT_QI, NULL},
    {ANONKIT_OPT_HIERARCHY, "accepted; the classes are formed at level 0 (the values)"},
    {ANONKIT_OPT_PUBLISHED, NULL},
    {ANONKIT_OPT_SUPPRESSION, "with --published: all-'*' rows, at most F of the rows, are suppressed"},
    {ANONKIT_OPT_SENSITIVE, "sensitive column: report the achieved k, l, c, variance"},
    {ANONKIT_OPT_POPULATION, NULL},
    {ANONKIT_OPT_POPULATION_SIZE, NULL},
    {ANONKIT_OPT_SAMPLING_FRACTION, NULL},
    {ANONKIT_OPT_WEIGHT, NULL},
    {ANONKIT_OPT_THRESHOLD, NULL},
    {ANONKIT_OPT_SUDA, NULL},
    {ANONKIT_OPT_JSON, NULL},
    {ANONKIT_OPT_DELIMITER, "field delimiter (default ',')"},
    {ANONKIT_OPT_JOB, "take the settings from a JSON job file"},
};

static void help(void)
{
    cli_print_help(intro, help_lines, sizeof help_lines / sizeof *help_lines, 27);
}

int cli_risk(int argc, char **argv)
{
    char *positional[1];
    int npositional = 0, exit_code = CLI_OK;
    anonkit_job *job = cli_open_job(argc, argv, help, positional, 1, &npositional, &exit_code);
    if (!job) return exit_code;
    if (npositional != 1) {
        fputs("anonkit: risk needs the table to measure (see --help)\n", stderr);
        exit_code = CLI_USER_ERROR;
        goto done;
    }
    int has_json = 0;
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--json") || !strncmp(argv[i], "--json=", 7)) has_json = 1;
    int rc = anonkit_job_set(job, ANONKIT_OPT_INPUT, positional[0]);
    anonkit_result *result = NULL;
    if (rc == ANONKIT_OK) rc = anonkit_risk(job, &result);
    if (rc < 0) {
        exit_code = cli_fail(job, rc);
        goto done;
    }
    if (has_json) {
        /* The JSON file is the output and is already in place: the summary goes to stderr,
         * as anonymize's does beside its --report. */
        fputs(anonkit_result_summary(result), stderr);
    } else if (fputs(anonkit_result_summary(result), stdout) < 0 || fflush(stdout) != 0) {
        fprintf(stderr, "anonkit: cannot write the summary to stdout: %s\n", strerror(errno));
        exit_code = CLI_USER_ERROR;
    }
    anonkit_result_free(result);
done:
    anonkit_job_free(job);
    return exit_code;
}
