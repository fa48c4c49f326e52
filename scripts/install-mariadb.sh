#!/usr/bin/env bash
# Installs MariaDB from Debian's packages if it is not there yet. The tests and
# the drill start their own throwaway servers; nothing is started here (the
# package's post-install cannot start a service without an init system, and
# says so: that is expected).
set -euo pipefail
if command -v mariadbd >/dev/null 2>&1 || [ -x /usr/sbin/mariadbd ]; then
  exit 0
fi
echo "installing mariadb-server from Debian's packages..."
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq mariadb-server mariadb-client >/dev/null
echo "installed: $(/usr/sbin/mariadbd --version)"
