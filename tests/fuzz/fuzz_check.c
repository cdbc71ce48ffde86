/* fuzz_check.c — libFuzzer harness for the verifier (anonkit_check), the
 * oracle of every other test: bytes become a published table (two QI
 * columns, a sensitive column, a copied column; few distinct values, so
 * classes form), and its verdict under k-anonymity, distinct or recursive
 * (c,l)-diversity, and t-closeness under the equal distance or basic
 * β-likeness, must equal that of the plain count written here, from the
 * definitions ([LeFevre07] §1.1, [Li07] §4.2, [Cao12] Def. 2) in exact
 * integers, independently of src/. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "anonkit/anonkit.h"
#include "fuzz_util.h"

enum { NA = 4, NB = 3, NS = 5 };
static const char *const a_text[NA] = {"1", "2-5", "*", "x y"};
static const char *const b_text[NB] = {"m", "f", "\"q,r\""}; /* (the last quoted: the value is q,r) */
static const char *const s_text[NS] = {"flu", "cold", "hiv", "none", "\"a\"\"b\""};

/* Whether every class (rows with the same a and b) holds, counted here. */
static int holds(const uint8_t *rows, size_t n, unsigned k, unsigned l, unsigned c)
{
    for (unsigned a = 0; a < NA; a++)
        for (unsigned b = 0; b < NB; b++) {
            unsigned count = 0, per[NS] = {0};
            for (size_t i = 0; i < n; i++)
                if (rows[i] % NA == a && rows[i] / NA % NB == b) count++, per[rows[i] / (NA * NB) % NS]++;
            if (count == 0) continue;
            if (count < k) return 0;
            if (!l) continue;
            /* sensitive counts, most frequent first */
            for (unsigned i = 0; i < NS; i++)
                for (unsigned j = i + 1; j < NS; j++)
                    if (per[j] > per[i]) {
                        const unsigned t = per[i];
                        per[i] = per[j];
                        per[j] = t;
                    }
            unsigned distinct = 0;
            for (unsigned i = 0; i < NS; i++) distinct += per[i] > 0;
            if (distinct < l) return 0;
            if (c) { /* recursive (c,l): r1 < c (r_l + ... + r_m) */
                unsigned tail = 0;
                for (unsigned i = l - 1; i < NS; i++) tail += per[i];
                if (!(per[0] < c * tail)) return 0;
            }
        }
    return 1;
}

/* t-closeness, equal distance, with t = tq/4: (1/2) sum_s |c_s/n - Q_s/N| <= tq/4
 * for every class, i.e. 2 sum_s |c_s N - Q_s n| <= tq n N; basic β-likeness with an
 * integer β: c_s N - Q_s n <= β Q_s n for every value of every class. */
static int dist_holds(const uint8_t *rows, size_t n, unsigned tq, unsigned beta)
{
    long long Q[NS] = {0};
    for (size_t i = 0; i < n; i++) Q[rows[i] / (NA * NB) % NS]++;
    const long long N = (long long)n;
    for (unsigned a = 0; a < NA; a++)
        for (unsigned b = 0; b < NB; b++) {
            long long count = 0, per[NS] = {0};
            for (size_t i = 0; i < n; i++)
                if (rows[i] % NA == a && rows[i] / NA % NB == b) count++, per[rows[i] / (NA * NB) % NS]++;
            if (!count) continue;
            long long sum = 0;
            for (unsigned s = 0; s < NS; s++) {
                const long long d = per[s] * N - Q[s] * count;
                sum += d < 0 ? -d : d;
                if (beta && d > (long long)beta * Q[s] * count) return 0;
            }
            if (tq < 4 && 2 * sum > (long long)tq * count * N) return 0;
        }
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2) return 0;
    const char *path = fuzz_path("published.csv");
    const unsigned k = 1 + data[0] % 5, l = data[1] % 4 >= 2 ? data[1] % 4 : 0, c = (data[1] >> 2) % 4;
    const uint8_t *rows = data + 2;
    const size_t n = size - 2;
    FILE *f = fopen(path, "wb");
    if (!f) abort();
    fputs("a,b,s,note\n", f);
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%s,%s,%s,%zu\n", a_text[rows[i] % NA], b_text[rows[i] / NA % NB], s_text[rows[i] / (NA * NB) % NS], i);
    fclose(f);
    anonkit_job *job = anonkit_job_create();
    if (!job) abort();
    char num[16];
    snprintf(num, sizeof num, "%u", k);
    if (anonkit_job_set(job, ANONKIT_OPT_QI, "a,b") || anonkit_job_set(job, ANONKIT_OPT_K, num)) abort();
    if (l) {
        snprintf(num, sizeof num, "%u", l);
        if (anonkit_job_set(job, ANONKIT_OPT_SENSITIVE, "s") || anonkit_job_set(job, ANONKIT_OPT_L, num) ||
            anonkit_job_set(job, ANONKIT_OPT_L_VARIANT, c ? "recursive" : "distinct"))
            abort();
        if (c) {
            snprintf(num, sizeof num, "%u", c);
            if (anonkit_job_set(job, ANONKIT_OPT_C, num)) abort();
        }
    }
    /* data[0] >> 3: 0-3 none, 4-7 t = 0, 0.25, 0.5, 0.75, 8-11 β = 1..4 (others none) */
    const unsigned dm = (unsigned)(data[0] >> 3);
    const unsigned tq = dm >= 4 && dm < 8 ? dm - 4 : 4, beta = dm >= 8 && dm < 12 ? dm - 7 : 0;
    if (tq < 4 || beta) {
        if (anonkit_job_set(job, ANONKIT_OPT_SENSITIVE, "s")) abort();
        snprintf(num, sizeof num, "%g", tq / 4.0);
        if (tq < 4 && (anonkit_job_set(job, ANONKIT_OPT_T, num) || anonkit_job_set(job, ANONKIT_OPT_T_DISTANCE, "equal")))
            abort();
        snprintf(num, sizeof num, "%u", beta);
        if (beta && anonkit_job_set(job, ANONKIT_OPT_BETA, num)) abort();
    }
    anonkit_result *result = NULL;
    const int rc = anonkit_check(job, path, &result);
    const uint64_t checked = anonkit_result_rows_read(result);
    anonkit_result_free(result);
    const int want = holds(rows, n, k, l, l ? c : 0) && dist_holds(rows, n, tq, beta);
    if (rc != ANONKIT_OK && rc != ANONKIT_E_VIOLATION) {
        fprintf(stderr, "check failed: %s\n", anonkit_errmsg(job));
        abort();
    }
    if ((rc == ANONKIT_OK) != want) {
        fprintf(stderr, "k %u l %u c %u t %u/4 beta %u, %zu rows: the verifier says %s, the count %s (%s)\n", k, l, c, tq, beta, n,
                rc == ANONKIT_OK ? "holds" : "violated", want ? "holds" : "violated", anonkit_errmsg(job));
        abort();
    }
    if (rc == ANONKIT_OK && checked != n) abort();
    anonkit_job_free(job);
    unlink(path);
    return 0;
}
