/* bench_incognito.c — times the lattice searches of Incognito and its
 * baselines on one table ([LeFevre05] slides 44-47, [LeFevre06]'s QID-size table).
 *
 * usage: bench_incognito CSV DELIM K QIDSIZE REPEAT VARIANT[,VARIANT...] QI=HIERARCHY...
 *
 * Reads the table once with the first QIDSIZE quasi-identifiers given (0 =
 * all), then runs each variant REPEAT times and prints, per variant, the best
 * wall time of the search (finding every anonymous and k-minimal node and
 * measuring the k-minimal ones), the nodes checked, the scans and rollups, the
 * anonymous and k-minimal counts, and the time relative to the first variant
 * listed (the baseline of the run); then the time to measure every k-minimal
 * node (suppressed rows, DM, GCP) and choose one. Prints figures; never fails
 * on time. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "algo/incognito/incognito.h"
#include "core/table.h"
#include "model/model.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    if (argc < 8) {
        fprintf(stderr, "usage: %s CSV DELIM K QIDSIZE REPEAT VARIANT[,VARIANT...] QI=HIERARCHY...\n", argv[0]);
        return 2;
    }
    const char *csv = argv[1];
    const char delim = argv[2][0] == 't' ? '\t' : argv[2][0];
    const uint64_t k = strtoull(argv[3], NULL, 10);
    size_t nqi = (size_t)atoi(argv[4]);
    const int repeat = atoi(argv[5]) > 0 ? atoi(argv[5]) : 1;
    char *variants = argv[6];
    const size_t given = (size_t)argc - 7;
    if (!nqi || nqi > given) nqi = given;
    const char **names = calloc(nqi, sizeof *names), **paths = calloc(nqi, sizeof *paths);
    if (!names || !paths) return 2;
    for (size_t q = 0; q < nqi; q++) {
        char *eq = strchr(argv[7 + q], '=');
        if (!eq) {
            fprintf(stderr, "expected QI=HIERARCHY, got %s\n", argv[7 + q]);
            return 2;
        }
        *eq = '\0';
        names[q] = argv[7 + q];
        paths[q] = eq + 1;
    }
    table_spec spec = {.path = csv, .display_name = csv, .delimiter = delim, .nqi = nqi, .qi_names = names,
                       .hierarchy_paths = paths, .threads = 1};
    ak_error err;
    table *t;
    double t0 = now();
    if (table_load(&t, &spec, &err) < 0) {
        fprintf(stderr, "%s:%ld: %s\n", err.file, err.line, err.message);
        return 1;
    }
    printf("table %s: %zu rows, %zu QIs, k = %llu, read in %.3f s\n", csv, t->nrows, nqi, (unsigned long long)k,
           now() - t0);
    model m;
    model_init(&m);
    m.k = k;
    double base = 0;
    printf("%-20s %10s %8s %12s %8s %8s %10s %8s %10s\n", "variant", "seconds", "ratio", "nodes_checked", "scans",
           "rollups", "anonymous", "minimal", "+choose_s");
    for (char *v = strtok(variants, ","); v; v = strtok(NULL, ",")) {
        inc_options o = {.variant = INC_BASIC, .suppression = 0, .choose = INC_CHOOSE_GCP};
        if (inc_parse_variant(v, &o.variant) != 0) {
            fprintf(stderr, "unknown variant %s\n", v);
            return 2;
        }
        double best = 1e300;
        inc_result r;
        memset(&r, 0, sizeof r);
        for (int i = 0; i < repeat; i++) {
            inc_result_free(&r);
            t0 = now();
            if (inc_search(t, &m, &o, &r, &err) < 0) {
                fprintf(stderr, "%s: %s\n", v, err.message);
                return 1;
            }
            const double s = now() - t0;
            if (s < best) best = s;
        }
        if (base == 0) base = best;
        t0 = now();
        if (inc_measure_choose(t, &m, &o, &r, &err) < 0) {
            fprintf(stderr, "%s: %s\n", v, err.message);
            return 1;
        }
        const double choose = now() - t0;
        printf("%-20s %10.4f %8.2f %12llu %8llu %8llu %10zu %8zu %10.4f\n", v, best, best / base,
               (unsigned long long)r.counters.nodes_checked, (unsigned long long)r.counters.scans,
               (unsigned long long)r.counters.rollups, r.nanonymous, r.nminimal, choose);
        inc_result_free(&r);
    }
    table_free(t);
    free(names);
    free(paths);
    return 0;
}
