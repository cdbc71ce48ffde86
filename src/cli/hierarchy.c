/* hierarchy.c — `anonkit hierarchy`: a generalization hierarchy built from
 * the distinct values of one column (anonkit_hierarchy). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

static const char intro[] =
    "usage: anonkit hierarchy DATA --column COL BUILDER [-o FILE | --preview]\n"
    "                         [--column COL2 BUILDER2 -o FILE2 ...]\n"
    "\n"
    "Reads the distinct values of COL in DATA (- for stdin) and writes an ARX-format\n"
    "hierarchy (';'-separated, one row per value, up to '*') that covers every one\n"
    "of them. A missing value (an empty cell or a --missing token) becomes the leaf\n"
    "NULL. BUILDER is one of --interval, --quantiles, --mask, --date, --order, --flat\n"
    "(docs/hierarchies.md).\n"
    "\n"
    "Several --column groups build several hierarchies from one read of DATA: the\n"
    "options after a --column (up to the next) are that hierarchy's, those before\n"
    "the first apply to all. The files are published together: all of them, or\n"
    "none when any column fails.\n"
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

/* The option that command-line token `arg` ("--name" or "--name=value",
 * the name possibly shortened to a unique prefix, as getopt_long reads it)
 * names, or -1; *joined: the value is in the token. */
static int long_option_of(const char *arg, int *joined)
{
    const char *name = arg + 2, *eq = strchr(name, '=');
    const size_t len = eq ? (size_t)(eq - name) : strlen(name);
    *joined = eq != NULL;
    int found = -1, matches = 0;
    for (int o = 0; o < ANONKIT_OPT__COUNT; o++) {
        const char *n = anonkit_option_name((anonkit_option)o);
        if (o == ANONKIT_OPT_INPUT || !n || strncmp(n, name, len) != 0) continue;
        if (strlen(n) == len) return o; /* an exact name */
        found = o;
        matches++;
    }
    return matches == 1 ? found : -1;
}

/* The command line split at each --column: group[i] gets the group of token
 * argv[i] (i >= 1): g >= 1 for the tokens from the g-th --column up to the
 * next, 0 for those before the first and for every argument that is not an
 * option (the data file). Returns the number of --column options. */
static int split_groups(int argc, char **argv, int *group /* argc entries */)
{
    int groups = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        group[i] = groups;
        if (!strcmp(a, "--")) { /* the rest are arguments */
            for (int k = i; k < argc; k++) group[k] = 0;
            break;
        }
        if (a[0] != '-' || !a[1]) { /* an argument (DATA, or - for stdin) */
            group[i] = 0;
            continue;
        }
        int joined = 0, o = -1;
        if (a[1] == '-') o = long_option_of(a, &joined);
        else if (a[1] == 'o') o = ANONKIT_OPT_OUTPUT, joined = a[2] != '\0';
        if (o == ANONKIT_OPT_COLUMN) group[i] = ++groups;
        const int takes_value = o >= 0 && !(anonkit_option_flags((anonkit_option)o) & ANONKIT_OPTF_FLAG);
        if (takes_value && !joined && i + 1 < argc) group[++i] = groups; /* its value */
    }
    return groups;
}

/* Several --column groups: one job each (argv[0], the common tokens, the
 * group's), all built from one read (anonkit_hierarchies). */
static int build_groups(int argc, char **argv, const int *group, int groups)
{
    char **args = malloc((size_t)(argc + 1) * sizeof *args);
    anonkit_job **jobs = calloc((size_t)groups, sizeof *jobs);
    anonkit_result **results = calloc((size_t)groups, sizeof *results);
    int exit_code = CLI_OK, made = 0;
    if (!args || !jobs || !results) {
        fputs("anonkit: out of memory\n", stderr);
        exit_code = CLI_INTERNAL_ERROR;
        goto done;
    }
    for (int g = 1; g <= groups; g++) {
        int n = 0;
        args[n++] = argv[0];
        for (int i = 1; i < argc; i++)
            if (group[i] == 0) args[n++] = argv[i];
        for (int i = 1; i < argc; i++)
            if (group[i] == g) args[n++] = argv[i];
        args[n] = NULL;
        char *positional[1];
        int npositional = 0;
        anonkit_job *job = cli_open_job(n, args, help, positional, 1, &npositional, &exit_code);
        if (!job) goto done;
        jobs[made++] = job;
        if (npositional != 1) {
            fputs("anonkit: hierarchy needs the data file (see --help)\n", stderr);
            exit_code = CLI_USER_ERROR;
            goto done;
        }
        const int rc = anonkit_job_set(job, ANONKIT_OPT_INPUT, positional[0]);
        if (rc < 0) {
            exit_code = cli_fail(job, rc);
            goto done;
        }
    }
    const int rc = anonkit_hierarchies(jobs, (size_t)groups, results);
    if (rc < 0) {
        exit_code = cli_fail(jobs[0], rc);
        goto done;
    }
    for (int g = 0; g < groups; g++) fprintf(stderr, "anonkit: %s\n", anonkit_result_summary(results[g]));
done:
    for (int g = 0; results && g < groups; g++) anonkit_result_free(results[g]);
    for (int g = 0; g < made; g++) anonkit_job_free(jobs[g]);
    free(args);
    free(jobs);
    free(results);
    return exit_code;
}

int cli_hierarchy(int argc, char **argv)
{
    /* several --column options: several hierarchies from one read */
    int *group = malloc((size_t)argc * sizeof *group);
    if (!group) {
        fputs("anonkit: out of memory\n", stderr);
        return CLI_INTERNAL_ERROR;
    }
    const int groups = split_groups(argc, argv, group);
    if (groups > 1) {
        const int exit_code = build_groups(argc, argv, group, groups);
        free(group);
        return exit_code;
    }
    free(group);
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
