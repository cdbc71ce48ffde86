#!/usr/bin/env bash
# cli_risk.sh — command-line cases of `anonkit risk` (docs/risk.md), `anonkit
# check --achieved` and `anonymize --max-risk` / the report's risk block: a
# hand-worked table, published files with suppressed rows, standard input, a
# model that cannot be fitted (null and a note, never a number), and bad
# input (issue part 7): a population smaller than the sample, a sampling
# fraction outside (0, 1], weights that are not positive numbers, --suda above
# the number of QIs, --max-risk kinds an algorithm does not support: each a
# clear message, exit 1 and nothing at the --json path.
#
# usage: bash tests/cli_risk.sh PATH/TO/anonkit SOURCE_DIR
set -u
source "$(dirname "$0")/cli_harness.sh" cli-risk "$@"

# A user error: exit 1, "anonkit: LOCATION..." with TEXT, nothing at OUTPATH.
expect_user_error() {
    expect_rc 1
    expect_err_starts "$1"
    expect_err_has "$2"
    [ ! -e "$3" ] || problem "output $3 exists after a failure"
    [ -z "$(find "$(dirname "$3")" -maxdepth 1 -name '*.tmp-*' | head -n 1)" ] || problem "temporary file left"
}

D=$T/data
mkdir "$D"
# Classes (zip, sex): (1,m) x1, (2,m) x1, (3,f) x2, (4,f) x4: 8 rows, 4 classes.
cat >"$D/t.csv" <<'CSV'
zip,sex,disease,w
1,m,flu,10
2,m,flu,10
3,f,flu,5
3,f,cold,5
4,f,flu,2
4,f,cold,2
4,f,hiv,2
4,f,flu,2
CSV
# A population holding the sample: class sizes 2, 5, 2, 8.
{
    echo "zip,sex"
    for i in 1 2; do echo "1,m"; done
    for i in 1 2 3 4 5; do echo "2,m"; done
    for i in 1 2; do echo "3,f"; done
    for i in 1 2 3 4 5 6 7 8; do echo "4,f"; done
    echo "9,f"
} >"$D/pop.csv"

begin "hand-worked table: prosecutor, marketer, uniques, class sizes"
ak risk "$D/t.csv" --qi zip,sex --threshold 0.3 --json "$T/hand.json"
expect_rc 0
# with --json the file holds the figures and the summary goes to stderr
expect_err_has "8 rows in 4 classes; sample uniques 2 (25.00%)"
expect_err_has "prosecutor risk: highest 1, lowest 0.25, average 0.5; records at risk (> 0.3) 50.00%"
[ ! -s "$OUT" ] || problem "stdout should be empty with --json"
ak risk "$D/t.csv" --qi zip,sex --threshold 0.3
expect_rc 0
expect_out_has "marketer risk (success rate): 0.5"
expect_json "$T/hand.json" 'j["risk"]["prosecutor"]["average_risk"] == 0.5 and j["risk"]["marketer"]["success_rate"] == 0.5'
expect_json "$T/hand.json" '[c["records"] for c in j["risk"]["class_sizes"]][:3] == [2, 2, 4]'
expect_json "$T/hand.json" '"note" in j["risk"]["journalist"] and "population_uniques" not in j["risk"]'
end

begin "journalist risk from a population table"
ak risk "$D/t.csv" --qi zip,sex --threshold 0.3 --population "$D/pop.csv" --json "$T/pop.json"
expect_rc 0
expect_json "$T/pop.json" 'j["risk"]["journalist"]["highest_risk"] == 0.5 and j["risk"]["journalist"]["lowest_risk"] == 0.125'
expect_json "$T/pop.json" 'abs(j["risk"]["journalist"]["average_risk"] - 2.2 / 8) < 1e-15 and abs(j["risk"]["marketer"]["success_rate"] - 2.2 / 8) < 1e-15'
end

begin "individual risk with weights (Benedetti-Franconi) and the global risk"
ak risk "$D/t.csv" --qi zip,sex --weight w --json "$T/w.json"
expect_rc 0
# class (1,m): f = 1, F = 10: p/(1-p) ln(1/p) with p = 0.1
expect_json "$T/w.json" 'abs(j["risk"]["individual_risk"]["highest"] - (0.1/0.9)*__import__("math").log(10)) < 1e-12'
end

begin "a model that cannot be fitted is null with a note"
# no class of size 2: SNB cannot be fitted
printf 'a\n1\n2\n3\n3\n3\n' >"$D/nopairs.csv"
ak risk "$D/nopairs.csv" --qi a --sampling-fraction 0.5 --json "$T/np.json"
expect_rc 0
expect_json "$T/np.json" 'j["risk"]["population_uniques"]["snb"]["uniques"] is None and "note" in j["risk"]["population_uniques"]["snb"]'
expect_err_has "SNB null ("
end

begin "published file: all-* rows are suppressed under --suppression, as check counts them"
printf 'zip,sex,disease\n*,*,flu\n1-2,m,flu\n1-2,m,cold\n3-4,f,flu\n3-4,f,hiv\n3-4,f,flu\n*,*,flu\n1-2,m,flu\n3-4,f,flu\n3-4,f,cold\n' >"$D/pub.csv"
ak risk "$D/pub.csv" --qi zip,sex --published --suppression 0.2 --sensitive disease --json "$T/pub.json"
expect_rc 0
expect_json "$T/pub.json" 'j["rows_suppressed"] == 2 and j["risk"]["classes"] == 2 and j["risk"]["rows"] == 8'
expect_json "$T/pub.json" 'j["achieved"]["k"] == 3 and j["achieved"]["l_distinct"] == 2'
ak check "$D/pub.csv" --qi zip,sex --suppression 0.2 --k 3
expect_rc 0
ak check "$D/pub.csv" --qi zip,sex --suppression 0.2 --k 4
expect_rc 1
end

begin "standard input"
timeout 60 "$BIN" risk - --qi zip,sex <"$D/t.csv" >"$OUT" 2>"$ERR"
RC=$?
expect_rc 0
expect_out_has "stdin: 8 rows in 4 classes"
end

begin "check --achieved prints the achieved parameters"
ak check "$D/pub.csv" --qi zip,sex --sensitive disease --suppression 0.2 --achieved
expect_rc 0
expect_out_has "achieved: k = 3"
expect_out_has "achieved: distinct l = 2"
end

# ------------------------------------------------------------ bad input --

begin "population size smaller than the sample"
ak risk "$D/t.csv" --qi zip,sex --population-size 7 --json "$T/bad1.json"
expect_user_error "$D/t.csv: " "--population-size 7 is smaller than the 8 rows of the sample" "$T/bad1.json"
end

begin "population table smaller than the sample"
printf 'zip,sex\n1,m\n2,m\n' >"$D/small.csv"
ak risk "$D/t.csv" --qi zip,sex --population "$D/small.csv" --json "$T/bad2.json"
expect_user_error "$D/small.csv:3: " "the population has 2 rows, fewer than the 8 rows of the sample" "$T/bad2.json"
end

begin "population table missing part of a class"
printf 'zip,sex\n1,m\n2,m\n3,f\n4,f\n4,f\n4,f\n4,f\n9,f\n9,f\n' >"$D/short.csv"
ak risk "$D/t.csv" --qi zip,sex --population "$D/short.csv" --json "$T/bad3.json"
expect_user_error "$D/t.csv:4: " "2 rows in the sample but only 1 in the population" "$T/bad3.json"
end

for f in 0 1.5 -0.2 abc; do
    begin "sampling fraction $f outside (0, 1]"
    ak risk "$D/t.csv" --qi zip,sex --sampling-fraction "$f" --json "$T/bad4.json"
    expect_user_error "--sampling-fraction" "must be a number in (0, 1], not '$f'" "$T/bad4.json"
    end
done

for w in 0 -3 x; do
    begin "weight '$w' that is not a positive number"
    sed "4s/,5\$/,$w/" "$D/t.csv" >"$D/badw.csv"
    ak risk "$D/badw.csv" --qi zip,sex --weight w --sampling-fraction 0.1 --json "$T/bad5.json"
    expect_user_error "$D/badw.csv:4: " "the weight '$w' of column 'w' is not a positive number" "$T/bad5.json"
    end
done

begin "--suda above the number of QIs"
ak risk "$D/t.csv" --qi zip,sex --suda 3 --json "$T/bad6.json"
expect_user_error "--suda 3" "is more attributes than the 2 quasi-identifiers" "$T/bad6.json"
end

begin "--max-risk average for an algorithm other than incognito"
ak anonymize "$ADULT/adult.csv" --job "$ADULT/job.json" -o "$T/bad7.csv" --max-risk average=0.05
expect_user_error "--max-risk average=R and uniqueness=R are supported by --algorithm incognito only" "mondrian takes --max-risk highest=R" "$T/bad7.csv"
end

begin "--max-risk with a bad kind or value"
ak anonymize "$ADULT/adult.csv" --job "$ADULT/job.json" -o "$T/bad8.csv" --max-risk worst=0.1
expect_user_error "--max-risk: expected average=R" "got 'worst=0.1'" "$T/bad8.csv"
ak anonymize "$ADULT/adult.csv" --job "$ADULT/job.json" -o "$T/bad8.csv" --max-risk highest=0
expect_user_error "--max-risk: the risk '0'" "(0, 1]" "$T/bad8.csv"
end

begin "--max-risk average with --suppression is refused"
ak anonymize "$ADULT/adult.csv" --job "$ADULT/job.json" --algorithm incognito -o "$T/bad9.csv" --max-risk average=0.05 --suppression 0.01
expect_user_error "--max-risk average=R and uniqueness=R cannot go with --suppression" "monotonicity" "$T/bad9.csv"
end

# ------------------------------------------------------------ anonymize --

begin "highest=R is k = ceil(1/R), said in the report; risk of input and output side by side"
ak anonymize "$ADULT/adult.csv" --job "$ADULT/job.json" -o "$T/h.csv" --report "$T/h.json" --max-risk highest=0.04
expect_rc 0
expect_json "$T/h.json" 'j["parameters"]["k"] == 25 and j["risk"]["max_risk"]["k_equivalent"] == 25'
expect_json "$T/h.json" 'j["risk"]["output"]["prosecutor"]["highest_risk"] <= 0.04 and j["risk"]["input"]["rows"] == j["risk"]["output"]["rows"]'
expect_err_has "k = ceil(1/R) = 25"
ak check "$T/h.csv" --job "$ADULT/job.json" --k 25
expect_rc 0
# the report's achieved parameters (from the partition) are the verifier's (from the published file)
expect_json "$T/h.json" 'j["risk"]["achieved"]["k"] >= 25 and j["risk"]["achieved"]["l_distinct"] >= 3'
ak check "$T/h.csv" --job "$ADULT/job.json" --achieved
k=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["risk"]["achieved"]["k"])' "$T/h.json")
l=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["risk"]["achieved"]["l_distinct"])' "$T/h.json")
expect_out_has "achieved: k = $k"
expect_out_has "achieved: distinct l = $l,"
end

begin "incognito --max-risk average=R: the output's average prosecutor risk is at most R"
ak anonymize "$ADULT/adult.csv" --job "$ADULT/job.json" --algorithm incognito --k 2 -o "$T/a.csv" --report "$T/a.json" --max-risk average=0.02
expect_rc 0
expect_json "$T/a.json" 'j["risk"]["output"]["prosecutor"]["average_risk"] <= 0.02'
ak risk "$T/a.csv" --job "$ADULT/job.json" --published --json "$T/ar.json"
expect_rc 0
expect_json "$T/ar.json" 'j["risk"]["prosecutor"]["average_risk"] <= 0.02'
end

begin "incognito --max-risk uniqueness=R with a population size"
ak anonymize "$ADULT/adult.csv" --job "$ADULT/job.json" --algorithm incognito --k 1 -o "$T/u.csv" --report "$T/u.json" --max-risk uniqueness=0.0001 --population-size 300000
expect_rc 0
expect_json "$T/u.json" 'j["risk"]["output"]["sample_uniques"]["records"] <= 30'
end

finish
