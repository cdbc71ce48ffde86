/* metrics.c — `anonkit metrics`: information loss of a published file as JSON. */
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"

static const char help[] =
    "usage: anonkit metrics ORIGINAL PUBLISHED --qi A,B,... [--hierarchy A=FILE ...] [options]\n"
    "\n"
    "Prints, as JSON on stdout, the information loss of PUBLISHED against ORIGINAL:\n"
    "DM (discernibility), C_AVG (normalized average class size, uses --k), GCP,\n"
    "the NCP of every quasi-identifier and the distortion per record (004 §6: one\n"
    "unit per hierarchy level a categorical value was raised; (b-a)/(max-min) for a\n"
    "numeric value published as the interval a-b); with --class the conditional\n"
    "entropy of the class label given the classes, with --target the RMSE of\n"
    "predicting the target by its class mean (000 §5.5).\n"
    "\n"
    "      --qi A,B,...         quasi-identifier columns\n"
    "      --hierarchy A=FILE   hierarchy of a categorical QI\n"
    "      --numeric A,...      QIs that are numeric although they have a hierarchy\n"
    "      --k K                k used for C_AVG (default 1)\n"
    "      --weights A=W,...    NCP weights per QI for GCP (default equal)\n"
    "      --class COL          class label column: conditional entropy (bits)\n"
    "      --target COL         numeric target column: RMSE\n"
    "      --kl-level I         with --sensitive: KL-divergence between the original's and\n"
    "                           the published datacube of COUNT(*) WHERE SA = v GROUP BY\n"
    "                           every I QIs, uniform inside each published box (001 §6.3)\n"
    "      --sensitive COL      the sensitive column (for --kl-level)\n"
    "      --class-error COL    classification error (004 §6): a C4.5 decision tree for\n"
    "                           COL grown on the training rows of PUBLISHED over its QIs\n"
    "                           (each published label a category; a numeric value or\n"
    "                           interval is its midpoint), its error on the testing rows;\n"
    "                           the rows are told apart by one of:\n"
    "      --train-rows N       the first N rows of PUBLISHED train, the others test\n"
    "                           (publish with --keep-order to keep the input's order)\n"
    "      --split-column COL   a column holding train or test in every row (other\n"
    "                           columns are published as they are, so any row order)\n"
    "      --publish S          how PUBLISHED was written; with mean, NCP, GCP and the\n"
    "                           continuous distortion are null (a mean has no extent)\n"
    "      --suppression F      rows with every QI '*', at most F of all rows, count as\n"
    "                           suppressed (as anonymize --suppression wrote them)\n"
    "      --delimiter C        field delimiter (default ',')\n"
    "      --job FILE           take the settings from a JSON job file\n"
    "  -h, --help               this help\n";

int cli_metrics(int argc, char **argv)
{
    char *positional[2];
    int npositional = 0, exit_code = CLI_OK;
    anonkit_job *job = cli_open_job(argc, argv, help, positional, 2, &npositional, &exit_code);
    if (!job) return exit_code;
    if (npositional != 2) {
        fputs("anonkit: metrics needs the original and the published file (see --help)\n", stderr);
        exit_code = CLI_USER_ERROR;
        goto done;
    }
    char *json = NULL;
    int rc = anonkit_metrics(job, positional[0], positional[1], &json);
    if (rc < 0) {
        exit_code = cli_fail(job, rc);
        goto done;
    }
    printf("%s\n", json);
    free(json);
done:
    anonkit_job_free(job);
    return exit_code;
}
