/* anonkit.h — the public API of libanonkit.
 *
 * Ownership rule: every object you create with anonkit_*_create() or receive
 * through an OUT parameter is yours and is released with its anonkit_*_free(),
 * which accepts NULL; every const char * the library returns stays owned by the
 * object it came from and lives as long as that object.
 *
 * A job holds all settings of one run. Settings are given as text through one
 * call, anonkit_job_set(job, ANONKIT_OPT_..., "value"), so that the command
 * line, JSON job files and programs share one vocabulary. Every fallible call
 * returns ANONKIT_OK (0) or a negative ANONKIT_E_* status and leaves a message
 * in anonkit_errmsg(job).
 *
 * Threads: a job, and every result it gave, is used by one thread at a time
 * (calls on it are not synchronized); distinct jobs may run concurrently on
 * any threads, as the library keeps no mutable global state. A run may start
 * worker threads of its own (ANONKIT_OPT_THREADS); they end before the call
 * returns. Functions that take no job (anonkit_strerror, anonkit_option_*,
 * anonkit_generate) may be called from any thread at any time. */
#ifndef ANONKIT_H
#define ANONKIT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define ANONKIT_API __attribute__((visibility("default")))
#else
#define ANONKIT_API
#endif

/* ANONKIT_VERSION_MAJOR, _MINOR, _PATCH, _NUMBER and ANONKIT_VERSION (text). */
#include "anonkit/version.h"

/* The version of the library the program runs with, as ANONKIT_VERSION_NUMBER
 * and as ANONKIT_VERSION: they differ from the macros when the program was
 * compiled with the headers of another version. */
ANONKIT_API unsigned long anonkit_version_number(void);
ANONKIT_API const char *anonkit_version_string(void);

/* Status codes. */
enum {
    ANONKIT_OK = 0,
    ANONKIT_E_INPUT = -1,      /* bad input data or hierarchy */
    ANONKIT_E_USAGE = -2,      /* bad or missing parameter */
    ANONKIT_E_INELIGIBLE = -3, /* the whole table cannot satisfy the privacy model */
    ANONKIT_E_IO = -4,         /* a file could not be read or written */
    ANONKIT_E_NOMEM = -5,      /* out of memory */
    ANONKIT_E_VIOLATION = -6,  /* anonkit_check: a class violates the model */
    ANONKIT_E_INTERNAL = -7,   /* a bug: please report it */
    ANONKIT_E_CANCELLED = -8   /* the progress callback asked to stop (anonkit_job_set_progress) */
};

/* A short name for a status code ("bad input", ...). */
ANONKIT_API const char *anonkit_strerror(int status);

/* The settings of a job. Values are text; lists are comma separated. */
typedef enum anonkit_option {
    ANONKIT_OPT_INPUT = 0,       /* input CSV path, "-" for stdin */
    ANONKIT_OPT_OUTPUT = 1,      /* output CSV path, "-" for stdout */
    ANONKIT_OPT_QI = 2,          /* quasi-identifier columns: "age,zip,sex" (appends) */
    ANONKIT_OPT_SENSITIVE = 3,   /* the sensitive column */
    ANONKIT_OPT_IDENTIFIER = 4,  /* identifier columns, dropped from the output (appends) */
    ANONKIT_OPT_HIERARCHY = 5,   /* "attr=path" of an ARX-format hierarchy (one per call) */
    ANONKIT_OPT_NUMERIC = 6,     /* QIs to treat as numeric even though they have a hierarchy */
    ANONKIT_OPT_K = 7,           /* k of k-anonymity (default 1 = off) */
    ANONKIT_OPT_L = 8,           /* l of l-diversity (default off) */
    ANONKIT_OPT_L_VARIANT = 9,   /* distinct|entropy|recursive|probabilistic, comma list */
    ANONKIT_OPT_C = 10,          /* c of recursive (c,l)-diversity */
    ANONKIT_OPT_ALGORITHM = 11,  /* mondrian | rothko-t | rothko-s | incognito | hilbert | hilbert-fast | idistance | idistance-fast | local */
    ANONKIT_OPT_REPORT = 12,     /* path of the JSON report */
    ANONKIT_OPT_SEED = 13,       /* seed of the output shuffle */
    ANONKIT_OPT_KEEP_ORDER = 14, /* "1": keep input row order */
    ANONKIT_OPT_DELIMITER = 15,  /* field delimiter, one character (default ',') */
    ANONKIT_OPT_WEIGHTS = 16,    /* NCP weights "age=2,sex=1" */
    ANONKIT_OPT_JOB = 17,        /* a JSON job file: loads all its settings */
    ANONKIT_OPT_THREADS = 18,    /* worker threads; 0 (default) = one per online core */
    ANONKIT_OPT_SPLIT = 19,      /* split criterion: median (default) | infogain | regression */
    ANONKIT_OPT_CLASS = 20,      /* class label column (InfoGain; conditional entropy) */
    ANONKIT_OPT_TARGET = 21,     /* numeric target column (Regression; RMSE) */
    ANONKIT_OPT_MIN_GAIN = 22,   /* InfoGain: below this gain (bits) continue with Median (default 0.01) */
    ANONKIT_OPT_VARIANCE = 23,   /* variance diversity: least variance of the numeric sensitive value */
    ANONKIT_OPT_PUBLISH = 24,    /* numeric QIs as: generalize (default) | range | mean */
    ANONKIT_OPT_RULES = 25,      /* path of the recoding rules written by anonymize, read by recode */
    ANONKIT_OPT_MEMORY = 26,     /* out of core: memory budget, "256M" (K/M/G suffixes) */
    ANONKIT_OPT_FCACHE = 27,     /* rothko-t: frequency groups held at once (0 = as many as fit) */
    ANONKIT_OPT_BLOCK_SIZE = 28, /* out of core: bytes per read/write of spill files (default 256K) */
    ANONKIT_OPT_TMPDIR = 29,     /* where unnamed spill files, sort runs and the copy of stdin go (default TMPDIR) */
    /* sequential releases ([Wang06]): anonkit_sequential */
    ANONKIT_OPT_PREVIOUS = 30,   /* an earlier release CSV (appends) */
    ANONKIT_OPT_X = 31,          /* X of (X,Y)-privacy: attribute names of any release (appends) */
    ANONKIT_OPT_Y = 32,          /* Y of (X,Y)-privacy (appends) */
    ANONKIT_OPT_ANONYMITY = 33,  /* k of (X,Y)-anonymity */
    ANONKIT_OPT_LINKABILITY = 34, /* p of (X,Y)-linkability, 0 < p <= 1 */
    ANONKIT_OPT_SENSITIVE_VALUES = 35, /* linkability: the values of Y that count (appends) */
    ANONKIT_OPT_SCORE = 36,      /* InfoGain of Score: entropy (default, needs --class) | distortion */
    ANONKIT_OPT_INCONSISTENT = 37, /* file of value pairs that cannot belong to one person */
    ANONKIT_OPT_BITS = 38,       /* 1-D algorithms: Hilbert bits per QI (default 12) */
    ANONKIT_OPT_CENTERS = 39,    /* iDistance: k-means centres (default 512) */
    ANONKIT_OPT_KL_LEVEL = 40,   /* metrics: KL-divergence of the datacube at this lattice level ([Ghinita07] §6.3) */
    ANONKIT_OPT_SUPPRESSION = 41, /* incognito, check: largest share of rows that may be suppressed (default 0) */
    ANONKIT_OPT_INCOGNITO_VARIANT = 42, /* optimal|exhaustive|basic|super-roots|cube|binary-search|bottom-up|bottom-up-norollup */
    ANONKIT_OPT_CHOOSE = 43,     /* incognito: the published anonymous node has the least gcp (default) | height | dm; k-minimal: the k-minimal node of least gcp */
    ANONKIT_OPT_ALPHA = 44,      /* rothko-s: significance of the hypothesis tests (default 0.05) */
    ANONKIT_OPT_TEST = 45,       /* rothko-s: hypothesis (default) | naive */
    ANONKIT_OPT_SAMPLE_SIZE = 46, /* rothko-s: rows of the largest sample (default: as many as --memory holds) */
    ANONKIT_OPT_GROWTH_DEPTH = 47, /* rothko-s: repartition when the grown tree is this deep (default: when memory is full) */
    /* metrics: classification error of a decision tree ([Wang06] §6) */
    ANONKIT_OPT_CLASS_ERROR = 48, /* class column the tree predicts */
    ANONKIT_OPT_TRAIN_ROWS = 49, /* the first N published rows train the tree, the others test it */
    ANONKIT_OPT_SPLIT_COLUMN = 50, /* or: a column whose value is train or test in every row */
    /* attribute disclosure ([Li07], [Brickell08], [Cao12]) */
    ANONKIT_OPT_T = 51,          /* t-closeness: EMD of every class's sensitive distribution to the table's <= t */
    ANONKIT_OPT_T_DISTANCE = 52, /* equal | ordered | hierarchical (default: by the sensitive column) */
    ANONKIT_OPT_DELTA_DISCLOSURE = 53, /* δ-disclosure privacy: |ln(p(class,s)/p(table,s))| <= δ */
    ANONKIT_OPT_BETA = 54,       /* β-likeness: relative increase of any sensitive value's share <= β */
    ANONKIT_OPT_BETA_VARIANT = 55, /* basic (default) | enhanced */
    /* re-identification risk (docs/risk.md): anonkit_risk, check --achieved, anonymize --max-risk */
    ANONKIT_OPT_PUBLISHED = 56,  /* risk: the file is published: classes from its published values */
    ANONKIT_OPT_POPULATION = 57, /* risk: a population table with the same QIs (journalist risk) */
    ANONKIT_OPT_POPULATION_SIZE = 58, /* risk, --max-risk uniqueness: the population's size N */
    ANONKIT_OPT_SAMPLING_FRACTION = 59, /* or: the sample's share of the population, in (0, 1] */
    ANONKIT_OPT_WEIGHT = 60,     /* risk: sampling-weight column (individual risk) */
    ANONKIT_OPT_THRESHOLD = 61,  /* risk: records at risk are those above it (default 0.2) */
    ANONKIT_OPT_SUDA = 62,       /* risk: SUDA2 minimal sample uniques up to this many QIs */
    ANONKIT_OPT_JSON = 63,       /* risk: path of the JSON document */
    ANONKIT_OPT_ACHIEVED = 64,   /* check: report the parameters the file achieves */
    ANONKIT_OPT_MAX_RISK = 65,   /* anonymize: average=R | highest=R | uniqueness=R (comma list) */
    /* sources and sinks other than CSV (docs/sources.md) */
    ANONKIT_OPT_QUERY = 66, /* a SELECT whose rows are the input, instead of ?table= (PostgreSQL, SQLite) */
    ANONKIT_OPT_REPLACE = 67, /* a table output may replace an existing table */
    ANONKIT_OPT_USE_CODES = 68, /* SPSS/Stata value labels: read the codes instead of the labels */
    ANONKIT_OPT_MISSING = 69,    /* tokens that stand for a missing value besides the empty cell: "NULL,NA,?" (appends) */
    ANONKIT_OPT_INTERVAL_FORMAT = 70, /* generalized numbers as: range (default, "30-39") | bracket ("[30, 39]") */
    ANONKIT_OPT_COLUMN = 71,     /* hierarchy: the column to build a hierarchy for */
    ANONKIT_OPT_INTERVAL = 72,   /* hierarchy: fixed-width intervals of this width */
    ANONKIT_OPT_FANOUT = 73,     /* hierarchy: groups per level above the first: "2,2,2" */
    ANONKIT_OPT_MIN = 74,        /* hierarchy --interval: lower bound (values below it: one open-ended range) */
    ANONKIT_OPT_MAX = 75,        /* hierarchy --interval: upper bound (values from it up: one open-ended range) */
    ANONKIT_OPT_QUANTILES = 76,  /* hierarchy: equal-frequency intervals, then fan-outs: "4,2" */
    ANONKIT_OPT_MASK = 77,       /* hierarchy: mask codes of equal length from the right */
    ANONKIT_OPT_LEVELS = 78,     /* hierarchy --mask: characters masked at the top level */
    ANONKIT_OPT_DATE = 79,       /* hierarchy: date levels "day,month,quarter,year,decade" */
    ANONKIT_OPT_ORDER = 80,      /* hierarchy: the categories in order "a,b,c" (with --fanout) */
    ANONKIT_OPT_FLAT = 81,       /* hierarchy: value -> "*" */
    ANONKIT_OPT_PREVIEW = 82,    /* hierarchy: print the level sizes, write nothing */
    /* the release report (docs/report.md) */
    ANONKIT_OPT_HTML = 83,       /* path of the self-contained HTML release report (anonymize, report) */
    ANONKIT_OPT_ORIGINAL = 84,   /* report: the original CSV the published file was made from */
    /* progress on long runs: the command line's progress line (anonkit_job_set_progress) */
    ANONKIT_OPT_PROGRESS = 85,    /* "true": draw the progress line even when stderr is not a terminal */
    ANONKIT_OPT_NO_PROGRESS = 86, /* "true": never draw it */
    ANONKIT_OPT__COUNT = 87 /* the number of options; not an option */
} anonkit_option;

typedef struct anonkit_job anonkit_job;
typedef struct anonkit_result anonkit_result;

ANONKIT_API anonkit_job *anonkit_job_create(void);
ANONKIT_API void anonkit_job_free(anonkit_job *job);

/* Sets one option. List options (ANONKIT_OPTF_LIST: qi, identifier, numeric,
 * hierarchy, previous, x, y, sensitive-values) append; the empty text "" empties
 * the list. For ANONKIT_OPT_JOB reads every setting of the JSON file (relative
 * paths in it are taken relative to the file's folder). */
ANONKIT_API int anonkit_job_set(anonkit_job *job, anonkit_option option, const char *value);


/* ---- Progress and cancelling ----
 *
 * A run reports its progress through a callback set on the job, phase by
 * phase: reading (rows read of the rows the input's size suggests), encoding,
 * partitioning (rows in finished classes), repartition (out of core: pass n of
 * about m), writing (rows written). Within a phase `done` never goes down, and
 * the phase's last report has done == total. */
typedef enum anonkit_phase {
    ANONKIT_PHASE_READING = 0,
    ANONKIT_PHASE_ENCODING = 1,
    ANONKIT_PHASE_PARTITIONING = 2,
    ANONKIT_PHASE_REPARTITION = 3,
    ANONKIT_PHASE_WRITING = 4
} anonkit_phase;

typedef struct anonkit_progress {
    int phase;              /* anonkit_phase */
    const char *phase_name; /* "reading", "encoding", "partitioning", "repartition", "writing" */
    uint64_t done;          /* rows done in this phase */
    uint64_t total;         /* rows the phase expects (reading: an estimate from the bytes read so far) */
    double fraction;        /* share of the phase done, 0..1 (reading: of the input's bytes); -1: unknown */
    unsigned pass, passes;  /* repartition: pass `pass` of about `passes` (an estimate; 0 once the run
                               goes past it, and in other phases) */
    double elapsed;         /* seconds since the run began */
    double phase_elapsed;   /* seconds since this phase began */
} anonkit_progress;

/* The progress callback: returns 0 to go on, anything else to cancel the run.
 * `p` lives only during the call. A cancelled verb returns
 * ANONKIT_E_CANCELLED and leaves every output path as it was (no output, no
 * temporary file; spill files are unnamed and gone), as after a signal. */
typedef int (*anonkit_progress_fn)(void *ctx, const anonkit_progress *p);

/* Sets the job's progress callback (fn NULL: none) and its context, which
 * the caller keeps alive while the job runs. Threads: the callback is called
 * only on the thread that called the verb, never on a worker thread, and
 * never while a library lock is held, so it may call anything but a verb on
 * the same job; workers see a cancel through an atomic flag at their next
 * check (every block of input, every partition, every lattice node). Calls
 * come at phase changes and at most about every 50 ms in between (a long
 * step without a check, such as a helper thread's share of a partitioning,
 * may leave a longer gap). Used by anonkit_anonymize (every algorithm),
 * anonkit_recode (rows read) and anonkit_metrics (the original's rows read);
 * the other verbs do not call it yet. The job keeps fn and ctx until they are
 * replaced; a job may run again after a cancel. */
ANONKIT_API void anonkit_job_set_progress(anonkit_job *job, anonkit_progress_fn fn, void *ctx);

/* What the job's ANONKIT_OPT_PROGRESS / ANONKIT_OPT_NO_PROGRESS say: 1 when
 * a progress line was asked for, -1 when it was refused, 0 when neither was
 * given (the command line then draws it only when stderr is a terminal). */
ANONKIT_API int anonkit_job_progress_wanted(const anonkit_job *job);

/* The option's long name as used on the command line and in job files ("?"
 * when option is not one). */
ANONKIT_API const char *anonkit_option_name(anonkit_option option);

/* The option called `name` (its long name), or ANONKIT_OPT__COUNT when none is. */
ANONKIT_API anonkit_option anonkit_option_find(const char *name);

/* What kind of value an option takes (anonkit_option_flags). */
enum {
    ANONKIT_OPTF_FLAG = 1,   /* on the command line it takes no value: giving it sets "true" */
    ANONKIT_OPTF_LIST = 2,   /* every setting appends to a list; "" empties the list */
    ANONKIT_OPTF_PATH = 4,   /* a file or folder; a job file's relative paths start at its folder */
    ANONKIT_OPTF_REPLACE = 8 /* a list that the command line replaces rather than extends when a job file set it */
};

/* The ANONKIT_OPTF_* flags of an option (0 when option is not one). */
ANONKIT_API unsigned anonkit_option_flags(anonkit_option option);

/* The placeholder of the option's value in help texts ("FILE", "K", "A,B,...");
 * NULL for an ANONKIT_OPTF_FLAG option or when option is not one. */
ANONKIT_API const char *anonkit_option_arg(anonkit_option option);

/* The option's help: lines separated by '\n', without a final one (NULL when
 * option is not one). */
ANONKIT_API const char *anonkit_option_help(anonkit_option option);

/* The message of the last failure on this job, "FILE:LINE: what is wrong". */
ANONKIT_API const char *anonkit_errmsg(const anonkit_job *job);

/* Every verb but anonkit_generate returns its results in one anonkit_result
 * that it creates: on ANONKIT_OK *out_result is a new result (out_result may
 * be NULL when the result is not wanted), released with
 * anonkit_result_free; on any other status *out_result is NULL and
 * anonkit_errmsg(job) says why. Which verb fills which field (a getter
 * returns 0 or NULL for a field its verb does not fill, and for a NULL result):
 *
 *   getter          anonymize  check  metrics  recode  sequential
 *   rows_read           x        x       x       x         x
 *   rows_published      x        x       x       x         x
 *   rows_suppressed     x        x       x                 x
 *   classes             x        x       x                 x
 *   rows_outside                                 x
 *   summary             x                                  x
 *   json                x                x                 x
 */

/* Reads, anonymizes and writes: rows read, published and suppressed, classes,
 * the human summary and the JSON report. On failure nothing is left at the
 * output paths, and paths that were there before are untouched. */
ANONKIT_API int anonkit_anonymize(anonkit_job *job, anonkit_result **out_result /* OUT */);

/* Proves or refutes the job's privacy model on a published file: groups its
 * rows by their published QI values and tests every group. Returns ANONKIT_OK,
 * ANONKIT_E_VIOLATION (message names the first violating class) or an error.
 * Independent of every algorithm. With a suppression limit
 * (ANONKIT_OPT_SUPPRESSION, a share of the rows) the rows whose QIs are all "*"
 * are suppressed rows when there are at most floor(share * rows) of them;
 * otherwise they must satisfy the model as a class. Every other class must
 * satisfy the model. The result holds the rows of the file (rows_read), the
 * suppressed ones, the others (rows_published) and the classes. With
 * ANONKIT_OPT_ACHIEVED the result also holds, as its JSON and summary, the
 * parameters the file achieves (largest k and l, least c and variance;
 * docs/risk.md). */
ANONKIT_API int anonkit_check(anonkit_job *job, const char *published_path, anonkit_result **out_result /* OUT */);

/* Information-loss metrics of a published file against its original: the
 * result's JSON text (dm, cavg, gcp, ncp per attribute, distortion; with
 * ANONKIT_OPT_CLASS_ERROR the classification error), and its rows, published
 * and suppressed rows and classes. */
ANONKIT_API int anonkit_metrics(anonkit_job *job, const char *original_path, const char *published_path,
                                anonkit_result **out_result /* OUT */);

/* Sequential release ([Wang06]): generalizes the current release ANONKIT_OPT_INPUT so
 * that its join with the earlier releases (ANONKIT_OPT_PREVIOUS) satisfies
 * (X,Y)-anonymity or (X,Y)-linkability, and writes it to ANONKIT_OPT_OUTPUT
 * (and the report to ANONKIT_OPT_REPORT). The result holds the counts (classes:
 * the partitions), the human summary and the JSON report. When the most
 * general release already violates the requirement returns
 * ANONKIT_E_INELIGIBLE and writes nothing. */
ANONKIT_API int anonkit_sequential(anonkit_job *job, anonkit_result **out_result /* OUT */);

/* Re-identification risk of the table ANONKIT_OPT_INPUT ("-" for stdin;
 * docs/risk.md): classes formed by its QI values (with ANONKIT_OPT_PUBLISHED
 * exactly as anonkit_check forms them), the class-size distribution,
 * prosecutor, journalist and marketer risk, sample uniques; with a population
 * size or sampling fraction the estimated population uniques (Zayatz,
 * Pitman, SNB, the Dankar et al. rule) and the individual and global risk;
 * with ANONKIT_OPT_SUDA the SUDA2 scores; with a sensitive column the
 * parameters the file achieves. The result holds the counts, the human
 * summary and the JSON text (also written to ANONKIT_OPT_JSON, atomically). */
ANONKIT_API int anonkit_risk(anonkit_job *job, anonkit_result **out_result /* OUT */);
/* The release report of a table published earlier (docs/report.md):
 * measures published_path against its original (ANONKIT_OPT_ORIGINAL) with the
 * job's settings (QIs, hierarchies, model, suppression), proves it with the
 * verifier, and writes the self-contained HTML document to ANONKIT_OPT_HTML,
 * as `anonymize --html` would, without anonymizing again. The result holds
 * the rows, published and suppressed rows, classes and the JSON the document's
 * figures come from. A file that violates the model is documented as such
 * (the document says so) and returns ANONKIT_E_VIOLATION after writing it.
 * On any other failure nothing is left at the HTML path. */
ANONKIT_API int anonkit_report(anonkit_job *job, const char *published_path, anonkit_result **out_result /* OUT */);

/* The result of a verb. */
ANONKIT_API void anonkit_result_free(anonkit_result *result);
ANONKIT_API uint64_t anonkit_result_rows_read(const anonkit_result *result);
ANONKIT_API uint64_t anonkit_result_rows_published(const anonkit_result *result);
ANONKIT_API uint64_t anonkit_result_rows_suppressed(const anonkit_result *result);
ANONKIT_API uint64_t anonkit_result_classes(const anonkit_result *result);
/* anonkit_recode: rows whose value lies outside the values its rule's class had. */
ANONKIT_API uint64_t anonkit_result_rows_outside(const anonkit_result *result);
/* The human summary (several lines) and the JSON text (report or metrics).
 * The JSON of anonkit_risk is built on the first anonkit_result_json call
 * (a run that prints only the summary never builds it): that first call may
 * return NULL when out of memory, and must not be made by two threads on one
 * result at the same time; later calls return the same text. */
ANONKIT_API const char *anonkit_result_summary(const anonkit_result *result);
ANONKIT_API const char *anonkit_result_json(const anonkit_result *result);

/* Synthetic data: writes `rows` records of the generator of [LeFevre07] Figure 7 (salary,
 * commission, age, elevel, car, zipcode, hvalue, hyears, loan, c2, c7, r7, r10) to
 * output_path ("-" for stdout) in `format` "csv" (a header line, then the records;
 * NULL means csv) or "binary" (a tuple file, docs/tuple-format.md), with salary
 * "uniform" (NULL: Figure 7) or "normal" (mean 85000, variance 1.1e8: [LeFevre07] §5.6). Streams: memory
 * does not grow with rows. The same *seed gives the same bytes; seed NULL picks a
 * random one. *out_seed (when not NULL) receives the seed used. On failure returns a
 * negative status, leaves the message in errbuf and nothing at output_path.
 * It takes no job (it may be called from any thread at any time), so it
 * returns no anonkit_result: the seed is its only result. */
ANONKIT_API int anonkit_generate(const char *output_path, uint64_t rows, const uint64_t *seed, const char *format,
                                 const char *salary, uint64_t *out_seed /* OUT */, char *errbuf, size_t errsize);

/* Recodes new data with the rules that `anonkit_anonymize` wrote (ANONKIT_OPT_RULES;
 * docs/rules-format.md): reads ANONKIT_OPT_INPUT ("-" for stdin) and writes
 * ANONKIT_OPT_OUTPUT ("-" for stdout) exactly as anonymize publishes — identifiers
 * dropped, every QI replaced by the published text of the rule whose region holds
 * the row, other columns copied, rows in input order — with the delimiter stored in
 * the rules. Privacy is guaranteed only for the data the rules were built on.
 * The result holds the rows recoded (rows_read = rows_published) and those with a
 * value that lies in its rule's region but outside the values its class had, so
 * that the published text does not cover it (rows_outside). On failure nothing
 * is left at the output. */
ANONKIT_API int anonkit_recode(anonkit_job *job, anonkit_result **out_result /* OUT */);

/* Builds a generalization hierarchy for column ANONKIT_OPT_COLUMN of
 * ANONKIT_OPT_INPUT ("-" for stdin) with one builder (ANONKIT_OPT_INTERVAL,
 * _QUANTILES, _MASK, _DATE, _ORDER or _FLAT; docs/hierarchies.md) and writes it
 * in ARX format to ANONKIT_OPT_OUTPUT ("-" for stdout), or with
 * ANONKIT_OPT_PREVIEW writes nothing. The summary gives the distinct labels
 * per level; rows_read the data rows read. */
ANONKIT_API int anonkit_hierarchy(anonkit_job *job, anonkit_result **out_result /* OUT */);

/* Builds the hierarchies of count jobs, each set up as for anonkit_hierarchy
 * (its own column, builder, output, --missing), from ONE read of their common
 * ANONKIT_OPT_INPUT (every job names the same input and delimiter). Every
 * output is written to its temporary file and all are committed together
 * (synced, then renamed): either all are published or, when any column
 * fails, none is touched. Outputs must differ and none may be "-".
 * out_results[i] gets job i's result (its summary and rows_read); on
 * failure all are NULL and the error is on jobs[0], its message naming the
 * column when it is another job's. */
ANONKIT_API int anonkit_hierarchies(anonkit_job *const *jobs, size_t count, anonkit_result **out_results /* OUT */);

/* ---- Tables in memory (docs/python.md) ----
 *
 * An anonkit_table holds a table column by column: numbers as double or
 * int64 arrays, text as Arrow's layout (rows + 1 int64 offsets into one byte
 * buffer, UTF-8, value i being bytes[offsets[i] .. offsets[i+1])), each column
 * with an optional missing mask of one byte per row (non-zero: missing;
 * NULL: none missing; a NaN double is missing too). An empty text that is
 * not missing reads back as missing, as an empty CSV cell does.
 *
 * Lifetime: the arrays given to anonkit_table_add_double, _add_int64,
 * _add_text and _append_row are copied during the call; the table keeps no
 * pointer to them. anonkit_table_add_double_ref and _add_int64_ref BORROW
 * the values instead (no copy): they must stay valid and unchanged until the
 * table is freed (the missing mask is still copied). A table given to a job
 * as its input (anonkit_job_set_input_table) is read directly by the run,
 * without a copy: it must stay valid and unchanged from that call until the
 * job's last run on it has returned (or the job is freed or given another
 * input); the library only reads it. The arrays a getter returns belong to
 * the table and live until anonkit_table_free.
 *
 * Inside the library there is no CSV text in between: the loader and the
 * writer read a table's rows as fields (the CSV reader's table backend,
 * numbers as their shortest text), and a run with anonkit_job_set_output_table
 * builds the published table column by column (generalized columns in
 * dictionary form: anonkit_table_column_codes); anonkit_recode reads and
 * builds tables the same way, anonkit_check_table verifies a table as it
 * is, anonkit_risk reads an input table and anonkit_metrics_table both its
 * tables so, and hierarchy tables are loaded from memory. Verbs and settings
 * that need a file (see docs/python.md: sequential, hierarchy,
 * previous-release tables, `--hierarchy COL=auto`, HTML reports, the
 * out-of-core algorithms) read a private unnamed CSV copy of the table made
 * for that run. */

typedef struct anonkit_table anonkit_table;

/* The kinds of column (anonkit_table_column_kind). */
enum { ANONKIT_COLUMN_DOUBLE = 1, ANONKIT_COLUMN_INT64 = 2, ANONKIT_COLUMN_TEXT = 3 };

/* An empty table (no columns, no rows); NULL when out of memory. */
ANONKIT_API anonkit_table *anonkit_table_create(void);
ANONKIT_API void anonkit_table_free(anonkit_table *table);
/* The message of the last failure of a call on this table. */
ANONKIT_API const char *anonkit_table_errmsg(const anonkit_table *table);

/* Adds a column of n rows (every column of a table has the same number of
 * rows; names are distinct). values, offsets, bytes and missing are copied
 * during the call. offsets of a text column has n + 1 entries and may start
 * past 0 (a slice). Returns ANONKIT_OK or a negative status (message in
 * anonkit_table_errmsg). */
ANONKIT_API int anonkit_table_add_double(anonkit_table *table, const char *name, const double *values,
                                         const uint8_t *missing, uint64_t n);
ANONKIT_API int anonkit_table_add_int64(anonkit_table *table, const char *name, const int64_t *values,
                                        const uint8_t *missing, uint64_t n);
ANONKIT_API int anonkit_table_add_text(anonkit_table *table, const char *name, const int64_t *offsets,
                                       const char *bytes, const uint8_t *missing, uint64_t n);
/* A text column in dictionary form: row r is value codes[r] (-1: missing) of the `count` values given as
 * offsets (count + 1, may start past 0) and bytes; codes and values are copied. The way to hand over a
 * categorical (or any factorized column) without a text per row. */
ANONKIT_API int anonkit_table_add_text_codes(anonkit_table *table, const char *name, const int32_t *codes, uint64_t n,
                                             const int64_t *offsets, const char *bytes, uint32_t count);
/* anonkit_table_add_double and _add_int64 without a copy of the values: the
 * table borrows them (valid and unchanged until anonkit_table_free; never
 * written or freed by the library). No row can be appended to a table that
 * borrows. */
ANONKIT_API int anonkit_table_add_double_ref(anonkit_table *table, const char *name, const double *values,
                                             const uint8_t *missing, uint64_t n);
ANONKIT_API int anonkit_table_add_int64_ref(anonkit_table *table, const char *name, const int64_t *values,
                                            const uint8_t *missing, uint64_t n);

/* Row by row: add the columns with n = 0 first, then append rows of `count`
 * fields (one per column); field NULL is missing; lengths NULL means every
 * field is NUL-terminated. A field of a numeric column is parsed as a number. */
ANONKIT_API int anonkit_table_append_row(anonkit_table *table, const char *const *fields, const size_t *lengths,
                                         uint32_t count);

/* Reading a table, column by column. Out-of-range columns give 0 or NULL. */
ANONKIT_API uint32_t anonkit_table_columns(const anonkit_table *table);
ANONKIT_API uint64_t anonkit_table_rows(const anonkit_table *table);
ANONKIT_API const char *anonkit_table_column_name(const anonkit_table *table, uint32_t column);
ANONKIT_API int anonkit_table_column_kind(const anonkit_table *table, uint32_t column); /* ANONKIT_COLUMN_* */
/* The values (rows of them) of a double or int64 column; NULL for another kind. */
ANONKIT_API const double *anonkit_table_column_double(const anonkit_table *table, uint32_t column);
ANONKIT_API const int64_t *anonkit_table_column_int64(const anonkit_table *table, uint32_t column);
/* A text column's offsets (rows + 1, starting at 0) and bytes; ANONKIT_E_USAGE for another kind. For a
 * column in dictionary form the first call makes this row-by-row form (ANONKIT_E_NOMEM when it cannot);
 * that first call must not run concurrently with other calls on the same table. */
ANONKIT_API int anonkit_table_column_text(const anonkit_table *table, uint32_t column,
                                          const int64_t **offsets /* OUT */, const char **bytes /* OUT */);
/* A text column in dictionary form (the generalized columns of a published table, and a text column
 * copied through from an input column given in that form): codes[r] (rows of them) is row r's index
 * among the *count distinct values (offsets: *count + 1, starting at 0, into bytes), -1 when missing;
 * in a published table every value is used by some row. ANONKIT_E_USAGE for a column not in that form
 * (use anonkit_table_column_text). */
ANONKIT_API int anonkit_table_column_codes(const anonkit_table *table, uint32_t column, const int32_t **codes /* OUT */,
                                           uint32_t *count /* OUT */, const int64_t **offsets /* OUT */,
                                           const char **bytes /* OUT */);
/* The missing mask (one byte per row), or NULL when no value of the column is missing. */
ANONKIT_API const uint8_t *anonkit_table_column_missing(const anonkit_table *table, uint32_t column);

/* The job's input (instead of ANONKIT_OPT_INPUT) is `table`, borrowed: it
 * must stay valid and unchanged until the job's last run on it returns (see
 * Lifetime above). Messages name it "the input table". */
ANONKIT_API int anonkit_job_set_input_table(anonkit_job *job, const anonkit_table *table);
/* The hierarchy of `column` (as ANONKIT_OPT_HIERARCHY) is `table`: one row
 * per value, its column 0 the value and the others its generalizations, most
 * general last (the rows of an ARX hierarchy file, no header). The job
 * keeps a copy made during the call (the caller may free `table` then),
 * named "table:hierarchy:<column>" in --hierarchy and in messages. */
ANONKIT_API int anonkit_job_set_hierarchy_table(anonkit_job *job, const char *column, const anonkit_table *table);
/* Appends an earlier release (as ANONKIT_OPT_PREVIOUS) given as a table. */
ANONKIT_API int anonkit_job_add_previous_table(anonkit_job *job, const anonkit_table *table);
/* anonkit_anonymize, anonkit_recode and anonkit_sequential publish into a new
 * table returned by anonkit_result_table instead of the output file. Its
 * columns are those of the published file: a column whose every present
 * value is a plain integer is int64, else one whose every present value is a
 * number written as its shortest text is double, else text — every value's
 * text is the published file's. */
ANONKIT_API int anonkit_job_set_output_table(anonkit_job *job);
/* anonkit_check and anonkit_metrics on tables instead of files. */
ANONKIT_API int anonkit_check_table(anonkit_job *job, const anonkit_table *published,
                                    anonkit_result **out_result /* OUT */);
ANONKIT_API int anonkit_metrics_table(anonkit_job *job, const anonkit_table *original,
                                      const anonkit_table *published, anonkit_result **out_result /* OUT */);
/* The published table of a run with anonkit_job_set_output_table (owned by
 * the result, NULL for any other run). */
ANONKIT_API const anonkit_table *anonkit_result_table(const anonkit_result *result);
/* Takes the published table out of the result: it is then the caller's (anonkit_table_free). */
ANONKIT_API anonkit_table *anonkit_result_take_table(anonkit_result *result);

#ifdef __cplusplus
}
#endif
#endif
