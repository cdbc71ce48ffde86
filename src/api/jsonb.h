/* jsonb.h (api) — building a JSON document (a report, the metrics) while
 * remembering whether any part of it could not be made: jansson returns NULL
 * from a constructor and -1 from a setter when memory runs out, and a
 * document missing keys must not be handed out as complete. Every call
 * through these macros folds its failure into the int `jfail` of the
 * building function, which checks it at the end. (A setter given a NULL
 * object or value fails and frees the value, so a failed constructor needs
 * no check of its own.) */
#ifndef AK_API_JSONB_H
#define AK_API_JSONB_H

#include <jansson.h>

#define JSET(obj, key, value) (jfail |= json_object_set_new((obj), (key), (value)) != 0)
#define JSET_REF(obj, key, value) (jfail |= json_object_set((obj), (key), (value)) != 0)
#define JAPPEND(arr, value) (jfail |= json_array_append_new((arr), (value)) != 0)

/* The text of a report or of the metrics (2-space indent, keys in the order
 * set, reals to 17 digits), complete: jansson's json_dumps can return a
 * garbled text (a key lost) when memory runs out during the dump, because it
 * ignores a failure to write a key, so the dump goes through a callback whose
 * first failure fails the whole text. (It was read back with json_loads
 * before; jansson's lexer writes out of bounds when its own allocation fails,
 * akheron/jansson#362.) NULL when anything failed; free() the text. */
char *jsonb_dumps(const json_t *root);

/* A JSON array of the texts items[0..count); NULL when memory runs out. */
json_t *jsonb_strings(char *const *items, size_t count);

#endif
