/* parallel.c — independent parts of a job on threads (see parallel.h). */
#include "core/parallel.h"

#include <pthread.h>

unsigned ak_parts(size_t items, unsigned threads, size_t min_per_part)
{
    if (threads > AK_MAX_PARTS) threads = AK_MAX_PARTS;
    return threads < 1 || items < min_per_part * threads ? 1 : threads;
}

void ak_run_parts(void *parts, size_t size, unsigned n, void *(*fn)(void *))
{
    if (n > AK_MAX_PARTS) n = AK_MAX_PARTS;
    char *at = parts;
    pthread_t tid[AK_MAX_PARTS];
    int started[AK_MAX_PARTS] = {0};
    for (unsigned j = 1; j < n; j++) started[j] = pthread_create(&tid[j], NULL, fn, at + j * size) == 0;
    if (n > 0) fn(at);
    for (unsigned j = 1; j < n; j++) {
        if (started[j]) pthread_join(tid[j], NULL);
        else fn(at + j * size);
    }
}
