/* progress.c — the progress counters and the cancel flag of a run (progress.h):
 * what the callback is told and when. */
#include "common/progress.h"

#include <string.h>

#include "common/clock.h"

/* The names of anonkit_phase, as the public header lists them. */
static const char *const phase_names[] = {"reading", "encoding", "partitioning", "repartition", "writing"};

void ak_progress_init(ak_progress *p)
{
    p->fn = NULL;
    p->ctx = NULL;
    p->interval = 0.05;
    atomic_init(&p->cancelled, 0);
    atomic_init(&p->done, 0);
    atomic_init(&p->bytes, 0);
    p->total = p->bytes_total = 0;
    p->phase = -1;
    p->pass = p->passes = 0;
    p->start = p->phase_start = p->last = 0;
}

void ak_progress_begin(ak_progress *p)
{
    if (!p) return;
    atomic_store(&p->cancelled, 0);
    atomic_store(&p->done, 0);
    atomic_store(&p->bytes, 0);
    p->total = p->bytes_total = 0;
    p->phase = -1;
    p->pass = p->passes = 0;
    p->start = p->phase_start = p->last = ak_seconds();
}

int ak_progress_cancelled(ak_error *err)
{
    return ak_err_set(err, ANONKIT_E_CANCELLED, NULL, 0, 0, "cancelled by the progress callback");
}

/* The rows the reading phase expects: the rows read so far scaled by the
 * share of the input's bytes they took (never fewer than read). */
static uint64_t reading_total(const ak_progress *p, uint64_t done, uint64_t bytes)
{
    if (!p->bytes_total || !bytes || !done) return p->total > done ? p->total : done;
    if (bytes >= p->bytes_total) return done;
    const double est = (double)done * (double)p->bytes_total / (double)bytes;
    return est > (double)done ? (uint64_t)est : done;
}

/* Calls the callback with the current state; a non-zero return cancels. */
static int report(ak_progress *p, double now, ak_error *err)
{
    p->last = now;
    if (!p->fn || p->phase < 0 || ak_progress_stopped(p)) return ak_progress_check(p, err); /* (once cancelled, no more calls) */
    anonkit_progress info;
    memset(&info, 0, sizeof info);
    const uint64_t done = atomic_load(&p->done), bytes = atomic_load(&p->bytes);
    info.phase = p->phase;
    info.phase_name = phase_names[p->phase];
    info.done = done;
    info.total = p->phase == ANONKIT_PHASE_READING ? reading_total(p, done, bytes) : p->total;
    if (info.total < done) info.total = done;
    if (p->phase == ANONKIT_PHASE_READING && p->bytes_total)
        info.fraction = bytes >= p->bytes_total ? 1.0 : (double)bytes / (double)p->bytes_total;
    else
        info.fraction = info.total ? (double)done / (double)info.total : -1.0;
    info.pass = p->pass;
    info.passes = p->passes;
    info.elapsed = now - p->start;
    info.phase_elapsed = now - p->phase_start;
    if (p->fn(p->ctx, &info) != 0) atomic_store(&p->cancelled, 1);
    return ak_progress_check(p, err);
}

/* The last report of the current phase: everything it expected is done. */
static int finish_phase(ak_progress *p, double now, ak_error *err)
{
    if (p->phase < 0) return ak_progress_check(p, err);
    uint64_t done = atomic_load(&p->done);
    if (p->phase == ANONKIT_PHASE_READING) {
        p->total = done; /* now known */
        if (p->bytes_total) atomic_store(&p->bytes, p->bytes_total);
    } else if (done < p->total) {
        atomic_store(&p->done, p->total);
    } else {
        p->total = done;
    }
    return report(p, now, err);
}

/* Ends the current phase and starts the next one (pass n of m of a repartition). */
static int start_phase(ak_progress *p, int phase, uint64_t total, uint64_t bytes_total, unsigned n, unsigned m,
                       ak_error *err)
{
    if (!p) return ANONKIT_OK;
    const double now = ak_seconds();
    AK_CHECK(finish_phase(p, now, err));
    p->phase = phase;
    p->total = total;
    p->bytes_total = bytes_total;
    p->pass = n;
    p->passes = m > n ? m : n;
    atomic_store(&p->done, 0);
    atomic_store(&p->bytes, 0);
    p->phase_start = now;
    return report(p, now, err);
}

int ak_progress_phase(ak_progress *p, int phase, uint64_t total, uint64_t bytes_total, ak_error *err)
{
    return start_phase(p, phase, total, bytes_total, 0, 0, err);
}

int ak_progress_pass(ak_progress *p, unsigned n, unsigned m, ak_error *err)
{
    if (!p) return ANONKIT_OK;
    p->phase = ANONKIT_PHASE_REPARTITION; /* the same rows, the same clock */
    p->pass = n;
    p->passes = m >= n ? m : 0; /* (past the estimate: unknown) */
    return report(p, ak_seconds(), err);
}

int ak_progress_end(ak_progress *p, ak_error *err)
{
    if (!p) return ANONKIT_OK;
    const int rc = finish_phase(p, ak_seconds(), err);
    p->phase = -1;
    return rc;
}

int ak_progress_poll(ak_progress *p, ak_error *err)
{
    if (!p) return ANONKIT_OK;
    if (p->fn) {
        const double now = ak_seconds();
        if (now - p->last >= p->interval) return report(p, now, err);
    }
    return ak_progress_check(p, err);
}

int ak_progress_set(ak_progress *p, uint64_t done, ak_error *err)
{
    if (!p) return ANONKIT_OK;
    if (done > atomic_load(&p->done)) atomic_store(&p->done, done);
    return ak_progress_poll(p, err);
}

int ak_progress_add(ak_progress *p, uint64_t rows, uint64_t bytes, ak_error *err)
{
    if (!p) return ANONKIT_OK;
    atomic_fetch_add_explicit(&p->done, rows, memory_order_relaxed);
    if (bytes) atomic_fetch_add_explicit(&p->bytes, bytes, memory_order_relaxed);
    return ak_progress_poll(p, err);
}

int ak_progress_worker_add(ak_progress *p, uint64_t rows, uint64_t bytes, ak_error *err)
{
    if (!p) return ANONKIT_OK;
    atomic_fetch_add_explicit(&p->done, rows, memory_order_relaxed);
    if (bytes) atomic_fetch_add_explicit(&p->bytes, bytes, memory_order_relaxed);
    return ak_progress_check(p, err);
}
