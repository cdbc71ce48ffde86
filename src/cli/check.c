/* check.c — `anonkit check`: the independent verifier on the command line. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

static const char help[] =
    "usage: anonkit check PUBLISHED --qi A,B,... [--sensitive COL] [--k K] [--l L ...]\n"
    "\n"
    "Groups the rows of PUBLISHED (- for stdin) by their published QI values and\n"
    "tests every group against the privacy model. Exits 0 when every class\n"
    "satisfies it, 1 naming the first class that does not.\n"
    "\n"
    "      --qi A,B,...         quasi-identifier columns\n"
    "      --sensitive COL      sensitive column\n"
    "      --k K                k-anonymity\n"
    "      --l L                l-diversity\n"
    "      --l-variant V[,V]    distinct (default), entropy, recursive, probabilistic\n"
    "      --c C                c of recursive (c,l)-diversity\n"
    "      --variance V         variance diversity: population variance of the numeric\n"
    "                           sensitive column at least V in every class\n"
    "      --suppression F      rows whose QIs are all '*' are suppressed rows when they\n"
    "                           are at most F of all rows (else they must form a class)\n"
    "      --delimiter C        field delimiter (default ',')\n"
    "      --job FILE           take the settings from a JSON job file\n"
    "  -h, --help               this help\n";

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
    uint64_t classes = 0, rows = 0, suppressed = 0;
    int rc = anonkit_check_counts(job, positional[0], &classes, &rows, &suppressed);
    if (rc < 0) {
        exit_code = cli_fail(job, rc);
        goto done;
    }
    fprintf(stderr, "anonkit: %s: ok, %llu rows in %llu classes satisfy the privacy model",
            strcmp(positional[0], "-") ? positional[0] : "stdin",
            (unsigned long long)(rows - suppressed), (unsigned long long)classes);
    if (suppressed) fprintf(stderr, ", %llu rows suppressed", (unsigned long long)suppressed);
    fputc('\n', stderr);
done:
    anonkit_job_free(job);
    return exit_code;
}
