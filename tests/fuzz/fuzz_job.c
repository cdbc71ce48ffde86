/* fuzz_job.c — libFuzzer harness for job files (src/api/job): any bytes are
 * read as a JSON job file. A refused file must leave a message; an accepted
 * one must leave a job whose every setting can be read back by the public
 * API without harm. Nothing is run: the job only names files. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "anonkit/anonkit.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_path("job.json");
    fuzz_write(path, data, size);
    anonkit_job *job = anonkit_job_create();
    if (!job) abort();
    const int rc = anonkit_job_set(job, ANONKIT_OPT_JOB, path);
    if (rc != ANONKIT_OK) {
        const char *msg = anonkit_errmsg(job);
        if (rc == ANONKIT_E_INTERNAL || !msg || !msg[0]) {
            fprintf(stderr, "job file refused with status %d and message '%s'\n", rc, msg ? msg : "(null)");
            abort();
        }
    } else {
        /* settings applied after the file still work, and so does a second file */
        if (anonkit_job_set(job, ANONKIT_OPT_K, "3") != ANONKIT_OK) abort();
        (void)anonkit_job_set(job, ANONKIT_OPT_JOB, path);
    }
    anonkit_job_free(job);
    unlink(path);
    return 0;
}
