# Sourced by the Python benchmarks (python-bench.sh, mem-bench.sh): the
# reference drivers' venv. python_peers_venv [PACKAGE...] installs
# mysqlclient's build needs (libmariadb-dev, pkg-config) from Debian's
# packages when missing, makes the venv ($STAUNCH_PY_VENV, default
# $ROOT/target/py-venv) and installs PyMySQL and mysqlclient at their pinned
# versions, and the PACKAGEs; sets PY to the venv's python.
python_peers_venv() {
  if ! dpkg -s libmariadb-dev pkg-config >/dev/null 2>&1; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq libmariadb-dev pkg-config >/dev/null
  fi
  local venv=${STAUNCH_PY_VENV:-$ROOT/target/py-venv}
  [ -x "$venv/bin/python" ] || "${PYTHON:-python3}" -m venv "$venv"
  PY=$venv/bin/python
  "$PY" -m pip install -q --disable-pip-version-check 'PyMySQL==1.2.4' 'mysqlclient==2.3.2' "$@"
}
