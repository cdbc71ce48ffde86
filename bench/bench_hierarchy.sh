#!/usr/bin/env bash
# bench_hierarchy.sh — `anonkit hierarchy` (docs/hierarchies.md) against one read
# of the same file by the CSV reader, measured in the same run, whole process
# against whole process: the baseline is `bench_csv FILE DELIM once` (one pass
# of csv_read over the file and nothing else), each build one `anonkit
# hierarchy` process; every time is the best of RUNS (3) runs. Builds: every
# hierarchy of the Adult table (an interval hierarchy for age, flat ones for
# the categories; each build reads the file once), and interval and quantile
# hierarchies for every numeric column of a generated table (`anonkit
# generate`, 10,000,000 rows by default). Prints each build's wall time
# written to a file (atomic: temporary file, fsync, rename) and to /dev/null
# (no fsync: the building alone), the read's, and their ratios (the goal is
# at most 1.5 per column); never fails on time.
# usage: bash bench/bench_hierarchy.sh [BUILD_DIR] [ROWS] [RUNS]
set -euo pipefail
BUILD=${1:-build}
ROWS=${2:-10000000}
RUNS=${3:-3}
ANONKIT=$BUILD/anonkit
BENCH_CSV=$BUILD/bench_csv
DIR=$(mktemp -d "${TMPDIR:-/tmp}/anonkit-bench-hier.XXXXXX")
trap 'rm -rf "$DIR"' EXIT
HERE=$(cd "$(dirname "$0")" && pwd)
DATA=${DATA:-$HERE/../../shared/data}
ADULT=$DATA/adult/adult.csv
[ -f "$ADULT" ] || ADULT=$HERE/../examples/adult/adult.csv

# best CMD...: the best wall time in seconds of RUNS runs of CMD (output discarded)
best() {
    local b="" t0 t1
    for _ in $(seq "$RUNS"); do
        t0=$(date +%s.%N)
        "$@" >/dev/null 2>&1
        t1=$(date +%s.%N)
        b=$(awk -v a="$t0" -v c="$t1" -v b="$b" 'BEGIN { s = c - a; if (b == "" || s < b) b = s; printf "%.6f", b }')
    done
    echo "$b"
}

# build_one FILE DELIM READ_SECONDS NAME ARGS...: one build written to a file
# and one to /dev/null, each against the read
build_one() {
    local file=$1 delim=$2 read=$3 name=$4
    shift 4
    local s u
    s=$(best "$ANONKIT" hierarchy "$file" --delimiter "$delim" "$@" -o "$DIR/h.csv")
    u=$(best "$ANONKIT" hierarchy "$file" --delimiter "$delim" "$@" -o /dev/null)
    awk -v n="$name" -v s="$s" -v u="$u" -v r="$read" 'BEGIN {
        if (r < 1e-6) r = 1e-6
        printf "  %-36s to a file %7.3f s (ratio %5.2f), to /dev/null %7.3f s (ratio %5.2f)\n", n, s, s / r, u, u / r }'
    echo "$s $u" >>"$DIR/all.txt"
}

echo "Adult: $ADULT (best of $RUNS, whole processes)"
R=$(best "$BENCH_CSV" "$ADULT" ';' once)
echo "  read (bench_csv once): $R s"
: >"$DIR/all.txt"
header=$(head -n 1 "$ADULT" | tr -d '\r')
IFS=';' read -r -a cols <<<"$header"
for c in "${cols[@]}"; do
    if [ "$c" = age ]; then build_one "$ADULT" ';' "$R" "$c (--interval 5 --fanout 2,2,2)" --column age --interval 5 --fanout 2,2,2
    else build_one "$ADULT" ';' "$R" "$c (--flat)" --column "$c" --flat; fi
done
awk -v r="$R" -v n="${#cols[@]}" '{ s += $1; u += $2 } END {
    printf "  all %d hierarchies (read %.3f s): to files %.3f s = %.2f reads; to /dev/null %.3f s = %.2f reads\n",
           n, r, s, s / r, u, u / r }' "$DIR/all.txt"

echo "Generated: $ROWS rows (best of $RUNS, whole processes)"
"$ANONKIT" generate --rows "$ROWS" --seed 1 -o "$DIR/g.csv" 2>/dev/null
ls -l "$DIR/g.csv" | awk '{ printf "  %.1f MB\n", $5 / 1e6 }'
R=$(best "$BENCH_CSV" "$DIR/g.csv" ',' once)
echo "  read (bench_csv once): $R s"
: >"$DIR/all.txt"
for c in salary commission age elevel car zipcode hvalue hyears loan; do
    build_one "$DIR/g.csv" ',' "$R" "$c (--interval)" --column "$c" --interval 10 --fanout 2,2
done
build_one "$DIR/g.csv" ',' "$R" "salary (--quantiles 16,2)" --column salary --quantiles 16,2
awk -v r="$R" '{ s += $1; u += $2; n++ } END {
    printf "  all %d hierarchies (read %.3f s): to files %.3f s = %.2f reads (%.2f each); to /dev/null %.3f s = %.2f reads (%.2f each)\n",
           n, r, s, s / r, s / r / n, u, u / r, u / r / n }' "$DIR/all.txt"
