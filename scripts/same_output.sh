#!/usr/bin/env bash
# same_output.sh — proves that two anonkit binaries publish the same bytes.
#
# usage: bash scripts/same_output.sh BASE_BINARY NEW_BINARY [ROWS]
#
# Runs both binaries over the same cases — every algorithm, split criterion,
# privacy model and publishing mode on the Adult example; every algorithm on
# ROWS generated rows (default 100000; the issue-level proof uses 1000000);
# check, metrics, recode and sequential — and compares the published tables,
# rules files, reports (minus timings), stdout, stderr and exit status. Prints
# one line per case and exits 1 naming every case that differs.
set -uo pipefail
if [ $# -lt 2 ]; then sed -n '2,12p' "$0"; exit 2; fi
BASE=$(realpath "$1"); NEW=$(realpath "$2"); ROWS=${3:-100000}
KEEP=${KEEP:-}
SRC=$(cd "$(dirname "$0")/.." && pwd)
W=$(mktemp -d "${TMPDIR:-/tmp}/same-output-XXXXXX")
[ -n "$KEEP" ] || trap 'rm -rf "$W"' EXIT
A=$SRC/examples/adult
S=$SRC/tests/data/sequential
mkdir -p "$W/base" "$W/new" "$W/data"

# The generated table, made once by the base binary (generate is compared too).
"$BASE" generate --rows "$ROWS" --seed 7 -o "$W/data/gen.csv" >/dev/null 2>&1 || { echo "generate failed"; exit 2; }
GQI="--qi salary,commission,age,elevel,car,zipcode,hvalue,hyears,loan"

# name|arguments (run from inside the binary's own folder, outputs relative)
cases=(
  "adult-mondrian|anonymize --job $A/job.json -o out.csv --report r.json --rules rules.csv"
  "adult-mondrian-k5|anonymize --job $A/job.json -o out.csv --report r.json --k 5 --l 1"
  "adult-entropy|anonymize --job $A/job.json -o out.csv --report r.json --l-variant entropy --l 2"
  "adult-recursive|anonymize --job $A/job.json -o out.csv --report r.json --l-variant recursive --l 3 --c 2"
  "adult-keep-order|anonymize --job $A/job.json -o out.csv --report r.json --keep-order --seed 3"
  "adult-infogain|anonymize --job $A/job.json -o out.csv --report r.json --split infogain --class salary-class"
  "adult-publish-range|anonymize --job $A/job.json -o out.csv --report r.json --publish range"
  "adult-publish-mean|anonymize --job $A/job.json -o out.csv --report r.json --publish mean"
  "adult-threads1|anonymize --job $A/job.json -o out.csv --report r.json --threads 1"
  "adult-rothko-t|anonymize --job $A/job.json -o out.csv --report r.json --rules rules.csv --algorithm rothko-t --memory 4M"
  "adult-rothko-t-infogain|anonymize --job $A/job.json -o out.csv --report r.json --algorithm rothko-t --memory 4M --split infogain --class salary-class"
  "adult-rothko-s|anonymize --job $A/job.json -o out.csv --report r.json --algorithm rothko-s --memory 4M --seed 5"
  "adult-rothko-s-naive|anonymize --job $A/job.json -o out.csv --report r.json --algorithm rothko-s --memory 4M --test naive"
  "adult-incognito|anonymize --job $A/job.json -o out.csv --report r.json --algorithm incognito --l 1"
  "adult-incognito-supp|anonymize --job $A/job.json -o out.csv --report r.json --algorithm incognito --l 1 --suppression 0.02 --choose dm"
  "adult-incognito-cube|anonymize --job $A/job.json -o out.csv --report r.json --algorithm incognito --l 1 --incognito-variant cube"
  "adult-hilbert|anonymize --job $A/job.json -o out.csv --report r.json --algorithm hilbert --l-variant probabilistic"
  "adult-hilbert-fast|anonymize --job $A/job.json -o out.csv --report r.json --algorithm hilbert-fast --l-variant probabilistic"
  "adult-idistance|anonymize --job $A/job.json -o out.csv --report r.json --algorithm idistance --l-variant probabilistic"
  "adult-idistance-fast|anonymize --job $A/job.json -o out.csv --report r.json --algorithm idistance-fast --l-variant probabilistic"
  "adult-check|check ../adult-mondrian/out.csv --job $A/job.json"
  "adult-metrics|metrics $A/adult.csv ../adult-mondrian/out.csv --job $A/job.json"
  "adult-recode|recode --rules ../adult-mondrian/rules.csv $A/adult.csv -o out.csv"
  "generate|generate --rows 2000 --seed 3 -o out.csv"
  "generate-binary|generate --rows 2000 --seed 3 --format binary --salary normal -o out.csv"
  "seq-anonymity|sequential $S/t1.csv --previous $S/t2.csv -o out.csv --x Name --y Disease --anonymity 2 --class Class --hierarchy Job=$S/job.csv --hierarchy Name=$S/name.csv --keep-order --seed 1 --report r.json"
  "gen-mondrian|anonymize $W/data/gen.csv -o out.csv --report r.json $GQI --k 20 --seed 1"
  "gen-mondrian-regression|anonymize $W/data/gen.csv -o out.csv --report r.json $GQI --k 20 --seed 1 --split regression --target r7"
  "gen-rothko-t|anonymize $W/data/gen.csv -o out.csv --report r.json $GQI --k 20 --seed 1 --algorithm rothko-t --memory 8M"
  "gen-rothko-s|anonymize $W/data/gen.csv -o out.csv --report r.json $GQI --k 20 --seed 1 --algorithm rothko-s --memory 8M --seed 2"
  "gen-hilbert|anonymize $W/data/gen.csv -o out.csv --report r.json --qi salary,age,hvalue --k 20 --seed 1 --algorithm hilbert --l-variant probabilistic"
  "gen-hilbert-fast|anonymize $W/data/gen.csv -o out.csv --report r.json --qi salary,age,hvalue --k 20 --seed 1 --algorithm hilbert-fast"
  "gen-idistance|anonymize $W/data/gen.csv -o out.csv --report r.json --qi salary,age,hvalue --k 20 --seed 1 --algorithm idistance --l-variant probabilistic"
  "gen-idistance-fast|anonymize $W/data/gen.csv -o out.csv --report r.json --qi salary,age,hvalue --k 20 --seed 1 --algorithm idistance-fast"
  "gen-hilbert-memory|anonymize $W/data/gen.csv -o out.csv --report r.json --qi salary,age,hvalue --k 20 --seed 1 --algorithm hilbert --memory 4M"
)

# A report without its timings (and the paths, which name each side's folder).
strip_report() {
  python3 - "$1" <<'PY'
import json, sys
def clean(x):
    if isinstance(x, dict):
        return {k: clean(v) for k, v in x.items()
                if not ("second" in k or k in ("time", "seconds", "elapsed"))}
    if isinstance(x, list):
        return [clean(v) for v in x]
    return x
try:
    print(json.dumps(clean(json.load(open(sys.argv[1]))), indent=1, sort_keys=True))
except ValueError:
    print(open(sys.argv[1]).read())
PY
}

failed=()
for c in "${cases[@]}"; do
  name=${c%%|*}; args=${c#*|}
  for side in base new; do
    bin=$BASE; [ $side = new ] && bin=$NEW
    d="$W/$side/$name"; mkdir -p "$d"
    a=${args//BASEDIR/$W/$side}
    # shellcheck disable=SC2086
    (cd "$d" && "$bin" $a >stdout 2>stderr; echo $? >status)
    [ -f "$d/r.json" ] && strip_report "$d/r.json" >"$d/r.stripped" && rm "$d/r.json"
    # Timings in the human summary ("time 0.062 s") and metrics' seconds.
    sed -i -E 's/ in [0-9.]+ s$/ in T s/; s/(time|seconds?)[ :=]+[0-9.e+-]+( s)?/\1 T/g; s/"[a-z_]*seconds?": *[0-9.e+-]+/"S": T/g' "$d/stdout" "$d/stderr"
  done
  if diff -r "$W/base/$name" "$W/new/$name" >"$W/$name.diff" 2>&1; then
    st=$(cat "$W/base/$name/status")
    if [ "$st" = 0 ]; then echo "same  $name"; else echo "same  $name (both exit $st: $(head -c 100 "$W/base/$name/stderr"))"; fi
  else
    echo "DIFF  $name"; head -20 "$W/$name.diff" | sed 's/^/      /'
    failed+=("$name")
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "${#failed[@]} case(s) differ: ${failed[*]}"; exit 1
fi
echo "all ${#cases[@]} cases publish the same bytes ($ROWS generated rows)"
