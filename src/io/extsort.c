/* extsort.c — external merge sort of fixed-width records within a memory
 * budget (docs/ARCHITECTURE.md §10; used by the 1-D mappings of [Ghinita07] §5, which sort the
 * table by its 1-D key). Buffers in memory are sorted by most-significant-
 * digit radix sort on the records' bytes; runs live in unnamed spill files
 * (io/spill.h) in the temporary folder itself and are merged with a heap; see
 * extsort.h for the contract. */
#include "io/extsort.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/hugemem.h"
#include "common/parallel.h"
#include "io/spill.h"

/* One run on disk: its file, record count and read state during a merge. */
typedef struct run {
    int fd;
    uint64_t nrecords;
    uint64_t consumed;  /* records handed out */
    uint64_t *block;    /* read buffer */
    size_t in_block, at;/* records in the buffer, next record in it */
    off_t offset;       /* file offset of the next read */
} run;

struct extsort {
    size_t words, rec_bytes;
    size_t memory;
    size_t block_size;  /* bytes per block (a multiple of rec_bytes) */
    uint64_t *buf;      /* in-memory records, then (after spilling) the current run */
    uint64_t *scratch;  /* merge sort scratch, same size as buf */
    size_t n, cap;      /* records in buf, capacity */
    int unlimited;
    char dir[4096];     /* the temporary folder the run files are created in */
    int dir_checked;    /* spill_dir_create has accepted it (at the first spill) */
    run *runs;
    size_t nruns, runs_cap;
    /* final merge */
    int finished, in_memory;
    size_t mem_at;
    size_t *heap;       /* run indices, min-heap on their current record */
    size_t heap_n;
    extsort_stats st;
};

static int cmp_rec(const uint64_t *a, const uint64_t *b, size_t words)
{
    for (size_t w = 0; w < words; w++)
        if (a[w] != b[w]) return a[w] < b[w] ? -1 : 1;
    return 0;
}

/* Insertion sort of n records (for small ranges). */
static void insertion_sort(uint64_t *rec, size_t n, size_t words)
{
    uint64_t hold[words];
    for (size_t i = 1; i < n; i++) {
        if (cmp_rec(rec + (i - 1) * words, rec + i * words, words) <= 0) continue;
        memcpy(hold, rec + i * words, words * 8);
        size_t j = i;
        while (j > 0 && cmp_rec(rec + (j - 1) * words, hold, words) > 0) {
            memcpy(rec + j * words, rec + (j - 1) * words, words * 8);
            j--;
        }
        memcpy(rec + j * words, hold, words * 8);
    }
}

/* The byte of a record at byte position `at` (0 = the most significant byte
 * of word 0): records compare as big-endian numbers of 8 * words bytes. */
static unsigned rec_byte(const uint64_t *r, size_t at) { return (unsigned)(r[at / 8] >> (56 - 8 * (at % 8))) & 0xffu; }

/* Most-significant-digit radix sort of n records in rec on their bytes from
 * `at` on (the bytes before are equal), using tmp (room for n records):
 * a histogram of the byte, a scatter into tmp by that byte and a copy back,
 * then each bucket on the next byte; a byte that all records share is
 * skipped without moving them; small ranges go to insertion sort. */
static void radix_sort(uint64_t *rec, uint64_t *tmp, size_t n, size_t words, size_t at)
{
    const size_t bytes = words * 8;
    while (n > 32 && at < bytes) {
        size_t count[256] = {0};
        for (size_t i = 0; i < n; i++) count[rec_byte(rec + i * words, at)]++;
        if (count[rec_byte(rec, at)] == n) { /* one value: next byte */
            at++;
            continue;
        }
        size_t start[256], next[256], sum = 0;
        for (unsigned b = 0; b < 256; b++) {
            start[b] = next[b] = sum;
            sum += count[b];
        }
        for (size_t i = 0; i < n; i++) {
            const uint64_t *r = rec + i * words;
            memcpy(tmp + next[rec_byte(r, at)]++ * words, r, words * 8);
        }
        memcpy(rec, tmp, n * words * 8);
        for (unsigned b = 0; b < 256; b++)
            if (count[b] > 1) radix_sort(rec + start[b] * words, tmp, count[b], words, at + 1);
        return;
    }
    if (at < bytes) insertion_sort(rec, n, words);
}

/* The top-level split of sort_records: records lo .. hi-1 are counted by
 * their digit and scattered to tmp by one part, buckets blo .. bhi-1 sorted
 * by one part. */
#define SORT_DIGITS ((size_t)1 << 16)

typedef struct sort_part {
    uint64_t *rec, *tmp;
    size_t words;
    unsigned shift, at;      /* digit = (word 0 << shift) >> 48; bytes before `at` equal within a bucket */
    size_t lo, hi;           /* records of this part (count, scatter) */
    size_t *count;           /* SORT_DIGITS: this part's records per digit, then where its next one goes */
    size_t blo, bhi;         /* buckets of this part (sort) */
    const size_t *start;     /* SORT_DIGITS + 1: each bucket's first record */
} sort_part;

static inline size_t rec_digit(const uint64_t *r, unsigned shift) { return (size_t)((r[0] << shift) >> 48); }

static void *sort_part_count(void *arg)
{
    sort_part *p = arg;
    memset(p->count, 0, SORT_DIGITS * sizeof *p->count);
    for (size_t i = p->lo; i < p->hi; i++) p->count[rec_digit(p->rec + i * p->words, p->shift)]++;
    return NULL;
}

static void *sort_part_scatter(void *arg)
{
    sort_part *p = arg;
    const size_t words = p->words;
    for (size_t i = p->lo; i < p->hi; i++) {
        const uint64_t *r = p->rec + i * words;
        memcpy(p->tmp + p->count[rec_digit(r, p->shift)]++ * words, r, words * 8);
    }
    return NULL;
}

/* Each bucket back from tmp to rec (while it is in cache), then sorted there
 * on its bytes from `at` on with its own stretch of tmp as scratch. */
static void *sort_part_buckets(void *arg)
{
    sort_part *p = arg;
    const size_t words = p->words;
    for (size_t b = p->blo; b < p->bhi; b++) {
        const size_t from = p->start[b], count = p->start[b + 1] - from;
        memcpy(p->rec + from * words, p->tmp + from * words, count * words * 8);
        if (count > 1) radix_sort(p->rec + from * words, p->tmp + from * words, count, words, p->at);
    }
    return NULL;
}

/* Sorts n records in rec (tmp: room for n records) on `threads` threads.
 * Many records are first split on 16 bits of word 0 at once, from its first
 * bit that is not the same in every record (65536 buckets: one scatter
 * instead of two, and keys whose high bits are all zero, as iDistance's
 * centre ranks, still split): each part counts and scatters its share of
 * the records, then sorts its share of the buckets by radix_sort. The order
 * is the same for any number of threads. */
static int sort_records(uint64_t *rec, uint64_t *tmp, size_t n, size_t words, unsigned threads, ak_error *err)
{
    if (n < SORT_DIGITS) {
        radix_sort(rec, tmp, n, words, 0);
        return ANONKIT_OK;
    }
    uint64_t differ = 0;
    for (size_t i = 1; i < n; i++) differ |= rec[i * words] ^ rec[0];
    if (!differ) { /* word 0 the same everywhere: the byte-wise sort skips it */
        radix_sort(rec, tmp, n, words, 8);
        return ANONKIT_OK;
    }
    const unsigned shift = (unsigned)__builtin_clzll(differ);
    threads = ak_parts(n, threads, SORT_DIGITS);
    size_t *counts = malloc(threads * SORT_DIGITS * sizeof *counts), *start = malloc((SORT_DIGITS + 1) * sizeof *start);
    if (!counts || !start) {
        free(counts), free(start);
        return ak_err_nomem(err);
    }
    sort_part part[AK_MAX_PARTS];
    for (unsigned j = 0; j < threads; j++)
        part[j] = (sort_part){rec, tmp, words, shift, shift + 16 >= 64 ? 8 : (shift + 16) / 8, n * j / threads,
                              n * (j + 1) / threads, counts + j * SORT_DIGITS, 0, 0, start};
    ak_run_parts(part, sizeof *part, threads, sort_part_count);
    size_t sum = 0;
    for (size_t b = 0; b < SORT_DIGITS; b++) {
        start[b] = sum;
        for (unsigned j = 0; j < threads; j++) {
            const size_t c = part[j].count[b];
            part[j].count[b] = sum;
            sum += c;
        }
    }
    start[SORT_DIGITS] = sum;
    ak_run_parts(part, sizeof *part, threads, sort_part_scatter);
    /* buckets cut where the records are shared evenly */
    for (unsigned j = 0, b = 0; j < threads; j++) {
        part[j].blo = b;
        const size_t until = n * (j + 1) / threads;
        while (b < SORT_DIGITS && (j + 1 == threads || start[b + 1] <= until)) b++;
        part[j].bhi = b;
    }
    ak_run_parts(part, sizeof *part, threads, sort_part_buckets);
    free(counts), free(start);
    return ANONKIT_OK;
}

int extsort_sort_array(uint64_t *records, size_t n, size_t words, unsigned threads, ak_error *err)
{
    if (n < 2) return ANONKIT_OK;
    uint64_t *tmp = ak_huge_malloc(n * words * 8);
    if (!tmp) return ak_err_nomem(err);
    int rc = sort_records(records, tmp, n, words, threads, err);
    free(tmp);
    return rc;
}

int extsort_open(extsort **out, size_t words, size_t memory, const char *tmpdir, ak_error *err)
{
    *out = NULL;
    extsort *s = calloc(1, sizeof *s);
    if (!s) return ak_err_nomem(err);
    s->words = words;
    s->rec_bytes = words * 8;
    s->memory = memory;
    s->unlimited = memory == 0;
    /* 256 KiB blocks ([LeFevre07] used 256 KiB), smaller under a small budget. */
    size_t block = memory && memory < (size_t)16 << 20 ? memory / 64 : (size_t)256 << 10;
    if (block < 4096) block = 4096;
    block -= block % s->rec_bytes;
    if (block < s->rec_bytes) block = s->rec_bytes;
    s->block_size = block;
    s->st.block_size = block;
    if (!s->unlimited) {
        /* buf + scratch take the budget, less one output block */
        size_t avail = memory > block ? memory - block : memory;
        s->cap = avail / (2 * s->rec_bytes);
        if (s->cap < 64) s->cap = 64;
        s->buf = malloc(s->cap * s->rec_bytes);
        s->scratch = malloc(s->cap * s->rec_bytes);
        if (!s->buf || !s->scratch) {
            extsort_free(s);
            return ak_err_nomem(err);
        }
    }
    const char *base = tmpdir && *tmpdir ? tmpdir : getenv("TMPDIR");
    if (!base || !*base) base = "/tmp";
    /* the limit of spill_dir_create, so that a path too long fails at once */
    if (strlen(base) > sizeof s->dir - 64) {
        extsort_free(s);
        return ak_err_set(err, ANONKIT_E_IO, base, 0, 0, "temporary folder path too long");
    }
    memcpy(s->dir, base, strlen(base) + 1);
    /* nothing is created before the first spill */
    *out = s;
    return ANONKIT_OK;
}

/* Creates a run file that has no name in the temporary folder (io/spill.h:
 * O_TMPFILE, else unlinked at once), so that no way of ending the process, not
 * even SIGKILL, can leave it or its data behind; there is no private folder,
 * so nothing is left for a signal handler to remove. The folder is checked at
 * the first spill, so that a sort that stays in memory never touches it. */
static int new_run_file(extsort *s, int *fd, ak_error *err)
{
    spill_dir where;
    if (!s->dir_checked) {
        AK_CHECK(spill_dir_create(&where, s->dir, err));
        s->dir_checked = 1;
    } else {
        memset(&where, 0, sizeof where);
        snprintf(where.folder, sizeof where.folder, "%s", s->dir);
    }
    spill_file f;
    AK_CHECK(spill_file_open(&f, &where, err));
    *fd = f.fd;
    return ANONKIT_OK;
}

static int write_all(extsort *s, int fd, const void *data, size_t len, ak_error *err)
{
    const char *p = data;
    while (len) {
        size_t chunk = len < s->block_size ? len : s->block_size;
        ssize_t w = write(fd, p, chunk);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0)
            return ak_err_set(err, ANONKIT_E_IO, s->dir, 0, 0, "cannot write a spill file: %s",
                              w < 0 ? strerror(errno) : "no space");
        p += w;
        len -= (size_t)w;
        s->st.blocks_written++;
    }
    return ANONKIT_OK;
}

static int push_run(extsort *s, int fd, uint64_t nrecords, ak_error *err)
{
    if (s->nruns == s->runs_cap) {
        size_t cap = s->runs_cap ? s->runs_cap * 2 : 16;
        run *r = realloc(s->runs, cap * sizeof *r);
        if (!r) {
            close(fd);
            return ak_err_nomem(err);
        }
        s->runs = r;
        s->runs_cap = cap;
    }
    run *r = &s->runs[s->nruns++];
    memset(r, 0, sizeof *r);
    r->fd = fd;
    r->nrecords = nrecords;
    s->st.runs++;
    return ANONKIT_OK;
}

/* Sorts the buffer and writes it as one run. */
static int spill_buffer(extsort *s, ak_error *err)
{
    AK_CHECK(sort_records(s->buf, s->scratch, s->n, s->words, 1, err));
    int fd;
    AK_CHECK(new_run_file(s, &fd, err));
    int rc = write_all(s, fd, s->buf, s->n * s->rec_bytes, err);
    if (rc < 0) {
        close(fd);
        return rc;
    }
    AK_CHECK(push_run(s, fd, s->n, err));
    s->n = 0;
    return ANONKIT_OK;
}

int extsort_add(extsort *s, const uint64_t *record, ak_error *err)
{
    if (s->n == s->cap) {
        if (s->unlimited) {
            size_t cap = s->cap ? s->cap * 2 : 4096;
            uint64_t *b = realloc(s->buf, cap * s->rec_bytes);
            if (!b) return ak_err_nomem(err);
            s->buf = b;
            s->cap = cap;
        } else {
            AK_CHECK(spill_buffer(s, err));
        }
    }
    memcpy(s->buf + s->n * s->words, record, s->rec_bytes);
    s->n++;
    s->st.records++;
    return ANONKIT_OK;
}

/* Fills run r's block buffer; returns the records now available (0 at its end). */
static int refill(extsort *s, run *r, ak_error *err)
{
    r->at = 0;
    r->in_block = 0;
    uint64_t left = r->nrecords - r->consumed;
    if (!left) return ANONKIT_OK;
    size_t per_block = s->block_size / s->rec_bytes;
    size_t want = left < per_block ? (size_t)left : per_block;
    size_t bytes = want * s->rec_bytes, got = 0;
    while (got < bytes) {
        ssize_t n = pread(r->fd, (char *)r->block + got, bytes - got, r->offset + (off_t)got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0)
            return ak_err_set(err, ANONKIT_E_IO, s->dir, 0, 0, "cannot read a spill file: %s",
                              n < 0 ? strerror(errno) : "file is shorter than written");
        got += (size_t)n;
    }
    r->offset += (off_t)bytes;
    r->in_block = want;
    s->st.blocks_read++;
    return ANONKIT_OK;
}

static const uint64_t *run_head(const extsort *s, const run *r) { return r->block + r->at * s->words; }

static int heap_less(const extsort *s, const run *runs, size_t a, size_t b)
{
    return cmp_rec(run_head(s, &runs[a]), run_head(s, &runs[b]), s->words) < 0;
}

static void heap_down(extsort *s, run *runs, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        if (l < s->heap_n && heap_less(s, runs, s->heap[l], s->heap[m])) m = l;
        if (l + 1 < s->heap_n && heap_less(s, runs, s->heap[l + 1], s->heap[m])) m = l + 1;
        if (m == i) return;
        size_t t = s->heap[i];
        s->heap[i] = s->heap[m];
        s->heap[m] = t;
        i = m;
    }
}

/* Prepares a merge of runs[first .. first+count): block buffers and the heap. */
static int merge_begin(extsort *s, size_t first, size_t count, ak_error *err)
{
    free(s->heap);
    s->heap = malloc(count * sizeof *s->heap);
    if (!s->heap) return ak_err_nomem(err);
    s->heap_n = 0;
    for (size_t i = first; i < first + count; i++) {
        run *r = &s->runs[i];
        r->offset = 0;
        r->consumed = 0;
        if (!r->block && !(r->block = malloc(s->block_size))) return ak_err_nomem(err);
        AK_CHECK(refill(s, r, err));
        if (r->in_block) s->heap[s->heap_n++] = i;
    }
    for (size_t i = s->heap_n / 2; i-- > 0;) heap_down(s, s->runs, i);
    return ANONKIT_OK;
}

/* The next record of the current merge, or NULL at its end. */
static int merge_next(extsort *s, const uint64_t **rec, ak_error *err)
{
    *rec = NULL;
    if (!s->heap_n) return 0;
    run *r = &s->runs[s->heap[0]];
    /* copy out: the block may be refilled below */
    memcpy(s->scratch, run_head(s, r), s->rec_bytes);
    r->at++;
    r->consumed++;
    if (r->at == r->in_block) AK_CHECK(refill(s, r, err));
    if (!r->in_block) s->heap[0] = s->heap[--s->heap_n];
    if (s->heap_n) heap_down(s, s->runs, 0);
    *rec = s->scratch;
    return 1;
}

static void close_run(run *r)
{
    if (r->fd >= 0) close(r->fd);
    r->fd = -1;
    free(r->block);
    r->block = NULL;
}

int extsort_finish(extsort *s, ak_error *err)
{
    s->finished = 1;
    if (!s->nruns) {
        s->in_memory = 1;
        if (s->n > 1) {
            if (s->unlimited) {
                free(s->scratch);
                s->scratch = malloc(s->n * s->rec_bytes);
                if (!s->scratch) return ak_err_nomem(err);
            }
            AK_CHECK(sort_records(s->buf, s->scratch, s->n, s->words, 1, err));
        }
        return ANONKIT_OK;
    }
    if (s->n) AK_CHECK(spill_buffer(s, err));
    /* The buffers go; the merge holds one block per run plus one output block. */
    free(s->buf);
    s->buf = NULL;
    free(s->scratch);
    s->scratch = malloc(s->block_size > s->rec_bytes ? s->block_size : s->rec_bytes);
    if (!s->scratch) return ak_err_nomem(err);
    size_t fan_in = s->memory / s->block_size;
    fan_in = fan_in > 2 ? fan_in - 1 : 2;
    /* Merge passes until one merge can take all runs. */
    while (s->nruns > fan_in) {
        s->st.merge_passes++;
        size_t first = 0;
        run *old = s->runs;
        size_t nold = s->nruns;
        s->runs = NULL;
        s->nruns = s->runs_cap = 0;
        /* merge groups of fan_in runs from `old` into new runs */
        for (first = 0; first < nold; first += fan_in) {
            size_t count = nold - first < fan_in ? nold - first : fan_in;
            run *keep = s->runs;
            size_t keep_n = s->nruns, keep_cap = s->runs_cap;
            s->runs = old;
            s->nruns = nold;
            int rc = merge_begin(s, first, count, err);
            int fd = -1;
            if (rc >= 0) rc = new_run_file(s, &fd, err);
            uint64_t written = 0;
            uint64_t *outbuf = rc >= 0 ? malloc(s->block_size) : NULL;
            if (rc >= 0 && !outbuf) rc = ak_err_nomem(err);
            size_t fill = 0;
            const uint64_t *rec;
            while (rc >= 0 && (rc = merge_next(s, &rec, err)) == 1) {
                memcpy((char *)outbuf + fill, rec, s->rec_bytes);
                fill += s->rec_bytes;
                written++;
                if (fill + s->rec_bytes > s->block_size) {
                    rc = write_all(s, fd, outbuf, fill, err);
                    fill = 0;
                }
            }
            if (rc >= 0 && fill) rc = write_all(s, fd, outbuf, fill, err);
            free(outbuf);
            for (size_t i = first; i < first + count; i++) close_run(&old[i]);
            s->runs = keep;
            s->nruns = keep_n;
            s->runs_cap = keep_cap;
            if (rc >= 0) rc = push_run(s, fd, written, err);
            else if (fd >= 0) close(fd);
            if (rc < 0) {
                for (size_t i = 0; i < nold; i++) close_run(&old[i]);
                free(old);
                return rc;
            }
        }
        free(old);
    }
    return merge_begin(s, 0, s->nruns, err);
}

int extsort_next(extsort *s, const uint64_t **record, ak_error *err)
{
    *record = NULL;
    if (!s->finished) return ak_err_set(err, ANONKIT_E_INTERNAL, NULL, 0, 0, "extsort_next before extsort_finish");
    if (s->in_memory) {
        if (s->mem_at == s->n) return 0;
        *record = s->buf + s->mem_at++ * s->words;
        return 1;
    }
    return merge_next(s, record, err);
}

void extsort_get_stats(const extsort *s, extsort_stats *out) { *out = s->st; }

void extsort_free(extsort *s)
{
    if (!s) return;
    for (size_t i = 0; i < s->nruns; i++) close_run(&s->runs[i]);
    free(s->runs);
    free(s->buf);
    free(s->scratch);
    free(s->heap);
    free(s);
}
