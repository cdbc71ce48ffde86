#!/usr/bin/env bash
# bench_incognito.sh — Incognito against its baselines ([LeFevre05] slides 44-47; the
# QID-size table of [LeFevre05]), then the time to find every k-minimal node of Adult,
# CUP and FARS (issue 8; ARX's Flash: 27 ms Adult, 29 ms CUP for one optimum).
#
# usage: bash bench/bench_incognito.sh [BUILD_DIR]   (default: build)
#
# Data: ../shared/data (ARX's tables with their hierarchies). Prints seconds
# (best of REPEAT runs of the search; reading the table is not included),
# nodes checked, scans and rollups per variant, and the ratio to the first
# variant of each run (the baseline measured in the same run). Never fails on
# time. Set REPEAT (default 3) and QIDS (default "3 4 5 6 7 8 9") to change.
set -u
BUILD=${1:-build}
HERE=$(cd "$(dirname "$0")/.." && pwd)
BIN=$HERE/$BUILD/bench_incognito
DATA=${DATA:-$HERE/../shared/data}
REPEAT=${REPEAT:-3}
QIDS=${QIDS:-"3 4 5 6 7 8 9"}
if [ ! -x "$BIN" ]; then
    echo "bench_incognito: build first (make build): $BIN missing" >&2
    exit 2
fi
if [ ! -d "$DATA/adult" ]; then
    echo "bench_incognito: no data at $DATA (set DATA=...)" >&2
    exit 0
fi

# hierarchies DIR PREFIX ATTR...: "ATTR=DIR/PREFIXATTR.csv" per attribute.
hierarchies() {
    local dir=$1 prefix=$2
    shift 2
    local a
    for a in "$@"; do printf '%s=%s/%s%s.csv\n' "$a" "$dir" "$prefix" "$a"; done
}

mapfile -t ADULT < <(hierarchies "$DATA/adult" adult_hierarchy_ sex age race marital-status education \
    native-country workclass occupation salary-class)
mapfile -t CUP < <(hierarchies "$DATA/cup" cup_hierarchy_ ZIP AGE GENDER INCOME STATE RAMNTALL NGIFTALL MINRAMNT)
mapfile -t FARS < <(hierarchies "$DATA/fars_subset" fars_hierarchy_ iage irace ideathmon ideathday isex ihispanic \
    istatenum iinjury)

echo "== [LeFevre05]'s table re-run: Adult (30,162 rows), QIs taken in file order, Bottom-Up vs Incognito"
for k in 2 10; do
    for n in $QIDS; do
        echo "-- k = $k, QID size $n"
        variants=bottom-up,bottom-up-norollup,basic,super-roots,cube,binary-search
        [ "$n" -ge 8 ] && variants=bottom-up,basic,super-roots,cube,binary-search # no-rollup: minutes at 8-9
        "$BIN" "$DATA/adult/adult.csv" ';' "$k" "$n" 1 "$variants" "${ADULT[@]}" | tail -n +2
    done
done

echo
echo "== every k-minimal node, k = 5, no suppression (baseline: Basic Incognito; then bottom-up once, CUP's takes ~20 s)"
for set in adult cup fars; do
    case $set in
    adult) args=("$DATA/adult/adult.csv" ';' 5 0) h=("${ADULT[@]}") ;;
    cup) args=("$DATA/cup/cup.csv" ';' 5 0) h=("${CUP[@]}") ;;
    fars) args=("$DATA/fars_subset/fars_subset.csv" ';' 5 0) h=("${FARS[@]}") ;;
    esac
    "$BIN" "${args[@]}" "$REPEAT" basic,super-roots,cube "${h[@]}"
    "$BIN" "${args[@]}" 1 bottom-up "${h[@]}" | tail -n 1
done
