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
# usage: bash bench/bench_mpi.sh [BUILD_DIR] [ROWS]
set -euo pipefail
BUILD=${1:-build}
ROWS=${2:-10000000}
ANONKIT=$BUILD/anonkit
MPIBIN=$BUILD/anonkit-mpi
DIR=$(mktemp -d "${TMPDIR:-/tmp}/anonkit-bench-mpi.XXXXXX")
trap 'rm -rf "$DIR"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader
QI=age,salary,zipcode,elevel
K=50
MEM=${MEM:-64M}
ARGS=(--qi $QI --k $K)

timed() { # timed NAME CMD...: wall seconds and peak RSS (MB) of the largest process into $DIR/NAME.t
    local name=$1
    shift
    /usr/bin/time -f "%e %M" -o "$DIR/$name.t" "$@" 2>"$DIR/$name.err" >/dev/null || {
        echo "$name failed:"; cat "$DIR/$name.err"; return 1; }
}
secs() { cut -d' ' -f1 "$DIR/$1.t"; }
rss() { awk '{printf "%.0f", $2 / 1024}' "$DIR/$1.t"; }
json() { /usr/bin/python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }

echo "== anonkit-mpi on $ROWS generated rows, --qi $QI --k $K, --memory $MEM per rank ($(nproc) cores; $(mpirun --version | head -1))"
"$ANONKIT" generate --rows "$ROWS" --seed 1 -o "$DIR/in.csv" 2>/dev/null
echo "input: $(($(stat -c %s "$DIR/in.csv") / 1000000)) MB"

timed mondrian-1t "$ANONKIT" anonymize "$DIR/in.csv" -o "$DIR/one.csv" "${ARGS[@]}" --threads 1
timed mondrian "$ANONKIT" anonymize "$DIR/in.csv" -o "$DIR/all.csv" "${ARGS[@]}"
timed rothko-t "$ANONKIT" anonymize "$DIR/in.csv" -o "$DIR/rt.csv" "${ARGS[@]}" --algorithm rothko-t --memory "$MEM" \
    --tmpdir "$DIR"
for np in 1 2 4; do
    timed mpi-$np mpirun -np $np --oversubscribe "$MPIBIN" anonymize "$DIR/in.csv" -o "$DIR/mpi-$np.csv" "${ARGS[@]}" \
        --memory "$MEM" --report "$DIR/mpi-$np.json"
done

sort -S 512M "$DIR/one.csv" | md5sum >"$DIR/one.sum"
for x in rt mpi-1 mpi-2 mpi-4; do
    if sort -S 512M "$DIR/$x.csv" | md5sum | cmp -s - "$DIR/one.sum"; then same="same table"; else same="DIFFERENT TABLE"; fi
    echo "$x: $same as the single-machine Mondrian (multiset)"
done

printf "\n%-26s %9s %10s %14s %13s %10s\n" run seconds "peak MB" "bytes reduced" "rows shipped" levels
for x in mondrian-1t mondrian rothko-t; do printf "%-26s %9s %10s\n" "$x" "$(secs $x)" "$(rss $x)"; done
for np in 1 2 4; do
    j=$DIR/mpi-$np.json
    printf "%-26s %9s %10s %14s %13s %10s\n" "anonkit-mpi $np rank(s)" "$(secs mpi-$np)" "$(rss mpi-$np)" \
        "$(json "$j" "j['bytes_reduced']")" "$(json "$j" "j['rows_shipped']")" "$(json "$j" "j['levels_reduced']")"
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
j = json.load(open(sys.argv[1])); n = int(sys.argv[2]); s = j["seconds"]
L = max(j["levels_reduced"], 1)
print(f"  load (read, parse, encode, merge dictionaries): {s['load'] / n * 1e6:.3f} us/row")
print(f"  distributed levels (count + route, per level):   {s['partition'] / n / L * 1e6:.3f} us/row/level ({L} levels)")
print(f"  ship (pack, all-to-all, unpack):                {s['ship'] / n * 1e6:.3f} us/row")
print(f"  finish leaves in memory (Mondrian):             {s['finish'] / n * 1e6:.3f} us/row")
print(f"  write (recode, compose, write, commit):         {s['write'] / n * 1e6:.3f} us/row")
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
awk -v a="$(secs mpi-1)" -v b="$(secs mpi-2)" -v c="$(secs mpi-4)" -v m="$(secs mondrian-1t)" -v mt="$(secs mondrian)" \
    -v r="$(secs rothko-t)" 'BEGIN {
    printf "ratios: 2 ranks / 1 rank %.2f (goal <= 0.65), 4 ranks / 1 rank %.2f (oversubscribed: 4 ranks on %d cores)\n",
           b / a, c / a, '"$(nproc)"'
    printf "        1 rank / Mondrian one thread %.2f, 2 ranks / Mondrian all cores %.2f, 2 ranks / Rothko-T %.2f\n",
           a / m, b / mt, b / r }'
