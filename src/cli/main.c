/* main.c — `anonkit <command> [options]`: dispatches to the subcommands. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

static const char usage[] =
    "usage: anonkit <command> [options]\n"
    "\n"
    "commands:\n"
    "  anonymize INPUT -o OUTPUT   publish a table that satisfies k-anonymity / l-diversity\n"
    "  check PUBLISHED             prove or refute the privacy model on a published table\n"
    "  metrics ORIGINAL PUBLISHED  information loss of a published table (JSON)\n"
    "  recode --rules FILE INPUT   apply saved recoding rules to new data (-o OUTPUT)\n"
    "  generate --rows N -o FILE   synthetic data of [LeFevre07] Figure 7 (CSV or binary tuples)\n"
    "  sequential CURRENT --previous EARLIER -o OUTPUT\n"
    "                              publish a release whose join with earlier ones is (X,Y)-private\n"
    "  report PUBLISHED --original ORIGINAL --html FILE\n"
    "                              the HTML release report of a table published earlier\n"
    "\n"
    "Run 'anonkit <command> --help' for the options of a command.\n";

int main(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        fputs(usage, argc < 2 ? stderr : stdout);
        return argc < 2 ? CLI_USER_ERROR : CLI_OK;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("anonkit %s\n", ANONKIT_VERSION);
        return CLI_OK;
    }
    if (!strcmp(argv[1], "anonymize")) return cli_anonymize(argc - 1, argv + 1);
    if (!strcmp(argv[1], "check")) return cli_check(argc - 1, argv + 1);
    if (!strcmp(argv[1], "metrics")) return cli_metrics(argc - 1, argv + 1);
    if (!strcmp(argv[1], "recode")) return cli_recode(argc - 1, argv + 1);
    if (!strcmp(argv[1], "generate")) return cli_generate(argc - 1, argv + 1);
    if (!strcmp(argv[1], "sequential")) return cli_sequential(argc - 1, argv + 1);
    if (!strcmp(argv[1], "report")) return cli_report(argc - 1, argv + 1);
    fprintf(stderr, "anonkit: unknown command '%s'\n\n%s", argv[1], usage);
    return CLI_USER_ERROR;
}
