#!/usr/bin/env bash
# Installs MariaDB from Debian's packages if it is not there yet. The tests and
# the drill start their own throwaway servers; nothing is started here (the
# package's post-install cannot start a service without an init system, and
# says so: that is expected).
# Galera (issue #26): the provider (galera-4), and rsync plus `ss` (iproute2)
# for the rsync state transfer the test kit's Galera nodes use.
set -euo pipefail
need=()
if ! command -v mariadbd >/dev/null 2>&1 && [ ! -x /usr/sbin/mariadbd ]; then
  need+=(mariadb-server mariadb-client)
fi
[ -e /usr/lib/galera/libgalera_smm.so ] || need+=(galera-4)
command -v rsync >/dev/null 2>&1 || need+=(rsync)
command -v ss >/dev/null 2>&1 || need+=(iproute2)
if [ ${#need[@]} -eq 0 ]; then
  exit 0
fi
echo "installing ${need[*]} from Debian's packages..."
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq "${need[@]}" >/dev/null
echo "installed: $(/usr/sbin/mariadbd --version)"
