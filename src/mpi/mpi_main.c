/* mpi_main.c — anonkit-mpi: Mondrian on a cluster with Open MPI
 * (docs/distributed.md). Every rank loads its shard (mpi_shard.c); the upper
 * levels of the partition tree are chosen from frequency groups summed with
 * MPI_Allreduce ([LeFevre07] §2, the Rothko-T frequency groups; the family's
 * mdr_dist_partition); every leaf of that tree is shipped once, all-to-all,
 * to an owner rank that finishes it with the in-memory Mondrian ([LeFevre07]
 * §1.2) and publishes it through the one writer; the output is one part per
 * rank plus a manifest (-o DIR/) or one file that every rank writes at
 * once, at offsets from a prefix sum of lengths measured before writing
 * (-o FILE), committed only when every rank
 * succeeded (mpi_out.c). The report times every phase per rank: wall, CPU
 * and busy seconds (CPU outside MPI's waits), and the critical path. MPI is
 * called only from this folder. */
#include "mpi/mpi_internal.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "algo/mondrian/mondrian_dist.h"
#include "api/algorithm.h"
#include "common/clock.h"
#include "core/partition.h"
#include "model/risk_model.h"
#include "publish/publish.h"
#include "publish/rules.h"

mp_mark mp_now(const mp_ctx *c)
{
    const mp_mark m = {ak_seconds(), mp_cpu(), c->comm_cpu};
    return m;
}

void mp_time_add(mp_times *t, int ph, mp_mark from, const mp_ctx *c)
{
    const mp_mark now = mp_now(c);
    t->wall[ph] += now.wall - from.wall;
    t->cpu[ph] += now.cpu - from.cpu;
    t->comm[ph] += now.comm - from.comm;
}

int mp_agree(mp_ctx *c, int rc)
{
    if (c->failed) return c->err.code < 0 ? c->err.code : ANONKIT_E_INTERNAL;
    int bad = rc < 0 ? c->rank : INT_MAX, first = INT_MAX;
    const double t = mp_cpu();
    MPI_Allreduce(&bad, &first, 1, MPI_INT, MPI_MIN, c->comm);
    c->comm_cpu += mp_cpu() - t;
    if (first == INT_MAX) return ANONKIT_OK;
    if (c->rank == first && c->err.code >= 0) c->err.code = rc;
    MPI_Bcast(&c->err, (int)sizeof c->err, MPI_BYTE, first, c->comm);
    c->failed = 1;
    return c->err.code < 0 ? c->err.code : ANONKIT_E_INTERNAL;
}

/* ---- the reduction of frequency groups */

typedef struct reducer {
    mp_ctx *c;
    uint64_t bytes;
} reducer;

/* Sums buf over every rank, or takes the least (op), in place (MPI_Allreduce,
 * in chunks an int counts). */
static int reduce_sum(void *ctx, uint64_t *buf, size_t n, int op, ak_error *err)
{
    reducer *r = ctx;
    /* a rank that failed between two reductions (out of memory) is in
     * mp_agree: meet it there, so that every rank stops */
    const int rc = mp_agree(r->c, ANONKIT_OK);
    if (rc < 0) {
        *err = r->c->err;
        return rc;
    }
    const double t = mp_cpu();
    for (size_t at = 0; at < n;) {
        const size_t chunk = n - at < ((size_t)1 << 27) ? n - at : ((size_t)1 << 27);
        MPI_Allreduce(MPI_IN_PLACE, buf + at, (int)chunk, MPI_UINT64_T, op == MDR_DIST_MIN ? MPI_MIN : MPI_SUM,
                      r->c->comm);
        at += chunk;
    }
    r->c->comm_cpu += mp_cpu() - t;
    r->bytes += 8 * (uint64_t)n;
    return ANONKIT_OK;
}

/* ---- the reference distribution of t-closeness, δ-disclosure, β-likeness */

/* The whole table's sensitive distribution (model/closeness.h: every row
 * counts), from every rank's counts summed with one reduction (8 bytes per
 * distinct sensitive value, counted in the reducer's bytes), built into *ref
 * by the model layer's model_ref_for on every rank alike: the merged
 * dictionary is the same on every rank and in the single-machine order.
 * Collective; *ref stays NULL when the model has no distribution model. */
static int build_reference(mp_ctx *c, reducer *red, const mp_rows *rows, model_ref **ref)
{
    *ref = NULL;
    if (!model_has_dist(&c->job->model)) return ANONKIT_OK;
    const table *schema = rows->schema;
    const uint32_t nv = schema->sensitive_dict.count;
    uint64_t *counts = calloc(nv ? nv : 1, sizeof *counts);
    int rc = counts ? ANONKIT_OK : ak_err_nomem(&c->err);
    if (rc == ANONKIT_OK && schema->sensitive_column < 0)
        rc = ak_err_set(&c->err, ANONKIT_E_USAGE, NULL, 0, 0,
                        "t-closeness, delta-disclosure and beta-likeness need a sensitive column (--sensitive)");
    for (size_t r = 0; rc == ANONKIT_OK && r < rows->n; r++) counts[rows->sens[r]]++;
    if ((rc = mp_agree(c, rc)) == ANONKIT_OK) rc = reduce_sum(red, counts, nv ? nv : 1, MDR_DIST_SUM, &c->err);
    if (rc == ANONKIT_OK)
        rc = model_ref_for(&c->job->model.dist, &schema->sensitive_dict, counts, c->job->sensitive, ref, &c->err);
    free(counts);
    return mp_agree(c, rc);
}

/* ---- shipping leaves to their owners and finishing them */

typedef struct mp_stats {
    uint64_t rows_in, rows_out, classes, rows_shipped, bytes_shipped, leaves, levels, recounted;
    mp_times t;
} mp_stats;

/* Owner of every leaf: the largest first, each to the rank with the fewest
 * rows so far (the lowest on ties); the same on every rank. Every rank
 * writes its rows at its offset at the same time as the others under either
 * output (a row costs every rank alike), so the shares are equal. */
static int assign_owners(const mp_ctx *c, const mdr_dist_result *res, int *owner)
{
    size_t *order = malloc((res->nleaves ? res->nleaves : 1) * sizeof *order);
    uint64_t *load = calloc((size_t)c->size, sizeof *load);
    if (!order || !load) {
        free(order);
        free(load);
        return -1;
    }
    for (size_t i = 0; i < res->nleaves; i++) order[i] = i;
    for (size_t i = 1; i < res->nleaves; i++) { /* insertion sort by rows descending, index ascending */
        const size_t x = order[i];
        size_t j = i;
        while (j > 0 && res->leaves[order[j - 1]].rows < res->leaves[x].rows) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = x;
    }
    for (size_t i = 0; i < res->nleaves; i++) {
        int best = 0;
        for (int r = 1; r < c->size; r++)
            if (load[r] < load[best]) best = r;
        owner[order[i]] = best;
        load[best] += res->leaves[order[i]].rows;
    }
    free(order);
    free(load);
    return 0;
}

static void put32(unsigned char *p, uint32_t v) { memcpy(p, &v, 4); }
static uint32_t get32(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

/* Packs row r of this rank (its leaf, codes, sensitive and class codes, field
 * lengths, then the fields) at p; returns the bytes. */
static size_t pack_row(const mp_rows *rows, const mdr_dist_result *res, size_t r, unsigned char *p)
{
    const uint32_t d = rows->nqi, nc = rows->ncopied;
    const size_t fixed = 4 * ((size_t)d + 3 + nc);
    put32(p, res->leaf_of[r]);
    for (uint32_t q = 0; q < d; q++) put32(p + 4 + 4 * q, rows->codes[q][r]);
    put32(p + 4 + 4 * d, rows->sens[r]);
    put32(p + 8 + 4 * d, rows->cls[r]);
    for (uint32_t j = 0; j < nc; j++)
        put32(p + 12 + 4 * d + 4 * j, (uint32_t)(rows->off[r * nc + j + 1] - rows->off[r * nc + j]));
    const size_t bytes = rows->off[(r + 1) * nc] - rows->off[r * nc];
    if (bytes) memcpy(p + fixed, rows->copied.data + rows->off[r * nc], bytes);
    return fixed + bytes;
}

/* The bytes all ranks together ship in one round of the all-to-all: the
 * buffers are allocated once and reused, so the pages of a round are touched
 * again, never afresh (a page fault each 4 KiB costs as much as the copy). */
#define SHIP_ROUND_BYTES ((size_t)32 << 20)

/* view: the owned rows [b, b + n) of one leaf (the arrays ship_and_finish fills). */
static void leaf_view(table *view, table_qi *qi, uint32_t *const *codes, uint32_t *sens, uint32_t *cls, size_t b,
                      size_t n)
{
    for (uint32_t q = 0; q < view->nqi; q++) qi[q].codes = codes[q] + b;
    view->nrows = n;
    view->sensitive_codes = sens + b;
    view->class_codes = cls + b;
}

/* Ships every row to its leaf's owner and finishes the owned leaves with the
 * in-memory Mondrian, publishing them into ps. Every rank learns first how
 * many rows (and bytes) each rank holds of each leaf (one MPI_Allgather of
 * 2 counts per leaf), so an owner places every row it receives straight into
 * the leaf's arrays: per leaf, the rows of the other ranks in rank order,
 * then its own, which never pass through a buffer. The rows travel in rounds
 * of MPI_Alltoallv of at most SHIP_ROUND_BYTES in all. */
static int ship_and_finish(mp_ctx *c, const mp_rows *rows, const mdr_dist_result *res, publish_stream *ps,
                           mp_out *out, strbuf *rules_out, mp_stats *st)
{
    const table *schema = rows->schema;
    const uint32_t d = schema->nqi, nc = rows->ncopied;
    const size_t fixed = 4 * ((size_t)d + 3 + nc), nl = res->nleaves, P = (size_t)c->size;
    int *owner = malloc((nl ? nl : 1) * sizeof *owner);
    int *scount = calloc(4 * P, sizeof *scount);
    uint64_t *mine = calloc(2 * (nl ? nl : 1), sizeof *mine), *all = calloc(2 * (nl ? nl : 1) * P, sizeof *all);
    size_t *first = calloc(nl + 1, sizeof *first);
    uint64_t *bfirst = calloc(nl + 1, sizeof *bfirst);
    uint64_t *pos = calloc(2 * (nl ? nl : 1) * P, sizeof *pos); /* per leaf and sender: next row, next byte */
    int rc = owner && scount && mine && all && first && bfirst && pos && assign_owners(c, res, owner) == 0
                 ? ANONKIT_OK
                 : ak_err_nomem(&c->err);
    unsigned char *sbuf = NULL, *rbuf = NULL;
    uint32_t **codes = NULL;
    uint32_t *sens = NULL, *cls = NULL;
    size_t *off = NULL;
    char *copied = NULL;
    size_t m = 0;
    const mp_mark t0 = mp_now(c);
    uint64_t maxrow = 0; /* the largest row shipped */
    for (size_t r = 0; rc == ANONKIT_OK && r < rows->n; r++) {
        const uint32_t l = res->leaf_of[r];
        const uint64_t bytes = rows->off[(r + 1) * nc] - rows->off[r * nc];
        mine[2 * l]++;
        mine[2 * l + 1] += bytes;
        if (owner[l] != c->rank) {
            st->rows_shipped++;
            if (fixed + bytes > maxrow) maxrow = fixed + bytes;
        }
    }
    if ((rc = mp_agree(c, rc)) < 0) goto done;
    double tc = mp_cpu();
    MPI_Allgather(mine, 2 * (int)(nl ? nl : 1), MPI_UINT64_T, all, 2 * (int)(nl ? nl : 1), MPI_UINT64_T, c->comm);
    MPI_Allreduce(MPI_IN_PLACE, &maxrow, 1, MPI_UINT64_T, MPI_MAX, c->comm);
    c->comm_cpu += mp_cpu() - tc;
    /* where each sender's rows of each owned leaf go */
    const size_t stride = 2 * (nl ? nl : 1);
    for (size_t l = 0; l < nl; l++) {
        uint64_t rws = 0, byt = 0;
        if (owner[l] == c->rank) {
            for (size_t s = 0; s <= P; s++) { /* the other ranks in rank order, then this rank (s == P) */
                const size_t from = s < P ? s : (size_t)c->rank;
                if (s < P && s == (size_t)c->rank) continue;
                pos[2 * (l * P + from)] = first[l] + rws;
                pos[2 * (l * P + from) + 1] = bfirst[l] + byt;
                rws += all[from * stride + 2 * l];
                byt += all[from * stride + 2 * l + 1];
            }
        }
        first[l + 1] = first[l] + rws;
        bfirst[l + 1] = bfirst[l] + byt;
    }
    m = first[nl];
    /* the owned rows' arrays */
    codes = calloc(d ? d : 1, sizeof *codes);
    sens = malloc((m ? m : 1) * sizeof *sens);
    cls = malloc((m ? m : 1) * sizeof *cls);
    off = malloc(((size_t)m * nc + 1) * sizeof *off);
    copied = malloc(bfirst[nl] ? bfirst[nl] : 1);
    if (!codes || !sens || !cls || !off || !copied) rc = ak_err_nomem(&c->err);
    for (uint32_t q = 0; rc == ANONKIT_OK && q < d; q++)
        if (!(codes[q] = malloc((m ? m : 1) * sizeof **codes))) rc = ak_err_nomem(&c->err);
    /* a round's share per destination: at least the largest row */
    size_t chunk = P > 1 ? SHIP_ROUND_BYTES / (P - 1) : 0;
    if (chunk < maxrow) chunk = (size_t)maxrow;
    if (rc == ANONKIT_OK && P > 1 && (chunk > (size_t)INT_MAX / 2 / (P - 1)))
        rc = ak_err_set(&c->err, ANONKIT_E_USAGE, NULL, 0, 0, "a row is too large to ship (over 1 GiB per round)");
    if (rc == ANONKIT_OK && P > 1 && (!(sbuf = malloc(chunk * P)) || !(rbuf = malloc(chunk * P))))
        rc = ak_err_nomem(&c->err);
    if ((rc = mp_agree(c, rc)) < 0) goto done;
    off[0] = 0;
    /* this rank's own rows, in place */
    for (size_t r = 0; r < rows->n; r++) {
        const uint32_t l = res->leaf_of[r];
        if (owner[l] != c->rank) continue;
        uint64_t *pr = &pos[2 * (l * P + (size_t)c->rank)];
        const size_t x = (size_t)pr[0]++;
        for (uint32_t q = 0; q < d; q++) codes[q][x] = rows->codes[q][r];
        sens[x] = rows->sens[r];
        cls[x] = rows->cls[r];
        const size_t from = rows->off[r * nc], bytes = rows->off[(r + 1) * nc] - from;
        const uint64_t b = pr[1];
        if (bytes) memcpy(copied + b, rows->copied.data + from, bytes);
        for (uint32_t j = 0; j < nc; j++) off[x * nc + j + 1] = b + (rows->off[r * nc + j + 1] - from);
        pr[1] = b + bytes;
    }
    /* the rows for other ranks, in rounds */
    int *sdispl = scount + P, *rcount = sdispl + P, *rdispl = rcount + P;
    for (size_t r = 0; r < P; r++) sdispl[r] = rdispl[r] = (int)(r * chunk);
    size_t cursor = 0;
    for (int more = P > 1;;) {
        if (!more) break;
        memset(scount, 0, P * sizeof *scount);
        for (; cursor < rows->n; cursor++) { /* until a destination's share is full */
            const int to = owner[res->leaf_of[cursor]];
            if (to == c->rank) continue;
            const size_t bytes = fixed + rows->off[(cursor + 1) * nc] - rows->off[cursor * nc];
            if ((size_t)scount[to] + bytes > chunk) break;
            scount[to] += (int)pack_row(rows, res, cursor, sbuf + sdispl[to] + scount[to]);
            st->bytes_shipped += bytes;
        }
        tc = mp_cpu();
        MPI_Alltoall(scount, 1, MPI_INT, rcount, 1, MPI_INT, c->comm);
        MPI_Alltoallv(sbuf, scount, sdispl, MPI_BYTE, rbuf, rcount, rdispl, MPI_BYTE, c->comm);
        while (cursor < rows->n && owner[res->leaf_of[cursor]] == c->rank) cursor++;
        const int mine_more = cursor < rows->n;
        MPI_Allreduce(&mine_more, &more, 1, MPI_INT, MPI_LOR, c->comm);
        c->comm_cpu += mp_cpu() - tc;
        for (size_t s = 0; s < P; s++) { /* unpack: each row straight to its place */
            for (const unsigned char *p = rbuf + rdispl[s], *end = p + rcount[s]; p < end;) {
                const uint32_t l = get32(p);
                uint64_t *pr = &pos[2 * ((size_t)l * P + s)];
                const size_t x = (size_t)pr[0]++;
                for (uint32_t q = 0; q < d; q++) codes[q][x] = get32(p + 4 + 4 * q);
                sens[x] = get32(p + 4 + 4 * d);
                cls[x] = get32(p + 8 + 4 * d);
                const unsigned char *f = p + fixed;
                uint64_t b = pr[1];
                for (uint32_t j = 0; j < nc; j++) {
                    const uint32_t len = get32(p + 12 + 4 * d + 4 * j);
                    memcpy(copied + b, f, len);
                    f += len;
                    b += len;
                    off[x * nc + j + 1] = b;
                }
                pr[1] = b;
                p = f;
            }
        }
    }
    free(sbuf);
    free(rbuf);
    sbuf = rbuf = NULL;
    mp_time_add(&st->t, MP_SHIP, t0, c);
    mp_mark t1 = mp_now(c);
    /* each owned leaf finished, in leaf order, its classes kept: under -o FILE
     * every rank's length is then measured and exchanged before any row is
     * written, so that all ranks write at once */
    partition *classes = calloc(nl ? nl : 1, sizeof *classes);
    table view = *schema;
    table_qi *qi = malloc((d ? d : 1) * sizeof *qi);
    if ((!qi || !classes) && rc == ANONKIT_OK) rc = ak_err_nomem(&c->err);
    if (qi) memcpy(qi, schema->qi, d * sizeof *qi);
    view.qi = qi;
    view.sensitive_values = NULL;
    view.target_values = NULL;
    for (size_t l = 0; rc == ANONKIT_OK && l < nl; l++) {
        const size_t b = first[l], n = first[l + 1] - first[l];
        if (!n) continue;
        leaf_view(&view, qi, codes, sens, cls, b, n);
        const mdr_options mo = {.threads = 1, .split = c->job->split, .min_gain = c->job->min_gain,
                                .root_rlo = res->leaves[l].rlo, .root_rhi = res->leaves[l].rhi,
                                .root_median_only = res->leaves[l].median_only};
        if ((rc = partition_init(&classes[l], n, d, &c->err)) < 0) break;
        rc = mdr_run_with(&view, &c->job->model, &mo, &classes[l], &c->err);
    }
    mp_time_add(&st->t, MP_FINISH, t1, c);
    const mp_mark tw = mp_now(c);
    if (!out->dir_mode) { /* this rank's length, without composing a row, then its offset */
        uint64_t len = 0;
        for (size_t l = 0; rc == ANONKIT_OK && l < nl; l++) {
            const size_t b = first[l], n = first[l + 1] - first[l];
            uint64_t part = 0;
            if (!n) continue;
            leaf_view(&view, qi, codes, sens, cls, b, n);
            rc = mp_part_length(c, &view, &classes[l], off + b * nc, nc, &part);
            len += part;
        }
        if ((rc = mp_agree(c, rc)) == ANONKIT_OK) rc = mp_out_place(c, out, len);
    }
    for (size_t l = 0; rc == ANONKIT_OK && l < nl; l++) {
        const size_t b = first[l], n = first[l + 1] - first[l];
        if (!n) continue;
        leaf_view(&view, qi, codes, sens, cls, b, n);
        rc = publish_stream_part(ps, &view, &classes[l], NULL, copied, off + b * nc, &c->err);
        if (rc == ANONKIT_OK) rc = mp_out_progress(c, out);
        for (size_t k = 0; rc == ANONKIT_OK && rules_out && k < classes[l].nclasses; k++) {
            /* the class for the rules rank 0 writes: its leaf, box, region and rows */
            const partition *p = &classes[l];
            const uint32_t leaf = (uint32_t)l;
            const uint64_t count = p->count[k];
            if (strbuf_append(rules_out, (const char *)&leaf, 4) != 0 ||
                strbuf_append(rules_out, (const char *)(p->lo + k * d), 4 * (size_t)d) != 0 ||
                strbuf_append(rules_out, (const char *)(p->hi + k * d), 4 * (size_t)d) != 0 ||
                strbuf_append(rules_out, (const char *)(p->rlo + k * d), 4 * (size_t)d) != 0 ||
                strbuf_append(rules_out, (const char *)(p->rhi + k * d), 4 * (size_t)d) != 0 ||
                strbuf_append(rules_out, (const char *)&count, 8) != 0)
                rc = ak_err_nomem(&c->err);
        }
        st->classes += classes[l].nclasses;
        st->rows_out += n;
        partition_free(&classes[l]);
    }
    mp_time_add(&st->t, MP_WRITE, tw, c);
    for (size_t l = 0; classes && l < nl; l++) partition_free(&classes[l]);
    free(classes);
    free(qi);
done:
    for (uint32_t q = 0; codes && q < d; q++) free(codes[q]);
    free(codes);
    free(sens);
    free(cls);
    free(off);
    free(copied);
    free(owner);
    free(scount);
    free(mine);
    free(all);
    free(first);
    free(bfirst);
    free(pos);
    free(sbuf);
    free(rbuf);
    return rc;
}

/* ---- the recoding rules, written by rank 0 */

/* Gathers every rank's classes (leaf, box, region, rows) on rank 0, which
 * writes the rules ([LeFevre07] §1.2, §2.2; src/publish/rules.c) into a
 * temporary file beside `path` (its name into tmp), renamed by rules_commit. */
static int rules_gather(mp_ctx *c, const table *schema, const strbuf *mine, const char *path, char *tmp, size_t tmpsize)
{
    int rc = ANONKIT_OK, len = (int)mine->len;
    if (mine->len > (size_t)INT_MAX / 2) rc = ak_err_set(&c->err, ANONKIT_E_USAGE, NULL, 0, 0, "too many classes for --rules");
    if ((rc = mp_agree(c, rc)) < 0) return rc;
    int *lens = c->rank == 0 ? calloc(2 * (size_t)c->size, sizeof *lens) : NULL;
    int ok = c->rank != 0 || lens, all_ok = 0;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, c->comm);
    if (!all_ok) {
        free(lens);
        return mp_agree(c, c->rank == 0 ? ak_err_nomem(&c->err) : ANONKIT_OK);
    }
    MPI_Gather(&len, 1, MPI_INT, lens, 1, MPI_INT, 0, c->comm);
    size_t total = 0;
    if (c->rank == 0)
        for (int r = 0; r < c->size; r++) {
            lens[c->size + r] = (int)total;
            total += (size_t)lens[r];
        }
    char *all = c->rank == 0 ? malloc(total ? total : 1) : NULL;
    ok = c->rank != 0 || all;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, c->comm);
    if (all_ok)
        MPI_Gatherv(mine->data ? mine->data : "", len, MPI_BYTE, all, lens, lens ? lens + c->size : NULL, MPI_BYTE, 0,
                    c->comm);
    else if (c->rank == 0) rc = ak_err_nomem(&c->err);
    if (c->rank == 0 && rc == ANONKIT_OK) {
        const uint32_t d = schema->nqi;
        const size_t rec = 4 + 16 * (size_t)d + 8, n = total / rec;
        partition p;
        table view = *schema;
        view.nrows = 0;
        rc = partition_init(&p, 0, d, &c->err);
        /* the classes in leaf order (each leaf's in its own depth-first order) */
        size_t *order = rc == ANONKIT_OK ? malloc((n ? n : 1) * sizeof *order) : NULL;
        if (rc == ANONKIT_OK && !order) rc = ak_err_nomem(&c->err);
        for (size_t i = 0; rc == ANONKIT_OK && i < n; i++) order[i] = i;
        for (size_t i = 1; rc == ANONKIT_OK && i < n; i++) { /* insertion by leaf; n log n is not needed for the few leaves */
            const size_t x = order[i];
            uint32_t lx;
            memcpy(&lx, all + x * rec, 4);
            size_t j = i;
            for (uint32_t lj; j > 0 && (memcpy(&lj, all + order[j - 1] * rec, 4), lj > lx); j--) order[j] = order[j - 1];
            order[j] = x;
        }
        uint32_t *box = rc == ANONKIT_OK ? malloc(4 * (size_t)(d ? d : 1) * sizeof *box) : NULL;
        if (rc == ANONKIT_OK && !box) rc = ak_err_nomem(&c->err);
        for (size_t i = 0; rc == ANONKIT_OK && i < n; i++) {
            const char *r = all + order[i] * rec + 4;
            memcpy(box, r, 16 * (size_t)d);
            uint64_t count;
            memcpy(&count, r + 16 * (size_t)d, 8);
            uint32_t id;
            rc = partition_add_class_in(&p, box, box + d, box + 2 * d, box + 3 * d, count, &id, &c->err);
        }
        free(box);
        free(order);
        char d_[4096], parent[4096];
        mp_dest_names(path, d_, sizeof d_, parent, sizeof parent);
        snprintf(tmp, tmpsize, "%.4000s.anonkit-tmp-XXXXXX", d_);
        const int fd = rc == ANONKIT_OK ? mkstemp(tmp) : -1;
        FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
        if (rc == ANONKIT_OK && !f) rc = mp_fail_io(c, path, "cannot create the rules");
        if (fd < 0) tmp[0] = '\0';
        rules_stream *rs = NULL;
        if (rc == ANONKIT_OK) rc = rules_stream_open(&rs, schema, c->job->publish, f, path, &c->err);
        if (rc == ANONKIT_OK) rc = rules_stream_part(rs, &view, &p, NULL, &c->err);
        if (rc == ANONKIT_OK) rc = rules_stream_close(rs, &c->err);
        rules_stream_free(rs);
        if (f && (fflush(f) != 0 || fsync(fileno(f)) != 0) && rc == ANONKIT_OK) rc = mp_fail_io(c, path, "cannot write the rules");
        if (f && fclose(f) != 0 && rc == ANONKIT_OK) rc = mp_fail_io(c, path, "cannot write the rules");
        else if (!f && fd >= 0) close(fd);
        if (rc < 0 && tmp[0]) {
            unlink(tmp);
            tmp[0] = '\0';
        }
        partition_free(&p);
    }
    free(all);
    free(lens);
    return mp_agree(c, rc);
}

/* ---- the command */

static void usage(FILE *f)
{
    fputs("usage: mpirun -np N anonkit-mpi anonymize INPUT -o OUTPUT --qi A,B,... --k K [options]\n"
          "  INPUT   a folder of part files (*.csv, one header each), a quoted glob ('data/part-*.csv'),\n"
          "          or one CSV file, which the ranks read in byte ranges\n"
          "  OUTPUT  DIR/ (one part-NNNNN.csv per rank and manifest.json) or FILE (one file)\n"
          "  options are those of `anonkit anonymize` for Mondrian: --qi, --hierarchy, --numeric,\n"
          "  --sensitive, --identifier, --k, --l, --l-variant, --c, --t, --t-distance, --delta-disclosure,\n"
          "  --beta, --beta-variant, --split median|infogain, --class,\n"
          "  --min-gain, --publish generalize|range, --seed, --delimiter, --tmpdir, --report, --rules\n"
          "  (from rank 0), and --memory SIZE: the rows one rank finishes in memory (default 1G)\n",
          f);
}

/* Parses argv into the job; the input and output into *input, *output. */
static int parse_args(mp_ctx *c, int argc, char **argv, const char **input, const char **output)
{
    *input = *output = NULL;
    if (argc < 2 || strcmp(argv[1], "anonymize") != 0)
        return ak_err_set(&c->err, ANONKIT_E_USAGE, NULL, 0, 0, "the only command is `anonymize` (see --help)");
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
            if (i + 1 >= argc) return ak_err_set(&c->err, ANONKIT_E_USAGE, NULL, 0, 0, "%s needs a value", a);
            *output = argv[++i];
            continue;
        }
        if (strncmp(a, "--", 2) != 0) {
            if (*input) return ak_err_set(&c->err, ANONKIT_E_USAGE, NULL, 0, 0, "more than one input: '%s'", a);
            *input = a;
            continue;
        }
        char name[128];
        const char *eq = strchr(a + 2, '='), *value = NULL;
        snprintf(name, sizeof name, "%.*s", eq ? (int)(eq - a - 2) : (int)strlen(a + 2), a + 2);
        const anonkit_option o = anonkit_option_find(name);
        if (o == ANONKIT_OPT__COUNT || o == ANONKIT_OPT_INPUT)
            return ak_err_set(&c->err, ANONKIT_E_USAGE, NULL, 0, 0, "unknown option '--%s'", name);
        if (eq) value = eq + 1;
        else if (anonkit_option_flags(o) & ANONKIT_OPTF_FLAG) value = "true";
        else if (i + 1 < argc) value = argv[++i];
        else return ak_err_set(&c->err, ANONKIT_E_USAGE, NULL, 0, 0, "--%s needs a value", name);
        if (anonkit_job_set(c->job, o, value) != ANONKIT_OK) {
            c->err = c->job->err;
            if (c->err.code >= 0) c->err.code = ANONKIT_E_USAGE;
            snprintf(c->err.message, sizeof c->err.message, "%s", anonkit_errmsg(c->job));
            c->err.file[0] = '\0';
            return c->err.code;
        }
    }
    if (!*input || !*output) return ak_err_set(&c->err, ANONKIT_E_USAGE, NULL, 0, 0, "an INPUT and -o OUTPUT are needed");
    if (!strcmp(*input, "-") || !strcmp(*output, "-"))
        return ak_err_set(&c->err, ANONKIT_E_USAGE, NULL, 0, 0, "anonkit-mpi reads and writes files, not standard streams");
    const anonkit_job *j = c->job;
    if (j->algorithm && strcmp(job_algorithm(j)->name, "mondrian") != 0)
        return ak_err_set(&c->err, ANONKIT_E_USAGE, NULL, 0, 0,
                          "anonkit-mpi runs Mondrian (its upper levels as Rothko-T's frequency groups): "
                          "--algorithm %s is not available",
                          job_algorithm(j)->name);
    if (j->keep_order || j->publish == RECODE_MEAN || j->split == MDR_SPLIT_REGRESSION || j->model.variance > 0 ||
        j->previous.count)
        return ak_err_set(&c->err, ANONKIT_E_USAGE, NULL, 0, 0,
                          "anonkit-mpi does not take --keep-order, --publish mean, --split regression, --variance or "
                          "--previous");
    /* t, δ, β: a sensitive column, the hierarchical distance's hierarchy (--hierarchy S=FILE) */
    if (job_check_dist(c->job) < 0) {
        c->err = c->job->err;
        if (c->err.code >= 0) c->err.code = ANONKIT_E_USAGE;
        return c->err.code;
    }
    /* models and settings a cluster run cannot honour yet are refused, never ignored */
    if (risk_model_has_table_predicate(&j->risk.max))
        return ak_err_set(&c->err, ANONKIT_E_USAGE, NULL, 0, 0,
                          "anonkit-mpi takes --max-risk highest=R only (average=R and uniqueness=R need "
                          "--algorithm incognito)");
    if (j->html || j->query || j->replace || j->use_codes)
        return ak_err_set(&c->err, ANONKIT_E_USAGE, NULL, 0, 0,
                          "anonkit-mpi does not take --html, --query, --replace or --use-codes: it reads and "
                          "writes CSV files (give --report for the JSON report)");
    if (j->risk.max.highest > 0) { /* highest=R is k-anonymity with k = ceil(1/R) */
        const uint64_t k = risk_model_k(j->risk.max.highest);
        if (k > c->job->model.k) c->job->model.k = k;
    }
    if (model_validate(&c->job->model, &c->err) < 0) return c->err.code;
    return ANONKIT_OK;
}

/* One JSON object of the five phases' seconds. */
static void put_phases(FILE *f, const double *v)
{
    fprintf(f, "{\"load\": %.3f, \"partition\": %.3f, \"ship\": %.3f, \"finish\": %.3f, \"write\": %.3f}", v[0],
            v[1], v[2], v[3], v[4]);
}

/* The report (rank 0): totals, and per rank its rows and its wall, CPU and
 * busy seconds per phase (busy: CPU outside MPI's waits); "seconds" is the
 * largest wall time of each phase over the ranks and "critical_path" the
 * largest busy time, which shows the scaling without a loaded machine's
 * waiting. `times` holds 3 * MP_NPHASE values per rank (wall, cpu, comm). */
static int write_report(const mp_ctx *c, const char *path, const mp_stats *tot, const uint64_t *per_in,
                        const uint64_t *per_out, const double *times, uint64_t bytes_reduced, uint64_t finish_rows)
{
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.anonkit-tmp-XXXXXX", path);
    const int fd = mkstemp(tmp);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) return -1;
    fprintf(f, "{\n  \"algorithm\": \"mondrian\",\n  \"distributed\": true,\n  \"ranks\": %d,\n", c->size);
    fprintf(f, "  \"split\": \"%s\",\n  \"k\": %llu,\n", mdr_split_name(c->job->split), (unsigned long long)c->job->model.k);
    fprintf(f, "  \"rows_read\": %llu,\n  \"rows_published\": %llu,\n  \"classes\": %llu,\n",
            (unsigned long long)tot->rows_in, (unsigned long long)tot->rows_out, (unsigned long long)tot->classes);
    fprintf(f, "  \"finish_rows\": %llu,\n  \"levels_reduced\": %llu,\n  \"leaves\": %llu,\n  \"nodes_recounted\": %llu,\n",
            (unsigned long long)finish_rows, (unsigned long long)tot->levels, (unsigned long long)tot->leaves,
            (unsigned long long)tot->recounted);
    fprintf(f, "  \"bytes_reduced\": %llu,\n  \"rows_shipped\": %llu,\n  \"bytes_shipped\": %llu,\n",
            (unsigned long long)bytes_reduced, (unsigned long long)tot->rows_shipped,
            (unsigned long long)tot->bytes_shipped);
    double wall[MP_NPHASE] = {0}, crit[MP_NPHASE] = {0}, crit_total = 0;
    fprintf(f, "  \"per_rank\": [");
    for (int r = 0; r < c->size; r++) {
        const double *w = times + (size_t)r * 3 * MP_NPHASE, *cpu = w + MP_NPHASE, *comm = cpu + MP_NPHASE;
        double busy[MP_NPHASE], cpu_total = 0, busy_total = 0;
        for (int p = 0; p < MP_NPHASE; p++) {
            busy[p] = cpu[p] - comm[p] > 0 ? cpu[p] - comm[p] : 0;
            cpu_total += cpu[p];
            busy_total += busy[p];
            if (w[p] > wall[p]) wall[p] = w[p];
            if (busy[p] > crit[p]) crit[p] = busy[p];
        }
        fprintf(f, "%s\n    {\"rank\": %d, \"rows_read\": %llu, \"rows_published\": %llu, \"cpu_seconds\": %.3f, "
                   "\"busy_seconds\": %.3f,\n     \"wall\": ",
                r ? "," : "", r, (unsigned long long)per_in[r], (unsigned long long)per_out[r], cpu_total, busy_total);
        put_phases(f, w);
        fprintf(f, ",\n     \"cpu\": ");
        put_phases(f, cpu);
        fprintf(f, ",\n     \"busy\": ");
        put_phases(f, busy);
        fprintf(f, "}");
    }
    for (int p = 0; p < MP_NPHASE; p++) crit_total += crit[p];
    fprintf(f, "],\n  \"seconds\": ");
    put_phases(f, wall);
    fprintf(f, ",\n  \"critical_path\": ");
    put_phases(f, crit);
    fprintf(f, ",\n  \"critical_path_seconds\": %.3f\n}\n", crit_total);
    int bad = fflush(f) != 0 || fsync(fileno(f)) != 0;
    bad |= fclose(f) != 0;
    if (bad || rename(tmp, path) != 0) {
        unlink(tmp);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    mp_ctx c;
    memset(&c, 0, sizeof c);
    c.comm = MPI_COMM_WORLD;
    MPI_Comm_rank(c.comm, &c.rank);
    MPI_Comm_size(c.comm, &c.size);
    if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
                      (argc >= 3 && (!strcmp(argv[2], "--help") || !strcmp(argv[2], "-h"))))) {
        if (c.rank == 0) usage(stdout);
        MPI_Finalize();
        return 0;
    }
    c.job = anonkit_job_create();
    const char *input = NULL, *output = NULL;
    mp_rows rows;
    memset(&rows, 0, sizeof rows);
    mdr_dist_result res;
    memset(&res, 0, sizeof res);
    mp_out out;
    memset(&out, 0, sizeof out);
    out.fd = -1;
    mp_stats st;
    memset(&st, 0, sizeof st);
    publish_stream *ps = NULL;
    reducer red = {.c = &c};
    int out_opened = 0;
    uint64_t finish_rows = 0;
    table_qi *qi = NULL;
    model_ref *ref = NULL;
    strbuf rules_mine = {0};
    char rules_tmp[4200] = "";
    int rc_report = ANONKIT_OK;
    int rc = c.job ? parse_args(&c, argc, argv, &input, &output) : ak_err_nomem(&c.err);
    if (rc == ANONKIT_OK && c.rank == 0 && c.job->report) { /* the report's folder must take it: refused before any work */
        char rd[4096], rp[4096];
        mp_dest_names(c.job->report, rp, sizeof rp, rd, sizeof rd);
        if (access(rd, W_OK) != 0) rc = mp_fail_io(&c, c.job->report, "cannot write the report there");
    }
    if (rc == ANONKIT_OK && c.rank == 0 && c.job->rules) {
        char rd[4096], rp[4096];
        mp_dest_names(c.job->rules, rp, sizeof rp, rd, sizeof rd);
        if (access(rd, W_OK) != 0) rc = mp_fail_io(&c, c.job->rules, "cannot write the rules there");
    }
    if ((rc = mp_agree(&c, rc)) < 0) goto done;
    mp_mark t = mp_now(&c);
    if ((rc = mp_load(&c, input, &rows)) < 0) goto done;
    mp_time_add(&st.t, MP_LOAD, t, &c);
    st.rows_in = rows.n;
    /* the local rows as a table with the whole table's dictionaries */
    table view = *rows.schema;
    const uint32_t d = rows.schema->nqi;
    if (!(qi = malloc((d ? d : 1) * sizeof *qi))) rc = ak_err_nomem(&c.err);
    if ((rc = mp_agree(&c, rc)) < 0) goto done;
    memcpy(qi, rows.schema->qi, d * sizeof *qi);
    for (uint32_t q = 0; q < d; q++) qi[q].codes = rows.codes[q];
    view.qi = qi;
    view.nrows = rows.n;
    view.sensitive_codes = rows.sens;
    view.class_codes = rows.cls;
    if ((rc = build_reference(&c, &red, &rows, &ref)) < 0) goto done;
    c.job->model.ref = ref; /* the leaves' in-memory Mondrian judges their sides against it too */
    const mdr_options mo = {.threads = 1, .split = c.job->split, .min_gain = c.job->min_gain};
    rc = mdr_check_inputs(&view, &c.job->model, &mo, &c.err);
    if ((rc = mp_agree(&c, rc)) < 0) goto done;
    /* a leaf one rank finishes in memory: its rows' codes, work rows and copied fields within --memory */
    const size_t memory = c.job->memory ? c.job->memory : (size_t)1 << 30;
    uint64_t local_bytes = rows.copied.len, all_bytes = 0, all_rows = 0;
    MPI_Allreduce(&local_bytes, &all_bytes, 1, MPI_UINT64_T, MPI_SUM, c.comm);
    MPI_Allreduce(&st.rows_in, &all_rows, 1, MPI_UINT64_T, MPI_SUM, c.comm);
    const uint64_t per_row = 4 * (3 * (uint64_t)d + 8) + 8 * rows.ncopied + (all_rows ? all_bytes / all_rows : 0);
    finish_rows = memory / (per_row ? per_row : 1);
    if (finish_rows < 2 * c.job->model.k) finish_rows = 2 * c.job->model.k;
    t = mp_now(&c);
    rc = mdr_dist_partition(&view, &c.job->model, &mo, finish_rows, reduce_sum, &red, &res, &c.err);
    if ((rc = mp_agree(&c, rc)) < 0) goto done;
    mp_time_add(&st.t, MP_PARTITION, t, &c);
    st.levels = res.levels;
    st.leaves = res.nleaves;
    st.recounted = res.recounted;
    const publish_opts po = {.keep_order = 0, .seed = c.job->seed ^ (uint64_t)c.rank, .threads = 1,
                             .style = c.job->publish};
    long header = 0;
    { /* the header's length: the same header written to memory */
        char *mem = NULL;
        size_t memlen = 0;
        FILE *hf = open_memstream(&mem, &memlen);
        publish_stream *hs = NULL;
        publish_stats hst;
        if (!hf) rc = ak_err_nomem(&c.err);
        if (rc == ANONKIT_OK) rc = publish_stream_open(&hs, rows.schema, &po, hf, output, &c.err);
        if (rc == ANONKIT_OK) rc = publish_stream_close(hs, &hst, &c.err);
        publish_stream_free(hs);
        if (hf && fclose(hf) != 0 && rc == ANONKIT_OK) rc = ak_err_nomem(&c.err);
        header = (long)memlen;
        free(mem);
    }
    if ((rc = mp_agree(&c, rc)) < 0) goto done;
    if ((rc = mp_out_open(&c, output, header, &out)) < 0) goto done;
    out_opened = 1;
    rc = publish_stream_open(&ps, rows.schema, &po, out.f, output, &c.err);
    if ((rc = mp_agree(&c, rc)) < 0) goto done;
    rc = ship_and_finish(&c, &rows, &res, ps, &out, c.job->rules ? &rules_mine : NULL, &st);
    if (rc == ANONKIT_OK) {
        publish_stats pst;
        const mp_mark tw = mp_now(&c);
        rc = publish_stream_close(ps, &pst, &c.err);
        mp_time_add(&st.t, MP_WRITE, tw, &c);
    }
    publish_stream_free(ps);
    ps = NULL;
    t = mp_now(&c);
    if (c.job->rules && (rc = mp_agree(&c, rc)) == ANONKIT_OK)
        rc = rules_gather(&c, rows.schema, &rules_mine, c.job->rules, rules_tmp, sizeof rules_tmp);
    rc = mp_out_commit(&c, output, &out, st.rows_out, rc);
    if (c.rank == 0 && rules_tmp[0]) { /* the rules beside the committed output, or removed */
        if (rc == ANONKIT_OK && rename(rules_tmp, c.job->rules) != 0) {
            mp_fail_io(&c, c.job->rules, "cannot commit the rules");
            fprintf(stderr, "anonkit-mpi: %s: cannot commit the rules\n", c.job->rules);
            rc_report = ANONKIT_E_IO;
        }
        if (rc < 0 || rc_report < 0) unlink(rules_tmp);
    }
    mp_time_add(&st.t, MP_WRITE, t, &c);
    if (rc < 0) goto done;
    out_opened = 0; /* committed: nothing is left to remove */
    { /* totals, the summary and the report, from rank 0 */
        mp_stats tot = st;
        uint64_t v[5] = {st.rows_in, st.rows_out, st.classes, st.rows_shipped, st.bytes_shipped}, s[5];
        MPI_Reduce(v, s, 5, MPI_UINT64_T, MPI_SUM, 0, c.comm);
        uint64_t *per = calloc(2 * (size_t)c.size, sizeof *per);
        double *times = calloc((size_t)c.size * 3 * MP_NPHASE, sizeof *times);
        int ok = per && times, all_ok = 0;
        MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, c.comm);
        if (all_ok) {
            MPI_Gather(&st.rows_in, 1, MPI_UINT64_T, per, 1, MPI_UINT64_T, 0, c.comm);
            MPI_Gather(&st.rows_out, 1, MPI_UINT64_T, per + c.size, 1, MPI_UINT64_T, 0, c.comm);
            MPI_Gather(&st.t, 3 * MP_NPHASE, MPI_DOUBLE, times, 3 * MP_NPHASE, MPI_DOUBLE, 0, c.comm);
        }
        if (c.rank == 0) {
            tot.rows_in = s[0], tot.rows_out = s[1], tot.classes = s[2], tot.rows_shipped = s[3], tot.bytes_shipped = s[4];
            fprintf(stderr,
                    "anonkit-mpi: %llu rows on %d ranks, %llu published in %llu classes; %llu tree levels reduced "
                    "(%llu bytes), %llu rows shipped\n",
                    (unsigned long long)tot.rows_in, c.size, (unsigned long long)tot.rows_out,
                    (unsigned long long)tot.classes, (unsigned long long)tot.levels, (unsigned long long)red.bytes,
                    (unsigned long long)tot.rows_shipped);
            if (c.job->report && all_ok &&
                write_report(&c, c.job->report, &tot, per, per + c.size, times, red.bytes, finish_rows) != 0) {
                fprintf(stderr, "anonkit-mpi: %s: cannot write the report\n", c.job->report);
                rc = ANONKIT_E_IO;
            }
        }
        free(per);
        free(times);
    }
done:
    if (rc < 0) {
        publish_stream_free(ps);
        if (out_opened) mp_out_abort(&c, &out);
        if (c.rank == 0 && c.err.code < 0) {
            char msg[2048];
            ak_err_format(&c.err, msg, sizeof msg);
            fprintf(stderr, "anonkit-mpi: %s\n", msg);
        }
    }
    mp_out_close(&out);
    strbuf_free(&rules_mine);
    free(qi);
    mdr_dist_result_free(&res);
    mp_rows_free(&rows);
    if (c.job) c.job->model.ref = NULL;
    model_ref_free(ref);
    anonkit_job_free(c.job);
    MPI_Finalize();
    if (rc == ANONKIT_OK) rc = rc_report;
    if (rc == ANONKIT_OK) return 0;
    return rc == ANONKIT_E_INTERNAL || rc == ANONKIT_E_NOMEM || rc == ANONKIT_E_IO ? 2 : 1;
}
