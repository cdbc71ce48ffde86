/* bench_table.c — the library's run on a table in memory against the same
 * run on its CSV file (docs/python.md, "Benchmark"): the CSV is read into an
 * anonkit_table first (not timed), then `anonkit_anonymize` runs table in ->
 * table out (MODE table) or CSV in -> CSV file out (MODE file) with the same
 * settings; prints the run's wall time. For instruction counts that the
 * machine's load does not disturb, run each mode under
 *   valgrind --tool=callgrind --toggle-collect=anonkit_anonymize
 * (only the run is counted, not the reading of the table).
 * usage: bench_table MODE CSV OUT QIS K [THREADS]   (MODE: table or file) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "anonkit/anonkit.h"
#include "common/clock.h"
#include "io/memtable.h"

int main(int argc, char **argv)
{
    if (argc < 6 || (strcmp(argv[1], "table") && strcmp(argv[1], "file"))) {
        fprintf(stderr, "usage: bench_table table|file CSV OUT QIS K [THREADS]\n");
        return 2;
    }
    const int table_mode = !strcmp(argv[1], "table");
    anonkit_table *t = NULL;
    if (table_mode) {
        FILE *f = fopen(argv[2], "r");
        ak_error err = {0};
        if (!f || memtable_from_csv(&t, f, ',', argv[2], &err) != ANONKIT_OK) {
            fprintf(stderr, "bench_table: cannot read %s\n", argv[2]);
            return 1;
        }
        fclose(f);
    }
    anonkit_job *job = anonkit_job_create();
    if (!job || anonkit_job_set(job, ANONKIT_OPT_QI, argv[4]) || anonkit_job_set(job, ANONKIT_OPT_K, argv[5]) ||
        anonkit_job_set(job, ANONKIT_OPT_SEED, "1") || anonkit_job_set(job, ANONKIT_OPT_THREADS, argc > 6 ? argv[6] : "2"))
        return 1;
    if (table_mode ? anonkit_job_set_input_table(job, t) || anonkit_job_set_output_table(job)
                   : anonkit_job_set(job, ANONKIT_OPT_INPUT, argv[2]) || anonkit_job_set(job, ANONKIT_OPT_OUTPUT, argv[3]))
        return 1;
    anonkit_result *r = NULL;
    const double t0 = ak_seconds();
    const int rc = anonkit_anonymize(job, &r);
    const double t1 = ak_seconds();
    if (rc != ANONKIT_OK) {
        fprintf(stderr, "bench_table: %s\n", anonkit_errmsg(job));
        return 1;
    }
    printf("%s: %llu rows published in %.3f s\n", argv[1], (unsigned long long)anonkit_result_rows_published(r), t1 - t0);
    anonkit_result_free(r);
    anonkit_job_free(job);
    anonkit_table_free(t);
    return 0;
}
