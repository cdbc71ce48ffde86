#!/usr/bin/env bash
# bench_mpi_closeness.sh — anonkit-mpi under t-closeness (docs/distributed.md
# §3: the whole table's sensitive distribution summed once, the AVS sets
# summed every level) on ROWS generated rows ([LeFevre07] Figure 7 data):
# 1 and 2 ranks with --t T, beside the same runs under k-anonymity alone and
# the single-machine Mondrian with --t T (one thread) in the same script run.
# Prints wall and CPU seconds, peak RSS of the largest process (/usr/bin/time
# -v), the bytes reduced and rows shipped, the critical path (each phase's
# largest busy time over the ranks), and the ratios 2 ranks / 1 rank and
# --t / k alone. Every closeness output is compared with the single-machine
# one as a multiset and checked by `anonkit check` with the same --t. Never
# fails on time; on a shared machine wall times stretch with its load (the
# load average is printed around every run, and the critical path does not
# wait for a core).
# usage: bash bench/bench_mpi_closeness.sh [BUILD_DIR] [ROWS] [T]
set -euo pipefail
BUILD=${1:-build}
ROWS=${2:-2000000}
TCL=${3:-0.2}
ANONKIT=$BUILD/anonkit
MPIBIN=$BUILD/anonkit-mpi
DIR=$(mktemp -d "${TMPDIR:-/tmp}/anonkit-bench-mpi-t.XXXXXX")
trap 'rm -rf "$DIR"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader OMPI_MCA_pml=ob1
QI=age,salary,zipcode,elevel
SENS=car
K=50
MEM=${MEM:-64M}
KARGS=(--qi $QI --k $K)
TARGS=(--qi $QI --k $K --sensitive $SENS --t "$TCL")

loadavg() { cut -d' ' -f1 /proc/loadavg; }
timed() { # timed NAME CMD...: /usr/bin/time -v of the run into $DIR/NAME.tv, load averages into $DIR/NAME.load
    local name=$1 before
    shift
    before=$(loadavg)
    /usr/bin/time -v -o "$DIR/$name.tv" "$@" 2>"$DIR/$name.err" >/dev/null || {
        echo "$name failed:"; cat "$DIR/$name.err"; return 1; }
    echo "$before $(loadavg)" >"$DIR/$name.load"
}
field() { sed -n "s/^[[:space:]]*$2: //p" "$DIR/$1.tv"; }
secs() { field "$1" "Elapsed (wall clock) time (h:mm:ss or m:ss)" | awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; printf "%.2f", s }'; }
cpu() { awk -v u="$(field "$1" "User time (seconds)")" -v s="$(field "$1" "System time (seconds)")" 'BEGIN { printf "%.2f", u + s }'; }
rss() { awk -v k="$(field "$1" "Maximum resident set size (kbytes)")" 'BEGIN { printf "%.0f", k / 1024 }'; }
load() { awk '{ printf "%s-%s", $1, $2 }' "$DIR/$1.load"; }
json() { /usr/bin/python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }

echo "== anonkit-mpi under t-closeness on $ROWS generated rows, --qi $QI --k $K --sensitive $SENS --t $TCL," \
    "--memory $MEM per rank ($(nproc) cores)"
echo "load average at the start (1, 5, 15 min): $(cut -d' ' -f1-3 /proc/loadavg)"
"$ANONKIT" generate --rows "$ROWS" --seed 1 -o "$DIR/in.csv" 2>/dev/null
echo "input: $(($(stat -c %s "$DIR/in.csv") / 1000000)) MB, $(cut -d, -f5 "$DIR/in.csv" | tail -n +2 | sort -u | wc -l) distinct $SENS values"

SS=(setsid -w) # each run, and each rank, in a session of its own (see bench_mpi.sh)
timed mondrian-t "${SS[@]}" "$ANONKIT" anonymize "$DIR/in.csv" -o "$DIR/one-t.csv" "${TARGS[@]}" --threads 1
for np in 1 2; do
    timed mpi-k-$np mpirun -np $np --oversubscribe "${SS[@]}" "$MPIBIN" anonymize "$DIR/in.csv" \
        -o "$DIR/mpi-k-$np.csv" "${KARGS[@]}" --memory "$MEM" --report "$DIR/mpi-k-$np.json"
    rm -f "$DIR/mpi-k-$np.csv"
    timed mpi-t-$np mpirun -np $np --oversubscribe "${SS[@]}" "$MPIBIN" anonymize "$DIR/in.csv" \
        -o "$DIR/mpi-t-$np.csv" "${TARGS[@]}" --memory "$MEM" --report "$DIR/mpi-t-$np.json"
done

sort -S 512M "$DIR/one-t.csv" | md5sum >"$DIR/one.sum"
for np in 1 2; do
    if sort -S 512M "$DIR/mpi-t-$np.csv" | md5sum | cmp -s - "$DIR/one.sum"; then same="same table"; else same="DIFFERENT TABLE"; fi
    if "$ANONKIT" check "$DIR/mpi-t-$np.csv" "${TARGS[@]}" >/dev/null 2>"$DIR/check.err"; then ok="passes"; else ok="FAILS"; fi
    echo "--t $TCL, $np rank(s): $same as the single-machine Mondrian (multiset); anonkit check $ok"
done

printf "\n%-30s %9s %9s %11s %10s %14s %13s %7s %9s\n" run seconds "CPU s" "load avg" "peak MB" "bytes reduced" \
    "rows shipped" levels "crit. s"
printf "%-30s %9s %9s %11s %10s\n" "mondrian --t, one thread" "$(secs mondrian-t)" "$(cpu mondrian-t)" \
    "$(load mondrian-t)" "$(rss mondrian-t)"
for x in k-1 t-1 k-2 t-2; do
    j=$DIR/mpi-$x.json
    case $x in k-*) what="k alone" ;; *) what="--t $TCL" ;; esac
    printf "%-30s %9s %9s %11s %10s %14s %13s %7s %9s\n" "anonkit-mpi ${x#*-} rank(s), $what" "$(secs mpi-$x)" \
        "$(cpu mpi-$x)" "$(load mpi-$x)" "$(rss mpi-$x)" "$(json "$j" "j['bytes_reduced']")" \
        "$(json "$j" "j['rows_shipped']")" "$(json "$j" "j['levels_reduced']")" "$(json "$j" "j['critical_path_seconds']")"
done
echo "(CPU s: user + system seconds of every process of the run; peak MB: the largest process's maximum RSS;"
echo " load avg: before-after the run; crit. s: the critical path, each phase's largest busy time over the ranks)"
crit() { json "$DIR/mpi-$1.json" "j['critical_path_seconds']"; }
echo
awk -v t1="$(secs mpi-t-1)" -v t2="$(secs mpi-t-2)" -v k1="$(secs mpi-k-1)" -v k2="$(secs mpi-k-2)" \
    -v ct1="$(crit t-1)" -v ct2="$(crit t-2)" -v ck1="$(crit k-1)" -v m="$(secs mondrian-t)" \
    -v bt="$(json "$DIR/mpi-t-1.json" "j['bytes_reduced']")" -v bk="$(json "$DIR/mpi-k-1.json" "j['bytes_reduced']")" 'BEGIN {
    printf "ratios: --t %s, 2 ranks / 1 rank: %.2f wall, %.2f critical path\n", "'"$TCL"'", t2 / t1, ct2 / ct1
    printf "        k alone, 2 ranks / 1 rank: %.2f wall\n", k2 / k1
    printf "        --t / k alone, 1 rank: %.2f wall, %.2f critical path, %.2f bytes reduced\n", t1 / k1, ct1 / ck1, bt / bk
    printf "        anonkit-mpi --t 1 rank / Mondrian --t one thread: %.2f wall\n", t1 / m }'
echo "load average at the end (1, 5, 15 min): $(cut -d' ' -f1-3 /proc/loadavg)"
