#!/usr/bin/env bash
# bench_rothko_s.sh — Rothko-S (000 §3, §4, §5.6).
# (a) 000 Figure 28 re-run on FIG28_ROWS generated rows (bench/rothko_s_figure28.py).
# (b) ROWS generated rows (000 Figure 7, the 9 QIs), --memory MEMORY, k = 1000:
#     Rothko-S beside Rothko-T (F_CACHE 1) and the in-memory Mondrian on the same
#     input — wall time, peak resident memory against the budget, repartitions
#     and blocks read/written against 000 §4 (repartitions_S, reads_S, writes_S),
#     and the run as a multiple of the model's I/O time, with one sequential
#     write (dd, fsync) and one read of a file the size of the tuple data
#     measured in the same run, the read both from the page cache (as the spill
#     files are read here) and from the device (O_DIRECT).
# Prints figures and ratios; never fails on time.
# usage: bash bench/bench_rothko_s.sh [BUILD_DIR] [ROWS] [MEMORY] [FIG28_ROWS (0: skip (a))]
set -euo pipefail
BUILD=${1:-build}
ROWS=${2:-10000000}
MEMORY=${3:-64M}
FIG28_ROWS=${4:-100000}
ANONKIT=$BUILD/anonkit
SRC=$(cd "$(dirname "$0")/.." && pwd)
DIR=$(mktemp -d "${TMPDIR:-/tmp}/anonkit-bench-rs.XXXXXX")
trap 'rm -rf "$DIR"' EXIT

if [ "$FIG28_ROWS" -gt 0 ]; then # (0: skip part a)
    /usr/bin/python3 "$SRC/bench/rothko_s_figure28.py" "$ANONKIT" "$FIG28_ROWS" "$DIR"
    echo
fi

QI=salary,commission,age,elevel,car,zipcode,hvalue,hyears,loan
"$ANONKIT" generate --rows "$ROWS" --seed 1 -o - 2>/dev/null | cut -d, -f1-9 >"$DIR/in.csv"
echo "(b) input: $ROWS rows, $(( $(stat -c %s "$DIR/in.csv") / 1000000 )) MB of CSV, QIs $QI, k = 1000, --memory $MEMORY"
BYTES=$((ROWS * 44)) # tuples: 9 codes, sensitive, class
/usr/bin/time -f "%e" -o "$DIR/t" dd if=/dev/zero of="$DIR/probe" bs=256K count=$(( (BYTES + 262143) / 262144 )) conv=fsync status=none
WRITE=$(cat "$DIR/t")
/usr/bin/time -f "%e" -o "$DIR/t" cat "$DIR/probe" >/dev/null
READ=$(cat "$DIR/t")
if /usr/bin/time -f "%e" -o "$DIR/t" dd if="$DIR/probe" of=/dev/null bs=256K iflag=direct status=none 2>/dev/null; then
    DIRECT=$(cat "$DIR/t")
else
    DIRECT=0 # the file system refuses O_DIRECT
fi
rm -f "$DIR/probe"
printf "one write of the tuple data (dd, fsync): %.2f s; one read: %.2f s cached, %.2f s from the device (O_DIRECT)  (%d MB)\n" \
    "$WRITE" "$READ" "$DIRECT" $((BYTES / 1000000))

run() { # NAME ARGS...
    local name=$1
    shift
    if ! /usr/bin/time -f "%e %M" -o "$DIR/t" "$ANONKIT" anonymize "$DIR/in.csv" -o "$DIR/out.csv" --qi $QI --k 1000 \
        --seed 1 --report "$DIR/r.json" "$@" 2>"$DIR/err"; then
        echo "$name: failed: $(tail -1 "$DIR/err")"
        return
    fi
    read -r secs rss <"$DIR/t"
    "$ANONKIT" check "$DIR/out.csv" --qi $QI --k 1000 >/dev/null 2>&1 || echo "$name: the verifier refused the output"
    /usr/bin/python3 - "$name" "$secs" "$rss" "$DIR/r.json" "$READ" "$WRITE" "$DIRECT" "$DIR/secs.txt" <<'PY'
import json, sys
name, secs, rss, path, read, write, direct, log = sys.argv[1:]
secs, rss, read, write, direct = float(secs), int(rss) / 1024, float(read), float(write), float(direct)
r = json.load(open(path))
with open(log, "a") as f:
    f.write(f"{name}\t{secs}\n")
line = f"{name:22s} {secs:7.2f} s  peak RSS {rss:6.1f} MB  classes {r['classes']}  GCP {r['metrics']['gcp']:.4f}"
io = r.get("out_of_core")
if io:
    m = io["model"]
    s = "repartitions_S" in m
    reads, writes, reps = (m["reads_S"], m["writes_S"], m["repartitions_S"]) if s else (m["reads_T"], m["writes_T"], m["repartitions_T"])
    units = io["data_blocks"] or 1
    cached = reads / units * read + writes / units * write
    device = reads / units * direct + writes / units * write
    budget = io["memory"] / 2**20
    line += f"  (budget {budget:.0f} MB + 16: {'within' if rss <= budget + 16 else 'OVER'})\n"
    line += f"{'':22s} scans {io['scans']}, repartitions {io['repartitions']} (model: {reps})"
    if s:
        line += (f", sample {io['sample_rows']} rows, growth phases {io['growth_phases']}, pruned nodes {io['pruned_nodes']},"
                 f" no confident split {io['no_confident_split']}")
    line += (f"\n{'':22s} blocks read {io['blocks_read']} written {io['blocks_written']}  model reads {reads} writes {writes}"
             f"  (|R| = {units} blocks: read {io['blocks_read'] / units:.2f} times, written {io['blocks_written'] / units:.2f} times;"
             f" the first scan wrote {io['first_scan_blocks_written']})\n"
             f"{'':22s} model I/O time {cached:.2f} s cached / {device:.2f} s from the device;"
             f" wall = {secs / cached if cached else float('inf'):.2f} x / {secs / device if device else float('inf'):.2f} x;"
             f" phases: anonymize {r['phase_seconds']['anonymize']:.2f} s")
print(line)
PY
}
run "mondrian (in memory)"
run "rothko-t F_CACHE 1" --algorithm rothko-t --memory "$MEMORY" --fcache 1
run "rothko-s" --algorithm rothko-s --memory "$MEMORY"
/usr/bin/python3 - "$DIR/secs.txt" <<'PY'
import sys
t = dict(l.rstrip("\n").split("\t") for l in open(sys.argv[1]))
if len(t) < 3:
    sys.exit(0)
s, tt, m = float(t["rothko-s"]), float(t["rothko-t F_CACHE 1"]), float(t["mondrian (in memory)"])
print(f"rothko-s / rothko-t = {s / tt:.2f}; rothko-s / in-memory mondrian = {s / m:.2f}")
PY
