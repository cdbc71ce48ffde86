#!/usr/bin/env bash
# cli_runs.sh — command-line cases of anonkit on good runs: golden output, row
# accounting, stdin/stdout, shuffle, job files, reports, metrics, recode
# (bad input: cli_cases.sh).
#
# usage: bash tests/cli_runs.sh PATH/TO/anonkit SOURCE_DIR
#
# Prints one line per case, "ok - NAME" or "not ok - NAME" followed by
# "#   ..." detail lines, then "N passed, M failed"; exits 1 if any case failed.
# Needs bash, coreutils and /usr/bin/python3 (the JSON and CSV-aware checks and
# the tables written for some cases are tests/*.py: csv_records.py,
# json_expect.py, class_error_tables.py, separable_table.py).
set -u
source "$(dirname "$0")/cli_harness.sh" cli-runs "$@"
source "$(dirname "$0")/cli_cases_lib.sh"

# ------------------------------------------------------------ 11. golden --

GOLD_OUT=$T/patients_k2.csv

begin "golden: Patients k=2 --keep-order matches the hand-derived table"
ak anonymize "$PATIENTS" -o "$GOLD_OUT" "${PQI[@]}" --sensitive disease --k 2 --keep-order
expect_rc 0
expect_same "$GOLD_OUT" "$GOLDEN"
expect_err_has "2 classes"
end

begin "golden: Patients k=2 l=2 gives the same table"
d=$(casedir)
ak anonymize "$PATIENTS" -o "$d/out.csv" "${PQI[@]}" --sensitive disease --k 2 --l 2 --keep-order
expect_rc 0
expect_same "$d/out.csv" "$GOLDEN"
end

begin "golden: check --k 2 passes"
ak check "$GOLDEN" --qi age,sex,zipcode --k 2
expect_rc 0
expect_err_has "ok, 6 rows in 2 classes"
end

begin "golden: check --k 4 fails naming a class"
ak check "$GOLDEN" --qi age,sex,zipcode --k 4
expect_rc 1
expect_err_starts "$GOLDEN:2: "
expect_err_has "class (age=25-26, sex=*, zipcode=53711-53712)"
end

begin "golden: check --k 2 --l 2 --sensitive disease passes"
ak check "$GOLDEN" --qi age,sex,zipcode --k 2 --l 2 --sensitive disease
expect_rc 0
expect_err_has "ok, 6 rows in 2 classes"
end

begin "golden: check --k 4 --l 2 --sensitive disease fails naming a class"
ak check "$GOLDEN" --qi age,sex,zipcode --k 4 --l 2 --sensitive disease
expect_rc 1
expect_err_starts "$GOLDEN:2: "
expect_err_has "class (age=25-26"
end

begin "golden: check --l 4 fails (3 diseases per class)"
ak check "$GOLDEN" --qi age,sex,zipcode --l 4 --sensitive disease
expect_rc 1
expect_err_starts "$GOLDEN:"
expect_err_has "class ("
end

# ---------------------------------------------------- 12. stdin / stdout --

begin "stdio: anonymize - -o - equals the file run with the same seed"
d=$(casedir)
ak anonymize "$PEOPLE" -o "$d/file.csv" "${PEOPLE_QI[@]}" --seed 42
expect_rc 0
ak_in "$PEOPLE" anonymize - -o - "${PEOPLE_QI[@]}" --seed 42
expect_rc 0
cp "$OUT" "$d/stdout.csv"
expect_same "$d/stdout.csv" "$d/file.csv"
expect_err_has "from stdin"
expect_accounting "$d/stdout.csv" , 200
end

begin "stdio: Patients through a pipe, --keep-order, equals the golden table"
d=$(casedir)
cat "$PATIENTS" | timeout 20 "$BIN" anonymize - -o - "${PQI[@]}" --k 2 --keep-order >"$d/out.csv" 2>"$ERR"
RC=$?
expect_rc 0
expect_same "$d/out.csv" "$GOLDEN"
end

begin "stdio: check - reads stdin (passes)"
ak_in "$GOLDEN" check - --qi age,sex,zipcode --k 2
expect_rc 0
expect_err_has "ok, 6 rows in 2 classes"
end

begin "stdio: check - reads stdin (fails, names stdin and the line)"
ak_in "$GOLDEN" check - --qi age,sex,zipcode --k 4
expect_rc 1
expect_err_starts "stdin:2: "
end

# ------------------------------------------------------------ 13. shuffle --

SH=$T/shuffle
mkdir "$SH"

begin "shuffle: same seed, same bytes"
ak anonymize "$PEOPLE" -o "$SH/s1a.csv" "${PEOPLE_QI[@]}" --seed 1
expect_rc 0
ak anonymize "$PEOPLE" -o "$SH/s1b.csv" "${PEOPLE_QI[@]}" --seed 1
expect_rc 0
expect_same "$SH/s1a.csv" "$SH/s1b.csv"
end

begin "shuffle: different seeds, different row order"
ak anonymize "$PEOPLE" -o "$SH/s2.csv" "${PEOPLE_QI[@]}" --seed 2
expect_rc 0
expect_differ "$SH/s1a.csv" "$SH/s2.csv"
expect_same_rows "$SH/s1a.csv" "$SH/s2.csv" ,
end

begin "shuffle: the output order differs from the input order"
ak anonymize "$PEOPLE" -o "$SH/kept.csv" "${PEOPLE_QI[@]}" --keep-order
expect_rc 0
expect_same_columns "$PEOPLE" "$SH/kept.csv" , id
expect_differ "$SH/s1a.csv" "$SH/kept.csv"
[ "$(head -n 1 "$SH/s1a.csv" 2>&1)" = "$(head -n 1 "$SH/kept.csv" 2>&1)" ] || problem "the header is not the first line"
end

begin "shuffle: same multiset of rows as with --keep-order"
expect_same_rows "$SH/s1a.csv" "$SH/kept.csv" ,
expect_same_rows "$SH/s2.csv" "$SH/kept.csv" ,
end

begin "shuffle: without --seed the order is random and the report's seed reproduces it"
ak anonymize "$PEOPLE" -o "$SH/r1.csv" "${PEOPLE_QI[@]}" --report "$SH/r1.json"
expect_rc 0
expect_differ "$SH/r1.csv" "$SH/kept.csv"
expect_same_rows "$SH/r1.csv" "$SH/kept.csv" ,
# (taken modulo 2^64: how a seed above 2^63 is written is the next case's concern)
seed=$("$PY" "$SRC/tests/json_expect.py" --print "$SH/r1.json" 'int(j["parameters"]["seed"]) % 2**64' 2>&1)
if [[ $seed =~ ^[0-9]+$ ]]; then
    ak anonymize "$PEOPLE" -o "$SH/r2.csv" "${PEOPLE_QI[@]}" --seed "$seed"
    expect_rc 0
    expect_same "$SH/r1.csv" "$SH/r2.csv"
else
    problem "no seed in the report: $seed"
fi
end

begin "shuffle: a seed of 2^64-1 is reported as given"
ak anonymize "$PEOPLE" -o "$SH/max.csv" "${PEOPLE_QI[@]}" --seed 18446744073709551615 --report "$SH/max.json"
expect_rc 0
# (as a JSON number or a string: jansson's integers stop at 2^63-1)
expect_json "$SH/max.json" 'str(j["parameters"]["seed"]) == "18446744073709551615"' 'j["parameters"]["seed"]'
end

# ---------------------------------------------------------------- 14. job --

JOB=$ADULT/job.json
ADULT_ROWS=$(csvtool count "$ADULT/adult.csv" ';')

begin "job: settings come from examples/adult/job.json"
d=$(casedir)
ak anonymize --job "$JOB" -o "$d/out.csv" --report "$d/r.json"
expect_rc 0
expect_accounting "$d/out.csv" ';' "$ADULT_ROWS"
expect_json "$d/r.json" 'j["parameters"]["k"] == 10 and approx(j["parameters"]["l"], 3)'
expect_json "$d/r.json" 'str(j["parameters"]["seed"]) == "1" and j["parameters"]["delimiter"] == ";"'
expect_json "$d/r.json" 'j["parameters"]["sensitive"] == "occupation" and len(j["parameters"]["qi"]) == 7'
expect_json "$d/r.json" 'j["min_class_size"] >= 10'
ak check "$d/out.csv" --job "$JOB"
expect_rc 0
ak check "$d/out.csv" --job "$JOB" --k 50
expect_rc 1
cp "$d/out.csv" "$T/adult_k10.csv" 2>/dev/null
end

begin "job: the same job twice gives the same bytes (seed 1 from the file)"
d=$(casedir)
ak anonymize --job "$JOB" -o "$d/out.csv"
expect_rc 0
expect_same "$d/out.csv" "$T/adult_k10.csv"
end

begin "job: command-line --k 50 overrides the job file"
d=$(casedir)
ak anonymize --job "$JOB" -o "$d/out.csv" --k 50 --report "$d/r.json"
expect_rc 0
expect_accounting "$d/out.csv" ';' "$ADULT_ROWS"
expect_json "$d/r.json" 'j["parameters"]["k"] == 50 and j["min_class_size"] >= 50'
expect_json "$d/r.json" 'approx(j["parameters"]["l"], 3)'
ak check "$d/out.csv" --job "$JOB" --k 50
expect_rc 0
expect_err_has "ok"
end

begin "job: --job after other options is still overridden by them"
d=$(casedir)
ak anonymize -o "$d/out.csv" --k 50 --job "$JOB" --report "$d/r.json"
expect_rc 0
expect_json "$d/r.json" 'j["parameters"]["k"] == 50'
end

# --------------------------------------------------------- 15. identifier --

begin "identifier: dropped from header and rows, other columns unchanged"
d=$(casedir)
ak anonymize "$PEOPLE" -o "$d/out.csv" "${PEOPLE_QI[@]}" --keep-order
expect_rc 0
expect_header "$d/out.csv" , "id|age|zipcode|sex|disease|note"
expect_same_columns "$PEOPLE" "$d/out.csv" , id disease note
! grep -q "Person" "$d/out.csv" 2>/dev/null || problem "identifier values appear in the output"
end

begin "identifier: several identifiers"
d=$(casedir)
ak anonymize "$PEOPLE" -o "$d/out.csv" --qi age,zipcode --identifier name,id --k 5 --keep-order
expect_rc 0
expect_header "$d/out.csv" , "age|zipcode|sex|disease|note"
expect_same_columns "$PEOPLE" "$d/out.csv" , sex disease note
end

# ----------------------------------------------------- 16. --delimiter ; --

begin "delimiter: ';' with quoted delimiter, newline and quotes in passthrough columns"
d=$(casedir)
ak anonymize "$SEMI" -o "$d/out.csv" --delimiter ';' --qi age,zipcode --sensitive disease --k 2 --keep-order
expect_rc 0
expect_header "$d/out.csv" ';' "id|age|zipcode|note|disease"
expect_same_columns "$SEMI" "$d/out.csv" ';' id note disease
grep -qF '"a;b"' "$d/out.csv" 2>/dev/null || problem "the field a;b is not quoted in the output"
ak check "$d/out.csv" --delimiter ';' --qi age,zipcode --k 2
expect_rc 0
end

begin "delimiter: tab"
d=$(casedir)
tr ',' '\t' <"$PATIENTS" >"$d/in.tsv"
ak anonymize "$d/in.tsv" -o "$d/out.tsv" --delimiter tab "${PQI[@]}" --k 2 --keep-order
expect_rc 0
tr ',' '\t' <"$GOLDEN" >"$d/expected.tsv"
expect_same "$d/out.tsv" "$d/expected.tsv"
end

# ------------------------------------------------------------ 17. report --

begin "report: valid JSON with counts, classes and metrics"
d=$(casedir)
ak anonymize "$PATIENTS" -o "$d/out.csv" "${PQI[@]}" --sensitive disease --k 2 --keep-order --report "$d/r.json"
expect_rc 0
expect_file "$d/r.json"
expect_json "$d/r.json" 'j["rows_read"] == 6 and j["rows_published"] == 6 and j["rows_suppressed"] == 0'
expect_json "$d/r.json" 'j["rows_published"] + j["rows_suppressed"] == j["rows_read"]'
expect_json "$d/r.json" 'j["classes"] == 2'
expect_json "$d/r.json" 'approx(j["metrics"]["gcp"], (1/3 + 1 + 0.75) / 3)'
expect_json "$d/r.json" 'approx(j["metrics"]["dm"], 18) and approx(j["metrics"]["cavg"], 1.5)'
expect_json "$d/r.json" 'sorted(j["metrics"]["ncp"]) == ["age", "sex", "zipcode"]'
expect_json "$d/r.json" 'j["parameters"]["k"] == 2 and j["parameters"]["keep-order"] is True'
end

# ----------------------------------------------------------- 18. metrics --

begin "metrics: Patients k=2 against hand-derived values"
ak metrics "$PATIENTS" "$GOLDEN" "${PQI[@]}" --k 2
expect_rc 0
cp "$OUT" "$T/metrics.json"
expect_json "$T/metrics.json" 'approx(j["dm"], 18)'
expect_json "$T/metrics.json" 'approx(j["cavg"], 1.5)'
expect_json "$T/metrics.json" 'approx(j["ncp"]["sex"], 1.0)'
expect_json "$T/metrics.json" 'approx(j["ncp"]["age"], 1/3)'
expect_json "$T/metrics.json" 'approx(j["ncp"]["zipcode"], 0.75)'
expect_json "$T/metrics.json" 'approx(j["gcp"], (1/3 + 1 + 0.75) / 3)'
# [Wang06] §6 distortion per record: sex raised one level in every row; age 25-26 and 27-28
# are 1/3 of 25..28 each, zipcode 53711-53712 is 1/2 and 53710-53712 all of 53710..53712
expect_json "$T/metrics.json" 'approx(j["distortion_categorical"], 1.0)'
expect_json "$T/metrics.json" 'approx(j["distortion_continuous"], 1/3 + (3 * 0.5 + 3 * 1.0) / 6)'
end

begin "metrics: the original table itself has no loss"
ak metrics "$PATIENTS" "$PATIENTS" "${PQI[@]}"
expect_rc 0
cp "$OUT" "$T/metrics0.json"
expect_json "$T/metrics0.json" 'approx(j["gcp"], 0) and all(approx(v, 0) for v in j["ncp"].values())'
expect_json "$T/metrics0.json" 'j["distortion_categorical"] == 0 and j["distortion_continuous"] == 0'
end

begin "metrics: published stdin"
ak_in "$GOLDEN" metrics "$PATIENTS" - "${PQI[@]}" --k 2
expect_rc 0
cp "$OUT" "$T/metrics1.json"
expect_json "$T/metrics1.json" 'approx(j["gcp"], (1/3 + 1 + 0.75) / 3)'
end

begin "metrics: a value that is not a published value of the QI"
d=$(casedir)
sed '3s/25-26/foo/' "$GOLDEN" >"$d/pub.csv"
ak metrics "$PATIENTS" "$d/pub.csv" "${PQI[@]}" --k 2
expect_rc 1
expect_err_starts "$d/pub.csv:3: "
expect_err_has "'foo'"
end

# ------------------------------------------------------------ 19. recode --

# The rules of Patients at k=2, written out by hand after docs/rules-format.md:
# the root splits age at 26, nothing else is allowable.
PRULES=$T/patients-rules.csv
cat >"$PRULES" <<'EOF'
anonkit-rules,1
delimiter,","
publish,generalize
column,age,qi-numeric
column,sex,qi-categorical
column,zipcode,qi-numeric
column,disease,copied
hierarchy,sex,Male,*
hierarchy,sex,Female,*
rule,3,,26,25,26,25-26,Male,Female,Male,Female,*,,,53711,53712,53711-53712
rule,3,26,,27,28,27-28,Male,Female,Male,Female,*,,,53710,53712,53710-53712
end,2,6
EOF
# New patients: 26 inside its class, 30 above 28, 20 below 25 and 60000 above 53712.
PNEW=$T/patients-new.csv
printf 'age,sex,zipcode,disease\n26,Female,53711,Flu\n30,Male,53712,Cold\n20,Male,60000,"Broken Arm, left"\n' >"$PNEW"
PNEW_EXPECTED='age,sex,zipcode,disease
25-26,*,53711-53712,Flu
27-28,*,53710-53712,Cold
25-26,*,53711-53712,"Broken Arm, left"'

begin "recode: --help"
ak recode --help
expect_rc 0
expect_out_has "usage: anonkit recode --rules FILE INPUT -o OUTPUT"
expect_out_has "Privacy is guaranteed only for the data the rules were built on"
end

begin "recode: no --rules is a user error"
d=$(casedir)
ak recode "$PNEW" -o "$d/out.csv"
expect_user_error "" "no recoding rules given (--rules FILE" "$d/out.csv"
end

begin "recode: no input file is a user error"
d=$(casedir)
ak recode --rules "$PRULES" -o "$d/out.csv"
expect_user_error "" "recode needs the input file" "$d/out.csv"
end

begin "recode: new data, the privacy warning and the counts on stderr"
d=$(casedir)
ak recode --rules "$PRULES" "$PNEW" -o "$d/out.csv"
expect_rc 0
[ "$(cat "$d/out.csv" 2>/dev/null)" = "$PNEW_EXPECTED" ] ||
    problem "output differs: $(head -c 300 "$d/out.csv" 2>/dev/null | tr '\n' '|')"
expect_err_has "warning: privacy is guaranteed only for the data the rules were built on"
expect_err_has "recoded 3 rows of $PNEW"
expect_err_has "2 rows lie outside their class's published range"
end

begin "recode: stdin to stdout"
ak_in "$PNEW" recode --rules "$PRULES" - -o -
expect_rc 0
[ "$(cat "$OUT")" = "$PNEW_EXPECTED" ] || problem "stdout differs: $(head -c 300 "$OUT" | tr '\n' '|')"
expect_err_has "recoded 3 rows of stdin"
end

begin "recode: a malformed rules file names its line"
d=$(casedir)
# ages in (26, 26.5] belong to no rule
sed '11s/^rule,3,26,/rule,3,26.5,/' "$PRULES" >"$d/rules.csv"
ak recode --rules "$d/rules.csv" "$PNEW" -o "$d/out.csv"
expect_user_error "$d/rules.csv:11: " "does not fit the other rules" "$d/out.csv"
end

begin "recode: a value missing from the embedded hierarchy names the input line"
d=$(casedir)
printf 'age,sex,zipcode,disease\n26,Female,53711,Flu\n27,Other,53711,Flu\n' >"$d/new.csv"
ak recode --rules "$PRULES" "$d/new.csv" -o "$d/out.csv"
expect_user_error "$d/new.csv:3: " "value 'Other' of column 'sex' is not a leaf" "$d/out.csv"
end

begin "recode: a column of the rules missing from the input"
d=$(casedir)
printf 'age,sex,disease\n26,Female,Flu\n' >"$d/new.csv"
ak recode --rules "$PRULES" "$d/new.csv" -o "$d/out.csv"
expect_user_error "$d/new.csv:1: " "column 'zipcode' of the rules" "$d/out.csv"
end

# anonymize --keep-order --rules, then recode the original input: the same bytes.
round_trip() {
    local d=$1 in=$2 delim=$3
    shift 3
    ak anonymize "$in" -o "$d/pub.csv" --keep-order --rules "$d/rules.csv" "$@"
    expect_rc 0
    expect_file "$d/rules.csv"
    ak recode --rules "$d/rules.csv" "$in" -o "$d/rec.csv"
    expect_rc 0
    expect_same "$d/rec.csv" "$d/pub.csv"
    expect_err_has "0 rows lie outside their class's published range"
    [ "$(head -n 1 "$d/rules.csv" 2>/dev/null)" = "anonkit-rules,1" ] || problem "rules.csv does not start with anonkit-rules,1"
    grep -qxF -e "delimiter,$delim" -e "delimiter,\"$delim\"" "$d/rules.csv" 2>/dev/null ||
        problem "rules.csv lacks the delimiter $delim"
}

begin "recode: round trip on Patients"
d=$(casedir)
round_trip "$d" "$PATIENTS" , "${PQI[@]}" --sensitive disease --k 2
expect_same "$d/rec.csv" "$GOLDEN"
end

begin "recode: round trip on 200 people with an identifier and quoted notes"
d=$(casedir)
round_trip "$d" "$PEOPLE" , "${PEOPLE_QI[@]}"
expect_header "$d/rec.csv" , "id|age|zipcode|sex|disease|note"
end

begin "recode: round trip on ';'-separated data, published as ranges"
d=$(casedir)
round_trip "$d" "$SEMI" ';' --qi age,zipcode --delimiter ';' --k 2 --publish range
end

# ------------------------------------------------------------- 20. workload --
# A generated table with a class label, a target and a numeric sensitive column.
GEN=$T/gen.csv
"$BIN" generate --rows 3000 --seed 4 -o "$GEN" 2>/dev/null
GQI=(--qi salary,commission,age,elevel,car,zipcode,hvalue,hyears,loan)

begin "workload: --split infogain lowers the conditional entropy of the label against median"
d=$(casedir)
ak anonymize "$GEN" -o "$d/m.csv" "${GQI[@]}" --k 20 --class c2 --report "$d/m.json"
expect_rc 0
ak anonymize "$GEN" -o "$d/i.csv" "${GQI[@]}" --k 20 --split infogain --class c2 --report "$d/i.json"
expect_rc 0
expect_err_has "conditional entropy"
# InfoGain's entropy (b) is below Median's (a)
expect_json_pair "$d/m.json" "$d/i.json" 'b["metrics"]["conditional_entropy"] < a["metrics"]["conditional_entropy"]' \
    '(a["metrics"]["conditional_entropy"], b["metrics"]["conditional_entropy"])'
ak check "$d/i.csv" "${GQI[@]}" --k 20
expect_rc 0
end

begin "workload: --split regression reports the RMSE; metrics agrees"
d=$(casedir)
ak anonymize "$GEN" -o "$d/r.csv" "${GQI[@]}" --k 20 --split regression --target r7 --report "$d/r.json"
expect_rc 0
expect_err_has "RMSE"
ak metrics "$GEN" "$d/r.csv" "${GQI[@]}" --target r7
expect_rc 0
cp "$OUT" "$d/metrics.json"
# the report (a) and metrics (b) agree on the RMSE
expect_json_pair "$d/r.json" "$d/metrics.json" 'approx(a["metrics"]["rmse"], b["rmse"], 1e-9 * max(1, abs(a["metrics"]["rmse"])))' \
    '(a["metrics"]["rmse"], b["rmse"])'
end

begin "workload: --variance is met and verified; a larger bound is refuted by check"
d=$(casedir)
ak anonymize "$GEN" -o "$d/v.csv" "${GQI[@]}" --k 5 --sensitive r10 --variance 1e8
expect_rc 0
ak check "$d/v.csv" "${GQI[@]}" --k 5 --sensitive r10 --variance 1e8
expect_rc 0
ak check "$d/v.csv" "${GQI[@]}" --k 5 --sensitive r10 --variance 1e12
expect_rc 1
expect_err_has "variance of the sensitive values"
end

begin "workload: --variance larger than the whole table's is ineligible, nothing written"
d=$(casedir)
ak anonymize "$GEN" -o "$d/v.csv" "${GQI[@]}" --sensitive r10 --variance 1e15
expect_user_error "" "does not satisfy the privacy model" "$d/v.csv"
end

begin "workload: bad --split, --publish, missing --class are usage errors"
d=$(casedir)
ak anonymize "$GEN" -o "$d/x.csv" "${GQI[@]}" --split gini --k 1
expect_user_error "" "--split" "$d/x.csv"
ak anonymize "$GEN" -o "$d/x.csv" "${GQI[@]}" --publish median --k 1
expect_user_error "" "--publish" "$d/x.csv"
ak anonymize "$GEN" -o "$d/x.csv" "${GQI[@]}" --split infogain --k 1
expect_user_error "" "--class" "$d/x.csv"
end

begin "workload: --publish mean writes class means; metrics gives no NCP for them"
d=$(casedir)
ak anonymize "$GEN" -o "$d/mean.csv" "${GQI[@]}" --k 30 --publish mean --keep-order
expect_rc 0
ak check "$d/mean.csv" "${GQI[@]}" --k 30
expect_rc 0
grep -q '\.' "$d/mean.csv" || problem "no fractional mean in the output"
ak metrics "$GEN" "$d/mean.csv" "${GQI[@]}" --publish mean
expect_rc 0
expect_out_has '"gcp": null'
end


# ------------------------------------------------ 21. classification error --

# A tree worked out by hand ([Wang06] §6's classification metric). job is published at level 1
# (White/Blue) and age is 30 throughout (no cut). Training: White 5 hi 1 lo, Blue 1 hi 5 lo,
# so the root (6 hi, 6 lo) splits on job: White -> hi, Blue -> lo; C4.5's pruning keeps the
# split (as a leaf the root is estimated at 7.65 errors, the two leaves at 4.65). The tie at
# the root goes to the first label by its text, hi, although lo comes first in the file.
# Testing: White/hi right, White/lo wrong, Blue/lo right, Blue/hi wrong, * (never seen in
# training) -> the root's hi, wrong for lo: 3 errors of 5; the majority hi misses 3 of 5 too.
CE=$T/ce
mkdir -p "$CE"
printf 'Banker;White;*\nClerk;White;*\nDriver;Blue;*\nEngineer;Blue;*\n' >"$CE/job.csv"
"$PY" "$SRC/tests/class_error_tables.py" "$CE" || { echo "cli_runs: class_error_tables.py failed" >&2; exit 1; }
CEQ=(--qi job,age --hierarchy "job=$CE/job.csv")
for how in "--split-column part" "--train-rows 12"; do
    begin "metrics --class-error $how: a tree and its test error worked out by hand"
    ak metrics "$CE/orig.csv" "$CE/pub.csv" "${CEQ[@]}" --class-error income $how
    expect_rc 0
    cp "$OUT" "$CE/m.json"
    expect_json "$CE/m.json" 'j["class_error"]["column"] == "income"'
    expect_json "$CE/m.json" 'j["class_error"]["train_rows"] == 12 and j["class_error"]["test_rows"] == 5' 'j["class_error"]'
    expect_json "$CE/m.json" 'j["class_error"]["errors"] == 3 and approx(j["class_error"]["error"], 0.6)' 'j["class_error"]'
    expect_json "$CE/m.json" 'approx(j["class_error"]["majority_error"], 0.6)' 'j["class_error"]'
    expect_json "$CE/m.json" 'j["class_error"]["leaves"] == 2' 'j["class_error"]'
    end
done

begin "metrics --class-error: unmodified data separable by a QI has no error"
d=$(casedir)
"$PY" "$SRC/tests/separable_table.py" "$d/sep.csv" || problem "separable_table.py failed"
ak metrics "$d/sep.csv" "$d/sep.csv" --qi age,zipcode --class-error label --split-column part
expect_rc 0
cp "$OUT" "$d/m.json"
expect_json "$d/m.json" 'j["class_error"]["errors"] == 0 and j["class_error"]["test_rows"] == 100' 'j["class_error"]'
end

begin "metrics --class-error: --train-rows on a --keep-order publication equals --split-column on a shuffled one"
d=$(casedir)
head -n 3001 "$ADULT/adult.csv" | awk -F';' 'BEGIN{OFS=";"} {sub(/\r$/, "")} NR==1{print $0, "part"; next} {print $0, (NR <= 2001 ? "train" : "test")}' >"$d/in.csv"
AQ=(--delimiter ';' --qi age,sex,marital-status,education --numeric age --hierarchy "sex=$ADULT/adult_hierarchy_sex.csv"
    --hierarchy "marital-status=$ADULT/adult_hierarchy_marital-status.csv"
    --hierarchy "education=$ADULT/adult_hierarchy_education.csv")
ak anonymize "$d/in.csv" -o "$d/kept.csv" "${AQ[@]}" --k 10 --keep-order
expect_rc 0
ak anonymize "$d/in.csv" -o "$d/shuffled.csv" "${AQ[@]}" --k 10 --seed 5
expect_rc 0
expect_differ "$d/kept.csv" "$d/shuffled.csv"
ak metrics "$d/in.csv" "$d/kept.csv" "${AQ[@]}" --class-error salary-class --train-rows 2000
expect_rc 0
cp "$OUT" "$d/kept.json"
ak metrics "$d/in.csv" "$d/shuffled.csv" "${AQ[@]}" --class-error salary-class --split-column part
expect_rc 0
cp "$OUT" "$d/shuffled.json"
# the two ways of telling the rows apart agree
expect_json_pair "$d/kept.json" "$d/shuffled.json" \
    'a["class_error"] == b["class_error"] and a["class_error"]["train_rows"] == 2000 and a["class_error"]["test_rows"] == 1000 and 0 < a["class_error"]["error"] < 0.5' \
    '(a["class_error"], b["class_error"])'
end

begin "metrics --class-error: usage errors and a bad split value"
ak metrics "$CE/orig.csv" "$CE/pub.csv" "${CEQ[@]}" --class-error income
expect_rc 1
expect_err_has "--class-error needs one of --train-rows"
ak metrics "$CE/orig.csv" "$CE/pub.csv" "${CEQ[@]}" --class-error income --train-rows 3 --split-column part
expect_rc 1
expect_err_has "--class-error needs one of --train-rows"
ak metrics "$CE/orig.csv" "$CE/pub.csv" "${CEQ[@]}" --train-rows 3
expect_rc 1
expect_err_has "go with --class-error"
ak metrics "$CE/orig.csv" "$CE/pub.csv" "${CEQ[@]}" --class-error income --train-rows 17
expect_rc 1
expect_err_has "leaves no row to test"
ak metrics "$CE/orig.csv" "$CE/pub.csv" "${CEQ[@]}" --class-error income --train-rows 0
expect_rc 1
expect_err_has "--train-rows"
ak metrics "$CE/orig.csv" "$CE/pub.csv" "${CEQ[@]}" --class-error nope --train-rows 3
expect_rc 1
expect_err_has "no column named 'nope'"
sed '4s/,train$/,validation/' "$CE/pub.csv" >"$CE/bad.csv"
ak metrics "$CE/orig.csv" "$CE/bad.csv" "${CEQ[@]}" --class-error income --split-column part
expect_rc 1
expect_err_starts "$CE/bad.csv:4:"
expect_err_has "'validation'"
ak metrics --help
expect_out_has "--class-error"
end

finish
