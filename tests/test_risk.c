/* test_risk.c — the re-identification risk measures of src/metrics/risk*.c
 * and suda2.c against computations written here from the definitions
 * (docs/risk.md): a hand-worked table, per-record sums on random tables,
 * the population models' published equations evaluated by plain sums and
 * series (not the library's digamma or Newton code), and SUDA2's minimal
 * sample uniques against an enumeration of every attribute subset. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "metrics/risk.h"
#include "testutil.h"

static void assert_close(double got, double want, double rel, const char *what)
{
    const double tol = rel * (fabs(want) > 1 ? fabs(want) : 1);
    if (!(fabs(got - want) <= tol)) fail_msg("%s: got %.17g, want %.17g", what, got, want);
}

/* ---- hand-worked ---- */

/* Classes of sizes 1, 1, 2, 4 (8 records); population classes 2, 5, 2, 8. */
static void test_hand_worked(void **state)
{
    (void)state;
    const uint64_t size[] = {1, 1, 2, 4}, pop[] = {2, 5, 2, 8};
    risk_input in = {4, size, NULL, NULL, 0, 0.3};
    risk_measures m;
    assert_int_equal(risk_measure(&in, &m, NULL), ANONKIT_OK);
    assert_int_equal(m.rows, 8);
    assert_int_equal(m.classes, 4);
    assert_int_equal(m.sample_uniques, 2);
    assert_int_equal(m.bucket_classes[0], 2); /* size 1 */
    assert_int_equal(m.bucket_records[1], 2); /* size 2 */
    assert_int_equal(m.bucket_records[2], 4); /* sizes 3-4 */
    assert_close(m.prosecutor.highest, 1, 1e-15, "highest");
    assert_close(m.prosecutor.lowest, 0.25, 1e-15, "lowest");
    assert_close(m.prosecutor.average, 0.5, 1e-15, "average: 4 classes / 8 records");
    assert_close(m.prosecutor.records_at_risk, 0.5, 1e-15, "records above 0.3: the 2 uniques and the pair");
    assert_close(m.prosecutor.highest_risk_records, 0.25, 1e-15, "records at risk 1");
    assert_close(m.marketer, 0.5, 1e-15, "marketer without population");
    assert_int_equal(m.journalist_from_population, 0);
    assert_int_equal(m.has_population, 0);

    in.population = pop;
    assert_int_equal(risk_measure(&in, &m, NULL), ANONKIT_OK);
    assert_close(m.journalist.highest, 0.5, 1e-15, "journalist highest 1/2");
    assert_close(m.journalist.lowest, 0.125, 1e-15, "journalist lowest 1/8");
    assert_close(m.journalist.average, (0.5 + 0.2 + 1.0 + 0.5) / 8, 1e-15, "journalist average");
    assert_close(m.journalist.records_at_risk, 3.0 / 8, 1e-15, "journalist above 0.3: classes with F = 2");
    assert_close(m.marketer, 2.2 / 8, 1e-15, "marketer sum f/F / n");

    /* population N = 80 (sampling fraction 0.1): F_k = 10 f_k */
    in.population = NULL;
    in.population_size = 80;
    assert_int_equal(risk_measure(&in, &m, NULL), ANONKIT_OK);
    assert_int_equal(m.has_population, 1);
    assert_close(m.sampling_fraction, 0.1, 1e-15, "sampling fraction");
    /* f = 1, p = 0.1: p/(1-p) ln(1/p); f = 2, p = 0.1: p/(1-p) - (p/(1-p))^2 ln(1/p); f = 4: p/(f-(1-p)) */
    const double r1 = 0.1 / 0.9 * log(10.0), r2 = 0.1 / 0.9 - (0.1 / 0.9) * (0.1 / 0.9) * log(10.0), r4 = 0.1 / 3.1;
    assert_close(m.individual_max, r1, 1e-14, "individual max");
    assert_close(m.global_risk, 2 * r1 + 2 * r2 + 4 * r4, 1e-14, "global risk");
    assert_close(m.individual_mean, (2 * r1 + 2 * r2 + 4 * r4) / 8, 1e-14, "mean individual risk");
    assert_close(risk_individual(3, 3), 1.0 / 3, 1e-15, "p = 1: 1/f");
}

/* ---- random tables: sample measures ---- */

static void test_sample_measures_random(void **state)
{
    (void)state;
    tu_rng rng = {20261126};
    for (int round = 0; round < 200; round++) {
        const size_t n = 1 + tu_below(&rng, 60);
        uint64_t size[60], pop[60];
        double weight[60];
        uint64_t rows = 0;
        for (size_t k = 0; k < n; k++) {
            size[k] = 1 + (tu_below(&rng, 3) ? tu_below(&rng, 4) : tu_below(&rng, 1500));
            pop[k] = size[k] + tu_below(&rng, 20);
            weight[k] = (double)size[k] * (1 + (double)tu_below(&rng, 100) / 7.0);
            rows += size[k];
        }
        const double threshold = (double)tu_below(&rng, 11) / 10;
        const risk_input in = {n, size, pop, weight, (double)rows * 3, threshold};
        risk_measures m;
        assert_int_equal(risk_measure(&in, &m, NULL), ANONKIT_OK);
        /* per record, from the definitions */
        double pmax = 0, pmin = 2, psum = 0, jsum = 0, jmax = 0, isum = 0, imax = 0;
        uint64_t pat = 0, jat = 0, iat = 0, uniques = 0, bucket_rec[RISK_NBUCKETS] = {0};
        for (size_t k = 0; k < n; k++)
            for (uint64_t r = 0; r < size[k]; r++) {
                const double pr = 1.0 / (double)size[k], jr = 1.0 / (double)pop[k];
                pmax = pr > pmax ? pr : pmax;
                pmin = pr < pmin ? pr : pmin;
                psum += pr;
                jsum += jr;
                jmax = jr > jmax ? jr : jmax;
                pat += pr > threshold;
                jat += jr > threshold;
                uniques += size[k] == 1;
                const double p = (double)size[k] / weight[k];
                double ir;
                if (p >= 1) ir = 1.0 / (double)size[k];
                else if (size[k] == 1) ir = p / (1 - p) * log(1 / p);
                else if (size[k] == 2) ir = p / (1 - p) - pow(p / (1 - p), 2) * log(1 / p);
                else ir = p / ((double)size[k] - (1 - p));
                isum += ir;
                imax = ir > imax ? ir : imax;
                iat += ir > threshold;
                int b = 0;
                const uint64_t lo[] = {1, 2, 3, 5, 10, 20, 50, 100, 200, 500, 1000};
                while (b + 1 < RISK_NBUCKETS && size[k] >= lo[b + 1]) b++;
                bucket_rec[b]++;
            }
        assert_int_equal(m.rows, rows);
        assert_int_equal(m.sample_uniques, uniques);
        for (int b = 0; b < RISK_NBUCKETS; b++) assert_int_equal(m.bucket_records[b], bucket_rec[b]);
        assert_close(m.prosecutor.highest, pmax, 1e-12, "prosecutor highest");
        assert_close(m.prosecutor.lowest, pmin, 1e-12, "prosecutor lowest");
        assert_close(m.prosecutor.average, psum / (double)rows, 1e-12, "prosecutor average");
        assert_close(m.prosecutor.records_at_risk, (double)pat / (double)rows, 1e-12, "prosecutor at risk");
        assert_close(m.journalist.highest, jmax, 1e-12, "journalist highest");
        assert_close(m.journalist.average, jsum / (double)rows, 1e-12, "journalist average");
        assert_close(m.journalist.records_at_risk, (double)jat / (double)rows, 1e-12, "journalist at risk");
        assert_close(m.marketer, jsum / (double)rows, 1e-12, "marketer");
        assert_close(m.global_risk, isum, 1e-11, "global risk");
        assert_close(m.individual_max, imax, 1e-12, "individual max");
        assert_close(m.individual_records_at_risk, (double)iat / (double)rows, 1e-12, "individual at risk");
    }
}

/* ---- population models ---- */

/* P(X = 1), X hypergeometric (N, K marked, n drawn), by the product formula. */
static long double hyper_one_product(long N, long K, long n)
{
    if (K > N - n + 1) return 0;
    /* K * C(N-K, n-1) / C(N, n) = K * n * prod_{i=0}^{K-2} (N-n-i)/(N-1-i) / N ... computed as a ratio of products */
    long double p = (long double)K * (long double)n / (long double)N;
    for (long i = 0; i < K - 1; i++) p *= (long double)(N - n - i) / (long double)(N - 1 - i);
    return p;
}

/* Random class-size histograms of a sample of a population of N records. */
static size_t random_histogram(tu_rng *rng, uint64_t *size, uint64_t *count, double *n)
{
    const size_t nh = 2 + tu_below(rng, 6);
    *n = 0;
    for (size_t i = 0; i < nh; i++) {
        size[i] = i + 1 + (i > 2 ? tu_below(rng, 5) * i : 0);
        count[i] = 1 + tu_below(rng, i == 0 ? 300 : 80);
        *n += (double)(size[i] * count[i]);
    }
    for (size_t i = 1; i < nh; i++) /* strictly ascending sizes */
        if (size[i] <= size[i - 1]) size[i] = size[i - 1] + 1;
    *n = 0;
    for (size_t i = 0; i < nh; i++) *n += (double)(size[i] * count[i]);
    return nh;
}

static void test_zayatz_formula(void **state)
{
    (void)state;
    tu_rng rng = {7};
    for (int round = 0; round < 100; round++) {
        uint64_t size[8], count[8];
        double n;
        const size_t nh = random_histogram(&rng, size, count, &n);
        const long N = (long)n * (long)(1 + tu_below(&rng, 30));
        long double den = 0;
        for (size_t i = 0; i < nh; i++) den += (long double)count[i] * hyper_one_product(N, (long)size[i], (long)n);
        const long double p = (long double)count[0] * hyper_one_product(N, 1, (long)n) / den;
        double want = (double)((long double)count[0] * p * (long double)N / (long double)n);
        if (want > (double)N) want = (double)N;
        const risk_estimate e = risk_zayatz(size, count, nh, n, (double)N);
        assert_true(e.ok);
        assert_close(e.uniques, want, 1e-9, "Zayatz population uniques");
    }
}

/* Pitman's likelihood equations ([Hoshino01] §3) at (t, a), by plain sums. */
static void pitman_sums(const uint64_t *size, const uint64_t *count, size_t nh, double n, double t, double a, double out[2])
{
    double u = 0;
    for (size_t i = 0; i < nh; i++) u += (double)count[i];
    double o1 = 0, o2 = 0, o3 = 0, o4 = 0;
    for (double i = 1; i < u; i++) {
        o1 += 1 / (t + i * a);
        o3 += i / (t + i * a);
    }
    for (double i = 1; i < n; i++) o2 += 1 / (t + i);
    for (size_t i = 0; i < nh; i++)
        for (uint64_t j = 1; j < size[i]; j++) o4 += (double)count[i] / ((double)j - a);
    out[0] = o1 - o2;
    out[1] = o3 - o4;
}

static void test_pitman_equations(void **state)
{
    (void)state;
    tu_rng rng = {11};
    int converged = 0;
    for (int round = 0; round < 60; round++) {
        uint64_t size[8], count[8];
        double n;
        const size_t nh = random_histogram(&rng, size, count, &n);
        const double N = n * (double)(2 + tu_below(&rng, 100));
        const risk_estimate e = risk_pitman(size, count, nh, n, N);
        if (!e.ok) {
            assert_non_null(e.note); /* a failed fit says so, never a number */
            continue;
        }
        converged++;
        const double t = e.param[0], a = e.param[1];
        double f[2];
        pitman_sums(size, count, nh, n, t, a, f);
        assert_close(f[0], 0, 1e-6, "Pitman: d/dtheta log L = 0");
        assert_close(f[1], 0, 1e-6, "Pitman: d/dalpha log L = 0");
        const double ratio = t + 1 < 170 ? tgamma(t + 1) / tgamma(t + a) : exp(lgamma(t + 1) - lgamma(t + a));
        assert_close(e.uniques, ratio * pow(N, a), 1e-9, "Pitman uniques");
    }
    assert_true(converged >= 15); /* the others have their likelihood maximum at alpha <= 0, outside the model */
}

/* E[classes of size j in the sample] under the SNB model, j = 1, 2, by the
 * series over the population class size F = 1 + Y, Y ~ NB(alpha, beta). */
static double snb_expected(double K, double alpha, double beta, double pi, int j)
{
    double sum = 0, log_nb = alpha * log(beta); /* log P(Y = 0) */
    for (long y = 0; y < 2000000; y++) {
        const double F = (double)y + 1;
        if (y > 0) log_nb += log((y - 1 + alpha) / (double)y) + log(1 - beta);
        const double pnb = exp(log_nb);
        const double bin = j == 1 ? F * pi * pow(1 - pi, F - 1) : (F >= 2 ? F * (F - 1) / 2 * pi * pi * pow(1 - pi, F - 2) : 0);
        sum += pnb * bin;
        if (y > 1000 && pnb * F * F < 1e-18) break;
    }
    return K * sum;
}

static void test_snb_equations(void **state)
{
    (void)state;
    tu_rng rng = {13};
    int converged = 0;
    for (int round = 0; round < 40; round++) {
        uint64_t size[8], count[8];
        double n;
        const size_t nh = random_histogram(&rng, size, count, &n);
        const double pi = 0.05 + 0.9 * (double)tu_below(&rng, 1000) / 1000;
        const double N = n / pi;
        const risk_estimate e = risk_snb(size, count, nh, n, N);
        if (!e.ok) {
            assert_non_null(e.note);
            continue;
        }
        converged++;
        /* Shlosser's estimate of the population classes */
        double u = 0, num = 0, den = 0;
        for (size_t i = 0; i < nh; i++) {
            u += (double)count[i];
            num += (double)count[i] * pow(1 - pi, (double)size[i]);
            den += (double)count[i] * (double)size[i] * pi * pow(1 - pi, (double)size[i] - 1);
        }
        const double K = u + (double)count[0] * num / den;
        assert_close(e.param[2], K, 1e-12, "SNB: Shlosser K");
        const double alpha = e.param[0], beta = e.param[1];
        assert_close(snb_expected(K, alpha, beta, pi, 1), (double)count[0], 1e-6, "SNB: expected f1");
        const double f2 = size[1] == 2 ? (double)count[1] : 0;
        assert_close(snb_expected(K, alpha, beta, pi, 2), f2, 1e-6, "SNB: expected f2");
        assert_close(e.uniques, K * pow(beta, alpha), 1e-12, "SNB uniques");
    }
    assert_true(converged >= 20);
}

static void test_estimates_without_uniques_or_pairs(void **state)
{
    (void)state;
    const uint64_t size[] = {1, 3}, count[] = {10, 5};
    const risk_estimate e = risk_snb(size, count, 2, 25, 1000);
    assert_false(e.ok); /* no classes of size 2: no fit, and no number */
    assert_non_null(e.note);
    const uint64_t size2[] = {2, 3}, count2[] = {10, 5};
    const risk_estimate z = risk_zayatz(size2, count2, 2, 35, 1000);
    assert_true(z.ok);
    assert_true(z.uniques == 0); /* no sample uniques, no population uniques */
}

static void test_dankar_rule(void **state)
{
    (void)state;
    tu_rng rng = {17};
    for (int round = 0; round < 40; round++) {
        uint64_t size[8], count[8], sizes[4000];
        double n;
        const size_t nh = random_histogram(&rng, size, count, &n);
        size_t nc = 0;
        for (size_t i = 0; i < nh; i++)
            for (uint64_t c = 0; c < count[i] && nc < 4000; c++) sizes[nc++] = size[i];
        double rows = 0;
        for (size_t i = 0; i < nc; i++) rows += (double)sizes[i];
        const double pi = round % 2 ? 0.05 : 0.5;
        const risk_input in = {nc, sizes, NULL, NULL, rows / pi, 0.2};
        risk_measures m;
        assert_int_equal(risk_measure(&in, &m, NULL), ANONKIT_OK);
        /* [Dankar12]: pi <= 0.1: Pitman (else Zayatz); above: min(Zayatz, SNB) (Zayatz when SNB fails) */
        const risk_estimate *want;
        if (pi <= 0.1) want = m.pitman.ok ? &m.pitman : &m.zayatz;
        else want = m.snb.ok && m.snb.uniques <= m.zayatz.uniques ? &m.snb : &m.zayatz;
        assert_int_equal(m.dankar.ok, want->ok);
        if (want->ok) assert_close(m.dankar.uniques, want->uniques, 0, "Dankar's choice");
    }
}

/* ---- SUDA2 ---- */

/* Whether row r is unique on the attributes of mask. */
static int unique_on(const uint32_t *codes, size_t nrows, unsigned nqi, size_t r, unsigned mask)
{
    for (size_t o = 0; o < nrows; o++) {
        if (o == r) continue;
        int same = 1;
        for (unsigned q = 0; q < nqi && same; q++)
            if (mask >> q & 1) same = codes[o * nqi + q] == codes[r * nqi + q];
        if (same) return 0;
    }
    return 1;
}

static void test_suda2_brute_force(void **state)
{
    (void)state;
    tu_rng rng = {23};
    for (int round = 0; round < 150; round++) {
        const unsigned nqi = 1 + (unsigned)tu_below(&rng, 5);
        const size_t nrows = 1 + tu_below(&rng, 50);
        const unsigned M = 1 + (unsigned)tu_below(&rng, nqi);
        uint32_t codes[50 * 5];
        for (size_t r = 0; r < nrows; r++)
            for (unsigned q = 0; q < nqi; q++) codes[r * nqi + q] = (uint32_t)tu_below(&rng, 2 + q);
        risk_suda s;
        ak_error err;
        assert_int_equal(risk_suda2(codes, nrows, nqi, M, 0.01, &s, &err), ANONKIT_OK);
        uint64_t msus[6] = {0};
        double score[50] = {0}, total = 0;
        for (size_t r = 0; r < nrows; r++) {
            for (unsigned mask = 1; mask < (1u << nqi); mask++) {
                const unsigned k = (unsigned)__builtin_popcount(mask);
                if (k > M || !unique_on(codes, nrows, nqi, r, mask)) continue;
                int minimal = 1; /* no proper non-empty subset is unique */
                for (unsigned sub = (mask - 1) & mask; sub && minimal; sub = (sub - 1) & mask)
                    if (unique_on(codes, nrows, nqi, r, sub)) minimal = 0;
                if (!minimal) continue;
                msus[k - 1]++;
                double w = 1;
                for (unsigned i = k; i < M; i++) w *= (double)(nqi - i);
                score[r] += w;
            }
            total += score[r];
        }
        for (unsigned k = 0; k < M; k++) assert_int_equal(s.msus[k], msus[k]);
        for (size_t r = 0; r < nrows; r++) {
            assert_close(s.score[r], score[r], 0, "SUDA score");
            assert_close(s.dis[r], total > 0 ? 0.01 * score[r] / total : 0, 1e-15, "DIS-SUDA score");
        }
        risk_suda_free(&s);
    }
}

static void test_suda2_refuses_more_than_qis(void **state)
{
    (void)state;
    const uint32_t codes[] = {0, 1, 1, 0};
    risk_suda s;
    ak_error err;
    assert_int_equal(risk_suda2(codes, 2, 2, 3, 0.01, &s, &err), ANONKIT_E_USAGE);
    assert_non_null(strstr(err.message, "--suda 3"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand_worked),
        cmocka_unit_test(test_sample_measures_random),
        cmocka_unit_test(test_zayatz_formula),
        cmocka_unit_test(test_pitman_equations),
        cmocka_unit_test(test_snb_equations),
        cmocka_unit_test(test_estimates_without_uniques_or_pairs),
        cmocka_unit_test(test_dankar_rule),
        cmocka_unit_test(test_suda2_brute_force),
        cmocka_unit_test(test_suda2_refuses_more_than_qis),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
