#!/usr/bin/env bash
# cli_rothko.sh — command-line cases of `anonymize --algorithm rothko-t` and
# `rothko-s`: the Adult example published and its rules written exactly as in
# memory (Rothko-T), sampled and verified (Rothko-S), usage errors, a full
# device reported, and a run ended by SIGTERM or SIGINT leaving neither spill
# files nor output behind.
#
# usage: bash tests/cli_rothko.sh PATH/TO/anonkit SOURCE_DIR
set -u
source "$(dirname "$0")/cli_harness.sh" cli-rothko "$@"
JOB=$ADULT/job.json
SPILL=$T/spill
mkdir "$SPILL"
expect_spill_empty() { [ -z "$(ls -A "$SPILL")" ] || problem "left in the spill folder: $(ls -A "$SPILL")"; }

# 1. identical to in-memory Mondrian on the Adult example, rules included
d=$(casedir)
ak anonymize --job "$JOB" -o "$d/mem.csv" --rules "$d/mem.rules"
for fc in 1 4; do
    begin "adult, F_CACHE $fc: same rows and rules as in memory, repartitioned, verified, no spill left"
    ak anonymize --job "$JOB" --algorithm rothko-t --memory 1M --block-size 4K --fcache $fc --tmpdir "$SPILL" \
        -o "$d/ooc.csv" --rules "$d/ooc.rules" --report "$d/r.json"
    expect_rc 0
    cmp -s <(sort "$d/mem.csv") <(sort "$d/ooc.csv") || problem "published rows differ from the in-memory run's"
    cmp -s <(sort "$d/mem.rules") <(sort "$d/ooc.rules") || problem "rules differ from the in-memory run's"
    expect_json "$d/r.json" "j['out_of_core']['repartitions'] > 0"
    expect_spill_empty
    end
    begin "adult, F_CACHE $fc: the verifier accepts the output"
    ak check "$d/ooc.csv" --job "$JOB"
    expect_rc 0
    end
done

# 1a. a number written two ways ("5", later "5.0") is published in its first
# spelling by the out-of-core load as by the in-memory one
d=$(casedir)
{ echo "x,s"; for i in $(seq 20); do echo "5,a"; done; echo "2.5,b"
  for i in $(seq 19); do echo "5.0,c"; done; for i in $(seq 10); do echo "6,d"; done; } >"$d/spell.csv"
begin "first spelling of a number: rothko-t publishes what mondrian publishes"
ak anonymize "$d/spell.csv" --qi x --k 5 --seed 1 -o "$d/mem.csv"
ak anonymize "$d/spell.csv" --qi x --k 5 --seed 1 --algorithm rothko-t --memory 4M --tmpdir "$SPILL" -o "$d/ooc.csv"
expect_rc 0
cmp -s <(sort "$d/mem.csv") <(sort "$d/ooc.csv") || problem "published rows differ: $(sort -u "$d/ooc.csv" | head -3)"
grep -q "5\.0" "$d/ooc.csv" && problem "published the later spelling 5.0"
end

# 1b. Rothko-S on Adult with small samples: repartitioned, verified, no spill left
for t in hypothesis naive; do
    begin "adult, rothko-s --test $t: sampled, repartitioned, verified, no spill left"
    ak anonymize --job "$JOB" --algorithm rothko-s --memory 1M --block-size 4K --sample-size 2000 --test $t \
        --tmpdir "$SPILL" -o "$d/rs.csv" --report "$d/rs.json"
    expect_rc 0
    expect_json "$d/rs.json" "j['out_of_core']['growth_phases'] > 0 and j['out_of_core']['repartitions'] > 0"
    expect_json "$d/rs.json" "j['out_of_core']['test'] == '$t' and j['rows_published'] == j['rows_read']"
    expect_spill_empty
    ak check "$d/rs.csv" --job "$JOB"
    expect_rc 0
    end
done

# 2. usage errors: exit 1, the reason, nothing written
usage_case() { # NAME TEXT ARGS...
    local name=$1 text=$2
    shift 2
    begin "$name"
    ak anonymize --job "$JOB" -o "$d/u.csv" "$@"
    expect_rc 1
    expect_err_has "$text"
    [ ! -e "$d/u.csv" ] || problem "output written after a usage error"
    end
}
usage_case "rothko-t needs --memory" "needs a memory budget" --algorithm rothko-t
usage_case "rothko-t rejects regression" "regression" --algorithm rothko-t --memory 64M --split regression --target age
usage_case "rothko-t rejects --keep-order" "keep-order" --algorithm rothko-t --memory 64M --keep-order
usage_case "a bad --memory is refused" "--memory must be a size" --algorithm rothko-t --memory 12Q
usage_case "rothko-s needs --memory" "needs a memory budget" --algorithm rothko-s
usage_case "rothko-t points variance diversity to rothko-s" "use rothko-s" --algorithm rothko-t --memory 64M \
    --sensitive age --variance 10
usage_case "a bad --alpha is refused" "--alpha must be" --algorithm rothko-s --memory 64M --alpha 1.5
usage_case "a bad --test is refused" "is not one of hypothesis, naive" --algorithm rothko-s --memory 64M --test exact
usage_case "a bad --sample-size is refused" "--sample-size must be" --algorithm rothko-s --memory 64M --sample-size 0

# 2b. a full device: the write failure reported, with one thread or two (the output written on a thread of its own)
[ -w /dev/full ] && for alg in rothko-t rothko-s; do
  for threads in 1 2; do
    begin "$alg --threads $threads -o /dev/full: the write failure reported, no spill left"
    ak anonymize --job "$JOB" --algorithm $alg --memory 1M --block-size 4K --tmpdir "$SPILL" --threads $threads \
        -o /dev/full
    expect_rc 1
    expect_err_has "/dev/full: write failed: No space left on device"
    expect_spill_empty
    end
  done
done

# 3. a signal in the middle of a run leaves nothing behind
ak generate --rows 1500000 --seed 3 -o "$d/big.csv"
for sig in TERM INT; do
  for alg in rothko-t rothko-s; do
    begin "SIG$sig during a $alg run: spill folder removed, no output"
    "$BIN" anonymize "$d/big.csv" -o "$d/big.out.csv" --qi salary,age,loan,hvalue --k 20 --algorithm $alg \
        --memory 8M --block-size 64K --tmpdir "$SPILL" 2>/dev/null &
    pid=$!
    # spilling: the run holds a file in $SPILL (unnamed, so seen only through /proc)
    for _ in $(seq 1 200); do ls -l /proc/$pid/fd 2>/dev/null | grep -qF "$SPILL/" && break; sleep 0.02; done
    sleep 0.3
    kill -$sig $pid 2>/dev/null
    wait $pid
    status=$?
    [ $status -ne 0 ] || problem "the run finished before the signal (exit 0)"
    expect_spill_empty
    [ ! -e "$d/big.out.csv" ] || problem "output written by an interrupted run"
    end
  done
done

finish
