#!/usr/bin/env bash
# The main demo: `staunch drill` against throwaway local MariaDB servers.
#
# Installs MariaDB from the distribution's packages when `mariadbd` is
# missing (Debian/Ubuntu, as root), then builds and runs the drill. Every
# argument is passed to the drill, e.g.:
#
#   scripts/drill.sh                       # the fixed sequence of faults (~70 s)
#   scripts/drill.sh --soak 5m --seed 7    # random faults for 5 minutes
#   scripts/drill.sh --json report.json    # also write the report as JSON
#   scripts/drill.sh --html drill.html     # and as a page with a timeline per fault
#   scripts/drill.sh --galera              # the Galera part: 3 nodes, writer desynced/isolated/killed (~90 s)
#   scripts/drill.sh --url mysql://app:secret@db:3306/shop   # an existing server
#
# Exit code: the drill's (0 every fault survived, 1 one was not, 2 set-up
# failed, 130 interrupted).
set -euo pipefail
cd "$(dirname "$0")/.."

have_mariadbd() {
  command -v mariadbd >/dev/null 2>&1 || [ -x /usr/sbin/mariadbd ] ||
    [ -n "${STAUNCH_MARIADBD:-}" ]
}

needs_local_server=1
needs_galera=0
for arg in "$@"; do
  case "$arg" in
    --url|--url=*|-h|--help) needs_local_server=0 ;;
    --galera) needs_galera=1 ;;
  esac
done

missing=0
if [ "$needs_local_server" = 1 ] && ! have_mariadbd; then missing=1; fi
if [ "$needs_galera" = 1 ] && { [ ! -e /usr/lib/galera/libgalera_smm.so ] ||
  ! command -v rsync >/dev/null 2>&1; }; then missing=1; fi
if [ "$missing" = 1 ]; then
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "drill.sh: mariadbd (or, for --galera, galera-4/rsync) is missing; install them (as root: apt-get install -y mariadb-server galera-4 rsync)," >&2
    echo "          or run the drill against an existing server with --url" >&2
    exit 2
  fi
  scripts/install-mariadb.sh
fi

exec cargo run --release --bin staunch -- drill "$@"
