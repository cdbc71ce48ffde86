/* table_out.c — the one writer's second destination (docs/ARCHITECTURE.md
 * §3 step 3, docs/python.md): a published table in memory, built column by
 * column instead of CSV text. The rows, their order (the same shuffle with
 * the same seed), the columns and every value are those publish_write writes
 * for the same run: a QI column holds each class's published value
 * (formatted once per class exactly as format.c formats it, unescaped), in
 * dictionary form (the distinct values and a code per row); a column copied
 * through is gathered from the input table by row with its own type
 * (io/memtable_rows.c), without formatting. Kinds follow the rule of the
 * "table:" sink (io/memtable.h), so that the table equals what reading the
 * published CSV back would give. */
#include "publish/publish_internal.h"

#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "common/parallel.h"
#include "core/recode.h"
#include "io/memtable.h"

/* The published value of QI q for class c (star: a suppressed row) into
 * *text / *len, as format_class (format.c) formats it before escaping. */
static int class_label(const publisher *pub, size_t c, int star, uint32_t q, strbuf *value, char *num,
                       const char **text, size_t *len)
{
    *text = RECODE_SUPPRESSED;
    *len = 1;
    if (star) return 0;
    const table *t = pub->t;
    if (pub->int_range[q]) {
        const uint32_t lo = partition_lo(pub->p, c)[q], hi = partition_hi(pub->p, c)[q];
        *len = recode_int_range(pub->style, lo, hi, t->qi[q].values[lo], t->qi[q].values[hi], num);
        *text = num;
        return 0;
    }
    if (recode_class_text(t, pub->p, pub->means, pub->style, c, q, value) != 0) return -1;
    *text = value->data ? value->data : "";
    *len = value->len;
    return 0;
}

/* Output column of QI q: the distinct published values of the classes (and,
 * when star, of suppressed rows: only when one is written, so that the
 * column's values are those its rows use without a pass to drop the others
 * in memtable_add_coded) and each written row's code, into out. */
static int qi_column(const publisher *pub, uint32_t q, const uint32_t *order, size_t nwrite, int star,
                     anonkit_table *out, ak_error *err)
{
    const table *t = pub->t;
    const size_t nc = pub->p->nclasses;
    strmap values;
    if (strmap_init(&values, nc + 2) != 0) return ak_err_nomem(err);
    int32_t *class_code = malloc((nc + 1) * sizeof *class_code); /* the last: suppressed rows */
    int32_t *codes = malloc((nwrite ? nwrite : 1) * sizeof *codes);
    int64_t *off = NULL;
    char *bytes = NULL;
    strbuf value = {0};
    char num[64];
    int rc = class_code && codes ? ANONKIT_OK : ak_err_nomem(err);
    if (class_code) class_code[nc] = -1; /* (no written row is suppressed unless star) */
    for (size_t c = 0; c < nc + (star ? 1 : 0) && rc == ANONKIT_OK; c++) {
        const char *text;
        size_t len;
        uint32_t id;
        if (class_label(pub, c, c == nc, q, &value, num, &text, &len) != 0) rc = ak_err_nomem(err);
        else if (!len) class_code[c] = -1; /* an empty value reads back as missing */
        else if (strmap_intern(&values, text, len, &id, NULL) != 0) rc = ak_err_nomem(err);
        else class_code[c] = (int32_t)id;
    }
    strbuf_free(&value);
    const uint32_t nd = values.count;
    if (rc == ANONKIT_OK) {
        size_t total = 0;
        for (uint32_t v = 0; v < nd; v++) total += strmap_key_len(&values, v);
        off = malloc(((size_t)nd + 1) * sizeof *off);
        bytes = malloc(total + CSV_FIELD_READABLE);
        if (!off || !bytes) rc = ak_err_nomem(err);
    }
    if (rc == ANONKIT_OK) {
        off[0] = 0;
        for (uint32_t v = 0; v < nd; v++) {
            const uint32_t len = strmap_key_len(&values, v);
            memcpy(bytes + off[v], strmap_key(&values, v), len);
            off[v + 1] = off[v] + len;
        }
        memset(bytes + off[nd], 0, CSV_FIELD_READABLE);
        const uint32_t *class_of = pub->p->class_of;
        for (size_t i = 0; i < nwrite; i++) {
            const uint32_t cls = class_of[order[i]];
            codes[i] = class_code[cls == PARTITION_SUPPRESSED ? nc : cls];
        }
        rc = memtable_add_coded(out, t->column_names[t->qi[q].column], codes, nwrite, off, bytes, nd, err);
        codes = NULL; /* (taken, or freed on failure) */
        off = NULL;
        bytes = NULL;
    }
    strmap_free(&values);
    free(class_code);
    free(codes);
    free(off);
    free(bytes);
    return rc;
}

/* The output columns j with j % step == first, built into a table of their
 * own (one of the two threads of publish_table). */
typedef struct column_job {
    const publisher *pub;
    const uint32_t *order, *unit_of; /* unit_of: per output column, its copied unit */
    size_t nwrite;
    int star; /* a suppressed row is written */
    uint32_t first, step;
    anonkit_table *cols;
    int rc;
    ak_error err;
} column_job;

static void *build_columns(void *arg)
{
    column_job *job = arg;
    const publisher *pub = job->pub;
    job->rc = ANONKIT_OK;
    for (uint32_t j = job->first; j < pub->nout && job->rc == ANONKIT_OK; j += job->step)
        job->rc = pub->out_qi[j] >= 0
                      ? qi_column(pub, (uint32_t)pub->out_qi[j], job->order, job->nwrite, job->star, job->cols,
                                  &job->err)
                      : memtable_add_gathered(job->cols, pub->t->mem, pub->copied_col[job->unit_of[j]], job->order,
                                              job->nwrite, &job->err);
    return NULL;
}

int publish_table(const table *t, const partition *p, const publish_opts *opts, anonkit_table **out,
                  publish_stats *stats, ak_error *err)
{
    *out = NULL;
    memset(stats, 0, sizeof *stats);
    if (!t->mem) return ak_err_set(err, ANONKIT_E_INTERNAL, NULL, 0, 0, "publish_table: the input is no table");
    if (opts->style == RECODE_MEAN && !opts->means)
        return ak_err_set(err, ANONKIT_E_INTERNAL, NULL, 0, 0, "publish_table: the mean style needs the class means");
    const size_t n = t->nrows;
    if (n > UINT32_MAX)
        return ak_err_set(err, ANONKIT_E_INTERNAL, NULL, 0, 0, "publish_table: more rows than 32-bit row numbers hold");
    publisher pub;
    int rc = publisher_setup(&pub, t, opts, 0, err);
    pub.p = p;
    uint32_t *order = NULL, *unit_of = NULL;
    anonkit_table *built = NULL;
    if (rc < 0) goto done;
    if (!(pub.int_range = calloc(t->nqi ? t->nqi : 1, 1))) { rc = ak_err_nomem(err); goto done; }
    for (uint32_t q = 0; q < t->nqi; q++) pub.int_range[q] = (unsigned char)recode_is_int_range(t, p, pub.style, q);
    /* the rows in writing order: publish_write's, with the same seed */
    if (!(order = malloc((n ? n : 1) * sizeof *order))) { rc = ak_err_nomem(err); goto done; }
    ak_rng rng;
    ak_rng_seed(&rng, opts->seed);
    const size_t nwrite = publish_order_rows(p->class_of, n, opts, &rng, order, stats);
    if (!(built = anonkit_table_create()) || !(unit_of = calloc(pub.nout + 1, sizeof *unit_of))) {
        rc = ak_err_nomem(err);
        goto done;
    }
    for (uint32_t j = 0, unit = 0; j < pub.nout; j++)
        if (pub.out_qi[j] < 0) unit_of[j] = unit++;
    /* the columns are independent: every other one on a second thread, into a
     * table of its own, then moved into the output in order */
    const unsigned nthreads = opts->threads > 1 && pub.nout > 1 ? 2 : 1;
    column_job jobs[2];
    memset(jobs, 0, sizeof jobs);
    for (unsigned w = 0; w < nthreads; w++) {
        jobs[w] = (column_job){.pub = &pub, .order = order, .unit_of = unit_of, .nwrite = nwrite,
                               .star = stats->suppressed && !opts->drop_suppressed, .first = w,
                               .step = nthreads, .cols = anonkit_table_create()};
        if (!jobs[w].cols) rc = ak_err_nomem(err);
    }
    if (rc == ANONKIT_OK) ak_run_parts(jobs, sizeof *jobs, nthreads, build_columns);
    for (unsigned w = 0; w < nthreads && rc == ANONKIT_OK; w++)
        if (jobs[w].rc < 0) {
            rc = jobs[w].rc;
            *err = jobs[w].err;
        }
    for (uint32_t j = 0; j < pub.nout && rc == ANONKIT_OK; j++)
        rc = memtable_move_column(built, jobs[j % nthreads].cols, j / nthreads, err);
    for (unsigned w = 0; w < nthreads; w++) anonkit_table_free(jobs[w].cols);
    if (rc == ANONKIT_OK) rc = ak_progress_add(opts->progress, nwrite, 0, err);
done:
    publisher_free(&pub);
    free(order);
    free(unit_of);
    if (rc < 0) {
        anonkit_table_free(built);
        return rc;
    }
    *out = built;
    return ANONKIT_OK;
}
