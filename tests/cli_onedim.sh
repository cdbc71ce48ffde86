#!/usr/bin/env bash
# cli_onedim.sh — command-line cases of the 1-D algorithms ([Ghinita07]): every
# --algorithm hilbert|hilbert-fast|idistance|idistance-fast on the Adult
# example proven by `anonkit check`, the external sort (--memory) giving the
# same bytes as the in-memory sort and leaving nothing in TMPDIR, --threads
# 1, 2 and 3 giving the same bytes, bad options
# and ineligible tables (message, exit 1, no output), and `anonkit metrics
# --kl-level`.
#
# usage: bash tests/cli_onedim.sh PATH/TO/anonkit SOURCE_DIR
# Prints "ok - NAME" / "not ok - NAME" per case, then "N passed, M failed".
set -u
source "$(dirname "$0")/cli_harness.sh" cli-onedim "$@"

# A user error: exit 1, "anonkit: " and TEXT on stderr, nothing at OUTPATH.
expect_user_error() {
    expect_rc 1
    [[ $(head -n 1 "$ERR") == "anonkit: "* ]] || problem "stderr should start with 'anonkit: '"
    expect_err_has "$1"
    [ ! -e "$2" ] || problem "output $2 exists after a failure"
}
rows() { "$PY" -c 'import csv,sys; print(len(list(csv.reader(open(sys.argv[1]), delimiter=";"))) - 1)' "$1"; }

JOB=$ADULT/job.json
NROWS=$(rows "$ADULT/adult.csv")

# ------------------------------------------------------------------ help --

begin "anonymize --help names the 1-D algorithms and their options"
ak anonymize --help
expect_rc 0
for w in hilbert-fast idistance-fast --bits --centers --memory; do expect_out_has "$w"; done
end

begin "metrics --help names --kl-level"
ak metrics --help
expect_rc 0
expect_out_has "--kl-level"
end

# ------------------------------------------------------- k-anonymity, Adult --

for algo in hilbert hilbert-fast idistance idistance-fast; do
    begin "$algo --k 10 on Adult: verified, all rows published, classes of 10..19 in the report"
    d=$(casedir)
    ak anonymize --job "$JOB" --algorithm "$algo" --l 1 --l-variant probabilistic -o "$d/out.csv" --report "$d/r.json"
    expect_rc 0
    [ "$(rows "$d/out.csv")" = "$NROWS" ] || problem "published $(rows "$d/out.csv") rows of $NROWS"
    expect_json "$d/r.json" "j['min_class_size'] >= 10 and j['max_class_size'] <= 19 and j['rows_suppressed'] == 0"
    expect_json "$d/r.json" "j['parameters']['algorithm'] == '$algo' and 'key_bits' in j['onedim']"
    ak check "$d/out.csv" --job "$JOB" --l 1 --l-variant probabilistic
    expect_rc 0
    end
done

begin "hilbert --l 3 --l-variant probabilistic on Adult: verified, no closing group needed"
d=$(casedir)
ak anonymize --job "$JOB" --l-variant probabilistic --algorithm hilbert -o "$d/out.csv" --report "$d/r.json"
expect_rc 0
expect_json "$d/r.json" "j['parameters']['l-variant'] == 'probabilistic' and j['onedim']['closing_groups'] == 0"
ak check "$d/out.csv" --job "$JOB" --l-variant probabilistic
expect_rc 0
end

begin "external sort: --memory 64K gives the same bytes as in memory, and counts its blocks"
d=$(casedir)
ak anonymize --job "$JOB" --l 1 --l-variant probabilistic --algorithm hilbert -o "$d/mem.csv"
ak anonymize --job "$JOB" --l 1 --l-variant probabilistic --algorithm hilbert --memory 64K -o "$d/ext.csv" --report "$d/r.json"
expect_rc 0
cmp -s "$d/mem.csv" "$d/ext.csv" || problem "outputs differ"
expect_json "$d/r.json" "j['onedim']['sort_runs'] > 1 and j['onedim']['blocks_written'] > 0 and j['onedim']['blocks_read'] >= j['onedim']['blocks_written']"
end

for algo in hilbert hilbert-fast idistance idistance-fast; do
    begin "$algo: --threads 1, 2 and 3 give the same bytes (k and l)"
    d=$(casedir)
    for n in 1 2 3; do
        ak anonymize --job "$JOB" --algorithm "$algo" --l 1 --l-variant probabilistic --threads $n -o "$d/k$n.csv"
        expect_rc 0
        ak anonymize --job "$JOB" --algorithm "$algo" --k 5 --l 2 --l-variant probabilistic --threads $n -o "$d/l$n.csv"
        expect_rc 0
    done
    for n in 2 3; do
        cmp -s "$d/k1.csv" "$d/k$n.csv" || problem "k: --threads $n differs from --threads 1"
        cmp -s "$d/l1.csv" "$d/l$n.csv" || problem "l: --threads $n differs from --threads 1"
    done
    end
done

# ------------------------------------------------------------- bad usage --

begin "--bits 0, --memory 12X, --centers 0: usage errors, nothing written"
d=$(casedir)
ak anonymize --job "$JOB" --algorithm hilbert --bits 0 -o "$d/out.csv"
expect_user_error "--bits must be" "$d/out.csv"
ak anonymize --job "$JOB" --algorithm hilbert --memory 12X -o "$d/out.csv"
expect_user_error "--memory must be" "$d/out.csv"
ak anonymize --job "$JOB" --algorithm idistance --centers 0 -o "$d/out.csv"
expect_user_error "--centers must be" "$d/out.csv"
end

begin "--l-variant distinct with a 1-D algorithm: refused, nothing written"
d=$(casedir)
ak anonymize --job "$JOB" --algorithm hilbert -o "$d/out.csv"
expect_user_error "probabilistic" "$d/out.csv"
end

begin "ineligible l: a value in more than 1/l of the rows, exit 1, nothing written"
d=$(casedir)
printf 'x,s\n1,a\n2,a\n3,a\n4,b\n5,c\n' >"$d/in.csv"
ak anonymize "$d/in.csv" -o "$d/out.csv" --qi x --sensitive s --l 2 --algorithm hilbert-fast
expect_user_error "not 2-diverse" "$d/out.csv"
end

# ---------------------------------------------------------- KL-divergence --

begin "metrics --kl-level: 0 for the original itself, positive for a published table"
d=$(casedir)
ak metrics "$ADULT/adult.csv" "$ADULT/adult.csv" --job "$JOB" --kl-level 2
expect_rc 0
cp "$OUT" "$d/self.json"
expect_json "$d/self.json" "abs(j['kl_divergence']) < 1e-12 and j['kl_level'] == 2 and j['kl_groupbys'] == 21"
ak anonymize --job "$JOB" --l-variant probabilistic --algorithm hilbert -o "$d/out.csv"
ak metrics "$ADULT/adult.csv" "$d/out.csv" --job "$JOB" --kl-level 1
expect_rc 0
cp "$OUT" "$d/pub.json"
expect_json "$d/pub.json" "j['kl_divergence'] > 0 and j['kl_groupbys'] == 7"
end

begin "metrics --kl-level without --sensitive, or above the QI count: usage errors"
ak metrics "$ADULT/adult.csv" "$ADULT/adult.csv" --job "$JOB" --sensitive "" --kl-level 1
expect_rc 1
ak metrics "$ADULT/adult.csv" "$ADULT/adult.csv" --job "$JOB" --kl-level 8
expect_rc 1
expect_err_has "--kl-level"
end

finish
