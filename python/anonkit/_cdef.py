"""The C declarations of include/anonkit/anonkit.h for cffi's ABI mode.

Generated from the header (comments, preprocessor lines and ANONKIT_API
removed); tests/test_anonkit.py checks that every function the header
declares is here. Regenerate with python/tools/gen_cdef.py after changing the
header.
"""

CDEF = """
unsigned long anonkit_version_number(void);
const char *anonkit_version_string(void);
enum {
    ANONKIT_OK = 0,
    ANONKIT_E_INPUT = -1,
    ANONKIT_E_USAGE = -2,
    ANONKIT_E_INELIGIBLE = -3,
    ANONKIT_E_IO = -4,
    ANONKIT_E_NOMEM = -5,
    ANONKIT_E_VIOLATION = -6,
    ANONKIT_E_INTERNAL = -7,
    ANONKIT_E_CANCELLED = -8
};
const char *anonkit_strerror(int status);
typedef enum anonkit_option {
    ANONKIT_OPT_INPUT = 0,
    ANONKIT_OPT_OUTPUT = 1,
    ANONKIT_OPT_QI = 2,
    ANONKIT_OPT_SENSITIVE = 3,
    ANONKIT_OPT_IDENTIFIER = 4,
    ANONKIT_OPT_HIERARCHY = 5,
    ANONKIT_OPT_NUMERIC = 6,
    ANONKIT_OPT_K = 7,
    ANONKIT_OPT_L = 8,
    ANONKIT_OPT_L_VARIANT = 9,
    ANONKIT_OPT_C = 10,
    ANONKIT_OPT_ALGORITHM = 11,
    ANONKIT_OPT_REPORT = 12,
    ANONKIT_OPT_SEED = 13,
    ANONKIT_OPT_KEEP_ORDER = 14,
    ANONKIT_OPT_DELIMITER = 15,
    ANONKIT_OPT_WEIGHTS = 16,
    ANONKIT_OPT_JOB = 17,
    ANONKIT_OPT_THREADS = 18,
    ANONKIT_OPT_SPLIT = 19,
    ANONKIT_OPT_CLASS = 20,
    ANONKIT_OPT_TARGET = 21,
    ANONKIT_OPT_MIN_GAIN = 22,
    ANONKIT_OPT_VARIANCE = 23,
    ANONKIT_OPT_PUBLISH = 24,
    ANONKIT_OPT_RULES = 25,
    ANONKIT_OPT_MEMORY = 26,
    ANONKIT_OPT_FCACHE = 27,
    ANONKIT_OPT_BLOCK_SIZE = 28,
    ANONKIT_OPT_TMPDIR = 29,
    ANONKIT_OPT_PREVIOUS = 30,
    ANONKIT_OPT_X = 31,
    ANONKIT_OPT_Y = 32,
    ANONKIT_OPT_ANONYMITY = 33,
    ANONKIT_OPT_LINKABILITY = 34,
    ANONKIT_OPT_SENSITIVE_VALUES = 35,
    ANONKIT_OPT_SCORE = 36,
    ANONKIT_OPT_INCONSISTENT = 37,
    ANONKIT_OPT_BITS = 38,
    ANONKIT_OPT_CENTERS = 39,
    ANONKIT_OPT_KL_LEVEL = 40,
    ANONKIT_OPT_SUPPRESSION = 41,
    ANONKIT_OPT_INCOGNITO_VARIANT = 42,
    ANONKIT_OPT_CHOOSE = 43,
    ANONKIT_OPT_ALPHA = 44,
    ANONKIT_OPT_TEST = 45,
    ANONKIT_OPT_SAMPLE_SIZE = 46,
    ANONKIT_OPT_GROWTH_DEPTH = 47,
    ANONKIT_OPT_CLASS_ERROR = 48,
    ANONKIT_OPT_TRAIN_ROWS = 49,
    ANONKIT_OPT_SPLIT_COLUMN = 50,
    ANONKIT_OPT_T = 51,
    ANONKIT_OPT_T_DISTANCE = 52,
    ANONKIT_OPT_DELTA_DISCLOSURE = 53,
    ANONKIT_OPT_BETA = 54,
    ANONKIT_OPT_BETA_VARIANT = 55,
    ANONKIT_OPT_PUBLISHED = 56,
    ANONKIT_OPT_POPULATION = 57,
    ANONKIT_OPT_POPULATION_SIZE = 58,
    ANONKIT_OPT_SAMPLING_FRACTION = 59,
    ANONKIT_OPT_WEIGHT = 60,
    ANONKIT_OPT_THRESHOLD = 61,
    ANONKIT_OPT_SUDA = 62,
    ANONKIT_OPT_JSON = 63,
    ANONKIT_OPT_ACHIEVED = 64,
    ANONKIT_OPT_MAX_RISK = 65,
    ANONKIT_OPT_QUERY = 66,
    ANONKIT_OPT_REPLACE = 67,
    ANONKIT_OPT_USE_CODES = 68,
    ANONKIT_OPT_MISSING = 69,
    ANONKIT_OPT_INTERVAL_FORMAT = 70,
    ANONKIT_OPT_COLUMN = 71,
    ANONKIT_OPT_INTERVAL = 72,
    ANONKIT_OPT_FANOUT = 73,
    ANONKIT_OPT_MIN = 74,
    ANONKIT_OPT_MAX = 75,
    ANONKIT_OPT_QUANTILES = 76,
    ANONKIT_OPT_MASK = 77,
    ANONKIT_OPT_LEVELS = 78,
    ANONKIT_OPT_DATE = 79,
    ANONKIT_OPT_ORDER = 80,
    ANONKIT_OPT_FLAT = 81,
    ANONKIT_OPT_PREVIEW = 82,
    ANONKIT_OPT_HTML = 83,
    ANONKIT_OPT_ORIGINAL = 84,
    ANONKIT_OPT_PROGRESS = 85,
    ANONKIT_OPT_NO_PROGRESS = 86,
    ANONKIT_OPT__COUNT = 87
} anonkit_option;
typedef struct anonkit_job anonkit_job;
typedef struct anonkit_result anonkit_result;
anonkit_job *anonkit_job_create(void);
void anonkit_job_free(anonkit_job *job);
int anonkit_job_set(anonkit_job *job, anonkit_option option, const char *value);
typedef enum anonkit_phase {
    ANONKIT_PHASE_READING = 0,
    ANONKIT_PHASE_ENCODING = 1,
    ANONKIT_PHASE_PARTITIONING = 2,
    ANONKIT_PHASE_REPARTITION = 3,
    ANONKIT_PHASE_WRITING = 4
} anonkit_phase;
typedef struct anonkit_progress {
    int phase;
    const char *phase_name;
    uint64_t done;
    uint64_t total;
    double fraction;
    unsigned pass, passes;
    double elapsed;
    double phase_elapsed;
} anonkit_progress;
typedef int (*anonkit_progress_fn)(void *ctx, const anonkit_progress *p);
void anonkit_job_set_progress(anonkit_job *job, anonkit_progress_fn fn, void *ctx);
int anonkit_job_progress_wanted(const anonkit_job *job);
const char *anonkit_option_name(anonkit_option option);
anonkit_option anonkit_option_find(const char *name);
enum {
    ANONKIT_OPTF_FLAG = 1,
    ANONKIT_OPTF_LIST = 2,
    ANONKIT_OPTF_PATH = 4,
    ANONKIT_OPTF_REPLACE = 8
};
unsigned anonkit_option_flags(anonkit_option option);
const char *anonkit_option_arg(anonkit_option option);
const char *anonkit_option_help(anonkit_option option);
const char *anonkit_errmsg(const anonkit_job *job);
int anonkit_anonymize(anonkit_job *job, anonkit_result **out_result );
int anonkit_check(anonkit_job *job, const char *published_path, anonkit_result **out_result );
int anonkit_metrics(anonkit_job *job, const char *original_path, const char *published_path,
                                anonkit_result **out_result );
int anonkit_sequential(anonkit_job *job, anonkit_result **out_result );
int anonkit_risk(anonkit_job *job, anonkit_result **out_result );
int anonkit_report(anonkit_job *job, const char *published_path, anonkit_result **out_result );
void anonkit_result_free(anonkit_result *result);
uint64_t anonkit_result_rows_read(const anonkit_result *result);
uint64_t anonkit_result_rows_published(const anonkit_result *result);
uint64_t anonkit_result_rows_suppressed(const anonkit_result *result);
uint64_t anonkit_result_classes(const anonkit_result *result);
uint64_t anonkit_result_rows_outside(const anonkit_result *result);
const char *anonkit_result_summary(const anonkit_result *result);
const char *anonkit_result_json(const anonkit_result *result);
int anonkit_generate(const char *output_path, uint64_t rows, const uint64_t *seed, const char *format,
                                 const char *salary, uint64_t *out_seed , char *errbuf, size_t errsize);
int anonkit_recode(anonkit_job *job, anonkit_result **out_result );
int anonkit_hierarchy(anonkit_job *job, anonkit_result **out_result );
int anonkit_hierarchies(anonkit_job *const *jobs, size_t count, anonkit_result **out_results );
typedef struct anonkit_table anonkit_table;
enum { ANONKIT_COLUMN_DOUBLE = 1, ANONKIT_COLUMN_INT64 = 2, ANONKIT_COLUMN_TEXT = 3 };
anonkit_table *anonkit_table_create(void);
void anonkit_table_free(anonkit_table *table);
const char *anonkit_table_errmsg(const anonkit_table *table);
int anonkit_table_add_double(anonkit_table *table, const char *name, const double *values,
                                         const uint8_t *missing, uint64_t n);
int anonkit_table_add_int64(anonkit_table *table, const char *name, const int64_t *values,
                                        const uint8_t *missing, uint64_t n);
int anonkit_table_add_text(anonkit_table *table, const char *name, const int64_t *offsets,
                                       const char *bytes, const uint8_t *missing, uint64_t n);
int anonkit_table_add_text_codes(anonkit_table *table, const char *name, const int32_t *codes, uint64_t n,
                                             const int64_t *offsets, const char *bytes, uint32_t count);
int anonkit_table_add_double_ref(anonkit_table *table, const char *name, const double *values,
                                             const uint8_t *missing, uint64_t n);
int anonkit_table_add_int64_ref(anonkit_table *table, const char *name, const int64_t *values,
                                            const uint8_t *missing, uint64_t n);
int anonkit_table_append_row(anonkit_table *table, const char *const *fields, const size_t *lengths,
                                         uint32_t count);
uint32_t anonkit_table_columns(const anonkit_table *table);
uint64_t anonkit_table_rows(const anonkit_table *table);
const char *anonkit_table_column_name(const anonkit_table *table, uint32_t column);
int anonkit_table_column_kind(const anonkit_table *table, uint32_t column);
const double *anonkit_table_column_double(const anonkit_table *table, uint32_t column);
const int64_t *anonkit_table_column_int64(const anonkit_table *table, uint32_t column);
int anonkit_table_column_text(const anonkit_table *table, uint32_t column,
                                          const int64_t **offsets , const char **bytes );
int anonkit_table_column_codes(const anonkit_table *table, uint32_t column, const int32_t **codes ,
                                           uint32_t *count , const int64_t **offsets ,
                                           const char **bytes );
const uint8_t *anonkit_table_column_missing(const anonkit_table *table, uint32_t column);
int anonkit_job_set_input_table(anonkit_job *job, const anonkit_table *table);
int anonkit_job_set_hierarchy_table(anonkit_job *job, const char *column, const anonkit_table *table);
int anonkit_job_add_previous_table(anonkit_job *job, const anonkit_table *table);
int anonkit_job_set_output_table(anonkit_job *job);
int anonkit_check_table(anonkit_job *job, const anonkit_table *published,
                                    anonkit_result **out_result );
int anonkit_metrics_table(anonkit_job *job, const anonkit_table *original,
                                      const anonkit_table *published, anonkit_result **out_result );
const anonkit_table *anonkit_result_table(const anonkit_result *result);
anonkit_table *anonkit_result_take_table(anonkit_result *result);
"""
