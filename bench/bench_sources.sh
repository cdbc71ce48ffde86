#!/usr/bin/env bash
# bench_sources.sh — tables where they live (docs/sources.md) against moving
# the same table alone, measured in the same run on generated rows
# ([LeFevre07] Figure 7; QIs age, zipcode, salary, elevel; k = 100):
#   PostgreSQL: a throw-away server (tests/pg_cluster.sh); anonymize table ->
#     table with Mondrian and with Rothko-T (--memory 64M) against COPY of the
#     same table out (COPY ... TO STDOUT into /dev/null) plus in (COPY ... FROM
#     of its CSV into a new table); the goal is anonkit <= 2x the two COPYs.
#   SQLite: table -> table against the CSV path (file -> file), and against
#     SELECT * out plus .import in.
#   SPSS .sav: file -> file against the CSV path.
# Prints wall seconds (/usr/bin/time) and the ratios. Never fails on time.
# usage: bash bench/bench_sources.sh [BUILD_DIR] [ROWS]   (default 1000000 rows)
set -euo pipefail
BUILD=${1:-build}
ROWS=${2:-1000000}
ANONKIT=$(cd "$BUILD" && pwd)/anonkit
SRC=$(cd "$(dirname "$0")/.." && pwd)
source "$SRC/tests/pg_cluster.sh"
DIR=$(mktemp -d "${TMPDIR:-/tmp}/anonkit-bench-sources.XXXXXX")
PGD=$(mktemp -d /tmp/anonkit-bench-pg.XXXXXX)
trap 'pg_stop; rm -rf "$DIR"' EXIT
chmod 755 "$DIR"
QI=age,zipcode,salary,elevel
K=100
secs() { /usr/bin/time -f "%e" -o "$DIR/t" "$@" >/dev/null 2>"$DIR/err" || { cat "$DIR/err" >&2; return 1; }; cat "$DIR/t"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }
sum() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a + b }'; }

"$ANONKIT" generate --rows "$ROWS" --seed 1 -o "$DIR/g.csv" 2>/dev/null
echo "load average $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores (other work on the machine inflates every figure)"
echo "input: $ROWS rows, $(( $(stat -c %s "$DIR/g.csv") / 1000000 )) MB of CSV, 13 columns, QIs $QI, k = $K"

# ---- PostgreSQL ----
pg_start "$PGD"
psql -qX -c "CREATE DATABASE b" >/dev/null
export PGDATABASE=b
COLS="salary bigint, commission bigint, age bigint, elevel bigint, car bigint, zipcode bigint, hvalue bigint,
      hyears bigint, loan bigint, c2 text, c7 text, r7 numeric, r10 numeric"
psql -qX -c "CREATE TABLE g ($COLS)" -c "\\copy g FROM '$DIR/g.csv' CSV HEADER"
psql -qX -c "VACUUM ANALYZE g"
out=$(secs psql -qX -c "COPY g TO STDOUT")
psql -qX -c "CREATE TABLE g_in ($COLS)"
in=$(secs psql -qX -c "\\copy g_in FROM '$DIR/g.csv' CSV HEADER")
copies=$(sum "$out" "$in")
echo
echo "PostgreSQL 15 (local socket, fsync off)"
echo "  COPY out ${out} s + COPY in ${in} s = ${copies} s"
for algo in mondrian rothko-t; do
    extra=()
    [ $algo = rothko-t ] && extra=(--memory 64M)
    s=$(secs "$ANONKIT" anonymize "postgresql:///b?table=g" -o "postgresql:///b?table=p_${algo//-/_}" \
        --qi $QI --k $K --seed 1 --algorithm $algo "${extra[@]}")
    echo "  $algo table -> table: ${s} s = $(ratio "$s" "$copies") x the two COPYs (goal <= 2)"
done
pg_stop

# ---- SQLite and .sav against the CSV path ----
echo
for algo in mondrian rothko-t; do
    extra=()
    [ $algo = rothko-t ] && extra=(--memory 64M)
    csv=$(secs "$ANONKIT" anonymize "$DIR/g.csv" -o "$DIR/p.csv" --qi $QI --k $K --seed 1 --algorithm $algo "${extra[@]}")
    echo "CSV file -> file, $algo: ${csv} s"
    if [ $algo = mondrian ]; then
        sqlite3 "$DIR/g.db" ".mode csv" ".import '$DIR/g.csv' g"
        sout=$(secs sqlite3 "$DIR/g.db" "SELECT * FROM g")
        sin=$(secs sqlite3 "$DIR/in.db" ".mode csv" ".import '$DIR/g.csv' g")
        echo "SQLite SELECT * out ${sout} s + .import in ${sin} s = $(sum "$sout" "$sin") s"
        cat >"$DIR/meta.json" <<'EOF'
{"type": "SPSS", "variables": [
 {"type": "NUMERIC", "name": "salary"}, {"type": "NUMERIC", "name": "commission"}, {"type": "NUMERIC", "name": "age"},
 {"type": "NUMERIC", "name": "elevel"}, {"type": "NUMERIC", "name": "car"}, {"type": "NUMERIC", "name": "zipcode"},
 {"type": "NUMERIC", "name": "hvalue"}, {"type": "NUMERIC", "name": "hyears"}, {"type": "NUMERIC", "name": "loan"},
 {"type": "STRING", "name": "c2"}, {"type": "STRING", "name": "c7"}, {"type": "NUMERIC", "name": "r7"},
 {"type": "NUMERIC", "name": "r10"}]}
EOF
        readstat "$DIR/g.csv" "$DIR/meta.json" "$DIR/g.sav" >/dev/null 2>&1
    fi
    rm -f "$DIR/p.db"
    s=$(secs "$ANONKIT" anonymize "sqlite:$DIR/g.db?table=g" -o "sqlite:$DIR/p.db?table=p" --qi $QI --k $K --seed 1 \
        --algorithm $algo "${extra[@]}")
    echo "  SQLite table -> table, $algo: ${s} s = $(ratio "$s" "$csv") x the CSV path"
    s=$(secs "$ANONKIT" anonymize "$DIR/g.sav" -o "$DIR/p.sav" --qi $QI --k $K --seed 1 --algorithm $algo "${extra[@]}")
    echo "  SPSS .sav -> .sav, $algo: ${s} s = $(ratio "$s" "$csv") x the CSV path"
    rm -f "$DIR/p.sav"
done
