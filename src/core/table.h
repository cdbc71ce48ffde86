/* table.h — the encoded table (docs/ARCHITECTURE.md §3 step 1, §4).
 *
 * The input is streamed once. Each quasi-identifier becomes a dense array of
 * uint32_t codes whose order is the attribute's order: numeric values by rank
 * in the sorted dictionary of their distinct values, categorical values by the
 * in-order position of their leaf in the attribute's hierarchy. The sensitive
 * attribute becomes codes in order of first appearance (and numbers, for
 * variance diversity); a class label likewise becomes codes, a regression
 * target numbers. Other columns are not held: the writer re-reads the input,
 * and proves that it reads the same bytes against the digest of the records
 * this read encoded (io/digest.h). */
#ifndef AK_TABLE_H
#define AK_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "common/hash.h"
#include "core/hierarchy.h"
#include "core/numdict.h"
#include "common/strbuf.h"
#include "io/digest.h"

typedef enum attr_kind { ATTR_NUMERIC, ATTR_CATEGORICAL } attr_kind;

struct csv_record;
typedef struct table table;
struct anonkit_table;
struct memcol;
struct csv_reader;

typedef enum column_role { ROLE_OTHER = 0, ROLE_QI, ROLE_SENSITIVE, ROLE_IDENTIFIER } column_role;

/* What to read: column names by role, hierarchies, delimiter. */
typedef struct table_spec {
    const char *path;          /* input CSV (already spooled if it was stdin) */
    const char *display_name;  /* name used in messages ("-" shows as "stdin") */
    const struct anonkit_table *mem; /* the input is this table in memory, read through the CSV reader's table
                                        backend (path then names nothing to open); NULL: path */
    char delimiter;
    size_t nqi;
    const char *const *qi_names;
    const char *const *hierarchy_paths; /* per QI, NULL when none */
    const struct anonkit_table *const *hierarchy_tables; /* per QI (may be NULL): the hierarchy is this table in
                                                            memory (hier_load_table), hierarchy_paths its name */
    const unsigned char *force_numeric;  /* per QI: numeric even with a hierarchy */
    const char *sensitive_name;          /* NULL when none */
    int sensitive_numeric;               /* also read the sensitive values as numbers */
    const char *class_name;              /* class label of InfoGain splitting; NULL when none */
    const char *target_name;             /* numeric target of Regression splitting; NULL when none */
    size_t nidentifiers;
    const char *const *identifier_names;
    unsigned threads;                    /* > 1: a large file may be read in two pieces at once */
    uint64_t parallel_min_bytes;         /* how large a file that is (0: PARALLEL_MIN_BYTES of table.c) */
    /* Streaming (out of core): when set, rows are not kept. sink_start is
     * called once the header is read, with the number of pieces (1 or 2) the
     * rows will come in; each row, once encoded into slot `slot` of the
     * table's arrays, is then handed to row_sink with its piece and record.
     * Numeric QI codes are provisional (table_numeric_rank maps them once
     * loading is done). With threads > 1 a large file may be read in two
     * pieces on two threads at once, each piece in file order, the second
     * piece's codes in its own dictionaries (t->split maps them once loading
     * is done); should that read be given up, sink_start is called again
     * with 1 and every row comes again: the sink forgets what it was given.
     * The table ends with nrows counted and the dictionaries built, but
     * without per-row data. */
    int (*sink_start)(void *ctx, const table *t, unsigned pieces, ak_error *err);
    int (*row_sink)(void *ctx, const table *t, unsigned piece, size_t slot, const struct csv_record *rec,
                    ak_error *err);
    void *sink_ctx;
    /* The input is read this once and never again (the original of anonkit
     * metrics): no digest of it is kept (t->digest stays empty). */
    int read_once;
    /* Tests only (set through the job's test hook, never by an option):
     * called once the input is read and encoded, with the file read, before
     * anything reads it again, so that a test can change it right there. */
    void (*loaded)(void *ctx, const char *path);
    void *loaded_ctx;
    /* Missing values (docs/hierarchies.md): tokens that stand for one besides
     * the empty cell; and how generalized numbers are written (ak_interval_style). */
    const char *const *missing;
    size_t nmissing;
    int interval_format;
    /* Progress and cancelling (common/progress.h; NULL: none): rows read are
     * counted per block, then the encoding phase is announced. */
    struct ak_progress *progress;
    /* Rows only from bytes [body_offset, body_offset + body_length) of path
     * when body_range is set (the header is still the file's first record):
     * body_offset is a record boundary and its record is on line
     * body_first_line, so messages name the file's own lines. Read in one
     * piece (threads is ignored). anonkit-mpi reads its byte range of one
     * file in place with it (docs/distributed.md §2). */
    int body_range;
    uint64_t body_offset, body_length;
    long body_first_line;
} table_spec;

typedef struct table_qi {
    char *name;
    uint32_t column;      /* index in the input row */
    attr_kind kind;
    hier *h;              /* owned; NULL for numeric QIs without hierarchy */
    uint32_t ncodes;      /* domain size: distinct values or hierarchy leaves */
    double *values;       /* numeric: values[code], ascending */
    const char **texts;   /* numeric: first spelling seen of values[code]; NULL when every
                             value is a canonically written integer (spelled as itself) */
    strbuf text_store;    /* owns the texts */
    uint32_t *codes;      /* codes[row] */
    numdict_map prov;     /* streaming loads: provisional numeric code -> rank */
    int has_missing;      /* numeric: code 0 is the missing value, below every present one
                             (docs/hierarchies.md); texts[0] its spelling */
    const struct memcol *direct; /* while a table in memory is loaded: its int64 or double column of this
                                    numeric QI, read as numbers instead of as the reader's text (table.c) */
} table_qi;

/* A streaming load read in two pieces: the second piece's rows, from
 * first_row on, were handed to the sink with codes of its own dictionaries,
 * which these map to the table's. */
typedef struct table_split {
    size_t first_row;         /* 0: the rows came in one piece */
    uint32_t *sensitive_map;  /* the second piece's sensitive code -> the table's */
    uint32_t *class_map;      /* ... class code */
    uint32_t **numeric_ids;   /* per QI: the second piece's general-mode id -> the table's; NULL if none */
} table_split;

struct table {
    char *path;               /* the file read, re-read by the writer */
    const struct anonkit_table *mem; /* or the table in memory read (table_spec.mem), re-read by the writer */
    char *display_name;
    char delimiter;
    size_t nrows;
    uint32_t ncolumns;
    char **column_names;
    unsigned char *roles;     /* column_role per column */
    uint32_t nqi;
    table_qi *qi;
    int sensitive_column;     /* -1 when none */
    uint32_t *sensitive_codes;/* per row, codes in order of first appearance */
    strmap sensitive_dict;    /* code -> text */
    int sensitive_numeric;    /* the spec asked for numeric sensitive values */
    double *sensitive_values; /* per row, when sensitive_numeric */
    int class_column;         /* -1 when none; copied through to the output */
    uint32_t *class_codes;    /* per row, codes in order of first appearance */
    strmap class_dict;        /* code -> text */
    int target_column;        /* -1 when none; copied through to the output */
    double *target_values;    /* per row */
    table_split split;        /* streaming loads in two pieces */
    int interval_format;      /* ak_interval_style of published numeric ranges */
    char **missing;           /* missing-value tokens besides the empty cell (owned), nmissing of them */
    size_t nmissing;
    input_digest digest;      /* the records the load read and encoded, header included (not for streaming
                                 loads, which keep what they need): every later read of path is checked
                                 against it */
};

/* Reads and encodes the input described by spec. */
int table_load(table **out /* OUT */, const table_spec *spec, ak_error *err);
void table_free(table *t);

/* Normalized certainty penalty of codes [lo, hi] of QI q ([Ghinita07] eq. 1): a numeric
 * range over the table's range; for a categorical QI 0 for a single leaf, else
 * the leaves under the lowest common ancestor over all leaves. Mondrian's
 * normalized range (the order in which it tries the dimensions) is the same
 * quantity, so in-memory and out-of-core runs order them alike. */
double table_ncp(const table *t, uint32_t q, uint32_t lo, uint32_t hi);

/* The QIs whose codes [lo[q], hi[q]] have a positive normalized range
 * (table_ncp) into order[], widest first, ties to the lower index: the order
 * in which Mondrian's Median criterion tries them ([LeFevre07] §1.2), shared by the
 * in-memory and out-of-core runs. Returns how many there are. */
uint32_t table_widest_first(const table *t, const uint32_t *lo, const uint32_t *hi, uint32_t *order /* OUT */);

/* Opens a reader of t's input from its start (the file, or the table in
 * memory through the CSV reader's table backend). */
int table_reader_open(const table *t, struct csv_reader **out /* OUT */, ak_error *err);

/* After a streaming load in two pieces: the table's provisional code of
 * numeric QI q for a code the second piece handed out. */
static inline uint32_t table_second_numeric(const table *t, uint32_t q, uint32_t code)
{
    const uint32_t *ids = t->split.numeric_ids ? t->split.numeric_ids[q] : NULL;
    return ids && code < NUMDICT_INT_LOW ? ids[code] : code;
}

/* After a streaming load: the rank of a provisional code of numeric QI q. */
static inline uint32_t table_numeric_rank(const table *t, uint32_t q, uint32_t provisional)
{
    return numdict_map_code(&t->qi[q].prov, provisional);
}

/* The same for n codes in place. */
static inline void table_numeric_ranks(const table *t, uint32_t q, uint32_t *codes, size_t n)
{
    numdict_map_codes(&t->qi[q].prov, codes, n);
}


#endif
