#!/usr/bin/env bash
# Runs a command against a throwaway MariaDB server:
#
#   scripts/c-mariadb.sh COMMAND [ARGS...]
#
# Starts two mariadbd servers on free 127.0.0.1 ports, each with its own
# datadir under a short /tmp directory: a plain one, and one with TLS whose
# certificates (a test CA, a server certificate for IP 127.0.0.1 and
# localhost, and an unrelated second CA) are made here with openssl. On each
# it creates the database staunch_test and the user app / app-secret (ALL on
# *.*), and exports
#
#   STAUNCH_TEST_URL       mysql://app:app-secret@127.0.0.1:PORT/staunch_test
#   STAUNCH_TEST_ROOT_URL  mysql://root@127.0.0.1:PORT/staunch_test
#   STAUNCH_TEST_TLS_URL   the same user and database on the TLS server
#   STAUNCH_TEST_TLS_CA    the test CA (PEM) that signed its certificate
#   STAUNCH_TEST_OTHER_CA  a CA that signed nothing here
#
# runs COMMAND, then stops the servers (on any exit: a trap) and removes the
# directory. Exits with COMMAND's status. Only the PIDs of the servers started
# here are ever signalled. Needs mariadb-install-db, mariadbd, the mariadb
# client (scripts/install-mariadb.sh installs them) and openssl; as root, the
# servers run as the mysql user.
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

dir=$(mktemp -d /tmp/stc-XXXXXX)   # short: the socket paths must stay < 107 bytes
server_pids=()

stop_pid() {
  local pid=$1
  kill -0 "$pid" 2>/dev/null || return 0
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 1 300); do   # up to 30 s for a clean shutdown
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null; then
    kill -KILL "$pid" 2>/dev/null || true
  fi
  wait "$pid" 2>/dev/null || true
}

stop_servers() {
  local pid
  for pid in "${server_pids[@]}"; do
    stop_pid "$pid"
  done
  server_pids=()
}

cleanup() {
  local rc=$?
  stop_servers
  rm -rf "$dir"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

as_mysql=()
if [ "$(id -u)" = 0 ]; then as_mysql=(--user=mysql); fi

port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# start_server NAME [MARIADBD ARGS...]: a server with its files in $dir/NAME;
# sets $port and appends its PID to server_pids.
start_server() {
  local name=$1 d="$dir/$1" pid started=""
  shift
  mkdir -p "$d/tmp"   # the server's own tmpdir: nothing shared with other servers
  if [ "$(id -u)" = 0 ]; then chown -R mysql:mysql "$d"; fi
  "$INSTALL_DB" --no-defaults "${as_mysql[@]}" --datadir="$d/data" --tmpdir="$d/tmp" \
    --auth-root-authentication-method=normal --skip-test-db >"$d/install.log" 2>&1 || {
    echo "c-mariadb: mariadb-install-db failed ($name):" >&2
    cat "$d/install.log" >&2
    exit 1
  }
  for _ in 1 2 3 4 5; do
    port=$((20000 + RANDOM % 20000))
    port_busy "$port" && continue
    "$MARIADBD" --no-defaults "${as_mysql[@]}" --datadir="$d/data" --tmpdir="$d/tmp" --port="$port" \
      --bind-address=127.0.0.1 --socket="$d/m.sock" --pid-file="$d/m.pid" \
      --log-error="$d/error.log" --skip-name-resolve --host-cache-size=0 \
      --max-connect-errors=1000000 --max-connections=500 --innodb-buffer-pool-size=64M \
      --innodb-flush-log-at-trx-commit=2 --skip-log-bin "$@" >"$d/stdout.log" 2>&1 &
    pid=$!
    server_pids+=("$pid")
    for _ in $(seq 1 300); do   # up to 30 s to accept queries
      kill -0 "$pid" 2>/dev/null || break
      if "$CLIENT" --no-defaults -h127.0.0.1 --protocol=TCP -P "$port" -uroot \
        -e 'SELECT 1' >/dev/null 2>&1; then
        started=yes
        break
      fi
      sleep 0.1
    done
    [ -n "$started" ] && break
    stop_pid "$pid"   # e.g. the port was taken meanwhile: try another
    unset 'server_pids[-1]'
  done
  if [ -z "$started" ]; then
    echo "c-mariadb: the $name server did not start; error log:" >&2
    tail -n 40 "$d/error.log" >&2 || true
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
}

# Test certificates: EC P-256, valid ten years.
make_certs() {
  local c="$dir/certs" ec=(-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes)
  mkdir -p "$c"
  (
    cd "$c"
    for ca in ca other-ca; do
      openssl req -x509 "${ec[@]}" -keyout "$ca.key" -out "$ca.pem" -days 3650 \
        -subj "/CN=staunch C test $ca" -addext "basicConstraints=critical,CA:TRUE" \
        -addext "keyUsage=critical,keyCertSign,cRLSign"
    done
    openssl req -new "${ec[@]}" -keyout server.key -out server.csr -subj "/CN=staunch C test server"
    printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n' >server.ext
    openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -set_serial 4242 -days 3650 \
      -extfile server.ext -out server.pem
  ) >"$dir/certs.log" 2>&1 || {
    echo "c-mariadb: making the test certificates failed:" >&2
    cat "$dir/certs.log" >&2
    exit 1
  }
  if [ "$(id -u)" = 0 ]; then chown -R mysql:mysql "$c"; fi
  chmod 0755 "$c"
}

if ! command -v openssl >/dev/null 2>&1; then
  echo "c-mariadb: openssl is missing (apt-get install openssl)" >&2
  exit 1
fi
if [ "$(id -u)" = 0 ]; then chown mysql:mysql "$dir"; fi
make_certs
start_server plain
plain_port=$port
start_server tls --ssl-ca="$dir/certs/ca.pem" --ssl-cert="$dir/certs/server.pem" \
  --ssl-key="$dir/certs/server.key"
tls_port=$port

export STAUNCH_TEST_URL="mysql://app:app-secret@127.0.0.1:$plain_port/staunch_test"
export STAUNCH_TEST_ROOT_URL="mysql://root@127.0.0.1:$plain_port/staunch_test"
export STAUNCH_TEST_TLS_URL="mysql://app:app-secret@127.0.0.1:$tls_port/staunch_test"
export STAUNCH_TEST_TLS_CA="$dir/certs/ca.pem"
export STAUNCH_TEST_OTHER_CA="$dir/certs/other-ca.pem"
echo "c-mariadb: MariaDB $("$MARIADBD" --version | awk '{print $3}') on 127.0.0.1:$plain_port, with TLS on 127.0.0.1:$tls_port (pids ${server_pids[*]})"

set +e
"$@"
rc=$?
set -e
exit "$rc"
