/* spool.h — private temporary copies of standard input (DESIGN.md §1, §6).
 * The writer re-reads the input, which stdin cannot give twice, so stdin is
 * first copied into a file of mode 0600 inside a folder of mode 0700 (it holds
 * raw personal data), removed again by spool_remove. */
#ifndef AK_SPOOL_H
#define AK_SPOOL_H

#include <stdio.h>

#include "common/error.h"

typedef struct spool {
    char dir[4096];  /* "" when none */
    char path[4096];
} spool;

/* Copies `in` into a fresh private file under $TMPDIR (or /tmp). */
int spool_stream(spool *s, FILE *in, ak_error *err);
/* Removes the file and its folder; safe on a zeroed or already removed spool. */
void spool_remove(spool *s);

#endif
