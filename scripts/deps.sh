#!/usr/bin/env bash
# Installs the Debian 12 packages anonkit needs to build, test and benchmark,
# when any is missing. Run as root (or with sudo available).
set -euo pipefail
packages=(cmake make gcc pkg-config libcmocka-dev libjansson-dev libxxhash-dev libgsl-dev python3 hyperfine time locales)
# sources and sinks (docs/sources.md): PostgreSQL (libpq; the server for tests/cli_sources.sh and
# bench/bench_sources.sh), SQLite, SPSS/Stata/SAS files (ReadStat; its command-line tool makes test files)
packages+=(libpq-dev postgresql libsqlite3-dev sqlite3 libreadstat-dev readstat)
# the release report: SHA-256 through OpenSSL (libssl-dev); its test renders it in headless Chromium
packages+=(libssl-dev chromium)
# `deps.sh fuzz`: also clang and its libFuzzer and sanitizer runtimes (tests/fuzz)
if [ "${1:-}" = fuzz ]; then packages+=(clang-14 libclang-rt-14-dev); fi
# anonkit-mpi (docs/distributed.md) and its test: Open MPI, not MPICH (which spins when ranks outnumber cores)
packages+=(openmpi-bin libopenmpi-dev)
# the Python package (python/, docs/python.md) and its tests: cffi, numpy, pandas, pytest; pip and
# setuptools install it offline (pip install --no-build-isolation ./python)
packages+=(python3-cffi python3-numpy python3-pandas python3-pytest python3-pip python3-setuptools)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}" >&2
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi
# test_job runs anonymize under a locale with a decimal comma: generate it when missing.
if ! locale -a 2>/dev/null | grep -qi '^de_DE\.utf-\?8$'; then
  echo "generating the locale de_DE.UTF-8" >&2
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo sed -i 's/^# *de_DE.UTF-8/de_DE.UTF-8/' /etc/locale.gen
  $sudo locale-gen >/dev/null
fi
