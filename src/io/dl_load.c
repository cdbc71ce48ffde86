/* dl_load.c — a shared library opened with dlopen and its functions looked up
 * with dlsym into a table (dl_load.h). */
#define _GNU_SOURCE /* RTLD_NODELETE */
#include "io/dl_load.h"

#include <dlfcn.h>
#include <string.h>

/* dlsym gives a void *, copied into a function pointer of the table: POSIX
 * makes the two the same size and representation. */
_Static_assert(sizeof(void *) == sizeof(void (*)(void)), "function and object pointers differ in size");

int dl_lib_open(void **lib, void *table, const dl_symbol *syms, size_t n, const char *soname, const dl_library *what,
                const char *shown, ak_error *err)
{
    *lib = dlopen(soname, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (!*lib) {
        const char *why = dlerror();
        return ak_err_set(err, ANONKIT_E_IO, shown, 0, 0, "%s %s (%s, package %s), which cannot be loaded: %s",
                          what->needs, what->library, soname, what->package, why ? why : "not found");
    }
    for (size_t i = 0; i < n; i++) {
        void *sym = dlsym(*lib, syms[i].name);
        if (!sym) {
            dl_lib_close(lib);
            return ak_err_set(err, ANONKIT_E_IO, shown, 0, 0, "%s %s (%s, package %s); the one found lacks %s",
                              what->needs, what->library, soname, what->package, syms[i].name);
        }
        memcpy((char *)table + syms[i].offset, &sym, sizeof sym);
    }
    return ANONKIT_OK;
}

void dl_lib_close(void **lib)
{
    if (*lib) dlclose(*lib);
    *lib = NULL;
}
