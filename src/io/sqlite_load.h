/* sqlite_load.h — SQLite (libsqlite3) loaded at run time, only when an SQLite
 * source or sink is opened (io/source_sqlite.c; io/dl_load.h), so that
 * starting anonkit does not load it; the functions are looked up into a
 * sq_api that the user keeps in its own struct. */
#ifndef ANONKIT_IO_SQ_LOAD_H
#define ANONKIT_IO_SQ_LOAD_H

#include <sqlite3.h>

#include "io/dl_load.h"

/* The soname looked for, of the Debian/Ubuntu package libsqlite3-0. */
#define SQ_SONAME "libsqlite3.so.0"

/* Every libsqlite3 function anonkit calls; X(name) once each. */
#define SQ_API_FUNCTIONS(X) \
    X(sqlite3_bind_double) X(sqlite3_bind_int64) X(sqlite3_bind_null) X(sqlite3_bind_text) X(sqlite3_close) \
    X(sqlite3_column_bytes) X(sqlite3_column_count) X(sqlite3_column_decltype) X(sqlite3_column_name) \
    X(sqlite3_column_text) X(sqlite3_column_type) X(sqlite3_errmsg) X(sqlite3_exec) X(sqlite3_finalize) \
    X(sqlite3_open_v2) X(sqlite3_prepare_v2) X(sqlite3_reset) X(sqlite3_step)

/* The loaded library and its functions, called as api->name(...), with the
 * very types of the library's header. */
typedef struct sq_api {
    void *lib; /* the dlopen handle */
#define SQ_API_FIELD(name) __typeof__(name) *name;
    SQ_API_FUNCTIONS(SQ_API_FIELD)
#undef SQ_API_FIELD
} sq_api;

/* Loads libsqlite3 (soname: SQ_SONAME but for the tests) and fills *api.
 * Missing, or without one of the functions: ANONKIT_E_IO with a message,
 * about `shown`, naming the package to install, and *api zeroed. */
int sq_api_open(sq_api *api /* OUT */, const char *soname, const char *shown, ak_error *err);

/* Lets go of sq_api_open's handle (no-op on a zeroed api). */
void sq_api_close(sq_api *api);

#endif
