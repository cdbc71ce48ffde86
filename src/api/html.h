/* html.h (api) — the release report as one self-contained HTML file
 * (docs/report.md): what `anonymize --html` and `anonkit report` hand to the
 * renderer, the scan of a CSV file for its class sizes and value
 * distributions (html_data.c), the inline SVG charts (html_svg.c) and the
 * document itself (html_report.c). The document is built from the JSON object
 * of the run's report, so every figure it prints is the JSON's. */
#ifndef AK_API_HTML_H
#define AK_API_HTML_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "api/job.h"
#include "common/error.h"
#include "common/hash.h"
#include "io/outfile.h"
#include "io/sha256.h"

/* Where the document is written: a stream, and whether any write to it
 * failed (a failed write need not set the stream's error flag) or memory ran
 * out while it was composed; html_report_write checks both at its end. */
typedef struct hw {
    FILE *f;
    int failed; /* a write failed */
    int nomem;  /* an allocation failed: a part is missing */
} hw;

/* Writes to w, remembering a failure (the arguments of fputs, fputc, fprintf). */
void hw_puts(const char *s, hw *w);
void hw_putc(int c, hw *w);
void hw_printf(hw *w, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Distinct values counted per QI; further new values are counted together. */
#define HTML_MAX_VALUES 100000u

/* One QI's values in a file and how many rows hold each. */
typedef struct html_values {
    strmap values;    /* value text -> id */
    uint64_t *count;  /* per id */
    size_t cap;
    uint64_t others;  /* rows whose value came after HTML_MAX_VALUES distinct ones */
} html_values;

/* A CSV file scanned for the report: the rows grouped by their QI texts
 * (equal texts = one class, as the verifier and an attacker see them) and
 * every QI's value counts. */
typedef struct html_scan {
    size_t nqi;
    uint64_t rows;
    html_values *qi;      /* per QI */
    u64map groups;        /* XXH3-64 of the row's QI key -> group id */
    uint64_t *group_size; /* per group id */
    size_t group_cap;
    uint64_t all_star;    /* rows whose QIs are all "*" (the suppressed rows' group) */
} html_scan;

/* Reads path (a file, not "-"; shown in messages as `shown`) with the
 * delimiter, finds the QI columns qi[0..nqi) and fills *out. */
int html_scan_file(const char *path, const char *shown, char delimiter, const char *const *qi, size_t nqi,
                   html_scan *out /* OUT */, ak_error *err);
void html_scan_free(html_scan *s);

/* One file whose SHA-256 the report prints. */
typedef struct html_checksum {
    char role[160];    /* "input (original)", "output (published)", "hierarchy of age", "job file" */
    const char *path;  /* as given */
    char hex[AK_SHA256_HEX + 1];
} html_checksum;

/* The verifier's verdict on the written file. */
typedef struct html_verdict {
    int status;        /* ANONKIT_OK, ANONKIT_E_VIOLATION, or 1: not verified */
    char message[1024];/* the violation, or why it was not verified */
    uint64_t rows, classes, suppressed;
} html_verdict;

/* Everything the document shows. */
typedef struct html_doc {
    const char *command;        /* "anonkit anonymize" or "anonkit report" */
    const json_t *report;       /* the run's JSON report (or the report command's JSON) */
    const html_checksum *sums;
    size_t nsums;
    const html_verdict *verdict;
    const html_scan *published; /* NULL when not scanned */
    const html_scan *original;  /* NULL when not scanned */
    const char *const *qi;
    size_t nqi;
    const unsigned char *numeric; /* per QI: 1 when numeric */
    double suppression;         /* the allowance the verifier used */
    const strlist *settings;    /* the options as they were set, "--name value" */
    char date[64];              /* when the document was made, UTC */
} html_doc;

/* Writes the document to f; ANONKIT_E_IO (named `shown`) when a write fails. */
int html_report_write(FILE *f, const char *shown, const html_doc *d, ak_error *err);

/* The checksums, verdict and scans of a release whose output can be read at
 * `output_read` (the written temporary, or the published file), shown as
 * `output_shown`, made from the input at `input_read` (NULL: not read): fills
 * what d points to and writes the document to f. `report_json` is the JSON
 * text the figures come from. Used by anonymize (before its commit) and by
 * anonkit_report. *verdict_status receives the verdict's status
 * (ANONKIT_OK, ANONKIT_E_VIOLATION, or 1: not verified). */
int html_release_write(anonkit_job *job, const char *command, const char *report_json, const char *output_read,
                       const char *output_shown, const char *input_read, const char *input_shown, FILE *f,
                       const char *html_shown, int *verdict_status /* OUT, may be NULL */, ak_error *err);

/* anonymize --html: the document of a run whose output `of` is written but
 * not yet committed (read back through its temporary; not verified when it
 * went to standard output or a device), made from the input at input_read
 * (shown as input_shown) and the run's JSON report, into `html`. */
int html_anonymize_write(anonkit_job *job, const outfile *of, const outfile *html, const char *input_read,
                         const char *input_shown, const char *report_json);

/* ---- SVG charts (html_svg.c) ---- */

/* One bar series: n values, a name for the legend, a fill pattern (0 solid
 * dark, 1 hatched, 2 dotted light). */
typedef struct svg_series {
    const char *name;
    const double *values;
    int pattern;
} svg_series;

/* Vertical bars over n labelled bins, one bar per series in each bin; with
 * `cumulative`, each series' running share of its total as a line over a
 * right axis 0-100 %. Text alternatives: title, desc. Nothing when n is 0. */
void svg_columns(hw *f, const char *id, const char *title, const char *desc, const char *xlabel, const char *ylabel,
                 const char *const *labels, size_t n, const svg_series *series, size_t nseries, int cumulative);

/* Horizontal bars: one per label, value printed at its end with `fmt`
 * (printf of a double), on an axis 0..max (max <= 0: the largest value,
 * rounded up), in a chart `width` units wide (its text stays 12 units high).
 * Nothing when n is 0. */
void svg_hbars(hw *f, const char *id, double width, const char *title, const char *desc, const char *xlabel,
               const char *const *labels, const double *values, size_t n, double max, const char *fmt, int pattern);

/* The SVG pattern definitions every chart refers to (once per document). */
void svg_defs(hw *f);

/* Writes s[0..len) with &, <, >, " and ' escaped for HTML and SVG text. */
void html_escape(hw *f, const char *s, size_t len);
static inline void html_escape_str(hw *f, const char *s) { html_escape(f, s, s ? strlen(s) : 0); }

#endif
