/* pg_load.h — libpq loaded at run time, only when a PostgreSQL source or sink
 * is opened (src/io/source_pg.c, docs/sources.md). Linking libpq would make
 * every anonkit process load it and the libraries it needs (GnuTLS, Kerberos,
 * LDAP, SASL...), some 3 ms of start-up that a run on a CSV file never uses;
 * the functions are looked up instead with dlopen/dlsym into a pg_api. */
#ifndef ANONKIT_IO_PG_LOAD_H
#define ANONKIT_IO_PG_LOAD_H

#include <libpq-fe.h>

#include "common/error.h"

/* The soname looked for: libpq's ABI 5, of the Debian/Ubuntu package libpq5. */
#define PG_LIBPQ_SONAME "libpq.so.5"

/* Every libpq function anonkit calls; X(name) once each. */
#define PG_API_FUNCTIONS(X)                                                                                            \
    X(PQconnectdbParams) X(PQstatus) X(PQerrorMessage) X(PQfinish) X(PQexec) X(PQexecParams) X(PQprepare)           \
    X(PQdescribePrepared) X(PQresultStatus) X(PQclear) X(PQnfields) X(PQfname) X(PQftype) X(PQgetvalue)             \
    X(PQescapeIdentifier) X(PQfreemem) X(PQgetCopyData) X(PQputCopyData) X(PQputCopyEnd) X(PQgetResult)

/* The loaded library and its functions, called as api->PQexec(...), with the
 * very types of libpq-fe.h. */
typedef struct pg_api {
    void *lib; /* the dlopen handle */
#define PG_API_FIELD(name) __typeof__(name) *name;
    PG_API_FUNCTIONS(PG_API_FIELD)
#undef PG_API_FIELD
} pg_api;

/* Loads libpq (soname: PG_LIBPQ_SONAME but for the tests) and fills *api.
 * Missing, or without one of the functions: ANONKIT_E_IO with a message,
 * about `shown`, naming the package to install. */
int pg_api_open(pg_api *api /* OUT */, const char *soname, const char *shown, ak_error *err);

/* Lets go of pg_api_open's handle (no-op on a zeroed api). libpq itself stays
 * mapped until the process ends (RTLD_NODELETE): the libraries it loads may
 * have registered exit handlers. */
void pg_api_close(pg_api *api);

#endif
