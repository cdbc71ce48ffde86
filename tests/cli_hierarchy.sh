#!/usr/bin/env bash
# cli_hierarchy.sh — command-line cases of `anonkit hierarchy` (every builder
# on a random table, the hierarchy checked by an independent reader and used
# to anonymize a table that `check` then accepts), --preview, several --column
# groups from one read (each file as its one-column build; all or nothing), bad builder
# options, --hierarchy COL=auto, the interval formats read back by check,
# metrics and recode, missing values on every algorithm with the verifier,
# and the diagnostics of hierarchies users bring (docs/hierarchies.md).
#
# usage: bash tests/cli_hierarchy.sh PATH/TO/anonkit SOURCE_DIR
#
# Prints "ok - NAME" or "not ok - NAME" with "#   ..." details per case, then
# "N passed, M failed"; exits 1 if any case failed. Needs /usr/bin/python3.
set -u
source "$(dirname "$0")/cli_harness.sh" cli-hierarchy "$@"

# A user error: exit 1, "anonkit: ..." with TEXT, nothing at OUTPATH.
expect_user_error() {
    expect_rc 1
    expect_err_has "$1"
    [ ! -e "$2" ] || problem "output $2 exists after a failure"
}

# ------------------------------------------------------------ fixtures --

D=$T/data
mkdir "$D"
# A random table: integer ages (negative ones too), decimal incomes, five-digit
# codes, dates, ordered categories, a flat category, a sensitive value; about
# one cell in twelve of each missing (empty, or NA).
"$PY" - "$D/t.csv" <<'PYEOF'
import random, sys
random.seed(7)
edu = ["Preschool", "1st-4th", "5th-6th", "7th-8th", "9th", "10th", "11th", "12th", "HS-grad"]
with open(sys.argv[1], "w") as f:
    f.write("age,income,zip,admitted,edu,sex,disease\n")
    for i in range(3000):
        def miss(v):
            r = random.random()
            return "" if r < 0.05 else ("NA" if r < 0.08 else v)
        age = miss(str(random.randint(-30, 95)))
        income = miss("%.2f" % random.uniform(-500, 9000))
        z = miss("%05d" % random.randint(10000, 10400))
        adm = miss("%04d-%02d-%02d" % (random.randint(1950, 2023), random.randint(1, 12), random.randint(1, 28)))
        e = miss(random.choice(edu))
        s = miss(random.choice(["M", "F"]))
        d = miss(random.choice(["flu", "cold", "hiv", "none", "cancer"]))
        f.write(",".join([age, income, z, adm, e, s, d]) + "\n")
PYEOF

# check_hier FILE COLUMN: an independent reading of a built hierarchy against
# the data: every present value of COLUMN a leaf once, NULL a leaf iff a value
# is missing, rows of one width ending in one root, each level a partition
# coarser than the one below (a label has one parent).
check_hier() {
    "$PY" - "$D/t.csv" "$1" "$2" <<'PYEOF' || problem "$1: not a complete nested hierarchy of $2"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
vals = [r[sys.argv[3]] for r in rows]
present = {v for v in vals if v not in ("", "NA")}
missing = any(v in ("", "NA") for v in vals)
h = [line.rstrip("\n").split(";") for line in open(sys.argv[2])]
ok = True
def bad(msg):
    global ok
    ok = False
    print(msg)
width = len(h[0])
if any(len(r) != width for r in h): bad("ragged")
leaves = [r[0] for r in h]
if len(set(leaves)) != len(leaves): bad("duplicate leaves")
want = set(present) | ({"NULL"} if missing else set())
if set(leaves) != want: bad("leaves %s" % sorted(set(leaves) ^ want)[:5])
if len({r[-1] for r in h}) != 1: bad("several roots")
for l in range(width - 1):
    parent = {}
    for r in h:
        if parent.setdefault(r[l], r[l + 1]) != r[l + 1]: bad("'%s' has two parents" % r[l])
sys.exit(0 if ok else 1)
PYEOF
}

B=$D/h
mkdir "$B"
build() { # build NAME COLUMN ARGS...: the hierarchy B/NAME.csv
    local name=$1 col=$2
    shift 2
    begin "builder: $name"
    ak hierarchy "$D/t.csv" --column "$col" --missing NA "$@" -o "$B/$name.csv"
    expect_rc 0
    expect_err_has "hierarchy of '$col'"
    [ -s "$B/$name.csv" ] && check_hier "$B/$name.csv" "$col"
    end
}
build age age --interval 5 --fanout 2,2,2
build age_bounded age --interval 10 --min 0 --max 80 --interval-format bracket
build income income --quantiles 8,2,2
build income_interval income --interval 250.5 --fanout 3
build zip zip --mask --levels 3
build admitted admitted --date day,month,quarter,year,decade
build admitted_week admitted --date day,week
build edu edu --order "Preschool,1st-4th,5th-6th,7th-8th,9th,10th,11th,12th,HS-grad" --fanout 3,2
build sex sex --flat

# ISO weeks read back independently (Python's isocalendar)
begin "builder: week labels are the ISO weeks of the dates"
"$PY" - "$B/admitted_week.csv" <<'PYEOF' || problem "a week label is not the date's ISO week"
import sys, datetime
for line in open(sys.argv[1]):
    r = line.rstrip("\n").split(";")
    if r[0] == "NULL": continue
    y, w, _ = datetime.date.fromisoformat(r[0]).isocalendar()
    if r[2] != "%04d-W%02d" % (y, w): print(r); sys.exit(1)
PYEOF
end

# labels follow the interval rule: every bounded label of age holds its value
begin "builder: interval labels hold their values"
"$PY" - "$B/age.csv" "$B/age_bounded.csv" <<'PYEOF' || problem "a label does not hold its value"
import sys, re
def bounds(s):
    m = re.fullmatch(r"\[(.+), (.+)([\]\[])", s)
    if m:
        lo = float("-inf") if m.group(1) == "-inf" else float(m.group(1))
        hi = float("inf") if m.group(2) == "inf" else float(m.group(2))
        return lo, hi, m.group(3) == "["
    if s.startswith("<"): return float("-inf"), float(s[1:]), True
    if s.startswith(">="): return float(s[2:]), float("inf"), False
    if " - " in s: a, b = s.split(" - "); return float(a), float(b), False
    a, b = s.split("-", 1) if not s.startswith("-") else (None, None)
    return float(a), float(b), False
for path in sys.argv[1:]:
    for line in open(path):
        r = line.rstrip("\n").split(";")
        if r[0] == "NULL": continue
        x = float(r[0])
        for lab in r[1:-1]:
            lo, hi, open_ = bounds(lab)
            if not (lo <= x and (x < hi if open_ else x <= hi)): print(path, r); sys.exit(1)
PYEOF
end

# --preview: the level sizes of the file it would write, and nothing written
begin "builder: --preview writes nothing and counts the levels"
ak hierarchy "$D/t.csv" --column age --missing NA --interval 5 --fanout 2,2,2 --preview
expect_rc 0
sizes=$("$PY" -c 'import sys; h=[l.rstrip("\n").split(";") for l in open(sys.argv[1])]; print(" ".join("level %d: %d" % (i, len({r[i] for r in h})) for i in range(len(h[0]))))' "$B/age.csv")
expect_err_has "$sizes"
[ -z "$(ls -A "$TMPDIR")" ] || problem "something written"
end

# several --column groups: one read, every file as its one-column build
M=$D/many
mkdir "$M"
EDU="Preschool,1st-4th,5th-6th,7th-8th,9th,10th,11th,12th,HS-grad"
MANY=(--column age --interval 5 --fanout 2,2,2 -o "$M/age.csv"
      --column age --interval 10 --min 0 --max 80 --interval-format bracket -o "$M/age_bounded.csv"
      --column income --quantiles 8,2,2 -o "$M/income.csv" --column zip --mask --levels 3 -o "$M/zip.csv"
      --column admitted --date day,month,quarter,year,decade -o "$M/admitted.csv"
      --column edu --order "$EDU" --fanout 3,2 -o "$M/edu.csv" --column sex --flat -o "$M/sex.csv")
NAMES="age age_bounded income zip admitted edu sex"
begin "several columns: one run writes every hierarchy, each as its one-column build"
ak hierarchy "$D/t.csv" --missing NA "${MANY[@]}"
expect_rc 0
for n in $NAMES; do
    cmp -s "$M/$n.csv" "$B/$n.csv" || problem "$n.csv differs from the one-column build"
done
for c in age income zip admitted edu sex; do expect_err_has "hierarchy of '$c'"; done
[ "$(grep -c "hierarchy of" "$ERR")" -eq 7 ] || problem "not one summary per column"
end

for th in 1 2; do
    begin "several columns, --threads $th: every hierarchy as its one-column build"
    mkdir "$M/t$th"
    ak hierarchy "$D/t.csv" --missing NA --threads "$th" "${MANY[@]/$M\//$M/t$th/}"
    expect_rc 0
    for n in $NAMES; do
        cmp -s "$M/t$th/$n.csv" "$B/$n.csv" || problem "$n.csv (--threads $th) differs from the one-column build"
    done
    end
    begin "several columns, --threads $th: the first failing column is the one named, nothing published"
    mkdir "$M/tf$th"
    ak hierarchy "$D/t.csv" --missing NA --threads "$th" --column age --interval 5 -o "$M/tf$th/a.csv" \
        --column sex --interval 3 -o "$M/tf$th/s.csv" --column edu --interval 3 -o "$M/tf$th/e.csv" \
        --column income --quantiles 4 -o "$M/tf$th/i.csv"
    expect_rc 1
    expect_err_has "column 'sex'"
    [ -z "$(ls -A "$M/tf$th")" ] || problem "files left: $(ls -A "$M/tf$th" | tr '\n' ' ')"
    ak hierarchy "$D/t.csv" --missing NA --threads "$th" --column age --interval 5 -o "$M/tf$th/a.csv" \
        --column sex --flat -o "$M/tf$th/s.csv" --column edu --flat -o "$M/tf$th/e.csv" \
        --column nope --flat -o "$M/tf$th/i.csv"
    expect_rc 1
    expect_err_has "no column 'nope'"
    [ -z "$(ls -A "$M/tf$th")" ] || problem "files left: $(ls -A "$M/tf$th" | tr '\n' ' ')"
    end
done

begin "several columns: read from stdin once, the same files"
mkdir "$M/stdin"
timeout 60 "$BIN" hierarchy - --missing NA "${MANY[@]/$M\//$M/stdin/}" <"$D/t.csv" >"$OUT" 2>"$ERR"
RC=$?
expect_rc 0
for n in $NAMES; do
    cmp -s "$M/stdin/$n.csv" "$B/$n.csv" || problem "$n.csv (stdin) differs from the one-column build"
done
end

begin "several columns: options before the first --column apply to all, the data file anywhere"
mkdir "$M/common"
ak hierarchy --missing NA --flat --column sex -o "$M/common/sex.csv" --column edu -o "$M/common/edu.csv" "$D/t.csv"
expect_rc 0
cmp -s "$M/common/sex.csv" "$B/sex.csv" || problem "sex.csv differs"
ak hierarchy "$D/t.csv" --column edu --missing NA --flat -o "$M/edu_flat_one.csv"
cmp -s "$M/common/edu.csv" "$M/edu_flat_one.csv" || problem "edu.csv differs from its one-column build"
end

# all or nothing: a column that fails leaves every output as it was
begin "several columns: one failing column publishes nothing, old files untouched"
mkdir "$M/fail"
echo old >"$M/fail/age.csv"
ak hierarchy "$D/t.csv" --missing NA --column age --interval 5 -o "$M/fail/age.csv" \
    --column income --quantiles 4 -o "$M/fail/income.csv" --column sex --interval 3 -o "$M/fail/sex.csv"
expect_rc 1
expect_err_has "column 'sex'"
expect_err_has "needs numbers"
[ "$(cat "$M/fail/age.csv")" = old ] || problem "age.csv was replaced"
[ "$(ls -A "$M/fail")" = age.csv ] || problem "files left: $(ls -A "$M/fail" | tr '\n' ' ')"
end

begin "several columns: an unwritable output fails before any work, nothing published"
mkdir "$M/ro"
ak hierarchy "$D/t.csv" --missing NA --column age --interval 5 -o "$M/ro/age.csv" \
    --column sex --flat -o "$M/no-such-folder/sex.csv"
expect_rc 1
expect_err_has "column 'sex'"
[ -z "$(ls -A "$M/ro")" ] || problem "files left: $(ls -A "$M/ro" | tr '\n' ' ')"
end

bad_many() { # NAME TEXT ARGS...: a refused combination of groups, nothing written
    local name=$1 text=$2
    shift 2
    begin "several columns refused: $name"
    mkdir -p "$M/bad"
    ak hierarchy "$D/t.csv" "$@"
    expect_rc 1
    expect_err_has "$text"
    [ -z "$(ls -A "$M/bad")" ] || problem "files left: $(ls -A "$M/bad" | tr '\n' ' ')"
    end
}
bad_many "one output twice" "both given the output" --column sex --flat -o "$M/bad/x.csv" --column edu --flat -o "$M/bad/x.csv"
bad_many "stdout" "-o -" --column sex --flat -o - --column edu --flat -o "$M/bad/e.csv"
bad_many "two delimiters" "one --delimiter" --column sex --flat -o "$M/bad/s.csv" --column edu --flat --delimiter ';' -o "$M/bad/e.csv"
bad_many "a group without a builder" "column 'edu'" --column sex --flat -o "$M/bad/s.csv" --column edu -o "$M/bad/e.csv"
bad_many "an unknown column" "no column 'nope'" --column sex --flat -o "$M/bad/s.csv" --column nope --flat -o "$M/bad/e.csv"

# anonymizing with the built hierarchies: every algorithm family, check accepts
QI=age,zip,admitted,edu,sex
HS=(--hierarchy age="$B/age.csv" --hierarchy zip="$B/zip.csv" --hierarchy admitted="$B/admitted.csv"
    --hierarchy edu="$B/edu.csv" --hierarchy sex="$B/sex.csv")
for alg in incognito mondrian rothko-t; do
    begin "builder: anonymize --algorithm $alg with every built hierarchy, check accepts"
    extra=()
    [ "$alg" = rothko-t ] && extra=(--memory 64M)
    ak anonymize "$D/t.csv" --qi $QI "${HS[@]}" --missing NA --k 5 --algorithm $alg "${extra[@]}" -o "$D/b-$alg.csv"
    expect_rc 0
    ak check "$D/b-$alg.csv" --qi $QI --k 5
    expect_rc 0
    end
done

# ------------------------------------------------------ bad builder options --
bad_builder() { # NAME TEXT ARGS...
    local name=$1 text=$2
    shift 2
    begin "bad builder: $name"
    ak hierarchy "$D/t.csv" --missing NA "$@" -o "$D/bad.csv"
    expect_user_error "$text" "$D/bad.csv"
    end
}
bad_builder "zero width" "the width must be above 0" --column age --interval 0
bad_builder "fan-out 1" "fan-out of 1" --column age --interval 5 --fanout 2,1
bad_builder "unparsable date" "is not an ISO-8601 date" --column zip --date day,year
bad_builder "mask on unequal lengths" "equal length" --column edu --mask
bad_builder "interval on words" "needs numbers" --column edu --interval 5
bad_builder "two builders" "choose one builder" --column age --interval 5 --flat
bad_builder "no builder" "no builder given" --column age
bad_builder "unknown column" "no column 'nope'" --column nope --flat
bad_builder "unknown date level" "unknown level 'fortnight'" --column admitted --date fortnight
bad_builder "a level above week" "week is the top level" --column admitted --date day,week,year
bad_builder "date levels out of order" "fine to coarse" --column admitted --date year,month
bad_builder "order misses values" "--order does not list" --column edu --order "Preschool,9th"
bad_builder "levels beyond the code" "only 5 characters" --column zip --mask --levels 6

# ---------------------------------------------------------- auto hierarchies --
begin "auto: --hierarchy sex=auto is built in memory and named in the summary"
ak anonymize "$D/t.csv" --qi age,sex,edu --hierarchy sex=auto --hierarchy edu=auto --missing NA --k 4 -o "$D/auto.csv"
expect_rc 0
expect_err_has "hierarchy of 'sex': flat, built from the data (3 values)"
ak check "$D/auto.csv" --qi age,sex,edu --k 4
expect_rc 0
ak metrics "$D/t.csv" "$D/auto.csv" --qi age,sex,edu --hierarchy sex=auto --hierarchy edu=auto --missing NA
expect_rc 0
end

begin "auto: a job file's \"auto\" is not taken for a path"
mkdir -p "$D/job"
printf '{"qi": ["age", "sex"], "hierarchy": {"sex": "auto"}, "missing": ["NA"], "k": 4}\n' >"$D/job/j.json"
ak anonymize "$D/t.csv" --job "$D/job/j.json" -o "$D/auto-job.csv"
expect_rc 0
expect_err_has "hierarchy of 'sex': flat, built from the data"
end

# ------------------------------------------------- interval formats read back --
# Negative and decimal values: published ranges in both formats, read back by
# check, metrics (which proves every range covers a row of its own) and
# recode (the rules give the same texts); a reader of the grammar finds each
# original value inside its published range.
"$PY" - "$D/n.csv" <<'PYEOF'
import random, sys
random.seed(9)
with open(sys.argv[1], "w") as f:
    f.write("x,y,s\n")
    for i in range(1500):
        f.write("%d,%.3f,%s\n" % (random.randint(-60, 40), random.uniform(-5, 5), random.choice("abcd")))
PYEOF
for fmt in range bracket; do
    begin "interval format $fmt: check, metrics and recode read it back"
    ak anonymize "$D/n.csv" --qi x,y --k 6 --interval-format $fmt --keep-order --rules "$D/r-$fmt.csv" -o "$D/n-$fmt.csv"
    expect_rc 0
    ak check "$D/n-$fmt.csv" --qi x,y --k 6
    expect_rc 0
    ak metrics "$D/n.csv" "$D/n-$fmt.csv" --qi x,y
    expect_rc 0
    ak recode --rules "$D/r-$fmt.csv" "$D/n.csv" -o "$D/rec-$fmt.csv"
    expect_rc 0
    cmp -s "$D/rec-$fmt.csv" "$D/n-$fmt.csv" || problem "recode differs from the published table"
    "$PY" - "$D/n.csv" "$D/n-$fmt.csv" "$fmt" <<'PYEOF' || problem "a published value does not read back"
import csv, re, sys
orig = list(csv.reader(open(sys.argv[1])))[1:]
pub = list(csv.reader(open(sys.argv[2])))[1:]
fmt = sys.argv[3]
def parse(s):
    m = re.fullmatch(r"\[(\S+), (\S+)\]", s)
    if m: return float(m.group(1)), float(m.group(2))
    if fmt == "bracket" and s != "*":
        float(s)  # a single value
        return float(s), float(s)
    if " - " in s:
        a, b = s.split(" - ")
        if not (a.startswith("-") or b.startswith("-")): raise ValueError("' - ' without a negative bound: " + s)
        return float(a), float(b)
    m = re.fullmatch(r"([0-9.]+)-([0-9.]+)", s)
    if m: return float(m.group(1)), float(m.group(2))
    return float(s), float(s)
for o, p in zip(orig, pub):
    for c in range(2):
        if p[c] == "*": continue
        lo, hi = parse(p[c])
        if not lo <= float(o[c]) <= hi: print(o, p); sys.exit(1)
PYEOF
    end
done

# --------------------------------------------------------- missing values --
# Every algorithm: the verifier accepts the output, every row is published or
# counted as suppressed, and (rows in input order) a published numeric QI is
# the missing token exactly where the original was missing.
check_missing() { # PUBLISHED: missing stays missing, present stays present
    "$PY" - "$D/t.csv" "$1" <<'PYEOF' || problem "$1: a class mixes missing and present values"
import csv, sys
orig = list(csv.DictReader(open(sys.argv[1])))
pub = list(csv.DictReader(open(sys.argv[2])))
assert len(orig) == len(pub)
for o, p in zip(orig, pub):
    for c in ("age", "income"):
        if c not in p or p[c] == "*": continue
        om = o[c] in ("", "NA")
        pm = p[c] in ("", "NA")
        if om != pm: print(c, o[c], p[c]); sys.exit(1)
PYEOF
}
for alg in mondrian hilbert hilbert-fast idistance idistance-fast; do
    begin "missing: numeric QIs with missing values under --algorithm $alg"
    ak anonymize "$D/t.csv" --qi age,income,sex --hierarchy sex=auto --missing NA --sensitive disease --l 2 \
        --k 5 --algorithm $alg --keep-order -o "$D/m-$alg.csv"
    expect_rc 0
    expect_err_has "(published + suppressed = read)"
    # rows the separation could not place are suppressed: counted in the summary, all '*' in the file
    sup=$(sed -n 's/^published [0-9]* rows, suppressed \([0-9]*\) .*/\1/p' "$ERR")
    stars=$(awk -F, 'NR > 1 && $1 == "*" && $2 == "*" && $6 == "*"' "$D/m-$alg.csv" | wc -l)
    [ "$sup" = "$stars" ] || problem "summary says $sup suppressed, the file has $stars"
    "$PY" -c 'import sys; sys.exit(0 if int(sys.argv[1]) <= 150 else 1)' "${sup:-0}" || problem "$sup rows suppressed"
    ak check "$D/m-$alg.csv" --qi age,income,sex --missing NA --sensitive disease --l 2 --k 5 --suppression 0.05
    expect_rc 0
    check_missing "$D/m-$alg.csv"
    end
done
begin "missing: mondrian on two threads"
ak anonymize "$D/t.csv" --qi age,income,sex --hierarchy sex=auto --missing NA --k 5 --threads 2 --keep-order -o "$D/m-t2.csv"
expect_rc 0
ak check "$D/m-t2.csv" --qi age,income,sex --k 5
expect_rc 0
check_missing "$D/m-t2.csv"
end
begin "missing: metrics reads the missing token back"
ak metrics "$D/t.csv" "$D/m-mondrian.csv" --qi age,income,sex --hierarchy sex=auto --missing NA
expect_rc 0
end
for alg in incognito rothko-t rothko-s; do
    begin "missing: --algorithm $alg through the built hierarchies' NULL leaf"
    extra=()
    [ "$alg" != incognito ] && extra=(--memory 64M)
    ak anonymize "$D/t.csv" --qi age,income,sex --hierarchy age="$B/age.csv" --hierarchy income="$B/income.csv" \
        --hierarchy sex="$B/sex.csv" --missing NA --k 5 --algorithm $alg "${extra[@]}" -o "$D/mh-$alg.csv"
    expect_rc 0
    ak check "$D/mh-$alg.csv" --qi age,income,sex --k 5
    expect_rc 0
    end
done
# Out of core, on a budget that repartitions: Rothko-T publishes what Mondrian
# does above (as multisets of rows), Rothko-S a table the verifier accepts; in both
# no class mixes missing and present values (a mixed one would show "*" in
# one numeric QI alone) and every row is published or counted as suppressed.
for alg in rothko-t rothko-s; do
    begin "missing: numeric QIs with missing values under --algorithm $alg, out of core"
    ak anonymize "$D/t.csv" --qi age,income,sex --hierarchy sex=auto --missing NA --sensitive disease --l 2 \
        --k 5 --algorithm $alg --memory 256K --block-size 2K -o "$D/mr-$alg.csv" --report "$D/mr-$alg.json"
    expect_rc 0
    expect_err_has "(published + suppressed = read)"
    grep -q '"repartitions": [1-9]' "$D/mr-$alg.json" || problem "$alg did not repartition"
    sup=$(sed -n 's/^published [0-9]* rows, suppressed \([0-9]*\) .*/\1/p' "$ERR")
    stars=$(awk -F, 'NR > 1 && $1 == "*" && $2 == "*" && $6 == "*"' "$D/mr-$alg.csv" | wc -l)
    [ "$sup" = "$stars" ] || problem "summary says $sup suppressed, the file has $stars"
    mixed=$(awk -F, 'NR > 1 && ($1 == "*") != ($2 == "*")' "$D/mr-$alg.csv" | wc -l)
    [ "$mixed" = 0 ] || problem "$mixed rows of classes that mix missing and present values"
    ak check "$D/mr-$alg.csv" --qi age,income,sex --missing NA --sensitive disease --l 2 --k 5 --suppression 0.05
    expect_rc 0
    if [ "$alg" = rothko-t ]; then
        cmp -s <(sort "$D/m-mondrian.csv") <(sort "$D/mr-$alg.csv") || problem "rothko-t differs from mondrian"
    fi
    end
done
# a rule per missing class, in memory (rows in input order) and out of core
# (rows shuffled, partitions repartitioned): recode gives the published rows
for alg in mondrian rothko-t rothko-s; do
    begin "missing: --rules under --algorithm $alg: recode gives the published rows, check proves them"
    if [ $alg = mondrian ]; then more=(--keep-order); else more=(--memory 256K --block-size 2K); fi
    ak anonymize "$D/t.csv" --qi age,income,sex --hierarchy sex=auto --missing NA --sensitive disease --l 2 --k 5 \
        --algorithm $alg "${more[@]}" --rules "$D/mrr-$alg.csv" -o "$D/mro-$alg.csv" --report "$D/mrr-$alg.json"
    expect_rc 0
    [ $alg = mondrian ] || grep -q '"repartitions": [1-9]' "$D/mrr-$alg.json" || problem "$alg did not repartition"
    grep -q '^missing,age,NA$' "$D/mrr-$alg.csv" || problem "no 'missing' record for age"
    grep -q '^rule,[0-9]*,,missing,missing,missing,' "$D/mrr-$alg.csv" || problem "no rule for the missing ages"
    ak recode --rules "$D/mrr-$alg.csv" "$D/t.csv" -o "$D/mrec-$alg.csv"
    expect_rc 0
    expect_err_has "0 rows lie outside"
    if [ $alg = mondrian ]; then
        cmp -s "$D/mrec-$alg.csv" "$D/mro-$alg.csv" || problem "recode differs from the published table"
    else
        cmp -s <(sort "$D/mrec-$alg.csv") <(sort "$D/mro-$alg.csv") || problem "recode differs from the published rows"
    fi
    ak check "$D/mrec-$alg.csv" --qi age,income,sex --missing NA --sensitive disease --l 2 --k 5
    expect_rc 0
    check_missing "$D/mrec-$alg.csv"
    end
done
begin "missing: --rules recode new rows: a missing value (empty or a token) gets the missing class's text"
printf 'age,income,zip,admitted,edu,sex,disease\nNA,100.00,10001,2000-01-01,9th,M,flu\n,,10002,2001-02-02,9th,F,flu\n' \
    >"$D/new.csv"
ak recode --rules "$D/mrr-mondrian.csv" "$D/new.csv" -o "$D/newrec.csv"
expect_rc 0
"$PY" - "$D/new.csv" "$D/newrec.csv" "$D/t.csv" "$D/mro-mondrian.csv" <<'PYEOF' || problem "a missing value was not recoded as missing"
import csv, sys
new = list(csv.DictReader(open(sys.argv[1])))
rec = list(csv.DictReader(open(sys.argv[2])))
orig = list(csv.DictReader(open(sys.argv[3])))
pub = list(csv.DictReader(open(sys.argv[4])))
# the texts published for missing values of each column, from the original run
texts = {c: {p[c] for o, p in zip(orig, pub) if o[c] in ("", "NA")} for c in ("age", "income")}
for n, r in zip(new, rec):
    for c in ("age", "income"):
        if n[c] in ("", "NA") and r[c] not in texts[c]:
            print(c, n[c], "->", r[c], "not one of", texts[c]); sys.exit(1)
PYEOF
end
begin "missing: --rules refused when a missing part is too small to stand alone (it would be pooled)"
"$PY" - "$D/few.csv" <<'PYEOF'
import random, sys
random.seed(4)
with open(sys.argv[1], "w") as f:
    f.write("age,sex\n")
    for i in range(400):
        f.write("%s,%s\n" % ("NA" if i < 2 else random.randint(18, 80), random.choice("MF")))
PYEOF
ak anonymize "$D/few.csv" --qi age,sex --hierarchy sex=auto --missing NA --k 5 --rules "$D/fr.csv" -o "$D/fo.csv"
expect_user_error "too small to stand alone" "$D/fo.csv"
[ ! -e "$D/fr.csv" ] || problem "rules written after a failure"
end
begin "missing: --rules under --algorithm rothko-t refused when a missing part would be pooled across partitions"
ak anonymize "$D/few.csv" --qi age,sex --hierarchy sex=auto --missing NA --k 5 --algorithm rothko-t --memory 256K \
    --block-size 2K --rules "$D/fr-rt.csv" -o "$D/fo-rt.csv"
expect_user_error "too small to stand alone" "$D/fo-rt.csv"
[ ! -e "$D/fr-rt.csv" ] || problem "rules written after a failure"
end
begin "missing: without --missing, NA in a numeric QI is refused with the option to give"
ak anonymize "$D/t.csv" --qi age --k 5 -o "$D/mna.csv"
expect_user_error "holds 'NA'" "$D/mna.csv"
end

# ------------------------------------------------------------- diagnostics --
begin "diagnostics: values missing from a hierarchy, distinct, with lines and the builder command"
head -n 40 "$B/edu.csv" | grep -v '^HS-grad;\|^9th;\|^12th;' >"$D/edu-part.csv"
ak anonymize "$D/t.csv" --qi age,edu --hierarchy edu="$D/edu-part.csv" --missing NA --k 2 -o "$D/d.csv"
expect_user_error "is not a leaf of hierarchy" "$D/d.csv"
expect_err_has "anonkit hierarchy $D/t.csv --column edu --flat -o FILE"
n=$(grep -o "'HS-grad' (edu" "$ERR" | wc -l)
[ "$n" -le 1 ] || problem "a value listed $n times"
end
begin "diagnostics: a label under two parents names both"
printf 'a;X;P;*\nb;X;Q;*\n' >"$D/two.csv"
printf 'v\na\n' >"$D/v.csv"
ak anonymize "$D/v.csv" --qi v --hierarchy v="$D/two.csv" --k 1 -o "$D/d2.csv"
expect_user_error "two parents" "$D/d2.csv"
expect_err_has '"P"'
expect_err_has '"Q"'
end
begin "diagnostics: a ragged row names its line"
printf 'a;X;*\nb;*\n' >"$D/ragged.csv"
ak anonymize "$D/v.csv" --qi v --hierarchy v="$D/ragged.csv" --k 1 -o "$D/d3.csv"
expect_user_error "ragged.csv:2" "$D/d3.csv"
end

# from 2^17 rows a hierarchy's check and its writing run at the same time on two threads
begin "a large hierarchy: checked and written at the same time, the file as composed, a write error as on one thread"
"$PY" - "$D/big.csv" "$D/big_want.csv" <<'PYEOF'
import random, sys
random.seed(5)
vals = list(range(0, 300000, 2)) + [7]
random.shuffle(vals)
with open(sys.argv[1], "w") as f:
    f.write("x,y\n")
    for i, v in enumerate(vals):
        f.write("%d,%d\n" % (v, i % 7))
with open(sys.argv[2], "w") as f:
    for v in sorted(vals):
        lo = v // 10 * 10
        f.write("%d;%d-%d;%d-%d;*\n" % (v, lo, lo + 9, v // 20 * 20, v // 20 * 20 + 19))
PYEOF
mkdir "$M/big1" "$M/big2"
for th in 1 2; do
    ak hierarchy "$D/big.csv" --threads $th --column x --interval 10 --fanout 2 -o "$M/big$th/x.csv" --column y --flat -o "$M/big$th/y.csv"
    expect_rc 0
    cmp -s "$M/big$th/x.csv" "$D/big_want.csv" || problem "x.csv (--threads $th) differs from the one composed"
done
cmp -s "$M/big1/y.csv" "$M/big2/y.csv" || problem "y.csv differs between --threads 1 and 2"
for th in 1 2; do
    ak hierarchy "$D/big.csv" --threads $th --column x --interval 10 -o /dev/full --column y --flat -o "$M/big$th/y2.csv"
    expect_rc 1
    expect_err_has "column 'x': cannot write the hierarchy"
    [ ! -e "$M/big$th/y2.csv" ] || problem "y2.csv published after a failed write (--threads $th)"
done
end

begin "stale temporaries: a killed commit's OUT.tmp-XXXXXX removed at the next commit, unless a live run holds the folder"
# A SIGKILL between the commit's naming of a replacing output (OUT.tmp-XXXXXX)
# and its rename leaves that name (docs/ARCHITECTURE.md §11). Planted here: the
# next run that commits OUT removes names of exactly that pattern when it can
# take the folder's flock alone (no live run has a temporary there), and
# nothing else: other suffixes, a symbolic link, another output's names stay.
C=$(casedir)
printf 'old\n' >"$C/sex.csv"
printf 'killed run\n' >"$C/sex.csv.tmp-Ab3xZ9"
printf 'killed run\n' >"$C/age.csv.tmp-Qq7Rr0"
for keep in sex.csv.tmp-Ab3xZ sex.csv.tmp-Ab3xZ9a sex.csv.tmp-Ab3-Z9 sex.csv.tmq-Ab3xZ9 other.csv.tmp-Ab3xZ9; do
    printf 'mine\n' >"$C/$keep"
done
ln -s "$C/other.csv.tmp-Ab3xZ9" "$C/sex.csv.tmp-Sym000"
KEEP="other.csv.tmp-Ab3xZ9 sex.csv.tmp-Ab3-Z9 sex.csv.tmp-Ab3xZ sex.csv.tmp-Ab3xZ9a sex.csv.tmp-Sym000 sex.csv.tmq-Ab3xZ9"
# a live run's lock on the folder (a shared flock, as anonkit holds during its commit, by one
# Python process that says when it holds it): nothing removed, the outputs published all the same
mkfifo "$C.ready"
"$PY" -c 'import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY)
fcntl.flock(fd, fcntl.LOCK_SH)
open(sys.argv[2], "w").write("held\n")
time.sleep(60)' "$C" "$C.ready" &
HOLDER=$!
read -r _ <"$C.ready"
ak hierarchy "$ADULT/adult.csv" --delimiter ';' --column sex --flat -o "$C/sex.csv" --column age --interval 10 -o "$C/age.csv"
expect_rc 0
[ -e "$C/sex.csv.tmp-Ab3xZ9" ] && [ -e "$C/age.csv.tmp-Qq7Rr0" ] || problem "a stale name removed while another run held the folder"
kill "$HOLDER" 2>/dev/null
wait "$HOLDER" 2>/dev/null
rm -f "$C.ready"
ak hierarchy "$ADULT/adult.csv" --delimiter ';' --column sex --flat -o "$C/sex.csv" --column age --interval 10 -o "$C/age.csv"
expect_rc 0
left=$(cd "$C" && ls | grep -v '^sex.csv$\|^age.csv$' | sort | tr '\n' ' ')
[ "$left" = "$KEEP " ] || problem "left in the folder: '$left', expected '$KEEP '"
grep -qx '\*' "$C/sex.csv" 2>/dev/null || grep -q ';\*$' "$C/sex.csv" || problem "sex.csv not the new hierarchy"
for f in $KEEP; do
    [ "$f" = sex.csv.tmp-Sym000 ] || grep -qx mine "$C/$f" || problem "$f changed"
done
# a failed run removes nothing and publishes nothing
printf 'killed run\n' >"$C/sex.csv.tmp-Cd4yW1"
cp "$C/sex.csv" "$C/sex.before"
ak hierarchy "$ADULT/adult.csv" --delimiter ';' --column sex --flat -o "$C/sex.csv" --column age --interval 10 -o /dev/full
expect_rc 1
[ -e "$C/sex.csv.tmp-Cd4yW1" ] || problem "a failed run removed a stale name"
cmp -s "$C/sex.csv" "$C/sex.before" || problem "sex.csv changed by a failed run"
end

finish
