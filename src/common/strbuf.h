/* strbuf.h — a growable byte buffer, used as a string arena (offsets stay
 * valid across growth; pointers only once it stops growing) and for
 * composing output records; and the growth helper of growable arrays
 * (ak_reserve, AK_RESERVE). */
#ifndef AK_STRBUF_H
#define AK_STRBUF_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct strbuf {
    char *data;
    size_t len, cap;
} strbuf;

/* Makes room for `extra` more bytes. Returns 0 or -1 (no memory). */
static inline int strbuf_reserve(strbuf *b, size_t extra)
{
    if (b->len + extra <= b->cap) return 0;
    if (extra > SIZE_MAX / 2 - b->len) return -1; /* the doubling below could not reach it */
    size_t cap = b->cap ? b->cap * 2 : 1 << 12;
    while (cap < b->len + extra) cap *= 2;
    char *p = realloc(b->data, cap);
    if (!p) return -1;
    b->data = p;
    b->cap = cap;
    return 0;
}

/* Appends bytes; returns 0 or -1. */
static inline int strbuf_append(strbuf *b, const char *s, size_t len)
{
    if (len == 0) return 0; /* s may be NULL then (an empty strbuf's data) */
    if (strbuf_reserve(b, len) != 0) return -1;
    memcpy(b->data + b->len, s, len);
    b->len += len;
    return 0;
}

/* Appends s and a terminating NUL; *offset receives where s starts. */
static inline int strbuf_append_str(strbuf *b, const char *s, size_t len, size_t *offset)
{
    if (strbuf_reserve(b, len + 1) != 0) return -1;
    *offset = b->len;
    memcpy(b->data + b->len, s, len);
    b->data[b->len + len] = '\0';
    b->len += len + 1;
    return 0;
}

/* Growable arrays: makes room for n elements of size sz in the array *p whose
 * capacity (in elements) is *cap, doubling it from 16. Returns 0, or -1 when
 * out of memory (*p and *cap unchanged). AK_RESERVE(arr, cap, n) is the
 * typed form. */
static inline int ak_reserve(void **p, size_t *cap, size_t n, size_t sz)
{
    if (n <= *cap) return 0;
    if (sz == 0 || n > SIZE_MAX / 2 / sz) return -1; /* the doubling below could overflow */
    size_t c = *cap ? *cap : 16;
    while (c < n) c *= 2;
    void *q = realloc(*p, c * sz);
    if (!q) return -1;
    *p = q;
    *cap = c;
    return 0;
}
#define AK_RESERVE(arr, cap, n) ak_reserve((void **)&(arr), &(cap), (n), sizeof *(arr))

static inline void strbuf_free(strbuf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

#endif
