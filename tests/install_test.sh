#!/usr/bin/env bash
# install_test.sh — anonkit as a program using it would see it: `cmake
# --install` of the build tree into a fresh prefix, then examples/embed.c
#   (a) built with `pkg-config --cflags --libs anonkit` against the shared
#       library, and with `pkg-config --static` against the static one;
#   (b) built by a small CMake project with find_package(anonkit), against
#       anonkit::anonkit and anonkit::anonkit_static;
# each run on the Adult example: the four published files must be the same
# bytes. The prefix is removed afterwards. pkg-config is required: without it
# the test fails.
#
# Usage: install_test.sh BUILD_DIR SOURCE_DIR CC LIBDIR VERSION [CFLAGS]
#   LIBDIR: CMAKE_INSTALL_LIBDIR; CFLAGS: extra flags for every compile and
#   link (the sanitizers of a sanitized build).
set -euo pipefail
if [ $# -lt 5 ]; then
  sed -n '2,/^set -e/p' "$0" | sed '$d' >&2
  exit 2
fi
build=$1 src=$2 cc=$3 libdir=$4 version=$5 cflags=${6:-}
fail() { echo "install_test: $*" >&2; exit 1; }

command -v pkg-config >/dev/null || fail "pkg-config not found (scripts/deps.sh installs it)"
prefix=$(mktemp -d "${TMPDIR:-/tmp}/anonkit-install.XXXXXX")
trap 'rm -rf "$prefix"' EXIT
work=$prefix/work
mkdir -p "$work"

cmake --install "$build" --prefix "$prefix" >"$work/install.log" || { cat "$work/install.log" >&2; fail "cmake --install failed"; }
lib=$prefix/$libdir
for f in "$lib/libanonkit.so" "$lib/libanonkit.a" "$prefix/bin/anonkit" "$prefix/include/anonkit/anonkit.h" \
         "$prefix/include/anonkit/version.h" "$lib/pkgconfig/anonkit.pc" "$lib/cmake/anonkit/anonkitConfig.cmake"; do
  [ -e "$f" ] || fail "not installed: ${f#"$prefix"/}"
done
[ "$("$prefix/bin/anonkit" --version)" = "anonkit $version" ] || fail "installed anonkit --version is not $version"

# Runs one build of embed on the Adult example; its output goes to $work/$1.csv.
run() {
  local name=$1 exe=$2
  LD_LIBRARY_PATH=$lib "$exe" "$src/examples/adult" "$work/$name.csv" >"$work/$name.out" ||
    { cat "$work/$name.out" >&2; fail "$name: embed failed"; }
  grep -q '^check: ' "$work/$name.out" || fail "$name: no check line in the output"
  echo "$name: $(grep '^check: ' "$work/$name.out")"
}

# (a) pkg-config, from the installed prefix only (the headers as strict C99).
export PKG_CONFIG_PATH=$lib/pkgconfig
[ "$(pkg-config --modversion anonkit)" = "$version" ] || fail "pkg-config --modversion anonkit is not $version"
cp "$src/examples/embed.c" "$work/embed.c"
# shellcheck disable=SC2046,SC2086
"$cc" $cflags -std=c99 -pedantic -Wall -Wextra -Werror -o "$work/embed-pc" "$work/embed.c" \
  $(pkg-config --cflags --libs anonkit)
# (Whole outputs into grep: with pipefail, grep -q closing the pipe early
# could fail the producer.)
grep -q "libanonkit.so.* => $lib/" <<<"$(LD_LIBRARY_PATH=$lib ldd "$work/embed-pc")" ||
  fail "embed-pc does not use $lib/libanonkit.so"
run pkg-config "$work/embed-pc"
# The static library with the libraries of Libs.private / Requires.private.
static_libs=$(pkg-config --static --libs anonkit | sed 's/-lanonkit\b/-Wl,-Bstatic -lanonkit -Wl,-Bdynamic/')
# shellcheck disable=SC2046,SC2086
"$cc" $cflags -Wall -Wextra -Werror -o "$work/embed-pc-static" "$work/embed.c" $(pkg-config --cflags anonkit) $static_libs
if grep -q 'NEEDED.*libanonkit' <<<"$(readelf -d "$work/embed-pc-static")"; then
  fail "embed-pc-static needs libanonkit.so"
fi
run pkg-config-static "$work/embed-pc-static"

# (b) find_package(anonkit) in a CMake project of its own.
mkdir -p "$work/consumer"
cat >"$work/consumer/CMakeLists.txt" <<EOT
cmake_minimum_required(VERSION 3.18)
project(anonkit_consumer LANGUAGES C)
find_package(anonkit $version EXACT REQUIRED COMPONENTS static)
add_executable(embed_shared $work/embed.c)
target_link_libraries(embed_shared PRIVATE anonkit::anonkit)
add_executable(embed_static $work/embed.c)
target_link_libraries(embed_static PRIVATE anonkit::anonkit_static)
EOT
cmake -S "$work/consumer" -B "$work/consumer/build" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_COMPILER="$cc" \
  -DCMAKE_C_FLAGS="$cflags -Wall -Wextra -Werror" -DCMAKE_BUILD_TYPE=Release >"$work/consumer.log" 2>&1 ||
  { cat "$work/consumer.log" >&2; fail "find_package(anonkit) project does not configure"; }
cmake --build "$work/consumer/build" >>"$work/consumer.log" 2>&1 ||
  { cat "$work/consumer.log" >&2; fail "find_package(anonkit) project does not build"; }
run find_package "$work/consumer/build/embed_shared"
run find_package-static "$work/consumer/build/embed_static"

for name in pkg-config-static find_package find_package-static; do
  cmp -s "$work/pkg-config.csv" "$work/$name.csv" || fail "$name published other bytes than pkg-config"
done
echo "installed into $prefix: pkg-config and find_package(anonkit) builds, shared and static, publish the same file"
