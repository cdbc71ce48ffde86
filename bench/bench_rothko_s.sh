#!/usr/bin/env bash
# bench_rothko_s.sh — [LeFevre07] Figure 28 re-run (pruning and non-minimality in
# Rothko-S, [LeFevre07] §5.6) on ROWS generated rows, beside the paper's table
# (bench/rothko_s_figure28.py). Rothko-S on 10M rows within 64M, beside
# Rothko-T and the I/O model, is in bench_rothko.sh. Never fails on time.
# usage: bash bench/bench_rothko_s.sh [BUILD_DIR] [ROWS (default 100000)]
set -euo pipefail
BUILD=${1:-build}
ROWS=${2:-100000}
SRC=$(cd "$(dirname "$0")/.." && pwd)
DIR=$(mktemp -d "${TMPDIR:-/tmp}/anonkit-bench-rs.XXXXXX")
trap 'rm -rf "$DIR"' EXIT
/usr/bin/python3 "$SRC/bench/rothko_s_figure28.py" "$BUILD/anonkit" "$ROWS" "$DIR"
