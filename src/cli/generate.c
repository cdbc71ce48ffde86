/* generate.c — `anonkit generate`: the synthetic data generator of [LeFevre07] Figure 7
 * on the command line (the work is anonkit_generate). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

static const char help[] =
    "usage: anonkit generate --rows N -o FILE [--seed S] [--format csv|binary] [--salary uniform|normal]\n"
    "\n"
    "Writes N synthetic records (the generator of [LeFevre07] Figure 7) with the columns\n"
    "salary, commission, age, elevel, car, zipcode, hvalue, hyears, loan (the\n"
    "attributes), c2, c7 (class labels A/B) and r7, r10 (regression targets, two\n"
    "decimals). hvalue is rounded to the nearest integer. The same seed gives the\n"
    "same bytes; without --seed a random seed is used and printed on stderr.\n"
    "\n"
    "      --rows N             number of records\n"
    "  -o, --output FILE        where to write (- for stdout)\n"
    "      --seed S             seed of the generator (0 to 2^64-1)\n"
    "      --format F           csv (default, with a header line) or binary\n"
    "                           (fixed-width tuples, see docs/tuple-format.md)\n"
    "      --salary D           uniform (default: 20000 to 150000, as in 000\n"
    "                           Figure 7) or normal (mean 85000, variance 1.1e8,\n"
    "                           within that range: [LeFevre07] §5.6)\n"
    "  -h, --help               this help\n";

enum { OPT_ROWS = 1000, OPT_SEED, OPT_FORMAT, OPT_SALARY };

static const struct option long_options[] = {
    {"rows", required_argument, NULL, OPT_ROWS},   {"seed", required_argument, NULL, OPT_SEED},
    {"format", required_argument, NULL, OPT_FORMAT}, {"output", required_argument, NULL, 'o'},
    {"salary", required_argument, NULL, OPT_SALARY},
    {"help", no_argument, NULL, 'h'},              {NULL, 0, NULL, 0},
};

/* A whole number in [0, 2^64): digits only. */
static int parse_u64(const char *s, uint64_t *out)
{
    if (*s < '0' || *s > '9') return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end) return -1;
    *out = v;
    return 0;
}

int cli_generate(int argc, char **argv)
{
    const char *output = NULL, *format = NULL, *rows_text = NULL, *salary = NULL;
    uint64_t rows = 0, seed = 0;
    int seed_set = 0;
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":o:h", long_options, NULL)) != -1) {
        switch (c) {
        case 'h':
            fputs(help, stdout);
            return CLI_OK;
        case 'o':
            output = optarg;
            break;
        case OPT_FORMAT:
            format = optarg;
            break;
        case OPT_SALARY:
            salary = optarg;
            break;
        case OPT_ROWS:
            rows_text = optarg;
            if (parse_u64(optarg, &rows) != 0) {
                fprintf(stderr, "anonkit: --rows must be a whole number, not '%s'\n", optarg);
                return CLI_USER_ERROR;
            }
            break;
        case OPT_SEED:
            if (parse_u64(optarg, &seed) != 0) {
                fprintf(stderr, "anonkit: --seed must be a whole number from 0 to 2^64-1, not '%s'\n", optarg);
                return CLI_USER_ERROR;
            }
            seed_set = 1;
            break;
        default:
            fprintf(stderr, "anonkit: %s: %s (see --help)\n", argv[optind - 1],
                    c == ':' ? "this option needs a value" : "unknown option");
            return CLI_USER_ERROR;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "anonkit: unexpected argument '%s' (see --help)\n", argv[optind]);
        return CLI_USER_ERROR;
    }
    if (!rows_text) {
        fputs("anonkit: generate needs --rows N (see --help)\n", stderr);
        return CLI_USER_ERROR;
    }
    if (!output) {
        fputs("anonkit: generate needs an output file: -o FILE, or - for stdout (see --help)\n", stderr);
        return CLI_USER_ERROR;
    }
    char errmsg[2048];
    uint64_t seed_used = 0;
    int rc = anonkit_generate(output, rows, seed_set ? &seed : NULL, format, salary, &seed_used, errmsg, sizeof errmsg);
    if (rc < 0) {
        fprintf(stderr, "anonkit: %s\n", errmsg);
        return rc == ANONKIT_E_NOMEM || rc == ANONKIT_E_INTERNAL ? CLI_INTERNAL_ERROR : CLI_USER_ERROR;
    }
    fprintf(stderr, "anonkit: wrote %llu rows to %s (seed %llu)\n", (unsigned long long)rows,
            strcmp(output, "-") ? output : "stdout", (unsigned long long)seed_used);
    return CLI_OK;
}
