#!/usr/bin/env bash
# Run a command against a throwaway PostgreSQL server: started here on a Unix socket in a temporary
# folder (no TCP port at all), with TEST_DATABASE_URL set for the command, and always stopped after.
# The server refuses to run as root, so as root it runs as the `postgres` system user.
set -euo pipefail

bindir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
[ -n "$bindir" ] || bindir=$(dirname "$(command -v initdb)")
run_as=()
if [ "$(id -u)" = 0 ]; then run_as=(runuser -u postgres --); fi

dir=$(mktemp -d)
chmod 755 "$dir"
[ "$(id -u)" = 0 ] && chown postgres: "$dir"
stop() {
  "${run_as[@]}" "$bindir/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null 2>&1 || true
  rm -rf "$dir"
}
trap stop EXIT

"${run_as[@]}" "$bindir/initdb" -D "$dir/data" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log"
"${run_as[@]}" "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w start \
  -o "-c listen_addresses='' -c unix_socket_directories='$dir' -c fsync=off -c synchronous_commit=off -c full_page_writes=off" >/dev/null
"${run_as[@]}" "$bindir/createdb" -h "$dir" -U postgres inspect_test

export TEST_DATABASE_URL="postgresql+psycopg://postgres@/inspect_test?host=$dir"
echo "PostgreSQL $("$bindir/postgres" --version | awk '{print $3}') on a Unix socket in a temporary folder"
"$@"
