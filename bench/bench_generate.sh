#!/usr/bin/env bash
# bench_generate.sh — throughput of `anonkit generate` ([LeFevre07] Figure 7) as CSV and as
# binary tuples: rows/s, MB/s and peak resident memory, to a file (temporary
# file, fsync, rename) and to stdout (generation and formatting alone). Baselines
# measured in the same run on the same number of bytes: `dd` writing zeros to a
# file with fsync (the disk's write speed) and `cat FILE > /dev/null` (reading the
# cached file back). Prints figures and ratios; never fails on time.
# usage: bash bench/bench_generate.sh [BUILD_DIR] [ROWS]
set -euo pipefail
BUILD=${1:-build}
ROWS=${2:-10000000}
ANONKIT=$BUILD/anonkit
DIR=$(mktemp -d "${TMPDIR:-/tmp}/anonkit-bench.XXXXXX")
trap 'rm -rf "$DIR"' EXIT

# timed NAME BYTES CMD...: runs CMD once under /usr/bin/time and prints seconds,
# rows/s (not for the dd-/cat- baselines), MB/s (of BYTES, or of the file named by
# BYTES=@FILE) and peak RSS.
timed() {
    local name=$1 bytes=$2
    shift 2
    /usr/bin/time -f "%e %M" -o "$DIR/time.txt" "$@"
    [[ $bytes == @* ]] && bytes=$(stat -c %s "${bytes#@}")
    read -r secs rss <"$DIR/time.txt"
    echo "$name $secs $rss $bytes" >>"$DIR/results.txt"
    awk -v n="$name" -v s="$secs" -v r="$rss" -v b="$bytes" -v rows="$ROWS" 'BEGIN {
        if (s < 0.01) s = 0.01
        rate = n ~ /^(dd|cat)-/ ? "      -       " : sprintf("%6.2f M rows/s", rows / s / 1e6)
        printf "%-24s %7.2f s  %s  %7.1f MB/s  peak RSS %.1f MB  (%.1f MB)\n",
               n, s, rate, b / s / 1e6, r / 1024, b / 1e6 }'
}

echo "== anonkit generate --rows $ROWS --seed 1 ($(nproc) cores)"
: >"$DIR/results.txt"
timed csv-file "@$DIR/g.csv" "$ANONKIT" generate --rows "$ROWS" --seed 1 -o "$DIR/g.csv" 2>/dev/null
timed binary-file "@$DIR/g.bin" "$ANONKIT" generate --rows "$ROWS" --seed 1 --format binary -o "$DIR/g.bin" 2>/dev/null
CSV_BYTES=$(stat -c %s "$DIR/g.csv")
BIN_BYTES=$(stat -c %s "$DIR/g.bin")
timed csv-stdout "$CSV_BYTES" sh -c "'$ANONKIT' generate --rows $ROWS --seed 1 -o - 2>/dev/null >/dev/null"
timed binary-stdout "$BIN_BYTES" sh -c "'$ANONKIT' generate --rows $ROWS --seed 1 --format binary -o - 2>/dev/null >/dev/null"

echo "== baselines on the same bytes"
MB=$(((CSV_BYTES + 1048575) / 1048576))
timed dd-write-fsync "$((MB * 1048576))" dd if=/dev/zero of="$DIR/zeros" bs=1M count="$MB" conv=fsync status=none
rm -f "$DIR/zeros"
timed cat-csv-cached "$CSV_BYTES" sh -c "cat '$DIR/g.csv' >/dev/null"

echo "== ratios (MB/s of anonkit / MB/s of the baseline)"
awk '{ t[$1] = ($2 < 0.01 ? 0.01 : $2); b[$1] = $4 }
     END {
        dd = b["dd-write-fsync"] / t["dd-write-fsync"]; cat = b["cat-csv-cached"] / t["cat-csv-cached"]
        split("csv-file binary-file csv-stdout binary-stdout", names, " ")
        for (i = 1; i <= 4; i++) { n = names[i]; r = b[n] / t[n]
            printf "%-24s %.2f of dd write, %.3f of cat\n", n, r / dd, r / cat }
     }' "$DIR/results.txt"
