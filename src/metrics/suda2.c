/* suda2.c — special uniques: the minimal sample uniques (MSUs) of every
 * record up to M attributes and its SUDA and DIS-SUDA scores ([Elliot02];
 * the MSUs are those SUDA2 finds [Manning08]; scores as sdcMicro's suda2
 * with its original scores).
 *
 * A set S of attributes is a sample unique of record r when no other record
 * has r's values on S, and a minimal one when no proper subset of S is.
 * Uniqueness only grows with S, so S is minimal exactly when r is unique on S
 * and on none of the sets S \ {a}. The sets are visited by size, 1 to M; the
 * unique records of each set of the previous size are kept as bit sets, so a
 * set costs one grouping of the rows (a hash of its packed values) and one
 * look at its immediate subsets. */
#include "metrics/risk.h"

#include <stdlib.h>
#include <string.h>

#include "common/hash.h"

/* Most QIs SUDA2 accepts (the sets are bit masks of a table indexed by mask). */
#define SUDA_MAX_QI 24

typedef uint64_t word;
#define WORD_BITS 64

/* Unique records of the sets of one size, indexed by mask (NULL: not a set of that size). */
typedef struct level {
    word **unique;
} level;

static void level_free(level *l, size_t nmasks)
{
    if (!l->unique) return;
    for (size_t m = 0; m < nmasks; m++) free(l->unique[m]);
    free(l->unique);
    l->unique = NULL;
}

/* The number of distinct codes of each QI (largest code + 1). */
static void cardinalities(const uint32_t *codes, uint64_t nrows, unsigned nqi, uint64_t *card)
{
    for (unsigned q = 0; q < nqi; q++) card[q] = 1;
    for (uint64_t r = 0; r < nrows; r++)
        for (unsigned q = 0; q < nqi; q++)
            if ((uint64_t)codes[r * nqi + q] + 1 > card[q]) card[q] = (uint64_t)codes[r * nqi + q] + 1;
}

/* Marks in `unique` the records whose values on the attributes of mask are
 * shared by no other record. Values are packed into one 64-bit key when their
 * domains fit (mixed radix, exact); otherwise the bytes of the values are the key. */
static int unique_rows(const uint32_t *codes, uint64_t nrows, unsigned nqi, const uint64_t *card, uint32_t mask,
                       word *unique, uint32_t *group, uint32_t *count, ak_error *err)
{
    int packed = 1;
    uint64_t span = 1;
    for (unsigned q = 0; q < nqi; q++) {
        if (!(mask >> q & 1)) continue;
        if (span > UINT64_MAX / card[q]) packed = 0;
        else span *= card[q];
    }
    int rc = ANONKIT_OK;
    u64map map;
    strmap smap;
    memset(&map, 0, sizeof map);
    memset(&smap, 0, sizeof smap);
    if (packed ? u64map_init(&map, 1024) != 0 : strmap_init(&smap, 1024) != 0) return ak_err_nomem(err);
    uint32_t key_bytes[SUDA_MAX_QI];
    for (uint64_t r = 0; r < nrows; r++) {
        const uint32_t *row = codes + r * nqi;
        uint32_t id;
        int inserted;
        int fail;
        if (packed) {
            uint64_t key = 0;
            for (unsigned q = 0; q < nqi; q++)
                if (mask >> q & 1) key = key * card[q] + row[q];
            fail = u64map_intern(&map, key, &id, &inserted);
        } else {
            size_t len = 0;
            for (unsigned q = 0; q < nqi; q++)
                if (mask >> q & 1) key_bytes[len++] = row[q];
            fail = strmap_intern(&smap, (const char *)key_bytes, len * sizeof *key_bytes, &id, &inserted);
        }
        if (fail) {
            rc = ak_err_nomem(err);
            goto done;
        }
        if (inserted) count[id] = 0;
        count[id]++;
        group[r] = id;
    }
    memset(unique, 0, (size_t)((nrows + WORD_BITS - 1) / WORD_BITS) * sizeof *unique);
    for (uint64_t r = 0; r < nrows; r++)
        if (count[group[r]] == 1) unique[r / WORD_BITS] |= (word)1 << (r % WORD_BITS);
done:
    if (packed) u64map_free(&map);
    else strmap_free(&smap);
    return rc;
}

/* The SUDA score of an MSU of k attributes among nqi, up to size M ([Elliot02]):
 * prod_{i=k}^{M-1} (nqi - i). */
static double msu_score(unsigned k, unsigned nqi, unsigned max_size)
{
    double s = 1;
    for (unsigned i = k; i < max_size; i++) s *= (double)(nqi - i);
    return s;
}

void risk_suda_free(risk_suda *s)
{
    free(s->msus);
    free(s->score);
    free(s->dis);
    memset(s, 0, sizeof *s);
}

int risk_suda2(const uint32_t *codes, uint64_t nrows, unsigned nqi, unsigned max_size, double dis_fraction,
               risk_suda *out, ak_error *err)
{
    memset(out, 0, sizeof *out);
    if (nqi == 0 || nqi > SUDA_MAX_QI)
        return ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0, "--suda works with 1 to %d quasi-identifiers, not %u",
                          SUDA_MAX_QI, nqi);
    if (max_size < 1 || max_size > nqi)
        return ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0,
                          "--suda %u is more attributes than the %u quasi-identifiers", max_size, nqi);
    out->max_size = max_size;
    out->nrows = nrows;
    const size_t nmasks = (size_t)1 << nqi, nwords = (size_t)((nrows + WORD_BITS - 1) / WORD_BITS);
    uint64_t card[SUDA_MAX_QI];
    cardinalities(codes, nrows, nqi, card);
    out->msus = calloc(max_size, sizeof *out->msus);
    out->score = calloc(nrows ? nrows : 1, sizeof *out->score);
    out->dis = calloc(nrows ? nrows : 1, sizeof *out->dis);
    uint32_t *group = malloc((nrows ? nrows : 1) * sizeof *group);
    uint32_t *count = malloc((nrows ? nrows : 1) * sizeof *count);
    word *fresh = malloc((nwords ? nwords : 1) * sizeof *fresh);
    level prev = {0}, cur = {0};
    int rc = ANONKIT_OK;
    if (!out->msus || !out->score || !out->dis || !group || !count || !fresh) {
        rc = ak_err_nomem(err);
        goto done;
    }
    for (unsigned k = 1; k <= max_size; k++) {
        if (!(cur.unique = calloc(nmasks, sizeof *cur.unique))) {
            rc = ak_err_nomem(err);
            goto done;
        }
        const double score = msu_score(k, nqi, max_size);
        for (uint32_t mask = 1; mask < nmasks; mask++) {
            if ((unsigned)__builtin_popcount(mask) != k) continue;
            word *u = malloc((nwords ? nwords : 1) * sizeof *u);
            if (!u) {
                rc = ak_err_nomem(err);
                goto done;
            }
            cur.unique[mask] = u;
            if ((rc = unique_rows(codes, nrows, nqi, card, mask, u, group, count, err)) < 0) goto done;
            /* minimal: unique here and on no immediate subset */
            memcpy(fresh, u, nwords * sizeof *fresh);
            if (k > 1)
                for (unsigned q = 0; q < nqi; q++)
                    if (mask >> q & 1) {
                        const word *sub = prev.unique[mask & ~(1u << q)];
                        for (size_t w = 0; w < nwords; w++) fresh[w] &= ~sub[w];
                    }
            for (size_t w = 0; w < nwords; w++)
                for (word bits = fresh[w]; bits; bits &= bits - 1) {
                    const uint64_t r = (uint64_t)w * WORD_BITS + (unsigned)__builtin_ctzll(bits);
                    out->score[r] += score;
                    out->msus[k - 1]++;
                }
        }
        level_free(&prev, nmasks);
        prev = cur;
        cur.unique = NULL;
    }
    double total = 0;
    for (uint64_t r = 0; r < nrows; r++) {
        total += out->score[r];
        if (out->score[r] > 0) out->records_with_msu++;
        if (out->score[r] > out->max_score) out->max_score = out->score[r];
    }
    out->mean_score = nrows ? total / (double)nrows : 0;
    for (uint64_t r = 0; r < nrows; r++) {
        out->dis[r] = total > 0 ? dis_fraction * out->score[r] / total : 0;
        if (out->dis[r] > out->max_dis) out->max_dis = out->dis[r];
    }
done:
    level_free(&prev, nmasks);
    level_free(&cur, nmasks);
    free(group);
    free(count);
    free(fresh);
    if (rc < 0) risk_suda_free(out);
    return rc;
}
