/* fuzz_anonymize.c — libFuzzer harness for the whole anonymize path: the
 * input's first bytes choose an algorithm (every one anonkit has), k, l and
 * its variant, threads, the order kept or not and the way numbers are
 * published; the rest are rows of a small table (two numeric QIs, one
 * categorical QI under a hierarchy, a sensitive column, a class column, an
 * identifier). Whatever anonymize publishes must pass the independent
 * verifier with every row accounted for; when it refuses, the status must not
 * say "internal error" and nothing may be left at the output path. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "anonkit/anonkit.h"
#include "fuzz_util.h"
#include "io/csv.h"

static char dir[4096], in_path[4200], out_path[4200], hier_path[3][4200]; /* c's, a's, b's */

static const char *const algorithms[] = {"mondrian",  "mondrian",      "rothko-t",  "rothko-s",      "incognito",
                                         "hilbert",   "hilbert-fast",  "idistance", "idistance-fast"};
static const char *const variants[] = {"distinct", "entropy", "recursive", "probabilistic"};

static void setup(void)
{
    snprintf(dir, sizeof dir, "%s", fuzz_path(NULL));
    snprintf(in_path, sizeof in_path, "%s/in.csv", dir);
    snprintf(out_path, sizeof out_path, "%s/out.csv", dir);
    for (int i = 0; i < 3; i++) snprintf(hier_path[i], sizeof hier_path[i], "%s/%c.csv", dir, "cab"[i]);
    FILE *h = fopen(hier_path[0], "w");
    if (!h) abort();
    fputs("v0;g0;*\nv1;g0;*\nv2;g1;*\nv3;g1;*\nv4;g2;*\nv5;g2;*\n", h);
    fclose(h);
    /* intervals for the numeric a (0..255) and b (0..7), as Incognito needs */
    if (!(h = fopen(hier_path[1], "w"))) abort();
    for (int v = 0; v < 256; v++) fprintf(h, "%d;%d-%d;%d-%d;*\n", v, v / 16 * 16, v / 16 * 16 + 15, v / 64 * 64, v / 64 * 64 + 63);
    fclose(h);
    if (!(h = fopen(hier_path[2], "w"))) abort();
    for (int v = 0; v < 8; v++) fprintf(h, "%d;%d-%d;*\n", v, v / 4 * 4, v / 4 * 4 + 3);
    fclose(h);
}

static void must(anonkit_job *job, anonkit_option option, const char *value)
{
    if (anonkit_job_set(job, option, value) != ANONKIT_OK) {
        fprintf(stderr, "setting %s to %s: %s\n", anonkit_option_name(option), value, anonkit_errmsg(job));
        abort();
    }
}

/* Row r's value of a as written: an integer, or (with data[3]'s top bit)
 * sometimes negative, a decimal or in e-notation. */
static void a_text_of(const uint8_t *data, const uint8_t *r, char *text, size_t size)
{
    const unsigned v = r[0] ^ data[3], form = data[3] & 0x80 ? (r[1] >> 3) & 3 : 0;
    if (form == 0) snprintf(text, size, "%u", v);
    else if (form == 1) snprintf(text, size, "-%u", v);
    else if (form == 2) snprintf(text, size, "%u.%u", v / 10, v % 10);
    else snprintf(text, size, "%ue-1", v);
}

/* Whether the published text of a numeric QI — a value, or "lo-hi" (or
 * "lo - hi", the form used when a bound is negative) where either may be
 * negative or in e-notation — covers v. */
static int covers_number(const char *text, size_t len, double v)
{
    char buf[128];
    if (len == 1 && text[0] == '*') return 1;
    if (len >= sizeof buf) return 0;
    memcpy(buf, text, len);
    buf[len] = 0;
    char *end;
    double x = strtod(buf, &end);
    if (*end == 0 && end != buf) return x == v;
    for (size_t k = 1; k + 1 < len; k++) { /* every '-' that may part the two bounds */
        if (buf[k] != '-') continue;
        buf[k] = 0;
        const double lo = strtod(buf, &end);
        const int lo_ok = end != buf && (*end == 0 || !strcmp(end, " "));
        const char *h = buf + k + 1;
        if (*h == ' ') h++;
        const double hi = strtod(h, &end);
        const int hi_ok = *end == 0 && end != h && *h != ' ';
        buf[k] = '-';
        if (lo_ok && hi_ok && lo <= v && v <= hi) return 1;
    }
    return 0;
}

/* Whether label (of the hierarchy of c, or a, b's interval hierarchies, or
 * the value itself) is the leaf or one of its ancestors. */
static int covers_label(const char *text, size_t len, unsigned leaf)
{
    static const char *const up[6] = {"g0", "g0", "g1", "g1", "g2", "g2"};
    char want[8];
    snprintf(want, sizeof want, "v%u", leaf);
    return (len == strlen(want) && !memcmp(text, want, len)) || (len == 2 && !memcmp(text, up[leaf], 2)) ||
           (len == 1 && text[0] == '*');
}

/* The published rows, in input order (--keep-order, nothing suppressed), are
 * truthful: each QI's published text covers the row's own value. */
static void check_truthful(const uint8_t *data, size_t rows)
{
    csv_reader *reader = NULL;
    ak_error err;
    if (csv_reader_open(&reader, out_path, ',', &err) < 0) abort();
    csv_record rec;
    if (csv_read(reader, &rec, &err) != 1) abort(); /* the header: a,b,c,s,cls */
    for (size_t i = 0; i < rows; i++) {
        if (csv_read(reader, &rec, &err) != 1 || rec.count != 5) abort();
        const uint8_t *r = data + 4 + 3 * i;
        char a_text[32];
        a_text_of(data, r, a_text, sizeof a_text);
        const double a = strtod(a_text, NULL);
        const int ok = covers_number(rec.fields[0].data, rec.fields[0].len, a) &&
                       covers_number(rec.fields[1].data, rec.fields[1].len, r[1] % 8) &&
                       covers_label(rec.fields[2].data, rec.fields[2].len, r[2] % 6);
        if (!ok) {
            fprintf(stderr, "row %zu (a %g, b %u, c v%u) published as %.*s, %.*s, %.*s\n", i, a, r[1] % 8, r[2] % 6,
                    (int)rec.fields[0].len, rec.fields[0].data, (int)rec.fields[1].len, rec.fields[1].data,
                    (int)rec.fields[2].len, rec.fields[2].data);
            abort();
        }
    }
    if (csv_read(reader, &rec, &err) != 0) abort();
    csv_reader_free(reader);
}

/* The model and columns shared by anonymize and check. */
static void set_model(anonkit_job *job, unsigned k, unsigned l, const char *variant)
{
    char num[32];
    must(job, ANONKIT_OPT_QI, "a,b,c");
    snprintf(num, sizeof num, "%u", k);
    must(job, ANONKIT_OPT_K, num);
    if (l) {
        must(job, ANONKIT_OPT_SENSITIVE, "s");
        snprintf(num, sizeof num, "%u", l);
        must(job, ANONKIT_OPT_L, num);
        must(job, ANONKIT_OPT_L_VARIANT, variant);
        if (!strcmp(variant, "recursive")) must(job, ANONKIT_OPT_C, "2");
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 4) return 0;
    if (!dir[0]) setup();
    const unsigned algorithm = data[0] % (sizeof algorithms / sizeof *algorithms);
    const unsigned k = 1 + data[1] % 6, l = (data[1] >> 3) % 3 ? 1 + (data[1] >> 3) % 3 : 0;
    const unsigned flags = data[2];
    /* (the 1-D algorithms have probabilistic l-diversity only: mostly that) */
    const char *variant = algorithm >= 5 && !(flags & 64) ? "probabilistic" : variants[(data[1] >> 5) & 3];
    /* data[0] from 0xf0 on: the bytes after the first four are the table's
     * text as they are (under the header), so that odd CSV reaches every
     * algorithm too; else each 3 bytes make a row */
    const int raw = data[0] >= 0xf0;
    const size_t rows = raw ? 0 : (size - 4) / 3;
    FILE *f = fopen(in_path, "w");
    if (!f) abort();
    fputs("id,a,b,c,s,cls\n", f);
    if (raw && fwrite(data + 4, 1, size - 4, f) != size - 4) abort();
    for (size_t i = 0; i < rows; i++) {
        const uint8_t *r = data + 4 + 3 * i;
        char a_text[32];
        a_text_of(data, r, a_text, sizeof a_text);
        fprintf(f, "p%zu,%s,%u,v%u,s%u,%s\n", i, a_text, r[1] % 8, r[2] % 6, (r[2] >> 3) % 4, r[1] & 0x80 ? "yes" : "no");
    }
    fclose(f);
    char hier_opt[3][4300];
    for (int i = 0; i < 3; i++) snprintf(hier_opt[i], sizeof hier_opt[i], "%c=%s", "cab"[i], hier_path[i]);

    anonkit_job *job = anonkit_job_create();
    if (!job) abort();
    must(job, ANONKIT_OPT_INPUT, in_path);
    must(job, ANONKIT_OPT_OUTPUT, out_path);
    must(job, ANONKIT_OPT_IDENTIFIER, "id");
    set_model(job, k, l, variant);
    must(job, ANONKIT_OPT_HIERARCHY, hier_opt[0]);
    /* a and b under interval hierarchies: always for Incognito, else sometimes (then categorical);
     * a's hierarchy has the integers 0..255 only */
    const int suppress = algorithm == 4 && (flags & 32);
    if (algorithm == 4 || ((flags & 32) && !(data[3] & 0x80))) {
        must(job, ANONKIT_OPT_HIERARCHY, hier_opt[1]);
        must(job, ANONKIT_OPT_HIERARCHY, hier_opt[2]);
    }
    must(job, ANONKIT_OPT_ALGORITHM, algorithms[algorithm]);
    must(job, ANONKIT_OPT_THREADS, flags & 1 ? "2" : "1");
    must(job, ANONKIT_OPT_SEED, "7");
    if (flags & 2) must(job, ANONKIT_OPT_KEEP_ORDER, "true");
    if ((flags & 0xc4) == 0xc4) must(job, ANONKIT_OPT_NUMERIC, "c"); /* its labels are not numbers: an input error */
    if (algorithm == 1) {
        must(job, ANONKIT_OPT_SPLIT, "infogain");
        must(job, ANONKIT_OPT_CLASS, "cls");
    }
    if (algorithm == 2 || algorithm == 3) {
        must(job, ANONKIT_OPT_MEMORY, flags & 8 ? "32K" : "64K");
        must(job, ANONKIT_OPT_BLOCK_SIZE, "1K");
        must(job, ANONKIT_OPT_TMPDIR, dir);
    }
    if (algorithm == 3) must(job, ANONKIT_OPT_SAMPLE_SIZE, flags & 16 ? "8" : "40");
    if (suppress) must(job, ANONKIT_OPT_SUPPRESSION, "0.1");
    if (algorithm >= 5 && (flags & 16)) must(job, ANONKIT_OPT_MEMORY, "64K"); /* the external sort */
    anonkit_result *res = NULL;
    const int rc = anonkit_anonymize(job, &res);
    if (rc == ANONKIT_OK) {
        const uint64_t read = anonkit_result_rows_read(res), published = anonkit_result_rows_published(res),
                       suppressed = anonkit_result_rows_suppressed(res);
        if ((!raw && read != rows) || published + suppressed != read) {
            fprintf(stderr, "%s: %zu rows in, read %llu, published %llu, suppressed %llu\n", algorithms[algorithm],
                    rows, (unsigned long long)read, (unsigned long long)published,
                    (unsigned long long)suppressed);
            abort();
        }
        anonkit_job *check = anonkit_job_create();
        if (!check) abort();
        set_model(check, k, l, variant);
        if (suppress) must(check, ANONKIT_OPT_SUPPRESSION, "0.1");
        anonkit_result *checked_result = NULL;
        const int verdict = anonkit_check(check, out_path, &checked_result);
        const uint64_t checked = anonkit_result_rows_read(checked_result);
        anonkit_result_free(checked_result);
        if (verdict != ANONKIT_OK) {
            fprintf(stderr, "%s (k %u, l %u %s): the verifier refused the output: %s\n", algorithms[algorithm], k, l,
                    variant, anonkit_errmsg(check));
            abort();
        }
        if (checked != published + (algorithm == 4 ? suppressed : 0) && checked != published) {
            fprintf(stderr, "%s: published %llu rows, the verifier saw %llu\n", algorithms[algorithm],
                    (unsigned long long)published, (unsigned long long)checked);
            abort();
        }
        anonkit_job_free(check);
        if ((flags & 2) && !raw && suppressed == 0) check_truthful(data, rows);
        unlink(out_path);
    } else {
        if (rc == ANONKIT_E_INTERNAL) {
            fprintf(stderr, "%s: internal error: %s\n", algorithms[algorithm], anonkit_errmsg(job));
            abort();
        }
        if (access(out_path, F_OK) == 0) {
            fprintf(stderr, "%s failed (%s) yet left an output\n", algorithms[algorithm], anonkit_errmsg(job));
            abort();
        }
    }
    anonkit_result_free(res);
    anonkit_job_free(job);
    return 0;
}
