/* sequential.c — `anonkit sequential`: options in, summary out (004). */
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"

static const char help[] =
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
    "\n"
    "  -o, --output FILE          the generalized current release (- for stdout)\n"
    "      --previous FILE        an earlier release (repeat for several: star join)\n"
    "      --x A,B,...            X: attributes of any release; a name in several\n"
    "                             releases names all its copies\n"
    "      --y C,...              Y: attributes of one release each\n"
    "      --anonymity K          (X,Y)-anonymity: every x co-occurs with >= K distinct y\n"
    "      --linkability P        (X,Y)-linkability: no y is inferred from x with\n"
    "                             confidence above P (0 < P <= 1); Y in one release\n"
    "      --sensitive-values V,..  linkability counts only y holding one of these values\n"
    "      --class COL            class column of the current release: Score by\n"
    "                             class-entropy reduction (and continuous split points)\n"
    "      --score S              entropy (default, needs --class) or distortion\n"
    "      --inconsistent FILE    lines ATTR,VALUE,ATTR,VALUE: values (and all their\n"
    "                             specializations) that cannot belong to one person\n"
    "      --hierarchy A=FILE     ARX hierarchy of categorical attribute A (every\n"
    "                             attribute shared by two releases needs one); an X\n"
    "                             attribute without one is continuous (intervals)\n"
    "      --identifier A,...     columns dropped from the output\n"
    "      --report FILE          JSON: final cut, achieved A_Y(X) or L_Y(X), distortion,\n"
    "                             conditional class entropy, time\n"
    "      --threads N            threads reading the current release and writing the\n"
    "                             output (default: one per core; same result for any N)\n"
    "      --seed N, --keep-order, --delimiter C, --job FILE   as for anonymize\n"
    "  -h, --help                 this help\n";

int cli_sequential(int argc, char **argv)
{
    char *positional[1];
    int npositional = 0, exit_code = CLI_OK;
    anonkit_job *job = cli_open_job(argc, argv, help, positional, 1, &npositional, &exit_code);
    if (!job) return exit_code;
    if (npositional == 1) anonkit_job_set(job, ANONKIT_OPT_INPUT, positional[0]);
    char *summary = NULL;
    int rc = anonkit_sequential(job, &summary, NULL);
    if (rc < 0) exit_code = cli_fail(job, rc);
    else fputs(summary, stderr);
    free(summary);
    anonkit_job_free(job);
    return exit_code;
}
