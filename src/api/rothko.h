/* rothko.h (api) — `anonkit anonymize --algorithm rothko-t|rothko-s`: the
 * job's settings into rothko_options, the out-of-core run, and what it did
 * into the report's "out_of_core" object ([LeFevre07] §2, §3). */
#ifndef AK_API_ROTHKO_H
#define AK_API_ROTHKO_H

#include "api/algorithm.h"

/* Rothko-T (frequency groups, exact Mondrian out of core) and Rothko-S
 * (trees grown on samples): stream the partitions of spec to leaf_fn. */
int rothko_t_stream(anonkit_job *job, const table_spec *spec, const ak_run_context *ctx, rothko_leaf_fn leaf_fn,
                    void *leaf_ctx, ak_stream_output *out);
int rothko_s_stream(anonkit_job *job, const table_spec *spec, const ak_run_context *ctx, rothko_leaf_fn leaf_fn,
                    void *leaf_ctx, ak_stream_output *out);

#endif
