/* mondrian_threads.c — the in-memory Mondrian on several threads: each
 * worker's buffers, helper threads that take the partitions coming last in
 * depth-first order (their classes appended so that the class order is that
 * of a single-threaded run), and filling the work array and writing the
 * class ids on two threads. */
#include "algo/mondrian/mondrian_internal.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common/compare.h"
#include "common/hugemem.h"
#include "common/parallel.h"

/* Forgets the buffers of one worker (a helper starts from a copy of its
 * parent, sharing the table, rows and class_of but nothing else). */
static void worker_forget(mdr *s)
{
    s->scratch = s->moved = s->order = s->order_tmp = s->code_count = NULL;
    s->small_side = s->small_rows = NULL;
    s->class_begin = NULL;
    s->class_begin_cap = 0;
    s->counts = s->counts_scratch = s->child_rows = NULL;
    s->codes = NULL;
    s->work = NULL;
    s->stack = NULL;
    s->boxes = NULL;
    s->depth = s->cap = 0;
    memset(&s->whole, 0, sizeof s->whole);
    memset(&s->left, 0, sizeof s->left);
    memset(&s->less, 0, sizeof s->less);
    memset(&s->cls_whole, 0, sizeof s->cls_whole);
    memset(&s->cls_left, 0, sizeof s->cls_left);
    memset(&s->cls_group, 0, sizeof s->cls_group);
}

/* Frees the buffers of one worker (not the shared rows). */
void mdr_worker_free(mdr *s)
{
    free(s->scratch);
    free(s->moved);
    free(s->small_side);
    free(s->small_rows);
    free(s->class_begin);
    free(s->order);
    free(s->order_tmp);
    free(s->code_count);
    ak_hist_free(&s->whole);
    ak_hist_free(&s->left);
    ak_hist_free(&s->less);
    ak_hist_free(&s->cls_whole);
    ak_hist_free(&s->cls_left);
    ak_hist_free(&s->cls_group);
    free(s->counts);
    free(s->counts_scratch);
    free(s->codes);
    model_work_free(s->work);
    free(s->child_rows);
    free(s->stack);
    free(s->boxes);
    worker_forget(s);
}

/* Allocates the buffers of a worker for partitions of up to `capacity` rows. */
int mdr_worker_alloc(mdr *s, size_t capacity, ak_error *err)
{
    s->capacity = capacity;
    s->scratch = malloc((capacity + 1) * sizeof *s->scratch); /* + 1: median_of's gathering */
    if (s->simd) { /* small partitions' out-of-place split (optional: without it the in-place one serves) */
        s->small_side = malloc(2 * MDR_SMALL_PARTITION * sizeof *s->small_side);
        s->small_rows = malloc(((size_t)MDR_SMALL_PARTITION * s->w + 8) * sizeof *s->small_rows);
        if (!s->small_side || !s->small_rows) {
            free(s->small_side);
            free(s->small_rows);
            s->small_side = s->small_rows = NULL;
        }
    }
    s->counts = malloc((s->sensitive_domain + 1) * sizeof *s->counts);
    s->counts_scratch = malloc((s->sensitive_domain + 1) * sizeof *s->counts_scratch);
    s->child_rows = malloc((s->max_children + 1) * sizeof *s->child_rows);
    if (model_has_dist(s->m) && (!(s->codes = malloc((s->sensitive_domain + 1) * sizeof *s->codes)) ||
                                 !(s->work = model_work_new(s->m->ref))))
        return ak_err_nomem(err);
    if (!s->scratch || !s->counts || !s->counts_scratch || !s->child_rows ||
        ak_hist_init(&s->whole, s->sensitive_domain) || ak_hist_init(&s->left, s->sensitive_domain) ||
        ak_hist_init(&s->less, s->sensitive_domain) || ak_hist_init(&s->cls_whole, s->class_domain) ||
        ak_hist_init(&s->cls_left, s->class_domain) || ak_hist_init(&s->cls_group, s->class_domain))
        return ak_err_nomem(err);
    if (s->work) /* t-closeness's lower bound on the partition and its sides (model_dist_may_hold) */
        s->whole.weight = s->left.weight = s->less.weight = model_dist_weights(&s->m->dist, s->m->ref);
    return ANONKIT_OK;
}

/* Partitions smaller than this are not worth a thread. */
#define MDR_PARALLEL_MIN_ROWS 50000

/* A helper is a thread of its own rather than a part of ak_run_parts
 * (common/parallel.h): the work is not cut into parts up front but handed
 * over while it unfolds — a worker gives the bottom frames of its stack to a
 * helper whenever threads are free, takes threads back when a helper ends,
 * lends its own to a running helper while it waits, and appends the
 * helpers' classes in an order fixed by when each started. */
typedef struct helper {
    mdr s;
    partition classes;
    unsigned threads;  /* threads it took from its parent, itself included */
    ak_error err;
    int rc;
    pthread_t thread;
    int started;       /* its thread runs or has not been joined yet */
    atomic_int done;   /* its thread has finished */
    atomic_uint lent;  /* threads lent to it by its parent (mdr.lent) */
} helper;


static void *helper_main(void *arg)
{
    helper *h = arg;
    h->rc = mdr_run_worker(&h->s, &h->err);
    if (h->rc == ANONKIT_OK && h->s.progress_rows) /* the rows of its last classes */
        h->rc = ak_progress_worker_add(h->s.progress, h->s.progress_rows, 0, &h->err);
    atomic_store(&h->done, 1);
    return NULL;
}

/* Hands the bottom frames of the stack (the partitions that come last in
 * depth-first order) with about half the rows to a new thread; returns 1 when
 * a thread was started. The helper numbers its classes from 0; they are
 * appended after this worker's own when it is joined, which keeps the class
 * order of a single-threaded run. */
static int spawn_helper(mdr *s, helper **out, ak_error *err)
{
    *out = NULL;
    if (s->threads < 2 || s->depth < 2) return 0;
    size_t total = 0;
    for (size_t f = 0; f < s->depth; f++) total += s->stack[f].end - s->stack[f].begin;
    if (total < MDR_PARALLEL_MIN_ROWS) return 0;
    size_t give = 0, rows = 0; /* frames [0, give) go to the helper */
    while (give + 1 < s->depth && rows * 2 < total) {
        rows += s->stack[give].end - s->stack[give].begin;
        give++;
    }
    helper *h = calloc(1, sizeof *h);
    if (!h) return ak_err_nomem(err);
    atomic_init(&h->done, 0);
    atomic_init(&h->lent, 0);
    h->s = *s; /* shares table, model, rows and class_of */
    mdr *c = &h->s;
    worker_forget(c);
    c->threads = s->threads / 2;
    c->lent = &h->lent;
    c->progress_rows = 0; /* (the parent counts its own) */
    h->threads = c->threads;
    c->out = &h->classes;
    size_t largest = 0;
    for (size_t f = 0; f < give; f++)
        if (s->stack[f].end - s->stack[f].begin > largest) largest = s->stack[f].end - s->stack[f].begin;
    int rc = partition_init(&h->classes, 0, s->d, err);
    const size_t expected = rows / (s->m->k > 1 ? s->m->k : 1) + 1; /* classes it can make at most (rows: given) */
    if (rc == ANONKIT_OK) rc = partition_reserve(&h->classes, expected, err);
    if (rc == ANONKIT_OK) rc = mdr_reserve_class_rows(c, expected, err);
    if (rc == ANONKIT_OK) rc = mdr_worker_alloc(c, largest, err);
    for (size_t f = 0; rc == ANONKIT_OK && f < give; f++) {
        const uint32_t *frame = s->boxes + f * s->fw;
        rc = mdr_push(c, s->stack[f].begin, s->stack[f].end, frame, frame + 2 * s->bw, frame + 2 * s->bw + s->d,
                  s->stack[f].median_only, err);
    }
    if (rc == ANONKIT_OK && ak_thread_create(&h->thread, helper_main, h) != 0)
        rc = ak_err_set(err, ANONKIT_E_INTERNAL, NULL, 0, 0, "cannot start a thread");
    if (rc < 0) {
        mdr_worker_free(c);
        partition_free(&h->classes);
        free(h);
        return rc;
    }
    h->started = 1;
    /* This worker keeps frames [give, depth). */
    memmove(s->stack, s->stack + give, (s->depth - give) * sizeof *s->stack);
    memmove(s->boxes, s->boxes + give * s->fw, (s->depth - give) * s->fw * sizeof *s->boxes);
    s->depth -= give;
    s->threads -= h->threads; /* (not c->threads: the helper's own, which it may change once it runs) */
    *out = h;
    return 1;
}

/* Waits for a helper's thread to end and takes its threads back. */
static void wait_helper(mdr *s, helper *h)
{
    if (!h->started) return;
    pthread_join(h->thread, NULL);
    h->started = 0;
    s->threads += h->threads;
}

/* Appends the classes of a finished helper to this worker's (their ids
 * after the worker's), then frees it. */
static int join_helper(mdr *s, helper *h, int rc, ak_error *err)
{
    wait_helper(s, h);
    if (rc == ANONKIT_OK && h->rc < 0) {
        *err = h->err;
        rc = h->rc;
    }
    const size_t offset = s->out->nclasses;
    if (rc == ANONKIT_OK) rc = partition_append(s->out, &h->classes, err);
    /* the helper's classes' first rows after this worker's */
    if (rc == ANONKIT_OK && h->classes.nclasses) rc = mdr_note_class_rows(s, (uint32_t)(s->out->nclasses - 1), 0, err);
    if (rc == ANONKIT_OK && h->classes.nclasses)
        memcpy(s->class_begin + offset, h->s.class_begin, h->classes.nclasses * sizeof *s->class_begin);
    mdr_worker_free(&h->s);
    partition_free(&h->classes);
    free(h);
    return rc;
}

/* Processes the worker's stack until it is empty, handing the bottom frames
 * to a helper thread whenever threads are left: after the first split, and
 * again each time a helper finishes while this worker still has enough
 * work; and when this worker runs out of work first, it lends its threads
 * to the running helper (which may then hand part of its own work on) while
 * it waits, so that the threads stay busy. Each helper takes partitions that
 * come after all this worker keeps (depth-first), and before those of the
 * helpers started earlier, so the helpers' classes are appended in reverse
 * order of their start, which keeps the class order of a single-threaded
 * run. */
int mdr_run_worker(mdr *s, ak_error *err)
{
    helper *h = NULL;      /* the running helper */
    helper **done = NULL;  /* finished helpers, in order of their start */
    size_t ndone = 0, cap_done = 0;
    int rc = ANONKIT_OK;
    while (s->depth > 0 && rc == ANONKIT_OK) {
        rc = mdr_process_top(s, err);
        if (s->lent && atomic_load(s->lent)) s->threads += atomic_exchange(s->lent, 0); /* the parent waits for us */
        if (rc == ANONKIT_OK && h && atomic_load(&h->done)) {
            if (ndone == cap_done) {
                const size_t cap = cap_done ? 2 * cap_done : 4;
                helper **grown = realloc(done, cap * sizeof *grown);
                if (!grown) {
                    rc = ak_err_nomem(err);
                    break;
                }
                done = grown;
                cap_done = cap;
            }
            wait_helper(s, h);
            done[ndone++] = h;
            h = NULL;
        }
        if (rc == ANONKIT_OK && !h && s->threads > 1) {
            int spawned = spawn_helper(s, &h, err);
            if (spawned < 0) rc = spawned;
        }
    }
    const unsigned lend = h && rc == ANONKIT_OK ? s->threads : 0;
    if (lend) { /* nothing left here: this worker's threads help the helper */
        s->threads -= lend;
        atomic_fetch_add(&h->lent, lend);
    }
    if (h) rc = join_helper(s, h, rc, err);
    s->threads += lend;
    while (ndone > 0) rc = join_helper(s, done[--ndone], rc, err);
    free(done);
    return rc;
}
/* Writes the class id of the rows of classes [first, last) of s->out. */
typedef struct class_job {
    const mdr *s;
    size_t first, last;
} class_job;

static void *write_classes(void *arg)
{
    const class_job *job = arg;
    const mdr *s = job->s;
    for (size_t c = job->first; c < job->last; c++) {
        const size_t begin = s->class_begin[c], end = begin + s->out->count[c];
        for (size_t i = begin; i < end; i++) s->class_of[row_at(s, i)[s->idw]] = (uint32_t)c;
    }
    return NULL;
}

/* class_of of every row of the classes s made, from their first rows
 * (class_begin) and counts: each class's rows are consecutive in the work
 * array. The ids are written at random, so two threads share the classes
 * when there are threads and rows enough. */
void mdr_write_all_classes(const mdr *s, size_t first_class)
{
    const size_t n = s->out->nclasses;
    const size_t half = s->threads > 1 && s->n >= MDR_PARALLEL_MIN_ROWS ? first_class + (n - first_class) / 2 : n;
    class_job jobs[2] = {{s, first_class, half}, {s, half, n}};
    ak_run_parts(jobs, sizeof *jobs, half < n ? 2 : 1, write_classes); /* (half == n: jobs[1] is empty) */
}

/* Rows [first, last) of the work array from the table's columns. */
typedef struct fill_job {
    mdr *s;
    size_t first, last;
    uint32_t *box; /* 2 bw codes: the box of these rows (padding lanes as box_reset leaves them) */
} fill_job;

static void *fill_rows(void *arg)
{
    fill_job *job = arg;
    mdr *s = job->s;
    const table *t = s->t;
    const uint32_t d = s->d, bw = s->bw;
    box_reset(job->box, bw);
    /* the box a column at a time, in registers (box_add per row kept it in memory) */
    const uint32_t *column[d];
    for (uint32_t q = 0; q < d; q++) {
        column[q] = t->qi[q].codes;
        ak_min_max(column[q] + job->first, job->last - job->first, &job->box[q], &job->box[bw + q]);
    }
    for (size_t i = job->first; i < job->last; i++) {
        uint32_t *r = row_at(s, i);
        for (uint32_t q = 0; q < d; q++) r[q] = column[q][i];
        if (s->need_hist) r[d] = t->sensitive_codes[i];
        r[s->idw] = (uint32_t)i;
    }
    return NULL;
}

/* Fills the whole work array and gives the box of all rows, the two halves
 * on two threads when there are threads to spare and rows enough (the
 * copies and the first touch of the array's pages are then shared). */
void mdr_fill_all_rows(mdr *s, uint32_t *box)
{
    const uint32_t bw = s->bw;
    uint32_t other[2 * bw];
    const size_t half = s->threads > 1 && s->n >= MDR_PARALLEL_MIN_ROWS ? s->n / 2 : s->n;
    fill_job jobs[2] = {{s, 0, half, box}, {s, half, s->n, other}};
    ak_run_parts(jobs, sizeof *jobs, half < s->n ? 2 : 1, fill_rows);
    if (half == s->n) return; /* one part: box is the whole array's */
    for (uint32_t q = 0; q < bw; q++) {
        if (other[q] < box[q]) box[q] = other[q];
        if (other[bw + q] > box[bw + q]) box[bw + q] = other[bw + q];
    }
}
