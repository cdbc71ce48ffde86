/* crypto_load.c — OpenSSL's libcrypto opened with dlopen when it is used (crypto_load.h). */
#include "io/crypto_load.h"

#include <string.h>

/* Every function of the table with its place in a crypto_api. */
static const dl_symbol crypto_symbols[] = {
#define CRYPTO_API_SYMBOL(name) {#name, offsetof(crypto_api, name)},
    CRYPTO_API_FUNCTIONS(CRYPTO_API_SYMBOL)
#undef CRYPTO_API_SYMBOL
};

int crypto_api_open(crypto_api *api, const char *soname, const char *shown, ak_error *err)
{
    static const dl_library what = {"the release report's checksums need", "OpenSSL's libcrypto", "libssl3"};
    memset(api, 0, sizeof *api);
    const int rc = dl_lib_open(&api->lib, api, crypto_symbols, sizeof crypto_symbols / sizeof *crypto_symbols, soname, &what,
                               shown, err);
    if (rc != ANONKIT_OK) memset(api, 0, sizeof *api);
    return rc;
}

void crypto_api_close(crypto_api *api)
{
    dl_lib_close(&api->lib);
    memset(api, 0, sizeof *api);
}
