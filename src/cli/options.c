/* options.c — getopt_long over the job options shared by every subcommand,
 * and the subcommands' --help, both made from the library's option table. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

/* getopt_long's value of option o is OPT_BASE + o: the option numbers
 * themselves would meet getopt's own ':' (58) and '?' (63). */
enum { OPT_BASE = 256, OPT_HELP = 1000 };

/* getopt_long's table, made from the library's option table: every option by
 * its long name except the input, which is the positional argument; and
 * --help. `longs` holds ANONKIT_OPT__COUNT + 2 entries. */
static void make_long_options(struct option *longs)
{
    size_t n = 0;
    for (int o = 0; o < ANONKIT_OPT__COUNT; o++) {
        if (o == ANONKIT_OPT_INPUT) continue;
        const int flag = (anonkit_option_flags((anonkit_option)o) & ANONKIT_OPTF_FLAG) != 0;
        longs[n++] = (struct option){anonkit_option_name((anonkit_option)o), flag ? no_argument : required_argument,
                                     NULL, OPT_BASE + o};
    }
    longs[n++] = (struct option){"help", no_argument, NULL, OPT_HELP};
    longs[n] = (struct option){NULL, 0, NULL, 0};
}

/* Prints `text` (lines separated by '\n') from column `column`, the first
 * line after `used` columns already printed (at least two spaces between). */
static void print_help_text(const char *text, size_t used, int column)
{
    int pad = used + 2 > (size_t)column ? 2 : column - (int)used;
    for (;;) {
        const char *nl = strchr(text, '\n');
        const int len = nl ? (int)(nl - text) : (int)strlen(text);
        printf("%*s%.*s\n", pad, "", len, text);
        if (!nl) return;
        text = nl + 1;
        pad = column;
    }
}

void cli_print_help(const char *intro, const cli_help_line *lines, size_t nlines, int column)
{
    fputs(intro, stdout);
    for (size_t i = 0; i < nlines; i++) {
        const cli_help_line *h = &lines[i];
        if (h->option < 0) { /* a line of its own */
            printf("%s\n", h->text);
            continue;
        }
        const anonkit_option o = (anonkit_option)h->option;
        const char *arg = anonkit_option_arg(o);
        char left[128];
        snprintf(left, sizeof left, "%s--%s%s%s", o == ANONKIT_OPT_OUTPUT ? "  -o, " : "      ", anonkit_option_name(o),
                 arg ? " " : "", arg ? arg : "");
        fputs(left, stdout);
        print_help_text(h->text ? h->text : anonkit_option_help(o), strlen(left), column);
    }
    fputs("  -h, --help", stdout);
    print_help_text("this help", strlen("  -h, --help"), column);
}

int cli_fail(const anonkit_job *job, int status)
{
    fprintf(stderr, "anonkit: %s\n", anonkit_errmsg(job));
    return status == ANONKIT_E_NOMEM || status == ANONKIT_E_INTERNAL ? CLI_INTERNAL_ERROR : CLI_USER_ERROR;
}

static int parse_job(int argc, char **argv, anonkit_job *job, void (*help)(void), char **positional,
                     int max_positional, int *npositional, int *exit_code)
{
    /* First pass: --help and the job file, which the other options override. */
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--")) break;
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            help();
            *exit_code = CLI_OK;
            return -1;
        }
        const char *file = NULL;
        if (!strcmp(argv[i], "--job") && i + 1 < argc) file = argv[++i];
        else if (!strncmp(argv[i], "--job=", 6)) file = argv[i] + 6;
        if (file) {
            int rc = anonkit_job_set(job, ANONKIT_OPT_JOB, file);
            if (rc < 0) {
                *exit_code = cli_fail(job, rc);
                return -1;
            }
        }
    }
    unsigned char replaced[ANONKIT_OPT__COUNT] = {0};
    struct option long_options[ANONKIT_OPT__COUNT + 2];
    make_long_options(long_options);
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":o:", long_options, NULL)) != -1) {
        if (c == '?' || c == ':') {
            fprintf(stderr, "anonkit: %s: %s (see --help)\n", argv[optind - 1],
                    c == '?' ? "unknown option" : "this option needs a value");
            *exit_code = CLI_USER_ERROR;
            return -1;
        }
        if (c == OPT_HELP || c == OPT_BASE + ANONKIT_OPT_JOB) continue;
        anonkit_option o = c == 'o' ? ANONKIT_OPT_OUTPUT : (anonkit_option)(c - OPT_BASE);
        /* A list given on the command line replaces the job file's list. */
        const unsigned flags = anonkit_option_flags(o);
        if ((flags & ANONKIT_OPTF_REPLACE) && !replaced[o]) {
            anonkit_job_set(job, o, "");
            replaced[o] = 1;
        }
        int rc = anonkit_job_set(job, o, (flags & ANONKIT_OPTF_FLAG) ? "true" : optarg);
        if (rc < 0) {
            *exit_code = cli_fail(job, rc);
            return -1;
        }
    }
    *npositional = 0;
    for (int i = optind; i < argc; i++) {
        if (*npositional == max_positional) {
            fprintf(stderr, "anonkit: unexpected argument '%s' (see --help)\n", argv[i]);
            *exit_code = CLI_USER_ERROR;
            return -1;
        }
        positional[(*npositional)++] = argv[i];
    }
    return 0;
}

anonkit_job *cli_open_job(int argc, char **argv, void (*help)(void), char **positional, int max_positional,
                          int *npositional, int *exit_code)
{
    anonkit_job *job = anonkit_job_create();
    if (!job) {
        fputs("anonkit: out of memory\n", stderr);
        *exit_code = CLI_INTERNAL_ERROR;
        return NULL;
    }
    if (parse_job(argc, argv, job, help, positional, max_positional, npositional, exit_code) < 0) {
        anonkit_job_free(job);
        return NULL;
    }
    return job;
}
