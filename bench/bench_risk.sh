#!/usr/bin/env bash
# bench_risk.sh — `anonkit risk` against one read of the same file by the CSV
# reader (bench_csv's csv_read pass, best of 3) measured in the same run, on
# Adult (8 QIs) and on ROWS generated rows with the 9 attributes of
# [LeFevre07] Figure 7 (anonkit generate); then SUDA2 on Adult with 8 QIs and
# M = 3, 4, 5. Prints seconds and the ratio to the read (a single-threaded
# pass; risk reads a large file in two pieces on two threads), and the peak
# resident size of the 9-QI run (with /usr/bin/time); never fails on time.
#
# usage: bash bench/bench_risk.sh [BUILD_DIR]     (ROWS=10000000 by default; RUNS=3)
set -eu
BUILD=${1:-build}
ROWS=${ROWS:-10000000}
RUNS=${RUNS:-3}
BIN=$BUILD/anonkit
CSV=$BUILD/bench_csv
ADULT=$(dirname "$0")/../../../shared/data/adult/adult.csv
[ -f "$ADULT" ] || ADULT=$(dirname "$0")/../examples/adult/adult.csv
TMP=$(mktemp -d "${TMPDIR:-/tmp}/bench_risk.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

# best of RUNS wall-clock seconds of a command
best() {
    local best_s=
    for _ in $(seq "$RUNS"); do
        local t0 t1
        t0=$(date +%s.%N)
        "$@" >/dev/null
        t1=$(date +%s.%N)
        best_s=$(python3 -c "a=$t1-$t0; b='$best_s'; print(min(a, float(b)) if b else a)")
    done
    echo "$best_s"
}
# seconds of one csv_read pass over FILE (best of 3, as bench_csv reports it)
read_seconds() {
    "$CSV" "$1" "$2" | sed -n 's/.*best of [0-9]*: \([0-9.]*\) s.*/\1/p' | head -n 1
}
report() { # NAME RISK_SECONDS READ_SECONDS
    python3 -c "print('%-34s risk %8.3f s   csv read %8.3f s   ratio %.2f' % ('$1', $2, $3, $2 / $3))"
}

ADULT_QI=age,sex,race,marital-status,education,native-country,workclass,occupation
echo "Adult: $ADULT ($(($(wc -l <"$ADULT") - 1)) rows), QIs $ADULT_QI"
r=$(best "$BIN" risk "$ADULT" --delimiter ';' --qi "$ADULT_QI")
c=$(read_seconds "$ADULT" ';')
report "risk, Adult, 8 QIs" "$r" "$c"
r=$(best "$BIN" risk "$ADULT" --delimiter ';' --qi "$ADULT_QI" --sampling-fraction 0.01)
report "risk + population models, Adult" "$r" "$c"

GEN=$TMP/gen.csv
t0=$(date +%s.%N)
"$BIN" generate --rows "$ROWS" --seed 1 -o "$GEN" 2>/dev/null
t1=$(date +%s.%N)
echo "generated $ROWS rows ($(du -m "$GEN" | cut -f1) MB) in $(python3 -c "print('%.1f' % ($t1-$t0))") s"
GEN_QI=salary,commission,age,elevel,car,zipcode,hvalue,hyears,loan
r=$(RUNS=1 best "$BIN" risk "$GEN" --qi "$GEN_QI")
c=$(read_seconds "$GEN" ',')
report "risk, $ROWS generated rows, 9 QIs" "$r" "$c"
if [ -x /usr/bin/time ]; then
    rss=$( { /usr/bin/time -f '%M' "$BIN" risk "$GEN" --qi "$GEN_QI" >/dev/null; } 2>&1 | tail -n 1)
    echo "peak resident size of that run: $((rss / 1024)) MB"
fi
GEN_QI3=age,elevel,car
r=$(RUNS=1 best "$BIN" risk "$GEN" --qi "$GEN_QI3")
report "risk, $ROWS rows, 3 QIs (few classes)" "$r" "$c"

for M in 3 4 5; do
    r=$(best "$BIN" risk "$ADULT" --delimiter ';' --qi "$ADULT_QI" --suda "$M")
    p=$(best "$BIN" risk "$ADULT" --delimiter ';' --qi "$ADULT_QI")
    python3 -c "print('SUDA2, Adult, 8 QIs, M = $M: %.3f s (risk without SUDA2 %.3f s, SUDA2 alone %.3f s)' % ($r, $p, $r - $p))"
done
"$BIN" risk "$ADULT" --delimiter ';' --qi "$ADULT_QI" --suda 5 | grep SUDA2
