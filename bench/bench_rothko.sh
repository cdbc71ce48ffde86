#!/usr/bin/env bash
# bench_rothko.sh — Rothko-T (000 §2, §4, §5.3-5.4) on generated data (000
# Figure 7, the 9 QIs): `--memory 64M`, k = 1000, F_CACHE 1 and 8. Prints wall
# time, peak resident memory against the budget, blocks read and written against
# the I/O model of 000 §4, and — measured in the same run on a file the size of
# the tuple data — the time of one sequential read (cat of a cached file, as the
# spill files are read) and one write (dd), so that the run can be stated as a
# multiple of the model's I/O time: reads_T x read time + writes_T x write time.
# The in-memory Mondrian on the same input is the baseline. Never fails on time.
# usage: bash bench/bench_rothko.sh [BUILD_DIR] [ROWS] [MEMORY]
set -euo pipefail
BUILD=${1:-build}
ROWS=${2:-10000000}
MEMORY=${3:-64M}
ANONKIT=$BUILD/anonkit
DIR=$(mktemp -d "${TMPDIR:-/tmp}/anonkit-bench.XXXXXX")
trap 'rm -rf "$DIR"' EXIT
QI=salary,commission,age,elevel,car,zipcode,hvalue,hyears,loan

"$ANONKIT" generate --rows "$ROWS" --seed 1 -o - 2>/dev/null | cut -d, -f1-9 >"$DIR/in.csv"
echo "input: $ROWS rows, $(( $(stat -c %s "$DIR/in.csv") / 1000000 )) MB of CSV, QIs $QI, k = 1000"

# the model's unit costs, on a file the size of the tuple data (9 codes, sensitive, class: 44 bytes a row)
BYTES=$((ROWS * 44))
/usr/bin/time -f "%e" -o "$DIR/t" dd if=/dev/zero of="$DIR/probe" bs=256K count=$(( (BYTES + 262143) / 262144 )) conv=fsync status=none
WRITE=$(cat "$DIR/t")
/usr/bin/time -f "%e" -o "$DIR/t" cat "$DIR/probe" >/dev/null
READ=$(cat "$DIR/t")
rm -f "$DIR/probe"
printf "one write of the tuple data (dd, fsync): %.2f s; one read (cat, cached): %.2f s  (%d MB)\n" "$WRITE" "$READ" $((BYTES / 1000000))

run() { # NAME ARGS...
    local name=$1
    shift
    /usr/bin/time -f "%e %M" -o "$DIR/t" "$ANONKIT" anonymize "$DIR/in.csv" -o "$DIR/out.csv" --qi $QI --k 1000 \
        --seed 1 --report "$DIR/r.json" "$@" 2>/dev/null
    read -r secs rss <"$DIR/t"
    /usr/bin/python3 - "$name" "$secs" "$rss" "$DIR/r.json" "$READ" "$WRITE" "$MEMORY" <<'PY'
import json, sys
name, secs, rss, path, read, write, memory = sys.argv[1:]
secs, rss, read, write = float(secs), int(rss) / 1024, float(read), float(write)
r = json.load(open(path))
line = f"{name:22s} {secs:7.2f} s  peak RSS {rss:6.1f} MB  classes {r['classes']}  GCP {r['metrics']['gcp']:.4f}"
io = r.get("out_of_core")
if io:
    m = io["model"]
    units = io["data_blocks"] or 1
    model_time = m["reads_T"] / units * read + m["writes_T"] / units * write
    budget = io["memory"] / 2**20
    line += (f"  (budget {budget:.0f} MB + 16: {'within' if rss <= budget + 16 else 'OVER'})\n"
             f"{'':22s} TM {io['tm_rows']} rows, F_CACHE {io['fcache']}, scans {io['scans']}, repartitions {io['repartitions']}"
             f" (model: height {m['height']}, repartitions_T {m['repartitions_T']})\n"
             f"{'':22s} blocks read {io['blocks_read']} written {io['blocks_written']}"
             f"  model reads_T {m['reads_T']} writes_T {m['writes_T']}  (|R| = {units} blocks; first scan wrote {io['first_scan_blocks_written']})\n"
             f"{'':22s} model I/O time {model_time:.2f} s; wall = {secs / model_time if model_time else float('inf'):.2f} x model I/O time;"
             f" phases: anonymize {r['phase_seconds']['anonymize']:.2f} s")
print(line)
PY
}
run "mondrian (in memory)"
run "rothko-t F_CACHE 1" --algorithm rothko-t --memory "$MEMORY" --fcache 1
run "rothko-t F_CACHE 8" --algorithm rothko-t --memory "$MEMORY" --fcache 8
