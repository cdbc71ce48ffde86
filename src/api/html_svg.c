/* html_svg.c (api) — the charts of the release report (docs/report.md),
 * drawn as inline SVG with plain fprintf of rect, line, polyline and text:
 * no script, font or image. Every chart carries role="img", an aria-label,
 * a <title> and a <desc>; bars are told apart by fill patterns and a legend,
 * not by colour alone, so that they read in print and in greyscale. */
#include "api/html.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Geometry of a chart (user units; the SVG scales to the page width). */
#define SVG_W 720.0
#define SVG_H 320.0
#define PLOT_L 70.0  /* left margin: the y axis' numbers */
#define PLOT_R 60.0  /* right margin: the cumulative axis */
#define PLOT_T 40.0  /* top margin: the title */
#define PLOT_B 90.0  /* bottom margin: bin labels and the x axis' label */

void hw_puts(const char *s, hw *w)
{
    if (fputs(s, w->f) == EOF) w->failed = 1;
}

void hw_putc(int c, hw *w)
{
    if (fputc(c, w->f) == EOF) w->failed = 1;
}

void hw_printf(hw *w, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (vfprintf(w->f, fmt, ap) < 0) w->failed = 1;
    va_end(ap);
}

void html_escape(hw *f, const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        const char c = s[i];
        switch (c) {
        case '&': hw_puts("&amp;", f); break;
        case '<': hw_puts("&lt;", f); break;
        case '>': hw_puts("&gt;", f); break;
        case '"': hw_puts("&quot;", f); break;
        case '\'': hw_puts("&#39;", f); break;
        default:
            if ((unsigned char)c < 0x20 && c != '\t' && c != '\n') hw_puts("&#xFFFD;", f); /* not allowed in XML */
            else hw_putc(c, f);
        }
    }
}

void svg_defs(hw *f)
{
    hw_puts("<svg width=\"0\" height=\"0\" style=\"position:absolute\" aria-hidden=\"true\" focusable=\"false\"><defs>\n"
          "<pattern id=\"ak-p1\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(45)\">"
          "<rect width=\"6\" height=\"6\" fill=\"#fff\"/><line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#222\" stroke-width=\"2.5\"/></pattern>\n"
          "<pattern id=\"ak-p2\" width=\"5\" height=\"5\" patternUnits=\"userSpaceOnUse\">"
          "<rect width=\"5\" height=\"5\" fill=\"#ddd\"/><circle cx=\"2.5\" cy=\"2.5\" r=\"1.1\" fill=\"#222\"/></pattern>\n"
          "</defs></svg>\n",
          f);
}

/* The fill of pattern p. */
static const char *fill_of(int p)
{
    return p == 1 ? "url(#ak-p1)" : p == 2 ? "url(#ak-p2)" : "#3a3a3a";
}

/* A round upper bound of an axis whose largest value is v (a step of the
 * list below times a power of ten), so that its quarters are round too. */
static double nice_max(double v)
{
    static const double steps[] = {1, 1.2, 1.6, 2, 2.4, 3, 4, 5, 6, 8, 10};
    if (!(v > 0) || !isfinite(v)) return 1;
    const double p = pow(10, floor(log10(v)));
    const double m = v / p;
    size_t i = 0;
    while (i + 1 < sizeof steps / sizeof *steps && steps[i] < m) i++;
    return steps[i] * p;
}

/* Opens an SVG chart with its text alternatives. */
static void chart_open(hw *f, const char *id, double w, const char *title, const char *desc, double h)
{
    hw_printf(f, "<figure class=\"chart\"><svg id=\"%s\" viewBox=\"0 0 %.0f %.0f\" role=\"img\" aria-labelledby=\"%s-t %s-d\" "
               "aria-label=\"",
            id, w, h, id, id);
    html_escape_str(f, title);
    hw_printf(f, "\" font-family=\"sans-serif\" font-size=\"12\"><title id=\"%s-t\">", id);
    html_escape_str(f, title);
    hw_printf(f, "</title><desc id=\"%s-d\">", id);
    html_escape_str(f, desc);
    hw_printf(f, "</desc>\n<text x=\"%.0f\" y=\"22\" text-anchor=\"middle\" font-size=\"15\" font-weight=\"bold\">", w / 2);
    html_escape_str(f, title);
    hw_puts("</text>\n", f);
}

static void chart_close(hw *f, const char *desc)
{
    hw_puts("</svg><figcaption>", f);
    html_escape_str(f, desc);
    hw_puts("</figcaption></figure>\n", f);
}

/* A number for an axis tick: integers without decimals, large ones in k or M. */
static void tick_text(hw *f, double v)
{
    if (fabs(v) >= 1e6) hw_printf(f, "%gM", v / 1e6); /* 2.5M: short enough for the axis */
    else if (fabs(v) >= 1e5) hw_printf(f, "%gk", v / 1e3);
    else if (v == floor(v)) hw_printf(f, "%.0f", v);
    else hw_printf(f, "%.3g", v);
}

void svg_columns(hw *f, const char *id, const char *title, const char *desc, const char *xlabel, const char *ylabel,
                 const char *const *labels, size_t n, const svg_series *series, size_t nseries, int cumulative)
{
    if (!n || !nseries) return;
    double vmax = 0;
    for (size_t s = 0; s < nseries; s++)
        for (size_t i = 0; i < n; i++)
            if (series[s].values[i] > vmax) vmax = series[s].values[i];
    const double top = nice_max(vmax);
    const double pw = SVG_W - PLOT_L - PLOT_R, ph = SVG_H - PLOT_T - PLOT_B;
    const double x0 = PLOT_L, y0 = PLOT_T + ph;
    size_t legend = 0;
    for (size_t s = 0; s < nseries && (nseries > 1 || cumulative); s++) legend += series[s].name != NULL;
    chart_open(f, id, SVG_W, title, desc, SVG_H + (legend ? 16.0 : 0) + 20.0 * (double)legend);
    /* grid and left axis */
    for (int t = 0; t <= 4; t++) {
        const double y = y0 - ph * t / 4.0;
        hw_printf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#bbb\" stroke-width=\"0.6\"/>", x0, y,
                x0 + pw, y);
        hw_printf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">", x0 - 6, y + 4);
        tick_text(f, top * t / 4.0);
        hw_puts("</text>\n", f);
    }
    hw_printf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#000\"/>", x0, PLOT_T, x0, y0);
    hw_printf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#000\"/>\n", x0, y0, x0 + pw, y0);
    hw_printf(f, "<text x=\"16\" y=\"%.1f\" text-anchor=\"middle\" transform=\"rotate(-90 16 %.1f)\">", PLOT_T + ph / 2,
            PLOT_T + ph / 2);
    html_escape_str(f, ylabel);
    hw_puts("</text>\n", f);
    hw_printf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">", x0 + pw / 2, SVG_H - 8);
    html_escape_str(f, xlabel);
    hw_puts("</text>\n", f);
    /* bars */
    const double bw = pw / (double)n;
    const double gap = bw > 8 ? bw * 0.15 : 0;
    const double sw = (bw - 2 * gap) / (double)nseries;
    for (size_t i = 0; i < n; i++) {
        for (size_t s = 0; s < nseries; s++) {
            const double v = series[s].values[i];
            const double h = ph * v / top;
            const double x = x0 + bw * (double)i + gap + sw * (double)s;
            hw_printf(f, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\" stroke=\"#000\" "
                       "stroke-width=\"0.5\"><title>",
                    x, y0 - h, sw > 0.5 ? sw : 0.5, h, fill_of(series[s].pattern));
            if (series[s].name) {
                html_escape_str(f, series[s].name);
                hw_puts(", ", f);
            }
            html_escape_str(f, labels[i]);
            hw_printf(f, ": %.0f</title></rect>\n", v);
        }
        /* a bin label every so often, turned so long labels fit */
        const size_t every = n > 40 ? (n + 19) / 20 : 1;
        if (i % every == 0) {
            const double cx = x0 + bw * ((double)i + 0.5);
            hw_printf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" font-size=\"10\" transform=\"rotate(-40 %.1f %.1f)\">",
                    cx, y0 + 14, cx, y0 + 14);
            html_escape_str(f, labels[i]);
            hw_puts("</text>\n", f);
        }
    }
    /* cumulative lines on a right axis */
    if (cumulative) {
        hw_printf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#000\"/>", x0 + pw, PLOT_T, x0 + pw, y0);
        for (int t = 0; t <= 4; t++)
            hw_printf(f, "<text x=\"%.1f\" y=\"%.1f\">%d %%</text>", x0 + pw + 6, y0 - ph * t / 4.0 + 4, 25 * t);
        hw_printf(f, "\n<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" transform=\"rotate(90 %.1f %.1f)\">cumulative share of records</text>\n",
                SVG_W - 12, PLOT_T + ph / 2, SVG_W - 12, PLOT_T + ph / 2);
        for (size_t s = 0; s < nseries; s++) {
            double total = 0, run = 0;
            for (size_t i = 0; i < n; i++) total += series[s].values[i];
            if (!(total > 0)) continue;
            hw_printf(f, "<polyline fill=\"none\" stroke=\"#000\" stroke-width=\"2\"%s points=\"",
                    s ? " stroke-dasharray=\"6 4\"" : "");
            for (size_t i = 0; i < n; i++) {
                run += series[s].values[i];
                hw_printf(f, "%.1f,%.1f ", x0 + bw * ((double)i + 0.5), y0 - ph * run / total);
            }
            hw_puts("\"/>\n", f);
            run = 0;
            for (size_t i = 0; i < n; i++) { /* markers: circles for the first series, squares for the second */
                run += series[s].values[i];
                const double cx = x0 + bw * ((double)i + 0.5), cy = y0 - ph * run / total;
                if (s) hw_printf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"6\" height=\"6\" fill=\"#fff\" stroke=\"#000\"/>", cx - 3, cy - 3);
                else hw_printf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"#000\"/>", cx, cy);
            }
            hw_puts("\n", f);
        }
    }
    /* legend: one row per series under the x axis' label */
    for (size_t s = 0, row = 0; s < nseries && (nseries > 1 || cumulative); s++) {
        if (!series[s].name) continue;
        const double ly = SVG_H + 16.0 + 20.0 * (double)row++;
        hw_printf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"14\" height=\"12\" fill=\"%s\" stroke=\"#000\"/>", x0, ly - 10,
                fill_of(series[s].pattern));
        hw_printf(f, "<text x=\"%.1f\" y=\"%.1f\">", x0 + 20, ly);
        html_escape_str(f, series[s].name);
        if (cumulative) hw_puts(s ? "; cumulative share: dashed line, squares" : "; cumulative share: solid line, dots", f);
        hw_puts("</text>\n", f);
    }
    chart_close(f, desc);
}

void svg_hbars(hw *f, const char *id, double width, const char *title, const char *desc, const char *xlabel,
               const char *const *labels, const double *values, size_t n, double max, const char *fmt, int pattern)
{
    if (!n) return;
    if (!(max > 0)) {
        for (size_t i = 0; i < n; i++)
            if (values[i] > max) max = values[i];
        max = nice_max(max);
    }
    if (!(max > 0)) max = 1;
    const double row = 18, lw = width * 0.32, vw = 56;
    const double h = PLOT_T + row * (double)n + 44;
    const double pw = width - lw - vw - 10;
    chart_open(f, id, width, title, desc, h);
    const double x0 = lw, y0 = PLOT_T;
    for (size_t i = 0; i < n; i++) {
        const double y = y0 + row * (double)i;
        const double w = values[i] > 0 ? pw * values[i] / max : 0;
        /* the label, cut to what fits, in full in its tooltip */
        const size_t len = strlen(labels[i]);
        hw_printf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\"><title>", x0 - 6, y + 13);
        html_escape(f, labels[i], len);
        hw_puts("</title>", f);
        const size_t fit = (size_t)(lw / 7.5);
        html_escape(f, labels[i], len > fit ? fit - 1 : len);
        if (len > fit) hw_puts("\xE2\x80\xA6", f);
        hw_puts("</text>", f);
        hw_printf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" fill=\"%s\" stroke=\"#000\" stroke-width=\"0.5\"/>",
                x0, y + 3, w, row - 5, fill_of(pattern));
        char num[64];
        snprintf(num, sizeof num, fmt, values[i]);
        hw_printf(f, "<text x=\"%.1f\" y=\"%.1f\">%s</text>\n", x0 + w + 5, y + 13, num);
    }
    const double yb = y0 + row * (double)n + 2;
    hw_printf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#000\"/>", x0, y0, x0, yb);
    hw_printf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#000\"/>\n", x0, yb, x0 + pw, yb);
    for (int t = 0; t <= 4; t++) {
        const double x = x0 + pw * t / 4.0;
        hw_printf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#000\"/><text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">",
                x, yb, x, yb + 4, x, yb + 16);
        tick_text(f, max * t / 4.0);
        hw_puts("</text>", f);
    }
    hw_printf(f, "\n<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">", x0 + pw / 2, yb + 34);
    html_escape_str(f, xlabel);
    hw_puts("</text>\n", f);
    chart_close(f, desc);
}
