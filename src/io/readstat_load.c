/* readstat_load.c — libreadstat opened with dlopen when it is used (readstat_load.h). */
#include "io/readstat_load.h"

#include <string.h>

/* Every function of the table with its place in a rs_api. */
static const dl_symbol rs_symbols[] = {
#define RS_API_SYMBOL(name) {#name, offsetof(rs_api, name)},
    RS_API_FUNCTIONS(RS_API_SYMBOL)
#undef RS_API_SYMBOL
};

int rs_api_open(rs_api *api, const char *soname, const char *shown, ak_error *err)
{
    static const dl_library what = {"SPSS, Stata and SAS files need", "libreadstat", "libreadstat1"};
    memset(api, 0, sizeof *api);
    const int rc = dl_lib_open(&api->lib, api, rs_symbols, sizeof rs_symbols / sizeof *rs_symbols, soname, &what,
                               shown, err);
    if (rc != ANONKIT_OK) memset(api, 0, sizeof *api);
    return rc;
}

void rs_api_close(rs_api *api)
{
    dl_lib_close(&api->lib);
    memset(api, 0, sizeof *api);
}
