/* sha256.c — the SHA-256 of a file (sha256.h), through OpenSSL's EVP
 * digest interface (EVP_MD_fetch in a library context of its own,
 * EVP_DigestInit_ex, EVP_DigestUpdate, EVP_DigestFinal_ex), libcrypto being
 * opened for the call (io/crypto_load.h). */
#include "io/sha256.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "io/crypto_load.h"

/* Bytes read per call. */
#define SHA_CHUNK (1u << 16)

/* The digest of the file at path through the libcrypto functions of c. */
static int sha256_with(const crypto_api *c, const char *path, const char *shown, char hex[AK_SHA256_HEX + 1],
                       ak_error *err)
{
    /* A library context of this call's own, not OpenSSL's default one: when
     * memory runs out while OpenSSL 3.0 makes its default context, that
     * context is left half made (a NULL lock) and the next digest crashes;
     * a context of our own is made whole or not at all, and no state is
     * shared with other users of OpenSSL in the process. */
    OSSL_LIB_CTX *lib = c->OSSL_LIB_CTX_new();
    if (!lib) {
        c->ERR_clear_error(); /* OpenSSL's error queue holds what it could not do */
        return ak_err_nomem(err);
    }
    EVP_MD *md_sha256 = c->EVP_MD_fetch(lib, "SHA2-256", NULL);
    if (!md_sha256) {
        c->ERR_clear_error();
        c->OSSL_LIB_CTX_free(lib);
        return ak_err_set(err, ANONKIT_E_NOMEM, shown, 0, 0, "SHA-256 is not available (out of memory?)");
    }
    FILE *f = fopen(path, "rb");
    EVP_MD_CTX *ctx = f ? c->EVP_MD_CTX_new() : NULL;
    if (!ctx) {
        const int e = errno;
        if (f) fclose(f);
        c->EVP_MD_free(md_sha256);
        c->OSSL_LIB_CTX_free(lib);
        if (f) return ak_err_nomem(err);
        return ak_err_set(err, ANONKIT_E_IO, shown, 0, 0, "cannot read the file for its checksum: %s", strerror(e));
    }
    int rc = ANONKIT_OK;
    if (c->EVP_DigestInit_ex(ctx, md_sha256, NULL) != 1)
        rc = ak_err_set(err, ANONKIT_E_INTERNAL, shown, 0, 0, "SHA-256 could not be started");
    static const size_t chunk = SHA_CHUNK;
    unsigned char buf[SHA_CHUNK];
    while (rc == ANONKIT_OK) {
        const size_t got = fread(buf, 1, chunk, f);
        if (got && c->EVP_DigestUpdate(ctx, buf, got) != 1)
            rc = ak_err_set(err, ANONKIT_E_INTERNAL, shown, 0, 0, "SHA-256 failed");
        if (got < chunk) break;
    }
    if (rc == ANONKIT_OK && ferror(f))
        rc = ak_err_set(err, ANONKIT_E_IO, shown, 0, 0, "cannot read the file for its checksum: %s", strerror(errno));
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    if (rc == ANONKIT_OK && (c->EVP_DigestFinal_ex(ctx, md, &mdlen) != 1 || mdlen * 2 != AK_SHA256_HEX))
        rc = ak_err_set(err, ANONKIT_E_INTERNAL, shown, 0, 0, "SHA-256 failed");
    c->EVP_MD_CTX_free(ctx);
    c->EVP_MD_free(md_sha256);
    c->OSSL_LIB_CTX_free(lib);
    fclose(f);
    if (rc != ANONKIT_OK) {
        c->ERR_clear_error();
        return rc;
    }
    static const char digits[] = "0123456789abcdef";
    for (unsigned i = 0; i < mdlen; i++) {
        hex[2 * i] = digits[md[i] >> 4];
        hex[2 * i + 1] = digits[md[i] & 15];
    }
    hex[AK_SHA256_HEX] = '\0';
    return ANONKIT_OK;
}

int ak_sha256_file(const char *path, const char *shown, char hex[AK_SHA256_HEX + 1], ak_error *err)
{
    if (!shown) shown = path;
    hex[0] = '\0';
    crypto_api c;
    AK_CHECK(crypto_api_open(&c, CRYPTO_SONAME, shown, err));
    const int rc = sha256_with(&c, path, shown, hex, err);
    crypto_api_close(&c);
    return rc;
}
