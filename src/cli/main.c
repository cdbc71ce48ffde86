/* main.c — `anonkit <command> [options]`: dispatches to the subcommands. */
#include <stdio.h>
#include <stdlib.h>
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
    "  risk DATA                   re-identification risk of a table or published file\n"
    "  hierarchy DATA --column COL -o FILE\n"
    "                              build a generalization hierarchy from a column's values\n"
    "  report PUBLISHED --original ORIGINAL --html FILE\n"
    "                              the HTML release report of a table published earlier\n"
    "\n"
    "Run 'anonkit <command> --help' for the options of a command.\n";

/* Hides the password of every postgresql:// or postgres:// argument from the
 * process listing: the argument is copied (the copy is what the command
 * reads) and the password in the original, which ps and /proc/PID/cmdline
 * show, is overwritten with '*' (user:PASSWORD@ and password=...). The
 * moment between the start of the process and this call remains: PGPASSWORD
 * or ~/.pgpass keep a password out of the command line altogether. */
static void hide_passwords(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        char *a = argv[i];
        char *uri = strstr(a, "postgresql://");
        if (!uri) uri = strstr(a, "postgres://");
        if (!uri) continue;
        char *copy = strdup(a);
        if (!copy) continue; /* (the listing then keeps it; the run is not harmed) */
        char *auth = strstr(uri, "://") + 3;
        const size_t auth_len = strcspn(auth, "/?#");
        char *at = NULL;
        for (size_t k = 0; k < auth_len; k++)
            if (auth[k] == '@') at = auth + k;
        char *colon = at ? memchr(auth, ':', (size_t)(at - auth)) : NULL;
        for (char *p = colon ? colon + 1 : NULL; p && p < at; p++) *p = '*';
        for (char *p = uri; (p = strstr(p, "password=")) != NULL;) {
            if (p > uri && (p[-1] == '?' || p[-1] == '&')) {
                for (p += 9; *p && *p != '&' && *p != '#'; p++) *p = '*';
            } else {
                p += 9;
            }
        }
        argv[i] = copy; /* freed with the process */
    }
}

int main(int argc, char **argv)
{
    hide_passwords(argc, argv);
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
    if (!strcmp(argv[1], "risk")) return cli_risk(argc - 1, argv + 1);
    if (!strcmp(argv[1], "hierarchy")) return cli_hierarchy(argc - 1, argv + 1);
    if (!strcmp(argv[1], "report")) return cli_report(argc - 1, argv + 1);
    fprintf(stderr, "anonkit: unknown command '%s'\n\n%s", argv[1], usage);
    return CLI_USER_ERROR;
}
