/* sequential.c — `anonkit sequential`: options in, summary out ([Wang06]). */
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"

static const char intro[] =
    "usage: anonkit sequential CURRENT --previous EARLIER [--previous EARLIER2 ...] -o OUTPUT\n"
    "                          --x A,B,... --y C,... (--anonymity K | --linkability P) [options]\n"
    "\n"
    "Publishes the current release CURRENT (CSV with a header row; - for stdin)\n"
    "generalized so that its join with the earlier, already published releases\n"
    "satisfies (X,Y)-privacy (Wang & Fung, Anonymizing Sequential Releases, KDD 2006).\n"
    "Records of two releases match when every common attribute lies on one\n"
    "generalization path of its hierarchy and no pair of the --inconsistent file\n"
    "rules them out. Top-down specialization from the most general release, the\n"
    "valid candidate of highest InfoGain / (PrivLoss + 1) first, until none is valid.\n"
    "\n";

/* The options this subcommand documents (every option is accepted). */
static const cli_help_line help_lines[] = {
    {ANONKIT_OPT_OUTPUT, "the generalized current release (- for stdout)"},
    {ANONKIT_OPT_PREVIOUS, NULL},
    {ANONKIT_OPT_X, NULL},
    {ANONKIT_OPT_Y, NULL},
    {ANONKIT_OPT_ANONYMITY, NULL},
    {ANONKIT_OPT_LINKABILITY, NULL},
    {ANONKIT_OPT_SENSITIVE_VALUES, NULL},
    {ANONKIT_OPT_CLASS,
     "class column of the current release: Score by\n"
     "class-entropy reduction (and continuous split points)"},
    {ANONKIT_OPT_SCORE, NULL},
    {ANONKIT_OPT_INCONSISTENT, NULL},
    {ANONKIT_OPT_HIERARCHY,
     "ARX hierarchy of categorical attribute A (every\n"
     "attribute shared by two releases needs one); an X\n"
     "attribute without one is continuous (intervals)"},
    {ANONKIT_OPT_IDENTIFIER, "columns dropped from the output"},
    {ANONKIT_OPT_REPORT,
     "JSON: final cut, achieved A_Y(X) or L_Y(X), distortion,\n"
     "conditional class entropy, time"},
    {ANONKIT_OPT_THREADS,
     "threads reading the current release and writing the\n"
     "output (default: one per core; same result for any N)"},
    {-1, "      --seed N, --keep-order, --delimiter C, --job FILE   as for anonymize"},
};

static void help(void)
{
    cli_print_help(intro, help_lines, sizeof help_lines / sizeof *help_lines, 29);
}

int cli_sequential(int argc, char **argv)
{
    char *positional[1];
    int npositional = 0, exit_code = CLI_OK;
    anonkit_job *job = cli_open_job(argc, argv, help, positional, 1, &npositional, &exit_code);
    if (!job) return exit_code;
    anonkit_result *result = NULL;
    int rc = npositional == 1 ? anonkit_job_set(job, ANONKIT_OPT_INPUT, positional[0]) : ANONKIT_OK;
    if (rc == ANONKIT_OK) rc = anonkit_sequential(job, &result);
    if (rc < 0) exit_code = cli_fail(job, rc);
    else fputs(anonkit_result_summary(result), stderr);
    anonkit_result_free(result);
    anonkit_job_free(job);
    return exit_code;
}
