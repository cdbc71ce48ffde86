/* hierbuild_collect.c — reading the distinct values of one or more columns
 * of a CSV file in one pass (hierbuild.h: hb_collect, hb_collect_columns),
 * for the builders of hierbuild.c and hierbuild_num.c.
 *
 * Records that are plain lines (no quote) are scanned 64 bytes at a time:
 * a bit mask of the delimiters, one of the line ends and one of the quotes
 * per 64 bytes (SSE2 on x86-64), the delimiters of a line counted by
 * popcount and looked at one by one only in the part of a line where a
 * column asked for begins or ends; the CSV reader (io/csv.h) takes the
 * header and any record from the first quote on. */
#include "core/hierbuild.h"

#include <stdlib.h>
#include <string.h>

#include "core/hierbuild_internal.h"
#include "io/blockscan.h"
#include "io/csv.h"

int hb_is_missing(const hb_missing *m, const char *text, size_t len)
{
    if (len == 0) return 1;
    if (!m || m->count == 0) return 0;
    for (size_t i = 0; m && i < m->count; i++)
        if (strlen(m->tokens[i]) == len && memcmp(m->tokens[i], text, len) == 0) return 1;
    return 0;
}

void hb_values_free(hb_values *v)
{
    strmap_free(&v->dict);
    free(v->count);
    free(v->line);
    free(v->file);
    free(v->dense);
    free(v->dense_line);
    free(v->bits);
    free(v->memo);
    memset(v, 0, sizeof *v);
}

/* The value of a canonical integer field below HB_DENSE (digits, no leading
 * zero, at most 7 of them), or -1. */
static inline long dense_value(const char *s, size_t len)
{
    if (len == 0 || len > 7 || (s[0] == '0' && len > 1)) return -1;
    long v = 0;
    for (size_t i = 0; i < len; i++) {
        const unsigned d = (unsigned)(unsigned char)s[i] - '0';
        if (d > 9) return -1;
        v = v * 10 + (long)d;
    }
    return v < (long)HB_DENSE ? v : -1;
}

/* Adds value text[0..len) first seen on `line`, n times, to v->dict; its id into *out_id (when not NULL). */
static int add_value(hb_values *v, const char *text, size_t len, long line, uint64_t n, uint32_t *out_id,
                     ak_error *err)
{
    uint32_t id;
    int inserted;
    if (strmap_intern(&v->dict, text, len, &id, &inserted) != 0) return ak_err_nomem(err);
    if (inserted) {
        const size_t old_cap = v->cap;
        if (ak_reserve((void **)&v->count, &v->cap, (size_t)id + 1, sizeof *v->count) != 0) return ak_err_nomem(err);
        if (v->cap != old_cap || !v->line) {
            long *lines = realloc(v->line, v->cap * sizeof *lines);
            if (!lines) return ak_err_nomem(err);
            v->line = lines;
        }
        v->count[id] = 0;
        v->line[id] = line;
    } else if (line < v->line[id]) {
        v->line[id] = line;
    }
    v->count[id] += n;
    if (out_id) *out_id = id;
    return ANONKIT_OK;
}

/* Moves the integers counted by value into v->dict, ascending (after the
 * values read as text, so ids keep that order). */
int hb__fold_dense(hb_values *v, ak_error *err)
{
    if (!v->dense) return ANONKIT_OK;
    if (v->dict.count == 0) { /* the map sized for them at once, rather than grown step by step */
        size_t distinct = 0;
        for (uint32_t x = v->dense_lo; x <= v->dense_hi; x++) distinct += v->dense[x] != 0;
        strmap_free(&v->dict);
        if (strmap_init(&v->dict, distinct) != 0) return ak_err_nomem(err);
    }
    for (uint32_t x = v->dense_lo; x <= v->dense_hi; x++) {
        if (!v->dense[x]) continue;
        char buf[16];
        const int len = snprintf(buf, sizeof buf, "%u", x);
        AK_CHECK(add_value(v, buf, (size_t)len, (long)v->dense_line[x], v->dense[x], NULL, err));
    }
    free(v->dense);
    free(v->dense_line);
    v->dense = v->dense_line = NULL;
    return ANONKIT_OK;
}


/* dense_value for a field followed by at least 8 - len readable bytes (the
 * fast scan's padded buffer): the digits checked and converted eight bytes
 * at once (SWAR: each byte XOR '0' must be below 10; then pairs, fours and
 * eights of digits combined by three multiplications, as in Lemire's
 * "parse eight digits"). */
static inline long dense_value_padded(const char *s, size_t len)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (len - 1 >= 7 || (unsigned)(unsigned char)s[0] - '0' > 9 || (s[0] == '0' && len > 1))
        return -1; /* (len 0 wraps around; text mostly ends here, at its first byte) */
    uint64_t x;
    memcpy(&x, s, sizeof x);
    x = (x ^ 0x3030303030303030ULL) & ((((uint64_t)1) << (8 * len)) - 1); /* digit values, the rest 0 */
    if (((x + 0x7676767676767676ULL) | x) & 0x8080808080808080ULL) return -1; /* a byte that is no digit */
    x <<= 8 * (8 - len); /* right-aligned: the bytes before the first digit are leading zeros */
    x = x * 10 + (x >> 8);
    x = (((x & 0x000000FF000000FFULL) * (100 + (1000000ULL << 32))) +
         (((x >> 16) & 0x000000FF000000FFULL) * (1 + (10000ULL << 32)))) >> 32;
    const long v = (long)(uint32_t)x;
    return v < (long)HB_DENSE ? v : -1;
#else
    return dense_value(s, len);
#endif
}

/* A cache in front of v->dict for text values of up to MEMO_MAX (24) bytes
 * (the categories of most columns, "Married-civ-spouse" among them): a slot
 * per hash of the value's bytes, holding those bytes (three words,
 * zero-padded, and the length: the value itself) and its id, so that a value
 * seen before is counted without hashing it in full and probing the map. */
#define MEMO_SLOTS 256
#define MEMO_MAX 24
typedef struct hb_memo {
    uint64_t a[MEMO_SLOTS], b[MEMO_SLOTS], c[MEMO_SLOTS];
    uint32_t len[MEMO_SLOTS], id[MEMO_SLOTS]; /* len 0: an empty slot */
} hb_memo;

/* The bytes of text[0..len), len <= MEMO_MAX, as three zero-padded words
 * (with the length, the value itself); padded: 8 bytes are readable from
 * text on. */
static inline void memo_key(const char *text, size_t len, int padded, uint64_t *a, uint64_t *b, uint64_t *c)
{
    *a = *b = *c = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (padded && len <= 8) { /* one load, the bytes after the value masked off */
        memcpy(a, text, 8);
        *a &= len == 8 ? ~(uint64_t)0 : ((uint64_t)1 << (8 * len)) - 1;
        return;
    }
#else
    (void)padded;
#endif
    if (len > 16) { /* the first 16 bytes and the last 8 (overlapping them) */
        memcpy(a, text, 8);
        memcpy(b, text + 8, 8);
        memcpy(c, text + len - 8, 8);
    } else if (len > 8) {
        memcpy(a, text, 8);
        memcpy(b, text + len - 8, 8); /* (overlapping the first word: with the length, still the value) */
    } else {
        memcpy(a, text, len);
    }
}

/* The memo slot of a value's key. */
static inline uint32_t memo_slot(uint64_t a, uint64_t b, uint64_t c, size_t len)
{
    return (uint32_t)(((a ^ len ^ ((b ^ (c >> 5) ^ (c << 29)) * 0x9E3779B97F4A7C15ULL)) * 0xff51afd7ed558ccdULL) >> 56);
}

/* Counts one present value text[0..len) of `line` that is not marked in a
 * bitmap and not found in the memo (take's rarer cases, out of line); the
 * memo learns it. */
static int take_counted(hb_values *v, const char *text, size_t len, long x, long line, int padded, ak_error *err)
{
    if (x < 0 && len <= MEMO_MAX && v->memo) {
        hb_memo *m = v->memo;
        uint64_t a, b, c;
        memo_key(text, len, padded, &a, &b, &c);
        const uint32_t slot = memo_slot(a, b, c, len);
        AK_CHECK(add_value(v, text, len, line, 1, &m->id[slot], err));
        m->a[slot] = a, m->b[slot] = b, m->c[slot] = c, m->len[slot] = (uint32_t)len;
        return ANONKIT_OK;
    }
    if (x >= 0 && !v->dense) {
        v->dense = calloc(HB_DENSE, sizeof *v->dense);
        v->dense_line = calloc(HB_DENSE, sizeof *v->dense_line);
        if (!v->dense || !v->dense_line) return ak_err_nomem(err);
    }
    if (x >= 0) {
        if (!v->dense[x]++) {
            v->dense_line[x] = (uint32_t)line;
            if ((uint32_t)x < v->dense_lo) v->dense_lo = (uint32_t)x;
            if ((uint32_t)x > v->dense_hi) v->dense_hi = (uint32_t)x;
        }
        return ANONKIT_OK;
    }
    return add_value(v, text, len, line, 1, NULL, err);
}

/* Counts (or marks) one present or missing value text[0..len) of `line`;
 * padded: text is followed by readable bytes (dense_value_padded). */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline int take(hb_values *v, const char *text, size_t len, long line, const hb_missing *missing, int padded,
                       ak_error *err)
{
    v->rows++;
    if (len == 0 || (missing && missing->count && hb_is_missing(missing, text, len))) {
        if (!v->nmissing++) v->missing_line = line;
        return ANONKIT_OK;
    }
    const long x = padded ? dense_value_padded(text, len) : dense_value(text, len);
    if (x >= 0 && v->bits) {
        v->bits[x >> 6] |= (uint64_t)1 << (x & 63);
        if ((uint32_t)x < v->dense_lo) v->dense_lo = (uint32_t)x;
        if ((uint32_t)x > v->dense_hi) v->dense_hi = (uint32_t)x;
        return ANONKIT_OK;
    }
    if (x < 0 && len <= MEMO_MAX && v->memo) { /* a short text value seen before: counted without the map (lines
                                                  only grow while a file is read: a value's first line stays) */
        const hb_memo *m = v->memo;
        uint64_t a, b, c;
        memo_key(text, len, padded, &a, &b, &c);
        const uint32_t slot = memo_slot(a, b, c, len);
        if (m->len[slot] == len && m->a[slot] == a && m->b[slot] == b && m->c[slot] == c) {
            v->count[m->id[slot]]++;
            return ANONKIT_OK;
        }
    }
    return take_counted(v, text, len, x, line, padded, err);
}

/* Block of the fast scan, and room after it for the 64-byte masks and the
 * 8-byte loads of dense_value_padded. */
#define SCAN_BLOCK ((size_t)1 << 18)
#define SCAN_PAD 64

/* The columns asked for, as the fast scan finds them in a line: column c
 * begins after delimiter c (the c-th of the line, counted from 1; column 0
 * at the line's start) and ends at delimiter c + 1 (the last column at the
 * line's end). next[k] is the least delimiter number above k that begins or
 * ends a column asked for (UINT32_MAX: none); at[k] that delimiter's byte
 * in the line being read. */
typedef struct scan_plan {
    hb_values *vs;
    const uint32_t *cols;
    size_t n;
    uint32_t ncolumns;
    uint32_t *next;
    size_t *at;
} scan_plan;

/* The record in line buf[ls..ls + len) of `line` (ended: an LF followed it),
 * whose delimiters were counted into seen and the ones asked for placed in
 * p->at: an empty line is skipped, a field count other than the header's
 * refused, the columns' fields taken. */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline int scan_record(const scan_plan *p, const unsigned char *buf, size_t ls, size_t len, int ended,
                              uint32_t seen, long line, const hb_missing *missing, ak_error *err)
{
    if (ended && (len == 0 || (len == 1 && buf[ls] == '\r'))) return ANONKIT_OK; /* an empty line */
    if (seen + 1 != p->ncolumns)
        return ak_err_set(err, ANONKIT_E_INPUT, p->vs[0].file, line, 0, "expected %u fields as in the header, found %u",
                          p->ncolumns, seen + 1);
    const size_t flen = ended && buf[ls + len - 1] == '\r' ? len - 1 : len; /* the line without the CR of a CRLF */
    p->at[0] = ls - 1; /* (the line's start and end as delimiters 0 and ncolumns: no case for the first and last
                          column; ls - 1 wraps around for ls 0, and + 1 back) */
    p->at[p->ncolumns] = ls + flen;
    for (size_t j = 0; j < p->n; j++) {
        const uint32_t c = p->cols[j];
        const size_t from = p->at[c] + 1, to = p->at[c + 1];
        AK_CHECK(take(&p->vs[j], (const char *)buf + from, to - from, line, &missing[j], 1, err));
    }
    return ANONKIT_OK;
}

/* The fast path of collect for a file whose records are lines without
 * quotes (each line a record, fields between delimiters, a CR before the LF
 * not part of the last field): from byte `offset`, the record of `line`,
 * every line's field count is checked and only the fields of the columns
 * asked for are taken, without splitting the others. At the first line that
 * holds a quote it stops: *stop gets that line's byte and *stop_line its
 * number, for the CSV reader to go on from there (UINT64_MAX: the end was
 * reached). The same records, values, lines and errors as the CSV reader. */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline int scan_lines_with(const scan_plan *p, const char *path, char delimiter, uint64_t offset, long line,
                                  const hb_missing *missing, uint64_t *stop, long *stop_line, int hw, ak_error *err)
{
    *stop = UINT64_MAX;
    FILE *f = fopen(path, "rb");
    unsigned char *buf = malloc(2 * SCAN_BLOCK + SCAN_PAD);
    int rc = ANONKIT_OK;
    if (!f || !buf || fseeko(f, (off_t)offset, SEEK_SET) != 0) {
        rc = !buf ? ak_err_nomem(err) : ak_err_set(err, ANONKIT_E_IO, p->vs[0].file, 0, 0, "cannot read the file");
        goto done;
    }
    const uint32_t first = p->next[0];
    size_t have = 0;        /* bytes in buf (a partial line carried over first) */
    uint64_t base = offset; /* file byte of buf[0] */
    for (int eof = 0; !eof;) {
        const size_t got = fread(buf + have, 1, SCAN_BLOCK, f);
        if (got < SCAN_BLOCK) {
            if (ferror(f)) {
                rc = ak_err_set(err, ANONKIT_E_IO, p->vs[0].file, 0, 0, "cannot read the file");
                goto done;
            }
            eof = 1;
        }
        have += got;
        memset(buf + have, 0, SCAN_PAD);
        /* the lines of buf[0..have): ls the current line's first byte, seen
         * its delimiters so far, want the next one asked for */
        size_t ls = 0;
        uint32_t seen = 0, want = first;
        for (size_t c = 0; c < have; c += 64) {
            uint64_t dm, nm, qm;
            chunk_masks(buf + c, delimiter, &dm, &nm, &qm);
            if (have - c < 64) {
                const uint64_t keep = ((uint64_t)1 << (have - c)) - 1;
                dm &= keep, nm &= keep, qm &= keep;
            }
            if (qm) { /* only the lines before the quote's */
                const uint64_t before = ((uint64_t)1 << __builtin_ctzll(qm)) - 1;
                dm &= before, nm &= before;
            }
            for (;;) {
                const uint64_t below = nm ? (nm & (0 - nm)) - 1 : ~(uint64_t)0; /* the bytes before the next LF */
                const uint64_t seg = dm & below;
                const uint32_t count = popcount64(seg, hw);
                uint32_t left = count;
                for (uint64_t m = seg; seen + left >= want;) { /* a delimiter asked for is here */
                    for (uint32_t k = want - seen; k > 1; k--) m &= m - 1; /* (the ones before it) */
                    left -= want - seen;
                    seen = want;
                    p->at[seen] = c + (size_t)__builtin_ctzll(m);
                    m &= m - 1;
                    want = p->next[seen];
                }
                seen += left;
                if (!nm) break;
                dm &= ~below;
                const size_t e = c + (size_t)__builtin_ctzll(nm);
                nm &= nm - 1;
                if ((rc = scan_record(p, buf, ls, e - ls, 1, seen, line, missing, err)) < 0) goto done;
                line++;
                ls = e + 1;
                seen = 0;
                want = first;
            }
            if (qm) { /* the CSV reader goes on from the quote's line */
                *stop = base + ls;
                *stop_line = line;
                goto done;
            }
        }
        if (eof) { /* a last line without a line end */
            if (ls < have) rc = scan_record(p, buf, ls, have - ls, 0, seen, line, missing, err);
            break;
        }
        /* the partial line to the front, scanned again with the next block */
        memmove(buf, buf + ls, have - ls);
        base += ls;
        have -= ls;
        if (have > SCAN_BLOCK) { /* a line longer than a block: the CSV reader takes it */
            *stop = base;
            *stop_line = line;
            goto done;
        }
    }
done:
    if (f) fclose(f);
    free(buf);
    return rc;
}

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__)) && !defined(__POPCNT__)
/* scan_lines_with compiled for a processor with POPCNT (chosen at run time). */
__attribute__((target("popcnt"))) static int scan_lines_popcnt(const scan_plan *p, const char *path, char delimiter,
                                                               uint64_t offset, long line, const hb_missing *missing,
                                                               uint64_t *stop, long *stop_line, ak_error *err)
{
    return scan_lines_with(p, path, delimiter, offset, line, missing, stop, stop_line, 1, err);
}
#define HB_POPCNT_AT_RUN_TIME 1
#endif

/* scan_lines_with, with the POPCNT instruction where the processor has it. */
static int scan_lines(const scan_plan *p, const char *path, char delimiter, uint64_t offset, long line,
                      const hb_missing *missing, uint64_t *stop, long *stop_line, ak_error *err)
{
#if defined(HB_POPCNT_AT_RUN_TIME)
    if (__builtin_cpu_supports("popcnt"))
        return scan_lines_popcnt(p, path, delimiter, offset, line, missing, stop, stop_line, err);
    return scan_lines_with(p, path, delimiter, offset, line, missing, stop, stop_line, 0, err);
#elif defined(__POPCNT__)
    return scan_lines_with(p, path, delimiter, offset, line, missing, stop, stop_line, 1, err);
#else
    return scan_lines_with(p, path, delimiter, offset, line, missing, stop, stop_line, 0, err);
#endif
}

/* The plan for columns cols[0..n) of ncolumns (arrays allocated; NULL when out of memory). */
static int plan_init(scan_plan *p, hb_values *vs, const uint32_t *cols, size_t n, uint32_t ncolumns)
{
    p->vs = vs, p->cols = cols, p->n = n, p->ncolumns = ncolumns;
    p->next = malloc(((size_t)ncolumns + 1) * sizeof *p->next);
    p->at = malloc(((size_t)ncolumns + 1) * sizeof *p->at);
    if (!p->next || !p->at) return -1;
    uint32_t after = UINT32_MAX; /* the least delimiter asked for above k, from the top down */
    for (uint32_t k = ncolumns + 1; k-- > 0;) {
        p->next[k] = after;
        int asked = 0;
        for (size_t j = 0; j < n; j++) asked |= k >= 1 && k < ncolumns && (cols[j] == k || cols[j] + 1 == k);
        if (asked) after = k;
    }
    return 0;
}

static void plan_free(scan_plan *p)
{
    free(p->next);
    free(p->at);
}

int hb_collect_columns(hb_values *vs, size_t n, const char *const *columns, const int *presence,
                       const hb_missing *missing, const char *path, const char *shown, char delimiter, ak_error *err)
{
    memset(vs, 0, n * sizeof *vs);
    int rc = ANONKIT_OK;
    for (size_t j = 0; j < n && rc == 0; j++) {
        hb_values *v = &vs[j];
        v->dense_lo = UINT32_MAX;
        v->file = strdup(shown ? shown : path);
        if ((presence && presence[j] && !(v->bits = calloc(HB_DENSE / 64, sizeof *v->bits))) || !v->file ||
            !(v->memo = calloc(1, sizeof *v->memo)) || strmap_init(&v->dict, 1024) != 0)
            rc = ak_err_nomem(err);
    }
    uint32_t *cols = calloc(n ? n : 1, sizeof *cols);
    scan_plan plan = {0};
    const int stream = !strcmp(path, "-");
    csv_reader *reader = NULL;
    if (rc == 0 && !cols) rc = ak_err_nomem(err);
    if (rc == 0)
        rc = !stream ? csv_reader_open(&reader, path, delimiter, err)
                     : csv_reader_open_stream(&reader, stdin, vs[0].file, delimiter, err);
    csv_record rec;
    if (rc == 0 && (rc = csv_read(reader, &rec, err)) == 0)
        rc = ak_err_set(err, ANONKIT_E_INPUT, vs[0].file, 1, 0, "the file is empty: a header row is needed");
    if (rc > 0) rc = ANONKIT_OK;
    for (size_t j = 0; j < n && rc == 0; j++) {
        const int col = csv_column_index(&rec, columns[j]);
        if (col < 0) rc = ak_err_set(err, ANONKIT_E_USAGE, vs[0].file, 1, 0, "no column '%s' in the header", columns[j]);
        else cols[j] = (uint32_t)col;
    }
    const uint32_t ncolumns = rc == 0 ? rec.count : 0;
    if (rc == 0 && plan_init(&plan, vs, cols, n, ncolumns) != 0) rc = ak_err_nomem(err);
    if (rc < 0) goto fail;
    int fast = !stream && ncolumns > 1 && !csv_reader_saw_quote(reader); /* (one column: empty lines are values) */
    while ((rc = csv_read(reader, &rec, err)) > 0) {
        if (fast && !csv_reader_saw_quote(reader) && rec.count == ncolumns) {
            /* the first data record: from its byte on, the fast scan, then the reader again from where it stopped */
            uint64_t stop;
            long stop_line;
            csv_reader_free(reader);
            reader = NULL;
            if ((rc = scan_lines(&plan, path, delimiter, rec.offset, rec.line, missing, &stop, &stop_line, err)) < 0)
                goto fail;
            if (stop == UINT64_MAX) break;
            FILE *probe = fopen(path, "rb");
            uint64_t total = 0;
            if (probe && fseeko(probe, 0, SEEK_END) == 0) total = (uint64_t)ftello(probe);
            if (probe) fclose(probe);
            if ((rc = csv_reader_open_range(&reader, path, delimiter, stop, total - stop, stop_line, err)) < 0)
                goto fail;
            fast = 0;
            continue;
        }
        fast = 0;
        if (rec.count != ncolumns) {
            if (rec.count == 1 && rec.fields[0].len == 0) continue; /* an empty line */
            rc = ak_err_set(err, ANONKIT_E_INPUT, vs[0].file, rec.line, 0,
                            "expected %u fields as in the header, found %u", ncolumns, rec.count);
            goto fail;
        }
        for (size_t j = 0; j < n; j++) {
            const csv_field *f = &rec.fields[cols[j]];
            if ((rc = take(&vs[j], f->data, f->len, rec.line, &missing[j], 0, err)) < 0) goto fail;
        }
    }
    if (rc < 0) goto fail;
    csv_reader_free(reader);
    plan_free(&plan);
    free(cols);
    return ANONKIT_OK;
fail:
    csv_reader_free(reader);
    plan_free(&plan);
    free(cols);
    for (size_t j = 0; j < n; j++) hb_values_free(&vs[j]);
    return rc;
}

int hb_collect(hb_values *v, const char *path, const char *shown, char delimiter, const char *column,
               const hb_missing *missing, ak_error *err)
{
    const int presence = 0;
    const hb_missing none = {NULL, 0};
    return hb_collect_columns(v, 1, &column, &presence, missing ? missing : &none, path, shown, delimiter, err);
}

int hb_collect_presence(hb_values *v, const char *path, const char *shown, char delimiter, const char *column,
                        const hb_missing *missing, ak_error *err)
{
    const int presence = 1;
    const hb_missing none = {NULL, 0};
    return hb_collect_columns(v, 1, &column, &presence, missing ? missing : &none, path, shown, delimiter, err);
}
