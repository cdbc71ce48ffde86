/* table_merge.h — the dictionaries of a table read in shards, merged into
 * the dictionaries of the whole table (docs/distributed.md §2): numeric codes
 * by rank among every shard's distinct values, each value published in the
 * spelling read first; sensitive and class codes in order of first appearance
 * over the shards in order. Shards exchange their dictionaries as packed bytes,
 * however they move them (src/mpi/ gathers them with MPI). */
#ifndef AK_TABLE_MERGE_H
#define AK_TABLE_MERGE_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "common/strbuf.h"
#include "core/table.h"

/* Appends t's dictionaries to out: per numeric QI its values in code order,
 * then the sensitive and the class values in code order. */
int table_dict_pack(const table *t, strbuf *out, ak_error *err);

/* Replaces schema's numeric, sensitive and class dictionaries by the merge
 * of packs[0..npacks) (every shard's, in the shards' order). */
int table_dict_merge(table *schema, const char *const *packs, const size_t *lens, size_t npacks, ak_error *err);

/* Code maps from one shard's dictionaries (its pack) into the merged ones of
 * schema: num_map[q][local rank] for numeric QIs (NULL for categorical ones),
 * sens_map and class_map (NULL when absent). Free with table_dict_maps_free. */
typedef struct table_dict_maps {
    uint32_t nqi;
    uint32_t **num_map;
    uint32_t *sens_map, *class_map;
} table_dict_maps;
int table_dict_maps_make(const table *schema, const char *pack, size_t len, table_dict_maps *out /* OUT */,
                         ak_error *err);
void table_dict_maps_free(table_dict_maps *m);

#endif
