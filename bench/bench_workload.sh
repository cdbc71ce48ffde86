#!/usr/bin/env bash
# bench_workload.sh — workload-aware Mondrian ([LeFevre07] §5.5, Figures 22-26, all data
# in memory): conditional entropy of the class labels C2 and C7 and RMSE of the
# targets R7 and R10 against k = 10, 50, 100, 500, for the Median split (the
# baseline, measured in the same run) and for InfoGain / Regression, on
# 100,000 rows of the [LeFevre07] Figure 7 generator; with the time of every run.
# Prints figures and ratios; never fails on time.
# usage: bash bench/bench_workload.sh [BUILD_DIR] [ROWS]
set -euo pipefail
BUILD=${1:-build}
ROWS=${2:-100000}
ANONKIT=$BUILD/anonkit
DIR=$(mktemp -d "${TMPDIR:-/tmp}/anonkit-bench.XXXXXX")
trap 'rm -rf "$DIR"' EXIT
QI=salary,commission,age,elevel,car,zipcode,hvalue,hyears,loan

"$ANONKIT" generate --rows "$ROWS" --seed 1 -o "$DIR/in.csv" 2>/dev/null
echo "== $ROWS rows of the [LeFevre07] Figure 7 generator (seed 1), QIs: $QI"

run() { # name k split extra...
    local name=$1 k=$2 split=$3
    shift 3
    "$ANONKIT" anonymize "$DIR/in.csv" -o "$DIR/out.csv" --qi "$QI" --k "$k" --split "$split" --seed 1 \
        --report "$DIR/$name-$k.json" "$@" 2>/dev/null
}

for k in 10 50 100 500; do
    for label in c2 c7; do
        run "median-$label" "$k" median --class "$label"
        run "infogain-$label" "$k" infogain --class "$label"
    done
    for target in r7 r10; do
        run "median-$target" "$k" median --target "$target"
        run "regression-$target" "$k" regression --target "$target"
    done
done

/usr/bin/python3 - "$DIR" <<'PY'
import json, os, sys
d = sys.argv[1]
def load(name, k):
    r = json.load(open(os.path.join(d, f"{name}-{k}.json")))
    return r["metrics"], r["seconds"], r["classes"]
print()
print("conditional entropy of the class label (bits; lower is better), Median vs InfoGain")
print(f"{'label':6} {'k':>5} {'median':>9} {'infogain':>9} {'ratio':>7} {'t median':>9} {'t infogain':>10} {'classes':>8}")
for label in ("c2", "c7"):
    for k in (10, 50, 100, 500):
        mm, ms, _ = load(f"median-{label}", k)
        im, it, ic = load(f"infogain-{label}", k)
        a, b = mm["conditional_entropy"], im["conditional_entropy"]
        print(f"{label:6} {k:5d} {a:9.4f} {b:9.4f} {b / a if a else float('nan'):7.3f} {ms:8.3f}s {it:9.3f}s {ic:8d}")
print()
print("RMSE of the target using class means (lower is better), Median vs Regression")
print(f"{'target':6} {'k':>5} {'median':>10} {'regression':>10} {'ratio':>7} {'t median':>9} {'t regr.':>9} {'classes':>8}")
for target in ("r7", "r10"):
    for k in (10, 50, 100, 500):
        mm, ms, _ = load(f"median-{target}", k)
        rm, rt, rc = load(f"regression-{target}", k)
        a, b = mm["rmse"], rm["rmse"]
        print(f"{target:6} {k:5d} {a:10.1f} {b:10.1f} {b / a if a else float('nan'):7.3f} {ms:8.3f}s {rt:8.3f}s {rc:8d}")
PY
