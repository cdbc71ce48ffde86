#!/usr/bin/env bash
# cli_closeness.sh — command-line cases of t-closeness, δ-disclosure privacy and
# β-likeness ([Li07], [Brickell08], [Cao12]): `anonkit check` on the salary
# example of [Li07] §4.2 published by hand (EMD 0.375 exactly: t = 0.375 holds,
# t = 0.37 does not); Adult with occupation under its hierarchy through Mondrian,
# Rothko-T and Incognito, each output proven by `check` and its report giving
# the least t, δ and β; Rothko-T's output equal to Mondrian's; bad parameters
# and inputs (message naming the option, exit 1, nothing written).
#
# usage: bash tests/cli_closeness.sh PATH/TO/anonkit SOURCE_DIR
set -u
source "$(dirname "$0")/cli_harness.sh" cli-closeness "$@"

# A user error: exit 1, TEXT on stderr, nothing at OUTPATH.
expect_user_error() {
    expect_rc 1
    expect_err_has "$1"
    [ ! -e "$2" ] || problem "output $2 exists after a failure"
    [ -z "$(find "$(dirname "$2")" -maxdepth 1 -name '*.tmp-*' | head -n 1)" ] || problem "temporary file left"
}

QI=age,sex,race,marital-status,education,native-country,workclass
H=()
for a in sex race marital-status education native-country workclass; do
    H+=(--hierarchy "$a=$ADULT/adult_hierarchy_$a.csv")
done
OCC=(--sensitive occupation --hierarchy "occupation=$ADULT/adult_hierarchy_occupation.csv")

# ------------------------------------------------------- the salary example --
S=$T/salary
mkdir "$S"
# Q = 3k..11k; classes {3k,4k,5k} (EMD 3/8), {6k,8k,11k} (1/6), {7k,9k,10k}.
cat >"$S/pub.csv" <<'EOF2'
zip,salary
476**,3000
476**,4000
476**,5000
4790*,6000
4790*,8000
4790*,11000
4760*,7000
4760*,9000
4760*,10000
EOF2

begin "check: salary example, ordered distance, t = 0.375 holds exactly"
ak check "$S/pub.csv" --qi zip --sensitive salary --t 0.375 --t-distance ordered
expect_rc 0
expect_out_has "achieved: least t 0.375 (ordered distance)"
end

begin "check --achieved: the least t, delta and beta beside k and l, without asking for a closeness model"
ak check "$S/pub.csv" --qi zip --sensitive salary --achieved
expect_rc 0
expect_out_has "achieved: k = 3"
expect_out_has "achieved: least t 0.375 (ordered distance)"
expect_out_has "least beta 2"
end

begin "check: salary example, t = 0.37 fails on the class of 3k-5k"
ak check "$S/pub.csv" --qi zip --sensitive salary --t 0.37
expect_rc 1
expect_err_has "class (zip=476**) of 3 rows violates the privacy model: EMD (ordered distance)"
end

begin "check: salary example, equal distance: 2/3"
ak check "$S/pub.csv" --qi zip --sensitive salary --t 0.6666666666666667 --t-distance equal
expect_rc 0
ak check "$S/pub.csv" --qi zip --sensitive salary --t 0.666 --t-distance equal
expect_rc 1
end

begin "check: delta-disclosure fails on a class lacking values; beta on the increase 2"
ak check "$S/pub.csv" --qi zip --sensitive salary --delta-disclosure 5
expect_rc 1
expect_err_has "missing from the class"
ak check "$S/pub.csv" --qi zip --sensitive salary --beta 2
expect_rc 0
expect_out_has "least beta 2"
ak check "$S/pub.csv" --qi zip --sensitive salary --beta 1.99
expect_rc 1
end

# ------------------------------------------------------------- Adult --
for algo in mondrian rothko-t incognito; do
    begin "adult, $algo, k = 5, t = 0.2 (hierarchical), proven by check; report gives the least t"
    D=$(casedir)
    extra=()
    [ "$algo" = rothko-t ] && extra=(--memory 8M)
    num=(--hierarchy "age=$ADULT/adult_hierarchy_age.csv")
    [ "$algo" != incognito ] && num=(--numeric age)
    ak anonymize "$ADULT/adult.csv" -o "$D/out.csv" --report "$D/r.json" --delimiter ';' --qi $QI "${num[@]}" \
        "${H[@]}" "${OCC[@]}" --k 5 --t 0.2 --algorithm $algo --seed 3 "${extra[@]}"
    expect_rc 0
    if [ "$algo" != rothko-t ]; then
        expect_json "$D/r.json" 'j["parameters"]["t"] == 0.2 and j["parameters"]["t-distance"] == "hierarchical"'
        expect_json "$D/r.json" '0 <= j["metrics"]["achieved"]["t"] <= 0.2 + 1e-12'
    fi
    ak check "$D/out.csv" --delimiter ';' --qi $QI "${OCC[@]}" --k 5 --t 0.2
    expect_rc 0
    expect_out_has "(hierarchical distance)"
    cp "$D/out.csv" "$T/adult-$algo.csv"
    end
done

begin "adult: Rothko-T publishes Mondrian's rows under t-closeness (as multisets)"
if ! cmp -s <(sort "$T/adult-mondrian.csv") <(sort "$T/adult-rothko-t.csv"); then
    problem "rothko-t and mondrian differ"
fi
end

begin "adult: delta-disclosure and enhanced beta-likeness with salary-class, proven by check"
D=$(casedir)
ak anonymize "$ADULT/adult.csv" -o "$D/out.csv" --delimiter ';' --qi $QI --numeric age "${H[@]}" \
    --sensitive salary-class --k 10 --delta-disclosure 0.8 --beta 0.5 --beta-variant enhanced --seed 1
expect_rc 0
ak check "$D/out.csv" --delimiter ';' --qi $QI --sensitive salary-class --k 10 --delta-disclosure 0.8 --beta 0.5 \
    --beta-variant enhanced
expect_rc 0
end

# ---------------------------------------------------------- bad input --
B=$T/bad
mkdir "$B"
run_bad() { # NAME TEXT ARGS...: anonymize must fail with TEXT and write nothing
    local name=$1 text=$2
    shift 2
    begin "refused: $name"
    ak anonymize "$ADULT/adult.csv" -o "$B/out.csv" --delimiter ';' --qi $QI --numeric age "${H[@]}" "$@"
    expect_user_error "$text" "$B/out.csv"
    end
}
run_bad "t above 1" "--t must be a number in [0, 1]" "${OCC[@]}" --t 1.5
run_bad "t below 0" "--t must be a number in [0, 1]" "${OCC[@]}" --t -0.1
run_bad "delta 0" "--delta-disclosure must be a positive number" "${OCC[@]}" --delta-disclosure 0
run_bad "beta 0" "--beta must be a positive number" "${OCC[@]}" --beta 0
run_bad "unknown distance" "--t-distance: 'manhattan' is not one of" "${OCC[@]}" --t 0.2 --t-distance manhattan
run_bad "unknown beta variant" "--beta-variant: 'strong' is not one of" "${OCC[@]}" --beta 1 --beta-variant strong
run_bad "hierarchical without a hierarchy" "--t-distance hierarchical needs a hierarchy for sensitive column" \
    --sensitive occupation --t 0.2 --t-distance hierarchical
run_bad "ordered on a non-numeric column" "--t-distance ordered needs a numeric sensitive column" \
    --sensitive occupation --t 0.2 --t-distance ordered
run_bad "t without a sensitive column" "--t needs a sensitive column" --t 0.2
run_bad "1-D algorithm" "--algorithm hilbert cannot guarantee t-closeness" "${OCC[@]}" --k 5 --t 0.2 --algorithm hilbert
printf 'Tech-support;Technical;*\nCraft-repair;Technical;*\n' >"$B/short.csv"
run_bad "a value the sensitive hierarchy lacks" "is not a leaf of its hierarchy" \
    --sensitive occupation --hierarchy "occupation=$B/short.csv" --t 0.2
run_bad "incognito with suppression" "breaks the generalization property" \
    "${OCC[@]}" --t 0.2 --algorithm incognito --suppression 0.05 --hierarchy "age=$ADULT/adult_hierarchy_age.csv"

begin "refused: a combination the whole table cannot satisfy writes nothing"
ak anonymize "$ADULT/adult.csv" -o "$B/out.csv" --delimiter ';' --qi $QI --numeric age "${H[@]}" "${OCC[@]}" \
    --t 0.2 --l 15
expect_rc 1
[ ! -e "$B/out.csv" ] || problem "output written"
end

begin "refused: sequential releases do not take --t"
D=$SRC/tests/data/sequential
ak sequential "$D/t1.csv" --previous "$D/t2.csv" -o "$B/seq.csv" --x Name --y Disease --anonymity 2 --class Class \
    --hierarchy "Job=$D/job.csv" --hierarchy "Name=$D/name.csv" --t 0.2
expect_user_error "are not taken by sequential releases" "$B/seq.csv"
end

begin "check: t without a sensitive column"
ak check "$S/pub.csv" --qi zip --t 0.2
expect_rc 1
expect_err_has "--t needs a sensitive column"
end

# ------------------------------------------- missing values with t-closeness --
begin "missing ages (empty cells) with t = 0.3 and delta 2: Mondrian keeps missing apart, check proves it"
python3 - "$T/miss.csv" <<'PY'
import random, sys
rng = random.Random(7)
with open(sys.argv[1], "w") as f:
    f.write("age,zip,disease\n")
    for i in range(600):
        age = "" if rng.random() < 0.15 else str(rng.randint(18, 90))
        f.write("%s,%d,%s\n" % (age, rng.randint(47600, 47699), rng.choice(["flu", "cancer", "ulcer", "bronchitis"])))
PY
ak anonymize "$T/miss.csv" -o "$T/miss-out.csv" --qi age,zip --sensitive disease --k 4 --t 0.3 --t-distance equal \
    --seed 3
expect_rc 0
ak check "$T/miss-out.csv" --qi age,zip --sensitive disease --k 4 --t 0.3 --t-distance equal
expect_rc 0
python3 - "$T/miss-out.csv" <<'PY' || problem "a class mixes missing and present ages"
import csv, sys, collections
mixed = collections.defaultdict(set)
rows = list(csv.DictReader(open(sys.argv[1])))
for r in rows:
    mixed[(r["age"], r["zip"])].add(r["age"] == "")
sys.exit(1 if any(len(v) > 1 for v in mixed.values()) or not any(r["age"] == "" for r in rows) else 0)
PY
end

finish
