/* jsonb.c (api) — the complete text of a JSON document (jsonb.h). */
#include "api/jsonb.h"

#include <stdlib.h>

#include "common/strbuf.h"

/* The dump's text as jansson hands it over, piece by piece; a piece that
 * could not be kept fails this and every later call, so that a failure
 * jansson ignores (it drops a key whose dump failed and runs on) is still
 * seen at the end. */
typedef struct dump_sink {
    strbuf text;
    int failed;
} dump_sink;

static int dump_piece(const char *buffer, size_t size, void *data)
{
    dump_sink *d = data;
    if (!d->failed && strbuf_append(&d->text, buffer, size) != 0) d->failed = 1;
    return d->failed ? -1 : 0;
}

char *jsonb_dumps(const json_t *root)
{
    if (!root) return NULL;
    dump_sink d = {{NULL, 0, 0}, 0};
    const int rc = json_dump_callback(root, dump_piece, &d,
                                      JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
    if (rc == 0 && !d.failed && strbuf_append(&d.text, "", 1) == 0) return d.text.data; /* (with its NUL) */
    free(d.text.data);
    return NULL;
}

json_t *jsonb_strings(char *const *items, size_t count)
{
    int jfail = 0;
    json_t *a = json_array();
    for (size_t i = 0; a && i < count; i++) JAPPEND(a, json_string(items[i]));
    if (jfail) {
        json_decref(a);
        return NULL;
    }
    return a;
}
