/* test_job.c — tests of the job object (src/api/job.c) and its option table
 * (src/api/options.c): every option set through anonkit_job_set, bad values
 * rejected with a message naming the option, lists appended and emptied by "",
 * the option table's names, flags and help, and JSON job files with relative
 * paths; and runs under a locale whose decimal point is a comma publishing the
 * same bytes as under the C locale (anonymize, check, metrics, sequential). The job's fields are read (never written)
 * to see what a setting did. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>
#include <locale.h>

#include "anonkit/anonkit.h"
#include "api/algorithm.h"
#include "api/job.h"
#include "api/options.h"
#include "testutil.h"

/* A value every option accepts and one it rejects (NULL: it takes any text). */
typedef struct option_case {
    anonkit_option option;
    const char *good, *bad;
} option_case;

static const option_case cases[] = {
    {ANONKIT_OPT_INPUT, "in.csv", NULL},
    {ANONKIT_OPT_OUTPUT, "out.csv", NULL},
    {ANONKIT_OPT_QI, "age,zip", "age,,zip"},
    {ANONKIT_OPT_SENSITIVE, "disease", NULL},
    {ANONKIT_OPT_IDENTIFIER, "name", ",name"},
    {ANONKIT_OPT_HIERARCHY, "zip=zip.csv", "zip"},
    {ANONKIT_OPT_NUMERIC, "age", "age,"},
    {ANONKIT_OPT_K, "5", "0"},
    {ANONKIT_OPT_L, "2.5", "0.5"},
    {ANONKIT_OPT_L_VARIANT, "entropy,recursive", "pretty"},
    {ANONKIT_OPT_C, "0.5", "0"},
    {ANONKIT_OPT_ALGORITHM, "rothko-s", "picasso"},
    {ANONKIT_OPT_REPORT, "r.json", NULL},
    {ANONKIT_OPT_SEED, "18446744073709551615", "-1"},
    {ANONKIT_OPT_KEEP_ORDER, "yes", "maybe"},
    {ANONKIT_OPT_DELIMITER, "tab", "ab"},
    {ANONKIT_OPT_WEIGHTS, "age=2,zip=0.5", "age"},
    {ANONKIT_OPT_THREADS, "4", "1025"},
    {ANONKIT_OPT_SPLIT, "infogain", "mean"},
    {ANONKIT_OPT_CLASS, "income", NULL},
    {ANONKIT_OPT_TARGET, "salary", NULL},
    {ANONKIT_OPT_MIN_GAIN, "0.05", "-0.1"},
    {ANONKIT_OPT_VARIANCE, "1e3", "-1"},
    {ANONKIT_OPT_PUBLISH, "mean", "median"},
    {ANONKIT_OPT_RULES, "rules.csv", NULL},
    {ANONKIT_OPT_MEMORY, "64M", "512"},
    {ANONKIT_OPT_FCACHE, "16", "1048577"},
    {ANONKIT_OPT_BLOCK_SIZE, "64K", "100"},
    {ANONKIT_OPT_TMPDIR, "/tmp", NULL},
    {ANONKIT_OPT_PREVIOUS, "t2.csv", NULL},
    {ANONKIT_OPT_X, "Name,Job", "Name,"},
    {ANONKIT_OPT_Y, "Disease", ",Disease"},
    {ANONKIT_OPT_ANONYMITY, "3", "0"},
    {ANONKIT_OPT_LINKABILITY, "0.4", "1.5"},
    {ANONKIT_OPT_SENSITIVE_VALUES, "HIV", "HIV,,Flu"},
    {ANONKIT_OPT_SCORE, "distortion", "gain"},
    {ANONKIT_OPT_INCONSISTENT, "pairs.csv", NULL},
    {ANONKIT_OPT_BITS, "31", "32"},
    {ANONKIT_OPT_CENTERS, "1000000", "1000001"},
    {ANONKIT_OPT_KL_LEVEL, "2", "65"},
    {ANONKIT_OPT_SUPPRESSION, "0.1", "1.1"},
    {ANONKIT_OPT_INCOGNITO_VARIANT, "bottom-up", "top-down"},
    {ANONKIT_OPT_CHOOSE, "dm", "gcp2"},
    {ANONKIT_OPT_ALPHA, "0.01", "1"},
    {ANONKIT_OPT_TEST, "naive", "exact"},
    {ANONKIT_OPT_SAMPLE_SIZE, "1000", "0"},
    {ANONKIT_OPT_GROWTH_DEPTH, "64", "65"},
    {ANONKIT_OPT_CLASS_ERROR, "income", NULL},
    {ANONKIT_OPT_TRAIN_ROWS, "100", "0"},
    {ANONKIT_OPT_SPLIT_COLUMN, "part", NULL},
    {ANONKIT_OPT_T, "0.15", "1.01"},
    {ANONKIT_OPT_T_DISTANCE, "ordered", "euclid"},
    {ANONKIT_OPT_DELTA_DISCLOSURE, "1.2", "0"},
    {ANONKIT_OPT_BETA, "0.5", "-1"},
    {ANONKIT_OPT_BETA_VARIANT, "enhanced", "strong"},
    {ANONKIT_OPT_PUBLISHED, "true", "maybe"},
    {ANONKIT_OPT_POPULATION, "population.csv", NULL},
    {ANONKIT_OPT_POPULATION_SIZE, "100000", "0.5"},
    {ANONKIT_OPT_SAMPLING_FRACTION, "0.01", "1.5"},
    {ANONKIT_OPT_WEIGHT, "w", NULL},
    {ANONKIT_OPT_THRESHOLD, "0.2", "1.2"},
    {ANONKIT_OPT_SUDA, "3", "0"},
    {ANONKIT_OPT_JSON, "risk.json", NULL},
    {ANONKIT_OPT_ACHIEVED, "true", "perhaps"},
    {ANONKIT_OPT_MAX_RISK, "average=0.05,highest=0.2", "worst=0.1"},
    {ANONKIT_OPT_QUERY, "SELECT * FROM t", NULL},
    {ANONKIT_OPT_REPLACE, "yes", "maybe"},
    {ANONKIT_OPT_USE_CODES, "no", "perhaps"},
    {ANONKIT_OPT_MISSING, "NULL,NA,?", "NA,,?"},
    {ANONKIT_OPT_INTERVAL_FORMAT, "bracket", "brackets"},
    {ANONKIT_OPT_COLUMN, "age", NULL},
    {ANONKIT_OPT_INTERVAL, "5", NULL},
    {ANONKIT_OPT_FANOUT, "2,2", NULL},
    {ANONKIT_OPT_MIN, "0", NULL},
    {ANONKIT_OPT_MAX, "100", NULL},
    {ANONKIT_OPT_QUANTILES, "4,2", NULL},
    {ANONKIT_OPT_MASK, "true", "maybe"},
    {ANONKIT_OPT_LEVELS, "3", NULL},
    {ANONKIT_OPT_DATE, "day,month,year", NULL},
    {ANONKIT_OPT_ORDER, "a,b,c", NULL},
    {ANONKIT_OPT_FLAT, "true", "maybe"},
    {ANONKIT_OPT_PREVIEW, "true", "maybe"},
    {ANONKIT_OPT_HTML, "release.html", NULL},
    {ANONKIT_OPT_ORIGINAL, "original.csv", NULL},
    {ANONKIT_OPT_PROGRESS, "true", "maybe"},
    {ANONKIT_OPT_NO_PROGRESS, "false", "perhaps"},
};
enum { NCASES = sizeof cases / sizeof cases[0] };

/* Every option but --job has a case above, and every option is in the table
 * under a unique name with a help text and a placeholder (unless a flag). */
static void test_option_table(void **state)
{
    (void)state;
    assert_int_equal(NCASES, ANONKIT_OPT__COUNT - 1);
    for (int o = 0; o < ANONKIT_OPT__COUNT; o++) {
        const char *name = anonkit_option_name((anonkit_option)o);
        assert_non_null(name);
        assert_int_equal(anonkit_option_find(name), o);
        const char *help = anonkit_option_help((anonkit_option)o);
        assert_non_null(help);
        assert_true(help[0] != '\0' && help[strlen(help) - 1] != '\n');
        const unsigned flags = anonkit_option_flags((anonkit_option)o);
        if (flags & ANONKIT_OPTF_FLAG) assert_null(anonkit_option_arg((anonkit_option)o));
        else assert_non_null(anonkit_option_arg((anonkit_option)o));
        assert_true(o == ANONKIT_OPT_JOB || o == (int)cases[o < ANONKIT_OPT_JOB ? o : o - 1].option);
    }
    assert_string_equal(anonkit_option_name(ANONKIT_OPT__COUNT), "?");
    assert_int_equal(anonkit_option_find("no-such-option"), ANONKIT_OPT__COUNT);
    assert_int_equal(anonkit_option_flags(ANONKIT_OPT_KEEP_ORDER), ANONKIT_OPTF_FLAG);
    assert_int_equal(anonkit_option_flags(ANONKIT_OPT_QI), ANONKIT_OPTF_LIST | ANONKIT_OPTF_REPLACE);
    assert_int_equal(anonkit_option_flags(ANONKIT_OPT_X), ANONKIT_OPTF_LIST);
    assert_int_equal(anonkit_option_flags(ANONKIT_OPT_PREVIOUS), ANONKIT_OPTF_LIST | ANONKIT_OPTF_PATH);
    assert_int_equal(anonkit_option_flags(ANONKIT_OPT_INPUT), ANONKIT_OPTF_PATH);
    assert_int_equal(anonkit_option_flags(ANONKIT_OPT_K), 0);
}

/* Every good value is taken; every bad one is refused with a usage error
 * whose message names the option (and the job keeps working). */
static void test_set_and_reject(void **state)
{
    (void)state;
    for (size_t i = 0; i < NCASES; i++) {
        anonkit_job *job = anonkit_job_create();
        assert_non_null(job);
        const char *name = anonkit_option_name(cases[i].option);
        if (anonkit_job_set(job, cases[i].option, cases[i].good) != ANONKIT_OK)
            fail_msg("--%s %s refused: %s", name, cases[i].good, anonkit_errmsg(job));
        if (cases[i].bad) {
            assert_int_equal(anonkit_job_set(job, cases[i].option, cases[i].bad), ANONKIT_E_USAGE);
            char want[64];
            snprintf(want, sizeof want, "--%s", name);
            if (!strstr(anonkit_errmsg(job), want)) fail_msg("message for --%s: %s", name, anonkit_errmsg(job));
            if (!strstr(anonkit_errmsg(job), cases[i].bad)) fail_msg("message for --%s: %s", name, anonkit_errmsg(job));
        }
        assert_int_equal(anonkit_job_set(job, cases[i].option, NULL), ANONKIT_E_USAGE);
        assert_non_null(strstr(anonkit_errmsg(job), "needs a value"));
        anonkit_job_free(job);
    }
    anonkit_job *job = anonkit_job_create();
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT__COUNT, "1"), ANONKIT_E_USAGE);
    assert_string_equal(anonkit_errmsg(job), "unknown option");
    assert_int_equal(anonkit_job_set(NULL, ANONKIT_OPT_K, "1"), ANONKIT_E_USAGE);
    anonkit_job_free(job);
}

/* What the settings store, in the job and in each algorithm's own options. */
static void test_values_stored(void **state)
{
    (void)state;
    anonkit_job *job = anonkit_job_create();
    assert_non_null(job);
    assert_int_equal(job->delimiter, ',');
    assert_true(job_algorithm(job) == ak_algorithm_default());
    assert_string_equal(job_algorithm(job)->name, "mondrian");
    const struct {
        anonkit_option o;
        const char *v;
    } set[] = {{ANONKIT_OPT_K, "7"},           {ANONKIT_OPT_L, "2.5"},          {ANONKIT_OPT_C, "3"},
               {ANONKIT_OPT_SEED, "42"},       {ANONKIT_OPT_KEEP_ORDER, "true"}, {ANONKIT_OPT_DELIMITER, "\\t"},
               {ANONKIT_OPT_THREADS, "3"},     {ANONKIT_OPT_MIN_GAIN, "0.25"},  {ANONKIT_OPT_MEMORY, "2K"},
               {ANONKIT_OPT_FCACHE, "9"},      {ANONKIT_OPT_BLOCK_SIZE, "1K"},  {ANONKIT_OPT_ALPHA, "0.125"},
               {ANONKIT_OPT_SAMPLE_SIZE, "77"}, {ANONKIT_OPT_GROWTH_DEPTH, "5"}, {ANONKIT_OPT_BITS, "10"},
               {ANONKIT_OPT_CENTERS, "64"},    {ANONKIT_OPT_KL_LEVEL, "2"},     {ANONKIT_OPT_SUPPRESSION, "0.5"},
               {ANONKIT_OPT_CHOOSE, "height"}, {ANONKIT_OPT_ALGORITHM, "idistance-fast"},
               {ANONKIT_OPT_ANONYMITY, "4"},   {ANONKIT_OPT_TRAIN_ROWS, "12"},  {ANONKIT_OPT_TMPDIR, "/var/tmp"},
               {ANONKIT_OPT_WEIGHTS, "a=2"},   {ANONKIT_OPT_WEIGHTS, "b=0.5"}};
    for (size_t i = 0; i < sizeof set / sizeof set[0]; i++)
        if (anonkit_job_set(job, set[i].o, set[i].v) != ANONKIT_OK) fail_msg("%s", anonkit_errmsg(job));
    assert_int_equal(job->model.k, 7);
    assert_true(job->model.l == 2.5 && job->model.c == 3);
    assert_true(job->seed == 42 && job->seed_set);
    assert_int_equal(job->keep_order, 1);
    assert_int_equal(job->delimiter, '\t');
    assert_int_equal(job->threads, 3);
    assert_true(job->min_gain == 0.25);
    assert_int_equal(job->memory, 2048);
    assert_int_equal(job->rothko.fcache, 9);
    assert_int_equal(job->rothko.block_size, 1024);
    assert_true(job->rothko.alpha == 0.125);
    assert_int_equal(job->rothko.sample_size, 77);
    assert_int_equal(job->rothko.growth_depth, 5);
    assert_string_equal(job->tmpdir, "/var/tmp");
    assert_int_equal(job->onedim.bits, 10);
    assert_int_equal(job->onedim.centers, 64);
    assert_int_equal(job->kl_level, 2);
    assert_true(job->suppression == 0.5);
    assert_int_equal(job->incognito.given, 1 | 4);
    assert_string_equal(job_algorithm(job)->name, "idistance-fast");
    assert_string_equal(job_algorithm(job)->report_key, "onedim");
    assert_int_equal(job->xy.k, 4);
    assert_int_equal(job->xy.kind, XY_ANONYMITY);
    assert_int_equal(job->train_rows, 12);
    assert_int_equal(job->weight_attrs.count, 2);
    assert_true(job->weight_values[0] == 2 && job->weight_values[1] == 0.5);
    /* a refused value leaves the earlier one */
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_K, "x"), ANONKIT_E_USAGE);
    assert_int_equal(job->model.k, 7);
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_KEEP_ORDER, "no"), ANONKIT_OK);
    assert_int_equal(job->keep_order, 0);
    job_set_knob(job, JOB_KNOB_FIRST_SAMPLE_ROWS, 20);
    job_set_knob(job, JOB_KNOB_PIPELINE_MIN_ROWS, 2);
    job_set_knob(job, JOB_KNOB_PARALLEL_MIN_BYTES, 1); /* read in two pieces, the second on a worker thread */
    assert_int_equal(job->rothko.first_sample_rows, 20);
    assert_int_equal(job->rothko.pipeline_min_rows, 2);
    assert_int_equal(job->parallel_min_bytes, 1);
    anonkit_job_free(job);
}

/* Every registered algorithm is accepted by name; an unknown one is refused
 * with the list of the known ones. */
static void test_algorithms(void **state)
{
    (void)state;
    anonkit_job *job = anonkit_job_create();
    char names[256];
    ak_algorithm_names(names, sizeof names);
    assert_string_equal(names, "mondrian, rothko-t, rothko-s, incognito, hilbert, hilbert-fast, idistance, idistance-fast, local");
    for (size_t i = 0; i < ak_algorithm_count(); i++) {
        const ak_algorithm *a = ak_algorithm_at(i);
        assert_true((a->run != NULL) != (a->stream != NULL));
        assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_ALGORITHM, a->name), ANONKIT_OK);
        assert_true(job_algorithm(job) == a);
        assert_true(ak_algorithm_find(a->name) == a);
    }
    assert_null(ak_algorithm_at(ak_algorithm_count()));
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_ALGORITHM, "picasso"), ANONKIT_E_USAGE);
    assert_non_null(strstr(anonkit_errmsg(job), names));
    anonkit_job_free(job);
}

/* The list options append; "" empties them. */
static void test_lists(void **state)
{
    (void)state;
    anonkit_job *job = anonkit_job_create();
    const struct {
        anonkit_option o;
        const strlist *list;
    } lists[] = {{ANONKIT_OPT_QI, &job->qi},         {ANONKIT_OPT_IDENTIFIER, &job->identifiers},
                 {ANONKIT_OPT_NUMERIC, &job->numeric}, {ANONKIT_OPT_X, &job->x_attrs},
                 {ANONKIT_OPT_Y, &job->y_attrs},     {ANONKIT_OPT_SENSITIVE_VALUES, &job->sensitive_values}};
    for (size_t i = 0; i < sizeof lists / sizeof lists[0]; i++) {
        assert_true(anonkit_option_flags(lists[i].o) & ANONKIT_OPTF_LIST);
        assert_int_equal(anonkit_job_set(job, lists[i].o, "a,b"), ANONKIT_OK);
        assert_int_equal(anonkit_job_set(job, lists[i].o, "c"), ANONKIT_OK);
        assert_int_equal(lists[i].list->count, 3);
        assert_string_equal(lists[i].list->items[0], "a");
        assert_string_equal(lists[i].list->items[2], "c");
        assert_int_equal(anonkit_job_set(job, lists[i].o, "a,,b"), ANONKIT_E_USAGE);
        assert_non_null(strstr(anonkit_errmsg(job), "empty name"));
        assert_int_equal(anonkit_job_set(job, lists[i].o, ""), ANONKIT_OK);
        assert_int_equal(lists[i].list->count, 0);
    }
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_PREVIOUS, "a,b.csv"), ANONKIT_OK); /* one path, commas and all */
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_PREVIOUS, "c.csv"), ANONKIT_OK);
    assert_int_equal(job->previous.count, 2);
    assert_string_equal(job->previous.items[0], "a,b.csv");
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_PREVIOUS, ""), ANONKIT_OK);
    assert_int_equal(job->previous.count, 0);
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_HIERARCHY, "age=h/age.csv"), ANONKIT_OK);
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_HIERARCHY, "zip=zip.csv"), ANONKIT_OK);
    assert_int_equal(job->hierarchy_attrs.count, 2);
    assert_string_equal(job->hierarchy_paths.items[0], "h/age.csv");
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_HIERARCHY, "=x.csv"), ANONKIT_E_USAGE);
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_HIERARCHY, ""), ANONKIT_OK);
    assert_int_equal(job->hierarchy_attrs.count + job->hierarchy_paths.count, 0);
    anonkit_job_free(job);
}

/* A job file: every kind of value, paths relative to the file's folder. */
static void test_job_file(void **state)
{
    (void)state;
    const char *dir = tu_mkdtemp();
    char path[4096];
    snprintf(path, sizeof path, "%s", tu_path(dir, "job.json"));
    tu_write_file(path, "{\"input\": \"data/in.csv\", \"output\": \"-\", \"report\": \"/abs/r.json\",\n"
                        " \"rules\": \"rules.csv\", \"tmpdir\": \"spill\", \"previous\": [\"t1.csv\", \"t2.csv\"],\n"
                        " \"inconsistent\": \"pairs.csv\", \"hierarchy\": {\"age\": \"h/age.csv\"},\n"
                        " \"weights\": {\"age\": 2, \"zip\": 0.5}, \"qi\": [\"age\", \"zip\"], \"sensitive\": \"d\",\n"
                        " \"k\": 3, \"alpha\": 0.01, \"keep-order\": true, \"delimiter\": \";\",\n"
                        " \"algorithm\": \"incognito\", \"x\": \"a,b\", \"linkability\": 0.5}\n");
    anonkit_job *job = anonkit_job_create();
    if (anonkit_job_set(job, ANONKIT_OPT_JOB, path) != ANONKIT_OK) fail_msg("%s", anonkit_errmsg(job));
    char want[4200];
    snprintf(want, sizeof want, "%s/data/in.csv", dir);
    assert_string_equal(job->input, want);
    assert_string_equal(job->output, "-");
    assert_string_equal(job->report, "/abs/r.json");
    snprintf(want, sizeof want, "%s/rules.csv", dir);
    assert_string_equal(job->rules, want);
    snprintf(want, sizeof want, "%s/spill", dir);
    assert_string_equal(job->tmpdir, want);
    assert_int_equal(job->previous.count, 2);
    snprintf(want, sizeof want, "%s/t2.csv", dir);
    assert_string_equal(job->previous.items[1], want);
    snprintf(want, sizeof want, "%s/pairs.csv", dir);
    assert_string_equal(job->inconsistent, want);
    snprintf(want, sizeof want, "%s/h/age.csv", dir);
    assert_string_equal(job->hierarchy_attrs.items[0], "age");
    assert_string_equal(job->hierarchy_paths.items[0], want);
    assert_int_equal(job->weight_attrs.count, 2);
    assert_true(job->weight_values[1] == 0.5);
    assert_int_equal(job->qi.count, 2);
    assert_int_equal(job->model.k, 3);
    assert_true(job->rothko.alpha == 0.01);
    assert_int_equal(job->keep_order, 1);
    assert_int_equal(job->delimiter, ';');
    assert_string_equal(job_algorithm(job)->name, "incognito");
    assert_int_equal(job->x_attrs.count, 2);
    assert_true(job->xy.p == 0.5);
    anonkit_job_free(job);

    /* hierarchies as "attr=path" texts, alone or in an array: paths are the
     * job file's too (they were taken from the current folder) */
    tu_write_file(path, "{\"hierarchy\": [\"age=h/age.csv\", \"zip=/abs/zip.csv\"], \"qi\": \"age,zip\"}\n");
    job = anonkit_job_create();
    if (anonkit_job_set(job, ANONKIT_OPT_JOB, path) != ANONKIT_OK) fail_msg("%s", anonkit_errmsg(job));
    assert_int_equal(job->hierarchy_attrs.count, 2);
    snprintf(want, sizeof want, "%s/h/age.csv", dir);
    assert_string_equal(job->hierarchy_attrs.items[0], "age");
    assert_string_equal(job->hierarchy_paths.items[0], want);
    assert_string_equal(job->hierarchy_paths.items[1], "/abs/zip.csv");
    anonkit_job_free(job);
    tu_write_file(path, "{\"hierarchy\": \"age=h/age.csv\", \"qi\": \"age\"}\n");
    job = anonkit_job_create();
    if (anonkit_job_set(job, ANONKIT_OPT_JOB, path) != ANONKIT_OK) fail_msg("%s", anonkit_errmsg(job));
    assert_string_equal(job->hierarchy_paths.items[0], want);
    anonkit_job_free(job);

    /* refusals name the file and the setting */
    const struct {
        const char *text, *message;
    } bad[] = {{"{\"colour\": \"red\"}", "unknown setting 'colour'"},
               {"{\"job\": \"other.json\"}", "unknown setting 'job'"},
               {"{\"qi\": 5}", "the value of 'qi' must be text"},
               {"{\"k\": \"zero\"}", "--k must be a whole number"},
               {"{\"k\": {\"a\": 1}}", "the value of 'k' has the wrong type"},
               {"{\"hierarchy\": {\"age\": 3}}", "hierarchy of 'age' must be a file name"},
               {"{\"weights\": {\"age\": \"x\"}}", "weight of 'age' must be a number"},
               {"[1, 2]", "a job file holds one JSON object"},
               {"{\"k\": 3,}", "job.json"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        tu_write_file(path, bad[i].text);
        job = anonkit_job_create();
        assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_JOB, path), ANONKIT_E_USAGE);
        if (!strstr(anonkit_errmsg(job), bad[i].message) || !strstr(anonkit_errmsg(job), path))
            fail_msg("%s: %s", bad[i].text, anonkit_errmsg(job));
        anonkit_job_free(job);
    }
    job = anonkit_job_create();
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_JOB, tu_path(dir, "missing.json")), ANONKIT_E_IO);
    anonkit_job_free(job);
    tu_rmtree(dir);
}

/* The report without its timings. */
static char *report_without_times(const char *text)
{
    json_error_t jerr;
    json_t *root = json_loads(text, 0, &jerr);
    if (!root) fail_msg("report is not JSON: %s", jerr.text);
    json_object_del(root, "seconds");
    json_object_del(root, "phase_seconds");
    json_t *io = json_object_get(root, "out_of_core");
    if (io) {
        json_object_del(io, "stage_seconds");
        json_object_del(io, "first_scan_seconds");
    }
    char *out = json_dumps(root, JSON_SORT_KEYS | JSON_REAL_PRECISION(17));
    json_decref(root);
    assert_non_null(out);
    return out;
}

/* A job with settings (option, value pairs ending in ANONKIT_OPT__COUNT). */
static anonkit_job *job_with(const anonkit_option *opts, const char *const *values)
{
    anonkit_job *job = anonkit_job_create();
    assert_non_null(job);
    for (size_t i = 0; opts[i] != ANONKIT_OPT__COUNT; i++)
        if (anonkit_job_set(job, opts[i], values[i]) != ANONKIT_OK)
            fail_msg("--%s %s: %s", anonkit_option_name(opts[i]), values[i], anonkit_errmsg(job));
    return job;
}

/* anonkit_check and anonkit_metrics of the published file `out` (of
 * `input`) with the settings of its run: *checked receives the check's
 * counts as text, *measured the metrics' JSON. */
static void run_check_metrics(const char *input, const char *out, const anonkit_option *opts,
                              const char *const *values, char **checked, char **measured)
{
    anonkit_job *job = job_with(opts, values);
    anonkit_result *result = NULL;
    if (anonkit_check(job, out, &result) != ANONKIT_OK) fail_msg("check: %s", anonkit_errmsg(job));
    char counts[128];
    snprintf(counts, sizeof counts, "%llu rows, %llu classes, %llu suppressed",
             (unsigned long long)anonkit_result_rows_read(result), (unsigned long long)anonkit_result_classes(result),
             (unsigned long long)anonkit_result_rows_suppressed(result));
    anonkit_result_free(result);
    *checked = strdup(counts);
    assert_non_null(*checked);
    if (anonkit_metrics(job, input, out, &result) != ANONKIT_OK) fail_msg("metrics: %s", anonkit_errmsg(job));
    *measured = strdup(anonkit_result_json(result));
    assert_non_null(*measured);
    anonkit_result_free(result);
    anonkit_job_free(job);
}

/* One anonymize run of `input` with settings (option, value pairs ending in
 * ANONKIT_OPT__COUNT); *published, *summary (minus its time line) and
 * *report (minus timings) receive what it wrote, *checked and *measured what
 * anonkit_check and anonkit_metrics say of the published file. */
static void run_anonymize(const char *dir, const char *input, const anonkit_option *opts, const char *const *values,
                          char **published, char **summary, char **report, char **checked, char **measured)
{
    anonkit_job *job = anonkit_job_create();
    assert_non_null(job);
    char out[4200];
    snprintf(out, sizeof out, "%s", tu_path(dir, "out.csv"));
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_INPUT, input), ANONKIT_OK);
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_OUTPUT, out), ANONKIT_OK);
    for (size_t i = 0; opts[i] != ANONKIT_OPT__COUNT; i++)
        if (anonkit_job_set(job, opts[i], values[i]) != ANONKIT_OK)
            fail_msg("--%s %s: %s", anonkit_option_name(opts[i]), values[i], anonkit_errmsg(job));
    job_set_knob(job, JOB_KNOB_PARALLEL_MIN_BYTES, 1); /* read in two pieces, the second on a worker thread */
    anonkit_result *result = NULL;
    if (anonkit_anonymize(job, &result) != ANONKIT_OK) fail_msg("anonymize: %s", anonkit_errmsg(job));
    *published = tu_read_file(out, NULL);
    assert_non_null(*published);
    *summary = strdup(anonkit_result_summary(result));
    assert_non_null(*summary);
    char *time_line = strstr(*summary, "time ");
    if (time_line) *time_line = '\0';
    *report = report_without_times(anonkit_result_json(result));
    anonkit_result_free(result);
    anonkit_job_free(job);
    run_check_metrics(input, out, opts, values, checked, measured);
}

/* A program that chose a locale with a decimal comma (setlocale(LC_ALL, ""))
 * gets the same options, output, summary and report as under the C locale,
 * the same verdict and counts of anonkit_check (variance diversity of a
 * decimal sensitive value included) and the same metrics JSON (published
 * decimal ranges read, numbers written with '.'), and keeps its own locale
 * after every call. The locale must be installed
 * (scripts/deps.sh generates it): without it the test fails. 20000 rows, so
 * that the writer formats the class means on worker threads too. */
static void test_decimal_comma_locale(void **state)
{
    (void)state;
    const char *dir = tu_mkdtemp();
    char input[4200];
    snprintf(input, sizeof input, "%s", tu_path(dir, "in.csv"));
    /* numeric QIs with decimals and exponents, a categorical QI, a class, a numeric sensitive value
     * (a point and an exponent: read through strtod, which the locale would change) */
    char *text = malloc(64 * 20100);
    assert_non_null(text);
    size_t used = (size_t)sprintf(text, "x,y,c,label,s\n");
    tu_rng rng = {7};
    for (int r = 0; r < 20000; r++)
        used += (size_t)sprintf(text + used, "%u.%02u,%u.5e-1,c%u,%s,%u.5e0\n", (unsigned)tu_below(&rng, 90),
                                (unsigned)tu_below(&rng, 100), (unsigned)tu_below(&rng, 5000),
                                (unsigned)tu_below(&rng, 4), tu_below(&rng, 3) ? "yes" : "no",
                                (unsigned)tu_below(&rng, 50));
    tu_write_file(input, text);
    free(text);
    char hierarchy[4300];
    tu_write_file(tu_path(dir, "c.csv"), "c0;c0-1;*\nc1;c0-1;*\nc2;c2-3;*\nc3;c2-3;*\n");
    snprintf(hierarchy, sizeof hierarchy, "c=%s", tu_path(dir, "c.csv"));

    const anonkit_option o1[] = {ANONKIT_OPT_QI, ANONKIT_OPT_SENSITIVE, ANONKIT_OPT_K, ANONKIT_OPT_L,
                                 ANONKIT_OPT_L_VARIANT, ANONKIT_OPT_SPLIT, ANONKIT_OPT_CLASS, ANONKIT_OPT_MIN_GAIN,
                                 ANONKIT_OPT_WEIGHTS, ANONKIT_OPT_SEED, ANONKIT_OPT_HIERARCHY, ANONKIT_OPT__COUNT};
    const char *const v1[] = {"x,y,c",    "s",         "4", "1.5", "entropy", "infogain", "label", "0.01",
                              "x=0.5,y=1.25", "1", hierarchy};
    const anonkit_option o2[] = {ANONKIT_OPT_QI, ANONKIT_OPT_SENSITIVE, ANONKIT_OPT_K, ANONKIT_OPT_VARIANCE,
                                 ANONKIT_OPT_PUBLISH, ANONKIT_OPT_SEED, ANONKIT_OPT_KEEP_ORDER, ANONKIT_OPT__COUNT};
    const char *const v2[] = {"x,y", "s", "5", "2.5", "mean", "2", "true"};
    const anonkit_option o3[] = {ANONKIT_OPT_QI, ANONKIT_OPT_K, ANONKIT_OPT_ALGORITHM, ANONKIT_OPT_MEMORY,
                                 ANONKIT_OPT_ALPHA, ANONKIT_OPT_PUBLISH, ANONKIT_OPT_SEED, ANONKIT_OPT_HIERARCHY,
                                 ANONKIT_OPT__COUNT};
    const char *const v3[] = {"x,y,c", "3", "rothko-s", "16M", "0.05", "range", "3", hierarchy};
    /* class means formatted by the writer's worker threads */
    const anonkit_option o4[] = {ANONKIT_OPT_QI, ANONKIT_OPT_K, ANONKIT_OPT_PUBLISH, ANONKIT_OPT_THREADS,
                                 ANONKIT_OPT_SEED, ANONKIT_OPT__COUNT};
    const char *const v4[] = {"x,y", "2", "mean", "4", "4"};
    const anonkit_option *const opts[] = {o1, o2, o3, o4};
    const char *const *const values[] = {v1, v2, v3, v4};
    enum { NRUNS = 4 };
    char *published[2][NRUNS], *summary[2][NRUNS], *report[2][NRUNS], *checked[2][NRUNS], *measured[2][NRUNS];
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 0) assert_non_null(setlocale(LC_ALL, "C"));
        else if (!setlocale(LC_ALL, "de_DE.UTF-8"))
            fail_msg("the locale de_DE.UTF-8 is not installed (scripts/deps.sh generates it)");
        const char *point = pass ? "," : ".";
        assert_string_equal(localeconv()->decimal_point, point);
        for (int r = 0; r < NRUNS; r++) {
            run_anonymize(dir, input, opts[r], values[r], &published[pass][r], &summary[pass][r], &report[pass][r],
                          &checked[pass][r], &measured[pass][r]);
            assert_string_equal(localeconv()->decimal_point, point); /* the caller's locale is back */
        }
        char printed[32];
        snprintf(printed, sizeof printed, "%.2f", 0.5);
        assert_string_equal(printed, pass ? "0,50" : "0.50");
    }
    setlocale(LC_ALL, "C");
    for (int r = 0; r < NRUNS; r++) {
        assert_string_equal(published[0][r], published[1][r]);
        assert_string_equal(summary[0][r], summary[1][r]);
        assert_string_equal(report[0][r], report[1][r]);
        assert_non_null(strchr(published[0][r], '.')); /* decimals were published */
        assert_string_equal(checked[0][r], checked[1][r]);
        assert_string_equal(measured[0][r], measured[1][r]);
        assert_non_null(strstr(measured[0][r], "\"dm\": ")); /* a real, written with '.' */
        assert_null(strstr(measured[0][r], ",0")); /* no decimal comma */
        for (int pass = 0; pass < 2; pass++) {
            free(checked[pass][r]);
            free(measured[pass][r]);
            free(published[pass][r]);
            free(summary[pass][r]);
            free(report[pass][r]);
        }
    }
    tu_rmtree(dir);
}

/* One sequential release of the fixture of tests/data/sequential to `out`:
 * the summary minus its time line, in a malloc'd text. */
static char *run_sequential(const char *out)
{
    static const char *const files[] = {"t1.csv", "t2g.csv", "job.csv", "name.csv"};
    char path[4][4300];
    for (int i = 0; i < 4; i++) snprintf(path[i], sizeof path[i], "%s/tests/data/sequential/%s", ANONKIT_SOURCE_DIR, files[i]);
    char hjob[4400], hname[4400];
    snprintf(hjob, sizeof hjob, "Job=%s", path[2]);
    snprintf(hname, sizeof hname, "Name=%s", path[3]);
    const anonkit_option o[] = {ANONKIT_OPT_INPUT,       ANONKIT_OPT_PREVIOUS,         ANONKIT_OPT_OUTPUT,
                                ANONKIT_OPT_X,           ANONKIT_OPT_Y,                ANONKIT_OPT_LINKABILITY,
                                ANONKIT_OPT_SENSITIVE_VALUES, ANONKIT_OPT_SCORE,       ANONKIT_OPT_HIERARCHY,
                                ANONKIT_OPT_HIERARCHY,   ANONKIT_OPT_SEED,             ANONKIT_OPT__COUNT};
    const char *const v[] = {path[0], path[1], out, "Name,Job", "Disease", "0.7", "HIV", "distortion", hjob, hname, "1"};
    anonkit_job *job = job_with(o, v);
    anonkit_result *result = NULL;
    if (anonkit_sequential(job, &result) != ANONKIT_OK) fail_msg("sequential: %s", anonkit_errmsg(job));
    char *summary = strdup(anonkit_result_summary(result));
    assert_non_null(summary);
    char *time_line = strstr(summary, "time ");
    if (time_line) *time_line = '\0';
    anonkit_result_free(result);
    anonkit_job_free(job);
    return summary;
}

/* anonkit_sequential under a decimal comma writes the summary of the C
 * locale (its distortions and L_Y(X) with '.'), and the caller's locale is back. */
static void test_sequential_decimal_comma(void **state)
{
    (void)state;
    const char *dir = tu_mkdtemp();
    char out[4200];
    snprintf(out, sizeof out, "%s", tu_path(dir, "seq.csv"));
    assert_non_null(setlocale(LC_ALL, "C"));
    char *c = run_sequential(out);
    if (!setlocale(LC_ALL, "de_DE.UTF-8")) fail_msg("the locale de_DE.UTF-8 is not installed (scripts/deps.sh generates it)");
    char *de = run_sequential(out);
    assert_string_equal(localeconv()->decimal_point, ",");
    setlocale(LC_ALL, "C");
    assert_string_equal(c, de);
    assert_non_null(strstr(c, "categorical ")); /* its numbers hold a '.' */
    assert_non_null(strchr(strstr(c, "categorical "), '.'));
    free(c);
    free(de);
    tu_rmtree(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_option_table), cmocka_unit_test(test_set_and_reject),
        cmocka_unit_test(test_values_stored), cmocka_unit_test(test_algorithms),
        cmocka_unit_test(test_lists),        cmocka_unit_test(test_job_file),
        cmocka_unit_test(test_decimal_comma_locale), cmocka_unit_test(test_sequential_decimal_comma),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
