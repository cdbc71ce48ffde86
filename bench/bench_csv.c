/* bench_csv.c — throughput of the CSV reader (src/io/csv.c) against a
 * baseline measured in the same run (docs/ARCHITECTURE.md §15).
 *
 * Usage: bench_csv [FILE.csv [DELIMITER]]
 *        bench_csv --once FILE.csv [DELIMITER]
 * Without FILE it writes a numeric CSV of 1,000,000 rows x 9 integer columns
 * (about 36 MB) to a temporary file under $TMPDIR (or /tmp) and removes it
 * afterwards. It then times, best of 3 each, a full pass of csv_read over the
 * file and a baseline pass that only freads the file in 1 MiB blocks and
 * counts line ends with memchr, and prints MB/s (10^6 bytes per second) for
 * both and their ratio. Timing never fails: the exit status is 0 unless the
 * file cannot be made or read.
 *
 * With --once it makes exactly one csv_read pass over FILE and prints the
 * records and a check sum, timing nothing itself: a whole process that reads
 * the file once, the baseline bench/bench_risk.sh times the same way as the
 * `anonkit risk` process it compares with (start-up included in both). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "io/csv.h"

#define ROWS 1000000
#define COLS 9
#define RUNS 3

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Integer columns of the widths census-like data has: age, zip code, a
 * year, small codes and amounts. */
static int generate(const char *path)
{
    static const uint64_t range[COLS] = {100, 100000, 2000, 10, 1000, 50, 100000, 16, 10000};
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    uint64_t s = 12345;
    for (long r = 0; r < ROWS; r++) {
        for (int c = 0; c < COLS; c++)
            fprintf(f, c ? ",%llu" : "%llu", (unsigned long long)(rng_next(&s) % range[c]));
        fputc('\n', f);
    }
    return fclose(f) == 0 ? 0 : -1;
}

/* One pass of the reader; returns the rows, or -1. */
static long pass_reader(const char *path, char delim, uint64_t *bytes, uint64_t *check)
{
    csv_reader *r = NULL;
    ak_error err;
    ak_err_clear(&err);
    if (csv_reader_open(&r, path, delim, &err) < 0) {
        fprintf(stderr, "bench_csv: %s: %s\n", path, err.message);
        return -1;
    }
    long rows = 0;
    uint64_t sum = 0;
    csv_record rec;
    int rc;
    while ((rc = csv_read(r, &rec, &err)) > 0) {
        rows++;
        sum += rec.count + rec.fields[rec.count - 1].len +
               (rec.fields[0].len ? (unsigned char)rec.fields[0].data[0] : 0u);
    }
    if (rc < 0) {
        char msg[2048];
        ak_err_format(&err, msg, sizeof msg);
        fprintf(stderr, "bench_csv: %s\n", msg);
        rows = -1;
    }
    *bytes = csv_reader_offset(r);
    *check = sum;
    csv_reader_free(r);
    return rows;
}

/* Baseline: the cheapest pass that still touches every byte. */
static long pass_baseline(const char *path, uint64_t *bytes)
{
    static char block[1 << 20];
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    long lines = 0;
    uint64_t total = 0;
    size_t got;
    while ((got = fread(block, 1, sizeof block, f)) > 0) {
        total += got;
        const char *p = block, *e = block + got;
        while ((p = memchr(p, '\n', (size_t)(e - p))) != NULL) {
            lines++;
            p++;
        }
    }
    fclose(f);
    *bytes = total;
    return lines;
}

int main(int argc, char **argv)
{
    if (argc > 2 && strcmp(argv[1], "--once") == 0) {
        uint64_t bytes = 0, check = 0;
        const long rows = pass_reader(argv[2], argc > 3 && argv[3][0] ? argv[3][0] : ',', &bytes, &check);
        if (rows < 0) return 1;
        printf("%ld records, %llu bytes, check %llu\n", rows, (unsigned long long)bytes, (unsigned long long)check);
        return 0;
    }
    char tmp[4096] = "";
    const char *path;
    char delim = argc > 2 && argv[2][0] ? argv[2][0] : ',';
    if (argc > 1) {
        path = argv[1];
    } else {
        const char *dir = getenv("TMPDIR");
        snprintf(tmp, sizeof tmp, "%s/bench_csv-XXXXXX", dir && *dir ? dir : "/tmp");
        int fd = mkstemp(tmp);
        if (fd < 0) {
            perror("bench_csv: mkstemp");
            return 1;
        }
        close(fd);
        path = tmp;
        double t0 = now_seconds();
        if (generate(path) != 0) {
            perror("bench_csv: writing the input");
            unlink(tmp);
            return 1;
        }
        fprintf(stderr, "generated %d rows x %d columns in %.2f s\n", ROWS, COLS, now_seconds() - t0);
    }

    double best_reader = 1e30, best_base = 1e30;
    uint64_t bytes = 0, base_bytes = 0, check = 0;
    long rows = 0, lines = 0;
    int status = 0;
    for (int run = 0; run < RUNS; run++) {
        double t0 = now_seconds();
        rows = pass_reader(path, delim, &bytes, &check);
        double t1 = now_seconds();
        lines = pass_baseline(path, &base_bytes);
        double t2 = now_seconds();
        if (rows < 0 || lines < 0) {
            status = 1;
            break;
        }
        if (t1 - t0 < best_reader) best_reader = t1 - t0;
        if (t2 - t1 < best_base) best_base = t2 - t1;
    }
    if (status == 0) {
        double mb = (double)bytes / 1e6;
        double reader_mbs = mb / best_reader, base_mbs = (double)base_bytes / 1e6 / best_base;
        printf("input:    %s (%.1f MB, %ld records, %ld line ends, check %llu)\n",
               argc > 1 ? path : "generated", mb, rows, lines, (unsigned long long)check);
        printf("csv_read: %8.1f MB/s  (best of %d: %.3f s, %.1f M records/s)\n", reader_mbs, RUNS,
               best_reader, (double)rows / best_reader / 1e6);
        printf("baseline: %8.1f MB/s  (fread + memchr line count, best of %d: %.3f s)\n", base_mbs,
               RUNS, best_base);
        printf("ratio:    csv_read runs at %.2f of the baseline speed\n", reader_mbs / base_mbs);
    }
    if (tmp[0]) unlink(tmp);
    return status;
}
