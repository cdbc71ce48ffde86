/* publish_internal.h — what the files of the writer share, private to
 * src/publish: format.c (the publisher: the output's layout, the texts of
 * every class formatted once, output rows composed from them), copied.c
 * (the columns copied through, read once more from the input, or read ahead
 * on a thread of their own) and publish.c (writing: the whole table, or
 * partition by partition). */
#ifndef AK_PUBLISH_INTERNAL_H
#define AK_PUBLISH_INTERNAL_H

#include <stdatomic.h>

#include "common/rng.h"
#include "common/strbuf.h"
#include "io/csv.h"
#include "publish/publish.h"

/* The output columns in order, as segments: a run of adjacent QI columns,
 * whose text per class is formatted once, or one copied unit. */
typedef struct segment {
    uint32_t first, count; /* run: output QIs out_qi[first .. first + count) */
    int copied;            /* 1: copied unit number `first` */
} segment;

typedef struct publisher {
    const table *t;
    const partition *p;
    recode_style style;
    const double *means;    /* per class and QI, for RECODE_MEAN */
    char delim;
    uint32_t nout;          /* output columns */
    int32_t *out_qi;        /* per output column: QI index, or -1 for a copied column */
    uint32_t ncopied;       /* copied units: a copied column, or a run of adjacent ones (merge_copied) */
    uint32_t *copied_col;   /* first input column of each copied unit */
    uint32_t *copied_ncols; /* columns of each copied unit */
    segment *segments;
    uint32_t nsegments, nruns;
    strbuf class_text;      /* per class and run: the escaped values joined by the delimiter */
    size_t *class_off;      /* (class, run) -> offset in class_text; one extra at the end */
    strbuf star_text;       /* the same for a suppressed row: "*" per QI */
    size_t *star_off;
    unsigned char *int_range; /* per QI: texts made by recode_int_range (publisher_format_classes) */
    strbuf line;
} publisher;

/* A block of output rows composed by one thread. */
typedef struct compose_job {
    const publisher *pub;
    const uint32_t *class_of;
    const uint32_t *order;     /* rows to write, in output order */
    size_t first, last;        /* this job's part of order */
    const char *copied;        /* copied fields of all rows (NULL when none) */
    const size_t *copied_off;  /* ncopied offsets per row, one extra at the end */
    const size_t *no_copied;   /* offsets to use when there are no copied fields */
    size_t limit;              /* > 0: stop after the row that brings out to limit bytes (last is then moved there) */
    strbuf out;
    int rc;
} compose_job;

/* ---- format.c ---- */

/* The output columns of t as segments (identifiers dropped); with
 * merge_copied, copied columns next to each other in the input are one unit. */
int publisher_setup(publisher *pub, const table *t, const publish_opts *opts, int merge_copied, ak_error *err);
void publisher_free(publisher *pub);
/* The header row: every column but the identifiers. */
int publisher_write_header(const table *t, csv_writer *writer, ak_error *err);
/* Formats the text of every QI run: per class, and once for suppressed rows. */
int publisher_format_classes(publisher *pub, unsigned threads, ak_error *err);
/* Appends one output row to b from its class and its copied fields
 * (escaped, field j at copied[off[j] .. off[j + 1])). */
int publisher_compose_row(const publisher *pub, strbuf *b, uint32_t cls, const char *copied, const size_t *off);
/* Composes the rows job->order[first .. last) into job->out (a compose_job *;
 * returns NULL); job->rc is -1 when out of memory. */
void *publisher_compose_rows(void *arg);
/* Appends the copied units of rec to b, their offsets to off[0 .. ncopied). */
int publisher_append_copied(const publisher *pub, const csv_record *rec, strbuf *b, size_t *off);
/* The rows of a part of n rows to write, in writing order, into order;
 * returns how many (suppressed rows dropped when asked, shuffled with rng
 * unless the input order is kept); counts the rows into stats. */
size_t publish_order_rows(const uint32_t *class_of, size_t n, const publish_opts *opts, ak_rng *rng,
                          uint32_t *order, publish_stats *stats);
/* The error of an input that no longer reads as it did when it was loaded
 * (digest_changed, naming it as the user did). */
int publish_input_changed(const table *t, ak_error *err);

/* ---- copied.c ---- */

/* Gives b room for `bytes` bytes on fresh (huge) pages, b being empty. */
int publish_reserve_huge(strbuf *b, size_t bytes);
/* Reads the copied units of all t->nrows rows into *text, with their offsets
 * in *off (ncopied per row and one more, the end), on up to two threads. */
int publish_read_copied(const publisher *pub, const table *t, unsigned threads, const atomic_int *cancel,
                        strbuf *text, size_t **off, ak_error *err);
/* Takes the units read ahead by c for t (whose writer has the layout pub):
 * fills text and off, or returns the reading's error. */
int publish_copied_take(publish_copied *c, const table *t, const publisher *pub, strbuf *text, size_t **off,
                        ak_error *err);

#endif
