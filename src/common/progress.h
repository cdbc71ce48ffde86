/* progress.h — progress counters and the cancel flag of one run
 * (docs/ARCHITECTURE.md §12a). The api layer owns one ak_progress per job and
 * hands a pointer down (table_spec, ak_run_context, publish_opts, the CSV
 * reader); the layers below count rows into it and check it at block or
 * partition granularity. Every function accepts a NULL ak_progress (no
 * progress wanted: nothing is counted, nothing is cancelled).
 *
 * Threads: the callback runs only on the thread that called the verb
 * (ak_progress_poll and the functions that call it); worker threads only add
 * to the atomic counters and read the atomic cancel flag
 * (ak_progress_worker_add, ak_progress_stopped). */
#ifndef AK_PROGRESS_H
#define AK_PROGRESS_H

#include <stdatomic.h>
#include <stdint.h>

#include "anonkit/anonkit.h"
#include "common/error.h"

typedef struct ak_progress {
    anonkit_progress_fn fn; /* NULL: only cancelling (never set without it) */
    void *ctx;
    double interval;        /* least seconds between two calls within a phase (0: at every check) */
    atomic_int cancelled;   /* the callback asked to stop: every loop gives up at its next check */
    _Atomic uint64_t done;  /* rows done in the phase (workers add) */
    _Atomic uint64_t bytes; /* reading: bytes of the input consumed (workers add) */
    uint64_t total;         /* rows the phase expects (0: unknown; reading: estimated from bytes) */
    uint64_t bytes_total;   /* reading: the input's size (0: unknown) */
    int phase;              /* anonkit_phase; -1: none yet */
    unsigned pass, passes;  /* repartition n of m */
    double start, phase_start, last;
} ak_progress;

/* Sets p up for a run: no callback, no phase, not cancelled. */
void ak_progress_init(ak_progress *p);

/* Starts a run: the clock, no phase, not cancelled (a cancelled job may run again). */
void ak_progress_begin(ak_progress *p);

/* Ends the current phase (its last report says done = total) and starts
 * `phase` expecting `total` rows; reading also takes the input's size in
 * bytes_total. Always calls the callback. Returns ANONKIT_E_CANCELLED (with
 * err) when the callback or an earlier one asked to stop. */
int ak_progress_phase(ak_progress *p, int phase, uint64_t total, uint64_t bytes_total, ak_error *err);

/* Out of core: the partitioning phase goes on as repartition pass n of about
 * m (the rows done and expected stay those of the partitioning); past the
 * estimate m is reported as 0 (unknown). */
int ak_progress_pass(ak_progress *p, unsigned n, unsigned m, ak_error *err);

/* Ends the last phase (done = total) with a final report. */
int ak_progress_end(ak_progress *p, ak_error *err);

/* Calling thread: sets the rows done (never lowers them), then polls. */
int ak_progress_set(ak_progress *p, uint64_t done, ak_error *err);

/* Calling thread: adds rows (and bytes while reading), then polls. */
int ak_progress_add(ak_progress *p, uint64_t rows, uint64_t bytes, ak_error *err);

/* Calling thread: calls the callback when `interval` has passed since the
 * last call; ANONKIT_E_CANCELLED once cancelled. */
int ak_progress_poll(ak_progress *p, ak_error *err);

/* Worker threads: adds rows and bytes; ANONKIT_E_CANCELLED once cancelled
 * (the callback is not called). */
int ak_progress_worker_add(ak_progress *p, uint64_t rows, uint64_t bytes, ak_error *err);

/* Records the cancellation in err and returns ANONKIT_E_CANCELLED. */
int ak_progress_cancelled(ak_error *err);

/* Cheap check for hot loops on any thread: 1 once the run is cancelled. */
static inline int ak_progress_stopped(ak_progress *p)
{
    return p && atomic_load_explicit(&p->cancelled, memory_order_relaxed);
}

/* ANONKIT_E_CANCELLED (with err) when the run is cancelled, else ANONKIT_OK. */
static inline int ak_progress_check(ak_progress *p, ak_error *err)
{
    return ak_progress_stopped(p) ? ak_progress_cancelled(err) : ANONKIT_OK;
}

#endif
