#!/usr/bin/env bash
# bench_rothko.sh — Rothko-T ([LeFevre07] §2, §4, §5.3-5.4) and Rothko-S ([LeFevre07] §3, §4)
# on generated data ([LeFevre07] Figure 7, the 9 QIs): `--memory 64M`, k = 1000,
# Rothko-T with F_CACHE 1 and 8, Rothko-S with the largest sample. Prints wall
# time, peak resident memory against the budget, blocks read and written against
# the I/O model of [LeFevre07] §4, and — measured in the same run on a file the size of
# the tuple data, in the folder the spill files go to — the cost of the model's
# block reads and writes two ways:
#   cached: one read through the page cache (cat of a file just written, as the
#           spill files are mostly read here) and one write (dd, fsync);
#   direct: one read and one write with O_DIRECT (dd iflag/oflag=direct), the
#           device's own sequential speed, which the page cache hides.
# The run is stated as a multiple of the model's I/O time under each, reads x
# (read time per block) + writes x (write time per block), with reads_T/writes_T
# for Rothko-T and reads_S/writes_S for Rothko-S, and of its own
# blocks at device speed. Probes and the Rothko-S run are repeated REPEAT
# times (default 3): the best and median runs against the best probes, and
# the median run against the median probes (the device's speed varies from
# one probe to the next on a shared machine). The
# in-memory Mondrian on the same input is the baseline. Never fails on time.
# usage: [REPEAT=3] bash bench/bench_rothko.sh [BUILD_DIR] [ROWS] [MEMORY]
set -euo pipefail
BUILD=${1:-build}
ROWS=${2:-10000000}
MEMORY=${3:-64M}
ANONKIT=$BUILD/anonkit
DIR=$(mktemp -d "${TMPDIR:-/tmp}/anonkit-bench.XXXXXX")
trap 'rm -rf "$DIR"' EXIT
: >"$DIR/secs.txt"
QI=salary,commission,age,elevel,car,zipcode,hvalue,hyears,loan

"$ANONKIT" generate --rows "$ROWS" --seed 1 -o - 2>/dev/null | cut -d, -f1-9 >"$DIR/in.csv"
echo "load average $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores (other work on the machine inflates every figure)"
echo "input: $ROWS rows, $(( $(stat -c %s "$DIR/in.csv") / 1000000 )) MB of CSV, QIs $QI, k = 1000"

# the model's unit costs, on a file the size of the tuple data (9 codes, sensitive, class: 44 bytes a row)
BYTES=$((ROWS * 44))
BLOCKS=$(( (BYTES + 262143) / 262144 ))
secs() { /usr/bin/time -f "%e" -o "$DIR/t" "$@" >/dev/null && cat "$DIR/t"; }
least() { printf "%s\n" "$@" | sort -g | head -1; }
median() { printf "%s\n" "$@" | sort -g | awk '{v[NR] = $1} END {print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
# each probe REPEAT times, the fastest kept: the device at its best (the run is measured the same way)
REPEAT=${REPEAT:-3}
W=() R=() DW=() DR=()
for _ in $(seq "$REPEAT"); do
    W+=("$(secs dd if=/dev/zero of="$DIR/probe" bs=256K count=$BLOCKS conv=fsync status=none)")
    R+=("$(secs cat "$DIR/probe")")
    if DW1=$(secs dd if=/dev/zero of="$DIR/probe.direct" bs=256K count=$BLOCKS oflag=direct status=none 2>/dev/null) &&
       DR1=$(secs dd if="$DIR/probe.direct" of=/dev/null bs=256K iflag=direct status=none 2>/dev/null); then
        DW+=("$DW1") DR+=("$DR1")
    else
        DW+=(0) DR+=(0) # the file system refuses O_DIRECT (tmpfs): no device figures
    fi
    rm -f "$DIR/probe" "$DIR/probe.direct"
done
WRITE=$(least "${W[@]}") READ=$(least "${R[@]}") DWRITE=$(least "${DW[@]}") DREAD=$(least "${DR[@]}")
MDWRITE=$(median "${DW[@]}") MDREAD=$(median "${DR[@]}") # the device as it mostly was
echo "probes, best of $REPEAT: direct write ${DW[*]} s, direct read ${DR[*]} s"
rm -f "$DIR/probe" "$DIR/probe.direct"
printf "I/O of the tuple data (%d MB, %d blocks of 256 KiB) in %s:\n" $((BYTES / 1000000)) $BLOCKS "$(dirname "$DIR")"
printf "  cached: write %.2f s (dd, fsync), read %.2f s (cat, page cache)\n" "$WRITE" "$READ"
if [ "$DWRITE" != 0 ]; then
    printf "  direct: write %.2f s (dd oflag=direct), read %.2f s (dd iflag=direct): %.0f / %.0f MB/s\n" "$DWRITE" "$DREAD" \
        "$(echo "$BYTES / 1000000 / ($DWRITE + 0.001)" | bc -l)" "$(echo "$BYTES / 1000000 / ($DREAD + 0.001)" | bc -l)"
else
    echo "  direct: O_DIRECT refused here, no device figures"
fi

run() { # NAME ARGS...
    local name=$1
    shift
    # a fresh output file each run: replacing the last run's costs the kernel
    # its pages, and its dirty pages would throttle this run's writes
    rm -f "$DIR/out.csv"
    sync
    if ! /usr/bin/time -f "%e %M" -o "$DIR/t" "$ANONKIT" anonymize "$DIR/in.csv" -o "$DIR/out.csv" --qi $QI --k 1000 \
        --seed 1 --report "$DIR/r.json" "$@" 2>"$DIR/err"; then
        echo "$name: failed: $(tail -1 "$DIR/err")"
        return
    fi
    read -r secs rss <"$DIR/t"
    "$ANONKIT" check "$DIR/out.csv" --qi $QI --k 1000 >/dev/null 2>&1 || echo "$name: the verifier refused the output"
    /usr/bin/python3 - "$name" "$secs" "$rss" "$DIR/r.json" "$BLOCKS" "$READ" "$WRITE" "$DREAD" "$DWRITE" "$MDREAD" "$MDWRITE" "$DIR/secs.txt" <<'PY'
import json, sys
name, secs, rss, path, blocks, read, write, dread, dwrite, mdread, mdwrite, log = sys.argv[1:]
secs, rss, blocks = float(secs), int(rss) / 1024, int(blocks)
r = json.load(open(path))
line = f"{name:22s} {secs:7.2f} s  peak RSS {rss:6.1f} MB  classes {r['classes']}  GCP {r['metrics']['gcp']:.4f}"
io = r.get("out_of_core")
if io:
    m = io["model"]
    scale = io["block_size"] / 262144  # the probe's blocks are 256 KiB
    def cost(reads, writes, rd, wr):  # seconds for that many blocks at the probe's per-block times
        return (reads * float(rd) + writes * float(wr)) / blocks * scale
    def times(t):
        return f"{secs / t:.2f} x" if t > 0 else "n/a"
    s = "S" if "reads_S" in m else "T"
    reads, writes = m["reads_" + s], m["writes_" + s]
    cached, direct = cost(reads, writes, read, write), cost(reads, writes, dread, dwrite)
    with open(log, "a") as f:
        f.write(f"{name}\t{secs}\t{direct}\t{cost(reads, writes, mdread, mdwrite)}\n")
    own = cost(io["blocks_read"], io["blocks_written"], dread, dwrite)
    budget = io["memory"] / 2**20
    bpt = io["blocks_written"] * io["block_size"] / io["rows_written"] if io.get("rows_written") else 0
    line += (f"  (budget {budget:.0f} MB + 16: {'within' if rss <= budget + 16 else 'OVER'})\n"
             f"{'':22s} TM {io['tm_rows']} rows, scans {io['scans']}, repartitions {io['repartitions']}"
             + (f", F_CACHE {io['fcache']} (model: height {m['height']}, repartitions_T {m['repartitions_T']})\n" if s == "T" else
                f" (model: repartitions_S {m['repartitions_S']}), sample {io['sample_rows']} rows, growth phases"
                f" {io['growth_phases']}, pruned nodes {io['pruned_nodes']}, no confident split {io['no_confident_split']}\n") +
             f"{'':22s} blocks read {io['blocks_read']} written {io['blocks_written']}"
             f"  model reads_{s} {reads} writes_{s} {writes}  (|R| = {io['data_blocks']} blocks of 44-byte tuples;"
             f" repartitioned tuples took {bpt:.1f} bytes; first scan wrote {io['first_scan_blocks_written']})\n"
             f"{'':22s} model I/O time: cached {cached:.2f} s, direct {direct:.2f} s;"
             f" wall = {times(cached)} the cached, {times(direct)} the direct model I/O time\n"
             f"{'':22s} this run's own blocks at direct speed {own:.2f} s (wall = {times(own)});"
             f" phases: anonymize {r['phase_seconds']['anonymize']:.2f} s"
             f" (of which the first scan {io['first_scan_seconds']:.2f} s, in {io['first_scan_pieces']} piece(s))")
    if "stage_seconds" in io:
        line += f"\n{'':22s} stages: " + ", ".join(f"{k.replace('_', ' ')} {v:.2f} s" for k, v in io["stage_seconds"].items())
print(line)
PY
}
run "mondrian (in memory)"
run "rothko-t F_CACHE 1" --algorithm rothko-t --memory "$MEMORY" --fcache 1
run "rothko-t F_CACHE 8" --algorithm rothko-t --memory "$MEMORY" --fcache 8
for _ in $(seq "$REPEAT"); do run "rothko-s" --algorithm rothko-s --memory "$MEMORY"; done
/usr/bin/python3 - "$DIR/secs.txt" <<'PY'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    name, secs, direct, mdirect = line.split("\t")
    runs.setdefault(name, []).append((float(secs), float(direct), float(mdirect)))
if "rothko-s" in runs:
    walls = sorted(w for w, _, _ in runs["rothko-s"])
    direct = runs["rothko-s"][0][1]
    print(f"rothko-s, {len(walls)} runs: best {walls[0]:.2f} s, median {statistics.median(walls):.2f} s;"
          f" the model's I/O at the best direct speed {direct:.2f} s:"
          f" best = {walls[0] / direct:.2f} x, median = {statistics.median(walls) / direct:.2f} x" if direct > 0 else "")
    mdirect = runs["rothko-s"][0][2]
    if mdirect > 0:
        print(f"  against the median probes, the model's I/O {mdirect:.2f} s: median = {statistics.median(walls) / mdirect:.2f} x")
    ts = [w for k, v in runs.items() if k.startswith("rothko-t") for w, _, _ in v]
    if ts:
        print(f"rothko-s (best) / the faster rothko-t = {walls[0] / min(ts):.2f}")
PY
