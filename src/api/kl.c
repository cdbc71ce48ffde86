/* kl.c — `anonkit metrics --kl-level i`: reads a published file's boxes and
 * sensitive values and measures the KL-divergence of its datacube against the
 * original's (001 §6.3; src/metrics/kl.c). */
#include "api/kl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "io/csv.h"
#include "metrics/kl.h"

/* Index of the header field named `name`, or -1. */
static int header_index(const csv_record *header, const char *name)
{
    const size_t len = strlen(name);
    for (uint32_t c = 0; c < header->count; c++)
        if (header->fields[c].len == len && !memcmp(header->fields[c].data, name, len)) return (int)c;
    return -1;
}

int job_kl_metric(anonkit_job *job, const table *t, const char *path, const char *shown, json_t *root)
{
    ak_error *err = &job->err;
    if (!job->sensitive)
        return ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0, "--kl-level needs the sensitive column (--sensitive)");
    const uint32_t nqi = t->nqi;
    csv_reader *reader = NULL;
    uint32_t *lo = NULL, *hi = NULL, *sa = NULL;
    size_t n = 0, cap = 0;
    int col[nqi ? nqi : 1], scol;
    int rc = csv_reader_open(&reader, path, job->delimiter, err);
    csv_record rec;
    if (rc >= 0 && (rc = csv_read(reader, &rec, err)) == 0)
        rc = ak_err_set(err, ANONKIT_E_INPUT, shown, 1, 0, "the file is empty: a header row is needed");
    if (rc < 0) goto done;
    for (uint32_t q = 0; q < nqi; q++)
        if ((col[q] = header_index(&rec, t->qi[q].name)) < 0) {
            rc = ak_err_set(err, ANONKIT_E_USAGE, shown, 1, 0, "no column named '%s' (given as a quasi-identifier)",
                            t->qi[q].name);
            goto done;
        }
    if ((scol = header_index(&rec, job->sensitive)) < 0) {
        rc = ak_err_set(err, ANONKIT_E_USAGE, shown, 1, 0, "no column named '%s' (given as the sensitive attribute)",
                        job->sensitive);
        goto done;
    }
    const uint32_t ncolumns = rec.count;
    while ((rc = csv_read(reader, &rec, err)) > 0) {
        if (rec.count != ncolumns) {
            rc = ak_err_set(err, ANONKIT_E_INPUT, shown, rec.line, 0, "expected %u fields as in the header, found %u",
                            ncolumns, rec.count);
            goto done;
        }
        if (n == cap) {
            cap = cap ? cap * 2 : 4096;
            uint32_t *l2 = realloc(lo, cap * (nqi ? nqi : 1) * sizeof *lo);
            if (l2) lo = l2;
            uint32_t *h2 = realloc(hi, cap * (nqi ? nqi : 1) * sizeof *hi);
            if (h2) hi = h2;
            uint32_t *s2 = realloc(sa, cap * sizeof *sa);
            if (s2) sa = s2;
            if (!l2 || !h2 || !s2) {
                rc = ak_err_nomem(err);
                goto done;
            }
        }
        for (uint32_t q = 0; q < nqi; q++) {
            const csv_field *f = &rec.fields[col[q]];
            if (metrics_range_of_published(t, q, f->data, f->len, &lo[n * nqi + q], &hi[n * nqi + q]) != 0) {
                rc = ak_err_set(err, ANONKIT_E_INPUT, shown, rec.line, col[q] + 1, "'%.*s' is not a published value of '%s'",
                                (int)(f->len > 80 ? 80 : f->len), f->data, t->qi[q].name);
                goto done;
            }
        }
        const csv_field *f = &rec.fields[scol];
        if ((sa[n] = strmap_find(&t->sensitive_dict, f->data, f->len)) == AK_NOT_FOUND) {
            rc = ak_err_set(err, ANONKIT_E_INPUT, shown, rec.line, scol + 1,
                            "sensitive value '%.*s' does not occur in the original", (int)(f->len > 80 ? 80 : f->len),
                            f->data);
            goto done;
        }
        n++;
    }
    if (rc < 0) goto done;
    const kl_published pub = {n, lo, hi, sa};
    double mean;
    size_t groupbys;
    if ((rc = metrics_kl_divergence(t, &pub, job->kl_level, &mean, &groupbys, err)) < 0) goto done;
    json_object_set_new(root, "kl_level", json_integer((json_int_t)job->kl_level));
    json_object_set_new(root, "kl_groupbys", json_integer((json_int_t)groupbys));
    /* +inf (a cell the estimate misses) has no JSON number: null */
    json_object_set_new(root, "kl_divergence", isfinite(mean) ? json_real(mean) : json_null());
    rc = ANONKIT_OK;
done:
    csv_reader_free(reader);
    free(lo), free(hi), free(sa);
    if (rc < 0 && !strcmp(err->file, path)) snprintf(err->file, sizeof err->file, "%s", shown);
    return rc;
}
