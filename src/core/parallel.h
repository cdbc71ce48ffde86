/* parallel.h — runs independent pieces of one job on threads. */
#ifndef AK_PARALLEL_H
#define AK_PARALLEL_H

#include <stddef.h>

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

#endif
