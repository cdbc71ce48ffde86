# pg_cluster.sh — a throw-away PostgreSQL server for tests and benchmarks.
# Sourced, not run. pg_start DIR makes a cluster in DIR (a fresh folder),
# listening on a Unix socket in DIR only (listen_addresses=''), run by an
# unprivileged user (the postgres system user when run as root, as CI is),
# with password authentication (scram-sha-256) for the superuser ak, whose
# password is in $PG_PASSWORD; it exports PGHOST, PGPORT, PGUSER,
# PGPASSWORD and PGDATABASE=postgres for psql and anonkit. pg_stop stops it
# (immediately) and removes DIR. Missing server binaries are an error, never
# a skip: scripts/deps.sh installs them.
PG_PASSWORD=ak-secret-$$
pg_bin() {
    local d
    for d in /usr/lib/postgresql/*/bin; do
        [ -x "$d/initdb" ] && { echo "$d"; return 0; }
    done
    command -v initdb >/dev/null && { dirname "$(command -v initdb)"; return 0; }
    return 1
}
# Runs a command as the cluster's owner.
pg_as_owner() {
    if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}
pg_start() {
    PG_DIR=$1
    PG_BIN=$(pg_bin) || { echo "pg_cluster: initdb not found (scripts/deps.sh installs postgresql)" >&2; return 1; }
    mkdir -p "$PG_DIR" && chmod 755 "$PG_DIR" || return 1
    [ "$(id -u)" -eq 0 ] && chown postgres: "$PG_DIR"
    pg_as_owner sh -c "printf '%s\n' '$PG_PASSWORD' >'$PG_DIR/pw'" || return 1
    pg_as_owner "$PG_BIN/initdb" -D "$PG_DIR/data" -U ak --pwfile="$PG_DIR/pw" -A scram-sha-256 \
        -E UTF8 --locale=C >"$PG_DIR/initdb.log" 2>&1 || { cat "$PG_DIR/initdb.log" >&2; return 1; }
    PGPORT=$((20000 + $$ % 20000))
    pg_as_owner "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/server.log" -w -t 30 \
        -o "-k $PG_DIR -c listen_addresses='' -p $PGPORT -F -c max_connections=40" start >/dev/null ||
        { cat "$PG_DIR/server.log" >&2; return 1; }
    export PGHOST=$PG_DIR PGPORT PGUSER=ak PGPASSWORD=$PG_PASSWORD PGDATABASE=postgres
}
pg_stop() {
    [ -n "${PG_DIR:-}" ] || return 0
    [ -n "${PG_BIN:-}" ] && [ -d "$PG_DIR/data" ] &&
        pg_as_owner "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -m immediate -w stop >/dev/null 2>&1
    rm -rf "$PG_DIR"
    PG_DIR=
}
