/* rothko_s.c — Rothko-S, sampling-based out-of-core Mondrian ([LeFevre07] §3):
 * reservoir samples of a partition, trees grown on them by the in-memory
 * Mondrian's growth phase, repartitioning with population statistics,
 * pruning, and the partitions that admit no high-confidence split. */
#include "algo/mondrian/rothko_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/compare.h"

/* ------------------------------------------------------------ Rothko-S ([LeFevre07] §3) */

/* Per column of p (d QIs, sensitive, class), rk_ranked_later, into provisional. */
static void sample_provisional(const rk *r, const rk_part *p, uint8_t *provisional)
{
    memset(provisional, 0, (size_t)r->d + 2);
    for (uint32_t q = 0; q < r->d; q++) provisional[q] = (uint8_t)rk_ranked_later(r, p, q);
}

/* Ranks the n sampled codes of the QIs left provisional by sample_take. */
static void sample_rank(const rk *r, const uint8_t *provisional, rk_load *l, size_t n)
{
    for (uint32_t q = 0; q < r->d; q++)
        if (provisional[q]) table_numeric_ranks(r->t, q, l->codes[q], n);
}

/* Decodes the tuple of p at raw, the reader's row `row`, into slot `slot`
 * of the sample l: final codes, but numeric QIs with provisional[q] left
 * provisional (sample_scan ranks them at the end). */
static void sample_take(const rk *r, const rk_part *p, const rk_layout *lay, const uint8_t *raw, uint64_t row,
                        const uint8_t *provisional, rk_load *l, size_t slot)
{
    for (uint32_t c = 0; c < r->d + 2; c++) {
        uint32_t v;
        rk_layout_column(lay, c, raw, 1, &v);
        if (p->provisional) rk_root_column(r, c, &v, 1, row, !provisional[c]);
        if (c < r->d)
            l->codes[c][slot] = v;
        else if (c == r->d)
            l->sens[slot] = v;
        else
            l->cls[slot] = v;
    }
    load_values(r, lay, l, slot, raw);
}

/* A simple random sample without replacement of up to `want` of p's rows
 * into l (reservoir sampling, [LeFevre07] §3), in one scan of p. *got receives the
 * rows sampled. Which rows the reservoir ends with depends only on p's row
 * count and the generator, so Algorithm R is played on row numbers first and
 * the scan then decodes just the rows it kept, in file order (rather than
 * every row the reservoir takes on the way, about want * ln(rows / want)
 * more). */
static int sample_scan(rk *r, rk_part *p, size_t want, rk_load *l, size_t *got, ak_error *err)
{
    const uint32_t d = r->d;
    memset(l, 0, sizeof *l);
    AK_CHECK(rk_load_alloc(r, l, want, 0, err));
    const size_t n = p->rows < want ? (size_t)p->rows : want;
    uint64_t *pick = malloc((n ? n : 1) * sizeof *pick);
    if (!pick) return ak_err_nomem(err);
    /* Algorithm R: row i replaces a uniform slot with probability want / (i + 1) */
    for (size_t i = 0; i < n; i++) pick[i] = i;
    for (uint64_t i = n; i < p->rows; i++) {
        const uint64_t j = ak_rng_below(&r->rng, i + 1);
        if (j < want) pick[j] = i;
    }
    qsort(pick, n, sizeof *pick, ak_cmp_u64);
    rk_reader rd;
    int rc = rk_reader_open(r, &rd, p, 0, err);
    uint8_t provisional[d + 2]; /* ranked together at the end */
    sample_provisional(r, p, provisional);
    const size_t width = rc == ANONKIT_OK ? rd.lay->width : 1;
    size_t next = 0;
    while (rc == ANONKIT_OK && next < n) {
        const uint8_t *raw;
        size_t batch;
        const int more = spill_read_records(&rd.tuples, width, r->block / width + 1, &raw, &batch, err);
        if (more <= 0) {
            rc = more < 0 ? more : ak_err_set(err, ANONKIT_E_INTERNAL, NULL, 0, 0, "a partition file ends early");
            break;
        }
        for (; next < n && pick[next] < rd.row + batch; next++)
            sample_take(r, p, rd.lay, raw + (pick[next] - rd.row) * width, pick[next], provisional, l, next);
        rd.row += batch;
    }
    free(pick);
    *got = n;
    if (rc == ANONKIT_OK) sample_rank(r, provisional, l, n);
    rk_reader_close(&rd);
    r->stats->scans++;
    return rc;
}

/* The root's sample from the first scan's stores (first_sample_start): its
 * `want` rows of least priority, which are a simple random sample without
 * replacement of the table's rows whichever way the input was cut. Returns 1
 * with them in l (in file order, *got = want), or 0 when the stores do not
 * hold them all (then nothing is allocated). */
static int sample_first_scan(rk *r, rk_part *p, size_t want, rk_load *l, size_t *got, ak_error *err)
{
    const uint32_t d = r->d;
    const uint64_t base[2] = {0, r->t->split.first_row}; /* the second piece's rows follow the first's */
    memset(l, 0, sizeof *l);
    bottomk_key cut;
    const int held = bottomk_cut(r->first_sample, base, r->first_sample_parts, want, &cut, err);
    if (held <= 0) return held;
    for (unsigned i = 0; i < r->first_sample_parts; i++) /* the rows past the cut make room for the sample */
        bottomk_trim(&r->first_sample[i], base[i], cut);
    AK_CHECK(rk_load_alloc(r, l, want, 0, err));
    rk_layout lay;
    memset(&lay, 0, sizeof lay);
    AK_CHECK(rk_layout_wide(r, &lay, err)); /* (one allocation: nothing to free when it fails) */
    uint8_t provisional[d + 2]; /* ranked together at the end */
    sample_provisional(r, p, provisional);
    size_t n = 0;
    for (unsigned i = 0; i < r->first_sample_parts; i++)
        for (size_t j = 0; j < r->first_sample[i].n; j++) {
            bottomk_key key;
            const uint8_t *tuple = bottomk_record(&r->first_sample[i], j, &key);
            key.seq += base[i];
            if (!bottomk_key_less(cut, key)) sample_take(r, p, &lay, tuple, key.seq, provisional, l, n++);
        }
    rk_layout_free(&lay);
    sample_rank(r, provisional, l, n);
    *got = n;
    return 1;
}

/* One scan of p for the box of its rows: per QI the least and greatest code
 * they hold, into box_lo and box_hi. */
static int part_box(rk *r, rk_part *p, uint32_t *box_lo, uint32_t *box_hi, ak_error *err)
{
    const uint32_t d = r->d;
    for (uint32_t q = 0; q < d; q++) box_lo[q] = UINT32_MAX, box_hi[q] = 0;
    uint8_t need[d + 2];
    memset(need, 1, d);
    need[d] = need[d + 1] = 0;
    rk_reader rd;
    rk_batch b = {0};
    int rc = rk_reader_open(r, &rd, p, 0, err);
    if (rc == ANONKIT_OK) rc = rk_batch_init(r, &b, err);
    for (uint32_t q = 0; rc == ANONKIT_OK && q < d; q++) b.provisional[q] = (uint8_t)rk_ranked_later(r, p, q); /* extremes only */
    uint64_t seen = 0;
    while (rc == ANONKIT_OK) {
        const uint8_t *raw;
        size_t n;
        const int more = spill_read_records(&rd.tuples, rd.lay->width, b.cap, &raw, &n, err);
        if (more <= 0) {
            rc = more;
            break;
        }
        rk_batch_decode(r, p, &rd, raw, n, need, &b);
        for (uint32_t q = 0; q < d; q++) ak_min_max(b.code + (size_t)q * b.stride, n, &box_lo[q], &box_hi[q]);
        seen += n;
    }
    for (uint32_t q = 0; rc == ANONKIT_OK && seen && q < d; q++)
        if (b.provisional[q]) {
            box_lo[q] = table_numeric_rank(r->t, q, box_lo[q]);
            box_hi[q] = table_numeric_rank(r->t, q, box_hi[q]);
        }
    rk_batch_free(&b);
    rk_reader_close(&rd);
    r->stats->scans++;
    return rc;
}

/* Rebuilds the tree grown on a sample as an rk_tree whose nodes are in
 * breadth-first order with each node's children contiguous and ordered by
 * their region in the QI split on, which is what route_batch() needs. */
static int tree_from_growth(rk *r, const mdr_tree *g, rk_tree *tr, ak_error *err)
{
    const size_t count = g->count;
    /* each node's children, bucketed by parent: kids[first[i] .. first[i] + nkids[i]) */
    size_t *nkids = calloc(count + 1, sizeof *nkids), *first = calloc(count + 1, sizeof *first);
    size_t *fill = malloc((count + 1) * sizeof *fill);
    uint32_t *kids = malloc((count ? count : 1) * sizeof *kids), *queue = malloc((count ? count : 1) * sizeof *queue);
    int rc = nkids && first && fill && kids && queue ? ANONKIT_OK : ak_err_nomem(err);
    for (size_t i = 1; rc == ANONKIT_OK && i < count; i++) nkids[g->nodes[i].parent]++;
    for (size_t i = 0; rc == ANONKIT_OK && i < count; i++) first[i + 1] = first[i] + nkids[i];
    if (rc == ANONKIT_OK) memcpy(fill, first, (count + 1) * sizeof *fill);
    for (size_t i = 1; rc == ANONKIT_OK && i < count; i++) kids[fill[g->nodes[i].parent]++] = (uint32_t)i;
    if (rc == ANONKIT_OK)
        rc = rk_tree_add(r, tr, mdr_tree_rlo(g, 0), mdr_tree_rhi(g, 0), NULL, NULL, 0, g->nodes[0].median_only, err);
    size_t head = 0, tail = 0;
    if (rc == ANONKIT_OK) queue[tail++] = 0;
    while (rc == ANONKIT_OK && head < tail) {
        const uint32_t gi = queue[head];
        const size_t at = head++; /* its index in tr: nodes enter tr in queue order */
        const mdr_tree_node *gx = &g->nodes[gi];
        if (gx->split_q == UINT32_MAX || !nkids[gi]) {
            tr->nodes[at].kind = RK_LEAF;
            continue;
        }
        uint32_t *ks = kids + first[gi];
        const uint32_t q = gx->split_q;
        for (size_t a = 1; a < nkids[gi]; a++) /* insertion sort by region start (few children) */
            for (size_t b = a; b > 0 && mdr_tree_rlo(g, ks[b - 1])[q] > mdr_tree_rlo(g, ks[b])[q]; b--) {
                const uint32_t tmp = ks[b];
                ks[b] = ks[b - 1];
                ks[b - 1] = tmp;
            }
        const size_t child0 = tr->count;
        for (size_t c = 0; rc == ANONKIT_OK && c < nkids[gi]; c++) {
            rc = rk_tree_add(r, tr, mdr_tree_rlo(g, ks[c]), mdr_tree_rhi(g, ks[c]), NULL, NULL, 0,
                          g->nodes[ks[c]].median_only, err);
            queue[tail++] = ks[c];
        }
        rk_node *x = &tr->nodes[at];
        x->kind = RK_INNER;
        x->q = q;
        x->first_child = child0;
        x->nchildren = tr->count - child0;
    }
    free(nkids);
    free(first);
    free(fill);
    free(kids);
    free(queue);
    return rc;
}

/* Whether the population of node x (its statistics after repartitioning)
 * satisfies the model. */
static int node_holds(rk *r, const rk_node *x)
{
    size_t ncounts = 0;
    if (r->need_hist)
        for (uint32_t v = 0; v < r->sdomain; v++)
            if (x->shist[v]) r->counts[ncounts++] = x->shist[v];
    if (!model_holds(r->m, x->part.rows, r->counts, ncounts, r->counts_scratch) ||
        !model_variance_holds(r->m, &x->mom, r->values_exact))
        return 0;
    if (!r->work) return 1;
    size_t n = 0;
    for (uint32_t v = 0; v < r->sdomain; v++)
        if (x->shist[v]) {
            r->codes[n] = v;
            r->counts[n++] = x->shist[v];
        }
    return model_dist_holds(&r->m->dist, r->m->ref, r->work, x->part.rows, r->codes, r->counts, n);
}

/* Appends the rows of every leaf under node x, left to right, to one new
 * partition in 4-byte codes (the merge of [LeFevre07] Figure 4). */
static int merge_subtree(rk *r, rk_tree *tr, size_t x, rk_part *out, ak_error *err)
{
    spill_writer wt = {0}, wp = {0};
    int rc = rk_part_create(r, out, &wt, &wp, err);
    size_t *stack = rc == ANONKIT_OK ? malloc((tr->count + 1) * sizeof *stack) : NULL;
    if (rc == ANONKIT_OK && !stack) rc = ak_err_nomem(err);
    size_t depth = 0;
    if (rc == ANONKIT_OK) stack[depth++] = x;
    while (rc == ANONKIT_OK && depth) {
        rk_node *y = &tr->nodes[stack[--depth]];
        if (y->kind == RK_INNER) {
            for (size_t c = y->nchildren; c-- > 0;) stack[depth++] = y->first_child + c;
            continue;
        }
        rk_reader rd;
        rc = rk_reader_open(r, &rd, &y->part, 1, err);
        uint32_t code[r->d + 2];
        const uint8_t *pay = NULL;
        size_t paylen = 0;
        while (rc == ANONKIT_OK) {
            const int more = rk_read_row(r, &rd, &y->part, code, &pay, &paylen, err);
            if (more <= 0) {
                rc = more;
                break;
            }
            uint8_t wide[r->width];
            for (uint32_t c = 0; c < r->d + 2; c++) tuple_store_u32(wide + 4 * c, code[c]);
            memcpy(wide + 4 * (r->d + 2), rd.raw + rd.lay->extra_at, r->extra);
            rc = spill_write(&wt, wide, r->width, err);
            if (rc == ANONKIT_OK && r->ncopied) {
                uint8_t head[4];
                tuple_store_u32(head, (uint32_t)(paylen - 4 * (size_t)r->ncopied));
                rc = spill_write(&wp, head, 4, err);
                if (rc == ANONKIT_OK) rc = spill_write(&wp, pay, paylen, err);
            }
            out->rows++;
        }
        rk_reader_close(&rd);
        rk_part_release(r, &y->part);
    }
    if (rc == ANONKIT_OK) rc = spill_writer_flush(&wt, err);
    if (rc == ANONKIT_OK) rc = spill_writer_flush(&wp, err);
    spill_writer_free(&wt);
    spill_writer_free(&wp);
    free(stack);
    return rc;
}


/* A partition larger than the sample that admits no high-confidence split, or
 * whose splits were all undone: Rothko-T finishes it exactly where it can
 * (Median or InfoGain under k-anonymity and l-diversity, [LeFevre07] footnote 9);
 * otherwise it is published as one class, possibly non-minimal ([LeFevre07] §3.2). */
static int finish_unsplit(rk *r, rk_part *p, const uint32_t *rlo, const uint32_t *rhi, int median_only,
                          ak_error *err)
{
    r->stats->no_confident_split++;
    if (r->o->split != MDR_SPLIT_REGRESSION && !r->need_mom) {
        r->stats->finished_by_rothko_t++;
        return rk_process_partition(r, p, rlo, rhi, median_only, err);
    }
    r->stats->non_minimal++;
    const uint32_t d = r->d;
    uint32_t box_lo[d ? d : 1], box_hi[d ? d : 1];
    int rc = part_box(r, p, box_lo, box_hi, err);
    if (rc == ANONKIT_OK) rc = rk_finish_big_class(r, p, rlo, rhi, box_lo, box_hi, err);
    rk_part_release(r, p);
    return rc;
}

/* Processes one disk-resident partition as [LeFevre07] §3 describes: a partition of
 * at most n rows (the sample size) is the sample itself and is finished by
 * the in-memory Mondrian; a larger one is sampled, a tree is grown on the
 * sample with the hypothesis tests (growth phase), the partition is divided
 * across the tree's leaves while each node's population statistics are
 * gathered (repartitioning), every node that violates the model has the
 * partitions under its parent merged (pruning), and each resulting partition
 * is processed in turn, left to right. */
int rk_process_sampled(rk *r, rk_part *p, const uint32_t *rlo, const uint32_t *rhi, int median_only,
                       ak_error *err)
{
    if (p->rows <= r->sample_rows) return rk_finish_in_memory(r, p, rlo, rhi, median_only, err);
    const uint32_t d = r->d;
    rk_load l;
    size_t n = 0;
    mdr_tree grown;
    memset(&grown, 0, sizeof grown);
    rk_tree tr = {0};
    partition classes;
    memset(&classes, 0, sizeof classes);
    size_t *emit = NULL, *stack = NULL;
    rk_part *merged = NULL;
    size_t nemit = 0;
    /* the sample */
    double mark = ak_seconds();
    int rc = ANONKIT_OK, drawn = 0;
    if (p == &r->root && r->first_sample_parts) {
        drawn = sample_first_scan(r, p, (size_t)r->sample_rows, &l, &n, err);
        if (drawn < 0) rc = drawn;
        r->stats->sampled_in_first_scan = drawn == 1;
        rk_first_sample_free(r);
    }
    if (rc == ANONKIT_OK && !drawn) rc = sample_scan(r, p, (size_t)r->sample_rows, &l, &n, err);
    r->stats->sample_seconds += ak_seconds() - mark;
    mark = ak_seconds();
    /* growth phase */
    if (rc == ANONKIT_OK) {
        sample_test st;
        rc = sample_test_init(&st, r->m, r->o->test, r->o->alpha > 0 ? r->o->alpha : 0.05, p->rows, n, err);
        /* without a depth limit, nodes whose estimated population fits in memory are not split further */
        const mdr_grow g = {.test = &st,
                            .stop_rows = r->o->growth_depth ? 0
                                                            : (uint64_t)(0.9 * (double)r->sample_rows * (double)n /
                                                                         (double)p->rows),
                            .max_depth = r->o->growth_depth,
                            .max_leaves = r->max_leaves,
                            .tree = &grown};
        table view;
        table_qi qi[d ? d : 1];
        rk_make_view(r, &l, n, &view, qi);
        const mdr_options mo = {.threads = 1, .split = r->o->split, .min_gain = r->o->min_gain, .root_rlo = rlo,
                                .root_rhi = rhi, .root_median_only = median_only, .grow = &g};
        if (rc == ANONKIT_OK) rc = partition_init(&classes, n, d, err);
        if (rc == ANONKIT_OK) rc = mdr_run_with(&view, r->m, &mo, &classes, err);
        r->stats->growth_phases++;
        sample_test_free(&st);
    }
    partition_free(&classes);
    rk_load_free(r, &l);
    r->stats->growth_seconds += ak_seconds() - mark;
    if (rc == ANONKIT_OK && grown.count <= 1) { /* no high-confidence split */
        mdr_tree_free(&grown);
        return finish_unsplit(r, p, rlo, rhi, median_only, err);
    }
    if (rc == ANONKIT_OK) rc = tree_from_growth(r, &grown, &tr, err);
    mdr_tree_free(&grown);
    /* repartitioning, with each node's population statistics */
    for (size_t i = 0; rc == ANONKIT_OK && i < tr.count; i++) {
        rk_node *x = &tr.nodes[i];
        x->track = 1;
        if (r->need_hist && !(x->shist = calloc(r->sdomain ? r->sdomain : 1, sizeof *x->shist))) rc = ak_err_nomem(err);
    }
    if (rc == ANONKIT_OK) rc = rk_repartition(r, &tr, p, err);
    /* population statistics of the inner nodes, children first */
    for (size_t i = tr.count; rc == ANONKIT_OK && i-- > 0;) {
        rk_node *x = &tr.nodes[i];
        if (x->kind != RK_INNER) continue;
        for (size_t c = 0; c < x->nchildren; c++) {
            const rk_node *y = &tr.nodes[x->first_child + c];
            x->part.rows += y->part.rows;
            rk_moments_add_into(&x->mom, &y->mom);
            if (r->need_hist)
                for (uint32_t v = 0; v < r->sdomain; v++) x->shist[v] += y->shist[v];
        }
    }
    /* pruning, top down: a node with a violating child becomes one partition */
    if (rc == ANONKIT_OK) {
        emit = malloc((tr.count + 1) * sizeof *emit);
        stack = malloc((tr.count + 1) * sizeof *stack);
        merged = calloc(tr.count + 1, sizeof *merged);
        if (!emit || !stack || !merged) rc = ak_err_nomem(err);
    }
    for (size_t i = 0; rc == ANONKIT_OK && i <= tr.count; i++) merged[i].tuples.fd = merged[i].payload.fd = -1;
    size_t depth = 0;
    if (rc == ANONKIT_OK) stack[depth++] = 0;
    while (rc == ANONKIT_OK && depth) {
        const size_t i = stack[--depth];
        const rk_node *x = &tr.nodes[i];
        if (x->kind != RK_INNER) {
            emit[nemit++] = i;
            continue;
        }
        int violated = 0;
        for (size_t c = 0; c < x->nchildren && !violated; c++) violated = !node_holds(r, &tr.nodes[x->first_child + c]);
        if (!violated) {
            for (size_t c = x->nchildren; c-- > 0;) stack[depth++] = x->first_child + c;
            continue;
        }
        /* every node below x is undone */
        size_t below = 0, sub = 0;
        size_t *sub_stack = stack + depth; /* (free space above the stack) */
        sub_stack[sub++] = i;
        while (sub) {
            const rk_node *y = &tr.nodes[sub_stack[--sub]];
            if (y->kind != RK_INNER) continue;
            for (size_t c = 0; c < y->nchildren; c++) sub_stack[sub++] = y->first_child + c, below++;
        }
        r->stats->pruned_nodes += below;
        rc = merge_subtree(r, &tr, i, &merged[i], err);
        emit[nemit++] = i;
    }
    /* recursion on each resulting partition, left to right */
    if (rc == ANONKIT_OK && nemit == 1 && emit[0] == 0) { /* every split undone: stop growing here */
        uint32_t region[2 * (d ? d : 1)];
        memcpy(region, tr.nodes[0].rlo, d * sizeof *region);
        memcpy(region + d, tr.nodes[0].rhi, d * sizeof *region);
        rc = finish_unsplit(r, &merged[0], region, region + d, tr.nodes[0].median_only, err);
    } else {
        for (size_t e = 0; rc == ANONKIT_OK && e < nemit; e++) {
            rk_node *x = &tr.nodes[emit[e]];
            rk_part *part = x->kind == RK_INNER ? &merged[emit[e]] : &x->part;
            part->provisional = 0;
            rc = rk_process_sampled(r, part, x->rlo, x->rhi, x->median_only, err);
            rk_part_release(r, part);
        }
    }
    for (size_t i = 0; merged && i <= tr.count; i++) rk_part_release(r, &merged[i]);
    free(merged);
    free(emit);
    free(stack);
    rk_tree_free(r, &tr);
    return rc;
}

/* repartitions_S(N) of [LeFevre07] §4: how often Rothko-S repartitions the whole
 * table under k-anonymity, with samples of tm rows and balanced binary splits. */
uint64_t rothko_s_repartitions(uint64_t rows, uint64_t tm, uint64_t k, double alpha)
{
    uint64_t count = 0;
    double N = (double)rows;
    const double z = sample_test_z(alpha / 2);
    while (N > (double)tm) {
        const double p0 = (double)k / N, n = (double)tm < N ? (double)tm : N;
        const double bound = z * sqrt(p0 * (1 - p0) / n * ((N - n) / (N - 1)));
        int levels = 0;
        while (levels < 64 && ldexp(1.0, -(levels + 1)) - p0 >= bound) levels++;
        if (levels == 0) break; /* non-minimal partitioning */
        count++;
        N = N / ldexp(1.0, levels);
    }
    return count;
}

/* Fails with ANONKIT_E_INELIGIBLE unless the whole table (its sensitive
 * statistics gathered by the first scan) satisfies the model. */
int rk_check_whole(rk *r, uint64_t rows, ak_error *err)
{
    size_t ncounts = 0;
    for (size_t v = 0; r->sens_count && v < r->sdomain; v++)
        if (r->sens_count[v]) r->counts[ncounts++] = r->sens_count[v];
    char why[256] = "";
    int holds = model_explain(r->m, rows, r->counts, ncounts, r->counts_scratch, why, sizeof why);
    if (holds && r->work) {
        size_t n = 0;
        for (uint32_t v = 0; v < r->sdomain; v++)
            if (r->sens_count[v]) {
                r->codes[n] = v;
                r->counts[n++] = r->sens_count[v];
            }
        holds = model_dist_explain(&r->m->dist, r->m->ref, r->work, rows, r->codes, r->counts, n, why, sizeof why);
    }
    if (!holds)
        return ak_err_set(err, ANONKIT_E_INELIGIBLE, NULL, 0, 0,
                          "the whole table does not satisfy the privacy model (%s), so no anonymization can", why);
    if (!model_variance_holds(r->m, &r->all_mom, r->values_exact))
        return ak_err_set(err, ANONKIT_E_INELIGIBLE, NULL, 0, 0,
                          "the whole table does not satisfy the privacy model (variance of the sensitive values %.6Lg "
                          "< %g), so no anonymization can",
                          model_moments_variance(&r->all_mom, r->values_exact), r->m->variance);
    return ANONKIT_OK;
}
