/* hierbuild.c — hierarchy builders (hierbuild.h, docs/hierarchies.md): the
 * flat, mask, date and order builders, and writing, previewing or loading
 * the rows. Reading the columns' distinct values is in hierbuild_collect.c,
 * the interval and quantile builders in hierbuild_num.c. */
#include "core/hierbuild.h"

#include <stdlib.h>
#include <string.h>

#include "common/hugemem.h"
#include "core/hierarchy.h"
#include "core/hierbuild_internal.h"
#include "io/outfile.h"
#include "io/csv.h"

/* ---- rows ---- */

int hb__rows_init(hb_rows *r, uint32_t width, ak_error *err)
{
    /* the arrays of an earlier build kept (hb_build_into), emptied */
    const hb_rows keep = *r;
    memset(r, 0, sizeof *r);
    r->at = keep.at;
    r->cap = keep.cap;
    r->text.data = keep.text.data;
    r->text.cap = keep.text.cap;
    r->width = width;
    (void)err;
    return ANONKIT_OK;
}

int hb__rows_reserve(hb_rows *r, size_t nrows, size_t text_bytes, ak_error *err)
{
    /* first allocations of a known size on huge pages where the system has them (fewer page faults);
     * an empty array kept from an earlier build that is too small is replaced, not grown (nothing to copy) */
    const size_t slots = nrows * r->width;
    if (r->cap < slots && !r->nrows && !r->row) {
        free(r->at);
        r->at = NULL;
        r->cap = 0;
    }
    if (r->text.cap < text_bytes && !r->text.len) strbuf_free(&r->text);
    if (!r->at && nrows && (r->at = ak_huge_malloc(slots * sizeof *r->at))) r->cap = slots;
    if (!r->text.data && text_bytes && (r->text.data = ak_huge_malloc(text_bytes))) r->text.cap = text_bytes;
    if (ak_reserve((void **)&r->at, &r->cap, nrows * r->width, sizeof *r->at) != 0 ||
        strbuf_reserve(&r->text, text_bytes) != 0)
        return ak_err_nomem(err);
    return ANONKIT_OK;
}

int hb__put_prev_grow(hb_rows *r, ak_error *err)
{
    const size_t slot = (size_t)r->nrows * r->width + r->row;
    if (ak_reserve((void **)&r->at, &r->cap, slot + 1, sizeof *r->at) != 0) return ak_err_nomem(err);
    return hb__put_prev(r, err);
}

int hb__text_full(ak_error *err)
{
    return ak_err_set(err, ANONKIT_E_INPUT, NULL, 0, 0,
                      "the hierarchy's labels take more than 4 GiB: too many distinct values for one hierarchy");
}

int hb__put(hb_rows *r, const char *s, size_t len, ak_error *err)
{
    AK_CHECK(hb__label_open(r, len, err));
    memcpy(r->text.data + r->text.len, s, len);
    hb__label_close(r, len);
    return ANONKIT_OK;
}

void hb_rows_free(hb_rows *r)
{
    strbuf_free(&r->text);
    free(r->at);
    memset(r, 0, sizeof *r);
}

int hb__missing_row(hb_rows *r, const hb_values *v, const char *root_label, ak_error *err)
{
    if (!v->nmissing || strmap_find(&v->dict, HB_MISSING_LABEL, strlen(HB_MISSING_LABEL)) != AK_NOT_FOUND)
        return ANONKIT_OK; /* none, or NULL is a value of the data and gets its own row */
    for (uint32_t j = 0; j + 1 < r->width; j++) AK_CHECK(hb__put(r, HB_MISSING_LABEL, strlen(HB_MISSING_LABEL), err));
    return hb__put(r, root_label, strlen(root_label), err);
}

/* Value ids of v sorted by their bytes. */
static int cmp_bytes_ctx(const strmap *m, uint32_t a, uint32_t b)
{
    const uint32_t la = strmap_key_len(m, a), lb = strmap_key_len(m, b);
    int c = memcmp(strmap_key(m, a), strmap_key(m, b), la < lb ? la : lb);
    return c ? c : (la > lb) - (la < lb);
}

/* Merge sort of ids by cmp (stable, no global state for the comparison). */
static void sort_ids(uint32_t *ids, uint32_t *tmp, uint32_t n, const strmap *m)
{
    if (n < 2) return;
    const uint32_t h = n / 2;
    sort_ids(ids, tmp, h, m);
    sort_ids(ids + h, tmp, n - h, m);
    uint32_t i = 0, j = h, k = 0;
    while (i < h && j < n) tmp[k++] = cmp_bytes_ctx(m, ids[j], ids[i]) < 0 ? ids[j++] : ids[i++];
    while (i < h) tmp[k++] = ids[i++];
    while (j < n) tmp[k++] = ids[j++];
    memcpy(ids, tmp, (size_t)n * sizeof *ids);
}

/* The value ids of v in byte order (caller frees). */
static int sorted_ids(const hb_values *v, uint32_t **out, ak_error *err)
{
    const uint32_t n = v->dict.count;
    uint32_t *ids = malloc((n ? n : 1) * sizeof *ids), *tmp = malloc((n ? n : 1) * sizeof *tmp);
    if (!ids || !tmp) {
        free(ids);
        free(tmp);
        return ak_err_nomem(err);
    }
    for (uint32_t i = 0; i < n; i++) ids[i] = i;
    sort_ids(ids, tmp, n, &v->dict);
    free(tmp);
    *out = ids;
    return ANONKIT_OK;
}

/* ---- flat ---- */

static int build_flat(const hb_values *v, hb_rows *r, ak_error *err)
{
    uint32_t *ids;
    AK_CHECK(hb__rows_init(r, 2, err));
    AK_CHECK(sorted_ids(v, &ids, err));
    int rc = hb__missing_row(r, v, "*", err);
    for (uint32_t i = 0; rc == 0 && i < v->dict.count; i++)
        if ((rc = hb__put(r, strmap_key(&v->dict, ids[i]), strmap_key_len(&v->dict, ids[i]), err)) == 0)
            rc = hb__put(r, "*", 1, err);
    free(ids);
    return rc;
}

/* ---- mask ---- */

static int build_mask(const hb_values *v, const hb_options *o, hb_rows *r, ak_error *err)
{
    const uint32_t n = v->dict.count;
    if (n == 0) return ak_err_set(err, ANONKIT_E_USAGE, v->file, 0, 0, "--mask: the column has no values to mask");
    uint32_t *ids;
    AK_CHECK(sorted_ids(v, &ids, err));
    const uint32_t len = strmap_key_len(&v->dict, ids[0]);
    for (uint32_t i = 0; i < n; i++) {
        const uint32_t l = strmap_key_len(&v->dict, i);
        if (l != len) {
            int rc = ak_err_set(err, ANONKIT_E_INPUT, v->file, v->line[i], 0,
                                "--mask needs values of equal length: '%s' has %u characters, '%s' (line %ld) has %u",
                                AK_SHOW(strmap_key(&v->dict, i), l), l, AK_SHOW(strmap_key(&v->dict, ids[0]), len),
                                v->line[ids[0]], len);
            free(ids);
            return rc;
        }
    }
    const uint32_t levels = o->levels ? o->levels : len;
    if (levels > len) {
        free(ids);
        return ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0, "--levels %u: the values have only %u characters to mask",
                          levels, len);
    }
    const int extra_root = levels < len; /* the top masks all characters, else a "*" above */
    AK_CHECK(hb__rows_init(r, levels + 1 + (uint32_t)extra_root, err));
    char *buf = malloc(len + 1);
    char *stars = malloc(len + 1);
    if (!buf || !stars) {
        free(buf);
        free(stars);
        free(ids);
        return ak_err_nomem(err);
    }
    memset(stars, '*', len);
    stars[len] = '\0';
    int rc = hb__missing_row(r, v, extra_root ? "*" : stars, err);
    for (uint32_t i = 0; rc == 0 && i < n; i++) {
        memcpy(buf, strmap_key(&v->dict, ids[i]), len);
        rc = hb__put(r, buf, len, err);
        for (uint32_t l = 1; rc == 0 && l <= levels; l++) {
            buf[len - l] = '*';
            rc = hb__put(r, buf, len, err);
        }
        if (rc == 0 && extra_root) rc = hb__put(r, "*", 1, err);
    }
    free(buf);
    free(stars);
    free(ids);
    return rc;
}

/* ---- dates ---- */

int hb_parse_date_level(const char *name, size_t len, hb_date_level *out)
{
    static const char *const names[] = {"minute", "hour", "day",    "month",  "quarter",
                                        "year",   "decade", "century", "week"};
    for (int i = 0; i < 9; i++)
        if (strlen(names[i]) == len && memcmp(names[i], name, len) == 0) {
            *out = (hb_date_level)i;
            return 0;
        }
    return -1;
}

/* A parsed ISO-8601 date or date-time. */
typedef struct hb_date {
    int year, month, day, hour, minute;
    int has_time;
} hb_date;

/* Reads n digits of s at *i into *out. */
static int digits(const char *s, size_t len, size_t *i, int n, int *out)
{
    int v = 0;
    for (int k = 0; k < n; k++, (*i)++) {
        if (*i >= len || s[*i] < '0' || s[*i] > '9') return -1;
        v = v * 10 + (s[*i] - '0');
    }
    *out = v;
    return 0;
}

/* Parses YYYY-MM-DD, optionally followed by 'T' or ' ' and HH:MM (then
 * anything: seconds, fractions, a zone). 0 or -1. */
static int parse_date(const char *s, size_t len, hb_date *d)
{
    static const int mdays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    size_t i = 0;
    memset(d, 0, sizeof *d);
    if (digits(s, len, &i, 4, &d->year) || i >= len || s[i++] != '-' || digits(s, len, &i, 2, &d->month) ||
        i >= len || s[i++] != '-' || digits(s, len, &i, 2, &d->day))
        return -1;
    if (d->month < 1 || d->month > 12 || d->day < 1 || d->day > mdays[d->month - 1]) return -1;
    const int leap = (d->year % 4 == 0 && d->year % 100 != 0) || d->year % 400 == 0;
    if (d->month == 2 && d->day == 29 && !leap) return -1;
    if (i == len) return 0;
    if (s[i] != 'T' && s[i] != ' ') return -1;
    i++;
    if (digits(s, len, &i, 2, &d->hour) || i >= len || s[i++] != ':' || digits(s, len, &i, 2, &d->minute)) return -1;
    if (d->hour > 23 || d->minute > 59) return -1;
    if (i < len && s[i] != ':' && s[i] != 'Z' && s[i] != '+' && s[i] != '-' && s[i] != '.') return -1;
    d->has_time = 1;
    return 0;
}

/* Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar
 * (Hinnant's days_from_civil). */
static long days_from_civil(int y, int m, int d)
{
    y -= m <= 2;
    const long era = (y >= 0 ? y : y - 399) / 400;
    const long yoe = y - era * 400;
    const long doy = (153L * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    const long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

/* The ISO 8601 week of date d: *week in 1..53 of the week-based year *wyear
 * (the year of the week's Thursday). */
static void iso_week(const hb_date *d, int *wyear, int *week)
{
    const long days = days_from_civil(d->year, d->month, d->day);
    const long monday_based = ((days % 7) + 7 + 3) % 7; /* 1970-01-01 was a Thursday: 0 = Monday */
    const long thursday = days - monday_based + 3;
    /* the Thursday's year: the year whose 1 January is at or before it */
    int y = d->year + 1;
    while (days_from_civil(y, 1, 1) > thursday) y--;
    *wyear = y;
    *week = (int)((thursday - days_from_civil(y, 1, 1)) / 7 + 1);
}

/* The label of date d at level l into buf (room for 64 bytes). */
static int date_label(const hb_date *d, hb_date_level l, ak_interval_style style, char *buf)
{
    switch (l) {
    case HB_MINUTE: return snprintf(buf, 64, "%04d-%02d-%02dT%02d:%02d", d->year, d->month, d->day, d->hour, d->minute);
    case HB_HOUR: return snprintf(buf, 64, "%04d-%02d-%02dT%02d", d->year, d->month, d->day, d->hour);
    case HB_DAY: return snprintf(buf, 64, "%04d-%02d-%02d", d->year, d->month, d->day);
    case HB_MONTH: return snprintf(buf, 64, "%04d-%02d", d->year, d->month);
    case HB_QUARTER: return snprintf(buf, 64, "%04d-Q%d", d->year, (d->month - 1) / 3 + 1);
    case HB_YEAR: return snprintf(buf, 64, "%04d", d->year);
    case HB_WEEK: {
        int wyear, week;
        iso_week(d, &wyear, &week);
        return snprintf(buf, 64, "%04d-W%02d", wyear, week);
    }
    case HB_DECADE:
    case HB_CENTURY: {
        const int span = l == HB_DECADE ? 10 : 100, lo = d->year / span * span;
        return style == AK_INTERVAL_BRACKET ? snprintf(buf, 64, "[%04d, %04d]", lo, lo + span - 1)
                                            : snprintf(buf, 64, "%04d-%04d", lo, lo + span - 1);
    }
    }
    return 0;
}

/* Orders dates in time, then by their text. */
typedef struct date_key {
    long long when; /* minutes from year 0, by calendar fields */
    uint32_t id;
} date_key;

static int cmp_date_key(const void *a, const void *b)
{
    const date_key *x = a, *y = b;
    if (x->when != y->when) return x->when < y->when ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

static int build_date(const hb_values *v, const hb_options *o, hb_rows *r, ak_error *err)
{
    if (o->ndates == 0) return ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0, "--date: give at least one level");
    for (size_t i = 0; i < o->ndates; i++)
        if (o->dates[i] == HB_WEEK && (i + 1 != o->ndates || (i && o->dates[i - 1] > HB_DAY)))
            return ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0,
                              "--date: week is the top level (an ISO week may cross a month, a quarter and a year), "
                              "above minute, hour or day only");
    for (size_t i = 1; i < o->ndates; i++)
        if (o->dates[i] <= o->dates[i - 1])
            return ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0,
                              "--date: levels go from fine to coarse (minute, hour, day, month, quarter, year, "
                              "decade, century; week above minute, hour or day), each once");
    const uint32_t n = v->dict.count;
    date_key *keys = malloc((n ? n : 1) * sizeof *keys);
    hb_date *dates = malloc((n ? n : 1) * sizeof *dates);
    if (!keys || !dates) {
        free(keys);
        free(dates);
        return ak_err_nomem(err);
    }
    int rc = ANONKIT_OK;
    uint32_t bad = UINT32_MAX; /* the bad value on the earliest line */
    for (uint32_t i = 0; i < n; i++) {
        const int parsed = parse_date(strmap_key(&v->dict, i), strmap_key_len(&v->dict, i), &dates[i]) == 0;
        if ((!parsed || (o->dates[0] <= HB_HOUR && !dates[i].has_time)) && (bad == UINT32_MAX || v->line[i] < v->line[bad]))
            bad = i;
        const hb_date *d = &dates[i];
        keys[i].when = ((((long long)d->year * 12 + d->month) * 31 + d->day) * 24 + d->hour) * 60 + d->minute;
        keys[i].id = i;
    }
    if (bad != UINT32_MAX) {
        const char *s = strmap_key(&v->dict, bad);
        hb_date d;
        if (parse_date(s, strmap_key_len(&v->dict, bad), &d) != 0)
            rc = ak_err_set(err, ANONKIT_E_INPUT, v->file, v->line[bad], 0,
                            "--date: '%s' is not an ISO-8601 date (YYYY-MM-DD, optionally followed by THH:MM)",
                            AK_SHOW(s, strmap_key_len(&v->dict, bad)));
        else
            rc = ak_err_set(err, ANONKIT_E_INPUT, v->file, v->line[bad], 0,
                            "--date: '%s' has no time of day, so it has no %s", s,
                            o->dates[0] == HB_MINUTE ? "minute" : "hour");
    }
    if (rc == 0) {
        qsort(keys, n, sizeof *keys, cmp_date_key);
        const uint32_t levels = (uint32_t)o->ndates;
        /* the top level needs one label, else a "*" above it */
        char first[64], label[64];
        int one_top = 1;
        for (uint32_t i = 0; i < n && one_top; i++) {
            date_label(&dates[keys[i].id], o->dates[levels - 1], o->style, label);
            if (i == 0) memcpy(first, label, sizeof first);
            else one_top = strcmp(first, label) == 0;
        }
        const int extra_root = !(one_top && n > 0 && !v->nmissing);
        rc = hb__rows_init(r, levels + 1 + (uint32_t)extra_root, err);
        if (rc == 0) rc = hb__missing_row(r, v, "*", err);
        for (uint32_t i = 0; rc == 0 && i < n; i++) {
            const uint32_t id = keys[i].id;
            rc = hb__put(r, strmap_key(&v->dict, id), strmap_key_len(&v->dict, id), err);
            for (uint32_t l = 0; rc == 0 && l < levels; l++) {
                const int len = date_label(&dates[id], o->dates[l], o->style, label);
                rc = hb__put(r, label, (size_t)len, err);
            }
            if (rc == 0 && extra_root) rc = hb__put(r, "*", 1, err);
        }
    }
    free(keys);
    free(dates);
    return rc;
}

/* ---- an ordered list of categories ---- */

static int build_order(const hb_values *v, const hb_options *o, hb_rows *r, ak_error *err)
{
    const size_t n = o->norder;
    if (n == 0) return ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0, "--order: give the categories in order");
    for (size_t i = 0; i < o->nfanout; i++)
        if (o->fanout[i] < 2)
            return ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0, "--fanout: every fan-out must be at least 2, got %u",
                              o->fanout[i]);
    strmap listed;
    if (strmap_init(&listed, n) != 0) return ak_err_nomem(err);
    int rc = ANONKIT_OK;
    for (size_t i = 0; i < n && rc == 0; i++) {
        int inserted;
        uint32_t id;
        if (!*o->order[i]) rc = ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0, "--order: category %zu is empty", i + 1);
        else if (strmap_intern(&listed, o->order[i], strlen(o->order[i]), &id, &inserted) != 0) rc = ak_err_nomem(err);
        else if (!inserted)
            rc = ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0, "--order: '%s' is listed twice", o->order[i]);
    }
    /* values of the data not in the list: up to 10 with their lines */
    char msg[900];
    size_t used = 0, shown = 0;
    uint64_t unknown = 0;
    long first_line = 0;
    for (uint32_t i = 0; rc == 0 && i < v->dict.count; i++) {
        const char *s = strmap_key(&v->dict, i);
        const uint32_t len = strmap_key_len(&v->dict, i);
        if (strmap_find(&listed, s, len) != AK_NOT_FOUND) continue;
        if (!unknown++) first_line = v->line[i];
        if (shown < 10 && used < sizeof msg) {
            int k = snprintf(msg + used, sizeof msg - used, "%s'%s' (line %ld)", shown ? ", " : "", AK_SHOW(s, len),
                             v->line[i]);
            if (k > 0) used += (size_t)k;
            shown++;
        }
    }
    if (rc == 0 && unknown)
        rc = ak_err_set(err, ANONKIT_E_INPUT, v->file, first_line, 0,
                        "--order does not list %llu value%s of the column: %s%s; add %s to the list",
                        (unsigned long long)unknown, unknown > 1 ? "s" : "", msg, unknown > shown ? ", ..." : "",
                        unknown > 1 ? "them" : "it");
    strmap_free(&listed);
    if (rc < 0) return rc;
    /* group g of level l covers list entries [g * span_l, (g + 1) * span_l) */
    const uint32_t levels = (uint32_t)o->nfanout;
    size_t span = 1, top_span = 1;
    for (uint32_t l = 0; l < levels; l++) top_span *= o->fanout[l];
    const int extra_root = !(levels > 0 && top_span >= n && !v->nmissing) || levels == 0;
    AK_CHECK(hb__rows_init(r, levels + 1 + (uint32_t)extra_root, err));
    AK_CHECK(hb__missing_row(r, v, "*", err));
    strbuf label = {0};
    for (size_t i = 0; i < n && rc == 0; i++) {
        rc = hb__put(r, o->order[i], strlen(o->order[i]), err);
        span = 1;
        for (uint32_t l = 0; rc == 0 && l < levels; l++) {
            span *= o->fanout[l];
            const size_t lo = i / span * span, hi = lo + span - 1 < n - 1 ? lo + span - 1 : n - 1;
            label.len = 0;
            if (lo == hi) {
                if (strbuf_append(&label, o->order[lo], strlen(o->order[lo])) != 0) rc = ak_err_nomem(err);
            } else if (strbuf_append(&label, "[", 1) != 0 || strbuf_append(&label, o->order[lo], strlen(o->order[lo])) ||
                       strbuf_append(&label, ", ", 2) != 0 ||
                       strbuf_append(&label, o->order[hi], strlen(o->order[hi])) != 0 ||
                       strbuf_append(&label, "]", 1) != 0) {
                rc = ak_err_nomem(err);
            }
            if (rc == 0) rc = hb__put(r, label.data, label.len, err);
        }
        if (rc == 0 && extra_root) rc = hb__put(r, "*", 1, err);
    }
    strbuf_free(&label);
    return rc;
}

int hb_build(hb_values *v, const hb_options *o, hb_rows *rows, ak_error *err)
{
    memset(rows, 0, sizeof *rows);
    return hb_build_into(v, o, rows, err);
}

int hb_build_into(hb_values *v, const hb_options *o, hb_rows *rows, ak_error *err)
{
    AK_CHECK(hb__rows_init(rows, 0, err)); /* (no rows yet: those of an earlier build are dropped, not its arrays) */
    int rc = ANONKIT_OK;
    /* the numeric builders read the integers counted by value in place; the others want text */
    if (v->bits && o->kind != HB_INTERVAL)
        return ak_err_set(err, ANONKIT_E_INTERNAL, NULL, 0, 0, "values collected for the interval builder only");
    if (o->kind != HB_INTERVAL && o->kind != HB_QUANTILES) AK_CHECK(hb__fold_dense(v, err));
    switch (o->kind) {
    case HB_FLAT: rc = build_flat(v, rows, err); break;
    case HB_INTERVAL: rc = hb__build_interval(v, o, rows, err); break;
    case HB_QUANTILES: rc = hb__build_quantiles(v, o, rows, err); break;
    case HB_MASK: rc = build_mask(v, o, rows, err); break;
    case HB_DATE: rc = build_date(v, o, rows, err); break;
    case HB_ORDER: rc = build_order(v, o, rows, err); break;
    default: rc = ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0, "no builder chosen"); break;
    }
    if (rc == 0 && rows->nrows == 0)
        rc = ak_err_set(err, ANONKIT_E_INPUT, v->file, 0, 0, "the column has no values: there is nothing to build");
    if (rc < 0) hb_rows_free(rows);
    return rc;
}

/* ---- using the rows ---- */

/* The first byte in memory is the lowest of a word read there (hb_write's search for a NUL 8 bytes at a time). */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define HB_LITTLE_ENDIAN 1
#else
#define HB_LITTLE_ENDIAN 0
#endif

int hb_level_sizes(const hb_rows *r, uint64_t *sizes, ak_error *err)
{
    /* rows come in tree order, so the rows of one label are consecutive on every level */
    (void)err;
    for (uint32_t l = 0; l < r->width; l++) {
        sizes[l] = 0;
        for (uint32_t i = 0; i < r->nrows; i++)
            if (i == 0 || (r->at[(size_t)i * r->width + l] != r->at[(size_t)(i - 1) * r->width + l] &&
                           strcmp(hb_label(r, i, l), hb_label(r, i - 1, l)) != 0))
                sizes[l]++;
    }
    return ANONKIT_OK;
}

int hb_write(const hb_rows *r, FILE *f, const char *path, ak_error *err)
{
    /* lines into one buffer, written whenever it holds 256 KiB (it stays in
     * the second-level cache, and a hierarchy's writing faults in 64 pages
     * of it, not the 1,024 of 4 MiB). Consecutive rows mostly share every
     * label above the leaf (the same offsets: the values of one interval):
     * those labels are escaped and joined once, with their ';', into
     * `tail`, and copied from there while they stay the same */
    const size_t flush_at = (size_t)1 << 18, behind_every = (size_t)1 << 22;
    uint64_t synced = 0; /* (outfile_write_behind: written to disk up to there) */
    size_t unsynced = 0; /* bytes written since the last outfile_write_behind */
    strbuf out = {0}, tail = {0};
    int rc = strbuf_reserve(&out, flush_at + 4096) == 0 && strbuf_reserve(&tail, 64) == 0 ? ANONKIT_OK : ak_err_nomem(err);
    for (uint32_t i = 0; i < r->nrows && rc == 0; i++) {
        const uint32_t *at = r->at + (size_t)i * r->width;
        if (i == 0 || !hb__same_offsets(at + 1, at + 1 - r->width, r->width - 1)) {
            tail.len = 0;
            for (uint32_t l = 1; l < r->width; l++) {
                const char *s = r->text.data + at[l];
                const size_t len = strlen(s);
                if (strbuf_reserve(&tail, csv_escaped_max(len) + 1) != 0) {
                    rc = ak_err_nomem(err);
                    break;
                }
                tail.data[tail.len++] = ';';
                if (r->plain) {
                    memcpy(tail.data + tail.len, s, len);
                    tail.len += len;
                } else {
                    tail.len += csv_escape(tail.data + tail.len, s, len, ';');
                }
            }
            if (rc < 0) break;
        }
        const char *s = r->text.data + at[0];
        size_t len;
        if (HB_LITTLE_ENDIAN && r->plain && at[0] + 16 <= r->text.len) {
            /* a number written by the builder, mostly under 16 bytes: its first 16 (within the labels)
               copied as they are, its length from where the first NUL is among them */
            uint64_t a, b;
            memcpy(&a, s, 8);
            memcpy(&b, s + 8, 8);
            const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
            const uint64_t za = (a - ones) & ~a & highs, zb = (b - ones) & ~b & highs;
            len = za ? (size_t)__builtin_ctzll(za) >> 3 : zb ? 8 + ((size_t)__builtin_ctzll(zb) >> 3) : strlen(s);
            if (strbuf_reserve(&out, len + 16 + tail.len + 1) != 0) {
                rc = ak_err_nomem(err);
                break;
            }
            if (len < 16) {
                memcpy(out.data + out.len, &a, 8);
                memcpy(out.data + out.len + 8, &b, 8);
            } else {
                memcpy(out.data + out.len, s, len);
            }
            out.len += len;
        } else if ((len = strlen(s)), strbuf_reserve(&out, csv_escaped_max(len) + tail.len + 1) != 0) {
            rc = ak_err_nomem(err);
            break;
        } else if (r->plain) {
            memcpy(out.data + out.len, s, len);
            out.len += len;
        } else {
            out.len += csv_escape(out.data + out.len, s, len, ';');
        }
        if (tail.len <= 64 && tail.cap >= 64 && out.cap - out.len >= 64) /* (a fixed size: a few moves) */
            memcpy(out.data + out.len, tail.data, 64);
        else if (tail.len)
            memcpy(out.data + out.len, tail.data, tail.len);
        out.len += tail.len;
        out.data[out.len++] = '\n';
        if (out.len >= flush_at || i + 1 == r->nrows) {
            if (fwrite(out.data, 1, out.len, f) != out.len)
                rc = ak_err_set(err, ANONKIT_E_IO, path, 0, 0, "cannot write the hierarchy");
            unsynced += out.len;
            out.len = 0;
            /* every 4 MiB the disk write of what came before started, not waited for: the
             * commit's fsync then finds most of a large hierarchy on disk already */
            if (rc == 0 && i + 1 < r->nrows && unsynced >= behind_every) {
                outfile_write_behind(f, &synced);
                unsynced = 0;
            }
        }
    }
    strbuf_free(&tail);
    strbuf_free(&out);
    return rc;
}

int hb_to_hier(const hb_rows *r, const char *name, hier **out, ak_error *err)
{
    hier_builder *b;
    AK_CHECK(hier_builder_open(&b, name, err));
    csv_field *fields = malloc(r->width * sizeof *fields);
    if (!fields) {
        hier_builder_free(b);
        return ak_err_nomem(err);
    }
    int rc = ANONKIT_OK;
    for (uint32_t i = 0; i < r->nrows && rc == 0; i++) {
        for (uint32_t l = 0; l < r->width; l++) {
            fields[l].data = hb_label(r, i, l);
            fields[l].len = (uint32_t)strlen(fields[l].data);
        }
        rc = hier_builder_add(b, fields, r->width, (long)i + 1, err);
    }
    free(fields);
    if (rc < 0) {
        hier_builder_free(b);
        return rc;
    }
    return hier_builder_finish(b, out, err);
}

int hb_flat_hier(const char *path, const char *shown, char delimiter, const char *column, const hb_missing *missing,
                 hier **out, uint32_t *nvalues, ak_error *err)
{
    hb_values v;
    AK_CHECK(hb_collect(&v, path, shown, delimiter, column, missing, err));
    hb_rows rows;
    const hb_options o = {.kind = HB_FLAT};
    int rc = hb_build(&v, &o, &rows, err);
    if (rc == 0) {
        char name[600];
        snprintf(name, sizeof name, "%s=auto", column);
        rc = hb_to_hier(&rows, name, out, err);
        *nvalues = rows.nrows;
        hb_rows_free(&rows);
    }
    hb_values_free(&v);
    return rc;
}
