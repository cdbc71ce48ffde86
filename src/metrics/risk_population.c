/* risk_population.c — estimates of the number of population uniques from a
 * sample's class sizes (risk.h, docs/risk.md §2): Zayatz [Zayatz91], Pitman
 * [Pitman96] fitted as in [Hoshino01], and the slide negative binomial model
 * [Chen98]. The iterative fits report failure instead of a number when they
 * do not converge to a point inside the model's parameter space. */
#include "metrics/risk.h"

#include <math.h>

/* Largest number of Newton steps of a fit. */
#define FIT_STEPS 200

/* log C(a, b) for real a >= b >= 0. */
static double log_choose(double a, double b)
{
    return lgamma(a + 1) - lgamma(b + 1) - lgamma(a - b + 1);
}

/* P(X = 1) for X hypergeometric: one of K marked among N, n drawn. */
static double hyper_one(double N, double K, double n)
{
    if (K > N - n + 1 || K < 1) return 0;
    return exp(log(K) + log_choose(N - K, n - 1) - log_choose(N, n));
}

risk_estimate risk_zayatz(const uint64_t *size, const uint64_t *count, size_t nh, double n, double N)
{
    /* [Zayatz91]: P(population unique | sample unique) = f1 h(1; N, 1, n) /
     * sum_j c_j h(1; N, j, n), class sizes of the sample standing in for the
     * population's; population uniques = f1 P / pi. */
    double f1 = 0, denominator = 0;
    for (size_t i = 0; i < nh; i++) {
        if (size[i] == 1) f1 = (double)count[i];
        denominator += (double)count[i] * hyper_one(N, (double)size[i], n);
    }
    risk_estimate e = {0, 0, 0, NULL, {0, 0, 0}};
    if (f1 == 0) return (risk_estimate){1, 0, 0, NULL, {0, 0, 0}};
    if (!(denominator > 0)) {
        e.note = "the hypergeometric probabilities underflow";
        return e;
    }
    const double p = f1 * hyper_one(N, 1, n) / denominator;
    e.uniques = f1 * p / (n / N);
    if (e.uniques > N) e.uniques = N;
    e.share = e.uniques / N;
    e.ok = isfinite(e.uniques);
    if (!e.ok) e.note = "the estimate is not finite";
    return e;
}

/* The digamma function psi(x) for x > 0: recurrence up to x >= 6, then the
 * asymptotic series. */
static double digamma(double x)
{
    double r = 0;
    while (x < 6) {
        r -= 1 / x;
        x += 1;
    }
    const double f = 1 / (x * x);
    return r + log(x) - 0.5 / x -
           f * (1.0 / 12 - f * (1.0 / 120 - f * (1.0 / 252 - f * (1.0 / 240 - f * (1.0 / 132)))));
}

/* The likelihood equations of Pitman's model ([Hoshino01] §3) at (t, a):
 * sum_{i<u} 1/(t+ia) - sum_{i<n} 1/(t+i) and
 * sum_{i<u} i/(t+ia) - sum_j c_j sum_{k<j} 1/(k-a), by digamma differences. */
static int pitman_equations(const uint64_t *size, const uint64_t *count, size_t nh, double n, double u, double t,
                            double a, double out[2])
{
    if (!(a > 0 && a < 1 && t > -a)) return -1;
    const double s1 = (digamma(t / a + u) - digamma(t / a + 1)) / a;
    const double s2 = ((u - 1) - t * s1) / a;
    const double s3 = digamma(t + n) - digamma(t + 1);
    double s4 = 0;
    const double psi1 = digamma(1 - a);
    for (size_t i = 0; i < nh; i++)
        if (size[i] > 1) s4 += (double)count[i] * (digamma((double)size[i] - a) - psi1);
    out[0] = s1 - s3;
    out[1] = s2 - s4;
    return isfinite(out[0]) && isfinite(out[1]) ? 0 : -1;
}

/* A 2-D Newton solve of fn(x) = 0 from x with a numeric Jacobian and step
 * halving inside fn's domain; 0 when |fn| fell below tol. */
typedef int (*fit_fn)(const void *ctx, const double x[2], double out[2]);
static int newton2(fit_fn fn, const void *ctx, double x[2], double tol)
{
    double f[2];
    if (fn(ctx, x, f) != 0) return -1;
    for (int step = 0; step < FIT_STEPS; step++) {
        if (fabs(f[0]) < tol && fabs(f[1]) < tol) return 0;
        double jac[2][2];
        for (int j = 0; j < 2; j++) {
            const double h = 1e-7 * (fabs(x[j]) > 1 ? fabs(x[j]) : 1);
            double xp[2] = {x[0], x[1]}, xm[2] = {x[0], x[1]}, fp[2], fm[2];
            xp[j] += h;
            xm[j] -= h;
            if (fn(ctx, xp, fp) != 0 || fn(ctx, xm, fm) != 0) return -1;
            jac[0][j] = (fp[0] - fm[0]) / (2 * h);
            jac[1][j] = (fp[1] - fm[1]) / (2 * h);
        }
        const double det = jac[0][0] * jac[1][1] - jac[0][1] * jac[1][0];
        if (!(fabs(det) > 0) || !isfinite(det)) return -1;
        const double dx0 = (f[0] * jac[1][1] - f[1] * jac[0][1]) / det;
        const double dx1 = (f[1] * jac[0][0] - f[0] * jac[1][0]) / det;
        double lambda = 1;
        int moved = 0;
        for (int halving = 0; halving < 40 && !moved; halving++, lambda /= 2) {
            const double y[2] = {x[0] - lambda * dx0, x[1] - lambda * dx1};
            double g[2];
            if (fn(ctx, y, g) != 0) continue;
            if (fabs(g[0]) + fabs(g[1]) < fabs(f[0]) + fabs(f[1]) || halving == 39) {
                x[0] = y[0];
                x[1] = y[1];
                f[0] = g[0];
                f[1] = g[1];
                moved = 1;
            }
        }
        if (!moved) return -1;
    }
    return fabs(f[0]) < tol && fabs(f[1]) < tol ? 0 : -1;
}

typedef struct pitman_ctx {
    const uint64_t *size, *count;
    size_t nh;
    double n, u;
} pitman_ctx;

static int pitman_fn(const void *ctx, const double x[2], double out[2])
{
    const pitman_ctx *c = ctx;
    return pitman_equations(c->size, c->count, c->nh, c->n, c->u, x[0], x[1], out);
}

risk_estimate risk_pitman(const uint64_t *size, const uint64_t *count, size_t nh, double n, double N)
{
    double u = 0, f1 = 0, f2 = 0;
    for (size_t i = 0; i < nh; i++) {
        u += (double)count[i];
        if (size[i] == 1) f1 = (double)count[i];
        if (size[i] == 2) f2 = (double)count[i];
    }
    if (f1 == 0) return (risk_estimate){1, 0, 0, NULL, {0, 0, 0}};
    risk_estimate e = {0, 0, 0, "Pitman's likelihood equations have no solution with 0 < alpha < 1 that Newton's method reached", {0, 0, 0}};
    /* Starting point of [Hoshino01] (moment-like estimates from f1, f2). */
    const double c = f1 * (f1 - 1) / (f2 > 0 ? f2 : 1);
    double x[2];
    x[0] = (n * u * c - f1 * (n - 1) * (2 * u + c)) / (2 * f1 * u + f1 * c - n * c);
    x[1] = (x[0] * (f1 - n) + (n - 1) * f1) / (n * u);
    if (!(x[1] > 0 && x[1] < 1) || !(x[0] > -x[1]) || !isfinite(x[0])) {
        x[1] = 0.5;
        x[0] = 1;
    }
    const pitman_ctx ctx = {size, count, nh, n, u};
    if (newton2(pitman_fn, &ctx, x, 1e-7) != 0) return e;
    const double t = x[0], a = x[1];
    const double uniques = exp(lgamma(t + 1) - lgamma(t + a) + a * log(N));
    if (!(uniques >= 0 && uniques <= N)) {
        e.note = "Pitman's fit gives no estimate within the population";
        return e;
    }
    return (risk_estimate){1, uniques, uniques / N, NULL, {t, a, 0}};
}

typedef struct snb_ctx {
    double K, pi, f1, f2;
} snb_ctx;

/* The SNB equations ([Chen98]): expected classes of size 1 and 2 in the
 * sample minus the observed, relative, at x = (log alpha, logit beta). The
 * population class size F is 1 + NB(alpha, beta), each record sampled with
 * probability pi: E f1 = K pi (beta/(1-d))^alpha (1 + alpha d/(1-d)) and
 * E f2 = K alpha beta^alpha pi^2 (1-beta)/2 (1-d)^-(alpha+2) (2 - (1-alpha) d),
 * d = (1-pi)(1-beta). */
static int snb_fn(const void *ctx, const double x[2], double out[2])
{
    const snb_ctx *c = ctx;
    const double alpha = exp(x[0]), beta = 1 / (1 + exp(-x[1]));
    if (!(alpha > 0) || !(beta > 0 && beta < 1) || !isfinite(alpha)) return -1;
    const double d = (1 - c->pi) * (1 - beta);
    const double e1 = c->K * c->pi * pow(beta / (1 - d), alpha) * (1 + alpha * d / (1 - d));
    const double e2 = c->K * alpha * pow(beta, alpha) * c->pi * c->pi * (1 - beta) / 2 * pow(1 - d, -(alpha + 2)) *
                      (2 - (1 - alpha) * d);
    out[0] = e1 / c->f1 - 1;
    out[1] = e2 / c->f2 - 1;
    return isfinite(out[0]) && isfinite(out[1]) ? 0 : -1;
}

risk_estimate risk_snb(const uint64_t *size, const uint64_t *count, size_t nh, double n, double N)
{
    const double pi = n / N;
    double u = 0, f1 = 0, f2 = 0, num = 0, den = 0;
    for (size_t i = 0; i < nh; i++) {
        const double s = (double)size[i], cs = (double)count[i];
        u += cs;
        if (size[i] == 1) f1 = cs;
        if (size[i] == 2) f2 = cs;
        num += cs * pow(1 - pi, s);
        den += cs * s * pi * pow(1 - pi, s - 1);
    }
    if (f1 == 0) return (risk_estimate){1, 0, 0, NULL, {0, 0, 0}};
    risk_estimate e = {0, 0, 0, "the SNB equations did not converge", {0, 0, 0}};
    if (f2 == 0) {
        e.note = "the SNB model needs classes of size 2 in the sample";
        return e;
    }
    /* K: population classes, Shlosser's estimator [Haas95]. */
    const double K = den > 0 ? u + f1 * num / den : u;
    const snb_ctx ctx = {K, pi, f1, f2};
    static const double starts[][2] = {{0, 0}, {-1, -2}, {1, 2}, {-2, 0}, {2, -2}, {0, 3}, {-3, 3}};
    for (size_t s = 0; s < sizeof starts / sizeof *starts; s++) {
        double x[2] = {starts[s][0], starts[s][1]};
        if (newton2(snb_fn, &ctx, x, 1e-10) != 0) continue;
        const double alpha = exp(x[0]), beta = 1 / (1 + exp(-x[1]));
        const double uniques = K * pow(beta, alpha);
        if (!(uniques >= 0 && uniques <= N) || !isfinite(uniques)) continue;
        return (risk_estimate){1, uniques, uniques / N, NULL, {alpha, beta, K}};
    }
    return e;
}
