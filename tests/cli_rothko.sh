#!/usr/bin/env bash
# cli_rothko.sh — command-line cases of `anonymize --algorithm rothko-t`: the
# Adult example published and its rules written exactly as in memory, usage
# errors, and a run ended by SIGTERM or SIGINT leaving neither spill files nor
# output behind.
#
# usage: bash tests/cli_rothko.sh PATH/TO/anonkit SOURCE_DIR
set -u
if [ $# -ne 2 ]; then
    echo "usage: bash $0 PATH/TO/anonkit SOURCE_DIR" >&2
    exit 2
fi
BIN=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
SRC=$(cd "$2" && pwd)
JOB=$SRC/examples/adult/job.json
T=$(mktemp -d "${TMPDIR:-/tmp}/anonkit-cli-rothko.XXXXXX") || exit 2
trap 'rm -rf "$T"' EXIT
mkdir "$T/spill"
passed=0 failed=0
ok() { echo "ok - $1"; passed=$((passed + 1)); }
not_ok() { echo "not ok - $1"; shift; for l in "$@"; do echo "#   $l"; done; failed=$((failed + 1)); }
empty_spill() { [ -z "$(ls -A "$T/spill")" ]; }

# 1. identical to in-memory Mondrian on the Adult example, rules included
"$BIN" anonymize --job "$JOB" -o "$T/mem.csv" --rules "$T/mem.rules" 2>/dev/null
for fc in 1 4; do
    if "$BIN" anonymize --job "$JOB" --algorithm rothko-t --memory 1M --block-size 4K --fcache $fc \
        --tmpdir "$T/spill" -o "$T/ooc.csv" --rules "$T/ooc.rules" --report "$T/r.json" 2>"$T/err" &&
        cmp -s <(sort "$T/mem.csv") <(sort "$T/ooc.csv") &&
        cmp -s <(sort "$T/mem.rules") <(sort "$T/ooc.rules") &&
        "$BIN" check "$T/ooc.csv" --job "$JOB" 2>/dev/null && empty_spill &&
        /usr/bin/python3 -c "import json,sys; d=json.load(open(sys.argv[1]))['out_of_core']; sys.exit(0 if d['repartitions'] > 0 else 1)" "$T/r.json"
    then ok "adult, F_CACHE $fc: same rows and rules as in memory, repartitioned, verified, no spill left"
    else not_ok "adult, F_CACHE $fc" "$(cat "$T/err")"
    fi
done

# 2. usage errors
expect_usage() {
    local name=$1; shift
    if "$BIN" anonymize --job "$JOB" -o "$T/u.csv" "$@" 2>"$T/err"; then
        not_ok "$name" "succeeded"
    elif grep -q -e memory -e regression -e keep-order "$T/err" && [ ! -e "$T/u.csv" ]; then
        ok "$name: $(head -c 120 "$T/err")"
    else
        not_ok "$name" "$(cat "$T/err")"
    fi
}
expect_usage "rothko-t needs --memory" --algorithm rothko-t
expect_usage "rothko-t rejects regression" --algorithm rothko-t --memory 64M --split regression --target age
expect_usage "rothko-t rejects --keep-order" --algorithm rothko-t --memory 64M --keep-order
if "$BIN" anonymize --job "$JOB" -o "$T/u.csv" --algorithm rothko-t --memory 12Q 2>"$T/err"; then
    not_ok "bad --memory accepted"
else ok "bad --memory: $(cat "$T/err")"; fi

# 3. a signal in the middle of a run leaves nothing behind
"$BIN" generate --rows 1500000 --seed 3 -o "$T/big.csv" 2>/dev/null
for sig in TERM INT; do
    "$BIN" anonymize "$T/big.csv" -o "$T/big.out.csv" --qi salary,age,loan,hvalue --k 20 --algorithm rothko-t \
        --memory 8M --block-size 64K --tmpdir "$T/spill" 2>/dev/null &
    pid=$!
    for _ in $(seq 1 200); do [ -n "$(ls -A "$T/spill")" ] && break; sleep 0.02; done
    sleep 0.3
    kill -$sig $pid 2>/dev/null
    wait $pid
    status=$?
    if [ $status -ne 0 ] && empty_spill && [ ! -e "$T/big.out.csv" ]; then
        ok "SIG$sig during a run (exit $status): spill folder removed, no output"
    else
        not_ok "SIG$sig during a run" "exit $status" "spill: $(ls -A "$T/spill")"
    fi
done

echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
