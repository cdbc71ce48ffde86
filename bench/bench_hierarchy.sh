#!/usr/bin/env bash
# bench_hierarchy.sh — `anonkit hierarchy` (docs/hierarchies.md) against one read
# of the same file by the CSV reader, measured in the same run, whole process
# against whole process: the baseline is `bench_csv --once FILE DELIM` (one pass
# of csv_read over the file and nothing else); every time is the best of RUNS
# (3) runs, both the wall time and the CPU time (user + system, from bash's
# time: on a machine shared with other work the wall time mostly measures
# waiting; the load average is printed with the figures).
#
# Adult: every hierarchy of the table (an interval hierarchy for age, flat
# ones for the categories) built by ONE process from one read (several
# --column groups), written to files (published together: temporary files,
# fsync, renames, one fsync of the folder) and to /dev/null (no fsync: the
# building alone); the difference is the cost of the safe publish, shown
# apart. For reference, the same hierarchies built one process per column.
# Adult runs best of 3 * RUNS (a run takes milliseconds).
#
# Generated: interval and quantile hierarchies for every numeric column of a
# generated table (`anonkit generate`, 10,000,000 rows by default), one
# process each, to a file and to /dev/null, and all of them in one process.
# Prints each build's times and their ratios to the read (the goal is at
# most 1.5); never fails on time. The one-process runs of every hierarchy
# are measured with --threads 1 and --threads 2 (the file cut in two byte
# ranges, each read on its own thread; the builds shared): the CPU time adds
# up the threads, the wall time is what two free cores would give, and on a
# loaded machine mostly the wait for them. "To files" replaces the files of
# the run before (the old ones are freed: on ext4 some 65 us each); "to new
# files" publishes into an emptied folder (emptied outside the time).
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

# best CMD...: "WALL CPU", the best wall and CPU seconds of RUNS runs of CMD
# (output discarded); the wall time from bash's EPOCHREALTIME (microseconds:
# a run of Adult takes a few milliseconds), the CPU time from its `time`
# (user + system, milliseconds)
best() {
    local w="" c="" cpu t0 t1 TIMEFORMAT="%3U %3S"
    for _ in $(seq "$RUNS"); do
        if [ -n "${BEST_PRE:-}" ]; then eval "$BEST_PRE"; fi
        t0=$EPOCHREALTIME
        { time "$@" >/dev/null 2>&1; } 2>"$DIR/time.txt"
        t1=$EPOCHREALTIME
        cpu=$(awk '{ printf "%.4f", $1 + $2 }' "$DIR/time.txt")
        w=$(awk -v a="${t0/,/.}" -v z="${t1/,/.}" -v b="$w" 'BEGIN { d = z - a; if (b == "" || d < b) b = d; printf "%.4f", b }')
        c=$(awk -v a="$cpu" -v b="$c" 'BEGIN { if (b == "" || a < b) b = a; printf "%.4f", b }')
    done
    echo "$w $c"
}

# build_one FILE DELIM "READ_WALL READ_CPU" NAME ARGS...: one build written to
# a file and one to /dev/null, each against the read
build_one() {
    local file=$1 delim=$2 read=$3 name=$4
    shift 4
    local s u
    s=$(best "$ANONKIT" hierarchy "$file" --delimiter "$delim" "$@" -o "$DIR/h.csv")
    u=$(best "$ANONKIT" hierarchy "$file" --delimiter "$delim" "$@" -o /dev/null)
    awk -v n="$name" -v s="$s" -v u="$u" -v r="$read" 'BEGIN {
        split(s, S, " "); split(u, U, " "); split(r, R, " ")
        for (i = 1; i <= 2; i++) if (R[i] < 0.001) R[i] = 0.001
        printf "  %-34s file: wall %6.3f s (%5.2f) cpu %6.3f s (%5.2f); /dev/null: wall %6.3f s (%5.2f) cpu %6.3f s (%5.2f)\n",
            n, S[1], S[1] / R[1], S[2], S[2] / R[2], U[1], U[1] / R[1], U[2], U[2] / R[2] }'
    echo "$s $u" >>"$DIR/all.txt"
}

# total READ COUNT_LABEL: the sums of all.txt against the read
total() {
    awk -v r="$1" -v n="$2" '{ sw += $1; sc += $2; uw += $3; uc += $4; k++ } END {
        split(r, R, " "); for (i = 1; i <= 2; i++) if (R[i] < 0.001) R[i] = 0.001
        printf "  all %d %s: to files wall %.3f s = %.2f reads, cpu %.3f s = %.2f reads; to /dev/null wall %.3f s = %.2f reads, cpu %.3f s = %.2f reads\n",
            k, n, sw, sw / R[1], sc, sc / R[2], uw, uw / R[1], uc, uc / R[2] }' "$DIR/all.txt"
}

# ratio "WALL CPU" "READ_WALL READ_CPU": "wall W s (R) cpu C s (R)"
ratio() {
    awk -v s="$1" -v r="$2" 'BEGIN { split(s, S, " "); split(r, R, " ")
        for (i = 1; i <= 2; i++) if (R[i] < 0.0001) R[i] = 0.0001
        printf "wall %7.4f s (%5.2f) cpu %7.4f s (%5.2f)", S[1], S[1] / R[1], S[2], S[2] / R[2] }'
}

echo "load average: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)"
RUNS_GIVEN=$RUNS
RUNS=$((3 * RUNS_GIVEN))
echo "Adult: $ADULT (best of $RUNS, whole processes)"
R=$(best "$BENCH_CSV" --once "$ADULT" ';')
echo "  read (bench_csv --once): wall ${R% *} s, cpu ${R#* } s (ratios below: build / read)"
S=$(best "$ANONKIT" --version)
echo "  start-up of anonkit alone (anonkit --version): wall ${S% *} s, cpu ${S#* } s (loading its shared libraries)"
header=$(head -n 1 "$ADULT" | tr -d '\r')
IFS=';' read -r -a cols <<<"$header"
mkdir -p "$DIR/adult"
files=() nulls=()
for c in "${cols[@]}"; do
    if [ "$c" = age ]; then b=(--column age --interval 5 --fanout 2,2,2); else b=(--column "$c" --flat); fi
    files+=("${b[@]}" -o "$DIR/adult/$c.csv")
    nulls+=("${b[@]}" -o /dev/null)
done
# many_builds FILE DELIM "READ" COUNT OUTDIR FILES_ARGS... -- NULLS_ARGS...:
# one process building every hierarchy, with --threads 1 and 2, to files
# (replacing those of the run before, and new in an emptied OUTDIR) and to
# /dev/null, and the safe publish (the difference) apart
many_builds() {
    local file=$1 delim=$2 read=$3 count=$4 outdir=$5 a=() b=() th F W N
    shift 5
    while [ "$1" != -- ]; do a+=("$1"); shift; done
    shift
    b=("$@")
    for th in 1 2; do
        "$ANONKIT" hierarchy "$file" --delimiter "$delim" --threads "$th" "${a[@]}" >/dev/null 2>&1 # (files to replace)
        F=$(best "$ANONKIT" hierarchy "$file" --delimiter "$delim" --threads "$th" "${a[@]}")
        W=$(BEST_PRE="rm -rf '$outdir' && mkdir -p '$outdir'" best "$ANONKIT" hierarchy "$file" --delimiter "$delim" --threads "$th" "${a[@]}")
        N=$(best "$ANONKIT" hierarchy "$file" --delimiter "$delim" --threads "$th" "${b[@]}")
        echo "  all $count hierarchies, one process, --threads $th:"
        echo "    to files (replacing, together): $(ratio "$F" "$read")"
        echo "    to new files (together):        $(ratio "$W" "$read")"
        echo "    to /dev/null (no fsync):        $(ratio "$N" "$read")"
        awk -v f="${F% *}" -v w="${W% *}" -v n="${N% *}" -v r="${read% *}" -v k="$count" 'BEGIN { d = f - n; e = w - n
            if (d < 0) d = 0
            if (e < 0) e = 0
            if (r < 0.0001) r = 0.0001
            printf "    the safe publish (files - /dev/null: fsync of %d files and of the folder, links): replacing wall %.4f s = %.2f reads, new %.4f s = %.2f reads\n", k, d, d / r, e, e / r }'
    done
}
many_builds "$ADULT" ';' "$R" "${#cols[@]}" "$DIR/adult" "${files[@]}" -- "${nulls[@]}"
# for reference: one process (and one read, and one publish) per column
: >"$DIR/all.txt"
for c in "${cols[@]}"; do
    if [ "$c" = age ]; then b=(--column age --interval 5 --fanout 2,2,2); else b=(--column "$c" --flat); fi
    s1=$(best "$ANONKIT" hierarchy "$ADULT" --delimiter ';' "${b[@]}" -o "$DIR/h.csv")
    u1=$(best "$ANONKIT" hierarchy "$ADULT" --delimiter ';' "${b[@]}" -o /dev/null)
    echo "$s1 $u1" >>"$DIR/all.txt"
done
echo "  for reference, one process per column:"
total "$R" "processes"
RUNS=$RUNS_GIVEN

echo "Generated: $ROWS rows (best of $RUNS, whole processes)"
"$ANONKIT" generate --rows "$ROWS" --seed 1 -o "$DIR/g.csv" 2>/dev/null
ls -l "$DIR/g.csv" | awk '{ printf "  %.1f MB\n", $5 / 1e6 }'
R=$(best "$BENCH_CSV" --once "$DIR/g.csv" ',')
echo "  read (bench_csv --once): wall ${R% *} s, cpu ${R#* } s (ratios below: build / read)"
: >"$DIR/all.txt"
for c in salary commission age elevel car zipcode hvalue hyears loan; do
    build_one "$DIR/g.csv" ',' "$R" "$c (--interval)" --column "$c" --interval 10 --fanout 2,2
done
build_one "$DIR/g.csv" ',' "$R" "salary (--quantiles 16,2)" --column salary --quantiles 16,2
total "$R" hierarchies
files=() nulls=()
mkdir -p "$DIR/gen"
for c in salary commission age elevel car zipcode hvalue hyears loan; do
    files+=(--column "$c" --interval 10 --fanout 2,2 -o "$DIR/gen/$c.csv")
    nulls+=(--column "$c" --interval 10 --fanout 2,2 -o /dev/null)
done
many_builds "$DIR/g.csv" , "$R" 9 "$DIR/gen" "${files[@]}" -- "${nulls[@]}"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)"
