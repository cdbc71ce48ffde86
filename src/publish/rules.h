/* rules.h — the global recoding function as a file of rules ([LeFevre07] §1.2, §2.2).
 *
 * Every path from the root of the partition tree to a leaf is a rule: the
 * leaf's region (the conjunction of the path's predicates, per QI) and the
 * generalized tuple published for its class. The rules of all leaves cover
 * the whole domain, so they recode any later data of the same schema. The
 * file is self-contained (schema, delimiter, hierarchies, rules) and written
 * one rule at a time in depth-first order; docs/rules-format.md describes it.
 *
 * Loading rebuilds a guillotine tree over the rules (they tile the domain, or
 * the file is rejected), so that a row is located in O(tree height). */
#ifndef AK_RULES_H
#define AK_RULES_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/error.h"
#include "core/partition.h"
#include "core/recode.h"
#include "core/table.h"
#include "io/csv.h"

#define RULES_FORMAT_VERSION 1

/* Writes the rules of partition p of table t (one per class, in class order,
 * which is depth-first order of the partition tree) to out, named out_name in
 * messages. Published texts as the writer makes them in `style` (means from
 * recode_class_means, needed for RECODE_MEAN only). */
int rules_write(const table *t, const partition *p, recode_style style, const double *means, FILE *out,
                const char *out_name, ak_error *err);

typedef enum rules_role {
    RULES_QI_NUMERIC = 0,
    RULES_QI_CATEGORICAL,
    RULES_IDENTIFIER, /* dropped from the output */
    RULES_COPIED      /* copied unchanged */
} rules_role;

typedef struct rules rules;

/* Loads a rules file; errors name the file and line. */
int rules_load(rules **out /* OUT */, const char *path, ak_error *err);
void rules_free(rules *r);

char rules_delimiter(const rules *r);
uint32_t rules_column_count(const rules *r);
const char *rules_column_name(const rules *r, uint32_t c);
rules_role rules_column_role(const rules *r, uint32_t c);
/* QIs are numbered in column order. */
uint32_t rules_qi_count(const rules *r);
uint32_t rules_qi_column(const rules *r, uint32_t q);
size_t rules_count(const rules *r);
uint64_t rules_class_rows(const rules *r, size_t rule);
/* The height of the rebuilt tree: the most comparisons rules_find makes. */
size_t rules_height(const rules *r);
/* The published text of QI q in a rule (NUL-terminated), and its length. */
const char *rules_text(const rules *r, size_t rule, uint32_t q, size_t *len /* OUT, may be NULL */);

/* The key of a value of QI q: the number itself (numeric), or the code of its
 * leaf in the embedded hierarchy (categorical). 0, or -1 when the value is no
 * number / no leaf, or RULES_INEXACT when it is a number that keys (doubles)
 * cannot compare exactly: an integer beyond ±2^53, or more than 15
 * significant digits (refused, never rounded into a neighbour's region). */
#define RULES_INEXACT (-2)
int rules_key(const rules *r, uint32_t q, const char *text, size_t len, double *key /* OUT */);
/* The rule whose region holds the point keys[0 .. rules_qi_count). */
size_t rules_find(const rules *r, const double *keys);
/* Whether the key of QI q lies outside the values the rule's published text
 * stands for: for a numeric QI the class's lowest to highest value, for a
 * categorical QI the leaves below the published hierarchy node. */
int rules_outside(const rules *r, size_t rule, uint32_t q, double key);

/* Rows recoded and rows with a value outside their class's published range. */
typedef struct rules_stats {
    uint64_t rows;
    uint64_t outside;
} rules_stats;

/* Recodes CSV data (header first, the rules' delimiter) from in, named
 * in_name in messages, to out: the columns of the rules in their order,
 * identifiers dropped, QIs replaced by the published text of the rule whose
 * region holds the row, other columns copied; rows in input order. Every
 * column of the rules but identifiers must be in the input, and no other. */
int rules_apply(const rules *r, csv_reader *in, const char *in_name, csv_writer *out, rules_stats *stats /* OUT */,
                ak_error *err);

/* The same file written partition by partition, depth-first ([LeFevre07] §2.2: only
 * the current path of the tree is in memory): the head from the schema, the
 * rules of each partition's classes (view shares the schema's dictionaries),
 * then the count record. */
typedef struct rules_stream rules_stream;
int rules_stream_open(rules_stream **out /* OUT */, const table *schema, recode_style style, FILE *stream,
                      const char *out_name, ak_error *err);
int rules_stream_part(rules_stream *rs, const table *view, const partition *p, const double *means, ak_error *err);
int rules_stream_close(rules_stream *rs, ak_error *err);
void rules_stream_free(rules_stream *rs);

#endif
