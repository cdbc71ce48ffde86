#!/usr/bin/env bash
# bench_closeness.sh — t-closeness ([Li07]) beside k-anonymity alone: time and
# GCP for t in {0.1, 0.2, 0.3} with Mondrian, Rothko-T (--memory 64M) and
# Incognito, and the ratio of each run's time and GCP to the k-only run of the
# same algorithm in the same script, on
#   - Adult (30,162 rows, 8 QIs): sensitive occupation under its hierarchy
#     (hierarchical distance), then sensitive salary-class (equal distance);
#   - ROWS generated rows (default 1,000,000; `anonkit generate`), 8 QIs,
#     sensitive salary (ordered distance); Incognito is not run there (the
#     generated QIs have no hierarchies).
# Every published file is proven by `anonkit check`. Prints a table; never
# fails on time.
# usage: bash bench/bench_closeness.sh [BUILD_DIR] [ROWS]
set -euo pipefail
BUILD=${1:-build}
ROWS=${2:-1000000}
ANONKIT=$(realpath "$BUILD/anonkit")
SRC=$(cd "$(dirname "$0")/.." && pwd)
ADULT=$SRC/../shared/data/adult # beside the repository; in a worktree one level further up
[ -f "$ADULT/adult.csv" ] || ADULT=$SRC/../../shared/data/adult
[ -f "$ADULT/adult.csv" ] || ADULT=$SRC/examples/adult
DIR=$(mktemp -d "${TMPDIR:-/tmp}/anonkit-bench-closeness.XXXXXX")
trap 'rm -rf "$DIR"' EXIT
K=${K:-5}
TS="0.1 0.2 0.3"

# run NAME ARGS...: one anonymization, timed; prints "seconds gcp classes" into $DIR/NAME.res
run() {
    local name=$1
    shift
    local t0 t1
    t0=$(date +%s.%N)
    if ! "$ANONKIT" anonymize "$@" -o "$DIR/$name.csv" --report "$DIR/$name.json" --seed 1 >/dev/null 2>"$DIR/$name.err"; then
        echo "$name: failed: $(head -c 300 "$DIR/$name.err")" >&2
        echo "- - -" >"$DIR/$name.res"
        return 0
    fi
    t1=$(date +%s.%N)
    /usr/bin/python3 - "$DIR/$name.json" "$t0" "$t1" >"$DIR/$name.res" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
print(f"{float(sys.argv[3]) - float(sys.argv[2]):.3f} {j['metrics']['gcp']:.4f} {j['classes']}")
PY
}

# check NAME ARGS...: the published file must satisfy the model
check() {
    local name=$1
    shift
    [ -f "$DIR/$name.csv" ] || return 0
    "$ANONKIT" check "$DIR/$name.csv" "$@" >/dev/null 2>"$DIR/$name.check" ||
        echo "$name: check failed: $(head -c 300 "$DIR/$name.check")" >&2
}

# table DATASET ALGOS: the rows of one data set, ratios to its k-only run
table() {
    local data=$1 algos=$2
    printf '%-10s %-10s %-6s %9s %8s %8s %9s %9s\n' data algorithm t seconds GCP classes time/k GCP/k
    for a in $algos; do
        read -r s0 g0 c0 <"$DIR/$data-$a-k.res"
        printf '%-10s %-10s %-6s %9s %8s %8s %9s %9s\n' "$data" "$a" "k only" "$s0" "$g0" "$c0" 1.00 1.00
        for t in $TS; do
            read -r s g c <"$DIR/$data-$a-$t.res"
            /usr/bin/python3 -c 'import sys
d, a, t, s, g, c, s0, g0 = sys.argv[1:]
r = lambda x, y: f"{float(x) / float(y):.2f}" if x != "-" and y != "-" and float(y) > 0 else "-"
print(f"{d:10s} {a:10s} {t:6s} {s:>9s} {g:>8s} {c:>8s} {r(s, s0):>9s} {r(g, g0):>9s}")' \
                "$data" "$a" "$t" "$s" "$g" "$c" "$s0" "$g0"
        done
    done
}

algo_args() {
    case $1 in
    mondrian) echo "--algorithm mondrian" ;;
    rothko-t) echo "--algorithm rothko-t --memory 64M" ;;
    incognito) echo "--algorithm incognito" ;;
    esac
}

echo "== Adult ($ADULT), k = $K"
QALL=(sex age race marital-status education native-country workclass occupation salary-class)
for sens in occupation salary-class; do
    qi=()
    hier=()
    for a in "${QALL[@]}"; do
        [ "$a" = "$sens" ] && continue
        qi+=("$a")
    done
    QI=$(IFS=,; echo "${qi[*]}")
    for a in "${QALL[@]}"; do hier+=(--hierarchy "$a=$ADULT/adult_hierarchy_$a.csv"); done
    data=adult-$sens
    for algo in mondrian rothko-t incognito; do
        num=()
        [ "$algo" != incognito ] && num=(--numeric age)
        base=("$ADULT/adult.csv" --delimiter ';' --qi "$QI" "${hier[@]}" "${num[@]}" --sensitive "$sens" --k "$K"
              $(algo_args $algo))
        run "$data-$algo-k" "${base[@]}"
        for t in $TS; do
            run "$data-$algo-$t" "${base[@]}" --t "$t"
            check "$data-$algo-$t" --delimiter ';' --qi "$QI" --sensitive "$sens" --k "$K" --t "$t" \
                --hierarchy "$sens=$ADULT/adult_hierarchy_$sens.csv"
        done
    done
    echo "-- sensitive $sens (hierarchical distance: its hierarchy is given)"
    table "$data" "mondrian rothko-t incognito"
done

echo "== $ROWS generated rows (anonkit generate --seed 7), 8 QIs, sensitive salary (ordered distance), k = $K"
"$ANONKIT" generate --rows "$ROWS" --seed 7 -o "$DIR/gen.csv" >/dev/null 2>&1
GQI=commission,age,elevel,car,zipcode,hvalue,hyears,loan
for algo in mondrian rothko-t; do
    base=("$DIR/gen.csv" --qi "$GQI" --sensitive salary --k "$K" $(algo_args $algo))
    run "gen-$algo-k" "${base[@]}"
    for t in $TS; do
        run "gen-$algo-$t" "${base[@]}" --t "$t" --t-distance ordered
        check "gen-$algo-$t" --qi "$GQI" --sensitive salary --k "$K" --t "$t" --t-distance ordered
        rm -f "$DIR/gen-$algo-$t.csv"
    done
    rm -f "$DIR/gen-$algo-k.csv"
done
table gen "mondrian rothko-t"
