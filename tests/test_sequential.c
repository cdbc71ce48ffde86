/* test_sequential.c — TDS4SA ([Wang06]): every result is proven by a join computed
 * here directly from the published file and the earlier releases (records
 * matched pair by pair with the consistency predicate), every single further
 * specialization of the result is shown to violate the requirement, and on
 * tiny tables brute force over all cuts confirms Corollary 4.2 (a valid cut
 * exists exactly when the program finds one). Table 1 of [Wang06] is rebuilt. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "algo/sequential/tds.h"
#include "anonkit/anonkit.h"
#include "core/hierarchy.h"
#include "core/partition.h"
#include "core/table.h"
#include "testutil.h"

#define MAXROWS 16
#define MAXTAB 3
#define MAXCOL 4

/* A small release in memory: column names and cell texts. */
typedef struct rel {
    int ncols, nrows;
    char name[MAXCOL][16];
    char cell[MAXROWS][MAXCOL][24];
} rel;

static void rel_write(const rel *r, const char *path)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    for (int c = 0; c < r->ncols; c++) fprintf(f, "%s%s", c ? "," : "", r->name[c]);
    fputc('\n', f);
    for (int i = 0; i < r->nrows; i++) {
        for (int c = 0; c < r->ncols; c++) fprintf(f, "%s%s", c ? "," : "", r->cell[i][c]);
        fputc('\n', f);
    }
    fclose(f);
}

static void rel_read(rel *r, const char *path)
{
    char *text = tu_read_file(path, NULL);
    assert_non_null(text);
    memset(r, 0, sizeof *r);
    int line = 0;
    for (char *save = NULL, *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save), line++) {
        int c = 0;
        for (char *s2 = NULL, *f = strtok_r(l, ",", &s2); f; f = strtok_r(NULL, ",", &s2), c++) {
            assert_true(c < MAXCOL);
            if (line == 0) snprintf(r->name[c], sizeof r->name[c], "%s", f);
            else snprintf(r->cell[line - 1][c], sizeof r->cell[0][0], "%s", f);
        }
        if (line == 0) r->ncols = c;
    }
    r->nrows = line - 1;
    free(text);
}

static int col(const rel *r, const char *name)
{
    for (int c = 0; c < r->ncols; c++)
        if (!strcmp(r->name[c], name)) return c;
    return -1;
}

/* An attribute's hierarchy, by name. */
typedef struct hset {
    int n;
    char name[4][16];
    hier *h[4];
} hset;

static const hier *hier_of(const hset *hs, const char *name)
{
    for (int i = 0; i < hs->n; i++)
        if (!strcmp(hs->name[i], name)) return hs->h[i];
    return NULL;
}

static const hier_node *node_of(const hier *h, const char *label)
{
    uint32_t n = hier_find_label(h, label, strlen(label));
    assert_int_not_equal(n, UINT32_MAX);
    return hier_node_at(h, n);
}

/* The requirement, measured on the join computed record by record (star join
 * of tabs[0] with each other table; consistency on shared categorical
 * attributes). X and Y: attribute names; Y in one table. Returns the largest
 * risk: -A_Y(X) or L_Y(X); -1e300 when the join is empty. */
typedef struct req {
    int linkability;
    double bound;
    const char *x[6];
    int nx;
    const char *y;
    const char *sensitive; /* linkability: only this y value counts; NULL = all */
} req;

#define MAXX 4096
static double join_risk(const rel *tabs, int ntab, const hset *hs, const req *q)
{
    static char xkey[MAXX][128];
    static char yseen[MAXX][8][24];
    static int nyseen[MAXX];
    static long ax[MAXX], axy[MAXX][8];
    int nx = 0;
    int idx[MAXTAB] = {0};
    for (;;) {
        int ok = 1;
        for (int t = 1; t < ntab && ok; t++) {
            if (tabs[t].nrows == 0) ok = 0;
            for (int c = 0; c < tabs[t].ncols && ok; c++) {
                const int c0 = col(&tabs[0], tabs[t].name[c]);
                const hier *h = hier_of(hs, tabs[t].name[c]);
                if (c0 < 0 || !h) continue;
                const hier_node *a = node_of(h, tabs[0].cell[idx[0]][c0]), *b = node_of(h, tabs[t].cell[idx[t]][c]);
                if (a->hi < b->lo || b->hi < a->lo) ok = 0;
            }
        }
        if (ok) {
            char key[128] = "", yv[24] = "";
            for (int i = 0; i < q->nx; i++)
                for (int t = 0; t < ntab; t++) {
                    int c = col(&tabs[t], q->x[i]);
                    if (c >= 0) {
                        strcat(key, tabs[t].cell[idx[t]][c]);
                        strcat(key, "|");
                    }
                }
            for (int t = 0; t < ntab; t++) {
                int c = col(&tabs[t], q->y);
                if (c >= 0) snprintf(yv, sizeof yv, "%s", tabs[t].cell[idx[t]][c]);
            }
            int x = 0;
            while (x < nx && strcmp(xkey[x], key)) x++;
            if (x == nx) {
                assert_true(nx < MAXX);
                snprintf(xkey[nx], sizeof xkey[0], "%s", key);
                nyseen[nx] = 0;
                ax[nx] = 0;
                nx++;
            }
            ax[x]++;
            int y = 0;
            while (y < nyseen[x] && strcmp(yseen[x][y], yv)) y++;
            if (y == nyseen[x]) {
                assert_true(y < 8);
                snprintf(yseen[x][y], sizeof yseen[0][0], "%s", yv);
                axy[x][y] = 0;
                nyseen[x]++;
            }
            axy[x][y]++;
        }
        int t = 0;
        while (t < ntab && ++idx[t] >= tabs[t].nrows) idx[t++] = 0;
        if (t == ntab) break;
    }
    double worst = -1e300;
    for (int x = 0; x < nx; x++) {
        if (!q->linkability) {
            if (-(double)nyseen[x] > worst) worst = -(double)nyseen[x];
        } else {
            if (worst < 0) worst = 0;
            for (int y = 0; y < nyseen[x]; y++)
                if ((!q->sensitive || !strcmp(q->sensitive, yseen[x][y])) && (double)axy[x][y] / ax[x] > worst)
                    worst = (double)axy[x][y] / ax[x];
        }
    }
    return worst;
}

static int holds(const req *q, double risk) { return q->linkability ? risk <= q->bound : risk <= -q->bound; }

/* Runs anonkit_sequential on the tables written in dir. */
static int run(const char *dir, int ntab, const hset *hs, const req *q, const char *cls, const char *out)
{
    anonkit_job *job = anonkit_job_create();
    char v[64];
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_INPUT, tu_path(dir, "t0.csv")), 0);
    for (int t = 1; t < ntab; t++) {
        snprintf(v, sizeof v, "t%d.csv", t);
        assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_PREVIOUS, tu_path(dir, v)), 0);
    }
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_OUTPUT, out), 0);
    for (int i = 0; i < q->nx; i++) assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_X, q->x[i]), 0);
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_Y, q->y), 0);
    snprintf(v, sizeof v, "%.17g", q->bound);
    assert_int_equal(anonkit_job_set(job, q->linkability ? ANONKIT_OPT_LINKABILITY : ANONKIT_OPT_ANONYMITY, v), 0);
    if (q->sensitive) assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_SENSITIVE_VALUES, q->sensitive), 0);
    if (cls) assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_CLASS, cls), 0);
    else assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_SCORE, "distortion"), 0);
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_KEEP_ORDER, "1"), 0);
    for (int i = 0; i < hs->n; i++) {
        char spec[4200];
        snprintf(spec, sizeof spec, "%s=%s", hs->name[i], hier_path(hs->h[i]));
        assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_HIERARCHY, spec), 0);
    }
    anonkit_result *result = NULL;
    int rc = anonkit_sequential(job, &result);
    if (rc < 0 && rc != ANONKIT_E_INELIGIBLE) fail_msg("anonkit_sequential: %s", anonkit_errmsg(job));
    if ((rc == ANONKIT_OK) != (result != NULL)) fail_msg("anonkit_sequential: a result only on success");
    if (result && anonkit_result_rows_published(result) + anonkit_result_rows_suppressed(result) !=
                      anonkit_result_rows_read(result))
        fail_msg("anonkit_sequential: the result's counts do not add up");
    anonkit_result_free(result);
    anonkit_job_free(job);
    return rc;
}

/* Whether attribute name is generalized by the algorithm: in X and in T1 with a hierarchy. */
static int generalized(const rel *t1, const hset *hs, const req *q, const char *name)
{
    int inx = 0;
    for (int i = 0; i < q->nx; i++) inx |= !strcmp(q->x[i], name);
    return inx && col(t1, name) >= 0 && hier_of(hs, name);
}

/* Proves the result: valid on the direct join, and no single specialization of
 * a cut value (one node into its children, in every row holding it) is. */
static void prove(const rel *orig, const rel *tabs, int ntab, const hset *hs, const req *q, const char *out)
{
    rel all[MAXTAB];
    memcpy(all, tabs, (size_t)ntab * sizeof *all);
    rel_read(&all[0], out);
    assert_int_equal(all[0].nrows, orig->nrows);
    const double risk = join_risk(all, ntab, hs, q);
    assert_true(holds(q, risk));
    for (int c = 0; c < all[0].ncols; c++) {
        if (!generalized(&all[0], hs, q, all[0].name[c])) continue;
        const hier *h = hier_of(hs, all[0].name[c]);
        for (int i = 0; i < all[0].nrows; i++) {
            const uint32_t node = hier_find_label(h, all[0].cell[i][c], strlen(all[0].cell[i][c]));
            const hier_node *nd = hier_node_at(h, node);
            if (!nd->nchildren) continue;
            rel spec = all[0];
            for (int r = 0; r < spec.nrows; r++) {
                if (strcmp(spec.cell[r][c], all[0].cell[i][c])) continue;
                const hier_node *leaf = node_of(h, orig->cell[r][c]);
                for (uint32_t k = 0; k < nd->nchildren; k++) {
                    const hier_node *ch = hier_node_at(h, hier_children(h)[nd->first_child + k]);
                    if (ch->lo <= leaf->lo && leaf->hi <= ch->hi) snprintf(spec.cell[r][c], sizeof spec.cell[0][0], "%s", ch->label);
                }
            }
            rel alt[MAXTAB];
            memcpy(alt, all, (size_t)ntab * sizeof *alt);
            alt[0] = spec;
            if (holds(q, join_risk(alt, ntab, hs, q)))
                fail_msg("specializing %s of %s keeps the requirement: the result is not maximal", nd->label, all[0].name[c]);
        }
    }
}

/* Whether the most general T1 satisfies the requirement (Corollary 4.2 says:
 * exactly when some cut does); checked against every cut of the first
 * generalized attribute when its hierarchy is small. */
static int any_cut_valid(const rel *orig, const rel *tabs, int ntab, const hset *hs, const req *q, int *most_general)
{
    rel all[MAXTAB];
    memcpy(all, tabs, (size_t)ntab * sizeof *all);
    all[0] = *orig;
    /* most general: every generalized attribute at its root */
    for (int c = 0; c < all[0].ncols; c++)
        if (generalized(&all[0], hs, q, all[0].name[c]))
            for (int r = 0; r < all[0].nrows; r++) {
                const hier *h = hier_of(hs, all[0].name[c]);
                snprintf(all[0].cell[r][c], sizeof all[0].cell[0][0], "%s", hier_node_at(h, hier_root(h))->label);
            }
    *most_general = holds(q, join_risk(all, ntab, hs, q));
    /* every full-domain level combination is a cut too: none may hold when the most general fails */
    int any = *most_general;
    for (int level = 0; level < 4 && !any; level++) {
        rel lv[MAXTAB];
        memcpy(lv, tabs, (size_t)ntab * sizeof *lv);
        lv[0] = *orig;
        for (int c = 0; c < lv[0].ncols; c++)
            if (generalized(&lv[0], hs, q, lv[0].name[c]))
                for (int r = 0; r < lv[0].nrows; r++) {
                    const hier *h = hier_of(hs, lv[0].name[c]);
                    const hier_node *leaf = node_of(h, orig->cell[r][c]);
                    uint32_t lvl = (uint32_t)level < hier_height(h) ? (uint32_t)level : hier_height(h);
                    snprintf(lv[0].cell[r][c], sizeof lv[0].cell[0][0], "%s",
                             hier_node_at(h, hier_ancestor(h, leaf->lo, lvl))->label);
                }
        any = holds(q, join_risk(lv, ntab, hs, q));
    }
    return any;
}

/* A random instance: n underlying persons; T1 = (a0, a1, cls), T2 = (a0
 * possibly generalized, b, y); with three tables also T3 = (a1 possibly
 * generalized, z). With y_current, y is T1's column instead of T2's. */
static void random_case(tu_rng *rng, int ntab, int iter, int y_current)
{
    const char *dir = tu_mkdtemp();
    hset hs = {0};
    int nleaves[2];
    for (int a = 0; a < 2; a++) {
        snprintf(hs.name[a], sizeof hs.name[a], "a%d", a);
        const char *p = tu_path(dir, a ? "h1.csv" : "h0.csv");
        nleaves[a] = tu_write_random_hierarchy(rng, p, a);
        ak_error err;
        assert_int_equal(hier_load(&hs.h[a], p, &err), 0);
    }
    hs.n = 2;
    const int n = 3 + (int)tu_below(rng, 10);
    rel t[MAXTAB];
    memset(t, 0, sizeof t);
    t[0] = (rel){.ncols = y_current ? 4 : 3, .nrows = n};
    strcpy(t[0].name[0], "a0"), strcpy(t[0].name[1], "a1"), strcpy(t[0].name[2], "cls");
    t[1] = (rel){.ncols = y_current ? 2 : 3, .nrows = n};
    strcpy(t[1].name[0], "a0"), strcpy(t[1].name[1], "b");
    strcpy(y_current ? t[0].name[3] : t[1].name[2], "y");
    t[2] = (rel){.ncols = 2, .nrows = n};
    strcpy(t[2].name[0], "a1"), strcpy(t[2].name[1], "z");
    for (int i = 0; i < n; i++) {
        int leaf[2];
        for (int a = 0; a < 2; a++) leaf[a] = (int)tu_below(rng, (uint64_t)nleaves[a]);
        snprintf(t[0].cell[i][0], 24, "v%d", leaf[0]);
        snprintf(t[0].cell[i][1], 24, "v%d", leaf[1]);
        snprintf(t[0].cell[i][2], 24, "c%d", (int)tu_below(rng, 2));
        /* the earlier releases describe the same persons, maybe generalized */
        for (int a = 0; a < 2; a++) {
            const hier *h = hs.h[a];
            uint32_t lvl = (uint32_t)tu_below(rng, 2);
            if (lvl > hier_height(h)) lvl = hier_height(h);
            char label[24];
            char leafname[24];
            snprintf(leafname, sizeof leafname, "v%d", leaf[a]);
            snprintf(label, sizeof label, "%s", hier_node_at(h, hier_ancestor(h, node_of(h, leafname)->lo, lvl))->label);
            strcpy(a ? t[2].cell[i][0] : t[1].cell[i][0], label);
        }
        snprintf(t[1].cell[i][1], 24, "b%d", (int)tu_below(rng, 2));
        snprintf(y_current ? t[0].cell[i][3] : t[1].cell[i][2], 24, "y%d", (int)tu_below(rng, 4));
        snprintf(t[2].cell[i][1], 24, "z%d", (int)tu_below(rng, 2));
    }
    for (int k = 0; k < ntab; k++) {
        char f[16];
        snprintf(f, sizeof f, "t%d.csv", k);
        rel_write(&t[k], tu_path(dir, f));
    }
    req q = {0};
    const int shape = (int)tu_below(rng, 3);
    q.x[q.nx++] = "a1";
    if (shape != 1) q.x[q.nx++] = "a0"; /* shape 1: a0 is a raw join attribute */
    if (shape != 2) q.x[q.nx++] = "b";
    if (ntab == 3) q.x[q.nx++] = "z";
    q.y = "y";
    q.linkability = (int)tu_below(rng, 2);
    if (q.linkability) {
        const double ps[] = {0.34, 0.5, 0.67, 0.75, 0.9};
        q.bound = ps[tu_below(rng, 5)];
        if (tu_below(rng, 2)) q.sensitive = "y0";
    } else {
        q.bound = 1 + (double)tu_below(rng, 4);
    }
    const char *out = tu_path(dir, "out.csv");
    int most_general;
    const int any = any_cut_valid(&t[0], t, ntab, &hs, &q, &most_general);
    const int rc = run(dir, ntab, &hs, &q, tu_below(rng, 2) ? "cls" : NULL, out);
    if (!most_general) {
        assert_int_equal(rc, ANONKIT_E_INELIGIBLE);
        assert_false(any); /* Corollary 4.2 */
        assert_null(tu_read_file(out, NULL)); /* nothing written */
    } else {
        if (rc != 0) fail_msg("iteration %d: expected success", iter);
        prove(&t[0], t, ntab, &hs, &q, out);
    }
    for (int a = 0; a < 2; a++) hier_free(hs.h[a]);
    tu_rmtree(dir);
}

static void test_random_two_releases(void **state)
{
    (void)state;
    tu_rng rng = {7};
    for (int i = 0; i < 150; i++) random_case(&rng, 2, i, 0);
}

static void test_random_three_releases(void **state)
{
    (void)state;
    tu_rng rng = {11};
    for (int i = 0; i < 100; i++) random_case(&rng, 3, i, 0);
}

/* Y in the current release (read with it, as the table's sensitive column). */
static void test_random_y_in_current(void **state)
{
    (void)state;
    tu_rng rng = {13};
    for (int i = 0; i < 150; i++) random_case(&rng, 2 + (int)tu_below(&rng, 2), i, 1);
}

/* One TDS4SA run on encoded input: the result and the partition. */
typedef struct tds_outcome {
    int rc;
    tds_result res;
    partition part;
} tds_outcome;

static void tds_outcome_run(tds_outcome *o, const tds_input *in)
{
    ak_error err;
    ak_err_clear(&err);
    memset(o, 0, sizeof *o);
    assert_int_equal(partition_init(&o->part, in->t->nrows, in->t->nqi, &err), 0);
    o->rc = tds_run(in, &o->part, &o->res, &err);
}

static void tds_outcome_free(tds_outcome *o)
{
    tds_result_free(&o->res);
    partition_free(&o->part);
}

/* The two outcomes are the same bit for bit: risk, specializations, cut, classes. */
static void expect_same_outcome(const tds_outcome *a, const tds_outcome *b, int iter)
{
    if (a->rc != b->rc) fail_msg("iteration %d: rc %d against the reference's %d", iter, a->rc, b->rc);
    if (a->rc < 0) return;
    if (memcmp(&a->res.risk, &b->res.risk, sizeof a->res.risk) != 0)
        fail_msg("iteration %d: risk %.17g against the reference's %.17g", iter, a->res.risk, b->res.risk);
    assert_int_equal(a->res.specializations, b->res.specializations);
    assert_int_equal(a->res.empty_join, b->res.empty_join);
    if (a->res.ncut != b->res.ncut || memcmp(a->res.cut, b->res.cut, a->res.ncut * sizeof *a->res.cut) != 0)
        fail_msg("iteration %d: another cut than the reference's", iter);
    assert_true(a->res.distortion_cat == b->res.distortion_cat && a->res.distortion_cont == b->res.distortion_cont);
    assert_int_equal(a->part.nclasses, b->part.nclasses);
    if (memcmp(a->part.class_of, b->part.class_of, a->part.nrows * sizeof *a->part.class_of) != 0)
        fail_msg("iteration %d: rows in other classes than the reference's", iter);
    assert_memory_equal(a->part.lo, b->part.lo, a->part.nclasses * a->part.nqi * sizeof *a->part.lo);
    assert_memory_equal(a->part.hi, b->part.hi, a->part.nclasses * a->part.nqi * sizeof *a->part.hi);
}

/* A random encoded instance for tds_run directly: T1 with categorical c0..c2
 * and numeric num (class cls), 1 to 3 earlier releases holding some of
 * c0..c2 as join attributes (the persons of T1, maybe generalized), maybe an
 * own X attribute and Y; Y in T1 or in releases, a key or not; anonymity or
 * linkability; sometimes an inconsistent pair. Every shape of [Wang06] §5.4 comes
 * up: Cases 1 and 4, the key cases, the general count, raw join attributes. */
static void random_encoded_case(tu_rng *rng, int iter)
{
    const char *dir = tu_mkdtemp();
    char hpath[3][4096];
    hier *hs[3];
    int nleaves[3];
    for (int a = 0; a < 3; a++) {
        char f[16];
        snprintf(f, sizeof f, "h%d.csv", a);
        snprintf(hpath[a], sizeof hpath[a], "%s", tu_path(dir, f));
        nleaves[a] = tu_write_random_hierarchy(rng, hpath[a], a);
        ak_error err;
        assert_int_equal(hier_load(&hs[a], hpath[a], &err), 0);
    }
    /* the reference counts the cross product of the matches of every release:
     * fewer rows with more releases keep it quick (also under the sanitizers) */
    const size_t nrel = 1 + tu_below(rng, 3);
    const size_t n = 5 + tu_below(rng, tu_below(rng, 2) ? 40 : nrel == 1 ? 395 : nrel == 2 ? 150 : 60);
    int leaf[400][3];      /* leaf names v<i> */
    uint32_t code[400][3]; /* their codes */
    FILE *f = fopen(tu_path(dir, "t1.csv"), "w");
    assert_non_null(f);
    fprintf(f, "c0,c1,c2,num,cls\n");
    for (size_t i = 0; i < n; i++) {
        for (int a = 0; a < 3; a++) leaf[i][a] = (int)tu_below(rng, (uint64_t)nleaves[a]);
        fprintf(f, "v%d,v%d,v%d,%d,k%d\n", leaf[i][0], leaf[i][1], leaf[i][2], (int)tu_below(rng, 20),
                (int)tu_below(rng, 3));
    }
    fclose(f);
    for (size_t i = 0; i < n; i++)
        for (int a = 0; a < 3; a++) {
            char label[16];
            snprintf(label, sizeof label, "v%d", leaf[i][a]);
            assert_int_equal(hier_find_leaf(hs[a], label, strlen(label), &code[i][a]), 0);
        }
    /* join attributes (a nonempty subset of c0..c2) and X1 (some of c0..c2, maybe num) */
    int join[3], inx[4], any_join = 0;
    for (int a = 0; a < 3; a++) any_join |= join[a] = (int)tu_below(rng, 2);
    if (!any_join) join[tu_below(rng, 3)] = 1;
    for (int a = 0; a < 3; a++) inx[a] = tu_below(rng, 3) != 0;
    inx[3] = (int)tu_below(rng, 2);
    if (!inx[0] && !inx[1] && !inx[2] && !inx[3]) inx[tu_below(rng, 4)] = 1;
    const char *names[5];
    const char *hp[5];
    size_t nqi = 0;
    uint32_t nx1 = 0, qi_of[4];
    static const char *const cols[4] = {"c0", "c1", "c2", "num"};
    for (int a = 0; a < 4; a++)
        if (inx[a]) qi_of[a] = (uint32_t)nqi, names[nqi] = cols[a], hp[nqi++] = a < 3 ? hpath[a] : NULL, nx1++;
    for (int a = 0; a < 3; a++)
        if (join[a] && !inx[a]) qi_of[a] = (uint32_t)nqi, names[nqi] = cols[a], hp[nqi++] = hpath[a];
    table_spec spec = {0};
    spec.path = tu_path(dir, "t1.csv");
    spec.display_name = spec.path;
    spec.delimiter = ',';
    spec.nqi = nqi;
    spec.qi_names = names;
    spec.hierarchy_paths = hp;
    spec.class_name = "cls";
    table *t = NULL;
    ak_error err;
    ak_err_clear(&err);
    if (table_load(&t, &spec, &err) != ANONKIT_OK) fail_msg("table_load: %s", err.message);
    uint32_t j1_qi[3], nj1 = 0, jattr[3]; /* join index -> QI, and -> attribute */
    for (int a = 0; a < 3; a++)
        if (join[a]) jattr[nj1] = (uint32_t)a, j1_qi[nj1++] = qi_of[a];
    /* the model and where Y lies: bit 0 T1, bit r + 1 release r */
    const int linkability = (int)tu_below(rng, 2);
    unsigned ywhere = 0;
    if (linkability) ywhere = 1u << tu_below(rng, nrel + 1);
    else
        while (!ywhere) ywhere = (unsigned)tu_below(rng, 1u << (nrel + 1));
    const int some_sensitive = (int)tu_below(rng, 2);
    /* Y of each table holding some: a key, or one of a few values; codes by first appearance */
    uint32_t *ycodes[4] = {0};
    unsigned char *ysens[4] = {0};
    uint32_t nyv[4] = {0};
    for (size_t tb = 0; tb <= nrel; tb++) {
        if (!(ywhere >> tb & 1)) continue;
        const int key = tu_below(rng, 3) == 0;
        const uint32_t range = key ? (uint32_t)n : 1 + (uint32_t)tu_below(rng, 5);
        uint32_t *map = malloc(range * sizeof *map), next = 0;
        ycodes[tb] = malloc(n * sizeof *ycodes[tb]);
        ysens[tb] = malloc(range);
        assert_true(map && ycodes[tb] && ysens[tb]);
        for (uint32_t y = 0; y < range; y++) map[y] = UINT32_MAX;
        for (size_t i = 0; i < n; i++) {
            const uint32_t raw = key ? (uint32_t)i : (uint32_t)tu_below(rng, range);
            if (map[raw] == UINT32_MAX) map[raw] = next++;
            ycodes[tb][i] = map[raw];
        }
        nyv[tb] = next;
        for (uint32_t y = 0; y < next; y++) ysens[tb][y] = (unsigned char)(!some_sensitive || tu_below(rng, 2));
        free(map);
    }
    tds_release rel[3];
    memset(rel, 0, sizeof rel);
    const hier *jh[3][3];
    for (size_t r = 0; r < nrel; r++) {
        tds_release *R = &rel[r];
        uint32_t ja[3], nj = 0;
        for (uint32_t j = 0; j < nj1; j++)
            if (tu_below(rng, 3)) ja[nj++] = j;
        if (!nj) ja[nj++] = (uint32_t)tu_below(rng, nj1);
        const int own_x = (int)tu_below(rng, 2);
        uint32_t njx = 0; /* its join attributes in X: those of T1 in X (a name in --x covers all copies) */
        for (uint32_t q = 0; q < nj; q++) njx += (uint32_t)inx[jattr[ja[q]]];
        R->nrows = n;
        R->nj = nj;
        R->jh = jh[r];
        R->jnode = malloc(n * nj * sizeof *R->jnode);
        R->common_j1 = malloc(nj * sizeof *R->common_j1);
        R->common_ji = malloc(nj * sizeof *R->common_ji);
        R->nx = njx + (uint32_t)own_x;
        R->xcode = malloc((n * R->nx + 1) * sizeof *R->xcode);
        assert_true(R->jnode && R->common_j1 && R->common_ji && R->xcode);
        R->join_in_x = njx == nj;
        for (uint32_t q = 0; q < nj; q++) {
            jh[r][q] = hs[jattr[ja[q]]];
            R->common_j1[q] = ja[q];
            R->common_ji[q] = q;
        }
        R->ncommon = nj;
        for (size_t i = 0; i < n; i++) {
            uint32_t x = 0;
            for (uint32_t q = 0; q < nj; q++) {
                const hier *h = jh[r][q];
                uint32_t lvl = (uint32_t)tu_below(rng, 2);
                if (lvl > hier_height(h)) lvl = hier_height(h);
                const uint32_t node = hier_ancestor(h, code[i][jattr[ja[q]]], lvl);
                R->jnode[i * nj + q] = node;
                if (inx[jattr[ja[q]]]) R->xcode[i * R->nx + x++] = node;
            }
            if (own_x) R->xcode[i * R->nx + x++] = (uint32_t)tu_below(rng, 3);
        }
        if (ywhere >> (r + 1) & 1) {
            R->y = ycodes[r + 1];
            R->ny = nyv[r + 1];
            R->y_sensitive = ysens[r + 1];
        }
        if (tu_below(rng, 4) == 0) { /* an inconsistent pair of leaves */
            const uint32_t q = (uint32_t)tu_below(rng, nj), j = (uint32_t)tu_below(rng, nj1);
            const hier *h1 = hs[jattr[j]], *hi = jh[r][q];
            const hier_node *a = hier_node_at(h1, hier_leaf_node(h1, (uint32_t)tu_below(rng, hier_leaf_count(h1))));
            const hier_node *b = hier_node_at(hi, hier_leaf_node(hi, (uint32_t)tu_below(rng, hier_leaf_count(hi))));
            R->pairs = malloc(sizeof *R->pairs);
            assert_non_null(R->pairs);
            R->pairs[0] = (tds_pair){j, q, a->lo, a->hi, b->lo, b->hi};
            R->npairs = 1;
        }
    }
    tds_input in = {.t = t, .nx1 = nx1, .nj1 = nj1, .j1_qi = j1_qi, .y1 = ycodes[0], .ny1 = nyv[0],
                    .y1_sensitive = ysens[0], .nreleases = nrel, .releases = rel,
                    .distortion = (int)tu_below(rng, 2)};
    if (linkability) {
        static const double ps[] = {0.34, 0.5, 0.67, 0.75, 0.9, 1};
        in.model = (xy_model){XY_LINKABILITY, 0, ps[tu_below(rng, 6)]};
    } else {
        in.model = (xy_model){XY_ANONYMITY, 1 + tu_below(rng, 6), 0};
    }
    tds_outcome fast, ref;
    tds_outcome_run(&fast, &in);
    in.reference = 1;
    tds_outcome_run(&ref, &in);
    expect_same_outcome(&fast, &ref, iter);
    tds_outcome_free(&fast);
    tds_outcome_free(&ref);
    for (size_t r = 0; r < nrel; r++) {
        free(rel[r].jnode);
        free(rel[r].xcode);
        free(rel[r].common_j1);
        free(rel[r].common_ji);
        free(rel[r].pairs);
    }
    for (size_t tb = 0; tb <= nrel; tb++) {
        free(ycodes[tb]);
        free(ysens[tb]);
    }
    table_free(t);
    for (int a = 0; a < 3; a++) hier_free(hs[a]);
    tu_rmtree(dir);
}

/* The shortcuts of tds.c (one scan for all views of a group, per-probe
 * summaries when pairs are unique) give exactly what the reference way (a
 * scan per view, every x through the X-tree) gives, down to the row order
 * of the pieces: a reset of linkability's a(x, y) counters that depended on
 * it was found this way. */
static void test_views_match_reference(void **state)
{
    (void)state;
    tu_rng rng = {29};
    for (int i = 0; i < 400; i++) random_encoded_case(&rng, i);
}

/* Table 1 of [Wang06]: T1 (Name, Job, Class) and T2 (Job, Disease), Pid unreleased. */
static void table1(const char *dir, hset *hs, rel t[2])
{
    tu_write_file(tu_path(dir, "job.csv"), "Banker;White-collar;*\nClerk;White-collar;*\nDriver;Blue-collar;*\nEngineer;Blue-collar;*\n");
    tu_write_file(tu_path(dir, "name.csv"), "Alice;*\nBob;*\nCathy;*\n");
    tu_write_file(tu_path(dir, "t0.csv"), "Name,Job,Class\nAlice,Banker,c1\nAlice,Banker,c1\nBob,Clerk,c2\nBob,Driver,c3\nCathy,Engineer,c4\n");
    tu_write_file(tu_path(dir, "t1.csv"), "Job,Disease\nBanker,Cancer\nBanker,Cancer\nClerk,HIV\nDriver,Cancer\nEngineer,HIV\n");
    ak_error err;
    memset(hs, 0, sizeof *hs);
    strcpy(hs->name[0], "Job");
    strcpy(hs->name[1], "Name");
    assert_int_equal(hier_load(&hs->h[0], tu_path(dir, "job.csv"), &err), 0);
    assert_int_equal(hier_load(&hs->h[1], tu_path(dir, "name.csv"), &err), 0);
    hs->n = 2;
    rel_read(&t[0], tu_path(dir, "t0.csv"));
    rel_read(&t[1], tu_path(dir, "t1.csv"));
}

static void test_table1(void **state)
{
    (void)state;
    const char *dir = tu_mkdtemp();
    hset hs;
    rel t[2];
    table1(dir, &hs, t);
    /* the join of the raw tables: (1) {Bob, HIV} has one person, (2) {Alice,
     * Cancer} four matches, (3) Alice -> Cancer with 100% confidence */
    req q = {.linkability = 1, .x = {"Name"}, .nx = 1, .y = "Disease", .bound = 1};
    assert_true(join_risk(t, 2, &hs, &q) == 1.0);
    req qa = {.x = {"Name"}, .nx = 1, .y = "Disease", .bound = 1};
    assert_true(join_risk(t, 2, &hs, &qa) == -1.0); /* someone is linked to one disease only */
    /* with X = {Name, Job} (both copies), Y = Disease: no way to 2-anonymity,
     * since T2's Clerk row carries HIV only (Corollary 4.2) */
    const char *out = tu_path(dir, "out.csv");
    req q2 = {.x = {"Name", "Job"}, .nx = 2, .y = "Disease", .bound = 2};
    assert_int_equal(run(dir, 2, &hs, &q2, "Class", out), ANONKIT_E_INELIGIBLE);
    assert_null(tu_read_file(out, NULL));
    /* with Job a join attribute outside X the lossy join protects: 2-anonymity holds at the top */
    req q3 = {.x = {"Name"}, .nx = 1, .y = "Disease", .bound = 2};
    int mg;
    assert_true(any_cut_valid(&t[0], t, 2, &hs, &q3, &mg) || !mg);
    int rc = run(dir, 2, &hs, &q3, "Class", out);
    if (rc == 0) prove(&t[0], t, 2, &hs, &q3, out);
    else assert_false(mg);
    /* linkability of Cancer from Name at most 0.8: 5 of the 7 matches at the top */
    req q4 = {.linkability = 1, .x = {"Name"}, .nx = 1, .y = "Disease", .bound = 0.8, .sensitive = "Cancer"};
    assert_int_equal(run(dir, 2, &hs, &q4, "Class", out), 0);
    prove(&t[0], t, 2, &hs, &q4, out);
    hier_free(hs.h[0]);
    hier_free(hs.h[1]);
    tu_rmtree(dir);
}

/* Runs anonkit_sequential over dir's cur.csv and prev.csv with `threads`
 * threads (shuffled output, seed 3) and returns the output file's text; the
 * report, without its timing, goes to *report. */
static char *run_threads(const char *dir, const char *threads, const char *y, const char *mode, const char *bound,
                         char **report)
{
    anonkit_job *job = anonkit_job_create();
    char out[4200], hname[4200], hjob[4200];
    snprintf(out, sizeof out, "%s", tu_path(dir, threads[0] == '1' ? "out1.csv" : "out2.csv"));
    snprintf(hname, sizeof hname, "name=%s", tu_path(dir, "name.csv"));
    snprintf(hjob, sizeof hjob, "job=%s", tu_path(dir, "job.csv"));
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_INPUT, tu_path(dir, "cur.csv")), 0);
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_PREVIOUS, tu_path(dir, "prev.csv")), 0);
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_OUTPUT, out), 0);
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_X, "name,job"), 0);
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_Y, y), 0);
    assert_int_equal(anonkit_job_set(job, mode[0] == 'l' ? ANONKIT_OPT_LINKABILITY : ANONKIT_OPT_ANONYMITY, bound), 0);
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_CLASS, "class"), 0);
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_HIERARCHY, hname), 0);
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_HIERARCHY, hjob), 0);
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_SEED, "3"), 0);
    assert_int_equal(anonkit_job_set(job, ANONKIT_OPT_THREADS, threads), 0);
    anonkit_result *result = NULL;
    if (anonkit_sequential(job, &result) != 0) fail_msg("anonkit_sequential: %s", anonkit_errmsg(job));
    char *json = strdup(anonkit_result_json(result));
    anonkit_result_free(result);
    assert_non_null(json);
    char *secs = strstr(json, "\"seconds\"");
    assert_non_null(secs);
    *secs = '\0';
    *report = json;
    anonkit_job_free(job);
    return tu_read_file(out, NULL);
}

/* Large releases are read, and the output written, on one thread or two
 * (the current release and the earlier one each read in two pieces, Y of
 * several current attributes through a separate read): the same output and
 * report either way, also when a quoted field in the middle of the earlier
 * release keeps it from being read in pieces. */
static void test_threads_same_result(void **state)
{
    (void)state;
    const char *dir = tu_mkdtemp();
    char dcopy[4096];
    snprintf(dcopy, sizeof dcopy, "%s", dir);
    tu_write_file(tu_path(dcopy, "job.csv"), "Banker;White-collar;*\nClerk;White-collar;*\nDriver;Blue-collar;*\n"
                                             "Engineer;Blue-collar;*\n");
    FILE *h = fopen(tu_path(dcopy, "name.csv"), "w");
    assert_non_null(h);
    for (int i = 0; i < 40; i++) fprintf(h, "n%02d;g%d;*\n", i, i / 8);
    fclose(h);
    static const char *const jobs[] = {"Banker", "Clerk", "Driver", "Engineer"};
    const size_t rows = 300000; /* either release about 10 MB: read in two pieces */
    for (int variant = 0; variant < 2; variant++) {
        tu_rng rng = {77};
        FILE *cur = fopen(tu_path(dcopy, "cur.csv"), "w"), *prev = fopen(tu_path(dcopy, "prev.csv"), "w");
        assert_non_null(cur);
        assert_non_null(prev);
        fputs("name,job,y2,y3,class,note\n", cur);
        fputs("job,disease,other\n", prev);
        for (size_t r = 0; r < rows; r++) {
            const unsigned name = (unsigned)tu_below(&rng, 40), job = (unsigned)tu_below(&rng, 4);
            fprintf(cur, "n%02u,%s,v%u,w%u,c%u,note %zu\n", name, jobs[job], (unsigned)tu_below(&rng, 30),
                    (unsigned)tu_below(&rng, 7), (unsigned)(name + job) % 3, r);
            const unsigned pj = (unsigned)tu_below(&rng, 4);
            if (variant == 1 && r == rows / 2) fprintf(prev, "%s,\"d%u\nx\",o%zu\n", jobs[pj], pj, r);
            else fprintf(prev, "%s,d%u,other value %zu-%u\n", jobs[pj], (unsigned)(pj + tu_below(&rng, 2)) % 5, r,
                         (unsigned)tu_below(&rng, 1000));
        }
        fclose(cur);
        fclose(prev);
        static const char *const ys[][3] = {{"disease", "l", "0.95"}, {"y2,y3", "a", "4"}};
        for (int c = 0; c < 2; c++) {
            char *r1, *r2;
            char *o1 = run_threads(dcopy, "1", ys[c][0], ys[c][1], ys[c][2], &r1);
            char *o2 = run_threads(dcopy, "2", ys[c][0], ys[c][1], ys[c][2], &r2);
            assert_non_null(o1);
            assert_non_null(o2);
            assert_string_equal(r1, r2);
            assert_true(strlen(o1) > rows * 10);
            if (strcmp(o1, o2) != 0) fail_msg("variant %d, y %s: outputs differ between one and two threads", variant,
                                              ys[c][0]);
            free(o1);
            free(o2);
            free(r1);
            free(r2);
        }
    }
    tu_rmtree(dcopy);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table1),
        cmocka_unit_test(test_random_two_releases),
        cmocka_unit_test(test_random_three_releases),
        cmocka_unit_test(test_random_y_in_current),
        cmocka_unit_test(test_views_match_reference),
        cmocka_unit_test(test_threads_same_result),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
