/* sqlite_load.c — libsqlite3 opened with dlopen when it is used (sqlite_load.h). */
#include "io/sqlite_load.h"

#include <string.h>

/* Every function of the table with its place in a sq_api. */
static const dl_symbol sq_symbols[] = {
#define SQ_API_SYMBOL(name) {#name, offsetof(sq_api, name)},
    SQ_API_FUNCTIONS(SQ_API_SYMBOL)
#undef SQ_API_SYMBOL
};

int sq_api_open(sq_api *api, const char *soname, const char *shown, ak_error *err)
{
    static const dl_library what = {"SQLite sources and sinks need", "libsqlite3", "libsqlite3-0"};
    memset(api, 0, sizeof *api);
    const int rc = dl_lib_open(&api->lib, api, sq_symbols, sizeof sq_symbols / sizeof *sq_symbols, soname, &what,
                               shown, err);
    if (rc != ANONKIT_OK) memset(api, 0, sizeof *api);
    return rc;
}

void sq_api_close(sq_api *api)
{
    dl_lib_close(&api->lib);
    memset(api, 0, sizeof *api);
}
