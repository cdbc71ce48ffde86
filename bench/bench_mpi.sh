#!/usr/bin/env bash
# bench_mpi.sh — anonkit-mpi (docs/distributed.md) on ROWS generated rows
# ([LeFevre07] Figure 7 data): 1, 2 and 4 ranks of this machine (with more
# ranks than cores they are oversubscribed: they share the cores, so wall time
# cannot drop below the single core's share), beside the single-machine Mondrian
# (one thread and all cores) and Rothko-T in the same run, on the same table.
# Prints wall time, peak memory of the largest process, the bytes reduced and
# rows shipped against the model of docs/distributed.md §3, the per-row costs
# of each phase (docs/distributed.md §4 uses them), and ratios. Every output
# is compared with the single-machine one as a multiset. Never fails on time.
# The machine may be shared: wall times then stretch with its load, so the
# script also prints the load average around every run, each run's CPU
# seconds, each rank's busy seconds (CPU outside MPI's waits) per phase and
# the critical path (the largest busy time of each phase over the ranks,
# summed), which show the scaling without the waiting for a core.
# Linux groups a session's processes for the scheduler (autogroup): on a busy
# machine all ranks of one mpirun then share one session's CPU share, so a
# second rank gets no more CPU than one. Every run here starts in a session
# of its own, and each rank in its own (setsid), as ranks on separate cores
# of a cluster would run; one 2-rank run in a single session shows the
# difference. On an idle machine the two are the same.
# usage: bash bench/bench_mpi.sh [BUILD_DIR] [ROWS]
set -euo pipefail
BUILD=${1:-build}
ROWS=${2:-10000000}
ANONKIT=$BUILD/anonkit
MPIBIN=$BUILD/anonkit-mpi
DIR=$(mktemp -d "${TMPDIR:-/tmp}/anonkit-bench-mpi.XXXXXX")
trap 'rm -rf "$DIR"' EXIT
# Open MPI on one machine: shared memory between ranks (btl self,vader) through
# the ob1 messaging layer; without pml ob1 every rank's MPI_Init also probes the
# network layers (libfabric, UCX), 0.2 s more for every run here. A cluster
# with a fast network keeps Open MPI's own choice.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader OMPI_MCA_pml=ob1
QI=age,salary,zipcode,elevel
K=50
MEM=${MEM:-64M}
ARGS=(--qi $QI --k $K)

loadavg() { cut -d' ' -f1 /proc/loadavg; }
timed() { # timed NAME CMD...: wall seconds, peak RSS (MB) of the largest process, CPU seconds
          # (user + system, of every process) and the load average before and after into $DIR/NAME.t
    local name=$1 before
    shift
    before=$(loadavg)
    /usr/bin/time -f "%e %M %U %S" -o "$DIR/$name.t" "$@" 2>"$DIR/$name.err" >/dev/null || {
        echo "$name failed:"; cat "$DIR/$name.err"; return 1; }
    echo "$before $(loadavg)" >"$DIR/$name.load"
}
cpu() { awk '{printf "%.2f", $3 + $4}' "$DIR/$1.t"; }
load() { awk '{printf "%s-%s", $1, $2}' "$DIR/$1.load"; }
secs() { cut -d' ' -f1 "$DIR/$1.t"; }
rss() { awk '{printf "%.0f", $2 / 1024}' "$DIR/$1.t"; }
json() { /usr/bin/python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }

echo "== anonkit-mpi on $ROWS generated rows, --qi $QI --k $K, --memory $MEM per rank ($(nproc) cores; $(mpirun --version | head -1))"
echo "load average at the start (1, 5, 15 min): $(cut -d' ' -f1-3 /proc/loadavg)"
"$ANONKIT" generate --rows "$ROWS" --seed 1 -o "$DIR/in.csv" 2>/dev/null
echo "input: $(($(stat -c %s "$DIR/in.csv") / 1000000)) MB"

if [ "$(cat /proc/sys/kernel/sched_autogroup_enabled 2>/dev/null || echo 0)" = 1 ]; then
    echo "the scheduler groups processes by session (kernel.sched_autogroup_enabled = 1)"
fi
SS=(setsid -w)
timed mondrian-1t "${SS[@]}" "$ANONKIT" anonymize "$DIR/in.csv" -o "$DIR/one.csv" "${ARGS[@]}" --threads 1
timed mondrian "${SS[@]}" "$ANONKIT" anonymize "$DIR/in.csv" -o "$DIR/all.csv" "${ARGS[@]}"
timed rothko-t "${SS[@]}" "$ANONKIT" anonymize "$DIR/in.csv" -o "$DIR/rt.csv" "${ARGS[@]}" --algorithm rothko-t --memory "$MEM" \
    --tmpdir "$DIR"
for np in 1 2 4; do
    timed mpi-$np mpirun -np $np --oversubscribe "${SS[@]}" "$MPIBIN" anonymize "$DIR/in.csv" -o "$DIR/mpi-$np.csv" \
        "${ARGS[@]}" --memory "$MEM" --report "$DIR/mpi-$np.json"
done
# More pairs of a 1-rank and a 2-rank run, one right after the other, so that
# each ratio compares runs under about the same load (PAIRS in all, with the
# pair above; the outputs are checked once, above). Each writes a new file, as
# the pair above does: replacing the last run's output would add the removal of
# its 650 MB (0.18 s here) to the run.
PAIRS=${PAIRS:-3}
for ((i = 2; i <= PAIRS; i++)); do
    for np in 1 2; do
        rm -f "$DIR/pair.csv"
        timed mpi-$np-p$i mpirun -np $np --oversubscribe "${SS[@]}" "$MPIBIN" anonymize "$DIR/in.csv" \
            -o "$DIR/pair.csv" "${ARGS[@]}" --memory "$MEM" --report "$DIR/mpi-$np-p$i.json"
    done
done
rm -f "$DIR/pair.csv"
timed mpi-2s mpirun -np 2 "$MPIBIN" anonymize "$DIR/in.csv" -o "$DIR/mpi-2s.csv" "${ARGS[@]}" --memory "$MEM" \
    --report "$DIR/mpi-2s.json"

sort -S 512M "$DIR/one.csv" | md5sum >"$DIR/one.sum"
for x in rt mpi-1 mpi-2 mpi-4 mpi-2s; do
    if sort -S 512M "$DIR/$x.csv" | md5sum | cmp -s - "$DIR/one.sum"; then same="same table"; else same="DIFFERENT TABLE"; fi
    echo "$x: $same as the single-machine Mondrian (multiset)"
done

printf "\n%-26s %9s %9s %11s %10s %14s %13s %7s\n" run seconds "CPU s" "load avg" "peak MB" "bytes reduced" \
    "rows shipped" levels
for x in mondrian-1t mondrian rothko-t; do
    printf "%-26s %9s %9s %11s %10s\n" "$x" "$(secs $x)" "$(cpu $x)" "$(load $x)" "$(rss $x)"
done
for np in 1 2 4; do
    j=$DIR/mpi-$np.json
    printf "%-26s %9s %9s %11s %10s %14s %13s %7s\n" "anonkit-mpi $np rank(s)" "$(secs mpi-$np)" "$(cpu mpi-$np)" \
        "$(load mpi-$np)" "$(rss mpi-$np)" "$(json "$j" "j['bytes_reduced']")" "$(json "$j" "j['rows_shipped']")" \
        "$(json "$j" "j['levels_reduced']")"
done
j=$DIR/mpi-2s.json
printf "%-26s %9s %9s %11s %10s %14s %13s %7s\n" "2 ranks in one session" "$(secs mpi-2s)" "$(cpu mpi-2s)" \
    "$(load mpi-2s)" "$(rss mpi-2s)" "$(json "$j" "j['bytes_reduced']")" "$(json "$j" "j['rows_shipped']")" \
    "$(json "$j" "j['levels_reduced']")"
echo "(CPU s: user + system seconds of every process of the run, mpirun's too; load avg: before-after the run)"

echo
echo "per rank: busy seconds (CPU outside MPI's waits) per phase; the critical path: the largest of each phase"
for np in 1 2 4 2s; do
    /usr/bin/python3 - "$DIR/mpi-$np.json" <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
ph = ["load", "partition", "ship", "finish", "write"]
print(f"  {j['ranks']} rank(s){' (one session)' if sys.argv[1].endswith('2s.json') else '              '}     " + " ".join(f"{p:>9}" for p in ph) + "      total")
for r in j["per_rank"]:
    print(f"    rank {r['rank']} busy (CPU {r['cpu_seconds']:6.2f} s) " + " ".join(f"{r['busy'][p]:9.3f}" for p in ph)
          + f" {r['busy_seconds']:10.3f}")
print("    critical path                " + " ".join(f"{j['critical_path'][p]:9.3f}" for p in ph)
      + f" {j['critical_path_seconds']:10.3f}")
print("    wall (largest over ranks)    " + " ".join(f"{j['seconds'][p]:9.3f}" for p in ph))
EOF
done

# The model of docs/distributed.md §3: a level of 2^l open nodes reduces, per
# node and QI, one 8-byte count per code of the node's range, at most the QI's
# distinct values D_q (an upper bound: a split QI's range halves); every row
# is shipped once, to an owner that is another rank with probability (P-1)/P.
D=$(awk -F, 'NR > 1 { a[$3]; s[$1]; z[$6]; e[$4] } END { print length(a) + length(s) + length(z) + length(e) }' \
    "$DIR/in.csv")
echo
echo "model (docs/distributed.md §3): sum of the QIs' distinct values D = $D"
for np in 1 2 4; do
    j=$DIR/mpi-$np.json
    L=$(json "$j" "j['levels_reduced']")
    model=$(awk -v L="$L" -v D="$D" 'BEGIN { b = 0; for (l = 0; l < L; l++) b += 8 * 2^l * D; printf "%.0f", b }')
    shipped_model=$(awk -v n="$ROWS" -v p=$np 'BEGIN { printf "%.0f", n * (p - 1) / p }')
    awk -v np=$np -v m="$model" -v b="$(json "$j" "j['bytes_reduced']")" -v sm="$shipped_model" \
        -v s="$(json "$j" "j['rows_shipped']")" 'BEGIN {
        printf "%d rank(s): bytes reduced %d, model (bound) %d, ratio %.3f; rows shipped %d, model %d, ratio %s\n",
               np, b, m, m ? b / m : 0, s, sm, sm ? sprintf("%.3f", s / sm) : "-" }'
done

echo
echo "per-row costs, 1 rank (the figures docs/distributed.md §4 scales):"
j=$DIR/mpi-1.json
/usr/bin/python3 - "$j" "$ROWS" <<'EOF'
import json, sys
j = json.load(open(sys.argv[1])); n = int(sys.argv[2])
w = j["seconds"]; s = j["per_rank"][0]["busy"]
L = max(j["levels_reduced"], 1)
print("  (busy seconds, the CPU the work takes; in brackets the wall seconds, which the machine's load stretches)")
print(f"  load (read, parse, encode, merge dictionaries): {s['load'] / n * 1e6:.3f} us/row ({w['load'] / n * 1e6:.3f})")
print(f"  distributed levels (count + route, per level):   {s['partition'] / n / L * 1e6:.3f} us/row/level ({L} levels)"
      f" ({w['partition'] / n / L * 1e6:.3f})")
print(f"  ship (pack, all-to-all, unpack):                {s['ship'] / n * 1e6:.3f} us/row ({w['ship'] / n * 1e6:.3f})")
print(f"  finish leaves in memory (Mondrian):             {s['finish'] / n * 1e6:.3f} us/row ({w['finish'] / n * 1e6:.3f})")
print(f"  write (recode, compose, write, commit):         {s['write'] / n * 1e6:.3f} us/row ({w['write'] / n * 1e6:.3f})")
print(f"  bytes shipped per row:                          {j['bytes_shipped'] / n:.1f}" if j['rows_shipped'] else
      "  bytes shipped per row:                          (1 rank ships nothing to others)")
EOF
j=$DIR/mpi-2.json
/usr/bin/python3 - "$j" <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
print(f"  bytes packed per row (2 ranks):                 {j['bytes_shipped'] / max(j['rows_read'], 1):.1f}")
EOF
echo
crit() { json "$DIR/mpi-$1.json" "j['critical_path_seconds']"; }
awk -v a="$(secs mpi-1)" -v b="$(secs mpi-2)" -v c="$(secs mpi-4)" -v m="$(secs mondrian-1t)" -v mt="$(secs mondrian)" \
    -v r="$(secs rothko-t)" -v ca="$(crit 1)" -v cb="$(crit 2)" -v cc="$(crit 4)" -v cm="$(cpu mondrian-1t)" \
    -v cpa="$(cpu mpi-1)" -v bs="$(secs mpi-2s)" -v cbs="$(crit 2s)" 'BEGIN {
    printf "ratios: 2 ranks / 1 rank %.2f wall (goal <= 0.65), %.2f critical path\n", b / a, cb / ca
    printf "        2 ranks in one session / 1 rank %.2f wall, %.2f critical path\n", bs / a, cbs / ca
    printf "        4 ranks / 1 rank %.2f wall, %.2f critical path (oversubscribed: 4 ranks on %d cores)\n",
           c / a, cc / ca, '"$(nproc)"'
    printf "        1 rank / Mondrian one thread %.2f wall, %.2f CPU; 2 ranks / Mondrian all cores %.2f, 2 ranks / Rothko-T %.2f\n",
           a / m, cpa / cm, b / mt, b / r }'
echo
echo "pairs of runs, 2 ranks right after 1 rank (wall ratio; critical-path ratio; load averages before-after each):"
for ((i = 1; i <= PAIRS; i++)); do
    if [ $i = 1 ]; then a=mpi-1 b=mpi-2; else a=mpi-1-p$i b=mpi-2-p$i; fi
    awk -v i=$i -v a="$(secs $a)" -v b="$(secs $b)" -v ca="$(json "$DIR/$a.json" "j['critical_path_seconds']")" \
        -v cb="$(json "$DIR/$b.json" "j['critical_path_seconds']")" -v la="$(load $a)" -v lb="$(load $b)" 'BEGIN {
        printf "  pair %d: 1 rank %.2f s (critical path %.2f, load %s), 2 ranks %.2f s (%.2f, load %s): %.2f wall, %.2f critical path\n",
               i, a, ca, la, b, cb, lb, b / a, cb / ca }'
done | tee "$DIR/pairs.txt"
sed -n 's/.*: \([0-9.]*\) wall, .*/\1/p' "$DIR/pairs.txt" | sort -n | awk '{ v[NR] = $1 } END {
    printf "  median wall ratio over %d pairs: %.2f (goal <= 0.65)\n", NR, NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
echo "load average at the end (1, 5, 15 min): $(cut -d' ' -f1-3 /proc/loadavg)"
