#!/usr/bin/env bash
# risk_compare.sh — `anonkit risk` of two builds on the same inputs must
# write the same bytes (summary and --json): Adult and generated tables with
# several QI sets and options (weights, a population, a sampling fraction, a
# published file with suppressed rows, SUDA2, a file large enough to be read
# in two pieces). For checking a change to how the classes are formed
# against the build before it; prints each case and exits 1 on a difference.
#
# usage: bash tests/risk_compare.sh OLD_ANONKIT NEW_ANONKIT [ROWS]   (ROWS=300000)
set -u
OLD=$1
NEW=$2
ROWS=${3:-300000}
HERE=$(cd "$(dirname "$0")" && pwd)
ADULT=$HERE/../examples/adult/adult.csv
T=$(mktemp -d "${TMPDIR:-/tmp}/risk_compare.XXXXXX")
trap 'rm -rf "$T"' EXIT
fail=0

same() { # NAME ARGS...: runs both builds with ARGS and compares stdout, stderr, exit status and the JSON
    local name=$1
    shift
    "$OLD" risk "$@" --json "$T/old.json" >"$T/old.out" 2>"$T/old.err"
    echo "rc $?" >>"$T/old.out"
    "$NEW" risk "$@" --json "$T/new.json" >"$T/new.out" 2>"$T/new.err"
    echo "rc $?" >>"$T/new.out"
    touch "$T/old.json" "$T/new.json"
    if cmp -s "$T/old.out" "$T/new.out" && cmp -s "$T/old.err" "$T/new.err" && cmp -s "$T/old.json" "$T/new.json"; then
        echo "same: $name"
    else
        echo "DIFFERENT: $name"
        diff "$T/old.err" "$T/new.err" | head -n 5
        fail=1
    fi
    rm -f "$T/old.json" "$T/new.json"
}

AQ=age,sex,race,marital-status,education,native-country,workclass,occupation
same "Adult, 8 QIs" "$ADULT" --delimiter ';' --qi "$AQ"
same "Adult, 8 QIs, sampling fraction" "$ADULT" --delimiter ';' --qi "$AQ" --sampling-fraction 0.01
same "Adult, 3 QIs, population size" "$ADULT" --delimiter ';' --qi age,sex,race --population-size 1000000
same "Adult, SUDA2 M=3" "$ADULT" --delimiter ';' --qi age,sex,race,workclass --suda 3
same "Adult, sensitive" "$ADULT" --delimiter ';' --qi age,sex --sensitive occupation
same "Adult as its own population" "$ADULT" --delimiter ';' --qi "$AQ" --population "$ADULT"

"$NEW" generate --rows "$ROWS" --seed 7 -o "$T/gen.csv" 2>/dev/null
G9=salary,commission,age,elevel,car,zipcode,hvalue,hyears,loan
same "generated, 9 QIs" "$T/gen.csv" --qi "$G9"
same "generated, 3 QIs" "$T/gen.csv" --qi age,elevel,car
same "generated, 1 QI" "$T/gen.csv" --qi zipcode
same "generated, 4 QIs, weights" "$T/gen.csv" --qi age,elevel,car,zipcode --weight hyears
same "generated, 2 QIs, weights, population size" "$T/gen.csv" --qi elevel,car --weight hyears --population-size 1e9
same "generated, 5 QIs, sampling fraction" "$T/gen.csv" --qi age,elevel,car,zipcode,hyears --sampling-fraction 0.3
same "generated as its own population" "$T/gen.csv" --qi age,elevel,car,zipcode --population "$T/gen.csv"
head -n 1000 "$T/gen.csv" >"$T/small.csv"
same "population smaller than the sample" "$T/gen.csv" --qi age,elevel --population "$T/small.csv"
{ head -n 1 "$T/gen.csv"; tail -n +1001 "$T/gen.csv"; } >"$T/part.csv"
same "population missing a class" "$T/gen.csv" --qi age,elevel,car,zipcode --population "$T/part.csv"

# a published file: some rows all '*' (suppressed when few enough), a column generalized
python3 - "$T/gen.csv" "$T/pub.csv" <<'PY'
import sys
rows = open(sys.argv[1]).read().splitlines()
out = [rows[0]]
for i, r in enumerate(rows[1:]):
    f = r.split(',')
    if i % 97 == 0:
        f[2], f[3], f[4] = '*', '*', '*'
    else:
        f[2] = str(int(f[2]) // 10 * 10) + '-' + str(int(f[2]) // 10 * 10 + 9)
    out.append(','.join(f))
open(sys.argv[2], 'w').write('\n'.join(out) + '\n')
PY
same "published, suppression allowance" "$T/pub.csv" --qi age,elevel,car --published --suppression 0.05
same "published, allowance too small" "$T/pub.csv" --qi age,elevel,car --published --suppression 0.001
same "published, weights" "$T/pub.csv" --qi age,elevel,car --published --suppression 0.05 --weight hyears
# quoted fields (the two-piece read gives up on them) and a bad weight late in the file
sed '5000s/^\([0-9]*\),/"\1",/' "$T/gen.csv" >"$T/quoted.csv"
same "quoted field" "$T/quoted.csv" --qi salary,age,elevel
sed '$s/,[0-9]*,\([0-9]*\),\([0-9]*\),\([A-Z]\)/,x,\1,\2,\3/' "$T/gen.csv" >"$T/badw.csv"
same "bad weight on the last line" "$T/badw.csv" --qi age,elevel --weight hyears
exit $fail
