/* gsl_load.c — GSL opened with dlopen when it is used (gsl_load.h). */
#include "io/gsl_load.h"

#include <string.h>

/* Every function of the table with its place in a gsl_api. */
static const dl_symbol gsl_symbols[] = {
#define GSL_API_SYMBOL(name) {#name, offsetof(gsl_api, name)},
    GSL_API_FUNCTIONS(GSL_API_SYMBOL)
#undef GSL_API_SYMBOL
};

int gsl_api_open(gsl_api *api, ak_error *err)
{
    static const dl_library what = {"Rothko-S's hypothesis tests and normal salaries need", "GSL", "libgsl27"};
    memset(api, 0, sizeof *api);
    const int rc =
        dl_lib_open(&api->lib, api, gsl_symbols, sizeof gsl_symbols / sizeof *gsl_symbols, GSL_SONAME, &what, NULL, err);
    if (rc != ANONKIT_OK) memset(api, 0, sizeof *api);
    return rc;
}

void gsl_api_close(gsl_api *api)
{
    dl_lib_close(&api->lib);
    memset(api, 0, sizeof *api);
}
