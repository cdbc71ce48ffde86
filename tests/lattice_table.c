/* lattice_table.c — random tables with hierarchies for the lattice tests (lattice_table.h). */
#include "lattice_table.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "algo/incognito/incognito.h"
#include "core/hierarchy.h"
#include "io/csv.h"

void lattice_write_interval_hierarchy(const char *path, int n, int levels, int reversed)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    for (int i = 0; i < n; i++) {
        const int v = reversed ? n - 1 - i : i;
        fprintf(f, "%d", v);
        for (int l = 1; l <= levels; l++) {
            const int w = 1 << l, lo = v / w * w;
            fprintf(f, ";%d-%d", lo, lo + w - 1);
        }
        fprintf(f, ";*\n");
    }
    fclose(f);
}

void lattice_generate(tu_rng *rng, const char *dir, gen_table *g)
{
    memset(g, 0, sizeof *g);
    g->nrows = 1 + tu_below(rng, 60);
    if (tu_below(rng, 3) == 0) g->nrows = 1 + tu_below(rng, MAX_ROWS);
    g->nqi = 1 + (int)tu_below(rng, MAX_QI);
    const int nsens = 1 + (int)tu_below(rng, 6);
    int domain[MAX_QI];
    for (int q = 0; q < g->nqi; q++) {
        char name[64];
        snprintf(name, sizeof name, "h%d.csv", q);
        snprintf(g->hier_path[q], sizeof g->hier_path[q], "%s", tu_path(dir, name));
        g->numeric[q] = tu_below(rng, 3) == 0;
        if (g->numeric[q]) {
            domain[q] = 2 + (int)tu_below(rng, 12);
            lattice_write_interval_hierarchy(g->hier_path[q], domain[q], 1 + (int)tu_below(rng, 3),
                                             1); /* reversed: leaf order must not matter */
        } else {
            domain[q] = tu_write_random_hierarchy(rng, g->hier_path[q], q);
        }
    }
    snprintf(g->csv_path, sizeof g->csv_path, "%s", tu_path(dir, "in.csv"));
    FILE *f = fopen(g->csv_path, "w");
    assert_non_null(f);
    fprintf(f, "id");
    for (int q = 0; q < g->nqi; q++) fprintf(f, ",a%d", q);
    fprintf(f, ",s\n");
    for (size_t r = 0; r < g->nrows; r++) {
        fprintf(f, "%zu", r);
        for (int q = 0; q < g->nqi; q++) {
            int v = (int)tu_below(rng, (uint64_t)domain[q]);
            if (tu_below(rng, 2) == 0) v = (int)tu_below(rng, (uint64_t)(domain[q] + 2) / 3); /* duplicates */
            g->value[r][q] = v;
            if (g->numeric[q]) fprintf(f, ",%d", v);
            else fprintf(f, ",v%d", v);
        }
        g->sensitive[r] = tu_below(rng, 2) ? 0 : (int)tu_below(rng, (uint64_t)nsens);
        fprintf(f, ",d%d\n", g->sensitive[r]);
    }
    fclose(f);
}

int lattice_load(const gen_table *g, table **t)
{
    const char *names[MAX_QI] = {"a0", "a1", "a2", "a3"};
    const char *paths[MAX_QI];
    unsigned char numeric[MAX_QI];
    for (int q = 0; q < g->nqi; q++) {
        paths[q] = g->hier_path[q];
        numeric[q] = (unsigned char)g->numeric[q];
    }
    const char *ids[] = {"id"};
    table_spec spec = {.path = g->csv_path, .display_name = g->csv_path, .delimiter = ',', .nqi = (size_t)g->nqi,
                       .qi_names = names, .hierarchy_paths = paths, .force_numeric = numeric,
                       .sensitive_name = "s", .nidentifiers = 1, .identifier_names = ids, .threads = 1};
    ak_error err;
    int rc = table_load(t, &spec, &err);
    if (rc < 0) fail_msg("table_load: %s", err.message);
    return rc;
}

/* Leaf code of row r in QI q (independent of the table's numeric codes). */
uint32_t lattice_leaf_of(const gen_table *g, const table *t, size_t r, int q)
{
    char text[32];
    snprintf(text, sizeof text, g->numeric[q] ? "%d" : "v%d", g->value[r][q]);
    uint32_t leaf;
    assert_int_equal(hier_find_leaf(t->qi[q].h, text, strlen(text), &leaf), 0);
    return leaf;
}

void lattice_set(anonkit_job *job, anonkit_option o, const char *v)
{
    if (anonkit_job_set(job, o, v) != ANONKIT_OK) fail_msg("set %s=%s: %s", anonkit_option_name(o), v, anonkit_errmsg(job));
}

anonkit_job *lattice_job(const gen_table *g, const char *algorithm, const char *out)
{
    anonkit_job *job = anonkit_job_create();
    if (!job) fail_msg("anonkit_job_create: out of memory");
    char text[4200];
    for (int q = 0; q < g->nqi; q++) {
        snprintf(text, sizeof text, "a%d", q);
        lattice_set(job, ANONKIT_OPT_QI, text);
        snprintf(text, sizeof text, "a%d=%s", q, g->hier_path[q]);
        lattice_set(job, ANONKIT_OPT_HIERARCHY, text);
        if (g->numeric[q]) {
            snprintf(text, sizeof text, "a%d", q);
            lattice_set(job, ANONKIT_OPT_NUMERIC, text);
        }
    }
    lattice_set(job, ANONKIT_OPT_INPUT, g->csv_path);
    lattice_set(job, ANONKIT_OPT_OUTPUT, out);
    lattice_set(job, ANONKIT_OPT_SENSITIVE, "s");
    lattice_set(job, ANONKIT_OPT_IDENTIFIER, "id");
    lattice_set(job, ANONKIT_OPT_ALGORITHM, algorithm);
    lattice_set(job, ANONKIT_OPT_KEEP_ORDER, "true");
    return job;
}

/* The NCP of row r's ancestor at level l of QI q, from the box of table codes
 * it covers (categorical: the node's leaves; numeric: the codes present under
 * it), computed row by row. */
static double row_ncp_at(const gen_table *g, const table *t, int q, uint32_t l, size_t r)
{
    const hier *h = t->qi[q].h;
    const uint32_t anc = hier_ancestor(h, lattice_leaf_of(g, t, r, q), l);
    uint32_t lo, hi;
    if (t->qi[q].kind == ATTR_CATEGORICAL) {
        lo = hier_node_at(h, anc)->lo;
        hi = hier_node_at(h, anc)->hi;
    } else {
        lo = hi = t->qi[q].codes[r];
        for (size_t x = 0; x < g->nrows; x++)
            if (hier_ancestor(h, lattice_leaf_of(g, t, x, q), l) == anc) {
                if (t->qi[q].codes[x] < lo) lo = t->qi[q].codes[x];
                if (t->qi[q].codes[x] > hi) hi = t->qi[q].codes[x];
            }
    }
    return table_ncp(t, (uint32_t)q, lo, hi);
}

void lattice_row_ncp(const gen_table *g, const table *t, double ncp[MAX_QI][LATTICE_MAX_LEVELS][MAX_ROWS])
{
    for (int q = 0; q < g->nqi; q++) {
        const uint32_t height = hier_height(t->qi[q].h);
        assert_true(height < LATTICE_MAX_LEVELS);
        for (uint32_t l = 0; l <= height; l++)
            for (size_t r = 0; r < g->nrows; r++) ncp[q][l][r] = row_ncp_at(g, t, q, l, r);
    }
}

table *lattice_round(tu_rng *rng, const char **dir, gen_table *g)
{
    *dir = tu_mkdtemp();
    lattice_generate(rng, *dir, g);
    table *t;
    lattice_load(g, &t);
    return t;
}

void lattice_round_end(table *t, const char *dir)
{
    if (t) table_free(t);
    tu_rmtree(dir);
}

size_t lattice_all_nodes(const table *t, uint32_t *out, size_t cap)
{
    const uint32_t nqi = t->nqi;
    assert_true(nqi <= MAX_QI);
    uint32_t maxh = 0;
    for (uint32_t q = 0; q < nqi; q++) maxh += inc_qi_height(t, q);
    size_t n = 0;
    for (uint32_t h = 0; h <= maxh; h++) {
        uint32_t lv[MAX_QI] = {0};
        for (;;) {
            uint32_t sum = 0;
            for (uint32_t q = 0; q < nqi; q++) sum += lv[q];
            if (sum == h) {
                assert_true(n < cap);
                memcpy(out + n * nqi, lv, nqi * sizeof *lv);
                n++;
            }
            uint32_t q = nqi;
            while (q-- > 0) {
                if (++lv[q] <= inc_qi_height(t, q)) break;
                lv[q] = 0;
            }
            if (q == UINT32_MAX) break;
        }
    }
    return n;
}

void lattice_anonymous_and_minimal(const uint32_t *nodes, size_t n, uint32_t nqi, const unsigned char *is_anon,
                                   uint32_t *anon, size_t *na, uint32_t *minimal, size_t *nm)
{
    *na = *nm = 0;
    for (size_t i = 0; i < n; i++) {
        if (!is_anon[i]) continue;
        memcpy(anon + (*na)++ * nqi, nodes + i * nqi, nqi * sizeof *nodes);
        int min = 1;
        for (size_t j = 0; j < n && min; j++) {
            if (!is_anon[j]) continue;
            uint32_t diff = 0, down = 0;
            for (uint32_t q = 0; q < nqi; q++) {
                diff += nodes[j * nqi + q] != nodes[i * nqi + q];
                down += nodes[j * nqi + q] + 1 == nodes[i * nqi + q];
            }
            if (diff == 1 && down == 1) min = 0;
        }
        if (min) memcpy(minimal + (*nm)++ * nqi, nodes + i * nqi, nqi * sizeof *nodes);
    }
}

void lattice_assert_labels_cover(const gen_table *g, const char *out, uint64_t suppressed, const char *what)
{
    table *t;
    lattice_load(g, &t);
    csv_reader *rd;
    ak_error err;
    assert_int_equal(csv_reader_open(&rd, out, ',', &err), ANONKIT_OK);
    csv_record rec;
    assert_int_equal(csv_read(rd, &rec, &err), 1);
    for (size_t r = 0; r < g->nrows; r++) {
        assert_int_equal(csv_read(rd, &rec, &err), 1);
        int stars = 0;
        for (int q = 0; q < g->nqi; q++) stars += rec.fields[q].len == 1 && rec.fields[q].data[0] == '*';
        if (stars == g->nqi && suppressed) continue; /* a suppressed row (or one published at every root) */
        for (int q = 0; q < g->nqi; q++) {
            const hier *h = t->qi[q].h;
            const uint32_t node = hier_find_label(h, rec.fields[q].data, rec.fields[q].len);
            if (node == UINT32_MAX)
                fail_msg("%s: row %zu QI %d: '%.*s' is no label of the hierarchy", what, r, q, (int)rec.fields[q].len,
                         rec.fields[q].data);
            if (hier_ancestor(h, lattice_leaf_of(g, t, r, q), hier_node_at(h, node)->level) != node)
                fail_msg("%s: row %zu QI %d: '%.*s' does not cover the row's value", what, r, q, (int)rec.fields[q].len,
                         rec.fields[q].data);
        }
    }
    assert_int_equal(csv_read(rd, &rec, &err), 0);
    csv_reader_free(rd);
    table_free(t);
}
