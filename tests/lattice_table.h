/* lattice_table.h — random tables with hierarchies for the lattice tests
 * (test_incognito.c, test_risk_model.c, test_local.c): up to MAX_QI quasi-identifiers,
 * numeric ones with interval hierarchies, categorical ones with random
 * hierarchies, and the values each row holds, so that a test can compute
 * every lattice node's classes itself. */
#ifndef AK_TESTS_LATTICE_TABLE_H
#define AK_TESTS_LATTICE_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "anonkit/anonkit.h"
#include "core/table.h"
#include "testutil.h"

#define MAX_QI 4
#define MAX_ROWS 200
#define LATTICE_MAX_LEVELS 8 /* levels of a QI's hierarchy, root included, at most */

typedef struct gen_table {
    size_t nrows;
    int nqi;
    int numeric[MAX_QI];          /* numeric values with an interval hierarchy (--numeric) */
    char hier_path[MAX_QI][4096];
    int value[MAX_ROWS][MAX_QI];  /* leaf index (categorical) or the number (numeric) */
    int sensitive[MAX_ROWS];
    char csv_path[4096];
} gen_table;

/* Writes an ARX interval hierarchy of the integers 0..n-1 to path: `levels`
 * levels of widths 2, 4, 8 ... below "*", leaves in ascending order or, with
 * reversed, descending. */
void lattice_write_interval_hierarchy(const char *path, int n, int levels, int reversed);
/* A random table in folder dir (its CSV and hierarchy files) into *g. */
void lattice_generate(tu_rng *rng, const char *dir, gen_table *g);
/* Loads g as the library does (QIs a0.., identifier id, sensitive s). */
int lattice_load(const gen_table *g, table **t);
/* Leaf code of row r in QI q (independent of the table's numeric codes). */
uint32_t lattice_leaf_of(const gen_table *g, const table *t, size_t r, int q);
/* Per QI, level and row: the NCP of the row's ancestor at that level, as the
 * box of table codes it covers (categorical: the hierarchy node's leaves;
 * numeric: the row codes present under it), by brute force row by row. */
void lattice_row_ncp(const gen_table *g, const table *t, double ncp[MAX_QI][LATTICE_MAX_LEVELS][MAX_ROWS]);
/* Sets option o of job to v, failing the test with the library's message. */
void lattice_set(anonkit_job *job, anonkit_option o, const char *v);
/* A new job over g for `algorithm`, publishing to out: g's QIs with their
 * hierarchies (numeric ones as --numeric), identifier id, sensitive s, rows
 * kept in input order. The caller adds the privacy model. */
anonkit_job *lattice_job(const gen_table *g, const char *algorithm, const char *out);

/* One random round: a fresh folder (*dir, until the next tu_mkdtemp), a
 * random table in it (lattice_generate into *g) and that table loaded
 * (lattice_load), which the caller frees with lattice_round_end. */
table *lattice_round(tu_rng *rng, const char **dir, gen_table *g);
/* Frees the round's table (NULL allowed) and removes its folder. */
void lattice_round_end(table *t, const char *dir);
/* Every node of t's generalization lattice (level vectors of t->nqi
 * entries, at most cap of them, into out), in order of height, then
 * lexicographically: the order of Incognito's search [LeFevre05]. */
size_t lattice_all_nodes(const table *t, uint32_t *out, size_t cap);
/* Of the n nodes (nqi levels each) of which is_anon[i] marks the anonymous
 * ones: the anonymous nodes into anon (*na of them) and the k-minimal ones
 * into minimal (*nm), both in the nodes' order. k-minimal: anonymous, with
 * no anonymous node one level lower in one QI [LeFevre05]. */
void lattice_anonymous_and_minimal(const uint32_t *nodes, size_t n, uint32_t nqi, const unsigned char *is_anon,
                                   uint32_t *anon, size_t *na, uint32_t *minimal, size_t *nm);
/* Every row of the published file out: each QI's label a node of its
 * hierarchy above the row's own value in g (rows of all '*' are skipped when
 * `suppressed` rows were). `what` names the case in failure messages. */
void lattice_assert_labels_cover(const gen_table *g, const char *out, uint64_t suppressed, const char *what);

#endif
