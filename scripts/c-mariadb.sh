#!/usr/bin/env bash
# Runs a command against a throwaway MariaDB server:
#
#   scripts/c-mariadb.sh COMMAND [ARGS...]
#
# Starts one mariadbd on a free 127.0.0.1 port with its own datadir under a
# short /tmp directory, creates the database staunch_test and the user
# app / app-secret (ALL on *.*), exports
#
#   STAUNCH_TEST_URL       mysql://app:app-secret@127.0.0.1:PORT/staunch_test
#   STAUNCH_TEST_ROOT_URL  mysql://root@127.0.0.1:PORT/staunch_test
#
# runs COMMAND, then stops the server (on any exit: a trap) and removes the
# directory. Exits with COMMAND's status. Only the PID of the server started
# here is ever signalled. Needs mariadb-install-db, mariadbd and the mariadb
# client (scripts/install-mariadb.sh installs them); as root, the server runs
# as the mysql user.
set -euo pipefail

if [ $# -eq 0 ]; then
  echo "usage: $0 COMMAND [ARGS...]" >&2
  exit 2
fi

MARIADBD=${STAUNCH_MARIADBD:-/usr/sbin/mariadbd}
INSTALL_DB=${STAUNCH_MARIADB_INSTALL_DB:-/usr/bin/mariadb-install-db}
CLIENT=$(command -v mariadb || command -v mysql || true)
for b in "$MARIADBD" "$INSTALL_DB" "$CLIENT"; do
  if [ -z "$b" ] || [ ! -x "$b" ]; then
    echo "c-mariadb: missing MariaDB binaries (run scripts/install-mariadb.sh)" >&2
    exit 1
  fi
done

dir=$(mktemp -d /tmp/stc-XXXXXX)   # short: the socket path must stay < 107 bytes
server_pid=""

stop_server() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill -TERM "$server_pid" 2>/dev/null || true
    for _ in $(seq 1 300); do   # up to 30 s for a clean shutdown
      kill -0 "$server_pid" 2>/dev/null || break
      sleep 0.1
    done
    if kill -0 "$server_pid" 2>/dev/null; then
      kill -KILL "$server_pid" 2>/dev/null || true
    fi
    wait "$server_pid" 2>/dev/null || true
  fi
  server_pid=""
}

cleanup() {
  local rc=$?
  stop_server
  rm -rf "$dir"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

mkdir "$dir/tmp"   # the server's own tmpdir: nothing shared with other servers
as_mysql=()
if [ "$(id -u)" = 0 ]; then
  chown mysql:mysql "$dir" "$dir/tmp"
  as_mysql=(--user=mysql)
fi

"$INSTALL_DB" --no-defaults "${as_mysql[@]}" --datadir="$dir/data" --tmpdir="$dir/tmp" \
  --auth-root-authentication-method=normal --skip-test-db >"$dir/install.log" 2>&1 || {
  echo "c-mariadb: mariadb-install-db failed:" >&2
  cat "$dir/install.log" >&2
  exit 1
}

port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

started=""
for _ in 1 2 3 4 5; do
  port=$((20000 + RANDOM % 20000))
  port_busy "$port" && continue
  "$MARIADBD" --no-defaults "${as_mysql[@]}" --datadir="$dir/data" --tmpdir="$dir/tmp" --port="$port" \
    --bind-address=127.0.0.1 --socket="$dir/m.sock" --pid-file="$dir/m.pid" \
    --log-error="$dir/error.log" --skip-name-resolve --host-cache-size=0 \
    --max-connect-errors=1000000 --max-connections=500 --innodb-buffer-pool-size=64M \
    --innodb-flush-log-at-trx-commit=2 --skip-log-bin >"$dir/stdout.log" 2>&1 &
  server_pid=$!
  for _ in $(seq 1 300); do   # up to 30 s to accept queries
    if ! kill -0 "$server_pid" 2>/dev/null; then
      break
    fi
    if "$CLIENT" --no-defaults -h127.0.0.1 --protocol=TCP -P "$port" -uroot \
      -e 'SELECT 1' >/dev/null 2>&1; then
      started=yes
      break
    fi
    sleep 0.1
  done
  [ -n "$started" ] && break
  stop_server   # e.g. the port was taken meanwhile: try another
done
if [ -z "$started" ]; then
  echo "c-mariadb: the server did not start; error log:" >&2
  tail -n 40 "$dir/error.log" >&2 || true
  exit 1
fi

"$CLIENT" --no-defaults -h127.0.0.1 --protocol=TCP -P "$port" -uroot <<'SQL'
CREATE DATABASE staunch_test;
CREATE USER 'app'@'%' IDENTIFIED BY 'app-secret';
CREATE USER 'app'@'localhost' IDENTIFIED BY 'app-secret';
CREATE USER 'app'@'127.0.0.1' IDENTIFIED BY 'app-secret';
GRANT ALL ON *.* TO 'app'@'%';
GRANT ALL ON *.* TO 'app'@'localhost';
GRANT ALL ON *.* TO 'app'@'127.0.0.1';
SQL

export STAUNCH_TEST_URL="mysql://app:app-secret@127.0.0.1:$port/staunch_test"
export STAUNCH_TEST_ROOT_URL="mysql://root@127.0.0.1:$port/staunch_test"
echo "c-mariadb: MariaDB $("$MARIADBD" --version | awk '{print $3}') on 127.0.0.1:$port (pid $server_pid)"

set +e
"$@"
rc=$?
set -e
exit "$rc"
