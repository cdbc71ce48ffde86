/* mpi_shard.c — anonkit-mpi's input (docs/distributed.md §2): a folder or glob
 * of part files, one header each, which ranks take whole and in order,
 * balanced by size; or one CSV file read in byte ranges, each rank from the
 * first row boundary after its offset (quote-aware: when the file holds a
 * quote anywhere, rank 0 finds the boundaries by one sequential scan — the
 * slower, always correct path). Each shard is loaded by the library's loader
 * (core/table.c), which checks every row; then the dictionaries of every
 * shard are gathered and merged (core/table_merge.c) and every code mapped to
 * the whole table's. */
#include "mpi/mpi_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/table_merge.h"
#include "io/csv.h"

/* One file this rank loaded. */
typedef struct mp_piece {
    table *t;
    uint32_t d, ncopied;
    uint32_t *copied_col;
    size_t n, cap;
    uint32_t *codes;  /* n * (d + 2): d codes, the sensitive and class codes */
    strbuf copied;
    size_t *ends;     /* n * ncopied field ends */
    size_t nends, ends_cap;
    strbuf pack;
} mp_piece;

static void piece_free(mp_piece *p)
{
    table_free(p->t);
    free(p->copied_col);
    free(p->codes);
    strbuf_free(&p->copied);
    free(p->ends);
    strbuf_free(&p->pack);
    memset(p, 0, sizeof *p);
}

static int sink_start(void *ctx, const table *t, unsigned pieces, ak_error *err)
{
    (void)pieces;
    mp_piece *p = ctx;
    p->n = 0;
    p->nends = 0;
    p->copied.len = 0;
    if (p->copied_col) return ANONKIT_OK;
    p->d = t->nqi;
    if (!(p->copied_col = malloc((t->ncolumns + 1) * sizeof *p->copied_col))) return ak_err_nomem(err);
    for (uint32_t c = 0; c < t->ncolumns; c++) {
        if (t->roles[c] == ROLE_IDENTIFIER) continue;
        int qi = 0;
        for (uint32_t q = 0; q < t->nqi; q++) qi |= t->qi[q].column == c;
        if (!qi) p->copied_col[p->ncopied++] = c;
    }
    return ANONKIT_OK;
}

static int sink_row(void *ctx, const table *t, unsigned piece, size_t slot, const csv_record *rec, ak_error *err)
{
    (void)piece;
    mp_piece *p = ctx;
    const size_t w = (size_t)p->d + 2;
    if (p->n == p->cap) {
        const size_t cap = p->cap ? 2 * p->cap : 1024;
        uint32_t *c = realloc(p->codes, cap * w * sizeof *c);
        if (!c) return ak_err_nomem(err);
        p->codes = c;
        p->cap = cap;
    }
    uint32_t *row = p->codes + p->n * w;
    for (uint32_t q = 0; q < p->d; q++) row[q] = t->qi[q].codes[slot];
    row[p->d] = t->sensitive_column >= 0 ? t->sensitive_codes[slot] : 0;
    row[p->d + 1] = t->class_column >= 0 ? t->class_codes[slot] : 0;
    if (ak_reserve((void **)&p->ends, &p->ends_cap, p->nends + p->ncopied, sizeof *p->ends) != 0) return ak_err_nomem(err);
    for (uint32_t j = 0; j < p->ncopied; j++) {
        const csv_field *f = &rec->fields[p->copied_col[j]];
        if (strbuf_reserve(&p->copied, csv_escaped_max(f->len)) != 0) return ak_err_nomem(err);
        p->copied.len += csv_escape(p->copied.data + p->copied.len, f->data, f->len, t->delimiter);
        p->ends[p->nends++] = p->copied.len;
    }
    p->n++;
    return ANONKIT_OK;
}

/* Loads one file (shown as `display`) into p, or only the rows of its byte
 * range [range[0], range[0] + range[1]) whose first row is on line range[2]
 * (range NULL: every row); numeric codes ranked, the dictionaries packed. */
static int load_piece(mp_ctx *c, const char *path, const char *display, const uint64_t *range, mp_piece *p)
{
    table_spec spec;
    job_spec_storage st;
    memset(&st, 0, sizeof st);
    int rc = job_table_spec(c->job, path, display, &spec, &st);
    if (rc < 0) {
        c->err = c->job->err;
        job_spec_free(&st);
        return rc;
    }
    spec.threads = 1;
    spec.read_once = 1;
    spec.sink_start = sink_start;
    spec.row_sink = sink_row;
    spec.sink_ctx = p;
    if (range) {
        spec.body_range = 1;
        spec.body_offset = range[0];
        spec.body_length = range[1];
        spec.body_first_line = (long)range[2];
    }
    rc = table_load(&p->t, &spec, &c->err);
    job_spec_free(&st);
    if (rc < 0) return rc;
    for (uint32_t q = 0; q < p->d; q++) /* (each shard's dictionary would reserve its own missing code) */
        if (p->t->qi[q].kind == ATTR_NUMERIC && p->t->qi[q].has_missing)
            return ak_err_set(&c->err, ANONKIT_E_INPUT, display, 0, 0,
                              "numeric quasi-identifier '%s' holds missing values: anonkit-mpi does not take missing "
                              "numbers yet; give the column an interval hierarchy, whose leaf NULL takes them "
                              "(anonkit hierarchy INPUT --column COL --interval W ...), or use anonkit",
                              p->t->qi[q].name);
    const size_t w = (size_t)p->d + 2;
    for (uint32_t q = 0; q < p->d; q++)
        if (p->t->qi[q].kind == ATTR_NUMERIC)
            for (size_t r = 0; r < p->n; r++) p->codes[r * w + q] = table_numeric_rank(p->t, q, p->codes[r * w + q]);
    return table_dict_pack(p->t, &p->pack, &c->err);
}

/* ---- which files */

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void free_list(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++) free(v[i]);
    free(v);
}

/* The part files of a folder (its *.csv, by name) or a glob; *single when
 * input is one plain file. */
static int list_inputs(mp_ctx *c, const char *input, char ***out, size_t *n, int *single)
{
    struct stat sb;
    *out = NULL;
    *n = 0;
    *single = 0;
    char **v = NULL;
    size_t cnt = 0, cap = 0;
    if (stat(input, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        DIR *dir = opendir(input);
        if (!dir) return ak_err_set(&c->err, ANONKIT_E_IO, input, 0, 0, "cannot open the folder: %s", strerror(errno));
        struct dirent *e;
        while ((e = readdir(dir))) {
            const size_t len = strlen(e->d_name);
            if (len < 5 || strcmp(e->d_name + len - 4, ".csv") != 0 || e->d_name[0] == '.') continue;
            if (ak_reserve((void **)&v, &cap, cnt + 1, sizeof *v) != 0 ||
                !(v[cnt] = malloc(strlen(input) + len + 2))) {
                closedir(dir);
                free_list(v, cnt);
                return ak_err_nomem(&c->err);
            }
            sprintf(v[cnt++], "%s/%s", input, e->d_name);
        }
        closedir(dir);
        qsort(v, cnt, sizeof *v, cmp_str);
    } else if (strpbrk(input, "*?[")) {
        glob_t g;
        const int gr = glob(input, 0, NULL, &g);
        if (gr != 0 && gr != GLOB_NOMATCH) return ak_err_set(&c->err, ANONKIT_E_IO, input, 0, 0, "cannot expand the pattern");
        for (size_t i = 0; gr == 0 && i < g.gl_pathc; i++) {
            if (ak_reserve((void **)&v, &cap, cnt + 1, sizeof *v) != 0 || !(v[cnt] = strdup(g.gl_pathv[i]))) {
                globfree(&g);
                free_list(v, cnt);
                return ak_err_nomem(&c->err);
            }
            cnt++;
        }
        if (gr == 0) globfree(&g);
    } else {
        if (stat(input, &sb) != 0) return ak_err_set(&c->err, ANONKIT_E_IO, input, 0, 0, "cannot open: %s", strerror(errno));
        if (!(v = malloc(sizeof *v)) || !(v[0] = strdup(input))) {
            free(v);
            return ak_err_nomem(&c->err);
        }
        cnt = 1;
        *single = 1;
    }
    if (!cnt) return ak_err_set(&c->err, ANONKIT_E_USAGE, input, 0, 0, "no part files (*.csv) found");
    *out = v;
    *n = cnt;
    return ANONKIT_OK;
}

/* ---- byte ranges of one file */

/* The end of the record starting at `at` and the first record boundary at or
 * after each of offs[0..n) (ascending), scanning from `at` with the quote state
 * of a record start. */
static int scan_boundaries(mp_ctx *c, int fd, uint64_t size, uint64_t at, const uint64_t *offs, int n, uint64_t *bound,
                           const char *path)
{
    char buf[1 << 16];
    int inq = 0, i = 0;
    while (i < n && offs[i] <= at) bound[i++] = at;
    uint64_t pos = at;
    while (pos < size && i < n) {
        const ssize_t got = pread(fd, buf, sizeof buf, (off_t)pos);
        if (got <= 0) return ak_err_set(&c->err, ANONKIT_E_IO, path, 0, 0, "cannot read: %s", strerror(errno));
        for (ssize_t j = 0; j < got && i < n; j++) {
            if (buf[j] == '"') inq = !inq;
            else if (buf[j] == '\n' && !inq) {
                const uint64_t b = pos + (uint64_t)j + 1;
                while (i < n && offs[i] <= b) bound[i++] = b;
            }
        }
        pos += (uint64_t)got;
    }
    while (i < n) bound[i++] = size;
    return ANONKIT_OK;
}

/* Counts newlines and quotes in [from, to) (memchr from newline to newline). */
static int count_range(mp_ctx *c, int fd, uint64_t from, uint64_t to, uint64_t *newlines, int *quotes, const char *path)
{
    enum { BUF = 1 << 20 };
    char *buf = malloc(BUF);
    if (!buf) return ak_err_nomem(&c->err);
    uint64_t nl = 0;
    unsigned char q = 0;
    int rc = ANONKIT_OK;
    while (from < to) {
        const size_t want = to - from < BUF ? (size_t)(to - from) : BUF;
        const ssize_t got = pread(fd, buf, want, (off_t)from);
        if (got <= 0) {
            rc = ak_err_set(&c->err, ANONKIT_E_IO, path, 0, 0, "cannot read: %s", got ? strerror(errno) : "file shrank");
            break;
        }
        q |= memchr(buf, '"', (size_t)got) != NULL;
        for (const char *p = buf, *end = buf + got; (p = memchr(p, '\n', (size_t)(end - p))); p++) nl++;
        from += (uint64_t)got;
    }
    free(buf);
    *newlines = nl;
    *quotes = q;
    return rc;
}

/* Loads this rank's byte range of `path` in place (the loader reads the
 * header from the file's start, then only the range), numbering its lines
 * as the file's own. */
static int load_range(mp_ctx *c, const char *path, mp_piece *p, uint64_t *bytes)
{
    int fd = open(path, O_RDONLY);
    int rc = fd < 0 ? ak_err_set(&c->err, ANONKIT_E_IO, path, 0, 0, "cannot open: %s", strerror(errno)) : ANONKIT_OK;
    struct stat sb;
    uint64_t size = 0, hdr_end = 0;
    if (rc == ANONKIT_OK && fstat(fd, &sb) == 0) size = (uint64_t)sb.st_size;
    /* the header: the first record */
    if (rc == ANONKIT_OK && c->rank == 0) {
        const uint64_t one = 1;
        rc = scan_boundaries(c, fd, size, 0, &one, 1, &hdr_end, path);
    }
    rc = mp_agree(c, rc);
    if (rc < 0) goto done;
    MPI_Bcast(&hdr_end, 1, MPI_UINT64_T, 0, c->comm);
    int quotes = 0, any_quotes = 0;
    uint64_t nominal_lo = size / (uint64_t)c->size * (uint64_t)c->rank;
    uint64_t nominal_hi = c->rank == c->size - 1 ? size : size / (uint64_t)c->size * (uint64_t)(c->rank + 1);
    uint64_t nl;
    rc = count_range(c, fd, nominal_lo, nominal_hi, &nl, &quotes, path);
    if ((rc = mp_agree(c, rc)) < 0) goto done;
    MPI_Allreduce(&quotes, &any_quotes, 1, MPI_INT, MPI_LOR, c->comm);
    uint64_t *starts = calloc((size_t)c->size + 1, sizeof *starts);
    if (!starts) {
        rc = mp_agree(c, ak_err_nomem(&c->err));
        goto done;
    }
    if (!any_quotes) { /* the first newline at or after the offset ends the last row before it */
        uint64_t s = hdr_end;
        if (c->rank > 0 && nominal_lo > hdr_end) {
            /* the first boundary at or after the offset, scanning from the byte before it */
            rc = scan_boundaries(c, fd, size, nominal_lo - 1, &nominal_lo, 1, &s, path);
        }
        rc = mp_agree(c, rc);
        if (rc == ANONKIT_OK) MPI_Allgather(&s, 1, MPI_UINT64_T, starts, 1, MPI_UINT64_T, c->comm);
    } else { /* quoted fields may hold newlines: rank 0 finds every boundary in one scan */
        uint64_t *offs = malloc((size_t)c->size * sizeof *offs);
        if (!offs) rc = ak_err_nomem(&c->err);
        for (int r = 0; rc == ANONKIT_OK && r < c->size; r++) {
            const uint64_t o = size / (uint64_t)c->size * (uint64_t)r;
            offs[r] = o > hdr_end ? o : hdr_end;
        }
        if (rc == ANONKIT_OK && c->rank == 0) rc = scan_boundaries(c, fd, size, hdr_end, offs, c->size, starts, path);
        free(offs);
        rc = mp_agree(c, rc);
        if (rc == ANONKIT_OK) MPI_Bcast(starts, c->size, MPI_UINT64_T, 0, c->comm);
    }
    if (rc < 0) {
        free(starts);
        goto done;
    }
    starts[c->size] = size;
    const uint64_t from = starts[c->rank], to = starts[c->rank + 1];
    free(starts);
    /* the line of this rank's first row: 1 + the newlines before it, which
     * are those of the nominal ranges before this rank's (an exclusive prefix
     * sum) and those between its nominal start and its first row */
    uint64_t gap = 0, before = 0;
    rc = count_range(c, fd, nominal_lo, from, &gap, &quotes, path);
    if ((rc = mp_agree(c, rc)) < 0) goto done;
    MPI_Exscan(&nl, &before, 1, MPI_UINT64_T, MPI_SUM, c->comm);
    if (c->rank == 0) before = 0;
    const long first_line = (long)(1 + before + gap);
    /* the rows of [from, to) read in place (the header from the file's start) */
    const uint64_t range[3] = {from, to - from, (uint64_t)first_line};
    rc = load_piece(c, path, path, range, p);
    *bytes = to - from;
    rc = mp_agree(c, rc);
done:
    if (fd >= 0) close(fd);
    return rc;
}

/* Only the header of `path` (no rows): the schema of a rank without rows. */
static int load_header_only(mp_ctx *c, const char *path, mp_piece *p)
{
    const uint64_t none[3] = {0, 0, 1};
    return load_piece(c, path, path, none, p);
}

/* ---- the dictionaries */

static uint64_t header_hash(const table *t)
{
    uint64_t h = 1469598103934665603ull;
    for (uint32_t col = 0; col < t->ncolumns; col++) {
        for (const char *s = t->column_names[col]; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
        h = (h ^ 0xff) * 1099511628211ull;
    }
    return h;
}

/* Gathers every piece's pack (ranks in order), merges them into the first
 * local piece's table and maps every local code to the merged dictionaries. */
static int merge_pieces(mp_ctx *c, mp_piece *pc, size_t npc, mp_rows *out)
{
    int rc = ANONKIT_OK;
    uint64_t h = header_hash(pc[0].t), hmin, hmax;
    for (size_t i = 1; i < npc; i++)
        if (header_hash(pc[i].t) != h)
            rc = ak_err_set(&c->err, ANONKIT_E_INPUT, pc[i].t->display_name, 1, 0, "the header differs from %s's",
                            pc[0].t->display_name);
    if ((rc = mp_agree(c, rc)) < 0) return rc;
    MPI_Allreduce(&h, &hmin, 1, MPI_UINT64_T, MPI_MIN, c->comm);
    MPI_Allreduce(&h, &hmax, 1, MPI_UINT64_T, MPI_MAX, c->comm);
    if (hmin != hmax) rc = ak_err_set(&c->err, ANONKIT_E_INPUT, pc[0].t->display_name, 1, 0, "the part files' headers differ");
    if ((rc = mp_agree(c, rc)) < 0) return rc;
    /* this rank's packs, one after another, and their lengths */
    strbuf mine = {0};
    char *all = NULL;
    uint64_t *all_lens = NULL;
    const char **packs = NULL;
    size_t *plens = NULL;
    uint64_t *lens = malloc(npc * sizeof *lens);
    if (!lens) rc = ak_err_nomem(&c->err);
    for (size_t i = 0; rc == ANONKIT_OK && i < npc; i++) {
        lens[i] = pc[i].pack.len;
        if (strbuf_append(&mine, pc[i].pack.data ? pc[i].pack.data : "", pc[i].pack.len) != 0) rc = ak_err_nomem(&c->err);
    }
    int my_n = (int)npc, my_bytes = (int)mine.len;
    if (rc == ANONKIT_OK && mine.len > (size_t)INT32_MAX / 2)
        rc = ak_err_set(&c->err, ANONKIT_E_USAGE, NULL, 0, 0, "a shard's dictionaries pass 1 GiB");
    int *counts = calloc((size_t)c->size * 4, sizeof *counts);
    if (rc == ANONKIT_OK && !counts) rc = ak_err_nomem(&c->err);
    if ((rc = mp_agree(c, rc)) < 0) goto done;
    int *bytes = counts + c->size, *displ = bytes + c->size, *ldispl = displ + c->size;
    MPI_Allgather(&my_n, 1, MPI_INT, counts, 1, MPI_INT, c->comm);
    MPI_Allgather(&my_bytes, 1, MPI_INT, bytes, 1, MPI_INT, c->comm);
    size_t total = 0, npacks = 0;
    for (int r = 0; r < c->size; r++) {
        displ[r] = (int)total;
        ldispl[r] = (int)npacks;
        total += (size_t)bytes[r];
        npacks += (size_t)counts[r];
    }
    all = malloc(total ? total : 1);
    all_lens = malloc(npacks * sizeof *all_lens);
    packs = malloc(npacks * sizeof *packs);
    plens = malloc(npacks * sizeof *plens);
    rc = all && all_lens && packs && plens ? ANONKIT_OK : ak_err_nomem(&c->err);
    if ((rc = mp_agree(c, rc)) == ANONKIT_OK) {
        MPI_Allgatherv(mine.data ? mine.data : "", my_bytes, MPI_BYTE, all, bytes, displ, MPI_BYTE, c->comm);
        MPI_Allgatherv(lens, my_n, MPI_UINT64_T, all_lens, counts, ldispl, MPI_UINT64_T, c->comm);
        size_t at = 0;
        for (size_t i = 0; i < npacks; i++) {
            packs[i] = all + at;
            plens[i] = (size_t)all_lens[i];
            at += plens[i];
        }
        rc = table_dict_merge(pc[0].t, packs, plens, npacks, &c->err);
    }
    /* every row's codes, mapped */
    size_t n = 0;
    for (size_t i = 0; i < npc; i++) n += pc[i].n;
    const uint32_t d = pc[0].d, nc = pc[0].ncopied;
    out->n = n;
    out->ncopied = nc;
    if (rc == ANONKIT_OK) {
        if ((out->codes = calloc(d ? d : 1, sizeof *out->codes))) out->nqi = d;
        if (!out->codes || !(out->sens = malloc((n ? n : 1) * sizeof *out->sens)) ||
            !(out->cls = malloc((n ? n : 1) * sizeof *out->cls)) ||
            !(out->off = malloc(((size_t)n * nc + 1) * sizeof *out->off)))
            rc = ak_err_nomem(&c->err);
        for (uint32_t q = 0; rc == ANONKIT_OK && q < d; q++)
            if (!(out->codes[q] = malloc((n ? n : 1) * sizeof **out->codes))) rc = ak_err_nomem(&c->err);
    }
    size_t row = 0;
    if (out->off) out->off[0] = 0;
    for (size_t i = 0; rc == ANONKIT_OK && i < npc; i++) {
        const mp_piece *p = &pc[i];
        table_dict_maps maps;
        if ((rc = table_dict_maps_make(pc[0].t, p->pack.data ? p->pack.data : "", p->pack.len, &maps, &c->err)) < 0) break;
        const size_t w = (size_t)d + 2, base = out->copied.len;
        for (size_t r = 0; r < p->n; r++, row++) {
            const uint32_t *x = p->codes + r * w;
            for (uint32_t q = 0; q < d; q++) out->codes[q][row] = maps.num_map[q] ? maps.num_map[q][x[q]] : x[q];
            out->sens[row] = maps.sens_map && pc[0].t->sensitive_column >= 0 ? maps.sens_map[x[d]] : 0;
            out->cls[row] = maps.class_map && pc[0].t->class_column >= 0 ? maps.class_map[x[d + 1]] : 0;
            for (uint32_t j = 0; j < nc; j++) out->off[row * nc + j + 1] = base + p->ends[r * nc + j];
        }
        table_dict_maps_free(&maps);
        if (npc == 1) { /* the one piece's copied fields are taken, not copied */
            out->copied = pc[i].copied;
            memset(&pc[i].copied, 0, sizeof pc[i].copied);
        } else if (strbuf_append(&out->copied, p->copied.data ? p->copied.data : "", p->copied.len) != 0)
            rc = ak_err_nomem(&c->err);
    }
    rc = mp_agree(c, rc);
done:
    strbuf_free(&mine);
    free(lens);
    free(counts);
    free(all);
    free(all_lens);
    free(packs);
    free(plens);
    return rc;
}

void mp_rows_free(mp_rows *r)
{
    if (!r) return;
    if (r->codes)
        for (uint32_t q = 0; q < r->nqi; q++) free(r->codes[q]);
    free(r->codes);
    free(r->sens);
    free(r->cls);
    strbuf_free(&r->copied);
    free(r->off);
    table_free(r->schema);
    mp_auto_hierarchies_free(r->auto_hier, r->nauto_hier);
    memset(r, 0, sizeof *r);
}

int mp_load(mp_ctx *c, const char *input, mp_rows *out)
{
    memset(out, 0, sizeof *out);
    char **files = NULL;
    size_t nfiles = 0;
    int single = 0;
    int rc = mp_agree(c, list_inputs(c, input, &files, &nfiles, &single));
    if (rc < 0) return rc;
    mp_piece *pc = calloc(nfiles + 1, sizeof *pc);
    int *owner = calloc(nfiles + 1, sizeof *owner);
    uint64_t total = 0, *size = calloc(nfiles + 1, sizeof *size);
    size_t npc = 0;
    if (!pc || !owner || !size) rc = ak_err_nomem(&c->err);
    /* whole files to ranks, in order, balanced by size: a file goes to the
     * rank whose share of the total bytes holds its middle (one file read in
     * byte ranges: rank 0 alone collects its values for --hierarchy COL=auto) */
    for (size_t i = 0; rc == ANONKIT_OK && i < nfiles; i++) {
        struct stat sb;
        if (stat(files[i], &sb) != 0) rc = ak_err_set(&c->err, ANONKIT_E_IO, files[i], 0, 0, "cannot open: %s", strerror(errno));
        else total += size[i] = (uint64_t)sb.st_size;
    }
    uint64_t before = 0;
    for (size_t i = 0; rc == ANONKIT_OK && i < nfiles; i++) {
        const long double mid = (long double)before + (long double)size[i] / 2;
        owner[i] = total ? (int)(mid * c->size / (long double)total) : (int)((uint64_t)i * (uint64_t)c->size / nfiles);
        if (owner[i] >= c->size) owner[i] = c->size - 1;
        if (single) owner[i] = 0;
        before += size[i];
    }
    if ((rc = mp_agree(c, rc)) < 0) goto done;
    if ((rc = mp_auto_hierarchies(c, files, owner, nfiles, &out->auto_hier, &out->nauto_hier)) < 0) goto done;
    if (single && c->size > 1) {
        rc = load_range(c, files[0], &pc[0], &out->bytes_read);
        npc = 1;
        if (rc < 0) goto done;
    } else {
        for (size_t i = 0; rc == ANONKIT_OK && i < nfiles; i++) {
            if (owner[i] != c->rank) continue;
            rc = load_piece(c, files[i], files[i], NULL, &pc[npc++]);
            out->bytes_read += size[i];
            out->files++;
        }
        if (rc == ANONKIT_OK && npc == 0) rc = load_header_only(c, files[0], &pc[npc++]);
        if ((rc = mp_agree(c, rc)) < 0) goto done;
    }
    if ((rc = merge_pieces(c, pc, npc, out)) < 0) goto done;
    out->schema = pc[0].t;
    pc[0].t = NULL;
done:
    for (size_t i = 0; pc && i < npc; i++) piece_free(&pc[i]);
    free(pc);
    free(owner);
    free(size);
    free_list(files, nfiles);
    if (rc < 0) mp_rows_free(out);
    return rc;
}
