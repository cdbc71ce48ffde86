/* rothko_spill.c — Rothko's partition files ([LeFevre07] §2): how a partition's
 * file stores its tuples (layouts narrowed to the codes its rows can hold),
 * the pool of spill files for reuse, and reading a partition back. */
#include "algo/mondrian/rothko_internal.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ tuple layouts */

/* Partitions written by repartitioning store each code in as few bytes as
 * the range its rows can hold needs (CONVENTIONS.md: narrow columns first),
 * so that they and every later scan of them take fewer blocks; the root file
 * keeps 4-byte codes, its numeric ones provisional until ranked. */

void rk_layout_free(rk_layout *l)
{
    free(l->base);
    memset(l, 0, sizeof *l);
}

static int layout_alloc(const rk *r, rk_layout *l, ak_error *err)
{
    const size_t ncol = (size_t)r->d + 2;
    rk_layout_free(l);
    if (!(l->base = malloc(ncol * (2 * sizeof *l->base + sizeof *l->bytes)))) return ak_err_nomem(err);
    l->off = l->base + ncol;
    l->bytes = (uint8_t *)(l->off + ncol);
    return ANONKIT_OK;
}

/* Lays the columns out one after the other, then the doubles. */
static void layout_place(const rk *r, rk_layout *l)
{
    l->width = 0;
    for (uint32_t c = 0; c < r->d + 2; c++) {
        l->off[c] = l->width;
        l->width += l->bytes[c];
    }
    l->extra_at = l->width;
    l->width += r->extra;
}


/* The root file's layout: 4-byte codes. */
int rk_layout_wide(const rk *r, rk_layout *l, ak_error *err)
{
    AK_CHECK(layout_alloc(r, l, err));
    for (uint32_t c = 0; c < r->d + 2; c++) l->base[c] = 0, l->bytes[c] = 4;
    layout_place(r, l);
    return ANONKIT_OK;
}

/* Bytes that offsets 0..span need. */
static uint8_t span_bytes(uint32_t span)
{
    return span == 0 ? 0 : span < 1u << 8 ? 1 : span < 1u << 16 ? 2 : span < 1u << 24 ? 3 : 4;
}

/* The narrowest layout for rows whose QI codes lie in [lo[q], hi[q]]. */
int rk_layout_fit(const rk *r, const uint32_t *lo, const uint32_t *hi, rk_layout *l, ak_error *err)
{
    AK_CHECK(layout_alloc(r, l, err));
    for (uint32_t q = 0; q < r->d; q++) {
        l->base[q] = lo[q];
        l->bytes[q] = span_bytes(hi[q] - lo[q]);
    }
    const uint32_t sens = r->t->sensitive_dict.count, cls = r->t->class_dict.count;
    l->base[r->d] = l->base[r->d + 1] = 0;
    l->bytes[r->d] = span_bytes(sens ? sens - 1 : 0);
    l->bytes[r->d + 1] = span_bytes(cls ? cls - 1 : 0);
    layout_place(r, l);
    if (l->width == 0) { /* every column constant: keep one byte, so that a tuple still takes room */
        l->bytes[r->d + 1] = 1;
        layout_place(r, l);
    }
    return ANONKIT_OK;
}

/* l becomes a copy of from. */
int rk_layout_copy(const rk *r, const rk_layout *from, rk_layout *l, ak_error *err)
{
    AK_CHECK(layout_alloc(r, l, err));
    const size_t ncol = (size_t)r->d + 2;
    memcpy(l->base, from->base, ncol * sizeof *l->base);
    memcpy(l->bytes, from->bytes, ncol * sizeof *l->bytes);
    layout_place(r, l);
    return ANONKIT_OK;
}

/* Column c of n tuples stored at raw (in a spill buffer, which may be read
 * SPILL_READ_SLACK bytes past its tuples), decoded into col. */
void rk_layout_column(const rk_layout *l, uint32_t c, const uint8_t *raw, size_t n, uint32_t *col)
{
    const uint8_t *at = raw + l->off[c];
    const uint32_t base = l->base[c], w = l->width;
    switch (l->bytes[c]) {
    case 0:
        for (size_t i = 0; i < n; i++) col[i] = base;
        break;
    case 1:
        for (size_t i = 0; i < n; i++, at += w) col[i] = base + at[0];
        break;
    case 2:
        for (size_t i = 0; i < n; i++, at += w) col[i] = base + (at[0] | (uint32_t)at[1] << 8);
        break;
    case 3: /* a word load (spill buffers have slack after the last tuple) */
        for (size_t i = 0; i < n; i++, at += w) col[i] = base + (tuple_load_u32(at) & 0xffffff);
        break;
    default:
        for (size_t i = 0; i < n; i++, at += w) col[i] = base + tuple_load_u32(at);
        break;
    }
}

/* Stores m rows of a decoded batch (columns of codes `stride` apart), rows
 * pick[0..m) of it (NULL: rows 0..m), as m consecutive tuples of layout l at
 * out, their doubles copied from the same rows of the tuples at raw (layout
 * src). A column at a time, its width chosen once: storing a tuple's columns
 * one by one chose each's width per tuple, and those branches were most of a
 * repartitioning scan's writing. */
void rk_layout_rows(const rk_layout *l, uint32_t ncol, uint32_t extra, const uint32_t *codes, size_t stride,
                    const uint32_t *pick, size_t m, const uint8_t *raw, const rk_layout *src, uint8_t *out)
{
    const uint32_t w = l->width;
    for (uint32_t c = 0; c < ncol; c++) {
        const uint32_t *col = codes + (size_t)c * stride, base = l->base[c];
        uint8_t *at = out + l->off[c];
        switch (l->bytes[c]) {
        case 0:
            break;
        case 1:
            for (size_t j = 0; j < m; j++, at += w) at[0] = (uint8_t)(col[pick ? pick[j] : j] - base);
            break;
        case 2:
            for (size_t j = 0; j < m; j++, at += w) {
                const uint32_t x = col[pick ? pick[j] : j] - base;
                at[0] = (uint8_t)x, at[1] = (uint8_t)(x >> 8);
            }
            break;
        case 3:
            for (size_t j = 0; j < m; j++, at += w) {
                const uint32_t x = col[pick ? pick[j] : j] - base;
                at[0] = (uint8_t)x, at[1] = (uint8_t)(x >> 8), at[2] = (uint8_t)(x >> 16);
            }
            break;
        default:
            for (size_t j = 0; j < m; j++, at += w) tuple_store_u32(at, col[pick ? pick[j] : j] - base);
            break;
        }
    }
    for (size_t j = 0; extra && j < m; j++)
        memcpy(out + j * w + l->extra_at, raw + (size_t)(pick ? pick[j] : j) * src->width + src->extra_at, extra);
}

/* ------------------------------------------------------------ partition files */

/* Writing into a new file costs the kernel fresh page-cache pages (on this
 * kind of machine over twice the cost of overwriting cached ones), and
 * repartitioning writes a file per leaf at every level. Creating a file is
 * not free either: ext4 looks for a free inode past the recently deleted
 * ones, so that with thousands of partitions (Rothko-S with small samples)
 * each new file took 0.3 to 0.75 ms of system time. So files a partition is
 * done with are kept until the run ends and handed out again, overwritten
 * from the start (what lies past `size` is never read; the files stay
 * unnamed and private). */
enum { RK_POOL_MAX = 256 };

int rk_part_file_open(rk *r, spill_file *f, ak_error *err)
{
    if (r->npool) {
        *f = r->pool[--r->npool];
        f->size = 0;
        return ANONKIT_OK;
    }
    r->stats->spill_files_created++;
    return spill_file_open(f, &r->dir, err);
}

/* Closes f, or keeps it for part_file_open. */
void rk_part_file_release(rk *r, spill_file *f)
{
    if (f->fd < 0) return;
    if (r->npool == r->pool_cap && r->pool_cap < RK_POOL_MAX) {
        const size_t cap = r->pool_cap ? 2 * r->pool_cap : 8;
        spill_file *p = realloc(r->pool, cap * sizeof *p);
        if (p) r->pool = p, r->pool_cap = cap;
    }
    if (r->npool < r->pool_cap) {
        r->pool[r->npool++] = *f;
        f->fd = -1;
        f->size = 0;
        return;
    }
    spill_file_close(f);
}

/* Closes the kept files. */
void rk_part_pool_drain(rk *r)
{
    while (r->npool) spill_file_close(&r->pool[--r->npool]);
    free(r->pool);
    r->pool = NULL;
    r->pool_cap = 0;
}

/* ------------------------------------------------------------ reading a partition */


int rk_reader_open(rk *r, rk_reader *rd, const rk_part *p, int with_payload, ak_error *err)
{
    memset(rd, 0, sizeof *rd);
    rd->with_payload = with_payload && r->ncopied;
    rd->lay = p->layout;
    if (!rd->lay) {
        AK_CHECK(rk_layout_wide(r, &rd->own, err));
        rd->lay = &rd->own;
    }
    AK_CHECK(spill_reader_init(&rd->tuples, &p->tuples, r->block, &r->tuple_io, err));
    if (p->tail_tuples) spill_reader_then(&rd->tuples, p->tail_tuples);
    if (rd->with_payload) {
        AK_CHECK(spill_reader_init(&rd->payload, &p->payload, r->block, &r->payload_io, err));
        if (p->tail_payload) spill_reader_then(&rd->payload, p->tail_payload);
    }
    return ANONKIT_OK;
}

/* Releases (rk_part_file_release) every file of p. */
void rk_part_release(rk *r, rk_part *p)
{
    rk_part_file_release(r, &p->tuples);
    rk_part_file_release(r, &p->payload);
    if (p->tail_tuples) rk_part_file_release(r, p->tail_tuples);
    if (p->tail_payload) rk_part_file_release(r, p->tail_payload);
    p->tail_tuples = p->tail_payload = NULL;
}

/* Column c of n tuples of the root file, the first of them its tuple `row`,
 * from codes as the first scan wrote them to the table's: the second piece's
 * (t->split) mapped, then numeric QIs ranked unless `rank` is 0. */
void rk_root_column(const rk *r, uint32_t c, uint32_t *col, size_t n, uint64_t row, int rank)
{
    const table *t = r->t;
    const uint64_t second = t->split.first_row;
    if (second && row + n > second) {
        const size_t from = row >= second ? 0 : (size_t)(second - row);
        if (c < r->d) {
            if (t->qi[c].kind == ATTR_NUMERIC && t->split.numeric_ids[c])
                for (size_t i = from; i < n; i++) col[i] = table_second_numeric(t, c, col[i]);
        } else {
            const uint32_t *map = c == r->d ? t->split.sensitive_map : t->split.class_map;
            const int present = c == r->d ? t->sensitive_column >= 0 : t->class_column >= 0;
            for (size_t i = from; present && i < n; i++) col[i] = map[col[i]];
        }
    }
    if (rank && c < r->d && t->qi[c].kind == ATTR_NUMERIC) table_numeric_ranks(t, c, col, n);
}

/* Whether p's codes of QI q are integer codes in value order (a value plus
 * a bias; the root file's numeric QIs without general-mode ids or missing values), which may
 * be gathered as they are and ranked afterwards, in bulk or just their
 * extremes: ranking is a lookup in a table as wide as the values' range. */
int rk_ranked_later(const rk *r, const rk_part *p, uint32_t q)
{
    /* (missing values: their code NUMDICT_MISSING is the greatest and ranks 0) */
    return p->provisional && r->t->qi[q].kind == ATTR_NUMERIC && !r->t->qi[q].prov.has_ids && !r->t->qi[q].prov.missing;
}

void rk_reader_close(rk_reader *rd)
{
    spill_reader_free(&rd->tuples);
    spill_reader_free(&rd->payload);
    rk_layout_free(&rd->own);
}

/* The next row's payload record: its fields' lengths, then the fields
 * (without the total that leads it in the file). 1, or < 0. */
int rk_read_payload(const rk *r, rk_reader *rd, const uint8_t **pay, size_t *paylen, ak_error *err)
{
    const uint8_t *head;
    int got = spill_read(&rd->payload, 4, &head, err);
    if (got <= 0) return got < 0 ? got : ak_err_set(err, ANONKIT_E_INTERNAL, NULL, 0, 0, "a payload file ends early");
    const size_t total = 4 * (size_t)r->ncopied + tuple_load_u32(head);
    got = spill_read(&rd->payload, total, pay, err);
    if (got <= 0) return got < 0 ? got : ak_err_set(err, ANONKIT_E_INTERNAL, NULL, 0, 0, "a payload file ends early");
    *paylen = total;
    return 1;
}

/* The next row: codes (final) into code[0..d+2), and with_payload its payload
 * record (lengths then fields) into pay and paylen. 1, 0 at the end, or < 0. */
int rk_read_row(rk *r, rk_reader *rd, const rk_part *p, uint32_t *code, const uint8_t **pay, size_t *paylen,
                ak_error *err)
{
    const uint8_t *row;
    int got = spill_read(&rd->tuples, rd->lay->width, &row, err);
    if (got <= 0) return got;
    rd->raw = row;
    for (uint32_t c = 0; c < r->d + 2; c++) {
        rk_layout_column(rd->lay, c, row, 1, code + c);
        if (p->provisional) rk_root_column(r, c, code + c, 1, rd->row, 1);
    }
    rd->row++;
    if (rd->with_payload) AK_CHECK(rk_read_payload(r, rd, pay, paylen, err));
    return 1;
}
