/* cli.h — the anonkit command: shared option handling for the subcommands
 * (one file each in src/cli/). The CLI holds no logic beyond arguments and
 * printing (docs/ARCHITECTURE.md §2, §13). */
#ifndef AK_CLI_H
#define AK_CLI_H

#include <stddef.h>

#include "anonkit/anonkit.h"

/* Exit codes (docs/ARCHITECTURE.md §13). */
enum { CLI_OK = 0, CLI_USER_ERROR = 1, CLI_INTERNAL_ERROR = 2 };

/* A new job with the options of argv in it (a --job file first, so that
 * command-line options override it) and the positional arguments in
 * positional[0..*npositional); or NULL when the command should exit with
 * *exit_code (--help printed `help`, a bad option, no memory). */
anonkit_job *cli_open_job(int argc, char **argv, void (*help)(void), char **positional, int max_positional,
                          int *npositional, int *exit_code);

/* One option in a subcommand's --help: option's name, placeholder and `text`
 * (NULL: the option's own help from the library); option -1 prints text as a
 * line of its own. */
typedef struct cli_help_line {
    int option;
    const char *text;
} cli_help_line;

/* Prints intro, then every line with its text from `column`, then -h, --help. */
void cli_print_help(const char *intro, const cli_help_line *lines, size_t nlines, int column);

/* Prints "anonkit: message" for a failed call and returns the exit code. */
int cli_fail(const anonkit_job *job, int status);

/* The progress line of a run (progress.c): the job's callback draws it on
 * stderr; cli_progress_clear erases it before anything else is printed. */
typedef struct cli_progress {
    double delay;  /* seconds a run goes before the line appears */
    double last;   /* the run's time of the last redraw */
    int in_place;  /* stderr is a terminal: the line is redrawn in place */
    int drawn;     /* a line is on the screen */
} cli_progress;

/* Sets the job's progress callback when the line is wanted (--progress,
 * or stderr a terminal and not --no-progress); cp must outlive the run. */
void cli_progress_start(cli_progress *cp, anonkit_job *job);

/* Erases the line, when one is drawn in place. */
void cli_progress_clear(cli_progress *cp);

int cli_anonymize(int argc, char **argv);
int cli_check(int argc, char **argv);
int cli_metrics(int argc, char **argv);
int cli_recode(int argc, char **argv);
int cli_generate(int argc, char **argv);
int cli_hierarchy(int argc, char **argv);
int cli_sequential(int argc, char **argv);
int cli_risk(int argc, char **argv);
int cli_report(int argc, char **argv);

#endif
