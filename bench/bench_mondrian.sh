#!/usr/bin/env bash
# bench_mondrian.sh — in-memory Mondrian on a 1,000,000-row numeric table with
# the nine QIs of [LeFevre07] Figure 7, k = 10, timed against `sort -t, -k1,1n` of the
# same file in the same run (hyperfine), with anonkit's peak resident memory
# (/usr/bin/time -v) and its phase timings. Prints figures; never fails on time.
# usage: bash bench/bench_mondrian.sh [BUILD_DIR] [ROWS]
set -euo pipefail
BUILD=${1:-build}
ROWS=${2:-1000000}
ANONKIT=$BUILD/anonkit
DIR=$(mktemp -d "${TMPDIR:-/tmp}/anonkit-bench.XXXXXX")
trap 'rm -rf "$DIR"' EXIT
QI=salary,commission,age,elevel,car,zipcode,hvalue,hyears,loan

echo "== generating $ROWS rows ([LeFevre07] Figure 7 attributes; the nine QIs kept)"
"$ANONKIT" generate --rows "$ROWS" --seed 1 -o - 2>/dev/null | cut -d, -f1-9 > "$DIR/in.csv"
ls -l "$DIR/in.csv" | awk '{printf "input: %.1f MB\n", $5 / 1e6}'

echo "== CSV reader throughput"
"$BUILD/bench_csv" "$DIR/in.csv"

echo "== anonkit anonymize --k 10 vs sort -t, -k1,1n (hyperfine, same run)"
hyperfine --style basic --warmup 1 --runs 10 --export-json "$DIR/h.json" \
    -n sort "sort -t, -k1,1n $DIR/in.csv -o $DIR/sorted.csv" \
    -n anonkit "$ANONKIT anonymize $DIR/in.csv -o $DIR/out.csv --qi $QI --k 10 --seed 1" \
    -n anonkit-1-thread "$ANONKIT anonymize $DIR/in.csv -o $DIR/out1.csv --qi $QI --k 10 --seed 1 --threads 1" \
    >/dev/null
/usr/bin/python3 - "$DIR/h.json" <<'PY'
import json, sys
r = {x["command"]: x for x in json.load(open(sys.argv[1]))["results"]}
s, sm = r["sort"]["mean"], r["sort"]["median"]
# the mean as hyperfine gives it, and the median, which a run disturbed by other work moves less
for name in ("sort", "anonkit", "anonkit-1-thread"):
    x = r[name]
    print(f"{name:18s} mean {x['mean']:.3f} s  (min {x['min']:.3f}, max {x['max']:.3f})  ratio to sort {x['mean'] / s:.2f}"
          f"  | median {x['median']:.3f} s, ratio {x['median'] / sm:.2f}")
PY

echo "== peak resident memory and phases (anonkit, default threads)"
/usr/bin/time -v "$ANONKIT" anonymize "$DIR/in.csv" -o "$DIR/out.csv" --qi $QI --k 10 --seed 1 \
    --report "$DIR/report.json" 2> "$DIR/time.txt" || true
grep -E "Maximum resident set size" "$DIR/time.txt" | awk '{printf "peak RSS: %.1f MB\n", $6 / 1024}'
/usr/bin/python3 - "$DIR/report.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
p = j["phase_seconds"]
print("phases: " + ", ".join(f"{k} {v:.3f} s" for k, v in p.items()))
print(f"classes {j['classes']}, GCP {j['metrics']['gcp']:.4f}, min class {j['min_class_size']}")
PY
"$ANONKIT" check "$DIR/out.csv" --qi $QI --k 10
