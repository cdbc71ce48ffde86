/* parallel.h — runs independent pieces of one job on threads. */
#ifndef AK_PARALLEL_H
#define AK_PARALLEL_H

#include <pthread.h>
#include <stddef.h>

/* pthread_create(thread, NULL, fn, arg) for the library's worker threads: the
 * new thread runs in the creating thread's current locale (uselocale), so that
 * the C numeric locale a public entry point set for its call holds in its
 * workers too; the creator joins the thread before that locale ends. Returns
 * 0 or an error number (ENOMEM, or pthread_create's). */
int ak_thread_create(pthread_t *thread, void *(*fn)(void *), void *arg);

/* Most threads ak_run_parts uses; callers cut their work into at most this
 * many parts. */
#define AK_MAX_PARTS 16

/* How many parts to cut `items` into for `threads` threads: at most
 * AK_MAX_PARTS, and 1 (no threads started) when threads is 0 or there are
 * fewer than min_per_part items for each of them. */
unsigned ak_parts(size_t items, unsigned threads, size_t min_per_part);

/* Runs fn on each of the n parts at parts[0], parts[size], ...: parts 1..n-1
 * on threads of their own, part 0 in the caller, then any part whose thread
 * could not be started, also in the caller; returns when all are done. */
void ak_run_parts(void *parts, size_t size, unsigned n, void *(*fn)(void *));

/* An ordered pipeline: items 0 .. nitems-1 are produced, item i into slot
 * i % nslots, by the workers in any order, and consumed by the caller in
 * order as soon as the next one is ready; a slot is produced again only
 * after its item was consumed. Worker 0 is the caller (it produces when the
 * next item to consume is not ready), workers 1 .. nworkers-1 run on
 * threads of their own (one that cannot start is left out). worker[j] is
 * the state worker j produces with. produce returns a negative status to
 * stop everything. */
typedef struct ak_pipeline {
    void *ctx;
    int (*produce)(void *ctx, void *worker, size_t item, void *slot);
    void (*consume)(void *ctx, size_t item, void *slot);
    void *slots;
    size_t slot_size, nslots;
    void **worker;
    unsigned nworkers;
} ak_pipeline;

/* Runs the pipeline over nitems items; returns the first negative status of
 * produce, -1 when it could not be set up, else 0. */
int ak_pipeline_run(const ak_pipeline *p, size_t nitems);

#endif
