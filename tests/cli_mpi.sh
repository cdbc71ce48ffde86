#!/usr/bin/env bash
# cli_mpi.sh — anonkit-mpi (docs/distributed.md) under mpirun with 1 to 4
# ranks on this machine (--oversubscribe, loopback transports): on random
# tables, on the Adult example and on folders of part files with uneven shards
# (one empty), the published table equals the single-machine Mondrian's as a
# multiset and passes `anonkit check` (a folder of parts too); a bad row on
# rank 2 gives one error naming its file and line and no output; a rank
# killed mid-run leaves no output; one file read in byte ranges, with quoted
# newlines, gives the same table, and a bad row there names the line anonkit
# names; -o FILE on more ranks than parts writes the header once, -o FILE
# (every rank writing at its measured offset) is byte for byte the -o DIR/
# parts concatenated, whether the ranks reach the file unnamed or by a hidden
# name (as on several machines), and a rank killed with the named file leaves
# only that hidden name; the report's busy seconds and critical path are
# consistent; t-closeness, δ-disclosure and β-likeness give the single-machine
# table on 1 to 3 ranks, which `anonkit check` accepts under the same model;
# --hierarchy COL=auto gives the single-machine table from parts whose values
# differ.
#
# usage: bash tests/cli_mpi.sh PATH/TO/anonkit-mpi PATH/TO/anonkit SOURCE_DIR
set -u
if [ $# -ne 3 ]; then
    echo "usage: bash $0 PATH/TO/anonkit-mpi PATH/TO/anonkit SOURCE_DIR" >&2
    exit 2
fi
MPIBIN=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
shift
source "$(dirname "$0")/cli_harness.sh" cli-mpi "$@"
command -v mpirun >/dev/null || { echo "cli_mpi: mpirun not found: run scripts/deps.sh (Open MPI)" >&2; exit 1; }
mpirun --version 2>&1 | grep -q "Open MPI" || { echo "cli_mpi: mpirun is not Open MPI" >&2; exit 1; }

# Open MPI as root (CI), more ranks than cores, loopback only; its own
# files outside TMPDIR, which every case checks is left empty.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader OMPI_MCA_pml=ob1
export OMPI_MCA_orte_tmpdir_base=$T/ompi OMPI_MCA_rmaps_base_oversubscribe=1
mkdir -p "$T/ompi"
# Under the sanitizers (make test-asan): Open MPI's own allocations at MPI_Init
# are never freed; they are suppressed by library, which needs full stacks, so
# that a leak of anonkit-mpi itself still fails the case.
if [ -n "${ASAN_OPTIONS:-}" ]; then
    export ASAN_OPTIONS="$ASAN_OPTIONS:fast_unwind_on_malloc=0"
    export LSAN_OPTIONS="suppressions=$SRC/tests/lsan_openmpi.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
fi
mp() { # mp NP ARGS...: anonkit-mpi on NP ranks
    local np=$1
    shift
    timeout 120 mpirun -np "$np" --oversubscribe "$MPIBIN" "$@" </dev/null >"$OUT" 2>"$ERR"
    RC=$?
}
same_rows() { # same_rows A B: equal as multisets of lines
    cmp -s <(sort "$1") <(sort "$2") || problem "published rows differ from the single-machine run's ($1, $2)"
}
parts_table() { # parts_table DIR: the parts of DIR as one table (first header kept)
    local first=1 f
    for f in "$1"/part-*.csv; do
        if [ $first = 1 ]; then cat "$f"; first=0; else tail -n +2 "$f"; fi
    done
}

# 1. random generated tables: Median and InfoGain, k and l-diversity variants
RANDOM=27
d=$(casedir)
for i in 1 2 3 4 5 6; do
    np=$((i % 4 + 1))
    rows=$((3000 + RANDOM % 9000))
    seed=$((RANDOM))
    k=$((5 + RANDOM % 40))
    qis=(age,salary,zipcode age,salary,hvalue,elevel zipcode,car,age,loan salary,hyears,elevel,commission)
    qi=${qis[$((RANDOM % 4))]}
    model="--k $k"
    case $((i % 4)) in
        1) model="$model --sensitive car --l 3" ;;
        2) model="$model --sensitive car --l 2 --l-variant entropy" ;;
        3) model="$model --sensitive elevel --l 3 --l-variant recursive --c 4" ;;
    esac
    split=""
    [ $((i % 3)) = 0 ] && split="--split infogain --class c7"
    "$BIN" generate --rows $rows --seed $seed -o "$d/in.csv" 2>/dev/null
    case "$qi$model" in *car*car*) model="--k $k --sensitive commission --l 2" ;; esac
    case "$qi$model" in *elevel*elevel*) model="--k $k --sensitive car --l 2" ;; esac
    begin "random table $i ($rows rows, $np ranks, --qi $qi $model $split): the single-machine table, verified"
    ak anonymize "$d/in.csv" -o "$d/one.csv" --qi $qi $model $split --seed 3
    [ "$RC" = 0 ] || problem "the single-machine run failed: $(head -1 "$ERR")"
    mp $np anonymize "$d/in.csv" -o "$d/mpi.csv" --qi $qi $model $split --memory 64K --report "$d/r.json"
    expect_rc 0
    same_rows "$d/one.csv" "$d/mpi.csv"
    expect_json "$d/r.json" "j['ranks'] == $np and j['rows_published'] == $rows and j['levels_reduced'] >= 1"
    [ $np -gt 1 ] && expect_json "$d/r.json" "j['rows_shipped'] > 0 and j['bytes_reduced'] > 0"
    ak check "$d/mpi.csv" --qi $qi $model
    expect_rc 0
    end
done

# 2. the Adult example (categorical QIs with hierarchies) as uneven part files, one empty: DIR output
d=$(casedir)
mkdir "$d/parts"
h=$(head -1 "$ADULT/adult.csv")
{ echo "$h"; sed -n 2,3001p "$ADULT/adult.csv"; } >"$d/parts/p0.csv"
echo "$h" >"$d/parts/p1.csv"
{ echo "$h"; sed -n 3002,21000p "$ADULT/adult.csv"; } >"$d/parts/p2.csv"
{ echo "$h"; sed -n '21001,$p' "$ADULT/adult.csv"; } >"$d/parts/p3.csv"
for variant in "--split median" "--split infogain --class salary-class" "--l-variant entropy"; do
    ak anonymize --job "$ADULT/job.json" $variant -o "$d/one.csv"
    nps="2 4"
    [ "$variant" = "--split median" ] && nps="1 2 3 4"
    for np in $nps; do
        begin "adult in 4 uneven parts (one empty), $np ranks, $variant: DIR/ with a manifest, the single-machine table"
        rm -rf "$d/out"
        mp $np anonymize "$d/parts" -o "$d/out/" --job "$ADULT/job.json" $variant --memory 256K
        expect_rc 0
        [ "$(ls "$d/out" | grep -c '^part-.*\.csv$')" = $np ] || problem "expected $np parts: $(ls "$d/out")"
        expect_json "$d/out/manifest.json" "len(j['parts']) == $np and j['rows'] == 30162"
        parts_table "$d/out" >"$d/all.csv"
        same_rows "$d/one.csv" "$d/all.csv"
        ak check "$d/out" --job "$ADULT/job.json"
        expect_rc 0
        end
    done
done
ak anonymize --job "$ADULT/job.json" -o "$d/one.csv" --rules "$d/one.rules"
for np in 1 3; do
    begin "adult, $np ranks, --rules: the single-machine recoding rules (as a multiset), from rank 0"
    mp $np anonymize "$d/parts" -o "$d/r.csv" --job "$ADULT/job.json" --memory 256K --rules "$d/mpi.rules"
    expect_rc 0
    cmp -s <(sort "$d/one.rules") <(sort "$d/mpi.rules") || problem "rules differ from the single-machine run's"
    end
done
begin "adult as a quoted glob of parts, 3 ranks, one file written by every rank at its offset"
mp 3 anonymize "$d/parts/p*.csv" -o "$d/glob.csv" --job "$ADULT/job.json" --memory 256K
expect_rc 0
ak anonymize --job "$ADULT/job.json" -o "$d/one.csv"
same_rows "$d/one.csv" "$d/glob.csv"
[ "$(grep -c "^$(head -1 "$d/one.csv")\$" "$d/glob.csv")" = 1 ] || problem "the header is not there exactly once"
end
begin "adult in 4 parts on 6 ranks, one file: ranks without rows write nothing, the header once"
mp 6 anonymize "$d/parts" -o "$d/six.csv" --job "$ADULT/job.json" --memory 256K --report "$d/six.json"
expect_rc 0
same_rows "$d/one.csv" "$d/six.csv"
[ "$(grep -c "^$(head -1 "$d/one.csv")\$" "$d/six.csv")" = 1 ] || problem "the header is not there exactly once"
expect_json "$d/six.json" "len(j['per_rank']) == 6 and min(r['rows_read'] for r in j['per_rank']) == 0"
expect_json "$d/six.json" "all(r['busy'][p] <= r['cpu'][p] + 1e-9 for r in j['per_rank'] for p in r['cpu'])"
expect_json "$d/six.json" "abs(j['critical_path_seconds'] - sum(j['critical_path'].values())) < 0.01"
expect_json "$d/six.json" "all(j['critical_path'][p] == max(r['busy'][p] for r in j['per_rank']) for p in j['critical_path'])"
ak check "$d/six.csv" --job "$ADULT/job.json"
expect_rc 0
end

# 3. a bad row on rank 2: one error with its file and line, nothing written
d=$(casedir)
"$BIN" generate --rows 8000 --seed 5 -o "$d/in.csv" 2>/dev/null
mkdir "$d/parts"
h=$(head -1 "$d/in.csv")
for p in 0 1 2 3; do { echo "$h"; sed -n "$((2 + p * 2000)),$((1 + (p + 1) * 2000))p" "$d/in.csv"; } >"$d/parts/part$p.csv"; done
sed -i '57s/^\([^,]*\),\([^,]*\),[^,]*,/\1,\2,abc,/' "$d/parts/part2.csv"
for out in "$d/out/" "$d/out.csv"; do
    begin "bad row on rank 2 (-o $out): one error naming part2.csv:57, no output"
    mp 4 anonymize "$d/parts" -o "$out" --qi age,salary,zipcode --k 10
    expect_rc 1
    [ "$(grep -c '^anonkit-mpi: ' "$ERR")" = 1 ] || problem "expected one error line: $(cat "$ERR")"
    grep -q "^anonkit-mpi: $d/parts/part2.csv:57: " "$ERR" || problem "error does not name part2.csv:57: $(head -1 "$ERR")"
    [ -e "$d/out" ] || [ -e "$d/out.csv" ] && problem "output written"
    [ -z "$(ls -A "$d" | grep -v '^parts$\|^in.csv$')" ] || problem "left behind: $(ls -A "$d")"
    end
done
begin "bad row in one file read in byte ranges (3 ranks): the error names the line in the original file"
cp "$d/in.csv" "$d/one-file.csv"
sed -i '6001s/^\([^,]*\),\([^,]*\),[^,]*,/\1,\2,abc,/' "$d/one-file.csv"
mp 3 anonymize "$d/one-file.csv" -o "$d/out.csv" --qi age,salary,zipcode --k 10
expect_rc 1
grep -q "^anonkit-mpi: $d/one-file.csv:6001: " "$ERR" || problem "error does not name one-file.csv:6001: $(head -1 "$ERR")"
[ -e "$d/out.csv" ] && problem "output written"
end

# 4. a rank killed mid-run (before the commit): the job aborts, nothing at the output path
d=$(casedir)
"$BIN" generate --rows 5000 --seed 9 -o "$d/in.csv" 2>/dev/null
for out in "$d/killed/" "$d/killed.csv"; do
    begin "a rank killed by SIGKILL mid-run (-o $out): the job aborts, no output, nothing left beside it"
    ANONKIT_MPI_TEST_PAUSE=30 timeout 120 mpirun -np 3 --oversubscribe "$MPIBIN" anonymize "$d/in.csv" -o "$out" \
        --qi age,salary --k 10 </dev/null >"$OUT" 2>"$ERR" &
    job=$!
    pids=""
    for _ in $(seq 100); do # the ranks that reached the pause (rank 1 sleeps before the commit)
        pids=$(pgrep -f "anonkit-mpi anonymize $d/in.csv -o $out" | grep -v "^$job\$" || true)
        [ "$(echo "$pids" | grep -c .)" -ge 3 ] && break
        sleep 0.1
    done
    sleep 1
    victim=$(echo "$pids" | tail -1)
    [ -n "$victim" ] && kill -KILL "$victim"
    wait $job
    RC=$?
    [ "$RC" = 0 ] && problem "mpirun exited 0 after a rank was killed"
    [ -e "$d/killed" ] || [ -e "$d/killed.csv" ] && problem "output written"
    [ -z "$(ls -A "$d" | grep -v '^in.csv$')" ] || problem "left behind: $(ls -A "$d")"
    rm -rf "${TMPDIR:?}"/anonkit-mpi-* # (a killed rank's private files are unnamed; a named shard copy may stay)
    end
done

# 5. one file in byte ranges with quoted fields holding newlines and delimiters
d=$(casedir)
"$PY" - "$d/q.csv" <<'EOF'
import random, sys
random.seed(7)
with open(sys.argv[1], "w", newline="") as f:
    f.write('age,zip,"a note, quoted",sens\n')
    for i in range(6000):
        note = random.choice(['plain', '"two\nlines"', '"comma, and ""quote"""', '"a\nb\nc"', ''])
        f.write(f"{random.randint(17, 90)},{random.randint(1000, 1400)},{note},s{random.randint(0, 6)}\n")
EOF
ak anonymize "$d/q.csv" -o "$d/one.csv" --qi age,zip --sensitive sens --l 2 --k 8
for np in 2 3 4; do
    begin "quoted newlines, one file in byte ranges on $np ranks: the single-machine table"
    mp $np anonymize "$d/q.csv" -o "$d/mpi.csv" --qi age,zip --sensitive sens --l 2 --k 8 --memory 64K
    expect_rc 0
    same_rows "$d/one.csv" "$d/mpi.csv"
    end
done
begin "a bad row after quoted newlines, one file in byte ranges (3 ranks): the line anonkit names"
# the row 5,500th record's age made non-numeric; its physical line is past 5,501 (quoted newlines)
"$PY" - "$d/q.csv" "$d/qbad.csv" <<'EOF'
import sys
data = open(sys.argv[1], newline="").read()
recs, at, inq, start = [], 0, False, 0
for i, ch in enumerate(data):
    if ch == '"': inq = not inq
    elif ch == "\n" and not inq: recs.append(data[start:i + 1]); start = i + 1
recs[5500] = "abc" + recs[5500][recs[5500].index(","):]
open(sys.argv[2], "w", newline="").write("".join(recs))
EOF
ak anonymize "$d/qbad.csv" -o "$d/x.csv" --qi age,zip --sensitive sens --l 2 --k 8
expect_rc 1
line=$(sed -n 's/^anonkit: [^:]*:\([0-9]*\):.*/\1/p' "$ERR" | head -1)
[ -n "$line" ] && [ "$line" -gt 5501 ] || problem "anonkit named no line past 5501: $(head -1 "$ERR")"
mp 3 anonymize "$d/qbad.csv" -o "$d/x.csv" --qi age,zip --sensitive sens --l 2 --k 8
expect_rc 1
grep -q "^anonkit-mpi: $d/qbad.csv:$line: " "$ERR" || problem "error does not name qbad.csv:$line: $(head -1 "$ERR")"
[ -e "$d/x.csv" ] && problem "output written"
end
begin "quoted newlines split across parts of equal size: the verifier accepts the output"
ak check "$d/mpi.csv" --qi age,zip --sensitive sens --l 2 --k 8
expect_rc 0
end

# 5b. -o FILE, every rank writing at its offset at once: the file is the -o DIR/
# parts concatenated (first header kept), byte for byte, so every rank's
# measured length and offset are right; on quoted fields (escaped lengths) and
# range labels; with the file reached unnamed (/proc, one machine) or by a
# hidden name (ranks on other machines, forced here), which a failure removes
for how in unnamed named; do
    for np in 2 3; do
        begin "-o FILE on $np ranks ($how): byte for byte the -o DIR/ parts concatenated"
        for pub in generalize range; do
            rm -rf "$d/parts-out"
            mp $np anonymize "$d/q.csv" -o "$d/parts-out/" --qi age,zip --sensitive sens --l 2 --k 8 --memory 64K \
                --publish $pub
            expect_rc 0
            if [ $how = named ]; then export ANONKIT_MPI_TEST_NAMED=1; fi
            mp $np anonymize "$d/q.csv" -o "$d/file.csv" --qi age,zip --sensitive sens --l 2 --k 8 --memory 64K \
                --publish $pub
            expect_rc 0
            unset ANONKIT_MPI_TEST_NAMED
            cmp -s <(parts_table "$d/parts-out") "$d/file.csv" || problem "-o FILE ($pub) differs from the parts"
        done
        [ -z "$(ls -A "$d" | grep anonkit-tmp)" ] || problem "left behind: $(ls -A "$d")"
        end
    done
done
begin "a rank killed before the commit with the output file named (ranks on other machines): no output; only its hidden name is left"
ANONKIT_MPI_TEST_NAMED=1 ANONKIT_MPI_TEST_PAUSE=30 timeout 120 mpirun -np 3 --oversubscribe "$MPIBIN" anonymize \
    "$d/q.csv" -o "$d/killed.csv" --qi age,zip --sensitive sens --l 2 --k 8 </dev/null >"$OUT" 2>"$ERR" &
job=$!
for _ in $(seq 600); do # until the file has its hidden name (made before the rows are published)
    [ -n "$(ls -A "$d" | grep '^\.killed\.csv\.anonkit-tmp-')" ] && break
    sleep 0.1
done
victim=$(pgrep -f "^$MPIBIN anonymize $d/q.csv -o $d/killed.csv" | tail -1) # a rank, not mpirun
[ -n "$victim" ] && kill -KILL "$victim"
wait $job
RC=$?
[ "$RC" = 0 ] && problem "mpirun exited 0 after a rank was killed"
[ -e "$d/killed.csv" ] && problem "output written"
[ "$(ls -A "$d" | grep -c '^\.killed\.csv\.anonkit-tmp-')" = 1 ] || problem "expected the one hidden name: $(ls -A "$d")"
rm -f "$d"/.killed.csv.anonkit-tmp-*
rm -rf "${TMPDIR:?}"/anonkit-mpi-*
end

# 5c. t-closeness, δ-disclosure and β-likeness: the whole table's sensitive
# distribution is summed over the ranks once, and every cut of the
# distributed levels is judged by the model layer's predicates on the summed
# sensitive histograms of both sides, as one machine judges them on its rows.
# The sensitive codes are merged in the single-machine order and the choice
# reads the same sums, so the table is the single-machine Mondrian's (a
# multiset), as for l-diversity; `anonkit check` verifies the model. The
# --memory is small (4K: the finish size is 2k rows on the random tables), so
# that the cuts the model forbids are met on summed histograms, not only in
# the leaves finished in memory (whose sides are drawn independently of the
# QIs on the generated tables, so only small nodes break the model).
RANDOM=41
d=$(casedir)
for i in 1 2 3 4 5 6; do
    np=$((i % 3 + 1))
    rows=$((3000 + RANDOM % 7000))
    seed=$((RANDOM))
    k=$((3 + RANDOM % 20))
    qis=(age,salary,zipcode age,salary,hvalue zipcode,age,loan salary,hyears,commission)
    qi=${qis[$((RANDOM % 4))]}
    split=""
    case $i in
        1) model="--sensitive car --t 0.2" ;;
        2) model="--sensitive elevel --t 0.1 --t-distance equal" ;;
        3) model="--sensitive elevel --delta-disclosure 1.2" ;;
        4) model="--sensitive car --beta 1.5" ;;
        5) model="--sensitive car --beta 2 --beta-variant enhanced --l 2" ;;
        6) model="--sensitive elevel --t 0.15"; split="--split infogain --class c7" ;;
    esac
    "$BIN" generate --rows $rows --seed $seed -o "$d/in.csv" 2>/dev/null
    begin "closeness, random table $i ($rows rows, $np ranks, --qi $qi --k $k $model $split): the single-machine table, verified"
    ak anonymize "$d/in.csv" -o "$d/one.csv" --qi $qi --k $k $model $split --seed 3
    [ "$RC" = 0 ] || problem "the single-machine run failed: $(head -1 "$ERR")"
    mp $np anonymize "$d/in.csv" -o "$d/mpi.csv" --qi $qi --k $k $model $split --memory 4K --report "$d/r.json"
    expect_rc 0
    same_rows "$d/one.csv" "$d/mpi.csv"
    expect_json "$d/r.json" "j['rows_published'] == $rows and j['levels_reduced'] >= 2 and j['leaves'] >= 2"
    ak check "$d/mpi.csv" --qi $qi --k $k $model
    expect_rc 0
    # the model binds: the k-anonymous table alone does not satisfy it
    ak anonymize "$d/in.csv" -o "$d/konly.csv" --qi $qi --k $k --seed 3
    ak check "$d/konly.csv" --qi $qi --k $k $model
    [ "$RC" = 0 ] && problem "the k-anonymous table already satisfies $model: the case proves nothing"
    end
done
mkdir "$d/parts"
h=$(head -1 "$ADULT/adult.csv")
{ echo "$h"; sed -n 2,5001p "$ADULT/adult.csv"; } >"$d/parts/p0.csv"
echo "$h" >"$d/parts/p1.csv"
{ echo "$h"; sed -n '5002,$p' "$ADULT/adult.csv"; } >"$d/parts/p2.csv"
HOCC="--hierarchy occupation=$ADULT/adult_hierarchy_occupation.csv"
for extra in "--t 0.15" "--t 0.2 --t-distance hierarchical $HOCC" "--l 1 --delta-disclosure 1.5" \
    "--l 1 --beta 2 --beta-variant enhanced"; do
    # shellcheck disable=SC2086
    ak anonymize --job "$ADULT/job.json" $extra -o "$d/one.csv"
    [ "$RC" = 0 ] || problem "the single-machine run failed: $(head -1 "$ERR")"
    for np in 1 2 3; do
        begin "adult in 3 uneven parts (one empty), $np ranks, $extra: the single-machine table, verified"
        # shellcheck disable=SC2086
        mp $np anonymize "$d/parts" -o "$d/mpi.csv" --job "$ADULT/job.json" $extra --memory 256K --report "$d/r.json"
        expect_rc 0
        same_rows "$d/one.csv" "$d/mpi.csv"
        expect_json "$d/r.json" "j['levels_reduced'] >= 2"
        # shellcheck disable=SC2086
        ak check "$d/mpi.csv" --job "$ADULT/job.json" $extra
        expect_rc 0
        end
    done
done
begin "closeness, bad settings: one clear error each, no output"
"$BIN" generate --rows 2000 --seed 8 -o "$d/in.csv" 2>/dev/null
bad() { # bad MESSAGE ARGS...: refused with MESSAGE on 2 ranks, nothing written
    local msg=$1
    shift
    mp 2 anonymize "$@" -o "$d/x.csv"
    expect_rc 1
    [ "$(grep -c '^anonkit-mpi: ' "$ERR")" = 1 ] || problem "expected one error line: $(cat "$ERR")"
    expect_err_has "$msg"
    [ -e "$d/x.csv" ] && problem "output written with $*"
}
bad "--t needs a sensitive column" "$d/in.csv" --qi age,salary --k 5 --t 0.2
bad "--beta needs a sensitive column" "$d/in.csv" --qi age,salary --k 5 --beta 1
bad "--t" "$d/in.csv" --qi age,salary --k 5 --sensitive car --t 1.5
bad "--t-distance hierarchical needs a hierarchy" "$d/in.csv" --qi age,salary --k 5 --sensitive car --t 0.2 \
    --t-distance hierarchical
bad "occupation" "$ADULT/adult.csv" --job "$ADULT/job.json" --t 0.2 --t-distance ordered
end

# 6. usage
d=$(casedir)
begin "an algorithm other than Mondrian is refused"
mp 2 anonymize "$ADULT/adult.csv" -o "$d/x.csv" --job "$ADULT/job.json" --algorithm incognito
expect_rc 1
expect_err_has "anonkit-mpi runs Mondrian"
[ -e "$d/x.csv" ] && problem "output written"
end
begin "the whole table ineligible: one error, no output"
mp 2 anonymize "$ADULT/adult.csv" -o "$d/x.csv" --job "$ADULT/job.json" --k 40000
expect_rc 1
[ "$(grep -c '^anonkit-mpi: ' "$ERR")" = 1 ] || problem "expected one error line: $(cat "$ERR")"
[ -e "$d/x.csv" ] && problem "output written"
end
begin "a report that cannot be written is refused before any work: no output"
mp 2 anonymize "$ADULT/adult.csv" -o "$d/x/" --job "$ADULT/job.json" --report "$d/none/r.json"
expect_rc 2
expect_err_has "cannot write the report there"
[ -e "$d/x" ] && problem "output written"
end

begin "models a cluster run cannot honour are refused, never ignored: --variance, --max-risk average, --html"
for extra in "--variance 4" "--max-risk average=0.05" "--html $d/x.html"; do
    # shellcheck disable=SC2086
    mp 2 anonymize "$ADULT/adult.csv" -o "$d/x.csv" --job "$ADULT/job.json" $extra
    expect_rc 1
    expect_err_has "anonkit-mpi"
    [ -e "$d/x.csv" ] && problem "output written with $extra"
done
end
begin "--hierarchy COL=auto: the flat hierarchies of every rank's values together (the parts' values differ, one part has missing cells), one machine's table on 1 to 3 ranks"
# parts whose 'race' values differ: the second holds every row the first has
# not; the third has empty race and sex cells (the leaf NULL, on one rank only)
head -1 "$ADULT/adult.csv" >"$d/h"
mkdir -p "$d/auto"
{ cat "$d/h"; tail -n +2 "$ADULT/adult.csv" | grep -v ';Black;' | head -6000; } >"$d/auto/part-1.csv"
{ cat "$d/h"; tail -n +2 "$ADULT/adult.csv" | grep ';Black;'; } >"$d/auto/part-2.csv"
{ cat "$d/h"; tail -n +2 "$ADULT/adult.csv" | grep -v ';Black;' | sed -n 6001,6400p |
    sed 's/^Male;\([0-9]*\);White;/;\1;;/'; } >"$d/auto/part-3.csv"
{ cat "$d/h"; for p in 1 2 3; do tail -n +2 "$d/auto/part-$p.csv"; done; } >"$d/auto-all.csv"
grep -q '^;[0-9]*;;' "$d/auto/part-3.csv" || problem "the third part has no missing cells"
AUTO_OPTS="--delimiter ; --qi age,race,sex --numeric age --k 10"
# shellcheck disable=SC2086
"$BIN" anonymize "$d/auto-all.csv" -o "$d/auto-one.csv" $AUTO_OPTS --hierarchy race=auto --hierarchy sex=auto \
    --no-progress >/dev/null 2>&1 || problem "single-machine run failed"
grep -q 'Black' "$d/auto-one.csv" && grep -q 'NULL' "$d/auto-one.csv" ||
    problem "the single-machine table lacks a leaf of one part (Black) or the missing leaf (NULL)"
for col in race sex; do
    "$BIN" hierarchy "$d/auto-all.csv" --delimiter ';' --column "$col" --flat -o "$d/$col.csv" >/dev/null 2>&1 ||
        problem "anonkit hierarchy --flat failed for $col"
done
for np in 1 2 3 file; do
    rm -f "$d/auto.csv"
    if [ $np = file ]; then # one file in byte ranges: rank 0 collects its values
        # shellcheck disable=SC2086
        mp 3 anonymize "$d/auto-all.csv" -o "$d/auto.csv" $AUTO_OPTS --hierarchy race=auto --hierarchy sex=auto --memory 16K
    else
        # shellcheck disable=SC2086
        mp $np anonymize "$d/auto" -o "$d/auto.csv" $AUTO_OPTS --hierarchy race=auto --hierarchy sex=auto --memory 16K
    fi
    expect_rc 0
    [ "$(tail -n +2 "$d/auto.csv" | sort | md5sum)" = "$(tail -n +2 "$d/auto-one.csv" | sort | md5sum)" ] ||
        problem "the cluster's table ($np) differs from one machine's"
    # shellcheck disable=SC2086
    "$BIN" check "$d/auto.csv" $AUTO_OPTS --hierarchy race="$d/race.csv" --hierarchy sex="$d/sex.csv" >/dev/null 2>&1 ||
        problem "check rejects the cluster's table ($np) under the flat hierarchies of the whole table"
done
# the same flat hierarchies built once as files give the same table
# shellcheck disable=SC2086
mp 2 anonymize "$d/auto" -o "$d/auto-f.csv" $AUTO_OPTS --hierarchy race="$d/race.csv" --hierarchy sex="$d/sex.csv"
expect_rc 0
[ "$(tail -n +2 "$d/auto-f.csv" | sort | md5sum)" = "$(tail -n +2 "$d/auto-one.csv" | sort | md5sum)" ] ||
    problem "the cluster's table with the hierarchy files differs from one machine's"
end
begin "--hierarchy COL=auto on a column no part holds: one error, no output"
# shellcheck disable=SC2086
mp 2 anonymize "$d/auto" -o "$d/auto-x.csv" $AUTO_OPTS --hierarchy race=auto --hierarchy nosuch=auto
expect_rc 1
[ "$(grep -c '^anonkit-mpi: ' "$ERR")" = 1 ] || problem "expected one error line: $(cat "$ERR")"
[ -e "$d/auto-x.csv" ] && problem "output written"
end
begin "--max-risk highest=R is k-anonymity with k = ceil(1/R): the output passes check at that k"
mp 2 anonymize "$ADULT/adult.csv" -o "$d/h.csv" --job "$ADULT/job.json" --max-risk highest=0.04
expect_rc 0
"$BIN" check "$d/h.csv" --job "$ADULT/job.json" --k 25 >/dev/null 2>&1 || problem "the output is not 25-anonymous"
end

finish
