/* progress.c — the command line's progress line on stderr, drawn from the
 * library's progress callback (anonkit_job_set_progress): one line redrawn in
 * place ("\r", the text, clear to the end of the line) at most ten times a
 * second, only once a run has passed one second and only when stderr is a
 * terminal; --progress draws it on any stderr (there one line per update,
 * since "\r" would pile up in a file), --no-progress never. It is erased
 * before the summary or an error message is printed, and never goes to
 * stdout, which may carry the table. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"

/* Seconds a run goes before the line appears, and between two redraws. */
#define PROGRESS_DELAY 1.0
#define PROGRESS_REDRAW 0.1
/* Columns the line takes at most (a wrapped line could not be redrawn). */
#define PROGRESS_WIDTH 79

/* "1234567" as "1,234,567" into buf. */
static const char *grouped(unsigned long long v, char *buf, size_t size)
{
    char digits[32];
    const int n = snprintf(digits, sizeof digits, "%llu", v);
    size_t at = 0;
    for (int i = 0; i < n && at + 2 < size; i++) {
        if (i > 0 && (n - i) % 3 == 0) buf[at++] = ',';
        buf[at++] = digits[i];
    }
    buf[at] = '\0';
    return buf;
}

/* "42 s", "3 min 5 s" or "2 h 7 min" into buf (seconds rounded). */
static const char *duration(double seconds, char *buf, size_t size)
{
    const unsigned long s = seconds > 0 ? (unsigned long)(seconds + 0.5) : 0;
    if (s < 60) snprintf(buf, size, "%lu s", s);
    else if (s < 3600) snprintf(buf, size, "%lu min %lu s", s / 60, s % 60);
    else snprintf(buf, size, "%lu h %lu min", s / 3600, s / 60 % 60);
    return buf;
}

/* Formats the line for p into buf: phase, rows done of expected, percent,
 * time left (when the phase has gone far enough to tell). */
static void format_line(const anonkit_progress *p, char *buf, size_t size)
{
    char phase[48], done[32], total[32], left[32];
    if (p->phase == ANONKIT_PHASE_REPARTITION && p->passes)
        snprintf(phase, sizeof phase, "repartition %u of ~%u", p->pass, p->passes);
    else if (p->phase == ANONKIT_PHASE_REPARTITION)
        snprintf(phase, sizeof phase, "repartition %u", p->pass);
    else
        snprintf(phase, sizeof phase, "%s", p->phase_name ? p->phase_name : "working");
    int used = snprintf(buf, size, "anonkit: %s", phase);
    if (used < 0 || (size_t)used >= size) return;
    if (p->total)
        used += snprintf(buf + used, size - (size_t)used, "  %s of %s%s rows", grouped(p->done, done, sizeof done),
                         p->phase == ANONKIT_PHASE_READING && p->fraction < 1 ? "~" : "",
                         grouped(p->total, total, sizeof total));
    else if (p->done)
        used += snprintf(buf + used, size - (size_t)used, "  %s rows", grouped(p->done, done, sizeof done));
    if (used < 0 || (size_t)used >= size || p->fraction < 0) return;
    used += snprintf(buf + used, size - (size_t)used, "  %3.0f%%", 100 * p->fraction);
    if (used < 0 || (size_t)used >= size) return;
    if (p->fraction >= 0.01 && p->fraction < 1 && p->phase_elapsed >= 0.5) {
        const double seconds = p->phase_elapsed * (1 - p->fraction) / p->fraction;
        if (seconds < 1) snprintf(buf + used, size - (size_t)used, "  under 1 s left");
        else snprintf(buf + used, size - (size_t)used, "  about %s left", duration(seconds, left, sizeof left));
    }
}

/* The library's progress callback: draws the line when it is due. Never
 * cancels (the command is stopped by a signal). */
static int draw(void *ctx, const anonkit_progress *p)
{
    cli_progress *cp = ctx;
    if (p->elapsed < cp->delay) return 0;
    /* at most ten redraws a second, but a phase's last update (done == total) is always shown,
     * so that a log ends every phase at 100 % */
    const int phase_done = p->total && p->done >= p->total;
    if (cp->drawn && !phase_done && p->elapsed - cp->last < PROGRESS_REDRAW) return 0;
    char line[160];
    format_line(p, line, sizeof line);
    if (strlen(line) > PROGRESS_WIDTH) line[PROGRESS_WIDTH] = '\0';
    if (cp->in_place) fprintf(stderr, "\r%s\033[K", line);
    else fprintf(stderr, "%s\n", line);
    fflush(stderr);
    cp->drawn = 1;
    cp->last = p->elapsed;
    return 0;
}

void cli_progress_start(cli_progress *cp, anonkit_job *job)
{
    memset(cp, 0, sizeof *cp);
    const int wanted = anonkit_job_progress_wanted(job);
    const int tty = isatty(STDERR_FILENO);
    if (wanted < 0 || (wanted == 0 && !tty)) return;
    cp->in_place = tty;
    cp->delay = PROGRESS_DELAY;
    /* Tests only: ANONKIT_PROGRESS_DELAY (seconds) shortens the wait, so that
     * a small table shows the line. Not an interface. */
    const char *delay = getenv("ANONKIT_PROGRESS_DELAY");
    if (delay && *delay) {
        char *end;
        const double d = strtod(delay, &end);
        if (!*end && d >= 0) cp->delay = d;
    }
    anonkit_job_set_progress(job, draw, cp);
}

void cli_progress_clear(cli_progress *cp)
{
    if (cp->drawn && cp->in_place) {
        fputs("\r\033[K", stderr);
        fflush(stderr);
    }
    cp->drawn = 0;
}
