/* parallel.c — independent parts of a job on threads (see parallel.h). */
#if defined(__linux__)
#define _GNU_SOURCE /* sched_getcpu, pthread_attr_setaffinity_np */
#include <sched.h>
#endif
#include "common/parallel.h"

#include <errno.h>
#include <locale.h>
#include <pthread.h>
#include <stdlib.h>

/* What a thread started by ak_thread_create runs, and in which locale; on
 * Linux also the processors it may run on (its creator's) once started. */
typedef struct thread_start {
    void *(*fn)(void *);
    void *arg;
    locale_t locale;
#if defined(__linux__)
    cpu_set_t allowed;
    int hinted; /* started on the allowed processors other than its creator's: widened to all of them */
#endif
} thread_start;

/* The new thread: takes its creator's locale (and processors), then runs fn. */
static void *thread_main(void *p)
{
    const thread_start s = *(const thread_start *)p;
    free(p);
#if defined(__linux__)
    if (s.hinted) (void)pthread_setaffinity_np(pthread_self(), sizeof s.allowed, &s.allowed); /* (best effort) */
#endif
    uselocale(s.locale);
    return s.fn(s.arg);
}

#if defined(__linux__)
/* Sets attr to start a thread on the processors in s->allowed (the
 * creator's) other than the one the creator runs on, when there are such;
 * 1 when it did. Linux places a new thread on its creator's processor and
 * leaves it waiting there while the creator runs (seen on a two-processor
 * machine: a thread started beside a 1 ms task of its creator began 1 ms
 * late, after the creator stopped), so a part of a few milliseconds ran
 * after the caller's instead of beside it; the thread widens its processors
 * back to s->allowed as soon as it runs (thread_main), so that this is a
 * start place only. */
static int start_elsewhere(thread_start *s, pthread_attr_t *attr)
{
    if (sched_getaffinity(0, sizeof s->allowed, &s->allowed) != 0) return 0;
    const int here = sched_getcpu();
    if (here < 0 || here >= CPU_SETSIZE || !CPU_ISSET(here, &s->allowed) || CPU_COUNT(&s->allowed) < 2) return 0;
    cpu_set_t others = s->allowed;
    CPU_CLR(here, &others);
    if (pthread_attr_init(attr) != 0) return 0;
    if (pthread_attr_setaffinity_np(attr, sizeof others, &others) != 0) {
        pthread_attr_destroy(attr);
        return 0;
    }
    return 1;
}
#endif

int ak_thread_create(pthread_t *thread, void *(*fn)(void *), void *arg)
{
    thread_start *s = malloc(sizeof *s);
    if (!s) return ENOMEM;
    s->fn = fn;
    s->arg = arg;
    s->locale = uselocale((locale_t)0); /* LC_GLOBAL_LOCALE when the creator has none of its own */
    pthread_attr_t attr;
    int hinted = 0; /* (a local: once started, the thread frees s) */
#if defined(__linux__)
    hinted = s->hinted = start_elsewhere(s, &attr);
#endif
    int rc = pthread_create(thread, hinted ? &attr : NULL, thread_main, s);
#if defined(__linux__)
    if (hinted && rc != 0) { /* (the attribute refused: as without it; s was not handed over) */
        s->hinted = 0;
        rc = pthread_create(thread, NULL, thread_main, s);
    }
#endif
    if (hinted) pthread_attr_destroy(&attr);
    if (rc != 0) free(s);
    return rc;
}

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
    for (unsigned j = 1; j < n; j++) started[j] = ak_thread_create(&tid[j], fn, at + j * size) == 0;
    if (n > 0) fn(at);
    for (unsigned j = 1; j < n; j++) {
        if (started[j]) pthread_join(tid[j], NULL);
        else fn(at + j * size);
    }
}

/* The state of one ak_pipeline_run. */
typedef struct pipeline_run {
    const ak_pipeline *p;
    size_t nitems;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    size_t next;          /* the next item to produce */
    size_t consumed;      /* items consumed, in order */
    unsigned char *ready; /* per slot: produced, not yet consumed (slot i % nslots holds item i: items
                             from consumed + nslots on are not taken before `consumed` is consumed) */
    int status;           /* the first failure, 0 when none */
    int stop;
} pipeline_run;

typedef struct pipeline_worker {
    pipeline_run *r;
    unsigned j;
} pipeline_worker;

/* Takes the next item to produce when its slot is free (holding mu): 1 and
 * *item, 0 when there is none to take now, -1 when none will come. */
static int pipeline_take(pipeline_run *r, size_t *item)
{
    if (r->stop || r->status < 0 || r->next >= r->nitems) return -1;
    if (r->next >= r->consumed + r->p->nslots) return 0;
    *item = r->next++;
    r->ready[*item % r->p->nslots] = 0;
    return 1;
}

/* Produces item into its slot with worker j's state (mu not held); marks it
 * ready (holding mu on return). */
static void pipeline_produce(pipeline_run *r, unsigned j, size_t item)
{
    const ak_pipeline *p = r->p;
    const size_t slot = item % p->nslots;
    const int rc = p->produce(p->ctx, p->worker[j], item, (char *)p->slots + slot * p->slot_size);
    pthread_mutex_lock(&r->mu);
    if (rc < 0 && r->status == 0) r->status = rc;
    r->ready[slot] = 1;
    pthread_cond_broadcast(&r->cv);
}

static void *pipeline_worker_main(void *arg)
{
    const pipeline_worker *w = arg;
    pipeline_run *r = w->r;
    pthread_mutex_lock(&r->mu);
    for (;;) {
        size_t item;
        const int t = pipeline_take(r, &item);
        if (t < 0) break;
        if (t == 0) {
            pthread_cond_wait(&r->cv, &r->mu);
            continue;
        }
        pthread_mutex_unlock(&r->mu);
        pipeline_produce(r, w->j, item);
    }
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
    return NULL;
}

int ak_pipeline_run(const ak_pipeline *p, size_t nitems)
{
    pipeline_run r = {.p = p, .nitems = nitems};
    unsigned nworkers = p->nworkers < 1 ? 1 : p->nworkers;
    if (nworkers > AK_MAX_PARTS) nworkers = AK_MAX_PARTS;
    r.ready = calloc(p->nslots ? p->nslots : 1, 1);
    if (!r.ready || !p->nslots || pthread_mutex_init(&r.mu, NULL) != 0) {
        free(r.ready);
        return -1;
    }
    if (pthread_cond_init(&r.cv, NULL) != 0) {
        pthread_mutex_destroy(&r.mu);
        free(r.ready);
        return -1;
    }
    pthread_t tid[AK_MAX_PARTS];
    pipeline_worker w[AK_MAX_PARTS];
    int started[AK_MAX_PARTS] = {0};
    for (unsigned j = 1; j < nworkers; j++) {
        w[j] = (pipeline_worker){&r, j};
        started[j] = ak_thread_create(&tid[j], pipeline_worker_main, &w[j]) == 0;
    }
    pthread_mutex_lock(&r.mu);
    while (r.consumed < nitems && r.status == 0) {
        const size_t slot = r.consumed % p->nslots;
        if (r.ready[slot]) { /* the next item in order */
            pthread_mutex_unlock(&r.mu);
            p->consume(p->ctx, r.consumed, (char *)p->slots + slot * p->slot_size);
            pthread_mutex_lock(&r.mu);
            r.ready[slot] = 0;
            r.consumed++;
            pthread_cond_broadcast(&r.cv);
            continue;
        }
        size_t item;
        if (pipeline_take(&r, &item) <= 0) {
            pthread_cond_wait(&r.cv, &r.mu);
            continue;
        }
        pthread_mutex_unlock(&r.mu);
        pipeline_produce(&r, 0, item);
    }
    r.stop = 1; /* the workers stop */
    pthread_cond_broadcast(&r.cv);
    pthread_mutex_unlock(&r.mu);
    for (unsigned j = 1; j < nworkers; j++)
        if (started[j]) pthread_join(tid[j], NULL);
    pthread_cond_destroy(&r.cv);
    pthread_mutex_destroy(&r.mu);
    free(r.ready);
    return r.status;
}
