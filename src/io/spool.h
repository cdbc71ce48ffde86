/* spool.h — private temporary copies of standard input (ARCHITECTURE.md §3 step 1).
 * The writer re-reads the input, which stdin cannot give twice, so stdin is
 * first copied into a file of mode 0600 (it holds raw personal data). The
 * file has no name where the system allows it (O_TMPFILE, or a name removed
 * at once after creation), so no signal, not even SIGKILL, can leave it
 * behind: the kernel frees it when the process ends. Readers open it by a
 * path naming the open descriptor (/proc/self/fd/N). Only where /proc is not
 * mounted does the copy keep a name, in a private folder of mode 0700,
 * removed by spool_remove. */
#ifndef AK_SPOOL_H
#define AK_SPOOL_H

#include <stdio.h>

#include "common/error.h"

typedef struct spool {
    int fd;          /* the copy, open for reading and writing; valid when has_fd */
    int has_fd;      /* 0 on a zeroed spool */
    char dir[4096];  /* the private folder of a named copy, "" when none */
    char path[4096]; /* where readers open the copy: /proc/self/fd/N, or the named copy */
} spool;

/* Copies `in` into a fresh private file under `tmpdir`; NULL or "" means
 * $TMPDIR, or /tmp when that is unset or empty. */
int spool_stream_in(spool *s, FILE *in, const char *tmpdir, ak_error *err);
/* Creates an empty private copy under tmpdir (as spool_stream_in) for the
 * caller to write through s->fd: the CSV form of a source that is not a
 * CSV file (io/source.h). */
int spool_open_empty(spool *s, const char *tmpdir, ak_error *err);
/* spool_stream_in under $TMPDIR (or /tmp). */
int spool_stream(spool *s, FILE *in, ak_error *err);
/* Closes the copy and removes any name and folder it has; safe on a zeroed
 * or already removed spool. */
void spool_remove(spool *s);

#endif
