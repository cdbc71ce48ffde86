/* clock.h — the monotonic clock the phase timings of reports read. */
#ifndef AK_CLOCK_H
#define AK_CLOCK_H

#include <time.h>

/* Seconds on the monotonic clock (only differences mean anything). */
static inline double ak_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#endif
