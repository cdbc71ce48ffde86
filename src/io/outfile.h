/* outfile.h — output written to a temporary file beside its destination and
 * renamed into place only on success (ARCHITECTURE.md §3 step 3), so a failed run
 * never leaves a partial file and an old destination stays untouched.
 *
 * The temporary has no name where the system allows it (O_TMPFILE in the
 * destination's folder): no signal, not even SIGKILL, can leave it behind.
 * At commit a new destination (no file there at open) gets the unnamed file
 * straight under its name (linkat through /proc/self/fd/N, which fails
 * rather than replace a file that appeared there meanwhile): no temporary
 * name ever exists. An existing destination can only be replaced by a
 * rename, so the file is given a fresh temporary name DEST.tmp-XXXXXX and
 * renamed over it at once; the folder is synced either way. Where the
 * folder's file system has no O_TMPFILE (or /proc is not mounted) the
 * temporary is a named DEST.tmp-XXXXXX from the start, removed by
 * outfile_abort. A new destination is created with mode 0666 less the
 * umask; an existing one keeps its mode.
 *
 * Stale names. A SIGKILL between naming a replacing file and its rename
 * (or, in the fallback, at any time) leaves a DEST.tmp-XXXXXX. The rule
 * that removes those without touching a live run's: a run holds a shared
 * flock on a destination's folder from before it makes any such name there
 * until it has none left (the commit's; the fallback's from its open), and
 * the kernel drops the lock when the process dies, however it dies. After
 * a successful commit, in each folder it published into, the run tries the
 * exclusive flock without waiting; when it gets it, no live run has a
 * temporary there, and it removes the regular files named exactly
 * DEST.tmp-XXXXXX (X from [A-Za-z0-9]) for the DEST it published there:
 * what killed runs left. Nothing else is removed (other names, symbolic
 * links, other destinations' names); a failed run removes nothing. Where
 * the folder cannot be opened or flock is not supported, nothing is
 * removed. (A run of an older anonkit takes no lock: a run of this one
 * committing the same destination in the same microseconds could remove
 * its temporary, whose rename then fails and that run leaves its output
 * untouched.)
 *
 * "-" writes to stdout directly, and so does an existing destination that is
 * not a regular file (/dev/null, a FIFO). A destination that is a folder is
 * refused at open. */
#ifndef AK_OUTFILE_H
#define AK_OUTFILE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/error.h"

typedef struct outfile {
    FILE *stream;     /* where to write; NULL on a zeroed or finished outfile */
    char *path;       /* destination, NULL for stdout */
    char *temp_path;  /* the named temporary beside the destination, NULL while there is none */
    int unnamed;      /* the stream is an unnamed file (O_TMPFILE), named only at commit */
    int replace;      /* a file was at the destination at open: the commit renames over it (else an
                         unnamed file is linked straight to the destination, with no temporary name) */
    int dir_lock;     /* 1 + a descriptor of the destination's folder holding a shared flock while a
                         named temporary exists (the fallback without O_TMPFILE); 0: none */
    uint64_t behind;  /* how much of the stream outfile_ready started writing to disk */
    struct sink *sink;      /* a table output (io/source.h): the stream is a private spool loaded into it at commit */
    struct spool *sink_spool;
} outfile;

/* Creates the temporary file now, so an unwritable destination fails before any work. */
int outfile_open(outfile *o, const char *path, ak_error *err);
/* outfile_open for a published table: a name that names a database table or
 * a statistics file (io/source.h) opens its sink now (so an unreachable
 * server or an existing target fails before any work) and a private unnamed
 * spool under so->tmpdir for the CSV the writer writes; at commit the spool
 * is loaded into the sink, and the sink committed only when every other
 * output of the run is ready to be renamed. Any other name: outfile_open. */
struct source_options;
int outfile_open_table(outfile *o, const char *path, const struct source_options *so, ak_error *err);
/* Flushes, syncs and puts into place (outfile_commit_all of one); on
 * failure the temporary is removed and the destination untouched. */
int outfile_commit(outfile *o, ak_error *err);
/* Commits the outputs of one run together: first every one is flushed,
 * synced and, if it replaces a file, given its temporary name; only when
 * all of that succeeded are they put in place, in the order given (a
 * rename, or a new output's one link). If any fails before that, every
 * temporary is removed and no destination is touched. With several files,
 * each old destination keeps a second name DEST.tmp-XXXXXX until all are in
 * place: the finished file is exchanged with it (renameat2 with
 * RENAME_EXCHANGE: the old file then has the temporary's name), or where the
 * file system cannot exchange, it gets a hard link before the rename; so a
 * failure after others were done puts those back (an old file as it was,
 * one that did not exist removed) and the error names the one that failed;
 * the second names are removed either way. (A SIGKILL in between can leave
 * such a second name: the old published file, not raw input; removed as a
 * stale name, above.) With several files, the writing of all of them to
 * disk is started first, then they are synced at the same time (a thread
 * each, up to eight: syncs under way together share a journal commit), and
 * after the renames each folder is synced once however many of them were
 * put into it, while the second names and the stale names (above) are
 * removed; at most max_threads threads in all (0: up to eight; 1: every
 * sync and removal in the calling thread, one after the other). Entries
 * that are NULL or zeroed (an output not asked for) are skipped. Every
 * outfile is finished either way: committed or aborted. */
int outfile_commit_all(outfile *const *files, size_t count, unsigned max_threads, ak_error *err);
/* Marks o's output complete: what was written is flushed and its writing
 * to disk started (outfile_write_behind), so that the commit's fsync of a
 * run with several outputs finished one after the other waits for less.
 * Nothing is named or published. Does nothing for stdout, a device or a
 * table output. */
void outfile_ready(outfile *o);
/* Removes the temporary file (safe to call after commit or on a zeroed outfile). */
void outfile_abort(outfile *o);

/* Starts writing to disk what was written to stream since offset *synced
 * (and moves *synced on), without waiting for it: a large output is then
 * mostly on disk when outfile_commit's fsync comes, instead of all of it
 * being written then. Flushes the stream first. Does nothing where the
 * system has no such call or the stream is not a file; failures are left to
 * the writes and the commit to report. */
void outfile_write_behind(FILE *stream, uint64_t *synced);

#endif
