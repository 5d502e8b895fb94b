#!/usr/bin/env bash
# tests/helpers/pg_server.sh - a throwaway PostgreSQL server for kevo's tests.
#
#   pg_server.sh start DIR   initdb into DIR/data, start the server listening
#                            on a Unix socket in DIR only (no TCP port), create
#                            the database "kevo", print its conninfo URL
#                            (postgresql:///kevo?host=DIR&user=postgres)
#   pg_server.sh stop DIR    stop it and remove DIR
#
# It must not touch any other cluster, port or file: the server listens on
# no TCP address (listen_addresses=''), its socket and data live in DIR, and
# fsync is off (a test database is disposable).
#
# PostgreSQL refuses to run as root. The server runs as the `postgres`
# system user, which Debian's postgresql-common package creates whenever a
# server is installed; a non-root caller runs it as itself. DIR is handed
# to that user. The superuser of the cluster is "postgres"; local socket
# connections are trusted, except for the role "kevo_pw" (created here with
# the password "kevo-test-secret") which must give its password (scram), so
# that tests can check wrong-password handling.
#
# Exit status: 0 ok, 77 when no PostgreSQL server binaries are installed
# (the reason is printed), 1 on any other failure (the server log is shown).
set -euo pipefail

cmd=${1:-}
dir=${2:-}
if [ -z "$cmd" ] || [ -z "$dir" ]; then
  echo "usage: pg_server.sh start|stop DIR | fixture-start|fixture-stop STATE" >&2
  exit 2
fi

# ctest fixtures (tests/CMakeLists.txt): the server lives in a fresh short
# folder under /tmp (socket paths are short); STATE gets the URL on its
# first line, or "skip: <reason>" when no server can run here (the tests
# then skip, printing the reason), and STATE.dir the folder.
case "$cmd" in
fixture-start)
  state=$dir
  rm -f "$state" "$state.dir"
  tmp=$(mktemp -d /tmp/kevo-pg.XXXXXX)
  echo "$tmp" >"$state.dir"
  set +e
  out=$(bash "$0" start "$tmp" 2>"$tmp.err")
  rc=$?
  set -e
  if [ $rc -eq 0 ]; then
    echo "$out" >"$state"
    echo "pg_server: test server at $out"
  elif [ $rc -eq 77 ]; then
    echo "skip: $(tail -1 "$tmp.err")" >"$state"
    cat "$tmp.err"
  else
    cat "$tmp.err" >&2
    rm -f "$tmp.err"
    exit 1
  fi
  rm -f "$tmp.err"
  exit 0
  ;;
fixture-stop)
  state=$dir
  if [ -f "$state.dir" ]; then
    bash "$0" stop "$(cat "$state.dir")"
  fi
  rm -f "$state" "$state.dir"
  exit 0
  ;;
esac

bindir=""
for d in /usr/lib/postgresql/*/bin; do
  [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ] && bindir=$d
done
if [ -z "$bindir" ]; then
  echo "pg_server: no PostgreSQL server binaries (/usr/lib/postgresql/*/bin/initdb): install postgresql" >&2
  exit 77
fi

as_pg() {
  if [ "$(id -u)" -eq 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

pg_user() {
  if [ "$(id -u)" -eq 0 ]; then echo postgres; else id -un; fi
}

case "$cmd" in
start)
  if [ "$(id -u)" -eq 0 ] && ! getent passwd postgres >/dev/null; then
    echo "pg_server: running as root but there is no 'postgres' user to run the server as" >&2
    exit 77
  fi
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  # a Unix socket path is limited to ~107 bytes
  if [ ${#dir} -gt 80 ]; then
    echo "pg_server: $dir is too long for a Unix socket path (use a shorter folder)" >&2
    exit 1
  fi
  if [ "$(id -u)" -eq 0 ]; then
    chown postgres: "$dir"
    chmod 700 "$dir"
  fi
  if ! as_pg "$bindir/initdb" -D "$dir/data" -U postgres --auth-local=trust --auth-host=reject \
      -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1; then
    cat "$dir/initdb.log" >&2
    exit 1
  fi
  # the password role authenticates with scram; everyone else is trusted
  hba="$dir/data/pg_hba.conf"
  { echo "local all kevo_pw scram-sha-256"; echo "local all all trust"; } >"$hba"
  [ "$(id -u)" -eq 0 ] && chown postgres: "$hba"
  if ! as_pg "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
      -o "-c listen_addresses='' -c unix_socket_directories='$dir' -c fsync=off \
          -c synchronous_commit=off -c full_page_writes=off -c max_connections=100" \
      start >/dev/null 2>&1; then
    echo "pg_server: the server did not start:" >&2
    cat "$dir/server.log" >&2 || true
    exit 1
  fi
  psql=("$bindir/psql" -X -q -v ON_ERROR_STOP=1 -h "$dir" -U postgres)
  [ -x "$bindir/psql" ] || psql=(psql -X -q -v ON_ERROR_STOP=1 -h "$dir" -U postgres)
  as_pg "${psql[@]}" -d postgres -c "CREATE DATABASE kevo" >/dev/null
  as_pg "${psql[@]}" -d postgres \
    -c "SET password_encryption = 'scram-sha-256'" \
    -c "CREATE ROLE kevo_pw LOGIN PASSWORD 'kevo-test-secret'" \
    -c "GRANT ALL ON DATABASE kevo TO kevo_pw" >/dev/null
  as_pg "${psql[@]}" -d kevo -c "GRANT ALL ON SCHEMA public TO kevo_pw" >/dev/null
  echo "postgresql:///kevo?host=$dir&user=$(pg_user)"
  ;;
stop)
  if [ -d "$dir/data" ]; then
    as_pg "$bindir/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
  fi
  rm -rf "$dir"
  ;;
*)
  echo "pg_server: unknown command '$cmd' (start|stop)" >&2
  exit 2
  ;;
esac
