#!/usr/bin/env bash
# check_libs.sh — what starting anonkit loads: neither the command line nor
# libanonkit.so needs libpq (nor, through it, GnuTLS, Kerberos, LDAP, SASL),
# which src/io/pg_load.c opens only when a PostgreSQL source or sink is used,
# nor libsqlite3, libreadstat or libcrypto, which src/io/sqlite_load.c,
# readstat_load.c and crypto_load.c open only for an SQLite source or sink,
# an SPSS/Stata/SAS file, or the release report's SHA-256, nor GSL (libgsl,
# libgslcblas), which src/io/gsl_load.c opens only for Rothko-S's hypothesis
# tests and normal salaries; both still need a
# library they do link (jansson), which proves the listing is read. The command line then really opens libpq for a PostgreSQL name: a
# connection refused by a server that is not there is libpq's own message.
#
# usage: bash tests/check_libs.sh PATH/TO/anonkit PATH/TO/libanonkit.so
set -u
fail=0
for f in "$1" "$2"; do
    libs=$(ldd "$f") || { echo "check-libs: ldd $f failed" >&2; exit 1; }
    grep -q 'libjansson\.so' <<<"$libs" || { echo "check-libs: $f: libjansson not listed by ldd" >&2; fail=1; }
    for lib in libpq libgnutls libkrb5 libldap libsasl2 libp11-kit libsqlite3 libreadstat libcrypto libgsl libgslcblas; do
        if grep -q "$lib\.so" <<<"$libs"; then echo "check-libs: $f loads $lib at start" >&2; fail=1; fi
    done
done
dir=$(mktemp -d "${TMPDIR:-/tmp}/check_libs.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT
# a Unix socket folder with no server in it: libpq refuses with its own words
out=$("$1" risk "postgresql:///nodb?host=$dir&table=t" --qi a 2>&1)
rc=$?
if [ "$rc" != 1 ] || ! grep -q 'cannot connect: .*No such file or directory' <<<"$out"; then
    echo "check-libs: a PostgreSQL source did not reach libpq (exit $rc): $out" >&2
    fail=1
fi
exit $fail
