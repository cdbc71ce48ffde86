/* paths.c (api) — job_check_paths: the outputs of a run are distinct from
 * its inputs and from each other, compared by device and inode (paths.h). */
#include "api/paths.h"

#include "io/source.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* What one path names. */
typedef struct path_id {
    const char *role;     /* the option, as messages name it ("--report", "the input") */
    const char *path;     /* as given */
    int has_file;         /* an existing regular file: file_dev, file_ino */
    dev_t file_dev;
    ino_t file_ino;
    int has_entry;        /* its resolved folder (entry_dev, entry_ino) and last name */
    dev_t entry_dev;
    ino_t entry_ino;
    const char *name;     /* the last name, inside path */
    size_t name_len;
} path_id;

/* The paths a verb reads: room for every one (cap), count filled. */
typedef struct path_set {
    path_id *item;
    size_t count, cap;
} path_set;

/* Fills id for `path` (the standard input when is_stdin). Returns 0, or -1
 * when the path names nothing a run could overwrite: an existing folder,
 * device or FIFO (written directly or refused when opened, never replaced),
 * or standard input that is not a redirected regular file. */
static int identify(path_id *id, const char *role, const char *path, int is_stdin)
{
    memset(id, 0, sizeof *id);
    id->role = role;
    id->path = path;
    if (!is_stdin && source_kind_of(path) == SOURCE_TABLE) return -1; /* a table in memory, no file */
    struct stat st;
    if (is_stdin) {
        if (fstat(STDIN_FILENO, &st) != 0 || !S_ISREG(st.st_mode)) return -1;
        id->has_file = 1;
        id->file_dev = st.st_dev;
        id->file_ino = st.st_ino;
        return 0;
    }
    if (stat(path, &st) == 0) {
        if (!S_ISREG(st.st_mode)) return -1;
        id->has_file = 1;
        id->file_dev = st.st_dev;
        id->file_ino = st.st_ino;
    }
    /* the folder that holds the last name, resolved by stat */
    size_t len = strlen(path);
    while (len > 1 && path[len - 1] == '/') len--;
    size_t start = len;
    while (start > 0 && path[start - 1] != '/') start--;
    id->name = path + start;
    id->name_len = len - start;
    char folder[4096];
    if (start == 0) {
        strcpy(folder, ".");
    } else {
        const size_t flen = start > 1 ? start - 1 : 1; /* "/x": the root */
        if (flen >= sizeof folder) return 0;           /* too long to resolve: compared as a file only */
        memcpy(folder, path, flen);
        folder[flen] = '\0';
    }
    if (id->name_len && stat(folder, &st) == 0) {
        id->has_entry = 1;
        id->entry_dev = st.st_dev;
        id->entry_ino = st.st_ino;
    }
    return 0;
}

/* Whether a and b name the same file. */
static int same(const path_id *a, const path_id *b)
{
    if (a->has_file && b->has_file && a->file_dev == b->file_dev && a->file_ino == b->file_ino) return 1;
    return a->has_entry && b->has_entry && a->entry_dev == b->entry_dev && a->entry_ino == b->entry_ino &&
           a->name_len == b->name_len && !memcmp(a->name, b->name, a->name_len);
}

/* Adds `path` under `role` to set (nothing when it names nothing to compare). */
static void add(path_set *set, const char *role, const char *path)
{
    if (!path || set->count == set->cap) return;
    const int is_stdin = !strcmp(path, "-");
    if (identify(&set->item[set->count], is_stdin ? "standard input" : role, path, is_stdin) == 0) set->count++;
}

static void add_list(path_set *set, const char *role, const strlist *l)
{
    for (size_t i = 0; i < l->count; i++) add(set, role, l->items[i]);
}

/* The outputs of the verb, with their options' names, in order. */
static size_t outputs(const anonkit_job *job, job_verb verb, const char **role, const char **path)
{
    size_t n = 0;
    if (verb == JOB_VERB_REPORT) { /* anonkit report writes the document only */
        role[n] = "--html", path[n++] = job->html;
        return n;
    }
    role[n] = "--output", path[n++] = job->output;
    if (verb != JOB_VERB_RECODE) role[n] = "--report", path[n++] = job->report;
    if (verb == JOB_VERB_ANONYMIZE) role[n] = "--rules", path[n++] = job->rules;
    if (verb == JOB_VERB_ANONYMIZE) role[n] = "--html", path[n++] = job->html;
    return n;
}

int job_check_paths(anonkit_job *job, job_verb verb)
{
    ak_error *err = &job->err;
    const char *role[4], *path[4];
    const size_t nout = outputs(job, verb, role, path);
    for (size_t i = 0; i < nout; i++) {
        if (path[i] && !path[i][0])
            return ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0, "%s '' names no file (give a path, or - for stdout)",
                              role[i]);
        for (size_t j = 0; j < i; j++)
            if (path[i] && path[j] && !strcmp(path[i], "-") && !strcmp(path[j], "-"))
                return ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0,
                                  "%s and %s both write to standard output (-); give one of them a file", role[j],
                                  role[i]);
    }
    path_set reads = {NULL, 0, 4 + job->hierarchy_paths.count + job->previous.count + job->job_files.count};
    if (!(reads.item = malloc(reads.cap * sizeof *reads.item))) return ak_err_nomem(err);
    add(&reads, verb == JOB_VERB_REPORT ? "the published file" : "the input", job->input);
    if (verb != JOB_VERB_RECODE) add_list(&reads, "--hierarchy", &job->hierarchy_paths);
    if (verb == JOB_VERB_SEQUENTIAL) {
        add_list(&reads, "--previous", &job->previous);
        add(&reads, "--inconsistent", job->inconsistent);
    }
    if (verb == JOB_VERB_RECODE) add(&reads, "--rules", job->rules);
    if (verb == JOB_VERB_REPORT) add(&reads, "--original", job->original);
    add_list(&reads, "--job", &job->job_files);

    path_id written[4];
    size_t nwritten = 0;
    int rc = ANONKIT_OK;
    for (size_t i = 0; i < nout && rc == ANONKIT_OK; i++) {
        if (!path[i] || !strcmp(path[i], "-")) continue;
        path_id *w = &written[nwritten];
        if (identify(w, role[i], path[i], 0) != 0) continue;
        for (size_t r = 0; r < reads.count && rc == ANONKIT_OK; r++)
            if (same(w, &reads.item[r]))
                rc = ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0,
                                  "%s '%s' and %s '%s' are the same file: a run never writes a file it reads",
                                  w->role, w->path, reads.item[r].role, reads.item[r].path);
        for (size_t o = 0; o < nwritten && rc == ANONKIT_OK; o++)
            if (same(w, &written[o]))
                rc = ak_err_set(err, ANONKIT_E_USAGE, NULL, 0, 0,
                                  "%s '%s' and %s '%s' are the same file: every output needs a file of its own",
                                  written[o].role, written[o].path, w->role, w->path);
        nwritten++;
    }
    free(reads.item);
    return rc;
}
