/* options.h — the option table: every anonkit_option declared once, with its
 * long name, its kind (flags), its parser and its help. anonkit_job_set, job
 * files (job.c), and through anonkit_option_flags/arg/help the command line's
 * getopt_long tables and --help texts all read it. */
#ifndef AK_API_OPTIONS_H
#define AK_API_OPTIONS_H

#include <stddef.h>

#include "api/job.h"

/* Flags beyond the public ANONKIT_OPTF_*: how a job file gives the option. */
enum {
    AK_OPTF_JSON_TEXT = 1u << 8,    /* the JSON value must be a text (or an array of texts) */
    AK_OPTF_JSON_PATHS = 1u << 9,   /* may be an object {"attr": "path"}: ATTR=PATH settings, paths resolved */
    AK_OPTF_JSON_NUMBERS = 1u << 10, /* may be an object {"attr": number}: ATTR=NUMBER settings */
    AK_OPTF_NOT_IN_FILE = 1u << 11  /* not a setting of job files */
};

typedef struct ak_option_desc ak_option_desc;
struct ak_option_desc {
    const char *name;  /* long name on the command line and in job files */
    unsigned flags;    /* ANONKIT_OPTF_* and AK_OPTF_* */
    /* Parses and stores value (never NULL); a usage error names the option. */
    int (*set)(anonkit_job *job, const ak_option_desc *d, const char *value);
    size_t offset;     /* the job field of the generic setters (text, list) */
    const char *arg;   /* the value's placeholder in help ("FILE"); NULL for a flag */
    const char *help;  /* lines separated by '\n', no final newline */
};

/* The descriptor of option o; NULL when o is not an option. */
const ak_option_desc *ak_option_desc_of(anonkit_option o);

#endif
