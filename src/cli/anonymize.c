/* anonymize.c — `anonkit anonymize`: options in, summary out. */
#include <signal.h>
#include <string.h>
#include <stdio.h>
#include <unistd.h>

#include "cli/cli.h"

static const char help[] =
    "usage: anonkit anonymize INPUT -o OUTPUT --qi A,B,... [options]\n"
    "\n"
    "Publishes INPUT (CSV with a header row; - for stdin) so that every row hides\n"
    "in an equivalence class that satisfies the privacy model.\n"
    "\n"
    "  -o, --output FILE        published CSV (- for stdout); written only on success\n"
    "      --qi A,B,...         quasi-identifier columns\n"
    "      --sensitive COL      sensitive column (needed by --l and --variance)\n"
    "      --identifier A,...   identifier columns, dropped from the output\n"
    "      --hierarchy A=FILE   ARX generalization hierarchy of QI A (';'-separated,\n"
    "                           one row per leaf); a QI without one must be numeric\n"
    "      --numeric A,...      treat these QIs as numeric although they have a hierarchy\n"
    "      --k K                k-anonymity: every class has at least K rows\n"
    "      --l L                l-diversity of the sensitive column\n"
    "      --l-variant V[,V]    distinct (default), entropy, recursive, probabilistic\n"
    "      --c C                c of recursive (c,l)-diversity (default 1)\n"
    "      --variance V         variance diversity: every class's population variance\n"
    "                           of the numeric sensitive column is at least V\n"
    "      --algorithm NAME     mondrian (default): greedy multidimensional partitioning;\n"
    "                           rothko-t: the same result out of core, within --memory\n"
    "                           rothko-s: out of core by growing trees on random samples\n"
    "                           (hypothesis tests, pruning); also regression and variance\n"
    "                           hilbert, idistance: map the QIs to 1-D (Hilbert curve,\n"
    "                           iDistance), then optimal 1-D k-anonymity (groups of\n"
    "                           k..2k-1 by exact NCP) or the 1-D l-diversity heuristic\n"
    "                           (probabilistic l-diversity); hilbert-fast, idistance-fast:\n"
    "                           cost groups by their 1-D extent (001, local recoding)\n"
    "      --bits B             1-D algorithms: Hilbert grid bits per QI (default 12)\n"
    "      --centers C          iDistance: k-means centres on a 10% sample (default 512)\n"
    "                           incognito: full-domain generalization over the hierarchies\n"
    "                           (every QI needs one), all anonymous levels found\n"
    "      --incognito-variant V  cube (default), super-roots, basic, or the baselines\n"
    "                           binary-search, bottom-up, bottom-up-norollup\n"
    "      --suppression F      incognito: rows of failing classes may be suppressed ('*'\n"
    "                           in every QI, counted) up to F of the table (default 0)\n"
    "      --choose M           incognito: publish the k-minimal node of least gcp\n"
    "                           (default), height or dm\n"
    "      --split S            median (default): widest range, median threshold;\n"
    "                           infogain: best information gain on --class;\n"
    "                           regression: least squared error of --target\n"
    "      --class COL          class label column (InfoGain; conditional entropy in the report)\n"
    "      --target COL         numeric target column (Regression; RMSE in the report)\n"
    "      --min-gain G         InfoGain: below G bits a subtree goes on with median (default 0.01)\n"
    "      --publish S          numeric QIs as generalize (default: lo-hi or the value),\n"
    "                           range (always lo-hi) or mean (the class mean)\n"
    "      --rules FILE         write the recoding rules (see anonkit recode)\n"
    "      --report FILE        JSON report: parameters, counts, metrics, time\n"
    "      --weights A=W,...    NCP weights per QI for GCP (default equal)\n"
    "      --seed N             seed of the output shuffle (default: random, in the report)\n"
    "      --keep-order         keep input row order (row order can re-identify people)\n"
    "      --delimiter C        field delimiter of input and output (default ',')\n"
    "      --memory SIZE        memory budget (K/M/G suffixes), e.g. 256M: needed by rothko-t/-s;\n"
    "                           the 1-D algorithms sort their keys on disk beyond it\n"
    "      --fcache N           rothko-t: frequency groups held at once (default: as many as fit)\n"
    "      --block-size SIZE    rothko-t/-s: bytes per read and write of spill files (default 256K)\n"
    "      --tmpdir DIR         rothko-t/-s: where the private spill folder goes (default $TMPDIR)\n"
    "      --alpha A            rothko-s: significance of the split tests (default 0.05)\n"
    "      --test T             rothko-s: hypothesis (default) or naive (the sample's own counts)\n"
    "      --sample-size N      rothko-s: rows of the largest sample (default: what --memory holds)\n"
    "      --growth-depth D     rothko-s: repartition when the grown tree is D deep\n"
    "                           (default: when its partitions would fit in memory)\n"
    "      --threads N          worker threads (default: one per core; same result for any N)\n"
    "      --job FILE           JSON job file with any of these settings by long name;\n"
    "                           command-line options override it\n"
    "  -h, --help               this help\n";

/* The spill folder of an out-of-core run, while it exists (see
 * anonkit_job_set_spill_notice): removed when a signal ends the process. */
static volatile char spill_folder[4096];

static void remove_spill_and_die(int sig)
{
    if (spill_folder[0]) rmdir((const char *)spill_folder);
    signal(sig, SIG_DFL);
    raise(sig);
}

static void remove_spill_on_signals(anonkit_job *job)
{
    anonkit_job_set_spill_notice(job, spill_folder, sizeof spill_folder);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = remove_spill_and_die;
    sigemptyset(&sa.sa_mask);
    const int signals[] = {SIGINT, SIGTERM, SIGHUP};
    for (size_t i = 0; i < sizeof signals / sizeof *signals; i++) sigaction(signals[i], &sa, NULL);
}

int cli_anonymize(int argc, char **argv)
{
    char *positional[1];
    int npositional = 0, exit_code = CLI_OK;
    anonkit_job *job = cli_open_job(argc, argv, help, positional, 1, &npositional, &exit_code);
    if (!job) return exit_code;
    if (npositional == 1) anonkit_job_set(job, ANONKIT_OPT_INPUT, positional[0]);
    remove_spill_on_signals(job);
    anonkit_result *result = NULL;
    int rc = anonkit_anonymize(job, &result);
    if (rc < 0) {
        exit_code = cli_fail(job, rc);
        goto done;
    }
    fputs(anonkit_result_summary(result), stderr);
    anonkit_result_free(result);
done:
    anonkit_job_free(job);
    return exit_code;
}
