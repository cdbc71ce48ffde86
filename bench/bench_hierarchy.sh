#!/usr/bin/env bash
# bench_hierarchy.sh — `anonkit hierarchy` (docs/hierarchies.md) against one read
# of the same file by the CSV reader, measured in the same run (bench_csv, best
# of 3): every hierarchy of the Adult table (an interval hierarchy for age, flat
# ones for the categories; each build reads the file once), and interval and
# quantile hierarchies for every numeric column of a generated table
# (`anonkit generate`, 10,000,000 rows by default). Prints each build's wall
# time written to a file and to /dev/null, the read's, and their ratios (the
# goal is at most 1.5 per column); never fails on time.
# usage: bash bench/bench_hierarchy.sh [BUILD_DIR] [ROWS]
set -euo pipefail
BUILD=${1:-build}
ROWS=${2:-10000000}
ANONKIT=$BUILD/anonkit
BENCH_CSV=$BUILD/bench_csv
DIR=$(mktemp -d "${TMPDIR:-/tmp}/anonkit-bench-hier.XXXXXX")
trap 'rm -rf "$DIR"' EXIT
HERE=$(cd "$(dirname "$0")" && pwd)
ADULT=$HERE/../../shared/data/adult/adult.csv
[ -f "$ADULT" ] || ADULT=$HERE/../examples/adult/adult.csv

# read_seconds FILE DELIM: the CSV reader's best time over FILE
read_seconds() {
    "$BENCH_CSV" "$1" "$2" | awk '/^csv_read:/ { sub(/.*best of 3: /, ""); print $1 }'
}

# build_one FILE DELIM READ_SECONDS NAME ARGS...: times one build written to a
# file (atomic: temporary file, fsync, rename) and one written to /dev/null (no
# fsync: the building alone), and prints both against the read
build_one() {
    local file=$1 delim=$2 read=$3 name=$4
    shift 4
    local t0 t1 t2
    t0=$(date +%s.%N)
    "$ANONKIT" hierarchy "$file" --delimiter "$delim" "$@" -o "$DIR/h.csv" 2>/dev/null
    t1=$(date +%s.%N)
    "$ANONKIT" hierarchy "$file" --delimiter "$delim" "$@" -o /dev/null 2>/dev/null
    t2=$(date +%s.%N)
    awk -v n="$name" -v a="$t0" -v b="$t1" -v c="$t2" -v r="$read" 'BEGIN {
        s = b - a; u = c - b; if (r < 1e-6) r = 1e-6
        printf "  %-36s to a file %7.3f s (ratio %5.2f), to /dev/null %7.3f s (ratio %5.2f)\n", n, s, s / r, u, u / r }'
    echo "$t0 $t1 $t2" >>"$DIR/all.txt"
}

echo "Adult: $ADULT"
R=$(read_seconds "$ADULT" ';')
: >"$DIR/all.txt"
header=$(head -n 1 "$ADULT" | tr -d '\r')
IFS=';' read -r -a cols <<<"$header"
for c in "${cols[@]}"; do
    if [ "$c" = age ]; then build_one "$ADULT" ';' "$R" "$c (--interval 5 --fanout 2,2,2)" --column age --interval 5 --fanout 2,2,2
    else build_one "$ADULT" ';' "$R" "$c (--flat)" --column "$c" --flat; fi
done
awk -v r="$R" -v n="${#cols[@]}" '{ s += $2 - $1; u += $3 - $2 } END {
    printf "  all %d hierarchies (read %.3f s): to files %.3f s = %.2f reads; to /dev/null %.3f s = %.2f reads\n",
           n, r, s, s / r, u, u / r }' "$DIR/all.txt"

echo "Generated: $ROWS rows"
"$ANONKIT" generate --rows "$ROWS" --seed 1 -o "$DIR/g.csv" 2>/dev/null
ls -l "$DIR/g.csv" | awk '{ printf "  %.1f MB\n", $5 / 1e6 }'
R=$(read_seconds "$DIR/g.csv" ',')
: >"$DIR/all.txt"
for c in salary commission age elevel car zipcode hvalue hyears loan; do
    build_one "$DIR/g.csv" ',' "$R" "$c (--interval)" --column "$c" --interval 10 --fanout 2,2
done
build_one "$DIR/g.csv" ',' "$R" "salary (--quantiles 16,2)" --column salary --quantiles 16,2
awk -v r="$R" '{ s += $2 - $1; u += $3 - $2; n++ } END {
    printf "  all %d hierarchies (read %.3f s): to files %.3f s = %.2f reads (%.2f each); to /dev/null %.3f s = %.2f reads (%.2f each)\n",
           n, r, s, s / r, s / r / n, u, u / r, u / r / n }' "$DIR/all.txt"
