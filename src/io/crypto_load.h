/* crypto_load.h — OpenSSL's libcrypto loaded at run time, only when the
 * release report's SHA-256 is computed (io/sha256.c; io/dl_load.h), so that
 * starting anonkit does not load it; the functions are looked up into a
 * crypto_api that the user keeps in its own struct. */
#ifndef ANONKIT_IO_CRYPTO_LOAD_H
#define ANONKIT_IO_CRYPTO_LOAD_H

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>

#include "io/dl_load.h"

/* The soname looked for, of the Debian/Ubuntu package libssl3. */
#define CRYPTO_SONAME "libcrypto.so.3"

/* Every OpenSSL's libcrypto function anonkit calls; X(name) once each. */
#define CRYPTO_API_FUNCTIONS(X) \
    X(ERR_clear_error) X(EVP_DigestFinal_ex) X(EVP_DigestInit_ex) X(EVP_DigestUpdate) X(EVP_MD_CTX_free) \
    X(EVP_MD_CTX_new) X(EVP_MD_fetch) X(EVP_MD_free) X(OSSL_LIB_CTX_free) X(OSSL_LIB_CTX_new)

/* The loaded library and its functions, called as api->name(...), with the
 * very types of the library's header. */
typedef struct crypto_api {
    void *lib; /* the dlopen handle */
#define CRYPTO_API_FIELD(name) __typeof__(name) *name;
    CRYPTO_API_FUNCTIONS(CRYPTO_API_FIELD)
#undef CRYPTO_API_FIELD
} crypto_api;

/* Loads OpenSSL's libcrypto (soname: CRYPTO_SONAME but for the tests) and fills *api.
 * Missing, or without one of the functions: ANONKIT_E_IO with a message,
 * about `shown`, naming the package to install, and *api zeroed. */
int crypto_api_open(crypto_api *api /* OUT */, const char *soname, const char *shown, ak_error *err);

/* Lets go of crypto_api_open's handle (no-op on a zeroed api). */
void crypto_api_close(crypto_api *api);

#endif
