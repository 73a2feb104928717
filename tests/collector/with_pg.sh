#!/bin/bash
# with_pg.sh - runs a command against a PostgreSQL server of its own:
#   with_pg.sh COMMAND [ARGS...]
# starts a PostgreSQL 15 (the server binaries of Debian's postgresql-15) in
# a temporary folder, on a Unix socket in that folder only, runs COMMAND
# ARGS... with the catalog's URL as its last argument, stops the server and
# removes the folder. The server refuses to run as root, so as root it runs
# as the unprivileged user nobody. Exits 77 (skipped) when the server's
# binaries are absent; otherwise with COMMAND's status.
set -u
bin=$(printf "%s\n" /usr/lib/postgresql/*/bin | sort -V | tail -1)
if [ -z "$bin" ] || [ ! -x "$bin/initdb" ] || [ ! -x "$bin/pg_ctl" ]; then
  echo "with_pg: no PostgreSQL server (install postgresql-15): skipped" >&2
  exit 77
fi
dir=$(mktemp -d /tmp/gcsnap-pg.XXXXXX) || exit 1
chmod 755 "$dir"
as_server() { "$@"; }
if [ "$(id -u)" -eq 0 ]; then
  chown nobody "$dir"
  as_server() { runuser -u nobody -- "$@"; }
fi
stop() {
  as_server "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1
  rm -rf "$dir"
}
trap stop EXIT
if ! as_server "$bin/initdb" -D "$dir/data" -U gcsnap --auth=trust -E UTF8 --no-sync \
      >"$dir/initdb.log" 2>&1; then
  echo "with_pg: initdb failed:" >&2; cat "$dir/initdb.log" >&2; exit 1
fi
# fsync off: the tests kill collectors, never this server, and share two cores.
if ! as_server "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 30 \
      -o "-k $dir -c listen_addresses= -p 5432 -c fsync=off -c max_connections=60" \
      start >/dev/null; then
  echo "with_pg: the server did not start:" >&2; cat "$dir/server.log" >&2; exit 1
fi
"$@" "postgresql:///postgres?host=$dir&port=5432&user=gcsnap"
