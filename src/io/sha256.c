/* sha256.c — the SHA-256 of a file (sha256.h), through OpenSSL's EVP
 * digest interface (EVP_MD_fetch in a library context of its own,
 * EVP_DigestInit_ex, EVP_DigestUpdate, EVP_DigestFinal_ex). */
#include "io/sha256.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>

/* Bytes read per call. */
#define SHA_CHUNK (1u << 16)

int ak_sha256_file(const char *path, const char *shown, char hex[AK_SHA256_HEX + 1], ak_error *err)
{
    if (!shown) shown = path;
    hex[0] = '\0';
    /* A library context of this call's own, not OpenSSL's default one: when
     * memory runs out while OpenSSL 3.0 makes its default context, that
     * context is left half made (a NULL lock) and the next digest crashes;
     * a context of our own is made whole or not at all, and no state is
     * shared with other users of OpenSSL in the process. */
    OSSL_LIB_CTX *lib = OSSL_LIB_CTX_new();
    if (!lib) {
        ERR_clear_error(); /* OpenSSL's error queue holds what it could not do */
        return ak_err_nomem(err);
    }
    EVP_MD *md_sha256 = EVP_MD_fetch(lib, "SHA2-256", NULL);
    if (!md_sha256) {
        ERR_clear_error();
        OSSL_LIB_CTX_free(lib);
        return ak_err_set(err, ANONKIT_E_NOMEM, shown, 0, 0, "SHA-256 is not available (out of memory?)");
    }
    FILE *f = fopen(path, "rb");
    EVP_MD_CTX *ctx = f ? EVP_MD_CTX_new() : NULL;
    if (!ctx) {
        const int e = errno;
        if (f) fclose(f);
        EVP_MD_free(md_sha256);
        OSSL_LIB_CTX_free(lib);
        if (f) return ak_err_nomem(err);
        return ak_err_set(err, ANONKIT_E_IO, shown, 0, 0, "cannot read the file for its checksum: %s", strerror(e));
    }
    int rc = ANONKIT_OK;
    if (EVP_DigestInit_ex(ctx, md_sha256, NULL) != 1)
        rc = ak_err_set(err, ANONKIT_E_INTERNAL, shown, 0, 0, "SHA-256 could not be started");
    static const size_t chunk = SHA_CHUNK;
    unsigned char buf[SHA_CHUNK];
    while (rc == ANONKIT_OK) {
        const size_t got = fread(buf, 1, chunk, f);
        if (got && EVP_DigestUpdate(ctx, buf, got) != 1)
            rc = ak_err_set(err, ANONKIT_E_INTERNAL, shown, 0, 0, "SHA-256 failed");
        if (got < chunk) break;
    }
    if (rc == ANONKIT_OK && ferror(f))
        rc = ak_err_set(err, ANONKIT_E_IO, shown, 0, 0, "cannot read the file for its checksum: %s", strerror(errno));
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    if (rc == ANONKIT_OK && (EVP_DigestFinal_ex(ctx, md, &mdlen) != 1 || mdlen * 2 != AK_SHA256_HEX))
        rc = ak_err_set(err, ANONKIT_E_INTERNAL, shown, 0, 0, "SHA-256 failed");
    EVP_MD_CTX_free(ctx);
    EVP_MD_free(md_sha256);
    OSSL_LIB_CTX_free(lib);
    fclose(f);
    if (rc != ANONKIT_OK) {
        ERR_clear_error();
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
