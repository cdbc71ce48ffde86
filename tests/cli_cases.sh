#!/usr/bin/env bash
# cli_cases.sh — command-line cases of anonkit on bad input: the message, the
# exit code and nothing left at the output path (good runs: cli_runs.sh).
#
# usage: bash tests/cli_cases.sh PATH/TO/anonkit SOURCE_DIR
#
# Prints one line per case, "ok - NAME" or "not ok - NAME" followed by
# "#   ..." detail lines, then "N passed, M failed"; exits 1 if any case failed.
# Needs bash, coreutils and /usr/bin/python3 (the JSON and CSV-aware checks are
# tests/csv_records.py and tests/json_expect.py).
set -u
source "$(dirname "$0")/cli_harness.sh" cli-cases "$@"
source "$(dirname "$0")/cli_cases_lib.sh"

# ------------------------------------------------------ 1. malformed CSV --

begin "csv: unterminated quote names the line where it opened"
d=$(casedir)
# line 2-3: a closed quoted field with a newline; line 4 opens a quote never closed
printf 'a,b,c\n1,"x\ny",3\n4,"open,6\n7,8,9\n' >"$d/in.csv"
ak anonymize "$d/in.csv" -o "$d/out.csv" --qi a --k 1
expect_user_error "$d/in.csv:4: " "never closed" "$d/out.csv"
end

begin "csv: unterminated quote on the last line without a line end"
d=$(casedir)
printf 'a,b,c\n1,2,3\n4,"5,6' >"$d/in.csv"
ak anonymize "$d/in.csv" -o "$d/out.csv" --qi a --k 1
expect_user_error "$d/in.csv:3: " "never closed" "$d/out.csv"
end

begin "csv: too few fields on line N (physical lines counted)"
d=$(casedir)
printf 'a,b,c\n1,"x\ny",3\n4,5\n7,8,9\n' >"$d/in.csv"
ak anonymize "$d/in.csv" -o "$d/out.csv" --qi a --k 1
expect_user_error "$d/in.csv:4: " "expected 3 fields" "$d/out.csv"
end

begin "csv: too many fields on line N"
d=$(casedir)
printf 'a,b,c\n1,2,3\n4,5,6\n7,8,9,10\n' >"$d/in.csv"
ak anonymize "$d/in.csv" -o "$d/out.csv" --qi a --k 1
expect_user_error "$d/in.csv:4: " "found 4" "$d/out.csv"
end

begin "csv: text after a closing quote"
d=$(casedir)
printf 'a,b,c\n1,2,3\n4,"5"x,6\n' >"$d/in.csv"
ak anonymize "$d/in.csv" -o "$d/out.csv" --qi a --k 1
expect_user_error "$d/in.csv:3: " "after a closing quote" "$d/out.csv"
end

begin "csv: empty line inside the data"
d=$(casedir)
printf 'a,b,c\n1,2,3\n\n4,5,6\n' >"$d/in.csv"
ak anonymize "$d/in.csv" -o "$d/out.csv" --qi a --k 1
expect_user_error "$d/in.csv:3: " "" "$d/out.csv"
end

begin "csv: a NUL byte in a column's name (names are C strings)"
d=$(casedir)
printf 'a\0b,c\n1,2\n3,4\n' >"$d/in.csv"
ak anonymize "$d/in.csv" -o "$d/out.csv" --qi c --k 1
expect_user_error "$d/in.csv:1: " "name holds a NUL byte" "$d/out.csv"
end

begin "hierarchy: a NUL byte in a label"
d=$(casedir)
printf 'c\nv\nw\n' >"$d/in.csv"
printf 'v;x\0y;*\nw;x;*\n' >"$d/c.csv"
ak anonymize "$d/in.csv" -o "$d/out.csv" --qi c --hierarchy c="$d/c.csv" --k 1
expect_user_error "$d/c.csv:1: " "holds a NUL byte" "$d/out.csv"
end

begin "csv: malformed stdin is named 'stdin', not the spool file"
d=$(casedir)
printf 'a,b,c\n1,2,3\n4,"5,6\n' >"$d/in.csv"
ak_in "$d/in.csv" anonymize - -o "$d/out.csv" --qi a --k 1
expect_user_error "stdin:3: " "never closed" "$d/out.csv"
expect_err_lacks "$TMPDIR"
end

begin "csv: wrong field count on stdin, -o -: nothing on stdout"
d=$(casedir)
printf 'a,b,c\n1,2,3\n4,5\n' >"$d/in.csv"
ak_in "$d/in.csv" anonymize - -o - --qi a --k 1
expect_user_error "stdin:3: " "expected 3 fields" "$d/out.csv"
expect_out_empty
end

# ---------------------------------------------------- 2. unknown columns --

for role in qi sensitive identifier; do
    begin "unknown column in --$role"
    d=$(casedir)
    if [ $role = qi ]; then ak anonymize "$SMALL" -o "$d/out.csv" --qi a,zz --k 1
    else ak anonymize "$SMALL" -o "$d/out.csv" --qi a --$role zz --k 1; fi
    expect_user_error "$SMALL:1: " "no column named 'zz'" "$d/out.csv"
    end
done

begin "unknown column in check --qi"
ak check "$GOLDEN" --qi age,zz --k 2
expect_rc 1
expect_err_starts "$GOLDEN:1: "
expect_err_has "'zz'"
end

# ------------------------------------- 3. non-numeric QI without hierarchy --

begin "QI without hierarchy holding text needs a hierarchy"
d=$(casedir)
printf 'a,b,c\n1,2,3\n4,5,6\n7,x,9\n10,11,12\n13,y,15\n' >"$d/in.csv"
ak anonymize "$d/in.csv" -o "$d/out.csv" --qi a,b --k 1
expect_user_error "$d/in.csv:4: " "--hierarchy b=" "$d/out.csv"
expect_err_has "'x'"
end

# ------------------------------------------------- 4. broken hierarchies --

HDATA=$T/hdata.csv
printf 'a,s\n1,x\n2,y\n3,z\n' >"$HDATA"

begin "hierarchy: rows of unequal length"
d=$(casedir)
printf 'x;A;*\ny;A;*\nz;B\n' >"$d/h.csv"
ak anonymize "$HDATA" -o "$d/out.csv" --qi s --hierarchy "s=$d/h.csv" --k 1
expect_user_error "$d/h.csv:3: " "expected 3 fields" "$d/out.csv"
end

begin "hierarchy: a label with two parents"
d=$(casedir)
printf 'x;A;*\ny;A;*\nz;B;*\nw;A;Q\n' >"$d/h.csv"
ak anonymize "$HDATA" -o "$d/out.csv" --qi s --hierarchy "s=$d/h.csv" --k 1
expect_user_error "$d/h.csv:4: " "two parents" "$d/out.csv"
expect_err_has '"A"'
end

begin "hierarchy: duplicate leaves"
d=$(casedir)
printf 'x;A;*\ny;A;*\nz;B;*\nx;A;*\n' >"$d/h.csv"
ak anonymize "$HDATA" -o "$d/out.csv" --qi s --hierarchy "s=$d/h.csv" --k 1
expect_user_error "$d/h.csv:4: " "duplicate leaf" "$d/out.csv"
expect_err_has "line 1"
end

begin "hierarchy: missing file"
d=$(casedir)
ak anonymize "$HDATA" -o "$d/out.csv" --qi s --hierarchy "s=$d/nosuch.csv" --k 1
expect_user_error "$d/nosuch.csv" "" "$d/out.csv"
end

begin "hierarchy: a data value that is not a leaf"
d=$(casedir)
printf 'x;A;*\ny;A;*\n' >"$d/h.csv"
ak anonymize "$HDATA" -o "$d/out.csv" --qi s --hierarchy "s=$d/h.csv" --k 1
expect_user_error "$HDATA:4: " "'z'" "$d/out.csv"
expect_err_has "$d/h.csv"
end

begin "hierarchy: 12 missing values, at most 10 listed with their lines"
d=$(casedir)
printf 'x;A;*\ny;A;*\n' >"$d/h.csv"
{
    echo "a,s"          # line 1
    echo "0,x"          # line 2
    for ((i = 1; i <= 12; i++)); do
        echo "$i,m$i"   # line 2i+1
        echo "$i,y"     # line 2i+2
    done
} >"$d/in.csv"
ak anonymize "$d/in.csv" -o "$d/out.csv" --qi s --hierarchy "s=$d/h.csv" --k 1
expect_user_error "$d/in.csv:3: " "'m1'" "$d/out.csv"
expect_err_has "12 values"
listed=$(grep -oE "'m[0-9]+'" "$ERR" | wc -l)
((listed <= 10)) || problem "$listed missing values listed, at most 10 allowed"
((listed >= 2)) || problem "only $listed missing value listed"
for ((i = 2; i <= listed; i++)); do expect_err_has "'m$i' (s, line $((2 * i + 1)))"; done
expect_err_lacks "'m11'"
expect_err_lacks "'m12'"
end

# --------------------------------------------------------------- 5. k --

begin "k: --k 0"
d=$(casedir)
ak anonymize "$SMALL" -o "$d/out.csv" --qi a --k 0
expect_user_error "--k" "'0'" "$d/out.csv"
end

begin "k: larger than the number of rows"
d=$(casedir)
ak anonymize "$SMALL" -o "$d/out.csv" --qi a --k 4
expect_user_error "" "3 rows" "$d/out.csv"
expect_err_has "--k 4"
end

for bad in abc 2x -1 2.5 ""; do
    begin "k: non-numeric --k '$bad'"
    d=$(casedir)
    ak anonymize "$SMALL" -o "$d/out.csv" --qi a --k "$bad"
    expect_user_error "--k" "" "$d/out.csv"
    end
done

# --------------------------------------------------------------- 6. l --

begin "l: larger than the distinct sensitive values"
d=$(casedir)
ak anonymize "$SMALL" -o "$d/out.csv" --qi a --sensitive b --l 4
expect_user_error "" "3 distinct values" "$d/out.csv"
expect_err_has "--l 4"
end

begin "l: --l without --sensitive"
d=$(casedir)
ak anonymize "$SMALL" -o "$d/out.csv" --qi a --l 2
expect_user_error "" "--sensitive" "$d/out.csv"
end

begin "l: --l 0"
d=$(casedir)
ak anonymize "$SMALL" -o "$d/out.csv" --qi a --sensitive b --l 0
expect_user_error "--l" "" "$d/out.csv"
end

begin "l: check --l without --sensitive"
ak check "$GOLDEN" --qi age --l 2
expect_rc 1
expect_err_starts ""
expect_err_has "--sensitive"
end

# ---------------------------------------------------- 7. unwritable output --

begin "output: unwritable -o path"
ak anonymize "$PATIENTS" -o /nonexistent-dir/out.csv "${PQI[@]}" --k 2
expect_user_error "/nonexistent-dir/out.csv: " "cannot create" /nonexistent-dir/out.csv
[ ! -e /nonexistent-dir ] || problem "/nonexistent-dir exists"
end

begin "output: unwritable -o is reported before the input is read"
d=$(casedir)
printf 'a,b,c\n1,2,3\n4,5\n' >"$d/in.csv"   # bad data: must not be reached
ak anonymize "$d/in.csv" -o /nonexistent-dir/out.csv --qi a --k 1
expect_user_error "/nonexistent-dir/out.csv: " "" /nonexistent-dir/out.csv
expect_err_lacks "$d/in.csv"
end

begin "output: unwritable -o fails without waiting for stdin"
# stdin never ends (a FIFO held open for writing): the run must not read it all first.
mkfifo "$T/fifo"
exec 9<>"$T/fifo"
timeout 2 "$BIN" anonymize - -o /nonexistent-dir/out.csv --qi a --k 1 <"$T/fifo" >"$OUT" 2>"$ERR"
RC=$?
exec 9>&-
rm -f "$T/fifo"
if [ "$RC" -eq 124 ]; then
    problem "still reading stdin after 2 s (killed)"
    rm -rf "${TMPDIR:?}"/*   # the spool of the killed run, not the program's fault
fi
expect_user_error "/nonexistent-dir/out.csv: " "" /nonexistent-dir/out.csv
end

begin "output: unwritable --report leaves no output"
d=$(casedir)
ak anonymize "$PATIENTS" -o "$d/out.csv" --report /nonexistent-dir/r.json "${PQI[@]}" --k 2
expect_user_error "/nonexistent-dir/r.json: " "" "$d/out.csv"
end

begin "output: a failure leaves an existing output file untouched"
d=$(casedir)
echo "precious" >"$d/out.csv"
ak anonymize "$SMALL" -o "$d/out.csv" --qi a --k 4
expect_rc 1
[ "$(cat "$d/out.csv")" = precious ] || problem "existing output was changed"
[ -z "$(find "$d" -name '*.tmp-*')" ] || problem "temporary file left in $d"
end

# --------------------------------------------------- 8. options and jobs --

begin "option: unknown option"
d=$(casedir)
ak anonymize "$SMALL" -o "$d/out.csv" --qi a --bogus --k 1
expect_user_error "--bogus" "unknown option" "$d/out.csv"
end

begin "option: option without its value"
d=$(casedir)
ak anonymize "$SMALL" -o "$d/out.csv" --qi a --k
expect_user_error "--k" "needs a value" "$d/out.csv"
end

begin "option: unknown command"
ak frobnicate
expect_rc 1
expect_err_starts "unknown command"
end

begin "option: missing input file"
d=$(casedir)
ak anonymize "$d/nosuch.csv" -o "$d/out.csv" --qi a --k 1
expect_user_error "$d/nosuch.csv: " "cannot open" "$d/out.csv"
end

begin "option: no input file given"
d=$(casedir)
ak anonymize -o "$d/out.csv" --qi a --k 1
expect_user_error "" "input" "$d/out.csv"
end

begin "option: no --qi given"
d=$(casedir)
ak anonymize "$SMALL" -o "$d/out.csv" --k 1
expect_user_error "" "--qi" "$d/out.csv"
end

begin "option: unknown --algorithm"
d=$(casedir)
ak anonymize "$SMALL" -o "$d/out.csv" --qi a --algorithm foo --k 1
expect_user_error "--algorithm" "'foo'" "$d/out.csv"
end

begin "option: bad --l-variant"
d=$(casedir)
ak anonymize "$SMALL" -o "$d/out.csv" --qi a --sensitive b --l 2 --l-variant foo
expect_user_error "--l-variant" "'foo'" "$d/out.csv"
end

begin "option: bad --delimiter"
d=$(casedir)
ak anonymize "$SMALL" -o "$d/out.csv" --qi a --delimiter ';;' --k 1
expect_user_error "--delimiter" "" "$d/out.csv"
end

begin "job: invalid JSON names the job file and line"
d=$(casedir)
printf '{\n  "qi": ["a"],\n  "k": 2,,\n  "seed": 1\n}\n' >"$d/job.json"
ak anonymize "$SMALL" -o "$d/out.csv" --job "$d/job.json"
expect_user_error "$d/job.json:3: " "" "$d/out.csv"
end

begin "job: unknown setting names the job file"
d=$(casedir)
printf '{\n  "qi": ["a"],\n  "kk": 2\n}\n' >"$d/job.json"
ak anonymize "$SMALL" -o "$d/out.csv" --job "$d/job.json"
expect_user_error "$d/job.json" "'kk'" "$d/out.csv"
end

begin "job: bad value names the job file"
d=$(casedir)
printf '{\n  "qi": ["a"],\n  "k": "zero"\n}\n' >"$d/job.json"
ak anonymize "$SMALL" -o "$d/out.csv" --job "$d/job.json"
expect_user_error "$d/job.json" "--k" "$d/out.csv"
end

begin "job: not an object"
d=$(casedir)
printf '[1, 2]\n' >"$d/job.json"
ak anonymize "$SMALL" -o "$d/out.csv" --job "$d/job.json"
expect_user_error "$d/job.json:1: " "" "$d/out.csv"
end

begin "job: missing job file"
d=$(casedir)
ak anonymize "$SMALL" -o "$d/out.csv" --job "$d/nosuch.json"
expect_user_error "$d/nosuch.json" "" "$d/out.csv"
end

# ---------------------------------------------------------------- 9. help --

begin "help: anonkit --help"
ak --help
expect_rc 0
expect_out_has "usage: anonkit"
expect_out_has "anonymize"
expect_err_empty
end

for cmd in anonymize check metrics; do
    for flag in --help -h; do
        begin "help: anonkit $cmd $flag"
        ak "$cmd" "$flag"
        expect_rc 0
        expect_out_has "usage: anonkit $cmd"
        expect_out_has "--qi"
        expect_err_empty
        end
    done
done

begin "help: anonkit without a command prints usage and fails"
ak
expect_rc 1
expect_err_has "usage: anonkit"
end

# ----------------------------------------------------------- 9b. generate --

GEN_HEADER="salary|commission|age|elevel|car|zipcode|hvalue|hyears|loan|c2|c7|r7|r10"

for flag in --help -h; do
    begin "generate: $flag"
    ak generate "$flag"
    expect_rc 0
    expect_out_has "usage: anonkit generate"
    expect_out_has "--rows"
    expect_out_has "--format"
    expect_err_empty
    end
done

for rows in abc -5 "" 1e6 12x " 7"; do
    begin "generate: bad --rows '$rows'"
    d=$(casedir)
    ak generate --rows "$rows" --seed 1 -o "$d/out.csv"
    expect_user_error "--rows must be a whole number" "'$rows'" "$d/out.csv"
    end
done

begin "generate: missing --rows, missing -o, bad --seed, stray argument"
d=$(casedir)
ak generate --seed 1 -o "$d/out.csv"
expect_user_error "generate needs --rows" "" "$d/out.csv"
ak generate --rows 10 --seed 1
expect_user_error "generate needs an output file" "" "$d/out.csv"
ak generate --rows 10 --seed -1 -o "$d/out.csv"
expect_user_error "--seed must be a whole number" "'-1'" "$d/out.csv"
ak generate --rows 10 --seed 18446744073709551616 -o "$d/out.csv"
expect_user_error "--seed must be a whole number" "" "$d/out.csv"
ak generate --rows 10 --seed 1 -o "$d/out.csv" extra
expect_user_error "unexpected argument 'extra'" "" "$d/out.csv"
ak generate --rows 10 --bogus -o "$d/out.csv"
expect_user_error "--bogus: unknown option" "" "$d/out.csv"
end

begin "generate: bad --format"
d=$(casedir)
ak generate --rows 10 --seed 1 --format xml -o "$d/out.csv"
expect_user_error "--format must be csv or binary" "'xml'" "$d/out.csv"
end

begin "generate: an output folder that does not exist"
d=$(casedir)
ak generate --rows 10 --seed 1 -o "$d/no/such/out.csv"
expect_user_error "$d/no/such/out.csv: " "" "$d/no/such/out.csv"
end

begin "generate: 1000 rows with a seed: header, count, same bytes again and on stdout"
d=$(casedir)
ak generate --rows 1000 --seed 7 -o "$d/a.csv"
expect_rc 0
expect_err_has "wrote 1000 rows"
expect_err_has "(seed 7)"
expect_header "$d/a.csv" , "$GEN_HEADER"
n=$(csvtool count "$d/a.csv" , 2>&1)
[ "$n" = 1000 ] || problem "$n records, expected 1000"
ak generate --rows 1000 --seed 7 -o "$d/b.csv"
expect_same "$d/a.csv" "$d/b.csv"
ak generate --rows 1000 --seed 7 -o -
cp "$OUT" "$d/stdout.csv"
expect_same "$d/a.csv" "$d/stdout.csv"
ak generate --rows 1000 --seed 8 -o "$d/c.csv"
expect_differ "$d/a.csv" "$d/c.csv"
end

begin "generate: without --seed the seed printed on stderr reproduces the file"
d=$(casedir)
ak generate --rows 500 -o "$d/a.csv"
expect_rc 0
seed=$(sed -n 's/.*(seed \([0-9]*\))$/\1/p' "$ERR")
if [[ $seed =~ ^[0-9]+$ ]]; then
    ak generate --rows 500 --seed "$seed" -o "$d/b.csv"
    expect_rc 0
    expect_same "$d/a.csv" "$d/b.csv"
else
    problem "no seed on stderr"
fi
end

begin "generate: --format binary starts with the tuple magic, same bytes for the same seed"
d=$(casedir)
ak generate --rows 1000 --seed 7 --format binary -o "$d/a.bin"
expect_rc 0
ak generate --rows 1000 --seed 7 --format binary -o "$d/b.bin"
expect_same "$d/a.bin" "$d/b.bin"
[ "$(head -c 8 "$d/a.bin" 2>/dev/null)" = AKTUPLE1 ] || problem "a.bin does not start with AKTUPLE1"
[ "$(tail -c 16 "$d/a.bin" 2>/dev/null | head -c 8)" = AKTUPEND ] || problem "a.bin does not end with AKTUPEND"
# 216-byte header, 1000 rows of 60 bytes, 16-byte end marker (docs/tuple-format.md)
size=$(stat -c %s "$d/a.bin" 2>/dev/null)
[ "$size" = $((216 + 1000 * 60 + 16)) ] || problem "a.bin has $size bytes"
end

begin "generate: a FIFO as -o is written, not replaced"
d=$(casedir)
mkfifo "$d/fifo"
cat "$d/fifo" >"$d/got.csv" &
reader=$!
ak generate --rows 300 --seed 5 -o "$d/fifo"
expect_rc 0
wait "$reader"
[ -p "$d/fifo" ] || problem "$d/fifo is no longer a FIFO"
ak generate --rows 300 --seed 5 -o "$d/want.csv"
expect_same "$d/got.csv" "$d/want.csv"
expect_no_output "$d/none"
end

begin "generate: peak memory does not grow with the number of rows"
if [ -x /usr/bin/time ]; then
    for fmt in csv binary; do
        small=$( { /usr/bin/time -f %M "$BIN" generate --rows 10 --seed 1 --format $fmt -o - 2>&1 >/dev/null; } | tail -n 1)
        large=$( { /usr/bin/time -f %M "$BIN" generate --rows 3000000 --seed 1 --format $fmt -o - 2>&1 >/dev/null; } | tail -n 1)
        if [[ $small =~ ^[0-9]+$ && $large =~ ^[0-9]+$ ]]; then
            [ $((large - small)) -le 2048 ] || problem "$fmt: peak RSS $large KB for 3,000,000 rows, $small KB for 10"
        else
            problem "$fmt: no peak RSS from /usr/bin/time ('$small', '$large')"
        fi
    done
else
    echo "# /usr/bin/time missing: memory case skipped"
fi
end

# ------------------------------------------------ 10. no row is ever lost --

begin "accounting: Patients, k=2"
d=$(casedir)
ak anonymize "$PATIENTS" -o "$d/out.csv" "${PQI[@]}" --k 2
expect_rc 0
expect_accounting "$d/out.csv" , 6
end

begin "accounting: 200 rows, k=5, l=2"
d=$(casedir)
ak anonymize "$PEOPLE" -o "$d/out.csv" "${PEOPLE_QI[@]}" --l 2 --seed 3
expect_rc 0
expect_accounting "$d/out.csv" , 200
end

begin "accounting: rows with embedded newlines"
d=$(casedir)
ak anonymize "$SEMI" -o "$d/out.csv" --delimiter ';' --qi age,zipcode --k 2 --seed 1
expect_rc 0
expect_accounting "$d/out.csv" ';' "$(csvtool count "$SEMI" ';')"
end

finish
