#!/usr/bin/env bash
# cli_sequential.sh — command-line cases of `anonkit sequential` ([Wang06]): the
# Table 1 example, the unsatisfiable case (message, exit 1, nothing written),
# usage errors, a value missing from a hierarchy (file:line), the report.
#
# usage: bash tests/cli_sequential.sh PATH/TO/anonkit SOURCE_DIR
set -u
if [ $# -ne 2 ]; then
    echo "usage: bash $0 PATH/TO/anonkit SOURCE_DIR" >&2
    exit 2
fi
BIN=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
SRC=$(cd "$2" && pwd)
D=$SRC/tests/data/sequential
PY=/usr/bin/python3
T=$(mktemp -d "${TMPDIR:-/tmp}/anonkit-cli-seq.XXXXXX") || exit 2
trap 'rm -rf "$T"' EXIT
pass=0 failn=0
ok() { echo "ok - $1"; pass=$((pass + 1)); }
bad() { echo "not ok - $1"; shift; for l in "$@"; do echo "#   $l"; done; failn=$((failn + 1)); }
H="--hierarchy Job=$D/job.csv --hierarchy Name=$D/name.csv"

# Table 1, X = {Name}, Y = {Disease}, Job joins the releases: 2-anonymity holds
"$BIN" sequential "$D/t1.csv" --previous "$D/t2.csv" -o "$T/out.csv" --x Name --y Disease --anonymity 2 \
    --class Class $H --keep-order --report "$T/r.json" 2>"$T/err"
rc=$?
if [ $rc -eq 0 ] && [ "$(wc -l <"$T/out.csv")" -eq 6 ] &&
    "$PY" -c 'import json,sys; j=json.load(open(sys.argv[1])); sys.exit(0 if j["A_Y(X)"]>=2 and "Name" in j["cut"] else 1)' "$T/r.json"; then
    ok "table 1: (Name, Disease)-anonymity 2 over the join, report with cut and A_Y(X)"
else
    bad "table 1 anonymity" "rc=$rc" "$(cat "$T/err")"
fi

# X holds both copies of Job: T2's Clerk row carries HIV only, so nothing can reach 2
"$BIN" sequential "$D/t1.csv" --previous "$D/t2.csv" -o "$T/no.csv" --x Name,Job --y Disease --anonymity 2 \
    --class Class $H 2>"$T/err"
rc=$?
if [ $rc -eq 1 ] && grep -q "Corollary 4.2" "$T/err" && [ ! -e "$T/no.csv" ]; then
    ok "unsatisfiable: exit 1, Corollary 4.2 named, nothing written"
else
    bad "unsatisfiable" "rc=$rc" "$(cat "$T/err")"
fi

# linkability with sensitive values against a generalized earlier release
"$BIN" sequential "$D/t1.csv" --previous "$D/t2g.csv" -o "$T/l.csv" --x Name,Job --y Disease --linkability 0.7 \
    --sensitive-values HIV --score distortion $H --report "$T/l.json" 2>"$T/err"
rc=$?
if [ $rc -eq 0 ] && "$PY" -c 'import json,sys; j=json.load(open(sys.argv[1])); sys.exit(0 if j["L_Y(X)"]<=0.7 else 1)' "$T/l.json"; then
    ok "linkability 0.7 of HIV against a generalized release"
else
    bad "linkability" "rc=$rc" "$(cat "$T/err")"
fi

# distortion per record ([Wang06] §6): the report, `anonkit metrics` on the published file and a
# count made here from the published texts agree
"$PY" - "$T" <<'PY'
import random, sys
rng = random.Random(7)
names, jobs = ['Alice', 'Bob', 'Cathy'], ['Banker', 'Clerk', 'Driver', 'Engineer']
with open(sys.argv[1] + '/d1.csv', 'w') as f:
    f.write('Name,Job,Age,Class\n')
    for i in range(80):
        age = rng.randint(20, 60)
        f.write('%s,%s,%d,%s\n' % (rng.choice(names), rng.choice(jobs), age, 'c1' if age + rng.randint(0, 15) < 45 else 'c2'))
with open(sys.argv[1] + '/d2.csv', 'w') as f:
    f.write('Job,Disease\n')
    for i in range(12):
        f.write('%s,%s\n' % (rng.choice(jobs), rng.choice(['Flu', 'HIV', 'Cancer'])))
PY
"$BIN" sequential "$T/d1.csv" --previous "$T/d2.csv" -o "$T/d.csv" --x Name,Age --y Disease --anonymity 3 \
    --class Class $H --report "$T/d.json" 2>"$T/err" &&
    "$BIN" metrics "$T/d1.csv" "$T/d.csv" --qi Name,Job,Age $H >"$T/dm.json" 2>>"$T/err"
rc=$?
why=$("$PY" - "$T/d1.csv" "$T/d.csv" "$T/d.json" "$T/dm.json" <<'PY'
import csv, json, sys
orig, pub = list(csv.DictReader(open(sys.argv[1]))), list(csv.DictReader(open(sys.argv[2])))
ages = [int(r['Age']) for r in orig]
span = max(ages) - min(ages)
cat = sum(r['Name'] == '*' for r in pub) / len(orig)  # Name: one level under '*'
cont = 0
for r in pub:
    lo, _, hi = r['Age'].partition('-')
    cont += (int(hi or lo) - int(lo)) / span
cont /= len(orig)
rep, met = json.load(open(sys.argv[3])), json.load(open(sys.argv[4]))
if cat + cont == 0: print('nothing was generalized: the case tests nothing')
for name, mine in (('categorical', cat), ('continuous', cont)):
    for who, j in (('report', rep), ('metrics', met)):
        if abs(j['distortion_' + name] - mine) > 1e-9:
            print('%s distortion_%s %r, counted here %r' % (who, name, j['distortion_' + name], mine))
PY
)
if [ $rc -eq 0 ] && [ -z "$why" ]; then ok "distortion: report, anonkit metrics and a direct count agree"
else bad "distortion agreement" "rc=$rc" "$why" "$(cat "$T/err")"; fi

# usage errors
for args in "--x Name --y Disease" "--x Name --y Nope --anonymity 2" "--x Name --y Disease --anonymity 0" \
    "--x Name --y Disease --anonymity 2 --sensitive-values HIV"; do
    "$BIN" sequential "$D/t1.csv" --previous "$D/t2.csv" -o "$T/u.csv" $args --class Class $H 2>"$T/err"
    rc=$?
    if [ $rc -eq 1 ] && [ ! -e "$T/u.csv" ] && grep -q "^anonkit: " "$T/err"; then ok "usage error: $args"
    else bad "usage error: $args" "rc=$rc" "$(cat "$T/err")"; fi
done

# an earlier release with a value outside its hierarchy: file and line
printf 'Job,Disease\nBanker,Cancer\nPilot,HIV\n' >"$T/badprev.csv"
"$BIN" sequential "$D/t1.csv" --previous "$T/badprev.csv" -o "$T/b.csv" --x Name --y Disease --anonymity 1 \
    --class Class $H 2>"$T/err"
rc=$?
if [ $rc -eq 1 ] && grep -q "badprev.csv:3:" "$T/err" && [ ! -e "$T/b.csv" ]; then
    ok "value outside the hierarchy in an earlier release: file:line"
else
    bad "bad earlier release" "rc=$rc" "$(cat "$T/err")"
fi

# --help
if "$BIN" sequential --help | grep -q -- "--previous"; then ok "--help"; else bad "--help"; fi

echo "$pass passed, $failn failed"
[ $failn -eq 0 ]
