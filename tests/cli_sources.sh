#!/usr/bin/env bash
# cli_sources.sh — tables where they live (docs/sources.md): PostgreSQL,
# SQLite and SPSS/Stata/SAS files read and written by every command.
#
# A real PostgreSQL server is started here (tests/pg_cluster.sh: a throw-away
# cluster in a temporary folder, a Unix socket only, an unprivileged owner)
# and removed at the end, on failure too. Cases: random tables anonymized
# from and to PostgreSQL and SQLite give the same rows as the CSV path
# (multisets), Mondrian and Rothko-T; --query; check/metrics/recode/
# sequential on table sources; an existing target refused without
# --replace; the target appears only on success (a run killed in the middle
# of its COPY leaves no table); an update of the source during a run does not
# change what is published; ReadStat round trips (CSV -> .sav/.dta/.xpt/
# .sas7bdat made by the readstat command -> anonymize -> read back) equal the
# CSV path, value labels and --use-codes; every bad source (unreachable
# server, wrong password, missing table, query error, permission denied on
# the target, corrupt .sav) gives "anonkit: SOURCE: what is wrong" with the
# password masked, exit 1, and nothing created. Nothing is skipped: a
# missing program fails the test (scripts/deps.sh installs them).
#
# usage: bash tests/cli_sources.sh PATH/TO/anonkit SOURCE_DIR
set -u
source "$(dirname "$0")/cli_harness.sh" cli-sources "$@"
source "$SRC/tests/pg_cluster.sh"
for prog in psql sqlite3 readstat; do
    command -v "$prog" >/dev/null || { echo "cli-sources: $prog not found (scripts/deps.sh installs it)" >&2; exit 1; }
done
PGD=$(mktemp -d /tmp/anonkit-pg.XXXXXX) || exit 1
trap 'pg_stop; rm -rf "$T"' EXIT
pg_start "$PGD" || { echo "cli-sources: cannot start PostgreSQL" >&2; exit 1; }
psql -qX -c "CREATE DATABASE t" >/dev/null || exit 1
export PGDATABASE=t
sql() { psql -qAtX -v ON_ERROR_STOP=1 "$@"; }
QI=age,zipcode,salary,elevel
COLS="salary bigint, commission bigint, age bigint, elevel bigint, car bigint, zipcode bigint, hvalue bigint,
      hyears bigint, loan bigint, c2 text, c7 text, r7 numeric, r10 numeric"
# The rows of two CSV files as multisets, numbers compared as numbers (a
# database or statistics file may store 16506.20 as 16506.2).
same_rows() {
    "$PY" - "$1" "$2" <<'EOF'
import csv, sys
def norm(v):
    try:
        f = float(v)
        return repr(f) if v.strip() != '' else ''
    except ValueError:
        return v
def rows(p):
    with open(p, newline='') as f:
        r = list(csv.reader(f))
    return r[0], sorted(tuple(norm(v) for v in row) for row in r[1:])
a, b = rows(sys.argv[1]), rows(sys.argv[2])
sys.exit(0 if a == b else 1)
EOF
}
pg_table_csv() { sql -c "\\copy (SELECT * FROM $1) TO '$2' CSV HEADER"; }
pg_has_table() { [ "$(PGUSER=ak PGPASSWORD=$PG_PASSWORD sql -c "SELECT count(*) FROM pg_tables WHERE tablename LIKE '$1'")" != 0 ]; }

# 1. random tables: PostgreSQL -> PostgreSQL and SQLite -> SQLite equal the CSV path
d=$(casedir)
D1=$d
for seed in 1 2 3; do
    rows=$((1500 + seed * 700))
    ak generate --rows $rows --seed $seed -o "$d/g$seed.csv"
    sql -c "CREATE TABLE g$seed ($COLS)" -c "\\copy g$seed FROM '$d/g$seed.csv' CSV HEADER"
    sqlite3 "$d/src.db" ".mode csv" ".import '$d/g$seed.csv' g$seed"
    for algo in mondrian rothko-t; do
        extra=()
        [ $algo = rothko-t ] && extra=(--memory 4M)
        k=$((5 + seed))
        begin "random table $seed ($rows rows), $algo: PostgreSQL to PostgreSQL equals the CSV path"
        ak anonymize "$d/g$seed.csv" -o "$d/c$seed$algo.csv" --qi $QI --k $k --seed 9 --algorithm $algo "${extra[@]}"
        expect_rc 0
        ak anonymize "postgresql:///t?table=g$seed" -o "postgresql:///t?table=p${seed}_${algo//-/_}" --qi $QI \
            --k $k --seed 9 --algorithm $algo "${extra[@]}" --report "$d/r.json"
        expect_rc 0
        pg_table_csv "p${seed}_${algo//-/_}" "$d/p.csv"
        cmp -s <(sort "$d/c$seed$algo.csv") <(sort "$d/p.csv") || problem "published rows differ from the CSV path's"
        expect_json "$d/r.json" "j['parameters']['input'] == 'postgresql:///t?table=g$seed'"
        end
        begin "random table $seed, $algo: SQLite to SQLite equals the CSV path"
        ak anonymize "sqlite:$d/src.db?table=g$seed" -o "sqlite:$d/out.db?table=p$seed${algo//-/_}" --qi $QI \
            --k $k --seed 9 --algorithm $algo "${extra[@]}"
        expect_rc 0
        sqlite3 -header -csv "$d/out.db" "SELECT * FROM p$seed${algo//-/_}" >"$d/s.csv"
        same_rows "$d/c$seed$algo.csv" "$d/s.csv" || problem "published rows differ from the CSV path's"
        end
    done
done

begin "check and metrics read a published PostgreSQL table; the verifier proves it"
ak check "postgresql:///t?table=p1_mondrian" --qi $QI --k 6
expect_rc 0
ak metrics "postgresql:///t?table=g1" "postgresql:///t?table=p1_mondrian" --qi $QI
expect_rc 0
ak check "sqlite:$d/out.db?table=p1rothko_t" --qi $QI --k 6
expect_rc 0
end

begin "anonkit report documents a published table against its original table (SQLite)"
ak report "sqlite:$d/out.db?table=p1mondrian" --original "sqlite:$d/src.db?table=g1" --qi $QI --k 6 \
    --html "$d/report.html"
expect_rc 0
grep -qF "table=p1mondrian" "$d/report.html" || problem "the report does not name the published table"
grep -qF "Verified" "$d/report.html" || problem "the report lacks the verifier's verdict"
end

begin "risk reads table sources: the same measures as on the CSV file"
ak risk "$d/g1.csv" --qi $QI --json "$d/risk-csv.json"
expect_rc 0
ak risk "postgresql:///t?table=g1" --qi $QI --json "$d/risk-pg.json"
expect_rc 0
ak risk "sqlite:$d/src.db?table=g1" --qi $QI --json "$d/risk-sq.json"
expect_rc 0
for f in pg sq; do
    python3 - "$d/risk-csv.json" "$d/risk-$f.json" <<'PY' || problem "risk on the $f table differs from the CSV file's"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
for doc in (a, b):
    doc.pop("file", None)
sys.exit(0 if a == b else 1)
PY
done
end

begin "--query: the rows of a SELECT (PostgreSQL and SQLite) equal the CSV path on the same rows"
awk -F, 'NR == 1 || $4 >= 2' "$d/g1.csv" >"$d/q.csv"
ak anonymize "$d/q.csv" -o "$d/qc.csv" --qi $QI --k 5 --seed 4
ak anonymize "postgresql:///t" --query "SELECT * FROM g1 WHERE elevel >= 2" -o "$d/qp.csv" --qi $QI --k 5 --seed 4
expect_rc 0
cmp -s <(sort "$d/qc.csv") <(sort "$d/qp.csv") || problem "--query (PostgreSQL) differs from the CSV path"
ak anonymize "sqlite:$d/src.db" --query "SELECT * FROM g1 WHERE CAST(elevel AS INTEGER) >= 2" -o "$d/qs.csv" \
    --qi $QI --k 5 --seed 4
expect_rc 0
cmp -s <(sort "$d/qc.csv") <(sort "$d/qs.csv") || problem "--query (SQLite) differs from the CSV path"
end

begin "recode and sequential read table sources"
ak anonymize "$d/g1.csv" -o "$d/rc.csv" --qi $QI --k 6 --seed 9 --rules "$d/g1.rules"
ak recode "$d/g1.csv" --rules "$d/g1.rules" -o "$d/recoded.csv"
ak recode "postgresql:///t?table=g1" --rules "$d/g1.rules" -o "sqlite:$d/out.db?table=recoded"
expect_rc 0
sqlite3 -header -csv "$d/out.db" "SELECT * FROM recoded" >"$d/recoded_s.csv"
same_rows "$d/recoded.csv" "$d/recoded_s.csv" || problem "recode from PostgreSQL to SQLite differs from the CSV path"
SEQ=$SRC/tests/data/sequential
SEQARGS=(--previous "$SEQ/t2.csv" --x Name --y Disease --anonymity 2 --class Class --keep-order
         --hierarchy "Job=$SEQ/job.csv" --hierarchy "Name=$SEQ/name.csv" --seed 1)
ak sequential "$SEQ/t1.csv" -o "$d/seq.csv" "${SEQARGS[@]}"
sql -c "CREATE TABLE t1 (\"Name\" text, \"Job\" text, \"Class\" text)" -c "\\copy t1 FROM '$SEQ/t1.csv' CSV HEADER"
ak sequential "postgresql:///t?table=t1" -o "sqlite:$d/out.db?table=seq" "${SEQARGS[@]}"
expect_rc 0
sqlite3 -header -csv "$d/out.db" "SELECT * FROM seq" >"$d/seq_s.csv"
cmp -s "$d/seq.csv" "$d/seq_s.csv" || problem "sequential from PostgreSQL to SQLite differs from the CSV path"
end

begin "an existing target is refused without --replace (nothing changed) and replaced with it"
before=$(sql -c "SELECT count(*) FROM p1_mondrian")
ak anonymize "postgresql:///t?table=g2" -o "postgresql:///t?table=p1_mondrian" --qi $QI --k 7 --seed 9
expect_rc 1
expect_err_starts "postgresql:///t?table=p1_mondrian: table p1_mondrian exists (give --replace"
[ "$(sql -c "SELECT count(*) FROM p1_mondrian")" = "$before" ] || problem "the refused target changed"
ak anonymize "postgresql:///t?table=g2" -o "postgresql:///t?table=p1_mondrian" --qi $QI --k 7 --seed 9 --replace
expect_rc 0
pg_table_csv p1_mondrian "$d/p.csv"
cmp -s <(sort "$d/c2mondrian.csv") <(sort "$d/p.csv") || problem "the replaced table is not the new release"
ak anonymize "sqlite:$d/src.db?table=g2" -o "sqlite:$d/out.db?table=p1mondrian" --qi $QI --k 7 --seed 9
expect_rc 1
expect_err_has "exists (give --replace"
ak anonymize "sqlite:$d/src.db?table=g2" -o "sqlite:$d/out.db?table=p1mondrian" --qi $QI --k 7 --seed 9 --replace
expect_rc 0
end

# 2. the target appears only on success: a run killed in the middle of its
# COPY (each row made slow by a trigger the event trigger puts on every new
# table) leaves no table, and the server rolls its transaction back
d=$(casedir)
sql -c "CREATE FUNCTION slow_row() RETURNS trigger LANGUAGE plpgsql AS \$\$ BEGIN PERFORM pg_sleep(0.002); RETURN NEW; END \$\$" \
    -c "CREATE FUNCTION slow_new() RETURNS event_trigger LANGUAGE plpgsql AS \$\$ DECLARE r record; BEGIN
          FOR r IN SELECT * FROM pg_event_trigger_ddl_commands() WHERE command_tag = 'CREATE TABLE' LOOP
            EXECUTE format('CREATE TRIGGER slow BEFORE INSERT ON %s FOR EACH ROW EXECUTE FUNCTION slow_row()', r.object_identity);
          END LOOP; END \$\$" \
    -c "CREATE EVENT TRIGGER slow_new ON ddl_command_end EXECUTE FUNCTION slow_new()"
begin "killed (SIGKILL) in the middle of COPY ... FROM STDIN: no table, no temporary table"
"$BIN" anonymize "postgresql:///t?table=g3" -o "postgresql:///t?table=killed" --qi $QI --k 5 --seed 1 \
    </dev/null >/dev/null 2>&1 &
pid=$!
copying=0
for _ in $(seq 200); do
    if [ "$(sql -c "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'anonkit' AND query LIKE 'COPY %FROM STDIN'")" != 0 ]; then
        copying=1
        break
    fi
    sleep 0.05
done
[ $copying = 1 ] || problem "the run was never seen copying"
kill -9 $pid 2>/dev/null
wait $pid 2>/dev/null
for _ in $(seq 100); do
    [ "$(sql -c "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'anonkit'")" = 0 ] && break
    sleep 0.05
done
pg_has_table killed && problem "the killed run's table exists"
pg_has_table 'anonkit_new_%' && problem "the killed run's temporary table exists"
end
sql -c "DROP EVENT TRIGGER slow_new"

begin "SQLite: runs killed at random moments leave either no table or the whole of it"
ak generate --rows 60000 --seed 5 -o "$d/big.csv"
sqlite3 "$d/big.db" ".mode csv" ".import '$d/big.csv' big"
for delay in 0.05 0.15 0.25 0.35 0.5; do
    rm -f "$d/k.db"
    "$BIN" anonymize "sqlite:$d/big.db?table=big" -o "sqlite:$d/k.db?table=pub" --qi $QI --k 5 --seed 1 \
        </dev/null >/dev/null 2>&1 &
    pid=$!
    sleep $delay
    kill -9 $pid 2>/dev/null
    wait $pid 2>/dev/null
    if [ -e "$d/k.db" ]; then
        n=$(sqlite3 "$d/k.db" "SELECT count(*) FROM sqlite_master WHERE name = 'pub'")
        if [ "$n" = 1 ]; then
            [ "$(sqlite3 "$d/k.db" "SELECT count(*) FROM pub")" = 60000 ] || problem "a partial table after a kill at $delay s"
        fi
        [ "$(sqlite3 "$d/k.db" "SELECT count(*) FROM sqlite_master WHERE name LIKE 'anonkit_new_%'")" = 0 ] ||
            problem "a temporary table after a kill at $delay s"
    fi
done
end

# 3. an update of the source committed during the run does not change what is published
begin "PostgreSQL: an update committed during the read is not published (one snapshot)"
sql -c "CREATE TABLE live AS SELECT * FROM g1"
"$BIN" anonymize "postgresql:///t" --query "SELECT live.* FROM live CROSS JOIN (SELECT pg_sleep(1.5)) AS s" \
    -o "$d/live.csv" --qi $QI --k 6 --seed 9 </dev/null >/dev/null 2>"$d/live.err" &
pid=$!
sleep 0.6
sql -c "UPDATE live SET age = 99, salary = 1" -c "DELETE FROM live WHERE elevel = 0"
wait $pid
rc=$?
[ $rc = 0 ] || problem "the run failed: $(cat "$d/live.err")"
[ "$(sql -c "SELECT count(*) FROM live WHERE age = 99")" != 0 ] || problem "the update did not happen"
cmp -s <(sort "$D1/c1mondrian.csv") <(sort "$d/live.csv") || problem "what was published is not the table before the update"
end

# 4. ReadStat: CSV -> .sav/.dta/.xpt/.sas7bdat (readstat command) -> anonymize -> read back
d=$(casedir)
D4=$d
ak generate --rows 2500 --seed 11 -o "$d/g.csv"
cut -d, -f1,3,4,5,6,10 "$d/g.csv" >"$d/s.csv" # salary,age,elevel,car,zipcode,c2 (SAS names: 8 characters at most)
meta() {
    cat <<EOF
{"type": "$1", "variables": [
 {"type": "NUMERIC", "name": "salary", "label": "Yearly salary"},
 {"type": "NUMERIC", "name": "age", "label": "Age in years"},
 {"type": "NUMERIC", "name": "elevel", "label": "Education level"$2},
 {"type": "NUMERIC", "name": "car"}, {"type": "NUMERIC", "name": "zipcode"},
 {"type": "STRING", "name": "c2", "label": "Class"}]}
EOF
}
LABELS=', "categories": [{"code": 0, "label": "none"}, {"code": 1, "label": "primary"}, {"code": 2, "label": "secondary"}, {"code": 3, "label": "bachelor"}, {"code": 4, "label": "master"}]'
meta SPSS "" >"$d/spss.json"
meta STATA "" >"$d/stata.json"
readstat "$d/s.csv" "$d/spss.json" "$d/s.sav" >/dev/null 2>&1
readstat "$d/s.csv" "$d/stata.json" "$d/s.dta" >/dev/null 2>&1
# (the readstat command takes CSV with SPSS or Stata metadata only: SAS files are converted from the .sav)
readstat "$d/s.sav" "$d/s.xpt" >/dev/null 2>&1
readstat "$d/s.sav" "$d/s.sas7bdat" >/dev/null 2>&1
ak anonymize "$d/s.csv" -o "$d/c.csv" --qi $QI --k 8 --seed 2
for ext in sav dta xpt sas7bdat; do
    begin "ReadStat .$ext: anonymized equals the CSV path, and so does the file written back"
    [ -s "$d/s.$ext" ] || problem "readstat made no s.$ext"
    ak anonymize "$d/s.$ext" -o "$d/f.csv" --qi $QI --k 8 --seed 2
    expect_rc 0
    same_rows "$d/c.csv" "$d/f.csv" || problem "read from .$ext: published rows differ from the CSV path's"
    out=$ext
    [ $ext = sas7bdat ] && out=xpt
    ak anonymize "$d/s.$ext" -o "$d/o.$out" --qi $QI --k 8 --seed 2
    expect_rc 0
    readstat "$d/o.$out" - >"$d/back.csv" 2>/dev/null || problem "readstat cannot read the written .$out"
    same_rows "$d/c.csv" "$d/back.csv" || problem "written .$out: rows differ from the CSV path's"
    ak check "$d/o.$out" --qi $QI --k 8
    expect_rc 0
    end
done
begin "SPSS value labels: published as labels; --use-codes keeps codes and the labels travel to the output"
meta SPSS "$LABELS" >"$d/spssl.json"
readstat "$d/s.csv" "$d/spssl.json" "$d/l.sav" >/dev/null 2>&1
ak anonymize "$d/l.sav" -o "$d/l.csv" --qi age,zipcode,salary --k 8 --seed 2
expect_rc 0
grep -q ',master,' "$d/l.csv" || problem "elevel is not published as its labels"
ak anonymize "$d/l.sav" --use-codes -o "$d/codes.sav" --qi age,zipcode,salary --k 8 --seed 2
expect_rc 0
ak anonymize "$d/codes.sav" -o "$d/relabel.csv" --qi car --k 1 --keep-order
grep -q ',master,' "$d/relabel.csv" || problem "the value labels were not kept in the written .sav"
ak anonymize "$d/codes.sav" --use-codes -o "$d/codes.csv" --qi car --k 1 --keep-order
grep -q ',master,' "$d/codes.csv" && problem "--use-codes read labels"
grep -q ',4,' "$d/codes.csv" || problem "--use-codes: no code 4 in elevel"
end

# 5. bad sources: "anonkit: SOURCE: what is wrong", the password masked, exit 1, nothing created
d=$(casedir)
bad() { # NAME EXPECTED-MESSAGE-PART ARGS...
    local name=$1 want=$2
    shift 2
    begin "bad source: $name"
    ak anonymize "$@" --qi $QI --k 5 --report "$d/r.json"
    expect_rc 1
    expect_err_has "$want"
    grep -q "wrongpass\|$PG_PASSWORD" "$ERR" && problem "a password is shown"
    head -n 1 "$ERR" | grep -q '^anonkit: [a-z]*[:/.]' || problem "not 'anonkit: SOURCE: ...': $(head -n 1 "$ERR")"
    [ -e "$d/o.csv" ] || [ -e "$d/r.json" ] && problem "an output was created"
    pg_has_table bad_out && problem "a table was created"
    end
}
bad "unreachable server" "cannot connect" "postgresql://ak@/t?host=$d/nowhere&table=g1" -o "$d/o.csv"
bad "unreachable server as the target" "cannot connect" "$D1/g1.csv" -o "postgresql://ak@/t?host=$d/nowhere&table=bad_out"
PGPASSWORD= bad "wrong password (masked)" "password authentication failed" \
    "postgresql://ak:wrongpass@/t?host=$PGHOST&port=$PGPORT&table=g1" -o "$d/o.csv"
PGPASSWORD= bad "wrong password as a parameter (masked)" "password=***" \
    "postgresql:///t?host=$PGHOST&port=$PGPORT&password=wrongpass&table=g1" -o "$d/o.csv"
bad "missing table" 'relation "nope" does not exist' "postgresql:///t?table=nope" -o "$d/o.csv"
bad "query error" 'syntax error at or near "SELEKT"' "postgresql:///t" --query "SELEKT 1" -o "$d/o.csv"
bad "no table named" "name a table (?table=NAME) or give --query" "postgresql:///t" -o "$d/o.csv"
sql -c "CREATE ROLE reader LOGIN PASSWORD 'reader-pw'" -c "GRANT SELECT ON g1 TO reader"
PGUSER=reader PGPASSWORD=reader-pw bad "permission denied on the target" "permission denied for schema public" \
    "postgresql:///t?table=g1" -o "postgresql:///t?table=bad_out"
head -c 600 "$D4/s.sav" >"$d/corrupt.sav"
bad "corrupt .sav" "corrupt.sav: cannot read" "$d/corrupt.sav" -o "$d/o.csv"
bad "missing SQLite database" "cannot open" "sqlite:$d/none.db?table=x" -o "$d/o.csv"
[ -e "$d/none.db" ] && problem "a missing SQLite source was created"
bad "missing SQLite table" "no such table: x" "sqlite:$D1/src.db?table=x" -o "$d/o.csv"
bad "a SQLite target in a missing folder" "cannot open" "$D1/g1.csv" -o "sqlite:$d/no/such/dir.db?table=x"

begin "a password is never in a report or in the process listing"
"$BIN" anonymize "postgresql://ak:$PG_PASSWORD@/t?host=$PGHOST&port=$PGPORT" \
    --query "SELECT g1.* FROM g1 CROSS JOIN (SELECT pg_sleep(0.8)) AS s" -o "$d/pw.csv" --qi $QI --k 5 \
    --report "$d/pw.json" </dev/null >/dev/null 2>&1 &
pid=$!
sleep 0.4
tr '\0' ' ' </proc/$pid/cmdline >"$d/cmdline" 2>/dev/null
wait $pid || problem "the run failed"
grep -q "$PG_PASSWORD" "$d/cmdline" && problem "the password is in the process listing"
grep -q 'ak:\*\*\*' "$d/cmdline" || problem "the listing does not show the masked URI: $(cat "$d/cmdline")"
grep -q "$PG_PASSWORD" "$d/pw.json" && problem "the password is in the report"
expect_json "$d/pw.json" "'ak:***@' in j['parameters']['input']"
end

finish
