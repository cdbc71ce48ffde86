# cli_cases_lib.sh — the checks and fixtures shared by the command-line cases
# of anonkit (cli_cases.sh: bad input; cli_runs.sh: good runs). Sourced after
# cli_harness.sh, which defines BIN, SRC, T, OUT, ERR, PY, ak, problem and the
# expect_* checks it owns.

DATA=$SRC/tests/data/cli

# ---------------------------------------------------------------- helpers --

# CSV-aware checks (tests/csv_records.py: quoted fields may hold delimiters
# and newlines) and Python expressions over JSON documents (tests/json_expect.py).
csvtool() { "$PY" "$SRC/tests/csv_records.py" "$@"; }

# ak_in FILE ARGS...: runs anonkit with FILE on stdin.
ak_in() { local in=$1; shift; timeout 60 "$BIN" "$@" <"$in" >"$OUT" 2>"$ERR"; RC=$?; }


expect_err_lacks() { ! grep -qF -- "$1" "$ERR" || problem "stderr should not contain '$1'"; }
expect_out_empty() { [ ! -s "$OUT" ] || problem "stdout should be empty, has $(wc -c <"$OUT") bytes"; }
expect_err_empty() { [ ! -s "$ERR" ] || problem "stderr should be empty"; }
expect_file() { [ -s "$1" ] || problem "missing or empty file $1"; }

# Nothing at PATH, and no "*.tmp-*" temporary in its folder.
expect_no_output() {
    local path=$1 dir left
    dir=$(dirname "$path")
    [ ! -e "$path" ] || problem "output $path exists after a failure"
    if [ -d "$dir" ]; then
        left=$(find "$dir" -maxdepth 1 -name '*.tmp-*' | head -n 3)
        [ -z "$left" ] || problem "temporary file(s) left: $left"
    fi
}

# A user error: exit 1, "anonkit: LOCATION..." on stderr containing TEXT, no output at OUTPATH.
expect_user_error() {
    local location=$1 text=$2 outpath=$3
    expect_rc 1
    expect_err_starts "$location"
    [ -z "$text" ] || expect_err_has "$text"
    expect_no_output "$outpath"
}

expect_exist() {
    local f ok=0
    for f in "$@"; do [ -f "$f" ] || { problem "missing file $f"; ok=1; }; done
    return $ok
}
expect_same() {
    expect_exist "$1" "$2" || return
    cmp -s "$1" "$2" || problem "$1 and $2 differ: $(diff "$1" "$2" | head -n 4 | tr '\n' ' ')"
}
expect_differ() {
    expect_exist "$1" "$2" || return
    ! cmp -s "$1" "$2" || problem "$1 and $2 should differ"
}

# CSV-aware: same multiset of records / same columns (IN OUT DELIM COL...).
expect_same_rows() { local m; m=$(csvtool sameset "$1" "$2" "$3" 2>&1) || problem "$m"; }
expect_same_columns() { local m; m=$(csvtool samecols "$@" 2>&1) || problem "$m"; }
expect_header() {
    local h
    h=$(csvtool header "$1" "$2" 2>&1)
    [ "$h" = "$3" ] || problem "header of $1 is '$h', expected '$3'"
}

# expect_json FILE EXPR [SHOW]: a Python expression over the document j is
# true; on failure the value of the expression SHOW is printed too.
expect_json() { local m; m=$("$PY" "$SRC/tests/json_expect.py" "$@" 2>&1) || problem "$1: $m"; }
# expect_json_pair A B EXPR [SHOW]: the same over two documents a and b.
expect_json_pair() { local m; m=$("$PY" "$SRC/tests/json_expect.py" --pair "$@" 2>&1) || problem "$1, $2: $m"; }

# Row accounting of a successful run: the summary on stderr shows read,
# published and suppressed; published + suppressed = read = EXPECTED; the
# output (OUTPUT, DELIM) holds read records.
expect_accounting() {
    local output=$1 delim=$2 expected=$3 read pub sup n
    read=$(sed -n 's/^read \([0-9]*\) rows from .*/\1/p' "$ERR")
    pub=$(sed -n 's/^published \([0-9]*\) rows, suppressed \([0-9]*\).*/\1/p' "$ERR")
    sup=$(sed -n 's/^published \([0-9]*\) rows, suppressed \([0-9]*\).*/\2/p' "$ERR")
    if [ -z "$read" ] || [ -z "$pub" ] || [ -z "$sup" ]; then
        problem "summary lacks 'read N rows' / 'published P rows, suppressed S'"
        return
    fi
    [ $((pub + sup)) -eq "$read" ] || problem "published $pub + suppressed $sup != read $read"
    [ "$read" -eq "$expected" ] || problem "read $read rows, the input has $expected"
    n=$(csvtool count "$output" "$delim" 2>&1)
    [ "$n" = "$read" ] || problem "output has $n records, read $read"
}

# ---------------------------------------------------------------- fixtures --

PATIENTS=$DATA/patients.csv              # the Patients table of the Mondrian slides
SEXH=$DATA/patients_hierarchy_sex.csv    # Male;* / Female;*
GOLDEN=$DATA/patients_k2_expected.csv    # its k=2 publication, derived by hand
SEMI=$DATA/semicolon.csv                 # ';'-separated, quoted passthrough fields
PQI=(--qi "age,sex,zipcode" --hierarchy "sex=$SEXH")

# 200 rows: id,name,age,zipcode,sex,disease,note (some notes quoted, with a comma).
PEOPLE=$T/people.csv
{
    diseases=(Flu Hepatitis Brochitis "Broken Arm" AIDS "Hang Nail")
    sexes=(Male Female)
    echo "id,name,age,zipcode,sex,disease,note"
    for ((i = 1; i <= 200; i++)); do
        note="note $((i * 7 % 11))"
        ((i % 10 == 0)) && note="\"note, $i\""
        echo "$i,Person $i,$((18 + i * 37 % 60)),$((53700 + i * 13 % 40)),${sexes[i % 2]},${diseases[i % 6]},$note"
    done
} >"$PEOPLE"
PEOPLE_QI=(--qi "age,zipcode,sex" --hierarchy "sex=$SEXH" --identifier name --sensitive disease --k 5)

# A small table with three data rows, used by the parameter cases.
SMALL=$T/small.csv
printf 'a,b,c\n1,2,3\n4,5,6\n7,8,9\n' >"$SMALL"

