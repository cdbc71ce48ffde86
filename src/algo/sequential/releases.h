/* releases.h — the input of a sequential release ([Wang06]) read, joined and
 * encoded for TDS4SA (tds.h). In two steps around the loading of the current
 * release T1, which the caller does through table_load:
 *
 *   seq_open    reads the headers of T1 and of the earlier releases and the
 *               inconsistency file, and resolves X, Y and the join
 *               attributes (§3.3; star joins with T1 only, §7): T1's QIs are
 *               then seq_t1_qi (X1 in the order of X, then the join
 *               attributes of T1 outside X), and seq_t1_sensitive names the
 *               one Y attribute of T1 the table may read as its sensitive
 *               column;
 *   seq_encode  encodes Y of T1 and every earlier release against the loaded
 *               table and fills the tds_input.
 *
 * Everything the tds_input points to lives until seq_free. */
#ifndef AK_SEQ_RELEASES_H
#define AK_SEQ_RELEASES_H

#include <stddef.h>

#include "algo/sequential/tds.h"
#include "common/error.h"
#include "core/table.h"
#include "model/xyprivacy.h"

/* A list of names (the layout of the job's string lists). */
typedef struct seq_names {
    char **items;
    size_t count;
} seq_names;

/* The settings of one sequential release. The names are borrowed: they must
 * outlive the seq_releases. */
typedef struct seq_settings {
    const char *input;          /* T1's file (a spooled copy of stdin) */
    const char *display;        /* T1's name in messages */
    seq_names previous;         /* the earlier releases' files, at least one */
    seq_names x_attrs, y_attrs; /* X and Y */
    seq_names sensitive_values; /* linkability: Y values that count (none: all do) */
    seq_names identifiers;      /* T1 columns left out of the release */
    seq_names hierarchy_attrs, hierarchy_paths; /* parallel; the last one given for a name counts */
    const char *class_name;     /* T1's class column, or NULL */
    const char *inconsistent;   /* the inconsistency file, or NULL */
    char delimiter;
    xy_model xy;
    int distortion;             /* the score: 1 distortion, 0 class entropy */
    unsigned threads;           /* for reading, at least 1 (the same result for any number) */
} seq_settings;

typedef struct seq_releases seq_releases;

/* Reads the headers and the inconsistency file and resolves the attributes.
 * *out is set even on failure (then free it with seq_free). Returns 0 or a
 * negative status (usage errors name the option at fault). */
int seq_open(seq_releases **out /* OUT */, const seq_settings *cfg, ak_error *err);

/* The QIs T1 is to be loaded with. */
const seq_names *seq_t1_qi(const seq_releases *s);

/* The one Y attribute of T1 to load as the table's sensitive column, or NULL
 * (Y has no attribute of T1, or several, or it is the class or an
 * identifier; seq_encode then reads Y of T1 itself). */
const char *seq_t1_sensitive(const seq_releases *s);

/* Encodes Y of T1 (table t, loaded with seq_t1_qi and seq_t1_sensitive) and
 * every earlier release, and fills *in. Returns 0 or a negative status. */
int seq_encode(seq_releases *s, const table *t, tds_input *in /* OUT */, ak_error *err);

void seq_free(seq_releases *s);

#endif
