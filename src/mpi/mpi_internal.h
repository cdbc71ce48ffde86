/* mpi_internal.h — what the files of anonkit-mpi share (docs/distributed.md):
 * mpi_main.c   the command, the collective error protocol, the distributed
 *              partitioning, shipping leaves to their owners, the outputs;
 * mpi_shard.c  the input cut into shards (whole part files, or byte ranges
 *              of one file), each shard's load, the dictionaries merged. */
#ifndef AK_MPI_INTERNAL_H
#define AK_MPI_INTERNAL_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "api/job.h"
#include "common/error.h"
#include "common/strbuf.h"
#include "core/table.h"

/* The rows this rank holds, with the whole table's dictionaries. */
typedef struct mp_rows {
    table *schema;       /* the first shard's table, its dictionaries replaced by the merged ones; no rows */
    size_t n;
    uint32_t nqi;        /* QIs (codes[0..nqi)) */
    uint32_t **codes;    /* per QI, n codes */
    uint32_t *sens, *cls;/* n codes each (0 when absent) */
    uint32_t ncopied;    /* columns copied through (neither QI nor identifier) */
    strbuf copied;       /* the copied fields, escaped, row after row */
    size_t *off;         /* n * ncopied + 1: field j of row r at copied[off[r*ncopied+j] .. off[r*ncopied+j+1]] */
    uint64_t bytes_read; /* of the input */
    unsigned files;      /* part files this rank read (byte-range mode: 0) */
} mp_rows;

typedef struct mp_ctx {
    MPI_Comm comm;
    int rank, size;
    anonkit_job *job;
    ak_error err;
    int failed; /* a failure was agreed on: no rank communicates again */
} mp_ctx;

/* Every rank calls it at the same points with its own status: 0 when every
 * rank succeeded; else every rank returns the code of the first failing rank
 * (the lowest: the first in file order), whose error is copied into c->err.
 * Once a failure is agreed on, it returns that failure without communicating,
 * so that ranks that learn of it at different calls stop alike. */
int mp_agree(mp_ctx *c, int rc);

/* Reads this rank's shard of `input` (a folder or glob of part files, or one
 * file read in byte ranges) and merges the dictionaries. Collective; errors
 * are already agreed on return. */
int mp_load(mp_ctx *c, const char *input, mp_rows *out /* OUT */);
void mp_rows_free(mp_rows *r);

#endif
