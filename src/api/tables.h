/* tables.h (api) — what a job keeps for the table API (io/memtable.h): its
 * borrowed input table, the private CSV copies made of tables for runs that
 * read files, and the table its run published, on its way to the result. */
#ifndef AK_API_TABLES_H
#define AK_API_TABLES_H

#include "anonkit/anonkit.h"
#include "io/spool.h"

/* One table given to the job, spooled: readers open sp.path. */
typedef struct job_table_spool {
    spool sp;
    const char *shown; /* its name in messages ("the input table", ...) */
} job_table_spool;

/* A hierarchy given as a table (anonkit_job_set_hierarchy_table): the job's
 * copy, named `name` in job->hierarchy_paths; loaded from memory
 * (table_spec.hierarchy_tables), or through its private CSV copy `spool`
 * (made once, in spools) by runs that read hierarchies as files. */
typedef struct job_hier_table {
    char *name;             /* "table:hierarchy:<column>" */
    anonkit_table *table;   /* owned */
    const char *spool;      /* NULL until a run needed the file */
} job_hier_table;

struct job_tables {
    job_hier_table *hier;
    size_t nhier;
    char **hier_saved;      /* job_tables_input_file: the names it replaced in job->hierarchy_paths (NULL: none) */
    size_t nsaved;
    job_table_spool **spools;
    size_t count;
    anonkit_table *output; /* what the "table:" sink committed, or the writer built (publish/table_out.c) */
    const anonkit_table *input; /* anonkit_job_set_input_table's table, borrowed; job->input is then "table:" */
    const char *input_spool;    /* its private CSV copy, once a verb that reads files needed it (in spools) */
};

/* The name job->input has while its input is a table in memory. */
#define JOB_TABLE_INPUT "table:"

/* The job's input table when job->input names it, else NULL. */
const anonkit_table *job_tables_input(const anonkit_job *job);
/* The hierarchy table named `name` in job->hierarchy_paths, else NULL. */
const anonkit_table *job_tables_hierarchy(const anonkit_job *job, const char *name);
/* The path of the private CSV copy of hierarchy table `name` (made once;
 * for a reader of hierarchy files, the model's sensitive hierarchy). */
int job_tables_hierarchy_file(anonkit_job *job, const char *name, const char **path /* OUT */);
/* Whether `name` is the name of a hierarchy table of the job. */
int job_tables_is_hierarchy(const anonkit_job *job, const char *name);
/* Before a run that reads its input and hierarchies as files: when the
 * input is a table, job->input becomes the path of its private CSV copy
 * (made once, named "the input table" in messages), and each hierarchy
 * table named in job->hierarchy_paths becomes the path of its copy, until
 * job_tables_input_restore(job, *saved) (to be called whatever this
 * returned). */
int job_tables_input_file(anonkit_job *job, char **saved /* OUT: NULL when nothing changed */);
void job_tables_input_restore(anonkit_job *job, char *saved);

/* anonkit_metrics_table (metrics.c): the original and the published table
 * read in memory, no private copy. */
int job_metrics_tables(anonkit_job *job, const anonkit_table *original, const anonkit_table *published,
                       anonkit_result **out_result);

/* Frees job->tables (the spools too); for anonkit_job_free. */
void job_tables_free(anonkit_job *job);
/* Replaces in job->errmsg each spool's path by the name of its table; for job_fail. */
void job_tables_name_spools(anonkit_job *job);
/* Before a verb that may publish a table: drops an earlier run's table. */
void job_tables_reset_output(anonkit_job *job);
/* After the verb succeeded: the published table, if any, goes to result (or is freed). */
void job_tables_hand_output(anonkit_job *job, anonkit_result *result);

#endif
