#!/usr/bin/env bash
# cli_incognito.sh — command-line cases of `anonkit anonymize --algorithm
# incognito` and of `anonkit check --suppression`: the Patients example of
# [LeFevre05] (k-minimal nodes worked out by hand in tests/test_incognito.c),
# suppression accounting proven by the verifier, the ARX Adult example with a
# numeric QI under an interval hierarchy, and bad input (QIs without or with
# broken hierarchies, bad options): message, exit code, nothing at the output.
#
# usage: bash tests/cli_incognito.sh PATH/TO/anonkit SOURCE_DIR
#
# Prints "ok - NAME" or "not ok - NAME" with "#   ..." details per case, then
# "N passed, M failed"; exits 1 if any case failed. Needs /usr/bin/python3.
set -u
source "$(dirname "$0")/cli_harness.sh" cli-incognito "$@"

# A user error: exit 1, "anonkit: LOCATION..." with TEXT, nothing at OUTPATH or beside it.
expect_user_error() {
    expect_rc 1
    expect_err_starts "$1"
    expect_err_has "$2"
    [ ! -e "$3" ] || problem "output $3 exists after a failure"
    [ -z "$(find "$(dirname "$3")" -maxdepth 1 -name '*.tmp-*' | head -n 1)" ] || problem "temporary file left"
}
# expect_cell FILE ROW COL TEXT: field COL of data row ROW (both from 1) of a CSV.
expect_cell() {
    local got
    got=$("$PY" -c 'import csv,sys; r=list(csv.reader(open(sys.argv[1])))[int(sys.argv[2])]; print(r[int(sys.argv[3])-1])' "$1" "$2" "$3")
    [ "$got" = "$4" ] || problem "$1 row $2 column $3 is '$got', expected '$4'"
}

# ------------------------------------------------------------ fixtures --

P=$T/patients
mkdir "$P"
cat >"$P/patients.csv" <<'EOF'
Birthdate,Sex,Zipcode,Disease
1/21/76,Male,53715,Flu
4/13/86,Female,53715,Hepatitis
2/28/76,Male,53703,Brochitis
1/21/76,Male,53703,Broken Arm
4/13/86,Female,53706,AIDS
2/28/76,Male,53706,Hang Nail
EOF
printf '53715;5371*;537**\n53710;5371*;537**\n53706;5370*;537**\n53703;5370*;537**\n' >"$P/zip.csv"
printf '1/21/76;*\n2/28/76;*\n4/13/86;*\n' >"$P/birth.csv"
printf 'Male;*\nFemale;*\n' >"$P/sex.csv"
# Without --qi and the zip hierarchy, for the cases that vary them.
PAT0=("$P/patients.csv" --hierarchy Birthdate="$P/birth.csv" --hierarchy Sex="$P/sex.csv" --algorithm incognito
      --keep-order)
PAT=("${PAT0[@]}" --qi Birthdate,Sex,Zipcode --hierarchy Zipcode="$P/zip.csv")

# ---------------------------------------------------------------- cases --

begin "patients k=2: k-minimal <B0,S0,Z2> and <B1,S1,Z0>, least GCP published, verified"
ak anonymize "${PAT[@]}" --k 2 -o "$P/k2.csv" --report "$P/k2.json"
expect_rc 0
expect_err_has "incognito (cube): 6 anonymous nodes, 2 k-minimal"
expect_json "$P/k2.json" "[m['name'] for m in j['incognito']['k_minimal']] == ['<Birthdate=0, Sex=0, Zipcode=2>', '<Birthdate=1, Sex=1, Zipcode=0>']"
expect_json "$P/k2.json" "j['incognito']['chosen']['levels'] == [0, 0, 2] and abs(j['incognito']['chosen']['gcp'] - 1/3) < 1e-12"
expect_json "$P/k2.json" "j['incognito']['anonymous_count'] == 6 and j['rows_suppressed'] == 0"
expect_cell "$P/k2.csv" 1 3 "537**"
expect_cell "$P/k2.csv" 1 1 "1/21/76"
ak check "$P/k2.csv" --qi Birthdate,Sex,Zipcode --k 2
expect_rc 0
end

begin "patients k=2 --choose height / dm: every variant finds the same nodes"
for v in basic super-roots cube bottom-up bottom-up-norollup; do
    ak anonymize "${PAT[@]}" --k 2 -o "$P/v.csv" --report "$P/v.json" --incognito-variant "$v" --choose dm
    expect_rc 0
    expect_json "$P/v.json" "[m['levels'] for m in j['incognito']['k_minimal']] == [[0,0,2],[1,1,0]] and j['incognito']['variant'] == '$v'"
done
ak anonymize "${PAT[@]}" --k 2 -o "$P/v.csv" --report "$P/v.json" --incognito-variant binary-search --choose height
expect_rc 0
expect_json "$P/v.json" "j['incognito']['anonymous_complete'] is False and [m['levels'] for m in j['incognito']['k_minimal']] == [[0,0,2],[1,1,0]]"
end

begin "patients k=3 --suppression 0.34: 2 rows starred and counted; check with and without the limit"
ak anonymize "${PAT[@]}" --k 3 --suppression 0.34 -o "$P/k3.csv" --report "$P/k3.json"
expect_rc 0
expect_err_has "published 4 rows, suppressed 2"
expect_json "$P/k3.json" "j['rows_suppressed'] == 2 and j['incognito']['suppression_limit_rows'] == 2 and j['incognito']['chosen']['levels'] == [1, 0, 2]"
expect_cell "$P/k3.csv" 2 1 "*"
expect_cell "$P/k3.csv" 2 2 "*"
expect_cell "$P/k3.csv" 2 3 "*"
expect_cell "$P/k3.csv" 2 4 "Hepatitis"
ak check "$P/k3.csv" --qi Birthdate,Sex,Zipcode --k 3 --suppression 0.34
expect_rc 0
expect_err_has "4 rows in 1 classes satisfy the privacy model, 2 rows suppressed"
ak check "$P/k3.csv" --qi Birthdate,Sex,Zipcode --k 3 --suppression 0.2
expect_rc 1
expect_err_has "more than the 1 that --suppression 0.2 allows"
ak check "$P/k3.csv" --qi Birthdate,Sex,Zipcode --k 3
expect_rc 1
expect_err_has "violates the privacy model"
# metrics of the published file, told the limit, agree with the run's own (GCP 7/9, DM 4^2 + 2*6)
ak metrics "$P/patients.csv" "$P/k3.csv" --qi Birthdate,Sex,Zipcode --hierarchy Zipcode="$P/zip.csv" \
    --hierarchy Birthdate="$P/birth.csv" --hierarchy Sex="$P/sex.csv" --k 3 --suppression 0.34
expect_rc 0
cp "$OUT" "$P/k3-metrics.json"
expect_json "$P/k3-metrics.json" "j['rows_suppressed'] == 2 and j['classes'] == 1 and j['dm'] == 28 and abs(j['gcp'] - 7/9) < 1e-12"
expect_json "$P/k3.json" "j['metrics']['dm'] == 28 and abs(j['metrics']['gcp'] - 7/9) < 1e-12"
end

begin "patients k=3 without suppression: only the top node"
ak anonymize "${PAT[@]}" --k 3 -o "$P/top.csv" --report "$P/top.json"
expect_rc 0
expect_json "$P/top.json" "j['incognito']['anonymous'] == [[1, 1, 2]]"
end

begin "adult example: numeric age under its interval hierarchy, k=10 and distinct 3-diversity verified"
ak anonymize --job "$ADULT/job.json" --algorithm incognito -o "$T/adult.csv" --report "$T/adult.json"
expect_rc 0
expect_json "$T/adult.json" "j['incognito']['anonymous_count'] >= len(j['incognito']['k_minimal']) >= 1"
expect_json "$T/adult.json" "j['rows_published'] + j['rows_suppressed'] == j['rows_read'] == 30162"
ak check "$T/adult.csv" --job "$ADULT/job.json"
expect_rc 0
end

begin "adult example, 2 % suppression: optimal, exhaustive and cube publish the same node of least GCP"
for v in optimal exhaustive cube; do
    ak anonymize --job "$ADULT/job.json" --algorithm incognito --incognito-variant $v --suppression 0.02 \
        -o "$T/adult-$v.csv" --report "$T/adult-$v.json"
    expect_rc 0
    ak check "$T/adult-$v.csv" --job "$ADULT/job.json" --suppression 0.02
    expect_rc 0
done
cmp -s "$T/adult-optimal.csv" "$T/adult-exhaustive.csv" || problem "optimal and exhaustive publish different tables"
cmp -s "$T/adult-optimal.csv" "$T/adult-cube.csv" || problem "optimal and cube publish different tables"
expect_json "$T/adult-exhaustive.json" "j['incognito']['optimum']['nodes_checked'] == j['incognito']['optimum']['lattice_nodes']"
expect_json "$T/adult-optimal.json" "j['incognito']['optimum']['nodes_checked'] < j['incognito']['optimum']['lattice_nodes']"
expect_json "$T/adult-optimal.json" "j['incognito']['chosen']['rows_suppressed'] == j['rows_suppressed'] <= j['incognito']['suppression_limit_rows']"
# No k-minimal node has less GCP than the chosen one (suppressed rows counted as fully generalized).
expect_json "$T/adult-cube.json" "all(j['incognito']['chosen']['gcp'] <= m['gcp'] + 1e-12 for m in j['incognito']['k_minimal'])"
end

begin "adult example: --choose k-minimal publishes the k-minimal node of least GCP"
ak anonymize --job "$ADULT/job.json" --algorithm incognito --choose k-minimal --suppression 0.02 \
    -o "$T/adult-km.csv" --report "$T/adult-km.json"
expect_rc 0
expect_json "$T/adult-km.json" "j['incognito']['chosen'] in j['incognito']['k_minimal'] and 'optimum' not in j['incognito']"
expect_json "$T/adult-km.json" "j['incognito']['chosen']['gcp'] == min(m['gcp'] for m in j['incognito']['k_minimal'])"
ak anonymize --job "$ADULT/job.json" --algorithm incognito --choose k-minimal --incognito-variant optimal -o "$T/adult-km2.csv"
expect_user_error "" "--choose k-minimal needs every k-minimal node" "$T/adult-km2.csv"
end

begin "adult example: local recoding, every row at its own levels, verified"
ak anonymize --job "$ADULT/job.json" --algorithm local -o "$T/adult-local.csv" --report "$T/adult-local.json"
expect_rc 0
ak check "$T/adult-local.csv" --job "$ADULT/job.json"
expect_rc 0
expect_json "$T/adult-local.json" "j['rows_suppressed'] == j['local']['rows_suppressed'] == 0"
expect_json "$T/adult-local.json" "sum(i['published'] for i in j['local']['iterations']) == j['rows_read'] == 30162"
expect_json "$T/adult-local.json" "len(set(tuple(i['levels']) for i in j['local']['iterations'])) == j['local']['iterations_count'] > 1"
ak anonymize --job "$ADULT/job.json" --algorithm local --choose dm -o "$T/adult-local2.csv"
expect_user_error "" "go with --algorithm incognito, not local" "$T/adult-local2.csv"
end

begin "adult example: local recoding under entropy and recursive l-diversity, t-closeness, delta, beta: verified"
for m in "--l-variant entropy --l 3" "--l-variant recursive --l 3 --c 3" "--l-variant probabilistic --l 3" \
    "--t 0.2" "--delta-disclosure 1.5" "--beta 1"; do
    f=$(echo "$m" | tr -dc 'a-z0-9')
    ak anonymize --job "$ADULT/job.json" --algorithm local $m -o "$T/local-$f.csv" --report "$T/local-$f.json"
    expect_rc 0
    ak check "$T/local-$f.csv" --job "$ADULT/job.json" $m
    expect_rc 0
    expect_json "$T/local-$f.json" "j['local']['method'] == 'split' and j['rows_suppressed'] == j['local']['rows_suppressed'] == 0"
    expect_json "$T/local-$f.json" "j['local']['classes'] == j['classes'] > 1 and j['local']['splits'] < j['local']['classes_examined']"
done
# --suppression is an allowance for rows no class can take, with any model (the top-down split needs none here)
ak anonymize --job "$ADULT/job.json" --algorithm local --l-variant entropy --l 3 --suppression 0.01 -o "$T/local-s.csv"
expect_rc 0
cmp -s "$T/local-s.csv" "$T/local-lvariantentropyl3.csv" || problem "--suppression changed the output"
end

begin "local recoding: a model no generalization satisfies fails with nothing written"
ak anonymize --job "$ADULT/job.json" --algorithm local --l-variant entropy --l 13 -o "$T/local-none.csv"
expect_user_error "" "local recoding could not publish 30162 of 30162 rows" "$T/local-none.csv"
end

begin "a QI without a hierarchy is refused"
ak anonymize "${PAT0[@]}" --k 2 --qi Birthdate,Sex,Zipcode,Disease --hierarchy Zipcode="$P/zip.csv" -o "$P/none.csv"
expect_user_error "" "needs a hierarchy for every quasi-identifier, and 'Disease' has none" "$P/none.csv"
end

begin "a hierarchy with rows of unequal length is refused with its line"
printf '53715;5371*;537**\n53710;537**\n' >"$P/short.csv"
ak anonymize "${PAT0[@]}" --k 2 --qi Birthdate,Sex,Zipcode --hierarchy Zipcode="$P/short.csv" -o "$P/bad1.csv"
expect_user_error "$P/short.csv:2: " "expected 3 fields" "$P/bad1.csv"
end

begin "a hierarchy label with two parents is refused"
printf '53715;5371*;537**\n53710;5371*;538**\n53706;5370*;537**\n53703;5370*;537**\n' >"$P/twoparents.csv"
ak anonymize "${PAT0[@]}" --k 2 --qi Birthdate,Sex,Zipcode --hierarchy Zipcode="$P/twoparents.csv" -o "$P/bad2.csv"
expect_user_error "$P/twoparents.csv:2: " "5371*" "$P/bad2.csv"
end

begin "a value missing from its hierarchy is refused"
printf '53710;5371*;537**\n53706;5370*;537**\n53703;5370*;537**\n' >"$P/missing.csv"
ak anonymize "${PAT0[@]}" --k 2 --qi Birthdate,Sex,Zipcode --hierarchy Zipcode="$P/missing.csv" -o "$P/bad3.csv"
expect_user_error "$P/patients.csv:2: " "value '53715' of column 'Zipcode' is not a leaf of hierarchy" "$P/bad3.csv"
end

begin "bad options are refused and write nothing"
ak anonymize "${PAT[@]}" --k 2 --suppression 1.5 -o "$P/bad.csv"
expect_user_error "" "--suppression must be a share of the rows from 0 to 1" "$P/bad.csv"
ak anonymize "${PAT[@]}" --k 2 --incognito-variant fastest -o "$P/bad.csv"
expect_user_error "" "--incognito-variant: 'fastest' is not one of" "$P/bad.csv"
ak anonymize "${PAT[@]}" --k 2 --choose ncp -o "$P/bad.csv"
expect_user_error "" "--choose: 'ncp' is not one of gcp, height, dm" "$P/bad.csv"
ak anonymize "${PAT[@]}" --k 2 --algorithm mondrian --suppression 0.1 -o "$P/bad.csv"
expect_user_error "" "go with --algorithm incognito" "$P/bad.csv"
ak anonymize "${PAT[@]}" --k 2 --sensitive Disease --l 2 --l-variant entropy --suppression 0.1 -o "$P/bad.csv"
expect_user_error "" "--suppression works with k-anonymity and distinct l-diversity only" "$P/bad.csv"
ak anonymize "${PAT[@]}" --k 2 --rules "$P/rules.csv" -o "$P/bad.csv"
expect_user_error "" "--rules" "$P/bad.csv"
[ ! -e "$P/rules.csv" ] || problem "rules file written"
end

begin "an ineligible table: no generalization is diverse enough"
ak anonymize "${PAT[@]}" --k 2 --sensitive Disease --l 2 --l-variant recursive --c 0.1 -o "$P/bad4.csv"
expect_user_error "" "no full-domain generalization satisfies the privacy model" "$P/bad4.csv"
end

begin "anonymize --help documents the incognito options"
ak anonymize --help
expect_rc 0
grep -qF -- "--incognito-variant" "$OUT" || problem "--help lacks --incognito-variant"
grep -qF -- "--suppression" "$OUT" || problem "--help lacks --suppression"
grep -qF -- "--choose" "$OUT" || problem "--help lacks --choose"
end

finish
