#!/usr/bin/env bash
# cli_signals.sh — signals at random points. Every command (anonymize with each
# algorithm, check, metrics, recode, sequential, generate), with file input and
# with standard input from a pipe where it takes it, is started on an input
# large enough to be mid-work and gets SIGINT, SIGTERM, SIGHUP or SIGKILL after a
# random delay (seeded: ANONKIT_SIGNAL_SEED, printed; every command meets all four
# signals). Afterwards:
#   - the exit status is the signal's, or 0 when the run finished first, and then
#     its output is complete (a published table passes `anonkit check`);
#   - the output path holds the untouched old output (same bytes), or after a
#     finished run the new one; nothing else appeared in the output's folder;
#   - TMPDIR (a private empty folder; the harness checks it after every case) and
#     the --tmpdir folder are empty: no output temporary, no stdin spool, no spill
#     or sort file, no private folder.
# SIGKILL cannot be caught, so this holds after SIGKILL only because every
# temporary is an unnamed file (docs/ARCHITECTURE.md §10): on a file system
# without O_TMPFILE a kill in the microseconds between creating a temporary and
# unlinking it could leave one empty named file (no data), which this test would
# report, and so could a kill in the microseconds between the commit's linking of the
# finished output as OUT.tmp-XXXXXX and its rename over an old output (a new output is
# linked straight to its path and has no such moment); such a name is removed by the next
# run that commits OUT (docs/ARCHITECTURE.md §11; tests/cli_hierarchy.sh plants one).
# Also: the 1-D algorithms' external sort honours --tmpdir.
#
# usage: bash tests/cli_signals.sh PATH/TO/anonkit SOURCE_DIR
set -u
source "$(dirname "$0")/cli_harness.sh" cli-signals "$@"
# A non-interactive shell starts background commands with SIGINT ignored; they
# get back the default action, as from a terminal, through env --default-signal
# (coreutils 8.31), else through job control.
LAUNCH=(env --default-signal=INT)
if ! env --default-signal=INT true 2>/dev/null; then
    LAUNCH=()
    set -m
fi

SEED=${ANONKIT_SIGNAL_SEED:-21}
RANDOM=$SEED
echo "# seed $SEED (ANONKIT_SIGNAL_SEED)"

# --- the inputs: made once ---------------------------------------------------
D=$T/data
mkdir "$D"
ROWS=300000
"$BIN" generate --rows $ROWS --seed 1 -o "$D/big.csv" 2>/dev/null || { echo "generate failed"; exit 2; }
QI=(--qi salary,age,loan,hvalue)
# Interval hierarchies over the generator's small numeric domains, for Incognito.
"$PY" - "$D" <<'PY'
import random, sys
d = sys.argv[1]
def hier(name, values, width):
    with open(f"{d}/{name}.csv", "w") as f:
        for v in values:
            lo = values[0] + (v - values[0]) // width * width
            f.write(f"{v};{lo}-{lo + width - 1};*\n")
hier("elevel", range(0, 5), 2)
hier("car", range(1, 21), 5)
hier("zipcode", range(0, 10), 5)
hier("hyears", range(1, 31), 10)
# Sequential releases: the current one (Name, Job, Class) and an earlier one (Job, Disease).
r = random.Random(1)
with open(f"{d}/name.csv", "w") as f:
    f.writelines(f"N{i};G{i // 20};*\n" for i in range(200))
with open(f"{d}/job.csv", "w") as f:
    f.writelines(f"J{i};W{i // 10};*\n" for i in range(40))
with open(f"{d}/cur.csv", "w") as f:
    f.write("Name,Job,Class\n")
    f.writelines(f"N{r.randrange(200)},J{r.randrange(40)},c{r.randrange(3)}\n" for _ in range(500000))
with open(f"{d}/prev.csv", "w") as f:
    f.write("Job,Disease\n")
    f.writelines(f"J{r.randrange(40)},D{r.randrange(8)}\n" for _ in range(500000))
PY
[ -s "$D/cur.csv" ] || { echo "cannot write the sequential inputs"; exit 2; }
INC=(--qi elevel,car,zipcode,hyears --hierarchy "elevel=$D/elevel.csv" --hierarchy "car=$D/car.csv"
     --hierarchy "zipcode=$D/zipcode.csv" --hierarchy "hyears=$D/hyears.csv" --algorithm incognito)
SEQ=(--previous "$D/prev.csv" --x Name --y Disease --anonymity 5 --class Class
     --hierarchy "Job=$D/job.csv" --hierarchy "Name=$D/name.csv")
# A published table and its rules, for check, metrics and recode.
"$BIN" anonymize "$D/big.csv" -o "$D/pub.csv" "${QI[@]}" --k 10 --seed 1 --rules "$D/rules.json" 2>/dev/null ||
    { echo "cannot publish the table for check, metrics and recode"; exit 2; }

# --- one run -----------------------------------------------------------------
SIGNALS=(INT TERM HUP KILL)
declare -A SIGNUM=([INT]=2 [TERM]=15 [HUP]=1 [KILL]=9)
INTERRUPTED=0 COMPLETED=0

# The published table $1 is complete: every input row, and the model (the
# options after $1) holds.
complete_table() {
    local file=$1 lines
    shift
    lines=$(wc -l <"$file")
    [ "$lines" -eq $((ROWS + 1)) ] || problem "published $lines lines, not $((ROWS + 1))"
    "$BIN" check "$file" "$@" >/dev/null 2>&1 || problem "the published table fails anonkit check"
}

# The run's new output is complete (VERIFY as in run_one; $1 the case's folder).
complete_output() {
    local dir=$1 verify=$2
    case $verify in
    table) complete_table "$dir/out/o.csv" "${QI[@]}" --k 10 ;;
    table-inc) complete_table "$dir/out/o.csv" --qi elevel,car,zipcode,hyears --k 10 ;;
    lines:*)
        local lines
        lines=$(wc -l <"$dir/out/o.csv")
        [ "$lines" -eq "${verify#lines:}" ] || problem "wrote $lines lines, not ${verify#lines:}"
        ;;
    json) "$PY" -c 'import json,sys; json.load(open(sys.argv[1]))' "$dir/stdout" 2>/dev/null ||
              problem "stdout is not JSON" ;;
    esac
}

# run_one NAME SIG VERIFY FEED ARGS...: runs `anonkit ARGS` (standard input from
# FEED through a pipe, or /dev/null when FEED is empty), sends SIG after a random
# delay and checks what is left. In ARGS, @OUT@ is the output path (an old output
# is there first) and @SPILL@ the --tmpdir folder. VERIFY says how to prove a run
# that finished first complete: table (a published table of big.csv),
# lines:N (N lines), json (stdout is JSON) or none.
run_one() {
    local name=$1 sig=$2 verify=$3 feed=$4
    shift 4
    local dir out spill delay
    dir=$(casedir)
    out=$dir/out spill=$dir/spill
    mkdir "$out" "$spill"
    printf 'old output %s, not to be touched\n' "$RANDOM" >"$out/o.csv"
    chmod 0640 "$out/o.csv"
    cp -p "$out/o.csv" "$dir/old.csv"
    local args=("${@//@OUT@/$out/o.csv}")
    args=("${args[@]//@SPILL@/$spill}")
    delay=$((5 + RANDOM % 300))
    begin "SIG$sig after $delay ms: $name"
    if [ -n "$feed" ]; then
        cat "$feed" | "${LAUNCH[@]}" "$BIN" "${args[@]}" >"$dir/stdout" 2>"$ERR" &
    else
        "${LAUNCH[@]}" "$BIN" "${args[@]}" </dev/null >"$dir/stdout" 2>"$ERR" &
    fi
    local pid=$!
    sleep "$(printf '0.%03d' "$delay")"
    kill -s "$sig" "$pid" 2>/dev/null
    # a run that outlives the signal by 30 s hangs: it is killed and reported
    # (stderr: bash reports a job a signal ended)
    local waited=0
    {
        while kill -0 "$pid" && [ $waited -lt 600 ]; do
            sleep 0.05
            waited=$((waited + 1))
        done
    } 2>/dev/null
    if kill -0 "$pid" 2>/dev/null; then
        problem "still running 30 s after SIG$sig"
        kill -s KILL "$pid" 2>/dev/null
    fi
    wait "$pid" 2>/dev/null
    local status=$?
    local writes=1
    [ "$verify" = json ] || [ "$verify" = none ] && writes=0
    if [ "$status" -eq 0 ]; then
        COMPLETED=$((COMPLETED + 1))
        complete_output "$dir" "$verify"
        [ $writes = 1 ] && cmp -s "$out/o.csv" "$dir/old.csv" && problem "a finished run left the old output in place"
    else
        INTERRUPTED=$((INTERRUPTED + 1))
        [ "$status" -eq $((128 + SIGNUM[$sig])) ] ||
            problem "exit status $status, expected $((128 + SIGNUM[$sig])) (SIG$sig) or 0"
        if ! cmp -s "$out/o.csv" "$dir/old.csv"; then
            # the signal came after the commit: then the new output must be whole
            [ $writes = 1 ] || problem "the old output was changed"
            complete_output "$dir" "$verify"
            [ ${#PROBLEMS[@]} -eq 0 ] || problem "an interrupted run changed the old output, and not into a complete new one"
        elif [ "$(stat -c %a "$out/o.csv")" != 640 ]; then
            problem "the old output's mode changed"
        fi
    fi
    local left
    left=$(ls -A "$out")
    [ "$left" = o.csv ] || problem "output folder holds: $(echo "$left" | tr '\n' ' ')"
    left=$(ls -A "$spill")
    [ -z "$left" ] || problem "left in the --tmpdir folder: $(echo "$left" | tr '\n' ' ')"
    end
}

# --- the commands --------------------------------------------------------------
# Each line: NAME|VERIFY|STDIN (1: also from a pipe)|ARGS with @IN@ for the input.
CASES=(
    "anonymize mondrian|table|1|anonymize @IN@ -o @OUT@ ${QI[*]} --k 10 --seed 1"
    "anonymize rothko-t --memory|table|1|anonymize @IN@ -o @OUT@ ${QI[*]} --k 10 --algorithm rothko-t --memory 16M --block-size 64K --tmpdir @SPILL@"
    "anonymize rothko-s --memory|table|1|anonymize @IN@ -o @OUT@ ${QI[*]} --k 10 --algorithm rothko-s --memory 16M --block-size 64K --tmpdir @SPILL@"
    "anonymize incognito|table-inc|1|anonymize @IN@ -o @OUT@ ${INC[*]} --k 10"
    "anonymize hilbert|table|1|anonymize @IN@ -o @OUT@ ${QI[*]} --k 10 --algorithm hilbert"
    "anonymize idistance|table|1|anonymize @IN@ -o @OUT@ ${QI[*]} --k 10 --algorithm idistance"
    "anonymize hilbert --memory|table|1|anonymize @IN@ -o @OUT@ ${QI[*]} --k 10 --algorithm hilbert --memory 1M --tmpdir @SPILL@"
    "anonymize idistance --memory|table|1|anonymize @IN@ -o @OUT@ ${QI[*]} --k 10 --algorithm idistance --memory 1M --tmpdir @SPILL@"
    "anonymize hilbert-fast|table|1|anonymize @IN@ -o @OUT@ ${QI[*]} --k 10 --algorithm hilbert-fast"
    "check|none|1|check @PUB@ ${QI[*]} --k 10"
    "metrics|json|1|metrics $D/big.csv @PUB@ ${QI[*]} --k 10"
    "recode|lines:$((ROWS + 1))|1|recode --rules $D/rules.json @IN@ -o @OUT@"
    "sequential|lines:500001|1|sequential @CUR@ -o @OUT@ ${SEQ[*]}"
    "generate|lines:3000001|0|generate --rows 3000000 --seed 2 -o @OUT@"
)
# The paths above hold no spaces ($T is from mktemp), so the argument text
# splits back into words (read does no pathname expansion).
s=0
for c in "${CASES[@]}"; do
    IFS='|' read -r name verify stdin_too text <<<"$c"
    read -r -a words <<<"$text"
    for src in file stdin; do
        [ $src = stdin ] && [ "$stdin_too" != 1 ] && continue
        in=$D/big.csv pub=$D/pub.csv cur=$D/cur.csv feed=
        if [ $src = stdin ]; then
            case $name in
            check | metrics) feed=$D/pub.csv pub=- ;;
            sequential) feed=$D/cur.csv cur=- ;;
            *) feed=$D/big.csv in=- ;;
            esac
        fi
        a=("${words[@]//@IN@/$in}")
        a=("${a[@]//@PUB@/$pub}")
        a=("${a[@]//@CUR@/$cur}")
        # two signals per input kind (four for generate), so every command meets all four
        for _ in 1 2 $([ "$stdin_too" = 1 ] || echo 3 4); do
            run_one "$name ($src)" "${SIGNALS[s % 4]}" "$verify" "$feed" "${a[@]}"
            s=$((s + 1))
        done
    done
    s=$((s + 1)) # the next command starts one signal further on
done

# A run that always finishes first proves nothing: most runs must be interrupted.
begin "most runs were interrupted mid-work ($INTERRUPTED interrupted, $COMPLETED finished first)"
[ $((INTERRUPTED * 2)) -ge $((INTERRUPTED + COMPLETED)) ] || problem "fewer than half the runs were interrupted"
end

# The 1-D algorithms' external sort puts its spill files where --tmpdir says:
# a folder that does not exist fails the run at the first spill, naming it.
head -n 30001 "$D/big.csv" >"$D/small.csv"
for alg in hilbert idistance; do
    begin "$alg --memory: the external sort uses --tmpdir"
    dir=$(casedir)
    ak anonymize "$D/small.csv" -o "$dir/o.csv" "${QI[@]}" --k 10 --algorithm $alg --memory 64K --tmpdir "$dir/missing"
    expect_rc 1
    expect_err_has "$dir/missing"
    [ ! -e "$dir/o.csv" ] || problem "output written"
    end
done

finish
