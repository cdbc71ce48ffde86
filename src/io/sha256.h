/* sha256.h — the SHA-256 of a file, for the release report's identity
 * section (docs/report.md): computed with OpenSSL's EVP interface, the
 * packaged cryptographic library, never by a hand-written digest. */
#ifndef AK_IO_SHA256_H
#define AK_IO_SHA256_H

#include "common/error.h"

/* The length of a digest as lower-case hexadecimal, without its NUL. */
#define AK_SHA256_HEX 64

/* Reads the file at path to its end and writes its SHA-256 as 64 lower-case
 * hexadecimal digits and a NUL into hex. `shown` names the file in messages
 * (NULL: path). ANONKIT_OK, or ANONKIT_E_IO (cannot read) / ANONKIT_E_NOMEM
 * / ANONKIT_E_INTERNAL (the digest failed) with err set. */
int ak_sha256_file(const char *path, const char *shown, char hex[AK_SHA256_HEX + 1] /* OUT */, ak_error *err);

#endif
