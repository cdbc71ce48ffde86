/* paths.h (api) — a run never writes over a file it reads, nor writes one
 * file twice. Before any work, every path a verb writes (output, report,
 * rules) is compared with every path it reads (input, hierarchies, earlier
 * releases, the rules of recode, the inconsistency file, job files) and with
 * the other paths it writes, by what they name rather than how they are
 * spelled: an existing file by its device and inode (through symbolic links,
 * so that a link, a hard link or "./x" and "x" are one file), any path also by
 * its resolved folder's device and inode and its last name (for an output not
 * yet there). Standard input counts as the file it is redirected from. */
#ifndef AK_API_PATHS_H
#define AK_API_PATHS_H

#include "api/job.h"

/* The verbs that write files, each with its own reads and writes. */
typedef enum job_verb {
    JOB_VERB_ANONYMIZE = 0,  /* reads input, hierarchies; writes output, report, rules */
    JOB_VERB_SEQUENTIAL = 1, /* reads input, earlier releases, hierarchies, inconsistency file; writes output, report */
    JOB_VERB_RECODE = 2,     /* reads input, rules; writes output */
    JOB_VERB_REPORT = 3      /* reads the published file (as input) and the original, hierarchies; writes html */
} job_verb;

/* Refuses (ANONKIT_E_USAGE in job->err, naming both options and paths) an
 * output that is empty (""), two outputs to standard output ("-"), and an
 * output that names the same file as another output or as anything the verb
 * reads; job files (--job) count as read by every verb. Returns ANONKIT_OK
 * or the status; the caller turns it into the job's message (job_fail). */
int job_check_paths(anonkit_job *job, job_verb verb);

#endif
