#!/usr/bin/env bash
# check_exports.sh — the shared library exports the public API and nothing
# else: every symbol it defines in its dynamic symbol table is an anonkit_*
# name, and every function declared ANONKIT_API in the public headers is among
# them. Internal functions (table_load, csv_read, ...) would collide with a
# host program's own; -fvisibility=hidden keeps them out.
#
# Usage: check_exports.sh LIBANONKIT_SO INCLUDE_DIR...
#        check_exports.sh --self-test CC LIBANONKIT_SO INCLUDE_DIR...
#            also proves the check can fail: a stand-in library that exports
#            table_load and lacks one declared function must be refused, with
#            both named.
set -euo pipefail

# The function names declared ANONKIT_API in the anonkit/*.h of the folders:
# in each declaration (comments and preprocessor lines left out), the first
# anonkit_* name followed by "(" (other attributes or macros may come
# before it). A declaration without one is reported, and fails the check.
declared() {
  local dir decl name
  for dir in "$@"; do
    cat "$dir"/anonkit/*.h
  done | grep -v '^[[:space:]]*#' | tr '\n' ' ' |
    sed 's#/\*\([^*]\|\*[^/]\)*\*/# #g' | grep -oE 'ANONKIT_API[^;]*;' |
    while IFS= read -r decl; do
      name=$(grep -oE '\banonkit_[A-Za-z0-9_]*[[:space:]]*\(' <<<"$decl" | head -n1 | tr -d '( ') || true
      if [ -z "$name" ]; then
        echo "declared ANONKIT_API but no anonkit_* function: $decl" >&2
        echo "!"
      else
        echo "$name"
      fi
    done | sort -u
}

# Exit 1 listing what is wrong with the library $1 against the headers of ${@:2}.
check() {
  local lib=$1
  shift
  local exported names bad=0
  exported=$(nm -D --defined-only "$lib" | awk 'NF == 3 { print $3 }' | sed 's/@.*//' | sort -u)
  names=$(declared "$@")
  if grep -qx '!' <<<"$names"; then
    return 1
  fi
  if [ -z "$names" ]; then
    echo "no ANONKIT_API function found in $*" >&2
    return 1
  fi
  local extra missing
  extra=$(grep -v '^anonkit_' <<<"$exported" || true)
  missing=$(comm -23 <(echo "$names") <(echo "$exported"))
  if [ -n "$extra" ]; then
    echo "$lib exports symbols outside the public API:" >&2
    sed 's/^/  /' <<<"$extra" >&2
    bad=1
  fi
  if [ -n "$missing" ]; then
    echo "$lib does not export functions declared ANONKIT_API:" >&2
    sed 's/^/  /' <<<"$missing" >&2
    bad=1
  fi
  [ $bad -eq 0 ] || return 1
  echo "$lib: $(wc -l <<<"$exported") symbols exported, all anonkit_*; all $(wc -l <<<"$names") declared functions present"
}

self_test() {
  local cc=$1
  shift
  local tmp names dropped
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/check_exports.XXXXXX")
  trap 'rm -rf "$tmp"' RETURN
  names=$(declared "${@:2}")
  dropped=$(head -n1 <<<"$names")
  { tail -n +2 <<<"$names" | sed 's/.*/void &(void) {}/'; echo 'int table_load(void) { return 0; }'; } >"$tmp/fake.c"
  "$cc" -shared -fPIC -o "$tmp/libfake.so" "$tmp/fake.c"
  if check "$tmp/libfake.so" "${@:2}" 2>"$tmp/report"; then
    echo "self-test: a library exporting table_load and lacking $dropped passed" >&2
    return 1
  fi
  if ! grep -qx '  table_load' "$tmp/report" || ! grep -qx "  $dropped" "$tmp/report"; then
    echo "self-test: the report does not name table_load and $dropped:" >&2
    cat "$tmp/report" >&2
    return 1
  fi
  echo "self-test: the stray table_load and the missing $dropped were reported"
}

if [ "${1:-}" = --self-test ] && [ $# -ge 4 ]; then
  cc=$2
  shift 2
  check "$@"
  self_test "$cc" "$@"
elif [ $# -ge 2 ] && [ "${1:0:2}" != -- ]; then
  check "$@"
else
  sed -n '2,/^set -e/p' "$0" | sed '$d' >&2
  exit 2
fi
