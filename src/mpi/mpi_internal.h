/* mpi_internal.h — what the files of anonkit-mpi share (docs/distributed.md):
 * mpi_main.c   the command, the collective error protocol, the distributed
 *              partitioning, shipping leaves to their owners, the outputs;
 * mpi_out.c    the outputs, written once and committed by every rank or none;
 * mpi_shard.c  the input cut into shards (whole part files, or byte ranges
 *              of one file), each shard's load, the dictionaries merged;
 * mpi_hier.c   --hierarchy COL=auto: the flat hierarchy of every rank's
 *              distinct values together. */
#ifndef AK_MPI_INTERNAL_H
#define AK_MPI_INTERNAL_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "api/job.h"
#include "common/error.h"
#include "common/strbuf.h"
#include "core/partition.h"
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
    char **auto_hier;    /* the private files of the flat hierarchies built for --hierarchy COL=auto */
    size_t nauto_hier;
} mp_rows;

typedef struct mp_ctx {
    MPI_Comm comm;
    int rank, size;
    anonkit_job *job;
    ak_error err;
    int failed; /* a failure was agreed on: no rank communicates again */
    double comm_cpu; /* CPU seconds spent inside MPI waits (agreements, reductions, all-to-all):
                      * Open MPI polls while it waits, so this is subtracted from busy time */
} mp_ctx;

/* This process's CPU seconds (only differences mean anything). */
static inline double mp_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Phases of a run, for the report's wall, CPU and busy seconds per rank. */
enum { MP_LOAD, MP_PARTITION, MP_SHIP, MP_FINISH, MP_WRITE, MP_NPHASE };
typedef struct mp_mark {
    double wall, cpu, comm;
} mp_mark;
typedef struct mp_times {
    double wall[MP_NPHASE], cpu[MP_NPHASE], comm[MP_NPHASE];
} mp_times;
mp_mark mp_now(const mp_ctx *c);
/* Adds what passed since `from` to phase `ph`. */
void mp_time_add(mp_times *t, int ph, mp_mark from, const mp_ctx *c);

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

/* ---- --hierarchy COL=auto (mpi_hier.c) */

/* Builds the flat hierarchy of every QI given --hierarchy COL=auto from the
 * distinct values of the files this rank reads (owner[i] == rank; the values
 * of all ranks exchanged with MPI_Allgatherv), the same on every rank, into a
 * private file that replaces "auto" in the job; the files' names into *made
 * (removed by mp_auto_hierarchies_free). Collective. */
int mp_auto_hierarchies(mp_ctx *c, char *const *files, const int *owner, size_t nfiles, char ***made /* OUT */,
                        size_t *nmade /* OUT */);
void mp_auto_hierarchies_free(char **made, size_t n);

/* ---- the outputs (mpi_out.c) */

typedef struct mp_out {
    int dir_mode;
    char parent[4096]; /* the destination's folder */
    char tmp[4096];    /* at commit: DIR: the staging folder; FILE: the staging name of the one file */
    char named[4300];  /* DIR: where O_TMPFILE is missing, this rank's part under a temporary name;
                        * FILE, rank 0: the one file's hidden name when not every rank can reach it
                        * unnamed (ranks on other machines, or no O_TMPFILE) */
    FILE *f;           /* DIR: the unnamed part, streamed to disk as it grows; FILE: a stream that
                        * writes at this rank's offset in the one file (MPI_File_write_at on mf) */
    int fd;            /* FILE: this rank's descriptor of the one file (-1: none) */
    MPI_File mf;       /* FILE: the one file opened through MPI-IO by this rank alone (MPI_COMM_SELF),
                        * through which its rows are written at its offset */
    int mf_open;       /* FILE: mf is open */
    int placed;        /* FILE: base is known (rank 0 from the start, the others after mp_out_place) */
    uint64_t base;     /* FILE: offset of this rank's first byte */
    uint64_t pos;      /* FILE: bytes written at base so far */
    uint64_t expect;   /* FILE: this rank's length as measured by mp_out_place */
    uint64_t synced;   /* bytes of the part whose write-back was started */
    long header;       /* FILE: bytes of the header, written by rank 0 and dropped by the others */
    long skip;         /* FILE: header bytes still to drop */
} mp_out;

/* Sets an I/O error "what: strerror(errno)" on path. */
int mp_fail_io(mp_ctx *c, const char *path, const char *what);
/* The destination without trailing slashes (d), and its folder (parent). */
void mp_dest_names(const char *dest, char *d, size_t dsize, char *parent, size_t psize);
/* Opens this rank's output stream (nothing appears at dest); under -o FILE
 * every rank reaches the one file, `header` its header's bytes (written by
 * rank 0, dropped by the others). Collective. */
int mp_out_open(mp_ctx *c, const char *dest, long header, mp_out *o);
/* The bytes the one writer (publish_stream_part) writes for the rows of
 * `view` classed by p, without composing them: per class its QIs' escaped
 * texts, per row its copied fields (off[0 .. n * ncopied], as for
 * publish_stream_part), the delimiters and the newline. */
int mp_part_length(mp_ctx *c, const table *view, const partition *p, const size_t *off, uint32_t ncopied,
                   uint64_t *len /* OUT */);
/* -o FILE: every rank's offset from the lengths (its header and rows)
 * measured before any row is written (MPI_Exscan); from then on every rank
 * writes its rows at its offset, at the same time as the others. Collective. */
int mp_out_place(mp_ctx *c, mp_out *o, uint64_t len);
/* Hands the bytes published so far to the kernel and starts writing them
 * back to disk (a part that stays on disk), so that the commit's sync finds
 * little left to do. */
int mp_out_progress(mp_ctx *c, mp_out *o);
/* Ends every rank's stream and commits the output when rc is ANONKIT_OK on
 * every rank; `rows` are this rank's rows (the manifest). Collective. */
int mp_out_commit(mp_ctx *c, const char *dest, mp_out *o, uint64_t rows, int rc);
/* Removes whatever was made for the output. Collective. */
void mp_out_abort(mp_ctx *c, mp_out *o);
/* Closes this rank's stream and frees it. */
void mp_out_close(mp_out *o);

#endif
