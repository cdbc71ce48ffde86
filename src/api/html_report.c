/* html_report.c (api) — the release report as one self-contained HTML
 * document (docs/report.md): inline CSS with print rules, no script, font,
 * image or link that leaves the file. Every figure taken from the run's JSON
 * report is printed in an element whose data-json attribute is its JSON
 * pointer (RFC 6901) in that report, so the document can be checked against
 * the JSON figure by figure; figures computed here from the scanned files
 * (risk before publication, the class-size histogram) carry data-derived. */
#include "api/html.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Array lengths printed in full; longer ones are summarized. */
#define HTML_LIST_MAX 40
/* Bars of a distribution chart. */
#define HTML_TOP 20

/* ---- JSON values as text ---- */

/* A JSON pointer being built: path[0..len). */
typedef struct jptr {
    char path[512];
    size_t len;
} jptr;

/* Appends /token (escaped as RFC 6901: ~ as ~0, / as ~1) to p; returns the
 * old length, for jptr_pop. A token that does not fit is cut. */
static size_t jptr_push(jptr *p, const char *token)
{
    const size_t old = p->len;
    if (p->len + 2 < sizeof p->path) p->path[p->len++] = '/';
    for (const char *c = token; *c && p->len + 3 < sizeof p->path; c++) {
        if (*c == '~' || *c == '/') {
            p->path[p->len++] = '~';
            p->path[p->len++] = *c == '~' ? '0' : '1';
        } else {
            p->path[p->len++] = *c;
        }
    }
    p->path[p->len] = '\0';
    return old;
}

static void jptr_pop(jptr *p, size_t old)
{
    p->len = old;
    p->path[old] = '\0';
}

/* The text of a JSON number: integers whole; reals to 6 significant digits,
 * whole when they are whole and not huge. */
static void number_text(const json_t *v, char *buf, size_t size)
{
    if (json_is_integer(v)) {
        snprintf(buf, size, "%lld", (long long)json_integer_value(v));
        return;
    }
    const double d = json_real_value(v);
    if (d == floor(d) && fabs(d) < 1e15) snprintf(buf, size, "%.0f", d);
    else snprintf(buf, size, "%.6g", d);
}

/* A JSON number as a figure tied to its pointer. */
static void figure(hw *f, const json_t *v, const jptr *p)
{
    char num[64];
    number_text(v, num, sizeof num);
    hw_puts("<span class=\"num\" data-json=\"", f);
    html_escape(f, p->path, p->len);
    hw_printf(f, "\">%s</span>", num);
}

/* The figure at key of obj (under pointer p), or "—" when absent. */
static void figure_at(hw *f, const json_t *obj, const char *key, jptr *p)
{
    const json_t *v = json_object_get(obj, key);
    if (!json_is_number(v)) {
        hw_puts("\xE2\x80\x94", f);
        return;
    }
    const size_t old = jptr_push(p, key);
    figure(f, v, p);
    jptr_pop(p, old);
}

/* A figure computed here, not in the JSON report. */
static void derived(hw *f, const char *name, const char *fmt, double v)
{
    char num[64];
    snprintf(num, sizeof num, fmt, v);
    hw_printf(f, "<span class=\"num\" data-derived=\"%s\">%s</span>", name, num);
}

static void render_value(hw *f, const json_t *v, jptr *p);

/* One row of a two-column table: the key, then its value rendered at
 * the JSON pointer p/key. */
static void render_kv_row(hw *f, const char *key, const json_t *v, jptr *p)
{
    hw_puts("<tr><th>", f);
    html_escape_str(f, key);
    hw_puts("</th><td>", f);
    const size_t old = jptr_push(p, key);
    render_value(f, v, p);
    jptr_pop(p, old);
    hw_puts("</td></tr>\n", f);
}

/* An object as a two-column table of its keys and values. */
static void render_object(hw *f, const json_t *obj, jptr *p)
{
    const char *key;
    const json_t *v;
    hw_puts("<table class=\"kv\">\n", f);
    json_object_foreach ((json_t *)obj, key, v) render_kv_row(f, key, v, p);
    hw_puts("</table>\n", f);
}

/* Any JSON value: scalars as text (numbers as figures), short arrays as
 * lists, long ones by their length, objects as tables. */
static void render_value(hw *f, const json_t *v, jptr *p)
{
    if (json_is_object(v)) {
        render_object(f, v, p);
    } else if (json_is_array(v)) {
        const size_t n = json_array_size(v);
        if (n > HTML_LIST_MAX) {
            hw_printf(f, "%zu entries (listed in the JSON report)", n);
            return;
        }
        hw_puts(n ? "" : "none", f);
        for (size_t i = 0; i < n; i++) {
            char idx[32];
            snprintf(idx, sizeof idx, "%zu", i);
            const size_t old = jptr_push(p, idx);
            if (i) hw_puts(json_is_array(json_array_get(v, i)) ? "; " : ", ", f);
            render_value(f, json_array_get(v, i), p);
            jptr_pop(p, old);
        }
    } else if (json_is_string(v)) {
        html_escape(f, json_string_value(v), json_string_length(v));
    } else if (json_is_number(v)) {
        figure(f, v, p);
    } else if (json_is_true(v)) {
        hw_puts("yes", f);
    } else if (json_is_false(v)) {
        hw_puts("no", f);
    } else {
        hw_puts("<i>not given</i>", f);
    }
}

/* ---- the scanned files ---- */

/* The sizes of the classes of a scan: the groups, less the all-"*" group when
 * its rows are the suppressed rows. */
static int exclude_group(const html_scan *s, uint32_t g, uint64_t suppressed)
{
    return suppressed && s->all_star == suppressed && s->group_size[g] == suppressed;
}

/* Records per class-size bin (1, 2-3, 4-7, ...: powers of two) into counts
 * (64 bins); returns the bins used. With `records`, counts records, else classes. */
static size_t size_bins(const html_scan *s, uint64_t suppressed, int records, double *counts)
{
    size_t used = 0;
    int skipped = 0;
    memset(counts, 0, 64 * sizeof *counts);
    for (uint32_t g = 0; g < s->groups.count; g++) {
        const uint64_t size = s->group_size[g];
        if (!skipped && exclude_group(s, g, suppressed)) {
            skipped = 1;
            continue;
        }
        size_t b = 0;
        while (b < 63 && (2ull << b) <= size) b++;
        counts[b] += records ? (double)size : 1;
        if (b + 1 > used) used = b + 1;
    }
    return used;
}

/* The bounds of the risk bins, a record's risk being 1 / its class's size. */
static const double risk_upper[] = {0.001, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3333334, 0.5000001, 1.0};
static const char *const risk_label[] = {"\xE2\x89\xA4 0.001", "0.001-0.01", "0.01-0.02", "0.02-0.05",
                                         "0.05-0.1", "0.1-0.2", "0.2-1/3", "1/3-1/2", "1 (unique)"};
#define RISK_BINS (sizeof risk_upper / sizeof *risk_upper)

/* Records per risk bin, and the highest and average risk, of a scan. */
static void risk_of(const html_scan *s, uint64_t suppressed, double *bins, double *highest, double *average,
                    uint64_t *records, uint64_t *classes)
{
    memset(bins, 0, RISK_BINS * sizeof *bins);
    *highest = 0;
    *records = *classes = 0;
    int skipped = 0;
    for (uint32_t g = 0; g < s->groups.count; g++) {
        const uint64_t size = s->group_size[g];
        if (!skipped && exclude_group(s, g, suppressed)) {
            skipped = 1;
            continue;
        }
        const double r = 1.0 / (double)size;
        size_t b = 0;
        while (b + 1 < RISK_BINS && r > risk_upper[b]) b++;
        bins[b] += (double)size;
        if (r > *highest) *highest = r;
        *records += size;
        (*classes)++;
    }
    *average = *records ? (double)*classes / (double)*records : 0;
}

/* ---- the sections ---- */

static const char css[] =
    "<style>\n"
    ":root{color-scheme:light}\n"
    "body{font-family:Georgia,'DejaVu Serif',serif;color:#111;background:#fff;margin:0 auto;max-width:60rem;padding:1.5rem;line-height:1.4}\n"
    "h1{font-size:1.7rem;margin:0 0 .3rem}h2{font-size:1.25rem;border-bottom:2px solid #111;margin-top:2rem}\n"
    "h3{font-size:1.05rem}table{border-collapse:collapse;margin:.5rem 0}\n"
    "th,td{border:1px solid #999;padding:.2rem .5rem;text-align:left;vertical-align:top}th{background:#eee}\n"
    "table.kv table.kv{margin:0}.num{font-family:'DejaVu Sans Mono',monospace}\n"
    ".hash{font-family:'DejaVu Sans Mono',monospace;font-size:.8rem;word-break:break-all}\n"
    ".summary table.kv{width:100%;font-size:1.05rem}.summary{border:2px solid #111;padding:0 1rem .5rem;margin-top:1rem}\n"
    ".summary h2{margin-top:.6rem}\n"
    ".verdict{border:3px solid #111;padding:.6rem;font-weight:bold}.verdict.bad{border-style:double;border-width:6px}\n"
    ".pair{display:grid;grid-template-columns:1fr 1fr;gap:1rem}figure.chart{margin:.8rem 0}\n"
    "figure.chart svg{width:100%;height:auto}figcaption{font-size:.85rem;color:#333}\n"
    ".note{font-size:.9rem;color:#333}nav a{color:#111}\n"
    "@media print{body{max-width:none;padding:0;font-size:10pt}nav{display:none}h2{break-after:avoid}\n"
    " section{break-inside:auto}figure.chart,table{break-inside:avoid}.pair{grid-template-columns:1fr 1fr}\n"
    " @page{margin:15mm}}\n"
    "</style>\n";

/* The first screen: the verdict and the figures a reader signs for. */
static void section_summary(hw *f, const html_doc *d, jptr *p)
{
    const json_t *r = d->report, *params = json_object_get(r, "parameters");
    const html_verdict *v = d->verdict;
    hw_puts("<section id=\"summary\" class=\"summary\"><h2>At a glance</h2>\n<table class=\"kv\">\n<tr><th>verifier</th><td>", f);
    hw_puts(v->status == ANONKIT_OK ? "<b>passed</b>: the written file satisfies the privacy model"
          : v->status == ANONKIT_E_VIOLATION ? "<b>FAILED</b>: the written file violates the privacy model"
                                             : "<b>not run</b>: the output could not be read back", f);
    hw_puts("</td></tr>\n<tr><th>privacy model</th><td>k = ", f);
    size_t old = jptr_push(p, "parameters");
    figure_at(f, params, "k", p);
    if (json_object_get(params, "l")) {
        hw_puts(", l = ", f);
        figure_at(f, params, "l", p);
        hw_puts(" (", f);
        render_value(f, json_object_get(params, "l-variant"), p);
        hw_puts(")", f);
    }
    if (json_object_get(params, "variance")) {
        hw_puts(", variance \xE2\x89\xA5 ", f);
        figure_at(f, params, "variance", p);
    }
    hw_puts("</td></tr>\n<tr><th>algorithm</th><td>", f);
    render_value(f, json_object_get(params, "algorithm"), p);
    jptr_pop(p, old);
    hw_puts("</td></tr>\n<tr><th>rows read / published / suppressed</th><td>", f);
    figure_at(f, r, "rows_read", p);
    hw_puts(" / ", f);
    figure_at(f, r, "rows_published", p);
    hw_puts(" / ", f);
    figure_at(f, r, "rows_suppressed", p);
    hw_puts("</td></tr>\n<tr><th>equivalence classes (smallest)</th><td>", f);
    figure_at(f, r, "classes", p);
    hw_puts(" (", f);
    figure_at(f, r, "min_class_size", p);
    hw_puts(" rows)</td></tr>\n<tr><th>GCP (information lost, 0 to 1)</th><td>", f);
    old = jptr_push(p, "metrics");
    figure_at(f, json_object_get(r, "metrics"), "gcp", p);
    jptr_pop(p, old);
    hw_puts("</td></tr>\n</table>\n</section>\n", f);
}

/* Identity: version, date, the command, the checksums. */
static void section_identity(hw *f, const html_doc *d, jptr *p)
{
    hw_puts("<section id=\"identity\"><h2>1. Release identity</h2>\n<table class=\"kv\">\n<tr><th>anonkit version</th><td>", f);
    render_value(f, json_object_get(d->report, "anonkit_version"), p);
    hw_puts("</td></tr>\n<tr><th>report made</th><td>", f);
    html_escape_str(f, d->date);
    hw_puts("</td></tr>\n<tr><th>made by</th><td>", f);
    html_escape_str(f, d->command);
    hw_puts("</td></tr>\n</table>\n<h3>Checksums (SHA-256)</h3>\n<table class=\"sums\"><tr><th>file</th><th>path</th><th>SHA-256</th></tr>\n", f);
    for (size_t i = 0; i < d->nsums; i++) {
        hw_puts("<tr><td>", f);
        html_escape_str(f, d->sums[i].role);
        hw_puts("</td><td class=\"path\">", f);
        html_escape_str(f, d->sums[i].path);
        hw_printf(f, "</td><td class=\"hash\" data-sha256=\"%s\">%s</td></tr>\n", d->sums[i].hex, d->sums[i].hex);
    }
    hw_puts("</table>\n<p class=\"note\">Check a file with <code>sha256sum FILE</code>: it prints the same 64 digits.</p></section>\n", f);
}

static void section_configuration(hw *f, const html_doc *d, jptr *p)
{
    hw_puts("<section id=\"configuration\"><h2>2. Configuration</h2>\n"
          "<p class=\"note\">Every setting of the run as the JSON report records it (the seed of the row shuffle included).</p>\n",
          f);
    const json_t *params = json_object_get(d->report, "parameters");
    if (params) {
        const size_t old = jptr_push(p, "parameters");
        render_value(f, params, p);
        jptr_pop(p, old);
    } else {
        hw_puts("<p>No parameters were recorded.</p>\n", f);
    }
    if (d->settings && d->settings->count) {
        hw_puts("<h3>Options as given</h3>\n<p class=\"note\">Every option in the order it was set (a job file's "
                "settings, then the command line's; paths of a job file resolved against its folder).</p>\n"
                "<ol class=\"settings\">\n", f);
        for (size_t i = 0; i < d->settings->count; i++) {
            hw_puts("<li><code>", f);
            html_escape_str(f, d->settings->items[i]);
            hw_puts("</code></li>\n", f);
        }
        hw_puts("</ol>\n", f);
    }
    hw_puts("</section>\n", f);
}

/* Privacy models and the verifier's verdict on the written file. */
static void section_privacy(hw *f, const html_doc *d, jptr *p)
{
    const json_t *params = json_object_get(d->report, "parameters");
    hw_puts("<section id=\"privacy\"><h2>3. Privacy models and verification</h2>\n<table class=\"kv\">\n", f);
    static const char *const keys[] = {"k", "l", "l-variant", "c", "variance"};
    static const char *const names[] = {"k-anonymity: k", "l-diversity: l", "l-diversity variants",
                                        "recursive (c,l)-diversity: c", "variance diversity: least variance"};
    const size_t old = jptr_push(p, "parameters");
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        const json_t *v = json_object_get(params, keys[i]);
        if (!v) continue;
        hw_printf(f, "<tr><th>%s</th><td>", names[i]);
        const size_t o2 = jptr_push(p, keys[i]);
        render_value(f, v, p);
        jptr_pop(p, o2);
        hw_puts("</td></tr>\n", f);
    }
    jptr_pop(p, old);
    hw_puts("<tr><th>sensitive column</th><td>", f);
    render_value(f, json_object_get(params, "sensitive"), p);
    if (d->suppression > 0)
        hw_printf(f, "</td></tr>\n<tr><th>suppression allowed</th><td>up to %g of the rows</td></tr>\n</table>\n",
                  d->suppression);
    else
        hw_puts("</td></tr>\n<tr><th>suppression allowed</th><td>none</td></tr>\n</table>\n", f);
    const html_verdict *v = d->verdict;
    if (v->status == ANONKIT_OK) {
        hw_puts("<p class=\"verdict ok\" id=\"verdict\">Verified: the written file satisfies the privacy model. ", f);
        derived(f, "verified_rows", "%.0f", (double)v->rows);
        hw_puts(" rows in ", f);
        derived(f, "verified_classes", "%.0f", (double)v->classes);
        hw_puts(" classes, ", f);
        derived(f, "verified_suppressed", "%.0f", (double)v->suppressed);
        hw_puts(" suppressed.</p>\n", f);
    } else if (v->status == ANONKIT_E_VIOLATION) {
        hw_puts("<p class=\"verdict bad\" id=\"verdict\">VIOLATED: the written file does not satisfy the privacy model: ", f);
        html_escape_str(f, v->message);
        hw_puts("</p>\n", f);
    } else {
        hw_puts("<p class=\"verdict bad\" id=\"verdict\">Not verified: ", f);
        html_escape_str(f, v->message);
        hw_puts("</p>\n", f);
    }
    hw_puts("<p class=\"note\">The verifier (<code>anonkit check</code>) read the file as written, grouped its rows by their "
          "published quasi-identifier values and tested every group; it shares no code with the algorithms.</p></section>\n",
          f);
}

/* Rows read, published, suppressed; class sizes and their histogram. */
static void section_rows(hw *f, const html_doc *d, jptr *p)
{
    const json_t *r = d->report;
    hw_puts("<section id=\"rows\"><h2>4. Rows and classes</h2>\n<table class=\"kv\">\n<tr><th>rows read</th><td>", f);
    figure_at(f, r, "rows_read", p);
    hw_puts("</td></tr>\n<tr><th>rows published</th><td>", f);
    figure_at(f, r, "rows_published", p);
    hw_puts("</td></tr>\n<tr><th>rows suppressed</th><td>", f);
    figure_at(f, r, "rows_suppressed", p);
    hw_puts("</td></tr>\n<tr><th>equivalence classes</th><td>", f);
    figure_at(f, r, "classes", p);
    hw_puts("</td></tr>\n<tr><th>class size: smallest, mean, largest</th><td>", f);
    figure_at(f, r, "min_class_size", p);
    hw_puts(", ", f);
    figure_at(f, r, "mean_class_size", p);
    hw_puts(", ", f);
    figure_at(f, r, "max_class_size", p);
    hw_puts("</td></tr>\n</table>\n", f);
    if (d->published && d->published->rows) {
        double counts[64];
        const uint64_t suppressed = (uint64_t)json_integer_value(json_object_get(r, "rows_suppressed"));
        const size_t n = size_bins(d->published, suppressed, 0, counts);
        char labels[64][48];
        const char *lp[64];
        for (size_t b = 0; b < n; b++) {
            const unsigned long long lo = 1ull << b, hi = (2ull << b) - 1;
            if (lo == hi) snprintf(labels[b], sizeof labels[b], "%llu", lo);
            else snprintf(labels[b], sizeof labels[b], "%llu-%llu", lo, hi);
            lp[b] = labels[b];
        }
        const svg_series s = {"classes", counts, 0};
        svg_columns(f, "chart-class-sizes", "Class sizes of the published file",
                    "Number of equivalence classes of the published file by class size (bins of powers of two), "
                    "counted from the file as written.",
                    "class size (rows)", "classes", lp, n, &s, 1, 0);
    }
    hw_puts("</section>\n", f);
}

/* Information loss: GCP, DM, C_AVG, NCP per QI, workload measures. */
static void section_loss(hw *f, const html_doc *d, jptr *p)
{
    const json_t *m = json_object_get(d->report, "metrics");
    hw_puts("<section id=\"loss\"><h2>5. Information loss</h2>\n", f);
    if (!m) {
        hw_puts("<p>No metrics were recorded.</p></section>\n", f);
        return;
    }
    const size_t old = jptr_push(p, "metrics");
    hw_puts("<table class=\"kv\">\n<tr><th>GCP (global certainty penalty, 0 = none lost, 1 = all)</th><td>", f);
    figure_at(f, m, "gcp", p);
    hw_puts("</td></tr>\n<tr><th>DM (discernibility)</th><td>", f);
    figure_at(f, m, "dm", p);
    hw_puts("</td></tr>\n<tr><th>C_AVG (normalized average class size)</th><td>", f);
    figure_at(f, m, "cavg", p);
    hw_puts("</td></tr>\n", f);
    const char *key;
    const json_t *v;
    json_object_foreach ((json_t *)m, key, v) { /* the workload measures and anything else measured */
        if (!strcmp(key, "gcp") || !strcmp(key, "dm") || !strcmp(key, "cavg") || !strcmp(key, "ncp")) continue;
        render_kv_row(f, key, v, p);
    }
    hw_puts("</table>\n", f);
    const json_t *ncp = json_object_get(m, "ncp");
    const size_t n = json_object_size(ncp);
    if (n) {
        hw_puts("<h3>NCP per quasi-identifier</h3>\n<table><tr><th>attribute</th><th>NCP</th></tr>\n", f);
        const char **labels = calloc(n, sizeof *labels);
        double *values = calloc(n, sizeof *values);
        size_t i = 0;
        const size_t o2 = jptr_push(p, "ncp");
        json_object_foreach ((json_t *)ncp, key, v) {
            hw_puts("<tr><td>", f);
            html_escape_str(f, key);
            hw_puts("</td><td>", f);
            const size_t o3 = jptr_push(p, key);
            render_value(f, v, p);
            jptr_pop(p, o3);
            hw_puts("</td></tr>\n", f);
            if (labels && values && i < n) {
                labels[i] = key;
                values[i++] = json_is_number(v) ? json_number_value(v) : 0;
            }
        }
        jptr_pop(p, o2);
        hw_puts("</table>\n", f);
        if (!labels || !values) f->nomem = 1;
        else
            svg_hbars(f, "chart-ncp", 720, "NCP per quasi-identifier",
                      "Normalized certainty penalty of every quasi-identifier: 0 means published exactly, 1 means "
                      "fully generalized.",
                      "NCP", labels, values, i, 1.0, "%.4f", 1);
        free(labels);
        free(values);
    }
    jptr_pop(p, old);
    hw_puts("</section>\n", f);
}

/* Risk before and after. The JSON report's "risk" object (input and output
 * measures) is rendered as it comes, whatever its fields, so that this one
 * function is what changes when its names do; beside it the risk per record
 * (1 / its class's size) counted from the scanned files. */
static void section_risk(hw *f, const html_doc *d, jptr *p)
{
    hw_puts("<section id=\"risk\"><h2>6. Re-identification risk</h2>\n", f);
    const json_t *risk = json_object_get(d->report, "risk");
    if (risk) {
        const size_t old = jptr_push(p, "risk");
        const json_t *in = json_object_get(risk, "input"), *out = json_object_get(risk, "output");
        if (json_is_object(in) && json_is_object(out)) { /* side by side: the measure, before, after */
            hw_puts("<table><tr><th>measure</th><th>before (input)</th><th>after (published)</th></tr>\n", f);
            const char *key;
            const json_t *v;
            json_object_foreach ((json_t *)in, key, v) {
                hw_puts("<tr><th>", f);
                html_escape_str(f, key);
                hw_puts("</th><td>", f);
                size_t o2 = jptr_push(p, "input"), o3 = jptr_push(p, key);
                render_value(f, v, p);
                jptr_pop(p, o3);
                jptr_pop(p, o2);
                hw_puts("</td><td>", f);
                o2 = jptr_push(p, "output");
                o3 = jptr_push(p, key);
                const json_t *w = json_object_get(out, key);
                if (w) render_value(f, w, p);
                jptr_pop(p, o3);
                jptr_pop(p, o2);
                hw_puts("</td></tr>\n", f);
            }
            hw_puts("</table>\n", f);
            json_object_foreach ((json_t *)risk, key, v) { /* the rest: thresholds, settings */
                if (!strcmp(key, "input") || !strcmp(key, "output")) continue;
                hw_puts("<p>", f);
                html_escape_str(f, key);
                hw_puts(": ", f);
                const size_t o2 = jptr_push(p, key);
                render_value(f, v, p);
                jptr_pop(p, o2);
                hw_puts("</p>\n", f);
            }
        } else {
            render_value(f, risk, p);
        }
        jptr_pop(p, old);
    } else {
        hw_puts("<p id=\"risk-not-measured\">Risk was not measured by this run: its JSON report holds no risk "
              "measures. The figures below are counted from the files themselves.</p>\n",
              f);
    }
    if (!d->published || !d->published->rows) {
        hw_puts("</section>\n", f);
        return;
    }
    const uint64_t suppressed = (uint64_t)json_integer_value(json_object_get(d->report, "rows_suppressed"));
    double after[RISK_BINS], before[RISK_BINS], hi_a, avg_a, hi_b = 0, avg_b = 0;
    uint64_t rec_a, cls_a, rec_b = 0, cls_b = 0;
    risk_of(d->published, suppressed, after, &hi_a, &avg_a, &rec_a, &cls_a);
    const int has_before = d->original && d->original->rows;
    if (has_before) risk_of(d->original, 0, before, &hi_b, &avg_b, &rec_b, &cls_b);
    hw_puts("<h3>Prosecutor risk per record (1 / size of its class), counted from the files</h3>\n"
          "<table><tr><th></th><th>before (original)</th><th>after (published)</th></tr>\n<tr><th>records</th><td>",
          f);
    if (has_before) derived(f, "risk_before_records", "%.0f", (double)rec_b);
    hw_puts("</td><td>", f);
    derived(f, "risk_after_records", "%.0f", (double)rec_a);
    hw_puts("</td></tr>\n<tr><th>classes (distinct combinations of the quasi-identifiers)</th><td>", f);
    if (has_before) derived(f, "risk_before_classes", "%.0f", (double)cls_b);
    hw_puts("</td><td>", f);
    derived(f, "risk_after_classes", "%.0f", (double)cls_a);
    hw_puts("</td></tr>\n<tr><th>highest risk</th><td>", f);
    if (has_before) derived(f, "risk_before_highest", "%.6g", hi_b);
    hw_puts("</td><td>", f);
    derived(f, "risk_after_highest", "%.6g", hi_a);
    hw_puts("</td></tr>\n<tr><th>average risk</th><td>", f);
    if (has_before) derived(f, "risk_before_average", "%.6g", avg_b);
    hw_puts("</td><td>", f);
    derived(f, "risk_after_average", "%.6g", avg_a);
    hw_puts("</td></tr>\n</table>\n", f);
    svg_series s[2];
    size_t ns = 0;
    if (has_before) s[ns++] = (svg_series){"before (original)", before, 1};
    s[ns++] = (svg_series){"after (published)", after, 0};
    svg_columns(f, "chart-risk", "Risk distribution before and after",
                "Records by their prosecutor re-identification risk (1 divided by the size of their class), before "
                "publication (hatched) and after (solid), with the cumulative share of records as lines.",
                "risk per record", "records", risk_label, RISK_BINS, s, ns, 1);
    hw_puts("</section>\n", f);
}

/* A top-HTML_TOP bar chart of a QI's values in a scan (numeric values of the
 * original in equal-width bins). */
static void values_chart(hw *f, const char *id, const char *title, const html_values *hv, int numeric, int pattern)
{
    const uint32_t nv = hv->values.count;
    if (!nv) return;
    char desc[512];
    double vals[HTML_TOP + 1];
    char texts[HTML_TOP + 1][64];
    const char *labels[HTML_TOP + 1];
    size_t n = 0;
    double lo = INFINITY, hi = -INFINITY;
    int all_numbers = numeric && !hv->others;
    for (uint32_t i = 0; all_numbers && i < nv; i++) {
        char *end;
        const double x = strtod(strmap_key(&hv->values, i), &end);
        if (*end || end == strmap_key(&hv->values, i) || !isfinite(x)) all_numbers = 0;
        else {
            if (x < lo) lo = x;
            if (x > hi) hi = x;
        }
    }
    if (all_numbers && nv > HTML_TOP) { /* equal-width bins over [lo, hi] */
        const double w = (hi - lo) / HTML_TOP;
        memset(vals, 0, sizeof vals);
        for (uint32_t i = 0; i < nv; i++) {
            const double x = strtod(strmap_key(&hv->values, i), NULL);
            size_t b = w > 0 ? (size_t)((x - lo) / w) : 0;
            if (b >= HTML_TOP) b = HTML_TOP - 1;
            vals[b] += (double)hv->count[i];
        }
        for (n = 0; n < HTML_TOP; n++) {
            snprintf(texts[n], sizeof texts[n], "%.6g to %s%.6g", lo + w * (double)n, n + 1 == HTML_TOP ? "" : "<",
                     n + 1 == HTML_TOP ? hi : lo + w * (double)(n + 1));
            labels[n] = texts[n];
        }
        snprintf(desc, sizeof desc, "Rows per range of values (%u distinct values in 20 equal ranges).", nv);
    } else { /* the most frequent values, ties by text */
        unsigned char *taken = calloc(nv, 1);
        if (!taken) {
            f->nomem = 1;
            return;
        }
        uint64_t rest = hv->others;
        for (n = 0; n < HTML_TOP && n < nv; n++) {
            uint32_t best = 0;
            int found = 0;
            for (uint32_t i = 0; i < nv; i++) {
                if (taken[i]) continue;
                if (!found || hv->count[i] > hv->count[best] ||
                    (hv->count[i] == hv->count[best] && strcmp(strmap_key(&hv->values, i), strmap_key(&hv->values, best)) < 0)) {
                    best = i;
                    found = 1;
                }
            }
            taken[best] = 1;
            vals[n] = (double)hv->count[best];
            labels[n] = strmap_key(&hv->values, best);
        }
        for (uint32_t i = 0; i < nv; i++)
            if (!taken[i]) rest += hv->count[i];
        free(taken);
        const size_t shown = n;
        if (rest) {
            snprintf(texts[n], sizeof texts[n], "(all other values)");
            labels[n] = texts[n];
            vals[n++] = (double)rest;
        }
        snprintf(desc, sizeof desc, "Rows per value: the %zu most frequent of %s%u distinct values%s.", shown,
                 hv->others ? "more than " : "", nv, rest ? ", the others together" : "");
    }
    svg_hbars(f, id, 480, title, desc, "rows", labels, vals, n, 0, "%.0f", pattern);
}

/* For every QI: the published values beside the original's. */
static void section_distributions(hw *f, const html_doc *d)
{
    hw_puts("<section id=\"distributions\"><h2>7. Values of the quasi-identifiers</h2>\n", f);
    if (!d->published) {
        hw_puts("<p>The published file was not read.</p></section>\n", f);
        return;
    }
    for (size_t q = 0; q < d->nqi; q++) {
        hw_puts("<h3>", f);
        html_escape_str(f, d->qi[q]);
        hw_puts("</h3>\n<div class=\"pair\">\n<div>", f);
        char id[64], title[300];
        snprintf(id, sizeof id, "chart-qi%zu-p", q);
        snprintf(title, sizeof title, "%s: published", d->qi[q]);
        values_chart(f, id, title, &d->published->qi[q], 0, 0);
        hw_puts("</div>\n<div>", f);
        if (d->original) {
            snprintf(id, sizeof id, "chart-qi%zu-o", q);
            snprintf(title, sizeof title, "%s: original", d->qi[q]);
            values_chart(f, id, title, &d->original->qi[q], d->numeric && d->numeric[q], 1);
        }
        hw_puts("</div>\n</div>\n", f);
    }
    hw_puts("</section>\n", f);
}

/* Incognito's level vector and lattice, or the partitioning's classes. */
static void section_generalization(hw *f, const html_doc *d, jptr *p)
{
    hw_puts("<section id=\"generalization\"><h2>8. Generalization chosen</h2>\n", f);
    const json_t *inc = json_object_get(d->report, "incognito");
    const json_t *chosen = json_object_get(inc, "chosen");
    if (inc && chosen) {
        const size_t old = jptr_push(p, "incognito");
        const json_t *qi = json_object_get(inc, "qi"), *heights = json_object_get(inc, "hierarchy_heights");
        const json_t *levels = json_object_get(chosen, "levels");
        hw_puts("<p>Full-domain generalization: every value of a quasi-identifier is raised to the same level of its "
              "hierarchy.</p>\n<table><tr><th>quasi-identifier</th><th>level chosen</th><th>hierarchy height</th></tr>\n",
              f);
        size_t lattice_height = 0;
        double nodes = 1;
        for (size_t i = 0; i < json_array_size(qi); i++) {
            char idx[32];
            snprintf(idx, sizeof idx, "%zu", i);
            hw_puts("<tr><td>", f);
            html_escape_str(f, json_string_value(json_array_get(qi, i)));
            hw_puts("</td><td>", f);
            size_t o2 = jptr_push(p, "chosen"), o3 = jptr_push(p, "levels"), o4 = jptr_push(p, idx);
            render_value(f, json_array_get(levels, i), p);
            jptr_pop(p, o4);
            jptr_pop(p, o3);
            jptr_pop(p, o2);
            hw_puts("</td><td>", f);
            o2 = jptr_push(p, "hierarchy_heights");
            o3 = jptr_push(p, idx);
            render_value(f, json_array_get(heights, i), p);
            jptr_pop(p, o3);
            jptr_pop(p, o2);
            hw_puts("</td></tr>\n", f);
            const json_int_t h = json_integer_value(json_array_get(heights, i));
            lattice_height += (size_t)h;
            nodes *= (double)(h + 1);
        }
        hw_puts("</table>\n<h3>Lattice summary</h3>\n<table class=\"kv\"><tr><th>nodes in the lattice</th><td>", f);
        derived(f, "lattice_nodes", "%.0f", nodes);
        hw_puts("</td></tr>\n<tr><th>height of the lattice</th><td>", f);
        derived(f, "lattice_height", "%.0f", (double)lattice_height);
        hw_puts("</td></tr>\n", f);
        const char *key;
        const json_t *v;
        json_object_foreach ((json_t *)inc, key, v) {
            if (!strcmp(key, "qi") || !strcmp(key, "hierarchy_heights")) continue;
            render_kv_row(f, key, v, p);
        }
        hw_puts("</table>\n", f);
        jptr_pop(p, old);
        /* nodes per lattice height: anonymous, k-minimal, and the chosen one */
        if (lattice_height < 256) {
            const size_t nb = lattice_height + 1;
            double *anon = calloc(nb, sizeof *anon), *kmin = calloc(nb, sizeof *kmin);
            char(*texts)[32] = calloc(nb, sizeof *texts);
            const char **labels = calloc(nb, sizeof *labels);
            const json_int_t chosen_h = json_integer_value(json_object_get(chosen, "height"));
            if (!anon || !kmin || !texts || !labels) f->nomem = 1;
            else {
                static const char *const lists[2] = {"anonymous", "k_minimal"};
                for (int l = 0; l < 2; l++) {
                    const json_t *arr = json_object_get(inc, lists[l]);
                    for (size_t i = 0; i < json_array_size(arr); i++) {
                        const json_t *node = json_array_get(arr, i); /* a level vector, or a node with one */
                        if (json_is_object(node)) node = json_object_get(node, "levels");
                        size_t h = 0;
                        for (size_t j = 0; j < json_array_size(node); j++)
                            h += (size_t)json_integer_value(json_array_get(node, j));
                        if (h < nb) (l ? kmin : anon)[h]++;
                    }
                }
                for (size_t h = 0; h < nb; h++) {
                    snprintf(texts[h], sizeof texts[h], (json_int_t)h == chosen_h ? "%zu (chosen)" : "%zu", h);
                    labels[h] = texts[h];
                }
                const svg_series s[2] = {{"anonymous nodes", anon, 2}, {"k-minimal nodes", kmin, 0}};
                svg_columns(f, "chart-lattice", "Lattice level of the chosen node",
                            "Anonymous and k-minimal nodes of the generalization lattice by height (the sum of the "
                            "levels); the height of the published node is marked (chosen).",
                            "lattice height (sum of the levels)", "nodes", labels, nb, s, 2, 0);
            }
            free(anon);
            free(kmin);
            free(texts);
            free(labels);
        }
    } else {
        hw_puts("<p>Multidimensional partitioning: the table was cut into equivalence classes, each published as the "
              "box of its values.</p>\n<table class=\"kv\"><tr><th>algorithm</th><td>", f);
        const json_t *params = json_object_get(d->report, "parameters");
        render_value(f, json_object_get(params, "algorithm"), p);
        hw_puts("</td></tr>\n<tr><th>classes</th><td>", f);
        figure_at(f, d->report, "classes", p);
        hw_puts("</td></tr>\n<tr><th>depth of the partition tree</th><td>", f);
        const json_t *ooc = json_object_get(d->report, "out_of_core");
        const json_t *model = json_object_get(ooc, "model");
        if (json_object_get(model, "height")) {
            const size_t o1 = jptr_push(p, "out_of_core"), o2 = jptr_push(p, "model");
            figure_at(f, model, "height", p);
            jptr_pop(p, o2);
            jptr_pop(p, o1);
            hw_puts(" (the height of the I/O model)", f);
        } else {
            hw_puts("not recorded by this algorithm's report", f);
        }
        hw_puts("</td></tr>\n</table>\n", f);
    }
    /* the algorithm's own object, when it is not Incognito's (shown above) */
    const char *key;
    const json_t *v;
    json_object_foreach ((json_t *)d->report, key, v) {
        static const char *const known[] = {"anonkit_version", "parameters", "rows_read", "rows_published",
                                            "rows_suppressed", "classes", "min_class_size", "mean_class_size",
                                            "max_class_size", "metrics", "seconds", "phase_seconds", "out_of_core",
                                            "incognito", "risk", "source"};
        int is_known = 0;
        for (size_t i = 0; i < sizeof known / sizeof *known; i++) is_known |= !strcmp(key, known[i]);
        if (is_known) continue;
        hw_puts("<h3>", f);
        html_escape_str(f, key);
        hw_puts("</h3>\n", f);
        const size_t o2 = jptr_push(p, key);
        render_value(f, v, p);
        jptr_pop(p, o2);
    }
    hw_puts("</section>\n", f);
}

static void section_timings(hw *f, const html_doc *d, jptr *p)
{
    hw_puts("<section id=\"timings\"><h2>9. Timings</h2>\n", f);
    const json_t *phases = json_object_get(d->report, "phase_seconds");
    if (!json_object_get(d->report, "seconds")) {
        hw_puts("<p>No timings: this document was made from files published earlier.</p></section>\n", f);
        return;
    }
    hw_puts("<table class=\"kv\"><tr><th>whole run (seconds)</th><td>", f);
    figure_at(f, d->report, "seconds", p);
    hw_puts("</td></tr>\n", f);
    const char *key;
    const json_t *v;
    const size_t old = jptr_push(p, "phase_seconds");
    json_object_foreach ((json_t *)phases, key, v) {
        hw_puts("<tr><th>", f);
        html_escape_str(f, key);
        hw_puts(" (seconds)</th><td>", f);
        figure_at(f, phases, key, p);
        hw_puts("</td></tr>\n", f);
    }
    jptr_pop(p, old);
    hw_puts("</table>\n</section>\n", f);
}

static void section_out_of_core(hw *f, const html_doc *d, jptr *p)
{
    hw_puts("<section id=\"out-of-core\"><h2>10. Out-of-core I/O</h2>\n", f);
    const json_t *ooc = json_object_get(d->report, "out_of_core");
    if (!ooc) {
        hw_puts("<p>The run held the table in memory: there was no out-of-core I/O.</p></section>\n", f);
        return;
    }
    const size_t old = jptr_push(p, "out_of_core");
    const json_t *model = json_object_get(ooc, "model");
    if (model) {
        /* the model's figures are named for the algorithm: reads_T (Rothko-T), reads_S (Rothko-S), ... */
        static const char *const measured[] = {"repartitions", "blocks_read", "blocks_written"};
        static const char *const modelled[] = {"repartitions_", "reads_", "writes_"};
        static const char *const names[] = {"repartitions", "blocks read", "blocks written"};
        hw_puts("<p>Repartitions and blocks against the I/O model of [LeFevre07] \xC2\xA7" "4 (payload blocks, "
                "those of the rows themselves, in brackets):</p>\n"
                "<table><tr><th></th><th>measured</th><th>model</th></tr>\n", f);
        for (size_t i = 0; i < 3; i++) {
            hw_printf(f, "<tr><th>%s</th><td>", names[i]);
            figure_at(f, ooc, measured[i], p);
            char payload[64];
            snprintf(payload, sizeof payload, "payload_%s", measured[i]);
            if (json_object_get(ooc, payload)) {
                hw_puts(" (", f);
                figure_at(f, ooc, payload, p);
                hw_puts(")", f);
            }
            hw_puts("</td><td>", f);
            const char *key;
            const json_t *v;
            int shown = 0;
            const size_t o2 = jptr_push(p, "model");
            json_object_foreach ((json_t *)model, key, v) {
                if (strncmp(key, modelled[i], strlen(modelled[i])) != 0) continue;
                figure_at(f, model, key, p);
                shown = 1;
                break;
            }
            jptr_pop(p, o2);
            if (!shown) hw_puts("\xE2\x80\x94", f);
            hw_puts("</td></tr>\n", f);
        }
        hw_puts("</table>\n", f);
    }
    hw_puts("<h3>All out-of-core figures</h3>\n", f);
    render_value(f, ooc, p);
    jptr_pop(p, old);
    hw_puts("</section>\n", f);
}

int html_report_write(FILE *stream, const char *shown, const html_doc *d, ak_error *err)
{
    hw w = {stream, 0, 0};
    hw *f = &w;
    jptr p = {"", 0};
    hw_puts("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
          "<meta name=\"generator\" content=\"anonkit\">\n<title>Release report: ",
          f);
    const json_t *params = json_object_get(d->report, "parameters");
    const json_t *out = json_object_get(params, "output");
    html_escape_str(f, json_is_string(out) ? json_string_value(out) : "published table");
    hw_puts("</title>\n", f);
    hw_puts(css, f);
    hw_puts("</head>\n<body>\n", f);
    svg_defs(f);
    hw_puts("<header><h1>Release report</h1>\n<p>Published table <b>", f);
    html_escape_str(f, json_is_string(out) ? json_string_value(out) : "");
    hw_puts("</b>, made by anonkit. A document to read and sign before the table is released.</p>\n"
          "<nav><a href=\"#identity\">Identity</a> \xC2\xB7 <a href=\"#configuration\">Configuration</a> \xC2\xB7 "
          "<a href=\"#privacy\">Privacy</a> \xC2\xB7 <a href=\"#rows\">Rows</a> \xC2\xB7 <a href=\"#loss\">Information loss</a> \xC2\xB7 "
          "<a href=\"#risk\">Risk</a> \xC2\xB7 <a href=\"#distributions\">Values</a> \xC2\xB7 "
          "<a href=\"#generalization\">Generalization</a> \xC2\xB7 <a href=\"#timings\">Timings</a> \xC2\xB7 "
          "<a href=\"#out-of-core\">Out of core</a></nav></header>\n<main>\n",
          f);
    section_summary(f, d, &p);
    section_identity(f, d, &p);
    section_configuration(f, d, &p);
    section_privacy(f, d, &p);
    section_rows(f, d, &p);
    section_loss(f, d, &p);
    section_risk(f, d, &p);
    section_distributions(f, d);
    section_generalization(f, d, &p);
    section_timings(f, d, &p);
    section_out_of_core(f, d, &p);
    hw_puts("</main>\n<footer><p class=\"note\">Signed: ____________________ &#160; Date: ____________</p></footer>\n"
          "</body>\n</html>\n",
          f);
    if (w.nomem) return ak_err_nomem(err);
    if (w.failed || ferror(stream))
        return ak_err_set(err, ANONKIT_E_IO, shown, 0, 0, "cannot write the HTML report: %s", strerror(errno));
    return ANONKIT_OK;
}
