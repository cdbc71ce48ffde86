#!/usr/bin/env bash
# bench_python.sh — the Python package (python/, docs/python.md) against the
# command line, on Adult (30,162 rows; its job's settings) and ROWS generated
# rows (default 1,000,000; `anonkit generate`, 8 numeric QIs, k = 10):
# anonkit.anonymize(DataFrame) -> DataFrame against `anonkit anonymize` on the
# same CSV in the same run (goal: within 1.3x of the command line), with the
# conversions timed apart; then a straightforward pandas/numpy Mondrian
# written for this benchmark (bench/mondrian_baseline.py, a baseline, not a
# third-party implementation) on the generated rows with the same QIs and k.
# qiyuangong's Mondrian (the Python implementation users would pick) is
# compared when importable as `mondrian` (its repository's module); it is
# neither a Debian package nor reachable offline here, which the output says.
# Prints tables and ratios; never fails on time.
# usage: bash bench/bench_python.sh [BUILD_DIR] [ROWS] [BASELINE_ROWS]
set -euo pipefail
BUILD=${1:-build}
ROWS=${2:-1000000}
BASELINE_ROWS=${3:-$ROWS}
ANONKIT=$(realpath "$BUILD/anonkit")
SRC=$(cd "$(dirname "$0")/.." && pwd)
DIR=$(mktemp -d "${TMPDIR:-/tmp}/anonkit-bench-python.XXXXXX")
trap 'rm -rf "$DIR"' EXIT
export PYTHONPATH=$SRC/python ANONKIT_LIBRARY=$(realpath "$BUILD/libanonkit.so")

"$ANONKIT" generate --rows "$ROWS" --seed 1 -o "$DIR/gen.csv" 2>/dev/null
/usr/bin/python3 "$SRC/bench/bench_python.py" "$ANONKIT" "$SRC/examples/adult" "$DIR/gen.csv" "${REPEAT:-3}"

echo
echo "baseline: pandas/numpy Mondrian (bench/mondrian_baseline.py) against the command line, k = 10, 8 QIs"
head -n $((BASELINE_ROWS + 1)) "$DIR/gen.csv" >"$DIR/base.csv"
QIS=age,salary,commission,elevel,car,zipcode,hvalue,hyears
t0=$(date +%s.%N)
"$ANONKIT" anonymize "$DIR/base.csv" -o "$DIR/base-out.csv" --qi $QIS --k 10 --seed 1 --threads 2 2>/dev/null
t1=$(date +%s.%N)
read -r tb classes < <(/usr/bin/python3 "$SRC/bench/mondrian_baseline.py" "$DIR/base.csv" 10 $QIS)
/usr/bin/python3 -c "import sys; c, b = float(sys.argv[1]), float(sys.argv[2]); print(f'{int(sys.argv[3]):>9} rows: cli {c:.3f} s, baseline {b:.3f} s ({sys.argv[4]} classes, partition and publish only, reading excluded): {b / c:.1f}x the cli')" \
    "$(echo "$t1 - $t0" | bc)" "$tb" "$BASELINE_ROWS" "$classes"
if /usr/bin/python3 -c "import mondrian" 2>/dev/null; then
    echo "note: a module 'mondrian' is importable, but this script does not drive qiyuangong's interface; compare by hand"
else
    echo "note: qiyuangong's Mondrian was not available here (no Debian package; PyPI and GitHub not reachable):"
    echo "      the comparison above is with bench/mondrian_baseline.py, a baseline written for this benchmark"
fi
