/* check_parts.h — `anonkit check` on a folder of part files (the output of
 * anonkit-mpi, docs/distributed.md §5): the parts, one header each, read as
 * one published table. */
#ifndef AK_CHECK_PARTS_H
#define AK_CHECK_PARTS_H

#include "common/error.h"
#include "io/spool.h"

/* Copies the part files of folder `dir` (its *.csv, by name: part-00000.csv,
 * part-00001.csv, ...) into one private spool, the first part's header kept
 * and every other part's first line (its header, identical) dropped. */
int check_parts_spool(const char *dir, const char *tmpdir, spool *s /* OUT */, ak_error *err);

#endif
