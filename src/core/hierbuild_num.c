/* hierbuild_num.c — the numeric hierarchy builders (hierbuild.h,
 * docs/hierarchies.md): fixed-width intervals grouped by a fan-out per level,
 * with optional bounds whose outside goes to open-ended ranges, and
 * equal-frequency (quantile) intervals grouped likewise. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/hugemem.h"
#include "common/numparse.h"
#include "core/hierbuild_internal.h"

/* A distinct value with its number: ref is a value id of v->dict, or with
 * DENSE_BIT an integer counted by value (v->dense). */
typedef struct num_value {
    double v;
    uint32_t ref;
} num_value;

#define DENSE_BIT 0x80000000u

/* Orders equal numbers by id (their first appearance). */
static int cmp_num(const void *a, const void *b)
{
    const num_value *x = a, *y = b;
    if (x->v != y->v) return x->v < y->v ? -1 : 1;
    return (x->ref > y->ref) - (x->ref < y->ref);
}

/* The decimal text of x into buf (room for 21 bytes), as "%lld" writes it;
 * returns its length. The digits are counted first and written from the
 * end, two at a time, straight into buf. */
static size_t format_int(char *buf, int64_t x)
{
    static const char pairs[] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
                                "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
                                "8081828384858687888990919293949596979899";
    uint64_t u = x < 0 ? 0 - (uint64_t)x : (uint64_t)x;
    size_t k = 0;
    if (x < 0) buf[k++] = '-';
    static const uint64_t pow10[20] = {1ULL, 10ULL, 100ULL, 1000ULL, 10000ULL, 100000ULL, 1000000ULL,
                                       10000000ULL, 100000000ULL, 1000000000ULL, 10000000000ULL,
                                       100000000000ULL, 1000000000000ULL, 10000000000000ULL, 100000000000000ULL,
                                       1000000000000000ULL, 10000000000000000ULL, 100000000000000000ULL,
                                       1000000000000000000ULL, 10000000000000000000ULL};
    /* the digits from the bit length (log10(2) ~ 1233 / 4096), one less below that power of ten */
    const unsigned t = (unsigned)(64 - __builtin_clzll(u | 1)) * 1233 >> 12;
    const size_t digits = t + (t < 20 && (u | 1) >= pow10[t]); /* (0: one digit) */
    const size_t len = k + digits;
    char *p = buf + len;
    while (u > UINT32_MAX) { /* (the digits beyond 32 bits, mostly none) */
        const unsigned d = (unsigned)(u % 100);
        u /= 100;
        *--p = pairs[2 * d + 1];
        *--p = pairs[2 * d];
    }
    uint32_t u32 = (uint32_t)u; /* the rest divided by 100 in 32 bits: a cheaper multiply */
    while (u32 >= 100) {
        const uint32_t d = u32 % 100;
        u32 /= 100;
        *--p = pairs[2 * d + 1];
        *--p = pairs[2 * d];
    }
    if (u32 >= 10) {
        *--p = pairs[2 * u32 + 1];
        *--p = pairs[2 * u32];
    } else {
        *--p = (char)('0' + u32);
    }
    return len;
}

/* The decimal text of the integer leaf before (put_next_int): the next one,
 * mostly a few above it, is written by adding to its last digit (and
 * carrying), not from scratch. Zeroed to start. */
typedef struct dec_text {
    char d[24];
    size_t len;
    uint32_t x;
    int valid;
} dec_text;

/* t turned into the text of x (>= 0); returns its length. */
static inline size_t dec_next(dec_text *t, uint32_t x)
{
    if (t->valid && x > t->x && x - t->x < 10) {
        const unsigned last = (unsigned)(t->d[t->len - 1] - '0') + (x - t->x);
        t->x = x;
        if (last < 10) {
            t->d[t->len - 1] = (char)('0' + last);
            return t->len;
        }
        t->d[t->len - 1] = (char)('0' + last - 10);
        size_t k = t->len - 1;
        while (k > 0 && t->d[k - 1] == '9') t->d[--k] = '0';
        if (k > 0) {
            t->d[k - 1]++;
            return t->len;
        }
        /* (all nines: one digit more, written afresh) */
    }
    t->len = format_int(t->d, x);
    t->x = x;
    t->valid = 1;
    return t->len;
}

/* Appends the decimal text of x (>= 0) as a label, the leaf after that of t (formatted in place). */
#if defined(__GNUC__)
__attribute__((always_inline)) /* (once a leaf: kept in the builders' loops, not called) */
#endif
static inline int put_next_int(hb_rows *r, dec_text *t, uint32_t x, ak_error *err)
{
    AK_CHECK(hb__label_open(r, 32, err)); /* (room for t->d copied whole; the limit as for any leaf) */
    const size_t len = dec_next(t, x);
    memcpy(r->text.data + r->text.len, t->d, sizeof t->d); /* (a fixed size: a few moves) */
    hb__label_close(r, len);
    return ANONKIT_OK;
}

/* Appends the label of the interval [lo, hi] of integers, written in place. */
static int put_int_interval(hb_rows *r, ak_interval_style style, int64_t lo, int64_t hi, ak_error *err)
{
    AK_CHECK(hb__label_open(r, 64, err)); /* (two integers of up to 20 bytes and the brackets) */
    char a[24], b[24];
    const size_t la = format_int(a, lo), lb = format_int(b, hi);
    hb__label_close(r, ak_interval_write(style, a, la, b, lb, r->text.data + r->text.len));
    return ANONKIT_OK;
}

/* The text of value ref of v: a key of v->dict, or the integer written into buf. */
static const char *value_text(const hb_values *v, uint32_t ref, char *buf, size_t *len)
{
    if (ref & DENSE_BIT) {
        *len = format_int(buf, (int64_t)(ref & ~DENSE_BIT));
        return buf;
    }
    *len = strmap_key_len(&v->dict, ref);
    return strmap_key(&v->dict, ref);
}

static uint64_t value_count(const hb_values *v, uint32_t ref)
{
    if (!(ref & DENSE_BIT)) return v->count[ref];
    return v->dense ? v->dense[ref & ~DENSE_BIT] : 1; /* (marked present only: once) */
}

/* The distinct values of v read as text (v->dict), as numbers, ascending
 * (equal numbers in their order of appearance) into *out (caller frees),
 * and the number of integers counted by value into *dense; an error names
 * the first value that is not a number. */
static int sorted_text(const hb_values *v, const char *builder, num_value **out, uint32_t *dense, ak_error *err)
{
    const uint32_t nt = v->dict.count;
    uint32_t nd = 0;
    if (v->dense)
        for (uint32_t x = v->dense_lo; x <= v->dense_hi; x++) nd += v->dense[x] != 0;
    if (v->bits && v->dense_lo <= v->dense_hi)
        for (uint32_t w = v->dense_lo >> 6; w <= v->dense_hi >> 6; w++) nd += (uint32_t)__builtin_popcountll(v->bits[w]);
    num_value *text = malloc((nt ? nt : 1) * sizeof *text);
    if (!text) return ak_err_nomem(err);
    uint32_t bad = UINT32_MAX; /* the value that is no number on the earliest line */
    for (uint32_t i = 0; i < nt; i++) {
        text[i].ref = i;
        if (ak_num_parse(strmap_key(&v->dict, i), strmap_key_len(&v->dict, i), &text[i].v) != 0 &&
            (bad == UINT32_MAX || v->line[i] < v->line[bad]))
            bad = i;
    }
    if (bad != UINT32_MAX) {
        const char *s = strmap_key(&v->dict, bad);
        const uint32_t len = strmap_key_len(&v->dict, bad);
        free(text);
        return ak_err_set(err, ANONKIT_E_INPUT, v->file, v->line[bad], 0,
                          "%s needs numbers, but the column holds '%s'; give it --missing %s if it stands for a "
                          "missing value",
                          builder, AK_SHOW(s, len), AK_SHOW(s, len));
    }
    qsort(text, nt, sizeof *text, cmp_num);
    *out = text;
    *dense = nd;
    return ANONKIT_OK;
}

/* The distinct values of v in ascending order, one at a time (num_next):
 * the values read as text (sorted_text) merged with the integers counted
 * by value (v->dense) or marked present (v->bits), ascending already; at
 * equal numbers the text first (the order they had when all were text in
 * v->dict). No array of all values: the interval builder reads them once. */
typedef struct num_iter {
    const hb_values *v;
    const num_value *text;
    uint32_t nt, t;
    uint32_t x;    /* v->dense: the next integer to look at */
    uint32_t w;    /* v->bits: the word of `word` */
    uint64_t word; /* v->bits: the bits of word w not yet taken */
    int done;      /* no integer left */
} num_iter;

static void num_start(num_iter *it, const hb_values *v, const num_value *text, uint32_t nt)
{
    *it = (num_iter){v, text, nt, 0, v->dense_lo, 0, 0, 1};
    if (v->dense_lo > v->dense_hi || (!v->dense && !v->bits)) return;
    it->done = 0;
    if (v->bits) it->w = v->dense_lo >> 6, it->word = v->bits[it->w];
}

/* The next integer counted by value into *x; 0 when none is left. */
static inline int num_next_dense(num_iter *it, uint32_t *x)
{
    const hb_values *v = it->v;
    if (it->done) return 0;
    if (v->dense) {
        while (it->x <= v->dense_hi && !v->dense[it->x]) it->x++;
        if (it->x > v->dense_hi) return it->done = 1, 0;
        *x = it->x++;
        return 1;
    }
    while (!it->word) {
        if (++it->w > v->dense_hi >> 6) return it->done = 1, 0;
        it->word = v->bits[it->w];
    }
    *x = it->w * 64 + (uint32_t)__builtin_ctzll(it->word);
    it->word &= it->word - 1;
    return 1;
}

/* The next value into *out; 0 after the last. */
#if defined(__GNUC__)
__attribute__((always_inline)) /* (once a value: kept in the builders' loops, not called) */
#endif
static inline int num_next(num_iter *it, num_value *out)
{
    uint32_t x;
    if (it->done || !num_next_dense(it, &x)) {
        if (it->t == it->nt) return 0;
        *out = it->text[it->t++];
        return 1;
    }
    if (it->t < it->nt && it->text[it->t].v <= (double)x) { /* a text value first: x taken again next time */
        *out = it->text[it->t++];
        if (it->v->dense) it->x = x;
        else it->word |= (uint64_t)1 << (x & 63);
        return 1;
    }
    *out = (num_value){(double)x, x | DENSE_BIT};
    return 1;
}

/* The distinct values of v as numbers, ascending (num_next's order) in one
 * array (the quantile builder's bins index it); an error names the first
 * value that is not a number. */
static int sorted_numbers(const hb_values *v, const char *builder, num_value **out, uint32_t *count, ak_error *err)
{
    num_value *text;
    uint32_t nd;
    AK_CHECK(sorted_text(v, builder, &text, &nd, err));
    const uint32_t nt = v->dict.count;
    const size_t n = (size_t)nt + nd;
    num_value *nv = ak_huge_malloc((n ? n : 1) * sizeof *nv);
    if (!nv) {
        free(text);
        return ak_err_nomem(err);
    }
    num_iter it;
    num_start(&it, v, text, nt);
    size_t k = 0;
    while (k < n && num_next(&it, &nv[k])) k++;
    free(text);
    *out = nv;
    *count = (uint32_t)n;
    return ANONKIT_OK;
}

/* Whether d is a whole number that int64 arithmetic keeps exact. */
static int is_whole(double d) { return d == floor(d) && fabs(d) < 1e15; }

/* floor(a / b) for b > 0. */
static int64_t floor_div(int64_t a, int64_t b) { return a / b - (a % b != 0 && a < 0); }

/* d rounded to 15 significant digits (the bounds of decimal bins, so that
 * base + k * width prints as written: 0.3, not 0.30000000000000004). */
static double round15(double d)
{
    char buf[40];
    snprintf(buf, sizeof buf, "%.15g", d);
    return strtod(buf, NULL);
}

/* Appends the label of an open-ended range below lo or from hi up. */
static int open_label(const hb_options *o, int below, double bound, int whole, hb_rows *r, ak_error *err)
{
    char num[32], label[64];
    int n = whole ? snprintf(num, sizeof num, "%lld", (long long)bound) : ak_format_double(num, bound);
    if (o->style == AK_INTERVAL_BRACKET)
        n = below ? snprintf(label, sizeof label, "[-inf, %s[", num) : snprintf(label, sizeof label, "[%s, inf[", num);
    else
        n = snprintf(label, sizeof label, "%s%s", below ? "<" : ">=", num);
    return hb__put(r, label, (size_t)n, err);
}

int hb__build_interval(const hb_values *v, const hb_options *o, hb_rows *r, ak_error *err)
{
    if (!(o->width > 0) || !isfinite(o->width))
        return ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0, "--interval: the width must be a number above 0");
    for (size_t i = 0; i < o->nfanout; i++)
        if (o->fanout[i] < 2)
            return ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0,
                              "--fanout: every fan-out must be at least 2 (a group of one interval is the interval "
                              "itself), got %u",
                              o->fanout[i]);
    if (o->has_min && o->has_max && !(o->min < o->max))
        return ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0, "--min must be below --max");
    num_value *tv; /* the values read as text; the others are taken from v in turn (num_next) */
    uint32_t nd;
    AK_CHECK(sorted_text(v, "--interval", &tv, &nd, err));
    const uint32_t nt = v->dict.count, n = nt + nd;
    int whole = is_whole(o->width) && (!o->has_min || is_whole(o->min)) && (!o->has_max || is_whole(o->max));
    for (uint32_t i = 0; i < nt && whole; i++) whole = is_whole(tv[i].v);
    num_iter it;
    num_start(&it, v, tv, nt);
    num_value first = {0, 0}, cur;
    if (n) {
        num_iter peek = it;
        (void)num_next(&peek, &first);
    }
    const double dmin = first.v;
    const double base = o->has_min ? o->min : floor(dmin / o->width) * o->width;
    const uint32_t levels = 1 + (uint32_t)o->nfanout;
    /* values ascend, so the rows of one interval are consecutive: its label is
     * written once and shared with the rows after it (key[l]: the interval of
     * level l in the row above; place 0: below --min, 1: inside, 2: from --max up) */
    int64_t key[64];
    int place[64];
    for (uint32_t l = 0; l < 64; l++) place[l] = -1;
    int rc = levels > 64 ? ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0, "--fanout: at most 63 levels") : ANONKIT_OK;
    if (rc == 0) rc = hb__rows_init(r, levels + 2, err);
    /* only integers counted by value (no text of the data's own): every label is a number written here and
       fixed punctuation (interval.h's forms, "<", ">=", "*", "NULL"), none to be quoted */
    r->plain = v->dict.count == 0;
    if (rc == 0) rc = hb__rows_reserve(r, (size_t)n + 1, ((size_t)n + 1) * 16, err);
    if (rc == 0) rc = hb__missing_row(r, v, "*", err);
    char text[24];
    size_t tlen;
    dec_text leaf = {{0}, 0, 0, 0};
    int64_t bin_lo = 0, bin_hi = -1; /* whole: the values of the level-0 interval of the row above */
    for (uint32_t i = 0; i < n && rc == 0 && num_next(&it, &cur); i++) {
        const double x = cur.v;
        if (cur.ref & DENSE_BIT) {
            rc = put_next_int(r, &leaf, cur.ref & ~DENSE_BIT, err);
        } else {
            const char *t = value_text(v, cur.ref, text, &tlen);
            rc = hb__put(r, t, tlen, err);
        }
        const int below = o->has_min && x < o->min, above = o->has_max && x >= o->max;
        if (rc == 0 && !below && !above && whole && place[0] == 1 && (int64_t)x >= bin_lo && (int64_t)x <= bin_hi) {
            /* in the interval of the row above: so is every group above it, and the root */
            rc = hb__put_prev_rest(r, err);
            continue;
        }
        if (below || above) {
            for (uint32_t l = 0; l < levels && rc == 0; l++) {
                if (place[l] == (below ? 0 : 2)) {
                    rc = hb__put_prev(r, err);
                    continue;
                }
                place[l] = below ? 0 : 2;
                rc = open_label(o, below, below ? o->min : o->max, whole, r, err);
            }
        } else if (whole) {
            const int64_t w = (int64_t)o->width, b0 = (int64_t)base;
            const int64_t bin = floor_div((int64_t)x - b0, w);
            bin_lo = b0 + bin * w, bin_hi = bin_lo + w - 1; /* (the values this level-0 interval holds) */
            int64_t span = 1;
            for (uint32_t l = 0; l < levels && rc == 0; l++) {
                if (l) span *= o->fanout[l - 1];
                const int64_t g = floor_div(bin, span);
                if (place[l] == 1 && key[l] == g) {
                    rc = hb__put_prev(r, err);
                    continue;
                }
                place[l] = 1;
                key[l] = g;
                const int64_t lo = b0 + g * span * w;
                int64_t hi = lo + span * w - 1;
                if (o->has_max && hi > (int64_t)o->max - 1) hi = (int64_t)o->max - 1;
                rc = put_int_interval(r, o->style, lo, hi, err);
            }
        } else {
            /* half-open bins [bound(k), bound(k + 1)) with bounds rounded to 15 digits */
            double k = floor((x - base) / o->width);
            while (x < round15(base + k * o->width)) k--;
            while (x >= round15(base + (k + 1) * o->width)) k++;
            double span = 1;
            for (uint32_t l = 0; l < levels && rc == 0; l++) {
                if (l) span *= o->fanout[l - 1];
                const double g = floor(k / span) * span;
                if (place[l] == 1 && (double)key[l] == g) {
                    rc = hb__put_prev(r, err);
                    continue;
                }
                place[l] = fabs(g) < 9e15 ? 1 : -1; /* (a group number int64 keeps exactly, else not shared) */
                key[l] = place[l] == 1 ? (int64_t)g : 0;
                const double lo = round15(base + g * o->width);
                double hi = round15(base + (g + span) * o->width);
                if (o->has_max && hi > o->max) hi = o->max;
                char a[32], b[32], label[80];
                const int la = ak_format_double(a, lo), lb = ak_format_double(b, hi);
                const int len = snprintf(label, sizeof label, "[%.*s, %.*s[", la, a, lb, b);
                rc = hb__put(r, label, (size_t)len, err);
            }
        }
        if (rc == 0) rc = i ? hb__put_prev(r, err) : hb__put(r, "*", 1, err);
    }
    free(tv);
    return rc;
}

int hb__build_quantiles(const hb_values *v, const hb_options *o, hb_rows *r, ak_error *err)
{
    if (o->nquantiles == 0 || o->quantiles[0] < 2 || o->quantiles[0] > 1000000)
        return ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0,
                          "--quantiles: the first number (intervals of equal frequency) must be between 2 and 1000000");
    for (size_t i = 1; i < o->nquantiles; i++)
        if (o->quantiles[i] < 2)
            return ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0,
                              "--quantiles: every fan-out after the first number must be at least 2, got %u",
                              o->quantiles[i]);
    num_value *nv = NULL;
    uint32_t n = 0;
    AK_CHECK(sorted_numbers(v, "--quantiles", &nv, &n, err));
    uint32_t *bin = malloc((n ? n : 1) * sizeof *bin), *first = malloc((n ? n : 1) * sizeof *first);
    if (!bin || !first) {
        free(nv);
        free(bin);
        free(first);
        return ak_err_nomem(err);
    }
    uint64_t total = 0;
    for (uint32_t i = 0; i < n; i++) total += value_count(v, nv[i].ref);
    /* value i goes to bin floor(before_i * B / total), equal numbers together;
     * bins then numbered densely, first[b] its first value */
    uint64_t before = 0;
    uint32_t nb = 0;
    uint64_t last_raw = UINT64_MAX;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t raw = (uint64_t)((long double)before * o->quantiles[0] / (long double)total);
        if (i && nv[i].v == nv[i - 1].v) raw = last_raw; /* one number, one bin */
        if (raw != last_raw) first[nb++] = i;
        last_raw = raw;
        bin[i] = nb - 1;
        before += value_count(v, nv[i].ref);
    }
    const uint32_t levels = (uint32_t)o->nquantiles;
    int rc = hb__rows_init(r, levels + 2, err);
    r->plain = v->dict.count == 0; /* (as in hb__build_interval: the labels are integers written here) */
    if (rc == 0) rc = hb__rows_reserve(r, (size_t)n + 1, ((size_t)n + 1) * 16, err);
    if (rc == 0) rc = hb__missing_row(r, v, "*", err);
    /* the rows of one group are consecutive: its label is written once (key[l]:
     * the group of level l in the row above, UINT64_MAX before the first) */
    uint64_t *key = malloc((levels ? levels : 1) * sizeof *key);
    char *label = NULL;
    size_t label_cap = 0;
    if (!key && rc == 0) rc = ak_err_nomem(err);
    for (uint32_t l = 0; rc == 0 && l < levels; l++) key[l] = UINT64_MAX;
    char ta[24], tb[24], tt[24];
    dec_text leaf = {{0}, 0, 0, 0};
    for (uint32_t i = 0; i < n && rc == 0; i++) {
        size_t tlen;
        if (nv[i].ref & DENSE_BIT) {
            rc = put_next_int(r, &leaf, nv[i].ref & ~DENSE_BIT, err);
        } else {
            const char *t = value_text(v, nv[i].ref, tt, &tlen);
            rc = hb__put(r, t, tlen, err);
        }
        uint64_t span = 1;
        for (uint32_t l = 0; l < levels && rc == 0; l++) {
            if (l) span *= o->quantiles[l];
            const uint64_t g0 = bin[i] / span * span, g1 = g0 + span < nb ? g0 + span : nb; /* bins [g0, g1) */
            if (key[l] == g0) {
                rc = hb__put_prev(r, err);
                continue;
            }
            key[l] = g0;
            const uint32_t lo = first[g0], hi = g1 < nb ? first[g1] - 1 : n - 1;
            size_t la, lb;
            const char *a = value_text(v, nv[lo].ref, ta, &la), *b = value_text(v, nv[hi].ref, tb, &lb);
            if (ak_reserve((void **)&label, &label_cap, la + lb + 8, 1) != 0) {
                rc = ak_err_nomem(err);
                break;
            }
            rc = hb__put(r, label, ak_interval_write(o->style, a, la, b, lb, label), err);
        }
        if (rc == 0) rc = i ? hb__put_prev(r, err) : hb__put(r, "*", 1, err);
    }
    free(label);
    free(key);
    free(nv);
    free(bin);
    free(first);
    return rc;
}
