/* pg_load.c — libpq opened with dlopen when a PostgreSQL source or sink is
 * used (pg_load.h). */
#define _GNU_SOURCE /* RTLD_NODELETE */
#include "io/pg_load.h"

#include <dlfcn.h>
#include <string.h>

int pg_api_open(pg_api *api, const char *soname, const char *shown, ak_error *err)
{
    memset(api, 0, sizeof *api);
    api->lib = dlopen(soname, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (!api->lib) {
        const char *why = dlerror();
        return ak_err_set(err, ANONKIT_E_IO, shown, 0, 0,
                          "PostgreSQL sources and sinks need libpq (%s, package libpq5), which cannot be loaded: %s",
                          soname, why ? why : "not found");
    }
    const char *missing = NULL;
    /* dlsym gives a void *: copied into the function pointer (POSIX makes
     * the two the same size and representation) */
#define PG_API_LOOKUP(name)                                                                                            \
    if (!missing) {                                                                                                    \
        void *sym = dlsym(api->lib, #name);                                                                            \
        _Static_assert(sizeof sym == sizeof api->name, "function and object pointers differ in size");              \
        if (sym) memcpy(&api->name, &sym, sizeof sym);                                                                 \
        else missing = #name;                                                                                          \
    }
    PG_API_FUNCTIONS(PG_API_LOOKUP)
#undef PG_API_LOOKUP
    if (missing) {
        pg_api_close(api);
        return ak_err_set(err, ANONKIT_E_IO, shown, 0, 0,
                          "PostgreSQL sources and sinks need libpq (%s, package libpq5); the one found lacks %s",
                          soname, missing);
    }
    return ANONKIT_OK;
}

void pg_api_close(pg_api *api)
{
    if (api->lib) dlclose(api->lib);
    memset(api, 0, sizeof *api);
}
