/* synth.c — the synthetic data generator of [LeFevre07] Figure 7 and §5.1 (after
 * Agrawal et al.): draws each record from the seeded generator (common/rng.h) and
 * streams it as CSV (hand-formatted into a buffer written in large blocks) or as
 * a binary tuple file (io/tuple.h). Exact integer arithmetic throughout: see
 * synth.h. */
#include "io/synth.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "io/gsl_load.h"
#include "io/tuple.h"

const char *const synth_column_names[SYNTH_NCOLUMNS] = {
    "salary", "commission", "age", "elevel", "car", "zipcode", "hvalue",
    "hyears", "loan",   "c2",         "c7",  "r7",     "r10",
};

/* Uniform integer in [lo, hi]. */
static inline int32_t uniform(ak_rng *rng, int32_t lo, int32_t hi)
{
    return lo + (int32_t)ak_rng_below(rng, (uint64_t)(hi - lo) + 1);
}

/* Salary drawn from a normal distribution of mean 85,000 (the middle of the
 * uniform range) and variance 1.1e8 ([LeFevre07] §5.6: "the population variance of
 * the normal salary is approximately 1.1e8"), by the inverse of the normal
 * CDF at one uniform draw (GSL's, loaded into gsl), rounded, and kept within
 * the uniform range. */
static int32_t normal_salary(ak_rng *rng, const gsl_api *gsl)
{
    const double u = ((double)(ak_rng_next(rng) >> 11) + 0.5) / 9007199254740992.0; /* (0, 1) */
    const double v = nearbyint(85000.0 + sqrt(1.1e8) * gsl->gsl_cdf_ugaussian_Pinv(u));
    return v < 20000 ? 20000 : v > 150000 ? 150000 : (int32_t)v;
}

void synth_next(ak_rng *rng, synth_salary salary, const gsl_api *gsl, synth_row *row)
{
    row->salary = salary == SYNTH_SALARY_NORMAL ? normal_salary(rng, gsl) : uniform(rng, 20000, 150000);
    row->commission = row->salary >= 75000 ? 0 : uniform(rng, 10000, 75000);
    row->age = uniform(rng, 20, 80);
    row->elevel = uniform(rng, 0, 4);
    row->car = uniform(rng, 1, 20);
    row->zipcode = uniform(rng, 1, 9);
    row->hvalue = synth_hvalue(row->zipcode, ak_rng_next(rng) >> 11);
    row->hyears = uniform(rng, 1, 30);
    row->loan = uniform(rng, 0, 500000);
    synth_targets(row);
}

int32_t synth_hvalue(int32_t zipcode, uint64_t bits)
{
    /* zipcode * h * 100000 with h = 0.5 + bits / 2^53 is zipcode * 50000 +
     * zipcode * 100000 * bits / 2^53; the fraction is rounded to the nearest
     * integer (halves up) in exact 128-bit arithmetic. */
    const __uint128_t scaled = (__uint128_t)((uint64_t)zipcode * 100000u) * (bits & ((UINT64_C(1) << 53) - 1));
    return zipcode * 50000 + (int32_t)((scaled + ((__uint128_t)1 << 52)) >> 53);
}

void synth_targets(synth_row *row)
{
    const int32_t age = row->age, salary = row->salary;
    const int c2_a = (age < 40 && salary >= 50000 && salary <= 100000) ||
                     (age >= 40 && age < 60 && salary >= 75000 && salary <= 125000) ||
                     (age >= 60 && salary >= 25000 && salary <= 75000);
    row->c2 = c2_a ? 0 : 1;
    /* In hundredths: 0.67 (salary + commission) = 67 (salary + commission) / 100,
     * 0.2 loan = 20 loan / 100, 20K = 2000000 / 100. */
    const int64_t income = 67 * ((int64_t)row->salary + row->commission);
    row->r7_cents = income - 20 * (int64_t)row->loan - 2000000;
    row->c7 = row->r7_cents > 0 ? 0 : 1; /* disposable = r7 */
    /* equity = 0.1 hvalue (hyears - 20) from 20 years on; 0.2 equity = 2 hvalue (hyears - 20) / 100. */
    const int64_t equity2 = row->hyears < 20 ? 0 : 2 * (int64_t)row->hvalue * (row->hyears - 20);
    row->r10_cents = income - 500000 * (int64_t)row->elevel + equity2 - 1000000;
}

/* ---------------------------------------------------------------- CSV ---- */

static const char digit_pairs[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

/* Writes v in decimal at p and returns the end. */
static inline char *put_u64(char *p, uint64_t v)
{
    char tmp[20];
    char *t = tmp + sizeof tmp;
    while (v >= 100) {
        const unsigned pair = (unsigned)(v % 100) * 2;
        v /= 100;
        *--t = digit_pairs[pair + 1];
        *--t = digit_pairs[pair];
    }
    if (v >= 10) {
        *--t = digit_pairs[v * 2 + 1];
        *--t = digit_pairs[v * 2];
    } else {
        *--t = (char)('0' + v);
    }
    const size_t n = (size_t)(tmp + sizeof tmp - t);
    memcpy(p, t, n);
    return p + n;
}

/* Writes hundredths as [-]I.FF and returns the end. */
static inline char *put_cents(char *p, int64_t cents)
{
    uint64_t v = (uint64_t)cents;
    if (cents < 0) {
        *p++ = '-';
        v = 0 - v;
    }
    p = put_u64(p, v / 100);
    const unsigned frac = (unsigned)(v % 100) * 2;
    p[0] = '.';
    p[1] = digit_pairs[frac];
    p[2] = digit_pairs[frac + 1];
    return p + 3;
}

enum { CSV_BLOCK = 1 << 20, CSV_MAX_RECORD = 256 };

static int write_block(FILE *stream, const char *name, const char *buf, size_t len, synth_stats *st, ak_error *err)
{
    if (fwrite(buf, 1, len, stream) != len)
        return ak_err_set(err, ANONKIT_E_IO, name, 0, 0, "write failed: %s", strerror(errno));
    st->bytes += len;
    st->blocks++;
    return ANONKIT_OK;
}

static int write_csv(FILE *stream, const char *name, uint64_t rows, ak_rng *rng, synth_salary salary, const gsl_api *gsl, size_t block_size, synth_stats *st,
                     ak_error *err)
{
    if (block_size < CSV_MAX_RECORD) block_size = block_size ? CSV_MAX_RECORD : CSV_BLOCK;
    /* Room for a whole block plus one record past it; a block is written as soon as it is full. */
    char *buf = malloc(block_size + CSV_MAX_RECORD);
    if (!buf) return ak_err_nomem(err);
    char *p = buf;
    for (int c = 0; c < SYNTH_NCOLUMNS; c++) {
        size_t n = strlen(synth_column_names[c]);
        memcpy(p, synth_column_names[c], n);
        p += n;
        *p++ = c + 1 < SYNTH_NCOLUMNS ? ',' : '\n';
    }
    int rc = ANONKIT_OK;
    synth_row r;
    for (uint64_t i = 0; i < rows; i++) {
        synth_next(rng, salary, gsl, &r);
        p = put_u64(p, (uint64_t)r.salary), *p++ = ',';
        p = put_u64(p, (uint64_t)r.commission), *p++ = ',';
        p = put_u64(p, (uint64_t)r.age), *p++ = ',';
        *p++ = (char)('0' + r.elevel), *p++ = ',';
        p = put_u64(p, (uint64_t)r.car), *p++ = ',';
        *p++ = (char)('0' + r.zipcode), *p++ = ',';
        p = put_u64(p, (uint64_t)r.hvalue), *p++ = ',';
        p = put_u64(p, (uint64_t)r.hyears), *p++ = ',';
        p = put_u64(p, (uint64_t)r.loan), *p++ = ',';
        *p++ = (char)('A' + r.c2), *p++ = ',';
        *p++ = (char)('A' + r.c7), *p++ = ',';
        p = put_cents(p, r.r7_cents), *p++ = ',';
        p = put_cents(p, r.r10_cents), *p++ = '\n';
        if ((size_t)(p - buf) >= block_size) {
            if ((rc = write_block(stream, name, buf, block_size, st, err)) < 0) goto done;
            const size_t over = (size_t)(p - buf) - block_size;
            memcpy(buf, buf + block_size, over);
            p = buf + over;
        }
    }
    if (p > buf) rc = write_block(stream, name, buf, (size_t)(p - buf), st, err);
    st->rows = rows;
done:
    free(buf);
    return rc;
}

/* ------------------------------------------------------------- binary ---- */

static int write_binary(FILE *stream, const char *name, uint64_t rows, ak_rng *rng, synth_salary salary, const gsl_api *gsl, size_t block_size,
                        synth_stats *st, ak_error *err)
{
    static const char *const ab[2] = {"A", "B"};
    tuple_schema schema;
    tuple_schema_init(&schema);
    tuple_writer *w = NULL;
    int rc = ANONKIT_OK;
    for (int c = 0; c < SYNTH_NCOLUMNS && rc == ANONKIT_OK; c++) {
        const char *col = synth_column_names[c];
        if (c <= SYNTH_LOAN) rc = tuple_schema_add(&schema, col, TUPLE_I32, NULL, 0, err);
        else if (c <= SYNTH_C7) rc = tuple_schema_add(&schema, col, TUPLE_CODE, ab, 2, err);
        else rc = tuple_schema_add(&schema, col, TUPLE_F64, NULL, 0, err);
    }
    if (rc < 0 || (rc = tuple_writer_open(&w, stream, name, &schema, block_size, err)) < 0) goto done;
    uint32_t off[SYNTH_NCOLUMNS];
    for (int c = 0; c < SYNTH_NCOLUMNS; c++) off[c] = schema.columns[c].offset;
    uint8_t row[128];
    synth_row r;
    for (uint64_t i = 0; i < rows; i++) {
        synth_next(rng, salary, gsl, &r);
        tuple_put_i32(row, off[SYNTH_SALARY], r.salary);
        tuple_put_i32(row, off[SYNTH_COMMISSION], r.commission);
        tuple_put_i32(row, off[SYNTH_AGE], r.age);
        tuple_put_i32(row, off[SYNTH_ELEVEL], r.elevel);
        tuple_put_i32(row, off[SYNTH_CAR], r.car);
        tuple_put_i32(row, off[SYNTH_ZIPCODE], r.zipcode);
        tuple_put_i32(row, off[SYNTH_HVALUE], r.hvalue);
        tuple_put_i32(row, off[SYNTH_HYEARS], r.hyears);
        tuple_put_i32(row, off[SYNTH_LOAN], r.loan);
        tuple_put_code(row, off[SYNTH_C2], r.c2);
        tuple_put_code(row, off[SYNTH_C7], r.c7);
        /* Both are below 2^53 in magnitude and the division is correctly rounded:
         * the double nearest the decimal text, what strtod gives for the CSV. */
        tuple_put_f64(row, off[SYNTH_R7], (double)r.r7_cents / 100.0);
        tuple_put_f64(row, off[SYNTH_R10], (double)r.r10_cents / 100.0);
        if ((rc = tuple_write(w, row, err)) < 0) goto done;
    }
    if ((rc = tuple_writer_close(w, err)) < 0) goto done;
    st->rows = rows;
    st->bytes = tuple_writer_bytes(w);
    st->blocks = tuple_writer_blocks(w);
done:
    tuple_writer_free(w);
    tuple_schema_clear(&schema);
    return rc;
}

int synth_write(FILE *stream, const char *name, uint64_t rows, uint64_t seed, synth_format format,
                synth_salary salary, size_t block_size, synth_stats *stats, ak_error *err)
{
    synth_stats local;
    synth_stats *st = stats ? stats : &local;
    memset(st, 0, sizeof *st);
    ak_rng rng;
    ak_rng_seed(&rng, seed);
    gsl_api gsl;
    memset(&gsl, 0, sizeof gsl);
    if (salary == SYNTH_SALARY_NORMAL) AK_CHECK(gsl_api_open(&gsl, err));
    const int rc = format == SYNTH_BINARY ? write_binary(stream, name, rows, &rng, salary, &gsl, block_size, st, err)
                                          : write_csv(stream, name, rows, &rng, salary, &gsl, block_size, st, err);
    gsl_api_close(&gsl);
    return rc;
}
