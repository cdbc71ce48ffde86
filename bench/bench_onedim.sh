#!/usr/bin/env bash
# bench_onedim.sh — [Ghinita07] Figures 13, 14 and 16 re-run: GCP and time of Hilb,
# HilbFast, iDist, iDistFast and Mondrian side by side (Mondrian is the
# baseline measured in the same run; ratios are to Mondrian's GCP and times):
#   - real data: ../shared/data/mach2019_int (73,489 rows, the largest table
#     with 7+ QIs there; 7 categorical QIs with their ARX hierarchies),
#     k-anonymity for k = 10..100 and l-diversity (sensitive Q10A) for l = 2, 3;
#   - generated data (anonkit generate, [LeFevre07] Figure 7; QIs salary, commission,
#     age, elevel, car, zipcode, hvalue): GCP and time versus k (10..100,
#     N = 200,000 or MAX_ROWS if smaller), versus N (50,000 .. MAX_ROWS, k = 50)
#     and, with sensitive attribute car (20 values) and QIs without it, versus
#     l = 2..13 (probabilistic l-diversity; the Fast variants differ from
#     Hilb and iDist only in the k-anonymity DP, so l runs Hilb and iDist);
#   - large k: k = 1000 at the largest N (Hilb, HilbFast), where the DPs'
#     O(nk) work dominates;
#   - the external sort: Hilb at the largest N with --memory 1M, its runs and
#     blocks, against the in-memory run.
# Every output is proven with anonkit check. Each cell gives GCP, the best of
# REPEAT wall-clock and CPU times of the whole run (read, anonymize, write)
# and the best wall time of the anonymize phase alone (the algorithm: for the
# 1-D ones mapping, sorting and partitioning; from the report's
# phase_seconds). The end summary gives, per algorithm and sweep, the range of
# each ratio against Mondrian. Prints figures; never fails on time.
# usage: [REPEAT=3] bash bench/bench_onedim.sh [BUILD_DIR] [MAX_ROWS (default 1000000)] [DATA_DIR]
set -euo pipefail
BUILD=${1:-build}
MAX_ROWS=${2:-1000000}
DATA=${3:-$(cd "$(dirname "$0")/../.." && pwd)/shared/data}
ANONKIT=$(cd "$BUILD" && pwd)/anonkit
DIR=$(mktemp -d "${TMPDIR:-/tmp}/anonkit-bench-onedim.XXXXXX")
trap 'rm -rf "$DIR"' EXIT
ALGOS="mondrian hilbert hilbert-fast idistance idistance-fast"
RESULTS=$DIR/results.jsonl
: > "$RESULTS"

# row SWEEP LABEL CHECKARGS ALGOS ARGS...: anonymizes with every algorithm,
# proves each output with anonkit check, prints GCP, the best of REPEAT
# wall-clock times, the best of REPEAT CPU times (user + system of the
# process, less disturbed by other load on a shared machine) and the best
# anonymize-phase wall time, each with its ratio to the first algorithm of
# the row (mondrian), measured in the same run; appends them to RESULTS.
# Mondrian and the 1-D mappings may use several threads (--threads, default
# one per core), so a wall time can be below its CPU time.
cat > "$DIR/row.py" <<'PY'
import json, os, resource, subprocess, sys, time
anonkit, out, results, sweep, label, check = sys.argv[1:6] + [sys.argv[6].split()]
algos = sys.argv[7].split()
args = sys.argv[8:]
repeat = int(os.environ.get("REPEAT", "3"))
cells, base = [], None
for a in algos:
    wall = cpu = phase = float("inf")
    failed = None
    for _ in range(repeat):
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        r = subprocess.run([anonkit, "anonymize", *args, "--algorithm", a, "-o", out, "--report", out + ".json"],
                           capture_output=True, text=True)
        t1 = time.perf_counter()
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        if r.returncode != 0:
            failed = r.stderr.strip()[:80]
            break
        wall = min(wall, t1 - t0)
        cpu = min(cpu, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime))
        phase = min(phase, json.load(open(out + ".json"))["phase_seconds"]["anonymize"])
    if failed is not None:
        cells.append(f"{a}: failed ({failed})")
        continue
    c = subprocess.run([anonkit, "check", out, *check], capture_output=True, text=True)
    ok = "" if c.returncode == 0 else " NOT VERIFIED"
    gcp = json.load(open(out + ".json"))["metrics"]["gcp"]
    if base is None:
        base = (gcp, wall, cpu, phase)
    ratio = (gcp / base[0] if base[0] else float("nan"), wall / base[1], cpu / base[2], phase / base[3])
    cells.append(f"{a} GCP {gcp:.4f} ({ratio[0]:.2f}x) wall {wall:.2f} s ({ratio[1]:.2f}x) "
                 f"cpu {cpu:.2f} s ({ratio[2]:.2f}x) algo {phase:.2f} s ({ratio[3]:.2f}x){ok}")
    with open(results, "a") as f:
        f.write(json.dumps({"sweep": sweep, "label": label, "algo": a, "verified": not ok, "gcp": ratio[0],
                            "wall": ratio[1], "cpu": ratio[2], "phase": ratio[3]}) + "\n")
print(f"{label:>10}: " + " | ".join(cells), flush=True)
PY
row() { /usr/bin/python3 "$DIR/row.py" "$ANONKIT" "$DIR/out.csv" "$RESULTS" "$@"; }

echo "== real data: mach2019_int (73,489 rows, 7 categorical QIs), ratios against mondrian"
M=$DATA/mach2019_int
MQI=age,familysize,gender,married,race,religion,Q1A
MH=()
for a in ${MQI//,/ }; do MH+=(--hierarchy "$a=$M/mach2019_int_hierarchy_$a.csv"); done
for k in 10 25 50 100; do
    row "real k" "k=$k" "--qi $MQI --delimiter ; --k $k" "$ALGOS" "$M/mach2019_int.csv" --qi $MQI "${MH[@]}" \
        --delimiter ';' --k $k --seed 1
done
for l in 2 3; do
    row "real l" "l=$l" "--qi $MQI --delimiter ; --sensitive Q10A --l $l --l-variant probabilistic" \
        "mondrian hilbert idistance" "$M/mach2019_int.csv" --qi $MQI "${MH[@]}" --delimiter ';' \
        --sensitive Q10A --l $l --l-variant probabilistic --seed 1
done

QI=salary,commission,age,elevel,car,zipcode,hvalue
LQI=salary,commission,age,elevel,zipcode,hvalue,hyears
gen() { "$ANONKIT" generate --rows "$1" --seed 1 -o "$DIR/gen$1.csv" 2>/dev/null; }
N200=$((200000 < MAX_ROWS ? 200000 : MAX_ROWS))
gen "$N200"

echo "== generated, N = $N200: versus k ([Ghinita07] Figure 13)"
for k in 10 25 50 100; do
    row "gen k" "k=$k" "--qi $QI --k $k" "$ALGOS" "$DIR/gen$N200.csv" --qi $QI --k $k --seed 1
done

echo "== generated, k = 50: versus N ([Ghinita07] Figure 14)"
for n in 50000 200000 400000 1000000; do
    [ "$n" -le "$MAX_ROWS" ] || continue
    [ -f "$DIR/gen$n.csv" ] || gen "$n"
    row "gen N" "N=$n" "--qi $QI --k 50" "$ALGOS" "$DIR/gen$n.csv" --qi $QI --k 50 --seed 1
    [ "$n" = "$N200" ] || [ "$n" = "$MAX_ROWS" ] || rm -f "$DIR/gen$n.csv"
done

echo "== generated, N = $N200, sensitive car (20 values): versus l ([Ghinita07] Figure 16)"
for l in 2 5 9 13; do
    row "gen l" "l=$l" "--qi $LQI --sensitive car --l $l --l-variant probabilistic" "mondrian hilbert idistance" \
        "$DIR/gen$N200.csv" --qi $LQI --sensitive car --l $l --l-variant probabilistic --seed 1
done

echo "== generated, N = $MAX_ROWS: large k (the DPs' O(nk) work; beyond [Ghinita07]'s range)"
[ -f "$DIR/gen$MAX_ROWS.csv" ] || gen "$MAX_ROWS"
for k in 1000; do
    row "gen big k" "k=$k" "--qi $QI --k $k" "mondrian hilbert hilbert-fast" "$DIR/gen$MAX_ROWS.csv" --qi $QI --k $k --seed 1
done

echo "== external sort: hilbert, k = 50, N = $MAX_ROWS, in memory vs --memory 1M"
[ -f "$DIR/gen$MAX_ROWS.csv" ] || gen "$MAX_ROWS"
for mem in 0 1M; do
    memarg=()
    [ "$mem" = 0 ] || memarg=(--memory "$mem") # 0: no budget (--memory takes at least 1K)
    /usr/bin/time -f "%e s, peak RSS %M KB" "$ANONKIT" anonymize "$DIR/gen$MAX_ROWS.csv" -o "$DIR/ext.csv" --qi $QI \
        --k 50 --seed 1 --algorithm hilbert "${memarg[@]}" --report "$DIR/ext.json" 2> "$DIR/time.txt"
    /usr/bin/python3 - "$DIR/ext.json" "$mem" "$(tail -n 1 "$DIR/time.txt")" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
o = j["onedim"]
print(f"--memory {sys.argv[2]:>4}: {sys.argv[3]}; sort runs {o['sort_runs']}, merge passes {o['sort_merge_passes']}, "
      f"blocks written {o['blocks_written']}, read {o['blocks_read']} ({o['block_size']} B); GCP {j['metrics']['gcp']:.4f}")
PY
    [ "$mem" = 0 ] && mv "$DIR/ext.csv" "$DIR/ext-mem.csv"
done
cmp -s "$DIR/ext.csv" "$DIR/ext-mem.csv" && echo "same output in memory and on disk" || echo "OUTPUTS DIFFER"

echo "== summary: range (min-max) of each ratio against mondrian, per sweep"
/usr/bin/python3 - "$RESULTS" <<'PY'
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
sweeps = list(dict.fromkeys(r["sweep"] for r in rows))
for algo in ["hilbert", "hilbert-fast", "idistance", "idistance-fast"]:
    for s in sweeps:
        rs = [r for r in rows if r["algo"] == algo and r["sweep"] == s]
        if not rs:
            continue
        span = lambda key: f"{min(r[key] for r in rs):.2f}-{max(r[key] for r in rs):.2f}"
        bad = sum(not r["verified"] for r in rs)
        print(f"{algo:>14} {s:>7} ({len(rs)} points): GCP {span('gcp')}x, wall {span('wall')}x, cpu {span('cpu')}x, "
              f"algo {span('phase')}x" + (f", {bad} NOT VERIFIED" if bad else ""))
PY
