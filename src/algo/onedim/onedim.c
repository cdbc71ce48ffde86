/* onedim.c — the 1-D anonymization pipeline of [Ghinita07] §5: map every row to its
 * 1-D key once (mapping.c), sort the keys (src/io/extsort: in memory, or by
 * external merge sort within the memory budget), partition the sorted rows
 * (kanon.c for k-anonymity, §3 and §5.1; ldiv.c for l-diversity, §4.2 and
 * §5.2) and publish every group as its bounding box (local recoding: boxes
 * may overlap, §2). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "algo/onedim/mapping.h"
#include "common/hugemem.h"
#include "common/parallel.h"
#include "io/extsort.h"
#include "common/progress.h"

int hil_parse_algorithm(const char *name, hil_options *o)
{
    static const struct {
        const char *name;
        hil_mapping mapping;
        int fast;
    } names[] = {{"hilbert", HIL_MAP_HILBERT, 0},
                 {"hilbert-fast", HIL_MAP_HILBERT, 1},
                 {"idistance", HIL_MAP_IDISTANCE, 0},
                 {"idistance-fast", HIL_MAP_IDISTANCE, 1}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(name, names[i].name)) {
            if (o) {
                o->mapping = names[i].mapping;
                o->fast = names[i].fast;
            }
            return 0;
        }
    return -1;
}

/* Bits to number rows 0 .. n-1 (at least 1). */
static unsigned row_bits(size_t n)
{
    unsigned b = 1;
    while (b < 32 && ((size_t)1 << b) < n) b++;
    return b;
}

/* The sort records of rows from .. to-1 (see map_and_sort), written in
 * place: rows[(row - first) * words ..]. */
typedef struct key_range {
    const hil_mapper *mp;
    const table *t;
    const hil_packing *pk;
    uint64_t *out;        /* the record of row `from` */
    size_t words, kw;     /* words per record, of which the key (and row) */
    size_t codes_at;      /* the packed codes' first word in a record */
    int row_in_key;
    unsigned row_shift;   /* the row's lowest bit in the key's last word, when row_in_key */
    size_t from, to;
} key_range;

static void key_records(const key_range *r)
{
    enum { BATCH = 64 };
    for (size_t row = r->from; row < r->to; row += BATCH) {
        const size_t count = r->to - row < BATCH ? r->to - row : BATCH;
        uint64_t *out = r->out + (row - r->from) * r->words;
        hil_mapper_keys(r->mp, r->t, row, count, out, r->words);
        for (size_t j = 0; j < count; j++) {
            uint64_t *rec = out + j * r->words;
            if (r->row_in_key) rec[r->kw - 1] |= (uint64_t)(row + j) << r->row_shift;
            else rec[r->kw - 1] = row + j;
        }
        if (r->pk) hil_pack_rows(r->pk, r->t, row, count, out + r->codes_at, r->words);
    }
}

static void *key_records_main(void *arg)
{
    key_records(arg);
    return NULL;
}

/* key_records over rows 0 .. n-1 into all, split into `threads` ranges run
 * at once (a range whose thread cannot be started runs in the caller). */
static void key_records_parallel(key_range base, size_t n, uint64_t *all, unsigned threads)
{
    threads = ak_parts(n, threads, 4096);
    key_range part[AK_MAX_PARTS];
    for (unsigned j = 0; j < threads; j++) {
        part[j] = base;
        part[j].from = n * j / threads / 64 * 64; /* batches of the same rows as one range */
        part[j].to = j + 1 == threads ? n : n * (j + 1) / threads / 64 * 64;
        part[j].out = all + part[j].from * base.words;
    }
    ak_run_parts(part, sizeof *part, threads, key_records_main);
}

/* What the sorted records give for each 1-D position: its row, and (when
 * gap is not NULL) the key distance from the position before. */
typedef struct sorted_out {
    const hil_mapper *mp;
    size_t kw;          /* words of key (and row) */
    uint64_t below_key; /* the bits of the key's last word below the key: row and codes, when row_in_key */
    unsigned row_shift; /* the row's lowest bit there */
    int row_in_key;
    uint32_t *order;
    double *gap;
} sorted_out;

/* Position i's record r (prev: the record at i-1, NULL at 0) into order[i]
 * and gap[i]. */
static inline void take_sorted(const sorted_out *so, size_t i, const uint64_t *r, const uint64_t *prev)
{
    const size_t kw = so->kw;
    so->order[i] = (uint32_t)(so->row_in_key ? (r[kw - 1] & so->below_key) >> so->row_shift : r[kw - 1]);
    if (!so->gap) return;
    if (!prev) {
        so->gap[i] = 0;
        return;
    }
    uint64_t a[kw], b[kw]; /* the keys alone */
    memcpy(a, prev, kw * sizeof *a);
    memcpy(b, r, kw * sizeof *b);
    a[kw - 1] &= ~so->below_key;
    b[kw - 1] &= ~so->below_key;
    so->gap[i] = hil_mapper_gap(so->mp, a, b);
}

/* take_sorted over positions from .. to-1 of the sorted array. */
typedef struct sorted_range {
    const sorted_out *so;
    const uint64_t *all;
    size_t words, from, to;
} sorted_range;

static void *take_sorted_main(void *arg)
{
    const sorted_range *r = arg;
    for (size_t i = r->from; i < r->to; i++)
        take_sorted(r->so, i, r->all + i * r->words, i ? r->all + (i - 1) * r->words : NULL);
    return NULL;
}

/* take_sorted over all n positions of the sorted array, in `threads` ranges
 * at once. */
static void take_sorted_parallel(const sorted_out *so, const uint64_t *all, size_t words, size_t n, unsigned threads)
{
    threads = ak_parts(n, threads, 4096);
    sorted_range part[AK_MAX_PARTS];
    for (unsigned j = 0; j < threads; j++) part[j] = (sorted_range){so, all, words, n * j / threads, n * (j + 1) / threads};
    ak_run_parts(part, sizeof *part, threads, take_sorted_main);
}

/* Maps and sorts: order[i] is the row at 1-D position i, gap[i] (when gap is
 * not NULL) the key distance from position i-1 to i.
 *
 * A sort record is the row's key followed by its row number, a total order.
 * When the key leaves at least row_bits(n) low bits of its last word unused
 * (a Hilbert key of d * bits bits is left-aligned), the row number goes
 * right below the key instead of into a word of its own: the same order on
 * fewer bytes. When pk is not NULL it is set up here and the row's packed QI
 * codes follow, from the bits left below the row on (they never decide the
 * order: key and row already do), and come back in 1-D order: position i's
 * at (*in)[i * *stride ..], in memory that *hold owns (to be freed).
 * Without a memory budget the records are written into one array, sorted
 * there and read back into order and gap, each step on o->threads threads
 * (each on its own rows or buckets); with one they stream through the
 * external sort. */
static int map_and_sort(const table *t, const hil_options *o, hil_packing *pk, uint32_t *order, double *gap,
                        uint64_t **hold, const uint64_t **in, size_t *stride, hil_stats *stats, ak_error *err)
{
    hil_mapper mp;
    AK_CHECK(hil_mapper_init(&mp, t, o, err));
    const size_t n = t->nrows;
    const unsigned rb = row_bits(n);
    const unsigned used = mp.kind == HIL_MAP_HILBERT ? mp.d * mp.bits : 128;
    const int row_in_key = (size_t)mp.words * 64 >= (size_t)used + rb;
    const unsigned row_shift = row_in_key ? (unsigned)((size_t)mp.words * 64 - used - rb) : 0; /* < 64: the key has a bit in its last word */
    const uint64_t below_key = row_in_key ? ((uint64_t)1 << (row_shift + rb)) - 1 : 0;
    int rc = pk ? hil_pack_init(pk, t, row_shift, err) : ANONKIT_OK;
    if (rc < 0) {
        hil_mapper_free(&mp);
        return rc;
    }
    const size_t kw = (size_t)mp.words + (row_in_key ? 0 : 1);
    const size_t shared = pk && pk->first_bits ? 1 : 0; /* the key's last word holds codes too */
    const size_t cw = pk ? pk->words : 0, words = kw + cw - shared;
    stats->key_bits = used;
    stats->centers = mp.ncenters;
    stats->kmeans_iterations = mp.kmeans_iterations;
    stats->kmeans_searches = mp.kmeans_searches;
    enum { BATCH = 64 };
    const int in_memory = !o->memory;
    uint64_t *all = in_memory ? ak_huge_malloc((n ? n : 1) * words * sizeof *all) : NULL;
    uint64_t *keys = in_memory ? NULL : malloc(BATCH * words * sizeof *keys);
    uint64_t *codes = pk && !in_memory ? malloc((n ? n : 1) * cw * sizeof *codes) : NULL;
    uint64_t *prev = malloc(kw * sizeof *prev);
    extsort *sorter = NULL;
    rc = (all || keys) && (codes || !pk || in_memory) && prev ? ANONKIT_OK : ak_err_nomem(err);
    if (rc >= 0 && !in_memory) rc = extsort_open(&sorter, words, o->memory, o->tmpdir, err);
    const key_range whole = {&mp, t, pk, all, words, kw, kw - shared, row_in_key, row_shift, 0, n};
    if (rc >= 0 && in_memory) key_records_parallel(whole, n, all, o->threads);
    for (size_t row = 0; rc >= 0 && !in_memory && row < n; row += BATCH) {
        key_range r = whole;
        r.out = keys;
        r.from = row;
        r.to = n - row < BATCH ? n : row + BATCH;
        key_records(&r);
        for (size_t j = 0; rc >= 0 && j < r.to - r.from; j++) rc = extsort_add(sorter, keys + j * words, err);
        if (rc >= 0) rc = ak_progress_poll(o->progress, err);
    }
    if (rc >= 0) rc = in_memory ? extsort_sort_array(all, n, words, o->threads, err) : extsort_finish(sorter, err);
    const sorted_out so = {&mp, kw, below_key, row_shift, row_in_key, order, gap};
    if (rc >= 0 && in_memory) take_sorted_parallel(&so, all, words, n, o->threads);
    for (size_t i = 0; rc >= 0 && !in_memory && i < n; i++) {
        const uint64_t *r;
        if ((rc = extsort_next(sorter, &r, err)) <= 0) {
            if (rc == 0)
                rc = ak_err_set(err, ANONKIT_E_INTERNAL, NULL, 0, 0, "the sort returned %zu of %zu rows", i, n);
            break;
        }
        if (codes) memcpy(codes + i * cw, r + kw - shared, cw * sizeof *codes);
        take_sorted(&so, i, r, i ? prev : NULL);
        memcpy(prev, r, kw * sizeof *prev);
    }
    if (rc >= 0) {
        if (sorter) {
            extsort_stats es;
            extsort_get_stats(sorter, &es);
            stats->sort_runs = es.runs;
            stats->sort_merge_passes = es.merge_passes;
            stats->blocks_written = es.blocks_written;
            stats->blocks_read = es.blocks_read;
            stats->block_size = es.block_size;
        }
        rc = ANONKIT_OK;
    }
    if (rc >= 0 && pk) {
        *hold = in_memory ? all : codes;
        *in = in_memory ? all + kw - shared : codes;
        *stride = in_memory ? words : cw;
        all = codes = NULL;
    }
    extsort_free(sorter);
    free(all);
    free(codes);
    free(keys);
    free(prev);
    hil_mapper_free(&mp);
    return rc;
}

/* The boxes of the classes over QIs q_from .. q_to-1: lo and hi hold
 * nclasses * d codes, class c's QI q at c * d + q. */
typedef struct class_boxes {
    const table *t;
    const uint32_t *class_of;
    size_t nclasses;
    uint32_t *lo, *hi;
    uint32_t q_from, q_to;
} class_boxes;

/* Reads the QI columns front to back (the classes' sides at random, but
 * few). */
static void *class_boxes_main(void *arg)
{
    const class_boxes *b = arg;
    const uint32_t d = b->t->nqi;
    for (uint32_t q = b->q_from; q < b->q_to; q++) {
        for (size_t c = 0; c < b->nclasses; c++) b->lo[c * d + q] = UINT32_MAX, b->hi[c * d + q] = 0;
        const uint32_t *codes = b->t->qi[q].codes;
        for (size_t row = 0; row < b->t->nrows; row++) {
            const size_t at = (size_t)b->class_of[row] * d + q;
            const uint32_t v = codes[row];
            if (v < b->lo[at]) b->lo[at] = v;
            if (v > b->hi[at]) b->hi[at] = v;
        }
    }
    return NULL;
}

/* class_boxes over all QIs, shared by up to `threads` threads. */
static void class_boxes_parallel(const table *t, const uint32_t *class_of, size_t nclasses, uint32_t *lo, uint32_t *hi,
                                 unsigned threads)
{
    const uint32_t d = t->nqi;
    if (threads > d) threads = d; /* a QI per part at least */
    threads = ak_parts(d, t->nrows < 4096 ? 1 : threads, 1);
    class_boxes part[AK_MAX_PARTS];
    for (unsigned j = 0; j < threads; j++)
        part[j] = (class_boxes){t, class_of, nclasses, lo, hi, (uint32_t)((uint64_t)d * j / threads),
                                (uint32_t)((uint64_t)d * (j + 1) / threads)};
    ak_run_parts(part, sizeof *part, threads, class_boxes_main);
}

/* Classes from groups: group_of[i] of position i (groups 0..ngroups-1);
 * consecutive groups are merged until each class has k rows (the last ones
 * join the class before them), which keeps any monotone model. */
static int build_partition(const table *t, const uint32_t *order, const uint32_t *group_of, size_t ngroups,
                           uint64_t k, unsigned threads, partition *out, ak_error *err)
{
    const size_t n = t->nrows;
    const uint32_t d = t->nqi;
    uint64_t *size = calloc(ngroups ? ngroups : 1, sizeof *size);
    uint32_t *cls = malloc((ngroups ? ngroups : 1) * sizeof *cls);
    if (!size || !cls) {
        free(size), free(cls);
        return ak_err_nomem(err);
    }
    for (size_t i = 0; i < n; i++) size[group_of[i]]++;
    uint32_t nclasses = 0;
    uint64_t acc = 0;
    for (size_t g = 0; g < ngroups; g++) {
        cls[g] = nclasses;
        acc += size[g];
        if (acc >= k) {
            nclasses++;
            acc = 0;
        }
    }
    if (acc) { /* a tail short of k joins the last class */
        if (nclasses) {
            for (size_t g = ngroups; g-- > 0 && cls[g] == nclasses;) cls[g] = nclasses - 1;
        } else {
            nclasses = 1;
        }
    }
    uint32_t *lo = malloc((size_t)nclasses * (d ? d : 1) * sizeof *lo);
    uint32_t *hi = malloc((size_t)nclasses * (d ? d : 1) * sizeof *hi);
    uint64_t *count = calloc(nclasses ? nclasses : 1, sizeof *count);
    int rc = lo && hi && count ? ANONKIT_OK : ak_err_nomem(err);
    /* Classes of the rows first, then the boxes in row order: the QI columns
     * are read front to back, not at the random rows of the 1-D order. */
    for (size_t i = 0; rc >= 0 && i < n; i++) out->class_of[order[i]] = cls[group_of[i]];
    if (rc >= 0) class_boxes_parallel(t, out->class_of, nclasses, lo, hi, threads);
    for (size_t g = 0; rc >= 0 && g < ngroups; g++) count[cls[g]] += size[g];
    for (uint32_t c = 0; rc >= 0 && c < nclasses; c++) {
        uint32_t id;
        rc = partition_add_class(out, lo + (size_t)c * d, hi + (size_t)c * d, count[c], &id, err);
        if (rc >= 0 && id != c) rc = ak_err_set(err, ANONKIT_E_INTERNAL, NULL, 0, 0, "partition not empty");
    }
    free(size), free(cls), free(lo), free(hi), free(count);
    return rc < 0 ? rc : ANONKIT_OK;
}

int hil_run(const table *t, const model *m, const hil_options *o, partition *out, hil_stats *stats,
            ak_error *err)
{
    hil_stats local;
    if (!stats) stats = &local;
    memset(stats, 0, sizeof *stats);
    if (m->variance > 0)
        return ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0,
                          "the 1-D algorithms do not implement variance diversity (use --algorithm mondrian)");
    if (m->l > 0 && m->l_variants != MODEL_L_PROBABILISTIC)
        return ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0,
                          "the 1-D algorithms implement probabilistic l-diversity ([Ghinita07] Definition 3): "
                          "use --l-variant probabilistic");
    if (m->l > 0 && !t->sensitive_codes)
        return ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0, "--l needs a sensitive column (--sensitive)");
    const size_t n = t->nrows;
    if (!n) return ANONKIT_OK;
    if (n >= UINT32_MAX) return ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0, "too many rows for the 1-D algorithms");
    if (m->k > n)
        return ak_err_set(err, ANONKIT_E_INELIGIBLE, NULL, 0, 0, "--k %llu is larger than the table (%zu rows)",
                          (unsigned long long)m->k, n);
    const int ldiv = m->l > 1; /* l = 1 holds for every class */
    uint32_t *order = ak_huge_malloc(n * sizeof *order);
    uint32_t *group_of = ak_huge_malloc(n * sizeof *group_of);
    double *gap = ldiv || o->fast ? ak_huge_malloc(n * sizeof *gap) : NULL;
    int rc = order && group_of && (gap || !(ldiv || o->fast)) ? ANONKIT_OK : ak_err_nomem(err);
    /* the exact k-anonymity DP reads the rows' codes in 1-D order: the sort carries them */
    const int exact = !ldiv && !o->fast;
    hil_packing pk = {0};
    uint64_t *hold = NULL;
    const uint64_t *in = NULL;
    size_t stride = 0;
    if (rc >= 0) rc = map_and_sort(t, o, exact ? &pk : NULL, order, gap, &hold, &in, &stride, stats, err);
    if (rc >= 0) rc = ak_progress_poll(o->progress, err); /* cancelled: not on to the grouping */
    size_t ngroups = 0;
    if (rc >= 0 && ldiv) {
        uint32_t *sa = malloc(n * sizeof *sa);
        long double *pos = malloc(n * sizeof *pos);
        if (!sa || !pos) rc = ak_err_nomem(err);
        long double at = 0;
        for (size_t i = 0; rc >= 0 && i < n; i++) {
            sa[i] = t->sensitive_codes[order[i]];
            at += gap[i];
            pos[i] = at;
        }
        const hil_rows rows = {t, order, o->weights};
        if (rc >= 0) rc = hil_ldiv(sa, pos, n, t->sensitive_dict.count, m->l, &rows, group_of, &ngroups, stats, err);
        if (rc >= 0) rc = hil_ldiv_exchange(sa, t->sensitive_dict.count, n, &rows, group_of, ngroups, stats, err);
        free(sa);
        free(pos);
    } else if (rc >= 0) {
        const uint64_t k = m->k ? m->k : 1;
        uint32_t *sizes = malloc((n / k + 1) * sizeof *sizes);
        double cost;
        if (!sizes) rc = ak_err_nomem(err);
        if (rc >= 0)
            rc = hil_kanon_dp_packed(t, &pk, in, stride, n, k, o->weights, o->fast ? gap : NULL, o->threads,
                                     o->tuning, sizes, &ngroups, &cost, err);
        for (size_t g = 0, i = 0; rc >= 0 && g < ngroups; g++)
            for (uint32_t j = 0; j < sizes[g]; j++) group_of[i++] = (uint32_t)g;
        free(sizes);
    }
    free(hold);
    hil_pack_free(&pk);
    if (rc >= 0) rc = ak_progress_poll(o->progress, err);
    if (rc >= 0) rc = build_partition(t, order, group_of, ngroups, m->k ? m->k : 1, o->threads, out, err);
    free(order);
    free(group_of);
    free(gap);
    return rc < 0 ? rc : ANONKIT_OK;
}
