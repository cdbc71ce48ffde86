/* dl_load.h — a shared library opened at run time (dlopen) and its functions
 * looked up into a table (dlsym), for the libraries only some runs use:
 * libcrypto (the release report's SHA-256, io/crypto_load.h), SQLite
 * (io/sqlite_load.h), ReadStat (io/readstat_load.h). Linking them would make
 * every anonkit process load and relocate them at start, a cost a run on a CSV
 * file pays for nothing. The table lives in the caller's struct (a source, a
 * sink, a call's locals): no state is global. libpq has its own loader of the
 * same shape (io/pg_load.h). */
#ifndef ANONKIT_IO_DL_LOAD_H
#define ANONKIT_IO_DL_LOAD_H

#include <stddef.h>

#include "common/error.h"

/* One function of a table: its name and the offset of its pointer in the
 * table's struct. */
typedef struct dl_symbol {
    const char *name;
    size_t offset;
} dl_symbol;

/* What a library is for, for the messages: "<needs> <library> (<soname>,
 * package <package>), which cannot be loaded: <why>". */
typedef struct dl_library {
    const char *needs;   /* "SQLite sources and sinks need" */
    const char *library; /* "libsqlite3" */
    const char *package; /* the Debian/Ubuntu package that installs it */
} dl_library;

/* Opens soname (RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE) into *lib and stores
 * every function of syms[0..n) at its offset in table. Missing, or without
 * one of the functions: *lib NULL and ANONKIT_E_IO with a message, about
 * `shown`, naming the package to install. */
int dl_lib_open(void **lib /* OUT */, void *table, const dl_symbol *syms, size_t n, const char *soname,
                const dl_library *what, const char *shown, ak_error *err);

/* Lets go of dl_lib_open's handle (no-op on NULL) and sets *lib to NULL. The
 * library stays mapped until the process ends (RTLD_NODELETE): it may have
 * registered exit handlers (OpenSSL does). */
void dl_lib_close(void **lib);

#endif
