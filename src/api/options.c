/* options.c — the option table (options.h): every anonkit_option with its
 * long name, kind, setter (options_set.c) and help, declared once;
 * anonkit_job_set, job files and the command line all read it. */
#include "api/options.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "api/locale.h"
#include "api/options_set.h"

/* ---- the table ----
 *
 * One entry per option, indexed by its anonkit_option value: {long name,
 * flags, setter, field of the generic setters, placeholder, help}. The help
 * is the option's line in `anonkit anonymize --help` (or in the help of the
 * one subcommand that takes it); a subcommand may word it for itself. */


static const ak_option_desc options[ANONKIT_OPT__COUNT] = {
    [ANONKIT_OPT_INPUT] =
        {"input", ANONKIT_OPTF_PATH | AK_OPTF_JSON_TEXT, opt_set_text, offsetof(anonkit_job, input), "FILE",
         "input CSV (- for stdin)"},
    [ANONKIT_OPT_OUTPUT] =
        {"output", ANONKIT_OPTF_PATH | AK_OPTF_JSON_TEXT, opt_set_text, offsetof(anonkit_job, output), "FILE",
         "published CSV (- for stdout); written only on success"},
    [ANONKIT_OPT_QI] =
        {"qi", ANONKIT_OPTF_LIST | ANONKIT_OPTF_REPLACE | AK_OPTF_JSON_TEXT, opt_set_names,
         offsetof(anonkit_job, qi), "A,B,...",
         "quasi-identifier columns"},
    [ANONKIT_OPT_SENSITIVE] =
        {"sensitive", AK_OPTF_JSON_TEXT, opt_set_text, offsetof(anonkit_job, sensitive), "COL",
         "sensitive column (needed by --l and --variance)"},
    [ANONKIT_OPT_IDENTIFIER] =
        {"identifier", ANONKIT_OPTF_LIST | ANONKIT_OPTF_REPLACE | AK_OPTF_JSON_TEXT, opt_set_names,
         offsetof(anonkit_job, identifiers), "A,...",
         "identifier columns, dropped from the output"},
    [ANONKIT_OPT_HIERARCHY] =
        {"hierarchy", ANONKIT_OPTF_LIST | AK_OPTF_JSON_PATHS, opt_set_hierarchy, 0, "A=FILE",
         "ARX generalization hierarchy of QI A (';'-separated,\n"
         "one row per leaf); a QI without one must be numeric;\n"
         "A=auto: a flat one built from the data"},
    [ANONKIT_OPT_NUMERIC] =
        {"numeric", ANONKIT_OPTF_LIST | ANONKIT_OPTF_REPLACE | AK_OPTF_JSON_TEXT, opt_set_names,
         offsetof(anonkit_job, numeric), "A,...",
         "treat these QIs as numeric although they have a hierarchy"},
    [ANONKIT_OPT_K] =
        {"k", 0, opt_set_k, 0, "K",
         "k-anonymity: every class has at least K rows"},
    [ANONKIT_OPT_L] =
        {"l", 0, opt_set_l, 0, "L",
         "l-diversity of the sensitive column"},
    [ANONKIT_OPT_L_VARIANT] =
        {"l-variant", AK_OPTF_JSON_TEXT, opt_set_l_variant, 0, "V[,V]",
         "distinct (default), entropy, recursive, probabilistic"},
    [ANONKIT_OPT_C] =
        {"c", 0, opt_set_c, 0, "C",
         "c of recursive (c,l)-diversity (default 1)"},
    [ANONKIT_OPT_ALGORITHM] =
        {"algorithm", AK_OPTF_JSON_TEXT, opt_set_algorithm, 0, "NAME",
         "mondrian (default): greedy multidimensional partitioning;\n"
         "rothko-t: the same result out of core, within --memory\n"
         "rothko-s: out of core by growing trees on random samples\n"
         "(hypothesis tests, pruning); also regression and variance\n"
         "hilbert, idistance: map the QIs to 1-D (Hilbert curve,\n"
         "iDistance), then optimal 1-D k-anonymity (groups of\n"
         "k..2k-1 by exact NCP) or the 1-D l-diversity heuristic\n"
         "(probabilistic l-diversity); hilbert-fast, idistance-fast:\n"
         "cost groups by their 1-D extent ([Ghinita07], local recoding)\n"
         "incognito: full-domain generalization over the hierarchies\n"
         "(every QI needs one), all anonymous levels found\n"
         "local: full-domain optima applied iteratively, each row at\n"
         "its own levels of the hierarchies (local recoding)"},
    [ANONKIT_OPT_REPORT] =
        {"report", ANONKIT_OPTF_PATH | AK_OPTF_JSON_TEXT, opt_set_text, offsetof(anonkit_job, report), "FILE",
         "JSON report: parameters, counts, metrics, time"},
    [ANONKIT_OPT_SEED] =
        {"seed", 0, opt_set_seed, 0, "N",
         "seed of the output shuffle (default: random, in the report)"},
    [ANONKIT_OPT_KEEP_ORDER] =
        {"keep-order", ANONKIT_OPTF_FLAG, opt_set_keep_order, 0, NULL,
         "keep input row order (row order can re-identify people)"},
    [ANONKIT_OPT_DELIMITER] =
        {"delimiter", 0, opt_set_delimiter, 0, "C",
         "field delimiter of input and output (default ',')"},
    [ANONKIT_OPT_WEIGHTS] =
        {"weights", AK_OPTF_JSON_NUMBERS, opt_set_weights, 0, "A=W,...",
         "NCP weights per QI for GCP (default equal)"},
    [ANONKIT_OPT_JOB] =
        {"job", AK_OPTF_NOT_IN_FILE, opt_set_job, 0, "FILE",
         "JSON job file with any of these settings by long name;\n"
         "command-line options override it"},
    [ANONKIT_OPT_THREADS] =
        {"threads", 0, opt_set_threads, 0, "N",
         "worker threads (default: one per core; same result for any N)"},
    [ANONKIT_OPT_SPLIT] =
        {"split", AK_OPTF_JSON_TEXT, opt_set_split, 0, "S",
         "median (default): widest range, median threshold;\n"
         "infogain: best information gain on --class;\n"
         "regression: least squared error of --target"},
    [ANONKIT_OPT_CLASS] =
        {"class", AK_OPTF_JSON_TEXT, opt_set_text, offsetof(anonkit_job, class_name), "COL",
         "class label column (InfoGain; conditional entropy in the report)"},
    [ANONKIT_OPT_TARGET] =
        {"target", AK_OPTF_JSON_TEXT, opt_set_text, offsetof(anonkit_job, target_name), "COL",
         "numeric target column (Regression; RMSE in the report)"},
    [ANONKIT_OPT_MIN_GAIN] =
        {"min-gain", 0, opt_set_min_gain, 0, "G",
         "InfoGain: below G bits a subtree goes on with median (default 0.01)"},
    [ANONKIT_OPT_VARIANCE] =
        {"variance", 0, opt_set_variance, 0, "V",
         "variance diversity: every class's population variance\n"
         "of the numeric sensitive column is at least V"},
    [ANONKIT_OPT_PUBLISH] =
        {"publish", AK_OPTF_JSON_TEXT, opt_set_publish, 0, "S",
         "numeric QIs as generalize (default: lo-hi or the value),\n"
         "range (always lo-hi) or mean (the class mean)"},
    [ANONKIT_OPT_RULES] =
        {"rules", ANONKIT_OPTF_PATH | AK_OPTF_JSON_TEXT, opt_set_text, offsetof(anonkit_job, rules), "FILE",
         "write the recoding rules (see anonkit recode)"},
    [ANONKIT_OPT_MEMORY] =
        {"memory", 0, opt_set_memory, 0, "SIZE",
         "memory budget (K/M/G suffixes), e.g. 256M: needed by rothko-t/-s;\n"
         "the 1-D algorithms sort their keys on disk beyond it"},
    [ANONKIT_OPT_FCACHE] =
        {"fcache", 0, opt_set_fcache, 0, "N",
         "rothko-t: frequency groups held at once (default: as many as fit)"},
    [ANONKIT_OPT_BLOCK_SIZE] =
        {"block-size", 0, opt_set_block_size, 0, "SIZE",
         "rothko-t/-s: bytes per read and write of spill files (default 256K)"},
    [ANONKIT_OPT_TMPDIR] =
        {"tmpdir", ANONKIT_OPTF_PATH | AK_OPTF_JSON_TEXT, opt_set_text, offsetof(anonkit_job, tmpdir), "DIR",
         "where spill files (rothko-t/-s, hilbert/idistance --memory) and the\n"
         "copy of standard input go (default $TMPDIR)"},
    [ANONKIT_OPT_PREVIOUS] =
        {"previous", ANONKIT_OPTF_PATH | ANONKIT_OPTF_LIST, opt_set_previous, 0, "FILE",
         "an earlier release (repeat for several: star join)"},
    [ANONKIT_OPT_X] =
        {"x", ANONKIT_OPTF_LIST, opt_set_names, offsetof(anonkit_job, x_attrs), "A,B,...",
         "X: attributes of any release; a name in several\n"
         "releases names all its copies"},
    [ANONKIT_OPT_Y] =
        {"y", ANONKIT_OPTF_LIST, opt_set_names, offsetof(anonkit_job, y_attrs), "C,...",
         "Y: attributes of one release each"},
    [ANONKIT_OPT_ANONYMITY] =
        {"anonymity", 0, opt_set_anonymity, 0, "K",
         "(X,Y)-anonymity: every x co-occurs with >= K distinct y"},
    [ANONKIT_OPT_LINKABILITY] =
        {"linkability", 0, opt_set_linkability, 0, "P",
         "(X,Y)-linkability: no y is inferred from x with\n"
         "confidence above P (0 < P <= 1); Y in one release"},
    [ANONKIT_OPT_SENSITIVE_VALUES] =
        {"sensitive-values", ANONKIT_OPTF_LIST, opt_set_names, offsetof(anonkit_job, sensitive_values), "V,..",
         "linkability counts only y holding one of these values"},
    [ANONKIT_OPT_SCORE] =
        {"score", 0, opt_set_score, 0, "S",
         "entropy (default, needs --class) or distortion"},
    [ANONKIT_OPT_INCONSISTENT] =
        {"inconsistent", ANONKIT_OPTF_PATH, opt_set_text, offsetof(anonkit_job, inconsistent), "FILE",
         "lines ATTR,VALUE,ATTR,VALUE: values (and all their\n"
         "specializations) that cannot belong to one person"},
    [ANONKIT_OPT_BITS] =
        {"bits", 0, opt_set_bits, 0, "B",
         "1-D algorithms: Hilbert grid bits per QI (default 12)"},
    [ANONKIT_OPT_CENTERS] =
        {"centers", 0, opt_set_centers, 0, "C",
         "iDistance: k-means centres on a 10% sample (default 512)"},
    [ANONKIT_OPT_KL_LEVEL] =
        {"kl-level", 0, opt_set_kl_level, 0, "I",
         "with --sensitive: KL-divergence between the original's and\n"
         "the published datacube of COUNT(*) WHERE SA = v GROUP BY\n"
         "every I QIs, uniform inside each published box ([Ghinita07] §6.3)"},
    [ANONKIT_OPT_SUPPRESSION] =
        {"suppression", 0, opt_set_suppression, 0, "F",
         "incognito: rows of failing classes may be suppressed ('*'\n"
         "in every QI, counted) up to F of the table (default 0);\n"
         "local: the rows no generalization can publish, up to F"},
    [ANONKIT_OPT_INCOGNITO_VARIANT] =
        {"incognito-variant", AK_OPTF_JSON_TEXT, opt_set_incognito_variant, 0, "V",
         "cube (default), optimal (the chosen node only),\n"
         "exhaustive, super-roots, basic, or the baselines\n"
         "binary-search, bottom-up, bottom-up-norollup"},
    [ANONKIT_OPT_CHOOSE] =
        {"choose", AK_OPTF_JSON_TEXT, opt_set_choose, 0, "M",
         "incognito: publish the anonymous node of least gcp\n"
         "(default), height or dm (suppressed rows fully\n"
         "generalized), or k-minimal: the k-minimal node of least gcp"},
    [ANONKIT_OPT_ALPHA] =
        {"alpha", 0, opt_set_alpha, 0, "A",
         "rothko-s: significance of the split tests (default 0.05)"},
    [ANONKIT_OPT_TEST] =
        {"test", AK_OPTF_JSON_TEXT, opt_set_test, 0, "T",
         "rothko-s: hypothesis (default) or naive (the sample's own counts)"},
    [ANONKIT_OPT_SAMPLE_SIZE] =
        {"sample-size", 0, opt_set_sample_size, 0, "N",
         "rothko-s: rows of the largest sample (default: what --memory holds)"},
    [ANONKIT_OPT_GROWTH_DEPTH] =
        {"growth-depth", 0, opt_set_growth_depth, 0, "D",
         "rothko-s: repartition when the grown tree is D deep\n"
         "(default: when its partitions would fit in memory)"},
    [ANONKIT_OPT_CLASS_ERROR] =
        {"class-error", AK_OPTF_JSON_TEXT, opt_set_text, offsetof(anonkit_job, class_error), "COL",
         "classification error ([Wang06] §6): a C4.5 decision tree for\n"
         "COL grown on the training rows of PUBLISHED over its QIs\n"
         "(each published label a category; a numeric value or\n"
         "interval is its midpoint), its error on the testing rows;\n"
         "the rows are told apart by one of:"},
    [ANONKIT_OPT_TRAIN_ROWS] =
        {"train-rows", 0, opt_set_train_rows, 0, "N",
         "the first N rows of PUBLISHED train, the others test\n"
         "(publish with --keep-order to keep the input's order)"},
    [ANONKIT_OPT_SPLIT_COLUMN] =
        {"split-column", AK_OPTF_JSON_TEXT, opt_set_text, offsetof(anonkit_job, split_column), "COL",
         "a column holding train or test in every row (other\n"
         "columns are published as they are, so any row order)"},
    [ANONKIT_OPT_T] =
        {"t", 0, opt_set_t, 0, "T",
         "t-closeness ([Li07]): the Earth Mover's Distance between every\n"
         "class's sensitive distribution and the table's is at most T"},
    [ANONKIT_OPT_T_DISTANCE] =
        {"t-distance", AK_OPTF_JSON_TEXT, opt_set_t_distance, 0, "D",
         "ground distance of t-closeness: equal, ordered (numeric\n"
         "values) or hierarchical (--hierarchy SENSITIVE=FILE); default:\n"
         "hierarchical with a hierarchy, ordered when numeric, else equal"},
    [ANONKIT_OPT_DELTA_DISCLOSURE] =
        {"delta-disclosure", 0, opt_set_delta_disclosure, 0, "D",
         "delta-disclosure privacy ([Brickell08]): every class holds every\n"
         "sensitive value with a share within a factor e^D of the table's"},
    [ANONKIT_OPT_BETA] =
        {"beta", 0, opt_set_beta, 0, "B",
         "beta-likeness ([Cao12]): no sensitive value's share in a class\n"
         "exceeds its share p in the table by more than B*p"},
    [ANONKIT_OPT_BETA_VARIANT] =
        {"beta-variant", AK_OPTF_JSON_TEXT, opt_set_beta_variant, 0, "V",
         "basic (default) or enhanced (bound min(B, -ln p))"},
    [ANONKIT_OPT_PUBLISHED] =
        {"published", ANONKIT_OPTF_FLAG, opt_set_risk_flag, offsetof(anonkit_job, risk.published), NULL,
         "the file is published: classes are its rows with equal\n"
         "published QI values, as anonkit check forms them"},
    [ANONKIT_OPT_POPULATION] =
        {"population", ANONKIT_OPTF_PATH | AK_OPTF_JSON_TEXT, opt_set_text, offsetof(anonkit_job, risk.population), "FILE",
         "a population table holding the sample, same QI columns:\n"
         "its class sizes give the journalist risk"},
    [ANONKIT_OPT_POPULATION_SIZE] =
        {"population-size", 0, opt_set_population_size, 0, "N",
         "size of the population the table was sampled from\n"
         "(population uniques, individual risk, uniqueness=R)"},
    [ANONKIT_OPT_SAMPLING_FRACTION] =
        {"sampling-fraction", 0, opt_set_sampling_fraction, 0, "F",
         "or: the table's share of the population, in (0, 1]"},
    [ANONKIT_OPT_WEIGHT] =
        {"weight", AK_OPTF_JSON_TEXT, opt_set_text, offsetof(anonkit_job, risk.weight), "COL",
         "sampling-weight column (positive numbers): the individual\n"
         "risk estimates each class's population size by its weights"},
    [ANONKIT_OPT_THRESHOLD] =
        {"threshold", 0, opt_set_threshold, 0, "R",
         "records at risk: those whose risk is above R (default 0.2)"},
    [ANONKIT_OPT_SUDA] =
        {"suda", 0, opt_set_suda, 0, "M",
         "SUDA2: minimal sample uniques of up to M QIs, per record\n"
         "SUDA and DIS-SUDA scores"},
    [ANONKIT_OPT_JSON] =
        {"json", ANONKIT_OPTF_PATH | AK_OPTF_JSON_TEXT, opt_set_text, offsetof(anonkit_job, risk.json), "FILE",
         "write the measures as JSON to FILE (only on success)"},
    [ANONKIT_OPT_ACHIEVED] =
        {"achieved", ANONKIT_OPTF_FLAG, opt_set_risk_flag, offsetof(anonkit_job, risk.achieved), NULL,
         "print the parameters the file achieves: largest k; with\n"
         "--sensitive the largest distinct, entropy and probabilistic l,\n"
         "the least c of recursive (c,l) at each l, the least variance"},
    [ANONKIT_OPT_MAX_RISK] =
        {"max-risk", AK_OPTF_JSON_TEXT, opt_set_max_risk, 0, "KIND=R",
         "re-identification risk at most R: highest=R (every algorithm;\n"
         "k = ceil(1/R)); incognito also average=R (average prosecutor\n"
         "risk) and uniqueness=R (population uniques, see docs/risk.md)"},
    [ANONKIT_OPT_QUERY] =
        {"query", AK_OPTF_JSON_TEXT, opt_set_text, offsetof(anonkit_job, query), "SQL",
         "read the rows of this SELECT (a postgresql:// or sqlite:\n"
         "input) instead of its ?table="},
    [ANONKIT_OPT_REPLACE] =
        {"replace", ANONKIT_OPTF_FLAG, opt_set_int_flag, offsetof(anonkit_job, replace), NULL,
         "a table output (postgresql://, sqlite:) replaces an\n"
         "existing table of its name (else that is refused)"},
    [ANONKIT_OPT_USE_CODES] =
        {"use-codes", ANONKIT_OPTF_FLAG, opt_set_int_flag, offsetof(anonkit_job, use_codes), NULL,
         "read the codes of SPSS/Stata value labels, not the labels"},
    [ANONKIT_OPT_MISSING] =
        {"missing", ANONKIT_OPTF_LIST | ANONKIT_OPTF_REPLACE | AK_OPTF_JSON_TEXT, opt_set_names,
         offsetof(anonkit_job, missing), "T,...",
         "tokens that stand for a missing value, besides the empty\n"
         "cell (docs/hierarchies.md)"},
    [ANONKIT_OPT_INTERVAL_FORMAT] =
        {"interval-format", AK_OPTF_JSON_TEXT, opt_set_interval_format, 0, "F",
         "generalized numbers as range (default: 30-39, -5 - -3)\n"
         "or bracket ([30, 39])"},
    [ANONKIT_OPT_COLUMN] =
        {"column", AK_OPTF_JSON_TEXT, opt_set_text, offsetof(anonkit_job, hbuild.column), "COL",
         "hierarchy: the column to build a hierarchy for"},
    [ANONKIT_OPT_INTERVAL] =
        {"interval", AK_OPTF_JSON_TEXT, opt_set_text, offsetof(anonkit_job, hbuild.interval), "W",
         "hierarchy: intervals of width W"},
    [ANONKIT_OPT_FANOUT] =
        {"fanout", AK_OPTF_JSON_TEXT, opt_set_text, offsetof(anonkit_job, hbuild.fanout), "F,...",
         "hierarchy: groups of F of the level below, one per level"},
    [ANONKIT_OPT_MIN] =
        {"min", AK_OPTF_JSON_TEXT, opt_set_text, offsetof(anonkit_job, hbuild.min), "X",
         "hierarchy --interval: intervals start at X; below it one\n"
         "open-ended range"},
    [ANONKIT_OPT_MAX] =
        {"max", AK_OPTF_JSON_TEXT, opt_set_text, offsetof(anonkit_job, hbuild.max), "X",
         "hierarchy --interval: from X up one open-ended range"},
    [ANONKIT_OPT_QUANTILES] =
        {"quantiles", AK_OPTF_JSON_TEXT, opt_set_text, offsetof(anonkit_job, hbuild.quantiles), "N,F,...",
         "hierarchy: N intervals of equal frequency, then groups\n"
         "of F per level"},
    [ANONKIT_OPT_MASK] =
        {"mask", ANONKIT_OPTF_FLAG, opt_set_flag, offsetof(anonkit_job, hbuild.mask), NULL,
         "hierarchy: mask codes of equal length from the right,\n"
         "one character ('*') per level"},
    [ANONKIT_OPT_LEVELS] =
        {"levels", AK_OPTF_JSON_TEXT, opt_set_text, offsetof(anonkit_job, hbuild.levels), "N",
         "hierarchy --mask: mask at most N characters"},
    [ANONKIT_OPT_DATE] =
        {"date", AK_OPTF_JSON_TEXT, opt_set_text, offsetof(anonkit_job, hbuild.date), "L,...",
         "hierarchy: levels of an ISO-8601 date column, fine to coarse:\n"
         "minute,hour,day,month,quarter,year,decade,century"},
    [ANONKIT_OPT_ORDER] =
        {"order", AK_OPTF_JSON_TEXT, opt_set_text, offsetof(anonkit_job, hbuild.order), "A,B,...",
         "hierarchy: the categories in order, grouped by --fanout"},
    [ANONKIT_OPT_FLAT] =
        {"flat", ANONKIT_OPTF_FLAG, opt_set_flag, offsetof(anonkit_job, hbuild.flat), NULL,
         "hierarchy: every value directly under '*'"},
    [ANONKIT_OPT_PREVIEW] =
        {"preview", ANONKIT_OPTF_FLAG, opt_set_flag, offsetof(anonkit_job, hbuild.preview), NULL,
         "hierarchy: print the distinct labels per level, write nothing"},
    [ANONKIT_OPT_HTML] =
        {"html", ANONKIT_OPTF_PATH | AK_OPTF_JSON_TEXT, opt_set_text, offsetof(anonkit_job, html), "FILE",
         "self-contained HTML release report: checksums, settings,\n"
         "the verifier's verdict on the written file, information\n"
         "loss, risk, charts (docs/report.md)"},
    [ANONKIT_OPT_ORIGINAL] =
        {"original", ANONKIT_OPTF_PATH | AK_OPTF_JSON_TEXT, opt_set_text, offsetof(anonkit_job, original), "FILE",
         "report: the original the published file was made from"},
    [ANONKIT_OPT_PROGRESS] =
        {"progress", ANONKIT_OPTF_FLAG, opt_set_flag, offsetof(anonkit_job, progress_on), NULL,
         "show the progress line on stderr even when it is not a\n"
         "terminal (one line per update there)"},
    [ANONKIT_OPT_NO_PROGRESS] =
        {"no-progress", ANONKIT_OPTF_FLAG, opt_set_flag, offsetof(anonkit_job, progress_off), NULL,
         "never show the progress line (default: shown on a terminal\n"
         "once a run passes one second)"},
};

const ak_option_desc *ak_option_desc_of(anonkit_option o)
{
    return (unsigned)o < ANONKIT_OPT__COUNT ? &options[o] : NULL;
}

const char *anonkit_option_name(anonkit_option option)
{
    const ak_option_desc *d = ak_option_desc_of(option);
    return d ? d->name : "?";
}

unsigned anonkit_option_flags(anonkit_option option)
{
    const ak_option_desc *d = ak_option_desc_of(option);
    return d ? d->flags & (ANONKIT_OPTF_FLAG | ANONKIT_OPTF_LIST | ANONKIT_OPTF_PATH | ANONKIT_OPTF_REPLACE) : 0;
}

const char *anonkit_option_arg(anonkit_option option)
{
    const ak_option_desc *d = ak_option_desc_of(option);
    return d ? d->arg : NULL;
}

const char *anonkit_option_help(anonkit_option option)
{
    const ak_option_desc *d = ak_option_desc_of(option);
    return d ? d->help : NULL;
}

anonkit_option anonkit_option_find(const char *name)
{
    for (int i = 0; name && i < ANONKIT_OPT__COUNT; i++)
        if (!strcmp(options[i].name, name)) return (anonkit_option)i;
    return ANONKIT_OPT__COUNT;
}

/* anonkit_job_set in the C numeric locale. */
static int job_set(anonkit_job *job, anonkit_option option, const char *value)
{
    if (!job) return ANONKIT_E_USAGE;
    if (!value) return job_usage_error(job, "--%s needs a value", anonkit_option_name(option));
    const ak_option_desc *d = ak_option_desc_of(option);
    if (!d) return job_usage_error(job, "unknown option");
    const int rc = d->set(job, d, value);
    /* (how a run is shown is no setting of the release) */
    const int shown_only = option == ANONKIT_OPT_PROGRESS || option == ANONKIT_OPT_NO_PROGRESS;
    if (rc == ANONKIT_OK && *value && !shown_only) { /* remembered for the release report's configuration */
        char *text = malloc(strlen(d->name) + strlen(value) + 4);
        if (!text) return job_out_of_memory(job);
        sprintf(text, "--%s %s", d->name, value);
        const int pushed = strlist_push(&job->settings, text, strlen(text));
        free(text);
        if (pushed != 0) return job_out_of_memory(job);
    }
    return rc;
}

int anonkit_job_set(anonkit_job *job, anonkit_option option, const char *value)
{
    ak_c_numeric scope;
    ak_c_numeric_enter(&scope);
    const int rc = job_set(job, option, value);
    ak_c_numeric_leave(&scope);
    return rc;
}
