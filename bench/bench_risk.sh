#!/usr/bin/env bash
# bench_risk.sh — `anonkit risk` against one read of the same file by the CSV
# reader, measured in the same run, on Adult (8 QIs) and on ROWS generated
# rows with the 9 attributes of [LeFevre07] Figure 7 (anonkit generate), with
# 9 and with 3 QIs; then SUDA2 on Adult with 8 QIs and M = 3, 4, 5.
#
# The baseline is a whole process: `bench_csv --once FILE` starts, makes one
# single-threaded csv_read pass over the file and exits. It is timed exactly
# as the `anonkit risk` process is (wall clock from the start of the process
# to its end, output to /dev/null), and the two are run alternately, RUNS
# times each, so that both meet the same load on a shared machine; the figure
# of each is its best (smallest) time and the ratio is risk's best over the
# read's best (the median ratio of the pairs is printed too, and the best CPU
# times, user + system, whose ratio a loaded machine disturbs less). Process start-up
# is thus in both figures, as a user meets it. risk reads a file below 8 MiB by a
# scan of plain lines (docs/risk.md §9), in two pieces on two threads from 4 MiB,
# a larger one in two pieces by the CSV reader; the read is one thread. Also prints the peak resident
# size of the 9-QI run (/usr/bin/time). Never fails on time.
#
# usage: bash bench/bench_risk.sh [BUILD_DIR]     (ROWS=10000000 by default; RUNS=5)
set -eu
BUILD=${1:-build}
ROWS=${ROWS:-10000000}
RUNS=${RUNS:-5}
BIN=$BUILD/anonkit
CSV=$BUILD/bench_csv
DATA=${DATA:-$(dirname "$0")/../../shared/data}
ADULT=$DATA/adult/adult.csv
[ -f "$ADULT" ] || ADULT=$(dirname "$0")/../../../shared/data/adult/adult.csv
[ -f "$ADULT" ] || ADULT=$(dirname "$0")/../examples/adult/adult.csv
TMP=$(mktemp -d "${TMPDIR:-/tmp}/bench_risk.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

# pair NAME RUNS -- READ_CMD... -- RISK_CMD...: the two commands alternately,
# RUNS times each; prints both best wall times and their ratio
pair() {
    python3 - "$@" <<'PY'
import resource, subprocess, sys, time, statistics
name, runs = sys.argv[1], int(sys.argv[2])
rest = sys.argv[4:]
cut = rest.index('--')
read_cmd, risk_cmd = rest[:cut], rest[cut + 1:]
def wall(cmd):
    """wall seconds and CPU seconds (user + system) of one run of cmd"""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, check=True)
    t = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return t, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
reads, risks = [], []
for _ in range(runs):
    reads.append(wall(read_cmd))
    risks.append(wall(risk_cmd))
rw, rc = min(t for t, _ in risks), min(c for _, c in risks)
qw, qc = min(t for t, _ in reads), min(c for _, c in reads)
med = statistics.median(b[0] / a[0] for a, b in zip(reads, risks))
print('%-36s risk %8.4f s   read %8.4f s   ratio %.2f  (median of pairs %.2f, best of %d; CPU %.4f s / %.4f s = %.2f)'
      % (name, rw, qw, rw / qw, med, runs, rc, qc, rc / qc if qc else float('nan')))
PY
}

ADULT_QI=age,sex,race,marital-status,education,native-country,workclass,occupation
# what starting a process costs each binary (anonkit loads jansson and libm;
# GSL only for Rothko-S's tests and normal salaries, libpq, SQLite, ReadStat
# and libcrypto only when a source, sink or the release report needs them;
# bench_csv only libc), so that the small file's ratio can be read without it
pair "start-up only (--version, empty file)" "$RUNS" -- "$CSV" --once /dev/null -- "$BIN" --version
echo "Adult: $ADULT ($(($(wc -l <"$ADULT") - 1)) rows), QIs $ADULT_QI"
pair "risk, Adult, 8 QIs" "$RUNS" -- "$CSV" --once "$ADULT" ';' -- \
    "$BIN" risk "$ADULT" --delimiter ';' --qi "$ADULT_QI"
pair "risk + population models, Adult" "$RUNS" -- "$CSV" --once "$ADULT" ';' -- \
    "$BIN" risk "$ADULT" --delimiter ';' --qi "$ADULT_QI" --sampling-fraction 0.01

GEN=$TMP/gen.csv
t0=$(date +%s.%N)
"$BIN" generate --rows "$ROWS" --seed 1 -o "$GEN" 2>/dev/null
t1=$(date +%s.%N)
echo "generated $ROWS rows ($(du -m "$GEN" | cut -f1) MB) in $(python3 -c "print('%.1f' % ($t1-$t0))") s"
cat "$GEN" >/dev/null # in the page cache for both
GEN_QI=salary,commission,age,elevel,car,zipcode,hvalue,hyears,loan
pair "risk, $ROWS rows, 9 QIs" "$RUNS" -- "$CSV" --once "$GEN" ',' -- "$BIN" risk "$GEN" --qi "$GEN_QI"
if [ -x /usr/bin/time ]; then
    rss=$( { /usr/bin/time -f '%M' "$BIN" risk "$GEN" --qi "$GEN_QI" >/dev/null; } 2>&1 | tail -n 1)
    echo "peak resident size of the 9-QI run: $((rss / 1024)) MB"
fi
GEN_QI3=age,elevel,car
pair "risk, $ROWS rows, 3 QIs (few classes)" "$RUNS" -- "$CSV" --once "$GEN" ',' -- "$BIN" risk "$GEN" --qi "$GEN_QI3"

# SUDA2: best of RUNS wall times of risk with and without it
best() {
    python3 - "$@" <<'PY'
import subprocess, sys, time
runs, cmd = int(sys.argv[1]), sys.argv[2:]
best = None
for _ in range(runs):
    t0 = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, check=True)
    t = time.perf_counter() - t0
    best = t if best is None else min(best, t)
print(best)
PY
}
p=$(best "$RUNS" "$BIN" risk "$ADULT" --delimiter ';' --qi "$ADULT_QI")
for M in 3 4 5; do
    r=$(best "$RUNS" "$BIN" risk "$ADULT" --delimiter ';' --qi "$ADULT_QI" --suda "$M")
    python3 -c "print('SUDA2, Adult, 8 QIs, M = $M: %.3f s (risk without SUDA2 %.3f s, SUDA2 alone %.3f s)' % ($r, $p, $r - $p))"
done
"$BIN" risk "$ADULT" --delimiter ';' --qi "$ADULT_QI" --suda 5 | grep SUDA2
