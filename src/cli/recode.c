/* recode.c — `anonkit recode`: saved recoding rules applied to new data (the
 * work is anonkit_recode). */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

static const char intro[] =
    "usage: anonkit recode --rules FILE INPUT -o OUTPUT\n"
    "\n"
    "Recodes INPUT (- for stdin) with the rules that 'anonkit anonymize --rules FILE'\n"
    "wrote (docs/rules-format.md): every row gets the published quasi-identifier\n"
    "values of the rule whose region holds it, identifier columns are dropped and\n"
    "the other columns copied, exactly as anonymize publishes; rows keep their\n"
    "order. INPUT needs the columns of the rules (identifiers may be missing) and\n"
    "no others, in any order, with the delimiter the rules were made with.\n"
    "\n"
    "Privacy is guaranteed only for the data the rules were built on: recoded\n"
    "rows of other data need not satisfy the privacy model. A value may lie in\n"
    "its rule's region but outside the values the rule's class had (a new age\n"
    "41 where 30-39 was published); such rows are counted and reported.\n"
    "\n";

/* The options this subcommand documents (every option is accepted). */
static const cli_help_line help_lines[] = {
    {ANONKIT_OPT_RULES, "the recoding rules"},
    {ANONKIT_OPT_OUTPUT, "where to write (- for stdout)"},
    {ANONKIT_OPT_JOB, "take the settings from a JSON job file"},
};

static void help(void)
{
    cli_print_help(intro, help_lines, sizeof help_lines / sizeof *help_lines, 27);
}

int cli_recode(int argc, char **argv)
{
    char *positional[1];
    int npositional = 0, exit_code = CLI_OK;
    anonkit_job *job = cli_open_job(argc, argv, help, positional, 1, &npositional, &exit_code);
    if (!job) return exit_code;
    int rc = ANONKIT_OK;
    if (npositional == 1) rc = anonkit_job_set(job, ANONKIT_OPT_INPUT, positional[0]);
    if (rc < 0) {
        exit_code = cli_fail(job, rc);
        goto done;
    }
    if (npositional != 1) {
        fputs("anonkit: recode needs the input file (see --help)\n", stderr);
        exit_code = CLI_USER_ERROR;
        goto done;
    }
    anonkit_result *result = NULL;
    rc = anonkit_recode(job, &result);
    if (rc < 0) {
        exit_code = cli_fail(job, rc);
        goto done;
    }
    const uint64_t rows = anonkit_result_rows_read(result), outside = anonkit_result_rows_outside(result);
    anonkit_result_free(result);
    fputs("anonkit: warning: privacy is guaranteed only for the data the rules were built on; "
          "recoded rows of other data need not satisfy the privacy model\n",
          stderr);
    fprintf(stderr, "recoded %llu rows of %s\n", (unsigned long long)rows,
            strcmp(positional[0], "-") ? positional[0] : "stdin");
    fprintf(stderr, "%llu rows lie outside their class's published range\n", (unsigned long long)outside);
done:
    anonkit_job_free(job);
    return exit_code;
}
