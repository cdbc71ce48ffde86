#!/usr/bin/env bash
# bench_sequential.sh — 004 §6 on Adult split into a Taxation view T1 and an
# Immigration view T2: (X,Y)-anonymity with Y = K1 (Set A: categorical X; Set B:
# X adds the continuous attributes) beside k-anonymizing T1 alone with Mondrian
# (class entropy of both), then the scalability runs of §6.1 / §6.2 (the data
# enlarged to about 200K and 1M records by variations of every record).
# Prints figures and ratios; never fails on time.
# usage: bash bench/bench_sequential.sh BUILD_DIR
set -u
BIN=$(cd "${1:-build}" && pwd)/anonkit
SRC=$(cd "$(dirname "$0")/.." && pwd)
DATA=/work/shared/data/adult15
PY=/usr/bin/python3
T=$(mktemp -d "${TMPDIR:-/tmp}/anonkit-bench-seq.XXXXXX") || exit 2
trap 'rm -rf "$T"' EXIT
CATS="marital-status relationship sex education occupation workclass race native-country"
for a in $CATS; do tail -n +2 "$DATA/hierarchies/$a.csv" | tr -d '\r' >"$T/$a.csv"; done
HS=$(for a in $CATS; do printf -- '--hierarchy %s=%s ' "$a" "$T/$a.csv"; done)
field() { "$PY" -c 'import json,sys; j=json.load(open(sys.argv[1])); print(j.get(sys.argv[2]) if sys.argv[2] in j else j["metrics"][sys.argv[2]])' "$1" "$2"; }

mkdir -p "$T/a"
"$PY" "$SRC/bench/sequential_views.py" "$DATA/adult.csv" "$T/a" 1
SETA=marital-status,relationship,sex,education,occupation,workclass,race,native-country
SETB=$SETA,age,education-num,capital-gain,capital-loss,hours-per-week
echo "set  k    XY-distortion(cat,cont)  XY-entropy  KA-entropy(Mondrian on T1)  seconds"
for set in A B; do
    X=$SETA; [ $set = B ] && X=$SETB
    QI=education,occupation,workclass,marital-status,relationship,sex
    [ $set = B ] && QI=$QI,age,education-num,capital-gain,capital-loss,hours-per-week
    for k in 40 200; do
        "$BIN" sequential "$T/a/t1.csv" --previous "$T/a/t2.csv" -o "$T/o.csv" --delimiter ';' --x "$X" --y k1 \
            --anonymity $k --class salary $HS --report "$T/r.json" 2>/dev/null || { echo "$set $k: failed"; continue; }
        "$BIN" anonymize "$T/a/t1.csv" -o "$T/m.csv" --delimiter ';' --qi "$QI" --k $k --class salary \
            $(for a in education occupation workclass marital-status relationship sex; do printf -- '--hierarchy %s=%s ' $a "$T/$a.csv"; done) \
            --report "$T/m.json" 2>/dev/null || { echo "$set $k: mondrian failed"; continue; }
        printf '%s    %-4s %.3f, %.3f             %.4f      %.4f                      %.2f\n' $set $k \
            "$(field "$T/r.json" distortion_categorical)" "$(field "$T/r.json" distortion_continuous)" \
            "$(field "$T/r.json" conditional_entropy)" "$(field "$T/m.json" conditional_entropy)" "$(field "$T/r.json" seconds)"
    done
done

echo
echo "scalability (Set A, Top: X = all categorical attributes; Y = K1, k = 40 / Y = occupation, p = 0.9)"
echo "records   anonymity-s  linkability-s  (004: 885 s and 83 s at 1M)"
for scale in 7 33; do
    mkdir -p "$T/s"
    "$PY" "$SRC/bench/sequential_views.py" "$DATA/adult.csv" "$T/s" $scale
    n=$(($(wc -l <"$T/s/t1.csv") - 1))
    a0=$(date +%s.%N)
    "$BIN" sequential "$T/s/t1.csv" --previous "$T/s/t2.csv" -o "$T/o.csv" --delimiter ';' --x $SETA --y k1 \
        --anonymity 40 --class salary $HS 2>/dev/null
    a1=$(date +%s.%N)
    "$BIN" sequential "$T/s/t1.csv" --previous "$T/s/t2.csv" -o "$T/o.csv" --delimiter ';' \
        --x education,workclass,marital-status,relationship,sex,race,native-country --y occupation \
        --linkability 0.9 --class salary $HS 2>/dev/null
    a2=$(date +%s.%N)
    printf '%-9s %-12.2f %-14.2f\n' $n "$(echo "$a1 - $a0" | bc)" "$(echo "$a2 - $a1" | bc)"
    rm -rf "$T/s"
done
