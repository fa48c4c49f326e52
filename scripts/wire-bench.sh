#!/usr/bin/env bash
# What a statement costs the client through the `mysql` crate's `query_iter`
# (the protocol layer staunch's connections use today) and through
# src/wire (the layer that is to replace it), on the same
# connection and socket: user-space instructions per statement of the whole
# process, counted by callgrind as the difference between runs of 3N and N
# statements / 2N (start-up, connecting and the set-up cancel out), for
# `SELECT 1`, a 5-column SELECT by primary key and a 10,000-row scan of 4
# columns, with every cell looked at. Neither the machine's load nor the
# server moves these figures. Both sides use glibc's malloc.
#
#   scripts/wire-bench.sh        (against a throwaway MariaDB, or $STAUNCH_TEST_URL)
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "wire-bench.sh needs valgrind" >&2; exit 2; }

if [ "${1:-}" != "--run" ]; then
  cargo build -q --release -p staunch --example wire_statement_loop
  if [ -n "${STAUNCH_TEST_URL:-}" ]; then exec "$0" --run; fi
  scripts/install-mariadb.sh
  exec scripts/c-mariadb.sh "$0" --run
fi

. scripts/instructions.sh
count() { # WAY N SQL -> instructions of the whole process
  callgrind_refs target/release/examples/wire_statement_loop "$STAUNCH_TEST_URL" "$1" "$2" "$3"
}
per_statement count crate wire <<'STATEMENTS'
SELECT 1|500|SELECT 1
5 columns by id|500|SELECT id, a, s, d, t FROM wire_bench_one WHERE id = 1
10,000 rows x 4 columns|2|SELECT id, name, score, price FROM wire_bench_rows
STATEMENTS
echo "(user-space instructions per statement of the whole process: send, read, every cell;"
echo " crate: the mysql crate; wire: src/wire; below 1 means src/wire executes fewer)"
