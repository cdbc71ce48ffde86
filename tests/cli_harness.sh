# cli_harness.sh — the set-up and case bookkeeping shared by the command-line
# case scripts (tests/cli_*.sh). Sourced, not run:
#     source "$(dirname "$0")/cli_harness.sh" NAME "$@"
# with the script's own arguments PATH/TO/anonkit SOURCE_DIR. It sets BIN, SRC,
# ADULT (the bundled example), PY (/usr/bin/python3), a private folder T removed
# on exit, TMPDIR=$T/spool (every case checks that anonkit leaves it empty),
# OUT/ERR/RC of the last run, and defines:
#   ak ARGS...        runs anonkit with stdin from /dev/null
#   begin NAME / problem TEXT / end
#                     one case: "ok - NAME", or "not ok - NAME" with "#   ..." lines
#   casedir           a fresh folder for one case's files
#   expect_rc N, expect_err_has TEXT, expect_err_starts PREFIX, expect_out_has TEXT,
#   expect_json FILE EXPR (a Python expression over the document j is true)
#   finish            prints "N passed, M failed" and exits 1 if any case failed
HARNESS_NAME=$1
shift
if [ $# -ne 2 ]; then
    echo "usage: bash $0 PATH/TO/anonkit SOURCE_DIR" >&2
    exit 2
fi
BIN=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
SRC=$(cd "$2" && pwd)
ADULT=$SRC/examples/adult
PY=/usr/bin/python3
for need in "$BIN" "$PY"; do
    [ -x "$need" ] || { echo "$HARNESS_NAME: not executable: $need" >&2; exit 2; }
done

T=$(mktemp -d "${TMPDIR:-/tmp}/anonkit-$HARNESS_NAME.XXXXXX") || exit 2
trap 'rm -rf "$T"' EXIT
trap 'exit 130' INT TERM
export TMPDIR=$T/spool
mkdir "$TMPDIR"

OUT=$T/stdout ERR=$T/stderr RC=0
ak() { timeout 60 "$BIN" "$@" </dev/null >"$OUT" 2>"$ERR"; RC=$?; }

PASSED=0 FAILED=0 CASE=
PROBLEMS=()
begin() { CASE=$1; PROBLEMS=(); : >"$OUT"; : >"$ERR"; }
problem() { PROBLEMS+=("$*"); }
end() {
    if [ -n "$(ls -A "$TMPDIR")" ]; then
        problem "left behind in TMPDIR: $(ls -A "$TMPDIR" | tr '\n' ' ')"
        rm -rf "${TMPDIR:?}"/*
    fi
    if [ ${#PROBLEMS[@]} -eq 0 ]; then
        echo "ok - $CASE"
        PASSED=$((PASSED + 1))
    else
        echo "not ok - $CASE"
        local p
        for p in "${PROBLEMS[@]}"; do echo "#   $p"; done
        if [ -s "$ERR" ]; then head -n 4 "$ERR" | sed 's/^/#   last stderr: /'; fi
        FAILED=$((FAILED + 1))
    fi
}
casedir() { mktemp -d "$T/case.XXXXXX"; }
expect_rc() { [ "$RC" -eq "$1" ] || problem "exit code $RC, expected $1"; }
expect_err_has() { grep -qF -- "$1" "$ERR" || problem "stderr lacks '$1'"; }
# First line of stderr starts with "anonkit: " followed by PREFIX (e.g. "FILE:LINE: ").
expect_err_starts() {
    local first
    first=$(head -n 1 "$ERR")
    [[ $first == "anonkit: $1"* ]] || problem "stderr should start with 'anonkit: $1', got: '$first'"
}
expect_out_has() { grep -qF -- "$1" "$OUT" || problem "stdout lacks '$1'"; }
expect_json() {
    "$PY" -c 'import json,sys; j=json.load(open(sys.argv[1])); sys.exit(0 if eval(sys.argv[2]) else 1)' "$1" "$2" ||
        problem "$1: false: $2"
}
finish() {
    echo "$PASSED passed, $FAILED failed"
    [ "$FAILED" -eq 0 ]
    exit
}
