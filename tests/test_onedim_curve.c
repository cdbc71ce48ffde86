/* test_onedim_curve.c — property tests of the mappings of [Ghinita07] that take
 * a table's rows to one dimension.
 *
 * - Hilbert keys against the curve's definition: for d = 2, 3, 4 every cell
 *   gets one index, consecutive indices are neighbouring cells, each block of
 *   2^(d j) consecutive indices fills one aligned cube of side 2^j, and for
 *   d = 2 the keys equal a reference xy2d written here (up to the axis
 *   order); keys longer than 64 bits keep the nesting property; the prepared
 *   curve (branch-free, table-driven transposition, one point or four at
 *   once) gives the same keys as the reference on random points for
 *   d = 1..8, bits = 1..16 and beyond.
 * - Categorical values placed on the curve by their hierarchy: each subtree
 *   on an aligned block of codes.
 * - iDistance's nearest centre against a scan of every centre, and the bound
 *   it returns on the other centres. */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "algo/onedim/mapping.h"
#include "core/hierarchy.h"
#include "testutil.h"

/* ---------------------------------------------------------------- Hilbert -- */

/* The classic 2-D Hilbert index (rotate-and-reflect per quadrant). */
static uint64_t ref_xy2d(uint32_t n, uint32_t x, uint32_t y)
{
    uint64_t d = 0;
    for (uint32_t s = n / 2; s > 0; s /= 2) {
        uint32_t rx = (x & s) > 0, ry = (y & s) > 0;
        d += (uint64_t)s * s * ((3 * rx) ^ ry);
        if (ry == 0) {
            if (rx == 1) {
                x = s - 1 - x;
                y = s - 1 - y;
            }
            uint32_t t = x;
            x = y;
            y = t;
        }
    }
    return d;
}

static uint64_t small_key(const uint32_t *c, unsigned d, unsigned bits)
{
    uint64_t key[2];
    hil_hilbert_key(c, d, bits, key);
    return key[0] >> (64 - d * bits);
}

static void test_hilbert_definition(void **state)
{
    (void)state;
    static const unsigned cases[][2] = {{2, 1}, {2, 2}, {2, 3}, {2, 4}, {2, 5}, {3, 1}, {3, 2}, {3, 3}, {4, 1}, {4, 2}};
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
        const unsigned d = cases[ci][0], bits = cases[ci][1];
        const uint64_t side = 1ull << bits, ncells = 1ull << (d * bits);
        uint32_t(*cell_of)[4] = calloc(ncells, sizeof *cell_of);
        unsigned char *seen = calloc(ncells, 1);
        assert_non_null(cell_of);
        assert_non_null(seen);
        int same = 1, swapped = 1;
        for (uint64_t lin = 0; lin < ncells; lin++) {
            uint32_t c[4] = {0};
            for (unsigned q = 0; q < d; q++) c[q] = (uint32_t)((lin >> (q * bits)) & (side - 1));
            const uint64_t h = small_key(c, d, bits);
            assert_true(h < ncells);
            if (seen[h]) fail_msg("d=%u bits=%u: index %llu given twice", d, bits, (unsigned long long)h);
            seen[h] = 1;
            memcpy(cell_of[h], c, sizeof c);
            if (d == 2) {
                if (h != ref_xy2d((uint32_t)side, c[0], c[1])) same = 0;
                if (h != ref_xy2d((uint32_t)side, c[1], c[0])) swapped = 0;
            }
        }
        for (unsigned q = 0; q < d; q++) assert_int_equal(cell_of[0][q], 0); /* starts at the origin */
        for (uint64_t h = 1; h < ncells; h++) {
            unsigned dist = 0;
            for (unsigned q = 0; q < d; q++) dist += (unsigned)abs((int)cell_of[h][q] - (int)cell_of[h - 1][q]);
            if (dist != 1) fail_msg("d=%u bits=%u: index %llu is %u steps from the one before", d, bits, (unsigned long long)h, dist);
        }
        for (unsigned j = 1; j < bits; j++) /* blocks of 2^(d j) indices fill aligned cubes of side 2^j */
            for (uint64_t h = 0; h < ncells; h++) {
                const uint64_t first = h & ~((1ull << (d * j)) - 1);
                for (unsigned q = 0; q < d; q++) assert_int_equal(cell_of[h][q] >> j, cell_of[first][q] >> j);
            }
        if (d == 2) assert_true(same || swapped);
        free(cell_of);
        free(seen);
    }
}

/* Keys of more than 64 bits: a common prefix of d*j bits <=> the same aligned
 * cube of side 2^(bits-j); unused low bits are zero. */
static void test_hilbert_multiword(void **state)
{
    (void)state;
    tu_rng rng = {77};
    static const unsigned cases[][2] = {{3, 22}, {7, 12}, {12, 12}};
    for (size_t ci = 0; ci < 3; ci++) {
        const unsigned d = cases[ci][0], bits = cases[ci][1], total = d * bits, words = (total + 63) / 64;
        for (int iter = 0; iter < 2000; iter++) {
            uint32_t a[12], b[12];
            for (unsigned q = 0; q < d; q++) {
                a[q] = (uint32_t)tu_below(&rng, 1ull << bits);
                b[q] = a[q];
                /* a near or a far point */
                if (tu_below(&rng, 2)) b[q] ^= (uint32_t)tu_below(&rng, 1ull << (1 + tu_below(&rng, bits)));
                else b[q] = (uint32_t)tu_below(&rng, 1ull << bits);
            }
            uint64_t ka[3], kb[3];
            hil_hilbert_key(a, d, bits, ka);
            hil_hilbert_key(b, d, bits, kb);
            if (total % 64) assert_int_equal(ka[words - 1] & ((1ull << (64 - total % 64)) - 1), 0);
            unsigned common = 0; /* leading equal key bits */
            while (common < total && ((ka[common / 64] >> (63 - common % 64)) & 1) == ((kb[common / 64] >> (63 - common % 64)) & 1))
                common++;
            for (unsigned j = 0; j <= bits; j++) {
                int cube = 1;
                for (unsigned q = 0; q < d; q++)
                    if ((a[q] >> (bits - j)) != (b[q] >> (bits - j))) cube = 0;
                if (j == 0) cube = 1;
                assert_int_equal(cube, common >= d * j);
            }
        }
    }
}

/* The prepared curve's keys equal hil_hilbert_key (Skilling's algorithm as
 * written) on random points: every d and bits with d * bits <= 128 for d up
 * to 8 and bits up to 16, the largest bits, and keys beyond 128 bits (the
 * generic path). Points near the grid's corners and faces are favoured. */
static void test_hilbert_curve_equals_reference(void **state)
{
    (void)state;
    tu_rng rng = {1234};
    static const unsigned extra[][2] = {{1, 31}, {4, 31}, {9, 14}, {10, 12}, {11, 12}, {12, 12}, {20, 7}, {3, 30}};
    for (unsigned ci = 0; ci < 8 * 16 + 8; ci++) {
        unsigned d, bits;
        if (ci < 8 * 16) {
            d = 1 + ci / 16;
            bits = 1 + ci % 16;
        } else {
            d = extra[ci - 8 * 16][0];
            bits = extra[ci - 8 * 16][1];
        }
        hil_curve curve;
        ak_error err;
        assert_int_equal(hil_curve_init(&curve, d, bits, &err), ANONKIT_OK);
        assert_int_equal(curve.spread != NULL, d * bits <= 128);
        const unsigned words = (d * bits + 63) / 64;
        const uint64_t top = (1ull << bits) - 1;
        for (int iter = 0; iter < 3000; iter++) {
            uint32_t c[20];
            for (unsigned q = 0; q < d; q++) {
                switch (tu_below(&rng, 4)) {
                case 0: c[q] = 0; break;
                case 1: c[q] = (uint32_t)top; break;
                default: c[q] = (uint32_t)tu_below(&rng, top + 1);
                }
            }
            uint64_t want[5], got[5];
            memset(got, 0xa5, sizeof got);
            hil_hilbert_key(c, d, bits, want);
            hil_curve_key(&curve, c, got);
            if (memcmp(want, got, words * sizeof *want))
                fail_msg("d=%u bits=%u: key %016llx%016llx, reference %016llx%016llx", d, bits,
                         (unsigned long long)got[0], (unsigned long long)(words > 1 ? got[1] : 0),
                         (unsigned long long)want[0], (unsigned long long)(words > 1 ? want[1] : 0));
            /* four at once: this point in lane iter % 4, the other lanes random */
            uint32_t four[4 * 20];
            for (unsigned j = 0; j < 4 * d; j++) four[j] = (uint32_t)tu_below(&rng, top + 1);
            memcpy(four + (iter % 4) * d, c, d * sizeof *c);
            uint64_t got4[4 * 5];
            hil_curve_key4(&curve, four, got4);
            for (unsigned j = 0; j < 4; j++) {
                hil_hilbert_key(four + j * d, d, bits, want);
                if (memcmp(want, got4 + j * words, words * sizeof *want))
                    fail_msg("d=%u bits=%u: lane %u of four keys differs from the reference", d, bits, j);
            }
        }
        hil_curve_free(&curve);
    }
}

/* --------------------------------------------------- categorical placement -- */

/* Writes an ARX hierarchy of `depth` inner levels whose nodes have 1..maxfan
 * children (leaves "x0", "x1", ... in a shuffled row order); returns the leaf count. */
static int write_tree_hierarchy(tu_rng *rng, const char *path, int depth, int maxfan)
{
    /* path[level] of every leaf: the index of its ancestor at that level */
    enum { MAXL = 2048 };
    int anc[MAXL][6];
    int count = 1, next_id[6] = {0};
    int nodes[MAXL], nnodes = 1; /* ids at the current level, top down */
    nodes[0] = 0;
    int parent_of[6][MAXL];
    for (int level = depth; level > 0; level--) { /* children of the nodes at `level` */
        int kids[MAXL], nk = 0;
        for (int i = 0; i < nnodes && nk < MAXL - 8; i++) {
            const int fan = 1 + (int)tu_below(rng, (uint64_t)maxfan);
            for (int j = 0; j < fan && nk < MAXL; j++) {
                kids[nk] = next_id[level - 1]++;
                parent_of[level - 1][kids[nk]] = nodes[i];
                nk++;
            }
        }
        memcpy(nodes, kids, (size_t)nk * sizeof *kids);
        nnodes = nk;
    }
    count = nnodes;
    for (int leaf = 0; leaf < count; leaf++) {
        int id = leaf;
        for (int level = 0; level < depth; level++) {
            anc[leaf][level] = id;
            id = parent_of[level][id];
        }
    }
    int perm[MAXL];
    for (int i = 0; i < count; i++) perm[i] = i;
    for (int i = count - 1; i > 0; i--) {
        int j = (int)tu_below(rng, (uint64_t)i + 1), x = perm[i];
        perm[i] = perm[j];
        perm[j] = x;
    }
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    for (int r = 0; r < count; r++) {
        const int leaf = perm[r];
        fprintf(f, "x%d", leaf);
        for (int level = 1; level < depth; level++) fprintf(f, ";L%dn%d", level, anc[leaf][level]);
        fprintf(f, ";*\n");
    }
    fclose(f);
    return count;
}

/* Bits a hierarchy needs for every node's children to get aligned blocks:
 * the largest sum of ceil(log2(children)) from the root to a leaf. */
static unsigned bits_needed(const hier *h, uint32_t node)
{
    const hier_node *u = hier_node_at(h, node);
    if (!u->nchildren) return 0;
    unsigned own = 0, below = 0;
    while ((1u << own) < u->nchildren) own++;
    for (uint32_t j = 0; j < u->nchildren; j++) {
        const unsigned b = bits_needed(h, hier_children(h)[u->first_child + j]);
        if (b > below) below = b;
    }
    return own + below;
}

/* The block (in bits) that node `node` gets: the axis less ceil(log2(c)) for
 * every ancestor with c children. */
static unsigned block_bits(const hier *h, uint32_t node, unsigned bits)
{
    unsigned used = 0;
    for (uint32_t v = node; v != hier_root(h);) {
        v = hier_node_at(h, v)->parent;
        unsigned own = 0;
        while ((1u << own) < hier_node_at(h, v)->nchildren) own++;
        used += own;
    }
    return bits - used;
}

/* Hilbert cells of categorical values: in leaf order, on the axis; when the
 * axis has the bits the hierarchy needs, every node's leaves fill one aligned
 * block of cells (the cells shifted right by the block's bits agree) that no
 * other leaf enters, and leaves get distinct cells. iDistance places: in
 * [0, 1] from 0 to 1, in leaf order, and a leaf is never farther from a leaf
 * of its own subtree than from a leaf outside it. */
static void test_hierarchy_placement(void **state)
{
    (void)state;
    tu_rng rng = {1107};
    const char *dir = tu_mkdtemp();
    char path[4200];
    snprintf(path, sizeof path, "%s/h.csv", dir);
    int aligned = 0, spread = 0;
    for (int iter = 0; iter < 300; iter++) {
        if (iter % 3 == 0) tu_write_random_hierarchy(&rng, path, 0);
        else write_tree_hierarchy(&rng, path, 1 + (int)tu_below(&rng, 4), 1 + (int)tu_below(&rng, iter % 3 == 1 ? 4 : 12));
        hier *h;
        ak_error err;
        if (hier_load(&h, path, &err) != ANONKIT_OK) fail_msg("hier_load: %s", err.message);
        const uint32_t nleaves = hier_leaf_count(h), nodes = hier_node_count(h);
        const unsigned bits = 1 + (unsigned)tu_below(&rng, 14), need = bits_needed(h, hier_root(h));
        uint32_t *cell = malloc(nleaves * sizeof *cell);
        double *place = malloc(nleaves * sizeof *place);
        assert_non_null(cell);
        assert_non_null(place);
        assert_int_equal(hil_hierarchy_cells(h, bits, cell, &err), ANONKIT_OK);
        for (uint32_t x = 0; x < nleaves; x++) {
            assert_true(cell[x] < (1u << bits));
            if (x) assert_true(cell[x] >= cell[x - 1]);
        }
        if (need <= bits) {
            aligned++;
            for (uint32_t x = 1; x < nleaves; x++) assert_true(cell[x] > cell[x - 1]);
            for (uint32_t v = 0; v < nodes; v++) {
                const hier_node *u = hier_node_at(h, v);
                const unsigned m = block_bits(h, v, bits);
                for (uint32_t x = 0; x < nleaves; x++) {
                    const int inside = x >= u->lo && x <= u->hi, same = (cell[x] >> m) == (cell[u->lo] >> m);
                    if (inside != same)
                        fail_msg("iteration %d: leaf %u is %s node %u but %s its block (cell %u, block of %u bits)",
                                 iter, x, inside ? "under" : "not under", v, same ? "in" : "outside", cell[x], m);
                }
            }
        } else {
            spread++;
        }
        assert_int_equal(hil_hierarchy_places(h, place, &err), ANONKIT_OK);
        assert_true(place[0] == 0);
        if (nleaves > 1) assert_true(fabs(place[nleaves - 1] - 1) < 1e-12);
        for (uint32_t x = 1; x < nleaves; x++) assert_true(place[x] >= place[x - 1]);
        for (uint32_t v = 0; v < nodes; v++) {
            const hier_node *u = hier_node_at(h, v);
            const double width = place[u->hi] - place[u->lo]; /* the farthest two leaves under u */
            if (u->lo > 0) assert_true(place[u->lo] - place[u->lo - 1] >= width - 1e-12);
            if (u->hi + 1 < nleaves) assert_true(place[u->hi + 1] - place[u->hi] >= width - 1e-12);
        }
        free(cell);
        free(place);
        hier_free(h);
    }
    assert_true(aligned > 50);
    assert_true(spread > 20);
    tu_rmtree(dir);
}

/* ------------------------------------------------------ nearest centre -- */

/* The centre nearest p by scanning them all in index order: the first one at
 * the least squared distance (coordinates summed in order). */
static size_t brute_nearest(const double *centers, size_t n, unsigned d, const double *p, double *best2)
{
    size_t best = 0;
    double b = INFINITY;
    for (size_t c = 0; c < n; c++) {
        double s = 0;
        for (unsigned q = 0; q < d; q++) {
            const double e = p[q] - centers[c * d + q];
            s += e * e;
        }
        if (s < b) {
            b = s;
            best = c;
        }
    }
    *best2 = b;
    return best;
}

/* The nearest-centre search (the float scan, and the box-pruned tree)
 * against a plain scan in doubles: random centres, on a coarse grid
 * (many exact ties, duplicate centres) or continuous, in index order, in a
 * random order or sorted by their first coordinate; queries near centres,
 * on them, or anywhere; with and without a hint. The bound it gives on the
 * other centres' distances holds, and the scan's is mostly above the least
 * distance (what lets k-means skip searches). */
static void test_nearest_centre(void **state)
{
    (void)state;
    tu_rng rng = {4711};
    size_t scan_queries = 0, informative = 0;
    for (int iter = 0; iter < 400; iter++) {
        const unsigned d = 1 + (unsigned)tu_below(&rng, 9);
        /* up to 700 centres; every 50th round more than the scan keeps (it measures them twice) */
        const size_t n = iter % 50 == 7 ? 4097 + tu_below(&rng, 900) : 1 + tu_below(&rng, iter % 4 ? 80 : 700);
        const int grid = tu_below(&rng, 2) == 0;
        double *centers = malloc(n * d * sizeof *centers);
        uint32_t *order = malloc(n * sizeof *order);
        assert_non_null(centers);
        assert_non_null(order);
        for (size_t i = 0; i < n * d; i++)
            centers[i] = grid ? (double)tu_below(&rng, 4) / 3.0 : (double)tu_below(&rng, 1u << 30) / (double)(1u << 30);
        for (size_t i = 0; i < n; i++) order[i] = (uint32_t)i;
        const int how = (int)tu_below(&rng, 3);
        if (how == 1)
            for (size_t i = n; i > 1; i--) {
                size_t j = tu_below(&rng, i);
                uint32_t x = order[i - 1];
                order[i - 1] = order[j];
                order[j] = x;
            }
        if (how == 2) /* by the first coordinate (insertion sort) */
            for (size_t i = 1; i < n; i++)
                for (size_t j = i; j > 0 && centers[(size_t)order[j - 1] * d] > centers[(size_t)order[j] * d]; j--) {
                    uint32_t x = order[j - 1];
                    order[j - 1] = order[j];
                    order[j] = x;
                }
        hil_nn nn;
        ak_error err;
        assert_int_equal(hil_nn_init(&nn, centers, n, d, how ? order : NULL, &err), ANONKIT_OK);
        nn.tree_search = iter % 3 == 0; /* the scan, and the tree every third round */
        for (int qi = 0; qi < 200; qi++) {
            double p[9];
            const size_t near = tu_below(&rng, n);
            for (unsigned q = 0; q < d; q++) {
                switch (tu_below(&rng, 3)) {
                case 0: p[q] = centers[near * d + q]; break;
                case 1: p[q] = centers[near * d + q] + ((double)tu_below(&rng, 1000) - 500) * 1e-4; break;
                default: p[q] = grid ? (double)tu_below(&rng, 7) / 6.0 : (double)tu_below(&rng, 1000) / 999.0;
                }
            }
            double want2, got2, second2;
            const size_t want = brute_nearest(centers, n, d, p, &want2);
            const size_t hint = tu_below(&rng, 2) ? SIZE_MAX : tu_below(&rng, n);
            const size_t got = hil_nn_nearest(&nn, p, hint, &got2, &second2);
            if (got != want || got2 != want2)
                fail_msg("iteration %d (n=%zu d=%u order %d hint %zu): centre %zu at %.17g, scan %zu at %.17g", iter, n, d,
                         how, hint, got, got2, want, want2);
            double others2 = INFINITY; /* the least squared distance of the other centres */
            for (size_t c = 0; c < n; c++) {
                if (c == got) continue;
                double s2 = 0;
                for (unsigned q = 0; q < d; q++) s2 += (p[q] - centers[c * d + q]) * (p[q] - centers[c * d + q]);
                if (s2 < others2) others2 = s2;
            }
            if (second2 > others2 || second2 < got2)
                fail_msg("iteration %d (n=%zu d=%u): bound %.17g on the other centres, nearest of them at %.17g, best "
                         "%.17g", iter, n, d, second2, others2, got2);
            if (!nn.tree_search && n >= 2 && n <= 4096) scan_queries++, informative += second2 > got2;
        }
        hil_nn_free(&nn);
        free(centers);
        free(order);
    }
    print_message("the scan's bound on the other centres was above the least distance in %zu of %zu queries\n",
                  informative, scan_queries);
    assert_true(informative * 2 > scan_queries);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hilbert_definition),
        cmocka_unit_test(test_hilbert_multiword),
        cmocka_unit_test(test_hilbert_curve_equals_reference),
        cmocka_unit_test(test_hierarchy_placement),
        cmocka_unit_test(test_nearest_centre),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
